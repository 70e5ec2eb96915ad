/* Tests of materiality (src/result/verdict.c slo_eval_share): a failing SLO
 * clause is material -- pacer's own error could have decided it -- when it
 * would pass with pacer's share taken out; a verdict whose failing clauses
 * are all material is inconclusive, and so is a pass at a rate pacer could
 * not offer. Table-driven over the clause kinds: latency (the lateness at
 * the clause's statistic against the margin to its threshold; the requests
 * sent on time; the response side's lateness without receive stamps),
 * errors and success (the failures of lagged requests), rate and drops (a
 * shortfall by the generator), outcomes (the lagged requests' share). */
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
#include "result/verdict.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))
#define MS 1000000ull

static const char *const outcomes[] = {"fill"};

/* A step: p99 110 ms over 1,000 responses, 2 % errors, 98 % success, 100 %
 * of the rate, no drops, fill 80 %. */
static struct slo_measure step(double *opct)
{
	struct slo_measure m = {
		.p50_ns = 5 * MS, .p90_ns = 60 * MS, .p99_ns = 110 * MS, .p99_9_ns = 150 * MS,
		.p99_99_ns = 160 * MS, .max_ns = 200 * MS, .mean_ns = 20.0 * MS,
		.latency_known = true, .latency_count = 1000,
		.error_pct = 2.0, .success_pct = 98.0, .drop_pct = 0,
		.achieved_fraction = 1.0, .offered_known = true,
	};
	m.ok = (struct slo_latency){.p99_ns = 110 * MS, .known = true, .count = 980};
	m.failed = (struct slo_latency){.p99_ns = 1 * MS, .known = true, .count = 20};
	opct[0] = 80.0;
	m.outcome_pct = opct;
	m.n_outcomes = 1;
	return m;
}

/* pacer's share: loop lag p99 5 ms (max 40 ms), no lagged failures, the
 * on-time requests as slow as every request, responses stamped. */
static struct slo_share share(void)
{
	struct slo_share sh = {.known = true};
	sh.lag = (struct slo_latency){.p50_ns = MS / 10, .p90_ns = MS, .p99_ns = 5 * MS,
				      .p99_9_ns = 20 * MS, .p99_99_ns = 30 * MS, .max_ns = 40 * MS,
				      .mean_ns = 1.0 * MS, .known = true, .count = 1000};
	sh.ontime = (struct slo_latency){.p50_ns = 5 * MS, .p90_ns = 60 * MS, .p99_ns = 110 * MS,
					 .p99_9_ns = 150 * MS, .p99_99_ns = 160 * MS,
					 .max_ns = 200 * MS, .mean_ns = 20.0 * MS, .known = true,
					 .count = 990};
	return sh;
}

struct row {
	const char *what;
	const char *slo;
	void (*tweak)(struct slo_measure *m, struct slo_share *sh);
	bool pass, inconclusive;
	uint32_t material;
	const char *why_has; /* a phrase of the why, or NULL (none) */
};

static void none(struct slo_measure *m, struct slo_share *sh) { (void)m, (void)sh; }
static void lag_12ms(struct slo_measure *m, struct slo_share *sh) { (void)m, sh->lag.p99_ns = 12 * MS; }
static void lag_10ms(struct slo_measure *m, struct slo_share *sh) { (void)m, sh->lag.p99_ns = 10 * MS; }
static void ontime_fast(struct slo_measure *m, struct slo_share *sh)
{
	(void)m;
	sh->ontime.p99_ns = 30 * MS;
	sh->ontime.count = 700;
}
static void ontime_none(struct slo_measure *m, struct slo_share *sh)
{
	(void)m;
	sh->ontime = (struct slo_latency){.known = true, .count = 0};
}
static void unstamped(struct slo_measure *m, struct slo_share *sh)
{
	(void)m;
	sh->lag.p99_ns = 6 * MS;
	sh->read_err_ns = 5 * MS;
}
static void lagged_fail_15(struct slo_measure *m, struct slo_share *sh) { (void)m, sh->lagged_failed_pct = 1.5; }
static void lagged_fail_05(struct slo_measure *m, struct slo_share *sh) { (void)m, sh->lagged_failed_pct = 0.5; }
static void short_gen(struct slo_measure *m, struct slo_share *sh)
{
	m->achieved_fraction = 0.8;
	m->drop_pct = 3;
	sh->gen_short = true;
}
static void short_target(struct slo_measure *m, struct slo_share *sh)
{
	(void)sh;
	m->achieved_fraction = 0.8;
	m->drop_pct = 3;
}
static void pass_short(struct slo_measure *m, struct slo_share *sh)
{
	m->p99_ns = 50 * MS;
	m->achieved_fraction = 0.8;
	sh->gen_short = true;
}
static void lagged_11(struct slo_measure *m, struct slo_share *sh) { (void)m, sh->lagged_pct = 11; }
static void lagged_9(struct slo_measure *m, struct slo_share *sh) { (void)m, sh->lagged_pct = 9; }
static void unknown(struct slo_measure *m, struct slo_share *sh) { (void)m, sh->known = false, sh->lag.p99_ns = 100 * MS; }

static const struct row rows[] = {
	/* latency: margin 10 ms against the lateness at p99 */
	{"lateness within the margin", "p99<100ms", lag_12ms, false, true, 1, "pacer's lateness there, 12.0 ms"},
	{"lateness exactly the margin: not enough", "p99<100ms", lag_10ms, false, false, 0, NULL},
	{"lateness under the margin", "p99<100ms", none, false, false, 0, NULL},
	{"on-time requests met it", "p99<100ms", ontime_fast, false, true, 1, "the 700 requests it sent on time met it"},
	{"no request on time", "p99<100ms", ontime_none, false, false, 0, NULL},
	{"the response side's lateness counts without stamps", "p99<100ms", unstamped, false, true, 1, "the response side's included"},
	{"an ok.p99 clause is judged by the lateness only", "ok.p99<100ms", ontime_fast, false, false, 0, NULL},
	{"max within the lateness at max", "max<170ms", none, false, true, 1, "pacer's lateness there, 40.0 ms"},
	{"max beyond the lateness at max", "max<150ms", none, false, false, 0, NULL},
	/* errors and success: the failures of lagged requests */
	{"errors within the lagged failures", "errors<1%", lagged_fail_15, false, true, 1, "1.50% of the requests failed after pacer sent them late"},
	{"errors beyond them", "errors<1%", lagged_fail_05, false, false, 0, NULL},
	{"success within them", "success>=99%", lagged_fail_15, false, true, 1, NULL},
	{"success beyond them", "success>=99%", lagged_fail_05, false, false, 0, NULL},
	/* rate and drops: a shortfall by the generator */
	{"rate short by the generator", "rate>=95%", short_gen, false, true, 1, "the rate fell short by the generator's fault"},
	{"rate short by the target", "rate>=95%", short_target, false, false, 0, NULL},
	{"drops by the generator", "drops<1%", short_gen, false, true, 1, NULL},
	{"drops by the target", "drops<1%", short_target, false, false, 0, NULL},
	/* outcomes: the lagged requests' share */
	{"fill within the lagged share", "fill>=90%", lagged_11, false, true, 1, "11.00% of the requests were sent late"},
	{"fill beyond it", "fill>=90%", lagged_9, false, false, 0, NULL},
	/* several clauses: a conclusive failure decides */
	{"one conclusive, one material", "p99<100ms,errors<1%", lagged_fail_15, false, false, 2, NULL},
	{"both material", "p99<100ms,errors<1%", lag_12ms, false, false, 1, NULL},
	/* a pass */
	{"a pass", "p99<200ms", none, true, false, 0, NULL},
	{"a pass at a rate pacer could not offer", "p99<100ms", pass_short, true, true, 0, "pacer could not offer the rate"},
	{"not known: as slo_eval", "p99<100ms", unknown, false, false, 0, NULL},
};

static void test_table(void **state)
{
	(void)state;
	for (size_t i = 0; i < N(rows); i++) {
		const struct row *r = &rows[i];
		struct slo s;
		char err[256];
		assert_int_equal(slo_parse(&s, r->slo, outcomes, N(outcomes), err, sizeof err), 0);
		double opct[1];
		struct slo_measure m = step(opct);
		struct slo_share sh = share();
		r->tweak(&m, &sh);
		struct slo_verdict v, plain;
		slo_eval_share(&s, &m, &sh, &v);
		slo_eval(&s, &m, &plain);
		if (v.pass != r->pass || v.inconclusive != r->inconclusive || v.material != r->material)
			fail_msg("%s (%s): pass %d inconclusive %d material %#x, expected %d %d %#x "
				 "(why: %s)",
				 r->what, r->slo, v.pass, v.inconclusive, v.material, r->pass,
				 r->inconclusive, r->material, v.why);
		/* the verdict and its reason are slo_eval's */
		assert_int_equal(v.pass, plain.pass);
		assert_string_equal(v.reason, plain.reason);
		if (r->why_has && !strstr(v.why, r->why_has))
			fail_msg("%s: why '%s' lacks '%s'", r->what, v.why, r->why_has);
		if (!v.inconclusive)
			assert_string_equal(v.why, "");
	}
}

/* The "both material" row of the table is decided by the errors clause
 * alone when the lateness covers p99 too: then the whole verdict is
 * inconclusive and both clauses are named. */
static void test_all_material(void **state)
{
	(void)state;
	struct slo s;
	char err[256];
	assert_int_equal(slo_parse(&s, "p99<100ms,errors<1%", NULL, 0, err, sizeof err), 0);
	double opct[1];
	struct slo_measure m = step(opct);
	struct slo_share sh = share();
	sh.lag.p99_ns = 12 * MS;
	sh.lagged_failed_pct = 1.5;
	struct slo_verdict v;
	slo_eval_share(&s, &m, &sh, &v);
	assert_false(v.pass);
	assert_true(v.inconclusive);
	assert_int_equal(v.material, 3);
	assert_non_null(strstr(v.why, "p99 110.0 ms > 100ms, within pacer's share"));
	assert_non_null(strstr(v.why, "; errors 2.00% > 1%, within pacer's share"));
	/* NULL share: slo_eval */
	slo_eval_share(&s, &m, NULL, &v);
	assert_false(v.inconclusive);
	assert_int_equal(v.material, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table),
		cmocka_unit_test(test_all_material),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
