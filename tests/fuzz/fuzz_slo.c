/* libFuzzer harness for SLO expressions (src/plan/slo.c).
 *
 * Input: the expression text (cut at the first NUL; up to SLO_MAX_EXPR + 16
 * bytes so the length limit is crossed), parsed with two outcome names.
 * On failure: a negative PACER_E* code, no clauses, and one terminated line
 * that starts with "SLO ". On success: 1..SLO_MAX_CLAUSES clauses, each
 * consistent (latency thresholds whole ns, percents in [0, 100], outcome
 * indexes in range); the canonical form from slo_format parses back to the
 * same clauses (the whole expression when it fits SLO_MAX_EXPR, and each
 * clause text on its own); slo_format into short buffers never writes past
 * the cap; slo_eval on fixed measurements (passing, failing, closed loop
 * with NaN) gives a verdict consistent with its reason. Violations abort(). */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan/slo.h"
#include "result/verdict.h"
#include "util/err.h"

static char text[SLO_MAX_EXPR + 17];

#define FUZZ_NAME "fuzz_slo"
#define FUZZ_INPUT text
#include "common/fuzz_check.h"

static const char *const names[] = {"fill", "no-bid"};

static bool same_clause(const struct slo_clause *a, const struct slo_clause *b)
{
	return a->metric == b->metric && a->outcome_index == b->outcome_index && a->op == b->op &&
	       a->threshold == b->threshold && strcmp(a->name, b->name) == 0 &&
	       strcmp(a->text, b->text) == 0;
}

static void check_clause(const struct slo_clause *c)
{
	CHECK(memchr(c->name, '\0', sizeof c->name) != NULL);
	CHECK(memchr(c->text, '\0', sizeof c->text) != NULL);
	CHECK(c->op >= SLO_LT && c->op <= SLO_GE);
	CHECK(isfinite(c->threshold) && c->threshold >= 0);
	switch (c->metric) {
	case SLO_M_P50: case SLO_M_P90: case SLO_M_P99: case SLO_M_P99_9: case SLO_M_P99_99:
	case SLO_M_MAX: case SLO_M_MEAN:
		CHECK(c->op == SLO_LT || c->op == SLO_LE);
		CHECK(c->threshold == floor(c->threshold) && c->threshold <= 1e18);
		CHECK(c->outcome_index == -1);
		/* the set it is of, as written: "p99", "ok.p99", "failed.p99" */
		CHECK(c->set == SLO_SET_ALL || c->set == SLO_SET_OK || c->set == SLO_SET_FAILED);
		{
			char want[SLO_NAME_MAX];
			snprintf(want, sizeof want, "%s%s",
				 c->set == SLO_SET_OK ? "ok." : c->set == SLO_SET_FAILED ? "failed." : "",
				 slo_metric_name(c->metric));
			CHECK(strcmp(c->name, want) == 0);
		}
		break;
	case SLO_M_RATE:
		CHECK(c->op == SLO_GT || c->op == SLO_GE);
		/* fall through */
	case SLO_M_ERRORS: case SLO_M_SUCCESS: case SLO_M_DROPS:
		CHECK(c->threshold <= 100);
		CHECK(c->outcome_index == -1);
		CHECK(strcmp(c->name, slo_metric_name(c->metric)) == 0);
		break;
	case SLO_M_OUTCOME:
		CHECK(c->threshold <= 100);
		CHECK(c->outcome_index == 0 || c->outcome_index == 1);
		CHECK(strcmp(c->name, names[c->outcome_index]) == 0);
		break;
	default:
		CHECK(!"metric out of range");
	}
	/* the clause text alone parses back to the same clause */
	struct slo one;
	char err[256];
	CHECK(slo_parse(&one, c->text, names, 2, err, sizeof err) == 0);
	CHECK(one.n == 1 && same_clause(&one.c[0], c));
}

static void check_verdict(const struct slo *s, const struct slo_measure *m)
{
	struct slo_verdict v;
	memset(&v, 0x5a, sizeof v);
	slo_eval(s, m, &v);
	CHECK(memchr(v.reason, '\0', sizeof v.reason) != NULL);
	CHECK(v.n_failed <= s->n);
	CHECK(v.pass == (v.n_failed == 0));
	if (v.pass)
		CHECK(strcmp(v.reason, "Pass") == 0);
	else
		CHECK(strncmp(v.reason, "Fail ", 5) == 0 && strlen(v.reason) > 5);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t n = size < sizeof text - 1 ? size : sizeof text - 1;
	memcpy(text, data, n);
	text[n] = '\0';

	struct slo s;
	char err[512];
	memset(err, 0x5a, sizeof err);
	s.n = 99;
	int rc = slo_parse(&s, text, names, 2, err, sizeof err);
	if (rc != 0) {
		CHECK(rc == PACER_EPARSE || rc == PACER_ERANGE || rc == PACER_ETOOBIG);
		CHECK(s.n == 0);
		CHECK(memchr(err, '\0', sizeof err) != NULL);
		CHECK(strncmp(err, "SLO ", 4) == 0);
		CHECK(strchr(err, '\n') == NULL);
		return 0;
	}
	CHECK(strlen(text) <= SLO_MAX_EXPR);
	CHECK(s.n >= 1 && s.n <= SLO_MAX_CLAUSES);
	for (size_t i = 0; i < s.n; i++)
		check_clause(&s.c[i]);

	/* canonical form, and the whole of it parses back when within limits */
	char fmt[SLO_FORMAT_MAX];
	int len = slo_format(&s, fmt, sizeof fmt);
	CHECK(len > 0 && (size_t)len == strlen(fmt));
	CHECK(strchr(fmt, ' ') == NULL);
	if ((size_t)len <= SLO_MAX_EXPR) {
		struct slo again;
		CHECK(slo_parse(&again, fmt, names, 2, err, sizeof err) == 0);
		CHECK(again.n == s.n);
		for (size_t i = 0; i < s.n; i++)
			CHECK(same_clause(&again.c[i], &s.c[i]));
		char fmt2[SLO_FORMAT_MAX];
		CHECK(slo_format(&again, fmt2, sizeof fmt2) == len && strcmp(fmt, fmt2) == 0);
	}
	/* short buffers: ETOOBIG and nothing past the cap */
	for (size_t cap = 0; cap <= (size_t)len + 1 && cap < 48; cap++) {
		char small[64];
		memset(small, 0x5a, sizeof small);
		int r = slo_format(&s, small, cap);
		CHECK(cap > (size_t)len ? r == len : r == PACER_ETOOBIG);
		for (size_t i = cap; i < sizeof small; i++)
			CHECK(small[i] == 0x5a);
		if (cap > 0)
			CHECK(memchr(small, '\0', cap) != NULL);
	}

	static const double pct_ok[2] = {60.0, 0.5};
	struct slo_measure good = {
		.p50_ns = 1000, .p90_ns = 2000, .p99_ns = 3000, .p99_9_ns = 4000, .p99_99_ns = 5000,
		.max_ns = 6000, .mean_ns = 1500, .error_pct = 0, .success_pct = 100, .drop_pct = 0,
		.achieved_fraction = 1.0, .offered_known = true, .outcome_pct = pct_ok, .n_outcomes = 2,
	};
	struct slo_measure bad = {
		.p50_ns = UINT64_MAX, .p90_ns = UINT64_MAX, .p99_ns = UINT64_MAX,
		.p99_9_ns = UINT64_MAX, .p99_99_ns = UINT64_MAX, .max_ns = UINT64_MAX,
		.mean_ns = NAN, .error_pct = NAN, .success_pct = NAN, .drop_pct = 100,
		.achieved_fraction = NAN,
		.offered_known = false, .outcome_pct = NULL, .n_outcomes = 0,
	};
	/* ok.* and failed.* measured too, and as bad (unmeasured sets are not judged) */
	bad.ok = (struct slo_latency){.p50_ns = UINT64_MAX, .p90_ns = UINT64_MAX,
				      .p99_ns = UINT64_MAX, .p99_9_ns = UINT64_MAX,
				      .p99_99_ns = UINT64_MAX, .max_ns = UINT64_MAX,
				      .mean_ns = NAN, .known = true, .count = 1};
	bad.failed = bad.ok;
	struct slo_measure odd = {
		.p99_ns = 100000000, .mean_ns = INFINITY, .error_pct = -1, .success_pct = 1e300,
		.drop_pct = 1e300,
		.achieved_fraction = 0.95, .offered_known = true, .outcome_pct = pct_ok, .n_outcomes = 1,
	};
	check_verdict(&s, &good);
	check_verdict(&s, &bad);
	check_verdict(&s, &odd);
	/* the all-bad measure fails every clause but some on drops (100%):
	 * count them exactly */
	struct slo_verdict v;
	slo_eval(&s, &bad, &v);
	size_t can_pass = 0;
	for (size_t i = 0; i < s.n; i++)
		if (s.c[i].metric == SLO_M_DROPS &&
		    ((s.c[i].op == SLO_LE && s.c[i].threshold == 100) || s.c[i].op == SLO_GE ||
		     (s.c[i].op == SLO_GT && s.c[i].threshold < 100)))
			can_pass++;
	CHECK(v.n_failed == s.n - can_pass);
	return 0;
}
