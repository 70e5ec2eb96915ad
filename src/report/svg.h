/* pacer — charts as SVG text: line charts (one or more stacked panels, with
 * linear, log10 or percentile "1/(1-p)" axes, horizontal marks such as an
 * SLO limit and vertical marks such as step boundaries) and grouped bar
 * charts with whiskers. Pure: numbers in, a malloc'd string out. The same
 * string is inlined in the HTML report and written as a .svg file, so it is
 * a complete <svg> element with the SVG namespace, well-formed XML, no
 * scripts and no external references. Every label is escaped. Output is a
 * function of the input alone (fixed decimals, no clock, no locale). */
#ifndef PACER_REPORT_SVG_H
#define PACER_REPORT_SVG_H

#include <stdbool.h>
#include <stddef.h>

enum svg_scale {
	SVG_LINEAR,
	SVG_LOG10,   /* values <= 0 are skipped */
	SVG_INV_PCT, /* values are fractions p in [0, 1), drawn at log10(1/(1-p));
		      * ticks read 0%, 90%, 99%, 99.9%, ... */
};

struct svg_axis {
	const char *label;
	enum svg_scale scale;
	bool from_zero;      /* linear: the range includes 0 */
	bool integer;        /* linear: ticks at whole numbers only (run ids) */
};

struct svg_series {
	const char *label;
	const double *x, *y;
	size_t n;
	int color;           /* palette index (0..7) */
	bool dashed;
	bool markers;        /* a dot at each point */
};

struct svg_mark {
	double v;            /* position on the axis, in data units */
	const char *label;   /* may be NULL */
};

struct svg_panel {
	struct svg_axis x, y;
	const struct svg_series *series;
	size_t n_series;
	const struct svg_mark *hmarks; /* horizontal lines (y = v) */
	size_t n_hmarks;
	const struct svg_mark *vmarks; /* vertical lines (x = v) */
	size_t n_vmarks;
};

#define SVG_MAX_PANELS 4

/* A line chart of n_panels (1..SVG_MAX_PANELS) panels stacked vertically.
 * Returns a malloc'd NUL-terminated string, or NULL when out of memory or
 * when no panel has a single drawable point (the caller omits the chart). */
char *svg_line_chart(const char *title, const struct svg_panel *panels, size_t n_panels);

struct svg_bar {
	const char *group;   /* bars with the same group (consecutive) sit together */
	const char *label;   /* legend entry: one color per distinct label */
	double v;            /* bar height */
	double lo, hi;       /* whisker, when whisker is true */
	bool whisker;
};

/* Grouped bars, y from 0 (or a log10 axis when log is true), an optional
 * horizontal reference line at ref (NAN: none) labelled ref_label. Returns a
 * malloc'd string, or NULL when out of memory or nothing is drawable. */
char *svg_bar_chart(const char *title, const char *y_label, const struct svg_bar *bars, size_t n,
		    double ref, const char *ref_label, bool log);

/* True when a log axis suits values from lo to hi (> 0): they span more than
 * a factor of 30. */
bool svg_wants_log(double lo, double hi);

#endif
