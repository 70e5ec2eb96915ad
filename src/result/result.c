#include "result/result.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

const char *err_kind_name(enum err_kind k)
{
	static const char *names[ERRK_COUNT] = {"connect", "read", "write", "timeout", "parse", "closed"};
	return (unsigned)k < ERRK_COUNT ? names[k] : "unknown";
}

const char *timing_name(enum timing t)
{
	static const char *names[TIM_COUNT] = {"latency", "service_time", "ttfb", "connect_time",
					       "send_lag", "loop_lag"};
	return (unsigned)t < TIM_COUNT ? names[t] : "unknown";
}

int phase_stats_init(struct phase_stats *p)
{
	memset(p, 0, sizeof *p);
	for (int i = 0; i < TIM_COUNT; i++) {
		int rc = hist_init(&p->timing[i], HIST_SUB_BITS, HIST_MAX_NS);
		if (rc) {
			phase_stats_free(p);
			return rc;
		}
	}
	return 0;
}

void phase_stats_free(struct phase_stats *p)
{
	for (int i = 0; i < TIM_COUNT; i++)
		hist_free(&p->timing[i]);
}

void phase_stats_reset(struct phase_stats *p)
{
	struct hist keep[TIM_COUNT];
	memcpy(keep, p->timing, sizeof keep);
	memset(p, 0, sizeof *p);
	memcpy(p->timing, keep, sizeof keep);
	for (int i = 0; i < TIM_COUNT; i++)
		hist_reset(&p->timing[i]);
}

int phase_stats_merge(struct phase_stats *dst, const struct phase_stats *src)
{
	dst->scheduled += src->scheduled;
	dst->sent += src->sent;
	dst->completed += src->completed;
	dst->queued_at_end += src->queued_at_end;
	dst->in_flight_at_end += src->in_flight_at_end;
	dst->dropped += src->dropped;
	dst->late += src->late;
	for (int i = 0; i < ERRK_COUNT; i++)
		dst->errors[i] += src->errors[i];
	dst->conns_opened += src->conns_opened;
	dst->closed_by_server += src->closed_by_server;
	dst->bytes_in += src->bytes_in;
	dst->bytes_out += src->bytes_out;
	for (int i = 0; i <= STATUS_MAX; i++)
		dst->status[i] += src->status[i];
	for (int i = 0; i < TIM_COUNT; i++) {
		int rc = hist_merge(&dst->timing[i], &src->timing[i]);
		if (rc)
			return rc;
	}
	return 0;
}

uint64_t phase_stats_errors(const struct phase_stats *p)
{
	uint64_t n = 0;
	for (int i = 0; i < ERRK_COUNT; i++)
		n += p->errors[i];
	return n;
}

uint64_t phase_stats_class(const struct phase_stats *p, int cls)
{
	uint64_t n = 0;
	for (int s = cls * 100; s < cls * 100 + 100 && s <= STATUS_MAX; s++)
		n += p->status[s];
	return n;
}

void rep_figure_of(const struct run_result *r, struct rep_figure *f)
{
	const struct hist *h = &r->measure.timing[TIM_LATENCY];
	f->achieved_per_s =
		r->measure_ns ? (double)r->measure.completed * 1e9 / (double)r->measure_ns : 0;
	f->p50_ns = hist_percentile(h, 50);
	f->p90_ns = hist_percentile(h, 90);
	f->p99_ns = hist_percentile(h, 99);
	f->p99_9_ns = hist_percentile(h, 99.9);
	f->max_ns = h->total ? h->max : 0;
	f->completed = r->measure.completed;
	f->errors = phase_stats_errors(&r->measure);
}

int run_result_pool(struct run_result *into, const struct run_result *add)
{
	int rc = phase_stats_merge(&into->warmup, &add->warmup);
	if (!rc)
		rc = phase_stats_merge(&into->measure, &add->measure);
	into->warmup_ns += add->warmup_ns;
	into->measure_ns += add->measure_ns;
	into->gen_cpu_ns += add->gen_cpu_ns;
	into->interrupted = into->interrupted || add->interrupted;
	return rc;
}

void run_result_free(struct run_result *r)
{
	free(r->reps);
	r->reps = NULL;
	r->n_reps = 0;
	phase_stats_free(&r->warmup);
	phase_stats_free(&r->measure);
	free(r->series);
	r->series = NULL;
	r->series_len = 0;
}
