/* pacer — scripts: the engine's flow callbacks (engine.h) over a worker's
 * Lua state (script_int.h). Each runs on that worker's thread alone.
 *
 * wrk's hooks: a flow is one request. Open loop: request() runs when the
 * arrival is due (its time is the generator's lateness: flow.c of the
 * engine measures it after the call); closed loop: delay() first, then
 * the request when the delay is over. The response goes to response().
 *
 * Sessions: a flow is a coroutine running the registered function; its
 * clock starts at the arrival's due time, moves to each response's
 * arrival and by each sleep, and is the due time of its next request, so
 * that a step's latency counts from when it was due. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <lauxlib.h>

#include "script/script_int.h"

/* Record a hook's failure (one line): the step ends on every worker. */
static int fail(struct sworker *w, const char *fmt, const char *a, const char *b)
{
	snprintf(w->err, sizeof w->err, fmt, a, b);
	w->failed = true;
	atomic_store(&w->st.sc->failed, true);
	return -1;
}

static int fail_lua(struct sworker *w)
{
	w->failed = true;
	atomic_store(&w->st.sc->failed, true);
	return -1;
}

/* Flow f's record (the table grows with the engine's handles). Each record
 * is allocated on its own and kept: the engine holds &fl->req while the
 * request is queued or in flight, so a record never moves. */
static struct sflow *flow_at(struct sworker *w, uint32_t f)
{
	if (f >= w->flows_cap) {
		uint32_t cap = w->flows_cap ? w->flows_cap : 64;
		while (cap <= f)
			cap *= 2;
		struct sflow **n = realloc(w->flows, (size_t)cap * sizeof *n);
		if (!n)
			return NULL;
		for (uint32_t i = w->flows_cap; i < cap; i++)
			n[i] = NULL;
		w->flows = n;
		w->flows_cap = cap;
	}
	if (!w->flows[f]) {
		w->flows[f] = calloc(1, sizeof *w->flows[f]);
		if (!w->flows[f])
			return NULL;
		w->flows[f]->ref = LUA_NOREF;
	}
	return w->flows[f];
}

void flow_free_all(struct sworker *w)
{
	for (uint32_t i = 0; i < w->flows_cap; i++)
		if (w->flows[i]) {
			free(w->flows[i]->buf);
			free(w->flows[i]);
		}
	free(w->flows);
	w->flows = NULL;
	w->flows_cap = 0;
}

/* Copy a request into the flow's own buffer. */
static int flow_keep(struct sflow *fl, const char *buf, size_t len, bool head, uint16_t name)
{
	if (len > fl->cap) {
		size_t cap = fl->cap ? fl->cap : 256;
		while (cap < len)
			cap *= 2;
		char *b = realloc(fl->buf, cap);
		if (!b)
			return -ENOMEM;
		fl->buf = b;
		fl->cap = cap;
	}
	memcpy(fl->buf, buf, len);
	fl->req = (struct engine_req){.buf = fl->buf, .len = len, .head = head, .name = name};
	return 0;
}

static void unref(struct sworker *w, struct sflow *fl)
{
	if (fl->ref != LUA_NOREF && fl->ref != LUA_REFNIL)
		luaL_unref(w->st.L, LUA_REGISTRYINDEX, fl->ref);
	fl->ref = LUA_NOREF;
}

/* thread:stop() asked in a hook: handed to the engine once. */
static void stop_check(struct sworker *w, struct engine_flow_next *nx)
{
	if (w->stop_asked && !w->stopped) {
		w->stopped = true;
		nx->stop = true;
	}
}

/* ---- wrk's hooks --------------------------------------------------------------- */

/* request()'s result at idx (a string) into fl; fails the hook otherwise. */
static int take_request(struct sworker *w, struct sflow *fl, int idx)
{
	lua_State *L = w->st.L;
	char where[300];
	size_t len;
	if (lua_type(L, idx) != LUA_TSTRING) {
		lua_rawgeti(L, LUA_REGISTRYINDEX, w->ref_request);
		sstate_where(L, -1, where, sizeof where);
		lua_pop(L, 1);
		return fail(w,
			    "%s: in request(): it returned %s, not a request (a string, as "
			    "wrk.format() makes)",
			    where, lua_typename(L, lua_type(L, idx)));
	}
	const char *buf = lua_tolstring(L, idx, &len);
	bool head = false;
	const char *why = sreq_check(buf, len, &head);
	if (why) {
		lua_rawgeti(L, LUA_REGISTRYINDEX, w->ref_request);
		sstate_where(L, -1, where, sizeof where);
		lua_pop(L, 1);
		return fail(w, "%s: in request(): it returned a string that is not a request: %s",
			    where, why);
	}
	if (flow_keep(fl, buf, len, head, 0))
		return fail(w, "%s%s", "out of memory for a request", "");
	return 0;
}

/* Call request() into fl (its second value kept for response()). */
static int call_request(struct sworker *w, struct sflow *fl)
{
	lua_State *L = w->st.L;
	lua_rawgeti(L, LUA_REGISTRYINDEX, w->ref_request);
	if (sstate_call(&w->st, "request", 0, 2, w->err, sizeof w->err))
		return fail_lua(w);
	int rc = take_request(w, fl, -2);
	if (!rc && !lua_isnil(L, -1)) {
		lua_pushvalue(L, -1);
		fl->ref = luaL_ref(L, LUA_REGISTRYINDEX);
	}
	lua_pop(L, 2);
	return rc;
}

/* The flow's request, due at at_ns: the first one made before the load,
 * request()'s, or the worker's static one. */
static int wrk_send(struct sworker *w, struct sflow *fl, uint64_t at_ns,
		    struct engine_flow_next *nx)
{
	if (w->first_pending) {
		w->first_pending = false;
		bool head = false;
		(void)sreq_check(w->first_buf, w->first_len, &head);
		if (flow_keep(fl, w->first_buf, w->first_len, head, 0))
			return fail(w, "%s%s", "out of memory for a request", "");
		fl->ref = w->first_ctx;
		w->first_ctx = LUA_NOREF;
	} else if (w->ref_request != LUA_NOREF) {
		int rc = call_request(w, fl);
		if (rc)
			return rc;
	} else {
		fl->req = w->static_req;
	}
	*nx = (struct engine_flow_next){.op = ENGINE_FLOW_SEND, .req = &fl->req, .at_ns = at_ns};
	stop_check(w, nx);
	return 0;
}

static int wrk_start(struct sworker *w, struct sflow *fl, uint64_t due_ns,
		     struct engine_flow_next *nx)
{
	fl->ref = LUA_NOREF;
	fl->delayed = false;
	if (!w->st.sc->cfg.open_loop && w->ref_delay != LUA_NOREF) {
		/* closed loop: think time before the request, as wrk's delay() */
		lua_State *L = w->st.L;
		lua_rawgeti(L, LUA_REGISTRYINDEX, w->ref_delay);
		if (sstate_call(&w->st, "delay", 0, 1, w->err, sizeof w->err))
			return fail_lua(w);
		double ms = lua_tonumber(L, -1);
		lua_pop(L, 1);
		if (!(ms > 0))
			ms = 0;
		if (ms > 86400e3)
			ms = 86400e3;
		fl->delayed = true;
		*nx = (struct engine_flow_next){.op = ENGINE_FLOW_WAIT,
						.at_ns = due_ns + (uint64_t)(ms * 1e6)};
		stop_check(w, nx);
		return 0;
	}
	return wrk_send(w, fl, due_ns, nx);
}

/* The response's header fields as a table (a lookup that misses tries the
 * name without regard to case, so that headers["X-Token"] finds an HTTP/2
 * server's x-token). */
static int headers_index(lua_State *L)
{
	const char *k = lua_tostring(L, 2);
	if (!k)
		return 0;
	lua_pushnil(L);
	while (lua_next(L, 1)) {
		const char *n = lua_tostring(L, -2);
		if (lua_type(L, -2) == LUA_TSTRING && !strcasecmp(n, k))
			return 1;
		lua_pop(L, 1);
	}
	return 0;
}

static void push_headers(lua_State *L, const struct engine_flow_result *r)
{
	lua_createtable(L, 0, (int)r->n_fields);
	const char *p = r->hbuf, *end = r->hbuf ? r->hbuf + r->hbuf_len : NULL;
	for (uint32_t i = 0; p && i < r->n_fields && p < end; i++) {
		size_t nl = strlen(p);
		const char *v = p + nl + 1;
		size_t vl = strlen(v);
		lua_pushlstring(L, p, nl);
		lua_pushlstring(L, v, vl);
		lua_rawset(L, -3);
		p = v + vl + 1;
	}
	lua_newtable(L);
	lua_pushcfunction(L, headers_index);
	lua_setfield(L, -2, "__index");
	lua_setmetatable(L, -2);
}

static int wrk_result(struct sworker *w, struct sflow *fl, const struct engine_flow_result *r,
		      uint64_t now, struct engine_flow_next *nx)
{
	const struct script_info *in = &w->st.sc->info;
	if (r->status && w->ref_response != LUA_NOREF) {
		/* wrk calls response() for complete responses only */
		lua_State *L = w->st.L;
		lua_rawgeti(L, LUA_REGISTRYINDEX, w->ref_response);
		lua_pushinteger(L, r->status);
		if (in->want_headers)
			push_headers(L, r);
		else
			lua_pushnil(L);
		if (in->want_body)
			lua_pushlstring(L, r->body ? r->body : "", r->body ? r->body_len : 0);
		else
			lua_pushnil(L);
		int nargs = 3;
		if (fl->ref != LUA_NOREF) {
			lua_rawgeti(L, LUA_REGISTRYINDEX, fl->ref);
			nargs = 4;
		}
		if (sstate_call(&w->st, "response", nargs, 0, w->err, sizeof w->err))
			return fail_lua(w);
	}
	unref(w, fl);
	*nx = (struct engine_flow_next){.op = ENGINE_FLOW_END, .at_ns = now};
	stop_check(w, nx);
	return 0;
}

/* ---- sessions ---------------------------------------------------------------- */

uint16_t flow_name_index(struct sworker *w, const char *name, size_t len)
{
	lua_State *L = w->st.L;
	struct script *sc = w->st.sc;
	lua_pushlightuserdata(L, (void *)&script_key_names);
	lua_rawget(L, LUA_REGISTRYINDEX);
	if (!lua_istable(L, -1)) {
		lua_pop(L, 1);
		lua_newtable(L);
		lua_pushlightuserdata(L, (void *)&script_key_names);
		lua_pushvalue(L, -2);
		lua_rawset(L, LUA_REGISTRYINDEX);
	}
	lua_pushlstring(L, name, len);
	lua_rawget(L, -2);
	if (lua_isnumber(L, -1)) {
		uint16_t idx = (uint16_t)lua_tointeger(L, -1);
		lua_pop(L, 2);
		return idx;
	}
	lua_pop(L, 1);
	/* the first time this worker meets the name: the shared list, locked */
	struct req_names *nm = sc->cfg.names;
	uint16_t idx = RESULT_MAX_NAMES;
	pthread_mutex_lock(&sc->names_mu);
	uint32_t own = nm->other ? nm->n - 1 : nm->n;
	bool found = false;
	for (uint32_t i = 0; i < own && !found; i++)
		if (strlen(nm->name[i]) == len && !memcmp(nm->name[i], name, len)) {
			idx = (uint16_t)i;
			found = true;
		}
	if (!found && own < RESULT_MAX_NAMES && !nm->other) {
		char *c = strndup(name, len);
		if (c) {
			nm->name[nm->n] = c;
			idx = (uint16_t)nm->n++;
			found = true;
		}
	}
	if (!found) {
		/* past RESULT_MAX_NAMES: pooled into "other" */
		if (!nm->other) {
			nm->name[nm->n] = strdup(REQ_NAMES_OTHER);
			if (nm->name[nm->n]) {
				nm->n++;
				nm->other = true;
			}
		}
		idx = RESULT_MAX_NAMES;
		uint64_t h = 1469598103934665603ull; /* FNV-1a, to count distinct names */
		for (size_t i = 0; i < len; i++)
			h = (h ^ (unsigned char)name[i]) * 1099511628211ull;
		bool seen = false;
		for (uint32_t i = 0; i < sc->n_pooled_hash && !seen; i++)
			seen = sc->pooled_hash[i] == h;
		if (!seen) {
			nm->pooled++;
			if (sc->n_pooled_hash < sizeof sc->pooled_hash / sizeof sc->pooled_hash[0])
				sc->pooled_hash[sc->n_pooled_hash++] = h;
		}
	}
	pthread_mutex_unlock(&sc->names_mu);
	lua_pushlstring(L, name, len);
	lua_pushinteger(L, idx);
	lua_rawset(L, -3);
	lua_pop(L, 1);
	return idx;
}

static lua_State *coroutine_of(struct sworker *w, struct sflow *fl)
{
	lua_rawgeti(w->st.L, LUA_REGISTRYINDEX, fl->ref);
	lua_State *co = lua_tothread(w->st.L, -1);
	lua_pop(w->st.L, 1);
	return co;
}

static void session_end(struct sworker *w, struct sflow *fl, bool failed,
			struct engine_flow_next *nx)
{
	unref(w, fl);
	*nx = (struct engine_flow_next){.op = ENGINE_FLOW_END, .at_ns = fl->t_ns, .failed = failed};
}

/* Resume the session's coroutine with nargs values on its stack, and say
 * what it wants next. */
static int session_run(struct sworker *w, struct sflow *fl, lua_State *co, int nargs,
		       struct engine_flow_next *nx)
{
	int rc = sstate_resume(&w->st, co, "session", nargs, w->err, sizeof w->err);
	if (rc == -2) { /* s:fail() */
		session_end(w, fl, true, nx);
		stop_check(w, nx);
		return 0;
	}
	if (rc < 0)
		return fail_lua(w);
	if (rc == 0) { /* the function returned: done */
		session_end(w, fl, fl->failed, nx);
		stop_check(w, nx);
		return 0;
	}
	/* what the session's methods yield starts with their marker */
	const void *kind = lua_touserdata(co, 1);
	char where[300];
	sstate_place(co, where, sizeof where);
	if (kind == &session_yield_sleep) {
		double s = lua_tonumber(co, 2);
		lua_settop(co, 0);
		fl->t_ns += (uint64_t)(s * 1e9);
		*nx = (struct engine_flow_next){.op = ENGINE_FLOW_WAIT, .at_ns = fl->t_ns};
	} else if (kind == &session_yield_request) {
		size_t len, name_len;
		const char *buf = lua_tolstring(co, 2, &len);
		const char *name = lua_tolstring(co, 3, &name_len);
		fl->check = lua_toboolean(co, 4);
		bool head = false;
		const char *why = buf ? sreq_check(buf, len, &head) : "no request";
		if (why) {
			lua_settop(co, 0);
			return fail(w, "%s: in session(): a step's request is not one: %s", where,
				    why);
		}
		uint16_t idx = flow_name_index(w, name ? name : "step", name ? name_len : 4);
		int krc = flow_keep(fl, buf, len, head, idx);
		lua_settop(co, 0);
		if (krc)
			return fail(w, "%s%s", "out of memory for a request", "");
		*nx = (struct engine_flow_next){
			.op = ENGINE_FLOW_SEND, .req = &fl->req, .at_ns = fl->t_ns};
	} else {
		lua_settop(co, 0);
		return fail(w,
			    "%s: in session(): a coroutine.yield() of the script's own reached "
			    "pacer%s (yield only inside coroutines the session makes)",
			    where, "");
	}
	stop_check(w, nx);
	return 0;
}

static int session_start(struct sworker *w, struct sflow *fl, uint64_t due_ns,
			 struct engine_flow_next *nx)
{
	lua_State *L = w->st.L;
	fl->t_ns = due_ns;
	fl->failed = false;
	fl->check = true;
	lua_State *co = lua_newthread(L);
	fl->ref = luaL_ref(L, LUA_REGISTRYINDEX);
	if (!co || fl->ref == LUA_REFNIL)
		return fail(w, "%s%s", "out of memory for a session", "");
	lua_rawgeti(L, LUA_REGISTRYINDEX, w->ref_session);
	lua_xmove(L, co, 1);
	session_push_obj(co);
	return session_run(w, fl, co, 1, nx);
}

static int session_result(struct sworker *w, struct sflow *fl, const struct engine_flow_result *r,
			  uint64_t now, struct engine_flow_next *nx)
{
	fl->t_ns = now;
	bool bad = !r->status || !r->ok;
	fl->failed = fl->failed || bad;
	if (bad && fl->check) {
		session_end(w, fl, true, nx);
		stop_check(w, nx);
		return 0;
	}
	lua_State *co = coroutine_of(w, fl);
	int nargs;
	if (r->status) {
		lua_pushinteger(co, r->status);
		push_headers(co, r);
		lua_pushlstring(co, r->body ? r->body : "", r->body ? r->body_len : 0);
		nargs = 3;
	} else {
		lua_pushnil(co);
		lua_pushstring(co, err_kind_name(r->err));
		nargs = 2;
	}
	return session_run(w, fl, co, nargs, nx);
}

/* ---- the callbacks -------------------------------------------------------------- */

static int cb_start(void *ws, uint32_t f, uint64_t due_ns, struct engine_flow_next *nx)
{
	struct sworker *w = ws;
	struct sflow *fl = flow_at(w, f);
	if (!fl)
		return fail(w, "%s%s", "out of memory for a flow", "");
	fl->ref = LUA_NOREF;
	if (w->ref_session != LUA_NOREF)
		return session_start(w, fl, due_ns, nx);
	return wrk_start(w, fl, due_ns, nx);
}

static int cb_result(void *ws, uint32_t f, const struct engine_flow_result *r, uint64_t now,
		     struct engine_flow_next *nx)
{
	struct sworker *w = ws;
	struct sflow *fl = w->flows[f];
	if (w->ref_session != LUA_NOREF)
		return session_result(w, fl, r, now, nx);
	return wrk_result(w, fl, r, now, nx);
}

static int cb_wake(void *ws, uint32_t f, uint64_t due_ns, struct engine_flow_next *nx)
{
	struct sworker *w = ws;
	struct sflow *fl = w->flows[f];
	if (w->ref_session != LUA_NOREF) {
		fl->t_ns = due_ns;
		return session_run(w, fl, coroutine_of(w, fl), 0, nx);
	}
	return wrk_send(w, fl, due_ns, nx); /* delay() is over */
}

static void cb_abandon(void *ws, uint32_t f)
{
	struct sworker *w = ws;
	if (f < w->flows_cap && w->flows[f])
		unref(w, w->flows[f]);
}

const struct engine_flow_ops script_flow_ops_tab = {
	.start = cb_start,
	.result = cb_result,
	.wake = cb_wake,
	.abandon = cb_abandon,
};
