/* Tests of the table core (src/table/table.c, build.c, load.c, wire.c,
 * summary.c): wire bytes of a table through req_encode, extra headers (-H)
 * replacing the table's own, the SHA-256 over the canonical form checked
 * against vectors computed independently (Python hashlib), what changes the
 * hash, folders of bodies (sorted, hidden files and folders skipped, limits
 * and errors naming the file), the summary, and the default limits. */
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
#include "table/table_int.h"
#include "util/err.h"
#include "tmpfiles.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))
#define UA "pacer/test"


static int setup(void **state)
{
	(void)state;
	return tmpdir_make(dir, sizeof dir, "test-table");
}


static struct table *parse(const char *text)
{
	struct table *t = NULL;
	char err[512];
	int rc = table_parse(text, strlen(text), TABLE_FMT_AUTO, "t", dir, NULL, &t, err, sizeof err);
	if (rc)
		fail_msg("parse: %s", err);
	return t;
}

static const char two[] = "GET http://h/\n\nPOST http://h:8080/p\nContent-Type: text/plain\n@abc.txt\n";
static const char wire0[] = "GET / HTTP/1.1\r\nHost: h\r\nUser-Agent: pacer/test\r\n\r\n";
static const char wire1[] = "POST /p HTTP/1.1\r\nHost: h:8080\r\nUser-Agent: pacer/test\r\n"
                            "Content-Type: text/plain\r\nContent-Length: 3\r\n\r\nabc";

static void test_encode(void **state)
{
	(void)state;
	write_file("abc.txt", "abc", 3);
	struct table *t = parse(two);
	struct table_wire w;
	char err[256];
	assert_int_equal(table_encode(t, UA, NULL, 0, &w, err, sizeof err), 0);
	assert_int_equal(w.n, 2);
	assert_int_equal(w.off[0], 0);
	assert_int_equal(w.off[1], strlen(wire0));
	assert_int_equal(w.off[2], strlen(wire0) + strlen(wire1));
	assert_memory_equal(w.bytes, wire0, strlen(wire0));
	assert_memory_equal(w.bytes + w.off[1], wire1, strlen(wire1));
	table_wire_free(&w);
	assert_null(w.bytes);
	table_free(t);
}

struct each_acc {
	char buf[4096];
	size_t len, calls, stop_at;
};

static int each_fn(void *arg, size_t i, const char *req, size_t len)
{
	struct each_acc *a = arg;
	assert_int_equal(i, a->calls);
	if (++a->calls == a->stop_at)
		return -E2BIG;
	assert_true(a->len + len <= sizeof a->buf);
	memcpy(a->buf + a->len, req, len);
	a->len += len;
	return 0;
}

/* table_encode_each: the same bytes as table_encode, request by request,
 * and it stops at the callback's first error; a range out of the table is
 * refused. */
static void test_encode_each(void **state)
{
	(void)state;
	write_file("abc.txt", "abc", 3);
	struct table *t = parse(two);
	char err[256];
	struct each_acc a = {0};
	assert_int_equal(table_encode_each(t, UA, NULL, 0, each_fn, &a, err, sizeof err), 0);
	assert_int_equal(a.calls, 2);
	struct table_wire w;
	assert_int_equal(table_encode(t, UA, NULL, 0, &w, err, sizeof err), 0);
	assert_int_equal(a.len, w.off[2]);
	assert_memory_equal(a.buf, w.bytes, a.len);
	table_wire_free(&w);
	struct each_acc b = {.stop_at = 1};
	assert_int_equal(table_encode_each(t, UA, NULL, 0, each_fn, &b, err, sizeof err), -E2BIG);
	assert_int_equal(b.calls, 1);
	assert_int_equal(table_encode_range(t, 1, 2, UA, NULL, 0, &w, err, sizeof err), -EINVAL);
	assert_int_equal(table_encode_range(t, 1, 1, UA, NULL, 0, &w, err, sizeof err), 0);
	assert_int_equal(w.n, 1);
	assert_int_equal(w.off[1], strlen(wire1));
	assert_memory_equal(w.bytes, wire1, strlen(wire1));
	table_wire_free(&w);
	table_free(t);
}

static void test_extra_headers(void **state)
{
	(void)state;
	struct table *t = parse("GET http://h/\nX-A: 1\nAccept: a\nx-a: 2\n");
	struct table_wire w;
	char err[256];
	const char *extra[] = {"X-A: 9", "User-Agent: me", "X-New:v"};
	assert_int_equal(table_encode(t, UA, extra, 3, &w, err, sizeof err), 0);
	const char *want = "GET / HTTP/1.1\r\nHost: h\r\nAccept: a\r\nX-A: 9\r\nUser-Agent: me\r\nX-New: v\r\n\r\n";
	assert_int_equal(w.off[1], strlen(want));
	assert_memory_equal(w.bytes, want, strlen(want));
	table_wire_free(&w);

	const char *bad[] = {"X Y: 1"};
	assert_int_equal(table_encode(t, UA, bad, 1, &w, err, sizeof err), PACER_EHEADER);
	assert_string_equal(err, "header 'X Y: 1': header name has a character not allowed in a token");
	assert_null(w.bytes);
	const char *cl[] = {"content-length: 3"};
	assert_int_equal(table_encode(t, UA, cl, 1, &w, err, sizeof err), PACER_EHEADER);
	assert_string_equal(err, "header 'content-length' cannot be set for a whole table (pacer frames each body)");
	const char *te[] = {"Transfer-Encoding: chunked"};
	assert_int_equal(table_encode(t, UA, te, 1, &w, err, sizeof err), PACER_EHEADER);
	table_free(t);
}

static void test_hash_vectors(void **state)
{
	(void)state;
	write_file("abc.txt", "abc", 3);
	char hex[65], err[256];
	struct table *t = parse("GET http://h/\n");
	assert_int_equal(table_hash(t, UA, NULL, 0, hex, err, sizeof err), 0);
	/* sha256(be64(len) || wire), from Python's hashlib */
	assert_string_equal(hex, "5a3ae1cd6ef0768e514cc62703dc2ce00731893b0f358ca4577630865986b7a4");
	table_free(t);
	t = parse(two);
	assert_int_equal(table_hash(t, UA, NULL, 0, hex, err, sizeof err), 0);
	assert_string_equal(hex, "a3b7e211a3fa0401c986bcf02f237be2a403725b3c100db6c1666ad4250f68e5");
	struct table_wire w;
	char hex2[65];
	assert_int_equal(table_encode(t, UA, NULL, 0, &w, err, sizeof err), 0);
	assert_int_equal(table_wire_hash(&w, hex2), 0);
	assert_string_equal(hex, hex2);
	table_wire_free(&w);
	table_free(t);
}

static void hash_of(const char *text, const char *ua, char hex[65])
{
	struct table *t = parse(text);
	char err[256];
	assert_int_equal(table_hash(t, ua, NULL, 0, hex, err, sizeof err), 0);
	table_free(t);
}

static void test_hash_changes(void **state)
{
	(void)state;
	const char *base = "GET http://h/1\n\nGET http://h/2\n";
	char h0[65], h[65];
	hash_of(base, UA, h0);
	hash_of("GET http://h/1\n\n\n# a comment\nGET http://h/2", UA, h);
	assert_string_equal(h0, h); /* layout does not matter */
	hash_of("GET http://h/2\n\nGET http://h/1\n", UA, h);
	assert_string_not_equal(h0, h); /* order does */
	hash_of("GET http://h/1\nA: 1\n\nGET http://h/2\n", UA, h);
	assert_string_not_equal(h0, h);
	hash_of(base, "pacer/other", h);
	assert_string_not_equal(h0, h);
	/* the length prefix: "ab" + "c" and "a" + "bc" bodies differ */
	write_file("ab", "ab", 2);
	write_file("c", "c", 1);
	write_file("a", "a", 1);
	write_file("bc", "bc", 2);
	char x[65], y[65];
	hash_of("POST http://h/\nContent-Length: 2\n@ab\n\nPOST http://h/\n@c\n", NULL, x);
	hash_of("POST http://h/\nContent-Length: 1\n@a\n\nPOST http://h/\n@bc\n", NULL, y);
	assert_string_not_equal(x, y);
}

static void test_bodies(void **state)
{
	(void)state;
	char bd[300], path[400];
	snprintf(bd, sizeof bd, "%s/bodies", dir);
	assert_int_equal(mkdir(bd, 0700), 0);
	write_file("bodies/b.json", "{\"b\":2}", 7);
	write_file("bodies/a.json", "{\"a\":1}", 7);
	write_file("bodies/.hidden", "x", 1);
	write_file("bodies/C.bin", "\0\1", 2);
	snprintf(path, sizeof path, "%s/sub", bd);
	assert_int_equal(mkdir(path, 0700), 0);
	struct table *t = NULL;
	char err[600];
	assert_int_equal(table_from_bodies(bd, "http://h/api", NULL, "application/json", NULL, &t, err, sizeof err), 0);
	assert_int_equal(t->format, TABLE_FMT_BODIES);
	assert_int_equal(t->n, 3);
	const char *want[] = {"\0\1", "{\"a\":1}", "{\"b\":2}"}; /* byte order: 'C' < 'a' */
	size_t wl[] = {2, 7, 7};
	for (size_t i = 0; i < 3; i++) {
		assert_string_equal(t->reqs[i].method, "POST");
		assert_string_equal(t->reqs[i].url, "http://h/api");
		assert_int_equal(t->reqs[i].n_headers, 1);
		assert_string_equal(t->reqs[i].headers[0], "Content-Type: application/json");
		assert_int_equal(t->reqs[i].body_len, wl[i]);
		assert_memory_equal(t->reqs[i].body, want[i], wl[i]);
		assert_int_equal(t->reqs[i].line, i + 1);
	}
	table_free(t);

	assert_int_equal(table_from_bodies(bd, "http://h/", "PUT", NULL, NULL, &t, err, sizeof err), 0);
	assert_string_equal(t->reqs[0].method, "PUT");
	assert_int_equal(t->reqs[0].n_headers, 0);
	table_free(t);

	struct table_limits lim = {.max_body_bytes = 3};
	assert_int_equal(table_from_bodies(bd, "http://h/", NULL, NULL, &lim, &t, err, sizeof err), PACER_ETOOBIG);
	assert_null(t);
	char w[700];
	/* the file is read only up to the cap, so its full size is not known */
	snprintf(w, sizeof w, "%s/a.json: over the limit of 3 bytes (--max-body)", bd);
	assert_string_equal(err, w);
	char big[5000];
	memset(big, 'q', sizeof big);
	write_file("bodies/zz", big, sizeof big);
	lim.max_body_bytes = 4096;
	assert_int_equal(table_from_bodies(bd, "http://h/", NULL, NULL, &lim, &t, err, sizeof err), PACER_ETOOBIG);
	snprintf(w, sizeof w, "%s/zz: over the limit of 4096 bytes (--max-body)", bd);
	assert_string_equal(err, w);
	lim = (struct table_limits){.max_requests = 2};
	assert_int_equal(table_from_bodies(bd, "http://h/", NULL, NULL, &lim, &t, err, sizeof err), PACER_ETOOBIG);
	snprintf(w, sizeof w, "%s: more than 2 files (the request limit)", bd);
	assert_string_equal(err, w);

	assert_int_equal(table_from_bodies(bd, "ftp://h/", NULL, NULL, NULL, &t, err, sizeof err), PACER_EURL);
	assert_string_equal(err, "bad URL 'ftp://h/': unsupported scheme (only http and https)");
	assert_int_equal(table_from_bodies(bd, "http://h/", "P T", NULL, NULL, &t, err, sizeof err), PACER_EPARSE);
	assert_string_equal(err, "bad method 'P T': expected a token such as POST");
	assert_int_equal(table_from_bodies(bd, "http://h/", NULL, "a\nb", NULL, &t, err, sizeof err), PACER_EHEADER);
	assert_non_null(strstr(err, "header 'Content-Type': header value has a control character"));

	snprintf(path, sizeof path, "%s/nope", dir);
	assert_int_equal(table_from_bodies(path, "http://h/", NULL, NULL, NULL, &t, err, sizeof err), -ENOENT);
	snprintf(w, sizeof w, "%s: cannot open the folder: No such file or directory", path);
	assert_string_equal(err, w);
	snprintf(path, sizeof path, "%s/empty", dir);
	assert_int_equal(mkdir(path, 0700), 0);
	write_file("empty/.only-hidden", "x", 1);
	assert_int_equal(table_from_bodies(path, "http://h/", NULL, NULL, NULL, &t, err, sizeof err), PACER_EPARSE);
	snprintf(w, sizeof w, "%s: no files to send (the folder is empty)", path);
	assert_string_equal(err, w);
	assert_null(t);
}

static void test_summary(void **state)
{
	(void)state;
	write_file("abc.txt", "abc", 3);
	write_file("five", "fives", 5);
	struct table *t = parse("GET http://h/users/12\n\nGET http://h/users/13?x=1\n\n"
	                        "POST http://h/users\n@abc.txt\n\nGET https://h/users/0123456789abcdef0123\n\n"
	                        "PUT http://h/users/12\n@five\n\nGET http://h/users/12\n");
	struct table_wire w;
	char err[256];
	assert_int_equal(table_encode(t, UA, NULL, 0, &w, err, sizeof err), 0);
	struct table_summary s;
	assert_int_equal(table_summarize(t, &w, &s), 0);
	assert_int_equal(s.n, 6);
	assert_int_equal(s.n_methods, 3);
	assert_string_equal(s.methods[0].name, "GET");
	assert_int_equal(s.methods[0].n, 4);
	assert_string_equal(s.methods[1].name, "POST"); /* ties by name */
	assert_int_equal(s.methods[1].n, 1);
	assert_string_equal(s.methods[2].name, "PUT");
	assert_int_equal(s.n_hosts, 2);
	assert_string_equal(s.hosts[0].name, "h:80");
	assert_int_equal(s.hosts[0].n, 5);
	assert_string_equal(s.hosts[1].name, "https://h:443");
	assert_false(s.shapes_known);
	assert_int_equal(s.n_shapes, 3);
	assert_string_equal(s.shapes[0].name, "/users/{id}");
	assert_int_equal(s.shapes[0].n, 4);
	assert_string_equal(s.shapes[1].name, "/users");
	assert_string_equal(s.shapes[2].name, "/users/{hex}");
	assert_int_equal(s.distinct_targets, 4);
	assert_int_equal(s.with_query, 1);
	assert_int_equal(s.with_body, 2);
	assert_int_equal(s.body_min, 3);
	assert_int_equal(s.body_max, 5);
	assert_int_equal(s.body_total, 8);
	size_t min = SIZE_MAX, max = 0, total = 0;
	for (size_t i = 0; i < w.n; i++) {
		size_t l = w.off[i + 1] - w.off[i];
		min = l < min ? l : min;
		max = l > max ? l : max;
		total += l;
	}
	assert_int_equal(s.wire_min, min);
	assert_int_equal(s.wire_max, max);
	assert_int_equal(s.wire_total, total);
	assert_true(s.wire_p50 >= min && s.wire_p50 <= max);
	table_summary_free(&s);
	table_wire_free(&w);
	table_free(t);

	t = parse("{\"method\":\"GET\",\"url\":\"http://h/a\",\"shape\":\"static\"}\n"
	          "{\"method\":\"GET\",\"url\":\"http://h/b\",\"shape\":\"static\"}\n"
	          "{\"method\":\"GET\",\"url\":\"http://h/c\"}\n");
	assert_int_equal(table_summarize(t, NULL, &s), 0);
	assert_true(s.shapes_known);
	assert_int_equal(s.n_shapes, 2);
	assert_string_equal(s.shapes[0].name, "static");
	assert_int_equal(s.shapes[0].n, 2);
	assert_string_equal(s.shapes[1].name, "(none)");
	assert_int_equal(s.wire_total, 0);
	table_summary_free(&s);
	table_free(t);
}

static void test_limits(void **state)
{
	(void)state;
	struct table_limits l;
	tb_limits(&l, NULL);
	assert_int_equal(l.max_requests, 1000000);
	assert_int_equal(l.max_body_bytes, 1 << 20);
	assert_int_equal(l.max_line_bytes, 64 << 10);
	assert_int_equal(l.max_headers, 100);
	struct table_limits in = {.max_body_bytes = 5};
	tb_limits(&l, &in);
	assert_int_equal(l.max_body_bytes, 5);
	assert_int_equal(l.max_requests, 1000000);
	table_free(NULL);
	table_wire_free(NULL);
}

/* The workload hash of text, with user agent ua and extra headers. */
static void workload_of(const char *text, const char *ua, const char *const *extra, size_t n,
			char hex[65], char whex[65])
{
	struct table *t = parse(text);
	char err[256];
	struct table_wire w;
	assert_int_equal(table_encode(t, ua, extra, n, &w, err, sizeof err), 0);
	assert_int_equal(table_wire_hashes(&w, hex, whex), 0);
	/* the incremental hasher gives the same two */
	struct table_hasher *h;
	char a[65], b[65];
	assert_int_equal(table_hasher_new(&h), 0);
	for (size_t i = 0; i < w.n; i++)
		table_hasher_add(h, w.bytes + w.off[i], w.off[i + 1] - w.off[i]);
	assert_int_equal(table_hasher_end_workload(h, a, b), 0);
	table_hasher_free(h);
	assert_string_equal(a, hex);
	assert_string_equal(b, whex);
	table_wire_free(&w);
	table_free(t);
}

/* What was sent, not where (issue 30): each Host value becomes its
 * number, pacer's User-Agent "pacer"; everything else stays. */
static void test_workload_hash(void **state)
{
	(void)state;
	write_file("abc.txt", "abc", 3);
	char h1[65], w1[65], h2[65], w2[65];
	/* sha256(be64(len) || "GET / HTTP/1.1\r\nHost: #1\r\nUser-Agent: pacer\r\n\r\n"),
	 * from Python's hashlib */
	workload_of("GET http://127.0.0.1:8080/\n", "pacer/0.1.0", NULL, 0, h1, w1);
	assert_string_equal(w1, "146f695ba4802f57f2f081024cc3b646ee71fa9abbcd771125a1a9d7a37cf091");
	/* another port, host and pacer version: another table hash, one workload */
	workload_of("GET http://localhost:9090/\n", "pacer/9.9.9", NULL, 0, h2, w2);
	assert_string_not_equal(h1, h2);
	assert_string_equal(w1, w2);
	/* two hosts, a body: numbered in order of first appearance */
	workload_of("GET http://a:81/a\n\nPOST http://b:82/b\n@abc.txt\n", UA, NULL, 0, h1, w1);
	assert_string_equal(w1, "26fb51938036e1ce07586b42198ede0d1fe893ae20f6f443cba3eae3aede56d9");
	workload_of("GET http://x/a\n\nPOST http://y/b\n@abc.txt\n", UA, NULL, 0, h2, w2);
	assert_string_equal(w1, w2);
	/* which requests share a host still counts: a,b,a against a,a,b */
	workload_of("GET http://a/1\n\nGET http://b/1\n\nGET http://a/1\n", UA, NULL, 0, h1, w1);
	workload_of("GET http://a/1\n\nGET http://a/1\n\nGET http://b/1\n", UA, NULL, 0, h2, w2);
	assert_string_not_equal(w1, w2);
	/* what is sent: a path, a header, a body, another User-Agent */
	static const char *const alt[] = {"GET http://h/2\n", "GET http://h/\nX-A: 1\n",
					  "POST http://h/\n@abc.txt\n"};
	workload_of("GET http://h/\n", UA, NULL, 0, h1, w1);
	for (size_t i = 0; i < sizeof alt / sizeof alt[0]; i++) {
		workload_of(alt[i], UA, NULL, 0, h2, w2);
		assert_string_not_equal(w1, w2);
	}
	static const char *const curl[] = {"User-Agent: curl/8"};
	workload_of("GET http://h/\n", UA, curl, 1, h2, w2);
	assert_string_not_equal(w1, w2);
	/* a Host given by -H is numbered too: where, not what */
	static const char *const host_a[] = {"Host: a.test"}, *const host_b[] = {"Host: b.test:81"};
	workload_of("GET http://h/\n", UA, host_a, 1, h1, w1);
	workload_of("GET http://h/\n", UA, host_b, 1, h2, w2);
	assert_string_not_equal(h1, h2);
	assert_string_equal(w1, w2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_encode),        cmocka_unit_test(test_encode_each),
		cmocka_unit_test(test_extra_headers), cmocka_unit_test(test_hash_vectors),
		cmocka_unit_test(test_hash_changes),  cmocka_unit_test(test_workload_hash),
		cmocka_unit_test(test_bodies),        cmocka_unit_test(test_summary),
		cmocka_unit_test(test_limits),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
