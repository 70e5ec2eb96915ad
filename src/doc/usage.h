/* pacer — what the load cost and whether the generator kept up, in reports:
 * the target's resources over the measured phase, cost per million
 * requests per price profile, and the generator self-checks. */
#ifndef PACER_DOC_USAGE_H
#define PACER_DOC_USAGE_H

#include <stdio.h>

#include "doc/doc.h"
#include "result/gencheck.h"
#include "util/jsonw.h"

/* The generator checks of r under c's settings. */
void report_gencheck(const struct run_result *r, const struct report_ctx *c,
		     struct gen_verdict *v);

/* Target CPU-ms per completed request of the measured phase, or a negative
 * value when the target's CPU was not measured. */
double report_target_cpu_ms_per_request(const struct run_result *r);

/* Keys "target_resources" (null when not probed), "cost" (null without
 * target CPU or profiles) and "generator_limited" in an open object. */
void rj_usage(struct jsonw *j, const struct run_result *r, const struct report_ctx *c);

/* Key "target_cores" in an open object: {cores, basis} from c (the cores
 * the generator check and per-core figures assume, and where the number
 * came from), or null when unknown. */
void rj_target_cores(struct jsonw *j, const struct report_ctx *c);

#endif
