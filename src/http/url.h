/* pacer — URL parsing (pure). Accepts absolute http:// and https:// URLs:
 *   scheme://host[:port][/path][?query][#fragment]
 * host is a DNS name, an IPv4 literal or a bracketed IPv6 literal. The
 * fragment is dropped (never sent). Userinfo ("user:pw@") is rejected. */
#ifndef PACER_HTTP_URL_H
#define PACER_HTTP_URL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define URL_HOST_CAP 256
#define URL_TARGET_CAP 8192

struct url {
	bool tls;                      /* https */
	char host[URL_HOST_CAP];       /* without brackets for IPv6 */
	bool host_is_ipv6;
	uint16_t port;                 /* explicit or scheme default */
	bool port_explicit;
	char target[URL_TARGET_CAP];   /* path + "?" + query; "/" when empty */
};

/* Parse the NUL-terminated `s` into the caller's `u`. Scheme is "http" or
 * "https" in any case. Host: DNS name (letters, digits, '-', '_', '.';
 * labels of 1..63), dotted IPv4 (when all digits and dots), or a bracketed
 * IPv6 literal, both checked as inet_pton would (but without the sockets
 * API; no zone id). Port: 1..65535, digits
 * only, default 80/443. target: path and query as written ("/" if empty,
 * "/?q" if only a query); the fragment is dropped. Spaces, control
 * characters and non-ASCII bytes anywhere are rejected (percent-encode
 * them); nothing is decoded or normalised.
 * Returns 0, PACER_ETOOBIG (host or target over its cap) or PACER_EURL
 * (anything else); on error `u` is cleared and, when `why` is not NULL,
 * *why points at a static phrase saying what was wrong ("missing host",
 * "port out of range (1-65535)", ...); on success *why is set to NULL. */
int url_parse(struct url *u, const char *s, const char **why);

/* The Host header value: host, or host:port when the port is not the
 * scheme's default (an explicit ":80" on http is omitted); IPv6 in brackets.
 * Writes a NUL-terminated string into out[cap]. Returns bytes written
 * (excluding NUL) or -ENOSPC when it does not fit (out is then truncated,
 * still NUL-terminated if cap > 0). */
int url_host_header(const struct url *u, char *out, size_t cap);

#endif
