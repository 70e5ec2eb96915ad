/* pacer — the warnings of `pacer run` and its one-line errors summary, both
 * written into the JSON result (run.c), and the achieved rate they
 * and the JSON state. The terminal summary is rendered from that JSON, as
 * `pacer report --format text` renders it (txt.c). */
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "doc/doc.h"
#include "doc/usage.h"
#include "util/units.h"

double report_achieved_rate(const struct run_result *r)
{
	if (r->measure_ns == 0)
		return 0;
	return (double)r->measure.completed * 1e9 / (double)r->measure_ns;
}

static void warn(struct report_warnings *w, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#include <stdarg.h>

/* Append to out[0..cap) at o, truncating at the cap; the functions below
 * keep `out`, `cap` and `o` in scope. */
#define ADD(...)                                                                                   \
	do {                                                                                       \
		int w_ = snprintf(out + o, o < cap ? cap - o : 0, __VA_ARGS__);                    \
		if (w_ > 0)                                                                        \
			o = o + (size_t)w_ < cap ? o + (size_t)w_ : cap - 1;                       \
	} while (0)

static void warn(struct report_warnings *w, const char *fmt, ...)
{
	if (w->n >= REPORT_WARN_CAP)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(w->msg[w->n++], REPORT_WARN_LEN, fmt, ap);
	va_end(ap);
}

/* Connection failures of kind k (TLS handshakes, or HTTP/2 or HTTP/3
 * connections), once, with the reasons seen (warm-up included: pre-opened
 * connections count there). The reasons of both kinds share one list;
 * those of HTTP/2 name it, those of HTTP/3 begin with "HTTP/3: ". */
static void conn_fail_warning(struct report_warnings *w, const struct phase_stats *warm,
			      const struct phase_stats *m, enum err_kind k)
{
	uint64_t n = warm->errors[k] + m->errors[k];
	if (!n)
		return;
	char reasons[REPORT_WARN_LEN] = "";
	size_t len = 0;
	const struct phase_stats *ph[2] = {m, warm};
	for (int p = 0; p < 2; p++)
		for (uint32_t i = 0; i < ph[p]->n_tls_reasons && len < sizeof reasons; i++) {
			const char *r = ph[p]->tls_reasons[i];
			bool proto = strstr(r, "HTTP/2") != NULL || !strncmp(r, "HTTP/3: ", 8);
			if (proto != (k == ERRK_PROTOCOL) ||
			    (p == 1 && memmem(reasons, len, r, strlen(r))))
				continue;
			int wr = snprintf(reasons + len, sizeof reasons - len, "%s%s", len ? "; " : "", r);
			if (wr > 0)
				len += (size_t)wr;
		}
	if (k == ERRK_TLS)
		warn(w, "TLS handshake failed (%" PRIu64 " time%s): %s", n, n == 1 ? "" : "s",
		     reasons[0] ? reasons : "no reason recorded");
	else
		warn(w,
		     "%" PRIu64 " connection%s failed as HTTP/%c (transport_errors.protocol, not "
		     "counted as requests): %s",
		     n, n == 1 ? "" : "s", phase_stats_quic(m) || phase_stats_quic(warm) ? '3' : '2',
		     reasons[0] ? reasons : "no reason recorded");
}

bool report_steal_words(char *out, size_t cap, const struct run_result *r)
{
	size_t o = 0;
	if (cap)
		out[0] = '\0';
	double gen = run_result_steal_pct(r, false), all = run_result_steal_pct(r, true);
	if (!run_result_steal_material(r))
		return false;
	char a[32], b[32];
	ADD("%s of the generator's CPUs", units_fmt_pct(a, sizeof a, gen));
	if (!isnan(all) && r->gen_steal.all_span_ns != r->gen_steal.gen_span_ns)
		ADD(" (the machine's: %s)", units_fmt_pct(b, sizeof b, all));
	return true;
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
	uint64_t left = m->queued_at_end + m->in_flight_at_end;
	if (r->interrupted && left)
		warn(w,
		     "interrupted: the run was stopped early; figures cover %.2fs of the planned "
		     "%.2fs, and %" PRIu64 " of the %" PRIu64 " requests due (%.1f %%) had no "
		     "answer then (in flight, or never sent): each is in the latency at its wait "
		     "until the interrupt, a lower bound",
		     (double)r->measure_ns / 1e9, (double)c->plan->duration_ns / 1e9, left,
		     m->scheduled,
		     m->scheduled ? 100.0 * (double)left / (double)m->scheduled : 0.0);
	else if (r->interrupted)
		warn(w, "interrupted: the run was stopped early; figures cover %.2fs of the planned %.2fs",
		     (double)r->measure_ns / 1e9, (double)c->plan->duration_ns / 1e9);
	struct gen_verdict gv;
	report_gencheck(r, c, &gv);
	for (int i = 0; i < GENCHECK_N; i++) {
		const struct gencheck *k = &gv.c[i];
		if (!k->fired)
			continue;
		bool pct = !strcmp(k->unit, "pct");
		if (pct) {
			units_fmt_pct(a, sizeof a, k->value);
			units_fmt_pct(b, sizeof b, k->threshold);
		} else {
			units_fmt_duration(a, sizeof a, k->value * 1e3);
			units_fmt_duration(b, sizeof b, k->threshold * 1e3);
		}
		warn(w, "generator limited (%s %s, limit %s): %s; %s", k->name, a, b, k->finding,
		     k->advice);
	}
	char cause[REPORT_CAUSE_CAP], waited[96] = "";
	bool cause_known = report_connect_cause(cause, sizeof cause, m, r->series, r->series_len);
	uint64_t unsent_max = 0;
	for (size_t i = 0; i < r->series_len; i++)
		if (r->series[i].unsent > unsent_max)
			unsent_max = r->series[i].unsent;
	if (unsent_max)
		snprintf(waited, sizeof waited, " (up to %" PRIu64 " unsent at a second's end)",
			 unsent_max);
	if (r->open_loop) {
		uint64_t lag = hist_percentile(&m->timing[TIM_SEND_LAG], 99.0);
		/* the cause, from the evidence: refused connections are not too few */
		if (!gv.c[0].fired && lag > REPORT_SEND_LAG_WARN_NS && cause_known) {
			warn(w,
			     "requests waited for a connection before they could be sent (send-lag "
			     "p99 %s > %s): %s; requests waited while pacer reconnected%s, and that "
			     "wait counts in latency",
			     units_fmt_duration(a, sizeof a, (double)lag),
			     units_fmt_duration(b, sizeof b, (double)REPORT_SEND_LAG_WARN_NS), cause,
			     waited);
			cause_known = false; /* said */
		} else if (!gv.c[0].fired && lag > REPORT_SEND_LAG_WARN_NS)
			warn(w,
			     "requests waited for a free connection before they could be sent "
			     "(send-lag p99 %s > %s): the target was slow to answer or --connections "
			     "is too low; that wait counts in latency",
			     units_fmt_duration(a, sizeof a, (double)lag),
			     units_fmt_duration(b, sizeof b, (double)REPORT_SEND_LAG_WARN_NS));
		double ach = report_achieved_rate(r);
		if (!r->interrupted && !gv.c[2].fired && ach < 0.95 * r->offered_rate_per_s)
			warn(w, "achieved rate %s/s is under 95%% of the offered %s/s: %s",
			     units_fmt_rate(a, sizeof a, ach),
			     units_fmt_rate(b, sizeof b, r->offered_rate_per_s), gv.c[2].finding);
	}
	if (cause_known)
		warn(w, "%s%s%s", cause, unsent_max ? "; requests waited for a connection" : "",
		     waited);
	/* a closed loop drops a request whose host has no connection while its
	 * connections fail (it would hold a slot of the concurrency) */
	uint64_t conn_failed = 0;
	for (int k = 0; k < ERRK_COUNT; k++)
		if (k == ERRK_CONNECT || k == ERRK_TLS || k == ERRK_PROTOCOL)
			conn_failed += r->warmup.errors[k] + m->errors[k];
	if (m->dropped)
		warn(w, "%" PRIu64 " requests were due but dropped (%s): never sent", m->dropped,
		     !r->open_loop && conn_failed ? "the target's connections failed"
						  : "backlog full");
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
	conn_fail_warning(w, &r->warmup, m, ERRK_TLS);
	conn_fail_warning(w, &r->warmup, m, ERRK_PROTOCOL);
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
	char steal[160];
	if (report_steal_words(steal, sizeof steal, r))
		warn(w,
		     "the hypervisor took %s during the load (steal time): its pauses count in "
		     "latency and send lag as the generator's lateness, so their tails may be the "
		     "host's, not the target's; repeat on a quieter machine or on dedicated cores",
		     steal);
	if (m->completed == 0)
		warn(w, "no response was completed in the measured phase");
}

bool report_connect_cause(char *out, size_t cap, const struct phase_stats *p,
			  const struct series_point *pts, size_t n)
{
	size_t o = 0;
	static const char *const lead[CONNF_COUNT] = {
		"the target refused connections", "the target reset connections as they opened",
		"connects to the target timed out", "connects to the target failed"};
	static const char *const verb[CONNF_COUNT] = {"refused", "reset", "timed out",
						      "failed otherwise"};
	static const char *const why[CONNF_COUNT] = {
		" (nothing listened on the port)", "", " (no answer within --timeout)",
		" (unreachable, or no local port or descriptor left)"};
	out[0] = '\0';
	uint64_t by[CONNF_COUNT], sum = 0;
	for (int k = 0; k < CONNF_COUNT; k++)
		sum += by[k] = p->connect_fail[k];
	uint64_t conn = p->errors[ERRK_CONNECT], tls = p->errors[ERRK_TLS];
	uint64_t unknown = conn > sum ? conn - sum : 0; /* causes not recorded */
	if (!conn && !tls)
		return false;
	int top = -1;
	for (int k = 0; k < CONNF_COUNT; k++)
		if (by[k] && (top < 0 || by[k] > by[top]))
			top = k;
	if (top >= 0)
		ADD("%s: %" PRIu64 " connect%s %s%s", lead[top], by[top], by[top] == 1 ? "" : "s",
		    verb[top], why[top]);
	else if (unknown)
		ADD("connects to the target failed: %" PRIu64, unknown);
	for (int k = 0; k < CONNF_COUNT; k++)
		if (k != top && by[k])
			ADD(", %" PRIu64 " %s", by[k], verb[k]);
	if (top >= 0 && unknown)
		ADD(", %" PRIu64 " of unknown cause", unknown);
	if (conn) {
		size_t first = SIZE_MAX, last = 0;
		uint64_t completed = 0, in_series = 0;
		for (size_t i = 0; pts && i < n; i++) {
			uint64_t f = 0;
			for (int k = 0; k < CONNF_COUNT; k++)
				f += pts[i].connect_fail[k];
			in_series += f;
			if (!f)
				continue;
			if (first == SIZE_MAX)
				first = i;
			last = i;
		}
		/* the seconds only when they hold every failure of the phase (with
		 * --repeat the series is the first repetition's) */
		if (in_series != conn)
			first = SIZE_MAX;
		for (size_t i = first; first != SIZE_MAX && i <= last; i++)
			completed += pts[i].completed;
		if (first == last && first != SIZE_MAX)
			ADD(" in second %zu of the measured phase, in which %" PRIu64
			    " response%s completed",
			    first, completed, completed == 1 ? "" : "s");
		else if (first != SIZE_MAX)
			ADD(" in seconds %zu-%zu of the measured phase, in which %" PRIu64
			    " response%s completed",
			    first, last, completed, completed == 1 ? "" : "s");
	}
	if (tls)
		ADD("%s%" PRIu64 " TLS handshake%s failed",
		    conn ? "; " : "TLS handshakes with the target failed: ", tls, tls == 1 ? "" : "s");
	return true;
}

void report_errors_line(char *out, size_t cap, const struct phase_stats *p)
{
	char a[32], b[32];
	size_t o = 0;
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
			if (k == ERRK_CONNECT || k == ERRK_TLS || k == ERRK_PROTOCOL || !p->errors[k])
				continue;
			ADD("%s%s %s", shown++ ? ", " : "", err_kind_name((enum err_kind)k),
			    units_fmt_thousands(a, sizeof a, (double)p->errors[k], 0));
		}
		ADD(")");
	}
}
