/* libFuzzer harness for the HTTP/1.1 response parser (src/http/h1.c).
 *
 * Input: byte 0 is a control byte, the rest is what the server sent.
 *   bit 0      the request was HEAD
 *   bits 1..7  split pattern: 0 = byte at a time, otherwise pseudo-random
 *              pieces of 0..(bits+1) bytes seeded by the byte
 * The data is parsed as a sequence of pipelined responses (re-initialising
 * after each complete one), twice: in one feed per response and in the
 * split pattern; then EOF is signalled. Both runs must agree exactly, and
 * invariants are checked on every call. Violations abort(). */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http/h1.h"
#include "util/err.h"

#define FUZZ_NAME "fuzz_h1"
#include "common/fuzz_check.h"

#define MAX_RESPONSES 8

struct outcome {
	int rc; /* negative: error from feed or eof */
	enum h1_state state;
	size_t consumed; /* bytes of this response (when rc == 0) */
	int status;
	int version_minor;
	bool keep_alive, chunked, has_content_length;
	uint64_t content_length, body_bytes, header_bytes;
	uint32_t interim;
};

static struct h1_resp resp;

static bool known_error(int rc)
{
	switch (rc) {
	case PACER_ESTATUS:
	case PACER_EHEADER:
	case PACER_EHDRSIZE:
	case PACER_ECHUNK:
	case PACER_EUNSUPPORTED:
	case PACER_EEOF:
		return true;
	default:
		return false;
	}
}

static void check_resp(const struct h1_resp *r)
{
	CHECK(r->state >= H1_STATUS && r->state <= H1_ERROR);
	CHECK(r->line_len <= H1_LINE_CAP);
	CHECK(r->block_bytes <= H1_HEADERS_CAP || r->state == H1_ERROR);
	if (r->state == H1_ERROR)
		CHECK(known_error(r->error));
	if (h1_resp_headers_done(r)) {
		CHECK(r->status >= 200 && r->status <= 999);
		CHECK(r->version_minor == 0 || r->version_minor == 1);
		CHECK(r->header_bytes >= 14 && r->header_bytes <= H1_HEADERS_CAP);
		if (r->state == H1_BODY_EOF)
			CHECK(!r->keep_alive);
		if (r->state == H1_BODY_LEN)
			CHECK(!r->head_request && r->remaining > 0 &&
			      r->body_bytes + r->remaining == r->content_length);
	}
}

/* Parse one response from d[0..n) in pieces; returns its outcome. */
static struct outcome parse_one(const uint8_t *d, size_t n, bool head, uint8_t split, bool whole,
                                uint32_t *rng)
{
	struct outcome o;
	memset(&o, 0, sizeof o);
	h1_resp_init(&resp, head);
	size_t off = 0;
	unsigned max_piece = (unsigned)(split >> 1) + 1;
	for (;;) {
		size_t piece;
		if (whole)
			piece = n - off;
		else if ((split >> 1) == 0)
			piece = 1;
		else {
			*rng = *rng * 1103515245u + 12345u;
			piece = (*rng >> 16) % (max_piece + 1);
		}
		if (piece > n - off)
			piece = n - off;
		ssize_t rc = h1_resp_feed(&resp, (const char *)d + off, piece);
		check_resp(&resp);
		if (rc < 0) {
			CHECK(resp.state == H1_ERROR);
			CHECK(known_error((int)rc) && rc != PACER_EEOF);
			/* sticky */
			CHECK(h1_resp_feed(&resp, "x", 1) == rc);
			o.rc = (int)rc;
			break;
		}
		CHECK((size_t)rc <= piece);
		off += (size_t)rc;
		CHECK(off <= n);
		if ((size_t)rc < piece)
			CHECK(resp.state == H1_DONE);
		if (resp.state == H1_DONE) {
			CHECK(h1_resp_feed(&resp, "x", 1) == 0);
			CHECK(h1_resp_eof(&resp) == 0 && resp.state == H1_DONE);
			break;
		}
		if (off == n)
			break;
	}
	if (o.rc == 0) {
		CHECK(resp.body_bytes + resp.header_bytes <= off);
		if (resp.state == H1_DONE)
			CHECK(h1_resp_headers_done(&resp));
	}
	o.state = resp.state;
	o.consumed = o.rc ? 0 : off;
	o.status = resp.status;
	o.version_minor = resp.version_minor;
	o.keep_alive = resp.keep_alive;
	o.chunked = resp.chunked;
	o.has_content_length = resp.has_content_length;
	o.content_length = resp.content_length;
	o.body_bytes = resp.body_bytes;
	o.header_bytes = resp.header_bytes;
	o.interim = resp.interim;
	if (o.rc == 0 && o.state != H1_DONE) {
		/* all data used up without completing: the peer closes now */
		CHECK(off == n);
		enum h1_state before = resp.state;
		int e = h1_resp_eof(&resp);
		if (before == H1_BODY_EOF) {
			CHECK(e == 0 && resp.state == H1_DONE);
		} else {
			CHECK(e == PACER_EEOF && resp.state == H1_ERROR);
			CHECK(h1_resp_eof(&resp) == PACER_EEOF);
		}
		o.rc = e;
		o.state = resp.state;
		o.body_bytes = resp.body_bytes;
	}
	check_resp(&resp);
	return o;
}

static size_t parse_all(const uint8_t *d, size_t n, bool head, uint8_t split, bool whole,
                        struct outcome *out)
{
	uint32_t rng = split * 2654435761u + 1;
	size_t off = 0, k = 0;
	while (k < MAX_RESPONSES) {
		out[k] = parse_one(d + off, n - off, head, split, whole, &rng);
		const struct outcome *o = &out[k++];
		if (o->rc < 0 || o->state != H1_DONE || o->consumed == 0)
			break;
		off += o->consumed;
		if (off == n)
			break;
	}
	return k;
}

static bool same(const struct outcome *a, const struct outcome *b)
{
	return a->rc == b->rc && a->state == b->state && a->consumed == b->consumed &&
	       (a->rc < 0 ||
	        (a->status == b->status && a->version_minor == b->version_minor &&
	         a->keep_alive == b->keep_alive && a->chunked == b->chunked &&
	         a->has_content_length == b->has_content_length &&
	         a->content_length == b->content_length && a->body_bytes == b->body_bytes &&
	         a->header_bytes == b->header_bytes && a->interim == b->interim));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	uint8_t ctl = data[0];
	bool head = ctl & 1;
	const uint8_t *d = data + 1;
	size_t n = size - 1;

	static struct outcome whole[MAX_RESPONSES], split[MAX_RESPONSES];
	size_t kw = parse_all(d, n, head, ctl, true, whole);
	size_t ks = parse_all(d, n, head, ctl, false, split);
	if (kw != ks) {
		fprintf(stderr, "fuzz_h1: %zu responses whole, %zu split\n", kw, ks);
		abort();
	}
	for (size_t i = 0; i < kw; i++) {
		if (!same(&whole[i], &split[i])) {
			fprintf(stderr,
			        "fuzz_h1: response %zu differs: whole rc=%d state=%d consumed=%zu "
			        "body=%llu; split rc=%d state=%d consumed=%zu body=%llu\n",
			        i, whole[i].rc, (int)whole[i].state, whole[i].consumed,
			        (unsigned long long)whole[i].body_bytes, split[i].rc, (int)split[i].state,
			        split[i].consumed, (unsigned long long)split[i].body_bytes);
			abort();
		}
	}
	return 0;
}
