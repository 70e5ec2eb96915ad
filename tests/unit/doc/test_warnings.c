/* The run's warnings name a cause from the evidence (issue 19 item 7): when
 * requests waited to be sent because connection attempts failed, the warning
 * says so, and does not blame --connections. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "plan/plan.h"
#include "doc/ramp.h"
#include "doc/doc.h"
#include "result/result.h"

/* The warning that mentions send lag, or NULL. */
static const char *lag_warning(const struct report_warnings *w)
{
	for (size_t i = 0; i < w->n; i++)
		if (strstr(w->msg[i], "send-lag"))
			return w->msg[i];
	return NULL;
}

/* The warnings of an open-loop run whose requests waited 50 ms to be sent,
 * with connect_errors failed connects, all refused when `refused`, else of
 * no recorded cause; with a series of 2 s, the connects failing in second 1;
 * the hypervisor's steal time steal_pct of 2 CPUs of a machine's 4 (NAN:
 * not known). */
static void warnings_of(uint64_t connect_errors, bool refused, double steal_pct,
			struct report_warnings *w)
{
	struct run_plan plan;
	memset(&plan, 0, sizeof plan);
	plan.open_loop = true;
	plan.duration_ns = 2000000000ull;
	plan.rate_per_s = 100;
	struct run_result r;
	memset(&r, 0, sizeof r);
	assert_int_equal(phase_stats_init(&r.warmup), 0);
	assert_int_equal(phase_stats_init(&r.measure), 0);
	r.open_loop = true;
	r.offered_rate_per_s = 100;
	r.measure_ns = 2000000000ull;
	r.threads = 1;
	if (!isnan(steal_pct)) {
		r.gen_steal_known = true;
		r.gen_steal.gen_span_ns = 2 * 6000000000ull;
		r.gen_steal.gen_ns = (uint64_t)(steal_pct / 100 * (double)r.gen_steal.gen_span_ns);
		r.gen_steal.all_span_ns = 4 * 6000000000ull;
		r.gen_steal.all_ns = r.gen_steal.gen_ns; /* none on the other two */
	}
	struct phase_stats *m = &r.measure;
	m->scheduled = m->sent = m->completed = m->success_ok = 200;
	m->status[200] = 200;
	m->errors[ERRK_CONNECT] = connect_errors;
	if (refused)
		m->connect_fail[CONNF_REFUSED] = connect_errors;
	struct series_point pts[2];
	memset(pts, 0, sizeof pts);
	pts[0].completed = 200;
	pts[1].connect_fail[CONNF_REFUSED] = m->connect_fail[CONNF_REFUSED];
	pts[1].unsent = 100;
	r.series = pts;
	r.series_len = 2;
	for (int i = 0; i < 200; i++) {
		hist_record(&m->timing[TIM_SEND_LAG], 50000000ull); /* 50 ms waits */
		hist_record(&m->timing[TIM_LATENCY], 51000000ull);
		hist_record(&m->timing[TIM_SERVICE], 1000000ull);
	}
	struct report_ctx c;
	memset(&c, 0, sizeof c);
	c.plan = &plan;
	c.res = &r;
	c.mode = "live";
	c.target_cores = 4;
	c.target_cores_basis = "machine";
	report_warnings(&c, w);
	r.series = NULL;
	phase_stats_free(&r.warmup);
	phase_stats_free(&r.measure);
}

static void test_refused_connections_named(void **state)
{
	(void)state;
	struct report_warnings w;
	warnings_of(11, true, NAN, &w);
	const char *lag = lag_warning(&w);
	assert_non_null(lag);
	assert_non_null(strstr(lag, "the target refused connections: 11 connects refused"));
	assert_non_null(strstr(lag, "in second 1 of the measured phase, in which 0 responses"));
	assert_non_null(strstr(lag, "up to 100 unsent"));
	assert_null(strstr(lag, "--connections"));
	/* said once: no second warning of the same failures */
	for (size_t i = 0; i < w.n; i++)
		assert_true(w.msg[i] == lag || !strstr(w.msg[i], "refused"));
	/* failures without a recorded cause are still not too few connections */
	warnings_of(11, false, NAN, &w);
	lag = lag_warning(&w);
	assert_non_null(lag);
	assert_non_null(strstr(lag, "connects to the target failed: 11"));
	assert_null(strstr(lag, "--connections"));
	/* without failed attempts, busy connections are the evidence */
	warnings_of(0, false, NAN, &w);
	lag = lag_warning(&w);
	assert_non_null(lag);
	assert_non_null(strstr(lag, "--connections is too low"));
}

/* The warning that mentions the hypervisor, or NULL. */
static const char *steal_warning(const struct report_warnings *w)
{
	for (size_t i = 0; i < w->n; i++)
		if (strstr(w->msg[i], "hypervisor"))
			return w->msg[i];
	return NULL;
}

/* The hypervisor's steal time is a warning from 1 % of the generator's
 * CPUs, with the machine's figure beside it; under that, or not known,
 * none. */
static void test_steal_warned(void **state)
{
	(void)state;
	struct report_warnings w;
	warnings_of(0, false, 12.0, &w);
	const char *s = steal_warning(&w);
	assert_non_null(s);
	assert_non_null(strstr(s, "the hypervisor took 12.00% of the generator's CPUs (the "
				  "machine's: 6.00%) during the load (steal time)"));
	assert_non_null(strstr(s, "quieter machine"));
	warnings_of(0, false, 1.0, &w);
	assert_non_null(steal_warning(&w));
	warnings_of(0, false, 0.9, &w);
	assert_null(steal_warning(&w));
	warnings_of(0, false, 0.996, &w); /* written 1.00 %: said */
	assert_non_null(steal_warning(&w));
	warnings_of(0, false, 0, &w);
	assert_null(steal_warning(&w));
	warnings_of(0, false, NAN, &w);
	assert_null(steal_warning(&w));
	char out[64];
	struct run_result r;
	memset(&r, 0, sizeof r);
	assert_false(report_steal_words(out, sizeof out, &r));
	assert_string_equal(out, "");
}

/* A ramp says in one warning which steps the hypervisor's steal was worth
 * saying in, with the worst of them; none when no step's was. */
static void test_ramp_steal_in_one_warning(void **state)
{
	(void)state;
	struct ramp_step steps[4];
	memset(steps, 0, sizeof steps);
	const double pct[4] = {0.2, 12.0, 0.5, 3.0};
	for (int i = 0; i < 4; i++) {
		struct run_result *r = &steps[i].run;
		assert_int_equal(phase_stats_init(&r->warmup), 0);
		assert_int_equal(phase_stats_init(&r->measure), 0);
		r->threads = 1;
		r->measure_ns = 1000000000ull;
		steps[i].offered_per_s = 100.0 * (i + 1);
		r->gen_steal_known = true;
		r->gen_steal.gen_span_ns = r->gen_steal.all_span_ns = 2000000000ull;
		r->gen_steal.gen_ns = r->gen_steal.all_ns = (uint64_t)(pct[i] / 100 * 2e9);
		r->gen_steal.gen_err_ns = r->gen_steal.all_err_ns = 10000000; /* 0.5 % */
	}
	struct ramp_result res = {.steps = steps, .n_steps = 4, .highest_pass = -1, .knee = -1};
	struct ramp_report rr;
	memset(&rr, 0, sizeof rr);
	rr.res = &res;
	struct report_warnings w;
	ramp_warnings(&rr, &w);
	const char *s = steal_warning(&w);
	assert_non_null(s);
	assert_string_equal(s, "steps 2, 4 (of 4): the hypervisor took up to 12.00% of the "
			       "generator's CPUs (steal time): its pauses count in latency as the "
			       "generator's lateness, so a failure there may be the host's, not "
			       "the target's");
	size_t n = 0;
	for (size_t i = 0; i < w.n; i++)
		n += strstr(w.msg[i], "hypervisor") != NULL;
	assert_int_equal(n, 1);
	/* 1.2 % with a tick of 0.5 % off is under 1 %: not said */
	for (int i = 0; i < 4; i++)
		steps[i].run.gen_steal.gen_ns = (uint64_t)(1.2 / 100 * 2e9);
	ramp_warnings(&rr, &w);
	assert_null(steal_warning(&w));
	for (int i = 0; i < 4; i++) {
		phase_stats_free(&steps[i].run.warmup);
		phase_stats_free(&steps[i].run.measure);
	}
}

/* The cause is the most frequent kind of failed connect; the others, TLS
 * failures and the seconds they came in follow. */
static void test_connect_cause(void **state)
{
	(void)state;
	struct phase_stats p;
	assert_int_equal(phase_stats_init(&p), 0);
	char out[REPORT_CAUSE_CAP];
	assert_false(report_connect_cause(out, sizeof out, &p, NULL, 0));
	assert_string_equal(out, "");

	struct series_point pts[6];
	memset(pts, 0, sizeof pts);
	for (int i = 0; i < 6; i++)
		pts[i].completed = i == 2 || i == 3 ? 0 : 200;
	pts[2].connect_fail[CONNF_REFUSED] = 4;
	pts[3].connect_fail[CONNF_REFUSED] = 3;
	pts[3].connect_fail[CONNF_TIMEOUT] = 1;
	p.errors[ERRK_CONNECT] = 8;
	p.connect_fail[CONNF_REFUSED] = 7;
	p.connect_fail[CONNF_TIMEOUT] = 1;
	assert_true(report_connect_cause(out, sizeof out, &p, pts, 6));
	assert_string_equal(out, "the target refused connections: 7 connects refused (nothing "
				 "listened on the port), 1 timed out in seconds 2-3 of the measured "
				 "phase, in which 0 responses completed");

	/* a series that does not hold them all (repetitions pooled): no seconds */
	p.errors[ERRK_CONNECT] = 16;
	p.connect_fail[CONNF_REFUSED] = 15;
	assert_true(report_connect_cause(out, sizeof out, &p, pts, 6));
	assert_string_equal(out, "the target refused connections: 15 connects refused (nothing "
				 "listened on the port), 1 timed out");

	/* timeouts outnumber refusals: the cause is the timeouts */
	p.connect_fail[CONNF_TIMEOUT] = 9;
	p.connect_fail[CONNF_REFUSED] = 1;
	p.errors[ERRK_CONNECT] = 10;
	p.errors[ERRK_TLS] = 2;
	assert_true(report_connect_cause(out, sizeof out, &p, NULL, 0));
	assert_string_equal(out, "connects to the target timed out: 9 connects timed out (no "
				 "answer within --timeout), 1 refused; 2 TLS handshakes failed");

	/* TLS alone */
	memset(p.connect_fail, 0, sizeof p.connect_fail);
	p.errors[ERRK_CONNECT] = 0;
	p.errors[ERRK_TLS] = 1;
	assert_true(report_connect_cause(out, sizeof out, &p, NULL, 0));
	assert_string_equal(out, "TLS handshakes with the target failed: 1 TLS handshake failed");

	/* cut to fit, terminated */
	p.errors[ERRK_CONNECT] = p.connect_fail[CONNF_RESET] = 5;
	char small[16];
	assert_true(report_connect_cause(small, sizeof small, &p, pts, 6));
	assert_int_equal(strlen(small), sizeof small - 1);
	assert_memory_equal(small, "the target rese", sizeof small - 1);
	phase_stats_free(&p);
}

/* errno to cause, as the engine counts failed connects */
static void test_connect_cause_of(void **state)
{
	(void)state;
	assert_int_equal(connect_cause_of(-ECONNREFUSED), CONNF_REFUSED);
	assert_int_equal(connect_cause_of(ECONNREFUSED), CONNF_REFUSED);
	assert_int_equal(connect_cause_of(-ECONNRESET), CONNF_RESET);
	assert_int_equal(connect_cause_of(-ECONNABORTED), CONNF_RESET);
	assert_int_equal(connect_cause_of(ETIMEDOUT), CONNF_TIMEOUT);
	assert_int_equal(connect_cause_of(-EHOSTUNREACH), CONNF_OTHER);
	assert_int_equal(connect_cause_of(0), CONNF_OTHER);
	assert_string_equal(connect_cause_name(CONNF_REFUSED), "refused");
	assert_string_equal(connect_cause_name(CONNF_OTHER), "other");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_refused_connections_named),
		cmocka_unit_test(test_connect_cause),
		cmocka_unit_test(test_steal_warned),
		cmocka_unit_test(test_ramp_steal_in_one_warning),
		cmocka_unit_test(test_connect_cause_of),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
