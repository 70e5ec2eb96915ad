/* Response inspection as planned (src/plan/inspect.c): server-time specs,
 * the rules a plan takes and its outcome limit. Their evaluation on
 * captured responses: tests/unit/engine/test_inspect_eval.c. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "plan/inspect.h"
#include "util/err.h"

static void test_srvtime_parse(void **state)
{
	(void)state;
	char err[256];
	struct srvtime_spec s;
	assert_int_equal(srvtime_parse("server-timing", &s, err, sizeof err), 0);
	assert_int_equal(s.src, SRVTIME_SERVER_TIMING);
	assert_string_equal(s.name, "");
	assert_int_equal(srvtime_parse("server-timing:app", &s, err, sizeof err), 0);
	assert_string_equal(s.name, "app");
	assert_int_equal(srvtime_parse("header:X-Exec-Us:us", &s, err, sizeof err), 0);
	assert_int_equal(s.src, SRVTIME_HEADER);
	assert_string_equal(s.name, "X-Exec-Us");
	assert_true(s.ns_per_unit == 1e3);
	assert_int_equal(srvtime_parse("json:timing.exec", &s, err, sizeof err), 0);
	assert_true(s.ns_per_unit == 1e6);
	static const char *bad[] = {"", "servertiming", "header:", "header:X:min", "json:a..b",
				    "json:.a", "json:a.", "header:X Y", "bogus:x"};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		err[0] = '\0';
		assert_int_equal(srvtime_parse(bad[i], &s, err, sizeof err), PACER_EPARSE);
		assert_true(strlen(err) > 0);
		assert_null(strchr(err, '\n'));
	}
}

/* Up to INSPECT_MAX_OUTCOMES outcomes; without rules, nothing to capture. */
static void test_outcome_limit(void **state)
{
	(void)state;
	struct inspect in;
	char err[256];
	inspect_init(&in);
	char arg[64];
	for (int i = 0; i < INSPECT_MAX_OUTCOMES; i++) {
		snprintf(arg, sizeof arg, "o%d=status == %d", i, 200 + i);
		assert_int_equal(inspect_add_outcome(&in, arg, err, sizeof err), 0);
	}
	assert_int_equal(inspect_add_outcome(&in, "extra=true", err, sizeof err), PACER_ETOOBIG);
	inspect_finish(&in);
	assert_false(in.need_headers);
	assert_int_equal(in.need_body, 0);
	inspect_free(&in);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_srvtime_parse),
		cmocka_unit_test(test_outcome_limit),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
