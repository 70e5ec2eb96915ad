/* The generator self-checks (src/result/gencheck.c) on hand-built results:
 * the lateness-impact arithmetic (loop lag against latency at the same
 * statistic, against the SLO threshold, the --lag-limit floor), the blame of
 * a rate shortfall from the engine's waits (cap_wait, its idle part, the
 * threads' waits for a CPU), and when a busy thread matters. The shapes are
 * the ones issue 12 measured: a stalled target, a lateness that is most of
 * the p99, a saturated target, a starved generator. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "plan/slo.h"
#include "result/gencheck.h"
#include "result/result.h"

#define US 1000ull
#define MS 1000000ull
#define S 1000000000ull

/* hist_percentile is exact to a relative 2^-(sub_bits-1): 0.1 % here. */
static bool near(double got, double want, double rel)
{
	return fabs(got - want) <= fabs(want) * rel + 1e-9;
}

/* An open-loop result of 10 s at `offered`/s with `completed` responses;
 * no latency or lateness recorded yet. */
static void make(struct run_result *r, double offered, uint64_t completed)
{
	memset(r, 0, sizeof *r);
	assert_int_equal(phase_stats_init(&r->measure), 0);
	assert_int_equal(phase_stats_init(&r->warmup), 0);
	r->open_loop = offered > 0;
	r->offered_rate_per_s = offered;
	r->measure_ns = 10 * S;
	r->threads = 1;
	r->gen_busiest_thread_pct = 10;
	r->measure.completed = completed;
}

/* 99 % of requests at `low_ns`, the slowest 1 % at `high_ns` (so p99 is
 * low_ns, p99.9 high_ns); n a multiple of 100. */
static void record_tail(struct hist *h, uint64_t n, uint64_t low_ns, uint64_t high_ns)
{
	hist_record_n(h, low_ns, n / 100 * 99);
	hist_record_n(h, high_ns, n / 100);
}

static void lag_and_latency(struct run_result *r, uint64_t lag_ns, uint64_t lat_ns)
{
	hist_record_n(&r->measure.timing[TIM_LOOP_LAG], lag_ns, 10000);
	hist_record_n(&r->measure.timing[TIM_LATENCY], lat_ns, 10000);
}

static void parse_slo(struct slo *s, const char *expr)
{
	char err[256];
	assert_int_equal(slo_parse(s, expr, NULL, 0, err, sizeof err), 0);
}

static void test_impact_arithmetic(void **state)
{
	(void)state;
	/* the stall of issue 12: 4.0 ms of lateness against a p99 of 1.9 s */
	assert_true(near(gencheck_impact_pct(4.0e6, 1.9e9), 0.2105263, 1e-6));
	assert_true(gencheck_impact_pct(3.0, 4.0) == 75.0);
	assert_true(gencheck_impact_pct(0, 0) == 0);
	assert_true(gencheck_impact_pct(0, 5) == 0);
	assert_true(gencheck_impact_pct(5, 0) == 100); /* nothing but lateness measured */
	assert_true(gencheck_impact_pct(NAN, 5) == 0);
	assert_true(GENCHECK_MATERIAL_PCT == 5.0);
	assert_string_equal(gencheck_blame_name(GENCHECK_BLAME_TARGET), "target");
	assert_string_equal(gencheck_blame_name(GENCHECK_BLAME_GENERATOR), "generator");
	assert_string_equal(gencheck_blame_name(GENCHECK_BLAME_UNKNOWN), "unknown");
	assert_null(gencheck_blame_name(GENCHECK_BLAME_NONE));
}

/* The stall test's shape: lateness over --lag-limit that moves nothing. */
static void test_lag_immaterial(void **state)
{
	(void)state;
	struct run_result r;
	struct gen_verdict v;
	make(&r, 3000, 30000);
	lag_and_latency(&r, 4 * MS, 1900 * MS);
	gencheck_eval(&r, 0, 0, NULL, &v);
	const struct gencheck *c = &v.c[0];
	assert_string_equal(c->name, "loop_lag_p99");
	assert_true(c->evaluated);
	assert_false(c->fired);
	assert_false(v.flagged);
	assert_true(near(c->value, 4000, 2e-3));
	assert_true(c->threshold == 1000.0);
	assert_true(near(v.latency_p99_us, 1.9e6, 2e-3));
	assert_true(near(c->impact_pct, 100.0 * 4.0 / 1900.0, 4e-3));
	assert_true(c->material_pct == GENCHECK_MATERIAL_PCT);
	assert_non_null(strstr(c->finding, "immaterial"));
	assert_string_equal(c->advice, "");
	assert_int_equal(v.n_slo, 0);
	run_result_free(&r);
}

/* Lateness that is most of the p99 fires; under --lag-limit it does not. */
static void test_lag_material_and_floor(void **state)
{
	(void)state;
	struct run_result r;
	struct gen_verdict v;
	make(&r, 500, 5000);
	lag_and_latency(&r, 3 * MS, 3500 * US);
	gencheck_eval(&r, 0, 0, NULL, &v);
	assert_true(v.c[0].fired && v.flagged);
	assert_true(near(v.c[0].impact_pct, 100.0 * 3.0 / 3.5, 4e-3));
	assert_non_null(strstr(v.c[0].finding, "material"));
	assert_non_null(strstr(v.c[0].advice, "add --threads"));
	assert_null(strstr(v.c[0].advice, "hypervisor"));
	/* late while the hypervisor took 20 % of the generator's CPUs: said,
	 * and a quieter machine comes first; under 1 %, the advice is as before */
	r.gen_steal_known = true;
	r.gen_steal.gen_span_ns = r.gen_steal.all_span_ns = 10 * S;
	r.gen_steal.gen_ns = r.gen_steal.all_ns = 2 * S;
	gencheck_eval(&r, 0, 0, NULL, &v);
	assert_true(v.c[0].fired);
	assert_non_null(strstr(v.c[0].advice, "while the hypervisor took 20 % of its CPUs (steal "
					      "time): repeat on a quieter machine"));
	r.gen_steal.gen_ns = r.gen_steal.all_ns = S / 20; /* 0.5 % */
	gencheck_eval(&r, 0, 0, NULL, &v);
	assert_null(strstr(v.c[0].advice, "hypervisor"));
	r.gen_steal_known = false;
	gencheck_eval(&r, 5 * MS, 0, NULL, &v); /* a higher floor */
	assert_false(v.c[0].fired);
	run_result_free(&r);

	/* material (500 of 600 us) but under the default 1 ms floor */
	make(&r, 500, 5000);
	lag_and_latency(&r, 500 * US, 600 * US);
	gencheck_eval(&r, 0, 0, NULL, &v);
	assert_true(v.c[0].impact_pct > 80);
	assert_false(v.c[0].fired);
	assert_non_null(strstr(v.c[0].finding, "under --lag-limit"));
	gencheck_eval(&r, 100 * US, 0, NULL, &v);
	assert_true(v.c[0].fired);
	run_result_free(&r);

	/* exactly at the materiality line does not fire: it must be over it */
	make(&r, 500, 5000);
	lag_and_latency(&r, 2 * MS, 40 * MS); /* 5.0 % */
	gencheck_eval(&r, 0, 0, NULL, &v);
	assert_true(v.c[0].impact_pct <= 5.0 + 0.01);
	assert_false(v.c[0].fired);
	run_result_free(&r);

	/* lateness but no latency at all (every connection failed: no
	 * response, no timeout): there is no figure it could have moved, so
	 * it does not blame the generator (issue 32: it did, and exit 4) */
	struct slo slo;
	parse_slo(&slo, "p99<1ms");
	make(&r, 500, 0);
	hist_record_n(&r.measure.timing[TIM_LOOP_LAG], 2 * MS, 1000);
	gencheck_eval(&r, 0, 0, &slo, &v);
	assert_true(v.c[0].evaluated);
	assert_true(near(v.c[0].value, 2000, 2e-3));
	assert_true(v.c[0].impact_pct == 0);
	assert_false(v.c[0].fired);
	assert_false(v.flagged);
	assert_non_null(strstr(v.c[0].finding, "no latency was measured"));
	assert_int_equal(v.n_slo, 1);
	assert_false(v.slo[0].failed || v.slo[0].flips);
	/* a timed-out request is latency measured: then it counts again */
	hist_record_n(&r.measure.timing[TIM_LATENCY], 3 * MS, 10);
	gencheck_eval(&r, 0, 0, NULL, &v);
	assert_true(v.c[0].fired);
	run_result_free(&r);
}

/* Against the SLO: a failing clause that the lateness could flip fires even
 * when the figure moves under 5 %; one that fails by more does not. */
static void test_lag_against_slo(void **state)
{
	(void)state;
	struct run_result r;
	struct gen_verdict v;
	struct slo slo;
	make(&r, 1000, 10000);
	lag_and_latency(&r, 4 * MS, 102 * MS); /* 3.9 %: immaterial as a figure */

	parse_slo(&slo, "p99<100ms, errors<1%");
	gencheck_eval(&r, 0, 0, &slo, &v);
	assert_int_equal(v.n_slo, 1); /* errors is not a latency clause */
	assert_string_equal(v.slo[0].clause, "p99<100ms");
	assert_true(v.slo[0].failed);
	assert_true(v.slo[0].flips);
	assert_true(near(v.slo[0].threshold_us, 100000, 1e-12));
	assert_true(near(v.slo[0].loop_lag_us, 4000, 2e-3));
	assert_true(near(v.slo[0].latency_us, 102000, 2e-3));
	assert_true(near(v.slo[0].impact_pct, 4.0, 2e-3)); /* against the threshold */
	assert_true(v.c[0].impact_pct < GENCHECK_MATERIAL_PCT);
	assert_true(v.c[0].fired);
	assert_non_null(strstr(v.c[0].finding, "p99<100ms"));

	parse_slo(&slo, "p99<90ms"); /* fails by 12 ms: 4 ms cannot flip it */
	gencheck_eval(&r, 0, 0, &slo, &v);
	assert_true(v.slo[0].failed && !v.slo[0].flips);
	assert_false(v.c[0].fired);

	parse_slo(&slo, "p99<=200ms"); /* passes: lateness only makes it worse */
	gencheck_eval(&r, 0, 0, &slo, &v);
	assert_false(v.slo[0].failed || v.slo[0].flips);
	assert_false(v.c[0].fired);

	parse_slo(&slo, "p99<=102ms"); /* <= at the boundary holds */
	gencheck_eval(&r, 0, 0, &slo, &v);
	assert_true(near(v.slo[0].latency_us, 102000, 2e-3));
	run_result_free(&r);

	/* a clause at another statistic uses the lateness there: p99.9 */
	make(&r, 1000, 10000);
	record_tail(&r.measure.timing[TIM_LOOP_LAG], 10000, 100 * US, 30 * MS);
	record_tail(&r.measure.timing[TIM_LATENCY], 10000, 20 * MS, 60 * MS);
	parse_slo(&slo, "p99.9<50ms,max<1s,mean<1s");
	gencheck_eval(&r, 0, 0, &slo, &v);
	assert_int_equal(v.n_slo, 3);
	assert_true(near(v.slo[0].loop_lag_us, 30000, 2e-3));
	assert_true(v.slo[0].flips); /* 60 - 30 < 50 */
	assert_true(v.c[0].impact_pct < 1); /* p99: 0.1 of 20 ms */
	assert_true(v.c[0].fired);
	assert_non_null(strstr(v.c[0].finding, "SLO p99.9<50ms failed by less than the lateness"));
	assert_false(v.slo[1].failed);
	assert_true(near(v.slo[2].loop_lag_us, (0.99 * 100 + 0.01 * 30000), 2e-3));
	/* passing, so no flip, but there the lateness is half the figure */
	parse_slo(&slo, "p99.9<100ms");
	gencheck_eval(&r, 0, 0, &slo, &v);
	assert_false(v.slo[0].failed || v.slo[0].flips);
	assert_true(v.c[0].fired);
	assert_non_null(strstr(v.c[0].finding, "at SLO p99.9<100ms the lateness"));
	assert_non_null(strstr(v.c[0].finding, "50 % of the latency: material"));
	gencheck_eval(&r, 40 * MS, 0, &slo, &v); /* a floor over that lateness */
	assert_false(v.c[0].fired);
	run_result_free(&r);
}

/* The waits of a shortfall decide whose it was. */
static void test_rate_blame(void **state)
{
	(void)state;
	struct run_result r;
	struct gen_verdict v;

	/* a saturated target (issue 12: nginx at 4k, 54 % CPU): pacer idle
	 * while every connection waited for a response */
	make(&r, 1000, 3650);
	lag_and_latency(&r, 50 * US, 3 * S);
	r.measure.cap_wait_ns = 10 * S;
	r.measure.cap_wait_idle_ns = 9800 * MS;
	r.target.known = true;
	r.target.cores_busy = 0.54;
	gencheck_eval(&r, 0, 2, NULL, &v);
	const struct gencheck *c = &v.c[2];
	assert_string_equal(c->name, "achieved_rate");
	assert_true(c->evaluated);
	assert_true(near(c->value, 36.5, 1e-9));
	assert_int_equal(v.blame, GENCHECK_BLAME_TARGET);
	assert_true(near(c->impact_pct, 2.0, 1e-9));
	assert_true(c->material_pct == GENCHECK_GEN_SHARE_PCT);
	assert_false(c->fired);
	assert_false(v.flagged);
	assert_true(near(v.cap_wait_s, 10, 1e-12) && near(v.cap_wait_idle_s, 9.8, 1e-12));
	assert_non_null(strstr(c->finding, "target's fault"));
	assert_non_null(strstr(c->finding, "0.54 of 2 cores"));

	/* the same waits with pacer busy most of them: the generator's */
	r.measure.cap_wait_idle_ns = 1 * S;
	gencheck_eval(&r, 0, 2, NULL, &v);
	assert_int_equal(v.blame, GENCHECK_BLAME_GENERATOR);
	assert_true(near(v.c[2].impact_pct, 90.0, 1e-9));
	assert_true(v.c[2].fired && v.flagged);
	assert_non_null(strstr(v.c[2].finding, "generator's fault"));

	/* idle in the loop but waiting for a CPU (a hog on pacer's core): the
	 * waits for a CPU are not idle. 12 s over a 2 s warm-up + 10 s: 10 s
	 * of it in the measured phase. */
	r.measure.cap_wait_idle_ns = 9800 * MS;
	r.warmup_ns = 2 * S;
	r.gen_cpu_wait_known = true;
	r.gen_cpu_wait_ns = 12 * S;
	gencheck_eval(&r, 0, 2, NULL, &v);
	assert_true(near(v.cpu_wait_s, 10, 1e-12));
	assert_true(near(v.c[2].impact_pct, 100, 1e-9));
	assert_int_equal(v.blame, GENCHECK_BLAME_GENERATOR);
	r.gen_cpu_wait_ns = 1200 * MS; /* 1 s of 9.8 s idle: still the target's */
	gencheck_eval(&r, 0, 2, NULL, &v);
	assert_true(near(v.c[2].impact_pct, 12.0, 1e-9));
	assert_int_equal(v.blame, GENCHECK_BLAME_TARGET);
	r.gen_cpu_wait_known = false; /* unknown: taken as none */
	gencheck_eval(&r, 0, 2, NULL, &v);
	assert_true(isnan(v.cpu_wait_s));
	assert_true(near(v.c[2].impact_pct, 2.0, 1e-9));

	/* an interrupted run falls short by design */
	r.interrupted = true;
	r.measure.cap_wait_idle_ns = 0;
	gencheck_eval(&r, 0, 2, NULL, &v);
	assert_false(v.c[2].fired);
	assert_int_equal(v.blame, GENCHECK_BLAME_NONE);
	run_result_free(&r);

	/* no wait for a busy connection: late pickup or a saturated thread is
	 * the generator's; neither is unknown (errors, timeouts) */
	make(&r, 1000, 8000);
	lag_and_latency(&r, 3 * MS, 3500 * US);
	r.measure.cap_wait_ns = 50 * MS; /* under 1 % of the 10 s: none */
	r.measure.cap_wait_idle_ns = 50 * MS;
	gencheck_eval(&r, 0, 0, NULL, &v);
	assert_true(v.c[0].fired);
	assert_int_equal(v.blame, GENCHECK_BLAME_GENERATOR);
	assert_true(v.c[2].fired);
	run_result_free(&r);
	make(&r, 1000, 8000);
	lag_and_latency(&r, 10 * US, 3500 * US);
	gencheck_eval(&r, 0, 0, NULL, &v);
	assert_int_equal(v.blame, GENCHECK_BLAME_UNKNOWN);
	assert_false(v.c[2].fired || v.flagged);
	assert_true(isnan(v.c[2].impact_pct));
	r.gen_busiest_thread_pct = 99;
	gencheck_eval(&r, 0, 0, NULL, &v);
	assert_int_equal(v.blame, GENCHECK_BLAME_GENERATOR);
	assert_true(v.c[2].fired && v.c[1].fired);
	run_result_free(&r);

	/* the rate reached: no blame */
	make(&r, 1000, 9990);
	lag_and_latency(&r, 10 * US, 1 * MS);
	r.measure.cap_wait_ns = 2 * S;
	gencheck_eval(&r, 0, 0, NULL, &v);
	assert_true(near(v.c[2].value, 99.9, 1e-9));
	assert_int_equal(v.blame, GENCHECK_BLAME_NONE);
	assert_false(v.c[2].fired);
	run_result_free(&r);
}

/* A busy thread fires only when it cost something (open loop). */
static void test_busy_thread(void **state)
{
	(void)state;
	struct run_result r;
	struct gen_verdict v;
	/* 97 % busy spinning at 20k/s, on time, rate reached: kept up */
	make(&r, 20000, 200000);
	lag_and_latency(&r, 36 * US, 1350 * US);
	r.gen_busiest_thread_pct = 97;
	gencheck_eval(&r, 0, 0, NULL, &v);
	assert_true(v.c[1].evaluated);
	assert_false(v.c[1].fired);
	assert_false(v.flagged);
	assert_true(near(v.c[1].impact_pct, v.c[0].impact_pct, 1e-12));
	assert_non_null(strstr(v.c[1].finding, "kept up"));
	run_result_free(&r);
	/* busy and late enough to be material (under the floor): fires */
	make(&r, 20000, 200000);
	lag_and_latency(&r, 400 * US, 1350 * US);
	r.gen_busiest_thread_pct = 97;
	gencheck_eval(&r, 0, 0, NULL, &v);
	assert_false(v.c[0].fired);
	assert_true(v.c[1].fired && v.flagged);
	run_result_free(&r);
	/* closed loop: a busy thread caps the rate */
	make(&r, 0, 100);
	lag_and_latency(&r, 9 * MS, 10 * MS);
	r.gen_busiest_thread_pct = 95;
	gencheck_eval(&r, 0, 0, NULL, &v);
	assert_false(v.c[0].evaluated);
	assert_false(v.c[2].evaluated);
	assert_true(v.c[1].fired);
	r.gen_busiest_thread_pct = 50;
	gencheck_eval(&r, 0, 0, NULL, &v);
	assert_false(v.flagged);
	run_result_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_impact_arithmetic),
		cmocka_unit_test(test_lag_immaterial),
		cmocka_unit_test(test_lag_material_and_floor),
		cmocka_unit_test(test_lag_against_slo),
		cmocka_unit_test(test_rate_blame),
		cmocka_unit_test(test_busy_thread),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
