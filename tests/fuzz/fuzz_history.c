/* libFuzzer harness for the stored-result reader of the run history and
 * pacer diff (src/history/headline.c, diff.c, behind result_read_mem).
 *
 * Input: the bytes of a stored result (what `pacer history show` and `pacer
 * diff FILE.db:ID` read back), or, when it starts with '#', a --fail-on
 * expression (the rest, cut at the first NUL).
 *
 * A result that does not load fails with a PACER_E* code (or -ENOMEM) and
 * one terminated line. One that loads gives headline figures that are NaN
 * or finite, a terminated target; diffed against itself it is comparable,
 * every ratio is 1 (or undefined) and nothing is significant; diffed both
 * ways against a fixed valid run it never crashes, rows stay within
 * HM_COUNT, a bootstrap row has at least two repetitions each side, and
 * comparability names a field exactly when it fails. A rules expression
 * parses to 1..DIFF_MAX_RULES rules with a finite threshold, or fails with
 * PACER_EPARSE and one line. Violations abort(). */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "history/diff.h"
#include "history/headline.h"
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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size && data[0] == '#') {
		fuzz_rules(data + 1, size - 1);
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
