/* Tests of tables as JSON Lines (src/table/jsonl.c): valid lines and the
 * requests they give, each bad line with its exact "FILE:LINE: message",
 * and the round trip table → JSONL → table that keeps the hash (and writes
 * the same bytes again), from targets files with repeated headers, binary
 * bodies and several hosts; request names: given, derived (METHOD shape,
 * METHOD path), checked, written back only when given, and not hashed. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "table/table.h"
#include "util/err.h"
#include "tmpfiles.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))
#define UA "pacer/test"


static int setup(void **state)
{
	(void)state;
	if (tmpdir_make(dir, sizeof dir, "test-jsonl") < 0)
		return -1;
	write_file("a.json", "{\"a\":1}", 7);
	unsigned char bin[256];
	for (int i = 0; i < 256; i++)
		bin[i] = (unsigned char)i;
	write_file("all.bin", (const char *)bin, sizeof bin);
	return 0;
}


struct ok_case {
	const char *name;
	const char *text;
	const char *method, *url;
	const char *headers[5];
	const char *body;
	size_t body_len;
	const char *shape;
	unsigned line;
};

static const struct ok_case oks[] = {
	{"minimal", "{\"method\":\"GET\",\"url\":\"http://h/\"}", "GET", "http://h/", {NULL}, NULL, 0, NULL, 1},
	{"keys in any order", "{\"url\":\"http://h/x\",\"method\":\"DELETE\"}\n", "DELETE", "http://h/x", {NULL}, NULL, 0, NULL, 1},
	{"header lists and a single string, in order",
	 "{\"method\":\"GET\",\"url\":\"http://h/\",\"header\":{\"B\":[\"1\",\"2\"],\"A\":\"3\",\"C\":[]}}",
	 "GET", "http://h/", {"B: 1", "B: 2", "A: 3"}, NULL, 0, NULL, 1},
	{"values trimmed", "{\"method\":\"GET\",\"url\":\"http://h/\",\"header\":{\"A\":[\"  v \"]}}",
	 "GET", "http://h/", {"A: v"}, NULL, 0, NULL, 1},
	{"UTF-8 header value", "{\"method\":\"GET\",\"url\":\"http://h/\",\"header\":{\"X-Name\":[\"Jos\\u00e9\"]}}",
	 "GET", "http://h/", {"X-Name: Jos\xc3\xa9"}, NULL, 0, NULL, 1},
	{"base64 body", "{\"method\":\"POST\",\"url\":\"http://h/\",\"body\":\"eHl6\"}", "POST", "http://h/", {NULL}, "xyz", 3, NULL, 1},
	{"base64 with ==", "{\"method\":\"POST\",\"url\":\"http://h/\",\"body\":\"eA==\"}", "POST", "http://h/", {NULL}, "x", 1, NULL, 1},
	{"base64 with =", "{\"method\":\"POST\",\"url\":\"http://h/\",\"body\":\"eHk=\"}", "POST", "http://h/", {NULL}, "xy", 2, NULL, 1},
	{"binary body", "{\"method\":\"POST\",\"url\":\"http://h/\",\"body\":\"AA0KAP8=\"}", "POST", "http://h/", {NULL}, "\0\r\n\0\xff", 5, NULL, 1},
	{"empty body is no body", "{\"method\":\"POST\",\"url\":\"http://h/\",\"body\":\"\"}", "POST", "http://h/", {NULL}, NULL, 0, NULL, 1},
	{"body file", "{\"method\":\"POST\",\"url\":\"http://h/\",\"body_file\":\"a.json\"}", "POST", "http://h/", {NULL}, "{\"a\":1}", 7, NULL, 1},
	{"shape", "{\"method\":\"GET\",\"url\":\"http://h/\",\"shape\":\"rest_id\"}", "GET", "http://h/", {NULL}, NULL, 0, "rest_id", 1},
	{"blank, comment and CRLF lines", "\r\n# a comment\n  \n{\"method\":\"GET\",\"url\":\"http://h/\"}\r\n\n", "GET", "http://h/", {NULL}, NULL, 0, NULL, 4},
	{"whitespace inside the object", "  { \"method\" : \"GET\" , \"url\" : \"http://h/\" }  ", "GET", "http://h/", {NULL}, NULL, 0, NULL, 1},
};

static void test_ok(void **state)
{
	(void)state;
	for (size_t i = 0; i < N(oks); i++) {
		const struct ok_case *c = &oks[i];
		struct table *t = NULL;
		char err[512] = "";
		int rc = table_parse(c->text, strlen(c->text), TABLE_FMT_JSONL, "t.jsonl", dir, NULL, &t, err, sizeof err);
		if (rc)
			fail_msg("%s: rc %d: %s", c->name, rc, err);
		assert_int_equal(t->n, 1);
		const struct table_req *q = &t->reqs[0];
		assert_string_equal(q->method, c->method);
		assert_string_equal(q->url, c->url);
		assert_int_equal(q->line, c->line);
		size_t nh = 0;
		while (nh < N(c->headers) && c->headers[nh])
			nh++;
		if (q->n_headers != nh)
			fail_msg("%s: %zu headers, want %zu", c->name, q->n_headers, nh);
		for (size_t h = 0; h < nh; h++)
			assert_string_equal(q->headers[h], c->headers[h]);
		assert_int_equal(q->body_len, c->body_len);
		if (c->body_len)
			assert_memory_equal(q->body, c->body, c->body_len);
		else
			assert_null(q->body);
		if (c->shape)
			assert_string_equal(q->shape, c->shape);
		else
			assert_null(q->shape);
		table_free(t);
	}
}

struct err_case {
	const char *name;
	const char *text;
	struct table_limits lim;
	int code;
	const char *want; /* exact, "{DIR}" expanded; "~x": contains x */
};

#define GET "\"method\":\"GET\",\"url\":\"http://h/\""
#define NAME10 "nnnnnnnnnn"
#define NAME100 NAME10 NAME10 NAME10 NAME10 NAME10 NAME10 NAME10 NAME10 NAME10 NAME10
#define NAME201 NAME100 NAME100 "n"
static const struct err_case errs[] = {
	{"not JSON", "{\"method\":", {0}, PACER_EPARSE, "~t.jsonl:1: invalid JSON: "},
	{"trailing comma", "{" GET ",}", {0}, PACER_EPARSE, "~t.jsonl:1: invalid JSON: "},
	{"two objects on a line", "{" GET "} {" GET "}", {0}, PACER_EPARSE, "~t.jsonl:1: invalid JSON: end of file expected"},
	{"error on the third line", "{" GET "}\n\n{\"method\":\"GET\"}\n", {0}, PACER_EPARSE, "t.jsonl:3: missing \"url\""},
	{"a list", "[1]", {0}, PACER_EPARSE, "t.jsonl:1: expected a JSON object, got a list"},
	{"a string", "\"GET\"", {0}, PACER_EPARSE, "t.jsonl:1: expected a JSON object, got a string"},
	{"missing method", "{\"url\":\"http://h/\"}", {0}, PACER_EPARSE, "t.jsonl:1: missing \"method\""},
	{"method not a string", "{\"method\":1,\"url\":\"http://h/\"}", {0}, PACER_EPARSE,
	 "t.jsonl:1: \"method\": expected a string, got a number"},
	{"url null", "{\"method\":\"GET\",\"url\":null}", {0}, PACER_EPARSE, "t.jsonl:1: \"url\": expected a string, got null"},
	{"unknown key", "{" GET ",\"headers\":{}}", {0}, PACER_EPARSE,
	 "t.jsonl:1: unknown key \"headers\" (expected method, url, header, body, body_file, shape, name)"},
	{"duplicate key", "{" GET ",\"method\":\"POST\"}", {0}, PACER_EPARSE, "~t.jsonl:1: invalid JSON: duplicate object key"},
	{"NUL in a string", "{\"method\":\"GET\",\"url\":\"http://h/\\u0000\"}", {0}, PACER_EPARSE, "~t.jsonl:1: invalid JSON: "},
	{"bad method", "{\"method\":\"G T\",\"url\":\"http://h/\"}", {0}, PACER_EPARSE,
	 "t.jsonl:1: bad method 'G T': expected a token such as GET or POST"},
	{"bad URL", "{\"method\":\"GET\",\"url\":\"http://h/a b\"}", {0}, PACER_EURL,
	 "t.jsonl:1: bad URL 'http://h/a b': space in URL (percent-encode it as %20)"},
	{"header a list", "{" GET ",\"header\":[]}", {0}, PACER_EPARSE,
	 "t.jsonl:1: \"header\": expected an object of name: [values], got a list"},
	{"header value a number", "{" GET ",\"header\":{\"A\":[\"1\",2]}}", {0}, PACER_EPARSE,
	 "t.jsonl:1: \"header\": \"A\"[1]: expected a string, got a number"},
	{"header values an object", "{" GET ",\"header\":{\"A\":{}}}", {0}, PACER_EPARSE,
	 "t.jsonl:1: \"header\": \"A\": expected a list of strings, got an object"},
	{"header name with a colon", "{" GET ",\"header\":{\"A:B\":[\"1\"]}}", {0}, PACER_EHEADER,
	 "t.jsonl:1: header name 'A:B' is not a token"},
	{"header name with a space", "{" GET ",\"header\":{\"A B\":[\"1\"]}}", {0}, PACER_EHEADER,
	 "t.jsonl:1: header 'A B': header name has a character not allowed in a token"},
	{"header value with CRLF", "{" GET ",\"header\":{\"A\":[\"1\\r\\nX: 2\"]}}", {0}, PACER_EHEADER,
	 "t.jsonl:1: header 'A': header value has a control character"},
	{"duplicate singleton in two spellings", "{" GET ",\"header\":{\"Content-Type\":[\"a\"],\"content-type\":[\"b\"]}}",
	 {0}, PACER_EHEADER, "t.jsonl:1: duplicate header 'content-type' (it may appear once)"},
	{"duplicate singleton in one list", "{" GET ",\"header\":{\"Host\":[\"a\",\"b\"]}}",
	 {0}, PACER_EHEADER, "t.jsonl:1: duplicate header 'Host' (it may appear once)"},
	{"too many headers", "{" GET ",\"header\":{\"A\":[\"1\",\"2\",\"3\"]}}", {.max_headers = 2}, PACER_ETOOBIG,
	 "t.jsonl:1: more than 2 headers in one request"},
	{"body not base64", "{" GET ",\"body\":\"abc\"}", {0}, PACER_EPARSE,
	 "t.jsonl:1: \"body\": not base64 (RFC 4648, with '=' padding)"},
	{"body with data after =", "{" GET ",\"body\":\"ab=c\"}", {0}, PACER_EPARSE,
	 "t.jsonl:1: \"body\": not base64 (RFC 4648, with '=' padding)"},
	{"body base64 not canonical", "{" GET ",\"body\":\"eB==\"}", {0}, PACER_EPARSE,
	 "t.jsonl:1: \"body\": not base64 (RFC 4648, with '=' padding)"},
	{"body base64url", "{" GET ",\"body\":\"-_-_\"}", {0}, PACER_EPARSE,
	 "t.jsonl:1: \"body\": not base64 (RFC 4648, with '=' padding)"},
	{"body a number", "{" GET ",\"body\":12}", {0}, PACER_EPARSE, "t.jsonl:1: \"body\": expected a base64 string, got a number"},
	{"body and body_file", "{" GET ",\"body\":\"\",\"body_file\":\"a.json\"}", {0}, PACER_EPARSE,
	 "t.jsonl:1: both \"body\" and \"body_file\" (give one)"},
	{"body over --max-body", "{" GET ",\"body\":\"aGVsbG8=\"}", {.max_body_bytes = 4}, PACER_ETOOBIG,
	 "t.jsonl:1: body of 5 bytes is over the limit of 4 bytes (--max-body)"},
	{"long body over --max-body", "{" GET ",\"body\":\"aGVsbG8gd29ybGQ=\"}", {.max_body_bytes = 4}, PACER_ETOOBIG,
	 "t.jsonl:1: body is over the limit of 4 bytes (--max-body)"},
	{"missing body file", "{" GET ",\"body_file\":\"nope\"}", {0}, -ENOENT,
	 "t.jsonl:1: cannot read body file {DIR}/nope: No such file or directory"},
	{"body files not allowed", "{" GET ",\"body_file\":\"a.json\"}", {.no_body_files = true}, PACER_EUNSUPPORTED,
	 "t.jsonl:1: body files are not allowed here"},
	{"shape not a string", "{" GET ",\"shape\":[]}", {0}, PACER_EPARSE, "t.jsonl:1: \"shape\": expected a string, got a list"},
	{"name not a string", "{" GET ",\"name\":7}", {0}, PACER_EPARSE, "t.jsonl:1: \"name\": expected a string, got a number"},
	{"empty name", "{" GET "}\n{" GET ",\"name\":\"\"}", {0}, PACER_EPARSE, "t.jsonl:2: empty request name"},
	{"name with a tab", "{" GET ",\"name\":\"a\\tb\"}", {0}, PACER_EPARSE,
	 "t.jsonl:1: request name 'a?b' has a control character (byte 0x09 at 1)"},
	{"name with DEL", "{" GET ",\"name\":\"ab\\u007f\"}", {0}, PACER_EPARSE,
	 "t.jsonl:1: request name 'ab?' has a control character (byte 0x7f at 2)"},
	{"name too long", "{" GET ",\"name\":\"" NAME201 "\"}", {0}, PACER_ETOOBIG,
	 "t.jsonl:1: request name 'nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn...' is longer than 200 bytes"},
	{"line too long", "{" GET ",\"header\":{\"A\":[\"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\"]}}",
	 {.max_line_bytes = 100, .max_body_bytes = 3}, PACER_ETOOBIG, "t.jsonl:1: line longer than 108 bytes"},
	{"too many requests", "{" GET "}\n{" GET "}\n", {.max_requests = 1}, PACER_ETOOBIG, "t.jsonl:2: more than 1 requests (the limit)"},
	{"nothing", "\n\n", {0}, PACER_EPARSE, "t.jsonl: no requests"},
};

static void test_errors(void **state)
{
	(void)state;
	for (size_t i = 0; i < N(errs); i++) {
		const struct err_case *c = &errs[i];
		char want[600];
		const char *d = strstr(c->want, "{DIR}");
		if (d)
			snprintf(want, sizeof want, "%.*s%s%s", (int)(d - c->want), c->want, dir, d + 5);
		else
			snprintf(want, sizeof want, "%s", c->want);
		struct table *t = NULL;
		char err[600] = "";
		int rc = table_parse(c->text, strlen(c->text), TABLE_FMT_JSONL, "t.jsonl", dir, &c->lim, &t, err, sizeof err);
		if (rc != c->code)
			fail_msg("%s: rc %d (%s), want %d: %s", c->name, rc, err_name(rc), c->code, err);
		assert_null(t);
		if (want[0] == '~') {
			if (!strstr(err, want + 1))
				fail_msg("%s: '%s' does not contain '%s'", c->name, err, want + 1);
		} else if (strcmp(err, want) != 0) {
			fail_msg("%s:\n got '%s'\nwant '%s'", c->name, err, want);
		}
	}
}

/* Write t as JSONL into a malloc'd string. */
static char *to_jsonl(const struct table *t, size_t *len)
{
	char *buf = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&buf, &n);
	assert_non_null(f);
	char err[256];
	int rc = table_write_jsonl(f, t, err, sizeof err);
	if (rc)
		fail_msg("write: %s", err);
	assert_int_equal(fclose(f), 0);
	*len = n;
	return buf;
}

static void round_trip(const char *text, enum table_format fmt, size_t want_n)
{
	struct table *a = NULL, *b = NULL;
	char err[512];
	int rc = table_parse(text, strlen(text), fmt, "a", dir, NULL, &a, err, sizeof err);
	if (rc)
		fail_msg("parse: %s", err);
	assert_int_equal(a->n, want_n);
	size_t len;
	char *jl = to_jsonl(a, &len);
	assert_int_equal(table_parse(jl, len, TABLE_FMT_AUTO, "b", NULL, NULL, &b, err, sizeof err), 0);
	assert_int_equal(b->format, TABLE_FMT_JSONL);
	assert_int_equal(b->n, a->n);
	assert_int_equal(b->n_hosts, a->n_hosts);
	char ha[65], hb[65];
	assert_int_equal(table_hash(a, UA, NULL, 0, ha, err, sizeof err), 0);
	assert_int_equal(table_hash(b, UA, NULL, 0, hb, err, sizeof err), 0);
	assert_string_equal(ha, hb);
	/* and written again, the same bytes */
	size_t len2;
	char *jl2 = to_jsonl(b, &len2);
	assert_int_equal(len, len2);
	assert_memory_equal(jl, jl2, len);
	for (size_t i = 0; i < a->n; i++) {
		assert_string_equal(a->reqs[i].url, b->reqs[i].url);
		assert_int_equal(a->reqs[i].n_headers, b->reqs[i].n_headers);
		if (a->reqs[i].shape)
			assert_string_equal(a->reqs[i].shape, b->reqs[i].shape);
	}
	free(jl);
	free(jl2);
	table_free(a);
	table_free(b);
}

static void test_round_trip(void **state)
{
	(void)state;
	round_trip("GET http://h/a?x=1\nAccept: */*\nX-A: 1\nx-a: 2\nX-A: 3\n\n"
	           "POST https://other.example:8443/p\nContent-Type: application/octet-stream\n@all.bin\n\n"
	           "PUT http://[::1]:8080/q\nContent-Type: application/json\nContent-Length: 7\n@a.json\n\n"
	           "DELETE http://h/a#frag\nX-Empty:\n",
	           TABLE_FMT_TARGETS, 4);
	round_trip("{\"method\":\"GET\",\"url\":\"http://h/\",\"header\":{\"A\":[\"1\",\"2\"],\"b\":[\"\\u00e9\"]},\"shape\":\"s\"}\n"
	           "{\"method\":\"PATCH\",\"url\":\"http://h/\",\"body\":\"AAEC\"}\n",
	           TABLE_FMT_JSONL, 2);
}

static void test_written_form(void **state)
{
	(void)state;
	const char *text = "POST http://h/p\nX-A: 1\nContent-Type: text/plain\nX-A: 2\n@a.json\n";
	struct table *t = NULL;
	char err[256];
	assert_int_equal(table_parse(text, strlen(text), TABLE_FMT_TARGETS, "w", dir, NULL, &t, err, sizeof err), 0);
	size_t len;
	char *jl = to_jsonl(t, &len);
	assert_string_equal(jl, "{\"method\":\"POST\",\"url\":\"http://h/p\",\"header\":{\"X-A\":[\"1\",\"2\"],"
	                        "\"Content-Type\":[\"text/plain\"]},\"body\":\"eyJhIjoxfQ==\"}\n");
	free(jl);
	table_free(t);
}

static void test_not_utf8(void **state)
{
	(void)state;
	/* a Latin-1 byte is a legal header value (obs-text) but JSON cannot carry it */
	const char *text = "GET http://h/\n\nGET http://h/2\nX-Name: Jos\xe9\n";
	struct table *t = NULL;
	char err[256];
	assert_int_equal(table_parse(text, strlen(text), TABLE_FMT_TARGETS, "l1", NULL, NULL, &t, err, sizeof err), 0);
	char *buf = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&buf, &n);
	assert_int_equal(table_write_jsonl(f, t, err, sizeof err), PACER_EUNSUPPORTED);
	assert_string_equal(err, "l1:3: a header is not UTF-8 text, which JSON cannot carry");
	fclose(f);
	free(buf);
	table_free(t);
}

static void test_write_error(void **state)
{
	(void)state;
	const char *text = "GET http://h/\n";
	struct table *t = NULL;
	char err[256];
	assert_int_equal(table_parse(text, strlen(text), TABLE_FMT_TARGETS, "w", NULL, NULL, &t, err, sizeof err), 0);
	FILE *f = fopen("/dev/full", "w");
	if (f) {
		assert_int_equal(table_write_jsonl(f, t, err, sizeof err), -EIO);
		fclose(f);
	}
	table_free(t);
}

/* Names: given (kept as written, up to TABLE_NAME_MAX bytes of UTF-8),
 * else "METHOD shape", else "METHOD path" without the query. */
static void test_names(void **state)
{
	(void)state;
	const char *text =
		"{\"method\":\"GET\",\"url\":\"http://h/users/1?x=2\"}\n"
		"{\"method\":\"GET\",\"url\":\"http://h/users/2\",\"name\":\"GET /users/{id}\"}\n"
		"{\"method\":\"POST\",\"url\":\"http://h/a\",\"shape\":\"rest_id\"}\n"
		"{\"method\":\"PUT\",\"url\":\"http://h/a\",\"shape\":\"rest_id\",\"name\":\"caf\u00e9\"}\n"
		"{\"method\":\"GET\",\"url\":\"http://h\"}\n"
		"{\"method\":\"GET\",\"url\":\"http://h/x\",\"name\":\"" NAME100 NAME100 "\"}\n";
	static const struct {
		const char *name;
		bool given;
	} want[] = {{"GET /users/1", false}, {"GET /users/{id}", true}, {"POST rest_id", false},
	            {"caf\xc3\xa9", true},  {"GET /", false},          {NAME100 NAME100, true}};
	struct table *t = NULL;
	char err[512] = "";
	int rc = table_parse(text, strlen(text), TABLE_FMT_JSONL, "n.jsonl", dir, NULL, &t, err, sizeof err);
	if (rc)
		fail_msg("rc %d: %s", rc, err);
	assert_int_equal(t->n, N(want));
	for (size_t i = 0; i < N(want); i++) {
		assert_string_equal(t->reqs[i].name, want[i].name);
		assert_int_equal(t->reqs[i].name_given, want[i].given);
	}
	/* written back: a given name as "name", a derived one not at all */
	size_t len;
	char *jl = to_jsonl(t, &len);
	assert_non_null(strstr(jl, "\"url\":\"http://h/users/2\",\"name\":\"GET /users/{id}\"}"));
	assert_non_null(strstr(jl, "\"url\":\"http://h/users/1?x=2\"}\n"));
	assert_non_null(strstr(jl, "\"shape\":\"rest_id\"}\n"));
	struct table *b = NULL;
	assert_int_equal(table_parse(jl, len, TABLE_FMT_AUTO, "b", NULL, NULL, &b, err, sizeof err), 0);
	for (size_t i = 0; i < N(want); i++) {
		assert_string_equal(b->reqs[i].name, want[i].name);
		assert_int_equal(b->reqs[i].name_given, want[i].given);
	}
	free(jl);
	table_free(b);

	/* a name is a label: not in the wire bytes, so not in the hash */
	const char *plain = "{\"method\":\"GET\",\"url\":\"http://h/users/2\"}\n";
	const char *named = "{\"method\":\"GET\",\"url\":\"http://h/users/2\",\"name\":\"x\"}\n";
	struct table *p1 = NULL, *p2 = NULL;
	assert_int_equal(table_parse(plain, strlen(plain), TABLE_FMT_JSONL, "p", NULL, NULL, &p1, err, sizeof err), 0);
	assert_int_equal(table_parse(named, strlen(named), TABLE_FMT_JSONL, "p", NULL, NULL, &p2, err, sizeof err), 0);
	char h1[65], h2[65];
	assert_int_equal(table_hash(p1, UA, NULL, 0, h1, err, sizeof err), 0);
	assert_int_equal(table_hash(p2, UA, NULL, 0, h2, err, sizeof err), 0);
	assert_string_equal(h1, h2);
	assert_string_not_equal(p1->reqs[0].name, p2->reqs[0].name);
	table_free(p1);
	table_free(p2);
	table_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ok),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_written_form),
		cmocka_unit_test(test_not_utf8),
		cmocka_unit_test(test_write_error),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
