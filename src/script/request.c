/* pacer — scripts: the requests a script makes (script_int.h): built as
 * wrk.format builds them (the header fields sorted by name, so that every
 * thread's state makes the same bytes), and checked to be exactly one
 * HTTP/1.1 request pacer can send as it is. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <lauxlib.h>

#include "script/script_int.h"

/* ---- requests ------------------------------------------------------------------- */

static bool is_tchar(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       (c && strchr("!#$%&'*+-.^_`|~", c));
}

static bool token_ok(const char *s, size_t n)
{
	if (!n)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!is_tchar((unsigned char)s[i]))
			return false;
	return true;
}

static bool value_ok(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if ((c < 0x20 && c != '\t') || c == 0x7f)
			return false;
	}
	return true;
}

/* A request being built (outside the state's memory: freed before any
 * Lua error is raised). */
struct cbuf {
	char *p;
	size_t len, cap;
	bool oom;
};

static void cb_add(struct cbuf *b, const char *s, size_t n)
{
	if (b->oom)
		return;
	if (b->len + n > b->cap) {
		size_t cap = b->cap ? b->cap : 256;
		while (cap < b->len + n)
			cap *= 2;
		char *q = cap <= SCRIPT_REQ_MAX + 4096 ? realloc(b->p, cap) : NULL;
		if (!q) {
			b->oom = true;
			return;
		}
		b->p = q;
		b->cap = cap;
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
}

/* One field "n: v\r\n"; NULL or why not (static text). */
static const char *cb_field(struct cbuf *b, const char *n, size_t nl, const char *v, size_t vl)
{
	if (!token_ok(n, nl))
		return "a header name is not a token";
	if (!value_ok(v, vl))
		return "a header value holds a control character";
	cb_add(b, n, nl);
	cb_add(b, ": ", 2);
	cb_add(b, v, vl);
	cb_add(b, "\r\n", 2);
	return NULL;
}

/* One header field of a request being formatted (its strings are the
 * table's; v NULL: the value is num). */
struct sfield {
	const char *n, *v;
	size_t nl, vl;
	char num[32];
};

static int field_cmp(const void *a, const void *b)
{
	const struct sfield *x = a, *y = b;
	size_t n = x->nl < y->nl ? x->nl : y->nl;
	int c = strncasecmp(x->n, y->n, n);
	if (c)
		return c;
	if (x->nl != y->nl)
		return x->nl < y->nl ? -1 : 1;
	return memcmp(x->n, y->n, n);
}

/* Push field name=value at the end of f (grown); NULL or why not. */
static const char *field_add(struct sfield **f, size_t *n, size_t *cap, lua_State *L, int ni,
			     int vi)
{
	if (*n == *cap) {
		size_t c = *cap ? 2 * *cap : 16;
		struct sfield *g = c <= 4096 ? realloc(*f, c * sizeof *g) : NULL;
		if (!g)
			return "too many header fields";
		*f = g;
		*cap = c;
	}
	struct sfield *x = &(*f)[(*n)++];
	x->n = lua_tolstring(L, ni, &x->nl); /* a string key: not converted */
	if (lua_type(L, vi) == LUA_TNUMBER) {
		/* formatted here: lua_tolstring would make a string the table
		 * does not hold */
		x->vl = (size_t)snprintf(x->num, sizeof x->num, "%.14g", lua_tonumber(L, vi));
		x->v = NULL; /* num: the array moves (realloc, qsort) */
	} else {
		x->v = lua_tolstring(L, vi, &x->vl);
	}
	return NULL;
}

void sreq_format(lua_State *L, const char *method, const char *path, int hidx, const char *body,
		 size_t body_len)
{
	if (!token_ok(method, strlen(method)))
		luaL_error(L, "method '%s' is not a token", method);
	if (!*path)
		luaL_error(L, "the path is empty");
	for (const char *p = path; *p; p++)
		if ((unsigned char)*p <= 0x20 || *p == 0x7f)
			luaL_error(L, "path '%s' holds a space or a control character", path);
	if (hidx < 0)
		hidx = lua_gettop(L) + hidx + 1;
	struct cbuf b = {0};
	const char *why = NULL;
	cb_add(&b, method, strlen(method));
	cb_add(&b, " ", 1);
	cb_add(&b, path, strlen(path));
	cb_add(&b, " HTTP/1.1\r\n", 11);
	/* the fields, sorted by name: the same bytes in every thread's state
	 * (the order of a Lua table's keys is not) */
	struct sfield *f = NULL;
	size_t nf = 0, fcap = 0;
	bool host = false;
	int top = lua_gettop(L);
	if (hidx) {
		lua_pushnil(L);
		while (!why && lua_next(L, hidx)) {
			int vt = lua_type(L, -1);
			size_t nl = 0;
			const char *n = lua_type(L, -2) == LUA_TSTRING ? lua_tolstring(L, -2, &nl)
								       : NULL;
			if (!n) {
				why = "a header's name is not a string";
			} else if (vt == LUA_TSTRING || vt == LUA_TNUMBER) {
				/* Content-Length: made from the body below */
				if (!(nl == 14 && !strncasecmp(n, "Content-Length", 14))) {
					host = host || (nl == 4 && !strncasecmp(n, "Host", 4));
					why = field_add(&f, &nf, &fcap, L, -2, -1);
				}
			} else if (!(vt == LUA_TBOOLEAN && !lua_toboolean(L, -1)) &&
				   vt != LUA_TNIL) {
				why = "a header's value is not a string or a number";
			}
			lua_pop(L, 1);
		}
	}
	lua_settop(L, top);
	if (!why && !host) {
		lua_getglobal(L, "wrk");
		if (lua_istable(L, -1)) {
			lua_getfield(L, -1, "headers");
			if (lua_istable(L, -1)) {
				lua_getfield(L, -1, "Host");
				if (lua_type(L, -1) == LUA_TSTRING) {
					/* stays on the stack while the fields are written */
					lua_pushliteral(L, "Host");
					why = field_add(&f, &nf, &fcap, L, -1, -2);
				}
			}
		}
	}
	if (!why && nf)
		qsort(f, nf, sizeof *f, field_cmp);
	for (size_t i = 0; !why && i < nf; i++)
		why = cb_field(&b, f[i].n, f[i].nl, f[i].v ? f[i].v : f[i].num, f[i].vl);
	free(f);
	lua_settop(L, top);
	if (body) {
		char cl[48];
		int n = snprintf(cl, sizeof cl, "Content-Length: %zu\r\n", body_len);
		cb_add(&b, cl, (size_t)n);
	}
	cb_add(&b, "\r\n", 2);
	if (body)
		cb_add(&b, body, body_len);
	if (!why && b.oom)
		why = "the request is too large";
	if (why) {
		free(b.p);
		luaL_error(L, "%s", why);
	}
	lua_pushlstring(L, b.p, b.len);
	free(b.p);
}

/* The end of the line starting at p (its CR or LF), or NULL. */
static const char *line_end(const char *p, const char *end)
{
	while (p < end && *p != '\r' && *p != '\n')
		p++;
	return p < end ? p : NULL;
}

const char *sreq_check(const char *buf, size_t len, bool *head)
{
	const char *p = buf, *end = buf + len;
	*head = false;
	if (!len)
		return "an empty string";
	if (len > SCRIPT_REQ_MAX)
		return "a request over 64 MiB";
	const char *le = line_end(p, end);
	if (!le)
		return "no request line (a request ends its head with an empty line)";
	const char *sp1 = memchr(p, ' ', (size_t)(le - p));
	if (!sp1 || !token_ok(p, (size_t)(sp1 - p)))
		return "its request line does not start with a method and a space";
	*head = sp1 - p == 4 && !memcmp(p, "HEAD", 4);
	const char *sp2 = memchr(sp1 + 1, ' ', (size_t)(le - sp1 - 1));
	if (!sp2 || sp2 == sp1 + 1)
		return "its request line has no target (METHOD /path HTTP/1.1)";
	if ((size_t)(le - sp2 - 1) != 8 || memcmp(sp2 + 1, "HTTP/1.", 7) ||
	    (sp2[8] != '1' && sp2[8] != '0'))
		return "its request line does not end in HTTP/1.1";
	uint64_t clen = 0;
	bool has_cl = false;
	p = le;
	for (;;) {
		if (p < end && *p == '\r')
			p++;
		if (p >= end || *p != '\n')
			return "a line of its head does not end in CRLF";
		p++;
		le = line_end(p, end);
		if (!le)
			return "its head does not end with an empty line";
		if (le == p)
			break; /* the empty line */
		const char *colon = memchr(p, ':', (size_t)(le - p));
		if (!colon || !token_ok(p, (size_t)(colon - p)))
			return "a header line is not 'Name: value'";
		size_t nl = (size_t)(colon - p);
		const char *v = colon + 1;
		while (v < le && (*v == ' ' || *v == '\t'))
			v++;
		if (nl == 17 && !strncasecmp(p, "Transfer-Encoding", 17))
			return "it has Transfer-Encoding (pacer sends bodies with Content-Length)";
		if (nl == 14 && !strncasecmp(p, "Content-Length", 14)) {
			uint64_t x = 0;
			const char *q = v;
			for (; q < le && *q >= '0' && *q <= '9'; q++)
				x = x * 10 + (uint64_t)(*q - '0');
			while (q < le && (*q == ' ' || *q == '\t'))
				q++;
			if (q == v || q != le || x > SCRIPT_REQ_MAX)
				return "its Content-Length is not a number";
			if (has_cl && x != clen)
				return "it has two Content-Length fields that differ";
			clen = x;
			has_cl = true;
		}
		p = le;
	}
	if (*le == '\r')
		le++;
	if (le >= end || *le != '\n')
		return "its head does not end with an empty line";
	size_t body = (size_t)(end - (le + 1));
	if (body < clen)
		return "its body is shorter than its Content-Length";
	if (body > clen) {
		/* wrk's pipelining: several requests in one string */
		bool hd;
		if (!sreq_check(le + 1 + clen, body - clen, &hd))
			return "it holds more than one request (wrk's pipelining: pacer sends one "
			       "request per call and does not pipeline)";
		return "bytes follow its body past its Content-Length";
	}
	return NULL;
}
