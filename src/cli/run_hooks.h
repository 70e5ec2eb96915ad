/* pacer — what the commands hand the runner (runner/runner.h): waiting with
 * Ctrl-C and the progress line, the embedded target's CPU and the target
 * probes of each variant's set-up. CLI layer. */
#ifndef PACER_CLI_RUN_HOOKS_H
#define PACER_CLI_RUN_HOOKS_H

#include <signal.h>
#include <stdbool.h>

#include "cli/setup.h"
#include "runner/runner.h"

struct cli_hooks {
	struct cli_setup *setup[RUNNER_MAX_VARIANTS]; /* per variant (borrowed) */
	bool progress;                                /* draw the progress line */
	void *arg;                                    /* the command's own, for its row hooks */
};

/* A runner_hooks with wait, target_cpu_ns and measured filled from c (its
 * arg is c); the command adds its row hooks. */
struct runner_hooks cli_hooks(struct cli_hooks *c);

/* Wait for the engine's current step, turning SIGINT/SIGTERM (blocked by
 * the caller) into engine_interrupt, and drawing a progress line each second
 * when `progress`. Returns true when interrupted. */
bool cli_wait_engine(struct engine *e, bool progress);

/* Block SIGINT and SIGTERM (the wait hook turns them into an interrupt of
 * the measurement) and ignore SIGPIPE, keeping the old mask in *old;
 * cli_signals_restore puts it back. */
void cli_signals_block(sigset_t *old);
void cli_signals_restore(const sigset_t *old);

#endif
