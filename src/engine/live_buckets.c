/* pacer — engine: the fixed latency buckets of the live figures
 * (engine.h: engine_live_edge_ns, engine_live_bucket), a leaf the hot path
 * calls: no state but a table made once. */
#include <stddef.h>
#include <stdint.h>

#include "engine/engine.h"

/* The upper edges: 20 a decade, as hundredths of the decade's base, from
 * 10 us to 100 s (a table, so that the search on the hot path is a few
 * loads of one small array). */
#define DECADE(b)                                                                                 \
	(b), (b) * 112 / 100, (b) * 125 / 100, (b) * 140 / 100, (b) * 160 / 100, (b) * 180 / 100,  \
		(b) * 2, (b) * 225 / 100, (b) * 250 / 100, (b) * 280 / 100, (b) * 320 / 100,      \
		(b) * 360 / 100, (b) * 4, (b) * 450 / 100, (b) * 5, (b) * 560 / 100,              \
		(b) * 630 / 100, (b) * 710 / 100, (b) * 8, (b) * 9
static const uint64_t edges[ENGINE_LIVE_BUCKETS] = {
	DECADE(10000ull),    DECADE(100000ull),     DECADE(1000000ull),     DECADE(10000000ull),
	DECADE(100000000ull), DECADE(1000000000ull), DECADE(10000000000ull), 100000000000ull,
};

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
 * 4 bits pick a sub-range [start, start * 17/16) at most. Consecutive edges
 * are at least a factor 1.111 apart, so such a range holds at most one
 * edge, and the answer is lut[range] or the one after it. */
#define LUT_SUB_BITS 4
static uint8_t lut[64 << LUT_SUB_BITS];

__attribute__((constructor)) static void lut_init(void)
{
	for (unsigned p = LUT_SUB_BITS; p < 64; p++)
		for (unsigned j = 0; j < (1u << LUT_SUB_BITS); j++) {
			uint64_t start = (uint64_t)((1u << LUT_SUB_BITS) + j) << (p - LUT_SUB_BITS);
			if (p == 63 && j >= (1u << (LUT_SUB_BITS - 1)))
				start = UINT64_MAX; /* past 2^64: nothing above anyway */
			lut[(p << LUT_SUB_BITS) | j] = (uint8_t)first_edge_at_or_above(start);
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

