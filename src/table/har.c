/* pacer — HAR 1.2 import: a browser recording → a request table.
 * See table_har_import in table.h for what is kept and what is dropped.
 * An entry whose recorded Content-Length disagrees with the body the HAR
 * holds (a browser often does not keep binary uploads) is an error: the
 * table would replay a different request than the one recorded. */
#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "table/table_int.h"
#include "util/err.h"
#include "util/file.h"

struct har_ctx {
	struct tb *b;
	const struct table_har_opts *o;
	struct table_har_stats *st;
	size_t entry;
	char *err;
	size_t cap;
	struct buf {
		char *p;
		size_t cap;
	} cookie, form;           /* joined Cookie values; a form body from params */
};

static const char *type_name(const json_t *v)
{
	if (!v)
		return "nothing";
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

__attribute__((format(printf, 3, 4))) static int efail(struct har_ctx *c, int code,
                                                      const char *fmt, ...)
{
	if (c->err && c->cap) {
		int k = snprintf(c->err, c->cap, "%s: log.entries[%zu]", c->b->t->source, c->entry);
		if (k >= 0 && (size_t)k < c->cap) {
			va_list ap;
			va_start(ap, fmt);
			vsnprintf(c->err + k, c->cap - (size_t)k, fmt, ap);
			va_end(ap);
		}
		text_one_line(c->err);
	}
	return code;
}

static bool ieqn(const char *a, size_t an, const char *lit)
{
	return an == strlen(lit) && strncasecmp(a, lit, an) == 0;
}

static bool hop_by_hop(const char *n, size_t len)
{
	static const char *const names[] = {"Connection", "Keep-Alive", "TE", "Trailer",
	                                    "Transfer-Encoding", "Upgrade", "Host", "Content-Length"};
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		if (ieqn(n, len, names[i]))
			return true;
	return len >= 6 && strncasecmp(n, "Proxy-", 6) == 0;
}

/* Is name listed in a Connection header value ("close, X-Foo")? */
static bool in_connection(const char *conn, size_t clen, const char *name, size_t len)
{
	size_t i = 0;
	while (i < clen) {
		while (i < clen && (conn[i] == ',' || conn[i] == ' ' || conn[i] == '\t'))
			i++;
		size_t s = i;
		while (i < clen && conn[i] != ',' && conn[i] != ' ' && conn[i] != '\t')
			i++;
		if (i > s && i - s == len && strncasecmp(conn + s, name, len) == 0)
			return true;
	}
	return false;
}

static int grow(struct buf *b, size_t need)
{
	if (need <= b->cap)
		return 0;
	size_t nc = b->cap ? b->cap : 256;
	while (nc < need)
		nc *= 2;
	char *ns = realloc(b->p, nc);
	if (!ns)
		return -ENOMEM;
	b->p = ns;
	b->cap = nc;
	return 0;
}

static bool unreserved(unsigned char ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
	       ch == '-' || ch == '.' || ch == '_' || ch == '~';
}

/* application/x-www-form-urlencoded from postData.params into c->form. */
static int form_body(struct har_ctx *c, json_t *params, size_t *len)
{
	size_t o = 0;
	size_t i;
	json_t *pr;
	json_array_foreach(params, i, pr) {
		json_t *nm = json_object_get(pr, "name"), *vl = json_object_get(pr, "value");
		if (!json_is_string(nm) || (vl && !json_is_string(vl)))
			return efail(c, PACER_EPARSE,
			             ".request.postData.params[%zu]: expected {\"name\": string, \"value\": string}",
			             i);
		const char *parts[2] = {json_string_value(nm), vl ? json_string_value(vl) : ""};
		size_t plen[2] = {json_string_length(nm), vl ? json_string_length(vl) : 0};
		if (grow(&c->form, o + 3 * (plen[0] + plen[1]) + 4))
			return efail(c, -ENOMEM, ": out of memory");
		char *f = c->form.p;
		if (i)
			f[o++] = '&';
		for (int k = 0; k < 2; k++) {
			if (k)
				f[o++] = '=';
			for (size_t x = 0; x < plen[k]; x++) {
				unsigned char ch = (unsigned char)parts[k][x];
				if (unreserved(ch)) {
					f[o++] = (char)ch;
				} else if (ch == ' ') {
					f[o++] = '+';
				} else {
					static const char hx[] = "0123456789ABCDEF";
					f[o++] = '%';
					f[o++] = hx[ch >> 4];
					f[o++] = hx[ch & 15];
				}
			}
		}
		if (o > c->b->lim.max_body_bytes)
			return efail(c, PACER_ETOOBIG,
			             ".request.postData: body over the limit of %zu bytes (--max-body)",
			             c->b->lim.max_body_bytes);
	}
	*len = o;
	return 0;
}

/* A Content-Length header value: digits only, with optional whitespace
 * around. False for anything else (it is dropped anyway). */
static bool cl_value(json_t *v, unsigned long long *out)
{
	const char *s = json_string_value(v);
	size_t n = json_string_length(v), i = 0;
	while (i < n && (s[i] == ' ' || s[i] == '\t'))
		i++;
	if (i == n || s[i] < '0' || s[i] > '9')
		return false;
	unsigned long long x = 0;
	for (; i < n && s[i] >= '0' && s[i] <= '9'; i++) {
		if (x > (~0ull - 9) / 10)
			return false;
		x = x * 10 + (unsigned)(s[i] - '0');
	}
	while (i < n && (s[i] == ' ' || s[i] == '\t'))
		i++;
	if (i != n)
		return false;
	*out = x;
	return true;
}

/* Does url's authority match one of the --host filters? */
static bool host_wanted(const struct table_har_opts *o, const char *url)
{
	if (!o->n_hosts)
		return true;
	const char *a = strstr(url, "://");
	a = a ? a + 3 : url;
	size_t n = strcspn(a, "/?#");
	const char *at = memchr(a, '@', n);
	if (at) {
		n -= (size_t)(at + 1 - a);
		a = at + 1;
	}
	/* the host part: up to the port's ':' (after a bracketed IPv6) */
	size_t hn = n;
	const char *close = a[0] == '[' ? memchr(a, ']', n) : NULL;
	const char *colon = memchr(close ? close : a, ':', n - (size_t)((close ? close : a) - a));
	if (colon)
		hn = (size_t)(colon - a);
	for (size_t i = 0; i < o->n_hosts; i++) {
		const char *h = o->hosts[i];
		size_t l = strlen(h);
		bool with_port = h[0] == '[' ? strstr(h, "]:") != NULL : strchr(h, ':') != NULL;
		size_t cmp = with_port ? n : hn;
		if (l == cmp && strncasecmp(h, a, l) == 0)
			return true;
	}
	return false;
}

static int entry(struct har_ctx *c, json_t *e, struct tb_hdr *hdrs)
{
	struct tb *b = c->b;
	if (!json_is_object(e))
		return efail(c, PACER_EPARSE, ": expected an object, got %s", type_name(e));
	json_t *rq = json_object_get(e, "request");
	if (!json_is_object(rq))
		return efail(c, PACER_EPARSE, ".request: expected an object, got %s", type_name(rq));
	json_t *jm = json_object_get(rq, "method"), *ju = json_object_get(rq, "url");
	if (!json_is_string(jm))
		return efail(c, PACER_EPARSE, ".request.method: expected a string, got %s", type_name(jm));
	if (!json_is_string(ju))
		return efail(c, PACER_EPARSE, ".request.url: expected a string, got %s", type_name(ju));
	const char *url = json_string_value(ju);
	if (strncasecmp(url, "http://", 7) != 0 && strncasecmp(url, "https://", 8) != 0) {
		c->st->skipped++;
		return 0;
	}
	if (!host_wanted(c->o, url)) {
		c->st->other_hosts++;
		return 0;
	}
	json_t *jh = json_object_get(rq, "headers");
	if (jh && !json_is_array(jh))
		return efail(c, PACER_EPARSE, ".request.headers: expected a list, got %s", type_name(jh));
	size_t nj = jh ? json_array_size(jh) : 0;
	/* the Connection header's value names more hop-by-hop headers */
	const char *conn = NULL;
	size_t conn_len = 0;
	for (size_t i = 0; i < nj; i++) {
		json_t *h = json_array_get(jh, i);
		json_t *hn = json_object_get(h, "name"), *hv = json_object_get(h, "value");
		if (!json_is_object(h) || !json_is_string(hn) || !json_is_string(hv))
			return efail(c, PACER_EPARSE,
			             ".request.headers[%zu]: expected {\"name\": string, \"value\": string}", i);
		if (ieqn(json_string_value(hn), json_string_length(hn), "Connection")) {
			conn = json_string_value(hv);
			conn_len = json_string_length(hv);
		}
	}
	size_t nh = 0, cookies = 0, cookie_bytes = 0;
	bool has_ct = false;
	json_t *recorded_cl = NULL; /* the Content-Length the browser sent, if it was recorded */
	for (size_t i = 0; i < nj; i++) {
		json_t *h = json_array_get(jh, i);
		json_t *hn = json_object_get(h, "name"), *hv = json_object_get(h, "value");
		const char *n = json_string_value(hn);
		size_t nl = json_string_length(hn);
		if (!recorded_cl && ieqn(n, nl, "Content-Length"))
			recorded_cl = hv;
		if ((nl && n[0] == ':') || hop_by_hop(n, nl) || (conn && in_connection(conn, conn_len, n, nl))) {
			c->st->dropped_headers++;
			continue;
		}
		if (ieqn(n, nl, "Cookie")) {
			if (!c->o->keep_cookies) {
				c->st->dropped_cookies++;
				continue;
			}
			cookies++;
			cookie_bytes += json_string_length(hv) + 2;
			if (cookies > 1)
				continue; /* joined below */
		}
		if (ieqn(n, nl, "Content-Type"))
			has_ct = true;
		if (nh >= b->lim.max_headers)
			return efail(c, PACER_ETOOBIG, ".request.headers: more than %zu headers",
			             b->lim.max_headers);
		hdrs[nh++] = (struct tb_hdr){n, nl, json_string_value(hv), json_string_length(hv)};
	}
	/* HTTP/2 may split Cookie into several fields; HTTP/1.1 wants one, "; " between */
	if (cookies > 1) {
		if (grow(&c->cookie, cookie_bytes + 1))
			return efail(c, -ENOMEM, ": out of memory");
		size_t o = 0;
		for (size_t i = 0; i < nj; i++) {
			json_t *h = json_array_get(jh, i);
			json_t *hn = json_object_get(h, "name"), *hv = json_object_get(h, "value");
			if (!ieqn(json_string_value(hn), json_string_length(hn), "Cookie"))
				continue;
			if (o) {
				memcpy(c->cookie.p + o, "; ", 2);
				o += 2;
			}
			memcpy(c->cookie.p + o, json_string_value(hv), json_string_length(hv));
			o += json_string_length(hv);
		}
		for (size_t k = 0; k < nh; k++)
			if (ieqn(hdrs[k].name, hdrs[k].name_len, "Cookie")) {
				hdrs[k].value = c->cookie.p;
				hdrs[k].value_len = o;
			}
	}
	const char *body = NULL;
	size_t body_len = 0;
	bool form = false;
	json_t *pd = json_object_get(rq, "postData");
	if (pd && !json_is_null(pd)) {
		if (!json_is_object(pd))
			return efail(c, PACER_EPARSE, ".request.postData: expected an object, got %s",
			             type_name(pd));
		json_t *text = json_object_get(pd, "text"), *params = json_object_get(pd, "params");
		json_t *mime = json_object_get(pd, "mimeType");
		if (mime && !json_is_string(mime))
			return efail(c, PACER_EPARSE, ".request.postData.mimeType: expected a string, got %s",
			             type_name(mime));
		if (text && !json_is_string(text))
			return efail(c, PACER_EPARSE, ".request.postData.text: expected a string, got %s",
			             type_name(text));
		if (params && !json_is_array(params))
			return efail(c, PACER_EPARSE, ".request.postData.params: expected a list, got %s",
			             type_name(params));
		if (text) {
			body = json_string_value(text);
			body_len = json_string_length(text);
		} else if (params && json_array_size(params)) {
			int rc = form_body(c, params, &body_len);
			if (rc)
				return rc;
			body = c->form.p;
			form = true;
		}
		if (body_len && !has_ct && mime && json_string_length(mime)) {
			if (nh >= b->lim.max_headers)
				return efail(c, PACER_ETOOBIG, ".request.headers: more than %zu headers",
				             b->lim.max_headers);
			hdrs[nh++] = (struct tb_hdr){"Content-Type", 12, json_string_value(mime),
			                             json_string_length(mime)};
		}
	}
	/* A browser records the body it can see: a binary upload (a file, a
	 * Blob) is often missing or cut short in postData, while the headers
	 * still say how long it was. Replaying a different body would be a
	 * different request: refuse. (A form rebuilt from params may encode
	 * differently, so it is not compared.) */
	unsigned long long sent;
	if (!form && recorded_cl && cl_value(recorded_cl, &sent) && sent != body_len &&
	    c->o->skip_incomplete) {
		c->st->incomplete++;
		return 0;
	}
	if (!form && recorded_cl && cl_value(recorded_cl, &sent) && sent != body_len)
		return efail(c, PACER_EPARSE,
		             ".request.postData: holds %zu bytes of body but the request was sent with "
		             "Content-Length: %llu (the recording did not keep the whole body, as "
		             "browsers often do not for binary uploads; --skip-incomplete leaves such "
		             "entries out)",
		             body_len, sent);
	struct tb_req r = {.method = json_string_value(jm), .url = url, .headers = hdrs,
	                   .n_headers = nh, .body = body, .body_len = body_len,
	                   .line = (unsigned)c->entry};
	int rc = tb_add(b, &r);
	if (rc) {
		const char *where = b->why_at == TB_AT_BODY ? ".request.postData"
		                    : b->why_at == TB_AT_HEADER ? ".request.headers"
		                                                : ".request";
		return efail(c, rc, "%s: %s", where, b->why[0] ? b->why : "out of memory");
	}
	/* The import names each request "METHOD path" outright, so the JSON
	 * Lines it writes carry a "name" the user can edit (group, rename). */
	b->t->reqs[b->t->n - 1].name_given = true;
	return 0;
}

int table_har_parse(const char *text, size_t len, const char *source,
                    const struct table_har_opts *o, const struct table_limits *lim,
                    struct table **out, struct table_har_stats *stats, char *err, size_t cap)
{
	*out = NULL;
	if (err && cap)
		err[0] = '\0';
	if (!source)
		source = "(har)";
	struct table_har_opts def_o = {0};
	struct table_har_stats st = {0};
	struct tb b;
	int rc = tb_init(&b, lim, TABLE_FMT_HAR, source);
	if (rc)
		return tb_err(err, cap, rc, "%s: out of memory", source);
	if (len > b.lim.max_file_bytes) {
		tb_abort(&b);
		return tb_err(err, cap, PACER_ETOOBIG, "%s: over the limit of %zu bytes", source,
		              b.lim.max_file_bytes);
	}
	json_error_t je;
	json_t *root = json_loadb(text, len, 0, &je);
	if (!root) {
		tb_abort(&b);
		return tb_err(err, cap, PACER_EPARSE, "%s:%d: not a HAR file: invalid JSON: %s (column %d)",
		              source, je.line, je.text, je.column);
	}
	json_t *log = json_object_get(root, "log");
	json_t *entries = json_object_get(log, "entries");
	if (!json_is_object(root) || !json_is_object(log) || !json_is_array(entries)) {
		json_decref(root);
		tb_abort(&b);
		return tb_err(err, cap, PACER_EPARSE,
		              "%s: not a HAR file: expected {\"log\": {\"entries\": [...]}}", source);
	}
	struct tb_hdr *hdrs = malloc((b.lim.max_headers + 1) * sizeof *hdrs);
	struct har_ctx c = {.b = &b, .o = o ? o : &def_o, .st = &st, .err = err, .cap = cap};
	rc = hdrs ? 0 : tb_err(err, cap, -ENOMEM, "%s: out of memory", source);
	st.entries = json_array_size(entries);
	for (size_t i = 0; !rc && i < st.entries; i++) {
		c.entry = i;
		rc = entry(&c, json_array_get(entries, i), hdrs);
	}
	free(hdrs);
	free(c.cookie.p);
	free(c.form.p);
	json_decref(root);
	if (rc) {
		tb_abort(&b);
		return rc;
	}
	struct table *t = tb_finish(&b);
	if (!t)
		return tb_err(err, cap, PACER_EPARSE, "%s: no http(s) requests in %zu entries", source,
		              st.entries);
	if (stats)
		*stats = st;
	*out = t;
	return 0;
}

int table_har_import(const char *path, const struct table_har_opts *o,
                     const struct table_limits *lim, struct table **out,
                     struct table_har_stats *stats, char *err, size_t cap)
{
	*out = NULL;
	struct table_limits l;
	tb_limits(&l, lim);
	char *text = NULL;
	size_t len = 0;
	int rc = tb_read_file(path, l.max_file_bytes, &text, &len, err, cap);
	if (rc)
		return rc;
	rc = table_har_parse(text, len, file_shown(path), o, &l, out, stats, err, cap);
	free(text);
	return rc;
}
