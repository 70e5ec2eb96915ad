#include "result/gencheck.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "util/units.h"

const char *gencheck_blame_name(enum gencheck_blame b)
{
	switch (b) {
	case GENCHECK_BLAME_TARGET:
		return "target";
	case GENCHECK_BLAME_GENERATOR:
		return "generator";
	case GENCHECK_BLAME_UNKNOWN:
		return "unknown";
	default:
		return NULL;
	}
}

double gencheck_impact_pct(double lag, double latency)
{
	if (!(lag > 0))
		return 0;
	if (!(latency > 0))
		return 100;
	return 100.0 * lag / latency;
}

/* A percent with the digits that say something: 91, 4.2, 0.052. */
static const char *pct(char *b, size_t cap, double v)
{
	snprintf(b, cap, v >= 10 || v == 0 ? "%.0f %%" : v >= 1 ? "%.1f %%" : "%.2g %%", v);
	return b;
}

static const char *dur(char *b, size_t cap, double ns)
{
	return units_fmt_duration(b, cap, ns);
}

/* The value of a latency statistic of h: a percentile, the max or the mean. */
static double stat_of(const struct hist *h, enum slo_metric m)
{
	switch (m) {
	case SLO_M_P50:
		return (double)hist_percentile(h, 50.0);
	case SLO_M_P90:
		return (double)hist_percentile(h, 90.0);
	case SLO_M_P99:
		return (double)hist_percentile(h, 99.0);
	case SLO_M_P99_9:
		return (double)hist_percentile(h, 99.9);
	case SLO_M_P99_99:
		return (double)hist_percentile(h, 99.99);
	case SLO_M_MAX:
		return (double)hist_percentile(h, 100.0);
	case SLO_M_MEAN:
		return hist_mean(h);
	default:
		return NAN;
	}
}

static bool clause_holds(enum slo_op op, double v, double threshold)
{
	return op == SLO_LE ? v <= threshold : v < threshold;
}

/* loop_lag_p99: lateness against latency at p99 and at every SLO latency
 * statistic. */
static void check_lag(const struct run_result *r, uint64_t floor_ns, const struct slo *slo,
		      struct gen_verdict *v)
{
	struct gencheck *c = &v->c[0];
	const struct phase_stats *m = &r->measure;
	const struct hist *lag = &m->timing[TIM_LOOP_LAG], *lat = &m->timing[TIM_LATENCY];
	c->name = "loop_lag_p99";
	c->unit = "us";
	c->threshold = (double)floor_ns / 1e3;
	c->material_pct = GENCHECK_MATERIAL_PCT;
	if (!r->open_loop || !lag->counts || !lag->total) {
		snprintf(c->advice, sizeof c->advice, "%s",
			 r->open_loop ? "no request was due in the measured phase"
				      : "closed loop: requests are not scheduled, so there is no lateness");
		return;
	}
	c->evaluated = true;
	/* no latency at all (no response, nothing timed out: every connection
	 * failed, say): there is no figure the lateness could have moved */
	bool measured = lat->counts && lat->total;
	double lag99 = (double)hist_percentile(lag, 99.0);
	double lat99 = measured ? (double)hist_percentile(lat, 99.0) : 0;
	c->value = lag99 / 1e3;
	v->latency_p99_us = lat99 / 1e3;
	c->impact_pct = measured ? gencheck_impact_pct(lag99, lat99) : 0;
	bool material99 = c->impact_pct > GENCHECK_MATERIAL_PCT;
	c->fired = lag99 > (double)floor_ns && material99;

	char a[32], b[32], p[32], f[32];
	int n;
	if (measured)
		n = snprintf(c->finding, sizeof c->finding,
			     "loop-lag p99 %s is %s of latency p99 %s: pacer's lateness could have "
			     "moved it by up to that (%s over %s%s)",
			     dur(a, sizeof a, lag99), pct(p, sizeof p, c->impact_pct),
			     dur(b, sizeof b, lat99), material99 ? "material:" : "immaterial: not",
			     pct(f, sizeof f, GENCHECK_MATERIAL_PCT),
			     material99 && !c->fired ? ", but under --lag-limit" : "");
	else
		n = snprintf(
			c->finding, sizeof c->finding,
			"loop-lag p99 %s, but no latency was measured (no response, no timeout): "
			"there is no figure it could have moved (immaterial)",
			dur(a, sizeof a, lag99));

	/* SLO latency clauses: the lateness at the clause's statistic. */
	const struct gencheck_slo *why = NULL; /* the first clause that fired it */
	for (size_t i = 0; slo && i < slo->n && v->n_slo < SLO_MAX_CLAUSES; i++) {
		const struct slo_clause *k = &slo->c[i];
		if (k->metric > SLO_M_MEAN)
			continue;
		struct gencheck_slo *s = &v->slo[v->n_slo++];
		snprintf(s->clause, sizeof s->clause, "%s", k->text);
		double l = stat_of(lag, k->metric), t = stat_of(lat, k->metric);
		if (!lat->counts || !lat->total)
			t = 0;
		s->loop_lag_us = l / 1e3;
		s->latency_us = t / 1e3;
		s->threshold_us = k->threshold / 1e3;
		s->impact_pct = gencheck_impact_pct(l, k->threshold);
		s->failed = !clause_holds(k->op, t, k->threshold);
		s->flips = s->failed && clause_holds(k->op, t - l, k->threshold);
		bool material = measured &&
				(s->flips || gencheck_impact_pct(l, t) > GENCHECK_MATERIAL_PCT);
		if (l > (double)floor_ns && material) {
			c->fired = true;
			if (!why)
				why = s;
		}
	}
	if (why && n > 0 && (size_t)n < sizeof c->finding) {
		dur(a, sizeof a, why->loop_lag_us * 1e3);
		if (why->flips)
			snprintf(c->finding + n, sizeof c->finding - (size_t)n,
				 "; SLO %s failed by less than the lateness there (%s): without it, it "
				 "could have passed",
				 why->clause, a);
		else
			snprintf(c->finding + n, sizeof c->finding - (size_t)n,
				 "; at SLO %s the lateness %s is %s of the latency: material",
				 why->clause, a,
				 pct(p, sizeof p, gencheck_impact_pct(why->loop_lag_us, why->latency_us)));
	}
	/* late because the host paused the generator: more threads would not help */
	double steal = run_result_steal_pct(r, false);
	if (c->fired && run_result_steal_material(r))
		snprintf(c->advice, sizeof c->advice,
			 "the generator picked up due requests late while the hypervisor took %s of "
			 "its CPUs (steal time): repeat on a quieter machine or on dedicated cores; "
			 "if the lateness stays, add --threads, lower --connections, or keep pacer "
			 "off the target's cores (taskset)",
			 pct(p, sizeof p, steal));
	else
		snprintf(c->advice, sizeof c->advice, "%s",
			 c->fired ? "the generator picked up due requests late: add --threads, lower "
				    "--connections, keep pacer off the target's cores (taskset), or "
				    "run it on another machine"
				  : "");
}

/* achieved_rate: a shortfall and whose it was. */
static void check_rate(const struct run_result *r, double target_cores, struct gen_verdict *v)
{
	struct gencheck *c = &v->c[2];
	const struct phase_stats *m = &r->measure;
	c->name = "achieved_rate";
	c->unit = "pct";
	c->threshold = GENCHECK_ACHIEVED_PCT;
	c->material_pct = GENCHECK_GEN_SHARE_PCT;
	double secs = (double)r->measure_ns / 1e9;
	if (!r->open_loop || r->offered_rate_per_s <= 0 || secs <= 0) {
		snprintf(c->advice, sizeof c->advice, "closed loop: no offered rate to compare with");
		return;
	}
	c->evaluated = true;
	/* the rate offered is that of the requests that were due in the planned
	 * window: a Poisson schedule's count in a short phase differs from rate x
	 * duration by chance, which is no shortfall of anyone's (with constant
	 * arrivals the two are one) */
	double offered = r->offered_rate_per_s;
	if (r->window_ns && m->scheduled)
		offered = (double)m->scheduled * 1e9 / (double)r->window_ns;
	c->value = 100.0 * ((double)m->completed / secs) / offered;
	v->cap_wait_s = (double)m->cap_wait_ns / 1e9;
	v->cap_wait_idle_s = (double)m->cap_wait_idle_ns / 1e9;
	double thread_s = secs * (r->threads ? r->threads : 1);
	bool waited = v->cap_wait_s >= GENCHECK_MIN_CAP_WAIT_PCT / 100.0 * thread_s;
	/* Blocked in the loop is not all idle: a thread woken by a response
	 * may wait for a CPU first. Take the measured phase's share of the
	 * threads' waits for a CPU out of the idle time. */
	double idle_s = v->cap_wait_idle_s;
	if (r->gen_cpu_wait_known) {
		double span = (double)r->warmup_ns + (double)r->measure_ns;
		v->cpu_wait_s = (double)r->gen_cpu_wait_ns / 1e9 * ((double)r->measure_ns / span);
		idle_s = idle_s > v->cpu_wait_s ? idle_s - v->cpu_wait_s : 0;
	}
	if (idle_s > v->cap_wait_s)
		idle_s = v->cap_wait_s;
	if (m->cap_wait_ns)
		c->impact_pct = 100.0 * (v->cap_wait_s - idle_s) / v->cap_wait_s;

	char a[32], p[32], q[32];
	char tgt[96] = "";
	if (r->target.known && target_cores > 0)
		snprintf(tgt, sizeof tgt, "; the target's CPU: %.2f of %.3g cores%s",
			 r->target.cores_busy, target_cores,
			 r->target.cores_busy >= GENCHECK_TARGET_BUSY * target_cores ? " (saturated)" : "");
	bool short_ = c->value < c->threshold;
	if (!short_) {
		snprintf(c->finding, sizeof c->finding, "%s of the offered rate achieved",
			 pct(p, sizeof p, c->value));
		return;
	}
	if (r->interrupted) {
		snprintf(c->finding, sizeof c->finding,
			 "%s of the offered rate achieved: the run was interrupted, so it falls "
			 "short by design",
			 pct(p, sizeof p, c->value));
		return;
	}
	if (waited) {
		bool gen = c->impact_pct > GENCHECK_GEN_SHARE_PCT;
		v->blame = gen ? GENCHECK_BLAME_GENERATOR : GENCHECK_BLAME_TARGET;
		snprintf(c->finding, sizeof c->finding,
			 "%s of the offered rate achieved, the %s's fault: for %s due requests waited "
			 "while every connection was in use, and pacer was %s %s of that time%s",
			 pct(p, sizeof p, c->value), gen ? "generator" : "target",
			 dur(a, sizeof a, (double)m->cap_wait_ns),
			 gen ? "busy or waiting for a CPU" : "idle, waiting for responses,",
			 pct(q, sizeof q, gen ? c->impact_pct : 100.0 - c->impact_pct), tgt);
	} else if (m->errors[ERRK_CONNECT] || m->errors[ERRK_TLS] || m->errors[ERRK_PROTOCOL]) {
		/* requests waited for connections the target would not give:
		 * refused, reset, timed out, failed handshakes */
		v->blame = GENCHECK_BLAME_TARGET;
		snprintf(c->finding, sizeof c->finding,
			 "%s of the offered rate achieved, the target's fault: %llu of its connections "
			 "failed (connect, TLS or HTTP/%c), and the requests due meanwhile could not be "
			 "sent%s",
			 pct(p, sizeof p, c->value),
			 (unsigned long long)(m->errors[ERRK_CONNECT] + m->errors[ERRK_TLS] +
					      m->errors[ERRK_PROTOCOL]),
			 phase_stats_quic(m) ? '3' : '2', tgt);
	} else if (v->c[0].fired || r->gen_busiest_thread_pct > GENCHECK_THREAD_PCT) {
		v->blame = GENCHECK_BLAME_GENERATOR;
		snprintf(c->finding, sizeof c->finding,
			 "%s of the offered rate achieved, the generator's fault: no request waited "
			 "for a busy connection, but pacer %s%s",
			 pct(p, sizeof p, c->value),
			 v->c[0].fired ? "picked up due requests late" : "had no CPU to spare", tgt);
	} else {
		v->blame = GENCHECK_BLAME_UNKNOWN;
		snprintf(c->finding, sizeof c->finding,
			 "%s of the offered rate achieved, but no request waited for a busy connection "
			 "and pacer was on time: see the errors, timeouts and requests left at the "
			 "end%s",
			 pct(p, sizeof p, c->value), tgt);
	}
	c->fired = v->blame == GENCHECK_BLAME_GENERATOR;
	snprintf(c->advice, sizeof c->advice, "%s",
		 c->fired ? "the generator could not send at the offered rate: add --threads, keep "
			    "pacer off the target's cores (taskset), or run it on another machine"
			  : "");
}

/* busiest_thread_cpu: a saturated thread, when it cost something. */
static void check_thread(const struct run_result *r, struct gen_verdict *v)
{
	struct gencheck *c = &v->c[1];
	c->name = "busiest_thread_cpu";
	c->unit = "pct";
	c->threshold = GENCHECK_THREAD_PCT;
	c->material_pct = GENCHECK_MATERIAL_PCT;
	c->evaluated = r->threads > 0;
	if (!c->evaluated)
		return;
	c->value = r->gen_busiest_thread_pct;
	bool busy = c->value > c->threshold;
	char p[32], q[32];
	if (!r->open_loop) {
		c->fired = busy;
		snprintf(c->finding, sizeof c->finding,
			 "the busiest thread used %s of one core%s", pct(p, sizeof p, c->value),
			 busy ? ": in closed loop the rate may be pacer's" : "");
	} else {
		c->impact_pct = v->c[0].impact_pct;
		bool lag_material = c->impact_pct > GENCHECK_MATERIAL_PCT;
		bool rate_gen = v->blame == GENCHECK_BLAME_GENERATOR;
		c->fired = busy && (lag_material || rate_gen);
		char moved[96] = "";
		if (!isnan(c->impact_pct))
			snprintf(moved, sizeof moved, "; its lateness could have moved latency p99 by %s",
				 pct(q, sizeof q, c->impact_pct));
		snprintf(c->finding, sizeof c->finding,
			 "the busiest thread used %s of one core (waiting spins count)%s%s",
			 pct(p, sizeof p, c->value), moved,
			 !busy ? ""
			 : c->fired ? (rate_gen ? ", and the rate fell short by its fault"
					       : ", which is material")
				    : ", which is immaterial, and the rate did not fall short by its "
				      "fault: it kept up");
	}
	snprintf(c->advice, sizeof c->advice, "%s",
		 c->fired ? "a generator thread was busy nearly all the time: add --threads (up to "
			    "the cores the target does not need) or run pacer on another machine"
			  : "");
}

void gencheck_eval(const struct run_result *r, uint64_t lag_threshold_ns, double target_cores,
		   const struct slo *slo, struct gen_verdict *v)
{
	memset(v, 0, sizeof *v);
	for (int i = 0; i < GENCHECK_N; i++)
		v->c[i].impact_pct = NAN;
	v->latency_p99_us = NAN;
	v->cap_wait_s = v->cap_wait_idle_s = v->cpu_wait_s = NAN;
	if (!lag_threshold_ns)
		lag_threshold_ns = GENCHECK_LAG_NS;
	check_lag(r, lag_threshold_ns, slo, v);
	check_rate(r, target_cores, v);
	check_thread(r, v);
	for (int i = 0; i < GENCHECK_N; i++)
		v->flagged |= v->c[i].fired;
}
