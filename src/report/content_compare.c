/* pacer — the report's content for a comparison (see content_int.h): the
 * summary paragraph (each variant's ratios to the baseline) and the results
 * (each variant's figures, the ratios, the order of the measurements). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "doc/keys.h"
#include "report/content_int.h"
#include "stats/summary.h"

static const char *cmp_metric_label(const char *m)
{
	return m ? m : "?";
}

void content_summary_compare(struct content_ctx *c)
{
	char mach[256], wh[200], load[256];
	double rate;
	const json_t *ramp = rr_obj(c->plan, KEY_RAMP);
	if (ramp)
		snprintf(load, sizeof load,
			 "a ramp-mode comparison (capacity under the SLO %s, open loop)",
			 rr_str(ramp, KEY_SLO) ? rr_str(ramp, KEY_SLO) : "(none)");
	else if (c->open_loop && rr_num(c->plan, KEY_RATE_PER_S, &rate))
		snprintf(load, sizeof load, "an open-loop comparison at %s requests/s per variant",
			 fmt_rate(&c->f, rate));
	else
		snprintf(load, sizeof load,
			 "a closed-loop comparison with %s connections per variant",
			 fmt_int(&c->f, rr_num_or(c->plan, KEY_CONCURRENCY, NAN)));
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (!f) {
		c->d->oom = true;
		return;
	}
	fprintf(f, "In %s %s on %s, with %u interleaved %s per variant: ", load,
		content_where(c, wh, sizeof wh), content_machine(c, mach, sizeof mach), c->repeat,
		plural(c->repeat, "repetition", "repetitions"));
	const json_t *ratios = rr_arr(c->root, KEY_RATIOS);
	/* per variant: its ratios in the order given */
	const json_t *variants = rr_arr(c->root, KEY_VARIANTS);
	size_t vi;
	const json_t *v;
	bool any = false;
	json_array_foreach(variants, vi, v) {
		const char *name = rr_str(v, KEY_NAME);
		if (vi >= REPORT_MAX_VARIANTS)
			break;
		if (!name || vi == 0)
			continue;
		bool first = true;
		size_t i;
		const json_t *r;
		json_array_foreach(ratios, i, r) {
			if (i >= REPORT_MAX_RATIOS)
				break;
			const char *vn = rr_str(r, KEY_VARIANT);
			const char *metric = rr_str(r, KEY_METRIC);
			if (!vn || strcmp(vn, name) != 0 || !metric)
				continue;
			/* the headline keeps throughput/capacity, p50 and p99 */
			if (strcmp(metric, "throughput") && strcmp(metric, "capacity") &&
			    strcmp(metric, "p50") && strcmp(metric, "p99"))
				continue;
			if (first) {
				const char *base = rr_str(r, KEY_BASELINE);
				fprintf(f, "%s%s against baseline %s: ", any ? " " : "", name,
					base ? base : "?");
			}
			const char *verdict = rr_str(r, KEY_VERDICT);
			fprintf(f, "%s%s %s (ratio %s, 95%% CI %s–%s)", first ? "" : "; ",
				cmp_metric_label(metric), verdict ? verdict : "?",
				fmt_ratio(&c->f, rr_num_or(r, KEY_RATIO, NAN)),
				fmt_ratio(&c->f, rr_num_or(r, KEY_CI95_LOW, NAN)),
				fmt_ratio(&c->f, rr_num_or(r, KEY_CI95_HIGH, NAN)));
			first = false;
			any = true;
		}
		if (!first)
			fputc('.', f);
	}
	if (!any)
		fprintf(f, "no ratios were recorded.");
	if (c->interrupted)
		fprintf(f, " The comparison was interrupted before its planned end.");
	if (fclose(f) != 0) {
		free(buf);
		c->d->oom = true;
		return;
	}
	page_para(c->d, true, "%s", buf);
	free(buf);
	/* the figures that matter, at a glance: the first variant against the
	 * baseline (the headline names every one) */
	const char *kl[6], *kv_[6];
	char lab[6][96], val[6][128];
	size_t nk = 0;
	size_t i;
	const json_t *r;
	json_array_foreach(ratios, i, r) {
		if (i >= REPORT_MAX_RATIOS || nk == N(kl))
			break;
		const char *vn = rr_str(r, KEY_VARIANT), *base = rr_str(r, KEY_BASELINE);
		const char *metric = rr_str(r, KEY_METRIC), *verdict = rr_str(r, KEY_VERDICT);
		const char *first = rr_str(json_array_get(variants, 1), KEY_NAME);
		if (!vn || !first || strcmp(vn, first) != 0 || !metric ||
		    (strcmp(metric, "throughput") && strcmp(metric, "capacity") &&
		     strcmp(metric, "p50") && strcmp(metric, "p99")))
			continue;
		snprintf(lab[nk], sizeof lab[nk], "%s %s/%s", cmp_metric_label(metric), vn,
			 base ? base : "?");
		snprintf(val[nk], sizeof val[nk], "%s (%s)",
			 fmt_ratio(&c->f, rr_num_or(r, KEY_RATIO, NAN)), verdict ? verdict : "?");
		kl[nk] = lab[nk];
		kv_[nk] = val[nk];
		nk++;
	}
	page_audience(c->d, PAGE_REPORT); /* the terminal has the verdict table */
	page_key_figures(c->d, nk, kl, kv_);
	page_audience(c->d, PAGE_ALL);
}

static const struct {
	const char *summary, *label;
	bool us;
} cmp_cols[] = {
	{KEY_ACHIEVED_PER_S, "Throughput/s", false},
	{KEY_CAPACITY_PER_S, "Capacity/s", false},
	{KEY_P50_US, "p50", true},
	{KEY_P90_US, "p90", true},
	{KEY_P99_US, "p99", true},
	{KEY_P99_9_US, "p99.9", true},
	{KEY_MAX_US, "max", true},
};

/* The metrics of a comparison that are not an outcome's rate (the names
 * its ratios use, result/variant.h via compare_metrics). */
static bool cmp_fixed_metric(const char *m)
{
	static const char *const fixed[] = {"throughput", "capacity", "p50",        "p90",
					    "p99",        "p99.9",    "max",        "errors",
					    "target_cpu", "target_rss"};
	for (size_t k = 0; k < N(fixed); k++)
		if (!strcmp(m, fixed[k]))
			return true;
	return false;
}

/* The outcomes compared, in the order of the ratios of the first variant
 * that has them; their summaries are "outcome_NAME_pct". */
static size_t cmp_outcomes(struct content_ctx *c, const char **out, size_t cap)
{
	size_t n = 0, i;
	const json_t *r;
	const char *first = NULL;
	json_array_foreach(rr_arr(c->root, KEY_RATIOS), i, r) {
		const char *m = rr_str(r, KEY_METRIC), *vn = rr_str(r, KEY_VARIANT);
		if (!m || !vn || cmp_fixed_metric(m))
			continue;
		if (!first)
			first = vn;
		if (strcmp(vn, first) == 0 && n < cap)
			out[n++] = m;
	}
	return n;
}

/* "median (min–max)" of summary[key], a percentage; "–" when absent. */
static const char *med_range_pct(struct content_ctx *c, char *out, size_t cap,
				 const json_t *summary, const char *key)
{
	const json_t *s = rr_obj(summary, key);
	double med, lo, hi;
	if (!s || !rr_num(s, KEY_MEDIAN, &med))
		snprintf(out, cap, "–");
	else if (rr_num(s, KEY_MIN, &lo) && rr_num(s, KEY_MAX, &hi))
		snprintf(out, cap, "%s (%s–%s)", fmt_pct(&c->f, med), fmt_pct(&c->f, lo),
			 fmt_pct(&c->f, hi));
	else
		snprintf(out, cap, "%s", fmt_pct(&c->f, med));
	return out;
}

#define CMP_MAX_OUTCOMES 8

/* Sums of a variant's repetitions: errors split into failed responses and
 * transport errors, and the warm-ups' responses and errors; false when its
 * repetitions do not record the split (an older result). */
struct cmp_counts {
	double errors, failed, transport, warm_completed, warm_errors;
};

static bool cmp_counts_of(const json_t *v, struct cmp_counts *k)
{
	memset(k, 0, sizeof *k);
	bool split = false;
	size_t i;
	const json_t *rep;
	json_array_foreach(rr_arr(v, KEY_REPETITIONS), i, rep) {
		split = split || rr_get(rep, KEY_FAILED_RESPONSES);
		k->errors += rr_num_or(rep, KEY_ERRORS, 0);
		k->failed += rr_num_or(rep, KEY_FAILED_RESPONSES, 0);
		k->transport += rr_num_or(rep, KEY_TRANSPORT_ERRORS, 0);
		k->warm_completed += rr_num_or(rep, KEY_WARMUP_COMPLETED, 0);
		k->warm_errors += rr_num_or(rep, KEY_WARMUP_ERRORS, 0);
	}
	return split;
}

/* Each variant's requests that did not succeed, as failed responses and
 * transport errors, and what its warm-ups did, summed over its
 * repetitions; nothing for an older result. */
static void cmp_errors_table(struct content_ctx *c, const json_t *variants)
{
	struct cmp_counts k;
	if (!cmp_counts_of(json_array_get(variants, 0), &k))
		return;
	page_heading(c->d, 3, "variant-errors", "Errors and warm-ups: sums over repetitions");
	const char *hdr[6] = {"Variant",          "Did not succeed", "Failed responses",
			      "Transport errors", "Warm-up responses", "Warm-up errors"};
	page_table(c->d, 6, 0x3e, hdr);
	size_t i;
	const json_t *v;
	json_array_foreach(variants, i, v) {
		if (i >= REPORT_MAX_VARIANTS)
			break;
		cmp_counts_of(v, &k);
		const char *row[6] = {rr_str(v, KEY_NAME) ? rr_str(v, KEY_NAME) : "?",
				      fmt_int(&c->f, k.errors),
				      fmt_int(&c->f, k.failed),
				      fmt_int(&c->f, k.transport),
				      fmt_int(&c->f, k.warm_completed),
				      fmt_int(&c->f, k.warm_errors)};
		page_row(c->d, row);
	}
	page_para(c->d, false,
		 "Failed responses are complete responses that failed the success rule (by "
		 "default a status outside 200..399); transport errors are requests that failed "
		 "on their connection (read, write, timeout, parse, closed). The warm-ups are not "
		 "counted in any figure above.");
}

/* A session script's figures per variant, summed over its repetitions
 * (variant.sessions, variant.by_name): the run summary's Sessions table
 * with a row a variant, then each variant's steps; nothing without
 * sessions. */
static void cmp_sessions_table(struct content_ctx *c, const json_t *variants)
{
	size_t i;
	const json_t *v;
	bool any = false;
	json_array_foreach(variants, i, v)
		any = any || rr_obj(v, KEY_SESSIONS);
	if (!any)
		return;
	page_heading(c->d, 3, "variant-sessions", "Sessions: sums over repetitions");
	const char *hdr[12] = {"Variant",      "Started", "Completed", "Failed",
			       "Abandoned",    "Dropped", "Steps",     "Completed %",
			       "Duration p50", "p90",     "p99",       "max"};
	page_table(c->d, 12, 0xffe, hdr);
	json_array_foreach(variants, i, v) {
		const json_t *s = rr_obj(v, KEY_SESSIONS);
		if (i >= REPORT_MAX_VARIANTS || !s)
			continue;
		const json_t *d = rr_obj(s, KEY_DURATION);
		const char *row[12] = {rr_str(v, KEY_NAME) ? rr_str(v, KEY_NAME) : "?",
				       fmt_int(&c->f, rr_num_or(s, KEY_STARTED, NAN)),
				       fmt_int(&c->f, rr_num_or(s, KEY_COMPLETED, NAN)),
				       fmt_int(&c->f, rr_num_or(s, KEY_FAILED, NAN)),
				       fmt_int(&c->f, rr_num_or(s, KEY_ABANDONED, NAN)),
				       fmt_int(&c->f, rr_num_or(s, KEY_DROPPED, NAN)),
				       fmt_int(&c->f, rr_num_or(s, KEY_STEPS, NAN)),
				       fmt_pct(&c->f, rr_num_or(s, KEY_COMPLETED_PCT, NAN)),
				       fmt_us(&c->f, rr_num_or(d, KEY_P50_US, NAN)),
				       fmt_us(&c->f, rr_num_or(d, KEY_P90_US, NAN)),
				       fmt_us(&c->f, rr_num_or(d, KEY_P99_US, NAN)),
				       fmt_us(&c->f, rr_num_or(d, KEY_MAX_US, NAN))};
		page_row(c->d, row);
	}
	const char *sh[7] = {"Variant", "Step", "Completed", "Errors", "p50", "p99", "max"};
	page_table(c->d, 7, 0x7c, sh);
	json_array_foreach(variants, i, v) {
		const json_t *by = rr_arr(v, KEY_BY_NAME);
		if (i >= REPORT_MAX_VARIANTS || !rr_obj(v, KEY_SESSIONS) || !by)
			continue;
		size_t k;
		const json_t *e;
		json_array_foreach(by, k, e) {
			const json_t *l = rr_obj(e, KEY_LATENCY);
			const char *row[7] = {rr_str(v, KEY_NAME) ? rr_str(v, KEY_NAME) : "?",
					      rr_str(e, KEY_NAME) ? rr_str(e, KEY_NAME) : "?",
					      fmt_int(&c->f, rr_num_or(e, KEY_COMPLETED, NAN)),
					      fmt_int(&c->f, rr_num_or(e, KEY_ERRORS, NAN)),
					      fmt_us(&c->f, rr_num_or(l, KEY_P50_US, NAN)),
					      fmt_us(&c->f, rr_num_or(l, KEY_P99_US, NAN)),
					      fmt_us(&c->f, rr_num_or(l, KEY_MAX_US, NAN))};
			page_row(c->d, row);
		}
	}
	page_para(c->d, false,
		  "Each arrival started a session (docs/scripting.md); each step is a request "
		  "under its name, timed from when it was due, and a session's duration runs "
		  "from its arrival's due time to its end, think time included. Counts and "
		  "histograms are every repetition's together.");
}

/* The median of summary[key] alone: a rate, a latency (us) or a percentage. */
static const char *median_of(struct content_ctx *c, char *out, size_t cap, const json_t *summary,
			     const char *key, int kind)
{
	double med;
	if (!rr_num(rr_obj(summary, key), KEY_MEDIAN, &med))
		snprintf(out, cap, "–");
	else
		snprintf(out, cap, "%s",
			 kind == 0   ? fmt_rate(&c->f, med)
			 : kind == 1 ? fmt_us(&c->f, med)
				     : fmt_pct(&c->f, med));
	return out;
}

/* A verdict in a word, for the one-screen table. */
static const char *verdict_word(const char *v)
{
	static const struct {
		const char *full, *word;
	} words[] = {
		{"no significant difference", "same"},
		{"not enough repetitions", "too few"},
		{"higher capacity", "higher"},
		{"lower capacity", "lower"},
		{"more errors", "more"},
		{"fewer errors", "fewer"},
	};
	if (!v)
		return "?";
	for (size_t k = 0; k < N(words); k++)
		if (!strcmp(v, words[k].full))
			return words[k].word;
	return v; /* "faster", "slower", an outcome's "a higher rate" */
}

/* The one-screen summary's form of the results (PAGE_SCREEN: the full text
 * and the reports have the tables whole): each variant's medians in six
 * columns, and each variant's ratio to the baseline with its verdict in a
 * word for the figures the headline names, within 78 columns. */
static void cmp_screen_tables(struct content_ctx *c, const json_t *variants)
{
	const json_t *s0 = rr_obj(json_array_get(variants, 0), KEY_SUMMARY);
	bool cap = rr_obj(s0, KEY_CAPACITY_PER_S) != NULL;
	const char *rate_key = cap ? KEY_CAPACITY_PER_S : KEY_ACHIEVED_PER_S;
	page_audience(c->d, PAGE_SCREEN);
	page_screen(c->d, true);
	page_heading(c->d, 3, "variants-screen", "Variants: median over %u %s", c->repeat,
		     plural(c->repeat, "repetition", "repetitions"));
	const char *hdr[6] = {"Variant", cap ? "Capacity/s" : "Throughput/s", "p50", "p99", "max",
			      "Errors"};
	page_table(c->d, 6, 0x3e, hdr);
	size_t i;
	const json_t *v;
	json_array_foreach(variants, i, v) {
		char name[40], cell[5][64];
		const json_t *sum = rr_obj(v, KEY_SUMMARY);
		const char *vn = rr_str(v, KEY_NAME) ? rr_str(v, KEY_NAME) : "?";
		snprintf(name, sizeof name, "%.24s%s", vn, i == 0 ? " (base)" : "");
		const char *row[6] = {name,
				      median_of(c, cell[0], sizeof cell[0], sum, rate_key, 0),
				      median_of(c, cell[1], sizeof cell[1], sum, KEY_P50_US, 1),
				      median_of(c, cell[2], sizeof cell[2], sum, KEY_P99_US, 1),
				      median_of(c, cell[3], sizeof cell[3], sum, KEY_MAX_US, 1),
				      median_of(c, cell[4], sizeof cell[4], sum, KEY_ERROR_PCT, 2)};
		page_row(c->d, row);
	}
	const json_t *ratios = rr_arr(c->root, KEY_RATIOS);
	const char *base = rr_str(json_array_get(variants, 0), KEY_NAME);
	if (json_array_size(variants) > 1 && json_array_size(ratios)) {
		page_heading(c->d, 3, "ratios-screen", "Against baseline %s: ratio and verdict",
			     base ? base : "?");
		const char *h[5] = {"Variant", cap ? "Capacity" : "Throughput", "p50", "p99",
				    "Errors"};
		const char *metric[5] = {NULL, cap ? "capacity" : "throughput", "p50", "p99",
					 "errors"};
		page_table(c->d, 5, 0, h);
		json_array_foreach(variants, i, v) {
			const char *vn = rr_str(v, KEY_NAME);
			if (i == 0 || !vn)
				continue;
			char name[40], cell[5][64];
			const char *row[5];
			snprintf(name, sizeof name, "%.24s", vn);
			row[0] = name;
			for (size_t m = 1; m < 5; m++) {
				snprintf(cell[m], sizeof cell[m], "–");
				size_t k;
				const json_t *r;
				json_array_foreach(ratios, k, r) {
					const char *rv = rr_str(r, KEY_VARIANT),
						   *rm = rr_str(r, KEY_METRIC);
					if (!rv || !rm || strcmp(rv, vn) || strcmp(rm, metric[m]))
						continue;
					double x = rr_num_or(r, KEY_RATIO, NAN);
					snprintf(cell[m], sizeof cell[m], "%s %.24s",
						 isfinite(x) ? fmt_ratio(&c->f, x) : "–",
						 verdict_word(rr_str(r, KEY_VERDICT)));
					break;
				}
				row[m] = cell[m];
			}
			page_row(c->d, row);
		}
	}
	page_screen(c->d, false);
	page_audience(c->d, PAGE_ALL);
}

void content_results_compare(struct content_ctx *c)
{
	const json_t *variants = rr_arr(c->root, KEY_VARIANTS);
	/* columns present in the first variant's summary */
	const json_t *s0 = rr_obj(json_array_get(variants, 0), KEY_SUMMARY);
	size_t cols[N(cmp_cols)], ncols = 0;
	for (size_t k = 0; k < N(cmp_cols); k++)
		if (rr_obj(s0, cmp_cols[k].summary))
			cols[ncols++] = k;
	bool errs = rr_obj(s0, KEY_ERROR_PCT) != NULL;
	const char *onames[CMP_MAX_OUTCOMES];
	size_t no = cmp_outcomes(c, onames, N(onames));
	char okey[CMP_MAX_OUTCOMES][96], ohdr[CMP_MAX_OUTCOMES][96];
	for (size_t k = 0; k < no; k++) {
		snprintf(okey[k], sizeof okey[k], "outcome_%s_pct", onames[k]);
		snprintf(ohdr[k], sizeof ohdr[k], "%s rate", onames[k]);
	}
	cmp_screen_tables(c, variants);
	page_heading(c->d, 3, "variants", "Variants: median (min–max) over repetitions");
	const char *hdr[PAGE_MAX_COLS];
	size_t nc = 0;
	hdr[nc++] = "Variant";
	hdr[nc++] = "Target";
	for (size_t k = 0; k < ncols; k++)
		hdr[nc++] = cmp_cols[cols[k]].label;
	if (errs)
		hdr[nc++] = "Error rate";
	for (size_t k = 0; k < no && nc < PAGE_MAX_COLS; k++)
		hdr[nc++] = ohdr[k];
	page_table(c->d, nc, ((1u << nc) - 1) & ~3u, hdr);
	size_t i;
	const json_t *v;
	json_array_foreach(variants, i, v) {
		const char *row[PAGE_MAX_COLS];
		char cell[PAGE_MAX_COLS][128];
		char name[96];
		size_t k = 0;
		const json_t *sum = rr_obj(v, KEY_SUMMARY);
		snprintf(name, sizeof name, "%s%s", rr_str(v, KEY_NAME) ? rr_str(v, KEY_NAME) : "?",
			 i == 0 ? " (baseline)" : "");
		row[k++] = name;
		/* a variant of the shared table has no target of its own: its URL */
		const char *tg = rr_str(v, KEY_TARGET);
		row[k++] = tg && *tg ? tg : rr_str(v, KEY_URL);
		for (size_t j = 0; j < ncols; j++, k++)
			row[k] = content_med_range(c, cell[k], sizeof cell[k], sum,
						   cmp_cols[cols[j]].summary, cmp_cols[cols[j]].us);
		if (errs) {
			row[k] = med_range_pct(c, cell[k], sizeof cell[k], sum, KEY_ERROR_PCT);
			k++;
		}
		for (size_t j = 0; j < no && k < nc; j++, k++)
			row[k] = med_range_pct(c, cell[k], sizeof cell[k], sum, okey[j]);
		page_row(c->d, row);
	}
	cmp_errors_table(c, variants);
	cmp_sessions_table(c, variants);
	const json_t *ratios = rr_arr(c->root, KEY_RATIOS);
	if (ratios && json_array_size(ratios)) {
		page_heading(c->d, 3, "ratios", "Against the baseline");
		const char *h[6] = {"Metric", "Variant", "Baseline", "Ratio", "95% CI", "Verdict"};
		page_table(c->d, 6, 0x18, h);
		const json_t *r;
		bool few = false;
		json_array_foreach(ratios, i, r) {
			char ci[96];
			double lo = rr_num_or(r, KEY_CI95_LOW, NAN),
			       hi = rr_num_or(r, KEY_CI95_HIGH, NAN);
			if (isfinite(lo) || isfinite(hi))
				snprintf(ci, sizeof ci, "%s–%s", fmt_ratio(&c->f, lo), fmt_ratio(&c->f, hi));
			else
				snprintf(ci, sizeof ci, "–");
			const char *verdict = rr_str(r, KEY_VERDICT);
			few = few || (verdict && !strcmp(verdict, "not enough repetitions"));
			const char *row[6] = {rr_str(r, KEY_METRIC),
					      rr_str(r, KEY_VARIANT),
					      rr_str(r, KEY_BASELINE),
					      fmt_ratio(&c->f, rr_num_or(r, KEY_RATIO, NAN)),
					      ci,
					      verdict};
			page_row(c->d, row);
		}
		double noise = rr_num_or(c->plan, KEY_NOISE_PCT, NAN);
		char noise_s[128] = "";
		if (isfinite(noise))
			snprintf(noise_s, sizeof noise_s, "; a ratio within %s of 1 counts as noise",
				 fmt_pct(&c->f, noise));
		page_para(c->d, false,
			 "A ratio above 1 means the variant's figure is higher than the baseline's: "
			 "more throughput, a higher capacity, a longer latency. The 95%% "
			 "confidence intervals are bootstrapped over the repetitions%s.",
			 noise_s);
		if (few)
			page_para(c->d, false,
				 "Not enough repetitions for a verdict: %u per variant, and a verdict "
				 "needs %d.",
				 c->repeat, SUMMARY_MIN_N);
	}
	const json_t *seq = rr_arr(c->root, KEY_SEQUENCE);
	if (seq && json_array_size(seq)) {
		char *buf = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&buf, &len);
		if (f) {
			const json_t *s;
			json_array_foreach(seq, i, s) {
				if (i == 64) {
					fputs(" ...", f);
					break;
				}
				fprintf(f, "%s%s", i ? " " : "", json_is_string(s) ? json_string_value(s) : "?");
			}
			if (fclose(f) == 0)
				page_para(c->d, false, "Order of the measurements: %s.", buf);
			free(buf);
		}
	}
}
