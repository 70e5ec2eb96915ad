/* pacer — the runner: one executor of a complete, validated plan. It opens
 * an engine session per variant, runs the measurements the plan's shape
 * asks for (one measurement, or a ramp of steps with refinement), repeats
 * them (pooled, or as independent repetitions in rotating variant order)
 * and returns the results. `pacer run`, `ramp`, `compare` and `bench` are
 * thin callers of runner_execute.
 *
 * Never prints, never exits, never touches signals: waiting (with Ctrl-C
 * and the progress line), the target probes and the rows a command prints
 * are hooks the caller hands in. */
#ifndef PACER_RUNNER_RUNNER_H
#define PACER_RUNNER_RUNNER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/engine.h"
#include "plan/plan.h"
#include "plan/ramp.h"
#include "result/gencheck.h"
#include "result/ramp.h"
#include "result/result.h"
#include "result/variant.h"

#define RUNNER_MAX_VARIANTS 8
#define RUNNER_MAX_REPEAT VARIANT_MAX_REPEAT
#define RUNNER_FLOOR_MARGIN_NS (100 * 1000 * 1000ull)
#define RUNNER_FLOOR_MIN_NS (50 * 1000 * 1000ull)

/* One variant: a name and the engine session that drives it. */
struct runner_variant {
	const char *name;           /* borrowed; "" for a plain run or ramp */
	struct engine_cfg cfg;      /* the session (borrowed pointers must outlive the run) */
	const struct run_plan *run; /* its plan: load, durations, rules (borrowed) */
	double target_cores;        /* cores its target could use, for the generator check */
};

struct runner_plan {
	size_t n_variants;          /* 1..RUNNER_MAX_VARIANTS */
	const struct runner_variant *variants;
	/* The shape of one repetition: NULL, one measurement of variants[i].run
	 * (warm-up, measure, drain), measured run->repeat times on the same
	 * connections and pooled; else a ramp of steps (each measured
	 * run->repeat times and pooled), with ramp->run's load options. */
	const struct ramp_plan *ramp;
	/* Independent repetitions of that shape per variant, interleaved in
	 * rotating order (A B, B A, ...) so that drift hits every variant alike.
	 * 0 or 1: one. */
	uint32_t repetitions;
	/* Ramp shape with repetitions > 1: free each step's histograms once its
	 * figures are taken (keeps memory bounded by one ramp). */
	bool compact_steps;
	uint64_t lag_limit_ns;      /* generator check threshold (0: the default) */
	/* A ramp step whose verdict pacer's own error could have decided
	 * (slo_verdict.inconclusive) is measured again, up to `retries` more
	 * times after a pause of retry_pause_ns; one that stays so ends the
	 * ramp (its capacity a lower bound). Not in a segment (--segment: every
	 * segment runs the same steps; the merged result judges). */
	uint32_t retries;
	uint64_t retry_pause_ns;
	/* The machine's floor (engine_floor) measured for floor_ns on the first
	 * variant's workers before the first load (0: not measured), with a
	 * loopback round trip when target_local; with start_ns, shortened to
	 * end RUNNER_FLOOR_MARGIN_NS before it, and skipped when that leaves
	 * less than RUNNER_FLOOR_MIN_NS. */
	uint64_t floor_ns;
	bool target_local;
	uint64_t start_ns;          /* CLOCK_MONOTONIC: the first measurement's load starts
	                             * then (--start-at; engine_step.start_ns); 0: at once */
};

/* Where a measurement stands, for the hooks. */
struct runner_at {
	size_t variant;             /* index into plan.variants */
	size_t repetition;          /* 0-based independent repetition */
	uint32_t measurement;       /* 0-based pooled measurement (run --repeat) */
	bool in_ramp;
	uint32_t step;              /* ramp: 1-based step (refinement steps after the planned) */
	uint32_t planned_steps;     /* ramp: its planned steps (before any refinement) */
	double offered_per_s;       /* the step's or run's offered rate (0: closed loop) */
};

struct runner_result;

struct runner_hooks {
	void *arg;
	/* Wait until engine_done(e) (the current measurement ended), turning
	 * Ctrl-C into engine_interrupt. True when interrupted. Required. */
	bool (*wait)(void *arg, struct engine *e, const struct runner_at *at);
	/* CPU the variant's embedded target has used so far, ns (NULL or 0:
	 * none). */
	uint64_t (*target_cpu_ns)(void *arg, size_t variant);
	/* A measurement is in: fill r->target from the variant's probe. */
	void (*measured)(void *arg, const struct runner_at *at, struct run_result *r);
	/* A pooled measurement of a run finished (figures of that one). */
	void (*run_measurement)(void *arg, const struct runner_at *at, const struct rep_figure *f);
	/* A ramp step was judged and appended to r (its last step). */
	void (*ramp_step)(void *arg, const struct runner_at *at, const struct ramp_result *r);
	/* The engines are open and the floor is measured (out->floor,
	 * out->realtime), before the first load (NULL: nothing to do). */
	void (*ready)(void *arg, const struct runner_result *out);
	/* Pause ns between a step and its retry; true when interrupted
	 * meanwhile (NULL: a plain sleep). */
	bool (*pause)(void *arg, uint64_t ns);
	/* One independent repetition of a variant finished: its figure (run:
	 * the measurement's; ramp: the highest passing step's, with its offered
	 * rate as achieved_per_s, zeros when none passed). */
	void (*repetition)(void *arg, const struct runner_at *at, const struct rep_figure *f);
};

struct runner_result {
	uint64_t started_wall_ns;
	struct gen_floor floor;     /* runner_plan.floor_ns: the machine's floor (known: measured) */
	int realtime;               /* engine_realtime of the variants' engines: 1 not asked,
				     * 0 granted to all, else the first refusal's -errno */
	bool interrupted;           /* Ctrl-C: the results so far are kept */
	size_t repetitions_done;    /* complete rounds over every variant */
	size_t n_variants;
	struct variant_result v[RUNNER_MAX_VARIANTS];
};

/* Execute p. *out is initialised here (free with runner_result_free, also
 * after an error). 0, -EINVAL for a plan out of range, or a negative code
 * from the engine (-ENOMEM, thread creation); *failed_variant names the
 * variant whose session could not start (may be NULL). On an error the
 * measurements taken so far stay in *out. */
int runner_execute(const struct runner_plan *p, const struct runner_hooks *h,
		   struct runner_result *out, size_t *failed_variant);

void runner_result_free(struct runner_result *r);

/* Generator check of one finished measurement, as the runner judges it. */
void runner_gencheck(const struct runner_plan *p, size_t variant, const struct run_result *r,
		     struct gen_verdict *v);

#endif
