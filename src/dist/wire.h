/* pacer — the wire of the start barrier and the hand-in (docs/distributed.md#the-barrier):
 * HTTP/1.1 between the segments of one plan and segment 0, which holds
 * the barrier and collects the results. One request per connection:
 *
 *   POST /pacer/v1/checkin   body "segment K/N\nplan HEX64\nhost NAME\n"
 *        200 "wait MS C/N\n"        not yet: ask again in MS ms (C checked in)
 *        200 "start NS C/N\n"       load starts at NS (ns since the epoch, UTC)
 *   POST /pacer/v1/result    body: the segment's framed result (dist/frame.h)
 *        200 "stored K/N\n"
 *   an error: 4xx or 5xx, body "error MESSAGE\n" (400 malformed, 401 not
 *   authenticated, 404 unknown path, 409 another plan or segment count,
 *   410 the run is over, 413 too large, 503 busy)
 *
 * Authenticated by a secret the segments share (PACER_BARRIER_TOKEN): a
 * request carries X-Pacer-Auth: HMAC-SHA256(secret, "pacer/1 PATH\n" BODY)
 * in hex; a reply the HMAC of "pacer/1 reply REQUEST_MAC STATUS\n" BODY,
 * so a reply answers one request and the secret never travels.
 *
 * Pure: parsers and formatters of bytes; no sockets, no clocks. Bounded:
 * a head over WIRE_MAX_HEAD, a body over its path's cap, are refused
 * before they are read. */
#ifndef PACER_DIST_WIRE_H
#define PACER_DIST_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define WIRE_PORT 7450                        /* segment 0's port unless given */
#define WIRE_MAX_HEAD 4096                    /* request or reply line and headers */
#define WIRE_MAX_CHECKIN 512                  /* a check-in's body */
#define WIRE_MAX_RESULT (96u * 1024u * 1024u) /* a framed result (a frame of a 256 MiB
                                               * document compresses far below) */
#define WIRE_MAX_REPLY 1024                   /* a reply's body */
#define WIRE_MAC_HEX 64

#define WIRE_PATH_CHECKIN "/pacer/v1/checkin"
#define WIRE_PATH_RESULT "/pacer/v1/result"

enum wire_op { WIRE_CHECKIN = 1, WIRE_RESULT = 2 };

/* A request's head, as the server parses it. */
struct wire_request {
	enum wire_op op;
	size_t head_len;       /* bytes of the head, with its blank line */
	size_t content_length; /* the body's, within the op's cap */
	char mac[WIRE_MAC_HEX + 1];
};

/* Parse the head at buf[0..len) (bytes received so far). 1: incomplete,
 * read more (len < WIRE_MAX_HEAD); 0: *rq set; else an HTTP status to
 * answer with (400, 404, 405, 411, 413) and *why a static message. */
int wire_parse_request(const char *buf, size_t len, struct wire_request *rq, const char **why);

struct wire_checkin {
	uint32_t segment, count;
	char plan[WIRE_MAC_HEX + 1]; /* the plan's fingerprint, hex SHA-256 */
	char host[64];               /* the sender's host name, for messages */
};

/* Parse a check-in's body (exactly the three lines, in order). 0, or
 * PACER_EPARSE with *why a static message. */
int wire_parse_checkin(const char *body, size_t len, struct wire_checkin *c, const char **why);

/* A check-in's body into out[cap] (cap >= WIRE_MAX_CHECKIN); its length,
 * or 0 when host or plan does not fit the format. */
size_t wire_format_checkin(const struct wire_checkin *c, char *out, size_t cap);

enum wire_reply_kind { WIRE_WAIT = 1, WIRE_START, WIRE_STORED, WIRE_ERROR };

struct wire_reply {
	int status;
	enum wire_reply_kind kind;
	uint64_t start_ns;  /* WIRE_START */
	uint32_t retry_ms;  /* WIRE_WAIT */
	uint32_t n, count;  /* checked in (WAIT, START), or the segment stored (STORED) of count */
	char msg[200];      /* WIRE_ERROR: the server's message, one line */
};

/* Parse a complete reply buf[0..len) (head and body; the server closes
 * after it) answering the request whose MAC is req_mac, checking its MAC
 * with secret. 0 and *r; else PACER_EPARSE (malformed, or a status and
 * body that do not agree), PACER_EUNSUPPORTED (its MAC does not match:
 * another secret, or not segment 0 answering), with *why a static message. */
int wire_parse_reply(const char *buf, size_t len, const char *secret, const char *req_mac,
		     struct wire_reply *r, const char **why);

/* HMAC-SHA256 of a request (path, body) or a reply (req_mac, status,
 * body) with secret, in hex into mac[WIRE_MAC_HEX + 1]. false on an
 * OpenSSL failure. */
bool wire_mac_request(const char *secret, const char *path, const char *body, size_t len,
		      char mac[WIRE_MAC_HEX + 1]);
bool wire_mac_reply(const char *secret, const char *req_mac, int status, const char *body,
		    size_t len, char mac[WIRE_MAC_HEX + 1]);

/* Whether two MACs in hex are equal, in time independent of where they
 * differ. */
bool wire_mac_equal(const char *a, const char *b);

/* A request's head (POST path, the body's length, its MAC) into
 * out[cap] (cap >= 256): its length. */
size_t wire_format_request_head(const char *host, const char *path, size_t body_len,
				const char *mac, char *out, size_t cap);

/* A reply (status, body, its MAC over req_mac) into out[cap]
 * (cap >= 256 + body length): its length, or 0 when it does not fit. */
size_t wire_format_reply(const char *secret, const char *req_mac, int status, const char *body,
			 size_t len, char *out, size_t cap);

/* The plan fingerprint: hex SHA-256 of argv[0..argc), each argument
 * NUL-terminated, without the options that do not shape the plan (the
 * outputs --out, --report-dir, --history, --hgrm, --metrics-listen, --quiet,
 * --limited-ok, the barrier's own options) and with only the N of
 * --segment K/N, into out[WIRE_MAC_HEX + 1]. false on an OpenSSL failure. */
bool wire_plan_fingerprint(int argc, char *const *argv, char out[WIRE_MAC_HEX + 1]);

#endif
