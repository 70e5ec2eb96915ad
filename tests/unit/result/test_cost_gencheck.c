/* Cost per million requests (exact arithmetic, profile parsing) and the
 * generator self-checks on synthetic results. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "result/cost.h"
#include "result/gencheck.h"
#include "result/result.h"
#include "util/err.h"

static void test_cost_arithmetic(void **state)
{
	(void)state;
	/* 3.6 ms per request at $1 per core-hour: 10^6 requests use 3,600 core-
	 * seconds = 1 core-hour = $1 */
	assert_true(fabs(cost_usd_per_million(3.6, 1.0) - 1.0) < 1e-12);
	assert_true(fabs(cost_usd_per_million(0.5, 0.02) - 0.5 * 1e6 / 3.6e6 * 0.02) < 1e-15);
	assert_true(cost_usd_per_million(0, 5) == 0);
	assert_true(fabs(cost_usd_per_million(2.0, 0.017) - 0.0094444444444444) < 1e-12);
}

static void test_cost_profiles(void **state)
{
	(void)state;
	struct cost_profiles ps;
	char err[256];
	cost_profiles_default(&ps);
	assert_int_equal(ps.n, 2);
	assert_true(ps.defaults);
	assert_string_equal(ps.p[0].name, "on-demand-x86");
	/* the first given replaces the defaults */
	assert_int_equal(cost_profile_add(&ps, "graviton.spot=0.0125", err, sizeof err), 0);
	assert_int_equal(ps.n, 1);
	assert_false(ps.defaults);
	assert_true(ps.p[0].usd_per_core_hour == 0.0125);
	assert_int_equal(cost_profile_add(&ps, "free=0", err, sizeof err), 0);
	static const char *bad[] = {"noequals", "=1", "x=", "x=abc", "x=-1", "x=inf", "x y=1",
				    "graviton.spot=1", "x=1e999"};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		err[0] = '\0';
		assert_int_equal(cost_profile_add(&ps, bad[i], err, sizeof err), PACER_EPARSE);
		assert_true(err[0] != '\0');
	}
	char arg[32];
	for (int i = 0; ps.n < COST_MAX_PROFILES; i++) {
		snprintf(arg, sizeof arg, "p%d=1", i);
		assert_int_equal(cost_profile_add(&ps, arg, err, sizeof err), 0);
	}
	assert_int_equal(cost_profile_add(&ps, "onemore=1", err, sizeof err), PACER_ETOOBIG);
}

/* An open-loop result of 10 s at `offered`/s with `completed` responses and
 * every loop lag equal to lag_ns. */
static void make(struct run_result *r, double offered, uint64_t completed, uint64_t lag_ns)
{
	memset(r, 0, sizeof *r);
	assert_int_equal(phase_stats_init(&r->measure), 0);
	assert_int_equal(phase_stats_init(&r->warmup), 0);
	r->open_loop = true;
	r->offered_rate_per_s = offered;
	r->measure_ns = 10ull * 1000000000ull;
	r->threads = 1;
	r->measure.completed = completed;
	hist_record_n(&r->measure.timing[TIM_LOOP_LAG], lag_ns, completed ? completed : 1);
}

static void test_gencheck(void **state)
{
	(void)state;
	struct run_result r;
	struct gen_verdict v;

	/* easy: on time, idle thread, rate reached, target known */
	make(&r, 1000, 10000, 50000);
	r.gen_busiest_thread_pct = 20;
	r.target.known = true;
	r.target.cores_busy = 0.3;
	gencheck_eval(&r, 0, 2, &v);
	assert_false(v.flagged);
	for (int i = 0; i < GENCHECK_N; i++)
		assert_true(v.c[i].evaluated);
	assert_true(v.c[0].threshold == 1000.0);

	/* late loop: fires, and a custom threshold moves it */
	run_result_free(&r);
	make(&r, 1000, 10000, 3000000);
	gencheck_eval(&r, 0, 2, &v);
	assert_true(v.flagged && v.c[0].fired);
	assert_true(fabs(v.c[0].value - 3000) < 3000 * 0.002);
	assert_true(strlen(v.c[0].advice) > 0);
	gencheck_eval(&r, 5000000, 2, &v);
	assert_false(v.c[0].fired);

	/* busy thread */
	run_result_free(&r);
	make(&r, 1000, 10000, 1000);
	r.gen_busiest_thread_pct = 97;
	gencheck_eval(&r, 0, 2, &v);
	assert_true(v.flagged && v.c[1].fired && !v.c[0].fired);

	/* shortfall: only with the target's CPU known and not saturated */
	run_result_free(&r);
	make(&r, 1000, 8000, 1000); /* 80 % of offered */
	gencheck_eval(&r, 0, 2, &v);
	assert_false(v.c[2].evaluated);
	assert_false(v.flagged);
	r.target.known = true;
	r.target.cores_busy = 0.5;
	gencheck_eval(&r, 0, 2, &v);
	assert_true(v.c[2].evaluated && v.c[2].fired && v.flagged);
	assert_true(fabs(v.c[2].value - 80.0) < 1e-9);
	r.target.cores_busy = 1.95; /* the target was the limit */
	gencheck_eval(&r, 0, 2, &v);
	assert_false(v.c[2].fired);
	r.target.cores_busy = 0.5;
	r.interrupted = true; /* an interrupted run falls short by design */
	gencheck_eval(&r, 0, 2, &v);
	assert_false(v.c[2].fired);

	/* closed loop: lateness and rate are not evaluated */
	run_result_free(&r);
	make(&r, 0, 100, 9000000);
	r.open_loop = false;
	gencheck_eval(&r, 0, 2, &v);
	assert_false(v.c[0].evaluated);
	assert_false(v.c[2].evaluated);
	assert_false(v.flagged);
	run_result_free(&r);
}

static void test_target_pool(void **state)
{
	(void)state;
	struct target_usage a = {.known = true, .split_known = true, .cpu_user_s = 1, .cpu_sys_s = 0.5,
				 .cpu_s = 1.5, .rss_known = true, .rss_start_bytes = 100,
				 .rss_peak_bytes = 300, .rss_end_bytes = 200};
	struct target_usage b = a;
	b.cpu_s = 2.5;
	b.cpu_user_s = 2;
	b.rss_peak_bytes = 250;
	b.rss_end_bytes = 240;
	snprintf(b.notes[0], TARGET_NOTE_LEN, "exited");
	b.n_notes = 1;
	target_usage_pool(&a, &b, 8.0);
	assert_true(a.cpu_s == 4.0);
	assert_true(a.cpu_user_s == 3.0);
	assert_true(a.cores_busy == 0.5);
	assert_int_equal(a.rss_start_bytes, 100);
	assert_int_equal(a.rss_peak_bytes, 300);
	assert_int_equal(a.rss_end_bytes, 240);
	assert_int_equal(a.n_notes, 1);
	target_usage_pool(&a, &b, 8.0); /* the same note is not repeated */
	assert_int_equal(a.n_notes, 1);
	struct target_usage none = {0};
	target_usage_pool(&none, &(struct target_usage){0}, 1);
	assert_false(none.known);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cost_arithmetic),
		cmocka_unit_test(test_cost_profiles),
		cmocka_unit_test(test_gencheck),
		cmocka_unit_test(test_target_pool),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
