/* Tests of tables read a piece at a time (src/table/stream.c): streamed in
 * pieces of any size, a table gives the requests table_load gives (wire
 * bytes and hash, lines, hosts numbered over the whole file with their
 * counts), whatever the format, comments, CRLF, body files or hosts; AUTO
 * finds JSONL behind more comments than a piece holds; errors name the
 * line of the whole file; a request over the limits is refused with the
 * parser's own message, never cut; a pipe reads as a file does; and the
 * incremental hash equals table_wire_hash. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "table/table.h"
#include "util/err.h"
#include "tmpfiles.h"

#define UA "pacer/test"

static int setup(void **state)
{
	(void)state;
	return tmpdir_make(dir, sizeof dir, "test-stream");
}

/* What a table comes to: its hash, lines and hosts. */
struct digest {
	char hash[65];
	size_t n;
	unsigned lines[64];
	size_t host_of[64];
	size_t n_hosts;
	char hosts[8][128];
	size_t host_reqs[8];
	enum table_format fmt;
};

static void host_label(char *out, size_t cap, const struct table_host *h)
{
	snprintf(out, cap, "%s|%u|%d|%s", h->name, (unsigned)h->port, h->tls,
		 h->unix_path ? h->unix_path : "-");
}

static void digest_whole(const char *name, struct digest *d)
{
	char path[512], err[512];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	struct table *t = NULL;
	int rc = table_load(path, TABLE_FMT_AUTO, NULL, &t, err, sizeof err);
	if (rc)
		fail_msg("table_load: %s", err);
	memset(d, 0, sizeof *d);
	assert_int_equal(table_hash(t, UA, NULL, 0, d->hash, err, sizeof err), 0);
	d->n = t->n;
	for (size_t i = 0; i < t->n && i < 64; i++) {
		d->lines[i] = t->reqs[i].line;
		d->host_of[i] = t->reqs[i].host;
	}
	d->n_hosts = t->n_hosts;
	for (size_t i = 0; i < t->n_hosts && i < 8; i++) {
		host_label(d->hosts[i], sizeof d->hosts[i], &t->hosts[i]);
		d->host_reqs[i] = t->hosts[i].n_reqs;
	}
	d->fmt = t->format;
	table_free(t);
}

/* Stream name in pieces of piece bytes; 0 or the error (message in err). */
static int digest_stream(const char *name, size_t piece, const struct table_limits *lim,
			 struct digest *d, size_t *pieces, char *err, size_t cap)
{
	char path[512];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	struct table_stream *st = NULL;
	int rc = table_stream_open(path, TABLE_FMT_AUTO, lim, piece, &st, err, cap);
	if (rc)
		return rc;
	struct table_hasher *h;
	assert_int_equal(table_hasher_new(&h), 0);
	memset(d, 0, sizeof *d);
	*pieces = 0;
	struct table *t = NULL;
	while (!(rc = table_stream_next(st, &t, err, cap)) && t) {
		struct table_wire w;
		assert_int_equal(table_encode(t, UA, NULL, 0, &w, err, cap), 0);
		for (size_t i = 0; i < t->n; i++) {
			table_hasher_add(h, w.bytes + w.off[i], w.off[i + 1] - w.off[i]);
			if (d->n < 64) {
				d->lines[d->n] = t->reqs[i].line;
				d->host_of[d->n] = t->reqs[i].host;
			}
			d->n++;
		}
		table_wire_free(&w);
		d->n_hosts = t->n_hosts;
		for (size_t i = 0; i < t->n_hosts && i < 8; i++) {
			host_label(d->hosts[i], sizeof d->hosts[i], &t->hosts[i]);
			d->host_reqs[i] = t->hosts[i].n_reqs;
		}
		d->fmt = t->format;
		table_free(t);
		(*pieces)++;
	}
	if (!rc) {
		assert_int_equal(table_hasher_end(h, d->hash), 0);
		assert_int_equal(table_stream_count(st), d->n);
		assert_int_equal(table_stream_format(st), d->fmt);
	}
	table_hasher_free(h);
	table_stream_close(st);
	return rc;
}

static void assert_same(const struct digest *a, const struct digest *b)
{
	assert_string_equal(a->hash, b->hash);
	assert_int_equal(a->n, b->n);
	assert_memory_equal(a->lines, b->lines, sizeof a->lines);
	assert_memory_equal(a->host_of, b->host_of, sizeof a->host_of);
	assert_int_equal(a->n_hosts, b->n_hosts);
	for (size_t i = 0; i < a->n_hosts && i < 8; i++) {
		assert_string_equal(a->hosts[i], b->hosts[i]);
		assert_int_equal(a->host_reqs[i], b->host_reqs[i]);
	}
	assert_int_equal(a->fmt, b->fmt);
}

/* Every piece size from 1 byte to past the whole text gives the table. */
static void check_all_pieces(const char *name, size_t len)
{
	struct digest whole, s;
	digest_whole(name, &whole);
	char err[512];
	size_t pieces, most = 0;
	for (size_t piece = 1; piece <= len + 8; piece += piece < 64 ? 1 : 17) {
		if (digest_stream(name, piece, NULL, &s, &pieces, err, sizeof err))
			fail_msg("piece %zu: %s", piece, err);
		assert_same(&whole, &s);
		if (pieces > most)
			most = pieces;
	}
	assert_true(most >= whole.n / 2); /* small pieces did cut it up */
	if (digest_stream(name, 0, NULL, &s, &pieces, err, sizeof err))
		fail_msg("default piece: %s", err);
	assert_same(&whole, &s);
	assert_int_equal(pieces, 1);
}

static const char targets[] =
	"# a table\r\n"
	"GET http://a.example:8080/one\r\n"
	"Accept: text/plain\r\n"
	"\r\n"
	"POST http://b.example/two?x=1\n"
	"Content-Type: application/json\n"
	"@body.json\n"
	"\n"
	"\n"
	"# between\n"
	"GET https://a.example:8080/tls\n"
	"GET http://A.EXAMPLE:8080/same-host\n"
	"X-One: 1\n"
	"X-Two: 2\n"
	"\n"
	"DELETE unix:/run/app.sock:http://app.local/item/7\n"
	"  \n"
	"POST http://b.example/two\n"
	"@body.json\n"
	"GET http://c.example/last";

static void test_targets_pieces(void **state)
{
	(void)state;
	write_file("body.json", "{\"k\":1}", 7);
	write_file("t.targets", targets, strlen(targets));
	check_all_pieces("t.targets", strlen(targets));
}

static const char jsonl[] =
	"# comments first, more of them than a small piece holds: AUTO must see the '{'\n"
	"# .......................................................................\n"
	"\n"
	"{\"method\":\"GET\",\"url\":\"http://a.example/1\",\"name\":\"one\"}\r\n"
	"{\"method\":\"POST\",\"url\":\"http://b.example/2\",\"body\":\"aGVsbG8=\"}\n"
	"\n"
	"# a comment between\n"
	"{\"method\":\"GET\",\"url\":\"http://a.example/3\",\"header\":{\"X-A\":[\"1\",\"2\"]}}\n"
	"{\"method\":\"PUT\",\"url\":\"unix:/run/s.sock:http://u/4\",\"body_file\":\"body.json\"}";

static void test_jsonl_pieces(void **state)
{
	(void)state;
	write_file("body.json", "{\"k\":1}", 7);
	write_file("t.jsonl", jsonl, strlen(jsonl));
	struct digest whole;
	digest_whole("t.jsonl", &whole);
	assert_int_equal(whole.fmt, TABLE_FMT_JSONL);
	check_all_pieces("t.jsonl", strlen(jsonl));
}

/* Many requests: the hosts' counts go on over the pieces. */
static void test_many(void **state)
{
	(void)state;
	size_t cap = 1 << 20, len = 0;
	char *text = malloc(cap);
	assert_non_null(text);
	for (int i = 0; i < 5000; i++)
		len += (size_t)snprintf(text + len, cap - len, "GET http://h%d.example/r/%d\n%s", i % 3,
					i, i % 2 ? "\n" : "");
	write_file("many.targets", text, len);
	free(text);
	struct digest whole, s;
	digest_whole("many.targets", &whole);
	char err[512];
	size_t pieces;
	assert_int_equal(digest_stream("many.targets", 4096, NULL, &s, &pieces, err, sizeof err), 0);
	assert_same(&whole, &s);
	assert_true(pieces > 10);
	assert_int_equal(s.n_hosts, 3);
	assert_int_equal(s.host_reqs[0] + s.host_reqs[1] + s.host_reqs[2], 5000);
}

/* An error names the line of the whole file, in any piece. */
static void test_error_lines(void **state)
{
	(void)state;
	char text[4096];
	size_t len = 0;
	for (int i = 0; i < 40; i++)
		len += (size_t)snprintf(text + len, sizeof text - len, "GET http://h/%d\n\n", i);
	len += (size_t)snprintf(text + len, sizeof text - len, "GET http://h/x\nBad Header: 1\n");
	write_file("bad.targets", text, len);
	char err[512];
	struct digest s;
	size_t pieces;
	for (size_t piece = 7; piece < 200; piece += 31) {
		int rc = digest_stream("bad.targets", piece, NULL, &s, &pieces, err, sizeof err);
		assert_int_equal(rc, PACER_EHEADER);
		assert_non_null(strstr(err, "bad.targets:82: "));
	}
	/* the first error in the file comes first, in pieces too: a NUL on line
	 * 4 before the bad URL of line 3's request, which only its end checks */
	static const char nul[] = "GET http://h/a\n\nPOST uHOST/z\nGET http://h:8\0/x\n\n";
	write_file("nul.targets", nul, sizeof nul - 1);
	for (size_t piece = 1; piece < 40; piece++) {
		int rc = digest_stream("nul.targets", piece, NULL, &s, &pieces, err, sizeof err);
		assert_int_equal(rc, PACER_EPARSE);
		assert_non_null(strstr(err, "nul.targets:4: NUL byte"));
	}
	/* JSONL: invalid JSON on line 5 */
	const char *j = "{\"method\":\"GET\",\"url\":\"http://h/1\"}\n\n{\"method\":\"GET\",\"url\":\"http://h/2\"}\n"
			"# c\n{\"method\":\"GET\",\n";
	write_file("bad.jsonl", j, strlen(j));
	for (size_t piece = 5; piece < 120; piece += 13) {
		int rc = digest_stream("bad.jsonl", piece, NULL, &s, &pieces, err, sizeof err);
		assert_int_equal(rc, PACER_EPARSE);
		assert_non_null(strstr(err, "bad.jsonl:5: invalid JSON"));
	}
}

/* A request longer than the limits allow is refused with the parser's
 * message; nothing is cut into a shorter request. */
static void test_over_limits(void **state)
{
	(void)state;
	struct table_limits lim = {.max_line_bytes = 64, .max_headers = 2, .max_body_bytes = 30};
	char text[2048];
	size_t len = (size_t)snprintf(text, sizeof text, "GET http://h/ok\n\nGET http://h/%0200d\n\n", 7);
	write_file("long.targets", text, len);
	char err[512];
	struct digest s;
	size_t pieces;
	assert_int_equal(digest_stream("long.targets", 8, &lim, &s, &pieces, err, sizeof err),
			 PACER_ETOOBIG);
	assert_non_null(strstr(err, "long.targets:3: line longer than 64 bytes"));
	/* headers over the limit, each line short */
	len = (size_t)snprintf(text, sizeof text, "GET http://h/\nA: 1\nB: 2\nC: 3\nD: 4\nE: 5\nF: 6\n"
				"G: 7\nH: 8\nI: 9\nJ: 10\nK: 11\nL: 12\nM: 13\n\n");
	write_file("hdrs.targets", text, len);
	assert_int_equal(digest_stream("hdrs.targets", 8, &lim, &s, &pieces, err, sizeof err),
			 PACER_ETOOBIG);
	assert_non_null(strstr(err, "hdrs.targets:4: more than 2 headers"));
	/* a JSONL line over its limit */
	len = (size_t)snprintf(text, sizeof text, "{\"method\":\"GET\",\"url\":\"http://h/%0300d\"}\n", 1);
	write_file("long.jsonl", text, len);
	assert_int_equal(digest_stream("long.jsonl", 8, &lim, &s, &pieces, err, sizeof err),
			 PACER_ETOOBIG);
	assert_non_null(strstr(err, "long.jsonl:1: line longer than"));
}

static void test_empty_and_missing(void **state)
{
	(void)state;
	const char *c = "# nothing\n\n# at all\n";
	write_file("empty.targets", c, strlen(c));
	char err[512];
	struct digest s;
	size_t pieces;
	assert_int_equal(digest_stream("empty.targets", 4, NULL, &s, &pieces, err, sizeof err),
			 PACER_EPARSE);
	assert_non_null(strstr(err, "empty.targets: no requests"));
	assert_int_equal(digest_stream("absent.targets", 0, NULL, &s, &pieces, err, sizeof err),
			 -ENOENT);
	assert_non_null(strstr(err, "absent.targets: cannot read"));
	assert_int_equal(digest_stream(".", 0, NULL, &s, &pieces, err, sizeof err), -EISDIR);
	/* after an error the stream gives nothing more */
	write_file("bad2.targets", "GET http://h/\nnot a header\n", 27);
	char path[512];
	snprintf(path, sizeof path, "%s/bad2.targets", dir);
	struct table_stream *st;
	assert_int_equal(table_stream_open(path, TABLE_FMT_AUTO, NULL, 0, &st, err, sizeof err), 0);
	struct table *t = NULL;
	assert_int_equal(table_stream_next(st, &t, err, sizeof err), PACER_EPARSE);
	assert_null(t);
	assert_int_not_equal(table_stream_next(st, &t, err, sizeof err), 0);
	assert_null(t);
	table_stream_close(st);
	table_stream_close(NULL);
}

/* Comments: a run between requests longer than a request may be is cut
 * through; one inside a request counts in the request's length; AUTO
 * reads on through comments and still finds the error the whole file has
 * on its first line. */
static void test_comment_runs(void **state)
{
	(void)state;
	/* with these limits a request's text is at most (2 + 4) x 66 bytes */
	struct table_limits lim = {.max_line_bytes = 64, .max_headers = 2};
	size_t cap = 1 << 20, len = 0;
	char *text = malloc(cap);
	assert_non_null(text);
	len += (size_t)snprintf(text + len, cap - len, "GET http://h/a\n\n");
	for (int i = 0; i < 3000; i++)
		len += (size_t)snprintf(text + len, cap - len, "# between %d\n", i);
	len += (size_t)snprintf(text + len, cap - len, "GET http://h/b\nX-A: 1\n\nGET http://h/c\n");
	write_file("comments.targets", text, len);
	struct digest whole, s;
	digest_whole("comments.targets", &whole);
	assert_int_equal(whole.n, 3);
	char err[512];
	size_t pieces;
	for (size_t piece = 16; piece < 2000; piece = piece * 3 + 1) {
		if (digest_stream("comments.targets", piece, &lim, &s, &pieces, err, sizeof err))
			fail_msg("piece %zu: %s", piece, err);
		assert_same(&whole, &s);
	}
	/* inside a request, comments make it longer than a request may be */
	len = (size_t)snprintf(text, cap, "GET http://h/a\nX-A: 1\n");
	for (int i = 0; i < 100; i++)
		len += (size_t)snprintf(text + len, cap - len, "# inside %d\n", i);
	len += (size_t)snprintf(text + len, cap - len, "X-B: 2\n\nGET http://h/c\n");
	write_file("inside.targets", text, len);
	assert_int_equal(digest_stream("inside.targets", 16, &lim, &s, &pieces, err, sizeof err),
			 PACER_ETOOBIG);
	assert_non_null(strstr(err, "inside.targets:1: a request longer than 396 bytes"));
	/* AUTO: comments past the piece size, a NUL on line 1 */
	len = (size_t)snprintf(text, cap, "#x\n");
	text[1] = '\0';
	for (int i = 0; i < 200; i++)
		len += (size_t)snprintf(text + len, cap - len, "# comment %d\n", i);
	len += (size_t)snprintf(text + len, cap - len, "GET http://h/\n");
	write_file("nul1.targets", text, len);
	assert_int_equal(digest_stream("nul1.targets", 32, NULL, &s, &pieces, err, sizeof err),
			 PACER_EPARSE);
	assert_non_null(strstr(err, "nul1.targets:1: NUL byte"));
	free(text);
}

/* No request limit for the stream as a whole, and pieces back to their
 * size after one long request. */
static void test_no_request_limit(void **state)
{
	(void)state;
	size_t cap = 4 << 20, len = 0;
	char *text = malloc(cap);
	assert_non_null(text);
	len += (size_t)snprintf(text + len, cap - len, "{\"method\":\"POST\",\"url\":\"http://h/big\",\"body\":\"");
	for (int i = 0; i < 100000; i++)
		text[len++] = 'A';
	len += (size_t)snprintf(text + len, cap - len, "\"}\n");
	for (int i = 0; i < 5000; i++)
		len += (size_t)snprintf(text + len, cap - len,
					"{\"method\":\"GET\",\"url\":\"http://h/%d\"}\n", i);
	write_file("limit.jsonl", text, len);
	free(text);
	struct table_limits lim = {.max_requests = 100};
	struct digest s;
	char err[512];
	size_t pieces;
	assert_int_equal(digest_stream("limit.jsonl", 4096, &lim, &s, &pieces, err, sizeof err), 0);
	assert_int_equal(s.n, 5001);
	assert_true(pieces > 40); /* ~200 KB of small lines in 4 KiB pieces */
}

/* A pipe (standard input) reads as the file does. */
static void test_pipe(void **state)
{
	(void)state;
	write_file("body.json", "{\"k\":1}", 7);
	write_file("t.targets", targets, strlen(targets));
	struct digest whole, s;
	digest_whole("t.targets", &whole);
	int p[2];
	assert_int_equal(pipe(p), 0);
	assert_int_equal(write(p[1], targets, strlen(targets)), (ssize_t)strlen(targets));
	close(p[1]);
	char err[512];
	struct table_stream *st;
	assert_int_equal(table_stream_open_fd(p[0], "stdin", dir, TABLE_FMT_AUTO, NULL, 16, &st, err,
					      sizeof err),
			 0);
	struct table_hasher *h;
	assert_int_equal(table_hasher_new(&h), 0);
	struct table *t;
	memset(&s, 0, sizeof s);
	while (!table_stream_next(st, &t, err, sizeof err) && t) {
		struct table_wire w;
		assert_int_equal(table_encode(t, UA, NULL, 0, &w, err, sizeof err), 0);
		for (size_t i = 0; i < t->n; i++)
			table_hasher_add(h, w.bytes + w.off[i], w.off[i + 1] - w.off[i]);
		s.n += t->n;
		table_wire_free(&w);
		assert_string_equal(t->source, "stdin");
		table_free(t);
	}
	assert_int_equal(table_hasher_end(h, s.hash), 0);
	assert_string_equal(s.hash, whole.hash);
	assert_int_equal(s.n, whole.n);
	table_hasher_free(h);
	table_stream_close(st);
	close(p[0]);
}

/* A file that changes while it is read (--lazy reads a big table for a
 * while) is refused at its end, never given as the requests it happened
 * to have: cut short, grown, or rewritten to the same size. */
static void test_changed_while_read(void **state)
{
	(void)state;
	char text[8192] = "", path[512], err[512];
	size_t len = 0;
	for (int i = 0; i < 200; i++)
		len += (size_t)snprintf(text + len, sizeof text - len, "GET http://h/%03d\n", i);
	snprintf(path, sizeof path, "%s/changing.targets", dir);
	for (int how = 0; how < 3; how++) {
		write_file("changing.targets", text, len);
		struct table_stream *st;
		assert_int_equal(
			table_stream_open(path, TABLE_FMT_AUTO, NULL, 256, &st, err, sizeof err),
			0);
		struct table *t = NULL;
		assert_int_equal(table_stream_next(st, &t, err, sizeof err), 0);
		assert_non_null(t);
		table_free(t);
		FILE *f = fopen(path, how == 0 ? "r+" : "a");
		assert_non_null(f);
		if (how == 0)
			assert_int_equal(ftruncate(fileno(f), (off_t)len / 2), 0); /* cut short */
		else if (how == 1)
			fputs("GET http://h/more\n", f); /* grown */
		fclose(f);
		if (how == 2) { /* the same size, written again a moment later */
			struct timespec ts[2] = {{0, UTIME_OMIT}, {1, 0}};
			assert_int_equal(utimensat(AT_FDCWD, path, ts, 0), 0);
		}
		int rc;
		do {
			t = NULL;
			rc = table_stream_next(st, &t, err, sizeof err);
			table_free(t);
		} while (rc == 0 && t);
		if (rc != -ESTALE)
			fail_msg("case %d: rc %d (%s)", how, rc, err);
		assert_non_null(
			strstr(err, "changing.targets: the file changed while it was read"));
		table_stream_close(st);
	}
	/* unchanged: read to its end */
	write_file("changing.targets", text, len);
	struct digest d;
	size_t pieces;
	assert_int_equal(digest_stream("changing.targets", 256, NULL, &d, &pieces, err, sizeof err),
			 0);
	assert_int_equal(d.n, 200);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_targets_pieces), cmocka_unit_test(test_jsonl_pieces),
		cmocka_unit_test(test_many),           cmocka_unit_test(test_error_lines),
		cmocka_unit_test(test_over_limits),    cmocka_unit_test(test_empty_and_missing),
		cmocka_unit_test(test_comment_runs),   cmocka_unit_test(test_no_request_limit),
		cmocka_unit_test(test_pipe),           cmocka_unit_test(test_changed_while_read),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
