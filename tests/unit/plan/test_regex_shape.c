/* Tests of a regex's shape (src/plan/regex_shape.c): the automaton's node
 * count as documented (atoms, anchors, brackets, alternations, each
 * quantifier, the copies of + and {m,n}, multiplied when nested), the cap
 * just past RE_COST_MAX, loops over parts that can match nothing, and
 * back-references; malformed patterns and deep nesting get some shape
 * without reading past the text. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "plan/regex_shape.h"

static struct re_shape shape(const char *re) { return regex_shape(re, strlen(re)); }

static void test_node_counts(void **state)
{
	(void)state;
	static const struct {
		const char *re;
		unsigned long nodes;
	} cases[] = {
		{"", 0},
		{"abc", 3},
		{"^a$", 3},
		{"[a-z]x", 2},
		{"[]x]", 1},         /* "]" first is a member */
		{"[[:alpha:]]", 1},  /* a class inside a bracket */
		{"a|b", 3},          /* two atoms and the alternation */
		{"a*", 2},           /* the atom and its loop */
		{"a?", 2},           /* hi 1, lo 0: one optional copy */
		{"a+", 3},           /* a copy, then a loop over one more */
		{"a{3}", 3},         /* three copies, none optional */
		{"a{1,3}", 5},       /* three copies, two optional */
		{"(ab){2}", 4},      /* the group is one operand of two nodes */
		{"((a){2}){3}", 6},  /* nested copies multiply */
		{"()", 2},           /* an empty group keeps its two nodes */
		{"\\.x", 2},         /* an escape is one atom */
		{"a{b", 3},          /* "{" not starting an interval is a literal */
		{"a{", 2},
		{"a{,b}", 5},        /* "{," without a digit: literal too */
		{"(ab){0}", 2},      /* {0} still costs its operand */
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct re_shape s = shape(cases[i].re);
		if (s.nodes != cases[i].nodes)
			fail_msg("%s: %lu nodes, want %lu", cases[i].re, s.nodes, cases[i].nodes);
		assert_false(s.loop_nullable);
		assert_false(s.backref);
	}
}

static void test_cap(void **state)
{
	(void)state;
	assert_int_equal(shape("a{2000}").nodes, 2000);
	assert_int_equal(shape("a{2001}").nodes, RE_COST_MAX + 1);
	/* nesting that would overflow any counter stays capped */
	assert_int_equal(shape("((((a{99999}){99999}){99999}){99999}){99999}").nodes, RE_COST_MAX + 1);
	assert_int_equal(shape("x++++++++++++").nodes, RE_COST_MAX + 1);
	/* a quantifier never lowers the count: a literal "{" or {0} after a
	 * runaway operand (the fuzzer's 2 GiB pattern) stays over the cap */
	assert_int_equal(shape("x+++++++++++++++++++++++++{a{9").nodes, RE_COST_MAX + 1);
	assert_int_equal(shape("x+++++++++++++++++++++++++{0}").nodes, RE_COST_MAX + 1);
	assert_int_equal(shape("x+++++++++++++++++++++++++{,0)").nodes, RE_COST_MAX + 1);
}

static void test_loops_over_nothing(void **state)
{
	(void)state;
	const char *runaway[] = {"(a*)*", "a?+", "(^)*", "(a|)+", "a**", "(b|c?)*x", "\\b*"};
	for (size_t i = 0; i < sizeof runaway / sizeof runaway[0]; i++)
		if (!shape(runaway[i]).loop_nullable)
			fail_msg("%s: a loop over a nullable part not seen", runaway[i]);
	const char *fine[] = {"(a+)*", "a*b*", "(ab?)+", "(a|b)*", "a?b?c?", "(a?){3}"};
	for (size_t i = 0; i < sizeof fine / sizeof fine[0]; i++)
		if (shape(fine[i]).loop_nullable)
			fail_msg("%s: called a loop over nothing", fine[i]);
}

static void test_backref_and_malformed(void **state)
{
	(void)state;
	assert_true(shape("(a)\\1").backref);
	assert_false(shape("(a)\\n").backref);
	/* malformed: counted without reading past the end */
	const char *bad[] = {"(", ")", "[", "[[:", "[[:alpha", "[[:alpha:", "[[=a=", "a{", "a{1,", "\\", "(((", "[^"};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		size_t n = strlen(bad[i]);
		char *copy = malloc(n ? n : 1); /* exactly n bytes: ASan sees an overread */
		assert_non_null(copy);
		memcpy(copy, bad[i], n);
		struct re_shape s = regex_shape(copy, n);
		assert_true(s.nodes <= RE_COST_MAX + 1);
		free(copy);
	}
	/* deeper than the groups tracked: the rest count as atoms */
	char deep[600];
	memset(deep, '(', 300);
	memset(deep + 300, ')', 300);
	assert_true(regex_shape(deep, sizeof deep).nodes <= RE_COST_MAX + 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_node_counts),
		cmocka_unit_test(test_cap),
		cmocka_unit_test(test_loops_over_nothing),
		cmocka_unit_test(test_backref_and_malformed),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
