/* pacer — reading a saved JSON result back (see read.h). */
#include "doc/read.h"

#include <errno.h>
#include <math.h>
#include <openssl/evp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "doc/keys.h"
#include "stats/hist_io.h"
#include "util/err.h"
#include "util/text.h"

const char *result_kind_name(enum result_kind k)
{
	switch (k) {
	case RESULT_KIND_RUN: return "run";
	case RESULT_KIND_RAMP: return "ramp";
	case RESULT_KIND_COMPARE: return "compare";
	}
	return "unknown";
}

void result_free(struct loaded_result *r)
{
	if (!r)
		return;
	if (r->root)
		json_decref(r->root);
	free(r->name);
	memset(r, 0, sizeof *r);
}

/* "MAJOR.MINOR" with 1-4 digits each, nothing else. */
static bool parse_version(const char *s, int *major, int *minor)
{
	int v[2] = {0, 0};
	for (int part = 0; part < 2; part++) {
		int digits = 0;
		while (*s >= '0' && *s <= '9') {
			if (++digits > 4)
				return false;
			v[part] = v[part] * 10 + (*s++ - '0');
		}
		if (!digits)
			return false;
		if (part == 0 && *s++ != '.')
			return false;
	}
	if (*s)
		return false;
	*major = v[0];
	*minor = v[1];
	return true;
}

/* Copy s for a message: at most 40 bytes, then "...". */
static void clip(char *out, size_t cap, const char *s)
{
	size_t n = strlen(s);
	if (n + 1 <= cap && n <= 40) {
		memcpy(out, s, n + 1);
		return;
	}
	snprintf(out, cap, "%.40s...", s);
}

struct need {
	const char *key;
	json_type type;  /* JSON_OBJECT, JSON_ARRAY or JSON_STRING */
};

static const char *type_word(json_type t)
{
	switch (t) {
	case JSON_OBJECT: return "an object";
	case JSON_ARRAY: return "an array";
	case JSON_STRING: return "a string";
	default: return "a value";
	}
}

static int check_fields(const json_t *root, const struct need *need, size_t n, const char *name,
			const char *kind, char *err, size_t errlen)
{
	for (size_t i = 0; i < n; i++) {
		const json_t *v = json_object_get(root, need[i].key);
		if (!v) {
			text_errf(err, errlen, "%s: not a complete pacer %s result: field '%s' is missing",
				name, kind, need[i].key);
			return PACER_EPARSE;
		}
		if (json_typeof(v) != need[i].type) {
			text_errf(err, errlen, "%s: field '%s' is not %s", name, need[i].key,
				type_word(need[i].type));
			return PACER_EPARSE;
		}
	}
	return 0;
}

/* A 1.x phase: an "errors" object with the transport kinds in it. */
static bool v1_phase(const json_t *o)
{
	const json_t *e = json_object_get(o, KEY_ERRORS);
	return json_is_object(e) && json_is_number(json_object_get(e, "connect")) &&
	       !json_object_get(o, KEY_TRANSPORT_ERRORS);
}

static double num_at(const json_t *o, const char *k)
{
	const json_t *v = json_object_get(o, k);
	return json_is_number(v) ? json_number_value(v) : 0;
}

static int upgrade_phase(json_t *ph)
{
	json_t *te = json_object_get(ph, KEY_ERRORS);
	json_incref(te);
	if (json_object_del(ph, KEY_ERRORS) || json_object_set_new(ph, KEY_TRANSPORT_ERRORS, te)) {
		json_decref(te);
		return -ENOMEM;
	}
	double req = num_at(te, KEY_TOTAL) - num_at(te, "connect") - num_at(te, KEY_TLS);
	if (req < 0)
		req = 0;
	if (json_object_set_new(te, KEY_REQUESTS, json_real(req)))
		return -ENOMEM;
	const json_t *succ = json_object_get(ph, KEY_SUCCESS);
	double total;
	if (json_is_object(succ) && json_is_number(json_object_get(succ, KEY_FAILED))) {
		total = num_at(succ, KEY_FAILED);
	} else {
		/* before rules: success was a status in 200..399 */
		const json_t *cls =
			json_object_get(json_object_get(ph, KEY_RESPONSES), KEY_BY_CLASS);
		double ok = num_at(cls, "2xx") + num_at(cls, "3xx");
		double done = num_at(json_object_get(ph, KEY_REQUESTS), KEY_COMPLETED);
		total = req + (done > ok ? done - ok : 0);
	}
	double sent = num_at(json_object_get(ph, KEY_REQUESTS), KEY_SENT);
	double pct = sent > 0 ? 100.0 * total / sent : 0;
	json_t *e = json_pack("{s:f, s:f, s:f, s:f, s:{}}", "total", total, "pct", pct,
			      KEY_FAILED_RESPONSES, total > req ? total - req : 0, "transport", req,
			      KEY_BY_STATUS);
	/* with the default rule, the failed statuses are those outside 200..399 */
	const char *rule = json_string_value(json_object_get(succ, KEY_RULE));
	if (e && (!succ || (rule && strstr(rule, "(default)")))) {
		const char *st;
		json_t *n;
		json_t *by = json_object_get(e, KEY_BY_STATUS);
		json_object_foreach(
			json_object_get(json_object_get(ph, KEY_RESPONSES), KEY_BY_STATUS), st, n) {
			long code = strtol(st, NULL, 10);
			if (json_is_number(n) && (code < 200 || code > 399) &&
			    json_object_set(by, st, n)) {
				json_decref(e);
				return -ENOMEM;
			}
		}
	}
	if (!e || json_object_set_new(ph, KEY_ERRORS, e) ||
	    json_object_set_new(ph, KEY_ERROR_PCT, json_real(pct)))
		return -ENOMEM;
	return 0;
}

int result_upgrade_v1(json_t *root)
{
	if (json_is_object(root)) {
		if (v1_phase(root)) {
			int rc = upgrade_phase(root);
			if (rc)
				return rc;
		}
		const char *k;
		json_t *v;
		json_object_foreach(root, k, v) {
			int rc = result_upgrade_v1(v);
			if (rc)
				return rc;
		}
	} else if (json_is_array(root)) {
		size_t i;
		json_t *v;
		json_array_foreach(root, i, v) {
			int rc = result_upgrade_v1(v);
			if (rc)
				return rc;
		}
	}
	return 0;
}

/* Every "hist" object of the document, wherever it is, read by rr_hist (the
 * reader hgrm, hlog, charts and the tables share), so that no format renders
 * what another refuses. `path` holds the JSON path to `v` (len bytes). */
#define HIST_WALK_DEPTH 32
static int check_hists(const json_t *v, char *path, size_t len, size_t cap, int depth,
		       const char *name, char *err, size_t errlen)
{
	if (depth > HIST_WALK_DEPTH)
		return 0; /* deeper than any writer puts a histogram, or reads one */
	if (json_is_array(v)) {
		size_t i;
		const json_t *x;
		json_array_foreach(v, i, x) {
			int n = snprintf(path + len, cap - len, "[%zu]", i);
			size_t l2 = n > 0 && (size_t)n < cap - len ? len + (size_t)n : len;
			int rc = check_hists(x, path, l2, cap, depth + 1, name, err, errlen);
			path[len] = '\0';
			if (rc)
				return rc;
		}
		return 0;
	}
	if (!json_is_object(v))
		return 0;
	const char *key;
	const json_t *x;
	json_object_foreach((json_t *)v, key, x) {
		int n = snprintf(path + len, cap - len, "%s%s", len ? "." : "", key);
		size_t l2 = n > 0 && (size_t)n < cap - len ? len + (size_t)n : len;
		int rc = 0;
		if (strcmp(key, "hist") == 0) {
			struct hist h;
			char e2[160];
			rc = rr_hist(x, &h, e2, sizeof e2);
			if (rc == 0)
				hist_free(&h);
			else if (rc == -ENOMEM)
				text_errf(err, errlen, "%s: out of memory reading %s", name, path);
			else
				text_errf(err, errlen, "%s: %s: %s", name, path, e2);
		} else {
			rc = check_hists(x, path, l2, cap, depth + 1, name, err, errlen);
		}
		path[len] = '\0';
		if (rc)
			return rc;
	}
	return 0;
}

static int check_result(struct loaded_result *r, const char *name, char *err, size_t errlen)
{
	const json_t *root = r->root;
	if (!json_is_object(root)) {
		text_errf(err, errlen, "%s: not a pacer result (the JSON is not an object)", name);
		return PACER_EPARSE;
	}
	const json_t *ver = json_object_get(root, KEY_SCHEMA_VERSION);
	if (!ver) {
		text_errf(err, errlen, "%s: not a pacer result (no schema_version)", name);
		return PACER_EPARSE;
	}
	char shown[64];
	if (!json_is_string(ver)) {
		text_errf(err, errlen, "%s: schema_version is not a string", name);
		return PACER_EPARSE;
	}
	clip(shown, sizeof shown, json_string_value(ver));
	if (!parse_version(json_string_value(ver), &r->schema_major, &r->schema_minor)) {
		text_errf(err, errlen, "%s: schema_version '%s' is not MAJOR.MINOR", name, shown);
		return PACER_EPARSE;
	}
	if (r->schema_major < RESULT_SCHEMA_OLDEST || r->schema_major > RESULT_SCHEMA_MAJOR) {
		text_errf(err, errlen,
			"%s: schema_version %s is not supported: this pacer reads %d.x to %d.x results",
			name, shown, RESULT_SCHEMA_OLDEST, RESULT_SCHEMA_MAJOR);
		return PACER_EUNSUPPORTED;
	}
	if (r->schema_major == 1 && result_upgrade_v1(r->root) != 0) {
		text_errf(err, errlen, "%s: out of memory upgrading a %s result", name, shown);
		return -ENOMEM;
	}
	const char *kind = rr_str(root, KEY_KIND);
	if (!kind) {
		text_errf(err, errlen, "%s: not a pacer result (no kind)", name);
		return PACER_EPARSE;
	}
	static const struct need common[] = {{"plan", JSON_OBJECT}};
	static const struct need run[] = {{"measure", JSON_OBJECT}};
	static const struct need ramp[] = {{"steps", JSON_ARRAY}};
	static const struct need cmp[] = {{"variants", JSON_ARRAY}};
	const struct need *extra;
	size_t n_extra;
	if (strcmp(kind, "run") == 0) {
		r->kind = RESULT_KIND_RUN;
		extra = run;
		n_extra = 1;
	} else if (strcmp(kind, "ramp") == 0) {
		r->kind = RESULT_KIND_RAMP;
		extra = ramp;
		n_extra = 1;
	} else if (strcmp(kind, "compare") == 0) {
		r->kind = RESULT_KIND_COMPARE;
		extra = cmp;
		n_extra = 1;
	} else {
		clip(shown, sizeof shown, kind);
		text_errf(err, errlen, "%s: unknown kind '%s' (expected run, ramp or compare)", name,
			shown);
		return PACER_EPARSE;
	}
	int rc = check_fields(root, common, 1, name, kind, err, errlen);
	if (!rc)
		rc = check_fields(root, extra, n_extra, name, kind, err, errlen);
	if (rc)
		return rc;
	/* ramp steps and compare variants must be objects: the writers index them */
	const char *arr_key = r->kind == RESULT_KIND_RAMP ? "steps" : "variants";
	if (r->kind != RESULT_KIND_RUN) {
		const json_t *arr = json_object_get(root, arr_key);
		size_t i;
		const json_t *v;
		json_array_foreach(arr, i, v) {
			if (!json_is_object(v)) {
				text_errf(err, errlen, "%s: %s[%zu] is not an object", name, arr_key, i);
				return PACER_EPARSE;
			}
		}
		if (r->kind == RESULT_KIND_COMPARE && json_array_size(arr) == 0) {
			text_errf(err, errlen, "%s: a compare result with no variants", name);
			return PACER_EPARSE;
		}
	}
	char path[256] = "";
	return check_hists(root, path, 0, sizeof path, 0, name, err, errlen);
}

static void make_id(struct loaded_result *r, const char *buf, size_t len)
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int mdlen = 0;
	if (!EVP_Digest(buf, len, md, &mdlen, EVP_sha256(), NULL) || mdlen < 8) {
		snprintf(r->id, sizeof r->id, "unknown");
		return;
	}
	for (int i = 0; i < 8; i++)
		snprintf(r->id + 2 * i, 3, "%02x", md[i]);
}

int result_read_mem(struct loaded_result *r, const char *buf, size_t len, const char *name,
		    char *err, size_t errlen)
{
	memset(r, 0, sizeof *r);
	if (!name)
		name = "result";
	if (err && errlen)
		err[0] = '\0';
	if (len > RESULT_READ_CAP) {
		text_errf(err, errlen, "%s: larger than %u MiB", name, RESULT_READ_CAP >> 20);
		return PACER_ETOOBIG;
	}
	json_error_t je;
	r->root = json_loadb(buf, len, 0, &je);
	if (!r->root) {
		if (je.position == 0 && len == 0)
			text_errf(err, errlen, "%s: not JSON: the file is empty", name);
		else
			text_errf(err, errlen, "%s: not JSON: line %d column %d: %s", name, je.line,
				je.column, je.text);
		return PACER_EPARSE;
	}
	int rc = check_result(r, name, err, errlen);
	if (rc) {
		result_free(r);
		return rc;
	}
	r->name = strdup(name);
	if (!r->name) {
		result_free(r);
		text_errf(err, errlen, "%s: out of memory", name);
		return -ENOMEM;
	}
	make_id(r, buf, len);
	return 0;
}

/* ---- accessors ------------------------------------------------------------ */

const json_t *rr_get(const json_t *obj, const char *path)
{
	if (!obj)
		return NULL;
	if (!path || !*path)
		return obj;
	char key[128];
	const char *p = path;
	const json_t *cur = obj;
	while (*p) {
		const char *dot = strchr(p, '.');
		size_t n = dot ? (size_t)(dot - p) : strlen(p);
		if (n == 0 || n >= sizeof key || !json_is_object(cur))
			return NULL;
		memcpy(key, p, n);
		key[n] = '\0';
		cur = json_object_get(cur, key);
		if (!cur)
			return NULL;
		p += n;
		if (*p == '.')
			p++;
	}
	return cur;
}

bool rr_num(const json_t *obj, const char *path, double *out)
{
	const json_t *v = rr_get(obj, path);
	if (!v || !json_is_number(v))
		return false;
	double d = json_number_value(v);
	if (!isfinite(d))
		return false;
	*out = d;
	return true;
}

double rr_num_or(const json_t *obj, const char *path, double def)
{
	double d;
	return rr_num(obj, path, &d) ? d : def;
}

const char *rr_str(const json_t *obj, const char *path)
{
	const json_t *v = rr_get(obj, path);
	return v && json_is_string(v) ? json_string_value(v) : NULL;
}

bool rr_bool(const json_t *obj, const char *path, bool *out)
{
	const json_t *v = rr_get(obj, path);
	if (!v || !json_is_boolean(v))
		return false;
	*out = json_is_true(v);
	return true;
}

bool rr_true(const json_t *obj, const char *path)
{
	const json_t *v = rr_get(obj, path);
	return v && json_is_true(v);
}

const json_t *rr_arr(const json_t *obj, const char *path)
{
	const json_t *v = rr_get(obj, path);
	return v && json_is_array(v) ? v : NULL;
}

const json_t *rr_obj(const json_t *obj, const char *path)
{
	const json_t *v = rr_get(obj, path);
	return v && json_is_object(v) ? v : NULL;
}

size_t rr_len(const json_t *obj, const char *path)
{
	const json_t *v = rr_arr(obj, path);
	return v ? json_array_size(v) : 0;
}

bool rr_as_u64(const json_t *v, uint64_t *out)
{
	if (json_is_integer(v)) {
		json_int_t i = json_integer_value(v);
		if (i < 0)
			return false;
		*out = (uint64_t)i;
		return true;
	}
	if (json_is_real(v)) {
		double d = json_real_value(v);
		if (!(d >= 0) || d > 9007199254740992.0 || d != floor(d))
			return false;
		*out = (uint64_t)d;
		return true;
	}
	return false;
}

int rr_hist(const json_t *hobj, struct hist *h, char *err, size_t errlen)
{
	memset(h, 0, sizeof *h);
	if (!json_is_object(hobj)) {
		text_errf(err, errlen, "histogram is not an object");
		return PACER_EPARSE;
	}
	const char *unit = rr_str(hobj, KEY_UNIT);
	if (unit && strcmp(unit, "ns") != 0) {
		char shown[64];
		clip(shown, sizeof shown, unit);
		text_errf(err, errlen, "histogram unit '%s' is not ns", shown);
		return PACER_EPARSE;
	}
	uint64_t sub_bits = HIST_SUB_BITS, max_value = HIST_MAX_NS;
	const json_t *v = json_object_get(hobj, KEY_SUB_BITS);
	if (v && (!rr_as_u64(v, &sub_bits) || sub_bits < 2 || sub_bits > RESULT_HIST_MAX_SUB_BITS)) {
		text_errf(err, errlen, "histogram sub_bits is not a whole number from 2 to %d",
			RESULT_HIST_MAX_SUB_BITS);
		return PACER_EPARSE;
	}
	v = json_object_get(hobj, KEY_MAX_VALUE);
	if (v && (!rr_as_u64(v, &max_value) || max_value < 1 || max_value > RESULT_HIST_MAX_VALUE)) {
		text_errf(err, errlen, "histogram max_value is not a whole number from 1 to 2^50");
		return PACER_EPARSE;
	}
	const json_t *counts = json_object_get(hobj, KEY_COUNTS);
	if (!json_is_array(counts)) {
		text_errf(err, errlen, "histogram counts is not an array");
		return PACER_EPARSE;
	}
	int rc = hist_init(h, (uint32_t)sub_bits, max_value);
	if (rc) {
		text_errf(err, errlen, "histogram: %s", err_name(rc));
		return rc == -ENOMEM ? rc : PACER_EPARSE;
	}
	size_t i;
	const json_t *pair;
	uint64_t total = 0;
	json_array_foreach(counts, i, pair) {
		uint64_t val, cnt;
		if (!json_is_array(pair) || json_array_size(pair) != 2 ||
		    !rr_as_u64(json_array_get(pair, 0), &val) || !rr_as_u64(json_array_get(pair, 1), &cnt)) {
			text_errf(err, errlen, "histogram counts[%zu] is not [value_ns, count]", i);
			hist_free(h);
			return PACER_EPARSE;
		}
		if (val > max_value) {
			text_errf(err, errlen, "histogram counts[%zu]: value %llu above max_value %llu", i,
				(unsigned long long)val, (unsigned long long)max_value);
			hist_free(h);
			return PACER_EPARSE;
		}
		if (__builtin_add_overflow(total, cnt, &total) || total > (1ull << 62)) {
			text_errf(err, errlen, "histogram counts overflow");
			hist_free(h);
			return PACER_EPARSE;
		}
		const uint64_t p[1][2] = {{val, cnt}};
		hist_from_pairs(h, p, 1);
	}
	return 0;
}

int rr_timing_hist(const json_t *timing, struct hist *h, char *err, size_t errlen)
{
	memset(h, 0, sizeof *h);
	const json_t *ho = rr_obj(timing, KEY_HIST);
	if (!ho) {
		text_errf(err, errlen, "no histogram");
		return PACER_EPARSE;
	}
	int rc = rr_hist(ho, h, err, errlen);
	if (rc || !h->total)
		return rc;
	double min_us, max_us, mean_us;
	if (rr_num(timing, KEY_MIN_US, &min_us) && min_us >= 0 &&
	    min_us * 1e3 <= (double)h->max_value) {
		uint64_t v = (uint64_t)llround(min_us * 1e3);
		if (hist_index(h, v) == hist_index(h, h->min))
			h->min = v;
	}
	if (rr_num(timing, KEY_MAX_US, &max_us) && max_us >= 0 &&
	    max_us * 1e3 <= (double)h->max_value) {
		uint64_t v = (uint64_t)llround(max_us * 1e3);
		if (hist_index(h, v) == hist_index(h, h->max) && v >= h->min)
			h->max = v;
	}
	if (rr_num(timing, KEY_MEAN_US, &mean_us) && mean_us * 1e3 >= (double)h->min &&
	    mean_us * 1e3 <= (double)h->max)
		h->sum = (long double)mean_us * 1e3L * (long double)h->total;
	return 0;
}
