#include "result/verdict.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "util/units.h"

#define MORE_RESERVE 12   /* room for "; +NN more" */

/* -1, 0, 1 for a < b, a == b, a > b; 2 when either is NaN. */
static int cmp_double(double a, double b)
{
	if (isnan(a) || isnan(b))
		return 2;
	return a < b ? -1 : a > b ? 1 : 0;
}

static bool op_holds(enum slo_op op, int cmp)
{
	switch (op) {
	case SLO_LT: return cmp == -1;
	case SLO_LE: return cmp == -1 || cmp == 0;
	case SLO_GT: return cmp == 1;
	case SLO_GE: return cmp == 1 || cmp == 0;
	}
	return false;
}

static void fmt_measured_percent(char *out, size_t cap, double p)
{
	if (fabs(p) < 1e9)
		snprintf(out, cap, "%.2f%%", p);
	else
		snprintf(out, cap, "%.3g%%", p);
}

/* Judge one clause; on failure write the reason part. */
static bool eval_clause(const struct slo_clause *c, const struct slo_measure *m, char *part,
			size_t cap)
{
	const char *name = slo_clause_name(c);
	double val = NAN; /* measured, in the threshold's unit */
	double cmp_val, cmp_thr = c->threshold;
	bool have_u64 = false;
	uint64_t u = 0;
	char shown[48];
	struct slo_latency all = {m->p50_ns,  m->p90_ns, m->p99_ns,        m->p99_9_ns,
				  m->p99_99_ns, m->max_ns, m->mean_ns,     m->latency_known,
				  m->latency_count};
	const struct slo_latency *l = c->set == SLO_SET_OK       ? &m->ok
				      : c->set == SLO_SET_FAILED ? &m->failed
								 : &all;
	switch (c->metric) {
	case SLO_M_P50: u = l->p50_ns; have_u64 = true; break;
	case SLO_M_P90: u = l->p90_ns; have_u64 = true; break;
	case SLO_M_P99: u = l->p99_ns; have_u64 = true; break;
	case SLO_M_P99_9: u = l->p99_9_ns; have_u64 = true; break;
	case SLO_M_P99_99: u = l->p99_99_ns; have_u64 = true; break;
	case SLO_M_MAX: u = l->max_ns; have_u64 = true; break;
	case SLO_M_MEAN: val = isfinite(l->mean_ns) ? l->mean_ns : NAN; break;
	case SLO_M_ERRORS: val = m->error_pct; break;
	case SLO_M_SUCCESS: val = m->success_pct; break;
	case SLO_M_DROPS: val = m->drop_pct; break;
	case SLO_M_OUTCOME:
		if (m->outcome_pct && c->outcome_index >= 0 && (size_t)c->outcome_index < m->n_outcomes)
			val = m->outcome_pct[c->outcome_index];
		break;
	case SLO_M_RATE:
		if (!m->offered_known) {
			snprintf(part, cap, "rate: no offered rate (closed loop)");
			return false;
		}
		val = m->achieved_fraction * 100;
		break;
	}
	if ((have_u64 || c->metric == SLO_M_MEAN) && l->known && l->count == 0) {
		/* no response at all: a latency bound is not met by absence */
		snprintf(part, cap, "%s: no response measured", name);
		return false;
	}
	if (have_u64)
		val = (double)u;
	cmp_val = val;
	if (c->metric == SLO_M_RATE) {
		/* compare fractions: threshold/100 is the double nearest e.g. 0.95 */
		cmp_val = m->achieved_fraction;
		cmp_thr = c->threshold / 100;
	}
	int cmp;
	if (have_u64 && c->threshold >= 0 && c->threshold < 1.8e19 && c->threshold == floor(c->threshold)) {
		uint64_t t = (uint64_t)c->threshold;
		cmp = u < t ? -1 : u > t ? 1 : 0;
	} else {
		cmp = cmp_double(cmp_val, cmp_thr);
	}
	if (op_holds(c->op, cmp))
		return true;
	if (cmp == 2) {
		snprintf(part, cap, "%s: %s", name, isnan(cmp_val) ? "not measured" : "no threshold");
		return false;
	}
	const char *rel = cmp > 0 ? ">" : cmp < 0 ? "<" : c->op == SLO_LT ? ">=" : "<=";
	if (slo_metric_is_latency(c->metric))
		units_fmt_duration_sig(shown, sizeof shown, val, 4); /* 100.4 ms, not 100 ms,
								       * against 100ms */
	else
		fmt_measured_percent(shown, sizeof shown, val);
	char t[48];
	slo_clause_threshold(t, sizeof t, c);
	snprintf(part, cap, "%s %s %s %s", name, shown, rel, t);
	return false;
}

void slo_eval(const struct slo *s, const struct slo_measure *m, struct slo_verdict *v)
{
	char parts[SLO_MAX_CLAUSES][SLO_NAME_MAX + 96];
	size_t n = s->n <= SLO_MAX_CLAUSES ? s->n : SLO_MAX_CLAUSES;
	size_t nf = 0;
	for (size_t i = 0; i < n; i++)
		if (!eval_clause(&s->c[i], m, parts[nf], sizeof parts[nf]))
			nf++;
	v->pass = nf == 0;
	v->n_failed = nf;
	if (nf == 0) {
		snprintf(v->reason, sizeof v->reason, "Pass");
		return;
	}
	size_t cap = sizeof v->reason;
	size_t o = (size_t)snprintf(v->reason, cap, "Fail ");
	for (size_t f = 0; f < nf; f++) {
		const char *sep = f ? "; " : "";
		size_t need = strlen(sep) + strlen(parts[f]);
		size_t reserve = f + 1 < nf ? MORE_RESERVE : 0;
		if (o + need + reserve + 1 > cap) {
			snprintf(v->reason + o, cap - o, "%s+%zu more", sep, nf - f);
			return;
		}
		o += (size_t)snprintf(v->reason + o, cap - o, "%s%s", sep, parts[f]);
	}
}
