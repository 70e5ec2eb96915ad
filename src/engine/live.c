/* pacer — engine: the live figures for a metrics endpoint (engine.h,
 * engine_live). Each worker writes its own struct eng_live with relaxed
 * atomics (engine_int.h: live_add and friends); this file sums them for a
 * reader on another thread, and holds the fixed latency buckets. */
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>

#include "engine/engine_int.h"

_Static_assert(ENGINE_LIVE_OUTCOMES == RESULT_MAX_OUTCOMES,
	       "a live counter for every --outcome rule");

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

static uint64_t ld(_Atomic uint64_t *a) { return atomic_load_explicit(a, memory_order_relaxed); }

void engine_live(struct engine *e, struct engine_live *out)
{
	memset(out, 0, sizeof *out);
	out->threads = e->n_threads;
	out->n_outcomes = e->cfg.inspect ? (uint32_t)e->cfg.inspect->n_outcomes : 0;
	if (out->n_outcomes > ENGINE_LIVE_OUTCOMES)
		out->n_outcomes = ENGINE_LIVE_OUTCOMES;
	for (uint32_t i = 0; i < e->started; i++) {
		struct worker *w = &e->w[i];
		struct eng_live *l = &w->live;
		out->scheduled += ld(&l->scheduled);
		out->sent += ld(&l->sent);
		out->completed += atomic_load_explicit(&w->pub_completed, memory_order_relaxed);
		out->dropped += ld(&l->dropped);
		out->failed += ld(&l->failed);
		for (int k = 0; k < ERRK_COUNT; k++)
			out->errors[k] += ld(&l->errors[k]);
		for (int k = 0; k < CONNF_COUNT; k++)
			out->connect_fail[k] += ld(&l->connect_fail[k]);
		for (int k = 0; k < 6; k++)
			out->status_class[k] += ld(&l->status_class[k]);
		for (uint32_t k = 0; k < out->n_outcomes; k++)
			out->outcome[k] += ld(&l->outcome[k]);
		for (size_t k = 0; k <= ENGINE_LIVE_BUCKETS; k++) {
			out->latency_bucket[k] += ld(&l->latency_bucket[k]);
			out->lag_bucket[k] += ld(&l->lag_bucket[k]);
		}
		out->latency_sum_ns += ld(&l->latency_sum_ns);
		out->lag_sum_ns += ld(&l->lag_sum_ns);
		out->backlog += ld(&l->backlog);
		out->conns_open += ld(&l->conns_open);
		out->conns_connecting += ld(&l->conns_connecting);
		clockid_t cid;
		struct timespec ts;
		if (!pthread_getcpuclockid(w->thread, &cid) && !clock_gettime(cid, &ts))
			out->cpu_ns += (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	}
	out->done = engine_done(e);
}
