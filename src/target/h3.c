/* The embedded target server: HTTP/3 request streams, over an nghttp3 server
 * session per QUIC connection (quic.c carries its bytes).
 *
 * Each request is a stream (tstream.c, shared with HTTP/2: its record from
 * a per-thread pool, made on demand and reused), answered as h2.c answers
 * a stream: the route match, the answer drawn from the status mix, a
 * rendered body, the CPU work, a latency timer of its own (w->h3heap), a
 * slow body sent a piece per interval, garbage as a reset stream
 * (H3_INTERNAL_ERROR), close_after as a GOAWAY. This file is HTTP/3's
 * framing: nghttp3's callbacks and the answers' header fields.
 *
 * Memory is bounded as on HTTP/2: at most max_streams request streams at
 * once per connection (the transport's MAX_STREAMS, extended by one as
 * each ends), a request's header fields at most TSTREAM_HEADERS_CAP bytes
 * (431 above; nghttp3 is told the same limit, and the QPACK dynamic table
 * the client may use is 0 bytes, so decoding holds nothing), and the
 * budgets of long :path buffers and rendered answers tstream.h states (a
 * stream begun past the :path budget is rejected, H3_REQUEST_REJECTED; 431
 * and 503 past them). Bodies are sent from where they are (the plan's wire bytes, the
 * stream's rendered buffer), never copied: what a client that never reads
 * holds is its streams' records and what ngtcp2 keeps in flight, within
 * its congestion window. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "target/h3_int.h"

#define H3_HEADERS_CAP TSTREAM_HEADERS_CAP

struct h3_plan {
	struct tstream_answers a; /* the plan's answers as header fields */
};

/* ---- the plan's answers ------------------------------------------------ */

static nghttp3_nv nv3(const char *name, size_t nl, const char *value, size_t vl)
{
	return (nghttp3_nv){(uint8_t *)(uintptr_t)name, (uint8_t *)(uintptr_t)value, nl, vl,
			    NGHTTP3_NV_FLAG_NO_COPY_NAME | NGHTTP3_NV_FLAG_NO_COPY_VALUE};
}

int target_h3_build(struct target *t)
{
	if (!t->quic)
		return 0;
	struct h3_plan *hp = calloc(1, sizeof *hp);
	if (!hp)
		return -ENOMEM;
	t->h3p = hp;
	return tstream_answers_build(&hp->a, t->plan);
}

void target_h3_free_plan(struct target *t)
{
	struct h3_plan *hp = t->h3p;
	if (!hp)
		return;
	tstream_answers_free(&hp->a, t->plan);
	free(hp);
	t->h3p = NULL;
}

/* ---- stream records ----------------------------------------------------- */

#define SC(st) ((struct h3c *)(st)->set->conn) /* a stream's connection */

/* st fails: its stream is reset (H3_INTERNAL_ERROR). */
static void stream_reset(struct tstream *st)
{
	ngtcp2_conn_shutdown_stream(SC(st)->q, st->id, NGHTTP3_H3_INTERNAL_ERROR);
}

/* ---- answering ---------------------------------------------------------- */

static nghttp3_ssize body_read(nghttp3_conn *ng, int64_t sid, nghttp3_vec *vec, size_t veccnt,
			       uint32_t *flags, void *ud, void *sud)
{
	(void)ng, (void)sid, (void)ud;
	struct tstream *st = sud;
	if (!st || veccnt == 0) {
		*flags |= NGHTTP3_DATA_FLAG_EOF;
		return 0;
	}
	size_t n = tstream_slow_take(st, st->body_len - st->body_off);
	if (st->deferred)
		return NGHTTP3_ERR_WOULDBLOCK; /* its timer resumes it */
	vec[0].base = (uint8_t *)(uintptr_t)(st->body + st->body_off);
	vec[0].len = n;
	st->body_off += n;
	if (st->body_off == st->body_len)
		*flags |= NGHTTP3_DATA_FLAG_EOF;
	return 1;
}

static void submit(struct tstream *st, const nghttp3_nv *nv, size_t n, bool body)
{
	struct h3c *c = SC(st);
	nghttp3_data_reader dr = {.read_data = body_read};
	st->state = TS_SENT;
	c->last_act_ns = c->w->now;
	if (nghttp3_conn_submit_response(c->h3, st->id, nv, n, body ? &dr : NULL) != 0)
		stream_reset(st);
}

static void answer_canned(struct tstream *st, int status)
{
	struct worker *w = SC(st)->w;
	const struct tstream_canned *k = tstream_canned_of(&w->t->h3p->a, status);
	nghttp3_nv nv[3] = {
		nv3(":status", 7, k->st, 3),
		nv3("content-type", 12, "text/plain", 10),
		nv3("content-length", 14, k->len, strlen(k->len)),
	};
	st->body = k->body;
	st->body_len = st->head_req ? 0 : k->body_len;
	st->body_off = 0;
	stat_inc(&w->st.requests);
	SC(st)->nreq++;
	submit(st, nv, 3, st->body_len > 0);
}

static void answer(struct tstream *st)
{
	struct h3c *c = SC(st);
	struct worker *w = c->w;
	const struct target_route *rt = st->rt;
	const struct target_resp *r = st->resp;
	const struct h3_plan *hp = w->t->h3p;
	c->nreq++;
	stat_inc(&w->st.requests);
	if (st->garbage) {
		/* HTTP/3's broken answer: the stream is reset */
		st->state = TS_SENT;
		c->last_act_ns = w->now;
		stream_reset(st);
		stat_inc(&w->st.misbehaved);
		return;
	}
	const struct tstream_fields *h = tstream_fields_of(&hp->a, w->t->plan, rt, r);
	bool body = tstream_body_of(st);
	nghttp3_nv nv[TSTREAM_NV_MAX];
	size_t n = 0;
	nv[n++] = nv3(":status", 7, h->status, 3);
	for (size_t i = 0; i < h->n; i++)
		nv[n++] = nv3(h->f[i].name, h->f[i].nl, h->f[i].value, h->f[i].vl);
	char cl[24], timing[40];
	if (!r->no_body_allowed) {
		nv[n] = nv3("content-length", 14, cl, target_fmt_u64(cl, st->body_len));
		nv[n++].flags = NGHTTP3_NV_FLAG_NO_COPY_NAME;
	}
	if (rt && rt->server_timing) {
		nv[n] = nv3("server-timing", 13, timing,
			    target_fmt_timing(timing, clock_now_ns() - st->dispatch_ns));
		nv[n++].flags = NGHTTP3_NV_FLAG_NO_COPY_NAME;
	}
	submit(st, nv, n, body);
	if (rt && rt->mis.close_after && c->nreq >= rt->mis.close_after && !c->goaway_due) {
		/* the connection ends: the GOAWAY goes with the next flush, after
		 * every datagram of this batch is read, so that it names (and the
		 * server answers) all the streams the client sent so far, not just
		 * those in the packets read before this one (which made a client
		 * that opens many streams at once retry most of them) */
		c->goaway_due = true;
		stat_inc(&w->st.misbehaved);
	}
}

static void stream_resume(struct tstream *st)
{
	nghttp3_conn_resume_stream(SC(st)->h3, st->id);
}

static void stream_timed(struct tstream *st)
{
	h3_dirty(SC(st));
}

static const struct tstream_ops h3_ops = {
	.answer = answer,
	.canned = answer_canned,
	.resume = stream_resume,
	.reset = stream_reset,
	.timed = stream_timed,
};

void h3_stream_timers(struct worker *w)
{
	tstream_run_timers(&w->h3->pool);
}

/* ---- nghttp3 callbacks ---------------------------------------------------- */

static int on_begin_headers(nghttp3_conn *ng, int64_t sid, void *ud, void *sud)
{
	(void)sud;
	struct h3c *c = ud;
	struct tstream_pool *p = &c->w->h3->pool;
	c->last_act_ns = c->w->now;
	if (!tstream_may_begin(p, &c->s)) {
		/* the requests still coming hold enough already: not processed,
		 * the client may retry it later */
		stat_inc(&c->w->st.bad_requests);
		ngtcp2_conn_shutdown_stream(c->q, sid, NGHTTP3_H3_REQUEST_REJECTED);
		return 0;
	}
	struct tstream *st = tstream_get(p, &c->s, sid);
	if (!st)
		return NGHTTP3_ERR_CALLBACK_FAILURE;
	nghttp3_conn_set_stream_user_data(ng, sid, st);
	return 0;
}

static int on_header(nghttp3_conn *ng, int64_t sid, int32_t token, nghttp3_rcbuf *name,
		     nghttp3_rcbuf *value, uint8_t flags, void *ud, void *sud)
{
	(void)ng, (void)sid, (void)flags, (void)ud;
	struct tstream *st = sud;
	if (!st || st->state != TS_HEAD)
		return 0;
	nghttp3_vec n = nghttp3_rcbuf_get_buf(name), v = nghttp3_rcbuf_get_buf(value);
	enum tstream_field k = token == NGHTTP3_QPACK_TOKEN__METHOD ? TF_METHOD
			       : token == NGHTTP3_QPACK_TOKEN__PATH ? TF_PATH
								    : TF_OTHER;
	return tstream_header(st, k, n.len, v.base, v.len) ? NGHTTP3_ERR_CALLBACK_FAILURE : 0;
}

static int on_end_headers(nghttp3_conn *ng, int64_t sid, int fin, void *ud, void *sud)
{
	(void)ng, (void)sid, (void)ud;
	struct tstream *st = sud;
	if (!st || st->state != TS_HEAD)
		return 0;
	if (fin)
		tstream_request_done(st);
	else
		st->state = TS_BODY;
	return 0;
}

static int on_end_stream(nghttp3_conn *ng, int64_t sid, void *ud, void *sud)
{
	(void)ng, (void)sid, (void)ud;
	struct tstream *st = sud;
	if (st && st->state <= TS_BODY)
		tstream_request_done(st);
	return 0;
}

/* A request body: discarded, its credit given back at once. */
static int on_data(nghttp3_conn *ng, int64_t sid, const uint8_t *data, size_t len, void *ud,
		   void *sud)
{
	(void)ng, (void)data, (void)sud;
	struct h3c *c = ud;
	c->last_act_ns = c->w->now;
	ngtcp2_conn_extend_max_stream_offset(c->q, sid, len);
	ngtcp2_conn_extend_max_offset(c->q, len);
	return 0;
}

static int on_deferred_consume(nghttp3_conn *ng, int64_t sid, size_t n, void *ud, void *sud)
{
	(void)ng, (void)sud;
	struct h3c *c = ud;
	ngtcp2_conn_extend_max_stream_offset(c->q, sid, n);
	ngtcp2_conn_extend_max_offset(c->q, n);
	return 0;
}

static int on_stream_close(nghttp3_conn *ng, int64_t sid, uint64_t code, void *ud, void *sud)
{
	(void)code, (void)ud;
	struct tstream *st = sud;
	if (st) {
		nghttp3_conn_set_stream_user_data(ng, sid, NULL);
		tstream_put(st);
	}
	return 0;
}

/* nghttp3 asks that the client stop sending on sid (STOP_SENDING). */
static int on_stop_sending(nghttp3_conn *ng, int64_t sid, uint64_t code, void *ud, void *sud)
{
	(void)ng, (void)sud;
	struct h3c *c = ud;
	return ngtcp2_conn_shutdown_stream_read(c->q, sid, code) ? NGHTTP3_ERR_CALLBACK_FAILURE : 0;
}

/* nghttp3 asks that sid be reset (RESET_STREAM). */
static int on_reset_stream(nghttp3_conn *ng, int64_t sid, uint64_t code, void *ud, void *sud)
{
	(void)ng, (void)sud;
	struct h3c *c = ud;
	return ngtcp2_conn_shutdown_stream_write(c->q, sid, code) ? NGHTTP3_ERR_CALLBACK_FAILURE
								  : 0;
}

static const nghttp3_callbacks h3_cbs = {
	.stream_close = on_stream_close,
	.recv_data = on_data,
	.deferred_consume = on_deferred_consume,
	.begin_headers = on_begin_headers,
	.recv_header = on_header,
	.end_headers = on_end_headers,
	.stop_sending = on_stop_sending,
	.end_stream = on_end_stream,
	.reset_stream = on_reset_stream,
};

/* ---- the session ---------------------------------------------------------- */

int h3_session_new(struct h3c *c)
{
	struct h3_worker *hw = c->w->h3;
	if (!hw->pool.w)
		tstream_pool_init(&hw->pool, c->w, &c->w->h3heap, &h3_ops);
	nghttp3_settings st;
	nghttp3_settings_default(&st);
	st.max_field_section_size = H3_HEADERS_CAP;
	st.qpack_max_dtable_capacity = 0; /* the client's fields: no dynamic table to keep */
	st.qpack_blocked_streams = 0;
	int rv = nghttp3_conn_server_new(&c->h3, &h3_cbs, &st, nghttp3_mem_default(), c);
	if (rv) {
		c->h3 = NULL;
		return rv;
	}
	int64_t ctrl, enc, dec;
	if ((rv = ngtcp2_conn_open_uni_stream(c->q, &ctrl, NULL)) != 0 ||
	    (rv = ngtcp2_conn_open_uni_stream(c->q, &enc, NULL)) != 0 ||
	    (rv = ngtcp2_conn_open_uni_stream(c->q, &dec, NULL)) != 0 ||
	    (rv = nghttp3_conn_bind_control_stream(c->h3, ctrl)) != 0 ||
	    (rv = nghttp3_conn_bind_qpack_streams(c->h3, enc, dec)) != 0) {
		nghttp3_conn_del(c->h3);
		c->h3 = NULL;
		return rv;
	}
	nghttp3_conn_set_max_client_streams_bidi(c->h3, c->w->t->max_streams);
	return 0;
}

void h3_session_free(struct h3c *c)
{
	while (c->s.head) {
		if (c->h3)
			nghttp3_conn_set_stream_user_data(c->h3, c->s.head->id, NULL);
		tstream_put(c->s.head);
	}
	if (c->h3)
		nghttp3_conn_del(c->h3);
	c->h3 = NULL;
}

void h3_worker_free_streams(struct worker *w)
{
	tstream_pool_free(&w->h3->pool);
}
