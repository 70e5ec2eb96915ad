/* pacer — the plan of a `pacer run`: what the user asked for, validated,
 * immutable once the run starts. Pure: filled by the CLI (or later a
 * scenario file), checked here, read by the runner and the report writers. */
#ifndef PACER_PLAN_PLAN_H
#define PACER_PLAN_PLAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "http/redact.h"
#include "http/url.h"
#include "plan/sched.h"

struct req_names;
struct table_host;

/* The lowest open-loop rate: below it a rate is a typo (and prints as 0);
 * the same bound as the option parser's (util/units.h UNITS_MIN_RATE). */
#define PLAN_MIN_RATE_PER_S 0.001
/* --burst-size: most requests released at one due time. */
#define PLAN_BURST_MAX 100000

/* --send-window default: send lag under 1 ms, the generator check's default
 * --lag-limit, so batching alone never flags the generator. */
#define PLAN_SEND_WINDOW_DEFAULT_NS (1000 * 1000ull)
#define PLAN_MAX_SEGMENTS 1024 /* --segment K/N: the largest N */
struct plan_workload;

/* --calibrate's default: a few hundred timed sleeps per worker thread. */
#define PLAN_CALIBRATE_DEFAULT_NS (300ull * 1000 * 1000)

/* -s FILE.lua (src/script, docs/scripting.md): what the record says of
 * the script that made the requests. */
#define PLAN_SCRIPT_HOOKS 8
struct plan_script {
	const char *path;
	const char *sha256; /* of the file */
	const char *mode;   /* "static" (wrk.format's one request), "wrk" (wrk's hooks:
	                              * a request at a time), "session" (pacer.session) */
	const char *hooks[PLAN_SCRIPT_HOOKS]; /* the hooks it defines, in wrk's order */
	size_t n_hooks;
	const char *const *args; /* after --: init's args[1..] */
	size_t n_args;
	uint64_t memory_bytes;                /* each Lua state's cap */
	uint64_t call_limit_ns;               /* one hook call's limit during the load */
	bool response_headers, response_body; /* responses' fields and bodies go to Lua */
	uint64_t body_cap;                    /* at most this many bytes of a body */
	bool delay_ignored;                   /* delay() defined, but open loop: not called */
};

struct run_plan {
	const char *url_str;
	struct url url;
	const char *method;          /* NULL: GET, or POST with a body */
	const char **headers;        /* "Name: value" */
	size_t n_headers;
	struct redact redact;        /* which headers' values are shown redacted in what describes
	                              * the requests (--redact-header, --no-redact) */
	const char *body;            /* bytes (owned by the caller) */
	size_t body_len;
	const char *body_source;     /* "@file" or "literal", for the record */

	bool open_loop;
	double rate_per_s;
	enum sched_arrival arrival;
	uint32_t burst_size;         /* open loop: requests released together (--burst-size; 1) */
	uint64_t seed;
	uint64_t duration_ns, warmup_ns, timeout_ns, drain_ns;
	uint64_t spin_ns;            /* open loop, precise pacing: busy-poll this close to a due time */
	bool realtime;               /* --realtime: worker threads at a real-time priority */
	uint64_t calibrate_ns;       /* --calibrate D: the machine's floor measured this long
				      * before the load (generator.floor; 0: not measured) */
	uint64_t send_window_ns;     /* open loop: requests due within it leave at one wake-up
	                              * (--send-window; batched pacing) */
	bool precise;                /* --precise: wake for each due time (send_window ignored) */
	double precision;            /* --precision-budget P%: the share (0.05) of the latency's
	                              * p50 the send window is sized to (plan/precision.h); 0: off */
	bool no_keepalive;           /* --no-keepalive: a new connection for every request */
	bool duration_given;
	uint32_t connections, concurrency, threads;
	uint64_t requests;           /* closed loop: 0 = by duration */
	uint32_t repeat;             /* measurements (warm-up + measure each) */

	/* --segment K/N (docs/distributed.md): this process runs segment
	 * `segment` of `segments` (>= 2; 0: the whole plan). Every other field
	 * stays the global plan's; the runner and engine take the share. */
	uint32_t segment, segments;
	/* --start-at TIME: the load starts at this wall-clock time (0: at once),
	 * as given (start_at_text); map_realtime_ns / map_monotonic_ns: CLOCK_REALTIME
	 * and CLOCK_MONOTONIC read together when the plan was made, the mapping
	 * between the two the result records. */
	uint64_t start_at_wall_ns;
	const char *start_at_text;
	uint64_t map_realtime_ns, map_monotonic_ns;

	bool order_random;           /* --order random (seeded by --seed) */
	/* the request table, when one was given (for the record) */
	const char *table_source, *table_format, *table_sha256;
	const struct inspect *inspect; /* response rules (--success, --outcome, --server-time);
	                                * NULL: none. Borrowed. */
	size_t table_requests;
	bool table_lazy;             /* --lazy: read a piece at a time into a spool */
	const struct table_host *table_hosts; /* the table's hosts (table/table.h), borrowed */
	size_t table_n_hosts;
	const struct req_names *names; /* the requests' names (result/names.h), borrowed;
	                                * NULL until the requests are made */
	bool by_name;                /* --by-name: a table per request name in the terminal */
	/* what the requests are, as encoded (plan/workload.h): methods, the first
	 * requests, bodies, their hash; NULL until the CLI has built them (a
	 * compare's shared plan: each variant has its own). Borrowed. */
	const struct plan_workload *workload;
	const struct plan_script *script; /* -s: the script (borrowed); NULL: none */

	const char *scenario;        /* pacer bench: the scenario file the plan came from (for the
	                              * record and the run history); NULL otherwise */
	const char *out_path, *hgrm_path;
	bool quiet;

	/* transport (docs/tls.md) */
	const char *self_contained;  /* --self-contained: the embedded target's plan; NULL: the
	                              * user's own target */
	const char *unix_socket;     /* --unix-socket PATH: connect there instead of TCP */
	const char *connect_to;      /* --connect-to HOST:PORT: connect there instead of the URL's
	                              * host and port (the requests are sent unchanged) */
	struct plan_tls {
		bool insecure;           /* --insecure: no certificate verification */
		const char *cacert;      /* --cacert FILE; NULL: the system store */
		const char *cert, *key;  /* --cert/--key: client certificate for mutual TLS */
		bool resume_flag;        /* --tls-resume given (the default, for symmetry) */
		bool no_resume;          /* --no-tls-resume given */
		bool self_signed;        /* --tls: the embedded target serves TLS with a
		                          * generated certificate the driver trusts */
	} tls;

#define PLAN_MAX_STREAMS 1000   /* --max-streams (ENGINE_H2_STREAMS_MAX) */
#define PLAN_DEFAULT_STREAMS 100 /* --max-streams not given (ENGINE_H2_STREAMS_DEFAULT) */
	struct plan_http {
		const char *http2;       /* --http2[=prefer]: NULL not given, "" (HTTP/2 by ALPN
		                          * or fail), "prefer" (HTTP/1.1 where the server keeps it) */
		bool h2c;                /* --h2c: HTTP/2 over cleartext, prior knowledge */
		uint32_t max_streams;    /* --max-streams N per HTTP/2 or HTTP/3 connection (0: default) */
		const char *window;      /* --h2-window SIZE: HTTP/2 receive window, HTTP/3's of each
		                          * stream (NULL: default) */
		bool http3;              /* --http3 (or --alpn h3): HTTP/3 over QUIC v1 (https URLs) */
		const char *alpn;        /* --alpn ID as given (only "h3", the same as --http3) */
	} http;

	int argc;                    /* the command line as given, for the record */
	char **argv;
};

/* Defaults for every field (no URL). */
void plan_defaults(struct run_plan *p);

/* The method a request will use. */
/* How the open loop paces its sends: "batched" (requests due within
 * send_window_ns leave at one wake-up; responses are timed by the kernel's
 * receive stamps), "precise" (a wake-up, and a spin, per due time), or
 * NULL in closed loop. *why (may be NULL): why precise when batching was
 * not asked away ("--unix-socket: ..."), else NULL. */
const char *plan_pacing(const struct run_plan *p, const char **why);
const char *plan_method(const struct run_plan *p);
/* Whether the plan speaks HTTP/3 (--http3, or --alpn h3). */
bool plan_http3(const struct run_plan *p);

/* Whether TLS sessions are resumed on reconnects: on unless
 * --no-tls-resume (a function of the options, so nothing writes it into
 * the plan after plan_validate). */
bool plan_tls_resume(const struct run_plan *p);

/* Check the plan for contradictions and impossible values. 0, or
 * PACER_ERANGE / PACER_EPARSE with a one-line reason in err naming the
 * option ("--rate 0: must be above 0"). */
int plan_validate(const struct run_plan *p, char *err, size_t cap);

const char *sched_arrival_name(enum sched_arrival a);

/* --start-at as CLOCK_MONOTONIC ns, by the plan's clock mapping (its start
 * or, when the time is already past, the mapping's instant); 0 without
 * --start-at. */
uint64_t plan_start_mono_ns(const struct run_plan *p);

#endif
