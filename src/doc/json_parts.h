/* pacer — pieces of the JSON results shared by run, ramp and later kinds, so
 * every kind writes the same fields the same way (docs/result.md). */
#ifndef PACER_DOC_JSON_PARTS_H
#define PACER_DOC_JSON_PARTS_H

#include "doc/doc.h"
#include "util/jsonw.h"

/* Open the top object: schema_version, kind, pacer, mode, started_at, interrupted. */
struct inspect;

void rj_head(struct jsonw *j, const struct report_ctx *c, const char *kind,
	     uint64_t started_wall_ns, bool interrupted);
/* The run plan's fields, inside an object the caller opened. */
void rj_plan_fields(struct jsonw *j, const struct run_plan *p);
/* "table": p's request table (source, format, requests, sha256, lazy,
 * order, seed, hosts), or null when its requests came from no table. */
void rj_table(struct jsonw *j, const struct run_plan *p);
/* plan.script: the script that made the requests (-s), or null. */
void rj_script(struct jsonw *j, const struct run_plan *p);
void rj_env(struct jsonw *j, const struct sysinfo_facts *env);
/* "connected": each address the requests went to (conns[n]; nothing when
 * n is 0), with whether it stayed on this machine (docs/result.md). */
void rj_connected(struct jsonw *j, const struct report_conn *conns, size_t n);
/* "clock" (--segment, --start-at; else nothing): the requested start, the
 * plan's CLOCK_REALTIME/CLOCK_MONOTONIC mapping, the wall-clock times the
 * load (warm-up) and the measured phase of r (the first ramp step; NULL:
 * unknown, 0) began, and how late the load started (docs/result.md). */
void rj_clock(struct jsonw *j, const struct run_plan *p, const struct run_result *r);
void rj_target(struct jsonw *j, const struct report_target *t, uint64_t served);
/* The "generator" object: worker threads, their CPU, and the hypervisor's
 * steal time over the load (null when not known), with rj_gen_session's
 * keys from c. */
void rj_generator(struct jsonw *j, const struct run_result *r, uint64_t responses,
		  const struct report_ctx *c);
/* Keys "realtime" (what --realtime asked and got) and "floor" (the
 * machine's floor, null when not measured) in an open object: the
 * generator's session, the same for every kind. */
void rj_gen_session(struct jsonw *j, const struct report_ctx *c);
/* A verdict's keys in an open object: pass, inconclusive, reason, why (null
 * unless inconclusive) and material (the canonical texts of the clauses of
 * s within pacer's share). */
struct slo;
struct slo_verdict;
void rj_verdict_fields(struct jsonw *j, const struct slo_verdict *v, const struct slo *s);
/* A phase object (docs/result.md), with its "by_name" array when names is
 * not NULL (doc/names.h). */
struct req_names;
void rj_phase(struct jsonw *j, const struct phase_stats *p, double duration_ns, double offered,
	      bool open_loop, double achieved, const struct inspect *in,
	      const struct req_names *names);
/* The same, with a "hosts" array (per-host counters of p, names from
 * hosts[n_hosts], a request table's) when n_hosts > 1. */
struct table_host;
void rj_phase_hosts(struct jsonw *j, const struct phase_stats *p, double duration_ns,
		    double offered, bool open_loop, double achieved, const struct inspect *in,
		    const struct table_host *hosts, size_t n_hosts, const struct req_names *names);
/* Keys "responses" (by_class, by_status) and "errors" (total, pct,
 * failed_responses, transport, by_status) of phase p, in an open object:
 * a run's phase and a compare variant's charts write them alike. */
void rj_responses_errors(struct jsonw *j, const struct phase_stats *p);
void rj_hist(struct jsonw *j, const struct hist *h);
/* The "hist" key: h's buckets as (value, count) pairs in ns, with its layout
 * (sub_bits, max_value), so that results merge exactly (pacer merge). */
void rj_hist_buckets(struct jsonw *j, const struct hist *h);
/* The per-second series; quic: each second carries HTTP/3's QUIC figures. */
void rj_series(struct jsonw *j, const struct series_point *pts, size_t n, bool quic);
/* --repeat: each repetition's figures and their median/min/max. */
void rj_repetitions(struct jsonw *j, const struct rep_figure *reps, size_t n);
/* Median/min/max of figure k (0 achieved/s, 1 p50 us, 2 p90, 3 p99, 4 p99.9,
 * 5 max, 6 errors) over repetitions. */
struct summary;
void report_rep_summary(const struct rep_figure *reps, size_t n, int k, struct summary *out);
void rj_warnings(struct jsonw *j, const struct report_warnings *w);

#endif
