/* pacer — the embedded target's request streams, HTTP/2's and HTTP/3's
 * alike (tstream.h): records, budgets, the plan's answer, timers. */
#include "target/tstream.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "target/server_int.h"

void tstream_pool_init(struct tstream_pool *p, struct worker *w, struct theap *heap,
		       const struct tstream_ops *ops)
{
	p->w = w;
	p->heap = heap;
	p->ops = ops;
	/* the largest rendered answers a few times, or a small one on each
	 * stream a connection may have */
	size_t per_stream = (size_t)w->t->max_streams * TSTREAM_STREAM_DYN;
	p->conn_dyn_max = per_stream > TSTREAM_CONN_DYN_MIN ? per_stream : TSTREAM_CONN_DYN_MIN;
}

static void record_free(struct worker *w, struct tstream *st)
{
	w->freed += sizeof *st + st->path_cap + st->dyn.cap;
	free(st->path);
	free(st->dyn.buf);
	free(st);
}

void tstream_pool_free(struct tstream_pool *p)
{
	while (p->free) {
		struct tstream *st = p->free;
		p->free = st->next;
		record_free(p->w, st);
	}
	p->n_free = 0;
}

/* What a :path buffer of capacity cap weighs in the budgets: a short one
 * (kept with a record for reuse) nothing, so that streams with ordinary
 * paths are never refused for it. */
static size_t path_weight(uint32_t cap)
{
	return cap > TSTREAM_KEEP_PATH ? cap : 0;
}

bool tstream_may_begin(const struct tstream_pool *p, const struct tstream_set *set)
{
	return set->b.held < TSTREAM_CONN_HELD_MAX && p->b.held < TSTREAM_THREAD_HELD_MAX;
}

struct tstream *tstream_get(struct tstream_pool *p, struct tstream_set *set, int64_t id)
{
	struct tstream *st = p->free;
	if (st) {
		p->free = st->next;
		p->n_free--;
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
	st->set = set;
	st->pool = p;
	st->id = id;
	st->state = TS_HEAD;
	st->begin_ns = p->w->now;
	st->held = true; /* a kept buffer is short: it weighs nothing */
	st->next = set->head;
	if (set->head)
		set->head->prev = st;
	set->head = st;
	set->n++;
	tstream_arm(st, st->begin_ns + p->w->t->plan->request_timeout_ns);
	return st;
}

/* st's request is whole (or given up): a long :path it held is no longer
 * counted, and is freed. */
static void path_release(struct tstream *st)
{
	if (!st->held)
		return;
	st->held = false;
	size_t wt = path_weight(st->path_cap);
	st->set->b.held -= wt;
	st->pool->b.held -= wt;
	if (st->path_cap > TSTREAM_KEEP_PATH) {
		st->pool->w->freed += st->path_cap;
		free(st->path);
		st->path = NULL;
		st->path_cap = st->path_len = 0;
	}
}

void tstream_put(struct tstream *st)
{
	struct tstream_pool *p = st->pool;
	struct tstream_set *set = st->set;
	theap_cancel(p->heap, &st->tn);
	path_release(st);
	set->b.dyn -= st->dyn_held;
	p->b.dyn -= st->dyn_held;
	st->dyn_held = 0;
	if (st->state == TS_WAIT || st->deferred)
		set->n_timed--;
	if (st->prev)
		st->prev->next = st->next;
	else
		set->head = st->next;
	if (st->next)
		st->next->prev = st->prev;
	set->n--;
	if (p->n_free < TSTREAM_FREE_KEEP) {
		/* kept small: a few large answers do not pin memory in the pool */
		if (st->dyn.cap > TSTREAM_KEEP_DYN) {
			p->w->freed += st->dyn.cap;
			free(st->dyn.buf);
			st->dyn = (struct target_dyn){0};
		}
		st->next = p->free;
		p->free = st;
		p->n_free++;
	} else {
		record_free(p->w, st);
	}
}

void tstream_arm(struct tstream *st, uint64_t at)
{
	if (theap_arm(st->pool->heap, &st->tn, at) < 0)
		st->pool->ops->reset(st);
}

int tstream_header(struct tstream *st, enum tstream_field k, size_t name_len, const uint8_t *value,
		   size_t vl)
{
	if (st->too_big)
		return 0;
	st->hdr_bytes += (uint32_t)(name_len + vl + 32);
	if (st->hdr_bytes > TSTREAM_HEADERS_CAP) {
		st->too_big = true; /* 431 once the request is whole; nothing more is kept */
		return 0;
	}
	if (k == TF_METHOD) {
		if (vl >= TSTREAM_METHOD_CAP) {
			st->long_method = true;
		} else {
			memcpy(st->method, value, vl);
			st->method_len = (uint8_t)vl;
		}
	} else if (k == TF_PATH) {
		if (vl > st->path_cap) {
			struct tstream_pool *p = st->pool;
			uint32_t cap = st->path_cap ? st->path_cap : TSTREAM_PATH_INIT;
			while (cap < vl)
				cap *= 2;
			size_t more = path_weight(cap) - path_weight(st->path_cap);
			if (st->set->b.held + more > TSTREAM_CONN_HELD_MAX ||
			    p->b.held + more > TSTREAM_THREAD_HELD_MAX) {
				st->too_big = true; /* 431, as for header fields over the cap */
				return 0;
			}
			char *np = realloc(st->path, cap);
			if (!np)
				return -ENOMEM;
			st->path = np;
			st->path_cap = cap;
			st->set->b.held += more;
			p->b.held += more;
		}
		memcpy(st->path, value, vl);
		st->path_len = (uint32_t)vl;
	}
	return 0;
}

void tstream_request_done(struct tstream *st)
{
	struct tstream_pool *p = st->pool;
	struct worker *w = p->w;
	theap_cancel(p->heap, &st->tn); /* its request timeout */
	st->head_req = st->method_len == 4 && !memcmp(st->method, "HEAD", 4);
	if (st->too_big || st->long_method || !st->method_len) {
		path_release(st);
		stat_inc(&w->st.bad_requests);
		p->ops->canned(st, st->too_big ? 431 : st->long_method ? 501 : 400);
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
		if (st->set->b.dyn + st->dyn.cap > p->conn_dyn_max ||
		    p->b.dyn + st->dyn.cap > TSTREAM_THREAD_DYN_MAX) {
			w->freed += st->dyn.cap;
			free(st->dyn.buf);
			st->dyn = (struct target_dyn){0};
			p->ops->canned(st, 503);
			return;
		}
		st->dyn_held = st->dyn.cap;
		st->set->b.dyn += st->dyn_held;
		p->b.dyn += st->dyn_held;
	}
	if (!rt || rt->simple) {
		p->ops->answer(st);
		return;
	}
	uint64_t ready = target_ready_at(w, rt, &st->dispatch_ns);
	if (ready > w->now) {
		st->ready_ns = ready;
		st->state = TS_WAIT;
		st->set->n_timed++;
		tstream_arm(st, ready);
		return;
	}
	p->ops->answer(st);
}

static void stream_timer(struct tstream *st)
{
	struct tstream_pool *p = st->pool;
	if (st->state == TS_WAIT) {
		st->set->n_timed--;
		p->ops->answer(st);
	} else if (st->state == TS_SENT) {
		if (st->deferred) {
			st->set->n_timed--;
			st->deferred = false;
			p->ops->resume(st);
		}
	} else {
		/* the request did not arrive whole within the plan's request timeout */
		path_release(st);
		stat_inc(&p->w->st.timeouts);
		p->ops->canned(st, 408);
	}
}

void tstream_run_timers(struct tstream_pool *p)
{
	if (!p->w) /* no stream yet: the pool is made with the first session */
		return;
	for (int i = 0; i < TSTREAM_TIMERS_PER_ROUND; i++) {
		struct theap_node *n = theap_pop_expired(p->heap, p->w->now);
		if (!n)
			break;
		struct tstream *st = (struct tstream *)n;
		stream_timer(st);
		p->ops->timed(st);
	}
}

bool tstream_body_of(struct tstream *st)
{
	const struct target_route *rt = st->rt;
	const struct target_resp *r = st->resp;
	bool dynamic = r->wire == NULL;
	st->body = dynamic ? st->dyn.buf : r->wire + r->wire_body_off;
	st->body_len = dynamic ? st->dyn.len : r->wire_len - r->wire_body_off;
	st->body_off = 0;
	bool body = !st->head_req && !r->no_body_allowed && st->body_len > 0;
	if (body && rt && rt->mis.slow_bytes) {
		st->slow = true;
		st->slow_budget = rt->mis.slow_bytes;
		st->slow_next_ns = st->pool->w->now + rt->mis.slow_every_ns;
	}
	return body;
}

size_t tstream_slow_take(struct tstream *st, size_t n)
{
	if (!st->slow)
		return n;
	uint64_t now = st->pool->w->now;
	if (st->slow_budget == 0 && now >= st->slow_next_ns) {
		st->slow_budget = st->rt->mis.slow_bytes;
		st->slow_next_ns = now + st->rt->mis.slow_every_ns;
	}
	if (st->slow_budget == 0) {
		if (!st->deferred)
			st->set->n_timed++;
		st->deferred = true;
		tstream_arm(st, st->slow_next_ns);
		return 0;
	}
	n = n < st->slow_budget ? n : st->slow_budget;
	st->slow_budget -= n;
	return n;
}

/* ---- the plan's answers as header fields ----------------------------------- */

static bool hop_by_hop(const char *n, size_t l)
{
	static const char *const names[] = {"connection",        "keep-alive", "proxy-connection",
					    "transfer-encoding", "upgrade",    "content-length"};
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		if (strlen(names[i]) == l && !memcmp(names[i], n, l))
			return true;
	return false;
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
static int fields_build(struct tstream_fields *h, const struct target_resp *r)
{
	snprintf(h->status, sizeof h->status, "%03u", (unsigned)r->status % 1000u);
	h->names = malloc(r->head_len + 1);
	if (!h->names)
		return -ENOMEM;
	return target_head_fields(r, h->names, h->f, TSTREAM_FIELDS_MAX, &h->n);
}

static const int canned_status[TSTREAM_N_CANNED] = {400, 408, 431, 501, 503};

int tstream_answers_build(struct tstream_answers *a, const struct target_plan *plan)
{
	a->route = calloc(plan->n_routes ? plan->n_routes : 1, sizeof *a->route);
	if (!a->route)
		return -ENOMEM;
	int rc = fields_build(&a->nf, &plan->not_found);
	for (size_t i = 0; rc == 0 && i < plan->n_routes; i++) {
		const struct target_route *rt = &plan->routes[i];
		a->route[i] = calloc(rt->n_resps ? rt->n_resps : 1, sizeof *a->route[i]);
		if (!a->route[i])
			return -ENOMEM;
		for (size_t k = 0; rc == 0 && k < rt->n_resps; k++)
			rc = fields_build(&a->route[i][k], &rt->resps[k]);
	}
	if (rc)
		return rc;
	for (int i = 0; i < TSTREAM_N_CANNED; i++) {
		struct tstream_canned *k = &a->canned[i];
		k->status = canned_status[i];
		snprintf(k->st, sizeof k->st, "%d", k->status);
		int n = snprintf(k->body, sizeof k->body, "%d %s\n", k->status,
				 target_reason(k->status));
		k->body_len = (size_t)n;
		snprintf(k->len, sizeof k->len, "%d", n);
	}
	return 0;
}

void tstream_answers_free(struct tstream_answers *a, const struct target_plan *plan)
{
	if (a->route)
		for (size_t i = 0; i < plan->n_routes; i++) {
			if (!a->route[i])
				continue;
			for (size_t k = 0; k < plan->routes[i].n_resps; k++)
				free(a->route[i][k].names);
			free(a->route[i]);
		}
	free(a->route);
	free(a->nf.names);
	a->route = NULL;
	a->nf.names = NULL;
}

const struct tstream_fields *tstream_fields_of(const struct tstream_answers *a,
					       const struct target_plan *plan,
					       const struct target_route *rt,
					       const struct target_resp *r)
{
	return rt ? &a->route[rt - plan->routes][r - rt->resps] : &a->nf;
}

const struct tstream_canned *tstream_canned_of(const struct tstream_answers *a, int status)
{
	for (int i = 0; i < TSTREAM_N_CANNED; i++)
		if (a->canned[i].status == status)
			return &a->canned[i];
	return &a->canned[0];
}
