/* pacer — incremental HTTP/1.1 response parser. See h1.h for the choices
 * made where RFC 9112 leaves room. */
#include "http/h1.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "util/err.h"

static const char status_prefix[] = "HTTP/1.";
#define STATUS_PREFIX_LEN (sizeof status_prefix - 1)

/* tchar per RFC 9110 §5.6.2 */
static inline bool is_tchar(unsigned char c)
{
	unsigned char l = c | 0x20;
	if (l >= 'a' && l <= 'z')
		return true;
	if (c >= '0' && c <= '9')
		return true;
	switch (c) {
	case '!': case '#': case '$': case '%': case '&': case '\'': case '*':
	case '+': case '-': case '.': case '^': case '_': case '`': case '|':
	case '~':
		return true;
	default:
		return false;
	}
}

/* field-vchar / SP / HTAB / obs-text: everything but CTLs other than HTAB */
static inline bool is_value_char(unsigned char c)
{
	return c >= 0x20 ? c != 0x7f : c == '\t';
}

static inline bool is_ows(char c) { return c == ' ' || c == '\t'; }

static inline int hex_value(unsigned char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	unsigned char l = c | 0x20;
	if (l >= 'a' && l <= 'f')
		return l - 'a' + 10;
	return -1;
}

/* ASCII case-insensitive equality of s[0..n) with a literal (pacer never
 * calls setlocale, so strncasecmp compares ASCII only). */
static bool ieq(const char *s, size_t n, const char *lit, size_t lit_len)
{
	return n == lit_len && strncasecmp(s, lit, n) == 0;
}
#define IEQ(s, n, lit) ieq((s), (n), (lit), sizeof(lit) - 1)

static bool values_ok(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!is_value_char((unsigned char)s[i]))
			return false;
	return true;
}

void h1_capture_free(struct h1_capture *cap)
{
	if (!cap)
		return;
	free(cap->hbuf);
	free(cap->body);
	cap->hbuf = cap->body = NULL;
	cap->hbuf_len = cap->hbuf_cap = cap->body_len = cap->body_alloc = 0;
	cap->n_fields = 0;
	cap->headers_truncated = cap->body_truncated = cap->oom = false;
}

void h1_capture_clear(struct h1_capture *cap)
{
	cap->hbuf_len = 0;
	cap->n_fields = 0;
	cap->body_len = 0;
	cap->headers_truncated = cap->body_truncated = cap->oom = false;
}

/* Grow *buf to hold `need` bytes, doubling from 1 KiB, never past `cap`. */
static bool capture_grow(char **buf, size_t *alloc, size_t need, size_t cap)
{
	if (need <= *alloc)
		return true;
	size_t n = *alloc ? *alloc : 1024;
	while (n < need)
		n *= 2;
	if (n > cap)
		n = cap;
	char *p = realloc(*buf, n);
	if (!p)
		return false;
	*buf = p;
	*alloc = n;
	return true;
}

int h1_capture_reserve(struct h1_capture *cap)
{
	if (cap->headers && !capture_grow(&cap->hbuf, &cap->hbuf_cap, 2048, H1_CAPTURE_HDR_CAP))
		return -ENOMEM;
	size_t body = cap->body_cap + 1 < 4096 ? cap->body_cap + 1 : 4096; /* + the NUL */
	if (cap->body_cap && !capture_grow(&cap->body, &cap->body_alloc, body, cap->body_cap + 1))
		return -ENOMEM;
	return 0;
}

static void capture_field(struct h1_capture *cap, const char *name, size_t name_len,
			  const char *v, size_t v_len)
{
	size_t need = cap->hbuf_len + name_len + v_len + 2;
	if (cap->n_fields >= H1_CAPTURE_MAX_FIELDS || need > H1_CAPTURE_HDR_CAP) {
		cap->headers_truncated = true;
		return;
	}
	if (!capture_grow(&cap->hbuf, &cap->hbuf_cap, need, H1_CAPTURE_HDR_CAP)) {
		cap->oom = true;
		return;
	}
	char *d = cap->hbuf + cap->hbuf_len;
	memcpy(d, name, name_len);
	d[name_len] = '\0';
	memcpy(d + name_len + 1, v, v_len);
	d[name_len + 1 + v_len] = '\0';
	cap->hbuf_len = need;
	cap->n_fields++;
}

static void capture_body(struct h1_capture *cap, const char *p, size_t n)
{
	size_t room = cap->body_cap - cap->body_len;
	if (n > room) {
		cap->body_truncated = true;
		n = room;
	}
	if (!n)
		return;
	/* one byte more for a NUL after the body: a rule's regexec gets its
	 * length (REG_STARTEND), but sanitizers' regexec interceptors read the
	 * subject as a C string */
	if (!capture_grow(&cap->body, &cap->body_alloc, cap->body_len + n + 1, cap->body_cap + 1)) {
		cap->oom = true;
		return;
	}
	memcpy(cap->body + cap->body_len, p, n);
	cap->body_len += n;
	cap->body[cap->body_len] = '\0';
}

void h1_capture_add_field(struct h1_capture *cap, const char *name, size_t name_len,
			  const char *value, size_t value_len)
{
	if (cap->headers)
		capture_field(cap, name, name_len, value, value_len);
}

void h1_capture_add_body(struct h1_capture *cap, const char *p, size_t n)
{
	if (cap->body_cap)
		capture_body(cap, p, n);
}

/* Per-response fields: everything before `head_request` in the struct plus
 * the framing flags. The line buffer is left alone. */
static void reset_response(struct h1_resp *r)
{
	if (r->cap)
		h1_capture_clear(r->cap);
	r->status = 0;
	r->version_minor = 0;
	r->keep_alive = false;
	r->chunked = false;
	r->has_content_length = false;
	r->content_length = 0;
	r->body_bytes = 0;
	r->header_bytes = 0;
	r->saw_te = false;
	r->saw_cl = false;
	r->saw_close = false;
	r->saw_keep_alive = false;
	r->remaining = 0;
	r->block_bytes = 0;
	r->line_len = 0;
	r->state = H1_STATUS;
}

void h1_resp_init(struct h1_resp *r, bool head_request)
{
	r->cap = NULL;
	reset_response(r);
	r->interim = 0;
	r->head_request = head_request;
	r->error = 0;
}

static ssize_t fail(struct h1_resp *r, int code)
{
	r->state = H1_ERROR;
	r->error = code;
	return code;
}

/* ---- status line ------------------------------------------------------ */

static int parse_status(struct h1_resp *r, const char *s, size_t n)
{
	/* "HTTP/1.x SSS" [ " " reason ] */
	if (n < 12 || memcmp(s, status_prefix, STATUS_PREFIX_LEN) != 0)
		return PACER_ESTATUS;
	if (s[7] != '0' && s[7] != '1')
		return PACER_ESTATUS;
	if (s[8] != ' ')
		return PACER_ESTATUS;
	int status = 0;
	for (size_t i = 9; i < 12; i++) {
		if (s[i] < '0' || s[i] > '9')
			return PACER_ESTATUS;
		status = status * 10 + (s[i] - '0');
	}
	if (status < 100)
		return PACER_ESTATUS;
	if (n > 12) {
		if (s[12] != ' ' || !values_ok(s + 13, n - 13))
			return PACER_ESTATUS;
	}
	if (status == 101)
		return PACER_EUNSUPPORTED;
	r->status = status;
	r->version_minor = s[7] - '0';
	return 0;
}

/* ---- header fields ---------------------------------------------------- */

/* Content-Length: 1#DIGIT list whose elements must all be equal. */
static int parse_content_length(struct h1_resp *r, const char *p, const char *end)
{
	bool any = false;
	uint64_t value = 0;

	while (p < end) {
		while (p < end && is_ows(*p))
			p++;
		if (p == end)
			break;
		if (*p == ',') { /* empty list element */
			p++;
			continue;
		}
		if (*p < '0' || *p > '9')
			return PACER_EHEADER;
		uint64_t v = 0;
		while (p < end && *p >= '0' && *p <= '9') {
			unsigned d = (unsigned)(*p - '0');
			if (v > (UINT64_MAX - d) / 10)
				return PACER_EHEADER;
			v = v * 10 + d;
			p++;
		}
		while (p < end && is_ows(*p))
			p++;
		if (p < end) {
			if (*p != ',')
				return PACER_EHEADER;
			p++;
		}
		if (any && v != value)
			return PACER_EHEADER;
		value = v;
		any = true;
	}
	if (!any)
		return PACER_EHEADER;
	if (r->saw_cl && r->content_length != value)
		return PACER_EHEADER;
	r->saw_cl = true;
	r->has_content_length = true;
	r->content_length = value;
	return 0;
}

/* Transfer-Encoding: 1#transfer-coding; only whether the last one is
 * "chunked" matters. A later field continues the list, so it decides. */
static int parse_transfer_encoding(struct h1_resp *r, const char *p, const char *end)
{
	bool any = false, last_chunked = false;

	while (p < end) {
		while (p < end && is_ows(*p))
			p++;
		if (p == end)
			break;
		if (*p == ',') {
			p++;
			continue;
		}
		const char *tok = p;
		while (p < end && is_tchar((unsigned char)*p))
			p++;
		if (p == tok)
			return PACER_EHEADER;
		last_chunked = IEQ(tok, (size_t)(p - tok), "chunked");
		any = true;
		/* parameters (";q=1", rare) up to the next comma */
		const char *comma = memchr(p, ',', (size_t)(end - p));
		p = comma ? comma + 1 : end;
	}
	if (!any)
		return PACER_EHEADER;
	r->saw_te = true;
	r->chunked = last_chunked;
	return 0;
}

/* Connection: 1#token; unknown tokens are ignored. */
static void parse_connection(struct h1_resp *r, const char *p, const char *end)
{
	while (p < end) {
		while (p < end && (is_ows(*p) || *p == ','))
			p++;
		const char *tok = p;
		while (p < end && *p != ',' && !is_ows(*p))
			p++;
		size_t n = (size_t)(p - tok);
		if (IEQ(tok, n, "close"))
			r->saw_close = true;
		else if (IEQ(tok, n, "keep-alive"))
			r->saw_keep_alive = true;
	}
}

/* One non-empty field line (header or trailer). */
static int parse_field(struct h1_resp *r, const char *s, size_t n, bool trailer)
{
	size_t i = 0;
	while (i < n && is_tchar((unsigned char)s[i]))
		i++;
	/* empty name, obs-fold (leading SP/HTAB), space before ':' ... */
	if (i == 0 || i == n || s[i] != ':')
		return PACER_EHEADER;
	size_t name_len = i;
	const char *v = s + i + 1, *end = s + n;
	while (v < end && is_ows(*v))
		v++;
	while (end > v && is_ows(end[-1]))
		end--;
	if (!values_ok(v, (size_t)(end - v)))
		return PACER_EHEADER;
	if (trailer)
		return 0; /* framing fields in trailers mean nothing */
	if (r->cap && r->cap->headers)
		capture_field(r->cap, s, name_len, v, (size_t)(end - v));

	switch (name_len) {
	case 10:
		if (IEQ(s, name_len, "connection"))
			parse_connection(r, v, end);
		break;
	case 14:
		if (IEQ(s, name_len, "content-length"))
			return parse_content_length(r, v, end);
		break;
	case 17:
		if (IEQ(s, name_len, "transfer-encoding"))
			return parse_transfer_encoding(r, v, end);
		break;
	default:
		break;
	}
	return 0;
}

/* The blank line after the headers: decide framing, or skip a 1xx. */
static void end_of_headers(struct h1_resp *r)
{
	if (r->status < 200) { /* interim (101 was refused earlier) */
		uint32_t interim = r->interim;
		reset_response(r);
		r->interim = interim == UINT32_MAX ? interim : interim + 1;
		return;
	}
	r->header_bytes = r->block_bytes;
	if (r->version_minor >= 1)
		r->keep_alive = !r->saw_close;
	else
		r->keep_alive = r->saw_keep_alive && !r->saw_close;
	if (r->saw_te && (r->saw_cl || r->version_minor == 0))
		r->keep_alive = false;

	if (r->head_request || r->status == 204 || r->status == 304) {
		r->state = H1_DONE;
	} else if (r->saw_te) {
		if (r->chunked) {
			r->state = H1_CHUNK_SIZE;
		} else {
			r->state = H1_BODY_EOF;
			r->keep_alive = false;
		}
	} else if (r->saw_cl) {
		r->remaining = r->content_length;
		r->state = r->remaining ? H1_BODY_LEN : H1_DONE;
	} else {
		r->state = H1_BODY_EOF;
		r->keep_alive = false;
	}
}

/* ---- chunked ---------------------------------------------------------- */

/* chunk-size [ BWS ";" chunk-ext ] */
static int parse_chunk_size(struct h1_resp *r, const char *s, size_t n)
{
	uint64_t size = 0;
	size_t i = 0;
	int d;
	while (i < n && (d = hex_value((unsigned char)s[i])) >= 0) {
		if (size > (UINT64_MAX >> 4))
			return PACER_ECHUNK;
		size = (size << 4) | (uint64_t)d;
		i++;
	}
	if (i == 0)
		return PACER_ECHUNK;
	while (i < n && is_ows(s[i]))
		i++;
	if (i < n && (s[i] != ';' || !values_ok(s + i + 1, n - i - 1)))
		return PACER_ECHUNK;
	if (size == 0) {
		r->state = H1_TRAILERS;
	} else {
		r->remaining = size;
		r->state = H1_CHUNK_DATA;
	}
	return 0;
}

/* ---- lines ------------------------------------------------------------ */

/* Find the end of the current line. Returns the raw length of the complete
 * line including its LF (> 0) with *line and *line_n set to its content without
 * the CR LF; 0 if the line is still incomplete (all n bytes buffered);
 * -1 if it exceeds H1_LINE_CAP. *used: bytes taken from p. */
static ssize_t take_line(struct h1_resp *r, const char *p, size_t n, const char **line,
                         size_t *line_n, size_t *used)
{
	const char *lf = memchr(p, '\n', n);
	if (!lf) {
		if (r->line_len + n > H1_LINE_CAP)
			return -1;
		memcpy(r->line + r->line_len, p, n);
		r->line_len += n;
		*used = n;
		return 0;
	}
	size_t i = (size_t)(lf - p);
	size_t total = r->line_len + i;
	if (total > H1_LINE_CAP)
		return -1;
	if (r->line_len == 0) {
		*line = p;
	} else {
		memcpy(r->line + r->line_len, p, i);
		*line = r->line;
		r->line_len = 0;
	}
	if (total > 0 && (*line)[total - 1] == '\r')
		*line_n = total - 1;
	else
		*line_n = total;
	*used = i + 1;
	return (ssize_t)(total + 1);
}

/* A complete line in one of the line states. */
static int on_line(struct h1_resp *r, const char *s, size_t n, size_t raw)
{
	if (r->state == H1_CHUNK_SIZE)
		return parse_chunk_size(r, s, n);

	r->block_bytes += raw;
	if (r->block_bytes > H1_HEADERS_CAP)
		return PACER_EHDRSIZE;
	switch (r->state) {
	case H1_STATUS: {
		int rc = parse_status(r, s, n);
		if (rc < 0)
			return rc;
		r->state = H1_HEADERS;
		return 0;
	}
	case H1_HEADERS:
		if (n == 0) {
			end_of_headers(r);
			return 0;
		}
		return parse_field(r, s, n, false);
	case H1_TRAILERS:
		if (n == 0) {
			r->state = H1_DONE;
			return 0;
		}
		return parse_field(r, s, n, true);
	default:
		return PACER_EPARSE; /* not reached */
	}
}

/* Reject a response that does not start with "HTTP/1." as soon as its first
 * bytes are seen, rather than waiting for a line end that may never come. */
static bool status_prefix_ok(const struct h1_resp *r, const char *p, size_t n)
{
	for (size_t pos = r->line_len; pos < STATUS_PREFIX_LEN && pos - r->line_len < n; pos++)
		if (p[pos - r->line_len] != status_prefix[pos])
			return false;
	return true;
}

ssize_t h1_resp_feed(struct h1_resp *r, const char *buf, size_t len)
{
	if (r->state == H1_ERROR)
		return r->error ? r->error : PACER_EPARSE;
	if (len == 0) /* buf may be NULL */
		return 0;

	const char *p = buf, *end = buf + len;
	while (p < end) {
		size_t n = (size_t)(end - p);
		switch (r->state) {
		case H1_BODY_LEN: {
			size_t take = r->remaining < n ? (size_t)r->remaining : n;
			if (r->cap && r->cap->body_cap)
				capture_body(r->cap, p, take);
			p += take;
			r->body_bytes += take;
			r->remaining -= take;
			if (r->remaining == 0)
				r->state = H1_DONE;
			break;
		}
		case H1_CHUNK_DATA: {
			size_t take = r->remaining < n ? (size_t)r->remaining : n;
			if (r->cap && r->cap->body_cap)
				capture_body(r->cap, p, take);
			p += take;
			r->body_bytes += take;
			r->remaining -= take;
			if (r->remaining == 0) {
				r->state = H1_CHUNK_CRLF;
				r->line_len = 0; /* 1 once the CR was seen */
			}
			break;
		}
		case H1_CHUNK_CRLF:
			if (*p == '\n') {
				r->line_len = 0;
				r->state = H1_CHUNK_SIZE;
			} else if (*p == '\r' && r->line_len == 0) {
				r->line_len = 1;
			} else {
				return fail(r, PACER_ECHUNK);
			}
			p++;
			break;
		case H1_BODY_EOF:
			if (r->cap && r->cap->body_cap)
				capture_body(r->cap, p, n);
			r->body_bytes += n;
			p = end;
			break;
		case H1_DONE:
			return p - buf;
		case H1_ERROR:
			return r->error; /* not reached */
		case H1_STATUS:
		case H1_HEADERS:
		case H1_CHUNK_SIZE:
		case H1_TRAILERS: {
			if (r->state == H1_STATUS && r->line_len < STATUS_PREFIX_LEN &&
			    !status_prefix_ok(r, p, n))
				return fail(r, PACER_ESTATUS);
			const char *line = NULL;
			size_t line_n = 0, used = 0;
			ssize_t raw = take_line(r, p, n, &line, &line_n, &used);
			if (raw < 0)
				return fail(r, r->state == H1_CHUNK_SIZE ? PACER_ECHUNK : PACER_EHDRSIZE);
			p += used;
			if (raw > 0) {
				int rc = on_line(r, line, line_n, (size_t)raw);
				if (rc < 0)
					return fail(r, rc);
			}
			break;
		}
		}
	}
	return p - buf;
}

int h1_resp_eof(struct h1_resp *r)
{
	switch (r->state) {
	case H1_DONE:
		return 0;
	case H1_BODY_EOF:
		r->state = H1_DONE;
		return 0;
	case H1_ERROR:
		return PACER_EEOF;
	default:
		fail(r, PACER_EEOF);
		return PACER_EEOF;
	}
}
