/* pacer — entry point: dispatch to a subcommand; `pacer help CMD`; and the
 * generators of the man pages and the bash completion (`make man`,
 * `make install`), which render each command's own help table. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/help.h"
#include "cli/opts.h"
#include "cli/signals.h"
#include "target/plan.h"

struct command {
	const char *name, *args, *summary;
	int (*fn)(int, char **);
};

static const struct command commands[] = {
	{"run", "URL", "measure a target (open loop with --rate, closed loop without)", cmd_run},
	{"ramp", "URL", "steps of load until an SLO breaks: the highest passing step", cmd_ramp},
	{"bench", "FILE", "run the benchmark a scenario file describes", cmd_bench},
	{"compare", "", "A/B variants, interleaved, with confidence intervals", cmd_compare},
	{"serve", "", "run the embedded target server (pacer serve --list-plans)", cmd_serve},
	{"demo", "", "a short self-contained benchmark, end to end", cmd_demo},
	{"calibrate", "", "what this machine lets pacer promise: wake-up lateness, round trip",
	 cmd_calibrate},
	{"table", "CMD", "request tables: hash, show, generate (pacer table --help)", cmd_table},
	{"import", "har", "turn a HAR recording into a request table (JSON Lines)", cmd_import},
	{"report", "FILE", "render a saved result: Markdown, HTML, text, CSV, hgrm, hlog", cmd_report},
	{"merge", "FILES", "merge the results of the segments of one plan (--segment K/N)", cmd_merge},
	{"k8s", "FILE", "Kubernetes manifests running a scenario as N segments", cmd_k8s},
	{"history", "FILE.db", "the runs kept in a history: list, show, export, trends", cmd_history},
	{"diff", "OLD NEW", "two saved results side by side: changes beyond noise, a CI gate", cmd_diff},
};
#define N_COMMANDS (sizeof commands / sizeof commands[0])

static const struct cli_example top_examples[] = {
	{"pacer run http://127.0.0.1:8080/ -R 2k -z 30s --latency",
	 "2,000 requests/s for 30 s with the percentile spectrum"},
	{"pacer ramp http://127.0.0.1:8080/ --steps 1k,2k,4k --slo 'p99<100ms'",
	 "the highest rate that keeps p99 under 100 ms"},
	{"pacer help run", "run's options, grouped, with examples and exit codes"},
};

static const struct command *find(const char *name)
{
	for (size_t i = 0; i < N_COMMANDS; i++)
		if (strcmp(commands[i].name, name) == 0)
			return &commands[i];
	return NULL;
}

static void usage(FILE *f)
{
	struct cli_help h = {
		.name = "",
		.summary = "HTTP load generator and benchmark harness",
		.synopsis = "pacer COMMAND [options]\npacer help COMMAND\npacer -V | --version",
		.description = "Open-loop and closed-loop HTTP load, latency from each request's "
			       "scheduled time, ramps that find capacity, A/B comparisons; every "
			       "number travels with its conditions. The commands:",
		.examples = top_examples,
		.n_examples = sizeof top_examples / sizeof top_examples[0],
		.exits = cli_exits_run,
		.n_exits = sizeof cli_exits_run / sizeof cli_exits_run[0],
		.see = "docs/ (a page per command)",
	};
	const char *pages[N_COMMANDS];
	for (size_t i = 0; i < N_COMMANDS; i++)
		pages[i] = commands[i].name;
	h.pages = pages;
	h.n_pages = N_COMMANDS;
	/* the command list, the same in the text and in pacer(1) */
	char list[2048];
	size_t k = 0;
	for (size_t i = 0; i < N_COMMANDS && k < sizeof list; i++) {
		char left[32];
		snprintf(left, sizeof left, "%s %s", commands[i].name, commands[i].args);
		k += (size_t)snprintf(list + k, sizeof list - k, "  %-14s %s\n", left,
				      commands[i].summary);
	}
	if (k < sizeof list)
		snprintf(list + k, sizeof list - k,
			 "  %-14s %s\n  %-14s %s", "version", "print version and source commit (-V)",
			 "help [CMD]", "this text, or a command's help (pacer CMD --help)");
	h.verbatim = list;
	if (cli_help_format() == HELP_TEXT)
		fprintf(f, "pacer %s\n", PACER_VERSION);
	cli_help_print(f, &h, NULL, 0);
}

/* " (did you mean CMD?)" for a mistyped command name, else "". */
static const char *near_command(char *buf, size_t cap, const char *name)
{
	const char *names[N_COMMANDS + 2];
	for (size_t i = 0; i < N_COMMANDS; i++)
		names[i] = commands[i].name;
	names[N_COMMANDS] = "version";
	names[N_COMMANDS + 1] = "help";
	return opts_did_you_mean(buf, cap, name, names, N_COMMANDS + 2);
}

/* A command's --help in the current format. */
static int command_help(const struct command *c)
{
	char *argv[] = {(char *)c->name, "--help", NULL};
	fflush(stdout);
	return c->fn(2, argv);
}

/* pacer --dump-man [CMD]: the roff source of pacer(1) or pacer-CMD(1). */
static int dump_man(const char *name)
{
	cli_help_set_format(HELP_MAN);
	if (!name || !*name) {
		usage(stdout);
		return EXIT_OK;
	}
	const struct command *c = find(name);
	if (!c) {
		char dym[64];
		fprintf(stderr, "pacer --dump-man: unknown command '%s'%s\n", name,
			near_command(dym, sizeof dym, name));
		return EXIT_USAGE;
	}
	return command_help(c);
}

/* pacer --dump-completion: a bash completion script for pacer, its
 * commands, their options (from their tables), files where an option takes
 * one and the built-in plans after --self-contained=. */
static int dump_completion(void)
{
	size_t np;
	const struct target_builtin *b = target_plan_builtins(&np);
	printf("# bash completion for pacer %s, generated by pacer --dump-completion\n"
	       "# a word ending in '=' (--self-contained=) takes its value without a space\n"
	       "_pacer_words() {\n"
	       "\tCOMPREPLY=($(compgen -W \"$1\" -- \"$cur\"))\n"
	       "\tlocal w; for w in \"${COMPREPLY[@]}\"; do\n"
	       "\t\t[ \"${w%%=}\" != \"$w\" ] && compopt -o nospace 2>/dev/null\n"
	       "\tdone; return 0\n}\n"
	       "# a comma-separated list (--trend p50,p99): complete its last item\n"
	       "_pacer_list() {\n"
	       "\tlocal pre=; case $cur in *,*) pre=${cur%%,*},; cur=${cur##*,} ;; esac\n"
	       "\tCOMPREPLY=($(compgen -P \"$pre\" -W \"$1\" -- \"$cur\")); compopt -o nospace 2>/dev/null; return 0\n}\n"
	       "_pacer_files() { compopt -o filenames 2>/dev/null; COMPREPLY=($(compgen -f -- \"$cur\")); return 0; }\n"
	       "_pacer_dirs() { compopt -o filenames 2>/dev/null; COMPREPLY=($(compgen -d -- \"$cur\")); return 0; }\n"
	       "# pacer history FILE.db [show|export ID | add RESULT.json]: the positional words\n"
	       "_pacer_history() {\n"
	       "\tlocal i=2 n=0 verb=\n"
	       "\twhile [ \"$i\" -lt \"$COMP_CWORD\" ]; do\n"
	       "\t\tcase ${COMP_WORDS[i]} in\n"
	       "\t\t-h|--help) i=$((i+1)) ;;\n"
	       "\t\t-*) if [ \"${COMP_WORDS[i+1]}\" = = ]; then i=$((i+3)); else i=$((i+2)); fi ;;\n"
	       "\t\t*) n=$((n+1)); [ \"$n\" -eq 2 ] && verb=${COMP_WORDS[i]}; i=$((i+1)) ;;\n"
	       "\t\tesac\n\tdone\n"
	       "\tcase $n in\n"
	       "\t0) _pacer_files ;;\n"
	       "\t1) _pacer_words 'show export add' ;;\n"
	       "\t2) case $verb in add) _pacer_files ;; show|export) _pacer_words 'last prev' ;; *) return 1 ;; esac ;;\n"
	       "\t*) return 1 ;;\n\tesac\n}\n"
	       "_pacer()\n{\n"
	       "\tlocal cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]} opts eq=\n"
	       "\tlocal plans='",
	       PACER_VERSION);
	for (size_t i = 0; i < np; i++)
		printf("%s%s", i ? " " : "", b[i].name);
	printf("'\n"
	       "\tif [ \"$COMP_CWORD\" -eq 1 ]; then\n\t\t_pacer_words '");
	for (size_t i = 0; i < N_COMMANDS; i++)
		printf("%s ", commands[i].name);
	printf("version help -V --version --help'\n\t\treturn\n\tfi\n"
	       "\t# --opt=VALUE: bash splits at '=': the option is the word before it\n"
	       "\tif [ \"$cur\" = = ]; then\n\t\tcur=; eq=1\n"
	       "\telif [ \"$prev\" = = ]; then\n\t\tprev=${COMP_WORDS[COMP_CWORD-2]}; eq=1\n\tfi\n"
	       "\tcase ${COMP_WORDS[1]} in\n"
	       "\thelp)\n\t\t_pacer_words '");
	for (size_t i = 0; i < N_COMMANDS; i++)
		printf("%s ", commands[i].name);
	printf("'; return ;;\n"
	       "\ttable)\n\t\t[ \"$COMP_CWORD\" -eq 2 ] && { _pacer_words 'hash show generate'; return; }\n"
	       "\t\t_pacer_files; return ;;\n"
	       "\timport)\n\t\t[ \"$COMP_CWORD\" -eq 2 ] && { _pacer_words har; return; }\n"
	       "\t\t_pacer_files; return ;;\n");
	cli_help_set_format(HELP_BASH);
	for (size_t i = 0; i < N_COMMANDS; i++) {
		if (!strcmp(commands[i].name, "table") || !strcmp(commands[i].name, "import"))
			continue; /* subcommands first: above */
		printf("\t%s)\n", commands[i].name);
		fflush(stdout);
		command_help(&commands[i]);
		fflush(stdout);
		if (!strcmp(commands[i].name, "history"))
			printf("\t\tcase $cur in -*) ;; *) _pacer_history && return ;; esac\n");
		printf("\t\t;;\n");
	}
	printf("\t*)\n\t\t_pacer_files; return ;;\n"
	       "\tesac\n"
	       "\tcase $cur in\n\t-*) _pacer_words \"$opts\" ;;\n\t*) _pacer_files ;;\n\tesac\n"
	       "}\ncomplete -F _pacer pacer\n");
	return EXIT_OK;
}

int main(int argc, char **argv)
{
	cli_signals_init();
	if (argc < 2) {
		usage(stderr);
		return EXIT_USAGE;
	}
	const char *cmd = argv[1];
	const struct command *c = find(cmd);
	if (c)
		return c->fn(argc - 1, argv + 1);
	if (strcmp(cmd, "version") == 0 || strcmp(cmd, "--version") == 0 || strcmp(cmd, "-V") == 0) {
		printf("pacer %s (commit %s)\n", PACER_VERSION, PACER_COMMIT);
		return EXIT_OK;
	}
	if (strcmp(cmd, "help") == 0 || strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0) {
		if (argc > 2) {
			c = find(argv[2]);
			if (!c) {
				char dym[64];
				fprintf(stderr,
					"pacer help: unknown command '%s'%s (see pacer help)\n",
					argv[2], near_command(dym, sizeof dym, argv[2]));
				return EXIT_USAGE;
			}
			return command_help(c);
		}
		usage(stdout);
		return EXIT_OK;
	}
	if (strcmp(cmd, "--dump-man") == 0)
		return dump_man(argc > 2 ? argv[2] : NULL);
	if (strcmp(cmd, "--dump-completion") == 0)
		return dump_completion();
	char dym[64];
	fprintf(stderr, "pacer: unknown command '%s'%s (see pacer help)\n", cmd,
		near_command(dym, sizeof dym, cmd));
	return EXIT_USAGE;
}
