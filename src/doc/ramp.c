/* pacer — the terminal table and the JSON result of `pacer ramp`. */
#include <errno.h>
#include <string.h>

#include "doc/keys.h"
#include "plan/inspect.h"
#include "doc/json_parts.h"
#include "doc/ramp.h"
#include "doc/rules.h"
#include "doc/usage.h"
#include "doc/workload.h"
#include "util/units.h"

static double achieved(const struct run_result *r) { return report_achieved_rate(r); }

bool ramp_per_core_cores(const struct ramp_report *rr, const struct ramp_step *s, double *cores,
			 const char **basis)
{
	const char *b = rr->ctx.target_cores_basis;
	if (b && strcmp(b, "machine") != 0 && rr->ctx.target_cores > 0) {
		*cores = rr->ctx.target_cores;
		*basis = b;
		return true;
	}
	if (s->run.target.known && s->run.target.cores_busy > 0) {
		*cores = s->run.target.cores_busy;
		*basis = "measured_busy";
		return true;
	}
	return false;
}

long ramp_deciding_step(const struct ramp_result *r)
{
	if (r->highest_pass < 0)
		return -1;
	/* the failure above it, when it failed on the target; an inconclusive
	 * step says nothing of the target's CPU */
	return r->bound == RAMP_BOUND_EXACT && r->below >= 0 ? r->below : r->highest_pass;
}

void ramp_text_header(FILE *f, const struct ramp_report *rr)
{
	const struct ramp_plan *rp = rr->plan;
	char name[512];
	fprintf(f, "pacer ramp %s%s\n", report_run_name(name, sizeof name, &rp->run),
		rr->ctx.target ? "  (self-contained)" : "");
	report_text_workload(f, &rp->run);
	fprintf(f, "  %zu steps of %.1fs (+%.1fs warm-up each), %u thread%s, up to %u connections",
		rp->n_rates, (double)rp->step_ns / 1e9, (double)rp->step_warmup_ns / 1e9,
		rp->run.threads, rp->run.threads == 1 ? "" : "s", rp->run.connections);
	if (rp->slo_expr)
		fprintf(f, ", SLO %s", rp->slo_expr);
	fprintf(f, "\n  latency from each request's scheduled time (open loop)\n\n");
}

void ramp_text_row(FILE *f, const struct ramp_step *s, size_t index, const struct inspect *in)
{
	struct slo_measure m;
	double pct[RESULT_MAX_OUTCOMES];
	ramp_step_measure(&s->run, 0, pct, &m);
	char a[32], b[32], o[32], ach[32], drops[48] = "";
	units_fmt_duration(a, sizeof a, (double)m.p50_ns);
	units_fmt_duration(b, sizeof b, (double)m.p99_ns);
	if (m.drop_pct > 0)
		snprintf(drops, sizeof drops, ", drops %.2f%%", m.drop_pct);
	fprintf(f, "  step %s%zu: %s req/s offered, %s achieved, p50 %s, p99 %s, errors %.2f%%%s: "
		   "%s%s%s\n",
		s->refine ? "r" : "", index + 1, units_fmt_thousands(o, sizeof o, s->offered_per_s, 0),
		units_fmt_thousands(ach, sizeof ach, achieved(&s->run), 1), a, b, m.error_pct, drops,
		s->verdict.inconclusive ? "Inconclusive" : s->verdict.reason,
		s->attempt > 1 ? " (measured again)" : "", s->run.interrupted ? " (interrupted)" : "");
	if (s->verdict.inconclusive)
		fprintf(f, "    %s\n", s->verdict.why);
	const struct phase_stats *ph = &s->run.measure;
	if (phase_stats_errors(ph)) {
		char line[REPORT_ERRORS_LINE_CAP];
		report_errors_line(line, sizeof line, ph);
		fprintf(f, "    errors %s; p99 ok %s, failed %s\n", line,
			units_fmt_duration(a, sizeof a, (double)m.ok.p99_ns),
			units_fmt_duration(b, sizeof b, (double)m.failed.p99_ns));
	}
	if (in && in->n_outcomes) {
		fprintf(f, "   ");
		for (size_t k = 0; k < in->n_outcomes; k++)
			fprintf(f, "%s %s %.2f %%", k ? "," : "", in->outcome_name[k],
				report_outcome_pct(&s->run.measure, k));
		fprintf(f, "\n");
	}
	fflush(f);
}

void ramp_warnings(const struct ramp_report *rr, struct report_warnings *w)
{
	w->n = 0;
	const struct ramp_result *r = rr->res;
	if (rr->ctx.target && w->n < REPORT_WARN_CAP)
		snprintf(w->msg[w->n++], REPORT_WARN_LEN,
			 "self-contained: driver and target (plan %s) share one process and one "
			 "machine, over loopback: capacity found here is not that of a real server",
			 rr->ctx.target->plan_name);
	if (r->interrupted && w->n < REPORT_WARN_CAP)
		snprintf(w->msg[w->n++], REPORT_WARN_LEN, "interrupted: the ramp was stopped early");
	/* the steps pacer's own error could have decided, each once: the
	 * capacity stops short of them */
	for (size_t i = 0; i < r->n_steps && w->n < REPORT_WARN_CAP; i++) {
		const struct ramp_step *s = &r->steps[i];
		if (s->retried || !s->verdict.inconclusive || s->run.interrupted)
			continue;
		char b[32];
		snprintf(w->msg[w->n++], REPORT_WARN_LEN,
			 "step %s%zu (%s req/s) stayed inconclusive after %u measurement%s: %s; the "
			 "capacity is a lower bound (docs/selfcheck.md)",
			 s->refine ? "r" : "", i + 1, units_fmt_thousands(b, sizeof b, s->offered_per_s, 0),
			 s->attempt ? s->attempt : 1, s->attempt > 1 ? "s" : "", s->verdict.why);
	}
	/* the steps whose steal was worth saying, in one warning with the worst */
	char list[160] = "", most_words[160] = "";
	size_t n_list = 0, len = 0;
	double most = -1;
	for (size_t i = 0; i < r->n_steps; i++) {
		char words[160];
		if (!report_steal_words(words, sizeof words, &r->steps[i].run))
			continue;
		double pct = run_result_steal_pct(&r->steps[i].run, false);
		if (pct > most) {
			most = pct;
			snprintf(most_words, sizeof most_words, "%s", words);
		}
		if (len < sizeof list - 8) {
			int k = snprintf(list + len, sizeof list - len, "%s%s%zu", n_list ? ", " : "",
					 r->steps[i].refine ? "r" : "", i + 1);
			len = k > 0 && (size_t)k < sizeof list - len ? len + (size_t)k : sizeof list - 1;
		}
		n_list++;
	}
	if (n_list && w->n < REPORT_WARN_CAP)
		snprintf(w->msg[w->n++], REPORT_WARN_LEN,
			 "step%s %s (of %zu): the hypervisor took up to %s (steal time): its "
			 "pauses count in latency as the generator's lateness, so a failure there "
			 "may be the host's, not the target's",
			 n_list == 1 ? "" : "s", list, r->n_steps, most_words);
}

/* A step's warm-up, in brief: what it sent and got, the connections it
 * found and opened, its latency (docs/ramp.md). Null without a warm-up. */
static void json_warmup(struct jsonw *j, const struct ramp_step *s)
{
	const struct run_result *r = &s->run;
	const struct phase_stats *w = &r->warmup;
	jw_key(j, KEY_WARMUP);
	if (!r->warmup_ns) {
		jw_null(j);
		return;
	}
	jw_obj(j);
	jw_key(j, KEY_DURATION_S);
	jw_dbl(j, (double)r->warmup_ns / 1e9, 6);
	int saved = j->indent;
	jw_key(j, KEY_REQUESTS);
	jw_obj(j);
	j->indent = 0;
	jw_key(j, KEY_SCHEDULED);
	jw_u64(j, w->scheduled);
	jw_key(j, KEY_SENT);
	jw_u64(j, w->sent);
	jw_key(j, KEY_COMPLETED);
	jw_u64(j, w->completed);
	jw_key(j, KEY_DROPPED);
	jw_u64(j, w->dropped);
	jw_obj_end(j);
	j->indent = saved;
	jw_key(j, KEY_ERRORS);
	jw_u64(j, phase_stats_errors(w));
	jw_key(j, KEY_CONNECTIONS);
	jw_obj(j);
	j->indent = 0;
	jw_key(j, KEY_OPEN_AT_START);
	jw_u64(j, w->conns_open_at_start);
	jw_key(j, KEY_CONNECTING_AT_START);
	jw_u64(j, w->conns_connecting_at_start);
	jw_key(j, KEY_OPENED);
	jw_u64(j, w->conns_opened);
	jw_key(j, KEY_CLOSED_BY_SERVER);
	jw_u64(j, w->closed_by_server);
	jw_key(j, KEY_CLOSED_STRAY);
	jw_u64(j, w->closed_stray);
	jw_obj_end(j);
	j->indent = saved;
	jw_key(j, KEY_ACHIEVED_PER_S);
	jw_dbl(j, s->warmup_fig.achieved_per_s, 3);
	jw_key(j, KEY_P50_US);
	jw_dbl(j, (double)s->warmup_fig.p50_ns / 1e3, 3);
	jw_key(j, KEY_P99_US);
	jw_dbl(j, (double)s->warmup_fig.p99_ns / 1e3, 3);
	jw_key(j, KEY_MAX_US);
	jw_dbl(j, (double)s->warmup_fig.max_ns / 1e3, 3);
	jw_obj_end(j);
}

static void json_step(struct jsonw *j, const struct ramp_step *s, const struct inspect *in,
		      const struct req_names *names, const struct report_ctx *ctx)
{
	const struct run_result *r = &s->run;
	struct slo_measure m;
	double pct[RESULT_MAX_OUTCOMES];
	ramp_step_measure(r, in ? in->n_outcomes : 0, pct, &m);
	jw_obj(j);
	jw_key(j, KEY_OFFERED_PER_S);
	jw_dbl(j, s->offered_per_s, 3);
	jw_key(j, KEY_ACHIEVED_PER_S);
	jw_dbl(j, achieved(r), 3);
	jw_key(j, KEY_REFINE);
	jw_bool(j, s->refine);
	jw_key(j, KEY_ATTEMPT);
	jw_u64(j, s->attempt ? s->attempt : 1);
	jw_key(j, KEY_RETRIED);
	jw_bool(j, s->retried);
	jw_key(j, KEY_INTERRUPTED);
	jw_bool(j, r->interrupted);
	jw_key(j, KEY_ERROR_PCT);
	jw_dbl(j, m.error_pct, 4);
	jw_key(j, KEY_SUCCESS_PCT);
	jw_dbl(j, m.success_pct, 4);
	jw_key(j, KEY_DROP_PCT);
	jw_dbl(j, m.drop_pct, 4);
	jw_key(j, KEY_VERDICT);
	jw_obj(j);
	rj_verdict_fields(j, &s->verdict, ctx->slo);
	jw_obj_end(j);
	jw_key(j, KEY_GENERATOR_CPU_S);
	jw_dbl(j, (double)r->gen_cpu_ns / 1e9, 6);
	jw_key(j, KEY_STEAL_PCT);
	jw_dbl(j, run_result_steal_pct(r, false), 2); /* NAN, not known: null */
	if (s->target_cpu_ns) {
		uint64_t served = r->measure.completed + r->warmup.completed;
		jw_key(j, KEY_TARGET_CPU_MS_PER_REQUEST);
		jw_dbl(j, served ? (double)s->target_cpu_ns / 1e6 / (double)served : 0, 6);
	}
	jw_key(j, KEY_WARMUP_COMPLETED);
	jw_u64(j, r->warmup.completed);
	json_warmup(j, s);
	jw_key(j, KEY_MEASURE);
	rj_phase(j, &r->measure, (double)r->measure_ns, r->offered_rate_per_s, true, achieved(r),
		 in, names);
	rj_series(j, r->series, r->series_len, phase_stats_quic(&r->measure));
	if (r->n_reps > 1)
		rj_repetitions(j, r->reps, r->n_reps);
	rj_usage(j, r, ctx);
	jw_obj_end(j);
}

int ramp_json(FILE *f, const struct ramp_report *rr)
{
	const struct ramp_result *r = rr->res;
	const struct ramp_plan *rp = rr->plan;
	struct jsonw jj, *j = &jj;
	jw_init(j, f, 1);
	rj_head(j, &rr->ctx, "ramp", r->started_wall_ns, r->interrupted);
	jw_key(j, KEY_PLAN);
	jw_obj(j);
	rj_plan_fields(j, &rp->run);
	jw_key(j, KEY_STEPS_PER_S);
	jw_arr(j);
	for (size_t i = 0; i < rp->n_rates; i++)
		jw_dbl(j, rp->rates[i], 3);
	jw_arr_end(j);
	jw_key(j, KEY_STEP_DURATION_S);
	jw_dbl(j, (double)rp->step_ns / 1e9, 6);
	jw_key(j, KEY_STEP_WARMUP_S);
	jw_dbl(j, (double)rp->step_warmup_ns / 1e9, 6);
	jw_key(j, KEY_SLO);
	if (rp->slo_expr) {
		char canon[SLO_FORMAT_MAX];
		slo_format(&rp->slo, canon, sizeof canon);
		jw_str(j, canon);
	} else {
		jw_null(j);
	}
	jw_key(j, KEY_AFTER_FAIL);
	jw_u64(j, rp->after_fail);
	jw_key(j, KEY_REFINE);
	jw_bool(j, rp->refine);
	jw_key(j, KEY_PRECISION);
	jw_dbl(j, rp->precision, 4);
	jw_key(j, KEY_REQUIRE_PER_S);
	if (rp->require_per_s > 0)
		jw_dbl(j, rp->require_per_s, 3);
	else
		jw_null(j);
	jw_key(j, "retries");
	jw_u64(j, rp->retries);
	jw_obj_end(j);
	rj_env(j, rr->ctx.env);
	jw_key(j, KEY_GENERATOR);
	jw_obj(j);
	rj_gen_session(j, &rr->ctx);
	jw_obj_end(j);
	rj_connected(j, rr->ctx.conns, rr->ctx.n_conns);
	rj_clock(j, rr->ctx.plan, r->n_steps ? &r->steps[0].run : NULL);
	if (rr->ctx.target) {
		jw_key(j, KEY_TARGET);
		jw_obj(j);
		jw_key(j, KEY_PLAN);
		jw_str(j, rr->ctx.target->plan_name);
		jw_key(j, KEY_THREADS);
		jw_u64(j, rr->ctx.target->threads);
		jw_key(j, KEY_SHARES_PROCESS_WITH_DRIVER);
		jw_bool(j, true);
		jw_obj_end(j);
	}
	rj_target_cores(j, &rr->ctx);
	jw_key(j, KEY_STEPS);
	jw_arr(j);
	for (size_t i = 0; i < r->n_steps; i++)
		json_step(j, &r->steps[i], rp->run.inspect, rp->run.names, &rr->ctx);
	jw_arr_end(j);

	jw_key(j, KEY_HIGHEST_PASSING);
	if (r->highest_pass >= 0) {
		const struct ramp_step *s = &r->steps[r->highest_pass];
		jw_obj(j);
		jw_key(j, KEY_STEP);
		jw_u64(j, (uint64_t)r->highest_pass + 1);
		jw_key(j, KEY_OFFERED_PER_S);
		jw_dbl(j, s->offered_per_s, 3);
		jw_key(j, KEY_ACHIEVED_PER_S);
		jw_dbl(j, achieved(&s->run), 3);
		double cores;
		const char *basis;
		bool pc = ramp_per_core_cores(rr, s, &cores, &basis);
		jw_key(j, KEY_PER_CORE_PER_S);
		if (pc)
			jw_dbl(j, s->offered_per_s / cores, 3);
		else
			jw_null(j);
		jw_key(j, KEY_CORES);
		if (pc)
			jw_dbl(j, cores, cores == (double)(uint64_t)cores ? 0 : 4);
		else
			jw_null(j);
		jw_key(j, KEY_CORES_BASIS);
		jw_str(j, pc ? basis : NULL);
		jw_key(j, KEY_BOUND);
		jw_str(j, ramp_bound_name(r->bound));
		jw_key(j, KEY_BELOW_PER_S);
		if (r->below >= 0)
			jw_dbl(j, r->steps[r->below].offered_per_s, 3);
		else
			jw_null(j);
		/* the per-core figure is a capacity per core only when the
		 * target's CPU was the limit: said beside it, not instead of it */
		const struct ramp_step *d = &r->steps[ramp_deciding_step(r)];
		jw_key(j, KEY_CPU_LIMITED);
		if (d->run.target.known && rr->ctx.target_cores > 0)
			jw_bool(j, ramp_cpu_limited(d->run.target.cores_busy, rr->ctx.target_cores));
		else
			jw_null(j);
		jw_obj_end(j);
	} else {
		jw_null(j);
	}
	jw_key(j, KEY_INCONCLUSIVE_STEPS);
	jw_u64(j, r->inconclusive);
	jw_key(j, KEY_KNEE_PER_S);
	if (r->knee >= 0)
		jw_dbl(j, r->steps[r->knee].offered_per_s, 3);
	else
		jw_null(j);
	jw_key(j, KEY_REACHED_REQUIRE);
	jw_bool(j, r->reached_require);
	struct report_warnings w;
	ramp_warnings(rr, &w);
	rj_warnings(j, &w);
	jw_obj_end(j);
	return ferror(f) ? -EIO : 0;
}
