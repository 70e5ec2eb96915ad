/* pacer — scripts: a Lua state (script_int.h). Its allocator counts what
 * the state holds and refuses past the cap (--script-memory); a count hook
 * checks the running call's time against its limit (--script-timeout;
 * LuaJIT's compiled traces would not run the hook, so the JIT compiler is
 * off and the interpreter runs every script); calls are protected and
 * their errors come back as one line with the file, the line and the hook.
 * Also what the other files share: values copied between states, and
 * requests built (wrk.format's way) and checked. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <lauxlib.h>
#include <luajit.h>
#include <lualib.h>

#include "script/script_int.h"
#include "util/clock.h"

const char script_key_state;
const char script_key_names;
const char session_fail_key; /* declared with session.c's (script_int.h) */

/* ---- the allocator and the limits ------------------------------------------ */

static void *sstate_alloc(void *ud, void *p, size_t osize, size_t nsize)
{
	struct sstate *st = ud;
	if (!p)
		osize = 0;
	if (nsize == 0) {
		st->mem_used -= osize;
		free(p);
		return NULL;
	}
	if (nsize > osize) {
		size_t cap = st->mem_cap + (st->mem_slack ? SCRIPT_MEM_SLACK : 0);
		if (st->mem_used + (nsize - osize) > cap) {
			st->mem_hit = true;
			return NULL;
		}
	}
	void *q = realloc(p, nsize);
	if (q)
		st->mem_used = st->mem_used - osize + nsize;
	return q;
}

static void innermost_line(lua_State *L, char *buf, size_t cap);

static void sstate_hook(lua_State *L, lua_Debug *ar)
{
	(void)ar;
	struct sstate *st = sstate_of(L);
	if (!st || !st->call_t0_ns)
		return;
	/* near the cap: an error raised here names the script's line (one the
	 * allocator refuses cannot: Lua calls no handler for it) */
	const char *what = NULL;
	if (!st->mem_slack && st->mem_used > st->mem_cap - st->mem_cap / 16) {
		st->mem_hit = true;
		what = "over the memory limit";
	} else if (clock_now_ns() - st->call_t0_ns > st->call_limit_ns) {
		st->over_time = true;
		what = "over the time limit";
	}
	if (what) {
		/* the place now: a coroutine's stack is gone once the error
		 * unwinds it */
		char where[300];
		st->mem_slack = true;
		innermost_line(L, where, sizeof where);
		if (where[0])
			luaL_error(L, "%s: %s", where, what);
		luaL_error(L, "%s", what);
	}
}

/* jit.on would bring back traces that do not run the hook: a no-op. */
static int jit_on_refused(lua_State *L)
{
	(void)L;
	return 0;
}

int sstate_open(struct sstate *st, struct script *sc, size_t mem_cap, uint64_t limit_ns)
{
	memset(st, 0, sizeof *st);
	st->sc = sc;
	st->mem_cap = mem_cap;
	st->call_limit_ns = limit_ns;
	st->mem_slack = true; /* the libraries are not the script's */
	lua_State *L = lua_newstate(sstate_alloc, st);
	if (!L)
		return -ENOMEM;
	st->L = L;
	lua_pushlightuserdata(L, (void *)&script_key_state);
	lua_pushlightuserdata(L, st);
	lua_rawset(L, LUA_REGISTRYINDEX);
	luaL_openlibs(L);
	luaJIT_setmode(L, 0, LUAJIT_MODE_ENGINE | LUAJIT_MODE_OFF);
	lua_getglobal(L, "jit");
	if (lua_istable(L, -1)) {
		lua_pushcfunction(L, jit_on_refused);
		lua_setfield(L, -2, "on");
	}
	lua_pop(L, 1);
	lua_sethook(L, sstate_hook, LUA_MASKCOUNT, SCRIPT_HOOK_EVERY);
	st->mem_slack = false;
	if (st->mem_hit) {
		lua_close(L);
		st->L = NULL;
		return -ENOMEM;
	}
	return 0;
}

void sstate_close(struct sstate *st)
{
	if (st->L)
		lua_close(st->L);
	st->L = NULL;
}

struct sstate *sstate_of(lua_State *L)
{
	lua_pushlightuserdata(L, (void *)&script_key_state);
	lua_rawget(L, LUA_REGISTRYINDEX);
	struct sstate *st = lua_touserdata(L, -1);
	lua_pop(L, 1);
	return st;
}

/* ---- errors ----------------------------------------------------------------- */

/* "FILE:LINE" of the innermost Lua function on L's stack ("" when none). */
static void innermost_line(lua_State *L, char *buf, size_t cap)
{
	lua_Debug ar;
	buf[0] = '\0';
	for (int lvl = 0; lua_getstack(L, lvl, &ar); lvl++) {
		if (!lua_getinfo(L, "Sl", &ar))
			continue;
		if (ar.currentline > 0 && ar.short_src[0]) {
			snprintf(buf, cap, "%s:%d", ar.short_src, ar.currentline);
			return;
		}
	}
}

void sstate_place(lua_State *L, char *buf, size_t cap)
{
	innermost_line(L, buf, cap);
}

/* The message handler of protected calls: the error's place when its
 * message does not carry one (errors raised in C functions without a
 * level, and the time limit's, carry the innermost Lua line). */
static int on_error(lua_State *L)
{
	struct sstate *st = sstate_of(L);
	if (st)
		st->mem_slack = true;
	const char *msg = lua_tostring(L, 1);
	if (!msg) {
		/* s:fail's marker, or a non-string error value */
		if (lua_touserdata(L, 1) == (void *)&session_fail_key)
			return 1;
		msg = luaL_typename(L, 1);
		lua_pushfstring(L, "(an error value of type %s)", msg);
		lua_replace(L, 1);
		msg = lua_tostring(L, 1);
	}
	char where[300];
	innermost_line(L, where, sizeof where);
	if (where[0] && strncmp(msg, where, strlen(where)) != 0) {
		lua_pushfstring(L, "%s: %s", where, msg);
		lua_replace(L, 1);
	}
	return 1;
}

/* "defined at FILE:LINE" of the function at idx. */
void sstate_where(lua_State *L, int idx, char *buf, size_t cap)
{
	lua_Debug ar;
	buf[0] = '\0';
	lua_pushvalue(L, idx);
	if (lua_getinfo(L, ">S", &ar) && ar.linedefined > 0)
		snprintf(buf, cap, "%s:%d", ar.short_src, ar.linedefined);
}

void sstate_error(struct sstate *st, lua_State *L, const char *hook, int status, char *err,
		  size_t cap)
{
	const char *msg = lua_tostring(L, -1);
	if (status == LUA_ERRMEM || st->mem_hit) {
		char where[300] = "";
		const char *p = msg ? strstr(msg, ": over the memory limit") : NULL;
		if (p) /* "FILE:LINE: over the memory limit": keep the place */
			snprintf(where, sizeof where, "%.*s: ", (int)(p - msg), msg);
		snprintf(
			err, cap,
			"%sin %s(): the script's Lua state ran out of memory: it would hold more than "
			"%zu MiB (--script-memory)",
			where, hook, st->mem_cap >> 20);
	} else if (st->over_time) {
		char where[300] = "";
		if (msg) {
			/* "FILE:LINE: over the time limit": keep the place */
			const char *p = strstr(msg, ": over the time limit");
			if (p)
				snprintf(where, sizeof where, "%.*s: ", (int)(p - msg), msg);
		}
		snprintf(err, cap,
			 "%sin %s(): still running after %.0f ms, the limit of one call "
			 "(--script-timeout; an endless loop?)",
			 where, hook, (double)st->call_limit_ns / 1e6);
	} else {
		snprintf(err, cap, "in %s(): %s", hook, msg ? msg : "an error without a message");
		/* "in request(): FILE:LINE: what" reads better as
		 * "FILE:LINE: in request(): what" */
		const char *colon = msg ? strstr(msg, ": ") : NULL;
		if (msg && colon && colon > msg && strchr(msg, ':') < colon) {
			snprintf(err, cap, "%.*s: in %s(): %s", (int)(colon - msg), msg, hook,
				 colon + 2);
		}
	}
	for (char *p = err; *p; p++) /* one line */
		if (*p == '\n' || *p == '\r' || *p == '\t')
			*p = ' ';
}

static void call_begin(struct sstate *st, const char *hook)
{
	st->hook = hook;
	st->over_time = false;
	st->mem_hit = false;
	st->call_t0_ns = clock_now_ns();
}

static void call_end(struct sstate *st)
{
	st->call_t0_ns = 0;
	st->mem_slack = false;
}

int sstate_call(struct sstate *st, const char *hook, int nargs, int nres, char *err, size_t cap)
{
	lua_State *L = st->L;
	int fn = lua_gettop(L) - nargs;
	/* below the function: the handler, and the function again (for the
	 * place of an error that has none: memory refused by the allocator) */
	lua_pushvalue(L, fn);
	lua_insert(L, fn);
	lua_pushcfunction(L, on_error);
	lua_insert(L, fn + 1);
	call_begin(st, hook);
	int rc = lua_pcall(L, nargs, nres, fn + 1);
	call_end(st);
	if (rc) {
		sstate_error(st, L, hook, rc, err, cap);
		if (!strncmp(err, "in ", 3)) { /* no place: the hook's definition */
			char where[300], msg[SCRIPT_ERR_CAP];
			sstate_where(L, fn, where, sizeof where);
			snprintf(msg, sizeof msg, "%s", err);
			if (where[0])
				snprintf(err, cap, "%s: %s", where, msg);
		}
		lua_settop(L, fn - 1);
		return -1;
	}
	lua_remove(L, fn + 1);
	lua_remove(L, fn);
	return 0;
}

int sstate_resume(struct sstate *st, lua_State *co, const char *hook, int nargs, char *err,
		  size_t cap)
{
	call_begin(st, hook);
	int rc = lua_resume(co, nargs);
	call_end(st);
	if (rc == 0 || rc == LUA_YIELD)
		return rc;
	if (lua_touserdata(co, -1) == (void *)&session_fail_key)
		return -2; /* s:fail(): the session failed, by the script's choice */
	/* the error's place: the coroutine's stack is still there */
	st->mem_slack = true;
	char where[300] = "";
	innermost_line(co, where, sizeof where);
	const char *msg = lua_tostring(co, -1);
	if (msg && where[0] && strncmp(msg, where, strlen(where)) != 0) {
		lua_pushfstring(co, "%s: %s", where, msg);
		lua_replace(co, -2);
	}
	sstate_error(st, co, hook, rc, err, cap);
	st->mem_slack = false;
	return -1;
}

/* ---- values between states ---------------------------------------------------- */

static int copy_value(lua_State *src, int idx, lua_State *dst, int depth, char *err, size_t cap)
{
	if (idx < 0)
		idx = lua_gettop(src) + idx + 1;
	switch (lua_type(src, idx)) {
	case LUA_TNIL: lua_pushnil(dst); return 0;
	case LUA_TBOOLEAN: lua_pushboolean(dst, lua_toboolean(src, idx)); return 0;
	case LUA_TNUMBER: lua_pushnumber(dst, lua_tonumber(src, idx)); return 0;
	case LUA_TSTRING: {
		size_t n;
		const char *s = lua_tolstring(src, idx, &n);
		lua_pushlstring(dst, s, n);
		return 0;
	}
	case LUA_TTABLE:
		if (depth >= SCRIPT_COPY_DEPTH) {
			snprintf(err, cap, "tables nested more than %d deep (or a cycle)",
				 SCRIPT_COPY_DEPTH);
			return -1;
		}
		if (!lua_checkstack(dst, 4) || !lua_checkstack(src, 4)) {
			snprintf(err, cap, "out of stack");
			return -1;
		}
		lua_newtable(dst);
		lua_pushnil(src);
		while (lua_next(src, idx)) {
			if (copy_value(src, -2, dst, depth + 1, err, cap) ||
			    copy_value(src, -1, dst, depth + 1, err, cap)) {
				lua_pop(src, 2);
				return -1;
			}
			lua_rawset(dst, -3);
			lua_pop(src, 1);
		}
		return 0;
	default:
		snprintf(err, cap,
			 "a %s cannot go from one thread's state to another (nil, "
			 "booleans, numbers, strings and tables of them can)",
			 luaL_typename(src, idx));
		return -1;
	}
}

int sstate_copy(lua_State *src, int idx, lua_State *dst, char *err, size_t cap)
{
	int top = lua_gettop(dst);
	int rc = copy_value(src, idx, dst, 0, err, cap);
	if (rc)
		lua_settop(dst, top);
	return rc;
}

/* ---- which parameters a function reads ---------------------------------------- */

/* LuaJIT's bytecode operand modes (lj_bc.h's BCMode) that read a slot. */
enum { BCM_DST = 1, BCM_BASE = 2, BCM_VAR = 3, BCM_RBASE = 4, BCM_LIT = 6 };

bool sstate_uses_param(lua_State *L, int idx, int k)
{
	if (idx < 0)
		idx = lua_gettop(L) + idx + 1;
	int top = lua_gettop(L);
	bool used = true; /* unknown: yes */
	lua_getglobal(L, "require");
	lua_pushliteral(L, "jit.util");
	if (lua_pcall(L, 1, 1, 0) || !lua_istable(L, -1))
		goto out;
	int ju = lua_gettop(L);
	lua_getfield(L, ju, "funcinfo");
	lua_pushvalue(L, idx);
	if (lua_pcall(L, 1, 1, 0) || !lua_istable(L, -1))
		goto out;
	lua_getfield(L, -1, "params");
	int params = (int)lua_tointeger(L, -1);
	lua_getfield(L, -2, "isvararg");
	bool vararg = lua_toboolean(L, -1);
	lua_getfield(L, -3, "bytecodes");
	int n_bc = (int)lua_tointeger(L, -1);
	lua_getfield(L, -4, "upvalues");
	lua_pop(L, 5);
	if (vararg)
		goto out;
	if (k >= params) {
		used = false; /* not even declared */
		goto out;
	}
	/* its name, for closures that capture it */
	lua_Debug ar;
	const char *pname = NULL;
	(void)ar;
	lua_getglobal(L, "debug");
	lua_getfield(L, -1, "getlocal");
	lua_pushvalue(L, idx);
	lua_pushinteger(L, k + 1);
	if (lua_pcall(L, 2, 1, 0) == 0 && lua_isstring(L, -1))
		pname = lua_tostring(L, -1);
	int pname_idx = lua_gettop(L);
	used = false;
	for (int pc = 1; pc < n_bc && !used; pc++) {
		lua_getfield(L, ju, "funcbc");
		lua_pushvalue(L, idx);
		lua_pushinteger(L, pc);
		if (lua_pcall(L, 2, 2, 0) || !lua_isnumber(L, -2)) {
			used = true; /* cannot tell */
			break;
		}
		uint32_t ins = (uint32_t)(uint64_t)lua_tonumber(L, -2);
		uint32_t m = (uint32_t)lua_tointeger(L, -1);
		lua_pop(L, 2);
		uint32_t ma = m & 7, mb = (m >> 3) & 15, mc = (m >> 7) & 15;
		int a = (int)((ins >> 8) & 0xff), d = (int)(ins >> 16);
		int b = (int)(ins >> 24), c = d & 0xff;
		if (ma == BCM_VAR && a == k)
			used = true;
		if (ma == BCM_BASE && a <= k) /* a call's or RETM's slots from a on */
			used = true;
		/* RET, RET0, RET1: d - 1 values from a (UCLO's rbase reads nothing) */
		if (ma == BCM_RBASE && mc == BCM_LIT && a <= k && k <= a + d - 2)
			used = true;
		if (mb == BCM_VAR || mb == BCM_BASE || mb == BCM_RBASE) {
			if (b == k || (mb == BCM_RBASE && b <= k && k <= c))
				used = true;
			if (mc == BCM_VAR && c == k)
				used = true;
		} else if (mc == BCM_VAR || mc == BCM_BASE || mc == BCM_RBASE) {
			if (d == k)
				used = true;
		}
	}
	/* a closure that captures it by name */
	for (int gk = -1; !used && pname && gk > -4096; gk--) {
		lua_getfield(L, ju, "funck");
		lua_pushvalue(L, idx);
		lua_pushinteger(L, gk);
		if (lua_pcall(L, 2, 1, 0) || lua_isnil(L, -1)) {
			lua_pop(L, 1);
			break;
		}
		if (!lua_isstring(L, -1) && !lua_istable(L, -1)) { /* a child prototype */
			for (int u = 0; u < 256 && !used; u++) {
				lua_getfield(L, ju, "funcuvname");
				lua_pushvalue(L, -2);
				lua_pushinteger(L, u);
				if (lua_pcall(L, 2, 1, 0) || !lua_isstring(L, -1)) {
					lua_pop(L, 1);
					break;
				}
				used = strcmp(lua_tostring(L, -1), lua_tostring(L, pname_idx)) == 0;
				lua_pop(L, 1);
			}
		}
		lua_pop(L, 1);
	}
out:
	lua_settop(L, top);
	return used;
}

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
