/* pacer — what a run history file must be (history/history_int.h): the
 * schema pacer's migrations make, SQLite's failures as pacer's codes and
 * one-line messages, and the checks of a file pacer does not trust (a
 * regular file, pacer's schema and nothing else, sound pages, writable,
 * a row that reads back as written). */
#include "history/history_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "doc/read.h"
#include "util/err.h"
#include "util/text.h"

/* Migration i brings a database from schema version i to i + 1; each runs
 * in its own transaction with the user_version bump. Never edit one that
 * has shipped: add the next. */
const char *const history_migrations[HISTORY_SCHEMA_VERSION] = {
	/* 0 → 1: the runs table, headline figures as columns, the result whole */
	"CREATE TABLE runs ("
	" id INTEGER PRIMARY KEY,"
	" recorded_at TEXT NOT NULL," /* when it was stored, ISO 8601 UTC */
	" started_at TEXT,"           /* when the run started (the result's) */
	" command TEXT NOT NULL,"     /* run, ramp, compare, bench */
	" kind TEXT NOT NULL,"        /* the result's kind */
	" pacer_version TEXT, pacer_commit TEXT,"
	" git_commit TEXT," /* of the working directory: the code under test */
	" target TEXT, scenario TEXT, table_hash TEXT,"
	" hostname TEXT, cpu_model TEXT, cores REAL, kernel TEXT, arch TEXT,"
	" achieved_per_s REAL, p50_us REAL, p90_us REAL, p99_us REAL, p99_9_us REAL,"
	" errors_pct REAL, capacity_per_s REAL, cpu_ms_per_request REAL,"
	" usd_per_million REAL,"
	" interrupted INTEGER NOT NULL DEFAULT 0,"
	" report_id TEXT,"
	" result_json TEXT NOT NULL);",
	/* 1 → 2: the lookups `pacer history` filters by */
	"CREATE INDEX runs_target ON runs(target, recorded_at);"
	"CREATE INDEX runs_table_hash ON runs(table_hash, recorded_at);"
	"CREATE INDEX runs_scenario ON runs(scenario, recorded_at);",
	/* 2 → 3: a session run's figures (pacer.session; NULL without
	 * sessions), its steps in a table of their own, and the runs stored
	 * before filled in from their results (a run's measured phase) */
	"ALTER TABLE runs ADD COLUMN sessions_started INTEGER;"
	"ALTER TABLE runs ADD COLUMN sessions_completed INTEGER;"
	"ALTER TABLE runs ADD COLUMN sessions_failed INTEGER;"
	"ALTER TABLE runs ADD COLUMN sessions_abandoned INTEGER;"
	"ALTER TABLE runs ADD COLUMN sessions_completed_pct REAL;"
	"ALTER TABLE runs ADD COLUMN session_p50_us REAL;"
	"ALTER TABLE runs ADD COLUMN session_p99_us REAL;"
	"CREATE TABLE steps ("
	" run_id INTEGER NOT NULL," /* runs.id */
	" seq INTEGER NOT NULL,"    /* the step's place in the result's by_name */
	" name TEXT NOT NULL,"
	" completed INTEGER, errors INTEGER, p50_us REAL, p99_us REAL);"
	"CREATE INDEX steps_run ON steps(run_id, seq);"
	"UPDATE runs SET"
	" sessions_started = json_extract(result_json, '$.measure.sessions.started'),"
	" sessions_completed = json_extract(result_json, '$.measure.sessions.completed'),"
	" sessions_failed = json_extract(result_json, '$.measure.sessions.failed'),"
	" sessions_abandoned = json_extract(result_json, '$.measure.sessions.abandoned'),"
	" sessions_completed_pct = json_extract(result_json, '$.measure.sessions.completed_pct'),"
	" session_p50_us = json_extract(result_json, '$.measure.sessions.duration.p50_us'),"
	" session_p99_us = json_extract(result_json, '$.measure.sessions.duration.p99_us')"
	/* CASE: a file pacer does not trust may hold anything in result_json,
	 * and a JSON function fails the statement on what is not JSON */
	" WHERE kind = 'run' AND CASE WHEN json_valid(result_json) THEN"
	" json_type(result_json, '$.measure.sessions') END = 'object';"
	"INSERT INTO steps SELECT runs.id, s.key, json_extract(s.value, '$.name'),"
	" json_extract(s.value, '$.completed'), json_extract(s.value, '$.errors'),"
	" json_extract(s.value, '$.latency.p50_us'), json_extract(s.value, '$.latency.p99_us')"
	" FROM runs, json_each(CASE WHEN runs.sessions_started IS NOT NULL THEN"
	" runs.result_json ELSE '[]' END, '$.measure.by_name') AS s"
	" WHERE s.key < 32 AND CASE WHEN s.type = 'object' THEN"
	" json_type(s.value, '$.name') END = 'text';",
	/* 3 → 4: the workload hash (plan.workload.workload_sha256, a compare's
	 * first variant's: what was sent, not where, the hash pacer diff
	 * compares), listed and filtered by `pacer history`, and the runs
	 * stored before filled in from their results; a value that is not a
	 * string (a file pacer does not trust) is left NULL, one cut at 64 */
	"ALTER TABLE runs ADD COLUMN workload_hash TEXT;"
	"CREATE INDEX runs_workload_hash ON runs(workload_hash, recorded_at);"
	"UPDATE runs SET workload_hash = (SELECT CASE WHEN json_type(result_json, p) = 'text'"
	" THEN substr(json_extract(result_json, p), 1, 64) END FROM (SELECT CASE WHEN kind ="
	" 'compare' THEN '$.variants[0].workload.workload_sha256' ELSE"
	" '$.plan.workload.workload_sha256' END AS p))"
	" WHERE CASE WHEN json_valid(result_json) THEN 1 ELSE 0 END;",
};

/* One SQLite failure as a code and a message naming the file. */
int history_sql_fail(struct history_db *h, int src, const char *what, char *err, size_t errlen)
{
	int prim = src & 0xff;
	if (prim == SQLITE_BUSY || prim == SQLITE_LOCKED) {
		text_errf(err, errlen, "%s: database is locked by another process (%s)", h->path,
			  what);
		return -EBUSY;
	}
	if (prim == SQLITE_NOTADB) {
		text_errf(err, errlen, "%s: not a pacer history: %s", h->path, sqlite3_errstr(src));
		return PACER_EPARSE;
	}
	if (prim == SQLITE_CORRUPT) {
		text_errf(err, errlen, "%s: damaged (%s, %s); restore it from a copy", h->path,
			  sqlite3_errstr(src), what);
		return PACER_EPARSE;
	}
	if (prim == SQLITE_READONLY) {
		text_errf(err, errlen, "%s: read-only: pacer cannot record into it (%s: %s)",
			  h->path, what, sqlite3_errstr(src));
		return -EACCES;
	}
	if (prim == SQLITE_TOOBIG) {
		text_errf(err, errlen, "%s: a stored value is over %u bytes (%s)", h->path,
			  RESULT_READ_CAP, what);
		return PACER_ETOOBIG;
	}
	if (prim == SQLITE_NOMEM)
		return -ENOMEM;
	if (prim == SQLITE_CANTOPEN) {
		text_errf(err, errlen, "%s: cannot open: %s", h->path,
			  h->db ? sqlite3_errmsg(h->db) : sqlite3_errstr(src));
		return -EIO;
	}
	text_errf(err, errlen, "%s: %s: %s", h->path, what,
		  h->db ? sqlite3_errmsg(h->db) : sqlite3_errstr(src));
	return -EIO;
}

/* What a file that is not a regular one is, for a message. */
static const char *file_kind(mode_t m)
{
	if (S_ISDIR(m))
		return "a directory";
	if (S_ISFIFO(m))
		return "a FIFO";
	if (S_ISCHR(m) || S_ISBLK(m))
		return "a device";
	if (S_ISSOCK(m))
		return "a socket";
	return "not a regular file";
}

/* A history is a regular file, and so are the files SQLite keeps beside it
 * (FILE-wal, FILE-shm, FILE-journal): SQLite would block opening a FIFO
 * (`pacer history` hung) and misread a device. Checked before SQLite
 * opens anything. A missing file is -ENOENT when read_only (nothing is
 * created), else fine (it is created; its folder must be writable, as
 * SQLite keeps the WAL beside it). 0, or a code with err. */
int history_check_files(const char *path, bool read_only, char *err, size_t errlen)
{
	struct stat st;
	if (stat(path, &st) != 0) {
		int e = errno;
		if (e == ENOENT && read_only) {
			text_errf(err, errlen, "%s: no such history database", path);
			return -ENOENT;
		}
		if (e != ENOENT) {
			text_errf(err, errlen, "%s: cannot open: %s", path, strerror(e));
			return -e;
		}
	} else if (S_ISDIR(st.st_mode)) {
		text_errf(err, errlen, "%s: is a directory, not a history database", path);
		return -EISDIR;
	} else if (!S_ISREG(st.st_mode)) {
		text_errf(err, errlen, "%s: %s, not a history database", path,
			  file_kind(st.st_mode));
		return -EINVAL;
	}
	static const char *const beside[] = {"-wal", "-shm", "-journal"};
	size_t n = strlen(path) + 16;
	char *side = malloc(n);
	if (!side)
		return -ENOMEM;
	int rc = 0;
	for (size_t i = 0; i < sizeof beside / sizeof beside[0] && !rc; i++) {
		snprintf(side, n, "%s%s", path, beside[i]);
		if (stat(side, &st) == 0 && !S_ISREG(st.st_mode)) {
			text_errf(err, errlen, "%s: %s is %s, not SQLite's %s file", path, side,
				  file_kind(st.st_mode), beside[i] + 1);
			rc = -EINVAL;
		}
	}
	free(side);
	return rc;
}

/* The first schema object of `from` (type, name, SQL text) that `in`
 * lacks, but ANALYZE's statistics tables: SQLITE_ROW with its type and
 * name copied out, SQLITE_DONE when there is none, else an SQLite error of
 * `from` (*from_failed) or of `in`. */
static int first_unmatched(sqlite3 *from, sqlite3 *in, char *type, size_t tcap, char *name,
			   size_t ncap, bool *from_failed)
{
	sqlite3_stmt *all = NULL, *one = NULL;
	*from_failed = true;
	int src = sqlite3_prepare_v2(
		from,
		"SELECT type, name, sql FROM sqlite_master WHERE name NOT LIKE "
		"'sqlite\\_stat%' ESCAPE '\\' ORDER BY type = 'table' DESC, name",
		-1, &all, NULL);
	if (src != SQLITE_OK)
		return src;
	*from_failed = false;
	src = sqlite3_prepare_v2(in,
				 "SELECT count(*) FROM sqlite_master WHERE type = ?1 AND name = ?2 "
				 "AND sql IS ?3",
				 -1, &one, NULL);
	while (src == SQLITE_OK) {
		*from_failed = true;
		src = sqlite3_step(all);
		if (src != SQLITE_ROW)
			break;
		*from_failed = false;
		sqlite3_reset(one);
		for (int i = 0; i < 3; i++)
			sqlite3_bind_value(one, i + 1, sqlite3_column_value(all, i));
		src = sqlite3_step(one);
		if (src != SQLITE_ROW)
			break;
		if (sqlite3_column_int(one, 0) == 1) {
			src = SQLITE_OK;
			continue;
		}
		const unsigned char *t = sqlite3_column_text(all, 0),
				    *n = sqlite3_column_text(all, 1);
		snprintf(type, tcap, "%s", t ? (const char *)t : "object");
		snprintf(name, ncap, "%s", n ? (const char *)n : "");
		src = SQLITE_ROW;
		break;
	}
	sqlite3_finalize(all);
	sqlite3_finalize(one);
	return src;
}

/* The file's schema is the one pacer's migrations create up to its
 * version, object for object (type, name and SQL text), but for the
 * statistics tables of ANALYZE. Anything else was made outside pacer: a
 * trigger could change or delete what pacer stores while pacer reports
 * it stored, a changed table could store other values. The expected
 * schema is read from an in-memory database migrated the same way. 0, or
 * PACER_EPARSE with err naming the first difference. */
int history_check_schema(struct history_db *h, unsigned version, char *err, size_t errlen)
{
	sqlite3 *ref = NULL;
	int src = sqlite3_open_v2(":memory:", &ref, SQLITE_OPEN_READWRITE, NULL);
	for (unsigned i = 0; i < version && src == SQLITE_OK; i++)
		src = sqlite3_exec(ref, history_migrations[i], NULL, NULL, NULL);
	if (src != SQLITE_OK) {
		sqlite3_close(ref);
		return src == SQLITE_NOMEM ? -ENOMEM : -EIO;
	}
	char type[16], name[80];
	bool from_failed, file_failed;
	int rc = 0;
	/* the file's objects that pacer did not make, then pacer's it lacks */
	src = first_unmatched(h->db, ref, type, sizeof type, name, sizeof name, &from_failed);
	file_failed = from_failed;
	if (src == SQLITE_ROW) {
		text_errf(err, errlen,
			  "%s: not pacer's schema: %s '%s' was %s outside pacer; pacer leaves this "
			  "history alone (drop it, or use another file)",
			  h->path, type, name, strcmp(type, "table") ? "added" : "made or changed");
		rc = PACER_EPARSE;
	} else if (src == SQLITE_DONE) {
		src = first_unmatched(ref, h->db, type, sizeof type, name, sizeof name,
				      &from_failed);
		file_failed = !from_failed;
		if (src == SQLITE_ROW) {
			text_errf(err, errlen,
				  "%s: not pacer's schema: its %s '%s' of schema version %u is "
				  "missing",
				  h->path, type, name, version);
			rc = PACER_EPARSE;
		}
	}
	if (!rc && src != SQLITE_DONE)
		rc = file_failed ? history_sql_fail(h, src, "reading its schema", err, errlen)
				 : (src == SQLITE_NOMEM ? -ENOMEM : -EIO);
	sqlite3_close(ref);
	return rc;
}

/* The pages hold together (PRAGMA quick_check: every page of the table and
 * its indexes read, their structure checked; the JSON inside is checked
 * when a result is read). 0, or PACER_EPARSE with the first problem. */
int history_check_pages(struct history_db *h, char *err, size_t errlen)
{
	sqlite3_stmt *st;
	int src = sqlite3_prepare_v2(h->db, "PRAGMA quick_check(1)", -1, &st, NULL);
	if (src != SQLITE_OK)
		return history_sql_fail(h, src, "checking its pages", err, errlen);
	src = sqlite3_step(st);
	int rc = 0;
	if (src == SQLITE_ROW) {
		const char *what = (const char *)sqlite3_column_text(st, 0);
		if (!what || strcmp(what, "ok")) {
			/* "*** in database main ***\nPage 2: ...": the problem alone */
			const char *nl = what ? strchr(what, '\n') : NULL;
			if (nl && !strncmp(what, "***", 3))
				what = nl + 1;
			text_errf(err, errlen,
				  "%s: damaged (PRAGMA quick_check: %.200s); restore it "
				  "from a copy",
				  h->path, what ? what : "no answer");
			rc = PACER_EPARSE;
		}
	} else {
		rc = history_sql_fail(h, src, "checking its pages", err, errlen);
	}
	sqlite3_finalize(st);
	return rc;
}

/* pacer can write into the file: the connection is not read-only (the
 * file's permissions, a read-only mount). 0, or -EACCES with err. */
int history_check_writable(struct history_db *h, char *err, size_t errlen)
{
	if (sqlite3_db_readonly(h->db, "main") != 1)
		return 0;
	text_errf(err, errlen,
		  "%s: read-only: pacer cannot record into it (the file's permissions, or a "
		  "read-only file system)",
		  h->path);
	return -EACCES;
}

/* The write lock can be taken (in WAL mode it needs FILE-shm and FILE-wal
 * writable). Another writer holding it now is fine: an insert waits for
 * it. 0, or a code of sql_fail. */
int history_check_lock(struct history_db *h, unsigned busy_ms, char *err, size_t errlen)
{
	sqlite3_busy_timeout(h->db, 0);
	int src = sqlite3_exec(h->db, "BEGIN IMMEDIATE", NULL, NULL, NULL);
	sqlite3_busy_timeout(h->db, (int)busy_ms);
	if (src == SQLITE_OK) {
		sqlite3_exec(h->db, "ROLLBACK", NULL, NULL, NULL);
		return 0;
	}
	if ((src & 0xff) == SQLITE_BUSY || (src & 0xff) == SQLITE_LOCKED)
		return 0;
	return history_sql_fail(h, src, "taking the write lock", err, errlen);
}

/* Row rid holds exactly the result and time just inserted, and one row was
 * inserted. 0, or PACER_EPARSE (or a code of sql_fail) with err. */
int history_read_back(struct history_db *h, int64_t rid, const char *when, const char *json,
		      size_t len, char *err, size_t errlen)
{
	if (sqlite3_changes(h->db) != 1) {
		text_errf(err, errlen, "%s: the insert changed %d rows, not 1: nothing was stored",
			  h->path, sqlite3_changes(h->db));
		return PACER_EPARSE;
	}
	sqlite3_stmt *st;
	int src = sqlite3_prepare_v2(h->db,
				     "SELECT result_json = ?1 AND recorded_at = ?2 FROM runs "
				     "WHERE id = ?3",
				     -1, &st, NULL);
	if (src != SQLITE_OK)
		return history_sql_fail(h, src, "reading the row back", err, errlen);
	sqlite3_bind_text(st, 1, json, (int)len, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, when, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 3, rid);
	src = sqlite3_step(st);
	bool same = src == SQLITE_ROW && sqlite3_column_int(st, 0) == 1;
	sqlite3_finalize(st);
	if (src != SQLITE_ROW && src != SQLITE_DONE)
		return history_sql_fail(h, src, "reading the row back", err, errlen);
	if (!same) {
		text_errf(err, errlen,
			  "%s: the stored row did not read back as written (%s): nothing was "
			  "stored",
			  h->path, src == SQLITE_ROW ? "it differs" : "it is gone");
		return PACER_EPARSE;
	}
	return 0;
}
