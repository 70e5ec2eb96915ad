/* The run's warnings name a cause from the evidence (issue 19 item 7): when
 * requests waited to be sent because connection attempts failed, the warning
 * says so, and does not blame --connections. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "plan/plan.h"
#include "report/report.h"
#include "result/result.h"

/* The warning that mentions send lag, or NULL. */
static const char *lag_warning(const struct report_warnings *w)
{
	for (size_t i = 0; i < w->n; i++)
		if (strstr(w->msg[i], "send-lag"))
			return w->msg[i];
	return NULL;
}

static void warnings_of(uint64_t connect_errors, struct report_warnings *w)
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
	struct phase_stats *m = &r.measure;
	m->scheduled = m->sent = m->completed = m->success_ok = 200;
	m->status[200] = 200;
	m->errors[ERRK_CONNECT] = connect_errors;
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
	phase_stats_free(&r.warmup);
	phase_stats_free(&r.measure);
}

static void test_refused_connections_named(void **state)
{
	(void)state;
	struct report_warnings w;
	warnings_of(11, &w);
	const char *lag = lag_warning(&w);
	assert_non_null(lag);
	assert_non_null(strstr(lag, "11 connection attempts to the target failed"));
	assert_null(strstr(lag, "--connections"));
	/* without failed attempts, busy connections are the evidence */
	warnings_of(0, &w);
	lag = lag_warning(&w);
	assert_non_null(lag);
	assert_non_null(strstr(lag, "--connections is too low"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_refused_connections_named),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
