/* pacer — engine: the connection (engine_int.h draws the whole engine).
 * What every connection does whatever it speaks: connect, its transport's
 * handshake (xport.c), picking the protocol (ALPN), dispatching its events
 * to the protocol (proto_h1.c, proto_h2.c), counting errors and completed
 * responses, and closing. It calls the transport and the protocol only
 * through their tables. */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "engine/engine_int.h"
#include "engine/inspect_eval.h"
#include "plan/inspect.h"
#include "util/err.h"

/* A connection-level error (connect, TLS) of a connection to host h. */
struct phase_stats *eng_conn_error(struct worker *w, uint32_t h, enum err_kind k, uint64_t now)
{
	struct phase_stats *ph = phase_of(w, now);
	ph->errors[k]++;
	ph->host[h].conn_errors++;
	live_add(&w->live.errors[k], 1);
	return ph;
}

void eng_connect_error(struct worker *w, uint32_t h, int err, uint64_t now)
{
	struct phase_stats *ph = eng_conn_error(w, h, ERRK_CONNECT, now);
	enum connect_cause k = connect_cause_of(err);
	ph->connect_fail[k]++;
	live_add(&w->live.connect_fail[k], 1);
	if (ph == &w->meas) {
		struct sec_rec *r = series_at(w, now);
		if (r)
			r->connect_fail[k]++;
	}
}

/* What came of a flow's request (c->flow): its response or error k. */
static __attribute__((noinline)) void flow_outcome(struct worker *w, struct conn *c, int status,
						   bool ok, enum err_kind k, uint64_t now)
{
	struct engine_flow_result r = {.status = status, .ok = ok, .err = k};
	const struct h1_capture *cap = c->resp.cap;
	if (status && cap) {
		r.hbuf = cap->hbuf;
		r.hbuf_len = cap->hbuf_len;
		r.n_fields = cap->n_fields;
		r.body = cap->body;
		r.body_len = cap->body_len;
		r.body_cut = cap->body_truncated;
	}
	if (status)
		r.bytes_in = c->resp.header_bytes + c->resp.body_bytes;
	eng_flow_result(w, c, &r, now);
}

void eng_count_error(struct worker *w, struct conn *c, enum err_kind k, uint64_t now)
{
	struct phase_stats *ph = phase_of(w, c->sched_ns);
	ph->errors[k]++;
	ph->host[c->host].errors++;
	ph->lagged_failed += c->lagged;
	if (w->by_name)
		ph->name[c->req->name].errors++;
	publish_error(w);
	live_add(&w->live.errors[k], 1);
	if (ph == &w->meas) {
		struct sec_rec *r = series_at(w, now);
		if (r) {
			r->errors++;
			r->transport++;
		}
	}
	if (c->flow != ENG_FLOW_NONE)
		flow_outcome(w, c, 0, false, k, now);
}

void eng_record_wait(struct worker *w, struct phase_stats *ph, uint64_t sched_ns,
		     const struct engine_req *rq, bool lagged, uint64_t now)
{
	uint64_t waited = now > sched_ns ? now - sched_ns : 0;
	hist_record(&ph->timing[TIM_LATENCY], waited);
	hist_record(&ph->timing[TIM_LATENCY_FAILED], waited);
	if (lagged)
		hist_record(&ph->timing[TIM_LATENCY_LAGGED], waited);
	if (w->by_name)
		hist_record(&ph->name[rq->name].latency, waited);
}

void eng_count_left(struct worker *w, uint64_t sched_ns, const struct engine_req *rq, bool lagged,
		    bool sent)
{
	const struct engine *e = w->e;
	struct phase_stats *ph = phase_of(w, sched_ns);
	if (sent) {
		ph->in_flight_at_end++;
		if (w->by_name)
			ph->name[rq->name].in_flight_at_end++;
	} else {
		ph->queued_at_end++;
	}
	if (atomic_load_explicit(&e->stop, memory_order_relaxed)) {
		uint64_t stop = atomic_load_explicit(&e->stop_ns, memory_order_relaxed);
		eng_record_wait(w, ph, sched_ns, rq, lagged, stop ? stop : clock_now_ns());
	}
}

/* ---- connections ----------------------------------------------------------- */

void eng_conn_want(struct worker *w, struct conn *c, uint32_t ev)
{
	if (c->ev != ev) {
		loop_mod(&w->loop, c->fd, ev, c);
		c->ev = ev;
	}
}

void eng_conn_release(struct worker *w, struct conn *c)
{
	struct hpool *p = &w->hp[c->host];
	if (c->in)
		list_remove(c->in, c);
	if (c->state == CS_CONNECTING || c->state == CS_HANDSHAKE) {
		w->n_connecting--;
		p->n_connecting--;
	}
	if (c->timer_pos)
		eng_timer_set(w, c, UINT64_MAX);
	if (c->xport)
		c->xport->close(c);
	if (c->fd >= 0) {
		close(c->fd); /* also removes it from the epoll set */
		c->fd = -1;
	}
	c->state = CS_FREE;
	c->proto = NULL;
	c->xport = NULL;
	w->n_open--;
	p->n_open--;
	c->next = w->free_slots;
	w->free_slots = c;
}

void eng_conn_close(struct worker *w, struct conn *c)
{
	if (c->proto)
		c->proto->close(w, c);
	else
		eng_conn_release(w, c); /* connecting, or its transport's handshake */
}

void eng_conn_connected(struct worker *w, struct conn *c)
{
	struct hpool *p = &w->hp[c->host];
	p->connect_fails = 0;
	p->n_connecting--;
	w->n_connecting--;
}

void eng_conn_open(struct worker *w, uint32_t h, uint64_t now)
{
	struct conn *c = w->free_slots;
	if (!c)
		return;
	const struct net_addr *addr = h == 0 && w->addr0 ? w->addr0 : &w->e->hosts[h].addr;
	const struct eng_xport *x = w->e->xport[h];
	int fd = x->connect(addr);
	if (fd < 0) {
		eng_connect_error(w, h, fd, now);
		eng_connect_failed(w, h, now);
		return;
	}
	if (loop_add(&w->loop, fd, EV_IN | EPOLLOUT, c) < 0) {
		close(fd);
		eng_connect_error(w, h, 0, now);
		eng_connect_failed(w, h, now);
		return;
	}
	w->free_slots = c->next;
	c->fd = fd;
	c->ev = EV_IN | EPOLLOUT;
	c->xport = x;
	c->proto = NULL;
	c->rx_ts = net_rx_timestamps(fd, addr);
	c->answered = false;
	c->host = h;
	c->state = CS_CONNECTING;
	c->flow = ENG_FLOW_NONE;
	c->connect_start_ns = now;
	c->deadline_ns = now + w->e->cfg.timeout_ns;
	list_push_tail(&w->timed, c);
	w->n_open++;
	w->n_connecting++;
	w->hp[h].n_open++;
	w->hp[h].n_connecting++;
}

void eng_conn_idle(struct worker *w, struct conn *c, uint64_t now)
{
	c->state = CS_IDLE;
	c->idle_ns = now;
	list_push_tail(&w->hp[c->host].idle, c);
}

void eng_conn_send(struct worker *w, struct conn *c, uint64_t sched_ns,
		   const struct engine_req *rq, bool lagged)
{
	c->proto->send(w, c, sched_ns, rq, lagged, ENG_FLOW_NONE);
}

void eng_conn_send_flow(struct worker *w, struct conn *c, uint64_t sched_ns,
			const struct engine_req *rq, bool lagged, uint32_t flow)
{
	c->proto->send(w, c, sched_ns, rq, lagged, flow);
}

/* The per-name figures of a completed response (two names or more): out
 * of line and behind one flag, so that eng_conn_complete of a one-name run does
 * what it did before names were counted. */
static __attribute__((noinline)) void name_done(struct phase_stats *ph, const struct conn *c,
						bool ok, uint64_t now)
{
	struct name_stats *ns = &ph->name[c->req->name];
	ns->completed++;
	ns->ok += ok;
	hist_record(&ns->latency, now - c->sched_ns);
}

void eng_conn_complete(struct worker *w, struct conn *c, uint64_t now)
{
	struct phase_stats *ph = phase_of(w, c->sched_ns);
	ph->completed++;
	ph->host[c->host].completed++;
	int st = c->resp.status;
	bool ok = w->inspect ? inspect_response(w->inspect, st, c->resp.cap, ph, w->live.outcome)
			     : inspect_default_ok(st);
	live_done(w, st, ok, now - c->sched_ns, ph == &w->meas);
	ph->success_ok += ok;
	ph->host[c->host].errors += !ok;
	ph->lagged_failed += c->lagged && !ok;
	if (st >= STATUS_MIN && st <= STATUS_MAX) {
		ph->status[st]++;
		ph->status_failed[st] += !ok;
	}
	if (w->by_name)
		name_done(ph, c, ok, now);
	uint64_t latency = now - c->sched_ns;
	if (c->lagged)
		hist_record(&ph->timing[TIM_LATENCY_LAGGED], latency);
	hist_record(&ph->timing[TIM_SERVICE], now - c->write_ns);
	hist_record(&ph->timing[TIM_TTFB], c->first_byte_ns - c->write_ns);
	if (now > c->deadline_ns)
		ph->late++;
	if (ph == &w->meas) {
		w->last_completion_ns = now;
		struct sec_rec *r = series_at(w, now); /* may close the second before */
		if (r) {
			r->completed++;
			r->errors += !ok;
			if (st >= 100 && st <= 599)
				r->by_class[st / 100 - 1]++;
		}
		/* one record: the phase's and the second's views when it closes */
		hist_record(&w->lat_sec[!ok], latency);
	} else {
		hist_record(&ph->timing[TIM_LATENCY], latency);
		hist_record(&ph->timing[ok ? TIM_LATENCY_OK : TIM_LATENCY_FAILED], latency);
		eng_warm_second(w, now, latency);
	}
	publish_completed(w);
	if (!ok)
		publish_error(w);
	if (c->in) /* on w->timed, or (HTTP/1.1 settling) on w->h1_settling */
		list_remove(c->in, c);
	if (c->flow != ENG_FLOW_NONE)
		flow_outcome(w, c, st, ok, ERRK_COUNT, now); /* before done reuses c */
	c->proto->done(w, c, now);
}

/* The transport is ready: the protocol it speaks (the server's ALPN choice
 * over TLS) begins. A server that keeps HTTP/1.1 where nothing but HTTP/2
 * will do (--http2) fails the connection: errors.protocol, with backoff.
 * (Over QUIC ALPN h3 is the handshake's condition: HTTP/3 it is.) */
void eng_conn_begin(struct worker *w, struct conn *c, uint64_t now)
{
	const struct engine *e = w->e;
	const struct eng_proto *p = e->proto_default;
	if (e->proto_alpn_h2 && c->xport->alpn_h2(c))
		p = e->proto_alpn_h2;
	if (!p) {
		struct phase_stats *ph = eng_conn_error(w, c->host, ERRK_PROTOCOL, now);
		phase_stats_tls_reason(ph, "the server did not choose HTTP/2 (ALPN h2); "
					   "--http2=prefer falls back to HTTP/1.1");
		eng_connect_failed(w, c->host, now);
		eng_conn_release(w, c);
		return;
	}
	if (e->proto_alpn_h2 && p != e->proto_alpn_h2)
		phase_of(w, c->connect_start_ns)->h2.conns_h1++; /* --http2=prefer: kept HTTP/1.1 */
	c->proto = p;
	p->start(w, c, now);
}

void eng_conn_event(struct worker *w, struct conn *c, uint32_t events)
{
	uint64_t now = clock_now_ns();
	int rc;
	if (c->proto) {
		c->proto->event(w, c, events);
		return;
	}
	if (c->state == CS_CONNECTING) {
		rc = net_connect_result(c->fd);
		if (rc != 0 || (events & (EPOLLERR | EPOLLHUP))) {
			eng_connect_error(w, c->host, rc, now);
			eng_connect_failed(w, c->host, now);
			eng_conn_release(w, c);
			return;
		}
		/* a datagram transport's set-up is its handshake: it counts its
		 * connection opened when that completes, and no connect time */
		if (!c->xport->datagram) {
			struct phase_stats *ph = phase_of(w, c->connect_start_ns);
			ph->conns_opened++;
			ph->host[c->host].conns_opened++;
			hist_record(&ph->timing[TIM_CONNECT], now - c->connect_start_ns);
		}
		rc = c->xport->start(w, c, now);
	} else {
		rc = c->xport->handshake(w, c); /* CS_HANDSHAKE */
	}
	if (rc < 0)
		eng_conn_close(w, c); /* a protocol that began (QUIC) closes with it */
	else if (rc > 0)
		eng_conn_begin(w, c, clock_now_ns());
}
