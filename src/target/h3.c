/* The embedded target server: HTTP/3 request streams, over an nghttp3 server
 * session per QUIC connection (quic.c carries its bytes).
 *
 * Each request is a stream record (struct h3_stream, from a per-thread pool,
 * made on demand and reused), answered as h2.c answers a stream: the route
 * match, the answer drawn from the status mix, a rendered body, the CPU
 * work, a latency timer of its own (w->h3heap), a slow body sent a piece
 * per interval, garbage as a reset stream (H3_INTERNAL_ERROR), close_after
 * as a GOAWAY.
 *
 * Memory is bounded as on HTTP/2: at most max_streams request streams at
 * once per connection (the transport's MAX_STREAMS, extended by one as
 * each ends), a request's header fields at most H3_HEADERS_CAP bytes (431
 * above; nghttp3 is told the same limit, and the QPACK dynamic table the
 * client may use is 0 bytes, so decoding holds nothing), long :path buffers
 * of incomplete requests at most H3_CONN_HELD_MAX a connection and
 * H3_THREAD_HELD_MAX a thread (431 past them), rendered answers at most
 * H3_CONN_DYN_MAX a connection and H3_THREAD_DYN_MAX a thread (503 past
 * them). Bodies are sent from where they are (the plan's wire bytes, the
 * stream's rendered buffer), never copied: what a client that never reads
 * holds is its streams' records and what ngtcp2 keeps in flight, within
 * its congestion window. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "target/h3_int.h"

#define H3_HEADERS_CAP H1REQ_HEADERS_CAP
#define H3_METHOD_CAP 16
#define H3_PATH_INIT 256
#define H3_KEEP_PATH 1024u
#define H3_KEEP_DYN (4 * TARGET_DYN_INIT)
#define H3_FREE_KEEP 1024
#define H3_NV_MAX (2 * TARGET_MAX_HEADERS + 8)
#define H3_TIMERS_PER_ROUND 4096
#define H3_CONN_HELD_MAX (64u << 10)   /* long :path bytes of a connection's requests */
#define H3_THREAD_HELD_MAX (16u << 20) /* ... of a thread's */
#define H3_CONN_DYN_MAX (1u << 20)     /* rendered answers a connection's streams hold */
#define H3_THREAD_DYN_MAX (64u << 20)  /* ... a thread's */

/* An answer's header fields (":status" first). */
struct h3_hdrs {
	nghttp3_nv nv[H3_NV_MAX];
	size_t n;
	char *names;
	char status[4];
};

struct h3_canned {
	int status;
	char st[12], len[12];
	char body[64];
	size_t body_len;
};

#define H3_N_CANNED 5
static const int h3_canned_status[H3_N_CANNED] = {400, 408, 431, 501, 503};

struct h3_plan {
	struct h3_hdrs **route; /* [route][variant] */
	struct h3_hdrs nf;
	struct h3_canned canned[H3_N_CANNED];
};

enum h3_st { ST_HEAD, ST_BODY, ST_WAIT, ST_SENT };

struct h3_stream {
	struct theap_node tn; /* first: its timer on w->h3heap */
	struct h3c *c;
	struct h3_stream *prev, *next;
	int64_t id;
	enum h3_st state;
	bool head_req, too_big, long_method, garbage, slow, deferred, held;
	uint8_t method_len;
	char method[H3_METHOD_CAP];
	char *path;
	uint32_t path_len, path_cap;
	uint32_t hdr_bytes;
	uint32_t dyn_held;
	const struct target_route *rt;
	const struct target_resp *resp;
	uint64_t dispatch_ns;
	const char *body;
	size_t body_len, body_off;
	size_t slow_budget;
	uint64_t slow_next_ns;
	struct target_dyn dyn;
};

/* ---- the plan's answers ------------------------------------------------ */

static nghttp3_nv nv3(const char *name, size_t nl, const char *value, size_t vl)
{
	return (nghttp3_nv){(uint8_t *)(uintptr_t)name, (uint8_t *)(uintptr_t)value, nl, vl,
			    NGHTTP3_NV_FLAG_NO_COPY_NAME | NGHTTP3_NV_FLAG_NO_COPY_VALUE};
}

static int hdrs_build(struct h3_hdrs *h, const struct target_resp *r)
{
	snprintf(h->status, sizeof h->status, "%03u", (unsigned)r->status % 1000u);
	h->n = 0;
	h->nv[h->n++] = nv3(":status", 7, h->status, 3);
	h->names = malloc(r->head_len + 1);
	if (!h->names)
		return -ENOMEM;
	struct target_field f[H3_NV_MAX];
	size_t n;
	int rc = target_head_fields(r, h->names, f, H3_NV_MAX - 3, &n);
	if (rc)
		return rc;
	for (size_t i = 0; i < n; i++)
		h->nv[h->n++] = nv3(f[i].name, f[i].nl, f[i].value, f[i].vl);
	return 0;
}

int target_h3_build(struct target *t)
{
	if (!t->quic)
		return 0;
	const struct target_plan *plan = t->plan;
	struct h3_plan *hp = calloc(1, sizeof *hp);
	if (!hp)
		return -ENOMEM;
	t->h3p = hp;
	hp->route = calloc(plan->n_routes ? plan->n_routes : 1, sizeof *hp->route);
	if (!hp->route)
		return -ENOMEM;
	int rc = hdrs_build(&hp->nf, &plan->not_found);
	for (size_t i = 0; rc == 0 && i < plan->n_routes; i++) {
		const struct target_route *rt = &plan->routes[i];
		hp->route[i] = calloc(rt->n_resps ? rt->n_resps : 1, sizeof *hp->route[i]);
		if (!hp->route[i])
			return -ENOMEM;
		for (size_t k = 0; rc == 0 && k < rt->n_resps; k++)
			rc = hdrs_build(&hp->route[i][k], &rt->resps[k]);
	}
	if (rc)
		return rc;
	for (int i = 0; i < H3_N_CANNED; i++) {
		struct h3_canned *k = &hp->canned[i];
		k->status = h3_canned_status[i];
		snprintf(k->st, sizeof k->st, "%d", k->status);
		int n = snprintf(k->body, sizeof k->body, "%d %s\n", k->status,
				 target_reason(k->status));
		k->body_len = (size_t)n;
		snprintf(k->len, sizeof k->len, "%d", n);
	}
	return 0;
}

void target_h3_free_plan(struct target *t)
{
	struct h3_plan *hp = t->h3p;
	if (!hp)
		return;
	if (hp->route)
		for (size_t i = 0; i < t->plan->n_routes; i++) {
			if (!hp->route[i])
				continue;
			for (size_t k = 0; k < t->plan->routes[i].n_resps; k++)
				free(hp->route[i][k].names);
			free(hp->route[i]);
		}
	free(hp->route);
	free(hp->nf.names);
	free(hp);
	t->h3p = NULL;
}

/* ---- stream records ----------------------------------------------------- */

static uint32_t path_weight(uint32_t cap)
{
	return cap > H3_KEEP_PATH ? cap : 0;
}

static struct h3_stream *stream_get(struct h3c *c, int64_t id)
{
	struct h3_worker *hw = c->w->h3;
	struct h3_stream *st = hw->free;
	if (st) {
		hw->free = st->next;
		hw->n_free--;
	} else {
		st = calloc(1, sizeof *st);
		if (!st)
			return NULL;
	}
	char *path = st->path;
	uint32_t path_cap = st->path_cap;
	struct target_dyn dyn = {st->dyn.buf, 0, st->dyn.cap};
	memset(st, 0, sizeof *st);
	st->path = path;
	st->path_cap = path_cap;
	st->dyn = dyn;
	theap_node_init(&st->tn);
	st->c = c;
	st->id = id;
	st->state = ST_HEAD;
	st->held = true;
	st->next = c->streams;
	if (c->streams)
		c->streams->prev = st;
	c->streams = st;
	c->n_streams++;
	return st;
}

static void stream_free(struct worker *w, struct h3_stream *st)
{
	w->freed += sizeof *st + st->path_cap + st->dyn.cap;
	free(st->path);
	free(st->dyn.buf);
	free(st);
}

static void path_release(struct h3_stream *st)
{
	struct h3c *c = st->c;
	if (!st->held)
		return;
	st->held = false;
	c->held -= path_weight(st->path_cap);
	c->w->h3->held -= path_weight(st->path_cap);
	if (st->path_cap > H3_KEEP_PATH) {
		c->w->freed += st->path_cap;
		free(st->path);
		st->path = NULL;
		st->path_cap = st->path_len = 0;
	}
}

static void stream_put(struct h3_stream *st)
{
	struct h3c *c = st->c;
	struct worker *w = c->w;
	struct h3_worker *hw = w->h3;
	theap_cancel(&w->h3heap, &st->tn);
	path_release(st);
	c->dyn -= st->dyn_held;
	hw->dyn -= st->dyn_held;
	st->dyn_held = 0;
	if (st->state == ST_WAIT || st->deferred)
		c->n_timed--;
	if (st->prev)
		st->prev->next = st->next;
	else
		c->streams = st->next;
	if (st->next)
		st->next->prev = st->prev;
	c->n_streams--;
	if (hw->n_free < H3_FREE_KEEP) {
		if (st->dyn.cap > H3_KEEP_DYN) {
			w->freed += st->dyn.cap;
			free(st->dyn.buf);
			st->dyn = (struct target_dyn){0};
		}
		st->next = hw->free;
		hw->free = st;
		hw->n_free++;
	} else {
		stream_free(w, st);
	}
}

static void stream_arm(struct h3_stream *st, uint64_t at)
{
	if (theap_arm(&st->c->w->h3heap, &st->tn, at) < 0)
		ngtcp2_conn_shutdown_stream(st->c->q, st->id, NGHTTP3_H3_INTERNAL_ERROR);
}

/* ---- answering ---------------------------------------------------------- */

static nghttp3_ssize body_read(nghttp3_conn *ng, int64_t sid, nghttp3_vec *vec, size_t veccnt,
			       uint32_t *flags, void *ud, void *sud)
{
	(void)ng, (void)sid, (void)ud;
	struct h3_stream *st = sud;
	if (!st || veccnt == 0) {
		*flags |= NGHTTP3_DATA_FLAG_EOF;
		return 0;
	}
	size_t n = st->body_len - st->body_off;
	if (st->slow) {
		uint64_t now = st->c->w->now;
		if (st->slow_budget == 0 && now >= st->slow_next_ns) {
			st->slow_budget = st->rt->mis.slow_bytes;
			st->slow_next_ns = now + st->rt->mis.slow_every_ns;
		}
		if (st->slow_budget == 0) {
			if (!st->deferred)
				st->c->n_timed++;
			st->deferred = true;
			stream_arm(st, st->slow_next_ns);
			return NGHTTP3_ERR_WOULDBLOCK;
		}
		n = n < st->slow_budget ? n : st->slow_budget;
		st->slow_budget -= n;
	}
	vec[0].base = (uint8_t *)(uintptr_t)(st->body + st->body_off);
	vec[0].len = n;
	st->body_off += n;
	if (st->body_off == st->body_len)
		*flags |= NGHTTP3_DATA_FLAG_EOF;
	return 1;
}

static void submit(struct h3_stream *st, const nghttp3_nv *nv, size_t n, bool body)
{
	nghttp3_data_reader dr = {.read_data = body_read};
	st->state = ST_SENT;
	st->c->last_act_ns = st->c->w->now;
	if (nghttp3_conn_submit_response(st->c->h3, st->id, nv, n, body ? &dr : NULL) != 0)
		ngtcp2_conn_shutdown_stream(st->c->q, st->id, NGHTTP3_H3_INTERNAL_ERROR);
}

static void answer_canned(struct h3_stream *st, int status)
{
	struct worker *w = st->c->w;
	const struct h3_plan *hp = w->t->h3p;
	const struct h3_canned *k = &hp->canned[0];
	for (int i = 0; i < H3_N_CANNED; i++)
		if (hp->canned[i].status == status)
			k = &hp->canned[i];
	nghttp3_nv nv[3] = {
		nv3(":status", 7, k->st, 3),
		nv3("content-type", 12, "text/plain", 10),
		nv3("content-length", 14, k->len, strlen(k->len)),
	};
	st->body = k->body;
	st->body_len = st->head_req ? 0 : k->body_len;
	st->body_off = 0;
	stat_inc(&w->st.requests);
	st->c->nreq++;
	submit(st, nv, 3, st->body_len > 0);
}

static void answer(struct h3_stream *st)
{
	struct h3c *c = st->c;
	struct worker *w = c->w;
	const struct target_route *rt = st->rt;
	const struct target_resp *r = st->resp;
	const struct h3_plan *hp = w->t->h3p;
	c->nreq++;
	stat_inc(&w->st.requests);
	if (st->garbage) {
		/* HTTP/3's broken answer: the stream is reset */
		st->state = ST_SENT;
		c->last_act_ns = w->now;
		ngtcp2_conn_shutdown_stream(c->q, st->id, NGHTTP3_H3_INTERNAL_ERROR);
		stat_inc(&w->st.misbehaved);
		return;
	}
	const struct h3_hdrs *h = rt ? &hp->route[rt - w->t->plan->routes][r - rt->resps] : &hp->nf;
	bool dynamic = r->wire == NULL;
	st->body = dynamic ? st->dyn.buf : r->wire + r->wire_body_off;
	st->body_len = dynamic ? st->dyn.len : r->wire_len - r->wire_body_off;
	st->body_off = 0;
	nghttp3_nv nv[H3_NV_MAX];
	memcpy(nv, h->nv, h->n * sizeof nv[0]);
	size_t n = h->n;
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
	bool body = !st->head_req && !r->no_body_allowed && st->body_len > 0;
	if (body && rt && rt->mis.slow_bytes) {
		st->slow = true;
		st->slow_budget = rt->mis.slow_bytes;
		st->slow_next_ns = w->now + rt->mis.slow_every_ns;
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

static void request_done(struct h3_stream *st)
{
	struct h3c *c = st->c;
	struct worker *w = c->w;
	theap_cancel(&w->h3heap, &st->tn); /* its request timeout */
	st->head_req = st->method_len == 4 && !memcmp(st->method, "HEAD", 4);
	if (st->too_big || st->long_method || !st->method_len) {
		path_release(st);
		stat_inc(&w->st.bad_requests);
		answer_canned(st, st->too_big ? 431 : st->long_method ? 501 : 400);
		return;
	}
	const char *path = st->path ? st->path : "", *query = NULL;
	size_t plen = st->path_len, qlen = 0;
	const char *q = memchr(path, '?', plen);
	if (q) {
		query = q + 1;
		qlen = plen - (size_t)(query - path);
		plen = (size_t)(q - path);
	}
	const struct target_route *rt =
		target_plan_match(w->t->plan, st->method, st->method_len, path, plen);
	st->rt = rt;
	st->resp = target_choose(w, rt, &st->garbage, &st->dyn, query, qlen);
	path_release(st);
	if (st->dyn.len) {
		if (c->dyn + st->dyn.cap > H3_CONN_DYN_MAX ||
		    w->h3->dyn + st->dyn.cap > H3_THREAD_DYN_MAX) {
			w->freed += st->dyn.cap;
			free(st->dyn.buf);
			st->dyn = (struct target_dyn){0};
			answer_canned(st, 503);
			return;
		}
		st->dyn_held = st->dyn.cap;
		c->dyn += st->dyn_held;
		w->h3->dyn += st->dyn_held;
	}
	if (!rt || rt->simple) {
		answer(st);
		return;
	}
	uint64_t ready = target_ready_at(w, rt, &st->dispatch_ns);
	if (ready > w->now) {
		st->state = ST_WAIT;
		c->n_timed++;
		stream_arm(st, ready);
		return;
	}
	answer(st);
}

static void stream_timer(struct h3_stream *st)
{
	struct h3c *c = st->c;
	struct worker *w = c->w;
	if (st->state == ST_WAIT) {
		c->n_timed--;
		answer(st);
	} else if (st->state == ST_SENT) {
		if (st->deferred) {
			c->n_timed--;
			st->deferred = false;
			nghttp3_conn_resume_stream(c->h3, st->id);
		}
	} else {
		/* the request did not arrive whole within the plan's request timeout */
		path_release(st);
		stat_inc(&w->st.timeouts);
		answer_canned(st, 408);
	}
	h3_dirty(c);
}

void h3_stream_timers(struct worker *w)
{
	for (int i = 0; i < H3_TIMERS_PER_ROUND; i++) {
		struct theap_node *n = theap_pop_expired(&w->h3heap, w->now);
		if (!n)
			break;
		stream_timer((struct h3_stream *)n);
	}
}

/* ---- nghttp3 callbacks ---------------------------------------------------- */

static int on_begin_headers(nghttp3_conn *ng, int64_t sid, void *ud, void *sud)
{
	(void)sud;
	struct h3c *c = ud;
	struct h3_stream *st = stream_get(c, sid);
	if (!st)
		return NGHTTP3_ERR_CALLBACK_FAILURE;
	nghttp3_conn_set_stream_user_data(ng, sid, st);
	c->last_act_ns = c->w->now;
	stream_arm(st, c->w->now + c->w->t->plan->request_timeout_ns);
	return 0;
}

static int on_header(nghttp3_conn *ng, int64_t sid, int32_t token, nghttp3_rcbuf *name,
		     nghttp3_rcbuf *value, uint8_t flags, void *ud, void *sud)
{
	(void)ng, (void)sid, (void)flags, (void)ud;
	struct h3_stream *st = sud;
	if (!st || st->too_big || st->state != ST_HEAD)
		return 0;
	nghttp3_vec n = nghttp3_rcbuf_get_buf(name), v = nghttp3_rcbuf_get_buf(value);
	st->hdr_bytes += (uint32_t)(n.len + v.len + 32);
	if (st->hdr_bytes > H3_HEADERS_CAP) {
		st->too_big = true; /* 431 once the request ends; nothing more is kept */
		return 0;
	}
	if (token == NGHTTP3_QPACK_TOKEN__METHOD) {
		if (v.len >= H3_METHOD_CAP) {
			st->long_method = true;
		} else {
			memcpy(st->method, v.base, v.len);
			st->method_len = (uint8_t)v.len;
		}
	} else if (token == NGHTTP3_QPACK_TOKEN__PATH) {
		if (v.len > st->path_cap) {
			struct h3c *c = st->c;
			struct h3_worker *hw = c->w->h3;
			uint32_t cap = st->path_cap ? st->path_cap : H3_PATH_INIT;
			while (cap < v.len)
				cap *= 2;
			uint32_t more = path_weight(cap) - path_weight(st->path_cap);
			if (c->held + more > H3_CONN_HELD_MAX ||
			    hw->held + more > H3_THREAD_HELD_MAX) {
				st->too_big = true; /* 431, as for header fields over the cap */
				return 0;
			}
			char *p = realloc(st->path, cap);
			if (!p)
				return NGHTTP3_ERR_CALLBACK_FAILURE;
			st->path = p;
			st->path_cap = cap;
			c->held += more;
			hw->held += more;
		}
		memcpy(st->path, v.base, v.len);
		st->path_len = (uint32_t)v.len;
	}
	return 0;
}

static int on_end_headers(nghttp3_conn *ng, int64_t sid, int fin, void *ud, void *sud)
{
	(void)ng, (void)sid, (void)ud;
	struct h3_stream *st = sud;
	if (!st || st->state != ST_HEAD)
		return 0;
	if (fin)
		request_done(st);
	else
		st->state = ST_BODY;
	return 0;
}

static int on_end_stream(nghttp3_conn *ng, int64_t sid, void *ud, void *sud)
{
	(void)ng, (void)sid, (void)ud;
	struct h3_stream *st = sud;
	if (st && st->state <= ST_BODY)
		request_done(st);
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
	struct h3_stream *st = sud;
	if (st) {
		nghttp3_conn_set_stream_user_data(ng, sid, NULL);
		stream_put(st);
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
	while (c->streams) {
		if (c->h3)
			nghttp3_conn_set_stream_user_data(c->h3, c->streams->id, NULL);
		stream_put(c->streams);
	}
	if (c->h3)
		nghttp3_conn_del(c->h3);
	c->h3 = NULL;
}

void h3_worker_free_streams(struct worker *w)
{
	struct h3_worker *hw = w->h3;
	while (hw->free) {
		struct h3_stream *st = hw->free;
		hw->free = st->next;
		stream_free(w, st);
	}
	hw->n_free = 0;
}
