/* pacer — latency distributions of the embedded target (pure: sampling
 * takes the caller's rng; no clocks, no allocation). */
#ifndef PACER_TARGET_DIST_H
#define PACER_TARGET_DIST_H

#include <stdint.h>

#include "util/rng.h"

#define TARGET_LATENCY_CAP_NS (3600ull * 1000000000ull) /* longest latency: 1 h */

enum target_dist_kind {
	TARGET_DIST_NONE = 0, /* no added latency */
	TARGET_DIST_FIXED,    /* always a_ns */
	TARGET_DIST_UNIFORM,  /* uniform in [a_ns, b_ns] */
	TARGET_DIST_EXPONENTIAL, /* mean a_ns */
	TARGET_DIST_LOGNORMAL,   /* median a_ns, 99th percentile b_ns */
};

struct target_dist {
	enum target_dist_kind kind;
	uint64_t a_ns;   /* fixed: value; uniform: min; exponential: mean; lognormal: p50 */
	uint64_t b_ns;   /* uniform: max; lognormal: p99; else 0 */
	uint64_t cap_ns; /* samples are clamped to at most this (exponential, lognormal) */
	double mu, sigma; /* lognormal: ln(p50) and (ln p99 - ln p50) / z(0.99) */
};

/* Fill d from its parameters and check them: 0, or PACER_ERANGE with *why
 * (static text) saying what was expected ("p99 >= p50", "p50 > 0",
 * "max >= min", "mean > 0", "at most 1h" for a value or cap over
 * TARGET_LATENCY_CAP_NS). cap_ns = 0 means TARGET_LATENCY_CAP_NS. */
int target_dist_set(struct target_dist *d, enum target_dist_kind kind, uint64_t a_ns, uint64_t b_ns,
                    uint64_t cap_ns, const char **why);

/* One sample in ns. Consumes no randomness for NONE and FIXED, at most one draw for
 * UNIFORM and EXPONENTIAL, two for LOGNORMAL. */
uint64_t target_dist_sample(const struct target_dist *d, struct rng *r);

/* The q-quantile (0 < q < 1) of the configured distribution in ns, before
 * clamping: what sampled percentiles should approach. */
double target_dist_quantile(const struct target_dist *d, double q);

/* "fixed", "uniform", "exponential", "lognormal" ("none" for NONE). */
const char *target_dist_name(enum target_dist_kind kind);

#endif
