/* pacer — a compare's charts (charts_int.h): ratios to the baseline,
 * latency and throughput per variant. */
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
	return 0;
}
