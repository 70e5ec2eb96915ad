/* pacer — the SLO verdict (pure): a step's measurements judged against the
 * clauses of an SLO (plan/slo.h), with the reason in words. */
#ifndef PACER_RESULT_VERDICT_H
#define PACER_RESULT_VERDICT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "plan/slo.h"

#define SLO_REASON_MAX 256 /* verdict reason incl. NUL */

/* Latency figures of one set of requests, from scheduled time. When known,
 * count responses were measured: with none, every latency clause fails
 * ("no response measured") instead of comparing zeros. (known false: the
 * caller does not say.) */
struct slo_latency {
	uint64_t p50_ns, p90_ns, p99_ns, p99_9_ns, p99_99_ns, max_ns;
	double mean_ns;
	bool known;
	uint64_t count;
};

/* What one step measured. Latency figures are from scheduled time. */
struct slo_measure {
	/* every request */
	uint64_t p50_ns, p90_ns, p99_ns, p99_9_ns, p99_99_ns, max_ns;
	double mean_ns;
	/* When latency_known, latency_count responses were measured: with none,
	 * every latency clause fails ("no response measured") instead of
	 * comparing zeros. (latency_known false: the caller does not say.) */
	bool latency_known;
	uint64_t latency_count;
	/* the requests that succeeded (ok.*) and those that did not (failed.*) */
	struct slo_latency ok, failed;
	double error_pct, success_pct, drop_pct; /* percent of requests, 0..100 */
	double achieved_fraction;   /* achieved / offered rate */
	bool offered_known;         /* false in closed loop: `rate` clauses fail */
	const double *outcome_pct;  /* percent per outcome, indexed like the names
	                             * given to slo_parse; borrowed */
	size_t n_outcomes;
};

/* pacer's own share of a step's figures, at its worst (the self-check,
 * docs/selfcheck.md): how far the generator's error could have moved each
 * kind of figure. A failing clause that would pass with that share taken
 * out is material: pacer could have decided it. */
struct slo_share {
	bool known;                 /* false: not judged (closed loop, or not measured) */
	struct slo_latency lag;     /* the loop lag at each latency statistic (every request):
				     * requests picked up that late left that late */
	uint64_t read_err_ns;       /* more lateness on the response side: responses timed
				     * when read, not by a kernel receive stamp (Unix
				     * sockets), wake the loop up to the machine's floor late */
	struct slo_latency ontime;  /* latency of the requests pacer sent on time (not
				     * lagged): what every request would have measured had
				     * pacer kept its schedule; known false: none */
	double lagged_failed_pct;   /* requests that failed after pacer sent them late in a
				     * clump (more than --lag-limit after they were due), % of
				     * those sent: errors and success clauses */
	double lagged_pct;          /* requests sent late in a clump, % of the responses:
				     * how far an outcome rate could have moved */
	bool gen_short;             /* the achieved rate fell short by the generator's fault
				     * (gencheck blame): rate and drops clauses, and a pass
				     * is not at the offered rate */
};

struct slo_verdict {
	bool pass;
	/* pass, but the rate fell short by pacer's fault; or failed, and every
	 * failing clause is material: pacer's own error could have decided the
	 * verdict (always false without a known slo_share) */
	bool inconclusive;
	uint32_t material;          /* bit i: clause i failed within pacer's share */
	size_t n_failed;
	/* "Pass", or "Fail " and every failing clause joined by "; ":
	 * "Fail p99 107.8ms > 100ms; errors 2.10% > 1%". The measured value and
	 * the threshold are joined by their actual relation (">" or "<"), or
	 * by ">=" / "<=" when they are equal. A value that is NaN or missing (an
	 * outcome index past n_outcomes) fails: "mean: not measured"; a rate
	 * clause in closed loop: "rate: no offered rate (closed loop)". When the
	 * list does not fit it ends with "; +N more". */
	char reason[SLO_REASON_MAX];
	/* inconclusive: why, in words ("errors 1.52% > 1% within pacer's share:
	 * 1.20% of the requests failed after pacer sent them late in a clump");
	 * else "" */
	char why[SLO_REASON_MAX];
};

/* Judge m against every clause of s. An SLO with no clauses passes.
 * Never fails; s, m and v must not be NULL. */
void slo_eval(const struct slo *s, const struct slo_measure *m, struct slo_verdict *v);

/* slo_eval, and then each failing clause again on what m would have been
 * without pacer's share sh (NULL or !known: as slo_eval): material when it
 * would pass then, taken two ways: every figure less pacer's share (its
 * lateness at the statistic, its lagged failures), or a latency clause of
 * every request judged on the requests pacer sent on time. The verdict is inconclusive when it failed and every
 * failing clause is material, or it passed while the rate fell short by the
 * generator's fault. */
void slo_eval_share(const struct slo *s, const struct slo_measure *m, const struct slo_share *sh,
		    struct slo_verdict *v);

#endif
