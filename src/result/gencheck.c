#include "result/gencheck.h"

#include <stdio.h>
#include <string.h>

void gencheck_eval(const struct run_result *r, uint64_t lag_threshold_ns, double target_cores,
		   struct gen_verdict *v)
{
	memset(v, 0, sizeof *v);
	if (!lag_threshold_ns)
		lag_threshold_ns = GENCHECK_LAG_NS;
	const struct phase_stats *m = &r->measure;

	struct gencheck *c = &v->c[0];
	c->name = "loop_lag_p99";
	c->unit = "us";
	c->threshold = (double)lag_threshold_ns / 1e3;
	const struct hist *lag = &m->timing[TIM_LOOP_LAG];
	if (r->open_loop && lag->counts && lag->total) {
		c->evaluated = true;
		c->value = (double)hist_percentile(lag, 99.0) / 1e3;
		c->fired = c->value > c->threshold;
		snprintf(c->advice, sizeof c->advice, "%s",
			 c->fired ? "the generator picked up due requests late: add --threads, lower "
				    "--connections, keep pacer off the target's cores (taskset), or run "
				    "it on another machine"
				  : "");
	} else {
		snprintf(c->advice, sizeof c->advice, "%s",
			 r->open_loop ? "no request was due in the measured phase"
				      : "closed loop: requests are not scheduled, so there is no lateness");
	}

	c = &v->c[1];
	c->name = "busiest_thread_cpu";
	c->unit = "pct";
	c->threshold = GENCHECK_THREAD_PCT;
	c->evaluated = r->threads > 0;
	c->value = r->gen_busiest_thread_pct;
	c->fired = c->evaluated && c->value > c->threshold;
	snprintf(c->advice, sizeof c->advice, "%s",
		 c->fired ? "a generator thread was busy nearly all the time: add --threads (up to "
			    "the cores the target does not need) or run pacer on another machine"
			  : "");

	c = &v->c[2];
	c->name = "achieved_rate";
	c->unit = "pct";
	c->threshold = GENCHECK_ACHIEVED_PCT;
	double secs = (double)r->measure_ns / 1e9;
	if (!r->open_loop || r->offered_rate_per_s <= 0 || secs <= 0) {
		snprintf(c->advice, sizeof c->advice, "closed loop: no offered rate to compare with");
	} else if (!r->target.known || target_cores <= 0) {
		snprintf(c->advice, sizeof c->advice,
			 "the target's CPU was not measured (--target-pid or --target-cgroup), so a "
			 "shortfall cannot be told apart from a saturated target");
	} else {
		c->evaluated = true;
		c->value = 100.0 * ((double)m->completed / secs) / r->offered_rate_per_s;
		bool target_busy = r->target.cores_busy >= GENCHECK_TARGET_BUSY * target_cores;
		c->fired = !r->interrupted && c->value < c->threshold && !target_busy;
		snprintf(c->advice, sizeof c->advice, "%s",
			 c->fired ? "the offered rate was not reached while the target had CPU to spare: "
				    "pacer may have run short of connections (raise --connections) or of "
				    "CPU (add --threads); or the target waits on something other than CPU"
				  : "");
	}
	for (int i = 0; i < GENCHECK_N; i++)
		v->flagged |= v->c[i].fired;
}
