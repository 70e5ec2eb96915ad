/* pacer — the /metrics exposition: a pure writer of the live figures
 * (engine_live) in the Prometheus text format 0.0.4 or OpenMetrics 1.0.0,
 * and the recent-window quantiles estimated from the live latency buckets.
 * No sockets, threads or clocks: everything it writes is in the view it is
 * handed (docs/metrics.md lists the families). */
#ifndef PACER_METRICS_EXPO_H
#define PACER_METRICS_EXPO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "engine/engine.h"

#define METRICS_MAX_VARIANTS 8 /* = RUNNER_MAX_VARIANTS */
#define METRICS_N_QUANTILES 4  /* 0.5, 0.9, 0.99, 0.999 */

enum metrics_format {
	METRICS_TEXT,        /* text/plain; version=0.0.4 */
	METRICS_OPENMETRICS, /* application/openmetrics-text; version=1.0.0 */
};

enum metrics_phase { MPH_IDLE = 0, MPH_WARMUP, MPH_MEASURE, MPH_DRAIN };

/* One engine session's figures as of a scrape. */
struct metrics_variant {
	const char *name;          /* borrowed; "" or NULL: no variant label (one variant) */
	struct engine_live live;   /* zeros before its first measurement */
	uint32_t step;             /* 1-based measurement or ramp step under way (or last); 0: none */
	double offered_per_s;      /* its offered rate (0: closed loop, or none yet) */
	enum metrics_phase phase;
	double recent_s[METRICS_N_QUANTILES]; /* latency quantiles of the recent window, s
	                                       * (NaN: no response in it) */
	uint64_t recent_count;     /* responses in the recent window */
};

struct metrics_view {
	/* labels on every sample (borrowed; NULL or "": not written): the
	 * run's id and its scenario (docs/metrics.md) */
	const char *run, *scenario;
	/* pacer_build_info's labels (borrowed; NULL: the family is not
	 * written) */
	const char *version, *commit;
	size_t n_variants;         /* 1..METRICS_MAX_VARIANTS */
	const struct metrics_variant *v;
	const char *const *outcome_names; /* n_outcomes names of the --outcome rules (borrowed) */
	uint32_t n_outcomes;
	double window_s;           /* length of the recent window */
	/* The hypervisor's steal time since the server started: [0] over the
	 * CPUs the generator may run on, [1] over every CPU; steal_cpus how
	 * many CPUs each is of. Not written when !steal_known. */
	bool steal_known;
	double steal_s[2];
	uint32_t steal_cpus[2];
};

/* The quantiles the recent window reports (0.5, 0.9, 0.99, 0.999). */
extern const double metrics_quantiles[METRICS_N_QUANTILES];

/* Write the view to f in format fmt. Pure but for f; returns 0, or -EIO
 * when f reported an error. */
int metrics_expo_write(FILE *f, const struct metrics_view *v, enum metrics_format fmt);

/* The Content-Type header value of a format. */
const char *metrics_content_type(enum metrics_format fmt);

/* The format an Accept header asks for: OpenMetrics when it names
 * application/openmetrics-text (without q=0), else the text format (also
 * for NULL). */
enum metrics_format metrics_negotiate(const char *accept);

/* Quantile q (0..1) of live latency buckets (ENGINE_LIVE_BUCKETS + 1
 * counts, not cumulative, as in struct engine_live), in seconds: linear
 * within the bucket holding the rank, as Prometheus' histogram_quantile
 * does (a bucket spans at most a factor 1.030, so the estimate is within
 * 3.0 % of the truth); the overflow bucket gives its lower edge. NaN when
 * the buckets are empty. */
double metrics_quantile(const uint64_t *buckets, double q);

#endif
