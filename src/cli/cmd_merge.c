/* pacer merge A.json B.json ... -o merged.json — the results of the
 * segments of one plan (--segment K/N) merged into the result one generator
 * would have written (docs/distributed.md). The merging is result/merge.c;
 * reading and writing the files is here. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/help.h"
#include "cli/opts.h"
#include "cli/report_io.h"
#include "result/merge.h"
#include "util/afile.h"
#include "util/err.h"

static const struct cli_example merge_examples[] = {
	{"pacer merge seg-0.json seg-1.json seg-2.json seg-3.json -o merged.json",
	 "one result of four segments of one plan"},
	{"pacer report merged.json --format html -o report.html", "then report it as any result"},
};

static const struct cli_help cli_help_merge = {
	.name = "merge",
	.summary = "merge the results of the segments of one plan (--segment K/N)",
	.synopsis = "pacer merge SEGMENT.json... -o MERGED.json",
	.description = "Merges the results of the N segments of one plan (pacer run, ramp or bench "
		       "--segment K/N) into one: histograms exactly, counters summed, per-second "
		       "series by wall-clock second, each generator's self-checks kept. Files that "
		       "are not the segments of one plan are refused (exit 2).",
	.examples = merge_examples,
	.n_examples = sizeof merge_examples / sizeof merge_examples[0],
	.exits = cli_exits_plain,
	.n_exits = sizeof cli_exits_plain / sizeof cli_exits_plain[0],
	.see = "docs/distributed.md",
};

static void usage(FILE *f, struct opt *tab, size_t n)
{
	cli_help_print(f, &cli_help_merge, tab, n);
}

int cmd_merge(int argc, char **argv)
{
	const char *out = NULL;
	bool help = false;
	struct opt tab[] = {
		{'h', "help", OPT_HELP, &help, NULL, NULL, "show this help", false},
		{'o', "out", OPT_STR, &out, "FILE", NULL, "write the merged result here, atomically (- is stdout)", false},
	};
	size_t ntab = sizeof tab / sizeof tab[0];
	const char *pos[MERGE_MAX_INPUTS + 1];
	char what[96];
	snprintf(what, sizeof what, "1 to %d segment results (SEGMENT.json...)", MERGE_MAX_INPUTS);
	struct opts_positionals args = {.what = what, .min = 1, .max = MERGE_MAX_INPUTS, .v = pos};
	int rc = opts_parse_cmd("merge", tab, ntab, argc, argv, usage, &args);
	if (rc >= 0)
		return rc;
	size_t npos = args.n;
	char err[1024];
	if (!out) {
		fprintf(stderr, "pacer merge: -o FILE is required (- for stdout)\n");
		return EXIT_USAGE;
	}
	struct loaded_result *res = calloc(npos, sizeof *res);
	struct merge_input *in = calloc(npos, sizeof *in);
	if (!res || !in) {
		free(res);
		free(in);
		fprintf(stderr, "pacer merge: out of memory\n");
		return EXIT_RUNTIME;
	}
	int code = EXIT_OK;
	size_t loaded = 0;
	for (; loaded < npos; loaded++) {
		rc = cli_result_load(&res[loaded], pos[loaded], err, sizeof err);
		if (rc) {
			fprintf(stderr, "pacer merge: %s\n", err);
			code = rc == -ENOMEM ? EXIT_RUNTIME : EXIT_USAGE;
			break;
		}
		in[loaded] = (struct merge_input){.name = pos[loaded], .root = res[loaded].root};
	}
	json_t *merged = NULL;
	if (code == EXIT_OK) {
		rc = result_merge(in, npos, &merged, err, sizeof err);
		if (rc) {
			fprintf(stderr, "pacer merge: %s\n", err);
			code = rc == -ENOMEM ? EXIT_RUNTIME : EXIT_USAGE;
		}
	}
	for (size_t i = 0; i < loaded; i++)
		result_free(&res[i]);
	free(res);
	free(in);
	if (code != EXIT_OK)
		return code;
	struct afile af;
	rc = afile_open(&af, out);
	if (rc) {
		fprintf(stderr, "pacer merge: cannot write -o %s: %s\n", out, err_name(rc));
		json_decref(merged);
		return EXIT_RUNTIME;
	}
	rc = json_dumpf(merged, af.f, JSON_INDENT(1) | JSON_REAL_PRECISION(15) | JSON_PRESERVE_ORDER);
	json_decref(merged);
	if (rc || fputc('\n', af.f) == EOF) {
		afile_abort(&af);
		fprintf(stderr, "pacer merge: cannot write -o %s\n", out);
		return EXIT_RUNTIME;
	}
	rc = afile_commit(&af);
	if (rc) {
		fprintf(stderr, "pacer merge: cannot write -o %s: %s\n", out, err_name(rc));
		return EXIT_RUNTIME;
	}
	return EXIT_OK;
}
