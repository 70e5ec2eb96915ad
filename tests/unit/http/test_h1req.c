/* Tests of the incremental HTTP/1.1 request-head parser (src/http/h1req.c).
 *
 * Every table case is parsed whole, byte-at-a-time, and in seeded random
 * splits; every run must give the same result (return value, error status,
 * and fields). Hostile inputs: garbage, NUL bytes, oversized heads and
 * lines, smuggling shapes (CL + TE, differing CLs, obs-fold). */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "http/h1req.h"
#include "util/err.h"

#define WHOLE (-1) /* expected return: the length of the whole input */
#define HEAD (-2)  /* expected return: up to and including the first CRLFCRLF */

struct want {
	int rc;            /* > 0 head length, WHOLE, 0 need more, < 0 error */
	int status;        /* error_status when rc < 0 */
	const char *method;
	const char *target;
	int minor;
	bool keep_alive;
	bool has_cl;
	uint64_t cl;
	bool expect;
};

struct rcase {
	const char *name;
	const char *in;
	size_t len; /* 0: strlen */
	struct want w;
};

#define H "Host: x\r\n"

static const struct rcase cases[] = {
	/* valid */
	{"simple get", "GET / HTTP/1.1\r\n" H "\r\n", 0, {WHOLE, 0, "GET", "/", 1, true, false, 0, false}},
	{"bare LF", "GET /a HTTP/1.1\n" H "\n", 0, {WHOLE, 0, "GET", "/a", 1, true, false, 0, false}},
	{"leading empty lines", "\r\n\r\nGET / HTTP/1.1\r\n" H "\r\n", 0,
	 {WHOLE, 0, "GET", "/", 1, true, false, 0, false}},
	{"http/1.0 closes", "GET /x?y=1 HTTP/1.0\r\n\r\n", 0,
	 {WHOLE, 0, "GET", "/x?y=1", 0, false, false, 0, false}},
	{"http/1.0 keep-alive", "GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n", 0,
	 {WHOLE, 0, "GET", "/", 0, true, false, 0, false}},
	{"connection close", "GET / HTTP/1.1\r\n" H "Connection: foo, close\r\n\r\n", 0,
	 {WHOLE, 0, "GET", "/", 1, false, false, 0, false}},
	{"close beats keep-alive", "GET / HTTP/1.1\r\n" H "Connection: keep-alive\r\nConnection: close\r\n\r\n",
	 0, {WHOLE, 0, "GET", "/", 1, false, false, 0, false}},
	{"content-length", "POST /p HTTP/1.1\r\n" H "Content-Length:  12 \r\n\r\nhello world!", 0,
	 {HEAD, 0, "POST", "/p", 1, true, true, 12, false}},
	{"repeated equal CL", "PUT / HTTP/1.1\r\n" H "content-length: 3\r\nContent-Length: 3\r\n\r\n", 0,
	 {WHOLE, 0, "PUT", "/", 1, true, true, 3, false}},
	{"expect 100", "POST / HTTP/1.1\r\n" H "Expect: 100-Continue\r\nContent-Length: 5\r\n\r\n", 0,
	 {WHOLE, 0, "POST", "/", 1, true, true, 5, true}},
	{"expect ignored in 1.0", "POST / HTTP/1.0\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n", 0,
	 {WHOLE, 0, "POST", "/", 0, false, true, 5, false}},
	{"absolute form", "GET http://example.com/a?b HTTP/1.1\r\n" H "\r\n", 0,
	 {WHOLE, 0, "GET", "http://example.com/a?b", 1, true, false, 0, false}},
	{"asterisk", "OPTIONS * HTTP/1.1\r\n" H "\r\n", 0, {WHOLE, 0, "OPTIONS", "*", 1, true, false, 0, false}},
	{"obs-text value", "GET / HTTP/1.1\r\n" H "X-A: caf\xc3\xa9\t!\r\n\r\n", 0,
	 {WHOLE, 0, "GET", "/", 1, true, false, 0, false}},
	{"empty value", "GET / HTTP/1.1\r\n" H "X-Empty:\r\n\r\n", 0, {WHOLE, 0, "GET", "/", 1, true, false, 0, false}},
	{"custom method", "PURGE /c HTTP/1.1\r\n" H "\r\n", 0, {WHOLE, 0, "PURGE", "/c", 1, true, false, 0, false}},

	/* incomplete */
	{"partial line", "GET / HTT", 0, {0, 0, NULL, NULL, 0, false, false, 0, false}},
	{"partial headers", "GET / HTTP/1.1\r\nHost: x\r\n", 0, {0, 0, NULL, NULL, 0, false, false, 0, false}},
	{"partial final CR", "GET / HTTP/1.1\r\nHost: x\r\n\r", 0, {0, 0, NULL, NULL, 0, false, false, 0, false}},
	{"only empty lines", "\r\n\r\n", 0, {0, 0, NULL, NULL, 0, false, false, 0, false}},

	/* 400 */
	{"garbage", "\x16\x03\x01\x02\x00\x01\x00", 7, {PACER_EPARSE, 400, NULL, NULL, 0, false, false, 0, false}},
	{"nul in method", "GE\0T / HTTP/1.1\r\n\r\n", 19, {PACER_EPARSE, 400, NULL, NULL, 0, false, false, 0, false}},
	{"space first", " GET / HTTP/1.1\r\n\r\n", 0, {PACER_EPARSE, 400, NULL, NULL, 0, false, false, 0, false}},
	{"double space", "GET  / HTTP/1.1\r\n" H "\r\n", 0, {PACER_EPARSE, 400, NULL, NULL, 0, false, false, 0, false}},
	{"no version (0.9)", "GET /\r\n\r\n", 0, {PACER_EPARSE, 400, NULL, NULL, 0, false, false, 0, false}},
	{"lowercase version", "GET / http/1.1\r\n" H "\r\n", 0, {PACER_EPARSE, 400, NULL, NULL, 0, false, false, 0, false}},
	{"long version", "GET / HTTP/1.10\r\n" H "\r\n", 0, {PACER_EPARSE, 400, NULL, NULL, 0, false, false, 0, false}},
	{"bad target", "GET foo HTTP/1.1\r\n" H "\r\n", 0, {PACER_EPARSE, 400, NULL, NULL, 0, false, false, 0, false}},
	{"ctl in target", "GET /a\x01 HTTP/1.1\r\n" H "\r\n", 0, {PACER_EPARSE, 400, NULL, NULL, 0, false, false, 0, false}},
	{"8bit in target", "GET /\xe9 HTTP/1.1\r\n" H "\r\n", 0, {PACER_EPARSE, 400, NULL, NULL, 0, false, false, 0, false}},
	{"bare CR", "GET / HTTP/1.1\rX\n" H "\r\n", 0, {PACER_EPARSE, 400, NULL, NULL, 0, false, false, 0, false}},
	{"space before colon", "GET / HTTP/1.1\r\nHost : x\r\n\r\n", 0, {PACER_EPARSE, 400, NULL, NULL, 0, false, false, 0, false}},
	{"obs-fold", "GET / HTTP/1.1\r\n" H "X: a\r\n b\r\n\r\n", 0, {PACER_EPARSE, 400, NULL, NULL, 0, false, false, 0, false}},
	{"no colon", "GET / HTTP/1.1\r\n" H "Nocolon\r\n\r\n", 0, {PACER_EPARSE, 400, NULL, NULL, 0, false, false, 0, false}},
	{"ctl in value", "GET / HTTP/1.1\r\n" H "X: a\x7f\r\n\r\n", 0, {PACER_EPARSE, 400, NULL, NULL, 0, false, false, 0, false}},
	{"nul in value", "GET / HTTP/1.1\r\nX: a\0b\r\n\r\n", 27, {PACER_EPARSE, 400, NULL, NULL, 0, false, false, 0, false}},
	{"missing host 1.1", "GET / HTTP/1.1\r\n\r\n", 0, {PACER_EPARSE, 400, NULL, NULL, 0, false, false, 0, false}},
	{"two hosts", "GET / HTTP/1.1\r\n" H H "\r\n", 0, {PACER_EPARSE, 400, NULL, NULL, 0, false, false, 0, false}},
	{"bad CL", "POST / HTTP/1.1\r\n" H "Content-Length: 1x\r\n\r\n", 0, {PACER_EPARSE, 400, NULL, NULL, 0, false, false, 0, false}},
	{"CL list", "POST / HTTP/1.1\r\n" H "Content-Length: 1, 1\r\n\r\n", 0, {PACER_EPARSE, 400, NULL, NULL, 0, false, false, 0, false}},
	{"negative CL", "POST / HTTP/1.1\r\n" H "Content-Length: -1\r\n\r\n", 0, {PACER_EPARSE, 400, NULL, NULL, 0, false, false, 0, false}},
	{"empty CL", "POST / HTTP/1.1\r\n" H "Content-Length: \r\n\r\n", 0, {PACER_EPARSE, 400, NULL, NULL, 0, false, false, 0, false}},
	{"differing CLs", "POST / HTTP/1.1\r\n" H "Content-Length: 1\r\nContent-Length: 2\r\n\r\n", 0,
	 {PACER_EPARSE, 400, NULL, NULL, 0, false, false, 0, false}},
	{"CL and TE", "POST / HTTP/1.1\r\n" H "Content-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n", 0,
	 {PACER_EPARSE, 400, NULL, NULL, 0, false, false, 0, false}},
	{"TE in 1.0", "POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n", 0,
	 {PACER_EPARSE, 400, NULL, NULL, 0, false, false, 0, false}},
	{"bad end CR", "GET / HTTP/1.1\r\n" H "\rX", 0, {PACER_EPARSE, 400, NULL, NULL, 0, false, false, 0, false}},
	{"long method", "ABCDEFGHIJABCDEFGHIJABCDEFGHIJABC / HTTP/1.1\r\n" H "\r\n", 0,
	 {PACER_EPARSE, 400, NULL, NULL, 0, false, false, 0, false}},

	/* other refusals */
	{"chunked body", "POST / HTTP/1.1\r\n" H "Transfer-Encoding: gzip, chunked\r\n\r\n", 0,
	 {PACER_EPARSE, 411, NULL, NULL, 0, false, false, 0, false}},
	{"other TE", "POST / HTTP/1.1\r\n" H "Transfer-Encoding: gzip\r\n\r\n", 0,
	 {PACER_EPARSE, 501, NULL, NULL, 0, false, false, 0, false}},
	{"http/2.0", "GET / HTTP/2.0\r\n" H "\r\n", 0, {PACER_EPARSE, 505, NULL, NULL, 0, false, false, 0, false}},
	{"http/1.2", "GET / HTTP/1.2\r\n" H "\r\n", 0, {PACER_EPARSE, 505, NULL, NULL, 0, false, false, 0, false}},
	{"huge CL", "POST / HTTP/1.1\r\n" H "Content-Length: 99999999999999999999999\r\n\r\n", 0,
	 {PACER_ETOOBIG, 413, NULL, NULL, 0, false, false, 0, false}},
};

/* ---- runner --------------------------------------------------------- */

struct got {
	int rc;
	int status;
	char method[64];
	char target[256];
	int minor;
	bool keep_alive, has_cl, expect;
	uint64_t cl;
};

static uint64_t xs(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* Feed in[0..len) in pieces: step 0 = whole, 1 = bytes, else random. The
 * buffer is copied afresh at each call (the parser must not rely on bytes
 * past `len`, nor on the buffer's address). */
static struct got run(const char *in, size_t len, int mode, uint64_t seed)
{
	struct h1req r;
	h1req_init(&r);
	struct got g = {0};
	size_t have = 0;
	int rc = 0;
	char *buf = NULL;
	while (have < len) {
		size_t step = mode == 0 ? len : mode == 1 ? 1 : 1 + xs(&seed) % 7;
		have = have + step > len ? len : have + step;
		free(buf);
		buf = malloc(have ? have : 1);
		assert_non_null(buf);
		memcpy(buf, in, have);
		rc = h1req_parse(&r, buf, have);
		if (rc != 0)
			break;
	}
	g.rc = rc;
	if (rc < 0)
		g.status = r.error_status;
	if (rc > 0) {
		snprintf(g.method, sizeof g.method, "%.*s", (int)r.method_len, buf + r.method_off);
		snprintf(g.target, sizeof g.target, "%.*s", (int)r.target_len, buf + r.target_off);
		g.minor = r.version_minor;
		g.keep_alive = r.keep_alive;
		g.has_cl = r.has_content_length;
		g.cl = r.content_length;
		g.expect = r.expect_continue;
		/* a finished parser keeps answering the same */
		assert_int_equal(h1req_parse(&r, buf, have), rc);
	}
	free(buf);
	return g;
}

static void check(const struct rcase *c, const struct got *g)
{
	size_t len = c->len ? c->len : strlen(c->in);
	int want_rc = c->w.rc == WHOLE ? (int)len
	              : c->w.rc == HEAD ? (int)(strstr(c->in, "\r\n\r\n") - c->in) + 4
	                                : c->w.rc;
	if (g->rc != want_rc)
		fail_msg("%s: rc %d, want %d", c->name, g->rc, want_rc);
	if (want_rc < 0 && g->status != c->w.status)
		fail_msg("%s: status %d, want %d", c->name, g->status, c->w.status);
	if (want_rc > 0) {
		assert_string_equal(g->method, c->w.method);
		assert_string_equal(g->target, c->w.target);
		assert_int_equal(g->minor, c->w.minor);
		if (g->keep_alive != c->w.keep_alive)
			fail_msg("%s: keep_alive %d", c->name, g->keep_alive);
		assert_int_equal(g->has_cl, c->w.has_cl);
		assert_int_equal(g->cl, c->w.cl);
		assert_int_equal(g->expect, c->w.expect);
	}
}

static void test_table(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		const struct rcase *c = &cases[i];
		size_t len = c->len ? c->len : strlen(c->in);
		struct got g = run(c->in, len, 0, 0);
		check(c, &g);
		g = run(c->in, len, 1, 0);
		check(c, &g);
		for (uint64_t seed = 1; seed <= 20; seed++) {
			g = run(c->in, len, 2, seed * 7919);
			check(c, &g);
		}
	}
}

/* The head length excludes the body that follows. */
static void test_body_follows(void **state)
{
	(void)state;
	const char *in = "POST /p HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\n\r\nbodyGET / HTTP/1.1\r\n";
	struct h1req r;
	h1req_init(&r);
	int head = (int)(strstr(in, "\r\n\r\n") - in) + 4;
	assert_int_equal(h1req_parse(&r, in, strlen(in)), head);
	assert_int_equal(r.content_length, 4);
	/* the next request, after the body, parses on its own */
	h1req_init(&r);
	const char *next = in + head + 4;
	assert_int_equal(h1req_parse(&r, next, strlen(next)), 0);
}

static void test_pipelined(void **state)
{
	(void)state;
	const char *in = "GET /1 HTTP/1.1\r\nHost: a\r\n\r\nGET /2 HTTP/1.1\r\nHost: a\r\n\r\nGET /3 HTT";
	size_t off = 0, len = strlen(in);
	const char *want[] = {"/1", "/2"};
	for (int i = 0; i < 2; i++) {
		struct h1req r;
		h1req_init(&r);
		int rc = h1req_parse(&r, in + off, len - off);
		assert_true(rc > 0);
		assert_int_equal(r.target_len, 2);
		assert_memory_equal(in + off + r.target_off, want[i], 2);
		off += (size_t)rc;
	}
	struct h1req r;
	h1req_init(&r);
	assert_int_equal(h1req_parse(&r, in + off, len - off), 0);
}

static void fill_header(char *buf, size_t n)
{
	const char *start = "GET / HTTP/1.1\r\nHost: x\r\nX-Big: ";
	size_t sl = strlen(start);
	memcpy(buf, start, sl);
	memset(buf + sl, 'a', n - sl);
}

/* Heads over the cap are 431 as soon as the cap is passed, fed whole or in
 * pieces; a request line over its cap is 414. Exactly at the cap is fine. */
static void test_caps(void **state)
{
	(void)state;
	size_t n = H1REQ_HEADERS_CAP + 100;
	char *buf = malloc(n);
	assert_non_null(buf);
	fill_header(buf, n);
	struct got g = run(buf, n, 0, 0);
	assert_int_equal(g.rc, PACER_EHDRSIZE);
	assert_int_equal(g.status, 431);
	g = run(buf, n, 2, 99);
	assert_int_equal(g.rc, PACER_EHDRSIZE);
	assert_int_equal(g.status, 431);
	/* under the cap: still waiting for more */
	g = run(buf, H1REQ_HEADERS_CAP - 1, 0, 0);
	assert_int_equal(g.rc, 0);
	/* a head of exactly the cap is accepted */
	fill_header(buf, H1REQ_HEADERS_CAP);
	memcpy(buf + H1REQ_HEADERS_CAP - 4, "\r\n\r\n", 4);
	g = run(buf, H1REQ_HEADERS_CAP, 0, 0);
	assert_int_equal(g.rc, (int)H1REQ_HEADERS_CAP);
	free(buf);
	/* one byte more is refused, even though the head is complete */
	buf = malloc(H1REQ_HEADERS_CAP + 1);
	assert_non_null(buf);
	fill_header(buf, H1REQ_HEADERS_CAP + 1);
	memcpy(buf + H1REQ_HEADERS_CAP - 3, "\r\n\r\n", 4);
	g = run(buf, H1REQ_HEADERS_CAP + 1, 0, 0);
	assert_int_equal(g.rc, PACER_EHDRSIZE);
	assert_int_equal(g.status, 431);
	free(buf);

	/* long request line */
	n = H1REQ_LINE_CAP + 10;
	buf = malloc(n);
	assert_non_null(buf);
	memcpy(buf, "GET /", 5);
	memset(buf + 5, 'a', n - 5);
	g = run(buf, n, 0, 0);
	assert_int_equal(g.rc, PACER_EHDRSIZE);
	assert_int_equal(g.status, 414);
	free(buf);
}

/* Garbage is refused at its first bad byte, not after the cap. */
static void test_garbage_early(void **state)
{
	(void)state;
	struct h1req r;
	h1req_init(&r);
	assert_int_equal(h1req_parse(&r, "\x80", 1), PACER_EPARSE);
	assert_int_equal(r.error_status, 400);
	h1req_init(&r);
	assert_int_equal(h1req_parse(&r, "GET", 3), 0);
	assert_int_equal(h1req_parse(&r, "GET\t", 4), PACER_EPARSE);
	/* and it stays refused */
	assert_int_equal(h1req_parse(&r, "GET\t / HTTP/1.1\r\n\r\n", 19), PACER_EPARSE);
}

/* Random bytes never crash the parser and always end in a definite state. */
static void test_random_bytes(void **state)
{
	(void)state;
	uint64_t s = 12345;
	char buf[512];
	for (int iter = 0; iter < 20000; iter++) {
		size_t n = 1 + xs(&s) % sizeof buf;
		for (size_t i = 0; i < n; i++) {
			uint64_t v = xs(&s);
			/* mostly plausible bytes, some hostile */
			const char *alpha = "GET /HTTP1.0\r\n:Host xContent-Length7";
			buf[i] = v % 8 ? alpha[v % strlen(alpha)] : (char)(v >> 8);
		}
		struct h1req r;
		h1req_init(&r);
		int rc = h1req_parse(&r, buf, n);
		assert_true(rc <= (int)n);
		if (rc < 0)
			assert_true(r.error_status >= 400 && r.error_status <= 505);
		struct got g = run(buf, n, 1, 0);
		assert_int_equal(g.rc, rc);
	}
}

static void test_tchar(void **state)
{
	(void)state;
	const char *extra = "!#$%&'*+-.^_`|~";
	for (int c = 0; c < 256; c++) {
		bool want = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		            (c != 0 && strchr(extra, c) != NULL);
		if (h1req_is_tchar((unsigned char)c) != want)
			fail_msg("tchar(%d) = %d", c, !want);
	}
}

static void split(const char *req, const char *wpath, const char *wquery)
{
	struct h1req r;
	h1req_init(&r);
	assert_true(h1req_parse(&r, req, strlen(req)) > 0);
	const char *p, *q;
	size_t pl, ql;
	h1req_split_target(&r, req, &p, &pl, &q, &ql);
	char pb[128], qb[128];
	snprintf(pb, sizeof pb, "%.*s", (int)pl, p);
	snprintf(qb, sizeof qb, "%.*s", (int)ql, q);
	assert_string_equal(pb, wpath);
	assert_string_equal(qb, wquery);
}

static void test_split_target(void **state)
{
	(void)state;
	split("GET /a/b HTTP/1.1\r\nHost: x\r\n\r\n", "/a/b", "");
	split("GET /a?x=1&y HTTP/1.1\r\nHost: x\r\n\r\n", "/a", "x=1&y");
	split("GET /? HTTP/1.1\r\nHost: x\r\n\r\n", "/", "");
	split("GET http://h:80/p?q HTTP/1.1\r\nHost: x\r\n\r\n", "/p", "q");
	split("GET https://h HTTP/1.1\r\nHost: x\r\n\r\n", "/", "");
	split("GET http://h?z=2 HTTP/1.1\r\nHost: x\r\n\r\n", "/", "z=2");
	split("OPTIONS * HTTP/1.1\r\nHost: x\r\n\r\n", "*", "");
}

static void test_query_param(void **state)
{
	(void)state;
	const char *q = "a=1&keys=k1,k2&empty=&flag&aa=3";
	const char *v;
	size_t vl;
	assert_true(h1req_query_param(q, strlen(q), "keys", &v, &vl));
	assert_int_equal(vl, 5);
	assert_memory_equal(v, "k1,k2", 5);
	assert_true(h1req_query_param(q, strlen(q), "a", &v, &vl));
	assert_int_equal(vl, 1);
	assert_true(h1req_query_param(q, strlen(q), "aa", &v, &vl));
	assert_memory_equal(v, "3", 1);
	assert_true(h1req_query_param(q, strlen(q), "empty", &v, &vl));
	assert_int_equal(vl, 0);
	assert_true(h1req_query_param(q, strlen(q), "flag", &v, &vl));
	assert_int_equal(vl, 0);
	assert_false(h1req_query_param(q, strlen(q), "key", &v, &vl));
	assert_false(h1req_query_param("", 0, "a", &v, &vl));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table),        cmocka_unit_test(test_body_follows),
		cmocka_unit_test(test_pipelined),    cmocka_unit_test(test_caps),
		cmocka_unit_test(test_garbage_early), cmocka_unit_test(test_random_bytes),
		cmocka_unit_test(test_tchar),        cmocka_unit_test(test_split_target),
		cmocka_unit_test(test_query_param),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
