/* pacer — entry point: dispatch to a subcommand. */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"

static void usage(FILE *f)
{
	fprintf(f, "pacer %s — HTTP load generator and benchmark harness\n\n"
		   "usage: pacer COMMAND [options]\n\n"
		   "commands:\n"
		   "  run URL      measure a target (open loop with --rate, closed loop without)\n"
		   "  ramp URL     steps of load until an SLO breaks: the highest passing step\n"
		   "  bench FILE   run the benchmark a scenario file describes\n"
		   "  compare      A/B variants, interleaved, with confidence intervals\n"
		   "  serve        run the embedded target server (pacer serve --list-plans)\n"
		   "  demo         a short self-contained benchmark, end to end\n"
		   "  table CMD    request tables: hash, show, generate (pacer table --help)\n"
		   "  import har   turn a HAR recording into a request table (JSON Lines)\n"
		   "  report FILE  render a saved result: Markdown, HTML, text, CSV, hgrm, hlog\n"
		   "  history DB   the runs recorded with --history: list, trend, show, export\n"
		   "  diff OLD NEW two saved results compared, beyond noise; a CI gate (--fail-on)\n"
		   "  version      print version and source commit\n"
		   "  help         this text\n\n"
		   "`pacer COMMAND --help` lists a command's options; docs/ has a page per command.\n",
		PACER_VERSION);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return EXIT_USAGE;
	}
	const char *cmd = argv[1];
	if (strcmp(cmd, "run") == 0)
		return cmd_run(argc - 1, argv + 1);
	if (strcmp(cmd, "ramp") == 0)
		return cmd_ramp(argc - 1, argv + 1);
	if (strcmp(cmd, "bench") == 0)
		return cmd_bench(argc - 1, argv + 1);
	if (strcmp(cmd, "compare") == 0)
		return cmd_compare(argc - 1, argv + 1);
	if (strcmp(cmd, "serve") == 0)
		return cmd_serve(argc - 1, argv + 1);
	if (strcmp(cmd, "demo") == 0)
		return cmd_demo(argc - 1, argv + 1);
	if (strcmp(cmd, "table") == 0)
		return cmd_table(argc - 1, argv + 1);
	if (strcmp(cmd, "import") == 0)
		return cmd_import(argc - 1, argv + 1);
	if (strcmp(cmd, "report") == 0)
		return cmd_report(argc - 1, argv + 1);
	if (strcmp(cmd, "history") == 0)
		return cmd_history(argc - 1, argv + 1);
	if (strcmp(cmd, "diff") == 0)
		return cmd_diff(argc - 1, argv + 1);
	if (strcmp(cmd, "version") == 0 || strcmp(cmd, "--version") == 0) {
		printf("pacer %s (commit %s)\n", PACER_VERSION, PACER_COMMIT);
		return EXIT_OK;
	}
	if (strcmp(cmd, "help") == 0 || strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0) {
		usage(stdout);
		return EXIT_OK;
	}
	fprintf(stderr, "pacer: unknown command '%s' (see pacer help)\n", cmd);
	return EXIT_USAGE;
}
