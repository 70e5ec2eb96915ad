/* pacer bench SCENARIO.yaml [options] — run the benchmark a scenario file
 * describes (docs/scenario.md). The file becomes the command line of the
 * subcommand it names; options given after the file are appended, so they
 * override the file's values (repeatable ones, like --header, add to them).
 * A `table:` (a mix spec inline) is generated here and offered to the run
 * in memory (cmd_run_offered, cmd_ramp_offered). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/help.h"
#include "plan/scenario.h"
#include "table/table.h"
#include "util/err.h"
#include "cli/opts.h"
#include "util/file.h"

static const struct cli_example bench_examples[] = {
	{"pacer bench examples/scenarios/ad-serving-ramp.yaml", "the ramp that file describes"},
	{"pacer bench examples/scenarios/run-nginx.yaml -d 30s -o result.json",
	 "its run, measured for 30 s instead, the result kept"},
};

static const struct cli_exit bench_exits[] = {
	{EXIT_OK, "finished (a ramp: reached its require, or every step passed)"},
	{EXIT_SLO_FAILED, "a ramp (or a run with an SLO) failed its SLO"},
	{EXIT_USAGE, "usage error: unreadable or invalid scenario file (named with its line), bad "
		     "option or value, unreachable target"},
	{EXIT_RUNTIME, "runtime failure of pacer itself (out of memory, cannot write an output)"},
	{EXIT_GENERATOR_LIMITED, "results written, but flagged generator-limited"},
	{EXIT_INTERRUPTED, "interrupted by Ctrl-C / SIGINT / SIGTERM: results still written"},
};

static const struct cli_help bench_help = {
	.name = "bench",
	.summary = "run the benchmark a scenario file describes",
	.synopsis = "pacer bench SCENARIO.yaml [options of its kind...]",
	.description = "Runs the run, ramp or compare a scenario file describes; options after the "
		       "file override its values (`pacer bench FILE --help` lists them for its "
		       "kind). See docs/scenario.md and examples/scenarios.",
	.examples = bench_examples,
	.n_examples = sizeof bench_examples / sizeof bench_examples[0],
	.exits = bench_exits,
	.n_exits = sizeof bench_exits / sizeof bench_exits[0],
	.see = "docs/scenario.md",
};

int cmd_bench(int argc, char **argv)
{
	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		cli_help_print(argc < 2 ? stderr : stdout, &bench_help, NULL, 0);
		return argc < 2 ? EXIT_USAGE : EXIT_OK;
	}
	const char *path = argv[1];
	char *text = NULL;
	size_t len = 0;
	int rc = file_read_all(path, SCENARIO_FILE_CAP, &text, &len);
	if (rc) {
		fprintf(stderr, "pacer bench: %s: cannot read: %s\n", file_shown(path),
			rc == PACER_ETOOBIG ? "larger than 1 MiB" : err_name(rc));
		return EXIT_USAGE;
	}
	static struct scenario sc;
	char err[1024];
	rc = scenario_parse(text, len, file_shown(path), &sc, err, sizeof err);
	if (!strcmp(path, "-"))
		opts_stdin_take("bench", "the scenario -");
	free(text);
	if (rc) {
		fprintf(stderr, "pacer bench: %s\n", err);
		return EXIT_USAGE;
	}
	/* a mix spec inline (table:) is built now and handed to the run in
	 * memory; --requests-file or --bodies after the file override it */
	struct table *table = NULL;
	rc = scenario_table(&sc, NULL, &table, err, sizeof err);
	if (rc) {
		fprintf(stderr, "pacer bench: %s\n", rc == -ENOMEM ? "out of memory" : err);
		scenario_free(&sc);
		return rc == -ENOMEM ? EXIT_RUNTIME : EXIT_USAGE;
	}
	char *args[SCENARIO_MAX_ARGS * 2];
	int n = 0;
	for (int i = 0; i < sc.nargs; i++)
		args[n++] = sc.args[i];
	for (int i = 2; i < argc && n < (int)(sizeof args / sizeof args[0]) - 1; i++)
		args[n++] = argv[i];
	args[n] = NULL;
	cli_bench_scenario = path;
	if (!strcmp(sc.kind, "run"))
		rc = cmd_run_offered(n, args, table);
	else if (!strcmp(sc.kind, "ramp"))
		rc = cmd_ramp_offered(n, args, table);
	else
		rc = cmd_compare(n, args); /* a table is only for run and ramp (scenario.c) */
	cli_bench_scenario = NULL;
	table_free(table);
	scenario_free(&sc);
	return rc;
}
