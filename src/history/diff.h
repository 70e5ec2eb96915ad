/* pacer — the difference between two saved results (`pacer diff`; pure: a
 * function of the two parsed results, no I/O).
 *
 * Per headline metric (history/headline.h): old, new, their ratio (errors:
 * the difference in percentage points) and whether the change is beyond
 * the noise:
 *   - both sides with repetitions (--repeat N, compare): a bootstrap 95 %
 *     interval on the ratio of medians, as `pacer compare` computes it
 *     (stats/summary.h: summary_ratio_ci); significant when it excludes 1
 *     and the ratio is further from 1 than the noise threshold;
 *   - single runs, latency percentiles: each side's distribution-free 95 %
 *     interval for that percentile (the order statistics at ranks
 *     n q ± 1.96 sqrt(n q (1 - q)), read from the saved histogram);
 *     significant when the two intervals do not overlap and the ratio is
 *     beyond the noise threshold;
 *   - errors, and sessions completed of started: a two-proportion z test
 *     (|z| > 1.96);
 *   - sessions' duration percentiles (session_p50, session_p99) and each
 *     step's p50 and p99 latency (a session run's by_name): the
 *     percentile intervals of their histograms, as latency's;
 *   - other single figures (rate, capacity, CPU, cost): the noise threshold
 *     alone (the method says so).
 * Two results are comparable when they share kind, requests (the workload
 * hash, plan.workload.workload_sha256: what was sent, not where, so two
 * builds of one service on two ports compare; results from before it: the
 * table hash, which holds the URL's host and port), workload (loop, rate,
 * arrival, connections, concurrency, method, body size, threads, mode; a
 * ramp's steps, SLO and step length), protocol, hardware (CPU model, cores,
 * arch) and pacer's major version; a self-contained benchmark also its
 * embedded plan. Otherwise diff_result names the first field that differs.
 * This is the one rule: pacer diff, pacer history --trend and the trend
 * chart of pacer report --history all call diff_comparable. */
#ifndef PACER_HISTORY_DIFF_H
#define PACER_HISTORY_DIFF_H

#include <stdbool.h>
#include <stddef.h>

#include "history/headline.h"
#include "doc/read.h"

enum diff_method {
	DIFF_NONE,      /* a side lacks the figure */
	DIFF_BOOTSTRAP, /* ratio of medians over repetitions */
	DIFF_PCT_CI,    /* percentile intervals of the two histograms */
	DIFF_ZTEST,     /* errors: two proportions */
	DIFF_THRESHOLD, /* the noise threshold alone */
};

struct diff_row {
	enum headline_metric m;
	double old_v, new_v;
	double ratio;      /* new / old (NaN when old is 0 or a side is missing) */
	double delta;      /* new - old (errors: percentage points) */
	double lo, hi;     /* 95 % interval of the ratio (NaN when the method has none) */
	bool significant;  /* beyond the noise by the method's test */
	bool worse;        /* the change is in the bad direction */
	enum diff_method method;
	size_t n_old, n_new; /* repetitions (bootstrap) or recorded values (histograms) */
};

/* A session step both sides have (by_name under the same name): its p50
 * and p99 latency compared as the headline percentiles are, from each
 * side's histogram of the step (rows with m HM_P50 and HM_P99). */
struct diff_step {
	char name[HISTORY_STEP_NAME_CAP];
	struct diff_row p50, p99;
};

struct diff_result {
	bool comparable;
	char field[64];     /* the first differing field ("table hash", "cpu_model", ...) */
	char old_s[160], new_s[160]; /* its two values */
	size_t n_rows;
	struct diff_row rows[HM_COUNT]; /* the metrics both sides have */
	size_t n_steps;                 /* session runs: the steps both sides have */
	struct diff_step steps[HISTORY_STEPS_MAX];
};

/* Only the comparability of b (new) with a (old): out->comparable, else
 * out->field and its two values (no rows). Never fails. */
void diff_comparable(const struct loaded_result *a, const struct loaded_result *b,
		     struct diff_result *out);

/* Compare b (new) against a (old); noise is a fraction (0.05 = 5 %). Never
 * fails: rows are the metrics both results carry. */
void diff_results(const struct loaded_result *a, const struct loaded_result *b, double noise,
		  struct diff_result *out);

/* A --fail-on rule: "p99>+10%" fires when p99 rose by more than 10 % and
 * the rise is significant; "capacity<-5%" when capacity fell by more than
 * 5 %; "errors>+0.1pp" when errors rose by more than 0.1 percentage
 * points; "step:login.p99>+10%" when the session step login's p99 did
 * (a step that a side lacks never fires). */
struct diff_rule {
	enum headline_metric m;
	char op;          /* '>' or '<' */
	double threshold; /* a fraction (0.10) or, with pp, percentage points */
	bool pp;
	/* "step:NAME.p99>+10%": a session step's p50 or p99 (m HM_P50 or
	 * HM_P99) instead of the headline's; "" for a headline metric */
	char step[HISTORY_STEP_NAME_CAP];
};

/* The rule's metric as written: "p99", "step:login.p99". */
const char *diff_rule_metric(const struct diff_rule *r, char *buf, size_t cap);

#define DIFF_MAX_RULES 16

/* Parse a comma-separated list of rules into r[0..*n). 0, or PACER_EPARSE
 * with a one-line message naming the rule in err. */
int diff_rules_parse(const char *expr, struct diff_rule *r, size_t cap, size_t *n, char *err,
		     size_t errlen);

/* Whether rule fires on d's row of its metric (false when d has none). */
bool diff_rule_fires(const struct diff_rule *rule, const struct diff_result *d);

/* The method's name for a reader: "bootstrap over repetitions", ... */
const char *diff_method_name(enum diff_method m);

#endif
