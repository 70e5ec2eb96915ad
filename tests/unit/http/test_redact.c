/* Tests of the redaction of secret headers (src/http/redact.c): which names
 * are secrets (the four by default in any case, --redact-header's, none
 * with --no-redact), the header line and every command-line form a value
 * can take shown with its fingerprint and never with the value, and the
 * fingerprint the same for the same value and different for another. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "common/check.h"
#include "http/redact.h"

static void test_names(void **state)
{
	(void)state;
	static const char *const extra[] = {"X-Api-Key"};
	struct redact dflt = {0}, more = {.names = extra, .n_names = 1}, off = {.off = true};
	static const struct {
		const char *name;
		bool dflt, more;
	} cases[] = {
		{"Authorization", true, true},   {"authorization", true, true},
		{"PROXY-AUTHORIZATION", true, true}, {"Cookie", true, true},
		{"set-cookie", true, true},      {"X-Api-Key", false, true},
		{"x-api-key", false, true},      {"Accept", false, false},
		{"Authorizatio", false, false},  {"Cookies", false, false},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		const char *n = cases[i].name;
		CHECK(redact_header_name(&dflt, n, strlen(n)) == cases[i].dflt, "%s", n);
		CHECK(redact_header_name(NULL, n, strlen(n)) == cases[i].dflt, "%s", n);
		CHECK(redact_header_name(&more, n, strlen(n)) == cases[i].more, "%s", n);
		CHECK(!redact_header_name(&off, n, strlen(n)), "%s", n);
	}
	CHECK(redact_name_ok("X-Api-Key"), "token");
	CHECK(!redact_name_ok(""), "empty");
	CHECK(!redact_name_ok("X Api"), "a space");
	CHECK(!redact_name_ok("X:Api"), "a colon");
}

static void test_fingerprint(void **state)
{
	(void)state;
	char a[REDACT_FP_HEX + 1], b[REDACT_FP_HEX + 1], c[REDACT_FP_HEX + 1];
	redact_fingerprint("Bearer one", 10, a);
	redact_fingerprint("Bearer one", 10, b);
	redact_fingerprint("Bearer two", 10, c);
	CHECK(strlen(a) == REDACT_FP_HEX && strspn(a, "0123456789abcdef") == REDACT_FP_HEX, "%s", a);
	CHECK(!strcmp(a, b), "%s %s", a, b);
	CHECK(strcmp(a, c), "%s %s", a, c);
}

/* Every form shows the name and the fingerprint, never the value. */
static void test_lines_and_args(void **state)
{
	(void)state;
	char fp[REDACT_FP_HEX + 1], out[256], want[256];
	redact_fingerprint("Bearer s3cret", 13, fp);
	static const char *const extra[] = {"X-Api-Key"};
	struct redact r = {.names = extra, .n_names = 1};
	static const struct {
		const char *arg, *prefix; /* prefix NULL: shown as it is */
		const char *name, *sp;
	} cases[] = {
		{"Authorization: Bearer s3cret", "", "Authorization", " "},
		{"authorization:Bearer s3cret", "", "authorization", ""},
		{"-HAuthorization: Bearer s3cret", "-H", "Authorization", " "},
		{"-qHAuthorization:  Bearer s3cret", "-qH", "Authorization", "  "},
		{"--header=Authorization: Bearer s3cret", "--header=", "Authorization", " "},
		{"--head=Cookie: Bearer s3cret", "--head=", "Cookie", " "},
		{"B.header=Set-Cookie: Bearer s3cret", "B.header=", "Set-Cookie", " "},
		{"X-Api-Key: Bearer s3cret", "", "X-Api-Key", " "},
		{"Accept: text/plain", NULL, NULL, NULL},
		{"http://x/?q=1", NULL, NULL, NULL},
		{"-H", NULL, NULL, NULL},
		{"--rate=10", NULL, NULL, NULL},
		/* a URL's words are not header lines */
		{"http://x/Authorization:1", NULL, NULL, NULL},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		const char *got = redact_arg(&r, cases[i].arg, out, sizeof out);
		if (!cases[i].prefix) {
			CHECK(got == cases[i].arg, "%s: %s", cases[i].arg, got);
			continue;
		}
		snprintf(want, sizeof want, "%s%s:%s[redacted fingerprint %s]", cases[i].prefix,
			 cases[i].name, cases[i].sp, fp);
		CHECK(!strcmp(got, want), "%s: %s, expected %s", cases[i].arg, got, want);
		CHECK(!strstr(got, "s3cret"), "%s", got);
		struct redact off = {.off = true};
		CHECK(redact_arg(&off, cases[i].arg, out, sizeof out) == cases[i].arg, "%s",
		      cases[i].arg);
	}
	/* a header line as -H gives it */
	const char *got = redact_header_line(NULL, "Cookie: Bearer s3cret", out, sizeof out);
	snprintf(want, sizeof want, "Cookie: [redacted fingerprint %s]", fp);
	CHECK(!strcmp(got, want), "%s", got);
	const char *plain = "X-Api-Key: Bearer s3cret";
	CHECK(redact_header_line(NULL, plain, out, sizeof out) == plain, "not by default");
	/* cut short, never the value */
	got = redact_header_line(NULL, "Authorization: Bearer s3cret", out, 20);
	CHECK(strlen(got) == 19 && !strstr(got, "s3cret"), "%s", got);
}

/* A script's argument: always its fingerprint, unless redaction is off. */
static void test_value(void **state)
{
	(void)state;
	char out[REDACT_SHOWN_MAX], fp[REDACT_FP_HEX + 1], want[REDACT_SHOWN_MAX];
	redact_fingerprint("s3cret", 6, fp);
	snprintf(want, sizeof want, "[redacted fingerprint %s]", fp);
	assert_string_equal(redact_value(NULL, "s3cret", out, sizeof out), want);
	struct redact off = {.off = true};
	assert_string_equal(redact_value(&off, "s3cret", out, sizeof out), "s3cret");
	char small[8];
	assert_string_equal(redact_value(NULL, "s3cret", small, sizeof small), "[redact");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_fingerprint),
		cmocka_unit_test(test_lines_and_args),
		cmocka_unit_test(test_value),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
