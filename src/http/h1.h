/* pacer — incremental HTTP/1.1 response parser (pure: no I/O, no clocks).
 *
 * Feed it whatever bytes arrived, in any split; it reports when a complete
 * response has been consumed and how to frame the next one. It never keeps
 * the body: only sizes and framing state. Memory is fixed: one line buffer of
 * H1_LINE_CAP bytes for a status/header/chunk-size line split across reads.
 * Any split of the same bytes (whole, byte-at-a-time, random) gives the same
 * result and the same error code.
 *
 * Framing handled: Content-Length, Transfer-Encoding: chunked (with chunk
 * extensions and trailers), close-delimited bodies, no body for HEAD
 * requests and 1xx/204/304 responses; 1xx interim responses are skipped
 * (counted in `interim`) and parsing continues to the final response.
 * HTTP/1.0 responses default to Connection: close.
 *
 * Choices (RFC 9112 leaves some to the recipient):
 *  - Lines end in CRLF; a bare LF is accepted too (as most clients do). Any
 *    other CR, and any control character except HTAB, is rejected.
 *  - The response must start with "HTTP/1.0 " or "HTTP/1.1 " (no leading
 *    empty lines); a mismatch is reported as soon as the first bytes arrive.
 *    Status is exactly 3 digits, 100..999; the reason may be empty or absent.
 *  - A line (with its CR, without its LF) longer than H1_LINE_CAP bytes is
 *    PACER_EHDRSIZE (PACER_ECHUNK for a chunk-size line). Status line +
 *    headers + blank line over H1_HEADERS_CAP bytes is PACER_EHDRSIZE; the
 *    trailer block counts toward the same cap.
 *  - obs-fold (a line starting with SP/HTAB) and whitespace before ':' are
 *    PACER_EHEADER.
 *  - Content-Length: a list of equal decimal values ("5, 5"); empty list
 *    elements are ignored; anything else, overflow, or differing values
 *    (within one field or across fields) is PACER_EHEADER.
 *  - Transfer-Encoding overrides Content-Length. Chunked framing when the
 *    last coding is "chunked", otherwise close-delimited. A response carrying
 *    both fields, or Transfer-Encoding in HTTP/1.0, is parsed but marked
 *    keep_alive = false (the framing is suspect, RFC 9112 §6.1, §6.3).
 *  - Connection: comma-separated tokens, case-insensitive; "close" wins over
 *    "keep-alive". HTTP/1.1 keeps alive unless "close"; HTTP/1.0 only with
 *    "keep-alive". A close-delimited body always means keep_alive = false.
 *  - 101 Switching Protocols is PACER_EUNSUPPORTED. */
#ifndef PACER_HTTP_H1_H
#define PACER_HTTP_H1_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define H1_LINE_CAP 8192          /* longest status/header/chunk-size line */
#define H1_HEADERS_CAP (64 * 1024) /* total bytes of one header block */

enum h1_state {
	H1_STATUS = 0,   /* expecting the status line */
	H1_HEADERS,      /* in the header block */
	H1_BODY_LEN,     /* Content-Length body, `remaining` bytes to go */
	H1_CHUNK_SIZE,   /* expecting a chunk-size line */
	H1_CHUNK_DATA,   /* inside a chunk, `remaining` bytes to go */
	H1_CHUNK_CRLF,   /* CRLF after chunk data */
	H1_TRAILERS,     /* trailer block after the last chunk */
	H1_BODY_EOF,     /* close-delimited body: everything until EOF */
	H1_DONE,         /* a full response was parsed */
	H1_ERROR,
};

/* Optional capture of what rules look at (outcome/success rules, server
 * time): the final response's header fields and a prefix of its body
 * (de-chunked). Owned by the caller, attached with h1_resp_capture; the
 * parser appends, and clears it when a 1xx interim response ends.
 * Buffers grow on demand up to their caps; what does not fit is dropped
 * and flagged, never an error. Trailers are not captured. */
#define H1_CAPTURE_HDR_CAP (16 * 1024) /* bytes of "name\0value\0" pairs */
#define H1_CAPTURE_MAX_FIELDS 128

struct h1_capture {
	/* settings */
	bool headers;           /* keep header fields */
	size_t body_cap;        /* keep up to this many body bytes (0: none) */
	/* per response */
	char *hbuf;             /* n_fields pairs "name\0value\0" */
	size_t hbuf_len, hbuf_cap;
	uint32_t n_fields;
	bool headers_truncated;
	char *body;             /* body_len bytes, then a NUL (not counted) */
	size_t body_len, body_alloc;
	bool body_truncated;
	bool oom;               /* a buffer could not grow: capture incomplete */
};

struct h1_resp {
	/* results, valid once H1_DONE (status/version once headers are parsed) */
	int status;              /* final status code, 100..999 */
	int version_minor;       /* 0 or 1 */
	bool keep_alive;         /* false: the server will close; reconnect */
	bool chunked;            /* Transfer-Encoding ends in chunked (framing
	                          * only if the response has a body) */
	bool has_content_length; /* a valid Content-Length was present */
	uint64_t content_length; /* its value (informative under TE / HEAD) */
	uint64_t body_bytes;     /* body bytes consumed (excluding chunk framing) */
	uint64_t header_bytes;   /* bytes of status line + headers of the final response */
	uint32_t interim;        /* 1xx responses skipped (saturates) */

	struct h1_capture *cap;  /* NULL: capture nothing (set by h1_resp_capture) */

	/* internal state */
	enum h1_state state;
	bool head_request;       /* response to HEAD: no body whatever the headers say */
	bool saw_te;
	bool saw_cl;
	bool saw_close;          /* Connection: close */
	bool saw_keep_alive;     /* Connection: keep-alive */
	int error;               /* the PACER_E* code once H1_ERROR */
	uint64_t remaining;
	uint64_t block_bytes;    /* bytes of the current header(+trailer) block */
	size_t line_len;
	char line[H1_LINE_CAP];
};

/* Prepare to parse one response (also to reuse `r` for the next response on
 * the same connection). head_request: the request was HEAD. Does not touch
 * the line buffer, so it is cheap. */
void h1_resp_init(struct h1_resp *r, bool head_request);

/* Clear a capture's per-response results (keeps its buffers). */
void h1_capture_clear(struct h1_capture *cap);

/* Attach a capture (NULL detaches) after h1_resp_init (which detaches):
 * clears it and captures the response now being parsed. */
static inline void h1_resp_capture(struct h1_resp *r, struct h1_capture *cap)
{
	r->cap = cap;
	if (cap)
		h1_capture_clear(cap);
}

/* Append a header field / body bytes to a capture, as the parser does (up
 * to the caps, within what the capture keeps; for responses parsed
 * elsewhere, e.g. HTTP/2). */
void h1_capture_add_field(struct h1_capture *cap, const char *name, size_t name_len,
			  const char *value, size_t value_len);
void h1_capture_add_body(struct h1_capture *cap, const char *p, size_t n);

/* Free a capture's buffers (not the struct) and clear its results. */
void h1_capture_free(struct h1_capture *cap);
/* Allocate cap's buffers up front (headers: 2 KiB; body: up to 4 KiB of
 * body_cap), so that the first responses do not grow them under load; they
 * still grow, once per connection, for larger responses. 0 or -ENOMEM. */
int h1_capture_reserve(struct h1_capture *cap);

/* Consume bytes. Returns the number of bytes consumed (<= len) or a negative
 * PACER_E* code (state becomes H1_ERROR): PACER_ESTATUS, PACER_EHEADER,
 * PACER_EHDRSIZE, PACER_ECHUNK, PACER_EUNSUPPORTED (101). Consumption stops
 * right after the end of a complete response (state H1_DONE); any following
 * bytes belong to the next response and are left to the caller. In H1_DONE
 * it consumes nothing and returns 0; in H1_ERROR it returns the same error
 * again. */
ssize_t h1_resp_feed(struct h1_resp *r, const char *buf, size_t len);

/* The peer closed the connection. Returns 0 if that completes the response
 * (close-delimited body; state becomes H1_DONE) or if the response was
 * already done; PACER_EEOF otherwise (including when nothing at all was
 * received, and when the parser was already in H1_ERROR), and the state
 * becomes H1_ERROR. */
int h1_resp_eof(struct h1_resp *r);

/* True once a complete response was parsed (state H1_DONE). */
static inline bool h1_resp_done(const struct h1_resp *r) { return r->state == H1_DONE; }

/* True once the status line and headers of the final (non-1xx) response
 * were parsed: status, version, keep_alive and framing fields are valid. */
static inline bool h1_resp_headers_done(const struct h1_resp *r)
{
	return r->state > H1_HEADERS && r->state != H1_ERROR;
}

#endif
