/* pacer — the report's content for a run (see content_int.h): the summary
 * paragraph and the results (throughput, connections, latency, responses by
 * status, outcomes, request names, repetitions). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "doc/keys.h"
#include "report/content_int.h"

void content_summary_run(struct content_ctx *c)
{
	const json_t *ph = rr_get(c->root, KEY_MEASURE);
	struct phase_fig m;
	report_phase_fig(ph, &m);
	char mach[256], wh[200], subject[256], fails[900], after[1400];
	const char *plan_name = rr_str(c->root, "target.plan");
	if (c->self_contained)
		snprintf(subject, sizeof subject,
			 "pacer's embedded target (%s%s%sin the same process as the load generator)",
			 plan_name ? "plan " : "", plan_name ? plan_name : "", plan_name ? ", " : "");
	else
		snprintf(subject, sizeof subject, "the target");
	/* Without a response there is no latency to quote, and without a
	 * request sent no error rate; connections that failed are said with
	 * their cause (they are not request errors, and may be all there is). */
	bool answered = m.completed > 0, sent = m.sent > 0;
	content_conn_failures(c, ph, fails, sizeof fails);
	if (fails[0])
		snprintf(after, sizeof after, sent ? "; %s" : ": %s, and no request was sent",
			 fails);
	else
		snprintf(after, sizeof after, "%s", sent ? "" : ": no request was sent");
	/* interrupted: the requests then unanswered are outcomes, beside the
	 * error rate (their waits are in the latency) */
	double left = m.queued + m.in_flight;
	bool cut = c->interrupted && left > 0;
	if (cut) {
		size_t l = strlen(after);
		snprintf(after + l, sizeof after - l,
			 "; when the run was interrupted before its planned end, %s of the %s "
			 "requests due (%s) had no answer (in flight, or never sent): each is "
			 "in the latency at its wait until then, a lower bound",
			 fmt_int(&c->f, left), fmt_int(&c->f, m.scheduled),
			 fmt_pct(&c->f, m.scheduled > 0 ? left / m.scheduled * 100 : NAN));
	}
	char *s = NULL;
	if (c->open_loop) {
		char lat[160];
		if (answered)
			snprintf(lat, sizeof lat, "measured p50 %s and p99 %s",
				 fmt_us(&c->f, m.p50), fmt_us(&c->f, m.p99));
		else
			snprintf(lat, sizeof lat, "completed no request");
		if (asprintf(&s,
			     "In an open-loop test %s on %s, %s %s at %s requests/s offered (%s "
			     "achieved)%s%s%s%s.",
			     content_where(c, wh, sizeof wh), content_machine(c, mach, sizeof mach),
			     subject, lat, fmt_rate(&c->f, m.offered), fmt_rate(&c->f, m.achieved),
			     sent ? " with a " : "", sent ? fmt_pct(&c->f, m.error_pct) : "",
			     sent ? " error rate" : "", after) < 0)
			s = NULL;
	} else {
		double conc = rr_num_or(c->plan, KEY_CONCURRENCY, NAN);
		char lat[200];
		if (answered)
			snprintf(lat, sizeof lat,
				 "%s requests/s with p50 %s and p99 %s (measured from each send)",
				 fmt_rate(&c->f, m.achieved), fmt_us(&c->f, m.p50),
				 fmt_us(&c->f, m.p99));
		else
			snprintf(lat, sizeof lat, "no request");
		if (asprintf(&s,
			     "In a closed-loop test with %s %s %s on %s, %s completed %s%s%s%s%s.",
			     fmt_int(&c->f, conc), plural(conc, "connection", "connections"),
			     content_where(c, wh, sizeof wh), content_machine(c, mach, sizeof mach),
			     subject, lat, sent ? " and a " : "",
			     sent ? fmt_pct(&c->f, m.error_pct) : "", sent ? " error rate" : "",
			     after) < 0)
			s = NULL;
	}
	const json_t *rs = rr_obj(c->root, KEY_REPEAT_SUMMARY);
	size_t nrep = rr_len(c->root, KEY_REPETITIONS);
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
	if (c->interrupted && !cut)
		snprintf(tail, sizeof tail, " The run was interrupted before its planned end.");
	if (rr_true(c->root, "generator_limited.flagged"))
		snprintf(tail + strlen(tail), sizeof tail - strlen(tail),
			 " pacer flagged the load generator itself as a possible limit.");
	page_para(c->d, true, "%s%s%s", s ? s : "", extra, tail);
	free(s);
	/* the figures that matter, at a glance (the terminal's table) */
	const json_t *slo = rr_obj(c->root, KEY_SLO);
	const char *kl[8], *kv_[8];
	size_t nk = 0;
	if (c->open_loop) {
		kl[nk] = "Offered/s";
		kv_[nk++] = fmt_rate(&c->f, m.offered);
	}
	kl[nk] = "Achieved/s";
	kv_[nk++] = fmt_rate(&c->f, m.achieved);
	kl[nk] = "p50";
	kv_[nk++] = answered ? fmt_us(&c->f, m.p50) : "–";
	kl[nk] = "p99";
	kv_[nk++] = answered ? fmt_us(&c->f, m.p99) : "–";
	kl[nk] = "p99.9";
	kv_[nk++] = answered ? fmt_us(&c->f, m.p999) : "–";
	kl[nk] = "max";
	kv_[nk++] = answered ? fmt_us(&c->f, m.max) : "–";
	kl[nk] = "Error rate";
	kv_[nk++] = sent ? fmt_pct(&c->f, m.error_pct) : "–";
	if (slo) {
		kl[nk] = "SLO";
		kv_[nk++] = rr_true(slo, KEY_PASS) ? "Pass" : "Fail";
	}
	page_key_figures(c->d, nk, kl, kv_);
	/* --slo: the judgement of the measured phase, as `pacer run` printed it */
	if (slo) {
		const char *reason = rr_str(slo, KEY_REASON);
		page_para(c->d, false, "SLO %s: %s.",
			  rr_str(slo, KEY_EXPR) ? rr_str(slo, KEY_EXPR) : "?",
			  reason                   ? reason
			  : rr_true(slo, KEY_PASS) ? "Pass"
						   : "Fail");
	}
}

/* "N open when it began, M opened during it (K closed by the server)" of
 * a phase's connections; false when the phase has no open_at_start (an
 * older result). */
static bool conns_phrase(struct content_ctx *c, const json_t *conns, char *out, size_t cap)
{
	double at = 0, opened = rr_num_or(conns, KEY_OPENED, NAN),
	       cbs = rr_num_or(conns, KEY_CLOSED_BY_SERVER, 0);
	double stray = rr_num_or(conns, KEY_CLOSED_STRAY, 0);
	if (!rr_num(conns, KEY_OPEN_AT_START, &at))
		return false;
	int n = snprintf(out, cap, "%s open when it began, %s opened during it%s%s%s",
			 fmt_int(&c->f, at), fmt_int(&c->f, opened), cbs > 0 ? " (" : "",
			 cbs > 0 ? fmt_int(&c->f, cbs) : "", cbs > 0 ? " closed by the server)" : "");
	if (stray > 0 && n > 0 && (size_t)n < cap)
		snprintf(out + n, cap - (size_t)n,
			 "; %s closed by pacer because the server sent bytes after a complete "
			 "response, with no request outstanding (a protocol error)",
			 fmt_int(&c->f, stray));
	return true;
}

/* A run's connections in the measured phase, and what its warm-up did. */
static void connections_para(struct content_ctx *c, const json_t *warm, const json_t *ph)
{
	char m[384], w[384];
	if (!conns_phrase(c, rr_obj(ph, KEY_CONNECTIONS), m, sizeof m))
		return;
	if (warm && conns_phrase(c, rr_obj(warm, KEY_CONNECTIONS), w, sizeof w)) {
		struct phase_fig f;
		report_phase_fig(warm, &f);
		page_para(c->d, false,
			 "Connections of the measured phase: %s. The warm-up before it (%s, not "
			 "counted) completed %s %s with %s %s and p99 %s; connections: %s.",
			 m, fmt_s(&c->f, f.duration_s), fmt_int(&c->f, f.completed),
			 plural(f.completed, "response", "responses"), fmt_int(&c->f, f.errors),
			 plural(f.errors, "error", "errors"), fmt_us(&c->f, f.p99), w);
	} else {
		page_para(c->d, false, "Connections of the measured phase: %s.", m);
	}
}

/* The protocol each host of a multi-host table spoke (its `hosts`
 * entries): "By host: a:443 h2 (2 connections, streams at most 8, 3.1 on
 * average); b:443 http/1.1 (3 connections)." Nothing with one host. */
static void http2_hosts_para(struct content_ctx *c, const json_t *ph)
{
	const json_t *hosts = rr_arr(ph, KEY_HOSTS);
	if (!hosts || !json_array_size(hosts))
		return;
	char line[1024];
	size_t len = 0;
	size_t i;
	const json_t *e;
	json_array_foreach(hosts, i, e) {
		const char *name = rr_str(e, KEY_HOST), *proto = rr_str(e, KEY_PROTOCOL);
		double n2 = rr_num_or(e, KEY_CONNECTIONS_H2, 0) +
			    rr_num_or(e, KEY_CONNECTIONS_H3, 0),
		       n1 = rr_num_or(e, KEY_CONNECTIONS_H1, 0);
		char streams[96] = "";
		if (rr_num_or(e, KEY_STREAMS_MAX, 0) > 0)
			snprintf(streams, sizeof streams, ", streams at most %s, %.1f on average",
				 fmt_int(&c->f, rr_num_or(e, KEY_STREAMS_MAX, 0)),
				 rr_num_or(e, KEY_STREAMS_MEAN, 0));
		int k = snprintf(line + len, sizeof line - len, "%s%s:%.0f %s (%s %s%s)",
				 i ? "; " : "", name ? name : "?", rr_num_or(e, KEY_PORT, 0),
				 proto ? proto : "not connected", fmt_int(&c->f, n2 + n1),
				 plural(n2 + n1, "connection", "connections"), streams);
		if (k < 0 || (size_t)k >= sizeof line - len)
			break; /* the hosts that fit */
		len += (size_t)k;
	}
	if (len)
		page_para(c->d, false, "By host: %s.", line);
}

/* HTTP/2 of a phase (its `http2` object, written when HTTP/2 was spoken or
 * tried): connections that spoke it, streams in flight, GOAWAYs, retries,
 * resets, and connections that failed as HTTP/2. Nothing without it. */
static void http2_para(struct content_ctx *c, const json_t *ph)
{
	const json_t *h = rr_obj(ph, KEY_HTTP2);
	if (!h)
		return;
	/* connections opened in the warm-up carry into the measured phase:
	 * they spoke h2 there too */
	const json_t *wh = rr_obj(rr_obj(c->root, KEY_WARMUP), KEY_HTTP2);
	double wh2 = rr_num_or(wh, KEY_CONNECTIONS_H2, 0),
	       wh1 = rr_num_or(wh, KEY_CONNECTIONS_H1, 0);
	double h2 = rr_num_or(h, KEY_CONNECTIONS_H2, 0) + wh2,
	       h1 = rr_num_or(h, KEY_CONNECTIONS_H1, 0) + wh1;
	char warm[96] = "";
	if (wh2 > 0)
		snprintf(warm, sizeof warm, " (%s of them opened in the warm-up)",
			 fmt_int(&c->f, wh2));
	double resets = 0;
	const json_t *rs = rr_obj(h, KEY_RESETS);
	const char *k;
	const json_t *v;
	if (rs)
		json_object_foreach((json_t *)rs, k, v)
			resets += json_is_number(v) ? json_number_value(v) : 0;
	double failed = rr_num_or(ph, "transport_errors.protocol", 0);
	char streams[160] = "", h1s[96] = "", fails[160] = "";
	if (h2 > 0)
		snprintf(streams, sizeof streams,
			 "; streams in flight on one connection at most %s, "
			 "%.1f on average",
			 fmt_int(&c->f, rr_num_or(h, KEY_STREAMS_MAX, 0)),
			 rr_num_or(h, KEY_STREAMS_MEAN, 0));
	if (h1 > 0)
		snprintf(h1s, sizeof h1s, " (%s kept on HTTP/1.1)", fmt_int(&c->f, h1));
	if (failed > 0)
		snprintf(fails, sizeof fails, "; %s failed as HTTP/2 (errors.protocol: connection "
			 "attempts, not requests)", fmt_int(&c->f, failed));
	page_para(
		c->d, false,
		"HTTP/2: %s %s spoke h2%s%s%s; GOAWAY %s, requests retried %s (the server had not "
		"processed them), streams reset %s%s.",
		fmt_int(&c->f, h2), plural(h2, "connection", "connections"), warm, h1s, streams,
		fmt_int(&c->f, rr_num_or(h, KEY_GOAWAY, 0)),
		fmt_int(&c->f, rr_num_or(h, KEY_RETRIED, 0)), fmt_int(&c->f, resets), fails);
	http2_hosts_para(c, ph);
}

/* The sum of the counts of a by-code object (resets, closes by code). */
static double code_sum(const json_t *by_code)
{
	double n = 0;
	const char *k;
	const json_t *v;
	if (by_code)
		json_object_foreach((json_t *)by_code, k, v)
			n += json_is_number(v) ? json_number_value(v) : 0;
	return n;
}

/* HTTP/3 and QUIC of a phase (its `http3` and `quic` objects, written when
 * QUIC was spoken or tried): connections, streams in flight, GOAWAYs,
 * retries and resets; what QUIC lost, held back and how connections
 * ended; the smoothed RTT. Nothing without them. */
static void http3_para(struct content_ctx *c, const json_t *ph)
{
	const json_t *h = rr_obj(ph, KEY_HTTP3), *q = rr_obj(ph, KEY_QUIC);
	if (!h || !q)
		return;
	const json_t *wh = rr_obj(rr_obj(c->root, KEY_WARMUP), KEY_HTTP3);
	double wn = rr_num_or(wh, KEY_CONNECTIONS_H3, 0);
	double n = rr_num_or(h, KEY_CONNECTIONS_H3, 0) + wn;
	char warm[96] = "", streams[160] = "";
	if (wn > 0)
		snprintf(warm, sizeof warm, " (%s of them opened in the warm-up)",
			 fmt_int(&c->f, wn));
	if (n > 0)
		snprintf(streams, sizeof streams,
			 "; streams in flight on one connection at most %s, %.1f on average",
			 fmt_int(&c->f, rr_num_or(h, KEY_STREAMS_MAX, 0)),
			 rr_num_or(h, KEY_STREAMS_MEAN, 0));
	page_para(c->d, false,
		  "HTTP/3: %s %s spoke h3 over QUIC v1 (full 1-RTT handshakes, no 0-RTT)%s%s; "
		  "GOAWAY %s, requests retried %s (the server had not processed them), streams "
		  "reset %s; requests that waited for the server's stream credit %s, for its "
		  "flow-control credit %s.",
		  fmt_int(&c->f, n), plural(n, "connection", "connections"), warm, streams,
		  fmt_int(&c->f, rr_num_or(h, KEY_GOAWAY, 0)),
		  fmt_int(&c->f, rr_num_or(h, KEY_RETRIED, 0)),
		  fmt_int(&c->f, code_sum(rr_obj(h, KEY_RESETS))),
		  fmt_int(&c->f, rr_num_or(h, KEY_STREAM_CREDIT_WAITS, 0)),
		  fmt_int(&c->f, rr_num_or(h, KEY_FLOW_CONTROL_BLOCKED, 0)));
	const json_t *cl = rr_obj(q, KEY_CLOSES);
	double ended = rr_num_or(cl, KEY_IDLE_TIMEOUT, 0) + rr_num_or(cl, KEY_BY_SERVER, 0) +
		       rr_num_or(cl, KEY_BY_SERVER_APP, 0) + rr_num_or(cl, KEY_STATELESS_RESET, 0) +
		       rr_num_or(cl, KEY_BY_PACER, 0) + rr_num_or(cl, KEY_VERSION_NEGOTIATION, 0) +
		       rr_num_or(cl, KEY_PORT_UNREACHABLE, 0);
	char rtt[96] = "";
	if (rr_num_or(q, "smoothed_rtt.connections", 0) > 0)
		snprintf(rtt, sizeof rtt, "; smoothed RTT %s on average, %s at most",
			 fmt_us(&c->f, rr_num_or(q, "smoothed_rtt.mean_us", 0)),
			 fmt_us(&c->f, rr_num_or(q, "smoothed_rtt.max_us", 0)));
	page_para(c->d, false,
		  "QUIC: %s datagrams sent, %s received%s; packets of requests declared lost %s, "
		  "congestion events %s, probe timeouts %s, writes held by the congestion window "
		  "%s; connections ended by the server or the network %s (idle timeout %s, "
		  "the server's CONNECTION_CLOSE %s, stateless reset %s, its port gone %s), by "
		  "pacer on a "
		  "protocol violation %s%s.",
		  fmt_int(&c->f, rr_num_or(q, KEY_PACKETS_SENT, 0)),
		  fmt_int(&c->f, rr_num_or(q, KEY_PACKETS_RECEIVED, 0)),
		  rr_true(q, KEY_GSO) ? " (UDP GSO)" : "",
		  fmt_int(&c->f, rr_num_or(q, KEY_PACKETS_LOST, 0)),
		  fmt_int(&c->f, rr_num_or(q, KEY_CONGESTION_EVENTS, 0)),
		  fmt_int(&c->f, rr_num_or(q, KEY_PROBE_TIMEOUTS, 0)),
		  fmt_int(&c->f, rr_num_or(q, KEY_CWND_STALLS, 0)),
		  fmt_int(&c->f, ended - rr_num_or(cl, KEY_BY_PACER, 0)),
		  fmt_int(&c->f, rr_num_or(cl, KEY_IDLE_TIMEOUT, 0)),
		  fmt_int(&c->f, rr_num_or(cl, KEY_BY_SERVER, 0) + rr_num_or(cl, KEY_BY_SERVER_APP, 0)),
		  fmt_int(&c->f, rr_num_or(cl, KEY_STATELESS_RESET, 0)),
		  fmt_int(&c->f, rr_num_or(cl, KEY_PORT_UNREACHABLE, 0)),
		  fmt_int(&c->f, rr_num_or(cl, KEY_BY_PACER, 0)), rtt);
	http2_hosts_para(c, ph);
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

static void responses_table(struct content_ctx *c, const json_t *ph)
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
	page_table(c->d, 3, 0x6, hdr);
	for (size_t i = 0; i < n; i++) {
		double v = rr_num_or(bs, keys[i], 0);
		const char *row[3] = {keys[i], fmt_int(&c->f, v),
				      fmt_pct(&c->f, total > 0 ? v / total * 100 : NAN)};
		page_row(c->d, row);
	}
}

void content_results_run(struct content_ctx *c)
{
	const json_t *ph = rr_get(c->root, KEY_MEASURE);
	struct phase_fig m;
	report_phase_fig(ph, &m);
	page_heading(c->d, 3, "throughput", "Throughput and errors");
	const char *hdr[8] = {"Offered/s", "Achieved/s", "Sent", "Completed", "Errors",
			      "Error rate", "Drop rate", "Measured"};
	page_table(c->d, 8, 0xff, hdr);
	const char *row[8] = {c->open_loop ? fmt_rate(&c->f, m.offered) : "– (closed loop)",
			      fmt_rate(&c->f, m.achieved),
			      fmt_int(&c->f, m.sent),
			      fmt_int(&c->f, m.completed),
			      fmt_int(&c->f, m.errors),
			      m.sent > 0 ? fmt_pct(&c->f, m.error_pct) : "– (none sent)",
			      c->open_loop ? fmt_pct(&c->f, m.drop_pct) : "–",
			      fmt_s(&c->f, m.duration_s)};
	page_row(c->d, row);
	connections_para(c, rr_get(c->root, KEY_WARMUP), ph);
	http2_para(c, ph);
	http3_para(c, ph);
	page_heading(c->d, 3, "latency", "Latency");
	content_latency_table(c, ph);
	page_heading(c->d, 3, "responses", "Responses by status");
	responses_table(c, ph);
	content_outcomes_table(c, ph);
	content_by_name_table(c, ph, true);
	content_sessions_table(c, ph, true);
	content_outage_table(c, rr_arr(c->root, KEY_SERIES));
	const json_t *reps = rr_arr(c->root, KEY_REPETITIONS);
	if (reps && json_array_size(reps) > 1) {
		page_heading(c->d, 3, "repetitions", "Repetitions");
		const char *h[8] = {"Repetition", "Achieved/s", "p50", "p90", "p99", "p99.9", "max", "Errors"};
		page_table(c->d, 8, 0xfe, h);
		size_t i;
		const json_t *r;
		json_array_foreach(reps, i, r) {
			char idx[24];
			snprintf(idx, sizeof idx, "%zu", i + 1);
			const char *rw[8] = {idx,
					     fmt_rate(&c->f, rr_num_or(r, KEY_ACHIEVED_PER_S, NAN)),
					     fmt_us(&c->f, rr_num_or(r, KEY_P50_US, NAN)),
					     fmt_us(&c->f, rr_num_or(r, KEY_P90_US, NAN)),
					     fmt_us(&c->f, rr_num_or(r, KEY_P99_US, NAN)),
					     fmt_us(&c->f, rr_num_or(r, KEY_P99_9_US, NAN)),
					     fmt_us(&c->f, rr_num_or(r, KEY_MAX_US, NAN)),
					     fmt_int(&c->f, rr_num_or(r, KEY_ERRORS, NAN))};
			page_row(c->d, rw);
		}
		const json_t *rs = rr_obj(c->root, KEY_REPEAT_SUMMARY);
		if (rs) {
			char b[7][96];
			const char *rw[8] = {
				"median (min–max)",
				content_med_range(c, b[0], 96, rs, KEY_ACHIEVED_PER_S, false),
				content_med_range(c, b[1], 96, rs, KEY_P50_US, true),
				content_med_range(c, b[2], 96, rs, KEY_P90_US, true),
				content_med_range(c, b[3], 96, rs, KEY_P99_US, true),
				content_med_range(c, b[4], 96, rs, KEY_P99_9_US, true),
				content_med_range(c, b[5], 96, rs, KEY_MAX_US, true),
				content_med_range(c, b[6], 96, rs, "errors", false)};
			page_row(c->d, rw);
		}
	}
}
