/* pacer — request tables: encoding to wire bytes and the SHA-256 over
 * them. See table.h. */
#include <errno.h>
#include <openssl/evp.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "http/req.h"
#include "http/url.h"
#include "table/table_int.h"
#include "util/err.h"

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
	return table_encode_range(t, 0, t->n, user_agent, extra, n_extra, w, err, cap);
}

int table_encode_range(const struct table *t, size_t first, size_t count, const char *user_agent,
                       const char *const *extra, size_t n_extra, struct table_wire *w, char *err,
                       size_t cap)
{
	memset(w, 0, sizeof *w);
	if (first > t->n || count > t->n - first)
		return -EINVAL;
	for (size_t i = 0; i < n_extra; i++) {
		const char *why = NULL;
		int rc = req_header_check(extra[i], &why);
		if (rc)
			return tb_err(err, cap, rc, "header '%.60s': %s", extra[i], why);
		size_t nl = name_len(extra[i]);
		if (tb_ieq(extra[i], nl, "Content-Length") || tb_ieq(extra[i], nl, "Transfer-Encoding"))
			return tb_err(err, cap, PACER_EHEADER,
			              "header '%.*s' cannot be set for a whole table (pacer frames each body)",
			              (int)nl, extra[i]);
	}
	size_t max_h = 0;
	for (size_t i = first; i < first + count; i++)
		if (t->reqs[i].n_headers > max_h)
			max_h = t->reqs[i].n_headers;
	struct url *u = malloc(sizeof *u);
	const char **hdrs = malloc((max_h + n_extra + 1) * sizeof *hdrs);
	w->off = malloc((count + 1) * sizeof *w->off);
	size_t bcap = 4096, used = 0;
	w->bytes = malloc(bcap);
	int rc = (u && hdrs && w->off && w->bytes) ? 0 : -ENOMEM;
	for (size_t i = 0; !rc && i < count; i++) {
		const struct table_req *q = &t->reqs[first + i];
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
			tb_err(err, cap, rc, "out of memory encoding %zu requests", count);
		table_wire_free(w);
		return rc;
	}
	w->off[count] = used;
	w->n = count;
	return 0;
}

/* Bodies encoded at once by table_encode_each, at most (a batch holds one
 * request more when that one alone is larger). */
#define EACH_BATCH_BODY_BYTES (4u << 20)
#define EACH_BATCH_MAX 1024u

int table_encode_each(const struct table *t, const char *user_agent, const char *const *extra,
                      size_t n_extra, int (*fn)(void *arg, size_t i, const char *req, size_t len),
                      void *arg, char *err, size_t cap)
{
	size_t i = 0;
	while (i < t->n) {
		size_t k = 0;
		uint64_t bytes = 0;
		while (i + k < t->n && k < EACH_BATCH_MAX &&
		       (k == 0 || bytes + t->reqs[i + k].body_len <= EACH_BATCH_BODY_BYTES))
			bytes += t->reqs[i + k++].body_len;
		struct table_wire w;
		int rc = table_encode_range(t, i, k, user_agent, extra, n_extra, &w, err, cap);
		for (size_t j = 0; !rc && j < k; j++)
			rc = fn(arg, i + j, w.bytes + w.off[j], w.off[j + 1] - w.off[j]);
		if (w.off)
			table_wire_free(&w);
		if (rc)
			return rc;
		i += k;
	}
	return 0;
}

#define HASH_HOSTS 64 /* distinct Host values numbered; the rest share #65 */

struct table_hasher {
	EVP_MD_CTX *ctx, *wctx; /* the table hash, the workload hash */
	bool ok;
	char *hosts[HASH_HOSTS]; /* the Host values seen, in order */
	size_t n_hosts;
};

int table_hasher_new(struct table_hasher **out)
{
	*out = calloc(1, sizeof **out);
	if (!*out)
		return -ENOMEM;
	(*out)->ctx = EVP_MD_CTX_new();
	(*out)->wctx = EVP_MD_CTX_new();
	(*out)->ok = (*out)->ctx && EVP_DigestInit_ex((*out)->ctx, EVP_sha256(), NULL) &&
		     (*out)->wctx && EVP_DigestInit_ex((*out)->wctx, EVP_sha256(), NULL);
	if (!(*out)->ok) {
		table_hasher_free(*out);
		*out = NULL;
		return -ENOMEM;
	}
	return 0;
}

static void put_len(EVP_MD_CTX *ctx, bool *ok, size_t len)
{
	unsigned char be[8];
	for (int k = 0; k < 8; k++)
		be[k] = (unsigned char)((uint64_t)len >> (56 - 8 * k));
	*ok = *ok && EVP_DigestUpdate(ctx, be, sizeof be);
}

/* The number of Host value v[n] (1-based; 65 past the 64th distinct). */
static size_t host_number(struct table_hasher *h, const char *v, size_t n)
{
	for (size_t i = 0; i < h->n_hosts; i++)
		if (strlen(h->hosts[i]) == n && !memcmp(h->hosts[i], v, n))
			return i + 1;
	if (h->n_hosts == HASH_HOSTS)
		return HASH_HOSTS + 1;
	char *c = strndup(v, n);
	if (!c) {
		h->ok = false;
		return 0;
	}
	h->hosts[h->n_hosts++] = c;
	return h->n_hosts;
}

/* The workload form of one request (table.h): pass 0 measures its length
 * (*total), pass 1 feeds it to the workload digest. The header block ends
 * at the first empty line; what follows (the body) is as it is. */
static void workload_bytes(struct table_hasher *h, const char *req, size_t len, int pass,
			   size_t *total)
{
	const char *end = req + len, *p = req;
	size_t out = 0;
	bool head = true;
#define FEED(s, n)                                                                                 \
	do {                                                                                       \
		if (pass)                                                                          \
			h->ok = h->ok && ((n) == 0 || EVP_DigestUpdate(h->wctx, (s), (n)));        \
		out += (n);                                                                        \
	} while (0)
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *le = nl ? nl + 1 : end; /* the line with its "\r\n" */
		size_t ll = (size_t)(le - p);
		if (!head || p == req) { /* the body, or the request line */
			FEED(p, head ? ll : (size_t)(end - p));
			if (!head)
				break;
			p = le;
			continue;
		}
		if (ll <= 2 && (p[0] == '\r' || p[0] == '\n')) { /* the empty line */
			FEED(p, ll);
			head = false;
			p = le;
			continue;
		}
		const char *colon = memchr(p, ':', ll);
		/* the line without its "\r\n" (or "\n") */
		size_t nl_len = ll;
		if (nl_len && p[nl_len - 1] == '\n')
			nl_len--;
		if (nl_len && p[nl_len - 1] == '\r')
			nl_len--;
		const char *v = colon ? colon + 1 : NULL;
		while (v && v < p + nl_len && (*v == ' ' || *v == '\t'))
			v++;
		if (colon && colon - p == 4 && !strncasecmp(p, "Host", 4)) {
			/* pass 0 numbers a new value, pass 1 finds it */
			char num[32];
			int k = snprintf(num, sizeof num, "Host: #%zu",
					 host_number(h, v, (size_t)(p + nl_len - v)));
			FEED(num, (size_t)k);
			FEED(p + nl_len, ll - nl_len);
		} else if (colon && colon - p == 10 && !strncasecmp(p, "User-Agent", 10) &&
			   (size_t)(p + nl_len - v) > 6 && !strncmp(v, "pacer/", 6)) {
			FEED("User-Agent: pacer", sizeof "User-Agent: pacer" - 1);
			FEED(p + nl_len, ll - nl_len);
		} else {
			FEED(p, ll);
		}
		p = le;
	}
#undef FEED
	*total = out;
}

void table_hasher_add(struct table_hasher *h, const char *req, size_t len)
{
	put_len(h->ctx, &h->ok, len);
	h->ok = h->ok && (len == 0 || EVP_DigestUpdate(h->ctx, req, len));
	size_t wlen = 0;
	workload_bytes(h, req, len, 0, &wlen);
	put_len(h->wctx, &h->ok, wlen);
	workload_bytes(h, req, len, 1, &wlen);
}

static bool final_hex(EVP_MD_CTX *ctx, char hex[65])
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int mdlen = 0;
	if (!EVP_DigestFinal_ex(ctx, md, &mdlen) || mdlen != 32)
		return false;
	static const char hx[] = "0123456789abcdef";
	for (unsigned i = 0; i < 32; i++) {
		hex[2 * i] = hx[md[i] >> 4];
		hex[2 * i + 1] = hx[md[i] & 15];
	}
	hex[64] = '\0';
	return true;
}

int table_hasher_end_workload(struct table_hasher *h, char hex[65], char workload_hex[65])
{
	bool ok = h->ok && final_hex(h->ctx, hex) &&
		  (!workload_hex || final_hex(h->wctx, workload_hex));
	h->ok = false; /* finished: adds are refused from here */
	return ok ? 0 : -ENOMEM;
}

int table_hasher_end(struct table_hasher *h, char hex[65])
{
	return table_hasher_end_workload(h, hex, NULL);
}

void table_hasher_free(struct table_hasher *h)
{
	if (!h)
		return;
	EVP_MD_CTX_free(h->ctx);
	EVP_MD_CTX_free(h->wctx);
	for (size_t i = 0; i < h->n_hosts; i++)
		free(h->hosts[i]);
	free(h);
}

int table_wire_hashes(const struct table_wire *w, char hex[65], char workload_hex[65])
{
	struct table_hasher *h;
	int rc = table_hasher_new(&h);
	if (rc)
		return rc;
	for (size_t i = 0; i < w->n; i++)
		table_hasher_add(h, w->bytes + w->off[i], w->off[i + 1] - w->off[i]);
	rc = table_hasher_end_workload(h, hex, workload_hex);
	table_hasher_free(h);
	return rc;
}

int table_wire_hash(const struct table_wire *w, char hex[65])
{
	return table_wire_hashes(w, hex, NULL);
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
