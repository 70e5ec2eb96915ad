/* Tests of the incremental HTTP/1.1 response parser (src/http/h1.c).
 *
 * Every table case is run whole, byte-at-a-time, and in many seeded random
 * splits (with empty feeds mixed in); all runs must give the same result. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "http/h1.h"
#include "util/err.h"

#define ALL SIZE_MAX /* expected `consumed`: the whole input */

struct h1_result {
	int rc; /* first negative return of feed/eof, or 0 */
	enum h1_state state;
	size_t consumed; /* 0 for errors (it depends on the split) */
	int status;
	int version_minor;
	bool keep_alive;
	bool chunked;
	bool has_content_length;
	uint64_t content_length;
	uint64_t body_bytes;
	uint64_t header_bytes;
	uint32_t interim;
};

struct h1_case {
	const char *name;
	const char *in;
	size_t in_len; /* 0: strlen(in) */
	bool head;     /* response to a HEAD request */
	bool eof;      /* the peer closes after the input */
	struct h1_result want;
};

/* ---- runner ----------------------------------------------------------- */

static uint64_t rng_next(uint64_t *s)
{
	/* xorshift64* */
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 2685821657736338717ull;
}

enum split_mode { SPLIT_WHOLE, SPLIT_BYTES, SPLIT_RANDOM };

static struct h1_resp resp; /* ~8 KiB: keep it off the stack */

static struct h1_result run(const char *in, size_t len, bool head, bool eof, enum split_mode mode,
                            uint64_t seed)
{
	struct h1_result res;
	memset(&res, 0, sizeof res);
	h1_resp_init(&resp, head);
	uint64_t rng = seed * 0x9e3779b97f4a7c15ull + 1;
	unsigned max_piece = 1 + (unsigned)(seed % 4 == 0 ? 3 : seed % 4 == 1 ? 17 : 300);
	size_t off = 0;
	int rc = 0;
	for (;;) {
		size_t piece;
		if (mode == SPLIT_WHOLE)
			piece = len - off;
		else if (mode == SPLIT_BYTES)
			piece = 1;
		else
			piece = rng_next(&rng) % 8 == 0 ? 0 : 1 + rng_next(&rng) % max_piece;
		if (piece > len - off)
			piece = len - off;
		if (off == len && mode != SPLIT_WHOLE)
			break;
		ssize_t n = h1_resp_feed(&resp, in + off, piece);
		assert_true(resp.line_len <= H1_LINE_CAP);
		if (n < 0) {
			rc = (int)n;
			assert_int_equal(resp.state, H1_ERROR);
			break;
		}
		assert_true((size_t)n <= piece);
		off += (size_t)n;
		if ((size_t)n < piece) {
			assert_int_equal(resp.state, H1_DONE);
			break;
		}
		if (resp.state == H1_DONE || off == len)
			break;
	}
	if (rc == 0 && eof)
		rc = h1_resp_eof(&resp);
	res.rc = rc;
	res.state = resp.state;
	res.consumed = rc < 0 ? 0 : off;
	res.status = resp.status;
	res.version_minor = resp.version_minor;
	res.keep_alive = resp.keep_alive;
	res.chunked = resp.chunked;
	res.has_content_length = resp.has_content_length;
	res.content_length = resp.content_length;
	res.body_bytes = resp.body_bytes;
	res.header_bytes = resp.header_bytes;
	res.interim = resp.interim;
	if (rc < 0) { /* only the error itself is meaningful */
		struct h1_result e;
		memset(&e, 0, sizeof e);
		e.rc = rc;
		e.state = res.state;
		return e;
	}
	return res;
}

static void print_result(const char *label, const struct h1_result *r)
{
	print_message("  %s: rc=%d (%s) state=%d consumed=%zu status=%d minor=%d ka=%d chunked=%d "
	              "has_cl=%d cl=%llu body=%llu hdr=%llu interim=%u\n",
	              label, r->rc, r->rc ? err_name(r->rc) : "ok", (int)r->state, r->consumed,
	              r->status, r->version_minor, r->keep_alive, r->chunked, r->has_content_length,
	              (unsigned long long)r->content_length, (unsigned long long)r->body_bytes,
	              (unsigned long long)r->header_bytes, r->interim);
}

static bool same(const struct h1_result *a, const struct h1_result *b)
{
	return a->rc == b->rc && a->state == b->state && a->consumed == b->consumed &&
	       a->status == b->status && a->version_minor == b->version_minor &&
	       a->keep_alive == b->keep_alive && a->chunked == b->chunked &&
	       a->has_content_length == b->has_content_length &&
	       a->content_length == b->content_length && a->body_bytes == b->body_bytes &&
	       a->header_bytes == b->header_bytes && a->interim == b->interim;
}

/* Run one input every way; each result must equal `want`. Prints and
 * returns false on a mismatch. */
static bool try_all_splits(const char *name, const char *in, size_t len, bool head, bool eof,
                             const struct h1_result *want_in)
{
	struct h1_result want = *want_in;
	if (want.consumed == ALL)
		want.consumed = len;
	if (want.rc < 0) {
		struct h1_result e;
		memset(&e, 0, sizeof e);
		e.rc = want.rc;
		e.state = H1_ERROR;
		want = e;
	}
	struct h1_result got = run(in, len, head, eof, SPLIT_WHOLE, 0);
	if (!same(&got, &want)) {
		print_message("case \"%s\" (whole):\n", name);
		print_result("want", &want);
		print_result("got ", &got);
		return false;
	}
	got = run(in, len, head, eof, SPLIT_BYTES, 0);
	if (!same(&got, &want)) {
		print_message("case \"%s\" (byte at a time):\n", name);
		print_result("want", &want);
		print_result("got ", &got);
		return false;
	}
	for (uint64_t seed = 1; seed <= 64; seed++) {
		got = run(in, len, head, eof, SPLIT_RANDOM, seed);
		if (!same(&got, &want)) {
			print_message("case \"%s\" (random split, seed %llu):\n", name,
			              (unsigned long long)seed);
			print_result("want", &want);
			print_result("got ", &got);
			return false;
		}
	}
	return true;
}

static void check_all_splits(const char *name, const char *in, size_t len, bool head, bool eof,
                             const struct h1_result *want)
{
	if (!try_all_splits(name, in, len, head, eof, want))
		fail();
}

/* ---- the table -------------------------------------------------------- */

#define OK200 "HTTP/1.1 200 OK\r\n" /* 17 bytes */
#define BIN(s) s, sizeof(s) - 1  /* input with NUL bytes: explicit length */

static const struct h1_case cases[] = {
	/* Content-Length */
	{ "content-length", OK200 "Content-Length: 5\r\n\r\nhello", 0, false, false,
	  { .state = H1_DONE, .consumed = ALL, .status = 200, .version_minor = 1, .keep_alive = true,
	    .has_content_length = true, .content_length = 5, .body_bytes = 5, .header_bytes = 38 } },
	{ "content-length zero", OK200 "Content-Length: 0\r\n\r\n", 0, false, false,
	  { .state = H1_DONE, .consumed = ALL, .status = 200, .version_minor = 1, .keep_alive = true,
	    .has_content_length = true, .header_bytes = 38 } },
	{ "content-length list 5, 5", OK200 "Content-Length: 5, 5\r\n\r\nhello", 0, false, false,
	  { .state = H1_DONE, .consumed = ALL, .status = 200, .version_minor = 1, .keep_alive = true,
	    .has_content_length = true, .content_length = 5, .body_bytes = 5, .header_bytes = 41 } },
	{ "content-length list with empty elements", OK200 "Content-Length: ,5,,5 ,\r\n\r\nhello", 0,
	  false, false,
	  { .state = H1_DONE, .consumed = ALL, .status = 200, .version_minor = 1, .keep_alive = true,
	    .has_content_length = true, .content_length = 5, .body_bytes = 5, .header_bytes = 44 } },
	{ "content-length repeated, same value",
	  OK200 "Content-Length: 3\r\ncontent-LENGTH:3\r\n\r\nabc", 0, false, false,
	  { .state = H1_DONE, .consumed = ALL, .status = 200, .version_minor = 1, .keep_alive = true,
	    .has_content_length = true, .content_length = 3, .body_bytes = 3, .header_bytes = 56 } },
	{ "content-length with OWS", OK200 "Content-Length: \t 4 \t\r\n\r\nbody", 0, false, false,
	  { .state = H1_DONE, .consumed = ALL, .status = 200, .version_minor = 1, .keep_alive = true,
	    .has_content_length = true, .content_length = 4, .body_bytes = 4, .header_bytes = 42 } },
	{ "content-length body with CRLF and NUL", BIN(OK200 "Content-Length: 6\r\n\r\n\r\n\0\r\n\n"),
	  false, false,
	  { .state = H1_DONE, .consumed = ALL, .status = 200, .version_minor = 1, .keep_alive = true,
	    .has_content_length = true, .content_length = 6, .body_bytes = 6, .header_bytes = 38 } },
	{ "content-length body incomplete", OK200 "Content-Length: 10\r\n\r\nhalf", 0, false, false,
	  { .state = H1_BODY_LEN, .consumed = ALL, .status = 200, .version_minor = 1,
	    .keep_alive = true, .has_content_length = true, .content_length = 10, .body_bytes = 4,
	    .header_bytes = 39 } },
	{ "content-length max uint64", OK200 "Content-Length: 18446744073709551615\r\n\r\nxy", 0, false,
	  false,
	  { .state = H1_BODY_LEN, .consumed = ALL, .status = 200, .version_minor = 1,
	    .keep_alive = true, .has_content_length = true, .content_length = UINT64_MAX,
	    .body_bytes = 2, .header_bytes = 57 } },
	{ "other headers, empty value, obs-text, tab",
	  OK200 "Server: x\r\nX-Empty:\r\nX-Utf8: caf\xc3\xa9\tb\r\nContent-Length: 1\r\n\r\n!", 0,
	  false, false,
	  { .state = H1_DONE, .consumed = ALL, .status = 200, .version_minor = 1, .keep_alive = true,
	    .has_content_length = true, .content_length = 1, .body_bytes = 1, .header_bytes = 76 } },
	{ "status 599 and arbitrary reason", "HTTP/1.1 599 Some Thing (odd)\r\nContent-Length: 0\r\n\r\n",
	  0, false, false,
	  { .state = H1_DONE, .consumed = ALL, .status = 599, .version_minor = 1, .keep_alive = true,
	    .has_content_length = true, .header_bytes = 52 } },
	{ "empty reason after space", "HTTP/1.1 404 \r\nContent-Length: 0\r\n\r\n", 0, false, false,
	  { .state = H1_DONE, .consumed = ALL, .status = 404, .version_minor = 1, .keep_alive = true,
	    .has_content_length = true, .header_bytes = 36 } },
	{ "no reason, no space", "HTTP/1.1 404\r\nContent-Length: 0\r\n\r\n", 0, false, false,
	  { .state = H1_DONE, .consumed = ALL, .status = 404, .version_minor = 1, .keep_alive = true,
	    .has_content_length = true, .header_bytes = 35 } },
	{ "bare LF line ends", "HTTP/1.1 200 OK\nContent-Length: 2\n\nok", 0, false, false,
	  { .state = H1_DONE, .consumed = ALL, .status = 200, .version_minor = 1, .keep_alive = true,
	    .has_content_length = true, .content_length = 2, .body_bytes = 2, .header_bytes = 35 } },

	/* chunked */
	{ "chunked with extensions",
	  OK200 "Transfer-Encoding: chunked\r\n\r\n"
	        "5\r\nhello\r\n6;name=val;x\r\n world\r\n0\r\n\r\n",
	  0, false, false,
	  { .state = H1_DONE, .consumed = ALL, .status = 200, .version_minor = 1, .keep_alive = true,
	    .chunked = true, .body_bytes = 11, .header_bytes = 47 } },
	{ "chunked with trailers",
	  OK200 "Transfer-Encoding: chunked\r\n\r\n"
	        "3\r\nabc\r\n0\r\nX-Checksum: 42\r\nX-Other:  b \r\n\r\n",
	  0, false, false,
	  { .state = H1_DONE, .consumed = ALL, .status = 200, .version_minor = 1, .keep_alive = true,
	    .chunked = true, .body_bytes = 3, .header_bytes = 47 } },
	{ "chunked hex sizes, leading zeros, BWS before ext",
	  OK200 "transfer-encoding: CHUNKED\r\n\r\n"
	        "000A\r\n0123456789\r\nb ;e=\"q\"\r\nabcdefghijk\r\n00\r\n\r\n",
	  0, false, false,
	  { .state = H1_DONE, .consumed = ALL, .status = 200, .version_minor = 1, .keep_alive = true,
	    .chunked = true, .body_bytes = 21, .header_bytes = 47 } },
	{ "chunked with bare LF framing",
	  "HTTP/1.1 200 OK\nTransfer-Encoding: chunked\n\n5\nhello\n0\n\n", 0, false, false,
	  { .state = H1_DONE, .consumed = ALL, .status = 200, .version_minor = 1, .keep_alive = true,
	    .chunked = true, .body_bytes = 5, .header_bytes = 44 } },
	{ "chunked after gzip", OK200 "Transfer-Encoding: gzip, chunked\r\n\r\n2\r\n\x1f\x8b\r\n0\r\n\r\n",
	  0, false, false,
	  { .state = H1_DONE, .consumed = ALL, .status = 200, .version_minor = 1, .keep_alive = true,
	    .chunked = true, .body_bytes = 2, .header_bytes = 53 } },
	{ "chunked overrides content-length (and closes)",
	  OK200 "Content-Length: 100\r\nTransfer-Encoding: chunked\r\n\r\n4\r\nabcd\r\n0\r\n\r\n", 0,
	  false, false,
	  { .state = H1_DONE, .consumed = ALL, .status = 200, .version_minor = 1,
	    .keep_alive = false, .chunked = true, .has_content_length = true,
	    .content_length = 100, .body_bytes = 4, .header_bytes = 68 } },
	{ "chunked incomplete (inside chunk)", OK200 "Transfer-Encoding: chunked\r\n\r\n10\r\nabc", 0,
	  false, false,
	  { .state = H1_CHUNK_DATA, .consumed = ALL, .status = 200, .version_minor = 1,
	    .keep_alive = true, .chunked = true, .body_bytes = 3, .header_bytes = 47 } },
	{ "chunked max size", OK200 "Transfer-Encoding: chunked\r\n\r\nFFFFFFFFFFFFFFFF\r\nab", 0,
	  false, false,
	  { .state = H1_CHUNK_DATA, .consumed = ALL, .status = 200, .version_minor = 1,
	    .keep_alive = true, .chunked = true, .body_bytes = 2, .header_bytes = 47 } },
	{ "HTTP/1.0 with chunked: parsed, not kept alive",
	  "HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nx\r\n0\r\n\r\n",
	  0, false, false,
	  { .state = H1_DONE, .consumed = ALL, .status = 200, .version_minor = 0,
	    .keep_alive = false, .chunked = true, .body_bytes = 1, .header_bytes = 71 } },

	/* close-delimited */
	{ "close-delimited + eof", OK200 "Server: t\r\n\r\nsome body", 0, false, true,
	  { .state = H1_DONE, .consumed = ALL, .status = 200, .version_minor = 1,
	    .keep_alive = false, .body_bytes = 9, .header_bytes = 30 } },
	{ "close-delimited, empty body + eof", OK200 "\r\n", 0, false, true,
	  { .state = H1_DONE, .consumed = ALL, .status = 200, .version_minor = 1,
	    .keep_alive = false, .header_bytes = 19 } },
	{ "close-delimited, no eof yet", OK200 "\r\nsome", 0, false, false,
	  { .state = H1_BODY_EOF, .consumed = ALL, .status = 200, .version_minor = 1,
	    .keep_alive = false, .body_bytes = 4, .header_bytes = 19 } },
	{ "TE without chunked last is close-delimited",
	  OK200 "Transfer-Encoding: chunked, gzip\r\n\r\n5\r\nhello", 0, false, true,
	  { .state = H1_DONE, .consumed = ALL, .status = 200, .version_minor = 1,
	    .keep_alive = false, .body_bytes = 8, .header_bytes = 53 } },
	{ "later TE field decides",
	  OK200 "Transfer-Encoding: chunked\r\nTransfer-Encoding: gzip\r\n\r\nabc", 0, false, true,
	  { .state = H1_DONE, .consumed = ALL, .status = 200, .version_minor = 1,
	    .keep_alive = false, .body_bytes = 3, .header_bytes = 72 } },
	{ "HTTP/1.0 close-delimited + eof", "HTTP/1.0 200 OK\r\n\r\n<html></html>", 0, false, true,
	  { .state = H1_DONE, .consumed = ALL, .status = 200, .version_minor = 0,
	    .keep_alive = false, .body_bytes = 13, .header_bytes = 19 } },

	/* no body */
	{ "HEAD with content-length", OK200 "Content-Length: 1234\r\n\r\n", 0, true, false,
	  { .state = H1_DONE, .consumed = ALL, .status = 200, .version_minor = 1, .keep_alive = true,
	    .has_content_length = true, .content_length = 1234, .header_bytes = 41 } },
	{ "HEAD with chunked, next response follows",
	  OK200 "Transfer-Encoding: chunked\r\n\r\nHTTP/1.1 200 OK\r\n", 0, true, false,
	  { .state = H1_DONE, .consumed = 47, .status = 200, .version_minor = 1, .keep_alive = true,
	    .chunked = true, .header_bytes = 47 } },
	{ "HEAD without length", OK200 "\r\n", 0, true, false,
	  { .state = H1_DONE, .consumed = ALL, .status = 200, .version_minor = 1, .keep_alive = true,
	    .header_bytes = 19 } },
	{ "204 without length, next response follows",
	  "HTTP/1.1 204 No Content\r\nDate: x\r\n\r\nHTTP/1.1 200 OK\r\n\r\n", 0, false, false,
	  { .state = H1_DONE, .consumed = 36, .status = 204, .version_minor = 1, .keep_alive = true,
	    .header_bytes = 36 } },
	{ "304 with content-length", "HTTP/1.1 304 Not Modified\r\nContent-Length: 100\r\n\r\n", 0,
	  false, false,
	  { .state = H1_DONE, .consumed = ALL, .status = 304, .version_minor = 1, .keep_alive = true,
	    .has_content_length = true, .content_length = 100, .header_bytes = 50 } },

	/* interim responses */
	{ "100-continue then 200",
	  "HTTP/1.1 100 Continue\r\n\r\n" OK200 "Content-Length: 2\r\n\r\nok", 0, false, false,
	  { .state = H1_DONE, .consumed = ALL, .status = 200, .version_minor = 1, .keep_alive = true,
	    .has_content_length = true, .content_length = 2, .body_bytes = 2, .header_bytes = 38,
	    .interim = 1 } },
	{ "100 and 103 with headers then 204",
	  "HTTP/1.1 100 Continue\r\n\r\n"
	  "HTTP/1.1 103 Early Hints\r\nLink: </a.css>; rel=preload\r\nContent-Length: 7\r\n\r\n"
	  "HTTP/1.1 204 No Content\r\nConnection: close\r\n\r\n",
	  0, false, false,
	  { .state = H1_DONE, .consumed = ALL, .status = 204, .version_minor = 1,
	    .keep_alive = false, .header_bytes = 46, .interim = 2 } },
	{ "100-continue then HEAD response", "HTTP/1.1 100 Continue\r\n\r\n" OK200 "Content-Length: 9\r\n\r\n",
	  0, true, false,
	  { .state = H1_DONE, .consumed = ALL, .status = 200, .version_minor = 1, .keep_alive = true,
	    .has_content_length = true, .content_length = 9, .header_bytes = 38, .interim = 1 } },
	{ "interim only, final not yet", "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 2", 0, false, false,
	  { .state = H1_STATUS, .consumed = ALL, .interim = 1 } },

	/* connection management */
	{ "HTTP/1.0 without keep-alive", "HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok", 0, false,
	  false,
	  { .state = H1_DONE, .consumed = ALL, .status = 200, .version_minor = 0,
	    .keep_alive = false, .has_content_length = true, .content_length = 2, .body_bytes = 2,
	    .header_bytes = 38 } },
	{ "HTTP/1.0 with keep-alive",
	  "HTTP/1.0 200 OK\r\nConnection: Keep-Alive\r\nContent-Length: 2\r\n\r\nok", 0, false, false,
	  { .state = H1_DONE, .consumed = ALL, .status = 200, .version_minor = 0, .keep_alive = true,
	    .has_content_length = true, .content_length = 2, .body_bytes = 2, .header_bytes = 62 } },
	{ "HTTP/1.0 keep-alive and close", "HTTP/1.0 200 OK\r\nConnection: keep-alive, close\r\n"
	                                   "Content-Length: 0\r\n\r\n",
	  0, false, false,
	  { .state = H1_DONE, .consumed = ALL, .status = 200, .version_minor = 0,
	    .keep_alive = false, .has_content_length = true, .header_bytes = 69 } },
	{ "HTTP/1.1 Connection: close", OK200 "Connection: close\r\nContent-Length: 0\r\n\r\n", 0, false,
	  false,
	  { .state = H1_DONE, .consumed = ALL, .status = 200, .version_minor = 1,
	    .keep_alive = false, .has_content_length = true, .header_bytes = 57 } },
	{ "HTTP/1.1 Connection list, case-insensitive",
	  OK200 "Connection: Upgrade,\tCLOSE \r\nContent-Length: 0\r\n\r\n", 0, false, false,
	  { .state = H1_DONE, .consumed = ALL, .status = 200, .version_minor = 1,
	    .keep_alive = false, .has_content_length = true, .header_bytes = 67 } },
	{ "HTTP/1.1 Connection: keep-alive, closer (not close)",
	  OK200 "Connection: keep-alive, closer\r\nContent-Length: 0\r\n\r\n", 0, false, false,
	  { .state = H1_DONE, .consumed = ALL, .status = 200, .version_minor = 1, .keep_alive = true,
	    .has_content_length = true, .header_bytes = 70 } },
	{ "pipelined: stops at the first response's end",
	  OK200 "Content-Length: 3\r\n\r\nabc" OK200 "Content-Length: 3\r\n\r\ndef", 0, false, false,
	  { .state = H1_DONE, .consumed = 41, .status = 200, .version_minor = 1, .keep_alive = true,
	    .has_content_length = true, .content_length = 3, .body_bytes = 3, .header_bytes = 38 } },
	{ "pipelined chunked", OK200 "Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n" OK200 "\r\n", 0, false,
	  false,
	  { .state = H1_DONE, .consumed = 52, .status = 200, .version_minor = 1, .keep_alive = true,
	    .chunked = true, .header_bytes = 47 } },

	/* errors: status line */
	{ "garbage", "GARBAGE\r\n\r\n", 0, false, false, { .rc = PACER_ESTATUS } },
	{ "garbage without a line end", "<html><body>", 0, false, false, { .rc = PACER_ESTATUS } },
	{ "leading empty line", "\r\n" OK200 "\r\n", 0, false, false, { .rc = PACER_ESTATUS } },
	{ "lowercase http", "http/1.1 200 OK\r\n\r\n", 0, false, false, { .rc = PACER_ESTATUS } },
	{ "HTTP/2", "HTTP/2 200 OK\r\n\r\n", 0, false, false, { .rc = PACER_ESTATUS } },
	{ "HTTP/1.2", "HTTP/1.2 200 OK\r\n\r\n", 0, false, false, { .rc = PACER_ESTATUS } },
	{ "HTTP/0.9", "HTTP/0.9 200 OK\r\n\r\n", 0, false, false, { .rc = PACER_ESTATUS } },
	{ "two-digit status", "HTTP/1.1 20 OK\r\n\r\n", 0, false, false, { .rc = PACER_ESTATUS } },
	{ "four-digit status", "HTTP/1.1 2000 OK\r\n\r\n", 0, false, false, { .rc = PACER_ESTATUS } },
	{ "status below 100", "HTTP/1.1 099 Huh\r\n\r\n", 0, false, false, { .rc = PACER_ESTATUS } },
	{ "non-digit status", "HTTP/1.1 2x0 OK\r\n\r\n", 0, false, false, { .rc = PACER_ESTATUS } },
	{ "double space", "HTTP/1.1  200 OK\r\n\r\n", 0, false, false, { .rc = PACER_ESTATUS } },
	{ "tab separator", "HTTP/1.1\t200 OK\r\n\r\n", 0, false, false, { .rc = PACER_ESTATUS } },
	{ "bare CR in reason", "HTTP/1.1 200 O\rK\r\n\r\n", 0, false, false, { .rc = PACER_ESTATUS } },
	{ "truncated status line", "HTTP/1.1 20\r\n\r\n", 0, false, false, { .rc = PACER_ESTATUS } },
	{ "101 switching protocols", "HTTP/1.1 101 Switching Protocols\r\nUpgrade: x\r\n\r\n", 0,
	  false, false, { .rc = PACER_EUNSUPPORTED } },

	/* errors: header fields */
	{ "space in field name", OK200 "Bad Header: x\r\n\r\n", 0, false, false,
	  { .rc = PACER_EHEADER } },
	{ "space before colon", OK200 "Content-Length : 5\r\n\r\nhello", 0, false, false,
	  { .rc = PACER_EHEADER } },
	{ "empty field name", OK200 ": value\r\n\r\n", 0, false, false, { .rc = PACER_EHEADER } },
	{ "no colon", OK200 "NoColon\r\n\r\n", 0, false, false, { .rc = PACER_EHEADER } },
	{ "obs-fold", OK200 "X-A: a\r\n  folded\r\n\r\n", 0, false, false, { .rc = PACER_EHEADER } },
	{ "whitespace before first header", OK200 " X-A: a\r\n\r\n", 0, false, false,
	  { .rc = PACER_EHEADER } },
	{ "NUL in value", BIN(OK200 "X-A: a\0b\r\n\r\n"), false, false, { .rc = PACER_EHEADER } },
	{ "bare CR in value", OK200 "X-A: a\rb\r\n\r\n", 0, false, false, { .rc = PACER_EHEADER } },
	{ "DEL in value", OK200 "X-A: a\x7f\r\n\r\n", 0, false, false, { .rc = PACER_EHEADER } },
	{ "content-length not a number", OK200 "Content-Length: abc\r\n\r\n", 0, false, false,
	  { .rc = PACER_EHEADER } },
	{ "content-length negative", OK200 "Content-Length: -1\r\n\r\n", 0, false, false,
	  { .rc = PACER_EHEADER } },
	{ "content-length plus sign", OK200 "Content-Length: +5\r\n\r\nhello", 0, false, false,
	  { .rc = PACER_EHEADER } },
	{ "content-length trailing junk", OK200 "Content-Length: 5a\r\n\r\nhello", 0, false, false,
	  { .rc = PACER_EHEADER } },
	{ "content-length two numbers", OK200 "Content-Length: 1 2\r\n\r\n", 0, false, false,
	  { .rc = PACER_EHEADER } },
	{ "content-length empty", OK200 "Content-Length: \r\n\r\n", 0, false, false,
	  { .rc = PACER_EHEADER } },
	{ "content-length only commas", OK200 "Content-Length: , ,\r\n\r\n", 0, false, false,
	  { .rc = PACER_EHEADER } },
	{ "content-length overflow", OK200 "Content-Length: 18446744073709551616\r\n\r\n", 0, false,
	  false, { .rc = PACER_EHEADER } },
	{ "content-length huge overflow", OK200 "Content-Length: 99999999999999999999999\r\n\r\n", 0,
	  false, false, { .rc = PACER_EHEADER } },
	{ "conflicting content-length fields",
	  OK200 "Content-Length: 5\r\nContent-Length: 6\r\n\r\nhello!", 0, false, false,
	  { .rc = PACER_EHEADER } },
	{ "conflicting content-length list", OK200 "Content-Length: 5, 6\r\n\r\nhello!", 0, false,
	  false, { .rc = PACER_EHEADER } },
	{ "bad content-length even for HEAD", OK200 "Content-Length: x\r\n\r\n", 0, true, false,
	  { .rc = PACER_EHEADER } },
	{ "transfer-encoding empty", OK200 "Transfer-Encoding: \r\n\r\n", 0, false, false,
	  { .rc = PACER_EHEADER } },
	{ "transfer-encoding not a token", OK200 "Transfer-Encoding: @chunked\r\n\r\n", 0, false,
	  false, { .rc = PACER_EHEADER } },
	{ "bad header in a 1xx", "HTTP/1.1 100 Continue\r\nBad Header: x\r\n\r\n" OK200 "\r\n", 0,
	  false, false, { .rc = PACER_EHEADER } },

	/* errors: chunked framing */
	{ "bad chunk size", OK200 "Transfer-Encoding: chunked\r\n\r\nzz\r\n", 0, false, false,
	  { .rc = PACER_ECHUNK } },
	{ "empty chunk size", OK200 "Transfer-Encoding: chunked\r\n\r\n\r\n", 0, false, false,
	  { .rc = PACER_ECHUNK } },
	{ "space before chunk size", OK200 "Transfer-Encoding: chunked\r\n\r\n 5\r\nhello\r\n0\r\n\r\n",
	  0, false, false, { .rc = PACER_ECHUNK } },
	{ "junk after chunk size", OK200 "Transfer-Encoding: chunked\r\n\r\n5 x\r\nhello\r\n0\r\n\r\n",
	  0, false, false, { .rc = PACER_ECHUNK } },
	{ "negative chunk size", OK200 "Transfer-Encoding: chunked\r\n\r\n-5\r\n", 0, false, false,
	  { .rc = PACER_ECHUNK } },
	{ "control char in chunk ext", OK200 "Transfer-Encoding: chunked\r\n\r\n5;a\x01\r\nhello\r\n", 0,
	  false, false, { .rc = PACER_ECHUNK } },
	{ "chunk size overflow", OK200 "Transfer-Encoding: chunked\r\n\r\n10000000000000000\r\n", 0,
	  false, false, { .rc = PACER_ECHUNK } },
	{ "chunk data not followed by CRLF",
	  OK200 "Transfer-Encoding: chunked\r\n\r\n5\r\nhelloX\r\n0\r\n\r\n", 0, false, false,
	  { .rc = PACER_ECHUNK } },
	{ "chunk data followed by CR junk", OK200 "Transfer-Encoding: chunked\r\n\r\n5\r\nhello\rX", 0,
	  false, false, { .rc = PACER_ECHUNK } },
	{ "chunk data followed by CR CR", OK200 "Transfer-Encoding: chunked\r\n\r\n5\r\nhello\r\r\n", 0,
	  false, false, { .rc = PACER_ECHUNK } },
	{ "bad trailer", OK200 "Transfer-Encoding: chunked\r\n\r\n0\r\nBad Trailer: x\r\n\r\n", 0,
	  false, false, { .rc = PACER_EHEADER } },

	/* errors: EOF */
	{ "eof with nothing received", "", 0, false, true, { .rc = PACER_EEOF } },
	{ "eof mid status line", "HTTP/1.1 200", 0, false, true, { .rc = PACER_EEOF } },
	{ "eof mid headers", OK200 "Content-Length: 5\r\n", 0, false, true, { .rc = PACER_EEOF } },
	{ "eof mid body", OK200 "Content-Length: 5\r\n\r\nhel", 0, false, true, { .rc = PACER_EEOF } },
	{ "eof mid chunk", OK200 "Transfer-Encoding: chunked\r\n\r\n5\r\nhel", 0, false, true,
	  { .rc = PACER_EEOF } },
	{ "eof before last chunk", OK200 "Transfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n", 0, false,
	  true, { .rc = PACER_EEOF } },
	{ "eof in trailers", OK200 "Transfer-Encoding: chunked\r\n\r\n0\r\nX: y\r\n", 0, false, true,
	  { .rc = PACER_EEOF } },
	{ "eof after only an interim", "HTTP/1.1 100 Continue\r\n\r\n", 0, false, true,
	  { .rc = PACER_EEOF } },
};

static void test_table(void **state)
{
	(void)state;
	unsigned failed = 0;
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		const struct h1_case *c = &cases[i];
		size_t len = c->in_len ? c->in_len : strlen(c->in);
		if (!try_all_splits(c->name, c->in, len, c->head, c->eof, &c->want))
			failed++;
	}
	assert_int_equal(failed, 0);
}

/* ---- size limits (built at run time) ---------------------------------- */

static char big[2 * H1_HEADERS_CAP];

/* OK200 + "X: " + value of `vlen` bytes + CRLF + blank line */
static size_t header_line_input(size_t vlen)
{
	size_t n = 0;
	memcpy(big + n, OK200 "X: ", 20);
	n += 20;
	memset(big + n, 'v', vlen);
	n += vlen;
	memcpy(big + n, "\r\n\r\n", 4);
	return n + 4;
}

static void test_header_line_cap(void **state)
{
	(void)state;
	/* "X: " + value + CR is exactly H1_LINE_CAP: accepted */
	size_t vlen = H1_LINE_CAP - 3 - 1;
	size_t len = header_line_input(vlen);
	struct h1_result ok = { .state = H1_BODY_EOF, .consumed = ALL, .status = 200,
		                .version_minor = 1, .keep_alive = false,
		                .header_bytes = len };
	check_all_splits("header line at the cap", big, len, false, false, &ok);

	/* one more byte: too long */
	len = header_line_input(vlen + 1);
	struct h1_result too = { .rc = PACER_EHDRSIZE };
	check_all_splits("header line over the cap", big, len, false, false, &too);

	/* far over, with no line end ever: caught without waiting */
	memset(big, 'a', H1_LINE_CAP + 100);
	memcpy(big, OK200 "X: ", 20);
	check_all_splits("header line over the cap, unterminated", big, H1_LINE_CAP + 100, false, false,
	                 &too);
}

static void test_status_line_cap(void **state)
{
	(void)state;
	size_t n = 0;
	memcpy(big, "HTTP/1.1 200 ", 13);
	n = 13;
	memset(big + n, 'r', H1_LINE_CAP);
	n += H1_LINE_CAP;
	memcpy(big + n, "\r\n\r\n", 4);
	n += 4;
	struct h1_result too = { .rc = PACER_EHDRSIZE };
	check_all_splits("status line over the cap", big, n, false, false, &too);
}

/* OK200 + `count` lines "X-nnnnn: vvv...\r\n" of `line` bytes each + extra
 * line to land the block exactly on `total` bytes, + blank line. */
static size_t header_block_input(size_t total)
{
	size_t n = 0;
	memcpy(big, OK200, 17);
	n = 17;
	unsigned k = 0;
	while (total - n - 2 > 1000) {
		int w = snprintf(big + n, 64, "X-%05u: ", k++);
		n += (size_t)w;
		memset(big + n, 'v', 1000 - (size_t)w - 2);
		n += 1000 - (size_t)w - 2;
		memcpy(big + n, "\r\n", 2);
		n += 2;
	}
	/* a last line of exactly total - n - 2 bytes (>= 6 here) */
	size_t last = total - n - 2;
	memcpy(big + n, "Y: ", 3);
	memset(big + n + 3, 'w', last - 5);
	memcpy(big + n + last - 2, "\r\n", 2);
	n += last;
	memcpy(big + n, "\r\n", 2);
	return n + 2;
}

static void test_header_block_cap(void **state)
{
	(void)state;
	size_t len = header_block_input(H1_HEADERS_CAP);
	assert_int_equal(len, H1_HEADERS_CAP);
	struct h1_result ok = { .state = H1_BODY_EOF, .consumed = ALL, .status = 200,
		                .version_minor = 1, .header_bytes = H1_HEADERS_CAP };
	check_all_splits("header block at the cap", big, len, false, false, &ok);

	len = header_block_input(H1_HEADERS_CAP + 1);
	assert_int_equal(len, H1_HEADERS_CAP + 1);
	struct h1_result too = { .rc = PACER_EHDRSIZE };
	check_all_splits("header block over the cap", big, len, false, false, &too);
}

static void test_trailers_count_toward_cap(void **state)
{
	(void)state;
	/* headers of ~40 KiB + trailers of ~40 KiB: each fine, together too big */
	size_t n = 0;
	const char *h = OK200 "Transfer-Encoding: chunked\r\n";
	memcpy(big, h, strlen(h));
	n = strlen(h);
	for (int i = 0; i < 40; i++) {
		n += (size_t)sprintf(big + n, "X-%02d: ", i);
		memset(big + n, 'h', 1000);
		n += 1000;
		memcpy(big + n, "\r\n", 2);
		n += 2;
	}
	memcpy(big + n, "\r\n0\r\n", 5);
	n += 5;
	size_t before_trailers = n;
	for (int i = 0; i < 40; i++) {
		n += (size_t)sprintf(big + n, "T-%02d: ", i);
		memset(big + n, 't', 1000);
		n += 1000;
		memcpy(big + n, "\r\n", 2);
		n += 2;
	}
	memcpy(big + n, "\r\n", 2);
	n += 2;
	struct h1_result too = { .rc = PACER_EHDRSIZE };
	check_all_splits("trailers over the shared cap", big, n, false, false, &too);

	/* with just a few trailers it is fine */
	n = before_trailers;
	memcpy(big + n, "T: 1\r\n\r\n", 8);
	n += 8;
	struct h1_result ok = { .state = H1_DONE, .consumed = ALL, .status = 200, .version_minor = 1,
		                .keep_alive = true, .chunked = true,
		                .header_bytes = before_trailers - 3 };
	check_all_splits("a few trailers", big, n, false, false, &ok);
}

static void test_chunk_size_line_cap(void **state)
{
	(void)state;
	const char *h = OK200 "Transfer-Encoding: chunked\r\n\r\n5;";
	size_t n = strlen(h);
	memcpy(big, h, n);
	memset(big + n, 'e', H1_LINE_CAP);
	n += H1_LINE_CAP;
	memcpy(big + n, "\r\nhello\r\n0\r\n\r\n", 14);
	n += 14;
	struct h1_result too = { .rc = PACER_ECHUNK };
	check_all_splits("chunk-size line over the cap", big, n, false, false, &too);
}

/* A large chunked body with many chunks, parsed in random splits. */
static void test_many_chunks(void **state)
{
	(void)state;
	size_t n = 0;
	const char *h = OK200 "Transfer-Encoding: chunked\r\n\r\n";
	memcpy(big, h, strlen(h));
	n = strlen(h);
	uint64_t body = 0;
	for (unsigned i = 1; i <= 200; i++) {
		n += (size_t)sprintf(big + n, "%x\r\n", i);
		memset(big + n, 'a' + (int)(i % 26), i);
		n += i;
		body += i;
		memcpy(big + n, "\r\n", 2);
		n += 2;
	}
	memcpy(big + n, "0\r\n\r\n", 5);
	n += 5;
	struct h1_result ok = { .state = H1_DONE, .consumed = ALL, .status = 200, .version_minor = 1,
		                .keep_alive = true, .chunked = true, .body_bytes = body,
		                .header_bytes = strlen(h) };
	check_all_splits("200 chunks", big, n, false, false, &ok);
}

/* ---- API behaviour ---------------------------------------------------- */

static void test_pipelined_reuse(void **state)
{
	(void)state;
	const char in[] = OK200 "Content-Length: 3\r\n\r\nabc"
	                  "HTTP/1.1 404 Not Found\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nno\r\n0\r\n\r\n"
	                  "HTTP/1.0 200 OK\r\n\r\ntail";
	size_t len = sizeof in - 1;
	struct h1_resp *r = &resp;

	h1_resp_init(r, false);
	ssize_t n = h1_resp_feed(r, in, len);
	assert_int_equal(n, 41);
	assert_true(h1_resp_done(r));
	assert_int_equal(r->status, 200);
	assert_int_equal(h1_resp_feed(r, in + n, len - (size_t)n), 0); /* done: takes nothing */
	size_t off = (size_t)n;

	h1_resp_init(r, false);
	n = h1_resp_feed(r, in + off, len - off);
	assert_int_equal(n, 66);
	assert_true(h1_resp_done(r));
	assert_int_equal(r->status, 404);
	assert_true(r->chunked);
	assert_int_equal(r->body_bytes, 2);
	assert_true(r->keep_alive);
	off += (size_t)n;

	h1_resp_init(r, false);
	n = h1_resp_feed(r, in + off, len - off);
	assert_int_equal((size_t)n, len - off);
	assert_false(h1_resp_done(r));
	assert_true(h1_resp_headers_done(r));
	assert_int_equal(r->state, H1_BODY_EOF);
	assert_int_equal(h1_resp_eof(r), 0);
	assert_true(h1_resp_done(r));
	assert_int_equal(r->body_bytes, 4);
	assert_false(r->keep_alive);
	assert_int_equal(h1_resp_eof(r), 0); /* again: still done */
}

static void test_error_is_sticky(void **state)
{
	(void)state;
	struct h1_resp *r = &resp;
	h1_resp_init(r, false);
	assert_int_equal(h1_resp_feed(r, "HTTP/1.1 200 OK\r\nContent-Length: x\r\n", 36), PACER_EHEADER);
	assert_int_equal(r->state, H1_ERROR);
	assert_false(h1_resp_headers_done(r));
	assert_int_equal(h1_resp_feed(r, "\r\n", 2), PACER_EHEADER);
	assert_int_equal(h1_resp_eof(r), PACER_EEOF);
	assert_int_equal(r->state, H1_ERROR);

	/* init makes it usable again */
	h1_resp_init(r, false);
	assert_int_equal(h1_resp_feed(r, "HTTP/1.1 204 x\r\n\r\n", 18), 18);
	assert_true(h1_resp_done(r));
}

static void test_headers_done_progress(void **state)
{
	(void)state;
	struct h1_resp *r = &resp;
	h1_resp_init(r, false);
	assert_false(h1_resp_headers_done(r));
	assert_int_equal(h1_resp_feed(r, "HTTP/1.1 100 Continue\r\n\r\n", 25), 25);
	assert_false(h1_resp_headers_done(r)); /* interim does not count */
	assert_int_equal(r->interim, 1);
	assert_int_equal(h1_resp_feed(r, OK200 "Content-Length: 4\r\n\r\nab", 40), 40);
	assert_true(h1_resp_headers_done(r));
	assert_false(h1_resp_done(r));
	assert_int_equal(r->remaining, 2);
	assert_int_equal(h1_resp_feed(r, "", 0), 0);
	assert_int_equal(h1_resp_feed(r, NULL, 0), 0);
	assert_int_equal(h1_resp_feed(r, "cdEXTRA", 7), 2);
	assert_true(h1_resp_done(r));
	assert_int_equal(r->body_bytes, 4);
	assert_int_equal(r->header_bytes, 38);
}

static void test_eof_nothing(void **state)
{
	(void)state;
	struct h1_resp *r = &resp;
	h1_resp_init(r, true);
	assert_int_equal(h1_resp_eof(r), PACER_EEOF);
	assert_int_equal(r->state, H1_ERROR);
	assert_int_equal(h1_resp_feed(r, "HTTP/1.1 200 OK\r\n", 17), PACER_EEOF);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table),
		cmocka_unit_test(test_header_line_cap),
		cmocka_unit_test(test_status_line_cap),
		cmocka_unit_test(test_header_block_cap),
		cmocka_unit_test(test_trailers_count_toward_cap),
		cmocka_unit_test(test_chunk_size_line_cap),
		cmocka_unit_test(test_many_chunks),
		cmocka_unit_test(test_pipelined_reuse),
		cmocka_unit_test(test_error_is_sticky),
		cmocka_unit_test(test_headers_done_progress),
		cmocka_unit_test(test_eof_nothing),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
