#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "target/plan.h"
#include "target/plan_int.h"
#include "util/err.h"

/* ---- arena ---------------------------------------------------------- */

struct plan_arena {
	struct plan_arena *next;
	size_t used, cap;
	_Alignas(16) unsigned char data[];
};

#define ARENA_CHUNK (64u * 1024u)

void *plan_alloc(struct plan_arena **a, size_t n)
{
	n = (n + 15u) & ~(size_t)15u;
	if (n == 0)
		n = 16;
	struct plan_arena *c = *a;
	if (!c || c->cap - c->used < n) {
		size_t cap = n > ARENA_CHUNK / 4 ? n : ARENA_CHUNK;
		struct plan_arena *nc = malloc(sizeof *nc + cap);
		if (!nc)
			return NULL;
		nc->used = 0;
		nc->cap = cap;
		if (c && cap != ARENA_CHUNK) {
			/* a big dedicated chunk: keep filling the current one */
			nc->next = c->next;
			c->next = nc;
		} else {
			nc->next = c;
			*a = nc;
		}
		c = nc;
	}
	void *p = c->data + c->used;
	c->used += n;
	memset(p, 0, n);
	return p;
}

char *plan_strndup(struct plan_arena **a, const char *s, size_t n)
{
	char *p = plan_alloc(a, n + 1);
	if (p) {
		memcpy(p, s, n);
		p[n] = '\0';
	}
	return p;
}

void plan_arena_free(struct plan_arena *a)
{
	while (a) {
		struct plan_arena *n = a->next;
		free(a);
		a = n;
	}
}

void target_plan_free(struct target_plan *p)
{
	if (!p)
		return;
	plan_arena_free(p->arena);
	free(p);
}

/* ---- status reasons ------------------------------------------------- */

const char *target_reason(int status)
{
	switch (status) {
	case 100: return "Continue";
	case 200: return "OK";
	case 201: return "Created";
	case 202: return "Accepted";
	case 203: return "Non-Authoritative Information";
	case 204: return "No Content";
	case 206: return "Partial Content";
	case 301: return "Moved Permanently";
	case 302: return "Found";
	case 303: return "See Other";
	case 307: return "Temporary Redirect";
	case 308: return "Permanent Redirect";
	case 400: return "Bad Request";
	case 401: return "Unauthorized";
	case 403: return "Forbidden";
	case 404: return "Not Found";
	case 405: return "Method Not Allowed";
	case 408: return "Request Timeout";
	case 409: return "Conflict";
	case 410: return "Gone";
	case 411: return "Length Required";
	case 413: return "Content Too Large";
	case 414: return "URI Too Long";
	case 415: return "Unsupported Media Type";
	case 422: return "Unprocessable Content";
	case 429: return "Too Many Requests";
	case 431: return "Request Header Fields Too Large";
	case 500: return "Internal Server Error";
	case 501: return "Not Implemented";
	case 502: return "Bad Gateway";
	case 503: return "Service Unavailable";
	case 504: return "Gateway Timeout";
	case 505: return "HTTP Version Not Supported";
	default: return "Status";
	}
}

/* ---- compile -------------------------------------------------------- */

static uint64_t thresh_of(double cum)
{
	if (cum >= 1.0)
		return UINT64_MAX;
	if (cum <= 0.0)
		return 0;
	return (uint64_t)(cum * 18446744073709551616.0);
}

/* Build head (and wire for static bodies) of one variant. */
/* Precomputed response bytes of a whole plan are capped: each variant of a
 * route (status x filled/no-fill) holds its own copy of a static body, so a
 * small plan with large bodies could otherwise ask for gigabytes. */
#define PLAN_COMPILED_CAP (256u << 20)

static int build_resp(struct plan_arena **a, struct target_resp *r, int status,
                      const struct target_header *hdrs, size_t n_hdrs,
                      const struct target_body *body, size_t *budget)
{
	r->status = status;
	r->body = body;
	r->no_body_allowed = status == 204 || status == 304;
	size_t cap = 64 + strlen(target_reason(status));
	for (size_t i = 0; i < n_hdrs; i++)
		cap += strlen(hdrs[i].name) + strlen(hdrs[i].value) + 4;
	char *h = plan_alloc(a, cap);
	if (!h)
		return -ENOMEM;
	size_t n = (size_t)snprintf(h, cap, "HTTP/1.1 %d %s\r\n", status, target_reason(status));
	for (size_t i = 0; i < n_hdrs; i++)
		n += (size_t)snprintf(h + n, cap - n, "%s: %s\r\n", hdrs[i].name, hdrs[i].value);
	r->head = h;
	r->head_len = n;
	r->wire = NULL;
	r->wire_len = r->wire_body_off = 0;
	if (body->segs || body->kv)
		return 0;
	char cl[48];
	size_t cl_len = r->no_body_allowed ? 0 : (size_t)snprintf(cl, sizeof cl, "Content-Length: %zu\r\n", body->len);
	size_t wl = n + cl_len + 2 + body->len;
	if (wl > *budget)
		return PACER_ETOOBIG;
	*budget -= wl;
	char *w = plan_alloc(a, wl + 1);
	if (!w)
		return -ENOMEM;
	memcpy(w, h, n);
	memcpy(w + n, cl, cl_len);
	memcpy(w + n + cl_len, "\r\n", 2);
	memcpy(w + n + cl_len + 2, body->data, body->len);
	r->wire = w;
	r->wire_len = wl;
	r->wire_body_off = n + cl_len + 2;
	return 0;
}

static const struct target_header text_plain[] = {{"Content-Type", "text/plain"}};

static int error_body(struct plan_arena **a, struct target_body *b, int status)
{
	char tmp[96];
	int n = snprintf(tmp, sizeof tmp, "%d %s\n", status, target_reason(status));
	b->data = plan_strndup(a, tmp, (size_t)n);
	b->len = (size_t)n;
	return b->data ? 0 : -ENOMEM;
}

static int compile_route(struct plan_arena **a, struct target_route *rt, size_t *budget)
{
	struct target_resp *v = plan_alloc(a, sizeof *v * 2 * TARGET_MAX_STATUSES);
	if (!v)
		return -ENOMEM;
	size_t n = 0;
	double cum = 0;
	int rc;
	for (size_t i = 0; i < rt->n_status; i++) {
		int s = rt->status[i];
		double p = rt->status_p[i];
		if (p <= 0)
			continue;
		if (s < 400) {
			double pf = p * rt->fill, pn = p * (1 - rt->fill);
			if (pf > 0) {
				rc = build_resp(a, &v[n], s, rt->filled.headers, rt->filled.n_headers,
				                &rt->filled.body, budget);
				if (rc < 0)
					return rc;
				v[n].kind = TARGET_RESP_FILLED;
				v[n].p = pf;
				cum += pf;
				v[n++].thresh = thresh_of(cum);
			}
			if (pn > 0) {
				const struct target_answer *nf = &rt->nofill;
				const struct target_header *h = nf->headers_set ? nf->headers : rt->filled.headers;
				size_t nh = nf->headers_set ? nf->n_headers : rt->filled.n_headers;
				rc = build_resp(a, &v[n], nf->status ? nf->status : s, h, nh, &nf->body, budget);
				if (rc < 0)
					return rc;
				v[n].kind = TARGET_RESP_NOFILL;
				v[n].p = pn;
				cum += pn;
				v[n++].thresh = thresh_of(cum);
			}
		} else {
			struct target_body *eb = plan_alloc(a, sizeof *eb);
			if (!eb || error_body(a, eb, s) < 0)
				return -ENOMEM;
			rc = build_resp(a, &v[n], s, text_plain, 1, eb, budget);
			if (rc < 0)
				return rc;
			v[n].kind = TARGET_RESP_ERROR;
			v[n].p = p;
			cum += p;
			v[n++].thresh = thresh_of(cum);
		}
	}
	if (n == 0)
		return PACER_ERANGE; /* validated before: cannot happen */
	v[n - 1].thresh = UINT64_MAX;
	rt->resps = v;
	rt->n_resps = n;
	const struct target_misbehave *m = &rt->mis;
	rt->simple = n == 1 && v[0].wire && rt->latency.kind == TARGET_DIST_NONE && rt->work_ns == 0 &&
	             !rt->server_timing && m->stall_every_ns == 0 && m->close_after == 0 &&
	             m->garbage == 0 && m->slow_bytes == 0;
	return 0;
}

int plan_compile(struct target_plan *p)
{
	struct plan_arena **a = (struct plan_arena **)&p->arena;
	int rc;
	size_t budget = PLAN_COMPILED_CAP;
	for (size_t i = 0; i < p->n_routes; i++)
		if ((rc = compile_route(a, &p->routes[i], &budget)) < 0)
			return rc;
	static const struct target_body nf_body = {.data = "404 Not Found\n", .len = 14};
	return build_resp(a, &p->not_found, 404, text_plain, 1, &nf_body, &budget);
}

/* ---- use ------------------------------------------------------------ */

size_t target_route_pick(const struct target_route *rt, struct rng *r)
{
	if (rt->n_resps <= 1)
		return 0;
	uint64_t draw = rng_next(r);
	for (size_t i = 0; i + 1 < rt->n_resps; i++)
		if (draw <= rt->resps[i].thresh)
			return i;
	return rt->n_resps - 1;
}

const struct target_route *target_plan_match(const struct target_plan *p, const char *method,
                                             size_t method_len, const char *path, size_t path_len)
{
	bool head = method_len == 4 && memcmp(method, "HEAD", 4) == 0;
	for (size_t i = 0; i < p->n_routes; i++) {
		const struct target_route *rt = &p->routes[i];
		if (rt->method) {
			size_t ml = strlen(rt->method);
			bool ok = ml == method_len && memcmp(rt->method, method, ml) == 0;
			if (!ok && !(head && ml == 3 && memcmp(rt->method, "GET", 3) == 0))
				continue;
		}
		if (rt->prefix) {
			if (path_len < rt->path_len || memcmp(path, rt->path, rt->path_len) != 0)
				continue;
		} else if (path_len != rt->path_len || memcmp(path, rt->path, path_len) != 0) {
			continue;
		}
		return rt;
	}
	return NULL;
}
