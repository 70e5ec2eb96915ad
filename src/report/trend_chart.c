/* pacer — the "trend" chart: headline metrics over the stored runs of one
 * benchmark (report/render.h: struct report_trend), one panel per metric,
 * runs comparable with the reported one apart from the others, which are
 * grouped by the reason pacer diff would refuse them (the first field that
 * differs, report_trend_point.why). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/render_int.h"
#include "report/svg.h"

#define TREND_REASONS 3 /* reasons for "not comparable" drawn apart */

int charts_add_trend(struct chart_set *cs, const struct report_trend *t)
{
	if (!t || t->n == 0 || t->n_metrics == 0 || cs->n == CHART_MAX)
		return 0;
	size_t n = t->n < REPORT_TREND_MAX_POINTS ? t->n : REPORT_TREND_MAX_POINTS;
	size_t nm = t->n_metrics < REPORT_TREND_MAX_METRICS ? t->n_metrics
							     : REPORT_TREND_MAX_METRICS;
	if (nm > SVG_MAX_PANELS)
		nm = SVG_MAX_PANELS;
	/* the reasons, in the order they first occur: TREND_REASONS get their
	 * own series, any others share one */
	const char *reason[TREND_REASONS];
	char labels[TREND_REASONS + 1][128];
	size_t n_reasons = 0;
	bool other = false;
	for (size_t i = 0; i < n; i++) {
		const struct report_trend_point *p = &t->pts[i];
		if (p->comparable)
			continue;
		size_t r = 0;
		while (r < n_reasons && strcmp(reason[r], p->why))
			r++;
		if (r == n_reasons && n_reasons < TREND_REASONS)
			reason[n_reasons++] = p->why;
		else if (r == n_reasons)
			other = true;
	}
	for (size_t r = 0; r < n_reasons; r++)
		if (reason[r][0])
			snprintf(labels[r], sizeof labels[r], "not comparable: %.47s differs",
				 reason[r]);
		else
			snprintf(labels[r], sizeof labels[r],
				 "not comparable (pacer diff would refuse)");
	snprintf(labels[TREND_REASONS], sizeof labels[TREND_REASONS],
		 "not comparable: another field differs");
	size_t ns = 1 + n_reasons + (other ? 1 : 0);
	/* per metric and series: x then y, n each */
	double *buf = malloc(sizeof(double) * 2 * n * nm * ns);
	if (!buf)
		return -ENOMEM;
	static const int colors[TREND_REASONS + 1] = {3, 1, 5, 7};
	struct svg_series ser[SVG_MAX_PANELS][TREND_REASONS + 2];
	struct svg_panel panels[SVG_MAX_PANELS];
	size_t drawable = 0;
	for (size_t m = 0; m < nm; m++) {
		for (size_t k = 0; k < ns; k++) {
			double *x = buf + 2 * n * (m * ns + k), *y = x + n;
			size_t cnt = 0;
			for (size_t i = 0; i < n; i++) {
				const struct report_trend_point *p = &t->pts[i];
				if (!isfinite(p->v[m]) || !isfinite(p->id))
					continue;
				size_t r = 0;
				if (!p->comparable) {
					while (r < n_reasons && strcmp(reason[r], p->why))
						r++;
					r++; /* 1..n_reasons; n_reasons + 1: the others */
				}
				if (r != k)
					continue;
				x[cnt] = p->id;
				y[cnt++] = p->v[m];
			}
			drawable += cnt;
			if (k == 0)
				ser[m][k] = (struct svg_series){.label = "comparable with this run",
								.x = x,
								.y = y,
								.n = cnt,
								.color = 0,
								.markers = true};
			else
				ser[m][k] = (struct svg_series){
					.label = labels[k <= n_reasons ? k - 1 : TREND_REASONS],
					.x = x,
					.y = y,
					.n = cnt,
					.color = colors[k <= n_reasons ? k - 1 : TREND_REASONS],
					.dashed = true,
					.markers = true};
		}
		panels[m] = (struct svg_panel){
			.x = {.label = "run (history id)", .scale = SVG_LINEAR, .integer = true},
			.y = {.label = t->metrics[m] ? t->metrics[m] : "?",
			      .scale = SVG_LINEAR,
			      .from_zero = true},
			.series = ser[m],
			.n_series = ns,
		};
	}
	int rc = 0;
	if (drawable) {
		char title[200];
		snprintf(title, sizeof title, "Trend over %zu stored runs%s%s", n,
			 t->source ? " of " : "", t->source ? t->source : "");
		char *svg = svg_line_chart(title, panels, nm);
		if (!svg) {
			rc = -ENOMEM;
		} else {
			struct chart *c = &cs->c[cs->n++];
			snprintf(c->name, sizeof c->name, "trend");
			snprintf(c->title, sizeof c->title, "%s", title);
			c->svg = svg;
		}
	}
	free(buf);
	return rc;
}
