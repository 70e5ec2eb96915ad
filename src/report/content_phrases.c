/* pacer — phrases several sections of the report's content share: the
 * machine, the way to the target, a median with its range, the target's
 * waits for a CPU (see content_int.h). */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "doc/keys.h"
#include "report/content_int.h"
#include "result/ramp.h"
#include "result/result.h"

/* The most steal time on the generator's CPUs the result records: a run's,
 * a ramp's steps', a comparison's variants' (NAN: none recorded). */
double content_most_steal(const struct content_ctx *c)
{
	double most = NAN, v;
	if (rr_num(rr_obj(c->root, KEY_GENERATOR), KEY_STEAL_PCT, &v))
		most = v;
	const char *arr = c->r->kind == RESULT_KIND_RAMP ? "steps"
			  : c->r->kind == RESULT_KIND_COMPARE ? "variants" : NULL;
	const char *key = c->r->kind == RESULT_KIND_RAMP ? KEY_STEAL_PCT : KEY_STEAL_MAX_PCT;
	size_t i;
	const json_t *e;
	if (arr)
		json_array_foreach(rr_arr(c->root, arr), i, e)
			if (rr_num(e, key, &v) && (isnan(most) || v > most))
				most = v;
	return most;
}

/* Whether pacer warned of the steal when it measured (it alone knew the
 * counters' resolution: a short load's single tick is no warning). */
bool content_steal_warned(const struct content_ctx *c)
{
	size_t i;
	const json_t *w;
	json_array_foreach(rr_arr(c->root, KEY_WARNINGS), i, w)
		if (json_is_string(w) && strstr(json_string_value(w), "the hypervisor took"))
			return true;
	return false;
}

double content_target_cores(struct content_ctx *c)
{
	double n;
	if (rr_num(c->root, "target_cores.cores", &n) && n > 0)
		return n;
	return rr_num(c->env, KEY_CORES, &n) && n > 0 ? n : NAN;
}

void content_cpu_wait(struct content_ctx *c, const json_t *tr, double phase_s,
		      struct content_wait *w)
{
	*w = (struct content_wait){.kind = CW_NONE, .pct = NAN};
	double wait, pct, cpu = rr_num_or(tr, KEY_CPU_S, NAN);
	if (rr_num(tr, KEY_CPU_WAIT_S, &wait) && rr_num(tr, KEY_CPU_WAIT_PCT, &pct)) {
		if (!target_cpu_wait_material(pct, wait, phase_s))
			return;
		snprintf(w->fig, sizeof w->fig,
			 "the target's threads waited for a CPU for %s of the time they were ready "
			 "to run (%s waiting, %s on a CPU)",
			 fmt_pct(&c->f, pct), fmt_s(&c->f, wait), fmt_s(&c->f, cpu));
		snprintf(w->brief, sizeof w->brief,
			 "the target waited for a CPU %s of the time it was ready to run",
			 fmt_pct(&c->f, pct));
	} else if (rr_num(tr, KEY_CPU_PRESSURE_SOME_S, &wait) &&
		   rr_num(tr, KEY_CPU_PRESSURE_SOME_PCT, &pct)) {
		if (!target_cpu_pressure_material(pct))
			return;
		snprintf(w->fig, sizeof w->fig,
			 "for %s of the measured phase at least one of the target cgroup's tasks "
			 "waited for a CPU (cpu.pressure \"some\": %s)",
			 fmt_pct(&c->f, pct), fmt_s(&c->f, wait));
		snprintf(w->brief, sizeof w->brief,
			 "a task of the target waited for a CPU %s of the time",
			 fmt_pct(&c->f, pct));
	} else {
		return;
	}
	w->pct = pct;
	double busy = rr_num_or(tr, KEY_CORES_BUSY, NAN), avail = content_target_cores(c);
	if (isfinite(busy) && isfinite(avail))
		snprintf(w->busy, sizeof w->busy, "it kept %s of the %s %s it could use busy",
			 fmt_num(&c->f, busy, 2),
			 fmt_num(&c->f, avail, avail == floor(avail) ? 0 : 2),
			 avail == 1 ? "core" : "cores");
	w->kind = isfinite(busy) && isfinite(avail) && ramp_cpu_limited(busy, avail) ? CW_OWN
										     : CW_OTHERS;
}

const char *content_machine(struct content_ctx *c, char *out, size_t cap)
{
	double cores;
	const char *model = rr_str(c->env, KEY_CPU_MODEL);
	if (rr_num(c->env, KEY_CORES, &cores) && cores >= 1) {
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

const char *content_target(struct content_ctx *c, char *out, size_t cap)
{
	size_t hl = strlen(c->host);
	const char *a = c->address;
	bool same = hl && ((!strncmp(a, c->host, hl) && a[hl] == ':') ||
			   (a[0] == '[' && !strncmp(a + 1, c->host, hl) && a[hl + 1] == ']'));
	if (!a[0] || same)
		snprintf(out, cap, "%s", a[0] ? a : c->host);
	else if (!hl)
		snprintf(out, cap, "%s", a);
	else
		snprintf(out, cap, "%s, connected at %s", c->host, a);
	return out;
}

/* Adds phase ph's http2 connections to *h2, *h1; true when it has them. */
static bool add_h2(const json_t *ph, double *h2, double *h1)
{
	const json_t *h = rr_obj(ph, KEY_HTTP2);
	if (!h)
		return false;
	*h2 += rr_num_or(h, KEY_CONNECTIONS_H2, 0);
	*h1 += rr_num_or(h, KEY_CONNECTIONS_H1, 0);
	return true;
}

bool content_h2_conns(struct content_ctx *c, double *h2, double *h1)
{
	*h2 = *h1 = 0;
	bool any = false;
	if (c->r->kind == RESULT_KIND_RUN) {
		any = add_h2(rr_obj(c->root, KEY_WARMUP), h2, h1);
		any = add_h2(rr_obj(c->root, KEY_MEASURE), h2, h1) || any;
	} else if (c->r->kind == RESULT_KIND_RAMP) {
		size_t i;
		const json_t *s;
		json_array_foreach(rr_arr(c->root, KEY_STEPS), i, s) {
			any = add_h2(rr_obj(s, KEY_WARMUP), h2, h1) || any;
			any = add_h2(rr_obj(s, KEY_MEASURE), h2, h1) || any;
		}
	}
	return any;
}

const char *content_protocol(struct content_ctx *c, char *out, size_t cap)
{
	const char *http = rr_str(c->plan, KEY_HTTP);
	bool tls = rr_obj(c->plan, KEY_TLS) != NULL, plain = !tls;
	size_t i;
	const json_t *h;
	json_array_foreach(rr_arr(c->plan, "table.hosts"), i, h) {
		if (i == 0) /* a table's hosts say it, not its first URL */
			tls = plain = false;
		if (rr_true(h, KEY_TLS))
			tls = true;
		else
			plain = true;
	}
	double h2, h1;
	bool seen = content_h2_conns(c, &h2, &h1);
	if (!http)
		snprintf(out, cap, "HTTP");
	else if (!strcmp(http, "h3"))
		snprintf(out, cap, "HTTPS (HTTP/3 over QUIC)");
	else if (!strcmp(http, "h2c"))
		snprintf(out, cap, "h2c (HTTP/2 over cleartext)");
	else if (!strcmp(http, "h2"))
		snprintf(out, cap, "HTTPS (HTTP/2 over TLS)");
	else if (!strcmp(http, "h2-prefer") && seen && h2 > 0 && h1 == 0)
		snprintf(out, cap, "HTTPS (HTTP/2 over TLS)");
	else if (!strcmp(http, "h2-prefer") && seen && h2 == 0 && h1 > 0)
		snprintf(out, cap, "HTTPS (HTTP/1.1 over TLS: the server did not take HTTP/2)");
	else if (!strcmp(http, "h2-prefer"))
		snprintf(out, cap, "HTTPS (HTTP/2 over TLS where the server took it, else HTTP/1.1)");
	else if (tls && plain)
		snprintf(out, cap, "HTTP/1.1 (over TLS to the https hosts)");
	else if (tls)
		snprintf(out, cap, "HTTPS (HTTP/1.1 over TLS)");
	else
		snprintf(out, cap, "HTTP/1.1");
	return out;
}

const char *content_where(struct content_ctx *c, char *out, size_t cap)
{
	char proto[96];
	content_protocol(c, proto, sizeof proto);
	if (c->loopback)
		snprintf(out, cap, "over loopback %s", proto);
	else if (c->host[0])
		snprintf(out, cap, "over %s to %s", proto, c->host);
	else
		snprintf(out, cap, "over %s", proto);
	return out;
}

const char *content_med_range(struct content_ctx *c, char *out, size_t cap,
			      const json_t *summary, const char *key, bool us)
{
	const json_t *s = rr_obj(summary, key);
	double med, lo, hi;
	if (!s || !rr_num(s, KEY_MEDIAN, &med)) {
		snprintf(out, cap, "–");
		return out;
	}
	bool range = rr_num(s, KEY_MIN, &lo) && rr_num(s, KEY_MAX, &hi);
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

/* Append to out[cap] at o, cut at the cap; the new o. */
static size_t addf(char *out, size_t cap, size_t o, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static size_t addf(char *out, size_t cap, size_t o, const char *fmt, ...)
{
	if (o + 1 >= cap)
		return o;
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(out + o, cap - o, fmt, ap);
	va_end(ap);
	return n < 0 ? o : o + (size_t)n < cap ? o + (size_t)n : cap - 1;
}

const char *content_fail_reasons(const json_t *ph, bool h2, char *out, size_t cap)
{
	size_t i, o = 0;
	const json_t *r;
	out[0] = '\0';
	json_array_foreach(rr_arr(ph, "tls.failure_reasons"), i, r) {
		const char *s = json_string_value(r);
		if (s && (strstr(s, "HTTP/2") != NULL || !strncmp(s, "HTTP/3: ", 8)) == h2)
			o = addf(out, cap, o, "%s%s", o ? "; " : ": ", s);
	}
	return out;
}

const char *content_conn_failures(struct content_ctx *c, const json_t *ph, char *out, size_t cap)
{
	static const char *const causes[] = {"refused", "reset", "timeout", "other"};
	double conn = rr_num_or(ph, "transport_errors.connect", 0);
	double tls = rr_num_or(ph, "transport_errors.tls", 0);
	double h2 = rr_num_or(ph, "transport_errors.protocol", 0);
	char why[600];
	size_t o = 0;
	out[0] = '\0';
	if (conn > 0) {
		const char *top = NULL;
		double most = 0;
		for (size_t k = 0; k < N(causes); k++) {
			char key[48];
			snprintf(key, sizeof key, "connect_failures.%s", causes[k]);
			double v = rr_num_or(ph, key, 0);
			if (v > most) {
				most = v;
				top = causes[k];
			}
		}
		const char *open = !top ? "" : most < conn ? " (mostly " : " (";
		o = addf(out, cap, o, "%s %s failed%s%s%s", fmt_int(&c->f, conn),
			 plural(conn, "connect", "connects"), open, top ? top : "", top ? ")" : "");
	}
	if (tls > 0) {
		content_fail_reasons(ph, false, why, sizeof why);
		o = addf(out, cap, o, "%s%s TLS %s failed%s%s%s", o ? ", " : "",
			 fmt_int(&c->f, tls), plural(tls, "handshake", "handshakes"),
			 why[0] ? " (" : "", why[0] ? why + 2 : "", why[0] ? ")" : "");
	}
	if (h2 > 0) {
		content_fail_reasons(ph, true, why, sizeof why);
		addf(out, cap, o, "%s%s %s failed as HTTP/%c%s%s%s", o ? ", " : "",
		     fmt_int(&c->f, h2), plural(h2, "connection", "connections"),
		     rr_obj(ph, KEY_HTTP3) ? '3' : '2',
		     why[0] ? " (" : "", why[0] ? why + 2 : "", why[0] ? ")" : "");
	}
	return out;
}
