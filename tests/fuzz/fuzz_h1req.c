/* libFuzzer harness for the HTTP/1.1 request-head parser of the embedded
 * target (src/http/h1req.c).
 *
 * Input: byte 0 is a control byte, the rest (at most 24 KiB, enough to pass
 * the 16 KiB head cap) is what a client sent: a sequence of pipelined
 * requests. Each request head is parsed three ways:
 *   - whole: one call with every byte there is;
 *   - byte at a time: calls with len = 1, 2, 3, ... over the same buffer;
 *   - in pieces: pieces of 1..(ctl % 64 + 1 + len / 32) bytes chosen by a
 *     generator seeded with the control byte (so at most a few dozen pieces
 *     for a long input), each call on a fresh exactly-sized copy of the
 *     bytes so far (the buffer moves between calls, as the parser allows,
 *     and AddressSanitizer sees any read past `len`).
 * All three must agree exactly (return value and every result field), and
 * invariants are checked on every call: 0 <= consumed <= len, offsets of a
 * complete head inside it, the method a token, the target visible ASCII of
 * a form the header allows, error codes paired with their statuses, results
 * sticky after completion or failure, h1req_split_target and
 * h1req_query_param inside the buffer. After a complete head its
 * Content-Length body is skipped and the next request parsed, up to 8.
 * Violations abort(). */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "http/h1req.h"
#include "util/err.h"

#define FUZZ_NAME "fuzz_h1req"
#include "common/fuzz_check.h"

#define MAX_INPUT (24u * 1024u)
#define MAX_REQUESTS 8

struct outcome {
	int rc;
	struct h1req r; /* result fields compared; internal state ignored */
};

static bool in(const char *p, size_t n, const char *buf, size_t len)
{
	return p >= buf && n <= len && (size_t)(p - buf) <= len - n;
}

static void check_error(const struct h1req *r, int rc)
{
	switch (rc) {
	case PACER_EPARSE:
		CHECK(r->error_status == 400 || r->error_status == 505 || r->error_status == 411 ||
		      r->error_status == 501);
		break;
	case PACER_ETOOBIG:
		CHECK(r->error_status == 413);
		break;
	case PACER_EHDRSIZE:
		CHECK(r->error_status == 414 || r->error_status == 431);
		break;
	default:
		fprintf(stderr, "fuzz_h1req: unexpected return %d\n", rc);
		abort();
	}
}

/* A complete head of `rc` bytes in buf[0..len). */
static void check_done(const struct h1req *r, int rc, const char *buf, size_t len)
{
	CHECK(rc > 0 && (size_t)rc <= len && (size_t)rc <= H1REQ_HEADERS_CAP);
	CHECK(r->method_len >= 1 && r->method_len <= H1REQ_METHOD_CAP);
	CHECK((size_t)r->method_off + r->method_len < (size_t)rc);
	for (uint32_t i = 0; i < r->method_len; i++)
		CHECK(h1req_is_tchar((unsigned char)buf[r->method_off + i]));
	CHECK(buf[r->method_off + r->method_len] == ' ');
	CHECK(r->target_off == r->method_off + r->method_len + 1);
	CHECK(r->target_len >= 1 && (size_t)r->target_off + r->target_len < (size_t)rc);
	CHECK(r->target_off + r->target_len - r->method_off <= H1REQ_LINE_CAP);
	for (uint32_t i = 0; i < r->target_len; i++) {
		unsigned char c = (unsigned char)buf[r->target_off + i];
		CHECK(c > 0x20 && c < 0x7f);
	}
	const char *t = buf + r->target_off;
	CHECK(t[0] == '/' || (r->target_len == 1 && t[0] == '*') ||
	      (r->target_len >= 7 && !strncasecmp(t, "http://", 7)) ||
	      (r->target_len >= 8 && !strncasecmp(t, "https://", 8)));
	CHECK(r->version_minor == 0 || r->version_minor == 1);
	CHECK(!r->expect_continue || r->version_minor == 1);
	CHECK(r->content_length <= H1REQ_BODY_CAP);
	CHECK(r->has_content_length || r->content_length == 0);
	CHECK(buf[rc - 1] == '\n');
	CHECK(r->error_status == 0);

	const char *path, *query;
	size_t path_len, query_len;
	h1req_split_target(r, buf, &path, &path_len, &query, &query_len);
	static const char slash[] = "/";
	CHECK(path_len >= 1);
	CHECK(in(path, path_len, buf, len) || (path_len == 1 && path[0] == slash[0]));
	CHECK(query_len == 0 || in(query, query_len, t, r->target_len));
	CHECK(memchr(path, '?', path_len) == NULL);
	const char *v;
	size_t vl;
	static const char *const names[] = {"", "a", "keys", "placement", "id"};
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		if (h1req_query_param(query, query_len, names[i], &v, &vl))
			CHECK(in(v, vl, query, query_len) || (vl == 0 && v == query + query_len));
}

static void check_call(const struct h1req *r, int rc, const char *buf, size_t len)
{
	if (rc < 0)
		check_error(r, rc);
	else if (rc > 0)
		check_done(r, rc, buf, len);
	else
		CHECK(r->pos <= len && r->pos <= H1REQ_HEADERS_CAP);
}

static bool same(const struct outcome *a, const struct outcome *b)
{
	if (a->rc != b->rc)
		return false;
	if (a->rc < 0)
		return a->r.error_status == b->r.error_status;
	if (a->rc == 0)
		return true;
	const struct h1req *x = &a->r, *y = &b->r;
	return x->method_off == y->method_off && x->method_len == y->method_len &&
	       x->target_off == y->target_off && x->target_len == y->target_len &&
	       x->version_minor == y->version_minor && x->keep_alive == y->keep_alive &&
	       x->has_content_length == y->has_content_length &&
	       x->expect_continue == y->expect_continue && x->content_length == y->content_length;
}

/* Result fields only (the parser keeps them valid after completion). */
static void keep(struct outcome *o, const struct h1req *r, int rc)
{
	o->rc = rc;
	o->r = *r;
}

static struct outcome parse_whole(const char *d, size_t n)
{
	struct h1req r;
	struct outcome o;
	h1req_init(&r);
	int rc = h1req_parse(&r, d, n);
	check_call(&r, rc, d, n);
	/* sticky, and a second call scans nothing new */
	CHECK(h1req_parse(&r, d, n) == rc);
	keep(&o, &r, rc);
	return o;
}

static struct outcome parse_bytewise(const char *d, size_t n)
{
	struct h1req r;
	struct outcome o;
	h1req_init(&r);
	int rc = 0;
	size_t len = 0;
	while (len < n) {
		len++;
		rc = h1req_parse(&r, d, len);
		check_call(&r, rc, d, len);
		if (rc != 0)
			break;
	}
	if (n == 0)
		rc = h1req_parse(&r, d, 0);
	if (rc != 0 && len < n)
		CHECK(h1req_parse(&r, d, n) == rc); /* more bytes change nothing */
	keep(&o, &r, rc);
	return o;
}

static struct outcome parse_pieces(const char *d, size_t n, uint8_t ctl, uint32_t *rng)
{
	struct h1req r;
	struct outcome o;
	h1req_init(&r);
	int rc = 0;
	size_t len = 0;
	size_t max_piece = (size_t)(ctl % 64) + 1 + n / 32;
	char *copy = NULL;
	for (;;) {
		*rng = *rng * 1103515245u + 12345u;
		size_t piece = 1 + (*rng >> 16) % max_piece;
		if (piece > n - len)
			piece = n - len;
		len += piece;
		free(copy);
		copy = malloc(len ? len : 1);
		CHECK(copy != NULL);
		memcpy(copy, d, len);
		rc = h1req_parse(&r, copy, len);
		check_call(&r, rc, copy, len);
		if (rc != 0 || len == n)
			break;
	}
	free(copy);
	keep(&o, &r, rc);
	return o;
}

static void report(size_t k, const char *how, const struct outcome *a, const struct outcome *b)
{
	fprintf(stderr,
	        "fuzz_h1req: request %zu: whole rc=%d status=%d; %s rc=%d status=%d (method %u+%u, "
	        "target %u+%u vs %u+%u)\n",
	        k, a->rc, a->r.error_status, how, b->rc, b->r.error_status, a->r.method_off,
	        a->r.method_len, a->r.target_off, a->r.target_len, b->r.target_off, b->r.target_len);
	abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	uint8_t ctl = data[0];
	const char *d = (const char *)data + 1;
	size_t n = size - 1;
	if (n > MAX_INPUT)
		n = MAX_INPUT;
	uint32_t rng = ctl * 2654435761u + 1;
	size_t off = 0;
	for (size_t k = 0; k < MAX_REQUESTS; k++) {
		struct outcome w = parse_whole(d + off, n - off);
		struct outcome b = parse_bytewise(d + off, n - off);
		struct outcome p = parse_pieces(d + off, n - off, ctl, &rng);
		if (!same(&w, &b))
			report(k, "byte at a time", &w, &b);
		if (!same(&w, &p))
			report(k, "in pieces", &w, &p);
		if (w.rc == 0) /* incomplete: whatever follows is not here yet */
			CHECK(n - off < H1REQ_HEADERS_CAP + 1);
		if (w.rc <= 0)
			break;
		off += (size_t)w.rc;
		if (w.r.content_length >= n - off)
			break;
		off += (size_t)w.r.content_length;
	}
	return 0;
}
