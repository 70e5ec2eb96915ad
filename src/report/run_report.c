/* pacer — the JSON result and the terminal summary of `pacer run`. */
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

double report_achieved_rate(const struct run_result *r)
{
	if (r->measure_ns == 0)
		return 0;
	return (double)r->measure.completed * 1e9 / (double)r->measure_ns;
}

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
		if (!gv.c[0].fired && lag > REPORT_SEND_LAG_WARN_NS)
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
	if (m->completed == 0)
		warn(w, "no response was completed in the measured phase");
}

/* ---- JSON ---------------------------------------------------------------- */

void rj_hist(struct jsonw *j, const struct hist *h)
{
	jw_obj(j);
	jw_key(j, "count");
	jw_u64(j, h->total);
	static const struct {
		const char *key;
		double p;
	} pcts[] = {{"p50_us", 50},  {"p90_us", 90},      {"p99_us", 99},
		    {"p99_9_us", 99.9}, {"p99_99_us", 99.99}};
	jw_key(j, "min_us");
	jw_dbl(j, h->total ? (double)h->min / 1e3 : 0, 3);
	jw_key(j, "mean_us");
	jw_dbl(j, hist_mean(h) / 1e3, 3);
	jw_key(j, "stddev_us");
	jw_dbl(j, hist_stddev(h) / 1e3, 3);
	for (size_t i = 0; i < sizeof pcts / sizeof pcts[0]; i++) {
		jw_key(j, pcts[i].key);
		jw_dbl(j, (double)hist_percentile(h, pcts[i].p) / 1e3, 3);
	}
	jw_key(j, "max_us");
	jw_dbl(j, (double)h->max / 1e3, 3);
	jw_key(j, "hist");
	jw_obj(j);
	jw_key(j, "unit");
	jw_str(j, "ns");
	jw_key(j, "sub_bits");
	jw_u64(j, h->sub_bits);
	jw_key(j, "max_value");
	jw_u64(j, h->max_value);
	jw_key(j, "counts");
	int saved = j->indent;
	jw_arr(j);
	j->indent = 0; /* pairs on one line: keeps files readable */
	size_t cur = 0;
	uint64_t v, n;
	while (hist_next_nonzero(h, &cur, &v, &n)) {
		jw_arr(j);
		jw_u64(j, v);
		jw_u64(j, n);
		jw_arr_end(j);
	}
	j->indent = saved;
	jw_arr_end(j);
	jw_obj_end(j);
	jw_obj_end(j);
}

void rj_phase(struct jsonw *j, const struct phase_stats *p, double duration_ns,
		       double offered, bool open_loop, double achieved, const struct inspect *in,
		       const struct req_names *names)
{
	rj_phase_hosts(j, p, duration_ns, offered, open_loop, achieved, in, NULL, 0, names);
}

void rj_phase_hosts(struct jsonw *j, const struct phase_stats *p, double duration_ns,
		    double offered, bool open_loop, double achieved, const struct inspect *in,
		    const struct table_host *hosts, size_t n_hosts, const struct req_names *names)
{
	jw_obj(j);
	jw_key(j, "duration_s");
	jw_dbl(j, duration_ns / 1e9, 6);
	jw_key(j, "requests");
	jw_obj(j);
	jw_key(j, "scheduled");
	jw_u64(j, p->scheduled);
	jw_key(j, "sent");
	jw_u64(j, p->sent);
	jw_key(j, "completed");
	jw_u64(j, p->completed);
	jw_key(j, "queued_at_end");
	jw_u64(j, p->queued_at_end);
	jw_key(j, "in_flight_at_end");
	jw_u64(j, p->in_flight_at_end);
	jw_key(j, "dropped");
	jw_u64(j, p->dropped);
	jw_key(j, "late");
	jw_u64(j, p->late);
	jw_obj_end(j);

	jw_key(j, "responses");
	jw_obj(j);
	jw_key(j, "by_class");
	jw_obj(j);
	for (int cls = 1; cls <= 5; cls++) {
		char k[16];
		snprintf(k, sizeof k, "%dxx", cls);
		jw_key(j, k);
		jw_u64(j, phase_stats_class(p, cls));
	}
	jw_obj_end(j);
	jw_key(j, "by_status");
	jw_obj(j);
	for (int s = STATUS_MIN; s <= STATUS_MAX; s++) {
		if (!p->status[s])
			continue;
		char k[16];
		snprintf(k, sizeof k, "%d", s);
		jw_key(j, k);
		jw_u64(j, p->status[s]);
	}
	jw_obj_end(j);
	jw_obj_end(j);

	/* errors: requests sent that did not succeed (one definition);
	 * transport_errors: failures of connections and requests by kind. */
	jw_key(j, "errors");
	jw_obj(j);
	jw_key(j, "total");
	jw_u64(j, phase_stats_errors(p));
	jw_key(j, "pct");
	jw_dbl(j, phase_stats_error_pct(p), 4);
	jw_key(j, "failed_responses");
	jw_u64(j, phase_stats_failed_responses(p));
	jw_key(j, "transport");
	jw_u64(j, phase_stats_request_errors(p));
	jw_key(j, "by_status");
	jw_obj(j);
	for (int s = STATUS_MIN; s <= STATUS_MAX; s++) {
		if (!p->status_failed[s])
			continue;
		char k[16];
		snprintf(k, sizeof k, "%d", s);
		jw_key(j, k);
		jw_u64(j, p->status_failed[s]);
	}
	jw_obj_end(j);
	jw_obj_end(j);
	jw_key(j, "error_pct");
	jw_dbl(j, phase_stats_error_pct(p), 4);

	jw_key(j, "transport_errors");
	jw_obj(j);
	for (int k = 0; k < ERRK_COUNT; k++) {
		jw_key(j, err_kind_name((enum err_kind)k));
		jw_u64(j, p->errors[k]);
	}
	jw_key(j, "total");
	jw_u64(j, phase_stats_transport_errors(p));
	jw_key(j, "requests");
	jw_u64(j, phase_stats_request_errors(p));
	jw_obj_end(j);

	jw_key(j, "connections");
	jw_obj(j);
	jw_key(j, "opened");
	jw_u64(j, p->conns_opened);
	jw_key(j, "open_at_start");
	jw_u64(j, p->conns_open_at_start);
	jw_key(j, "closed_by_server");
	jw_u64(j, p->closed_by_server);
	jw_obj_end(j);

	jw_key(j, "tls");
	jw_obj(j);
	jw_key(j, "handshakes");
	jw_u64(j, p->tls_handshakes);
	jw_key(j, "resumed");
	jw_u64(j, p->tls_resumed);
	jw_key(j, "failed");
	jw_u64(j, p->errors[ERRK_TLS]);
	jw_key(j, "version");
	jw_str(j, p->tls_version[0] ? p->tls_version : NULL);
	jw_key(j, "cipher");
	jw_str(j, p->tls_cipher[0] ? p->tls_cipher : NULL);
	jw_key(j, "failure_reasons");
	jw_arr(j);
	for (uint32_t i = 0; i < p->n_tls_reasons; i++)
		jw_str(j, p->tls_reasons[i]);
	jw_arr_end(j);
	jw_obj_end(j);

	jw_key(j, "bytes");
	jw_obj(j);
	jw_key(j, "in");
	jw_u64(j, p->bytes_in);
	jw_key(j, "out");
	jw_u64(j, p->bytes_out);
	jw_obj_end(j);

	jw_key(j, "rate");
	jw_obj(j);
	jw_key(j, "offered_per_s");
	if (open_loop)
		jw_dbl(j, offered, 3);
	else
		jw_null(j);
	jw_key(j, "achieved_per_s");
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
		jw_key(j, "hosts");
		jw_arr(j);
		for (size_t i = 0; i < n_hosts && i < RESULT_MAX_HOSTS; i++) {
			jw_obj(j);
			jw_key(j, "host");
			jw_str(j, hosts[i].name);
			jw_key(j, "port");
			jw_u64(j, hosts[i].port);
			if (hosts[i].unix_path) {
				jw_key(j, "unix_socket");
				jw_str(j, hosts[i].unix_path);
			}
			jw_key(j, "completed");
			jw_u64(j, p->host[i].completed);
			jw_key(j, "errors");
			jw_u64(j, p->host[i].errors);
			jw_key(j, "connection_errors");
			jw_u64(j, p->host[i].conn_errors);
			jw_key(j, "connections_opened");
			jw_u64(j, p->host[i].conns_opened);
			jw_obj_end(j);
		}
		jw_arr_end(j);
	}
	rj_by_name(j, p, names);
	jw_obj_end(j);
}

static void iso8601(char *out, size_t cap, uint64_t wall_ns)
{
	time_t s = (time_t)(wall_ns / NS_PER_S);
	struct tm tm;
	gmtime_r(&s, &tm);
	char buf[32];
	strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(out, cap, "%s.%03uZ", buf, (unsigned)((wall_ns % NS_PER_S) / NS_PER_MS));
}

void rj_plan_fields(struct jsonw *j, const struct run_plan *p)
{
	jw_key(j, "url");
	jw_str(j, p->url_str);
	jw_key(j, "method"); /* what was sent: null when the requests use several */
	jw_str(j, p->workload ? plan_workload_method(p->workload) : plan_method(p));
	jw_key(j, "loop");
	jw_str(j, p->open_loop ? "open" : "closed");
	jw_key(j, "rate_per_s");
	if (p->open_loop)
		jw_dbl(j, p->rate_per_s, 3);
	else
		jw_null(j);
	jw_key(j, "arrival");
	jw_str(j, sched_arrival_name(p->arrival));
	jw_key(j, "seed");
	jw_u64(j, p->seed);
	jw_key(j, "duration_s");
	if (!p->open_loop && p->requests && !p->duration_given)
		jw_null(j);
	else
		jw_dbl(j, (double)p->duration_ns / 1e9, 6);
	jw_key(j, "warmup_s");
	jw_dbl(j, (double)p->warmup_ns / 1e9, 6);
	jw_key(j, "connections");
	jw_u64(j, p->connections);
	jw_key(j, "concurrency");
	jw_u64(j, p->concurrency);
	jw_key(j, "requests");
	if (p->requests)
		jw_u64(j, p->requests);
	else
		jw_null(j);
	jw_key(j, "threads");
	jw_u64(j, p->threads);
	jw_key(j, "timeout_ms");
	jw_dbl(j, (double)p->timeout_ns / 1e6, 3);
	jw_key(j, "drain_ms");
	jw_dbl(j, (double)p->drain_ns / 1e6, 3);
	jw_key(j, "spin_us");
	jw_dbl(j, (double)p->spin_ns / 1e3, 3);
	jw_key(j, "repeat");
	jw_u64(j, p->repeat);
	jw_key(j, "table");
	if (p->table_sha256) {
		jw_obj(j);
		jw_key(j, "source");
		jw_str(j, p->table_source);
		jw_key(j, "format");
		jw_str(j, p->table_format);
		jw_key(j, "requests");
		jw_u64(j, p->table_requests);
		jw_key(j, "sha256");
		jw_str(j, p->table_sha256);
		jw_key(j, "order");
		jw_str(j, p->order_random ? "random" : "sequential");
		jw_key(j, "seed");
		jw_u64(j, p->seed);
		jw_key(j, "hosts");
		jw_arr(j);
		for (size_t i = 0; i < p->table_n_hosts; i++) {
			const struct table_host *h = &p->table_hosts[i];
			jw_obj(j);
			jw_key(j, "host");
			jw_str(j, h->name);
			jw_key(j, "port");
			jw_u64(j, h->port);
			jw_key(j, "tls");
			jw_bool(j, h->tls);
			if (h->unix_path) { /* not in the wire bytes: part of the table's identity here */
				jw_key(j, "unix_socket");
				jw_str(j, h->unix_path);
			}
			jw_key(j, "requests");
			jw_u64(j, h->n_reqs);
			jw_obj_end(j);
		}
		jw_arr_end(j);
		jw_obj_end(j);
	} else {
		jw_null(j);
	}
	jw_key(j, "unix_socket");
	jw_str(j, p->unix_socket);
	jw_key(j, "connect_to");
	jw_str(j, p->connect_to);
	jw_key(j, "tls");
	if (p->url.tls) {
		jw_obj(j);
		jw_key(j, "verify");
		jw_bool(j, !p->tls.insecure);
		jw_key(j, "trust");
		jw_str(j, p->tls.insecure ? "none" : p->tls.self_signed ? "generated certificate"
				       : p->tls.cacert ? "cacert" : "system store");
		jw_key(j, "cacert");
		jw_str(j, p->tls.cacert);
		jw_key(j, "client_cert");
		jw_str(j, p->tls.cert);
		jw_key(j, "resume");
		jw_bool(j, p->tls.resume);
		jw_key(j, "self_signed_target");
		jw_bool(j, p->tls.self_signed);
		jw_obj_end(j);
	} else {
		jw_null(j);
	}
	jw_key(j, "headers");
	jw_arr(j);
	for (size_t i = 0; i < p->n_headers; i++)
		jw_str(j, p->headers[i]);
	jw_arr_end(j);
	jw_key(j, "body_bytes"); /* each request's, as sent; null when they differ */
	uint64_t body = p->body_len;
	if (p->workload && !plan_workload_body_bytes(p->workload, &body))
		jw_null(j);
	else
		jw_u64(j, body);
	rj_workload(j, p->workload, p->order_random);
	rj_plan_rules(j, p->inspect);
	jw_key(j, "argv");
	jw_arr(j);
	for (int i = 0; i < p->argc; i++)
		jw_str(j, p->argv[i]);
	jw_arr_end(j);
}

void rj_head(struct jsonw *j, const struct report_ctx *c, const char *kind,
	     uint64_t started_wall_ns, bool interrupted)
{
	jw_obj(j);
	jw_key(j, "schema_version");
	jw_str(j, REPORT_SCHEMA_VERSION);
	jw_key(j, "kind");
	jw_str(j, kind);
	jw_key(j, "pacer");
	jw_obj(j);
	jw_key(j, "version");
	jw_str(j, c->version);
	jw_key(j, "commit");
	jw_str(j, c->commit);
	jw_obj_end(j);
	jw_key(j, "mode");
	jw_str(j, c->mode);
	char ts[48];
	iso8601(ts, sizeof ts, started_wall_ns);
	jw_key(j, "started_at");
	jw_str(j, ts);
	jw_key(j, "interrupted");
	jw_bool(j, interrupted);
}

void rj_env(struct jsonw *j, const struct sysinfo_facts *env)
{
	jw_key(j, "environment");
	jw_obj(j);
	jw_key(j, "hostname");
	jw_str(j, env->hostname);
	jw_key(j, "os");
	jw_str(j, env->os);
	jw_key(j, "kernel");
	jw_str(j, env->kernel);
	jw_key(j, "arch");
	jw_str(j, env->arch);
	jw_key(j, "cpu_model");
	jw_str(j, env->cpu_model);
	jw_key(j, "cores");
	jw_u64(j, (uint64_t)env->cores);
	jw_obj_end(j);
}

void rj_target(struct jsonw *j, const struct report_target *t, uint64_t served)
{
	jw_key(j, "target");
	jw_obj(j);
	jw_key(j, "plan");
	jw_str(j, t->plan_name);
	jw_key(j, "threads");
	jw_u64(j, t->threads);
	jw_key(j, "cpu_s");
	jw_dbl(j, (double)t->cpu_ns / 1e9, 6);
	jw_key(j, "cpu_ms_per_request");
	jw_dbl(j, served ? (double)t->cpu_ns / 1e6 / (double)served : 0, 6);
	jw_key(j, "shares_process_with_driver");
	jw_bool(j, true);
	jw_obj_end(j);
}

void rj_generator(struct jsonw *j, uint32_t threads, uint64_t cpu_ns, uint64_t responses,
		  double busiest_thread_pct, const uint64_t *thread_cpu_ns)
{
	jw_key(j, "generator");
	jw_obj(j);
	jw_key(j, "threads");
	jw_u64(j, threads);
	jw_key(j, "cpu_s");
	jw_dbl(j, (double)cpu_ns / 1e9, 6);
	jw_key(j, "cpu_us_per_response");
	jw_dbl(j, responses ? (double)cpu_ns / 1e3 / (double)responses : 0, 3);
	jw_key(j, "busiest_thread_cpu_pct");
	jw_dbl(j, busiest_thread_pct, 2);
	jw_key(j, "thread_cpu_s");
	jw_arr(j);
	for (uint32_t i = 0; thread_cpu_ns && i < threads; i++)
		jw_dbl(j, (double)thread_cpu_ns[i] / 1e9, 6);
	jw_arr_end(j);
	jw_obj_end(j);
}

void rj_series(struct jsonw *j, const struct series_point *pts, size_t n)
{
	jw_key(j, "series");
	jw_arr(j);
	for (size_t i = 0; i < n; i++) {
		int saved = j->indent;
		jw_obj(j);
		j->indent = 0;
		jw_key(j, "t_s");
		jw_u64(j, i);
		jw_key(j, "completed");
		jw_u64(j, pts[i].completed);
		jw_key(j, "errors");
		jw_u64(j, pts[i].errors);
		jw_key(j, "p50_us");
		jw_dbl(j, (double)pts[i].p50_ns / 1e3, 3);
		jw_key(j, "p99_us");
		jw_dbl(j, (double)pts[i].p99_ns / 1e3, 3);
		jw_key(j, "hist");
		jw_obj(j);
		jw_key(j, "unit");
		jw_str(j, "ns");
		jw_key(j, "sub_bits");
		jw_u64(j, SERIES_SUB_BITS);
		jw_key(j, "counts");
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

static const char *const rep_keys[] = {"achieved_per_s", "p50_us", "p90_us", "p99_us",
				       "p99_9_us", "max_us", "errors"};
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
	jw_key(j, "repetitions");
	jw_arr(j);
	for (size_t i = 0; i < n; i++) {
		int saved = j->indent;
		jw_obj(j);
		j->indent = 0;
		for (size_t k = 0; k < REP_KEYS; k++) {
			jw_key(j, rep_keys[k]);
			jw_dbl(j, rep_value(&reps[i], (int)k), 3);
		}
		jw_key(j, "completed");
		jw_u64(j, reps[i].completed);
		jw_obj_end(j);
		j->indent = saved;
	}
	jw_arr_end(j);
	jw_key(j, "repeat_summary");
	jw_obj(j);
	for (size_t k = 0; k < REP_KEYS; k++) {
		struct summary s;
		report_rep_summary(reps, n, (int)k, &s);
		jw_key(j, rep_keys[k]);
		int saved = j->indent;
		jw_obj(j);
		j->indent = 0;
		jw_key(j, "median");
		jw_dbl(j, s.median, 3);
		jw_key(j, "min");
		jw_dbl(j, s.min, 3);
		jw_key(j, "max");
		jw_dbl(j, s.max, 3);
		jw_obj_end(j);
		j->indent = saved;
	}
	jw_obj_end(j);
}

void rj_warnings(struct jsonw *j, const struct report_warnings *w)
{
	jw_key(j, "warnings");
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
	jw_key(j, "plan");
	jw_obj(j);
	rj_plan_fields(j, c->plan);
	jw_obj_end(j);
	rj_env(j, c->env);
	uint64_t responses = r->measure.completed + r->warmup.completed;
	if (c->target)
		rj_target(j, c->target, responses);
	rj_generator(j, r->threads, r->gen_cpu_ns, responses, r->gen_busiest_thread_pct,
		     r->gen_thread_cpu_ns);
	rj_target_cores(j, c);
	if (r->warmup_ns) {
		jw_key(j, "warmup");
		double wrate = (double)r->warmup.completed * 1e9 / (double)r->warmup_ns;
		rj_phase_hosts(j, &r->warmup, (double)r->warmup_ns, r->offered_rate_per_s,
			       r->open_loop, wrate, c->plan->inspect, c->plan->table_hosts,
			       c->plan->table_n_hosts, c->plan->names);
	}
	jw_key(j, "measure");
	rj_phase_hosts(j, &r->measure, (double)r->measure_ns, r->offered_rate_per_s, r->open_loop,
		       report_achieved_rate(r), c->plan->inspect, c->plan->table_hosts,
		       c->plan->table_n_hosts, c->plan->names);
	rj_series(j, r->series, r->series_len);
	if (r->n_reps > 1)
		rj_repetitions(j, r->reps, r->n_reps);
	rj_usage(j, r, c);
	struct report_warnings w;
	report_warnings(c, &w);
	rj_warnings(j, &w);
	jw_obj_end(j);
	return ferror(f) ? -EIO : 0;
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
