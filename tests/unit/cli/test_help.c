/* Tests of the help renderer (src/cli/help.c): the grouped terminal text
 * with examples and exit codes, the man page (roff escapes, sections,
 * groups, aliases) and the bash completion arm, all from one table. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cli/help.h"
#include "cli/opts.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

static double rate;
static uint64_t dur;
static const char *out, *arrival, *cacert;
static bool quiet, insecure, help;

static struct opt tab[] = {
	{'r', "rate", OPT_RATE, &rate, "R", NULL, "offered requests/s", false},
	{'d', "duration", OPT_DURATION, &dur, "D", "10s", "measured phase length", false},
	{'o', "out", OPT_STR, &out, "FILE", NULL, "write the JSON result", false},
	{'q', "quiet", OPT_FLAG, &quiet, NULL, NULL, "no progress line", false},
	{0, "arrival", OPT_STR, &arrival, "constant|poisson", "constant", "spacing", false},
	{0, "cacert", OPT_STR, &cacert, "FILE", NULL, "trust these CAs", false},
	{0, "insecure", OPT_FLAG, &insecure, NULL, NULL, "do not verify", false},
	{'h', "help", OPT_HELP, &help, NULL, NULL, "show this help", false},
};

static const struct cli_example ex[] = {
	{"pacer run http://h/ -R 2k", "2,000 req/s"},
	{".start -x \\ back", "a line that needs roff escapes"},
	{"pacer run --self-contained=vast_ortb_mix -r 1k -d 1m30s -o result.json --slo 'p99 < 20 ms' "
	 "--outcome fill='body contains \"<Ad\"'",
	 "a command longer than the line"},
};
static const struct cli_exit exits[] = {{0, "done"}, {4, "generator-limited"}};
static const struct cli_help h = {
	.name = "run",
	.summary = "measure a target",
	.synopsis = "pacer run URL [options]",
	.description = "First paragraph.\nSecond paragraph.",
	.examples = ex,
	.n_examples = N(ex),
	.exits = exits,
	.n_exits = N(exits),
	.see = "docs/run.md",
	.grouped = true,
};

static char *render(enum help_format fmt)
{
	char *text = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&text, &len);
	assert_non_null(m);
	cli_help_set_format(fmt);
	cli_help_print(m, &h, tab, N(tab));
	cli_help_set_format(HELP_TEXT);
	fclose(m);
	return text;
}

static void test_groups(void **state)
{
	(void)state;
	assert_string_equal(cli_help_group("rate"), "Load");
	assert_string_equal(cli_help_group("method"), "Requests");
	assert_string_equal(cli_help_group("no-keepalive"), "Transport");
	assert_string_equal(cli_help_group("slo"), "Response rules");
	assert_string_equal(cli_help_group("target-pid"), "Probes and generator check");
	assert_string_equal(cli_help_group("out"), "Output");
	assert_string_equal(cli_help_group("variant"), "Variants");
	assert_string_equal(cli_help_group("no-such-option"), "Options");
	assert_string_equal(cli_help_group("rat"), "Options"); /* whole names only */
}

static void test_text(void **state)
{
	(void)state;
	setenv("COLUMNS", "80", 1);
	char *t = render(HELP_TEXT);
	unsetenv("COLUMNS");
	const char *head = "usage: pacer run URL [options]\n\n";
	assert_true(strncmp(t, head, strlen(head)) == 0);
	/* groups in their order, each option under its own */
	const char *load = strstr(t, "\nLoad:\n"), *req = strstr(t, "\nRequests:\n"),
		   *tr = strstr(t, "\nTransport:\n"), *o = strstr(t, "\nOutput:\n");
	assert_non_null(load);
	assert_null(req); /* no option of that group: no heading */
	assert_non_null(tr);
	assert_non_null(o);
	assert_true(load < strstr(t, "-r, -R, --rate R") && strstr(t, "--arrival") < tr);
	assert_true(tr < strstr(t, "--cacert FILE") && strstr(t, "--insecure") < o);
	assert_true(o < strstr(t, "-o, --out FILE") && o < strstr(t, "-q, --quiet"));
	assert_non_null(strstr(t, "-d, -z, --duration D"));
	assert_non_null(strstr(t, "Examples:\n  pacer run http://h/ -R 2k\n      2,000 req/s\n"));
	assert_non_null(strstr(t, "Exit codes:\n  0    done\n  4    generator-limited\n"));
	assert_non_null(strstr(t, "\nSee docs/run.md.\n"));
	free(t);
}

/* A long example is broken between shell words with a trailing backslash
 * (never inside quotes, an option beside its value): the lines pasted into
 * a shell give back the command, word for word. */
static void test_example_pastes(void **state)
{
	(void)state;
	for (int cols = 40; cols <= 130; cols += 15) {
		char c[16];
		snprintf(c, sizeof c, "%d", cols);
		setenv("COLUMNS", c, 1);
		char *t = render(HELP_TEXT);
		unsetenv("COLUMNS");
		const char *start = strstr(t, "a line that needs roff escapes\n");
		assert_non_null(start);
		start += strlen("a line that needs roff escapes\n");
		assert_true(strncmp(start, "  pacer run ", 12) == 0);
		/* the command's lines: joined at each " \\\n" and the indent */
		char joined[512] = "";
		size_t k = 0;
		const char *p = start + 2;
		for (;;) {
			const char *nl = strchr(p, '\n');
			assert_non_null(nl);
			size_t len = (size_t)(nl - p);
			assert_true((int)len + (p == start + 2 ? 2 : 6) <=
				    (cols < 60 ? 200 : cols));
			bool more = len >= 2 && p[len - 1] == '\\' && p[len - 2] == ' ';
			memcpy(joined + k, p, more ? len - 2 : len);
			k += more ? len - 2 : len;
			if (!more)
				break;
			joined[k++] = ' ';
			p = nl + 1;
			assert_true(strncmp(p, "      ", 6) == 0);
			p += 6;
		}
		joined[k] = '\0';
		assert_string_equal(joined, ex[2].cmd);
		if (cols >= 130)
			assert_null(strstr(start, " \\\n")); /* fits: one line */
		else
			assert_non_null(strstr(start, "--slo 'p99 < 20 ms'")); /* kept whole */
		free(t);
	}
}

static void test_man(void **state)
{
	(void)state;
	char *t = render(HELP_MAN);
	assert_true(strncmp(t, ".TH PACER-RUN 1 ", 16) == 0);
	assert_non_null(strstr(t, ".SH NAME\npacer\\-run \\- measure a target\n"));
	assert_non_null(strstr(t, ".SH SYNOPSIS\n.nf\npacer run URL [options]\n.fi\n"));
	assert_non_null(strstr(t, ".PP\nFirst paragraph.\n.PP\nSecond paragraph.\n"));
	assert_non_null(strstr(t, ".SS Load\n"));
	assert_non_null(strstr(t, ".SS Transport\n"));
	assert_non_null(strstr(t, ".TP\n\\fB\\-r\\fR, \\fB\\-R\\fR, \\fB\\-\\-rate\\fR \\fIR\\fR\n"
				  "offered requests/s\n"));
	assert_non_null(strstr(t, "measured phase length [default: 10s]\n"));
	/* a leading dot, hyphens and a backslash are escaped */
	assert_non_null(strstr(t, "\\&.start \\-x \\e back\n"));
	assert_non_null(strstr(t, ".SH EXIT STATUS\n.TP\n0\ndone\n.TP\n4\ngenerator\\-limited\n"));
	assert_non_null(strstr(t, ".SH SEE ALSO\n\\fBpacer\\fR(1), docs/run.md"));
	/* no line of text starts with a dot or quote that roff would take as a
	 * request, other than the requests written on purpose */
	for (const char *p = t; p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (*p == '\'')
			fail_msg("line starts with a quote: %.30s", p);
	free(t);
}

static void test_bash(void **state)
{
	(void)state;
	char *t = render(HELP_BASH);
	assert_non_null(strstr(t, "opts='--rate -r -R --duration -d -z --out -o --quiet -q "
				  "--arrival --cacert --insecure --help -h'\n"));
	assert_non_null(strstr(t, "--arrival) _pacer_words 'constant poisson'; return ;;\n"));
	assert_non_null(strstr(t, "--out|-o) _pacer_files; return ;;\n"));
	assert_non_null(strstr(t, "--rate|-r|-R) return ;;\n")); /* a value, nothing to offer */
	assert_null(strstr(t, "--quiet|")); /* flags take no value */
	free(t);
}

static void test_width(void **state)
{
	(void)state;
	setenv("COLUMNS", "120", 1);
	assert_int_equal(cli_help_width(-1), 120);
	setenv("COLUMNS", "12", 1); /* too narrow to be meant: the default */
	assert_int_equal(cli_help_width(-1), 80);
	setenv("COLUMNS", "abc", 1);
	assert_int_equal(cli_help_width(-1), 80);
	unsetenv("COLUMNS");
	assert_int_equal(cli_help_width(-1), 80); /* not a terminal */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_groups), cmocka_unit_test(test_text),
		cmocka_unit_test(test_man),    cmocka_unit_test(test_example_pastes),
		cmocka_unit_test(test_bash),   cmocka_unit_test(test_width),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
