/* Tests of schedule lanes (sched_init_lane, --segment): the lanes of a
 * global schedule, taken together, give exactly the due times of the
 * global schedule itself, for constant and seeded Poisson arrivals, at
 * rates whose interval is not a whole number of ns; and the count of a
 * window's arrivals (sched_count) that numbers a segment's ramp steps. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "plan/sched.h"

#define ARRIVALS 3000

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* Every lane of `stride` for ARRIVALS global arrivals, merged in order,
 * equals the global schedule; each lane's arrivals are its indexes. */
static void check_lanes(enum sched_arrival arr, double rate, uint32_t stride)
{
	static uint64_t global[ARRIVALS], lanes[ARRIVALS];
	struct sched g;
	sched_init(&g, arr, rate, 1000, 0, 42);
	for (size_t i = 0; i < ARRIVALS; i++)
		global[i] = sched_next(&g);
	size_t n = 0;
	for (uint32_t l = 0; l < stride; l++) {
		struct sched s;
		sched_init_lane(&s, arr, rate, 1000, 42, l, stride);
		for (;;) {
			uint64_t idx = sched_index(&s);
			if (idx >= ARRIVALS)
				break;
			assert_int_equal(idx % stride, l);
			uint64_t t = sched_next(&s);
			assert_int_equal(t, global[idx]); /* arrival idx, exactly */
			lanes[n++] = t;
		}
	}
	assert_int_equal(n, ARRIVALS);
	qsort(lanes, n, sizeof lanes[0], cmp_u64);
	assert_memory_equal(lanes, global, sizeof global);
}

static void test_constant_lanes(void **state)
{
	(void)state;
	check_lanes(SCHED_CONSTANT, 1000, 4);
	check_lanes(SCHED_CONSTANT, 333.3, 3);  /* interval 3,000,300.03 ns */
	check_lanes(SCHED_CONSTANT, 7777, 7);
	check_lanes(SCHED_CONSTANT, 50, 1);
}

static void test_poisson_lanes(void **state)
{
	(void)state;
	check_lanes(SCHED_POISSON, 1000, 4);
	check_lanes(SCHED_POISSON, 123.4, 5);
	check_lanes(SCHED_POISSON, 10000, 16);
	check_lanes(SCHED_POISSON, 5e5, 3);
	check_lanes(SCHED_POISSON, 777, 1024); /* lanes of two or three arrivals */
}

/* A lane of stride 1 is the plain schedule. */
static void test_lane_of_one(void **state)
{
	(void)state;
	struct sched a, b;
	sched_init(&a, SCHED_POISSON, 500, 7, 0, 9);
	sched_init_lane(&b, SCHED_POISSON, 500, 7, 9, 0, 1);
	for (int i = 0; i < 100; i++)
		assert_int_equal(sched_next(&a), sched_next(&b));
}

/* sched_count is the number of the schedule's due times before the window's
 * end, at the edge too (windows that end on, just before and just after a
 * due time), so that a segment numbers a step's arrivals from the steps
 * before it exactly as one process counts them. */
static void check_count(enum sched_arrival arr, double rate, uint64_t seed)
{
	struct sched g;
	sched_init(&g, arr, rate, 0, 0, seed);
	uint64_t prev = 0;
	/* Poisson counts draw the stream: every 13th arrival keeps it quick */
	uint64_t every = arr == SCHED_POISSON ? 13 : 1;
	for (uint64_t n = 0; n < ARRIVALS; n++) {
		uint64_t t = sched_next(&g); /* arrival n: n arrivals are due before t */
		if (n % every == 0) {
			assert_int_equal(sched_count(arr, rate, seed, t), n);
			assert_int_equal(sched_count(arr, rate, seed, t + 1), n + 1);
			if (t > prev + 1) /* strictly between the last two due times */
				assert_int_equal(sched_count(arr, rate, seed, t - 1), n);
		}
		prev = t;
	}
	assert_int_equal(sched_count(arr, rate, seed, 0), 0);
}

static void test_count(void **state)
{
	(void)state;
	check_count(SCHED_CONSTANT, 1000, 1);
	check_count(SCHED_CONSTANT, 333.3, 1); /* interval 3,000,300.03 ns: rounding at edges */
	check_count(SCHED_CONSTANT, 7777, 1);
	check_count(SCHED_CONSTANT, 0.7, 1);
	check_count(SCHED_CONSTANT, 3e6, 1);
	check_count(SCHED_POISSON, 1000, 42);
	check_count(SCHED_POISSON, 123.4, 7);
	/* a step's count from its warm-up and duration: 101/s for 800 ms */
	assert_int_equal(sched_count(SCHED_CONSTANT, 101, 1, 800000000), 81);
	assert_int_equal(sched_count(SCHED_CONSTANT, 500, 1, 2000000000), 1000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_constant_lanes),
		cmocka_unit_test(test_poisson_lanes),
		cmocka_unit_test(test_lane_of_one),
		cmocka_unit_test(test_count),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
