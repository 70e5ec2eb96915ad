/* Tests of request encoding (src/http/req.c): exact wire bytes for a table
 * of requests (Host with and without the default port, IPv6, bodies and
 * Content-Length, user headers replacing the defaults, "Name:value"
 * normalised), header and method checks with their phrases, and large
 * inputs that must fit the buffer the encoder sizes for itself. */
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

#include "http/req.h"
#include "http/url.h"
#include "util/err.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))
#define UA "pacer/test"

struct enc_case {
	const char *name;
	const char *url;
	const char *method;
	const char *headers[4];
	const char *body;
	size_t body_len;
	const char *user_agent;
	const char *want;
	size_t want_len; /* 0: strlen(want) */
};

static const struct enc_case enc[] = {
	{ "GET default port", "http://example.com/", "GET", { NULL }, NULL, 0, UA,
	  "GET / HTTP/1.1\r\nHost: example.com\r\nUser-Agent: pacer/test\r\n\r\n", 0 },
	{ "GET no path", "http://example.com", "GET", { NULL }, NULL, 0, UA,
	  "GET / HTTP/1.1\r\nHost: example.com\r\nUser-Agent: pacer/test\r\n\r\n", 0 },
	{ "GET explicit :80 omitted", "http://example.com:80/x", "GET", { NULL }, NULL, 0, UA,
	  "GET /x HTTP/1.1\r\nHost: example.com\r\nUser-Agent: pacer/test\r\n\r\n", 0 },
	{ "GET other port", "http://127.0.0.1:8080/a/b?x=1&y=2", "GET", { NULL }, NULL, 0, UA,
	  "GET /a/b?x=1&y=2 HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nUser-Agent: pacer/test\r\n\r\n", 0 },
	{ "https default port", "https://h:443/", "GET", { NULL }, NULL, 0, UA,
	  "GET / HTTP/1.1\r\nHost: h\r\nUser-Agent: pacer/test\r\n\r\n", 0 },
	{ "https port 80 kept", "https://h:80/", "GET", { NULL }, NULL, 0, UA,
	  "GET / HTTP/1.1\r\nHost: h:80\r\nUser-Agent: pacer/test\r\n\r\n", 0 },
	{ "IPv6 with port", "http://[::1]:8080/p", "GET", { NULL }, NULL, 0, UA,
	  "GET /p HTTP/1.1\r\nHost: [::1]:8080\r\nUser-Agent: pacer/test\r\n\r\n", 0 },
	{ "IPv6 default port", "http://[2001:db8::1]/", "GET", { NULL }, NULL, 0, UA,
	  "GET / HTTP/1.1\r\nHost: [2001:db8::1]\r\nUser-Agent: pacer/test\r\n\r\n", 0 },
	{ "fragment not sent", "http://h/p?q#frag", "GET", { NULL }, NULL, 0, UA,
	  "GET /p?q HTTP/1.1\r\nHost: h\r\nUser-Agent: pacer/test\r\n\r\n", 0 },
	{ "no user agent", "http://h/", "GET", { NULL }, NULL, 0, NULL,
	  "GET / HTTP/1.1\r\nHost: h\r\n\r\n", 0 },
	{ "POST with body", "http://h/api", "POST", { "Content-Type: application/json" },
	  "{\"a\":1}", 7, UA,
	  "POST /api HTTP/1.1\r\nHost: h\r\nUser-Agent: pacer/test\r\n"
	  "Content-Type: application/json\r\nContent-Length: 7\r\n\r\n{\"a\":1}",
	  0 },
	{ "POST empty body", "http://h/", "POST", { NULL }, NULL, 0, UA,
	  "POST / HTTP/1.1\r\nHost: h\r\nUser-Agent: pacer/test\r\nContent-Length: 0\r\n\r\n", 0 },
	{ "PUT empty body", "http://h/", "PUT", { NULL }, NULL, 0, UA,
	  "PUT / HTTP/1.1\r\nHost: h\r\nUser-Agent: pacer/test\r\nContent-Length: 0\r\n\r\n", 0 },
	{ "PATCH empty body", "http://h/", "PATCH", { NULL }, NULL, 0, UA,
	  "PATCH / HTTP/1.1\r\nHost: h\r\nUser-Agent: pacer/test\r\nContent-Length: 0\r\n\r\n", 0 },
	{ "DELETE no body: no Content-Length", "http://h/", "DELETE", { NULL }, NULL, 0, UA,
	  "DELETE / HTTP/1.1\r\nHost: h\r\nUser-Agent: pacer/test\r\n\r\n", 0 },
	{ "GET with body", "http://h/", "GET", { NULL }, "xy", 2, UA,
	  "GET / HTTP/1.1\r\nHost: h\r\nUser-Agent: pacer/test\r\nContent-Length: 2\r\n\r\nxy", 0 },
	{ "binary body with NUL", "http://h/", "POST", { NULL }, "a\0b\r\n", 5, UA,
	  "POST / HTTP/1.1\r\nHost: h\r\nUser-Agent: pacer/test\r\nContent-Length: 5\r\n\r\na\0b\r\n",
	  sizeof("POST / HTTP/1.1\r\nHost: h\r\nUser-Agent: pacer/test\r\nContent-Length: 5\r\n\r\n"
	         "a\0b\r\n") - 1 },
	{ "user Host replaces", "http://127.0.0.1:8080/", "GET", { "Host: example.org" }, NULL, 0, UA,
	  "GET / HTTP/1.1\r\nUser-Agent: pacer/test\r\nHost: example.org\r\n\r\n", 0 },
	{ "user host (any case) replaces", "http://h/", "GET", { "hOsT:v.example" }, NULL, 0, UA,
	  "GET / HTTP/1.1\r\nUser-Agent: pacer/test\r\nhOsT: v.example\r\n\r\n", 0 },
	{ "user User-Agent replaces", "http://h/", "GET", { "user-agent: curl/8" }, NULL, 0, UA,
	  "GET / HTTP/1.1\r\nHost: h\r\nuser-agent: curl/8\r\n\r\n", 0 },
	{ "prefix of Host is another header", "http://h/", "GET", { "Hostile: 1" }, NULL, 0, UA,
	  "GET / HTTP/1.1\r\nHost: h\r\nUser-Agent: pacer/test\r\nHostile: 1\r\n\r\n", 0 },
	{ "user Content-Length kept", "http://h/", "POST", { "Content-Length: 3" }, "abc", 3, UA,
	  "POST / HTTP/1.1\r\nHost: h\r\nUser-Agent: pacer/test\r\nContent-Length: 3\r\n\r\nabc", 0 },
	{ "Name:value normalised", "http://h/", "GET",
	  { "X-A:1", "X-B:   two", "X-C:\t three", "X-Empty:" }, NULL, 0, UA,
	  "GET / HTTP/1.1\r\nHost: h\r\nUser-Agent: pacer/test\r\n"
	  "X-A: 1\r\nX-B: two\r\nX-C: three\r\nX-Empty: \r\n\r\n",
	  0 },
	{ "value keeps inner colons and tabs", "http://h/", "GET", { "X-T: a:b\tc" }, NULL, 0, UA,
	  "GET / HTTP/1.1\r\nHost: h\r\nUser-Agent: pacer/test\r\nX-T: a:b\tc\r\n\r\n", 0 },
	{ "format characters are data", "http://h/%25s", "GET", { "X-P: %s%n%d" }, NULL, 0, "%s",
	  "GET /%25s HTTP/1.1\r\nHost: h\r\nUser-Agent: %s\r\nX-P: %s%n%d\r\n\r\n", 0 },
};

static size_t count_headers(const char *const *h)
{
	size_t n = 0;
	while (n < 4 && h[n])
		n++;
	return n;
}

static void test_encode(void **state)
{
	(void)state;
	static struct url u;
	for (size_t i = 0; i < N(enc); i++) {
		const struct enc_case *c = &enc[i];
		assert_int_equal(url_parse(&u, c->url, NULL), 0);
		struct req_spec s = {
			.method = c->method,
			.url = &u,
			.headers = c->headers,
			.n_headers = count_headers(c->headers),
			.body = c->body,
			.body_len = c->body_len,
			.user_agent = c->user_agent,
		};
		char *out = NULL;
		size_t len = 0;
		const char *why = NULL;
		int rc = req_encode(&s, &out, &len, &why);
		size_t want_len = c->want_len ? c->want_len : strlen(c->want);
		if (rc != 0 || len != want_len || memcmp(out, c->want, want_len) != 0)
			print_message("%s: rc %d (%s) len %zu want %zu:\n%.*s\n", c->name, rc,
			              why ? why : "", len, want_len, (int)len, out ? out : "");
		assert_int_equal(rc, 0);
		assert_non_null(out);
		assert_int_equal(len, want_len);
		assert_memory_equal(out, c->want, want_len);
		free(out);
	}
}

struct hdr_bad {
	const char *line;
	const char *why;
};

static const struct hdr_bad bad_headers[] = {
	{ "NoColon", "expected \"Name: value\"" },
	{ "", "expected \"Name: value\"" },
	{ ": value", "empty header name" },
	{ ":", "empty header name" },
	{ "Bad Name: v", "not allowed in a token" },
	{ " X: v", "not allowed in a token" },
	{ "X : v", "not allowed in a token" },
	{ "X(y): v", "not allowed in a token" },
	{ "X\"y: v", "not allowed in a token" },
	{ "X/y: v", "not allowed in a token" },
	{ "X@y: v", "not allowed in a token" },
	{ "X\ty: v", "not allowed in a token" },
	{ "X\xc3\xa9: v", "not allowed in a token" },
	{ "X-A: a\r\nEvil: 1", "control character" },
	{ "X-A: a\nb", "control character" },
	{ "X-A: a\rb", "control character" },
	{ "X-A: \x01", "control character" },
	{ "X-A: \x1f", "control character" },
	{ "X-A: \x7f", "control character" },
	{ "X\r\nY: v", "not allowed in a token" },
};

static const char *const good_headers[] = {
	"X: v", "X:v", "X:", "x-Y_z.1!#$%&'*+^`|~: v", "A: tab\tinside", "A: caf\xc3\xa9 \xff",
	"A: \"quoted\" (c) <x> [y] {z} @ ; , / ? = \\",
};

static void test_header_check(void **state)
{
	(void)state;
	for (size_t i = 0; i < N(bad_headers); i++) {
		const struct hdr_bad *c = &bad_headers[i];
		const char *why = NULL;
		int rc = req_header_check(c->line, &why);
		if (rc != PACER_EHEADER || !why || !strstr(why, c->why))
			print_message("\"%s\": rc %d why \"%s\", want \"%s\"\n", c->line, rc,
			              why ? why : "(null)", c->why);
		assert_int_equal(rc, PACER_EHEADER);
		assert_non_null(why);
		assert_non_null(strstr(why, c->why));
	}
	for (size_t i = 0; i < N(good_headers); i++) {
		const char *why = NULL;
		int rc = req_header_check(good_headers[i], &why);
		if (rc)
			print_message("\"%s\" rejected: %s\n", good_headers[i], why);
		assert_int_equal(rc, 0);
	}
}

/* A bad header makes req_encode fail with its phrase, allocating nothing. */
static void test_encode_rejects_bad_header(void **state)
{
	(void)state;
	static struct url u;
	assert_int_equal(url_parse(&u, "http://h/", NULL), 0);
	for (size_t i = 0; i < N(bad_headers); i++) {
		const char *hdrs[3] = { "X-Ok: 1", bad_headers[i].line, "Y-Ok: 2" };
		struct req_spec s = {
			.method = "GET", .url = &u, .headers = hdrs, .n_headers = 3,
			.user_agent = UA,
		};
		char *out = NULL;
		size_t len = 12345;
		const char *why = NULL;
		int rc = req_encode(&s, &out, &len, &why);
		assert_int_equal(rc, PACER_EHEADER);
		assert_non_null(why);
		assert_non_null(strstr(why, bad_headers[i].why));
		assert_null(out);
		assert_int_equal(len, 12345);
	}
}

static void test_method_check(void **state)
{
	(void)state;
	static const char *ok[] = {"GET",
				   "POST",
				   "M-SEARCH",
				   "PROPFIND",
				   "x",
				   "A!#$%&'*+.^_`|~9",
				   "ABCDEFGHIJKLMNOPQRSTUVWXYZ012345" /* 32 */,
				   "H2",
				   "1X"};
	static const char *bad[] = {"",        "GE T",
				    "GET\r\n", "GET/",
				    "G(T)",    "G\xc3\x89\x54" /* non-ASCII */,
				    "G:T",     "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456" /* 33 */,
				    "10",      "0" /* all digits: h2load's -m 10 */};
	for (size_t i = 0; i < N(ok); i++) {
		if (req_method_check(ok[i]) != 0)
			print_message("method \"%s\" rejected\n", ok[i]);
		assert_int_equal(req_method_check(ok[i]), 0);
	}
	for (size_t i = 0; i < N(bad); i++) {
		if (req_method_check(bad[i]) != PACER_EPARSE)
			print_message("method \"%s\" accepted\n", bad[i]);
		assert_int_equal(req_method_check(bad[i]), PACER_EPARSE);
	}
	assert_int_equal(req_method_check(NULL), PACER_EPARSE);
}

/* Big inputs: the longest target and host, many long headers and a large
 * body all fit in the buffer the encoder sizes (ASan checks the writes). */
static void test_encode_large(void **state)
{
	(void)state;
	static struct url u;
	static char urlbuf[URL_TARGET_CAP + 512];
	/* host of 255 characters in labels of 63, and a target of URL_TARGET_CAP - 1 */
	size_t n = (size_t)sprintf(urlbuf, "http://");
	size_t hs = n;
	while (n - hs < URL_HOST_CAP - 1) {
		size_t room = URL_HOST_CAP - 1 - (n - hs);
		size_t label = room > 63 ? 63 : room;
		memset(urlbuf + n, 'a', label);
		n += label;
		if (n - hs < URL_HOST_CAP - 1)
			urlbuf[n++] = '.';
	}
	n += (size_t)sprintf(urlbuf + n, ":65535/");
	memset(urlbuf + n, 't', URL_TARGET_CAP - 2);
	urlbuf[n + URL_TARGET_CAP - 2] = '\0';
	assert_int_equal(url_parse(&u, urlbuf, NULL), 0);
	assert_int_equal(strlen(u.target), URL_TARGET_CAP - 1);

	enum { NH = 64, HL = 2000 };
	static char hbuf[NH][HL];
	const char *hdrs[NH];
	size_t hdr_bytes = 0;
	for (int i = 0; i < NH; i++) {
		/* "Name:value" forms grow by one byte when normalised */
		int k = snprintf(hbuf[i], HL, "X-H%d:", i);
		memset(hbuf[i] + k, 'v', HL - 1 - (size_t)k);
		hbuf[i][HL - 1] = '\0';
		hdrs[i] = hbuf[i];
		hdr_bytes += strlen(hbuf[i]) + 1 + 2;
	}
	size_t body_len = 1 << 20;
	char *body = malloc(body_len);
	assert_non_null(body);
	memset(body, 'b', body_len);
	struct req_spec s = {
		.method = "ABCDEFGHIJKLMNOPQRSTUVWXYZ012345", .url = &u, .headers = hdrs,
		.n_headers = NH, .body = body, .body_len = body_len, .user_agent = UA,
	};
	char *out = NULL;
	size_t len = 0;
	const char *why = NULL;
	assert_int_equal(req_encode(&s, &out, &len, &why), 0);
	char hh[URL_HOST_CAP + 16];
	int hl = url_host_header(&u, hh, sizeof hh);
	assert_true(hl > 0);
	size_t want = 32 + 1 + (URL_TARGET_CAP - 1) + 11 /* " HTTP/1.1\r\n" */
	              + 6 + (size_t)hl + 2 /* Host */ + 12 + strlen(UA) + 2 /* User-Agent */
	              + hdr_bytes + strlen("Content-Length: 1048576\r\n") + 2 + body_len;
	assert_int_equal(len, want);
	assert_memory_equal(out + len - body_len, body, body_len);
	assert_memory_equal(out + len - body_len - 4, "\r\n\r\n", 4);
	assert_non_null(memmem(out, len, "X-H63: vvvv", 11));
	free(out);
	free(body);
}

/* The default User-Agent is the caller's string of any length: it must be
 * counted when the buffer is sized (run under ASan). Kept last: if the
 * encoder writes past its buffer, ASan stops the program here. */
static void test_encode_long_user_agent(void **state)
{
	(void)state;
	static struct url u;
	assert_int_equal(url_parse(&u, "http://h/", NULL), 0);
	static char ua[2001];
	memset(ua, 'u', sizeof ua - 1);
	ua[sizeof ua - 1] = '\0';
	struct req_spec s = { .method = "GET", .url = &u, .user_agent = ua };
	char *out = NULL;
	size_t len = 0;
	const char *why = NULL;
	assert_int_equal(req_encode(&s, &out, &len, &why), 0);
	size_t want = strlen("GET / HTTP/1.1\r\nHost: h\r\nUser-Agent: ") + 2000 + 4;
	if (len != want)
		print_message("long User-Agent: len %zu, want %zu\n", len, want);
	assert_int_equal(len, want);
	assert_memory_equal(out + len - 4, "\r\n\r\n", 4);
	assert_memory_equal(out + len - 4 - 2000, ua, 2000);
	free(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_encode),
		cmocka_unit_test(test_header_check),
		cmocka_unit_test(test_encode_rejects_bad_header),
		cmocka_unit_test(test_method_check),
		cmocka_unit_test(test_encode_large),
		cmocka_unit_test(test_encode_long_user_agent),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
