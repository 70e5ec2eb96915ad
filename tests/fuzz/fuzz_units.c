/* libFuzzer harness for units parsing and formatting (src/util/units.c).
 *
 * Input: the text given to every units_parse_* (cut at the first NUL and at
 * 255 bytes). Success must come with a value in the documented range, only
 * for text that starts with a digit or '.', and the parsers that share a
 * suffix table must agree (a rate per duration, "50/1s", is its parts'
 * quotient). The formatters are fed the parsed values and a
 * double made of the input's first bytes, at several buffer sizes: output
 * always terminated and within the cap, and thousands-formatted text with
 * the separators removed must equal printf's "%.*f". Violations abort(). */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/err.h"
#include "util/units.h"

#define FUZZ_NAME "fuzz_units"
#define FUZZ_INPUT text
#include "common/fuzz_check.h"

static char text[256];

static bool is_err(int rc) { return rc == PACER_EPARSE || rc == PACER_ERANGE; }

/* Format into a canary-guarded buffer of `cap` bytes and check it. */
static void fmt_checked(int which, double v, int decimals, size_t cap)
{
	char buf[160];
	CHECK(cap + 8 <= sizeof buf);
	memset(buf, 0x5a, sizeof buf);
	char *r = which == 0 ? units_fmt_duration(buf, cap, v)
	                     : units_fmt_thousands(buf, cap, v, decimals);
	CHECK(r == buf);
	for (size_t i = cap; i < sizeof buf; i++)
		CHECK(buf[i] == 0x5a); /* nothing written past cap */
	if (cap > 0)
		CHECK(memchr(buf, '\0', cap) != NULL);
}

static void check_thousands(double v, int decimals)
{
	char out[128], want[128], plain[128];
	for (size_t cap = 0; cap <= 24; cap += 3)
		fmt_checked(1, v, decimals, cap);
	if (!isfinite(v) || decimals < 0 || decimals > 12)
		return;
	units_fmt_thousands(out, sizeof out, v, decimals);
	if (fabs(v) >= 1e21) { /* past any count: short, "%.3g" (util/units.h) */
		snprintf(want, sizeof want, "%.3g", v);
		CHECK(strcmp(out, want) == 0);
		return;
	}
	snprintf(want, sizeof want, "%.*f", decimals, v);
	/* a value that rounds to zero prints without a sign ("0.00", not "-0.00") */
	if (want[0] == '-' && strspn(want + 1, "0.") == strlen(want + 1))
		memmove(want, want + 1, strlen(want));
	/* strip separators, checking the groups: 1-3 digits, then threes */
	size_t o = 0, run = 0;
	bool comma = false, in_int = true;
	for (const char *p = out; *p; p++) {
		if (*p == '.')
			in_int = false;
		if (*p == ',') {
			CHECK(in_int);
			CHECK(comma ? run == 3 : run >= 1 && run <= 3);
			comma = true;
			run = 0;
			continue;
		}
		if (in_int && *p >= '0' && *p <= '9')
			run++;
		plain[o++] = *p;
	}
	plain[o] = '\0';
	if (comma)
		CHECK(run == 3);
	CHECK(strcmp(plain, want) == 0);
}

static void check_duration_fmt(double ns)
{
	char out[96];
	for (size_t cap = 0; cap <= 16; cap += 4)
		fmt_checked(0, ns, 0, cap);
	if (!isfinite(ns) || signbit(ns) || ns > 1e30) /* -0.0 prints as "-0ns" */
		return;
	units_fmt_duration(out, sizeof out, ns);
	size_t n = strlen(out);
	CHECK(n >= 2);
	CHECK(out[0] >= '0' && out[0] <= '9');
	CHECK(out[n - 1] == 's');
	/* "52.0 µs": the number, one space, the unit (util/units.h) */
	const char *unit = out + strspn(out, "0123456789.");
	CHECK(*unit == ' ');
	unit++;
	CHECK(strcmp(unit, "ns") == 0 || strcmp(unit, "\xc2\xb5s") == 0 || strcmp(unit, "ms") == 0 ||
	      strcmp(unit, "s") == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t n = size < sizeof text - 1 ? size : sizeof text - 1;
	memcpy(text, data, n);
	text[n] = '\0';
	bool starts_ok = (text[0] >= '0' && text[0] <= '9') || text[0] == '.';

	double rate = -1;
	int rc_rate = units_parse_rate(text, &rate);
	if (rc_rate == 0) {
		CHECK(starts_ok);
		CHECK(isfinite(rate) && rate > 0 && rate <= 1e9);
	} else {
		CHECK(is_err(rc_rate));
		CHECK(rate == -1);
	}

	uint64_t ns = 12345;
	int rc_dur = units_parse_duration_ns(text, &ns);
	if (rc_dur == 0) {
		CHECK(starts_ok);
		CHECK(ns <= 1000000000000000000ull);
	} else {
		CHECK(is_err(rc_dur));
		CHECK(ns == 12345);
	}

	uint64_t count = 12345;
	int rc_count = units_parse_count(text, &count);
	if (rc_count == 0) {
		CHECK(starts_ok);
		CHECK(count <= 1000000000000000000ull);
		/* rate and count share the metric suffixes */
		/* (below 1e9: "1000000000.3" is the count 1e9, within its whole-number
		 * tolerance, but a rate over the 1e9 bound) */
		if (count > 0 && count < 1000000000)
			CHECK(rc_rate == 0 && fabs(rate - (double)count) <= 1e-9 * (double)count);
		if (count == 0)
			CHECK(rc_rate == PACER_ERANGE);
	} else {
		CHECK(is_err(rc_count));
		CHECK(count == 12345);
	}
	/* a whole-valued rate is also a count (not one per duration: "50/1s") */
	const char *slash = strchr(text, '/');
	if (rc_rate == 0 && rate == floor(rate) && !slash)
		CHECK(rc_count == 0 && (double)count == rate);
	/* N/D is N (a rate's number) over the duration D ("/s": one second) */
	if (rc_rate == 0 && slash) {
		char num[256];
		snprintf(num, sizeof num, "%.*s", (int)(slash - text), text);
		double n_per = 0;
		uint64_t d_ns = 0;
		char d[260];
		snprintf(d, sizeof d, "%s%s", slash[1] >= 'a' && slash[1] <= 'z' ? "1" : "", slash + 1);
		CHECK(units_parse_duration_ns(d, &d_ns) == 0 && d_ns > 0);
		if (units_parse_rate(num, &n_per) == 0)
			CHECK(fabs(rate - n_per * 1e9 / (double)d_ns) <= 1e-9 * rate);
	}

	uint64_t bytes = 12345;
	int rc_size = units_parse_size(text, &bytes);
	if (rc_size == 0) {
		CHECK(starts_ok);
		CHECK(bytes <= 1000000000000000ull);
	} else {
		CHECK(is_err(rc_size));
		CHECK(bytes == 12345);
	}

	/* a bare number: seconds for a duration, the same as with "s" */
	size_t len = strlen(text);
	if (rc_dur == 0 && len > 0 &&
	    ((text[len - 1] >= '0' && text[len - 1] <= '9') || text[len - 1] == '.')) {
		char with_s[sizeof text + 1];
		snprintf(with_s, sizeof with_s, "%ss", text);
		uint64_t ns2 = 0;
		CHECK(units_parse_duration_ns(with_s, &ns2) == 0 && ns2 == ns);
	}

	/* formatters: on what was parsed, and on raw bytes as a double */
	if (rc_dur == 0)
		check_duration_fmt((double)ns);
	if (rc_rate == 0)
		check_thousands(rate, (int)(len % 4));
	if (rc_count == 0)
		check_thousands((double)count, 0);
	if (size >= 9) {
		double raw;
		memcpy(&raw, data, sizeof raw);
		int decimals = (int)(data[8] % 16) - 2; /* includes negative precision */
		check_thousands(raw, decimals);
		check_thousands(-raw, decimals);
		check_duration_fmt(raw);
		check_duration_fmt(fabs(raw));
	}
	return 0;
}
