/* Summary statistics over repetitions: medians, ranges, bootstrap ratio CI. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "stats/summary.h"
#include "util/rng.h"

static void test_summary_of(void **state)
{
	(void)state;
	static const struct {
		double v[8];
		size_t n;
		double median, min, max;
	} cases[] = {
		{{5}, 1, 5, 5, 5},
		{{3, 1, 2}, 3, 2, 1, 3},
		{{4, 1, 3, 2}, 4, 2.5, 1, 4},
		{{7, 7, 7, 7, 7}, 5, 7, 7, 7},
		{{-1, 10, 0, 2, 2, 100}, 6, 2, -1, 100},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct summary s;
		summary_of(cases[i].v, cases[i].n, &s);
		assert_int_equal(s.n, cases[i].n);
		assert_true(s.median == cases[i].median);
		assert_true(s.min == cases[i].min);
		assert_true(s.max == cases[i].max);
	}
	struct summary s;
	summary_of(NULL, 0, &s);
	assert_int_equal(s.n, 0);
	assert_true(s.median == 0);
}

static void test_ratio_separated_is_significant(void **state)
{
	(void)state;
	double a[] = {100, 102, 98, 101, 99};
	double b[] = {200, 204, 196, 202, 198};
	struct ratio_ci ci;
	summary_ratio_ci(a, 5, b, 5, 2000, 1, 0.02, &ci);
	assert_true(ci.defined);
	assert_true(ci.ratio == 2.0);
	assert_true(ci.lo > 1.9 && ci.lo <= 2.0);
	assert_true(ci.hi >= 2.0 && ci.hi < 2.1);
	assert_true(ci.significant);
	/* the other way round */
	summary_ratio_ci(b, 5, a, 5, 2000, 1, 0.02, &ci);
	assert_true(ci.ratio == 0.5);
	assert_true(ci.hi < 1.0);
	assert_true(ci.significant);
}

static void test_ratio_overlapping_is_not(void **state)
{
	(void)state;
	double a[] = {100, 110, 90, 105, 95};
	double b[] = {101, 92, 108, 97, 103};
	struct ratio_ci ci;
	summary_ratio_ci(a, 5, b, 5, 2000, 1, 0.02, &ci);
	assert_true(ci.defined);
	assert_true(ci.lo <= 1.0 && ci.hi >= 1.0);
	assert_false(ci.significant);
}

static void test_noise_threshold(void **state)
{
	(void)state;
	/* perfectly separated, but only 1 % apart: within a 2 % noise band */
	double a[] = {100, 100, 100, 100, 100};
	double b[] = {101, 101, 101, 101, 101};
	struct ratio_ci ci;
	summary_ratio_ci(a, 5, b, 5, 500, 3, 0.02, &ci);
	assert_true(ci.lo > 1.0);
	assert_false(ci.significant);
	summary_ratio_ci(a, 5, b, 5, 500, 3, 0.005, &ci);
	assert_true(ci.significant);
}

static void test_deterministic_and_undefined(void **state)
{
	(void)state;
	double a[] = {10, 12, 9, 11, 13, 8, 10};
	double b[] = {11, 14, 10, 12, 15, 9, 13};
	struct ratio_ci x, y, z;
	summary_ratio_ci(a, 7, b, 7, 1000, 42, 0.02, &x);
	summary_ratio_ci(a, 7, b, 7, 1000, 42, 0.02, &y);
	assert_true(x.lo == y.lo && x.hi == y.hi && x.ratio == y.ratio);
	summary_ratio_ci(a, 7, b, 7, 1000, 43, 0.02, &z);
	assert_true(z.ratio == x.ratio); /* the point estimate does not depend on the seed */
	double zero[] = {0, 0, 0};
	summary_ratio_ci(zero, 3, b, 7, 100, 1, 0.02, &x);
	assert_false(x.defined);
	assert_false(x.significant);
	summary_ratio_ci(a, 0, b, 7, 100, 1, 0.02, &x);
	assert_false(x.defined);
}

/* Under the null (both sides from one distribution) the interval should
 * exclude 1 rarely: a method that always calls a difference fails here. */
static void test_null_false_positive_rate(void **state)
{
	(void)state;
	struct rng r;
	rng_seed(&r, 2024);
	int sig = 0, trials = 200;
	for (int t = 0; t < trials; t++) {
		double a[7], b[7];
		for (int i = 0; i < 7; i++) {
			a[i] = 100 + 20 * (rng_unit(&r) - 0.5);
			b[i] = 100 + 20 * (rng_unit(&r) - 0.5);
		}
		struct ratio_ci ci;
		summary_ratio_ci(a, 7, b, 7, 300, (uint64_t)t, 0.0, &ci);
		sig += ci.significant;
	}
	assert_true(sig <= trials * 12 / 100); /* nominal 5 %, generous bound */
}

/* The share of null trials (both sides uniform on one range) whose interval
 * excludes 1, with n values a side: what "significant" would say without the
 * SUMMARY_MIN_N floor. */
static double null_exclusion_rate(size_t n, int trials)
{
	struct rng r;
	rng_seed(&r, 7 + n);
	int out = 0;
	for (int t = 0; t < trials; t++) {
		double a[SUMMARY_MIN_N + 1], b[SUMMARY_MIN_N + 1];
		for (size_t i = 0; i < n; i++) {
			a[i] = 1 + rng_unit(&r);
			b[i] = 1 + rng_unit(&r);
		}
		struct ratio_ci ci;
		summary_ratio_ci(a, n, b, n, 1000, (uint64_t)t + 1, 0.0, &ci);
		out += ci.lo > 1.0 || ci.hi < 1.0;
		/* below the floor never significant, at or above it as the interval says */
		assert_true(ci.enough == (n >= SUMMARY_MIN_N));
		assert_true(ci.significant == (ci.enough && (ci.lo > 1.0 || ci.hi < 1.0)));
	}
	return (double)out / trials;
}

/* SUMMARY_MIN_N is the fewest repetitions at which the 95 % interval keeps
 * its promise (excludes 1 for at most 5 % of null trials); one fewer breaks
 * it. Also: a sample compared with itself at n = 1 is not a verdict. */
static void test_min_repetitions(void **state)
{
	(void)state;
	double below = null_exclusion_rate(SUMMARY_MIN_N - 1, 2000);
	double at = null_exclusion_rate(SUMMARY_MIN_N, 2000);
	if (!(below > 0.05 && at <= 0.05))
		fail_msg("null exclusion rate %.3f at n=%d, %.3f at n=%d", below, SUMMARY_MIN_N - 1, at,
			 SUMMARY_MIN_N);
	assert_true(null_exclusion_rate(1, 50) == 1.0); /* one value: a point "interval" */
	double a[] = {1.707}, b[] = {1.8};
	struct ratio_ci ci;
	summary_ratio_ci(a, 1, b, 1, 2000, 1, 0.02, &ci);
	assert_true(ci.defined);
	assert_false(ci.enough);
	assert_false(ci.significant);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_summary_of),
		cmocka_unit_test(test_ratio_separated_is_significant),
		cmocka_unit_test(test_ratio_overlapping_is_not),
		cmocka_unit_test(test_noise_threshold),
		cmocka_unit_test(test_deterministic_and_undefined),
		cmocka_unit_test(test_null_false_positive_rate),
		cmocka_unit_test(test_min_repetitions),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
