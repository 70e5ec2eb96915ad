/* pacer — the targets format (the text format of vegeta and others):
 *
 *   # a comment
 *   GET http://127.0.0.1:8080/users/1
 *   Accept: application/json
 *
 *   POST http://127.0.0.1:8080/users
 *   Content-Type: application/json
 *   @bodies/user.json
 *
 *   GET unix:/run/app.sock:http://app.local/health
 *
 * A request is a "METHOD URL" line, then "Name: value" header lines, then at
 * most one "@path" body line (relative to the file's folder unless
 * absolute); a blank line ends it (a next "METHOD http(s)://..." or
 * "METHOD unix:/..." line does too). A "unix:PATH:http://..." URL is HTTP
 * over that Unix socket (table_url_unix). Lines may end in CRLF. Every
 * error names the line it is about. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "table/table_int.h"
#include "util/err.h"

static bool is_ows(char c) { return c == ' ' || c == '\t'; }

static bool is_tchar(unsigned char c)
{
	if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'))
		return true;
	return c && strchr("!#$%&'*+-.^_`|~", c) != NULL;
}

/* "TOKEN OWS http(s)://" or "TOKEN OWS unix:/": a request line, not a header. */
static bool looks_like_request(const char *s, size_t n)
{
	size_t i = 0;
	while (i < n && is_tchar((unsigned char)s[i]))
		i++;
	if (i == 0 || i == n || !is_ows(s[i]))
		return false;
	while (i < n && is_ows(s[i]))
		i++;
	return (n - i >= 7 && strncasecmp(s + i, "http://", 7) == 0) ||
	       (n - i >= 8 && strncasecmp(s + i, "https://", 8) == 0) ||
	       (n - i >= 6 && strncasecmp(s + i, "unix:/", 6) == 0);
}

struct pending {
	bool open;
	unsigned line, body_line;
	char *method, *url;          /* NUL-terminated, malloc'd by the parser */
	struct tb_hdr *hdrs;
	unsigned *hdr_lines;
	size_t n_hdrs;
	const char *body;
	size_t body_len;
	bool has_body;
};

static int flush(struct tb *b, struct pending *p, char *err, size_t cap)
{
	if (!p->open)
		return 0;
	p->open = false;
	struct tb_req r = {.method = p->method, .url = p->url, .headers = p->hdrs,
	                   .n_headers = p->n_hdrs, .body = p->body, .body_len = p->body_len,
	                   .body_in_arena = true, .line = p->line};
	int rc = tb_add(b, &r);
	if (rc == 0)
		return 0;
	if (rc == -ENOMEM && !b->why[0])
		return tb_err(err, cap, rc, "%s:%u: out of memory", b->t->source, p->line);
	unsigned at = p->line;
	if (b->why_at == TB_AT_HEADER && b->why_header < p->n_hdrs)
		at = p->hdr_lines[b->why_header];
	else if (b->why_at == TB_AT_BODY && p->has_body)
		at = p->body_line;
	return tb_err(err, cap, rc, "%s:%u: %s", b->t->source, at, b->why);
}

/* Parse "METHOD URL" from s[n] (leading and trailing whitespace trimmed). */
static int request_line(struct tb *b, struct pending *p, const char *s, size_t n, unsigned line,
                        char *err, size_t cap)
{
	const char *src = b->t->source;
	while (n && is_ows(*s))
		s++, n--;
	while (n && is_ows(s[n - 1]))
		n--;
	size_t m = 0;
	while (m < n && !is_ows(s[m]))
		m++;
	if (m > 0 && s[m - 1] == ':')
		return tb_err(err, cap, PACER_EPARSE,
		              "%s:%u: header line before any request (expected 'METHOD URL')", src, line);
	size_t u = m;
	while (u < n && is_ows(s[u]))
		u++;
	if (u == n)
		return tb_err(err, cap, PACER_EPARSE, "%s:%u: expected 'METHOD URL', got '%.*s%s'", src, line,
		              m > 60 ? 60 : (int)m, s, m > 60 ? "..." : "");
	size_t ue = u;
	while (ue < n && !is_ows(s[ue]))
		ue++;
	if (ue != n)
		return tb_err(err, cap, PACER_EPARSE,
		              "%s:%u: unexpected text after the URL (expected 'METHOD URL')", src, line);
	memcpy(p->method, s, m);
	p->method[m] = '\0';
	memcpy(p->url, s + u, ue - u);
	p->url[ue - u] = '\0';
	p->open = true;
	p->line = line;
	p->n_hdrs = 0;
	p->has_body = false;
	p->body = NULL;
	p->body_len = 0;
	return 0;
}

size_t tb_targets_cut(const char *text, size_t len, size_t max_line)
{
	/* the last complete line ends at the last '\n' */
	const char *end = len ? memrchr(text, '\n', len) : NULL;
	while (end) {
		size_t le = (size_t)(end - text); /* the line is text[ls, le) */
		const char *prev = le ? memrchr(text, '\n', le) : NULL;
		size_t ls = prev ? (size_t)(prev - text) + 1 : 0;
		size_t n = le - ls;
		if (n && text[ls + n - 1] == '\r')
			n--;
		/* a line the parser refuses before it ends the request before it
		 * is no place to cut: the error it gives must come first */
		if (n > max_line || memchr(text + ls, '\0', n)) {
			end = prev;
			continue;
		}
		size_t k = 0;
		while (k < n && is_ows(text[ls + k]))
			k++;
		if (k == n)
			return le + 1;
		if (text[ls + k] == '#') {
			/* a comment ends no request; after a run of comments that
			 * follows a blank line (or the text's start, which is a cut)
			 * no request is open, so its end is a cut */
			size_t at = le + 1;
			const char *q = prev;
			for (;;) {
				if (!q)
					return at; /* the comments start the text */
				size_t qe = (size_t)(q - text);
				const char *qp = qe ? memrchr(text, '\n', qe) : NULL;
				size_t qs = qp ? (size_t)(qp - text) + 1 : 0, qn = qe - qs;
				if (qn && text[qs + qn - 1] == '\r')
					qn--;
				if (qn > max_line || memchr(text + qs, '\0', qn))
					break; /* refused by the parser: no cut across it */
				size_t j = 0;
				while (j < qn && is_ows(text[qs + j]))
					j++;
				if (j == qn)
					return at; /* a blank line before the comments */
				if (text[qs + j] != '#')
					break; /* a request's line: it is open */
				q = qp;
			}
			end = q; /* go on from the line that ended the run */
			continue;
		}
		if (text[ls] != '@' && looks_like_request(text + ls, n))
			return ls;
		end = prev;
	}
	return 0;
}

int tb_parse_targets(struct tb *b, const char *text, size_t len, const char *base_dir,
                     char *err, size_t cap)
{
	const char *src = b->t->source;
	const size_t max_line = b->lim.max_line_bytes;
	struct pending p = {0};
	p.method = malloc(max_line + 1);
	p.url = malloc(max_line + 1);
	p.hdrs = malloc((b->lim.max_headers + 1) * sizeof *p.hdrs);
	p.hdr_lines = malloc((b->lim.max_headers + 1) * sizeof *p.hdr_lines);
	int rc = 0;
	if (!p.method || !p.url || !p.hdrs || !p.hdr_lines)
		rc = tb_err(err, cap, -ENOMEM, "%s: out of memory", src);
	size_t pos = 0;
	unsigned lineno = b->line0;
	while (!rc && pos < len) {
		const char *s = text + pos;
		const char *nl = memchr(s, '\n', len - pos);
		size_t n = nl ? (size_t)(nl - s) : len - pos;
		pos += n + (nl ? 1 : 0);
		if (lineno == UINT32_MAX) {
			rc = tb_err(err, cap, PACER_ETOOBIG, "%s: too many lines", src);
			break;
		}
		lineno++;
		if (n && s[n - 1] == '\r')
			n--;
		if (n > max_line) {
			rc = tb_err(err, cap, PACER_ETOOBIG, "%s:%u: line longer than %zu bytes", src, lineno,
			            max_line);
			break;
		}
		if (memchr(s, '\0', n)) {
			rc = tb_err(err, cap, PACER_EPARSE, "%s:%u: NUL byte in a text line", src, lineno);
			break;
		}
		size_t k = 0;
		while (k < n && is_ows(s[k]))
			k++;
		if (k == n) { /* blank: ends a request */
			rc = flush(b, &p, err, cap);
			continue;
		}
		if (s[k] == '#')
			continue;
		if (!p.open) {
			rc = request_line(b, &p, s, n, lineno, err, cap);
			continue;
		}
		if (s[0] == '@') {
			if (p.has_body) {
				rc = tb_err(err, cap, PACER_EPARSE, "%s:%u: a second body line (one '@file' per request)",
				            src, lineno);
				break;
			}
			size_t pn = n - 1;
			while (pn && is_ows(s[pn]))
				pn--;
			b->why[0] = '\0';
			int brc = tb_body_file(b, base_dir, s + 1, pn, &p.body, &p.body_len);
			if (brc) {
				rc = tb_err(err, cap, brc, "%s:%u: %s", src, lineno,
				            b->why[0] ? b->why : "out of memory");
				break;
			}
			p.has_body = true;
			p.body_line = lineno;
			continue;
		}
		if (looks_like_request(s, n)) {
			rc = flush(b, &p, err, cap);
			if (!rc)
				rc = request_line(b, &p, s, n, lineno, err, cap);
			continue;
		}
		if (p.has_body) {
			rc = tb_err(err, cap, PACER_EPARSE,
			            "%s:%u: expected a blank line after the body line (headers come before it)",
			            src, lineno);
			break;
		}
		if (is_ows(s[0])) {
			rc = tb_err(err, cap, PACER_EPARSE,
			            "%s:%u: a header line may not start with whitespace (folded headers are not "
			            "supported)",
			            src, lineno);
			break;
		}
		const char *colon = memchr(s, ':', n);
		if (!colon) {
			rc = tb_err(err, cap, PACER_EPARSE,
			            "%s:%u: expected a 'Name: value' header, an '@file' body or a blank line", src,
			            lineno);
			break;
		}
		if (p.n_hdrs >= b->lim.max_headers) {
			rc = tb_err(err, cap, PACER_ETOOBIG, "%s:%u: more than %zu headers in one request", src,
			            lineno, b->lim.max_headers);
			break;
		}
		p.hdr_lines[p.n_hdrs] = lineno;
		p.hdrs[p.n_hdrs++] = (struct tb_hdr){s, (size_t)(colon - s), colon + 1,
		                                     n - (size_t)(colon - s) - 1};
	}
	if (!rc)
		rc = flush(b, &p, err, cap);
	free(p.method);
	free(p.url);
	free(p.hdrs);
	free(p.hdr_lines);
	return rc;
}
