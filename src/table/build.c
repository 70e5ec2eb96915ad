/* pacer — request tables: the builder every loader shares (table_int.h):
 * validating, normalising and adding requests one by one, their hosts, and
 * unix: URLs. No file I/O here (body files are read by load.c). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "http/req.h"
#include "http/url.h"
#include "table/table_int.h"
#include "util/err.h"

/* ---- messages ------------------------------------------------------- */

int tb_why(struct tb *b, int code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(b->why, sizeof b->why, fmt, ap);
	va_end(ap);
	text_one_line(b->why);
	return code;
}

int tb_err(char *err, size_t cap, int code, const char *fmt, ...)
{
	if (err && cap) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(err, cap, fmt, ap);
		va_end(ap);
		text_one_line(err);
	}
	return code;
}

/* ---- map ------------------------------------------------------------ */

static uint64_t fnv1a(const char *s, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ull;
	for (size_t i = 0; i < n; i++) {
		h ^= (unsigned char)s[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

struct tb_map_slot *tb_map_find(struct tb *b, struct tb_map *m, const char *key, size_t klen,
                                bool insert, size_t val)
{
	uint64_t h = fnv1a(key, klen);
	if (m->cap) {
		for (size_t i = h & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
			struct tb_map_slot *s = &m->slots[i];
			if (!s->key)
				break;
			if (s->hash == h && s->klen == klen && memcmp(s->key, key, klen) == 0)
				return s;
		}
	}
	if (!insert)
		return NULL;
	if ((m->n + 1) * 2 > m->cap) {
		size_t nc = m->cap ? m->cap * 2 : 16;
		struct tb_map_slot *ns = calloc(nc, sizeof *ns);
		if (!ns)
			return NULL;
		for (size_t i = 0; i < m->cap; i++) {
			if (!m->slots[i].key)
				continue;
			size_t j = m->slots[i].hash & (nc - 1);
			while (ns[j].key)
				j = (j + 1) & (nc - 1);
			ns[j] = m->slots[i];
		}
		free(m->slots);
		m->slots = ns;
		m->cap = nc;
	}
	char *k = tb_strndup(b, key, klen);
	if (!k)
		return NULL;
	size_t i = h & (m->cap - 1);
	while (m->slots[i].key)
		i = (i + 1) & (m->cap - 1);
	m->slots[i] = (struct tb_map_slot){k, klen, h, val};
	m->n++;
	return &m->slots[i];
}

/* ---- builder -------------------------------------------------------- */

void tb_limits(struct table_limits *out, const struct table_limits *lim)
{
	struct table_limits l = {0};
	if (lim)
		l = *lim;
	if (!l.max_requests)
		l.max_requests = TABLE_DEFAULT_MAX_REQUESTS;
	if (!l.max_body_bytes)
		l.max_body_bytes = TABLE_DEFAULT_MAX_BODY;
	if (!l.max_line_bytes)
		l.max_line_bytes = TABLE_DEFAULT_MAX_LINE;
	if (!l.max_file_bytes)
		l.max_file_bytes = TABLE_DEFAULT_MAX_FILE;
	if (!l.max_headers)
		l.max_headers = TABLE_DEFAULT_MAX_HEADERS;
	if (!l.max_total_bytes)
		l.max_total_bytes = TABLE_DEFAULT_MAX_TOTAL;
	*out = l;
}

void *tb_alloc(struct tb *b, size_t n) { return ta_alloc(b->t->priv, n); }

char *tb_strndup(struct tb *b, const char *s, size_t n) { return ta_strndup(b->t->priv, s, n); }

int tb_init(struct tb *b, const struct table_limits *lim, enum table_format fmt,
            const char *source)
{
	memset(b, 0, sizeof *b);
	tb_limits(&b->lim, lim);
	b->t = calloc(1, sizeof *b->t);
	struct ta *a = calloc(1, sizeof *a);
	b->u = malloc(sizeof *b->u);
	b->line_cap = b->lim.max_line_bytes + 4;
	b->line = malloc(b->line_cap);
	if (!b->t || !a || !b->u || !b->line) {
		free(a);
		tb_abort(b);
		return -ENOMEM;
	}
	b->t->priv = a;
	b->t->format = fmt;
	b->t->source = tb_strndup(b, source ? source : "", source ? strlen(source) : 0);
	if (!b->t->source) {
		tb_abort(b);
		return -ENOMEM;
	}
	return 0;
}

static void tb_release(struct tb *b)
{
	free(b->hosts.slots);
	free(b->bodies.slots);
	free(b->cached);
	free(b->u);
	free(b->line);
	free(b->hdr_out);
	b->hosts.slots = b->bodies.slots = NULL;
	b->cached = NULL;
	b->u = NULL;
	b->line = NULL;
	b->hdr_out = NULL;
}

void tb_abort(struct tb *b)
{
	tb_release(b);
	table_free(b->t);
	b->t = NULL;
}

struct table *tb_finish(struct tb *b)
{
	if (b->t && b->t->n == 0) {
		tb_why(b, PACER_EPARSE, "no requests");
		tb_abort(b);
		return NULL;
	}
	struct table *t = b->t;
	b->t = NULL;
	tb_release(b);
	return t;
}

/* Request headers that may appear at most once (RFC 9110 singletons). */
static const char *const singletons[] = {
	"Host", "Content-Length", "Content-Type", "User-Agent", "Authorization",
	"Proxy-Authorization", "From", "Referer", "Max-Forwards", "If-Modified-Since",
	"If-Unmodified-Since",
};

static bool is_singleton(const char *name, size_t n)
{
	for (size_t i = 0; i < sizeof singletons / sizeof singletons[0]; i++)
		if (tb_ieq(name, n, singletons[i]))
			return true;
	return false;
}

static bool is_ows(char c) { return c == ' ' || c == '\t'; }

/* ---- unix: URLs ----------------------------------------------------- */

int table_url_unix(const char *url, const char **path, size_t *path_len, const char **http,
                   const char **why)
{
	*path = NULL;
	*path_len = 0;
	*http = url;
	if (why)
		*why = NULL;
	if (strncasecmp(url, "unix:", 5) != 0)
		return 0;
	const char *p = url + 5;
	const char *end = NULL;
	for (const char *c = p; *c; c++)
		if (*c == ':' && (strncasecmp(c + 1, "http://", 7) == 0 ||
		                  strncasecmp(c + 1, "https://", 8) == 0)) {
			end = c;
			break;
		}
	const char *phrase = NULL;
	int rc = PACER_EURL;
	if (!end)
		phrase = "a unix: URL is unix:/PATH/TO.sock:http://HOST/PATH (no ':http://' or "
		         "':https://' after the socket path)";
	else if (end == p)
		phrase = "empty socket path after 'unix:'";
	else if (*p != '/')
		phrase = "the socket path after 'unix:' must be absolute (start with '/')";
	else if ((size_t)(end - p) > TABLE_UNIX_PATH_MAX) {
		phrase = "socket path longer than 107 bytes (the limit of a Unix socket address)";
		rc = PACER_ETOOBIG;
	} else {
		for (const char *c = p; c < end && !phrase; c++)
			if ((unsigned char)*c <= 0x20 || (unsigned char)*c >= 0x7f)
				phrase = "socket path has a space, control character or non-ASCII byte";
	}
	if (phrase) {
		if (why)
			*why = phrase;
		*http = url;
		return rc;
	}
	*path = p;
	*path_len = (size_t)(end - p);
	*http = end + 1;
	return 0;
}

/* A host's key: "<s|p><port>|<host, lowercased>" and, for a unix: URL,
 * "|<socket path>" (a host has no '|'). Returns its length. */
static size_t host_key(char *key, size_t cap, bool tls, unsigned port, const char *host,
                       size_t hl, const char *upath, size_t upath_len)
{
	int k = snprintf(key, cap, "%c%u|", tls ? 's' : 'p', port);
	for (size_t i = 0; i < hl && (size_t)k + 1 < cap; i++) {
		char c = host[i];
		key[k++] = (c >= 'A' && c <= 'Z') ? (char)(c - 'A' + 'a') : c;
	}
	if (upath && (size_t)k + 1 + upath_len <= cap) {
		key[k++] = '|';
		memcpy(key + k, upath, upath_len); /* upath_len <= TABLE_UNIX_PATH_MAX */
		k += (int)upath_len;
	}
	return (size_t)k;
}

/* Append host h (its strings copied into the arena) under key. */
static int insert_host(struct tb *b, const char *key, size_t klen, const struct table_host *h,
                       size_t hl, size_t upath_len)
{
	struct table *t = b->t;
	if (t->n_hosts == b->host_cap) {
		size_t nc = b->host_cap ? b->host_cap * 2 : 4;
		struct table_host *nh = realloc(t->hosts, nc * sizeof *nh);
		if (!nh)
			return -ENOMEM;
		t->hosts = nh;
		b->host_cap = nc;
	}
	const char *name = tb_strndup(b, h->name, hl);
	const char *up = h->unix_path ? tb_strndup(b, h->unix_path, upath_len) : NULL;
	if (!name || (h->unix_path && !up) || !tb_map_find(b, &b->hosts, key, klen, true, t->n_hosts))
		return -ENOMEM;
	t->hosts[t->n_hosts] = *h;
	t->hosts[t->n_hosts].name = name;
	t->hosts[t->n_hosts].unix_path = up;
	t->n_hosts++;
	b->total += hl + upath_len + sizeof(struct table_host);
	return 0;
}

/* The host of the URL in b->u (over the socket upath when not NULL). */
static int add_host(struct tb *b, const char *upath, size_t upath_len, size_t *idx)
{
	const struct url *u = b->u;
	char key[URL_HOST_CAP + TABLE_UNIX_PATH_MAX + 24];
	size_t hl = strlen(u->host);
	size_t k = host_key(key, sizeof key, u->tls, u->port, u->host, hl, upath, upath_len);
	struct tb_map_slot *s = tb_map_find(b, &b->hosts, key, k, false, 0);
	if (s) {
		*idx = s->val;
		return 0;
	}
	/* upath is not NUL-terminated: insert_host copies upath_len bytes of it */
	struct table_host h = {u->host, u->port, u->tls, u->host_is_ipv6, 0, upath};
	*idx = b->t->n_hosts;
	return insert_host(b, key, k, &h, hl, upath_len);
}

int tb_seed_hosts(struct tb *b, const struct table *prev)
{
	for (size_t i = 0; prev && i < prev->n_hosts; i++) {
		const struct table_host *h = &prev->hosts[i];
		char key[URL_HOST_CAP + TABLE_UNIX_PATH_MAX + 24];
		size_t hl = strlen(h->name), ul = h->unix_path ? strlen(h->unix_path) : 0;
		size_t k = host_key(key, sizeof key, h->tls, h->port, h->name, hl, h->unix_path, ul);
		int rc = insert_host(b, key, k, h, hl, ul);
		if (rc)
			return rc;
	}
	return 0;
}

/* A request name from the source: 1..TABLE_NAME_MAX bytes without control
 * characters (it is printed in terminal tables and reports). 0 or
 * PACER_EPARSE / PACER_ETOOBIG with b->why set. */
static int check_name(struct tb *b, const char *name)
{
	size_t n = strlen(name);
	if (n == 0)
		return tb_why(b, PACER_EPARSE, "empty request name");
	if (n > TABLE_NAME_MAX)
		return tb_why(b, PACER_ETOOBIG, "request name '%.40s...' is longer than %d bytes", name,
		              TABLE_NAME_MAX);
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)name[i];
		if (c < 0x20 || c == 0x7f)
			return tb_why(b, PACER_EPARSE,
			              "request name '%.40s' has a control character (byte 0x%02x at %zu)",
			              name, c, i);
	}
	return 0;
}

/* The name of a request that was given none: "METHOD shape" when its shape
 * is known, else "METHOD path" (its target without the query), control
 * characters (a JSONL shape may hold them) as '?' since names are printed.
 * In the arena; NULL on ENOMEM. */
static const char *derive_name(struct tb *b, const struct table_req *q)
{
	const char *what = q->shape;
	size_t wn = what ? strlen(what) : 0;
	if (!what) {
		what = q->target;
		wn = strcspn(q->target, "?");
	}
	size_t mn = strlen(q->method);
	char *s = tb_alloc(b, mn + 1 + wn + 1);
	if (!s)
		return NULL;
	memcpy(s, q->method, mn);
	s[mn] = ' ';
	for (size_t i = 0; i < wn; i++) {
		unsigned char ch = (unsigned char)what[i];
		s[mn + 1 + i] = ch < 0x20 || ch == 0x7f ? '?' : (char)ch;
	}
	s[mn + 1 + wn] = '\0';
	return s;
}

int tb_add(struct tb *b, const struct tb_req *r)
{
	struct table *t = b->t;
	const struct table_limits *l = &b->lim;
	b->why[0] = '\0';
	b->why_at = TB_AT_REQ;
	if (t->n >= l->max_requests)
		return tb_why(b, PACER_ETOOBIG, "more than %zu requests (the limit)", l->max_requests);
	if (req_method_check(r->method))
		return tb_why(b, PACER_EPARSE, "bad method '%.40s': expected a token such as GET or POST",
		              r->method);
	const char *uw = NULL, *upath = NULL, *http = NULL;
	size_t upath_len = 0;
	int rc = table_url_unix(r->url, &upath, &upath_len, &http, &uw);
	if (!rc)
		rc = url_parse(b->u, http, &uw);
	if (rc)
		return tb_why(b, rc, "bad URL '%.100s%s': %s", r->url, strlen(r->url) > 100 ? "..." : "",
		              uw);
	if (r->body_len > l->max_body_bytes) {
		b->why_at = TB_AT_BODY;
		return tb_why(b, PACER_ETOOBIG, "body of %zu bytes is over the limit of %zu bytes (--max-body)",
		              r->body_len, l->max_body_bytes);
	}
	if (r->n_headers > l->max_headers)
		return tb_why(b, PACER_ETOOBIG, "%zu headers, more than the limit of %zu", r->n_headers,
		              l->max_headers);
	if (r->name && (rc = check_name(b, r->name)))
		return rc;

	/* normalise each header to "Name: value" and check it */
	if (r->n_headers > b->hdr_cap) {
		char **nh = realloc(b->hdr_out, r->n_headers * sizeof *nh);
		if (!nh)
			return -ENOMEM;
		b->hdr_out = nh;
		b->hdr_cap = r->n_headers;
	}
	uint64_t bytes = strlen(r->method) + strlen(r->url) + sizeof(struct table_req) + 2;
	for (size_t i = 0; i < r->n_headers; i++) {
		const struct tb_hdr *h = &r->headers[i];
		b->why_at = TB_AT_HEADER;
		b->why_header = i;
		const char *v = h->value;
		size_t vn = h->value_len;
		while (vn && is_ows(*v))
			v++, vn--;
		while (vn && is_ows(v[vn - 1]))
			vn--;
		int nn = h->name_len > 60 ? 60 : (int)h->name_len;
		const char *ell = h->name_len > 60 ? "..." : "";
		if (h->name_len + vn + 2 > l->max_line_bytes)
			return tb_why(b, PACER_ETOOBIG, "header '%.*s%s' is longer than %zu bytes", nn, h->name,
			              ell, l->max_line_bytes);
		if (memchr(h->name, ':', h->name_len) || memchr(h->name, '\0', h->name_len) ||
		    h->name_len == 0)
			return tb_why(b, PACER_EHEADER, "header name '%.*s%s' is not a token", nn, h->name, ell);
		if (memchr(v, '\0', vn))
			return tb_why(b, PACER_EHEADER, "header '%.*s%s': header value has a control character",
			              nn, h->name, ell);
		char *line = b->line;
		memcpy(line, h->name, h->name_len);
		memcpy(line + h->name_len, ": ", 2);
		memcpy(line + h->name_len + 2, v, vn);
		line[h->name_len + 2 + vn] = '\0';
		const char *hw = NULL;
		if ((rc = req_header_check(line, &hw)))
			return tb_why(b, rc, "header '%.*s%s': %s", nn, h->name, ell, hw);
		if (tb_ieq(h->name, h->name_len, "Transfer-Encoding"))
			return tb_why(b, PACER_EHEADER,
			              "header 'Transfer-Encoding' is not supported (pacer sends bodies with "
			              "Content-Length)");
		if (tb_ieq(h->name, h->name_len, "Content-Length")) {
			size_t cl = 0;
			bool ok = vn > 0 && vn <= 19;
			for (size_t k = 0; ok && k < vn; k++) {
				if (v[k] < '0' || v[k] > '9')
					ok = false;
				else
					cl = cl * 10 + (size_t)(v[k] - '0');
			}
			if (!ok || cl != r->body_len)
				return tb_why(b, PACER_EHEADER,
				              "header 'Content-Length: %.*s' does not match the body (%zu bytes)",
				              vn > 20 ? 20 : (int)vn, v, r->body_len);
		}
		if (is_singleton(h->name, h->name_len))
			for (size_t k = 0; k < i; k++)
				if (h->name_len == r->headers[k].name_len &&
				    strncasecmp(h->name, r->headers[k].name, h->name_len) == 0)
					return tb_why(b, PACER_EHEADER, "duplicate header '%.*s' (it may appear once)", nn,
					              h->name);
		b->hdr_out[i] = tb_strndup(b, line, h->name_len + 2 + vn);
		if (!b->hdr_out[i])
			return -ENOMEM;
		bytes += h->name_len + vn + 2 + sizeof(char *) + 1;
	}
	b->why_at = TB_AT_REQ;
	if (!r->body_in_arena)
		bytes += r->body_len;
	if (b->total + bytes > l->max_total_bytes)
		return tb_why(b, PACER_ETOOBIG, "the table is over the limit of %llu bytes in all",
		              (unsigned long long)l->max_total_bytes);

	size_t host;
	if ((rc = add_host(b, upath, upath_len, &host)))
		return rc;
	if (t->n == b->cap) {
		size_t nc = b->cap ? b->cap * 2 : 64;
		struct table_req *nr = realloc(t->reqs, nc * sizeof *nr);
		if (!nr)
			return -ENOMEM;
		t->reqs = nr;
		b->cap = nc;
	}
	struct table_req *q = &t->reqs[t->n];
	memset(q, 0, sizeof *q);
	q->method = tb_strndup(b, r->method, strlen(r->method));
	q->url = tb_strndup(b, r->url, strlen(r->url));
	q->target = tb_strndup(b, b->u->target, strlen(b->u->target));
	q->shape = r->shape ? tb_strndup(b, r->shape, strlen(r->shape)) : NULL;
	q->name = r->name ? tb_strndup(b, r->name, strlen(r->name)) : derive_name(b, q);
	q->name_given = r->name != NULL;
	const char **hdrs = r->n_headers ? tb_alloc(b, r->n_headers * sizeof *hdrs) : NULL;
	if (!q->method || !q->url || !q->target || (r->shape && !q->shape) || !q->name ||
	    (r->n_headers && !hdrs))
		return -ENOMEM;
	bytes += strlen(q->name) + 1;
	/* group repeats of a name (exact spelling) at the first one's place,
	 * keeping their order: the form JSON Lines can carry unchanged */
	size_t o = 0;
	for (size_t i = 0; i < r->n_headers; i++) {
		if (!b->hdr_out[i])
			continue;
		size_t ni = r->headers[i].name_len;
		for (size_t k = i; k < r->n_headers; k++) {
			if (!b->hdr_out[k] || r->headers[k].name_len != ni ||
			    memcmp(r->headers[k].name, r->headers[i].name, ni) != 0)
				continue;
			hdrs[o++] = b->hdr_out[k];
			if (k != i)
				b->hdr_out[k] = NULL;
		}
		b->hdr_out[i] = NULL;
	}
	q->headers = hdrs;
	q->n_headers = o;
	if (r->body_len) {
		if (r->body_in_arena) {
			q->body = r->body;
		} else {
			char *body = tb_alloc(b, r->body_len);
			if (!body)
				return -ENOMEM;
			memcpy(body, r->body, r->body_len);
			q->body = body;
		}
		q->body_len = r->body_len;
	}
	q->host = host;
	q->line = r->line;
	t->hosts[host].n_reqs++;
	b->total += bytes;
	t->n++;
	return 0;
}
