/* pacer — scripts: a Lua state (script_int.h). Its allocator counts what
 * the state holds and refuses past the cap (--script-memory); a count hook
 * checks the running call's time against its limit (--script-timeout;
 * LuaJIT's compiled traces would not run the hook, so the JIT compiler is
 * off and the interpreter runs every script); calls are protected and
 * their errors come back as one line with the file, the line and the hook.
 * Also values copied between states (thread:get/set), and which
 * parameters a function reads (response()'s headers and body). */
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
	if (!L) /* no memory, or a LuaJIT that takes no allocator (64-bit without GC64) */
		return -ENOTSUP;
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
