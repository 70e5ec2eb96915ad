/* Tests of result_merge (src/doc/merge.c): merged histograms give the
 * percentiles of one histogram fed every value, counters add up, and
 * inputs that are not the segments of one plan are refused, naming the
 * files. */
#include <jansson.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "doc/merge.h"
#include "stats/hist.h"
#include "util/err.h"
#include "util/rng.h"

#define SEGS 4

/* A timing object as pacer writes it (doc/run.c rj_hist). */
static json_t *timing_of(const struct hist *h)
{
	json_t *counts = json_array();
	size_t cur = 0;
	uint64_t v, c;
	while (hist_next_nonzero(h, &cur, &v, &c))
		json_array_append_new(counts, json_pack("[I,I]", (json_int_t)v, (json_int_t)c));
	return json_pack("{s:I, s:f, s:f, s:f, s:f, s:f, s:{s:s, s:I, s:I, s:o}}", "count",
			 (json_int_t)h->total, "min_us", (double)h->min / 1e3, "mean_us",
			 hist_mean(h) / 1e3, "max_us", (double)h->max / 1e3, "p50_us",
			 (double)hist_percentile(h, 50) / 1e3, "stddev_us", 0.0, "hist", "unit", "ns",
			 "sub_bits", (json_int_t)h->sub_bits, "max_value", (json_int_t)h->max_value,
			 "counts", counts);
}

/* A run result of segment k/n whose latency histogram is h. */
static json_t *segment_result(uint32_t k, uint32_t n, const struct hist *h, double rate)
{
	return json_pack("{s:s, s:s, s:s, s:{s:s, s:f, s:{s:i, s:i}, s:[s]}, "
			 "s:{s:f, s:{s:I, s:I, s:I, s:i}, s:{s:I, s:i, s:I}, s:{s:f, s:f}, s:o}}",
			 "schema_version", "2.0", "kind", "run", "mode", "live", "plan", "url",
			 "http://x/", "rate_per_s", rate, "segment", "index", k, "count", n, "argv",
			 "run", "measure", "duration_s", 2.0, "requests", "scheduled",
			 (json_int_t)h->total, "sent", (json_int_t)h->total, "completed",
			 (json_int_t)h->total, "dropped", 0, "errors", "total", (json_int_t)k, "pct",
			 0, "failed_responses", (json_int_t)k, "rate", "offered_per_s", rate / n,
			 "achieved_per_s", 0.0, "latency", timing_of(h));
}

static void test_percentiles_exact(void **state)
{
	(void)state;
	struct hist all, seg[SEGS];
	assert_int_equal(hist_init(&all, HIST_SUB_BITS, HIST_MAX_NS), 0);
	for (int s = 0; s < SEGS; s++)
		assert_int_equal(hist_init(&seg[s], HIST_SUB_BITS, HIST_MAX_NS), 0);
	struct rng r;
	rng_seed(&r, 7);
	/* log-uniform values from 1 us to ~1 s, each to a pseudo-random segment
	 * (not i mod SEGS: the segments see different distributions) */
	for (int i = 0; i < 200000; i++) {
		uint64_t v = (uint64_t)(1000.0 * pow(10, 6 * rng_unit(&r)));
		int s = (int)(rng_next(&r) % SEGS);
		if (s == 3 && v < 100000)
			s = 0;
		hist_record(&seg[s], v);
		hist_record(&all, v);
	}
	struct merge_input in[SEGS];
	char names[SEGS][24];
	for (int s = 0; s < SEGS; s++) {
		snprintf(names[s], sizeof names[s], "seg%d.json", s);
		/* given out of order: merge sorts by index */
		in[SEGS - 1 - s] = (struct merge_input){.name = names[s],
							.root = segment_result((uint32_t)s, SEGS, &seg[s], 1000)};
		assert_non_null(in[SEGS - 1 - s].root);
	}
	json_t *out = NULL;
	char err[512];
	int rc = result_merge(in, SEGS, &out, err, sizeof err);
	assert_int_equal(rc, 0);
	const json_t *lat = json_object_get(json_object_get(out, "measure"), "latency");
	assert_non_null(lat);
	assert_int_equal(json_integer_value(json_object_get(lat, "count")), all.total);
	static const struct {
		const char *key;
		double p;
	} pcts[] = {{"p50_us", 50}, {"p90_us", 90}, {"p99_us", 99}, {"p99_9_us", 99.9},
		    {"p99_99_us", 99.99}};
	for (size_t i = 0; i < sizeof pcts / sizeof pcts[0]; i++) {
		double got = json_real_value(json_object_get(lat, pcts[i].key));
		double want = (double)hist_percentile(&all, pcts[i].p) / 1e3;
		assert_true(fabs(got - want) < 0.0005);
	}
	assert_true(fabs(json_real_value(json_object_get(lat, "max_us")) - (double)all.max / 1e3) <
		    0.0005);
	assert_true(fabs(json_real_value(json_object_get(lat, "min_us")) - (double)all.min / 1e3) <
		    0.0005);
	assert_true(fabs(json_real_value(json_object_get(lat, "mean_us")) - hist_mean(&all) / 1e3) <
		    0.001);
	/* counters summed, offered rate the global one, segments named */
	const json_t *req = json_object_get(json_object_get(out, "measure"), "requests");
	assert_int_equal(json_integer_value(json_object_get(req, "completed")), all.total);
	const json_t *errs = json_object_get(json_object_get(out, "measure"), "errors");
	assert_int_equal(json_integer_value(json_object_get(errs, "total")), 0 + 1 + 2 + 3);
	double off = json_real_value(json_object_get(
		json_object_get(json_object_get(out, "measure"), "rate"), "offered_per_s"));
	assert_true(fabs(off - 1000) < 1e-6);
	const json_t *segs = json_object_get(out, "segments");
	assert_int_equal(json_array_size(segs), SEGS);
	assert_string_equal(json_string_value(json_object_get(json_array_get(segs, 2), "file")),
			    "seg2.json");
	assert_true(json_is_null(
		json_object_get(json_object_get(json_object_get(out, "plan"), "segment"), "index")));
	json_decref(out);
	for (int s = 0; s < SEGS; s++) {
		json_decref((json_t *)in[s].root);
		hist_free(&seg[s]);
	}
	hist_free(&all);
}

/* A timing that lost its quantiles (p50_us ...) is still a histogram:
 * merged as one, never summed as counters (that added the layouts: sub_bits
 * 11 + 11 = 22, a merged file its own reader refused; fuzz_merge). A
 * histogram where only counters are merged is an error, not a sum. */
static void test_histograms_never_summed(void **state)
{
	(void)state;
	struct hist h;
	assert_int_equal(hist_init(&h, HIST_SUB_BITS, HIST_MAX_NS), 0);
	for (int i = 1; i <= 100; i++)
		hist_record(&h, (uint64_t)i * 1000);
	struct merge_input in[2];
	for (int s = 0; s < 2; s++) {
		json_t *r = segment_result((uint32_t)s, 2, &h, 100);
		json_t *lag = timing_of(&h);
		json_object_del(lag, "p50_us");
		json_object_set_new(json_object_get(r, "measure"), "loop_lag", lag);
		in[s] = (struct merge_input){.name = s ? "b.json" : "a.json", .root = r};
	}
	json_t *out = NULL;
	char err[512];
	assert_int_equal(result_merge(in, 2, &out, err, sizeof err), 0);
	const json_t *lag = json_object_get(json_object_get(out, "measure"), "loop_lag");
	const json_t *ho = json_object_get(lag, "hist");
	assert_int_equal(json_integer_value(json_object_get(ho, "sub_bits")), HIST_SUB_BITS);
	assert_int_equal(json_integer_value(json_object_get(ho, "max_value")), HIST_MAX_NS);
	assert_int_equal(json_integer_value(json_object_get(lag, "count")), 200);
	assert_true(fabs(json_real_value(json_object_get(lag, "p50_us")) - 50.0) < 0.1);
	json_decref(out);
	/* an object of counters with a "hist": a field with no merge rule,
	 * refused before anything is merged */
	for (int s = 0; s < 2; s++)
		json_object_set_new(json_object_get(json_object_get((json_t *)in[s].root, "measure"),
						    "errors"),
				    "hist", json_pack("{s:i}", "sub_bits", 11));
	out = NULL;
	assert_int_equal(result_merge(in, 2, &out, err, sizeof err), PACER_EUNSUPPORTED);
	assert_null(out);
	if (!strstr(err, "a.json: measure.errors.hist: a field pacer merge has no rule for"))
		fail_msg("err: %s", err);
	/* deeper among the counters: not added up either */
	for (int s = 0; s < 2; s++) {
		json_t *e = json_object_get(json_object_get((json_t *)in[s].root, "measure"), "errors");
		json_object_del(e, "hist");
		json_object_set_new(e, "by_status",
				    json_pack("{s:{s:i}}", "hist", "sub_bits", 11));
	}
	out = NULL;
	assert_int_equal(result_merge(in, 2, &out, err, sizeof err), PACER_EPARSE);
	assert_null(out);
	if (!strstr(err, "a histogram among the counters"))
		fail_msg("err: %s", err);
	/* a histogram's own object where a phase has counters */
	for (int s = 0; s < 2; s++) {
		json_t *ms = json_object_get((json_t *)in[s].root, "measure");
		json_object_del(json_object_get(ms, "errors"), "by_status");
		json_object_set_new(ms, "hist", json_pack("{s:i, s:[]}", "sub_bits", 11, "counts"));
	}
	out = NULL;
	assert_int_equal(result_merge(in, 2, &out, err, sizeof err), PACER_EUNSUPPORTED);
	assert_null(out);
	if (!strstr(err, "measure.hist: a field pacer merge has no rule for"))
		fail_msg("err: %s", err);
	for (int s = 0; s < 2; s++)
		json_decref((json_t *)in[s].root);
	hist_free(&h);
}

static void test_refusals(void **state)
{
	(void)state;
	struct hist h;
	assert_int_equal(hist_init(&h, HIST_SUB_BITS, HIST_MAX_NS), 0);
	hist_record(&h, 12345);
	json_t *a = segment_result(0, 3, &h, 900), *b = segment_result(1, 3, &h, 900);
	json_t *b2 = segment_result(1, 3, &h, 900), *c = segment_result(2, 3, &h, 900);
	json_t *other = segment_result(2, 3, &h, 800), *four = segment_result(2, 4, &h, 900);
	json_t *plain = json_deep_copy(c);
	json_object_del(json_object_get(plain, "plan"), "segment");
	json_t *out = NULL;
	char err[512];
	struct {
		struct merge_input in[3];
		size_t n;
		int rc;
		const char *needle;
	} cases[] = {
		{{{"a.json", a}, {"b.json", b}}, 2, PACER_EUNSUPPORTED, "segment 2/3 is missing"},
		{{{"a.json", a}, {"b.json", b}, {"b2.json", b2}}, 3, PACER_EUNSUPPORTED,
		 "b.json and b2.json are both segment 1/3"},
		{{{"a.json", a}, {"b.json", b}, {"o.json", other}}, 3, PACER_EUNSUPPORTED,
		 "plan.rate_per_s differs"},
		{{{"a.json", a}, {"b.json", b}, {"f.json", four}}, 3, PACER_EUNSUPPORTED,
		 "f.json is segment 2/4"},
		{{{"a.json", a}, {"b.json", b}, {"p.json", plain}}, 3, PACER_EPARSE,
		 "p.json: not a segment result"},
		{{{"a.json", a}, {"b.json", b}, {"c.json", c}}, 3, 0, NULL},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		int rc = result_merge(cases[i].in, cases[i].n, &out, err, sizeof err);
		if (rc != cases[i].rc || (cases[i].needle && !strstr(err, cases[i].needle)))
			fail_msg("case %zu: rc %d, err '%s'", i, rc, err);
		if (!rc)
			json_decref(out);
		else
			assert_null(out);
	}
	json_decref(a);
	json_decref(b);
	json_decref(b2);
	json_decref(c);
	json_decref(other);
	json_decref(four);
	json_decref(plain);
	hist_free(&h);
}

/* A series point as pacer writes it, with what kept requests from being
 * sent (refused < 0: a point of an older result, without those fields). */
static json_t *point(int t, int completed, int refused, int timeout, int dropped, int unsent)
{
	json_t *pt = json_pack("{s:i, s:i, s:i, s:f, s:f}", "t_s", t, "completed", completed,
			       "errors", 0, "p50_us", 0.0, "p99_us", 0.0);
	if (refused >= 0) {
		json_object_set_new(pt, "connect_failures",
				    json_pack("{s:i, s:i, s:i, s:i}", "refused", refused, "reset", 0,
					      "timeout", timeout, "other", 0));
		json_object_set_new(pt, "dropped", json_integer(dropped));
		json_object_set_new(pt, "unsent", json_integer(unsent));
	}
	return pt;
}

/* Seconds of an outage merge by wall second: connect failures by cause and
 * dropped summed, the backlogs (unsent) added; a segment whose points do
 * not have them (an older result) adds nothing, and a second none has
 * gets none. */
static void test_series_outage(void **state)
{
	(void)state;
	struct hist h;
	assert_int_equal(hist_init(&h, HIST_SUB_BITS, HIST_MAX_NS), 0);
	hist_record(&h, 12345);
	json_t *a = segment_result(0, 2, &h, 900), *b = segment_result(1, 2, &h, 900);
	/* b's measured phase began 1 s after a's: its second 0 is a's second 1 */
	json_object_set_new(a, "clock", json_pack("{s:I}", "measure_start_realtime_ns",
						  (json_int_t)1000000000000ll));
	json_object_set_new(b, "clock", json_pack("{s:I}", "measure_start_realtime_ns",
						  (json_int_t)1001000000000ll));
	json_t *sa = json_array(), *sb = json_array();
	json_array_append_new(sa, point(0, 100, -1, 0, 0, 0));
	json_array_append_new(sa, point(1, 0, 3, 1, 2, 150));
	json_array_append_new(sa, point(2, 0, 1, 0, 0, 250));
	json_array_append_new(sb, point(0, 0, 4, 0, 5, 90));
	json_array_append_new(sb, point(1, 0, -1, 0, 0, 0));
	json_array_append_new(sb, point(2, 300, 0, 0, 0, 0));
	json_object_set_new(a, "series", sa);
	json_object_set_new(b, "series", sb);
	json_object_set_new(json_object_get(a, "measure"), "connect_failures",
			    json_pack("{s:i, s:i, s:i, s:i}", "refused", 4, "reset", 0, "timeout", 1,
				      "other", 0));
	json_object_set_new(json_object_get(b, "measure"), "connect_failures",
			    json_pack("{s:i, s:i, s:i, s:i}", "refused", 4, "reset", 0, "timeout", 0,
				      "other", 0));
	struct merge_input in[2] = {{"a.json", a}, {"b.json", b}};
	json_t *out = NULL;
	char err[512];
	assert_int_equal(result_merge(in, 2, &out, err, sizeof err), 0);
	const json_t *ser = json_object_get(out, "series");
	assert_int_equal(json_array_size(ser), 4);
	/* second 0: a's, without the fields */
	assert_null(json_object_get(json_array_get(ser, 0), "connect_failures"));
	/* second 1: a's 1 + b's 0 */
	const json_t *p1 = json_array_get(ser, 1);
	const json_t *cf = json_object_get(p1, "connect_failures");
	assert_int_equal(json_integer_value(json_object_get(cf, "refused")), 7);
	assert_int_equal(json_integer_value(json_object_get(cf, "timeout")), 1);
	assert_int_equal(json_integer_value(json_object_get(cf, "reset")), 0);
	assert_int_equal(json_integer_value(json_object_get(p1, "dropped")), 7);
	assert_int_equal(json_integer_value(json_object_get(p1, "unsent")), 240);
	assert_int_equal(json_integer_value(json_object_get(p1, "completed")), 0);
	/* second 2: a's 2 + b's 1 (b's without the fields) */
	const json_t *p2 = json_array_get(ser, 2);
	assert_int_equal(json_integer_value(json_object_get(
				 json_object_get(p2, "connect_failures"), "refused")), 1);
	assert_int_equal(json_integer_value(json_object_get(p2, "unsent")), 250);
	/* second 3: b's 2 */
	const json_t *p3 = json_array_get(ser, 3);
	assert_int_equal(json_integer_value(json_object_get(p3, "completed")), 300);
	assert_int_equal(json_integer_value(json_object_get(p3, "unsent")), 0);
	/* the phases' causes summed */
	cf = json_object_get(json_object_get(out, "measure"), "connect_failures");
	assert_int_equal(json_integer_value(json_object_get(cf, "refused")), 8);
	assert_int_equal(json_integer_value(json_object_get(cf, "timeout")), 1);
	json_decref(out);
	json_decref(a);
	json_decref(b);
	hist_free(&h);
}


/* Every counter of a second is summed at its wall-clock second, those a
 * reader added later too (by_class, transport_errors: the status chart). */
static void test_series_every_counter(void **state)
{
	(void)state;
	struct hist h;
	assert_int_equal(hist_init(&h, HIST_SUB_BITS, HIST_MAX_NS), 0);
	hist_record(&h, 12345);
	json_t *seg[2];
	for (int s = 0; s < 2; s++) {
		seg[s] = segment_result((uint32_t)s, 2, &h, 900);
		json_t *ser = json_array();
		for (int t = 0; t < 3; t++) {
			json_t *pt = point(t, 10 * (s + 1), 0, 0, 0, 0);
			json_object_set_new(pt, "transport_errors", json_integer(s + t));
			json_object_set_new(pt, "by_class",
					    json_pack("{s:i, s:i, s:i, s:i, s:i}", "1xx", 0, "2xx",
						      9 * (s + 1), "3xx", 0, "4xx", 0, "5xx", s + 1));
			json_array_append_new(ser, pt);
		}
		json_object_set_new(seg[s], "series", ser);
	}
	struct merge_input in[2] = {{"a.json", seg[0]}, {"b.json", seg[1]}};
	json_t *out = NULL;
	char err[512];
	assert_int_equal(result_merge(in, 2, &out, err, sizeof err), 0);
	const json_t *ser = json_object_get(out, "series");
	assert_int_equal(json_array_size(ser), 3);
	for (int t = 0; t < 3; t++) {
		const json_t *pt = json_array_get(ser, (size_t)t);
		assert_int_equal(json_integer_value(json_object_get(pt, "t_s")), t);
		assert_int_equal(json_integer_value(json_object_get(pt, "completed")), 30);
		assert_int_equal(json_integer_value(json_object_get(pt, "transport_errors")), 2 * t + 1);
		const json_t *bc = json_object_get(pt, "by_class");
		assert_true(json_is_object(bc));
		assert_int_equal(json_integer_value(json_object_get(bc, "2xx")), 27);
		assert_int_equal(json_integer_value(json_object_get(bc, "5xx")), 3);
	}
	json_decref(out);
	json_decref(seg[0]);
	json_decref(seg[1]);
	hist_free(&h);
}

/* The numbers of a segment are checked before anything is added: a count
 * that is not a whole number (200.5, "200", 1e300) is refused, not
 * skipped; one out of 0..2^53-1 (2^63-1, negative) is refused; and counts
 * that are each in range but add up past 2^53-1 are refused, not wrapped.
 * Each message names the file and the field's JSON path. */
static void test_hostile_numbers(void **state)
{
	(void)state;
	struct hist h;
	assert_int_equal(hist_init(&h, HIST_SUB_BITS, HIST_MAX_NS), 0);
	hist_record(&h, 12345);
	static const struct {
		const char *field; /* in b.json's measure (a: the requests; s: series[1]) */
		const char *json;  /* its value */
		int rc;
		const char *needle;
	} cases[] = {
		{"r.scheduled", "9223372036854775807", PACER_ERANGE,
		 "b.json: measure.requests.scheduled: 9223372036854775807 is out of range"},
		{"r.scheduled", "200.5", PACER_EPARSE,
		 "b.json: measure.requests.scheduled: 200.5 is not a count"},
		{"r.scheduled", "\"200\"", PACER_EPARSE,
		 "b.json: measure.requests.scheduled: not a count (a string)"},
		{"r.scheduled", "1e300", PACER_EPARSE, "b.json: measure.requests.scheduled: 1e+300"},
		{"r.sent", "-5", PACER_ERANGE, "b.json: measure.requests.sent: -5 is out of range"},
		{"r.completed", "true", PACER_EPARSE, "b.json: measure.requests.completed: not a count"},
		{"e.total", "9007199254740992", PACER_ERANGE, "b.json: measure.errors.total"},
		{"d.duration_s", "\"2\"", PACER_EPARSE, "b.json: measure.duration_s: not a number"},
		{"d.duration_s", "-1.5", PACER_ERANGE, "b.json: measure.duration_s: -1.5"},
		{"o.offered_per_s", "1e300", PACER_ERANGE, "b.json: measure.rate.offered_per_s: 1e+300"},
		{"l.count", "3.5", PACER_EPARSE, "b.json: measure.latency.count: 3.5 is not a count"},
		{"l.max_us", "-1", PACER_ERANGE, "b.json: measure.latency.max_us: -1"},
		{"s.completed", "1.5", PACER_EPARSE, "b.json: series[1].completed: 1.5 is not a count"},
		/* each in range, the sum not: a.json's is 2^53 - 1 too */
		{"A.dropped", "9007199254740991", PACER_ERANGE,
		 "b.json: measure.requests.dropped: adding it makes a count outside 0 to 2^53 - 1"},
		/* a.json schedules 1: the sum is 2^53 - 1, the most */
		{"r.scheduled", "9007199254740990", 0, NULL},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		json_t *a = segment_result(0, 2, &h, 900), *b = segment_result(1, 2, &h, 900);
		for (int s = 0; s < 2; s++)
			json_object_set_new(s ? b : a, "series",
					    json_pack("[o, o]", point(0, 1, 0, 0, 0, 0),
						      point(1, 1, 0, 0, 0, 0)));
		json_error_t je;
		json_t *v = json_loads(cases[i].json, JSON_DECODE_ANY, &je);
		assert_non_null(v);
		const char *key = cases[i].field + 2;
		json_t *m = json_object_get(b, "measure");
		switch (cases[i].field[0]) {
		case 'A':
			json_object_set(json_object_get(json_object_get(a, "measure"), "requests"),
					key, v);
			/* fall through */
		case 'r': json_object_set(json_object_get(m, "requests"), key, v); break;
		case 'e': json_object_set(json_object_get(m, "errors"), key, v); break;
		case 'd': json_object_set(m, key, v); break;
		case 'o': json_object_set(json_object_get(m, "rate"), key, v); break;
		case 'l': json_object_set(json_object_get(m, "latency"), key, v); break;
		case 's': json_object_set(json_array_get(json_object_get(b, "series"), 1), key, v); break;
		}
		json_decref(v);
		struct merge_input in[2] = {{"a.json", a}, {"b.json", b}};
		json_t *out = NULL;
		char err[512] = "";
		int rc = result_merge(in, 2, &out, err, sizeof err);
		if (rc != cases[i].rc || (cases[i].needle && !strstr(err, cases[i].needle)))
			fail_msg("case %zu (%s = %s): rc %d, err '%s'", i, cases[i].field,
				 cases[i].json, rc, err);
		if (rc)
			assert_null(out);
		json_decref(out);
		json_decref(a);
		json_decref(b);
	}
	hist_free(&h);
}

/* A field no rule covers is refused, naming it, rather than dropped or
 * taken from one segment; a field that must be the same in every segment
 * is compared; the rules' own table finds every path it lists. */
static void test_rules(void **state)
{
	(void)state;
	size_t n;
	const struct merge_rule *rules = merge_rules(&n);
	assert_true(n > 100);
	for (size_t i = 0; i < n; i++) {
		char path[256];
		/* the table's notation, made a path: an alias and "*" stand for keys */
		snprintf(path, sizeof path, "%s", rules[i].path);
		char *star = strchr(path, '*');
		if (star)
			*star = 'x';
		if (!strncmp(path, "@phase", 6)) {
			memmove(path + 8, path + 6, strlen(path + 6) + 1);
			memcpy(path, ".measure", 8);
		} else if (!strncmp(path, "@series", 7)) {
			path[0] = '.'; /* ".series" */
		} else if (!strncmp(path, "@outcomes", 9)) {
			memmove(path + 17, path + 9, strlen(path + 9) + 1);
			memcpy(path, ".measure.outcomes", 17);
		}
		bool below;
		const struct merge_rule *r = merge_rule_for(path, &below);
		if (r != &rules[i])
			fail_msg("%s: found %s", path, r ? r->path : "nothing");
		assert_string_not_equal(merge_rule_name(rules[i].kind), "?");
	}
	bool below;
	assert_null(merge_rule_for(".measure", &below));
	assert_true(below);
	assert_null(merge_rule_for(".measure.nothing", &below));
	assert_false(below);
	assert_int_equal(merge_rule_for(".steps[].series[].by_class.2xx", &below)->kind, MERGE_SUM);
	assert_int_equal(merge_rule_for(".warmup.latency.hist.counts", &below)->kind, MERGE_HIST);

	struct hist h;
	assert_int_equal(hist_init(&h, HIST_SUB_BITS, HIST_MAX_NS), 0);
	hist_record(&h, 12345);
	json_t *a = segment_result(0, 2, &h, 900), *b = segment_result(1, 2, &h, 900);
	struct merge_input in[2] = {{"a.json", a}, {"b.json", b}};
	json_t *out = NULL;
	char err[512];
	json_object_set_new(json_object_get(b, "measure"), "novel", json_integer(1));
	assert_int_equal(result_merge(in, 2, &out, err, sizeof err), PACER_EUNSUPPORTED);
	if (!strstr(err, "b.json: measure.novel: a field pacer merge has no rule for"))
		fail_msg("err: %s", err);
	json_object_del(json_object_get(b, "measure"), "novel");
	json_object_set_new(b, "mode", json_string("self_contained"));
	assert_int_equal(result_merge(in, 2, &out, err, sizeof err), PACER_EUNSUPPORTED);
	if (!strstr(err, "a.json and b.json differ in mode"))
		fail_msg("err: %s", err);
	json_object_set_new(b, "mode", json_string("live"));
	/* a merged result is not merged again */
	json_object_set_new(b, "merged", json_pack("{s:i}", "segments", 2));
	assert_int_equal(result_merge(in, 2, &out, err, sizeof err), PACER_EUNSUPPORTED);
	if (!strstr(err, "merged: not merged: a merged result"))
		fail_msg("err: %s", err);
	json_object_del(b, "merged");
	/* HTTP/2's streams: the most and a weighted mean, not sums; a late
	 * segment counted and named */
	for (int s = 0; s < 2; s++) {
		json_t *r = s ? b : a;
		json_object_set_new(json_object_get(r, "measure"), "http2",
				    json_pack("{s:i, s:i, s:f}", "connections_h2", 2, "streams_max",
					      s ? 9 : 4, "streams_mean", s ? 3.0 : 1.0));
		json_object_set_new(r, "clock", json_pack("{s:f}", "late_ms", s ? 1500.0 : 2.0));
	}
	assert_int_equal(result_merge(in, 2, &out, err, sizeof err), 0);
	const json_t *h2 = json_object_get(json_object_get(out, "measure"), "http2");
	assert_int_equal(json_integer_value(json_object_get(h2, "connections_h2")), 4);
	assert_int_equal(json_integer_value(json_object_get(h2, "streams_max")), 9);
	assert_true(fabs(json_real_value(json_object_get(h2, "streams_mean")) - 2.0) < 1e-9);
	const json_t *late = json_object_get(json_object_get(out, "merged"), "late");
	assert_int_equal(json_array_size(late), 1);
	assert_int_equal(json_integer_value(json_object_get(json_array_get(late, 0), "index")), 1);
	assert_string_equal(json_string_value(json_object_get(json_array_get(late, 0), "file")),
			    "b.json");
	assert_null(json_object_get(out, "clock"));
	json_decref(out);
	json_decref(a);
	json_decref(b);
	hist_free(&h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_percentiles_exact),
		cmocka_unit_test(test_histograms_never_summed),
		cmocka_unit_test(test_refusals),
		cmocka_unit_test(test_series_outage),
		cmocka_unit_test(test_series_every_counter),
		cmocka_unit_test(test_rules),
		cmocka_unit_test(test_hostile_numbers),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
