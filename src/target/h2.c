/* The embedded target server: HTTP/2 connections, over an nghttp2 server
 * session per connection (mem_recv / mem_send over the connection's own
 * buffers, so plain sockets and TLS, flushing, lingering and the idle and
 * write timeouts are conn.c's as for HTTP/1.1).
 *
 * Each request is a stream (tstream.c, shared with HTTP/3: its record from
 * a per-thread pool, made on demand and reused), answered as exec.c
 * answers an HTTP/1.1 request: the route match, the answer drawn from the
 * status mix, a rendered body, the CPU work, and a latency timer of its own
 * (w->sheap), so many requests of one connection wait at once and are
 * answered in the order their timers end. This file is HTTP/2's framing:
 * nghttp2's callbacks, the answers' header fields, the session over the
 * connection's buffers.
 *
 * Memory is bounded: at most max_streams streams per connection
 * (SETTINGS_MAX_CONCURRENT_STREAMS; nghttp2 refuses the ones above), the
 * budgets of a stream's request and answer as tstream.h states them (a
 * stream begun past the long :path budget is refused, REFUSED_STREAM), and
 * the input is taken in only while the output is below OUT_HIGH and nghttp2
 * holds few frames to send: a client that never reads stops being read,
 * and its connection is closed by the idle timeout of a blocked write. A
 * connection is idle when no stream frame (HEADERS, DATA) went either way:
 * PINGs and SETTINGS do not keep it open. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nghttp2/nghttp2.h>

#include "target/server_int.h"

#define H2_HEADERS_CAP TSTREAM_HEADERS_CAP
#define H2_SLICE 4096        /* input fed to nghttp2 at a time, between looks at the output */
#define H2_QUEUE_CAP 256     /* frames (not DATA) nghttp2 may hold before input waits */
#define H2_SESSION_BYTES 16384 /* about what an nghttp2 session holds (HPACK tables,
                                * buffers): counted as freed when one ends */

struct h2_plan {
	nghttp2_session_callbacks *cbs;
	nghttp2_option *opt;
	struct tstream_answers a; /* the plan's answers as header fields */
};

struct h2_sess {
	nghttp2_session *ng;
	struct conn *c;
	bool goaway; /* close_after: GOAWAY submitted */
};

static int session_setup(struct h2_plan *hp);

/* ---- the plan's answers as header fields ------------------------------ */

static nghttp2_nv nv_of(const char *name, size_t nl, const char *value, size_t vl, bool keep)
{
	nghttp2_nv v = {(uint8_t *)(uintptr_t)name, (uint8_t *)(uintptr_t)value, nl, vl,
	                keep ? NGHTTP2_NV_FLAG_NO_COPY_NAME | NGHTTP2_NV_FLAG_NO_COPY_VALUE
	                     : NGHTTP2_NV_FLAG_NONE};
	return v;
}

int target_h2_build(struct target *t)
{
	if (!t->h2)
		return 0;
	struct h2_plan *hp = calloc(1, sizeof *hp);
	if (!hp)
		return -ENOMEM;
	t->h2p = hp;
	int rc = tstream_answers_build(&hp->a, t->plan);
	return rc ? rc : session_setup(hp);
}

void target_h2_free_plan(struct target *t)
{
	struct h2_plan *hp = t->h2p;
	if (!hp)
		return;
	tstream_answers_free(&hp->a, t->plan);
	if (hp->cbs)
		nghttp2_session_callbacks_del(hp->cbs);
	if (hp->opt)
		nghttp2_option_del(hp->opt);
	free(hp);
	t->h2p = NULL;
}

/* ---- stream records ------------------------------------------------- */

#define SC(st) ((struct conn *)(st)->set->conn) /* a stream's connection */

static void mark_dirty(struct conn *c)
{
	if (c->h2_dirty)
		return;
	c->h2_dirty = true;
	c->dirty_next = c->w->h2_dirty;
	c->w->h2_dirty = c;
}

/* ---- answering ------------------------------------------------------ */

static ssize_t body_read(nghttp2_session *ng, int32_t id, uint8_t *buf, size_t len,
                         uint32_t *flags, nghttp2_data_source *src, void *ud)
{
	(void)ng;
	(void)id;
	(void)ud;
	struct tstream *st = src->ptr;
	size_t n = st->body_len - st->body_off;
	n = tstream_slow_take(st, n < len ? n : len);
	if (st->deferred)
		return NGHTTP2_ERR_DEFERRED; /* its timer resumes it */
	memcpy(buf, st->body + st->body_off, n);
	st->body_off += n;
	if (st->body_off == st->body_len)
		*flags |= NGHTTP2_DATA_FLAG_EOF;
	return (ssize_t)n;
}

/* st fails: its stream is reset (INTERNAL_ERROR). */
static void stream_reset(struct tstream *st)
{
	nghttp2_submit_rst_stream(SC(st)->h2->ng, NGHTTP2_FLAG_NONE, (int32_t)st->id,
				  NGHTTP2_INTERNAL_ERROR);
}

static void submit(struct tstream *st, const nghttp2_nv *nv, size_t n, bool body)
{
	nghttp2_data_provider prd = {.source = {.ptr = st}, .read_callback = body_read};
	st->state = TS_SENT;
	if (nghttp2_submit_response(SC(st)->h2->ng, (int32_t)st->id, nv, n, body ? &prd : NULL) !=
	    0)
		stream_reset(st);
}

/* The server's own error for st (400, 408, 431, 501). */
static void answer_canned(struct tstream *st, int status)
{
	struct worker *w = SC(st)->w;
	const struct tstream_canned *k = tstream_canned_of(&w->t->h2p->a, status);
	nghttp2_nv nv[3] = {
		nv_of(":status", 7, k->st, 3, true),
		nv_of("content-type", 12, "text/plain", 10, true),
		nv_of("content-length", 14, k->len, strlen(k->len), true),
	};
	st->body = k->body;
	st->body_len = st->head_req ? 0 : k->body_len;
	st->body_off = 0;
	stat_inc(&w->st.requests);
	SC(st)->nreq++;
	submit(st, nv, 3, st->body_len > 0);
}

/* The answer st->resp, now. */
static void answer(struct tstream *st)
{
	struct conn *c = SC(st);
	struct worker *w = c->w;
	const struct target_route *rt = st->rt;
	const struct target_resp *r = st->resp;
	const struct h2_plan *hp = w->t->h2p;
	c->nreq++;
	stat_inc(&w->st.requests);
	if (st->garbage) {
		/* HTTP/2's broken answer: the stream is reset */
		st->state = TS_SENT;
		stream_reset(st);
		stat_inc(&w->st.misbehaved);
		return;
	}
	const struct tstream_fields *h = tstream_fields_of(&hp->a, w->t->plan, rt, r);
	bool body = tstream_body_of(st);
	nghttp2_nv nv[TSTREAM_NV_MAX];
	size_t n = 0;
	nv[n++] = nv_of(":status", 7, h->status, 3, true);
	for (size_t i = 0; i < h->n; i++)
		nv[n++] = nv_of(h->f[i].name, h->f[i].nl, h->f[i].value, h->f[i].vl, true);
	char cl[24], timing[40];
	if (!r->no_body_allowed)
		nv[n++] = nv_of("content-length", 14, cl, target_fmt_u64(cl, st->body_len), false);
	if (rt && rt->server_timing)
		nv[n++] = nv_of("server-timing", 13, timing,
				target_fmt_timing(timing, clock_now_ns() - st->dispatch_ns), false);
	submit(st, nv, n, body);
	if (rt && rt->mis.close_after && c->nreq >= rt->mis.close_after && !c->h2->goaway) {
		/* the connection ends: the streams opened so far are answered */
		c->h2->goaway = true;
		nghttp2_submit_goaway(c->h2->ng, NGHTTP2_FLAG_NONE,
		                      nghttp2_session_get_last_proc_stream_id(c->h2->ng),
		                      NGHTTP2_NO_ERROR, NULL, 0);
		stat_inc(&w->st.misbehaved);
	}
}

static void stream_resume(struct tstream *st)
{
	nghttp2_session_resume_data(SC(st)->h2->ng, (int32_t)st->id);
}

static void stream_timed(struct tstream *st)
{
	mark_dirty(SC(st));
}

static const struct tstream_ops h2_ops = {
	.answer = answer,
	.canned = answer_canned,
	.resume = stream_resume,
	.reset = stream_reset,
	.timed = stream_timed,
};

/* ---- nghttp2 callbacks ------------------------------------------------ */

static int on_begin_headers(nghttp2_session *ng, const nghttp2_frame *f, void *ud)
{
	struct conn *c = ud;
	if (f->hd.type != NGHTTP2_HEADERS || f->headers.cat != NGHTTP2_HCAT_REQUEST)
		return 0;
	if (!tstream_may_begin(&c->w->h2pool, &c->h2s)) {
		/* the requests still coming hold enough already: not processed,
		 * the client may retry it later (its header block is decoded, not
		 * kept) */
		stat_inc(&c->w->st.bad_requests);
		if (nghttp2_submit_rst_stream(ng, NGHTTP2_FLAG_NONE, f->hd.stream_id,
		                              NGHTTP2_REFUSED_STREAM))
			return NGHTTP2_ERR_CALLBACK_FAILURE;
		return 0;
	}
	struct tstream *st = tstream_get(&c->w->h2pool, &c->h2s, f->hd.stream_id);
	if (!st)
		return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE; /* the stream is reset */
	nghttp2_session_set_stream_user_data(ng, f->hd.stream_id, st);
	return 0;
}

static int on_header(nghttp2_session *ng, const nghttp2_frame *f, const uint8_t *name,
                     size_t nl, const uint8_t *value, size_t vl, uint8_t flags, void *ud)
{
	(void)flags;
	(void)ud;
	if (f->hd.type != NGHTTP2_HEADERS || f->headers.cat != NGHTTP2_HCAT_REQUEST)
		return 0;
	struct tstream *st = nghttp2_session_get_stream_user_data(ng, f->hd.stream_id);
	if (!st)
		return 0;
	enum tstream_field k = nl == 7 && !memcmp(name, ":method", 7) ? TF_METHOD
			       : nl == 5 && !memcmp(name, ":path", 5) ? TF_PATH
								      : TF_OTHER;
	return tstream_header(st, k, nl, value, vl) ? NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE : 0;
}

static int on_frame_recv(nghttp2_session *ng, const nghttp2_frame *f, void *ud)
{
	struct conn *c = ud;
	if (f->hd.type != NGHTTP2_HEADERS && f->hd.type != NGHTTP2_DATA)
		return 0;
	c->last_io_ns = c->w->now; /* a request's frame: not idle (a PING is no activity) */
	struct tstream *st = nghttp2_session_get_stream_user_data(ng, f->hd.stream_id);
	if (!st || st->state > TS_BODY)
		return 0;
	if (f->hd.flags & NGHTTP2_FLAG_END_STREAM)
		tstream_request_done(st);
	else
		st->state = TS_BODY;
	return 0;
}

static int on_stream_close(nghttp2_session *ng, int32_t id, uint32_t code, void *ud)
{
	(void)code;
	(void)ud;
	struct tstream *st = nghttp2_session_get_stream_user_data(ng, id);
	if (st) {
		nghttp2_session_set_stream_user_data(ng, id, NULL);
		tstream_put(st);
	}
	return 0;
}

/* An answer's frame went out: not idle (a PING's ACK is no activity). */
static int on_frame_send(nghttp2_session *ng, const nghttp2_frame *f, void *ud)
{
	(void)ng;
	struct conn *c = ud;
	if (f->hd.type == NGHTTP2_HEADERS || f->hd.type == NGHTTP2_DATA)
		c->last_io_ns = c->w->now;
	return 0;
}

static int session_setup(struct h2_plan *hp)
{
	if (nghttp2_session_callbacks_new(&hp->cbs) != 0)
		return -ENOMEM;
	nghttp2_session_callbacks_set_on_begin_headers_callback(hp->cbs, on_begin_headers);
	nghttp2_session_callbacks_set_on_header_callback(hp->cbs, on_header);
	nghttp2_session_callbacks_set_on_frame_recv_callback(hp->cbs, on_frame_recv);
	nghttp2_session_callbacks_set_on_stream_close_callback(hp->cbs, on_stream_close);
	nghttp2_session_callbacks_set_on_frame_send_callback(hp->cbs, on_frame_send);
	if (nghttp2_option_new(&hp->opt) != 0)
		return -ENOMEM;
	nghttp2_option_set_no_closed_streams(hp->opt, 1);
	return 0;
}

/* ---- the connection ------------------------------------------------- */

int target_h2_start(struct conn *c)
{
	struct target *t = c->w->t;
	struct h2_sess *s = calloc(1, sizeof *s);
	if (!s)
		return -ENOMEM;
	if (!c->w->h2pool.w)
		tstream_pool_init(&c->w->h2pool, c->w, &c->w->sheap, &h2_ops);
	s->c = c;
	if (nghttp2_session_server_new2(&s->ng, t->h2p->cbs, c, t->h2p->opt) != 0) {
		free(s);
		return -ENOMEM;
	}
	c->h2 = s;
	c->h2s = (struct tstream_set){.conn = c};
	c->proto_known = true;
	c->req_start_ns = 0; /* a preface in pieces was waited for as a request */
	nghttp2_settings_entry set[] = {
		{NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS, t->max_streams},
		{NGHTTP2_SETTINGS_MAX_HEADER_LIST_SIZE, H2_HEADERS_CAP},
		{NGHTTP2_SETTINGS_NO_RFC7540_PRIORITIES, 1},
	};
	if (nghttp2_submit_settings(s->ng, NGHTTP2_FLAG_NONE, set, sizeof set / sizeof set[0]) != 0)
		return -ENOMEM;
	return 0;
}

void target_h2_close(struct conn *c)
{
	struct h2_sess *s = c->h2;
	while (c->h2s.head) {
		nghttp2_session_set_stream_user_data(s->ng, (int32_t)c->h2s.head->id, NULL);
		tstream_put(c->h2s.head);
	}
	nghttp2_session_del(s->ng);
	free(s);
	c->h2 = NULL;
	c->w->freed += H2_SESSION_BYTES;
}

/* Move what nghttp2 has to send into the output, until OUT_HIGH. A frame
 * larger than COPY_MAX is sent from nghttp2's buffer (c->ext), valid until
 * the next mem_send, which waits for it to be flushed. false: the session
 * failed (the caller closes c). */
static bool pump(struct conn *c, bool *made)
{
	nghttp2_session *ng = c->h2->ng;
	while (!c->ext && out_pending(c) <= OUT_HIGH) {
		const uint8_t *d;
		ssize_t n = nghttp2_session_mem_send(ng, &d);
		if (n < 0)
			return false;
		if (n == 0)
			break;
		*made = true;
		if ((size_t)n <= COPY_MAX && target_out_reserve(c, (size_t)n)) {
			out_put(c, d, (size_t)n);
		} else {
			c->ext = (const char *)d;
			c->ext_len = (size_t)n;
			c->ext_off = 0;
		}
	}
	return true;
}

int target_h2_run(struct conn *c)
{
	struct worker *w = c->w;
	nghttp2_session *ng = c->h2->ng;
	bool bound = false;
	for (;;) {
		bool made = false;
		if (!pump(c, &made))
			return -1;
		if (c->closing)
			break;
		if (c->ext || out_pending(c) > OUT_HIGH ||
		    (nghttp2_session_get_outbound_queue_size(ng) > H2_QUEUE_CAP && made)) {
			bound = true; /* let the output drain before taking more input */
			break;
		}
		uint32_t avail = c->in_len - c->in_off;
		if (avail == 0)
			break;
		uint32_t n = avail < H2_SLICE ? avail : H2_SLICE;
		ssize_t rv = nghttp2_session_mem_recv(ng, (const uint8_t *)c->in + c->in_off, n);
		if (rv < 0) {
			/* a connection error (bad preface, flood, protocol): nghttp2
			 * queued its GOAWAY; send that, then close */
			stat_inc(&w->st.bad_requests);
			c->in_off = c->in_len;
			c->closing = true;
			if (!pump(c, &made))
				return -1;
			break;
		}
		c->in_off += (uint32_t)rv;
	}
	if (!nghttp2_session_want_read(ng) && !nghttp2_session_want_write(ng) && !c->ext)
		c->closing = true; /* GOAWAY both ways and nothing left to answer */
	if (c->in_off == c->in_len)
		c->in_off = c->in_len = 0;
	else if (c->in_off > c->in_cap / 2) {
		memmove(c->in, c->in + c->in_off, c->in_len - c->in_off);
		c->in_len -= c->in_off;
		c->in_off = 0;
	}
	return bound ? 1 : 0;
}

void target_h2_timers(struct worker *w)
{
	tstream_run_timers(&w->h2pool);
}

void target_h2_worker_free(struct worker *w)
{
	tstream_pool_free(&w->h2pool);
}
