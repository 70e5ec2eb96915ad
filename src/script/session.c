/* pacer — scripts: the pacer table and sessions (script_int.h). A script
 * registers its session with pacer.session(function(s) ... end); each
 * arrival runs that function in a coroutine of its own (flow.c), and the
 * session object's methods yield what the session wants: a request
 * (s:get, s:post, s:put, s:patch, s:delete, s:head, s:request), which
 * resumes with the response's status, header fields and body (or nil and
 * the error's kind); a think time (s:sleep); or its failure (s:fail). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <lauxlib.h>

#include "script/script_int.h"
#include "util/units.h"

const char session_yield_request;
const char session_yield_sleep;
static const char session_fn_key; /* the registered session function */
static const char session_mt_key; /* the session objects' metatable */

/* pacer.session(fn): the session every arrival runs */
static int l_session(lua_State *L)
{
	luaL_checktype(L, 1, LUA_TFUNCTION);
	lua_pushlightuserdata(L, (void *)&session_fn_key);
	lua_pushvalue(L, 1);
	lua_rawset(L, LUA_REGISTRYINDEX);
	return 0;
}

void session_push_fn(lua_State *L)
{
	lua_pushlightuserdata(L, (void *)&session_fn_key);
	lua_rawget(L, LUA_REGISTRYINDEX);
}

/* A step: build the request (wrk.headers under the step's own fields) and
 * yield it with its name and whether its failure ends the session. */
static int step(lua_State *L, const char *method, const char *path, int body_i, int opts_i)
{
	size_t blen = 0;
	const char *body = NULL;
	if (body_i && !lua_isnoneornil(L, body_i)) {
		if (!lua_isstring(L, body_i))
			return luaL_error(L, "a step's body must be a string, not a %s",
					  luaL_typename(L, body_i));
		body = lua_tolstring(L, body_i, &blen);
	}
	const char *name = NULL;
	size_t name_len = 0;
	bool check = true;
	int hdrs = 0;
	if (opts_i && !lua_isnoneornil(L, opts_i)) {
		if (!lua_istable(L, opts_i))
			return luaL_error(L, "a step's options must be a table, not a %s",
					  luaL_typename(L, opts_i));
		lua_getfield(L, opts_i, "name");
		if (!lua_isnil(L, -1)) {
			if (!lua_isstring(L, -1))
				return luaL_error(L, "a step's name must be a string");
			name = lua_tolstring(L, -1, &name_len);
		}
		lua_getfield(L, opts_i, "check");
		if (!lua_isnil(L, -1))
			check = lua_toboolean(L, -1);
		lua_pop(L, 1);
		lua_getfield(L, opts_i, "headers");
		if (!lua_isnil(L, -1) && !lua_istable(L, -1))
			return luaL_error(L, "a step's headers must be a table");
		hdrs = lua_istable(L, -1) ? lua_gettop(L) : 0;
		if (!hdrs)
			lua_pop(L, 1);
	}
	/* the fields: wrk.headers, then the step's over them */
	lua_newtable(L);
	int merged = lua_gettop(L);
	lua_getglobal(L, "wrk");
	if (lua_istable(L, -1)) {
		lua_getfield(L, -1, "headers");
		if (lua_istable(L, -1)) {
			lua_pushnil(L);
			while (lua_next(L, -2)) {
				lua_pushvalue(L, -2);
				lua_insert(L, -2);
				lua_rawset(L, merged);
			}
		}
		lua_pop(L, 1);
	}
	lua_pop(L, 1);
	if (hdrs) {
		lua_pushnil(L);
		while (lua_next(L, hdrs)) {
			lua_pushvalue(L, -2);
			lua_insert(L, -2);
			lua_rawset(L, merged);
		}
	}
	sreq_format(L, method, path, merged, body, blen);
	lua_pushlightuserdata(L, (void *)&session_yield_request);
	lua_insert(L, -2);
	if (name) {
		lua_pushlstring(L, name, name_len);
	} else {
		/* "METHOD path", the query left out */
		size_t plen = strcspn(path, "?");
		lua_pushfstring(L, "%s %s", method, path);
		lua_pushlstring(L, lua_tostring(L, -1), strlen(method) + 1 + plen);
		lua_remove(L, -2);
	}
	lua_pushboolean(L, check);
	return lua_yield(L, 4);
}

static void check_self(lua_State *L)
{
	lua_pushlightuserdata(L, (void *)&session_mt_key);
	lua_rawget(L, LUA_REGISTRYINDEX);
	if (!lua_getmetatable(L, 1) || !lua_rawequal(L, -1, -2))
		luaL_error(L, "call a session's methods with ':' (s:get(...), not s.get(...))");
	lua_pop(L, 2);
}

static int s_get(lua_State *L)
{
	check_self(L);
	return step(L, "GET", luaL_checkstring(L, 2), 0, 3);
}

static int s_head(lua_State *L)
{
	check_self(L);
	return step(L, "HEAD", luaL_checkstring(L, 2), 0, 3);
}

static int s_delete(lua_State *L)
{
	check_self(L);
	return step(L, "DELETE", luaL_checkstring(L, 2), 0, 3);
}

static int s_post(lua_State *L)
{
	check_self(L);
	return step(L, "POST", luaL_checkstring(L, 2), 3, 4);
}

static int s_put(lua_State *L)
{
	check_self(L);
	return step(L, "PUT", luaL_checkstring(L, 2), 3, 4);
}

static int s_patch(lua_State *L)
{
	check_self(L);
	return step(L, "PATCH", luaL_checkstring(L, 2), 3, 4);
}

/* s:request{method=, path=, headers=, body=, name=, check=} */
static int s_request(lua_State *L)
{
	check_self(L);
	luaL_checktype(L, 2, LUA_TTABLE);
	lua_getfield(L, 2, "method");
	const char *method = lua_isnil(L, -1) ? "GET" : luaL_checkstring(L, -1);
	lua_getfield(L, 2, "path");
	const char *path = luaL_checkstring(L, -1);
	lua_getfield(L, 2, "body");
	int body = lua_gettop(L);
	return step(L, method, path, body, 2);
}

/* s:sleep(d): think time, d seconds (a number) or a duration ("500ms") */
static int s_sleep(lua_State *L)
{
	check_self(L);
	double s;
	if (lua_type(L, 2) == LUA_TNUMBER) {
		s = lua_tonumber(L, 2);
		if (!(s >= 0) || s > 86400)
			return luaL_error(L, "s:sleep(%f): seconds from 0 to a day", s);
	} else {
		uint64_t ns;
		const char *d = luaL_checkstring(L, 2);
		if (units_parse_duration_ns(d, &ns) || ns > 86400ull * 1000000000ull)
			return luaL_error(
				L, "s:sleep('%s'): expected seconds or a duration like 500ms", d);
		s = (double)ns / 1e9;
	}
	lua_pushlightuserdata(L, (void *)&session_yield_sleep);
	lua_pushnumber(L, s);
	return lua_yield(L, 2);
}

/* s:fail(why): the session ends here, failed */
static int s_fail(lua_State *L)
{
	check_self(L);
	lua_pushlightuserdata(L, (void *)&session_fail_key);
	return lua_error(L);
}

void session_push_obj(lua_State *co)
{
	lua_newtable(co);
	lua_pushlightuserdata(co, (void *)&session_mt_key);
	lua_rawget(co, LUA_REGISTRYINDEX);
	lua_setmetatable(co, -2);
}

void session_install(lua_State *L)
{
	static const luaL_Reg methods[] = {
		{"get", s_get},       {"post", s_post}, {"put", s_put},         {"patch", s_patch},
		{"delete", s_delete}, {"head", s_head}, {"request", s_request}, {"sleep", s_sleep},
		{"fail", s_fail},     {NULL, NULL}};
	lua_pushlightuserdata(L, (void *)&session_mt_key);
	lua_newtable(L);
	lua_newtable(L);
	luaL_register(L, NULL, methods);
	lua_setfield(L, -2, "__index");
	lua_rawset(L, LUA_REGISTRYINDEX);

	lua_newtable(L);
	lua_pushcfunction(L, l_session);
	lua_setfield(L, -2, "session");
	lua_pushstring(L, PACER_VERSION);
	lua_setfield(L, -2, "version");
	lua_setglobal(L, "pacer");
}
