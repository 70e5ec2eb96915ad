/* pacer — a measurement assembled: everything between the options of run,
 * ramp and compare and a finished result. The requests to send (encoded
 * once, or streamed through a spool), where to send them (resolved,
 * probed, TLS), the response rules and the target's probe, in
 * self-contained mode the embedded target itself, the engine's
 * configuration from the plan, and measure_run, which runs the plan and
 * judges it.
 *
 * Never prints, never exits: a step returns 0 or MEASURE_EUSAGE /
 * MEASURE_ERUNTIME with one line in m->err (the CLI prints it once and maps
 * it to an exit status); notices for a run that goes on are kept in
 * m->notes. Implemented by build.c (the order of the steps, the embedded
 * target, the engine configuration, report settings, copy and release),
 * requests.c, spool.c, net.c and rules.c, which share measure_int.h, run.c,
 * and say.c (measure_fail, measure_note, below all of them). */
#ifndef PACER_MEASURE_MEASURE_H
#define PACER_MEASURE_MEASURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "util/strlist.h"
#include "engine/engine.h"
#include "plan/inspect.h"
#include "plan/plan.h"
#include "plan/workload.h"
#include "probe/probe.h"
#include "result/cost.h"
#include "result/names.h"

struct report_conn;
struct report_ctx;
struct target;
struct target_plan;
struct table;
struct table_wire;
struct measure_spool;
struct tls_ctx;
struct tls_identity;
struct quic_ctx;
struct history_db;
struct script;

/* What a step returns besides 0 (with one line in the measurement's err):
 * the input is wrong or the target unreachable (the user's to fix), or
 * pacer itself failed (memory, threads, its own files). */
#define MEASURE_EUSAGE (-2000)
#define MEASURE_ERUNTIME (-2001)
#define MEASURE_ERR_CAP 1024
#define MEASURE_NOTES 8
#define MEASURE_NOTE_CAP 600

struct measure {
	/* inputs (set by the caller before measure_build; they all stand
	 * before `addr`: measure_copy_inputs copies up to it) */
	const char *cmd;            /* "run", "ramp": for error messages */
	const char *url_arg;        /* the URL (or, self-contained, an optional path) */
	const char *body_arg;       /* --body DATA|@FILE */
	const char *self_contained; /* NULL, or the plan name/file (default "hello") */
	unsigned target_threads;    /* self-contained: server threads */
	const char *requests_file;  /* --requests-file: a request table */
	const char *requests_format;/* --requests-format auto|targets|jsonl */
	const char *bodies_dir;     /* --bodies DIR: one request per file, to url_arg */
	const char *max_body;       /* --max-body SIZE */
	bool lazy;                  /* --lazy: stream --requests-file through a spool */
	const char *success;        /* --success RULE */
	struct strlist outcomes;   /* --outcome NAME=RULE (repeatable) */
	const char *server_time;    /* --server-time SPEC */
	const char *inspect_body;   /* --inspect-body SIZE */
	uint32_t target_pid;        /* --target-pid PID (0: none) */
	bool target_children;       /* --target-children */
	const char *target_cgroup;  /* --target-cgroup PATH */
	struct strlist cost_args;  /* --cost-profile NAME=USD (repeatable) */
	uint32_t target_cores;      /* --target-cores N (0: not given) */
	uint64_t lag_limit_ns;      /* --lag-limit D (generator check; 0: 1 ms) */
	bool limited_ok;            /* --limited-ok: exit 0 even when generator-limited */
	const char *segment_arg;    /* --segment K/N */
	const char *start_at_arg;   /* --start-at TIME */
	const char *script_path;    /* -s/--script FILE.lua (NULL: none; src/script) */
	struct strlist script_args; /* what followed -- on the command line: init(args) */
	const char *script_memory;  /* --script-memory SIZE: each Lua state's cap */
	uint64_t script_timeout_ns; /* --script-timeout D: one hook call during the load */
	struct table *offered_table; /* a table built before the command (pacer bench: a
	                             * scenario's inline mix), borrowed: used, like a
	                             * --requests-file table (format "mix"), when neither
	                             * --requests-file, --bodies nor --self-contained is
	                             * given; the caller frees it after measure_release */
	/* the rest of the shared options (cli/options.h) */
	struct strlist headers;    /* -H 'Name: value' (repeatable) */
	struct strlist redact_headers; /* --redact-header NAME (repeatable) */
	const char *order;          /* --order sequential|random */
	const char *arrival;        /* --arrival constant|poisson */
	const char *precision_arg;  /* --precision-budget P% (plan.precision) */
	const char *report_dir;     /* --report-dir DIR */
	char report_json[4096];     /* DIR/result.json when --report-dir has no --out */
	const char *metrics_listen; /* --metrics-listen ADDR:PORT (NULL: no metrics endpoint) */
	bool metrics_listen_any;    /* --metrics-listen-any: a non-loopback address is allowed */
	struct net_addr metrics_addr; /* --metrics-listen parsed (cli_options_apply) */
	const char *history;        /* --history FILE.db (or PACER_HISTORY), NULL: none */

	/* outputs */
	struct net_addr addr;       /* one host */
	const char *url_http;       /* the run's http(s) URL (a table's unix:PATH: prefix off) */
	struct engine_host *hosts;  /* a table of several hosts: one each (owned), else NULL */
	uint32_t n_hosts;           /* 0 with one host */
	struct engine_req *reqs;    /* owned */
	size_t n_reqs;
	struct req_names names;     /* the requests' names (reqs[i].name indexes them);
	                             * plan->names points here */
	struct target *srv;         /* self-contained only */
	struct target_plan *tplan;
	char url_buf[512];          /* self-contained: the URL driven */
	char *body_buf;
	char **bufs;                /* encoded requests, owned */
	struct table *table;        /* --requests-file / --bodies */
	struct table_wire *wire;    /* the table's encoded requests */
	struct measure_spool *spool;  /* --lazy: the mapped spool (reqs points into it) */
	char table_sha256[65];
	struct tls_ctx *tls_client;   /* https: the driver's TLS context */
	struct tls_ctx *tls_server;   /* self-contained --tls: the embedded target's */
	struct tls_identity *tls_id;  /* self-contained --tls: its generated certificate */
	struct quic_ctx *quic_client; /* --http3: the driver's QUIC (GnuTLS) context */
	struct quic_ctx *quic_server; /* self-contained --http3: the embedded target's */
	struct inspect inspect;     /* response rules; plan->inspect points here when active */
	struct cost_profiles costs; /* --cost-profile, or the illustrative defaults */
	struct probe *probe;        /* target resource sampler, when there is a target to probe */
	struct plan_workload workload; /* the requests as encoded; plan->workload points here */
	struct history_db *history_db; /* --history, opened by cli_options_apply (owned) */
	struct script *script;         /* -s: the loaded script (owned) */
	struct plan_script script_rec; /* -s: what the plan records of it; plan->script */
	struct report_conn *conns;  /* where the requests go, one per host, as connected
	                             * (measure_connect; owned); report_ctx.conns */
	size_t n_conns;
	char err[MEASURE_ERR_CAP];  /* the failure of the last step that failed ("" before) */
	size_t n_notes;             /* notices: the run goes on (a host that is down, ...) */
	char notes[MEASURE_NOTES][MEASURE_NOTE_CAP];
};

/* A step failed: its line into m->err (the first failure's stays: it is
 * the cause) and `code`, to return. */
int measure_fail(struct measure *m, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* A notice for a run that goes on, kept in m->notes (past MEASURE_NOTES:
 * the last one says how many more there were). */
void measure_note(struct measure *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Complete the plan before it is validated: parse the URL (or start the
 * embedded target on loopback), read the body, load the table, encode and
 * name the requests, set up TLS (plan->url/body/url_str/table/workload/
 * names and s's outputs). No connection to the target is made. Returns 0,
 * or MEASURE_E* with one line naming the problem. */
int measure_build(struct measure *s, struct run_plan *plan);

/* After plan_validate, with the plan unchanged from then on: check the
 * open-file limit, resolve the target and check that it accepts a
 * connection (each host of a table; TLS too). 0, or MEASURE_E* with one
 * line. */
int measure_connect(struct measure *s, const struct run_plan *plan);

/* Parse --success, --outcome, --server-time and --inspect-body into
 * s->inspect and point plan->inspect at it when any was given. Call right
 * after option parsing (before SLOs, which may name outcomes). 0, or
 * MEASURE_EUSAGE with one line naming the option and the problem. */
int measure_rules(struct measure *s, struct run_plan *plan);

/* Start sampling the target's resources (--target-pid / --target-cgroup,
 * or the embedded target): after measure_connect. 0, or MEASURE_EUSAGE
 * with one line naming the PID or path. */
int measure_start_probe(struct measure *s);

/* Fill res->target from the probe over res's measured phase (nothing
 * when there is no probe). */
void measure_probe_window(struct measure *s, struct run_result *res);

/* Report settings that come from the options: cost profiles, the cores
 * the target could use and where that number came from (--target-cores,
 * the embedded target's threads, the --target-cgroup's cpu.max or cpuset;
 * else the machine's cores, for the generator check only), the
 * generator-check threshold. */
void measure_report_ctx(const struct measure *s, struct report_ctx *ctx);


/* The session configuration for the engine from a validated plan. */
void measure_engine_cfg(const struct measure *s, const struct run_plan *plan,
			  struct engine_cfg *cfg);

/* dst (not prepared) gets src's inputs, with lists of its own (a compare
 * variant starts from the shared options; offered_table stays borrowed).
 * 0 or -ENOMEM. */
int measure_copy_inputs(struct measure *dst, const struct measure *src);

/* Stop the embedded target (if any) and free everything but the borrowed
 * offered_table. */
void measure_release(struct measure *s);

/* -s: the hook that failed during the last step (the engine stopped it:
 * engine_aborted), as one line "script FILE:LINE: in HOOK(): what" into
 * msg. False when none failed (or no script). */
bool measure_script_failed(const struct measure *s, char *msg, size_t cap);

/* -s: call the script's done(summary, latency, requests) with the figures
 * of measured phase p (over duration_ns, at offered rate_per_s; label: a
 * ramp step's or a variant's name, or NULL). 0, or MEASURE_EUSAGE with one
 * line in s->err (done() failed). Nothing when there is no script or it
 * has no done(). */
int measure_script_done(struct measure *s, const struct run_result *r, const char *label);

/* Whether the target (any host of a table) is on this machine, judged from
 * the address connected to (after --connect-to, DNS or --unix-socket). */
bool measure_target_local(const struct measure *s);

/* CPU time the embedded target's threads used so far, in ns (0 if none). */
uint64_t measure_target_cpu_ns(const struct measure *s);
/* The embedded target's thread IDs, up to cap (0 if none): the count. */
size_t measure_target_tids(const struct measure *s, pid_t *tids, size_t cap);

/* ---- run.c: the measurement itself ------------------------------------- */

struct ramp_plan;
struct runner_hooks;
struct runner_result;

/* One variant to measure: a set-up and its plan. */
struct measure_variant {
	const char *name;          /* "" for a plain run or ramp */
	struct measure *m;
	struct run_plan *plan;
};

/* What to measure: the shape the runner runs (runner/runner.h) over the
 * prepared variants. */
struct measure_spec {
	size_t n;                  /* 1..RUNNER_MAX_VARIANTS */
	const struct measure_variant *v;
	const struct ramp_plan *ramp; /* NULL: one measurement per repetition; else a ramp
				   * (its retries and SLO) */
	uint32_t repetitions;      /* independent, interleaved (compare); 0 or 1: one */
	bool compact_steps;        /* repetitions of ramps: free each step's histograms */
};

/* Everything before the load for one variant: complete the plan
 * (measure_build), validate it (it is not changed after), resolve and probe
 * the target (measure_connect) and start the target's probe. 0 or MEASURE_E*
 * with one line in m->err (the plan's own refusal as plan_validate says it). */
int measure_prepare(struct measure *m, struct run_plan *plan);
/* The second half of measure_prepare, for a caller that sets something of
 * the plan between measure_build and the validation (the start a
 * distributed run's barrier agrees on): validate, connect, start the
 * probe. */
int measure_ready(struct measure *m, struct run_plan *plan);

/* Run spec: each variant's engine session from its plan, the machine's
 * floor measured before the first load (--calibrate), an inconclusive ramp
 * step measured again (--retries), --realtime, --start-at, through the
 * runner with the caller's hooks (waiting, progress, probes, rows). *out
 * is the runner's result (free with runner_result_free, also after an
 * error). 0, or MEASURE_ERUNTIME with one line in v[0].m->err naming the
 * variant whose session failed. */
int measure_run(const struct measure_spec *spec, const struct runner_hooks *hooks,
		struct runner_result *out);

#endif
