/* pacer — inspection at run time: the rules of a plan (plan/inspect.h)
 * judged on one completed response, on the parser's capture (http/h1.h),
 * counting outcomes and server time into the phase's stats. No allocation,
 * no locks: called by the engine once per response. */
#ifndef PACER_ENGINE_INSPECT_EVAL_H
#define PACER_ENGINE_INSPECT_EVAL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "http/h1.h"
#include "plan/inspect.h"
#include "result/result.h"

/* The server time in ns from a captured response, or -1 when it is absent,
 * not a number, negative, or not finite. */
int64_t srvtime_extract(const struct srvtime_spec *s, const struct h1_capture *cap);

/* The value of `path` (dotted keys / indices) in a JSON text, as a number:
 * 0 and *out, or -1 if the path is missing, not a number, or the text is
 * not well-formed up to that point. Pure scanner: no allocation; nesting
 * deeper than 64 levels is refused. Exposed for tests and fuzzing. */
int inspect_json_number(const char *json, size_t len, const char *path, double *out);

/* Evaluate everything on one completed response and count outcomes and
 * server time into ph. `cap` is the parser's capture (NULL when nothing was
 * captured). Returns whether the response succeeded: the --success rule, or
 * inspect_default_ok without one. The caller counts success_ok.
 * live_outcome: NULL, or the calling worker's live outcome counters (one
 * per outcome rule; only that worker writes them), counted too. */
bool inspect_response(const struct inspect *in, int status, const struct h1_capture *cap,
		      struct phase_stats *ph, _Atomic uint64_t *live_outcome);

#endif
