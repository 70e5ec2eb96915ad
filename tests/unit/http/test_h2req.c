/* Tests of HTTP/1.1 request bytes to HTTP/2 fields (src/http/h2req.c): the
 * pseudo-headers from the request line and Host, names lower-cased,
 * connection-specific fields dropped, the body borrowed; and requests it
 * refuses, each with its reason. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "http/h2req.h"

/* "name: value" of field i, for comparing. */
static void field(const struct h2req *r, size_t i, char *out, size_t cap)
{
	const nghttp2_nv *nv = &r->nv[i];
	snprintf(out, cap, "%.*s: %.*s", (int)nv->namelen, (const char *)nv->name,
		 (int)nv->valuelen, (const char *)nv->value);
}

static void expect(const char *req, const char *scheme, const char *const *want, size_t n_want,
		   const char *body)
{
	struct h2req r;
	char err[160] = "";
	int rc = h2req_from_h1(&r, req, strlen(req), scheme, err, sizeof err);
	if (rc)
		fail_msg("%s: %s", req, err);
	assert_int_equal(r.n_nv, n_want);
	for (size_t i = 0; i < n_want; i++) {
		char got[256];
		field(&r, i, got, sizeof got);
		assert_string_equal(got, want[i]);
		assert_int_equal(r.nv[i].flags,
				 NGHTTP2_NV_FLAG_NO_COPY_NAME | NGHTTP2_NV_FLAG_NO_COPY_VALUE);
	}
	if (body) {
		assert_int_equal(r.body_len, strlen(body));
		assert_memory_equal(r.body, body, r.body_len);
		assert_ptr_equal(r.body, req + strlen(req) - strlen(body)); /* borrowed */
	} else {
		assert_null(r.body);
		assert_int_equal(r.body_len, 0);
	}
	h2req_free(&r);
	assert_null(r.nv);
}

static void test_get(void **state)
{
	(void)state;
	static const char *const want[] = {":method: GET", ":scheme: http", ":authority: example.com:8080",
					   ":path: /a/b?x=1", "user-agent: pacer/0.1", "accept: */*"};
	expect("GET /a/b?x=1 HTTP/1.1\r\nHost: example.com:8080\r\nUser-Agent: pacer/0.1\r\n"
	       "Accept: */*\r\n\r\n", "http", want, 6, NULL);
}

static void test_post_body_and_dropped_fields(void **state)
{
	(void)state;
	static const char *const want[] = {":method: POST", ":scheme: https", ":authority: h",
					   ":path: /p", "content-length: 5", "x-mixed-case: KeepCase",
					   "te: trailers"};
	expect("POST /p HTTP/1.1\r\nHost: h\r\nConnection: keep-alive\r\nContent-Length: 5\r\n"
	       "Keep-Alive: timeout=5\r\nX-Mixed-Case:   KeepCase  \r\nUpgrade: h2c\r\nTE: trailers\r\n"
	       "Proxy-Connection: x\r\n\r\nhello", "https", want, 7, "hello");
}

static void test_te_other_than_trailers_dropped(void **state)
{
	(void)state;
	static const char *const want[] = {":method: GET", ":scheme: http", ":authority: h", ":path: /"};
	expect("GET / HTTP/1.1\r\nTE: gzip\r\nHost: h\r\n\r\n", "http", want, 4, NULL);
}

static void test_absolute_form_and_star(void **state)
{
	(void)state;
	static const char *const abs_want[] = {":method: GET", ":scheme: http", ":authority: h:1",
					       ":path: /x?y"};
	expect("GET http://other/x?y HTTP/1.1\r\nHost: h:1\r\n\r\n", "http", abs_want, 4, NULL);
	static const char *const noslash[] = {":method: GET", ":scheme: http", ":authority: srv",
					      ":path: /"};
	expect("GET http://srv HTTP/1.0\r\n\r\n", "http", noslash, 4, NULL);
	static const char *const star[] = {":method: OPTIONS", ":scheme: http", ":authority: h",
					   ":path: *"};
	expect("OPTIONS * HTTP/1.1\r\nHost: h\r\n\r\n", "http", star, 4, NULL);
}

static void refuse(const char *req, const char *why)
{
	struct h2req r;
	char err[160] = "";
	assert_int_equal(h2req_from_h1(&r, req, strlen(req), "http", err, sizeof err), -EINVAL);
	if (!strstr(err, why))
		fail_msg("%s: reason '%s' lacks '%s'", req, err, why);
	assert_null(r.nv);
}

static void test_refused(void **state)
{
	(void)state;
	refuse("GET / HTTP/1.1\r\nHost: h\r\n", "incomplete");
	refuse("GET / HTTP/1.1\r\n\r\n", "does not parse"); /* HTTP/1.1 without Host */
	refuse("GET / HTTP/1.0\r\n\r\n", "no Host");
	refuse("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
	       "Content-Length");
	refuse("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\n\r\nhi", "the body is 2 bytes");
	char many[8192];
	size_t n = (size_t)snprintf(many, sizeof many, "GET / HTTP/1.1\r\nHost: h\r\n");
	for (int i = 0; i < H2REQ_MAX_FIELDS; i++)
		n += (size_t)snprintf(many + n, sizeof many - n, "X-%d: v\r\n", i);
	snprintf(many + n, sizeof many - n, "\r\n");
	refuse(many, "more than");
	/* a head over 16 KiB (a long -H): the limit named, not "does not parse" */
	static char big[17100];
	n = (size_t)snprintf(big, sizeof big, "GET / HTTP/1.1\r\nHost: h\r\nX-Big: ");
	memset(big + n, 'a', 17000);
	memcpy(big + n + 17000, "\r\n\r\n", 5);
	refuse(big, "more than 16384 bytes (16 KiB");
	static char line[9000];
	n = (size_t)snprintf(line, sizeof line, "GET /");
	memset(line + n, 'a', 8500);
	snprintf(line + n + 8500, sizeof line - n - 8500, " HTTP/1.1\r\nHost: h\r\n\r\n");
	refuse(line, "request line is more than 8192 bytes");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_get),
		cmocka_unit_test(test_post_body_and_dropped_fields),
		cmocka_unit_test(test_te_other_than_trailers_dropped),
		cmocka_unit_test(test_absolute_form_and_star),
		cmocka_unit_test(test_refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
