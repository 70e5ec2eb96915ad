/* pacer — SIGINT and SIGTERM around a measurement (CLI layer): blocked
 * while it runs (cli/run_hooks.c turns them into an interrupt), caught
 * while its results are written, and a test hook that raises one at a
 * chosen point. */
#ifndef PACER_CLI_SIGNALS_H
#define PACER_CLI_SIGNALS_H

#include <signal.h>

/* From the start of pacer: SIGINT and SIGTERM end it as by default, after
 * removing the temporary files of the writes under way (util/afile.h:
 * their targets stay as they were) with a line on stderr when there were
 * any. A signal ignored when pacer started stays ignored, here and in
 * cli_outputs_guard. */
void cli_signals_init(void);

/* Block SIGINT and SIGTERM (the wait hook turns them into an interrupt of
 * the measurement) and ignore SIGPIPE, keeping the old mask in *old;
 * cli_signals_restore puts it back. */
void cli_signals_block(sigset_t *old);
void cli_signals_restore(const sigset_t *old);

/* Count a SIGINT or SIGTERM taken as an interrupt of the measurement (a
 * first Ctrl-C: the next may end pacer while it writes; cli_outputs_guard). */
void cli_signal_taken(void);

/* After the load, while the results (the JSON, the report folder, the
 * history row, --hgrm, the hand-in and the merged result) are written,
 * until pacer ends: SIGINT and SIGTERM caught, not fatal. The first of
 * the run (one that interrupted the measurement counts) is said on stderr
 * and the writing goes on: every output is written and the exit code is
 * the one the run earned. The next says so, removes the temporary files
 * of the writes under way (and a report folder not yet renamed into
 * place) and ends pacer by that signal: what was written stays, what was
 * not is left as it was, never half-written (a FIFO or stdout written in
 * place excepted). Then the signal mask `old` (cli_signals_block's) is
 * put back, so a signal that came while they were blocked is handled so
 * too. */
void cli_outputs_guard(const sigset_t *old);

/* A test hook: raise SIGINT here once for each time `point` is named in
 * $PACER_TEST_SIGNAL_AT (comma-separated: "measured", after the load with
 * the signals still blocked; "out-open", the temporary file of the result
 * (--out, or the merged result) open; "report-file", the first file of the
 * report folder written into its temporary folder; "history", before the
 * history row),
 * as a Ctrl-C at that moment would come. */
void cli_test_signal(const char *point);

#endif
