/* pacer — what run, ramp and later commands share between parsing options
 * and starting the engine: the requests to send (encoded once), where to
 * send them, and in self-contained mode the embedded target itself.
 * CLI layer: prints one error line itself and returns an exit code. */
#ifndef PACER_CLI_SETUP_H
#define PACER_CLI_SETUP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "engine/engine.h"
#include "plan/plan.h"

struct target;
struct target_plan;
struct table;
struct table_wire;

struct cli_setup {
	/* inputs (set by the caller before cli_setup_prepare) */
	const char *cmd;            /* "run", "ramp": for error messages */
	const char *url_arg;        /* the URL (or, self-contained, an optional path) */
	const char *body_arg;       /* --body DATA|@FILE */
	const char *self_contained; /* NULL, or the plan name/file (default "hello") */
	unsigned target_threads;    /* self-contained: server threads */
	const char *requests_file;  /* --requests-file: a request table */
	const char *requests_format;/* --requests-format auto|targets|jsonl */
	const char *bodies_dir;     /* --bodies DIR: one request per file, to url_arg */
	const char *max_body;       /* --max-body SIZE */

	/* outputs */
	struct net_addr addr;
	struct engine_req *reqs;    /* owned */
	size_t n_reqs;
	struct target *srv;         /* self-contained only */
	struct target_plan *tplan;
	char url_buf[512];          /* self-contained: the URL driven */
	char *body_buf;
	char **bufs;                /* encoded requests, owned */
	struct table *table;        /* --requests-file / --bodies */
	struct table_wire *wire;    /* the table's encoded requests */
	char table_sha256[65];
};

/* Fill plan->url/body/url_str and s's outputs: parse the URL (or start the
 * embedded target), read the body, encode the requests, resolve the name,
 * and check that the target accepts a connection. Returns 0, or an exit
 * code after printing one line naming the problem. */
int cli_setup_prepare(struct cli_setup *s, struct run_plan *plan);

/* The session configuration for the engine from a validated plan. */
void cli_setup_engine_cfg(const struct cli_setup *s, const struct run_plan *plan,
			  struct engine_cfg *cfg);

/* Stop the embedded target (if any) and free everything. */
void cli_setup_release(struct cli_setup *s);

/* CPU time the embedded target's threads used so far, in ns (0 if none). */
uint64_t cli_setup_target_cpu_ns(const struct cli_setup *s);

struct opt;

/* Parse a subcommand's options and at most one positional argument (the URL
 * or self-contained path) into *url. Returns -1 to go on, or the exit code
 * to return: 0 after printing usage for --help, EXIT_USAGE after printing
 * one error line. */
int cli_parse_args(const char *cmd, struct opt *tab, size_t n, int argc, char **argv,
		   void (*usage)(FILE *, struct opt *, size_t), const char **url);

/* "constant" / "poisson" (NULL: leave the default) into plan->arrival. 0, or
 * EXIT_USAGE after printing one error line. */
int cli_parse_arrival(const char *cmd, const char *arrival, struct run_plan *plan);

/* --order sequential|random (NULL: sequential). 0 or EXIT_USAGE after one line. */
int cli_parse_order(const char *cmd, const char *order, struct run_plan *plan);

struct ramp_plan;
struct ramp_result;
/* Run a ramp's steps (and --refine) on an open engine session, appending to
 * res and printing a row per step unless rp->run.quiet. 0, or an exit code
 * after printing one line. Does not summarize. */
int ramp_execute(struct engine *e, struct cli_setup *setup, const struct ramp_plan *rp,
		 struct ramp_result *res, bool *interrupted);

/* Wait for the engine's current step, turning SIGINT/SIGTERM (blocked by
 * the caller) into engine_interrupt, and drawing a progress line each second
 * when `progress`. Returns true when interrupted. */
bool cli_wait_engine(struct engine *e, bool progress);

#endif
