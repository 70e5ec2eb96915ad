/* pacer — engine: the live figures for a metrics endpoint (engine.h,
 * engine_live). Each worker writes its own struct eng_live with relaxed
 * atomics (engine_int.h: live_add and friends); this file sums them for a
 * reader on another thread (the fixed latency buckets: live_buckets.c). */
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>

#include "engine/engine_int.h"

_Static_assert(ENGINE_LIVE_OUTCOMES == RESULT_MAX_OUTCOMES,
	       "a live counter for every --outcome rule");

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
		/* every response is in one phase's buckets: all of them are the two
		 * together (one record a response, live_done) */
		for (size_t k = 0; k <= ENGINE_LIVE_BUCKETS; k++) {
			for (int ph = 0; ph < 2; ph++) {
				uint64_t n = ld(&l->phase_bucket[ph][k]);
				out->phase_bucket[ph][k] += n;
				out->latency_bucket[k] += n;
			}
			out->lag_bucket[k] += ld(&l->lag_bucket[k]);
		}
		for (int ph = 0; ph < 2; ph++) {
			uint64_t sum = ld(&l->phase_sum_ns[ph]);
			out->phase_sum_ns[ph] += sum;
			out->latency_sum_ns += sum;
		}
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
