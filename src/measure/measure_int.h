/* pacer — what the pieces of a measurement's set-up share (cli/setup.h is
 * their public face). Internal to src/cli/setup*.c:
 *   setup.c           cli_setup_prepare (the order of the steps), the embedded
 *                     target, the engine config, report settings, exit code,
 *                     copy and release
 *   setup_requests.c  the requests: body, request table, encoding, naming and
 *                     hashing them
 *   setup_net.c       where they go: TLS, Unix sockets, --connect-to, several
 *                     hosts, resolving and the connection probes, rlimit
 *   setup_rules.c     response rules, cost profiles, the target probe
 * Each function prints one line naming the problem and returns an exit code
 * (cli/cli.h), or 0. */
#ifndef PACER_CLI_SETUP_INT_H
#define PACER_CLI_SETUP_INT_H

#include <stdint.h>

#include "cli/setup.h"
#include "plan/plan.h"
#include "table/table.h"
#include "util/clock.h"

/* The longest wait for one connection (or TLS handshake) probe before the
 * run: --timeout, but never more than this, so an unreachable target is
 * said within seconds. */
#define SETUP_PROBE_TIMEOUT_MAX_NS (5 * NS_PER_S)

/* The timeout of a probe before plan's run (SETUP_PROBE_TIMEOUT_MAX_NS). */
static inline uint64_t setup_probe_timeout_ns(const struct run_plan *plan)
{
	return plan->timeout_ns < SETUP_PROBE_TIMEOUT_MAX_NS ? plan->timeout_ns
							     : SETUP_PROBE_TIMEOUT_MAX_NS;
}

/* setup_requests.c */

/* --body DATA|@FILE into plan->body, body_len and body_source (a file is
 * read into s->body_buf). Nothing without --body. */
int setup_read_body(struct cli_setup *s, struct run_plan *plan);

/* --requests-file / --bodies / s->offered_table: load, check, encode and
 * identify the table into s->table, s->wire, s->reqs and s->workload, and
 * describe it in plan (table_*, url_str). */
int setup_load_table(struct cli_setup *s, struct run_plan *plan);

/* --max-body and --requests-format, checked whether or not a table is
 * given (a bad value is an error, not ignored). 0 or EXIT_USAGE after one
 * line naming the option. */
int setup_check_table_opts(const struct cli_setup *s);

/* The requests of the run: a table's (already encoded by setup_load_table),
 * one per route of the embedded target's plan (self-contained without a
 * path), else one to plan->url; hashed, named, and the workload finished
 * (plan->workload, plan->names). Needs plan->url parsed and the body read. */
int setup_encode_requests(struct cli_setup *s, struct run_plan *plan);

/* setup_spool.c */

struct table_limits;
/* --lazy: stream --requests-file (fmt AUTO, TARGETS or JSONL) into a
 * file-backed spool: s->reqs (mapped), s->n_reqs, s->names, s->table_sha256
 * and s->workload (counted, not finished), plan->names, url_str and
 * table_requests; s->table holds the hosts of the whole table, its source
 * and format, and no requests (table_stream_take_hosts). Memory does not
 * grow with the table. */
int setup_spool_table(struct cli_setup *s, struct run_plan *plan,
		      const struct table_limits *lim, enum table_format fmt);
/* Unmap the spool (cli_setup_release). */
void setup_spool_release(struct cli_setup *s);

/* setup_net.c */

/* The TLS side of the plan (read, not changed): check the options against the URL (and the
 * table's hosts) and make the driver's context, s->tls_client. */
int setup_tls(struct cli_setup *s, const struct run_plan *plan);

/* That the connections (both ends of each, self-contained), the spare
 * descriptors and each worker's loop fit RLIMIT_NOFILE. */
int setup_check_fd_limit(const struct cli_setup *s, const struct run_plan *plan);

/* Where the requests go: the table's hosts, one Unix socket, --connect-to,
 * or the URL's host, resolved into s->addr (or s->hosts), then probed with
 * a connection and, for https, a handshake. url_http is the http(s) part of
 * plan->url_str (a table's first URL may be unix:PATH:http://...). */
int setup_connect(struct cli_setup *s, const struct run_plan *plan, const char *url_http);

#endif
