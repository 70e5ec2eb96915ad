/* pacer — the workload as sent, in reports: the JSON `plan.workload`
 * object (methods and shares, the first requests, bodies, hash), the run's
 * name in the terminal (a table run is named by its table, not its first
 * URL) and the terminal line that says what was sent. Pure writers of the
 * plan (plan/workload.h), through the stream they are handed. */
#ifndef PACER_DOC_WORKLOAD_H
#define PACER_DOC_WORKLOAD_H

#include <stddef.h>
#include <stdio.h>

#include "plan/plan.h"
#include "plan/workload.h"
#include "util/jsonw.h"

/* Key "workload" in an open object: the object of docs/result.md, or null
 * when w is NULL. `order_random`: the requests are picked at random (their
 * shares are then expected, not exact). */
void rj_workload(struct jsonw *j, const struct plan_workload *w, bool order_random);

/* What names the run in a terminal headline, into out[cap]: a table run's
 * table ("table api.jsonl (sha256 0123456789ab, 1,000 requests, 2 hosts:
 * a.example:443, b.example:80)"), else the URL. Returns out. */
const char *report_run_name(char *out, size_t cap, const struct run_plan *p);

/* The terminal line(s) saying what was sent: methods with counts and
 * shares, the requests one by one when there are few, bodies. Nothing when
 * p->workload is NULL. */
void report_text_workload(FILE *f, const struct run_plan *p);

#endif
