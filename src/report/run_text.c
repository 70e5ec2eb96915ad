/* pacer — the terminal summary and the warnings of `pacer run` (the JSON
 * result is run_report.c). */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "report/json_parts.h"
#include "report/names_report.h"
#include "report/report.h"
#include "report/rules_report.h"
#include "report/usage_report.h"
#include "report/workload_report.h"
#include "util/time_units.h"
#include "util/jsonw.h"
#include "stats/summary.h"
#include "table/table.h"
#include "util/units.h"

static void warn(struct report_warnings *w, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#include <stdarg.h>
static void warn(struct report_warnings *w, const char *fmt, ...)
{
	if (w->n >= REPORT_WARN_CAP)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(w->msg[w->n++], REPORT_WARN_LEN, fmt, ap);
	va_end(ap);
}

/* TLS handshake failures, once, with the reasons seen (warm-up included:
 * pre-opened connections count there). */
static void tls_warning(struct report_warnings *w, const struct phase_stats *warm,
			const struct phase_stats *m)
{
	uint64_t n = warm->errors[ERRK_TLS] + m->errors[ERRK_TLS];
	if (!n)
		return;
	char reasons[REPORT_WARN_LEN] = "";
	size_t len = 0;
	const struct phase_stats *ph[2] = {m, warm};
	for (int k = 0; k < 2; k++)
		for (uint32_t i = 0; i < ph[k]->n_tls_reasons && len < sizeof reasons; i++) {
			const char *r = ph[k]->tls_reasons[i];
			if (k == 1 && memmem(reasons, len, r, strlen(r)))
				continue;
			int wr = snprintf(reasons + len, sizeof reasons - len, "%s%s", len ? "; " : "", r);
			if (wr > 0)
				len += (size_t)wr;
		}
	warn(w, "TLS handshake failed (%" PRIu64 " time%s): %s", n, n == 1 ? "" : "s",
	     reasons[0] ? reasons : "no reason recorded");
}

void report_warnings(const struct report_ctx *c, struct report_warnings *w)
{
	const struct run_result *r = c->res;
	const struct phase_stats *m = &r->measure;
	char a[32], b[32];
	w->n = 0;
	if (c->target)
		warn(w,
		     "self-contained: driver and target (plan %s) share one process and one machine, "
		     "over loopback: the target's capacity and latency here are not those of a real "
		     "server, and the two compete for the same cores",
		     c->target->plan_name);
	if (r->interrupted)
		warn(w, "interrupted: the run was stopped early; figures cover %.2fs of the planned %.2fs",
		     (double)r->measure_ns / 1e9, (double)c->plan->duration_ns / 1e9);
	struct gen_verdict gv;
	report_gencheck(r, c, &gv);
	for (int i = 0; i < GENCHECK_N; i++) {
		const struct gencheck *k = &gv.c[i];
		if (k->fired)
			warn(w, "generator limited (%s %.1f%s, limit %.1f%s): %s; %s", k->name, k->value,
			     !strcmp(k->unit, "pct") ? " %" : " us", k->threshold,
			     !strcmp(k->unit, "pct") ? " %" : " us", k->finding, k->advice);
	}
	if (r->open_loop) {
		uint64_t lag = hist_percentile(&m->timing[TIM_SEND_LAG], 99.0);
		/* the cause, from the evidence: refused connections are not too few */
		uint64_t refused = m->errors[ERRK_CONNECT] + m->errors[ERRK_TLS];
		if (!gv.c[0].fired && lag > REPORT_SEND_LAG_WARN_NS && refused)
			warn(w,
			     "requests waited for a connection before they could be sent (send-lag "
			     "p99 %s > %s): %" PRIu64 " connection attempts to the target failed "
			     "(connect or TLS errors), so requests waited while pacer reconnected; "
			     "that wait counts in latency",
			     units_fmt_duration(a, sizeof a, (double)lag),
			     units_fmt_duration(b, sizeof b, (double)REPORT_SEND_LAG_WARN_NS), refused);
		else if (!gv.c[0].fired && lag > REPORT_SEND_LAG_WARN_NS)
			warn(w,
			     "requests waited for a free connection before they could be sent "
			     "(send-lag p99 %s > %s): the target was slow to answer or --connections "
			     "is too low; that wait counts in latency",
			     units_fmt_duration(a, sizeof a, (double)lag),
			     units_fmt_duration(b, sizeof b, (double)REPORT_SEND_LAG_WARN_NS));
		double ach = report_achieved_rate(r);
		if (!r->interrupted && !gv.c[2].fired && ach < 0.95 * r->offered_rate_per_s)
			warn(w, "achieved rate %.1f/s is under 95%% of the offered %.1f/s: %s", ach,
			     r->offered_rate_per_s, gv.c[2].finding);
	}
	if (m->dropped)
		warn(w, "%" PRIu64 " requests were due but dropped (backlog full): never sent",
		     m->dropped);
	if (m->queued_at_end)
		warn(w, "%" PRIu64 " requests were due but still queued when the run ended",
		     m->queued_at_end);
	if (m->in_flight_at_end)
		warn(w, "%" PRIu64 " requests were still waiting for a response when the run ended",
		     m->in_flight_at_end);
	if (m->errors[ERRK_TIMEOUT])
		warn(w,
		     "%" PRIu64 " requests timed out; their latency is recorded as the time waited "
		     "(a lower bound)",
		     m->errors[ERRK_TIMEOUT]);
	tls_warning(w, &r->warmup, m);
	uint64_t errs = phase_stats_errors(m);
	if (errs) {
		char line[REPORT_ERRORS_LINE_CAP];
		report_errors_line(line, sizeof line, m);
		warn(w, "errors %s: requests sent that did not succeed", line);
	}
	if (m->conns_connecting_at_start)
		warn(w,
		     "%" PRIu64 " of the connections were still connecting when the measured phase "
		     "began (%" PRIu64 " open): its first moments include their connect time; a "
		     "--warmup long enough for the pool to come up excludes it",
		     m->conns_connecting_at_start, m->conns_open_at_start);
	if (m->completed == 0)
		warn(w, "no response was completed in the measured phase");
}

/* ---- terminal summary ------------------------------------------------------ */

static void text_row(FILE *f, const char *name, const struct hist *h)
{
	static const double pcts[] = {50, 90, 99, 99.9, 99.99};
	char b[32];
	fprintf(f, "  %-13s", name);
	if (!h->total) {
		fprintf(f, "%9s\n", "-");
		return;
	}
	for (size_t i = 0; i < sizeof pcts / sizeof pcts[0]; i++)
		fprintf(f, "%9s", units_fmt_duration(b, sizeof b, (double)hist_percentile(h, pcts[i])));
	fprintf(f, "%9s", units_fmt_duration(b, sizeof b, (double)h->max));
	fprintf(f, "%9s", units_fmt_duration(b, sizeof b, hist_mean(h)));
	fprintf(f, "  %s\n", units_fmt_thousands(b, sizeof b, (double)h->total, 0));
}

void report_errors_line(char *out, size_t cap, const struct phase_stats *p)
{
	char a[32], b[32];
	size_t o = 0;
#define ADD(...)                                                                                   \
	do {                                                                                       \
		int w_ = snprintf(out + o, o < cap ? cap - o : 0, __VA_ARGS__);                    \
		if (w_ > 0)                                                                        \
			o = o + (size_t)w_ < cap ? o + (size_t)w_ : cap - 1;                       \
	} while (0)
	out[0] = '\0';
	ADD("%s (%.2f %%)", units_fmt_thousands(a, sizeof a, (double)phase_stats_errors(p), 0),
	    phase_stats_error_pct(p));
	uint64_t failed = phase_stats_failed_responses(p);
	if (failed) {
		int shown = 0;
		ADD(": ");
		for (int s = STATUS_MIN; s <= STATUS_MAX; s++) {
			if (!p->status_failed[s])
				continue;
			if (shown == 6) {
				ADD(", ...");
				break;
			}
			ADD("%s%d \xc3\x97%s", shown ? ", " : "", s,
			    units_fmt_thousands(a, sizeof a, (double)p->status_failed[s], 0));
			shown++;
		}
	}
	uint64_t tr = phase_stats_request_errors(p);
	ADD("%stransport %s", failed ? "; " : ": ", units_fmt_thousands(b, sizeof b, (double)tr, 0));
	if (tr) {
		int shown = 0;
		ADD(" (");
		for (int k = 0; k < ERRK_COUNT; k++) {
			if (k == ERRK_CONNECT || k == ERRK_TLS || !p->errors[k])
				continue;
			ADD("%s%s %s", shown++ ? ", " : "", err_kind_name((enum err_kind)k),
			    units_fmt_thousands(a, sizeof a, (double)p->errors[k], 0));
		}
		ADD(")");
	}
#undef ADD
}

void report_text(FILE *f, const struct report_ctx *c)
{
	const struct run_plan *p = c->plan;
	const struct run_result *r = c->res;
	const struct phase_stats *m = &r->measure;
	char a[48], b[48], d[48], e[48];

	char name[512];
	fprintf(f, "pacer run %s%s\n", report_run_name(name, sizeof name, p),
		c->target ? "  (self-contained)" : "");
	if (c->target)
		fprintf(f, "  embedded target: plan %s, %u thread%s\n", c->target->plan_name,
			c->target->threads, c->target->threads == 1 ? "" : "s");
	report_text_workload(f, p);
	if (p->open_loop)
		fprintf(f, "  open loop: %s req/s (%s arrivals), %u thread%s, up to %u connections\n",
			units_fmt_thousands(a, sizeof a, p->rate_per_s, p->rate_per_s == (double)(uint64_t)p->rate_per_s ? 0 : 1),
			sched_arrival_name(p->arrival), p->threads, p->threads == 1 ? "" : "s",
			p->connections);
	else
		fprintf(f, "  closed loop: %u connections, %u thread%s%s%s\n", p->concurrency,
			p->threads, p->threads == 1 ? "" : "s", p->requests ? ", requests " : "",
			p->requests ? units_fmt_thousands(a, sizeof a, (double)p->requests, 0) : "");
	if (r->warmup_ns)
		fprintf(f, "  warm-up %.2fs: %s responses, %s errors, connections open at start %s, "
			   "opened %s; not counted below\n",
			(double)r->warmup_ns / 1e9,
			units_fmt_thousands(a, sizeof a, (double)r->warmup.completed, 0),
			units_fmt_thousands(b, sizeof b, (double)phase_stats_errors(&r->warmup), 0),
			units_fmt_thousands(d, sizeof d, (double)r->warmup.conns_open_at_start, 0),
			units_fmt_thousands(e, sizeof e, (double)r->warmup.conns_opened, 0));
	fprintf(f, "  measured %.2fs%s\n\n", (double)r->measure_ns / 1e9,
		r->interrupted ? " (INTERRUPTED)" : "");

	fprintf(f, "  requests   scheduled %s  sent %s  completed %s  errors %s\n",
		units_fmt_thousands(a, sizeof a, (double)m->scheduled, 0),
		units_fmt_thousands(b, sizeof b, (double)m->sent, 0),
		units_fmt_thousands(d, sizeof d, (double)m->completed, 0),
		units_fmt_thousands(e, sizeof e, (double)phase_stats_errors(m), 0));
	if (p->open_loop)
		fprintf(f, "  rate       offered %s/s  achieved %s/s\n",
			units_fmt_thousands(a, sizeof a, r->offered_rate_per_s, 1),
			units_fmt_thousands(b, sizeof b, report_achieved_rate(r), 1));
	else
		fprintf(f, "  rate       achieved %s/s\n",
			units_fmt_thousands(a, sizeof a, report_achieved_rate(r), 1));
	if (r->n_reps > 1) {
		struct summary sr, s50, s99;
		report_rep_summary(r->reps, r->n_reps, 0, &sr);
		report_rep_summary(r->reps, r->n_reps, 1, &s50);
		report_rep_summary(r->reps, r->n_reps, 3, &s99);
		char g[32], h[32], i2[32];
		fprintf(f, "  %zu repetitions, median (min-max): achieved %s/s (%s-%s)",
			r->n_reps, units_fmt_thousands(a, sizeof a, sr.median, 1),
			units_fmt_thousands(b, sizeof b, sr.min, 1),
			units_fmt_thousands(d, sizeof d, sr.max, 1));
		fprintf(f, "  p50 %s (%s-%s)", units_fmt_duration(e, sizeof e, s50.median * 1e3),
			units_fmt_duration(g, sizeof g, s50.min * 1e3),
			units_fmt_duration(h, sizeof h, s50.max * 1e3));
		fprintf(f, "  p99 %s (%s-%s)\n", units_fmt_duration(i2, sizeof i2, s99.median * 1e3),
			units_fmt_duration(g, sizeof g, s99.min * 1e3),
			units_fmt_duration(h, sizeof h, s99.max * 1e3));
		fprintf(f, "  (figures below pool every repetition)\n");
	}
	fprintf(f, "  responses ");
	bool any = false;
	for (int cls = 1; cls <= 5; cls++) {
		uint64_t n = phase_stats_class(m, cls);
		if (!n)
			continue;
		fprintf(f, "  %dxx %s", cls, units_fmt_thousands(a, sizeof a, (double)n, 0));
		any = true;
	}
	fprintf(f, "%s\n", any ? "" : "  none");
	char eline[REPORT_ERRORS_LINE_CAP];
	report_errors_line(eline, sizeof eline, m);
	fprintf(f, "  errors     %s\n", eline);
	if (m->errors[ERRK_CONNECT] || m->errors[ERRK_TLS])
		fprintf(f, "  conn fails connect %s  tls %s  (connection attempts, not requests)\n",
			units_fmt_thousands(a, sizeof a, (double)m->errors[ERRK_CONNECT], 0),
			units_fmt_thousands(b, sizeof b, (double)m->errors[ERRK_TLS], 0));
	report_text_rules(f, m, p->inspect);
	if (c->target && !r->target.known) {
		uint64_t served = r->measure.completed + r->warmup.completed;
		fprintf(f, "  target     CPU %.3fs over %s requests: %.4f ms per request\n",
			(double)c->target->cpu_ns / 1e9,
			units_fmt_thousands(a, sizeof a, (double)served, 0),
			served ? (double)c->target->cpu_ns / 1e6 / (double)served : 0.0);
	}
	report_text_usage(f, r, c);
	if (p->url.tls || m->tls_handshakes)
		fprintf(f, "  tls        %s %s  handshakes %s (resumed %s)  failed %s\n",
			m->tls_version[0] ? m->tls_version : "-", m->tls_cipher,
			units_fmt_thousands(a, sizeof a, (double)m->tls_handshakes, 0),
			units_fmt_thousands(b, sizeof b, (double)m->tls_resumed, 0),
			units_fmt_thousands(d, sizeof d, (double)m->errors[ERRK_TLS], 0));
	fprintf(f, "  bytes      in %s  out %s   connections open at start %s, opened %s\n\n",
		units_fmt_bytes(a, sizeof a, m->bytes_in), units_fmt_bytes(b, sizeof b, m->bytes_out),
		units_fmt_thousands(d, sizeof d, (double)m->conns_open_at_start, 0),
		units_fmt_thousands(e, sizeof e, (double)m->conns_opened, 0));

	fprintf(f, "  %-13s%9s%9s%9s%9s%9s%9s%9s  %s\n", "", "p50", "p90", "p99", "p99.9", "p99.99",
		"max", "mean", "count");
	text_row(f, "latency", &m->timing[TIM_LATENCY]);
	if (m->timing[TIM_LATENCY_FAILED].total) {
		/* a fast failure makes the blend look good: both apart */
		text_row(f, "  succeeded", &m->timing[TIM_LATENCY_OK]);
		text_row(f, "  failed", &m->timing[TIM_LATENCY_FAILED]);
	}
	text_row(f, "service time", &m->timing[TIM_SERVICE]);
	text_row(f, "first byte", &m->timing[TIM_TTFB]);
	if (p->open_loop) {
		text_row(f, "send lag", &m->timing[TIM_SEND_LAG]);
		text_row(f, "loop lag", &m->timing[TIM_LOOP_LAG]);
	}
	text_row(f, "connect", &m->timing[TIM_CONNECT]);
	if (p->url.tls || m->timing[TIM_HANDSHAKE].total)
		text_row(f, "tls handshake", &m->timing[TIM_HANDSHAKE]);
	if (p->inspect && p->inspect->srvtime.src != SRVTIME_NONE)
		text_row(f, "server time", &m->timing[TIM_SERVER]);
	if (p->open_loop)
		fprintf(f, "  (latency: from each request's scheduled time to its last byte, so "
			   "queueing counts)\n");
	else
		fprintf(f, "  (closed loop: latency is measured from the send, so a slow target "
			   "also slows the offered load)\n");
	if (p->by_name)
		report_text_by_name(f, m, p->names);
	else if (report_name_count(m, p->names) > 1)
		fprintf(f, "  (%u request names: --by-name shows each one's counts and latency)\n",
			report_name_count(m, p->names));

	struct report_warnings w;
	report_warnings(c, &w);
	if (w.n)
		fprintf(f, "\n");
	for (size_t i = 0; i < w.n; i++)
		fprintf(f, "  warning: %s\n", w.msg[i]);
}
