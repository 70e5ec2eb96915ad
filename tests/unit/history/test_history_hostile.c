/* The run history store against files it must not trust
 * (src/history/history.c, issue 32): a FIFO or a device as the history or
 * beside it, a read-only file, damaged pages, schema objects made outside
 * pacer (a trigger that deletes what pacer stores, a changed table, an
 * extra index). Each is refused at the open, before any load, with one
 * line naming the file and the problem, and the file is left as it was. */
#include <errno.h>
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
	if (tmpdir_make(dir, sizeof dir, "histh") < 0)
		return -1;
	tmpdir_path(path, sizeof path, dir, "h.db");
	/* a FIFO that regresses into a blocking open fails the test, not CI */
	alarm(30);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	alarm(0);
	return tmpdir_remove(dir);
}

static void assert_one_line_naming(const char *err, const char *what)
{
	if (!strstr(err, path) || !strstr(err, what) || strchr(err, '\n'))
		fail_msg("expected one line naming %s and '%s', got: %s", path, what, err);
}

/* A history at path with n runs, closed. */
static void make_history(int n)
{
	struct history_db *h;
	char err[256] = "";
	assert_int_equal(history_open(&h, path, NULL, err, sizeof err), 0);
	for (int i = 0; i < n; i++) {
		char *t = fx_text(fx_run());
		struct history_meta m = {.command = "run", .recorded_ms = 1700000000000 + i};
		assert_int_equal(history_add(h, &m, t, strlen(t), NULL, err, sizeof err), 0);
		free(t);
	}
	history_close(h);
}

/* SQL on the raw file through a connection of the test's own. */
static void sql(const char *text)
{
	sqlite3 *db;
	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	char *msg = NULL;
	if (sqlite3_exec(db, text, NULL, NULL, &msg) != SQLITE_OK)
		fail_msg("%s: %s", text, msg);
	sqlite3_close(db);
}

static long long sql_int(const char *text)
{
	sqlite3 *db;
	assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	sqlite3_stmt *st;
	assert_int_equal(sqlite3_prepare_v2(db, text, -1, &st, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_step(st), SQLITE_ROW);
	long long v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	sqlite3_close(db);
	return v;
}

static void test_fifo_and_device(void **state)
{
	(void)state;
	struct history_db *h;
	char err[256] = "";
	struct history_open_opts ro = {.read_only = true};
	assert_int_equal(mkfifo(path, 0600), 0);
	assert_int_equal(history_open(&h, path, NULL, err, sizeof err), -EINVAL);
	assert_null(h);
	assert_one_line_naming(err, "a FIFO, not a history database");
	assert_int_equal(history_open(&h, path, &ro, err, sizeof err), -EINVAL);
	assert_one_line_naming(err, "a FIFO");
	unlink(path);

	/* a FIFO where SQLite keeps its WAL */
	make_history(1);
	char wal[160];
	snprintf(wal, sizeof wal, "%s-wal", path);
	unlink(wal);
	assert_int_equal(mkfifo(wal, 0600), 0);
	assert_int_equal(history_open(&h, path, &ro, err, sizeof err), -EINVAL);
	assert_one_line_naming(err, "-wal is a FIFO");
	assert_int_equal(history_open(&h, path, NULL, err, sizeof err), -EINVAL);
	unlink(wal);

	/* a device */
	char saved[sizeof path];
	memcpy(saved, path, sizeof path);
	snprintf(path, sizeof path, "/dev/null");
	assert_int_equal(history_open(&h, path, NULL, err, sizeof err), -EINVAL);
	assert_one_line_naming(err, "a device");
	memcpy(path, saved, sizeof path);
}

/* In a child process without the rights to write path (as nobody when the
 * tests run as root, whom permissions do not stop). */
static void test_read_only_file(void **state)
{
	(void)state;
	make_history(2);
	assert_int_equal(chmod(path, 0444), 0);
	assert_int_equal(chmod(dir, 0777), 0); /* SQLite may create FILE-shm beside it */
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		if (geteuid() == 0 && (setgid(65534) || setuid(65534)))
			_exit(3);
		struct history_db *h;
		char err[256] = "";
		int rc = history_open(&h, path, NULL, err, sizeof err);
		if (rc != -EACCES || !strstr(err, "read-only: pacer cannot record into it") ||
		    !strstr(err, path)) {
			fprintf(stderr, "rc %d: %s\n", rc, err);
			_exit(1);
		}
		/* reading it is fine */
		struct history_open_opts ro = {.read_only = true};
		rc = history_open(&h, path, &ro, err, sizeof err);
		history_close(h);
		_exit(rc == 0 ? 0 : 2);
	}
	int st;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
	chmod(path, 0644);
	assert_int_equal(sql_int("SELECT count(*) FROM runs"), 2);
}

/* Damaged pages: the table's root page overwritten in a copy. The open for
 * recording checks the pages (before the load) and says "damaged", not
 * "not a pacer history"; a reader finds it where it reads. */
static void test_damaged_pages(void **state)
{
	(void)state;
	make_history(3);
	long long page = sql_int("PRAGMA page_size");
	long long root = sql_int("SELECT rootpage FROM sqlite_master WHERE name = 'runs'");
	FILE *f = fopen(path, "r+b");
	assert_non_null(f);
	assert_int_equal(fseek(f, (long)((root - 1) * page), SEEK_SET), 0);
	unsigned char junk[64];
	memset(junk, 0xff, sizeof junk);
	assert_int_equal(fwrite(junk, 1, sizeof junk, f), sizeof junk);
	fclose(f);
	struct history_db *h;
	char err[256] = "";
	assert_int_equal(history_open(&h, path, NULL, err, sizeof err), PACER_EPARSE);
	assert_one_line_naming(err, "damaged (PRAGMA quick_check: ");
	assert_null(strstr(err, "not a pacer history"));
	struct history_open_opts ro = {.read_only = true};
	assert_int_equal(history_open(&h, path, &ro, err, sizeof err), 0);
	int64_t id;
	assert_int_equal(history_last_id(h, NULL, &id, err, sizeof err), PACER_EPARSE);
	assert_one_line_naming(err, "damaged (database disk image is malformed");
	history_close(h);
}

/* Schema objects made outside pacer are refused, for reading and
 * recording alike, and left in place; ANALYZE's statistics are fine. */
#define STR_(x) #x
#define STR(x) STR_(x) /* the schema version as text */

static void test_foreign_schema_objects(void **state)
{
	(void)state;
	static const struct {
		const char *sql, *want;
	} cases[] = {
		{"CREATE TRIGGER wipe AFTER INSERT ON runs BEGIN DELETE FROM runs; END;",
		 "not pacer's schema: trigger 'wipe' was added outside pacer"},
		{"CREATE TRIGGER keep BEFORE INSERT ON runs BEGIN SELECT RAISE(IGNORE); END;",
		 "trigger 'keep' was added"},
		{"ALTER TABLE runs ADD COLUMN note TEXT DEFAULT 'x';",
		 "table 'runs' was made or changed outside pacer"},
		{"CREATE INDEX mine ON runs(p99_us);", "index 'mine' was added"},
		{"CREATE VIEW v AS SELECT id FROM runs;", "view 'v' was added"},
		{"CREATE TABLE notes(x);", "table 'notes' was made or changed"},
		{"DROP INDEX runs_target;", "its index 'runs_target' of schema version " STR(
						    HISTORY_SCHEMA_VERSION) " is "
									    "missing"},
	};
	struct history_open_opts ro = {.read_only = true};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		make_history(1);
		sql(cases[i].sql);
		struct history_db *h;
		char err[512] = "";
		assert_int_equal(history_open(&h, path, NULL, err, sizeof err), PACER_EPARSE);
		assert_null(h);
		assert_one_line_naming(err, cases[i].want);
		assert_int_equal(history_open(&h, path, &ro, err, sizeof err), PACER_EPARSE);
		assert_one_line_naming(err, cases[i].want);
		assert_int_equal(sql_int("SELECT count(*) FROM runs"), 1);
		char side[160];
		unlink(path);
		snprintf(side, sizeof side, "%s-wal", path);
		unlink(side);
		snprintf(side, sizeof side, "%s-shm", path);
		unlink(side);
	}
	make_history(2);
	sql("ANALYZE;");
	assert_true(sql_int("SELECT count(*) FROM sqlite_master WHERE name LIKE 'sqlite_stat%'") >
		    0);
	make_history(1); /* opened, checked and written to again */
	assert_int_equal(sql_int("SELECT count(*) FROM runs"), 3);
}

/* A trigger created after pacer opened the history (its check passed)
 * does not run: pacer's connection runs no trigger, and the row is
 * stored and reads back. */
static void test_trigger_after_open_does_not_run(void **state)
{
	(void)state;
	make_history(1);
	struct history_db *h;
	char err[256] = "";
	assert_int_equal(history_open(&h, path, NULL, err, sizeof err), 0);
	sql("CREATE TRIGGER wipe AFTER INSERT ON runs BEGIN DELETE FROM runs; END;");
	char *t = fx_text(fx_run());
	struct history_meta m = {.command = "run", .recorded_ms = 1};
	int64_t id = 0;
	assert_int_equal(history_add(h, &m, t, strlen(t), &id, err, sizeof err), 0);
	free(t);
	history_close(h);
	assert_int_equal(id, 2);
	assert_int_equal(sql_int("SELECT count(*) FROM runs"), 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_fifo_and_device, setup, teardown),
		cmocka_unit_test_setup_teardown(test_read_only_file, setup, teardown),
		cmocka_unit_test_setup_teardown(test_damaged_pages, setup, teardown),
		cmocka_unit_test_setup_teardown(test_foreign_schema_objects, setup, teardown),
		cmocka_unit_test_setup_teardown(test_trigger_after_open_does_not_run, setup,
						teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
