/* Tests of SLO expressions (src/plan/slo.c): valid expressions parse to the
 * right clauses and format back canonically; each kind of bad expression is
 * rejected with a message naming the clause and what was expected; the
 * limits on clauses and bytes hold at their edges; a clause's name and
 * threshold as the verdict (result/verdict.c) writes them. */
#include <errno.h>
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

#include "plan/slo.h"
#include "util/err.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))
#define MS 1000000.0
#define US 1000.0
#define S 1000000000.0

static const char *const outcomes[] = {"fill", "no-bid", "vast.empty"};

struct want_clause {
	enum slo_metric metric;
	int outcome_index;
	enum slo_op op;
	double threshold;
	const char *name;
};

struct valid_case {
	const char *expr;
	const char *canonical;
	size_t n;
	struct want_clause c[4];
};

static const struct valid_case valid_cases[] = {
	{"p99<100ms", "p99<100ms", 1, {{SLO_M_P99, -1, SLO_LT, 100 * MS, "p99"}}},
	{"max<=2s", "max<=2s", 1, {{SLO_M_MAX, -1, SLO_LE, 2 * S, "max"}}},
	{"p99<100ms,errors<1%,drops<0.1%", "p99<100ms,errors<1%,drops<0.1%", 3,
	 {{SLO_M_P99, -1, SLO_LT, 100 * MS, "p99"},
	  {SLO_M_ERRORS, -1, SLO_LT, 1, "errors"},
	  {SLO_M_DROPS, -1, SLO_LT, 0.1, "drops"}}},
	/* whitespace around every token, tabs and newlines too */
	{"  p99 < 100ms ,\terrors\t<=\t1% \n", "p99<100ms,errors<=1%", 2,
	 {{SLO_M_P99, -1, SLO_LT, 100 * MS, "p99"}, {SLO_M_ERRORS, -1, SLO_LE, 1, "errors"}}},
	/* p99.9 and p99.99 are not p99 followed by junk */
	{"p99.9<250ms, p99.99<=1.5s, p99<50ms", "p99.9<250ms,p99.99<=1500ms,p99<50ms", 3,
	 {{SLO_M_P99_9, -1, SLO_LT, 250 * MS, "p99.9"},
	  {SLO_M_P99_99, -1, SLO_LE, 1.5 * S, "p99.99"},
	  {SLO_M_P99, -1, SLO_LT, 50 * MS, "p99"}}},
	{"p50<1ms,p90<=750us,mean<2.5ms", "p50<1ms,p90<=750us,mean<2500us", 3,
	 {{SLO_M_P50, -1, SLO_LT, 1 * MS, "p50"},
	  {SLO_M_P90, -1, SLO_LE, 750 * US, "p90"},
	  {SLO_M_MEAN, -1, SLO_LT, 2.5 * MS, "mean"}}},
	/* units of units.c; a canonical form in the largest exact unit */
	{"max<1h,p99<2m,p90<1.5us,p50<0ns", "max<3600s,p99<120s,p90<1500ns,p50<0ns", 4,
	 {{SLO_M_MAX, -1, SLO_LT, 3600 * S, "max"},
	  {SLO_M_P99, -1, SLO_LT, 120 * S, "p99"},
	  {SLO_M_P90, -1, SLO_LT, 1500, "p90"},
	  {SLO_M_P50, -1, SLO_LT, 0, "p50"}}},
	/* percents with decimals, trailing zeros dropped, all four operators */
	{"errors<0.25%,drops<=0.125%,errors>0%,drops>=100.000%",
	 "errors<0.25%,drops<=0.125%,errors>0%,drops>=100%", 4,
	 {{SLO_M_ERRORS, -1, SLO_LT, 0.25, "errors"},
	  {SLO_M_DROPS, -1, SLO_LE, 0.125, "drops"},
	  {SLO_M_ERRORS, -1, SLO_GT, 0, "errors"},
	  {SLO_M_DROPS, -1, SLO_GE, 100, "drops"}}},
	{"errors<.5%,drops<0.000000001%", "errors<0.5%,drops<0.000000001%", 2,
	 {{SLO_M_ERRORS, -1, SLO_LT, 0.5, "errors"}, {SLO_M_DROPS, -1, SLO_LT, 1e-9, "drops"}}},
	/* outcome names given to the parser */
	{"fill>=50%, no-bid<10%, vast.empty<=0.5%", "fill>=50%,no-bid<10%,vast.empty<=0.5%", 3,
	 {{SLO_M_OUTCOME, 0, SLO_GE, 50, "fill"},
	  {SLO_M_OUTCOME, 1, SLO_LT, 10, "no-bid"},
	  {SLO_M_OUTCOME, 2, SLO_LE, 0.5, "vast.empty"}}},
	/* rate: a fraction or a percent, kept as a percent */
	{"rate>=0.95", "rate>=95%", 1, {{SLO_M_RATE, -1, SLO_GE, 95, "rate"}}},
	{"rate >= 95%", "rate>=95%", 1, {{SLO_M_RATE, -1, SLO_GE, 95, "rate"}}},
	{"rate>0.999,rate>=1,rate>=.5", "rate>99.9%,rate>=100%,rate>=50%", 3,
	 {{SLO_M_RATE, -1, SLO_GT, 99.9, "rate"},
	  {SLO_M_RATE, -1, SLO_GE, 100, "rate"},
	  {SLO_M_RATE, -1, SLO_GE, 50, "rate"}}},
	/* duplicates are kept */
	{"p99<100ms,p99<100ms,p99<=1s", "p99<100ms,p99<100ms,p99<=1s", 3,
	 {{SLO_M_P99, -1, SLO_LT, 100 * MS, "p99"},
	  {SLO_M_P99, -1, SLO_LT, 100 * MS, "p99"},
	  {SLO_M_P99, -1, SLO_LE, 1 * S, "p99"}}},
};

static void check_clause(const char *expr, size_t i, const struct slo_clause *got,
			 const struct want_clause *w)
{
	if (got->metric != w->metric || got->outcome_index != w->outcome_index || got->op != w->op ||
	    got->threshold != w->threshold || strcmp(got->name, w->name) != 0) {
		print_message("\"%s\" clause %zu: got metric %d idx %d op %d threshold %.17g name \"%s\"; "
			      "want %d %d %d %.17g \"%s\"\n",
			      expr, i, (int)got->metric, got->outcome_index, (int)got->op, got->threshold,
			      got->name, (int)w->metric, w->outcome_index, (int)w->op, w->threshold, w->name);
		fail();
	}
}

static void test_valid(void **state)
{
	(void)state;
	for (size_t k = 0; k < N(valid_cases); k++) {
		const struct valid_case *vc = &valid_cases[k];
		struct slo s;
		char err[256] = "unchanged", fmt[SLO_FORMAT_MAX];
		int rc = slo_parse(&s, vc->expr, outcomes, N(outcomes), err, sizeof err);
		if (rc != 0) {
			print_message("\"%s\": rc %d: %s\n", vc->expr, rc, err);
			fail();
		}
		assert_string_equal(err, "");
		assert_int_equal(s.n, vc->n);
		for (size_t i = 0; i < vc->n; i++)
			check_clause(vc->expr, i, &s.c[i], &vc->c[i]);
		int len = slo_format(&s, fmt, sizeof fmt);
		assert_int_equal(len, (int)strlen(vc->canonical));
		assert_string_equal(fmt, vc->canonical);
		/* the canonical form parses to the same clauses */
		struct slo again;
		assert_int_equal(slo_parse(&again, fmt, outcomes, N(outcomes), err, sizeof err), 0);
		assert_int_equal(again.n, s.n);
		for (size_t i = 0; i < s.n; i++) {
			check_clause(fmt, i, &again.c[i], &vc->c[i]);
			assert_string_equal(again.c[i].text, s.c[i].text);
		}
	}
}

static void test_clause_text(void **state)
{
	(void)state;
	struct slo s;
	assert_int_equal(slo_parse(&s, " p99.9 <= 1.5s , fill>=50.0% ,rate>=0.95", outcomes,
				   N(outcomes), NULL, 0),
			 0);
	assert_string_equal(s.c[0].text, "p99.9<=1500ms");
	assert_string_equal(s.c[1].text, "fill>=50%");
	assert_string_equal(s.c[2].text, "rate>=95%");
	assert_string_equal(slo_metric_name(SLO_M_P99_99), "p99.99");
	assert_string_equal(slo_metric_name(SLO_M_OUTCOME), "outcome");
	assert_string_equal(slo_metric_name((enum slo_metric)99), "?");
	assert_string_equal(slo_op_name(SLO_GE), ">=");
	assert_string_equal(slo_op_name((enum slo_op)9), "?");
}

struct invalid_case {
	const char *expr;
	int rc;
	const char *msg; /* expected substring */
};

static const struct invalid_case invalid_cases[] = {
	{"p98<1ms", PACER_EPARSE,
	 "SLO clause 1 \"p98<1ms\": unknown metric \"p98\" (expected p50, p90, p99, p99.9, p99.99, max, "
	 "mean (each also as ok.p99 or failed.p99), errors, success, drops, rate or an outcome name: "
	 "fill, no-bid, vast.empty)"},
	{"p99<1ms, p98<1ms", PACER_EPARSE, "SLO clause 2 \"p98<1ms\": unknown metric \"p98\""},
	{"P99<1ms", PACER_EPARSE, "unknown metric \"P99\""},
	{"bid<5%", PACER_EPARSE, "unknown metric \"bid\""},   /* not a prefix of no-bid */
	{"p99.999<1ms", PACER_EPARSE, "unknown metric \"p99.999\""},
	{"p 99<1ms", PACER_EPARSE, "unknown metric \"p 99\""},
	{"p99>1ms", PACER_EPARSE,
	 "SLO clause 1 \"p99>1ms\": operator \">\" does not apply to p99 (expected < or <="},
	{"max>=1s", PACER_EPARSE, "operator \">=\" does not apply to max"},
	{"rate<0.5", PACER_EPARSE, "operator \"<\" does not apply to rate (expected >= or >"},
	{"rate<=50%", PACER_EPARSE, "operator \"<=\" does not apply to rate"},
	{"p99=<1ms", PACER_EPARSE, "bad operator \"=<\" (expected <, <=, > or >=)"},
	{"errors=1%", PACER_EPARSE, "bad operator \"=\""},
	{"errors!=1%", PACER_EPARSE, "bad operator \"!=\""},
	{"p99<<1ms", PACER_EPARSE, "bad operator \"<<\""},
	{"p99<100", PACER_EPARSE,
	 "SLO clause 1 \"p99<100\": missing unit in \"100\" (expected a duration like 100ms"},
	{"p99<1.5", PACER_EPARSE, "missing unit in \"1.5\""},
	{"p99<100 ms", PACER_EPARSE, "bad duration \"100 ms\""},
	{"p99<1e3ms", PACER_EPARSE, "bad duration \"1e3ms\""},
	{"p99<-1ms", PACER_EPARSE, "bad duration \"-1ms\""},
	{"p99<10parsecs", PACER_EPARSE, "bad duration \"10parsecs\""},
	{"p99<2000000000s", PACER_ERANGE, "duration \"2000000000s\" is out of range"},
	{"p99<", PACER_EPARSE, "missing value after \"<\" (expected a duration like 100ms)"},
	{"errors<  ", PACER_EPARSE, "missing value after \"<\" (expected a percent like 1%"},
	{"rate>=", PACER_EPARSE, "missing value after \">=\" (expected a fraction like 0.95"},
	{"errors<150%", PACER_ERANGE, "SLO clause 1 \"errors<150%\": percent \"150%\" is over 100%"},
	{"fill>=100.01%", PACER_ERANGE, "percent \"100.01%\" is over 100%"},
	{"drops<99999999999999%", PACER_ERANGE, "is over 100%"},
	{"rate>=1.5", PACER_ERANGE, "fraction \"1.5\" is over 1"},
	{"rate>=101%", PACER_ERANGE, "percent \"101%\" is over 100%"},
	{"errors<1", PACER_EPARSE, "missing % after \"1\" (expected a percent like 1% or 0.5%)"},
	{"errors<1ms", PACER_EPARSE, "bad percent \"1ms\""},
	{"errors<1 %", PACER_EPARSE, "bad percent \"1 %\""},
	{"errors<-1%", PACER_EPARSE, "bad percent \"-1%\""},
	{"errors<%", PACER_EPARSE, "bad percent \"%\""},
	{"errors<nan%", PACER_EPARSE, "bad percent \"nan%\""},
	{"errors<1e-3%", PACER_EPARSE, "bad percent \"1e-3%\""},
	{"errors<0.0000000001%", PACER_EPARSE, "too many decimals in \"0.0000000001%\" (at most 9)"},
	{"rate>=0.000000000001", PACER_EPARSE, "too many decimals"},
	{"rate>=fast", PACER_EPARSE, "bad fraction \"fast\""},
	{"p99<1ms,,errors<1%", PACER_EPARSE, "SLO clause 2 \"\": empty clause (two commas in a row?)"},
	{"p99<1ms,", PACER_EPARSE, "SLO clause 2 \"\": empty clause (trailing comma?)"},
	{"p99<1ms, errors<1%,  ", PACER_EPARSE, "SLO clause 3 \"\": empty clause (trailing comma?)"},
	{",p99<1ms", PACER_EPARSE, "SLO clause 1 \"\": empty clause (leading comma?)"},
	{",", PACER_EPARSE, "SLO clause 1 \"\": empty clause"},
	{"", PACER_EPARSE, "SLO expression is empty"},
	{" \t\n", PACER_EPARSE, "SLO expression is empty"},
	{"p99", PACER_EPARSE, "SLO clause 1 \"p99\": missing comparison (expected METRIC OP VALUE"},
	{"p99 100ms", PACER_EPARSE, "missing comparison"},
	{"<1ms", PACER_EPARSE, "missing metric before \"<\""},
	/* user text in messages: cut, and control bytes shown as '?' */
	{"p99<1ms,\x01\x7f<1ms", PACER_EPARSE, "SLO clause 2 \"?\?<1ms\": unknown metric \"?\?\""},
	{"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa<1%", PACER_EPARSE,
	 "SLO clause 1 \"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa...\": unknown metric "
	 "\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa...\""},
};

static void test_invalid(void **state)
{
	(void)state;
	for (size_t k = 0; k < N(invalid_cases); k++) {
		const struct invalid_case *ic = &invalid_cases[k];
		struct slo s;
		s.n = 7;
		char err[512] = "";
		int rc = slo_parse(&s, ic->expr, outcomes, N(outcomes), err, sizeof err);
		if (rc != ic->rc || !strstr(err, ic->msg)) {
			print_message("\"%s\": rc %d (want %d), message \"%s\", want it to contain \"%s\"\n",
				      ic->expr, rc, ic->rc, err, ic->msg);
			fail();
		}
		assert_int_equal(s.n, 0);
		assert_ptr_equal(strchr(err, '\n'), NULL); /* one line */
		assert_int_equal(strncmp(err, "SLO ", 4), 0);
	}
}

/* Built-in metrics are only recognised by exact name and outcome names only
 * when given: "fill" is unknown without the list. */
static void test_outcome_names(void **state)
{
	(void)state;
	struct slo s;
	char err[256];
	assert_int_equal(slo_parse(&s, "fill>=50%", NULL, 0, err, sizeof err), PACER_EPARSE);
	assert_non_null(strstr(err, "unknown metric \"fill\" (expected p50, p90, p99, p99.9, p99.99, "
				    "max, mean (each also as ok.p99 or failed.p99), errors, success, drops, "
				    "rate or an outcome name)"));

	/* NULL entries are skipped; indexes are positions in the list */
	const char *const sparse[] = {NULL, "fill", NULL, "errors"};
	assert_int_equal(slo_parse(&s, "fill>50%,errors<1%", sparse, N(sparse), err, sizeof err), 0);
	assert_int_equal(s.c[0].metric, SLO_M_OUTCOME);
	assert_int_equal(s.c[0].outcome_index, 1);
	/* a built-in name wins over an outcome of the same name */
	assert_int_equal(s.c[1].metric, SLO_M_ERRORS);
	assert_int_equal(s.c[1].outcome_index, -1);

	/* an outcome name that does not fit a clause */
	char longname[80];
	memset(longname, 'x', 64);
	longname[64] = '\0';
	const char *const longs[] = {longname};
	char expr[128];
	snprintf(expr, sizeof expr, "%s<1%%", longname);
	assert_int_equal(slo_parse(&s, expr, longs, 1, err, sizeof err), PACER_EPARSE);
	assert_non_null(strstr(err, "is too long (at most 63 bytes)"));
	longname[63] = '\0';
	snprintf(expr, sizeof expr, "%s<1%%", longname);
	assert_int_equal(slo_parse(&s, expr, longs, 1, err, sizeof err), 0);
	assert_string_equal(s.c[0].name, longname);

	/* many outcome names: the list in the message is cut, not overflowed */
	const char *const many[] = {"a1", "a2", "a3", "a4", "a5", "a6", "a7", "a8", "a9", "a10"};
	assert_int_equal(slo_parse(&s, "zz<1%", many, N(many), err, sizeof err), PACER_EPARSE);
	assert_non_null(strstr(err, "outcome name: a1, a2, a3, a4, a5, a6, a7, a8, ...)"));
}

static void build(char *buf, size_t cap, size_t clauses, size_t pad)
{
	size_t o = 0;
	for (size_t i = 0; i < clauses; i++)
		o += (size_t)snprintf(buf + o, cap - o, "%serrors<1%%", i ? "," : "");
	memset(buf + o, ' ', pad);
	buf[o + pad] = '\0';
}

/* success and the latency of the requests that succeeded or failed (their
 * verdicts: tests/unit/result/test_verdict.c). */
static void test_success_and_sets(void **state)
{
	(void)state;
	struct slo s;
	char err[256];
	assert_int_equal(slo_parse(&s, "success>=99%, ok.p99<100ms, failed.max<=1s", NULL, 0, err,
				   sizeof err),
			 0);
	assert_int_equal(s.n, 3);
	assert_int_equal(s.c[0].metric, SLO_M_SUCCESS);
	assert_int_equal(s.c[1].metric, SLO_M_P99);
	assert_int_equal(s.c[1].set, SLO_SET_OK);
	assert_int_equal(s.c[2].metric, SLO_M_MAX);
	assert_int_equal(s.c[2].set, SLO_SET_FAILED);
	char canon[SLO_FORMAT_MAX];
	assert_true(slo_format(&s, canon, sizeof canon) > 0);
	assert_string_equal(canon, "success>=99%,ok.p99<100ms,failed.max<=1s");

	/* bad set metrics */
	assert_int_equal(slo_parse(&s, "ok.errors<1%", NULL, 0, err, sizeof err), PACER_EPARSE);
	assert_non_null(strstr(err, "after \"ok.\" expected a latency metric"));
	assert_int_equal(slo_parse(&s, "failed.p98<1s", NULL, 0, err, sizeof err), PACER_EPARSE);
	assert_int_equal(slo_parse(&s, "ok.p99>1s", NULL, 0, err, sizeof err), PACER_EPARSE);
}

static void test_limits(void **state)
{
	(void)state;
	struct slo s;
	char err[256], expr[SLO_MAX_EXPR + 64];
	build(expr, sizeof expr, SLO_MAX_CLAUSES, 0);
	assert_int_equal(slo_parse(&s, expr, NULL, 0, err, sizeof err), 0);
	assert_int_equal(s.n, SLO_MAX_CLAUSES);

	build(expr, sizeof expr, SLO_MAX_CLAUSES + 1, 0);
	assert_int_equal(slo_parse(&s, expr, NULL, 0, err, sizeof err), PACER_ETOOBIG);
	assert_string_equal(err, "SLO expression has 33 clauses (at most 32)");
	assert_int_equal(s.n, 0);

	/* exactly SLO_MAX_EXPR bytes parse; one more does not */
	build(expr, sizeof expr, 2, 0);
	size_t used = strlen(expr);
	build(expr, sizeof expr, 2, SLO_MAX_EXPR - used);
	assert_int_equal(strlen(expr), SLO_MAX_EXPR);
	assert_int_equal(slo_parse(&s, expr, NULL, 0, err, sizeof err), 0);
	assert_int_equal(s.n, 2);
	build(expr, sizeof expr, 2, SLO_MAX_EXPR + 1 - used);
	assert_int_equal(slo_parse(&s, expr, NULL, 0, err, sizeof err), PACER_ETOOBIG);
	assert_string_equal(err, "SLO expression is over 1024 bytes (at most 1024)");
}

static void test_arguments_and_buffers(void **state)
{
	(void)state;
	struct slo s;
	char err[16];
	assert_int_equal(slo_parse(NULL, "p99<1ms", NULL, 0, NULL, 0), -EINVAL);
	assert_int_equal(slo_parse(&s, NULL, NULL, 0, NULL, 0), -EINVAL);
	assert_int_equal(slo_parse(&s, "p99<1ms", NULL, 2, NULL, 0), -EINVAL);
	/* a small message buffer: cut and terminated */
	memset(err, 'z', sizeof err);
	assert_int_equal(slo_parse(&s, "p98<1ms", NULL, 0, err, sizeof err), PACER_EPARSE);
	assert_string_equal(err, "SLO clause 1 \"p");
	/* no message buffer at all */
	assert_int_equal(slo_parse(&s, "p98<1ms", NULL, 0, NULL, 0), PACER_EPARSE);
	assert_int_equal(slo_parse(&s, "p98<1ms", NULL, 0, err, 0), PACER_EPARSE);

	/* slo_format into buffers too small by one, and exactly big enough */
	assert_int_equal(slo_parse(&s, "p99<100ms, errors<1%", NULL, 0, NULL, 0), 0);
	char out[20];
	memset(out, 'z', sizeof out);
	assert_int_equal(slo_format(&s, out, strlen("p99<100ms,errors<1%")), PACER_ETOOBIG);
	assert_string_equal(out, "");
	assert_int_equal(slo_format(&s, out, 9), PACER_ETOOBIG);
	assert_string_equal(out, "");
	assert_int_equal(slo_format(&s, out, sizeof out), 19);
	assert_string_equal(out, "p99<100ms,errors<1%");
	struct slo empty = {.n = 0};
	assert_int_equal(slo_format(&empty, out, sizeof out), 0);
	assert_string_equal(out, "");
	assert_int_equal(slo_format(&empty, out, 0), PACER_ETOOBIG);
}

/* The names and thresholds result/verdict.c writes in its reasons. */
static void test_clause_name_and_threshold(void **state)
{
	(void)state;
	struct slo s;
	assert_int_equal(slo_parse(&s, "p99<1500us,ok.max<=2s,fill>=40%,rate>=0.95,errors<0.125%",
				   outcomes, N(outcomes), NULL, 0),
			 0);
	static const struct {
		const char *name, *threshold;
		bool latency;
	} want[] = {{"p99", "1500us", true},
		    {"ok.max", "2s", true},
		    {"fill", "40%", false},
		    {"rate", "95%", false},
		    {"errors", "0.125%", false}};
	assert_int_equal(s.n, N(want));
	for (size_t i = 0; i < N(want); i++) {
		char t[SLO_TEXT_MAX];
		slo_clause_threshold(t, sizeof t, &s.c[i]);
		assert_string_equal(slo_clause_name(&s.c[i]), want[i].name);
		assert_string_equal(t, want[i].threshold);
		assert_int_equal(slo_metric_is_latency(s.c[i].metric), want[i].latency);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_valid),
		cmocka_unit_test(test_clause_text),
		cmocka_unit_test(test_invalid),
		cmocka_unit_test(test_outcome_names),
		cmocka_unit_test(test_success_and_sets),
		cmocka_unit_test(test_limits),
		cmocka_unit_test(test_arguments_and_buffers),
		cmocka_unit_test(test_clause_name_and_threshold),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
