/* pacer — the report's "What this number means / does not establish"
 * section (see content_int.h). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "doc/keys.h"
#include "report/content_int.h"

static void workload_phrase(struct content_ctx *c, char *out, size_t cap)
{
	const json_t *table = rr_obj(c->plan, KEY_TABLE);
	const char *url = rr_str(c->plan, KEY_URL) ? rr_str(c->plan, KEY_URL) : "?";
	if (content_wl_phrase(c, rr_obj(c->plan, KEY_WORKLOAD), c->plan, url, out, cap))
		return;
	if (c->r->kind == RESULT_KIND_COMPARE &&
	    rr_obj(json_array_get(rr_arr(c->root, KEY_VARIANTS), 0), KEY_WORKLOAD)) {
		size_t i, l = 0;
		const json_t *v;
		out[0] = '\0';
		json_array_foreach(rr_arr(c->root, KEY_VARIANTS), i, v) {
			char one[600];
			if (i >= REPORT_MAX_VARIANTS || l + 8 >= cap)
				break;
			if (!content_wl_phrase(c, rr_obj(v, KEY_WORKLOAD), v, "its URL", one,
					       sizeof one))
				snprintf(one, sizeof one, "not recorded");
			l += (size_t)snprintf(out + l, cap - l, "%s%s: %s", i ? "; " : "",
					      rr_str(v, KEY_NAME) ? rr_str(v, KEY_NAME) : "?", one);
		}
		return;
	}
	if (table)
		snprintf(out, cap, "the request table %s (SHA-256 %.16s...)",
			 rr_str(table, KEY_SOURCE) ? rr_str(table, KEY_SOURCE) : "?",
			 rr_str(table, KEY_SHA256) ? rr_str(table, KEY_SHA256) : "?");
	else if (c->r->kind == RESULT_KIND_COMPARE)
		snprintf(out, cap, "one %s request per variant",
			 rr_str(c->plan, KEY_METHOD) ? rr_str(c->plan, KEY_METHOD) : "?");
	else
		snprintf(out, cap, "one %s request to %s",
			 rr_str(c->plan, KEY_METHOD) ? rr_str(c->plan, KEY_METHOD) : "?",
			 rr_str(c->plan, KEY_URL) ? rr_str(c->plan, KEY_URL) : "?");
}

void content_meaning(struct content_ctx *c)
{
	page_heading(c->d, 2, "meaning", "What this number means / does not establish");
	page_heading(c->d, 3, "means", "What it means");
	page_list(c->d);
	char wl[2048];
	workload_phrase(c, wl, sizeof wl);
	if (c->r->kind == RESULT_KIND_RUN) {
		struct phase_fig m;
		report_phase_fig(rr_get(c->root, KEY_MEASURE), &m);
		if (c->open_loop)
			page_item(c->d,
				 "At %s requests/s offered, this target, as configured and on this "
				 "machine, answered half of the requests within %s and 99%% within %s of "
				 "their scheduled time, queueing included.",
				 fmt_rate(&c->f, m.offered), fmt_us(&c->f, m.p50), fmt_us(&c->f, m.p99));
		else
			page_item(
				c->d,
				"With %s requests always outstanding, this target completed %s "
				"requests/s; half of them took at most %s and 99%% at most %s from "
				"their send.",
				fmt_int(&c->f, rr_num_or(c->plan, KEY_CONCURRENCY, NAN)),
				fmt_rate(&c->f, m.achieved), fmt_us(&c->f, m.p50),
				fmt_us(&c->f, m.p99));
	} else if (c->r->kind == RESULT_KIND_RAMP) {
		const json_t *hp = rr_obj(c->root, KEY_HIGHEST_PASSING);
		const char *slo = rr_str(c->plan, KEY_SLO);
		const char *bound = hp ? rr_str(hp, KEY_BOUND) : NULL;
		if (hp && bound && !strcmp(bound, "lower")) {
			page_item(
				c->d,
				"The target sustained %s requests/s offered %s%s for steps of %s: its "
				"capacity under these conditions is at least that. Above it pacer could "
				"not keep its own schedule on this machine, so where it lies is not "
				"known.",
				fmt_rate(&c->f, rr_num_or(hp, KEY_OFFERED_PER_S, NAN)),
				slo ? "within the SLO " : "", slo ? slo : "",
				fmt_s(&c->f, rr_num_or(c->plan, KEY_STEP_DURATION_S, NAN)));
		} else if (hp) {
			double off = rr_num_or(hp, KEY_OFFERED_PER_S, NAN);
			double next = INFINITY;
			size_t i;
			const json_t *s;
			json_array_foreach(rr_arr(c->root, KEY_STEPS), i, s) {
				double o;
				if (!rr_true(s, KEY_RETRIED) &&
				    !rr_true(s, "verdict.inconclusive") &&
				    !rr_true(s, "verdict.pass") &&
				    rr_num(s, KEY_OFFERED_PER_S, &o) && o > off)
					next = fmin(next, o);
			}
			if (isfinite(next))
				page_item(
					c->d,
					"The target sustained %s requests/s offered %s%s for steps of %s; "
					"under these conditions its capacity lies between %s and %s "
					"requests/s.",
					fmt_rate(&c->f, off), slo ? "within the SLO " : "",
					slo ? slo : "",
					fmt_s(&c->f, rr_num_or(c->plan, KEY_STEP_DURATION_S, NAN)),
					fmt_rate(&c->f, off), fmt_rate(&c->f, next));
			else
				page_item(
					c->d,
					"The target sustained %s requests/s offered %s%s for steps of %s, "
					"the highest step tried: its capacity under these conditions is "
					"at least that.",
					fmt_rate(&c->f, off), slo ? "within the SLO " : "",
					slo ? slo : "",
					fmt_s(&c->f, rr_num_or(c->plan, KEY_STEP_DURATION_S, NAN)));
		} else if (rr_num_or(c->root, KEY_INCONCLUSIVE_STEPS, 0) > 0) {
			page_item(c->d, "Nothing about the target's capacity: pacer could not keep its own "
				       "schedule on this machine at the lowest step that decided.");
		} else {
			page_item(c->d, "No step met the SLO: under these conditions the target's capacity "
				       "is below the lowest step tried.");
		}
	} else {
		size_t i;
		const json_t *r;
		bool any = false;
		json_array_foreach(rr_arr(c->root, KEY_RATIOS), i, r) {
			if (!rr_true(r, KEY_SIGNIFICANT))
				continue;
			any = true;
			page_item(
				c->d,
				"On this machine under this load, %s's %s was %s times %s's (95%% CI "
				"%s–%s): %s.",
				rr_str(r, KEY_VARIANT) ? rr_str(r, KEY_VARIANT) : "?",
				rr_str(r, KEY_METRIC) ? rr_str(r, KEY_METRIC) : "?",
				fmt_ratio(&c->f, rr_num_or(r, KEY_RATIO, NAN)),
				rr_str(r, KEY_BASELINE) ? rr_str(r, KEY_BASELINE) : "?",
				fmt_ratio(&c->f, rr_num_or(r, KEY_CI95_LOW, NAN)),
				fmt_ratio(&c->f, rr_num_or(r, KEY_CI95_HIGH, NAN)),
				rr_str(r, KEY_VERDICT) ? rr_str(r, KEY_VERDICT) : "?");
		}
		if (!any)
			page_item(c->d, "No difference between the variants was large and certain enough "
				       "to be called significant under this load.");
	}
	page_item(c->d, "It holds for this workload: %s.", wl);

	page_heading(c->d, 3, "does-not-establish", "What it does not establish");
	page_list(c->d);
	page_item(c->d, "How the target behaves on other hardware, with another configuration, or "
		       "under another mix of requests.");
	if (c->self_contained)
		page_item(c->d, "The capacity or latency of a real deployment: the load generator and "
			       "the target shared one process and its cores.");
	if (rr_str(c->plan, KEY_UNIX_SOCKET))
		page_item(c->d,
			  "Unix socket: requests went over the local socket %s, not TCP: no "
			  "network stack and no network in these figures.",
			  rr_str(c->plan, KEY_UNIX_SOCKET));
	else if (c->loopback)
		page_item(c->d, "Anything about the network: requests never left the machine.");
	if (c->loopback || c->self_contained)
		page_item(c->d, "What pacer itself costs against a remote target: over loopback the "
			       "kernel runs the target's receive path, and the wake-up of its thread, "
			       "inside pacer's writes, and that counts in the generator's CPU.");
	double steal = content_most_steal(c);
	if (content_steal_warned(c) && isfinite(steal))
		page_item(c->d, "That the latency tails are the target's: the hypervisor took up to %s "
			       "of the generator's CPUs during the load (steal time).",
			 fmt_pct(&c->f, steal));
	if (!c->open_loop && !rr_obj(c->plan, KEY_RAMP) && c->r->kind != RESULT_KIND_RAMP)
		page_item(c->d, "Latency at a given arrival rate: a closed loop slows down with the "
			       "target and hides queueing.");
	if (c->r->kind != RESULT_KIND_COMPARE && c->repeat <= 1)
		page_item(c->d, "That the figures repeat: one measurement gives no estimate of "
			       "run-to-run variance.");
	if (c->r->kind == RESULT_KIND_RAMP && !rr_true(c->plan, KEY_REFINE))
		page_item(c->d, "The exact capacity: it lies between steps (--refine narrows it).");
	if (c->r->kind == RESULT_KIND_COMPARE)
		page_item(c->d, "Why the variants differ, or that the difference holds on other "
			       "machines or loads; a 95%% interval misses the truth about one time in "
			       "twenty.");
	double dur = c->r->kind == RESULT_KIND_RAMP
			     ? rr_num_or(c->plan, KEY_STEP_DURATION_S, NAN)
			     : rr_num_or(c->root, "measure.duration_s",
					 rr_num_or(c->plan, KEY_DURATION_S, NAN));
	if (isfinite(dur))
		page_item(c->d, "Behaviour over longer periods than the %s measured: memory growth, "
			       "garbage collection, caches, thermal limits.",
			 fmt_s(&c->f, dur));
	if (rr_true(c->root, "generator_limited.flagged"))
		page_item(c->d, "The target's limit: the generator itself may have been the bottleneck.");
	if (c->r->kind == RESULT_KIND_RAMP && rr_num_or(c->root, KEY_INCONCLUSIVE_STEPS, 0) > 0)
		page_item(c->d, "The target's capacity above the highest passing step: pacer's own "
			       "lateness could have decided the step above it (inconclusive).");
	if (c->interrupted)
		page_item(c->d, "The planned measurement: it was interrupted.");
	if (rr_obj(c->root, KEY_COST))
		page_item(c->d, "A bill: cost figures extrapolate CPU time only.");
}
