/* pacer — the run history's internals, shared by its two files:
 * history_check.c (the schema pacer makes, SQLite's failures as codes and
 * messages, and the checks of a file pacer does not trust) below
 * history.c (opening, migrating, storing, listing). */
#ifndef PACER_HISTORY_HISTORY_INT_H
#define PACER_HISTORY_HISTORY_INT_H

#include <sqlite3.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "history/history.h"

struct history_db {
	sqlite3 *db;
	char *path;
	unsigned version;
};

/* Migration i brings a database from schema version i to i + 1 (SQL run
 * in one transaction with the user_version bump). */
extern const char *const history_migrations[HISTORY_SCHEMA_VERSION];

/* The SQLite failure src of what (a phrase: "reading", "storing the
 * result") as a code with a one-line message naming h's file: -EBUSY
 * (locked), PACER_EPARSE (not a database: "not a pacer history"; damaged),
 * -EACCES (read-only), PACER_ETOOBIG, -ENOMEM, -EIO (else). */
int history_sql_fail(struct history_db *h, int src, const char *what, char *err, size_t errlen);

/* path and the files SQLite keeps beside it (FILE-wal, FILE-shm,
 * FILE-journal) are regular files, checked before SQLite opens anything
 * (SQLite blocks opening a FIFO). A missing path is -ENOENT when read_only,
 * else fine (it is created). 0, -ENOENT, -EISDIR, -EINVAL (a FIFO, device
 * or socket) or another negative errno, with err. */
int history_check_files(const char *path, bool read_only, char *err, size_t errlen);

/* h's schema is exactly the one history_migrations make up to version
 * (type, name and SQL text of every object), but ANALYZE's statistics
 * tables. 0, or PACER_EPARSE with err naming the first object made outside
 * pacer or the first of pacer's that is missing. */
int history_check_schema(struct history_db *h, unsigned version, char *err, size_t errlen);

/* PRAGMA quick_check finds nothing (it reads every page). 0, or
 * PACER_EPARSE ("damaged") with the first problem in err. */
int history_check_pages(struct history_db *h, char *err, size_t errlen);

/* h's connection can write (not read-only by the file's permissions or a
 * read-only mount). 0, or -EACCES with err. */
int history_check_writable(struct history_db *h, char *err, size_t errlen);

/* The write lock can be taken now, or is held by another writer (an
 * insert waits for it); h's busy timeout is busy_ms again after. 0, or a
 * code of history_sql_fail. */
int history_check_lock(struct history_db *h, unsigned busy_ms, char *err, size_t errlen);

/* Inside the insert's transaction: one row was inserted, and row rid holds
 * exactly json (len bytes) recorded at when. 0, or PACER_EPARSE (or a code
 * of history_sql_fail) with err. */
int history_read_back(struct history_db *h, int64_t rid, const char *when, const char *json,
		      size_t len, char *err, size_t errlen);

#endif
