/* Tests of units parsing and formatting (src/util/units.c): tables of inputs
 * with the expected value or error code for rates, durations, counts and
 * sizes, and of values with the expected text for the formatters. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "util/err.h"
#include "util/units.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* A long number: 70 digits, over the parser's 63-character number cap. */
#define DIGITS70 "1000000000000000000000000000000000000000000000000000000000000000000000"

struct rate_case {
	const char *in;
	int rc;
	double want;
};

static const struct rate_case rates[] = {
	{ "500", 0, 500 },
	{ "2.5k", 0, 2500 },
	{ "20k", 0, 20000 },
	{ "20K", 0, 20000 },
	{ "1M", 0, 1e6 },
	{ "1.5M", 0, 1.5e6 },
	{ "1G", 0, 1e9 },
	{ "1000000000", 0, 1e9 },
	{ "0.5", 0, 0.5 },
	{ ".5", 0, 0.5 },
	{ "5.", 0, 5 },
	{ "007", 0, 7 },
	{ "0.001k", 0, 1 },
	{ "0", PACER_ERANGE, 0 },
	{ "0k", PACER_ERANGE, 0 },
	{ "0.0", PACER_ERANGE, 0 },
	{ "1000000001", PACER_ERANGE, 0 },
	{ "1.1G", PACER_ERANGE, 0 },
	{ DIGITS70, PACER_ERANGE, 0 },
	{ "-1", PACER_EPARSE, 0 },
	{ "+1", PACER_EPARSE, 0 },
	{ "abc", PACER_EPARSE, 0 },
	{ "1x", PACER_EPARSE, 0 },
	{ "", PACER_EPARSE, 0 },
	{ "1e3", PACER_EPARSE, 0 }, /* no exponent notation */
	{ "1E3", PACER_EPARSE, 0 },
	{ "0x10", PACER_EPARSE, 0 },
	{ " 1", PACER_EPARSE, 0 },
	{ "1 ", PACER_EPARSE, 0 },
	{ "1 k", PACER_EPARSE, 0 },
	{ ".", PACER_EPARSE, 0 },
	{ "k", PACER_EPARSE, 0 },
	{ "1.2.3", PACER_EPARSE, 0 },
	{ "1kk", PACER_EPARSE, 0 },
	{ "1m", PACER_EPARSE, 0 }, /* milli is not a rate suffix */
	{ "1Mi", PACER_EPARSE, 0 },
	{ "1/s", 0, 1 },                            /* vegeta's rates: N per duration */
	{ "50/1s", 0, 50 },
	{ "3000/1m", 0, 50 },
	{ "1k/500ms", 0, 2000 },
	{ "1/1m30s", 0, 1.0 / 90 },
	{ "50/0s", PACER_ERANGE, 0 },
	{ "50/", PACER_EPARSE, 0 },
	{ "/1s", PACER_EPARSE, 0 },
	{ "50/1", 0, 50 },                          /* a bare duration is seconds */
	{ "50/1x", PACER_EPARSE, 0 },
	{ "50/1s/2", PACER_EPARSE, 0 },
	{ "1/1h", PACER_ERANGE, 0 },                /* 0.00028/s: below the lowest rate */
	{ "nan", PACER_EPARSE, 0 },
	{ "inf", PACER_EPARSE, 0 },
	{ "1,000", PACER_EPARSE, 0 },
	{ "0.001", 0, 0.001 },                      /* the lowest rate (UNITS_MIN_RATE) */
	{ "0.0009", PACER_ERANGE, 0 },              /* below it: a typo that prints as 0 */
	{ ".000000000199", PACER_ERANGE, 0 },
};

static void test_rate(void **state)
{
	(void)state;
	for (size_t i = 0; i < N(rates); i++) {
		const struct rate_case *c = &rates[i];
		double v = -42;
		int rc = units_parse_rate(c->in, &v);
		if (rc != c->rc || (rc == 0 && v != c->want))
			print_message("rate \"%s\": rc %d v %.17g, want rc %d v %.17g\n", c->in, rc, v,
			              c->rc, c->want);
		assert_int_equal(rc, c->rc);
		if (rc == 0)
			assert_true(v == c->want);
		else
			assert_true(v == -42); /* untouched on error */
	}
	double v = -42;
	assert_int_equal(units_parse_rate(NULL, &v), PACER_EPARSE);
	assert_true(v == -42);
}

struct u64_case {
	const char *in;
	int rc;
	uint64_t want;
};

static void check_u64_table(const char *what, int (*fn)(const char *, uint64_t *),
                            const struct u64_case *tab, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const struct u64_case *c = &tab[i];
		uint64_t v = 4242;
		int rc = fn(c->in, &v);
		if (rc != c->rc || (rc == 0 && v != c->want))
			print_message("%s \"%s\": rc %d v %llu, want rc %d v %llu\n", what, c->in, rc,
			              (unsigned long long)v, c->rc, (unsigned long long)c->want);
		assert_int_equal(rc, c->rc);
		if (rc == 0)
			assert_true(v == c->want);
		else
			assert_true(v == 4242);
	}
	uint64_t v = 4242;
	assert_int_equal(fn(NULL, &v), PACER_EPARSE);
	assert_true(v == 4242);
}

#define S_NS 1000000000ull

static const struct u64_case durations[] = {
	{ "0", 0, 0 },
	{ "0s", 0, 0 },
	{ "0ms", 0, 0 },
	{ "10", 0, 10 * S_NS }, /* bare number: seconds */
	{ "1.5", 0, 1500000000ull },
	{ "1.5s", 0, 1500000000ull },
	{ "30s", 0, 30 * S_NS },
	{ ".25s", 0, 250000000ull },
	{ "7ns", 0, 7 },
	{ "250us", 0, 250000 },
	{ "1.5us", 0, 1500 },
	{ "10ms", 0, 10000000 },
	{ "0.5ms", 0, 500000 },
	{ "2m", 0, 120 * S_NS },
	{ "2min", 0, 120 * S_NS },
	{ "0.5m", 0, 30 * S_NS },
	{ "1h", 0, 3600 * S_NS },
	{ "1.5h", 0, 5400 * S_NS },
	{ "1.5ns", 0, 2 },       /* sub-nanosecond: rounded to nearest */
	{ "0.4ns", 0, 0 },
	{ "0.3s", 0, 300000000 }, /* 0.3 * 1e9 is not exact in binary: rounded */
	{ "1000000000s", 0, 1000000000ull * S_NS },
	{ "1000000000000000000ns", 0, 1000000000000000000ull },
	{ "277777h", 0, 277777ull * 3600 * S_NS },
	{ "1000000001s", PACER_ERANGE, 0 },
	{ "277778h", PACER_ERANGE, 0 },
	{ "16666667m", PACER_ERANGE, 0 },
	{ "18446744073709551616ns", PACER_ERANGE, 0 },
	{ DIGITS70, PACER_ERANGE, 0 },
	{ "-1s", PACER_EPARSE, 0 },
	{ "-0", PACER_EPARSE, 0 },
	{ "+1s", PACER_EPARSE, 0 },
	{ "", PACER_EPARSE, 0 },
	{ "s", PACER_EPARSE, 0 },
	{ "1S", PACER_EPARSE, 0 },
	{ "1sec", PACER_EPARSE, 0 },
	{ "1 s", PACER_EPARSE, 0 },
	{ "1d", PACER_EPARSE, 0 },
	{ "1ms5", PACER_EPARSE, 0 },
	{ "1m30s", 0, 90 * S_NS }, /* several parts, largest unit first */
	{ "1h5m", 0, 3900 * S_NS },
	{ "2s500ms", 0, 2500000000ull },
	{ "1m0.5s", 0, 60500000000ull },
	{ "30s1m", PACER_EPARSE, 0 }, /* units must fall */
	{ "1s1s", PACER_EPARSE, 0 },
	{ "1m30", PACER_EPARSE, 0 },  /* every part has a unit */
	{ "1m 30s", PACER_EPARSE, 0 },
	{ "1m-30s", PACER_EPARSE, 0 },
	{ "1m30x", PACER_EPARSE, 0 },
	{ "1e3", PACER_EPARSE, 0 },
	{ "1k", PACER_EPARSE, 0 },
	{ "1.2.3s", PACER_EPARSE, 0 },
	{ "inf", PACER_EPARSE, 0 },
};

static void test_duration(void **state)
{
	(void)state;
	check_u64_table("duration", units_parse_duration_ns, durations, N(durations));
}

static const struct u64_case counts[] = {
	{ "0", 0, 0 },
	{ "100", 0, 100 },
	{ "10k", 0, 10000 },
	{ "10K", 0, 10000 },
	{ "1.5k", 0, 1500 },
	{ "0.5k", 0, 500 },
	{ "2M", 0, 2000000 },
	{ "2.5M", 0, 2500000 },
	{ "3G", 0, 3000000000ull },
	{ "1.0", 0, 1 },
	{ "1000000000000000000", 0, 1000000000000000000ull },
	{ "1000000000G", 0, 1000000000000000000ull },
	{ "1000000001G", PACER_ERANGE, 0 },
	{ "18446744073709551615", PACER_ERANGE, 0 },
	{ DIGITS70, PACER_ERANGE, 0 },
	{ "1.5", PACER_EPARSE, 0 },
	{ "0.5", PACER_EPARSE, 0 },
	{ "1.0005k", PACER_EPARSE, 0 }, /* 1000.5 */
	{ "-1", PACER_EPARSE, 0 },
	{ "", PACER_EPARSE, 0 },
	{ "1e3", PACER_EPARSE, 0 },
	{ "10 k", PACER_EPARSE, 0 },
	{ "10m", PACER_EPARSE, 0 },
	{ "10x", PACER_EPARSE, 0 },
	{ "0x10", PACER_EPARSE, 0 },
};

static void test_count(void **state)
{
	(void)state;
	check_u64_table("count", units_parse_count, counts, N(counts));
}

/* A decimal count with a suffix that comes out whole must be accepted: the
 * user wrote an exact number. */
static const struct u64_case counts_decimal[] = {
	{ "16.1k", 0, 16100 },
	{ "64.9k", 0, 64900 },
	{ "1.001k", 0, 1001 },
	{ "1.015k", 0, 1015 },
	{ "2.01M", 0, 2010000 },
	{ "4.03M", 0, 4030000 },
};

static void test_count_decimal_suffix_exact(void **state)
{
	(void)state;
	unsigned bad = 0;
	for (size_t i = 0; i < N(counts_decimal); i++) {
		uint64_t v = 0;
		int rc = units_parse_count(counts_decimal[i].in, &v);
		if (rc != 0 || v != counts_decimal[i].want) {
			print_message("count \"%s\": rc %d v %llu, want %llu\n", counts_decimal[i].in,
			              rc, (unsigned long long)v,
			              (unsigned long long)counts_decimal[i].want);
			bad++;
		}
	}
	/* every a.bcd k */
	char s[32];
	for (unsigned a = 0; a < 10; a++)
		for (unsigned b = 0; b < 1000; b++) {
			snprintf(s, sizeof s, "%u.%03uk", a, b);
			uint64_t v = 0;
			int rc = units_parse_count(s, &v);
			if (rc != 0 || v != a * 1000 + b) {
				if (bad++ < 5)
					print_message("count \"%s\": rc %d v %llu\n", s, rc,
					              (unsigned long long)v);
			}
		}
	if (bad)
		print_message("%u of the cases above and 10000 \"a.bcdk\" counts not parsed "
		              "exactly\n", bad);
	assert_int_equal(bad, 0);
}

static const struct u64_case sizes[] = {
	{ "0", 0, 0 },
	{ "512", 0, 512 },
	{ "10B", 0, 10 },
	{ "4k", 0, 4096 },
	{ "4K", 0, 4096 },
	{ "4KiB", 0, 4096 },
	{ "4kB", 0, 4096 },
	{ "0.5KiB", 0, 512 },
	{ "2M", 0, 2097152 },
	{ "1MB", 0, 1048576 },
	{ "1.5MiB", 0, 1572864 },
	{ "1G", 0, 1073741824ull },
	{ "1GiB", 0, 1073741824ull },
	{ "3GB", 0, 3221225472ull },
	{ "931322GiB", 0, 931322ull << 30 },
	{ "1000000000000000", 0, 1000000000000000ull },
	{ "1000000000000001", PACER_ERANGE, 0 },
	{ "931323GiB", PACER_ERANGE, 0 },
	{ DIGITS70, PACER_ERANGE, 0 },
	{ "4kib", PACER_EPARSE, 0 },
	{ "4Kib", PACER_EPARSE, 0 },
	{ "4b", PACER_EPARSE, 0 },
	{ "4T", PACER_EPARSE, 0 },
	{ "4 KiB", PACER_EPARSE, 0 },
	{ "-1", PACER_EPARSE, 0 },
	{ "", PACER_EPARSE, 0 },
	{ "1e3", PACER_EPARSE, 0 },
	{ "KiB", PACER_EPARSE, 0 },
};

static void test_size(void **state)
{
	(void)state;
	check_u64_table("size", units_parse_size, sizes, N(sizes));
}

struct fmt_case {
	double v;
	int decimals; /* thousands only */
	const char *want;
};

static void check_fmt_duration(const struct fmt_case *tab, size_t n)
{
	char out[64];
	for (size_t i = 0; i < n; i++) {
		memset(out, 'X', sizeof out);
		char *r = units_fmt_duration(out, sizeof out, tab[i].v);
		if (strcmp(out, tab[i].want) != 0)
			print_message("fmt_duration(%.17g) = \"%s\", want \"%s\"\n", tab[i].v, out,
			              tab[i].want);
		assert_ptr_equal(r, out);
		assert_string_equal(out, tab[i].want);
	}
}

/* Three significant digits, a space, the unit ("µs" is UTF-8). */
static const struct fmt_case fmt_durations[] = {
	{ 0, 0, "0 ns" },
	{ 1, 0, "1 ns" },
	{ 850, 0, "850 ns" },
	{ 999, 0, "999 ns" },
	{ 999.4, 0, "999 ns" },
	{ 1000, 0, "1.00 \xc2\xb5s" },
	{ 1234, 0, "1.23 \xc2\xb5s" },
	{ 12300, 0, "12.3 \xc2\xb5s" },
	{ 99940, 0, "99.9 \xc2\xb5s" },
	{ 100000, 0, "100 \xc2\xb5s" },
	{ 123456, 0, "123 \xc2\xb5s" },
	{ 999400, 0, "999 \xc2\xb5s" },
	{ 1e6, 0, "1.00 ms" },
	{ 1.95e6, 0, "1.95 ms" },
	{ 250e6, 0, "250 ms" },
	{ 1e9, 0, "1.00 s" },
	{ 2e9, 0, "2.00 s" },
	{ 150e9, 0, "150 s" },
	{ 3600e9, 0, "3600 s" },
	{ -1500, 0, "-1.50 \xc2\xb5s" },
	{ -0.2, 0, "0 ns" }, /* no "-0" */
	{ NAN, 0, "\xe2\x80\x93" },
	{ INFINITY, 0, "\xe2\x80\x93" },
};

static void test_fmt_duration(void **state)
{
	(void)state;
	check_fmt_duration(fmt_durations, N(fmt_durations));
	/* truncated to cap, still terminated */
	char small[4];
	units_fmt_duration(small, sizeof small, 1.95e6);
	assert_string_equal(small, "1.9");
}

/* Values that round up to 1000 (or to 100) of a unit must move to the next
 * unit (or to one decimal), so the text keeps 3-4 significant digits. */
static const struct fmt_case fmt_duration_edges[] = {
	{ 999.5, 0, "1.00 \xc2\xb5s" },
	{ 999.6, 0, "1.00 \xc2\xb5s" },
	{ 9996, 0, "10.0 \xc2\xb5s" },
	{ 99960, 0, "100 \xc2\xb5s" },
	{ 999960, 0, "1.00 ms" },
	{ 999999, 0, "1.00 ms" },
	{ 99960000, 0, "100 ms" },
	{ 999960000, 0, "1.00 s" },
	{ 99.96e9, 0, "100 s" },
};

static void test_fmt_duration_rounding_edges(void **state)
{
	(void)state;
	char out[64];
	unsigned bad = 0;
	for (size_t i = 0; i < N(fmt_duration_edges); i++) {
		const struct fmt_case *c = &fmt_duration_edges[i];
		units_fmt_duration(out, sizeof out, c->v);
		if (strcmp(out, c->want) != 0) {
			print_message("fmt_duration(%.17g) = \"%s\", want \"%s\"\n", c->v, out, c->want);
			bad++;
		}
	}
	assert_int_equal(bad, 0);
}

static const struct fmt_case fmt_thousands[] = {
	{ 0, 0, "0" },
	{ 1, 0, "1" },
	{ 999, 0, "999" },
	{ 999.4, 0, "999" },
	{ 999.5, 0, "1,000" }, /* rounding carries into a new group */
	{ 1000, 0, "1,000" },
	{ 20000, 0, "20,000" },
	{ 100000, 0, "100,000" },
	{ 999999, 0, "999,999" },
	{ 1e6, 0, "1,000,000" },
	{ 1234.5, 1, "1,234.5" },
	{ 1234567.891, 2, "1,234,567.89" },
	{ 999999.96, 1, "1,000,000.0" },
	{ 0.5, 2, "0.50" },
	{ 12.25, 3, "12.250" },
	{ 123456789012345, 0, "123,456,789,012,345" },
	{ 18446744073709551615.0, 0, "18,446,744,073,709,551,616" },
	{ -1, 0, "-1" },
	{ -999, 0, "-999" },
	{ -1000, 0, "-1,000" },
	{ -0.25, 2, "-0.25" },
	{ -1234567.5, 1, "-1,234,567.5" },
	{ -999999.96, 1, "-1,000,000.0" },
	{ -0.0, 0, "0" },      /* the fuzzer's find: it printed "-0" */
	{ -0.0, 2, "0.00" },
	{ -0.001, 2, "0.00" }, /* rounds to zero: no sign */
};

static void test_fmt_thousands(void **state)
{
	(void)state;
	char out[64];
	for (size_t i = 0; i < N(fmt_thousands); i++) {
		const struct fmt_case *c = &fmt_thousands[i];
		memset(out, 'X', sizeof out);
		char *r = units_fmt_thousands(out, sizeof out, c->v, c->decimals);
		if (strcmp(out, c->want) != 0)
			print_message("fmt_thousands(%.17g, %d) = \"%s\", want \"%s\"\n", c->v,
			              c->decimals, out, c->want);
		assert_ptr_equal(r, out);
		assert_string_equal(out, c->want);
	}
	/* truncated to cap, still terminated */
	char small[4];
	units_fmt_thousands(small, sizeof small, 1234567, 0);
	assert_string_equal(small, "1,2");
}

/* Parsing what the formatter wrote for whole values gives the value back
 * (after removing the separators). */
static void test_fmt_thousands_roundtrip(void **state)
{
	(void)state;
	char out[64], plain[64];
	uint64_t v = 1;
	for (int i = 0; i < 60; i++, v = v * 3 + (uint64_t)i) {
		if (v > 1000000000000000ull)
			break;
		units_fmt_thousands(out, sizeof out, (double)v, 0);
		size_t o = 0, digits_since_comma = 0;
		bool seen_comma = false;
		for (const char *p = out; *p; p++) {
			if (*p == ',') {
				if (seen_comma)
					assert_int_equal(digits_since_comma, 3);
				else
					assert_true(digits_since_comma >= 1 && digits_since_comma <= 3);
				seen_comma = true;
				digits_since_comma = 0;
				continue;
			}
			digits_since_comma++;
			plain[o++] = *p;
		}
		plain[o] = '\0';
		if (seen_comma)
			assert_int_equal(digits_since_comma, 3);
		uint64_t back = 0;
		assert_int_equal(units_parse_count(plain, &back), 0);
		assert_true(back == v);
	}
}

/* Costs: significant digits in plain decimal, never "0.0000" nor an exponent. */
static void test_fmt_cost(void **state)
{
	(void)state;
	static const struct {
		double v;
		const char *prefix, *want;
	} cases[] = {
		{0.00055, "$", "$0.00055"},
		{0.000553, "$", "$0.000553"},
		{0.0005534, "$", "$0.000553"},
		{9.5e-05, "$", "$0.000095"},
		{0.000727, "$", "$0.000727"},
		{0.0123, "$", "$0.0123"},
		{0.5, "$", "$0.5"},
		{0.999, "$", "$0.999"},
		{0.99951, "$", "$1.00"},  /* rounds into the next decade */
		{0.00099996, "$", "$0.001"},
		{1, "$", "$1.00"},
		{1.5, "$", "$1.50"},
		{1234.567, "$", "$1,234.57"},
		{0, "$", "$0"},
		{-0.00055, "$", "-$0.00055"},
		{-2.5, "", "-2.50"},
		{0.00055, "", "0.00055"},
		{0.00055, NULL, "0.00055"},
		{1.23e-12, "$", "$0.00000000000123"},
		{1.5e-15, "$", "$0.0000000000000015"},
		{3e-16, "$", "<$0.000000000000001"},
		{-3e-16, "$", "<$0.000000000000001"},
		{NAN, "$", "-"},
		{INFINITY, "$", "-"},
	};
	for (size_t i = 0; i < N(cases); i++) {
		char out[64];
		units_fmt_cost(out, sizeof out, cases[i].v, cases[i].prefix);
		if (strcmp(out, cases[i].want) != 0)
			fail_msg("units_fmt_cost(%.17g, \"%s\") = \"%s\", want \"%s\"", cases[i].v,
				 cases[i].prefix ? cases[i].prefix : "(null)", out, cases[i].want);
		/* what is printed reads back near the value: 3 significant digits */
		const char *num = out + strcspn(out, "0123456789<");
		if (out[0] == '<')
			num = out;
		if (isfinite(cases[i].v) && *num != '<' && cases[i].v != 0) {
			char plain[64];
			size_t o = 0;
			for (const char *p = num; *p; p++)
				if (*p != ',')
					plain[o++] = *p;
			plain[o] = '\0';
			double back = strtod(plain, NULL) * (cases[i].v < 0 ? -1 : 1);
			assert_true(fabs(back - cases[i].v) <= 0.005 * fabs(cases[i].v) + 0.005 * (fabs(cases[i].v) >= 1));
		}
		assert_null(strchr(out, 'e'));
	}
	/* a small buffer is cut, still terminated */
	char small[4];
	units_fmt_cost(small, sizeof small, 0.00055, "$");
	assert_string_equal(small, "$0.");
}

/* The rest of the one family: each is what every report prints. */
static void test_fmt_family(void **state)
{
	(void)state;
	char b[64];
	static const struct {
		double v;
		const char *want;
	} sig4[] = {{107.8e6, "107.8 ms"}, {100.4e6, "100.4 ms"}, {5e6, "5.000 ms"},
		    {999949, "999.9 \xc2\xb5s"}, {999960, "1.000 ms"}, {850, "850 ns"}};
	for (size_t i = 0; i < N(sig4); i++)
		assert_string_equal(units_fmt_duration_sig(b, sizeof b, sig4[i].v, 4), sig4[i].want);
	/* out of range asks for the nearest: 3 or 6 */
	assert_string_equal(units_fmt_duration_sig(b, sizeof b, 1234, 1), "1.23 \xc2\xb5s");
	assert_string_equal(units_fmt_duration_sig(b, sizeof b, 1234, 9), "1.23400 \xc2\xb5s");
	assert_string_equal(units_fmt_rate(b, sizeof b, 1000), "1,000");
	assert_string_equal(units_fmt_rate(b, sizeof b, 499.5), "499.5");
	assert_string_equal(units_fmt_rate(b, sizeof b, 12345.6), "12,346");
	assert_string_equal(units_fmt_pct(b, sizeof b, 0), "0.00%");
	assert_string_equal(units_fmt_pct(b, sizeof b, 1.254), "1.25%");
	assert_string_equal(units_fmt_pct(b, sizeof b, 0.0042), "0.0042%");
	assert_string_equal(units_fmt_pct(b, sizeof b, NAN), "\xe2\x80\x93");
	assert_string_equal(units_fmt_ratio(b, sizeof b, 1.0194), "1.019");
	assert_string_equal(units_fmt_ratio(b, sizeof b, 41.84), "41.8");
	assert_string_equal(units_fmt_ratio(b, sizeof b, 1234.4), "1234");
	assert_string_equal(units_fmt_seconds(b, sizeof b, 0.5), "0.500 s");
	assert_string_equal(units_fmt_seconds(b, sizeof b, 3), "3.0 s");
	assert_string_equal(units_fmt_seconds(b, sizeof b, 120), "120 s");
	assert_string_equal(units_fmt_bytes(b, sizeof b, 512), "512 B");
	assert_string_equal(units_fmt_bytes(b, sizeof b, 1536), "1.5 KiB");
	assert_string_equal(units_fmt_bytes(b, sizeof b, 2 * 1024.0 * 1024), "2.0 MiB");
	assert_string_equal(units_fmt_bytes(b, sizeof b, 1.25 * 1024 * 1024 * 1024), "1.25 GiB");
	assert_string_equal(units_fmt_thousands(b, sizeof b, INFINITY, 0), "\xe2\x80\x93");
	assert_string_equal(units_fmt_thousands(b, sizeof b, 1e300, 0), "1e+300");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rate),
		cmocka_unit_test(test_duration),
		cmocka_unit_test(test_count),
		cmocka_unit_test(test_count_decimal_suffix_exact),
		cmocka_unit_test(test_size),
		cmocka_unit_test(test_fmt_duration),
		cmocka_unit_test(test_fmt_duration_rounding_edges),
		cmocka_unit_test(test_fmt_thousands),
		cmocka_unit_test(test_fmt_thousands_roundtrip),
		cmocka_unit_test(test_fmt_cost),
		cmocka_unit_test(test_fmt_family),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
