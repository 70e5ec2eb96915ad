/* pacer merge A.json B.json ... -o merged.json — the results of the
 * segments of one plan (--segment K/N) merged into the result one generator
 * would have written (docs/distributed.md). The merging is doc/merge.c;
 * reading and writing the files is here. A file may also be a log holding
 * framed results (dist/frame.h: kubectl logs of the pods, prefixed or not,
 * stderr mixed in): each segment frame in it is an input, and the merged
 * result segment 0 wrote stands in when segments are missing. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/dist_io.h"
#include "cli/help.h"
#include "cli/opts.h"
#include "cli/report_io.h"
#include "dist/frame.h"
#include "doc/keys.h"
#include "doc/merge.h"
#include "util/afile.h"
#include "util/err.h"
#include "util/file.h"

static const struct cli_example merge_examples[] = {
	{"pacer merge seg-0.json seg-1.json seg-2.json seg-3.json -o merged.json",
	 "one result of four segments of one plan"},
	{"pacer report merged.json --format html -o report.html", "then report it as any result"},
	{"kubectl logs -l job-name=pacer-x --prefix --tail=-1 | pacer merge - -o merged.json",
	 "the segments' framed results, straight from the pods' logs"},
};

static const struct cli_help cli_help_merge = {
	.name = "merge",
	.summary = "merge the results of the segments of one plan (--segment K/N)",
	.synopsis = "pacer merge SEGMENT.json|LOG|-... -o MERGED.json",
	.description = "Merges the results of the N segments of one plan (pacer run, ramp or bench "
		       "--segment K/N) into one: histograms exactly, counters summed, per-second "
		       "series by wall-clock second, each generator's self-checks kept. A file may be a "
		       "log (- for stdin) with framed results (--framed): pod logs as kubectl gives "
		       "them. Files that are not the segments of one plan are refused (exit 2).",
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

#define MERGE_LOG_CAP ((size_t)1 << 30)      /* a log file, bytes */
#define MERGE_DOCS_CAP ((size_t)4 << 30)     /* the documents framed in one log */

/* One document to merge: a JSON file, or a frame of a log. */
struct src {
	char name[512];
	char *json; /* owned */
	size_t len;
	char id[13]; /* a frame's ("" for a file) */
	bool merged; /* a merged result segment 0 wrote (a "merged" frame) */
};

struct srcs {
	struct src *v;
	size_t n, cap;
};

static struct src *src_add(struct srcs *s)
{
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 8;
		struct src *v = realloc(s->v, cap * sizeof *v);
		if (!v)
			return NULL;
		s->v = v;
		s->cap = cap;
	}
	memset(&s->v[s->n], 0, sizeof s->v[0]);
	return &s->v[s->n++];
}

static void srcs_free(struct srcs *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->v[i].json);
	free(s->v);
}

/* The documents of one argument: the file itself, or each frame in it
 * (a frame already taken from another file counts once). 0, or an exit
 * code after one line. */
static int read_arg(const char *arg, struct srcs *s)
{
	const char *path = strcmp(arg, "-") ? arg : "/dev/stdin";
	const char *shown = strcmp(arg, "-") ? arg : "stdin";
	if (!strcmp(arg, "-") && !opts_stdin_take("merge", "SEGMENT -"))
		return EXIT_USAGE;
	char *buf;
	size_t len;
	int rc = file_read_all(path, MERGE_LOG_CAP, &buf, &len);
	if (rc) {
		fprintf(stderr, "pacer merge: %s: cannot read: %s\n", shown,
			rc == PACER_ETOOBIG ? "larger than 1 GiB" : err_name(rc));
		return rc == -ENOMEM ? EXIT_RUNTIME : EXIT_USAGE;
	}
	if (!frame_present(buf, len)) {
		struct src *d = src_add(s);
		if (!d) {
			free(buf);
			return EXIT_RUNTIME;
		}
		snprintf(d->name, sizeof d->name, "%s", shown);
		d->json = buf;
		d->len = len;
		return 0;
	}
	struct frame_list fl;
	char err[512];
	rc = frame_scan(buf, len, MERGE_DOCS_CAP, &fl, err, sizeof err);
	free(buf);
	if (rc) {
		fprintf(stderr, "pacer merge: %s: %s\n", shown, err);
		return rc == -ENOMEM ? EXIT_RUNTIME : EXIT_USAGE;
	}
	size_t segs = 0;
	for (size_t i = 0; i < fl.n; i++)
		segs += strcmp(fl.v[i].kind, "merged") != 0;
	for (size_t i = 0; i < fl.n; i++) {
		bool dup = false;
		for (size_t j = 0; j < s->n && !dup; j++)
			dup = !strcmp(s->v[j].id, fl.v[i].id);
		if (dup)
			continue;
		struct src *d = src_add(s);
		if (!d) {
			frame_list_free(&fl);
			return EXIT_RUNTIME;
		}
		d->merged = !strcmp(fl.v[i].kind, "merged");
		if (d->merged || segs > 1)
			snprintf(d->name, sizeof d->name, "%s[%s %s]", shown, fl.v[i].kind, fl.v[i].label);
		else
			snprintf(d->name, sizeof d->name, "%s", shown);
		memcpy(d->id, fl.v[i].id, sizeof d->id);
		d->json = fl.v[i].json;
		d->len = fl.v[i].len;
		fl.v[i].json = NULL;
	}
	frame_list_free(&fl);
	return 0;
}

/* Whether the loaded segment results cover every index 0..count-1 of the
 * first one's count. */
static bool complete(const struct loaded_result *r, size_t n)
{
	if (!n)
		return false;
	json_int_t count = json_integer_value(json_object_get(
		json_object_get(json_object_get(r[0].root, KEY_PLAN), KEY_SEGMENT), KEY_COUNT));
	if (count < 1 || count > MERGE_MAX_INPUTS)
		return true; /* let the merge say what is wrong */
	bool seen[MERGE_MAX_INPUTS] = {false};
	for (size_t i = 0; i < n; i++) {
		json_int_t k = json_integer_value(json_object_get(
			json_object_get(json_object_get(r[i].root, KEY_PLAN), KEY_SEGMENT),
			KEY_INDEX));
		if (k >= 0 && k < count)
			seen[k] = true;
	}
	for (json_int_t k = 0; k < count; k++)
		if (!seen[k])
			return false;
	return true;
}

/* --rules: the rule of every field (doc/merge.h), as JSON. */
static int print_rules(void)
{
	size_t n;
	const struct merge_rule *r = merge_rules(&n);
	json_t *a = json_array();
	for (size_t i = 0; a && i < n; i++) {
		json_t *o = json_pack("{s:s, s:s, s:b}", "path", r[i].path, "rule",
				      merge_rule_name(r[i].kind), "sub", r[i].sub);
		if (o && r[i].note)
			json_object_set_new(o, "note", json_string(r[i].note));
		if (!o || json_array_append_new(a, o)) {
			json_decref(a);
			a = NULL;
		}
	}
	int rc = a && json_dumpf(a, stdout, JSON_INDENT(1) | JSON_PRESERVE_ORDER) == 0 &&
			 fputc('\n', stdout) != EOF && fflush(stdout) == 0
		 ? EXIT_OK
		 : EXIT_RUNTIME;
	json_decref(a);
	return rc;
}

int cmd_merge(int argc, char **argv)
{
	const char *out = NULL;
	bool help = false, framed = false, rules = false;
	struct opt tab[] = {
		{0, "framed", OPT_FLAG, &framed, NULL, NULL, "write the merged result framed (as --framed writes a result)", false},
		{'h', "help", OPT_HELP, &help, NULL, NULL, "show this help", false},
		{'o', "out", OPT_STR, &out, "FILE", NULL, "write the merged result here, atomically (- is stdout)", false},
		{0, "rules", OPT_FLAG, &rules, NULL, NULL, "print how each field of a result merges (JSON) and exit", false},
	};
	size_t ntab = sizeof tab / sizeof tab[0];
	const char *pos[MERGE_MAX_INPUTS + 1];
	char what[96];
	snprintf(what, sizeof what, "1 to %d segment results or logs (SEGMENT.json...)",
		 MERGE_MAX_INPUTS);
	bool want_rules = false;
	for (int i = 1; i < argc; i++)
		want_rules = want_rules || !strcmp(argv[i], "--rules");
	struct opts_positionals args = {.what = what, .min = want_rules ? 0 : 1,
					.max = MERGE_MAX_INPUTS, .v = pos};
	int rc = opts_parse_cmd("merge", tab, ntab, argc, argv, usage, &args);
	if (rc >= 0)
		return rc;
	if (rules)
		return print_rules();
	size_t npos = args.n;
	char err[1024];
	if (!out) {
		fprintf(stderr, "pacer merge: -o FILE is required (- for stdout)\n");
		return EXIT_USAGE;
	}
	struct srcs s = {0};
	int code = EXIT_OK;
	for (size_t i = 0; i < npos && code == EXIT_OK; i++)
		code = read_arg(pos[i], &s);
	size_t nseg = 0, nmerged = 0;
	for (size_t i = 0; i < s.n; i++) {
		nseg += !s.v[i].merged;
		nmerged += s.v[i].merged;
	}
	if (code == EXIT_OK && nseg > MERGE_MAX_INPUTS) {
		fprintf(stderr, "pacer merge: %zu segment results: at most %d\n", nseg,
			MERGE_MAX_INPUTS);
		code = EXIT_USAGE;
	}
	if (code == EXIT_OK && nseg == 0 && nmerged == 0) {
		fprintf(stderr, "pacer merge: no result in the input\n");
		code = EXIT_USAGE;
	}
	struct loaded_result *res = calloc(s.n ? s.n : 1, sizeof *res);
	struct merge_input *in = calloc(s.n ? s.n : 1, sizeof *in);
	if (code == EXIT_OK && (!res || !in)) {
		fprintf(stderr, "pacer merge: out of memory\n");
		code = EXIT_RUNTIME;
	}
	/* the segments (files and frames) in order, then the merged frames */
	size_t loaded = 0, nin = 0;
	for (int pass = 0; pass < 2 && code == EXIT_OK; pass++)
		for (size_t i = 0; i < s.n && code == EXIT_OK; i++) {
			if (s.v[i].merged != (pass == 1))
				continue;
			rc = result_read_mem(&res[loaded], s.v[i].json, s.v[i].len, s.v[i].name, err,
					     sizeof err);
			if (rc) {
				fprintf(stderr, "pacer merge: %s\n", err);
				code = rc == -ENOMEM ? EXIT_RUNTIME : EXIT_USAGE;
				break;
			}
			if (pass == 0)
				in[nin++] = (struct merge_input){.name = s.v[i].name,
								 .root = res[loaded].root};
			loaded++;
		}
	json_t *merged = NULL;
	if (code == EXIT_OK && nmerged && !complete(res, nin)) {
		/* segments are missing from the logs: segment 0's merged result
		 * stands in (the segments it merged were all there) */
		const struct loaded_result *m = &res[nin];
		for (size_t i = nin + 1; i < loaded && code == EXIT_OK; i++)
			if (!json_equal(res[i].root, m->root)) {
				fprintf(stderr, "pacer merge: two different merged results in the input "
						"(%s, %s): give the logs of one run\n",
					s.v[nin].name, s.v[i].name);
				code = EXIT_USAGE;
			}
		if (code == EXIT_OK) {
			if (nin)
				fprintf(stderr, "pacer merge: not every segment's result is in the input; "
						"taking the merged result segment 0 wrote (%s)\n",
					s.v[nin].name);
			merged = json_deep_copy(m->root);
			if (!merged)
				code = EXIT_RUNTIME;
		}
	} else if (code == EXIT_OK) {
		rc = result_merge(in, nin, &merged, err, sizeof err);
		if (rc) {
			fprintf(stderr, "pacer merge: %s\n", err);
			code = rc == -ENOMEM ? EXIT_RUNTIME : EXIT_USAGE;
		}
	}
	for (size_t i = 0; i < loaded; i++)
		result_free(&res[i]);
	free(res);
	free(in);
	srcs_free(&s);
	if (code != EXIT_OK)
		return code;
	code = cli_merged_write("merge", merged, out, framed);
	json_decref(merged);
	return code;
}
