/* pacer — the report's content for a ramp (see content_int.h): the summary
 * paragraph (the highest step within the SLO and the next one tried) and the
 * results (steps, verdicts, knee, warm-ups, the focus step's tables). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "doc/keys.h"
#include "report/content_int.h"
#include "doc/doc.h"
#include "result/ramp.h"

/* The target's resources a ramp step measured (the step's, or in older
 * results its measured phase's), or NULL. */
static const json_t *step_target_res(const json_t *s)
{
	const json_t *tr = rr_obj(s, KEY_TARGET_RESOURCES);
	return tr ? tr : rr_obj(rr_obj(s, KEY_MEASURE), KEY_TARGET_RESOURCES);
}

/* The steps that decide: measured once more are not (their retry is), and
 * an inconclusive one neither passes nor fails. */
static bool step_retried(const json_t *s)
{
	return rr_true(s, KEY_RETRIED);
}
static bool step_fails(const json_t *s)
{
	return !step_retried(s) && rr_get(s, "verdict.pass") && !rr_true(s, "verdict.pass") &&
	       !rr_true(s, "verdict.inconclusive");
}
static bool step_open(const json_t *s)
{
	return !step_retried(s) && rr_true(s, "verdict.inconclusive");
}

/* The lowest step above `off` that decides against it: a conclusive failure
 * (fail) or an inconclusive one (open); NULL when there is none. */
static const json_t *next_above(const json_t *steps, double off, bool open, double *rate)
{
	const json_t *best = NULL, *s;
	size_t i;
	*rate = INFINITY;
	json_array_foreach(steps, i, s) {
		double o;
		if ((open ? step_open(s) : step_fails(s)) && rr_num(s, KEY_OFFERED_PER_S, &o) &&
		    o > off && o < *rate) {
			best = s;
			*rate = o;
		}
	}
	return best;
}

/* The step that decides whether the capacity is CPU-bound (as
 * ramp_deciding_step decides it for the JSON): the lowest step above the
 * highest passing one that failed on the target, else (none, or a lower
 * bound) the highest passing step; -1 when no step passed. */
static long deciding_step(struct content_ctx *c, const json_t *hp)
{
	long k = report_focus_step(c->root);
	double top;
	if (!hp || !rr_num(hp, KEY_OFFERED_PER_S, &top))
		return -1;
	const char *bound = rr_str(hp, KEY_BOUND);
	if (bound && !strcmp(bound, "lower"))
		return k; /* the step above stayed inconclusive: nothing of the target */
	double best = INFINITY;
	size_t i;
	const json_t *s;
	json_array_foreach(rr_arr(c->root, KEY_STEPS), i, s) {
		double o;
		if (step_fails(s) && !rr_true(s, KEY_INTERRUPTED) &&
		    rr_num(s, KEY_OFFERED_PER_S, &o) && o > top && o < best) {
			best = o;
			k = (long)i;
		}
	}
	return k;
}

/* Whether the target's CPU was its limit (docs/ramp.md "Per core"): the
 * result's highest_passing.cpu_limited, else (older results) its cores
 * busy at the deciding step against the cores it could use; 1 yes, 0 no,
 * -1 not known. *busy and *avail: what was measured (NAN when not). */
static int cpu_limited(struct content_ctx *c, const json_t *hp, double *busy, double *avail)
{
	*avail = content_target_cores(c);
	*busy = rr_num_or(step_target_res(step_at(c, deciding_step(c, hp))), KEY_CORES_BUSY, NAN);
	const json_t *flag = rr_get(hp, KEY_CPU_LIMITED);
	if (flag)
		return json_is_boolean(flag) ? json_is_true(flag) : -1;
	if (!isfinite(*busy) || !isfinite(*avail))
		return -1;
	return ramp_cpu_limited(*busy, *avail);
}

/* ", about 5,000 per core over 1 core (the embedded target's threads)"
 * from highest_passing; "" without a per-core figure, and when the
 * target's CPU was not its limit or that is not known (cpu_limited): a
 * rate limiter's capacity over the little CPU it used is no capacity per
 * core. Older results have no cores_basis: the count is then given
 * without one. */
static void per_core_phrase(struct content_ctx *c, const json_t *hp, char *out, size_t cap)
{
	double pc, cores, busy, avail;
	out[0] = '\0';
	if (!rr_num(hp, KEY_PER_CORE_PER_S, &pc) || !rr_num(hp, KEY_CORES, &cores) ||
	    cpu_limited(c, hp, &busy, &avail) != 1)
		return;
	const char *b = rr_str(hp, KEY_CORES_BASIS);
	if (b && !strcmp(b, "measured_busy")) {
		/* what the target used, not what it had: CPU efficiency at that load */
		snprintf(out, cap, ", about %s per busy core (the target kept %s cores busy, as "
			 "measured)", fmt_rate(&c->f, round(pc)), fmt_num(&c->f, cores, 2));
		return;
	}
	const char *words = !b                                 ? NULL
			    : !strcmp(b, "option")             ? "given with --target-cores"
			    : !strcmp(b, "embedded_threads")   ? "the embedded target's threads"
			    : !strcmp(b, "cgroup_cpu_max")     ? "the target cgroup's cpu.max quota"
			    : !strcmp(b, "cgroup_cpuset")      ? "the target cgroup's cpuset"
							       : b;
	snprintf(out, cap, ", about %s per core over %s %s%s%s%s", fmt_rate(&c->f, round(pc)),
		 cores == floor(cores) ? fmt_int(&c->f, cores) : fmt_num(&c->f, cores, 2),
		 cores == 1 ? "core" : "cores", words ? " (" : "", words ? words : "",
		 words ? ")" : "");
}

/* " At step 5 the target was starved of CPU by other work on its machine
 * (...): this is the capacity of the target on a busy machine, not on an
 * idle one." when the waits for a CPU of the first of the steps at[n] whose
 * waits say so (content_cpu_wait): the step that decides the capacity (the
 * failing one above, else the highest passing) and the highest passing
 * one, or the lowest step when none passed (then "these are the figures of
 * the target ..."); "" otherwise. */
static void starved_phrase(struct content_ctx *c, const long *at, size_t n, bool capacity,
			   char *out, size_t cap)
{
	out[0] = '\0';
	for (size_t i = 0; i < n; i++) {
		const json_t *s = step_at(c, at[i]);
		struct content_wait w;
		if (!s)
			continue;
		content_cpu_wait(c, step_target_res(s),
				 rr_num_or(rr_get(s, KEY_MEASURE), KEY_DURATION_S, NAN), &w);
		if (w.kind != CW_OTHERS)
			continue;
		char sl[32];
		snprintf(out, cap,
			 " At step %s the target was starved of CPU by other work on its machine "
			 "(%s%s%s): %s of the target on a busy machine, not on an idle one.",
			 report_step_label(c->root, at[i], sl, sizeof sl), w.brief,
			 w.busy[0] ? ", while " : "", w.busy,
			 capacity ? "this is the capacity" : "these are the figures");
		return;
	}
}

void content_summary_ramp(struct content_ctx *c)
{
	const json_t *steps = rr_arr(c->root, KEY_STEPS);
	size_t n = json_array_size(steps);
	const char *slo = rr_str(c->plan, KEY_SLO);
	char mach[256], wh[200];
	double lo = INFINITY, hi = 0;
	size_t i;
	const json_t *s;
	json_array_foreach(steps, i, s) {
		double off;
		if (rr_num(s, KEY_OFFERED_PER_S, &off)) {
			lo = fmin(lo, off);
			hi = fmax(hi, off);
		}
	}
	char range[128];
	if (n == 0)
		snprintf(range, sizeof range, "no steps");
	else if (lo == hi)
		snprintf(range, sizeof range, "%zu %s at %s requests/s", n, plural((double)n, "step", "steps"),
			 fmt_rate(&c->f, lo));
	else
		snprintf(range, sizeof range, "%zu steps from %s to %s requests/s", n,
			 fmt_rate(&c->f, lo), fmt_rate(&c->f, hi));
	double dur = rr_num_or(c->plan, KEY_STEP_DURATION_S, NAN);
	char lead[700];
	snprintf(lead, sizeof lead, "In an open-loop ramp of %s (%s measured each) %s on %s, ", range,
		 fmt_s(&c->f, dur), content_where(c, wh, sizeof wh),
		 content_machine(c, mach, sizeof mach));

	const json_t *hp = rr_obj(c->root, KEY_HIGHEST_PASSING);
	long k = hp ? report_focus_step(c->root) : -1, lowest = -1;
	char body[1200] = "";
	if (k >= 0) {
		const json_t *st = step_at(c, k);
		struct phase_fig m;
		report_phase_fig(rr_get(st, KEY_MEASURE), &m);
		double off =
			rr_num_or(hp, KEY_OFFERED_PER_S, rr_num_or(st, KEY_OFFERED_PER_S, NAN));
		double ach =
			rr_num_or(hp, KEY_ACHIEVED_PER_S, rr_num_or(st, KEY_ACHIEVED_PER_S, NAN));
		double errp = rr_num_or(st, KEY_ERROR_PCT, m.error_pct);
		char per_core[240];
		per_core_phrase(c, hp, per_core, sizeof per_core);
		if (slo)
			snprintf(body, sizeof body,
				 "the highest step within the SLO %s reached %s requests/s (%s "
				 "achieved)%s; there p50 was %s and p99 %s with a %s error rate.",
				 slo, fmt_rate(&c->f, off), fmt_rate(&c->f, ach), per_core,
				 fmt_us(&c->f, m.p50), fmt_us(&c->f, m.p99), fmt_pct(&c->f, errp));
		else
			snprintf(body, sizeof body,
				 "with no SLO every step passes; the highest step reached %s requests/s "
				 "(%s achieved)%s, with p50 %s and p99 %s and a %s error rate.",
				 fmt_rate(&c->f, off), fmt_rate(&c->f, ach), per_core,
				 fmt_us(&c->f, m.p50), fmt_us(&c->f, m.p99), fmt_pct(&c->f, errp));
		/* the lowest failing step above it, or the inconclusive one */
		double next_off, open_off;
		const json_t *next = next_above(steps, off, false, &next_off);
		const json_t *open = next_above(steps, off, true, &open_off);
		const char *bound = rr_str(hp, KEY_BOUND);
		size_t bl = strlen(body);
		if (open && (!next || open_off < next_off) && bound && !strcmp(bound, "lower")) {
			snprintf(body + bl, sizeof body - bl,
				 " So the capacity is at least %s requests/s: pacer could not offer %s "
				 "requests/s on time on this machine (the step stayed inconclusive: %s).",
				 fmt_rate(&c->f, off), fmt_rate(&c->f, open_off),
				 rr_str(open, "verdict.why") ? rr_str(open, "verdict.why") : "?");
		} else if (next) {
			const char *reason = rr_str(next, "verdict.reason");
			snprintf(body + bl, sizeof body - bl,
				 " The next step tried, %s requests/s, %s%s%s.",
				 fmt_rate(&c->f, next_off), reason ? "did not: " : "failed",
				 reason ? reason : "",
				 rr_true(next, KEY_INTERRUPTED) ? " (interrupted)" : "");
		} else if (slo) {
			snprintf(body + bl, sizeof body - bl,
				 " No higher step failed: the capacity under this SLO may be higher.");
		}
	} else if (n) {
		/* no step passed */
		const json_t *first = NULL;
		double fo = INFINITY;
		json_array_foreach(steps, i, s) {
			double o;
			if (!step_retried(s) && rr_num(s, KEY_OFFERED_PER_S, &o) && o < fo) {
				first = s;
				fo = o;
				lowest = (long)i;
			}
		}
		const char *reason = rr_str(first, "verdict.reason");
		if (step_open(first))
			snprintf(body, sizeof body,
				 "no step could be judged: even the lowest step, %s requests/s, stayed "
				 "inconclusive (%s): pacer could not offer it on time on this machine, so "
				 "nothing is known of the target's capacity.",
				 fmt_rate(&c->f, fo),
				 rr_str(first, "verdict.why") ? rr_str(first, "verdict.why") : "?");
		else
			snprintf(body, sizeof body,
				 "no step met the SLO %s: even the lowest step, %s requests/s, failed%s%s.",
				 slo ? slo : "(none recorded)", fmt_rate(&c->f, fo), reason ? ": " : "",
				 reason ? reason : "");
	} else {
		snprintf(body, sizeof body, "no step was measured.");
	}
	char tail[1000] = "";
	long at[2] = {k >= 0 ? deciding_step(c, hp) : lowest, k};
	starved_phrase(c, at, k >= 0 ? 2 : 1, k >= 0, tail, sizeof tail);
	double knee;
	if (rr_num(c->root, KEY_KNEE_PER_S, &knee))
		snprintf(
			tail + strlen(tail), sizeof tail - strlen(tail),
			" Median latency first exceeded twice its low-load value at %s requests/s.",
			fmt_rate(&c->f, knee));
	if (c->interrupted)
		snprintf(tail + strlen(tail), sizeof tail - strlen(tail),
			 " The ramp was interrupted before its planned end.");
	page_para(c->d, true, "%s%s%s", lead, body, tail);
	/* the figures that matter, at a glance; the terminal has the steps
	 * table under the headline */
	const char *kl[7], *kv_[7];
	size_t nk = 0;
	char cap[64] = "none", passed[64];
	struct phase_fig m;
	report_phase_fig(k >= 0 ? rr_get(step_at(c, k), KEY_MEASURE) : NULL, &m);
	if (k >= 0) {
		const char *bound = rr_str(hp, KEY_BOUND);
		snprintf(cap, sizeof cap, "%s%s", bound && !strcmp(bound, "lower") ? "≥ " : "",
			 fmt_rate(&c->f, rr_num_or(hp, KEY_OFFERED_PER_S, NAN)));
	}
	size_t npass = 0;
	json_array_foreach(steps, i, s)
		npass += rr_true(s, "verdict.pass");
	snprintf(passed, sizeof passed, "%zu of %zu", npass, n);
	kl[nk] = slo ? "Capacity/s" : "Highest step/s";
	kv_[nk++] = cap;
	kl[nk] = "Achieved/s";
	kv_[nk++] = k >= 0 ? fmt_rate(&c->f, rr_num_or(hp, KEY_ACHIEVED_PER_S, m.achieved)) : "–";
	kl[nk] = "p50 there";
	kv_[nk++] = k >= 0 ? fmt_us(&c->f, m.p50) : "–";
	kl[nk] = "p99 there";
	kv_[nk++] = k >= 0 ? fmt_us(&c->f, m.p99) : "–";
	kl[nk] = "Error rate there";
	kv_[nk++] = k >= 0 ? fmt_pct(&c->f, rr_num_or(step_at(c, k), KEY_ERROR_PCT, m.error_pct))
			   : "–";
	kl[nk] = slo ? "Steps within SLO" : "Steps";
	kv_[nk++] = passed;
	page_audience(c->d, PAGE_REPORT);
	page_key_figures(c->d, nk, kl, kv_);
	page_audience(c->d, PAGE_ALL);
}

/* What the steps table says of the target's CPU: its cores busy when a
 * probe measured them, else its CPU per request (older self-contained
 * results), else nothing. */
enum ramp_cpu_col { RCPU_NONE, RCPU_BUSY, RCPU_PER_REQ };

static enum ramp_cpu_col ramp_cpu_col(const json_t *steps)
{
	enum ramp_cpu_col col = RCPU_NONE;
	size_t i;
	const json_t *s;
	json_array_foreach(steps, i, s) {
		double v;
		if (rr_num(step_target_res(s), KEY_CORES_BUSY, &v))
			return RCPU_BUSY;
		if (rr_num(s, KEY_TARGET_CPU_MS_PER_REQUEST, &v))
			col = RCPU_PER_REQ;
	}
	return col;
}

static double step_outcome(const json_t *s, const char *name)
{
	const json_t *o = report_step_outcome(s, name);
	return o ? rr_num_or(o, KEY_RATE_PCT, NAN) : NAN;
}

/* A ramp's warm-up of each step and the connections of each phase. */
static void ramp_warmups(struct content_ctx *c, const json_t *steps)
{
	bool any = false;
	size_t i;
	const json_t *s;
	json_array_foreach(steps, i, s)
		any = any || rr_obj(s, KEY_WARMUP) ||
		      rr_num_or(s, "measure.connections.open_at_start", -1) >= 0;
	if (!any)
		return;
	page_heading(c->d, 3, "warmups", "Warm-up and connections of each step");
	const char *hdr[9] = {"Step",          "Warm-up",        "Warm-up responses",
			      "Warm-up errors", "Warm-up p99",    "Open at warm-up start",
			      "Opened in warm-up", "Open at measure start", "Opened in measure"};
	page_table(c->d, 9, 0x1fe, hdr);
	json_array_foreach(steps, i, s) {
		const json_t *w = rr_obj(s, KEY_WARMUP);
		char label[32];
		report_step_label(c->root, (long)i, label, sizeof label);
		const char *row[9] = {
			label,
			w ? fmt_s(&c->f, rr_num_or(w, KEY_DURATION_S, NAN)) : "none",
			w ? fmt_int(&c->f, rr_num_or(w, "requests.completed", NAN)) : "–",
			w ? fmt_int(&c->f, rr_num_or(w, KEY_ERRORS, NAN)) : "–",
			w ? fmt_us(&c->f, rr_num_or(w, KEY_P99_US, NAN)) : "–",
			w ? fmt_int(&c->f, rr_num_or(w, "connections.open_at_start", NAN)) : "–",
			w ? fmt_int(&c->f, rr_num_or(w, "connections.opened", NAN)) : "–",
			fmt_int(&c->f, rr_num_or(s, "measure.connections.open_at_start", NAN)),
			fmt_int(&c->f, rr_num_or(s, "measure.connections.opened", NAN)),
		};
		page_row(c->d, row);
	}
	page_para(c->d, false,
		 "Connections carry over from step to step; connections opened before a step's "
		 "first request count as opened in its first phase (the warm-up, when it has one).");
}

void content_results_ramp(struct content_ctx *c)
{
	const json_t *steps = rr_arr(c->root, KEY_STEPS);
	const char *onames[8];
	size_t no = report_outcome_names(steps, onames, N(onames));
	const char *slo = rr_str(c->plan, KEY_SLO);
	/* the terminal goes from the headline to the table: its header row
	 * says what it is */
	page_audience(c->d, PAGE_REPORT);
	page_heading(c->d, 3, "steps", "Steps");
	page_audience(c->d, PAGE_ALL);
	const char *hdr[PAGE_MAX_COLS];
	size_t nc = 0;
	hdr[nc++] = "Step";
	hdr[nc++] = "Offered/s";
	hdr[nc++] = "Achieved/s";
	hdr[nc++] = "p50";
	hdr[nc++] = "p99";
	char oh[8][80];
	for (size_t k = 0; k < no; k++) {
		snprintf(oh[k], sizeof oh[k], "%s rate", onames[k]);
		hdr[nc++] = oh[k];
	}
	hdr[nc++] = "Error rate";
	hdr[nc++] = "Drop rate";
	enum ramp_cpu_col cpu = ramp_cpu_col(steps);
	double avail = content_target_cores(c);
	if (cpu == RCPU_BUSY)
		hdr[nc++] = "Target cores busy";
	else if (cpu == RCPU_PER_REQ)
		hdr[nc++] = "Target CPU/request";
	hdr[nc++] = "Within SLO";
	uint32_t right = ((1u << (nc - 1)) - 1) & ~1u;
	/* the steps table and the verdict are the terminal's one screen; the
	 * drop rate and the target's CPU stay in the report there, to fit */
	page_screen(c->d, true);
	page_table(c->d, nc, right, hdr);
	page_table_wide(c->d, (1u << (nc - 2)) | (cpu != RCPU_NONE ? 1u << (nc - 3) : 0));
	size_t i;
	const json_t *s;
	bool reps = false;
	json_array_foreach(steps, i, s) {
		struct phase_fig m;
		report_phase_fig(rr_get(s, KEY_MEASURE), &m);
		const char *row[PAGE_MAX_COLS];
		size_t k = 0;
		char label[32], p50[96], p99[96], verdict[400];
		report_step_label(c->root, (long)i, label, sizeof label);
		row[k++] = label;
		row[k++] = fmt_rate(&c->f, rr_num_or(s, KEY_OFFERED_PER_S, m.offered));
		row[k++] = fmt_rate(&c->f, rr_num_or(s, KEY_ACHIEVED_PER_S, m.achieved));
		const json_t *rs = rr_obj(s, KEY_REPEAT_SUMMARY);
		if (rs && rr_len(s, KEY_REPETITIONS) > 1) {
			reps = true;
			row[k++] = content_med_range(c, p50, sizeof p50, rs, KEY_P50_US, true);
			row[k++] = content_med_range(c, p99, sizeof p99, rs, KEY_P99_US, true);
		} else {
			row[k++] = fmt_us(&c->f, m.p50);
			row[k++] = fmt_us(&c->f, m.p99);
		}
		for (size_t o = 0; o < no; o++)
			row[k++] = fmt_pct(&c->f, step_outcome(s, onames[o]));
		row[k++] = fmt_pct(&c->f, rr_num_or(s, KEY_ERROR_PCT, m.error_pct));
		row[k++] = fmt_pct(&c->f, rr_num_or(s, KEY_DROP_PCT, m.drop_pct));
		char busy[64] = "–";
		double v;
		if (cpu == RCPU_BUSY && rr_num(step_target_res(s), KEY_CORES_BUSY, &v))
			snprintf(busy, sizeof busy, "%s%s%s", fmt_num(&c->f, v, 2),
				 isfinite(avail) ? " of " : "",
				 isfinite(avail) ? fmt_num(&c->f, avail, avail == floor(avail) ? 0 : 2) : "");
		else if (cpu == RCPU_PER_REQ && rr_num(s, KEY_TARGET_CPU_MS_PER_REQUEST, &v))
			snprintf(busy, sizeof busy, "%s ms", fmt_num(&c->f, v, 3));
		if (cpu != RCPU_NONE)
			row[k++] = busy;
		bool pass = rr_true(s, "verdict.pass");
		const char *reason = rr_str(s, "verdict.reason");
		if (reason && strncmp(reason, "Fail ", 5) == 0)
			reason += 5;
		if (!rr_get(s, "verdict.pass"))
			snprintf(verdict, sizeof verdict, "not recorded");
		else if (rr_true(s, "verdict.inconclusive"))
			snprintf(verdict, sizeof verdict, "inconclusive%s: %s",
				 step_retried(s) ? ", measured again" : "",
				 rr_str(s, "verdict.why") ? rr_str(s, "verdict.why") : "?");
		else if (pass)
			snprintf(verdict, sizeof verdict, "yes%s", slo ? "" : " (no SLO)");
		else
			snprintf(verdict, sizeof verdict, "no: %s", reason ? reason : "failed");
		if (rr_true(s, KEY_INTERRUPTED))
			snprintf(verdict + strlen(verdict), sizeof verdict - strlen(verdict),
				 " (interrupted)");
		row[k++] = verdict;
		page_row(c->d, row);
	}
	if (reps)
		page_para(c->d, false,
			 "p50 and p99 are the median (min–max) over each step's repetitions; the verdict "
			 "judges the repetitions pooled.");
	const json_t *hp = rr_obj(c->root, KEY_HIGHEST_PASSING);
	if (hp) {
		char per_core[240], why[400] = "";
		per_core_phrase(c, hp, per_core, sizeof per_core);
		double busy, can;
		int lim = cpu_limited(c, hp, &busy, &can);
		bool has_pc = rr_num(hp, KEY_PER_CORE_PER_S, &(double){0});
		char dl[32];
		report_step_label(c->root, deciding_step(c, hp), dl, sizeof dl);
		if (has_pc && lim == 0 && isfinite(busy) && isfinite(can))
			snprintf(why, sizeof why,
				 " No per-core figure: the target's CPU was not its limit: at step %s it "
				 "kept %s cores busy of the %s it could use, under %.0f %%.",
				 dl, fmt_num(&c->f, busy, 2), fmt_num(&c->f, can, can == floor(can) ? 0 : 2),
				 RAMP_CPU_LIMIT_SHARE * 100);
		else if (has_pc && lim == 0)
			snprintf(why, sizeof why, " No per-core figure: the target's CPU was not its "
						  "limit.");
		else if (has_pc && lim < 0)
			snprintf(why, sizeof why,
				 " No per-core figure: the target's CPU at step %s was not measured "
				 "(--target-pid or --target-cgroup measures it), so whether it was the "
				 "limit is not known.",
				 dl);
		char hl[32];
		const char *bound = rr_str(hp, KEY_BOUND);
		/* the screen's headline says it: its lines go to the caveats */
		page_screen(c->d, false);
		page_para(c->d, false,
			  "Highest passing step: step %s, %s requests/s offered (%s achieved)%s%s.",
			  report_step_label(c->root, (long)rr_num_or(hp, KEY_STEP, 0) - 1, hl,
					    sizeof hl),
			  fmt_rate(&c->f, rr_num_or(hp, KEY_OFFERED_PER_S, NAN)),
			  fmt_rate(&c->f, rr_num_or(hp, KEY_ACHIEVED_PER_S, NAN)), per_core,
			  bound && !strcmp(bound, "lower")
				  ? ": a lower bound of the capacity, since a step above it stayed "
				    "inconclusive"
				  : "");
		page_screen(c->d, true);
		if (why[0]) {
			page_audience(c->d, PAGE_REPORT);
			page_para(c->d, false, "%s", why + 1);
			page_audience(c->d, PAGE_ALL);
		}
	} else if (json_array_size(steps)) {
		page_para(c->d, false, "No step passed%s%s.", slo ? " the SLO " : "", slo ? slo : "");
	}
	/* the knee, the warm-ups and the focus step are the report's: the
	 * terminal's summary fits a screen (its headline says the knee) */
	page_audience(c->d, PAGE_REPORT);
	double knee;
	if (rr_num(c->root, KEY_KNEE_PER_S, &knee))
		page_para(c->d, false,
			 "Knee: median latency first exceeded twice its low-load value (the first "
			 "step's) at %s requests/s.",
			 fmt_rate(&c->f, knee));
	else if (rr_get(c->root, KEY_KNEE_PER_S))
		page_para(c->d, false, "Knee: the median latency stayed within twice its low-load "
				      "value at every step.");
	page_audience(c->d, PAGE_ALL);
	double req;
	if (rr_num(c->plan, KEY_REQUIRE_PER_S, &req))
		page_para(c->d, false, "Required %s requests/s: %s.", fmt_rate(&c->f, req),
			  rr_true(c->root, KEY_REACHED_REQUIRE) ? "reached" : "NOT reached");
	page_screen(c->d, false);
	page_audience(c->d, PAGE_REPORT);
	ramp_warmups(c, steps);
	long k = report_focus_step(c->root);
	if (k >= 0) {
		char fl[32];
		page_heading(c->d, 3, "focus-step", "Latency at step %s (%s requests/s)",
			     report_step_label(c->root, k, fl, sizeof fl),
			     fmt_rate(&c->f, rr_num_or(step_at(c, k), KEY_OFFERED_PER_S, NAN)));
		content_latency_table(c, rr_get(step_at(c, k), KEY_MEASURE));
		content_outcomes_table(c, rr_get(step_at(c, k), KEY_MEASURE));
		content_by_name_table(c, rr_get(step_at(c, k), KEY_MEASURE), false);
	}
	page_audience(c->d, PAGE_ALL);
}
