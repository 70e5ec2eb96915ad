/* pacer — merging segment results (see merge.h). */
#include "doc/merge.h"
#include "doc/keys.h"
#include "doc/merge_int.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan/slo.h"
#include "result/ramp.h"
#include "result/verdict.h"
#include "stats/hist.h"
#include "util/err.h"
#include "util/text.h"

#define MERGE_LATE_MS 100 /* a segment whose load began later than its start by more
			   * is late: counted and named in merged.late, and warned of */

/* *acc += v of segment seg, refused (PACER_ERANGE, one line naming the
 * file and the field `what`) when the total would pass MERGE_COUNT_MAX. */
static int add_total(struct mctx *m, uint64_t *acc, uint64_t v, size_t seg, const char *what)
{
	if (v > MERGE_COUNT_MAX || *acc + v > MERGE_COUNT_MAX) {
		text_errf(m->err, m->errlen, "%s: %s: adding it makes a count outside 0 to 2^53 - 1",
			  m->in[seg].name, what);
		return PACER_ERANGE;
	}
	*acc += v;
	return 0;
}

/* ---- the generators ---------------------------------------------------------- */

/* dst's "steal_pct" (and `paired`, when not NULL) taken from the one of
 * src[0..n) with the most steal: each segment's machine has its hypervisor
 * of its own, and the two figures of one machine belong together. Null
 * when no segment knew it; left out when none wrote it (results from
 * before pacer measured it). */
static int merge_worst_steal(json_t *dst, const json_t *const *src, size_t n, const char *paired)
{
	const json_t *worst = NULL;
	bool any = false;
	for (size_t s = 0; s < n; s++) {
		const json_t *v = jget(src[s], KEY_STEAL_PCT);
		any = any || v;
		if (json_is_number(v) &&
		    (!worst ||
		     json_number_value(v) > json_number_value(jget(worst, KEY_STEAL_PCT))))
			worst = src[s];
	}
	if (!any)
		return 0;
	const char *keys[2] = {KEY_STEAL_PCT, paired};
	int rc = 0;
	for (int k = 0; k < 2 && keys[k] && !rc; k++) {
		const json_t *v = jget(worst, keys[k]);
		rc = set_new(dst, keys[k], json_is_number(v) ? real_dp(json_number_value(v), 2)
							      : json_null());
	}
	return rc;
}

/* generator.pacing: the least precise segment's (the highest send lag p99
 * as a share of its latency p50); each segment's own under segments[]. */
static int merge_pacing(struct mctx *m, json_t *g)
{
	const json_t *worst = NULL;
	double worst_pct = -1;
	for (size_t s = 0; s < m->n; s++) {
		const json_t *p = jget(jget(m->in[s].root, KEY_GENERATOR), KEY_PACING);
		if (!json_is_object(p))
			continue;
		double pct = num_at(p, KEY_SEND_LAG_P99_PCT_OF_P50, 0);
		if (!worst || pct > worst_pct) {
			worst = p;
			worst_pct = pct;
		}
	}
	if (!worst)
		return 0;
	return set_new(g, KEY_PACING, json_deep_copy(worst));
}

static int merge_generator(struct mctx *m, json_t *out, uint64_t responses)
{
	json_t *g = json_object_get(out, KEY_GENERATOR);
	if (!json_is_object(g))
		return 0;
	uint64_t threads = 0;
	double cpu = 0, busiest = 0;
	json_t *tc = json_array();
	if (!tc)
		return -ENOMEM;
	int rc = 0;
	for (size_t s = 0; s < m->n && !rc; s++) {
		const json_t *gs = jget(m->in[s].root, KEY_GENERATOR);
		rc = add_total(m, &threads, u64_at(gs, KEY_THREADS), s, "generator.threads");
		cpu += num_at(gs, KEY_CPU_S, 0);
		busiest = fmax(busiest, num_at(gs, KEY_BUSIEST_THREAD_CPU_PCT, 0));
		const json_t *a = jget(gs, KEY_THREAD_CPU_S);
		for (size_t i = 0; i < json_array_size(a); i++)
			json_array_append(tc, json_array_get(a, i));
	}
	if (rc) {
		json_decref(tc);
		return rc;
	}
	rc = set_new(g, KEY_THREADS, json_integer((json_int_t)threads));
	if (!rc)
		rc = set_new(g, KEY_CPU_S, real_dp(cpu, 6));
	if (!rc && json_object_get(g, KEY_CPU_US_PER_RESPONSE))
		rc = set_new(g, KEY_CPU_US_PER_RESPONSE,
			     real_dp(responses ? cpu * 1e6 / (double)responses : 0, 3));
	if (!rc)
		rc = set_new(g, KEY_BUSIEST_THREAD_CPU_PCT, real_dp(busiest, 2));
	if (!rc)
		rc = set_new(g, KEY_THREAD_CPU_S, tc);
	else
		json_decref(tc);
	const json_t **gs = rc ? NULL : calloc(m->n, sizeof *gs);
	if (!rc && !gs)
		rc = -ENOMEM;
	for (size_t s = 0; gs && s < m->n; s++)
		gs[s] = jget(m->in[s].root, KEY_GENERATOR);
	if (!rc)
		rc = merge_worst_steal(g, gs, m->n, KEY_MACHINE_STEAL_PCT);
	free(gs);
	if (!rc)
		rc = merge_pacing(m, g);
	return rc;
}

/* The generator's session in the merged result (generator.realtime and
 * .floor, written by every kind): the worst segment's floor (the highest
 * wake-up p99) stands for all, and real time is granted only when every
 * segment had it; a segment that recorded neither leaves them as they are. */
static int merge_gen_session(struct mctx *m, json_t *out)
{
	json_t *g = json_object_get(out, KEY_GENERATOR);
	if (!json_is_object(g) || !json_object_get(g, KEY_FLOOR))
		return 0;
	const json_t *worst = NULL, *refused = NULL;
	bool all_granted = true;
	for (size_t s = 0; s < m->n; s++) {
		const json_t *gs = jget(m->in[s].root, KEY_GENERATOR);
		const json_t *f = jget(gs, KEY_FLOOR);
		if (json_is_object(f) &&
		    (!worst || num_at(f, KEY_WAKE_P99_US, 0) > num_at(worst, KEY_WAKE_P99_US, 0)))
			worst = f;
		const json_t *rt = jget(gs, KEY_REALTIME);
		all_granted = all_granted && json_is_true(jget(rt, KEY_GRANTED));
		if (!refused && json_is_string(jget(rt, KEY_REFUSED)))
			refused = rt;
	}
	int rc = set_new(g, KEY_FLOOR, worst ? json_deep_copy(worst) : json_null());
	json_t *rt = json_object_get(g, KEY_REALTIME);
	if (!rc && json_is_object(rt)) {
		rc = set_new(rt, KEY_GRANTED, json_boolean(all_granted));
		if (!rc && refused)
			rc = set_new(rt, KEY_REFUSED, json_deep_copy(jget(refused, KEY_REFUSED)));
	}
	return rc;
}

/* generator_limited of the merged result: flagged when any segment's was;
 * the checks are those of the first flagged segment (else the first's),
 * naming it. Every segment's own stays in segments[]. */
static int merge_limited(struct mctx *m, json_t *dst, const json_t *const *gl)
{
	size_t pick = 0;
	bool any = false;
	for (size_t s = 0; s < m->n; s++)
		if (json_is_true(jget(gl[s], KEY_FLAGGED)) && !any) {
			any = true;
			pick = s;
		}
	if (!gl[pick])
		return 0;
	json_t *c = json_deep_copy(gl[pick]);
	int rc = c ? set_new(c, KEY_FLAGGED, json_boolean(any)) : -ENOMEM;
	if (!rc)
		rc = set_new(c, KEY_SEGMENT, json_integer((json_int_t)pick));
	if (!rc)
		rc = set_new(dst, KEY_GENERATOR_LIMITED, c);
	else
		json_decref(c);
	return rc;
}

/* warnings: one copy of those every segment gave, the others prefixed
 * with their segment. */
static int merge_warnings(struct mctx *m, json_t *out, long skew_ms)
{
	json_t *w = json_array();
	if (!w)
		return -ENOMEM;
	for (size_t s = 0; s < m->n; s++) {
		const json_t *ws = jget(m->in[s].root, KEY_WARNINGS);
		for (size_t i = 0; i < json_array_size(ws); i++) {
			const json_t *x = json_array_get(ws, i);
			if (!json_is_string(x))
				continue;
			bool everywhere = true;
			for (size_t o = 0; o < m->n && everywhere; o++) {
				const json_t *wo = jget(m->in[o].root, KEY_WARNINGS);
				bool has = false;
				for (size_t j = 0; j < json_array_size(wo) && !has; j++)
					has = json_equal(json_array_get(wo, j), (json_t *)x);
				everywhere = has;
			}
			if (everywhere && s > 0)
				continue;
			json_t *msg = everywhere
					      ? json_deep_copy(x)
					      : json_sprintf("segment %zu (%s): %s", s, m->in[s].name,
							     json_string_value(x));
			if (!msg || json_array_append_new(w, msg)) {
				json_decref(w);
				return -ENOMEM;
			}
		}
		double late = num_at(jget(m->in[s].root, KEY_CLOCK), KEY_LATE_MS, 0);
		if (late > MERGE_LATE_MS) {
			json_t *msg = json_sprintf("segment %zu (%s) started %.0f ms after --start-at: "
						   "its load began late and its seconds are shifted",
						   s, m->in[s].name, late);
			if (!msg || json_array_append_new(w, msg)) {
				json_decref(w);
				return -ENOMEM;
			}
		}
	}
	if (skew_ms > 1000) {
		json_t *msg = json_sprintf("the segments' measured phases began up to %ld ms apart: "
					   "their load did not overlap in full, so the merged rate "
					   "per second is lower at the edges",
					   skew_ms);
		if (!msg || json_array_append_new(w, msg)) {
			json_decref(w);
			return -ENOMEM;
		}
	}
	return set_new(out, KEY_WARNINGS, w);
}

/* segments[]: each generator's identity and self-checks; merge{}: what
 * was merged and the skew between starts. */
static int segments_list(struct mctx *m, json_t *out, long skew_ms)
{
	json_t *a = json_array();
	if (!a)
		return -ENOMEM;
	static const char *const keep[] = {KEY_STARTED_AT,
					   "clock",
					   "pacer",
					   "connected",
					   "environment",
					   "generator",
					   KEY_GENERATOR_LIMITED,
					   "warnings",
					   KEY_TARGET_RESOURCES,
					   "target",
					   "cost",
					   "repetitions",
					   KEY_REPEAT_SUMMARY};
	/* a ramp step's figures that are not pooled, each segment's own */
	static const char *const step_keep[] = {KEY_TARGET_CPU_MS_PER_REQUEST,
						KEY_TARGET_RESOURCES,
						"cost",
						"repetitions",
						KEY_REPEAT_SUMMARY,
						KEY_GENERATOR_LIMITED};
	int rc = 0;
	for (size_t s = 0; s < m->n && !rc; s++) {
		const json_t *r = m->in[s].root;
		json_t *o = json_pack("{s:I, s:s}", "index", (json_int_t)s, "file", m->in[s].name);
		rc = o ? 0 : -ENOMEM;
		for (size_t k = 0; k < sizeof keep / sizeof keep[0] && !rc; k++)
			if (jget(r, keep[k]))
				rc = set_new(o, keep[k], json_deep_copy(jget(r, keep[k])));
		const json_t *meas = jget(r, KEY_MEASURE);
		if (!rc && meas)
			rc = set_new(o, KEY_REQUESTS, json_deep_copy(jget(meas, KEY_REQUESTS)));
		const json_t *steps = jget(r, KEY_STEPS);
		json_t *sa = !rc && json_is_array(steps) ? json_array() : NULL;
		if (!rc && json_is_array(steps) && !sa)
			rc = -ENOMEM;
		for (size_t i = 0; sa && !rc && i < json_array_size(steps); i++) {
			const json_t *st = json_array_get(steps, i);
			json_t *so = json_pack("{s:I}", "step", (json_int_t)(i + 1));
			rc = so ? 0 : -ENOMEM;
			for (size_t k = 0; k < sizeof step_keep / sizeof step_keep[0] && !rc; k++)
				if (jget(st, step_keep[k]))
					rc = set_new(so, step_keep[k], json_deep_copy(jget(st, step_keep[k])));
			if (!rc && json_array_append_new(sa, so))
				rc = -ENOMEM;
			else if (rc)
				json_decref(so);
		}
		if (sa && !rc)
			rc = set_new(o, KEY_STEPS, sa);
		else
			json_decref(sa);
		if (!rc && json_array_append_new(a, o))
			rc = -ENOMEM;
		else if (rc)
			json_decref(o);
	}
	if (!rc)
		rc = set_new(out, KEY_SEGMENTS, a);
	else
		json_decref(a);
	json_t *mg = rc ? NULL : json_pack("{s:I}", "segments", (json_int_t)m->n);
	if (!rc)
		rc = mg ? set_new(mg, "start_skew_ms", skew_ms >= 0 ? json_integer(skew_ms) : json_null())
			: -ENOMEM;
	/* the segments that missed the start, counted and named */
	json_t *late = rc ? NULL : json_array();
	if (!rc && !late)
		rc = -ENOMEM;
	for (size_t s = 0; s < m->n && !rc; s++) {
		double ms = num_at(jget(m->in[s].root, KEY_CLOCK), KEY_LATE_MS, 0);
		if (ms <= MERGE_LATE_MS)
			continue;
		json_t *x = json_pack("{s:I, s:s}", "index", (json_int_t)s, "file", m->in[s].name);
		rc = x ? set_new(x, KEY_LATE_MS, real_dp(ms, 3)) : -ENOMEM;
		if (!rc && json_array_append_new(late, x))
			rc = -ENOMEM;
		else if (rc)
			json_decref(x);
	}
	if (!rc)
		rc = set_new(mg, KEY_LATE, late);
	else
		json_decref(late);
	if (!rc)
		rc = set_new(out, KEY_MERGED, mg);
	else
		json_decref(mg);
	return rc;
}

/* ---- run and ramp ---------------------------------------------------------- */

/* A phase at key of every root (or of every roots' step i when step >= 0)
 * merged into dst[key]. */
static int merge_phase_at(struct mctx *m, json_t *dst, const json_t *const *src, const char *key,
			  const char *what)
{
	json_t *d = json_object_get(dst, key);
	if (!json_is_object(d))
		return 0;
	const json_t **ph = calloc(m->n, sizeof *ph);
	if (!ph)
		return -ENOMEM;
	int rc = 0;
	for (size_t s = 0; s < m->n && !rc; s++) {
		ph[s] = jget(src[s], key);
		if (!json_is_object(ph[s])) {
			text_errf(m->err, m->errlen, "%s: %s: no %s", m->in[s].name, what, key);
			rc = PACER_EPARSE;
		}
	}
	if (!rc)
		rc = merge_phase(m, d, ph, what);
	free(ph);
	return rc;
}

static int merge_series_at(struct mctx *m, json_t *dst, const json_t *const *src, const long *shift,
			   const char *what)
{
	if (!json_object_get(dst, KEY_SERIES))
		return 0;
	const json_t **ser = calloc(m->n, sizeof *ser);
	if (!ser)
		return -ENOMEM;
	for (size_t s = 0; s < m->n; s++)
		ser[s] = jget(src[s], KEY_SERIES);
	json_t *merged;
	int rc = merge_series(m, ser, shift, what, &merged);
	free((void *)ser);
	if (!rc)
		rc = set_new(dst, KEY_SERIES, merged);
	return rc;
}

static int merge_limited_at(struct mctx *m, json_t *dst, const json_t *const *src)
{
	const json_t **gl = calloc(m->n, sizeof *gl);
	if (!gl)
		return -ENOMEM;
	for (size_t s = 0; s < m->n; s++)
		gl[s] = jget(src[s], KEY_GENERATOR_LIMITED);
	int rc = merge_limited(m, dst, gl);
	free((void *)gl);
	return rc;
}

/* Figures that cannot be pooled from what a result keeps (each segment's
 * target, cost and repetitions) stay with the segment. */
static void drop_per_segment(json_t *o)
{
	json_object_del(o, KEY_TARGET_RESOURCES);
	json_object_del(o, KEY_COST);
	json_object_del(o, KEY_REPETITIONS);
	json_object_del(o, KEY_REPEAT_SUMMARY);
	json_object_del(o, KEY_CLOCK);
}

/* "connected": every address the segments' requests went to (each once);
 * none when some segment did not record it, so that a reader judges the
 * whole by the URL, as it would an older result. */
static int merge_connected(const struct mctx *m, json_t *out)
{
	json_t *all = json_array();
	if (!all)
		return -ENOMEM;
	for (size_t s = 0; s < m->n; s++) {
		const json_t *c = jget(m->in[s].root, KEY_CONNECTED);
		if (!json_is_array(c)) {
			json_decref(all);
			json_object_del(out, KEY_CONNECTED);
			return 0;
		}
		size_t i, k;
		const json_t *e, *have;
		json_array_foreach(c, i, e) {
			bool seen = false;
			json_array_foreach(all, k, have)
				seen = seen || json_equal(have, e);
			if (!seen && json_array_append_new(all, json_deep_copy(e))) {
				json_decref(all);
				return -ENOMEM;
			}
		}
	}
	return set_new(out, KEY_CONNECTED, all);
}

/* Self-contained: each segment drove its own embedded target (threads and
 * CPU summed, CPU per response of `responses` made again). */
static int merge_target(struct mctx *m, json_t *out, const json_t *const *roots,
			uint64_t responses)
{
	json_t *tg = json_object_get(out, KEY_TARGET);
	if (!json_is_object(tg))
		return 0;
	uint64_t threads = 0;
	double cpu = 0;
	int rc = 0;
	for (size_t s = 0; s < m->n && !rc; s++) {
		rc = add_total(m, &threads, u64_at(jget(roots[s], KEY_TARGET), KEY_THREADS), s,
			       "target.threads");
		cpu += num_at(jget(roots[s], KEY_TARGET), KEY_CPU_S, 0);
	}
	if (!rc)
		rc = set_new(tg, KEY_THREADS, json_integer((json_int_t)threads));
	if (!rc && json_object_get(tg, KEY_CPU_S))
		rc = set_new(tg, KEY_CPU_S, real_dp(cpu, 6));
	if (!rc && json_object_get(tg, KEY_CPU_MS_PER_REQUEST))
		rc = set_new(tg, KEY_CPU_MS_PER_REQUEST,
			     real_dp(responses ? cpu * 1e3 / (double)responses : 0, 6));
	return rc;
}

static int merge_run(struct mctx *m, json_t *out, const json_t *const *roots, const long *shift)
{
	int rc = merge_phase_at(m, out, roots, "measure", "measure");
	if (!rc)
		rc = merge_phase_at(m, out, roots, "warmup", "warmup");
	if (!rc)
		rc = merge_series_at(m, out, roots, shift, "series");
	if (!rc)
		rc = merge_limited_at(m, out, roots);
	/* every response, warm-up included, as a run counts them per CPU */
	uint64_t responses = u64_at(jget(jget(out, KEY_MEASURE), KEY_REQUESTS), KEY_COMPLETED) +
			     u64_at(jget(jget(out, KEY_WARMUP), KEY_REQUESTS), KEY_COMPLETED);
	if (!rc)
		rc = merge_generator(m, out, responses);
	if (!rc)
		rc = merge_target(m, out, roots, responses);
	return rc;
}

/* The SLO inputs of a merged step's measure phase (as ramp_step_measure
 * takes them from a run). */
static void step_measure(const json_t *ph, double offered, bool open_loop, size_t n_outcomes,
			 double *pct, struct slo_measure *mm)
{
	memset(mm, 0, sizeof *mm);
	const json_t *lat = jget(ph, KEY_LATENCY);
	mm->p50_ns = (uint64_t)llround(num_at(lat, KEY_P50_US, 0) * 1e3);
	mm->p90_ns = (uint64_t)llround(num_at(lat, KEY_P90_US, 0) * 1e3);
	mm->p99_ns = (uint64_t)llround(num_at(lat, KEY_P99_US, 0) * 1e3);
	mm->p99_9_ns = (uint64_t)llround(num_at(lat, KEY_P99_9_US, 0) * 1e3);
	mm->p99_99_ns = (uint64_t)llround(num_at(lat, KEY_P99_99_US, 0) * 1e3);
	mm->max_ns = (uint64_t)llround(num_at(lat, KEY_MAX_US, 0) * 1e3);
	mm->mean_ns = num_at(lat, KEY_MEAN_US, 0) * 1e3;
	mm->latency_known = true;
	mm->latency_count = u64_at(lat, KEY_COUNT);
	const struct {
		const char *key;
		struct slo_latency *l;
	} sets[] = {{KEY_LATENCY_OK, &mm->ok}, {KEY_LATENCY_FAILED, &mm->failed}};
	for (size_t i = 0; i < 2; i++) {
		const json_t *t = jget(ph, sets[i].key);
		struct slo_latency *l = sets[i].l;
		l->p50_ns = (uint64_t)llround(num_at(t, KEY_P50_US, 0) * 1e3);
		l->p90_ns = (uint64_t)llround(num_at(t, KEY_P90_US, 0) * 1e3);
		l->p99_ns = (uint64_t)llround(num_at(t, KEY_P99_US, 0) * 1e3);
		l->p99_9_ns = (uint64_t)llround(num_at(t, KEY_P99_9_US, 0) * 1e3);
		l->p99_99_ns = (uint64_t)llround(num_at(t, KEY_P99_99_US, 0) * 1e3);
		l->max_ns = (uint64_t)llround(num_at(t, KEY_MAX_US, 0) * 1e3);
		l->mean_ns = num_at(t, KEY_MEAN_US, 0) * 1e3;
		l->known = t != NULL;
		l->count = u64_at(t, KEY_COUNT);
	}
	const json_t *req = jget(ph, KEY_REQUESTS);
	uint64_t sent = u64_at(req, KEY_SENT), sched = u64_at(req, KEY_SCHEDULED);
	uint64_t completed = u64_at(req, KEY_COMPLETED);
	mm->error_pct = pct_of(u64_at(jget(ph, KEY_ERRORS), KEY_TOTAL), sent);
	mm->success_pct = pct_of(u64_at(jget(ph, KEY_SUCCESS), KEY_OK), sent);
	mm->drop_pct = pct_of(u64_at(req, KEY_DROPPED) + u64_at(req, KEY_QUEUED_AT_END), sched);
	mm->offered_known = open_loop && offered > 0;
	double dur = num_at(ph, KEY_DURATION_S, 0);
	double achieved = dur > 0 ? (double)completed / dur : 0;
	mm->achieved_fraction = mm->offered_known ? achieved / offered : 0;
	const json_t *oc = jget(ph, KEY_OUTCOMES);
	for (size_t k = 0; k < n_outcomes; k++)
		pct[k] = pct_of(u64_at(json_array_get(oc, k), KEY_COUNT), completed);
	mm->outcome_pct = n_outcomes ? pct : NULL;
	mm->n_outcomes = n_outcomes;
}

/* A latency object's figures (p50_us ... mean_us, count) in ns. */
static void latency_of_obj(const json_t *t, struct slo_latency *l)
{
	l->p50_ns = (uint64_t)llround(num_at(t, KEY_P50_US, 0) * 1e3);
	l->p90_ns = (uint64_t)llround(num_at(t, KEY_P90_US, 0) * 1e3);
	l->p99_ns = (uint64_t)llround(num_at(t, KEY_P99_US, 0) * 1e3);
	l->p99_9_ns = (uint64_t)llround(num_at(t, KEY_P99_9_US, 0) * 1e3);
	l->p99_99_ns = (uint64_t)llround(num_at(t, KEY_P99_99_US, 0) * 1e3);
	l->max_ns = (uint64_t)llround(num_at(t, KEY_MAX_US, 0) * 1e3);
	l->mean_ns = num_at(t, KEY_MEAN_US, 0) * 1e3;
	l->known = t != NULL;
	l->count = u64_at(t, KEY_COUNT);
}

/* Whether a segment's step fell short of its rate by the generator's
 * fault (its achieved_rate check's blame). */
static bool short_by_generator(const json_t *step)
{
	size_t i;
	const json_t *k;
	json_array_foreach(jget(jget(step, KEY_GENERATOR_LIMITED), KEY_CHECKS), i, k) {
		const json_t *b = jget(k, KEY_BLAME);
		if (json_is_string(b) && !strcmp(json_string_value(b), "generator"))
			return true;
	}
	return false;
}

/* pacer's share of a merged step's figures (as ramp_step_share takes it
 * from a run): the merged loop lag and lagged requests, the requests sent
 * on time (the merged latency less the lagged), and a shortfall by any
 * segment's generator. Results written before these were recorded give no
 * lagged requests. 0, or an error of the histograms. */
static int step_share(struct mctx *m, const json_t *ph, const json_t *const *st, bool open_loop,
		      const char *what, struct slo_share *sh)
{
	memset(sh, 0, sizeof *sh);
	const json_t *lag = jget(ph, KEY_LOOP_LAG);
	if (!open_loop || !u64_at(lag, KEY_COUNT))
		return 0;
	sh->known = true;
	latency_of_obj(lag, &sh->lag);
	struct hist all, late;
	int rc = merge_timing_hist(m, jget(ph, KEY_LATENCY), what, &all);
	if (rc)
		return rc;
	const json_t *lt = jget(ph, "latency_lagged");
	if (lt && u64_at(lt, KEY_COUNT)) {
		rc = merge_timing_hist(m, lt, what, &late);
		if (!rc) {
			if (hist_subtract(&all, &late)) {
				text_errf(m->err, m->errlen, "%s: latency_lagged is not part of latency",
					  what);
				rc = PACER_EPARSE;
			}
			hist_free(&late);
		}
	}
	if (!rc)
		ramp_latency_of(&all, &sh->ontime);
	hist_free(&all);
	const json_t *req = jget(ph, KEY_REQUESTS);
	sh->lagged_failed_pct = pct_of(u64_at(req, KEY_LAGGED_FAILED), u64_at(req, KEY_SENT));
	sh->lagged_pct = pct_of(u64_at(req, KEY_LAGGED), u64_at(req, KEY_COMPLETED));
	for (size_t s = 0; s < m->n; s++)
		sh->gen_short = sh->gen_short || short_by_generator(st[s]);
	return rc;
}

/* A verdict as the JSON result writes it (doc/plan.c
 * rj_verdict_fields). NULL on no memory. */
static json_t *verdict_json(const struct slo_verdict *v, const struct slo *slo)
{
	json_t *mat = json_array();
	for (size_t i = 0; mat && i < slo->n && i < 32; i++)
		if (v->material & (1u << i) && json_array_append_new(mat, json_string(slo->c[i].text))) {
			json_decref(mat);
			return NULL;
		}
	if (!mat)
		return NULL;
	return json_pack("{s:b, s:b, s:s, s:o, s:o}", "pass", v->pass, "inconclusive",
			 v->inconclusive, "reason", v->reason, "why",
			 v->inconclusive ? json_string(v->why) : json_null(), "material", mat);
}

struct merged_rows {
	const json_t *steps;
};

static void merged_row(const void *ctx, size_t i, struct ramp_row *out)
{
	const json_t *s = json_array_get(((const struct merged_rows *)ctx)->steps, i);
	*out = (struct ramp_row){
		.offered_per_s = num_at(s, KEY_OFFERED_PER_S, 0),
		.decides = !json_is_true(jget(s, KEY_INTERRUPTED)),
		.pass = json_is_true(jget(jget(s, KEY_VERDICT), KEY_PASS)),
		.inconclusive = json_is_true(jget(jget(s, KEY_VERDICT), KEY_INCONCLUSIVE))};
}

/* highest_passing.cpu_limited of the merged ramp at step i: true when
 * any segment's target kept RAMP_CPU_LIMIT_SHARE of its cores busy there,
 * false when every segment measured it below, null when some did not. */
static json_t *cpu_limited_at(const struct mctx *m, const json_t *const *roots, size_t i)
{
	bool any = false, all_known = true;
	for (size_t s = 0; s < m->n; s++) {
		const json_t *tr =
			jget(json_array_get(jget(roots[s], KEY_STEPS), i), KEY_TARGET_RESOURCES);
		double busy = num_at(tr, KEY_CORES_BUSY, NAN);
		double avail = num_at(jget(roots[s], KEY_TARGET_CORES), KEY_CORES, NAN);
		if (!isfinite(busy) || !isfinite(avail)) {
			all_known = false;
			continue;
		}
		any = any || ramp_cpu_limited(busy, avail);
	}
	return any ? json_true() : all_known ? json_false() : json_null();
}

static int merge_ramp(struct mctx *m, json_t *out, const json_t *const *roots)
{
	const json_t *plan = jget(out, KEY_PLAN);
	json_t *steps = json_object_get(out, KEY_STEPS);
	size_t n_steps = json_array_size(steps);
	for (size_t s = 1; s < m->n; s++)
		if (json_array_size(jget(roots[s], KEY_STEPS)) != n_steps) {
			text_errf(m->err, m->errlen,
				  "%s ran %zu steps, %s %zu: a segmented ramp runs every "
				  "planned step (was one interrupted?)",
				  m->in[0].name, n_steps, m->in[s].name,
				  json_array_size(jget(roots[s], KEY_STEPS)));
			return PACER_EUNSUPPORTED;
		}
	/* the SLO, with the outcome names it may use */
	const json_t *oc = jget(jget(plan, KEY_RULES), KEY_OUTCOMES);
	size_t n_out = json_array_size(oc);
	if (n_out > 16)
		n_out = 16;
	const char *names[16];
	for (size_t k = 0; k < n_out; k++)
		names[k] = json_string_value(jget(json_array_get(oc, k), KEY_NAME));
	struct slo slo = {0};
	const char *expr = json_string_value(jget(plan, KEY_SLO));
	char serr[256];
	if (expr && slo_parse(&slo, expr, names, n_out, serr, sizeof serr) != 0) {
		text_errf(m->err, m->errlen, "%s: plan.slo '%s': %s", m->in[0].name, expr, serr);
		return PACER_EPARSE;
	}
	const char *loop = json_string_value(jget(plan, KEY_LOOP));
	bool open_loop = !loop || !strcmp(loop, "open");
	const json_t **st = calloc(m->n, sizeof *st);
	long *zero = calloc(m->n, sizeof *zero);
	if (!st || !zero) {
		free((void *)st);
		free(zero);
		return -ENOMEM;
	}
	int rc = 0;
	long knee = -1;
	double base_p50 = 0, knee_rate = 0;
	bool all_pass = n_steps > 0;
	for (size_t i = 0; i < n_steps && !rc; i++) {
		json_t *d = json_array_get(steps, i);
		double offered = num_at(d, KEY_OFFERED_PER_S, 0);
		for (size_t s = 0; s < m->n && !rc; s++) {
			st[s] = json_array_get(jget(roots[s], KEY_STEPS), i);
			if (num_at(st[s], KEY_OFFERED_PER_S, -1) != offered) {
				text_errf(m->err, m->errlen, "%s and %s: step %zu offered different rates: "
							   "not segments of one ramp",
					m->in[0].name, m->in[s].name, i + 1);
				rc = PACER_EUNSUPPORTED;
			}
		}
		char what[48], swhat[48];
		snprintf(what, sizeof what, "steps[%zu].measure", i);
		snprintf(swhat, sizeof swhat, "steps[%zu].series", i);
		if (!rc)
			rc = merge_phase_at(m, d, st, "measure", what);
		/* a step's series: seconds since its own measured phase began */
		if (!rc)
			rc = merge_series_at(m, d, st, zero, swhat);
		if (!rc)
			rc = merge_limited_at(m, d, st);
		if (rc)
			break;
		/* the warm-up summary: counters summed; its percentiles are not
		 * kept with histograms, so the segments' highest stand in */
		json_t *w = json_object_get(d, KEY_WARMUP);
		uint64_t wc = 0;
		double gcpu = 0;
		bool interrupted = false;
		for (size_t s = 0; s < m->n && !rc; s++) {
			char wk[48];
			snprintf(wk, sizeof wk, "steps[%zu].warmup_completed", i);
			rc = add_total(m, &wc, u64_at(st[s], KEY_WARMUP_COMPLETED), s, wk);
			gcpu += num_at(st[s], KEY_GENERATOR_CPU_S, 0);
			interrupted = interrupted || json_is_true(jget(st[s], KEY_INTERRUPTED));
			if (!rc && s && json_is_object(w)) {
				json_t *tmp = json_deep_copy(jget(st[s], KEY_WARMUP));
				char ww[48];
				snprintf(ww, sizeof ww, "steps[%zu].warmup", i);
				rc = tmp ? merge_sum_ints(m, w, tmp, s, ww) : -ENOMEM;
				json_decref(tmp);
				const char *ks[] = {KEY_P50_US, KEY_P99_US, KEY_MAX_US};
				for (size_t k = 0; k < 3 && !rc; k++)
					if (num_at(jget(st[s], KEY_WARMUP), ks[k], 0) >
					    num_at(w, ks[k], 0))
						rc = set_new(
							w, ks[k],
							json_deep_copy(jget(jget(st[s], KEY_WARMUP),
									    ks[k])));
			}
		}
		if (!rc && json_is_object(w)) {
			double wd = 0;
			for (size_t s = 0; s < m->n; s++)
				wd = fmax(wd, num_at(jget(st[s], KEY_WARMUP), KEY_DURATION_S, 0));
			if (json_object_get(w, KEY_DURATION_S))
				rc = set_new(w, KEY_DURATION_S, real_dp(wd, 6));
		}
		if (!rc && json_is_array(json_object_get(d, KEY_OUTCOMES)))
			rc = merge_rows(m, d, st, "outcomes", what);
		if (!rc && json_is_object(w)) {
			double wd = num_at(w, KEY_DURATION_S, 0);
			rc = set_new(w, KEY_ACHIEVED_PER_S,
				     real_dp(wd > 0 ? (double)u64_at(jget(w, KEY_REQUESTS),
								     KEY_COMPLETED) /
							      wd
						    : 0,
					     3));
		}
		const json_t *ph = jget(d, KEY_MEASURE);
		const json_t *req = jget(ph, KEY_REQUESTS);
		uint64_t sent = u64_at(req, KEY_SENT), sched = u64_at(req, KEY_SCHEDULED);
		double dur = num_at(ph, KEY_DURATION_S, 0);
		double achieved = dur > 0 ? (double)u64_at(req, KEY_COMPLETED) / dur : 0;
		double pct[16];
		struct slo_measure mm;
		step_measure(ph, offered, open_loop, n_out, pct, &mm);
		struct slo_share sh;
		if (!rc)
			rc = step_share(m, ph, st, open_loop, what, &sh);
		struct slo_verdict v;
		slo_eval_share(&slo, &mm, &sh, &v);
		if (!rc)
			rc = set_new(d, KEY_ACHIEVED_PER_S, real_dp(achieved, 3));
		if (!rc)
			rc = set_new(d, KEY_INTERRUPTED, json_boolean(interrupted));
		if (!rc)
			rc = set_new(d, KEY_ERROR_PCT, real_dp(mm.error_pct, 4));
		if (!rc)
			rc = set_new(d, KEY_SUCCESS_PCT, real_dp(mm.success_pct, 4));
		if (!rc)
			rc = set_new(d, KEY_DROP_PCT,
				     real_dp(pct_of(u64_at(req, KEY_DROPPED) +
							    u64_at(req, KEY_QUEUED_AT_END),
						    sched),
					     4));
		(void)sent;
		if (!rc)
			rc = set_new(d, KEY_VERDICT, verdict_json(&v, &slo));
		if (!rc && json_object_get(d, KEY_ATTEMPT))
			rc = set_new(d, KEY_ATTEMPT,
				     json_integer(1)); /* segments are not retried */
		if (!rc)
			rc = set_new(d, KEY_GENERATOR_CPU_S, real_dp(gcpu, 6));
		if (!rc)
			rc = merge_worst_steal(d, st, m->n, NULL);
		if (!rc && json_object_get(d, KEY_WARMUP_COMPLETED))
			rc = set_new(d, KEY_WARMUP_COMPLETED, json_integer((json_int_t)wc));
		drop_per_segment(d);
		json_object_del(d, KEY_TARGET_CPU_MS_PER_REQUEST);
		/* the knee as ramp_result_summarize decides it */
		if (!v.pass)
			all_pass = false;
		double p50 = num_at(jget(ph, KEY_LATENCY), KEY_P50_US, 0);
		if (i == 0)
			base_p50 = p50;
		else if (!v.inconclusive && base_p50 > 0 && p50 > 2 * base_p50 &&
			 (knee < 0 || offered < knee_rate)) {
			knee = (long)i;
			knee_rate = offered;
		}
	}
	free((void *)st);
	free(zero);
	if (rc)
		return rc;
	/* highest passing and its bound as ramp_result_summarize decides them */
	struct merged_rows mr = {steps};
	struct ramp_bounds b;
	ramp_bounds_of(n_steps, merged_row, &mr, &b);
	long highest = b.highest;
	double highest_rate =
		highest >= 0 ? num_at(json_array_get(steps, (size_t)highest), KEY_OFFERED_PER_S, 0)
			     : 0;
	if (highest >= 0) {
		const json_t *hs = json_array_get(steps, (size_t)highest);
		json_t *hp = json_deep_copy(jget(out, KEY_HIGHEST_PASSING));
		if (!json_is_object(hp)) {
			json_decref(hp);
			hp = json_pack("{s:n, s:n, s:n}", KEY_PER_CORE_PER_S, "cores",
				       KEY_CORES_BASIS);
		}
		/* per core: the cores of one segment's target stand for the target */
		double cores = num_at(hp, KEY_CORES, 0);
		rc = hp ? set_new(hp, KEY_STEP, json_integer(highest + 1)) : -ENOMEM;
		if (!rc)
			rc = set_new(hp, KEY_OFFERED_PER_S, real_dp(highest_rate, 3));
		if (!rc)
			rc = set_new(hp, KEY_ACHIEVED_PER_S,
				     json_deep_copy(jget(hs, KEY_ACHIEVED_PER_S)));
		if (!rc && cores > 0)
			rc = set_new(hp, KEY_PER_CORE_PER_S, real_dp(highest_rate / cores, 3));
		/* each segment saw the target at that step on its own: CPU-limited
		 * when any saw it at its limit (self-contained, each its own
		 * embedded target), not known when none measured it */
		if (!rc && json_object_get(hp, KEY_CPU_LIMITED))
			rc = set_new(hp, KEY_CPU_LIMITED,
				     cpu_limited_at(m, roots, (size_t)highest));
		if (!rc)
			rc = set_new(hp, KEY_BOUND, json_string(ramp_bound_name(b.bound)));
		if (!rc)
			rc = set_new(hp, KEY_BELOW_PER_S,
				     b.below >= 0 ? real_dp(num_at(json_array_get(steps,
										  (size_t)b.below),
								   KEY_OFFERED_PER_S, 0),
							    3)
						  : json_null());
		if (!rc)
			rc = set_new(out, KEY_HIGHEST_PASSING, hp);
		else
			json_decref(hp);
	} else {
		rc = set_new(out, KEY_HIGHEST_PASSING, json_null());
	}
	if (!rc)
		rc = set_new(out, KEY_KNEE_PER_S, knee >= 0 ? real_dp(knee_rate, 3) : json_null());
	if (!rc)
		rc = set_new(out, KEY_INCONCLUSIVE_STEPS, json_integer((json_int_t)b.inconclusive));
	double require = num_at(plan, KEY_REQUIRE_PER_S, 0);
	bool reached = require > 0 ? highest >= 0 && highest_rate >= require : all_pass;
	if (!rc)
		rc = set_new(out, KEY_REACHED_REQUIRE, json_boolean(reached));
	uint64_t responses = 0;
	for (size_t i = 0; i < n_steps; i++)
		responses += u64_at(jget(jget(json_array_get(steps, i), KEY_MEASURE), KEY_REQUESTS),
				    KEY_COMPLETED) +
			     u64_at(json_array_get(steps, i), KEY_WARMUP_COMPLETED);
	if (!rc)
		rc = merge_target(m, out, roots, responses);
	return rc;
}

/* pacer run --slo: the merged measured phase judged with the SLO, as the
 * run judges its own (slo.pass, slo.reason). */
static int judge_run_slo(struct mctx *m, json_t *out, const json_t *const *roots)
{
	json_t *so = json_object_get(out, KEY_SLO);
	const char *expr = json_string_value(json_object_get(so, KEY_EXPR));
	if (!json_is_object(so) || !expr)
		return 0;
	const json_t *plan = jget(out, KEY_PLAN);
	const json_t *oc = jget(jget(plan, KEY_RULES), KEY_OUTCOMES);
	size_t n_out = json_array_size(oc);
	if (n_out > 16)
		n_out = 16;
	const char *names[16];
	for (size_t k = 0; k < n_out; k++)
		names[k] = json_string_value(jget(json_array_get(oc, k), KEY_NAME));
	struct slo slo = {0};
	char serr[256];
	if (slo_parse(&slo, expr, names, n_out, serr, sizeof serr) != 0) {
		text_errf(m->err, m->errlen, "%s: slo.expr '%s': %s", m->in[0].name, expr, serr);
		return PACER_EPARSE;
	}
	const char *loop = json_string_value(jget(plan, KEY_LOOP));
	bool open_loop = !loop || !strcmp(loop, "open");
	const json_t *ph = jget(out, KEY_MEASURE);
	double pct[16];
	struct slo_measure mm;
	step_measure(ph, num_at(jget(ph, KEY_RATE), KEY_OFFERED_PER_S, 0), open_loop, n_out, pct,
		     &mm);
	/* judged as each segment judged its own: pacer's share taken out */
	struct slo_share sh;
	int rc = step_share(m, ph, roots, open_loop, m->in[0].name, &sh);
	if (rc)
		return rc;
	struct slo_verdict v;
	slo_eval_share(&slo, &mm, &sh, &v);
	json_t *vj = verdict_json(&v, &slo);
	if (!vj || json_object_update(so, vj)) {
		json_decref(vj);
		return -ENOMEM;
	}
	json_decref(vj);
	return 0;
}

int result_merge(const struct merge_input *in, size_t n, json_t **out, char *err, size_t errlen)
{
	*out = NULL;
	if (err && errlen)
		err[0] = '\0';
	if (!in || n < 1 || n > MERGE_MAX_INPUTS) {
		text_errf(err, errlen, "merge takes 1 to %d segment results, got %zu", MERGE_MAX_INPUTS, n);
		return -EINVAL;
	}
	const struct merge_input **sorted = calloc(n, sizeof *sorted);
	struct merge_input *ord = calloc(n, sizeof *ord);
	const json_t **roots = calloc(n, sizeof *roots);
	long *shift = calloc(n, sizeof *shift);
	if (!sorted || !ord || !roots || !shift) {
		free((void *)sorted);
		free(ord);
		free((void *)roots);
		free(shift);
		return -ENOMEM;
	}
	int rc = merge_check_inputs(in, n, sorted, err, errlen);
	if (!rc) /* a field without a rule is refused, not dropped */
		rc = merge_check_fields(in, n, err, errlen);
	json_t *o = NULL;
	if (!rc) {
		for (size_t i = 0; i < n; i++) {
			ord[i] = *sorted[i];
			roots[i] = ord[i].root;
		}
		struct mctx m = {.in = ord, .n = n, .err = err, .errlen = errlen};
		long skew_ms;
		rc = merge_series_shifts(&m, shift, &skew_ms);
		if (!rc) {
			o = json_deep_copy(ord[0].root);
			rc = o ? 0 : -ENOMEM;
		}
		bool ramp = !rc && !strcmp(json_string_value(json_object_get(o, KEY_KIND)), "ramp");
		if (!rc)
			rc = ramp ? merge_ramp(&m, o, roots) : merge_run(&m, o, roots, shift);
		if (!rc)
			rc = merge_gen_session(&m, o);
		if (!rc && !ramp)
			rc = judge_run_slo(&m, o, roots);
		/* interrupted when any segment was */
		bool intr = false;
		for (size_t i = 0; i < n; i++)
			intr = intr || json_is_true(json_object_get(roots[i], KEY_INTERRUPTED));
		if (!rc)
			rc = set_new(o, KEY_INTERRUPTED, json_boolean(intr));
		/* the earliest start */
		const char *first = NULL;
		for (size_t i = 0; i < n; i++) {
			const char *s =
				json_string_value(json_object_get(roots[i], KEY_STARTED_AT));
			if (s && (!first || strcmp(s, first) < 0))
				first = s;
		}
		if (!rc && first)
			rc = set_new(o, KEY_STARTED_AT, json_string(first));
		json_t *seg = json_object_get(json_object_get(o, KEY_PLAN), KEY_SEGMENT);
		if (!rc && seg)
			rc = set_new(seg, KEY_INDEX, json_null());
		if (!rc) {
			drop_per_segment(o);
			rc = merge_connected(&m, o);
		}
		if (!rc)
			rc = merge_warnings(&m, o, skew_ms);
		if (!rc)
			rc = segments_list(&m, o, skew_ms);
		if (rc == -ENOMEM)
			text_errf(err, errlen, "merge: out of memory");
		else if (rc == PACER_EPARSE && err && errlen && !err[0])
			/* merge_sum_ints met a histogram where counters are added */
			text_errf(err, errlen, "a histogram among the counters of a segment (not a "
				  "result pacer writes): merging it would add its layout");
	}
	free((void *)sorted);
	free(ord);
	free((void *)roots);
	free(shift);
	if (rc) {
		json_decref(o);
		return rc;
	}
	*out = o;
	return 0;
}
