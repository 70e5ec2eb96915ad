/* pacer — ramp reports: the header and progress lines of a running ramp,
 * its warnings and its JSON result. */
#ifndef PACER_DOC_RAMP_H
#define PACER_DOC_RAMP_H

#include <stdio.h>

#include "plan/ramp.h"
#include "doc/doc.h"
#include "result/ramp.h"

struct ramp_report {
	struct report_ctx ctx;       /* env, mode, target, version (res unused) */
	const struct ramp_plan *plan;
	const struct ramp_result *res;
};

/* The cores a step's per-core figure divides by, and their basis (static,
 * docs/ramp.md): ctx.target_cores unless its basis is "machine" (the
 * machine is not the target), else the cores the probe saw the target keep
 * busy in that step ("measured_busy"). False when there is neither. */
bool ramp_per_core_cores(const struct ramp_report *rr, const struct ramp_step *s, double *cores,
			 const char **basis);

/* The step that decides whether the capacity is CPU-bound: the lowest
 * step above the highest passing one that failed on the target (bound
 * exact), else the highest passing step itself; -1 when no step passed. */
long ramp_deciding_step(const struct ramp_result *r);

struct inspect;

/* What the ramp is about to do (its target, request, steps, SLO), printed
 * before the first step. */
void ramp_text_header(FILE *f, const struct ramp_report *rr);
/* Progress: one line for step index s (index from 0), printed as soon as
 * it is judged, with its errors and outcome rates on lines of their own
 * when it has them. The end-of-run summary is not written here: it is the
 * text report of the ramp's JSON result (report/txt.c), whose step table
 * these lines do not repeat as a table. */
void ramp_text_row(FILE *f, const struct ramp_step *s, size_t index, const struct inspect *in);
/* The warnings a ramp's JSON result records ("warnings"). */
void ramp_warnings(const struct ramp_report *rr, struct report_warnings *w);
/* The JSON result of kind "ramp". 0 or -EIO. */
int ramp_json(FILE *f, const struct ramp_report *rr);

#endif
