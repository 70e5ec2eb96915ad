/* The engine (src/engine/engine.c) against the embedded target server
 * started in-process on a loopback port: exact counts of closed-loop and
 * open-loop steps (checked against the server's own request count),
 * timeouts, drops at a small backlog cap, reconnects after the server
 * closes, and the ok / failed split of a status mix. Every phase is
 * checked against the accounting identities of target_fixture.h.
 *
 * Timing is asserted only as bounds the server cannot beat: a plan's fixed
 * latency is a floor under every response, so "at most so many responses
 * in so long on one connection" holds however slow the machine is. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "plan/inspect.h"
#include "target_fixture.h"

/* What a test holds, released by the teardown even when an assertion
 * failed half-way. */
struct fx {
	struct fx_target t;
	struct engine *e;
	struct run_result res[2];
};

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof *f);
	if (!f)
		return -1;
	*state = f;
	alarm(180); /* a hang kills the binary instead of blocking the suite */
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	engine_close(f->e);
	for (int i = 0; i < 2; i++)
		run_result_free(&f->res[i]);
	fx_stop(&f->t);
	free(f);
	alarm(0);
	return 0;
}

static const char fast_plan[] = "routes:\n"
				"  - path: /\n"
				"    prefix: true\n"
				"    body: \"ok\\n\"\n";

/* Closed loop with a request count: exactly N sent and completed (N not a
 * multiple of the threads, so the split's remainder counts), exactly N seen
 * by the server, on exactly `concurrency` connections; a second step on the
 * same session reuses them. */
static void test_closed_loop_exact_count(void **state)
{
	struct fx *f = *state;
	const uint64_t n = 501;
	const uint32_t conc = 4;
	fx_start(&f->t, fast_plan, 2, "/");
	struct engine_cfg c = fx_cfg(&f->t, false, conc, 2);
	assert_int_equal(engine_open(&f->e, &c), 0);
	struct engine_step s = {.requests = n, .drain_ns = NS_PER_S};
	fx_step(f->e, &s, &f->res[0]);
	const struct phase_stats *m = &f->res[0].measure;
	fx_check_accounting(m);
	assert_false(f->res[0].interrupted);
	assert_false(f->res[0].open_loop);
	assert_int_equal(m->scheduled, n);
	assert_int_equal(m->sent, n);
	assert_int_equal(m->completed, n);
	assert_int_equal(m->success_ok, n);
	assert_int_equal(m->status[200], n);
	assert_int_equal(phase_stats_errors(m), 0);
	assert_int_equal(phase_stats_transport_errors(m), 0);
	assert_int_equal(m->in_flight_at_end + m->queued_at_end + m->dropped, 0);
	assert_int_equal(m->conns_opened, conc);
	assert_int_equal(m->closed_by_server, 0);
	assert_int_equal(f->res[0].warmup.sent, 0);
	struct target_stats st = fx_stats(&f->t);
	assert_int_equal(st.requests, n);
	assert_int_equal(st.connections, conc);
	assert_int_equal(m->bytes_out, n * f->t.req.len);

	/* the next step: the same connections, the same exact count */
	fx_step(f->e, &s, &f->res[1]);
	m = &f->res[1].measure;
	fx_check_accounting(m);
	assert_int_equal(m->sent, n);
	assert_int_equal(m->completed, n);
	assert_int_equal(m->conns_opened, 0);
	st = fx_stats(&f->t);
	assert_int_equal(st.requests, 2 * n);
	assert_int_equal(st.connections, conc);
}

/* Closed loop with a count and a duration cap (--requests with
 * --duration): the duration ends it long before the count. With 20 ms per
 * response on each of 2 connections, at most 2 x (1 + 200/20) requests fit
 * in the 200 ms (plus one per connection as it ends); all of them are
 * answered in the drain. */
static void test_closed_loop_duration_caps_count(void **state)
{
	struct fx *f = *state;
	fx_start(&f->t,
		 "routes:\n"
		 "  - path: /\n"
		 "    prefix: true\n"
		 "    latency: 20ms\n",
		 1, "/");
	struct engine_cfg c = fx_cfg(&f->t, false, 2, 1);
	assert_int_equal(engine_open(&f->e, &c), 0);
	struct engine_step s = {.requests = 1000000,
				.duration_limits = true,
				.duration_ns = 200 * NS_PER_MS,
				.drain_ns = 2 * NS_PER_S};
	fx_step(f->e, &s, &f->res[0]);
	const struct phase_stats *m = &f->res[0].measure;
	fx_check_accounting(m);
	assert_true(m->sent >= 2 && m->sent <= 24);
	assert_int_equal(m->scheduled, m->sent);
	assert_int_equal(m->completed, m->sent);
	assert_int_equal(m->in_flight_at_end, 0);
	assert_int_equal(fx_stats(&f->t).requests, m->completed);
	assert_true(f->res[0].measure_ns >= s.duration_ns);
	assert_false(f->res[0].interrupted);
}

/* Open loop at a constant rate: rate x duration due in each phase (a
 * warm-up then the measured phase, over two threads whose schedules
 * interleave), every one sent and answered, the server seeing all of them. */
static void test_open_loop_schedules_rate_times_duration(void **state)
{
	struct fx *f = *state;
	fx_start(&f->t, fast_plan, 2, "/");
	struct engine_cfg c = fx_cfg(&f->t, true, 8, 2);
	assert_int_equal(engine_open(&f->e, &c), 0);
	const double rate = 1000;
	struct engine_step s = {.rate_per_s = rate,
				.warmup_ns = 200 * NS_PER_MS,
				.duration_ns = 500 * NS_PER_MS,
				.drain_ns = 5 * NS_PER_S};
	fx_step(f->e, &s, &f->res[0]);
	const struct run_result *r = &f->res[0];
	fx_check_accounting(&r->warmup);
	fx_check_accounting(&r->measure);
	assert_true(r->open_loop);
	assert_true(r->offered_rate_per_s == rate);
	const struct phase_stats *w = &r->warmup, *m = &r->measure;
	uint64_t want_w = (uint64_t)(rate * 0.2), want_m = (uint64_t)(rate * 0.5);
	if (w->scheduled + 1 < want_w || w->scheduled > want_w + 1)
		fail_msg("warm-up scheduled %llu, want %llu +- 1", (unsigned long long)w->scheduled,
			 (unsigned long long)want_w);
	if (m->scheduled + 1 < want_m || m->scheduled > want_m + 1)
		fail_msg("measure scheduled %llu, want %llu +- 1", (unsigned long long)m->scheduled,
			 (unsigned long long)want_m);
	for (int k = 0; k < 2; k++) {
		const struct phase_stats *p = k ? m : w;
		assert_int_equal(p->sent, p->scheduled);
		assert_int_equal(p->completed, p->sent);
		assert_int_equal(p->dropped + p->queued_at_end + p->in_flight_at_end, 0);
		assert_int_equal(phase_stats_errors(p), 0);
		assert_int_equal(fx_count(p, TIM_SEND_LAG), p->sent);
		assert_int_equal(fx_count(p, TIM_LOOP_LAG), p->scheduled);
	}
	assert_int_equal(fx_stats(&f->t).requests, w->completed + m->completed);
	/* the measured phase lasts at least its planned window */
	assert_true(r->measure_ns >= s.duration_ns);
	uint64_t in_series = 0;
	for (size_t i = 0; i < r->series_len; i++)
		in_series += r->series[i].completed;
	assert_int_equal(in_series, m->completed);
}

/* A response slower than --timeout: every request is a timeout error, with
 * its latency recorded at the time waited (at least the timeout, since it
 * was sent at or after its scheduled time), and its connection replaced. */
static void test_timeouts_counted_with_latency(void **state)
{
	struct fx *f = *state;
	const uint64_t timeout = 60 * NS_PER_MS;
	fx_start(&f->t,
		 "routes:\n"
		 "  - path: /\n"
		 "    prefix: true\n"
		 "    latency: 400ms\n",
		 1, "/");
	struct engine_cfg c = fx_cfg(&f->t, false, 2, 1);
	c.timeout_ns = timeout;
	assert_int_equal(engine_open(&f->e, &c), 0);
	struct engine_step s = {.requests = 4, .drain_ns = NS_PER_S};
	fx_step(f->e, &s, &f->res[0]);
	const struct phase_stats *m = &f->res[0].measure;
	fx_check_accounting(m);
	assert_int_equal(m->sent, 4);
	assert_int_equal(m->completed, 0);
	assert_int_equal(m->errors[ERRK_TIMEOUT], 4);
	assert_int_equal(phase_stats_transport_errors(m), 4);
	assert_int_equal(phase_stats_errors(m), 4);
	assert_int_equal(m->success_ok, 0);
	assert_int_equal(fx_count(m, TIM_LATENCY), 4);
	assert_int_equal(fx_count(m, TIM_LATENCY_FAILED), 4);
	assert_int_equal(fx_count(m, TIM_LATENCY_OK), 0);
	assert_true(m->timing[TIM_LATENCY].min >= timeout);
	assert_true(m->timing[TIM_LATENCY].max < 30 * NS_PER_S);
	/* two connections timed out in each round: two opened again */
	assert_int_equal(m->conns_opened, 4);
	assert_int_equal(m->in_flight_at_end, 0);
}

static const char close_after_plan[] = "routes:\n"
				       "  - path: /\n"
				       "    prefix: true\n"
				       "    body: \"ok\\n\"\n"
				       "    misbehave: {close_after: 5}\n";

/* What a close_after 5 run satisfies whatever raced: each connection the
 * server closed carried exactly 5 responses; a close the engine saw only
 * when its next request met it is an errors.closed (the request was sent,
 * never answered); nothing else failed. */
static void check_close_after(const struct fx *f, const struct phase_stats *m, uint64_t max_conns)
{
	const uint64_t k = 5;
	fx_check_accounting(m);
	assert_int_equal(phase_stats_transport_errors(m), m->errors[ERRK_CLOSED]);
	assert_int_equal(m->completed + m->errors[ERRK_CLOSED], m->sent);
	assert_int_equal(m->success_ok, m->completed);
	uint64_t closes = m->closed_by_server + m->errors[ERRK_CLOSED];
	assert_true(m->conns_opened > 1);
	assert_true(closes >= 1);
	assert_true(k * closes <= m->completed);
	assert_true(m->completed <= k * m->conns_opened);
	/* the server answered exactly what the engine received, and closed
	 * every connection it saw close (and perhaps some of those still
	 * open at the end, before the engine read their close) */
	struct target_stats st = fx_stats(&f->t);
	assert_int_equal(st.requests, m->completed);
	assert_true(st.misbehaved >= closes);
	assert_true(st.misbehaved <= closes + max_conns);
}

/* Closed loop with a count: the server closes every connection after 5
 * responses; the engine opens new ones and still sends exactly N. */
static void test_close_after_closed_loop_reconnects(void **state)
{
	struct fx *f = *state;
	const uint64_t n = 200;
	fx_start(&f->t, close_after_plan, 1, "/");
	struct engine_cfg c = fx_cfg(&f->t, false, 2, 1);
	assert_int_equal(engine_open(&f->e, &c), 0);
	struct engine_step s = {.requests = n, .drain_ns = NS_PER_S};
	fx_step(f->e, &s, &f->res[0]);
	const struct phase_stats *m = &f->res[0].measure;
	check_close_after(f, m, 2);
	assert_int_equal(m->scheduled, n);
	assert_int_equal(m->sent, n);
	assert_int_equal(m->in_flight_at_end, 0);
}

/* Open loop, 5 ms between requests: the server's close arrives long before
 * the next request is due, so the engine sees an idle connection closed
 * (closed_by_server, not an error) and loses nothing: every request due is
 * sent and answered. Only when a thread is descheduled at the wrong moment
 * (the server's between its last answer and its close, or the engine's past
 * a due time) can a request meet a closing connection; it is then an
 * errors.closed, accounted, and a busy machine makes a few of them, so
 * the test asks that most closes (at least half) were seen idle. */
static void test_close_after_open_loop_loses_nothing(void **state)
{
	struct fx *f = *state;
	fx_start(&f->t, close_after_plan, 1, "/");
	struct engine_cfg c = fx_cfg(&f->t, true, 2, 1);
	assert_int_equal(engine_open(&f->e, &c), 0);
	struct engine_step s = {.rate_per_s = 200,
				.duration_ns = 500 * NS_PER_MS,
				.drain_ns = 2 * NS_PER_S};
	fx_step(f->e, &s, &f->res[0]);
	const struct phase_stats *m = &f->res[0].measure;
	check_close_after(f, m, 2);
	assert_true(m->scheduled >= 99 && m->scheduled <= 101);
	assert_int_equal(m->sent, m->scheduled);
	assert_int_equal(m->dropped + m->queued_at_end + m->in_flight_at_end, 0);
	assert_true(2 * m->closed_by_server >= m->closed_by_server + m->errors[ERRK_CLOSED]);
	assert_true(m->conns_opened >= m->completed / 5);
}

/* Open loop far above what one slow connection serves, with a backlog of
 * 8: what cannot wait is dropped, the backlog never holds more than its
 * cap, and every request due is sent, left queued or dropped. */
static void test_drops_at_backlog_cap(void **state)
{
	struct fx *f = *state;
	const size_t cap = 8;
	fx_start(&f->t,
		 "routes:\n"
		 "  - path: /\n"
		 "    prefix: true\n"
		 "    latency: 20ms\n",
		 1, "/");
	struct engine_cfg c = fx_cfg(&f->t, true, 1, 1);
	c.queue_cap = cap;
	assert_int_equal(engine_open(&f->e, &c), 0);
	struct engine_step s = {.rate_per_s = 2000, .duration_ns = 300 * NS_PER_MS};
	fx_step(f->e, &s, &f->res[0]);
	const struct phase_stats *m = &f->res[0].measure;
	fx_check_accounting(m);
	assert_true(m->scheduled >= 599 && m->scheduled <= 601);
	assert_int_equal(m->scheduled, m->sent + m->queued_at_end + m->dropped);
	assert_true(m->queued_at_end <= cap);
	/* one connection, >= 20 ms per response: at most 1 + 300/20 sent in the
	 * window, and one more as it ends */
	assert_true(m->sent >= 1 && m->sent <= 17);
	assert_true(m->dropped >= m->scheduled - 17 - cap);
	assert_true(m->in_flight_at_end <= 1);
	assert_int_equal(phase_stats_request_errors(m), 0);
	assert_int_equal(m->conns_opened, 1);
}

/* A 50/50 mix of 200 and 503: by the default success rule (200..399) the
 * 503s are failed responses, counted as errors, with their latency in the
 * failed histogram and the 200s' in the ok one. */
static void test_status_mix_ok_failed_split(void **state)
{
	struct fx *f = *state;
	const uint64_t n = 400;
	fx_start(&f->t,
		 "seed: 5\n"
		 "routes:\n"
		 "  - path: /\n"
		 "    prefix: true\n"
		 "    status: {200: 0.5, 503: 0.5}\n"
		 "    body: \"ok\\n\"\n",
		 2, "/");
	struct engine_cfg c = fx_cfg(&f->t, false, 4, 2);
	assert_int_equal(engine_open(&f->e, &c), 0);
	struct engine_step s = {.requests = n, .drain_ns = NS_PER_S};
	fx_step(f->e, &s, &f->res[0]);
	const struct phase_stats *m = &f->res[0].measure;
	fx_check_accounting(m);
	assert_int_equal(m->completed, n);
	assert_int_equal(m->status[200] + m->status[503], n);
	/* P(fewer than 100 of either in 400 fair draws) < 1e-22 */
	assert_true(m->status[200] >= 100 && m->status[503] >= 100);
	assert_int_equal(m->success_ok, m->status[200]);
	assert_int_equal(m->status_failed[200], 0);
	assert_int_equal(m->status_failed[503], m->status[503]);
	assert_int_equal(phase_stats_failed_responses(m), m->status[503]);
	assert_int_equal(phase_stats_errors(m), m->status[503]);
	assert_int_equal(phase_stats_transport_errors(m), 0);
	assert_int_equal(fx_count(m, TIM_LATENCY_OK), m->status[200]);
	assert_int_equal(fx_count(m, TIM_LATENCY_FAILED), m->status[503]);
	assert_int_equal(fx_count(m, TIM_LATENCY_OK) + fx_count(m, TIM_LATENCY_FAILED),
			 fx_count(m, TIM_LATENCY));
	uint64_t in_series = 0, err_series = 0;
	for (size_t i = 0; i < f->res[0].series_len; i++) {
		in_series += f->res[0].series[i].completed;
		err_series += f->res[0].series[i].errors;
	}
	assert_int_equal(in_series, n);
	assert_int_equal(err_series, m->status[503]);
	assert_int_equal(m->host[0].completed, n);
	assert_int_equal(m->host[0].errors, m->status[503]);
}

/* Rules with a regex, evaluated by two threads: each worker compiles its own
 * copy (a shared regex_t serialises glibc's regexec), and the counts are
 * those of one evaluation per response: a --success rule on the body and an
 * outcome on the status. */
static void test_rules_per_worker(void **state)
{
	struct fx *f = *state;
	const uint64_t n = 400;
	fx_start(&f->t,
		 "seed: 5\n"
		 "routes:\n"
		 "  - path: /\n"
		 "    prefix: true\n"
		 "    status: {200: 0.5, 503: 0.5}\n"
		 "    body: \"ok\\n\"\n",
		 2, "/");
	struct inspect in;
	inspect_init(&in);
	char err[256];
	assert_int_equal(inspect_set_success(&in, "body matches \"^o+k\"", err, sizeof err), 0);
	assert_int_equal(inspect_add_outcome(&in, "unavailable=status == 503", err, sizeof err), 0);
	inspect_finish(&in);
	struct engine_cfg c = fx_cfg(&f->t, false, 4, 2);
	c.inspect = &in;
	assert_int_equal(engine_open(&f->e, &c), 0);
	struct engine_step s = {.requests = n, .drain_ns = NS_PER_S};
	fx_step(f->e, &s, &f->res[0]);
	const struct phase_stats *m = &f->res[0].measure;
	fx_check_accounting(m);
	assert_int_equal(m->completed, n);
	/* the plan's 200s carry its body "ok\n"; its 503s the server's own */
	assert_int_equal(m->success_ok, m->status[200]);
	assert_int_equal(m->outcome[0], m->status[503]);
	assert_true(m->status[503] >= 100 && m->status[503] <= 300);
	engine_close(f->e);
	f->e = NULL;
	inspect_free(&in);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_rules_per_worker, setup, teardown),
		cmocka_unit_test_setup_teardown(test_closed_loop_exact_count, setup, teardown),
		cmocka_unit_test_setup_teardown(test_closed_loop_duration_caps_count, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_open_loop_schedules_rate_times_duration, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_timeouts_counted_with_latency, setup, teardown),
		cmocka_unit_test_setup_teardown(test_close_after_closed_loop_reconnects, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_close_after_open_loop_loses_nothing, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_drops_at_backlog_cap, setup, teardown),
		cmocka_unit_test_setup_teardown(test_status_mix_ok_failed_split, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
