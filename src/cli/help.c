/* pacer — help text, man pages and completion words from one option table
 * (cli/help.h). */
#include "cli/help.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "cli/cli.h"
#include "history/headline.h"

const struct cli_exit cli_exits_run[5] = {
	{EXIT_OK, "the run finished (errors from the target are reported, not a failure of pacer)"},
	{EXIT_USAGE, "usage error: bad option or value, bad URL, a target that does not resolve or "
		     "refuses the first connection; one line on stderr"},
	{EXIT_RUNTIME, "runtime failure of pacer itself (out of memory, cannot write an output file)"},
	{EXIT_GENERATOR_LIMITED, "results written, but flagged generator-limited: pacer, not the "
				 "target, may have been the limit (--limited-ok: 0 instead)"},
	{EXIT_INTERRUPTED, "interrupted by Ctrl-C / SIGINT / SIGTERM: what was measured is still "
			   "printed and written, marked interrupted"},
};

const struct cli_exit cli_exits_ramp[6] = {
	{EXIT_OK, "the ramp reached --require (or, without it, every step passed)"},
	{EXIT_SLO_FAILED, "the SLO failed first: no step at or above --require passed"},
	{EXIT_USAGE, "usage error: bad option or value, bad URL, unreachable target"},
	{EXIT_RUNTIME, "runtime failure of pacer itself (out of memory, cannot write --out)"},
	{EXIT_GENERATOR_LIMITED, "results written, but the first failing step was flagged "
				 "generator-limited (--limited-ok: the code above instead)"},
	{EXIT_INTERRUPTED, "interrupted by Ctrl-C / SIGINT / SIGTERM: results still written"},
};

const struct cli_exit cli_exits_plain[3] = {
	{EXIT_OK, "done"},
	{EXIT_USAGE, "usage error: bad option or value, unreadable input; one line on stderr"},
	{EXIT_RUNTIME, "runtime failure of pacer itself (out of memory, cannot write the output)"},
};

static enum help_format format = HELP_TEXT;

void cli_help_set_format(enum help_format f)
{
	format = f;
}

enum help_format cli_help_format(void)
{
	return format;
}

int cli_help_width(int fd)
{
	const char *env = getenv("COLUMNS");
	if (env && *env) {
		char *end;
		long v = strtol(env, &end, 10);
		if (!*end && v >= 40 && v <= 500)
			return (int)v;
	}
	struct winsize ws;
	if (isatty(fd) && ioctl(fd, TIOCGWINSZ, &ws) == 0 && ws.ws_col >= 40)
		return ws.ws_col > 500 ? 500 : ws.ws_col;
	return 80;
}

/* Groups in the order help lists them; an option no row names goes under
 * "Options", after them: a new shared option gets its row here. */
static const struct {
	const char *group;
	const char *names;
} groups[] = {
	{"Load", " rate duration requests concurrency connections threads warmup drain arrival burst-size "
		 "spin send-window precision-budget precise repeat seed timeout steps from to factor step-duration "
		 "step-warmup after-fail refine precision segment start-at "},
	{"Requests", " method header body bodies max-body requests-file requests-format lazy order "
		     "self-contained target-threads script script-memory script-timeout "},
	{"Transport", " no-keepalive connect-to unix-socket cacert cert key insecure tls "
		      "tls-resume no-tls-resume "},
	{"Response rules", " success outcome server-time inspect-body slo require "},
	{"Probes and generator check", " target-pid target-children target-cgroup target-cores "
				       "cost-profile lag-limit limited-ok "},
	{"Output", " out quiet latency by-name report-dir hgrm metrics-listen metrics-listen-any "
		   "history help "},
	{"Variants", " variant variant-set noise "},
};
#define N_GROUPS (sizeof groups / sizeof groups[0])

static size_t group_index(const char *name)
{
	char key[72];
	snprintf(key, sizeof key, " %s ", name);
	for (size_t g = 0; g < N_GROUPS; g++)
		if (strstr(groups[g].names, key))
			return g;
	return N_GROUPS;
}

const char *cli_help_group(const char *long_name)
{
	size_t g = group_index(long_name);
	return g < N_GROUPS ? groups[g].group : "Options";
}

/* Write text wrapped at width, every line but the first indented by
 * indent; col is where the first line starts. Words longer than a line
 * stand alone. */
static void wrap(FILE *f, const char *text, int col, int indent, int width)
{
	const char *p = text;
	bool first_word = true;
	while (*p) {
		if (*p == '\n') {
			fprintf(f, "\n%*s", indent, "");
			col = indent;
			first_word = true;
			p++;
			continue;
		}
		if (*p == ' ') {
			p++;
			continue;
		}
		size_t len = strcspn(p, " \n");
		if (!first_word && col + 1 + (int)len > width) {
			fprintf(f, "\n%*s", indent, "");
			col = indent;
			first_word = true;
		}
		if (!first_word) {
			fputc(' ', f);
			col++;
		}
		fwrite(p, 1, len, f);
		col += (int)len;
		first_word = false;
		p += len;
	}
	fputc('\n', f);
}

void cli_help_roff(FILE *f, const char *s)
{
	bool bol = true;
	for (; *s; s++) {
		if (bol && (*s == '.' || *s == '\''))
			fputs("\\&", f);
		if (*s == '\\')
			fputs("\\e", f);
		else if (*s == '-')
			fputs("\\-", f);
		else
			fputc(*s, f);
		bol = *s == '\n';
	}
}

static int by_long_name(const void *a, const void *b)
{
	const struct opt *x = *(const struct opt *const *)a, *y = *(const struct opt *const *)b;
	return strcmp(x->long_name, y->long_name);
}

/* The options in help order: by group (when grouped), then by name.
 * Returns how many. */
static size_t sorted_opts(const struct opt *tab, size_t n, const struct opt **out, size_t cap,
			  bool grouped)
{
	if (n > cap)
		n = cap;
	for (size_t i = 0; i < n; i++)
		out[i] = &tab[i];
	qsort(out, n, sizeof out[0], by_long_name);
	if (!grouped)
		return n;
	size_t k = 0;
	const struct opt *tmp[256];
	for (size_t g = 0; g <= N_GROUPS; g++)
		for (size_t i = 0; i < n; i++)
			if (group_index(out[i]->long_name) == g)
				tmp[k++] = out[i];
	memcpy(out, tmp, n * sizeof out[0]);
	return n;
}

/* "-r, -R, --rate R" */
static void opt_left(char *buf, size_t cap, const struct opt *tab, size_t n, const struct opt *o)
{
	char alias = opts_alias_of(tab, n, o);
	char shorts[16] = "";
	if (o->short_name && alias)
		snprintf(shorts, sizeof shorts, "-%c, -%c, ", o->short_name, alias);
	else if (o->short_name || alias)
		snprintf(shorts, sizeof shorts, "-%c, ", o->short_name ? o->short_name : alias);
	const char *sep = !o->metavar ? "" : o->type == OPT_OPTSTR ? "[=" : " ";
	const char *end = o->metavar && o->type == OPT_OPTSTR ? "]" : "";
	snprintf(buf, cap, "%s%s--%s%s%s%s", *shorts ? "" : "    ", shorts, o->long_name, sep,
		 o->metavar ? o->metavar : "", end);
}

static void help_line(char *buf, size_t cap, const struct opt *o)
{
	if (o->def)
		snprintf(buf, cap, "%s [default: %s]", o->help, o->def);
	else
		snprintf(buf, cap, "%s", o->help);
}

static void opts_text(FILE *f, const struct opt *tab, size_t n, int width, bool grouped)
{
	const struct opt *s[256];
	n = sorted_opts(tab, n, s, 256, grouped);
	const char *last = NULL;
	for (size_t i = 0; i < n; i++) {
		const char *g = grouped ? cli_help_group(s[i]->long_name) : "Options";
		if (g != last)
			fprintf(f, "%s%s:\n", last ? "\n" : "", g);
		last = g;
		char left[96], text[1024];
		opt_left(left, sizeof left, tab, n, s[i]);
		help_line(text, sizeof text, s[i]);
		/* the text in a column from 31, or under the name on a narrow terminal */
		int ind = width >= 70 ? 31 : 8;
		if (strlen(left) > 28 || ind < 31) /* the text starts on the next line */
			fprintf(f, "  %s\n%*s", left, ind, "");
		else
			fprintf(f, "  %-28s ", left);
		wrap(f, text, ind, ind, width);
	}
}

static void opts_man(FILE *f, const struct opt *tab, size_t n, bool grouped)
{
	const struct opt *s[256];
	n = sorted_opts(tab, n, s, 256, grouped);
	const char *last = NULL;
	for (size_t i = 0; i < n; i++) {
		const struct opt *o = s[i];
		const char *g = grouped ? cli_help_group(o->long_name) : "Options";
		if (g != last)
			fprintf(f, ".SS %s\n", g);
		last = g;
		char alias = opts_alias_of(tab, n, o);
		fputs(".TP\n", f);
		if (o->short_name)
			fprintf(f, "\\fB\\-%c\\fR, ", o->short_name);
		if (alias)
			fprintf(f, "\\fB\\-%c\\fR, ", alias);
		fputs("\\fB", f);
		cli_help_roff(f, "--");
		cli_help_roff(f, o->long_name);
		fputs("\\fR", f);
		if (o->metavar) {
			fputs(o->type == OPT_OPTSTR ? "[=\\fI" : " \\fI", f);
			cli_help_roff(f, o->metavar);
			fputs(o->type == OPT_OPTSTR ? "\\fR]" : "\\fR", f);
		}
		char text[1024];
		help_line(text, sizeof text, o);
		fputc('\n', f);
		cli_help_roff(f, text);
		fputc('\n', f);
	}
}

/* A metavar that lists its words ("constant|poisson"): the values to offer. */
static bool choice_words(const char *mv, char *out, size_t cap)
{
	if (!mv || !strchr(mv, '|'))
		return false;
	for (const char *p = mv; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || *p == '|' || *p == '-' || (*p >= '0' && *p <= '9')))
			return false;
	snprintf(out, cap, "%s", mv);
	for (char *p = out; *p; p++)
		if (*p == '|')
			*p = ' ';
	return true;
}

/* The values of an option whose metavar does not list them: a history
 * metric (--trend), report's --timing. NULL: none known. */
static const char *known_words(const struct opt *o, char *buf, size_t cap)
{
	const char *mv = o->metavar ? o->metavar : "";
	if (!strcmp(mv, "METRIC") || !strcmp(mv, "METRICS")) {
		size_t k = 0;
		buf[0] = '\0';
		for (int m = 0; m < HM_COUNT && k < cap; m++)
			k += (size_t)snprintf(buf + k, cap - k, "%s%s", m ? " " : "",
					      headline_metric_name((enum headline_metric)m));
		return buf;
	}
	if (!strcmp(o->long_name, "timing"))
		return "latency service_time ttfb connect_time send_lag loop_lag server_time";
	return NULL;
}

static void opts_bash(FILE *f, const struct opt *tab, size_t n)
{
	fputs("\t\topts='", f);
	for (size_t i = 0; i < n; i++) {
		const struct opt *o = &tab[i];
		char alias = opts_alias_of(tab, n, o);
		fprintf(f, "%s--%s%s", i ? " " : "", o->long_name, o->type == OPT_OPTSTR ? "=" : "");
		if (o->short_name)
			fprintf(f, " -%c", o->short_name);
		if (alias)
			fprintf(f, " -%c", alias);
	}
	fputs("'\n\t\tcase $prev in\n", f);
	for (size_t i = 0; i < n; i++) {
		const struct opt *o = &tab[i];
		if (o->type == OPT_OPTSTR && o->metavar) {
			/* a value only as --name=VALUE ($eq: the word before was '=') */
			char words[128];
			if (!strcmp(o->metavar, "PLAN"))
				snprintf(words, sizeof words, "_pacer_words \"$plans\"");
			else
				snprintf(words, sizeof words, "_pacer_words '%s'", o->metavar);
			fprintf(f, "\t\t--%s) [ -n \"$eq\" ] && { %s; return; } ;;\n", o->long_name,
				words);
			continue;
		}
		if (o->type == OPT_FLAG || o->type == OPT_HELP || o->type == OPT_OPTSTR)
			continue;
		char alias = opts_alias_of(tab, n, o);
		fprintf(f, "\t\t--%s", o->long_name);
		if (o->short_name)
			fprintf(f, "|-%c", o->short_name);
		if (alias)
			fprintf(f, "|-%c", alias);
		char words[160];
		const char *mv = o->metavar ? o->metavar : "";
		const char *known = known_words(o, words, sizeof words);
		if (known && !strcmp(mv, "METRICS")) /* a comma-separated list */
			fprintf(f, ") _pacer_list '%s'; return ;;\n", known);
		else if (known)
			fprintf(f, ") _pacer_words '%s'; return ;;\n", known);
		else if (choice_words(mv, words, sizeof words))
			fprintf(f, ") _pacer_words '%s'; return ;;\n", words);
		else if (strstr(mv, "DIR"))
			fputs(") _pacer_dirs; return ;;\n", f);
		else if (strstr(mv, "FILE"))
			fputs(") _pacer_files; return ;;\n", f);
		else
			fputs(") return ;;\n", f);
	}
	fputs("\t\tesac\n", f);
}

void opts_help(FILE *f, const struct opt *tab, size_t n)
{
	if (format == HELP_MAN)
		opts_man(f, tab, n, false);
	else if (format == HELP_BASH)
		opts_bash(f, tab, n);
	else
		opts_text(f, tab, n, cli_help_width(fileno(f)), false);
}

static void man_page(FILE *f, const struct cli_help *h, const struct opt *tab, size_t n)
{
	char upper[64];
	snprintf(upper, sizeof upper, "PACER%s%s", *h->name ? "-" : "", h->name);
	for (char *p = upper; *p; p++)
		if (*p >= 'a' && *p <= 'z')
			*p = (char)(*p - 'a' + 'A');
	fprintf(f, ".TH %s 1 \"\" \"pacer %s\" \"pacer manual\"\n.SH NAME\n", upper, PACER_VERSION);
	fprintf(f, "pacer%s%s \\- ", *h->name ? "\\-" : "", h->name);
	cli_help_roff(f, h->summary);
	fputs("\n.SH SYNOPSIS\n.nf\n", f);
	cli_help_roff(f, h->synopsis);
	fputs("\n.fi\n", f);
	if (h->description)
		fputs(".SH DESCRIPTION\n", f);
	for (const char *p = h->description; p && *p;) {
		size_t len = strcspn(p, "\n");
		char para[2048];
		snprintf(para, sizeof para, "%.*s", (int)len, p);
		fputs(".PP\n", f);
		cli_help_roff(f, para);
		fputc('\n', f);
		p += len + (p[len] == '\n');
	}
	if (h->verbatim) {
		fputs(".SH COMMANDS\n.nf\n", f);
		cli_help_roff(f, h->verbatim);
		fputs("\n.fi\n", f);
	}
	if (n) {
		fputs(".SH OPTIONS\n", f);
		opts_man(f, tab, n, h->grouped);
	}
	if (h->n_examples)
		fputs(".SH EXAMPLES\n", f);
	for (size_t i = 0; i < h->n_examples; i++) {
		fputs(".PP\n", f);
		cli_help_roff(f, h->examples[i].what);
		fputs("\n.RS\n.nf\n", f);
		cli_help_roff(f, h->examples[i].cmd);
		fputs("\n.fi\n.RE\n", f);
	}
	fputs(".SH EXIT STATUS\n", f);
	for (size_t i = 0; i < h->n_exits; i++) {
		fprintf(f, ".TP\n%d\n", h->exits[i].code);
		cli_help_roff(f, h->exits[i].meaning);
		fputc('\n', f);
	}
	fputs(".SH SEE ALSO\n", f);
	if (*h->name)
		fputs("\\fBpacer\\fR(1)", f);
	for (size_t i = 0; i < h->n_pages; i++) {
		fputs(i ? ",\n" : "", f);
		fputs("\\fBpacer\\-", f);
		cli_help_roff(f, h->pages[i]);
		fputs("\\fR(1)", f);
	}
	if (h->see) {
		fputs(h->n_pages ? ",\n" : *h->name ? ", " : "", f);
		cli_help_roff(f, h->see);
		fputs(" (in the installed documentation)", f);
	}
	fputc('\n', f);
}

/* The length of the shell word at p: up to a space outside quotes. */
static size_t shell_word(const char *p)
{
	const char *q = p;
	char quote = 0;
	while (*q && (quote || *q != ' ')) {
		if (quote) {
			if (*q == quote)
				quote = 0;
		} else if (*q == '\'' || *q == '"') {
			quote = *q;
		} else if (*q == '\\' && q[1]) {
			q++;
		}
		q++;
	}
	return (size_t)(q - p);
}

/* An example's command line, from column 2: on one line when it fits, else
 * broken between shell words (never inside quotes; an option with its
 * value kept together) with a trailing backslash, so that pasting the
 * lines runs the command. */
static void example_cmd(FILE *f, const char *cmd, int width)
{
	fputs("  ", f);
	if (2 + (int)strlen(cmd) <= width) {
		fprintf(f, "%s\n", cmd);
		return;
	}
	int col = 2, indent = 6;
	bool first = true;
	for (const char *p = cmd; *p;) {
		while (*p == ' ')
			p++;
		if (!*p)
			break;
		size_t len = shell_word(p);
		if (p[0] == '-' && !memchr(p, '=', len) && p[len] == ' ' && p[len + 1] &&
		    p[len + 1] != '-') /* "-o result.json" */
			len += 1 + shell_word(p + len + 1);
		if (!first && col + 1 + (int)len + 2 > width) {
			fprintf(f, " \\\n%*s", indent, "");
			col = indent;
		} else if (!first) {
			fputc(' ', f);
			col++;
		}
		fwrite(p, 1, len, f);
		col += (int)len;
		first = false;
		p += len;
	}
	fputc('\n', f);
}

void cli_help_exits(FILE *f, const struct cli_exit *exits, size_t n)
{
	int width = cli_help_width(fileno(f));
	fputs("Exit codes:\n", f);
	for (size_t i = 0; i < n; i++) {
		int col = fprintf(f, "  %-5d", exits[i].code);
		wrap(f, exits[i].meaning, col, 7, width);
	}
}

void cli_help_print(FILE *f, const struct cli_help *h, const struct opt *tab, size_t n)
{
	if (format == HELP_MAN) {
		man_page(f, h, tab, n);
		return;
	}
	if (format == HELP_BASH) {
		opts_bash(f, tab, n);
		return;
	}
	int width = cli_help_width(fileno(f));
	const char *p = h->synopsis;
	for (bool first = true; *p; first = false) {
		size_t len = strcspn(p, "\n");
		fprintf(f, "%s%.*s\n", first ? "usage: " : "       ", (int)len, p);
		p += len + (p[len] == '\n');
	}
	fputc('\n', f);
	if (h->description) {
		wrap(f, h->description, 0, 0, width);
		fputc('\n', f);
	}
	if (h->verbatim)
		fprintf(f, "%s\n\n", h->verbatim);
	if (n) {
		opts_text(f, tab, n, width, h->grouped);
		fputc('\n', f);
	}
	if (h->n_examples)
		fputs("Examples:\n", f);
	for (size_t i = 0; i < h->n_examples; i++) {
		example_cmd(f, h->examples[i].cmd, width);
		fputs("      ", f);
		wrap(f, h->examples[i].what, 6, 6, width);
	}
	if (h->n_examples)
		fputc('\n', f);
	cli_help_exits(f, h->exits, h->n_exits);
	if (h->see)
		fprintf(f, "\nSee %s.\n", h->see);
}
