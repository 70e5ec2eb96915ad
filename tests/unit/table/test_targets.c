/* Tests of the targets format (src/table/targets.c and the shared checks of
 * src/table/table.c): a table of valid files with the requests they must
 * give (methods, URLs, normalised headers, bodies, line numbers, hosts), and
 * a table of bad files, each with the exact "FILE:LINE: message" and code it
 * must give and no table returned. Body files live in a temporary folder. */
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

#include "table/table.h"
#include "util/err.h"
#include "tmpfiles.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))


static int setup(void **state)
{
	(void)state;
	if (tmpdir_make(dir, sizeof dir, "test-targets") < 0)
		return -1;
	char sub[300];
	snprintf(sub, sizeof sub, "%s/sub", dir);
	mkdir(sub, 0700);
	write_file("a.json", "{\"a\":1}", 7);
	write_file("sub/b.txt", "bee\n", 4);
	write_file("bin.dat", "x\0y\r\n", 5);
	char big[5000];
	memset(big, 'z', sizeof big);
	write_file("big.bin", big, sizeof big);
	return 0;
}


/* Replace each "{DIR}" in s by the fixture folder. */
static char *expand(const char *s, size_t len, size_t *out_len)
{
	size_t cap = len + 1 + 8 * strlen(dir) * 4;
	char *o = malloc(cap);
	assert_non_null(o);
	size_t n = 0;
	for (size_t i = 0; i < len;) {
		if (len - i >= 5 && memcmp(s + i, "{DIR}", 5) == 0) {
			n += (size_t)snprintf(o + n, cap - n, "%s", dir);
			i += 5;
		} else {
			o[n++] = s[i++];
		}
	}
	o[n] = '\0';
	if (out_len)
		*out_len = n;
	return o;
}

struct want_req {
	const char *method, *url, *target;
	const char *headers[6];
	const char *body;
	size_t body_len; /* 0: strlen(body) */
	unsigned line;
};

struct ok_case {
	const char *name;
	const char *text;
	size_t len; /* 0: strlen(text) */
	size_t n;
	struct want_req r[4];
	size_t n_hosts;
};

static const struct ok_case oks[] = {
	{"single GET", "GET http://h/a\n", 0, 1, {{"GET", "http://h/a", "/a", {NULL}, NULL, 0, 1}}, 1},
	{"no final newline", "GET http://h/a", 0, 1, {{"GET", "http://h/a", "/a", {NULL}, NULL, 0, 1}}, 1},
	{"comments, blank lines and CRLF", "# c\r\n\r\nGET http://h/a\r\nAccept: x\r\n\r\n# end\r\n", 0, 1,
	 {{"GET", "http://h/a", "/a", {"Accept: x"}, NULL, 0, 3}}, 1},
	{"values trimmed, repeats grouped in order", "GET http://h/\nX-A:   1  \nX-B:\t2\nX-A: 3\n", 0, 1,
	 {{"GET", "http://h/", "/", {"X-A: 1", "X-A: 3", "X-B: 2"}, NULL, 0, 1}}, 1},
	{"empty header value", "GET http://h/\nX-Empty:\n", 0, 1,
	 {{"GET", "http://h/", "/", {"X-Empty: "}, NULL, 0, 1}}, 1},
	{"body file relative to the folder", "POST http://h/p\nContent-Type: application/json\n@a.json\n", 0, 1,
	 {{"POST", "http://h/p", "/p", {"Content-Type: application/json"}, "{\"a\":1}", 0, 1}}, 1},
	{"absolute body path, trailing space", "PUT http://h/p\n@{DIR}/sub/b.txt  \n", 0, 1,
	 {{"PUT", "http://h/p", "/p", {NULL}, "bee\n", 0, 1}}, 1},
	{"binary body", "POST http://h/\n@bin.dat\n", 0, 1,
	 {{"POST", "http://h/", "/", {NULL}, "x\0y\r\n", 5, 1}}, 1},
	{"next request without a blank line", "GET http://h/1\nGET http://h/2\n", 0, 2,
	 {{"GET", "http://h/1", "/1", {NULL}, NULL, 0, 1}, {"GET", "http://h/2", "/2", {NULL}, NULL, 0, 2}}, 1},
	{"request right after a body line", "POST http://h/\n@a.json\nGET https://h/2\n", 0, 2,
	 {{"POST", "http://h/", "/", {NULL}, "{\"a\":1}", 0, 1}, {"GET", "https://h/2", "/2", {NULL}, NULL, 0, 3}}, 2},
	{"whitespace-only line ends a request", "GET http://h/1\n \t\nDELETE http://h/2", 0, 2,
	 {{"GET", "http://h/1", "/1", {NULL}, NULL, 0, 1}, {"DELETE", "http://h/2", "/2", {NULL}, NULL, 0, 3}}, 1},
	{"tabs and leading spaces on the request line", "  GET\thttp://h/x?q=1  \n", 0, 1,
	 {{"GET", "http://h/x?q=1", "/x?q=1", {NULL}, NULL, 0, 1}}, 1},
	{"comment between headers", "GET http://h/\nA: 1\n# note\nB: 2\n", 0, 1,
	 {{"GET", "http://h/", "/", {"A: 1", "B: 2"}, NULL, 0, 1}}, 1},
	{"Content-Length that matches the body", "POST http://h/\nContent-Length: 7\n@a.json\n", 0, 1,
	 {{"POST", "http://h/", "/", {"Content-Length: 7"}, "{\"a\":1}", 0, 1}}, 1},
	{"hosts by scheme, port, case", "GET http://a/\n\nGET http://A:80/x\n\nGET https://a/\n\nGET http://[::1]:8080/\n", 0, 4,
	 {{"GET", "http://a/", "/", {NULL}, NULL, 0, 1},
	  {"GET", "http://A:80/x", "/x", {NULL}, NULL, 0, 3},
	  {"GET", "https://a/", "/", {NULL}, NULL, 0, 5},
	  {"GET", "http://[::1]:8080/", "/", {NULL}, NULL, 0, 7}}, 3},
	{"any method token", "PURGE http://h/c\n", 0, 1, {{"PURGE", "http://h/c", "/c", {NULL}, NULL, 0, 1}}, 1},
};

static void test_ok(void **state)
{
	(void)state;
	for (size_t i = 0; i < N(oks); i++) {
		const struct ok_case *c = &oks[i];
		size_t len;
		char *text = expand(c->text, c->len ? c->len : strlen(c->text), &len);
		struct table *t = NULL;
		char err[512] = "";
		int rc = table_parse(text, len, TABLE_FMT_TARGETS, "t.targets", dir, NULL, &t, err, sizeof err);
		if (rc)
			fail_msg("%s: rc %d: %s", c->name, rc, err);
		assert_non_null(t);
		assert_int_equal(t->format, TABLE_FMT_TARGETS);
		assert_string_equal(t->source, "t.targets");
		if (t->n != c->n)
			fail_msg("%s: %zu requests, want %zu", c->name, t->n, c->n);
		assert_int_equal(t->n_hosts, c->n_hosts);
		for (size_t k = 0; k < c->n; k++) {
			const struct want_req *w = &c->r[k];
			const struct table_req *q = &t->reqs[k];
			assert_string_equal(q->method, w->method);
			assert_string_equal(q->url, w->url);
			assert_string_equal(q->target, w->target);
			assert_int_equal(q->line, w->line);
			assert_null(q->shape);
			size_t nh = 0;
			while (nh < N(w->headers) && w->headers[nh])
				nh++;
			if (q->n_headers != nh)
				fail_msg("%s: request %zu has %zu headers, want %zu", c->name, k, q->n_headers, nh);
			for (size_t h = 0; h < nh; h++)
				assert_string_equal(q->headers[h], w->headers[h]);
			size_t bl = w->body ? (w->body_len ? w->body_len : strlen(w->body)) : 0;
			assert_int_equal(q->body_len, bl);
			if (bl)
				assert_memory_equal(q->body, w->body, bl);
			else
				assert_null(q->body);
			assert_true(q->host < t->n_hosts);
		}
		size_t sum = 0;
		for (size_t h = 0; h < t->n_hosts; h++)
			sum += t->hosts[h].n_reqs;
		assert_int_equal(sum, t->n);
		table_free(t);
		free(text);
	}
}

static void test_hosts(void **state)
{
	(void)state;
	const char *text = "GET http://Example.com/\n\nGET http://example.COM:80/\n\nGET https://example.com/\n\n"
	                   "GET http://[::1]:8080/\n";
	struct table *t = NULL;
	char err[256];
	assert_int_equal(table_parse(text, strlen(text), TABLE_FMT_AUTO, "h", NULL, NULL, &t, err, sizeof err), 0);
	assert_int_equal(t->n_hosts, 3);
	assert_string_equal(t->hosts[0].name, "Example.com"); /* as first written */
	assert_int_equal(t->hosts[0].port, 80);
	assert_false(t->hosts[0].tls);
	assert_int_equal(t->hosts[0].n_reqs, 2);
	assert_true(t->hosts[1].tls);
	assert_int_equal(t->hosts[1].port, 443);
	assert_string_equal(t->hosts[2].name, "::1");
	assert_true(t->hosts[2].ipv6);
	assert_int_equal(t->hosts[2].port, 8080);
	assert_int_equal(t->reqs[1].host, 0);
	assert_int_equal(t->reqs[3].host, 2);
	table_free(t);
}

static void test_shared_body(void **state)
{
	(void)state;
	const char *text = "POST http://h/1\n@a.json\n\nPOST http://h/2\n@a.json\n";
	struct table *t = NULL;
	char err[256];
	assert_int_equal(table_parse(text, strlen(text), TABLE_FMT_TARGETS, "s", dir, NULL, &t, err, sizeof err), 0);
	assert_int_equal(t->n, 2);
	assert_ptr_equal(t->reqs[0].body, t->reqs[1].body); /* read once */
	table_free(t);
}

struct err_case {
	const char *name;
	const char *text;
	size_t len;
	struct table_limits lim;
	int code;
	const char *want; /* exact; "~x": contains x */
};

static const struct err_case errs[] = {
	{"header before any request", "Accept: x\n", 0, {0}, PACER_EPARSE,
	 "t.targets:1: header line before any request (expected 'METHOD URL')"},
	{"method alone", "\n\nGET\n", 0, {0}, PACER_EPARSE, "t.targets:3: expected 'METHOD URL', got 'GET'"},
	{"text after the URL", "GET http://h/ HTTP/1.1\n", 0, {0}, PACER_EPARSE,
	 "t.targets:1: unexpected text after the URL (expected 'METHOD URL')"},
	{"bad method", "G(T http://h/\n", 0, {0}, PACER_EPARSE,
	 "t.targets:1: bad method 'G(T': expected a token such as GET or POST"},
	{"bad scheme", "GET ftp://h/\n", 0, {0}, PACER_EURL,
	 "t.targets:1: bad URL 'ftp://h/': unsupported scheme (only http and https)"},
	{"URL not absolute", "GET /path\n", 0, {0}, PACER_EURL,
	 "t.targets:1: bad URL '/path': missing \"://\" (expected http://host or https://host)"},
	{"header without a colon", "GET http://h/\nAccept text\n", 0, {0}, PACER_EPARSE,
	 "t.targets:2: expected a 'Name: value' header, an '@file' body or a blank line"},
	{"illegal header name", "GET http://h/\nA: 1\nX Y: 1\n", 0, {0}, PACER_EHEADER,
	 "t.targets:3: header 'X Y': header name has a character not allowed in a token"},
	{"empty header name", "GET http://h/\n: v\n", 0, {0}, PACER_EHEADER,
	 "t.targets:2: header name '' is not a token"},
	{"control character in a value", "GET http://h/\nX: a\x01z\n", 0, {0}, PACER_EHEADER,
	 "t.targets:2: header 'X': header value has a control character"},
	{"duplicate Host", "GET http://h/\nHost: a\nX: 1\nhost: b\n", 0, {0}, PACER_EHEADER,
	 "t.targets:4: duplicate header 'host' (it may appear once)"},
	{"duplicate Content-Type", "POST http://h/\nContent-Type: a\nContent-Type: b\n", 0, {0}, PACER_EHEADER,
	 "t.targets:3: duplicate header 'Content-Type' (it may appear once)"},
	{"Transfer-Encoding", "POST http://h/\nTransfer-Encoding: chunked\n", 0, {0}, PACER_EHEADER,
	 "t.targets:2: header 'Transfer-Encoding' is not supported (pacer sends bodies with Content-Length)"},
	{"Content-Length not the body's", "POST http://h/\nContent-Length: 3\n@a.json\n", 0, {0}, PACER_EHEADER,
	 "t.targets:2: header 'Content-Length: 3' does not match the body (7 bytes)"},
	{"Content-Length not a number", "POST http://h/\nContent-Length: 1x\n", 0, {0}, PACER_EHEADER,
	 "t.targets:2: header 'Content-Length: 1x' does not match the body (0 bytes)"},
	{"folded header", "GET http://h/\nA: 1\n  more\n", 0, {0}, PACER_EPARSE,
	 "t.targets:3: a header line may not start with whitespace (folded headers are not supported)"},
	{"header after the body", "POST http://h/\n@a.json\nA: 1\n", 0, {0}, PACER_EPARSE,
	 "t.targets:3: expected a blank line after the body line (headers come before it)"},
	{"two body lines", "POST http://h/\n@a.json\n@a.json\n", 0, {0}, PACER_EPARSE,
	 "t.targets:3: a second body line (one '@file' per request)"},
	{"missing body file", "POST http://h/\n\n\nPOST http://h/\n@nope.json\n", 0, {0}, -ENOENT,
	 "t.targets:5: cannot read body file {DIR}/nope.json: No such file or directory"},
	{"body file is a folder", "POST http://h/\n@sub\n", 0, {0}, -EISDIR,
	 "t.targets:2: body file {DIR}/sub is a folder"},
	{"body file over --max-body", "POST http://h/\n@big.bin\n", 0, {.max_body_bytes = 1000}, PACER_ETOOBIG,
	 "t.targets:2: body file {DIR}/big.bin is over the limit of 1000 bytes (--max-body)"},
	{"empty body file name", "POST http://h/\n@\n", 0, {0}, PACER_EPARSE, "t.targets:2: empty body file name"},
	{"body files not allowed", "POST http://h/\n@a.json\n", 0, {.no_body_files = true}, PACER_EUNSUPPORTED,
	 "t.targets:2: body files are not allowed here"},
	{"NUL byte", "GET http://h/\nA: \0\n", 19, {0}, PACER_EPARSE, "t.targets:2: NUL byte in a text line"},
	{"line too long", "GET http://h/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\n", 0,
	 {.max_line_bytes = 64}, PACER_ETOOBIG, "t.targets:1: line longer than 64 bytes"},
	{"too many requests", "GET http://h/1\n\nGET http://h/2\n\nGET http://h/3\n", 0, {.max_requests = 2},
	 PACER_ETOOBIG, "t.targets:5: more than 2 requests (the limit)"},
	{"too many headers", "GET http://h/\nA: 1\nB: 2\nC: 3\n", 0, {.max_headers = 2}, PACER_ETOOBIG,
	 "t.targets:4: more than 2 headers in one request"},
	{"table over the total", "GET http://h/1\n\nGET http://h/2\n\nGET http://h/3\n\nGET http://h/4\n", 0,
	 {.max_total_bytes = 200}, PACER_ETOOBIG, "~: the table is over the limit of 200 bytes in all"},
	{"file over the size limit", "GET http://h/1\n", 0, {.max_file_bytes = 10}, PACER_ETOOBIG,
	 "t.targets: over the limit of 10 bytes"},
	{"no requests", "# only a comment\n\n   \n", 0, {0}, PACER_EPARSE, "t.targets: no requests"},
	{"empty file", "", 0, {0}, PACER_EPARSE, "t.targets: no requests"},
};

static void test_errors(void **state)
{
	(void)state;
	for (size_t i = 0; i < N(errs); i++) {
		const struct err_case *c = &errs[i];
		size_t len;
		char *text = expand(c->text, c->len ? c->len : strlen(c->text), &len);
		char *want = expand(c->want, strlen(c->want), NULL);
		struct table *t = (struct table *)&len; /* must be reset to NULL */
		char err[512] = "";
		int rc = table_parse(text, len, TABLE_FMT_TARGETS, "t.targets", dir, &c->lim, &t, err, sizeof err);
		if (rc != c->code)
			fail_msg("%s: rc %d (%s), want %d: %s", c->name, rc, err_name(rc), c->code, err);
		assert_null(t);
		if (want[0] == '~') {
			if (!strstr(err, want + 1))
				fail_msg("%s: '%s' does not contain '%s'", c->name, err, want + 1);
		} else if (strcmp(err, want) != 0) {
			fail_msg("%s:\n got '%s'\nwant '%s'", c->name, err, want);
		}
		free(text);
		free(want);
	}
}

static void test_url_too_long(void **state)
{
	(void)state;
	size_t n = 9000;
	char *text = malloc(n + 32);
	assert_non_null(text);
	int k = snprintf(text, n + 32, "GET http://h/");
	memset(text + k, 'a', n);
	text[k + (int)n] = '\n';
	struct table *t = NULL;
	char err[512];
	int rc = table_parse(text, (size_t)k + n + 1, TABLE_FMT_TARGETS, "t", NULL, NULL, &t, err, sizeof err);
	assert_int_equal(rc, PACER_ETOOBIG);
	assert_null(t);
	assert_true(strncmp(err, "t:1: bad URL 'http://h/aaa", 26) == 0);
	free(text);
}

static void test_load_file(void **state)
{
	(void)state;
	const char *text = "# a comment first\nPOST http://h/\n@sub/b.txt\n";
	write_file("t.targets", text, strlen(text));
	char path[400];
	snprintf(path, sizeof path, "%s/t.targets", dir);
	struct table *t = NULL;
	char err[512];
	/* the body path is relative to the table's folder, not the working one */
	assert_int_equal(table_load(path, TABLE_FMT_AUTO, NULL, &t, err, sizeof err), 0);
	assert_int_equal(t->format, TABLE_FMT_TARGETS);
	assert_string_equal(t->source, path);
	assert_int_equal(t->reqs[0].body_len, 4);
	assert_int_equal(t->reqs[0].line, 2);
	table_free(t);

	snprintf(path, sizeof path, "%s/missing.targets", dir);
	assert_int_equal(table_load(path, TABLE_FMT_AUTO, NULL, &t, err, sizeof err), -ENOENT);
	assert_null(t);
	assert_non_null(strstr(err, "missing.targets: cannot read: No such file or directory"));
	assert_int_equal(table_load(dir, TABLE_FMT_AUTO, NULL, &t, err, sizeof err), -EISDIR);
	assert_non_null(strstr(err, ": cannot read: it is a folder"));
}

static void test_format_names(void **state)
{
	(void)state;
	enum table_format f;
	assert_int_equal(table_format_parse("targets", &f), 0);
	assert_int_equal(f, TABLE_FMT_TARGETS);
	assert_int_equal(table_format_parse("jsonl", &f), 0);
	assert_int_equal(f, TABLE_FMT_JSONL);
	assert_int_equal(table_format_parse("auto", &f), 0);
	assert_int_equal(f, TABLE_FMT_AUTO);
	assert_int_equal(table_format_parse("har", &f), PACER_EPARSE);
	assert_string_equal(table_format_name(TABLE_FMT_MIX), "mix");
	assert_string_equal(table_format_name(TABLE_FMT_BODIES), "bodies");
	/* AUTO: '{' after comments and blank lines means JSON Lines */
	const char *j = "# x\n\n  {\"method\":\"GET\",\"url\":\"http://h/\"}\n";
	struct table *t = NULL;
	char err[256];
	assert_int_equal(table_parse(j, strlen(j), TABLE_FMT_AUTO, "j", NULL, NULL, &t, err, sizeof err), 0);
	assert_int_equal(t->format, TABLE_FMT_JSONL);
	table_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ok),
		cmocka_unit_test(test_hosts),
		cmocka_unit_test(test_shared_body),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_url_too_long),
		cmocka_unit_test(test_load_file),
		cmocka_unit_test(test_format_names),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
