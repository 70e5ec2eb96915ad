/* Tests of the ramp plan helpers (src/plan/ramp.c): --steps lists parse into
 * strictly increasing rates, and each kind of bad list is rejected with a
 * message naming the item by position; geometric ramps end exactly at --to
 * and refuse bad bounds, factors and step counts over the cap; the refine
 * bisection halves the bracket and stops at the precision. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "plan/ramp.h"
#include "util/err.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* ------------------------------------------------------------ --steps */

struct steps_ok {
	const char *list;
	size_t n;
	double rates[8];
};

static const struct steps_ok steps_ok_cases[] = {
	{"500,1000,2000,4000,8000", 5, {500, 1000, 2000, 4000, 8000}},
	{"1", 1, {1}},
	{"500,1000,2k,4k", 4, {500, 1000, 2000, 4000}},
	{"250,2.5k,3K,1M", 4, {250, 2500, 3000, 1e6}},
	{"0.5,1.5,999.5,1k", 4, {0.5, 1.5, 999.5, 1000}},
	{".25,1G", 2, {0.25, 1e9}},
	/* strictly increasing, however close */
	{"100,100.001", 2, {100, 100.001}},
};

static void test_steps_valid(void **state)
{
	(void)state;
	for (size_t i = 0; i < N(steps_ok_cases); i++) {
		const struct steps_ok *c = &steps_ok_cases[i];
		double rates[RAMP_MAX_STEPS];
		size_t n = 99;
		char err[256] = "untouched";
		int rc = ramp_parse_steps(c->list, rates, RAMP_MAX_STEPS, &n, err, sizeof err);
		if (rc)
			fail_msg("'%s': rc %d (%s)", c->list, rc, err);
		assert_int_equal(n, c->n);
		for (size_t k = 0; k < n; k++)
			if (rates[k] != c->rates[k])
				fail_msg("'%s' item %zu: %.17g, want %.17g", c->list, k + 1, rates[k],
					 c->rates[k]);
	}
}

struct steps_bad {
	const char *list;
	int rc;
	const char *want[3]; /* substrings of the message */
};

static const struct steps_bad steps_bad_cases[] = {
	{"", PACER_EPARSE, {"--steps", "empty"}},
	{"500,,1000", PACER_EPARSE, {"--steps", "item 2 ", "empty"}},
	{",500", PACER_EPARSE, {"item 1 ", "empty"}},
	{"500,1000,", PACER_EPARSE, {"item 3 ", "empty"}},
	{"500,abc", PACER_EPARSE, {"item 2 ", "'abc'"}},
	{"5x", PACER_EPARSE, {"item 1 ", "'5x'"}},
	{"500,1000,2k,-4k", PACER_EPARSE, {"item 4 ", "'-4k'"}},
	{"500,1000ms", PACER_EPARSE, {"item 2 ", "'1000ms'"}},
	{"100,0", PACER_ERANGE, {"item 2 ", "'0'", "above 0"}},
	{"100,2G", PACER_ERANGE, {"item 2 ", "'2G'"}},
	/* not increasing */
	{"500,400", PACER_ERANGE, {"item 2 ", "'400'", "not above"}},
	{"500,1000,1000", PACER_ERANGE, {"item 3 ", "'1000'", "not above"}},
	{"1k,1000", PACER_ERANGE, {"item 2 ", "'1000'", "not above"}},
	{"1,2,3,4,5,6,7,8,9,10,5", PACER_ERANGE, {"item 11 ", "'5'"}},
	/* an item longer than any rate */
	{"1,1000000000000000000000000000000000000000000000000000000000000000000000", PACER_EPARSE,
	 {"item 2 ", "too long"}},
};

static void test_steps_invalid(void **state)
{
	(void)state;
	for (size_t i = 0; i < N(steps_bad_cases); i++) {
		const struct steps_bad *c = &steps_bad_cases[i];
		double rates[RAMP_MAX_STEPS];
		size_t n;
		char err[256] = "";
		int rc = ramp_parse_steps(c->list, rates, RAMP_MAX_STEPS, &n, err, sizeof err);
		if (rc != c->rc)
			fail_msg("'%s': rc %d, want %d (%s)", c->list, rc, c->rc, err);
		assert_true(strchr(err, '\n') == NULL);
		for (size_t k = 0; k < N(c->want) && c->want[k]; k++)
			if (!strstr(err, c->want[k]))
				fail_msg("'%s': message \"%s\" lacks \"%s\"", c->list, err, c->want[k]);
	}
	/* NULL is an empty list */
	double rates[4];
	size_t n = 7;
	char err[128] = "";
	assert_int_equal(ramp_parse_steps(NULL, rates, N(rates), &n, err, sizeof err), PACER_EPARSE);
	assert_int_equal(n, 0);
	assert_non_null(strstr(err, "empty"));
}

static void test_steps_cap(void **state)
{
	(void)state;
	double rates[RAMP_MAX_STEPS + 1];
	size_t n;
	char err[256];
	/* exactly cap items fit, one more does not */
	assert_int_equal(ramp_parse_steps("1,2,3", rates, 3, &n, err, sizeof err), 0);
	assert_int_equal(n, 3);
	assert_int_equal(ramp_parse_steps("1,2,3,4", rates, 3, &n, err, sizeof err), PACER_ERANGE);
	assert_non_null(strstr(err, "more than 3 steps"));

	/* RAMP_MAX_STEPS items fit; RAMP_MAX_STEPS + 1 do not */
	char list[RAMP_MAX_STEPS * 8 + 16];
	size_t len = 0;
	for (unsigned i = 1; i <= RAMP_MAX_STEPS + 1; i++)
		len += (size_t)snprintf(list + len, sizeof list - len, "%s%u", i > 1 ? "," : "", i);
	char *last_comma = strrchr(list, ',');
	*last_comma = '\0';
	assert_int_equal(ramp_parse_steps(list, rates, RAMP_MAX_STEPS, &n, err, sizeof err), 0);
	assert_int_equal(n, RAMP_MAX_STEPS);
	assert_true(rates[RAMP_MAX_STEPS - 1] == RAMP_MAX_STEPS);
	*last_comma = ',';
	assert_int_equal(ramp_parse_steps(list, rates, RAMP_MAX_STEPS, &n, err, sizeof err),
			 PACER_ERANGE);
	assert_non_null(strstr(err, "more than 256 steps"));
}

static void test_steps_small_err_buffer(void **state)
{
	(void)state;
	double rates[4];
	size_t n;
	char err[8];
	memset(err, 'x', sizeof err);
	assert_int_equal(ramp_parse_steps("1,,2", rates, N(rates), &n, err, sizeof err), PACER_EPARSE);
	assert_int_equal(strlen(err), sizeof err - 1); /* truncated, terminated */
}

/* ------------------------------------------------------------ geometric */

struct geo_ok {
	double from, to, factor;
	size_t n;
	double rates[16];
};

static const struct geo_ok geo_ok_cases[] = {
	/* the product overshoots --to: the last step is --to itself */
	{100, 100e3, 2, 11,
	 {100, 200, 400, 800, 1600, 3200, 6400, 12800, 25600, 51200, 100e3}},
	/* the product lands on --to */
	{100, 1600, 2, 5, {100, 200, 400, 800, 1600}},
	{500, 8000, 2, 5, {500, 1000, 2000, 4000, 8000}},
	{1, 10, 1.5, 7, {1, 1.5, 2.25, 3.375, 5.0625, 7.59375, 10}},
	{1000, 1e6, 10, 4, {1000, 10e3, 100e3, 1e6}},
	{100, 150, 2, 2, {100, 150}},
	{1000, 1000, 2, 1, {1000}},
	/* products that miss --to by a rounding error end exactly at --to,
	 * without an extra step just beside it: 250 * 1.4 * 1.4 is
	 * 489.99999999999994 and 100 * 1.1 * 1.1 is 121.00000000000003 */
	{250, 490, 1.4, 3, {250, 350, 490}},
	{100, 121, 1.1, 3, {100, 110.00000000000001, 121}},
};

static void test_geometric_valid(void **state)
{
	(void)state;
	for (size_t i = 0; i < N(geo_ok_cases); i++) {
		const struct geo_ok *c = &geo_ok_cases[i];
		double rates[RAMP_MAX_STEPS];
		size_t n = 99;
		char err[256] = "";
		int rc = ramp_geometric(c->from, c->to, c->factor, rates, RAMP_MAX_STEPS, &n, err,
					sizeof err);
		if (rc)
			fail_msg("%g..%g by %g: rc %d (%s)", c->from, c->to, c->factor, rc, err);
		if (n != c->n) {
			for (size_t k = 0; k < n; k++)
				print_message("  step %zu: %.17g\n", k + 1, rates[k]);
			fail_msg("%g..%g by %g: %zu steps, want %zu", c->from, c->to, c->factor, n, c->n);
		}
		for (size_t k = 0; k < n; k++)
			if (rates[k] != c->rates[k])
				fail_msg("%g..%g by %g step %zu: %.17g, want %.17g", c->from, c->to,
					 c->factor, k + 1, rates[k], c->rates[k]);
		/* always: starts at from, ends exactly at to, strictly increasing */
		assert_true(rates[0] == c->from);
		assert_true(rates[n - 1] == c->to);
		for (size_t k = 1; k < n; k++)
			assert_true(rates[k] > rates[k - 1]);
	}
}

struct geo_bad {
	double from, to, factor;
	const char *want;
};

static const struct geo_bad geo_bad_cases[] = {
	{100, 100e3, 1, "--factor"},
	{100, 100e3, 0.5, "--factor"},
	{100, 100e3, 0, "--factor"},
	{100, 100e3, -2, "--factor"},
	{100, 100e3, NAN, "--factor"},
	{100, 100e3, INFINITY, "--factor"},
	{1000, 100, 2, "--from"},     /* from > to */
	{0, 100, 2, "--from"},        /* from 0 */
	{-10, 100, 2, "--from"},
	{NAN, 100, 2, "--from"},
	{100, NAN, 2, "--from"},
};

static void test_geometric_invalid(void **state)
{
	(void)state;
	for (size_t i = 0; i < N(geo_bad_cases); i++) {
		const struct geo_bad *c = &geo_bad_cases[i];
		double rates[RAMP_MAX_STEPS];
		size_t n = 99;
		char err[256] = "";
		int rc = ramp_geometric(c->from, c->to, c->factor, rates, RAMP_MAX_STEPS, &n, err,
					sizeof err);
		if (rc != PACER_ERANGE)
			fail_msg("%g..%g by %g: rc %d, want PACER_ERANGE", c->from, c->to, c->factor, rc);
		assert_int_equal(n, 0);
		if (!strstr(err, c->want))
			fail_msg("%g..%g by %g: message \"%s\" lacks \"%s\"", c->from, c->to, c->factor,
				 err, c->want);
	}
}

static void test_geometric_cap(void **state)
{
	(void)state;
	double rates[RAMP_MAX_STEPS];
	size_t n;
	char err[256];
	/* 1, 2, 4, 8: exactly 4 steps fit in 4, not in 3 */
	assert_int_equal(ramp_geometric(1, 8, 2, rates, 4, &n, err, sizeof err), 0);
	assert_int_equal(n, 4);
	assert_int_equal(ramp_geometric(1, 8, 2, rates, 3, &n, err, sizeof err), PACER_ERANGE);
	assert_non_null(strstr(err, "more than 3 steps"));
	/* 1 .. 1e9 by 1.01 is over 2,000 steps */
	assert_int_equal(ramp_geometric(1, 1e9, 1.01, rates, RAMP_MAX_STEPS, &n, err, sizeof err),
			 PACER_ERANGE);
	assert_non_null(strstr(err, "more than 256 steps"));
	/* 2^0 .. 2^255 by 2 is 256 steps: just fits */
	assert_int_equal(ramp_geometric(1, ldexp(1, 255), 2, rates, RAMP_MAX_STEPS, &n, err,
					sizeof err),
			 0);
	assert_int_equal(n, RAMP_MAX_STEPS);
	assert_true(rates[n - 1] == ldexp(1, 255));
}

/* ------------------------------------------------------------ refine */

static void test_bisect_and_refined(void **state)
{
	(void)state;
	assert_true(ramp_bisect(1000, 1250) == 1125);
	assert_true(ramp_bisect(1000, 1001) == 1000.5);
	assert_true(ramp_bisect(1, 2) == 1.5);

	static const struct {
		double pass, fail, precision;
		bool refined;
	} cases[] = {
		{1000, 1250, 0.05, false},
		{1000, 1050, 0.05, true}, /* exactly 5 %: done */
		{1000, 1051, 0.05, false},
		{1000, 1010, 0.01, true},
		{1000, 1000.5, 0.001, true},
		{1000, 2000, 1.0, true},
		{1000, 2000, 0.99, false},
		{0, 10, 0.5, false},      /* no passing rate: never refined */
		{0, 0, 0.5, false},
		{100, 105, 0.05, true},
	};
	for (size_t i = 0; i < N(cases); i++)
		if (ramp_refined(cases[i].pass, cases[i].fail, cases[i].precision) != cases[i].refined)
			fail_msg("ramp_refined(%g, %g, %g) != %d", cases[i].pass, cases[i].fail,
				 cases[i].precision, cases[i].refined);
}

/* The loop cmd_ramp runs, against a target whose capacity is known: it
 * brackets the capacity, ends within the precision, in few steps. */
static void test_bisection_converges(void **state)
{
	(void)state;
	static const struct {
		double pass, fail, capacity, precision;
		unsigned max_steps;
	} cases[] = {
		{1000, 1250, 1100, 0.05, 3},
		{1000, 1250, 1001, 0.05, 3},
		{1000, 1250, 1249, 0.05, 3},
		{1000, 2000, 1500, 0.01, 7},
		{4000, 8000, 7000, 0.05, 5},
		{100, 100e3, 31337, 0.05, 20},
	};
	for (size_t i = 0; i < N(cases); i++) {
		double pass = cases[i].pass, fail = cases[i].fail, cap = cases[i].capacity;
		unsigned steps = 0;
		while (!ramp_refined(pass, fail, cases[i].precision)) {
			double mid = ramp_bisect(pass, fail);
			assert_true(mid > pass && mid < fail);
			if (mid <= cap)
				pass = mid;
			else
				fail = mid;
			steps++;
			assert_true(steps <= 64);
		}
		if (steps > cases[i].max_steps)
			fail_msg("case %zu: %u steps, want <= %u", i, steps, cases[i].max_steps);
		assert_true(pass <= cap && cap < fail);
		assert_true((fail - pass) / pass <= cases[i].precision);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_steps_valid),
		cmocka_unit_test(test_steps_invalid),
		cmocka_unit_test(test_steps_cap),
		cmocka_unit_test(test_steps_small_err_buffer),
		cmocka_unit_test(test_geometric_valid),
		cmocka_unit_test(test_geometric_invalid),
		cmocka_unit_test(test_geometric_cap),
		cmocka_unit_test(test_bisect_and_refined),
		cmocka_unit_test(test_bisection_converges),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
