/* pacer — the result of a ramp: one measured step per offered rate, each
 * with its verdict. Pure data. */
#ifndef PACER_RESULT_RAMP_H
#define PACER_RESULT_RAMP_H

#include <stdbool.h>
#include <stddef.h>

#include "result/verdict.h"
#include "result/result.h"

struct ramp_step {
	double offered_per_s;
	bool refine;               /* run by --refine, between a pass and a fail */
	struct run_result run;     /* its warm-up histograms are freed (its counters kept) */
	struct rep_figure warmup_fig; /* the warm-up's figures, taken before that */
	struct slo_verdict verdict;
	uint64_t target_cpu_ns;    /* self-contained: the embedded target's CPU */
};

struct ramp_result {
	struct ramp_step *steps;   /* in the order they ran (owned) */
	size_t n_steps, cap;
	long highest_pass;         /* index of the highest passing rate, or -1 */
	long knee;                 /* first step whose p50 > 2x the first step's, or -1 */
	bool reached_require;
	bool interrupted;
	uint64_t started_wall_ns;
};

/* Append a step (taking ownership of its run result). 0 or -ENOMEM. */
int ramp_result_add(struct ramp_result *r, const struct ramp_step *s);
/* Recompute highest_pass and knee from the steps. */
void ramp_result_summarize(struct ramp_result *r, double require_per_s);
void ramp_result_free(struct ramp_result *r);

/* The SLO latency figures of one histogram (known, with its count). */
void ramp_latency_of(const struct hist *h, struct slo_latency *l);

/* The SLO inputs of a step's measured phase. */
void ramp_step_measure(const struct run_result *run, size_t n_outcomes,
		       double pct[RESULT_MAX_OUTCOMES], struct slo_measure *m);

#endif
