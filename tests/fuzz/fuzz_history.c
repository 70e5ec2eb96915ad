/* libFuzzer harness for the run history: the stored-result reader of the
 * history and pacer diff (src/history/headline.c, diff.c, behind
 * result_read_mem), and the history file itself (src/history/history.c,
 * history_check.c), which pacer does not trust.
 *
 * Input: the bytes of a stored result (what `pacer history show` and `pacer
 * diff FILE.db:ID` read back); or, when it starts with '#', a --fail-on
 * expression (the rest, cut at the first NUL); or, when it starts with
 * SQLite's header string, a history file.
 *
 * A result that does not load fails with a PACER_E* code (or -ENOMEM) and
 * one terminated line. One that loads gives headline figures that are NaN
 * or finite, a terminated target; diffed against itself it is comparable,
 * every ratio is 1 (or undefined) and nothing is significant; diffed both
 * ways against a fixed valid run it never crashes, rows stay within
 * HM_COUNT, a bootstrap row has at least two repetitions each side, and
 * comparability names a field exactly when it fails. A rules expression
 * parses to 1..DIFF_MAX_RULES rules with a finite threshold, or fails with
 * PACER_EPARSE and one line.
 *
 * A history file (written to a scratch folder) is opened to read and then
 * to record: each open, listing and read either works or fails with one of
 * history.h's codes and one line naming the file; the rows listed have
 * their strings, and each one read back is NUL-terminated at its length;
 * and when recording the fixed valid run succeeds, that row reads back
 * byte for byte (pacer never says "stored" for a row that is not there).
 * Violations abort(). */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "history/diff.h"
#include "history/headline.h"
#include "history/history.h"
#include "doc/read.h"
#include "util/err.h"

#define FUZZ_NAME "fuzz_history"
#include "common/fuzz_check.h"

static const char baseline[] =
	"{\"schema_version\":\"2.0\",\"kind\":\"run\",\"pacer\":{\"version\":\"0.1.0\","
	"\"commit\":\"x\"},\"mode\":\"live\",\"started_at\":\"2026-01-01T00:00:00.000Z\","
	"\"interrupted\":false,\"environment\":{\"cpu_model\":\"c\",\"cores\":2,\"arch\":\"x\"},"
	"\"plan\":{\"url\":\"http://h/\",\"loop\":\"open\",\"rate_per_s\":100,"
	"\"workload\":{\"sha256\":\"ab\"}},\"warnings\":[],\"series\":[],"
	"\"generator\":{\"threads\":1},\"measure\":{\"rate\":{\"achieved_per_s\":100},"
	"\"errors\":{\"total\":1,\"pct\":1.0},\"success\":{\"of\":100},"
	"\"latency\":{\"count\":100,\"p50_us\":1000,\"p90_us\":1000,\"p99_us\":2000,"
	"\"p99_9_us\":2000,\"min_us\":1000,\"max_us\":2000,\"mean_us\":1100,"
	"\"hist\":{\"unit\":\"ns\",\"sub_bits\":11,\"counts\":[[999936,90],[1998848,10]]}}},"
	"\"repetitions\":[{\"p50_us\":1000,\"achieved_per_s\":100},"
	"{\"p50_us\":1010,\"achieved_per_s\":99}]}";

static bool one_line(const char *s, size_t cap)
{
	return memchr(s, '\0', cap) != NULL && strchr(s, '\n') == NULL && s[0] != '\0';
}

static void check_diff(const struct diff_result *d)
{
	CHECK(d->n_rows <= HM_COUNT);
	CHECK(memchr(d->field, '\0', sizeof d->field));
	CHECK(d->comparable == (d->field[0] == '\0'));
	for (size_t i = 0; i < d->n_rows; i++) {
		const struct diff_row *r = &d->rows[i];
		CHECK((unsigned)r->m < HM_COUNT);
		CHECK(isfinite(r->old_v) && isfinite(r->new_v));
		if (r->method == DIFF_BOOTSTRAP)
			CHECK(r->n_old >= 2 && r->n_new >= 2);
		CHECK(diff_method_name(r->method) != NULL);
	}
}

static void fuzz_rules(const uint8_t *data, size_t size)
{
	char text[512];
	size_t n = size < sizeof text - 1 ? size : sizeof text - 1;
	memcpy(text, data, n);
	text[n] = '\0';
	struct diff_rule r[DIFF_MAX_RULES];
	size_t nr = 99;
	char err[256] = "";
	int rc = diff_rules_parse(text, r, DIFF_MAX_RULES, &nr, err, sizeof err);
	if (rc) {
		CHECK(rc == PACER_EPARSE);
		CHECK(one_line(err, sizeof err));
		return;
	}
	CHECK(nr >= 1 && nr <= DIFF_MAX_RULES);
	for (size_t i = 0; i < nr; i++) {
		CHECK((unsigned)r[i].m < HM_COUNT);
		CHECK(r[i].op == '<' || r[i].op == '>');
		CHECK(isfinite(r[i].threshold));
		CHECK(!r[i].pp || r[i].m == HM_ERRORS);
	}
}

/* ---- a history file ---------------------------------------------------- */

static char scratch[64];       /* a folder of this process's, made once */
static char db_path[96], side_path[112];

static void scratch_remove(void)
{
	static const char *const beside[] = {"", "-wal", "-shm", "-journal"};
	for (size_t i = 0; i < sizeof beside / sizeof beside[0]; i++) {
		snprintf(side_path, sizeof side_path, "%s%s", db_path, beside[i]);
		unlink(side_path);
	}
}

static void scratch_cleanup(void)
{
	scratch_remove();
	rmdir(scratch);
}

/* A failure of history.h: a code it names and one line about the file. */
static void check_failure(int rc, const char *err, size_t cap)
{
	CHECK(rc == PACER_EPARSE || rc == PACER_EUNSUPPORTED || rc == PACER_ETOOBIG ||
	      rc == -ENOENT || rc == -EINVAL || rc == -EACCES || rc == -EBUSY || rc == -EIO ||
	      rc == -ENOMEM);
	if (rc != -ENOMEM) {
		CHECK(one_line(err, cap));
		CHECK(strstr(err, db_path) != NULL);
	}
}

struct rows {
	int64_t ids[8];
	size_t n;
};

static int row_seen(void *arg, const struct history_row *r)
{
	struct rows *rs = arg;
	CHECK(r->recorded_at && r->command && r->git_commit);
	CHECK(r->h.kind && r->h.started_at && r->h.table_hash && r->h.cpu_model);
	CHECK(memchr(r->h.target, '\0', sizeof r->h.target));
	if (rs->n < sizeof rs->ids / sizeof rs->ids[0])
		rs->ids[rs->n++] = r->id;
	return 0;
}

static void fuzz_db(const uint8_t *data, size_t size)
{
	if (!scratch[0]) {
		snprintf(scratch, sizeof scratch, "/tmp/pacer-fuzz-history-XXXXXX");
		CHECK(mkdtemp(scratch) != NULL);
		snprintf(db_path, sizeof db_path, "%s/h.db", scratch);
		atexit(scratch_cleanup);
	}
	scratch_remove();
	FILE *f = fopen(db_path, "wb");
	CHECK(f != NULL);
	CHECK(fwrite(data, 1, size, f) == size);
	CHECK(fclose(f) == 0);

	char err[512] = "";
	struct history_db *h = NULL;
	struct history_open_opts ro = {.read_only = true, .busy_ms = 10};
	int rc = history_open(&h, db_path, &ro, err, sizeof err);
	if (rc) {
		CHECK(h == NULL);
		check_failure(rc, err, sizeof err);
	} else {
		struct history_filter lim = {.limit = 8};
		struct rows rs = {.n = 0};
		rc = history_list(h, &lim, row_seen, &rs, err, sizeof err);
		if (rc)
			check_failure(rc, err, sizeof err);
		for (size_t i = 0; i < rs.n; i++) {
			char *json = NULL;
			size_t len = 0;
			rc = history_get(h, rs.ids[i], &json, &len, err, sizeof err);
			if (rc) {
				CHECK(json == NULL);
				check_failure(rc, err, sizeof err);
				continue;
			}
			CHECK(json[len] == '\0');
			free(json);
		}
		history_close(h);
	}

	/* to record: the fixed valid run, stored means stored */
	struct history_open_opts rw = {.busy_ms = 10};
	rc = history_open(&h, db_path, &rw, err, sizeof err);
	if (rc) {
		CHECK(h == NULL);
		check_failure(rc, err, sizeof err);
		return;
	}
	struct history_meta m = {.command = "run", .recorded_ms = 1700000000000};
	int64_t id = 0;
	rc = history_add(h, &m, baseline, sizeof baseline - 1, &id, err, sizeof err);
	if (rc) {
		check_failure(rc, err, sizeof err);
	} else {
		CHECK(id > 0);
		char *json = NULL;
		size_t len = 0;
		CHECK(history_get(h, id, &json, &len, err, sizeof err) == 0);
		CHECK(len == sizeof baseline - 1 && !memcmp(json, baseline, len));
		free(json);
	}
	history_close(h);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size && data[0] == '#') {
		fuzz_rules(data + 1, size - 1);
		return 0;
	}
	if (size >= 16 && !memcmp(data, "SQLite format 3", 16)) {
		fuzz_db(data, size);
		return 0;
	}
	struct loaded_result r, base;
	char err[512] = "";
	int rc = result_read_mem(&r, (const char *)data, size, "stored.json", err, sizeof err);
	if (rc) {
		CHECK(rc == PACER_EPARSE || rc == PACER_EUNSUPPORTED || rc == PACER_ETOOBIG ||
		      rc == -ENOMEM);
		CHECK(one_line(err, sizeof err));
		return 0;
	}
	struct history_headline h;
	history_headline_of(&r, &h);
	CHECK(memchr(h.target, '\0', sizeof h.target));
	CHECK(h.kind && h.started_at && h.mode && h.pacer_version && h.cpu_model);
	for (int i = 0; i < HM_COUNT; i++)
		CHECK(isnan(h.v[i]) || isfinite(h.v[i]));

	static struct diff_result d;
	diff_results(&r, &r, 0.05, &d);
	check_diff(&d);
	CHECK(d.comparable);
	for (size_t i = 0; i < d.n_rows; i++) {
		CHECK(!d.rows[i].significant || d.rows[i].m == HM_ERRORS);
		CHECK(!isfinite(d.rows[i].ratio) || fabs(d.rows[i].ratio - 1) < 1e-9);
	}
	CHECK(result_read_mem(&base, baseline, sizeof baseline - 1, "baseline.json", err,
			      sizeof err) == 0);
	diff_results(&base, &r, 0.05, &d);
	check_diff(&d);
	diff_results(&r, &base, 0.05, &d);
	check_diff(&d);
	result_free(&base);
	result_free(&r);
	return 0;
}
