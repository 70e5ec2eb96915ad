/* pacer — the terminal header and rows and the JSON result of `pacer compare`:
 * pure functions of the finished variants (result/variant.h), like the run
 * and ramp writers. */
#ifndef PACER_DOC_COMPARE_H
#define PACER_DOC_COMPARE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "plan/ramp.h"
#include "doc/doc.h"
#include "result/variant.h"

#define COMPARE_MAX_VARIANTS 8

/* One variant as the writers see it. */
struct compare_view {
	const char *name;
	const char *spec;                /* as given: URL, @PLAN, with its overrides */
	const struct run_plan *plan;     /* its plan (URL, workload, rules) */
	const struct report_conn *conns; /* where its requests went (report_ctx.conns) */
	size_t n_conns;
	bool self_contained;
	const struct variant_result *res;
};

struct compare_report {
	struct report_ctx ctx;           /* plan: the shared one; env, version, ... */
	const struct ramp_plan *ramp;    /* ramp mode (--steps): the ramp of each repetition; else NULL */
	size_t n_variants;
	struct compare_view v[COMPARE_MAX_VARIANTS];
	size_t reps;                     /* complete repetitions (rounds over every variant) */
	double noise;                    /* a ratio within 1 ± noise is "no significant difference" */
	uint64_t started_wall_ns;
	bool interrupted;
};

/* The figures compared, in order: throughput (capacity in ramp mode),
 * p50, p90, p99, p99.9, max, error rate, then, when every repetition of
 * every variant measured them, the target's CPU per request and peak RSS,
 * then each outcome's rate. */
enum compare_metric_kind { CMK_RATE, CMK_LATENCY, CMK_ERRORS, CMK_CPU, CMK_RSS, CMK_OUTCOME };
struct compare_metric {
	enum compare_metric_kind kind;
	int index;                       /* latency: 0..4 (p50 .. max); outcome: its index */
	char name[72];                   /* "throughput", "p99", "target_cpu", "fill" */
	char key[80];                    /* its JSON key in a repetition ("p99_us") */
};
#define COMPARE_MAX_METRICS (9 + RESULT_MAX_OUTCOMES)
size_t compare_metrics(const struct compare_report *c, struct compare_metric *out);

/* The value of metric m in repetition figure f (latency in µs). */
double compare_metric_value(const struct compare_metric *m, const struct rep_figure *f);

/* The words for a significant ratio lo..hi (> 1: higher) of metric m:
 * "higher capacity", "slower", "more CPU per request", ... */
const char *compare_direction(const struct compare_metric *m, bool higher);

/* Terminal, while the comparison runs: the header (variants, order, the
 * phases of a repetition), then a row per measurement as it ends. The
 * end-of-run summary is the text report of the JSON result
 * (report/txt.c), not written here. */
void compare_text_header(FILE *f, const struct compare_report *c);
void compare_text_row(FILE *f, const struct compare_report *c, size_t variant, size_t rep);

/* The conditions a reader must know (self-contained variants, few
 * repetitions, interruption, generator limits). */
void compare_warnings(const struct compare_report *c, struct report_warnings *w);

/* The JSON result of kind "compare" (docs/compare.md). 0 or -EIO. */
int compare_json(FILE *f, const struct compare_report *c);

#endif
