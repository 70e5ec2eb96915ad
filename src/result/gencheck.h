/* pacer — did the generator, rather than the target, limit a run? Three
 * checks over a finished run's measured phase (pure). Each says how much
 * pacer's own lateness could have moved the figure it is about, and fires
 * only when that is material (docs/cost.md):
 *
 *  loop_lag_p99       open loop: the generator's own lateness (due time →
 *                     picked up by its loop) against the latency at the same
 *                     percentile: p99, and the statistic of every latency
 *                     clause of the SLO. Fires when, at one of them, the
 *                     lateness is over --lag-limit (default 1 ms) and
 *                     material: over GENCHECK_MATERIAL_PCT of the latency
 *                     there, or enough to flip a failing SLO clause to pass.
 *  busiest_thread_cpu a generator thread busy over 90 % of its step; in open
 *                     loop only when that cost something: its lateness was
 *                     material at p99 (no floor), or the rate fell short by
 *                     the generator's fault.
 *  achieved_rate      open loop: achieved under 95 % of the rate of the
 *                     requests due in the planned window (with constant
 *                     arrivals, the offered rate), by the
 *                     generator's fault. The engine measures the time due
 *                     requests waited while every connection was in use
 *                     (cap_wait) and the part of it the loop sat idle waiting
 *                     for responses (less the time its threads waited for a
 *                     CPU, which is not idle): idle most of it, the target held the
 *                     connections (blame "target", no fire); busy or off its
 *                     CPU over GENCHECK_GEN_SHARE_PCT of it, the generator did
 *                     ("generator", fires). With no such wait, the generator
 *                     is blamed when its lateness fired loop_lag_p99 or its
 *                     thread was saturated, else the cause is "unknown".
 *
 * Any check that fires flags the run generator_limited. */
#ifndef PACER_RESULT_GENCHECK_H
#define PACER_RESULT_GENCHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "plan/slo.h"
#include "result/result.h"

#define GENCHECK_LAG_NS 1000000ull /* default --lag-limit: lateness under it is never flagged */
#define GENCHECK_MATERIAL_PCT 5.0  /* lateness over this % of a latency figure is material */
#define GENCHECK_THREAD_PCT 90.0
#define GENCHECK_ACHIEVED_PCT 95.0
#define GENCHECK_GEN_SHARE_PCT 50.0 /* achieved_rate: the generator's share of cap_wait
				     * over which a shortfall is its */
#define GENCHECK_MIN_CAP_WAIT_PCT 1.0 /* cap_wait under this % of the measured thread-time
				       * counts as none */
#define GENCHECK_TARGET_BUSY 0.9    /* of the target's cores: said in the finding */
#define GENCHECK_N 3
#define GENCHECK_TEXT 384

enum gencheck_blame {
	GENCHECK_BLAME_NONE = 0, /* not evaluated, or the rate was reached */
	GENCHECK_BLAME_TARGET,
	GENCHECK_BLAME_GENERATOR,
	GENCHECK_BLAME_UNKNOWN,  /* short, but neither side's waiting explains it */
};

/* Static JSON name of a blame: NULL (none), "target", "generator", "unknown". */
const char *gencheck_blame_name(enum gencheck_blame b);

struct gencheck {
	const char *name;        /* static */
	bool evaluated;          /* false: the inputs were not there (value unused) */
	bool fired;
	double value, threshold;
	const char *unit;        /* static: "us", "pct" */
	/* How much pacer could have moved the figure this check is about, in
	 * percent, and the level over which that is material. loop_lag_p99 and
	 * busiest_thread_cpu (open loop): loop-lag p99 / latency p99;
	 * achieved_rate: the generator's share of cap_wait. NAN: not known. */
	double impact_pct, material_pct;
	char finding[GENCHECK_TEXT]; /* the figures in words, when evaluated */
	char advice[GENCHECK_TEXT];  /* what to do, when fired; why not evaluated, when not */
};

/* One latency clause of the SLO against the lateness at its statistic. */
struct gencheck_slo {
	char clause[SLO_TEXT_MAX]; /* canonical text, "p99<100ms" */
	double loop_lag_us, latency_us, threshold_us;
	double impact_pct;         /* loop_lag_us as a percent of threshold_us */
	bool failed;               /* the latency broke the clause */
	bool flips;                /* failed, and would pass without the lateness */
};

struct gen_verdict {
	bool flagged;
	struct gencheck c[GENCHECK_N]; /* loop_lag_p99, busiest_thread_cpu, achieved_rate */
	/* loop_lag_p99 */
	double latency_p99_us;     /* NAN when not evaluated */
	size_t n_slo;
	struct gencheck_slo slo[SLO_MAX_CLAUSES];
	/* achieved_rate */
	enum gencheck_blame blame;
	double cap_wait_s, cap_wait_idle_s; /* r->measure's, in seconds (NAN: closed loop) */
	double cpu_wait_s;         /* the generator's threads' waits for a CPU in the measured
				    * phase (a share of the step's by duration; NAN: unknown),
				    * taken out of cap_wait_idle_s for the blame */
};

/* Evaluate r (never fails; v is overwritten). lag_threshold_ns 0 means
 * GENCHECK_LAG_NS. target_cores: how many cores the target could use
 * (self-contained: its threads; a local process or cgroup: the machine's
 * cores), used with r->target in the achieved_rate finding; 0: unknown.
 * slo: the SLO the run was judged by (ramp, compare in ramp mode), or NULL;
 * borrowed for the call. */
void gencheck_eval(const struct run_result *r, uint64_t lag_threshold_ns, double target_cores,
		   const struct slo *slo, struct gen_verdict *v);

/* The lateness impact arithmetic, exposed for its tests: 100 * lag / latency,
 * 100 when latency is 0 and lag is not (nothing but lateness was measured),
 * 0 when both are 0. */
double gencheck_impact_pct(double lag, double latency);

#endif
