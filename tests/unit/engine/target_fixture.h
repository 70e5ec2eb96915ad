/* Test fixture shared by the engine and runner unit tests: the embedded
 * target server (src/target) started in-process on 127.0.0.1, port 0, with
 * a plan given as YAML text, and helpers to drive an engine step against it
 * with a bound on the wait (a hang fails the test instead of blocking the
 * suite), and to check the accounting every finished phase must satisfy.
 *
 * Include after <cmocka.h>. Everything is static: one copy per test binary. */
#ifndef PACER_TESTS_UNIT_ENGINE_TARGET_FIXTURE_H
#define PACER_TESTS_UNIT_ENGINE_TARGET_FIXTURE_H

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "engine/engine.h"
#include "net/sock.h"
#include "result/result.h"
#include "target/target.h"
#include "util/clock.h"

/* Longest a single step may take before the test gives up on it: far more
 * than any step here needs, even under valgrind on a busy machine. */
#define FX_STEP_LIMIT_NS (90 * NS_PER_S)

struct fx_target {
	struct target_plan *plan;
	struct target *srv;
	struct net_addr addr; /* where the engine connects */
	char wire[256];       /* "GET <path> HTTP/1.1" request bytes */
	struct engine_req req;
};

/* Start a target serving `yaml` with `threads` server threads, and encode
 * one GET of `path` for it. */
static inline void fx_start(struct fx_target *f, const char *yaml, unsigned threads,
			    const char *path)
{
	char err[512] = "";
	memset(f, 0, sizeof *f);
	if (target_plan_parse(yaml, strlen(yaml), "fixture.yaml", &f->plan, err, sizeof err))
		fail_msg("plan: %s", err);
	struct net_addr listen;
	assert_int_equal(net_resolve("127.0.0.1", 0, &listen, NULL), 0);
	assert_int_equal(target_start(&f->srv, f->plan, &listen, threads), 0);
	assert_true(target_port(f->srv) > 0);
	assert_int_equal(net_resolve("127.0.0.1", (uint16_t)target_port(f->srv), &f->addr, NULL), 0);
	int n = snprintf(f->wire, sizeof f->wire, "GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", path);
	assert_true(n > 0 && (size_t)n < sizeof f->wire);
	f->req = (struct engine_req){.buf = f->wire, .len = (size_t)n};
}

/* Stop the target and free its plan; safe on a zeroed or stopped fixture. */
static inline void fx_stop(struct fx_target *f)
{
	target_stop(f->srv);
	target_plan_free(f->plan);
	f->srv = NULL;
	f->plan = NULL;
}

static inline struct target_stats fx_stats(const struct fx_target *f)
{
	struct target_stats st;
	target_stats(f->srv, &st);
	return st;
}

/* An engine session sending f's one request: closed loop with
 * `concurrency` connections (open_loop false) or open loop with at most
 * `concurrency` connections, over `threads` threads, 5 s timeout. */
static inline struct engine_cfg fx_cfg(const struct fx_target *f, bool open_loop,
				       uint32_t concurrency, uint32_t threads)
{
	struct engine_cfg c = {
		.addr = f->addr,
		.reqs = &f->req,
		.n_reqs = 1,
		.open_loop = open_loop,
		.arrival = SCHED_CONSTANT,
		.seed = 1,
		.connections = concurrency,
		.concurrency = concurrency,
		.threads = threads,
		.timeout_ns = 5 * NS_PER_S,
	};
	return c;
}

/* Wait (polling, 1 ms) until the current step of e is done; false when
 * FX_STEP_LIMIT_NS passed first (the step is then interrupted). */
static inline bool fx_wait_done(struct engine *e)
{
	uint64_t until = clock_now_ns() + FX_STEP_LIMIT_NS;
	while (!engine_done(e)) {
		if (clock_now_ns() > until) {
			engine_interrupt(e);
			return false;
		}
		struct timespec ts = {0, 1000 * 1000};
		nanosleep(&ts, NULL);
	}
	return true;
}

/* Run one step of e to its end and collect it into *res (free with
 * run_result_free). */
static inline void fx_step(struct engine *e, const struct engine_step *s,
			   struct run_result *res)
{
	assert_int_equal(engine_step_start(e, s), 0);
	bool in_time = fx_wait_done(e);
	assert_int_equal(engine_step_finish(e, res), 0);
	if (!in_time)
		fail_msg("step did not end within %llu s",
			 (unsigned long long)(FX_STEP_LIMIT_NS / NS_PER_S));
}

static inline uint64_t fx_count(const struct phase_stats *p, enum timing t)
{
	return p->timing[t].total;
}

/* What every finished phase satisfies, whatever happened in it: each
 * request sent is answered, failed in transport, or still in flight at the
 * end; each response is counted once by status and once as ok or failed,
 * with one latency in the ok or the failed histogram; each request that
 * did not succeed is in phase_stats_errors. interrupted: the phase (or one
 * of the repetitions merged into it) was cut short by an interrupt, whose
 * unanswered requests (in flight, queued) are in the latency and failed
 * histograms too. */
static inline void fx_check_accounting_cut(const struct phase_stats *p, bool interrupted)
{
	char what[256];
	snprintf(what, sizeof what,
		 "scheduled %llu sent %llu completed %llu request errors %llu in flight %llu",
		 (unsigned long long)p->scheduled, (unsigned long long)p->sent,
		 (unsigned long long)p->completed,
		 (unsigned long long)phase_stats_request_errors(p),
		 (unsigned long long)p->in_flight_at_end);
	if (p->sent != p->completed + phase_stats_request_errors(p) + p->in_flight_at_end)
		fail_msg("sent != completed + request errors + in flight: %s", what);
	if (p->scheduled < p->sent)
		fail_msg("more sent than scheduled: %s", what);
	uint64_t by_status = 0, failed_by_status = 0;
	for (int s = STATUS_MIN; s <= STATUS_MAX; s++) {
		by_status += p->status[s];
		failed_by_status += p->status_failed[s];
	}
	assert_int_equal(by_status, p->completed);
	assert_true(p->success_ok <= p->completed);
	assert_int_equal(failed_by_status, p->completed - p->success_ok);
	assert_int_equal(phase_stats_failed_responses(p), p->completed - p->success_ok);
	assert_int_equal(phase_stats_errors(p),
			 phase_stats_request_errors(p) + phase_stats_failed_responses(p));
	/* timeouts are recorded at the time waited, other transport errors not;
	 * an interrupt's unanswered at their wait until then (those left at a
	 * drain's end, which a merged repetition may hold, are not) */
	uint64_t timed = p->completed + p->errors[ERRK_TIMEOUT];
	uint64_t left = interrupted ? p->in_flight_at_end + p->queued_at_end : 0;
	assert_in_range(fx_count(p, TIM_LATENCY), timed, timed + left);
	assert_int_equal(fx_count(p, TIM_LATENCY_OK), p->success_ok);
	assert_int_equal(fx_count(p, TIM_LATENCY_FAILED) + p->success_ok, fx_count(p, TIM_LATENCY));
	assert_int_equal(fx_count(p, TIM_SERVICE), p->completed);
	assert_int_equal(fx_count(p, TIM_TTFB), p->completed);
	assert_int_equal(fx_count(p, TIM_CONNECT), p->conns_opened);
}

/* fx_check_accounting_cut of a phase no interrupt cut short. */
static inline void fx_check_accounting(const struct phase_stats *p)
{
	fx_check_accounting_cut(p, false);
}

#endif
