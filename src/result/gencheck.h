/* pacer — did the generator, rather than the target, limit a run? Three
 * checks over a finished run's measured phase (pure):
 *
 *  loop_lag_p99       open loop: p99 of the generator's own lateness (due
 *                     time → picked up by its loop; the send lag without
 *                     waits for a free connection, which are the target's)
 *                     over the threshold (default 1 ms)
 *  busiest_thread_cpu a generator thread busy over 90 % of its step
 *  achieved_rate      open loop: achieved under 95 % of offered while the
 *                     target's CPU was known and under 90 % of its cores
 *                     (not evaluated when the target's CPU is unknown)
 *
 * Any check that fires flags the run generator_limited. */
#ifndef PACER_RESULT_GENCHECK_H
#define PACER_RESULT_GENCHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "result/result.h"

#define GENCHECK_LAG_NS 1000000ull    /* default loop-lag p99 threshold */
#define GENCHECK_THREAD_PCT 90.0
#define GENCHECK_ACHIEVED_PCT 95.0
#define GENCHECK_TARGET_BUSY 0.9      /* of the target's cores */
#define GENCHECK_N 3

struct gencheck {
	const char *name;        /* static */
	bool evaluated;          /* false: the inputs were not there (value unused) */
	bool fired;
	double value, threshold;
	const char *unit;        /* static: "us", "pct" */
	char advice[240];        /* what to do, when fired; why not evaluated, when not */
};

struct gen_verdict {
	bool flagged;
	struct gencheck c[GENCHECK_N];
};

/* Evaluate r. lag_threshold_ns 0 means GENCHECK_LAG_NS. target_cores: how
 * many cores the target could use (self-contained: its threads; a local
 * process or cgroup: the machine's cores); used with r->target. */
void gencheck_eval(const struct run_result *r, uint64_t lag_threshold_ns, double target_cores,
		   struct gen_verdict *v);

#endif
