/* pacer — what the pieces of a measurement's set-up share (measure.h is
 * their public face). Internal to src/measure/:
 *   build.c     measure_build (the order of the steps), the embedded target,
 *               the engine configuration, report settings, copy and release,
 *               measure_fail and measure_note
 *   requests.c  the requests: body, request table, encoding, naming and
 *               hashing them
 *   spool.c     --lazy: a table of any size through a mapped spool
 *   net.c       where they go: TLS, Unix sockets, --connect-to, several
 *               hosts, resolving and the connection probes, rlimit
 *   rules.c     response rules, cost profiles, the target probe
 *   run.c       measure_run: the runner over the assembled variants
 *   script.c    -s FILE.lua: the script that makes the requests
 * Each function returns 0 or MEASURE_E* with one line in s->err. */
#ifndef PACER_MEASURE_MEASURE_INT_H
#define PACER_MEASURE_MEASURE_INT_H

#include <stdint.h>

#include "measure/measure.h"
#include "plan/plan.h"
#include "table/table.h"
#include "util/clock.h"

/* The longest wait for one connection (or TLS handshake) probe before the
 * run: --timeout, but never more than this, so an unreachable target is
 * said within seconds. */
#define MEASURE_PROBE_TIMEOUT_MAX_NS (5 * NS_PER_S)

/* The timeout of a probe before plan's run (MEASURE_PROBE_TIMEOUT_MAX_NS). */
static inline uint64_t measure_probe_timeout_ns(const struct run_plan *plan)
{
	return plan->timeout_ns < MEASURE_PROBE_TIMEOUT_MAX_NS ? plan->timeout_ns
							     : MEASURE_PROBE_TIMEOUT_MAX_NS;
}

/* setup_requests.c */

/* --body DATA|@FILE into plan->body, body_len and body_source (a file is
 * read into s->body_buf). Nothing without --body. */
int measure_req_body(struct measure *s, struct run_plan *plan);

/* --requests-file / --bodies / s->offered_table: load, check, encode and
 * identify the table into s->table, s->wire, s->reqs and s->workload, and
 * describe it in plan (table_*, url_str). */
int measure_req_table(struct measure *s, struct run_plan *plan);

/* --max-body and --requests-format, checked whether or not a table is
 * given (a bad value is an error, not ignored). 0 or MEASURE_EUSAGE with one
 * line naming the option. */
int measure_req_table_opts(struct measure *s);

/* The requests of the run: a table's (already encoded by measure_req_table),
 * one per route of the embedded target's plan (self-contained without a
 * path), else one to plan->url; hashed, named, and the workload finished
 * (plan->workload, plan->names). Needs plan->url parsed and the body read. */
int measure_req_encode(struct measure *s, struct run_plan *plan);

/* setup_spool.c */

struct table_limits;
/* --lazy: stream --requests-file (fmt AUTO, TARGETS or JSONL) into a
 * file-backed spool: s->reqs (mapped), s->n_reqs, s->names, s->table_sha256
 * and s->workload (counted, not finished), plan->names, url_str and
 * table_requests; s->table holds the hosts of the whole table, its source
 * and format, and no requests (table_stream_take_hosts). Memory does not
 * grow with the table. */
int measure_spool_table(struct measure *s, struct run_plan *plan,
		      const struct table_limits *lim, enum table_format fmt);
/* Unmap the spool (measure_release). */
void measure_spool_release(struct measure *s);

/* setup_net.c */

/* The TLS side of the plan (read, not changed): check the options against the URL (and the
 * table's hosts) and make the driver's context, s->tls_client. */
int measure_net_tls(struct measure *s, const struct run_plan *plan);

/* That the connections (both ends of each, self-contained), the spare
 * descriptors and each worker's loop fit RLIMIT_NOFILE. */
int measure_net_fd_limit(struct measure *s, const struct run_plan *plan);

/* Where the requests go: the table's hosts, one Unix socket, --connect-to,
 * or the URL's host, resolved into s->addr (or s->hosts), then probed with
 * a connection and, for https, a handshake. url_http is the http(s) part of
 * plan->url_str (a table's first URL may be unix:PATH:http://...). */
int measure_net_connect(struct measure *s, const struct run_plan *plan, const char *url_http);

/* script.c */

/* -s: the script loaded (its top level run; wrk's fields from the URL,
 * -H, -X, --body), and what the plan records of it (plan->script). */
int measure_script_load(struct measure *s, struct run_plan *plan);
/* -s: every worker's state started against the resolved target. */
int measure_script_start(struct measure *s);
/* -s: the engine's flows (callbacks, states, capture, names). */
void measure_script_engine(const struct measure *s, struct engine_cfg *cfg);

#endif
