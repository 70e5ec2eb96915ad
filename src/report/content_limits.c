/* pacer — the report's "Test conditions and limits" section (see
 * content_int.h): where the target was, errors and drops, the size of the
 * tail, the generator's self-checks, the target's waits for a CPU,
 * warnings. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "doc/keys.h"
#include "report/content_int.h"
#include "stats/summary.h"

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
	const json_t *errs = rr_obj(ph, KEY_TRANSPORT_ERRORS);
	for (size_t k = 0; k < N(kinds); k++) {
		double v = rr_num_or(errs, kinds[k], 0);
		size_t l = strlen(out);
		if (v > 0 && l + 1 < cap)
			snprintf(out + l, cap - l, "%s%s %s", l ? ", " : "", kinds[k], fmt_int(&c->f, v));
	}
}

/* ---- notes of a phase, said once per step or folded over the steps -------- */

/* A note's kind: notes of the same kind (and key) in several ramp steps are
 * folded into one statement listing the steps. */
enum cond_kind {
	CK_INTERRUPTED,
	CK_ERRORS,
	CK_CONNECT,
	CK_TLS,
	CK_H2,
	CK_DUE,
	CK_IN_FLIGHT,
	CK_LATE,
	CK_NON2XX,
	CK_SUCCESS,
	CK_TAIL_NONE,
	CK_TAIL_FEW,
	CK_TAIL_999,
	CK_GEN_OK,
	CK_GEN_FIRED,
	CK_GEN_FLAGGED,
	CK_CPU_WAIT,
};

struct cond_note {
	enum cond_kind kind;
	size_t step;    /* 0-based */
	char key[160];  /* must match too for two notes to fold (a rule, a check) */
	char full[1200]; /* the sentence for one step alone (after its label) */
	char fig[400];  /* this step's figures in a folded statement */
	char what[400]; /* the folded statement's subject */
	char why[700];  /* its explanation, said once ("" or starting with a space) */
};

/* Where the notes go: straight into the list (run: v NULL), or collected
 * per step for folding (ramp). */
struct cond_sink {
	struct cond_note *v;
	size_t n, cap;
	size_t step;
	bool collect, oom;
};

/* The terminal says each caveat once and briefly (txt.c): these kinds are
 * said there another way (the errors note and the steps table carry the
 * statuses; a check that did not fire is no caveat) and are left out. */
static bool said_elsewhere(enum cond_kind kind)
{
	return kind == CK_NON2XX || kind == CK_SUCCESS || kind == CK_GEN_OK;
}

/* s up to its first " (" (or ": " within it), into out: a note's subject
 * ("Generator-limited: the check loop_lag_p99 fired"), or a figure without
 * its explanation ("2.13 ms against a limit of 1.00 ms"). */
static const char *cut_at_paren(const char *s, char *out, size_t cap)
{
	const char *p = strstr(s, " (");
	int n = p ? (int)(p - s) : (int)strlen(s);
	snprintf(out, cap, "%.*s", n, s);
	return out;
}

static void note(struct content_ctx *c, struct cond_sink *k, const char *label,
		 enum cond_kind kind, const char *key, const char *full, const char *fig,
		 const char *what, const char *why)
{
	if (k && k->collect && !k->oom) {
		if (k->n == k->cap) {
			size_t cap = k->cap ? k->cap * 2 : 16;
			struct cond_note *v = realloc(k->v, cap * sizeof *v);
			if (!v) {
				k->oom = true;
			} else {
				k->v = v;
				k->cap = cap;
			}
		}
		if (!k->oom) {
			struct cond_note *n = &k->v[k->n++];
			n->kind = kind;
			n->step = k->step;
			snprintf(n->key, sizeof n->key, "%s", key ? key : "");
			snprintf(n->full, sizeof n->full, "%s", full);
			snprintf(n->fig, sizeof n->fig, "%s", fig);
			snprintf(n->what, sizeof n->what, "%s", what);
			snprintf(n->why, sizeof n->why, "%s", why ? why : "");
			return;
		}
	}
	/* a run's note as is, but for the terminal: a fired check's figure
	 * without its finding and advice (the report has them) */
	char brief[1400], subj[400], val[400];
	const char *b = NULL;
	if (said_elsewhere(kind)) {
		b = "";
	} else if (kind == CK_GEN_FIRED) {
		snprintf(brief, sizeof brief,
			 "%s%s: %s; pacer, not the target, may have set these figures.", label,
			 cut_at_paren(what, subj, sizeof subj), cut_at_paren(fig, val, sizeof val));
		b = brief;
	} else if (kind == CK_CPU_WAIT) {
		snprintf(brief, sizeof brief, "%s%s: %s.", label,
			 cut_at_paren(what, subj, sizeof subj), fig);
		b = brief;
	}
	page_item_brief(c->d, b, "%s%s", label, full);
}

/* The notes of a measured phase; interrupted: its step was cut short by an
 * interrupt (not ended by its drain). */
static void phase_conditions(struct content_ctx *c, const json_t *ph, bool interrupted,
			     const char *label, struct cond_sink *k)
{
	struct phase_fig m;
	report_phase_fig(ph, &m);
	char det[256], full[1200], fig[400];
	double failed = m.errors;
	if (failed > 0) {
		errors_detail(c, ph, det, sizeof det);
		const char *why = rr_num_or(ph, "transport_errors.timeout", 0) > 0
					  ? " A timed-out request is in the latency figures at the moment it "
					    "was abandoned, a lower bound of its real latency."
					  : "";
		snprintf(full, sizeof full, "%s %s did not succeed (%s): %s of those sent.%s",
			 fmt_int(&c->f, failed), plural(failed, "request", "requests"), det,
			 fmt_pct(&c->f, m.error_pct), why);
		snprintf(fig, sizeof fig, "%s (%s), %s of those sent", fmt_int(&c->f, failed), det,
			 fmt_pct(&c->f, m.error_pct));
		note(c, k, label, CK_ERRORS, why, full, fig, "Requests that did not succeed", why);
	}
	if (m.connect_errors > 0) {
		snprintf(full, sizeof full, "%s connection %s failed (not counted as requests).",
			 fmt_int(&c->f, m.connect_errors),
			 plural(m.connect_errors, "attempt", "attempts"));
		snprintf(fig, sizeof fig, "%s", fmt_int(&c->f, m.connect_errors));
		note(c, k, label, CK_CONNECT, NULL, full, fig,
		     "Failed connection attempts (not counted as requests)", NULL);
	}
	char reasons[400];
	if (m.tls_errors > 0) {
		content_fail_reasons(ph, false, reasons, sizeof reasons);
		snprintf(full, sizeof full, "%s TLS %s failed (not counted as requests)%s.",
			 fmt_int(&c->f, m.tls_errors), plural(m.tls_errors, "handshake", "handshakes"),
			 reasons);
		snprintf(fig, sizeof fig, "%s%s", fmt_int(&c->f, m.tls_errors), reasons);
		note(c, k, label, CK_TLS, NULL, full, fig,
		     "Failed TLS handshakes (not counted as requests)", NULL);
	}
	double h2_failed = rr_num_or(ph, "transport_errors.protocol", 0);
	if (h2_failed > 0) {
		content_fail_reasons(ph, true, reasons, sizeof reasons);
		bool h3 = rr_obj(ph, KEY_HTTP3) != NULL;
		snprintf(full, sizeof full, "%s %s failed as HTTP/%c (not counted as requests)%s.",
			 fmt_int(&c->f, h2_failed), plural(h2_failed, "connection", "connections"),
			 h3 ? '3' : '2', reasons);
		snprintf(fig, sizeof fig, "%s%s", fmt_int(&c->f, h2_failed), reasons);
		note(c, k, label, CK_H2, NULL, full, fig,
		     h3 ? "Connections that failed as HTTP/3 (not counted as requests)"
			: "Connections that failed as HTTP/2 (not counted as requests)",
		     NULL);
	}
	/* the end of the phase's step: the drain's, or an interrupt's */
	const char *ended = interrupted ? "at the interrupt" : "when the drain ended";
	if (m.dropped + m.queued > 0) {
		/* a closed loop drops a request whose host has no connection while
		 * its connections fail (it would hold a slot of the concurrency) */
		bool down = !c->open_loop && m.connect_errors + m.tls_errors + h2_failed > 0;
		const char *how = down ? "while the target's connections failed"
				       : "from a full backlog";
		snprintf(
			full, sizeof full,
			"%s %s due but never sent (%s dropped %s, %s still queued %s): %s of those "
			"due.",
			fmt_int(&c->f, m.dropped + m.queued),
			plural(m.dropped + m.queued, "request was", "requests were"),
			fmt_int(&c->f, m.dropped), how, fmt_int(&c->f, m.queued), ended,
			fmt_pct(&c->f, m.drop_pct));
		snprintf(fig, sizeof fig, "%s (%s dropped, %s still queued), %s of those due",
			 fmt_int(&c->f, m.dropped + m.queued), fmt_int(&c->f, m.dropped),
			 fmt_int(&c->f, m.queued), fmt_pct(&c->f, m.drop_pct));
		note(c, k, label, CK_DUE, NULL, full, fig,
		     down ? "Requests due but never sent (dropped while the target's connections "
			    "failed, or still queued when the drain ended)"
			  : "Requests due but never sent (dropped from a full backlog, or still "
			    "queued when the drain ended)",
		     NULL);
	}
	if (m.in_flight > 0) {
		snprintf(full, sizeof full, "%s %s had no complete response %s.",
			 fmt_int(&c->f, m.in_flight), plural(m.in_flight, "request", "requests"),
			 ended);
		snprintf(fig, sizeof fig, "%s", fmt_int(&c->f, m.in_flight));
		note(c, k, label, CK_IN_FLIGHT, NULL, full, fig,
		     "Requests without a complete response when the drain ended", NULL);
	}
	double late = rr_num_or(ph, "requests.late", 0);
	if (late > 0) {
		snprintf(full, sizeof full, "%s %s completed after their timeout had passed.",
			 fmt_int(&c->f, late), plural(late, "response", "responses"));
		snprintf(fig, sizeof fig, "%s", fmt_int(&c->f, late));
		note(c, k, label, CK_LATE, NULL, full, fig,
		     "Responses completed after their timeout had passed", NULL);
	}
	/* non-2xx responses */
	const json_t *bc = rr_obj(ph, "responses.by_class");
	double other = 0, total = 0;
	char cls[160] = "";
	static const char *const classes[] = {"1xx", "2xx", "3xx", "4xx", "5xx"};
	for (size_t i = 0; i < N(classes); i++) {
		double v = rr_num_or(bc, classes[i], 0);
		total += v;
		if (i != 1 && v > 0) {
			other += v;
			size_t l = strlen(cls);
			snprintf(cls + l, sizeof cls - l, "%s%s %s", l ? ", " : "", classes[i],
				 fmt_int(&c->f, v));
		}
	}
	if (other > 0) {
		static const char why[] =
			" Every complete response is counted as completed, and one that fails the "
			"success rule is also an error; the latency of both kinds is in the figures, "
			"and apart in the latency table when any failed.";
		snprintf(full, sizeof full,
			 "%s %s had a status other than 2xx (%s), %s of responses: every complete "
			 "response is counted as completed, and one that fails the success rule is "
			 "also an error; the latency of both kinds is in the figures, and apart in the "
			 "latency table when any failed.",
			 fmt_int(&c->f, other), plural(other, "response", "responses"), cls,
			 fmt_pct(&c->f, total > 0 ? other / total * 100 : NAN));
		snprintf(fig, sizeof fig, "%s (%s), %s of responses", fmt_int(&c->f, other), cls,
			 fmt_pct(&c->f, total > 0 ? other / total * 100 : NAN));
		note(c, k, label, CK_NON2XX, NULL, full, fig, "Responses with a status other than 2xx",
		     why);
	}
	const json_t *succ = rr_obj(ph, KEY_SUCCESS);
	if (succ && rr_num_or(succ, KEY_FAILED, 0) > 0) {
		double failed_s = rr_num_or(succ, KEY_FAILED, 0);
		const char *rule = rr_str(succ, KEY_RULE);
		char what[400];
		snprintf(full, sizeof full, "Success rule %s: %s %s (%s ok).", rule ? rule : "?",
			 fmt_int(&c->f, failed_s),
			 plural(failed_s, "response failed it", "responses failed it"),
			 fmt_pct(&c->f, rr_num_or(succ, KEY_OK_PCT, NAN)));
		snprintf(fig, sizeof fig, "%s (%s ok)", fmt_int(&c->f, failed_s),
			 fmt_pct(&c->f, rr_num_or(succ, KEY_OK_PCT, NAN)));
		snprintf(what, sizeof what, "Responses that failed the success rule %s",
			 rule ? rule : "?");
		note(c, k, label, CK_SUCCESS, rule, full, fig, what, NULL);
	}
	/* sample size of the tail */
	if (m.completed > 0 && isfinite(m.completed)) {
		double tail99 = floor(m.completed * 0.01), tail999 = floor(m.completed * 0.001);
		if (tail99 < 1) {
			snprintf(full, sizeof full,
				 "Only %s %s: p99 and the percentiles above it are just the slowest "
				 "responses, too few for a tail.",
				 fmt_int(&c->f, m.completed), plural(m.completed, "response", "responses"));
			snprintf(fig, sizeof fig, "%s %s", fmt_int(&c->f, m.completed),
				 plural(m.completed, "response", "responses"));
			note(c, k, label, CK_TAIL_NONE, NULL, full, fig,
			     "Fewer than 100 responses (p99 and the percentiles above it are just the "
			     "slowest responses, too few for a tail)",
			     NULL);
		} else if (tail99 < 10) {
			snprintf(full, sizeof full,
				 "%s responses: the p99 rests on the slowest %s of them, too few for a "
				 "stable tail; p99.9 and beyond are anecdotes.",
				 fmt_int(&c->f, m.completed), fmt_int(&c->f, tail99));
			snprintf(fig, sizeof fig, "%s responses, p99 on the slowest %s",
				 fmt_int(&c->f, m.completed), fmt_int(&c->f, tail99));
			note(c, k, label, CK_TAIL_FEW, NULL, full, fig,
			     "Too few responses for a stable tail (p99.9 and beyond are anecdotes)", NULL);
		} else if (tail999 < 10) {
			snprintf(full, sizeof full,
				 "%s responses: p99 rests on the slowest %s, p99.9 on only %s; treat "
				 "figures beyond p99.9 as anecdotes.",
				 fmt_int(&c->f, m.completed), fmt_int(&c->f, tail99),
				 fmt_int(&c->f, tail999));
			snprintf(fig, sizeof fig, "%s responses, p99.9 on only %s",
				 fmt_int(&c->f, m.completed), fmt_int(&c->f, tail999));
			note(c, k, label, CK_TAIL_999, NULL, full, fig,
			     "Fewer than 10 responses beyond p99.9 (treat figures beyond p99.9 as "
			     "anecdotes)",
			     NULL);
		}
	}
}

static void gen_limited(struct content_ctx *c, const json_t *gl, const json_t *step,
			const char *label, struct cond_sink *k)
{
	/* a ramp step whose verdict pacer's error did not decide: its checks
	 * speak of the step's figures, not of the capacity */
	bool figures_only = step && rr_get(step, "verdict.inconclusive") &&
			    !rr_true(step, "verdict.inconclusive");
	if (!gl)
		return;
	char full[1200], fig[400], what[400], why[700];
	if (!rr_true(gl, KEY_FLAGGED)) {
		size_t n = 0, i;
		const json_t *ch;
		json_array_foreach(rr_arr(gl, KEY_CHECKS), i, ch)
			if (!rr_get(ch, KEY_EVALUATED) || rr_true(ch, KEY_EVALUATED))
				n++;
		/* how much its lateness could have moved the figures, when known */
		const json_t *lag = json_array_get(rr_arr(gl, KEY_CHECKS), 0);
		const char *finding = lag && rr_true(lag, KEY_EVALUATED) ? rr_str(lag, KEY_FINDING)
									 : NULL;
		bool fd = finding && *finding;
		snprintf(full, sizeof full,
			 "pacer's generator self-checks did not fire (%zu %s evaluated): the "
			 "generator kept up with its schedule%s%s.",
			 n, plural((double)n, "check", "checks"), fd ? "; " : "", fd ? finding : "");
		snprintf(fig, sizeof fig, "%zu %s evaluated%s%s", n, plural((double)n, "check", "checks"),
			 fd ? ", " : "", fd ? finding : "");
		note(c, k, label, CK_GEN_OK, NULL, full, fig,
		     "pacer's generator self-checks did not fire (the generator kept up with its "
		     "schedule)",
		     NULL);
		return;
	}
	size_t i;
	const json_t *ch;
	bool any = false;
	json_array_foreach(rr_arr(gl, KEY_CHECKS), i, ch) {
		if (!rr_true(ch, KEY_FIRED))
			continue;
		any = true;
		const char *name = rr_str(ch, KEY_NAME), *unit = rr_str(ch, KEY_UNIT),
			   *advice = rr_str(ch, KEY_ADVICE), *finding = rr_str(ch, KEY_FINDING);
		double v, th = rr_num_or(ch, KEY_THRESHOLD, NAN);
		char val[160] = "";
		if (rr_num(ch, KEY_VALUE, &v)) {
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
		const char *dot = al && advice[al - 1] != '.' ? "." : "";
		snprintf(full, sizeof full,
			 figures_only ? "Generator-limited figures: the check %s fired%s%s%s%s. The "
					"step's figures include that much of pacer's own; its verdict did "
					"not depend on it.%s%s%s"
				      : "Generator-limited: the check %s fired%s%s%s%s. The generator, "
					"not the target, may have set these figures.%s%s%s",
			 name ? name : "?", val, fd ? " (" : "", fd ? finding : "", fd ? ")" : "",
			 al ? " Advice: " : "", advice ? advice : "", dot);
		snprintf(fig, sizeof fig, "%s%s%s%s", val[0] ? val + 2 : "fired", fd ? " (" : "",
			 fd ? finding : "", fd ? ")" : "");
		snprintf(what, sizeof what,
			 figures_only ? "Figures that include pacer's lateness (the check %s fired; "
					"no verdict depended on it)"
				      : "Generator-limited: the check %s fired (the generator, not the "
					"target, may have set these figures)",
			 name ? name : "?");
		snprintf(why, sizeof why, "%s%s%s", al ? " Advice: " : "", advice ? advice : "", dot);
		char key[160];
		snprintf(key, sizeof key, "%s\n%s", name ? name : "", advice ? advice : "");
		note(c, k, label, CK_GEN_FIRED, key, full, fig, what, why);
	}
	if (!any)
		note(c, k, label, CK_GEN_FLAGGED, NULL,
		     "Generator-limited: pacer flagged the generator as a possible limit.", "flagged",
		     "Generator-limited: pacer flagged the generator as a possible limit", NULL);
}

/* The target's waits for a CPU over a phase of phase_s seconds (its
 * target_resources tr), when material: starved by other work on its
 * machine, or queued for its own cores (content_cpu_wait). */
static void cpu_wait_conditions(struct content_ctx *c, const json_t *tr, double phase_s,
				const char *label, struct cond_sink *k)
{
	struct content_wait w;
	content_cpu_wait(c, tr, phase_s, &w);
	if (w.kind == CW_NONE)
		return;
	char full[1200], fig[400], why[700];
	char busy[200] = "";
	if (w.busy[0])
		snprintf(busy, sizeof busy, ", while %s", w.busy);
	snprintf(fig, sizeof fig, "%s%s%s", w.brief, w.busy[0] ? "; " : "", w.busy);
	if (w.kind == CW_OTHERS) {
		const char *pacer =
			c->loopback || c->self_contained
				? " (pacer's own threads among it: the target ran on this "
				  "machine)"
				: "";
		snprintf(
			why, sizeof why,
			" Other work on its machine had the CPUs the target could use%s; a quieter "
			"machine, or cores of its own, would show the target's own figures "
			"(docs/cost.md).",
			pacer);
		snprintf(
			full, sizeof full,
			"Starved of CPU by other work on its machine: %s over the measured phase%s. "
			"Other work had the CPUs it could use%s, so these figures are those "
			"of the target on a busy machine, not of the target alone; a quieter "
			"machine, or cores of its own, would show its own (docs/cost.md).",
			w.fig, busy, pacer);
		note(c, k, label, CK_CPU_WAIT, "others", full, fig,
		     "Starved of CPU by other work on its machine (the target's figures are those "
		     "of the target on a busy machine)",
		     why);
	} else {
		snprintf(
			full, sizeof full,
			"CPU wait: %s over the measured phase%s: its runnable threads "
			"outnumbered the cores it could use (or other work shared them), so its CPU "
			"was its limit.",
			w.fig, busy);
		note(c, k, label, CK_CPU_WAIT, "own", full, fig,
		     "The target's threads queued for the cores it could use (its CPU was its "
		     "limit)",
		     " Its runnable threads outnumbered those cores, or other work shared them.");
	}
}

/* The target's resources of a ramp step (the step's, or in older results
 * its measured phase's), or NULL. */
static const json_t *step_target_res(const json_t *s)
{
	const json_t *tr = rr_obj(s, KEY_TARGET_RESOURCES);
	return tr ? tr : rr_obj(rr_obj(s, KEY_MEASURE), KEY_TARGET_RESOURCES);
}

/* "1, 2 and 4" of the steps in idx[n], and their offered rates in the same
 * shape, into out. */
static void step_list(struct content_ctx *c, const size_t *idx, size_t n, char *out, size_t cap)
{
	char nums[600] = "", rates[900] = "";
	for (size_t i = 0; i < n; i++) {
		const char *sep = i == 0 ? "" : i + 1 == n ? " and " : ", ";
		size_t l = strlen(nums), lr = strlen(rates);
		char sl[32];
		snprintf(nums + l, sizeof nums - l, "%s%s", sep,
			 report_step_label(c->root, (long)idx[i], sl, sizeof sl));
		snprintf(rates + lr, sizeof rates - lr, "%s%s", sep,
			 fmt_rate(&c->f,
				  rr_num_or(step_at(c, (long)idx[i]), KEY_OFFERED_PER_S, NAN)));
	}
	snprintf(out, cap, "%s (%s requests/s)", nums, rates);
}

/* The terminal's form of note i of k: its subject and every step that has
 * a note of its kind and subject ("Generator-limited: the check
 * loop_lag_p99 fired, in steps 1, 3 and 4."), said at the first such note;
 * "" at the others, and for the kinds said elsewhere. */
static void term_brief(struct content_ctx *c, const struct cond_sink *k, size_t i, char *out,
		       size_t cap)
{
	const struct cond_note *a = &k->v[i];
	char subj[400], other[400];
	out[0] = '\0';
	cut_at_paren(a->what, subj, sizeof subj);
	/* a ramp's steps table has each step's error rate and its verdict */
	if (said_elsewhere(a->kind) || a->kind == CK_ERRORS)
		return;
	/* the group's notes, in order: one pass, so that folding stays
	 * quadratic at most in the notes of a hostile file */
	size_t *grp = malloc((k->n - i) * sizeof *grp), n = 0;
	if (!grp) {
		snprintf(out, cap, "%s.", subj);
		return;
	}
	for (size_t j = 0; j < k->n; j++) {
		if (k->v[j].kind != a->kind ||
		    strcmp(cut_at_paren(k->v[j].what, other, sizeof other), subj) != 0)
			continue;
		if (j < i) { /* said at an earlier note */
			free(grp);
			return;
		}
		/* a step with two notes of this subject (two checks that fired)
		 * is named once */
		bool named = false;
		for (size_t g = 0; g < n && !named; g++)
			named = k->v[grp[g]].step == k->v[j].step;
		if (!named)
			grp[n++] = j;
	}
	size_t l = (size_t)snprintf(out, cap, "%s, in step%s ", subj, n > 1 ? "s" : "");
	for (size_t g = 0; g < n && l < cap; g++) {
		char sl[32];
		l += (size_t)snprintf(out + l, cap - l, "%s%s",
				      g == 0 ? "" : g + 1 == n ? " and " : ", ",
				      report_step_label(c->root, (long)k->v[grp[g]].step, sl, sizeof sl));
	}
	if (l + 1 < cap)
		snprintf(out + l, cap - l, ".");
	free(grp);
}

/* The collected notes of a ramp's steps: a note only one step has keeps its
 * "Step N (R requests/s): " sentence; notes of the same kind in several
 * steps become one statement naming the steps, with each step's figures. */
static void fold_notes(struct content_ctx *c, struct cond_sink *k)
{
	bool *done = calloc(k->n ? k->n : 1, sizeof *done);
	size_t *idx = calloc(k->n ? k->n : 1, sizeof *idx);
	size_t *steps = calloc(k->n ? k->n : 1, sizeof *steps);
	for (size_t i = 0; i < k->n; i++) {
		const struct cond_note *a = &k->v[i];
		if (done && done[i])
			continue;
		size_t n = 0;
		for (size_t j = i; done && idx && steps && j < k->n; j++) {
			const struct cond_note *b = &k->v[j];
			if (!done[j] && b->kind == a->kind && !strcmp(b->key, a->key)) {
				done[j] = true;
				idx[n] = j;
				steps[n] = b->step;
				n++;
			}
		}
		char brief[1200];
		term_brief(c, k, i, brief, sizeof brief);
		if (n <= 1) {
			char sl[32];
			page_item_brief(c->d, brief, "Step %s (%s requests/s): %s",
					report_step_label(c->root, (long)a->step, sl, sizeof sl),
					fmt_rate(&c->f, rr_num_or(step_at(c, (long)a->step),
								  KEY_OFFERED_PER_S, NAN)),
					a->full);
			continue;
		}
		char list[1600], figs[4000] = "";
		step_list(c, steps, n, list, sizeof list);
		for (size_t j = 0; j < n; j++) {
			size_t l = strlen(figs);
			char sl[32];
			snprintf(figs + l, sizeof figs - l, "%sstep %s: %s", j ? "; " : "",
				 report_step_label(c->root, (long)k->v[idx[j]].step, sl, sizeof sl),
				 k->v[idx[j]].fig);
		}
		page_item_brief(c->d, brief, "%s, in steps %s: %s.%s", a->what, list, figs, a->why);
	}
	free(done);
	free(idx);
	free(steps);
}

/* Whether a warning pacer recorded says what a condition above already
 * says (the terminal says each caveat once): the self-contained target, an
 * interruption, steal time, too few repetitions for a verdict; in a run or
 * a ramp also a generator check that fired, requests that did not succeed,
 * requests left unsent or unanswered, failed TLS handshakes or HTTP/2
 * connections. Others (why
 * connections were missing, a rate under the offered one, a comparison's
 * generator-limited repetitions, ...) are said as recorded. */
static bool warning_said(const struct content_ctx *c, const char *w)
{
	static const char *const said[] = {
		"generator limited",
		"requests were due but",
		"requests were still waiting for a response",
		"requests timed out",
		"TLS handshake failed",
		"failed as HTTP/2",
		"failed as HTTP/3",
	};
	bool cmp = c->r->kind == RESULT_KIND_COMPARE;
	if ((c->self_contained && (!strncmp(w, "self-contained:", 15) ||
				   strstr(w, "is self-contained: driver and target"))) ||
	    (c->interrupted && !strncmp(w, "interrupted:", 12)) ||
	    strstr(w, "the hypervisor took") ||
	    (cmp && strstr(w, "complete repetitions: a verdict needs")))
		return true;
	if (cmp)
		return false;
	if (!strncmp(w, "errors ", 7))
		return true;
	for (size_t k = 0; k < N(said); k++)
		if (strstr(w, said[k]))
			return true;
	return false;
}

void content_conditions(struct content_ctx *c)
{
	char tgt[URL_HOST_CAP + 160];
	content_target(c, tgt, sizeof tgt);
	page_heading(c->d, 2, "conditions", "Test conditions and limits");
	page_list(c->d);
	if (c->self_contained) {
		if (c->r->kind == RESULT_KIND_COMPARE)
			page_item_brief(c->d,
				 "Self-contained variants: driver and target shared one process and "
				 "its cores.",
				 "Self-contained variants: pacer drove its own embedded target in the same "
				 "process, so driver and target shared the process and competed for the "
				 "machine's cores: a variant's figures include that contention.");
		else
			page_item_brief(
				c->d,
				"Self-contained: driver and target in one process; not a real server.",
				"Self-contained: the driver and the target (pacer's embedded plan %s) "
				"shared one process and one machine, so they competed for the same cores. "
				"The target's CPU figures (CPU per request, cost) count only the embedded "
				"target's own threads, not the driver's; its memory figure is the whole "
				"process's, driver included. Capacity and latency here are not those of a "
				"real server.",
				rr_str(c->root, "target.plan") ? rr_str(c->root, "target.plan")
							       : "?");
	}
	if (rr_str(c->plan, KEY_UNIX_SOCKET))
		page_item(c->d,
			  "Unix socket: requests went over the local socket %s, not TCP: no "
			  "network stack and no network in these figures.",
			  rr_str(c->plan, KEY_UNIX_SOCKET));
	char brief[URL_HOST_CAP + 400];
	snprintf(brief, sizeof brief, "Loopback (%s): no network in these figures.",
		 tgt[0] ? tgt : "loopback addresses");
	if (rr_str(c->plan, KEY_UNIX_SOCKET))
		; /* said above */
	else if (c->loopback)
		page_item_brief(c->d, brief,
			       "Loopback: the target was on this machine (%s), so requests never "
			       "crossed a network; network latency and bandwidth are not in these "
			       "figures.",
			       tgt[0] ? tgt : "loopback addresses");
	else if (tgt[0])
		page_item(c->d, "Network: requests went to %s; the figures include the network path "
			       "between the two machines.",
			 tgt);
	if (c->interrupted)
		page_item(c->d,
			 "Interrupted: the %s was stopped before its planned end (Ctrl-C or "
			 "SIGTERM); the figures cover only what was measured until then, and a "
			 "request then unanswered (in flight, or due and never sent) is in the "
			 "latency at its wait until then, a lower bound.",
			 result_kind_name(c->r->kind));
	if (!c->open_loop && c->r->kind != RESULT_KIND_RAMP && !rr_obj(c->plan, KEY_RAMP))
		page_item_brief(c->d,
			 "Closed loop: latency leaves out the queueing an open arrival would cause "
			 "(--rate measures it).",
			 "Closed loop: each connection waits for a response before sending again, so "
			 "latency excludes queueing that an open arrival of requests would cause "
			 "(coordinated omission); use an open-loop --rate to measure it.");
	double burst = rr_num_or(c->plan, KEY_BURST_SIZE, 1);
	snprintf(brief, sizeof brief,
		 "Bursts: requests were released in bursts of %.0f due at once; a burst's later "
		 "requests wait, in their latency.", burst);
	if (c->open_loop && burst > 1)
		page_item_brief(c->d, brief,
			 "Bursts: requests were released in bursts of %.0f due at the same time, the "
			 "bursts at the rate divided by %.0f, so the load came in steps rather than one "
			 "request at a time; a burst's later requests wait for its first ones to be "
			 "written or for a free connection, and that wait counts in their latency.",
			 burst, burst);
	if (c->r->kind == RESULT_KIND_RUN) {
		phase_conditions(c, rr_get(c->root, KEY_MEASURE), c->interrupted, "", NULL);
		gen_limited(c, rr_obj(c->root, KEY_GENERATOR_LIMITED), NULL, "", NULL);
		const json_t *m = rr_get(c->root, KEY_MEASURE);
		const json_t *tr = rr_obj(c->root, KEY_TARGET_RESOURCES);
		cpu_wait_conditions(c, tr ? tr : rr_obj(m, KEY_TARGET_RESOURCES),
				    rr_num_or(m, KEY_DURATION_S, NAN), "", NULL);
		if (c->repeat <= 1)
			page_item_brief(c->d, "One run: no estimate of run-to-run variance.",
				       "One run: there is no estimate of run-to-run variance (--repeat N "
				       "measures it).");
	} else if (c->r->kind == RESULT_KIND_RAMP) {
		/* the steps' notes are collected, then said once per kind: a note
		 * several steps share becomes one statement listing them */
		struct cond_sink k = {.collect = true};
		size_t i;
		const json_t *s;
		json_array_foreach(rr_arr(c->root, KEY_STEPS), i, s) {
			char label[96], sl[32];
			snprintf(label, sizeof label, "Step %s (%s requests/s): ",
				 report_step_label(c->root, (long)i, sl, sizeof sl),
				 fmt_rate(&c->f, rr_num_or(s, KEY_OFFERED_PER_S, NAN)));
			k.step = i;
			if (rr_true(s, KEY_INTERRUPTED))
				note(c, &k, label, CK_INTERRUPTED, NULL,
				     "interrupted: it never counts as passing.", "interrupted",
				     "Interrupted (never counts as passing)", NULL);
			bool cut = rr_true(s, KEY_INTERRUPTED);
			phase_conditions(c, rr_get(s, KEY_MEASURE), cut, label, &k);
			gen_limited(c, rr_obj(s, KEY_GENERATOR_LIMITED), s, label, &k);
			cpu_wait_conditions(c, step_target_res(s),
					    rr_num_or(rr_get(s, KEY_MEASURE), KEY_DURATION_S, NAN),
					    label, &k);
		}
		char sl[32];
		if (k.oom) /* what was collected, unfolded; the rest went straight in */
			for (size_t j = 0; j < k.n; j++)
				page_item(c->d, "Step %s: %s",
					 report_step_label(c->root, (long)k.v[j].step, sl, sizeof sl),
					 k.v[j].full);
		else
			fold_notes(c, &k);
		free(k.v);
		if (c->repeat <= 1)
			page_item_brief(c->d, "One measurement per step: no estimate of run-to-run "
					     "variance.",
				       "One measurement per step: there is no estimate of run-to-run "
				       "variance (--repeat N measures it).");
	} else {
		if (c->repeat < SUMMARY_MIN_N) {
			char few[200];
			snprintf(few, sizeof few,
				 "Only %u %s per variant: a verdict needs %d, so no difference is called.",
				 c->repeat, plural(c->repeat, "repetition", "repetitions"), SUMMARY_MIN_N);
			page_item_brief(c->d, few,
				       "Only %u %s per variant: the confidence intervals are coarse.",
				       c->repeat, plural(c->repeat, "repetition", "repetitions"));
		}
		page_item_brief(c->d, "", "A 95%% confidence interval misses the true ratio about one "
					 "time in twenty.");
		size_t i;
		const json_t *v;
		json_array_foreach(rr_arr(c->root, KEY_VARIANTS), i, v) {
			double errs = 0, failed = 0, transport = 0;
			bool split = false;
			size_t k;
			const json_t *rep;
			json_array_foreach(rr_arr(v, KEY_REPETITIONS), k, rep) {
				errs += rr_num_or(rep, KEY_ERRORS, 0);
				failed += rr_num_or(rep, KEY_FAILED_RESPONSES, 0);
				transport += rr_num_or(rep, KEY_TRANSPORT_ERRORS, 0);
				split = split || rr_get(rep, KEY_FAILED_RESPONSES);
			}
			const char *vn = rr_str(v, KEY_NAME) ? rr_str(v, KEY_NAME) : "?";
			if (errs > 0 && split)
				page_item(c->d,
					 "Variant %s: %s %s not succeed over its repetitions: %s failed "
					 "%s (the success rule), %s transport %s.",
					 vn, fmt_int(&c->f, errs), plural(errs, "request did", "requests did"),
					 fmt_int(&c->f, failed), plural(failed, "response", "responses"),
					 fmt_int(&c->f, transport), plural(transport, "error", "errors"));
			else if (errs > 0)
				page_item(c->d, "Variant %s: %s failed %s over its repetitions.", vn,
					 fmt_int(&c->f, errs), plural(errs, "request", "requests"));
		}
	}
	if (c->r->kind != RESULT_KIND_COMPARE) {
		const json_t *cost = rr_obj(c->root, KEY_COST);
		bool step_cost = false;
		size_t i;
		const json_t *s;
		json_array_foreach(rr_arr(c->root, KEY_STEPS), i, s)
			if (rr_obj(s, KEY_COST))
				step_cost = true;
		/* beside the cost figures: not in a ramp's terminal summary, which
		 * has none */
		if (cost || step_cost)
			page_item_brief(c->d, c->r->kind == RESULT_KIND_RAMP ? "" : NULL,
				       "Cost figures are CPU-only extrapolations (not memory, network, "
				       "storage or idle capacity), not a bill.");
	}
	double steal = content_most_steal(c);
	if (content_steal_warned(c) && isfinite(steal)) {
		snprintf(brief, sizeof brief, "Steal time: the hypervisor took up to %s of pacer's CPUs.",
			 fmt_pct(&c->f, steal));
		page_item_brief(c->d, brief,
			       "Steal time: the hypervisor took up to %s of the generator's CPUs during "
			       "the load; its pauses count in latency and send lag as pacer's "
			       "lateness, so the tails may be the host's, not the target's (repeat on "
			       "a quieter machine or on dedicated cores).",
			       fmt_pct(&c->f, steal));
	}
	size_t nw = rr_len(c->root, KEY_WARNINGS);
	if (nw) {
		/* in the terminal, what the conditions did not say, in the same list */
		page_audience(c->d, PAGE_REPORT);
		page_heading(c->d, 3, "warnings", "Warnings recorded by pacer");
		page_audience(c->d, PAGE_ALL);
		page_list(c->d);
		size_t i;
		const json_t *w;
		json_array_foreach(rr_arr(c->root, KEY_WARNINGS), i, w)
			if (json_is_string(w))
				page_item_brief(c->d, warning_said(c, json_string_value(w)) ? "" : NULL,
					       "%s", json_string_value(w));
	}
}
