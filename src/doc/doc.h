/* pacer — the versioned result document (docs/result.md, docs/schema/):
 * its writers, pure functions of a finished run that read the plan, the
 * machine facts and the result (result/) and write the JSON; the reader
 * (read.h) that every later step uses, and the merge of segments
 * (merge.h); key names shared between them in keys.h. The renderers
 * (report/) and the history (history/) build on this module; it never
 * reaches back into the engine. */
#ifndef PACER_DOC_DOC_H
#define PACER_DOC_DOC_H

#include <stdio.h>

#include "plan/plan.h"
#include "result/result.h"
#include "util/sysinfo.h"

/* 2.0: `errors` counts requests that did not succeed (failed responses +
 * request transport errors); the kinds moved to `transport_errors`. */
#define REPORT_SCHEMA_VERSION "2.0"
#define REPORT_WARN_CAP 16
#define REPORT_WARN_LEN 768 /* a self-check: its finding and advice */

/* Send-lag p99 above this means the generator may not have kept up. */
#define REPORT_SEND_LAG_WARN_NS 1000000ull

/* When r's steal time is worth a warning (run_result_steal_material), its figures in words ("12.00 %
 * of the generator's CPUs (the machine's: 11.50 %)") into out; else false
 * and out empty. */
bool report_steal_words(char *out, size_t cap, const struct run_result *r);

/* Self-contained mode: the embedded target pacer drove. */
struct report_target {
	const char *plan_name;
	unsigned threads;
	uint64_t cpu_ns;        /* its threads' CPU over the whole step */
};

/* One address the requests went to, as pacer connected to it (after
 * --connect-to, DNS, or a Unix socket): the result's "connected" entries
 * (docs/result.md). */
#define REPORT_CONN_HOST_CAP 256
#define REPORT_CONN_ADDR_CAP 128
struct report_conn {
	char host[REPORT_CONN_HOST_CAP];    /* the host as the URL or table named it */
	uint16_t port;                      /* its port, as named (0 for a Unix socket) */
	char address[REPORT_CONN_ADDR_CAP]; /* "127.0.0.1:8080", "[::1]:443", "unix:/run/x.sock" */
	bool loopback;                      /* the connection stayed on this machine */
};

struct report_ctx {
	const struct run_plan *plan;
	const struct sysinfo_facts *env;
	const struct run_result *res;
	const char *mode;       /* "live" or "self_contained" */
	const struct report_target *target; /* self-contained only, else NULL */
	const char *version;
	const char *commit;
	const struct cost_profiles *cost; /* NULL: no cost figures */
	double target_cores;    /* cores the target could use (generator check, per-core figures) */
	const char *target_cores_basis; /* where target_cores came from (static, docs/result.md):
				 * "option", "embedded_threads", "cgroup_cpu_max",
				 * "cgroup_cpuset", or "machine" (this machine's cores: a
				 * stand-in for the generator check, never a per-core basis) */
	uint64_t lag_limit_ns;  /* generator check threshold (0: default) */
	const struct slo *slo;  /* the SLO steps were judged by (ramp), for the
				 * generator check; NULL: none. Borrowed */
	const char *slo_expr;   /* run --slo: the expression as given; NULL: none */
	const struct slo_verdict *verdict; /* run --slo: the measured phase's verdict
				 * (report_json writes it as "slo"); NULL: none */
	const struct gen_floor *floor; /* the machine's floor (generator.floor); NULL: not
				 * measured */
	int realtime;           /* --realtime: 1 not asked, 0 granted, else the refusal's
				 * -errno (generator.realtime) */
	const struct report_conn *conns; /* where the requests went, one per host (borrowed);
				 * n_conns 0: not known, nothing written */
	size_t n_conns;
};

struct cost_profiles;
struct slo;
struct slo_verdict;

struct report_warnings {
	size_t n;
	char msg[REPORT_WARN_CAP][REPORT_WARN_LEN];
};

/* The conditions a reader must know about, in words: generator limits,
 * interruption, errors, requests left unsent or unanswered. */
void report_warnings(const struct report_ctx *c, struct report_warnings *w);

/* The versioned JSON result (docs/result.md). Returns 0 or -EIO if the
 * stream failed. */
int report_json(FILE *f, const struct report_ctx *c);

#define REPORT_ERRORS_LINE_CAP 256
/* One line of a phase's errors: "18,000 (75.00 %): 503 ×18,000; transport 0"
 * (failed responses by status, then request transport errors by kind).
 * Always terminated; cut to fit cap. */
void report_errors_line(char *out, size_t cap, const struct phase_stats *p);

#define REPORT_CAUSE_CAP 320
/* Why connections to the target were missing in phase p, from the
 * evidence: its failed connects by cause (phase_stats.connect_fail; the
 * most frequent one names the cause: "the target refused connections"),
 * then its TLS failures, with the seconds of the series pts[0..n) (NULL:
 * none) in which connects failed and the responses completed in them, e.g.
 * "the target refused connections: 23 connects refused (nothing listened
 * on the port) in seconds 2-3 of the measured phase, in which 0 responses
 * completed" (the seconds only when the series holds every failed connect
 * of p: not for repetitions pooled). Writes "" and returns false when no connection attempt
 * failed. Always terminated; cut to fit cap. */
bool report_connect_cause(char *out, size_t cap, const struct phase_stats *p,
			  const struct series_point *pts, size_t n);

/* Achieved rate of the measured phase, responses per second. */
double report_achieved_rate(const struct run_result *r);


#endif
