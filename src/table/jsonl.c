/* pacer — tables as JSON Lines, read and written:
 *
 *   {"method":"POST","url":"http://h/users","header":{"Content-Type":["application/json"]},"body":"eyJhIjoxfQ=="}
 *
 * One object per line; blank lines and '#' comment lines are skipped. Keys: method and url
 * (required strings), header (an object: name → list of strings, or one
 * string), body (base64) or body_file (a path, relative to the file's
 * folder unless absolute), shape (a string shown by `pacer table show`, not
 * sent), name (the request's name in per-name figures, not sent). Anything else is an error naming the line. A url of the form
 * "unix:/PATH.sock:http://host/path" is HTTP over that Unix socket
 * (table_url_unix). */
#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "table/table_int.h"
#include "util/b64.h"
#include "util/err.h"

static const char *type_name(const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT: return "an object";
	case JSON_ARRAY: return "a list";
	case JSON_STRING: return "a string";
	case JSON_INTEGER:
	case JSON_REAL: return "a number";
	case JSON_TRUE:
	case JSON_FALSE: return "a boolean";
	case JSON_NULL: return "null";
	}
	return "something else";
}

struct line_ctx {
	struct tb *b;
	const char *base_dir;
	unsigned line;
	char *err;
	size_t cap;
	struct tb_hdr *hdrs;
	size_t n_hdrs;
	unsigned char *body;   /* decoded base64 */
	size_t body_cap;
};

#define LFAIL(c, code, ...)                                                              \
	(tb_err((c)->err, (c)->cap, (code), "%s:%u: ", (c)->b->t->source, (c)->line),     \
	 append((c), __VA_ARGS__), (code))

__attribute__((format(printf, 2, 3))) static void append(struct line_ctx *c, const char *fmt, ...)
{
	if (!c->err || !c->cap)
		return;
	size_t k = strlen(c->err);
	if (k + 1 >= c->cap)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(c->err + k, c->cap - k, fmt, ap);
	va_end(ap);
	text_one_line(c->err);
}

static int add_header(struct line_ctx *c, const char *name, const char *value, size_t vlen)
{
	struct tb *b = c->b;
	if (c->n_hdrs >= b->lim.max_headers)
		return LFAIL(c, PACER_ETOOBIG, "more than %zu headers in one request", b->lim.max_headers);
	c->hdrs[c->n_hdrs++] = (struct tb_hdr){name, strlen(name), value, vlen};
	return 0;
}

static int one(struct line_ctx *c, json_t *o)
{
	struct tb *b = c->b;
	if (!json_is_object(o))
		return LFAIL(c, PACER_EPARSE, "expected a JSON object, got %s", type_name(o));
	const char *method = NULL, *url = NULL, *shape = NULL, *rname = NULL;
	json_t *header = NULL, *body = NULL, *body_file = NULL;
	const char *key;
	json_t *v;
	json_object_foreach(o, key, v) {
		if (strcmp(key, "method") == 0 || strcmp(key, "url") == 0 || strcmp(key, "shape") == 0 ||
		    strcmp(key, "name") == 0) {
			if (!json_is_string(v))
				return LFAIL(c, PACER_EPARSE, "\"%s\": expected a string, got %s", key, type_name(v));
			*(key[0] == 'm'   ? &method
			  : key[0] == 'u' ? &url
			  : key[0] == 'n' ? &rname
			                  : &shape) = json_string_value(v);
		} else if (strcmp(key, "header") == 0) {
			header = v;
		} else if (strcmp(key, "body") == 0) {
			body = v;
		} else if (strcmp(key, "body_file") == 0) {
			body_file = v;
		} else {
			return LFAIL(c, PACER_EPARSE,
			             "unknown key \"%.40s\" (expected method, url, header, body, body_file, shape, name)",
			             key);
		}
	}
	if (!method)
		return LFAIL(c, PACER_EPARSE, "missing \"method\"");
	if (!url)
		return LFAIL(c, PACER_EPARSE, "missing \"url\"");
	if (body && body_file)
		return LFAIL(c, PACER_EPARSE, "both \"body\" and \"body_file\" (give one)");
	c->n_hdrs = 0;
	if (header) {
		if (!json_is_object(header))
			return LFAIL(c, PACER_EPARSE, "\"header\": expected an object of name: [values], got %s",
			             type_name(header));
		const char *name;
		json_t *vals;
		json_object_foreach(header, name, vals) {
			int rc;
			if (json_is_string(vals)) {
				rc = add_header(c, name, json_string_value(vals), json_string_length(vals));
				if (rc)
					return rc;
				continue;
			}
			if (!json_is_array(vals))
				return LFAIL(c, PACER_EPARSE, "\"header\": \"%.40s\": expected a list of strings, got %s",
				             name, type_name(vals));
			size_t i;
			json_t *x;
			json_array_foreach(vals, i, x) {
				if (!json_is_string(x))
					return LFAIL(c, PACER_EPARSE,
					             "\"header\": \"%.40s\"[%zu]: expected a string, got %s", name, i,
					             type_name(x));
				if ((rc = add_header(c, name, json_string_value(x), json_string_length(x))))
					return rc;
			}
		}
	}
	const char *bp = NULL;
	size_t blen = 0;
	bool in_arena = false;
	if (body) {
		if (!json_is_string(body))
			return LFAIL(c, PACER_EPARSE, "\"body\": expected a base64 string, got %s",
			             type_name(body));
		size_t n = json_string_length(body);
		if (n / 4 * 3 > b->lim.max_body_bytes + 2)
			return LFAIL(c, PACER_ETOOBIG, "body is over the limit of %zu bytes (--max-body)",
			             b->lim.max_body_bytes);
		if (n / 4 * 3 + 1 > c->body_cap) {
			unsigned char *nb = realloc(c->body, n / 4 * 3 + 1);
			if (!nb)
				return LFAIL(c, -ENOMEM, "out of memory");
			c->body = nb;
			c->body_cap = n / 4 * 3 + 1;
		}
		if (b64_decode(json_string_value(body), n, c->body, &blen))
			return LFAIL(c, PACER_EPARSE, "\"body\": not base64 (RFC 4648, with '=' padding)");
		bp = (const char *)c->body;
	} else if (body_file) {
		if (!json_is_string(body_file))
			return LFAIL(c, PACER_EPARSE, "\"body_file\": expected a string, got %s",
			             type_name(body_file));
		b->why[0] = '\0';
		int rc = tb_body_file(b, c->base_dir, json_string_value(body_file),
		                      json_string_length(body_file), &bp, &blen);
		if (rc)
			return LFAIL(c, rc, "%s", b->why[0] ? b->why : "out of memory");
		in_arena = true;
	}
	struct tb_req r = {.method = method, .url = url, .headers = c->hdrs, .n_headers = c->n_hdrs,
	                   .body = bp, .body_len = blen, .body_in_arena = in_arena, .shape = shape,
	                   .name = rname, .line = c->line};
	int rc = tb_add(b, &r);
	if (rc)
		return LFAIL(c, rc, "%s", b->why[0] ? b->why : "out of memory");
	return 0;
}

int tb_parse_jsonl(struct tb *b, const char *text, size_t len, const char *base_dir,
                   char *err, size_t cap)
{
	const char *src = b->t->source;
	/* a line carries a base64 body: 4/3 of max_body on top of max_line */
	size_t max_line = b->lim.max_line_bytes + b->lim.max_body_bytes / 3 * 4 + 4;
	struct line_ctx c = {.b = b, .base_dir = base_dir, .err = err, .cap = cap, .line = b->line0};
	c.hdrs = calloc(b->lim.max_headers + 1, sizeof *c.hdrs);
	if (!c.hdrs)
		return tb_err(err, cap, -ENOMEM, "%s: out of memory", src);
	int rc = 0;
	size_t pos = 0;
	while (!rc && pos < len) {
		const char *s = text + pos;
		const char *nl = memchr(s, '\n', len - pos);
		size_t n = nl ? (size_t)(nl - s) : len - pos;
		pos += n + (nl ? 1 : 0);
		if (c.line == UINT32_MAX) {
			rc = tb_err(err, cap, PACER_ETOOBIG, "%s: too many lines", src);
			break;
		}
		c.line++;
		if (n > max_line) {
			rc = LFAIL(&c, PACER_ETOOBIG, "line longer than %zu bytes", max_line);
			break;
		}
		size_t k = 0;
		while (k < n && (s[k] == ' ' || s[k] == '\t' || s[k] == '\r'))
			k++;
		if (k == n || s[k] == '#')
			continue;
		json_error_t je;
		json_t *o = json_loadb(s, n, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &je);
		if (!o) {
			rc = LFAIL(&c, PACER_EPARSE, "invalid JSON: %s (column %d)", je.text, je.column);
			break;
		}
		rc = one(&c, o);
		json_decref(o);
	}
	free(c.hdrs);
	free(c.body);
	return rc;
}

/* ---- writing -------------------------------------------------------- */

static json_t *header_object(const struct table_req *q)
{
	json_t *h = json_object();
	if (!h)
		return NULL;
	for (size_t i = 0; i < q->n_headers; i++) {
		const char *line = q->headers[i];
		const char *colon = strchr(line, ':');
		size_t nl = (size_t)(colon - line);
		char name[256];
		char *heap = NULL;
		char *nm = name;
		if (nl >= sizeof name) {
			nm = heap = malloc(nl + 1);
			if (!heap) {
				json_decref(h);
				return NULL;
			}
		}
		memcpy(nm, line, nl);
		nm[nl] = '\0';
		const char *v = colon + 1;
		while (*v == ' ')
			v++;
		json_t *val = json_string(v);
		json_t *list = json_object_get(h, nm);
		int bad = !val;
		if (!bad && !list) {
			list = json_array();
			bad = !list || json_object_set_new(h, nm, list) != 0;
		}
		if (!bad)
			bad = json_array_append_new(list, val) != 0;
		else
			json_decref(val);
		free(heap);
		if (bad) {
			json_decref(h);
			return NULL;
		}
	}
	return h;
}

int table_write_jsonl(FILE *f, const struct table *t, char *err, size_t cap)
{
	char *b64 = NULL;
	size_t b64_cap = 0;
	int rc = 0;
	for (size_t i = 0; !rc && i < t->n; i++) {
		const struct table_req *q = &t->reqs[i];
		json_t *o = json_object();
		json_t *h = q->n_headers ? header_object(q) : NULL;
		if (!o || (q->n_headers && !h)) {
			json_decref(o);
			rc = tb_err(err, cap, PACER_EUNSUPPORTED,
			            "%s:%u: a header is not UTF-8 text, which JSON cannot carry", t->source,
			            q->line);
			break;
		}
		int bad = json_object_set_new(o, "method", json_string(q->method)) |
		          json_object_set_new(o, "url", json_string(q->url));
		if (h)
			bad |= json_object_set_new(o, "header", h);
		if (q->body_len) {
			size_t need = B64_ENCODED_LEN(q->body_len) + 1;
			if (need > b64_cap) {
				char *nb = realloc(b64, need);
				if (!nb) {
					json_decref(o);
					rc = tb_err(err, cap, -ENOMEM, "out of memory");
					break;
				}
				b64 = nb;
				b64_cap = need;
			}
			size_t n = b64_encode((const unsigned char *)q->body, q->body_len, b64);
			bad |= json_object_set_new(o, "body", json_stringn(b64, n));
		}
		if (q->shape)
			bad |= json_object_set_new(o, "shape", json_string(q->shape));
		if (q->name_given)
			bad |= json_object_set_new(o, "name", json_string(q->name));
		char *s = bad ? NULL : json_dumps(o, JSON_COMPACT);
		json_decref(o);
		if (!s) {
			rc = tb_err(err, cap, -ENOMEM, "out of memory");
			break;
		}
		if (fputs(s, f) == EOF || fputc('\n', f) == EOF)
			rc = tb_err(err, cap, -EIO, "write error");
		free(s);
	}
	free(b64);
	if (!rc && fflush(f) != 0)
		rc = tb_err(err, cap, -EIO, "write error");
	return rc;
}
