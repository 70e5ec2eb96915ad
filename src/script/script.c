/* pacer — scripts (script.h): loading a script into the main state,
 * starting a state per worker as wrk does (the file run in each,
 * setup(thread) in the main state, init(args) in the worker's), what the
 * script does and needs (its mode, the responses' headers and bodies),
 * done(), and what failed. */
#include "script/script.h"

#include <errno.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>

#include "script/script_int.h"
#include "util/err.h"
#include "util/file.h"

#define SCRIPT_FILE_CAP (16u << 20) /* the largest script file */

/* The globals of the hooks, in wrk's order. */
static const char *const hook_names[] = {"setup", "init", "delay", "request", "response", "done"};

/* Run the script's text in st (its top level), as chunk sc->chunk. */
static int run_file(struct script *sc, struct sstate *st, char *err, size_t cap)
{
	lua_State *L = st->L;
	st->mem_hit = false;
	int rc = luaL_loadbuffer(L, sc->file, sc->file_len, sc->chunk);
	if (rc) {
		const char *msg = lua_tostring(L, -1);
		if (rc == LUA_ERRMEM || st->mem_hit)
			snprintf(err, cap,
				 "%s: the script does not fit its Lua state's %zu MiB "
				 "(--script-memory)",
				 sc->cfg.path, st->mem_cap >> 20);
		else
			snprintf(err, cap, "%s", msg ? msg : "does not compile");
		lua_pop(L, 1);
		return -1;
	}
	return sstate_call(st, "the script's top level", 0, 0, err, cap);
}

/* A state with the wrk and pacer tables, the script run in it. */
static int open_state(struct script *sc, struct sstate *st, char *err, size_t cap)
{
	size_t mem = sc->cfg.mem_cap ? sc->cfg.mem_cap : SCRIPT_MEM_DEFAULT;
	int orc = sstate_open(st, sc, mem, SCRIPT_SETUP_LIMIT_NS);
	if (orc) {
		snprintf(err, cap,
			 orc == -ENOTSUP
				 ? "%s: LuaJIT made no Lua state with pacer's allocator (out of "
				   "memory, or a LuaJIT built without GC64, which takes none)"
				 : "%s: cannot make a Lua state (out of memory)",
			 sc->cfg.path);
		return -1;
	}
	st->mem_slack = true;
	int rc = wrk_install(st, &sc->cfg, err, cap);
	if (!rc)
		session_install(st->L);
	st->mem_slack = false;
	return rc ? rc : run_file(sc, st, err, cap);
}

/* The hooks the script defines (globals of st's state): each a function
 * or absent; anything else is an error naming it. */
static int find_hooks(struct script *sc, lua_State *L, char *err, size_t cap)
{
	struct script_info *in = &sc->info;
	bool *has[] = {&in->has_setup,   &in->has_init,     &in->has_delay,
		       &in->has_request, &in->has_response, &in->has_done};
	for (size_t i = 0; i < sizeof hook_names / sizeof hook_names[0]; i++) {
		lua_getglobal(L, hook_names[i]);
		int t = lua_type(L, -1);
		lua_pop(L, 1);
		if (t != LUA_TNIL && t != LUA_TFUNCTION) {
			snprintf(err, cap, "%s: the global %s is a %s: wrk's hooks are functions",
				 sc->cfg.path, hook_names[i], lua_typename(L, t));
			return -1;
		}
		*has[i] = t == LUA_TFUNCTION;
	}
	session_push_fn(L);
	bool session = lua_isfunction(L, -1);
	lua_pop(L, 1);
	if (session && (in->has_request || in->has_response || in->has_delay)) {
		snprintf(err, cap,
			 "%s: pacer.session and wrk's request(), response() or delay() do "
			 "not go together: a session makes its requests and reads its responses",
			 sc->cfg.path);
		return -1;
	}
	in->delay_ignored = in->has_delay && sc->cfg.open_loop;
	if (session)
		in->mode = SCRIPT_SESSION;
	else if (in->has_request || in->has_response || (in->has_delay && !sc->cfg.open_loop))
		in->mode = SCRIPT_WRK;
	else
		in->mode = SCRIPT_STATIC;
	return 0;
}

/* The request wrk.format() makes in L, checked, into a malloc'd copy. */
static int static_request(struct script *sc, lua_State *L, struct sstate *st, char **out,
			  size_t *len, char *err, size_t cap)
{
	lua_getglobal(L, "wrk");
	lua_getfield(L, -1, "format");
	lua_remove(L, -2);
	if (sstate_call(st, "wrk.format", 0, 1, err, cap))
		return -1;
	size_t n;
	const char *s = lua_tolstring(L, -1, &n);
	bool head;
	const char *why = s ? sreq_check(s, n, &head) : "not a string";
	if (why) {
		snprintf(err, cap, "%s: the request wrk's fields make is not one: %s", sc->cfg.path,
			 why);
		lua_pop(L, 1);
		return -1;
	}
	*out = malloc(n);
	if (!*out) {
		lua_pop(L, 1);
		snprintf(err, cap, "out of memory");
		return -1;
	}
	memcpy(*out, s, n);
	*len = n;
	lua_pop(L, 1);
	return 0;
}

static void sha256_hex(const char *buf, size_t len, char out[65])
{
	unsigned char md[32];
	unsigned int mdlen = 0;
	out[0] = '\0';
	if (!EVP_Digest(buf, len, md, &mdlen, EVP_sha256(), NULL) || mdlen != 32)
		return;
	for (int i = 0; i < 32; i++)
		snprintf(out + 2 * i, 3, "%02x", md[i]);
}

int script_load(struct script **out, const struct script_cfg *cfg, char *err, size_t cap)
{
	*out = NULL;
	struct script *sc = calloc(1, sizeof *sc);
	if (!sc) {
		snprintf(err, cap, "out of memory");
		return -ENOMEM;
	}
	sc->cfg = *cfg;
	pthread_mutex_init(&sc->names_mu, NULL);
	snprintf(sc->chunk, sizeof sc->chunk, "@%s", cfg->path);
	int rc = file_read_all(cfg->path, SCRIPT_FILE_CAP, &sc->file, &sc->file_len);
	if (rc) {
		snprintf(err, cap, "%s: cannot read: %s", cfg->path,
			 rc == PACER_ETOOBIG ? "larger than 16 MiB" : err_name(rc));
		script_free(sc);
		return -EINVAL;
	}
	sha256_hex(sc->file, sc->file_len, sc->info.sha256);
	if (open_state(sc, &sc->main, err, cap) || find_hooks(sc, sc->main.L, err, cap)) {
		script_free(sc);
		return -EINVAL;
	}
	/* wrk.headers.Host before the request is made, as in a worker's state
	 * (where init() runs after it): what a static script sends */
	wrk_default_host(sc->main.L, &sc->cfg);
	if (static_request(sc, sc->main.L, &sc->main, &sc->static_buf, &sc->info.req_len, err,
			   cap)) {
		script_free(sc);
		return -EINVAL;
	}
	sc->info.req = sc->static_buf;
	*out = sc;
	return 0;
}

const struct script_info *script_info(const struct script *s)
{
	return &s->info;
}

/* A function global of L into the registry (LUA_NOREF: not a function). */
static int ref_global(lua_State *L, const char *name)
{
	lua_getglobal(L, name);
	if (!lua_isfunction(L, -1)) {
		lua_pop(L, 1);
		return LUA_NOREF;
	}
	return luaL_ref(L, LUA_REGISTRYINDEX);
}

static int static_request_fn(lua_State *L)
{
	lua_pushvalue(L, lua_upvalueindex(1));
	return 1;
}

/* Worker w's state: the file run, setup(thread) in the main state, then
 * init(args) in w's own, its hooks and its static request. */
static int start_worker(struct script *sc, struct sworker *w, char *err, size_t cap)
{
	w->ref_request = w->ref_response = w->ref_delay = w->ref_session = LUA_NOREF;
	w->ref_static = w->first_ctx = LUA_NOREF;
	w->addr = sc->target;
	if (open_state(sc, &w->st, err, cap))
		return -1;
	lua_State *L = w->st.L;
	/* wrk.thread: the worker's own thread object */
	lua_getglobal(L, "wrk");
	wrk_push_thread(L, w);
	lua_setfield(L, -2, "thread");
	lua_pop(L, 1);
	/* setup(thread), in the main state */
	lua_State *M = sc->main.L;
	lua_getglobal(M, "setup");
	if (lua_isfunction(M, -1)) {
		wrk_push_thread(M, w);
		if (sstate_call(&sc->main, "setup", 1, 0, err, cap))
			return -1;
	} else {
		lua_pop(M, 1);
	}
	/* init(args): args[0] the URL, then what followed -- (as wrk passes them) */
	wrk_default_host(L, &sc->cfg);
	lua_getglobal(L, "init");
	if (lua_isfunction(L, -1)) {
		lua_createtable(L, (int)sc->cfg.n_args, 1);
		lua_pushstring(L, sc->cfg.url);
		lua_rawseti(L, -2, 0);
		for (size_t i = 0; i < sc->cfg.n_args; i++) {
			lua_pushstring(L, sc->cfg.args[i]);
			lua_rawseti(L, -2, (int)i + 1);
		}
		if (sstate_call(&w->st, "init", 1, 0, err, cap))
			return -1;
	} else {
		lua_pop(L, 1);
	}
	/* the static request (wrk.request() returns it, as in wrk) */
	char *buf = NULL;
	size_t len = 0;
	if (static_request(sc, L, &w->st, &buf, &len, err, cap))
		return -1;
	lua_pushlstring(L, buf, len);
	free(buf);
	size_t slen;
	const char *s = lua_tolstring(L, -1, &slen);
	bool head = false;
	(void)sreq_check(s, slen, &head);
	w->static_req = (struct engine_req){.buf = s, .len = slen, .head = head};
	lua_pushvalue(L, -1);
	w->ref_static = luaL_ref(L, LUA_REGISTRYINDEX); /* keeps s alive */
	/* wrk.request(): that request, as in wrk */
	lua_pushcclosure(L, static_request_fn, 1);
	lua_getglobal(L, "wrk");
	lua_insert(L, -2);
	lua_setfield(L, -2, "request");
	lua_settop(L, 0);
	/* the hooks (as they are after init: a script may set them there) */
	w->st.call_limit_ns = sc->cfg.call_limit_ns ? sc->cfg.call_limit_ns
						    : SCRIPT_CALL_LIMIT_DEFAULT_NS;
	if (sc->info.mode == SCRIPT_SESSION) {
		session_push_fn(L);
		w->ref_session = luaL_ref(L, LUA_REGISTRYINDEX);
		return 0;
	}
	w->ref_request = ref_global(L, "request");
	w->ref_response = ref_global(L, "response");
	if (!sc->cfg.open_loop)
		w->ref_delay = ref_global(L, "delay");
	if (w->ref_request != LUA_NOREF) {
		/* a first call, checked before the load (as wrk checks one), and
		 * sent as the worker's first request */
		lua_rawgeti(L, LUA_REGISTRYINDEX, w->ref_request);
		w->st.call_limit_ns = SCRIPT_SETUP_LIMIT_NS;
		int rc = sstate_call(&w->st, "request", 0, 2, err, cap);
		w->st.call_limit_ns = sc->cfg.call_limit_ns ? sc->cfg.call_limit_ns
							    : SCRIPT_CALL_LIMIT_DEFAULT_NS;
		if (rc)
			return -1;
		char where[300];
		lua_rawgeti(L, LUA_REGISTRYINDEX, w->ref_request);
		sstate_where(L, -1, where, sizeof where);
		lua_pop(L, 1);
		size_t n = 0;
		const char *r = lua_type(L, -2) == LUA_TSTRING ? lua_tolstring(L, -2, &n) : NULL;
		bool hd;
		const char *why = r ? sreq_check(r, n, &hd) : NULL;
		if (!r) {
			snprintf(err, cap,
				 "%s: in request(): it returned %s, not a request (a string, "
				 "as wrk.format() makes)",
				 where, lua_typename(L, lua_type(L, -2)));
			return -1;
		}
		if (why) {
			snprintf(err, cap,
				 "%s: in request(): it returned a string that is not a "
				 "request: %s",
				 where, why);
			return -1;
		}
		w->first_buf = malloc(n);
		if (!w->first_buf) {
			snprintf(err, cap, "out of memory");
			return -1;
		}
		memcpy(w->first_buf, r, n);
		w->first_len = n;
		w->first_pending = true;
		if (!lua_isnil(L, -1)) {
			lua_pushvalue(L, -1);
			w->first_ctx = luaL_ref(L, LUA_REGISTRYINDEX);
		}
		lua_pop(L, 2);
	}
	return 0;
}

int script_start(struct script *sc, const struct net_addr *addr, char *err, size_t cap)
{
	sc->target = *addr;
	uint32_t n = sc->cfg.threads ? sc->cfg.threads : 1;
	sc->w = calloc(n, sizeof *sc->w);
	sc->states = calloc(n, sizeof *sc->states);
	if (!sc->w || !sc->states) {
		snprintf(err, cap, "out of memory");
		return -ENOMEM;
	}
	sc->n_workers = n;
	for (uint32_t i = 0; i < n; i++) {
		sc->w[i].id = i;
		sc->states[i] = &sc->w[i];
		if (start_worker(sc, &sc->w[i], err, cap))
			return -EINVAL;
	}
	/* what response() reads: its headers and body only when it uses them */
	struct script_info *in = &sc->info;
	if (in->mode == SCRIPT_SESSION) {
		in->want_headers = in->want_body = true;
	} else if (sc->w[0].ref_response != LUA_NOREF) {
		lua_State *L = sc->w[0].st.L;
		lua_rawgeti(L, LUA_REGISTRYINDEX, sc->w[0].ref_response);
		in->want_headers = sstate_uses_param(L, -1, 1);
		in->want_body = sstate_uses_param(L, -1, 2);
		lua_pop(L, 1);
	}
	/* static, but some worker's init() made its request differ: flows */
	if (in->mode == SCRIPT_STATIC) {
		for (uint32_t i = 0; i < n; i++)
			if (sc->w[i].static_req.len != in->req_len ||
			    memcmp(sc->w[i].static_req.buf, in->req, in->req_len))
				in->mode = SCRIPT_WRK;
	}
	for (uint32_t i = 0; i < n; i++)
		if (sc->w[i].addr_set) {
			sc->addrs = calloc(n, sizeof *sc->addrs);
			if (!sc->addrs) {
				snprintf(err, cap, "out of memory");
				return -ENOMEM;
			}
			for (uint32_t k = 0; k < n; k++)
				sc->addrs[k] = sc->w[k].addr;
			break;
		}
	return 0;
}

const struct engine_flow_ops *script_flow_ops(const struct script *s)
{
	return s->info.mode == SCRIPT_STATIC ? NULL : &script_flow_ops_tab;
}

void *const *script_flow_states(const struct script *s)
{
	return s->info.mode == SCRIPT_STATIC ? NULL : s->states;
}

const struct net_addr *script_worker_addrs(const struct script *s)
{
	return s->addrs;
}

bool script_failed(const struct script *s, char *msg, size_t cap)
{
	if (cap)
		msg[0] = '\0';
	if (!atomic_load(&s->failed))
		return false;
	for (uint32_t i = 0; i < s->n_workers; i++)
		if (s->w[i].failed) {
			snprintf(msg, cap, "%s", s->w[i].err);
			return true;
		}
	return true;
}

uint32_t script_stopped(const struct script *s)
{
	uint32_t n = 0;
	for (uint32_t i = 0; i < s->n_workers; i++)
		n += s->w[i].stopped;
	return n;
}

static void set_num(lua_State *L, const char *k, double v)
{
	lua_pushnumber(L, v);
	lua_setfield(L, -2, k);
}

int script_done(struct script *sc, const struct script_summary *sum, char *err, size_t cap)
{
	if (!sc->info.has_done)
		return 0;
	lua_State *L = sc->main.L;
	/* requests: each second's completions, as a stats object */
	struct hist per_sec;
	if (hist_init(&per_sec, 7, 1ull << 40)) {
		snprintf(err, cap, "out of memory");
		return -ENOMEM;
	}
	for (size_t i = 0; i < sum->n_per_sec; i++)
		hist_record(&per_sec, sum->per_sec[i]);
	lua_getglobal(L, "done");
	lua_newtable(L);
	set_num(L, "duration", (double)sum->duration_ns / 1e3);
	set_num(L, "requests", (double)sum->requests);
	set_num(L, "bytes", (double)sum->bytes);
	if (sum->label) {
		lua_pushstring(L, sum->label);
		lua_setfield(L, -2, "label");
	}
	if (sum->rate_per_s > 0)
		set_num(L, "rate", sum->rate_per_s);
	lua_newtable(L);
	set_num(L, "connect", (double)sum->err_connect);
	set_num(L, "read", (double)sum->err_read);
	set_num(L, "write", (double)sum->err_write);
	set_num(L, "status", (double)sum->err_status);
	set_num(L, "timeout", (double)sum->err_timeout);
	lua_setfield(L, -2, "errors");
	wrk_push_stats(L, sum->latency, 1e3);
	wrk_push_stats(L, &per_sec, 1);
	int rc = sstate_call(&sc->main, "done", 3, 0, err, cap);
	hist_free(&per_sec);
	return rc ? -EINVAL : 0;
}

void script_free(struct script *s)
{
	if (!s)
		return;
	for (uint32_t i = 0; s->w && i < s->n_workers; i++) {
		sstate_close(&s->w[i].st);
		flow_free_all(&s->w[i]);
		free(s->w[i].first_buf);
	}
	sstate_close(&s->main);
	free(s->w);
	free(s->states);
	free(s->addrs);
	free(s->file);
	free(s->static_buf);
	pthread_mutex_destroy(&s->names_mu);
	free(s);
}
