/* Tests of the SLO verdict (src/result/verdict.c): clauses parsed by
 * plan/slo.c judged against fixed measurements give exact reason strings,
 * including at boundary values (equal values, < against <=), NaN and
 * missing figures, closed loop, outcomes by index, the ok./failed. sets,
 * and a reason too long for its buffer cut at a clause boundary. */
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
#include "result/verdict.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

static const char *const outcomes[] = {"fill", "no-bid", "vast.empty"};

/* success and the latency of the requests that succeeded or failed: a fast
 * 503 must not make an ok.p99 clause pass. */
static void test_success_and_sets(void **state)
{
	(void)state;
	struct slo s;
	char err[256];
	assert_int_equal(slo_parse(&s, "success>=99%, ok.p99<100ms, failed.max<=1s", NULL, 0, err,
				   sizeof err),
			 0);
	struct slo_measure m = {.latency_known = true, .latency_count = 100, .p99_ns = 2000000,
				.success_pct = 25.0};
	m.ok = (struct slo_latency){.p99_ns = 150000000, .known = true, .count = 25};
	m.failed = (struct slo_latency){.max_ns = 1000000, .known = true, .count = 75};
	struct slo_verdict v;
	slo_eval(&s, &m, &v);
	assert_false(v.pass);
	assert_int_equal(v.n_failed, 2);
	assert_string_equal(v.reason, "Fail success 25.00% < 99%; ok.p99 150.0 ms > 100ms");
	/* no successful response at all: an ok.* bound is not met by absence */
	m.ok = (struct slo_latency){.known = true, .count = 0};
	m.success_pct = 100;
	slo_eval(&s, &m, &v);
	assert_string_equal(v.reason, "Fail ok.p99: no response measured");
}

/* Measurements used by the verdict table. */
static const double pcts[] = {40.0, 1.0, 0.25};

static struct slo_measure base(void)
{
	struct slo_measure m = {
		.p50_ns = 1000000,
		.p90_ns = 50000000,
		.p99_ns = 107800000,
		.p99_9_ns = 200000000,
		.p99_99_ns = 300000000,
		.max_ns = 2000000000,
		.mean_ns = 5e6,
		.error_pct = 2.1,
		.drop_pct = 0.0,
		.achieved_fraction = 0.95,
		.offered_known = true,
		.outcome_pct = pcts,
		.n_outcomes = N(pcts),
	};
	return m;
}

enum tweak {
	T_NONE,
	T_CLOSED,      /* closed loop: no offered rate */
	T_NAN,         /* NaN mean, error and drop percentages */
	T_NO_OUTCOMES, /* outcome_pct NULL */
	T_P99_100MS,   /* p99 exactly 100 ms */
	T_ERR_1PCT,    /* errors exactly 1% */
};

struct verdict_case {
	const char *expr;
	enum tweak tweak;
	bool pass;
	size_t n_failed;
	const char *reason;
};

static const struct verdict_case verdict_cases[] = {
	{"p99<200ms,errors<5%,drops<0.1%", T_NONE, true, 0, "Pass"},
	{"p99<100ms", T_NONE, false, 1, "Fail p99 107.8 ms > 100ms"},
	{"p99<100ms,errors<1%", T_NONE, false, 2, "Fail p99 107.8 ms > 100ms; errors 2.10% > 1%"},
	{"p50<2ms, p99<100ms, max<=2s, errors<1%, mean<1ms", T_NONE, false, 3,
	 "Fail p99 107.8 ms > 100ms; errors 2.10% > 1%; mean 5.000 ms > 1ms"},
	{"p90<50ms", T_NONE, false, 1, "Fail p90 50.00 ms >= 50ms"},
	{"p90<=50ms", T_NONE, true, 0, "Pass"},
	{"p99.9<=199999999ns", T_NONE, false, 1, "Fail p99.9 200.0 ms > 199999999ns"},
	{"p99.99<300ms,p99.99<=300ms", T_NONE, false, 1, "Fail p99.99 300.0 ms >= 300ms"},
	/* boundary: equal values, < against <=, for each kind */
	{"p99<100ms", T_P99_100MS, false, 1, "Fail p99 100.0 ms >= 100ms"},
	{"p99<=100ms", T_P99_100MS, true, 0, "Pass"},
	{"errors<1%", T_ERR_1PCT, false, 1, "Fail errors 1.00% >= 1%"},
	{"errors<=1%", T_ERR_1PCT, true, 0, "Pass"},
	{"errors>1%", T_ERR_1PCT, false, 1, "Fail errors 1.00% <= 1%"},
	{"errors>=1%", T_ERR_1PCT, true, 0, "Pass"},
	{"rate>=0.95", T_NONE, true, 0, "Pass"},
	{"rate>=95%", T_NONE, true, 0, "Pass"},
	{"rate>0.95", T_NONE, false, 1, "Fail rate 95.00% <= 95%"},
	{"rate>=0.96", T_NONE, false, 1, "Fail rate 95.00% < 96%"},
	/* outcomes, by index */
	{"fill>=50%,no-bid<=1%,vast.empty<0.2%", T_NONE, false, 2,
	 "Fail fill 40.00% < 50%; vast.empty 0.25% > 0.2%"},
	{"fill<50%", T_NO_OUTCOMES, false, 1, "Fail fill: not measured"},
	/* closed loop and NaN */
	{"rate>=0.9,p99<1s", T_CLOSED, false, 1, "Fail rate: no offered rate (closed loop)"},
	{"mean<10ms,errors<1%,drops<=100%,p50<2ms", T_NAN, false, 3,
	 "Fail mean: not measured; errors: not measured; drops: not measured"},
	/* duplicates both apply, and both are reported */
	{"errors<1%,errors<2%", T_NONE, false, 2, "Fail errors 2.10% > 1%; errors 2.10% > 2%"},
};

static void test_verdicts(void **state)
{
	(void)state;
	for (size_t k = 0; k < N(verdict_cases); k++) {
		const struct verdict_case *vc = &verdict_cases[k];
		struct slo s;
		char err[256];
		if (slo_parse(&s, vc->expr, outcomes, N(outcomes), err, sizeof err) != 0) {
			print_message("\"%s\": %s\n", vc->expr, err);
			fail();
		}
		struct slo_measure m = base();
		switch (vc->tweak) {
		case T_NONE: break;
		case T_CLOSED: m.offered_known = false; break;
		case T_NAN: m.mean_ns = m.error_pct = m.drop_pct = NAN; break;
		case T_NO_OUTCOMES: m.outcome_pct = NULL; break;
		case T_P99_100MS: m.p99_ns = 100000000; break;
		case T_ERR_1PCT: m.error_pct = 1.0; break;
		}
		struct slo_verdict v;
		memset(&v, 'z', sizeof v);
		slo_eval(&s, &m, &v);
		if (v.pass != vc->pass || v.n_failed != vc->n_failed || strcmp(v.reason, vc->reason) != 0) {
			print_message("\"%s\": pass %d failed %zu reason \"%s\"; want %d %zu \"%s\"\n", vc->expr,
				      v.pass, v.n_failed, v.reason, vc->pass, vc->n_failed, vc->reason);
			fail();
		}
	}
}

/* A measure with fewer outcomes than the names parsed, infinite mean, and
 * an SLO with no clauses. */
static void test_verdict_edges(void **state)
{
	(void)state;
	struct slo s;
	struct slo_verdict v;
	struct slo_measure m = base();
	assert_int_equal(slo_parse(&s, "vast.empty<1%,mean<1s", outcomes, N(outcomes), NULL, 0), 0);
	m.n_outcomes = 2;
	m.mean_ns = INFINITY;
	slo_eval(&s, &m, &v);
	assert_false(v.pass);
	assert_string_equal(v.reason, "Fail vast.empty: not measured; mean: not measured");

	struct slo empty = {.n = 0};
	slo_eval(&empty, &m, &v);
	assert_true(v.pass);
	assert_int_equal(v.n_failed, 0);
	assert_string_equal(v.reason, "Pass");

	/* max over 1e18 ns still compares exactly */
	assert_int_equal(slo_parse(&s, "max<=1000000000s", NULL, 0, NULL, 0), 0);
	m = base();
	m.max_ns = 1000000000000000001ull;
	slo_eval(&s, &m, &v);
	assert_false(v.pass);
	m.max_ns = 1000000000000000000ull;
	slo_eval(&s, &m, &v);
	assert_true(v.pass);
}

/* 32 failing clauses do not fit the reason: it is cut at a clause boundary
 * and says how many more failed. Names of every length from 8 to 60 bytes
 * put the cut at every position relative to the end of the buffer. */
static void test_reason_truncated(void **state)
{
	(void)state;
	static char names[SLO_MAX_CLAUSES][SLO_NAME_MAX];
	const char *list[SLO_MAX_CLAUSES];
	double pct[SLO_MAX_CLAUSES];
	for (size_t len = 8; len <= 60; len++) {
		char expr[SLO_MAX_EXPR + 1];
		size_t o = 0;
		for (size_t i = 0; i < SLO_MAX_CLAUSES; i++) {
			memset(names[i], 'o', len);
			snprintf(names[i] + len - 2, 3, "%02zu", i);
			list[i] = names[i];
			pct[i] = 50;
			if (o < SLO_MAX_EXPR - len - 4)
				o += (size_t)snprintf(expr + o, sizeof expr - o, "%s%s<1%%", i ? "," : "",
						      names[i]);
		}
		struct slo s;
		char err[256];
		assert_int_equal(slo_parse(&s, expr, list, SLO_MAX_CLAUSES, err, sizeof err), 0);
		struct slo_measure m = base();
		m.outcome_pct = pct;
		m.n_outcomes = SLO_MAX_CLAUSES;
		struct slo_verdict v;
		slo_eval(&s, &m, &v);
		assert_false(v.pass);
		assert_int_equal(v.n_failed, s.n);
		assert_true(strlen(v.reason) < sizeof v.reason);
		char first[128];
		snprintf(first, sizeof first, "Fail %s 50.00%% > 1%%; ", names[0]);
		assert_int_equal(strncmp(v.reason, first, strlen(first)), 0);
		unsigned shown = 0, rest = 0;
		for (const char *p = v.reason; (p = strstr(p, "% > 1%")); p++)
			shown++;
		const char *more = strstr(v.reason, "; +");
		assert_non_null(more);
		assert_int_equal(sscanf(more, "; +%u more", &rest), 1);
		assert_int_equal(shown + rest, s.n);
		char tail[32];
		snprintf(tail, sizeof tail, "; +%u more", rest);
		assert_string_equal(more, tail);
		/* as many clauses as fit are shown: one more would not have */
		assert_true(strlen(v.reason) + len + 12 + 2 > sizeof v.reason - 1 - 12 + strlen(tail));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_success_and_sets),
		cmocka_unit_test(test_verdicts),
		cmocka_unit_test(test_verdict_edges),
		cmocka_unit_test(test_reason_truncated),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
