/* pacer — figures per request name (result/names.h) in reports: the
 * "by_name" array of a phase in the JSON result and the --by-name table of
 * the terminal summary. */
#ifndef PACER_DOC_NAMES_H
#define PACER_DOC_NAMES_H

#include <stdint.h>
#include <stdio.h>

#include "plan/inspect.h"
#include "result/names.h"
#include "result/result.h"
#include "util/jsonw.h"

/* One name's figures. errors = completed - ok + transport errors; error_pct
 * is errors over the requests that ended (completed + transport errors),
 * 0 when none did. */
struct name_figures {
	const char *name;        /* borrowed from the names */
	bool other;              /* the pooled entry */
	uint64_t pooled;         /* other: distinct names pooled into it */
	uint64_t sent, completed, ok, failed, transport_errors, errors;
	double error_pct;
	const struct hist *latency; /* borrowed from the phase */
};

/* Entries of p by name: names->n when p has per-name figures (2 or more
 * names), 1 when the run has one name (its figures are then the phase's
 * own), 0 when names is NULL or empty or does not match p. */
uint32_t report_name_count(const struct phase_stats *p, const struct req_names *names);

/* Figures of entry i < report_name_count(p, names); errors and success as
 * the phase counts them (phase_stats_errors), over the requests sent. */
void report_name_figures(const struct phase_stats *p, const struct req_names *names, uint32_t i,
			 struct name_figures *out);

/* The "by_name" key and array inside an open phase object (nothing when
 * report_name_count is 0). */
void rj_by_name(struct jsonw *j, const struct phase_stats *p, const struct req_names *names);

/* The "sessions" key and object inside an open phase object, when the run
 * had sessions (p->sessions.on; nothing otherwise): their counts and the
 * histogram of their durations. */
void rj_sessions(struct jsonw *j, const struct phase_stats *p);

/* The terminal table (one row per name, indented two spaces; nothing when
 * report_name_count is below 2). */
void report_text_by_name(FILE *f, const struct phase_stats *p, const struct req_names *names);

#endif
