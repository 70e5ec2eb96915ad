#include "result/ramp.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

int ramp_result_add(struct ramp_result *r, const struct ramp_step *s)
{
	if (r->n_steps == r->cap) {
		size_t cap = r->cap ? r->cap * 2 : 16;
		struct ramp_step *n = realloc(r->steps, cap * sizeof *n);
		if (!n)
			return -ENOMEM;
		r->steps = n;
		r->cap = cap;
	}
	r->steps[r->n_steps++] = *s;
	return 0;
}

bool ramp_cpu_limited(double busy, double avail)
{
	return busy > 0 && avail > 0 && busy >= RAMP_CPU_LIMIT_SHARE * avail;
}

const char *ramp_bound_name(enum ramp_bound b)
{
	switch (b) {
	case RAMP_BOUND_EXACT:
		return "exact";
	case RAMP_BOUND_LOWER:
		return "lower";
	case RAMP_BOUND_TOP:
		return "top";
	default:
		return NULL;
	}
}

/* A step that decides: measured to its end, and not measured again. */
static bool decides(const struct ramp_step *s)
{
	return !s->retried && !s->run.interrupted;
}

void ramp_bounds_of(size_t n, void (*row)(const void *ctx, size_t i, struct ramp_row *out),
		    const void *ctx, struct ramp_bounds *b)
{
	b->highest = b->below = -1;
	b->inconclusive = 0;
	b->bound = RAMP_BOUND_NONE;
	double hp = -1, lowest_fail = INFINITY;
	struct ramp_row s;
	for (size_t i = 0; i < n; i++) {
		row(ctx, i, &s);
		if (s.decides && s.pass && !s.inconclusive && s.offered_per_s > hp) {
			b->highest = (long)i;
			hp = s.offered_per_s;
		}
	}
	for (size_t i = 0; i < n; i++) {
		row(ctx, i, &s);
		if (s.decides && s.inconclusive)
			b->inconclusive++;
		if (s.decides && s.offered_per_s > hp && !s.pass && !s.inconclusive &&
		    s.offered_per_s < lowest_fail) {
			b->below = (long)i;
			lowest_fail = s.offered_per_s;
		}
	}
	/* an inconclusive step between the highest pass and the lowest failure
	 * above it leaves the capacity a lower bound */
	bool open = false;
	for (size_t i = 0; i < n; i++) {
		row(ctx, i, &s);
		if (s.decides && s.inconclusive && s.offered_per_s > hp && s.offered_per_s < lowest_fail)
			open = true;
	}
	if (open)
		b->bound = RAMP_BOUND_LOWER;
	else if (b->highest >= 0)
		b->bound = b->below >= 0 ? RAMP_BOUND_EXACT : RAMP_BOUND_TOP;
}

static void step_row(const void *ctx, size_t i, struct ramp_row *out)
{
	const struct ramp_step *s = &((const struct ramp_result *)ctx)->steps[i];
	*out = (struct ramp_row){.offered_per_s = s->offered_per_s,
				 .decides = decides(s),
				 .pass = s->verdict.pass,
				 .inconclusive = s->verdict.inconclusive};
}

void ramp_result_summarize(struct ramp_result *r, double require_per_s)
{
	struct ramp_bounds b;
	ramp_bounds_of(r->n_steps, step_row, r, &b);
	r->highest_pass = b.highest;
	r->below = b.below;
	r->bound = b.bound;
	r->inconclusive = b.inconclusive;
	r->knee = -1;
	/* The knee: where p50 first exceeds twice its low-load value (the first,
	 * lowest step), scanning the planned steps in rate order; steps pacer's
	 * own error could have decided say nothing of the target. */
	if (r->n_steps) {
		uint64_t base = hist_percentile(&r->steps[0].run.measure.timing[TIM_LATENCY], 50);
		double best = 0;
		for (size_t i = 1; i < r->n_steps; i++) {
			const struct ramp_step *s = &r->steps[i];
			if (!decides(s) || s->verdict.inconclusive)
				continue;
			uint64_t p50 = hist_percentile(&s->run.measure.timing[TIM_LATENCY], 50);
			if (base && p50 > 2 * base && (r->knee < 0 || s->offered_per_s < best)) {
				r->knee = (long)i;
				best = s->offered_per_s;
			}
		}
	}
	if (require_per_s > 0)
		r->reached_require = r->highest_pass >= 0 &&
				     r->steps[r->highest_pass].offered_per_s >= require_per_s;
	else {
		r->reached_require = r->n_steps > 0;
		/* every step passed as measured (a step measured again is passed
		 * over); whether pacer could have decided one is the bound's */
		for (size_t i = 0; i < r->n_steps; i++)
			if (!r->steps[i].retried && !r->steps[i].verdict.pass)
				r->reached_require = false;
	}
}

void ramp_result_free(struct ramp_result *r)
{
	for (size_t i = 0; i < r->n_steps; i++)
		run_result_free(&r->steps[i].run);
	free(r->steps);
	memset(r, 0, sizeof *r);
}

void ramp_latency_of(const struct hist *h, struct slo_latency *l)
{
	l->p50_ns = hist_percentile(h, 50);
	l->p90_ns = hist_percentile(h, 90);
	l->p99_ns = hist_percentile(h, 99);
	l->p99_9_ns = hist_percentile(h, 99.9);
	l->p99_99_ns = hist_percentile(h, 99.99);
	l->max_ns = h->total ? h->max : 0;
	l->mean_ns = hist_mean(h);
	l->known = true;
	l->count = h->total;
}

void ramp_step_measure(const struct run_result *run, size_t n_outcomes,
		       double pct[RESULT_MAX_OUTCOMES], struct slo_measure *m)
{
	const struct phase_stats *p = &run->measure;
	memset(m, 0, sizeof *m);
	struct slo_latency all;
	ramp_latency_of(&p->timing[TIM_LATENCY], &all);
	m->p50_ns = all.p50_ns;
	m->p90_ns = all.p90_ns;
	m->p99_ns = all.p99_ns;
	m->p99_9_ns = all.p99_9_ns;
	m->p99_99_ns = all.p99_99_ns;
	m->max_ns = all.max_ns;
	m->mean_ns = all.mean_ns;
	m->latency_known = true;
	m->latency_count = all.count;
	ramp_latency_of(&p->timing[TIM_LATENCY_OK], &m->ok);
	ramp_latency_of(&p->timing[TIM_LATENCY_FAILED], &m->failed);
	m->error_pct = phase_stats_error_pct(p);
	m->success_pct = p->sent ? 100.0 * (double)p->success_ok / (double)p->sent : 0;
	uint64_t unsent = p->dropped + p->queued_at_end;
	m->drop_pct = p->scheduled ? 100.0 * (double)unsent / (double)p->scheduled : 0;
	m->offered_known = run->open_loop && run->offered_rate_per_s > 0;
	double achieved = run->measure_ns ? (double)p->completed * 1e9 / (double)run->measure_ns : 0;
	m->achieved_fraction = m->offered_known ? achieved / run->offered_rate_per_s : 0;
	if (n_outcomes > RESULT_MAX_OUTCOMES)
		n_outcomes = RESULT_MAX_OUTCOMES;
	for (size_t k = 0; k < n_outcomes; k++)
		pct[k] = p->completed ? 100.0 * (double)p->outcome[k] / (double)p->completed : 0;
	m->outcome_pct = n_outcomes ? pct : NULL;
	m->n_outcomes = n_outcomes;
}

void ramp_step_share(const struct run_result *run, const struct gen_verdict *gv,
		     const struct gen_floor *floor, struct slo_share *sh)
{
	const struct phase_stats *p = &run->measure;
	const struct hist *lag = &p->timing[TIM_LOOP_LAG];
	memset(sh, 0, sizeof *sh);
	if (!run->open_loop || !lag->counts || !lag->total)
		return;
	sh->known = true;
	ramp_latency_of(lag, &sh->lag);
	/* the requests sent on time: every request's latency less the lagged */
	const struct hist *all = &p->timing[TIM_LATENCY], *late = &p->timing[TIM_LATENCY_LAGGED];
	struct hist on;
	if (all->counts && hist_init(&on, all->sub_bits, all->max_value) == 0) {
		if (hist_merge(&on, all) == 0 && (!late->counts || hist_subtract(&on, late) == 0))
			ramp_latency_of(&on, &sh->ontime);
		hist_free(&on);
	}
	sh->read_err_ns = !run->rx_stamped && floor && floor->known ? floor->wake_p99_ns : 0;
	sh->lagged_failed_pct = p->sent ? 100.0 * (double)p->lagged_failed / (double)p->sent : 0;
	sh->lagged_pct = p->completed ? 100.0 * (double)p->lagged_sent / (double)p->completed : 0;
	sh->gen_short = gv && gv->blame == GENCHECK_BLAME_GENERATOR;
}
