/* Tests of util/rng.h: rng_at is the SplitMix64 sequence (the numbers
 * rng_seed draws its state from), reached at any position directly. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "util/rng.h"

static void test_at_is_splitmix(void **state)
{
	(void)state;
	static const uint64_t keys[] = {0, 1, 42, 0xbf58476d1ce4e5b9ull, UINT64_MAX};
	for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) {
		struct rng r;
		rng_seed(&r, keys[k]); /* its state: SplitMix64's first four numbers */
		for (uint64_t i = 0; i < 4; i++)
			assert_int_equal(rng_at(keys[k], i), r.s[i]);
	}
}

/* Different keys, different streams; consecutive numbers differ. */
static void test_keys_differ(void **state)
{
	(void)state;
	for (uint64_t i = 0; i < 1000; i++) {
		assert_int_not_equal(rng_at(9, i), rng_at(10, i));
		assert_int_not_equal(rng_at(9, i), rng_at(9, i + 1));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_at_is_splitmix),
		cmocka_unit_test(test_keys_differ),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
