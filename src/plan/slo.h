/* pacer — SLO expressions (pure): parse `p99<100ms, errors<1%, rate>=0.95`
 * into clauses and format them back in a canonical form. Judging a step's
 * measurements against them is result/verdict.h.
 *
 * Grammar (see docs/slo.md): comma-separated clauses METRIC OP VALUE,
 * whitespace allowed around each token.
 *   p50|p90|p99|p99.9|p99.99|max|mean   < | <=            DURATION (unit required)
 *     (of every request; with an "ok." or "failed." prefix, of the requests
 *     that succeeded or did not: ok.p99<100ms)
 *   errors|success|drops|<outcome name> < | <= | > | >=   PERCENT  (0..100, "%" required)
 *   rate                                >= | >            FRACTION (0..1) or PERCENT
 * Metric names are case-sensitive; built-in names win over outcome names.
 * An unknown metric is an error, never silently true. Duplicate clauses are
 * kept (all apply). At most SLO_MAX_CLAUSES clauses and SLO_MAX_EXPR bytes. */
#ifndef PACER_PLAN_SLO_H
#define PACER_PLAN_SLO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SLO_MAX_CLAUSES 32
#define SLO_MAX_EXPR 1024  /* bytes of the expression, not counting the NUL */
#define SLO_NAME_MAX 64    /* metric name incl. NUL: outcome names up to 63 bytes */
#define SLO_TEXT_MAX 96    /* canonical clause text incl. NUL (always fits) */
/* A buffer this big always holds slo_format's output. */
#define SLO_FORMAT_MAX (SLO_MAX_CLAUSES * SLO_TEXT_MAX)

enum slo_metric {
	SLO_M_P50 = 0,
	SLO_M_P90,
	SLO_M_P99,
	SLO_M_P99_9,
	SLO_M_P99_99,
	SLO_M_MAX,
	SLO_M_MEAN,
	SLO_M_ERRORS,  /* percent of requests sent that did not succeed */
	SLO_M_SUCCESS, /* percent of requests sent that succeeded */
	SLO_M_DROPS,   /* percent of requests due but never sent */
	SLO_M_RATE,    /* achieved / offered, open loop only */
	SLO_M_OUTCOME, /* percent of responses with a named outcome */
};

enum slo_op {
	SLO_LT = 0, /* <  */
	SLO_LE,     /* <= */
	SLO_GT,     /* >  */
	SLO_GE,     /* >= */
};

/* Which requests a latency clause is about. */
enum slo_set {
	SLO_SET_ALL = 0, /* every request (p99) */
	SLO_SET_OK,      /* those that succeeded (ok.p99) */
	SLO_SET_FAILED,  /* those that did not (failed.p99) */
};

struct slo_clause {
	enum slo_metric metric;
	enum slo_set set;  /* latency metrics only; SLO_SET_ALL otherwise */
	int outcome_index; /* SLO_M_OUTCOME: index into the outcome names given to
	                    * slo_parse (and into result/verdict.h's
	                    * slo_measure.outcome_pct); else -1 */
	enum slo_op op;
	/* Latency metrics: ns (a whole number). Every other metric: a percent in
	 * [0, 100]; for `rate` the percent of the offered rate achieved, so
	 * `rate>=0.95` and `rate>=95%` both give 95. */
	double threshold;
	char name[SLO_NAME_MAX]; /* metric name as matched ("p99.9", "fill") */
	char text[SLO_TEXT_MAX]; /* canonical clause ("p99<100ms", "rate>=95%") */
};

struct slo {
	struct slo_clause c[SLO_MAX_CLAUSES];
	size_t n;
};

/* Parse `expr` (NUL-terminated) into *out. `outcomes` lists the n_outcomes
 * outcome names that may be used as metrics (NULL entries are skipped); the
 * list is only read during the call: clauses copy the names they use.
 * Returns 0, or on error a negative code with out->n = 0 and one line in
 * err (when err && cap > 0; truncated to fit, always terminated) naming the
 * clause by 1-based position and text and saying what was expected:
 *   PACER_EPARSE   malformed or empty clause, unknown metric, bad operator,
 *                  missing unit or "%"
 *   PACER_ERANGE   value out of range (percent over 100, fraction over 1,
 *                  duration over 1e18 ns)
 *   PACER_ETOOBIG  more than SLO_MAX_EXPR bytes or SLO_MAX_CLAUSES clauses
 *   -EINVAL        out or expr NULL, or outcomes NULL with n_outcomes > 0 */
int slo_parse(struct slo *out, const char *expr, const char *const *outcomes, size_t n_outcomes,
	      char *err, size_t cap);

/* Write the canonical expression (clause texts joined by ",", no spaces;
 * durations in the largest of s, ms, us, ns that is exact; percents with
 * the fewest decimals that give the same value back) into out. Parsing it
 * with the same outcome names gives the same clauses. It can be a little
 * longer than the text it was parsed from ("1h" becomes "3600s").
 * Returns its length, or PACER_ETOOBIG when it needs more than cap bytes
 * (out then holds "" when cap > 0). */
int slo_format(const struct slo *s, char *out, size_t cap);

/* Whether m is a latency metric (p50 .. mean: a threshold in ns). */
bool slo_metric_is_latency(enum slo_metric m);

/* The name a clause goes by in messages: its metric's ("p99"), or the name
 * as matched for an outcome or a set ("fill", "ok.p99"). Points into c or
 * at a static string. */
const char *slo_clause_name(const struct slo_clause *c);

/* A clause's threshold as written in its canonical text ("100ms", "1%",
 * "95%"), into out[cap] (always terminated; SLO_TEXT_MAX always fits). */
void slo_clause_threshold(char *out, size_t cap, const struct slo_clause *c);

/* Static name of a metric ("p99.9", "errors"; "outcome" for SLO_M_OUTCOME)
 * and of an operator ("<="); "?" when out of range. */
const char *slo_metric_name(enum slo_metric m);
const char *slo_op_name(enum slo_op op);

#endif
