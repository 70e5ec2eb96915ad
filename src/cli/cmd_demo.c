/* pacer demo — a short self-contained benchmark, end to end: pacer drives its
 * own embedded target (plan vast_ortb_mix: VAST GETs and OpenRTB POSTs, about
 * 55 % fill, a latency tail) over loopback and leaves its result files in a
 * folder. What `make demo` runs. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "cli/cli.h"
#include "cli/help.h"
#include "cli/opts.h"

static const struct cli_example demo_examples[] = {
	{"pacer demo", "1,000 req/s against the embedded target; results under results/"},
	{"pacer demo -r 5k --out-dir /tmp/demo", "a faster demo, its files elsewhere"},
};

static const struct cli_help cli_help_demo = {
	.name = "demo",
	.summary = "a short self-contained benchmark, end to end",
	.synopsis = "pacer demo [options]",
	.description = "A short self-contained benchmark: pacer drives its own embedded target "
		       "(plan vast_ortb_mix) over loopback and writes the results to a folder.",
	.examples = demo_examples,
	.n_examples = sizeof demo_examples / sizeof demo_examples[0],
	.exits = cli_exits_plain,
	.n_exits = sizeof cli_exits_plain / sizeof cli_exits_plain[0],
	.see = "README.md",
};

int cmd_demo(int argc, char **argv)
{
	const char *dir_arg = "results";
	const char *rate = "1000";
	bool help = false;
	struct opt tab[] = {
		{'h', "help", OPT_HELP, &help, NULL, NULL, "show this help", false},
		{0, "out-dir", OPT_STR, &dir_arg, "DIR", "results", "folder for the result files (a subfolder per demo)", false},
		{'r', "rate", OPT_STR, &rate, "R", "1000", "offered requests/s", false},
	};
	size_t ntab = sizeof tab / sizeof tab[0];
	const char *pos[1];
	size_t npos = 0;
	char err[512];
	int prc = opts_parse(tab, ntab, argc, argv, pos, 0, &npos, err, sizeof err);
	if (prc == 1) {
		cli_help_print(stdout, &cli_help_demo, tab, ntab);
		return EXIT_OK;
	}
	if (prc < 0) {
		fprintf(stderr, "pacer demo: %s\n", err);
		return EXIT_USAGE;
	}
	char dir[1024];
	time_t now = time(NULL);
	struct tm tm;
	gmtime_r(&now, &tm);
	char stamp[32];
	strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tm);
	if (mkdir(dir_arg, 0777) != 0 && errno != EEXIST) {
		fprintf(stderr, "pacer demo: cannot create %s: %s\n", dir_arg, strerror(errno));
		return EXIT_RUNTIME;
	}
	snprintf(dir, sizeof dir, "%s/demo-%s", dir_arg, stamp);
	if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
		fprintf(stderr, "pacer demo: cannot create %s: %s\n", dir, strerror(errno));
		return EXIT_RUNTIME;
	}
	char out[1100], hgrm[1100];
	snprintf(out, sizeof out, "%s/run.json", dir);
	snprintf(hgrm, sizeof hgrm, "%s/latency.hgrm", dir);
	char rate_buf[64];
	snprintf(rate_buf, sizeof rate_buf, "%s", rate);
	char *run_argv[] = {
		"run", "--self-contained=vast_ortb_mix", "--rate", rate_buf, "--warmup", "2s",
		"--duration", "10s", "--connections", "64", "--out", out, "--hgrm", hgrm,
		/* a demo on a busy or small machine may well flag its own generator:
		 * it says so in the warnings; the demo still succeeds */
		"--limited-ok", "--report-dir", dir, NULL,
	};
	int run_argc = (int)(sizeof run_argv / sizeof run_argv[0]) - 1;
	printf("pacer demo: open loop at %s req/s against the embedded vast_ortb_mix target, "
	       "2 s warm-up + 10 s measured\n\n",
	       rate);
	fflush(stdout);
	int rc = cmd_run(run_argc, run_argv);
	if (rc != 0 && rc != EXIT_INTERRUPTED)
		return rc;
	printf("\nresults:\n  %s   the JSON result (docs/result.md)\n  %s   latency spectrum, "
	       "HdrHistogram .hgrm\n  %s/report.md, report.html   the report (docs/report.md)\n",
	       out, hgrm, dir);
	return rc;
}
