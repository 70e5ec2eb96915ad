/* pacer — an encoded HTTP/1.1 request turned into HTTP/2 header fields
 * (pure: no I/O, no clocks). Done once per request before a run, so that
 * the HTTP/2 path sends from ready fields, as HTTP/1.1 sends ready bytes.
 *
 * The request must be one that pacer encodes: a request line in
 * origin-form, absolute-form or "*", header fields, a blank line, and a
 * body of exactly Content-Length bytes (no Transfer-Encoding). Host becomes
 * :authority; the connection-specific fields HTTP/2 forbids (Connection,
 * Keep-Alive, Proxy-Connection, Transfer-Encoding, Upgrade, and TE other
 * than "trailers") are dropped; names are lower-cased. */
#ifndef PACER_HTTP_H2REQ_H
#define PACER_HTTP_H2REQ_H

#include <stddef.h>

#include <nghttp2/nghttp2.h>

#define H2REQ_MAX_FIELDS 128 /* header fields of one request, pseudo-headers included */

struct h2req {
	nghttp2_nv *nv;   /* n_nv fields, the pseudo-headers first; owned (one block with
	                   * the lower-cased names); values point into the encoded
	                   * request, which must outlive it */
	size_t n_nv;
	const char *body; /* the body, borrowed from the encoded request (NULL: none) */
	size_t body_len;
};

/* Fields of the request in buf[len], with :scheme `scheme` ("http" or
 * "https"). 0; -EINVAL with a one-line reason in err (what is wrong with
 * the request: a head that does not parse, Transfer-Encoding, a body whose
 * length differs from its Content-Length, more than H2REQ_MAX_FIELDS
 * fields); or -ENOMEM. On failure *out is empty. */
int h2req_from_h1(struct h2req *out, const char *buf, size_t len, const char *scheme, char *err,
                  size_t errlen);

/* Free what h2req_from_h1 allocated (the request bytes stay). NULL-safe
 * for an empty struct. */
void h2req_free(struct h2req *r);

#endif
