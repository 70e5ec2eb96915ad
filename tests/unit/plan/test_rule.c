/* Tests of outcome and success rules (src/plan/rule.c): valid rules give
 * the expected verdict on several fixed responses (status, headers, body
 * with and without NUL bytes); precedence and parentheses; what a rule
 * needs (body, headers); each kind of bad rule is rejected with a message
 * that names the column and the token; the limits hold at their edges;
 * named rules ("NAME=RULE") split and validate the name. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "plan/rule.h"
#include "util/err.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* Fixed responses. */
static const char *const json_names[] = {"Content-Type", "X-Trace", "set-cookie", "Set-Cookie"};
static const char *const json_values[] = {"application/json; charset=utf-8", "abc", "a=1", "b=2"};
static const char body_json[] = "{\"result\": [1, 2], \"bid\": [ {\"price\": 1.5} ]}";
static const char body_vast[] = "<VAST version=\"4.0\"><Ad id=\"1\"></Ad></VAST>";
static const char body_nul[] = "head\0tail <Ad"; /* NUL inside: sizeof - 1 bytes */
static const char *const xml_names[] = {"content-type"};
static const char *const xml_values[] = {"application/xml"};

enum { IN_JSON200 = 0, IN_VAST200, IN_EMPTY204, IN_ERR503, IN_NUL200, IN_NONE, N_INPUTS };

static const struct rule_input inputs[N_INPUTS] = {
	[IN_JSON200] = {200, body_json, sizeof body_json - 1, json_names, json_values, 4},
	[IN_VAST200] = {200, body_vast, sizeof body_vast - 1, xml_names, xml_values, 1},
	[IN_EMPTY204] = {204, NULL, 0, NULL, NULL, 0},
	[IN_ERR503] = {503, "oops", 4, xml_names, xml_values, 1},
	[IN_NUL200] = {200, body_nul, sizeof body_nul - 1, NULL, NULL, 0},
	[IN_NONE] = {0, NULL, 0, NULL, NULL, 0}, /* no response at all */
};

struct valid_case {
	const char *text;
	bool needs_body, needs_headers;
	/* expected verdict on each input, in the order of the enum above:
	 * JSON200 VAST200 EMPTY204 ERR503 NUL200 NONE */
	const char *want; /* "1" or "0" per input */
};

static const struct valid_case valid_cases[] = {
	{"true", false, false, "111111"},
	{"status == 200", false, false, "110010"},
	{"status==200", false, false, "110010"},
	{"status != 200", false, false, "001101"},
	{"status < 204", false, false, "110011"},
	{"status <= 204", false, false, "111011"},
	{"status > 204", false, false, "000100"},
	{"status >= 204", false, false, "001100"},
	{"status in 200..299", false, false, "111010"},
	{"status in 200 .. 204", false, false, "111010"},
	{"status in 204..204", false, false, "001000"},
	{"status in 0..0", false, false, "000001"},
	{"status in 200..299 and body contains \"result\"", true, false, "100000"},
	{"status == 200 and body contains \"<Ad\"", true, false, "010010"}, /* past the NUL */
	{"body contains \"\"", true, false, "111111"},
	{"body contains \"oops\"", true, false, "000100"},
	{"body contains \"tail\"", true, false, "000010"},
	{"header \"Content-Type\" contains \"json\" or status == 204", false, true, "101000"},
	{"header \"content-type\" contains \"xml\"", false, true, "010100"},
	{"header \"CONTENT-TYPE\" == \"application/xml\"", false, true, "010100"},
	{"header \"Content-Type\" == \"application/json\"", false, true, "000000"}, /* exact */
	{"header \"Content-Type\" contains \"JSON\"", false, true, "000000"}, /* values: case */
	{"header \"X-Trace\" exists", false, true, "100000"},
	{"header \"x-trace\" exists and not header \"X-Missing\" exists", false, true, "100000"},
	/* a repeated header: any one of them */
	{"header \"Set-Cookie\" == \"b=2\"", false, true, "100000"},
	{"header \"Set-Cookie\" == \"a=1\"", false, true, "100000"},
	{"not (status >= 500)", false, false, "111011"},
	{"not status >= 500", false, false, "111011"},
	{"not not true", false, false, "111111"},
	{"body matches \"\\\"bid\\\":[[:space:]]*\\\\[\"", true, false, "100000"},
	{"body matches \"\\\"bid\\\":\\\\s*\\\\[\"", true, false, "100000"}, /* glibc \s */
	{"body matches \"^<VAST\"", true, false, "010000"},
	{"body matches \"tail\"", true, false, "000010"}, /* after a NUL byte */
	{"body matches \"^$\"", true, false, "001001"},
	{"body matches \"o+ps$\"", true, false, "000100"},
	/* repetitions expanding to at most 2000 nodes (1000 o's and 999 optional copies);
	 * braces in brackets and escaped ones do not count */
	{"body matches \"((o{1,10}){1,10}){1,10}\"", true, false, "010100"},
	/* nested optional parts and loops over parts that cannot match nothing */
	{"body matches \"a+b*|o??????????????ps\"", true, false, "000110"},
	{"body matches \"(o+p)+s|(x*y)+z|(z?w){1,9}V\"", true, false, "000100"},
	{"body matches \"a{1000}|q[{9999}]|\\\\{9999}|oops\"", true, false, "000100"},
	{"body matches \"[[:alpha:]{]{500}|^o\"", true, false, "000100"},
	{"body matches \"a{1995}|oops\"", true, false, "000100"}, /* 2000 nodes: alternatives add, | is one */
	{"body matches \"(a|b|c){300}|a+b+c+d+e+f+g+h+i+j+k+l+m+n+o+p+q+r+s+t+u+v+w+x+y+z+|oops\"",
	 true, false, "000100"},
	/* escapes in strings */
	{"body contains \"version=\\\"4.0\\\"\"", true, false, "010000"},
	{"body contains \"a\\\\b\"", true, false, "000000"},
	/* keywords need separating only where they would run together */
	{"(status==200)and(body contains\"<Ad\")", true, false, "010010"},
	{"\t status == 503 \n", false, false, "000100"},
	/* both needs */
	{"body contains \"x\" or header \"A\" exists", true, true, "000000"},
};

static void test_valid(void **state)
{
	(void)state;
	for (size_t i = 0; i < N(valid_cases); i++) {
		const struct valid_case *c = &valid_cases[i];
		struct rule *r = NULL;
		char err[256] = "untouched";
		int rc = rule_parse(c->text, &r, err, sizeof err);
		if (rc != 0)
			fail_msg("case %zu \"%s\": rc %d: %s", i, c->text, rc, err);
		assert_non_null(r);
		assert_string_equal(err, "");
		if (rule_needs_body(r) != c->needs_body || rule_needs_headers(r) != c->needs_headers)
			fail_msg("case %zu \"%s\": needs body %d headers %d", i, c->text,
				 rule_needs_body(r), rule_needs_headers(r));
		assert_int_equal(strlen(c->want), N_INPUTS);
		for (size_t k = 0; k < N_INPUTS; k++) {
			bool want = c->want[k] == '1';
			if (rule_eval(r, &inputs[k]) != want)
				fail_msg("case %zu \"%s\" on input %zu: got %d, want %d", i, c->text, k,
					 !want, want);
		}
		rule_free(r);
	}
}

/* Precedence: not > and > or, left to right; parentheses override. */
struct prec_case {
	const char *text;
	bool want;
};

static const struct prec_case prec_cases[] = {
	/* status is 200 */
	{"status == 200 or status == 1 and status == 2", true},    /* or(a, and(b, c)) */
	{"(status == 200 or status == 1) and status == 2", false},
	{"status == 1 and status == 2 or status == 200", true},
	{"status == 1 and (status == 2 or status == 200)", false},
	{"not status == 200 or true", true},                         /* or(not a, true) */
	{"not (status == 200 or true)", false},
	{"not status == 1 and status == 200", true},                 /* and(not a, b) */
	{"not (status == 1 and status == 200)", true},
	{"not (status == 200 and true)", false},
	{"true and not true or not true", false},
	{"((((status == 200))))", true},
	{"true and true and true and not true", false},
	{"not true or not true or not true or true", true},
};

static void test_precedence(void **state)
{
	(void)state;
	struct rule_input in = {200, NULL, 0, NULL, NULL, 0};
	for (size_t i = 0; i < N(prec_cases); i++) {
		struct rule *r = NULL;
		char err[256];
		int rc = rule_parse(prec_cases[i].text, &r, err, sizeof err);
		if (rc != 0)
			fail_msg("case %zu \"%s\": %s", i, prec_cases[i].text, err);
		if (rule_eval(r, &in) != prec_cases[i].want)
			fail_msg("case %zu \"%s\": want %d", i, prec_cases[i].text, prec_cases[i].want);
		rule_free(r);
	}
}

struct error_case {
	const char *text;
	int rc;
	const char *msg; /* the whole message when full, else a substring */
	bool full;
};

static const struct error_case error_cases[] = {
	/* unknown atom, naming the token and column */
	{"stauts == 200", PACER_EPARSE,
	 "rule: at column 1: expected status, body, header, true, not or \"(\", got \"stauts\"", true},
	{"status == 200 and bdy contains \"x\"", PACER_EPARSE,
	 "rule: at column 19: expected status, body, header, true, not or \"(\", got \"bdy\"", true},
	{"Status == 200", PACER_EPARSE, "got \"Status\"", false},
	{"false", PACER_EPARSE, "got \"false\"", false},
	{"", PACER_EPARSE, "rule: at column 1: empty rule", false},
	{"   ", PACER_EPARSE, "rule: at column 4: empty rule", false},
	/* missing quote */
	{"body contains \"result", PACER_EPARSE,
	 "rule: at column 15: unterminated string (expected a closing \")", true},
	{"body contains \"ends in backslash\\", PACER_EPARSE, "column 15: unterminated string", false},
	{"body contains result", PACER_EPARSE,
	 "rule: at column 15: expected a quoted string after contains, got \"result\"", true},
	{"body matches", PACER_EPARSE, "expected a quoted regex after matches, got end of rule", false},
	{"body contains \"a\\nb\"", PACER_EPARSE,
	 "rule: at column 17: bad escape \"\\n\" in string (expected \\\" or \\\\)", true},
	/* bad range */
	{"status in 300..200", PACER_ERANGE,
	 "rule: at column 11: bad range 300..200 (the first code is over the last)", true},
	{"status in 200...299", PACER_EPARSE, "at column 16: expected a status code (0..999) after \"..\", got \".\"", false},
	{"status in 200-299", PACER_EPARSE, "column 14: expected \"..\" in a range like 200..299, got \"-\"", false},
	{"status in 200..", PACER_EPARSE, "got end of rule", false},
	{"status == 1000", PACER_ERANGE, "rule: at column 11: status code 1000 is out of range (0..999)", true},
	{"status in 200..99999999999999", PACER_ERANGE, "status code 99999999999999 is out of range", false},
	/* bad operator */
	{"status = 200", PACER_EPARSE,
	 "rule: at column 8: expected a comparison (==, !=, <, <=, >, >=) or \"in\" after status, got \"=\"",
	 true},
	{"status => 200", PACER_EPARSE, "got \"=\"", false},
	{"status =< 200", PACER_EPARSE, "got \"=\"", false},
	{"status == \"200\"", PACER_EPARSE, "expected a status code (0..999), got string \"200\"", false},
	{"status == -1", PACER_EPARSE, "column 11: expected a status code (0..999), got \"-\"", false},
	{"body == \"x\"", PACER_EPARSE, "expected \"contains\" or \"matches\" after body, got \"==\"", false},
	{"header \"A\" != \"x\"", PACER_EPARSE,
	 "column 12: expected \"contains\", \"==\" or \"exists\" after the header name, got \"!=\"", false},
	{"header Content-Type exists", PACER_EPARSE, "expected a quoted header name after header, got \"Content\"", false},
	{"header \"\" exists", PACER_EPARSE, "bad header name \"\"", false},
	{"header \"Content Type\" exists", PACER_EPARSE, "column 8: bad header name \"Content Type\"", false},
	{"status == 200 && true", PACER_EPARSE,
	 "rule: at column 15: expected \"and\", \"or\" or end of rule, got \"&\"", true},
	{"status == 200 true", PACER_EPARSE, "column 15: expected \"and\", \"or\" or end of rule, got \"true\"", false},
	{"(status == 200", PACER_EPARSE, "expected \"and\", \"or\" or \")\", got end of rule", false},
	{"status == 200)", PACER_EPARSE, "column 14: expected \"and\", \"or\" or end of rule, got \")\"", false},
	{"status == 200 and", PACER_EPARSE, "column 18: expected status, body, header, true, not or \"(\", got end of rule", false},
	{"not", PACER_EPARSE, "got end of rule", false},
	{"()", PACER_EPARSE, "column 2: expected status, body", false},
	{"status == 200 or\x01", PACER_EPARSE, "got \"?\"", false},
	/* bad regex */
	{"body matches \"(unclosed\"", PACER_EPARSE, "rule: at column 14: bad regex \"(unclosed\": ", false},
	{"body matches \"a{2,1}\"", PACER_EPARSE, "bad regex \"a{2,1}\"", false},
	{"true or body matches \"[z-a]\"", PACER_EPARSE, "column 22: bad regex \"[z-a]\"", false},
	/* regexes that would cost seconds or never compile: repetitions that
	 * expand past 2000 terms (nested, stacked), back-references */
	{"body matches \"((a{1,100}){1,100}){1,100}\"", PACER_ETOOBIG,
	 "rule: at column 14: regex \"((a{1,100}){1,100}){1,100}\" is too complex (its repetitions expand to over 2000 terms)",
	 true},
	{"body matches \"a{2001}\"", PACER_ETOOBIG, "is too complex", false},
	{"body matches \"a{1997}|oops\"", PACER_ETOOBIG, "is too complex", false},
	{"body matches \"(a|b|c){401}\"", PACER_ETOOBIG, "is too complex", false}, /* 5 * 401 */
	{"body matches \"x++++++++++++\"", PACER_ETOOBIG, "is too complex", false},
	{"body matches \"((((((((((((a+)+)+)+)+)+)+)+)+)+)+)+)+\"", PACER_ETOOBIG, "is too complex", false},
	/* loops over a part that can match nothing: glibc's regcomp recomputes
	 * closures along every path through them (the 51-byte first one took 50 s
	 * and 4.5 GB, the second minutes) */
	{"body matches \"a+****************************************+++++++++\"", PACER_ETOOBIG,
	 "rule: at column 14: regex \"a+**************************************...\" is too complex (a *, + or {m,} repeats a part that can match nothing, as in (a*)* or a?+)",
	 true},
	{"body matches \"a????????????????????????????????????????+++\"", PACER_ETOOBIG, "repeats a part that can match nothing", false},
	{"body matches \"a**\"", PACER_ETOOBIG, "repeats a part that can match nothing", false},
	{"body matches \"(a|b?)+\"", PACER_ETOOBIG, "repeats a part that can match nothing", false},
	{"body matches \"(x|)*\"", PACER_ETOOBIG, "repeats a part that can match nothing", false},
	{"body matches \"(^)*\"", PACER_ETOOBIG, "repeats a part that can match nothing", false},
	{"body matches \"(\\\\b){2,}\"", PACER_ETOOBIG, "repeats a part that can match nothing", false},
	{"body matches \"(a*b?){3}+\"", PACER_ETOOBIG, "repeats a part that can match nothing", false},
	{"body matches \"a{0,2001}\"", PACER_ETOOBIG, "is too complex (its repetitions", false},
	{"body matches \"(a|b){0,667}\"", PACER_ETOOBIG, "is too complex (its repetitions", false},
	{"body matches \"(a\\\\1)*\\\\1b\"", PACER_EPARSE,
	 "rule: at column 14: bad regex \"(a\\1)*\\1b\": back-references (\\1 to \\9) are not supported", true},
};

static void test_errors(void **state)
{
	(void)state;
	for (size_t i = 0; i < N(error_cases); i++) {
		const struct error_case *c = &error_cases[i];
		struct rule *r = (struct rule *)&r; /* must be reset to NULL */
		char err[256] = "";
		int rc = rule_parse(c->text, &r, err, sizeof err);
		if (rc != c->rc)
			fail_msg("case %zu \"%s\": rc %d, want %d (%s)", i, c->text, rc, c->rc, err);
		assert_null(r);
		bool ok = c->full ? strcmp(err, c->msg) == 0 : strstr(err, c->msg) != NULL;
		if (!ok)
			fail_msg("case %zu \"%s\":\n  got  %s\n  want %s%s", i, c->text, err,
				 c->full ? "" : "...", c->msg);
		assert_non_null(strstr(err, "rule: ")); /* one style for all */
		assert_null(strchr(err, '\n'));
	}
}

/* Build "not not ... true" with k nots, or "((...true...))" with k pairs. */
static void nested(char *buf, size_t cap, int k, bool parens)
{
	size_t o = 0;
	for (int i = 0; i < k; i++)
		o += (size_t)snprintf(buf + o, cap - o, parens ? "(" : "not ");
	o += (size_t)snprintf(buf + o, cap - o, "true");
	for (int i = 0; parens && i < k; i++)
		o += (size_t)snprintf(buf + o, cap - o, ")");
}

static void test_limits(void **state)
{
	(void)state;
	char buf[4096], err[256];
	struct rule *r;

	/* nesting: 16 levels pass, 17 do not, with parentheses, nots and both */
	for (int parens = 0; parens <= 1; parens++) {
		nested(buf, sizeof buf, RULE_MAX_DEPTH, parens);
		assert_int_equal(rule_parse(buf, &r, err, sizeof err), 0);
		assert_int_equal(rule_eval(r, &inputs[IN_NONE]), parens ? true : RULE_MAX_DEPTH % 2 == 0);
		rule_free(r);
		nested(buf, sizeof buf, RULE_MAX_DEPTH + 1, parens);
		assert_int_equal(rule_parse(buf, &r, err, sizeof err), PACER_ETOOBIG);
		assert_null(r);
		assert_non_null(strstr(err, "nested over 16 levels"));
		/* the 17th opener is named by column */
		char col[32];
		snprintf(col, sizeof col, "column %d:", parens ? 17 : 4 * 16 + 1);
		if (!strstr(err, col))
			fail_msg("%s: want %s", err, col);
	}
	assert_int_equal(rule_parse("(not (not (not (not (not (not (not (not true))))))))", &r, err,
				    sizeof err), 0);
	rule_free(r);
	assert_int_equal(rule_parse("(not (not (not (not (not (not (not (not (not true)))))))))", &r,
				    err, sizeof err), PACER_ETOOBIG);

	/* nodes: "true or true or ..." has 2k-1 nodes: 32 trues = 63, 33 = 65 */
	size_t o = 0;
	for (int i = 0; i < 32; i++)
		o += (size_t)snprintf(buf + o, sizeof buf - o, "%strue", i ? " or " : "");
	assert_int_equal(rule_parse(buf, &r, err, sizeof err), 0);
	rule_free(r);
	snprintf(buf + o, sizeof buf - o, " and true"); /* 65 */
	assert_int_equal(rule_parse(buf, &r, err, sizeof err), PACER_ETOOBIG);
	assert_non_null(strstr(err, "over 64 terms and operators"));
	/* "not true" x 32 joined by "and": 32*2 + 31 nodes — over; exactly 64: */
	o = 0;
	for (int i = 0; i < 21; i++) /* 21 * (not + true) + 20 ands = 62 */
		o += (size_t)snprintf(buf + o, sizeof buf - o, "%snot true", i ? " and " : "");
	snprintf(buf + o, sizeof buf - o, " and true"); /* 64 */
	assert_int_equal(rule_parse(buf, &r, err, sizeof err), 0);
	assert_false(rule_eval(r, &inputs[IN_NONE]));
	rule_free(r);

	/* expression length: 1024 bytes pass, 1025 do not */
	memset(buf, ' ', sizeof buf);
	memcpy(buf, "true", 4);
	buf[RULE_MAX_EXPR] = '\0';
	assert_int_equal(rule_parse(buf, &r, err, sizeof err), 0);
	rule_free(r);
	buf[RULE_MAX_EXPR] = ' ';
	buf[RULE_MAX_EXPR + 1] = '\0';
	assert_int_equal(rule_parse(buf, &r, err, sizeof err), PACER_ETOOBIG);
	assert_string_equal(err, "rule: expression is over 1024 bytes (at most 1024)");

	/* string literal: 256 bytes pass (escapes count once), 257 do not */
	o = (size_t)snprintf(buf, sizeof buf, "body contains \"");
	for (int i = 0; i < RULE_MAX_STRING - 1; i++)
		buf[o++] = 'a';
	memcpy(buf + o, "\\\"\"", 4); /* \" then the closing quote */
	assert_int_equal(rule_parse(buf, &r, err, sizeof err), 0);
	struct rule_input in = {200, buf + 15, RULE_MAX_STRING + 1, NULL, NULL, 0};
	assert_false(rule_eval(r, &in)); /* the source has a backslash */
	rule_free(r);
	memcpy(buf + o, "a\\\"\"", 5);
	assert_int_equal(rule_parse(buf, &r, err, sizeof err), PACER_ETOOBIG);
	assert_string_equal(err, "rule: at column 15: string is over 256 bytes (at most 256)");

	/* a long unknown token is cut in the message */
	memset(buf, 'x', 100);
	buf[100] = '\0';
	assert_int_equal(rule_parse(buf, &r, err, sizeof err), PACER_EPARSE);
	assert_non_null(strstr(err, "got \"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx...\""));
}

static void test_err_buffer(void **state)
{
	(void)state;
	struct rule *r;
	char small[12];
	memset(small, 'Z', sizeof small);
	assert_int_equal(rule_parse("status in 300..200", &r, small, sizeof small), PACER_ERANGE);
	assert_string_equal(small, "rule: at co"); /* truncated, terminated */
	assert_int_equal(rule_parse("status in 300..200", &r, NULL, 0), PACER_ERANGE);
	assert_int_equal(rule_parse("true", &r, NULL, 0), 0);
	rule_free(r);
	assert_int_equal(rule_parse(NULL, &r, small, sizeof small), -EINVAL);
	assert_null(r);
	assert_int_equal(rule_parse("true", NULL, small, sizeof small), -EINVAL);
	assert_false(rule_needs_body(NULL));
	assert_false(rule_needs_headers(NULL));
	rule_free(NULL);
}

struct named_case {
	const char *arg;
	int rc;
	const char *name; /* on success */
	const char *msg;  /* on failure: substring */
	int want_on_vast; /* on success: verdict on IN_VAST200 */
};

static const struct named_case named_cases[] = {
	{"fill=status==200 and body contains \"<Ad\"", 0, "fill", NULL, 1},
	{"no_bid=status == 204", 0, "no_bid", NULL, 0},
	{"_x-1=true", 0, "_x-1", NULL, 1},
	{"A=not true", 0, "A", NULL, 0},
	/* the name takes up to the first '=' */
	{"eq=header \"Content-Type\" == \"application/xml\"", 0, "eq", NULL, 1},
	/* 63 bytes of name is the most */
	{"a23456789012345678901234567890123456789012345678901234567890123=true", 0,
	 "a23456789012345678901234567890123456789012345678901234567890123", NULL, 1},
	{"a234567890123456789012345678901234567890123456789012345678901234=true", PACER_EPARSE, NULL,
	 "rule: name \"a234567890123456789012345678901234567890...\" is over 63 bytes", 0},
	{"a2345678901234567890123456789012345678901234567890123456789012345=true", PACER_EPARSE, NULL,
	 "rule: name \"a234567890123456789012345678901234567890...\" is over 63 bytes", 0},
	/* a rule without a name: "status" is taken as the name, and "=200" fails */
	{"status==200", PACER_EPARSE, NULL,
	 "rule: at column 8: expected status, body, header, true, not or \"(\", got \"=\"", 0},
	{"fill", PACER_EPARSE, NULL, "rule: missing \"=\" in \"fill\" (expected NAME=RULE", 0},
	{"=true", PACER_EPARSE, NULL, "rule: bad name \"\"", 0},
	{"1fill=true", PACER_EPARSE, NULL, "rule: bad name \"1fill\"", 0},
	{"-fill=true", PACER_EPARSE, NULL, "rule: bad name \"-fill\"", 0},
	{"fill rate=true", PACER_EPARSE, NULL, "rule: bad name \"fill rate\"", 0},
	{"vast.empty=true", PACER_EPARSE, NULL, "rule: bad name \"vast.empty\"", 0},
	{"fill=", PACER_EPARSE, NULL, "rule: at column 6: empty rule", 0},
	/* columns count from the start of the argument */
	{"fill=status = 200", PACER_EPARSE, NULL, "rule: at column 13: expected a comparison", 0},
	{"fill=status in 300..200", PACER_ERANGE, NULL, "rule: at column 16: bad range 300..200", 0},
};

static void test_named(void **state)
{
	(void)state;
	for (size_t i = 0; i < N(named_cases); i++) {
		const struct named_case *c = &named_cases[i];
		char name[RULE_NAME_MAX];
		memset(name, 'Q', sizeof name);
		struct rule *r = (struct rule *)&r;
		char err[256] = "";
		int rc = rule_parse_named(c->arg, name, &r, err, sizeof err);
		if (rc != c->rc)
			fail_msg("case %zu \"%s\": rc %d, want %d (%s)", i, c->arg, rc, c->rc, err);
		if (rc == 0) {
			assert_string_equal(name, c->name);
			assert_string_equal(err, "");
			assert_int_equal(rule_eval(r, &inputs[IN_VAST200]), c->want_on_vast);
			rule_free(r);
		} else {
			assert_null(r);
			assert_string_equal(name, "");
			if (!strstr(err, c->msg))
				fail_msg("case %zu \"%s\":\n  got  %s\n  want ...%s", i, c->arg, err, c->msg);
		}
	}
	char name[RULE_NAME_MAX];
	struct rule *r;
	assert_int_equal(rule_parse_named(NULL, name, &r, NULL, 0), -EINVAL);
	assert_int_equal(rule_parse_named("a=true", NULL, &r, NULL, 0), -EINVAL);
}

/* The same rule evaluated many times gives the same answers (no state). */
static void test_repeatable(void **state)
{
	(void)state;
	struct rule *r;
	char err[256];
	assert_int_equal(rule_parse("body matches \"<Ad\" and header \"content-TYPE\" exists or "
				    "status in 500..599",
				    &r, err, sizeof err),
			 0);
	for (int round = 0; round < 3; round++) {
		assert_false(rule_eval(r, &inputs[IN_JSON200]));
		assert_true(rule_eval(r, &inputs[IN_VAST200]));
		assert_false(rule_eval(r, &inputs[IN_EMPTY204]));
		assert_true(rule_eval(r, &inputs[IN_ERR503]));
		assert_false(rule_eval(r, &inputs[IN_NUL200])); /* no headers */
	}
	/* a body cut at a cap: the rule sees only the prefix */
	struct rule_input cut = inputs[IN_VAST200];
	cut.body_len = 20;
	assert_false(rule_eval(r, &cut));
	/* NULL entries in the header arrays are skipped */
	const char *names[] = {NULL, "Content-Type"};
	const char *values[] = {"x", NULL};
	struct rule_input odd = {200, "<Ad", 3, names, values, 2};
	assert_true(rule_eval(r, &odd)); /* exists needs no value */
	rule_free(r);
	assert_int_equal(rule_parse("header \"Content-Type\" contains \"\"", &r, err, sizeof err), 0);
	assert_false(rule_eval(r, &odd)); /* its value is NULL */
	rule_free(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_valid),      cmocka_unit_test(test_precedence),
		cmocka_unit_test(test_errors),     cmocka_unit_test(test_limits),
		cmocka_unit_test(test_err_buffer), cmocka_unit_test(test_named),
		cmocka_unit_test(test_repeatable),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
