/* The run history store (src/history/history.c): schema and migrations,
 * refusing foreign, corrupt and newer databases, locks past the timeout,
 * two writer processes at once, and a writer killed mid-write. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/doc_fixtures.h"
#include "common/tmpdir.h"
#include "history/history.h"
#include "util/err.h"

static char dir[64];
static char path[128];

static int setup(void **state)
{
	(void)state;
	if (tmpdir_make(dir, sizeof dir, "hist") < 0)
		return -1;
	tmpdir_path(path, sizeof path, dir, "h.db");
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	return tmpdir_remove(dir);
}

/* A run result as text, with p50 of `p50_us` and the target `url`. */
static char *result_text(double p50_us, const char *url)
{
	json_t *j = fx_run();
	json_t *plan = json_object_get(j, "plan");
	json_object_set_new(plan, "url", json_string(url));
	json_object_set_new(json_object_get(json_object_get(j, "measure"), "latency"), "p50_us",
			    json_real(p50_us));
	return fx_text(j);
}

static int64_t add(struct history_db *h, double p50, const char *url)
{
	char *t = result_text(p50, url);
	struct history_meta m = {.command = "run", .git_commit = "abc", .recorded_ms = 1700000000000};
	char err[256] = "";
	int64_t id = 0;
	int rc = history_add(h, &m, t, strlen(t), &id, err, sizeof err);
	free(t);
	if (rc)
		fail_msg("history_add: %d %s", rc, err);
	return id;
}

/* One integer from SQL on the raw file (the test's own connection). */
static long long sql_int(const char *sql)
{
	sqlite3 *db;
	assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	sqlite3_stmt *st;
	assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_step(st), SQLITE_ROW);
	long long v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	sqlite3_close(db);
	return v;
}

static void integrity_ok(void)
{
	sqlite3 *db;
	assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	sqlite3_stmt *st;
	assert_int_equal(sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &st, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_step(st), SQLITE_ROW);
	assert_string_equal((const char *)sqlite3_column_text(st, 0), "ok");
	sqlite3_finalize(st);
	sqlite3_close(db);
}

static void test_new_database_schema(void **state)
{
	(void)state;
	struct history_db *h;
	char err[256];
	assert_int_equal(history_open(&h, path, NULL, err, sizeof err), 0);
	assert_int_equal(history_schema_version(h), HISTORY_SCHEMA_VERSION);
	int64_t id = add(h, 1000, "http://a/");
	assert_true(id > 0);
	history_close(h);
	assert_int_equal(sql_int("PRAGMA user_version"), HISTORY_SCHEMA_VERSION);
	assert_int_equal(sql_int("PRAGMA application_id"), HISTORY_APP_ID);
	assert_int_equal(sql_int("SELECT count(*) FROM runs"), 1);
	/* headline figures as columns, taken from the result */
	assert_int_equal(sql_int("SELECT p50_us FROM runs"), 1000);
	assert_int_equal(sql_int("SELECT achieved_per_s FROM runs"), 500);
	assert_int_equal(sql_int("SELECT count(*) FROM runs WHERE target = 'http://a/' AND "
				 "command = 'run' AND git_commit = 'abc' AND kind = 'run'"),
			 1);
	/* WAL mode persists in the file */
	sqlite3 *db;
	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	sqlite3_stmt *st;
	sqlite3_prepare_v2(db, "PRAGMA journal_mode", -1, &st, NULL);
	assert_int_equal(sqlite3_step(st), SQLITE_ROW);
	assert_string_equal((const char *)sqlite3_column_text(st, 0), "wal");
	sqlite3_finalize(st);
	sqlite3_close(db);
}

static void test_migration_keeps_rows(void **state)
{
	(void)state;
	struct history_db *h;
	char err[256];
	struct history_open_opts v1 = {.schema_version = 1};
	assert_int_equal(history_open(&h, path, &v1, err, sizeof err), 0);
	assert_int_equal(history_schema_version(h), 1);
	add(h, 1000, "http://a/");
	history_close(h);
	assert_int_equal(sql_int("PRAGMA user_version"), 1);
	assert_int_equal(sql_int("SELECT count(*) FROM sqlite_master WHERE type = 'index'"), 0);
	/* a reader refuses the old schema and names the way out; nothing changes */
	struct history_open_opts ro = {.read_only = true};
	assert_int_equal(history_open(&h, path, &ro, err, sizeof err), PACER_EUNSUPPORTED);
	assert_non_null(strstr(err, "older"));
	assert_int_equal(sql_int("PRAGMA user_version"), 1);
	/* a writer migrates forward */
	assert_int_equal(history_open(&h, path, NULL, err, sizeof err), 0);
	assert_int_equal(history_schema_version(h), HISTORY_SCHEMA_VERSION);
	add(h, 2000, "http://b/");
	history_close(h);
	assert_int_equal(sql_int("PRAGMA user_version"), HISTORY_SCHEMA_VERSION);
	/* runs' three, steps_run (schema 3) and runs_workload_hash (schema 4) */
	assert_int_equal(sql_int("SELECT count(*) FROM sqlite_master WHERE type = 'index'"), 5);
	assert_int_equal(sql_int("SELECT count(*) FROM runs"), 2);
	assert_int_equal(sql_int("SELECT p50_us FROM runs WHERE id = 1"), 1000);
}

static void write_file(const char *p, const char *bytes, size_t n)
{
	FILE *f = fopen(p, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(bytes, 1, n, f), n);
	fclose(f);
}

static void test_refuses_foreign_corrupt_newer(void **state)
{
	(void)state;
	struct history_db *h;
	char err[256];
	/* not SQLite at all */
	write_file(path, "hello, not a database\n", 22);
	assert_int_equal(history_open(&h, path, NULL, err, sizeof err), PACER_EPARSE);
	assert_null(h);
	assert_non_null(strstr(err, path));
	assert_non_null(strstr(err, "not a pacer history"));
	assert_null(strchr(err, '\n'));
	/* the file is left as it was */
	struct stat st;
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_size, 22);
	unlink(path);

	/* another program's SQLite database: refused, not altered */
	sqlite3 *db;
	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db, "CREATE TABLE t(x); INSERT INTO t VALUES (1);", NULL, NULL,
				      NULL),
			 SQLITE_OK);
	sqlite3_close(db);
	assert_int_equal(history_open(&h, path, NULL, err, sizeof err), PACER_EPARSE);
	assert_non_null(strstr(err, "application_id"));
	assert_int_equal(sql_int("SELECT count(*) FROM sqlite_master WHERE name = 'runs'"), 0);
	assert_int_equal(sql_int("PRAGMA user_version"), 0);
	unlink(path);

	/* a pacer history of a newer schema */
	assert_int_equal(history_open(&h, path, NULL, err, sizeof err), 0);
	add(h, 1000, "http://a/");
	history_close(h);
	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db, "PRAGMA user_version = 99", NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(db);
	assert_int_equal(history_open(&h, path, NULL, err, sizeof err), PACER_EUNSUPPORTED);
	assert_non_null(strstr(err, "99"));
	assert_int_equal(sql_int("SELECT count(*) FROM runs"), 1);

	/* a truncated file (its header cut): corrupt, refused */
	unlink(path);
	char wal[160];
	snprintf(wal, sizeof wal, "%s-wal", path);
	unlink(wal);
	assert_int_equal(history_open(&h, path, NULL, err, sizeof err), 0);
	add(h, 1000, "http://a/");
	history_close(h);
	assert_int_equal(truncate(path, 50), 0);
	int rc = history_open(&h, path, NULL, err, sizeof err);
	assert_int_equal(rc, PACER_EPARSE);
}

static void test_missing_and_read_only(void **state)
{
	(void)state;
	struct history_db *h;
	char err[256];
	struct history_open_opts ro = {.read_only = true};
	assert_int_equal(history_open(&h, path, &ro, err, sizeof err), -ENOENT);
	assert_non_null(strstr(err, path));
	struct stat st;
	assert_int_equal(stat(path, &st), -1); /* not created */
	assert_int_equal(history_open(&h, dir, NULL, err, sizeof err), -EISDIR);

	assert_int_equal(history_open(&h, path, NULL, err, sizeof err), 0);
	int64_t id = add(h, 1000, "http://a/");
	history_close(h);
	assert_int_equal(history_open(&h, path, &ro, err, sizeof err), 0);
	char *json;
	size_t len;
	assert_int_equal(history_get(h, id + 41, &json, &len, err, sizeof err), -ENOENT);
	assert_null(json);
	assert_non_null(strstr(err, "no run 42"));
	assert_int_equal(history_get(h, id, &json, &len, err, sizeof err), 0);
	/* the stored bytes are the result as given */
	char *want = result_text(1000, "http://a/");
	assert_int_equal(len, strlen(want));
	assert_memory_equal(json, want, len);
	free(want);
	free(json);
	history_close(h);
}

static void test_rejects_a_non_result(void **state)
{
	(void)state;
	struct history_db *h;
	char err[256];
	assert_int_equal(history_open(&h, path, NULL, err, sizeof err), 0);
	struct history_meta m = {.command = "run", .recorded_ms = 1};
	static const char bad[] = "{\"schema_version\":\"9.0\",\"kind\":\"run\"}";
	assert_int_equal(history_add(h, &m, bad, strlen(bad), NULL, err, sizeof err),
			 PACER_EUNSUPPORTED);
	assert_int_equal(history_add(h, &m, "{", 1, NULL, err, sizeof err), PACER_EPARSE);
	history_close(h);
	assert_int_equal(sql_int("SELECT count(*) FROM runs"), 0);
}

/* A session run (fx_sessions) as text. */
static char *session_text(double dur_us)
{
	json_t *j = fx_run();
	fx_sessions(json_object_get(j, "measure"), dur_us, 1000);
	return fx_text(j);
}

static int64_t add_text(struct history_db *h, char *t)
{
	struct history_meta m = {.command = "run", .recorded_ms = 1700000000000};
	char err[256] = "";
	int64_t id = 0;
	int rc = history_add(h, &m, t, strlen(t), &id, err, sizeof err);
	free(t);
	if (rc)
		fail_msg("history_add: %d %s", rc, err);
	return id;
}

struct sess_seen {
	size_t n;
	struct history_headline last;
};

static int sess_row(void *arg, const struct history_row *r)
{
	struct sess_seen *s = arg;
	s->last = r->h;
	s->n++;
	return 0;
}

/* A session run's figures are columns and its steps rows of their own;
 * listing gives them back; a run without sessions has none. */
static void test_sessions_stored_and_listed(void **state)
{
	(void)state;
	struct history_db *h;
	char err[256];
	assert_int_equal(history_open(&h, path, NULL, err, sizeof err), 0);
	add(h, 1000, "http://a/");
	int64_t id = add_text(h, session_text(50000));
	assert_int_equal(sql_int("SELECT count(*) FROM runs WHERE sessions_started IS NULL"), 1);
	assert_int_equal(sql_int("SELECT sessions_started FROM runs WHERE id = 2"), 20);
	assert_int_equal(sql_int("SELECT sessions_completed FROM runs WHERE id = 2"), 19);
	assert_int_equal(sql_int("SELECT sessions_failed FROM runs WHERE id = 2"), 1);
	assert_int_equal(sql_int("SELECT sessions_completed_pct FROM runs WHERE id = 2"), 95);
	assert_int_equal(sql_int("SELECT session_p99_us FROM runs WHERE id = 2"), 50000);
	assert_int_equal(sql_int("SELECT count(*) FROM steps WHERE run_id = 2"), 2);
	assert_int_equal(sql_int("SELECT p50_us FROM steps WHERE run_id = 2 AND name = 'account'"),
			 2000);
	struct sess_seen s = {0};
	struct history_filter f = {.min_id = id};
	assert_int_equal(history_list(h, &f, sess_row, &s, err, sizeof err), 0);
	assert_int_equal(s.n, 1);
	assert_int_equal((int)s.last.sess.started, 20);
	assert_int_equal((int)s.last.sess.failed, 1);
	assert_int_equal((int)s.last.v[HM_SESSIONS], 95);
	assert_int_equal((int)s.last.v[HM_SESSION_P50], 50000);
	assert_int_equal(s.last.n_steps, 2);
	assert_string_equal(s.last.steps[0].name, "login");
	assert_string_equal(s.last.steps[1].name, "account");
	assert_int_equal((int)s.last.steps[1].p99_us, 2000);
	assert_int_equal((int)s.last.steps[1].errors, 1);
	/* the run without sessions lists none */
	memset(&s, 0, sizeof s);
	struct history_filter g = {.limit = 1, .oldest_first = true};
	assert_int_equal(history_list(h, &g, sess_row, &s, err, sizeof err), 0);
	assert_true(isnan(s.last.sess.started));
	assert_int_equal(s.last.n_steps, 0);
	assert_true(isnan(s.last.v[HM_SESSION_P99]));
	history_close(h);
}

/* Schema 2 → 3: session runs stored before get their figures and steps
 * from their results; other runs stay without. */
static void test_migration_fills_sessions(void **state)
{
	(void)state;
	struct history_db *h;
	char err[256];
	struct history_open_opts v2 = {.schema_version = 2};
	assert_int_equal(history_open(&h, path, &v2, err, sizeof err), 0);
	add(h, 1000, "http://a/");
	add_text(h, session_text(40000));
	history_close(h);
	assert_int_equal(sql_int("SELECT count(*) FROM sqlite_master WHERE name = 'steps'"), 0);
	/* rows pacer did not write (the file is not trusted): not JSON, and
	 * sessions and steps of the wrong types; the migration goes through */
	sqlite3 *db;
	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	assert_int_equal(
		sqlite3_exec(db,
			     "INSERT INTO runs (recorded_at, command, kind, result_json) VALUES "
			     "('x', 'run', 'run', 'not json'), ('x', 'run', 'run', "
			     "'{\"measure\":{\"sessions\":{\"started\":\"many\"},\"by_name\":"
			     "[\"a\",1,{\"name\":2},{\"name\":\"ok\"}]}}'), ('x', 'run', 'run', "
			     "'{\"measure\":{\"sessions\":{},\"by_name\":{\"name\":\"no\"}}}')",
			     NULL, NULL, NULL),
		SQLITE_OK);
	sqlite3_close(db);
	assert_int_equal(history_open(&h, path, NULL, err, sizeof err), 0);
	assert_int_equal(history_schema_version(h), HISTORY_SCHEMA_VERSION);
	history_close(h);
	assert_int_equal(sql_int("SELECT count(*) FROM runs WHERE id = 3 AND sessions_started IS "
				 "NULL"),
			 1);
	assert_int_equal(sql_int("SELECT count(*) FROM steps WHERE run_id = 4"), 1);
	assert_int_equal(sql_int("SELECT count(*) FROM steps WHERE run_id = 4 AND name = 'ok' AND "
				 "seq = 3"),
			 1);
	assert_int_equal(sql_int("SELECT count(*) FROM steps WHERE run_id = 5"), 0);
	assert_int_equal(sql_int("SELECT sessions_started FROM runs WHERE id = 2"), 20);
	assert_int_equal(sql_int("SELECT session_p50_us FROM runs WHERE id = 2"), 40000);
	assert_int_equal(sql_int("SELECT sessions_completed_pct FROM runs WHERE id = 2"), 95);
	assert_int_equal(sql_int("SELECT count(*) FROM runs WHERE id = 1 AND sessions_started IS "
				 "NULL"),
			 1);
	assert_int_equal(sql_int("SELECT count(*) FROM steps WHERE run_id = 2"), 2);
	assert_int_equal(sql_int("SELECT p99_us FROM steps WHERE name = 'login' AND seq = 0"),
			 1000);
	/* the migrated file is pacer's schema: a reader opens it */
	struct history_open_opts ro = {.read_only = true};
	assert_int_equal(history_open(&h, path, &ro, err, sizeof err), 0);
	history_close(h);
}

struct collect {
	int64_t ids[16];
	char targets[16][512];
	size_t n;
};

static int collect(void *arg, const struct history_row *r)
{
	struct collect *c = arg;
	c->ids[c->n] = r->id;
	snprintf(c->targets[c->n], sizeof c->targets[0], "%s", r->h.target);
	c->n++;
	return 0;
}

/* A run result whose requests hash to `whash` (plan.workload), sent to
 * `url` (its bytes' hash: `thash`). */
static char *workload_text(const char *whash, const char *thash, const char *url)
{
	json_t *j = fx_run();
	json_t *plan = json_object_get(j, "plan");
	json_object_set_new(plan, "url", json_string(url));
	json_t *w = json_object();
	json_object_set_new(w, "sha256", json_string(thash));
	json_object_set_new(w, "workload_sha256", json_string(whash));
	json_object_set_new(plan, "workload", w);
	return fx_text(j);
}

struct hashes {
	char shown[8][80];
	int64_t ids[8];
	size_t n;
};

static int collect_hash(void *arg, const struct history_row *r)
{
	struct hashes *c = arg;
	if (c->n < 8) {
		snprintf(c->shown[c->n], sizeof c->shown[0], "%s", r->h.workload_hash);
		c->ids[c->n++] = r->id;
	}
	return 0;
}

/* Issue 30: the workload hash (what was sent, not where) is stored and
 * listed, and the hash filter takes its prefix: two ports of one service
 * show one hash, as pacer diff calls them comparable. A schema-3 file's
 * rows get it from their results; rows pacer did not write (not JSON, a
 * hash that is not a string, one far too long) do not stop the migration. */
static void test_workload_hash_stored_listed_migrated(void **state)
{
	(void)state;
	struct history_db *h;
	char err[256];
	struct history_open_opts v3 = {.schema_version = 3};
	assert_int_equal(history_open(&h, path, &v3, err, sizeof err), 0);
	add_text(h, workload_text("aaaa1111", "bbbb0001", "http://127.0.0.1:1001/"));
	history_close(h);
	sqlite3 *db;
	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	char long_hash[300];
	memset(long_hash, 'f', sizeof long_hash - 1);
	long_hash[sizeof long_hash - 1] = '\0';
	char sql[1024];
	snprintf(sql, sizeof sql,
		 "INSERT INTO runs (recorded_at, command, kind, result_json) VALUES "
		 "('x', 'run', 'run', 'not json'), ('x', 'run', 'run', "
		 "'{\"plan\":{\"workload\":{\"workload_sha256\":[1,2]}}}'), ('x', 'run', 'run', "
		 "'{\"plan\":{\"workload\":{\"workload_sha256\":\"%s\"}}}'), ('x', 'compare', "
		 "'compare', '{\"variants\":[{\"workload\":{\"workload_sha256\":\"cccc\"}}]}')",
		 long_hash);
	assert_int_equal(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(db);
	assert_int_equal(history_open(&h, path, NULL, err, sizeof err), 0);
	assert_int_equal(history_schema_version(h), 4);
	/* another port, the same requests; other requests */
	add_text(h, workload_text("aaaa1111", "bbbb0002", "http://127.0.0.1:1002/"));
	add_text(h, workload_text("dddd2222", "bbbb0003", "http://127.0.0.1:1002/x"));
	struct hashes c = {0};
	assert_int_equal(history_list(h, NULL, collect_hash, &c, err, sizeof err), 0);
	assert_int_equal(c.n, 7);
	assert_string_equal(c.shown[0], "dddd2222");
	assert_string_equal(c.shown[1], "aaaa1111");
	assert_string_equal(c.shown[2], "cccc");     /* a compare's first variant's */
	assert_int_equal(strlen(c.shown[3]), 64);    /* cut */
	assert_string_equal(c.shown[4], "");         /* not a string */
	assert_string_equal(c.shown[5], "");         /* not JSON */
	assert_string_equal(c.shown[6], "aaaa1111"); /* migrated from its result */
	/* the filter: the workload hash's prefix, or the table's */
	memset(&c, 0, sizeof c);
	struct history_filter f = {.table_hash = "aaaa"};
	assert_int_equal(history_list(h, &f, collect_hash, &c, err, sizeof err), 0);
	assert_int_equal(c.n, 2);
	assert_int_equal(c.ids[0], 6);
	assert_int_equal(c.ids[1], 1);
	memset(&c, 0, sizeof c);
	struct history_filter g = {.table_hash = "bbbb0003"};
	assert_int_equal(history_list(h, &g, collect_hash, &c, err, sizeof err), 0);
	assert_int_equal(c.n, 1);
	assert_int_equal(c.ids[0], 7);
	history_close(h);
	struct history_open_opts ro = {.read_only = true};
	assert_int_equal(history_open(&h, path, &ro, err, sizeof err), 0);
	history_close(h);
}

static void test_list_filters_newest_first(void **state)
{
	(void)state;
	struct history_db *h;
	char err[256];
	assert_int_equal(history_open(&h, path, NULL, err, sizeof err), 0);
	for (int i = 0; i < 5; i++) {
		char *t = result_text(1000 + i, i % 2 ? "http://b/" : "http://a/");
		struct history_meta m = {.command = "run", .recorded_ms = 1700000000000 + i * 86400000LL};
		assert_int_equal(history_add(h, &m, t, strlen(t), NULL, err, sizeof err), 0);
		free(t);
	}
	struct collect c = {0};
	assert_int_equal(history_list(h, NULL, collect, &c, err, sizeof err), 0);
	assert_int_equal(c.n, 5);
	for (size_t i = 0; i < 5; i++)
		assert_int_equal(c.ids[i], 5 - (int64_t)i);
	memset(&c, 0, sizeof c);
	struct history_filter f = {.target = "http://a/"};
	assert_int_equal(history_list(h, &f, collect, &c, err, sizeof err), 0);
	assert_int_equal(c.n, 3);
	assert_int_equal(c.ids[0], 5);
	assert_int_equal(c.ids[2], 1);
	memset(&c, 0, sizeof c);
	/* 1700000000000 ms is 2023-11-14T22:13:20Z: days 0..4 */
	struct history_filter g = {.since = "2023-11-16", .until = "2023-11-18", .oldest_first = true};
	assert_int_equal(history_list(h, &g, collect, &c, err, sizeof err), 0);
	assert_int_equal(c.n, 2);
	assert_int_equal(c.ids[0], 3);
	assert_int_equal(c.ids[1], 4);
	int64_t last;
	struct history_filter b = {.target = "http://b/"};
	assert_int_equal(history_last_id(h, &b, &last, err, sizeof err), 0);
	assert_int_equal(last, 4);
	history_close(h);
}

static void test_locked_past_timeout(void **state)
{
	(void)state;
	struct history_db *h;
	char err[256];
	assert_int_equal(history_open(&h, path, NULL, err, sizeof err), 0);
	add(h, 1000, "http://a/");
	history_close(h);
	/* another connection holds the write lock */
	sqlite3 *db;
	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL), SQLITE_OK);
	struct history_open_opts o = {.busy_ms = 200};
	assert_int_equal(history_open(&h, path, &o, err, sizeof err), 0);
	char *t = result_text(2000, "http://a/");
	struct history_meta m = {.command = "run", .recorded_ms = 1};
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	int rc = history_add(h, &m, t, strlen(t), NULL, err, sizeof err);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	double waited_ms = (t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) / 1e6;
	assert_int_equal(rc, -EBUSY);
	assert_non_null(strstr(err, "locked"));
	assert_true(waited_ms >= 150);
	/* released: the next write lands, the first row is intact */
	sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
	sqlite3_close(db);
	assert_int_equal(history_add(h, &m, t, strlen(t), NULL, err, sizeof err), 0);
	free(t);
	history_close(h);
	assert_int_equal(sql_int("SELECT count(*) FROM runs"), 2);
}

/* Child: n results into the history, then exit 0 (1 on any failure). */
static void writer(int n, double p50)
{
	struct history_db *h;
	char err[256];
	struct history_open_opts o = {.busy_ms = 20000};
	if (history_open(&h, path, &o, err, sizeof err))
		_exit(1);
	for (int i = 0; i < n; i++) {
		char *t = result_text(p50 + i, "http://w/");
		struct history_meta m = {.command = "run", .recorded_ms = 1700000000000 + i};
		int rc = history_add(h, &m, t, strlen(t), NULL, err, sizeof err);
		free(t);
		if (rc) {
			fprintf(stderr, "writer: %s\n", err);
			_exit(1);
		}
	}
	history_close(h);
	_exit(0);
}

static void test_two_processes_both_land(void **state)
{
	(void)state;
	pid_t a = fork();
	if (a == 0)
		writer(25, 1000);
	pid_t b = fork();
	if (b == 0)
		writer(25, 5000);
	int sa, sb;
	assert_int_equal(waitpid(a, &sa, 0), a);
	assert_int_equal(waitpid(b, &sb, 0), b);
	assert_true(WIFEXITED(sa) && WEXITSTATUS(sa) == 0);
	assert_true(WIFEXITED(sb) && WEXITSTATUS(sb) == 0);
	assert_int_equal(sql_int("SELECT count(*) FROM runs"), 50);
	assert_int_equal(sql_int("SELECT count(*) FROM runs WHERE p50_us < 5000"), 25);
	integrity_ok();
}

/* Child: wait for the parent's go (a byte on fd), open the history, keep it
 * open for hold_ms (as a run does), add one result, exit 0 (1 on failure). */
static void opener(int fd, unsigned hold_ms)
{
	char c;
	if (read(fd, &c, 1) != 1)
		_exit(1);
	struct history_db *h;
	char err[256];
	/* a wait long enough for a starved machine: what is tested is that both
	 * land, not how fast (2 s failed once with two fuzzers on both cores) */
	struct history_open_opts o = {.busy_ms = 20000};
	if (history_open(&h, path, &o, err, sizeof err)) {
		fprintf(stderr, "opener: %s\n", err);
		_exit(1);
	}
	struct timespec d = {0, (long)hold_ms * 1000000L};
	nanosleep(&d, NULL);
	char *t = result_text(1000, "http://o/");
	struct history_meta m = {.command = "run", .recorded_ms = 1};
	int rc = history_add(h, &m, t, strlen(t), NULL, err, sizeof err);
	free(t);
	history_close(h);
	_exit(rc ? 1 : 0);
}

/* Two runs started at once on a history that does not exist yet: both
 * create-or-open it (schema, WAL) while the other holds it open. */
static void test_two_processes_create_it_at_once(void **state)
{
	(void)state;
	for (int round = 0; round < 8; round++) {
		unlink(path);
		char side[160];
		snprintf(side, sizeof side, "%s-wal", path);
		unlink(side);
		snprintf(side, sizeof side, "%s-shm", path);
		unlink(side);
		int p[2];
		assert_int_equal(pipe(p), 0);
		pid_t k[2];
		for (int i = 0; i < 2; i++) {
			k[i] = fork();
			if (k[i] == 0) {
				close(p[1]);
				opener(p[0], 300);
			}
		}
		close(p[0]);
		assert_int_equal(write(p[1], "go", 2), 2);
		close(p[1]);
		for (int i = 0; i < 2; i++) {
			int s;
			assert_int_equal(waitpid(k[i], &s, 0), k[i]);
			assert_true(WIFEXITED(s) && WEXITSTATUS(s) == 0);
		}
		assert_int_equal(sql_int("SELECT count(*) FROM runs"), 2);
		assert_int_equal(sql_int("PRAGMA application_id"), HISTORY_APP_ID);
	}
}

static void test_kill_mid_write_leaves_it_consistent(void **state)
{
	(void)state;
	/* created first, so the child only writes */
	struct history_db *h;
	char err[256];
	assert_int_equal(history_open(&h, path, NULL, err, sizeof err), 0);
	history_close(h);
	pid_t c = fork();
	if (c == 0)
		writer(1000000, 1000);
	/* long enough for many transactions, in the middle of one */
	struct timespec d = {0, 300 * 1000 * 1000};
	nanosleep(&d, NULL);
	kill(c, SIGKILL);
	int s;
	assert_int_equal(waitpid(c, &s, 0), c);
	assert_true(WIFSIGNALED(s));
	/* the next opener recovers the WAL; every row is whole */
	assert_int_equal(history_open(&h, path, NULL, err, sizeof err), 0);
	history_close(h);
	integrity_ok();
	long long n = sql_int("SELECT count(*) FROM runs");
	assert_true(n > 0);
	assert_int_equal(sql_int("SELECT count(*) FROM runs WHERE json_valid(result_json) AND "
				 "p50_us IS NOT NULL"),
			 n);
	assert_int_equal(history_open(&h, path, NULL, err, sizeof err), 0);
	add(h, 1, "http://after/");
	history_close(h);
	assert_int_equal(sql_int("SELECT count(*) FROM runs"), n + 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_new_database_schema, setup, teardown),
		cmocka_unit_test_setup_teardown(test_migration_keeps_rows, setup, teardown),
		cmocka_unit_test_setup_teardown(test_refuses_foreign_corrupt_newer, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_missing_and_read_only, setup, teardown),
		cmocka_unit_test_setup_teardown(test_rejects_a_non_result, setup, teardown),
		cmocka_unit_test_setup_teardown(test_workload_hash_stored_listed_migrated, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_list_filters_newest_first, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sessions_stored_and_listed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_migration_fills_sessions, setup, teardown),
		cmocka_unit_test_setup_teardown(test_locked_past_timeout, setup, teardown),
		cmocka_unit_test_setup_teardown(test_two_processes_both_land, setup, teardown),
		cmocka_unit_test_setup_teardown(test_two_processes_create_it_at_once, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_kill_mid_write_leaves_it_consistent, setup,
						teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
