/* The embedded target server: HTTP/2 connections, over an nghttp2 server
 * session per connection (mem_recv / mem_send over the connection's own
 * buffers, so plain sockets and TLS, flushing, lingering and the idle and
 * write timeouts are conn.c's as for HTTP/1.1).
 *
 * Each request is a stream record of its own (struct h2_stream, from a
 * per-thread pool, made on demand and reused), answered as exec.c answers an
 * HTTP/1.1 request: the route match, the answer drawn from the status mix, a
 * rendered body, the CPU work, and a latency timer of its own (w->sheap), so
 * many requests of one connection wait at once and are answered in the order
 * their timers end.
 *
 * Memory is bounded: at most max_streams streams per connection
 * (SETTINGS_MAX_CONCURRENT_STREAMS; nghttp2 refuses the ones above), a
 * request's header fields at most H2_HEADERS_CAP bytes (431 above), the
 * long :path buffers (over H2_KEEP_PATH) held by streams whose request is
 * still coming at most H2_CONN_HELD_MAX a connection and H2_THREAD_HELD_MAX
 * a thread (a stream begun past them is refused, REFUSED_STREAM; a :path
 * that would pass them gets 431), a long :path freed as soon as its request
 * is whole, the
 * rendered answers (templates, kv) its streams hold at most conn_dyn_max()
 * a connection and H2_THREAD_DYN_MAX a thread (past them: 503), and the
 * input is taken in only while the output is below OUT_HIGH and nghttp2
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

#define H2_HEADERS_CAP H1REQ_HEADERS_CAP /* a request's header fields, counted as
                                          * SETTINGS_MAX_HEADER_LIST_SIZE counts them */
#define H2_SLICE 4096        /* input fed to nghttp2 at a time, between looks at the output */
#define H2_QUEUE_CAP 256     /* frames (not DATA) nghttp2 may hold before input waits */
#define H2_PATH_INIT 256     /* first size of a stream's :path buffer */
#define H2_METHOD_CAP 16     /* longest method taken (longer: 501) */
#define H2_FREE_KEEP 1024    /* stream records kept for reuse per thread */
#define H2_KEEP_PATH 1024u   /* a kept record keeps a :path buffer up to this size */
#define H2_KEEP_DYN (4 * TARGET_DYN_INIT) /* and a rendered-body buffer up to this */
#define H2_NV_MAX (2 * TARGET_MAX_HEADERS + 8) /* header fields of one answer */
#define H2_TIMERS_PER_ROUND 4096
#define H2_CONN_HELD_MAX (4 * H2_HEADERS_CAP) /* long :path bytes a connection's
                                               * incomplete requests may hold */
#define H2_THREAD_HELD_MAX (16u << 20)        /* ... and a thread's, over its connections */
#define H2_CONN_DYN_MAX (4 * TARGET_DYN_CAP)  /* rendered answers a connection's streams hold, */
#define H2_STREAM_DYN (2 * TARGET_DYN_INIT)   /* or this much a stream if that is more */
#define H2_THREAD_DYN_MAX (64u << 20)         /* ... and a thread's */
#define H2_SESSION_BYTES 16384 /* about what an nghttp2 session holds (HPACK tables,
                                * buffers): counted as freed when one ends */

/* An answer's header fields, from its HTTP/1.1 head: ":status", then the
 * head's fields with lower-case names; the connection-specific ones
 * (Connection, Keep-Alive, ...) that HTTP/2 forbids are left out. */
struct h2_hdrs {
	nghttp2_nv nv[H2_NV_MAX];
	size_t n;
	char *names; /* the lower-case names, owned */
	char status[4];
};

/* The server's own errors over HTTP/2: status, text/plain, a short body. */
struct h2_canned {
	int status;
	char st[12], len[12];
	char body[64];
	size_t body_len;
};

#define H2_N_CANNED 5
static const int h2_canned_status[H2_N_CANNED] = {400, 408, 431, 501, 503};

struct h2_plan {
	nghttp2_session_callbacks *cbs;
	nghttp2_option *opt;
	struct h2_hdrs **route; /* [route][variant] */
	struct h2_hdrs nf;      /* the plan's 404 */
	struct h2_canned canned[H2_N_CANNED];
};

enum h2_st {
	ST_HEAD,  /* reading the request's header fields */
	ST_BODY,  /* reading (discarding) its body */
	ST_WAIT,  /* answered later: its latency timer runs */
	ST_SENT,  /* answer submitted; the record lives until nghttp2 closes the stream */
};

struct h2_stream {
	struct theap_node tn; /* first: the timer node leads to the stream */
	struct conn *c;
	struct h2_stream *prev, *next; /* the session's streams, or the free list (next) */
	int32_t id;
	enum h2_st state;
	bool head_req, too_big, long_method, garbage;
	bool slow, deferred;
	bool held;         /* its :path is held (its request is still coming): path_weight */
	uint32_t dyn_held; /* its rendered answer's capacity, counted in the budgets */
	uint8_t method_len;
	char method[H2_METHOD_CAP];
	char *path;
	uint32_t path_len, path_cap;
	uint32_t hdr_bytes;
	uint64_t begin_ns; /* its HEADERS began: the request timeout counts from here */
	const struct target_route *rt;
	const struct target_resp *resp;
	uint64_t dispatch_ns, ready_ns;
	const char *body;
	size_t body_len, body_off;
	size_t slow_budget;
	uint64_t slow_next_ns;
	struct target_dyn dyn;
};

struct h2_sess {
	nghttp2_session *ng;
	struct conn *c;
	struct h2_stream *streams;
	bool goaway; /* close_after: GOAWAY submitted */
};

static int session_setup(struct h2_plan *hp);

/* ---- the plan's answers as header fields ------------------------------ */

static bool hop_by_hop(const char *n, size_t l)
{
	static const char *const names[] = {"connection", "keep-alive", "proxy-connection",
	                                    "transfer-encoding", "upgrade", "content-length"};
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		if (strlen(names[i]) == l && !memcmp(names[i], n, l))
			return true;
	return false;
}

static nghttp2_nv nv_of(const char *name, size_t nl, const char *value, size_t vl, bool keep)
{
	nghttp2_nv v = {(uint8_t *)(uintptr_t)name, (uint8_t *)(uintptr_t)value, nl, vl,
	                keep ? NGHTTP2_NV_FLAG_NO_COPY_NAME | NGHTTP2_NV_FLAG_NO_COPY_VALUE
	                     : NGHTTP2_NV_FLAG_NONE};
	return v;
}

int target_head_fields(const struct target_resp *r, char *names, struct target_field *f, size_t cap,
		       size_t *n)
{
	*n = 0;
	const char *p = memchr(r->head, '\n', r->head_len);
	const char *end = r->head + r->head_len;
	char *nm = names;
	for (p = p ? p + 1 : end; p < end;) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));
		if (!eol)
			eol = end;
		const char *colon = memchr(p, ':', (size_t)(eol - p));
		if (colon) {
			size_t nl = (size_t)(colon - p);
			const char *v = colon + 1, *ve = eol;
			while (v < ve && (*v == ' ' || *v == '\t'))
				v++;
			while (ve > v && (ve[-1] == '\r' || ve[-1] == ' ' || ve[-1] == '\t'))
				ve--;
			for (size_t i = 0; i < nl; i++)
				nm[i] = (char)(p[i] >= 'A' && p[i] <= 'Z' ? p[i] + 32 : p[i]);
			if (!hop_by_hop(nm, nl)) {
				if (*n >= cap)
					return -E2BIG;
				f[(*n)++] = (struct target_field){nm, v, nl, (size_t)(ve - v)};
				nm += nl;
			}
		}
		p = eol + 1;
	}
	return 0;
}

/* r->head is "HTTP/1.1 S R\r\n" then "Name: value\r\n" lines. */
static int hdrs_build(struct h2_hdrs *h, const struct target_resp *r)
{
	snprintf(h->status, sizeof h->status, "%03u", (unsigned)r->status % 1000u);
	h->n = 0;
	h->nv[h->n++] = nv_of(":status", 7, h->status, 3, true);
	h->names = malloc(r->head_len + 1);
	if (!h->names)
		return -ENOMEM;
	struct target_field f[H2_NV_MAX];
	size_t n;
	/* room for content-length, server-timing */
	int rc = target_head_fields(r, h->names, f, H2_NV_MAX - 3, &n);
	if (rc)
		return rc;
	for (size_t i = 0; i < n; i++)
		h->nv[h->n++] = nv_of(f[i].name, f[i].nl, f[i].value, f[i].vl, true);
	return 0;
}

int target_h2_build(struct target *t)
{
	if (!t->h2)
		return 0;
	const struct target_plan *plan = t->plan;
	struct h2_plan *hp = calloc(1, sizeof *hp);
	if (!hp)
		return -ENOMEM;
	t->h2p = hp;
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
	for (int i = 0; i < H2_N_CANNED; i++) {
		struct h2_canned *k = &hp->canned[i];
		k->status = h2_canned_status[i];
		snprintf(k->st, sizeof k->st, "%d", k->status);
		int n = snprintf(k->body, sizeof k->body, "%d %s\n", k->status, target_reason(k->status));
		k->body_len = (size_t)n;
		snprintf(k->len, sizeof k->len, "%d", n);
	}
	return session_setup(hp);
}

void target_h2_free_plan(struct target *t)
{
	struct h2_plan *hp = t->h2p;
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
	if (hp->cbs)
		nghttp2_session_callbacks_del(hp->cbs);
	if (hp->opt)
		nghttp2_option_del(hp->opt);
	free(hp);
	t->h2p = NULL;
}

/* ---- stream records -------------------------------------------------- */

static struct h2_stream *stream_get(struct conn *c, int32_t id)
{
	struct worker *w = c->w;
	struct h2_stream *st = w->h2_free;
	if (st) {
		w->h2_free = st->next;
		w->h2_n_free--;
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
	st->begin_ns = w->now;
	st->held = true; /* a kept buffer is short: it weighs nothing */
	struct h2_sess *s = c->h2;
	st->next = s->streams;
	if (s->streams)
		s->streams->prev = st;
	s->streams = st;
	c->h2_streams++;
	return st;
}

static void stream_free(struct worker *w, struct h2_stream *st)
{
	w->freed += sizeof *st + st->path_cap + st->dyn.cap;
	free(st->path);
	free(st->dyn.buf);
	free(st);
}

/* What a :path buffer of cap bytes weighs in the budgets: a short one (as
 * kept for reuse) nothing, so that streams with ordinary paths are never
 * refused; a long one its size. */
static uint32_t path_weight(uint32_t cap) { return cap > H2_KEEP_PATH ? cap : 0; }

/* st's request is whole (or given up on): its :path is no longer held, and a
 * long one is freed now rather than while the answer waits (the route and
 * the query were taken from it). */
static void path_release(struct h2_stream *st)
{
	struct conn *c = st->c;
	if (!st->held)
		return;
	st->held = false;
	c->h2_held -= path_weight(st->path_cap);
	c->w->h2_held -= path_weight(st->path_cap);
	if (st->path_cap > H2_KEEP_PATH) {
		c->w->freed += st->path_cap;
		free(st->path);
		st->path = NULL;
		st->path_cap = st->path_len = 0;
	}
}

static void stream_put(struct h2_stream *st)
{
	struct conn *c = st->c;
	struct worker *w = c->w;
	struct h2_sess *s = c->h2;
	theap_cancel(&w->sheap, &st->tn);
	path_release(st);
	c->h2_dyn -= st->dyn_held;
	w->h2_dyn -= st->dyn_held;
	st->dyn_held = 0;
	if (st->state == ST_WAIT || st->deferred)
		c->h2_timed--;
	if (st->prev)
		st->prev->next = st->next;
	else
		s->streams = st->next;
	if (st->next)
		st->next->prev = st->prev;
	c->h2_streams--;
	if (w->h2_n_free < H2_FREE_KEEP) {
		/* kept small: a few large answers do not pin memory in the pool */
		if (st->dyn.cap > H2_KEEP_DYN) {
			w->freed += st->dyn.cap;
			free(st->dyn.buf);
			st->dyn = (struct target_dyn){0};
		}
		st->next = w->h2_free;
		w->h2_free = st;
		w->h2_n_free++;
	} else {
		stream_free(w, st);
	}
}

static void mark_dirty(struct conn *c)
{
	if (c->h2_dirty)
		return;
	c->h2_dirty = true;
	c->dirty_next = c->w->h2_dirty;
	c->w->h2_dirty = c;
}

static void stream_arm(struct h2_stream *st, uint64_t at)
{
	if (theap_arm(&st->c->w->sheap, &st->tn, at) < 0)
		nghttp2_submit_rst_stream(st->c->h2->ng, NGHTTP2_FLAG_NONE, st->id,
		                          NGHTTP2_INTERNAL_ERROR);
}

/* ---- answering ------------------------------------------------------ */

static ssize_t body_read(nghttp2_session *ng, int32_t id, uint8_t *buf, size_t len,
                         uint32_t *flags, nghttp2_data_source *src, void *ud)
{
	(void)ng;
	(void)id;
	(void)ud;
	struct h2_stream *st = src->ptr;
	size_t n = st->body_len - st->body_off;
	n = n < len ? n : len;
	if (st->slow) {
		uint64_t now = st->c->w->now;
		if (st->slow_budget == 0 && now >= st->slow_next_ns) {
			st->slow_budget = st->rt->mis.slow_bytes;
			st->slow_next_ns = now + st->rt->mis.slow_every_ns;
		}
		if (st->slow_budget == 0) {
			if (!st->deferred)
				st->c->h2_timed++;
			st->deferred = true;
			stream_arm(st, st->slow_next_ns);
			return NGHTTP2_ERR_DEFERRED;
		}
		n = n < st->slow_budget ? n : st->slow_budget;
		st->slow_budget -= n;
	}
	memcpy(buf, st->body + st->body_off, n);
	st->body_off += n;
	if (st->body_off == st->body_len)
		*flags |= NGHTTP2_DATA_FLAG_EOF;
	return (ssize_t)n;
}

static void submit(struct h2_stream *st, const nghttp2_nv *nv, size_t n, bool body)
{
	nghttp2_data_provider prd = {.source = {.ptr = st}, .read_callback = body_read};
	st->state = ST_SENT;
	if (nghttp2_submit_response(st->c->h2->ng, st->id, nv, n, body ? &prd : NULL) != 0)
		nghttp2_submit_rst_stream(st->c->h2->ng, NGHTTP2_FLAG_NONE, st->id,
		                          NGHTTP2_INTERNAL_ERROR);
}

/* The server's own error for st (400, 408, 431, 501). */
static void answer_canned(struct h2_stream *st, int status)
{
	struct worker *w = st->c->w;
	const struct h2_plan *hp = w->t->h2p;
	const struct h2_canned *k = &hp->canned[0];
	for (int i = 0; i < H2_N_CANNED; i++)
		if (hp->canned[i].status == status)
			k = &hp->canned[i];
	nghttp2_nv nv[3] = {
		nv_of(":status", 7, k->st, 3, true),
		nv_of("content-type", 12, "text/plain", 10, true),
		nv_of("content-length", 14, k->len, strlen(k->len), true),
	};
	st->body = k->body;
	st->body_len = st->head_req ? 0 : k->body_len;
	st->body_off = 0;
	stat_inc(&w->st.requests);
	st->c->nreq++;
	submit(st, nv, 3, st->body_len > 0);
}

/* The answer st->resp, now. */
static void answer(struct h2_stream *st)
{
	struct conn *c = st->c;
	struct worker *w = c->w;
	const struct target_route *rt = st->rt;
	const struct target_resp *r = st->resp;
	const struct h2_plan *hp = w->t->h2p;
	c->nreq++;
	stat_inc(&w->st.requests);
	if (st->garbage) {
		/* HTTP/2's broken answer: the stream is reset */
		st->state = ST_SENT;
		nghttp2_submit_rst_stream(c->h2->ng, NGHTTP2_FLAG_NONE, st->id, NGHTTP2_INTERNAL_ERROR);
		stat_inc(&w->st.misbehaved);
		return;
	}
	const struct h2_hdrs *h = rt ? &hp->route[rt - w->t->plan->routes][r - rt->resps] : &hp->nf;
	bool dynamic = r->wire == NULL;
	st->body = dynamic ? st->dyn.buf : r->wire + r->wire_body_off;
	st->body_len = dynamic ? st->dyn.len : r->wire_len - r->wire_body_off;
	st->body_off = 0;
	nghttp2_nv nv[H2_NV_MAX];
	memcpy(nv, h->nv, h->n * sizeof nv[0]);
	size_t n = h->n;
	char cl[24], timing[40];
	if (!r->no_body_allowed)
		nv[n++] = nv_of("content-length", 14, cl, target_fmt_u64(cl, st->body_len), false);
	if (rt && rt->server_timing)
		nv[n++] = nv_of("server-timing", 13, timing,
		                target_fmt_timing(timing, clock_now_ns() - st->dispatch_ns), false);
	bool body = !st->head_req && !r->no_body_allowed && st->body_len > 0;
	if (body && rt && rt->mis.slow_bytes) {
		st->slow = true;
		st->slow_budget = rt->mis.slow_bytes;
		st->slow_next_ns = w->now + rt->mis.slow_every_ns;
	}
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

/* The bytes of rendered answers a connection's streams may hold: a few of
 * the largest, or a small one on each stream it may have. */
static size_t conn_dyn_max(const struct target *t)
{
	size_t per_stream = (size_t)t->max_streams * H2_STREAM_DYN;
	return per_stream > H2_CONN_DYN_MAX ? per_stream : H2_CONN_DYN_MAX;
}

/* The whole request of st has arrived. */
static void request_done(struct h2_stream *st)
{
	struct conn *c = st->c;
	struct worker *w = c->w;
	theap_cancel(&w->sheap, &st->tn); /* its request timeout */
	st->head_req = st->method_len == 4 && !memcmp(st->method, "HEAD", 4);
	if (st->too_big || st->long_method) {
		path_release(st);
		stat_inc(&w->st.bad_requests);
		answer_canned(st, st->too_big ? 431 : 501);
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
		/* a rendered answer, held until it is sent: within the budgets,
		 * else the server is too busy for it (503) */
		if (c->h2_dyn + st->dyn.cap > conn_dyn_max(w->t) ||
		    w->h2_dyn + st->dyn.cap > H2_THREAD_DYN_MAX) {
			w->freed += st->dyn.cap;
			free(st->dyn.buf);
			st->dyn = (struct target_dyn){0};
			answer_canned(st, 503);
			return;
		}
		st->dyn_held = st->dyn.cap;
		c->h2_dyn += st->dyn_held;
		w->h2_dyn += st->dyn_held;
	}
	if (!rt || rt->simple) {
		answer(st);
		return;
	}
	uint64_t ready = target_ready_at(w, rt, &st->dispatch_ns);
	if (ready > w->now) {
		st->ready_ns = ready;
		st->state = ST_WAIT;
		c->h2_timed++;
		stream_arm(st, ready);
		return;
	}
	answer(st);
}

static void stream_timer(struct h2_stream *st)
{
	struct conn *c = st->c;
	struct worker *w = c->w;
	if (st->state == ST_WAIT) {
		c->h2_timed--;
		answer(st);
	} else if (st->state == ST_SENT) {
		if (st->deferred) {
			c->h2_timed--;
			st->deferred = false;
			nghttp2_session_resume_data(c->h2->ng, st->id);
		}
	} else {
		/* the request did not arrive whole within the plan's request timeout */
		path_release(st);
		stat_inc(&w->st.timeouts);
		answer_canned(st, 408);
	}
	mark_dirty(c);
}

/* ---- nghttp2 callbacks ------------------------------------------------ */

static int on_begin_headers(nghttp2_session *ng, const nghttp2_frame *f, void *ud)
{
	struct conn *c = ud;
	if (f->hd.type != NGHTTP2_HEADERS || f->headers.cat != NGHTTP2_HCAT_REQUEST)
		return 0;
	if (c->h2_held >= H2_CONN_HELD_MAX || c->w->h2_held >= H2_THREAD_HELD_MAX) {
		/* the requests still coming hold enough already: not processed,
		 * the client may retry it later (its header block is decoded, not
		 * kept) */
		stat_inc(&c->w->st.bad_requests);
		if (nghttp2_submit_rst_stream(ng, NGHTTP2_FLAG_NONE, f->hd.stream_id,
		                              NGHTTP2_REFUSED_STREAM))
			return NGHTTP2_ERR_CALLBACK_FAILURE;
		return 0;
	}
	struct h2_stream *st = stream_get(c, f->hd.stream_id);
	if (!st)
		return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE; /* the stream is reset */
	nghttp2_session_set_stream_user_data(ng, f->hd.stream_id, st);
	stream_arm(st, st->begin_ns + c->w->t->plan->request_timeout_ns);
	return 0;
}

static int on_header(nghttp2_session *ng, const nghttp2_frame *f, const uint8_t *name,
                     size_t nl, const uint8_t *value, size_t vl, uint8_t flags, void *ud)
{
	(void)flags;
	(void)ud;
	if (f->hd.type != NGHTTP2_HEADERS || f->headers.cat != NGHTTP2_HCAT_REQUEST)
		return 0;
	struct h2_stream *st = nghttp2_session_get_stream_user_data(ng, f->hd.stream_id);
	if (!st || st->too_big)
		return 0;
	st->hdr_bytes += (uint32_t)(nl + vl + 32);
	if (st->hdr_bytes > H2_HEADERS_CAP) {
		st->too_big = true; /* 431 once the block ends; nothing more is kept */
		return 0;
	}
	if (nl == 7 && !memcmp(name, ":method", 7)) {
		if (vl >= H2_METHOD_CAP) {
			st->long_method = true;
		} else {
			memcpy(st->method, value, vl);
			st->method_len = (uint8_t)vl;
		}
	} else if (nl == 5 && !memcmp(name, ":path", 5)) {
		if (vl > st->path_cap) {
			struct conn *c = st->c;
			uint32_t cap = st->path_cap ? st->path_cap : H2_PATH_INIT;
			while (cap < vl)
				cap *= 2;
			uint32_t more = path_weight(cap) - path_weight(st->path_cap);
			if (c->h2_held + more > H2_CONN_HELD_MAX ||
			    c->w->h2_held + more > H2_THREAD_HELD_MAX) {
				st->too_big = true; /* 431, as for a header list over the cap */
				return 0;
			}
			char *p = realloc(st->path, cap);
			if (!p)
				return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
			st->path = p;
			st->path_cap = cap;
			c->h2_held += more;
			c->w->h2_held += more;
		}
		memcpy(st->path, value, vl);
		st->path_len = (uint32_t)vl;
	}
	return 0;
}

static int on_frame_recv(nghttp2_session *ng, const nghttp2_frame *f, void *ud)
{
	struct conn *c = ud;
	if (f->hd.type != NGHTTP2_HEADERS && f->hd.type != NGHTTP2_DATA)
		return 0;
	c->last_io_ns = c->w->now; /* a request's frame: not idle (a PING is no activity) */
	struct h2_stream *st = nghttp2_session_get_stream_user_data(ng, f->hd.stream_id);
	if (!st || st->state > ST_BODY)
		return 0;
	if (f->hd.flags & NGHTTP2_FLAG_END_STREAM)
		request_done(st);
	else
		st->state = ST_BODY;
	return 0;
}

static int on_stream_close(nghttp2_session *ng, int32_t id, uint32_t code, void *ud)
{
	(void)code;
	(void)ud;
	struct h2_stream *st = nghttp2_session_get_stream_user_data(ng, id);
	if (st) {
		nghttp2_session_set_stream_user_data(ng, id, NULL);
		stream_put(st);
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
	s->c = c;
	if (nghttp2_session_server_new2(&s->ng, t->h2p->cbs, c, t->h2p->opt) != 0) {
		free(s);
		return -ENOMEM;
	}
	c->h2 = s;
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
	while (s->streams) {
		nghttp2_session_set_stream_user_data(s->ng, s->streams->id, NULL);
		stream_put(s->streams);
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
	for (int i = 0; i < H2_TIMERS_PER_ROUND; i++) {
		struct theap_node *n = theap_pop_expired(&w->sheap, w->now);
		if (!n)
			break;
		stream_timer((struct h2_stream *)n);
	}
}

void target_h2_worker_free(struct worker *w)
{
	while (w->h2_free) {
		struct h2_stream *st = w->h2_free;
		w->h2_free = st->next;
		stream_free(w, st);
	}
	w->h2_n_free = 0;
}
