/* Tests of the target's latency distributions (src/target/dist.c): the
 * percentiles of many seeded samples fall within tolerance of the configured
 * ones (p50/p99 for lognormal, the analytic quantiles for the others),
 * samples respect bounds and caps, impossible parameters are refused, and
 * the same seed gives the same samples. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "target/dist.h"
#include "util/clock.h"
#include "util/err.h"
#include "util/rng.h"

#define N 200000

static uint64_t samples[N];

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static double pct(double q) { return (double)samples[(size_t)(q * (N - 1))]; }

static void draw(const struct target_dist *d, uint64_t seed)
{
	struct rng r;
	rng_seed(&r, seed);
	for (size_t i = 0; i < N; i++)
		samples[i] = target_dist_sample(d, &r);
	qsort(samples, N, sizeof samples[0], cmp_u64);
}

static void near(double got, double want, double rel, const char *what)
{
	if (fabs(got - want) > rel * want)
		fail_msg("%s: got %.0f, want %.0f ± %.1f%%", what, got, want, rel * 100);
}

static void test_lognormal_p50_p99(void **state)
{
	(void)state;
	static const uint64_t p[][2] = {
		{2 * NS_PER_MS, 20 * NS_PER_MS},
		{100 * NS_PER_US, 150 * NS_PER_US},
		{50 * NS_PER_MS, 400 * NS_PER_MS},
		{1 * NS_PER_MS, 1 * NS_PER_MS}, /* p99 == p50: constant */
	};
	for (size_t i = 0; i < sizeof p / sizeof p[0]; i++) {
		struct target_dist d;
		const char *why;
		assert_int_equal(target_dist_set(&d, TARGET_DIST_LOGNORMAL, p[i][0], p[i][1], 0, &why), 0);
		draw(&d, 42 + i);
		near(pct(0.50), (double)p[i][0], 0.02, "p50");
		near(pct(0.99), (double)p[i][1], 0.05, "p99");
		near(target_dist_quantile(&d, 0.5), (double)p[i][0], 1e-6, "quantile(0.5)");
		near(target_dist_quantile(&d, 0.99), (double)p[i][1], 1e-6, "quantile(0.99)");
	}
}

static void test_exponential(void **state)
{
	(void)state;
	struct target_dist d;
	const char *why;
	assert_int_equal(target_dist_set(&d, TARGET_DIST_EXPONENTIAL, 3 * NS_PER_MS, 0, 0, &why), 0);
	draw(&d, 7);
	near(pct(0.5), target_dist_quantile(&d, 0.5), 0.02, "p50");
	near(pct(0.9), target_dist_quantile(&d, 0.9), 0.02, "p90");
	near(pct(0.99), target_dist_quantile(&d, 0.99), 0.05, "p99");
	near(target_dist_quantile(&d, 0.5), 3e6 * log(2), 1e-9, "median = mean ln 2");
	double sum = 0;
	for (size_t i = 0; i < N; i++)
		sum += (double)samples[i];
	near(sum / N, 3e6, 0.01, "mean");
}

static void test_uniform_and_fixed(void **state)
{
	(void)state;
	struct target_dist d;
	const char *why;
	assert_int_equal(target_dist_set(&d, TARGET_DIST_UNIFORM, 1000, 5000, 0, &why), 0);
	draw(&d, 9);
	assert_true(samples[0] >= 1000);
	assert_true(samples[N - 1] <= 5000);
	assert_int_equal(samples[0], 1000);     /* both ends are reached */
	assert_int_equal(samples[N - 1], 5000);
	near(pct(0.25), 2000, 0.02, "p25");
	near(pct(0.75), 4000, 0.02, "p75");

	assert_int_equal(target_dist_set(&d, TARGET_DIST_FIXED, 777, 0, 0, &why), 0);
	draw(&d, 1);
	assert_int_equal(samples[0], 777);
	assert_int_equal(samples[N - 1], 777);

	assert_int_equal(target_dist_set(&d, TARGET_DIST_NONE, 0, 0, 0, &why), 0);
	struct rng r;
	rng_seed(&r, 1);
	assert_int_equal(target_dist_sample(&d, &r), 0);
}

static void test_cap(void **state)
{
	(void)state;
	struct target_dist d;
	const char *why;
	uint64_t cap = 5 * NS_PER_MS;
	assert_int_equal(target_dist_set(&d, TARGET_DIST_LOGNORMAL, NS_PER_MS, 100 * NS_PER_MS, cap, &why), 0);
	draw(&d, 3);
	assert_int_equal(samples[N - 1], cap);
	/* the cap clips only the tail */
	near(pct(0.5), (double)NS_PER_MS, 0.02, "p50 under a cap");
}

static void test_refused(void **state)
{
	(void)state;
	struct target_dist d;
	const char *why = NULL;
	assert_int_equal(target_dist_set(&d, TARGET_DIST_LOGNORMAL, 10, 9, 0, &why), PACER_ERANGE);
	assert_non_null(why);
	assert_int_equal(target_dist_set(&d, TARGET_DIST_LOGNORMAL, 0, 9, 0, &why), PACER_ERANGE);
	assert_int_equal(target_dist_set(&d, TARGET_DIST_UNIFORM, 10, 9, 0, &why), PACER_ERANGE);
	assert_int_equal(target_dist_set(&d, TARGET_DIST_EXPONENTIAL, 0, 0, 0, &why), PACER_ERANGE);
	assert_int_equal(target_dist_set(&d, TARGET_DIST_FIXED, TARGET_LATENCY_CAP_NS + 1, 0, 0, &why),
	                 PACER_ERANGE);
	assert_int_equal(target_dist_set(&d, TARGET_DIST_FIXED, TARGET_LATENCY_CAP_NS, 0, 0, &why), 0);
}

static void test_deterministic(void **state)
{
	(void)state;
	struct target_dist d;
	const char *why;
	assert_int_equal(target_dist_set(&d, TARGET_DIST_LOGNORMAL, 1000, 9000, 0, &why), 0);
	struct rng a, b, c;
	rng_seed(&a, 5);
	rng_seed(&b, 5);
	rng_seed(&c, 6);
	int differ = 0;
	for (int i = 0; i < 1000; i++) {
		uint64_t x = target_dist_sample(&d, &a);
		assert_int_equal(x, target_dist_sample(&d, &b));
		differ += x != target_dist_sample(&d, &c);
	}
	assert_true(differ > 900);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lognormal_p50_p99), cmocka_unit_test(test_exponential),
		cmocka_unit_test(test_uniform_and_fixed), cmocka_unit_test(test_cap),
		cmocka_unit_test(test_refused),           cmocka_unit_test(test_deterministic),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
