#include "http/h1req.h"

#include <string.h>
#include <strings.h>

#include "util/err.h"

enum {
	S_START = 0, /* before the request line (empty lines skipped) */
	S_START_CR,  /* CR of an empty line before the request line */
	S_METHOD,
	S_TARGET,
	S_VERSION,
	S_RL_CR,     /* CR ending the request line */
	S_HDR_START, /* first byte of a header line, or of the blank line */
	S_HDR_NAME,
	S_HDR_VALUE,
	S_HDR_CR,
	S_END_CR,    /* CR of the blank line */
	S_DONE,
	S_ERROR,
};

/* character classes */
#define C_TCHAR 1u  /* token character */
#define C_TARGET 2u /* visible ASCII, allowed in a request-target */
#define C_VALUE 4u  /* allowed in a header value: HTAB, SP, VCHAR, obs-text */

/* 1: token character; 2: visible ASCII (allowed in a request-target);
 * 4: allowed in a header value (HTAB, SP, VCHAR, obs-text). A constant
 * table, so there is nothing to initialise (tests/unit/target/test_h1req.c
 * checks the token class against its definition). */
static const uint8_t cls[256] = {
	0, 0, 0, 0, 0, 0, 0, 0, 0, 4, 0, 0, 0, 0, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	4, 7, 6, 7, 7, 7, 7, 7, 6, 6, 7, 7, 6, 7, 7, 6,
	7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 6, 6, 6, 6, 6, 6,
	6, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7,
	7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 6, 6, 6, 7, 7,
	7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7,
	7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 6, 7, 6, 7, 0,
	4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4,
	4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4,
	4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4,
	4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4,
	4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4,
	4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4,
	4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4,
	4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4,
};

bool h1req_is_tchar(unsigned char c) { return cls[c] & C_TCHAR; }

void h1req_init(struct h1req *r)
{
	r->method_off = r->method_len = 0;
	r->target_off = r->target_len = 0;
	r->version_minor = 1;
	r->keep_alive = false;
	r->has_content_length = false;
	r->expect_continue = false;
	r->content_length = 0;
	r->error_status = 0;
	r->state = S_START;
	r->saw_host = r->saw_te = r->te_chunked = r->conn_close = r->conn_keep = false;
	r->pos = 0;
	r->tok_off = 0;
	r->name_len = 0;
	r->error = 0;
}

static int fail(struct h1req *r, int code, int status)
{
	r->state = S_ERROR;
	r->error = code;
	r->error_status = status;
	return code;
}

static bool eq_ci(const char *a, size_t alen, const char *lit)
{
	size_t n = strlen(lit);
	return alen == n && strncasecmp(a, lit, n) == 0;
}

static bool is_ows(char c) { return c == ' ' || c == '\t'; }

/* Visit the comma-separated elements of a header value: set flags for
 * Connection, or remember whether the last Transfer-Encoding coding is
 * chunked. */
static void list_scan(struct h1req *r, const char *v, size_t n, bool is_te)
{
	size_t i = 0;
	while (i <= n) {
		size_t j = i;
		while (j < n && v[j] != ',')
			j++;
		size_t a = i, b = j;
		while (a < b && is_ows(v[a]))
			a++;
		while (b > a && is_ows(v[b - 1]))
			b--;
		if (is_te) {
			if (b > a) /* empty list elements do not count */
				r->te_chunked = eq_ci(v + a, b - a, "chunked");
		} else if (eq_ci(v + a, b - a, "close")) {
			r->conn_close = true;
		} else if (eq_ci(v + a, b - a, "keep-alive")) {
			r->conn_keep = true;
		}
		i = j + 1;
	}
}

/* A complete header line: name at tok_off (name_len bytes), value from
 * val_off to end (exclusive). */
static int header_line(struct h1req *r, const char *buf, uint32_t name_off, uint32_t val_off,
                       uint32_t end)
{
	const char *name = buf + name_off;
	size_t nlen = r->name_len;
	const char *v = buf + val_off;
	size_t vlen = end - val_off;
	while (vlen && is_ows(*v))
		v++, vlen--;
	while (vlen && is_ows(v[vlen - 1]))
		vlen--;

	switch (nlen) {
	case 4:
		if (eq_ci(name, nlen, "host")) {
			if (r->saw_host)
				return fail(r, PACER_EPARSE, 400);
			r->saw_host = true;
		}
		break;
	case 6:
		if (eq_ci(name, nlen, "expect") && eq_ci(v, vlen, "100-continue"))
			r->expect_continue = true;
		break;
	case 10:
		if (eq_ci(name, nlen, "connection"))
			list_scan(r, v, vlen, false);
		break;
	case 14:
		if (eq_ci(name, nlen, "content-length")) {
			if (vlen == 0)
				return fail(r, PACER_EPARSE, 400);
			uint64_t n = 0;
			for (size_t i = 0; i < vlen; i++) {
				if (v[i] < '0' || v[i] > '9')
					return fail(r, PACER_EPARSE, 400);
				n = n * 10 + (uint64_t)(v[i] - '0');
				if (n > H1REQ_BODY_CAP)
					return fail(r, PACER_ETOOBIG, 413);
			}
			if (r->has_content_length && n != r->content_length)
				return fail(r, PACER_EPARSE, 400);
			r->has_content_length = true;
			r->content_length = n;
		}
		break;
	case 17:
		if (eq_ci(name, nlen, "transfer-encoding")) {
			r->saw_te = true;
			list_scan(r, v, vlen, true);
		}
		break;
	default:
		break;
	}
	return 0;
}

static int finish(struct h1req *r, const char *buf)
{
	const char *t = buf + r->target_off;
	size_t tl = r->target_len;
	bool origin = t[0] == '/';
	bool star = tl == 1 && t[0] == '*';
	bool absolute = (tl >= 7 && strncasecmp(t, "http://", 7) == 0) ||
	                (tl >= 8 && strncasecmp(t, "https://", 8) == 0);
	if (!origin && !star && !absolute)
		return fail(r, PACER_EPARSE, 400);
	if (r->saw_te) {
		if (r->has_content_length || r->version_minor == 0)
			return fail(r, PACER_EPARSE, 400);
		return fail(r, PACER_EPARSE, r->te_chunked ? 411 : 501);
	}
	if (r->version_minor == 1 && !r->saw_host)
		return fail(r, PACER_EPARSE, 400);
	if (r->version_minor == 1)
		r->keep_alive = !r->conn_close;
	else
		r->keep_alive = r->conn_keep && !r->conn_close;
	if (r->version_minor == 0)
		r->expect_continue = false;
	r->state = S_DONE;
	return (int)r->pos;
}

static int version_end(struct h1req *r, const char *buf, uint32_t end)
{
	const char *v = buf + r->tok_off;
	size_t n = end - r->tok_off;
	if (n != 8 || memcmp(v, "HTTP/", 5) != 0 || v[6] != '.' || v[5] < '0' || v[5] > '9' ||
	    v[7] < '0' || v[7] > '9')
		return fail(r, PACER_EPARSE, 400);
	if (v[5] != '1' || (v[7] != '0' && v[7] != '1'))
		return fail(r, PACER_EPARSE, 505);
	r->version_minor = v[7] - '0';
	return 0;
}

int h1req_parse(struct h1req *r, const char *buf, size_t len)
{
	if (r->state == S_DONE)
		return (int)r->pos;
	if (r->state == S_ERROR)
		return r->error;

	const unsigned char *b = (const unsigned char *)buf;
	uint32_t i = r->pos;
	uint32_t limit = len < H1REQ_HEADERS_CAP ? (uint32_t)len : H1REQ_HEADERS_CAP;
	uint8_t st = r->state;
	int rc;

	for (; i < limit; i++) {
		unsigned char c = b[i];
		switch (st) {
		case S_START:
			if (c == '\r') {
				st = S_START_CR;
			} else if (c == '\n') {
				/* empty line: skip */
			} else if (cls[c] & C_TCHAR) {
				r->method_off = i;
				st = S_METHOD;
			} else {
				r->pos = i;
				return fail(r, PACER_EPARSE, 400);
			}
			break;
		case S_START_CR:
			if (c != '\n')
				return fail(r, PACER_EPARSE, 400);
			st = S_START;
			break;
		case S_METHOD:
			if (cls[c] & C_TCHAR) {
				if (i - r->method_off >= H1REQ_METHOD_CAP)
					return fail(r, PACER_EPARSE, 400);
			} else if (c == ' ') {
				r->method_len = i - r->method_off;
				r->target_off = i + 1;
				st = S_TARGET;
			} else {
				return fail(r, PACER_EPARSE, 400);
			}
			break;
		case S_TARGET:
			if (c == ' ') {
				r->target_len = i - r->target_off;
				if (r->target_len == 0)
					return fail(r, PACER_EPARSE, 400);
				r->tok_off = i + 1;
				st = S_VERSION;
			} else if (!(cls[c] & C_TARGET)) {
				return fail(r, PACER_EPARSE, 400);
			}
			break;
		case S_VERSION:
			if (c == '\r' || c == '\n') {
				if ((rc = version_end(r, buf, i)) < 0)
					return rc;
				st = c == '\r' ? S_RL_CR : S_HDR_START;
			} else if (i - r->tok_off >= 8) {
				return fail(r, PACER_EPARSE, 400);
			}
			break;
		case S_RL_CR:
		case S_HDR_CR:
			if (c != '\n')
				return fail(r, PACER_EPARSE, 400);
			st = S_HDR_START;
			break;
		case S_HDR_START:
			if (c == '\r') {
				st = S_END_CR;
			} else if (c == '\n') {
				r->pos = i + 1;
				return finish(r, buf);
			} else if (cls[c] & C_TCHAR) {
				r->tok_off = i;
				st = S_HDR_NAME;
			} else {
				/* obs-fold, stray bytes */
				return fail(r, PACER_EPARSE, 400);
			}
			break;
		case S_HDR_NAME:
			if (c == ':') {
				r->name_len = i - r->tok_off;
				/* value offset = i + 1; the name start is recoverable as
				 * value offset - 1 - name_len */
				r->tok_off = i + 1;
				st = S_HDR_VALUE;
			} else if (!(cls[c] & C_TCHAR)) {
				return fail(r, PACER_EPARSE, 400);
			}
			break;
		case S_HDR_VALUE:
			if (c == '\r' || c == '\n') {
				uint32_t val_off = r->tok_off;
				uint32_t name_off = val_off - 1 - r->name_len;
				if ((rc = header_line(r, buf, name_off, val_off, i)) < 0)
					return rc;
				st = c == '\r' ? S_HDR_CR : S_HDR_START;
			} else if (!(cls[c] & C_VALUE)) {
				return fail(r, PACER_EPARSE, 400);
			}
			break;
		case S_END_CR:
			if (c != '\n')
				return fail(r, PACER_EPARSE, 400);
			r->pos = i + 1;
			return finish(r, buf);
		default:
			return fail(r, PACER_EPARSE, 400);
		}
		if (st >= S_METHOD && st <= S_VERSION && i - r->method_off >= H1REQ_LINE_CAP)
			return fail(r, PACER_EHDRSIZE, 414);
	}
	r->pos = i;
	r->state = st;
	if (len > H1REQ_HEADERS_CAP)
		return fail(r, PACER_EHDRSIZE, 431);
	return 0;
}

void h1req_split_target(const struct h1req *r, const char *buf, const char **path,
                        size_t *path_len, const char **query, size_t *query_len)
{
	const char *t = buf + r->target_off;
	size_t n = r->target_len;
	if (n && t[0] != '/' && t[0] != '*') {
		/* absolute-form: skip "scheme://authority" */
		const char *p = memchr(t, ':', n);
		size_t skip = p ? (size_t)(p - t) + 3 : n; /* "://" */
		if (skip > n)
			skip = n;
		while (skip < n && t[skip] != '/' && t[skip] != '?')
			skip++;
		t += skip;
		n -= skip;
		if (n == 0 || t[0] == '?') {
			static const char slash[] = "/";
			const char *q = n ? t + 1 : NULL;
			*path = slash;
			*path_len = 1;
			*query = q ? q : "";
			*query_len = n ? n - 1 : 0;
			return;
		}
	}
	const char *q = memchr(t, '?', n);
	if (q) {
		*path = t;
		*path_len = (size_t)(q - t);
		*query = q + 1;
		*query_len = n - *path_len - 1;
	} else {
		*path = t;
		*path_len = n;
		*query = "";
		*query_len = 0;
	}
}

bool h1req_query_param(const char *query, size_t query_len, const char *name, const char **val,
                       size_t *val_len)
{
	size_t nl = strlen(name);
	size_t i = 0;
	while (i < query_len) {
		size_t j = i;
		while (j < query_len && query[j] != '&')
			j++;
		const char *eq = memchr(query + i, '=', j - i);
		size_t klen = eq ? (size_t)(eq - (query + i)) : j - i;
		if (klen == nl && memcmp(query + i, name, nl) == 0) {
			*val = eq ? eq + 1 : query + j;
			*val_len = eq ? (size_t)(query + j - (eq + 1)) : 0;
			return true;
		}
		i = j + 1;
	}
	return false;
}
