/* pacer — request tables: the builder every loader shares, loading, bodies
 * folders, encoding and the hash. See table.h and table_int.h. */
#include "table/table.h"

#include <dirent.h>
#include <errno.h>
#include <openssl/evp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "http/req.h"
#include "http/url.h"
#include "table/table_int.h"
#include "util/err.h"
#include "util/file.h"

/* ---- arena ---------------------------------------------------------- */

#define CHUNK_BYTES (1u << 20)
#define ALIGN 16u

struct ta_chunk {
	struct ta_chunk *next;
	size_t used, cap;
	_Alignas(16) unsigned char data[];
};

void *ta_alloc(struct ta *a, size_t n)
{
	n = (n + ALIGN - 1) & ~(size_t)(ALIGN - 1);
	if (n == 0)
		n = ALIGN;
	struct ta_chunk *c = a->head;
	if (!c || c->cap - c->used < n) {
		/* chunks grow from 4 KiB to CHUNK_BYTES: small tables stay small */
		size_t grow = c ? (c->cap * 2 > CHUNK_BYTES ? CHUNK_BYTES : c->cap * 2) : 4096;
		size_t cap = n > grow / 4 ? n : grow;
		struct ta_chunk *nc = malloc(sizeof *nc + cap);
		if (!nc)
			return NULL;
		nc->used = 0;
		nc->cap = cap;
		if (cap == n && c) {
			/* a big block gets its own chunk behind the current one */
			nc->next = c->next;
			c->next = nc;
		} else {
			nc->next = c;
			a->head = nc;
		}
		c = nc;
	}
	void *p = c->data + c->used;
	c->used += n;
	return p;
}

void ta_free(struct ta *a)
{
	if (!a)
		return;
	for (struct ta_chunk *c = a->head, *next; c; c = next) {
		next = c->next;
		free(c);
	}
	free(a);
}

char *ta_strndup(struct ta *a, const char *s, size_t n)
{
	char *p = ta_alloc(a, n + 1);
	if (p) {
		if (n)
			memcpy(p, s, n);
		p[n] = '\0';
	}
	return p;
}

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

/* Find key; when absent and insert is true, add it with value val.
 * Returns the slot, or NULL (absent and not inserted, or ENOMEM). */
static struct tb_map_slot *map_find(struct tb *b, struct tb_map *m, const char *key, size_t klen,
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

void table_free(struct table *t)
{
	if (!t)
		return;
	free(t->reqs);
	free(t->hosts);
	ta_free(t->priv);
	free(t);
}

static bool ieq(const char *a, size_t an, const char *lit)
{
	return an == strlen(lit) && strncasecmp(a, lit, an) == 0;
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
		if (ieq(name, n, singletons[i]))
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

/* A URL's host key: "<s|p><port>|<host, lowercased>" and, for a unix:
 * URL, "|<socket path>" (a host has no '|'). */
static int add_host(struct tb *b, const char *upath, size_t upath_len, size_t *idx)
{
	const struct url *u = b->u;
	char key[URL_HOST_CAP + TABLE_UNIX_PATH_MAX + 24];
	int k = snprintf(key, sizeof key, "%c%u|", u->tls ? 's' : 'p', (unsigned)u->port);
	size_t hl = strlen(u->host);
	for (size_t i = 0; i < hl && (size_t)k + 1 < sizeof key; i++) {
		char c = u->host[i];
		key[k++] = (c >= 'A' && c <= 'Z') ? (char)(c - 'A' + 'a') : c;
	}
	if (upath) {
		key[k++] = '|';
		memcpy(key + k, upath, upath_len); /* upath_len <= TABLE_UNIX_PATH_MAX */
		k += (int)upath_len;
	}
	struct tb_map_slot *s = map_find(b, &b->hosts, key, (size_t)k, false, 0);
	if (s) {
		*idx = s->val;
		return 0;
	}
	struct table *t = b->t;
	if (t->n_hosts == b->host_cap) {
		size_t nc = b->host_cap ? b->host_cap * 2 : 4;
		struct table_host *nh = realloc(t->hosts, nc * sizeof *nh);
		if (!nh)
			return -ENOMEM;
		t->hosts = nh;
		b->host_cap = nc;
	}
	const char *name = tb_strndup(b, u->host, hl);
	const char *up = upath ? tb_strndup(b, upath, upath_len) : NULL;
	if (!name || (upath && !up) || !map_find(b, &b->hosts, key, (size_t)k, true, t->n_hosts))
		return -ENOMEM;
	t->hosts[t->n_hosts] = (struct table_host){name, u->port, u->tls, u->host_is_ipv6, 0, up};
	*idx = t->n_hosts++;
	b->total += hl + upath_len + sizeof(struct table_host);
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
		if (ieq(h->name, h->name_len, "Transfer-Encoding"))
			return tb_why(b, PACER_EHEADER,
			              "header 'Transfer-Encoding' is not supported (pacer sends bodies with "
			              "Content-Length)");
		if (ieq(h->name, h->name_len, "Content-Length")) {
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

char *tb_dirname(const char *path)
{
	const char *slash = strrchr(path, '/');
	if (!slash)
		return strdup(".");
	if (slash == path)
		return strdup("/");
	return strndup(path, (size_t)(slash - path));
}

int tb_body_file(struct tb *b, const char *base_dir, const char *path, size_t path_len,
                 const char **body, size_t *len)
{
	if (b->lim.no_body_files)
		return tb_why(b, PACER_EUNSUPPORTED, "body files are not allowed here");
	if (path_len == 0)
		return tb_why(b, PACER_EPARSE, "empty body file name");
	if (memchr(path, '\0', path_len))
		return tb_why(b, PACER_EPARSE, "body file name has a NUL byte");
	if (path_len > 4096)
		return tb_why(b, PACER_ETOOBIG, "body file name longer than 4096 bytes");
	struct tb_map_slot *s = map_find(b, &b->bodies, path, path_len, false, 0);
	if (s) {
		*body = b->cached[s->val].p;
		*len = b->cached[s->val].len;
		return 0;
	}
	char full[8200];
	if (path[0] == '/' || !base_dir || !*base_dir || strcmp(base_dir, ".") == 0)
		snprintf(full, sizeof full, "%.*s", (int)path_len, path);
	else
		snprintf(full, sizeof full, "%s/%.*s", base_dir, (int)path_len, path);
	char *buf = NULL;
	size_t n = 0;
	struct stat st;
	if (stat(full, &st) == 0 && S_ISDIR(st.st_mode))
		return tb_why(b, -EISDIR, "body file %s is a folder", full);
	int rc = file_read_all(full, b->lim.max_body_bytes, &buf, &n);
	if (rc == PACER_ETOOBIG)
		return tb_why(b, rc, "body file %s is over the limit of %zu bytes (--max-body)", full,
		              b->lim.max_body_bytes);
	if (rc)
		return tb_why(b, rc, "cannot read body file %s: %s", full, strerror(-rc));
	if (b->total + n > b->lim.max_total_bytes) {
		free(buf);
		return tb_why(b, PACER_ETOOBIG, "the table is over the limit of %llu bytes in all",
		              (unsigned long long)b->lim.max_total_bytes);
	}
	if (b->n_cached == b->cap_cached) {
		size_t nc = b->cap_cached ? b->cap_cached * 2 : 8;
		struct tb_body *ncached = realloc(b->cached, nc * sizeof *ncached);
		if (!ncached) {
			free(buf);
			return -ENOMEM;
		}
		b->cached = ncached;
		b->cap_cached = nc;
	}
	char *copy = n ? tb_alloc(b, n) : NULL;
	if (n && !copy) {
		free(buf);
		return -ENOMEM;
	}
	if (n)
		memcpy(copy, buf, n);
	free(buf);
	if (!map_find(b, &b->bodies, path, path_len, true, b->n_cached))
		return -ENOMEM;
	b->cached[b->n_cached++] = (struct tb_body){copy, n};
	b->total += n;
	*body = copy;
	*len = n;
	return 0;
}

/* ---- base64 --------------------------------------------------------- */

static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

size_t tb_b64_encode(const unsigned char *in, size_t n, char *out)
{
	size_t o = 0, i = 0;
	for (; i + 3 <= n; i += 3) {
		uint32_t v = (uint32_t)in[i] << 16 | (uint32_t)in[i + 1] << 8 | in[i + 2];
		out[o++] = b64[v >> 18];
		out[o++] = b64[(v >> 12) & 63];
		out[o++] = b64[(v >> 6) & 63];
		out[o++] = b64[v & 63];
	}
	if (n - i == 1) {
		uint32_t v = (uint32_t)in[i] << 16;
		out[o++] = b64[v >> 18];
		out[o++] = b64[(v >> 12) & 63];
		out[o++] = '=';
		out[o++] = '=';
	} else if (n - i == 2) {
		uint32_t v = (uint32_t)in[i] << 16 | (uint32_t)in[i + 1] << 8;
		out[o++] = b64[v >> 18];
		out[o++] = b64[(v >> 12) & 63];
		out[o++] = b64[(v >> 6) & 63];
		out[o++] = '=';
	}
	return o;
}

static int b64_val(char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '+')
		return 62;
	if (c == '/')
		return 63;
	return -1;
}

int tb_b64_decode(const char *in, size_t n, unsigned char *out, size_t *out_len)
{
	if (n % 4)
		return PACER_EPARSE;
	size_t o = 0;
	for (size_t i = 0; i < n; i += 4) {
		int v[4];
		size_t pad = 0;
		for (int k = 0; k < 4; k++) {
			if (in[i + k] == '=' && i + 4 == n && k >= 2) {
				v[k] = 0;
				pad++;
				continue;
			}
			if (pad)
				return PACER_EPARSE; /* data after '=' */
			v[k] = b64_val(in[i + k]);
			if (v[k] < 0)
				return PACER_EPARSE;
		}
		uint32_t x = (uint32_t)v[0] << 18 | (uint32_t)v[1] << 12 | (uint32_t)v[2] << 6 | (uint32_t)v[3];
		/* canonical form only: the bits the padding hides must be zero */
		if ((pad == 1 && (x & 0xff)) || (pad == 2 && (x & 0xffff)))
			return PACER_EPARSE;
		out[o++] = (unsigned char)(x >> 16);
		if (pad < 2)
			out[o++] = (unsigned char)(x >> 8);
		if (pad < 1)
			out[o++] = (unsigned char)x;
	}
	*out_len = o;
	return 0;
}

/* ---- loading -------------------------------------------------------- */

const char *table_format_name(enum table_format f)
{
	switch (f) {
	case TABLE_FMT_AUTO: return "auto";
	case TABLE_FMT_TARGETS: return "targets";
	case TABLE_FMT_JSONL: return "jsonl";
	case TABLE_FMT_BODIES: return "bodies";
	case TABLE_FMT_HAR: return "har";
	case TABLE_FMT_MIX: return "mix";
	}
	return "?";
}

int table_format_parse(const char *s, enum table_format *f)
{
	if (strcmp(s, "auto") == 0)
		*f = TABLE_FMT_AUTO;
	else if (strcmp(s, "targets") == 0)
		*f = TABLE_FMT_TARGETS;
	else if (strcmp(s, "jsonl") == 0)
		*f = TABLE_FMT_JSONL;
	else
		return PACER_EPARSE;
	return 0;
}

/* AUTO: JSONL when the first byte that is not whitespace and not in a '#'
 * comment line is '{'. */
static enum table_format detect(const char *text, size_t len)
{
	size_t i = 0;
	while (i < len) {
		char c = text[i];
		if (c == ' ' || c == '\t' || c == '\r' || c == '\n') {
			i++;
			continue;
		}
		if (c == '#') {
			const char *nl = memchr(text + i, '\n', len - i);
			if (!nl)
				break;
			i = (size_t)(nl - text) + 1;
			continue;
		}
		return c == '{' ? TABLE_FMT_JSONL : TABLE_FMT_TARGETS;
	}
	return TABLE_FMT_TARGETS;
}

int table_parse(const char *text, size_t len, enum table_format fmt, const char *source,
                const char *base_dir, const struct table_limits *lim, struct table **out,
                char *err, size_t cap)
{
	*out = NULL;
	if (err && cap)
		err[0] = '\0';
	if (!source)
		source = "(table)";
	if (fmt == TABLE_FMT_AUTO)
		fmt = detect(text, len);
	if (fmt != TABLE_FMT_TARGETS && fmt != TABLE_FMT_JSONL)
		return tb_err(err, cap, PACER_EUNSUPPORTED, "%s: table_parse reads targets or jsonl", source);
	struct tb b;
	int rc = tb_init(&b, lim, fmt, source);
	if (rc)
		return tb_err(err, cap, rc, "%s: out of memory", source);
	if (len > b.lim.max_file_bytes) {
		tb_abort(&b);
		return tb_err(err, cap, PACER_ETOOBIG, "%s: over the limit of %zu bytes", source,
		              b.lim.max_file_bytes);
	}
	rc = fmt == TABLE_FMT_JSONL ? tb_parse_jsonl(&b, text, len, base_dir, err, cap)
	                            : tb_parse_targets(&b, text, len, base_dir, err, cap);
	if (rc) {
		tb_abort(&b);
		return rc;
	}
	struct table *t = tb_finish(&b);
	if (!t)
		return tb_err(err, cap, PACER_EPARSE, "%s: no requests", source);
	*out = t;
	return 0;
}

int table_load(const char *path, enum table_format fmt, const struct table_limits *lim,
               struct table **out, char *err, size_t cap)
{
	*out = NULL;
	struct table_limits l;
	tb_limits(&l, lim);
	char *text = NULL;
	size_t len = 0;
	struct stat st;
	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
		return tb_err(err, cap, -EISDIR, "%s: cannot read: it is a folder", path);
	int rc = file_read_all(path, l.max_file_bytes, &text, &len);
	if (rc == PACER_ETOOBIG)
		return tb_err(err, cap, rc, "%s: over the limit of %zu bytes", path, l.max_file_bytes);
	if (rc)
		return tb_err(err, cap, rc, "%s: cannot read: %s", path, strerror(-rc));
	char *dir = tb_dirname(path);
	if (!dir) {
		free(text);
		return tb_err(err, cap, -ENOMEM, "%s: out of memory", path);
	}
	rc = table_parse(text, len, fmt, path, dir, &l, out, err, cap);
	free(dir);
	free(text);
	return rc;
}

/* ---- bodies folder -------------------------------------------------- */

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

int table_from_bodies(const char *dir, const char *url, const char *method,
                      const char *content_type, const struct table_limits *lim,
                      struct table **out, char *err, size_t cap)
{
	*out = NULL;
	if (err && cap)
		err[0] = '\0';
	if (!method)
		method = "POST";
	struct tb b;
	int rc = tb_init(&b, lim, TABLE_FMT_BODIES, dir);
	if (rc)
		return tb_err(err, cap, rc, "%s: out of memory", dir);
	const char *why = NULL, *upath = NULL, *http = NULL;
	size_t upath_len = 0;
	if (req_method_check(method))
		rc = tb_err(err, cap, PACER_EPARSE, "bad method '%.40s': expected a token such as POST",
		            method);
	else if ((rc = table_url_unix(url, &upath, &upath_len, &http, &why)) ||
	         (rc = url_parse(b.u, http, &why)))
		rc = tb_err(err, cap, rc, "bad URL '%.100s': %s", url, why);
	if (rc) {
		tb_abort(&b);
		return rc;
	}
	DIR *d = opendir(dir);
	if (!d) {
		rc = -errno;
		tb_abort(&b);
		return tb_err(err, cap, rc, "%s: cannot open the folder: %s", dir, strerror(-rc));
	}
	char **names = NULL;
	size_t n = 0, ncap = 0;
	struct dirent *e;
	errno = 0;
	while (!rc && (e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		if (n >= b.lim.max_requests) {
			rc = tb_err(err, cap, PACER_ETOOBIG, "%s: more than %zu files (the request limit)", dir,
			            b.lim.max_requests);
			break;
		}
		if (n == ncap) {
			size_t nc = ncap ? ncap * 2 : 64;
			char **nn = realloc(names, nc * sizeof *nn);
			if (!nn) {
				rc = -ENOMEM;
				break;
			}
			names = nn;
			ncap = nc;
		}
		if (!(names[n] = strdup(e->d_name)))
			rc = -ENOMEM;
		else
			n++;
	}
	if (!rc && errno)
		rc = tb_err(err, cap, -errno, "%s: cannot list the folder: %s", dir, strerror(errno));
	closedir(d);
	if (n)
		qsort(names, n, sizeof *names, cmp_str);
	struct tb_hdr ct = {"Content-Type", 12, content_type, content_type ? strlen(content_type) : 0};
	size_t made = 0;
	for (size_t i = 0; !rc && i < n; i++) {
		size_t plen = strlen(dir) + strlen(names[i]) + 2;
		char *path = malloc(plen);
		if (!path) {
			rc = -ENOMEM;
			break;
		}
		snprintf(path, plen, "%s/%s", dir, names[i]);
		struct stat st;
		if (stat(path, &st) != 0) {
			rc = tb_err(err, cap, -errno, "%s: %s", path, strerror(errno));
		} else if (S_ISREG(st.st_mode)) {
			char *body = NULL;
			size_t len = 0;
			rc = file_read_all(path, b.lim.max_body_bytes, &body, &len);
			if (rc == PACER_ETOOBIG)
				rc = tb_err(err, cap, rc, "%s: over the limit of %zu bytes (--max-body)", path,
				            b.lim.max_body_bytes);
			else if (rc)
				rc = tb_err(err, cap, rc, "%s: cannot read: %s", path, strerror(-rc));
			if (!rc) {
				struct tb_req r = {.method = method, .url = url, .headers = &ct,
				                   .n_headers = content_type ? 1 : 0, .body = body,
				                   .body_len = len, .line = (unsigned)(made + 1)};
				rc = tb_add(&b, &r);
				if (rc)
					rc = tb_err(err, cap, rc, "%s: %s", path, b.why[0] ? b.why : err_name(rc));
				made++;
			}
			free(body);
		}
		free(path);
	}
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	if (rc == -ENOMEM && err && cap && !err[0])
		tb_err(err, cap, rc, "%s: out of memory", dir);
	if (rc) {
		tb_abort(&b);
		return rc;
	}
	struct table *t = tb_finish(&b);
	if (!t)
		return tb_err(err, cap, PACER_EPARSE, "%s: no files to send (the folder is empty)", dir);
	*out = t;
	return 0;
}

/* ---- encoding and hash ---------------------------------------------- */

void table_wire_free(struct table_wire *w)
{
	if (!w)
		return;
	free(w->bytes);
	free(w->off);
	memset(w, 0, sizeof *w);
}

static size_t name_len(const char *line)
{
	const char *c = strchr(line, ':');
	return c ? (size_t)(c - line) : strlen(line);
}

int table_encode(const struct table *t, const char *user_agent, const char *const *extra,
                 size_t n_extra, struct table_wire *w, char *err, size_t cap)
{
	memset(w, 0, sizeof *w);
	for (size_t i = 0; i < n_extra; i++) {
		const char *why = NULL;
		int rc = req_header_check(extra[i], &why);
		if (rc)
			return tb_err(err, cap, rc, "header '%.60s': %s", extra[i], why);
		size_t nl = name_len(extra[i]);
		if (ieq(extra[i], nl, "Content-Length") || ieq(extra[i], nl, "Transfer-Encoding"))
			return tb_err(err, cap, PACER_EHEADER,
			              "header '%.*s' cannot be set for a whole table (pacer frames each body)",
			              (int)nl, extra[i]);
	}
	size_t max_h = 0;
	for (size_t i = 0; i < t->n; i++)
		if (t->reqs[i].n_headers > max_h)
			max_h = t->reqs[i].n_headers;
	struct url *u = malloc(sizeof *u);
	const char **hdrs = malloc((max_h + n_extra + 1) * sizeof *hdrs);
	w->off = malloc((t->n + 1) * sizeof *w->off);
	size_t bcap = 4096, used = 0;
	w->bytes = malloc(bcap);
	int rc = (u && hdrs && w->off && w->bytes) ? 0 : -ENOMEM;
	for (size_t i = 0; !rc && i < t->n; i++) {
		const struct table_req *q = &t->reqs[i];
		const struct table_host *h = &t->hosts[q->host];
		memset(u, 0, offsetof(struct url, target) + 1);
		u->tls = h->tls;
		snprintf(u->host, sizeof u->host, "%s", h->name);
		u->host_is_ipv6 = h->ipv6;
		u->port = h->port;
		u->port_explicit = true;
		snprintf(u->target, sizeof u->target, "%s", q->target);
		size_t nh = 0;
		for (size_t k = 0; k < q->n_headers; k++) {
			size_t nl = name_len(q->headers[k]);
			bool replaced = false;
			for (size_t x = 0; x < n_extra && !replaced; x++)
				replaced = name_len(extra[x]) == nl && strncasecmp(extra[x], q->headers[k], nl) == 0;
			if (!replaced)
				hdrs[nh++] = q->headers[k];
		}
		for (size_t x = 0; x < n_extra; x++)
			hdrs[nh++] = extra[x];
		struct req_spec s = {.method = q->method, .url = u, .headers = hdrs, .n_headers = nh,
		                     .body = q->body, .body_len = q->body_len, .user_agent = user_agent};
		char *buf = NULL;
		size_t len = 0;
		const char *why = NULL;
		rc = req_encode(&s, &buf, &len, &why);
		if (rc) {
			if (rc != -ENOMEM)
				tb_err(err, cap, rc, "%s:%u: %s", t->source, q->line, why ? why : err_name(rc));
			break;
		}
		if (len > bcap - used) {
			size_t nc = bcap;
			while (len > nc - used)
				nc *= 2;
			char *nb = realloc(w->bytes, nc);
			if (!nb) {
				free(buf);
				rc = -ENOMEM;
				break;
			}
			w->bytes = nb;
			bcap = nc;
		}
		memcpy(w->bytes + used, buf, len);
		free(buf);
		w->off[i] = used;
		used += len;
	}
	free(u);
	free(hdrs);
	if (rc) {
		if (rc == -ENOMEM)
			tb_err(err, cap, rc, "out of memory encoding %zu requests", t->n);
		table_wire_free(w);
		return rc;
	}
	w->off[t->n] = used;
	w->n = t->n;
	return 0;
}

int table_wire_hash(const struct table_wire *w, char hex[65])
{
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	if (!ctx)
		return -ENOMEM;
	int ok = EVP_DigestInit_ex(ctx, EVP_sha256(), NULL);
	for (size_t i = 0; ok && i < w->n; i++) {
		uint64_t len = w->off[i + 1] - w->off[i];
		unsigned char be[8];
		for (int k = 0; k < 8; k++)
			be[k] = (unsigned char)(len >> (56 - 8 * k));
		ok = EVP_DigestUpdate(ctx, be, sizeof be) &&
		     (len == 0 || EVP_DigestUpdate(ctx, w->bytes + w->off[i], len));
	}
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int mdlen = 0;
	if (ok)
		ok = EVP_DigestFinal_ex(ctx, md, &mdlen);
	EVP_MD_CTX_free(ctx);
	if (!ok || mdlen != 32)
		return -ENOMEM;
	static const char hx[] = "0123456789abcdef";
	for (unsigned i = 0; i < 32; i++) {
		hex[2 * i] = hx[md[i] >> 4];
		hex[2 * i + 1] = hx[md[i] & 15];
	}
	hex[64] = '\0';
	return 0;
}

int table_hash(const struct table *t, const char *user_agent, const char *const *extra,
               size_t n_extra, char hex[65], char *err, size_t cap)
{
	struct table_wire w;
	int rc = table_encode(t, user_agent, extra, n_extra, &w, err, cap);
	if (rc)
		return rc;
	rc = table_wire_hash(&w, hex);
	table_wire_free(&w);
	if (rc)
		tb_err(err, cap, rc, "cannot compute SHA-256");
	return rc;
}
