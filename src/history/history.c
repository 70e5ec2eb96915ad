/* pacer — the run history in SQLite (history/history.h). */
#include "history/history_int.h"

#include <errno.h>
#include <math.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "doc/read.h"
#include "util/err.h"
#include "util/text.h"

static int exec(struct history_db *h, const char *sql, const char *what, char *err, size_t errlen)
{
	int rc = sqlite3_exec(h->db, sql, NULL, NULL, NULL);
	return rc == SQLITE_OK ? 0 : history_sql_fail(h, rc, what, err, errlen);
}

/* The integer a PRAGMA returns. */
static int pragma_int(struct history_db *h, const char *sql, long long *out, char *err,
		      size_t errlen)
{
	sqlite3_stmt *st;
	int rc = sqlite3_prepare_v2(h->db, sql, -1, &st, NULL);
	if (rc != SQLITE_OK)
		return history_sql_fail(h, rc, "reading its header", err, errlen);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		*out = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return history_sql_fail(h, rc, "reading its header", err, errlen);
	return 0;
}

static int migrate(struct history_db *h, unsigned to, char *err, size_t errlen)
{
	while (h->version < to) {
		char sql[64];
		/* BEGIN IMMEDIATE: a second process opening at the same time waits,
		 * then sees the version this one wrote and skips the step */
		int rc = exec(h, "BEGIN IMMEDIATE", "migrating", err, errlen);
		if (rc)
			return rc;
		long long v = 0;
		rc = pragma_int(h, "PRAGMA user_version", &v, err, errlen);
		if (!rc && v == (long long)h->version) {
			rc = exec(h, history_migrations[h->version], "migrating", err, errlen);
			snprintf(sql, sizeof sql, "PRAGMA user_version = %u", h->version + 1);
			if (!rc)
				rc = exec(h, sql, "migrating", err, errlen);
			if (!rc && h->version == 0) {
				snprintf(sql, sizeof sql, "PRAGMA application_id = %d", HISTORY_APP_ID);
				rc = exec(h, sql, "migrating", err, errlen);
			}
			v = h->version + 1;
		}
		if (rc) {
			sqlite3_exec(h->db, "ROLLBACK", NULL, NULL, NULL);
			return rc;
		}
		rc = exec(h, "COMMIT", "migrating", err, errlen);
		if (rc) {
			sqlite3_exec(h->db, "ROLLBACK", NULL, NULL, NULL);
			return rc;
		}
		h->version = (unsigned)v;
	}
	return 0;
}

/* The header's application_id and user_version and whether the schema is
 * empty (a new file), read in one statement: one snapshot, so a creator
 * committing in between cannot show a schema without its id. */
static int read_header(struct history_db *h, long long *app, long long *ver, bool *empty,
		       char *err, size_t errlen)
{
	sqlite3_stmt *st;
	int rc = sqlite3_prepare_v2(h->db,
				    "SELECT (SELECT application_id FROM pragma_application_id()), "
				    "(SELECT user_version FROM pragma_user_version()), "
				    "(SELECT count(*) FROM sqlite_master)",
				    -1, &st, NULL);
	if (rc != SQLITE_OK)
		return history_sql_fail(h, rc, "reading its header", err, errlen);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		*app = sqlite3_column_int64(st, 0);
		*ver = sqlite3_column_int64(st, 1);
		*empty = sqlite3_column_int64(st, 2) == 0;
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_ROW)
		return history_sql_fail(h, rc, "reading its header", err, errlen);
	return 0;
}

/* The journal mode, read fresh. */
static int journal_mode(struct history_db *h, char *mode, size_t cap, char *err, size_t errlen)
{
	sqlite3_stmt *st;
	int rc = sqlite3_prepare_v2(h->db, "PRAGMA journal_mode", -1, &st, NULL);
	if (rc != SQLITE_OK)
		return history_sql_fail(h, rc, "reading its journal mode", err, errlen);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		snprintf(mode, cap, "%s", (const char *)sqlite3_column_text(st, 0));
	sqlite3_finalize(st);
	if (rc != SQLITE_ROW)
		return history_sql_fail(h, rc, "reading its journal mode", err, errlen);
	return 0;
}

/* WAL mode. Turning it on takes an exclusive lock, which a connection of
 * another process that already has the file open in WAL mode blocks for as
 * long as it stays open (a run's whole length): so the change is tried with
 * short waits, and done when the mode reads "wal", whoever set it. */
static int ensure_wal(struct history_db *h, unsigned busy_ms, char *err, size_t errlen)
{
	for (unsigned waited = 0;; waited += 50) {
		/* a read first: it finds a WAL another process turned on since */
		long long app, ver;
		bool empty;
		int rc = read_header(h, &app, &ver, &empty, err, errlen);
		char mode[16] = "";
		if (!rc)
			rc = journal_mode(h, mode, sizeof mode, err, errlen);
		if (rc)
			return rc;
		if (!strcmp(mode, "wal"))
			return 0;
		if (waited >= busy_ms)
			break;
		sqlite3_busy_timeout(h->db, 50);
		rc = sqlite3_exec(h->db, "PRAGMA journal_mode=WAL", NULL, NULL, NULL);
		sqlite3_busy_timeout(h->db, (int)busy_ms);
		if (rc != SQLITE_OK && (rc & 0xff) != SQLITE_BUSY && (rc & 0xff) != SQLITE_LOCKED)
			return history_sql_fail(h, rc, "setting WAL mode", err, errlen);
	}
	return history_sql_fail(h, SQLITE_BUSY, "setting WAL mode", err, errlen);
}

int history_open(struct history_db **out, const char *path, const struct history_open_opts *opts,
		 char *err, size_t errlen)
{
	*out = NULL;
	struct history_open_opts o = opts ? *opts : (struct history_open_opts){0};
	unsigned want = o.schema_version ? o.schema_version : HISTORY_SCHEMA_VERSION;
	if (want > HISTORY_SCHEMA_VERSION)
		want = HISTORY_SCHEMA_VERSION;
	int rc = history_check_files(path, o.read_only, err, errlen);
	if (rc)
		return rc;
	struct history_db *h = calloc(1, sizeof *h);
	if (!h || !(h->path = strdup(path))) {
		free(h);
		return -ENOMEM;
	}
	int flags = o.read_only ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;
	rc = sqlite3_open_v2(path, &h->db, flags, NULL);
	if (rc != SQLITE_OK) {
		rc = history_sql_fail(h, rc, "opening", err, errlen);
		history_close(h);
		return rc;
	}
	/* the file is input: no schema trick (writable_schema, shadow tables),
	 * no trigger or view runs, no function from its schema, and no value
	 * over what a result may be */
	sqlite3_db_config(h->db, SQLITE_DBCONFIG_DEFENSIVE, 1, (int *)NULL);
	sqlite3_db_config(h->db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, (int *)NULL);
	sqlite3_db_config(h->db, SQLITE_DBCONFIG_ENABLE_TRIGGER, 0, (int *)NULL);
	sqlite3_db_config(h->db, SQLITE_DBCONFIG_ENABLE_VIEW, 0, (int *)NULL);
	sqlite3_limit(h->db, SQLITE_LIMIT_LENGTH, (int)RESULT_READ_CAP);
	sqlite3_exec(h->db, "PRAGMA cell_size_check = ON", NULL, NULL, NULL);
	unsigned busy_ms = o.busy_ms ? o.busy_ms : HISTORY_BUSY_MS;
	sqlite3_busy_timeout(h->db, (int)busy_ms);
	char waited[32];
	snprintf(waited, sizeof waited, "%u ms", busy_ms);
	long long app = 0, ver = 0;
	bool empty = false;
	/* the header and the schema in one read transaction: one snapshot, so
	 * a process creating the history meanwhile cannot show a schema of
	 * another version than the header's */
	sqlite3_exec(h->db, "BEGIN", NULL, NULL, NULL);
	rc = read_header(h, &app, &ver, &empty, err, errlen);
	if (!rc && app == HISTORY_APP_ID && ver >= 0 && ver <= HISTORY_SCHEMA_VERSION)
		rc = history_check_schema(h, (unsigned)ver, err, errlen);
	sqlite3_exec(h->db, "ROLLBACK", NULL, NULL, NULL);
	if (rc == -EBUSY)
		text_errf(err, errlen, "%s: database is locked by another process (waited %s)", path,
			waited);
	if (rc)
		goto fail;
	if (app != HISTORY_APP_ID && !(empty && app == 0)) {
		text_errf(err, errlen,
			"%s: not a pacer history (an SQLite database with application_id %lld, "
			"not %d)",
			path, app, HISTORY_APP_ID);
		rc = PACER_EPARSE;
		goto fail;
	}
	if (ver < 0 || ver > HISTORY_SCHEMA_VERSION) {
		text_errf(err, errlen,
			"%s: history schema version %lld is newer than this pacer's (%d): "
			"upgrade pacer",
			path, ver, HISTORY_SCHEMA_VERSION);
		rc = PACER_EUNSUPPORTED;
		goto fail;
	}
	h->version = (unsigned)ver;
	if (o.read_only) {
		if (h->version < HISTORY_SCHEMA_VERSION) {
			text_errf(err, errlen,
				"%s: history schema version %u is older than this pacer's (%d): "
				"record one run with --history to migrate it",
				path, h->version, HISTORY_SCHEMA_VERSION);
			rc = PACER_EUNSUPPORTED;
			goto fail;
		}
		*out = h;
		return 0;
	}
	/* what the insert after the load will need, found before it: the
	 * file writable, its pages sound, the write lock within reach */
	rc = history_check_writable(h, err, errlen);
	if (!rc && !empty)
		rc = history_check_pages(h, err, errlen);
	if (!rc)
		rc = ensure_wal(h, busy_ms, err, errlen);
	if (!rc)
		rc = exec(h, "PRAGMA synchronous=FULL", "setting synchronous", err, errlen);
	unsigned checked = h->version;
	if (!rc && h->version < want)
		rc = migrate(h, want, err, errlen);
	if (!rc && h->version != checked) /* migrated, by this process or another */
		rc = history_check_schema(h, h->version, err, errlen);
	if (!rc)
		rc = history_check_lock(h, busy_ms, err, errlen);
	if (rc == -EBUSY)
		text_errf(err, errlen, "%s: database is locked by another process (waited %s)", path,
			waited);
	if (rc)
		goto fail;
	*out = h;
	return 0;
fail:
	history_close(h);
	return rc;
}

void history_close(struct history_db *h)
{
	if (!h)
		return;
	sqlite3_close(h->db);
	free(h->path);
	free(h);
}

unsigned history_schema_version(const struct history_db *h)
{
	return h->version;
}

static void bind_text(sqlite3_stmt *st, int i, const char *s)
{
	if (s && *s)
		sqlite3_bind_text(st, i, s, -1, SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(st, i);
}

static void bind_num(sqlite3_stmt *st, int i, double v)
{
	if (isfinite(v))
		sqlite3_bind_double(st, i, v);
	else
		sqlite3_bind_null(st, i);
}

static void iso_utc(int64_t ms, char *out, size_t cap)
{
	time_t s = (time_t)(ms / 1000);
	struct tm tm;
	gmtime_r(&s, &tm);
	char base[32];
	strftime(base, sizeof base, "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(out, cap, "%s.%03dZ", base, (int)(ms % 1000));
}

#define ROW_COLS                                                                                   \
	"id, recorded_at, command, git_commit, kind, started_at, pacer_version, pacer_commit, "   \
	"target, scenario, table_hash, hostname, cpu_model, cores, kernel, arch, interrupted, "  \
	"report_id, achieved_per_s, p50_us, p90_us, p99_us, p99_9_us, errors_pct, "              \
	"capacity_per_s, cpu_ms_per_request, usd_per_million"
/* schema 3: a session run's figures, after ROW_COLS */
#define SESSION_COLS                                                                               \
	"sessions_started, sessions_completed, sessions_failed, sessions_abandoned, "              \
	"sessions_completed_pct, session_p50_us, session_p99_us"
/* The headline metrics with columns of their own since schema 1 (achieved
 * to cost); the sessions' three are SESSION_COLS. */
#define HM_SCHEMA1 (HM_COST + 1)
#define SESSIONS_SCHEMA 3
#define WORKLOAD_SCHEMA 4 /* runs.workload_hash */

/* Run rid's session figures (schema 3): the columns, updated after the
 * insert, and its steps. 0, or a code of history_sql_fail. */
static int add_sessions(struct history_db *h, int64_t rid, const struct history_headline *hl,
			char *err, size_t errlen)
{
	if (h->version < SESSIONS_SCHEMA || !isfinite(hl->sess.started))
		return 0;
	sqlite3_stmt *st = NULL;
	int src =
		sqlite3_prepare_v2(h->db,
				   "UPDATE runs SET sessions_started = ?, sessions_completed = ?, "
				   "sessions_failed = ?, sessions_abandoned = ?, "
				   "sessions_completed_pct = ?, session_p50_us = ?, "
				   "session_p99_us = ? WHERE id = ?",
				   -1, &st, NULL);
	if (src == SQLITE_OK) {
		int i = 1;
		bind_num(st, i++, hl->sess.started);
		bind_num(st, i++, hl->sess.completed);
		bind_num(st, i++, hl->sess.failed);
		bind_num(st, i++, hl->sess.abandoned);
		for (int m = HM_SESSIONS; m <= HM_SESSION_P99; m++)
			bind_num(st, i++, hl->v[m]);
		sqlite3_bind_int64(st, i++, rid);
		src = sqlite3_step(st) == SQLITE_DONE ? SQLITE_OK : sqlite3_errcode(h->db);
	}
	sqlite3_finalize(st);
	st = NULL;
	if (src == SQLITE_OK)
		src = sqlite3_prepare_v2(h->db,
					 "INSERT INTO steps (run_id, seq, name, completed, errors, "
					 "p50_us, p99_us) VALUES (?,?,?,?,?,?,?)",
					 -1, &st, NULL);
	for (size_t k = 0; src == SQLITE_OK && k < hl->n_steps; k++) {
		const struct history_step *s = &hl->steps[k];
		sqlite3_reset(st);
		sqlite3_bind_int64(st, 1, rid);
		sqlite3_bind_int64(st, 2, (sqlite3_int64)k);
		sqlite3_bind_text(st, 3, s->name, -1, SQLITE_TRANSIENT);
		bind_num(st, 4, s->completed);
		bind_num(st, 5, s->errors);
		bind_num(st, 6, s->p50_us);
		bind_num(st, 7, s->p99_us);
		src = sqlite3_step(st) == SQLITE_DONE ? SQLITE_OK : sqlite3_errcode(h->db);
	}
	sqlite3_finalize(st);
	return src == SQLITE_OK ? 0 : history_sql_fail(h, src, "storing the sessions", err, errlen);
}

/* Run rid's workload hash (schema 4), updated after the insert. 0, or a
 * code of history_sql_fail. */
static int add_workload_hash(struct history_db *h, int64_t rid, const char *hash, char *err,
			     size_t errlen)
{
	if (h->version < WORKLOAD_SCHEMA || !hash || !*hash)
		return 0;
	sqlite3_stmt *st = NULL;
	int src = sqlite3_prepare_v2(h->db, "UPDATE runs SET workload_hash = ? WHERE id = ?", -1,
				     &st, NULL);
	if (src == SQLITE_OK) {
		bind_text(st, 1, hash);
		sqlite3_bind_int64(st, 2, rid);
		src = sqlite3_step(st) == SQLITE_DONE ? SQLITE_OK : sqlite3_errcode(h->db);
	}
	sqlite3_finalize(st);
	return src == SQLITE_OK
		       ? 0
		       : history_sql_fail(h, src, "storing the workload hash", err, errlen);
}

int history_add(struct history_db *h, const struct history_meta *m, const char *json, size_t len,
		int64_t *id, char *err, size_t errlen)
{
	struct loaded_result r;
	int rc = result_read_mem(&r, json, len, "the result", err, errlen);
	if (rc)
		return rc;
	struct history_headline hl;
	history_headline_of(&r, &hl);
	char when[40];
	iso_utc(m->recorded_ms, when, sizeof when);
	static const char sql[] =
		"INSERT INTO runs (recorded_at, command, git_commit, kind, started_at, "
		"pacer_version, pacer_commit, target, scenario, table_hash, hostname, cpu_model, "
		"cores, kernel, arch, interrupted, report_id, achieved_per_s, p50_us, p90_us, "
		"p99_us, p99_9_us, errors_pct, capacity_per_s, cpu_ms_per_request, "
		"usd_per_million, result_json) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,"
		"?,?,?,?,?)";
	sqlite3_stmt *st = NULL;
	rc = exec(h, "BEGIN IMMEDIATE", "starting a transaction", err, errlen);
	if (rc)
		goto out;
	int src = sqlite3_prepare_v2(h->db, sql, -1, &st, NULL);
	if (src != SQLITE_OK) {
		rc = history_sql_fail(h, src, "preparing the insert", err, errlen);
		goto rollback;
	}
	int i = 1;
	bind_text(st, i++, when);
	bind_text(st, i++, m->command);
	bind_text(st, i++, m->git_commit);
	bind_text(st, i++, hl.kind);
	bind_text(st, i++, hl.started_at);
	bind_text(st, i++, hl.pacer_version);
	bind_text(st, i++, hl.pacer_commit);
	bind_text(st, i++, hl.target);
	bind_text(st, i++, hl.scenario);
	bind_text(st, i++, hl.table_hash);
	bind_text(st, i++, hl.hostname);
	bind_text(st, i++, hl.cpu_model);
	bind_num(st, i++, hl.cores);
	bind_text(st, i++, hl.kernel);
	bind_text(st, i++, hl.arch);
	sqlite3_bind_int(st, i++, hl.interrupted);
	bind_text(st, i++, hl.report_id);
	for (int k = 0; k < HM_SCHEMA1; k++)
		bind_num(st, i++, hl.v[k]);
	sqlite3_bind_text(st, i++, json, (int)len, SQLITE_STATIC);
	src = sqlite3_step(st);
	if (src != SQLITE_DONE) {
		rc = history_sql_fail(h, src, "storing the result", err, errlen);
		goto rollback;
	}
	int64_t rid = sqlite3_last_insert_rowid(h->db);
	sqlite3_finalize(st);
	st = NULL;
	/* what was written reads back, in the same transaction, before the
	 * commit: pacer never says "stored" for a row that is not there */
	rc = history_read_back(h, rid, when, json, len, err, errlen);
	if (!rc) /* a session run's figures, in the same transaction */
		rc = add_sessions(h, rid, &hl, err, errlen);
	if (!rc)
		rc = add_workload_hash(h, rid, hl.workload_hash, err, errlen);
	if (rc)
		goto rollback;
	if (id)
		*id = rid;
	rc = exec(h, "COMMIT", "committing", err, errlen);
	if (!rc)
		goto out;
rollback:
	sqlite3_finalize(st);
	sqlite3_exec(h->db, "ROLLBACK", NULL, NULL, NULL);
out:
	if (rc == -EBUSY)
		text_errf(err, errlen, "%s: database is locked by another process; the result was not "
				     "stored (the --out file, if any, was written)",
			h->path);
	result_free(&r);
	return rc;
}

static const char *col_text(sqlite3_stmt *st, int i)
{
	const unsigned char *s = sqlite3_column_text(st, i);
	return s ? (const char *)s : "";
}

static double col_num(sqlite3_stmt *st, int i)
{
	return sqlite3_column_type(st, i) == SQLITE_NULL ? NAN : sqlite3_column_double(st, i);
}

/* SELECT cols FROM runs WHERE <f> ORDER BY ... into *st. */
static int prepare_filtered(struct history_db *h, const char *cols, const struct history_filter *f,
			    sqlite3_stmt **st, char *err, size_t errlen)
{
	struct history_filter none = {0};
	if (!f)
		f = &none;
	char sql[1280];
	/* a hash prefix: the workload's (schema 4) or the table's */
	int n = snprintf(
		sql, sizeof sql,
		"SELECT %s FROM runs WHERE (?1 IS NULL OR target = ?1) AND "
		"(?2 IS NULL OR scenario = ?2) AND (?3 IS NULL OR substr(table_hash, 1, "
		"length(?3)) = ?3%s) AND (?4 IS NULL OR recorded_at >= ?4) AND (?5 IS NULL OR "
		"recorded_at < ?5) AND (?6 IS NULL OR kind = ?6) AND id >= ?7 ORDER BY id %s",
		cols,
		h->version >= WORKLOAD_SCHEMA ? " OR substr(workload_hash, 1, length(?3)) = ?3"
					      : "",
		f->oldest_first ? "ASC" : "DESC");
	if (f->limit)
		snprintf(sql + n, sizeof sql - (size_t)n, " LIMIT %u", f->limit);
	int rc = sqlite3_prepare_v2(h->db, sql, -1, st, NULL);
	if (rc != SQLITE_OK)
		return history_sql_fail(h, rc, "reading", err, errlen);
	bind_text(*st, 1, f->target);
	bind_text(*st, 2, f->scenario);
	bind_text(*st, 3, f->table_hash);
	bind_text(*st, 4, f->since);
	bind_text(*st, 5, f->until);
	bind_text(*st, 6, f->kind);
	sqlite3_bind_int64(*st, 7, f->min_id);
	return 0;
}

/* Run id's steps into hl (st: the prepared SELECT of steps). */
static int read_steps(sqlite3_stmt *st, int64_t id, struct history_headline *hl)
{
	sqlite3_reset(st);
	sqlite3_bind_int64(st, 1, id);
	int src;
	while ((src = sqlite3_step(st)) == SQLITE_ROW && hl->n_steps < HISTORY_STEPS_MAX) {
		struct history_step *s = &hl->steps[hl->n_steps++];
		snprintf(s->name, sizeof s->name, "%s", col_text(st, 0));
		s->completed = col_num(st, 1);
		s->errors = col_num(st, 2);
		s->p50_us = col_num(st, 3);
		s->p99_us = col_num(st, 4);
	}
	return src == SQLITE_ROW || src == SQLITE_DONE ? SQLITE_OK : src;
}

int history_list(struct history_db *h, const struct history_filter *f,
		 int (*cb)(void *arg, const struct history_row *row), void *arg, char *err,
		 size_t errlen)
{
	bool sessions = h->version >= SESSIONS_SCHEMA;
	bool workload = h->version >= WORKLOAD_SCHEMA;
	sqlite3_stmt *st, *steps = NULL;
	int rc = prepare_filtered(h,
				  workload   ? ROW_COLS ", " SESSION_COLS ", workload_hash"
				  : sessions ? ROW_COLS ", " SESSION_COLS
					     : ROW_COLS,
				  f, &st, err, errlen);
	if (rc)
		return rc;
	int src;
	if (sessions &&
	    (src = sqlite3_prepare_v2(h->db,
				      "SELECT name, completed, errors, p50_us, p99_us FROM steps "
				      "WHERE run_id = ? ORDER BY seq",
				      -1, &steps, NULL)) != SQLITE_OK) {
		sqlite3_finalize(st);
		return history_sql_fail(h, src, "reading", err, errlen);
	}
	/* a row is large (its steps): one, reused */
	struct history_row *rowp = malloc(sizeof *rowp);
	if (!rowp) {
		sqlite3_finalize(st);
		sqlite3_finalize(steps);
		return -ENOMEM;
	}
	while ((src = sqlite3_step(st)) == SQLITE_ROW) {
		struct history_row *row = rowp;
		memset(row, 0, sizeof *row);
		int i = 0;
		row->id = sqlite3_column_int64(st, i++);
		row->recorded_at = col_text(st, i++);
		row->command = col_text(st, i++);
		row->git_commit = col_text(st, i++);
		struct history_headline *hl = &row->h;
		hl->kind = col_text(st, i++);
		hl->started_at = col_text(st, i++);
		hl->pacer_version = col_text(st, i++);
		hl->pacer_commit = col_text(st, i++);
		snprintf(hl->target, sizeof hl->target, "%s", col_text(st, i++));
		hl->scenario = col_text(st, i++);
		hl->table_hash = col_text(st, i++);
		hl->hostname = col_text(st, i++);
		hl->cpu_model = col_text(st, i++);
		hl->cores = col_num(st, i++);
		hl->kernel = col_text(st, i++);
		hl->arch = col_text(st, i++);
		hl->interrupted = sqlite3_column_int(st, i++) != 0;
		hl->report_id = col_text(st, i++);
		for (int k = 0; k < HM_COUNT; k++)
			hl->v[k] = k < HM_SCHEMA1 ? col_num(st, i++) : NAN;
		hl->sess.started = hl->sess.completed = hl->sess.failed = hl->sess.abandoned = NAN;
		if (sessions) {
			hl->sess.started = col_num(st, i++);
			hl->sess.completed = col_num(st, i++);
			hl->sess.failed = col_num(st, i++);
			hl->sess.abandoned = col_num(st, i++);
			for (int m = HM_SESSIONS; m <= HM_SESSION_P99; m++)
				hl->v[m] = col_num(st, i++);
			if (isfinite(hl->sess.started)) {
				int s2 = read_steps(steps, row->id, hl);
				if (s2 != SQLITE_OK) {
					src = s2;
					break;
				}
			}
		}
		hl->workload_hash = workload ? col_text(st, i++) : "";
		rc = cb(arg, row);
		if (rc)
			break;
	}
	sqlite3_finalize(st);
	sqlite3_finalize(steps);
	free(rowp);
	if (rc)
		return rc;
	if (src != SQLITE_DONE)
		return history_sql_fail(h, src, "reading", err, errlen);
	return 0;
}

int history_get(struct history_db *h, int64_t id, char **json, size_t *len, char *err,
		size_t errlen)
{
	*json = NULL;
	*len = 0;
	sqlite3_stmt *st;
	int rc = sqlite3_prepare_v2(h->db, "SELECT result_json FROM runs WHERE id = ?", -1, &st,
				    NULL);
	if (rc != SQLITE_OK)
		return history_sql_fail(h, rc, "reading", err, errlen);
	sqlite3_bind_int64(st, 1, id);
	rc = sqlite3_step(st);
	if (rc == SQLITE_DONE) {
		sqlite3_finalize(st);
		text_errf(err, errlen, "%s: no run %lld in this history", h->path, (long long)id);
		return -ENOENT;
	}
	if (rc != SQLITE_ROW) {
		rc = history_sql_fail(h, rc, "reading", err, errlen);
		sqlite3_finalize(st);
		return rc;
	}
	const void *b = sqlite3_column_blob(st, 0);
	int n = sqlite3_column_bytes(st, 0);
	char *copy = malloc((size_t)n + 1);
	if (!copy) {
		sqlite3_finalize(st);
		return -ENOMEM;
	}
	if (n)
		memcpy(copy, b, (size_t)n);
	copy[n] = '\0';
	sqlite3_finalize(st);
	*json = copy;
	*len = (size_t)n;
	return 0;
}

int history_last_id(struct history_db *h, const struct history_filter *f, int64_t *id, char *err,
		    size_t errlen)
{
	*id = 0;
	struct history_filter one = f ? *f : (struct history_filter){0};
	one.limit = 1;
	one.oldest_first = false;
	sqlite3_stmt *st;
	int rc = prepare_filtered(h, "id", &one, &st, err, errlen);
	if (rc)
		return rc;
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		*id = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return history_sql_fail(h, rc, "reading", err, errlen);
	return 0;
}
