/* Cost per million requests (exact arithmetic, profile parsing), the
 * pooling of target usage and its waits for a CPU. The generator self-checks are tested in
 * test_gencheck.c. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "result/cost.h"
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
	/* waits for a CPU add up, and are known only when every part knew them */
	struct target_usage w = {
		.known = true, .cpu_s = 3, .cpu_wait_known = true, .cpu_wait_s = 1};
	struct target_usage w2 = w;
	target_usage_pool(&w, &w2, 10);
	assert_true(w.cpu_wait_known && w.cpu_wait_s == 2 && w.cpu_s == 6);
	assert_true(target_usage_cpu_wait_pct(&w) == 25.0);
	w2.cpu_wait_known = false;
	target_usage_pool(&w, &w2, 15);
	assert_false(w.cpu_wait_known);
	assert_true(isnan(target_usage_cpu_wait_pct(&w)));
	struct target_usage p = {
		.known = true, .cpu_pressure_known = true, .cpu_pressure_some_s = 1};
	target_usage_pool(&p, &p, 4);
	assert_true(p.cpu_pressure_known && p.cpu_pressure_some_s == 2);
	assert_true(target_usage_pressure_pct(&p, 8) == 25.0);
	assert_true(isnan(target_usage_pressure_pct(&p, 0)));
	assert_false(p.cpu_wait_known);
}

/* The wait share and when it is worth saying: a fifth of the runnable
 * time, and at least 5 % of the phase in waits. */
static void test_cpu_wait_material(void **state)
{
	(void)state;
	struct target_usage t = {.known = true, .cpu_wait_known = true};
	assert_true(target_usage_cpu_wait_pct(&t) == 0); /* neither ran nor waited */
	t.cpu_s = 3;
	t.cpu_wait_s = 1;
	assert_true(target_usage_cpu_wait_pct(&t) == 25.0);
	t.known = false;
	assert_true(isnan(target_usage_cpu_wait_pct(&t)));
	/* 25 % of the runnable time, 1 s of waits in a 10 s phase: material */
	assert_true(target_cpu_wait_material(25, 1, 10));
	assert_true(target_cpu_wait_material(20, 0.5, 10));
	assert_false(target_cpu_wait_material(19.99, 1, 10));
	/* a nearly idle target: 80 % of its bursts waiting, 10 ms in 10 s */
	assert_false(target_cpu_wait_material(80, 0.01, 10));
	assert_false(target_cpu_wait_material(80, 0.49, 10));
	assert_false(target_cpu_wait_material(NAN, 1, 10));
	assert_false(target_cpu_wait_material(50, 1, 0));
	assert_true(target_cpu_pressure_material(20));
	assert_false(target_cpu_pressure_material(19.9));
	assert_false(target_cpu_pressure_material(NAN));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cost_arithmetic),
		cmocka_unit_test(test_cost_profiles),
		cmocka_unit_test(test_target_pool),
		cmocka_unit_test(test_cpu_wait_material),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
