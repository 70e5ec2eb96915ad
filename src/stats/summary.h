/* pacer — summary statistics over repetitions (pure): median and range, and
 * a bootstrap confidence interval for the ratio of two medians. */
#ifndef PACER_STATS_SUMMARY_H
#define PACER_STATS_SUMMARY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SUMMARY_MAX_N 1024 /* most repetitions a summary takes */

/* The fewest values on each side for a ratio's verdict: with fewer, the 95 %
 * percentile bootstrap of a ratio of medians calls two samples of one
 * distribution different more often than the 5 % its level promises (it
 * cannot resample what it has not seen). Simulated (tests/unit/stats,
 * docs/compare.md) with noise 0: n=1 100 %, 2 29 %, 3 10 %, 4 6.0 %,
 * 5 3.1 %. */
#define SUMMARY_MIN_N 5

struct summary {
	double median, min, max;
	size_t n;
};

/* Median (mean of the middle two for even n), min and max of v[0..n). n = 0
 * gives zeros. n is capped at SUMMARY_MAX_N. */
void summary_of(const double *v, size_t n, struct summary *s);

struct ratio_ci {
	double ratio;          /* median(b) / median(a) */
	double lo, hi;         /* 95 % interval of the bootstrap distribution */
	bool significant;      /* enough, the interval excludes 1 and the ratio is
				* further from 1 than the noise threshold */
	bool enough;           /* both sides have at least SUMMARY_MIN_N values */
	bool defined;          /* false when a median is 0 or a side is empty */
};

/* Bootstrap the ratio of medians median(b)/median(a): `iters` resamples of
 * each side with replacement (a fixed seed: the same inputs give the same
 * interval), percentile interval at 2.5 % / 97.5 %. A difference counts as
 * significant only when each side has SUMMARY_MIN_N values or more (else
 * out->enough is false), the interval excludes 1 and |ratio - 1| > noise
 * (e.g. 0.02: changes within 2 % are called noise, as criterion.rs does). */
void summary_ratio_ci(const double *a, size_t na, const double *b, size_t nb, unsigned iters,
		      uint64_t seed, double noise, struct ratio_ci *out);

#endif
