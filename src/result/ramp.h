/* pacer — the result of a ramp: one measured step per offered rate, each
 * with its verdict. Pure data. */
#ifndef PACER_RESULT_RAMP_H
#define PACER_RESULT_RAMP_H

#include <stdbool.h>
#include <stddef.h>

#include "result/gencheck.h"
#include "result/verdict.h"
#include "result/result.h"

struct ramp_step {
	double offered_per_s;
	bool refine;               /* run by --refine, between a pass and a fail */
	uint32_t attempt;          /* 1, or 2.. for a step measured again after it was
				    * inconclusive (--retries) */
	bool retried;              /* inconclusive, and measured again: the next attempt
				    * at this rate decides, not this one */
	struct run_result run;     /* its warm-up histograms are freed (its counters kept) */
	struct rep_figure warmup_fig; /* the warm-up's figures, taken before that */
	struct slo_verdict verdict;
	uint64_t target_cpu_ns;    /* self-contained: the embedded target's CPU */
};

/* How far the capacity (the highest passing step) is known. */
enum ramp_bound {
	RAMP_BOUND_NONE = 0,   /* no conclusive step passed, none was inconclusive */
	RAMP_BOUND_EXACT,      /* the next step above failed on the target: the capacity
				* lies between the two */
	RAMP_BOUND_LOWER,      /* a step above it stayed inconclusive (pacer's own error
				* could have decided it): at least this */
	RAMP_BOUND_TOP,        /* every step passed: at least the highest step tried */
};

/* Static JSON name of a bound: "exact", "lower", "top"; NULL for NONE. */
const char *ramp_bound_name(enum ramp_bound b);

/* A ramp's capacity is CPU-bound, and so may be given per core, when the
 * target kept at least this share of the cores it could use busy at the
 * deciding step (docs/ramp.md "Per core"). */
#define RAMP_CPU_LIMIT_SHARE 0.9
/* Whether busy cores of avail is the target's CPU at its limit:
 * busy >= RAMP_CPU_LIMIT_SHARE * avail; false when either is not a
 * positive number. */
bool ramp_cpu_limited(double busy, double avail);

struct ramp_result {
	struct ramp_step *steps;   /* in the order they ran (owned) */
	size_t n_steps, cap;
	long highest_pass;         /* index of the highest conclusively passing rate, or -1 */
	enum ramp_bound bound;     /* of highest_pass; with none: LOWER when a step stayed
				    * inconclusive before any failed, else NONE */
	long below;                /* index of the lowest conclusive failure above highest_pass
				    * (any, without one), or -1 */
	size_t inconclusive;       /* steps that stayed inconclusive (not retried) */
	long knee;                 /* first step whose p50 > 2x the first step's, or -1 */
	bool reached_require;      /* --require: a conclusive pass at or above it; without:
				    * every step that decides passed as measured */
	bool interrupted;
	uint64_t started_wall_ns;
};

/* What the capacity's bounds are decided from: one row per step, in the
 * order they ran. */
struct ramp_row {
	double offered_per_s;
	bool decides;              /* not retried, not interrupted */
	bool pass, inconclusive;   /* its verdict */
};

struct ramp_bounds {
	long highest;              /* the highest conclusive pass, or -1 */
	long below;                /* the lowest conclusive failure above it (any, without
				    * one), or -1 */
	enum ramp_bound bound;
	size_t inconclusive;       /* rows that decide and stayed inconclusive */
};

/* The bounds of n steps whose rows row(ctx, i, &out) gives (ramp_result's
 * fields of the same names; the merge of segments uses it on merged steps). */
void ramp_bounds_of(size_t n, void (*row)(const void *ctx, size_t i, struct ramp_row *out),
		    const void *ctx, struct ramp_bounds *b);

/* Append a step (taking ownership of its run result). 0 or -ENOMEM. */
int ramp_result_add(struct ramp_result *r, const struct ramp_step *s);
/* Recompute highest_pass, bound, below, inconclusive and knee from the
 * steps (a step retried is passed over; an inconclusive one neither passes
 * nor fails). */
void ramp_result_summarize(struct ramp_result *r, double require_per_s);
void ramp_result_free(struct ramp_result *r);

/* The SLO latency figures of one histogram (known, with its count). */
void ramp_latency_of(const struct hist *h, struct slo_latency *l);

/* The SLO inputs of a step's measured phase. */
void ramp_step_measure(const struct run_result *run, size_t n_outcomes,
		       double pct[RESULT_MAX_OUTCOMES], struct slo_measure *m);

/* pacer's share of a measured phase's figures (verdict.h), from its loop
 * lag, its lagged requests, the generator check's blame for a shortfall
 * (gv) and the machine's floor (NULL: not measured; responses read late
 * add its wake-up p99 when they were not stamped). Closed loop: not known. */
void ramp_step_share(const struct run_result *run, const struct gen_verdict *gv,
		     const struct gen_floor *floor, struct slo_share *sh);

#endif
