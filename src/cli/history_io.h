/* pacer — --history on run, ramp, compare and bench: the CLI's side of the
 * run history (src/history). The runner returns the result and the report
 * writers render it; this file opens the store before the load and hands
 * it the rendered JSON after the result is written. */
#ifndef PACER_CLI_HISTORY_IO_H
#define PACER_CLI_HISTORY_IO_H

#include <stdio.h>

#include "measure/measure.h"
#include "history/history.h"
#include "doc/read.h"

/* --history FILE.db, else a non-empty PACER_HISTORY: open it into
 * s->history_db (created and migrated; released by measure_release), so
 * whatever would keep the result from being stored fails before the load:
 * a FIFO or device, a read-only, damaged (its pages checked), foreign,
 * newer or locked database, or one with schema objects made outside pacer
 * (history_open). Nothing given: 0 and no handle. 0, or EXIT_USAGE after
 * printing one line naming the file and the problem. */
int cli_history_prepare(struct measure *s);

/* After the result is written: render it with write(f, arg) (a result JSON
 * writer: report_json, ramp_json, compare_json) into memory and store it
 * in s->history_db with the command's name and the git commit of the
 * working directory. No history: 0. Prints "history: FILE.db run ID" on
 * stderr unless quiet. 0, or after printing one line (the result files
 * already written stay, nothing stored is lost) EXIT_USAGE when the
 * database stayed locked past the timeout or went bad, else EXIT_RUNTIME. */
int cli_history_record(const struct measure *s, bool quiet,
		       int (*write)(FILE *f, const void *arg), const void *arg);

/* A saved result named by src: a result file, or FILE.db:ID (a run of a
 * history; FILE.db:last is its newest run, FILE.db:prev the one before).
 * A path that exists is always a file. Into *r (release with result_free;
 * r->name is src). 0, or a code of cli_result_load or history_open /
 * history_get (-ENOENT for a missing id, -EBUSY, PACER_EPARSE,
 * PACER_EUNSUPPORTED) with a one-line message naming src in err. */
int cli_result_load_src(struct loaded_result *r, const char *src, char *err, size_t errlen);

/* A run of an open history named by run (a positive id, "last" or
 * "prev"; db names the file in messages) into *id. -ENOENT with a message
 * when it is malformed or the history has no such newest/previous run (an
 * id is checked by history_get). */
int cli_history_resolve(struct history_db *h, const char *db, const char *run, int64_t *id,
			char *err, size_t errlen);

/* Whether src has the FILE.db:ID shape and names no existing file. */
bool cli_src_is_history(const char *src);

#endif
