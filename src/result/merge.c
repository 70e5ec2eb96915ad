/* pacer — merging segment results (see merge.h). */
#include "result/merge.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan/slo.h"
#include "result/verdict.h"
#include "stats/hist.h"
#include "util/err.h"
#include "util/text.h"

struct mctx {
	const struct merge_input *in; /* sorted by segment index */
	size_t n;
	char *err;
	size_t errlen;
};

static json_t *real_dp(double x, int dp)
{
	double s = pow(10, dp);
	return json_real(isfinite(x) ? round(x * s) / s : 0);
}

static int set_new(json_t *o, const char *k, json_t *v)
{
	if (!v || json_object_set_new(o, k, v))
		return -ENOMEM;
	return 0;
}

static const json_t *jget(const json_t *o, const char *k)
{
	return json_is_object(o) ? json_object_get(o, k) : NULL;
}

static bool as_u64(const json_t *v, uint64_t *out)
{
	if (json_is_integer(v) && json_integer_value(v) >= 0) {
		*out = (uint64_t)json_integer_value(v);
		return true;
	}
	if (json_is_real(v)) {
		double d = json_real_value(v);
		if (d >= 0 && d <= 9007199254740992.0 && d == floor(d)) {
			*out = (uint64_t)d;
			return true;
		}
	}
	return false;
}

static uint64_t u64_at(const json_t *o, const char *k)
{
	uint64_t v = 0;
	return as_u64(jget(o, k), &v) ? v : 0;
}

static double num_at(const json_t *o, const char *k, double def)
{
	const json_t *v = jget(o, k);
	return json_is_number(v) && isfinite(json_number_value(v)) ? json_number_value(v) : def;
}

/* ---- segment identity and plan equality ---------------------------------- */

/* plan.segment {index, count} of a segment result. */
static bool seg_of(const json_t *root, uint64_t *index, uint64_t *count)
{
	const json_t *s = jget(jget(root, "plan"), "segment");
	return as_u64(jget(s, "index"), index) && as_u64(jget(s, "count"), count) && *count >= 1 &&
	       *index < *count;
}

/* Fields of a plan that differ between the segments of one plan: the
 * segment, the command line (--segment, -o), and with self-contained
 * targets the URL and the encoded requests (each segment's embedded target
 * has its own port, which the Host header carries). */
static bool plan_skip(const char *path, bool self_contained)
{
	return !strcmp(path, "segment") || !strcmp(path, "argv") ||
	       (self_contained && (!strcmp(path, "url") || !strcmp(path, "workload")));
}

/* The first path under which a and b differ (into path), or false. */
static bool first_diff(const json_t *a, const json_t *b, char *path, size_t cap, size_t at,
		       bool self_contained)
{
	if (json_is_object(a) && json_is_object(b)) {
		const char *k;
		const json_t *v;
		for (int pass = 0; pass < 2; pass++) {
			const json_t *x = pass ? b : a, *y = pass ? a : b;
			json_object_foreach((json_t *)x, k, v) {
				int w = snprintf(path + at, cap - at, "%s%s", at ? "." : "", k);
				size_t next = at + (w > 0 ? (size_t)w : 0);
				if (next >= cap)
					next = cap - 1;
				if (at == 0 && plan_skip(k, self_contained))
					continue;
				const json_t *o = json_object_get(y, k);
				if (!o)
					return true;
				if (first_diff(pass ? o : v, pass ? v : o, path, cap, next, self_contained))
					return true;
			}
		}
		path[at] = '\0';
		return false;
	}
	if (json_is_array(a) && json_is_array(b) && json_array_size(a) == json_array_size(b)) {
		for (size_t i = 0; i < json_array_size(a); i++) {
			int w = snprintf(path + at, cap - at, "[%zu]", i);
			size_t next = at + (w > 0 ? (size_t)w : 0);
			if (next >= cap)
				next = cap - 1;
			if (first_diff(json_array_get(a, i), json_array_get(b, i), path, cap, next,
				       self_contained))
				return true;
		}
		path[at] = '\0';
		return false;
	}
	if (json_is_number(a) && json_is_number(b))
		return json_number_value(a) != json_number_value(b);
	return !json_equal((json_t *)a, (json_t *)b);
}

static int check_one(const struct merge_input *in, size_t i, uint64_t count,
		     const struct merge_input **seen, char *err, size_t errlen);
static int check_plans(const struct merge_input **sorted, size_t n, char *err, size_t errlen);

/* Check in[0..n) are the segments of one plan; on success sorted[k] is
 * segment k (n == the segment count). */
static int check_inputs(const struct merge_input *in, size_t n, const struct merge_input **sorted,
			char *err, size_t errlen)
{
	uint64_t count = 0, k0;
	if (seg_of(in[0].root, &k0, &count) && count > MERGE_MAX_INPUTS) {
		text_errf(err, errlen, "%s: segment %llu/%llu: merge takes at most %d segments",
			in[0].name, (unsigned long long)k0, (unsigned long long)count, MERGE_MAX_INPUTS);
		return PACER_EUNSUPPORTED;
	}
	/* by index, over the count the first file gives */
	const struct merge_input **seen = calloc(count ? count : 1, sizeof *seen);
	if (!seen)
		return -ENOMEM;
	int rc = 0;
	for (size_t i = 0; i < n && !rc; i++)
		rc = check_one(in, i, count, seen, err, errlen);
	if (!rc && count != n) {
		for (uint64_t k = 0; k < count; k++)
			if (!seen[k]) {
				text_errf(err, errlen, "segment %llu/%llu is missing (%zu file%s given, %llu "
						     "needed)",
					(unsigned long long)k, (unsigned long long)count, n,
					n == 1 ? "" : "s", (unsigned long long)count);
				rc = PACER_EUNSUPPORTED;
				break;
			}
	}
	if (!rc)
		memcpy(sorted, seen, n * sizeof *sorted);
	free((void *)seen);
	if (rc)
		return rc;
	return check_plans(sorted, n, err, errlen);
}

/* Input i: a run or ramp segment result of `count` segments, of the first
 * one's kind, whose index is not taken yet (seen[index] = it). */
static int check_one(const struct merge_input *in, size_t i, uint64_t count,
		     const struct merge_input **seen, char *err, size_t errlen)
{
	const struct merge_input **sorted = seen;
	{
		const char *kind = json_string_value(jget(in[i].root, "kind"));
		if (!kind || (strcmp(kind, "run") && strcmp(kind, "ramp"))) {
			text_errf(err, errlen, "%s: a %s result: merge takes the segments of a run, ramp or "
					     "bench",
				in[i].name, kind ? kind : "non-pacer");
			return PACER_EPARSE;
		}
		uint64_t k, c;
		if (!seg_of(in[i].root, &k, &c)) {
			text_errf(err, errlen, "%s: not a segment result (no plan.segment): run each part "
					     "with --segment K/N",
				in[i].name);
			return PACER_EPARSE;
		}
		const char *kind0 = json_string_value(jget(in[0].root, "kind"));
		if (strcmp(kind, kind0)) {
			text_errf(err, errlen, "%s is a %s result, %s a %s result: not segments of one plan",
				in[i].name, kind, in[0].name, kind0);
			return PACER_EUNSUPPORTED;
		}
		if (c != count) {
			text_errf(err, errlen, "%s is segment %llu/%llu but %s is of %llu segments: not "
					     "segments of one plan",
				in[i].name, (unsigned long long)k, (unsigned long long)c, in[0].name,
				(unsigned long long)count);
			return PACER_EUNSUPPORTED;
		}
		if (sorted[k]) {
			text_errf(err, errlen, "%s and %s are both segment %llu/%llu", sorted[k]->name,
				in[i].name, (unsigned long long)k, (unsigned long long)c);
			return PACER_EUNSUPPORTED;
		}
		sorted[k] = &in[i];
	}
	return 0;
}

/* The plans of the sorted segments are one plan. */
static int check_plans(const struct merge_input **sorted, size_t n, char *err, size_t errlen)
{
	const json_t *p0 = jget(sorted[0]->root, "plan");
	const char *mode = json_string_value(jget(sorted[0]->root, "mode"));
	bool sc = mode && !strcmp(mode, "self_contained");
	for (size_t i = 1; i < n; i++) {
		const json_t *p = jget(sorted[i]->root, "plan");
		for (int t = 0; t < 2; t++) {
			const char *sect = t ? "workload" : "table";
			if (t && sc)
				break;
			const char *h0 = json_string_value(jget(jget(p0, sect), "sha256"));
			const char *h = json_string_value(jget(jget(p, sect), "sha256"));
			if ((h0 || h) && (!h0 || !h || strcmp(h0, h))) {
				text_errf(err, errlen, "%s and %s sent different requests (%s sha256 %.12s vs "
						     "%.12s): not segments of one plan",
					sorted[0]->name, sorted[i]->name, t ? "request" : "table",
					h0 ? h0 : "none", h ? h : "none");
				return PACER_EUNSUPPORTED;
			}
		}
		char path[256] = "";
		if (first_diff(p0, p, path, sizeof path, 0, sc)) {
			text_errf(err, errlen, "%s and %s have different plans (plan.%s differs): not "
					     "segments of one plan",
				sorted[0]->name, sorted[i]->name, path);
			return PACER_EUNSUPPORTED;
		}
	}
	return 0;
}

/* ---- histograms ----------------------------------------------------------- */

/* Add the pairs of a saved hist object into h (initialised from the first
 * one's layout when h->counts is NULL). */
static int hist_add_obj(struct mctx *m, struct hist *h, const json_t *ho, const char *what,
			size_t seg)
{
	uint64_t sub_bits = HIST_SUB_BITS, max_value = HIST_MAX_NS;
	const json_t *v = jget(ho, "sub_bits");
	if (v && !as_u64(v, &sub_bits))
		sub_bits = 0;
	v = jget(ho, "max_value");
	if (v && !as_u64(v, &max_value))
		max_value = 0;
	const json_t *counts = jget(ho, "counts");
	if (!json_is_object(ho) || !json_is_array(counts) || sub_bits < 2 || sub_bits > 16 ||
	    max_value < 1 || max_value > (1ull << 50)) {
		text_errf(m->err, m->errlen, "%s: %s: no usable histogram", m->in[seg].name, what);
		return PACER_EPARSE;
	}
	if (!h->counts) {
		int rc = hist_init(h, (uint32_t)sub_bits, max_value);
		if (rc)
			return rc == -ENOMEM ? rc : PACER_EPARSE;
	} else if (h->sub_bits != sub_bits || h->max_value != max_value) {
		text_errf(m->err, m->errlen, "%s and %s: %s histograms of different layouts",
			m->in[0].name, m->in[seg].name, what);
		return PACER_EUNSUPPORTED;
	}
	size_t i;
	const json_t *pair;
	json_array_foreach(counts, i, pair) {
		uint64_t val, cnt;
		if (!json_is_array(pair) || json_array_size(pair) != 2 ||
		    !as_u64(json_array_get(pair, 0), &val) || !as_u64(json_array_get(pair, 1), &cnt) ||
		    val > max_value || cnt > (1ull << 50) || h->total + cnt > (1ull << 62)) {
			text_errf(m->err, m->errlen, "%s: %s: histogram counts[%zu] is not [value_ns, count]",
				m->in[seg].name, what, i);
			return PACER_EPARSE;
		}
		hist_record_n(h, val, cnt);
	}
	return 0;
}

/* The counts array of h, as pacer writes it. */
static json_t *hist_counts(const struct hist *h)
{
	json_t *a = json_array();
	size_t cur = 0;
	uint64_t v, c;
	while (a && hist_next_nonzero(h, &cur, &v, &c))
		if (json_array_append_new(a, json_pack("[I,I]", (json_int_t)v, (json_int_t)c))) {
			json_decref(a);
			return NULL;
		}
	return a;
}

/* Merge the timing objects objs[0..n) (a phase's latency, ...; NULL:
 * absent) into a new one. The histograms' bucket counts are added; the
 * exact min, max and mean come from each timing's own (min_us, max_us,
 * mean_us). names: the short layout of a by_name latency. */
static int timing_merge(struct mctx *m, const json_t *const *objs, bool names, const char *what,
			json_t **out)
{
	struct hist h = {0};
	uint64_t mn = UINT64_MAX, mx = 0;
	long double sum = 0;
	int rc = 0;
	for (size_t s = 0; s < m->n && !rc; s++) {
		if (!objs[s])
			continue;
		const json_t *ho = jget(objs[s], "hist");
		if (!ho) {
			text_errf(m->err, m->errlen, "%s: %s: no histogram (written by an older pacer?)",
				m->in[s].name, what);
			rc = PACER_EPARSE;
			break;
		}
		uint64_t before = h.total;
		rc = hist_add_obj(m, &h, ho, what, s);
		uint64_t cnt = h.total - before;
		if (rc || !cnt)
			continue;
		double mn_us = num_at(objs[s], "min_us", -1), mx_us = num_at(objs[s], "max_us", -1);
		double mean_us = num_at(objs[s], "mean_us", -1);
		if (mn_us >= 0 && llround(mn_us * 1e3) < (long long)mn)
			mn = (uint64_t)llround(mn_us * 1e3);
		if (mx_us >= 0 && (uint64_t)llround(mx_us * 1e3) > mx)
			mx = (uint64_t)llround(mx_us * 1e3);
		sum += (long double)(mean_us >= 0 ? mean_us : 0) * 1e3L * (long double)cnt;
	}
	if (rc) {
		hist_free(&h);
		return rc;
	}
	if (!h.counts) {
		*out = json_deep_copy(objs[0]);
		return *out ? 0 : -ENOMEM;
	}
	/* The exact figures the segments measured, where they are consistent
	 * with the buckets (a hand-edited file cannot move them elsewhere). */
	if (h.total) {
		if (mn != UINT64_MAX && hist_index(&h, mn) == hist_index(&h, h.min))
			h.min = mn;
		if (mx && hist_index(&h, mx) == hist_index(&h, h.max) && mx >= h.min)
			h.max = mx;
		long double mean = sum / (long double)h.total;
		if (mean >= (long double)h.min && mean <= (long double)h.max)
			h.sum = sum;
	}
	json_t *o = json_object();
	static const struct {
		const char *key;
		double p;
	} pcts[] = {{"p50_us", 50}, {"p90_us", 90}, {"p99_us", 99}, {"p99_9_us", 99.9},
		    {"p99_99_us", 99.99}};
	rc = o ? set_new(o, "count", json_integer((json_int_t)h.total)) : -ENOMEM;
	if (!names) {
		if (!rc)
			rc = set_new(o, "min_us", real_dp(h.total ? (double)h.min / 1e3 : 0, 3));
		if (!rc)
			rc = set_new(o, "mean_us", real_dp(hist_mean(&h) / 1e3, 3));
		if (!rc)
			rc = set_new(o, "stddev_us", real_dp(hist_stddev(&h) / 1e3, 3));
	}
	for (size_t i = 0; i < (names ? 4u : 5u) && !rc; i++)
		rc = set_new(o, pcts[i].key, real_dp((double)hist_percentile(&h, pcts[i].p) / 1e3, 3));
	if (!rc)
		rc = set_new(o, "max_us", real_dp(h.total ? (double)h.max / 1e3 : 0, 3));
	if (names) {
		if (!rc)
			rc = set_new(o, "mean_us", real_dp(hist_mean(&h) / 1e3, 3));
		if (!rc)
			rc = set_new(o, "sub_bits", json_integer(h.sub_bits));
	}
	if (!rc) {
		json_t *ho = json_pack("{s:s, s:I, s:I}", "unit", "ns", "sub_bits",
				       (json_int_t)h.sub_bits, "max_value", (json_int_t)h.max_value);
		rc = ho ? set_new(ho, "counts", hist_counts(&h)) : -ENOMEM;
		if (!rc)
			rc = set_new(o, "hist", ho);
		else
			json_decref(ho);
	}
	hist_free(&h);
	if (rc) {
		json_decref(o);
		return rc;
	}
	*out = o;
	return 0;
}

/* ---- counters ------------------------------------------------------------- */

/* dst += src over every integer leaf of two objects (keys only in src are
 * copied); strings, reals and arrays of dst stay. */
static int sum_ints(json_t *dst, const json_t *src)
{
	const char *k;
	json_t *v;
	json_object_foreach((json_t *)src, k, v) {
		json_t *d = json_object_get(dst, k);
		if (!d) {
			if (json_object_set_new(dst, k, json_deep_copy(v)))
				return -ENOMEM;
		} else if (json_is_object(d) && json_is_object(v)) {
			int rc = sum_ints(d, v);
			if (rc)
				return rc;
		} else if (json_is_integer(d) && json_is_integer(v)) {
			json_integer_set(d, json_integer_value(d) + json_integer_value(v));
		} else if (json_is_null(d) && !json_is_null(v)) {
			/* the first segment had none (a TLS version, say): take this one's */
			if (json_object_set_new(dst, k, json_deep_copy(v)))
				return -ENOMEM;
		}
	}
	return 0;
}

static double pct_of(uint64_t a, uint64_t b)
{
	return b ? 100.0 * (double)a / (double)b : 0;
}

static bool is_timing(const json_t *v)
{
	return json_is_object(v) && json_is_object(json_object_get(v, "hist")) &&
	       json_object_get(v, "p50_us");
}

/* Merge the array of objects at key (by_name: matched by name; hosts and
 * outcomes: by position) of every segment's phase into dst's. */
static int merge_rows(struct mctx *m, json_t *dst, const json_t *const *ph, const char *key)
{
	json_t *rows = json_object_get(dst, key);
	if (!json_is_array(rows))
		return 0;
	bool by_name = !strcmp(key, "by_name");
	size_t nrows = json_array_size(rows);
	for (size_t r = 0; r < nrows; r++) {
		json_t *row = json_array_get(rows, r);
		const char *name = json_string_value(json_object_get(row, "name"));
		const json_t **lat = calloc(m->n, sizeof *lat);
		if (!lat)
			return -ENOMEM;
		json_t *acc = json_deep_copy(row);
		int rc = acc ? 0 : -ENOMEM;
		json_object_del(acc, "latency");
		for (size_t s = 0; s < m->n && !rc; s++) {
			const json_t *srows = jget(ph[s], key);
			const json_t *sr = NULL;
			for (size_t i = 0; i < json_array_size(srows) && !sr; i++) {
				const json_t *c = json_array_get(srows, i);
				if (by_name ? (name && json_is_string(jget(c, "name")) &&
					       !strcmp(name, json_string_value(jget(c, "name"))))
					    : i == r)
					sr = c;
			}
			if (!sr)
				continue;
			lat[s] = jget(sr, "latency");
			if (s > 0) {
				json_t *tmp = json_deep_copy(sr);
				json_object_del(tmp, "latency");
				rc = tmp ? sum_ints(acc, tmp) : -ENOMEM;
				json_decref(tmp);
			}
		}
		if (!rc && by_name) {
			uint64_t sent = u64_at(acc, "sent"), errs = u64_at(acc, "errors");
			if (json_object_get(row, "pooled_names"))
				rc = set_new(acc, "pooled_names",
					     json_deep_copy(json_object_get(row, "pooled_names")));
			rc = set_new(acc, "error_pct", real_dp(pct_of(errs, sent), 4));
			if (!rc && lat[0]) {
				json_t *l;
				char what[160];
				snprintf(what, sizeof what, "%s '%s' latency", key, name ? name : "?");
				rc = timing_merge(m, lat, true, what, &l);
				if (!rc)
					rc = set_new(acc, "latency", l);
			}
		} else if (!rc && json_object_get(row, "port")) {
			rc = set_new(acc, "port", json_deep_copy(json_object_get(row, "port")));
		} else if (!rc && json_object_get(acc, "rate_pct")) {
			rc = set_new(acc, "rate_pct",
				     real_dp(pct_of(u64_at(acc, "count"), u64_at(acc, "of")), 4));
		}
		free(lat);
		if (rc || json_array_set_new(rows, r, acc)) {
			json_decref(acc);
			return rc ? rc : -ENOMEM;
		}
	}
	return 0;
}

/* Merge the phase objects ph[0..n) (a run's measure or warm-up, a ramp
 * step's measure) into dst (a copy of ph[0]). */
static int phase_merge(struct mctx *m, json_t *dst, const json_t *const *ph, const char *what)
{
	const char *k;
	json_t *v;
	int rc = 0;
	const json_t **t = calloc(m->n, sizeof *t);
	if (!t)
		return -ENOMEM;
	json_object_foreach(dst, k, v) {
		if (is_timing(v)) {
			for (size_t s = 0; s < m->n; s++)
				t[s] = jget(ph[s], k);
			char w[160];
			snprintf(w, sizeof w, "%s.%s", what, k);
			json_t *merged;
			rc = timing_merge(m, t, false, w, &merged);
			if (!rc && json_object_set_new(dst, k, merged))
				rc = -ENOMEM;
		} else if (!strcmp(k, "by_name") || !strcmp(k, "hosts")) {
			rc = merge_rows(m, dst, ph, k);
		} else if (!strcmp(k, "duration_s") || !strcmp(k, "rate")) {
			continue;
		} else if (!strcmp(k, "success")) {
			for (size_t s = 1; s < m->n && !rc; s++) {
				json_t *tmp = json_deep_copy(jget(ph[s], k));
				if (tmp)
					json_object_del(tmp, "outcomes");
				rc = tmp ? sum_ints(v, tmp) : 0;
				json_decref(tmp);
			}
		} else if (!strcmp(k, "outcomes")) {
			rc = merge_rows(m, dst, ph, k);
		} else if (!strcmp(k, "tls")) {
			for (size_t s = 1; s < m->n && !rc; s++)
				if (json_is_object(jget(ph[s], k)))
					rc = sum_ints(v, jget(ph[s], k));
			/* the distinct failure reasons, at most 4 as a run keeps */
			json_t *fr = json_object_get(v, "failure_reasons");
			for (size_t s = 1; s < m->n && !rc && json_is_array(fr); s++) {
				const json_t *o = jget(jget(ph[s], k), "failure_reasons");
				for (size_t i = 0; i < json_array_size(o) && json_array_size(fr) < 4; i++) {
					bool seen = false;
					for (size_t j = 0; j < json_array_size(fr); j++)
						seen = seen || json_equal(json_array_get(fr, j),
									  json_array_get(o, i));
					if (!seen && json_array_append(fr, json_array_get(o, i)))
						rc = -ENOMEM;
				}
			}
		} else if (json_is_object(v)) {
			for (size_t s = 1; s < m->n && !rc; s++)
				if (json_is_object(jget(ph[s], k)))
					rc = sum_ints(v, jget(ph[s], k));
		} else if (json_is_integer(v)) {
			for (size_t s = 1; s < m->n; s++)
				json_integer_set(v, json_integer_value(v) + (json_int_t)u64_at(ph[s], k));
		}
		if (rc)
			break;
	}
	free(t);
	if (rc)
		return rc;
	/* the figures made of counters */
	json_t *req = json_object_get(dst, "requests");
	uint64_t sent = u64_at(req, "sent"), completed = u64_at(req, "completed");
	json_t *e = json_object_get(dst, "errors");
	if (json_is_object(e)) {
		double pct = pct_of(u64_at(e, "total"), sent);
		rc = set_new(e, "pct", real_dp(pct, 4));
		if (!rc && json_object_get(dst, "error_pct"))
			rc = set_new(dst, "error_pct", real_dp(pct, 4));
	}
	json_t *su = json_object_get(dst, "success");
	if (!rc && json_is_object(su))
		rc = set_new(su, "ok_pct", real_dp(pct_of(u64_at(su, "ok"), u64_at(su, "of")), 4));
	/* duration: the longest segment's (they all ran the same plan) */
	double dur = 0;
	for (size_t s = 0; s < m->n; s++)
		dur = fmax(dur, num_at(ph[s], "duration_s", 0));
	if (!rc && json_object_get(dst, "duration_s"))
		rc = set_new(dst, "duration_s", real_dp(dur, 6));
	json_t *rate = json_object_get(dst, "rate");
	if (!rc && json_is_object(rate)) {
		double off = 0;
		bool open = json_is_number(json_object_get(rate, "offered_per_s"));
		for (size_t s = 0; s < m->n; s++)
			off += num_at(jget(ph[s], "rate"), "offered_per_s", 0);
		if (open)
			rc = set_new(rate, "offered_per_s", real_dp(off, 3));
		if (!rc)
			rc = set_new(rate, "achieved_per_s",
				     real_dp(dur > 0 ? (double)completed / dur : 0, 3));
	}
	return rc;
}

/* ---- series ---------------------------------------------------------------- */

/* The wall-clock ns at which a segment's measured phase began (its
 * "clock" object), or 0 when it does not say. */
static uint64_t measure_wall_ns(const json_t *root)
{
	return u64_at(jget(root, "clock"), "measure_start_realtime_ns");
}

/* Merge the series arrays ser[0..n) point by point, segment s's point i
 * landing at second i + shift[s]. */
static int series_merge(struct mctx *m, const json_t *const *ser, const long *shift, json_t **out)
{
	long len = 0;
	for (size_t s = 0; s < m->n; s++)
		if (json_is_array(ser[s]) && (long)json_array_size(ser[s]) + shift[s] > len)
			len = (long)json_array_size(ser[s]) + shift[s];
	json_t *a = json_array();
	if (!a)
		return -ENOMEM;
	int rc = 0;
	for (long t = 0; t < len && !rc; t++) {
		struct hist h = {0};
		uint64_t completed = 0, errors = 0;
		uint64_t sub_bits = 7;
		for (size_t s = 0; s < m->n && !rc; s++) {
			long i = t - shift[s];
			if (!json_is_array(ser[s]) || i < 0 || i >= (long)json_array_size(ser[s]))
				continue;
			const json_t *pt = json_array_get(ser[s], (size_t)i);
			completed += u64_at(pt, "completed");
			errors += u64_at(pt, "errors");
			const json_t *ho = jget(pt, "hist");
			if (ho) {
				rc = hist_add_obj(m, &h, ho, "series", s);
				as_u64(jget(ho, "sub_bits"), &sub_bits);
			}
		}
		json_t *pt = rc ? NULL
				: json_pack("{s:I, s:I, s:I}", "t_s", (json_int_t)t, "completed",
					    (json_int_t)completed, "errors", (json_int_t)errors);
		if (!rc && !pt)
			rc = -ENOMEM;
		if (!rc)
			rc = set_new(pt, "p50_us",
				     real_dp(h.counts ? (double)hist_percentile(&h, 50) / 1e3 : 0, 3));
		if (!rc)
			rc = set_new(pt, "p99_us",
				     real_dp(h.counts ? (double)hist_percentile(&h, 99) / 1e3 : 0, 3));
		if (!rc) {
			json_t *ho = json_pack("{s:s, s:I}", "unit", "ns", "sub_bits", (json_int_t)sub_bits);
			rc = ho ? set_new(ho, "counts", h.counts ? hist_counts(&h) : json_array())
				: -ENOMEM;
			if (!rc)
				rc = set_new(pt, "hist", ho);
			else
				json_decref(ho);
		}
		if (!rc && json_array_append_new(a, pt))
			rc = -ENOMEM;
		else if (rc)
			json_decref(pt);
		hist_free(&h);
	}
	if (rc) {
		json_decref(a);
		return rc;
	}
	*out = a;
	return 0;
}

#define MERGE_MAX_SKEW_S 3600 /* segments whose measured phases began further apart
			       * are not one run */

/* Seconds each segment's measured phase began after the earliest one. 0,
 * or PACER_EUNSUPPORTED when they began over MERGE_MAX_SKEW_S apart. */
static int series_shifts(struct mctx *m, long *shift, long *skew_ms)
{
	uint64_t lo = UINT64_MAX, hi = 0;
	for (size_t s = 0; s < m->n; s++) {
		uint64_t w = measure_wall_ns(m->in[s].root);
		if (w && w < lo)
			lo = w;
		if (w > hi)
			hi = w;
	}
	*skew_ms = lo != UINT64_MAX && hi >= lo ? (long)((hi - lo) / 1000000u) : -1;
	for (size_t s = 0; s < m->n; s++) {
		uint64_t w = measure_wall_ns(m->in[s].root);
		if (w && lo != UINT64_MAX && w - lo > (uint64_t)MERGE_MAX_SKEW_S * 1000000000u) {
			text_errf(m->err, m->errlen, "%s began its measured phase %llu s after another "
						   "segment's (over %d s): not segments of one run",
				m->in[s].name, (unsigned long long)((w - lo) / 1000000000u),
				MERGE_MAX_SKEW_S);
			return PACER_EUNSUPPORTED;
		}
		shift[s] = w && lo != UINT64_MAX ? (long)((w - lo + 500000000u) / 1000000000u) : 0;
	}
	return 0;
}

/* ---- the generators ---------------------------------------------------------- */

static int merge_generator(struct mctx *m, json_t *out, uint64_t responses)
{
	json_t *g = json_object_get(out, "generator");
	if (!json_is_object(g))
		return 0;
	uint64_t threads = 0;
	double cpu = 0, busiest = 0;
	json_t *tc = json_array();
	if (!tc)
		return -ENOMEM;
	for (size_t s = 0; s < m->n; s++) {
		const json_t *gs = jget(m->in[s].root, "generator");
		threads += u64_at(gs, "threads");
		cpu += num_at(gs, "cpu_s", 0);
		busiest = fmax(busiest, num_at(gs, "busiest_thread_cpu_pct", 0));
		const json_t *a = jget(gs, "thread_cpu_s");
		for (size_t i = 0; i < json_array_size(a); i++)
			json_array_append(tc, json_array_get(a, i));
	}
	int rc = set_new(g, "threads", json_integer((json_int_t)threads));
	if (!rc)
		rc = set_new(g, "cpu_s", real_dp(cpu, 6));
	if (!rc && json_object_get(g, "cpu_us_per_response"))
		rc = set_new(g, "cpu_us_per_response",
			     real_dp(responses ? cpu * 1e6 / (double)responses : 0, 3));
	if (!rc)
		rc = set_new(g, "busiest_thread_cpu_pct", real_dp(busiest, 2));
	if (!rc)
		rc = set_new(g, "thread_cpu_s", tc);
	else
		json_decref(tc);
	return rc;
}

/* generator_limited of the merged result: flagged when any segment's was;
 * the checks are those of the first flagged segment (else the first's),
 * naming it. Every segment's own stays in segments[]. */
static int merge_limited(struct mctx *m, json_t *dst, const json_t *const *gl)
{
	size_t pick = 0;
	bool any = false;
	for (size_t s = 0; s < m->n; s++)
		if (json_is_true(jget(gl[s], "flagged")) && !any) {
			any = true;
			pick = s;
		}
	if (!gl[pick])
		return 0;
	json_t *c = json_deep_copy(gl[pick]);
	int rc = c ? set_new(c, "flagged", json_boolean(any)) : -ENOMEM;
	if (!rc)
		rc = set_new(c, "segment", json_integer((json_int_t)pick));
	if (!rc)
		rc = set_new(dst, "generator_limited", c);
	else
		json_decref(c);
	return rc;
}

/* warnings: one copy of those every segment gave, the others prefixed
 * with their segment. */
static int merge_warnings(struct mctx *m, json_t *out, long skew_ms)
{
	json_t *w = json_array();
	if (!w)
		return -ENOMEM;
	for (size_t s = 0; s < m->n; s++) {
		const json_t *ws = jget(m->in[s].root, "warnings");
		for (size_t i = 0; i < json_array_size(ws); i++) {
			const json_t *x = json_array_get(ws, i);
			if (!json_is_string(x))
				continue;
			bool everywhere = true;
			for (size_t o = 0; o < m->n && everywhere; o++) {
				const json_t *wo = jget(m->in[o].root, "warnings");
				bool has = false;
				for (size_t j = 0; j < json_array_size(wo) && !has; j++)
					has = json_equal(json_array_get(wo, j), (json_t *)x);
				everywhere = has;
			}
			if (everywhere && s > 0)
				continue;
			json_t *msg = everywhere
					      ? json_deep_copy(x)
					      : json_sprintf("segment %zu (%s): %s", s, m->in[s].name,
							     json_string_value(x));
			if (!msg || json_array_append_new(w, msg)) {
				json_decref(w);
				return -ENOMEM;
			}
		}
		double late = num_at(jget(m->in[s].root, "clock"), "late_ms", 0);
		if (late > 100) {
			json_t *msg = json_sprintf("segment %zu (%s) started %.0f ms after --start-at: "
						   "its load began late and its seconds are shifted",
						   s, m->in[s].name, late);
			if (!msg || json_array_append_new(w, msg)) {
				json_decref(w);
				return -ENOMEM;
			}
		}
	}
	if (skew_ms > 1000) {
		json_t *msg = json_sprintf("the segments' measured phases began up to %ld ms apart: "
					   "their load did not overlap in full, so the merged rate "
					   "per second is lower at the edges",
					   skew_ms);
		if (!msg || json_array_append_new(w, msg)) {
			json_decref(w);
			return -ENOMEM;
		}
	}
	return set_new(out, "warnings", w);
}

/* segments[]: each generator's identity and self-checks; merge{}: what
 * was merged and the skew between starts. */
static int segments_list(struct mctx *m, json_t *out, long skew_ms)
{
	json_t *a = json_array();
	if (!a)
		return -ENOMEM;
	static const char *const keep[] = {"started_at", "clock",   "environment", "generator",
					   "generator_limited", "warnings", "target_resources",
					   "target"};
	int rc = 0;
	for (size_t s = 0; s < m->n && !rc; s++) {
		const json_t *r = m->in[s].root;
		json_t *o = json_pack("{s:I, s:s}", "index", (json_int_t)s, "file", m->in[s].name);
		rc = o ? 0 : -ENOMEM;
		for (size_t k = 0; k < sizeof keep / sizeof keep[0] && !rc; k++)
			if (jget(r, keep[k]))
				rc = set_new(o, keep[k], json_deep_copy(jget(r, keep[k])));
		const json_t *meas = jget(r, "measure");
		if (!rc && meas)
			rc = set_new(o, "requests", json_deep_copy(jget(meas, "requests")));
		if (!rc && json_array_append_new(a, o))
			rc = -ENOMEM;
		else if (rc)
			json_decref(o);
	}
	if (!rc)
		rc = set_new(out, "segments", a);
	else
		json_decref(a);
	json_t *mg = rc ? NULL : json_pack("{s:I}", "segments", (json_int_t)m->n);
	if (!rc)
		rc = mg ? set_new(mg, "start_skew_ms", skew_ms >= 0 ? json_integer(skew_ms) : json_null())
			: -ENOMEM;
	if (!rc)
		rc = set_new(out, "merged", mg);
	else
		json_decref(mg);
	return rc;
}

/* ---- run and ramp ---------------------------------------------------------- */

/* A phase at key of every root (or of every roots' step i when step >= 0)
 * merged into dst[key]. */
static int merge_phase_at(struct mctx *m, json_t *dst, const json_t *const *src, const char *key,
			  const char *what)
{
	json_t *d = json_object_get(dst, key);
	if (!json_is_object(d))
		return 0;
	const json_t **ph = calloc(m->n, sizeof *ph);
	if (!ph)
		return -ENOMEM;
	int rc = 0;
	for (size_t s = 0; s < m->n && !rc; s++) {
		ph[s] = jget(src[s], key);
		if (!json_is_object(ph[s])) {
			text_errf(m->err, m->errlen, "%s: %s: no %s", m->in[s].name, what, key);
			rc = PACER_EPARSE;
		}
	}
	if (!rc)
		rc = phase_merge(m, d, ph, what);
	free(ph);
	return rc;
}

static int merge_series_at(struct mctx *m, json_t *dst, const json_t *const *src, const long *shift)
{
	if (!json_object_get(dst, "series"))
		return 0;
	const json_t **ser = calloc(m->n, sizeof *ser);
	if (!ser)
		return -ENOMEM;
	for (size_t s = 0; s < m->n; s++)
		ser[s] = jget(src[s], "series");
	json_t *merged;
	int rc = series_merge(m, ser, shift, &merged);
	free((void *)ser);
	if (!rc)
		rc = set_new(dst, "series", merged);
	return rc;
}

static int merge_limited_at(struct mctx *m, json_t *dst, const json_t *const *src)
{
	const json_t **gl = calloc(m->n, sizeof *gl);
	if (!gl)
		return -ENOMEM;
	for (size_t s = 0; s < m->n; s++)
		gl[s] = jget(src[s], "generator_limited");
	int rc = merge_limited(m, dst, gl);
	free((void *)gl);
	return rc;
}

/* Figures that cannot be pooled from what a result keeps (each segment's
 * target, cost and repetitions) stay with the segment. */
static void drop_per_segment(json_t *o)
{
	json_object_del(o, "target_resources");
	json_object_del(o, "cost");
	json_object_del(o, "repetitions");
	json_object_del(o, "repeat_summary");
	json_object_del(o, "clock");
}

static int merge_run(struct mctx *m, json_t *out, const json_t *const *roots, const long *shift)
{
	int rc = merge_phase_at(m, out, roots, "measure", "measure");
	if (!rc)
		rc = merge_phase_at(m, out, roots, "warmup", "warmup");
	if (!rc)
		rc = merge_series_at(m, out, roots, shift);
	if (!rc)
		rc = merge_limited_at(m, out, roots);
	/* every response, warm-up included, as a run counts them per CPU */
	uint64_t responses = u64_at(jget(jget(out, "measure"), "requests"), "completed") +
			     u64_at(jget(jget(out, "warmup"), "requests"), "completed");
	if (!rc)
		rc = merge_generator(m, out, responses);
	/* self-contained: each segment drove its own embedded target */
	json_t *tg = json_object_get(out, "target");
	if (!rc && json_is_object(tg)) {
		uint64_t threads = 0;
		double cpu = 0;
		for (size_t s = 0; s < m->n; s++) {
			threads += u64_at(jget(roots[s], "target"), "threads");
			cpu += num_at(jget(roots[s], "target"), "cpu_s", 0);
		}
		rc = set_new(tg, "threads", json_integer((json_int_t)threads));
		if (!rc && json_object_get(tg, "cpu_s"))
			rc = set_new(tg, "cpu_s", real_dp(cpu, 6));
		if (!rc && json_object_get(tg, "cpu_ms_per_request"))
			rc = set_new(tg, "cpu_ms_per_request",
				     real_dp(responses ? cpu * 1e3 / (double)responses : 0, 6));
	}
	return rc;
}

/* The SLO inputs of a merged step's measure phase (as ramp_step_measure
 * takes them from a run). */
static void step_measure(const json_t *ph, double offered, bool open_loop, size_t n_outcomes,
			 double *pct, struct slo_measure *mm)
{
	memset(mm, 0, sizeof *mm);
	const json_t *lat = jget(ph, "latency");
	mm->p50_ns = (uint64_t)llround(num_at(lat, "p50_us", 0) * 1e3);
	mm->p90_ns = (uint64_t)llround(num_at(lat, "p90_us", 0) * 1e3);
	mm->p99_ns = (uint64_t)llround(num_at(lat, "p99_us", 0) * 1e3);
	mm->p99_9_ns = (uint64_t)llround(num_at(lat, "p99_9_us", 0) * 1e3);
	mm->p99_99_ns = (uint64_t)llround(num_at(lat, "p99_99_us", 0) * 1e3);
	mm->max_ns = (uint64_t)llround(num_at(lat, "max_us", 0) * 1e3);
	mm->mean_ns = num_at(lat, "mean_us", 0) * 1e3;
	mm->latency_known = true;
	mm->latency_count = u64_at(lat, "count");
	const struct {
		const char *key;
		struct slo_latency *l;
	} sets[] = {{"latency_ok", &mm->ok}, {"latency_failed", &mm->failed}};
	for (size_t i = 0; i < 2; i++) {
		const json_t *t = jget(ph, sets[i].key);
		struct slo_latency *l = sets[i].l;
		l->p50_ns = (uint64_t)llround(num_at(t, "p50_us", 0) * 1e3);
		l->p90_ns = (uint64_t)llround(num_at(t, "p90_us", 0) * 1e3);
		l->p99_ns = (uint64_t)llround(num_at(t, "p99_us", 0) * 1e3);
		l->p99_9_ns = (uint64_t)llround(num_at(t, "p99_9_us", 0) * 1e3);
		l->p99_99_ns = (uint64_t)llround(num_at(t, "p99_99_us", 0) * 1e3);
		l->max_ns = (uint64_t)llround(num_at(t, "max_us", 0) * 1e3);
		l->mean_ns = num_at(t, "mean_us", 0) * 1e3;
		l->known = t != NULL;
		l->count = u64_at(t, "count");
	}
	const json_t *req = jget(ph, "requests");
	uint64_t sent = u64_at(req, "sent"), sched = u64_at(req, "scheduled");
	uint64_t completed = u64_at(req, "completed");
	mm->error_pct = pct_of(u64_at(jget(ph, "errors"), "total"), sent);
	mm->success_pct = pct_of(u64_at(jget(ph, "success"), "ok"), sent);
	mm->drop_pct = pct_of(u64_at(req, "dropped") + u64_at(req, "queued_at_end"), sched);
	mm->offered_known = open_loop && offered > 0;
	double dur = num_at(ph, "duration_s", 0);
	double achieved = dur > 0 ? (double)completed / dur : 0;
	mm->achieved_fraction = mm->offered_known ? achieved / offered : 0;
	const json_t *oc = jget(ph, "outcomes");
	for (size_t k = 0; k < n_outcomes; k++)
		pct[k] = pct_of(u64_at(json_array_get(oc, k), "count"), completed);
	mm->outcome_pct = n_outcomes ? pct : NULL;
	mm->n_outcomes = n_outcomes;
}

static int merge_ramp(struct mctx *m, json_t *out, const json_t *const *roots)
{
	const json_t *plan = jget(out, "plan");
	json_t *steps = json_object_get(out, "steps");
	size_t n_steps = json_array_size(steps);
	for (size_t s = 1; s < m->n; s++)
		if (json_array_size(jget(roots[s], "steps")) != n_steps) {
			text_errf(m->err, m->errlen, "%s ran %zu steps, %s %zu: a segmented ramp runs every "
						   "planned step (was one interrupted?)",
				m->in[0].name, n_steps, m->in[s].name, json_array_size(jget(roots[s], "steps")));
			return PACER_EUNSUPPORTED;
		}
	/* the SLO, with the outcome names it may use */
	const json_t *oc = jget(jget(plan, "rules"), "outcomes");
	size_t n_out = json_array_size(oc);
	if (n_out > 16)
		n_out = 16;
	const char *names[16];
	for (size_t k = 0; k < n_out; k++)
		names[k] = json_string_value(jget(json_array_get(oc, k), "name"));
	struct slo slo = {0};
	const char *expr = json_string_value(jget(plan, "slo"));
	char serr[256];
	if (expr && slo_parse(&slo, expr, names, n_out, serr, sizeof serr) != 0) {
		text_errf(m->err, m->errlen, "%s: plan.slo '%s': %s", m->in[0].name, expr, serr);
		return PACER_EPARSE;
	}
	const char *loop = json_string_value(jget(plan, "loop"));
	bool open_loop = !loop || !strcmp(loop, "open");
	const json_t **st = calloc(m->n, sizeof *st);
	long *zero = calloc(m->n, sizeof *zero);
	if (!st || !zero) {
		free((void *)st);
		free(zero);
		return -ENOMEM;
	}
	int rc = 0;
	long highest = -1, knee = -1;
	double base_p50 = 0, knee_rate = 0, highest_rate = 0;
	bool all_pass = n_steps > 0;
	for (size_t i = 0; i < n_steps && !rc; i++) {
		json_t *d = json_array_get(steps, i);
		double offered = num_at(d, "offered_per_s", 0);
		for (size_t s = 0; s < m->n && !rc; s++) {
			st[s] = json_array_get(jget(roots[s], "steps"), i);
			if (num_at(st[s], "offered_per_s", -1) != offered) {
				text_errf(m->err, m->errlen, "%s and %s: step %zu offered different rates: "
							   "not segments of one ramp",
					m->in[0].name, m->in[s].name, i + 1);
				rc = PACER_EUNSUPPORTED;
			}
		}
		char what[32];
		snprintf(what, sizeof what, "steps[%zu]", i);
		if (!rc)
			rc = merge_phase_at(m, d, st, "measure", what);
		/* a step's series: seconds since its own measured phase began */
		if (!rc)
			rc = merge_series_at(m, d, st, zero);
		if (!rc)
			rc = merge_limited_at(m, d, st);
		if (rc)
			break;
		/* the warm-up summary: counters summed; its percentiles are not
		 * kept with histograms, so the segments' highest stand in */
		json_t *w = json_object_get(d, "warmup");
		uint64_t wc = 0;
		double gcpu = 0;
		bool interrupted = false;
		for (size_t s = 0; s < m->n && !rc; s++) {
			wc += u64_at(st[s], "warmup_completed");
			gcpu += num_at(st[s], "generator_cpu_s", 0);
			interrupted = interrupted || json_is_true(jget(st[s], "interrupted"));
			if (s && json_is_object(w)) {
				json_t *tmp = json_deep_copy(jget(st[s], "warmup"));
				rc = tmp ? sum_ints(w, tmp) : -ENOMEM;
				json_decref(tmp);
				const char *ks[] = {"p50_us", "p99_us", "max_us"};
				for (size_t k = 0; k < 3 && !rc; k++)
					if (num_at(jget(st[s], "warmup"), ks[k], 0) > num_at(w, ks[k], 0))
						rc = set_new(w, ks[k],
							     json_deep_copy(jget(jget(st[s], "warmup"), ks[k])));
			}
		}
		if (!rc && json_is_object(w)) {
			double wd = num_at(w, "duration_s", 0);
			rc = set_new(w, "achieved_per_s",
				     real_dp(wd > 0 ? (double)u64_at(jget(w, "requests"), "completed") / wd
						    : 0,
					     3));
		}
		const json_t *ph = jget(d, "measure");
		const json_t *req = jget(ph, "requests");
		uint64_t sent = u64_at(req, "sent"), sched = u64_at(req, "scheduled");
		double dur = num_at(ph, "duration_s", 0);
		double achieved = dur > 0 ? (double)u64_at(req, "completed") / dur : 0;
		double pct[16];
		struct slo_measure mm;
		step_measure(ph, offered, open_loop, n_out, pct, &mm);
		struct slo_verdict v;
		slo_eval(&slo, &mm, &v);
		if (!rc)
			rc = set_new(d, "achieved_per_s", real_dp(achieved, 3));
		if (!rc)
			rc = set_new(d, "interrupted", json_boolean(interrupted));
		if (!rc)
			rc = set_new(d, "error_pct", real_dp(mm.error_pct, 4));
		if (!rc)
			rc = set_new(d, "success_pct", real_dp(mm.success_pct, 4));
		if (!rc)
			rc = set_new(d, "drop_pct", real_dp(pct_of(u64_at(req, "dropped") +
									  u64_at(req, "queued_at_end"),
								  sched),
							   4));
		(void)sent;
		if (!rc)
			rc = set_new(d, "verdict",
				     json_pack("{s:b, s:s}", "pass", v.pass, "reason", v.reason));
		if (!rc)
			rc = set_new(d, "generator_cpu_s", real_dp(gcpu, 6));
		if (!rc && json_object_get(d, "warmup_completed"))
			rc = set_new(d, "warmup_completed", json_integer((json_int_t)wc));
		drop_per_segment(d);
		json_object_del(d, "target_cpu_ms_per_request");
		/* highest passing and knee as ramp_result_summarize decides them */
		if (v.pass && !interrupted && (highest < 0 || offered > highest_rate)) {
			highest = (long)i;
			highest_rate = offered;
		}
		if (!v.pass)
			all_pass = false;
		double p50 = num_at(jget(ph, "latency"), "p50_us", 0);
		if (i == 0)
			base_p50 = p50;
		else if (base_p50 > 0 && p50 > 2 * base_p50 && (knee < 0 || offered < knee_rate)) {
			knee = (long)i;
			knee_rate = offered;
		}
	}
	free((void *)st);
	free(zero);
	if (rc)
		return rc;
	if (highest >= 0) {
		const json_t *hs = json_array_get(steps, (size_t)highest);
		json_t *hp = json_deep_copy(jget(out, "highest_passing"));
		if (!json_is_object(hp)) {
			json_decref(hp);
			hp = json_pack("{s:n, s:n, s:n}", "per_core_per_s", "cores", "cores_basis");
		}
		/* per core: the cores of one segment's target stand for the target */
		double cores = num_at(hp, "cores", 0);
		rc = hp ? set_new(hp, "step", json_integer(highest + 1)) : -ENOMEM;
		if (!rc)
			rc = set_new(hp, "offered_per_s", real_dp(highest_rate, 3));
		if (!rc)
			rc = set_new(hp, "achieved_per_s", json_deep_copy(jget(hs, "achieved_per_s")));
		if (!rc && cores > 0)
			rc = set_new(hp, "per_core_per_s", real_dp(highest_rate / cores, 3));
		if (!rc)
			rc = set_new(out, "highest_passing", hp);
		else
			json_decref(hp);
	} else {
		rc = set_new(out, "highest_passing", json_null());
	}
	if (!rc)
		rc = set_new(out, "knee_per_s", knee >= 0 ? real_dp(knee_rate, 3) : json_null());
	double require = num_at(plan, "require_per_s", 0);
	bool reached = require > 0 ? highest >= 0 && highest_rate >= require : all_pass;
	if (!rc)
		rc = set_new(out, "reached_require", json_boolean(reached));
	return rc;
}

int result_merge(const struct merge_input *in, size_t n, json_t **out, char *err, size_t errlen)
{
	*out = NULL;
	if (err && errlen)
		err[0] = '\0';
	if (!in || n < 1 || n > MERGE_MAX_INPUTS) {
		text_errf(err, errlen, "merge takes 1 to %d segment results, got %zu", MERGE_MAX_INPUTS, n);
		return -EINVAL;
	}
	const struct merge_input **sorted = calloc(n, sizeof *sorted);
	struct merge_input *ord = calloc(n, sizeof *ord);
	const json_t **roots = calloc(n, sizeof *roots);
	long *shift = calloc(n, sizeof *shift);
	if (!sorted || !ord || !roots || !shift) {
		free((void *)sorted);
		free(ord);
		free((void *)roots);
		free(shift);
		return -ENOMEM;
	}
	int rc = check_inputs(in, n, sorted, err, errlen);
	json_t *o = NULL;
	if (!rc) {
		for (size_t i = 0; i < n; i++) {
			ord[i] = *sorted[i];
			roots[i] = ord[i].root;
		}
		struct mctx m = {.in = ord, .n = n, .err = err, .errlen = errlen};
		long skew_ms;
		rc = series_shifts(&m, shift, &skew_ms);
		if (!rc) {
			o = json_deep_copy(ord[0].root);
			rc = o ? 0 : -ENOMEM;
		}
		bool ramp = !rc && !strcmp(json_string_value(json_object_get(o, "kind")), "ramp");
		if (!rc)
			rc = ramp ? merge_ramp(&m, o, roots) : merge_run(&m, o, roots, shift);
		/* interrupted when any segment was */
		bool intr = false;
		for (size_t i = 0; i < n; i++)
			intr = intr || json_is_true(json_object_get(roots[i], "interrupted"));
		if (!rc)
			rc = set_new(o, "interrupted", json_boolean(intr));
		/* the earliest start */
		const char *first = NULL;
		for (size_t i = 0; i < n; i++) {
			const char *s = json_string_value(json_object_get(roots[i], "started_at"));
			if (s && (!first || strcmp(s, first) < 0))
				first = s;
		}
		if (!rc && first)
			rc = set_new(o, "started_at", json_string(first));
		json_t *seg = json_object_get(json_object_get(o, "plan"), "segment");
		if (!rc && seg)
			rc = set_new(seg, "index", json_null());
		if (!rc) {
			drop_per_segment(o);
			rc = merge_warnings(&m, o, skew_ms);
		}
		if (!rc)
			rc = segments_list(&m, o, skew_ms);
		if (rc == -ENOMEM)
			text_errf(err, errlen, "merge: out of memory");
	}
	free((void *)sorted);
	free(ord);
	free((void *)roots);
	free(shift);
	if (rc) {
		json_decref(o);
		return rc;
	}
	*out = o;
	return 0;
}
