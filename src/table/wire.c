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

struct table_hasher {
	EVP_MD_CTX *ctx;
	bool ok;
};

int table_hasher_new(struct table_hasher **out)
{
	*out = calloc(1, sizeof **out);
	if (!*out)
		return -ENOMEM;
	(*out)->ctx = EVP_MD_CTX_new();
	(*out)->ok = (*out)->ctx && EVP_DigestInit_ex((*out)->ctx, EVP_sha256(), NULL);
	if (!(*out)->ok) {
		table_hasher_free(*out);
		*out = NULL;
		return -ENOMEM;
	}
	return 0;
}

void table_hasher_add(struct table_hasher *h, const char *req, size_t len)
{
	unsigned char be[8];
	for (int k = 0; k < 8; k++)
		be[k] = (unsigned char)((uint64_t)len >> (56 - 8 * k));
	h->ok = h->ok && EVP_DigestUpdate(h->ctx, be, sizeof be) &&
	        (len == 0 || EVP_DigestUpdate(h->ctx, req, len));
}

int table_hasher_end(struct table_hasher *h, char hex[65])
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int mdlen = 0;
	if (!h->ok || !EVP_DigestFinal_ex(h->ctx, md, &mdlen) || mdlen != 32) {
		h->ok = false;
		return -ENOMEM;
	}
	h->ok = false; /* finished: adds are refused from here */
	static const char hx[] = "0123456789abcdef";
	for (unsigned i = 0; i < 32; i++) {
		hex[2 * i] = hx[md[i] >> 4];
		hex[2 * i + 1] = hx[md[i] & 15];
	}
	hex[64] = '\0';
	return 0;
}

void table_hasher_free(struct table_hasher *h)
{
	if (!h)
		return;
	EVP_MD_CTX_free(h->ctx);
	free(h);
}

int table_wire_hash(const struct table_wire *w, char hex[65])
{
	struct table_hasher *h;
	int rc = table_hasher_new(&h);
	if (rc)
		return rc;
	for (size_t i = 0; i < w->n; i++)
		table_hasher_add(h, w->bytes + w->off[i], w->off[i + 1] - w->off[i]);
	rc = table_hasher_end(h, hex);
	table_hasher_free(h);
	return rc;
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
