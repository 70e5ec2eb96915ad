/* pacer — merge: histograms, timings, counters, rows, phases and series
 * of the segments (see merge_int.h). */
#include "doc/keys.h"
#include "doc/merge_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stats/hist.h"
#include "util/err.h"
#include "util/text.h"

/* ---- histograms ----------------------------------------------------------- */

/* Add the pairs of a saved hist object into h (initialised from the first
 * one's layout when h->counts is NULL). */
static int hist_add_obj(struct mctx *m, struct hist *h, const json_t *ho, const char *what,
			size_t seg)
{
	uint64_t sub_bits = HIST_SUB_BITS, max_value = HIST_MAX_NS;
	const json_t *v = jget(ho, KEY_SUB_BITS);
	if (v && !as_u64(v, &sub_bits))
		sub_bits = 0;
	v = jget(ho, KEY_MAX_VALUE);
	if (v && !as_u64(v, &max_value))
		max_value = 0;
	const json_t *counts = jget(ho, KEY_COUNTS);
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

int merge_timing_hist(struct mctx *m, const json_t *timing, const char *what, struct hist *h)
{
	*h = (struct hist){0};
	int rc = hist_add_obj(m, h, jget(timing, KEY_HIST), what, 0);
	if (rc)
		hist_free(h);
	return rc;
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
		const json_t *ho = jget(objs[s], KEY_HIST);
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
		double mn_us = num_at(objs[s], KEY_MIN_US, -1),
		       mx_us = num_at(objs[s], KEY_MAX_US, -1);
		double mean_us = num_at(objs[s], KEY_MEAN_US, -1);
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
	} pcts[] = {{KEY_P50_US, 50},
		    {KEY_P90_US, 90},
		    {KEY_P99_US, 99},
		    {KEY_P99_9_US, 99.9},
		    {KEY_P99_99_US, 99.99}};
	rc = o ? set_new(o, KEY_COUNT, json_integer((json_int_t)h.total)) : -ENOMEM;
	if (!names) {
		if (!rc)
			rc = set_new(o, KEY_MIN_US, real_dp(h.total ? (double)h.min / 1e3 : 0, 3));
		if (!rc)
			rc = set_new(o, KEY_MEAN_US, real_dp(hist_mean(&h) / 1e3, 3));
		if (!rc)
			rc = set_new(o, KEY_STDDEV_US, real_dp(hist_stddev(&h) / 1e3, 3));
	}
	for (size_t i = 0; i < (names ? 4u : 5u) && !rc; i++)
		rc = set_new(o, pcts[i].key, real_dp((double)hist_percentile(&h, pcts[i].p) / 1e3, 3));
	if (!rc)
		rc = set_new(o, KEY_MAX_US, real_dp(h.total ? (double)h.max / 1e3 : 0, 3));
	if (names) {
		if (!rc)
			rc = set_new(o, KEY_MEAN_US, real_dp(hist_mean(&h) / 1e3, 3));
		if (!rc)
			rc = set_new(o, KEY_SUB_BITS, json_integer(h.sub_bits));
	}
	if (!rc) {
		json_t *ho = json_pack("{s:s, s:I, s:I}", "unit", "ns", KEY_SUB_BITS,
				       (json_int_t)h.sub_bits, KEY_MAX_VALUE,
				       (json_int_t)h.max_value);
		rc = ho ? set_new(ho, KEY_COUNTS, hist_counts(&h)) : -ENOMEM;
		if (!rc)
			rc = set_new(o, KEY_HIST, ho);
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

/* dst += src below path[0..at) (the field's JSON path, for messages). */
static int sum_ints(struct mctx *m, json_t *dst, const json_t *src, size_t seg, char *path,
		    size_t at, size_t cap)
{
	const char *k;
	json_t *v;
	/* a histogram itself ({sub_bits, max_value, counts}) */
	if (json_object_get(src, KEY_SUB_BITS) || json_object_get(src, KEY_COUNTS) ||
	    json_object_get(dst, KEY_SUB_BITS) || json_object_get(dst, KEY_COUNTS))
		return PACER_EPARSE;
	json_object_foreach((json_t *)src, k, v) {
		json_t *d = json_object_get(dst, k);
		if (!strcmp(k, "hist") && (json_is_object(v) || json_is_object(d)))
			return PACER_EPARSE;
		int n = snprintf(path + at, cap - at, ".%s", k);
		size_t next = n < 0 || (size_t)n >= cap - at ? at : at + (size_t)n;
		int rc = 0;
		if (!d) {
			if (json_object_set_new(dst, k, json_deep_copy(v)))
				rc = -ENOMEM;
		} else if (json_is_object(d) && json_is_object(v)) {
			rc = sum_ints(m, d, v, seg, path, next, cap);
		} else if (json_is_integer(d) && json_is_integer(v)) {
			json_int_t sum;
			if (!merge_add_count(json_integer_value(d), json_integer_value(v), &sum)) {
				text_errf(m->err, m->errlen,
					  "%s: %s: adding it makes a count outside 0 to 2^53 - 1",
					  m->in[seg].name, path);
				rc = PACER_ERANGE;
			} else {
				json_integer_set(d, sum);
			}
		} else if (json_is_null(d) && !json_is_null(v)) {
			/* the first segment had none (a TLS version, say): take this one's */
			if (json_object_set_new(dst, k, json_deep_copy(v)))
				rc = -ENOMEM;
		}
		path[at] = '\0';
		if (rc)
			return rc;
	}
	return 0;
}

/* dst += src over every integer leaf of two objects (keys only in src are
 * copied); strings, reals and arrays of dst stay. A histogram met among
 * the counters (a "hist", or an object with sub_bits or counts) is not
 * summed: PACER_EPARSE (result_merge says so). A sum past MERGE_COUNT_MAX
 * is PACER_ERANGE, with the file of segment seg and the path (what, then
 * the keys) in m->err. */
int merge_sum_ints(struct mctx *m, json_t *dst, const json_t *src, size_t seg, const char *what)
{
	char path[512];
	int n = snprintf(path, sizeof path, "%s", what);
	return sum_ints(m, dst, src, seg, path, n < 0 || (size_t)n >= sizeof path ? 0 : (size_t)n,
			sizeof path);
}

/* A timing: an object with a histogram (its quantiles are made again from
 * the merged one, whether or not the segments gave them). */
static bool is_timing(const json_t *v)
{
	return json_is_object(v) && json_is_object(json_object_get(v, KEY_HIST));
}

/* streams_max (the most) and streams_mean (weighted by weight_key) of
 * dst from the objects at key of every segment's phase (row r of an array
 * at key when r != SIZE_MAX, else the object at key). */
static int merge_streams(struct mctx *m, json_t *dst, const json_t *const *ph, const char *key,
			 size_t r, const char *weight_key)
{
	uint64_t most = 0;
	double sum = 0, weight = 0;
	for (size_t s = 0; s < m->n; s++) {
		const json_t *o = jget(ph[s], key);
		const json_t *w = ph[s];
		if (r != SIZE_MAX) {
			o = json_array_get(o, r);
			w = o;
		} else {
			w = jget(ph[s], KEY_REQUESTS);
		}
		if (!json_is_object(o))
			continue;
		uint64_t mx = u64_at(o, KEY_STREAMS_MAX);
		most = mx > most ? mx : most;
		double wt = (double)u64_at(w, weight_key);
		sum += num_at(o, KEY_STREAMS_MEAN, 0) * wt;
		weight += wt;
	}
	int rc = set_new(dst, KEY_STREAMS_MAX, json_integer((json_int_t)most));
	if (!rc && json_object_get(dst, KEY_STREAMS_MEAN))
		rc = set_new(dst, KEY_STREAMS_MEAN, real_dp(weight > 0 ? sum / weight : 0, 3));
	return rc;
}

/* A phase's QUIC figures: the counters are summed (merge_sum_ints); the
 * smoothed RTT's mean is weighted by each segment's connections and its
 * max is the largest; GSO and GRO were used when any segment used them. */
static int merge_quic(struct mctx *m, json_t *dst, const json_t *const *ph)
{
	double sum = 0, most = 0;
	uint64_t n = 0;
	bool gso = false, gro = false;
	for (size_t s = 0; s < m->n; s++) {
		const json_t *q = jget(ph[s], KEY_QUIC);
		const json_t *r = jget(q, KEY_SMOOTHED_RTT);
		uint64_t c = u64_at(r, KEY_CONNECTIONS);
		sum += num_at(r, KEY_MEAN_US, 0) * (double)c;
		n += c;
		most = fmax(most, num_at(r, KEY_MAX_US, 0));
		gso |= json_is_true(jget(q, KEY_GSO));
		gro |= json_is_true(jget(q, KEY_GRO));
	}
	json_t *r = json_object_get(dst, KEY_SMOOTHED_RTT);
	int rc = 0;
	if (json_is_object(r)) {
		rc = set_new(r, KEY_MEAN_US, real_dp(n ? sum / (double)n : 0, 3));
		if (!rc)
			rc = set_new(r, KEY_MAX_US, real_dp(most, 3));
	}
	if (!rc)
		rc = set_new(dst, KEY_GSO, json_boolean(gso));
	if (!rc)
		rc = set_new(dst, KEY_GRO, json_boolean(gro));
	return rc;
}

/* Merge the array of objects at key (by_name: matched by name; hosts and
 * outcomes: by position) of every segment's phase into dst's. */
int merge_rows(struct mctx *m, json_t *dst, const json_t *const *ph, const char *key,
	       const char *where)
{
	json_t *rows = json_object_get(dst, key);
	if (!json_is_array(rows))
		return 0;
	bool by_name = !strcmp(key, KEY_BY_NAME);
	size_t nrows = json_array_size(rows);
	for (size_t r = 0; r < nrows; r++) {
		json_t *row = json_array_get(rows, r);
		const char *name = json_string_value(json_object_get(row, KEY_NAME));
		const json_t **lat = calloc(m->n, sizeof *lat);
		if (!lat)
			return -ENOMEM;
		json_t *acc = json_deep_copy(row);
		int rc = acc ? 0 : -ENOMEM;
		json_object_del(acc, KEY_LATENCY);
		for (size_t s = 0; s < m->n && !rc; s++) {
			const json_t *srows = jget(ph[s], key);
			const json_t *sr = NULL;
			for (size_t i = 0; i < json_array_size(srows) && !sr; i++) {
				const json_t *c = json_array_get(srows, i);
				if (by_name ? (name && json_is_string(jget(c, KEY_NAME)) &&
					       !strcmp(name, json_string_value(jget(c, KEY_NAME))))
					    : i == r)
					sr = c;
			}
			if (!sr)
				continue;
			lat[s] = jget(sr, KEY_LATENCY);
			if (s > 0) {
				json_t *tmp = json_deep_copy(sr);
				json_object_del(tmp, KEY_LATENCY);
				char what[160];
				snprintf(what, sizeof what, "%s.%s[%zu]", where, key, r);
				rc = tmp ? merge_sum_ints(m, acc, tmp, s, what) : -ENOMEM;
				json_decref(tmp);
			}
		}
		if (!rc && by_name) {
			uint64_t sent = u64_at(acc, KEY_SENT), errs = u64_at(acc, KEY_ERRORS);
			if (json_object_get(row, KEY_POOLED_NAMES)) {
				/* the table's names beyond the first 64, as each segment saw them */
				uint64_t most = 0;
				for (size_t s = 0; s < m->n; s++)
					for (size_t i = 0; i < json_array_size(jget(ph[s], key)); i++) {
						const json_t *c = json_array_get(jget(ph[s], key), i);
						if (json_is_true(jget(c, KEY_OTHER)))
							most = most > u64_at(c, KEY_POOLED_NAMES)
								       ? most
								       : u64_at(c,
										KEY_POOLED_NAMES);
					}
				rc = set_new(acc, KEY_POOLED_NAMES, json_integer((json_int_t)most));
			}
			if (!rc)
				rc = set_new(acc, KEY_ERROR_PCT, real_dp(pct_of(errs, sent), 4));
			if (!rc && lat[0]) {
				json_t *l;
				char tw[160];
				snprintf(tw, sizeof tw, "%s '%s' latency", key, name ? name : "?");
				rc = timing_merge(m, lat, true, tw, &l);
				if (!rc)
					rc = set_new(acc, KEY_LATENCY, l);
			}
		} else if (!rc && json_object_get(row, KEY_PORT)) {
			rc = set_new(acc, KEY_PORT, json_deep_copy(json_object_get(row, KEY_PORT)));
			/* HTTP/2 streams of the host: the most, and the mean weighted by
			 * each segment's completed requests */
			if (!rc && json_object_get(row, KEY_STREAMS_MAX))
				rc = merge_streams(m, acc, ph, key, r, "completed");
		} else if (!rc && json_object_get(acc, KEY_RATE_PCT)) {
			rc = set_new(
				acc, KEY_RATE_PCT,
				real_dp(pct_of(u64_at(acc, KEY_COUNT), u64_at(acc, KEY_OF)), 4));
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
/* A script's sessions (v: segment 0's, in dst): the counts added, the
 * share completed made again, the durations' histograms added. */
static int merge_sessions(struct mctx *m, json_t *v, const json_t *const *ph, const char *what)
{
	const json_t **dur = calloc(m->n, sizeof *dur);
	if (!dur)
		return -ENOMEM;
	int rc = 0;
	char ws[160];
	snprintf(ws, sizeof ws, "%s.sessions", what);
	for (size_t s = 0; s < m->n && !rc; s++) {
		const json_t *o = jget(ph[s], KEY_SESSIONS);
		dur[s] = jget(o, KEY_DURATION);
		if (s == 0 || !json_is_object(o))
			continue;
		json_t *tmp = json_deep_copy(o);
		if (tmp)
			json_object_del(tmp, KEY_DURATION);
		rc = tmp ? merge_sum_ints(m, v, tmp, s, ws) : -ENOMEM;
		json_decref(tmp);
	}
	uint64_t started = u64_at(v, KEY_STARTED), completed = u64_at(v, KEY_COMPLETED);
	if (!rc)
		rc = set_new(v, KEY_COMPLETED_PCT, real_dp(pct_of(completed, started), 4));
	if (!rc && dur[0]) {
		char w[160];
		snprintf(w, sizeof w, "%s.sessions.duration", what);
		json_t *l;
		rc = timing_merge(m, dur, true, w, &l);
		if (!rc)
			rc = set_new(v, KEY_DURATION, l);
	}
	free(dur);
	return rc;
}

int merge_phase(struct mctx *m, json_t *dst, const json_t *const *ph, const char *what)
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
		} else if (!strcmp(k, KEY_BY_NAME) || !strcmp(k, "hosts")) {
			rc = merge_rows(m, dst, ph, k, what);
		} else if (!strcmp(k, KEY_DURATION_S) || !strcmp(k, "rate")) {
			continue;
		} else if (!strcmp(k, "success")) {
			char w[160];
			snprintf(w, sizeof w, "%s.%s", what, k);
			for (size_t s = 1; s < m->n && !rc; s++) {
				json_t *tmp = json_deep_copy(jget(ph[s], k));
				if (tmp)
					json_object_del(tmp, KEY_OUTCOMES);
				rc = tmp ? merge_sum_ints(m, v, tmp, s, w) : 0;
				json_decref(tmp);
			}
		} else if (!strcmp(k, "outcomes")) {
			rc = merge_rows(m, dst, ph, k, what);
		} else if (!strcmp(k, "tls")) {
			char w[160];
			snprintf(w, sizeof w, "%s.%s", what, k);
			for (size_t s = 1; s < m->n && !rc; s++)
				if (json_is_object(jget(ph[s], k)))
					rc = merge_sum_ints(m, v, jget(ph[s], k), s, w);
			/* the distinct failure reasons, at most 4 as a run keeps */
			json_t *fr = json_object_get(v, KEY_FAILURE_REASONS);
			for (size_t s = 1; s < m->n && !rc && json_is_array(fr); s++) {
				const json_t *o = jget(jget(ph[s], k), KEY_FAILURE_REASONS);
				for (size_t i = 0; i < json_array_size(o) && json_array_size(fr) < 4; i++) {
					bool seen = false;
					for (size_t j = 0; j < json_array_size(fr); j++)
						seen = seen || json_equal(json_array_get(fr, j),
									  json_array_get(o, i));
					if (!seen && json_array_append(fr, json_array_get(o, i)))
						rc = -ENOMEM;
				}
			}
		} else if (!strcmp(k, KEY_SESSIONS)) {
			rc = merge_sessions(m, v, ph, what);
		} else if (!strcmp(k, KEY_TARGET_RESOURCES) ||
			   !strcmp(k, KEY_GENERATOR_RESOURCES)) {
			continue; /* null here: merge_check_fields refuses one that is not */
		} else if (json_is_object(v)) {
			char w[160];
			snprintf(w, sizeof w, "%s.%s", what, k);
			for (size_t s = 1; s < m->n && !rc; s++)
				if (json_is_object(jget(ph[s], k)))
					rc = merge_sum_ints(m, v, jget(ph[s], k), s, w);
			if (!rc && (!strcmp(k, KEY_HTTP2) || !strcmp(k, KEY_HTTP3)))
				rc = merge_streams(m, v, ph, k, SIZE_MAX, "sent");
			if (!rc && !strcmp(k, KEY_QUIC))
				rc = merge_quic(m, v, ph);
		} else if (json_is_integer(v)) {
			for (size_t s = 1; s < m->n && !rc; s++) {
				json_int_t sum;
				if (!merge_add_count(json_integer_value(v),
						     (json_int_t)u64_at(ph[s], k), &sum)) {
					text_errf(m->err, m->errlen,
						  "%s: %s.%s: adding it makes a count outside 0 to "
						  "2^53 - 1",
						  m->in[s].name, what, k);
					rc = PACER_ERANGE;
				} else {
					json_integer_set(v, sum);
				}
			}
		}
		if (rc)
			break;
	}
	free(t);
	if (rc)
		return rc;
	/* the figures made of counters */
	json_t *req = json_object_get(dst, KEY_REQUESTS);
	uint64_t sent = u64_at(req, KEY_SENT), completed = u64_at(req, KEY_COMPLETED);
	json_t *e = json_object_get(dst, KEY_ERRORS);
	if (json_is_object(e)) {
		double pct = pct_of(u64_at(e, KEY_TOTAL), sent);
		rc = set_new(e, KEY_PCT, real_dp(pct, 4));
		if (!rc && json_object_get(dst, KEY_ERROR_PCT))
			rc = set_new(dst, KEY_ERROR_PCT, real_dp(pct, 4));
	}
	json_t *su = json_object_get(dst, KEY_SUCCESS);
	if (!rc && json_is_object(su))
		rc = set_new(su, KEY_OK_PCT,
			     real_dp(pct_of(u64_at(su, KEY_OK), u64_at(su, KEY_OF)), 4));
	/* duration: the longest segment's (they all ran the same plan) */
	double dur = 0;
	for (size_t s = 0; s < m->n; s++)
		dur = fmax(dur, num_at(ph[s], KEY_DURATION_S, 0));
	if (!rc && json_object_get(dst, KEY_DURATION_S))
		rc = set_new(dst, KEY_DURATION_S, real_dp(dur, 6));
	json_t *rate = json_object_get(dst, KEY_RATE);
	if (!rc && json_is_object(rate)) {
		double off = 0;
		bool open = json_is_number(json_object_get(rate, KEY_OFFERED_PER_S));
		for (size_t s = 0; s < m->n; s++)
			off += num_at(jget(ph[s], KEY_RATE), KEY_OFFERED_PER_S, 0);
		if (open)
			rc = set_new(rate, KEY_OFFERED_PER_S, real_dp(off, 3));
		if (!rc)
			rc = set_new(rate, KEY_ACHIEVED_PER_S,
				     real_dp(dur > 0 ? (double)completed / dur : 0, 3));
	}
	return rc;
}

/* ---- series ---------------------------------------------------------------- */

/* The wall-clock ns at which a segment's measured phase began (its
 * "clock" object), or 0 when it does not say. */
static uint64_t measure_wall_ns(const json_t *root)
{
	return u64_at(jget(root, KEY_CLOCK), KEY_MEASURE_START_REALTIME_NS);
}

/* Merge the series arrays ser[0..n) point by point, segment s's point i
 * landing at second i + shift[s]. */
int merge_series(struct mctx *m, const json_t *const *ser, const long *shift,
		 const char *series_what, json_t **out)
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
		uint64_t sub_bits = 7;
		/* the second's counters (completed, errors, by_class, dropped, the
		 * backlogs unsent, ...) added over the segments, its histograms
		 * merged */
		json_t *pt = json_pack("{s:I}", KEY_T_S, (json_int_t)t);
		if (!pt)
			rc = -ENOMEM;
		for (size_t s = 0; s < m->n && !rc; s++) {
			long i = t - shift[s];
			if (!json_is_array(ser[s]) || i < 0 || i >= (long)json_array_size(ser[s]))
				continue;
			const json_t *src = json_array_get(ser[s], (size_t)i);
			json_t *tmp = json_deep_copy(src);
			if (!tmp) {
				rc = -ENOMEM;
				break;
			}
			static const char *const made[] = {KEY_T_S, "hist", KEY_P50_US, KEY_P99_US};
			for (size_t k = 0; k < sizeof made / sizeof made[0]; k++)
				json_object_del(tmp, made[k]);
			char w[48];
			snprintf(w, sizeof w, "%s[%ld]", series_what, i);
			rc = merge_sum_ints(m, pt, tmp, s, w);
			json_decref(tmp);
			const json_t *ho = jget(src, KEY_HIST);
			if (!rc && ho) {
				rc = hist_add_obj(m, &h, ho, "series", s);
				as_u64(jget(ho, KEY_SUB_BITS), &sub_bits);
			}
		}
		if (!rc && !json_object_get(pt, KEY_COMPLETED))
			rc = set_new(pt, KEY_COMPLETED, json_integer(0));
		if (!rc && !json_object_get(pt, KEY_ERRORS))
			rc = set_new(pt, KEY_ERRORS, json_integer(0));
		if (!rc)
			rc = set_new(
				pt, KEY_P50_US,
				real_dp(h.counts ? (double)hist_percentile(&h, 50) / 1e3 : 0, 3));
		if (!rc)
			rc = set_new(
				pt, KEY_P99_US,
				real_dp(h.counts ? (double)hist_percentile(&h, 99) / 1e3 : 0, 3));
		if (!rc) {
			json_t *ho = json_pack("{s:s, s:I}", "unit", "ns", KEY_SUB_BITS,
					       (json_int_t)sub_bits);
			rc = ho ? set_new(ho, KEY_COUNTS, h.counts ? hist_counts(&h) : json_array())
				: -ENOMEM;
			if (!rc)
				rc = set_new(pt, KEY_HIST, ho);
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
int merge_series_shifts(struct mctx *m, long *shift, long *skew_ms)
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
