/* pacer — the runner (see runner.h): measurements, pooled repetitions, ramps
 * with refinement, and variants in rotating order, over engine sessions. */
#include "runner/runner.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "plan/inspect.h"
#include "util/clock.h"
#include "util/sysinfo.h"

struct exec {
	const struct runner_plan *p;
	const struct runner_hooks *h;
	struct runner_result *out;
	struct engine *e[RUNNER_MAX_VARIANTS];
	bool interrupted;
	bool started;               /* a load has started (runner_plan.start_ns is used once) */
};

void runner_gencheck(const struct runner_plan *p, size_t variant, const struct run_result *r,
		     struct gen_verdict *v)
{
	gencheck_eval(r, p->lag_limit_ns, p->variants[variant].target_cores,
		      p->ramp && p->ramp->slo_expr ? &p->ramp->slo : NULL, v);
}

static uint64_t target_cpu(const struct exec *x, size_t variant)
{
	return x->h->target_cpu_ns ? x->h->target_cpu_ns(x->h->arg, variant) : 0;
}

/* A reason a repetition was limited by the generator, once in the list. */
static void limited_because(struct variant_result *v, const char *why)
{
	if (strstr(v->limited_by, why))
		return;
	size_t n = strlen(v->limited_by);
	snprintf(v->limited_by + n, sizeof v->limited_by - n, "%s%s", n ? ", " : "", why);
}

/* Remember what the generator check said of a run repetition's
 * measurement: its figures are pacer's when a check fired. */
static void note_limited(struct exec *x, size_t variant, const struct run_result *r)
{
	struct gen_verdict gv;
	runner_gencheck(x->p, variant, r, &gv);
	if (!gv.flagged)
		return;
	struct variant_result *v = &x->out->v[variant];
	v->limited_reps++;
	for (int k = 0; k < GENCHECK_N; k++)
		if (gv.c[k].fired)
			limited_because(v, gv.c[k].name);
}

/* A ramp repetition's capacity is pacer's to state only when no step that
 * decides it stayed inconclusive. */
static void note_ramp_limited(struct exec *x, size_t variant, const struct ramp_result *r)
{
	if (r->bound != RAMP_BOUND_LOWER)
		return;
	struct variant_result *v = &x->out->v[variant];
	v->limited_reps++;
	limited_because(v, "inconclusive_step");
}

/* The pause before a retry; true when interrupted meanwhile. */
static bool pause_for(struct exec *x, uint64_t ns)
{
	if (x->h->pause)
		return x->h->pause(x->h->arg, ns);
	struct timespec ts = {(time_t)(ns / 1000000000ull), (long)(ns % 1000000000ull)};
	nanosleep(&ts, NULL);
	return false;
}

/* The steal time of a repetition's decisive measurements (a run's; a
 * ramp's highest passing and first failing steps): the most of them. */
static void note_steal(struct variant_result *v, const struct run_result *const *r, size_t n)
{
	bool material = false;
	for (size_t i = 0; i < n; i++) {
		double pct = r[i] ? run_result_steal_pct(r[i], false) : NAN;
		if (isnan(pct))
			continue;
		if (!v->steal_known || pct > v->steal_max_pct)
			v->steal_max_pct = pct;
		v->steal_known = true;
		material = material || run_result_steal_material(r[i]);
	}
	if (material)
		v->steal_reps++;
}

/* One measurement (warm-up, measure, drain) of `step`, measured `repeat`
 * times on the same connections and pooled into *res (initialised here),
 * whose reps get one figure per measurement. */
static int measure(struct exec *x, struct runner_at *at, const struct engine_step *step,
		   uint32_t repeat, struct run_result *res)
{
	struct engine *e = x->e[at->variant];
	memset(res, 0, sizeof *res);
	if (repeat < 1)
		repeat = 1;
	struct rep_figure *reps = calloc(repeat, sizeof *reps);
	if (!reps)
		return -ENOMEM;
	size_t n_reps = 0;
	int rc = 0;
	for (uint32_t k = 0; k < repeat && !x->interrupted; k++) {
		at->measurement = k;
		struct engine_step st = *step;
		st.start_ns = x->started ? 0 : x->p->start_ns; /* --start-at: the first load only */
		x->started = true;
		/* the hypervisor's steal around the load: the host's pauses land
		 * in latency as the generator's own lateness */
		struct steal_sample steal0, steal1;
		sysinfo_steal_sample(&steal0);
		rc = engine_step_start(e, &st);
		if (rc)
			break;
		if (x->h->wait(x->h->arg, e, at))
			x->interrupted = true;
		struct run_result cur;
		rc = engine_step_finish(e, &cur);
		if (rc) {
			run_result_free(&cur);
			break;
		}
		sysinfo_steal_sample(&steal1);
		cur.gen_steal_known = sysinfo_steal_between(&steal0, &steal1, engine_step_t0_ns(e),
							    &cur.gen_steal);
		if (x->h->measured)
			x->h->measured(x->h->arg, at, &cur);
		rep_figure_of(&cur, &reps[n_reps++]);
		if (x->h->run_measurement && !at->in_ramp)
			x->h->run_measurement(x->h->arg, at, &reps[n_reps - 1]);
		if (k == 0) {
			*res = cur;
		} else {
			rc = run_result_pool(res, &cur);
			run_result_free(&cur);
			if (rc)
				break;
		}
	}
	res->reps = reps;
	res->n_reps = n_reps;
	res->interrupted = res->interrupted || x->interrupted;
	if (!rc && n_reps == 0)
		rc = -EINTR; /* interrupted before the first measurement started */
	return rc;
}

static struct engine_step step_of(const struct run_plan *run, double rate, uint64_t warmup_ns,
				  uint64_t duration_ns)
{
	struct engine_step s = {
		.rate_per_s = rate,
		.warmup_ns = warmup_ns,
		.duration_ns = duration_ns,
		.drain_ns = run->drain_ns,
		/* a closed loop's requests: all of the plan's (a segment's engine
		 * takes its share, and numbers them after the segments before it) */
		.requests = run->open_loop ? 0 : run->requests,
		.duration_limits = run->duration_given,
	};
	return s;
}

/* One ramp step at `rate` (its attempt-th measurement), judged with
 * pacer's share of its figures and appended to r. */
static int ramp_step(struct exec *x, struct runner_at *at, const struct ramp_plan *rp,
		     double rate, bool refine, uint32_t attempt, struct ramp_result *r)
{
	const struct run_plan *run = x->p->variants[at->variant].run;
	struct engine_step step = step_of(run, rate, rp->step_warmup_ns, rp->step_ns);
	step.requests = 0;
	step.duration_limits = false;
	at->offered_per_s = rate;
	at->step = (uint32_t)r->n_steps + 1;
	at->planned_steps = (uint32_t)rp->n_rates;
	uint64_t tcpu0 = target_cpu(x, at->variant);
	struct ramp_step s = {.offered_per_s = rate, .refine = refine, .attempt = attempt};
	int rc = measure(x, at, &step, run->repeat, &s.run);
	if (rc) {
		run_result_free(&s.run);
		return rc == -EINTR ? 0 : rc;
	}
	s.target_cpu_ns = target_cpu(x, at->variant) - tcpu0;
	x->out->v[at->variant].target_cpu_ns += s.target_cpu_ns;
	/* A ramp reports the measured phase of each step; the warm-up's
	 * histograms are not kept (its counts and figures are). */
	rep_figure_of_phase(&s.run.warmup, s.run.warmup_ns, &s.warmup_fig);
	phase_stats_free(&s.run.warmup);
	struct slo_measure m;
	double pct[RESULT_MAX_OUTCOMES];
	ramp_step_measure(&s.run, run->inspect ? run->inspect->n_outcomes : 0, pct, &m);
	struct gen_verdict gv;
	struct slo_share sh;
	runner_gencheck(x->p, at->variant, &s.run, &gv);
	ramp_step_share(&s.run, &gv, x->out->floor.known ? &x->out->floor : NULL, &sh);
	slo_eval_share(&rp->slo, &m, &sh, &s.verdict);
	rc = ramp_result_add(r, &s);
	if (rc) {
		run_result_free(&s.run);
		return rc;
	}
	if (x->h->ramp_step)
		x->h->ramp_step(x->h->arg, at, r);
	return 0;
}

/* A step at `rate`, measured again while pacer's own error could have
 * decided it (up to runner_plan.retries more times, after a pause). Its
 * last attempt (NULL: none was appended, interrupted). */
static const struct ramp_step *ramp_attempts(struct exec *x, struct runner_at *at,
					     const struct ramp_plan *rp, double rate, bool refine,
					     struct ramp_result *r, int *rc)
{
	bool segment = x->p->variants[at->variant].run->segments >= 2;
	for (uint32_t attempt = 1;; attempt++) {
		size_t before = r->n_steps;
		*rc = ramp_step(x, at, rp, rate, refine, attempt, r);
		if (*rc || r->n_steps == before)
			return NULL;
		struct ramp_step *s = &r->steps[r->n_steps - 1];
		if (!s->verdict.inconclusive || segment || attempt > x->p->retries ||
		    x->interrupted || s->run.interrupted)
			return s;
		if (pause_for(x, x->p->retry_pause_ns)) {
			x->interrupted = true;
			return s;
		}
		s->retried = true;
	}
}

/* A whole ramp: the planned steps until the first failure (and
 * --after-fail more), then --refine's bisection. A step that stays
 * inconclusive ends it: pacer cannot say what lies above. */
static int ramp(struct exec *x, struct runner_at *at, const struct ramp_plan *rp,
		struct ramp_result *r)
{
	memset(r, 0, sizeof *r);
	r->started_wall_ns = clock_wall_ns();
	long first_fail = -1;
	bool segment = x->p->variants[at->variant].run->segments >= 2;
	bool stuck = false; /* a step stayed inconclusive */
	int rc;
	for (size_t i = 0; i < rp->n_rates && !x->interrupted; i++) {
		const struct ramp_step *last = ramp_attempts(x, at, rp, rp->rates[i], false, r, &rc);
		if (rc)
			return rc;
		if (!last)
			break;
		if (last->verdict.inconclusive && !segment) {
			stuck = true;
			break;
		}
		if (!last->verdict.pass && first_fail < 0)
			first_fail = (long)i;
		/* a segment runs every planned step: its own verdicts judge only its
		 * share, the merged result's decide (docs/distributed.md) */
		if (first_fail >= 0 && i >= (size_t)first_fail + rp->after_fail &&
		    x->p->variants[at->variant].run->segments < 2)
			break;
	}
	/* --refine: bisect between the last passing rate before the first
	 * failure and that failure. */
	if (rp->refine && first_fail > 0 && !x->interrupted && !stuck) {
		double fail = rp->rates[first_fail];
		double pass = rp->rates[first_fail - 1];
		while (!ramp_refined(pass, fail, rp->precision) && !x->interrupted) {
			double mid = ramp_bisect(pass, fail);
			const struct ramp_step *last = ramp_attempts(x, at, rp, mid, true, r, &rc);
			if (rc)
				return rc;
			if (!last || (last->verdict.inconclusive && !segment))
				break;
			if (last->verdict.pass)
				pass = mid;
			else
				fail = mid;
		}
	}
	r->interrupted = x->interrupted;
	ramp_result_summarize(r, rp->require_per_s);
	return 0;
}

/* One independent repetition of one variant. */
static int repetition(struct exec *x, size_t vi, size_t rep)
{
	const struct runner_plan *p = x->p;
	const struct runner_variant *var = &p->variants[vi];
	struct variant_result *v = &x->out->v[vi];
	struct runner_at at = {.variant = vi, .repetition = rep, .in_ramp = p->ramp != NULL,
			       .offered_per_s = var->run->open_loop ? var->run->rate_per_s : 0};
	struct rep_figure f = {0};
	int rc;
	if (p->ramp) {
		struct ramp_result r;
		rc = ramp(x, &at, p->ramp, &r);
		if (rc) {
			ramp_result_free(&r);
			return rc;
		}
		if (r.highest_pass >= 0) {
			const struct ramp_step *st = &r.steps[r.highest_pass];
			rep_figure_of(&st->run, &f);
			f.achieved_per_s = st->offered_per_s;
		}
		/* the capacity is decided by the highest passing step and the
		 * first that did not pass above it */
		note_ramp_limited(x, vi, &r);
		const struct run_result *decisive[2] = {
			r.highest_pass >= 0 ? &r.steps[r.highest_pass].run : NULL, NULL};
		double hp = r.highest_pass >= 0 ? r.steps[r.highest_pass].offered_per_s : -1;
		for (size_t i = 0; i < r.n_steps; i++)
			if (!r.steps[i].retried && r.steps[i].offered_per_s > hp &&
			    (!r.steps[i].verdict.pass || r.steps[i].verdict.inconclusive)) {
				decisive[1] = &r.steps[i].run;
				break;
			}
		note_steal(v, decisive, 2);
		if (p->compact_steps)
			for (size_t i = 0; i < r.n_steps; i++)
				phase_stats_free(&r.steps[i].run.measure);
		v->interrupted = v->interrupted || r.interrupted;
		struct ramp_result *n = realloc(v->ramps, (v->n_ramps + 1) * sizeof *n);
		if (!n) {
			ramp_result_free(&r);
			return -ENOMEM;
		}
		v->ramps = n;
		v->ramps[v->n_ramps++] = r;
	} else {
		struct engine_step step =
			step_of(var->run, var->run->rate_per_s, var->run->warmup_ns, var->run->duration_ns);
		uint64_t tcpu0 = target_cpu(x, vi);
		struct run_result r;
		rc = measure(x, &at, &step, var->run->repeat, &r);
		if (rc) {
			run_result_free(&r);
			return rc == -EINTR ? 0 : rc;
		}
		v->target_cpu_ns += target_cpu(x, vi) - tcpu0;
		rep_figure_of(&r, &f);
		note_limited(x, vi, &r);
		const struct run_result *decisive = &r;
		note_steal(v, &decisive, 1);
		v->interrupted = v->interrupted || r.interrupted;
		if (v->n_reps == 0) {
			v->run = r;
		} else {
			/* the figures per measurement of every repetition */
			struct rep_figure *all =
				realloc(v->run.reps, (v->run.n_reps + r.n_reps) * sizeof *all);
			if (!all) {
				run_result_free(&r);
				return -ENOMEM;
			}
			memcpy(all + v->run.n_reps, r.reps, r.n_reps * sizeof *all);
			v->run.reps = all;
			v->run.n_reps += r.n_reps;
			rc = run_result_pool(&v->run, &r);
			run_result_free(&r);
			if (rc)
				return rc;
		}
	}
	v->reps[v->n_reps++] = f;
	if (x->h->repetition)
		x->h->repetition(x->h->arg, &at, &f);
	return 0;
}

/* How long to measure the floor (runner_plan.floor_ns): with a start time
 * (--start-at, a barrier's), only what ends before it -- the wake-ups, then
 * the loopback round trips for half as long, RUNNER_FLOOR_MARGIN_NS to
 * spare -- and none when less than RUNNER_FLOOR_MIN_NS is left: the load
 * starts on time, the floor is measured shorter. */
static uint64_t floor_before(const struct runner_plan *p)
{
	if (!p->floor_ns || !p->start_ns)
		return p->floor_ns;
	uint64_t now = clock_now_ns();
	if (p->start_ns <= now + RUNNER_FLOOR_MARGIN_NS)
		return 0;
	uint64_t room = (p->start_ns - now - RUNNER_FLOOR_MARGIN_NS) / 3 * 2;
	if (room >= p->floor_ns)
		return p->floor_ns;
	return room >= RUNNER_FLOOR_MIN_NS ? room : 0;
}

int runner_execute(const struct runner_plan *p, const struct runner_hooks *h,
		   struct runner_result *out, size_t *failed_variant)
{
	memset(out, 0, sizeof *out);
	if (!p || !h || !h->wait || p->n_variants < 1 || p->n_variants > RUNNER_MAX_VARIANTS ||
	    p->repetitions > RUNNER_MAX_REPEAT)
		return -EINVAL;
	for (size_t i = 0; i < p->n_variants; i++)
		if (!p->variants[i].run)
			return -EINVAL;
	struct exec x = {.p = p, .h = h, .out = out};
	out->n_variants = p->n_variants;
	out->started_wall_ns = clock_wall_ns();
	int rc = 0;
	out->realtime = 1;
	for (size_t i = 0; i < p->n_variants && !rc; i++) {
		rc = engine_open(&x.e[i], &p->variants[i].cfg);
		if (rc && failed_variant)
			*failed_variant = i;
		/* the first refusal, else granted, else not asked */
		int rt = rc ? 1 : engine_realtime(x.e[i]);
		if (rt < 0 ? out->realtime >= 0 : out->realtime == 1)
			out->realtime = rt;
	}
	/* what this machine lets pacer promise, before any load (and before
	 * --start-at's start) */
	uint64_t floor_ns = floor_before(p);
	if (!rc && floor_ns)
		(void)engine_floor(x.e[0], floor_ns, p->target_local, &out->floor);
	if (!rc && h->ready)
		h->ready(h->arg, out);
	size_t reps = p->repetitions ? p->repetitions : 1;
	for (size_t r = 0; r < reps && !rc && !x.interrupted; r++) {
		for (size_t k = 0; k < p->n_variants && !rc && !x.interrupted; k++) {
			size_t vi = (r + k) % p->n_variants; /* rotate: A B, B A, ... */
			rc = repetition(&x, vi, r);
			if (rc && failed_variant)
				*failed_variant = vi;
		}
		if (!rc && !x.interrupted)
			out->repetitions_done = r + 1;
	}
	for (size_t i = 0; i < p->n_variants; i++)
		engine_close(x.e[i]);
	out->interrupted = x.interrupted;
	for (size_t i = 0; i < p->n_variants; i++) {
		out->v[i].interrupted = out->v[i].interrupted || x.interrupted;
		out->v[i].run.started_wall_ns = out->started_wall_ns;
		out->v[i].run.interrupted = out->v[i].run.interrupted || x.interrupted;
	}
	return rc;
}

void runner_result_free(struct runner_result *r)
{
	for (size_t i = 0; i < r->n_variants && i < RUNNER_MAX_VARIANTS; i++)
		variant_result_free(&r->v[i]);
	memset(r, 0, sizeof *r);
}
