/* pacer — engine: HTTP/3 connections and their streams, over libnghttp3
 * (engine_int.h draws the whole engine): the protocol eng_proto_h3, over
 * the QUIC transport (xport_quic.c) and only over it.
 *
 * A connection begins when its QUIC handshake completes (from inside the
 * transport's packets): an nghttp3 client session with its control and
 * QPACK streams. It sits on its host's idle list while it may open
 * another request stream: fewer than --max-streams in flight, the server's
 * MAX_STREAMS credit left, no GOAWAY. So a due request takes a stream of
 * an open connection before a new connection is opened; one that finds no
 * credit waits in the backlog, its latency running, as on HTTP/2.
 *
 * Each request is a stream record (struct conn, from a per-worker pool,
 * made on demand and reused): CS_READING and on w->timed from the moment
 * it is submitted, with the scheduled, write and first-byte times, its
 * status and the captured fields. Its response is complete when the
 * server's stream ends (nghttp3's end_stream): eng_conn_complete, as
 * HTTP/1.1 and HTTP/2 complete, so tables, rules, outcomes and timings are
 * the same. Times come from the kernel's arrival stamp of the datagram
 * that carried the bytes. A timeout cancels the stream
 * (H3_REQUEST_CANCELLED) and keeps the connection.
 *
 * Requests the server did not process (reset with H3_REQUEST_REJECTED, or
 * at or above a GOAWAY's id) go back to their host's backlog with their
 * first scheduled time and are counted in http3.retried, not twice in
 * sent; a host that refuses H2_RETRY_RUN_MAX in a row gets the rest
 * counted as resets. A connection whose server sends GOAWAY before it
 * answered any request is a failed connection (errors.protocol, once),
 * backed off like a failed connect; a host's failures in a row end with a
 * first answer. Request bytes that wait for the server's flow-control
 * credit are counted (http3.fc_blocked), and wait: their latency runs.
 *
 * Bounds: response header fields H1_HEADERS_CAP (nghttp3's field section
 * limit and pacer's), the QPACK dynamic table 4 KiB, streams blocked on
 * QPACK 100, and every stream's and the connection's receive window (the
 * transport's parameters). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nghttp3/nghttp3.h>
#include <ngtcp2/ngtcp2.h>

#include "engine/engine_int.h"
#include "http/h2req.h"

#define H3_HEADER_CAP H1_HEADERS_CAP
#define H3_QPACK_TABLE 4096
#define H3_QPACK_BLOCKED 100

struct h3_conn {
	nghttp3_conn *ng;
	struct worker *w;
	struct conn *c;
	struct conn **act;   /* streams in flight, n_act of them (swap-removed) */
	uint32_t n_act;
	uint32_t cap;        /* max_streams: the size of act */
	bool going;          /* GOAWAY received: no new streams */
	bool used;           /* a request was sent on it */
	bool answered;       /* a response began on it: the server processes requests */
	bool spent;          /* --no-keepalive: it took its request; closes when done */
	bool out_of_credit;  /* the server's MAX_STREAMS ran out (counted once a time) */
	bool dirty;          /* on its host's h3_dirty list */
	int64_t goaway_id;   /* GOAWAY: the first stream the server will not process */
	struct h3_conn *dirty_next;
};

/* An engine's requests as HTTP/3 header fields (built once, h3_prepare). */
struct h3req {
	struct h2req f;      /* the fields as HTTP/2 has them (names owned here) */
	nghttp3_nv *nv;      /* the same, as nghttp3 wants them */
};

static struct h3req *reqs_of(const struct engine *e);

/* ---- requests as header fields ------------------------------------------------- */

/* rq's encoded HTTP/1.1 bytes as HTTP/3 header fields into r (zeroed by
 * the caller; h3req_free releases it, also after a failure). 0, -ENOMEM,
 * or h2req_from_h1's error for bytes the fields cannot carry. */
static int h3req_build(struct h3req *r, const struct engine_req *rq)
{
	char err[160];
	int rc = h2req_from_h1(&r->f, rq->buf, rq->len, "https", err, sizeof err);
	if (rc)
		return rc;
	r->nv = calloc(r->f.n_nv, sizeof *r->nv);
	if (!r->nv)
		return -ENOMEM;
	for (size_t k = 0; k < r->f.n_nv; k++)
		r->nv[k] = (nghttp3_nv){.name = r->f.nv[k].name,
					.value = r->f.nv[k].value,
					.namelen = r->f.nv[k].namelen,
					.valuelen = r->f.nv[k].valuelen,
					.flags = NGHTTP3_NV_FLAG_NONE};
	return 0;
}

static void h3req_free(struct h3req *r)
{
	h2req_free(&r->f);
	free(r->nv);
}

/* Check cfg's HTTP/3 settings against its hosts and turn every request
 * into header fields (e->h3reqs). 0 (also over HTTP/1.1 and HTTP/2:
 * nothing to do), -EINVAL, -ENOMEM. */
static int h3_prepare(struct engine *e)
{
	const struct engine_cfg *cfg = &e->cfg;
	if (cfg->http != ENGINE_H3)
		return 0;
	if (cfg->max_streams > ENGINE_H2_STREAMS_MAX)
		return -EINVAL;
	for (uint32_t h = 0; h < e->n_hosts; h++) {
		sa_family_t f = e->hosts[h].addr.ss.ss_family;
		if (!e->hosts[h].quic || (f != AF_INET && f != AF_INET6))
			return -EINVAL; /* QUIC: a context, over UDP */
	}
	struct h3req *r = calloc(cfg->n_reqs, sizeof *r);
	if (!r)
		return -ENOMEM;
	e->h3reqs = r;
	for (size_t i = 0; i < cfg->n_reqs; i++) {
		int rc = h3req_build(&r[i], &cfg->reqs[i]);
		if (rc)
			return rc;
	}
	return 0;
}

static void h3_release(struct engine *e)
{
	struct h3req *r = reqs_of(e);
	if (!r)
		return;
	for (size_t i = 0; i < e->cfg.n_reqs; i++)
		h3req_free(&r[i]);
	free(r);
	e->h3reqs = NULL;
}

static struct h3req *reqs_of(const struct engine *e) { return e->h3reqs; }

/* Stream s's request as fields: a flow's own (made when it was sent), or
 * the engine's, built once. */
static const struct h3req *fields_of(const struct engine *e, const struct conn *s)
{
	return s->h3_fields ? s->h3_fields : &reqs_of(e)[s->req - e->cfg.reqs];
}

/* A flow's request (a script made it while the load runs) as fields for
 * stream s (s->h3_fields), as HTTP/2 makes its own. False: no memory, or
 * a request the fields cannot carry. */
static bool flow_fields(struct conn *s, const struct engine_req *rq)
{
	struct h3req *r = calloc(1, sizeof *r);
	if (!r)
		return false;
	if (h3req_build(r, rq)) {
		h3req_free(r);
		free(r);
		return false;
	}
	s->h3_fields = r;
	return true;
}

static void drop_fields(struct conn *s)
{
	if (s->h3_fields) {
		h3req_free(s->h3_fields);
		free(s->h3_fields);
		s->h3_fields = NULL;
	}
}

/* ---- stream records ---------------------------------------------------------------- */

static struct conn *stream_get(struct worker *w)
{
	struct conn *s = w->h3_free;
	if (s) {
		w->h3_free = s->next;
		return s;
	}
	if (w->h3_all_len == w->h3_all_cap) {
		size_t n = w->h3_all_cap ? 2 * w->h3_all_cap : 64;
		struct conn **a = realloc(w->h3_all, n * sizeof *a);
		if (!a)
			return NULL;
		w->h3_all = a;
		w->h3_all_cap = n;
	}
	s = calloc(1, sizeof *s);
	if (!s)
		return NULL;
	s->fd = -1;
	s->flow = ENG_FLOW_NONE;
	s->cap.headers = w->cap_headers; /* rules, or a script's response() and sessions */
	s->cap.body_cap = w->cap_body;
	w->h3_all[w->h3_all_len++] = s;
	return s;
}

static void h3_worker_free(struct worker *w)
{
	for (size_t i = 0; i < w->h3_all_len; i++) {
		drop_fields(w->h3_all[i]);
		h1_capture_free(&w->h3_all[i]->cap);
		free(w->h3_all[i]);
	}
	free(w->h3_all);
	w->h3_all = NULL;
	w->h3_free = NULL;
	w->h3_all_len = w->h3_all_cap = 0;
}

/* Whether c may open another request stream now. */
static bool has_room(const struct worker *w, const struct conn *c)
{
	const struct h3_conn *h = c->h3;
	return !h->going && !h->spent && h->n_act < h->cap && eng_quic_streams_left(c) > 0 &&
	       !(w->e->cfg.no_keepalive && h->used);
}

/* c on its host's idle list when it may take a request, off it when not. */
static void conn_offer(struct worker *w, struct conn *c, uint64_t now)
{
	struct h3_conn *h = c->h3;
	struct list *idle = &w->hp[c->host].idle;
	if (c->state != CS_IDLE || !h)
		return;
	bool room = has_room(w, c);
	if (!room && !h->out_of_credit && !h->going && h->n_act < h->cap &&
	    eng_quic_streams_left(c) == 0) {
		h->out_of_credit = true; /* the server's MAX_STREAMS, not ours */
		phase_of(w, now)->h3.stream_credit_waits++;
	} else if (room) {
		h->out_of_credit = false;
	}
	if (room && !c->in) {
		c->idle_ns = now;
		list_push_tail(idle, c);
	} else if (!room && c->in == idle) {
		list_remove(idle, c);
	}
}

static void stream_release(struct worker *w, struct conn *s)
{
	struct conn *c = s->h3_parent;
	struct h3_conn *h = c->h3;
	if (s->in)
		list_remove(s->in, s);
	if (h) {
		uint32_t i = s->h3_slot;
		h->act[i] = h->act[--h->n_act];
		h->act[i]->h3_slot = i;
		if (h->ng && s->h3_id >= 0)
			nghttp3_conn_set_stream_user_data(h->ng, s->h3_id, NULL);
	}
	s->state = CS_FREE;
	s->h3_parent = NULL;
	drop_fields(s);
	s->flow = ENG_FLOW_NONE;
	s->next = w->h3_free;
	w->h3_free = s;
}

/* The server did not process s: back to its host's backlog (see the top). */
static void stream_retry(struct worker *w, struct conn *s, uint64_t now)
{
	struct phase_stats *ph = phase_of(w, s->sched_ns);
	uint32_t r = s->flow != ENG_FLOW_NONE ? s->flow | QE_FLOW
					      : (uint32_t)(s->req - w->e->cfg.reqs);
	struct hpool *p = &w->hp[s->host];
	if (p->h3_refusals < H2_RETRY_RUN_MAX &&
	    q_push(w, s->host, s->sched_ns, r | (s->lagged ? QE_LAGGED : 0))) {
		p->h3_refusals++;
		ph->sent--;
		ph->lagged_sent -= s->lagged;
		ph->h3.retried++;
		s->flow = ENG_FLOW_NONE; /* it waits in the backlog, its flow with it */
	} else {
		eng_count_error(w, s, ERRK_RESET, now);
	}
	stream_release(w, s);
}

static struct conn *stream_by_id(const struct h3_conn *h, int64_t sid)
{
	for (uint32_t i = 0; i < h->n_act; i++)
		if (h->act[i]->h3_id == sid)
			return h->act[i];
	return NULL;
}

/* ---- nghttp3 callbacks (inside the transport's packets) ------------------------------ */

static struct conn *live_stream(void *sud)
{
	struct conn *s = sud;
	return s && s->state == CS_READING ? s : NULL;
}

static int on_begin_headers(nghttp3_conn *ng, int64_t sid, void *ud, void *sud)
{
	(void)ng, (void)sid;
	struct h3_conn *h = ud;
	struct conn *s = live_stream(sud);
	if (s && !h->answered) { /* connected for good: failures in a row end here */
		h->answered = true;
		h->w->hp[h->c->host].connect_fails = 0;
	}
	if (s && !s->got_byte) {
		s->got_byte = true;
		s->first_byte_ns = eng_arrival_ns(h->w, eng_quic_rx_rt(h->c), s->write_ns,
						  clock_now_ns());
	}
	return 0;
}

/* s's response broke a rule of pacer's (its header fields too large, a
 * status that is none): counted as a malformed response, the stream
 * cancelled, the connection kept. */
static void stream_bad(struct h3_conn *h, struct conn *s)
{
	int64_t sid = s->h3_id;
	eng_count_error(h->w, s, ERRK_PARSE, clock_now_ns());
	stream_release(h->w, s);
	eng_quic_shutdown_stream(h->c, sid, NGHTTP3_H3_REQUEST_CANCELLED);
}

static int on_header(nghttp3_conn *ng, int64_t sid, int32_t token, nghttp3_rcbuf *name,
		     nghttp3_rcbuf *value, uint8_t flags, void *ud, void *sud)
{
	(void)ng, (void)sid, (void)token, (void)flags;
	struct h3_conn *h = ud;
	struct conn *s = live_stream(sud);
	if (!s)
		return 0;
	nghttp3_vec n = nghttp3_rcbuf_get_buf(name), v = nghttp3_rcbuf_get_buf(value);
	s->resp.header_bytes += n.len + v.len + 32;
	if (s->resp.header_bytes > H3_HEADER_CAP) {
		stream_bad(h, s);
		return 0;
	}
	if (n.len == 7 && memcmp(n.base, ":status", 7) == 0) {
		int st = 0;
		for (size_t i = 0; i < v.len && i < 4; i++)
			st = (v.base[i] >= '0' && v.base[i] <= '9') ? st * 10 + (v.base[i] - '0') : -1000;
		if (v.len != 3 || st < 100) {
			stream_bad(h, s);
			return 0;
		}
		if (st < 200) { /* an interim response: the final one follows */
			s->resp.interim += s->resp.interim < UINT32_MAX;
			if (s->resp.cap)
				h1_capture_clear(s->resp.cap);
			st = 0;
		}
		s->resp.status = st;
		return 0;
	}
	if (s->resp.cap && s->resp.status && n.len && n.base[0] != ':')
		h1_capture_add_field(s->resp.cap, (const char *)n.base, n.len, (const char *)v.base,
				     v.len);
	return 0;
}

static int on_data(nghttp3_conn *ng, int64_t sid, const uint8_t *data, size_t len, void *ud,
		   void *sud)
{
	(void)ng;
	struct h3_conn *h = ud;
	eng_quic_consumed(h->c, sid, len);
	struct conn *s = live_stream(sud);
	if (!s)
		return 0;
	s->resp.body_bytes += len;
	if (s->resp.cap)
		h1_capture_add_body(s->resp.cap, (const char *)data, len);
	return 0;
}

static int on_deferred_consume(nghttp3_conn *ng, int64_t sid, size_t n, void *ud, void *sud)
{
	(void)ng, (void)sud;
	eng_quic_consumed(((struct h3_conn *)ud)->c, sid, n);
	return 0;
}

/* The server's stream ended: the response is complete (a status came), or
 * the stream ended without one (malformed). */
static int on_end_stream(nghttp3_conn *ng, int64_t sid, void *ud, void *sud)
{
	(void)ng, (void)sid;
	struct h3_conn *h = ud;
	struct worker *w = h->w;
	struct conn *s = live_stream(sud);
	if (!s)
		return 0;
	uint64_t now = clock_now_ns();
	if (!s->resp.status) {
		eng_count_error(w, s, s->got_byte ? ERRK_PARSE : ERRK_CLOSED, now);
		stream_release(w, s);
		return 0;
	}
	now = eng_arrival_ns(w, eng_quic_rx_rt(h->c), s->got_byte ? s->first_byte_ns : s->write_ns,
			     now);
	s->resp.keep_alive = true;
	w->hp[s->host].h3_refusals = 0;
	s->state = CS_IDLE;           /* done: h3_done releases, no reset */
	eng_conn_complete(w, s, now); /* releases the stream */
	return 0;
}

/* The HTTP/3 stream closed (both ways, as QUIC closed it): a request
 * still in flight did not get its response. */
static int on_stream_close(nghttp3_conn *ng, int64_t sid, uint64_t code, void *ud, void *sud)
{
	(void)ng;
	struct h3_conn *h = ud;
	struct worker *w = h->w;
	struct conn *s = live_stream(sud);
	if (!s)
		return 0;
	uint64_t now = clock_now_ns();
	if (code == NGHTTP3_H3_REQUEST_REJECTED || (h->going && sid >= h->goaway_id))
		stream_retry(w, s, now); /* not processed by the server */
	else {
		eng_count_error(w, s, s->h3_code ? ERRK_RESET : s->got_byte ? ERRK_READ : ERRK_CLOSED,
				now);
		stream_release(w, s);
	}
	return 0;
}

static int on_stop_sending(nghttp3_conn *ng, int64_t sid, uint64_t code, void *ud, void *sud)
{
	(void)ng, (void)sud;
	eng_quic_shutdown_read(((struct h3_conn *)ud)->c, sid, code);
	return 0;
}

static int on_reset_stream(nghttp3_conn *ng, int64_t sid, uint64_t code, void *ud, void *sud)
{
	(void)ng, (void)sud;
	eng_quic_shutdown_write(((struct h3_conn *)ud)->c, sid, code);
	return 0;
}

/* GOAWAY: no new streams; those at or above id were not processed. */
static int on_shutdown(nghttp3_conn *ng, int64_t id, void *ud)
{
	(void)ng;
	struct h3_conn *h = ud;
	struct worker *w = h->w;
	uint64_t now = clock_now_ns();
	phase_of(w, now)->h3.goaway++;
	if (!h->going || id < h->goaway_id) {
		h->going = true;
		h->goaway_id = id;
	}
	for (uint32_t i = h->n_act; i-- > 0;) {
		struct conn *s = h->act[i];
		if (s->h3_id < id)
			continue;
		int64_t sid = s->h3_id;
		stream_retry(w, s, now); /* not processed: again on another connection */
		eng_quic_shutdown_stream(h->c, sid, NGHTTP3_H3_REQUEST_CANCELLED);
	}
	conn_offer(w, h->c, now);
	return 0;
}

/* A request body, from the encoded request (no copy). */
static nghttp3_ssize read_body(nghttp3_conn *ng, int64_t sid, nghttp3_vec *vec, size_t n,
			       uint32_t *flags, void *ud, void *sud)
{
	(void)ng, (void)sid;
	struct h3_conn *h = ud;
	struct conn *s = live_stream(sud);
	if (!s || !n) {
		*flags |= NGHTTP3_DATA_FLAG_EOF;
		return 0;
	}
	const struct h3req *hr = fields_of(h->w->e, s);
	vec[0].base = (uint8_t *)(uintptr_t)hr->f.body;
	vec[0].len = hr->f.body_len;
	*flags |= NGHTTP3_DATA_FLAG_EOF;
	return 1;
}

static const nghttp3_callbacks h3_cbs = {
	.stream_close = on_stream_close,
	.recv_data = on_data,
	.deferred_consume = on_deferred_consume,
	.begin_headers = on_begin_headers,
	.recv_header = on_header,
	.stop_sending = on_stop_sending,
	.end_stream = on_end_stream,
	.reset_stream = on_reset_stream,
	.shutdown = on_shutdown,
};

/* ---- the stream interface the transport calls ------------------------------------------ */

/* nghttp3 failed on what the server sent: the connection ends with
 * nghttp3's code for it, named as the reason ("HTTP/3: the server broke
 * HTTP/3: QPACK_ENCODER_STREAM_ERROR (...)"). */
static int h3_broke(struct worker *w, struct conn *c, int liberr)
{
	char why[RESULT_TLS_REASON_CAP];
	uint64_t code = nghttp3_err_infer_quic_app_error_code(liberr);
	const char *n = h3_err_name(h3_err_index(code));
	if (code != NGHTTP3_H3_INTERNAL_ERROR && strcmp(n, "OTHER"))
		snprintf(why, sizeof why,
			 "HTTP/3: the server broke HTTP/3: %s (pacer closed the connection; %s)", n,
			 nghttp3_strerror(liberr));
	else
		snprintf(why, sizeof why, "HTTP/3: %s (%s)", nghttp3_strerror(liberr), n);
	eng_quic_fail(w, c, code, why);
	return -1;
}

int eng_h3_recv(struct worker *w, struct conn *c, int64_t sid, const uint8_t *data, size_t len,
		bool fin)
{
	struct h3_conn *h = c->h3;
	if (!h)
		return 0;
	nghttp3_ssize n = nghttp3_conn_read_stream(h->ng, sid, data, len, fin);
	if (n < 0)
		return h3_broke(w, c, (int)n);
	eng_quic_consumed(c, sid, (size_t)n);
	return 0;
}

static int h3_acked(struct worker *w, struct conn *c, int64_t sid, uint64_t len)
{
	struct h3_conn *h = c->h3;
	int rv = h ? nghttp3_conn_add_ack_offset(h->ng, sid, len) : 0;
	return rv ? h3_broke(w, c, rv) : 0;
}

static int h3_closed(struct worker *w, struct conn *c, int64_t sid, uint64_t code)
{
	struct h3_conn *h = c->h3;
	if (!h)
		return 0;
	int rv = nghttp3_conn_close_stream(h->ng, sid, code);
	return rv && rv != NGHTTP3_ERR_STREAM_NOT_FOUND ? h3_broke(w, c, rv) : 0;
}

/* The server reset stream sid: its code is kept (the request's error,
 * counted when the stream closes) and counted by code. */
static int h3_reset(struct worker *w, struct conn *c, int64_t sid, uint64_t code)
{
	struct h3_conn *h = c->h3;
	if (!h)
		return 0;
	struct conn *s = stream_by_id(h, sid);
	if (s && s->state == CS_READING) {
		s->h3_code = (uint32_t)(code < UINT32_MAX ? code : UINT32_MAX);
		phase_of(w, clock_now_ns())->h3.resets[h3_err_index(code)]++;
	}
	int rv = nghttp3_conn_shutdown_stream_read(h->ng, sid);
	return rv ? h3_broke(w, c, rv) : 0;
}

static int h3_stop_sending(struct worker *w, struct conn *c, int64_t sid, uint64_t code)
{
	(void)code;
	struct h3_conn *h = c->h3;
	int rv = h ? nghttp3_conn_shutdown_stream_read(h->ng, sid) : 0;
	return rv ? h3_broke(w, c, rv) : 0;
}

static int h3_credit(struct worker *w, struct conn *c, int64_t sid)
{
	struct h3_conn *h = c->h3;
	int rv = h ? nghttp3_conn_unblock_stream(h->ng, sid) : 0;
	return rv && rv != NGHTTP3_ERR_STREAM_NOT_FOUND ? h3_broke(w, c, rv) : 0;
}

static void h3_more_streams(struct worker *w, struct conn *c)
{
	conn_offer(w, c, clock_now_ns());
}

static long h3_pull(struct worker *w, struct conn *c, int64_t *sid, int *fin,
		    struct ngtcp2_vec *v, size_t n)
{
	struct h3_conn *h = c->h3;
	*sid = -1;
	*fin = 0;
	if (!h)
		return 0;
	nghttp3_vec vec[16];
	if (n > 16)
		n = 16;
	nghttp3_ssize k = nghttp3_conn_writev_stream(h->ng, sid, fin, vec, n);
	if (k < 0)
		return h3_broke(w, c, (int)k);
	for (nghttp3_ssize i = 0; i < k; i++)
		v[i] = (ngtcp2_vec){.base = vec[i].base, .len = vec[i].len};
	return (long)k;
}

static int h3_wrote(struct worker *w, struct conn *c, int64_t sid, size_t n)
{
	struct h3_conn *h = c->h3;
	int rv = h ? nghttp3_conn_add_write_offset(h->ng, sid, n) : 0;
	return rv ? h3_broke(w, c, rv) : 0;
}

/* Stream sid's bytes wait for the server's flow-control credit: counted
 * once for a request. */
static void h3_blocked(struct worker *w, struct conn *c, int64_t sid)
{
	struct h3_conn *h = c->h3;
	if (!h)
		return;
	nghttp3_conn_block_stream(h->ng, sid);
	struct conn *s = stream_by_id(h, sid);
	if (s && !s->h3_blocked) {
		s->h3_blocked = true;
		phase_of(w, s->sched_ns)->h3.fc_blocked++;
	}
}

static void h3_shut_wr(struct worker *w, struct conn *c, int64_t sid)
{
	(void)w;
	if (c->h3)
		nghttp3_conn_shutdown_stream_write(c->h3->ng, sid);
}

static const struct eng_stream_ops h3_stream_ops = {
	.recv = eng_h3_recv,
	.acked = h3_acked,
	.closed = h3_closed,
	.reset = h3_reset,
	.stop_sending = h3_stop_sending,
	.credit = h3_credit,
	.more_streams = h3_more_streams,
	.pull = h3_pull,
	.wrote = h3_wrote,
	.blocked = h3_blocked,
	.shut_wr = h3_shut_wr,
};

/* ---- connections ----------------------------------------------------------------------- */

/* Whether c, ready, never took a request though it was needed (see
 * proto_h2.c's h2_needed_unused). */
static bool needed_unused(const struct worker *w, const struct conn *c)
{
	const struct hpool *p = &w->hp[c->host];
	return c->h3 && !c->h3->used && (p->q_len || p->connect_fails);
}

/* The QUIC handshake completed (inside the transport's packets): the
 * HTTP/3 session, its control and QPACK streams, and the connection on its
 * host's idle list. A failure ends the connection once the packets are
 * processed (eng_quic_fail). */
static void h3_start(struct worker *w, struct conn *c, uint64_t now)
{
	const struct engine_cfg *cfg = &w->e->cfg;
	uint32_t cap = cfg->max_streams ? cfg->max_streams : ENGINE_H2_STREAMS_DEFAULT;
	if (eng_quic_uni_left(c) < 3) {
		eng_quic_fail(w, c, NGHTTP3_H3_GENERAL_PROTOCOL_ERROR,
			      "HTTP/3: the server allows fewer than 3 unidirectional streams (its "
			      "control and QPACK streams need them)");
		return;
	}
	struct h3_conn *h = calloc(1, sizeof *h + cap * sizeof *h->act);
	if (!h) {
		eng_quic_fail(w, c, NGHTTP3_H3_INTERNAL_ERROR, "HTTP/3: out of memory");
		return;
	}
	h->act = (struct conn **)(h + 1);
	h->cap = cap;
	h->w = w;
	h->c = c;
	nghttp3_settings st;
	nghttp3_settings_default(&st);
	st.max_field_section_size = H3_HEADER_CAP;
	st.qpack_max_dtable_capacity = H3_QPACK_TABLE;
	st.qpack_blocked_streams = H3_QPACK_BLOCKED;
	int rv = nghttp3_conn_client_new(&h->ng, &h3_cbs, &st, nghttp3_mem_default(), h);
	int64_t ctrl, enc, dec;
	if (!rv && (eng_quic_open_uni(c, &ctrl) || eng_quic_open_uni(c, &enc) ||
		    eng_quic_open_uni(c, &dec)))
		rv = NGHTTP3_ERR_NOMEM;
	if (!rv)
		rv = nghttp3_conn_bind_control_stream(h->ng, ctrl);
	if (!rv)
		rv = nghttp3_conn_bind_qpack_streams(h->ng, enc, dec);
	if (rv) {
		if (h->ng)
			nghttp3_conn_del(h->ng);
		free(h);
		eng_quic_fail(w, c, NGHTTP3_H3_INTERNAL_ERROR, "HTTP/3: the session did not start");
		return;
	}
	c->h3 = h;
	/* connected: no longer counted connecting, off the connect deadline
	 * (its host's connect failures are forgotten when it takes a request) */
	struct hpool *p = &w->hp[c->host];
	p->n_connecting--;
	w->n_connecting--;
	list_remove(&w->timed, c);
	c->state = CS_IDLE;
	struct phase_stats *ph = phase_of(w, c->connect_start_ns);
	ph->h3.conns_h3++;
	ph->host[c->host].conns_h3++;
	conn_offer(w, c, now);
}

/* The server ended c (or it failed) after its handshake but before c took
 * any of the requests waiting for its host: backed off like a failed
 * connect, so that a server that closes every connection at once is not
 * reconnected to without end. */
static void h3_wasted(struct worker *w, struct conn *c, uint64_t now)
{
	if (needed_unused(w, c))
		eng_connect_failed(w, c->host, now);
}

/* Write the requests submitted on host h's connections since the last call. */
static void h3_flush_host(struct worker *w, uint32_t host, uint64_t now)
{
	struct hpool *p = &w->hp[host];
	while (p->h3_dirty) {
		struct h3_conn *h = p->h3_dirty;
		p->h3_dirty = h->dirty_next;
		h->dirty = false;
		if (eng_quic_flush(w, h->c, now) < 0)
			eng_conn_close(w, h->c);
	}
}

static void mark_dirty(struct worker *w, struct conn *c)
{
	struct h3_conn *h = c->h3;
	if (h->dirty)
		return;
	struct hpool *p = &w->hp[c->host];
	h->dirty = true;
	h->dirty_next = p->h3_dirty;
	p->h3_dirty = h;
}

/* What comes after the transport's packets: a connection whose server
 * said GOAWAY, or spent (--no-keepalive), is closed when its streams are
 * done; else it is offered again. False: c is closed. */
static bool h3_after(struct worker *w, struct conn *c, uint64_t now)
{
	struct h3_conn *h = c->h3;
	if (!h)
		return true;
	if ((h->going || h->spent) && !h->n_act) {
		if (h->going && !h->answered && (h->used || needed_unused(w, c))) {
			/* GOAWAY before the server answered any request on c (those
			 * sent are retried elsewhere) while requests waited: a failed
			 * connection, counted once and backed off like a failed
			 * connect, so that a server that sends GOAWAY at once is not
			 * reconnected to without end (before: 109 connections and
			 * 1,024 retries in 2 s at 50/s, then the requests counted as
			 * resets) */
			eng_quic_fail(
				w, c, NGHTTP3_H3_NO_ERROR,
				"HTTP/3: the server sent GOAWAY before it answered any request "
				"on the connection");
			eng_connect_failed(w, c->host, now);
		} else {
			if (h->going)
				phase_of(w, now)->closed_by_server++; /* GOAWAY: done with it */
			h3_wasted(w, c, now);
		}
		eng_conn_close(w, c);
		return false;
	}
	conn_offer(w, c, now);
	return true;
}

static void h3_event(struct worker *w, struct conn *c, uint32_t events)
{
	(void)events;
	uint64_t now = clock_now_ns();
	if (eng_quic_input(w, c) < 0) {
		h3_wasted(w, c, now);
		eng_conn_close(w, c);
		return;
	}
	h3_after(w, c, clock_now_ns());
}

/* Open a stream for rq (NULL: pick_req) scheduled at sched_ns on c, a
 * connection on its host's idle list. Its bytes go out with the next
 * flush of its host (h3_flush_host). */
static void h3_send(struct worker *w, struct conn *c, uint64_t sched_ns,
		    const struct engine_req *rq, bool lagged, uint32_t flow)
{
	const struct engine_cfg *cfg = &w->e->cfg;
	struct h3_conn *h = c->h3;
	uint64_t now = clock_now_ns();
	if (!rq)
		rq = &cfg->reqs[pick_req(w)];
	struct phase_stats *ph = phase_of(w, sched_ns);
	struct conn *s = stream_get(w);
	if (s && flow != ENG_FLOW_NONE && !flow_fields(s, rq)) {
		s->next = w->h3_free; /* back, unused */
		w->h3_free = s;
		eng_flow_drop(w, flow, sched_ns, now); /* counted dropped */
		return;
	}
	int64_t sid = -1;
	if (!s || eng_quic_open_bidi(c, &sid, s)) {
		if (c->in)
			list_remove(c->in, c); /* no record, or no stream: this connection is full */
		if (!s) {
			/* out of memory for a stream record */
			if (flow != ENG_FLOW_NONE)
				eng_flow_drop(w, flow, sched_ns, now);
			else
				eng_count_dropped(w, ph, now);
			return;
		}
		drop_fields(s);
		s->next = w->h3_free;
		w->h3_free = s;
		/* back to the backlog's tail (no credit after all): never lost */
		uint32_t r = flow != ENG_FLOW_NONE ? flow | QE_FLOW : (uint32_t)(rq - cfg->reqs);
		if (!q_push(w, c->host, sched_ns, r | (lagged ? QE_LAGGED : 0))) {
			if (flow != ENG_FLOW_NONE)
				eng_flow_drop(w, flow, sched_ns, now);
			else
				eng_count_dropped(w, ph, now);
		}
		return;
	}
	s->flow = flow;
	ph->sent++;
	ph->lagged_sent += lagged;
	live_add(&w->live.sent, 1);
	if (cfg->open_loop)
		hist_record(&ph->timing[TIM_SEND_LAG], now > sched_ns ? now - sched_ns : 0);
	s->lagged = lagged;
	s->proto = &eng_proto_h3;
	s->host = c->host;
	s->req = rq;
	s->sched_ns = sched_ns;
	s->write_ns = now;
	s->deadline_ns = now + cfg->timeout_ns;
	s->got_byte = false;
	s->wr_off = 0;
	s->h3_blocked = false;
	s->h3_code = 0;
	s->h3_id = sid;
	s->h3_parent = c;
	s->state = CS_READING;
	h1_resp_init(&s->resp, rq->head);
	if (w->capture)
		h1_resp_capture(&s->resp, &s->cap);
	const struct h3req *hr = fields_of(w->e, s);
	s->h3_slot = h->n_act;
	h->act[h->n_act++] = s;
	list_push_tail(&w->timed, s);
	nghttp3_data_reader dr = {.read_data = read_body};
	int rv = nghttp3_conn_submit_request(h->ng, sid, hr->nv, hr->f.n_nv,
					     hr->f.body_len ? &dr : NULL, s);
	if (rv) { /* cannot happen with a fresh stream; counted, not lost */
		eng_count_error(w, s, ERRK_WRITE, now);
		stream_release(w, s);
		eng_quic_shutdown_stream(c, sid, NGHTTP3_H3_REQUEST_CANCELLED);
		mark_dirty(w, c);
		return;
	}
	h->used = true; /* failures in a row end with its first answer (on_begin_headers) */
	if (cfg->no_keepalive)
		h->spent = true; /* one request a connection */
	ph->h3.streams_n++;
	ph->h3.streams_sum += h->n_act;
	if (h->n_act > ph->h3.streams_max)
		ph->h3.streams_max = h->n_act;
	struct host_stats *hs = &ph->host[c->host];
	hs->sent_h3++;
	hs->streams_sum += h->n_act;
	if (h->n_act > hs->streams_max)
		hs->streams_max = h->n_act;
	conn_offer(w, c, now);
	mark_dirty(w, c);
}

/* Close a stream (cancel it: a timeout; a stream done is released) or an
 * HTTP/3 connection (its streams in flight count as read or closed
 * errors). */
static void h3_close(struct worker *w, struct conn *c)
{
	uint64_t now = clock_now_ns();
	struct conn *parent = c->h3_parent;
	if (parent) { /* a stream */
		struct h3_conn *h = parent->h3;
		bool cancel = c->state == CS_READING && h;
		int64_t sid = c->h3_id;
		stream_release(w, c);
		if (!cancel)
			return;
		/* given up on (a timeout): the connection stays */
		eng_quic_shutdown_stream(parent, sid, NGHTTP3_H3_REQUEST_CANCELLED);
		mark_dirty(w, parent);
		conn_offer(w, parent, now);
		return;
	}
	struct h3_conn *h = c->h3;
	if (!h) { /* its session never started */
		eng_conn_release(w, c);
		return;
	}
	if (h->dirty) {
		struct h3_conn **pp = &w->hp[c->host].h3_dirty;
		while (*pp != h)
			pp = &(*pp)->dirty_next;
		*pp = h->dirty_next;
		h->dirty = false;
	}
	while (h->n_act) {
		struct conn *s = h->act[h->n_act - 1];
		if (s->in)
			list_remove(s->in, s);
		eng_count_error(w, s, s->got_byte ? ERRK_READ : ERRK_CLOSED, now);
		stream_release(w, s);
	}
	nghttp3_conn_del(h->ng);
	free(h);
	c->h3 = NULL;
	eng_conn_release(w, c);
}

/* A stream's response is counted: its record goes back (a connection to
 * close, --no-keepalive, closes after the transport's packets). */
static void h3_done(struct worker *w, struct conn *s, uint64_t now)
{
	(void)now;
	h3_close(w, s); /* done (CS_IDLE): released, not cancelled */
}

static uint32_t h3_in_flight(const struct conn *c)
{
	return c->h3 ? c->h3->n_act : 0;
}

/* The end of a step: streams in flight count as left (eng_count_left) and
 * their connections close; the idle ones stay open, their smoothed RTT
 * counted in the step (a closed one's is counted as it closes). */
static void h3_step_end(struct worker *w)
{
	for (uint32_t i = 0; i < w->max_conns; i++) {
		struct conn *c = &w->conns[i];
		struct h3_conn *h = c->state != CS_FREE ? c->h3 : NULL;
		if (!h)
			continue;
		if (!h->n_act) {
			eng_quic_step_end(w, c);
			continue;
		}
		while (h->n_act) {
			struct conn *s = h->act[h->n_act - 1];
			eng_count_left(w, s->sched_ns, s->req, s->lagged, true);
			stream_release(w, s);
		}
		eng_conn_close(w, c);
	}
}

const struct eng_proto eng_proto_h3 = {
	.name = "h3",
	.prepare = h3_prepare,
	.release = h3_release,
	.start = h3_start,
	.send = h3_send,
	.event = h3_event,
	.done = h3_done,
	.close = h3_close,
	.in_flight = h3_in_flight,
	.flush_host = h3_flush_host,
	.step_end = h3_step_end,
	.worker_free = h3_worker_free,
	.connect_timeout_reason = "the QUIC connection did not become ready within --timeout",
	.streams = &h3_stream_ops,
};
