/* pacer — the plan of a `pacer ramp`: steps of offered load, each measured
 * open loop, judged against an SLO; pure. */
#ifndef PACER_PLAN_RAMP_H
#define PACER_PLAN_RAMP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "plan/plan.h"
#include "plan/slo.h"

#define RAMP_MAX_STEPS 256
#define RAMP_RETRIES_DEFAULT 2
#define RAMP_RETRIES_MAX 10
/* The pause before a step is measured again: a noisy neighbour's burst of
 * work often ends within it. */
#define RAMP_RETRY_PAUSE_NS (1000ull * 1000 * 1000)

struct ramp_plan {
	struct run_plan run;      /* target, connections, threads, timeout, requests... */
	double rates[RAMP_MAX_STEPS];
	size_t n_rates;
	uint64_t step_ns, step_warmup_ns;
	const char *slo_expr;     /* NULL: every step passes (the knee is still reported) */
	struct slo slo;
	uint32_t after_fail;      /* steps run after the first failing one */
	bool refine;
	double precision;         /* refine until (fail - pass) / pass <= precision */
	double require_per_s;     /* 0: none */
	uint32_t retries;         /* --retries: measure an inconclusive step again this many
				   * times (after RAMP_RETRY_PAUSE_NS) */
	uint32_t target_cores;    /* 0: unknown */
};

/* Parse "500,1000,2k,4k" into strictly increasing rates. 0, or
 * PACER_EPARSE/PACER_ERANGE with a message naming the item in err. */
int ramp_parse_steps(const char *list, double *rates, size_t cap, size_t *n, char *err,
		     size_t errcap);

/* Geometric steps from..to by factor (> 1); the last step is `to` when the
 * product overshoots it. 0 or PACER_ERANGE with a message. */
int ramp_geometric(double from, double to, double factor, double *rates, size_t cap, size_t *n,
		   char *err, size_t errcap);

/* Rate to try between a passing and a failing rate (their midpoint). */
double ramp_bisect(double pass_rate, double fail_rate);

/* True when the bracket is narrow enough: (fail - pass) / pass <= precision. */
bool ramp_refined(double pass_rate, double fail_rate, double precision);

#endif
