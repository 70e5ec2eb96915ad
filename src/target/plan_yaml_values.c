/* pacer — the values inside a target plan's routes, read from YAML
 * (target/plan_yaml_int.h): latency distributions, bodies and templates,
 * headers, status mixes, the key-value store, misbehaviour. Each checks
 * its value's range and says what was expected, naming the key path. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "http/h1req.h"
#include "target/plan_yaml_int.h"
#include "util/err.h"
#include "util/time_units.h"

static int parse_status(struct plan_yaml *c, const yaml_node_t *n, const char *where, const char *s,
                        int *status)
{
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (end == s || *end || errno || s[0] == '+' || s[0] == '-' || v < 200 || v > 599)
		return fail(c, PACER_ERANGE, n, where, "expected a status code from 200 to 599, got '%s'", s);
	*status = (int)v;
	return 0;
}

int pyaml_status(struct plan_yaml *c, const yaml_node_t *n, const char *where, int *status)
{
	const char *s;
	int rc = text(c, n, where, "a status code", &s);
	return rc < 0 ? rc : parse_status(c, n, where, s, status);
}

/* ---- latency -------------------------------------------------------- */

int pyaml_latency(struct plan_yaml *c, const yaml_node_t *n, const char *where, struct target_dist *d)
{
	const char *why;
	uint64_t v;
	int rc;
	if (n->type == YAML_SCALAR_NODE) {
		if ((rc = yaml_get_duration(&c->y, n, where, &v)) < 0)
			return rc;
		if (target_dist_set(d, TARGET_DIST_FIXED, v, 0, 0, &why) < 0)
			return fail(c, PACER_ERANGE, n, where, "expected a latency of %s", why);
		return 0;
	}
	static const char *const keys[] = {"dist", "value", "min", "max", "mean", "p50", "p99", "cap", NULL};
	enum { K_DIST, K_VALUE, K_MIN, K_MAX, K_MEAN, K_P50, K_P99, K_CAP, K_N };
	yaml_node_t *f[K_N];
	if ((rc = fields(c, n, where, "a duration or a distribution", keys, f)) < 0)
		return rc;
	if (!f[K_DIST])
		return fail(c, PACER_EPARSE, n, where,
		            "expected 'dist: fixed|uniform|exponential|lognormal'");
	const char *ds;
	if ((rc = text(c, f[K_DIST], where, "a distribution name", &ds)) < 0)
		return rc;
	static const struct {
		const char *name;
		enum target_dist_kind kind;
		int a, b; /* required keys */
		bool cap; /* cap allowed */
		const char *expect;
	} kinds[] = {
		{"fixed", TARGET_DIST_FIXED, K_VALUE, -1, false, "value"},
		{"uniform", TARGET_DIST_UNIFORM, K_MIN, K_MAX, false, "min, max"},
		{"exponential", TARGET_DIST_EXPONENTIAL, K_MEAN, -1, true, "mean, cap"},
		{"lognormal", TARGET_DIST_LOGNORMAL, K_P50, K_P99, true, "p50, p99, cap"},
	};
	size_t ki;
	for (ki = 0; ki < sizeof kinds / sizeof kinds[0]; ki++)
		if (!strcmp(kinds[ki].name, ds))
			break;
	char w[WHERE_CAP];
	sub(w, where, "dist");
	if (ki == sizeof kinds / sizeof kinds[0])
		return fail(c, PACER_EPARSE, f[K_DIST], w,
		            "expected fixed, uniform, exponential or lognormal, got '%s'", ds);
	for (int k = K_VALUE; k < K_N; k++) {
		bool allowed = k == kinds[ki].a || k == kinds[ki].b || (k == K_CAP && kinds[ki].cap);
		if (f[k] && !allowed)
			return fail(c, PACER_EPARSE, f[k], where,
			            "'%s' does not apply to a %s latency (expected %s)", keys[k], ds,
			            kinds[ki].expect);
		if (!f[k] && (k == kinds[ki].a || k == kinds[ki].b))
			return fail(c, PACER_EPARSE, n, where, "a %s latency needs '%s' (expected %s)", ds,
			            keys[k], kinds[ki].expect);
	}
	uint64_t a = 0, b = 0, cap = 0;
	sub(w, where, keys[kinds[ki].a]);
	if ((rc = yaml_get_duration(&c->y, f[kinds[ki].a], w, &a)) < 0)
		return rc;
	if (kinds[ki].b >= 0) {
		sub(w, where, keys[kinds[ki].b]);
		if ((rc = yaml_get_duration(&c->y, f[kinds[ki].b], w, &b)) < 0)
			return rc;
	}
	if (f[K_CAP]) {
		sub(w, where, "cap");
		if ((rc = yaml_get_duration(&c->y, f[K_CAP], w, &cap)) < 0)
			return rc;
		if (cap == 0)
			return fail(c, PACER_ERANGE, f[K_CAP], w, "expected a cap > 0");
	}
	if (target_dist_set(d, kinds[ki].kind, a, b, cap, &why) < 0) {
		const yaml_node_t *at = kinds[ki].b >= 0 ? f[kinds[ki].b] : f[kinds[ki].a];
		if (kinds[ki].kind == TARGET_DIST_LOGNORMAL && a == 0)
			at = f[K_P50];
		return fail(c, PACER_ERANGE, at, where, "expected %s", why);
	}
	return 0;
}

/* ---- bodies and headers --------------------------------------------- */

static int parse_template(struct plan_yaml *c, const yaml_node_t *n, const char *where,
                          struct target_body *b)
{
	const char *s = b->data;
	size_t len = b->len;
	if (!memmem(s, len, "{{", 2))
		return 0;
	if (len > TARGET_TEMPLATE_CAP)
		return fail(c, PACER_ETOOBIG, n, where,
		            "expected a template of at most %u bytes (a body with {{...}} placeholders)",
		            TARGET_TEMPLATE_CAP);
	/* at most one segment per 2 bytes, plus one */
	size_t cap = len / 2 + 2;
	struct target_seg *segs = plan_alloc(c->arena, sizeof *segs * cap);
	if (!segs)
		return oom(c);
	size_t ns = 0, i = 0;
	while (i < len) {
		const char *o = memmem(s + i, len - i, "{{", 2);
		size_t lit_end = o ? (size_t)(o - s) : len;
		if (lit_end > i)
			segs[ns++] = (struct target_seg){TARGET_SEG_TEXT, s + i, lit_end - i};
		if (!o)
			break;
		const char *cl = memmem(o + 2, len - (size_t)(o + 2 - s), "}}", 2);
		if (!cl)
			return fail(c, PACER_EPARSE, n, where, "expected '}}' closing a placeholder");
		const char *in = o + 2;
		size_t il = (size_t)(cl - in);
		if (il == 2 && !memcmp(in, "id", 2)) {
			segs[ns++] = (struct target_seg){TARGET_SEG_ID, NULL, 0};
		} else if (il == 3 && !memcmp(in, "seq", 3)) {
			segs[ns++] = (struct target_seg){TARGET_SEG_SEQ, NULL, 0};
		} else if (il > 6 && il <= 6 + TARGET_QUERY_NAME_CAP && !memcmp(in, "query:", 6)) {
			for (size_t k = 6; k < il; k++)
				if (in[k] == '&' || in[k] == '=' || !h1req_is_tchar((unsigned char)in[k]))
					return fail(c, PACER_EPARSE, n, where,
					            "expected a query parameter name in {{query:NAME}}");
			segs[ns++] = (struct target_seg){TARGET_SEG_QUERY, in + 6, il - 6};
		} else {
			return fail(c, PACER_EPARSE, n, where,
			            "unknown placeholder '{{%.*s}}' (expected {{id}}, {{seq}} or {{query:NAME}})",
			            (int)(il > 40 ? 40 : il), in);
		}
		i = (size_t)(cl + 2 - s);
	}
	size_t bound = 0;
	for (size_t k = 0; k < ns; k++)
		bound += segs[k].kind == TARGET_SEG_TEXT ? segs[k].len
		         : segs[k].kind == TARGET_SEG_QUERY ? TARGET_QUERY_ECHO_CAP
		                                            : 20;
	if (bound > TARGET_DYN_CAP)
		return fail(c, PACER_ETOOBIG, n, where,
		            "expected a template that expands to at most %u bytes (each {{query:NAME}} "
		            "counts %u)",
		            TARGET_DYN_CAP, TARGET_QUERY_ECHO_CAP);
	b->segs = segs;
	b->n_segs = ns;
	return 0;
}

int pyaml_body(struct plan_yaml *c, yaml_node_t *body, yaml_node_t *size, const char *where,
               struct target_body *b)
{
	char w[WHERE_CAP];
	int rc;
	*b = (struct target_body){.data = "", .len = 0};
	if (body && size)
		return fail(c, PACER_EPARSE, size, where, "expected either 'body' or 'body_size', not both");
	if (body) {
		sub(w, where, "body");
		const char *s;
		size_t len;
		if ((rc = scalar(c, body, w, "the body text", &s, &len)) < 0)
			return rc;
		if (len > TARGET_BODY_CAP)
			return fail(c, PACER_ETOOBIG, body, w, "expected a body of at most 16MiB");
		char *d = plan_strndup(c->arena, s, len);
		if (!d)
			return oom(c);
		b->data = d;
		b->len = len;
		return parse_template(c, body, w, b);
	}
	if (size) {
		sub(w, where, "body_size");
		uint64_t n;
		if ((rc = yaml_get_size(&c->y, size, w, TARGET_BODY_CAP, &n)) < 0)
			return rc;
		char *d = plan_alloc(c->arena, n + 1);
		if (!d)
			return oom(c);
		static const char pat[] = "pacer target body 0123456789 abcdefghijklmnopqrstuvwxyz\n";
		for (uint64_t i = 0; i < n; i++)
			d[i] = pat[i % (sizeof pat - 1)];
		if (n)
			d[n - 1] = '\n';
		b->data = d;
		b->len = n;
	}
	return 0;
}

static bool bad_value_char(unsigned char ch) { return (ch < 0x20 && ch != '\t') || ch == 0x7f; }

int pyaml_headers(struct plan_yaml *c, const yaml_node_t *n, const char *where,
                  struct target_header **out, size_t *count)
{
	if (n->type != YAML_MAPPING_NODE)
		return fail(c, PACER_EPARSE, n, where, "expected a mapping of header names to values, got %s",
		            yaml_kind_name(n));
	size_t m = map_len(n);
	if (m > TARGET_MAX_HEADERS)
		return fail(c, PACER_ETOOBIG, n, where, "expected at most %d headers", TARGET_MAX_HEADERS);
	struct target_header *h = plan_alloc(c->arena, sizeof *h * (m ? m : 1));
	if (!h)
		return oom(c);
	size_t i = 0, total = 0;
	for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; p++, i++) {
		yaml_node_t *k = node(c, p->key), *v = node(c, p->value);
		const char *name, *val;
		int rc;
		if ((rc = text(c, k, where, "a header name", &name)) < 0)
			return rc;
		bool tok = *name != '\0';
		for (const char *q = name; *q; q++)
			tok = tok && h1req_is_tchar((unsigned char)*q);
		if (!tok)
			return fail(c, PACER_EPARSE, k, where, "expected a header name (letters, digits, '-'), got '%s'",
			            name);
		if (!strcasecmp(name, "content-length") || !strcasecmp(name, "transfer-encoding") ||
		    !strcasecmp(name, "connection"))
			return fail(c, PACER_EPARSE, k, where,
			            "'%s' is set by the server; expected another header", name);
		for (size_t j = 0; j < i; j++)
			if (!strcasecmp(h[j].name, name))
				return fail(c, PACER_EPARSE, k, where, "duplicate header '%s'", name);
		if ((rc = text(c, v, where, "a header value", &val)) < 0)
			return rc;
		for (const char *q = val; *q; q++)
			if (bad_value_char((unsigned char)*q))
				return fail(c, PACER_EPARSE, v, where,
				            "expected a header value without control characters (header '%s')", name);
		total += strlen(name) + strlen(val) + 4;
		if (total > TARGET_HEADERS_CAP)
			return fail(c, PACER_ETOOBIG, v, where, "expected headers of at most %u bytes in all",
			            TARGET_HEADERS_CAP);
		h[i].name = plan_strndup(c->arena, name, strlen(name));
		h[i].value = plan_strndup(c->arena, val, strlen(val));
		if (!h[i].name || !h[i].value)
			return oom(c);
	}
	*out = h;
	*count = m;
	return 0;
}

int pyaml_status_mix(struct plan_yaml *c, const yaml_node_t *n, const char *where,
                     struct target_route *rt)
{
	int rc;
	if (n->type == YAML_SCALAR_NODE) {
		rt->n_status = 1;
		rt->status_p[0] = 1;
		return pyaml_status(c, n, where, &rt->status[0]);
	}
	if (n->type != YAML_MAPPING_NODE)
		return fail(c, PACER_EPARSE, n, where,
		            "expected a status code or a mapping of status codes to probabilities, got %s",
		            yaml_kind_name(n));
	size_t m = map_len(n);
	if (m == 0 || m > TARGET_MAX_STATUSES)
		return fail(c, PACER_ERANGE, n, where, "expected 1 to %d status codes", TARGET_MAX_STATUSES);
	double sum = 0;
	size_t i = 0;
	for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; p++, i++) {
		yaml_node_t *k = node(c, p->key), *v = node(c, p->value);
		const char *ks;
		if ((rc = text(c, k, where, "a status code", &ks)) < 0)
			return rc;
		if ((rc = parse_status(c, k, where, ks, &rt->status[i])) < 0)
			return rc;
		for (size_t j = 0; j < i; j++)
			if (rt->status[j] == rt->status[i])
				return fail(c, PACER_EPARSE, k, where, "duplicate status %d", rt->status[i]);
		char w[WHERE_CAP], num[16];
		snprintf(num, sizeof num, "%d", rt->status[i]);
		sub(w, where, num);
		if ((rc = yaml_get_prob(&c->y, v, w, &rt->status_p[i])) < 0)
			return rc;
		sum += rt->status_p[i];
	}
	rt->n_status = m;
	if (fabs(sum - 1.0) > 1e-9)
		return fail(c, PACER_ERANGE, n, where, "expected probabilities summing to 1, they sum to %g", sum);
	return 0;
}

/* ---- kv ------------------------------------------------------------- */

static int cmp_hdr(const void *a, const void *b)
{
	return strcmp(((const struct target_header *)a)->name, ((const struct target_header *)b)->name);
}

static bool kv_key_ok(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (*s == ',' || *s == '&' || *s == '"' || *s == '\\' || (unsigned char)*s < 0x21 ||
		    (unsigned char)*s > 0x7e)
			return false;
	return true;
}

int pyaml_kv(struct plan_yaml *c, const yaml_node_t *n, const char *where, struct target_kv **out)
{
	static const char *const keys[] = {"param", "prefix", "generate", "value_size", "table", NULL};
	enum { K_PARAM, K_PREFIX, K_GEN, K_VSIZE, K_TABLE, K_N };
	yaml_node_t *f[K_N];
	int rc;
	char w[WHERE_CAP];
	if ((rc = fields(c, n, where, "a kv table description", keys, f)) < 0)
		return rc;
	struct target_kv *kv = plan_alloc(c->arena, sizeof *kv);
	if (!kv)
		return oom(c);
	kv->param = "keys";
	kv->prefix = "key";
	kv->value_size = 32;
	if (f[K_PARAM]) {
		sub(w, where, "param");
		if ((rc = get_str(c, f[K_PARAM], w, "a query parameter name", &kv->param)) < 0)
			return rc;
		if (!kv_key_ok(kv->param) || strchr(kv->param, '='))
			return fail(c, PACER_EPARSE, f[K_PARAM], w, "expected a query parameter name");
	}
	if (f[K_PREFIX]) {
		sub(w, where, "prefix");
		if ((rc = get_str(c, f[K_PREFIX], w, "a key prefix", &kv->prefix)) < 0)
			return rc;
		if (*kv->prefix && !kv_key_ok(kv->prefix))
			return fail(c, PACER_EPARSE, f[K_PREFIX], w,
			            "expected a prefix of visible ASCII without , & \" or \\");
	}
	if (f[K_GEN]) {
		sub(w, where, "generate");
		if ((rc = yaml_get_count(&c->y, f[K_GEN], w, 0, 1000000000ull, &kv->generate)) < 0)
			return rc;
	}
	if (f[K_VSIZE]) {
		sub(w, where, "value_size");
		uint64_t v;
		if ((rc = yaml_get_count(&c->y, f[K_VSIZE], w, 1, TARGET_KV_VALUE_CAP, &v)) < 0)
			return rc;
		kv->value_size = (uint32_t)v;
	}
	if (f[K_TABLE]) {
		sub(w, where, "table");
		const yaml_node_t *t = f[K_TABLE];
		if (t->type != YAML_MAPPING_NODE)
			return fail(c, PACER_EPARSE, t, w, "expected a mapping of keys to values, got %s",
			            yaml_kind_name(t));
		size_t m = map_len(t);
		if (m > TARGET_MAX_KV_TABLE)
			return fail(c, PACER_ETOOBIG, t, w, "expected at most %d entries", TARGET_MAX_KV_TABLE);
		kv->table = plan_alloc(c->arena, sizeof *kv->table * (m ? m : 1));
		if (!kv->table)
			return oom(c);
		size_t i = 0;
		for (yaml_node_pair_t *p = t->data.mapping.pairs.start; p < t->data.mapping.pairs.top; p++, i++) {
			yaml_node_t *k = node(c, p->key), *v = node(c, p->value);
			if ((rc = get_str(c, k, w, "a key", &kv->table[i].name)) < 0)
				return rc;
			if (!kv_key_ok(kv->table[i].name))
				return fail(c, PACER_EPARSE, k, w,
				            "expected a key of visible ASCII without , & \" or \\");
			if ((rc = get_str(c, v, w, "a value", &kv->table[i].value)) < 0)
				return rc;
			if (strlen(kv->table[i].value) > TARGET_KV_VALUE_CAP)
				return fail(c, PACER_ETOOBIG, v, w, "expected a value of at most %u bytes",
				            TARGET_KV_VALUE_CAP);
			for (const char *q = kv->table[i].value; *q; q++)
				if ((unsigned char)*q < 0x20 || *q == '"' || *q == '\\')
					return fail(c, PACER_EPARSE, v, w,
					            "expected a value without control characters, '\"' or '\\'");
		}
		kv->n_table = m;
		qsort(kv->table, m, sizeof *kv->table, cmp_hdr);
		for (size_t j = 1; j < m; j++)
			if (!strcmp(kv->table[j - 1].name, kv->table[j].name))
				return fail(c, PACER_EPARSE, t, w, "duplicate key '%s'", kv->table[j].name);
	}
	*out = kv;
	return 0;
}

/* ---- misbehaviour --------------------------------------------------- */

int pyaml_misbehave(struct plan_yaml *c, const yaml_node_t *n, const char *where,
                    struct target_misbehave *m)
{
	static const char *const keys[] = {"stall_every", "stall_for", "close_after", "garbage",
	                                   "slow_body", NULL};
	enum { K_SE, K_SF, K_CA, K_GB, K_SB, K_N };
	yaml_node_t *f[K_N];
	char w[WHERE_CAP];
	int rc;
	if ((rc = fields(c, n, where, "misbehaviours", keys, f)) < 0)
		return rc;
	if (!!f[K_SE] != !!f[K_SF])
		return fail(c, PACER_EPARSE, n, where, "expected both stall_every and stall_for, or neither");
	if (f[K_SE]) {
		sub(w, where, "stall_every");
		if ((rc = yaml_get_duration(&c->y, f[K_SE], w, &m->stall_every_ns)) < 0)
			return rc;
		sub(w, where, "stall_for");
		if ((rc = yaml_get_duration(&c->y, f[K_SF], w, &m->stall_for_ns)) < 0)
			return rc;
		if (m->stall_every_ns == 0 || m->stall_for_ns == 0 || m->stall_for_ns >= m->stall_every_ns)
			return fail(c, PACER_ERANGE, f[K_SF], w,
			            "expected 0 < stall_for < stall_every");
	}
	if (f[K_CA]) {
		sub(w, where, "close_after");
		if ((rc = yaml_get_count(&c->y, f[K_CA], w, 1, UINT32_MAX, &m->close_after)) < 0)
			return rc;
	}
	if (f[K_GB]) {
		sub(w, where, "garbage");
		if ((rc = yaml_get_prob(&c->y, f[K_GB], w, &m->garbage)) < 0)
			return rc;
		m->garbage_thresh = m->garbage >= 1 ? UINT64_MAX : (uint64_t)(m->garbage * 18446744073709551616.0);
	}
	if (f[K_SB]) {
		sub(w, where, "slow_body");
		static const char *const sk[] = {"bytes", "every", NULL};
		yaml_node_t *g[2];
		if ((rc = fields(c, f[K_SB], w, "a slow body pace", sk, g)) < 0)
			return rc;
		if (!g[0] || !g[1])
			return fail(c, PACER_EPARSE, f[K_SB], w, "expected both 'bytes' and 'every'");
		char w2[WHERE_CAP];
		uint64_t b;
		sub(w2, w, "bytes");
		if ((rc = yaml_get_count(&c->y, g[0], w2, 1, 1u << 20, &b)) < 0)
			return rc;
		m->slow_bytes = (uint32_t)b;
		sub(w2, w, "every");
		if ((rc = yaml_get_duration(&c->y, g[1], w2, &m->slow_every_ns)) < 0)
			return rc;
		if (m->slow_every_ns == 0 || m->slow_every_ns > 60 * NS_PER_S)
			return fail(c, PACER_ERANGE, g[1], w2, "expected a pause from 1us to 60s");
	}
	return 0;
}
