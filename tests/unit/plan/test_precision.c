/* The precision budget's window rule (src/plan/precision.c): a share of
 * the p50 between the floor and the ceiling, no wider than a constant
 * schedule's gap, and the parse of --precision's value. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "plan/precision.h"

#define US 1000ull
#define MS (1000 * US)

static void test_share_of_p50(void **state)
{
	(void)state;
	/* 5 % of 20 ms at 1k/s constant: 1 ms, the gap itself */
	assert_int_equal(precision_window_ns(20 * MS, 0.05, 1000, 1, SCHED_CONSTANT), 1 * MS);
	/* 5 % of 2 ms: 100 us, well inside the 1 ms gap */
	assert_int_equal(precision_window_ns(2 * MS, 0.05, 1000, 1, SCHED_CONSTANT), 100 * US);
	/* 10 % of 3 ms at 100/s: 300 us */
	assert_int_equal(precision_window_ns(3 * MS, 0.10, 100, 1, SCHED_CONSTANT), 300 * US);
}

static void test_floor_and_ceiling(void **state)
{
	(void)state;
	/* 5 % of 100 us is 5 us: the floor */
	assert_int_equal(precision_window_ns(100 * US, 0.05, 1000, 1, SCHED_CONSTANT),
			 PRECISION_FLOOR_NS);
	/* 20 % of 1 s at 10/s (gap 100 ms): the 10 ms ceiling */
	assert_int_equal(precision_window_ns(1000 * MS, 0.2, 10, 1, SCHED_CONSTANT),
			 PRECISION_CEILING_NS);
	/* Poisson: the ceiling, not the gap */
	assert_int_equal(precision_window_ns(1000 * MS, 0.2, 1000, 1, SCHED_POISSON),
			 PRECISION_CEILING_NS);
}

static void test_constant_gap(void **state)
{
	(void)state;
	/* 5 % of 20 ms at 5k/s constant: the 200 us gap, not 1 ms */
	assert_int_equal(precision_window_ns(20 * MS, 0.05, 5000, 1, SCHED_CONSTANT), 200 * US);
	/* the same at Poisson arrivals: 1 ms */
	assert_int_equal(precision_window_ns(20 * MS, 0.05, 5000, 1, SCHED_POISSON), 1 * MS);
	/* bursts of 10 at 5k/s: a due time every 2 ms, so 1 ms fits */
	assert_int_equal(precision_window_ns(20 * MS, 0.05, 5000, 10, SCHED_CONSTANT), 1 * MS);
	/* 50k/s: the 20 us gap is under the floor, which wins */
	assert_int_equal(precision_window_ns(20 * MS, 0.05, 50000, 1, SCHED_CONSTANT),
			 PRECISION_FLOOR_NS);
}

static void test_unknown(void **state)
{
	(void)state;
	assert_int_equal(precision_window_ns(0, 0.05, 1000, 1, SCHED_CONSTANT), 0);
	assert_int_equal(precision_window_ns(20 * MS, 0, 1000, 1, SCHED_CONSTANT), 0);
	assert_int_equal(precision_window_ns(20 * MS, -1, 1000, 1, SCHED_CONSTANT), 0);
}

static void test_parse(void **state)
{
	(void)state;
	double s = 0;
	assert_int_equal(precision_parse("5%", &s), 0);
	assert_true(s > 0.0499 && s < 0.0501);
	assert_int_equal(precision_parse("0.5%", &s), 0);
	assert_true(s > 0.00499 && s < 0.00501);
	assert_int_equal(precision_parse("10", &s), 0);
	assert_true(s > 0.0999 && s < 0.1001);
	static const char *bad[] = {"",      "%",   "5%%", "5 %", "x",    "0%",
				    "0.05%", "51%", "-5%", "nan", "inf%", "5ms"};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		assert_int_equal(precision_parse(bad[i], &s), -1);
	assert_int_equal(precision_parse(NULL, &s), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_share_of_p50), cmocka_unit_test(test_floor_and_ceiling),
		cmocka_unit_test(test_constant_gap), cmocka_unit_test(test_unknown),
		cmocka_unit_test(test_parse),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
