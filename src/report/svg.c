/* pacer — SVG line and bar charts (see svg.h). */
#include "report/svg.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/page.h"
#include "util/units.h"

#define W 760.0
#define PANEL_H 280.0
#define TITLE_H 30.0
#define ML 78.0  /* left margin: y tick labels and the y label */
#define MR 24.0
#define LEGEND_H 24.0
#define LEGEND_MAX_ROWS 4 /* a panel's legend wraps to at most this many rows */
#define BOTTOM_H 46.0 /* x tick labels and the x label */

static const char *const palette[8] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e",
				       "#9467bd", "#8c564b", "#e377c2", "#7f7f7f"};

static const char *color(int i)
{
	return palette[(unsigned)i % 8];
}

/* ---- scales ---------------------------------------------------------------- */

struct scale {
	enum svg_scale kind;
	double lo, hi;       /* in transformed units */
	double px0, px1;     /* pixel positions of lo and hi */
	double step;         /* linear: tick step */
};

static bool tr(enum svg_scale k, double v, double *out)
{
	if (!isfinite(v))
		return false;
	switch (k) {
	case SVG_LINEAR:
		*out = v;
		return true;
	case SVG_LOG10:
		if (v <= 0)
			return false;
		*out = log10(v);
		return true;
	case SVG_INV_PCT:
		if (v < 0 || v >= 1)
			return false;
		*out = -log10(1.0 - v);
		return true;
	}
	return false;
}

static double px(const struct scale *s, double t)
{
	double span = s->hi - s->lo;
	return s->px0 + (t - s->lo) / span * (s->px1 - s->px0);
}

static double nice_step(double raw)
{
	if (!(raw > 0) || !isfinite(raw))
		return 1;
	double e = floor(log10(raw));
	double m = raw / pow(10, e);
	double n = m <= 1 ? 1 : m <= 2 ? 2 : m <= 5 ? 5 : 10;
	return n * pow(10, e);
}

/* Fix the range of a scale from the transformed data range [lo, hi]. */
static void scale_fit(struct scale *s, double lo, double hi, bool from_zero, bool integer)
{
	switch (s->kind) {
	case SVG_LINEAR:
		if (from_zero) {
			if (lo > 0)
				lo = 0;
			if (hi < 0)
				hi = 0;
		}
		if (hi - lo <= 0) {
			double pad = fabs(hi) > 0 ? fabs(hi) * 0.1 : 1;
			lo -= from_zero && lo == 0 ? 0 : pad;
			hi += pad;
		}
		s->step = nice_step((hi - lo) / 5);
		if (integer && s->step < 1)
			s->step = 1;
		s->lo = floor(lo / s->step + 1e-9) * s->step;
		s->hi = ceil(hi / s->step - 1e-9) * s->step;
		if (s->hi <= s->lo)
			s->hi = s->lo + s->step;
		break;
	case SVG_LOG10:
		s->lo = floor(lo + 1e-9);
		s->hi = ceil(hi - 1e-9);
		if (s->hi <= s->lo)
			s->hi = s->lo + 1;
		break;
	case SVG_INV_PCT:
		s->lo = 0;
		s->hi = ceil(hi - 1e-9);
		if (s->hi < 2)
			s->hi = 2;
		break;
	}
}

static void tick_label(char *out, size_t cap, double v, int decimals)
{
	if (fabs(v) < 1e-12)
		v = 0;
	if (decimals < 0)
		decimals = 0;
	if (fabs(v) >= 1e9)
		snprintf(out, cap, "%.3g", v);
	else
		units_fmt_thousands(out, cap, v, decimals);
}

struct tick {
	double t;        /* transformed position */
	char label[40];
	bool major;
};

/* Ticks of a fitted scale; at most cap. */
static size_t ticks(const struct scale *s, struct tick *tk, size_t cap)
{
	size_t n = 0;
	switch (s->kind) {
	case SVG_LINEAR: {
		int dec = (int)ceil(-log10(s->step) - 1e-9);
		for (double v = s->lo; v <= s->hi + s->step * 1e-6 && n < cap; v += s->step) {
			double vv = round(v / s->step) * s->step;
			tk[n].t = vv;
			tk[n].major = true;
			tick_label(tk[n].label, sizeof tk[n].label, vv, dec);
			n++;
		}
		break;
	}
	case SVG_LOG10: {
		bool subs = s->hi - s->lo <= 2;
		for (int k = (int)s->lo; k <= (int)s->hi && n < cap; k++) {
			static const double mult[3] = {1, 2, 5};
			for (int m = 0; m < (subs ? 3 : 1) && n < cap; m++) {
				double t = k + log10(mult[m]);
				if (t > s->hi + 1e-9)
					break;
				tk[n].t = t;
				tk[n].major = m == 0;
				tick_label(tk[n].label, sizeof tk[n].label, mult[m] * pow(10, k),
					   k < 0 ? -k : 0);
				n++;
			}
		}
		break;
	}
	case SVG_INV_PCT:
		for (int k = 0; k <= (int)s->hi && n < cap; k++) {
			tk[n].t = k;
			tk[n].major = true;
			if (k == 0)
				snprintf(tk[n].label, sizeof tk[n].label, "0%%");
			else if (k == 1)
				snprintf(tk[n].label, sizeof tk[n].label, "90%%");
			else if (k == 2)
				snprintf(tk[n].label, sizeof tk[n].label, "99%%");
			else {
				char nines[24];
				int z = k - 2 < 20 ? k - 2 : 20;
				memset(nines, '9', (size_t)z);
				nines[z] = '\0';
				snprintf(tk[n].label, sizeof tk[n].label, "99.%s%%", nines);
			}
			n++;
		}
		break;
	}
	return n;
}

/* ---- output helpers ---------------------------------------------------------- */

static void text_el(FILE *f, double x, double y, const char *anchor, int size, const char *extra,
		    const char *s)
{
	fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"%d\" text-anchor=\"%s\"%s%s>", x, y, size,
		anchor, extra ? " " : "", extra ? extra : "");
	esc_html(f, s);
	fputs("</text>\n", f);
}

static void svg_open(FILE *f, double h, const char *title)
{
	fprintf(f,
		"<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 %.0f %.0f\" width=\"%.0f\" "
		"height=\"%.0f\" role=\"img\" font-family=\"sans-serif\">\n",
		W, h, W, h);
	fputs("<title>", f);
	esc_html(f, title);
	fputs("</title>\n", f);
	fprintf(f, "<rect x=\"0\" y=\"0\" width=\"%.0f\" height=\"%.0f\" fill=\"#ffffff\"/>\n", W, h);
	text_el(f, W / 2, 20, "middle", 14, "font-weight=\"bold\"", title);
}

/* Close the memory stream: only then is *buf final. */
static char *finish(FILE *f, char **buf)
{
	fputs("</svg>\n", f);
	if (fclose(f) != 0) {
		free(*buf);
		return NULL;
	}
	return *buf;
}

/* The width of a legend entry (legend_entry) with this label. */
static double legend_width(const char *label)
{
	return 34 + 6.5 * (double)strlen(label ? label : "");
}

/* A legend row: entries left to right from x. */
static void legend_entry(FILE *f, double *x, double y, const char *col, bool dashed, bool box,
			 const char *label)
{
	if (box)
		fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"14\" height=\"10\" fill=\"%s\"/>\n", *x,
			y - 9, col);
	else
		fprintf(f,
			"<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" "
			"stroke-width=\"2.5\"%s/>\n",
			*x, y - 4, *x + 18, y - 4, col, dashed ? " stroke-dasharray=\"6 3\"" : "");
	text_el(f, *x + 22, y, "start", 11, NULL, label ? label : "");
	*x += legend_width(label);
}

/* Axes, grid and tick labels of a plot area. */
static void axes(FILE *f, const struct scale *xs, const struct scale *ys, bool x_ticks,
		 const char *xlabel, const char *ylabel, double top, double bottom)
{
	struct tick tk[64];
	size_t n = ticks(ys, tk, 64);
	for (size_t i = 0; i < n; i++) {
		double y = px(ys, tk[i].t);
		fprintf(f,
			"<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" "
			"stroke-width=\"1\"/>\n",
			xs->px0, y, xs->px1, y, tk[i].major ? "#dddddd" : "#f0f0f0");
		text_el(f, xs->px0 - 6, y + 4, "end", 11, NULL, tk[i].label);
	}
	n = x_ticks ? ticks(xs, tk, 64) : 0;
	for (size_t i = 0; i < n; i++) {
		double x = px(xs, tk[i].t);
		fprintf(f,
			"<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#999999\" "
			"stroke-width=\"1\"/>\n",
			x, bottom, x, bottom + 4);
		text_el(f, x, bottom + 16, "middle", 11, NULL, tk[i].label);
	}
	fprintf(f,
		"<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"none\" "
		"stroke=\"#999999\" stroke-width=\"1\"/>\n",
		xs->px0, top, xs->px1 - xs->px0, bottom - top);
	if (xlabel)
		text_el(f, (xs->px0 + xs->px1) / 2, bottom + 34, "middle", 12, NULL, xlabel);
	if (ylabel) {
		char rot[96];
		double cy = (top + bottom) / 2;
		snprintf(rot, sizeof rot, "transform=\"rotate(-90 16 %.1f)\"", cy);
		text_el(f, 16, cy + 4, "middle", 12, rot, ylabel);
	}
}

/* ---- line charts ------------------------------------------------------------- */

static bool panel_range(const struct svg_panel *p, double *xlo, double *xhi, double *ylo,
			double *yhi)
{
	bool any = false;
	*xlo = *ylo = INFINITY;
	*xhi = *yhi = -INFINITY;
	for (size_t s = 0; s < p->n_series; s++) {
		const struct svg_series *se = &p->series[s];
		for (size_t i = 0; i < se->n; i++) {
			double tx, ty;
			if (!tr(p->x.scale, se->x[i], &tx) || !tr(p->y.scale, se->y[i], &ty))
				continue;
			any = true;
			*xlo = fmin(*xlo, tx);
			*xhi = fmax(*xhi, tx);
			*ylo = fmin(*ylo, ty);
			*yhi = fmax(*yhi, ty);
		}
	}
	if (!any)
		return false;
	for (size_t i = 0; i < p->n_hmarks; i++) {
		double t;
		if (tr(p->y.scale, p->hmarks[i].v, &t)) {
			*ylo = fmin(*ylo, t);
			*yhi = fmax(*yhi, t);
		}
	}
	for (size_t i = 0; i < p->n_vmarks; i++) {
		double t;
		if (tr(p->x.scale, p->vmarks[i].v, &t)) {
			*xlo = fmin(*xlo, t);
			*xhi = fmax(*xhi, t);
		}
	}
	return true;
}

static void draw_panel(FILE *f, const struct svg_panel *p, double top)
{
	double xlo, xhi, ylo, yhi;
	struct scale xs = {.kind = p->x.scale, .px0 = ML, .px1 = W - MR};
	/* the legend in as many rows as its entries need (at most
	 * LEGEND_MAX_ROWS), the plot below it */
	size_t rows = 1;
	double lw = ML;
	for (size_t s = 0; s < p->n_series; s++) {
		double w = legend_width(p->series[s].label);
		if (lw > ML && lw + w > W - MR && rows < LEGEND_MAX_ROWS) {
			rows++;
			lw = ML;
		}
		lw += w;
	}
	double plot_top = top + LEGEND_H * (double)rows + 6, plot_bottom = top + PANEL_H - BOTTOM_H;
	struct scale ys = {.kind = p->y.scale, .px0 = plot_bottom, .px1 = plot_top};
	if (!panel_range(p, &xlo, &xhi, &ylo, &yhi)) {
		text_el(f, W / 2, top + PANEL_H / 2, "middle", 12, NULL, "no data");
		return;
	}
	scale_fit(&xs, xlo, xhi, p->x.from_zero, p->x.integer);
	scale_fit(&ys, ylo, yhi, p->y.from_zero, p->y.integer);
	axes(f, &xs, &ys, true, p->x.label, p->y.label, plot_top, plot_bottom);

	double lx = ML, ly = top + LEGEND_H - 4;
	for (size_t s = 0, row = 1; s < p->n_series; s++) {
		if (lx > ML && lx + legend_width(p->series[s].label) > W - MR && row < rows) {
			row++;
			lx = ML;
			ly += LEGEND_H;
		}
		legend_entry(f, &lx, ly, color(p->series[s].color), p->series[s].dashed, false,
			     p->series[s].label);
	}

	for (size_t i = 0; i < p->n_vmarks; i++) {
		double t;
		if (!tr(xs.kind, p->vmarks[i].v, &t))
			continue;
		double x = px(&xs, t);
		fprintf(f,
			"<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#888888\" "
			"stroke-width=\"1\" stroke-dasharray=\"3 3\"/>\n",
			x, plot_top, x, plot_bottom);
		if (p->vmarks[i].label) {
			/* right of the line, or left of it where it would run past the
			 * chart's edge (about 6 px a character at 10 px) */
			bool left = x + 3 + 6.0 * (double)strlen(p->vmarks[i].label) > W - 2;
			text_el(f, left ? x - 3 : x + 3, plot_top + 11, left ? "end" : "start", 10,
				"fill=\"#555555\"", p->vmarks[i].label);
		}
	}
	for (size_t i = 0; i < p->n_hmarks; i++) {
		double t;
		if (!tr(ys.kind, p->hmarks[i].v, &t))
			continue;
		double y = px(&ys, t);
		fprintf(f,
			"<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#000000\" "
			"stroke-width=\"1.5\" stroke-dasharray=\"8 4\"/>\n",
			xs.px0, y, xs.px1, y);
		if (p->hmarks[i].label)
			text_el(f, xs.px1 - 4, y - 5, "end", 11, NULL, p->hmarks[i].label);
	}

	for (size_t s = 0; s < p->n_series; s++) {
		const struct svg_series *se = &p->series[s];
		const char *col = color(se->color);
		bool open = false;
		size_t drawn = 0;
		for (size_t i = 0; i < se->n; i++) {
			double tx, ty;
			if (!tr(xs.kind, se->x[i], &tx) || !tr(ys.kind, se->y[i], &ty)) {
				if (open)
					fputs("\"/>\n", f);
				open = false;
				continue;
			}
			if (!open) {
				fprintf(f,
					"<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\"%s "
					"points=\"",
					col, se->dashed ? " stroke-dasharray=\"6 3\"" : "");
				open = true;
			} else {
				fputc(' ', f);
			}
			fprintf(f, "%.1f,%.1f", px(&xs, tx), px(&ys, ty));
			drawn++;
		}
		if (open)
			fputs("\"/>\n", f);
		if (!se->markers && drawn > 1)
			continue;
		for (size_t i = 0; i < se->n; i++) {
			double tx, ty;
			if (!tr(xs.kind, se->x[i], &tx) || !tr(ys.kind, se->y[i], &ty))
				continue;
			fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3.5\" fill=\"%s\"/>\n",
				px(&xs, tx), px(&ys, ty), col);
		}
	}
}

char *svg_line_chart(const char *title, const struct svg_panel *panels, size_t n_panels)
{
	if (!n_panels || n_panels > SVG_MAX_PANELS)
		return NULL;
	bool any = false;
	for (size_t i = 0; i < n_panels; i++) {
		double a, b, c, d;
		if (panel_range(&panels[i], &a, &b, &c, &d))
			any = true;
	}
	if (!any)
		return NULL;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (!f)
		return NULL;
	double h = TITLE_H + PANEL_H * (double)n_panels;
	svg_open(f, h, title ? title : "");
	for (size_t i = 0; i < n_panels; i++)
		draw_panel(f, &panels[i], TITLE_H + PANEL_H * (double)i);
	return finish(f, &buf);
}

/* ---- bar charts -------------------------------------------------------------- */

bool svg_wants_log(double lo, double hi)
{
	return lo > 0 && hi > 0 && isfinite(lo) && isfinite(hi) && hi / lo > 30;
}

char *svg_bar_chart(const char *title, const char *y_label, const struct svg_bar *bars, size_t n,
		    double ref, const char *ref_label, bool log)
{
	enum svg_scale kind = log ? SVG_LOG10 : SVG_LINEAR;
	double lo = INFINITY, hi = -INFINITY;
	bool any = false;
	for (size_t i = 0; i < n; i++) {
		double vals[3] = {bars[i].v, bars[i].lo, bars[i].hi};
		for (int k = 0; k < (bars[i].whisker ? 3 : 1); k++) {
			double t;
			if (!tr(kind, vals[k], &t))
				continue;
			if (k == 0)
				any = true;
			lo = fmin(lo, t);
			hi = fmax(hi, t);
		}
	}
	if (!any)
		return NULL;
	double tref;
	if (tr(kind, ref, &tref)) {
		lo = fmin(lo, tref);
		hi = fmax(hi, tref);
	}
	/* distinct labels → colors, in order of first appearance */
	const char *labels[8];
	size_t n_labels = 0;
	size_t n_groups = 0;
	for (size_t i = 0; i < n; i++) {
		if (i == 0 || strcmp(bars[i].group ? bars[i].group : "",
				     bars[i - 1].group ? bars[i - 1].group : "") != 0)
			n_groups++;
		bool seen = false;
		for (size_t k = 0; k < n_labels; k++)
			if (strcmp(labels[k], bars[i].label ? bars[i].label : "") == 0)
				seen = true;
		if (!seen && n_labels < 8)
			labels[n_labels++] = bars[i].label ? bars[i].label : "";
	}
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (!f)
		return NULL;
	double h = TITLE_H + PANEL_H;
	svg_open(f, h, title ? title : "");
	double top = TITLE_H, plot_top = top + LEGEND_H + 6, plot_bottom = top + PANEL_H - BOTTOM_H;
	struct scale xs = {.kind = SVG_LINEAR, .lo = 0, .hi = 1, .px0 = ML, .px1 = W - MR};
	struct scale ys = {.kind = kind, .px0 = plot_bottom, .px1 = plot_top};
	scale_fit(&ys, lo, hi, true, false);
	axes(f, &xs, &ys, false, NULL, y_label, plot_top, plot_bottom);
	double lx = ML;
	for (size_t k = 0; k < n_labels; k++)
		legend_entry(f, &lx, top + LEGEND_H - 4, color((int)k), false, true, labels[k]);

	double gw = (xs.px1 - xs.px0) / (double)n_groups;
	size_t g = 0, start = 0;
	double base = kind == SVG_LOG10 ? px(&ys, ys.lo) : px(&ys, 0);
	for (size_t i = 0; i <= n; i++) {
		bool boundary = i == n || (i > start && strcmp(bars[i].group ? bars[i].group : "",
							       bars[start].group ? bars[start].group : "") != 0);
		if (!boundary)
			continue;
		size_t m = i - start;
		double gx = xs.px0 + gw * (double)g;
		double bw = gw * 0.8 / (double)m;
		for (size_t b = 0; b < m; b++) {
			const struct svg_bar *bar = &bars[start + b];
			int ci = 0;
			for (size_t k = 0; k < n_labels; k++)
				if (strcmp(labels[k], bar->label ? bar->label : "") == 0)
					ci = (int)k;
			double x = gx + gw * 0.1 + bw * (double)b;
			double t;
			if (tr(kind, bar->v, &t)) {
				double y = px(&ys, t);
				double y0 = fmin(y, base), hh = fabs(base - y);
				if (hh < 1)
					hh = 1;
				fprintf(f,
					"<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
					"fill=\"%s\"/>\n",
					x + 1, y0, bw - 2, hh, color(ci));
			}
			double tlo, thi;
			if (bar->whisker && tr(kind, bar->lo, &tlo) && tr(kind, bar->hi, &thi)) {
				double cx = x + bw / 2, ylo = px(&ys, tlo), yhi = px(&ys, thi);
				fprintf(f,
					"<path d=\"M%.1f %.1fV%.1fM%.1f %.1fH%.1fM%.1f %.1fH%.1f\" "
					"stroke=\"#000000\" stroke-width=\"1.5\" fill=\"none\"/>\n",
					cx, ylo, yhi, cx - bw / 4, ylo, cx + bw / 4, cx - bw / 4, yhi,
					cx + bw / 4);
			}
		}
		text_el(f, gx + gw / 2, plot_bottom + 16, "middle", 11, NULL,
			bars[start].group ? bars[start].group : "");
		g++;
		start = i;
	}
	if (tr(kind, ref, &tref)) {
		double y = px(&ys, tref);
		fprintf(f,
			"<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#000000\" "
			"stroke-width=\"1.5\" stroke-dasharray=\"8 4\"/>\n",
			xs.px0, y, xs.px1, y);
		if (ref_label)
			text_el(f, xs.px1 - 4, y - 5, "end", 11, NULL, ref_label);
	}
	return finish(f, &buf);
}
