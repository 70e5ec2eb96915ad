/* Unit tests: doc/read.c — loading saved results: kinds, schema
 * versions, malformed and incomplete files with one-line messages naming the
 * file (and line/column for bad JSON), the size cap, the typed accessors and
 * histograms rebuilt from saved pairs. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <math.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/check.h"
#include "common/doc_fixtures.h"
#include "doc/read.h"
#include "stats/hist.h"
#include "util/err.h"

static void one_line(const char *err)
{
	CHECK(err[0] != '\0', "empty message");
	CHECK(strchr(err, '\n') == NULL, "message '%s' spans lines", err);
	CHECK(strncmp(err, "fixture.json: ", 14) == 0, "message '%s' does not name the file", err);
}

static void test_kinds(void **state)
{
	(void)state;
	json_t *(*const make[3])(void) = {fx_run, fx_ramp, fx_compare};
	static const enum result_kind kinds[3] = {RESULT_KIND_RUN, RESULT_KIND_RAMP,
						  RESULT_KIND_COMPARE};
	for (size_t i = 0; i < 3; i++) {
		char *text = fx_text(make[i]());
		struct loaded_result r;
		char err[256];
		int rc = fx_load_text(text, &r, err, sizeof err);
		CHECK(rc == 0, "case %zu: rc %d: %s", i, rc, err);
		CHECK(r.kind == kinds[i], "case %zu: kind %d", i, r.kind);
		CHECK(r.schema_major == 1 && r.schema_minor == 0, "version %d.%d", r.schema_major,
		      r.schema_minor);
		CHECK(strlen(r.id) == 16 && strspn(r.id, "0123456789abcdef") == 16, "id '%s'", r.id);
		assert_string_equal(result_kind_name(r.kind),
				    i == 0 ? "run" : i == 1 ? "ramp" : "compare");
		/* the id is a function of the bytes: same bytes, same id */
		struct loaded_result again;
		assert_int_equal(fx_load_text(text, &again, err, sizeof err), 0);
		assert_string_equal(r.id, again.id);
		result_free(&again);
		result_free(&r);
		result_free(&r); /* safe twice */
		free(text);
	}
	struct loaded_result a, b;
	char err[256];
	assert_int_equal(fx_load(fx_run(), &a, err, sizeof err), 0);
	json_t *j = fx_run();
	json_object_set_new(j, "interrupted", json_true());
	assert_int_equal(fx_load(j, &b, err, sizeof err), 0);
	CHECK(strcmp(a.id, b.id) != 0, "different results share the id %s", a.id);
	result_free(&a);
	result_free(&b);
}

static void test_not_json(void **state)
{
	(void)state;
	static const char *const bad[] = {"", "{", "{\"a\":1,}", "[1,2", "nul", "{\"a\":\"\\u0000\"}",
					  "{\n\n  \"schema_version\": \"1.0\",\n  x\n}"};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		struct loaded_result r;
		char err[256];
		int rc = fx_load_text(bad[i], &r, err, sizeof err);
		CHECK(rc == PACER_EPARSE, "case %zu: rc %d", i, rc);
		CHECK(r.root == NULL, "case %zu: tree kept", i);
		one_line(err);
		CHECK(strstr(err, "not JSON") != NULL, "case %zu: '%s'", i, err);
		if (i > 0)
			CHECK(strstr(err, "line ") && strstr(err, "column "), "no position: '%s'", err);
	}
	/* the position is the real one */
	struct loaded_result r;
	char err[256];
	fx_load_text(bad[6], &r, err, sizeof err);
	CHECK(strstr(err, "line 4 column") != NULL, "'%s'", err);
}

static void test_versions(void **state)
{
	(void)state;
	static const struct {
		const char *version;
		int rc;
		const char *says;
	} cases[] = {
		{"1.0", 0, NULL},
		{"1.7", 0, NULL},
		{"2.0", 0, NULL},
		{"2.3", 0, NULL},
		{"3.0", PACER_EUNSUPPORTED, "schema_version 3.0 is not supported"},
		{"0.9", PACER_EUNSUPPORTED, "0.9"},
		{"10.0", PACER_EUNSUPPORTED, "10.0"},
		{"1", PACER_EPARSE, "MAJOR.MINOR"},
		{"1.0.1", PACER_EPARSE, "MAJOR.MINOR"},
		{"one", PACER_EPARSE, "MAJOR.MINOR"},
		{"", PACER_EPARSE, "MAJOR.MINOR"},
		{"99999.0", PACER_EPARSE, "MAJOR.MINOR"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		json_t *j = fx_run();
		json_object_set_new(j, "schema_version", json_string(cases[i].version));
		struct loaded_result r;
		char err[256] = "";
		int rc = fx_load(j, &r, err, sizeof err);
		CHECK(rc == cases[i].rc, "'%s': rc %d want %d (%s)", cases[i].version, rc, cases[i].rc,
		      err);
		if (rc) {
			one_line(err);
			CHECK(strstr(err, cases[i].says) != NULL, "'%s': message '%s'", cases[i].version,
			      err);
		}
		result_free(&r);
	}
	/* not a string, or absent */
	json_t *j = fx_run();
	json_object_set_new(j, "schema_version", json_integer(1));
	struct loaded_result r;
	char err[256];
	assert_int_equal(fx_load(j, &r, err, sizeof err), PACER_EPARSE);
	one_line(err);
	j = fx_run();
	json_object_del(j, "schema_version");
	assert_int_equal(fx_load(j, &r, err, sizeof err), PACER_EPARSE);
	CHECK(strstr(err, "not a pacer result") != NULL, "'%s'", err);
	assert_int_equal(fx_load_text("[1,2,3]", &r, err, sizeof err), PACER_EPARSE);
	CHECK(strstr(err, "not a pacer result") != NULL, "'%s'", err);
}

static void test_kind_and_required(void **state)
{
	(void)state;
	struct loaded_result r;
	char err[256];
	json_t *j = fx_run();
	json_object_set_new(j, "kind", json_string("bench\nmark"));
	assert_int_equal(fx_load(j, &r, err, sizeof err), PACER_EPARSE);
	one_line(err);
	CHECK(strstr(err, "unknown kind 'bench?mark'") != NULL, "'%s'", err);

	j = fx_run();
	json_object_del(j, "kind");
	assert_int_equal(fx_load(j, &r, err, sizeof err), PACER_EPARSE);
	CHECK(strstr(err, "no kind") != NULL, "'%s'", err);

	static const struct {
		json_t *(*fixture)(void);
		const char *field;
		json_t *(*value)(void);
	} missing[] = {
		{fx_run, "measure", NULL},       {fx_run, "plan", NULL},
		{fx_ramp, "steps", NULL},        {fx_compare, "variants", NULL},
		{fx_run, "measure", json_array}, {fx_ramp, "steps", json_object},
		{fx_compare, "variants", json_array},
	};
	for (size_t i = 0; i < sizeof missing / sizeof missing[0]; i++) {
		j = missing[i].fixture();
		if (missing[i].value)
			json_object_set_new(j, missing[i].field, missing[i].value());
		else
			json_object_del(j, missing[i].field);
		int rc = fx_load(j, &r, err, sizeof err);
		CHECK(rc == PACER_EPARSE, "case %zu: rc %d", i, rc);
		one_line(err);
		CHECK(strstr(err, missing[i].field) || strstr(err, "no variants"),
		      "case %zu: '%s' does not name %s", i, err, missing[i].field);
	}
	/* a step that is not an object */
	j = fx_ramp();
	json_array_append_new(json_object_get(j, "steps"), json_integer(3));
	assert_int_equal(fx_load(j, &r, err, sizeof err), PACER_EPARSE);
	CHECK(strstr(err, "steps[3] is not an object") != NULL, "'%s'", err);
}

/* Reading the file is src/cli's (test_report_io); the cap holds for bytes too. */
static void test_over_the_cap(void **state)
{
	(void)state;
	struct loaded_result r;
	char err[512];
	/* refused by length, the bytes are never read */
	static const char tiny[] = "{}";
	int rc = result_read_mem(&r, tiny, (size_t)RESULT_READ_CAP + 1, "big.json", err, sizeof err);
	assert_int_equal(rc, PACER_ETOOBIG);
	CHECK(strstr(err, "big.json: larger than 256 MiB") != NULL, "'%s'", err);
}

static void test_accessors(void **state)
{
	(void)state;
	struct loaded_result r;
	char err[256];
	assert_int_equal(fx_load(fx_run(), &r, err, sizeof err), 0);
	double d = -1;
	assert_true(rr_num(r.root, "measure.latency.count", &d));
	assert_true(d == 1000);
	assert_true(rr_num(r.root, "measure.rate.achieved_per_s", &d) && d == 500.0);
	/* wrong types and paths are "absent" */
	d = -1;
	assert_false(rr_num(r.root, "plan.url", &d));
	assert_false(rr_num(r.root, "plan.requests", &d)); /* null */
	assert_false(rr_num(r.root, "plan.url.x", &d));
	assert_false(rr_num(r.root, "measure..count", &d));
	assert_false(rr_num(r.root, "nope", &d));
	assert_true(d == -1);
	assert_true(rr_num_or(r.root, "nope", 42) == 42);
	assert_string_equal(rr_str(r.root, "plan.url"), "http://127.0.0.1:8080/x");
	assert_null(rr_str(r.root, "plan.seed"));
	assert_null(rr_str(NULL, "plan.url"));
	bool b = true;
	assert_true(rr_bool(r.root, "interrupted", &b) && !b);
	assert_false(rr_bool(r.root, "plan", &b));
	assert_false(rr_true(r.root, "interrupted"));
	assert_non_null(rr_arr(r.root, "series"));
	assert_null(rr_arr(r.root, "measure"));
	assert_non_null(rr_obj(r.root, "measure"));
	assert_int_equal(rr_len(r.root, "series"), 2);
	assert_int_equal(rr_len(r.root, "measure"), 0);
	assert_ptr_equal(rr_get(r.root, ""), r.root);
	assert_ptr_equal(rr_get(r.root, NULL), r.root);
	/* a key longer than the path buffer is absent, not truncated */
	char longpath[300];
	memset(longpath, 'a', sizeof longpath - 1);
	longpath[sizeof longpath - 1] = '\0';
	assert_null(rr_get(r.root, longpath));
	result_free(&r);
}

static json_t *hist_json(const char *text)
{
	return fx_parse(text);
}

static void test_hist(void **state)
{
	(void)state;
	struct hist h;
	char err[256];
	json_t *j = hist_json("{\"unit\":\"ns\",\"sub_bits\":11,\"counts\":" LAT_PAIRS "}");
	assert_int_equal(rr_hist(j, &h, err, sizeof err), 0);
	assert_int_equal(h.total, 1000);
	assert_int_equal(h.sub_bits, 11);
	assert_int_equal(h.max_value, HIST_MAX_NS);
	assert_int_equal(h.min, 1000);
	assert_int_equal(h.max, 19988480);
	assert_int_equal(hist_percentile(&h, 50), 999936 + 511);
	hist_free(&h);
	json_decref(j);

	static const struct {
		const char *text, *says;
	} bad[] = {
		{"[]", "not an object"},
		{"{\"unit\":\"ms\",\"counts\":[]}", "unit 'ms'"},
		{"{\"sub_bits\":1,\"counts\":[]}", "sub_bits"},
		{"{\"sub_bits\":30,\"counts\":[]}", "sub_bits"},
		{"{\"sub_bits\":11.5,\"counts\":[]}", "sub_bits"},
		{"{\"max_value\":0,\"counts\":[]}", "max_value"},
		{"{\"max_value\":2251799813685248,\"counts\":[]}", "max_value"},
		{"{\"counts\":{}}", "counts is not an array"},
		{"{}", "counts is not an array"},
		{"{\"counts\":[[1]]}", "counts[0]"},
		{"{\"counts\":[[1,2],[3,-4]]}", "counts[1]"},
		{"{\"counts\":[[1,2],[\"3\",4]]}", "counts[1]"},
		{"{\"counts\":[[1.5,2]]}", "counts[0]"},
		{"{\"max_value\":100,\"counts\":[[101,1]]}", "above max_value"},
		{"{\"counts\":[[1,4611686018427387904],[2,4611686018427387904]]}", "overflow"},
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		j = hist_json(bad[i].text);
		memset(&h, 0x5a, sizeof h);
		int rc = rr_hist(j, &h, err, sizeof err);
		CHECK(rc == PACER_EPARSE, "case %zu: rc %d", i, rc);
		CHECK(strstr(err, bad[i].says) != NULL, "case %zu: '%s'", i, err);
		CHECK(h.counts == NULL && h.total == 0, "case %zu: not zeroed", i);
		json_decref(j);
	}
	/* integral reals are accepted (another writer may emit 5.0) */
	j = hist_json("{\"counts\":[[5.0,2.0]]}");
	assert_int_equal(rr_hist(j, &h, err, sizeof err), 0);
	assert_int_equal(h.total, 2);
	hist_free(&h);
	json_decref(j);
}

static void test_timing_hist_exact(void **state)
{
	(void)state;
	struct loaded_result r;
	char err[256];
	assert_int_equal(fx_load(fx_run(), &r, err, sizeof err), 0);
	struct hist h;
	assert_int_equal(rr_timing_hist(rr_get(r.root, "measure.latency"), &h, err, sizeof err), 0);
	/* min_us 1.0 (1000 ns, its own bucket) and max_us 19988.48 are taken as is */
	assert_int_equal(h.min, 1000);
	assert_int_equal(h.max, 19988480);
	CHECK(hist_mean(&h) > 999998 && hist_mean(&h) < 1000000, "mean %f", hist_mean(&h));
	hist_free(&h);
	/* an exact max outside the top bucket is ignored (a hand-edited file) */
	json_t *t = fx_parse("{\"max_us\":1.0,\"min_us\":99999.0,\"hist\":{\"counts\":[[2000,3]]}}");
	assert_int_equal(rr_timing_hist(t, &h, err, sizeof err), 0);
	assert_int_equal(h.max, 2000);
	assert_int_equal(h.min, 2000);
	hist_free(&h);
	json_decref(t);
	t = fx_parse("{\"count\":0}");
	assert_int_equal(rr_timing_hist(t, &h, err, sizeof err), PACER_EPARSE);
	assert_string_equal(err, "no histogram");
	json_decref(t);
	result_free(&r);
}

/* A 1.0 result is upgraded on load: its transport kinds move to
 * transport_errors, and errors counts every request that did not succeed. */
static void test_upgrade_v1(void **state)
{
	(void)state;
	json_t *j = fx_run(); /* 1.0: 1,000 sent, 990 200s, 10 503s, no success block */
	json_t *e = json_object_get(json_object_get(j, "measure"), "errors");
	json_object_set_new(e, "timeout", json_integer(3));
	json_object_set_new(e, "connect", json_integer(4));
	json_object_set_new(e, "total", json_integer(7));
	struct loaded_result r;
	char err[256];
	assert_int_equal(fx_load(j, &r, err, sizeof err), 0);
	const json_t *m = rr_get(r.root, "measure");
	assert_true(rr_num_or(m, "errors.total", -1) == 13);           /* 10 x 503 + 3 timeouts */
	assert_true(rr_num_or(m, "errors.failed_responses", -1) == 10);
	assert_true(rr_num_or(m, "errors.transport", -1) == 3);        /* connect is not a request */
	assert_true(fabs(rr_num_or(m, "error_pct", -1) - 1.3) < 1e-9);
	assert_true(rr_num_or(m, "transport_errors.connect", -1) == 4);
	assert_true(rr_num_or(m, "transport_errors.requests", -1) == 3);
	/* with a success block, its failed count is the 1.x figure of errors */
	j = fx_run();
	json_object_set_new(json_object_get(j, "measure"), "success",
			    fx_parse("{\"rule\":\"status == 200\",\"ok\":400,\"failed\":600,"
				     "\"ok_pct\":40.0}"));
	result_free(&r);
	assert_int_equal(fx_load(j, &r, err, sizeof err), 0);
	assert_true(rr_num_or(rr_get(r.root, "measure"), "errors.total", -1) == 600);
	/* a 2.0 result is taken as it is */
	j = fx_run();
	json_object_set_new(j, "schema_version", json_string("2.0"));
	result_free(&r);
	assert_int_equal(fx_load(j, &r, err, sizeof err), 0);
	assert_null(rr_get(r.root, "measure.transport_errors"));
	result_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kinds),
		cmocka_unit_test(test_not_json),
		cmocka_unit_test(test_versions),
		cmocka_unit_test(test_kind_and_required),
		cmocka_unit_test(test_over_the_cap),
		cmocka_unit_test(test_accessors),
		cmocka_unit_test(test_hist),
		cmocka_unit_test(test_timing_hist_exact),
		cmocka_unit_test(test_upgrade_v1),
	};
	return cmocka_run_group_tests_name("report/result_read", tests, NULL, NULL);
}
