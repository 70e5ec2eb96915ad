#include "result/verdict.h"

#include <inttypes.h>
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

static uint64_t minus_sat(uint64_t v, uint64_t d) { return v > d ? v - d : 0; }

/* A set's latency figures less the lateness at each statistic. */
static void latency_less(struct slo_latency *l, const struct slo_latency *lag, uint64_t extra)
{
	l->p50_ns = minus_sat(l->p50_ns, lag->p50_ns + extra);
	l->p90_ns = minus_sat(l->p90_ns, lag->p90_ns + extra);
	l->p99_ns = minus_sat(l->p99_ns, lag->p99_ns + extra);
	l->p99_9_ns = minus_sat(l->p99_9_ns, lag->p99_9_ns + extra);
	l->p99_99_ns = minus_sat(l->p99_99_ns, lag->p99_99_ns + extra);
	l->max_ns = minus_sat(l->max_ns, lag->max_ns + extra);
	l->mean_ns = fmax(0, l->mean_ns - (lag->mean_ns + (double)extra));
}

static double pct_clamp(double p) { return p < 0 ? 0 : p > 100 ? 100 : p; }

/* What m would have measured without pacer's share, at its best for a
 * clause whose operator wants a higher value (up: > and >=) or a lower
 * one; opct: room for m's outcome rates. */
static void without_share(const struct slo_measure *m, const struct slo_share *sh, bool up,
			  double *opct, struct slo_measure *w)
{
	*w = *m;
	struct slo_latency all = {m->p50_ns,  m->p90_ns, m->p99_ns,    m->p99_9_ns,    m->p99_99_ns,
				  m->max_ns, m->mean_ns, m->latency_known, m->latency_count};
	latency_less(&all, &sh->lag, sh->read_err_ns);
	w->p50_ns = all.p50_ns;
	w->p90_ns = all.p90_ns;
	w->p99_ns = all.p99_ns;
	w->p99_9_ns = all.p99_9_ns;
	w->p99_99_ns = all.p99_99_ns;
	w->max_ns = all.max_ns;
	w->mean_ns = all.mean_ns;
	latency_less(&w->ok, &sh->lag, sh->read_err_ns);
	latency_less(&w->failed, &sh->lag, sh->read_err_ns);
	w->error_pct = pct_clamp(m->error_pct - sh->lagged_failed_pct);
	w->success_pct = pct_clamp(m->success_pct + sh->lagged_failed_pct);
	if (sh->gen_short) {
		w->drop_pct = 0;
		w->achieved_fraction = fmax(1, m->achieved_fraction);
	}
	for (size_t k = 0; m->outcome_pct && k < m->n_outcomes && k < SLO_MAX_CLAUSES; k++)
		opct[k] = pct_clamp(m->outcome_pct[k] + (up ? sh->lagged_pct : -sh->lagged_pct));
	if (m->outcome_pct)
		w->outcome_pct = opct;
}

/* A latency clause's statistic in m, ns (every request). */
static uint64_t clause_latency(const struct slo_clause *c, const struct slo_measure *m)
{
	switch (c->metric) {
	case SLO_M_P50: return m->p50_ns;
	case SLO_M_P90: return m->p90_ns;
	case SLO_M_P99: return m->p99_ns;
	case SLO_M_P99_9: return m->p99_9_ns;
	case SLO_M_P99_99: return m->p99_99_ns;
	case SLO_M_MAX: return m->max_ns;
	default: return (uint64_t)fmax(0, m->mean_ns);
	}
}

/* pacer's share of a clause's figure, in words. */
static void share_words(char *out, size_t cap, const struct slo_clause *c,
			const struct slo_share *sh)
{
	char a[32];
	switch (c->metric) {
	case SLO_M_ERRORS:
	case SLO_M_SUCCESS:
		snprintf(out, cap, "%.2f%% of the requests failed after pacer sent them late in a clump",
			 sh->lagged_failed_pct);
		break;
	case SLO_M_RATE:
	case SLO_M_DROPS:
		snprintf(out, cap, "the rate fell short by the generator's fault");
		break;
	case SLO_M_OUTCOME:
		snprintf(out, cap, "%.2f%% of the requests were sent late in a clump", sh->lagged_pct);
		break;
	default: {
		uint64_t l = 0;
		switch (c->metric) {
		case SLO_M_P50: l = sh->lag.p50_ns; break;
		case SLO_M_P90: l = sh->lag.p90_ns; break;
		case SLO_M_P99: l = sh->lag.p99_ns; break;
		case SLO_M_P99_9: l = sh->lag.p99_9_ns; break;
		case SLO_M_P99_99: l = sh->lag.p99_99_ns; break;
		case SLO_M_MAX: l = sh->lag.max_ns; break;
		default: l = (uint64_t)fmax(0, sh->lag.mean_ns); break;
		}
		units_fmt_duration(a, sizeof a, (double)(l + sh->read_err_ns));
		snprintf(out, cap, "pacer's lateness there, %s%s", a,
			 sh->read_err_ns ? ", the response side's included" : "");
	}
	}
}

void slo_eval_share(const struct slo *s, const struct slo_measure *m, const struct slo_share *sh,
		    struct slo_verdict *v)
{
	slo_eval(s, m, v);
	v->inconclusive = false;
	v->material = 0;
	v->why[0] = '\0';
	if (!sh || !sh->known)
		return;
	if (v->pass) {
		if (sh->gen_short && m->offered_known) {
			v->inconclusive = true;
			snprintf(v->why, sizeof v->why,
				 "passed, but pacer could not offer the rate: %.2f%% of it achieved, by "
				 "the generator's fault",
				 m->achieved_fraction * 100);
		}
		return;
	}
	double up_pct[SLO_MAX_CLAUSES], down_pct[SLO_MAX_CLAUSES];
	struct slo_measure up, down, ontime;
	without_share(m, sh, true, up_pct, &up);
	without_share(m, sh, false, down_pct, &down);
	/* every request's latency as that of those sent on time, less the
	 * response side's lateness */
	ontime = down;
	struct slo_latency ot = sh->ontime, none = {0};
	latency_less(&ot, &none, sh->read_err_ns);
	ontime.p50_ns = ot.p50_ns;
	ontime.p90_ns = ot.p90_ns;
	ontime.p99_ns = ot.p99_ns;
	ontime.p99_9_ns = ot.p99_9_ns;
	ontime.p99_99_ns = ot.p99_99_ns;
	ontime.max_ns = ot.max_ns;
	ontime.mean_ns = ot.mean_ns;
	ontime.latency_known = true;
	ontime.latency_count = sh->ontime.known ? ot.count : 0;
	size_t n = s->n <= SLO_MAX_CLAUSES ? s->n : SLO_MAX_CLAUSES;
	size_t conclusive = 0, o = 0;
	for (size_t i = 0; i < n; i++) {
		const struct slo_clause *c = &s->c[i];
		char part[SLO_NAME_MAX + 96], scratch[SLO_NAME_MAX + 96];
		if (eval_clause(c, m, part, sizeof part))
			continue;
		bool want_up = c->op == SLO_GT || c->op == SLO_GE;
		bool on_time = slo_metric_is_latency(c->metric) && c->set == SLO_SET_ALL &&
			       eval_clause(c, &ontime, scratch, sizeof scratch);
		if (!on_time && !eval_clause(c, want_up ? &up : &down, scratch, sizeof scratch)) {
			conclusive++;
			continue;
		}
		v->material |= 1u << i;
		char share[160];
		if (on_time) {
			char a[32];
			snprintf(share, sizeof share,
				 "the %" PRIu64 " requests it sent on time met it (%s there)",
				 sh->ontime.count,
				 units_fmt_duration(a, sizeof a, (double)clause_latency(c, &ontime)));
		} else {
			share_words(share, sizeof share, c, sh);
		}
		if (o < sizeof v->why) {
			int k = snprintf(v->why + o, sizeof v->why - o, "%s%s, within pacer's share (%s)",
					 o ? "; " : "", part, share);
			o = k > 0 ? o + (size_t)k : o;
		}
	}
	v->inconclusive = conclusive == 0 && v->material != 0;
	if (!v->inconclusive)
		v->why[0] = '\0';
}
