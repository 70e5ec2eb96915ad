/* pacer — a ramp's charts (charts_int.h): latency against load, and the
 * steps' timeline end to end. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "doc/keys.h"
#include "report/charts_int.h"
#include "report/render_int.h"
#include "report/svg.h"
#include "stats/hist.h"


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
	const json_t *steps = rr_arr(root, KEY_STEPS);
	struct xy p50 = {0}, p99 = {0}, pslo = {0}, ach = {0}, ideal = {0};
	struct slo_pct slo;
	bool has_slo = report_slo_pct(rr_str(root, "plan.slo"), &slo);
	const char *slo_key = NULL;
	char slo_label[32] = "";
	if (has_slo && slo.pct != 50 && slo.pct != 99) {
		static const struct {
			double pct;
			const char *key;
		} keys[] = {{90, KEY_P90_US}, {99.9, KEY_P99_9_US}, {99.99, KEY_P99_99_US}};
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
		order[i].rate = rr_num_or(json_array_get(steps, i), KEY_OFFERED_PER_S, 0);
		order[i].index = i;
	}
	qsort(order, n, sizeof *order, by_rate_cmp);
	double lo = INFINITY, hi = 0, xlo = INFINITY, xhi = 0;
	for (size_t k = 0; k < n; k++) {
		const json_t *s = json_array_get(steps, order[k].index);
		double off, v;
		if (!rr_num(s, KEY_OFFERED_PER_S, &off))
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
		if (rr_num(s, KEY_ACHIEVED_PER_S, &v) ||
		    rr_num(s, "measure.rate.achieved_per_s", &v)) {
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
		chart_add(cs, "latency-vs-load", title, svg_line_chart(title, p, ach.n ? 2 : 1));
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
	const json_t *steps = rr_arr(root, KEY_STEPS);
	struct timeline t;
	memset(&t, 0, sizeof t);
	bool per_second = false;
	size_t i;
	const json_t *s;
	json_array_foreach(steps, i, s) {
		if (rr_len(s, KEY_SERIES))
			per_second = true;
	}
	double t0 = 0;
	json_array_foreach(steps, i, s) {
		double off = rr_num_or(s, KEY_OFFERED_PER_S, NAN);
		if (per_second) {
			timeline_break(&t);
			if (t.n_marks < 64) {
				char sl[32];
				snprintf(t.mark_text[t.n_marks], sizeof t.mark_text[0], "%s: %.0f/s",
					 report_step_label(root, (long)i, sl, sizeof sl),
					 isfinite(off) ? off : 0);
				t.marks[t.n_marks] = (struct svg_mark){t0, t.mark_text[t.n_marks]};
				t.n_marks++;
			}
			const json_t *series = rr_arr(s, KEY_SERIES);
			size_t n = series ? json_array_size(series) : 0;
			double d = rr_num_or(s, "measure.duration_s", (double)n);
			if (series)
				timeline_points(&t, series, t0, d);
			t0 += fmax(ceil(d), (double)n);
		} else {
			struct phase_fig f;
			report_phase_fig(rr_get(s, KEY_MEASURE), &f);
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

int ramp_charts(const json_t *root, struct chart_set *cs)
{
	int rc = ramp_load_chart(root, cs);
	if (rc)
		return rc;
	long k = report_focus_step(root);
	if (k >= 0) {
		const json_t *s = json_array_get(rr_arr(root, KEY_STEPS), (size_t)k);
		char what[96], sl[32];
		snprintf(what, sizeof what, "step %s (%.0f requests/s offered)",
			 report_step_label(root, k, sl, sizeof sl),
			 rr_num_or(s, KEY_OFFERED_PER_S, 0));
		rc = spectrum_chart(cs, rr_get(s, KEY_MEASURE), what);
		if (!rc)
			rc = histogram_chart(cs, rr_get(s, KEY_MEASURE), what);
		if (rc)
			return rc;
	}
	return ramp_timeline(root, cs);
}
