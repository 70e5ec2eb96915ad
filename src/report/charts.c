/* pacer — which charts a result gets, and their data (drawn by svg.c).
 *
 *   spectrum         latency and service time percentile spectrum, log
 *                    1/(1-p) axis (run: measure; ramp: the focus step)
 *   histogram        latency distribution: the share of requests in each of
 *                    10 log-spaced bins a decade (beside the spectrum)
 *   status           responses per second by status class, and the requests
 *                    that failed on the connection and the connects that
 *                    failed, per second (results whose series carry
 *                    by_class), drain seconds apart
 *   timeline         responses/s and p50/p99 per second, and the requests
 *                    unsent at each second's end when any were (ramp: all
 *                    steps end to end with step boundaries, or per-step
 *                    points)
 *   latency-vs-load  ramp: p50/p99 against offered rate with the SLO line;
 *                    achieved against offered below
 *   compare-ratios   compare: each variant's ratio to the baseline with its
 *                    95 % interval
 *   compare-latency  compare: median latency percentiles per variant with
 *                    min-max whiskers
 *   compare-throughput  compare: median throughput (or capacity) per variant */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report/render_int.h"
#include "report/svg.h"
#include "stats/hist.h"

void charts_free(struct chart_set *cs)
{
	for (size_t i = 0; i < cs->n; i++)
		free(cs->c[i].svg);
	memset(cs, 0, sizeof *cs);
}

const struct chart *charts_find(const struct chart_set *cs, const char *name)
{
	for (size_t i = 0; i < cs->n; i++)
		if (strcmp(cs->c[i].name, name) == 0)
			return &cs->c[i];
	return NULL;
}

/* Adds svg (taking it) under name. A NULL svg (nothing drawable) adds nothing. */
static void add(struct chart_set *cs, const char *name, const char *title, char *svg)
{
	if (!svg)
		return;
	if (cs->n == CHART_MAX) {
		free(svg);
		return;
	}
	struct chart *c = &cs->c[cs->n++];
	snprintf(c->name, sizeof c->name, "%s", name);
	snprintf(c->title, sizeof c->title, "%s", title);
	c->svg = svg;
}

/* A growable pair of double arrays. */
struct xy {
	double *x, *y;
	size_t n, cap;
	bool oom;
};

static void xy_push(struct xy *a, double x, double y)
{
	if (a->oom)
		return;
	if (a->n == a->cap) {
		size_t nc = a->cap ? a->cap * 2 : 64;
		double *nx = realloc(a->x, nc * sizeof *nx);
		if (!nx) {
			a->oom = true;
			return;
		}
		a->x = nx;
		double *ny = realloc(a->y, nc * sizeof *ny);
		if (!ny) {
			a->oom = true;
			return;
		}
		a->y = ny;
		a->cap = nc;
	}
	a->x[a->n] = x;
	a->y[a->n] = y;
	a->n++;
}

static void xy_free(struct xy *a)
{
	free(a->x);
	free(a->y);
	memset(a, 0, sizeof *a);
}

/* ---- spectrum ------------------------------------------------------------- */

/* Percentile rows of a timing's histogram into a: x = fraction, y = ms. */
static void spectrum_of(const json_t *timing, struct xy *a)
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

static int spectrum_chart(struct chart_set *cs, const json_t *phase, const char *what)
{
	struct xy lat = {0}, svc = {0};
	spectrum_of(rr_get(phase, "latency"), &lat);
	spectrum_of(rr_get(phase, "service_time"), &svc);
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
		add(cs, "spectrum", title, svg);
	}
	xy_free(&lat);
	xy_free(&svc);
	return rc;
}

/* ---- histogram ------------------------------------------------------------ */

#define HISTO_BINS_PER_DECADE 10
#define HISTO_MAX_BINS 160 /* 16 decades: 1 ns to 10^16 ns */

/* The latency distribution of a phase: the share of its requests in each
 * log-spaced bin, drawn as a step outline over a log latency axis (a
 * bucket of the histogram goes to the bin holding its low value: bins are
 * far wider than the buckets' 0.1 %). */
static int histogram_chart(struct chart_set *cs, const json_t *phase, const char *what)
{
	struct hist h;
	char err[128];
	if (rr_timing_hist(rr_get(phase, "latency"), &h, err, sizeof err) != 0)
		return 0;
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
		return 0;
	struct xy a = {0};
	/* ns → ms on the axis: bin b spans [10^(b/10), 10^((b+1)/10)) ns */
	double lo_ms = pow(10.0, (double)first / HISTO_BINS_PER_DECADE) / 1e6;
	xy_push(&a, lo_ms, 0);
	for (long b = first; b <= last; b++) {
		double x0 = pow(10.0, (double)b / HISTO_BINS_PER_DECADE) / 1e6;
		double x1 = pow(10.0, (double)(b + 1) / HISTO_BINS_PER_DECADE) / 1e6;
		double pct = bins[b] / total * 100;
		xy_push(&a, x0, pct);
		xy_push(&a, x1, pct);
	}
	xy_push(&a, pow(10.0, (double)(last + 1) / HISTO_BINS_PER_DECADE) / 1e6, 0);
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
		add(cs, "histogram", title, svg_line_chart(title, &p, 1));
	}
	xy_free(&a);
	return rc;
}

/* ---- timeline -------------------------------------------------------------- */

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

/* A break in every line (between steps): svg.c starts a new polyline after a
 * point it cannot draw. */
static void timeline_break(struct timeline *t)
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
	for (int k = 0; k < 5; k++)
		if (t->cls[k].n)
			xy_push(&t->cls[k], NAN, NAN);
	if (t->transport.n)
		xy_push(&t->transport, NAN, NAN);
	if (t->connf.n)
		xy_push(&t->connf, NAN, NAN);
	if (t->unsent.n)
		xy_push(&t->unsent, NAN, NAN);
	t->in_drain = false;
}

/* The status-class and connection-failure points of one second (drain
 * seconds too, after a break in the lines). */
static void status_point(struct timeline *t, const json_t *pt, double ts, bool drain)
{
	const json_t *bc = rr_obj(pt, "by_class");
	if (!bc)
		return;
	t->has_cls = true;
	if (drain && !t->in_drain) {
		for (int k = 0; k < 5; k++)
			if (t->cls[k].n)
				xy_push(&t->cls[k], NAN, NAN);
		if (t->transport.n)
			xy_push(&t->transport, NAN, NAN);
		if (t->connf.n)
			xy_push(&t->connf, NAN, NAN);
	}
	t->in_drain = drain;
	static const char *const names[5] = {"1xx", "2xx", "3xx", "4xx", "5xx"};
	for (int k = 0; k < 5; k++) {
		double v = rr_num_or(bc, names[k], 0);
		xy_push(&t->cls[k], ts, v);
		if (v > 0)
			t->any_cls[k] = true;
	}
	double tr = rr_num_or(pt, "transport_errors", 0);
	xy_push(&t->transport, ts, tr);
	if (tr > 0)
		t->any_transport = true;
	double cf = 0;
	const json_t *cfo = rr_obj(pt, "connect_failures");
	const char *k;
	const json_t *v;
	json_object_foreach((json_t *)cfo, k, v)
		cf += json_is_number(v) ? json_number_value(v) : 0;
	xy_push(&t->connf, ts, cf);
	if (cf > 0)
		t->any_connf = true;
}

/* Points of one series; each second [t, t+1) is drawn at its middle. The
 * seconds less than half inside the measured phase (of meas_s seconds; NAN:
 * unknown) hold the drain's responses: they go to the drain series, so the
 * lines do not drop to zero at each step's end. */
static void timeline_points(struct timeline *t, const json_t *series, double t0, double meas_s)
{
	size_t i;
	const json_t *pt;
	json_array_foreach(series, i, pt) {
		double rel = rr_num_or(pt, "t_s", (double)i);
		double ts = rel + t0 + 0.5;
		double c, e, p50, p99;
		bool drain = isfinite(meas_s) && meas_s > 0 && rel + 0.5 >= meas_s;
		status_point(t, pt, ts, drain);
		if (drain) {
			if (rr_num(pt, "completed", &c))
				xy_push(&t->drain_rate, ts, c);
			if (rr_num(pt, "p99_us", &p99) && !(rr_num_or(pt, "completed", 1) == 0))
				xy_push(&t->drain_p99, ts, p99 / 1e3);
			continue;
		}
		if (rr_num(pt, "completed", &c))
			xy_push(&t->rate, ts, c);
		if (rr_num(pt, "errors", &e)) {
			xy_push(&t->err, ts, e);
			if (e > 0)
				t->any_err = true;
		}
		double u;
		if (rr_num(pt, "unsent", &u)) {
			xy_push(&t->unsent, ts, u);
			if (u > 0)
				t->any_unsent = true;
		}
		if (rr_num(pt, "p50_us", &p50) && !(rr_num_or(pt, "completed", 1) == 0))
			xy_push(&t->p50, ts, p50 / 1e3);
		if (rr_num(pt, "p99_us", &p99) && !(rr_num_or(pt, "completed", 1) == 0))
			xy_push(&t->p99, ts, p99 / 1e3);
	}
}

static int timeline_chart(struct chart_set *cs, struct timeline *t, const char *xlabel,
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
		{.x = {xlabel, SVG_LINEAR, true},
		 .y = {"responses per second", SVG_LINEAR, true},
		 .series = top,
		 .n_series = n_top,
		 .vmarks = t->marks,
		 .n_vmarks = t->n_marks},
		{.x = {xlabel, SVG_LINEAR, true},
		 .y = {"latency (ms)", svg_wants_log(lo, hi) ? SVG_LOG10 : SVG_LINEAR, true},
		 .series = bottom,
		 .n_series = t->drain_p99.n ? 3 : 2,
		 .vmarks = t->marks,
		 .n_vmarks = t->n_marks},
	};
	add(cs, "timeline", title, svg_line_chart(title, p, t->p99.n ? 2 : 1));
	return 0;
}

static void timeline_free(struct timeline *t)
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
static int status_chart(struct chart_set *cs, const struct timeline *t, const char *xlabel,
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
		{.x = {xlabel, SVG_LINEAR, true},
		 .y = {"responses per second", SVG_LINEAR, true},
		 .series = top,
		 .n_series = nt,
		 .vmarks = t->marks,
		 .n_vmarks = t->n_marks},
		{.x = {xlabel, SVG_LINEAR, true},
		 .y = {"errors per second", SVG_LINEAR, true},
		 .series = bottom,
		 .n_series = nb,
		 .vmarks = t->marks,
		 .n_vmarks = t->n_marks},
	};
	add(cs, "status", title, svg_line_chart(title, p, nb ? 2 : 1));
	return 0;
}

static int run_charts(const json_t *root, struct chart_set *cs)
{
	int rc = spectrum_chart(cs, rr_get(root, "measure"), "measured phase");
	if (!rc)
		rc = histogram_chart(cs, rr_get(root, "measure"), "measured phase");
	if (rc)
		return rc;
	struct timeline t;
	memset(&t, 0, sizeof t);
	const json_t *series = rr_arr(root, "series");
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

/* ---- ramp ---------------------------------------------------------------------- */

struct by_rate {
	double rate;
	size_t index;
};

/* By rate, then by position: a total order, so the sort is deterministic. */
static int by_rate_cmp(const void *a, const void *b)
{
	const struct by_rate *x = a, *y = b;
	if (x->rate != y->rate)
		return x->rate < y->rate ? -1 : 1;
	return x->index < y->index ? -1 : x->index > y->index;
}

static int ramp_load_chart(const json_t *root, struct chart_set *cs)
{
	const json_t *steps = rr_arr(root, "steps");
	struct xy p50 = {0}, p99 = {0}, pslo = {0}, ach = {0}, ideal = {0};
	struct slo_pct slo;
	bool has_slo = report_slo_pct(rr_str(root, "plan.slo"), &slo);
	const char *slo_key = NULL;
	char slo_label[32] = "";
	if (has_slo && slo.pct != 50 && slo.pct != 99) {
		static const struct {
			double pct;
			const char *key;
		} keys[] = {{90, "p90_us"}, {99.9, "p99_9_us"}, {99.99, "p99_99_us"}};
		for (size_t k = 0; k < 3; k++)
			if (fabs(slo.pct - keys[k].pct) < 1e-9)
				slo_key = keys[k].key;
		snprintf(slo_label, sizeof slo_label, "p%g", slo.pct);
	}
	/* points in offered order (refine steps ran last); qsort keeps a hostile
	 * file with many steps from costing n^2 */
	size_t n = json_array_size(steps);
	struct by_rate *order = calloc(n ? n : 1, sizeof *order);
	if (!order)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		order[i].rate = rr_num_or(json_array_get(steps, i), "offered_per_s", 0);
		order[i].index = i;
	}
	qsort(order, n, sizeof *order, by_rate_cmp);
	double lo = INFINITY, hi = 0, xlo = INFINITY, xhi = 0;
	for (size_t k = 0; k < n; k++) {
		const json_t *s = json_array_get(steps, order[k].index);
		double off, v;
		if (!rr_num(s, "offered_per_s", &off))
			continue;
		xlo = fmin(xlo, off);
		xhi = fmax(xhi, off);
		if (rr_num(s, "measure.latency.p50_us", &v) && rr_num_or(s, "measure.latency.count", 1) > 0) {
			xy_push(&p50, off, v / 1e3);
			lo = fmin(lo, v / 1e3);
			hi = fmax(hi, v / 1e3);
		}
		if (rr_num(s, "measure.latency.p99_us", &v) && rr_num_or(s, "measure.latency.count", 1) > 0) {
			xy_push(&p99, off, v / 1e3);
			lo = fmin(lo, v / 1e3);
			hi = fmax(hi, v / 1e3);
		}
		if (slo_key) {
			char path[64];
			snprintf(path, sizeof path, "measure.latency.%s", slo_key);
			if (rr_num(s, path, &v) && rr_num_or(s, "measure.latency.count", 1) > 0) {
				xy_push(&pslo, off, v / 1e3);
				lo = fmin(lo, v / 1e3);
				hi = fmax(hi, v / 1e3);
			}
		}
		if (rr_num(s, "achieved_per_s", &v) || rr_num(s, "measure.rate.achieved_per_s", &v)) {
			xy_push(&ach, off, v);
			xy_push(&ideal, off, off);
		}
	}
	free(order);
	int rc = p50.oom || p99.oom || pslo.oom || ach.oom || ideal.oom ? -ENOMEM : 0;
	if (!rc && (p50.n || p99.n)) {
		struct svg_mark m = {0};
		char mlabel[112];
		if (has_slo) {
			lo = fmin(lo, slo.limit_us / 1e3);
			hi = fmax(hi, slo.limit_us / 1e3);
			snprintf(mlabel, sizeof mlabel, "SLO %s", slo.text);
			m = (struct svg_mark){slo.limit_us / 1e3, mlabel};
		}
		bool xlog = svg_wants_log(xlo, xhi);
		struct svg_series top[3] = {
			{"p50", p50.x, p50.y, p50.n, 2, false, true},
			{"p99", p99.x, p99.y, p99.n, 1, false, true},
			{slo_label, pslo.x, pslo.y, pslo.n, 4, false, true},
		};
		struct svg_series bottom[2] = {
			{"achieved", ach.x, ach.y, ach.n, 0, false, true},
			{"offered (all served)", ideal.x, ideal.y, ideal.n, 7, true, false},
		};
		struct svg_panel p[2] = {
			{.x = {"offered load (requests/s)", xlog ? SVG_LOG10 : SVG_LINEAR, !xlog},
			 .y = {"latency (ms)", svg_wants_log(lo, hi) ? SVG_LOG10 : SVG_LINEAR, true},
			 .series = top,
			 .n_series = pslo.n ? 3 : 2,
			 .hmarks = has_slo ? &m : NULL,
			 .n_hmarks = has_slo ? 1 : 0},
			{.x = {"offered load (requests/s)", xlog ? SVG_LOG10 : SVG_LINEAR, !xlog},
			 .y = {"achieved (requests/s)", xlog ? SVG_LOG10 : SVG_LINEAR, !xlog},
			 .series = bottom,
			 .n_series = 2},
		};
		const char *title = "Latency and throughput against offered load";
		add(cs, "latency-vs-load", title, svg_line_chart(title, p, ach.n ? 2 : 1));
	}
	xy_free(&p50);
	xy_free(&p99);
	xy_free(&pslo);
	xy_free(&ach);
	xy_free(&ideal);
	return rc;
}

static int ramp_timeline(const json_t *root, struct chart_set *cs)
{
	const json_t *steps = rr_arr(root, "steps");
	struct timeline t;
	memset(&t, 0, sizeof t);
	bool per_second = false;
	size_t i;
	const json_t *s;
	json_array_foreach(steps, i, s) {
		if (rr_len(s, "series"))
			per_second = true;
	}
	double t0 = 0;
	json_array_foreach(steps, i, s) {
		double off = rr_num_or(s, "offered_per_s", NAN);
		if (per_second) {
			timeline_break(&t);
			if (t.n_marks < 64) {
				snprintf(t.mark_text[t.n_marks], sizeof t.mark_text[0], "%s%zu: %.0f/s",
					 rr_true(s, "refine") ? "r" : "", i + 1, isfinite(off) ? off : 0);
				t.marks[t.n_marks] = (struct svg_mark){t0, t.mark_text[t.n_marks]};
				t.n_marks++;
			}
			const json_t *series = rr_arr(s, "series");
			size_t n = series ? json_array_size(series) : 0;
			double d = rr_num_or(s, "measure.duration_s", (double)n);
			if (series)
				timeline_points(&t, series, t0, d);
			t0 += fmax(ceil(d), (double)n);
		} else {
			struct phase_fig f;
			report_phase_fig(rr_get(s, "measure"), &f);
			double x = (double)i + 1;
			if (isfinite(f.achieved))
				xy_push(&t.rate, x, f.achieved);
			if (isfinite(f.p50))
				xy_push(&t.p50, x, f.p50 / 1e3);
			if (isfinite(f.p99))
				xy_push(&t.p99, x, f.p99 / 1e3);
			(void)off;
		}
	}
	int rc = timeline_chart(cs, &t,
				per_second ? "seconds of measured load, step after step (steps marked)"
					   : "step",
				per_second ? "Responses and latency per second, all steps"
					   : "Responses and latency per step");
	if (!rc && per_second)
		rc = status_chart(cs, &t, "seconds of measured load, step after step (steps marked)",
				  "Status codes and connection failures per second, all steps");
	timeline_free(&t);
	return rc;
}

static int ramp_charts(const json_t *root, struct chart_set *cs)
{
	int rc = ramp_load_chart(root, cs);
	if (rc)
		return rc;
	long k = report_focus_step(root);
	if (k >= 0) {
		const json_t *s = json_array_get(rr_arr(root, "steps"), (size_t)k);
		char what[96];
		snprintf(what, sizeof what, "step %ld (%.0f requests/s offered)", k + 1,
			 rr_num_or(s, "offered_per_s", 0));
		rc = spectrum_chart(cs, rr_get(s, "measure"), what);
		if (!rc)
			rc = histogram_chart(cs, rr_get(s, "measure"), what);
		if (rc)
			return rc;
	}
	return ramp_timeline(root, cs);
}

/* ---- compare ------------------------------------------------------------------- */

static const struct {
	const char *metric;  /* ratios[].metric */
	const char *summary; /* variants[].summary key */
	const char *label;
} cmp_metrics[] = {
	{"throughput", "achieved_per_s", "throughput"},
	{"capacity", "capacity_per_s", "capacity"},
	{"p50", "p50_us", "p50"},
	{"p90", "p90_us", "p90"},
	{"p99", "p99_us", "p99"},
	{"p99.9", "p99_9_us", "p99.9"},
	{"max", "max_us", "max"},
};
#define N_CMP (sizeof cmp_metrics / sizeof cmp_metrics[0])

static int compare_charts(const json_t *root, struct chart_set *cs)
{
	const json_t *ratios = rr_arr(root, "ratios");
	const json_t *variants = rr_arr(root, "variants");
	size_t nr = ratios ? json_array_size(ratios) : 0;
	size_t nv = variants ? json_array_size(variants) : 0;
	size_t cap = nr + nv * N_CMP + 1;
	struct svg_bar *bars = calloc(cap, sizeof *bars);
	char (*names)[48] = calloc(cap, sizeof *names);
	if (!bars || !names) {
		free(bars);
		free(names);
		return -ENOMEM;
	}
	const char *baseline = NULL;
	size_t n = 0;
	double lo = INFINITY, hi = 0;
	for (size_t m = 0; m < N_CMP; m++) {
		size_t i;
		const json_t *r;
		json_array_foreach(ratios, i, r) {
			const char *metric = rr_str(r, "metric");
			double v;
			if (!metric || strcmp(metric, cmp_metrics[m].metric) != 0 ||
			    !rr_num(r, "ratio", &v) || n >= cap)
				continue;
			if (!baseline)
				baseline = rr_str(r, "baseline");
			double l = rr_num_or(r, "ci95_low", NAN), h = rr_num_or(r, "ci95_high", NAN);
			const char *vn = rr_str(r, "variant");
			snprintf(names[n], sizeof names[n], "%s", vn ? vn : "?");
			bars[n] = (struct svg_bar){cmp_metrics[m].label, names[n], v, l, h,
						   isfinite(l) && isfinite(h)};
			lo = fmin(lo, fmin(v, isfinite(l) ? l : v));
			hi = fmax(hi, fmax(v, isfinite(h) ? h : v));
			n++;
		}
	}
	if (n) {
		char ref[96], title[160];
		snprintf(ref, sizeof ref, "1 = same as baseline %s", baseline ? baseline : "");
		snprintf(title, sizeof title, "Ratio to the baseline, median of repetitions, 95%% CI");
		bool log = svg_wants_log(fmin(lo, 1), fmax(hi, 1));
		add(cs, "compare-ratios", title,
		    svg_bar_chart(title, "ratio to baseline", bars, n, 1.0, ref, log));
	}
	/* latency medians with min-max, per variant */
	n = 0;
	lo = INFINITY;
	hi = 0;
	for (size_t m = 2; m < 6; m++) {
		size_t i;
		const json_t *v;
		json_array_foreach(variants, i, v) {
			char path[64];
			double med;
			snprintf(path, sizeof path, "summary.%s.median", cmp_metrics[m].summary);
			if (!rr_num(v, path, &med) || n >= cap)
				continue;
			snprintf(path, sizeof path, "summary.%s.min", cmp_metrics[m].summary);
			double l = rr_num_or(v, path, NAN);
			snprintf(path, sizeof path, "summary.%s.max", cmp_metrics[m].summary);
			double h = rr_num_or(v, path, NAN);
			const char *name = rr_str(v, "name");
			snprintf(names[n], sizeof names[n], "%s", name ? name : "?");
			bars[n] = (struct svg_bar){cmp_metrics[m].label, names[n], med / 1e3, l / 1e3,
						   h / 1e3, isfinite(l) && isfinite(h)};
			lo = fmin(lo, isfinite(l) ? l / 1e3 : med / 1e3);
			hi = fmax(hi, isfinite(h) ? h / 1e3 : med / 1e3);
			n++;
		}
	}
	if (n) {
		const char *title = "Latency per variant: median of repetitions, min-max";
		add(cs, "compare-latency", title,
		    svg_bar_chart(title, "latency (ms)", bars, n, NAN, NULL, svg_wants_log(lo, hi)));
	}
	/* throughput (or capacity) per variant */
	n = 0;
	for (size_t m = 0; m < 2; m++) {
		size_t i;
		const json_t *v;
		json_array_foreach(variants, i, v) {
			char path[64];
			double med;
			snprintf(path, sizeof path, "summary.%s.median", cmp_metrics[m].summary);
			if (!rr_num(v, path, &med) || n >= cap)
				continue;
			snprintf(path, sizeof path, "summary.%s.min", cmp_metrics[m].summary);
			double l = rr_num_or(v, path, NAN);
			snprintf(path, sizeof path, "summary.%s.max", cmp_metrics[m].summary);
			double h = rr_num_or(v, path, NAN);
			const char *name = rr_str(v, "name");
			snprintf(names[n], sizeof names[n], "%s", name ? name : "?");
			bars[n] = (struct svg_bar){m ? "capacity (highest passing step)" : "throughput",
						   names[n], med, l, h, isfinite(l) && isfinite(h)};
			n++;
		}
	}
	if (n) {
		const char *title = "Requests per second per variant: median of repetitions, min-max";
		add(cs, "compare-throughput", title,
		    svg_bar_chart(title, "requests/s", bars, n, NAN, NULL, false));
	}
	free(bars);
	free(names);
	return 0;
}

int charts_build(const struct loaded_result *r, struct chart_set *cs)
{
	memset(cs, 0, sizeof *cs);
	int rc = 0;
	switch (r->kind) {
	case RESULT_KIND_RUN: rc = run_charts(r->root, cs); break;
	case RESULT_KIND_RAMP: rc = ramp_charts(r->root, cs); break;
	case RESULT_KIND_COMPARE: rc = compare_charts(r->root, cs); break;
	}
	if (rc)
		charts_free(cs);
	return rc;
}
