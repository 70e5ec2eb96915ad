/* pacer report RESULT.json — render a saved result as Markdown, HTML, a
 * terminal summary, CSV, or HdrHistogram .hgrm / .hlog (docs/report.md);
 * or, with --report-dir, all of them into a folder. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/history_io.h"
#include "cli/opts.h"
#include "cli/help.h"
#include "history/diff.h"
#include "history/headline.h"
#include "history/history.h"
#include "cli/report_io.h"
#include "report/render.h"
#include "util/afile.h"
#include "util/err.h"

static const struct cli_example report_examples[] = {
	{"pacer report result.json --format html -o report.html", "a self-contained HTML report"},
	{"pacer report result.json --report-dir out/",
	 "every format at once: Markdown, HTML, text, CSV, hgrm, hlog, SVG charts"},
};

static const struct cli_help cli_help_report = {
	.name = "report",
	.summary = "render a saved result: Markdown, HTML, text, CSV, hgrm, hlog",
	.synopsis = "pacer report RESULT.json [--format md|html|text|csv|hgrm|hlog] [-o FILE]\n"
		    "pacer report RESULT.json --report-dir DIR\n"
		    "pacer report HISTORY.db:ID ...   (a run of a history; :last, :prev)",
	.description = "Renders a saved result of pacer run, ramp or compare (--out FILE, "
		       "--history). The same result always gives the same report.",
	.examples = report_examples,
	.n_examples = sizeof report_examples / sizeof report_examples[0],
	.exits = cli_exits_plain,
	.n_exits = sizeof cli_exits_plain / sizeof cli_exits_plain[0],
	.see = "docs/report.md",
};

static void usage(FILE *f, struct opt *tab, size_t n)
{
	cli_help_print(f, &cli_help_report, tab, n);
}

/* --history: the runs of the reported result's benchmark (same kind and
 * target), oldest first, the newest REPORT_TREND_MAX_POINTS kept. */
struct trend_ctx {
	struct history_headline ref;
	const struct loaded_result *res; /* the reported result */
	struct history_db *db;
	int metrics[REPORT_TREND_MAX_METRICS];
	size_t n_metrics;
	struct report_trend_point pts[REPORT_TREND_MAX_POINTS];
	size_t n;
};

static int trend_row(void *arg, const struct history_row *row)
{
	struct trend_ctx *t = arg;
	if (t->n == REPORT_TREND_MAX_POINTS) {
		memmove(t->pts, t->pts + 1, sizeof t->pts[0] * (REPORT_TREND_MAX_POINTS - 1));
		t->n--;
	}
	struct report_trend_point *p = &t->pts[t->n++];
	const struct history_headline *h = &row->h;
	p->id = (double)row->id;
	/* latencies are stored in µs and charted in ms, as every other chart */
	for (size_t m = 0; m < t->n_metrics; m++) {
		int hm = t->metrics[m];
		bool lat = hm == HM_P50 || hm == HM_P90 || hm == HM_P99 || hm == HM_P999 ||
			   hm == HM_SESSION_P50 || hm == HM_SESSION_P99;
		p->v[m] = lat ? h->v[hm] / 1000 : h->v[hm];
	}
	/* pacer diff's rule (history/diff.h), the reported result as NEW */
	p->comparable = false;
	snprintf(p->why, sizeof p->why, "the stored result does not read");
	char *json = NULL, err[256];
	size_t len = 0;
	struct loaded_result r;
	struct diff_result *d = malloc(sizeof *d);
	if (d && !history_get(t->db, row->id, &json, &len, err, sizeof err) &&
	    !result_read_mem(&r, json, len, "history run", err, sizeof err)) {
		diff_comparable(&r, t->res, d);
		p->comparable = d->comparable;
		snprintf(p->why, sizeof p->why, "%.47s", d->comparable ? "" : d->field);
		result_free(&r);
	}
	free(json);
	free(d);
	return 0;
}

static const char *trend_label(int m)
{
	static const char *const labels[HM_COUNT] = {"achieved (req/s)",
						     "p50 (ms)",
						     "p90 (ms)",
						     "p99 (ms)",
						     "p99.9 (ms)",
						     "errors (%)",
						     "capacity (req/s)",
						     "target CPU (ms/request)",
						     "USD per million requests",
						     "sessions completed (%)",
						     "session p50 (ms)",
						     "session p99 (ms)"};
	return m >= 0 && m < HM_COUNT ? labels[m] : "?";
}

/* --trend LIST into t->metrics. 0, or EXIT_USAGE after one line. */
static int trend_metrics(const char *list, struct trend_ctx *t)
{
	char buf[256];
	snprintf(buf, sizeof buf, "%s", list);
	t->n_metrics = 0;
	for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		int m = headline_metric_parse(tok);
		if (m < 0) {
			const char *names[HM_COUNT];
			for (int i = 0; i < HM_COUNT; i++)
				names[i] = headline_metric_name((enum headline_metric)i);
			char dym[64];
			fprintf(stderr,
				"pacer report: --trend '%s': '%s' is none of " HEADLINE_METRIC_LIST "%s\n",
				list, tok,
				opts_did_you_mean(dym, sizeof dym, tok, names, HM_COUNT));
			return EXIT_USAGE;
		}
		if (t->n_metrics == REPORT_TREND_MAX_METRICS) {
			fprintf(stderr, "pacer report: --trend '%s': at most 4 metrics\n", list);
			return EXIT_USAGE;
		}
		t->metrics[t->n_metrics++] = m;
	}
	if (!t->n_metrics) {
		fprintf(stderr, "pacer report: --trend: no metric\n");
		return EXIT_USAGE;
	}
	return 0;
}

/* Usage-type failures (bad input) exit 2; failing to write exits 3. */
static int exit_for(int rc)
{
	if (rc == PACER_EPARSE || rc == PACER_EUNSUPPORTED || rc == PACER_ETOOBIG || rc == -ENOENT ||
	    rc == -EACCES || rc == -EISDIR || rc == -EINVAL || rc == -EBUSY)
		return EXIT_USAGE;
	return EXIT_RUNTIME;
}

int cmd_report(int argc, char **argv)
{
	const char *format = "md", *out = NULL, *timing = "latency", *dir = NULL;
	const char *history = NULL, *trend_list = NULL;
	uint32_t step = 0;
	bool help = false;
	const char *rows = NULL;
	struct opt tab[] = {
		{0, "format", OPT_STR, &format, "md|html|text|csv|hgrm|hlog", "md", "output format", false},
		{'h', "help", OPT_HELP, &help, NULL, NULL, "show this help", false},
		{0, "history", OPT_STR, &history, "FILE.db", NULL, "md, html: add a trend chart of the result's benchmark over this run history", false},
		{'o', "out", OPT_STR, &out, "FILE", "stdout", "write here, atomically (- is stdout)", false},
		{0, "rows", OPT_STR, &rows, "kind|summary", "kind", "csv: the rows of the kind (run: per second, ramp: per step) or a summary row per phase/step, request name and repetition", false},
		{0, "report-dir", OPT_STR, &dir, "DIR", NULL, "write every format and the charts into DIR instead", false},
		{0, "step", OPT_U32, &step, "N", "highest passing", "ramp, hgrm/hlog: this step (1-based); hlog default: every step", false},
		{0, "trend", OPT_STR, &trend_list, "METRICS", "p50,p99", "--history: the metrics charted (up to 4)", false},
		{0, "timing", OPT_STR, &timing, "NAME", "latency", "hgrm/hlog: latency, service_time, ttfb, connect_time, send_lag, loop_lag or server_time", false},
	};
	size_t ntab = sizeof tab / sizeof tab[0];
	const char *pos[2];
	struct opts_positionals args = {.what = "one RESULT.json", .min = 1, .max = 1, .v = pos};
	int rc = opts_parse_cmd("report", tab, ntab, argc, argv, usage, &args);
	if (rc >= 0)
		return rc;
	char err[1024];
	enum report_format fmt;
	if (report_format_parse(format, &fmt) != 0) {
		static const char *const words[] = {"md",   "html", "text",     "csv",
						    "hgrm", "hlog", "markdown", "txt"};
		char dym[64];
		fprintf(stderr,
			"pacer report: --format '%s': expected md, html, text, csv, hgrm or hlog%s\n",
			format, opts_did_you_mean(dym, sizeof dym, format, words, 6));
		return EXIT_USAGE;
	}
	if (dir && (opts_given(tab, ntab, "format") || opts_given(tab, ntab, "out"))) {
		fprintf(stderr, "pacer report: --report-dir writes every format; it takes no --format "
				"or --out\n");
		return EXIT_USAGE;
	}
	if (dir && cli_report_dir_refused("report", dir))
		return EXIT_USAGE;
	if ((opts_given(tab, ntab, "timing") || opts_given(tab, ntab, "step")) && !dir &&
	    fmt != REPORT_FMT_HGRM && fmt != REPORT_FMT_HLOG) {
		fprintf(stderr, "pacer report: --timing and --step apply to --format hgrm and hlog\n");
		return EXIT_USAGE;
	}

	bool csv_summary = false;
	if (rows) {
		if (fmt != REPORT_FMT_CSV || dir) {
			fprintf(stderr, "pacer report: --rows applies to --format csv\n");
			return EXIT_USAGE;
		}
		if (strcmp(rows, "summary") && strcmp(rows, "kind")) {
			static const char *const words[] = {"kind", "summary"};
			char dym[64];
			fprintf(stderr, "pacer report: --rows '%s': expected kind or summary%s\n",
				rows, opts_did_you_mean(dym, sizeof dym, rows, words, 2));
			return EXIT_USAGE;
		}
		csv_summary = !strcmp(rows, "summary");
	}

	/* an output that cannot be written is refused before the result is read */
	if (out && (rc = afile_check(out))) {
		fprintf(stderr, "pacer report: cannot write -o %s: %s\n", out, cli_output_why(rc));
		return EXIT_RUNTIME;
	}

	static struct trend_ctx tc;
	memset(&tc, 0, sizeof tc);
	if (trend_list && !history) {
		fprintf(stderr, "pacer report: --trend needs --history FILE.db\n");
		return EXIT_USAGE;
	}
	if (history && trend_metrics(trend_list ? trend_list : "p50,p99", &tc))
		return EXIT_USAGE;
	struct loaded_result res;
	rc = cli_result_load_src(&res, pos[0], err, sizeof err);
	if (rc) {
		fprintf(stderr, "pacer report: %s\n", err);
		return exit_for(rc);
	}
	struct report_trend trend = {.source = history, .n_metrics = tc.n_metrics, .pts = tc.pts};
	if (history) {
		history_headline_of(&res, &tc.ref);
		struct history_db *h;
		struct history_open_opts ro = {.read_only = true};
		rc = history_open(&h, history, &ro, err, sizeof err);
		struct history_filter f = {.target = tc.ref.target, .kind = tc.ref.kind,
					   .oldest_first = true};
		if (!rc) {
			tc.res = &res;
			tc.db = h;
			rc = history_list(h, &f, trend_row, &tc, err, sizeof err);
			history_close(h);
		}
		if (rc) {
			fprintf(stderr, "pacer report: --history %s\n", err);
			result_free(&res);
			return exit_for(rc);
		}
		for (size_t m = 0; m < tc.n_metrics; m++)
			trend.metrics[m] = trend_label(tc.metrics[m]);
		trend.n = tc.n;
	}
	if (dir) {
		rc = cli_report_folder_write_trend(&res, history ? &trend : NULL, dir, err,
						   sizeof err);
		result_free(&res);
		if (rc) {
			fprintf(stderr, "pacer report: %s\n", err);
			return rc == PACER_EPARSE || rc == PACER_EUNSUPPORTED ? EXIT_USAGE : EXIT_RUNTIME;
		}
		return EXIT_OK;
	}
	struct report_options o;
	report_options_default(&o);
	o.timing = timing;
	o.step = step;
	o.csv_summary = csv_summary;
	o.trend = history ? &trend : NULL;
	struct afile af;
	const char *path = out ? out : "-";
	rc = afile_open(&af, path);
	if (rc) {
		fprintf(stderr, "pacer report: cannot write -o %s: %s\n", path, cli_output_why(rc));
		result_free(&res);
		return EXIT_RUNTIME;
	}
	rc = report_render_opts(&res, fmt, &o, af.f, err, sizeof err);
	result_free(&res);
	if (rc) {
		afile_abort(&af);
		fprintf(stderr, "pacer report: %s\n", err);
		return rc == PACER_EPARSE || rc == PACER_EUNSUPPORTED ? EXIT_USAGE : EXIT_RUNTIME;
	}
	rc = afile_commit(&af);
	if (rc) {
		fprintf(stderr, "pacer report: cannot write -o %s: %s\n", path, cli_output_why(rc));
		return EXIT_RUNTIME;
	}
	return EXIT_OK;
}
