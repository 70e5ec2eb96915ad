/* Tests of the intrusive timer heap (src/target/theap.c): random arm /
 * re-arm / cancel / pop sequences checked against a brute-force model. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "target/theap.h"

#define NT 500

static uint64_t xs(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* The earliest armed deadline in the model, or UINT64_MAX. */
static uint64_t model_min(const struct theap_node *t, const bool *armed)
{
	uint64_t m = UINT64_MAX;
	for (int i = 0; i < NT; i++)
		if (armed[i] && t[i].deadline_ns < m)
			m = t[i].deadline_ns;
	return m;
}

static void test_random_ops(void **state)
{
	(void)state;
	static struct theap_node t[NT];
	static bool armed[NT];
	struct theap h;
	theap_init(&h);
	for (int i = 0; i < NT; i++) {
		theap_node_init(&t[i]);
		armed[i] = false;
	}
	uint64_t s = 88172645463325252ull, now = 0;
	for (int step = 0; step < 200000; step++) {
		int i = (int)(xs(&s) % NT);
		switch (xs(&s) % 4) {
		case 0:
		case 1: /* arm or move */
			assert_int_equal(theap_arm(&h, &t[i], now + xs(&s) % 10000), 0);
			armed[i] = true;
			break;
		case 2:
			theap_cancel(&h, &t[i]);
			armed[i] = false;
			break;
		case 3: { /* advance time and pop what expired, in order */
			now += xs(&s) % 2000;
			uint64_t last = 0;
			struct theap_node *n;
			while ((n = theap_pop_expired(&h, now))) {
				assert_true(n->deadline_ns <= now);
				assert_true(n->deadline_ns >= last);
				last = n->deadline_ns;
				assert_false(theap_armed(n));
				int k = (int)(n - t);
				assert_true(armed[k]);
				armed[k] = false;
			}
			assert_true(model_min(t, armed) > now);
			break;
		}
		}
		struct theap_node *top = theap_peek(&h);
		uint64_t m = model_min(t, armed);
		if (m == UINT64_MAX)
			assert_null(top);
		else
			assert_int_equal(top->deadline_ns, m);
		for (int k = 0; k < NT; k += 50)
			assert_int_equal(theap_armed(&t[k]), armed[k]);
	}
	theap_free(&h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {cmocka_unit_test(test_random_ops)};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
