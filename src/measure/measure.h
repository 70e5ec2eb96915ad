/* pacer — what run, ramp and later commands share between parsing options
 * and starting the engine: the requests to send (encoded once), where to
 * send them, and in self-contained mode the embedded target itself.
 * CLI layer: prints one error line itself and returns an exit code.
 * Implemented by setup.c (prepare, release), setup_requests.c, setup_net.c
 * and setup_rules.c, which share setup_int.h. */
#ifndef PACER_CLI_SETUP_H
#define PACER_CLI_SETUP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "cli/opts.h"
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
struct setup_spool;
struct tls_ctx;
struct tls_identity;
struct history_db;

struct cli_setup {
	/* inputs (set by the caller before cli_setup_build; they all stand
	 * before `addr`: cli_setup_copy_inputs copies up to it) */
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
	struct table *offered_table; /* a table built before the command (pacer bench: a
	                             * scenario's inline mix), borrowed: used, like a
	                             * --requests-file table (format "mix"), when neither
	                             * --requests-file, --bodies nor --self-contained is
	                             * given; the caller frees it after cli_setup_release */
	/* the rest of the shared options (cli/options.h) */
	struct strlist headers;    /* -H 'Name: value' (repeatable) */
	const char *order;          /* --order sequential|random */
	const char *arrival;        /* --arrival constant|poisson */
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
	struct setup_spool *spool;  /* --lazy: the mapped spool (reqs points into it) */
	char table_sha256[65];
	struct tls_ctx *tls_client;   /* https: the driver's TLS context */
	struct tls_ctx *tls_server;   /* self-contained --tls: the embedded target's */
	struct tls_identity *tls_id;  /* self-contained --tls: its generated certificate */
	struct inspect inspect;     /* response rules; plan->inspect points here when active */
	struct cost_profiles costs; /* --cost-profile, or the illustrative defaults */
	struct probe *probe;        /* target resource sampler, when there is a target to probe */
	struct plan_workload workload; /* the requests as encoded; plan->workload points here */
	struct history_db *history_db; /* --history, opened by cli_options_apply (owned) */
	struct report_conn *conns;  /* where the requests go, one per host, as connected
	                             * (cli_setup_connect; owned); report_ctx.conns */
	size_t n_conns;
};

/* Complete the plan before it is validated: parse the URL (or start the
 * embedded target on loopback), read the body, load the table, encode and
 * name the requests, set up TLS (plan->url/body/url_str/table/workload/
 * names and s's outputs). No connection to the target is made. Returns 0,
 * or an exit code after printing one line naming the problem. */
int cli_setup_build(struct cli_setup *s, struct run_plan *plan);

/* After plan_validate, with the plan unchanged from then on: check the
 * open-file limit, resolve the target and check that it accepts a
 * connection (each host of a table; TLS too). 0, or an exit code after one
 * line. */
int cli_setup_connect(struct cli_setup *s, const struct run_plan *plan);

/* Parse --success, --outcome, --server-time and --inspect-body into
 * s->inspect and point plan->inspect at it when any was given. Call right
 * after option parsing (before SLOs, which may name outcomes). 0, or
 * EXIT_USAGE after printing one line naming the option and the problem. */
int cli_setup_rules(struct cli_setup *s, struct run_plan *plan);

/* The options cli_setup_rules reads, for a subcommand's option table
 * (copied in by the caller; see cmd_run.c). */
#define CLI_RULE_OPTS(s)                                                                          \
	{0, "inspect-body", OPT_STR, &(s).inspect_body, "SIZE", "64KiB",                           \
	 "body bytes the rules look at (the rest is not inspected)", false},                       \
	{0, "outcome", OPT_STRLIST, &(s).outcomes, "NAME=RULE", NULL,                              \
	 "count responses matching RULE as outcome NAME, e.g. fill='body contains \"<Ad\"' "     \
	 "(repeatable; docs/rules.md)", false},                                                    \
	{0, "server-time", OPT_STR, &(s).server_time, "SPEC", NULL,                                \
	 "server-reported execution time: server-timing[:METRIC], header:NAME[:UNIT], "           \
	 "json:PATH[:UNIT]", false},                                                              \
	{0, "success", OPT_STR, &(s).success, "RULE", "status in 200..399",                        \
	 "what counts as a successful response (docs/rules.md)", false}

/* The transport options (docs/tls.md) of run, ramp and compare, for a
 * subcommand's option table; p is the struct run_plan they fill. */
#define CLI_TRANSPORT_OPTS(p)                                                                     \
	{0, "cacert", OPT_STR, &(p).tls.cacert, "FILE", "system store",                            \
	 "https: trust the CAs in this PEM file instead of the system's", false},                  \
	{0, "cert", OPT_STR, &(p).tls.cert, "FILE", NULL,                                           \
	 "https: client certificate (PEM) for servers that ask for one", false},                    \
	{0, "insecure", OPT_FLAG, &(p).tls.insecure, NULL, NULL,                                    \
	 "https: do not verify the server's certificate", false},                                   \
	{0, "key", OPT_STR, &(p).tls.key, "FILE", "in --cert", "https: private key of --cert (PEM)", \
	 false},                                                                                    \
	{0, "no-tls-resume", OPT_FLAG, &(p).tls.no_resume, NULL, NULL,                              \
	 "https: a full handshake on every new connection", false},                                 \
	{0, "tls", OPT_FLAG, &(p).tls.self_signed, NULL, NULL,                                      \
	 "self-contained: the embedded target serves https with a generated certificate", false},   \
	{0, "tls-resume", OPT_FLAG, &(p).tls.resume_flag, NULL, "on",                              \
	 "https: resume TLS sessions when reconnecting", false},                                    \
	{0, "no-keepalive", OPT_FLAG, &(p).no_keepalive, NULL, NULL,                                \
	 "a new connection for every request (pacer closes it after the response)", false},         \
	{0, "h2c", OPT_FLAG, &(p).http.h2c, NULL, NULL,                                           \
	 "HTTP/2 over cleartext with prior knowledge (http:// URLs; docs/http2.md)", false},        \
	{0, "h2-window", OPT_STR, &(p).http.window, "SIZE", "16MiB",                              \
	 "HTTP/2: receive window of each stream and of each connection", false},                    \
	{0, "http2", OPT_OPTSTR, &(p).http.http2, "prefer", NULL,                                   \
	 "HTTP/2 over TLS by ALPN h2 (https:// URLs); =prefer: HTTP/1.1 where the server keeps it", \
	 false},                                                                                    \
	{0, "max-streams", OPT_U32, &(p).http.max_streams, "N", "100",                              \
	 "HTTP/2: most requests in flight per connection (also the server's limit)", false},       \
	{0, "connect-to", OPT_STR, &(p).connect_to, "HOST:PORT", NULL,                              \
	 "connect there instead of the URL's host and port; the requests stay as they are", false}, \
	{0, "unix-socket", OPT_STR, &(p).unix_socket, "PATH", NULL,                                 \
	 "connect to this Unix socket instead of the URL's host and port", false}

/* The options about the target's resources, cost and the generator check
 * (read by cli_setup_rules, used by cli_setup_build and the reports). */
#define CLI_TARGET_OPTS(s)                                                                        \
	{0, "cost-profile", OPT_STRLIST, &(s).cost_args, "NAME=USD", "on-demand-x86=0.02,arm-spot=0.017", \
	 "price per core-hour for cost per million requests (repeatable; CPU only)", false},       \
	{0, "lag-limit", OPT_DURATION, &(s).lag_limit_ns, "D", "1ms",                              \
	 "generator check: loop-lag p99 above this flags the run generator-limited", false},       \
	{0, "limited-ok", OPT_FLAG, &(s).limited_ok, NULL, NULL,                                   \
	 "exit 0 even when the run is flagged generator-limited (default: exit 4)", false},        \
	{0, "target-cgroup", OPT_STR, &(s).target_cgroup, "PATH", NULL,                            \
	 "measure the target's CPU and memory from this cgroup v2 directory", false},              \
	{0, "target-children", OPT_FLAG, &(s).target_children, NULL, NULL,                         \
	 "with --target-pid: include its descendant processes", false},                            \
	{0, "target-cores", OPT_U32, &(s).target_cores, "N",                                       \
	 "--target-threads, --target-cgroup's quota, else measured",                               \
	 "cores the target runs on: per-core capacity and the generator check", false},            \
	{0, "target-pid", OPT_U32, &(s).target_pid, "PID", NULL,                                   \
	 "measure this process's CPU and memory (all its threads)", false}

/* Start sampling the target's resources (--target-pid / --target-cgroup,
 * or the embedded target): after cli_setup_connect. 0, or EXIT_USAGE after
 * one line naming the PID or path. */
int cli_setup_start_probe(struct cli_setup *s);

/* Fill res->target from the probe over res's measured phase (nothing
 * when there is no probe). */
void cli_setup_probe_window(struct cli_setup *s, struct run_result *res);

/* Report settings that come from the options: cost profiles, the cores
 * the target could use and where that number came from (--target-cores,
 * the embedded target's threads, the --target-cgroup's cpu.max or cpuset;
 * else the machine's cores, for the generator check only), the
 * generator-check threshold. */
void cli_setup_report_ctx(const struct cli_setup *s, struct report_ctx *ctx);

/* The exit code for a finished measurement: `base` (EXIT_OK, or
 * EXIT_SLO_FAILED) becomes EXIT_GENERATOR_LIMITED when `limited` and not
 * --limited-ok. */
int cli_setup_exit_code(const struct cli_setup *s, int base, bool limited);

/* The session configuration for the engine from a validated plan. */
void cli_setup_engine_cfg(const struct cli_setup *s, const struct run_plan *plan,
			  struct engine_cfg *cfg);

/* dst (not prepared) gets src's inputs, with lists of its own (a compare
 * variant starts from the shared options; offered_table stays borrowed).
 * 0 or -ENOMEM. */
int cli_setup_copy_inputs(struct cli_setup *dst, const struct cli_setup *src);

/* Stop the embedded target (if any) and free everything but the borrowed
 * offered_table. */
void cli_setup_release(struct cli_setup *s);

/* Whether the target (any host of a table) is on this machine, judged from
 * the address connected to (after --connect-to, DNS or --unix-socket). */
bool cli_setup_target_local(const struct cli_setup *s);

/* CPU time the embedded target's threads used so far, in ns (0 if none). */
uint64_t cli_setup_target_cpu_ns(const struct cli_setup *s);

#endif
