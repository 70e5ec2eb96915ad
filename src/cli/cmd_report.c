/* pacer report RESULT.json — render a saved result as Markdown, HTML, a
 * terminal summary, CSV, or HdrHistogram .hgrm / .hlog (docs/report.md);
 * or, with --report-dir, all of them into a folder. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/history_io.h"
#include "cli/opts.h"
#include "cli/report_io.h"
#include "report/render.h"
#include "util/afile.h"
#include "util/err.h"

static void usage(FILE *f, struct opt *tab, size_t n)
{
	fprintf(f, "usage: pacer report RESULT.json [--format md|html|text|csv|hgrm|hlog] [-o FILE]\n"
		   "       pacer report RESULT.json --report-dir DIR\n"
		   "       pacer report HISTORY.db:ID ...   (a run of a history; :last, :prev)\n\n"
		   "Renders a saved result of pacer run, ramp or compare (--out FILE, --history).\n"
		   "The same result always gives the same report.\n\n");
	opts_help(f, tab, n);
	fprintf(f, "\nExit codes: 0 written, 2 bad option or unusable result file, 3 cannot write.\n"
		   "See docs/report.md.\n");
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
	uint32_t step = 0;
	bool help = false;
	struct opt tab[] = {
		{0, "format", OPT_STR, &format, "md|html|text|csv|hgrm|hlog", "md", "output format", false},
		{'h', "help", OPT_HELP, &help, NULL, NULL, "show this help", false},
		{'o', "out", OPT_STR, &out, "FILE", "stdout", "write here, atomically (- is stdout)", false},
		{0, "report-dir", OPT_STR, &dir, "DIR", NULL, "write every format and the charts into DIR instead", false},
		{0, "step", OPT_U32, &step, "N", "highest passing", "ramp, hgrm/hlog: this step (1-based); hlog default: every step", false},
		{0, "timing", OPT_STR, &timing, "NAME", "latency", "hgrm/hlog: latency, service_time, ttfb, connect_time, send_lag, loop_lag or server_time", false},
	};
	size_t ntab = sizeof tab / sizeof tab[0];
	const char *pos[2];
	size_t npos = 0;
	char err[1024];
	int rc = opts_parse(tab, ntab, argc, argv, pos, 2, &npos, err, sizeof err);
	if (rc == 1) {
		usage(stdout, tab, ntab);
		return EXIT_OK;
	}
	if (rc < 0) {
		fprintf(stderr, "pacer report: %s\n", err);
		return EXIT_USAGE;
	}
	if (npos != 1) {
		fprintf(stderr, "pacer report: expected one RESULT.json, got %zu arguments (see pacer "
				"report --help)\n",
			npos);
		return EXIT_USAGE;
	}
	enum report_format fmt;
	if (report_format_parse(format, &fmt) != 0) {
		fprintf(stderr, "pacer report: --format '%s': expected md, html, text, csv, hgrm or hlog\n",
			format);
		return EXIT_USAGE;
	}
	if (dir && (opts_given(tab, ntab, "format") || opts_given(tab, ntab, "out"))) {
		fprintf(stderr, "pacer report: --report-dir writes every format; it takes no --format "
				"or --out\n");
		return EXIT_USAGE;
	}
	if ((opts_given(tab, ntab, "timing") || opts_given(tab, ntab, "step")) && !dir &&
	    fmt != REPORT_FMT_HGRM && fmt != REPORT_FMT_HLOG) {
		fprintf(stderr, "pacer report: --timing and --step apply to --format hgrm and hlog\n");
		return EXIT_USAGE;
	}

	struct loaded_result res;
	rc = cli_result_load_src(&res, pos[0], err, sizeof err);
	if (rc) {
		fprintf(stderr, "pacer report: %s\n", err);
		return exit_for(rc);
	}
	if (dir) {
		rc = cli_report_folder_write(&res, dir, err, sizeof err);
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
	struct afile af;
	const char *path = out ? out : "-";
	rc = afile_open(&af, path);
	if (rc) {
		fprintf(stderr, "pacer report: cannot write -o %s: %s\n", path, err_name(rc));
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
		fprintf(stderr, "pacer report: cannot write -o %s: %s\n", path, err_name(rc));
		return EXIT_RUNTIME;
	}
	return EXIT_OK;
}
