/* pacer — what the commands hand the runner (runner/runner.h): waiting with
 * Ctrl-C and the progress line, the embedded target's CPU and the target
 * probes of each variant's set-up. CLI layer. */
#ifndef PACER_CLI_RUN_HOOKS_H
#define PACER_CLI_RUN_HOOKS_H

#include <signal.h>
#include <stdbool.h>
#include <stdio.h>

#include "cli/setup.h"
#include "metrics/server.h"
#include "runner/runner.h"

struct cli_hooks {
	struct cli_setup *setup[RUNNER_MAX_VARIANTS]; /* per variant (borrowed) */
	bool progress;                                /* draw the progress line */
	FILE *text; /* rows, summary and progress line: stdout, or stderr when the
		     * JSON result goes to stdout (NULL: stdout) */
	void *arg;                                    /* the command's own, for its row hooks */
	struct metrics_server *metrics;               /* --metrics-listen (cli_metrics_start), or NULL */
};

/* A runner_hooks with wait, target_cpu_ns and measured filled from c (its
 * arg is c); the command adds its row hooks. */
struct runner_hooks cli_hooks(struct cli_hooks *c);

/* Wait for the engine's current step, turning SIGINT/SIGTERM (blocked by
 * the caller) into engine_interrupt, and drawing each second a progress
 * line on `progress` (NULL: none): the phase (warm-up, measure, drain), the
 * live completion rate (warm-up included), p99 of the last full measured
 * second, the backlog, the errors and, within a ramp (at->in_ramp), the
 * step and its offered rate. at may be NULL. Returns true when
 * interrupted. */
bool cli_wait_engine(struct engine *e, FILE *progress, const struct runner_at *at);

/* Whether to draw the progress line on text: not --quiet, text a terminal,
 * and TERM not "dumb". */
bool cli_progress_wanted(FILE *text, bool quiet);

/* --metrics-listen of s (nothing to do without it): start the endpoint for
 * the plan's variants, into c->metrics, and say where on stderr unless
 * quiet. Call after the set-up, before the load. 0, or EXIT_RUNTIME after
 * one line naming the option and the problem (the address is in use, ...). */
int cli_metrics_start(struct cli_hooks *c, const struct cli_setup *s, const struct runner_plan *rp,
		      bool quiet);
/* Stop c->metrics (NULL is fine) and clear it. */
void cli_metrics_stop(struct cli_hooks *c);

/* Block SIGINT and SIGTERM (the wait hook turns them into an interrupt of
 * the measurement) and ignore SIGPIPE, keeping the old mask in *old;
 * cli_signals_restore puts it back. */
void cli_signals_block(sigset_t *old);
void cli_signals_restore(const sigset_t *old);

#endif
