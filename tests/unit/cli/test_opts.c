/* Tests of the option parser (src/cli/opts.c): long, short, --x=y and
 * -xVALUE forms, typed values, repeatable lists, positionals and "--",
 * the given flags, and the one-line error messages (unknown option,
 * missing value, flag with a value, typed errors naming the option and the
 * expected form); opts_parse_cmd's handling of --help, errors and the
 * count of positionals. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "cli/opts.h"
#include "util/err.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))
#define ARGV(...) ((char *[]){ "run", __VA_ARGS__ })
#define ARGC(...) ((int)(sizeof((char *[]){ "run", __VA_ARGS__ }) / sizeof(char *)))
/* parse "run" followed by the given arguments */
#define PARSE(f, ...) parse((f), ARGC(__VA_ARGS__), ARGV(__VA_ARGS__))

struct vals {
	bool verbose, quiet;
	const char *out;
	struct strlist headers;
	double rate;
	uint64_t duration_ns;
	uint64_t requests;
	uint32_t threads;
	int dummy_help;
};

struct fixture {
	struct vals v;
	struct opt tab[9];
	const char *pos[3];
	size_t npos;
	char err[256];
};

static void fixture_init(struct fixture *f)
{
	memset(f, 0, sizeof *f);
	f->v.rate = -1;
	f->v.duration_ns = 7;
	f->v.requests = 9;
	f->v.threads = 3;
	const struct opt tab[] = {
		{ 'd', "duration", OPT_DURATION, &f->v.duration_ns, "D", "10s", "run for D", false },
		{ 'H', "header", OPT_STRLIST, &f->v.headers, "LINE", NULL, "add a header", false },
		{ 'h', "help", OPT_HELP, &f->v.dummy_help, NULL, NULL, "show help", false },
		{ 'n', "requests", OPT_COUNT, &f->v.requests, "N", NULL, "send N requests", false },
		{ 'o', "out", OPT_STR, &f->v.out, "FILE", NULL, "write JSON", false },
		{ 0, "quiet", OPT_FLAG, &f->v.quiet, NULL, NULL, "no progress", false },
		{ 'r', "rate", OPT_RATE, &f->v.rate, "R", NULL, "requests/s", false },
		{ 't', "threads", OPT_U32, &f->v.threads, NULL, "1", "threads", false },
		{ 'v', "verbose", OPT_FLAG, &f->v.verbose, NULL, NULL, "more output", false },
	};
	memcpy(f->tab, tab, sizeof tab);
}

static int parse(struct fixture *f, int argc, char **argv)
{
	return opts_parse(f->tab, N(f->tab), argc, argv, f->pos, N(f->pos), &f->npos, f->err,
	                  sizeof f->err);
}

static int setup(void **state)
{
	struct fixture *f = malloc(sizeof *f);
	if (!f)
		return -1;
	fixture_init(f);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	strlist_free(&f->v.headers);
	free(f);
	return 0;
}

static void test_forms(void **state)
{
	struct fixture *f = *state;
	/* long with separate value, long=value, short separate, short attached */
	assert_int_equal(PARSE(f, "--rate", "2.5k", "--duration=250ms", "-n", "10k", "-t4", "-o",
	                       "r.json", "--verbose", "--quiet", "http://h/"), 0);
	assert_true(f->v.rate == 2500);
	assert_true(f->v.duration_ns == 250000000);
	assert_true(f->v.requests == 10000);
	assert_int_equal(f->v.threads, 4);
	assert_string_equal(f->v.out, "r.json");
	assert_true(f->v.verbose);
	assert_true(f->v.quiet);
	assert_int_equal(f->npos, 1);
	assert_string_equal(f->pos[0], "http://h/");
}

static void test_forms_more(void **state)
{
	struct fixture *f = *state;
	assert_int_equal(PARSE(f, "-r1M", "-d", "2m", "--threads=8", "--out=", "-v"), 0);
	assert_true(f->v.rate == 1e6);
	assert_true(f->v.duration_ns == 120000000000ull);
	assert_int_equal(f->v.threads, 8);
	assert_string_equal(f->v.out, ""); /* an empty string is a value */
	assert_true(f->v.verbose);
	assert_false(f->v.quiet);
	assert_int_equal(f->npos, 0);
	/* untouched options keep their initial values */
	assert_true(f->v.requests == 9);
	/* a value that looks like an option is taken as the value */
	assert_int_equal(PARSE(f, "-o", "-v", "--out", "--quiet"), 0);
	assert_string_equal(f->v.out, "--quiet");
	/* the last of a repeated option wins */
	assert_int_equal(PARSE(f, "-r", "5", "--rate", "7", "-r9"), 0);
	assert_true(f->v.rate == 9);
	/* "--x=y=z": the value is everything after the first '=' */
	assert_int_equal(PARSE(f, "--out=a=b"), 0);
	assert_string_equal(f->v.out, "a=b");
}

static void test_list(void **state)
{
	struct fixture *f = *state;
	char *argv[64];
	char bufs[20][16];
	int argc = 0;
	argv[argc++] = "run";
	argv[argc++] = "-H";
	argv[argc++] = "A: 1";
	argv[argc++] = "--header";
	argv[argc++] = "B: 2";
	argv[argc++] = "--header=C: 3";
	argv[argc++] = "-HD: 4";
	for (int i = 0; i < 20; i++) { /* grow past the initial capacity */
		snprintf(bufs[i], sizeof bufs[i], "X%d: y", i);
		argv[argc++] = "-H";
		argv[argc++] = bufs[i];
	}
	assert_int_equal(parse(f, argc, argv), 0);
	assert_int_equal(f->v.headers.n, 24);
	assert_true(f->v.headers.cap >= 24);
	assert_string_equal(f->v.headers.v[0], "A: 1");
	assert_string_equal(f->v.headers.v[1], "B: 2");
	assert_string_equal(f->v.headers.v[2], "C: 3");
	assert_string_equal(f->v.headers.v[3], "D: 4");
	for (int i = 0; i < 20; i++)
		assert_string_equal(f->v.headers.v[4 + i], bufs[i]);
	assert_true(opts_given(f->tab, N(f->tab), "header"));
	strlist_free(&f->v.headers);
	assert_null(f->v.headers.v);
	assert_int_equal(f->v.headers.n, 0);
	assert_int_equal(f->v.headers.cap, 0);
}

static void test_positionals(void **state)
{
	struct fixture *f = *state;
	/* positionals between options; "-" alone is a positional */
	assert_int_equal(PARSE(f, "a", "-v", "-", "--rate", "5", "c"), 0);
	assert_int_equal(f->npos, 3);
	assert_string_equal(f->pos[0], "a");
	assert_string_equal(f->pos[1], "-");
	assert_string_equal(f->pos[2], "c");
	assert_true(f->v.rate == 5);
	/* "--" ends options: what follows is positional even if it looks like one */
	fixture_init(f);
	assert_int_equal(PARSE(f, "--quiet", "--", "-v", "--rate"), 0);
	assert_true(f->v.quiet);
	assert_false(f->v.verbose);
	assert_true(f->v.rate == -1);
	assert_int_equal(f->npos, 2);
	assert_string_equal(f->pos[0], "-v");
	assert_string_equal(f->pos[1], "--rate");
	assert_false(opts_given(f->tab, N(f->tab), "verbose"));
	assert_false(opts_given(f->tab, N(f->tab), "rate"));
	/* a second "--" after "--" is a positional */
	fixture_init(f);
	assert_int_equal(PARSE(f, "--", "--"), 0);
	assert_int_equal(f->npos, 1);
	assert_string_equal(f->pos[0], "--");
	/* too many positionals */
	fixture_init(f);
	assert_int_equal(PARSE(f, "a", "b", "c", "d"), -1);
	assert_string_equal(f->err, "unexpected argument 'd'");
	/* no arguments at all */
	fixture_init(f);
	assert_int_equal(parse(f, 1, ARGV(NULL)), 0);
	assert_int_equal(f->npos, 0);
}

static void test_given(void **state)
{
	struct fixture *f = *state;
	assert_int_equal(PARSE(f, "-t", "2", "--quiet"), 0);
	assert_true(opts_given(f->tab, N(f->tab), "threads"));
	assert_true(opts_given(f->tab, N(f->tab), "quiet"));
	assert_false(opts_given(f->tab, N(f->tab), "verbose"));
	assert_false(opts_given(f->tab, N(f->tab), "rate"));
	assert_false(opts_given(f->tab, N(f->tab), "no-such-option"));
	/* given by its default value still counts as given */
	fixture_init(f);
	assert_int_equal(PARSE(f, "--threads=3"), 0);
	assert_true(opts_given(f->tab, N(f->tab), "threads"));
}

static void test_help(void **state)
{
	struct fixture *f = *state;
	assert_int_equal(PARSE(f, "-v", "--help", "--bogus"), 1);
	assert_true(f->v.verbose);
	fixture_init(f);
	assert_int_equal(PARSE(f, "-h"), 1);

	char *text = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&text, &len);
	assert_non_null(m);
	opts_help(m, f->tab, N(f->tab));
	fclose(m);
	assert_non_null(strstr(text, "-r, -R, --rate R")); /* wrk2's alias beside it */
	assert_non_null(strstr(text, "    --quiet"));
	assert_non_null(strstr(text, "run for D [default: 10s]\n"));
	assert_non_null(strstr(text, "-t, --threads "));
	assert_non_null(strstr(text, "threads [default: 1]\n"));
	/* one list, by name (cli_help_print groups; tests/unit/cli/test_help.c) */
	assert_true(strncmp(text, "Options:\n", 9) == 0);
	assert_true(strstr(text, "--duration") < strstr(text, "--header"));
	assert_true(strstr(text, "--rate") < strstr(text, "--requests"));
	free(text);

	/* wrapped to $COLUMNS: a long help text goes on over lines indented
	 * under the first, none wider than 40 columns */
	setenv("COLUMNS", "40", 1);
	f->tab[5].help = "a long explanation of what this option does, over several lines";
	m = open_memstream(&text, &len);
	assert_non_null(m);
	opts_help(m, f->tab, N(f->tab));
	fclose(m);
	unsetenv("COLUMNS");
	size_t widest = 0, col = 0;
	for (const char *p = text; *p; p++) {
		col = *p == '\n' ? 0 : col + 1;
		widest = col > widest ? col : widest;
	}
	assert_true(widest <= 40);
	/* narrow: the text goes under the name, indented 8 */
	assert_non_null(strstr(text, "    --quiet\n        a long explanation of what this\n"
				     "        option does, over several lines\n"));
	free(text);
}

struct err_case {
	const char *args[4];
	const char *want; /* exact message */
};

static const struct err_case errors[] = {
	/* unknown options */
	{{"--nope"}, "unknown option '--nope' (see --help)"},
	{{"--nope=3"}, "unknown option '--nope' (see --help)"},
	{{"--r", "5"}, "option '--r' is ambiguous: --requests, --rate"}, /* two prefixes */
	{{"--r=5"}, "option '--r' is ambiguous: --requests, --rate"},
	{{"--rates", "5"}, "unknown option '--rates' (did you mean --rate?)"},
	{{"--Rate", "5"}, "unknown option '--Rate' (did you mean --rate?)"},
	{{"-j"}, "unknown option '-j' (see --help)"},
	{{"-jvalue"}, "unknown option '-j' (see --help)"},
	{{"--=5"}, "unknown option '--' (see --help)"},
	/* missing values */
	{{"--rate"}, "--rate needs a value (R)"},
	{{"-v", "-r"}, "--rate needs a value (R)"},
	{{"-t"}, "--threads needs a value (value)"},
	{{"--header"}, "--header needs a value (LINE)"},
	/* flags take no value */
	{{"--verbose=1"}, "--verbose takes no value"},
	{{"--verbose="}, "--verbose takes no value"},
	{{"--verb=1"}, "--verbose takes no value"},    /* a prefix names the option */
	{{"-vq"}, "unknown option '-q' (see --help)"}, /* bundled: -v then -q */
	{{"-vt"}, "--threads needs a value (value)"},
	{{"--rat"}, "--rate needs a value (R)"},
	/* typed errors name the option, the value and the expected form */
	{{"--rate", "abc"},
	 "--rate 'abc': not understood (expected a rate of at least 0.001 such as 500, 2.5k, 1M or 50/1s)"},
	{{"-r0"},
	 "--rate '0': out of range (expected a rate of at least 0.001 such as 500, 2.5k, 1M or 50/1s)"},
	{{"--rate="},
	 "--rate '': not understood (expected a rate of at least 0.001 such as 500, 2.5k, 1M or 50/1s)"},
	{{"-r", "-5"},
	 "--rate '-5': not understood (expected a rate of at least 0.001 such as 500, 2.5k, 1M or 50/1s)"},
	{{"--duration", "10x"},
	 "--duration '10x': not understood (expected a duration such as 250ms, 10s, 1m30s or 1h)"},
	{{"-d", "-1s"},
	 "--duration '-1s': not understood (expected a duration such as 250ms, 10s, 1m30s or 1h)"},
	{{"-d", "400000000h"},
	 "--duration '400000000h': out of range (expected a duration such as 250ms, 10s, 1m30s or 1h)"},
	{{"-n", "1.5"},
	 "--requests '1.5': not understood (expected a whole number such as 1000 or 10k)"},
	{{"--requests=2000000000G"},
	 "--requests '2000000000G': out of range (expected a whole number such as 1000 or 10k)"},
	{{"--threads", "4294967296"},
	 "--threads '4294967296': out of range (expected a whole number)"},
	{{"-t", "2.5"}, "--threads '2.5': not understood (expected a whole number)"},
	{{"-t", "many"}, "--threads 'many': not understood (expected a whole number)"},
};

static void test_errors(void **state)
{
	struct fixture *f = *state;
	unsigned failed = 0;
	for (size_t i = 0; i < N(errors); i++) {
		const struct err_case *c = &errors[i];
		fixture_init(f);
		char *argv[6] = { "run" };
		int argc = 1;
		for (int k = 0; k < 4 && c->args[k]; k++)
			argv[argc++] = (char *)c->args[k];
		argv[argc] = NULL;
		memset(f->err, 0, sizeof f->err);
		int rc = parse(f, argc, argv);
		if (rc != -1 || strcmp(f->err, c->want) != 0) {
			print_message("args \"%s\" \"%s\": rc %d, err \"%s\", want \"%s\"\n", argv[1],
			              argc > 2 ? argv[2] : "", rc, f->err, c->want);
			failed++;
		}
		/* a failed typed value leaves the destination alone */
		if (f->v.rate != -1 || f->v.duration_ns != 7 || f->v.requests != 9 ||
		    f->v.threads != 3) {
			print_message("args \"%s\": destination changed on error\n", argv[1]);
			failed++;
		}
	}
	assert_int_equal(failed, 0);
}

static void test_u32_bounds(void **state)
{
	struct fixture *f = *state;
	assert_int_equal(PARSE(f, "-t", "4294967295"), 0);
	assert_int_equal(f->v.threads, UINT32_MAX);
	assert_int_equal(PARSE(f, "-t", "0"), 0);
	assert_int_equal(f->v.threads, 0);
	assert_int_equal(PARSE(f, "-t", "2k"), 0);
	assert_int_equal(f->v.threads, 2000);
}

/* OPT_U64 takes exact decimal integers up to UINT64_MAX; OPT_OPTSTR takes a
 * value only as --name=VALUE and is "" when given bare. */
static void test_u64_and_optional_value(void **state)
{
	(void)state;
	uint64_t seed = 5;
	const char *sc = NULL;
	struct opt tab[] = {
		{0, "seed", OPT_U64, &seed, "S", "1", "seed", false},
		{0, "self-contained", OPT_OPTSTR, &sc, "PLAN", "hello", "embedded target", false},
	};
	const char *pos[2];
	size_t npos;
	char err[256];
	char *a1[] = {"run", "--seed", "18446744073709551615", "--self-contained", "x"};
	assert_int_equal(opts_parse(tab, 2, 5, a1, pos, 2, &npos, err, sizeof err), 0);
	assert_true(seed == UINT64_MAX);
	assert_string_equal(sc, "");        /* bare: the default plan */
	assert_int_equal(npos, 1);          /* "x" is positional, not the value */
	char *a2[] = {"run", "--self-contained=kv", "--seed=0"};
	assert_int_equal(opts_parse(tab, 2, 3, a2, pos, 2, &npos, err, sizeof err), 0);
	assert_string_equal(sc, "kv");
	assert_true(seed == 0);
	static const struct {
		const char *v, *want;
	} bad[] = {
		{"18446744073709551616", "out of range"},
		{"1e3", "not understood"},
		{"-1", "not understood"},
		{"12x", "not understood"},
		{"", "not understood"},
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		char *a3[] = {"run", "--seed", (char *)bad[i].v};
		seed = 77;
		assert_int_equal(opts_parse(tab, 2, 3, a3, pos, 2, &npos, err, sizeof err), -1);
		assert_non_null(strstr(err, bad[i].want));
		assert_non_null(strstr(err, "--seed"));
		assert_true(seed == 77);
	}
}

/* A short error buffer truncates the message and keeps it terminated. */
static void test_small_err_buffer(void **state)
{
	struct fixture *f = *state;
	char err[6];
	memset(err, 'X', sizeof err);
	char **argv = ARGV("--nope");
	assert_int_equal(opts_parse(f->tab, N(f->tab), 2, argv, f->pos, N(f->pos), &f->npos, err,
	                            sizeof err), -1);
	assert_string_equal(err, "unkno");
}

/* getopt_long's habits: bundled short flags with the last one's value
 * attached or next, unambiguous long prefixes, options after positionals,
 * and argv left as typed (it is recorded in results). */
static void test_bundles_and_prefixes(void **state)
{
	struct fixture *f = *state;
	char **argv = ARGV("http://h/", "-vt4", "--dur", "1m30s", "--rat=50/1s", "--qu", "-vn", "2k");
	char *copy[9];
	memcpy(copy, argv, sizeof copy);
	assert_int_equal(parse(f, 9, argv), 0);
	assert_true(f->v.verbose);
	assert_int_equal(f->v.threads, 4);
	assert_true(f->v.duration_ns == 90000000000ull);
	assert_true(f->v.rate == 50);
	assert_true(f->v.quiet);
	assert_true(f->v.requests == 2000);
	assert_int_equal(f->npos, 1);
	assert_string_equal(f->pos[0], "http://h/");
	assert_memory_equal(copy, argv, sizeof copy);
	/* an exact name wins over a longer one it is the prefix of */
	bool tls = false, tls_resume = false;
	struct opt tab[] = {
		{0, "tls", OPT_FLAG, &tls, NULL, NULL, "tls", false},
		{0, "tls-resume", OPT_FLAG, &tls_resume, NULL, NULL, "resume", false},
	};
	const char *pos[1];
	size_t npos;
	char err[128];
	char *a[] = {"run", "--tls"};
	assert_int_equal(opts_parse(tab, 2, 2, a, pos, 1, &npos, err, sizeof err), 0);
	assert_true(tls);
	assert_false(tls_resume);
	char *b[] = {"run", "--tls-"};
	assert_int_equal(opts_parse(tab, 2, 2, b, pos, 1, &npos, err, sizeof err), 0);
	assert_true(tls_resume);
}

/* The peers' letters: -R (wrk2) is --rate, -z (hey, oha) --duration, -m
 * --method, where the table has the option and not the letter. */
static void test_aliases(void **state)
{
	struct fixture *f = *state;
	assert_int_equal(PARSE(f, "-R", "2k", "-z1m30s"), 0);
	assert_true(f->v.rate == 2000);
	assert_true(f->v.duration_ns == 90000000000ull);
	assert_true(opts_given(f->tab, N(f->tab), "rate"));
	assert_true(opts_given(f->tab, N(f->tab), "duration"));
	assert_int_equal(opts_alias_of(f->tab, N(f->tab), &f->tab[6]), 'R');
	/* the fixture has no --method: -m is unknown there */
	fixture_init(f);
	assert_int_equal(PARSE(f, "-m", "POST"), -1);
	assert_string_equal(f->err, "unknown option '-m' (see --help)");
	fixture_init(f);
	assert_int_equal(PARSE(f, "-R"), -1);
	assert_string_equal(f->err, "--rate needs a value (R)");
	/* a table that uses the letter itself keeps it */
	const char *method = NULL, *mode = NULL;
	struct opt tab[] = {
		{'X', "method", OPT_STR, &method, "M", NULL, "method", false},
		{'m', "mode", OPT_STR, &mode, "M", NULL, "mode", false},
	};
	const char *pos[1];
	size_t npos;
	char err[128];
	char *a[] = {"run", "-m", "fast", "-XPUT"};
	assert_int_equal(opts_parse(tab, 2, 4, a, pos, 1, &npos, err, sizeof err), 0);
	assert_string_equal(mode, "fast");
	assert_string_equal(method, "PUT");
	assert_int_equal(opts_alias_of(tab, 2, &tab[0]), 0);
	size_t na;
	const struct opts_alias *al = opts_aliases(&na);
	assert_true(na >= 4);
	assert_int_equal(al[0].short_name, 'R');
	/* -b (bombardier) is the body where the table has one */
	const char *body = NULL;
	struct opt btab[] = {{0, "body", OPT_STR, &body, "DATA", NULL, "body", false}};
	char *b[] = {"run", "-b", "@req.json"};
	assert_int_equal(opts_parse(btab, 1, 3, b, pos, 1, &npos, err, sizeof err), 0);
	assert_string_equal(body, "@req.json");
}

static int usage_calls;

static void count_usage(FILE *out, struct opt *tab, size_t n)
{
	(void)out;
	(void)tab;
	(void)n;
	usage_calls++;
}

/* opts_parse_cmd with stderr caught into msg[cap]: its return code. */
static int parse_cmd(struct fixture *f, int argc, char **argv, size_t min, size_t max,
		     char *msg, size_t cap)
{
	struct opts_positionals p = {.what = "OLD and NEW", .min = min, .max = max, .v = f->pos};
	FILE *tmp = tmpfile();
	assert_non_null(tmp);
	fflush(stderr);
	int saved = dup(2);
	assert_true(saved >= 0);
	assert_true(dup2(fileno(tmp), 2) >= 0);
	int rc = opts_parse_cmd("diff", f->tab, N(f->tab), argc, argv, count_usage, &p);
	fflush(stderr);
	assert_true(dup2(saved, 2) >= 0);
	close(saved);
	rewind(tmp);
	size_t len = fread(msg, 1, cap - 1, tmp);
	msg[len] = '\0';
	fclose(tmp);
	f->npos = p.n;
	return rc;
}

/* The usual handling of a subcommand's options and positional count: go
 * on (-1) within min..max, EXIT_OK (0) after --help, EXIT_USAGE (2) with
 * one line naming the command and what it expected. */
static void test_parse_cmd(void **state)
{
	struct fixture *f = *state;
	char msg[512];
	usage_calls = 0;
	assert_int_equal(parse_cmd(f, ARGC("a.json", "-t", "2", "b.json"),
				   ARGV("a.json", "-t", "2", "b.json"), 2, 2, msg, sizeof msg), -1);
	assert_int_equal(f->npos, 2);
	assert_string_equal(f->pos[0], "a.json");
	assert_string_equal(f->pos[1], "b.json");
	assert_int_equal(f->v.threads, 2);
	assert_string_equal(msg, "");
	assert_int_equal(parse_cmd(f, ARGC("a.json"), ARGV("a.json"), 2, 2, msg, sizeof msg), 2);
	assert_string_equal(msg, "pacer diff: expected OLD and NEW, got 1 argument (see pacer diff "
				 "--help)\n");
	assert_int_equal(parse_cmd(f, ARGC("a", "b", "c"), ARGV("a", "b", "c"), 1, 2, msg,
				   sizeof msg), 2);
	assert_string_equal(msg, "pacer diff: expected OLD and NEW, got 3 arguments (see pacer diff "
				 "--help)\n");
	/* none is fine when min is 0 */
	assert_int_equal(parse_cmd(f, ARGC("-v"), ARGV("-v"), 0, 1, msg, sizeof msg), -1);
	assert_int_equal(f->npos, 0);
	assert_int_equal(usage_calls, 0);
	assert_int_equal(parse_cmd(f, ARGC("--help"), ARGV("--help"), 2, 2, msg, sizeof msg), 0);
	assert_int_equal(usage_calls, 1);
	assert_string_equal(msg, "");
	assert_int_equal(parse_cmd(f, ARGC("--nope", "a", "b"), ARGV("--nope", "a", "b"), 2, 2, msg,
				   sizeof msg), 2);
	assert_non_null(strstr(msg, "pacer diff: "));
	assert_non_null(strstr(msg, "--nope"));
	assert_int_equal(strchr(msg, '\n') - msg + 1, (long)strlen(msg)); /* one line */
}

/* Other tools' spellings that pacer would take for something else are
 * refused with the option meant; a mistyped long option names the closest
 * one; opts_did_you_mean. */
static void test_peers_and_near(void **state)
{
	(void)state;
	bool quiet = false;
	const char *method = NULL, *body = NULL;
	double rate = 0;
	uint64_t dur = 0;
	uint32_t threads = 0, streams = 0, conc = 0;
	struct opt tab[] = {
		{'b', "body", OPT_STR, &body, "DATA", NULL, "body", false},
		{0, "concurrency", OPT_U32, &conc, "P", NULL, "concurrency", false},
		{'d', "duration", OPT_DURATION, &dur, "D", NULL, "duration", false},
		{0, "max-streams", OPT_U32, &streams, "N", NULL, "streams", false},
		{'X', "method", OPT_STR, &method, "M", NULL, "method", false},
		{'q', "quiet", OPT_FLAG, &quiet, NULL, NULL, "quiet", false},
		{'r', "rate", OPT_RATE, &rate, "R", NULL, "rate", false},
		{'t', "threads", OPT_U32, &threads, "T", NULL, "threads", false},
		{0, "timeout", OPT_DURATION, &dur, "D", NULL, "timeout", false},
	};
	const char *pos[3];
	size_t npos;
	char err[512];
	static const struct {
		const char *args[4];
		const char *want; /* a part of the message; NULL: parses */
	} cases[] = {
		{{"-m", "10"},
		 "pacer's -m is the method (as hey's and oha's); h2load's -m (streams per connection) is --max-streams"},
		{{"-m10"}, "'-m 10'"},
		{{"-m", "POST"}, NULL}, /* hey's and oha's -m: the method */
		{{"-q", "500"}, "pacer's -q is --quiet; oha's -q (requests/s) is -r/--rate"},
		{{"-q2.5k"}, "'-q 2.5k'"},
		{{"-q", "http://h/"}, NULL}, /* quiet, then the URL */
		{{"-rate=50/1s"}, "pacer's long options take two dashes: --rate=50/1s"},
		{{"-duration", "5s"}, "two dashes: --duration"},
		{{"-h2"}, "hey's -h2 is --http2"},
		{{"-targets=t.txt"}, "vegeta's -targets is --requests-file"},
		{{"-b", "-rate"}, NULL}, /* a value, not an option */
		{{"-D", "30"}, "h2load's -D (duration) is -d/--duration here"},
		{{"-T", "text/plain"}, "wrk's -T is --timeout here"},
		{{"--vus", "10"}, "k6's --vus is --concurrency"},
		{{"--rps", "100"}, "k6's --rps is -r/--rate here"},
		{{"-d", "{\"a\":1}"}, "a request body is --body DATA or --body @FILE"},
		{{"-t", "5s"}, "a timeout is --timeout here"},
		{{"--duraton", "5s"}, "unknown option '--duraton' (did you mean --duration?)"},
		{{"--max-stream=4"}, NULL}, /* a prefix is fine */
		{{"--concurency", "4"}, "(did you mean --concurrency?)"},
		{{"--xyzzy"}, "unknown option '--xyzzy' (see --help)"},
		{{"--", "-m", "10"}, NULL}, /* after --: positionals */
	};
	for (size_t i = 0; i < N(cases); i++) {
		char *argv[6] = {"run"};
		int argc = 1;
		for (size_t k = 0; k < 4 && cases[i].args[k]; k++)
			argv[argc++] = (char *)cases[i].args[k];
		int rc = opts_parse(tab, N(tab), argc, argv, pos, N(pos), &npos, err, sizeof err);
		if (!cases[i].want) {
			if (rc != 0)
				fail_msg("case %zu (%s): refused: %s", i, cases[i].args[0], err);
			continue;
		}
		if (rc != -1 || !strstr(err, cases[i].want))
			fail_msg("case %zu (%s): rc %d, message \"%s\", expected \"%s\"", i,
				 cases[i].args[0], rc, rc ? err : "", cases[i].want);
	}
	static const char *const words[] = {"md", "html", "text"};
	char buf[64];
	assert_string_equal(opts_did_you_mean(buf, sizeof buf, "htm", words, 3),
			    " (did you mean html?)");
	assert_string_equal(opts_did_you_mean(buf, sizeof buf, "pdf", words, 3), "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_forms, setup, teardown),
		cmocka_unit_test_setup_teardown(test_forms_more, setup, teardown),
		cmocka_unit_test_setup_teardown(test_list, setup, teardown),
		cmocka_unit_test_setup_teardown(test_positionals, setup, teardown),
		cmocka_unit_test_setup_teardown(test_given, setup, teardown),
		cmocka_unit_test_setup_teardown(test_help, setup, teardown),
		cmocka_unit_test_setup_teardown(test_errors, setup, teardown),
		cmocka_unit_test_setup_teardown(test_u32_bounds, setup, teardown),
		cmocka_unit_test_setup_teardown(test_small_err_buffer, setup, teardown),
		cmocka_unit_test(test_u64_and_optional_value),
		cmocka_unit_test_setup_teardown(test_bundles_and_prefixes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_aliases, setup, teardown),
		cmocka_unit_test_setup_teardown(test_parse_cmd, setup, teardown),
		cmocka_unit_test(test_peers_and_near),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
