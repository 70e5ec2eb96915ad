/* Tests of the report file and folder I/O in the CLI (src/cli/report_io.c):
 * a result file read by its path (missing, a folder, over the cap by its
 * size before any byte is read, a real round trip), and the report folder
 * written from a loaded result or a file: parents created, every file of
 * report_dir_* there with exactly its bytes and no temporary left, files
 * replaced by a second write, a file in the way named in the error. */
#include <dirent.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/check.h"
#include "common/tmpdir.h"
#include "common/doc_fixtures.h"
#include "cli/report_io.h"
#include "report/render.h"
#include "util/err.h"
#include "util/file.h"

static void test_result_load(void **state)
{
	(void)state;
	struct loaded_result r;
	char err[512];
	int rc = cli_result_load(&r, "/nonexistent/pacer/result.json", err, sizeof err);
	assert_int_equal(rc, -ENOENT);
	CHECK(strstr(err, "/nonexistent/pacer/result.json: cannot read") != NULL, "'%s'", err);
	rc = cli_result_load(&r, "/", err, sizeof err);
	CHECK(rc == -EISDIR, "rc %d", rc);
	assert_string_equal(err, "/: cannot read: is a directory");
	/* a sparse file over the cap is refused before it is read */
	char path[] = "/tmp/pacer-rr-XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, (off_t)RESULT_READ_CAP + 1), 0);
	close(fd);
	rc = cli_result_load(&r, path, err, sizeof err);
	unlink(path);
	assert_int_equal(rc, PACER_ETOOBIG);
	CHECK(strstr(err, ": larger than 256 MiB") != NULL, "'%s'", err);
	/* not a result: result_read_mem's message, naming the file */
	strcpy(path, "/tmp/pacer-rr-XXXXXX");
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "[1,", 3), 3);
	close(fd);
	rc = cli_result_load(&r, path, err, sizeof err);
	unlink(path);
	assert_int_equal(rc, PACER_EPARSE);
	CHECK(!strncmp(err, path, strlen(path)) && strstr(err, ": not JSON"), "'%s'", err);
	/* a real file round trip */
	strcpy(path, "/tmp/pacer-rr-XXXXXX");
	fd = mkstemp(path);
	assert_true(fd >= 0);
	char *text = fx_text(fx_run());
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	rc = cli_result_load(&r, path, err, sizeof err);
	unlink(path);
	assert_int_equal(rc, 0);
	assert_string_equal(r.name, path);
	/* the same id as from the bytes */
	struct loaded_result m;
	assert_int_equal(result_read_mem(&m, text, strlen(text), "x", err, sizeof err), 0);
	assert_string_equal(r.id, m.id);
	result_free(&m);
	result_free(&r);
	free(text);
}

/* dir/name's bytes, or NULL. */
static char *slurp(const char *dir, const char *name)
{
	char p[512];
	snprintf(p, sizeof p, "%s/%s", dir, name);
	char *buf;
	size_t len;
	return file_read_all(p, 1u << 24, &buf, &len) ? NULL : buf;
}

static size_t entries(const char *dir)
{
	DIR *dd = opendir(dir);
	assert_non_null(dd);
	size_t n = 0;
	struct dirent *e;
	while ((e = readdir(dd)))
		if (e->d_name[0] != '.')
			n++;
	closedir(dd);
	return n;
}

/* Every file of the folder, and nothing else, holds report_dir_write's bytes. */
static void check_folder(const struct loaded_result *r, const char *dir)
{
	struct report_dir *d;
	char err[512];
	assert_int_equal(report_dir_open(&d, r, err, sizeof err), 0);
	for (size_t i = 0; i < report_dir_count(d); i++) {
		char *want = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&want, &len);
		assert_int_equal(report_dir_write(d, i, f, err, sizeof err), 0);
		fclose(f);
		char *got = slurp(dir, report_dir_name(d, i));
		CHECK(got && !strcmp(got, want), "%s missing or different", report_dir_name(d, i));
		free(got);
		free(want);
	}
	/* nothing else (no temporary files left) */
	assert_int_equal(entries(dir), report_dir_count(d));
	report_dir_free(d);
}

static void test_folder(void **state)
{
	(void)state;
	char base[64];
	assert_int_equal(tmpdir_make(base, sizeof base, "rdir"), 0);
	char dir[256];
	snprintf(dir, sizeof dir, "%s/a/b", base); /* parents are created */
	struct loaded_result r;
	char err[512];
	assert_int_equal(fx_load(fx_ramp(), &r, err, sizeof err), 0);
	int rc = cli_report_folder_write(&r, dir, err, sizeof err);
	CHECK(rc == 0, "rc %d: %s", rc, err);
	check_folder(&r, dir);
	assert_int_equal(entries(dir), 11); /* 4 charts, 5 documents, hgrm, hlog */
	/* a second write replaces the files */
	char p[512];
	snprintf(p, sizeof p, "%s/report.txt", dir);
	FILE *f = fopen(p, "w");
	fputs("stale", f);
	fclose(f);
	assert_int_equal(cli_report_folder_write(&r, dir, err, sizeof err), 0);
	check_folder(&r, dir);
	result_free(&r);

	/* from a result file, as --report-dir does after a run */
	assert_int_equal(fx_load(fx_compare(), &r, err, sizeof err), 0);
	char json[300];
	snprintf(json, sizeof json, "%s/result.json", base);
	f = fopen(json, "w");
	char *text = fx_text(fx_compare());
	fputs(text, f);
	fclose(f);
	free(text);
	snprintf(dir, sizeof dir, "%s/c", base);
	assert_int_equal(cli_report_folder_write_from(json, dir, err, sizeof err), 0);
	check_folder(&r, dir);
	snprintf(p, sizeof p, "%s/latency.hgrm", dir);
	CHECK(access(p, F_OK) != 0, "compare wrote latency.hgrm");
	/* errors name what failed */
	rc = cli_report_folder_write_from("/nonexistent/r.json", dir, err, sizeof err);
	assert_int_equal(rc, -ENOENT);
	CHECK(strstr(err, "/nonexistent/r.json: cannot read"), "'%s'", err);
	snprintf(dir, sizeof dir, "%s/c/report.md/x", base);
	rc = cli_report_folder_write(&r, dir, err, sizeof err);
	CHECK(rc == -ENOTDIR, "rc %d: %s", rc, err);
	CHECK(strstr(err, "report.md/x: cannot create the folder"), "'%s'", err);
	snprintf(dir, sizeof dir, "%s/c", base);
	snprintf(p, sizeof p, "%s/c/report.html", base);
	assert_int_equal(unlink(p), 0);
	assert_int_equal(mkdir(p, 0700), 0); /* a folder where a file goes */
	snprintf(p, sizeof p, "%s/c/report.html/x", base);
	f = fopen(p, "w");
	fclose(f);
	rc = cli_report_folder_write(&r, dir, err, sizeof err);
	CHECK(rc < 0 && strstr(err, "/c/report.html: "), "rc %d: '%s'", rc, err);
	assert_int_equal(cli_report_folder_write(&r, "", err, sizeof err), -EINVAL);
	result_free(&r);
	assert_int_equal(tmpdir_remove(base), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_result_load),
		cmocka_unit_test(test_folder),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
