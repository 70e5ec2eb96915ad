/* pacer — the charts of one phase and of a run's series (charts_int.h):
 * spectrum, histogram, timeline and status. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "doc/keys.h"
#include "report/charts_int.h"
#include "report/render_int.h"
#include "report/svg.h"
#include "stats/hist.h"

void spectrum_points(const json_t *timing, struct xy *a)
{
	struct hist h;
	char err[128];
	if (rr_timing_hist(timing, &h, err, sizeof err) != 0)
		return;
	size_t n = hist_spectrum(&h, 5, NULL, 0);
	struct hist_pct_row *rows = n ? calloc(n, sizeof *rows) : NULL;
	if (n && !rows) {
		a->oom = true;
		hist_free(&h);
		return;
	}
	n = hist_spectrum(&h, 5, rows, n);
	for (size_t i = 0; i < n; i++)
		if (rows[i].percentile < 1.0)
			xy_push(a, rows[i].percentile, (double)rows[i].value / 1e6);
	free(rows);
	hist_free(&h);
}

int spectrum_chart(struct chart_set *cs, const json_t *phase, const char *what)
{
	struct xy lat = {0}, svc = {0};
	spectrum_points(rr_get(phase, KEY_LATENCY), &lat);
	spectrum_points(rr_get(phase, KEY_SERVICE_TIME), &svc);
	int rc = lat.oom || svc.oom ? -ENOMEM : 0;
	if (!rc && (lat.n || svc.n)) {
		double lo = INFINITY, hi = 0;
		for (size_t i = 0; i < lat.n; i++) {
			lo = fmin(lo, lat.y[i]);
			hi = fmax(hi, lat.y[i]);
		}
		for (size_t i = 0; i < svc.n; i++) {
			lo = fmin(lo, svc.y[i]);
			hi = fmax(hi, svc.y[i]);
		}
		struct svg_series s[2];
		size_t ns = 0;
		if (lat.n)
			s[ns++] = (struct svg_series){"latency (from scheduled time)", lat.x, lat.y,
						      lat.n, 0, false, false};
		if (svc.n)
			s[ns++] = (struct svg_series){"service time (write to last byte)", svc.x,
						      svc.y, svc.n, 2, true, false};
		struct svg_panel p = {
			.x = {"percentile", SVG_INV_PCT, false},
			.y = {"latency (ms)", svg_wants_log(lo, hi) ? SVG_LOG10 : SVG_LINEAR, true},
			.series = s,
			.n_series = ns,
		};
		char title[200];
		snprintf(title, sizeof title, "Latency by percentile%s%s", what ? ", " : "",
			 what ? what : "");
		char *svg = svg_line_chart(title, &p, 1);
		chart_add(cs, "spectrum", title, svg);
	}
	xy_free(&lat);
	xy_free(&svc);
	return rc;
}

/* ---- histogram ------------------------------------------------------------ */

#define HISTO_BINS_PER_DECADE 10
#define HISTO_MAX_BINS 160 /* 16 decades: 1 ns to 10^16 ns */

void histogram_points(const json_t *timing, struct xy *a)
{
	struct hist h;
	char err[128];
	if (rr_timing_hist(timing, &h, err, sizeof err) != 0)
		return;
	double bins[HISTO_MAX_BINS] = {0};
	long first = HISTO_MAX_BINS, last = -1;
	double total = 0;
	size_t cur = 0;
	uint64_t v, n;
	while (hist_next_nonzero(&h, &cur, &v, &n)) {
		double lv = log10(v > 0 ? (double)v : 1.0) * HISTO_BINS_PER_DECADE;
		long b = (long)floor(lv + 1e-9);
		if (b < 0)
			b = 0;
		if (b >= HISTO_MAX_BINS)
			b = HISTO_MAX_BINS - 1;
		bins[b] += (double)n;
		total += (double)n;
		if (b < first)
			first = b;
		if (b > last)
			last = b;
	}
	hist_free(&h);
	if (last < 0 || total <= 0)
		return;
	/* ns → ms on the axis: bin b spans [10^(b/10), 10^((b+1)/10)) ns */
	double lo_ms = pow(10.0, (double)first / HISTO_BINS_PER_DECADE) / 1e6;
	xy_push(a, lo_ms, 0);
	for (long b = first; b <= last; b++) {
		double x0 = pow(10.0, (double)b / HISTO_BINS_PER_DECADE) / 1e6;
		double x1 = pow(10.0, (double)(b + 1) / HISTO_BINS_PER_DECADE) / 1e6;
		double pct = bins[b] / total * 100;
		xy_push(a, x0, pct);
		xy_push(a, x1, pct);
	}
	xy_push(a, pow(10.0, (double)(last + 1) / HISTO_BINS_PER_DECADE) / 1e6, 0);
}

/* The latency distribution of a phase (histogram_points). */
int histogram_chart(struct chart_set *cs, const json_t *phase, const char *what)
{
	struct xy a = {0};
	histogram_points(rr_get(phase, KEY_LATENCY), &a);
	if (!a.n && !a.oom)
		return 0;
	int rc = a.oom ? -ENOMEM : 0;
	if (!rc) {
		struct svg_series s = {"share of requests per bin (10 a decade)", a.x, a.y, a.n, 0,
				       false, false};
		struct svg_panel p = {
			.x = {"latency (ms, from scheduled time)", SVG_LOG10, false},
			.y = {"requests (%)", SVG_LINEAR, true},
			.series = &s,
			.n_series = 1,
		};
		char title[200];
		snprintf(title, sizeof title, "Latency distribution%s%s", what ? ", " : "",
			 what ? what : "");
		chart_add(cs, "histogram", title, svg_line_chart(title, &p, 1));
	}
	xy_free(&a);
	return rc;
}

/* ---- timeline -------------------------------------------------------------- */

/* A break in the status chart's lines (status classes, connection
 * failures): svg.c starts a new polyline after a point it cannot draw. */
static void status_break(struct timeline *t)
{
	for (int k = 0; k < 5; k++)
		if (t->cls[k].n)
			xy_push(&t->cls[k], NAN, NAN);
	if (t->transport.n)
		xy_push(&t->transport, NAN, NAN);
	if (t->connf.n)
		xy_push(&t->connf, NAN, NAN);
}

/* A break in every line (between steps). */
void timeline_break(struct timeline *t)
{
	if (t->rate.n)
		xy_push(&t->rate, NAN, NAN);
	if (t->err.n)
		xy_push(&t->err, NAN, NAN);
	if (t->p50.n)
		xy_push(&t->p50, NAN, NAN);
	if (t->p99.n)
		xy_push(&t->p99, NAN, NAN);
	if (t->drain_rate.n)
		xy_push(&t->drain_rate, NAN, NAN);
	if (t->drain_p99.n)
		xy_push(&t->drain_p99, NAN, NAN);
	status_break(t);
	if (t->unsent.n)
		xy_push(&t->unsent, NAN, NAN);
	t->in_drain = false;
}

/* The status-class and connection-failure points of one second (drain
 * seconds too, after a break in the lines). */
static void status_point(struct timeline *t, const json_t *pt, double ts, bool drain)
{
	const json_t *bc = rr_obj(pt, KEY_BY_CLASS);
	if (!bc)
		return;
	t->has_cls = true;
	if (drain && !t->in_drain)
		status_break(t);
	t->in_drain = drain;
	static const char *const names[5] = {"1xx", "2xx", "3xx", "4xx", "5xx"};
	for (int k = 0; k < 5; k++) {
		double v = rr_num_or(bc, names[k], 0);
		xy_push(&t->cls[k], ts, v);
		if (v > 0)
			t->any_cls[k] = true;
	}
	double tr = rr_num_or(pt, KEY_TRANSPORT_ERRORS, 0);
	xy_push(&t->transport, ts, tr);
	if (tr > 0)
		t->any_transport = true;
	double cf = 0;
	const json_t *cfo = rr_obj(pt, KEY_CONNECT_FAILURES);
	const char *k;
	const json_t *v;
	json_object_foreach((json_t *)cfo, k, v)
		cf += json_is_number(v) ? json_number_value(v) : 0;
	xy_push(&t->connf, ts, cf);
	if (cf > 0)
		t->any_connf = true;
}

/* A panel on the timeline's time axis with its marks (the phases' and
 * steps' boundaries). */
static struct svg_panel tl_panel(const struct timeline *t, const char *xlabel, const char *ylabel,
				 bool log, const struct svg_series *series, size_t n)
{
	return (struct svg_panel){.x = {xlabel, SVG_LINEAR, true},
				  .y = {ylabel, log ? SVG_LOG10 : SVG_LINEAR, true},
				  .series = series,
				  .n_series = n,
				  .vmarks = t->marks,
				  .n_vmarks = t->n_marks};
}

/* Points of one series; each second [t, t+1) is drawn at its middle. The
 * seconds less than half inside the measured phase (of meas_s seconds; NAN:
 * unknown) hold the drain's responses: they go to the drain series, so the
 * lines do not drop to zero at each step's end. */
void timeline_points(struct timeline *t, const json_t *series, double t0, double meas_s)
{
	size_t i;
	const json_t *pt;
	json_array_foreach(series, i, pt) {
		double rel = rr_num_or(pt, KEY_T_S, (double)i);
		double ts = rel + t0 + 0.5;
		double c, e, p50, p99;
		bool drain = isfinite(meas_s) && meas_s > 0 && rel + 0.5 >= meas_s;
		status_point(t, pt, ts, drain);
		if (drain) {
			if (rr_num(pt, KEY_COMPLETED, &c))
				xy_push(&t->drain_rate, ts, c);
			if (rr_num(pt, KEY_P99_US, &p99) && !(rr_num_or(pt, KEY_COMPLETED, 1) == 0))
				xy_push(&t->drain_p99, ts, p99 / 1e3);
			continue;
		}
		if (rr_num(pt, KEY_COMPLETED, &c))
			xy_push(&t->rate, ts, c);
		if (rr_num(pt, KEY_ERRORS, &e)) {
			xy_push(&t->err, ts, e);
			if (e > 0)
				t->any_err = true;
		}
		double u;
		if (rr_num(pt, KEY_UNSENT, &u)) {
			xy_push(&t->unsent, ts, u);
			if (u > 0)
				t->any_unsent = true;
		}
		if (rr_num(pt, KEY_P50_US, &p50) && !(rr_num_or(pt, KEY_COMPLETED, 1) == 0))
			xy_push(&t->p50, ts, p50 / 1e3);
		if (rr_num(pt, KEY_P99_US, &p99) && !(rr_num_or(pt, KEY_COMPLETED, 1) == 0))
			xy_push(&t->p99, ts, p99 / 1e3);
	}
}

int timeline_chart(struct chart_set *cs, struct timeline *t, const char *xlabel,
		   const char *title)
{
	int rc = t->rate.oom || t->p50.oom || t->p99.oom || t->err.oom || t->drain_rate.oom ||
			 t->drain_p99.oom || t->unsent.oom
		 ? -ENOMEM
		 : 0;
	if (rc || !t->rate.n)
		return rc;
	struct svg_series top[4] = {
		{"responses/s", t->rate.x, t->rate.y, t->rate.n, 0, false, t->rate.n < 40},
		{"errors/s", t->err.x, t->err.y, t->err.n, 1, false, t->err.n < 40},
		{"drain (after the schedule)", t->drain_rate.x, t->drain_rate.y, t->drain_rate.n, 7,
		 true, true},
	};
	size_t n_top = 1;
	if (t->any_err)
		n_top = 2;
	else
		top[1] = top[2];
	if (t->drain_rate.n)
		n_top++;
	if (t->any_unsent)
		top[n_top++] = (struct svg_series){"unsent at the second's end", t->unsent.x,
						   t->unsent.y, t->unsent.n, 3, true,
						   t->unsent.n < 40};
	double lo = INFINITY, hi = 0;
	for (size_t i = 0; i < t->p99.n; i++) {
		lo = fmin(lo, t->p50.n > i ? fmin(t->p50.y[i], t->p99.y[i]) : t->p99.y[i]);
		hi = fmax(hi, t->p99.y[i]);
	}
	for (size_t i = 0; i < t->drain_p99.n; i++)
		if (isfinite(t->drain_p99.y[i])) {
			lo = fmin(lo, t->drain_p99.y[i]);
			hi = fmax(hi, t->drain_p99.y[i]);
		}
	struct svg_series bottom[3] = {
		{"p50", t->p50.x, t->p50.y, t->p50.n, 2, false, t->p50.n < 40},
		{"p99", t->p99.x, t->p99.y, t->p99.n, 1, false, t->p99.n < 40},
		{"p99 in the drain", t->drain_p99.x, t->drain_p99.y, t->drain_p99.n, 7, true, true},
	};
	struct svg_panel p[2] = {
		tl_panel(t, xlabel, "responses per second", false, top, n_top),
		tl_panel(t, xlabel, "latency (ms)", svg_wants_log(lo, hi), bottom,
			 t->drain_p99.n ? 3 : 2),
	};
	chart_add(cs, "timeline", title, svg_line_chart(title, p, t->p99.n ? 2 : 1));
	return 0;
}

void timeline_free(struct timeline *t)
{
	xy_free(&t->rate);
	xy_free(&t->p50);
	xy_free(&t->p99);
	xy_free(&t->err);
	xy_free(&t->drain_rate);
	xy_free(&t->drain_p99);
	for (int k = 0; k < 5; k++)
		xy_free(&t->cls[k]);
	xy_free(&t->transport);
	xy_free(&t->connf);
	xy_free(&t->unsent);
}

/* Responses per second by status class and the connection failures per
 * second, on the timeline's axis and marks: 1xx-3xx above, and, when there
 * are any, 4xx, 5xx and the connection failures below on their own scale
 * (a few errors a second stay visible beside thousands of 2xx). */
int status_chart(struct chart_set *cs, const struct timeline *t, const char *xlabel,
		 const char *title)
{
	bool oom = t->transport.oom || t->connf.oom;
	for (int k = 0; k < 5; k++)
		oom = oom || t->cls[k].oom;
	if (oom)
		return -ENOMEM;
	if (!t->has_cls)
		return 0;
	static const char *const labels[5] = {"1xx/s", "2xx/s", "3xx/s", "4xx/s", "5xx/s"};
	static const int colors[5] = {7, 2, 0, 3, 1};
	struct svg_series top[3], bottom[4];
	size_t nt = 0, nb = 0;
	for (int k = 0; k < 5; k++) {
		struct svg_series se = {labels[k], t->cls[k].x, t->cls[k].y, t->cls[k].n, colors[k],
					false, t->cls[k].n < 40};
		if (k < 3 && (t->any_cls[k] || k == 1))
			top[nt++] = se;
		else if (k >= 3 && t->any_cls[k])
			bottom[nb++] = se;
	}
	if (t->any_transport)
		bottom[nb++] = (struct svg_series){"failed on the connection/s", t->transport.x,
						   t->transport.y, t->transport.n, 4, true,
						   t->transport.n < 40};
	if (t->any_connf)
		bottom[nb++] = (struct svg_series){"connects failed/s", t->connf.x, t->connf.y,
						   t->connf.n, 5, true, t->connf.n < 40};
	struct svg_panel p[2] = {
		tl_panel(t, xlabel, "responses per second", false, top, nt),
		tl_panel(t, xlabel, "errors per second", false, bottom, nb),
	};
	chart_add(cs, "status", title, svg_line_chart(title, p, nb ? 2 : 1));
	return 0;
}

int run_charts(const json_t *root, struct chart_set *cs)
{
	int rc = spectrum_chart(cs, rr_get(root, KEY_MEASURE), "measured phase");
	if (!rc)
		rc = histogram_chart(cs, rr_get(root, KEY_MEASURE), "measured phase");
	if (rc)
		return rc;
	struct timeline t;
	memset(&t, 0, sizeof t);
	const json_t *series = rr_arr(root, KEY_SERIES);
	if (series)
		timeline_points(&t, series, 0, rr_num_or(root, "measure.duration_s", NAN));
	double planned;
	if (rr_num(root, "plan.duration_s", &planned) && planned > 0) {
		snprintf(t.mark_text[0], sizeof t.mark_text[0], "schedule ends");
		t.marks[0] = (struct svg_mark){planned, t.mark_text[0]};
		t.n_marks = 1;
	}
	rc = timeline_chart(cs, &t, "seconds into the measured phase (by completion time)",
			    "Responses and latency per second");
	if (!rc)
		rc = status_chart(cs, &t, "seconds into the measured phase (by completion time)",
				  "Status codes and connection failures per second");
	timeline_free(&t);
	return rc;
}
