/* pacer — what one variant of a plan measured over its repetitions: pure
 * data, filled by the runner (runner/runner.h), read by the report writers.
 * A plain run or ramp is one variant with one repetition. */
#ifndef PACER_RESULT_VARIANT_H
#define PACER_RESULT_VARIANT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "result/ramp.h"
#include "result/result.h"

#define VARIANT_MAX_REPEAT 101 /* independent repetitions per variant */

struct variant_result {
	/* Run shape: every measurement of every repetition pooled (counters
	 * summed, histograms merged); run.reps holds one figure per pooled
	 * measurement. */
	struct run_result run;
	/* Ramp shape: one ramp per repetition (n_ramps of them, owned). */
	struct ramp_result *ramps;
	size_t n_ramps;
	/* One figure per independent repetition: a run's measurement (pooled
	 * over run --repeat), or a ramp's highest passing step with its offered
	 * rate as achieved_per_s (zeros when no step passed). */
	struct rep_figure reps[VARIANT_MAX_REPEAT];
	size_t n_reps;
	uint64_t target_cpu_ns;     /* the embedded target's CPU over every measurement */
	size_t limited_reps;        /* repetitions the generator self-check flagged */
	char limited_by[96];        /* the checks that fired, comma-separated */
	size_t steal_reps;          /* repetitions whose decisive measurement had the
				     * hypervisor's steal time worth a warning
				     * (run_result_steal_material) */
	bool steal_known;           /* some decisive measurement's steal was read */
	double steal_max_pct;       /* the most of them (generator's CPUs), when known */
	bool interrupted;
};

/* Free what v owns and zero it. */
void variant_result_free(struct variant_result *v);

#endif
