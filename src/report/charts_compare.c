/* pacer — a compare's charts (charts_int.h): ratios to the baseline,
 * latency and throughput per variant, and the charts a single run has
 * (spectrum, histogram, timeline, status) with the variants overlaid, one
 * color each, from what each variant carries (variants[].measure and
 * .series, run mode). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "doc/keys.h"
#include "report/charts_int.h"
#include "report/render_int.h"
#include "report/svg.h"
#include "stats/hist.h"


static const struct {
	const char *metric;  /* ratios[].metric */
	const char *summary; /* variants[].summary key */
	const char *label;
} cmp_metrics[] = {
	{"throughput", KEY_ACHIEVED_PER_S, "throughput"},
	{"capacity", KEY_CAPACITY_PER_S, "capacity"},
	{"p50", KEY_P50_US, "p50"},
	{"p90", KEY_P90_US, "p90"},
	{"p99", KEY_P99_US, "p99"},
	{"p99.9", KEY_P99_9_US, "p99.9"},
	{"max", KEY_MAX_US, "max"},
};
#define N_CMP (sizeof cmp_metrics / sizeof cmp_metrics[0])

/* Variant v's bar for metric m: the median of its repetitions with the
 * min-max whisker, times scale, in group; its name into name[48]. false
 * when the variant has no median for m. */
static bool variant_bar(const json_t *v, size_t m, const char *group, double scale,
			char name[48], struct svg_bar *out)
{
	char path[64];
	double med;
	snprintf(path, sizeof path, "summary.%s.median", cmp_metrics[m].summary);
	if (!rr_num(v, path, &med))
		return false;
	snprintf(path, sizeof path, "summary.%s.min", cmp_metrics[m].summary);
	double l = rr_num_or(v, path, NAN);
	snprintf(path, sizeof path, "summary.%s.max", cmp_metrics[m].summary);
	double h = rr_num_or(v, path, NAN);
	const char *vn = rr_str(v, KEY_NAME);
	snprintf(name, 48, "%s", vn ? vn : "?");
	*out = (struct svg_bar){group, name, med * scale, l * scale, h * scale,
				isfinite(l) && isfinite(h)};
	return true;
}

#define CMP_MAX_V 8 /* variants drawn (pacer compare writes at most 8) */

/* The variants' names, at most CMP_MAX_V. */
static size_t variant_names(const json_t *variants, const char *name[CMP_MAX_V])
{
	size_t i, n = 0;
	const json_t *v;
	json_array_foreach(variants, i, v) {
		if (n == CMP_MAX_V)
			break;
		const char *vn = rr_str(v, KEY_NAME);
		name[n++] = vn ? vn : "?";
	}
	return n;
}

/* One line per variant from its measure.latency: the spectrum (by
 * percentile) or the histogram (share per bin). */
static int overlay_latency(const json_t *variants, struct chart_set *cs, bool spectrum)
{
	const char *name[CMP_MAX_V];
	size_t nv = variant_names(variants, name);
	struct xy a[CMP_MAX_V];
	struct svg_series s[CMP_MAX_V];
	memset(a, 0, sizeof a);
	size_t ns = 0;
	bool oom = false;
	double lo = INFINITY, hi = 0;
	for (size_t i = 0; i < nv; i++) {
		const json_t *lat = rr_get(json_array_get(variants, i), "measure.latency");
		if (spectrum)
			spectrum_points(lat, &a[i]);
		else
			histogram_points(lat, &a[i]);
		oom = oom || a[i].oom;
		for (size_t k = 0; k < a[i].n; k++) {
			double y = spectrum ? a[i].y[k] : a[i].x[k];
			lo = fmin(lo, y);
			hi = fmax(hi, y);
		}
		if (a[i].n)
			s[ns++] = (struct svg_series){name[i], a[i].x, a[i].y, a[i].n,
						      (int)i,  false,  false};
	}
	if (!oom && ns) {
		struct svg_panel p;
		const char *title;
		if (spectrum) {
			title = "Latency by percentile per variant, every repetition pooled";
			p = (struct svg_panel){.x = {"percentile", SVG_INV_PCT, false},
					       .y = {"latency (ms, from scheduled time)",
						     svg_wants_log(lo, hi) ? SVG_LOG10 : SVG_LINEAR,
						     true},
					       .series = s,
					       .n_series = ns};
		} else {
			title = "Latency distribution per variant, every repetition pooled";
			p = (struct svg_panel){
				.x = {"latency (ms, from scheduled time)", SVG_LOG10, false},
				.y = {"requests (%, 10 bins a decade)", SVG_LINEAR, true},
				.series = s,
				.n_series = ns};
		}
		chart_add(cs, spectrum ? "compare-spectrum" : "compare-histogram", title,
			  svg_line_chart(title, &p, 1));
	}
	for (size_t i = 0; i < nv; i++)
		xy_free(&a[i]);
	return oom ? -ENOMEM : 0;
}

/* Per-second lines of every variant's first measurement: responses/s and
 * p99 (timeline), or responses by status class and requests failed on the
 * connection (status). Seconds past the schedule (the drain) are left
 * out: they would drop every line to zero at its end. */
enum { CS_RATE, CS_P99, CS_1XX, CS_2XX, CS_3XX, CS_4XX, CS_5XX, CS_CONN, CS_N };

static int overlay_seconds(const json_t *root, const json_t *variants, struct chart_set *cs)
{
	static const char *const cls_key[5] = {"1xx", "2xx", "3xx", "4xx", "5xx"};
	static const char *const what[CS_N] = {"",       "",       " 1xx/s", " 2xx/s",
					       " 3xx/s", " 4xx/s", " 5xx/s", " failed on conn/s"};
	const char *name[CMP_MAX_V];
	size_t nv = variant_names(variants, name);
	struct xy *a = calloc(CMP_MAX_V * CS_N, sizeof *a);
	char(*label)[80] = calloc(CMP_MAX_V * CS_N, sizeof *label);
	if (!a || !label) {
		free(a);
		free(label);
		return -ENOMEM;
	}
	bool any[CMP_MAX_V][CS_N] = {{false}}, has_cls = false, oom = false;
	for (size_t i = 0; i < nv; i++) {
		const json_t *v = json_array_get(variants, i);
		const json_t *series = rr_arr(v, KEY_SERIES);
		/* the seconds of the schedule (measure.duration_s sums the
		 * repetitions; the series is the first's); a schedule under a
		 * second keeps its only second, which holds both */
		double meas_s = rr_num_or(root, "plan.duration_s", NAN);
		size_t k;
		const json_t *pt;
		json_array_foreach(series, k, pt) {
			double rel = rr_num_or(pt, KEY_T_S, (double)k), c, p99;
			if (isfinite(meas_s) && meas_s >= 1 && rel + 0.5 >= meas_s)
				break;
			double ts = rel + 0.5;
			struct xy *va = &a[i * CS_N];
			if (rr_num(pt, KEY_COMPLETED, &c)) {
				xy_push(&va[CS_RATE], ts, c);
				any[i][CS_RATE] = true;
			}
			if (rr_num(pt, KEY_P99_US, &p99) && rr_num_or(pt, KEY_COMPLETED, 1) != 0) {
				xy_push(&va[CS_P99], ts, p99 / 1e3);
				any[i][CS_P99] = true;
			}
			const json_t *bc = rr_obj(pt, KEY_BY_CLASS);
			if (!bc)
				continue;
			has_cls = true;
			for (int cl = 0; cl < 5; cl++) {
				double x = rr_num_or(bc, cls_key[cl], 0);
				xy_push(&va[CS_1XX + cl], ts, x);
				any[i][CS_1XX + cl] = any[i][CS_1XX + cl] || x > 0;
			}
			double tr = rr_num_or(pt, KEY_TRANSPORT_ERRORS, 0);
			xy_push(&va[CS_CONN], ts, tr);
			any[i][CS_CONN] = any[i][CS_CONN] || tr > 0;
		}
		for (int m = 0; m < CS_N; m++) {
			oom = oom || a[i * CS_N + m].oom;
			snprintf(label[i * CS_N + m], sizeof label[0], "%.40s%s", name[i], what[m]);
		}
	}
	struct svg_series *top = calloc(CMP_MAX_V * CS_N, sizeof *top);
	struct svg_series *bottom = calloc(CMP_MAX_V * CS_N, sizeof *bottom);
	int rc = oom || !top || !bottom ? -ENOMEM : 0;
	size_t nt = 0, nb = 0;
	double lo = INFINITY, hi = 0;
	const char *xlabel = "seconds into the first repetition's measured phase";
	for (size_t i = 0; !rc && i < nv; i++) {
		struct xy *va = &a[i * CS_N];
		if (any[i][CS_RATE])
			top[nt++] = (struct svg_series){
				name[i], va[CS_RATE].x, va[CS_RATE].y,     va[CS_RATE].n,
				(int)i,  false,         va[CS_RATE].n < 40};
		if (any[i][CS_P99]) {
			bottom[nb++] = (struct svg_series){
				name[i], va[CS_P99].x, va[CS_P99].y,     va[CS_P99].n,
				(int)i,  false,        va[CS_P99].n < 40};
			for (size_t k = 0; k < va[CS_P99].n; k++) {
				lo = fmin(lo, va[CS_P99].y[k]);
				hi = fmax(hi, va[CS_P99].y[k]);
			}
		}
	}
	if (!rc && nt) {
		struct svg_panel p[2] = {
			{.x = {xlabel, SVG_LINEAR, true},
			 .y = {"responses per second", SVG_LINEAR, true},
			 .series = top,
			 .n_series = nt},
			{.x = {xlabel, SVG_LINEAR, true},
			 .y = {"p99 latency (ms)", svg_wants_log(lo, hi) ? SVG_LOG10 : SVG_LINEAR,
			       true},
			 .series = bottom,
			 .n_series = nb},
		};
		const char *title = "Responses and p99 per second per variant";
		chart_add(cs, "compare-timeline", title, svg_line_chart(title, p, nb ? 2 : 1));
	}
	/* status: 1xx-3xx above (2xx always), 4xx, 5xx and failed on the
	 * connection below when any; the variant's color, the class's dash */
	nt = nb = 0;
	for (size_t i = 0; !rc && has_cls && i < nv; i++) {
		struct xy *va = &a[i * CS_N];
		for (int m = CS_1XX; m < CS_N; m++) {
			if (!va[m].n || (!any[i][m] && m != CS_2XX))
				continue;
			struct svg_series se = {label[i * CS_N + m],
						va[m].x,
						va[m].y,
						va[m].n,
						(int)i,
						m == CS_3XX || m == CS_5XX || m == CS_1XX,
						va[m].n < 40};
			if (m <= CS_3XX)
				top[nt++] = se;
			else
				bottom[nb++] = se;
		}
	}
	if (!rc && nt) {
		struct svg_panel p[2] = {
			{.x = {xlabel, SVG_LINEAR, true},
			 .y = {"responses per second", SVG_LINEAR, true},
			 .series = top,
			 .n_series = nt},
			{.x = {xlabel, SVG_LINEAR, true},
			 .y = {"errors per second", SVG_LINEAR, true},
			 .series = bottom,
			 .n_series = nb},
		};
		const char *title = "Status codes and connection failures per second per variant";
		chart_add(cs, "compare-status", title, svg_line_chart(title, p, nb ? 2 : 1));
	}
	for (size_t i = 0; i < CMP_MAX_V * CS_N; i++)
		xy_free(&a[i]);
	free(a);
	free(label);
	free(top);
	free(bottom);
	return rc;
}

int compare_charts(const json_t *root, struct chart_set *cs)
{
	const json_t *ratios = rr_arr(root, KEY_RATIOS);
	const json_t *variants = rr_arr(root, KEY_VARIANTS);
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
			const char *metric = rr_str(r, KEY_METRIC);
			double v;
			if (!metric || strcmp(metric, cmp_metrics[m].metric) != 0 ||
			    !rr_num(r, KEY_RATIO, &v) || n >= cap)
				continue;
			if (!baseline)
				baseline = rr_str(r, KEY_BASELINE);
			double l = rr_num_or(r, KEY_CI95_LOW, NAN),
			       h = rr_num_or(r, KEY_CI95_HIGH, NAN);
			const char *vn = rr_str(r, KEY_VARIANT);
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
		chart_add(cs, "compare-ratios", title,
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
			if (n >= cap || !variant_bar(v, m, cmp_metrics[m].label, 1e-3, names[n], &bars[n]))
				continue;
			lo = fmin(lo, bars[n].whisker ? bars[n].lo : bars[n].v);
			hi = fmax(hi, bars[n].whisker ? bars[n].hi : bars[n].v);
			n++;
		}
	}
	if (n) {
		const char *title = "Latency per variant: median of repetitions, min-max";
		chart_add(cs, "compare-latency", title,
		    svg_bar_chart(title, "latency (ms)", bars, n, NAN, NULL, svg_wants_log(lo, hi)));
	}
	/* throughput (or capacity) per variant */
	n = 0;
	for (size_t m = 0; m < 2; m++) {
		size_t i;
		const json_t *v;
		json_array_foreach(variants, i, v) {
			if (n < cap && variant_bar(v, m, m ? "capacity (highest passing step)" : "throughput",
						   1, names[n], &bars[n]))
				n++;
		}
	}
	if (n) {
		const char *title = "Requests per second per variant: median of repetitions, min-max";
		chart_add(cs, "compare-throughput", title,
		    svg_bar_chart(title, "requests/s", bars, n, NAN, NULL, false));
	}
	free(bars);
	free(names);
	int rc = overlay_latency(variants, cs, true);
	if (!rc)
		rc = overlay_latency(variants, cs, false);
	if (!rc)
		rc = overlay_seconds(root, variants, cs);
	return rc;
}
