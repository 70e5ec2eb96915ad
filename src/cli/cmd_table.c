/* pacer table hash|show|generate and pacer import har — request tables from
 * the command line (docs/tables.md). Errors are one line "pacer table
 * <sub>: ..." (or "pacer import: ...") with exit status 2 for bad input and
 * 3 when the output cannot be written. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/help.h"
#include "cli/opts.h"
#include "http/req.h"
#include "result/result.h"
#include "table/mix.h"
#include "table/table.h"
#include "util/afile.h"
#include "util/err.h"
#include "util/units.h"

/* The User-Agent pacer run sends (PACER_USER_AGENT, http/req.h), so that `pacer table
 * hash` prints the hash a run records. */

static const struct cli_example table_examples[] = {
	{"pacer table hash examples/tables/api.targets", "the SHA-256 pacer run records for it"},
	{"pacer table generate --spec examples/tables/mix.yaml --size 10k --seed 7 > t.jsonl",
	 "a deterministic table of 10,000 requests from a mix spec"},
};

static const struct cli_help table_help = {
	.name = "table",
	.summary = "request tables: hash, show, generate",
	.synopsis = "pacer table COMMAND [options]",
	.description = "Request tables: fixed sets of requests, replayed by pacer run "
		       "--requests-file. hash and show read a targets or JSON Lines file, or a "
		       "folder of bodies with --bodies DIR --url URL. `pacer table COMMAND --help` "
		       "lists the options; docs/tables.md describes the formats. See also: pacer "
		       "import har.",
	.verbatim = "Commands:\n"
		    "  hash FILE        print the table's SHA-256 (over its wire bytes) and size\n"
		    "  show FILE        summarise the table: methods, hosts, shapes, names, sizes\n"
		    "  generate --spec MIX.yaml --size N --seed S\n"
		    "                   build a table from a mix spec, as JSON Lines on stdout",
	.examples = table_examples,
	.n_examples = sizeof table_examples / sizeof table_examples[0],
	.exits = cli_exits_plain,
	.n_exits = sizeof cli_exits_plain / sizeof cli_exits_plain[0],
	.see = "docs/tables.md",
};

static void table_usage(FILE *f)
{
	cli_help_print(f, &table_help, NULL, 0);
}

static const struct cli_example import_examples[] = {
	{"pacer import har session.har --host api.example.com > table.jsonl",
	 "the requests a browser made to one host, as a table"},
};

static const struct cli_help import_help = {
	.name = "import",
	.summary = "turn a HAR recording into a request table (JSON Lines)",
	.synopsis = "pacer import har FILE.har [--keep-cookies] [-o FILE]",
	.description = "Turn a browser recording (HAR 1.2) into a request table (JSON Lines). "
		       "`pacer import har --help` lists the options.",
	.examples = import_examples,
	.n_examples = sizeof import_examples / sizeof import_examples[0],
	.exits = cli_exits_plain,
	.n_exits = sizeof cli_exits_plain / sizeof cli_exits_plain[0],
	.see = "docs/tables.md",
};

static int parse_max_body(const char *cmd, const char *s, struct table_limits *lim)
{
	if (!s)
		return 0;
	uint64_t v;
	if (units_parse_size(s, &v) || v == 0 || v > (1ull << 31)) {
		fprintf(stderr, "%s: --max-body '%s': not understood (expected a size such as 64k or 4MiB, at most 2GiB)\n",
		        cmd, s);
		return -1;
	}
	lim->max_body_bytes = (size_t)v;
	return 0;
}

/* Open -o FILE (or stdout for NULL / "-"). */
static int out_open(const char *cmd, const char *path, struct afile *a)
{
	int rc = afile_open(a, path ? path : "-");
	if (rc) {
		fprintf(stderr, "%s: cannot write %s: %s\n", cmd, path ? path : "stdout", strerror(-rc));
		return -1;
	}
	return 0;
}

/* The table named by a positional FILE or by --bodies DIR --url URL. */
struct src_opts {
	const char *format;
	const char *max_body;
	const char *bodies;
	const char *url;
	const char *method;
	const char *content_type;
	struct strlist headers;
	bool lazy;
	bool help;
};

static int hash_one(void *arg, size_t i, const char *req, size_t len)
{
	(void)i;
	table_hasher_add(arg, req, len);
	return 0;
}

/* pacer table hash --lazy: the hash and count of a table of any size, read
 * a piece at a time (table_stream) in bounded memory. */
static int hash_streamed(const char *cmd, const struct src_opts *o, const char *file)
{
	struct table_limits lim = {0};
	if (parse_max_body(cmd, o->max_body, &lim))
		return EXIT_USAGE;
	if (!file || o->bodies) {
		fprintf(stderr, "%s: --lazy reads a FILE (targets or JSON Lines, - for standard "
		        "input)\n", cmd);
		return EXIT_USAGE;
	}
	enum table_format fmt = TABLE_FMT_AUTO;
	if (o->format && table_format_parse(o->format, &fmt)) {
		fprintf(stderr, "%s: --format '%s': expected auto, targets or jsonl\n", cmd, o->format);
		return EXIT_USAGE;
	}
	char err[1024], hex[65];
	struct table_stream *st = NULL;
	struct table_hasher *h = NULL;
	int rc = table_stream_open(file, fmt, &lim, 0, &st, err, sizeof err);
	if (!rc && (rc = table_hasher_new(&h)))
		snprintf(err, sizeof err, "out of memory");
	struct table *p = NULL;
	while (!rc && !(rc = table_stream_next(st, &p, err, sizeof err)) && p) {
		rc = table_encode_each(p, PACER_USER_AGENT, o->headers.v, o->headers.n, hash_one, h,
		                       err, sizeof err);
		table_free(p);
	}
	if (!rc && (rc = table_hasher_end(h, hex)))
		snprintf(err, sizeof err, "cannot compute SHA-256");
	if (!rc)
		printf("%s  %zu requests\n", hex, table_stream_count(st));
	else
		fprintf(stderr, "%s: %s\n", cmd, err);
	table_hasher_free(h);
	table_stream_close(st);
	return rc == 0 ? EXIT_OK : rc == -ENOMEM ? EXIT_RUNTIME : EXIT_USAGE;
}

static int load_table(const char *cmd, const struct src_opts *o, const char *file,
                      struct table **t)
{
	struct table_limits lim = {0};
	if (parse_max_body(cmd, o->max_body, &lim))
		return EXIT_USAGE;
	char err[1024];
	int rc;
	if (o->bodies) {
		if (file) {
			fprintf(stderr, "%s: give FILE or --bodies DIR, not both\n", cmd);
			return EXIT_USAGE;
		}
		if (!o->url) {
			fprintf(stderr, "%s: --bodies needs --url URL\n", cmd);
			return EXIT_USAGE;
		}
		rc = table_from_bodies(o->bodies, o->url, o->method, o->content_type, &lim, t, err,
		                       sizeof err);
	} else {
		if (!file) {
			fprintf(stderr, "%s: missing FILE (a targets or JSON Lines table; see --help)\n", cmd);
			return EXIT_USAGE;
		}
		if (o->url || o->method || o->content_type) {
			fprintf(stderr, "%s: --url, --method and --content-type go with --bodies\n", cmd);
			return EXIT_USAGE;
		}
		enum table_format fmt = TABLE_FMT_AUTO;
		if (o->format && table_format_parse(o->format, &fmt)) {
			fprintf(stderr, "%s: --format '%s': expected auto, targets or jsonl\n", cmd, o->format);
			return EXIT_USAGE;
		}
		rc = table_load(file, fmt, &lim, t, err, sizeof err);
	}
	if (rc) {
		fprintf(stderr, "%s: %s\n", cmd, err);
		return rc == -ENOMEM ? EXIT_RUNTIME : EXIT_USAGE;
	}
	return EXIT_OK;
}

static void pct_line(const char *name, size_t n, size_t total)
{
	char num[64];
	printf("  %-40s %12s  %5.1f%%\n", name, units_fmt_thousands(num, sizeof num, (double)n, 0),
	       total ? 100.0 * (double)n / (double)total : 0.0);
}

static void counts(const char *title, const struct table_count *c, size_t n, size_t total)
{
	printf("%s\n", title);
	size_t show = n > 20 ? 20 : n;
	for (size_t i = 0; i < show; i++)
		pct_line(c[i].name, c[i].n, total);
	if (n > show) {
		size_t rest = 0;
		for (size_t i = show; i < n; i++)
			rest += c[i].n;
		char more[64];
		snprintf(more, sizeof more, "(%zu more)", n - show);
		pct_line(more, rest, total);
	}
}

static int hash_or_show(int argc, char **argv, bool show)
{
	const char *cmd = show ? "pacer table show" : "pacer table hash";
	struct src_opts o = {0};
	struct opt tab[] = {
		{0, "bodies", OPT_STR, &o.bodies, "DIR", NULL, "a folder of bodies, one request per file (with --url)", false},
		{0, "content-type", OPT_STR, &o.content_type, "TYPE", NULL, "--bodies: Content-Type of the requests", false},
		{0, "format", OPT_STR, &o.format, "auto|targets|jsonl", "auto", "format of FILE", false},
		{'H', "header", OPT_STRLIST, &o.headers, "'Name: value'", NULL, "header added to every request, as pacer run -H (repeatable)", false},
		{'h', "help", OPT_HELP, &o.help, NULL, NULL, "show this help", false},
		{0, "lazy", OPT_FLAG, &o.lazy, NULL, NULL, "hash: read FILE a piece at a time (any size, as run --lazy)", false},
		{0, "max-body", OPT_STR, &o.max_body, "SIZE", "1MiB", "largest request body accepted", false},
		{'X', "method", OPT_STR, &o.method, "M", "POST", "--bodies: request method", false},
		{0, "url", OPT_STR, &o.url, "URL", NULL, "--bodies: where the bodies are sent", false},
	};
	size_t ntab = sizeof tab / sizeof tab[0];
	const char *pos[1];
	size_t npos = 0;
	char err[1024];
	int prc = opts_parse(tab, ntab, argc, argv, pos, 1, &npos, err, sizeof err);
	if (prc == 1) {
		printf("usage: pacer table %s FILE [options]\n       pacer table %s --bodies DIR --url URL [options]\n\n%s\n\n",
		       show ? "show" : "hash", show ? "show" : "hash",
		       show ? "Summarise a request table: methods, hosts, shapes, names, queries, bodies, sizes."
		            : "Print \"<sha256>  <n> requests\": the SHA-256 over the table's wire bytes\n"
		              "(each request's length as 8 bytes big-endian, then its bytes), as pacer run\n"
		              "records it.");
		opts_help(stdout, tab, ntab);
		printf("\n");
		cli_help_exits(stdout, cli_exits_plain, sizeof cli_exits_plain / sizeof cli_exits_plain[0]);
		strlist_free(&o.headers);
		return EXIT_OK;
	}
	if (prc < 0) {
		fprintf(stderr, "%s: %s\n", cmd, err);
		strlist_free(&o.headers);
		return EXIT_USAGE;
	}
	if (o.lazy) {
		int lrc = show ? (fprintf(stderr, "%s: --lazy goes with pacer table hash (show reads "
		                          "the table whole)\n", cmd), EXIT_USAGE)
		               : hash_streamed(cmd, &o, npos ? pos[0] : NULL);
		strlist_free(&o.headers);
		return lrc;
	}
	struct table *t = NULL;
	int rc = load_table(cmd, &o, npos ? pos[0] : NULL, &t);
	if (rc) {
		strlist_free(&o.headers);
		return rc;
	}
	struct table_wire w;
	char hex[65], whex[65];
	int erc = table_encode(t, PACER_USER_AGENT, o.headers.v, o.headers.n, &w, err, sizeof err);
	if (!erc && (erc = table_wire_hashes(&w, hex, whex)))
		snprintf(err, sizeof err, "cannot compute SHA-256");
	strlist_free(&o.headers);
	if (erc) {
		fprintf(stderr, "%s: %s\n", cmd, err);
		table_free(t);
		return erc == -ENOMEM ? EXIT_RUNTIME : EXIT_USAGE;
	}
	if (!show) {
		printf("%s  %zu requests\n", hex, t->n);
	} else {
		struct table_summary s;
		if (table_summarize(t, &w, &s)) {
			fprintf(stderr, "%s: out of memory\n", cmd);
			table_wire_free(&w);
			table_free(t);
			return EXIT_RUNTIME;
		}
		char a[64], b[64], c[64];
		printf("table     %s (%s)\n", t->source, table_format_name(t->format));
		printf("requests  %s\n", units_fmt_thousands(a, sizeof a, (double)t->n, 0));
		printf("sha256    %s\n", hex);
		printf("workload  %s (what is sent, not where: docs/tables.md#the-hash)\n", whex);
		counts("hosts", s.hosts, s.n_hosts, s.n);
		counts("methods", s.methods, s.n_methods, s.n);
		counts(s.shapes_known ? "shapes" : "shapes (path templates)", s.shapes, s.n_shapes, s.n);
		counts("names (figures per name in a run)", s.names, s.n_names, s.n);
		if (s.n_names > RESULT_MAX_NAMES)
			printf("  (%zu names: a run reports the first %d in table order apart and pools "
			       "the other %zu as \"other\")\n", s.n_names, RESULT_MAX_NAMES,
			       s.n_names - RESULT_MAX_NAMES);
		printf("targets   %s distinct\n", units_fmt_thousands(a, sizeof a, (double)s.distinct_targets, 0));
		printf("queries   %s (%.1f%%) with a query string\n",
		       units_fmt_thousands(a, sizeof a, (double)s.with_query, 0),
		       100.0 * (double)s.with_query / (double)s.n);
		if (s.with_body)
			printf("bodies    %s (%.1f%%), %zu to %zu bytes, %s bytes in all\n",
			       units_fmt_thousands(a, sizeof a, (double)s.with_body, 0),
			       100.0 * (double)s.with_body / (double)s.n, s.body_min, s.body_max,
			       units_fmt_thousands(b, sizeof b, (double)s.body_total, 0));
		else
			printf("bodies    none\n");
		printf("wire      %zu to %zu bytes per request (median %zu), %s bytes in all\n", s.wire_min,
		       s.wire_max, s.wire_p50, units_fmt_thousands(c, sizeof c, (double)s.wire_total, 0));
		table_summary_free(&s);
	}
	table_wire_free(&w);
	table_free(t);
	if (fflush(stdout) != 0 || ferror(stdout)) {
		fprintf(stderr, "%s: cannot write to stdout: %s\n", cmd, strerror(errno));
		return EXIT_RUNTIME;
	}
	return EXIT_OK;
}

/* Write t as JSON Lines to path (stdout when NULL or "-"), atomically. */
static int write_table(const char *cmd, const struct table *t, const char *path)
{
	struct afile a;
	if (out_open(cmd, path, &a))
		return EXIT_RUNTIME;
	char err[512];
	int rc = table_write_jsonl(a.f, t, err, sizeof err);
	if (rc) {
		afile_abort(&a);
		fprintf(stderr, "%s: %s\n", cmd, err);
		return rc == PACER_EUNSUPPORTED ? EXIT_USAGE : EXIT_RUNTIME;
	}
	if ((rc = afile_commit(&a))) {
		fprintf(stderr, "%s: cannot write %s: %s\n", cmd, path ? path : "stdout", strerror(-rc));
		return EXIT_RUNTIME;
	}
	return EXIT_OK;
}

static int generate(int argc, char **argv)
{
	const char *cmd = "pacer table generate";
	const char *spec = NULL, *out = NULL, *max_body = NULL;
	uint64_t seed = 1;
	uint64_t size = 0;
	bool help = false;
	struct opt tab[] = {
		{'h', "help", OPT_HELP, &help, NULL, NULL, "show this help", false},
		{0, "max-body", OPT_STR, &max_body, "SIZE", "1MiB", "largest request body accepted", false},
		{'o', "out", OPT_STR, &out, "FILE", "-", "write the table here (atomically) instead of stdout", false},
		{0, "seed", OPT_U64, &seed, "S", "1", "seed: the same spec, size and seed give the same bytes", false},
		{0, "size", OPT_COUNT, &size, "N", NULL, "number of requests (required)", false},
		{0, "spec", OPT_STR, &spec, "MIX.yaml", NULL, "the mix spec (required; docs/tables.md)", false},
	};
	size_t ntab = sizeof tab / sizeof tab[0];
	const char *pos[1];
	size_t npos = 0;
	char err[1024];
	int prc = opts_parse(tab, ntab, argc, argv, pos, 0, &npos, err, sizeof err);
	if (prc == 1) {
		printf("usage: pacer table generate --spec MIX.yaml --size N [--seed S] [-o FILE]\n\n"
		       "Build a deterministic request table from a mix spec (route shapes, methods,\n"
		       "locality, query strings, bodies) and write it as JSON Lines.\n\n");
		opts_help(stdout, tab, ntab);
		printf("\n");
		cli_help_exits(stdout, cli_exits_plain, sizeof cli_exits_plain / sizeof cli_exits_plain[0]);
		return EXIT_OK;
	}
	if (prc < 0) {
		fprintf(stderr, "%s: %s\n", cmd, err);
		return EXIT_USAGE;
	}
	if (!spec) {
		fprintf(stderr, "%s: missing --spec MIX.yaml\n", cmd);
		return EXIT_USAGE;
	}
	if (!opts_given(tab, ntab, "size")) {
		fprintf(stderr, "%s: missing --size N\n", cmd);
		return EXIT_USAGE;
	}
	struct table_limits lim = {0};
	if (parse_max_body(cmd, max_body, &lim))
		return EXIT_USAGE;
	if (size == 0 || size > TABLE_DEFAULT_MAX_REQUESTS) {
		fprintf(stderr, "%s: --size %" PRIu64 ": out of range (1 to %u)\n", cmd, size,
		        TABLE_DEFAULT_MAX_REQUESTS);
		return EXIT_USAGE;
	}
	struct table_mix *m = NULL;
	int rc = table_mix_load(spec, &m, err, sizeof err);
	struct table *t = NULL;
	if (!rc)
		rc = table_mix_generate(m, (size_t)size, seed, &lim, &t, err, sizeof err);
	table_mix_free(m);
	if (rc) {
		fprintf(stderr, "%s: %s\n", cmd, err);
		return rc == -ENOMEM ? EXIT_RUNTIME : EXIT_USAGE;
	}
	rc = write_table(cmd, t, out);
	table_free(t);
	return rc;
}

int cmd_table(int argc, char **argv)
{
	if (argc < 2) {
		table_usage(stderr);
		return EXIT_USAGE;
	}
	const char *sub = argv[1];
	if (strcmp(sub, "hash") == 0)
		return hash_or_show(argc - 1, argv + 1, false);
	if (strcmp(sub, "show") == 0)
		return hash_or_show(argc - 1, argv + 1, true);
	if (strcmp(sub, "generate") == 0)
		return generate(argc - 1, argv + 1);
	if (strcmp(sub, "help") == 0 || strcmp(sub, "--help") == 0 || strcmp(sub, "-h") == 0) {
		table_usage(stdout);
		return EXIT_OK;
	}
	static const char *const words[] = {"hash", "show", "generate"};
	char dym[64];
	fprintf(stderr, "pacer table: unknown command '%s' (expected hash, show or generate)%s\n",
		sub, opts_did_you_mean(dym, sizeof dym, sub, words, 3));
	return EXIT_USAGE;
}

int cmd_import(int argc, char **argv)
{
	const char *cmd = "pacer import";
	if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
	    strcmp(argv[1], "help") == 0) {
		cli_help_print(argc < 2 ? stderr : stdout, &import_help, NULL, 0);
		return argc < 2 ? EXIT_USAGE : EXIT_OK;
	}
	if (strcmp(argv[1], "har") != 0) {
		fprintf(stderr, "%s: unknown format '%s' (expected har)\n", cmd, argv[1]);
		return EXIT_USAGE;
	}
	cmd = "pacer import har";
	bool keep = false, help = false, skip_incomplete = false;
	const char *out = NULL, *max_body = NULL;
	struct strlist hosts = {0};
	struct opt tab[] = {
		{0, "host", OPT_STRLIST, &hosts, "HOST[:PORT]", NULL, "keep only requests to this host (repeatable): a page's third-party hosts are left out", false},
		{0, "skip-incomplete", OPT_FLAG, &skip_incomplete, NULL, NULL, "leave out entries whose recorded body is shorter than their Content-Length (instead of failing)", false},
		{'h', "help", OPT_HELP, &help, NULL, NULL, "show this help", false},
		{0, "keep-cookies", OPT_FLAG, &keep, NULL, NULL, "keep the recorded Cookie headers", false},
		{0, "max-body", OPT_STR, &max_body, "SIZE", "1MiB", "largest request body accepted", false},
		{'o', "out", OPT_STR, &out, "FILE", "-", "write the table here (atomically) instead of stdout", false},
	};
	size_t ntab = sizeof tab / sizeof tab[0];
	const char *pos[1];
	size_t npos = 0;
	char err[1024];
	int prc = opts_parse(tab, ntab, argc - 1, argv + 1, pos, 1, &npos, err, sizeof err);
	if (prc == 1) {
		printf("usage: pacer import har FILE.har [options] > table.jsonl\n\n"
		       "Keeps each request's method, URL, headers and body; drops HTTP/2 pseudo-headers,\n"
		       "hop-by-hop headers, Host and Content-Length, and cookies unless --keep-cookies.\n"
		       "Entries that are not http(s) (ws:, data:, ...) are skipped.\n\n");
		opts_help(stdout, tab, ntab);
		printf("\n");
		cli_help_exits(stdout, cli_exits_plain, sizeof cli_exits_plain / sizeof cli_exits_plain[0]);
		strlist_free(&hosts);
		return EXIT_OK;
	}
	if (prc < 0) {
		fprintf(stderr, "%s: %s\n", cmd, err);
		strlist_free(&hosts);
		return EXIT_USAGE;
	}
	if (npos == 0) {
		fprintf(stderr, "%s: missing FILE.har\n", cmd);
		strlist_free(&hosts);
		return EXIT_USAGE;
	}
	struct table_limits lim = {0};
	if (parse_max_body(cmd, max_body, &lim)) {
		strlist_free(&hosts);
		return EXIT_USAGE;
	}
	struct table_har_opts o = {.keep_cookies = keep, .hosts = hosts.v, .n_hosts = hosts.n,
				   .skip_incomplete = skip_incomplete};
	struct table_har_stats st;
	struct table *t = NULL;
	int rc = table_har_import(pos[0], &o, &lim, &t, &st, err, sizeof err);
	if (rc) {
		fprintf(stderr, "%s: %s\n", cmd, err);
		strlist_free(&hosts);
		return rc == -ENOMEM ? EXIT_RUNTIME : EXIT_USAGE;
	}
	rc = write_table(cmd, t, out);
	if (rc == EXIT_OK && st.skipped)
		fprintf(stderr, "%s: %zu of %zu entries skipped (not http or https)\n", cmd, st.skipped,
		        st.entries);
	if (rc == EXIT_OK && st.other_hosts)
		fprintf(stderr, "%s: %zu of %zu entries left out (other hosts than --host)\n", cmd,
			st.other_hosts, st.entries);
	if (rc == EXIT_OK && st.incomplete)
		fprintf(stderr, "%s: %zu of %zu entries left out (body incomplete in the recording)\n",
			cmd, st.incomplete, st.entries);
	table_free(t);
	strlist_free(&hosts);
	return rc;
}
