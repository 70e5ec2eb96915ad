/* pacer — scripts (pacer run -s FILE.lua; docs/scripting.md): wrk's Lua
 * scripting interface, so that a script written for wrk or wrk2 runs
 * unchanged under pacer's open loop, and sessions (pacer.session) whose
 * steps carry values from one response to the next request.
 *
 * One Lua state (LuaJIT, its interpreter) per worker thread, as wrk has,
 * plus a main state where setup() and done() run; each worker's state is
 * used by that worker's thread alone while the load runs (the engine's
 * flows, engine.h), so nothing is locked on the way of a request (step
 * names are interned under a lock the first time a worker meets each).
 * Every state has an allocator with a cap and a time limit per call; a
 * script that fails says where (file:line) and which hook.
 *
 * Never prints (but the script's own print and io.write) and never exits.
 * Errors are one line into err; a hook that fails while the load runs
 * ends the step (engine_aborted) and script_failed says what failed. */
#ifndef PACER_SCRIPT_SCRIPT_H
#define PACER_SCRIPT_SCRIPT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/engine.h"
#include "net/sock.h"
#include "result/names.h"
#include "stats/hist.h"

#define SCRIPT_MEM_DEFAULT (128u << 20)           /* --script-memory: bytes per Lua state */
#define SCRIPT_CALL_LIMIT_DEFAULT_NS 250000000ull /* --script-timeout: a call during the load */
#define SCRIPT_SETUP_LIMIT_NS 10000000000ull      /* setup(), init(), done(): 10 s each */
#define SCRIPT_BODY_CAP_DEFAULT (1u << 20)        /* response bodies handed to Lua */
#define SCRIPT_MAX_ARGS 256                       /* arguments after -- */
#define SCRIPT_ERR_CAP 1024

struct script;

/* What a script is given. Strings are borrowed for the script's life. */
struct script_cfg {
	const char *path;           /* the .lua file */
	const char *url;            /* the run's URL: wrk.scheme/host/port/path, init's args[0] */
	const char *const *headers; /* -H "Name: value", into wrk.headers */
	size_t n_headers;
	const char *method; /* -X (NULL: wrk's "GET") */
	const char *body;   /* --body (NULL: none) */
	size_t body_len;
	const char *const *args; /* after --: init's args[1..] */
	size_t n_args;
	uint32_t threads; /* worker threads: one Lua state each */
	bool open_loop;
	size_t mem_cap;          /* bytes per state (0: SCRIPT_MEM_DEFAULT) */
	uint64_t call_limit_ns;  /* one hook call while the load runs (0: the default) */
	size_t body_cap;         /* response body bytes handed to Lua (0: the default) */
	struct req_names *names; /* sessions: step names are interned here (owned by the
	                          * caller, filled while the load runs; empty before) */
};

/* What a loaded script does (script_info). */
enum script_mode {
	SCRIPT_STATIC = 0, /* no request(), response(), delay() nor session: the one
	                     * request wrk.format() makes, sent as any other run's */
	SCRIPT_WRK,        /* wrk's hooks: a flow per request */
	SCRIPT_SESSION,    /* pacer.session: a flow per session */
};

struct script_info {
	enum script_mode mode;
	bool has_setup, has_init, has_request, has_response, has_delay, has_done;
	bool delay_ignored; /* delay() defined in open loop: not called (the schedule
	                          * decides) */
	bool want_headers;  /* responses' header fields go to Lua */
	bool want_body;     /* and their bodies */
	const char *req;    /* the request wrk.format() makes in the main state after the
	                          * script's top level ran (what STATIC sends), its bytes */
	size_t req_len;
	char sha256[65]; /* of the script file */
};

/* Load cfg->path into the main state and run its top level (wrk and pacer
 * tables set). 0, or a negative code with one line in err naming the
 * file and line (a script that does not compile, raises, or defines
 * hooks that are not functions). */
int script_load(struct script **out, const struct script_cfg *cfg, char *err, size_t cap);

/* What the loaded script does (valid until script_free). */
const struct script_info *script_info(const struct script *s);

/* Before the load, with the target resolved to addr: every worker's state
 * (the file run again in each), setup(thread) in the main state for each,
 * init(args) in each worker's, and for request() a first call in each
 * (its request checked, and sent first). 0, or a negative code with one
 * line in err (file:line and the hook). */
int script_start(struct script *s, const struct net_addr *addr, char *err, size_t cap);

/* For the engine (after script_start): the flow callbacks and each
 * worker's state (NULL when the mode is SCRIPT_STATIC); where each worker
 * connects (thread.addr as setup() left it; NULL when none was changed). */
const struct engine_flow_ops *script_flow_ops(const struct script *s);
void *const *script_flow_states(const struct script *s);
const struct net_addr *script_worker_addrs(const struct script *s);

/* After a step that engine_aborted: what failed, in one line ("x.lua:12:
 * in response(): attempt to index a nil value"). 0 and "" when nothing
 * failed. */
bool script_failed(const struct script *s, char *msg, size_t cap);
/* Workers the script stopped (thread:stop()), for a notice; 0: none. */
uint32_t script_stopped(const struct script *s);

/* What done() is given (wrk's summary, latency and requests). */
struct script_summary {
	uint64_t duration_ns; /* the measured phase */
	uint64_t requests;    /* completed responses */
	uint64_t bytes;       /* bytes received */
	uint64_t err_connect, err_read, err_write, err_status, err_timeout;
	const struct hist *latency; /* from each request's due time, ns (borrowed) */
	const uint64_t *per_sec;    /* completions in each second of the measured phase */
	size_t n_per_sec;
	const char *label; /* NULL; a ramp step's or a variant's name (summary.label) */
	double rate_per_s; /* the offered rate (0: closed loop) */
};

/* Call done(summary, latency, requests) in the main state, when the script
 * defines it (nothing otherwise). 0, or a negative code with one line in
 * err. */
int script_done(struct script *s, const struct script_summary *sum, char *err, size_t cap);

/* Close every state. NULL is fine. */
void script_free(struct script *s);

#endif
