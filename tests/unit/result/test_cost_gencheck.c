/* Cost per million requests (exact arithmetic, profile parsing) and the
 * pooling of target usage. The generator self-checks are tested in
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
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cost_arithmetic),
		cmocka_unit_test(test_cost_profiles),
		cmocka_unit_test(test_target_pool),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
