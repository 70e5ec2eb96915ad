/* pacer — the response rules in reports: success counts, outcome rates and
 * the server-reported time (plan/inspect.h), in the JSON result and the
 * terminal summary. */
#ifndef PACER_DOC_RULES_H
#define PACER_DOC_RULES_H

#include <stdint.h>
#include <stdio.h>

#include "plan/inspect.h"
#include "result/result.h"
#include "util/jsonw.h"

/* Success figures of a phase, over the requests sent (`of`): `ok`
 * succeeded (the --success rule held, or without one a final status in
 * 200..399), `failed` did not (phase_stats_errors: failed responses and
 * request transport errors). ok + failed + in flight at the end = of. */
struct success_figures {
	uint64_t ok, failed, of;
	double ok_pct;           /* 0 when of == 0 */
};
void report_success(const struct phase_stats *p, struct success_figures *out);

/* Percent of completed responses for which outcome k held (0 when none
 * completed). */
double report_outcome_pct(const struct phase_stats *p, size_t k);

/* Keys "success", "outcomes" (when any) and "server_time_missing" (when
 * --server-time) inside an open phase object. in may be NULL. */
void rj_phase_rules(struct jsonw *j, const struct phase_stats *p, const struct inspect *in);

/* The "rules" key of the plan object: success rule, outcomes, server-time
 * spec and body cap; null when no rule was given. */
void rj_plan_rules(struct jsonw *j, const struct inspect *in);

#endif
