/* pacer — command-line option tables: one sorted table per subcommand with
 * typed parsers and the defaults shown in --help. Errors are one line naming
 * the option and the value. */
#ifndef PACER_CLI_OPTS_H
#define PACER_CLI_OPTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "util/strlist.h"

enum opt_type {
	OPT_FLAG,     /* bool */
	OPT_STR,      /* const char * (points into argv) */
	OPT_OPTSTR,   /* const char *: value only as --name=VALUE; "" when given bare */
	OPT_STRLIST,  /* repeatable: appended to a struct strlist */
	OPT_RATE,     /* double, per second, k/M suffixes */
	OPT_DURATION, /* uint64_t ns */
	OPT_COUNT,    /* uint64_t, k/M suffixes */
	OPT_U32,      /* uint32_t count */
	OPT_U64,      /* uint64_t, exact decimal digits (e.g. a seed) */
	OPT_HELP,     /* prints help */
};


struct opt {
	char short_name;        /* 0: none */
	const char *long_name;
	enum opt_type type;
	void *dst;
	const char *metavar;
	const char *def;        /* default shown in --help, or NULL */
	const char *help;
	bool given;             /* set by opts_parse */
};

/* Parse argv[1..] (argv[0] is the subcommand) with getopt_long: short
 * flags bundle (-qt4), a long option may be shortened to any unambiguous
 * prefix (--dur 5s), options and positionals mix, and the aliases of
 * opts_aliases() are accepted. argv itself is not reordered. Positional
 * arguments are collected into pos (up to pos_cap). "--" ends options. On
 * error, writes a one-line message to err and returns -1; returns 1 if
 * --help was asked for (the caller prints usage), 0 on success. Not
 * reentrant (getopt's globals). */
int opts_parse(struct opt *tab, size_t n, int argc, char **argv, const char **pos, size_t pos_cap,
	       size_t *npos, char *err, size_t errcap);
/* The positional arguments of a subcommand, for opts_parse_cmd: between
 * min and max of them, into v, which has room for max + 1 (the one over
 * max is how a count above it is seen); n gets their count. what names
 * them in the message for a wrong count ("one URL", "OLD and NEW"). */
struct opts_positionals {
	const char *what;
	size_t min, max;
	const char **v; /* [max + 1], pointers into argv */
	size_t n;
};

/* opts_parse for subcommand cmd with the usual handling: --help prints
 * usage(stdout, tab, n); a bad option, or a count of positionals outside
 * p->min..p->max, prints one line "pacer CMD: ..." on stderr. Returns -1 to
 * go on (p->v[0 .. p->n) filled), or the exit code to return: EXIT_OK
 * after --help, EXIT_USAGE after the error line. */
int opts_parse_cmd(const char *cmd, struct opt *tab, size_t n, int argc, char **argv,
		   void (*usage)(FILE *, struct opt *, size_t), struct opts_positionals *p);

/* A peer tool's short letter for one of pacer's options (wrk2's -R for
 * --rate). Static data. */
struct opts_alias {
	char short_name;
	const char *long_name; /* the option it stands for */
	const char *peers;     /* whose habit it is, for the help */
};

/* The alias table; *n gets its length. */
const struct opts_alias *opts_aliases(size_t *n);

/* The alias letter tab accepts for o (0: none, or the table uses the
 * letter for another option). */
char opts_alias_of(const struct opt *tab, size_t n, const struct opt *o);

/* Was the option with this long name given? */
bool opts_given(const struct opt *tab, size_t n, const char *long_name);
/* Print the option table (cli/help.c) under "Options:", by name, wrapped
 * to the terminal, in the format of cli_help_format() (cli_help_print
 * groups a measuring command's options). */
void opts_help(FILE *f, const struct opt *tab, size_t n);
/* Standard input ("-") as an input of this process: the first taker gets
 * it; a later one is refused with one line on stderr, "pacer CMD: WHAT:
 * standard input is already FIRST's (only one input can be -)". what names
 * the input ("RESULT -", "--body @-"). true when taken. */
bool opts_stdin_take(const char *cmd, const char *what);

/* " (did you mean WORD?)" for the one of cands[0..n) closest to word when it
 * is close enough to be a slip (util/text.h: text_near), else "": into
 * buf[cap], returned. */
const char *opts_did_you_mean(char *buf, size_t cap, const char *word, const char *const *cands,
			      size_t n);

#endif
