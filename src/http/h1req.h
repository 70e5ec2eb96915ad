/* pacer — incremental HTTP/1.1 request-head parser for the embedded target
 * server (pure: no I/O, no clocks, no allocation).
 *
 * The caller keeps the bytes of one request head contiguous, starting at the
 * request's first byte, and calls h1req_parse() each time more bytes arrive
 * (the buffer may move between calls, as long as its contents up to the
 * previous `len` are unchanged). Each call scans only the new bytes, byte by
 * byte, so feeding a head one byte at a time costs the same as feeding it
 * whole, and garbage is rejected as soon as the offending byte arrives.
 * Results are offsets into the caller's buffer; nothing is copied.
 *
 * Choices (RFC 9112 leaves some to the recipient):
 *  - Empty lines before the request line are skipped (they count toward the
 *    size cap). Lines end in CRLF; a bare LF is accepted too. A CR not
 *    followed by LF, and any control byte except HTAB in a header value, is
 *    400.
 *  - Request line: method = 1..H1REQ_METHOD_CAP token characters, one SP,
 *    request-target of visible ASCII (no bytes >= 0x80), one SP,
 *    "HTTP/1.0" or "HTTP/1.1". Another well-formed "HTTP/d.d" is 505; the
 *    target must be origin-form ("/..."), absolute-form ("http://...",
 *    "https://...") or "*", otherwise 400. A request line longer than
 *    H1REQ_LINE_CAP bytes is 414.
 *  - Request line + headers + blank line over H1REQ_HEADERS_CAP bytes: 431.
 *  - Header names are tokens; whitespace before ':' and obs-fold (a line
 *    starting with SP/HTAB) are 400.
 *  - Content-Length: one decimal number (surrounding whitespace allowed; no
 *    lists), at most H1REQ_BODY_CAP (else 413); repeated fields must agree.
 *  - Transfer-Encoding: request bodies must carry Content-Length. A request
 *    whose Transfer-Encoding ends in "chunked" gets 411 Length Required, any
 *    other Transfer-Encoding 501, both Content-Length and Transfer-Encoding
 *    (or Transfer-Encoding in HTTP/1.0) 400. The connection is then closed,
 *    so no body is ever mis-framed.
 *  - Host: required exactly once in HTTP/1.1 (400 if missing or repeated).
 *  - Connection: comma-separated tokens, case-insensitive; "close" wins over
 *    "keep-alive". HTTP/1.1 keeps alive unless "close"; HTTP/1.0 only with
 *    "keep-alive".
 *  - Expect: "100-continue" sets expect_continue (HTTP/1.1 only); other
 *    expectations are ignored.
 *
 * On an error the parser returns a negative PACER_E* code and sets
 * error_status to the HTTP status the server should answer with before
 * closing the connection. */
#ifndef PACER_HTTP_H1REQ_H
#define PACER_HTTP_H1REQ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define H1REQ_HEADERS_CAP (16u * 1024u) /* request line + headers + blank line */
#define H1REQ_LINE_CAP (8u * 1024u)     /* request line alone */
#define H1REQ_METHOD_CAP 32u
#define H1REQ_BODY_CAP (1ull << 30)     /* largest Content-Length accepted */

struct h1req {
	/* results, valid once h1req_parse() returned > 0 (offsets are into the
	 * caller's buffer, relative to the request's first byte) */
	uint32_t method_off, method_len;
	uint32_t target_off, target_len;
	int version_minor;       /* 0 or 1 */
	bool keep_alive;
	bool has_content_length;
	bool expect_continue;
	uint64_t content_length; /* 0 when absent */
	int error_status;        /* after an error: 400, 411, 413, 414, 431, 501, 505 */

	/* internal state */
	uint8_t state;
	bool saw_host, saw_te, te_chunked, conn_close, conn_keep;
	uint32_t pos;            /* bytes scanned so far */
	uint32_t tok_off;        /* start of the current name / value / version */
	uint32_t name_len;
	int error;
};

/* Prepare `r` for a new request (cheap: a handful of stores). */
void h1req_init(struct h1req *r);

/* Scan buf[r->pos .. len). buf holds the request from its first byte.
 * Returns the length of the complete head (request line through the blank
 * line; the body, if any, follows) when complete, 0 when more bytes are
 * needed, or a negative PACER_E* code with r->error_status set:
 * PACER_EPARSE (400, 505, 411, 501), PACER_ETOOBIG (413), PACER_EHDRSIZE
 * (414, 431). Once complete or failed, further calls return the same value
 * without scanning. */
int h1req_parse(struct h1req *r, const char *buf, size_t len);

/* Split the request-target of a parsed request into path and query (query
 * without the '?', len 0 if none). Absolute-form targets are reduced to
 * their path ("/" if empty); "*" is returned as the path "*". */
void h1req_split_target(const struct h1req *r, const char *buf, const char **path,
                        size_t *path_len, const char **query, size_t *query_len);

/* True if c is an RFC 9110 token character (tchar). */
bool h1req_is_tchar(unsigned char c);

/* Find query parameter `name` in `query` (as from h1req_split_target;
 * '&'-separated name=value pairs, names compared bytewise, not decoded).
 * Returns true and the raw value (possibly empty) on a match. */
bool h1req_query_param(const char *query, size_t query_len, const char *name, const char **val,
                       size_t *val_len);

#endif
