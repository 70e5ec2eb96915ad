/* libFuzzer harness for the wire of the barrier and the hand-in
 * (src/dist/wire.c): what segment 0 parses of a request (the head, a
 * check-in's body) and what a segment parses of a reply.
 *
 * The input is split at its first NUL: the part before it is parsed as a
 * request head and as a check-in body, the part after as a reply (checked
 * with a fixed secret and request MAC). Every parser returns a documented
 * code; a head parsed whole lies within the bytes and the caps; a check-in
 * parsed formats back to the same bytes; a reply that parses was signed
 * with the secret (so a reply the harness signs itself, over the input's
 * body, parses only when the body is a valid reply). Violations abort(). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dist/wire.h"
#include "util/err.h"

#define CHECK(c)                                                                           \
	do {                                                                               \
		if (!(c)) {                                                                \
			fprintf(stderr, "fuzz_wire: invariant failed: %s (%s:%d)\n", #c,   \
				__FILE__, __LINE__);                                       \
			abort();                                                           \
		}                                                                          \
	} while (0)

static const char SECRET[] = "fuzz";
static const char REQ_MAC[] = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *in = (const char *)data;
	const uint8_t *nul = memchr(data, 0, size);
	size_t a = nul ? (size_t)(nul - data) : size;
	const char *why = NULL;

	struct wire_request rq;
	int st = wire_parse_request(in, a, &rq, &why);
	CHECK(why != NULL);
	if (st == 0) {
		CHECK(rq.head_len >= 4 && rq.head_len <= a && rq.head_len <= WIRE_MAX_HEAD);
		CHECK(rq.op == WIRE_CHECKIN || rq.op == WIRE_RESULT);
		CHECK(rq.content_length <= (rq.op == WIRE_CHECKIN ? WIRE_MAX_CHECKIN : WIRE_MAX_RESULT));
		CHECK(strlen(rq.mac) == WIRE_MAC_HEX);
	} else {
		CHECK(st == 1 || st == 400 || st == 401 || st == 404 || st == 405 || st == 411 ||
		      st == 413);
		CHECK(st != 1 || a < WIRE_MAX_HEAD);
	}

	struct wire_checkin ci;
	if (wire_parse_checkin(in, a, &ci, &why) == 0) {
		char back[WIRE_MAX_CHECKIN];
		size_t n = wire_format_checkin(&ci, back, sizeof back);
		CHECK(n == a && !memcmp(back, in, a));
		CHECK(ci.segment < ci.count && ci.count <= 1024);
	}

	if (nul) {
		const char *r = in + a + 1;
		size_t rn = size - a - 1;
		struct wire_reply rep;
		int rc = wire_parse_reply(r, rn, SECRET, REQ_MAC, &rep, &why);
		CHECK(rc == 0 || rc == PACER_EPARSE || rc == PACER_EUNSUPPORTED);
		/* the body signed as segment 0 would sign it */
		if (rn <= WIRE_MAX_REPLY) {
			char out[WIRE_MAX_HEAD + WIRE_MAX_REPLY + 1];
			size_t on = wire_format_reply(SECRET, REQ_MAC, 200, r, rn, out, sizeof out);
			if (on) {
				rc = wire_parse_reply(out, on, SECRET, REQ_MAC, &rep, &why);
				CHECK(rc == 0 || rc == PACER_EPARSE);
				if (rc == 0) {
					CHECK(rep.status == 200);
					CHECK(rep.kind == WIRE_WAIT || rep.kind == WIRE_START ||
					      rep.kind == WIRE_STORED);
					CHECK(rep.n <= rep.count && rep.count <= 1024);
				}
				/* another secret: never accepted */
				CHECK(wire_parse_reply(out, on, "other", REQ_MAC, &rep, &why) != 0);
			}
		}
	}
	return 0;
}
