/* pacer — HTTP/1.1 request bytes to HTTP/2 header fields (h2req.h). */
#include "http/h2req.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "http/h1req.h"

static bool name_is(const char *n, size_t len, const char *want)
{
	return strlen(want) == len && strncasecmp(n, want, len) == 0;
}

/* Fields HTTP/2 forbids (RFC 9113 §8.2.2); TE only with "trailers". */
static bool connection_specific(const char *n, size_t nl, const char *v, size_t vl)
{
	if (name_is(n, nl, "te"))
		return !(vl == 8 && strncasecmp(v, "trailers", 8) == 0);
	return name_is(n, nl, "connection") || name_is(n, nl, "keep-alive") ||
	       name_is(n, nl, "proxy-connection") || name_is(n, nl, "transfer-encoding") ||
	       name_is(n, nl, "upgrade");
}

static nghttp2_nv nv_of(const char *n, size_t nl, const char *v, size_t vl)
{
	return (nghttp2_nv){.name = (uint8_t *)(uintptr_t)n,
			    .value = (uint8_t *)(uintptr_t)v,
			    .namelen = nl,
			    .valuelen = vl,
			    .flags = NGHTTP2_NV_FLAG_NO_COPY_NAME | NGHTTP2_NV_FLAG_NO_COPY_VALUE};
}

#define FAIL(...)                                                                                  \
	do {                                                                                       \
		snprintf(err, errlen, __VA_ARGS__);                                                \
		rc = -EINVAL;                                                                      \
		goto fail;                                                                         \
	} while (0)

int h2req_from_h1(struct h2req *out, const char *buf, size_t len, const char *scheme, char *err,
                  size_t errlen)
{
	*out = (struct h2req){0};
	int rc = 0;
	struct h1req r;
	h1req_init(&r);
	int head = h1req_parse(&r, buf, len);
	if (head <= 0) {
		if (r.error_status == 431)
			snprintf(
				err, errlen,
				"the request line and header fields are more than %u bytes (16 KiB, "
				"the most an HTTP/2 or HTTP/3 request may carry here)",
				H1REQ_HEADERS_CAP);
		else if (r.error_status == 414)
			snprintf(
				err, errlen,
				"the request line is more than %u bytes (8 KiB, the most an HTTP/2 or "
				"HTTP/3 request may carry here)",
				H1REQ_LINE_CAP);
		else
			snprintf(err, errlen, "%s",
				 head == 0 ? "the request head is incomplete"
				 : r.error_status == 411 || r.error_status == 501
					 ? "HTTP/2 requests need a Content-Length body (no "
					   "Transfer-Encoding)"
					 : "the request head does not parse");
		return -EINVAL;
	}
	if ((uint64_t)(len - (size_t)head) != r.content_length) {
		snprintf(err, errlen, "the body is %zu bytes, its Content-Length says %llu",
			 len - (size_t)head, (unsigned long long)r.content_length);
		return -EINVAL;
	}
	/* one block: the fields, then the lower-cased names */
	size_t cap = H2REQ_MAX_FIELDS;
	nghttp2_nv *nv = malloc(cap * sizeof *nv + (size_t)head);
	if (!nv)
		return -ENOMEM;
	out->nv = nv;
	char *names = (char *)(nv + cap);
	size_t n = 0;

	const char *target = buf + r.target_off;
	size_t tl = r.target_len;
	const char *auth = NULL;
	size_t al = 0;
	if (tl && target[0] != '/' && !(tl == 1 && target[0] == '*')) {
		/* absolute-form: scheme://authority/path */
		const char *p = memchr(target, ':', tl);
		if (!p || (size_t)(target + tl - p) < 3 || p[1] != '/' || p[2] != '/')
			FAIL("the request target is not origin-form, absolute-form or *");
		auth = p + 3;
		const char *slash = memchr(auth, '/', (size_t)(target + tl - auth));
		al = (size_t)((slash ? slash : target + tl) - auth);
		if (slash) {
			tl = (size_t)(target + tl - slash);
			target = slash;
		} else {
			target = "/";
			tl = 1;
		}
	}
	nv[n++] = nv_of(":method", 7, buf + r.method_off, r.method_len);
	nv[n++] = nv_of(":scheme", 7, scheme, strlen(scheme));
	size_t auth_at = n++;
	nv[n++] = nv_of(":path", 5, target, tl);

	/* header lines: after the request line, up to the blank line */
	const char *p = memchr(buf, '\n', (size_t)head);
	const char *end = buf + head;
	p = p ? p + 1 : end;
	size_t name_off = 0;
	while (p < end) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));
		const char *le = eol ? eol : end;
		const char *next = eol ? eol + 1 : end;
		if (le > p && le[-1] == '\r')
			le--;
		if (le == p)
			break; /* the blank line */
		const char *colon = memchr(p, ':', (size_t)(le - p));
		if (!colon)
			FAIL("a header line has no ':'");
		size_t nl = (size_t)(colon - p);
		const char *v = colon + 1;
		while (v < le && (*v == ' ' || *v == '\t'))
			v++;
		const char *ve = le;
		while (ve > v && (ve[-1] == ' ' || ve[-1] == '\t'))
			ve--;
		size_t vl = (size_t)(ve - v);
		if (name_is(p, nl, "host")) {
			auth = v;
			al = vl;
		} else if (!connection_specific(p, nl, v, vl)) {
			if (n == cap)
				FAIL("more than %d header fields", H2REQ_MAX_FIELDS);
			char *lc = names + name_off;
			for (size_t i = 0; i < nl; i++)
				lc[i] = (char)((p[i] >= 'A' && p[i] <= 'Z') ? p[i] + 32 : p[i]);
			name_off += nl;
			nv[n++] = nv_of(lc, nl, v, vl);
		}
		p = next;
	}
	if (!auth)
		FAIL("the request has no Host (HTTP/2 needs an :authority)");
	nv[auth_at] = nv_of(":authority", 10, auth, al);
	out->n_nv = n;
	if (r.content_length) {
		out->body = buf + head;
		out->body_len = (size_t)r.content_length;
	}
	return 0;
fail:
	h2req_free(out);
	return rc;
}

void h2req_free(struct h2req *r)
{
	free(r->nv);
	*r = (struct h2req){0};
}
