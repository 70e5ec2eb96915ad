#include "doc/rules.h"

#include <inttypes.h>

#include "doc/keys.h"
#include "util/units.h"

void report_success(const struct phase_stats *p, struct success_figures *out)
{
	out->of = p->sent;
	out->ok = p->success_ok;
	out->failed = phase_stats_errors(p);
	out->ok_pct = out->of ? 100.0 * (double)out->ok / (double)out->of : 0;
}

double report_outcome_pct(const struct phase_stats *p, size_t k)
{
	if (k >= RESULT_MAX_OUTCOMES || !p->completed)
		return 0;
	return 100.0 * (double)p->outcome[k] / (double)p->completed;
}

void rj_phase_rules(struct jsonw *j, const struct phase_stats *p, const struct inspect *in)
{
	struct success_figures s;
	report_success(p, &s);
	jw_key(j, KEY_SUCCESS);
	int saved = j->indent;
	jw_obj(j);
	j->indent = 0;
	jw_key(j, KEY_RULE);
	jw_str(j, in && in->success ? in->success_text : "status in 200..399 (default)");
	jw_key(j, KEY_OK);
	jw_u64(j, s.ok);
	jw_key(j, KEY_FAILED);
	jw_u64(j, s.failed);
	jw_key(j, KEY_OF);
	jw_u64(j, s.of);
	jw_key(j, KEY_OK_PCT);
	jw_dbl(j, s.ok_pct, 4);
	jw_obj_end(j);
	j->indent = saved;
	if (in && in->n_outcomes) {
		jw_key(j, KEY_OUTCOMES);
		jw_arr(j);
		for (size_t k = 0; k < in->n_outcomes; k++) {
			saved = j->indent;
			jw_obj(j);
			j->indent = 0;
			jw_key(j, KEY_NAME);
			jw_str(j, in->outcome_name[k]);
			jw_key(j, KEY_RULE);
			jw_str(j, in->outcome_text[k]);
			jw_key(j, KEY_COUNT);
			jw_u64(j, p->outcome[k]);
			jw_key(j, KEY_OF);
			jw_u64(j, p->completed);
			jw_key(j, KEY_RATE_PCT);
			jw_dbl(j, report_outcome_pct(p, k), 4);
			jw_obj_end(j);
			j->indent = saved;
		}
		jw_arr_end(j);
	}
	if (in && in->srvtime.src != SRVTIME_NONE) {
		jw_key(j, KEY_SERVER_TIME_MISSING);
		jw_u64(j, p->server_time_missing);
	}
}

static const char *srvtime_src_name(enum srvtime_src s)
{
	switch (s) {
	case SRVTIME_SERVER_TIMING: return "server-timing";
	case SRVTIME_HEADER: return "header";
	case SRVTIME_JSON: return "json";
	default: return "none";
	}
}

void rj_plan_rules(struct jsonw *j, const struct inspect *in)
{
	jw_key(j, KEY_RULES);
	if (!in || !in->active) {
		jw_null(j);
		return;
	}
	jw_obj(j);
	jw_key(j, KEY_SUCCESS);
	if (in->success)
		jw_str(j, in->success_text);
	else
		jw_null(j);
	jw_key(j, KEY_OUTCOMES);
	jw_arr(j);
	for (size_t k = 0; k < in->n_outcomes; k++) {
		int saved = j->indent;
		jw_obj(j);
		j->indent = 0;
		jw_key(j, KEY_NAME);
		jw_str(j, in->outcome_name[k]);
		jw_key(j, KEY_RULE);
		jw_str(j, in->outcome_text[k]);
		jw_obj_end(j);
		j->indent = saved;
	}
	jw_arr_end(j);
	jw_key(j, KEY_SERVER_TIME);
	if (in->srvtime.src == SRVTIME_NONE) {
		jw_null(j);
	} else {
		int saved = j->indent;
		jw_obj(j);
		j->indent = 0;
		jw_key(j, KEY_SOURCE);
		jw_str(j, srvtime_src_name(in->srvtime.src));
		jw_key(j, KEY_NAME);
		jw_str(j, in->srvtime.name);
		jw_key(j, "ns_per_unit");
		jw_dbl(j, in->srvtime.ns_per_unit, 0);
		jw_obj_end(j);
		j->indent = saved;
	}
	jw_key(j, KEY_BODY_CAP_BYTES);
	jw_u64(j, in->need_body);
	jw_obj_end(j);
}
