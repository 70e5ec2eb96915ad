/* Tests of the ramp result (src/result/ramp.c) on hand-built steps: the
 * highest passing step is the highest rate that passed, refine steps
 * included and whatever the order they ran in; the knee is the lowest rate
 * whose p50 exceeds twice the first step's; --require is reached or not;
 * and a step's SLO inputs (error, drop and achieved fractions, percentiles)
 * come from its counters as documented. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "plan/slo.h"
#include "result/ramp.h"
#include "util/err.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))
#define US 1000ull

/* A step as the summary sees it: rate, verdict, p50 and how it ran. */
struct step_spec {
	double rate;
	bool pass;
	uint64_t p50_ns; /* every latency of the step is this value; 0: none recorded */
	bool refine;
	bool interrupted;
};

/* Steps by kind: planned pass / fail, refine pass / fail, interrupted pass. */
#define PASS(rate, p50) {(rate), true, (p50), false, false}
#define FAIL(rate, p50) {(rate), false, (p50), false, false}
#define RPASS(rate, p50) {(rate), true, (p50), true, false}
#define RFAIL(rate, p50) {(rate), false, (p50), true, false}
#define IPASS(rate, p50) {(rate), true, (p50), false, true}

static void build_step(struct ramp_step *s, const struct step_spec *sp)
{
	memset(s, 0, sizeof *s);
	s->offered_per_s = sp->rate;
	s->refine = sp->refine;
	s->verdict.pass = sp->pass;
	snprintf(s->verdict.reason, sizeof s->verdict.reason, "%s", sp->pass ? "Pass" : "Fail p99");
	assert_int_equal(phase_stats_init(&s->run.measure), 0);
	s->run.open_loop = true;
	s->run.offered_rate_per_s = sp->rate;
	s->run.measure_ns = 1000000000ull;
	s->run.interrupted = sp->interrupted;
	if (sp->p50_ns)
		hist_record_n(&s->run.measure.timing[TIM_LATENCY], sp->p50_ns, 101);
}

/* A result holding specs[order[0]], specs[order[1]], ... (order NULL: as given). */
static void build(struct ramp_result *r, const struct step_spec *specs, size_t n,
		  const size_t *order)
{
	memset(r, 0, sizeof *r);
	for (size_t i = 0; i < n; i++) {
		struct ramp_step s;
		build_step(&s, &specs[order ? order[i] : i]);
		assert_int_equal(ramp_result_add(r, &s), 0);
	}
	assert_int_equal(r->n_steps, n);
}

/* Offered rate of step index k, or -1 for none. */
static double rate_at(const struct ramp_result *r, long k)
{
	return k < 0 ? -1 : r->steps[k].offered_per_s;
}

/* ------------------------------------------------------------ highest pass */

struct hp_case {
	const char *what;
	size_t n;
	struct step_spec s[8];
	double want_rate; /* -1: none passed */
};

static const struct hp_case hp_cases[] = {
	{"every step passes", 3,
	 {PASS(500, 100 * US), PASS(1000, 100 * US), PASS(2000, 100 * US)}, 2000},
	{"stops at the first fail", 3,
	 {PASS(500, 100 * US), PASS(1000, 100 * US), FAIL(2000, 100 * US)}, 1000},
	{"first step fails", 2, {FAIL(500, 100 * US), FAIL(1000, 100 * US)}, -1},
	{"refine steps included: the highest refine pass wins", 6,
	 {PASS(1000, 100 * US),
	  PASS(2000, 100 * US),
	  FAIL(4000, 100 * US),
	  RPASS(3000, 100 * US),
	  RFAIL(3500, 100 * US),
	  RPASS(3250, 100 * US)},
	 3250},
	{"refine steps that all fail leave the planned step", 5,
	 {PASS(1000, 100 * US),
	  PASS(2000, 100 * US),
	  FAIL(4000, 100 * US),
	  RFAIL(3000, 100 * US),
	  RFAIL(2500, 100 * US)},
	 2000},
	{"--after-fail: a later pass above a fail counts", 4,
	 {PASS(1000, 100 * US),
	  FAIL(2000, 100 * US),
	  PASS(4000, 100 * US),
	  FAIL(8000, 100 * US)},
	 4000},
	{"an interrupted passing step does not count", 3,
	 {PASS(1000, 100 * US), PASS(2000, 100 * US), IPASS(4000, 100 * US)},
	 2000},
	{"one step, interrupted", 1, {IPASS(1000, 100 * US)}, -1},
};

/* The next permutation of a[0..n) (Heap's algorithm; c and *i start at 0):
 * false once all n! have been visited. */
static bool next_perm(size_t *a, size_t n, size_t *c, size_t *i)
{
	while (*i < n) {
		if (c[*i] < *i) {
			size_t j = (*i % 2 == 0) ? 0 : c[*i];
			size_t t = a[j];
			a[j] = a[*i];
			a[*i] = t;
			c[*i]++;
			*i = 0;
			return true;
		}
		c[*i] = 0;
		(*i)++;
	}
	return false;
}

static void test_highest_passing(void **state)
{
	(void)state;
	for (size_t ci = 0; ci < N(hp_cases); ci++) {
		const struct hp_case *c = &hp_cases[ci];
		struct ramp_result r;
		build(&r, c->s, c->n, NULL);
		struct ramp_step orig[8];
		memcpy(orig, r.steps, c->n * sizeof *orig);
		size_t order[8], cnt[8] = {0}, pi = 0, perms = 0;
		for (size_t k = 0; k < c->n; k++)
			order[k] = k;
		/* the answer does not depend on the order the steps ran in: the
		 * same steps (shared, not copied) in every order */
		do {
			for (size_t k = 0; k < c->n; k++)
				r.steps[k] = orig[order[k]];
			ramp_result_summarize(&r, 0);
			if (rate_at(&r, r.highest_pass) != c->want_rate)
				fail_msg("%s (permutation %zu): highest passing %g, want %g", c->what,
					 perms, rate_at(&r, r.highest_pass), c->want_rate);
			if (r.highest_pass >= 0) {
				assert_true(r.steps[r.highest_pass].verdict.pass);
				assert_false(r.steps[r.highest_pass].run.interrupted);
			}
			perms++;
		} while (next_perm(order, c->n, cnt, &pi));
		size_t fact = 1;
		for (size_t k = 2; k <= c->n; k++)
			fact *= k;
		assert_int_equal(perms, fact);
		ramp_result_free(&r);
		assert_null(r.steps);
	}
}

/* ------------------------------------------------------------ knee */

struct knee_case {
	const char *what;
	size_t n;
	struct step_spec s[8];
	double want_rate; /* -1: no knee */
};

static const struct knee_case knee_cases[] = {
	{"flat: no knee", 4,
	 {PASS(500, 100 * US), PASS(1000, 120 * US), PASS(2000, 150 * US), PASS(4000, 190 * US)},
	 -1},
	{"exactly twice is not over twice", 3,
	 {PASS(500, 100 * US), PASS(1000, 150 * US), PASS(2000, 200 * US)}, -1},
	{"just over twice", 3, {PASS(500, 100 * US), PASS(1000, 150 * US), PASS(2000, 200001)},
	 2000},
	{"the first rise, not the highest", 5,
	 {PASS(500, 100 * US),
	  PASS(1000, 110 * US),
	  PASS(2000, 300 * US),
	  PASS(4000, 5000 * US),
	  FAIL(8000, 90000 * US)},
	 2000},
	{"a failing step can be the knee", 3,
	 {PASS(500, 100 * US), PASS(1000, 110 * US), FAIL(2000, 800 * US)}, 2000},
	{"a refine step below the planned knee is the knee", 6,
	 {PASS(1000, 100 * US),
	  PASS(2000, 150 * US),
	  FAIL(4000, 900 * US),
	  RPASS(3000, 250 * US),
	  RPASS(2500, 180 * US),
	  RPASS(2750, 210 * US)},
	 2750},
	{"later rates falling back do not undo the knee", 4,
	 {PASS(500, 100 * US), PASS(1000, 300 * US), PASS(2000, 150 * US), PASS(4000, 400 * US)},
	 1000},
	{"first step without latencies: no base, no knee", 3,
	 {PASS(500, 0), PASS(1000, 100 * US), PASS(2000, 900 * US)}, -1},
	{"one step: no knee", 1, {PASS(500, 100 * US)}, -1},
};

/* ------------------------------------------------------------ bounds */

/* A step's row for ramp_bounds_of: rate, verdict (p pass, f fail, i
 * inconclusive), retried (r) or interrupted (x). */
struct brow {
	double rate;
	char verdict;
	char how; /* 0, 'r', 'x' */
};

static void brow_of(const void *ctx, size_t i, struct ramp_row *out)
{
	const struct brow *b = &((const struct brow *)ctx)[i];
	*out = (struct ramp_row){.offered_per_s = b->rate,
				 .decides = !b->how,
				 .pass = b->verdict == 'p',
				 .inconclusive = b->verdict == 'i'};
}

struct bound_case {
	const char *what;
	size_t n;
	struct brow r[8];
	long highest, below;
	enum ramp_bound bound;
	size_t inconclusive;
};

static const struct bound_case bound_cases[] = {
	{"the next step failed: exact", 3, {{500, 'p', 0}, {1000, 'p', 0}, {2000, 'f', 0}}, 1, 2,
	 RAMP_BOUND_EXACT, 0},
	{"every step passed: top", 2, {{500, 'p', 0}, {1000, 'p', 0}}, 1, -1, RAMP_BOUND_TOP, 0},
	{"the next step stayed inconclusive: lower", 3, {{500, 'p', 0}, {1000, 'p', 0}, {2000, 'i', 0}},
	 1, -1, RAMP_BOUND_LOWER, 1},
	{"inconclusive, retried, then failed: exact", 4,
	 {{500, 'p', 0}, {1000, 'p', 0}, {2000, 'i', 'r'}, {2000, 'f', 0}}, 1, 3, RAMP_BOUND_EXACT, 0},
	{"inconclusive, retried, then passed: top", 4,
	 {{500, 'p', 0}, {1000, 'i', 'r'}, {1000, 'i', 'r'}, {1000, 'p', 0}}, 3, -1, RAMP_BOUND_TOP, 0},
	{"a refine step inconclusive between pass and fail: lower", 4,
	 {{500, 'p', 0}, {1000, 'p', 0}, {2000, 'f', 0}, {1500, 'i', 0}}, 1, 2, RAMP_BOUND_LOWER, 1},
	{"an inconclusive step above the failure does not open it", 4,
	 {{500, 'p', 0}, {1000, 'f', 0}, {2000, 'i', 0}, {4000, 'f', 0}}, 0, 1, RAMP_BOUND_EXACT, 1},
	{"the first step inconclusive: nothing passed, lower", 1, {{500, 'i', 0}}, -1, -1,
	 RAMP_BOUND_LOWER, 1},
	{"nothing passed, a failure: none", 1, {{500, 'f', 0}}, -1, 0, RAMP_BOUND_NONE, 0},
	{"an interrupted pass does not count", 3, {{500, 'p', 0}, {1000, 'p', 0}, {2000, 'p', 'x'}}, 1,
	 -1, RAMP_BOUND_TOP, 0},
	{"no steps", 0, {{0, 0, 0}}, -1, -1, RAMP_BOUND_NONE, 0},
};

static void test_bounds(void **state)
{
	(void)state;
	for (size_t i = 0; i < N(bound_cases); i++) {
		const struct bound_case *c = &bound_cases[i];
		struct ramp_bounds b;
		ramp_bounds_of(c->n, brow_of, c->r, &b);
		if (b.highest != c->highest || b.below != c->below || b.bound != c->bound ||
		    b.inconclusive != c->inconclusive)
			fail_msg("%s: highest %ld below %ld bound %d inconclusive %zu; expected %ld %ld "
				 "%d %zu",
				 c->what, b.highest, b.below, (int)b.bound, b.inconclusive, c->highest,
				 c->below, (int)c->bound, c->inconclusive);
	}
	assert_string_equal(ramp_bound_name(RAMP_BOUND_LOWER), "lower");
	assert_null(ramp_bound_name(RAMP_BOUND_NONE));
}

/* The summary of a result agrees with ramp_bounds_of on its steps: a step
 * measured again is passed over, an inconclusive one ends the capacity. */
static void test_summary_bounds(void **state)
{
	(void)state;
	const struct step_spec specs[] = {PASS(500, 100 * US), PASS(1000, 100 * US),
					  FAIL(2000, 100 * US), FAIL(2000, 100 * US)};
	struct ramp_result r;
	build(&r, specs, N(specs), NULL);
	r.steps[2].verdict.inconclusive = true; /* measured again ... */
	r.steps[2].retried = true;
	r.steps[3].verdict.inconclusive = true; /* ... and still so */
	ramp_result_summarize(&r, 0);
	assert_int_equal(r.highest_pass, 1);
	assert_int_equal(r.bound, RAMP_BOUND_LOWER);
	assert_int_equal(r.inconclusive, 1);
	assert_int_equal(r.below, -1);
	assert_false(r.reached_require); /* an inconclusive step is no pass */
	ramp_result_summarize(&r, 1000);
	assert_true(r.reached_require); /* 1,000 passed conclusively */
	ramp_result_free(&r);
}

static void test_knee(void **state)
{
	(void)state;
	for (size_t ci = 0; ci < N(knee_cases); ci++) {
		const struct knee_case *c = &knee_cases[ci];
		struct ramp_result r;
		build(&r, c->s, c->n, NULL);
		ramp_result_summarize(&r, 0);
		if (rate_at(&r, r.knee) != c->want_rate)
			fail_msg("%s: knee %g, want %g", c->what, rate_at(&r, r.knee), c->want_rate);
		ramp_result_free(&r);
	}
	/* no steps at all */
	struct ramp_result r = {0};
	ramp_result_summarize(&r, 0);
	assert_int_equal(r.knee, -1);
	assert_int_equal(r.highest_pass, -1);
	assert_false(r.reached_require);
	ramp_result_free(&r);
}

/* ------------------------------------------------------------ --require */

static void test_reached_require(void **state)
{
	(void)state;
	static const struct step_spec all_pass[] = {
		PASS(500, 100 * US), PASS(1000, 100 * US), PASS(2000, 100 * US)};
	static const struct step_spec fail_then_refine[] = {
		PASS(1000, 100 * US),
		PASS(2000, 100 * US),
		FAIL(4000, 100 * US),
		RPASS(3000, 100 * US),
		RFAIL(3500, 100 * US),
		RPASS(3250, 100 * US)};
	static const struct step_spec none_pass[] = {FAIL(1000, 100 * US)};
	static const struct {
		const struct step_spec *s;
		size_t n;
		double require;
		bool reached;
	} cases[] = {
		/* no --require: reached when every step passed */
		{all_pass, N(all_pass), 0, true},
		{fail_then_refine, N(fail_then_refine), 0, false},
		{none_pass, N(none_pass), 0, false},
		/* --require R: reached when a step at or above R passed */
		{all_pass, N(all_pass), 2000, true},
		{all_pass, N(all_pass), 2001, false},
		{all_pass, N(all_pass), 100, true},
		{fail_then_refine, N(fail_then_refine), 3000, true},
		{fail_then_refine, N(fail_then_refine), 3250, true},  /* a refine pass counts */
		{fail_then_refine, N(fail_then_refine), 3251, false},
		{fail_then_refine, N(fail_then_refine), 4000, false}, /* ran, but failed */
		{none_pass, N(none_pass), 500, false},
	};
	for (size_t i = 0; i < N(cases); i++) {
		struct ramp_result r;
		build(&r, cases[i].s, cases[i].n, NULL);
		ramp_result_summarize(&r, cases[i].require);
		if (r.reached_require != cases[i].reached)
			fail_msg("case %zu (require %g): reached %d, want %d", i, cases[i].require,
				 r.reached_require, cases[i].reached);
		ramp_result_free(&r);
	}
}

static void test_add_grows(void **state)
{
	(void)state;
	struct ramp_result r = {0};
	for (unsigned i = 0; i < 40; i++) {
		struct step_spec sp = PASS(100.0 * (i + 1), (10 + i) * US);
		struct ramp_step s;
		build_step(&s, &sp);
		assert_int_equal(ramp_result_add(&r, &s), 0);
	}
	assert_int_equal(r.n_steps, 40);
	assert_true(r.cap >= 40);
	for (unsigned i = 0; i < 40; i++)
		assert_true(r.steps[i].offered_per_s == 100.0 * (i + 1));
	ramp_result_summarize(&r, 0);
	assert_true(rate_at(&r, r.highest_pass) == 4000);
	assert_true(rate_at(&r, r.knee) == 1200); /* 21us at step 12 (20us is not over twice 10us) */
	ramp_result_free(&r);
	assert_int_equal(r.n_steps, 0);
}

/* ------------------------------------------------------------ step measure */

static void test_step_measure_counters(void **state)
{
	(void)state;
	struct run_result run;
	memset(&run, 0, sizeof run);
	assert_int_equal(phase_stats_init(&run.measure), 0);
	struct phase_stats *p = &run.measure;
	p->scheduled = 2000;
	p->sent = 1000;
	p->completed = 900;
	p->dropped = 10;
	p->queued_at_end = 30;
	p->in_flight_at_end = 7;
	p->errors[ERRK_CONNECT] = 5; /* not per request: not in error_pct */
	p->errors[ERRK_READ] = 3;
	p->errors[ERRK_TIMEOUT] = 7;
	p->success_ok = 900; /* every response succeeded (see below for failed ones) */
	run.open_loop = true;
	run.offered_rate_per_s = 500;
	run.measure_ns = 2000000000ull; /* 900 in 2 s: 450/s of 500/s */
	for (uint64_t v = 1; v <= 1000; v++)
		hist_record(&p->timing[TIM_LATENCY], v * US);

	struct slo_measure m;
	double pct[RESULT_MAX_OUTCOMES];
	ramp_step_measure(&run, 0, pct, &m);
	assert_true(fabs(m.error_pct - 1.0) < 1e-12);  /* 10 of 1000 sent */
	assert_true(fabs(m.success_pct - 90.0) < 1e-12); /* 900 of 1000 sent */
	assert_int_equal(phase_stats_errors(p), 10);
	assert_int_equal(phase_stats_failed_responses(p), 0);
	assert_int_equal(phase_stats_request_errors(p), 10);
	assert_int_equal(phase_stats_transport_errors(p), 15);
	assert_int_equal(m.ok.count, 0); /* nothing recorded apart */
	assert_true(m.ok.known);
	assert_true(fabs(m.drop_pct - 2.0) < 1e-12);   /* 40 of 2000 due */
	assert_true(m.offered_known);
	assert_true(fabs(m.achieved_fraction - 0.9) < 1e-12);
	const struct hist *h = &p->timing[TIM_LATENCY];
	assert_int_equal(m.p50_ns, hist_percentile(h, 50));
	assert_int_equal(m.p90_ns, hist_percentile(h, 90));
	assert_int_equal(m.p99_ns, hist_percentile(h, 99));
	assert_int_equal(m.p99_9_ns, hist_percentile(h, 99.9));
	assert_int_equal(m.p99_99_ns, hist_percentile(h, 99.99));
	assert_int_equal(m.max_ns, 1000 * US);
	assert_true(fabs(m.mean_ns - 500.5 * US) < 1e-6);
	/* within the histogram's 0.1 % of the true percentiles */
	assert_true(m.p50_ns >= 500 * US && m.p50_ns < 501 * US);
	assert_true(m.p99_ns >= 990 * US && m.p99_ns < 991 * US);
	assert_int_equal(m.n_outcomes, 0);
	/* outcome rates: percent of completed responses, for SLOs by name */
	p->outcome[0] = 450;
	p->outcome[1] = 9;
	ramp_step_measure(&run, 2, pct, &m);
	assert_int_equal(m.n_outcomes, 2);
	assert_ptr_equal(m.outcome_pct, pct);
	assert_true(fabs(pct[0] - 100.0 * 450 / (double)p->completed) < 1e-9);
	assert_true(fabs(pct[1] - 100.0 * 9 / (double)p->completed) < 1e-9);

	/* through the SLO: the units line up with the clauses */
	struct slo s;
	char err[256];
	assert_int_equal(slo_parse(&s, "errors<1%,drops<2%,rate>=95%,p99<1ms", NULL, 0, err, sizeof err),
			 0);
	struct slo_verdict v;
	slo_eval(&s, &m, &v);
	assert_false(v.pass);
	assert_int_equal(v.n_failed, 3);
	assert_string_equal(v.reason,
			    "Fail errors 1.00% >= 1%; drops 2.00% >= 2%; rate 90.00% < 95%");
	/* 20 of the 900 responses fail the success rule: they are errors too */
	p->success_ok = 880;
	struct slo_measure m2;
	ramp_step_measure(&run, 0, pct, &m2);
	assert_true(fabs(m2.error_pct - 3.0) < 1e-12);   /* 10 transport + 20 failed of 1000 */
	assert_true(fabs(m2.success_pct - 88.0) < 1e-12);
	assert_int_equal(phase_stats_errors(p), 30);
	assert_int_equal(phase_stats_failed_responses(p), 20);
	p->success_ok = 900;
	assert_int_equal(slo_parse(&s, "errors<=1%,drops<=2%,rate>=90%,p99<=1ms,max<=1ms", NULL, 0,
				   err, sizeof err),
			 0);
	slo_eval(&s, &m, &v);
	if (!v.pass)
		fail_msg("want Pass, got %s", v.reason);
	assert_string_equal(v.reason, "Pass");
	phase_stats_free(&run.measure);
}

static void test_step_measure_edges(void **state)
{
	(void)state;
	struct run_result run;
	/* nothing happened: all zero, no division by zero */
	memset(&run, 0, sizeof run);
	assert_int_equal(phase_stats_init(&run.measure), 0);
	run.open_loop = true;
	run.offered_rate_per_s = 1000;
	struct slo_measure m;
	double pct[RESULT_MAX_OUTCOMES];
	memset(&m, 0xa5, sizeof m);
	ramp_step_measure(&run, 0, pct, &m);
	assert_true(m.error_pct == 0);
	assert_true(m.drop_pct == 0);
	assert_true(m.achieved_fraction == 0);
	assert_true(m.offered_known);
	assert_int_equal(m.p50_ns, 0);
	assert_int_equal(m.max_ns, 0);
	assert_null(m.outcome_pct);
	assert_int_equal(m.n_outcomes, 0);

	/* every due request dropped or left queued: 100 % drops */
	run.measure.scheduled = 300;
	run.measure.dropped = 100;
	run.measure.queued_at_end = 200;
	ramp_step_measure(&run, 0, pct, &m);
	assert_true(m.drop_pct == 100);

	/* only connect errors: no request failed */
	run.measure.sent = 50;
	run.measure.errors[ERRK_CONNECT] = 12;
	ramp_step_measure(&run, 0, pct, &m);
	assert_true(m.error_pct == 0);
	run.measure.errors[ERRK_PARSE] = 1;
	run.measure.errors[ERRK_CLOSED] = 1;
	run.measure.errors[ERRK_WRITE] = 3;
	ramp_step_measure(&run, 0, pct, &m);
	assert_true(fabs(m.error_pct - 10.0) < 1e-12); /* 5 of 50 */

	/* closed loop: no offered rate, so no achieved fraction */
	run.open_loop = false;
	run.offered_rate_per_s = 0;
	run.measure.completed = 50;
	run.measure_ns = 1000000000ull;
	ramp_step_measure(&run, 0, pct, &m);
	assert_false(m.offered_known);
	assert_true(m.achieved_fraction == 0);

	/* open loop but an offered rate of 0: unknown too */
	run.open_loop = true;
	ramp_step_measure(&run, 0, pct, &m);
	assert_false(m.offered_known);

	/* more achieved than offered (a burst from the warm-up's backlog) */
	run.offered_rate_per_s = 40;
	ramp_step_measure(&run, 0, pct, &m);
	assert_true(m.offered_known);
	assert_true(fabs(m.achieved_fraction - 1.25) < 1e-12);
	phase_stats_free(&run.measure);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_highest_passing),
		cmocka_unit_test(test_bounds),
		cmocka_unit_test(test_summary_bounds),
		cmocka_unit_test(test_knee),
		cmocka_unit_test(test_reached_require),
		cmocka_unit_test(test_add_grows),
		cmocka_unit_test(test_step_measure_counters),
		cmocka_unit_test(test_step_measure_edges),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
