/* pacer — engine: the transport (plain socket or TLS) and the connection
 * state machine: connect, TLS handshake, write, read, a response done, close
 * (engine_int.h draws the whole engine). */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "engine/engine_int.h"
#include "engine/inspect_eval.h"
#include "plan/inspect.h"
#include "util/err.h"

/* Read interest: EPOLLRDHUP tells, in the same event as the last response,
 * that the server has closed behind it, so that a batched loop (which reads
 * that response late) does not send the next request into a closing
 * connection. */
#define EV_IN (EPOLLIN | EPOLLRDHUP)

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

void eng_count_error(struct worker *w, const struct conn *c, enum err_kind k, uint64_t now)
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
}

/* ---- connections ----------------------------------------------------------- */

void eng_conn_close(struct worker *w, struct conn *c)
{
	if (c->h2 || c->h2_parent) {
		eng_h2_close(w, c); /* a stream, or the streams and session first */
		return;
	}
	struct hpool *p = &w->hp[c->host];
	if (c->in)
		list_remove(c->in, c);
	if (c->state == CS_CONNECTING || c->state == CS_HANDSHAKE) {
		w->n_connecting--;
		p->n_connecting--;
	}
	if (c->tls) {
		tls_conn_free(c->tls);
		c->tls = NULL;
	}
	if (c->fd >= 0) {
		close(c->fd); /* also removes it from the epoll set */
		c->fd = -1;
	}
	c->state = CS_FREE;
	w->n_open--;
	p->n_open--;
	c->next = w->free_slots;
	w->free_slots = c;
}

/* Connected (and TLS done) over HTTP/1.1: no longer connecting, failures
 * forgotten. */
static void conn_connected(struct worker *w, struct conn *c)
{
	struct hpool *p = &w->hp[c->host];
	phase_of(w, c->connect_start_ns)->host[c->host].conns_h1++;
	p->connect_fails = 0;
	p->n_connecting--;
	w->n_connecting--;
}

void eng_conn_open(struct worker *w, uint32_t h, uint64_t now)
{
	struct conn *c = w->free_slots;
	if (!c)
		return;
	int fd = net_connect_start(&w->e->hosts[h].addr);
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
	c->rx_ts = net_rx_timestamps(fd, &w->e->hosts[h].addr);
	c->host = h;
	c->state = CS_CONNECTING;
	c->connect_start_ns = now;
	c->deadline_ns = now + w->e->cfg.timeout_ns;
	list_push_tail(&w->timed, c);
	w->n_open++;
	w->n_connecting++;
	w->hp[h].n_open++;
	w->hp[h].n_connecting++;
}

static void conn_make_idle(struct worker *w, struct conn *c, uint64_t now)
{
	c->state = CS_IDLE;
	c->idle_ns = now;
	list_push_tail(&w->hp[c->host].idle, c);
}

/* ---- transport: plain socket or TLS ------------------------------------------ */

/* TLS: make `ev` the registered epoll interest (a TLS read may need the
 * socket writable, a write readable). */
static void conn_want(struct worker *w, struct conn *c, uint32_t ev)
{
	if (c->ev != ev) {
		loop_mod(&w->loop, c->fd, ev, c);
		c->ev = ev;
	}
}

/* A TLS failure on an established connection: keep OpenSSL's reason (the
 * error itself is counted by the caller, as a read or write error). */
static void conn_tls_reason(struct worker *w, struct conn *c)
{
	phase_stats_tls_reason(phase_of(w, clock_now_ns()), tls_fail_reason(c->tls));
}

/* Write through the transport: bytes written, -EAGAIN (wait for an event;
 * TLS registers the one it needs), or another negative errno. */
static ssize_t conn_tx(struct worker *w, struct conn *c, const char *buf, size_t len)
{
	if (!c->tls) {
		for (;;) {
			ssize_t n = write(c->fd, buf, len);
			if (n >= 0 || errno != EINTR)
				return n >= 0 ? n : -errno;
		}
	}
	ssize_t n = tls_write(c->tls, buf, len);
	if (n > 0)
		return n;
	if (n == TLS_WANT_WRITE || n == TLS_WANT_READ) {
		conn_want(w, c, n == TLS_WANT_WRITE ? EV_IN | EPOLLOUT : EV_IN);
		return -EAGAIN;
	}
	conn_tls_reason(w, c);
	return -EPROTO;
}

/* Read through the transport: bytes (0 at the end of the stream), -EAGAIN
 * (nothing now), or another negative errno. *rx_rt_ns: the kernel's arrival
 * stamp (CLOCK_REALTIME) of the last segment read, 0 when there is none. */
static ssize_t conn_rx(struct worker *w, struct conn *c, char *buf, size_t cap,
		       uint64_t *rx_rt_ns)
{
	if (!c->tls) {
		if (c->rx_ts)
			return net_recv_ts(c->fd, buf, cap, rx_rt_ns);
		*rx_rt_ns = 0;
		for (;;) {
			ssize_t n = read(c->fd, buf, cap);
			if (n >= 0 || errno != EINTR)
				return n >= 0 ? n : -errno;
		}
	}
	ssize_t n = tls_read(c->tls, buf, cap);
	*rx_rt_ns = c->rx_ts ? tls_rx_time(c->tls) : 0;
	if (n == TLS_WANT_WRITE) {
		conn_want(w, c, EV_IN | EPOLLOUT);
		return -EAGAIN;
	}
	if ((c->ev & EPOLLOUT) && c->state != CS_WRITING)
		conn_want(w, c, EV_IN); /* a read that wanted a write got it */
	if (n >= 0)
		return n;
	if (n == TLS_WANT_READ)
		return -EAGAIN;
	conn_tls_reason(w, c);
	return -EPROTO;
}

/* Did the bytes of a read (stamped rx_rt_ns) reach the socket before c's
 * request was written? write_ns is read before the write, so a true
 * response never does. The margin covers the realtime-to-monotonic mapping
 * (its error, doubled) and the kernel's stamp granularity; a stray
 * response that precedes the request by less is read as its answer (the
 * real one then comes as a stray and closes the connection). */
#define STRAY_MARGIN_NS (20 * NS_PER_US)
static bool came_before_send(const struct worker *w, const struct conn *c, uint64_t rx_rt_ns)
{
	uint64_t margin = STRAY_MARGIN_NS + 2 * w->rt_off_err_ns;
	return rx_rt_ns > w->rt_off_ns && rx_rt_ns - w->rt_off_ns + margin < c->write_ns;
}

static bool conn_write(struct worker *w, struct conn *c)
{
	const struct engine_req *rq = c->req;
	while (c->wr_off < rq->len) {
		ssize_t n = conn_tx(w, c, rq->buf + c->wr_off, rq->len - c->wr_off);
		if (n > 0) {
			c->wr_off += (size_t)n;
			phase_of(w, c->sched_ns)->bytes_out += (uint64_t)n;
			continue;
		}
		if (n == -EAGAIN || n == -EWOULDBLOCK) {
			if (c->state != CS_WRITING) {
				c->state = CS_WRITING;
				if (!c->tls) /* TLS registered what it waits for */
					loop_mod(&w->loop, c->fd, EV_IN | EPOLLOUT, c);
			}
			return true;
		}
		eng_count_error(w, c, ERRK_WRITE, clock_now_ns());
		eng_conn_close(w, c);
		return false;
	}
	if (c->tls)
		conn_want(w, c, EV_IN);
	else if (c->state == CS_WRITING)
		loop_mod(&w->loop, c->fd, EV_IN, c);
	c->state = CS_READING;
	return true;
}

/* Hand request rq (NULL: the next one), scheduled at sched_ns, to an idle
 * connection of its host. */
void eng_conn_send(struct worker *w, struct conn *c, uint64_t sched_ns,
		   const struct engine_req *rq, bool lagged)
{
	if (c->h2) {
		eng_h2_send(w, c, sched_ns, rq, lagged); /* a stream of it */
		return;
	}
	uint64_t now = clock_now_ns();
	list_remove(&w->hp[c->host].idle, c);
	struct phase_stats *ph = phase_of(w, sched_ns);
	ph->sent++;
	ph->lagged_sent += lagged;
	c->lagged = lagged;
	ph->host[c->host].sent_h1++;
	live_add(&w->live.sent, 1);
	if (w->e->cfg.open_loop)
		hist_record(&ph->timing[TIM_SEND_LAG], now > sched_ns ? now - sched_ns : 0);
	c->sched_ns = sched_ns;
	c->write_ns = now;
	c->deadline_ns = now + w->e->cfg.timeout_ns;
	c->req = rq ? rq : &w->e->cfg.reqs[pick_req(w)];
	c->wr_off = 0;
	c->got_byte = false;
	c->stray = false;
	h1_resp_init(&c->resp, c->req->head);
	if (w->capture)
		h1_resp_capture(&c->resp, &c->cap);
	c->state = CS_READING; /* conn_write turns it into CS_WRITING if needed */
	list_push_tail(&w->timed, c);
	conn_write(w, c);
}

/* The per-name figures of a completed response (two names or more): out
 * of line and behind one flag, so that conn_done of a one-name run does
 * what it did before names were counted. */
static __attribute__((noinline)) void name_done(struct phase_stats *ph, const struct conn *c,
						bool ok, uint64_t now)
{
	struct name_stats *ns = &ph->name[c->req->name];
	ns->completed++;
	ns->ok += ok;
	hist_record(&ns->latency, now - c->sched_ns);
}

/* A full response arrived. */
static void conn_done(struct worker *w, struct conn *c, uint64_t now)
{
	struct phase_stats *ph = phase_of(w, c->sched_ns);
	ph->completed++;
	ph->host[c->host].completed++;
	int st = c->resp.status;
	bool ok = w->inspect ? inspect_response(w->inspect, st, c->resp.cap, ph, w->live.outcome)
			     : inspect_default_ok(st);
	live_done(w, st, ok, now - c->sched_ns);
	ph->success_ok += ok;
	ph->host[c->host].errors += !ok;
	ph->lagged_failed += c->lagged && !ok;
	if (st >= STATUS_MIN && st <= STATUS_MAX) {
		ph->status[st]++;
		ph->status_failed[st] += !ok;
	}
	if (w->by_name)
		name_done(ph, c, ok, now);
	hist_record(&ph->timing[TIM_LATENCY], now - c->sched_ns);
	hist_record(&ph->timing[ok ? TIM_LATENCY_OK : TIM_LATENCY_FAILED], now - c->sched_ns);
	if (c->lagged)
		hist_record(&ph->timing[TIM_LATENCY_LAGGED], now - c->sched_ns);
	hist_record(&ph->timing[TIM_SERVICE], now - c->write_ns);
	hist_record(&ph->timing[TIM_TTFB], c->first_byte_ns - c->write_ns);
	if (now > c->deadline_ns)
		ph->late++;
	if (ph == &w->meas) {
		w->last_completion_ns = now;
		struct sec_rec *r = series_at(w, now);
		if (r) {
			r->completed++;
			r->errors += !ok;
			if (st >= 100 && st <= 599)
				r->by_class[st / 100 - 1]++;
			hist_record(&w->sec_hist, now - c->sched_ns);
		}
	} else if (ph == &w->warm) {
		eng_warm_second(w, now, now - c->sched_ns);
	}
	publish_completed(w);
	if (!ok)
		publish_error(w);
	list_remove(&w->timed, c);
	if (c->h2_parent) {
		eng_h2_close(w, c); /* the stream is done: its record goes back */
		return;
	}
	bool keep = c->resp.keep_alive && c->state == CS_READING && !c->peer_closed && !c->stray &&
		    !w->e->cfg.no_keepalive;
	if (keep) {
		conn_make_idle(w, c, now);
	} else {
		if (c->stray)
			ph->closed_stray++;
		else if (!c->resp.keep_alive || c->peer_closed)
			ph->closed_by_server++;
		eng_conn_close(w, c);
	}
}

void eng_conn_complete(struct worker *w, struct conn *c, uint64_t now)
{
	conn_done(w, c, now);
}

static void conn_readable(struct worker *w, struct conn *c)
{
	for (;;) {
		uint64_t rx_rt;
		ssize_t n = conn_rx(w, c, w->rbuf, READ_BUF_CAP, &rx_rt);
		uint64_t now = clock_now_ns();
		if (n == -EAGAIN || n == -EWOULDBLOCK)
			return; /* TLS: also records that were not data (session tickets) */
		if (c->state == CS_IDLE) {
			/* The server closed an idle keep-alive connection, or sent
			 * bytes nobody asked for (a second response: HTTP/1.1 is not
			 * pipelined here) and pacer closes it. No request was
			 * outstanding, so no request error is counted. */
			struct phase_stats *ip = phase_of(w, now);
			if (n > 0)
				ip->closed_stray++;
			else
				ip->closed_by_server++;
			eng_conn_close(w, c);
			return;
		}
		if (n <= 0) {
			if (n == 0 && c->got_byte && h1_resp_eof(&c->resp) == 0) {
				conn_done(w, c, now); /* close-delimited body: done, conn closes */
				return;
			}
			enum err_kind k = (n == 0 && !c->got_byte) ? ERRK_CLOSED : ERRK_READ;
			eng_count_error(w, c, k, now);
			eng_conn_close(w, c);
			return;
		}
		struct phase_stats *ph = phase_of(w, c->sched_ns);
		ph->bytes_in += (uint64_t)n;
		if (!c->got_byte && !c->tls && came_before_send(w, c, rx_rt)) {
			/* Bytes the server sent before this request was written:
			 * a response nobody asked for, which would otherwise be
			 * credited to this request. The connection's responses
			 * cannot be trusted: close it; this request has none. */
			phase_of(w, now)->closed_stray++;
			eng_count_error(w, c, ERRK_PARSE, now);
			eng_conn_close(w, c);
			return;
		}
		uint64_t at = eng_arrival_ns(w, rx_rt, c->got_byte ? c->first_byte_ns : c->write_ns, now);
		if (!c->got_byte) {
			c->got_byte = true;
			c->first_byte_ns = at;
		}
		ssize_t used = h1_resp_feed(&c->resp, w->rbuf, (size_t)n);
		if (used < 0) {
			eng_count_error(w, c, ERRK_PARSE, now);
			eng_conn_close(w, c);
			return;
		}
		if (h1_resp_done(&c->resp)) {
			/* Bytes beyond the response: we never pipeline, so the
			 * server sent something unasked; do not reuse it. */
			c->stray = (size_t)used < (size_t)n;
			conn_done(w, c, at);
			return;
		}
		if ((size_t)n < READ_BUF_CAP && !(c->tls && tls_pending(c->tls)))
			return; /* level-triggered: epoll tells us when there is more */
	}
}

static void copy_str(char *dst, size_t cap, const char *src)
{
	size_t n = strnlen(src, cap - 1);
	memcpy(dst, src, n);
	dst[n] = '\0';
}

/* Advance a TLS handshake; when done the connection becomes idle. A failure
 * is counted like a failed connect (errors.tls, backoff) with its reason. */
static void conn_handshake(struct worker *w, struct conn *c)
{
	int rc = tls_handshake(c->tls);
	if (rc == TLS_WANT_READ || rc == TLS_WANT_WRITE) {
		conn_want(w, c, rc == TLS_WANT_WRITE ? EV_IN | EPOLLOUT : EV_IN);
		return;
	}
	uint64_t now = clock_now_ns();
	if (rc != 0) {
		struct phase_stats *ph = eng_conn_error(w, c->host, ERRK_TLS, now);
		phase_stats_tls_reason(ph, tls_fail_reason(c->tls));
		eng_connect_failed(w, c->host, now);
		eng_conn_close(w, c);
		return;
	}
	struct phase_stats *ph = phase_of(w, c->connect_start_ns);
	ph->tls_handshakes++;
	if (tls_resumed(c->tls))
		ph->tls_resumed++;
	for (int k = 0; k < 2; k++) { /* what was negotiated: for both phases */
		struct phase_stats *p = k ? &w->meas : &w->warm;
		if (!p->tls_version[0]) {
			copy_str(p->tls_version, sizeof p->tls_version, tls_version(c->tls));
			copy_str(p->tls_cipher, sizeof p->tls_cipher, tls_cipher(c->tls));
		}
	}
	hist_record(&ph->timing[TIM_HANDSHAKE], now - c->hs_start_ns);
	if (w->e->cfg.http != ENGINE_H1) {
		if (tls_alpn_h2(c->tls)) {
			eng_h2_start(w, c, now); /* connecting until the server's SETTINGS */
			return;
		}
		if (w->e->cfg.http == ENGINE_H2) {
			ph = eng_conn_error(w, c->host, ERRK_PROTOCOL, now);
			phase_stats_tls_reason(ph, "the server did not choose HTTP/2 (ALPN h2); "
						   "--http2=prefer falls back to HTTP/1.1");
			eng_connect_failed(w, c->host, now);
			eng_conn_close(w, c);
			return;
		}
		ph->h2.conns_h1++; /* --http2=prefer: the server keeps HTTP/1.1 */
	}
	conn_connected(w, c);
	list_remove(&w->timed, c);
	conn_want(w, c, EV_IN);
	conn_make_idle(w, c, now);
}

/* Connected over TCP: start TLS. The handshake keeps the connect deadline
 * and counts as connecting until it is done. */
static void conn_start_tls(struct worker *w, struct conn *c, uint64_t now)
{
	const struct engine_host *h = &w->e->hosts[c->host];
	c->state = CS_HANDSHAKE;
	c->hs_start_ns = now;
	c->ev = EV_IN | EPOLLOUT; /* as conn_open registered it */
	if (tls_conn_new(&c->tls, h->tls, c->fd, h->tls_host,
			 w->e->cfg.tls_resume ? &w->hp[c->host].tls_resume : NULL) < 0) {
		struct phase_stats *ph = eng_conn_error(w, c->host, ERRK_TLS, now);
		phase_stats_tls_reason(ph, "out of memory for a TLS connection");
		eng_connect_failed(w, c->host, now);
		eng_conn_close(w, c);
		return;
	}
	conn_handshake(w, c);
}

void eng_conn_event(struct worker *w, struct conn *c, uint32_t events)
{
	uint64_t now = clock_now_ns();
	if (c->state == CS_CONNECTING) {
		int rc = net_connect_result(c->fd);
		if (rc != 0 || (events & (EPOLLERR | EPOLLHUP))) {
			eng_connect_error(w, c->host, rc, now);
			eng_connect_failed(w, c->host, now);
			eng_conn_close(w, c);
			return;
		}
		struct phase_stats *ph = phase_of(w, c->connect_start_ns);
		ph->conns_opened++;
		ph->host[c->host].conns_opened++;
		hist_record(&ph->timing[TIM_CONNECT], now - c->connect_start_ns);
		if (w->e->hosts[c->host].tls) {
			conn_start_tls(w, c, now);
			return;
		}
		if (w->e->cfg.http == ENGINE_H2C) {
			eng_h2_start(w, c, now); /* connecting until the server's SETTINGS */
			return;
		}
		conn_connected(w, c);
		list_remove(&w->timed, c);
		loop_mod(&w->loop, c->fd, EV_IN, c);
		conn_make_idle(w, c, now);
		return;
	}
	if (c->h2) {
		eng_h2_event(w, c, events);
		return;
	}
	if (c->state == CS_HANDSHAKE) {
		conn_handshake(w, c);
		return;
	}
	c->peer_closed = (events & EPOLLRDHUP) != 0;
	/* TLS: a write may wait for readability, a read for writability */
	uint32_t wr_ev = c->tls ? EPOLLOUT | EPOLLIN : EPOLLOUT;
	if (c->state == CS_WRITING && (events & wr_ev)) {
		if (!conn_write(w, c))
			return;
	}
	if ((events & (EPOLLIN | EPOLLERR | EPOLLHUP)) || (c->tls && (c->ev & EPOLLOUT) &&
							       c->state != CS_WRITING))
		conn_readable(w, c);
}
