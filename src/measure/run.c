/* pacer — the measurement itself (measure/measure.h: measure_prepare and
 * measure_run): a set-up made ready before the load, and the runner over
 * the prepared variants with what every command wants of it (the floor,
 * retries, --realtime, --start-at). */
#include <errno.h>
#include <stdio.h>

#include "measure/measure_int.h"
#include "plan/ramp.h"
#include "doc/doc.h"
#include "runner/runner.h"
#include "util/err.h"

int measure_ready(struct measure *m, struct run_plan *plan)
{
	char err[512];
	if (plan_validate(plan, err, sizeof err))
		return measure_fail(m, MEASURE_EUSAGE, "%s", err);
	int rc = measure_connect(m, plan);
	if (!rc)
		rc = measure_start_probe(m);
	return rc;
}

int measure_prepare(struct measure *m, struct run_plan *plan)
{
	/* the plan is complete (URL, body, table, requests) before it is
	 * validated, and unchanged from then on */
	int rc = measure_build(m, plan);
	return rc ? rc : measure_ready(m, plan);
}

int measure_run(const struct measure_spec *spec, const struct runner_hooks *hooks,
		struct runner_result *out)
{
	struct measure *m0 = spec->v[0].m;
	const struct run_plan *p0 = spec->v[0].plan;
	struct runner_variant rv[RUNNER_MAX_VARIANTS];
	if (spec->n < 1 || spec->n > RUNNER_MAX_VARIANTS)
		return measure_fail(m0, MEASURE_ERUNTIME, "%zu variants: from 1 to %d", spec->n,
				    RUNNER_MAX_VARIANTS);
	bool local = false;
	for (size_t i = 0; i < spec->n; i++) {
		const struct measure_variant *v = &spec->v[i];
		struct report_ctx ctx = {0};
		measure_report_ctx(v->m, &ctx); /* the cores its target could use */
		rv[i] = (struct runner_variant){.name = v->name, .run = v->plan,
						.target_cores = ctx.target_cores};
		measure_engine_cfg(v->m, v->plan, &rv[i].cfg);
		local = local || measure_target_local(v->m);
	}
	struct runner_plan rp = {
		.n_variants = spec->n,
		.variants = rv,
		.ramp = spec->ramp,
		.repetitions = spec->repetitions,
		.compact_steps = spec->compact_steps,
		.lag_limit_ns = m0->lag_limit_ns,
		.start_ns = plan_start_mono_ns(p0),
		.retries = spec->ramp ? spec->ramp->retries : 0,
		.retry_pause_ns = RAMP_RETRY_PAUSE_NS,
		.floor_ns = p0->calibrate_ns,
		.target_local = local,
	};
	size_t failed = 0;
	int rc = runner_execute(&rp, hooks, out, &failed);
	if (rc) {
		if (spec->n > 1)
			return measure_fail(m0, MEASURE_ERUNTIME, "variant %s: %s",
					    spec->v[failed < spec->n ? failed : 0].name, err_name(rc));
		return measure_fail(m0, MEASURE_ERUNTIME, "%s", err_name(rc));
	}
	return 0;
}
