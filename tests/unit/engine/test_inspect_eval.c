/* Response inspection at run time (src/engine/inspect_eval.c): the JSON
 * path scanner, server-time extraction, the capture's body cap, and rules
 * evaluated on captured responses counted into a phase's stats. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "engine/inspect_eval.h"
#include "http/h1.h"
#include "plan/inspect.h"
#include "result/result.h"
#include "util/err.h"

/* Parse one whole response with a capture attached. */
static void parse(const char *resp, struct h1_capture *cap, struct h1_resp *r)
{
	h1_resp_init(r, false);
	h1_resp_capture(r, cap);
	size_t len = strlen(resp);
	/* byte at a time: capture must not depend on the split */
	for (size_t i = 0; i < len; i++)
		assert_true(h1_resp_feed(r, resp + i, 1) >= 0);
	assert_true(h1_resp_done(r));
}

static void test_json_number(void **state)
{
	(void)state;
	static const struct {
		const char *json, *path;
		int rc;
		double v;
	} cases[] = {
		{"{\"a\":1.5}", "a", 0, 1.5},
		{"{\"x\":\"a,}\\\"\",\"a\":{\"b\":[10,{\"c\":2e3}]}}", "a.b.1.c", 0, 2000},
		{" { \"a\" : { \"b\" : 7 } } ", "a.b", 0, 7},
		{"{\"a\":[1,2,3]}", "a.2", 0, 3},
		{"{\"a\":[1,2,3]}", "a.3", -1, 0},
		{"{\"a\":\"12\"}", "a", -1, 0},   /* a string is not a number */
		{"{\"a\":{}}", "a.b", -1, 0},
		{"{\"b\":1}", "a", -1, 0},
		{"[1]", "a", -1, 0},
		{"{\"a\":1", "b", -1, 0},         /* truncated before the key */
		{"{\"a\":nan}", "a", -1, 0},
		{"", "a", -1, 0},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		double v = -1;
		int rc = inspect_json_number(cases[i].json, strlen(cases[i].json), cases[i].path, &v);
		assert_int_equal(rc, cases[i].rc);
		if (!rc)
			assert_true(v == cases[i].v);
	}
	/* nesting is bounded */
	char deep[400];
	size_t n = 0;
	for (int i = 0; i < 100; i++)
		deep[n++] = '[';
	memcpy(deep + n, "1", 1);
	n++;
	for (int i = 0; i < 100; i++)
		deep[n++] = ']';
	char doc[500];
	snprintf(doc, sizeof doc, "{\"x\":%.*s,\"a\":1}", (int)n, deep);
	double v;
	assert_int_equal(inspect_json_number(doc, strlen(doc), "a", &v), -1);
}

static void test_extract(void **state)
{
	(void)state;
	struct h1_capture cap = {.headers = true, .body_cap = 1024};
	struct h1_resp r;
	struct srvtime_spec s;
	char err[128];

	parse("HTTP/1.1 200 OK\r\nServer-Timing: db;dur=3.5, total;dur=12.25;desc=\"a, b\"\r\n"
	      "Server-Timing: app;dur=9\r\nX-Exec: 250\r\nContent-Length: 27\r\n\r\n"
	      "{\"t\":{\"exec_us\":1500},\"z\":0}",
	      &cap, &r);
	assert_int_equal(cap.n_fields, 4);
	assert_int_equal(cap.body_len, 27);
	srvtime_parse("server-timing", &s, err, sizeof err);
	assert_int_equal(srvtime_extract(&s, &cap), 12250000); /* total wins */
	srvtime_parse("server-timing:app", &s, err, sizeof err);
	assert_int_equal(srvtime_extract(&s, &cap), 9000000);
	srvtime_parse("server-timing:db", &s, err, sizeof err);
	assert_int_equal(srvtime_extract(&s, &cap), 3500000);
	srvtime_parse("server-timing:nope", &s, err, sizeof err);
	assert_int_equal(srvtime_extract(&s, &cap), -1);
	srvtime_parse("header:x-exec:us", &s, err, sizeof err);
	assert_int_equal(srvtime_extract(&s, &cap), 250000);
	srvtime_parse("json:t.exec_us:us", &s, err, sizeof err);
	assert_int_equal(srvtime_extract(&s, &cap), 1500000);

	/* without `total`, the first metric with a dur; chunked body captured
	 * de-chunked; a 1xx's headers are not kept */
	parse("HTTP/1.1 100 Continue\r\nServer-Timing: early;dur=99\r\n\r\n"
	      "HTTP/1.1 200 OK\r\nServer-Timing: cache;desc=hit, app;dur=4\r\n"
	      "Transfer-Encoding: chunked\r\n\r\n5\r\n{\"a\":\r\n3\r\n42}\r\n0\r\n\r\n",
	      &cap, &r);
	srvtime_parse("server-timing", &s, err, sizeof err);
	assert_int_equal(srvtime_extract(&s, &cap), 4000000);
	assert_int_equal(cap.body_len, 8);
	assert_memory_equal(cap.body, "{\"a\":42}", 8);
	srvtime_parse("json:a", &s, err, sizeof err);
	assert_int_equal(srvtime_extract(&s, &cap), 42000000);

	/* negative or non-numeric values are missing */
	parse("HTTP/1.1 200 OK\r\nX-Exec: -3\r\nX-Bad: 12ms\r\nContent-Length: 0\r\n\r\n", &cap, &r);
	srvtime_parse("header:X-Exec", &s, err, sizeof err);
	assert_int_equal(srvtime_extract(&s, &cap), -1);
	srvtime_parse("header:X-Bad", &s, err, sizeof err);
	assert_int_equal(srvtime_extract(&s, &cap), -1);
	h1_capture_free(&cap);
}

static void test_body_cap(void **state)
{
	(void)state;
	struct h1_capture cap = {.headers = false, .body_cap = 4};
	struct h1_resp r;
	parse("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n0123456789", &cap, &r);
	assert_int_equal(cap.n_fields, 0); /* headers not asked for */
	assert_int_equal(cap.body_len, 4);
	assert_true(cap.body_truncated);
	assert_memory_equal(cap.body, "0123", 4);
	h1_capture_free(&cap);
}

static void test_inspect_counts(void **state)
{
	(void)state;
	struct inspect in;
	char err[256];
	inspect_init(&in);
	assert_int_equal(inspect_set_success(&in, "status == 200 and body contains \"ok\"", err,
					     sizeof err), 0);
	assert_int_equal(inspect_set_success(&in, "true", err, sizeof err), PACER_EPARSE);
	assert_int_equal(inspect_add_outcome(&in, "fill=body contains \"<Ad\"", err, sizeof err), 0);
	assert_int_equal(inspect_add_outcome(&in, "fill=true", err, sizeof err), PACER_EPARSE);
	assert_non_null(strstr(err, "twice"));
	assert_int_equal(inspect_add_outcome(&in, "json=header \"Content-Type\" contains \"json\"",
					     err, sizeof err), 0);
	assert_int_equal(inspect_set_srvtime(&in, "header:X-T", err, sizeof err), 0);
	inspect_finish(&in);
	assert_true(in.active);
	assert_true(in.need_headers);
	assert_int_equal(in.need_body, INSPECT_BODY_CAP_DEFAULT);

	struct phase_stats ph;
	assert_int_equal(phase_stats_init(&ph), 0);
	struct h1_capture cap = {.headers = true, .body_cap = in.need_body};
	struct h1_resp r;
	parse("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nX-T: 2\r\nContent-Length: 9\r\n\r\n"
	      "ok <Ad/> ", &cap, &r);
	ph.success_ok += inspect_response(&in, r.status, &cap, &ph, NULL);
	parse("HTTP/1.1 503 No\r\nContent-Length: 2\r\n\r\nok", &cap, &r);
	ph.success_ok += inspect_response(&in, r.status, &cap, &ph, NULL);
	assert_int_equal(ph.success_ok, 1);
	assert_int_equal(ph.outcome[0], 1);
	assert_int_equal(ph.outcome[1], 1);
	assert_int_equal(ph.server_time_missing, 1);
	assert_int_equal(ph.timing[TIM_SERVER].total, 1);
	assert_int_equal(ph.timing[TIM_SERVER].max, 2000000);
	phase_stats_free(&ph);
	h1_capture_free(&cap);
	inspect_free(&in);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_json_number),
		cmocka_unit_test(test_extract),
		cmocka_unit_test(test_body_cap),
		cmocka_unit_test(test_inspect_counts),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
