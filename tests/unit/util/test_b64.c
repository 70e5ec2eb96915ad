/* Tests of Base64 (src/util/b64.c): every length from 0 to 64 bytes of
 * random data round-trips, the RFC 4648 section 10 vectors, and the
 * non-canonical or malformed forms the decoder refuses. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "util/b64.h"
#include "util/err.h"
#include "util/rng.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

static void test_round_trip_and_vectors(void **state)
{
	(void)state;
	struct rng r;
	rng_seed(&r, 7);
	unsigned char in[64], back[64];
	char enc[100];
	for (size_t n = 0; n <= sizeof in; n++) {
		for (size_t i = 0; i < n; i++)
			in[i] = (unsigned char)rng_next(&r);
		size_t el = b64_encode(in, n, enc);
		assert_int_equal(el, (n + 2) / 3 * 4);
		size_t bl = 99;
		assert_int_equal(b64_decode(enc, el, back, &bl), 0);
		assert_int_equal(bl, n);
		if (n)
			assert_memory_equal(in, back, n);
	}
	const struct {
		const char *in, *out;
	} v[] = {{"", ""}, {"f", "Zg=="}, {"fo", "Zm8="}, {"foo", "Zm9v"}, {"foob", "Zm9vYg=="},
	         {"fooba", "Zm9vYmE="}, {"foobar", "Zm9vYmFy"}};
	for (size_t i = 0; i < N(v); i++) {
		size_t el = b64_encode((const unsigned char *)v[i].in, strlen(v[i].in), enc);
		assert_int_equal(el, strlen(v[i].out));
		assert_memory_equal(enc, v[i].out, el);
	}
	const char *bad[] = {"Zg", "Zg=", "Z===", "Zh==", "Zm9=", "Zm9v=", "Zg==Zg==", "Zm 9", "Zm9*"};
	for (size_t i = 0; i < N(bad); i++) {
		size_t bl;
		if (b64_decode(bad[i], strlen(bad[i]), back, &bl) != PACER_EPARSE)
			fail_msg("'%s' decoded", bad[i]);
	}
}

static void test_encoded_len(void **state)
{
	(void)state;
	static const size_t want[] = {0, 4, 4, 4, 8, 8, 8, 12};
	for (size_t n = 0; n < N(want); n++)
		assert_int_equal(B64_ENCODED_LEN(n), want[n]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip_and_vectors),
		cmocka_unit_test(test_encoded_len),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
