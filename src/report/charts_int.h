/* pacer — internals of the chart builders (charts.c and its family files):
 * the growable point arrays they share, and each family's entry. Not for
 * use outside src/report. */
#ifndef PACER_REPORT_CHARTS_INT_H
#define PACER_REPORT_CHARTS_INT_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "report/render_int.h"
#include "report/svg.h"

/* ---- charts_set.c ---- */

/* A growable pair of double arrays. */
struct xy {
	double *x, *y;
	size_t n, cap;
	bool oom;
};

/* Appends (x, y); on allocation failure sets a->oom and drops the point. */
void xy_push(struct xy *a, double x, double y);
void xy_free(struct xy *a);

/* Adds svg (taking it) under name. A NULL svg (nothing drawable) adds nothing. */
void chart_add(struct chart_set *cs, const char *name, const char *title, char *svg);

/* ---- charts_phase.c ---- */

struct timeline {
	struct xy rate, p50, p99, err;
	struct xy drain_rate, drain_p99; /* seconds after the schedule ended, drawn apart */
	struct xy cls[5], transport;     /* per second by status class; connection failures */
	bool any_cls[5], any_transport, has_cls, in_drain;
	struct xy connf, unsent;         /* connects failed per second; unsent at its end */
	bool any_connf, any_unsent;
	bool any_err;
	struct svg_mark marks[64];
	char mark_text[64][32];
	size_t n_marks;
};

/* Percentile rows of a timing's histogram (a phase's "latency" object)
 * into a: x = fraction, y = ms. Nothing when it holds no histogram. */
void spectrum_points(const json_t *timing, struct xy *a);
/* The latency distribution of a timing's histogram as a step outline into
 * a: the share of its requests in each log-spaced bin (10 a decade; a
 * bucket goes to the bin holding its low value: bins are far wider than
 * the buckets' 0.1 %), x = ms, y = percent. */
void histogram_points(const json_t *timing, struct xy *a);
/* The spectrum and the histogram of a phase object; `what` names it in the title. */
int spectrum_chart(struct chart_set *cs, const json_t *phase, const char *what);
int histogram_chart(struct chart_set *cs, const json_t *phase, const char *what);
/* A break in every line of t (between steps). */
void timeline_break(struct timeline *t);
/* Adds a series (JSON array of per-second points) at t0 seconds; seconds past
 * meas_s are drain seconds, drawn apart. */
void timeline_points(struct timeline *t, const json_t *series, double t0, double meas_s);
int timeline_chart(struct chart_set *cs, struct timeline *t, const char *xlabel, const char *title);
int status_chart(struct chart_set *cs, const struct timeline *t, const char *xlabel,
		 const char *title);
void timeline_free(struct timeline *t);
int run_charts(const json_t *root, struct chart_set *cs);

/* ---- charts_ramp.c, charts_compare.c ---- */

int ramp_charts(const json_t *root, struct chart_set *cs);
int compare_charts(const json_t *root, struct chart_set *cs);

#endif
