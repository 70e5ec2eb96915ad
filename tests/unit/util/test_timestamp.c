/* Tests of util/timestamp.c: RFC 3339 times and +durations to ns since the
 * epoch, malformed and out-of-range input refused, formatting back. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "util/err.h"
#include "util/timestamp.h"

#define S 1000000000ull

static void test_valid(void **state)
{
	(void)state;
	static const struct {
		const char *in;
		uint64_t want;
	} cases[] = {
		{"1970-01-01T00:00:00Z", 0},
		{"1970-01-02T00:00:01Z", 86401 * S},
		{"2000-03-01T00:00:00Z", 951868800 * S}, /* after a leap day of a /400 year */
		{"2026-12-01T12:00:00Z", 1796126400 * S},
		{"2026-12-01T12:00:00.25Z", 1796126400 * S + 250000000},
		{"2026-12-01T12:00:00.123456789z", 1796126400 * S + 123456789},
		{"2026-12-01T13:00:00+01:00", 1796126400 * S},
		{"2026-12-01T06:30:00-05:30", 1796126400 * S},
		{"2026-12-01 12:00:00Z", 1796126400 * S},
		{"2024-02-29T00:00:00Z", 1709164800 * S},
		/* a leap second: the instant it ends, 2017-01-01T00:00:00Z */
		{"2016-12-31T23:59:60Z", 1483228800 * S},
		{"2016-12-31T23:59:60.5Z", 1483228800 * S + 500000000},
		{"2016-12-31T18:59:60-05:00", 1483228800 * S},
		{"+30s", 1000 * S + 30 * S},
		{"+2m", 1000 * S + 120 * S},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		uint64_t got = 1;
		int rc = timestamp_parse(cases[i].in, 1000 * S, &got);
		if (rc || got != cases[i].want)
			fail_msg("%s: rc %d, got %llu, want %llu", cases[i].in, rc,
				 (unsigned long long)got, (unsigned long long)cases[i].want);
	}
}

static void test_invalid(void **state)
{
	(void)state;
	static const char *const bad[] = {
		"",
		"now",
		"2026-12-01",
		"2026-12-01T12:00:00",
		"2026-13-01T00:00:00Z",
		"2026-02-29T00:00:00Z",
		"2026-12-32T00:00:00Z",
		"2026-12-01T24:00:00Z",
		"2026-12-01T12:60:00Z",
		"2026-12-01T12:00:00.Z",
		"2026-12-01T12:00:00.1234567890Z",
		"2026-12-01T12:00:00+1:00",
		"2026-12-01T12:00:00Zjunk",
		"+",
		"+soon",
		"+-5s",
		/* :60 anywhere but 23:59 UTC (it was read as :59) */
		"2026-12-01T12:34:60Z",
		"2016-12-31T23:58:60Z",
		"2016-12-31T23:59:60+01:00",
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		uint64_t got = 7;
		if (timestamp_parse(bad[i], 0, &got) != PACER_EPARSE || got != 7)
			fail_msg("accepted '%s'", bad[i]);
	}
	uint64_t got = 7;
	assert_int_equal(timestamp_parse("1969-12-31T23:59:59Z", 0, &got), PACER_ERANGE);
	assert_int_equal(timestamp_parse("2263-01-01T00:00:00Z", 0, &got), PACER_ERANGE);
	assert_int_equal(got, 7);
}

static void test_format_round_trip(void **state)
{
	(void)state;
	static const uint64_t t[] = {0, 951868800 * S + 5000000, 1796126400 * S + 250000000,
				     1709164800 * S + 86399 * S};
	for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
		char buf[40];
		timestamp_format(buf, sizeof buf, t[i]);
		uint64_t back;
		assert_int_equal(timestamp_parse(buf, 0, &back), 0);
		assert_int_equal(back, t[i]);
	}
	char buf[40];
	timestamp_format(buf, sizeof buf, 1796126400 * S + 250000000);
	assert_string_equal(buf, "2026-12-01T12:00:00.250Z");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_valid),
		cmocka_unit_test(test_invalid),
		cmocka_unit_test(test_format_round_trip),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
