/* pacer — a command's help, from the one option table: the terminal text
 * of --help (options grouped, wrapped to the terminal), the man page
 * pacer-CMD(1) and the bash completion's words are three renderings
 * of the same struct cli_help and struct opt table, so they cannot drift.
 * CLI layer: writes to the FILE it is given. */
#ifndef PACER_CLI_HELP_H
#define PACER_CLI_HELP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "cli/opts.h"

enum help_format {
	HELP_TEXT,  /* --help on a terminal or a pipe */
	HELP_MAN,   /* roff for man(7): pacer --dump-man CMD */
	HELP_BASH,  /* the body of a case arm of the bash completion: pacer --dump-completion */
};

struct cli_example {
	const char *cmd;  /* the command line */
	const char *what; /* what it does */
};

struct cli_exit {
	int code;
	const char *meaning;
};

struct cli_help {
	const char *name;        /* "run"; "" for pacer itself */
	const char *summary;     /* one line, for NAME and the command list */
	const char *synopsis;    /* usage lines without "usage: ", '\n' between */
	const char *description; /* paragraphs, '\n' between */
	const struct cli_example *examples;
	size_t n_examples;
	const struct cli_exit *exits;
	size_t n_exits;
	const char *verbatim;    /* a list shown as it is: the commands (of pacer, of pacer
	                          * table); the man page's COMMANDS */
	const char *see;         /* "docs/run.md" */
	const char *const *pages; /* pacer(1)'s SEE ALSO: the commands with a page
	                           * pacer-NAME(1) */
	size_t n_pages;
	bool grouped;            /* options under cli_help_group's headings (the measuring
	                          * commands), else one "Options" list */
};

/* The exit codes of the measuring commands, shared by their help. */
extern const struct cli_exit cli_exits_run[5];
extern const struct cli_exit cli_exits_ramp[6];
extern const struct cli_exit cli_exits_plain[3]; /* 0, 2, 3: the other commands */

/* How the next cli_help_print renders (a process-wide setting of the
 * generator commands; HELP_TEXT unless set). */
void cli_help_set_format(enum help_format f);
enum help_format cli_help_format(void);

/* Columns to wrap help at: $COLUMNS when it is a number from 40 to 500,
 * else the terminal's width when fd is a terminal, else 80. */
int cli_help_width(int fd);

/* Render h with its options tab (NULL, 0: none) to f in the current format.
 * (opts_help renders a table alone, as one "Options" list.) */
void cli_help_print(FILE *f, const struct cli_help *h, const struct opt *tab, size_t n);

/* The "Exit codes:" table of the terminal help (part of cli_help_print;
 * alone for the help of a table's subcommands). */
void cli_help_exits(FILE *f, const struct cli_exit *exits, size_t n);

/* The group an option is listed under in help and man pages ("Load",
 * "Requests", "Transport", "Response rules", "Probes and generator check",
 * "Output", "Variants"; "Options" for one no group names). */
const char *cli_help_group(const char *long_name);

/* Write s to f as roff text: backslashes, hyphens and a leading '.' or '\''
 * escaped. */
void cli_help_roff(FILE *f, const char *s);

#endif
