/* pacer — engine: the fixed latency buckets of the live figures
 * (engine.h: engine_live_edge_ns, engine_live_bucket), a leaf the hot path
 * calls: no state but two tables made once, before main. */
#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/engine.h"

/* The upper edges: ENGINE_LIVE_PER_DECADE a decade at a fixed ratio
 * (10^(1/80) = 1.0292), from 10 us to 100 s, each rounded to 4 significant
 * digits so that an edge is a whole number of ns and its `le` label short
 * (1.029e-05, 0.01059, ...); the decades themselves are exact. The
 * rounding moves an edge by at most 0.05 %, so no two consecutive edges are
 * more than a factor 1.0302 apart: a quantile interpolated inside a bucket,
 * as Prometheus' histogram_quantile does, is within 3.0 % of the truth
 * (docs/metrics.md, "How precise"). */
static uint64_t edges[ENGINE_LIVE_BUCKETS];

uint64_t engine_live_edge_ns(size_t i) { return i < ENGINE_LIVE_BUCKETS ? edges[i] : UINT64_MAX; }

/* lower_bound over the edges: the first at or above ns, ENGINE_LIVE_BUCKETS
 * when none. */
static size_t first_edge_at_or_above(uint64_t ns)
{
	size_t k = 0;
	while (k < ENGINE_LIVE_BUCKETS && edges[k] < ns)
		k++;
	return k;
}

/* The bucket in O(1) for the hot path: a value's power of two and its next
 * 6 bits pick a sub-range [start, start * 65/64) at most. Consecutive edges
 * are at least a factor 1.028 apart, more than 65/64, so such a range holds
 * at most one edge, and the answer is lut[range] or the one after it. */
#define LUT_SUB_BITS 6
static uint16_t lut[64 << LUT_SUB_BITS];

_Static_assert(ENGINE_LIVE_BUCKETS < UINT16_MAX, "a bucket index fits the table");

__attribute__((constructor)) static void live_buckets_init(void)
{
	for (size_t k = 0; k < ENGINE_LIVE_BUCKETS; k++) {
		double v = 1e4 * pow(10.0, (double)k / ENGINE_LIVE_PER_DECADE);
		double unit = pow(10.0, floor(log10(v)) - 3); /* the 4th significant digit */
		if (k % ENGINE_LIVE_PER_DECADE == 0)
			edges[k] = (uint64_t)llround(v); /* exactly 10^n */
		else
			edges[k] = (uint64_t)llround(round(v / unit) * unit);
	}
	for (unsigned p = LUT_SUB_BITS; p < 64; p++)
		for (unsigned j = 0; j < (1u << LUT_SUB_BITS); j++) {
			uint64_t start = (uint64_t)((1u << LUT_SUB_BITS) + j) << (p - LUT_SUB_BITS);
			if (p == 63 && j >= (1u << (LUT_SUB_BITS - 1)))
				start = UINT64_MAX; /* past 2^64: nothing above anyway */
			lut[(p << LUT_SUB_BITS) | j] = (uint16_t)first_edge_at_or_above(start);
		}
}

size_t engine_live_bucket(uint64_t ns)
{
	if (ns <= edges[0])
		return 0;
	if (ns > edges[ENGINE_LIVE_BUCKETS - 1])
		return ENGINE_LIVE_BUCKETS;
	unsigned p = 63u - (unsigned)__builtin_clzll(ns); /* >= 13: ns > 10000 */
	unsigned key = (p << LUT_SUB_BITS) |
		       (unsigned)((ns >> (p - LUT_SUB_BITS)) & ((1u << LUT_SUB_BITS) - 1));
	size_t k = lut[key];
	return k + (edges[k] < ns);
}
