/* pacer — the mix generator's expansion of a spec (mix_int.h) into a
 * deterministic table: exact shares by largest remainder, a seeded
 * shuffle, locality, templates. See mix.h for the contract. */
#include "table/mix.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "table/mix_int.h"
#include "util/err.h"
#include "util/rng.h"

/* Uniform in [0, n), n >= 1, without modulo bias. */
static uint64_t uniform(struct rng *r, uint64_t n)
{
	uint64_t floor_ = (0 - n) % n; /* 2^64 mod n */
	for (;;) {
		uint64_t x = rng_next(r);
		if (x >= floor_)
			return x % n;
	}
}

/* Split total into k parts in proportion to w (largest remainder; ties to
 * the lower index). */
static void quotas(const double *w, size_t k, size_t total, size_t *q)
{
	double sum = 0;
	for (size_t i = 0; i < k; i++)
		sum += w[i];
	double rem[MIX_MAX_SHAPES > MIX_MAX_METHODS ? MIX_MAX_SHAPES : MIX_MAX_METHODS];
	size_t given = 0;
	for (size_t i = 0; i < k; i++) {
		double exact = sum > 0 ? (double)total * (w[i] / sum) : 0;
		q[i] = (size_t)floor(exact);
		if (q[i] > total)
			q[i] = total;
		rem[i] = exact - (double)q[i];
		given += q[i];
	}
	while (given > total) { /* rounding could only overshoot by a hair */
		for (size_t i = k; i-- > 0 && given > total;)
			if (q[i]) {
				q[i]--;
				given--;
			}
	}
	while (given < total) {
		size_t best = k;
		for (size_t i = 0; i < k; i++)
			if (rem[i] >= 0 && (best == k || rem[i] > rem[best]))
				best = i;
		if (best == k) { /* every part got one more (only by rounding): again */
			for (size_t i = 0; i < k; i++)
				rem[i] = w[i];
			continue;
		}
		q[best]++;
		rem[best] = -1;
		given++;
	}
}

static void shuffle(struct rng *r, uint8_t *a, size_t n)
{
	for (size_t i = n; i > 1; i--) {
		size_t j = (size_t)uniform(r, i);
		uint8_t t = a[i - 1];
		a[i - 1] = a[j];
		a[j] = t;
	}
}

/* Fill a[n] with label i q[i] times, then shuffle. */
static void labels(struct rng *r, uint8_t *a, size_t n, const size_t *q, size_t k)
{
	size_t o = 0;
	for (size_t i = 0; i < k; i++)
		for (size_t j = 0; j < q[i] && o < n; j++)
			a[o++] = (uint8_t)i;
	shuffle(r, a, n);
}

struct sbuf {
	char *p;
	size_t n, cap;
	bool oom;
};

static void put(struct sbuf *b, const char *s, size_t n)
{
	if (b->oom)
		return;
	if (b->n + n + 1 > b->cap) {
		size_t nc = b->cap ? b->cap : 256;
		while (b->n + n + 1 > nc)
			nc *= 2;
		char *np = realloc(b->p, nc);
		if (!np) {
			b->oom = true;
			return;
		}
		b->p = np;
		b->cap = nc;
	}
	memcpy(b->p + b->n, s, n);
	b->n += n;
	b->p[b->n] = '\0';
}

static void put_u64(struct sbuf *b, uint64_t v)
{
	char d[24];
	int k = snprintf(d, sizeof d, "%llu", (unsigned long long)v);
	put(b, d, (size_t)k);
}

static void put_word(struct sbuf *b, struct rng *r)
{
	char w[10];
	size_t n = 3 + (size_t)uniform(r, 8);
	for (size_t i = 0; i < n; i++)
		w[i] = (char)('a' + uniform(r, 26));
	put(b, w, n);
}

/* An RFC 4122 version-4 UUID from 128 seeded bits: the version nibble
 * (the third group's first digit) is 4 and the variant bits (the fourth
 * group's first two) are 10, so the fourth group starts with 8, 9, a or b;
 * the other 122 bits are the generator's. Lowercase, 8-4-4-4-12. */
static void put_uuid(struct sbuf *b, struct rng *r)
{
	uint64_t hi = rng_next(r), lo = rng_next(r);
	hi = (hi & ~0xf000ull) | 0x4000ull;
	lo = (lo & ~(0xc000ull << 48)) | (0x8000ull << 48);
	char u[40];
	snprintf(u, sizeof u, "%08llx-%04llx-%04llx-%04llx-%012llx", (unsigned long long)(hi >> 32),
	         (unsigned long long)((hi >> 16) & 0xffff), (unsigned long long)(hi & 0xffff),
	         (unsigned long long)(lo >> 48), (unsigned long long)(lo & 0xffffffffffffull));
	put(b, u, 36);
}

static void expand(struct sbuf *b, const struct tpl *t, const struct table_mix *m, struct rng *r,
                   size_t route, size_t index)
{
	for (size_t i = 0; i < t->n; i++) {
		const struct part *p = &t->parts[i];
		switch (p->kind) {
		case PH_LIT: put(b, p->lit, p->len); break;
		case PH_ROUTE: put_u64(b, route); break;
		case PH_ID: put_u64(b, 1 + uniform(r, m->id_max)); break;
		case PH_N: put_u64(b, index); break;
		case PH_WORD: put_word(b, r); break;
		case PH_PATH: {
			size_t segs = 1 + (size_t)uniform(r, 4);
			for (size_t k = 0; k < segs; k++) {
				if (k)
					put(b, "/", 1);
				put_word(b, r);
			}
			break;
		}
		case PH_UUID: put_uuid(b, r); break;
		case PH_COUNT: break;
		}
	}
}

int table_mix_generate(const struct table_mix *m, size_t size, uint64_t seed,
                       const struct table_limits *lim, struct table **out, char *err, size_t cap)
{
	*out = NULL;
	if (err && cap)
		err[0] = '\0';
	struct tb b;
	int rc = tb_init(&b, lim, TABLE_FMT_MIX, m->source);
	if (rc)
		return tb_err(err, cap, rc, "%s: out of memory", m->source);
	if (size == 0 || size > b.lim.max_requests) {
		tb_abort(&b);
		return tb_err(err, cap, PACER_ERANGE, "%s: size %zu is out of range (1 to %zu)", m->source,
		              size, b.lim.max_requests);
	}
	const size_t nm = m->n_methods, ns = m->n_shapes, ncell = nm * ns;
	uint8_t *meth = malloc(size), *shp = malloc(size), *qry = malloc(size), *hot = malloc(size);
	uint32_t *route = malloc(size * sizeof *route);
	size_t *cell_n = calloc(ncell, sizeof *cell_n), *cell_at = calloc(ncell + 1, sizeof *cell_at);
	size_t *by_cell = malloc(size * sizeof *by_cell);
	struct tb_hdr *hdrs = malloc((m->n_headers + 1) * sizeof *hdrs);
	struct sbuf url = {0}, qs = {0}, bd = {0};
	if (!meth || !shp || !qry || !hot || !route || !cell_n || !cell_at || !by_cell || !hdrs) {
		rc = tb_err(err, cap, -ENOMEM, "%s: out of memory", m->source);
		goto done;
	}
	struct rng r;
	rng_seed(&r, seed);
	double w[MIX_MAX_SHAPES];
	size_t q[MIX_MAX_SHAPES];
	for (size_t i = 0; i < nm; i++)
		w[i] = m->methods[i].weight;
	quotas(w, nm, size, q);
	labels(&r, meth, size, q, nm);
	for (size_t i = 0; i < ns; i++)
		w[i] = m->shapes[i].weight;
	quotas(w, ns, size, q);
	labels(&r, shp, size, q, ns);
	w[0] = 1 - m->query_share;
	w[1] = m->query_share;
	quotas(w, 2, size, q);
	labels(&r, qry, size, q, 2);

	/* locality, cell by cell: the requests of a cell in table order */
	for (size_t i = 0; i < size; i++)
		cell_n[meth[i] * ns + shp[i]]++;
	for (size_t c = 0; c < ncell; c++)
		cell_at[c + 1] = cell_at[c] + cell_n[c];
	memset(cell_n, 0, ncell * sizeof *cell_n);
	for (size_t i = 0; i < size; i++) {
		size_t c = meth[i] * ns + shp[i];
		by_cell[cell_at[c] + cell_n[c]++] = i;
	}
	for (size_t c = 0; c < ncell; c++) {
		const struct shape *s = &m->shapes[c % ns];
		size_t k = cell_n[c];
		bool has_loc = s->has_loc || m->has_loc;
		double lr = s->has_loc ? s->loc_req : m->loc_req;
		double lt = s->has_loc ? s->loc_routes : m->loc_routes;
		size_t hot_routes = s->routes;
		if (has_loc) {
			double x = floor((double)s->routes * lt + 0.5);
			hot_routes = x < 1 ? 1 : x > (double)s->routes ? s->routes : (size_t)x;
		}
		size_t n_hot = k;
		if (has_loc && hot_routes < s->routes) {
			double lw[2] = {lr, 1 - lr};
			size_t lq[2];
			quotas(lw, 2, k, lq);
			n_hot = lq[0];
		}
		uint8_t *h = hot + cell_at[c]; /* scratch: one flag per request of the cell */
		memset(h, 1, n_hot);
		memset(h + n_hot, 0, k - n_hot);
		shuffle(&r, h, k);
		for (size_t j = 0; j < k; j++) {
			size_t i = by_cell[cell_at[c] + j];
			route[i] = h[j] ? (uint32_t)uniform(&r, hot_routes)
			                : (uint32_t)(hot_routes + uniform(&r, s->routes - hot_routes));
		}
	}

	for (size_t i = 0; i < size && !rc; i++) {
		const struct method *me = &m->methods[meth[i]];
		const struct shape *s = &m->shapes[shp[i]];
		const struct tpl *t = &s->tpls[route[i] % s->n_tpls];
		url.n = 0;
		put(&url, m->base_url, strlen(m->base_url));
		expand(&url, t, m, &r, route[i], i);
		if (qry[i]) {
			qs.n = 0;
			expand(&qs, &m->query, m, &r, route[i], i);
			put(&url, "?", 1);
			put(&url, qs.p ? qs.p : "", qs.n);
		}
		size_t nh = m->n_headers;
		if (nh)
			memcpy(hdrs, m->headers, nh * sizeof *hdrs);
		bool with_body = m->has_body && me->body;
		bd.n = 0;
		if (with_body) {
			put(&bd, "", 0);
			expand(&bd, &m->body, m, &r, route[i], i);
			if (m->content_type)
				hdrs[nh++] = (struct tb_hdr){"Content-Type", 12, m->content_type,
				                             strlen(m->content_type)};
		}
		if (url.oom || qs.oom || bd.oom) {
			rc = tb_err(err, cap, -ENOMEM, "%s: out of memory", m->source);
			break;
		}
		struct tb_req rq = {.method = me->name, .url = url.p, .headers = hdrs, .n_headers = nh,
		                    .body = with_body ? bd.p : NULL, .body_len = with_body ? bd.n : 0,
		                    .shape = s->name, .line = (unsigned)(i + 1)};
		if ((rc = tb_add(&b, &rq)))
			tb_err(err, cap, rc, "%s: request %zu (shape %s): %s", m->source, i + 1, s->name,
			       b.why[0] ? b.why : "out of memory");
	}
done:
	free(meth);
	free(shp);
	free(qry);
	free(hot);
	free(route);
	free(cell_n);
	free(cell_at);
	free(by_cell);
	free(hdrs);
	free(url.p);
	free(qs.p);
	free(bd.p);
	if (rc) {
		tb_abort(&b);
		return rc;
	}
	*out = tb_finish(&b);
	return *out ? 0 : tb_err(err, cap, -ENOMEM, "%s: out of memory", m->source);
}
