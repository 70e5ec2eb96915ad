/* pacer — the report's "Cost and resources" section (see content_int.h):
 * cost per million requests by profile, and the target's and generator's
 * CPU and memory. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "doc/keys.h"
#include "report/content_int.h"
#include "util/units.h"

/* US dollars as every report writes them (units_fmt_cost: "$0.00055",
 * "$12.50"); "–" when missing. */
static const char *usd(struct content_ctx *c, char *out, size_t cap, double v)
{
	(void)c;
	if (!isfinite(v))
		snprintf(out, cap, "–");
	else
		units_fmt_cost(out, cap, v, "$");
	return out;
}

static void cost_table(struct content_ctx *c, const json_t *cost)
{
	const json_t *profiles = rr_arr(cost, KEY_PROFILES);
	if (!profiles || !json_array_size(profiles))
		return;
	const char *hdr[3] = {"Profile", "USD per core-hour", "USD per million requests"};
	page_table(c->d, 3, 0x6, hdr);
	size_t i;
	const json_t *p;
	json_array_foreach(profiles, i, p) {
		char a[64], b[64];
		const char *row[3] = {
			rr_str(p, KEY_NAME),
			usd(c, a, sizeof a, rr_num_or(p, KEY_USD_PER_CORE_HOUR, NAN)),
			usd(c, b, sizeof b, rr_num_or(p, KEY_USD_PER_MILLION_REQUESTS, NAN))};
		page_row(c->d, row);
	}
	const char *basis = rr_str(cost, KEY_BASIS), *caveat = rr_str(cost, KEY_CAVEAT);
	double ms;
	char per[96] = "";
	if (rr_num(cost, KEY_CPU_MS_PER_REQUEST, &ms))
		snprintf(per, sizeof per, " (%s ms of CPU per request)", fmt_num(&c->f, ms, 4));
	size_t cl = caveat ? strlen(caveat) : 0;
	if (basis || caveat)
		page_para(
			c->d, false, "Basis: %s%s.%s%s%s%s", basis ? basis : "not recorded", per,
			caveat ? " " : "", caveat ? caveat : "",
			cl && caveat[cl - 1] != '.' ? "." : "",
			rr_true(cost, KEY_DEFAULT_PRICES)
				? " The prices are pacer's defaults, not given with --cost-profile."
				: "");
}

/* target_resources / generator_resources: in the phase, else beside it
 * (top level of a run, or the ramp step). */
static const json_t *res_obj(const json_t *phase, const json_t *owner, const char *key)
{
	const json_t *o = rr_obj(phase, key);
	return o ? o : rr_obj(owner, key);
}

static void resources_rows(struct content_ctx *c, const json_t *ph, const json_t *owner)
{
	const json_t *tr = res_obj(ph, owner, KEY_TARGET_RESOURCES);
	char b[256];
	if (tr) {
		kv(c, "Target measured from", rr_str(tr, KEY_SOURCE));
		double u, sy;
		if (rr_num(tr, KEY_CPU_USER_S, &u) && rr_num(tr, KEY_CPU_SYS_S, &sy))
			snprintf(b, sizeof b, "%s (user %s, system %s)",
				 fmt_s(&c->f, rr_num_or(tr, KEY_CPU_S, NAN)), fmt_s(&c->f, u),
				 fmt_s(&c->f, sy));
		else
			snprintf(b, sizeof b, "%s", fmt_s(&c->f, rr_num_or(tr, KEY_CPU_S, NAN)));
		kv(c, "Target CPU (measured phase)", b);
		kv(c, "Target cores busy (average)",
		   fmt_num(&c->f, rr_num_or(tr, KEY_CORES_BUSY, NAN), 2));
		snprintf(b, sizeof b, "%s ms",
			 fmt_num(&c->f, rr_num_or(tr, KEY_CPU_MS_PER_REQUEST, NAN), 4));
		kv(c, "Target CPU per request", b);
		double v;
		if (rr_num(tr, KEY_CPU_WAIT_S, &v)) {
			snprintf(b, sizeof b, "%s (%s of the time its threads were ready to run)",
				 fmt_s(&c->f, v),
				 fmt_pct(&c->f, rr_num_or(tr, KEY_CPU_WAIT_PCT, NAN)));
			kv(c, "Target waits for a CPU", b);
		}
		if (rr_num(tr, KEY_CPU_PRESSURE_SOME_S, &v)) {
			snprintf(b, sizeof b, "%s with a task waiting for a CPU (%s of the phase)",
				 fmt_s(&c->f, v),
				 fmt_pct(&c->f, rr_num_or(tr, KEY_CPU_PRESSURE_SOME_PCT, NAN)));
			kv(c, "Target CPU pressure (cgroup)", b);
		}
		if (rr_get(tr, KEY_RSS_PEAK_BYTES)) {
			snprintf(b, sizeof b, "start %s, peak %s, end %s",
				 fmt_bytes(&c->f, rr_num_or(tr, KEY_RSS_START_BYTES, NAN)),
				 fmt_bytes(&c->f, rr_num_or(tr, KEY_RSS_PEAK_BYTES, NAN)),
				 fmt_bytes(&c->f, rr_num_or(tr, KEY_RSS_END_BYTES, NAN)));
			kv(c, "Target resident memory", b);
		}
		size_t i;
		const json_t *n;
		json_array_foreach(rr_arr(tr, KEY_NOTES), i, n)
			if (json_is_string(n))
				kv(c, "Note", json_string_value(n));
	}
	const json_t *gr = res_obj(ph, owner, KEY_GENERATOR_RESOURCES);
	if (gr) {
		kv(c, "Generator CPU (measured phase)",
		   fmt_s(&c->f, rr_num_or(gr, KEY_CPU_S, NAN)));
		snprintf(b, sizeof b, "%s µs", fmt_num(&c->f, rr_num_or(gr, "cpu_us_per_request", NAN), 1));
		kv(c, "Generator CPU per request", b);
		kv(c, "Busiest generator thread",
		   fmt_pct(&c->f, rr_num_or(gr, KEY_BUSIEST_THREAD_CPU_PCT, NAN)));
	}
}

/* A comparison: each variant's target CPU per request and peak memory,
 * median (min–max) over its repetitions, when every repetition measured
 * them (compare_metrics); no cost. */
static void compare_resources(struct content_ctx *c)
{
	const json_t *variants = rr_arr(c->root, KEY_VARIANTS);
	const json_t *s0 = rr_obj(json_array_get(variants, 0), KEY_SUMMARY);
	bool cpu = rr_num_or(s0, "target_cpu_ms_per_request.median", NAN) >= 0;
	bool rss = rr_num_or(s0, "target_rss_peak_mib.median", NAN) >= 0;
	if (!cpu && !rss) {
		page_para(c->d, false, "A comparison records no cost or resource figures; run each "
				      "variant with pacer run or ramp to measure them.");
		return;
	}
	const char *hdr[3];
	size_t nc = 0;
	hdr[nc++] = "Variant";
	if (cpu)
		hdr[nc++] = "Target CPU per request";
	if (rss)
		hdr[nc++] = "Target peak memory";
	page_table(c->d, nc, ((1u << nc) - 1) & ~1u, hdr);
	size_t i;
	const json_t *v;
	json_array_foreach(variants, i, v) {
		const json_t *sum = rr_obj(v, KEY_SUMMARY);
		const json_t *tc = rr_obj(sum, KEY_TARGET_CPU_MS_PER_REQUEST);
		const json_t *tm = rr_obj(sum, KEY_TARGET_RSS_PEAK_MIB);
		char a[160], b[160];
		const char *row[3];
		size_t k = 0;
		row[k++] = rr_str(v, KEY_NAME) ? rr_str(v, KEY_NAME) : "?";
		if (cpu) {
			snprintf(a, sizeof a, "%s ms (%s–%s)",
				 fmt_num(&c->f, rr_num_or(tc, KEY_MEDIAN, NAN), 4),
				 fmt_num(&c->f, rr_num_or(tc, KEY_MIN, NAN), 4),
				 fmt_num(&c->f, rr_num_or(tc, KEY_MAX, NAN), 4));
			row[k++] = tc && rr_num(tc, KEY_MEDIAN, &(double){0}) ? a : "–";
		}
		if (rss) {
			const double mib = 1024.0 * 1024.0;
			snprintf(b, sizeof b, "%s (%s–%s)",
				 fmt_bytes(&c->f, rr_num_or(tm, KEY_MEDIAN, NAN) * mib),
				 fmt_bytes(&c->f, rr_num_or(tm, KEY_MIN, NAN) * mib),
				 fmt_bytes(&c->f, rr_num_or(tm, KEY_MAX, NAN) * mib));
			row[k++] = tm && rr_num(tm, KEY_MEDIAN, &(double){0}) ? b : "–";
		}
		page_row(c->d, row);
	}
	page_para(c->d, false,
		 "Median (min–max) over each variant's repetitions of the target's CPU time per "
		 "request and its peak resident memory, as the probe measured them; their ratios "
		 "are among the ratios above. A comparison records no cost figures.");
}

/* What this machine let pacer promise: the floor measured before the load
 * (generator.floor) and whether the workers ran at a real-time priority. */
static void floor_rows(struct content_ctx *c)
{
	const json_t *g = rr_obj(c->root, KEY_GENERATOR);
	const json_t *f = rr_obj(g, KEY_FLOOR);
	const json_t *rt = rr_obj(g, KEY_REALTIME);
	bool asked = rr_true(rt, KEY_REQUESTED);
	if (!f && !asked)
		return;
	page_heading(c->d, 3, "floor", "What this machine let pacer promise");
	const char *hdr[2] = {"Figure", "Value"};
	page_table(c->d, 2, 0, hdr); /* sentences: left-aligned, wrapped */
	char b[256];
	if (f) {
		const char *m = rr_str(f, KEY_METHOD);
		snprintf(b, sizeof b,
			 "p50 %s, p99 %s, max %s late (%s timed sleeps by %s, timer "
			 "slack %s ns%s)",
			 fmt_us(&c->f, rr_num_or(f, KEY_WAKE_P50_US, NAN)),
			 fmt_us(&c->f, rr_num_or(f, KEY_WAKE_P99_US, NAN)),
			 fmt_us(&c->f, rr_num_or(f, KEY_WAKE_MAX_US, NAN)),
			 fmt_int(&c->f, rr_num_or(f, KEY_SAMPLES, NAN)),
			 m && !strcmp(m, "sleep") ? "clock_nanosleep" : "the loop's epoll wait",
			 fmt_int(&c->f, rr_num_or(f, KEY_TIMER_SLACK_NS, NAN)),
			 rr_true(f, KEY_REALTIME) ? ", at a real-time priority" : "");
		kv(c, "Wake-up lateness before the load", b);
		const json_t *rtt = rr_obj(f, KEY_LOOPBACK_RTT);
		if (rtt) {
			snprintf(b, sizeof b, "p50 %s, p99 %s; %s µs of CPU each (both ends)",
				 fmt_us(&c->f, rr_num_or(rtt, KEY_P50_US, NAN)),
				 fmt_us(&c->f, rr_num_or(rtt, KEY_P99_US, NAN)),
				 fmt_num(&c->f, rr_num_or(rtt, KEY_CPU_US, NAN), 1));
			kv(c, "One loopback round trip", b);
		}
	}
	if (asked) {
		const char *why = rr_str(rt, KEY_REFUSED);
		snprintf(b, sizeof b, "%s",
			 rr_true(rt, KEY_GRANTED) ? "granted (SCHED_RR, priority 1)"
			 : why                    ? why
						  : "refused");
		if (!rr_true(rt, KEY_GRANTED) && why)
			snprintf(b, sizeof b, "refused (%s): normal priority", why);
		kv(c, "--realtime", b);
	}
	if (f)
		page_para(
			c->d, false,
			"A sleeping worker thread of pacer woke up to %s late at p99 on this machine "
			"before the load: a latency difference below that is not pacer's to promise. "
			"Responses read over TCP are timed by the kernel's receive stamps, so only the "
			"send side pays it (docs/selfcheck.md).",
			fmt_us(&c->f, rr_num_or(f, KEY_WAKE_P99_US, NAN)));
}

void content_cost(struct content_ctx *c)
{
	page_heading(c->d, 2, "cost", "Cost and resources");
	char b[256];
	if (c->r->kind == RESULT_KIND_RUN) {
		const json_t *m = rr_get(c->root, KEY_MEASURE);
		const json_t *cost = rr_obj(c->root, KEY_COST);
		if (cost)
			cost_table(c, cost);
		else
			page_para(c->d, false, "No cost profile was given (--cost-profile), so no cost per "
					      "million requests is reported.");
		const char *hdr[2] = {"Figure", "Value"};
		page_table(c->d, 2, 0x2, hdr);
		const json_t *t = rr_obj(c->root, KEY_TARGET);
		if (t) {
			snprintf(b, sizeof b, "%s over the whole run, warm-up included",
				 fmt_s(&c->f, rr_num_or(t, KEY_CPU_S, NAN)));
			kv(c, "Embedded target CPU", b);
			snprintf(b, sizeof b, "%s ms",
				 fmt_num(&c->f, rr_num_or(t, KEY_CPU_MS_PER_REQUEST, NAN), 4));
			kv(c, "Embedded target CPU per request", b);
		}
		resources_rows(c, m, c->root);
		const json_t *tc = rr_obj(c->root, KEY_TARGET_CORES);
		if (tc) {
			const char *bs = rr_str(tc, KEY_BASIS);
			double n = rr_num_or(tc, KEY_CORES, NAN);
			snprintf(b, sizeof b, "%s (%s)",
				 n == floor(n) ? fmt_int(&c->f, n) : fmt_num(&c->f, n, 2),
				 !bs                                 ? "basis not recorded"
				 : !strcmp(bs, "option")             ? "given with --target-cores"
				 : !strcmp(bs, "embedded_threads")   ? "the embedded target's threads"
				 : !strcmp(bs, "cgroup_cpu_max")     ? "the target cgroup's cpu.max quota"
				 : !strcmp(bs, "cgroup_cpuset")      ? "the target cgroup's cpuset"
				 : !strcmp(bs, "machine")            ? "this machine's cores: nothing said "
								       "what the target runs on"
								     : bs);
			kv(c, "Target cores assumed", b);
		}
		const json_t *g = rr_obj(c->root, KEY_GENERATOR);
		if (g) {
			double th = rr_num_or(g, KEY_THREADS, NAN);
			snprintf(b, sizeof b, "%s over the whole run (%s worker %s)",
				 fmt_s(&c->f, rr_num_or(g, KEY_CPU_S, NAN)), fmt_int(&c->f, th),
				 plural(th, "thread", "threads"));
			kv(c, "Generator CPU", b);
			snprintf(b, sizeof b, "%s µs",
				 fmt_num(&c->f, rr_num_or(g, KEY_CPU_US_PER_RESPONSE, NAN), 1));
			kv(c, "Generator CPU per response", b);
			double busy;
			if (rr_num(g, KEY_BUSIEST_THREAD_CPU_PCT, &busy))
				kv(c, "Busiest generator thread", fmt_pct(&c->f, busy));
			double steal, all;
			if (rr_num(g, KEY_STEAL_PCT, &steal)) {
				snprintf(b, sizeof b, "%s of the generator's CPUs", fmt_pct(&c->f, steal));
				if (rr_num(g, KEY_MACHINE_STEAL_PCT, &all) && all != steal)
					snprintf(b + strlen(b), sizeof b - strlen(b), " (the machine's: %s)",
						 fmt_pct(&c->f, all));
				kv(c, "Hypervisor steal time", b);
			}
		}
		bool target_known = t || res_obj(m, c->root, KEY_TARGET_RESOURCES);
		if (!target_known && !g)
			kv(c, "Resources", "not recorded");
		if (!target_known)
			page_para(c->d, false, "The target's own CPU and memory were not measured "
					      "(--target-pid or --target-cgroup measure them).");
	} else if (c->r->kind == RESULT_KIND_RAMP) {
		const json_t *steps = rr_arr(c->root, KEY_STEPS);
		const char *pnames[4];
		size_t np = 0;
		bool mem = false, wait = false;
		size_t i;
		const json_t *s;
		json_array_foreach(steps, i, s) {
			const json_t *tr = res_obj(rr_get(s, KEY_MEASURE), s, KEY_TARGET_RESOURCES);
			if (rr_get(tr, KEY_RSS_PEAK_BYTES))
				mem = true;
			double v;
			if (rr_num(tr, KEY_CPU_WAIT_PCT, &v) ||
			    rr_num(tr, KEY_CPU_PRESSURE_SOME_PCT, &v))
				wait = true;
			size_t k;
			const json_t *p;
			json_array_foreach(rr_arr(s, "cost.profiles"), k, p) {
				const char *name = rr_str(p, KEY_NAME);
				bool seen = false;
				for (size_t j = 0; j < np; j++)
					if (name && strcmp(pnames[j], name) == 0)
						seen = true;
				if (name && !seen && np < N(pnames))
					pnames[np++] = name;
			}
		}
		const char *hdr[PAGE_MAX_COLS];
		char ph[4][96];
		size_t nc = 0;
		hdr[nc++] = "Step";
		hdr[nc++] = "Offered/s";
		hdr[nc++] = "Generator CPU";
		hdr[nc++] = "Target CPU per request";
		if (mem)
			hdr[nc++] = "Target peak memory";
		if (wait)
			hdr[nc++] = "Target CPU wait";
		for (size_t k = 0; k < np; k++) {
			snprintf(ph[k], sizeof ph[k], "USD per million requests (%s)", pnames[k]);
			hdr[nc++] = ph[k];
		}
		page_table(c->d, nc, ((1u << nc) - 1) & ~1u, hdr);
		json_array_foreach(steps, i, s) {
			const json_t *tr = res_obj(rr_get(s, KEY_MEASURE), s, KEY_TARGET_RESOURCES);
			const char *row[PAGE_MAX_COLS];
			char money[4][64];
			size_t k = 0;
			char label[32], tcpu[64], cw[64];
			report_step_label(c->root, (long)i, label, sizeof label);
			row[k++] = label;
			row[k++] = fmt_rate(&c->f, rr_num_or(s, KEY_OFFERED_PER_S, NAN));
			double gc = rr_num_or(s, KEY_GENERATOR_CPU_S,
					      rr_num_or(res_obj(rr_get(s, KEY_MEASURE), s,
								KEY_GENERATOR_RESOURCES),
							KEY_CPU_S, NAN));
			row[k++] = fmt_s(&c->f, gc);
			double tc = rr_num_or(tr, KEY_CPU_MS_PER_REQUEST,
					      rr_num_or(s, KEY_TARGET_CPU_MS_PER_REQUEST, NAN));
			snprintf(tcpu, sizeof tcpu, "%s ms", fmt_num(&c->f, tc, 4));
			row[k++] = isfinite(tc) ? tcpu : "–";
			if (mem)
				row[k++] = fmt_bytes(&c->f, rr_num_or(tr, KEY_RSS_PEAK_BYTES, NAN));
			if (wait) {
				/* the threads' share of their runnable time, or a
				 * cgroup's share of the phase with a task waiting */
				double v = rr_num_or(tr, KEY_CPU_WAIT_PCT, NAN);
				bool psi = !isfinite(v);
				if (psi)
					v = rr_num_or(tr, KEY_CPU_PRESSURE_SOME_PCT, NAN);
				snprintf(cw, sizeof cw, "%s%s", fmt_pct(&c->f, v),
					 psi && isfinite(v) ? " of the phase" : "");
				row[k++] = cw;
			}
			for (size_t p = 0; p < np; p++) {
				double v = NAN;
				size_t j;
				const json_t *pr;
				json_array_foreach(rr_arr(s, "cost.profiles"), j, pr) {
					const char *name = rr_str(pr, KEY_NAME);
					if (name && strcmp(name, pnames[p]) == 0)
						v = rr_num_or(pr, KEY_USD_PER_MILLION_REQUESTS,
							      NAN);
				}
				row[k++] = usd(c, money[p], sizeof money[p], v);
			}
			page_row(c->d, row);
		}
		long k = report_focus_step(c->root);
		const json_t *fs = step_at(c, k);
		char fl[32];
		if (fs && rr_obj(fs, KEY_COST)) {
			page_para(c->d, false, "Cost at step %s:", report_step_label(c->root, k, fl, sizeof fl));
			cost_table(c, rr_obj(fs, KEY_COST));
		} else if (!np) {
			page_para(c->d, false, "No cost profile was given (--cost-profile), so no cost per "
					      "million requests is reported.");
		}
		if (fs && (res_obj(rr_get(fs, KEY_MEASURE), fs, KEY_TARGET_RESOURCES) ||
			   res_obj(rr_get(fs, KEY_MEASURE), fs, KEY_GENERATOR_RESOURCES))) {
			const char *h2[2] = {"Figure", "Value"};
			page_heading(c->d, 3, "focus-resources", "Resources at step %s",
				    report_step_label(c->root, k, fl, sizeof fl));
			page_table(c->d, 2, 0x2, h2);
			resources_rows(c, rr_get(fs, KEY_MEASURE), fs);
		}
	} else {
		compare_resources(c);
	}
	floor_rows(c);
}
