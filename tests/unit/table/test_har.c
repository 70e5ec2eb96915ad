/* Tests of HAR import (src/table/har.c): the hand-written recording
 * tests/unit/table/data/small.har (HTTP/2 pseudo-headers, split cookies,
 * every hop-by-hop header and one named by Connection, Host and
 * Content-Length, a form body from params, a ws: and a data: entry, an IPv6
 * host) with and without --keep-cookies; its round trip through JSON Lines;
 * a table of bad HARs, each with the exact message naming the entry (among
 * them bodies the recording lost: a recorded Content-Length that is not the
 * body's size in bytes); and a recorded Content-Length that is no reason to
 * refuse (it agrees, it is not a number, or the body is a form rebuilt from
 * params). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "table/table.h"
#include "util/err.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* tests/unit/table/data/small.har from $PACER_SRCDIR, this file's compile-
 * time path, or the working directory. */
static const char *har_path(void)
{
	static char path[700];
	const char *env = getenv("PACER_SRCDIR");
	if (env) {
		snprintf(path, sizeof path, "%s/tests/unit/table/data/small.har", env);
		return path;
	}
	char root[512];
	snprintf(root, sizeof root, "%s", __FILE__);
	char *s = strrchr(root, '/');
	if (s) {
		*s = '\0';
		snprintf(path, sizeof path, "%s/data/small.har", root);
		FILE *f = fopen(path, "rb");
		if (f) {
			fclose(f);
			return path;
		}
	}
	return "tests/unit/table/data/small.har";
}

static void assert_headers(const struct table_req *q, const char *const *want, size_t n)
{
	if (q->n_headers != n) {
		for (size_t i = 0; i < q->n_headers; i++)
			print_error("  have '%s'\n", q->headers[i]);
		fail_msg("entry %u: %zu headers, want %zu", q->line, q->n_headers, n);
	}
	for (size_t i = 0; i < n; i++)
		assert_string_equal(q->headers[i], want[i]);
}

static void test_import(void **state)
{
	(void)state;
	struct table *t = NULL;
	struct table_har_stats st;
	char err[512];
	int rc = table_har_import(har_path(), NULL, NULL, &t, &st, err, sizeof err);
	if (rc)
		fail_msg("%s", err);
	assert_int_equal(t->format, TABLE_FMT_HAR);
	assert_int_equal(st.entries, 6);
	assert_int_equal(st.skipped, 2);        /* wss: and data: */
	assert_int_equal(st.dropped_cookies, 3);
	/* 4 pseudo; Host, Connection, Keep-Alive, X-Hop, Content-Length,
	 * Proxy-Authorization, TE, Trailer, Upgrade; Transfer-Encoding */
	assert_int_equal(st.dropped_headers, 14);
	assert_int_equal(t->n, 4);

	const struct table_req *q = &t->reqs[0];
	assert_int_equal(q->line, 0);
	assert_string_equal(q->method, "GET");
	assert_string_equal(q->url, "https://shop.example.com/products/42?ref=home#reviews");
	assert_string_equal(q->target, "/products/42?ref=home");
	/* named "METHOD path" outright, so the JSON Lines written carry it */
	assert_string_equal(q->name, "GET /products/42");
	assert_true(q->name_given);
	const char *h0[] = {"accept: text/html", "user-agent: Mozilla/5.0 (test)"};
	assert_headers(q, h0, N(h0));
	assert_int_equal(q->body_len, 0);

	q = &t->reqs[1];
	assert_int_equal(q->line, 1);
	assert_string_equal(q->method, "POST");
	assert_true(q->name_given);
	assert_int_equal(strncmp(q->name, "POST /", 6), 0);
	const char *h1[] = {"X-Request-Id: r-1", "Content-Type: application/json"};
	assert_headers(q, h1, N(h1));
	const char *b1 = "{\"sku\":42,\"quantity\":1}\n  ";
	assert_int_equal(q->body_len, strlen(b1));
	assert_memory_equal(q->body, b1, strlen(b1));

	q = &t->reqs[2];
	assert_int_equal(q->line, 3);
	const char *h2[] = {"Accept: */*", "Content-Type: application/x-www-form-urlencoded"};
	assert_headers(q, h2, N(h2));
	const char *b2 = "user=ada+lovelace&pass=a%26b%3Dc";
	assert_int_equal(q->body_len, strlen(b2));
	assert_memory_equal(q->body, b2, strlen(b2));

	q = &t->reqs[3];
	assert_int_equal(q->line, 5);
	const char *h3[] = {"Content-Type: text/plain"}; /* the header wins over mimeType */
	assert_headers(q, h3, N(h3));
	assert_int_equal(q->body_len, 5);
	assert_true(t->hosts[q->host].ipv6);
	assert_int_equal(t->n_hosts, 3);
	table_free(t);
}

static void test_keep_cookies(void **state)
{
	(void)state;
	struct table *t = NULL;
	struct table_har_stats st;
	struct table_har_opts o = {.keep_cookies = true};
	char err[512];
	assert_int_equal(table_har_import(har_path(), &o, NULL, &t, &st, err, sizeof err), 0);
	assert_int_equal(st.dropped_cookies, 0);
	/* HTTP/2 split cookies are joined with "; " at the first one's place */
	const char *h0[] = {"accept: text/html", "cookie: session=abc; theme=dark", "user-agent: Mozilla/5.0 (test)"};
	assert_headers(&t->reqs[0], h0, N(h0));
	const char *h1[] = {"Cookie: session=abc", "X-Request-Id: r-1", "Content-Type: application/json"};
	assert_headers(&t->reqs[1], h1, N(h1));
	table_free(t);
}

static void test_round_trip(void **state)
{
	(void)state;
	struct table *a = NULL, *b = NULL;
	char err[512];
	assert_int_equal(table_har_import(har_path(), NULL, NULL, &a, NULL, err, sizeof err), 0);
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_int_equal(table_write_jsonl(f, a, err, sizeof err), 0);
	fclose(f);
	assert_int_equal(table_parse(buf, len, TABLE_FMT_AUTO, "j", NULL, NULL, &b, err, sizeof err), 0);
	assert_non_null(strstr(buf, "\"name\":\"GET /products/42\""));
	for (size_t i = 0; i < a->n; i++) {
		assert_string_equal(b->reqs[i].name, a->reqs[i].name);
		assert_true(b->reqs[i].name_given);
	}
	char ha[65], hb[65];
	assert_int_equal(table_hash(a, "pacer/test", NULL, 0, ha, err, sizeof err), 0);
	assert_int_equal(table_hash(b, "pacer/test", NULL, 0, hb, err, sizeof err), 0);
	assert_string_equal(ha, hb);
	free(buf);
	table_free(a);
	table_free(b);
}

struct err_case {
	const char *name;
	const char *text;
	struct table_limits lim;
	int code;
	const char *want; /* exact; "~x": contains x */
};

#define E(x) "{\"log\":{\"entries\":[" x "]}}"
#define GETREQ "\"method\":\"GET\",\"url\":\"http://h/\""
static const struct err_case errs[] = {
	{"not JSON", "<html>", {0}, PACER_EPARSE, "~r.har:1: not a HAR file: invalid JSON: "},
	{"JSON, not HAR", "{\"entries\":[]}", {0}, PACER_EPARSE,
	 "r.har: not a HAR file: expected {\"log\": {\"entries\": [...]}}"},
	{"a list", "[]", {0}, PACER_EPARSE, "r.har: not a HAR file: expected {\"log\": {\"entries\": [...]}}"},
	{"entries an object", "{\"log\":{\"entries\":{}}}", {0}, PACER_EPARSE,
	 "r.har: not a HAR file: expected {\"log\": {\"entries\": [...]}}"},
	{"no entries", E(""), {0}, PACER_EPARSE, "r.har: no http(s) requests in 0 entries"},
	{"only websockets", E("{\"request\":{\"method\":\"GET\",\"url\":\"ws://h/\"}}"), {0}, PACER_EPARSE,
	 "r.har: no http(s) requests in 1 entries"},
	{"entry a number", E("1"), {0}, PACER_EPARSE, "r.har: log.entries[0]: expected an object, got a number"},
	{"no request", E("{}"), {0}, PACER_EPARSE, "r.har: log.entries[0].request: expected an object, got nothing"},
	{"method missing", E("{\"request\":{\"url\":\"http://h/\"}}"), {0}, PACER_EPARSE,
	 "r.har: log.entries[0].request.method: expected a string, got nothing"},
	{"url a number", E("{\"request\":{\"method\":\"GET\",\"url\":1}}"), {0}, PACER_EPARSE,
	 "r.har: log.entries[0].request.url: expected a string, got a number"},
	{"the second entry is named", E("{\"request\":{" GETREQ "}},{\"request\":{\"method\":\"GET\",\"url\":\"http://h/ x\"}}"),
	 {0}, PACER_EURL, "r.har: log.entries[1].request: bad URL 'http://h/ x': space in URL (percent-encode it as %20)"},
	{"headers an object", E("{\"request\":{" GETREQ ",\"headers\":{}}}"), {0}, PACER_EPARSE,
	 "r.har: log.entries[0].request.headers: expected a list, got an object"},
	{"header without a value", E("{\"request\":{" GETREQ ",\"headers\":[{\"name\":\"a\"}]}}"), {0}, PACER_EPARSE,
	 "r.har: log.entries[0].request.headers[0]: expected {\"name\": string, \"value\": string}"},
	{"bad header name", E("{\"request\":{" GETREQ ",\"headers\":[{\"name\":\"a b\",\"value\":\"1\"}]}}"), {0}, PACER_EHEADER,
	 "r.har: log.entries[0].request.headers: header 'a b': header name has a character not allowed in a token"},
	{"bad header value", E("{\"request\":{" GETREQ ",\"headers\":[{\"name\":\"a\",\"value\":\"1\\n2\"}]}}"), {0}, PACER_EHEADER,
	 "r.har: log.entries[0].request.headers: header 'a': header value has a control character"},
	{"duplicate Content-Type", E("{\"request\":{" GETREQ ",\"headers\":[{\"name\":\"content-type\",\"value\":\"a\"},"
	                             "{\"name\":\"Content-Type\",\"value\":\"b\"}]}}"), {0}, PACER_EHEADER,
	 "r.har: log.entries[0].request.headers: duplicate header 'Content-Type' (it may appear once)"},
	{"bad method", E("{\"request\":{\"method\":\"GE T\",\"url\":\"http://h/\"}}"), {0}, PACER_EPARSE,
	 "r.har: log.entries[0].request: bad method 'GE T': expected a token such as GET or POST"},
	{"postData a string", E("{\"request\":{" GETREQ ",\"postData\":\"x\"}}"), {0}, PACER_EPARSE,
	 "r.har: log.entries[0].request.postData: expected an object, got a string"},
	{"postData text a number", E("{\"request\":{" GETREQ ",\"postData\":{\"text\":1}}}"), {0}, PACER_EPARSE,
	 "r.har: log.entries[0].request.postData.text: expected a string, got a number"},
	{"bad params", E("{\"request\":{" GETREQ ",\"postData\":{\"params\":[{\"value\":\"v\"}]}}}"), {0}, PACER_EPARSE,
	 "r.har: log.entries[0].request.postData.params[0]: expected {\"name\": string, \"value\": string}"},
	{"body over --max-body", E("{\"request\":{" GETREQ ",\"postData\":{\"text\":\"hello\"}}}"), {.max_body_bytes = 2},
	 PACER_ETOOBIG, "r.har: log.entries[0].request.postData: body of 5 bytes is over the limit of 2 bytes (--max-body)"},
	{"too many requests", E("{\"request\":{" GETREQ "}},{\"request\":{" GETREQ "}}"), {.max_requests = 1},
	 PACER_ETOOBIG, "r.har: log.entries[1].request: more than 1 requests (the limit)"},
	{"file over the limit", E(""), {.max_file_bytes = 5}, PACER_ETOOBIG, "r.har: over the limit of 5 bytes"},
	/* the recording lost (part of) the body the browser sent */
	{"binary upload not kept", E("{\"request\":{" GETREQ "}},{\"request\":{\"method\":\"POST\",\"url\":\"http://h/up\","
	                              "\"headers\":[{\"name\":\"Content-Length\",\"value\":\"290\"}],"
	                              "\"postData\":{\"mimeType\":\"multipart/form-data; boundary=x\",\"comment\":\"binary\"}}}"),
	 {0}, PACER_EPARSE,
	 "r.har: log.entries[1].request.postData: holds 0 bytes of body but the request was sent with "
	 "Content-Length: 290 (the recording did not keep the whole body, as browsers often do not for binary uploads; --skip-incomplete leaves such entries out)"},
	{"body cut short", E("{\"request\":{\"method\":\"PUT\",\"url\":\"http://h/\",\"headers\":[{\"name\":\"content-length\","
	                     "\"value\":\"5\"}],\"postData\":{\"text\":\"h\\u00e9llo\"}}}"),
	 {0}, PACER_EPARSE, "~log.entries[0].request.postData: holds 6 bytes of body but the request was sent with Content-Length: 5 ("},
	{"no postData", E("{\"request\":{" GETREQ ",\"headers\":[{\"name\":\"Content-Length\",\"value\":\" 5 \"}]}}"),
	 {0}, PACER_EPARSE, "~log.entries[0].request.postData: holds 0 bytes of body but the request was sent with Content-Length: 5 ("},
};

static void test_errors(void **state)
{
	(void)state;
	for (size_t i = 0; i < N(errs); i++) {
		const struct err_case *c = &errs[i];
		struct table *t = NULL;
		char err[600] = "";
		int rc = table_har_parse(c->text, strlen(c->text), "r.har", NULL, &c->lim, &t, NULL, err, sizeof err);
		if (rc != c->code)
			fail_msg("%s: rc %d (%s), want %d: %s", c->name, rc, err_name(rc), c->code, err);
		assert_null(t);
		if (c->want[0] == '~') {
			if (!strstr(err, c->want + 1))
				fail_msg("%s: '%s' does not contain '%s'", c->name, err, c->want + 1);
		} else if (strcmp(err, c->want) != 0) {
			fail_msg("%s:\n got '%s'\nwant '%s'", c->name, err, c->want);
		}
	}
}

static void test_small_cases(void **state)
{
	(void)state;
	struct table *t = NULL;
	char err[256];
	/* no headers key, null postData, a Connection listing nothing else */
	const char *text = E("{\"request\":{\"method\":\"GET\",\"url\":\"HTTP://H/\",\"postData\":null}},"
	                     "{\"request\":{\"method\":\"POST\",\"url\":\"http://h/\",\"headers\":[{\"name\":\"Connection\",\"value\":\"close\"},"
	                     "{\"name\":\"close\",\"value\":\"x\"},{\"name\":\"Accept\",\"value\":\"*/*\"}],"
	                     "\"postData\":{\"mimeType\":\"\",\"text\":\"a\"}}}");
	struct table_har_stats st;
	assert_int_equal(table_har_parse(text, strlen(text), "s", NULL, NULL, &t, &st, err, sizeof err), 0);
	assert_int_equal(t->n, 2);
	assert_int_equal(t->reqs[0].n_headers, 0);
	assert_int_equal(t->reqs[1].n_headers, 1); /* Connection and the "close" it names dropped; no empty mimeType */
	assert_string_equal(t->reqs[1].headers[0], "Accept: */*");
	assert_int_equal(st.dropped_headers, 2);
	table_free(t);
	/* a recorded Content-Length that agrees with the body (UTF-8 bytes, not
	 * characters), or that is not a number, or next to a form rebuilt from
	 * params (encoded anew), is no reason to refuse; it is dropped either way */
	text = E("{\"request\":{\"method\":\"POST\",\"url\":\"http://h/\",\"headers\":[{\"name\":\"Content-Length\",\"value\":\"6\"}],"
	         "\"postData\":{\"text\":\"h\\u00e9llo\"}}},"
	         "{\"request\":{\"method\":\"GET\",\"url\":\"http://h/\",\"headers\":[{\"name\":\"content-length\",\"value\":\"0\"}]}},"
	         "{\"request\":{\"method\":\"GET\",\"url\":\"http://h/\",\"headers\":[{\"name\":\"Content-Length\",\"value\":\"x1\"}]}},"
	         "{\"request\":{\"method\":\"GET\",\"url\":\"http://h/\",\"headers\":[{\"name\":\"Content-Length\","
	         "\"value\":\"99999999999999999999999\"}]}},"
	         "{\"request\":{\"method\":\"POST\",\"url\":\"http://h/\",\"headers\":[{\"name\":\"Content-Length\",\"value\":\"99\"}],"
	         "\"postData\":{\"params\":[{\"name\":\"a\",\"value\":\"b c\"}]}}}");
	assert_int_equal(table_har_parse(text, strlen(text), "s", NULL, NULL, &t, &st, err, sizeof err), 0);
	assert_int_equal(t->n, 5);
	assert_int_equal(t->reqs[0].body_len, 6);
	assert_int_equal(t->reqs[1].body_len, 0);
	assert_int_equal(t->reqs[4].body_len, 5); /* a=b+c */
	assert_int_equal(st.dropped_headers, 5);
	table_free(t);
	char path[64] = "/nonexistent/x.har";
	assert_int_equal(table_har_import(path, NULL, NULL, &t, NULL, err, sizeof err), -ENOENT);
	assert_string_equal(err, "/nonexistent/x.har: cannot read: No such file or directory");
}

static void test_host_filter_and_incomplete(void **state)
{
	(void)state;
	struct table *t = NULL;
	char err[512];
	struct table_har_stats st;
	const char *text = E("{\"request\":{\"method\":\"GET\",\"url\":\"http://App.local:8080/a\"}},"
	                     "{\"request\":{\"method\":\"GET\",\"url\":\"https://cdn.example/x.js\"}},"
	                     "{\"request\":{\"method\":\"GET\",\"url\":\"http://app.local/b\"}},"
	                     "{\"request\":{\"method\":\"GET\",\"url\":\"http://[::1]:9/c\"}},"
	                     "{\"request\":{\"method\":\"POST\",\"url\":\"http://app.local:8080/up\","
	                     "\"headers\":[{\"name\":\"Content-Length\",\"value\":\"290\"}],"
	                     "\"postData\":{\"mimeType\":\"multipart/form-data\",\"text\":\"\"}}}");
	/* a host without a port matches any port, case-insensitively */
	const char *h1[] = {"app.local"};
	struct table_har_opts o = {.hosts = h1, .n_hosts = 1, .skip_incomplete = true};
	assert_int_equal(table_har_parse(text, strlen(text), "s", &o, NULL, &t, &st, err, sizeof err), 0);
	assert_int_equal(t->n, 2);
	assert_string_equal(t->reqs[0].target, "/a");
	assert_string_equal(t->reqs[1].target, "/b");
	assert_int_equal(st.other_hosts, 2);
	assert_int_equal(st.incomplete, 1);
	table_free(t);
	/* with a port, exactly that authority; IPv6 in brackets */
	const char *h2[] = {"app.local:8080", "[::1]:9"};
	o = (struct table_har_opts){.hosts = h2, .n_hosts = 2, .skip_incomplete = true};
	assert_int_equal(table_har_parse(text, strlen(text), "s", &o, NULL, &t, &st, err, sizeof err), 0);
	assert_int_equal(t->n, 2);
	assert_string_equal(t->reqs[0].target, "/a");
	assert_string_equal(t->reqs[1].target, "/c");
	assert_int_equal(st.other_hosts, 2);
	table_free(t);
	/* without skip_incomplete the truncated upload is an error naming it */
	o.skip_incomplete = false;
	assert_int_equal(table_har_parse(text, strlen(text), "s", &o, NULL, &t, &st, err, sizeof err),
	                 PACER_EPARSE);
	assert_non_null(strstr(err, "log.entries[4]"));
	assert_non_null(strstr(err, "--skip-incomplete"));
	/* a filter that keeps nothing */
	const char *h3[] = {"nowhere"};
	o = (struct table_har_opts){.hosts = h3, .n_hosts = 1};
	assert_int_equal(table_har_parse(text, strlen(text), "s", &o, NULL, &t, &st, err, sizeof err),
	                 PACER_EPARSE);
	assert_null(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_import),
		cmocka_unit_test(test_keep_cookies),
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_small_cases),
		cmocka_unit_test(test_host_filter_and_incomplete),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
