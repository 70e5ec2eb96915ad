/* pacer — scripts: the wrk table (script_int.h), as wrk's SCRIPTING file
 * describes it: scheme, host, port, method, path, headers, body, thread;
 * wrk.format, wrk.lookup, wrk.connect; the thread objects setup() gets
 * (get, set, stop, addr), the addresses lookup returns, and the stats
 * objects done() gets (min, max, mean, stdev, percentile, (i), #). Our own
 * code, after the interface wrk documents. */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <lauxlib.h>

#include "http/url.h"
#include "script/script_int.h"

#define MT_THREAD "pacer.wrk.thread"
#define MT_ADDR "pacer.wrk.addr"
#define MT_STATS "pacer.wrk.stats"
#define CONNECT_TEST_MS 2000 /* wrk.connect: how long a test connection may take */

/* ---- wrk.format ------------------------------------------------------------ */

/* wrk.format(method, path, headers, body): nil arguments take wrk's own. */
static int l_format(lua_State *L)
{
	lua_settop(L, 4);
	lua_getglobal(L, "wrk");
	int wrk = lua_gettop(L);
	if (!lua_istable(L, wrk))
		return luaL_error(L, "the global wrk is not a table");
	const char *method = lua_isnil(L, 1) ? NULL : luaL_checkstring(L, 1);
	const char *path = lua_isnil(L, 2) ? NULL : luaL_checkstring(L, 2);
	if (!method) {
		lua_getfield(L, wrk, "method");
		method = lua_isstring(L, -1) ? lua_tostring(L, -1) : "GET";
	}
	if (!path) {
		lua_getfield(L, wrk, "path");
		path = lua_isstring(L, -1) ? lua_tostring(L, -1) : "/";
	}
	int hidx = 3;
	if (lua_isnil(L, 3)) {
		lua_getfield(L, wrk, "headers");
		hidx = lua_gettop(L);
	}
	if (!lua_istable(L, hidx) && !lua_isnil(L, hidx))
		return luaL_argerror(L, 3, "headers must be a table");
	int bidx = 4;
	if (lua_isnil(L, 4)) {
		lua_getfield(L, wrk, "body");
		bidx = lua_gettop(L);
	}
	size_t blen = 0;
	const char *body = lua_isnil(L, bidx) ? NULL : lua_tolstring(L, bidx, &blen);
	if (!body && !lua_isnil(L, bidx))
		return luaL_argerror(L, 4, "the body must be a string");
	sreq_format(L, method, path, lua_istable(L, hidx) ? hidx : 0, body, blen);
	return 1;
}

/* ---- addresses ----------------------------------------------------------------- */

static struct net_addr *check_addr(lua_State *L, int idx)
{
	return luaL_checkudata(L, idx, MT_ADDR);
}

static void push_addr(lua_State *L, const struct net_addr *a)
{
	struct net_addr *u = lua_newuserdata(L, sizeof *u);
	*u = *a;
	luaL_getmetatable(L, MT_ADDR);
	lua_setmetatable(L, -2);
}

static int l_addr_tostring(lua_State *L)
{
	char buf[160];
	lua_pushstring(L, net_addr_str(check_addr(L, 1), buf, sizeof buf));
	return 1;
}

/* wrk.lookup(host, service): every address of host, a table of addresses */
static int l_lookup(lua_State *L)
{
	const char *host = luaL_checkstring(L, 1);
	const char *service = luaL_optstring(L, 2, "http");
	struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM};
	struct addrinfo *res = NULL;
	int rc = getaddrinfo(host, service, &hints, &res);
	if (rc)
		return luaL_error(L, "wrk.lookup: cannot resolve %s:%s: %s", host, service,
				  gai_strerror(rc));
	lua_newtable(L);
	int i = 1;
	for (struct addrinfo *a = res; a; a = a->ai_next) {
		struct net_addr na = {0};
		if (a->ai_addrlen > sizeof na.ss)
			continue;
		memcpy(&na.ss, a->ai_addr, a->ai_addrlen);
		na.len = a->ai_addrlen;
		push_addr(L, &na);
		lua_rawseti(L, -2, i++);
	}
	freeaddrinfo(res);
	return 1;
}

/* wrk.connect(addr): whether a connection to addr opens (within 2 s) */
static int l_connect(lua_State *L)
{
	const struct net_addr *a = check_addr(L, 1);
	bool ok = false;
	int fd = socket(a->ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd >= 0) {
		int rc = connect(fd, (const struct sockaddr *)&a->ss, a->len);
		if (rc == 0) {
			ok = true;
		} else if (errno == EINPROGRESS) {
			struct pollfd p = {.fd = fd, .events = POLLOUT};
			int e = 0;
			socklen_t el = sizeof e;
			ok = poll(&p, 1, CONNECT_TEST_MS) == 1 &&
			     getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &el) == 0 && e == 0;
		}
		close(fd);
	}
	lua_pushboolean(L, ok);
	return 1;
}

/* ---- threads --------------------------------------------------------------------- */

static struct sworker *check_thread(lua_State *L, int idx)
{
	struct sworker **w = luaL_checkudata(L, idx, MT_THREAD);
	return *w;
}

void wrk_push_thread(lua_State *L, struct sworker *w)
{
	struct sworker **u = lua_newuserdata(L, sizeof *u);
	*u = w;
	luaL_getmetatable(L, MT_THREAD);
	lua_setmetatable(L, -2);
}

/* thread:get(name): a global of the thread's state, copied */
static int l_thread_get(lua_State *L)
{
	struct sworker *w = check_thread(L, 1);
	const char *name = luaL_checkstring(L, 2);
	if (!w->st.L)
		return luaL_error(L, "thread:get: the thread has no state yet");
	if (w->st.L == L) { /* its own */
		lua_getglobal(L, name);
		return 1;
	}
	char err[256];
	lua_getglobal(w->st.L, name);
	int rc = sstate_copy(w->st.L, -1, L, err, sizeof err);
	lua_pop(w->st.L, 1);
	if (rc)
		return luaL_error(L, "thread:get('%s'): %s", name, err);
	return 1;
}

/* thread:set(name, value): a global of the thread's state, copied there */
static int l_thread_set(lua_State *L)
{
	struct sworker *w = check_thread(L, 1);
	const char *name = luaL_checkstring(L, 2);
	lua_settop(L, 3);
	if (!w->st.L)
		return luaL_error(L, "thread:set: the thread has no state yet");
	if (w->st.L == L) {
		lua_setglobal(L, name);
		return 0;
	}
	char err[256];
	if (sstate_copy(L, 3, w->st.L, err, sizeof err))
		return luaL_error(L, "thread:set('%s'): %s", name, err);
	lua_setglobal(w->st.L, name);
	return 0;
}

/* thread:stop(): the thread issues no more requests (its load ends; what
 * is in flight completes) */
static int l_thread_stop(lua_State *L)
{
	check_thread(L, 1)->stop_asked = true;
	return 0;
}

static int l_thread_index(lua_State *L)
{
	struct sworker *w = check_thread(L, 1);
	const char *key = luaL_checkstring(L, 2);
	if (!strcmp(key, "get"))
		lua_pushcfunction(L, l_thread_get);
	else if (!strcmp(key, "set"))
		lua_pushcfunction(L, l_thread_set);
	else if (!strcmp(key, "stop"))
		lua_pushcfunction(L, l_thread_stop);
	else if (!strcmp(key, "addr"))
		push_addr(L, &w->addr);
	else if (!strcmp(key, "id"))
		lua_pushinteger(L, (lua_Integer)w->id + 1);
	else
		lua_pushnil(L);
	return 1;
}

static int l_thread_newindex(lua_State *L)
{
	struct sworker *w = check_thread(L, 1);
	const char *key = luaL_checkstring(L, 2);
	if (strcmp(key, "addr") != 0)
		return luaL_error(L, "a thread has no field '%s' to set (only addr)", key);
	w->addr = *check_addr(L, 3);
	w->addr_set = true;
	return 0;
}

/* ---- stats (done()'s latency and requests) ----------------------------------------- */

struct lstats {
	const struct hist *h;
	double div;
};

void wrk_push_stats(lua_State *L, const struct hist *h, double div)
{
	struct lstats *s = lua_newuserdata(L, sizeof *s);
	s->h = h;
	s->div = div > 0 ? div : 1;
	luaL_getmetatable(L, MT_STATS);
	lua_setmetatable(L, -2);
}

static struct lstats *check_stats(lua_State *L, int idx)
{
	return luaL_checkudata(L, idx, MT_STATS);
}

static int l_stats_percentile(lua_State *L)
{
	struct lstats *s = check_stats(L, 1);
	double p = luaL_checknumber(L, 2);
	lua_pushnumber(L, (double)hist_percentile(s->h, p) / s->div);
	return 1;
}

/* stats(i): the value and count of the i-th non-empty bucket, from 1 */
static int l_stats_call(lua_State *L)
{
	struct lstats *s = check_stats(L, 1);
	lua_Integer want = luaL_checkinteger(L, 2);
	size_t cur = 0;
	uint64_t v, n;
	for (lua_Integer i = 1; hist_next_nonzero(s->h, &cur, &v, &n); i++)
		if (i == want) {
			lua_pushnumber(L, (double)v / s->div);
			lua_pushnumber(L, (double)n);
			return 2;
		}
	lua_pushnil(L);
	lua_pushnil(L);
	return 2;
}

static int l_stats_len(lua_State *L)
{
	struct lstats *s = check_stats(L, 1);
	size_t cur = 0;
	lua_Integer n = 0;
	while (hist_next_nonzero(s->h, &cur, NULL, NULL))
		n++;
	lua_pushinteger(L, n);
	return 1;
}

static int l_stats_index(lua_State *L)
{
	struct lstats *s = check_stats(L, 1);
	const char *key = luaL_checkstring(L, 2);
	bool any = s->h->total > 0;
	if (!strcmp(key, "min"))
		lua_pushnumber(L, any ? (double)s->h->min / s->div : 0);
	else if (!strcmp(key, "max"))
		lua_pushnumber(L, any ? (double)s->h->max / s->div : 0);
	else if (!strcmp(key, "mean"))
		lua_pushnumber(L, hist_mean(s->h) / s->div);
	else if (!strcmp(key, "stdev"))
		lua_pushnumber(L, hist_stddev(s->h) / s->div);
	else if (!strcmp(key, "count"))
		lua_pushnumber(L, (double)s->h->total);
	else if (!strcmp(key, "percentile"))
		lua_pushcfunction(L, l_stats_percentile);
	else
		lua_pushnil(L);
	return 1;
}

void wrk_register(lua_State *L)
{
	static const luaL_Reg thread_mt[] = {
		{"__index", l_thread_index}, {"__newindex", l_thread_newindex}, {NULL, NULL}};
	static const luaL_Reg addr_mt[] = {{"__tostring", l_addr_tostring}, {NULL, NULL}};
	static const luaL_Reg stats_mt[] = {{"__index", l_stats_index},
					    {"__call", l_stats_call},
					    {"__len", l_stats_len},
					    {NULL, NULL}};
	luaL_newmetatable(L, MT_THREAD);
	luaL_register(L, NULL, thread_mt);
	luaL_newmetatable(L, MT_ADDR);
	luaL_register(L, NULL, addr_mt);
	luaL_newmetatable(L, MT_STATS);
	luaL_register(L, NULL, stats_mt);
	lua_pop(L, 3);
}

/* ---- the table --------------------------------------------------------------------- */

/* The scheme, host and port of url as written (port: nil when not given),
 * and its path from the first '/' after the host (query included). */
static int url_parts(lua_State *L, int wrk, const char *url, char *err, size_t cap)
{
	struct url u;
	const char *why = NULL;
	if (url_parse(&u, url, &why)) {
		snprintf(err, cap, "the URL '%s': %s", url, why ? why : "not understood");
		return -1;
	}
	lua_pushstring(L, u.tls ? "https" : "http");
	lua_setfield(L, wrk, "scheme");
	lua_pushstring(L, u.host);
	lua_setfield(L, wrk, "host");
	if (u.port_explicit) {
		char port[8];
		snprintf(port, sizeof port, "%u", (unsigned)u.port);
		lua_pushstring(L, port);
	} else {
		lua_pushnil(L);
	}
	lua_setfield(L, wrk, "port");
	lua_pushstring(L, u.target);
	lua_setfield(L, wrk, "path");
	return 0;
}

int wrk_install(struct sstate *st, const struct script_cfg *cfg, char *err, size_t cap)
{
	lua_State *L = st->L;
	wrk_register(L);
	lua_newtable(L);
	int wrk = lua_gettop(L);
	if (url_parts(L, wrk, cfg->url, err, cap)) {
		lua_pop(L, 1);
		return -1;
	}
	lua_pushstring(L, cfg->method ? cfg->method : "GET");
	lua_setfield(L, wrk, "method");
	lua_newtable(L);
	for (size_t i = 0; i < cfg->n_headers; i++) {
		const char *h = cfg->headers[i], *c = strchr(h, ':');
		if (!c)
			continue;
		const char *v = c + 1;
		while (*v == ' ' || *v == '\t')
			v++;
		lua_pushlstring(L, h, (size_t)(c - h));
		lua_pushstring(L, v);
		lua_rawset(L, -3);
	}
	lua_setfield(L, wrk, "headers");
	if (cfg->body) {
		lua_pushlstring(L, cfg->body, cfg->body_len);
		lua_setfield(L, wrk, "body");
	}
	static const luaL_Reg fns[] = {
		{"format", l_format}, {"lookup", l_lookup}, {"connect", l_connect}, {NULL, NULL}};
	luaL_register(L, NULL, fns);
	lua_setglobal(L, "wrk");
	return 0;
}

void wrk_default_host(lua_State *L, const struct script_cfg *cfg)
{
	lua_getglobal(L, "wrk");
	if (!lua_istable(L, -1)) {
		lua_pop(L, 1);
		return;
	}
	lua_getfield(L, -1, "headers");
	if (!lua_istable(L, -1)) {
		lua_pop(L, 2);
		return;
	}
	lua_getfield(L, -1, "Host");
	bool has = !lua_isnil(L, -1);
	lua_pop(L, 1);
	if (!has) {
		struct url u;
		if (url_parse(&u, cfg->url, NULL) == 0) {
			if (u.port_explicit)
				lua_pushfstring(L, u.host_is_ipv6 ? "[%s]:%d" : "%s:%d", u.host,
						(int)u.port);
			else
				lua_pushfstring(L, u.host_is_ipv6 ? "[%s]" : "%s", u.host);
			lua_setfield(L, -2, "Host");
		}
	}
	lua_pop(L, 2);
}
