/* pacer — the JSON result of `pacer run`: its phases, series and
 * repetitions (what was run and where is plan.c; the histograms are
 * hist.c; the terminal summary and the warnings are warnings.c). */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "doc/json_parts.h"
#include "doc/keys.h"
#include "doc/names.h"
#include "doc/doc.h"
#include "doc/rules.h"
#include "doc/usage.h"
#include "doc/workload.h"
#include "result/verdict.h"
#include "util/time_units.h"
#include "util/jsonw.h"
#include "stats/summary.h"
#include "table/table.h"
#include "util/units.h"

/* ---- JSON ---------------------------------------------------------------- */

/* HTTP/2 figures of a phase (only when HTTP/2 was spoken or offered). */
static void write_h2(struct jsonw *j, const struct h2_stats *h)
{
	static const char *const codes[H2_RST_CODES] = {
		"NO_ERROR", "PROTOCOL_ERROR", "INTERNAL_ERROR", "FLOW_CONTROL_ERROR",
		"SETTINGS_TIMEOUT", "STREAM_CLOSED", "FRAME_SIZE_ERROR", "REFUSED_STREAM",
		"CANCEL", "COMPRESSION_ERROR", "CONNECT_ERROR", "ENHANCE_YOUR_CALM",
		"INADEQUATE_SECURITY", "OTHER"};
	jw_key(j, KEY_HTTP2);
	jw_obj(j);
	jw_key(j, KEY_CONNECTIONS_H2);
	jw_u64(j, h->conns_h2);
	jw_key(j, KEY_CONNECTIONS_H1);
	jw_u64(j, h->conns_h1);
	jw_key(j, KEY_GOAWAY);
	jw_u64(j, h->goaway);
	jw_key(j, KEY_RETRIED);
	jw_u64(j, h->retried);
	jw_key(j, KEY_REFUSED);
	jw_u64(j, h->refused);
	jw_key(j, KEY_RESETS);
	jw_obj(j);
	for (int i = 0; i < H2_RST_CODES; i++) {
		if (!h->rst[i])
			continue;
		jw_key(j, codes[i]);
		jw_u64(j, h->rst[i]);
	}
	jw_obj_end(j);
	jw_key(j, KEY_STREAMS_MAX);
	jw_u64(j, h->streams_max);
	jw_key(j, KEY_STREAMS_MEAN);
	jw_dbl(j, h->streams_n ? (double)h->streams_sum / (double)h->streams_n : 0, 2);
	jw_obj_end(j);
}

/* The codes of an HTTP/3 per-code counter, as an object of the codes seen. */
static void write_h3_codes(struct jsonw *j, const char *key, const uint64_t *by_code)
{
	jw_key(j, key);
	jw_obj(j);
	for (unsigned i = 0; i < H3_ERR_CODES; i++) {
		if (!by_code[i])
			continue;
		jw_key(j, h3_err_name(i));
		jw_u64(j, by_code[i]);
	}
	jw_obj_end(j);
}

/* HTTP/3 figures of a phase (only when HTTP/3 was spoken or tried). */
static void write_h3(struct jsonw *j, const struct h3_stats *h)
{
	jw_key(j, KEY_HTTP3);
	jw_obj(j);
	jw_key(j, KEY_CONNECTIONS_H3);
	jw_u64(j, h->conns_h3);
	jw_key(j, KEY_GOAWAY);
	jw_u64(j, h->goaway);
	jw_key(j, KEY_RETRIED);
	jw_u64(j, h->retried);
	write_h3_codes(j, KEY_RESETS, h->resets);
	jw_key(j, KEY_STREAMS_MAX);
	jw_u64(j, h->streams_max);
	jw_key(j, KEY_STREAMS_MEAN);
	jw_dbl(j, h->streams_n ? (double)h->streams_sum / (double)h->streams_n : 0, 2);
	jw_key(j, KEY_STREAM_CREDIT_WAITS);
	jw_u64(j, h->stream_credit_waits);
	jw_key(j, KEY_FLOW_CONTROL_BLOCKED);
	jw_u64(j, h->fc_blocked);
	jw_obj_end(j);
}

/* QUIC figures of a phase (HTTP/3's transport). */
static void write_quic(struct jsonw *j, const struct quic_stats *q)
{
	jw_key(j, KEY_QUIC);
	jw_obj(j);
	jw_key(j, "handshakes");
	jw_u64(j, q->handshakes);
	jw_key(j, KEY_PACKETS_SENT);
	jw_u64(j, q->pkts_sent);
	jw_key(j, KEY_PACKETS_RECEIVED);
	jw_u64(j, q->pkts_recv);
	jw_key(j, KEY_PACKETS_LOST);
	jw_u64(j, q->pkts_lost);
	jw_key(j, KEY_CONGESTION_EVENTS);
	jw_u64(j, q->congestion_events);
	jw_key(j, KEY_PROBE_TIMEOUTS);
	jw_u64(j, q->pto);
	jw_key(j, KEY_CWND_STALLS);
	jw_u64(j, q->cwnd_stalls);
	jw_key(j, "datagrams_dropped_tx");
	jw_u64(j, q->tx_dropped);
	jw_key(j, "datagrams_dropped_rx");
	jw_u64(j, q->rx_dropped);
	jw_key(j, KEY_CLOSES);
	jw_obj(j);
	jw_key(j, KEY_IDLE_TIMEOUT);
	jw_u64(j, q->close_idle);
	jw_key(j, KEY_BY_SERVER);
	jw_u64(j, q->close_peer);
	jw_key(j, KEY_BY_SERVER_APP);
	jw_u64(j, q->close_peer_app);
	write_h3_codes(j, "by_server_app_codes", q->close_app_codes);
	jw_key(j, KEY_STATELESS_RESET);
	jw_u64(j, q->close_reset);
	jw_key(j, KEY_PORT_UNREACHABLE);
	jw_u64(j, q->close_unreachable);
	jw_key(j, KEY_BY_PACER);
	jw_u64(j, q->close_local);
	jw_key(j, KEY_VERSION_NEGOTIATION);
	jw_u64(j, q->version_negotiation);
	jw_obj_end(j);
	jw_key(j, KEY_SMOOTHED_RTT);
	jw_obj(j);
	jw_key(j, KEY_CONNECTIONS);
	jw_u64(j, q->rtt_n);
	jw_key(j, KEY_MEAN_US);
	jw_dbl(j, q->rtt_n ? (double)q->rtt_sum_ns / (double)q->rtt_n / 1e3 : 0, 3);
	jw_key(j, KEY_MAX_US);
	jw_dbl(j, (double)q->rtt_max_ns / 1e3, 3);
	jw_obj_end(j);
	jw_key(j, KEY_GSO);
	jw_bool(j, q->gso);
	jw_key(j, KEY_GRO);
	jw_bool(j, q->gro);
	jw_obj_end(j);
}

/* "connect_failures": {"refused": n, "reset": n, "timeout": n, "other": n}
 * (a phase's errors.connect, or one second's, by cause). */
static void rj_connect_failures(struct jsonw *j, const uint64_t *by_cause)
{
	jw_key(j, KEY_CONNECT_FAILURES);
	jw_obj(j);
	for (int k = 0; k < CONNF_COUNT; k++) {
		jw_key(j, connect_cause_name((enum connect_cause)k));
		jw_u64(j, by_cause[k]);
	}
	jw_obj_end(j);
}

/* The protocol a host spoke in a phase: by its requests sent, else by its
 * connections (none sent: a refusing server), else null (none connected). */
static const char *host_protocol(const struct host_stats *h)
{
	if (h->sent_h3 || h->conns_h3)
		return "h3";
	bool h2 = h->sent_h2 || (!h->sent_h1 && h->conns_h2);
	bool h1 = h->sent_h1 || (!h->sent_h2 && h->conns_h1);
	return h2 && h1 ? "h2+http/1.1" : h2 ? "h2" : h1 ? "http/1.1" : NULL;
}

/* A hosts entry's protocol, its connections by protocol and, when the
 * phase tried HTTP/2 or spoke HTTP/3, the streams in flight on its
 * connections. */
static void write_host_protocol(struct jsonw *j, const struct host_stats *h, bool h2, bool h3)
{
	jw_key(j, KEY_PROTOCOL);
	jw_str(j, host_protocol(h));
	jw_key(j, KEY_CONNECTIONS_H2);
	jw_u64(j, h->conns_h2);
	jw_key(j, KEY_CONNECTIONS_H1);
	jw_u64(j, h->conns_h1);
	if (h3) {
		jw_key(j, KEY_CONNECTIONS_H3);
		jw_u64(j, h->conns_h3);
	}
	if (!h2 && !h3)
		return;
	uint64_t sent = h->sent_h2 + h->sent_h3;
	jw_key(j, KEY_STREAMS_MAX);
	jw_u64(j, h->streams_max);
	jw_key(j, KEY_STREAMS_MEAN);
	jw_dbl(j, sent ? (double)h->streams_sum / (double)sent : 0, 2);
}

void rj_phase(struct jsonw *j, const struct phase_stats *p, double duration_ns,
		       double offered, bool open_loop, double achieved, const struct inspect *in,
		       const struct req_names *names)
{
	rj_phase_hosts(j, p, duration_ns, offered, open_loop, achieved, in, NULL, 0, names);
}

/* "by_status": the statuses count[] holds (those counted). */
static void rj_by_status(struct jsonw *j, const uint64_t *count)
{
	jw_key(j, KEY_BY_STATUS);
	jw_obj(j);
	for (int s = STATUS_MIN; s <= STATUS_MAX; s++) {
		if (!count[s])
			continue;
		char k[16];
		snprintf(k, sizeof k, "%d", s);
		jw_key(j, k);
		jw_u64(j, count[s]);
	}
	jw_obj_end(j);
}

void rj_responses_errors(struct jsonw *j, const struct phase_stats *p)
{
	jw_key(j, KEY_RESPONSES);
	jw_obj(j);
	jw_key(j, KEY_BY_CLASS);
	jw_obj(j);
	for (int cls = 1; cls <= 5; cls++) {
		char k[16];
		snprintf(k, sizeof k, "%dxx", cls);
		jw_key(j, k);
		jw_u64(j, phase_stats_class(p, cls));
	}
	jw_obj_end(j);
	rj_by_status(j, p->status);
	jw_obj_end(j);

	/* errors: requests sent that did not succeed (one definition);
	 * transport_errors: failures of connections and requests by kind. */
	jw_key(j, KEY_ERRORS);
	jw_obj(j);
	jw_key(j, KEY_TOTAL);
	jw_u64(j, phase_stats_errors(p));
	jw_key(j, KEY_PCT);
	jw_dbl(j, phase_stats_error_pct(p), 4);
	jw_key(j, KEY_FAILED_RESPONSES);
	jw_u64(j, phase_stats_failed_responses(p));
	jw_key(j, "transport");
	jw_u64(j, phase_stats_request_errors(p));
	rj_by_status(j, p->status_failed);
	jw_obj_end(j);
}

void rj_phase_hosts(struct jsonw *j, const struct phase_stats *p, double duration_ns,
		    double offered, bool open_loop, double achieved, const struct inspect *in,
		    const struct table_host *hosts, size_t n_hosts, const struct req_names *names)
{
	jw_obj(j);
	jw_key(j, KEY_DURATION_S);
	jw_dbl(j, duration_ns / 1e9, 6);
	jw_key(j, KEY_REQUESTS);
	jw_obj(j);
	jw_key(j, KEY_SCHEDULED);
	jw_u64(j, p->scheduled);
	jw_key(j, KEY_SENT);
	jw_u64(j, p->sent);
	jw_key(j, KEY_COMPLETED);
	jw_u64(j, p->completed);
	jw_key(j, KEY_QUEUED_AT_END);
	jw_u64(j, p->queued_at_end);
	jw_key(j, "in_flight_at_end");
	jw_u64(j, p->in_flight_at_end);
	jw_key(j, KEY_DROPPED);
	jw_u64(j, p->dropped);
	jw_key(j, KEY_LATE);
	jw_u64(j, p->late);
	jw_key(j, KEY_LAGGED);
	jw_u64(j, p->lagged_sent);
	jw_key(j, KEY_LAGGED_FAILED);
	jw_u64(j, p->lagged_failed);
	jw_obj_end(j);

	rj_responses_errors(j, p);
	jw_key(j, KEY_ERROR_PCT);
	jw_dbl(j, phase_stats_error_pct(p), 4);

	jw_key(j, KEY_TRANSPORT_ERRORS);
	jw_obj(j);
	for (int k = 0; k < ERRK_COUNT; k++) {
		jw_key(j, err_kind_name((enum err_kind)k));
		jw_u64(j, p->errors[k]);
	}
	jw_key(j, KEY_TOTAL);
	jw_u64(j, phase_stats_transport_errors(p));
	jw_key(j, KEY_REQUESTS);
	jw_u64(j, phase_stats_request_errors(p));
	jw_obj_end(j);
	rj_connect_failures(j, p->connect_fail);

	jw_key(j, KEY_CONNECTIONS);
	jw_obj(j);
	jw_key(j, KEY_OPENED);
	jw_u64(j, p->conns_opened);
	jw_key(j, KEY_OPEN_AT_START);
	jw_u64(j, p->conns_open_at_start);
	jw_key(j, KEY_CONNECTING_AT_START);
	jw_u64(j, p->conns_connecting_at_start);
	jw_key(j, KEY_CLOSED_BY_SERVER);
	jw_u64(j, p->closed_by_server);
	jw_key(j, KEY_CLOSED_STRAY);
	jw_u64(j, p->closed_stray);
	jw_obj_end(j);

	jw_key(j, KEY_TLS);
	jw_obj(j);
	jw_key(j, "handshakes");
	jw_u64(j, p->tls_handshakes);
	jw_key(j, "resumed");
	jw_u64(j, p->tls_resumed);
	jw_key(j, KEY_FAILED);
	jw_u64(j, p->errors[ERRK_TLS]);
	jw_key(j, KEY_VERSION);
	jw_str(j, p->tls_version[0] ? p->tls_version : NULL);
	jw_key(j, "cipher");
	jw_str(j, p->tls_cipher[0] ? p->tls_cipher : NULL);
	jw_key(j, KEY_FAILURE_REASONS);
	jw_arr(j);
	for (uint32_t i = 0; i < p->n_tls_reasons; i++)
		jw_str(j, p->tls_reasons[i]);
	jw_arr_end(j);
	jw_obj_end(j);

	bool h3 = phase_stats_quic(p);
	bool h2 = !h3 && (p->h2.conns_h2 || p->h2.conns_h1 || p->h2.streams_n || p->h2.goaway ||
			  p->errors[ERRK_PROTOCOL]);
	if (h2)
		write_h2(j, &p->h2);
	if (h3) {
		write_h3(j, &p->h3);
		write_quic(j, &p->quic);
	}

	jw_key(j, "bytes");
	jw_obj(j);
	jw_key(j, "in");
	jw_u64(j, p->bytes_in);
	jw_key(j, "out");
	jw_u64(j, p->bytes_out);
	jw_obj_end(j);

	jw_key(j, KEY_RATE);
	jw_obj(j);
	jw_key(j, KEY_OFFERED_PER_S);
	if (open_loop)
		jw_dbl(j, offered, 3);
	else
		jw_null(j);
	jw_key(j, KEY_ACHIEVED_PER_S);
	jw_dbl(j, achieved, 3);
	jw_obj_end(j);

	rj_phase_rules(j, p, in);

	for (int t = 0; t < TIM_COUNT; t++) {
		if (t == TIM_SERVER && !(in && in->srvtime.src != SRVTIME_NONE))
			continue;
		jw_key(j, timing_name((enum timing)t));
		rj_hist(j, &p->timing[t]);
	}
	if (n_hosts > 1) {
		jw_key(j, KEY_HOSTS);
		jw_arr(j);
		for (size_t i = 0; i < n_hosts && i < RESULT_MAX_HOSTS; i++) {
			jw_obj(j);
			jw_key(j, KEY_HOST);
			jw_str(j, hosts[i].name);
			jw_key(j, KEY_PORT);
			jw_u64(j, hosts[i].port);
			if (hosts[i].unix_path) {
				jw_key(j, KEY_UNIX_SOCKET);
				jw_str(j, hosts[i].unix_path);
			}
			jw_key(j, KEY_COMPLETED);
			jw_u64(j, p->host[i].completed);
			jw_key(j, KEY_ERRORS);
			jw_u64(j, p->host[i].errors);
			jw_key(j, "connection_errors");
			jw_u64(j, p->host[i].conn_errors);
			jw_key(j, "connections_opened");
			jw_u64(j, p->host[i].conns_opened);
			write_host_protocol(j, &p->host[i], h2, h3);
			jw_obj_end(j);
		}
		jw_arr_end(j);
	}
	rj_by_name(j, p, names);
	rj_sessions(j, p);
	jw_obj_end(j);
}

void rj_series(struct jsonw *j, const struct series_point *pts, size_t n, bool quic)
{
	jw_key(j, KEY_SERIES);
	jw_arr(j);
	for (size_t i = 0; i < n; i++) {
		int saved = j->indent;
		jw_obj(j);
		j->indent = 0;
		jw_key(j, KEY_T_S);
		jw_u64(j, i);
		jw_key(j, KEY_COMPLETED);
		jw_u64(j, pts[i].completed);
		jw_key(j, KEY_ERRORS);
		jw_u64(j, pts[i].errors);
		jw_key(j, KEY_TRANSPORT_ERRORS);
		jw_u64(j, pts[i].transport_errors);
		rj_connect_failures(j, pts[i].connect_fail);
		jw_key(j, KEY_DROPPED);
		jw_u64(j, pts[i].dropped);
		jw_key(j, KEY_UNSENT);
		jw_u64(j, pts[i].unsent);
		if (quic) { /* HTTP/3: what QUIC lost and held back in the second */
			jw_key(j, KEY_QUIC);
			jw_obj(j);
			jw_key(j, KEY_PACKETS_LOST);
			jw_u64(j, pts[i].quic_lost);
			jw_key(j, KEY_CWND_STALLS);
			jw_u64(j, pts[i].quic_stalls);
			jw_obj_end(j);
		}
		jw_key(j, KEY_BY_CLASS);
		jw_obj(j);
		for (int k = 0; k < 5; k++) {
			char cls[4] = {(char)('1' + k), 'x', 'x', '\0'};
			jw_key(j, cls);
			jw_u64(j, pts[i].by_class[k]);
		}
		jw_obj_end(j);
		jw_key(j, KEY_P50_US);
		jw_dbl(j, (double)pts[i].p50_ns / 1e3, 3);
		jw_key(j, KEY_P99_US);
		jw_dbl(j, (double)pts[i].p99_ns / 1e3, 3);
		jw_key(j, KEY_HIST);
		jw_obj(j);
		jw_key(j, KEY_UNIT);
		jw_str(j, "ns");
		jw_key(j, KEY_SUB_BITS);
		jw_u64(j, SERIES_SUB_BITS);
		jw_key(j, KEY_COUNTS);
		jw_arr(j);
		for (size_t k = 0; k < pts[i].n_pairs; k++) {
			jw_arr(j);
			jw_u64(j, pts[i].pairs[k][0]);
			jw_u64(j, pts[i].pairs[k][1]);
			jw_arr_end(j);
		}
		jw_arr_end(j);
		jw_obj_end(j);
		jw_obj_end(j);
		j->indent = saved;
	}
	jw_arr_end(j);
}

/* Figure k of a repetition, in the unit its JSON key says. */
static double rep_value(const struct rep_figure *f, int k)
{
	switch (k) {
	case 0: return f->achieved_per_s;
	case 1: return (double)f->p50_ns / 1e3;
	case 2: return (double)f->p90_ns / 1e3;
	case 3: return (double)f->p99_ns / 1e3;
	case 4: return (double)f->p99_9_ns / 1e3;
	case 5: return (double)f->max_ns / 1e3;
	case 6: return (double)f->errors;
	default: return 0;
	}
}

static const char *const rep_keys[] = {KEY_ACHIEVED_PER_S, KEY_P50_US, KEY_P90_US, KEY_P99_US,
				       KEY_P99_9_US,       KEY_MAX_US, "errors"};
#define REP_KEYS (sizeof rep_keys / sizeof rep_keys[0])

void report_rep_summary(const struct rep_figure *reps, size_t n, int k, struct summary *out)
{
	double v[SUMMARY_MAX_N];
	size_t m = n < SUMMARY_MAX_N ? n : SUMMARY_MAX_N;
	for (size_t i = 0; i < m; i++)
		v[i] = rep_value(&reps[i], k);
	summary_of(v, m, out);
}

void rj_repetitions(struct jsonw *j, const struct rep_figure *reps, size_t n)
{
	jw_key(j, KEY_REPETITIONS);
	jw_arr(j);
	for (size_t i = 0; i < n; i++) {
		int saved = j->indent;
		jw_obj(j);
		j->indent = 0;
		for (size_t k = 0; k < REP_KEYS; k++) {
			jw_key(j, rep_keys[k]);
			jw_dbl(j, rep_value(&reps[i], (int)k), 3);
		}
		jw_key(j, KEY_COMPLETED);
		jw_u64(j, reps[i].completed);
		jw_obj_end(j);
		j->indent = saved;
	}
	jw_arr_end(j);
	jw_key(j, KEY_REPEAT_SUMMARY);
	jw_obj(j);
	for (size_t k = 0; k < REP_KEYS; k++) {
		struct summary s;
		report_rep_summary(reps, n, (int)k, &s);
		jw_key(j, rep_keys[k]);
		int saved = j->indent;
		jw_obj(j);
		j->indent = 0;
		jw_key(j, KEY_MEDIAN);
		jw_dbl(j, s.median, 3);
		jw_key(j, KEY_MIN);
		jw_dbl(j, s.min, 3);
		jw_key(j, KEY_MAX);
		jw_dbl(j, s.max, 3);
		jw_obj_end(j);
		j->indent = saved;
	}
	jw_obj_end(j);
}

void rj_warnings(struct jsonw *j, const struct report_warnings *w)
{
	jw_key(j, KEY_WARNINGS);
	jw_arr(j);
	for (size_t i = 0; i < w->n; i++)
		jw_str(j, w->msg[i]);
	jw_arr_end(j);
}

int report_json(FILE *f, const struct report_ctx *c)
{
	const struct run_result *r = c->res;
	struct jsonw jj, *j = &jj;
	jw_init(j, f, 1);
	rj_head(j, c, "run", r->started_wall_ns, r->interrupted);
	jw_key(j, KEY_PLAN);
	jw_obj(j);
	rj_plan_fields(j, c->plan);
	jw_obj_end(j);
	rj_env(j, c->env);
	rj_connected(j, c->conns, c->n_conns);
	rj_clock(j, c->plan, r);
	uint64_t responses = r->measure.completed + r->warmup.completed;
	if (c->target)
		rj_target(j, c->target, responses);
	rj_generator(j, r, responses, c);
	rj_target_cores(j, c);
	if (r->warmup_ns) {
		jw_key(j, KEY_WARMUP);
		double wrate = (double)r->warmup.completed * 1e9 / (double)r->warmup_ns;
		rj_phase_hosts(j, &r->warmup, (double)r->warmup_ns, r->offered_rate_per_s,
			       r->open_loop, wrate, c->plan->inspect, c->plan->table_hosts,
			       c->plan->table_n_hosts, c->plan->names);
	}
	jw_key(j, KEY_MEASURE);
	rj_phase_hosts(j, &r->measure, (double)r->measure_ns, r->offered_rate_per_s, r->open_loop,
		       report_achieved_rate(r), c->plan->inspect, c->plan->table_hosts,
		       c->plan->table_n_hosts, c->plan->names);
	rj_series(j, r->series, r->series_len,
		  phase_stats_quic(&r->measure) || phase_stats_quic(&r->warmup));
	if (r->n_reps > 1)
		rj_repetitions(j, r->reps, r->n_reps);
	if (c->verdict) {
		static char expr[SLO_FORMAT_MAX]; /* the SLO as pacer reads it (canonical) */
		if (!c->slo || slo_format(c->slo, expr, sizeof expr) < 0)
			snprintf(expr, sizeof expr, "%s", c->slo_expr ? c->slo_expr : "");
		jw_key(j, KEY_SLO);
		jw_obj(j);
		jw_key(j, KEY_EXPR);
		jw_str(j, expr);
		rj_verdict_fields(j, c->verdict, c->slo);
		jw_obj_end(j);
	}
	rj_usage(j, r, c);
	struct report_warnings w;
	report_warnings(c, &w);
	rj_warnings(j, &w);
	jw_obj_end(j);
	return ferror(f) ? -EIO : 0;
}

