#include "doc/usage.h"

#include <inttypes.h>
#include <math.h>

#include "doc/keys.h"
#include "result/cost.h"
#include "util/units.h"

void report_gencheck(const struct run_result *r, const struct report_ctx *c,
		     struct gen_verdict *v)
{
	gencheck_eval(r, c->lag_limit_ns, c->target_cores, c->slo, v);
}

double report_target_cpu_ms_per_request(const struct run_result *r)
{
	if (!r->target.known)
		return -1;
	return r->measure.completed ? r->target.cpu_s * 1e3 / (double)r->measure.completed : 0;
}

static void dbl_or_null(struct jsonw *j, bool known, double v, int digits)
{
	if (known)
		jw_dbl(j, v, digits);
	else
		jw_null(j);
}

static void rj_target_resources(struct jsonw *j, const struct run_result *r)
{
	const struct target_usage *t = &r->target;
	jw_key(j, KEY_TARGET_RESOURCES);
	if (!t->known && !t->n_notes) {
		jw_null(j);
		return;
	}
	jw_obj(j);
	jw_key(j, KEY_SOURCE);
	jw_str(j, t->source);
	jw_key(j, KEY_CPU_USER_S);
	dbl_or_null(j, t->known && t->split_known, t->cpu_user_s, 6);
	jw_key(j, KEY_CPU_SYS_S);
	dbl_or_null(j, t->known && t->split_known, t->cpu_sys_s, 6);
	jw_key(j, KEY_CPU_S);
	dbl_or_null(j, t->known, t->cpu_s, 6);
	jw_key(j, KEY_CORES_BUSY);
	dbl_or_null(j, t->known, t->cores_busy, 4);
	jw_key(j, KEY_CPU_MS_PER_REQUEST);
	dbl_or_null(j, t->known, report_target_cpu_ms_per_request(r), 6);
	/* waits for a CPU: the threads' run delay (pid, self-contained), or a
	 * cgroup's pressure, each null when the source does not give it */
	double wait_pct = target_usage_cpu_wait_pct(t);
	jw_key(j, KEY_CPU_WAIT_S);
	dbl_or_null(j, t->known && t->cpu_wait_known, t->cpu_wait_s, 6);
	jw_key(j, KEY_CPU_WAIT_PCT);
	dbl_or_null(j, isfinite(wait_pct), wait_pct, 2);
	double pressure_pct = target_usage_pressure_pct(t, (double)r->measure_ns / 1e9);
	jw_key(j, KEY_CPU_PRESSURE_SOME_S);
	dbl_or_null(j, t->known && t->cpu_pressure_known, t->cpu_pressure_some_s, 6);
	jw_key(j, KEY_CPU_PRESSURE_SOME_PCT);
	dbl_or_null(j, isfinite(pressure_pct), pressure_pct, 2);
	jw_key(j, KEY_RSS_START_BYTES);
	if (t->rss_known)
		jw_u64(j, t->rss_start_bytes);
	else
		jw_null(j);
	jw_key(j, KEY_RSS_PEAK_BYTES);
	if (t->rss_known)
		jw_u64(j, t->rss_peak_bytes);
	else
		jw_null(j);
	jw_key(j, KEY_RSS_END_BYTES);
	if (t->rss_known)
		jw_u64(j, t->rss_end_bytes);
	else
		jw_null(j);
	jw_key(j, KEY_NOTES);
	jw_arr(j);
	for (size_t i = 0; i < t->n_notes; i++)
		jw_str(j, t->notes[i]);
	jw_arr_end(j);
	jw_obj_end(j);
}

/* Decimals that keep 6 significant digits of a small positive amount (at
 * least 6, as the JSON always had): a cost of 5.5e-07 is not written 0.000001. */
static int cost_decimals(double v)
{
	if (!isfinite(v) || v <= 0 || v >= 1e-1)
		return 6;
	int d = 5 - (int)floor(log10(v));
	return d < 6 ? 6 : d > 20 ? 20 : d;
}

static void rj_cost(struct jsonw *j, const struct run_result *r, const struct report_ctx *c)
{
	jw_key(j, KEY_COST);
	double ms = report_target_cpu_ms_per_request(r);
	if (ms < 0 || !c->cost || !c->cost->n) {
		jw_null(j);
		return;
	}
	jw_obj(j);
	jw_key(j, KEY_BASIS);
	jw_str(j, COST_BASIS);
	jw_key(j, KEY_CAVEAT);
	jw_str(j, COST_CAVEAT);
	jw_key(j, KEY_CPU_MS_PER_REQUEST);
	jw_dbl(j, ms, 6);
	jw_key(j, KEY_DEFAULT_PRICES);
	jw_bool(j, c->cost->defaults != 0);
	jw_key(j, KEY_PROFILES);
	jw_arr(j);
	for (size_t i = 0; i < c->cost->n; i++) {
		int saved = j->indent;
		jw_obj(j);
		j->indent = 0;
		jw_key(j, KEY_NAME);
		jw_str(j, c->cost->p[i].name);
		jw_key(j, KEY_USD_PER_CORE_HOUR);
		jw_dbl(j, c->cost->p[i].usd_per_core_hour, 6);
		jw_key(j, KEY_USD_PER_MILLION_REQUESTS);
		double usd = cost_usd_per_million(ms, c->cost->p[i].usd_per_core_hour);
		jw_dbl(j, usd, cost_decimals(usd));
		jw_obj_end(j);
		j->indent = saved;
	}
	jw_arr_end(j);
	jw_obj_end(j);
}

static void rj_gencheck(struct jsonw *j, const struct run_result *r, const struct report_ctx *c)
{
	struct gen_verdict v;
	report_gencheck(r, c, &v);
	jw_key(j, KEY_GENERATOR_LIMITED);
	jw_obj(j);
	jw_key(j, KEY_FLAGGED);
	jw_bool(j, v.flagged);
	jw_key(j, KEY_CHECKS);
	jw_arr(j);
	for (int i = 0; i < GENCHECK_N; i++) {
		const struct gencheck *k = &v.c[i];
		int saved = j->indent;
		jw_obj(j);
		j->indent = 0;
		jw_key(j, KEY_NAME);
		jw_str(j, k->name);
		jw_key(j, KEY_EVALUATED);
		jw_bool(j, k->evaluated);
		jw_key(j, KEY_FIRED);
		jw_bool(j, k->fired);
		jw_key(j, KEY_VALUE);
		dbl_or_null(j, k->evaluated, k->value, 3);
		jw_key(j, KEY_THRESHOLD);
		jw_dbl(j, k->threshold, 3);
		jw_key(j, KEY_UNIT);
		jw_str(j, k->unit);
		jw_key(j, "impact_pct");
		dbl_or_null(j, k->evaluated && !isnan(k->impact_pct), k->impact_pct, 4);
		jw_key(j, "material_pct");
		jw_dbl(j, k->material_pct, 3);
		jw_key(j, KEY_FINDING);
		jw_str(j, k->finding);
		if (i == 0) {
			jw_key(j, "latency_us");
			dbl_or_null(j, k->evaluated, v.latency_p99_us, 3);
			jw_key(j, KEY_SLO);
			jw_arr(j);
			for (size_t s = 0; s < v.n_slo; s++) {
				const struct gencheck_slo *g = &v.slo[s];
				jw_obj(j);
				jw_key(j, "clause");
				jw_str(j, g->clause);
				jw_key(j, "loop_lag_us");
				jw_dbl(j, g->loop_lag_us, 3);
				jw_key(j, "latency_us");
				jw_dbl(j, g->latency_us, 3);
				jw_key(j, "threshold_us");
				jw_dbl(j, g->threshold_us, 3);
				jw_key(j, "impact_pct");
				jw_dbl(j, g->impact_pct, 4);
				jw_key(j, KEY_FAILED);
				jw_bool(j, g->failed);
				jw_key(j, "flips");
				jw_bool(j, g->flips);
				jw_obj_end(j);
			}
			jw_arr_end(j);
		} else if (i == 2) {
			const char *b = gencheck_blame_name(v.blame);
			jw_key(j, KEY_BLAME);
			if (b)
				jw_str(j, b);
			else
				jw_null(j);
			jw_key(j, "cap_wait_s");
			dbl_or_null(j, k->evaluated, v.cap_wait_s, 6);
			jw_key(j, "cap_wait_idle_s");
			dbl_or_null(j, k->evaluated, v.cap_wait_idle_s, 6);
			jw_key(j, KEY_CPU_WAIT_S);
			dbl_or_null(j, k->evaluated && !isnan(v.cpu_wait_s), v.cpu_wait_s, 6);
		}
		jw_key(j, KEY_ADVICE);
		jw_str(j, k->advice);
		jw_obj_end(j);
		j->indent = saved;
	}
	jw_arr_end(j);
	jw_obj_end(j);
}

void rj_usage(struct jsonw *j, const struct run_result *r, const struct report_ctx *c)
{
	rj_target_resources(j, r);
	rj_cost(j, r, c);
	rj_gencheck(j, r, c);
}

void rj_target_cores(struct jsonw *j, const struct report_ctx *c)
{
	jw_key(j, KEY_TARGET_CORES);
	if (!(c->target_cores > 0) || !c->target_cores_basis) {
		jw_null(j);
		return;
	}
	int saved = j->indent;
	jw_obj(j);
	j->indent = 0;
	jw_key(j, KEY_CORES);
	jw_dbl(j, c->target_cores, c->target_cores == (double)(uint64_t)c->target_cores ? 0 : 4);
	jw_key(j, KEY_BASIS);
	jw_str(j, c->target_cores_basis);
	jw_obj_end(j);
	j->indent = saved;
}
