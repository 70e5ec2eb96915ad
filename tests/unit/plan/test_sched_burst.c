/* Tests of bursts (sched_set_burst, --burst-size): each group of n arrivals
 * shares one due time; constant bursts are n / rate apart, so the mean rate
 * is the same; Poisson bursts have gaps of mean n / rate; n = 1 leaves every
 * schedule as it was, draw for draw; lanes of a bursty global schedule
 * together give the global one exactly (segments stay exact), and
 * sched_count_bursts counts what they hand out. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "plan/sched.h"

#define N 6000

static void test_constant_bursts(void **state)
{
	(void)state;
	struct sched s;
	sched_init(&s, SCHED_CONSTANT, 1000.0, 5000, 0, 1);
	sched_set_burst(&s, 50);
	uint64_t first = 0;
	for (uint64_t i = 0; i < N; i++) {
		uint64_t t = sched_next(&s);
		if (i == 0)
			first = t;
		/* burst b = i / 50 is due at 5000 + b * 50 ms */
		assert_int_equal(t, 5000 + (i / 50) * 50 * 1000000ull);
	}
	assert_int_equal(first, 5000);
}

static void test_phase_is_of_the_bursts(void **state)
{
	(void)state;
	/* two threads at half the rate each, phases 0 and 1/2: their bursts
	 * interleave halfway between each other's */
	struct sched a, b;
	sched_init(&a, SCHED_CONSTANT, 100.0, 0, 0.0, 1);
	sched_init(&b, SCHED_CONSTANT, 100.0, 0, 0.5, 1);
	sched_set_burst(&a, 10);
	sched_set_burst(&b, 10);
	for (int i = 0; i < 100; i++) {
		uint64_t ta = sched_next(&a), tb = sched_next(&b);
		assert_int_equal(tb - ta, 50 * 1000000ull); /* half of 100 ms */
	}
}

static void test_burst_of_one_changes_nothing(void **state)
{
	(void)state;
	for (int arr = SCHED_CONSTANT; arr <= SCHED_POISSON; arr++) {
		struct sched x, y;
		sched_init(&x, (enum sched_arrival)arr, 1234.567, 77, 0.25, 9);
		sched_init(&y, (enum sched_arrival)arr, 1234.567, 77, 0.25, 9);
		sched_set_burst(&y, 1);
		for (int i = 0; i < N; i++)
			assert_int_equal(sched_next(&x), sched_next(&y));
	}
}

static void test_poisson_bursts(void **state)
{
	(void)state;
	struct sched s;
	sched_init(&s, SCHED_POISSON, 2000.0, 0, 0, 3);
	sched_set_burst(&s, 20);
	uint64_t prev = 0, last = 0;
	double sum = 0, sum2 = 0;
	unsigned gaps = 0;
	for (uint64_t i = 0; i < 200000; i++) {
		uint64_t t = sched_next(&s);
		if (i % 20) {
			assert_int_equal(t, prev); /* inside a burst: the same due time */
		} else if (i) {
			double g = (double)(t - prev);
			sum += g;
			sum2 += g * g;
			gaps++;
		}
		prev = last = t;
	}
	double mean = sum / gaps, sd = sqrt(sum2 / gaps - mean * mean);
	/* bursts' gaps: exponential with mean 20 / 2000 s = 10 ms */
	assert_true(fabs(mean - 10e6) < 10e6 * 0.03);
	assert_true(fabs(sd - 10e6) < 10e6 * 0.05);
	(void)last;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* The lanes of a bursty schedule, merged, are the global bursty schedule. */
static void check_lanes(enum sched_arrival arr, uint32_t burst, uint32_t stride)
{
	static uint64_t global[N], lanes[N];
	struct sched g;
	sched_init(&g, arr, 777.0, 1000, 0, 42);
	sched_set_burst(&g, burst);
	for (size_t i = 0; i < N; i++)
		global[i] = sched_next(&g);
	size_t n = 0;
	for (uint32_t l = 0; l < stride; l++) {
		struct sched s;
		sched_init_lane(&s, arr, 777.0, 1000, 42, l, stride);
		sched_set_burst(&s, burst);
		for (;;) {
			uint64_t idx = sched_index(&s);
			if (idx >= N)
				break;
			uint64_t t = sched_next(&s);
			assert_int_equal(t, global[idx]);
			lanes[n++] = t;
		}
	}
	assert_int_equal(n, N);
	qsort(lanes, n, sizeof lanes[0], cmp_u64);
	for (size_t i = 0; i < N; i++)
		assert_int_equal(lanes[i], global[i]);
}

static void test_lanes_of_bursts(void **state)
{
	(void)state;
	const uint32_t bursts[] = {2, 7, 50};
	const uint32_t strides[] = {2, 3, 8, 64};
	for (size_t b = 0; b < 3; b++)
		for (size_t k = 0; k < 4; k++) {
			check_lanes(SCHED_CONSTANT, bursts[b], strides[k]);
			check_lanes(SCHED_POISSON, bursts[b], strides[k]);
		}
}

/* sched_count_bursts: the arrivals of every burst due in the window, as
 * sched_next hands them out (a segment numbers a ramp's steps by it). */
static void test_count_bursts(void **state)
{
	(void)state;
	for (int arr = SCHED_CONSTANT; arr <= SCHED_POISSON; arr++) {
		const uint32_t bursts[] = {1, 3, 50};
		for (size_t b = 0; b < 3; b++) {
			struct sched s;
			sched_init(&s, (enum sched_arrival)arr, 333.3, 0, 0, 5);
			sched_set_burst(&s, bursts[b]);
			const uint64_t windows[] = {0, 1, 999999, 1000000000, 2500000001ull};
			uint64_t due[4000];
			for (size_t i = 0; i < 4000; i++)
				due[i] = sched_next(&s);
			for (size_t k = 0; k < 5; k++) {
				uint64_t n = 0;
				while (n < 4000 && due[n] < windows[k])
					n++;
				assert_int_equal(sched_count_bursts((enum sched_arrival)arr, 333.3,
								    bursts[b], 5, windows[k]),
						 n);
			}
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_constant_bursts),
		cmocka_unit_test(test_phase_is_of_the_bursts),
		cmocka_unit_test(test_burst_of_one_changes_nothing),
		cmocka_unit_test(test_poisson_bursts),
		cmocka_unit_test(test_lanes_of_bursts),
		cmocka_unit_test(test_count_bursts),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
