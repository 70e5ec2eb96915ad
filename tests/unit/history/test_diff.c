/* pacer diff's logic (src/history/diff.c, headline.c): headline figures of
 * each result kind, significance by method, not-comparable detection
 * naming the field, and --fail-on rules. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "common/doc_fixtures.h"
#include "history/diff.h"
#include "history/headline.h"
#include "util/err.h"

/* fx_run with every latency value (histogram and percentiles) times scale
 * and the given table hash. */
static json_t *run_scaled(double scale, const char *sha)
{
	json_t *j = fx_run();
	json_t *lat = json_object_get(json_object_get(j, "measure"), "latency");
	static const char *const keys[] = {"min_us", "mean_us", "p50_us", "p90_us",
					   "p99_us", "p99_9_us", "p99_99_us", "max_us"};
	for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
		json_t *v = json_object_get(lat, keys[i]);
		json_object_set_new(lat, keys[i], json_real(json_number_value(v) * scale));
	}
	json_t *counts = json_object_get(json_object_get(lat, "hist"), "counts");
	for (size_t i = 0; i < json_array_size(counts); i++) {
		json_t *pair = json_array_get(counts, i);
		double v = (double)json_integer_value(json_array_get(pair, 0)) * scale;
		json_array_set_new(pair, 0, json_integer((json_int_t)v));
	}
	json_t *wl = json_object();
	json_object_set_new(wl, "sha256", json_string(sha));
	json_object_set_new(json_object_get(j, "plan"), "workload", wl);
	return j;
}

static void load(json_t *j, struct loaded_result *r)
{
	char err[256];
	int rc = fx_load(j, r, err, sizeof err);
	if (rc)
		fail_msg("fixture: %s", err);
}

static const struct diff_row *row(const struct diff_result *d, enum headline_metric m)
{
	for (size_t i = 0; i < d->n_rows; i++)
		if (d->rows[i].m == m)
			return &d->rows[i];
	fail_msg("no row for %s", headline_metric_name(m));
	return NULL;
}

static void test_headline_of_each_kind(void **state)
{
	(void)state;
	struct loaded_result r;
	struct history_headline h;
	load(run_scaled(1, "abc"), &r);
	history_headline_of(&r, &h);
	assert_string_equal(h.kind, "run");
	assert_string_equal(h.table_hash, "abc");
	assert_string_equal(h.target, "http://127.0.0.1:8080/x");
	assert_string_equal(h.cpu_model, "Test CPU");
	assert_true(h.cores == 4);
	assert_true(h.v[HM_ACHIEVED] == 500);
	assert_true(fabs(h.v[HM_P50] - 999.999) < 1e-9);
	assert_true(isnan(h.v[HM_CAPACITY]));
	result_free(&r);

	/* ramp: the highest passing step's figures, its rate the capacity; a
	 * self-contained target named by its plan (the port changes) */
	load(fx_ramp(), &r);
	history_headline_of(&r, &h);
	assert_string_equal(h.kind, "ramp");
	assert_true(h.v[HM_CAPACITY] == 500);
	assert_true(h.v[HM_ACHIEVED] == 500);
	assert_string_equal(h.target, "self-contained:hello/x");
	result_free(&r);

	/* compare: the first variant's medians; the variants as the target */
	load(fx_compare(), &r);
	history_headline_of(&r, &h);
	assert_string_equal(h.target, "compare:a=@hello,b=@hello");
	assert_true(h.v[HM_ACHIEVED] == 100);
	assert_true(h.v[HM_P50] == 10);
	result_free(&r);
}

/* A session run (fx_sessions: durations at dur_us, steps at step_us and
 * twice that). */
static json_t *session_run(double dur_us, double step_us)
{
	json_t *j = run_scaled(1, "abc");
	fx_sessions(json_object_get(j, "measure"), dur_us, step_us);
	return j;
}

/* Sessions in the headline and the diff: completed % by a two-proportion
 * test, the duration percentiles and each step's p50/p99 by their
 * histograms' intervals; a run without sessions has no such rows. */
static void test_sessions_and_steps(void **state)
{
	(void)state;
	struct loaded_result a, b, c;
	load(session_run(40000, 1000), &a);
	load(session_run(80000, 3000), &b);
	load(run_scaled(1, "abc"), &c);
	struct history_headline h;
	history_headline_of(&a, &h);
	assert_true(h.sess.started == 20 && h.sess.completed == 19 && h.sess.failed == 1 &&
		    h.sess.abandoned == 0);
	assert_true(h.v[HM_SESSIONS] == 95);
	assert_true(h.v[HM_SESSION_P50] == 40000 && h.v[HM_SESSION_P99] == 40000);
	assert_int_equal(h.n_steps, 2);
	assert_string_equal(h.steps[1].name, "account");
	assert_true(h.steps[1].p50_us == 2000);

	static struct diff_result d;
	diff_results(&a, &b, 0.05, &d);
	assert_true(d.comparable);
	const struct diff_row *sp = row(&d, HM_SESSION_P99);
	assert_int_equal(sp->method, DIFF_PCT_CI);
	assert_true(sp->significant && sp->worse);
	assert_true(fabs(sp->ratio - 2) < 1e-9);
	const struct diff_row *done = row(&d, HM_SESSIONS);
	assert_int_equal(done->method, DIFF_ZTEST);
	assert_false(done->significant); /* 19 of 20 both sides */
	assert_int_equal(d.n_steps, 2);
	assert_string_equal(d.steps[0].name, "login");
	assert_int_equal(d.steps[0].p99.method, DIFF_PCT_CI);
	assert_true(d.steps[0].p99.significant && d.steps[0].p99.worse);
	assert_true(fabs(d.steps[1].p50.ratio - 3) < 1e-9);
	assert_true(d.steps[1].p50.old_v == 2000 && d.steps[1].p50.new_v == 6000);
	/* the same sessions: no significant change */
	diff_results(&a, &a, 0.05, &d);
	assert_false(row(&d, HM_SESSION_P99)->significant);
	assert_false(d.steps[0].p99.significant);
	/* against a run without sessions: no session rows, no steps */
	diff_results(&a, &c, 0.05, &d);
	assert_int_equal(d.n_steps, 0);
	for (size_t i = 0; i < d.n_rows; i++)
		assert_true(d.rows[i].m < HM_SESSIONS);
	/* --fail-on rules on the sessions' p99 and on steps */
	struct diff_rule rules[4];
	size_t n;
	char err[256], mb[160];
	assert_int_equal(diff_rules_parse("session_p99>+50%, step:account.p50>+100%,"
					  "step:login.p99>+500%,step:nope.p99>+1%",
					  rules, 4, &n, err, sizeof err),
			 0);
	assert_int_equal(n, 4);
	assert_string_equal(diff_rule_metric(&rules[1], mb, sizeof mb), "step:account.p50");
	assert_string_equal(diff_rule_metric(&rules[0], mb, sizeof mb), "session_p99");
	diff_results(&a, &b, 0.05, &d);
	assert_true(diff_rule_fires(&rules[0], &d));
	assert_true(diff_rule_fires(&rules[1], &d));  /* 3 times: +200% */
	assert_false(diff_rule_fires(&rules[2], &d)); /* +200%, not past +500% */
	assert_false(diff_rule_fires(&rules[3], &d)); /* no such step */
	static const char *const bad[] = {"step:.p99>+1%", "step:login.p90>+1%", "step:login>+1%",
					  "step:login.p99>+1pp"};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		assert_int_equal(diff_rules_parse(bad[i], rules, 4, &n, err, sizeof err),
				 PACER_EPARSE);
		assert_non_null(strstr(err, "--fail-on"));
	}
	result_free(&a);
	result_free(&b);
	result_free(&c);
}

static void test_slower_run_is_significant_same_is_not(void **state)
{
	(void)state;
	struct loaded_result a, b, c;
	load(run_scaled(1, "abc"), &a);
	load(run_scaled(1.5, "abc"), &b);
	load(run_scaled(1, "abc"), &c);
	static struct diff_result d;
	diff_results(&a, &b, 0.05, &d);
	assert_true(d.comparable);
	const struct diff_row *p50 = row(&d, HM_P50);
	assert_int_equal(p50->method, DIFF_PCT_CI);
	assert_true(p50->significant);
	assert_true(p50->worse);
	assert_true(fabs(p50->ratio - 1.5) < 1e-6);
	assert_true(p50->lo > 1.0);
	assert_true(p50->n_old == 1000 && p50->n_new == 1000);
	/* rate unchanged: threshold method, not significant */
	const struct diff_row *ach = row(&d, HM_ACHIEVED);
	assert_int_equal(ach->method, DIFF_THRESHOLD);
	assert_false(ach->significant);

	diff_results(&a, &c, 0.05, &d);
	assert_true(d.comparable);
	for (size_t i = 0; i < d.n_rows; i++)
		assert_false(d.rows[i].significant);
	/* 1.5x but with a noise threshold of 60 %: not called */
	diff_results(&a, &b, 0.60, &d);
	assert_false(row(&d, HM_P50)->significant);
	result_free(&a);
	result_free(&b);
	result_free(&c);
}

static json_t *with_reps(json_t *j, const double *p50, size_t n)
{
	json_t *reps = json_array();
	for (size_t i = 0; i < n; i++) {
		json_t *r = json_object();
		json_object_set_new(r, "p50_us", json_real(p50[i]));
		json_object_set_new(r, "achieved_per_s", json_real(500 + (double)i));
		json_array_append_new(reps, r);
	}
	json_object_set_new(j, "repetitions", reps);
	return j;
}

static void test_repetitions_use_the_bootstrap(void **state)
{
	(void)state;
	static const double fast[] = {1000, 1010, 990, 1005, 995};
	static const double slow[] = {1300, 1310, 1290, 1305, 1295};
	static const double same[] = {1002, 1008, 992, 1001, 997};
	struct loaded_result a, b, c;
	load(with_reps(run_scaled(1, "abc"), fast, 5), &a);
	load(with_reps(run_scaled(1, "abc"), slow, 5), &b);
	load(with_reps(run_scaled(1, "abc"), same, 5), &c);
	static struct diff_result d;
	diff_results(&a, &b, 0.05, &d);
	const struct diff_row *p50 = row(&d, HM_P50);
	assert_int_equal(p50->method, DIFF_BOOTSTRAP);
	assert_int_equal(p50->n_old, 5);
	assert_true(p50->significant);
	assert_true(p50->lo > 1.2 && p50->hi < 1.4);
	diff_results(&a, &c, 0.05, &d);
	assert_int_equal(row(&d, HM_P50)->method, DIFF_BOOTSTRAP);
	assert_false(row(&d, HM_P50)->significant);
	result_free(&a);
	result_free(&b);
	result_free(&c);
}

static void test_errors_two_proportions(void **state)
{
	(void)state;
	json_t *ja = run_scaled(1, "abc"), *jb = run_scaled(1, "abc");
	/* the fixture is 1.x (upgraded on load): make it 2.0 and set its errors */
	json_object_set_new(ja, "schema_version", json_string("2.0"));
	json_object_set_new(jb, "schema_version", json_string("2.0"));
	json_t *m_a = json_object_get(ja, "measure"), *m_b = json_object_get(jb, "measure");
	json_object_set_new(m_a, "errors",
			    fx_parse("{\"total\":1,\"pct\":0.1,\"failed_responses\":1,\"transport\":0}"));
	json_object_set_new(m_b, "errors",
			    fx_parse("{\"total\":60,\"pct\":6.0,\"failed_responses\":60,\"transport\":0}"));
	json_object_set_new(m_a, "success", fx_parse("{\"of\":1000}"));
	json_object_set_new(m_b, "success", fx_parse("{\"of\":1000}"));
	struct loaded_result a, b;
	load(ja, &a);
	load(jb, &b);
	static struct diff_result d;
	diff_results(&a, &b, 0.05, &d);
	const struct diff_row *e = row(&d, HM_ERRORS);
	assert_int_equal(e->method, DIFF_ZTEST);
	assert_true(e->significant);
	assert_true(fabs(e->delta - 5.9) < 1e-9);
	struct diff_rule rules[4];
	size_t n;
	char err[256];
	assert_int_equal(diff_rules_parse("errors>+0.1pp", rules, 4, &n, err, sizeof err), 0);
	assert_true(diff_rule_fires(&rules[0], &d));
	assert_int_equal(diff_rules_parse("errors>+10pp", rules, 4, &n, err, sizeof err), 0);
	assert_false(diff_rule_fires(&rules[0], &d));
	result_free(&a);
	result_free(&b);
}

static void test_not_comparable_names_the_field(void **state)
{
	(void)state;
	struct loaded_result a, b;
	static struct diff_result d;
	load(run_scaled(1, "aaaa"), &a);
	load(run_scaled(1, "bbbb"), &b);
	diff_results(&a, &b, 0.05, &d);
	assert_false(d.comparable);
	assert_string_equal(d.field, "table hash");
	assert_string_equal(d.old_s, "aaaa");
	assert_string_equal(d.new_s, "bbbb");
	assert_true(d.n_rows > 0); /* still computed, for --force */
	result_free(&b);

	json_t *j = run_scaled(1, "aaaa");
	json_object_set_new(json_object_get(j, "environment"), "cores", json_integer(8));
	load(j, &b);
	diff_results(&a, &b, 0.05, &d);
	assert_false(d.comparable);
	assert_string_equal(d.field, "environment.cores");
	result_free(&b);

	j = run_scaled(1, "aaaa");
	json_object_set_new(json_object_get(j, "plan"), "rate_per_s", json_real(1000));
	load(j, &b);
	diff_results(&a, &b, 0.05, &d);
	assert_false(d.comparable);
	assert_string_equal(d.field, "plan.rate_per_s");
	result_free(&b);

	j = run_scaled(1, "aaaa");
	json_object_set_new(json_object_get(j, "pacer"), "version", json_string("1.0.0"));
	load(j, &b);
	diff_results(&a, &b, 0.05, &d);
	assert_false(d.comparable);
	assert_string_equal(d.field, "pacer major version");
	result_free(&b);

	/* another protocol over the same table: another benchmark; a result
	 * without plan.http (older) spoke HTTP/1.1 */
	j = run_scaled(1, "aaaa");
	json_object_set_new(json_object_get(j, "plan"), "http", json_string("h3"));
	load(j, &b);
	diff_results(&a, &b, 0.05, &d);
	assert_false(d.comparable);
	assert_string_equal(d.field, "plan.http");
	assert_string_equal(d.old_s, "1.1");
	assert_string_equal(d.new_s, "h3");
	result_free(&b);
	j = run_scaled(1, "aaaa");
	json_object_set_new(json_object_get(j, "plan"), "http", json_string("1.1"));
	load(j, &b);
	diff_results(&a, &b, 0.05, &d);
	assert_true(d.comparable);
	result_free(&b);

	/* another target, same requests: comparable (a new build of the target) */
	j = run_scaled(1, "aaaa");
	json_object_set_new(json_object_get(j, "plan"), "url", json_string("http://other/x"));
	load(j, &b);
	diff_results(&a, &b, 0.05, &d);
	assert_true(d.comparable);
	result_free(&b);

	load(fx_ramp(), &b);
	diff_results(&a, &b, 0.05, &d);
	assert_false(d.comparable);
	assert_string_equal(d.field, "kind");
	result_free(&b);

	/* two ramps of another SLO: another capacity */
	struct loaded_result ra, rb;
	load(fx_ramp(), &ra);
	j = fx_ramp();
	json_object_set_new(json_object_get(j, "plan"), "slo", json_string("p99<20ms"));
	load(j, &rb);
	diff_results(&ra, &rb, 0.05, &d);
	assert_false(d.comparable);
	assert_string_equal(d.field, "plan.slo");
	result_free(&rb);
	j = fx_ramp();
	json_array_append_new(json_object_get(json_object_get(j, "plan"), "steps_per_s"),
			      json_real(2000));
	load(j, &rb);
	diff_results(&ra, &rb, 0.05, &d);
	assert_false(d.comparable);
	assert_string_equal(d.field, "plan.steps_per_s");
	result_free(&rb);
	result_free(&ra);
	result_free(&a);
}

/* The workload hash (what was sent, not where) decides when both results
 * have it; a result from before it falls back to the table hash; and
 * diff_comparable is diff_results' rule alone. */
static void test_workload_hash_decides(void **state)
{
	(void)state;
	struct loaded_result a, b;
	static struct diff_result d;
	json_t *ja = run_scaled(1, "aaaa"), *jb = run_scaled(1, "bbbb");
	json_object_set_new(json_object_get(json_object_get(ja, "plan"), "workload"),
			    "workload_sha256", json_string("1111"));
	json_object_set_new(json_object_get(json_object_get(jb, "plan"), "workload"),
			    "workload_sha256", json_string("1111"));
	load(ja, &a);
	load(jb, &b);
	diff_results(&a, &b, 0.05, &d); /* two ports: other bytes, one workload */
	assert_true(d.comparable);
	diff_comparable(&a, &b, &d);
	assert_true(d.comparable);
	assert_int_equal(d.n_rows, 0);
	result_free(&b);

	jb = run_scaled(1, "aaaa"); /* the same bytes, but another workload hash */
	json_object_set_new(json_object_get(json_object_get(jb, "plan"), "workload"),
			    "workload_sha256", json_string("2222"));
	load(jb, &b);
	diff_comparable(&a, &b, &d);
	assert_false(d.comparable);
	assert_string_equal(d.field, "workload hash");
	result_free(&b);

	load(run_scaled(1, "bbbb"), &b); /* older: no workload hash, the table hash decides */
	diff_comparable(&a, &b, &d);
	assert_false(d.comparable);
	assert_string_equal(d.field, "table hash");
	result_free(&b);
	load(run_scaled(1, "aaaa"), &b);
	diff_comparable(&a, &b, &d);
	assert_true(d.comparable);
	result_free(&b);

	jb = run_scaled(1, "bbbb"); /* a rate change: diff's and the trend's one rule */
	json_object_set_new(json_object_get(json_object_get(jb, "plan"), "workload"),
			    "workload_sha256", json_string("1111"));
	json_object_set_new(json_object_get(jb, "plan"), "rate_per_s", json_real(1000));
	load(jb, &b);
	diff_comparable(&a, &b, &d);
	assert_false(d.comparable);
	assert_string_equal(d.field, "plan.rate_per_s");
	result_free(&b);
	result_free(&a);
}

static void test_rules_parse_and_fire(void **state)
{
	(void)state;
	struct diff_rule r[DIFF_MAX_RULES];
	size_t n;
	char err[256];
	assert_int_equal(diff_rules_parse("p99>+10%, capacity<-5%,errors>+0.1pp", r, DIFF_MAX_RULES,
					  &n, err, sizeof err),
			 0);
	assert_int_equal(n, 3);
	assert_int_equal(r[0].m, HM_P99);
	assert_int_equal(r[0].op, '>');
	assert_true(fabs(r[0].threshold - 0.10) < 1e-12);
	assert_int_equal(r[1].m, HM_CAPACITY);
	assert_true(fabs(r[1].threshold + 0.05) < 1e-12);
	assert_true(r[2].pp);
	static const char *const bad[] = {"", "p99", "p98>+10%", "p99>+10", "p99>+10pp",
					  "errors>+1%", "p99>x%", "p99>+10%,,p50>+1%"};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		err[0] = '\0';
		assert_int_equal(diff_rules_parse(bad[i], r, DIFF_MAX_RULES, &n, err, sizeof err),
				 PACER_EPARSE);
		assert_true(err[0] != '\0');
		assert_null(strchr(err, '\n'));
	}
	/* p50 1.5x: fires past +10 %, not past +60 %; a fall rule does not */
	struct loaded_result a, b;
	load(run_scaled(1, "abc"), &a);
	load(run_scaled(1.5, "abc"), &b);
	static struct diff_result d;
	diff_results(&a, &b, 0.05, &d);
	assert_int_equal(diff_rules_parse("p50>+10%", r, DIFF_MAX_RULES, &n, err, sizeof err), 0);
	assert_true(diff_rule_fires(&r[0], &d));
	assert_int_equal(diff_rules_parse("p50>+60%", r, DIFF_MAX_RULES, &n, err, sizeof err), 0);
	assert_false(diff_rule_fires(&r[0], &d));
	assert_int_equal(diff_rules_parse("p50<-10%", r, DIFF_MAX_RULES, &n, err, sizeof err), 0);
	assert_false(diff_rule_fires(&r[0], &d));
	/* the other way round: an improvement, which a fall rule sees */
	diff_results(&b, &a, 0.05, &d);
	assert_true(diff_rule_fires(&r[0], &d));
	/* capacity is absent from runs: never fires */
	assert_int_equal(diff_rules_parse("capacity<-5%", r, DIFF_MAX_RULES, &n, err, sizeof err), 0);
	assert_false(diff_rule_fires(&r[0], &d));
	result_free(&a);
	result_free(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_headline_of_each_kind),
		cmocka_unit_test(test_slower_run_is_significant_same_is_not),
		cmocka_unit_test(test_repetitions_use_the_bootstrap),
		cmocka_unit_test(test_errors_two_proportions),
		cmocka_unit_test(test_sessions_and_steps),
		cmocka_unit_test(test_not_comparable_names_the_field),
		cmocka_unit_test(test_workload_hash_decides),
		cmocka_unit_test(test_rules_parse_and_fire),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
