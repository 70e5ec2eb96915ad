/* pacer — the difference between two saved results (history/diff.h). */
#include "history/diff.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "doc/keys.h"
#include "stats/hist.h"
#include "stats/summary.h"
#include "util/err.h"
#include "util/text.h"

#define DIFF_RESAMPLES 2000 /* bootstrap resamples, as pacer compare takes */
#define Z95 1.959964        /* two-sided 95 % of the normal distribution */

const char *diff_method_name(enum diff_method m)
{
	switch (m) {
	case DIFF_BOOTSTRAP:
		return "bootstrap over repetitions";
	case DIFF_PCT_CI:
		return "percentile intervals";
	case DIFF_ZTEST:
		return "two-proportion z test";
	case DIFF_THRESHOLD:
		return "noise threshold";
	case DIFF_NONE:
		break;
	}
	return "none";
}

/* ---- comparability ------------------------------------------------------- */

/* A JSON value at path as text for comparing ("" when absent). */
static void value_text(const json_t *o, const char *path, char *out, size_t cap)
{
	const json_t *v = rr_get(o, path);
	out[0] = '\0';
	if (!v || json_is_null(v))
		snprintf(out, cap, "null");
	else if (json_is_string(v))
		snprintf(out, cap, "%s", json_string_value(v));
	else if (json_is_number(v))
		snprintf(out, cap, "%.17g", json_number_value(v));
	else if (json_is_boolean(v))
		snprintf(out, cap, "%s", json_is_true(v) ? "true" : "false");
	else {
		char *s = json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS);
		snprintf(out, cap, "%s", s ? s : "?");
		free(s);
	}
}

static bool differs(struct diff_result *d, const char *field, const char *a, const char *b)
{
	if (!strcmp(a, b))
		return false;
	d->comparable = false;
	snprintf(d->field, sizeof d->field, "%s", field);
	snprintf(d->old_s, sizeof d->old_s, "%s", a);
	snprintf(d->new_s, sizeof d->new_s, "%s", b);
	return true;
}

static void major_of(const char *v, char *out, size_t cap)
{
	size_t n = strcspn(v, ".");
	snprintf(out, cap, "%.*s", (int)n, v);
}

/* The workload hash of r (plan.workload's, a compare's first variant's),
 * or NULL: results from before it, and a script's requests. */
static const char *workload_hash(const struct loaded_result *r)
{
	const json_t *w = rr_obj(rr_obj(r->root, KEY_PLAN), KEY_WORKLOAD);
	if (r->kind == RESULT_KIND_COMPARE) {
		const json_t *vars = rr_arr(r->root, KEY_VARIANTS);
		w = vars && json_array_size(vars) ? rr_obj(json_array_get(vars, 0), KEY_WORKLOAD)
						  : NULL;
	}
	return w ? rr_str(w, KEY_WORKLOAD_SHA256) : NULL;
}

/* The first field in which a and b differ, into d (comparable otherwise). */
static void comparability(const struct loaded_result *a, const struct loaded_result *b,
			  const struct history_headline *ha, const struct history_headline *hb,
			  struct diff_result *d)
{
	d->comparable = true;
	char x[160], y[160];
	if (differs(d, "kind", ha->kind, hb->kind))
		return;
	const json_t *pa = rr_obj(a->root, KEY_PLAN), *pb = rr_obj(b->root, KEY_PLAN);
	bool sc = !strcmp(ha->mode, "self_contained") && !strcmp(hb->mode, "self_contained");
	const char *wa = workload_hash(a), *wb = workload_hash(b);
	if (wa && wb) {
		/* what was sent, not where: the target may differ, but the
		 * embedded target's plan is part of a self-contained benchmark */
		if (sc && differs(d, "target", ha->target, hb->target))
			return;
		if (differs(d, "workload hash", wa, wb))
			return;
	} else if (sc && !rr_str(pa, "table.sha256") && !rr_str(pb, "table.sha256")) {
		/* the embedded target's loopback port is in the Host header, so in
		 * the wire bytes' hash: compare the plan, path and requests instead */
		if (differs(d, "target", ha->target, hb->target))
			return;
		value_text(pa, "workload.requests", x, sizeof x);
		value_text(pb, "workload.requests", y, sizeof y);
		if (differs(d, "plan.workload.requests", x, y))
			return;
	} else if (differs(d, "table hash", ha->table_hash ? ha->table_hash : "none",
			   hb->table_hash ? hb->table_hash : "none")) {
		return;
	}
	/* a ramp's steps, SLO and step length too: another SLO is another capacity */
	static const char *const workload[] = {
		"loop",        KEY_RATE_PER_S,  "arrival", KEY_BURST_SIZE,
		"connections", "concurrency",   "method",  KEY_BODY_BYTES,
		"threads",     KEY_STEPS_PER_S, "slo",     KEY_STEP_DURATION_S};
	for (size_t i = 0; i < sizeof workload / sizeof workload[0]; i++) {
		/* a closed loop has no rate; an open loop's concurrency is unused */
		if (!strcmp(workload[i], "concurrency") && rr_str(pa, KEY_LOOP) &&
		    !strcmp(rr_str(pa, KEY_LOOP), "open"))
			continue;
		value_text(pa, workload[i], x, sizeof x);
		value_text(pb, workload[i], y, sizeof y);
		/* results from before --burst-size released one request at a time */
		if (!strcmp(workload[i], KEY_BURST_SIZE)) {
			if (!strcmp(x, "null"))
				snprintf(x, sizeof x, "1");
			if (!strcmp(y, "null"))
				snprintf(y, sizeof y, "1");
		}
		char name[64];
		snprintf(name, sizeof name, "plan.%s", workload[i]);
		if (differs(d, name, x, y))
			return;
	}
	if (differs(d, "mode", ha->mode, hb->mode))
		return;
	/* the protocol: HTTP/1.1, HTTP/2 and HTTP/3 of one table are other
	 * measurements (results from before plan.http spoke HTTP/1.1) */
	value_text(pa, KEY_HTTP, x, sizeof x);
	value_text(pb, KEY_HTTP, y, sizeof y);
	if (differs(d, "plan.http", strcmp(x, "null") ? x : "1.1", strcmp(y, "null") ? y : "1.1"))
		return;
	if (differs(d, "environment.cpu_model", ha->cpu_model, hb->cpu_model) ||
	    differs(d, "environment.arch", ha->arch, hb->arch))
		return;
	value_text(a->root, "environment.cores", x, sizeof x);
	value_text(b->root, "environment.cores", y, sizeof y);
	if (differs(d, "environment.cores", x, y))
		return;
	major_of(ha->pacer_version, x, sizeof x);
	major_of(hb->pacer_version, y, sizeof y);
	differs(d, "pacer major version", x, y);
}

/* ---- the figures ------------------------------------------------------- */

/* The array of repetitions of a result (run --repeat, compare's first
 * variant), or NULL. */
static const json_t *reps_of(const struct loaded_result *r)
{
	if (r->kind == RESULT_KIND_COMPARE) {
		const json_t *vars = rr_arr(r->root, KEY_VARIANTS);
		return vars && json_array_size(vars)
			       ? rr_arr(json_array_get(vars, 0), KEY_REPETITIONS)
			       : NULL;
	}
	return rr_arr(r->root, KEY_REPETITIONS);
}

static const char *rep_field(enum headline_metric m)
{
	switch (m) {
	case HM_ACHIEVED: return KEY_ACHIEVED_PER_S;
	case HM_P50: return KEY_P50_US;
	case HM_P90: return KEY_P90_US;
	case HM_P99: return KEY_P99_US;
	case HM_P999: return KEY_P99_9_US;
	case HM_CAPACITY: return KEY_CAPACITY_PER_S;
	default:
		return NULL;
	}
}

/* The figure of each repetition into v (at most SUMMARY_MAX_N); count. */
static size_t rep_values(const json_t *reps, const char *field, double *v)
{
	size_t n = 0;
	for (size_t i = 0; reps && i < json_array_size(reps) && n < SUMMARY_MAX_N; i++) {
		double x;
		if (rr_num(json_array_get(reps, i), field, &x))
			v[n++] = x;
	}
	return n;
}

/* The measured phase whose figures are the headline (run: measure; ramp:
 * the highest passing step's), or NULL. */
static const json_t *phase_of(const struct loaded_result *r)
{
	if (r->kind == RESULT_KIND_RUN)
		return rr_obj(r->root, KEY_MEASURE);
	if (r->kind == RESULT_KIND_RAMP) {
		double step;
		const json_t *steps = rr_arr(r->root, KEY_STEPS);
		if (rr_num(r->root, "highest_passing.step", &step) && step >= 1 && steps &&
		    step <= (double)json_array_size(steps))
			return rr_obj(json_array_get(steps, (size_t)step - 1), KEY_MEASURE);
	}
	return NULL;
}

static double quantile_of(enum headline_metric m)
{
	switch (m) {
	case HM_P50:
	case HM_SESSION_P50:
		return 0.5;
	case HM_P90:
		return 0.9;
	case HM_P99:
	case HM_SESSION_P99:
		return 0.99;
	case HM_P999:
		return 0.999;
	default:
		return NAN;
	}
}

/* What holds a result's sessions and by_name: the headline's phase, or a
 * compare's first variant (NULL when it has none). */
static const json_t *sessions_holder(const struct loaded_result *r, const json_t *phase)
{
	if (r->kind != RESULT_KIND_COMPARE)
		return phase;
	const json_t *vars = rr_arr(r->root, KEY_VARIANTS);
	return vars && json_array_size(vars) ? json_array_get(vars, 0) : NULL;
}

/* The distribution-free 95 % interval of quantile q of h, in µs. */
static bool pct_interval(const struct hist *h, double q, double *lo, double *hi)
{
	double n = (double)h->total;
	if (n < 1)
		return false;
	double se = sqrt(n * q * (1 - q));
	double rlo = floor(n * q - Z95 * se), rhi = ceil(n * q + Z95 * se) + 1;
	if (rlo < 1)
		rlo = 1;
	if (rhi > n)
		rhi = n;
	*lo = (double)hist_percentile(h, 100.0 * rlo / n) / 1e3;
	*hi = (double)hist_percentile(h, 100.0 * rhi / n) / 1e3;
	return true;
}

/* Errors and requests of a phase for the z test. */
static bool error_counts(const json_t *ph, double *errors, double *n)
{
	return ph && rr_num(ph, "errors.total", errors) &&
	       (rr_num(ph, "success.of", n) || rr_num(ph, "requests.completed", n)) && *n > 0;
}

/* Sessions completed and started for the z test. */
static bool session_counts(const json_t *ss, double *completed, double *n)
{
	return ss && rr_num(ss, KEY_COMPLETED, completed) && rr_num(ss, KEY_STARTED, n) && *n > 0;
}

struct side {
	const struct loaded_result *r;
	const json_t *reps, *phase, *sessions, *by_name;
	struct hist lat, sess; /* the phase's latency, the sessions' duration */
	bool have_lat, have_sess;
};

static void side_open(struct side *s, const struct loaded_result *r)
{
	memset(s, 0, sizeof *s);
	s->r = r;
	s->reps = reps_of(r);
	s->phase = phase_of(r);
	const json_t *holder = sessions_holder(r, s->phase);
	s->sessions = rr_obj(holder, KEY_SESSIONS);
	s->by_name = rr_arr(holder, KEY_BY_NAME);
	char e[128];
	if (s->phase && rr_timing_hist(rr_obj(s->phase, KEY_LATENCY), &s->lat, e, sizeof e) == 0)
		s->have_lat = true;
	if (s->sessions &&
	    rr_timing_hist(rr_obj(s->sessions, KEY_DURATION), &s->sess, e, sizeof e) == 0)
		s->have_sess = true;
}

/* Row's percentile q compared by the two histograms' intervals. False:
 * a histogram is empty. */
static bool pct_row(struct diff_row *row, const struct hist *a, const struct hist *b, double q,
		    bool beyond)
{
	double alo, ahi, blo, bhi;
	if (!pct_interval(a, q, &alo, &ahi) || !pct_interval(b, q, &blo, &bhi))
		return false;
	row->method = DIFF_PCT_CI;
	row->n_old = (size_t)a->total;
	row->n_new = (size_t)b->total;
	if (ahi > 0 && alo > 0) {
		row->lo = blo / ahi;
		row->hi = bhi / alo;
	}
	row->significant = (blo > ahi || bhi < alo) && beyond;
	return true;
}

static void one_row(struct diff_row *row, const struct side *a, const struct side *b, double noise)
{
	enum headline_metric m = row->m;
	row->ratio = row->old_v != 0 ? row->new_v / row->old_v : NAN;
	row->delta = row->new_v - row->old_v;
	row->lo = row->hi = NAN;
	bool higher_better = headline_metric_higher_better(m);
	row->worse = higher_better ? row->new_v < row->old_v : row->new_v > row->old_v;
	bool beyond = isfinite(row->ratio) && fabs(row->ratio - 1) > noise;

	const char *rf = rep_field(m);
	double va[SUMMARY_MAX_N], vb[SUMMARY_MAX_N];
	size_t na = rf ? rep_values(a->reps, rf, va) : 0, nb = rf ? rep_values(b->reps, rf, vb) : 0;
	/* the bootstrap only with the repetitions a verdict needs (stats/summary.h:
	 * below SUMMARY_MIN_N it calls identical inputs different too often);
	 * fewer: each side's pooled histogram */
	if (na >= SUMMARY_MIN_N && nb >= SUMMARY_MIN_N) {
		struct ratio_ci ci;
		summary_ratio_ci(va, na, vb, nb, DIFF_RESAMPLES, 1 + (uint64_t)m, noise, &ci);
		row->method = DIFF_BOOTSTRAP;
		row->n_old = na;
		row->n_new = nb;
		if (ci.defined) {
			row->lo = ci.lo;
			row->hi = ci.hi;
			row->significant = ci.significant;
		}
		return;
	}
	double q = quantile_of(m);
	bool sess = m == HM_SESSION_P50 || m == HM_SESSION_P99;
	if (isfinite(q) && (sess ? a->have_sess && b->have_sess : a->have_lat && b->have_lat) &&
	    pct_row(row, sess ? &a->sess : &a->lat, sess ? &b->sess : &b->lat, q, beyond))
		return;
	if (m == HM_ERRORS || m == HM_SESSIONS) {
		double ea, n1, eb, n2;
		if (m == HM_ERRORS
			    ? error_counts(a->phase, &ea, &n1) && error_counts(b->phase, &eb, &n2)
			    : session_counts(a->sessions, &ea, &n1) &&
				      session_counts(b->sessions, &eb, &n2)) {
			row->method = DIFF_ZTEST;
			row->n_old = (size_t)n1;
			row->n_new = (size_t)n2;
			double p1 = ea / n1, p2 = eb / n2, p = (ea + eb) / (n1 + n2);
			double se = sqrt(p * (1 - p) * (1 / n1 + 1 / n2));
			row->significant = se > 0 ? fabs(p2 - p1) / se > Z95 : p1 != p2;
			return;
		}
	}
	row->method = DIFF_THRESHOLD;
	row->significant = m == HM_ERRORS ? fabs(row->delta) > noise * 100 : beyond;
}

/* The by_name entry named name, or NULL. */
static const json_t *entry_named(const json_t *by_name, const char *name)
{
	for (size_t i = 0; by_name && i < json_array_size(by_name); i++) {
		const json_t *e = json_array_get(by_name, i);
		const char *n = rr_str(e, KEY_NAME);
		if (n && !strcmp(n, name))
			return e;
	}
	return NULL;
}

/* One step's p50 or p99 (m HM_P50 or HM_P99) of a and b. */
static void step_row(struct diff_row *row, enum headline_metric m, const json_t *ea,
		     const json_t *eb, const struct hist *ha, const struct hist *hb, double noise)
{
	const char *path = m == HM_P50 ? "latency.p50_us" : "latency.p99_us";
	row->m = m;
	row->old_v = rr_num_or(ea, path, NAN);
	row->new_v = rr_num_or(eb, path, NAN);
	row->ratio = row->old_v != 0 ? row->new_v / row->old_v : NAN;
	row->delta = row->new_v - row->old_v;
	row->lo = row->hi = NAN;
	row->worse = row->new_v > row->old_v;
	bool beyond = isfinite(row->ratio) && fabs(row->ratio - 1) > noise;
	if (ha && hb && pct_row(row, ha, hb, quantile_of(m), beyond))
		return;
	row->method = DIFF_THRESHOLD;
	row->significant = beyond;
}

/* A session run's steps that both sides have, in the new side's order. */
static void diff_steps(const struct side *a, const struct side *b, double noise,
		       struct diff_result *out)
{
	if (!a->sessions || !b->sessions)
		return;
	for (size_t i = 0;
	     b->by_name && i < json_array_size(b->by_name) && out->n_steps < HISTORY_STEPS_MAX;
	     i++) {
		const json_t *eb = json_array_get(b->by_name, i);
		const char *name = rr_str(eb, KEY_NAME);
		const json_t *ea = name ? entry_named(a->by_name, name) : NULL;
		if (!ea)
			continue;
		struct diff_step *s = &out->steps[out->n_steps++];
		snprintf(s->name, sizeof s->name, "%s", name);
		struct hist ha, hb;
		char e[128];
		bool have_a = rr_timing_hist(rr_obj(ea, KEY_LATENCY), &ha, e, sizeof e) == 0;
		bool have_b = rr_timing_hist(rr_obj(eb, KEY_LATENCY), &hb, e, sizeof e) == 0;
		const struct hist *pa = have_a ? &ha : NULL, *pb = have_b ? &hb : NULL;
		step_row(&s->p50, HM_P50, ea, eb, pa, pb, noise);
		step_row(&s->p99, HM_P99, ea, eb, pa, pb, noise);
		if (have_a)
			hist_free(&ha);
		if (have_b)
			hist_free(&hb);
	}
}

void diff_comparable(const struct loaded_result *a, const struct loaded_result *b,
		     struct diff_result *out)
{
	memset(out, 0, sizeof *out);
	struct history_headline ha, hb;
	history_headline_of(a, &ha);
	history_headline_of(b, &hb);
	comparability(a, b, &ha, &hb, out);
}

void diff_results(const struct loaded_result *a, const struct loaded_result *b, double noise,
		  struct diff_result *out)
{
	memset(out, 0, sizeof *out);
	struct history_headline ha, hb;
	history_headline_of(a, &ha);
	history_headline_of(b, &hb);
	comparability(a, b, &ha, &hb, out);
	struct side sa, sb;
	side_open(&sa, a);
	side_open(&sb, b);
	for (int m = 0; m < HM_COUNT; m++) {
		if (!isfinite(ha.v[m]) || !isfinite(hb.v[m]))
			continue;
		struct diff_row *row = &out->rows[out->n_rows++];
		row->m = (enum headline_metric)m;
		row->old_v = ha.v[m];
		row->new_v = hb.v[m];
		one_row(row, &sa, &sb, noise);
	}
	diff_steps(&sa, &sb, noise, out);
	hist_free(&sa.lat);
	hist_free(&sb.lat);
	hist_free(&sa.sess);
	hist_free(&sb.sess);
}

/* ---- --fail-on rules ------------------------------------------------------ */

__attribute__((format(printf, 3, 4))) static int rule_err(char *err, size_t errlen,
							   const char *fmt, ...)
{
	if (err && errlen) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
		text_one_line(err);
	}
	return PACER_EPARSE;
}

const char *diff_rule_metric(const struct diff_rule *r, char *buf, size_t cap)
{
	if (!r->step[0])
		return headline_metric_name(r->m);
	snprintf(buf, cap, "step:%s.%s", r->step, headline_metric_name(r->m));
	return buf;
}

/* "step:NAME.p50" or "step:NAME.p99" in buf into r. 0 or PACER_EPARSE. */
static int parse_step(const char *buf, struct diff_rule *r)
{
	const char *name = buf + 5, *dot = strrchr(name, '.');
	size_t nl = dot ? (size_t)(dot - name) : 0;
	if (!dot || !nl || nl >= sizeof r->step ||
	    (strcmp(dot + 1, "p50") && strcmp(dot + 1, "p99")))
		return PACER_EPARSE;
	memcpy(r->step, name, nl);
	r->step[nl] = '\0';
	r->m = strcmp(dot + 1, "p50") ? HM_P99 : HM_P50;
	return 0;
}

static int parse_one(const char *s, size_t len, struct diff_rule *r, char *err, size_t errlen)
{
	char buf[64 + HISTORY_STEP_NAME_CAP];
	memset(r, 0, sizeof *r);
	while (len && isspace((unsigned char)*s))
		s++, len--;
	while (len && isspace((unsigned char)s[len - 1]))
		len--;
	if (len == 0 || len >= sizeof buf)
		return rule_err(err, errlen, "--fail-on: empty or over-long rule '%.*s'", (int)len, s);
	memcpy(buf, s, len);
	buf[len] = '\0';
	char *op = strpbrk(buf, "<>");
	if (!op)
		return rule_err(err, errlen,
				"--fail-on '%s': expected METRIC>+N%% or METRIC<-N%% (or errors>+Npp)",
				buf);
	r->op = *op;
	*op = '\0';
	if (!strncmp(buf, "step:", 5)) {
		if (parse_step(buf, r))
			return rule_err(err, errlen,
					"--fail-on '%s%c%s': expected step:NAME.p50 or "
					"step:NAME.p99 (a session step's latency)",
					buf, r->op, op + 1);
	} else {
		int m = headline_metric_parse(buf);
		if (m < 0)
			return rule_err(
				err, errlen,
				"--fail-on '%s%c%s': unknown metric '%s' (" HEADLINE_METRIC_LIST
				", or step:NAME.p50 / step:NAME.p99)",
				buf, r->op, op + 1, buf);
		r->m = (enum headline_metric)m;
	}
	char *num = op + 1, *end;
	double v = strtod(num, &end);
	if (end == num || !isfinite(v))
		return rule_err(err, errlen, "--fail-on '%s%c%s': expected a number after '%c'", buf,
				r->op, num, r->op);
	if (!strcmp(end, "%")) {
		r->pp = false;
		r->threshold = v / 100;
	} else if (!strcmp(end, "pp")) {
		if (r->m != HM_ERRORS)
			return rule_err(err, errlen,
					"--fail-on '%s%c%s': pp (percentage points) is for errors; "
					"give %% for %s",
					buf, r->op, num, buf);
		r->pp = true;
		r->threshold = v;
	} else {
		return rule_err(err, errlen, "--fail-on '%s%c%s': expected %% or pp after the number",
				buf, r->op, num);
	}
	if (r->m == HM_ERRORS && !r->pp)
		return rule_err(err, errlen, "--fail-on '%s%c%s': errors change in pp (e.g. +0.1pp)",
				buf, r->op, num);
	return 0;
}

int diff_rules_parse(const char *expr, struct diff_rule *r, size_t cap, size_t *n, char *err,
		     size_t errlen)
{
	*n = 0;
	if (!expr || !*expr)
		return rule_err(err, errlen, "--fail-on: empty");
	const char *p = expr;
	for (;;) {
		size_t len = strcspn(p, ",");
		if (*n == cap)
			return rule_err(err, errlen, "--fail-on: more than %zu rules", cap);
		int rc = parse_one(p, len, &r[*n], err, errlen);
		if (rc)
			return rc;
		(*n)++;
		if (!p[len])
			break;
		p += len + 1;
	}
	return 0;
}

/* The row rule looks at in d, or NULL. */
static const struct diff_row *rule_row(const struct diff_rule *rule, const struct diff_result *d)
{
	if (rule->step[0]) {
		for (size_t i = 0; i < d->n_steps; i++)
			if (!strcmp(d->steps[i].name, rule->step))
				return rule->m == HM_P50 ? &d->steps[i].p50 : &d->steps[i].p99;
		return NULL;
	}
	for (size_t i = 0; i < d->n_rows; i++)
		if (d->rows[i].m == rule->m)
			return &d->rows[i];
	return NULL;
}

bool diff_rule_fires(const struct diff_rule *rule, const struct diff_result *d)
{
	const struct diff_row *row = rule_row(rule, d);
	if (!row || !row->significant)
		return false;
	double change = rule->pp ? row->delta : row->ratio - 1;
	if (!isfinite(change))
		return false;
	return rule->op == '>' ? change > rule->threshold : change < rule->threshold;
}
