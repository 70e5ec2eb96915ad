/* pacer — engine: the per-second series of the measured phase. Each worker
 * keeps, per second, its completions and errors and its latency histogram
 * as sparse (value, count) pairs; after the step the workers' seconds are
 * merged into the result's series. */
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine_int.h"
#include "plan/precision.h"

int eng_series_reserve(struct worker *w, uint64_t span_ns)
{
	size_t secs = (size_t)(span_ns / NS_PER_S) + 3; /* a partial second at each end, and one spare */
	if (secs > SERIES_RESERVE_SECS_MAX)
		secs = SERIES_RESERVE_SECS_MAX;
	if (secs > w->secs_cap) {
		struct sec_rec *n = realloc(w->secs, secs * sizeof *n);
		if (!n)
			return -ENOMEM;
		w->secs = n;
		w->secs_cap = secs;
	}
	size_t pairs = secs * SERIES_RESERVE_PAIRS_PER_SEC;
	if (pairs > SERIES_RESERVE_PAIRS_MAX)
		pairs = SERIES_RESERVE_PAIRS_MAX;
	if (pairs > w->pairs_cap) {
		void *p = realloc(w->pairs, pairs * sizeof *w->pairs);
		if (!p)
			return -ENOMEM;
		w->pairs = p;
		w->pairs_cap = pairs;
	}
	return 0;
}

static void series_push_sec(struct worker *w)
{
	if (w->secs_len == w->secs_cap) {
		size_t cap = w->secs_cap ? w->secs_cap * 2 : 64;
		struct sec_rec *n = realloc(w->secs, cap * sizeof *n);
		if (!n) {
			w->oom = 1;
			return;
		}
		w->secs = n;
		w->secs_cap = cap;
	}
	struct sec_rec *r = &w->secs[w->secs_len++];
	memset(r, 0, sizeof *r);
	r->pairs_off = w->pairs_len;
}

/* Close the current second: move its histogram into the sparse pair store. */
void eng_series_close_sec(struct worker *w)
{
	struct sec_rec *r = &w->secs[w->secs_len - 1];
	r->unsent = w->q_len;
	r->window_ns = w->e->batched ? w->win_ns : 0;
	eng_lat_move(w, true);
	eng_precision_adapt(w, &w->sec_hist);
	size_t cur = 0;
	uint64_t v, n;
	while (hist_next_nonzero(&w->sec_hist, &cur, &v, &n)) {
		if (w->pairs_len == w->pairs_cap) {
			size_t cap = w->pairs_cap ? w->pairs_cap * 2 : 1024;
			void *p = realloc(w->pairs, cap * sizeof *w->pairs);
			if (!p) {
				w->oom = 1;
				break;
			}
			w->pairs = p;
			w->pairs_cap = cap;
		}
		w->pairs[w->pairs_len][0] = v;
		w->pairs[w->pairs_len][1] = n;
		w->pairs_len++;
		r->pairs_n++;
	}
	atomic_store_explicit(&w->pub_p99_ns, hist_percentile(&w->sec_hist, 99.0),
			      memory_order_relaxed);
	atomic_store_explicit(&w->pub_p99_warm, false, memory_order_relaxed);
	uint64_t mx = w->sec_hist.total ? w->sec_hist.max : 0;
	atomic_store_explicit(&w->pub_max_ns, mx, memory_order_relaxed);
	if (mx > atomic_load_explicit(&w->pub_max_meas_ns, memory_order_relaxed))
		atomic_store_explicit(&w->pub_max_meas_ns, mx, memory_order_relaxed);
	atomic_store_explicit(&w->pub_last_sec_completed, r->completed, memory_order_relaxed);
	hist_reset(&w->sec_hist);
}

void eng_lat_move(struct worker *w, bool series)
{
	struct hist *to[2][2] = {
		{&w->meas.timing[TIM_LATENCY_OK], &w->meas.timing[TIM_LATENCY]},
		{&w->meas.timing[TIM_LATENCY_FAILED], &w->meas.timing[TIM_LATENCY]},
	};
	for (int k = 0; k < 2; k++) /* one layout: cannot fail */
		(void)hist_move(&w->lat_sec[k], to[k], 2, series ? &w->sec_hist : NULL);
}

void eng_precision_adapt(struct worker *w, const struct hist *h)
{
	const struct engine_cfg *cfg = &w->e->cfg;
	if (!(cfg->precision > 0) || !w->e->batched || !h->total)
		return;
	uint64_t win = precision_window_ns(hist_percentile(h, 50.0), cfg->precision, w->rate_per_s,
					   cfg->burst, cfg->arrival);
	if (win)
		w->win_ns = win;
}

void eng_warm_second(struct worker *w, uint64_t now, uint64_t latency_ns)
{
	uint64_t t0 = w->e->t0_ns;
	uint64_t sec = now > t0 ? (now - t0) / NS_PER_S : 0;
	if (sec != w->warm_sec) {
		if (w->warm_sec != UINT64_MAX && w->warm_hist.total) {
			eng_precision_adapt(w, &w->warm_hist);
			atomic_store_explicit(&w->pub_p99_ns, hist_percentile(&w->warm_hist, 99.0),
					      memory_order_relaxed);
			atomic_store_explicit(&w->pub_p99_warm, true, memory_order_relaxed);
			atomic_store_explicit(&w->pub_max_ns, w->warm_hist.max,
					      memory_order_relaxed);
		}
		hist_reset(&w->warm_hist);
		w->warm_sec = sec;
	}
	hist_record(&w->warm_hist, latency_ns);
}

struct sec_rec *eng_series_advance(struct worker *w, uint64_t sec)
{
	if (w->secs_len == 0) {
		series_push_sec(w);
		w->sec_cur = 0;
	}
	while (w->sec_cur < sec && !w->oom) {
		eng_series_close_sec(w);
		series_push_sec(w);
		w->sec_cur++;
	}
	if (w->oom)
		return NULL;
	return &w->secs[w->secs_len - 1];
}

/* Merge the per-second series of every worker. */
int eng_series_merge(struct engine *e, struct run_result *res)
{
	size_t len = 0;
	for (uint32_t i = 0; i < e->n_threads; i++)
		if (e->w[i].secs_len > len)
			len = e->w[i].secs_len;
	if (!len)
		return 0;
	res->series = calloc(len, sizeof *res->series);
	if (!res->series)
		return -ENOMEM;
	res->series_len = len;
	struct hist h;
	if (hist_init(&h, SERIES_SUB_BITS, HIST_MAX_NS))
		return -ENOMEM;
	for (size_t s = 0; s < len; s++) {
		hist_reset(&h);
		struct series_point *pt = &res->series[s];
		for (uint32_t i = 0; i < e->n_threads; i++) {
			struct worker *w = &e->w[i];
			if (s >= w->secs_len)
				continue;
			struct sec_rec *r = &w->secs[s];
			pt->completed += r->completed;
			pt->errors += r->errors;
			pt->transport_errors += r->transport;
			for (int k = 0; k < CONNF_COUNT; k++)
				pt->connect_fail[k] += r->connect_fail[k];
			pt->dropped += r->dropped;
			pt->unsent += r->unsent;
			pt->quic_lost += r->quic_lost;
			pt->quic_stalls += r->quic_stalls;
			for (int k = 0; k < 5; k++)
				pt->by_class[k] += r->by_class[k];
			for (size_t k = 0; k < r->pairs_n; k++)
				hist_record_n(&h, w->pairs[r->pairs_off + k][0],
					      w->pairs[r->pairs_off + k][1]);
		}
		pt->p50_ns = hist_percentile(&h, 50.0);
		pt->p99_ns = hist_percentile(&h, 99.0);
		size_t np = 0, cur = 0;
		uint64_t v, n;
		while (hist_next_nonzero(&h, &cur, &v, &n))
			np++;
		if (np) {
			pt->pairs = malloc(np * sizeof *pt->pairs);
			if (!pt->pairs) {
				hist_free(&h);
				return -ENOMEM;
			}
			cur = 0;
			while (hist_next_nonzero(&h, &cur, &v, &n)) {
				pt->pairs[pt->n_pairs][0] = v;
				pt->pairs[pt->n_pairs][1] = n;
				pt->n_pairs++;
			}
		}
	}
	hist_free(&h);
	return 0;
}
