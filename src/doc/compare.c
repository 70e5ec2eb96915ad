/* pacer — the terminal and JSON writers of `pacer compare` (compare.h). */
#include "doc/compare.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "doc/keys.h"
#include "doc/names.h"
#include "plan/inspect.h"
#include "doc/json_parts.h"
#include "doc/workload.h"
#include "stats/summary.h"
#include "util/jsonw.h"
#include "util/text.h"
#include "util/units.h"

#define BOOTSTRAP_RESAMPLES 2000

static const char *const lat_names[5] = {"p50", "p90", "p99", "p99.9", "max"};
static const char *const lat_keys[5] = {KEY_P50_US, KEY_P90_US, KEY_P99_US, KEY_P99_9_US,
					KEY_MAX_US};

static bool every_rep(const struct compare_report *c, bool rss)
{
	if (!c->reps)
		return false;
	for (size_t i = 0; i < c->n_variants; i++) {
		const struct variant_result *r = c->v[i].res;
		if (r->n_reps < c->reps)
			return false;
		for (size_t k = 0; k < c->reps; k++)
			if (!(rss ? r->reps[k].target_rss_known : r->reps[k].target_known))
				return false;
	}
	return true;
}

size_t compare_metrics(const struct compare_report *c, struct compare_metric *out)
{
	size_t n = 0;
	out[n] = (struct compare_metric){.kind = CMK_RATE};
	snprintf(out[n].name, sizeof out[n].name, "%s", c->ramp ? "capacity" : "throughput");
	snprintf(out[n].key, sizeof out[n].key, "%s",
		 c->ramp ? KEY_CAPACITY_PER_S : KEY_ACHIEVED_PER_S);
	n++;
	for (int k = 0; k < 5; k++, n++) {
		out[n] = (struct compare_metric){.kind = CMK_LATENCY, .index = k};
		snprintf(out[n].name, sizeof out[n].name, "%s", lat_names[k]);
		snprintf(out[n].key, sizeof out[n].key, "%s", lat_keys[k]);
	}
	out[n] = (struct compare_metric){.kind = CMK_ERRORS};
	snprintf(out[n].name, sizeof out[n].name, "errors");
	snprintf(out[n].key, sizeof out[n].key, KEY_ERROR_PCT);
	n++;
	if (every_rep(c, false)) {
		out[n] = (struct compare_metric){.kind = CMK_CPU};
		snprintf(out[n].name, sizeof out[n].name, "target_cpu");
		snprintf(out[n].key, sizeof out[n].key, KEY_TARGET_CPU_MS_PER_REQUEST);
		n++;
	}
	if (every_rep(c, true)) {
		out[n] = (struct compare_metric){.kind = CMK_RSS};
		snprintf(out[n].name, sizeof out[n].name, "target_rss");
		snprintf(out[n].key, sizeof out[n].key, KEY_TARGET_RSS_PEAK_MIB);
		n++;
	}
	const struct inspect *in = c->ctx.plan ? c->ctx.plan->inspect : NULL;
	for (size_t k = 0; in && k < in->n_outcomes && n < COMPARE_MAX_METRICS; k++, n++) {
		out[n] = (struct compare_metric){.kind = CMK_OUTCOME, .index = (int)k};
		snprintf(out[n].name, sizeof out[n].name, "%s", in->outcome_name[k]);
		snprintf(out[n].key, sizeof out[n].key, "outcome_%s_pct", in->outcome_name[k]);
	}
	return n;
}

double compare_metric_value(const struct compare_metric *m, const struct rep_figure *f)
{
	switch (m->kind) {
	case CMK_RATE: return f->achieved_per_s;
	case CMK_LATENCY: {
		const uint64_t v[5] = {f->p50_ns, f->p90_ns, f->p99_ns, f->p99_9_ns, f->max_ns};
		return (double)v[m->index] / 1e3;
	}
	case CMK_ERRORS: return f->error_pct;
	case CMK_CPU: return f->target_cpu_ms_per_req;
	case CMK_RSS: return f->target_rss_peak_mib;
	case CMK_OUTCOME: return f->outcome_pct[m->index];
	}
	return 0;
}

const char *compare_direction(const struct compare_metric *m, bool higher)
{
	switch (m->kind) {
	case CMK_RATE:
		if (!strcmp(m->name, "capacity"))
			return higher ? "higher capacity" : "lower capacity";
		return higher ? "faster" : "slower";
	case CMK_LATENCY: return higher ? "slower" : "faster";
	case CMK_ERRORS: return higher ? "more errors" : "fewer errors";
	case CMK_CPU: return higher ? "more target CPU per request" : "less target CPU per request";
	case CMK_RSS: return higher ? "more target memory" : "less target memory";
	case CMK_OUTCOME: return higher ? "a higher rate" : "a lower rate";
	}
	return "?";
}

/* The values of metric m over variant i's repetitions. */
static size_t values(const struct compare_report *c, size_t i, const struct compare_metric *m,
		     double *out)
{
	const struct variant_result *r = c->v[i].res;
	size_t n = c->reps < r->n_reps ? c->reps : r->n_reps;
	for (size_t k = 0; k < n; k++)
		out[k] = compare_metric_value(m, &r->reps[k]);
	return n;
}

static void ratio(const struct compare_report *c, size_t i, const struct compare_metric *m,
		  size_t mi, struct ratio_ci *ci)
{
	double a[VARIANT_MAX_REPEAT], b[VARIANT_MAX_REPEAT];
	size_t na = values(c, 0, m, a), nb = values(c, i, m, b);
	summary_ratio_ci(a, na, b, nb, BOOTSTRAP_RESAMPLES, 1 + (uint64_t)mi, c->noise, ci);
}

static const char *verdict(const struct compare_metric *m, const struct ratio_ci *ci)
{
	if (ci->defined && !ci->enough)
		return "not enough repetitions";
	if (!ci->defined || !ci->significant)
		return "no significant difference";
	return compare_direction(m, ci->lo > 1.0);
}

void compare_text_header(FILE *f, const struct compare_report *c)
{
	const struct run_plan *p = c->ctx.plan;
	size_t nv = c->n_variants;
	fprintf(f, "pacer compare: %zu variants, order rotating (", nv);
	for (size_t i = 0; i < nv; i++)
		fprintf(f, "%s%s", i ? " " : "", c->v[i].name);
	fprintf(f, ", then ");
	for (size_t i = 0; i < nv; i++)
		fprintf(f, "%s%s", i ? " " : "", c->v[(i + 1) % nv].name);
	fprintf(f, ", ...)\n");
	if (c->ramp) {
		char a[32];
		fprintf(f, "  each repetition a ramp of %zu steps from %s req/s: %.1fs warm-up + %.1fs "
			   "measured per step%s, SLO %s; its capacity is compared\n\n",
			c->ramp->n_rates, units_fmt_thousands(a, sizeof a, c->ramp->rates[0], 0),
			(double)c->ramp->step_warmup_ns / 1e9, (double)c->ramp->step_ns / 1e9,
			c->ramp->refine ? ", refined" : "",
			c->ramp->slo_expr ? c->ramp->slo_expr : "(none)");
	} else {
		fprintf(f, "  %s; %.1fs warm-up + %.1fs measured per repetition\n\n",
			p->open_loop ? "open loop" : "closed loop", (double)p->warmup_ns / 1e9,
			(double)p->duration_ns / 1e9);
	}
	fprintf(f, "  %-4s %-10s %12s %10s %10s %10s  %s\n", "rep", "variant",
		c->ramp ? "capacity/s" : "achieved/s", "p50", "p99", "max", "errors");
}

void compare_text_row(FILE *f, const struct compare_report *c, size_t variant, size_t rep)
{
	const struct rep_figure *r = &c->v[variant].res->reps[rep];
	char a[32], b[32], d[32], e[32];
	units_fmt_duration(b, sizeof b, (double)r->p50_ns);
	units_fmt_duration(d, sizeof d, (double)r->p99_ns);
	units_fmt_duration(e, sizeof e, (double)r->max_ns);
	fprintf(f, "  %-4zu %-10s %12s %*s %*s %*s  %llu (%.2f %%)\n", rep + 1, c->v[variant].name,
		units_fmt_thousands(a, sizeof a, r->achieved_per_s, 1), text_field(b, 10), b,
		text_field(d, 10), d, text_field(e, 10), e, (unsigned long long)r->errors,
		r->error_pct);
	fflush(f);
}

void compare_warnings(const struct compare_report *c, struct report_warnings *w)
{
	w->n = 0;
	for (size_t i = 0; i < c->n_variants && w->n < REPORT_WARN_CAP; i++)
		if (c->v[i].self_contained)
			snprintf(w->msg[w->n++], REPORT_WARN_LEN,
				 "variant %.31s is self-contained: driver and target share one process and "
				 "machine",
				 c->v[i].name);
	if (c->reps < SUMMARY_MIN_N && w->n < REPORT_WARN_CAP)
		snprintf(w->msg[w->n++], REPORT_WARN_LEN,
			 "only %zu complete repetitions: a verdict needs %d (with fewer the 95%% interval "
			 "calls identical variants different too often); no difference is called",
			 c->reps, SUMMARY_MIN_N);
	if (c->interrupted && w->n < REPORT_WARN_CAP)
		snprintf(w->msg[w->n++], REPORT_WARN_LEN, "interrupted: the comparison was stopped early");
	for (size_t i = 0; i < c->n_variants && w->n < REPORT_WARN_CAP; i++) {
		const struct variant_result *r = c->v[i].res;
		if (r->limited_reps)
			snprintf(w->msg[w->n++], REPORT_WARN_LEN,
				 "generator limited in %zu of %zu repetitions of variant %.31s (%s): its "
				 "figures may be pacer's, not the target's; add --threads or run pacer on "
				 "another machine",
				 r->limited_reps, c->reps, c->v[i].name, r->limited_by);
	}
	for (size_t i = 0; i < c->n_variants && w->n < REPORT_WARN_CAP; i++) {
		const struct variant_result *r = c->v[i].res;
		char pct[32];
		if (r->steal_reps)
			snprintf(w->msg[w->n++], REPORT_WARN_LEN,
				 "the hypervisor took up to %s of the generator's CPUs (steal time) in "
				 "%zu of %zu repetitions of variant %.31s: its pauses count in latency as "
				 "the generator's lateness, so a difference may be the host's; repeat on "
				 "a quieter machine or on dedicated cores",
				 units_fmt_pct(pct, sizeof pct, r->steal_max_pct), r->steal_reps,
				 c->reps, c->v[i].name);
	}
}

static void json_summary(struct jsonw *j, const double *v, size_t n)
{
	struct summary s;
	summary_of(v, n, &s);
	jw_obj(j);
	const char *keys[] = {"median", "min", "max"};
	const double vals[] = {s.median, s.min, s.max};
	for (size_t k = 0; k < 3; k++) {
		jw_key(j, keys[k]);
		if (n) /* no repetition: nothing measured, not 0 */
			jw_dbl(j, vals[k], 4);
		else
			jw_null(j);
	}
	jw_obj_end(j);
}

static void json_plan(struct jsonw *j, const struct compare_report *c)
{
	jw_key(j, KEY_PLAN);
	jw_obj(j);
	rj_plan_fields(j, c->ctx.plan);
	jw_key(j, KEY_REPEAT);
	jw_u64(j, c->reps);
	jw_key(j, KEY_ORDER);
	jw_str(j, "rotating");
	jw_key(j, KEY_NOISE_PCT);
	jw_dbl(j, c->noise * 100, 3);
	jw_key(j, KEY_RAMP);
	if (c->ramp) {
		const struct ramp_plan *rp = c->ramp;
		jw_obj(j);
		jw_key(j, KEY_STEPS_PER_S);
		jw_arr(j);
		for (size_t i = 0; i < rp->n_rates; i++)
			jw_dbl(j, rp->rates[i], 3);
		jw_arr_end(j);
		jw_key(j, KEY_SLO);
		jw_str(j, rp->slo_expr);
		jw_key(j, KEY_REFINE);
		jw_bool(j, rp->refine);
		jw_key(j, KEY_PRECISION);
		jw_dbl(j, rp->precision, 4);
		jw_key(j, KEY_AFTER_FAIL);
		jw_u64(j, rp->after_fail);
		jw_key(j, KEY_STEP_DURATION_S);
		jw_dbl(j, (double)rp->step_ns / 1e9, 6);
		jw_key(j, KEY_STEP_WARMUP_S);
		jw_dbl(j, (double)rp->step_warmup_ns / 1e9, 6);
		jw_obj_end(j);
	} else {
		jw_null(j);
	}
	jw_obj_end(j);
}

/* Ramp mode: the steps one repetition's ramp ran. */
static void json_steps(struct jsonw *j, const struct ramp_result *r)
{
	jw_key(j, KEY_STEPS);
	jw_arr(j);
	for (size_t s = 0; s < r->n_steps; s++) {
		const struct ramp_step *st = &r->steps[s];
		jw_obj(j);
		jw_key(j, KEY_OFFERED_PER_S);
		jw_dbl(j, st->offered_per_s, 3);
		jw_key(j, KEY_REFINE);
		jw_bool(j, st->refine);
		jw_key(j, KEY_ATTEMPT);
		jw_u64(j, st->attempt ? st->attempt : 1);
		jw_key(j, KEY_RETRIED);
		jw_bool(j, st->retried);
		jw_key(j, KEY_PASS);
		jw_bool(j, st->verdict.pass);
		jw_key(j, KEY_INCONCLUSIVE);
		jw_bool(j, st->verdict.inconclusive);
		jw_key(j, KEY_REASON);
		jw_str(j, st->verdict.reason);
		if (st->verdict.inconclusive) {
			jw_key(j, KEY_WHY);
			jw_str(j, st->verdict.why);
		}
		jw_obj_end(j);
	}
	jw_arr_end(j);
}

/* Run mode: what the report's charts of one variant need, beside its
 * figures (docs/compare.md): its measured phase pooled over every
 * repetition (latency and service time as histograms of sparse pairs,
 * responses by status class, errors) and the per-second series of its
 * first measurement. */
static void json_variant_charts(struct jsonw *j, const struct run_result *r)
{
	const struct phase_stats *p = &r->measure;
	jw_key(j, KEY_MEASURE);
	jw_obj(j);
	jw_key(j, KEY_DURATION_S);
	jw_dbl(j, (double)r->measure_ns / 1e9, 6);
	rj_responses_errors(j, p);
	jw_key(j, timing_name(TIM_LATENCY));
	rj_hist(j, &p->timing[TIM_LATENCY]);
	jw_key(j, timing_name(TIM_SERVICE));
	rj_hist(j, &p->timing[TIM_SERVICE]);
	jw_obj_end(j);
	rj_series(j, r->series, r->series_len, phase_stats_quic(p));
}

static void json_variant(struct jsonw *j, const struct compare_report *c, size_t i,
			 const struct compare_metric *ms, size_t nm)
{
	const struct compare_view *v = &c->v[i];
	const struct variant_result *r = v->res;
	jw_obj(j);
	jw_key(j, KEY_NAME);
	jw_str(j, v->name);
	jw_key(j, KEY_TARGET);
	jw_str(j, v->spec);
	jw_key(j, KEY_URL);
	jw_str(j, v->plan->url_str);
	jw_key(j, KEY_MODE);
	jw_str(j, v->self_contained ? "self_contained" : "live");
	rj_connected(j, v->conns, v->n_conns);
	rj_table(j, v->plan); /* its own: the shared plan loads none */
	rj_script(j, v->plan);
	rj_workload(j, v->plan->workload, v->plan->order_random);
	jw_key(j, "generator_limited_repetitions");
	jw_u64(j, r->limited_reps);
	jw_key(j, "steal_repetitions");
	jw_u64(j, r->steal_reps);
	jw_key(j, KEY_STEAL_MAX_PCT);
	jw_dbl(j, r->steal_known ? r->steal_max_pct : NAN, 2); /* null: not known */
	jw_key(j, KEY_REPETITIONS);
	jw_arr(j);
	/* the complete rounds, then what this variant measured of an interrupted one */
	for (size_t k = 0; k < r->n_reps; k++) {
		const struct rep_figure *f = &r->reps[k];
		int saved = j->indent;
		jw_obj(j);
		j->indent = 0;
		for (size_t m = 0; m < nm; m++) {
			jw_key(j, ms[m].key);
			jw_dbl(j, compare_metric_value(&ms[m], f), 4);
		}
		jw_key(j, KEY_COMPLETED);
		jw_u64(j, f->completed);
		jw_key(j, KEY_ERRORS);
		jw_u64(j, f->errors);
		jw_key(j, KEY_FAILED_RESPONSES);
		jw_u64(j, f->failed_responses);
		jw_key(j, KEY_TRANSPORT_ERRORS);
		jw_u64(j, f->transport_errors);
		jw_key(j, KEY_WARMUP_COMPLETED);
		jw_u64(j, f->warmup_completed);
		jw_key(j, KEY_WARMUP_ERRORS);
		jw_u64(j, f->warmup_errors);
		jw_key(j, "partial");
		jw_bool(j, k >= c->reps);
		if (c->ramp && k < r->n_ramps) {
			jw_key(j, "capacity_bound");
			jw_str(j, ramp_bound_name(r->ramps[k].bound));
			json_steps(j, &r->ramps[k]);
		}
		jw_obj_end(j);
		j->indent = saved;
	}
	jw_arr_end(j);
	jw_key(j, KEY_SUMMARY);
	jw_obj(j);
	for (size_t m = 0; m < nm; m++) {
		double vals[VARIANT_MAX_REPEAT];
		jw_key(j, ms[m].key);
		json_summary(j, vals, values(c, i, &ms[m], vals));
	}
	jw_obj_end(j);
	if (!c->ramp && r->run.measure.timing[TIM_LATENCY].counts)
		json_variant_charts(j, &r->run);
	if (r->run.measure.sessions.on) {
		/* a session script's figures over every repetition (pooled, as
		 * a run --repeat pools them): its steps by name, its sessions */
		rj_by_name(j, &r->run.measure, v->plan->names);
		rj_sessions(j, &r->run.measure);
	}
	jw_obj_end(j);
}

int compare_json(FILE *f, const struct compare_report *c)
{
	struct jsonw jj, *j = &jj;
	jw_init(j, f, 1);
	rj_head(j, &c->ctx, "compare", c->started_wall_ns, c->interrupted);
	json_plan(j, c);
	/* the order the measurements ran in: A B, B A, ... */
	jw_key(j, KEY_SEQUENCE);
	int indent = j->indent;
	jw_arr(j);
	j->indent = 0;
	for (size_t r = 0; r < c->reps; r++)
		for (size_t k = 0; k < c->n_variants; k++)
			jw_str(j, c->v[(r + k) % c->n_variants].name);
	j->indent = indent;
	jw_arr_end(j);
	rj_env(j, c->ctx.env);
	jw_key(j, KEY_GENERATOR);
	jw_obj(j);
	rj_gen_session(j, &c->ctx);
	jw_obj_end(j);
	struct compare_metric ms[COMPARE_MAX_METRICS];
	size_t nm = compare_metrics(c, ms);
	jw_key(j, KEY_VARIANTS);
	jw_arr(j);
	for (size_t i = 0; i < c->n_variants; i++)
		json_variant(j, c, i, ms, nm);
	jw_arr_end(j);
	jw_key(j, KEY_RATIOS);
	jw_arr(j);
	for (size_t i = 1; i < c->n_variants; i++) {
		for (size_t m = 0; m < nm; m++) {
			struct ratio_ci ci;
			ratio(c, i, &ms[m], m, &ci);
			jw_obj(j);
			jw_key(j, KEY_METRIC);
			jw_str(j, ms[m].name);
			jw_key(j, KEY_VARIANT);
			jw_str(j, c->v[i].name);
			jw_key(j, KEY_BASELINE);
			jw_str(j, c->v[0].name);
			jw_key(j, KEY_RATIO);
			if (ci.defined)
				jw_dbl(j, ci.ratio, 4);
			else
				jw_null(j);
			jw_key(j, KEY_CI95_LOW);
			if (ci.defined)
				jw_dbl(j, ci.lo, 4);
			else
				jw_null(j);
			jw_key(j, KEY_CI95_HIGH);
			if (ci.defined)
				jw_dbl(j, ci.hi, 4);
			else
				jw_null(j);
			jw_key(j, KEY_SIGNIFICANT);
			jw_bool(j, ci.defined && ci.significant);
			jw_key(j, KEY_VERDICT);
			jw_str(j, verdict(&ms[m], &ci));
			jw_obj_end(j);
		}
	}
	jw_arr_end(j);
	struct report_warnings w;
	compare_warnings(c, &w);
	rj_warnings(j, &w);
	jw_obj_end(j);
	return ferror(f) ? -EIO : 0;
}
