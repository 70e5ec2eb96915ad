/* pacer — the report's "Test conditions and limits" section (see
 * content_int.h): where the target was, errors and drops, the size of the
 * tail, the generator's self-checks, warnings. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "report/content_int.h"

/* What the errors of a phase were: failed responses by status, then
 * request transport errors by kind. */
static void errors_detail(struct content_ctx *c, const json_t *ph, char *out, size_t cap)
{
	static const char *const kinds[] = {"read", "write", "timeout", "parse", "closed"};
	out[0] = '\0';
	const char *st;
	const json_t *n;
	json_object_foreach((json_t *)rr_obj(ph, "errors.by_status"), st, n) {
		size_t l = strlen(out);
		if (json_is_number(n) && l + 1 < cap)
			snprintf(out + l, cap - l, "%sstatus %s: %s", l ? ", " : "", st,
				 fmt_int(&c->f, json_number_value(n)));
	}
	const json_t *errs = rr_obj(ph, "transport_errors");
	for (size_t k = 0; k < N(kinds); k++) {
		double v = rr_num_or(errs, kinds[k], 0);
		size_t l = strlen(out);
		if (v > 0 && l + 1 < cap)
			snprintf(out + l, cap - l, "%s%s %s", l ? ", " : "", kinds[k], fmt_int(&c->f, v));
	}
}

static void phase_conditions(struct content_ctx *c, const json_t *ph, const char *label)
{
	struct phase_fig m;
	report_phase_fig(ph, &m);
	char det[256];
	double failed = m.errors;
	if (failed > 0) {
		errors_detail(c, ph, det, sizeof det);
		doc_item(c->d, "%s%s %s did not succeed (%s): %s of those sent.%s", label,
			 fmt_int(&c->f, failed), plural(failed, "request", "requests"), det,
			 fmt_pct(&c->f, m.error_pct),
			 rr_num_or(ph, "transport_errors.timeout", 0) > 0
				 ? " A timed-out request is in the latency figures at the moment it "
				   "was abandoned, a lower bound of its real latency."
				 : "");
	}
	if (m.connect_errors > 0)
		doc_item(c->d, "%s%s connection %s failed (not counted as requests).", label,
			 fmt_int(&c->f, m.connect_errors), plural(m.connect_errors, "attempt", "attempts"));
	if (m.tls_errors > 0) {
		char reasons[400] = "";
		size_t i;
		const json_t *rs;
		json_array_foreach(rr_arr(ph, "tls.failure_reasons"), i, rs) {
			size_t l = strlen(reasons);
			if (json_is_string(rs) && l < sizeof reasons - 8)
				snprintf(reasons + l, sizeof reasons - l, "%s%s", l ? "; " : ": ",
					 json_string_value(rs));
		}
		doc_item(c->d, "%s%s TLS %s failed (not counted as requests)%s.", label,
			 fmt_int(&c->f, m.tls_errors), plural(m.tls_errors, "handshake", "handshakes"),
			 reasons);
	}
	if (m.dropped + m.queued > 0)
		doc_item(c->d,
			 "%s%s %s due but never sent (%s dropped from a full backlog, %s still queued "
			 "when the drain ended): %s of those due.",
			 label, fmt_int(&c->f, m.dropped + m.queued),
			 plural(m.dropped + m.queued, "request was", "requests were"),
			 fmt_int(&c->f, m.dropped), fmt_int(&c->f, m.queued), fmt_pct(&c->f, m.drop_pct));
	if (m.in_flight > 0)
		doc_item(c->d, "%s%s %s had no complete response when the drain ended.", label,
			 fmt_int(&c->f, m.in_flight), plural(m.in_flight, "request", "requests"));
	double late = rr_num_or(ph, "requests.late", 0);
	if (late > 0)
		doc_item(c->d, "%s%s %s completed after their timeout had passed.", label,
			 fmt_int(&c->f, late), plural(late, "response", "responses"));
	/* non-2xx responses */
	const json_t *bc = rr_obj(ph, "responses.by_class");
	double other = 0, total = 0;
	char cls[160] = "";
	static const char *const classes[] = {"1xx", "2xx", "3xx", "4xx", "5xx"};
	for (size_t k = 0; k < N(classes); k++) {
		double v = rr_num_or(bc, classes[k], 0);
		total += v;
		if (k != 1 && v > 0) {
			other += v;
			size_t l = strlen(cls);
			snprintf(cls + l, sizeof cls - l, "%s%s %s", l ? ", " : "", classes[k],
				 fmt_int(&c->f, v));
		}
	}
	if (other > 0)
		doc_item(c->d,
			 "%s%s %s had a status other than 2xx (%s), %s of responses: every complete "
			 "response is counted as completed, and one that fails the success rule is "
			 "also an error; the latency of both kinds is in the figures, and apart in the "
			 "latency table when any failed.",
			 label, fmt_int(&c->f, other), plural(other, "response", "responses"), cls,
			 fmt_pct(&c->f, total > 0 ? other / total * 100 : NAN));
	const json_t *succ = rr_obj(ph, "success");
	if (succ && rr_num_or(succ, "failed", 0) > 0) {
		double failed_s = rr_num_or(succ, "failed", 0);
		const char *rule = rr_str(succ, "rule");
		doc_item(c->d, "%sSuccess rule %s: %s %s (%s ok).", label, rule ? rule : "?",
			 fmt_int(&c->f, failed_s), plural(failed_s, "response failed it", "responses failed it"),
			 fmt_pct(&c->f, rr_num_or(succ, "ok_pct", NAN)));
	}
	/* sample size of the tail */
	if (m.completed > 0 && isfinite(m.completed)) {
		double tail99 = floor(m.completed * 0.01), tail999 = floor(m.completed * 0.001);
		if (tail99 < 1)
			doc_item(c->d,
				 "%sOnly %s %s: p99 and the percentiles above it are just the slowest "
				 "responses, too few for a tail.",
				 label, fmt_int(&c->f, m.completed), plural(m.completed, "response", "responses"));
		else if (tail99 < 10)
			doc_item(c->d,
				 "%s%s responses: the p99 rests on the slowest %s of them, too few for a "
				 "stable tail; p99.9 and beyond are anecdotes.",
				 label, fmt_int(&c->f, m.completed), fmt_int(&c->f, tail99));
		else if (tail999 < 10)
			doc_item(c->d,
				 "%s%s responses: p99 rests on the slowest %s, p99.9 on only %s; treat "
				 "figures beyond p99.9 as anecdotes.",
				 label, fmt_int(&c->f, m.completed), fmt_int(&c->f, tail99),
				 fmt_int(&c->f, tail999));
	}
}

static void gen_limited(struct content_ctx *c, const json_t *gl, const char *label)
{
	if (!gl)
		return;
	if (!rr_true(gl, "flagged")) {
		size_t n = 0, i;
		const json_t *ch;
		json_array_foreach(rr_arr(gl, "checks"), i, ch)
			if (!rr_get(ch, "evaluated") || rr_true(ch, "evaluated"))
				n++;
		/* how much its lateness could have moved the figures, when known */
		const json_t *lag = json_array_get(rr_arr(gl, "checks"), 0);
		const char *finding = lag && rr_true(lag, "evaluated") ? rr_str(lag, "finding") : NULL;
		doc_item(c->d, "%spacer's generator self-checks did not fire (%zu %s evaluated): the "
			       "generator kept up with its schedule%s%s.",
			 label, n, plural((double)n, "check", "checks"), finding && *finding ? "; " : "",
			 finding ? finding : "");
		return;
	}
	size_t i;
	const json_t *ch;
	bool any = false;
	json_array_foreach(rr_arr(gl, "checks"), i, ch) {
		if (!rr_true(ch, "fired"))
			continue;
		any = true;
		const char *name = rr_str(ch, "name"), *unit = rr_str(ch, "unit"),
			   *advice = rr_str(ch, "advice"), *finding = rr_str(ch, "finding");
		double v, th = rr_num_or(ch, "threshold", NAN);
		char val[160] = "";
		if (rr_num(ch, "value", &v)) {
			if (unit && strcmp(unit, "us") == 0)
				snprintf(val, sizeof val, ": %s against a limit of %s", fmt_us(&c->f, v),
					 fmt_us(&c->f, th));
			else if (unit && strcmp(unit, "pct") == 0)
				snprintf(val, sizeof val, ": %s against a limit of %s", fmt_pct(&c->f, v),
					 fmt_pct(&c->f, th));
			else
				snprintf(val, sizeof val, ": %s %s against a limit of %s %s",
					 fmt_num(&c->f, v, 2), unit ? unit : "", fmt_num(&c->f, th, 2),
					 unit ? unit : "");
		}
		size_t al = advice ? strlen(advice) : 0;
		bool fd = finding && *finding;
		doc_item(c->d,
			 "%sGenerator-limited: the check %s fired%s%s%s%s. The generator, not the target, "
			 "may have set these figures.%s%s%s",
			 label, name ? name : "?", val, fd ? " (" : "", fd ? finding : "",
			 fd ? ")" : "", al ? " Advice: " : "", advice ? advice : "",
			 al && advice[al - 1] != '.' ? "." : "");
	}
	if (!any)
		doc_item(c->d, "%sGenerator-limited: pacer flagged the generator as a possible limit.",
			 label);
}

void content_conditions(struct content_ctx *c)
{
	doc_heading(c->d, 2, "conditions", "Test conditions and limits");
	doc_list(c->d);
	if (c->self_contained) {
		if (c->r->kind == RESULT_KIND_COMPARE)
			doc_item(c->d,
				 "Self-contained variants: pacer drove its own embedded target in the same "
				 "process, so driver and target shared the process and competed for the "
				 "machine's cores: a variant's figures include that contention.");
		else
			doc_item(c->d,
				 "Self-contained: the driver and the target (pacer's embedded plan %s) "
				 "shared one process and one machine, so they competed for the same cores. "
				 "The target's CPU figures (CPU per request, cost) count only the embedded "
				 "target's own threads, not the driver's; its memory figure is the whole "
				 "process's, driver included. Capacity and latency here are not those of a "
				 "real server.",
				 rr_str(c->root, "target.plan") ? rr_str(c->root, "target.plan") : "?");
	}
	if (rr_str(c->plan, "unix_socket"))
		doc_item(c->d, "Unix socket: requests went over the local socket %s, not TCP: no "
			       "network stack and no network in these figures.",
			 rr_str(c->plan, "unix_socket"));
	else if (c->loopback)
		doc_item(c->d,
			 "Loopback: the target was on this machine (%s), so requests never crossed a "
			 "network; network latency and bandwidth are not in these figures.",
			 c->host[0] ? c->host : "loopback addresses");
	else if (c->host[0])
		doc_item(c->d, "Network: requests went to %s; the figures include the network path "
			       "between the two machines.",
			 c->host);
	if (c->interrupted)
		doc_item(c->d, "Interrupted: the %s was stopped before its planned end (Ctrl-C or "
			       "SIGTERM); the figures cover only what was measured until then.",
			 result_kind_name(c->r->kind));
	if (!c->open_loop && c->r->kind != RESULT_KIND_RAMP && !rr_obj(c->plan, "ramp"))
		doc_item(c->d,
			 "Closed loop: each connection waits for a response before sending again, so "
			 "latency excludes queueing that an open arrival of requests would cause "
			 "(coordinated omission); use an open-loop --rate to measure it.");
	if (c->r->kind == RESULT_KIND_RUN) {
		phase_conditions(c, rr_get(c->root, "measure"), "");
		gen_limited(c, rr_obj(c->root, "generator_limited"), "");
		if (c->repeat <= 1)
			doc_item(c->d, "One run: there is no estimate of run-to-run variance (--repeat N "
				       "measures it).");
	} else if (c->r->kind == RESULT_KIND_RAMP) {
		size_t i;
		const json_t *s;
		json_array_foreach(rr_arr(c->root, "steps"), i, s) {
			char label[96];
			snprintf(label, sizeof label, "Step %zu (%s requests/s): ", i + 1,
				 fmt_rate(&c->f, rr_num_or(s, "offered_per_s", NAN)));
			if (rr_true(s, "interrupted"))
				doc_item(c->d, "%sinterrupted: it never counts as passing.", label);
			phase_conditions(c, rr_get(s, "measure"), label);
			gen_limited(c, rr_obj(s, "generator_limited"), label);
		}
		if (c->repeat <= 1)
			doc_item(c->d, "One measurement per step: there is no estimate of run-to-run "
				       "variance (--repeat N measures it).");
	} else {
		if (c->repeat < 5)
			doc_item(c->d,
				 "Only %u %s per variant: the confidence intervals are coarse.", c->repeat,
				 plural(c->repeat, "repetition", "repetitions"));
		doc_item(c->d, "A 95%% confidence interval misses the true ratio about one time in "
			       "twenty.");
		size_t i;
		const json_t *v;
		json_array_foreach(rr_arr(c->root, "variants"), i, v) {
			double errs = 0;
			size_t k;
			const json_t *rep;
			json_array_foreach(rr_arr(v, "repetitions"), k, rep)
				errs += rr_num_or(rep, "errors", 0);
			if (errs > 0)
				doc_item(c->d, "Variant %s: %s failed %s over its repetitions.",
					 rr_str(v, "name") ? rr_str(v, "name") : "?", fmt_int(&c->f, errs),
					 plural(errs, "request", "requests"));
		}
	}
	if (c->r->kind != RESULT_KIND_COMPARE) {
		const json_t *cost = rr_obj(c->root, "cost");
		bool step_cost = false;
		size_t i;
		const json_t *s;
		json_array_foreach(rr_arr(c->root, "steps"), i, s)
			if (rr_obj(s, "cost"))
				step_cost = true;
		if (cost || step_cost)
			doc_item(c->d, "Cost figures are CPU-only extrapolations (not memory, network, "
				       "storage or idle capacity), not a bill.");
	}
	size_t nw = rr_len(c->root, "warnings");
	if (nw) {
		doc_heading(c->d, 3, "warnings", "Warnings recorded by pacer");
		doc_list(c->d);
		size_t i;
		const json_t *w;
		json_array_foreach(rr_arr(c->root, "warnings"), i, w)
			if (json_is_string(w))
				doc_item(c->d, "%s", json_string_value(w));
	}
}
