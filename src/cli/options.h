/* pacer — the one option set of the measuring commands: everything `run`
 * takes about the target, the requests, the connections, the transport,
 * the response rules, the probes and the outputs is accepted, with the same
 * names and meaning, by `ramp`, `compare` and scenario files. Each command
 * adds only the options of its load shape (run: rate, duration, ...; ramp:
 * steps, SLO, ...; compare: variants, repetitions, ...).
 *
 * CLI layer: prints one error line itself and returns an exit code. */
#ifndef PACER_CLI_OPTIONS_H
#define PACER_CLI_OPTIONS_H

#include "cli/opts.h"
#include "measure/measure.h"
#include "plan/plan.h"
#include "plan/ramp.h"

/* The options measure_rules reads, for a subcommand's option table
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
	 "HTTP/2: receive window of each stream and connection (HTTP/3: of each stream)", false},                    \
	{0, "http2", OPT_OPTSTR, &(p).http.http2, "prefer", NULL,                                   \
	 "HTTP/2 over TLS by ALPN h2 (https:// URLs); =prefer: HTTP/1.1 where the server keeps it", \
	 false},                                                                                    \
	{0, "http3", OPT_FLAG, &(p).http.http3, NULL, NULL,                                        \
	 "HTTP/3 over QUIC v1 (UDP; https:// URLs; docs/http3.md)", false},                         \
	{0, "alpn", OPT_STR, &(p).http.alpn, "h3", NULL,                                            \
	 "the protocol to negotiate: h3 (the same as --http3)", false},                              \
	{0, "max-streams", OPT_U32, &(p).http.max_streams, "N", "100",                              \
	 "HTTP/2, HTTP/3: most requests in flight per connection (also the server's limit)", false}, \
	{0, "connect-to", OPT_STR, &(p).connect_to, "HOST:PORT", NULL,                              \
	 "connect there instead of the URL's host and port; the requests stay as they are", false}, \
	{0, "unix-socket", OPT_STR, &(p).unix_socket, "PATH", NULL,                                 \
	 "connect to this Unix socket instead of the URL's host and port", false}

/* The options about the target's resources, cost and the generator check
 * (read by measure_rules, used by measure_build and the reports). */
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

/* The shared options, for a command's option table; s is its struct
 * measure, p the struct run_plan they fill. */
#define CLI_LOAD_OPTS(s, p)                                                                        \
	{0, "arrival", OPT_STR, &(s).arrival, "constant|poisson", "constant",                      \
	 "open loop: spacing of due times", false},                                                \
	{0, "burst-size", OPT_U32, &(p).burst_size, "N", "1",                                      \
	 "open loop: release requests in bursts of N due at once, bursts at rate/N (as h2load --rps"\
	 " sends; docs/run.md#bursts)", false},                                                   \
	{0, "bodies", OPT_STR, &(s).bodies_dir, "DIR", NULL,                                       \
	 "one request per file in DIR, sent in turn to URL", false},                               \
	{0, "body", OPT_STR, &(s).body_arg, "DATA|@FILE", NULL,                                    \
	 "request body, literal or from a file", false},                                           \
	{0, "calibrate", OPT_DURATION, &(p).calibrate_ns, "D", "300ms",                            \
	 "before the load, measure how late this machine wakes pacer's threads for D "             \
	 "(generator.floor; 0: skip; docs/selfcheck.md)", false},                                  \
	{0, "by-name", OPT_FLAG, &(p).by_name, NULL, NULL,                                         \
	 "ramp: a table per request name after each step (run's summary always has it)", false},   \
	{'c', "connections", OPT_U32, &(p).connections, "N", "64",                                 \
	 "open loop: most connections (closed loop: same as --concurrency)", false},               \
	{0, "drain", OPT_DURATION, &(p).drain_ns, "D", "= --timeout",                              \
	 "after each measured phase, wait this long for responses", false},                        \
	{'H', "header", OPT_STRLIST, &(s).headers, "'Name: value'", NULL,                          \
	 "extra request header (repeatable)", false},                                              \
	{0, "no-redact", OPT_FLAG, &(p).redact.off, NULL, NULL,                                    \
	 "show every header's value in the result, reports and history (default: Authorization, "  \
	 "Proxy-Authorization, Cookie, Set-Cookie and --redact-header's as a fingerprint; "         \
	 "docs/run.md#secrets)", false},                                                           \
	{0, "redact-header", OPT_STRLIST, &(s).redact_headers, "NAME", NULL,                       \
	 "also show this header's value as a fingerprint only (repeatable; docs/run.md#secrets)",  \
	 false},                                                                                   \
	{0, "history", OPT_STR, &(s).history, "FILE.db", "$PACER_HISTORY",                         \
	 "also record the result in this run history (SQLite; docs/history.md)", false},           \
	{0, "lazy", OPT_FLAG, &(s).lazy, NULL, NULL,                                               \
	 "stream --requests-file through a file-backed spool: no request limit, memory bounded " \
	 "(docs/tables.md#lazy)", false},                                                          \
	{0, "max-body", OPT_STR, &(s).max_body, "SIZE", "1MiB", "largest request body in a table", \
	 false},                                                                                   \
	{'X', "method", OPT_STR, &(p).method, "M", "GET", "request method (POST when a body is given)", \
	 false},                                                                                   \
	{0, "metrics-listen", OPT_STR, &(s).metrics_listen, "ADDR:PORT", NULL,                     \
	 "serve live Prometheus/OpenMetrics figures at http://ADDR:PORT/metrics (docs/metrics.md)", \
	 false},                                                                                   \
	{0, "metrics-listen-any", OPT_FLAG, &(s).metrics_listen_any, NULL, NULL,                   \
	 "allow --metrics-listen on a non-loopback address", false},                               \
	{0, "order", OPT_STR, &(s).order, "sequential|random", "sequential",                       \
	 "order of a table's requests (random: seeded by --seed)", false},                         \
	{'o', "out", OPT_STR, &(p).out_path, "FILE", NULL, "write the JSON result (docs/result.md)", \
	 false},                                                                                   \
	{'q', "quiet", OPT_FLAG, &(p).quiet, NULL, NULL, "no live view, no table, no summary", \
	 false},                                                                                   \
	{0, "realtime", OPT_FLAG, &(p).realtime, NULL, NULL,                                       \
	 "run the worker threads at a real-time priority (root or CAP_SYS_NICE; docs/run.md#realtime)", \
	 false},                                                                                   \
	{0, "report-dir", OPT_STR, &(s).report_dir, "DIR", NULL,                                   \
	 "also write Markdown, HTML, text, CSV, hgrm, hlog and SVG charts into DIR (docs/report.md)", \
	 false},                                                                                   \
	{0, "requests-file", OPT_STR, &(s).requests_file, "FILE", NULL,                            \
	 "a request table (targets or JSON Lines; docs/tables.md)", false},                        \
	{0, "requests-format", OPT_STR, &(s).requests_format, "auto|targets|jsonl", "auto",        \
	 "format of --requests-file", false},                                                      \
	{'s', "script", OPT_STR, &(s).script_path, "FILE.lua", NULL,                               \
	 "wrk's Lua scripting interface: request(), response(), done(), ... (arguments after -- go " \
	 "to init; docs/scripting.md)", false},                                                    \
	{0, "script-memory", OPT_STR, &(s).script_memory, "SIZE", "128MiB",                        \
	 "-s: most memory each Lua state may hold", false},                                        \
	{0, "script-timeout", OPT_DURATION, &(s).script_timeout_ns, "D", "250ms",                  \
	 "-s: longest one call of a hook may run during the load (an endless loop fails)", false}, \
	{0, "seed", OPT_U64, &(p).seed, "S", "1", "seed of Poisson schedules and --order random",  \
	 false},                                                                                   \
	{0, "segment", OPT_STR, &(s).segment_arg, "K/N", NULL,                                     \
	 "run segment K of N of the plan (merge the N results with pacer merge; docs/distributed.md)", \
	 false},                                                                                   \
	{0, "self-contained", OPT_OPTSTR, &(s).self_contained, "PLAN", "hello",                    \
	 "drive pacer's own embedded target (a built-in plan or a plan file) on a loopback port",  \
	 false},                                                                                   \
	{0, "precise", OPT_FLAG, &(p).precise, NULL, NULL,                                         \
	 "open loop: wake for each due time: send lag of microseconds, 2-3x the CPU (run.md#pacing)",\
	 false},                                                                                   \
	{0, "send-window", OPT_DURATION, &(p).send_window_ns, "D", "1ms",                          \
	 "open loop: requests due within D leave at one wake-up (send lag under D)", false},       \
	{0, "precision-budget", OPT_STR, &(s).precision_arg, "P%", NULL,                           \
	 "open loop: size the send window to P% of the last second's latency p50, 50us to 10ms " \
	 "(run.md#precision-budget)", false},                                                     \
	{0, "start-at", OPT_STR, &(s).start_at_arg, "TIME", NULL,                                  \
	 "start the load at this wall-clock time: RFC 3339 (2026-12-01T12:00:00Z) or +30s",        \
	 false},                                                                                   \
	{0, "spin", OPT_DURATION, &(p).spin_ns, "D", "100us",                                      \
	 "--precise: poll instead of sleeping this close to a due time (0: always sleep)", false}, \
	{0, "target-threads", OPT_U32, &(s).target_threads, "N", "1",                              \
	 "self-contained: threads of the embedded target", false},                                 \
	{'t', "threads", OPT_U32, &(p).threads, "T", "1", "worker threads", false},                \
	{0, "timeout", OPT_DURATION, &(p).timeout_ns, "D", "10s",                                  \
	 "per-request timeout: close, count, reconnect", false},                                   \
	CLI_RULE_OPTS(s), CLI_TARGET_OPTS(s), CLI_TRANSPORT_OPTS(p)

/* The options of a ramp's shape, shared by `ramp` and `compare --steps`. */
struct cli_ramp_args {
	const char *steps, *precision;
	double from, to, factor, require;
};

#define CLI_RAMP_OPTS(a, rp)                                                                       \
	{0, "after-fail", OPT_U32, &(rp).after_fail, "N", "0",                                     \
	 "ramp: steps to run after the first failing one", false},                                 \
	{0, "factor", OPT_RATE, &(a).factor, "F", "2",                                             \
	 "geometric ramp: each step this many times the one before", false},                       \
	{0, "from", OPT_RATE, &(a).from, "R", NULL, "geometric ramp: first rate", false},          \
	{0, "precision", OPT_STR, &(a).precision, "P%", "5%",                                      \
	 "--refine: stop when pass and fail rates are this close", false},                         \
	{0, "refine", OPT_FLAG, &(rp).refine, NULL, NULL,                                          \
	 "bisect between the last passing and first failing rate", false},                         \
	{0, "retries", OPT_U32, &(rp).retries, "N", "2",                                           \
	 "ramp: measure a step again, up to N times, while pacer's own error could have decided it", \
	 false},                                                                                   \
	{0, "require", OPT_RATE, &(a).require, "R", NULL,                                          \
	 "ramp: exit 0 only if a step at or above R passed", false},                               \
	{0, "slo", OPT_STR, &(rp).slo_expr, "EXPR", NULL,                                          \
	 "pass condition of a step, e.g. 'p99<100ms,errors<1%' (docs/slo.md)", false},             \
	{0, "step-duration", OPT_DURATION, &(rp).step_ns, "D", "5s", "measured length of each step", \
	 false},                                                                                   \
	{0, "step-warmup", OPT_DURATION, &(rp).step_warmup_ns, "D", "1s",                          \
	 "warm-up of each step, not counted", false},                                              \
	{0, "steps", OPT_STR, &(a).steps, "R1,R2,...", NULL,                                       \
	 "offered rates, increasing (k, M suffixes)", false},                                      \
	{0, "to", OPT_RATE, &(a).to, "R", NULL, "geometric ramp: last rate", false}

/* Defaults of a ramp's shape (5 s steps after 1 s warm-ups, precision 5 %,
 * factor 2) into rp and a. */
void cli_ramp_defaults(struct ramp_plan *rp, struct cli_ramp_args *a);

/* Whether any ramp-shape option was given (compare: ramp mode). */
bool cli_ramp_given(const struct opt *tab, size_t n);

/* The ramp's rates (--steps, or --from/--to/--factor), precision, SLO (its
 * outcome names from s's rules, so after cli_options_apply) and the run
 * plan's rate and durations for the first step. 0, or EXIT_USAGE after one
 * line. */
int cli_ramp_apply(struct measure *s, struct ramp_plan *rp, const struct cli_ramp_args *a,
		   const struct opt *tab, size_t n);

/* Parse a subcommand's options and at most one positional argument (the URL
 * or self-contained path) into *url. Returns -1 to go on, or the exit code
 * to return: 0 after printing usage for --help, EXIT_USAGE after printing
 * one error line. */
int cli_parse_args(const char *cmd, struct opt *tab, size_t n, int argc, char **argv,
		   void (*usage)(FILE *, struct opt *, size_t), const char **url);
/* The same, with what follows the first "--" (a script's init(args), as
 * wrk passes them) appended to rest (borrowed from argv) rather than
 * parsed. */
int cli_parse_args_rest(const char *cmd, struct opt *tab, size_t n, int argc, char **argv,
			void (*usage)(FILE *, struct opt *, size_t), const char **url,
			struct strlist *rest);

/* "constant" / "poisson" (NULL: leave the default) into plan->arrival. 0, or
 * EXIT_USAGE after printing one error line. */
int cli_parse_arrival(const char *cmd, const char *arrival, struct run_plan *plan);

/* --order sequential|random (NULL: sequential). 0 or EXIT_USAGE after one line. */
int cli_parse_order(const char *cmd, const char *order, struct run_plan *plan);

/* After option parsing: what the shared options mean for the plan (the
 * drain's default, arrival, order, headers, rules, outcomes, probes' and
 * cost options, the report folder). Call before the command's own checks
 * that need the outcome names (SLOs). --history (else a non-empty
 * PACER_HISTORY) is opened here, created and migrated, so a bad database
 * fails before any load (s->history_db). 0, or EXIT_USAGE after one line. */
int cli_options_apply(struct measure *s, struct run_plan *p, const struct opt *tab, size_t n);

#endif
