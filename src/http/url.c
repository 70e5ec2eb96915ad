/* pacer — URL parsing. See url.h. */
#include "http/url.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "util/err.h"

static int fail(const char **why, int code, const char *phrase)
{
	if (why)
		*why = phrase;
	return code;
}

static bool is_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
static bool is_digit(char c) { return c >= '0' && c <= '9'; }
static bool is_hex(char c) { return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }

/* A dotted IPv4 address in s[n] as inet_pton reads one: four decimal
 * octets 0..255 without leading zeros. (Written out here so that http/
 * stays free of the sockets API.) */
static bool ipv4_literal(const char *s, size_t n)
{
	size_t i = 0;
	for (int octet = 0; octet < 4; octet++) {
		if (octet) {
			if (i == n || s[i] != '.')
				return false;
			i++;
		}
		size_t start = i;
		unsigned v = 0;
		while (i < n && is_digit(s[i]) && i - start < 3)
			v = v * 10 + (unsigned)(s[i++] - '0');
		if (i == start || v > 255 || (i - start > 1 && s[start] == '0'))
			return false;
	}
	return i == n;
}

/* An IPv6 address in s[n] as inet_pton reads one (RFC 4291 section 2.2):
 * eight groups of 1..4 hex digits separated by ':', one run of zero groups
 * of any length written "::", and the last two groups optionally as a
 * dotted IPv4 address. No zone id. */
static bool ipv6_literal(const char *s, size_t n)
{
	size_t i = 0, groups = 0;
	bool elided = false;
	if (n >= 2 && s[0] == ':' && s[1] == ':') {
		elided = true;
		i = 2;
	} else if (n && s[0] == ':') {
		return false;
	}
	while (i < n) {
		size_t start = i;
		while (i < n && is_hex(s[i]))
			i++;
		if (i < n && s[i] == '.') { /* the last 32 bits, dotted */
			if (!ipv4_literal(s + start, n - start))
				return false;
			groups += 2;
			break;
		}
		if (i == start || i - start > 4)
			return false;
		groups++;
		if (i == n)
			break;
		if (s[i++] != ':')
			return false;
		if (i < n && s[i] == ':') {
			if (elided)
				return false;
			elided = true;
			i++;
		} else if (i == n) {
			return false; /* a single ':' at the end */
		}
	}
	return elided ? groups <= 7 : groups == 8;
}

/* ASCII case-insensitive equality with a literal (pacer never calls
 * setlocale, so strncasecmp compares ASCII only). */
static bool ieq(const char *s, size_t n, const char *lit)
{
	return strlen(lit) == n && strncasecmp(s, lit, n) == 0;
}

/* A DNS name (letters, digits, '-', '_' for container names, dots between
 * labels of 1..63 characters, an optional final dot) or a dotted IPv4. */
static int check_name(const char *h, size_t n, const char **why)
{
	bool numeric = true;
	size_t label = 0;
	for (size_t i = 0; i < n; i++) {
		char c = h[i];
		if (c == '.') {
			if (label == 0)
				return fail(why, PACER_EURL, "empty label in host (leading dot or \"..\")");
			label = 0;
			continue;
		}
		if (!is_alpha(c) && !is_digit(c) && c != '-' && c != '_')
			return fail(why, PACER_EURL,
			            "bad character in host (letters, digits, '-', '.', '_' only)");
		if (!is_digit(c))
			numeric = false;
		if (++label > 63)
			return fail(why, PACER_EURL, "host label longer than 63 characters");
	}
	if (numeric && !ipv4_literal(h, n))
		return fail(why, PACER_EURL, "bad IPv4 address");
	return 0;
}

static void clear(struct url *u)
{
	u->tls = false;
	u->host[0] = '\0';
	u->host_is_ipv6 = false;
	u->port = 0;
	u->port_explicit = false;
	u->target[0] = '\0';
}

static int parse(struct url *u, const char *s, const char **why)
{
	if (!s || !*s)
		return fail(why, PACER_EURL, "empty URL");
	for (const char *c = s; *c; c++) {
		unsigned char b = (unsigned char)*c;
		if (b == ' ')
			return fail(why, PACER_EURL, "space in URL (percent-encode it as %20)");
		if (b < 0x20 || b == 0x7f)
			return fail(why, PACER_EURL, "control character in URL");
		if (b >= 0x80)
			return fail(why, PACER_EURL, "non-ASCII byte in URL (percent-encode it)");
	}

	/* scheme "://" */
	size_t i = 0;
	if (is_alpha(s[0]))
		while (is_alpha(s[i]) || is_digit(s[i]) || s[i] == '+' || s[i] == '-' || s[i] == '.')
			i++;
	if (s[i] != ':' || s[i + 1] != '/' || s[i + 2] != '/')
		return fail(why, PACER_EURL, "missing \"://\" (expected http://host or https://host)");
	if (i == 0)
		return fail(why, PACER_EURL, "missing scheme before \"://\"");
	if (ieq(s, i, "http"))
		u->tls = false;
	else if (ieq(s, i, "https"))
		u->tls = true;
	else
		return fail(why, PACER_EURL, "unsupported scheme (only http and https)");

	/* authority */
	const char *a = s + i + 3;
	const char *aend = a + strcspn(a, "/?#");
	if (memchr(a, '@', (size_t)(aend - a)))
		return fail(why, PACER_EURL, "userinfo (user@host) is not supported");
	if (a == aend)
		return fail(why, PACER_EURL, "missing host");

	const char *rest; /* after the host: ':' port or aend */
	if (*a == '[') {
		const char *close = memchr(a, ']', (size_t)(aend - a));
		if (!close)
			return fail(why, PACER_EURL, "unterminated '[' in IPv6 host");
		size_t n = (size_t)(close - a - 1);
		if (n == 0)
			return fail(why, PACER_EURL, "missing host");
		if (n >= URL_HOST_CAP)
			return fail(why, PACER_ETOOBIG, "host too long");
		memcpy(u->host, a + 1, n);
		u->host[n] = '\0';
		if (!ipv6_literal(u->host, n))
			return fail(why, PACER_EURL, "bad IPv6 address");
		u->host_is_ipv6 = true;
		rest = close + 1;
		if (rest < aend && *rest != ':')
			return fail(why, PACER_EURL, "unexpected character after ']' in host");
	} else {
		const char *colon = memchr(a, ':', (size_t)(aend - a));
		if (colon && memchr(colon + 1, ':', (size_t)(aend - colon - 1)))
			return fail(why, PACER_EURL, "IPv6 address must be in brackets (http://[::1]/)");
		rest = colon ? colon : aend;
		size_t n = (size_t)(rest - a);
		if (n == 0)
			return fail(why, PACER_EURL, "missing host");
		if (n >= URL_HOST_CAP)
			return fail(why, PACER_ETOOBIG, "host too long");
		memcpy(u->host, a, n);
		u->host[n] = '\0';
		int rc = check_name(u->host, n, why);
		if (rc < 0)
			return rc;
	}

	/* port */
	if (rest < aend) { /* *rest == ':' */
		const char *p = rest + 1;
		if (p == aend)
			return fail(why, PACER_EURL, "empty port after ':'");
		unsigned long port = 0;
		for (; p < aend; p++) {
			if (!is_digit(*p))
				return fail(why, PACER_EURL, "port is not a number");
			port = port * 10 + (unsigned long)(*p - '0');
			if (port > 65535)
				return fail(why, PACER_EURL, "port out of range (1-65535)");
		}
		if (port == 0)
			return fail(why, PACER_EURL, "port out of range (1-65535)");
		u->port = (uint16_t)port;
		u->port_explicit = true;
	} else {
		u->port = u->tls ? 443 : 80;
	}

	/* target: path + query, fragment dropped */
	const char *t = aend;
	size_t tn = strcspn(t, "#");
	size_t pre = (tn == 0 || t[0] == '?') ? 1 : 0; /* a "/" to add */
	if (pre + tn + 1 > URL_TARGET_CAP)
		return fail(why, PACER_ETOOBIG, "path and query too long");
	if (pre)
		u->target[0] = '/';
	memcpy(u->target + pre, t, tn);
	u->target[pre + tn] = '\0';
	return 0;
}

int url_parse(struct url *u, const char *s, const char **why)
{
	clear(u);
	if (why)
		*why = NULL;
	int rc = parse(u, s, why);
	if (rc < 0)
		clear(u);
	return rc;
}

int url_host_header(const struct url *u, char *out, size_t cap)
{
	unsigned def = u->tls ? 443u : 80u;
	int n;
	if (u->port == def)
		n = u->host_is_ipv6 ? snprintf(out, cap, "[%s]", u->host)
		                    : snprintf(out, cap, "%s", u->host);
	else
		n = u->host_is_ipv6 ? snprintf(out, cap, "[%s]:%u", u->host, (unsigned)u->port)
		                    : snprintf(out, cap, "%s:%u", u->host, (unsigned)u->port);
	if (n < 0 || (size_t)n >= cap)
		return -ENOSPC;
	return n;
}
