/* pacer — run history: every finished result kept in one SQLite file
 * (docs/history.md).
 *
 * The store is I/O, so it lives outside the pure layers: the CLI opens it,
 * hands it the bytes of a result JSON after the result is written, and reads
 * results back for `pacer history`, `pacer diff` and `pacer report`.
 *
 * The database carries PRAGMA application_id HISTORY_APP_ID (so a foreign
 * SQLite file is refused, never altered) and PRAGMA user_version (the schema
 * version; older schemas are migrated forward on open, each migration in its
 * own transaction). It runs in WAL mode with synchronous=FULL and a busy
 * timeout; every result is one INSERT in one transaction, so a crash or
 * kill -9 never leaves a half row and two processes writing at once both
 * land (one waits for the other up to the timeout).
 *
 * The file is input, never trusted: it must be a regular file (so must
 * FILE-wal, FILE-shm and FILE-journal when present), its schema exactly
 * the one pacer's migrations made (no trigger, view, other table or index,
 * no changed table; ANALYZE's statistics are fine), and it is read with
 * SQLite's defensive mode on, triggers and views off and no value over
 * RESULT_READ_CAP bytes. An insert reads its row back before it commits.
 *
 * Errors: 0, or a negative code with a one-line message naming the file in
 * err: PACER_EPARSE (not a database, a damaged one, a foreign one, or a
 * schema made outside pacer), PACER_EUNSUPPORTED (a schema version newer
 * than this build's), -EINVAL (a FIFO, device or socket), -EISDIR, -EACCES
 * (read-only: cannot record), -EBUSY (locked past the timeout), -ENOENT (no
 * such file for a reader, no such id), PACER_ETOOBIG (a stored value over
 * the cap), -ENOMEM, -EIO (any other SQLite failure; its message is in
 * err). Not thread-safe per handle. */
#ifndef PACER_HISTORY_HISTORY_H
#define PACER_HISTORY_HISTORY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "history/headline.h"

#define HISTORY_APP_ID 0x70616372 /* "pacr" */
#define HISTORY_SCHEMA_VERSION 4  /* the schema this build writes */
#define HISTORY_BUSY_MS 5000      /* default wait for a lock held by another process */

struct history_db;

struct history_open_opts {
	unsigned busy_ms;        /* 0: HISTORY_BUSY_MS */
	unsigned schema_version; /* 0: HISTORY_SCHEMA_VERSION; tests build older ones */
	bool read_only;          /* never create or migrate (history, diff, report) */
};

/* Open (creating when missing, unless read_only) the history at path and
 * bring its schema to opts->schema_version (NULL opts: defaults). *out owns
 * the connection: close it with history_close. On error *out is NULL. A
 * read-only open of a missing file is -ENOENT; of an older schema,
 * PACER_EUNSUPPORTED (a write with this pacer migrates it). An open for
 * writing also checks, so that a caller learns it before a load, that the
 * file is writable (-EACCES), that its pages hold together (PRAGMA
 * quick_check: PACER_EPARSE, "damaged"; it reads the whole file) and that
 * the write lock can be taken (another writer holding it is fine). */
int history_open(struct history_db **out, const char *path, const struct history_open_opts *opts,
		 char *err, size_t errlen);
/* Close; NULL is a no-op. */
void history_close(struct history_db *db);
/* The schema version of the open database. */
unsigned history_schema_version(const struct history_db *db);

/* What the caller knows about a result that the result does not say. */
struct history_meta {
	const char *command;    /* "run", "ramp", "compare", "bench" */
	const char *git_commit; /* of the working directory (the code under test), or NULL */
	int64_t recorded_ms;    /* wall clock, ms since the epoch */
};

/* Store the len bytes of a result JSON (checked with result_read_mem; the
 * headline figures are taken from it) as one row in one transaction, read
 * back before the commit. *id (may be NULL) gets the new row's id.
 * PACER_EPARSE / PACER_EUNSUPPORTED for a result that is not one,
 * PACER_EPARSE when the row does not read back as written (nothing is
 * stored), else the codes above. */
int history_add(struct history_db *db, const struct history_meta *m, const char *json, size_t len,
		int64_t *id, char *err, size_t errlen);

/* One stored row without its JSON; strings are owned by the row and live
 * until the callback returns. */
struct history_row {
	int64_t id;
	const char *recorded_at; /* ISO 8601 UTC */
	const char *command, *git_commit;
	struct history_headline h;
};

struct history_filter {
	const char *target;     /* exact; NULL: any */
	const char *scenario;   /* exact; NULL: any */
	const char *table_hash; /* a prefix of the workload hash (schema 4) or of the
				 * request table's hash; NULL: any */
	const char *since;      /* recorded_at >= since (ISO date or time); NULL: any */
	const char *until;      /* recorded_at < until; NULL: any */
	const char *kind;       /* "run", "ramp", "compare"; NULL: any */
	int64_t min_id;         /* id >= min_id; 0: any */
	unsigned limit;         /* 0: all */
	bool oldest_first;      /* default: newest first */
};

/* Call cb for each row matching f (NULL: all), newest first: in the order
 * the rows were stored (by id; two writers' recorded_at may cross, as each
 * takes its time before waiting for the other's lock). A non-zero return
 * from cb stops and is returned. */
int history_list(struct history_db *db, const struct history_filter *f,
		 int (*cb)(void *arg, const struct history_row *row), void *arg, char *err,
		 size_t errlen);

/* The stored result JSON of row id into *json (malloc'd, NUL-terminated,
 * the caller frees) and *len. -ENOENT with "no run ID in FILE" when there
 * is none. */
int history_get(struct history_db *db, int64_t id, char **json, size_t *len, char *err,
		size_t errlen);

/* The id of the newest row (0 when empty) matching f. */
int history_last_id(struct history_db *db, const struct history_filter *f, int64_t *id, char *err,
		    size_t errlen);

#endif
