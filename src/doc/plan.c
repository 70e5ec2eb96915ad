/* pacer — the parts of a JSON result that say what was run and where
 * (json_parts.h): the clock, the plan's fields, the head, the environment,
 * the target and the generator. Shared by every kind of result; the phases,
 * series and repetitions are run.c. */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "doc/json_parts.h"
#include "doc/keys.h"
#include "doc/names.h"
#include "doc/doc.h"
#include "doc/rules.h"
#include "doc/usage.h"
#include "doc/workload.h"
#include "http/redact.h"
#include "result/verdict.h"
#include "util/time_units.h"
#include "util/jsonw.h"
#include "stats/summary.h"
#include "table/table.h"
#include "util/err.h"
#include "util/units.h"

static void iso8601(char *out, size_t cap, uint64_t wall_ns)
{
	time_t s = (time_t)(wall_ns / NS_PER_S);
	struct tm tm;
	gmtime_r(&s, &tm);
	char buf[32];
	strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(out, cap, "%s.%03uZ", buf, (unsigned)((wall_ns % NS_PER_S) / NS_PER_MS));
}

void rj_clock(struct jsonw *j, const struct run_plan *p, const struct run_result *r)
{
	if (p->segments < 2 && !p->start_at_wall_ns)
		return;
	/* CLOCK_MONOTONIC ns to CLOCK_REALTIME ns by the plan's mapping */
	int64_t to_wall = (int64_t)p->map_realtime_ns - (int64_t)p->map_monotonic_ns;
	uint64_t meas = r && r->measure_start_ns ? (uint64_t)((int64_t)r->measure_start_ns + to_wall) : 0;
	uint64_t load = meas ? meas - r->warmup_ns : 0;
	jw_key(j, KEY_CLOCK);
	jw_obj(j);
	jw_key(j, "start_at");
	if (p->start_at_wall_ns) {
		char t[40];
		iso8601(t, sizeof t, p->start_at_wall_ns);
		jw_str(j, t);
	} else {
		jw_null(j);
	}
	jw_key(j, "realtime_ns");
	jw_u64(j, p->map_realtime_ns);
	jw_key(j, "monotonic_ns");
	jw_u64(j, p->map_monotonic_ns);
	jw_key(j, "load_start_realtime_ns");
	jw_u64(j, load);
	jw_key(j, KEY_MEASURE_START_REALTIME_NS);
	jw_u64(j, meas);
	jw_key(j, KEY_LATE_MS);
	if (p->start_at_wall_ns && load)
		jw_dbl(j, ((double)load - (double)p->start_at_wall_ns) / 1e6, 3);
	else
		jw_null(j);
	jw_obj_end(j);
}

void rj_table(struct jsonw *j, const struct run_plan *p)
{
	jw_key(j, KEY_TABLE);
	if (p->table_sha256) {
		jw_obj(j);
		jw_key(j, KEY_SOURCE);
		jw_str(j, p->table_source);
		jw_key(j, KEY_FORMAT);
		jw_str(j, p->table_format);
		jw_key(j, KEY_REQUESTS);
		jw_u64(j, p->table_requests);
		jw_key(j, KEY_SHA256);
		jw_str(j, p->table_sha256);
		jw_key(j, "lazy");
		jw_bool(j, p->table_lazy);
		jw_key(j, KEY_ORDER);
		jw_str(j, p->order_random ? "random" : "sequential");
		jw_key(j, KEY_SEED);
		jw_u64(j, p->seed);
		jw_key(j, KEY_HOSTS);
		jw_arr(j);
		for (size_t i = 0; i < p->table_n_hosts; i++) {
			const struct table_host *h = &p->table_hosts[i];
			jw_obj(j);
			jw_key(j, KEY_HOST);
			jw_str(j, h->name);
			jw_key(j, KEY_PORT);
			jw_u64(j, h->port);
			jw_key(j, KEY_TLS);
			jw_bool(j, h->tls);
			if (h->unix_path) { /* not in the wire bytes: part of the table's identity here */
				jw_key(j, KEY_UNIX_SOCKET);
				jw_str(j, h->unix_path);
			}
			jw_key(j, KEY_REQUESTS);
			jw_u64(j, h->n_reqs);
			jw_obj_end(j);
		}
		jw_arr_end(j);
		jw_obj_end(j);
	} else {
		jw_null(j);
	}
}

void rj_script(struct jsonw *j, const struct run_plan *p)
{
	const struct plan_script *s = p->script;
	jw_key(j, KEY_SCRIPT);
	if (!s) {
		jw_null(j);
		return;
	}
	jw_obj(j);
	jw_key(j, "path");
	jw_str(j, s->path);
	jw_key(j, KEY_SHA256);
	jw_str(j, s->sha256);
	jw_key(j, KEY_MODE);
	jw_str(j, s->mode);
	jw_key(j, "hooks");
	jw_arr(j);
	for (size_t i = 0; i < s->n_hooks; i++)
		jw_str(j, s->hooks[i]);
	jw_arr_end(j);
	jw_key(j, "args"); /* init's: redacted (they may be credentials) */
	jw_arr(j);
	char shown[REDACT_SHOWN_MAX];
	for (size_t i = 0; i < s->n_args; i++)
		jw_str(j, redact_value(&p->redact, s->args[i], shown, sizeof shown));
	jw_arr_end(j);
	jw_key(j, "memory_mib");
	jw_dbl(j, (double)s->memory_bytes / (1024.0 * 1024.0), 3);
	jw_key(j, "call_limit_ms");
	jw_dbl(j, (double)s->call_limit_ns / 1e6, 3);
	jw_key(j, "response_headers");
	jw_bool(j, s->response_headers);
	jw_key(j, "response_body");
	jw_bool(j, s->response_body);
	jw_key(j, KEY_BODY_CAP_BYTES);
	jw_u64(j, s->body_cap);
	jw_key(j, "delay_ignored");
	jw_bool(j, s->delay_ignored);
	jw_obj_end(j);
}

void rj_plan_fields(struct jsonw *j, const struct run_plan *p)
{
	jw_key(j, KEY_URL);
	jw_str(j, p->url_str);
	jw_key(j, KEY_METHOD); /* what was sent: null when the requests use several */
	jw_str(j, p->workload ? plan_workload_method(p->workload) : plan_method(p));
	jw_key(j, KEY_LOOP);
	jw_str(j, p->open_loop ? "open" : "closed");
	jw_key(j, KEY_RATE_PER_S);
	if (p->open_loop)
		jw_dbl(j, p->rate_per_s, 3);
	else
		jw_null(j);
	jw_key(j, KEY_ARRIVAL);
	jw_str(j, sched_arrival_name(p->arrival));
	jw_key(j, KEY_BURST_SIZE);
	jw_u64(j, p->burst_size);
	jw_key(j, KEY_SEED);
	jw_u64(j, p->seed);
	jw_key(j, KEY_DURATION_S);
	if (!p->open_loop && p->requests && !p->duration_given)
		jw_null(j);
	else
		jw_dbl(j, (double)p->duration_ns / 1e9, 6);
	jw_key(j, KEY_WARMUP_S);
	jw_dbl(j, (double)p->warmup_ns / 1e9, 6);
	jw_key(j, KEY_CONNECTIONS);
	jw_u64(j, p->connections);
	jw_key(j, KEY_CONCURRENCY);
	jw_u64(j, p->concurrency);
	jw_key(j, KEY_REQUESTS);
	if (p->requests)
		jw_u64(j, p->requests);
	else
		jw_null(j);
	jw_key(j, KEY_THREADS);
	jw_u64(j, p->threads);
	jw_key(j, KEY_TIMEOUT_MS);
	jw_dbl(j, (double)p->timeout_ns / 1e6, 3);
	jw_key(j, KEY_DRAIN_MS);
	jw_dbl(j, (double)p->drain_ns / 1e6, 3);
	jw_key(j, "spin_us");
	jw_dbl(j, (double)p->spin_ns / 1e3, 3);
	jw_key(j, KEY_REALTIME);
	jw_bool(j, p->realtime);
	jw_key(j, "calibrate_s");
	jw_dbl(j, (double)p->calibrate_ns / 1e9, 3);
	if (p->scenario) {
		jw_key(j, KEY_SCENARIO);
		jw_str(j, p->scenario);
	}
	const char *why, *pacing = plan_pacing(p, &why);
	jw_key(j, KEY_PACING);
	if (pacing) {
		jw_obj(j);
		jw_key(j, KEY_MODE);
		jw_str(j, pacing);
		jw_key(j, KEY_SEND_WINDOW_US); /* --precision-budget: the first second's */
		if (strcmp(pacing, "batched") == 0)
			jw_dbl(j, (double)p->send_window_ns / 1e3, 3);
		else
			jw_null(j);
		jw_key(j, KEY_PRECISION_BUDGET_PCT);
		if (p->precision > 0)
			jw_dbl(j, p->precision * 100, 3);
		else
			jw_null(j);
		jw_key(j, "why_precise");
		if (why)
			jw_str(j, why);
		else
			jw_null(j);
		jw_obj_end(j);
	} else {
		jw_null(j);
	}
	jw_key(j, KEY_KEEPALIVE);
	jw_bool(j, !p->no_keepalive);
	jw_key(j, KEY_REPEAT);
	jw_u64(j, p->repeat);
	jw_key(j, KEY_SEGMENT); /* --segment K/N (docs/distributed.md) */
	if (p->segments > 1) {
		jw_obj(j);
		jw_key(j, KEY_INDEX);
		jw_u64(j, p->segment);
		jw_key(j, KEY_COUNT);
		jw_u64(j, p->segments);
		jw_obj_end(j);
	} else {
		jw_null(j);
	}
	rj_table(j, p);
	rj_script(j, p);
	jw_key(j, KEY_UNIX_SOCKET);
	jw_str(j, p->unix_socket);
	jw_key(j, KEY_CONNECT_TO);
	jw_str(j, p->connect_to);
	jw_key(j, KEY_HTTP);
	jw_str(j, plan_http3(p)	    ? "h3"
		  : p->http.h2c	    ? "h2c"
		  : !p->http.http2   ? "1.1"
		  : *p->http.http2   ? "h2-prefer"
				     : "h2");
	jw_key(j, KEY_MAX_STREAMS);
	if (p->http.h2c || p->http.http2 || plan_http3(p))
		jw_u64(j, p->http.max_streams ? p->http.max_streams : PLAN_DEFAULT_STREAMS);
	else
		jw_null(j);
	jw_key(j, KEY_TLS);
	if (p->url.tls) {
		jw_obj(j);
		jw_key(j, KEY_VERIFY);
		jw_bool(j, !p->tls.insecure);
		jw_key(j, KEY_TRUST);
		jw_str(j, p->tls.insecure ? "none" : p->tls.self_signed ? "generated certificate"
				       : p->tls.cacert ? "cacert" : "system store");
		jw_key(j, "cacert");
		jw_str(j, p->tls.cacert);
		jw_key(j, "client_cert");
		jw_str(j, p->tls.cert);
		jw_key(j, KEY_RESUME);
		jw_bool(j, plan_tls_resume(p) && !plan_http3(p)); /* QUIC: full handshakes */
		jw_key(j, "self_signed_target");
		jw_bool(j, p->tls.self_signed);
		jw_obj_end(j);
	} else {
		jw_null(j);
	}
	jw_key(j, KEY_QUIC); /* HTTP/3's transport: QUIC v1, full 1-RTT handshakes, no 0-RTT */
	if (plan_http3(p)) {
		jw_obj(j);
		jw_key(j, KEY_VERSION);
		jw_str(j, "1");
		jw_key(j, "zero_rtt");
		jw_bool(j, false);
		jw_key(j, "congestion_control");
		jw_str(j, "cubic");
		jw_obj_end(j);
	} else {
		jw_null(j);
	}
	/* a secret header's value as its fingerprint (http/redact.h) */
	char shown[1024];
	jw_key(j, KEY_HEADERS);
	jw_arr(j);
	for (size_t i = 0; i < p->n_headers; i++)
		jw_str(j, redact_header_line(&p->redact, p->headers[i], shown, sizeof shown));
	jw_arr_end(j);
	jw_key(j, KEY_BODY_BYTES); /* each request's, as sent; null when they differ */
	uint64_t body = p->body_len;
	if (p->workload && !plan_workload_body_bytes(p->workload, &body))
		jw_null(j);
	else
		jw_u64(j, body);
	rj_workload(j, p->workload, p->order_random);
	rj_plan_rules(j, p->inspect);
	jw_key(j, KEY_ARGV);
	jw_arr(j);
	bool script_args = false; /* after "--": a script's init(args), secrets or not */
	for (int i = 0; i < p->argc; i++) {
		if (script_args)
			jw_str(j, redact_value(&p->redact, p->argv[i], shown, sizeof shown));
		else
			jw_str(j, redact_arg(&p->redact, p->argv[i], shown, sizeof shown));
		script_args = script_args || (p->script && !strcmp(p->argv[i], "--"));
	}
	jw_arr_end(j);
}

void rj_head(struct jsonw *j, const struct report_ctx *c, const char *kind,
	     uint64_t started_wall_ns, bool interrupted)
{
	jw_obj(j);
	jw_key(j, KEY_SCHEMA_VERSION);
	jw_str(j, REPORT_SCHEMA_VERSION);
	jw_key(j, KEY_KIND);
	jw_str(j, kind);
	jw_key(j, "pacer");
	jw_obj(j);
	jw_key(j, KEY_VERSION);
	jw_str(j, c->version);
	jw_key(j, "commit");
	jw_str(j, c->commit);
	jw_obj_end(j);
	jw_key(j, KEY_MODE);
	jw_str(j, c->mode);
	char ts[48];
	iso8601(ts, sizeof ts, started_wall_ns);
	jw_key(j, KEY_STARTED_AT);
	jw_str(j, ts);
	jw_key(j, KEY_INTERRUPTED);
	jw_bool(j, interrupted);
}

void rj_env(struct jsonw *j, const struct sysinfo_facts *env)
{
	jw_key(j, KEY_ENVIRONMENT);
	jw_obj(j);
	jw_key(j, KEY_HOSTNAME);
	jw_str(j, env->hostname);
	jw_key(j, KEY_OS);
	jw_str(j, env->os);
	jw_key(j, KEY_KERNEL);
	jw_str(j, env->kernel);
	jw_key(j, KEY_ARCH);
	jw_str(j, env->arch);
	jw_key(j, KEY_CPU_MODEL);
	jw_str(j, env->cpu_model);
	jw_key(j, KEY_CORES);
	jw_u64(j, (uint64_t)env->cores);
	jw_obj_end(j);
}

void rj_connected(struct jsonw *j, const struct report_conn *conns, size_t n)
{
	if (!n)
		return;
	jw_key(j, KEY_CONNECTED);
	jw_arr(j);
	for (size_t i = 0; i < n; i++) {
		int saved = j->indent;
		jw_obj(j);
		j->indent = 0;
		jw_key(j, KEY_HOST);
		jw_str(j, conns[i].host);
		jw_key(j, KEY_PORT);
		jw_u64(j, conns[i].port);
		jw_key(j, KEY_ADDRESS);
		jw_str(j, conns[i].address);
		jw_key(j, KEY_LOOPBACK);
		jw_bool(j, conns[i].loopback);
		jw_obj_end(j);
		j->indent = saved;
	}
	jw_arr_end(j);
}

void rj_target(struct jsonw *j, const struct report_target *t, uint64_t served)
{
	jw_key(j, KEY_TARGET);
	jw_obj(j);
	jw_key(j, KEY_PLAN);
	jw_str(j, t->plan_name);
	jw_key(j, KEY_THREADS);
	jw_u64(j, t->threads);
	jw_key(j, KEY_CPU_S);
	jw_dbl(j, (double)t->cpu_ns / 1e9, 6);
	jw_key(j, KEY_CPU_MS_PER_REQUEST);
	jw_dbl(j, served ? (double)t->cpu_ns / 1e6 / (double)served : 0, 6);
	jw_key(j, KEY_SHARES_PROCESS_WITH_DRIVER);
	jw_bool(j, true);
	jw_obj_end(j);
}

void rj_gen_session(struct jsonw *j, const struct report_ctx *c)
{
	jw_key(j, KEY_REALTIME);
	jw_obj(j);
	int saved = j->indent;
	j->indent = 0;
	jw_key(j, KEY_REQUESTED);
	jw_bool(j, c->realtime != 1);
	jw_key(j, KEY_GRANTED);
	jw_bool(j, c->realtime == 0);
	jw_key(j, KEY_REFUSED);
	jw_str(j, c->realtime < 0 ? err_name(c->realtime) : NULL);
	jw_obj_end(j);
	j->indent = saved;
	jw_key(j, KEY_FLOOR);
	const struct gen_floor *f = c->floor;
	if (!f || !f->known) {
		jw_null(j);
		return;
	}
	jw_obj(j);
	jw_key(j, KEY_METHOD);
	jw_str(j, f->method);
	jw_key(j, KEY_TIMER_SLACK_NS);
	jw_u64(j, f->slack_ns);
	jw_key(j, KEY_REALTIME);
	jw_bool(j, f->realtime);
	jw_key(j, KEY_DURATION_S);
	jw_dbl(j, (double)f->duration_ns / 1e9, 3);
	jw_key(j, KEY_SAMPLES);
	jw_u64(j, f->samples);
	jw_key(j, KEY_WAKE_P50_US);
	jw_dbl(j, (double)f->wake_p50_ns / 1e3, 3);
	jw_key(j, KEY_WAKE_P99_US);
	jw_dbl(j, (double)f->wake_p99_ns / 1e3, 3);
	jw_key(j, KEY_WAKE_MAX_US);
	jw_dbl(j, (double)f->wake_max_ns / 1e3, 3);
	jw_key(j, KEY_LOOPBACK_RTT);
	if (f->rtt_known) {
		jw_obj(j);
		saved = j->indent;
		j->indent = 0;
		jw_key(j, KEY_SAMPLES);
		jw_u64(j, f->rtt_samples);
		jw_key(j, KEY_P50_US);
		jw_dbl(j, (double)f->rtt_p50_ns / 1e3, 3);
		jw_key(j, KEY_P99_US);
		jw_dbl(j, (double)f->rtt_p99_ns / 1e3, 3);
		jw_key(j, KEY_CPU_US);
		jw_dbl(j, f->rtt_cpu_ns / 1e3, 3);
		jw_obj_end(j);
		j->indent = saved;
	} else {
		jw_null(j);
	}
	jw_obj_end(j);
}

void rj_verdict_fields(struct jsonw *j, const struct slo_verdict *v, const struct slo *s)
{
	jw_key(j, KEY_PASS);
	jw_bool(j, v->pass);
	jw_key(j, KEY_INCONCLUSIVE);
	jw_bool(j, v->inconclusive);
	jw_key(j, KEY_REASON);
	jw_str(j, v->reason);
	jw_key(j, KEY_WHY);
	jw_str(j, v->inconclusive ? v->why : NULL);
	jw_key(j, "material");
	int saved = j->indent;
	jw_arr(j);
	j->indent = 0;
	for (size_t i = 0; s && i < s->n && i < 32; i++)
		if (v->material & (1u << i))
			jw_str(j, s->c[i].text);
	jw_arr_end(j);
	j->indent = saved;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* What the open loop's pacing cost and bought: the send windows used
 * (batched: min, median and max over every worker's measured seconds),
 * the time spent spinning (precise), and the send lag's p99 as a share
 * of the latency's p50 (the arrival precision achieved). */
static void rj_gen_pacing(struct jsonw *j, const struct run_result *r)
{
	jw_key(j, KEY_PACING);
	if (!r->open_loop) {
		jw_null(j);
		return;
	}
	jw_obj(j);
	jw_key(j, KEY_SEND_WINDOW_US);
	uint64_t *w = r->n_pace_windows ? malloc(r->n_pace_windows * sizeof *w) : NULL;
	if (w) {
		memcpy(w, r->pace_windows_ns, r->n_pace_windows * sizeof *w);
		qsort(w, r->n_pace_windows, sizeof *w, cmp_u64);
		size_t n = r->n_pace_windows;
		double med = n % 2 ? (double)w[n / 2]
				   : ((double)w[n / 2 - 1] + (double)w[n / 2]) / 2;
		jw_obj(j);
		jw_key(j, KEY_MIN);
		jw_dbl(j, (double)w[0] / 1e3, 3);
		jw_key(j, KEY_MEDIAN);
		jw_dbl(j, med / 1e3, 3);
		jw_key(j, KEY_MAX);
		jw_dbl(j, (double)w[n - 1] / 1e3, 3);
		jw_obj_end(j);
		free(w);
	} else {
		jw_null(j);
	}
	jw_key(j, KEY_SPIN_S);
	if (r->pace_batched)
		jw_null(j);
	else
		jw_dbl(j, (double)r->gen_spin_ns / 1e9, 6);
	jw_key(j, KEY_SPIN_PCT_OF_CPU);
	if (r->pace_batched || !r->gen_cpu_ns)
		jw_null(j);
	else
		jw_dbl(j, 100.0 * (double)r->gen_spin_ns / (double)r->gen_cpu_ns, 2);
	const struct hist *lag = &r->measure.timing[TIM_SEND_LAG];
	const struct hist *lat = &r->measure.timing[TIM_LATENCY];
	uint64_t lag99 = lag->total ? hist_percentile(lag, 99.0) : 0;
	uint64_t p50 = lat->total ? hist_percentile(lat, 50.0) : 0;
	jw_key(j, KEY_SEND_LAG_P99_MS);
	if (lag->total)
		jw_dbl(j, (double)lag99 / 1e6, 4);
	else
		jw_null(j);
	jw_key(j, KEY_LATENCY_P50_MS);
	if (lat->total)
		jw_dbl(j, (double)p50 / 1e6, 4);
	else
		jw_null(j);
	jw_key(j, KEY_SEND_LAG_P99_PCT_OF_P50);
	if (lag->total && p50)
		jw_dbl(j, 100.0 * (double)lag99 / (double)p50, 2);
	else
		jw_null(j);
	jw_obj_end(j);
}

void rj_generator(struct jsonw *j, const struct run_result *r, uint64_t responses,
		  const struct report_ctx *c)
{
	jw_key(j, KEY_GENERATOR);
	jw_obj(j);
	jw_key(j, KEY_THREADS);
	jw_u64(j, r->threads);
	jw_key(j, KEY_CPU_S);
	jw_dbl(j, (double)r->gen_cpu_ns / 1e9, 6);
	jw_key(j, KEY_CPU_US_PER_RESPONSE);
	jw_dbl(j, responses ? (double)r->gen_cpu_ns / 1e3 / (double)responses : 0, 3);
	jw_key(j, KEY_BUSIEST_THREAD_CPU_PCT);
	jw_dbl(j, r->gen_busiest_thread_pct, 2);
	jw_key(j, KEY_THREAD_CPU_S);
	jw_arr(j);
	for (uint32_t i = 0; r->gen_thread_cpu_ns && i < r->threads; i++)
		jw_dbl(j, (double)r->gen_thread_cpu_ns[i] / 1e9, 6);
	jw_arr_end(j);
	const char *keys[2] = {KEY_STEAL_PCT, KEY_MACHINE_STEAL_PCT};
	for (int k = 0; k < 2; k++) {
		jw_key(j, keys[k]);
		jw_dbl(j, run_result_steal_pct(r, k == 1), 2); /* NAN, not known: null */
	}
	rj_gen_session(j, c);
	rj_gen_pacing(j, r);
	jw_obj_end(j);
}
