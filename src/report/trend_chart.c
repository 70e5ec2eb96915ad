/* pacer — the "trend" chart: headline metrics over the stored runs of one
 * benchmark (report/render.h: struct report_trend), one panel per metric,
 * runs comparable with the reported one apart from the others. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/render_int.h"
#include "report/svg.h"

int charts_add_trend(struct chart_set *cs, const struct report_trend *t)
{
	if (!t || t->n == 0 || t->n_metrics == 0 || cs->n == CHART_MAX)
		return 0;
	size_t n = t->n < REPORT_TREND_MAX_POINTS ? t->n : REPORT_TREND_MAX_POINTS;
	size_t nm = t->n_metrics < REPORT_TREND_MAX_METRICS ? t->n_metrics
							     : REPORT_TREND_MAX_METRICS;
	if (nm > SVG_MAX_PANELS)
		nm = SVG_MAX_PANELS;
	/* per metric: comparable x/y, then the others' x/y */
	double *buf = malloc(sizeof(double) * 4 * n * nm);
	if (!buf)
		return -ENOMEM;
	struct svg_series ser[SVG_MAX_PANELS][2];
	struct svg_panel panels[SVG_MAX_PANELS];
	size_t drawable = 0;
	for (size_t m = 0; m < nm; m++) {
		double *cx = buf + 4 * n * m, *cy = cx + n, *ox = cy + n, *oy = ox + n;
		size_t nc = 0, no = 0;
		for (size_t i = 0; i < n; i++) {
			const struct report_trend_point *p = &t->pts[i];
			if (!isfinite(p->v[m]) || !isfinite(p->id))
				continue;
			if (p->comparable) {
				cx[nc] = p->id;
				cy[nc++] = p->v[m];
			} else {
				ox[no] = p->id;
				oy[no++] = p->v[m];
			}
		}
		drawable += nc + no;
		ser[m][0] = (struct svg_series){.label = "comparable with this run", .x = cx, .y = cy,
						.n = nc, .color = 0, .markers = true};
		ser[m][1] = (struct svg_series){.label = "not comparable (other table or hardware)",
						.x = ox, .y = oy, .n = no, .color = 3,
						.dashed = true, .markers = true};
		panels[m] = (struct svg_panel){
			.x = {.label = "run (history id)", .scale = SVG_LINEAR, .integer = true},
			.y = {.label = t->metrics[m] ? t->metrics[m] : "?",
			      .scale = SVG_LINEAR,
			      .from_zero = true},
			.series = ser[m],
			.n_series = 2,
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
