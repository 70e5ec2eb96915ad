/* pacer — scripts' internals (script.h is the module's face). Files, each
 * calling only the ones after it (make check-layers):
 *   script.c   loading, starting, done(), the mode and what it needs
 *   flow.c     the engine's flow callbacks: wrk's request/response/delay,
 *              and sessions (their coroutines)
 *   session.c  the pacer table and a session's methods (s:get, s:sleep...)
 *   wrk.c      the wrk table: format, lookup, connect, thread, stats
 *   lstate.c   a Lua state: the capped allocator, the time limit, protected
 *              calls whose errors name file:line and the hook, values
 *              copied between states
 *   request.c  requests built (wrk.format's way) and checked (one beside
 *              lstate.c: neither calls the other) */
#ifndef PACER_SCRIPT_SCRIPT_INT_H
#define PACER_SCRIPT_SCRIPT_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <lua.h>

#include "script/script.h"

/* A count hook every this many VM instructions checks the call's time. */
#define SCRIPT_HOOK_EVERY 4096
/* Memory an error's message may still take past the cap. */
#define SCRIPT_MEM_SLACK (1u << 20)
/* Tables copied between states (thread:get/set) nest at most this deep. */
#define SCRIPT_COPY_DEPTH 32
/* A request a script makes: at most this many bytes. */
#define SCRIPT_REQ_MAX (64u << 20)

/* Registry keys (light userdata addresses) */
extern const char script_key_state; /* the struct sstate of a lua_State */
extern const char script_key_names; /* a worker's cache: step name -> index */

/* One Lua state with its limits. */
struct sstate {
	lua_State *L;
	struct script *sc;
	size_t mem_used, mem_cap;
	bool mem_slack;      /* an error's message is being made: past the cap a little */
	bool mem_hit;        /* an allocation was refused at the cap */
	uint64_t call_t0_ns; /* the running call's start (0: none) */
	uint64_t call_limit_ns;
	const char *hook; /* the hook running, for messages ("request") */
	bool over_time;   /* the running call went over its time */
};

struct sflow;

/* A worker's state: its Lua state and its flows (flow.c). */
struct sworker {
	struct sstate st;
	uint32_t id;
	int ref_thread; /* its thread userdata (in the main state's registry) */
	/* the hooks, as functions in its state's registry (LUA_NOREF: none) */
	int ref_request, ref_response, ref_delay, ref_session;
	int ref_static; /* the string wrk.format() made after init */
	struct engine_req static_req;
	/* request()'s first call, made before the load (checked), sent first */
	bool first_pending;
	char *first_buf;
	size_t first_len;
	int first_ctx;
	struct sflow **flows; /* by the engine's flow handle (each allocated once: the
	                       * engine holds its req) */
	uint32_t flows_cap;
	bool stop_asked;      /* thread:stop() was called in this state */
	bool stopped;         /* ... and handed to the engine */
	struct net_addr addr; /* where it connects (thread.addr) */
	bool addr_set;        /* setup() set thread.addr */
	bool failed;
	char err[SCRIPT_ERR_CAP];
};

/* A flow: a wrk request (and its delay), or a session. */
struct sflow {
	struct engine_req req; /* what the engine sends (buf: below, or static) */
	char *buf;             /* its bytes (grown, reused) */
	size_t cap;
	int ref;       /* wrk: request()'s second value; a session: its coroutine
	                          * (LUA_NOREF: none) */
	uint64_t t_ns; /* a session's clock: when what it does next is due */
	bool failed;   /* a session: a step failed */
	bool check;    /* a session: its step in flight ends it when it fails */
	bool delayed;  /* wrk, closed loop: delay() ran; the request is next */
};

struct script {
	struct script_cfg cfg;
	struct script_info info;
	struct sstate main;     /* setup() and done() */
	struct sworker *w;      /* cfg.threads of them (after script_start) */
	void **states;          /* &w[i], for the engine */
	struct net_addr *addrs; /* where each worker connects, or NULL */
	uint32_t n_workers;
	char *file; /* the script's text */
	size_t file_len;
	char *static_buf;       /* info.req */
	char chunk[256];        /* "@path", the chunk's name in messages */
	struct net_addr target; /* the resolved target (thread.addr before setup) */
	/* sessions: step names interned into cfg.names */
	pthread_mutex_t names_mu;
	uint64_t pooled_hash[1024];
	uint32_t n_pooled_hash;
	_Atomic bool failed; /* a worker's hook failed (its message: w[i].err) */
};

/* ---- lstate.c ------------------------------------------------------------ */

/* A new state for sc with its cap and limit, libraries open, the JIT
 * compiler off (its traces would not see the time limit). 0, -ENOMEM, or
 * -ENOTSUP when LuaJIT made no state at all (out of memory, or a 64-bit
 * LuaJIT without GC64, which takes no allocator). */
int sstate_open(struct sstate *st, struct script *sc, size_t mem_cap, uint64_t limit_ns);
void sstate_close(struct sstate *st);
/* The sstate of a lua_State (any coroutine of it). */
struct sstate *sstate_of(lua_State *L);
/* Call the function below nargs arguments on L's stack (L: st's state or
 * a coroutine of it is not allowed: use sstate_resume) as hook `hook`,
 * with st's time limit; nres results stay on the stack. 0, or -1 with
 * one line in err ("FILE:LINE: in HOOK(): what"); the stack is as before
 * the function was pushed. */
int sstate_call(struct sstate *st, const char *hook, int nargs, int nres, char *err, size_t cap);
/* Resume coroutine co with nargs arguments on its stack, as hook `hook`,
 * with st's limit: LUA_YIELD or 0 (returned), or -1 with one line in err. */
int sstate_resume(struct sstate *st, lua_State *co, const char *hook, int nargs, char *err,
		  size_t cap);
/* The message of a failure with its place: msg (a Lua error value), or the
 * memory cap, or the time limit, as one line into err. */
void sstate_error(struct sstate *st, lua_State *L, const char *hook, int status, char *err,
		  size_t cap);
/* Copy the value at index idx of src onto dst's stack (nil, booleans,
 * numbers, strings and tables of them). 0, or -1 with why in err. */
int sstate_copy(lua_State *src, int idx, lua_State *dst, char *err, size_t cap);
/* Where L (a coroutine, suspended or failed) is: "FILE:LINE" of its
 * innermost Lua function ("" when none). */
void sstate_place(lua_State *L, char *buf, size_t cap);
/* Where function at index idx was defined: "FILE:LINE" into buf. */
void sstate_where(lua_State *L, int idx, char *buf, size_t cap);
/* For response(): whether the function at idx reads parameter k (0-based),
 * from its bytecode (a vararg function: yes; unknown: yes). */
bool sstate_uses_param(lua_State *L, int idx, int k);

/* ---- request.c ------------------------------------------------------------ */

/* Build an HTTP/1.1 request as wrk.format does: method, path, the header
 * fields of the table at hidx (0: none) and of wrk.headers for Host, a
 * Content-Length when there is a body, the body. Pushes the string.
 * Raises a Lua error for a bad method, path or field. */
void sreq_format(lua_State *L, const char *method, const char *path, int hidx, const char *body,
		 size_t body_len);
/* Check that buf[len] is one request pacer can send: a request line,
 * header fields, a blank line and exactly Content-Length bytes of body
 * (no Transfer-Encoding). NULL, or why not (static text). *head: HEAD. */
const char *sreq_check(const char *buf, size_t len, bool *head);

/* ---- wrk.c --------------------------------------------------------------- */

/* The wrk table in st's state (scheme, host, port, path from the URL, -H
 * headers, -X, --body; format, lookup, connect). 0 or -1 with err. */
int wrk_install(struct sstate *st, const struct script_cfg *cfg, char *err, size_t cap);
/* After init: wrk.headers.Host when the script left none (before init,
 * as wrk). */
void wrk_default_host(lua_State *L, const struct script_cfg *cfg);
/* The thread userdata of worker w, pushed on L (the main state's, or w's
 * own as wrk.thread). */
void wrk_push_thread(lua_State *L, struct sworker *w);
/* Push a stats object (done()'s latency or requests) over h, in units of
 * h's values divided by div (latency: ns to us). h must outlive its use. */
void wrk_push_stats(lua_State *L, const struct hist *h, double div);
/* Register the metatables (thread, addr, stats) in L. */
void wrk_register(lua_State *L);

/* ---- session.c ----------------------------------------------------------- */

/* The pacer table in st's state (pacer.session, pacer.version). */
void session_install(lua_State *L);
/* The function pacer.session registered, pushed (nil: none). */
void session_push_fn(lua_State *L);
/* A new session object (its methods) pushed on co. */
void session_push_obj(lua_State *co);
/* What a session's coroutine yields starts with one of these markers
 * (light userdata): a request (its bytes, name and check follow) or a
 * sleep (its seconds follow); any other yield is the script's own. */
extern const char session_yield_request;
extern const char session_yield_sleep;
/* The marker a failing session's s:fail raises (a light userdata). */
extern const char session_fail_key;

/* ---- flow.c -------------------------------------------------------------- */

extern const struct engine_flow_ops script_flow_ops_tab;
/* Intern step name `name` for worker w: its index in cfg.names. */
uint16_t flow_name_index(struct sworker *w, const char *name, size_t len);
void flow_free_all(struct sworker *w);

#endif
