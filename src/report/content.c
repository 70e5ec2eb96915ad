/* pacer — the report's content, generated from the facts in a result
 * (docs/report.md): a headline, identity, methodology, test conditions and
 * limits, results, cost and resources, and what the number means and does
 * not establish. Every sentence is built from fields of the result; a field
 * that is missing is left out (or shown as "–"), never invented. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report/render_int.h"
#include "util/units.h"

struct ctx {
	const struct loaded_result *r;
	const json_t *root, *plan, *env;
	struct doc *d;
	const struct chart_set *cs;
	struct fring f;
	bool self_contained;  /* mode self_contained (any variant, for compare) */
	bool loopback;        /* every target on a loopback address */
	bool open_loop;
	bool interrupted;
	unsigned repeat;      /* repetitions (1 when not recorded) */
	char host[160];       /* the target's host, "" when unknown or several */
};

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* ---- small helpers -------------------------------------------------------- */

/* Host of an http(s) URL, without port or brackets; "" when not a URL. */
static void url_host(const char *url, char *out, size_t cap)
{
	out[0] = '\0';
	if (!url)
		return;
	const char *p = strstr(url, "://");
	if (!p)
		return;
	p += 3;
	const char *at = NULL;
	for (const char *q = p; *q && *q != '/' && *q != '?' && *q != '#'; q++)
		if (*q == '@')
			at = q;
	if (at)
		p = at + 1;
	size_t n = 0;
	if (*p == '[') {
		p++;
		while (p[n] && p[n] != ']')
			n++;
	} else {
		while (p[n] && p[n] != ':' && p[n] != '/' && p[n] != '?' && p[n] != '#')
			n++;
	}
	if (n >= cap)
		n = cap - 1;
	memcpy(out, p, n);
	out[n] = '\0';
}

static bool host_is_loopback(const char *h)
{
	if (!h[0])
		return false;
	if (strncmp(h, "127.", 4) == 0 || strcmp(h, "::1") == 0 || strcasecmp(h, "localhost") == 0 ||
	    strcmp(h, "0:0:0:0:0:0:0:1") == 0 || strncasecmp(h, "::ffff:127.", 11) == 0)
		return true;
	size_t n = strlen(h);
	return n > 10 && strcasecmp(h + n - 10, ".localhost") == 0;
}

static const char *plural(double n, const char *one, const char *many)
{
	return n == 1 ? one : many;
}

/* argv as a shell command line, each argument quoted when it needs it. */
static char *command_line(const json_t *argv)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (!f)
		return NULL;
	fputs("pacer", f);
	size_t i;
	const json_t *a;
	json_array_foreach(argv, i, a) {
		if (!json_is_string(a))
			continue;
		const char *s = json_string_value(a);
		fputc(' ', f);
		bool plain = *s != '\0';
		for (const char *p = s; *p; p++)
			if (!isalnum((unsigned char)*p) && !strchr("_./:=@%+,-", *p))
				plain = false;
		if (plain) {
			fputs(s, f);
			continue;
		}
		fputc('\'', f);
		for (const char *p = s; *p; p++) {
			if (*p == '\'')
				fputs("'\\''", f);
			else
				fputc(*p, f);
		}
		fputc('\'', f);
	}
	if (fclose(f) != 0) {
		free(buf);
		return NULL;
	}
	return buf;
}

static const char *machine(struct ctx *c, char *out, size_t cap)
{
	double cores;
	const char *model = rr_str(c->env, "cpu_model");
	if (rr_num(c->env, "cores", &cores) && cores >= 1) {
		if (model && *model)
			snprintf(out, cap, "a %s-core %s machine", fmt_int(&c->f, cores), model);
		else
			snprintf(out, cap, "a %s-core machine", fmt_int(&c->f, cores));
	} else if (model && *model) {
		snprintf(out, cap, "a %s machine", model);
	} else {
		snprintf(out, cap, "a machine not recorded in the result");
	}
	return out;
}

static const char *where(struct ctx *c, char *out, size_t cap)
{
	if (c->loopback)
		snprintf(out, cap, "over loopback HTTP");
	else if (c->host[0])
		snprintf(out, cap, "over HTTP to %s", c->host);
	else
		snprintf(out, cap, "over HTTP");
	return out;
}

/* "median (min–max)" of summary[key] scaled; "–" when absent. */
static const char *med_range(struct ctx *c, char *out, size_t cap, const json_t *summary,
			     const char *key, bool us)
{
	const json_t *s = rr_obj(summary, key);
	double med, lo, hi;
	if (!s || !rr_num(s, "median", &med)) {
		snprintf(out, cap, "–");
		return out;
	}
	bool range = rr_num(s, "min", &lo) && rr_num(s, "max", &hi);
	if (us) {
		if (range)
			snprintf(out, cap, "%s (%s–%s)", fmt_us(&c->f, med), fmt_us(&c->f, lo),
				 fmt_us(&c->f, hi));
		else
			snprintf(out, cap, "%s", fmt_us(&c->f, med));
	} else {
		if (range)
			snprintf(out, cap, "%s (%s–%s)", fmt_rate(&c->f, med), fmt_rate(&c->f, lo),
				 fmt_rate(&c->f, hi));
		else
			snprintf(out, cap, "%s", fmt_rate(&c->f, med));
	}
	return out;
}

/* Status keys of by_status in numeric order. */
static size_t status_keys(const json_t *by_status, const char **keys, size_t cap)
{
	size_t n = 0;
	const char *k;
	const json_t *v;
	json_object_foreach((json_t *)by_status, k, v) {
		if (!json_is_number(v) || n == cap)
			continue;
		keys[n++] = k;
	}
	for (size_t i = 1; i < n; i++)
		for (size_t j = i; j > 0; j--) {
			long a = strtol(keys[j - 1], NULL, 10), b = strtol(keys[j], NULL, 10);
			if (a < b || (a == b && strcmp(keys[j - 1], keys[j]) <= 0))
				break;
			const char *t = keys[j];
			keys[j] = keys[j - 1];
			keys[j - 1] = t;
		}
	return n;
}

/* ---- facts ------------------------------------------------------------------ */

static void gather(struct ctx *c)
{
	c->root = c->r->root;
	c->plan = rr_obj(c->root, "plan");
	c->env = rr_obj(c->root, "environment");
	const char *mode = rr_str(c->root, "mode");
	c->self_contained = mode && strcmp(mode, "self_contained") == 0;
	const char *loop = rr_str(c->plan, "loop");
	c->open_loop = loop && strcmp(loop, "open") == 0;
	c->interrupted = rr_true(c->root, "interrupted");
	double rep = rr_num_or(c->plan, "repeat", 1);
	c->repeat = rep >= 1 && rep < 1e6 ? (unsigned)rep : 1;
	if (c->r->kind == RESULT_KIND_COMPARE) {
		c->loopback = true;
		size_t i;
		const json_t *v;
		bool first = true;
		json_array_foreach(rr_arr(c->root, "variants"), i, v) {
			char h[160];
			url_host(rr_str(v, "url"), h, sizeof h);
			if (!host_is_loopback(h))
				c->loopback = false;
			const char *vm = rr_str(v, "mode");
			if (vm && strcmp(vm, "self_contained") == 0)
				c->self_contained = true;
			if (first)
				snprintf(c->host, sizeof c->host, "%s", h);
			else if (strcmp(c->host, h) != 0)
				c->host[0] = '\0';
			first = false;
		}
	} else {
		url_host(rr_str(c->plan, "url"), c->host, sizeof c->host);
		c->loopback = host_is_loopback(c->host);
	}
}

/* ---- 1. summary ----------------------------------------------------------- */

static void summary_run(struct ctx *c)
{
	struct phase_fig m;
	report_phase_fig(rr_get(c->root, "measure"), &m);
	char mach[256], wh[200], subject[256];
	const char *plan_name = rr_str(c->root, "target.plan");
	if (c->self_contained)
		snprintf(subject, sizeof subject,
			 "pacer's embedded target (%s%s%sin the same process as the load generator)",
			 plan_name ? "plan " : "", plan_name ? plan_name : "", plan_name ? ", " : "");
	else
		snprintf(subject, sizeof subject, "the target");
	char *s = NULL;
	if (c->open_loop) {
		if (asprintf(&s,
			     "In an open-loop test %s on %s, %s measured p50 %s and p99 %s at %s "
			     "requests/s offered (%s achieved) with a %s error rate.",
			     where(c, wh, sizeof wh), machine(c, mach, sizeof mach), subject,
			     fmt_us(&c->f, m.p50), fmt_us(&c->f, m.p99), fmt_rate(&c->f, m.offered),
			     fmt_rate(&c->f, m.achieved), fmt_pct(&c->f, m.error_pct)) < 0)
			s = NULL;
	} else {
		double conc = rr_num_or(c->plan, "concurrency", NAN);
		if (asprintf(&s,
			     "In a closed-loop test with %s %s %s on %s, %s completed %s requests/s "
			     "with p50 %s and p99 %s (measured from each send) and a %s error rate.",
			     fmt_int(&c->f, conc), plural(conc, "connection", "connections"),
			     where(c, wh, sizeof wh), machine(c, mach, sizeof mach), subject,
			     fmt_rate(&c->f, m.achieved), fmt_us(&c->f, m.p50), fmt_us(&c->f, m.p99),
			     fmt_pct(&c->f, m.error_pct)) < 0)
			s = NULL;
	}
	const json_t *rs = rr_obj(c->root, "repeat_summary");
	size_t nrep = rr_len(c->root, "repetitions");
	char extra[512] = "";
	if (rs && nrep > 1) {
		double med, lo, hi;
		if (rr_num(rs, "p99_us.median", &med) && rr_num(rs, "p99_us.min", &lo) &&
		    rr_num(rs, "p99_us.max", &hi))
			snprintf(extra, sizeof extra,
				 " Across %zu repetitions p99 ranged from %s to %s (median %s).", nrep,
				 fmt_us(&c->f, lo), fmt_us(&c->f, hi), fmt_us(&c->f, med));
	}
	char tail[256] = "";
	if (c->interrupted)
		snprintf(tail, sizeof tail, " The run was interrupted before its planned end.");
	if (rr_true(c->root, "generator_limited.flagged"))
		snprintf(tail + strlen(tail), sizeof tail - strlen(tail),
			 " pacer flagged the load generator itself as a possible limit.");
	doc_para(c->d, true, "%s%s%s", s ? s : "", extra, tail);
	free(s);
}

/* ", about 5,000 per core over 1 core (the embedded target's threads)"
 * from highest_passing; "" without a per-core figure. Older results have
 * no cores_basis: the count is then given without one. */
static void per_core_phrase(struct ctx *c, const json_t *hp, char *out, size_t cap)
{
	double pc, cores;
	out[0] = '\0';
	if (!rr_num(hp, "per_core_per_s", &pc) || !rr_num(hp, "cores", &cores))
		return;
	const char *b = rr_str(hp, "cores_basis");
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

static const json_t *step_at(struct ctx *c, long i)
{
	return i >= 0 ? json_array_get(rr_arr(c->root, "steps"), (size_t)i) : NULL;
}

static void summary_ramp(struct ctx *c)
{
	const json_t *steps = rr_arr(c->root, "steps");
	size_t n = json_array_size(steps);
	const char *slo = rr_str(c->plan, "slo");
	char mach[256], wh[200];
	double lo = INFINITY, hi = 0;
	size_t i;
	const json_t *s;
	json_array_foreach(steps, i, s) {
		double off;
		if (rr_num(s, "offered_per_s", &off)) {
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
	double dur = rr_num_or(c->plan, "step_duration_s", NAN);
	char lead[700];
	snprintf(lead, sizeof lead, "In an open-loop ramp of %s (%s measured each) %s on %s, ", range,
		 fmt_s(&c->f, dur), where(c, wh, sizeof wh), machine(c, mach, sizeof mach));

	const json_t *hp = rr_obj(c->root, "highest_passing");
	long k = hp ? report_focus_step(c->root) : -1;
	char body[1200] = "";
	if (k >= 0) {
		const json_t *st = step_at(c, k);
		struct phase_fig m;
		report_phase_fig(rr_get(st, "measure"), &m);
		double off = rr_num_or(hp, "offered_per_s", rr_num_or(st, "offered_per_s", NAN));
		double ach = rr_num_or(hp, "achieved_per_s", rr_num_or(st, "achieved_per_s", NAN));
		double errp = rr_num_or(st, "error_pct", m.error_pct);
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
		/* the lowest failing step above it */
		const json_t *next = NULL;
		double next_off = INFINITY;
		json_array_foreach(steps, i, s) {
			double o;
			if (!rr_true(s, "verdict.pass") && rr_num(s, "offered_per_s", &o) && o > off &&
			    o < next_off) {
				next = s;
				next_off = o;
			}
		}
		size_t bl = strlen(body);
		if (next) {
			const char *reason = rr_str(next, "verdict.reason");
			snprintf(body + bl, sizeof body - bl, " The next step tried, %s requests/s, %s%s%s.",
				 fmt_rate(&c->f, next_off), reason ? "did not: " : "failed",
				 reason ? reason : "", rr_true(next, "interrupted") ? " (interrupted)" : "");
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
			if (rr_num(s, "offered_per_s", &o) && o < fo) {
				first = s;
				fo = o;
			}
		}
		const char *reason = rr_str(first, "verdict.reason");
		snprintf(body, sizeof body,
			 "no step met the SLO %s: even the lowest step, %s requests/s, failed%s%s.",
			 slo ? slo : "(none recorded)", fmt_rate(&c->f, fo), reason ? ": " : "",
			 reason ? reason : "");
	} else {
		snprintf(body, sizeof body, "no step was measured.");
	}
	char tail[400] = "";
	double knee;
	if (rr_num(c->root, "knee_per_s", &knee))
		snprintf(tail, sizeof tail,
			 " Median latency first exceeded twice its low-load value at %s requests/s.",
			 fmt_rate(&c->f, knee));
	if (c->interrupted)
		snprintf(tail + strlen(tail), sizeof tail - strlen(tail),
			 " The ramp was interrupted before its planned end.");
	doc_para(c->d, true, "%s%s%s", lead, body, tail);
}

static const char *cmp_metric_label(const char *m)
{
	return m ? m : "?";
}

static void summary_compare(struct ctx *c)
{
	char mach[256], wh[200], load[256];
	double rate;
	const json_t *ramp = rr_obj(c->plan, "ramp");
	if (ramp)
		snprintf(load, sizeof load,
			 "a ramp-mode comparison (capacity under the SLO %s, open loop)",
			 rr_str(ramp, "slo") ? rr_str(ramp, "slo") : "(none)");
	else if (c->open_loop && rr_num(c->plan, "rate_per_s", &rate))
		snprintf(load, sizeof load, "an open-loop comparison at %s requests/s per variant",
			 fmt_rate(&c->f, rate));
	else
		snprintf(load, sizeof load, "a closed-loop comparison with %s connections per variant",
			 fmt_int(&c->f, rr_num_or(c->plan, "concurrency", NAN)));
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (!f) {
		c->d->oom = true;
		return;
	}
	fprintf(f, "In %s %s on %s, with %u interleaved %s per variant: ", load,
		where(c, wh, sizeof wh), machine(c, mach, sizeof mach), c->repeat,
		plural(c->repeat, "repetition", "repetitions"));
	const json_t *ratios = rr_arr(c->root, "ratios");
	/* per variant: its ratios in the order given */
	const json_t *variants = rr_arr(c->root, "variants");
	size_t vi;
	const json_t *v;
	bool any = false;
	json_array_foreach(variants, vi, v) {
		const char *name = rr_str(v, "name");
		if (vi >= REPORT_MAX_VARIANTS)
			break;
		if (!name || vi == 0)
			continue;
		bool first = true;
		size_t i;
		const json_t *r;
		json_array_foreach(ratios, i, r) {
			if (i >= REPORT_MAX_RATIOS)
				break;
			const char *vn = rr_str(r, "variant");
			const char *metric = rr_str(r, "metric");
			if (!vn || strcmp(vn, name) != 0 || !metric)
				continue;
			/* the headline keeps throughput/capacity, p50 and p99 */
			if (strcmp(metric, "throughput") && strcmp(metric, "capacity") &&
			    strcmp(metric, "p50") && strcmp(metric, "p99"))
				continue;
			if (first) {
				const char *base = rr_str(r, "baseline");
				fprintf(f, "%s%s against baseline %s: ", any ? " " : "", name,
					base ? base : "?");
			}
			const char *verdict = rr_str(r, "verdict");
			fprintf(f, "%s%s %s (ratio %s, 95%% CI %s–%s)", first ? "" : "; ",
				cmp_metric_label(metric), verdict ? verdict : "?",
				fmt_ratio(&c->f, rr_num_or(r, "ratio", NAN)),
				fmt_ratio(&c->f, rr_num_or(r, "ci95_low", NAN)),
				fmt_ratio(&c->f, rr_num_or(r, "ci95_high", NAN)));
			first = false;
			any = true;
		}
		if (!first)
			fputc('.', f);
	}
	if (!any)
		fprintf(f, "no ratios were recorded.");
	if (c->interrupted)
		fprintf(f, " The comparison was interrupted before its planned end.");
	if (fclose(f) != 0) {
		free(buf);
		c->d->oom = true;
		return;
	}
	doc_para(c->d, true, "%s", buf);
	free(buf);
}

/* ---- 2. identity -------------------------------------------------------------- */

static void kv(struct ctx *c, const char *k, const char *v)
{
	const char *row[2] = {k, v && *v ? v : "not recorded"};
	doc_row(c->d, row);
}

/* ---- the workload as sent (plan.workload; docs/result.md) ------------------- */

/* "127-byte body", "bodies of 10 B to 4.0 KiB, 1.2 MiB in all": the bodies
 * of a workload object; "no body" when none has one. */
static void wl_bodies(struct ctx *c, const json_t *wl, char *out, size_t cap)
{
	double n = rr_num_or(wl, "bodies.requests", 0), lo = rr_num_or(wl, "bodies.bytes_min", 0),
	       hi = rr_num_or(wl, "bodies.bytes_max", 0), all = rr_num_or(wl, "bodies.bytes_total", 0);
	if (!(n > 0))
		snprintf(out, cap, "no body");
	else if (lo == hi)
		snprintf(out, cap, "%s-byte %s", fmt_int(&c->f, lo), plural(n, "body", "bodies"));
	else
		snprintf(out, cap, "bodies of %s to %s, %s in all", fmt_bytes(&c->f, lo),
			 fmt_bytes(&c->f, hi), fmt_bytes(&c->f, all));
}

/* "GET 1 (50.00%), POST 1 (50.00%)": methods with counts and shares. */
static void wl_methods(struct ctx *c, const json_t *wl, char *out, size_t cap)
{
	out[0] = '\0';
	size_t i, l = 0;
	const json_t *m;
	json_array_foreach(rr_arr(wl, "methods"), i, m) {
		if (l + 80 > cap)
			break;
		l += (size_t)snprintf(out + l, cap - l, "%s%s %s (%s)", l ? ", " : "",
				      rr_str(m, "method") ? rr_str(m, "method") : "?",
				      fmt_int(&c->f, rr_num_or(m, "requests", NAN)),
				      fmt_pct(&c->f, rr_num_or(m, "share_pct", NAN)));
	}
	double other = rr_num_or(wl, "other_methods_requests", 0);
	if (other > 0 && l + 60 < cap)
		snprintf(out + l, cap - l, ", other methods %s", fmt_int(&c->f, other));
}

/* "rest_id 600 (66.67%), create 300 (33.30%)": request names with counts
 * and shares; "" when none has a name. */
static void wl_names(struct ctx *c, const json_t *wl, char *out, size_t cap)
{
	out[0] = '\0';
	size_t i, l = 0;
	const json_t *m;
	json_array_foreach(rr_arr(wl, "names"), i, m) {
		if (l + 120 > cap)
			break;
		l += (size_t)snprintf(out + l, cap - l, "%s%s %s (%s)", l ? ", " : "",
				      rr_str(m, "name") ? rr_str(m, "name") : "?",
				      fmt_int(&c->f, rr_num_or(m, "requests", NAN)),
				      fmt_pct(&c->f, rr_num_or(m, "share_pct", NAN)));
	}
	if (!l)
		return;
	double other = rr_num_or(wl, "other_names_requests", 0),
	       unnamed = rr_num_or(wl, "unnamed_requests", 0);
	if (other > 0 && l + 60 < cap)
		l += (size_t)snprintf(out + l, cap - l, ", other names %s", fmt_int(&c->f, other));
	if (unnamed > 0 && l + 60 < cap)
		snprintf(out + l, cap - l, ", no name %s", fmt_int(&c->f, unnamed));
}

/* "GET /vast", "POST /openrtb2/auction (127-byte body)" for listed request k. */
static void wl_request(struct ctx *c, const json_t *r, char *out, size_t cap)
{
	double body = rr_num_or(r, "body_bytes", 0);
	const char *name = rr_str(r, "name");
	char b[64] = "";
	if (body > 0)
		snprintf(b, sizeof b, "%s-byte body", fmt_int(&c->f, body));
	snprintf(out, cap, "%s %s%s%s%s%s%s%s", rr_str(r, "method") ? rr_str(r, "method") : "?",
		 rr_str(r, "target") ? rr_str(r, "target") : "?",
		 rr_true(r, "target_cut") ? "..." : "", name || b[0] ? " (" : "",
		 name ? name : "", name && b[0] ? ", " : "", b, name || b[0] ? ")" : "");
}

/* What was sent, as a phrase: "one POST request to URL with a 12-byte body",
 * "2 requests in turn, one per route of the embedded plan: GET /vast, POST
 * /openrtb2/auction (127-byte body)", "1,000 requests of the request table
 * api.jsonl (SHA-256 0123456789abcdef...) in turn: GET 800 (80.00%), ...".
 * url: how to name the URL ("the target URL", or the URL itself). NULL
 * when wl is NULL (an older result: the caller says it its own way). */
static bool wl_phrase(struct ctx *c, const json_t *wl, const json_t *plan, const char *url,
		      char *out, size_t cap)
{
	if (!wl)
		return false;
	const char *src = rr_str(wl, "source");
	double n = rr_num_or(wl, "requests", NAN);
	bool random = rr_str(wl, "order") && !strcmp(rr_str(wl, "order"), "random");
	const json_t *listed = rr_arr(wl, "listed");
	char bodies[160], methods[400];
	wl_bodies(c, wl, bodies, sizeof bodies);
	wl_methods(c, wl, methods, sizeof methods);
	const json_t *r0 = json_array_get(listed, 0);
	if (n == 1 && r0) {
		double body = rr_num_or(r0, "body_bytes", 0);
		snprintf(out, cap, "one %s request to %s%s%s%s", rr_str(r0, "method") ? rr_str(r0, "method") : "?",
			 url, body > 0 ? " with a " : "", body > 0 ? fmt_int(&c->f, body) : "",
			 body > 0 ? "-byte body" : "");
		return true;
	}
	const char *order = random ? "at random" : "in turn";
	size_t l = 0;
	if (src && !strcmp(src, "embedded_routes"))
		l = (size_t)snprintf(out, cap, "%s requests %s, one per route of the embedded plan",
				     fmt_int(&c->f, n), order);
	else if (src && !strcmp(src, "bodies"))
		l = (size_t)snprintf(out, cap, "%s requests to %s %s, one per body file of %s (%s)",
				     fmt_int(&c->f, n), url, order,
				     rr_str(plan, "table.source") ? rr_str(plan, "table.source") : "?",
				     bodies);
	else if (src && !strcmp(src, "table"))
		l = (size_t)snprintf(out, cap, "%s requests of the request table %s (SHA-256 %.16s...) %s",
				     fmt_int(&c->f, n),
				     rr_str(plan, "table.source") ? rr_str(plan, "table.source") : "?",
				     rr_str(plan, "table.sha256") ? rr_str(plan, "table.sha256") : "?",
				     order);
	else
		l = (size_t)snprintf(out, cap, "%s requests %s", fmt_int(&c->f, n), order);
	if (l >= cap)
		return true;
	if (rr_true(wl, "listed_all") && json_array_size(listed) <= 4) {
		size_t i;
		const json_t *r;
		json_array_foreach(listed, i, r) {
			char one[400];
			wl_request(c, r, one, sizeof one);
			if (l + strlen(one) + 4 >= cap)
				break;
			l += (size_t)snprintf(out + l, cap - l, "%s%s", i ? ", " : ": ", one);
		}
	} else {
		char names[600];
		wl_names(c, wl, names, sizeof names);
		l += (size_t)snprintf(out + l, cap - l, ": %s", methods);
		if (l < cap && names[0])
			l += (size_t)snprintf(out + l, cap - l, "; by name %s", names);
		if (l < cap && src && strcmp(src, "bodies") != 0)
			snprintf(out + l, cap - l, "; %s", bodies);
	}
	return true;
}

/* Identity rows for the requests of a workload object. */
static void wl_rows(struct ctx *c, const json_t *wl)
{
	char b[1024];
	wl_phrase(c, wl, c->plan, "the target URL", b, sizeof b);
	kv(c, "Requests", b);
	wl_methods(c, wl, b, sizeof b);
	kv(c, "Methods", b);
	wl_names(c, wl, b, sizeof b);
	if (b[0])
		kv(c, "Request names", b);
	size_t i;
	const json_t *r;
	json_array_foreach(rr_arr(wl, "listed"), i, r) {
		char k[32];
		snprintf(k, sizeof k, "Request %zu", i + 1);
		wl_request(c, r, b, sizeof b);
		kv(c, k, b);
	}
	double n = rr_num_or(wl, "requests", NAN);
	if (!rr_true(wl, "listed_all") && rr_len(wl, "listed")) {
		snprintf(b, sizeof b, "%s more (only the first %zu listed)",
			 fmt_int(&c->f, n - (double)rr_len(wl, "listed")), rr_len(wl, "listed"));
		kv(c, "Other requests", b);
	}
	if (n > 1) { /* one request: its body is in the Requests row */
		char bodies[160];
		wl_bodies(c, wl, bodies, sizeof bodies);
		snprintf(b, sizeof b, "%s of %s requests: %s",
			 fmt_int(&c->f, rr_num_or(wl, "bodies.requests", 0)), fmt_int(&c->f, n), bodies);
		kv(c, "Bodies", b);
	}
	if (rr_str(wl, "sha256"))
		kv(c, "Requests SHA-256", rr_str(wl, "sha256"));
}

static void identity(struct ctx *c)
{
	doc_heading(c->d, 2, "identity", "Identity");
	const char *hdr[2] = {"Field", "Value"};
	doc_table(c->d, 2, 0, hdr);
	char b[1024];
	kv(c, "Report id", c->r->id);
	snprintf(b, sizeof b, "%s, schema version %d.%d", result_kind_name(c->r->kind),
		 c->r->schema_major, c->r->schema_minor);
	kv(c, "Result", b);
	kv(c, "Result started at", rr_str(c->root, "started_at"));
	const char *scen = rr_str(c->root, "scenario");
	if (!scen)
		scen = rr_str(c->plan, "scenario");
	if (scen)
		kv(c, "Scenario", scen);
	char *cmd = rr_arr(c->plan, "argv") ? command_line(rr_arr(c->plan, "argv")) : NULL;
	kv(c, "Command", cmd);
	free(cmd);
	const char *mode = rr_str(c->root, "mode");
	if (mode && strcmp(mode, "self_contained") == 0)
		kv(c, "Mode", "self_contained: pacer drove its own embedded target, in the same process");
	else if (mode && strcmp(mode, "live") == 0)
		kv(c, "Mode", "live: pacer drove a separate target");
	else
		kv(c, "Mode", mode);
	if (c->r->kind != RESULT_KIND_COMPARE) {
		/* a table's URLs are its own: plan.url is only its first */
		kv(c, rr_obj(c->plan, "table") ? "First request's URL" : "Target URL",
		   rr_str(c->plan, "url"));
		if (rr_str(c->plan, "unix_socket"))
			kv(c, "Unix socket", rr_str(c->plan, "unix_socket"));
		const json_t *t = rr_obj(c->root, "target");
		if (t) {
			double th = rr_num_or(t, "threads", NAN);
			snprintf(b, sizeof b, "embedded plan %s, %s %s",
				 rr_str(t, "plan") ? rr_str(t, "plan") : "?", fmt_int(&c->f, th),
				 plural(th, "thread", "threads"));
			kv(c, "Embedded target", b);
		}
	} else {
		size_t i;
		const json_t *v;
		json_array_foreach(rr_arr(c->root, "variants"), i, v) {
			char k[96];
			const char *name = rr_str(v, "name");
			snprintf(k, sizeof k, "Variant %s%s", name ? name : "?", i == 0 ? " (baseline)" : "");
			const char *tg = rr_str(v, "target"), *url = rr_str(v, "url"),
				   *vm = rr_str(v, "mode");
			snprintf(b, sizeof b, "%s%s%s%s%s%s", tg ? tg : "", tg && url ? " at " : "",
				 url ? url : "", vm ? " (" : "", vm ? vm : "", vm ? ")" : "");
			kv(c, k, b);
			if (wl_phrase(c, rr_obj(v, "workload"), c->plan, "its URL", b, sizeof b)) {
				snprintf(k, sizeof k, "Variant %s requests", name ? name : "?");
				kv(c, k, b);
			}
		}
	}
	const char *ver = rr_str(c->root, "pacer.version"), *commit = rr_str(c->root, "pacer.commit");
	snprintf(b, sizeof b, "%s (commit %s)", ver ? ver : "?", commit ? commit : "?");
	kv(c, "pacer", b);
	const char *os = rr_str(c->env, "os"), *kern = rr_str(c->env, "kernel"),
		   *arch = rr_str(c->env, "arch");
	snprintf(b, sizeof b, "%s %s, %s", os ? os : "?", kern ? kern : "", arch ? arch : "?");
	kv(c, "OS / arch", c->env ? b : NULL);
	double cores = rr_num_or(c->env, "cores", NAN);
	const char *model = rr_str(c->env, "cpu_model");
	snprintf(b, sizeof b, "%s, %s online %s", model ? model : "?", fmt_int(&c->f, cores),
		 plural(cores, "core", "cores"));
	kv(c, "CPU", c->env ? b : NULL);
	kv(c, "Host name", rr_str(c->env, "hostname"));
	const json_t *table = rr_obj(c->plan, "table");
	if (table) {
		const char *src = rr_str(table, "source"), *fmtn = rr_str(table, "format"),
			   *sha = rr_str(table, "sha256"), *order = rr_str(table, "order");
		snprintf(b, sizeof b, "%s (%s), %s requests, %s order, SHA-256 %s", src ? src : "?",
			 fmtn ? fmtn : "?", fmt_int(&c->f, rr_num_or(table, "requests", NAN)),
			 order ? order : "?", sha ? sha : "?");
		kv(c, "Request table", b);
	}
	const json_t *wl = rr_obj(c->plan, "workload");
	if (wl) {
		wl_rows(c, wl);
	} else if (!table) {
		/* an older result, or a comparison (each variant's requests are
		 * listed with it) */
		const char *method = rr_str(c->plan, "method");
		size_t nh = rr_len(c->plan, "headers");
		double body = rr_num_or(c->plan, "body_bytes", 0);
		bool variants_wl = c->r->kind == RESULT_KIND_COMPARE &&
				   rr_obj(json_array_get(rr_arr(c->root, "variants"), 0), "workload");
		if (!variants_wl) {
			snprintf(b, sizeof b, "one request: %s to %s, %zu extra %s, %s body %s",
				 method ? method : "?",
				 c->r->kind == RESULT_KIND_COMPARE ? "each variant's URL" : "the target URL",
				 nh, plural((double)nh, "header", "headers"), fmt_int(&c->f, body),
				 plural(body, "byte", "bytes"));
			kv(c, "Requests", b);
		}
	}
	{ /* -H headers go on every request, a table's too */
		size_t i;
		const json_t *h;
		json_array_foreach(rr_arr(c->plan, "headers"), i, h) {
			if (json_is_string(h)) {
				char k[32];
				snprintf(k, sizeof k, "Header %zu", i + 1);
				kv(c, k, json_string_value(h));
			}
		}
	}
	const json_t *tls = rr_obj(c->plan, "tls");
	if (tls) {
		const char *trust = rr_str(tls, "trust");
		const char *tver = rr_str(c->root, "measure.tls.version");
		const char *cipher = rr_str(c->root, "measure.tls.cipher");
		snprintf(b, sizeof b, "HTTPS, certificate %s (trust: %s)%s%s%s%s%s",
			 rr_true(tls, "verify") ? "verified" : "NOT verified", trust ? trust : "?",
			 tver ? ", " : "", tver ? tver : "", cipher ? " " : "", cipher ? cipher : "",
			 rr_true(tls, "resume") ? ", session resumption on" : "");
		kv(c, "TLS", b);
	}
	const json_t *rules = rr_obj(c->plan, "rules");
	if (rules) {
		if (rr_str(rules, "success"))
			kv(c, "Success rule", rr_str(rules, "success"));
		size_t i;
		const json_t *o;
		json_array_foreach(rr_arr(rules, "outcomes"), i, o) {
			char k[96];
			snprintf(k, sizeof k, "Outcome %s", rr_str(o, "name") ? rr_str(o, "name") : "?");
			kv(c, k, rr_str(o, "rule"));
		}
		const json_t *st = rr_obj(rules, "server_time");
		if (st) {
			snprintf(b, sizeof b, "%s%s%s", rr_str(st, "source") ? rr_str(st, "source") : "?",
				 rr_str(st, "name") && *rr_str(st, "name") ? " " : "",
				 rr_str(st, "name") ? rr_str(st, "name") : "");
			kv(c, "Server-reported time from", b);
		}
	}
	double seed;
	if (rr_num(c->plan, "seed", &seed)) {
		const json_t *sv = rr_get(c->plan, "seed");
		if (json_is_integer(sv))
			snprintf(b, sizeof b, "%lld", (long long)json_integer_value(sv));
		else
			snprintf(b, sizeof b, "%.0f", seed);
		kv(c, "Seed", b);
	}
}

/* ---- 3. methodology ------------------------------------------------------------- */

static void methodology(struct ctx *c)
{
	doc_heading(c->d, 2, "methodology", "Methodology");
	const char *arrival = rr_str(c->plan, "arrival");
	double threads = rr_num_or(c->plan, "threads", NAN);
	double conns = rr_num_or(c->plan, "connections", NAN);
	double conc = rr_num_or(c->plan, "concurrency", NAN);
	double warm = rr_num_or(c->plan, "warmup_s", NAN);
	double timeout = rr_num_or(c->plan, "timeout_ms", NAN);
	double drain = rr_num_or(c->plan, "drain_ms", NAN);
	doc_list(c->d);
	if (c->r->kind == RESULT_KIND_COMPARE) {
		doc_item(c->d,
			 "Variants measured interleaved: each repetition runs every variant once, the "
			 "order rotating from one repetition to the next (%s), so slow drift of the "
			 "machine affects all variants alike.",
			 rr_str(c->plan, "order") ? rr_str(c->plan, "order") : "order not recorded");
		doc_item(c->d,
			 "Each variant's figure is the median over its %u %s; ratios to the baseline "
			 "(the first variant) come with a 95%% bootstrap confidence interval, and a "
			 "difference is called significant only when the interval excludes 1 and the "
			 "ratio is more than %s away from 1.",
			 c->repeat, plural(c->repeat, "repetition", "repetitions"),
			 fmt_pct(&c->f, rr_num_or(c->plan, "noise_pct", NAN)));
	}
	if (c->open_loop) {
		double rate = rr_num_or(c->plan, "rate_per_s", NAN);
		if (c->r->kind == RESULT_KIND_RAMP) {
			char list[512] = "";
			size_t i;
			const json_t *s;
			json_array_foreach(rr_arr(c->plan, "steps_per_s"), i, s) {
				size_t l = strlen(list);
				if (l > sizeof list - 40) {
					snprintf(list + l, sizeof list - l, ", ...");
					break;
				}
				snprintf(list + l, sizeof list - l, "%s%s", i ? ", " : "",
					 fmt_rate(&c->f, json_is_number(s) ? json_number_value(s) : NAN));
			}
			doc_item(c->d,
				 "Open loop, in steps of offered load (%s requests/s planned): each step "
				 "sends requests on a fixed schedule (%s arrivals), whether or not earlier "
				 "ones have returned.",
				 list, arrival ? arrival : "?");
		} else if (c->r->kind == RESULT_KIND_COMPARE && rr_obj(c->plan, "ramp")) {
			doc_item(c->d, "Open loop, in steps of offered load per variant (ramp mode).");
		} else {
			doc_item(c->d,
				 "Open loop: requests were due on a fixed schedule at %s requests/s (%s "
				 "arrivals), whether or not earlier ones had returned.",
				 fmt_rate(&c->f, rate), arrival ? arrival : "?");
		}
		doc_item(c->d,
			 "Latency is measured from each request's scheduled time to the last byte of "
			 "its response, so time spent waiting inside pacer for a free connection counts "
			 "against the target (no coordinated omission). Service time (write to last "
			 "byte) is kept beside it.");
		doc_item(c->d, "Up to %s %s over %s worker %s.", fmt_int(&c->f, conns),
			 plural(conns, "connection", "connections"), fmt_int(&c->f, threads),
			 plural(threads, "thread", "threads"));
	} else {
		double reqs;
		char bound[96] = "";
		if (rr_num(c->plan, "requests", &reqs))
			snprintf(bound, sizeof bound, ", for %s requests", fmt_int(&c->f, reqs));
		doc_item(c->d,
			 "Closed loop: %s %s, each with one request outstanding: a new request is "
			 "sent when the previous one returns%s.",
			 fmt_int(&c->f, conc), plural(conc, "connection", "connections"), bound);
		doc_item(c->d,
			 "Latency is measured from each send to the last byte of the response. When the "
			 "target slows down, fewer requests are sent: waiting that real users would see "
			 "is not in these figures (coordinated omission).");
		doc_item(c->d, "%s worker %s.", fmt_int(&c->f, threads),
			 plural(threads, "thread", "threads"));
	}
	{
		char wl[1200];
		const json_t *w = rr_obj(c->plan, "workload");
		if (wl_phrase(c, w, c->plan, "the target URL", wl, sizeof wl)) {
			/* a short list names each request; the shares then follow */
			bool listed = rr_true(w, "listed_all") && rr_len(w, "listed") <= 4;
			char methods[400];
			wl_methods(c, w, methods, sizeof methods);
			if (listed && rr_num_or(w, "requests", 0) > 1)
				doc_item(c->d, "What was sent: %s. Methods: %s of the requests.", wl,
					 methods);
			else
				doc_item(c->d, "What was sent: %s.%s", wl,
					 listed ? ""
						: " The JSON result lists the first requests one by one "
						  "(plan.workload.listed).");
		}
	}
	if (c->r->kind == RESULT_KIND_RAMP) {
		double sd = rr_num_or(c->plan, "step_duration_s", NAN);
		double sw = rr_num_or(c->plan, "step_warmup_s", NAN);
		const char *slo = rr_str(c->plan, "slo");
		doc_item(c->d,
			 "Each step: a %s warm-up (not counted), %s measured, then a drain of up to %s "
			 "for responses still due; connections carry over from step to step.",
			 fmt_s(&c->f, sw), fmt_s(&c->f, sd), fmt_us(&c->f, drain * 1e3));
		if (slo)
			doc_item(c->d,
				 "Each step is judged against the SLO %s; the ramp stops after the first "
				 "failing step%s.",
				 slo, rr_num_or(c->plan, "after_fail", 0) > 0 ? " (plus --after-fail steps)"
									   : "");
		else
			doc_item(c->d, "No SLO was given: every step passes.");
		if (rr_true(c->plan, "refine"))
			doc_item(c->d,
				 "Refined: pacer bisected between the last passing and first failing "
				 "rates until they were within %s.",
				 fmt_pct(&c->f, rr_num_or(c->plan, "precision", NAN) * 100));
	} else if (c->r->kind == RESULT_KIND_RUN) {
		double dur;
		if (rr_num(c->plan, "duration_s", &dur))
			doc_item(c->d, "Measured phase: %s planned (%s measured)%s.", fmt_s(&c->f, dur),
				 fmt_s(&c->f, rr_num_or(c->root, "measure.duration_s", NAN)),
				 warm > 0 ? "" : ", with no warm-up");
		if (warm > 0)
			doc_item(c->d, "Warm-up: %s of the same load before the measured phase, not "
				       "counted.",
				 fmt_s(&c->f, warm));
		doc_item(c->d, "Drain: after the measured phase, up to %s to collect responses to "
			       "requests already due.",
			 fmt_us(&c->f, drain * 1e3));
	} else {
		const json_t *ramp = rr_obj(c->plan, "ramp");
		if (ramp)
			doc_item(c->d, "Each repetition is a ramp per variant, %s per step, judged by the "
				       "SLO %s; the figure compared is the capacity (highest passing "
				       "offered rate).",
				 fmt_s(&c->f, rr_num_or(ramp, "step_duration_s", NAN)),
				 rr_str(ramp, "slo") ? rr_str(ramp, "slo") : "(none)");
		else
			doc_item(c->d, "Each repetition: %s warm-up (not counted), then %s measured.",
				 fmt_s(&c->f, warm), fmt_s(&c->f, rr_num_or(c->plan, "duration_s", NAN)));
	}
	if (c->r->kind != RESULT_KIND_COMPARE) {
		if (c->repeat > 1)
			doc_item(c->d,
				 "Repetitions: %u on the same connections; the main figures pool every "
				 "repetition, and each repetition's figures are kept with their median "
				 "and range.",
				 c->repeat);
		else
			doc_item(c->d, "Repetitions: one.");
	}
	doc_item(c->d,
		 "Per-request timeout %s: a request without a full response by then is closed, "
		 "counted as an error and its connection reopened.",
		 fmt_us(&c->f, timeout * 1e3));
	doc_item(c->d,
		 "Percentiles come from log-linear histograms with a relative error under 0.1%%; "
		 "minimum, maximum and mean are exact.");
}

/* ---- 4. conditions and limits -------------------------------------------------------- */

/* What the errors of a phase were: failed responses by status, then
 * request transport errors by kind. */
static void errors_detail(struct ctx *c, const json_t *ph, char *out, size_t cap)
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

static void phase_conditions(struct ctx *c, const json_t *ph, const char *label)
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

static void gen_limited(struct ctx *c, const json_t *gl, const char *label)
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

static void conditions(struct ctx *c)
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

/* ---- 5. results ------------------------------------------------------------------------ */

static void latency_table(struct ctx *c, const json_t *ph)
{
	static const struct {
		const char *key;
		const char *open_label, *closed_label;
		bool open_only;
	} rows[] = {
		{"latency", "latency (from scheduled time)", "latency (from send)", false},
		{"latency_ok", "… of the requests that succeeded", "… of the requests that succeeded", false},
		{"latency_failed", "… of the requests that failed", "… of the requests that failed", false},
		{"service_time", "service time (write to last byte)", "service time (write to last byte)", false},
		{"ttfb", "time to first byte", "time to first byte", false},
		{"server_time", "server-reported time", "server-reported time", false},
		{"send_lag", "send lag (due to write)", "", true},
		{"loop_lag", "loop lag (generator lateness)", "", true},
		{"connect_time", "connect time (per connection)", "connect time (per connection)", false},
		{"handshake", "TLS handshake (per connection)", "TLS handshake (per connection)", false},
	};
	const char *hdr[9] = {"Timing", "p50", "p90", "p99", "p99.9", "p99.99", "max", "mean", "count"};
	doc_table(c->d, 9, 0x1fe, hdr);
	for (size_t i = 0; i < N(rows); i++) {
		const json_t *t = rr_obj(ph, rows[i].key);
		if (!t || (rows[i].open_only && !c->open_loop))
			continue;
		double count = rr_num_or(t, "count", NAN);
		if (i > 0 && !(count > 0))
			continue;
		/* successes and failures apart only when there were failures */
		if ((i == 1 || i == 2) && !(rr_num_or(ph, "latency_failed.count", 0) > 0))
			continue;
		const char *row[9] = {
			c->open_loop ? rows[i].open_label : rows[i].closed_label,
			fmt_us(&c->f, rr_num_or(t, "p50_us", NAN)),
			fmt_us(&c->f, rr_num_or(t, "p90_us", NAN)),
			fmt_us(&c->f, rr_num_or(t, "p99_us", NAN)),
			fmt_us(&c->f, rr_num_or(t, "p99_9_us", NAN)),
			fmt_us(&c->f, rr_num_or(t, "p99_99_us", NAN)),
			fmt_us(&c->f, rr_num_or(t, "max_us", NAN)),
			fmt_us(&c->f, rr_num_or(t, "mean_us", NAN)),
			fmt_int(&c->f, count),
		};
		doc_row(c->d, row);
	}
}

static void responses_table(struct ctx *c, const json_t *ph)
{
	const json_t *bs = rr_obj(ph, "responses.by_status");
	const char *keys[1000];
	size_t n = status_keys(bs, keys, N(keys));
	if (!n)
		return;
	double total = 0;
	for (size_t i = 0; i < n; i++)
		total += rr_num_or(bs, keys[i], 0);
	const char *hdr[3] = {"Status", "Responses", "Share"};
	doc_table(c->d, 3, 0x6, hdr);
	for (size_t i = 0; i < n; i++) {
		double v = rr_num_or(bs, keys[i], 0);
		const char *row[3] = {keys[i], fmt_int(&c->f, v),
				      fmt_pct(&c->f, total > 0 ? v / total * 100 : NAN)};
		doc_row(c->d, row);
	}
}

static void outcomes_table(struct ctx *c, const json_t *ph)
{
	const json_t *oc = rr_arr(ph, "outcomes");
	const json_t *succ = rr_obj(ph, "success");
	if (!oc && !succ)
		return;
	const char *hdr[5] = {"Outcome", "Rule", "Count", "Of", "Rate"};
	doc_table(c->d, 5, 0x1c, hdr);
	if (succ) {
		const char *row[5] = {"success", rr_str(succ, "rule"),
				      fmt_int(&c->f, rr_num_or(succ, "ok", NAN)),
				      fmt_int(&c->f, rr_num_or(succ, "ok", 0) + rr_num_or(succ, "failed", 0)),
				      fmt_pct(&c->f, rr_num_or(succ, "ok_pct", NAN))};
		doc_row(c->d, row);
	}
	size_t i;
	const json_t *o;
	json_array_foreach(oc, i, o) {
		const char *row[5] = {rr_str(o, "name"), rr_str(o, "rule"),
				      fmt_int(&c->f, rr_num_or(o, "count", NAN)),
				      fmt_int(&c->f, rr_num_or(o, "of", NAN)),
				      fmt_pct(&c->f, rr_num_or(o, "rate_pct", NAN))};
		doc_row(c->d, row);
	}
}

/* Per request name (a phase's "by_name"), when there is more than one. */
static void by_name_table(struct ctx *c, const json_t *ph, bool heading)
{
	const json_t *bn = rr_arr(ph, "by_name");
	if (!bn || json_array_size(bn) < 2)
		return;
	if (heading)
		doc_heading(c->d, 3, "by-name", "By request name");
	const char *hdr[10] = {"Name", "Sent", "Completed", "Errors", "Error rate",
			       "p50", "p90", "p99", "p99.9", "max"};
	doc_table(c->d, 10, 0x3fe, hdr);
	size_t i;
	const json_t *e;
	double pooled = NAN, sub_bits = NAN;
	json_array_foreach(bn, i, e) {
		if (i >= RESULT_READ_MAX_NAMES)
			break;
		if (!json_is_object(e))
			continue;
		char label[300];
		const char *name = rr_str(e, "name");
		if (rr_true(e, "other")) {
			pooled = rr_num_or(e, "pooled_names", NAN);
			if (pooled >= 0)
				snprintf(label, sizeof label, "other (%s pooled %s)", fmt_int(&c->f, pooled),
					 plural(pooled, "name", "names"));
			else
				snprintf(label, sizeof label, "other (pooled)");
			name = label;
		}
		if (!isfinite(sub_bits))
			sub_bits = rr_num_or(e, "latency.sub_bits", NAN);
		const char *row[10] = {name ? name : "–",
				       fmt_int(&c->f, rr_num_or(e, "sent", NAN)),
				       fmt_int(&c->f, rr_num_or(e, "completed", NAN)),
				       fmt_int(&c->f, rr_num_or(e, "errors", NAN)),
				       fmt_pct(&c->f, rr_num_or(e, "error_pct", NAN)),
				       fmt_us(&c->f, rr_num_or(e, "latency.p50_us", NAN)),
				       fmt_us(&c->f, rr_num_or(e, "latency.p90_us", NAN)),
				       fmt_us(&c->f, rr_num_or(e, "latency.p99_us", NAN)),
				       fmt_us(&c->f, rr_num_or(e, "latency.p99_9_us", NAN)),
				       fmt_us(&c->f, rr_num_or(e, "latency.max_us", NAN))};
		doc_row(c->d, row);
	}
	char prec[96] = "";
	if (sub_bits >= 2 && sub_bits <= RESULT_HIST_MAX_SUB_BITS)
		snprintf(prec, sizeof prec, " Per-name latency is kept to within %s.",
			 fmt_pct(&c->f, 100.0 / ldexp(1.0, (int)sub_bits - 1)));
	doc_para(c->d, false,
		 "Errors per name are its responses that failed the success rule plus its "
		 "requests that failed on the connection (read, write, timeout, parse, closed); "
		 "the error rate is of the requests that ended.%s%s",
		 prec, isfinite(pooled) ? " Names beyond the first 64 are pooled as \"other\"." : "");
}

static void chart_ref(struct ctx *c, const char *name)
{
	const struct chart *ch = charts_find(c->cs, name);
	if (ch)
		doc_chart(c->d, ch->name, ch->title);
}

/* "N open when it began, M opened during it (K closed by the server)" of
 * a phase's connections; false when the phase has no open_at_start (an
 * older result). */
static bool conns_phrase(struct ctx *c, const json_t *conns, char *out, size_t cap)
{
	double at = 0, opened = rr_num_or(conns, "opened", NAN), cbs = rr_num_or(conns, "closed_by_server", 0);
	if (!rr_num(conns, "open_at_start", &at))
		return false;
	snprintf(out, cap, "%s open when it began, %s opened during it%s%s%s", fmt_int(&c->f, at),
		 fmt_int(&c->f, opened), cbs > 0 ? " (" : "", cbs > 0 ? fmt_int(&c->f, cbs) : "",
		 cbs > 0 ? " closed by the server)" : "");
	return true;
}

/* A run's connections in the measured phase, and what its warm-up did. */
static void connections_para(struct ctx *c, const json_t *warm, const json_t *ph)
{
	char m[256], w[256];
	if (!conns_phrase(c, rr_obj(ph, "connections"), m, sizeof m))
		return;
	if (warm && conns_phrase(c, rr_obj(warm, "connections"), w, sizeof w)) {
		struct phase_fig f;
		report_phase_fig(warm, &f);
		doc_para(c->d, false,
			 "Connections of the measured phase: %s. The warm-up before it (%s, not "
			 "counted) completed %s %s with %s %s and p99 %s; connections: %s.",
			 m, fmt_s(&c->f, f.duration_s), fmt_int(&c->f, f.completed),
			 plural(f.completed, "response", "responses"), fmt_int(&c->f, f.errors),
			 plural(f.errors, "error", "errors"), fmt_us(&c->f, f.p99), w);
	} else {
		doc_para(c->d, false, "Connections of the measured phase: %s.", m);
	}
}

/* A ramp's warm-up of each step and the connections of each phase. */
static void ramp_warmups(struct ctx *c, const json_t *steps)
{
	bool any = false;
	size_t i;
	const json_t *s;
	json_array_foreach(steps, i, s)
		any = any || rr_obj(s, "warmup") || rr_num_or(s, "measure.connections.open_at_start", -1) >= 0;
	if (!any)
		return;
	doc_heading(c->d, 3, "warmups", "Warm-up and connections of each step");
	const char *hdr[9] = {"Step",          "Warm-up",        "Warm-up responses",
			      "Warm-up errors", "Warm-up p99",    "Open at warm-up start",
			      "Opened in warm-up", "Open at measure start", "Opened in measure"};
	doc_table(c->d, 9, 0x1fe, hdr);
	json_array_foreach(steps, i, s) {
		const json_t *w = rr_obj(s, "warmup");
		char label[32];
		snprintf(label, sizeof label, "%s%zu", rr_true(s, "refine") ? "r" : "", i + 1);
		const char *row[9] = {
			label,
			w ? fmt_s(&c->f, rr_num_or(w, "duration_s", NAN)) : "none",
			w ? fmt_int(&c->f, rr_num_or(w, "requests.completed", NAN)) : "–",
			w ? fmt_int(&c->f, rr_num_or(w, "errors", NAN)) : "–",
			w ? fmt_us(&c->f, rr_num_or(w, "p99_us", NAN)) : "–",
			w ? fmt_int(&c->f, rr_num_or(w, "connections.open_at_start", NAN)) : "–",
			w ? fmt_int(&c->f, rr_num_or(w, "connections.opened", NAN)) : "–",
			fmt_int(&c->f, rr_num_or(s, "measure.connections.open_at_start", NAN)),
			fmt_int(&c->f, rr_num_or(s, "measure.connections.opened", NAN)),
		};
		doc_row(c->d, row);
	}
	doc_para(c->d, false,
		 "Connections carry over from step to step; connections opened before a step's "
		 "first request count as opened in its first phase (the warm-up, when it has one).");
}

static void results_run(struct ctx *c)
{
	const json_t *ph = rr_get(c->root, "measure");
	struct phase_fig m;
	report_phase_fig(ph, &m);
	doc_heading(c->d, 3, "throughput", "Throughput and errors");
	const char *hdr[8] = {"Offered/s", "Achieved/s", "Sent", "Completed", "Errors",
			      "Error rate", "Drop rate", "Measured"};
	doc_table(c->d, 8, 0xff, hdr);
	const char *row[8] = {c->open_loop ? fmt_rate(&c->f, m.offered) : "– (closed loop)",
			      fmt_rate(&c->f, m.achieved),
			      fmt_int(&c->f, m.sent),
			      fmt_int(&c->f, m.completed),
			      fmt_int(&c->f, m.errors),
			      fmt_pct(&c->f, m.error_pct),
			      c->open_loop ? fmt_pct(&c->f, m.drop_pct) : "–",
			      fmt_s(&c->f, m.duration_s)};
	doc_row(c->d, row);
	connections_para(c, rr_get(c->root, "warmup"), ph);
	doc_heading(c->d, 3, "latency", "Latency");
	latency_table(c, ph);
	doc_heading(c->d, 3, "responses", "Responses by status");
	responses_table(c, ph);
	outcomes_table(c, ph);
	by_name_table(c, ph, true);
	const json_t *reps = rr_arr(c->root, "repetitions");
	if (reps && json_array_size(reps) > 1) {
		doc_heading(c->d, 3, "repetitions", "Repetitions");
		const char *h[8] = {"Repetition", "Achieved/s", "p50", "p90", "p99", "p99.9", "max", "Errors"};
		doc_table(c->d, 8, 0xfe, h);
		size_t i;
		const json_t *r;
		json_array_foreach(reps, i, r) {
			char idx[24];
			snprintf(idx, sizeof idx, "%zu", i + 1);
			const char *rw[8] = {idx,
					     fmt_rate(&c->f, rr_num_or(r, "achieved_per_s", NAN)),
					     fmt_us(&c->f, rr_num_or(r, "p50_us", NAN)),
					     fmt_us(&c->f, rr_num_or(r, "p90_us", NAN)),
					     fmt_us(&c->f, rr_num_or(r, "p99_us", NAN)),
					     fmt_us(&c->f, rr_num_or(r, "p99_9_us", NAN)),
					     fmt_us(&c->f, rr_num_or(r, "max_us", NAN)),
					     fmt_int(&c->f, rr_num_or(r, "errors", NAN))};
			doc_row(c->d, rw);
		}
		const json_t *rs = rr_obj(c->root, "repeat_summary");
		if (rs) {
			char b[7][96];
			const char *rw[8] = {"median (min–max)",
					     med_range(c, b[0], 96, rs, "achieved_per_s", false),
					     med_range(c, b[1], 96, rs, "p50_us", true),
					     med_range(c, b[2], 96, rs, "p90_us", true),
					     med_range(c, b[3], 96, rs, "p99_us", true),
					     med_range(c, b[4], 96, rs, "p99_9_us", true),
					     med_range(c, b[5], 96, rs, "max_us", true),
					     med_range(c, b[6], 96, rs, "errors", false)};
			doc_row(c->d, rw);
		}
	}
	chart_ref(c, "spectrum");
	chart_ref(c, "timeline");
}

static double step_outcome(const json_t *s, const char *name)
{
	const json_t *o = report_step_outcome(s, name);
	return o ? rr_num_or(o, "rate_pct", NAN) : NAN;
}

static void results_ramp(struct ctx *c)
{
	const json_t *steps = rr_arr(c->root, "steps");
	const char *onames[8];
	size_t no = report_outcome_names(steps, onames, N(onames));
	const char *slo = rr_str(c->plan, "slo");
	doc_heading(c->d, 3, "steps", "Steps");
	const char *hdr[DOC_MAX_COLS];
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
	hdr[nc++] = "Within SLO";
	uint32_t right = ((1u << (nc - 1)) - 1) & ~1u;
	doc_table(c->d, nc, right, hdr);
	size_t i;
	const json_t *s;
	bool reps = false;
	json_array_foreach(steps, i, s) {
		struct phase_fig m;
		report_phase_fig(rr_get(s, "measure"), &m);
		const char *row[DOC_MAX_COLS];
		size_t k = 0;
		char label[32], p50[96], p99[96], verdict[400];
		snprintf(label, sizeof label, "%s%zu", rr_true(s, "refine") ? "r" : "", i + 1);
		row[k++] = label;
		row[k++] = fmt_rate(&c->f, rr_num_or(s, "offered_per_s", m.offered));
		row[k++] = fmt_rate(&c->f, rr_num_or(s, "achieved_per_s", m.achieved));
		const json_t *rs = rr_obj(s, "repeat_summary");
		if (rs && rr_len(s, "repetitions") > 1) {
			reps = true;
			row[k++] = med_range(c, p50, sizeof p50, rs, "p50_us", true);
			row[k++] = med_range(c, p99, sizeof p99, rs, "p99_us", true);
		} else {
			row[k++] = fmt_us(&c->f, m.p50);
			row[k++] = fmt_us(&c->f, m.p99);
		}
		for (size_t o = 0; o < no; o++)
			row[k++] = fmt_pct(&c->f, step_outcome(s, onames[o]));
		row[k++] = fmt_pct(&c->f, rr_num_or(s, "error_pct", m.error_pct));
		row[k++] = fmt_pct(&c->f, rr_num_or(s, "drop_pct", m.drop_pct));
		bool pass = rr_true(s, "verdict.pass");
		const char *reason = rr_str(s, "verdict.reason");
		if (reason && strncmp(reason, "Fail ", 5) == 0)
			reason += 5;
		if (!rr_get(s, "verdict.pass"))
			snprintf(verdict, sizeof verdict, "not recorded");
		else if (pass)
			snprintf(verdict, sizeof verdict, "yes%s", slo ? "" : " (no SLO)");
		else
			snprintf(verdict, sizeof verdict, "no: %s", reason ? reason : "failed");
		if (rr_true(s, "interrupted"))
			snprintf(verdict + strlen(verdict), sizeof verdict - strlen(verdict),
				 " (interrupted)");
		row[k++] = verdict;
		doc_row(c->d, row);
	}
	if (reps)
		doc_para(c->d, false,
			 "p50 and p99 are the median (min–max) over each step's repetitions; the verdict "
			 "judges the repetitions pooled.");
	const json_t *hp = rr_obj(c->root, "highest_passing");
	if (hp) {
		char per_core[240];
		per_core_phrase(c, hp, per_core, sizeof per_core);
		doc_para(c->d, false, "Highest passing step: step %s, %s requests/s offered (%s achieved)%s.",
			 fmt_int(&c->f, rr_num_or(hp, "step", NAN)),
			 fmt_rate(&c->f, rr_num_or(hp, "offered_per_s", NAN)),
			 fmt_rate(&c->f, rr_num_or(hp, "achieved_per_s", NAN)), per_core);
	} else if (json_array_size(steps)) {
		doc_para(c->d, false, "No step passed%s%s.", slo ? " the SLO " : "", slo ? slo : "");
	}
	double knee;
	if (rr_num(c->root, "knee_per_s", &knee))
		doc_para(c->d, false,
			 "Knee: median latency first exceeded twice its low-load value (the first "
			 "step's) at %s requests/s.",
			 fmt_rate(&c->f, knee));
	else if (rr_get(c->root, "knee_per_s"))
		doc_para(c->d, false, "Knee: the median latency stayed within twice its low-load "
				      "value at every step.");
	double req;
	if (rr_num(c->plan, "require_per_s", &req))
		doc_para(c->d, false, "Required %s requests/s: %s.", fmt_rate(&c->f, req),
			 rr_true(c->root, "reached_require") ? "reached" : "NOT reached");
	ramp_warmups(c, steps);
	chart_ref(c, "latency-vs-load");
	long k = report_focus_step(c->root);
	if (k >= 0) {
		doc_heading(c->d, 3, "focus-step", "Latency at step %ld (%s requests/s)", k + 1,
			    fmt_rate(&c->f, rr_num_or(step_at(c, k), "offered_per_s", NAN)));
		latency_table(c, rr_get(step_at(c, k), "measure"));
		outcomes_table(c, rr_get(step_at(c, k), "measure"));
		by_name_table(c, rr_get(step_at(c, k), "measure"), false);
	}
	chart_ref(c, "spectrum");
	chart_ref(c, "timeline");
}

static const struct {
	const char *summary, *label;
	bool us;
} cmp_cols[] = {
	{"achieved_per_s", "Throughput/s", false}, {"capacity_per_s", "Capacity/s", false},
	{"p50_us", "p50", true},                   {"p90_us", "p90", true},
	{"p99_us", "p99", true},                   {"p99_9_us", "p99.9", true},
	{"max_us", "max", true},
};

static void results_compare(struct ctx *c)
{
	const json_t *variants = rr_arr(c->root, "variants");
	/* columns present in the first variant's summary */
	const json_t *s0 = rr_obj(json_array_get(variants, 0), "summary");
	size_t cols[N(cmp_cols)], ncols = 0;
	for (size_t k = 0; k < N(cmp_cols); k++)
		if (rr_obj(s0, cmp_cols[k].summary))
			cols[ncols++] = k;
	doc_heading(c->d, 3, "variants", "Variants: median (min–max) over repetitions");
	const char *hdr[DOC_MAX_COLS];
	size_t nc = 0;
	hdr[nc++] = "Variant";
	hdr[nc++] = "Target";
	for (size_t k = 0; k < ncols; k++)
		hdr[nc++] = cmp_cols[cols[k]].label;
	doc_table(c->d, nc, ((1u << nc) - 1) & ~3u, hdr);
	size_t i;
	const json_t *v;
	json_array_foreach(variants, i, v) {
		const char *row[DOC_MAX_COLS];
		char cell[N(cmp_cols)][128];
		char name[96];
		size_t k = 0;
		snprintf(name, sizeof name, "%s%s", rr_str(v, "name") ? rr_str(v, "name") : "?",
			 i == 0 ? " (baseline)" : "");
		row[k++] = name;
		row[k++] = rr_str(v, "target") ? rr_str(v, "target") : rr_str(v, "url");
		for (size_t j = 0; j < ncols; j++)
			row[k++] = med_range(c, cell[j], sizeof cell[j], rr_obj(v, "summary"),
					     cmp_cols[cols[j]].summary, cmp_cols[cols[j]].us);
		doc_row(c->d, row);
	}
	const json_t *ratios = rr_arr(c->root, "ratios");
	if (ratios && json_array_size(ratios)) {
		doc_heading(c->d, 3, "ratios", "Against the baseline");
		const char *h[6] = {"Metric", "Variant", "Baseline", "Ratio", "95% CI", "Verdict"};
		doc_table(c->d, 6, 0x18, h);
		const json_t *r;
		json_array_foreach(ratios, i, r) {
			char ci[96];
			snprintf(ci, sizeof ci, "%s–%s", fmt_ratio(&c->f, rr_num_or(r, "ci95_low", NAN)),
				 fmt_ratio(&c->f, rr_num_or(r, "ci95_high", NAN)));
			const char *row[6] = {rr_str(r, "metric"), rr_str(r, "variant"),
					      rr_str(r, "baseline"),
					      fmt_ratio(&c->f, rr_num_or(r, "ratio", NAN)), ci,
					      rr_str(r, "verdict")};
			doc_row(c->d, row);
		}
		doc_para(c->d, false,
			 "A ratio above 1 means the variant's figure is higher than the baseline's: "
			 "faster for throughput and capacity, slower for latency.");
	}
	const json_t *seq = rr_arr(c->root, "sequence");
	if (seq && json_array_size(seq)) {
		char *buf = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&buf, &len);
		if (f) {
			const json_t *s;
			json_array_foreach(seq, i, s) {
				if (i == 64) {
					fputs(" ...", f);
					break;
				}
				fprintf(f, "%s%s", i ? " " : "", json_is_string(s) ? json_string_value(s) : "?");
			}
			if (fclose(f) == 0)
				doc_para(c->d, false, "Order of the measurements: %s.", buf);
			free(buf);
		}
	}
	chart_ref(c, "compare-ratios");
	chart_ref(c, "compare-latency");
	chart_ref(c, "compare-throughput");
}

/* ---- 6. cost and resources ------------------------------------------------------------ */

/* US dollars as every report writes them (units_fmt_cost: "$0.00055",
 * "$12.50"); "–" when missing. */
static const char *usd(struct ctx *c, char *out, size_t cap, double v)
{
	(void)c;
	if (!isfinite(v))
		snprintf(out, cap, "–");
	else
		units_fmt_cost(out, cap, v, "$");
	return out;
}

static void cost_table(struct ctx *c, const json_t *cost)
{
	const json_t *profiles = rr_arr(cost, "profiles");
	if (!profiles || !json_array_size(profiles))
		return;
	const char *hdr[3] = {"Profile", "USD per core-hour", "USD per million requests"};
	doc_table(c->d, 3, 0x6, hdr);
	size_t i;
	const json_t *p;
	json_array_foreach(profiles, i, p) {
		char a[64], b[64];
		const char *row[3] = {rr_str(p, "name"), usd(c, a, sizeof a, rr_num_or(p, "usd_per_core_hour", NAN)),
				      usd(c, b, sizeof b, rr_num_or(p, "usd_per_million_requests", NAN))};
		doc_row(c->d, row);
	}
	const char *basis = rr_str(cost, "basis"), *caveat = rr_str(cost, "caveat");
	double ms;
	char per[96] = "";
	if (rr_num(cost, "cpu_ms_per_request", &ms))
		snprintf(per, sizeof per, " (%s ms of CPU per request)", fmt_num(&c->f, ms, 4));
	size_t cl = caveat ? strlen(caveat) : 0;
	if (basis || caveat)
		doc_para(c->d, false, "Basis: %s%s.%s%s%s%s", basis ? basis : "not recorded", per,
			 caveat ? " " : "", caveat ? caveat : "",
			 cl && caveat[cl - 1] != '.' ? "." : "",
			 rr_true(cost, "default_prices")
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

static void resources_rows(struct ctx *c, const json_t *ph, const json_t *owner)
{
	const json_t *tr = res_obj(ph, owner, "target_resources");
	char b[256];
	if (tr) {
		kv(c, "Target measured from", rr_str(tr, "source"));
		double u, sy;
		if (rr_num(tr, "cpu_user_s", &u) && rr_num(tr, "cpu_sys_s", &sy))
			snprintf(b, sizeof b, "%s (user %s, system %s)",
				 fmt_s(&c->f, rr_num_or(tr, "cpu_s", NAN)), fmt_s(&c->f, u), fmt_s(&c->f, sy));
		else
			snprintf(b, sizeof b, "%s", fmt_s(&c->f, rr_num_or(tr, "cpu_s", NAN)));
		kv(c, "Target CPU (measured phase)", b);
		kv(c, "Target cores busy (average)", fmt_num(&c->f, rr_num_or(tr, "cores_busy", NAN), 2));
		snprintf(b, sizeof b, "%s ms", fmt_num(&c->f, rr_num_or(tr, "cpu_ms_per_request", NAN), 4));
		kv(c, "Target CPU per request", b);
		if (rr_get(tr, "rss_peak_bytes")) {
			snprintf(b, sizeof b, "start %s, peak %s, end %s",
				 fmt_bytes(&c->f, rr_num_or(tr, "rss_start_bytes", NAN)),
				 fmt_bytes(&c->f, rr_num_or(tr, "rss_peak_bytes", NAN)),
				 fmt_bytes(&c->f, rr_num_or(tr, "rss_end_bytes", NAN)));
			kv(c, "Target resident memory", b);
		}
		size_t i;
		const json_t *n;
		json_array_foreach(rr_arr(tr, "notes"), i, n)
			if (json_is_string(n))
				kv(c, "Note", json_string_value(n));
	}
	const json_t *gr = res_obj(ph, owner, "generator_resources");
	if (gr) {
		kv(c, "Generator CPU (measured phase)", fmt_s(&c->f, rr_num_or(gr, "cpu_s", NAN)));
		snprintf(b, sizeof b, "%s µs", fmt_num(&c->f, rr_num_or(gr, "cpu_us_per_request", NAN), 1));
		kv(c, "Generator CPU per request", b);
		kv(c, "Busiest generator thread", fmt_pct(&c->f, rr_num_or(gr, "busiest_thread_cpu_pct", NAN)));
	}
}

static void cost_resources(struct ctx *c)
{
	doc_heading(c->d, 2, "cost", "Cost and resources");
	char b[256];
	if (c->r->kind == RESULT_KIND_RUN) {
		const json_t *m = rr_get(c->root, "measure");
		const json_t *cost = rr_obj(c->root, "cost");
		if (cost)
			cost_table(c, cost);
		else
			doc_para(c->d, false, "No cost profile was given (--cost-profile), so no cost per "
					      "million requests is reported.");
		const char *hdr[2] = {"Figure", "Value"};
		doc_table(c->d, 2, 0x2, hdr);
		const json_t *t = rr_obj(c->root, "target");
		if (t) {
			snprintf(b, sizeof b, "%s over the whole run, warm-up included",
				 fmt_s(&c->f, rr_num_or(t, "cpu_s", NAN)));
			kv(c, "Embedded target CPU", b);
			snprintf(b, sizeof b, "%s ms", fmt_num(&c->f, rr_num_or(t, "cpu_ms_per_request", NAN), 4));
			kv(c, "Embedded target CPU per request", b);
		}
		resources_rows(c, m, c->root);
		const json_t *tc = rr_obj(c->root, "target_cores");
		if (tc) {
			const char *bs = rr_str(tc, "basis");
			double n = rr_num_or(tc, "cores", NAN);
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
		const json_t *g = rr_obj(c->root, "generator");
		if (g) {
			double th = rr_num_or(g, "threads", NAN);
			snprintf(b, sizeof b, "%s over the whole run (%s worker %s)",
				 fmt_s(&c->f, rr_num_or(g, "cpu_s", NAN)), fmt_int(&c->f, th),
				 plural(th, "thread", "threads"));
			kv(c, "Generator CPU", b);
			snprintf(b, sizeof b, "%s µs",
				 fmt_num(&c->f, rr_num_or(g, "cpu_us_per_response", NAN), 1));
			kv(c, "Generator CPU per response", b);
			double busy;
			if (rr_num(g, "busiest_thread_cpu_pct", &busy))
				kv(c, "Busiest generator thread", fmt_pct(&c->f, busy));
		}
		bool target_known = t || res_obj(m, c->root, "target_resources");
		if (!target_known && !g)
			kv(c, "Resources", "not recorded");
		if (!target_known)
			doc_para(c->d, false, "The target's own CPU and memory were not measured "
					      "(--target-pid or --target-cgroup measure them).");
	} else if (c->r->kind == RESULT_KIND_RAMP) {
		const json_t *steps = rr_arr(c->root, "steps");
		const char *pnames[4];
		size_t np = 0;
		bool mem = false;
		size_t i;
		const json_t *s;
		json_array_foreach(steps, i, s) {
			if (rr_get(res_obj(rr_get(s, "measure"), s, "target_resources"), "rss_peak_bytes"))
				mem = true;
			size_t k;
			const json_t *p;
			json_array_foreach(rr_arr(s, "cost.profiles"), k, p) {
				const char *name = rr_str(p, "name");
				bool seen = false;
				for (size_t j = 0; j < np; j++)
					if (name && strcmp(pnames[j], name) == 0)
						seen = true;
				if (name && !seen && np < N(pnames))
					pnames[np++] = name;
			}
		}
		const char *hdr[DOC_MAX_COLS];
		char ph[4][96];
		size_t nc = 0;
		hdr[nc++] = "Step";
		hdr[nc++] = "Offered/s";
		hdr[nc++] = "Generator CPU";
		hdr[nc++] = "Target CPU per request";
		if (mem)
			hdr[nc++] = "Target peak memory";
		for (size_t k = 0; k < np; k++) {
			snprintf(ph[k], sizeof ph[k], "USD per million requests (%s)", pnames[k]);
			hdr[nc++] = ph[k];
		}
		doc_table(c->d, nc, ((1u << nc) - 1) & ~1u, hdr);
		json_array_foreach(steps, i, s) {
			const json_t *tr = res_obj(rr_get(s, "measure"), s, "target_resources");
			const char *row[DOC_MAX_COLS];
			char money[4][64];
			size_t k = 0;
			char label[32], tcpu[64];
			snprintf(label, sizeof label, "%s%zu", rr_true(s, "refine") ? "r" : "", i + 1);
			row[k++] = label;
			row[k++] = fmt_rate(&c->f, rr_num_or(s, "offered_per_s", NAN));
			double gc = rr_num_or(s, "generator_cpu_s",
					      rr_num_or(res_obj(rr_get(s, "measure"), s, "generator_resources"), "cpu_s", NAN));
			row[k++] = fmt_s(&c->f, gc);
			double tc = rr_num_or(tr, "cpu_ms_per_request", rr_num_or(s, "target_cpu_ms_per_request", NAN));
			snprintf(tcpu, sizeof tcpu, "%s ms", fmt_num(&c->f, tc, 4));
			row[k++] = isfinite(tc) ? tcpu : "–";
			if (mem)
				row[k++] = fmt_bytes(&c->f, rr_num_or(tr, "rss_peak_bytes", NAN));
			for (size_t p = 0; p < np; p++) {
				double v = NAN;
				size_t j;
				const json_t *pr;
				json_array_foreach(rr_arr(s, "cost.profiles"), j, pr) {
					const char *name = rr_str(pr, "name");
					if (name && strcmp(name, pnames[p]) == 0)
						v = rr_num_or(pr, "usd_per_million_requests", NAN);
				}
				row[k++] = usd(c, money[p], sizeof money[p], v);
			}
			doc_row(c->d, row);
		}
		long k = report_focus_step(c->root);
		const json_t *fs = step_at(c, k);
		if (fs && rr_obj(fs, "cost")) {
			doc_para(c->d, false, "Cost at step %ld:", k + 1);
			cost_table(c, rr_obj(fs, "cost"));
		} else if (!np) {
			doc_para(c->d, false, "No cost profile was given (--cost-profile), so no cost per "
					      "million requests is reported.");
		}
		if (fs && (res_obj(rr_get(fs, "measure"), fs, "target_resources") ||
			   res_obj(rr_get(fs, "measure"), fs, "generator_resources"))) {
			const char *h2[2] = {"Figure", "Value"};
			doc_heading(c->d, 3, "focus-resources", "Resources at step %ld", k + 1);
			doc_table(c->d, 2, 0x2, h2);
			resources_rows(c, rr_get(fs, "measure"), fs);
		}
	} else {
		doc_para(c->d, false, "A comparison records no cost or resource figures; run each "
				      "variant with pacer run or ramp to measure them.");
	}
}

/* ---- 7. meaning ---------------------------------------------------------------------------- */

static void workload_phrase(struct ctx *c, char *out, size_t cap)
{
	const json_t *table = rr_obj(c->plan, "table");
	const char *url = rr_str(c->plan, "url") ? rr_str(c->plan, "url") : "?";
	if (wl_phrase(c, rr_obj(c->plan, "workload"), c->plan, url, out, cap))
		return;
	if (c->r->kind == RESULT_KIND_COMPARE &&
	    rr_obj(json_array_get(rr_arr(c->root, "variants"), 0), "workload")) {
		size_t i, l = 0;
		const json_t *v;
		out[0] = '\0';
		json_array_foreach(rr_arr(c->root, "variants"), i, v) {
			char one[600];
			if (i >= REPORT_MAX_VARIANTS || l + 8 >= cap)
				break;
			if (!wl_phrase(c, rr_obj(v, "workload"), c->plan, "its URL", one, sizeof one))
				snprintf(one, sizeof one, "not recorded");
			l += (size_t)snprintf(out + l, cap - l, "%s%s: %s", i ? "; " : "",
					      rr_str(v, "name") ? rr_str(v, "name") : "?", one);
		}
		return;
	}
	if (table)
		snprintf(out, cap, "the request table %s (SHA-256 %.16s...)",
			 rr_str(table, "source") ? rr_str(table, "source") : "?",
			 rr_str(table, "sha256") ? rr_str(table, "sha256") : "?");
	else if (c->r->kind == RESULT_KIND_COMPARE)
		snprintf(out, cap, "one %s request per variant",
			 rr_str(c->plan, "method") ? rr_str(c->plan, "method") : "?");
	else
		snprintf(out, cap, "one %s request to %s",
			 rr_str(c->plan, "method") ? rr_str(c->plan, "method") : "?",
			 rr_str(c->plan, "url") ? rr_str(c->plan, "url") : "?");
}

static void meaning(struct ctx *c)
{
	doc_heading(c->d, 2, "meaning", "What this number means / does not establish");
	doc_heading(c->d, 3, "means", "What it means");
	doc_list(c->d);
	char wl[2048];
	workload_phrase(c, wl, sizeof wl);
	if (c->r->kind == RESULT_KIND_RUN) {
		struct phase_fig m;
		report_phase_fig(rr_get(c->root, "measure"), &m);
		if (c->open_loop)
			doc_item(c->d,
				 "At %s requests/s offered, this target, as configured and on this "
				 "machine, answered half of the requests within %s and 99%% within %s of "
				 "their scheduled time, queueing included.",
				 fmt_rate(&c->f, m.offered), fmt_us(&c->f, m.p50), fmt_us(&c->f, m.p99));
		else
			doc_item(c->d,
				 "With %s requests always outstanding, this target completed %s "
				 "requests/s; half of them took at most %s and 99%% at most %s from "
				 "their send.",
				 fmt_int(&c->f, rr_num_or(c->plan, "concurrency", NAN)),
				 fmt_rate(&c->f, m.achieved), fmt_us(&c->f, m.p50), fmt_us(&c->f, m.p99));
	} else if (c->r->kind == RESULT_KIND_RAMP) {
		const json_t *hp = rr_obj(c->root, "highest_passing");
		const char *slo = rr_str(c->plan, "slo");
		if (hp) {
			double off = rr_num_or(hp, "offered_per_s", NAN);
			double next = INFINITY;
			size_t i;
			const json_t *s;
			json_array_foreach(rr_arr(c->root, "steps"), i, s) {
				double o;
				if (!rr_true(s, "verdict.pass") && rr_num(s, "offered_per_s", &o) && o > off)
					next = fmin(next, o);
			}
			if (isfinite(next))
				doc_item(c->d,
					 "The target sustained %s requests/s offered %s%s for steps of %s; "
					 "under these conditions its capacity lies between %s and %s "
					 "requests/s.",
					 fmt_rate(&c->f, off), slo ? "within the SLO " : "", slo ? slo : "",
					 fmt_s(&c->f, rr_num_or(c->plan, "step_duration_s", NAN)),
					 fmt_rate(&c->f, off), fmt_rate(&c->f, next));
			else
				doc_item(c->d,
					 "The target sustained %s requests/s offered %s%s for steps of %s, "
					 "the highest step tried: its capacity under these conditions is "
					 "at least that.",
					 fmt_rate(&c->f, off), slo ? "within the SLO " : "", slo ? slo : "",
					 fmt_s(&c->f, rr_num_or(c->plan, "step_duration_s", NAN)));
		} else {
			doc_item(c->d, "No step met the SLO: under these conditions the target's capacity "
				       "is below the lowest step tried.");
		}
	} else {
		size_t i;
		const json_t *r;
		bool any = false;
		json_array_foreach(rr_arr(c->root, "ratios"), i, r) {
			if (!rr_true(r, "significant"))
				continue;
			any = true;
			doc_item(c->d,
				 "On this machine under this load, %s's %s was %s times %s's (95%% CI "
				 "%s–%s): %s.",
				 rr_str(r, "variant") ? rr_str(r, "variant") : "?",
				 rr_str(r, "metric") ? rr_str(r, "metric") : "?",
				 fmt_ratio(&c->f, rr_num_or(r, "ratio", NAN)),
				 rr_str(r, "baseline") ? rr_str(r, "baseline") : "?",
				 fmt_ratio(&c->f, rr_num_or(r, "ci95_low", NAN)),
				 fmt_ratio(&c->f, rr_num_or(r, "ci95_high", NAN)),
				 rr_str(r, "verdict") ? rr_str(r, "verdict") : "?");
		}
		if (!any)
			doc_item(c->d, "No difference between the variants was large and certain enough "
				       "to be called significant under this load.");
	}
	doc_item(c->d, "It holds for this workload: %s.", wl);

	doc_heading(c->d, 3, "does-not-establish", "What it does not establish");
	doc_list(c->d);
	doc_item(c->d, "How the target behaves on other hardware, with another configuration, or "
		       "under another mix of requests.");
	if (c->self_contained)
		doc_item(c->d, "The capacity or latency of a real deployment: the load generator and "
			       "the target shared one process and its cores.");
	if (rr_str(c->plan, "unix_socket"))
		doc_item(c->d, "Unix socket: requests went over the local socket %s, not TCP: no "
			       "network stack and no network in these figures.",
			 rr_str(c->plan, "unix_socket"));
	else if (c->loopback)
		doc_item(c->d, "Anything about the network: requests never left the machine.");
	if (!c->open_loop && !rr_obj(c->plan, "ramp") && c->r->kind != RESULT_KIND_RAMP)
		doc_item(c->d, "Latency at a given arrival rate: a closed loop slows down with the "
			       "target and hides queueing.");
	if (c->r->kind != RESULT_KIND_COMPARE && c->repeat <= 1)
		doc_item(c->d, "That the figures repeat: one measurement gives no estimate of "
			       "run-to-run variance.");
	if (c->r->kind == RESULT_KIND_RAMP && !rr_true(c->plan, "refine"))
		doc_item(c->d, "The exact capacity: it lies between steps (--refine narrows it).");
	if (c->r->kind == RESULT_KIND_COMPARE)
		doc_item(c->d, "Why the variants differ, or that the difference holds on other "
			       "machines or loads; a 95%% interval misses the truth about one time in "
			       "twenty.");
	double dur = c->r->kind == RESULT_KIND_RAMP ? rr_num_or(c->plan, "step_duration_s", NAN)
						    : rr_num_or(c->root, "measure.duration_s",
								rr_num_or(c->plan, "duration_s", NAN));
	if (isfinite(dur))
		doc_item(c->d, "Behaviour over longer periods than the %s measured: memory growth, "
			       "garbage collection, caches, thermal limits.",
			 fmt_s(&c->f, dur));
	if (rr_true(c->root, "generator_limited.flagged"))
		doc_item(c->d, "The target's limit: the generator itself may have been the bottleneck.");
	if (c->interrupted)
		doc_item(c->d, "The planned measurement: it was interrupted.");
	if (rr_obj(c->root, "cost"))
		doc_item(c->d, "A bill: cost figures extrapolate CPU time only.");
}

/* ---- all ------------------------------------------------------------------------------- */

/* What names a run or ramp: its request table (source, hash, hosts), else
 * its URL. */
static void run_name(struct ctx *c, char *out, size_t cap)
{
	const json_t *t = rr_obj(c->plan, "table");
	const char *url = rr_str(c->plan, "url");
	if (!t) {
		snprintf(out, cap, "%s", url ? url : "(no URL)");
		return;
	}
	double n = rr_num_or(t, "requests", NAN), nh = (double)rr_len(t, "hosts");
	size_t l = (size_t)snprintf(out, cap, "table %s (SHA-256 %.12s, %s %s, %s %s",
				    rr_str(t, "source") ? rr_str(t, "source") : "?",
				    rr_str(t, "sha256") ? rr_str(t, "sha256") : "?", fmt_int(&c->f, n),
				    plural(n, "request", "requests"), fmt_int(&c->f, nh),
				    plural(nh, "host", "hosts"));
	size_t i;
	const json_t *h;
	json_array_foreach(rr_arr(t, "hosts"), i, h) {
		if (l + 8 >= cap)
			break;
		if (i == 3) {
			l += (size_t)snprintf(out + l, cap - l, ", ...");
			break;
		}
		const char *sock = rr_str(h, "unix_socket");
		l += (size_t)snprintf(out + l, cap - l, "%s%s%s%s%s%s:%.0f", i ? ", " : ": ",
				      sock ? "unix:" : "", sock ? sock : "", sock ? ":" : "",
				      rr_true(h, "tls") ? "https://" : "",
				      rr_str(h, "host") ? rr_str(h, "host") : "?", rr_num_or(h, "port", 0));
	}
	if (l < cap)
		snprintf(out + l, cap - l, ")");
}

int report_doc_build(const struct loaded_result *r, const struct chart_set *cs, struct doc *d)
{
	struct ctx c;
	memset(&c, 0, sizeof c);
	c.r = r;
	c.d = d;
	c.cs = cs;
	gather(&c);
	const char *kind = result_kind_name(r->kind);
	if (r->kind == RESULT_KIND_COMPARE) {
		char names[256] = "";
		size_t i;
		const json_t *v;
		json_array_foreach(rr_arr(c.root, "variants"), i, v) {
			size_t l = strlen(names);
			if (l > 200) {
				snprintf(names + l, sizeof names - l, " ...");
				break;
			}
			snprintf(names + l, sizeof names - l, "%s%s", i ? " vs " : "",
				 rr_str(v, "name") ? rr_str(v, "name") : "?");
		}
		doc_heading(d, 1, "title", "pacer compare report: %s", names);
	} else {
		char name[700];
		run_name(&c, name, sizeof name);
		doc_heading(d, 1, "title", "pacer %s report: %s", kind, name);
	}
	doc_heading(d, 2, "summary", "Summary");
	switch (r->kind) {
	case RESULT_KIND_RUN: summary_run(&c); break;
	case RESULT_KIND_RAMP: summary_ramp(&c); break;
	case RESULT_KIND_COMPARE: summary_compare(&c); break;
	}
	identity(&c);
	methodology(&c);
	conditions(&c);
	doc_heading(d, 2, "results", "Results");
	switch (r->kind) {
	case RESULT_KIND_RUN: results_run(&c); break;
	case RESULT_KIND_RAMP: results_ramp(&c); break;
	case RESULT_KIND_COMPARE: results_compare(&c); break;
	}
	cost_resources(&c);
	meaning(&c);
	return d->oom ? -ENOMEM : 0;
}
