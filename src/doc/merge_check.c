/* pacer — merge: checking the inputs are the segments of one plan (see
 * merge_int.h). */
#include "doc/keys.h"
#include "doc/merge_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/err.h"
#include "util/text.h"

/* ---- segment identity and plan equality ---------------------------------- */

/* plan.segment {index, count} of a segment result. */
static bool seg_of(const json_t *root, uint64_t *index, uint64_t *count)
{
	const json_t *s = jget(jget(root, KEY_PLAN), KEY_SEGMENT);
	return as_u64(jget(s, KEY_INDEX), index) && as_u64(jget(s, KEY_COUNT), count) &&
	       *count >= 1 && *index < *count;
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

/* See merge_int.h. */
int merge_check_inputs(const struct merge_input *in, size_t n, const struct merge_input **sorted,
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
		const char *kind = json_string_value(jget(in[i].root, KEY_KIND));
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
		const char *kind0 = json_string_value(jget(in[0].root, KEY_KIND));
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
	const json_t *p0 = jget(sorted[0]->root, KEY_PLAN);
	const char *mode = json_string_value(jget(sorted[0]->root, KEY_MODE));
	bool sc = mode && !strcmp(mode, "self_contained");
	for (size_t i = 1; i < n; i++) {
		const json_t *p = jget(sorted[i]->root, KEY_PLAN);
		for (int t = 0; t < 2; t++) {
			const char *sect = t ? "workload" : "table";
			if (t && sc)
				break;
			const char *h0 = json_string_value(jget(jget(p0, sect), KEY_SHA256));
			const char *h = json_string_value(jget(jget(p, sect), KEY_SHA256));
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
