/* Tests of schedule lanes (sched_init_lane, --segment): the lanes of a
 * global schedule, taken together, give exactly the due times of the
 * global schedule itself, for constant and seeded Poisson arrivals, at
 * rates whose interval is not a whole number of ns. */
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_constant_lanes),
		cmocka_unit_test(test_poisson_lanes),
		cmocka_unit_test(test_lane_of_one),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
