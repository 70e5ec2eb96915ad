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

struct slo_verdict {
	bool pass;
	size_t n_failed;
	/* "Pass", or "Fail " and every failing clause joined by "; ":
	 * "Fail p99 107.8ms > 100ms; errors 2.10% > 1%". The measured value and
	 * the threshold are joined by their actual relation (">" or "<"), or
	 * by ">=" / "<=" when they are equal. A value that is NaN or missing (an
	 * outcome index past n_outcomes) fails: "mean: not measured"; a rate
	 * clause in closed loop: "rate: no offered rate (closed loop)". When the
	 * list does not fit it ends with "; +N more". */
	char reason[SLO_REASON_MAX];
};

/* Judge m against every clause of s. An SLO with no clauses passes.
 * Never fails; s, m and v must not be NULL. */
void slo_eval(const struct slo *s, const struct slo_measure *m, struct slo_verdict *v);

#endif
