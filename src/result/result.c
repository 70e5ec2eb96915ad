#include "result/result.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/err.h"

const char *err_kind_name(enum err_kind k)
{
	static const char *names[ERRK_COUNT] = {"connect", "read", "write", "timeout", "parse", "closed",
						 "tls", "reset", "protocol"};
	return (unsigned)k < ERRK_COUNT ? names[k] : "unknown";
}

bool err_kind_is_connection(enum err_kind k)
{
	return k == ERRK_CONNECT || k == ERRK_TLS || k == ERRK_PROTOCOL;
}

const char *connect_cause_name(enum connect_cause k)
{
	static const char *names[CONNF_COUNT] = {"refused", "reset", "timeout", "other"};
	return (unsigned)k < CONNF_COUNT ? names[k] : "unknown";
}

enum connect_cause connect_cause_of(int err)
{
	switch (err < 0 ? -err : err) {
	case ECONNREFUSED:
		return CONNF_REFUSED;
	case ECONNRESET:
	case ECONNABORTED:
	case EPIPE:
		return CONNF_RESET;
	case ETIMEDOUT:
		return CONNF_TIMEOUT;
	default:
		return CONNF_OTHER;
	}
}

const char *timing_name(enum timing t)
{
	static const char *names[TIM_COUNT] = {"latency", "service_time", "ttfb", "connect_time",
					       "send_lag", "loop_lag", "server_time",
					       "handshake", "latency_ok", "latency_failed",
					       "latency_lagged"};
	return (unsigned)t < TIM_COUNT ? names[t] : "unknown";
}

int phase_stats_init(struct phase_stats *p)
{
	memset(p, 0, sizeof *p);
	for (int i = 0; i < TIM_COUNT; i++) {
		int rc = hist_init(&p->timing[i], HIST_SUB_BITS, HIST_MAX_NS);
		if (rc) {
			phase_stats_free(p);
			return rc;
		}
	}
	int rc = hist_init(&p->sessions.duration, NAME_SUB_BITS, HIST_MAX_NS);
	if (rc)
		phase_stats_free(p);
	return rc;
}

static void names_free(struct name_stats *ns, uint32_t n)
{
	for (uint32_t i = 0; ns && i < n; i++)
		hist_free(&ns[i].latency);
	free(ns);
}

int phase_stats_init_names(struct phase_stats *p, uint32_t n)
{
	if (n < 2 || n > RESULT_MAX_NAMES + 1 || p->name)
		return -EINVAL;
	struct name_stats *ns = calloc(n, sizeof *ns);
	if (!ns)
		return -ENOMEM;
	for (uint32_t i = 0; i < n; i++)
		if (hist_init(&ns[i].latency, NAME_SUB_BITS, HIST_MAX_NS)) {
			names_free(ns, n);
			return -ENOMEM;
		}
	p->name = ns;
	p->n_names = n;
	return 0;
}

void phase_stats_free(struct phase_stats *p)
{
	for (int i = 0; i < TIM_COUNT; i++)
		hist_free(&p->timing[i]);
	hist_free(&p->sessions.duration);
	names_free(p->name, p->n_names);
	p->name = NULL;
	p->n_names = 0;
}

void phase_stats_reset(struct phase_stats *p)
{
	struct hist keep[TIM_COUNT];
	memcpy(keep, p->timing, sizeof keep);
	struct hist sdur = p->sessions.duration;
	struct name_stats *ns = p->name;
	uint32_t n_names = p->n_names;
	memset(p, 0, sizeof *p);
	memcpy(p->timing, keep, sizeof keep);
	for (int i = 0; i < TIM_COUNT; i++)
		hist_reset(&p->timing[i]);
	p->sessions.duration = sdur;
	hist_reset(&p->sessions.duration);
	p->name = ns;
	p->n_names = n_names;
	for (uint32_t i = 0; i < n_names; i++) {
		struct hist h = ns[i].latency;
		hist_reset(&h);
		ns[i] = (struct name_stats){.latency = h};
	}
}

/* dst's per-name figures += src's (see phase_stats_merge). */
static int names_merge(struct phase_stats *dst, const struct phase_stats *src)
{
	if (!src->n_names)
		return 0;
	if (!dst->n_names) {
		int rc = phase_stats_init_names(dst, src->n_names);
		if (rc)
			return rc;
	}
	if (dst->n_names != src->n_names)
		return PACER_ELAYOUT;
	for (uint32_t i = 0; i < src->n_names; i++) {
		int rc = hist_merge(&dst->name[i].latency, &src->name[i].latency);
		if (rc)
			return rc;
	}
	for (uint32_t i = 0; i < src->n_names; i++) {
		struct name_stats *d = &dst->name[i];
		const struct name_stats *s = &src->name[i];
		d->completed += s->completed;
		d->ok += s->ok;
		d->errors += s->errors;
		d->in_flight_at_end += s->in_flight_at_end;
	}
	return 0;
}

static void h2_stats_merge(struct h2_stats *d, const struct h2_stats *s)
{
	d->conns_h2 += s->conns_h2;
	d->conns_h1 += s->conns_h1;
	d->goaway += s->goaway;
	d->retried += s->retried;
	d->refused += s->refused;
	for (int i = 0; i < H2_RST_CODES; i++)
		d->rst[i] += s->rst[i];
	if (s->streams_max > d->streams_max)
		d->streams_max = s->streams_max;
	d->streams_sum += s->streams_sum;
	d->streams_n += s->streams_n;
}

static int sessions_merge(struct session_stats *d, const struct session_stats *s)
{
	d->on = d->on || s->on;
	d->started += s->started;
	d->completed += s->completed;
	d->failed += s->failed;
	d->abandoned += s->abandoned;
	d->dropped += s->dropped;
	d->steps += s->steps;
	return hist_merge(&d->duration, &s->duration);
}

bool phase_stats_quic(const struct phase_stats *p)
{
	return p->quic.pkts_sent || p->quic.pkts_recv || p->quic.handshakes || p->h3.conns_h3 ||
	       p->h3.streams_n;
}

unsigned h3_err_index(uint64_t code)
{
	if (code >= 0x100 && code <= 0x110)
		return (unsigned)(code - 0x100);
	if (code >= 0x200 && code <= 0x202)
		return (unsigned)(code - 0x200 + 17);
	return H3_ERR_CODES - 1;
}

const char *h3_err_name(unsigned i)
{
	static const char *const names[H3_ERR_CODES] = {
		"H3_NO_ERROR", "H3_GENERAL_PROTOCOL_ERROR", "H3_INTERNAL_ERROR",
		"H3_STREAM_CREATION_ERROR", "H3_CLOSED_CRITICAL_STREAM", "H3_FRAME_UNEXPECTED",
		"H3_FRAME_ERROR", "H3_EXCESSIVE_LOAD", "H3_ID_ERROR", "H3_SETTINGS_ERROR",
		"H3_MISSING_SETTINGS", "H3_REQUEST_REJECTED", "H3_REQUEST_CANCELLED",
		"H3_REQUEST_INCOMPLETE", "H3_MESSAGE_ERROR", "H3_CONNECT_ERROR",
		"H3_VERSION_FALLBACK", "QPACK_DECOMPRESSION_FAILED", "QPACK_ENCODER_STREAM_ERROR",
		"QPACK_DECODER_STREAM_ERROR", "OTHER"};
	return i < H3_ERR_CODES ? names[i] : "OTHER";
}

static void h3_stats_merge(struct h3_stats *d, const struct h3_stats *s)
{
	d->conns_h3 += s->conns_h3;
	d->goaway += s->goaway;
	d->retried += s->retried;
	for (int i = 0; i < H3_ERR_CODES; i++)
		d->resets[i] += s->resets[i];
	if (s->streams_max > d->streams_max)
		d->streams_max = s->streams_max;
	d->streams_sum += s->streams_sum;
	d->streams_n += s->streams_n;
	d->stream_credit_waits += s->stream_credit_waits;
	d->fc_blocked += s->fc_blocked;
}

static void quic_stats_merge(struct quic_stats *d, const struct quic_stats *s)
{
	d->handshakes += s->handshakes;
	d->pkts_sent += s->pkts_sent;
	d->pkts_recv += s->pkts_recv;
	d->pkts_lost += s->pkts_lost;
	d->congestion_events += s->congestion_events;
	d->pto += s->pto;
	d->cwnd_stalls += s->cwnd_stalls;
	d->tx_dropped += s->tx_dropped;
	d->rx_dropped += s->rx_dropped;
	d->close_idle += s->close_idle;
	d->close_peer += s->close_peer;
	d->close_peer_app += s->close_peer_app;
	for (int i = 0; i < H3_ERR_CODES; i++)
		d->close_app_codes[i] += s->close_app_codes[i];
	d->close_reset += s->close_reset;
	d->close_unreachable += s->close_unreachable;
	d->close_local += s->close_local;
	d->version_negotiation += s->version_negotiation;
	d->rtt_n += s->rtt_n;
	d->rtt_sum_ns += s->rtt_sum_ns;
	if (s->rtt_max_ns > d->rtt_max_ns)
		d->rtt_max_ns = s->rtt_max_ns;
	d->gso |= s->gso;
	d->gro |= s->gro;
}

int phase_stats_merge(struct phase_stats *dst, const struct phase_stats *src)
{
	int nrc = names_merge(dst, src);
	if (nrc)
		return nrc;
	dst->scheduled += src->scheduled;
	dst->sent += src->sent;
	dst->completed += src->completed;
	dst->queued_at_end += src->queued_at_end;
	dst->in_flight_at_end += src->in_flight_at_end;
	dst->dropped += src->dropped;
	dst->late += src->late;
	dst->lagged_sent += src->lagged_sent;
	dst->lagged_failed += src->lagged_failed;
	for (int i = 0; i < ERRK_COUNT; i++)
		dst->errors[i] += src->errors[i];
	for (int i = 0; i < CONNF_COUNT; i++)
		dst->connect_fail[i] += src->connect_fail[i];
	dst->conns_opened += src->conns_opened;
	dst->conns_open_at_start += src->conns_open_at_start;
	dst->conns_connecting_at_start += src->conns_connecting_at_start;
	dst->closed_by_server += src->closed_by_server;
	dst->closed_stray += src->closed_stray;
	dst->cap_wait_ns += src->cap_wait_ns;
	dst->cap_wait_idle_ns += src->cap_wait_idle_ns;
	dst->bytes_in += src->bytes_in;
	dst->bytes_out += src->bytes_out;
	for (int i = 0; i <= STATUS_MAX; i++) {
		dst->status[i] += src->status[i];
		dst->status_failed[i] += src->status_failed[i];
	}
	dst->success_ok += src->success_ok;
	for (int i = 0; i < RESULT_MAX_OUTCOMES; i++)
		dst->outcome[i] += src->outcome[i];
	dst->server_time_missing += src->server_time_missing;
	dst->tls_handshakes += src->tls_handshakes;
	dst->tls_resumed += src->tls_resumed;
	if (!dst->tls_version[0]) {
		memcpy(dst->tls_version, src->tls_version, sizeof dst->tls_version);
		memcpy(dst->tls_cipher, src->tls_cipher, sizeof dst->tls_cipher);
	}
	for (uint32_t i = 0; i < src->n_tls_reasons; i++)
		phase_stats_tls_reason(dst, src->tls_reasons[i]);
	h2_stats_merge(&dst->h2, &src->h2);
	h3_stats_merge(&dst->h3, &src->h3);
	quic_stats_merge(&dst->quic, &src->quic);
	int src_rc = sessions_merge(&dst->sessions, &src->sessions);
	if (src_rc)
		return src_rc;
	if (src->n_hosts > dst->n_hosts)
		dst->n_hosts = src->n_hosts;
	for (uint32_t i = 0; i < src->n_hosts && i < RESULT_MAX_HOSTS; i++) {
		dst->host[i].completed += src->host[i].completed;
		dst->host[i].errors += src->host[i].errors;
		dst->host[i].conn_errors += src->host[i].conn_errors;
		dst->host[i].conns_opened += src->host[i].conns_opened;
		dst->host[i].conns_h2 += src->host[i].conns_h2;
		dst->host[i].conns_h1 += src->host[i].conns_h1;
		dst->host[i].sent_h2 += src->host[i].sent_h2;
		dst->host[i].sent_h1 += src->host[i].sent_h1;
		dst->host[i].conns_h3 += src->host[i].conns_h3;
		dst->host[i].sent_h3 += src->host[i].sent_h3;
		if (src->host[i].streams_max > dst->host[i].streams_max)
			dst->host[i].streams_max = src->host[i].streams_max;
		dst->host[i].streams_sum += src->host[i].streams_sum;
	}
	for (int i = 0; i < TIM_COUNT; i++) {
		int rc = hist_merge(&dst->timing[i], &src->timing[i]);
		if (rc)
			return rc;
	}
	return 0;
}

uint64_t phase_stats_transport_errors(const struct phase_stats *p)
{
	uint64_t n = 0;
	for (int i = 0; i < ERRK_COUNT; i++)
		n += p->errors[i];
	return n;
}

uint64_t phase_stats_request_errors(const struct phase_stats *p)
{
	uint64_t n = 0;
	for (int k = 0; k < ERRK_COUNT; k++)
		if (!err_kind_is_connection((enum err_kind)k))
			n += p->errors[k];
	return n;
}

uint64_t phase_stats_failed_responses(const struct phase_stats *p)
{
	return p->completed > p->success_ok ? p->completed - p->success_ok : 0;
}

uint64_t phase_stats_errors(const struct phase_stats *p)
{
	return phase_stats_request_errors(p) + phase_stats_failed_responses(p);
}

double phase_stats_error_pct(const struct phase_stats *p)
{
	return p->sent ? 100.0 * (double)phase_stats_errors(p) / (double)p->sent : 0;
}

void phase_stats_tls_reason(struct phase_stats *p, const char *reason)
{
	if (!reason || !*reason)
		return;
	for (uint32_t i = 0; i < p->n_tls_reasons; i++)
		if (strncmp(p->tls_reasons[i], reason, RESULT_TLS_REASON_CAP - 1) == 0)
			return;
	if (p->n_tls_reasons >= RESULT_TLS_REASONS)
		return;
	char *d = p->tls_reasons[p->n_tls_reasons++];
	size_t n = strlen(reason);
	if (n > RESULT_TLS_REASON_CAP - 1) {
		n = RESULT_TLS_REASON_CAP - 1;
		while (n && ((unsigned char)reason[n] & 0xC0) == 0x80)
			n--; /* do not cut a UTF-8 sequence */
	}
	memcpy(d, reason, n);
	d[n] = '\0';
}

uint64_t phase_stats_class(const struct phase_stats *p, int cls)
{
	uint64_t n = 0;
	for (int s = cls * 100; s < cls * 100 + 100 && s <= STATUS_MAX; s++)
		n += p->status[s];
	return n;
}

void rep_figure_of(const struct run_result *r, struct rep_figure *f)
{
	rep_figure_of_phase(&r->measure, r->measure_ns, f);
	f->warmup_completed = r->warmup.completed;
	f->warmup_errors = phase_stats_errors(&r->warmup);
	const struct target_usage *t = &r->target;
	if (t->known && r->measure.completed) {
		f->target_known = true;
		f->target_cpu_ms_per_req = t->cpu_s * 1e3 / (double)r->measure.completed;
	}
	if (t->known && t->rss_known) {
		f->target_rss_known = true;
		f->target_rss_peak_mib = (double)t->rss_peak_bytes / (1024.0 * 1024.0);
	}
}

void rep_figure_of_phase(const struct phase_stats *p, uint64_t duration_ns, struct rep_figure *f)
{
	const struct hist *h = &p->timing[TIM_LATENCY];
	f->achieved_per_s = duration_ns ? (double)p->completed * 1e9 / (double)duration_ns : 0;
	f->p50_ns = hist_percentile(h, 50);
	f->p90_ns = hist_percentile(h, 90);
	f->p99_ns = hist_percentile(h, 99);
	f->p99_9_ns = hist_percentile(h, 99.9);
	f->max_ns = h->total ? h->max : 0;
	f->completed = p->completed;
	f->errors = phase_stats_errors(p);
	f->failed_responses = phase_stats_failed_responses(p);
	f->transport_errors = phase_stats_request_errors(p);
	f->error_pct = phase_stats_error_pct(p);
	f->warmup_completed = f->warmup_errors = 0;
	for (int k = 0; k < RESULT_MAX_OUTCOMES; k++)
		f->outcome_pct[k] = p->completed ? 100.0 * (double)p->outcome[k] / (double)p->completed
						 : 0;
	f->target_known = f->target_rss_known = false;
	f->target_cpu_ms_per_req = f->target_rss_peak_mib = 0;
}

void target_usage_pool(struct target_usage *into, const struct target_usage *add,
		       double total_s)
{
	if (!add->known)
		return;
	if (!into->known) {
		*into = *add;
		return;
	}
	into->cpu_user_s += add->cpu_user_s;
	into->cpu_sys_s += add->cpu_sys_s;
	into->cpu_s += add->cpu_s;
	into->cores_busy = total_s > 0 ? into->cpu_s / total_s : 0;
	/* a wait is known for the pool only when every part measured it */
	into->cpu_wait_known = into->cpu_wait_known && add->cpu_wait_known;
	into->cpu_wait_s += add->cpu_wait_s;
	into->cpu_pressure_known = into->cpu_pressure_known && add->cpu_pressure_known;
	into->cpu_pressure_some_s += add->cpu_pressure_some_s;
	if (add->rss_known) {
		if (!into->rss_known)
			into->rss_start_bytes = add->rss_start_bytes;
		if (add->rss_peak_bytes > into->rss_peak_bytes)
			into->rss_peak_bytes = add->rss_peak_bytes;
		into->rss_end_bytes = add->rss_end_bytes;
		into->rss_known = true;
	}
	for (size_t i = 0; i < add->n_notes && into->n_notes < TARGET_NOTE_CAP; i++) {
		bool dup = false;
		for (size_t k = 0; k < into->n_notes && !dup; k++)
			dup = !strcmp(into->notes[k], add->notes[i]);
		if (!dup)
			memcpy(into->notes[into->n_notes++], add->notes[i], TARGET_NOTE_LEN);
	}
}

double target_usage_cpu_wait_pct(const struct target_usage *t)
{
	if (!t->known || !t->cpu_wait_known)
		return NAN;
	double all = t->cpu_wait_s + t->cpu_s;
	return all > 0 ? 100.0 * t->cpu_wait_s / all : 0;
}

double target_usage_pressure_pct(const struct target_usage *t, double phase_s)
{
	if (!t->known || !t->cpu_pressure_known || !(phase_s > 0))
		return NAN;
	return 100.0 * t->cpu_pressure_some_s / phase_s;
}

bool target_cpu_wait_material(double wait_pct, double wait_s, double phase_s)
{
	return isfinite(wait_pct) && isfinite(wait_s) && isfinite(phase_s) && phase_s > 0 &&
	       wait_pct >= TARGET_CPU_WAIT_MATERIAL_PCT &&
	       100.0 * wait_s / phase_s >= TARGET_CPU_WAIT_MIN_PHASE_PCT;
}

bool target_cpu_pressure_material(double pressure_pct)
{
	return isfinite(pressure_pct) && pressure_pct >= TARGET_CPU_PRESSURE_MATERIAL_PCT;
}

int run_result_pool(struct run_result *into, const struct run_result *add)
{
	/* counters add up over repetitions; a snapshot at a phase's start does
	 * not: the first repetition's is kept */
	uint64_t warm_open = into->warmup.conns_open_at_start;
	uint64_t meas_open = into->measure.conns_open_at_start;
	uint64_t warm_cing = into->warmup.conns_connecting_at_start;
	uint64_t meas_cing = into->measure.conns_connecting_at_start;
	int rc = phase_stats_merge(&into->warmup, &add->warmup);
	if (!rc)
		rc = phase_stats_merge(&into->measure, &add->measure);
	into->warmup.conns_open_at_start = warm_open;
	into->measure.conns_open_at_start = meas_open;
	into->warmup.conns_connecting_at_start = warm_cing;
	into->measure.conns_connecting_at_start = meas_cing;
	into->warmup_ns += add->warmup_ns;
	into->measure_ns += add->measure_ns;
	into->window_ns += add->window_ns;
	into->gen_cpu_ns += add->gen_cpu_ns;
	into->gen_spin_ns += add->gen_spin_ns;
	if (add->n_pace_windows) {
		uint64_t *pw = realloc(into->pace_windows_ns,
				       (into->n_pace_windows + add->n_pace_windows) * sizeof *pw);
		if (!pw)
			return -ENOMEM;
		memcpy(pw + into->n_pace_windows, add->pace_windows_ns,
		       add->n_pace_windows * sizeof *pw);
		into->pace_windows_ns = pw;
		into->n_pace_windows += add->n_pace_windows;
	}
	into->gen_cpu_wait_known = into->gen_cpu_wait_known && add->gen_cpu_wait_known;
	into->gen_cpu_wait_ns += add->gen_cpu_wait_ns;
	into->gen_steal_known = into->gen_steal_known && add->gen_steal_known;
	into->gen_steal.gen_ns += add->gen_steal.gen_ns;
	into->gen_steal.gen_span_ns += add->gen_steal.gen_span_ns;
	into->gen_steal.all_ns += add->gen_steal.all_ns;
	into->gen_steal.all_span_ns += add->gen_steal.all_span_ns;
	into->gen_steal.gen_err_ns += add->gen_steal.gen_err_ns;
	into->gen_steal.all_err_ns += add->gen_steal.all_err_ns;
	if (add->gen_busiest_thread_pct > into->gen_busiest_thread_pct)
		into->gen_busiest_thread_pct = add->gen_busiest_thread_pct;
	if (into->gen_thread_cpu_ns && add->gen_thread_cpu_ns && into->threads == add->threads)
		for (uint32_t i = 0; i < into->threads; i++)
			into->gen_thread_cpu_ns[i] += add->gen_thread_cpu_ns[i];
	into->interrupted = into->interrupted || add->interrupted;
	target_usage_pool(&into->target, &add->target, (double)into->measure_ns / 1e9);
	return rc;
}

void run_result_free(struct run_result *r)
{
	free(r->gen_thread_cpu_ns);
	free(r->pace_windows_ns);
	r->gen_thread_cpu_ns = NULL;
	free(r->reps);
	r->reps = NULL;
	r->n_reps = 0;
	phase_stats_free(&r->warmup);
	phase_stats_free(&r->measure);
	for (size_t i = 0; r->series && i < r->series_len; i++)
		free(r->series[i].pairs);
	free(r->series);
	r->series = NULL;
	r->series_len = 0;
}

double run_result_steal_pct(const struct run_result *r, bool machine)
{
	uint64_t ns = machine ? r->gen_steal.all_ns : r->gen_steal.gen_ns;
	uint64_t span = machine ? r->gen_steal.all_span_ns : r->gen_steal.gen_span_ns;
	if (!r->gen_steal_known || !span)
		return NAN;
	return 100.0 * (double)ns / (double)span;
}

bool run_result_steal_material(const struct run_result *r)
{
	const struct steal_span *s = &r->gen_steal;
	if (!r->gen_steal_known || !s->gen_span_ns)
		return false;
	/* rounded as the result writes it, and by the counters' resolution */
	double pct = round(run_result_steal_pct(r, false) * 100) / 100;
	uint64_t low = s->gen_ns > s->gen_err_ns ? s->gen_ns - s->gen_err_ns : 0;
	double low_pct = round(100.0 * (double)low / (double)s->gen_span_ns * 100) / 100;
	return pct >= RESULT_STEAL_WARN_PCT && low_pct >= RESULT_STEAL_WARN_PCT;
}
