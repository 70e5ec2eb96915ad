/* pacer — what the report writers share inside src/report (not a public
 * interface: the entry points are in report/render.h). */
#ifndef PACER_REPORT_RENDER_INT_H
#define PACER_REPORT_RENDER_INT_H

#include <stdio.h>

#include "report/page.h"
#include "report/render.h"
#include "doc/read.h"

/* Nested loops over a comparison's variants and ratios stop here, so a
 * hostile file cannot make them quadratic (pacer compare writes at most 8
 * variants and 6 ratios per variant). */
#define REPORT_MAX_VARIANTS 64
#define REPORT_MAX_RATIOS 1024

/* ---- charts (charts.c, charts_set.c) -------------------------------------- */

#define CHART_MAX 8

struct chart {
	char name[32];     /* "spectrum": figure id "chart-spectrum", file "chart-spectrum.svg" */
	char title[200];
	char *svg;         /* a complete <svg> element (owned) */
};

struct chart_set {
	struct chart c[CHART_MAX];
	size_t n;
};

/* Every chart the result has data for. 0 or -ENOMEM (cs is then empty). */
int charts_build(const struct loaded_result *r, struct chart_set *cs);
void charts_free(struct chart_set *cs);
/* Add the "trend" chart of t (trend_chart.c); nothing when it has no
 * drawable point or the set is full. 0 or -ENOMEM. */
int charts_add_trend(struct chart_set *cs, const struct report_trend *t);
/* The chart of that name, or NULL. */
const struct chart *charts_find(const struct chart_set *cs, const char *name);

/* ---- shared facts ------------------------------------------------------------ */

/* The ramp step the spectrum and the hgrm/hlog outputs show by default: the
 * highest passing step, else the last one; -1 when there is no step. */
long report_focus_step(const json_t *root);
/* How every writer names ramp step i (0-based) of root: "5", or "r5" for a
 * refine step (docs/ramp.md), into out[cap]; returns out. */
const char *report_step_label(const json_t *root, long i, char *out, size_t cap);

/* The first percentile clause of a canonical SLO ("p99<100ms,errors<1%"):
 * percentile (99), limit in microseconds, and the clause text. */
struct slo_pct {
	double pct;
	double limit_us;
	char text[96];
};
bool report_slo_pct(const char *slo, struct slo_pct *out);

/* Achieved rate, latency percentiles etc. of a phase object, with NAN for
 * what is missing. */
struct phase_fig {
	double offered, achieved, duration_s;
	double p50, p90, p99, p999, p9999, max, mean; /* latency, us */
	double scheduled, sent, completed, dropped, queued, in_flight;
	double errors;         /* errors.total: requests sent that did not succeed */
	double failed_responses; /* errors.failed_responses: of those, complete responses */
	double connect_errors; /* transport_errors.connect: failed connection attempts, not requests */
	double tls_errors;     /* transport_errors.tls: failed TLS handshakes, not requests */
	double error_pct;      /* errors / sent, percent */
	double drop_pct;   /* (dropped + queued at end) / scheduled */
};
void report_phase_fig(const json_t *phase, struct phase_fig *f);

/* The outcome object called `name` of a ramp step (its own "outcomes", or
 * its measured phase's), or NULL. */
const json_t *report_step_outcome(const json_t *step, const char *name);
/* Outcome names over every step, in order of first appearance (at most
 * cap). */
size_t report_outcome_names(const json_t *steps, const char **names, size_t cap);

/* ---- writers ------------------------------------------------------------------- */

/* The report's content (report/content.c). 0 or -ENOMEM. */
int report_doc_build(const struct loaded_result *r, const struct chart_set *cs, struct page *d);
/* Markdown; chart_prefix NULL: no chart references, else `![..](PREFIXchart-NAME.svg)`. */
int md_write(FILE *f, const struct page *d, const char *chart_prefix);
/* One self-contained HTML page with the charts inline. */
int html_write(FILE *f, const struct page *d, const struct chart_set *cs);
/* The terminal text; screen_rows: 0 the whole text, else a summary that
 * fits that many rows (report_options.screen_rows). */
int txt_write(FILE *f, const struct page *d, unsigned screen_rows);
/* o->csv_summary: the summary rows (a row per phase/step, per request
 * name, per repetition); else the rows of each kind (csv.c). o may be NULL. */
int csv_write(FILE *f, const struct loaded_result *r, const struct report_options *o, char *err,
	      size_t errlen);
int hgrm_write(FILE *f, const struct loaded_result *r, const struct report_options *o, char *err,
	       size_t errlen);
int hlog_write(FILE *f, const struct loaded_result *r, const struct report_options *o, char *err,
	       size_t errlen);

/* The measured phase a histogram output reads (run: measure; ramp: the step
 * o->step, or report_focus_step), its label for messages, and its series
 * array (may be NULL). NULL with a message when there is none. */
const json_t *report_hist_phase(const struct loaded_result *r, const struct report_options *o,
				const json_t **series, char *err, size_t errlen);

#endif
