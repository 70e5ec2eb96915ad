/* pacer — CSV (RFC 4180, header row, CRLF-free "\n" lines) of a result:
 *
 *   run      one row per second of the measured phase (`series`):
 *            t_s,completed,errors,p50_us,p99_us
 *   ramp     one row per step, in the order they ran:
 *            step,refine,interrupted,offered_per_s,achieved_per_s,p50_us,p90_us,
 *            p99_us,p99_9_us,max_us,error_pct,drop_pct,pass,reason,
 *            then <outcome>_rate_pct per outcome name, then
 *            usd_per_million_<profile> per cost profile (units_fmt_cost's
 *            significant digits, no currency sign: 0.00055, never 5.5e-04)
 *   compare  one row per variant and metric:
 *            variant,baseline,metric,median,min,max,ratio,ci95_low,ci95_high,
 *            significant,verdict   (ratio columns empty for the baseline; at
 *            most REPORT_MAX_VARIANTS variants)
 *
 * With summary rows (report_options.csv_summary; pacer report --rows
 * summary, summary.csv of a report folder), one shape for every kind:
 *            variant,repetition,step,offered_per_s,phase,name,duration_s,
 *            scheduled,sent,completed,errors,error_pct,dropped,
 *            achieved_per_s,p50_us,p90_us,p99_us,p99_9_us,max_us,mean_us,pass
 *   run      a row per phase (warmup, measure), then a row per request name
 *            of each; with --repeat, a row per repetition (phase measure)
 *   ramp     per step: its warmup and measure rows, then per request name
 *   compare  a row per variant and repetition (phase measure)
 * Fields a row has no figure for are empty.
 *
 * Numbers are written as in the JSON (shortest form that reads back the
 * same); a missing value is an empty field. Text fields are quoted when they
 * hold a comma, quote or line break, and a text field that a spreadsheet
 * would read as a formula (= + - @ first) gets a leading apostrophe. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "doc/keys.h"
#include "report/render_int.h"
#include "util/units.h"

static void num(FILE *f, const json_t *o, const char *path)
{
	double v;
	if (!rr_num(o, path, &v))
		return;
	char b[64];
	snprintf(b, sizeof b, "%.15g", v);
	if (strtod(b, NULL) != v)
		snprintf(b, sizeof b, "%.17g", v);
	fputs(b, f);
}

static void text(FILE *f, const char *s)
{
	if (!s)
		return;
	bool formula = *s == '=' || *s == '+' || *s == '-' || *s == '@';
	if (formula) {
		/* a negative number is data, not a formula */
		char *end;
		strtod(s, &end);
		if (end != s && *end == '\0')
			formula = false;
	}
	bool quote = formula || strpbrk(s, ",\"\r\n") != NULL;
	if (quote)
		fputc('"', f);
	if (formula)
		fputc('\'', f);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', f);
		fputc(*s, f);
	}
	if (quote)
		fputc('"', f);
}

static void boolean(FILE *f, const json_t *o, const char *path)
{
	bool b;
	if (rr_bool(o, path, &b))
		fputs(b ? "true" : "false", f);
}

static void run_csv(FILE *f, const json_t *root)
{
	fputs("t_s,completed,errors,p50_us,p99_us,connect_refused,connect_reset,connect_timeout,"
	      "connect_other,dropped,unsent\n",
	      f);
	size_t i;
	const json_t *p;
	json_array_foreach(rr_arr(root, KEY_SERIES), i, p) {
		num(f, p, KEY_T_S);
		fputc(',', f);
		num(f, p, "completed");
		fputc(',', f);
		num(f, p, "errors");
		fputc(',', f);
		num(f, p, KEY_P50_US);
		fputc(',', f);
		num(f, p, KEY_P99_US);
		/* what kept requests from being sent (empty in older results) */
		static const char *const more[] = {"connect_failures.refused",
						   "connect_failures.reset",
						   "connect_failures.timeout",
						   "connect_failures.other", "dropped", "unsent"};
		for (size_t k = 0; k < sizeof more / sizeof more[0]; k++) {
			fputc(',', f);
			num(f, p, more[k]);
		}
		fputc('\n', f);
	}
}

/* A cost in US dollars, as the reports write it (without "$"). */
static void cost(FILE *f, const json_t *o, const char *path)
{
	double v;
	if (!rr_num(o, path, &v))
		return;
	char b[64];
	fputs(units_fmt_cost(b, sizeof b, v, ""), f);
}

/* The cost profile called `name` of a ramp step, or NULL. */
static const json_t *step_profile(const json_t *step, const char *name)
{
	size_t k;
	const json_t *p;
	json_array_foreach(rr_arr(step, "cost.profiles"), k, p) {
		const char *n = rr_str(p, KEY_NAME);
		if (n && !strcmp(n, name))
			return p;
	}
	return NULL;
}

static void ramp_csv(FILE *f, const json_t *root)
{
	const json_t *steps = rr_arr(root, KEY_STEPS);
	const char *names[16];
	size_t nn = report_outcome_names(steps, names, 16);
	const char *profiles[16];
	size_t np = 0;
	size_t i;
	const json_t *s;
	json_array_foreach(steps, i, s) {
		size_t k;
		const json_t *p;
		json_array_foreach(rr_arr(s, "cost.profiles"), k, p) {
			const char *n = rr_str(p, KEY_NAME);
			bool seen = !n;
			for (size_t j = 0; j < np && !seen; j++)
				seen = !strcmp(profiles[j], n);
			if (!seen && np < 16)
				profiles[np++] = n;
		}
	}
	fputs("step,refine,interrupted,offered_per_s,achieved_per_s,p50_us,p90_us,p99_us,p99_9_us,"
	      "max_us,error_pct,drop_pct,pass,reason",
	      f);
	for (size_t j = 0; j < nn; j++) {
		fputc(',', f);
		char h[160];
		snprintf(h, sizeof h, "%s_rate_pct", names[j]);
		text(f, h);
	}
	for (size_t j = 0; j < np; j++) {
		fputc(',', f);
		char h[160];
		snprintf(h, sizeof h, "usd_per_million_%s", profiles[j]);
		text(f, h);
	}
	fputc('\n', f);
	json_array_foreach(steps, i, s) {
		fprintf(f, "%zu,", i + 1);
		boolean(f, s, "refine");
		fputc(',', f);
		boolean(f, s, "interrupted");
		fputc(',', f);
		num(f, s, KEY_OFFERED_PER_S);
		fputc(',', f);
		num(f, s, KEY_ACHIEVED_PER_S);
		static const char *const lat[] = {KEY_P50_US, KEY_P90_US, KEY_P99_US, KEY_P99_9_US,
						  KEY_MAX_US};
		for (size_t k = 0; k < 5; k++) {
			char path[64];
			snprintf(path, sizeof path, "measure.latency.%s", lat[k]);
			fputc(',', f);
			num(f, s, path);
		}
		fputc(',', f);
		num(f, s, KEY_ERROR_PCT);
		fputc(',', f);
		num(f, s, KEY_DROP_PCT);
		fputc(',', f);
		boolean(f, s, "verdict.pass");
		fputc(',', f);
		text(f, rr_str(s, "verdict.reason"));
		for (size_t j = 0; j < nn; j++) {
			fputc(',', f);
			num(f, report_step_outcome(s, names[j]), KEY_RATE_PCT);
		}
		for (size_t j = 0; j < np; j++) {
			fputc(',', f);
			cost(f, step_profile(s, profiles[j]), KEY_USD_PER_MILLION_REQUESTS);
		}
		fputc('\n', f);
	}
}

static const struct {
	const char *summary, *ratio;
} metric_map[] = {
	{KEY_ACHIEVED_PER_S, "throughput"},
	{KEY_CAPACITY_PER_S, "capacity"},
	{KEY_P50_US, "p50"},
	{KEY_P90_US, "p90"},
	{KEY_P99_US, "p99"},
	{KEY_P99_9_US, "p99.9"},
	{KEY_MAX_US, "max"},
};

static void compare_csv(FILE *f, const json_t *root)
{
	fputs("variant,baseline,metric,median,min,max,ratio,ci95_low,ci95_high,significant,verdict\n",
	      f);
	const json_t *variants = rr_arr(root, KEY_VARIANTS);
	const json_t *ratios = rr_arr(root, KEY_RATIOS);
	const char *base = rr_str(json_array_get(variants, 0), KEY_NAME);
	size_t i;
	const json_t *v;
	json_array_foreach(variants, i, v) {
		if (i >= REPORT_MAX_VARIANTS)
			break;
		const char *name = rr_str(v, KEY_NAME);
		const json_t *summary = rr_obj(v, KEY_SUMMARY);
		const char *key;
		const json_t *fig;
		size_t nfig = 0;
		json_object_foreach((json_t *)summary, key, fig) {
			if (!json_is_object(fig))
				continue;
			if (++nfig > 32) /* pacer writes 6 */
				break;
			text(f, name);
			fputc(',', f);
			text(f, base);
			fputc(',', f);
			text(f, key);
			fputc(',', f);
			num(f, fig, "median");
			fputc(',', f);
			num(f, fig, "min");
			fputc(',', f);
			num(f, fig, "max");
			const char *rm = NULL;
			for (size_t k = 0; k < sizeof metric_map / sizeof metric_map[0]; k++)
				if (strcmp(metric_map[k].summary, key) == 0)
					rm = metric_map[k].ratio;
			const json_t *ratio = NULL;
			size_t k;
			const json_t *r;
			json_array_foreach(ratios, k, r) {
				if (k >= REPORT_MAX_RATIOS)
					break;
				const char *m = rr_str(r, KEY_METRIC), *vn = rr_str(r, KEY_VARIANT);
				if (rm && m && vn && name && !strcmp(m, rm) && !strcmp(vn, name))
					ratio = r;
			}
			fputc(',', f);
			num(f, ratio, "ratio");
			fputc(',', f);
			num(f, ratio, KEY_CI95_LOW);
			fputc(',', f);
			num(f, ratio, KEY_CI95_HIGH);
			fputc(',', f);
			boolean(f, ratio, "significant");
			fputc(',', f);
			text(f, rr_str(ratio, KEY_VERDICT));
			fputc('\n', f);
		}
	}
}

/* ---- summary rows ------------------------------------------------------ */

enum sum_col {
	SC_VARIANT, SC_REPETITION, SC_STEP, SC_OFFERED, SC_PHASE, SC_NAME, SC_DURATION,
	SC_SCHEDULED, SC_SENT, SC_COMPLETED, SC_ERRORS, SC_ERROR_PCT, SC_DROPPED, SC_ACHIEVED,
	SC_P50, SC_P90, SC_P99, SC_P99_9, SC_MAX, SC_MEAN, SC_PASS, SC_N
};

static const char *const sum_header[SC_N] = {
	"variant",      "repetition",
	"step",         KEY_OFFERED_PER_S,
	"phase",        "name",
	KEY_DURATION_S, "scheduled",
	"sent",         "completed",
	"errors",       KEY_ERROR_PCT,
	"dropped",      KEY_ACHIEVED_PER_S,
	KEY_P50_US,     KEY_P90_US,
	KEY_P99_US,     KEY_P99_9_US,
	KEY_MAX_US,     KEY_MEAN_US,
	"pass",
};

/* One row: for each column, the JSON object and path its number is read
 * from (NULL: empty), or a text. */
struct sum_row {
	const json_t *o[SC_N];
	const char *path[SC_N];
	const char *txt[SC_N];
	size_t idx[SC_N]; /* 1-based counters (repetition, step); 0: none */
};

static void sum_set(struct sum_row *r, enum sum_col c, const json_t *o, const char *path)
{
	r->o[c] = o;
	r->path[c] = path;
}

static void sum_emit(FILE *f, const struct sum_row *r)
{
	for (int c = 0; c < SC_N; c++) {
		if (c)
			fputc(',', f);
		if (r->txt[c])
			text(f, r->txt[c]);
		else if (r->idx[c])
			fprintf(f, "%zu", r->idx[c]);
		else if (r->o[c] && c == SC_PASS)
			boolean(f, r->o[c], r->path[c]);
		else if (r->o[c])
			num(f, r->o[c], r->path[c]);
	}
	fputc('\n', f);
}

/* The latency columns from a latency object (p50_us ... mean_us). */
static void sum_latency(struct sum_row *r, const json_t *lat)
{
	sum_set(r, SC_P50, lat, KEY_P50_US);
	sum_set(r, SC_P90, lat, KEY_P90_US);
	sum_set(r, SC_P99, lat, KEY_P99_US);
	sum_set(r, SC_P99_9, lat, KEY_P99_9_US);
	sum_set(r, SC_MAX, lat, KEY_MAX_US);
	sum_set(r, SC_MEAN, lat, KEY_MEAN_US);
}

/* A full phase object (a run's warmup/measure, a ramp step's measure). */
static void sum_phase(struct sum_row *r, const json_t *ph)
{
	sum_set(r, SC_DURATION, ph, KEY_DURATION_S);
	sum_set(r, SC_SCHEDULED, ph, "requests.scheduled");
	sum_set(r, SC_SENT, ph, "requests.sent");
	sum_set(r, SC_COMPLETED, ph, "requests.completed");
	sum_set(r, SC_ERRORS, ph, "errors.total");
	sum_set(r, SC_ERROR_PCT, ph, KEY_ERROR_PCT);
	sum_set(r, SC_DROPPED, ph, "requests.dropped");
	sum_set(r, SC_ACHIEVED, ph, "rate.achieved_per_s");
	sum_latency(r, rr_obj(ph, KEY_LATENCY));
}

/* The per-name rows of a phase, after its own row (base: the columns they
 * share with it: variant, step, phase...). */
static void sum_names(FILE *f, const struct sum_row *base, const json_t *ph)
{
	size_t i;
	const json_t *n;
	json_array_foreach(rr_arr(ph, KEY_BY_NAME), i, n) {
		struct sum_row r = {0};
		for (int c = SC_VARIANT; c <= SC_PHASE; c++) {
			r.o[c] = base->o[c];
			r.path[c] = base->path[c];
			r.txt[c] = base->txt[c];
			r.idx[c] = base->idx[c];
		}
		r.txt[SC_NAME] = rr_str(n, KEY_NAME);
		sum_set(&r, SC_SENT, n, "sent");
		sum_set(&r, SC_COMPLETED, n, "completed");
		sum_set(&r, SC_ERRORS, n, "errors");
		sum_set(&r, SC_ERROR_PCT, n, KEY_ERROR_PCT);
		sum_latency(&r, rr_obj(n, KEY_LATENCY));
		sum_emit(f, &r);
	}
}

/* A repetition figure (run --repeat, compare): phase measure. */
static void sum_rep(struct sum_row *r, const json_t *rep)
{
	r->txt[SC_PHASE] = "measure";
	sum_set(r, SC_COMPLETED, rep, "completed");
	sum_set(r, SC_ERRORS, rep, "errors");
	sum_set(r, SC_ERROR_PCT, rep, KEY_ERROR_PCT);
	sum_set(r, SC_ACHIEVED, rep, KEY_ACHIEVED_PER_S);
	sum_set(r, SC_P50, rep, KEY_P50_US);
	sum_set(r, SC_P90, rep, KEY_P90_US);
	sum_set(r, SC_P99, rep, KEY_P99_US);
	sum_set(r, SC_P99_9, rep, KEY_P99_9_US);
	sum_set(r, SC_MAX, rep, KEY_MAX_US);
}

static void summary_csv(FILE *f, const struct loaded_result *lr)
{
	const json_t *root = lr->root;
	for (int c = 0; c < SC_N; c++) {
		if (c)
			fputc(',', f);
		fputs(sum_header[c], f);
	}
	fputc('\n', f);
	size_t i, k;
	const json_t *x, *y;
	switch (lr->kind) {
	case RESULT_KIND_RUN: {
		static const char *const phases[] = {"warmup", "measure"};
		for (int p = 0; p < 2; p++) {
			const json_t *ph = rr_obj(root, phases[p]);
			double d;
			/* no warm-up: no row */
			if (!ph || (p == 0 && (!rr_num(ph, KEY_DURATION_S, &d) || d <= 0)))
				continue;
			struct sum_row r = {0};
			r.txt[SC_PHASE] = phases[p];
			sum_set(&r, SC_OFFERED, ph, "rate.offered_per_s");
			sum_phase(&r, ph);
			sum_emit(f, &r);
			sum_names(f, &r, ph);
		}
		json_array_foreach(rr_arr(root, KEY_REPETITIONS), i, x) {
			struct sum_row r = {0};
			r.idx[SC_REPETITION] = i + 1;
			sum_set(&r, SC_OFFERED, rr_obj(root, KEY_MEASURE), "rate.offered_per_s");
			sum_rep(&r, x);
			sum_emit(f, &r);
		}
		break;
	}
	case RESULT_KIND_RAMP:
		json_array_foreach(rr_arr(root, KEY_STEPS), i, x) {
			const json_t *w = rr_obj(x, KEY_WARMUP);
			double d;
			if (w && rr_num(w, KEY_DURATION_S, &d) && d > 0) {
				struct sum_row r = {0};
				r.idx[SC_STEP] = i + 1;
				sum_set(&r, SC_OFFERED, x, KEY_OFFERED_PER_S);
				r.txt[SC_PHASE] = "warmup";
				sum_set(&r, SC_DURATION, w, KEY_DURATION_S);
				sum_set(&r, SC_SCHEDULED, w, "requests.scheduled");
				sum_set(&r, SC_SENT, w, "requests.sent");
				sum_set(&r, SC_COMPLETED, w, "requests.completed");
				sum_set(&r, SC_ERRORS, w, "errors");
				sum_set(&r, SC_DROPPED, w, "requests.dropped");
				sum_set(&r, SC_ACHIEVED, w, KEY_ACHIEVED_PER_S);
				sum_set(&r, SC_P50, w, KEY_P50_US);
				sum_set(&r, SC_P99, w, KEY_P99_US);
				sum_set(&r, SC_MAX, w, KEY_MAX_US);
				sum_emit(f, &r);
			}
			const json_t *m = rr_obj(x, KEY_MEASURE);
			struct sum_row r = {0};
			r.idx[SC_STEP] = i + 1;
			sum_set(&r, SC_OFFERED, x, KEY_OFFERED_PER_S);
			r.txt[SC_PHASE] = "measure";
			if (m)
				sum_phase(&r, m);
			/* the step's own figures where its phase has none (compact steps) */
			sum_set(&r, SC_ACHIEVED, x, KEY_ACHIEVED_PER_S);
			sum_set(&r, SC_ERROR_PCT, x, KEY_ERROR_PCT);
			sum_set(&r, SC_PASS, x, "verdict.pass");
			sum_emit(f, &r);
			if (m)
				sum_names(f, &r, m);
		}
		break;
	case RESULT_KIND_COMPARE:
		json_array_foreach(rr_arr(root, KEY_VARIANTS), i, x) {
			if (i >= REPORT_MAX_VARIANTS)
				break;
			json_array_foreach(rr_arr(x, KEY_REPETITIONS), k, y) {
				struct sum_row r = {0};
				r.txt[SC_VARIANT] = rr_str(x, KEY_NAME);
				r.idx[SC_REPETITION] = k + 1;
				sum_rep(&r, y);
				sum_emit(f, &r);
			}
		}
		break;
	}
}

int csv_write(FILE *f, const struct loaded_result *r, const struct report_options *o, char *err,
	      size_t errlen)
{
	(void)err;
	(void)errlen;
	if (o && o->csv_summary) {
		summary_csv(f, r);
		if (fflush(f) != 0 || ferror(f))
			return errno ? -errno : -EIO;
		return 0;
	}
	switch (r->kind) {
	case RESULT_KIND_RUN: run_csv(f, r->root); break;
	case RESULT_KIND_RAMP: ramp_csv(f, r->root); break;
	case RESULT_KIND_COMPARE: compare_csv(f, r->root); break;
	}
	if (fflush(f) != 0 || ferror(f))
		return errno ? -errno : -EIO;
	return 0;
}
