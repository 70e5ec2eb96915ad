/* pacer — the headline figures of a saved result (history/headline.h). */
#include "history/headline.h"
#include "doc/keys.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static const char *const names[HM_COUNT] = {"achieved", "p50",      "p90",         "p99",
					    "p99.9",    "errors",   "capacity",    "cpu",
					    "cost",     "sessions", "session_p50", "session_p99"};

const char *headline_metric_name(enum headline_metric m)
{
	return (unsigned)m < HM_COUNT ? names[m] : "?";
}

int headline_metric_parse(const char *s)
{
	if (!s)
		return -1;
	for (int i = 0; i < HM_COUNT; i++)
		if (!strcmp(s, names[i]))
			return i;
	if (!strcmp(s, "p999"))
		return HM_P999;
	if (!strcmp(s, "rate"))
		return HM_ACHIEVED;
	if (!strcmp(s, "cpu_ms"))
		return HM_CPU;
	return -1;
}

bool headline_metric_higher_better(enum headline_metric m)
{
	return m == HM_ACHIEVED || m == HM_CAPACITY || m == HM_SESSIONS;
}

static const char *str_or(const json_t *o, const char *path)
{
	const char *s = rr_str(o, path);
	return s ? s : "";
}

/* A phase object's figures (docs/result.md: measure). */
static void phase_figures(const json_t *ph, double *v)
{
	v[HM_ACHIEVED] = rr_num_or(ph, "rate.achieved_per_s", NAN);
	v[HM_P50] = rr_num_or(ph, "latency.p50_us", NAN);
	v[HM_P90] = rr_num_or(ph, "latency.p90_us", NAN);
	v[HM_P99] = rr_num_or(ph, "latency.p99_us", NAN);
	v[HM_P999] = rr_num_or(ph, "latency.p99_9_us", NAN);
	double e;
	if (rr_num(ph, "errors.pct", &e) || rr_num(ph, KEY_ERROR_PCT, &e))
		v[HM_ERRORS] = e;
}

/* A session run's figures: the sessions object ss (NULL: none) of a phase
 * or variant, and its steps from by_name (each step a name). */
static void session_figures(const json_t *ss, const json_t *by_name, struct history_headline *h)
{
	if (!ss)
		return;
	h->sess.started = rr_num_or(ss, KEY_STARTED, NAN);
	h->sess.completed = rr_num_or(ss, KEY_COMPLETED, NAN);
	h->sess.failed = rr_num_or(ss, KEY_FAILED, NAN);
	h->sess.abandoned = rr_num_or(ss, KEY_ABANDONED, NAN);
	h->v[HM_SESSIONS] = rr_num_or(ss, KEY_COMPLETED_PCT, NAN);
	const json_t *d = rr_obj(ss, KEY_DURATION);
	/* no completed or failed session: no duration to speak of */
	if (rr_num_or(d, KEY_COUNT, 0) > 0) {
		h->v[HM_SESSION_P50] = rr_num_or(d, KEY_P50_US, NAN);
		h->v[HM_SESSION_P99] = rr_num_or(d, KEY_P99_US, NAN);
	}
	for (size_t i = 0;
	     by_name && i < json_array_size(by_name) && h->n_steps < HISTORY_STEPS_MAX; i++) {
		const json_t *e = json_array_get(by_name, i);
		const char *name = rr_str(e, KEY_NAME);
		if (!name)
			continue;
		struct history_step *s = &h->steps[h->n_steps++];
		snprintf(s->name, sizeof s->name, "%s", name);
		s->completed = rr_num_or(e, KEY_COMPLETED, NAN);
		s->errors = rr_num_or(e, KEY_ERRORS, NAN);
		s->p50_us = rr_num_or(e, "latency.p50_us", NAN);
		s->p99_us = rr_num_or(e, "latency.p99_us", NAN);
	}
}

static void phase_sessions(const json_t *ph, struct history_headline *h)
{
	session_figures(rr_obj(ph, KEY_SESSIONS), rr_arr(ph, KEY_BY_NAME), h);
}

/* The summary medians of a compare variant (docs/compare.md). */
static void variant_figures(const json_t *var, double *v)
{
	v[HM_ACHIEVED] = rr_num_or(var, "summary.achieved_per_s.median", NAN);
	v[HM_P50] = rr_num_or(var, "summary.p50_us.median", NAN);
	v[HM_P90] = rr_num_or(var, "summary.p90_us.median", NAN);
	v[HM_P99] = rr_num_or(var, "summary.p99_us.median", NAN);
	v[HM_P999] = rr_num_or(var, "summary.p99_9_us.median", NAN);
	v[HM_CAPACITY] = rr_num_or(var, "summary.capacity_per_s.median", NAN);
}

static void target_of(const struct loaded_result *r, const json_t *plan, char *out, size_t cap)
{
	if (r->kind == RESULT_KIND_COMPARE) {
		/* "compare:A=URL,B=@PLAN": the variants as given */
		size_t l = (size_t)snprintf(out, cap, "compare:");
		const json_t *vars = rr_arr(r->root, KEY_VARIANTS);
		for (size_t i = 0; vars && i < json_array_size(vars) && l < cap; i++) {
			const json_t *v = json_array_get(vars, i);
			const char *name = rr_str(v, KEY_NAME), *t = rr_str(v, KEY_TARGET);
			l += (size_t)snprintf(out + l, cap - l, "%s%s=%s", i ? "," : "",
					      name ? name : "?", t ? t : "?");
		}
		return;
	}
	const char *mode = rr_str(r->root, KEY_MODE);
	const char *url = rr_str(plan, KEY_URL);
	if (mode && !strcmp(mode, "self_contained")) {
		/* the loopback port changes from run to run: name the plan and path */
		const char *tp = rr_str(r->root, "target.plan");
		const char *scheme = url ? strstr(url, "://") : NULL;
		const char *path = url ? strchr(scheme ? scheme + 3 : url, '/') : NULL;
		snprintf(out, cap, "self-contained:%s%s", tp ? tp : "?",
			 path && strcmp(path, "/") ? path : "");
		return;
	}
	const char *cto = rr_str(plan, KEY_CONNECT_TO);
	if (url && cto)
		snprintf(out, cap, "%s@%s", url, cto);
	else
		snprintf(out, cap, "%s", url ? url : "");
}

void history_headline_of(const struct loaded_result *r, struct history_headline *h)
{
	memset(h, 0, sizeof *h);
	for (int i = 0; i < HM_COUNT; i++)
		h->v[i] = NAN;
	h->sess.started = h->sess.completed = h->sess.failed = h->sess.abandoned = NAN;
	const json_t *root = r->root;
	const json_t *plan = rr_obj(root, KEY_PLAN);
	h->kind = result_kind_name(r->kind);
	h->started_at = str_or(root, KEY_STARTED_AT);
	h->mode = str_or(root, "mode");
	h->pacer_version = str_or(root, "pacer.version");
	h->pacer_commit = str_or(root, "pacer.commit");
	h->scenario = rr_str(root, KEY_SCENARIO);
	if (!h->scenario)
		h->scenario = rr_str(plan, KEY_SCENARIO);
	h->table_hash = rr_str(plan, "table.sha256");
	if (!h->table_hash)
		h->table_hash = rr_str(plan, "workload.sha256");
	h->workload_hash = rr_str(plan, "workload." KEY_WORKLOAD_SHA256);
	h->hostname = str_or(root, "environment.hostname");
	h->cpu_model = str_or(root, "environment.cpu_model");
	h->kernel = str_or(root, "environment.kernel");
	h->arch = str_or(root, "environment.arch");
	h->cores = rr_num_or(root, "environment.cores", NAN);
	h->interrupted = rr_true(root, KEY_INTERRUPTED);
	h->report_id = r->id;
	target_of(r, plan, h->target, sizeof h->target);

	switch (r->kind) {
	case RESULT_KIND_RUN:
		phase_figures(rr_obj(root, KEY_MEASURE), h->v);
		phase_sessions(rr_obj(root, KEY_MEASURE), h);
		h->v[HM_CPU] = rr_num_or(root, "target_resources.cpu_ms_per_request", NAN);
		break;
	case RESULT_KIND_RAMP: {
		/* the figures of the highest passing step; the capacity is its rate,
		 * unless it is only a lower bound (a step above stayed
		 * inconclusive): that is no figure to compare or gate on */
		double step;
		const json_t *steps = rr_arr(root, KEY_STEPS);
		if (rr_num(root, "highest_passing.step", &step) && step >= 1 && steps &&
		    step <= (double)json_array_size(steps)) {
			const json_t *s = json_array_get(steps, (size_t)step - 1);
			phase_figures(rr_obj(s, KEY_MEASURE), h->v);
			phase_sessions(rr_obj(s, KEY_MEASURE), h);
			const char *bound = rr_str(root, "highest_passing.bound");
			if (!bound || strcmp(bound, "lower") != 0)
				h->v[HM_CAPACITY] =
					rr_num_or(root, "highest_passing.offered_per_s", NAN);
			h->v[HM_CPU] = rr_num_or(s, KEY_TARGET_CPU_MS_PER_REQUEST, NAN);
		}
		break;
	}
	case RESULT_KIND_COMPARE: {
		const json_t *vars = rr_arr(root, KEY_VARIANTS);
		if (vars && json_array_size(vars) > 0) {
			const json_t *v0 = json_array_get(vars, 0);
			variant_figures(v0, h->v);
			/* the variant's sessions over its repetitions (docs/compare.md) */
			session_figures(rr_obj(v0, KEY_SESSIONS), rr_arr(v0, KEY_BY_NAME), h);
			if (!h->table_hash)
				h->table_hash = rr_str(v0, "workload.sha256");
			h->workload_hash = rr_str(v0, "workload." KEY_WORKLOAD_SHA256);
		}
		break;
	}
	}
	if (!isfinite(h->v[HM_CPU]))
		h->v[HM_CPU] = rr_num_or(root, "cost.cpu_ms_per_request", NAN);
	const json_t *profiles = rr_arr(root, "cost.profiles");
	if (profiles && json_array_size(profiles) > 0)
		h->v[HM_COST] =
			rr_num_or(json_array_get(profiles, 0), KEY_USD_PER_MILLION_REQUESTS, NAN);
}
