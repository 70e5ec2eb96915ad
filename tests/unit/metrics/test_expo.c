/* Tests of the /metrics exposition writer (src/metrics/expo.c): the exact
 * text of whole families in both formats, labels and their escaping, the
 * Accept negotiation, and the quantile estimate of the live buckets
 * (against values worked out by hand from the bucket edges). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "metrics/expo.h"

/* The view written in fmt, as a malloc'd string. */
static char *written(const struct metrics_view *v, enum metrics_format fmt)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_non_null(f);
	assert_int_equal(metrics_expo_write(f, v, fmt), 0);
	assert_int_equal(fclose(f), 0);
	return buf;
}

/* Occurrences of part in text. */
static int count(const char *text, const char *part)
{
	int n = 0;
	for (const char *p = text; (p = strstr(p, part)); p += strlen(part))
		n++;
	return n;
}

static void assert_contains(const char *text, const char *part)
{
	if (!strstr(text, part))
		fail_msg("missing:\n%s\n---- in:\n%s", part, text);
}

/* One variant: 12 due, 11 sent, 10 complete (8 2xx, 2 5xx; 2 failed), one
 * timeout, one dropped; latencies of the measured phase: 5 <= 10 us, 3 in
 * (12.23, 12.59] us, 2 above 100 s, summing to 1.5 s; of the warm-up: one in
 * (97.16, 100] us. */
static struct metrics_variant one(void)
{
	struct metrics_variant m = {.step = 3, .offered_per_s = 1000, .phase = MPH_MEASURE};
	m.live.scheduled = 12;
	m.live.sent = 11;
	m.live.completed = 10;
	m.live.dropped = 1;
	m.live.failed = 2;
	m.live.errors[ERRK_TIMEOUT] = 1;
	m.live.errors[ERRK_CONNECT] = 4; /* 3 refused, 1 timed out */
	m.live.connect_fail[CONNF_REFUSED] = 3;
	m.live.connect_fail[CONNF_TIMEOUT] = 1;
	m.live.status_class[2] = 8;
	m.live.status_class[5] = 2;
	m.live.phase_bucket[1][0] = 5;
	m.live.phase_bucket[1][8] = 3;
	m.live.phase_bucket[1][ENGINE_LIVE_BUCKETS] = 2;
	m.live.phase_sum_ns[1] = 1500000000;
	m.live.phase_bucket[0][80] = 1;
	m.live.phase_sum_ns[0] = 99000;
	m.live.backlog = 4;
	m.live.conns_open = 7;
	m.live.cpu_ns = 250000000;
	m.live.threads = 2;
	m.recent_s[0] = 0.001;
	m.recent_s[1] = 0.0025;
	m.recent_s[2] = NAN;
	m.recent_s[3] = NAN;
	m.recent_count = 9;
	return m;
}

static void test_text_families(void **state)
{
	(void)state;
	struct metrics_variant m = one();
	struct metrics_view v = {.n_variants = 1, .v = &m, .window_s = 10};
	char *t = written(&v, METRICS_TEXT);
	/* the first family opens the text */
	assert_int_equal(strncmp(t,
				 "# HELP pacer_requests_scheduled_total Requests due by the schedule "
				 "(open loop) or issued (closed loop).\n"
				 "# TYPE pacer_requests_scheduled_total counter\n"
				 "pacer_requests_scheduled_total 12\n"
				 "# HELP pacer_requests_sent_total",
				 strlen("# HELP pacer_requests_scheduled_total Requests due by the "
					"schedule (open loop) or issued (closed loop).\n"
					"# TYPE pacer_requests_scheduled_total counter\n"
					"pacer_requests_scheduled_total 12\n"
					"# HELP pacer_requests_sent_total")),
			 0);
	assert_contains(t, "\npacer_requests_sent_total 11\n");
	assert_contains(t, "\npacer_requests_completed_total 10\n");
	assert_contains(t, "\npacer_requests_dropped_total 1\n");
	/* errors: per request (their sum is pacer's errors), per connection */
	assert_contains(t, "# TYPE pacer_request_errors_total counter\n"
			   "pacer_request_errors_total{kind=\"read\"} 0\n"
			   "pacer_request_errors_total{kind=\"write\"} 0\n"
			   "pacer_request_errors_total{kind=\"timeout\"} 1\n"
			   "pacer_request_errors_total{kind=\"parse\"} 0\n"
			   "pacer_request_errors_total{kind=\"closed\"} 0\n"
			   "pacer_request_errors_total{kind=\"reset\"} 0\n"
			   "pacer_request_errors_total{kind=\"failed_response\"} 2\n"
			   "# HELP pacer_connection_errors_total ");
	assert_contains(t, "# TYPE pacer_connection_errors_total counter\n"
			   "pacer_connection_errors_total{kind=\"connect\"} 4\n"
			   "pacer_connection_errors_total{kind=\"tls\"} 0\n"
			   "pacer_connection_errors_total{kind=\"protocol\"} 0\n"
			   "# HELP pacer_connect_failures_total ");
	assert_null(strstr(t, "pacer_errors_total")); /* the mixed family is gone */
	assert_null(strstr(t, "pacer_build_info"));   /* no version in the view */
	assert_contains(t, "# TYPE pacer_connect_failures_total counter\n"
			   "pacer_connect_failures_total{cause=\"refused\"} 3\n"
			   "pacer_connect_failures_total{cause=\"reset\"} 0\n"
			   "pacer_connect_failures_total{cause=\"timeout\"} 1\n"
			   "pacer_connect_failures_total{cause=\"other\"} 0\n");
	assert_contains(t, "# TYPE pacer_responses_total counter\n"
			   "pacer_responses_total{class=\"1xx\"} 0\n"
			   "pacer_responses_total{class=\"2xx\"} 8\n"
			   "pacer_responses_total{class=\"3xx\"} 0\n"
			   "pacer_responses_total{class=\"4xx\"} 0\n"
			   "pacer_responses_total{class=\"5xx\"} 2\n"
			   "pacer_responses_total{class=\"other\"} 0\n");
	assert_null(strstr(t, "pacer_outcomes")); /* no --outcome rules */
	assert_contains(t, "# TYPE pacer_backlog_requests gauge\npacer_backlog_requests 4\n");
	assert_contains(t, "\npacer_connections_open 7\n");
	assert_contains(t, "\npacer_connections_connecting 0\n");
	assert_contains(t, "# TYPE pacer_step gauge\npacer_step 3\n");
	assert_contains(t, "\npacer_offered_rate_requests_per_second 1000\n");
	assert_contains(t, "# TYPE pacer_phase gauge\n"
			   "pacer_phase{phase=\"idle\"} 0\n"
			   "pacer_phase{phase=\"warmup\"} 0\n"
			   "pacer_phase{phase=\"measure\"} 1\n"
			   "pacer_phase{phase=\"drain\"} 0\n");
	assert_contains(t, "# HELP pacer_latency_seconds Latency from the scheduled time to the "
			   "last byte, of full responses, by the phase they were due in.\n"
			   "# TYPE pacer_latency_seconds histogram\n"
			   "pacer_latency_seconds_bucket{phase=\"warmup\",le=\"1e-05\"} 0\n");
	assert_contains(t, "pacer_latency_seconds_bucket{phase=\"warmup\",le=\"9.716e-05\"} 0\n"
			   "pacer_latency_seconds_bucket{phase=\"warmup\",le=\"0.0001\"} 1\n");
	assert_contains(t, "pacer_latency_seconds_bucket{phase=\"warmup\",le=\"+Inf\"} 1\n"
			   "pacer_latency_seconds_sum{phase=\"warmup\"} 9.9e-05\n"
			   "pacer_latency_seconds_count{phase=\"warmup\"} 1\n"
			   "pacer_latency_seconds_bucket{phase=\"measure\",le=\"1e-05\"} 5\n"
			   "pacer_latency_seconds_bucket{phase=\"measure\",le=\"1.029e-05\"} 5\n");
	assert_contains(t, "pacer_latency_seconds_bucket{phase=\"measure\",le=\"1.223e-05\"} 5\n"
			   "pacer_latency_seconds_bucket{phase=\"measure\",le=\"1.259e-05\"} 8\n");
	assert_contains(t, "pacer_latency_seconds_bucket{phase=\"measure\",le=\"97.16\"} 8\n"
			   "pacer_latency_seconds_bucket{phase=\"measure\",le=\"100\"} 8\n"
			   "pacer_latency_seconds_bucket{phase=\"measure\",le=\"+Inf\"} 10\n"
			   "pacer_latency_seconds_sum{phase=\"measure\"} 1.5\n"
			   "pacer_latency_seconds_count{phase=\"measure\"} 10\n");
	/* every live edge for the latency, every 4th for the loop lag */
	assert_int_equal(count(t, "pacer_latency_seconds_bucket{"), 2 * (ENGINE_LIVE_BUCKETS + 1));
	assert_int_equal(count(t, "pacer_generator_loop_lag_seconds_bucket{"),
			 (ENGINE_LIVE_BUCKETS - 1) / 4 + 2);
	assert_contains(t, "pacer_generator_loop_lag_seconds_bucket{le=\"1e-05\"} 0\n"
			   "pacer_generator_loop_lag_seconds_bucket{le=\"1.122e-05\"} 0\n");
	assert_contains(t, "# TYPE pacer_latency_recent_seconds summary\n"
			   "pacer_latency_recent_seconds{quantile=\"0.5\"} 0.001\n"
			   "pacer_latency_recent_seconds{quantile=\"0.9\"} 0.0025\n"
			   "pacer_latency_recent_seconds{quantile=\"0.99\"} NaN\n"
			   "pacer_latency_recent_seconds{quantile=\"0.999\"} NaN\n"
			   "pacer_latency_recent_seconds_count 9\n");
	assert_contains(t, "last 10 s (estimated, within 3%).\n");
	assert_contains(t, "pacer_generator_loop_lag_seconds_bucket{le=\"+Inf\"} 0\n"
			   "pacer_generator_loop_lag_seconds_sum 0\n"
			   "pacer_generator_loop_lag_seconds_count 0\n");
	assert_contains(t, "# TYPE pacer_generator_cpu_seconds_total counter\n"
			   "pacer_generator_cpu_seconds_total 0.25\n");
	assert_null(strstr(t, "pacer_steal")); /* not known: not written */
	/* the text format ends with the last sample, no EOF marker */
	const char *tail = "# TYPE pacer_generator_threads gauge\npacer_generator_threads 2\n";
	size_t n = strlen(t), k = strlen(tail);
	assert_true(n > k);
	assert_string_equal(t + n - k, tail);
	assert_null(strstr(t, "# EOF"));
	free(t);
}

static void test_openmetrics_and_labels(void **state)
{
	(void)state;
	struct metrics_variant m[2] = {one(), one()};
	m[0].name = "a\"b\\c\nd";
	m[1].name = "plain";
	m[1].live.sent = 5;
	m[1].live.outcome[0] = 4;
	m[1].live.outcome[1] = 1;
	const char *outcomes[2] = {"fill", "empty"};
	struct metrics_view v = {.n_variants = 2, .v = m, .outcome_names = outcomes,
				 .n_outcomes = 2, .window_s = 10};
	char *t = written(&v, METRICS_OPENMETRICS);
	/* OpenMetrics: counter families are named without _total, samples with */
	assert_contains(t, "# HELP pacer_requests_sent Requests handed to a connection and "
			   "written.\n"
			   "# TYPE pacer_requests_sent counter\n"
			   "pacer_requests_sent_total{variant=\"a\\\"b\\\\c\\nd\"} 11\n"
			   "pacer_requests_sent_total{variant=\"plain\"} 5\n");
	assert_contains(t, "# TYPE pacer_outcomes counter\n"
			   "pacer_outcomes_total{variant=\"a\\\"b\\\\c\\nd\",outcome=\"fill\"} 0\n"
			   "pacer_outcomes_total{variant=\"a\\\"b\\\\c\\nd\",outcome=\"empty\"} 0\n"
			   "pacer_outcomes_total{variant=\"plain\",outcome=\"fill\"} 4\n"
			   "pacer_outcomes_total{variant=\"plain\",outcome=\"empty\"} 1\n");
	assert_contains(t, "pacer_latency_seconds_bucket{variant=\"plain\",phase=\"measure\","
			   "le=\"+Inf\"} 10\n");
	assert_contains(t, "# TYPE pacer_generator_cpu_seconds counter\n");
	assert_null(strstr(t, "_total counter"));
	free(t);
	/* the hypervisor's steal: the process's, without a variant label */
	v.steal_known = true;
	v.steal_s[0] = 0.5;
	v.steal_s[1] = 1.25;
	v.steal_cpus[0] = 1;
	v.steal_cpus[1] = 4;
	t = written(&v, METRICS_OPENMETRICS);
	assert_contains(t, "# TYPE pacer_steal_seconds counter\n"
			   "pacer_steal_seconds_total{cpus=\"generator\"} 0.5\n"
			   "pacer_steal_seconds_total{cpus=\"machine\"} 1.25\n"
			   "# HELP pacer_steal_cpus The CPUs pacer_steal_seconds is over.\n"
			   "# TYPE pacer_steal_cpus gauge\n"
			   "pacer_steal_cpus{cpus=\"generator\"} 1\n"
			   "pacer_steal_cpus{cpus=\"machine\"} 4\n");
	const char *tail = "pacer_generator_threads{variant=\"plain\"} 2\n# EOF\n";
	size_t n = strlen(t), k = strlen(tail);
	assert_true(n > k);
	assert_string_equal(t + n - k, tail);
	free(t);
}

/* The run and scenario labels on every sample, first; pacer_build_info;
 * label values with quotes, backslashes, newlines and bytes that are not
 * UTF-8 (a scenario file's name may hold any). */
static void test_run_labels_and_build_info(void **state)
{
	(void)state;
	struct metrics_variant m[2] = {one(), one()};
	m[0].name = "h1";
	m[1].name = "caf\xc3\xa9"; /* valid UTF-8: kept */
	struct metrics_view v = {.run = "20261202T101500Z-42",
				 .scenario = "my \"api\"\\\n\xff\xc3(x",
				 .version = "0.1.0",
				 .commit = "bf9135ee8788",
				 .n_variants = 2,
				 .v = m,
				 .window_s = 10};
	v.steal_known = true;
	char *t = written(&v, METRICS_TEXT);
	const char *lbl = "{run=\"20261202T101500Z-42\",scenario=\"my \\\"api\\\"\\\\\\n"
			  "\xef\xbf\xbd\xef\xbf\xbd(x\"";
	char want[512];
	snprintf(want, sizeof want,
		 "# HELP pacer_build_info Always 1; its labels name the pacer that serves these "
		 "metrics.\n# TYPE pacer_build_info gauge\n"
		 "pacer_build_info%s,version=\"0.1.0\",commit=\"bf9135ee8788\"} 1\n"
		 "# HELP pacer_requests_scheduled_total ",
		 lbl);
	assert_int_equal(strncmp(t, want, strlen(want)), 0);
	snprintf(want, sizeof want, "\npacer_requests_sent_total%s,variant=\"caf\xc3\xa9\"} 11\n",
		 lbl);
	assert_contains(t, want);
	snprintf(want, sizeof want, "\npacer_steal_cpus%s,cpus=\"machine\"} 0\n", lbl);
	assert_contains(t, want);
	/* every sample carries both */
	size_t lines = 0, labelled = 0;
	for (const char *p = t; *p; p = strchr(p, '\n') + 1) {
		if (*p != '#') {
			lines++;
			labelled += !strncmp(strchr(p, '{'), lbl, strlen(lbl));
		}
	}
	assert_true(lines > 1000);
	assert_int_equal(labelled, lines);
	free(t);
}

static void test_negotiate(void **state)
{
	(void)state;
	assert_int_equal(metrics_negotiate(NULL), METRICS_TEXT);
	assert_int_equal(metrics_negotiate("*/*"), METRICS_TEXT);
	assert_int_equal(metrics_negotiate("text/plain;version=0.0.4"), METRICS_TEXT);
	/* what Prometheus 2.42 sends */
	assert_int_equal(metrics_negotiate("application/openmetrics-text;version=1.0.0,application/"
					   "openmetrics-text;version=0.0.1;q=0.75,text/plain;"
					   "version=0.0.4;q=0.5,*/*;q=0.1"),
			 METRICS_OPENMETRICS);
	assert_int_equal(metrics_negotiate("text/plain, application/openmetrics-text; q=0.05"),
			 METRICS_OPENMETRICS);
	assert_int_equal(metrics_negotiate("application/openmetrics-text;q=0, text/plain"),
			 METRICS_TEXT);
	assert_int_equal(metrics_negotiate("application/openmetrics-text; q=0.0"), METRICS_TEXT);
	assert_string_equal(metrics_content_type(METRICS_TEXT),
			    "text/plain; version=0.0.4; charset=utf-8");
	assert_string_equal(metrics_content_type(METRICS_OPENMETRICS),
			    "application/openmetrics-text; version=1.0.0; charset=utf-8");
}

static void test_edges(void **state)
{
	(void)state;
	assert_int_equal(engine_live_edge_ns(0), 10000);
	assert_int_equal(engine_live_edge_ns(1), 10290);
	assert_int_equal(engine_live_edge_ns(8), 12590);
	assert_int_equal(engine_live_edge_ns(79), 97160);
	assert_int_equal(engine_live_edge_ns(80), 100000);
	assert_int_equal(engine_live_edge_ns(512), 25120000000ull);
	assert_int_equal(engine_live_edge_ns(560), 100000000000ull);
	assert_true(engine_live_edge_ns(561) == UINT64_MAX);
	double rmin = 2, rmax = 0;
	for (size_t i = 1; i < ENGINE_LIVE_BUCKETS; i++) {
		uint64_t lo = engine_live_edge_ns(i - 1), hi = engine_live_edge_ns(i);
		double r = (double)hi / (double)lo;
		rmin = r < rmin ? r : rmin;
		rmax = r > rmax ? r : rmax;
		if (i % ENGINE_LIVE_PER_DECADE == 0) /* each decade exact */
			assert_true(hi == 10 * engine_live_edge_ns(i - ENGINE_LIVE_PER_DECADE));
	}
	/* the 3 % bound of docs/metrics.md, and the hot path's table's
	 * assumption (at most one edge in a factor 65/64) */
	assert_true(rmax < 1.030);
	assert_true(rmin > 65.0 / 64);
	assert_int_equal(engine_live_bucket(0), 0);
	assert_int_equal(engine_live_bucket(10000), 0);
	assert_int_equal(engine_live_bucket(10001), 1);
	assert_int_equal(engine_live_bucket(10290), 1);
	assert_int_equal(engine_live_bucket(10291), 2);
	assert_int_equal(engine_live_bucket(99999), 80);
	assert_int_equal(engine_live_bucket(100000000000ull), 560);
	assert_int_equal(engine_live_bucket(100000000001ull), ENGINE_LIVE_BUCKETS);
	assert_int_equal(engine_live_bucket(UINT64_MAX), ENGINE_LIVE_BUCKETS);
	/* every edge, and its neighbours, against a plain linear search */
	for (size_t i = 0; i < ENGINE_LIVE_BUCKETS; i++)
		for (int d = -1; d <= 1; d++) {
			uint64_t v = engine_live_edge_ns(i) + (uint64_t)(int64_t)d;
			size_t want = 0;
			while (want < ENGINE_LIVE_BUCKETS && engine_live_edge_ns(want) < v)
				want++;
			assert_int_equal(engine_live_bucket(v), want);
		}
	/* and pseudo-random values over the whole range (xorshift64) */
	uint64_t x = 88172645463325252ull;
	for (int i = 0; i < 20000; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		uint64_t v = x >> (x % 64); /* every magnitude */
		size_t want = 0;
		while (want < ENGINE_LIVE_BUCKETS && engine_live_edge_ns(want) < v)
			want++;
		assert_int_equal(engine_live_bucket(v), want);
	}
}

/* cmocka 1.1 has no assert_double_equal */
#define assert_near(a, b, eps)                                                                   \
	do {                                                                                     \
		double a_ = (a), b_ = (b);                                                        \
		if (!(fabs(a_ - b_) <= (eps)))                                                    \
			fail_msg("%.17g != %.17g", a_, b_);                                       \
	} while (0)

static void test_quantile(void **state)
{
	(void)state;
	uint64_t b[ENGINE_LIVE_BUCKETS + 1] = {0};
	assert_true(isnan(metrics_quantile(b, 0.5)));
	/* 10 in (97.16, 100] us: linear inside the bucket */
	b[80] = 10;
	assert_near(metrics_quantile(b, 0.5), 98.58e-6, 1e-15);
	assert_near(metrics_quantile(b, 1.0), 100e-6, 1e-15);
	assert_near(metrics_quantile(b, 0.0), 97.16e-6, 1e-15);
	/* and 10 more in the first bucket, [0, 10] us */
	b[0] = 10;
	assert_near(metrics_quantile(b, 0.25), 5e-6, 1e-15);
	assert_near(metrics_quantile(b, 0.75), 98.58e-6, 1e-15);
	/* only overflow: the last edge, 100 s */
	memset(b, 0, sizeof b);
	b[ENGINE_LIVE_BUCKETS] = 3;
	assert_near(metrics_quantile(b, 0.99), 100.0, 1e-12);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_text_families),
		cmocka_unit_test(test_openmetrics_and_labels),
		cmocka_unit_test(test_run_labels_and_build_info),
		cmocka_unit_test(test_negotiate),
		cmocka_unit_test(test_edges),
		cmocka_unit_test(test_quantile),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
