/* pacer — what to look at next: one sentence for the terminal, after a run's,
 * ramp's or comparison's caveats (PAGE_TERMINAL: the report itself has the charts and
 * the sections it points to). The first of these that holds: nothing was
 * answered; pacer's own lateness may have set the figures (its advice);
 * requests failed; a ramp whose steps all passed or all failed; a tail
 * resting on few responses; else where the charts are. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "report/content_int.h"
#include "stats/summary.h"

/* The advice of the first generator check that fired in gl
 * (generator_limited), or NULL. */
static const char *fired_advice(const json_t *gl)
{
	if (!rr_true(gl, "flagged"))
		return NULL;
	size_t i;
	const json_t *ch;
	json_array_foreach(rr_arr(gl, "checks"), i, ch) {
		const char *a = rr_str(ch, "advice");
		if (rr_true(ch, "fired") && a && *a)
			return a;
	}
	return NULL;
}

/* The advice itself when it is short, else where it is: the screen keeps
 * its lines for the caveats. */
static const char *brief(const char *advice)
{
	return advice && strlen(advice) < 90 ? advice
					     : "the full report has the finding and what to do";
}

static void next_run(struct content_ctx *c, char *out, size_t cap)
{
	struct phase_fig m;
	report_phase_fig(rr_get(c->root, KEY_MEASURE), &m);
	const char *advice = fired_advice(rr_obj(c->root, KEY_GENERATOR_LIMITED));
	if (!(m.completed > 0))
		snprintf(out, cap,
			 "nothing was answered: the full report's conditions and warnings "
			 "say what failed.");
	else if (advice)
		snprintf(out, cap, "pacer's own lateness may have set these figures: %s.",
			 brief(advice));
	else if (m.errors > 0)
		snprintf(
			out, cap,
			"%s %s did not succeed: the full report's responses by status and its status "
			"chart say which and when.",
			fmt_int(&c->f, m.errors), plural(m.errors, "request", "requests"));
	else if (m.completed < 10000)
		snprintf(
			out, cap,
			"a longer run (--duration) for a steadier tail: this p99 rests on the slowest "
			"%s of %s responses.",
			fmt_int(&c->f, ceil(m.completed / 100)), fmt_int(&c->f, m.completed));
	else
		snprintf(out, cap,
			 "the full report charts latency and responses per second and the "
			 "latency distribution.");
}

static void next_ramp(struct content_ctx *c, char *out, size_t cap)
{
	const json_t *steps = rr_arr(c->root, KEY_STEPS);
	size_t n = json_array_size(steps), pass = 0, fail = 0, i;
	const json_t *s, *limited = NULL;
	json_array_foreach(steps, i, s) {
		if (rr_true(s, "verdict.pass"))
			pass++;
		else if (rr_get(s, "verdict.pass") && !rr_true(s, "verdict.inconclusive"))
			fail++;
		if (!limited && fired_advice(rr_obj(s, KEY_GENERATOR_LIMITED)))
			limited = s;
	}
	const char *slo = rr_str(c->plan, KEY_SLO);
	double hi = 0;
	json_array_foreach(steps, i, s)
		hi = fmax(hi, rr_num_or(s, KEY_OFFERED_PER_S, 0));
	if (n == 0)
		snprintf(out, cap, "no step was measured: the full report's conditions say why.");
	else if (limited && pass + fail < n)
		snprintf(out, cap, "pacer could not judge every step on this machine: %s.",
			 brief(fired_advice(rr_obj(limited, KEY_GENERATOR_LIMITED))));
	else if (slo && pass == n)
		snprintf(out, cap,
			 "no step failed, so the capacity is above %s requests/s: add higher steps "
			 "(--steps) to find where the SLO breaks.",
			 fmt_rate(&c->f, hi));
	else if (slo && pass == 0)
		snprintf(out, cap,
			 "no step passed: start lower (--steps), or read the full "
			 "report's first step for what failed.");
	else if (limited)
		snprintf(out, cap, "pacer's own lateness may have moved some steps' figures: %s.",
			 brief(fired_advice(rr_obj(limited, KEY_GENERATOR_LIMITED))));
	else
		snprintf(out, cap,
			 "the full report charts latency against load, and the highest "
			 "passing step's latency per second and distribution.");
}

static void next_compare(struct content_ctx *c, char *out, size_t cap)
{
	const json_t *variants = rr_arr(c->root, KEY_VARIANTS);
	bool any = false, few = false;
	size_t limited = 0, i;
	const json_t *v;
	json_array_foreach(variants, i, v) {
		double x;
		if (rr_num(v, "summary." KEY_ACHIEVED_PER_S ".median", &x) && x > 0)
			any = true;
		if (rr_num(v, "summary." KEY_CAPACITY_PER_S ".median", &x) && x > 0)
			any = true;
		if (rr_num_or(v, "generator_limited_repetitions", 0) > 0)
			limited++;
	}
	json_array_foreach(rr_arr(c->root, KEY_RATIOS), i, v) {
		const char *verdict = rr_str(v, KEY_VERDICT);
		few = few || (verdict && !strcmp(verdict, "not enough repetitions"));
	}
	if (!any)
		snprintf(out, cap,
			 "no variant was answered: the full report's conditions and warnings say "
			 "what failed.");
	else if (few)
		snprintf(out, cap,
			 "--repeat %d or more for a verdict (%u per variant now, too few).",
			 SUMMARY_MIN_N, c->repeat);
	else if (limited)
		snprintf(out, cap,
			 "pacer's own lateness may have moved %zu %s figures: add --threads or run "
			 "pacer on another machine.",
			 limited, plural(limited, "variant's", "variants'"));
	else
		snprintf(out, cap,
			 "the full report overlays the variants' latency spectra, distributions "
			 "and responses per second.");
}

void content_next(struct content_ctx *c)
{
	char out[700];
	if (c->r->kind == RESULT_KIND_RUN)
		next_run(c, out, sizeof out);
	else if (c->r->kind == RESULT_KIND_RAMP)
		next_ramp(c, out, sizeof out);
	else
		next_compare(c, out, sizeof out);
	page_audience(c->d, PAGE_TERMINAL);
	page_heading(c->d, 2, "next", "What to look at next");
	page_para(c->d, false, "Next: %s", out);
	page_audience(c->d, PAGE_ALL);
}
