/* pacer — request encoding (pure): method, URL, headers and body to the wire
 * bytes of one HTTP/1.1 request, built once before a run. */
#ifndef PACER_HTTP_REQ_H
#define PACER_HTTP_REQ_H

#include <stddef.h>

#include "http/url.h"

struct req_spec {
	const char *method;        /* token, e.g. "GET" */
	const struct url *url;
	const char *const *headers; /* "Name: value" strings */
	size_t n_headers;
	const char *body;          /* may be NULL */
	size_t body_len;
	const char *user_agent;    /* default User-Agent value */
};

/* Check a header line "Name: value": token name, no CR/LF/NUL anywhere.
 * Returns 0 or PACER_EHEADER with *why set to a static phrase. */
int req_header_check(const char *line, const char **why);
/* Check a method: an HTTP token (RFC 9110) of 1 to 32 bytes that is not all
 * digits. 0 or PACER_EPARSE. */
int req_method_check(const char *method);

/* Encode. *out is malloc'd (caller frees), *out_len its length. Headers given
 * replace pacer's defaults of the same name (Host, User-Agent); a
 * Content-Length is added when there is a body (or the method is POST/PUT/
 * PATCH) unless given. 0, PACER_EHEADER (bad header) or -ENOMEM. */
int req_encode(const struct req_spec *s, char **out, size_t *out_len, const char **why);

/* The User-Agent pacer sends unless -H User-Agent: is given; part of every
 * request's wire bytes, so of a request table's hash too. */
#define PACER_USER_AGENT "pacer/" PACER_VERSION

#endif
