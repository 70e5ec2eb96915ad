/* pacer — what the files of the merge (merge.c, merge_check.c,
 * merge_phase.c) share; internal to src/doc, not part of the interface
 * (merge.h is). Pure, like them: no file I/O. */
#ifndef PACER_DOC_MERGE_INT_H
#define PACER_DOC_MERGE_INT_H

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "doc/merge.h"

/* One merge: the inputs (borrowed, sorted by segment index, n of them) and
 * the caller's message buffer, into which a refusal writes one line. */
struct mctx {
	const struct merge_input *in; /* sorted by segment index */
	size_t n;
	char *err;
	size_t errlen;
};

/* ---- small JSON helpers (none of them owns or keeps what it is given) ---- */

/* A new real of x rounded to dp decimals (0 when x is not finite); NULL
 * on no memory. */
static inline json_t *real_dp(double x, int dp)
{
	double s = pow(10, dp);
	return json_real(isfinite(x) ? round(x * s) / s : 0);
}

/* o[k] = v, taking v (NULL v: -ENOMEM, as when the set fails). 0 or
 * -ENOMEM. */
static inline int set_new(json_t *o, const char *k, json_t *v)
{
	if (!v || json_object_set_new(o, k, v))
		return -ENOMEM;
	return 0;
}

/* o[k], or NULL when o is not an object or has no k (borrowed). */
static inline const json_t *jget(const json_t *o, const char *k)
{
	return json_is_object(o) ? json_object_get(o, k) : NULL;
}

/* v as a non-negative integer (an integer, or an integral real up to
 * 2^53) into *out; false, *out untouched, otherwise. */
static inline bool as_u64(const json_t *v, uint64_t *out)
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

/* o[k] as a non-negative integer, or 0. */
static inline uint64_t u64_at(const json_t *o, const char *k)
{
	uint64_t v = 0;
	return as_u64(jget(o, k), &v) ? v : 0;
}

/* o[k] as a finite number, or def. */
static inline double num_at(const json_t *o, const char *k, double def)
{
	const json_t *v = jget(o, k);
	return json_is_number(v) && isfinite(json_number_value(v)) ? json_number_value(v) : def;
}


/* *sum = a + b when both are counts (0 to MERGE_COUNT_MAX) and so is the
 * sum; false otherwise. */
static inline bool merge_add_count(json_int_t a, json_int_t b, json_int_t *sum)
{
	if (a < 0 || b < 0 || (uint64_t)a > MERGE_COUNT_MAX || (uint64_t)b > MERGE_COUNT_MAX ||
	    (uint64_t)a + (uint64_t)b > MERGE_COUNT_MAX)
		return false;
	*sum = a + b;
	return true;
}

/* 100 * a / b, or 0 when b is 0. */
static inline double pct_of(uint64_t a, uint64_t b)
{
	return b ? 100.0 * (double)a / (double)b : 0;
}

/* ---- merge_check.c -------------------------------------------------------- */

/* Check in[0..n) are the segments of one plan (kinds, segment indices and
 * counts, request-table hashes, plans); on success sorted[k] is segment k
 * (n == the segment count; sorted has room for n, its entries borrowed from
 * in). 0, or PACER_EPARSE / PACER_EUNSUPPORTED with one line in err, or
 * -ENOMEM. */
int merge_check_inputs(const struct merge_input *in, size_t n, const struct merge_input **sorted,
		       char *err, size_t errlen);

/* ---- merge_rules.c -------------------------------------------------------- */

/* Every field of in[0..n) has a merge rule (merge.h: merge_rules) and
 * none is refused by its rule. 0, or PACER_EUNSUPPORTED (PACER_EPARSE: a
 * value where fields belong) with one line naming the file and the field. */
int merge_check_fields(const struct merge_input *in, size_t n, char *err, size_t errlen);

/* ---- merge_phase.c -------------------------------------------------------- */

/* dst += src over every integer leaf of two objects (keys only in src are
 * copied; src, segment seg's, is not changed); strings, reals and arrays
 * of dst stay. 0, -ENOMEM, PACER_EPARSE (a "hist" among them) or
 * PACER_ERANGE (a sum past MERGE_COUNT_MAX, with one line in m->err
 * naming the file and the field, what being the JSON path of dst). */
int merge_sum_ints(struct mctx *m, json_t *dst, const json_t *src, size_t seg, const char *what);

/* The histogram of a (merged) timing object into h (initialised here from
 * its layout; free with hist_free). 0, or PACER_EPARSE with one line in
 * m->err naming `what`, or -ENOMEM. */
struct hist;
int merge_timing_hist(struct mctx *m, const json_t *timing, const char *what, struct hist *h);

/* Merge the rows at key of every segment's object ph[s] (borrowed) into
 * dst[key]: by_name matched by name, hosts and outcomes by position;
 * counters summed, the figures made of them again. where: the JSON path of
 * dst, for messages. 0, or PACER_EPARSE / PACER_EUNSUPPORTED (a histogram)
 * / PACER_ERANGE with one line in m->err, or -ENOMEM. */
int merge_rows(struct mctx *m, json_t *dst, const json_t *const *ph, const char *key,
	       const char *where);

/* Merge the phase objects ph[0..m->n) (a run's measure or warm-up, a ramp
 * step's measure; borrowed, NULL entries allowed) into dst (a copy of
 * ph[0], changed in place): timings by histogram, counters summed, rates
 * and percentages recomputed. what names the phase in messages (its JSON
 * path). 0, or PACER_EPARSE / PACER_EUNSUPPORTED (a histogram) /
 * PACER_ERANGE with one line in m->err, or -ENOMEM. */
int merge_phase(struct mctx *m, json_t *dst, const json_t *const *ph, const char *what);

/* Merge the series arrays ser[0..m->n) (borrowed; non-arrays are skipped)
 * point by point, segment s's point i landing at second i + shift[s], into
 * *out (a new array the caller releases). 0, or PACER_EPARSE /
 * PACER_EUNSUPPORTED (a histogram) with one line in m->err, or -ENOMEM. */
int merge_series(struct mctx *m, const json_t *const *ser, const long *shift,
		 const char *series_what, json_t **out);

/* Seconds each segment's measured phase began after the earliest one's
 * (shift[0..m->n)), and the spread in ms (*skew_ms; -1 when no segment
 * says). 0, or PACER_EUNSUPPORTED when they began over MERGE_MAX_SKEW_S (an hour) apart. */
int merge_series_shifts(struct mctx *m, long *shift, long *skew_ms);

#endif
