/* pacer — what the commands hand the runner (runner/runner.h): waiting with
 * Ctrl-C and the live view, the embedded target's CPU and the target
 * probes of each variant's set-up. CLI layer. */
#ifndef PACER_CLI_RUN_HOOKS_H
#define PACER_CLI_RUN_HOOKS_H

#include <stdbool.h>
#include <stdio.h>

#include "measure/measure.h"
#include "cli/live_view.h"
#include "cli/signals.h"
#include "metrics/server.h"
#include "runner/runner.h"

struct cli_hooks {
	struct measure *setup[RUNNER_MAX_VARIANTS]; /* per variant (borrowed) */
	bool progress;                              /* show the live view (on stderr) */
	FILE *text; /* rows and summary: stdout, or stderr when the JSON result
		     * goes to stdout (NULL: stdout) */
	void *arg;                                    /* the command's own, for its row hooks */
	struct metrics_server *metrics;               /* --metrics-listen (cli_metrics_start), or NULL */
	struct cli_live *live; /* the live view during cli_measure, or NULL */
};

/* A runner_hooks with wait, target_cpu_ns and measured filled from c (its
 * arg is c); the command adds its row hooks. */
struct runner_hooks cli_hooks(struct cli_hooks *c);

/* Whether to show the live view (cli/live_view.h; on stderr, when it is a
 * terminal): not --quiet. */
bool cli_progress_wanted(bool quiet);

/* A failed step of a measurement (MEASURE_E*): its line once on stderr,
 * "pacer CMD: ...", and the exit status it means. */
int cli_measure_fail(const struct measure *m, int rc);
/* The notices m's steps left (the run goes on), each once on stderr. */
void cli_measure_notes(struct measure *m);
/* measure_prepare, its notices and failure said, and with dist (run and
 * ramp; else NULL) its --barrier between measure_build and measure_ready:
 * 0 when the variant is ready, else the exit status. */
struct cli_dist;
int cli_prepare(struct measure *m, struct run_plan *plan, struct cli_dist *dist);
/* Run spec (measure_run) with SIGINT and SIGTERM turned into an interrupt
 * (through ch's wait hook) and --metrics-listen's endpoint up meanwhile
 * (said on stderr unless quiet); then cli_outputs_guard, so that a signal
 * after the load cannot end pacer before its results are written. 0, or
 * the exit status after one line. */
int cli_measure(struct cli_hooks *ch, const struct measure_spec *spec,
		const struct runner_hooks *hooks, struct runner_result *out, bool quiet);
/* The exit code of a finished measurement: `base` (EXIT_OK, or
 * EXIT_SLO_FAILED) becomes EXIT_GENERATOR_LIMITED when `limited` and not
 * --limited-ok. */
int cli_exit_code(const struct measure *s, int base, bool limited);

/* -s: after a measurement, a hook that failed during the load (one line on
 * stderr, EXIT_USAGE), else the script's done() with run r's figures
 * (label: a step's or variant's name, or NULL; r NULL: only the failure
 * is checked). 0 when there is no script,
 * or done() ran (or there is none); EXIT_USAGE after one line when it
 * failed. */
int cli_script_end(struct measure *m, const struct run_result *r, const char *label);
/* Close the history the options opened for s, then release s. */
void cli_release(struct measure *s);

#endif
