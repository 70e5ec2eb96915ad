/* pacer — the /metrics exposition writer (metrics/expo.h). */
#include "metrics/expo.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

const double metrics_quantiles[METRICS_N_QUANTILES] = {0.5, 0.9, 0.99, 0.999};

/* Exported histogram buckets, live edges so that their cumulative counts
 * are exact: for the latency every one (561, a factor 1.029 apart, so that
 * histogram_quantile is within 3 % of the truth); for the generator's loop
 * lag, a figure of pacer's own health, every 4th (141, a factor 1.122,
 * 20 a decade), which keeps the scrape smaller. */
static bool exported_edge(size_t i, bool lag)
{
	return !lag || i % 4 == 0;
}

struct out {
	FILE *f;
	enum metrics_format fmt;
	const struct metrics_view *v;
};

static void put_double(FILE *f, double x)
{
	if (isnan(x))
		fputs("NaN", f);
	else if (isinf(x))
		fputs(x > 0 ? "+Inf" : "-Inf", f);
	else
		fprintf(f, "%.9g", x);
}

/* The length of the valid UTF-8 sequence at s (1..4), or 0 when s does not
 * start one (a stray continuation byte, an overlong form, a surrogate, past
 * U+10FFFF, or cut short by the end of the string). */
static size_t utf8_len(const unsigned char *s)
{
	size_t n;
	uint32_t min, c;
	if (s[0] < 0x80)
		return 1;
	if ((s[0] & 0xe0) == 0xc0)
		n = 2, min = 0x80, c = s[0] & 0x1fu;
	else if ((s[0] & 0xf0) == 0xe0)
		n = 3, min = 0x800, c = s[0] & 0x0fu;
	else if ((s[0] & 0xf8) == 0xf0)
		n = 4, min = 0x10000, c = s[0] & 0x07u;
	else
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80) /* the terminating NUL fails here too */
			return 0;
		c = c << 6 | (s[i] & 0x3fu);
	}
	if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
		return 0;
	return n;
}

/* A label value, escaped as both formats want (\\, \", \n); the formats are
 * UTF-8, so a byte that is not part of valid UTF-8 (a file name may hold
 * any) is written as U+FFFD rather than break the scraper's parser. */
static void put_label_value(FILE *f, const char *str)
{
	const unsigned char *s = (const unsigned char *)str;
	while (*s) {
		size_t n = utf8_len(s);
		if (!n) {
			fputs("\xef\xbf\xbd", f);
			s++;
		} else if (*s == '\\') {
			fputs("\\\\", f);
		} else if (*s == '"') {
			fputs("\\\"", f);
		} else if (*s == '\n') {
			fputs("\\n", f);
		} else {
			fwrite(s, 1, n, f);
		}
		s += n;
	}
}

/* HELP and TYPE of a family. name is the sample name without a counter's
 * _total (OpenMetrics names the family so; the text format names it with). */
static void family(struct out *o, const char *name, const char *type, const char *help)
{
	const char *sfx = !strcmp(type, "counter") && o->fmt == METRICS_TEXT ? "_total" : "";
	fprintf(o->f, "# HELP %s%s %s\n# TYPE %s%s %s\n", name, sfx, help, name, sfx, type);
}

/* One label, after a comma unless it is the first. */
static void label(FILE *f, bool *first, const char *key, const char *val)
{
	fprintf(f, "%s%s=\"", *first ? "{" : ",", key);
	put_label_value(f, val);
	fputc('"', f);
	*first = false;
}

/* name{run="..",scenario="..",variant=".." (the labels that apply), the
 * brace left open; returns whether no label was written (then no brace
 * either). */
static bool sample_open(struct out *o, const struct metrics_variant *mv, const char *name,
			const char *suffix)
{
	fprintf(o->f, "%s%s", name, suffix);
	bool first = true;
	if (o->v->run && o->v->run[0])
		label(o->f, &first, "run", o->v->run);
	if (o->v->scenario && o->v->scenario[0])
		label(o->f, &first, "scenario", o->v->scenario);
	if (mv->name && mv->name[0])
		label(o->f, &first, "variant", mv->name);
	return first;
}

/* name{run="..",scenario="..",variant="..",key="val"} (the labels that
 * apply), without the value. */
static void sample(struct out *o, const struct metrics_variant *mv, const char *name,
		   const char *suffix, const char *key, const char *val)
{
	bool first = sample_open(o, mv, name, suffix);
	if (key)
		label(o->f, &first, key, val);
	if (!first)
		fputc('}', o->f);
}

static void val_u64(struct out *o, uint64_t x) { fprintf(o->f, " %" PRIu64 "\n", x); }

static void val_double(struct out *o, double x)
{
	fputc(' ', o->f);
	put_double(o->f, x);
	fputc('\n', o->f);
}

/* A counter or gauge without labels of its own: one sample per variant. */
typedef uint64_t (*u64_of)(const struct metrics_variant *);

static void simple_u64(struct out *o, const char *name, const char *type, const char *help,
		       u64_of get)
{
	family(o, name, type, help);
	bool counter = !strcmp(type, "counter");
	for (size_t i = 0; i < o->v->n_variants; i++) {
		sample(o, &o->v->v[i], name, counter ? "_total" : "", NULL, NULL);
		val_u64(o, get(&o->v->v[i]));
	}
}

static uint64_t g_sched(const struct metrics_variant *m) { return m->live.scheduled; }
static uint64_t g_sent(const struct metrics_variant *m) { return m->live.sent; }
static uint64_t g_compl(const struct metrics_variant *m) { return m->live.completed; }
static uint64_t g_drop(const struct metrics_variant *m) { return m->live.dropped; }
static uint64_t g_backlog(const struct metrics_variant *m) { return m->live.backlog; }
static uint64_t g_open(const struct metrics_variant *m) { return m->live.conns_open; }
static uint64_t g_conn(const struct metrics_variant *m) { return m->live.conns_connecting; }
static uint64_t g_step(const struct metrics_variant *m) { return m->step; }
static uint64_t g_threads(const struct metrics_variant *m) { return m->live.threads; }

/* One series of a histogram: name_bucket{..,[phase="..",]le=".."} and its
 * _sum and _count, from non-cumulative counts b (ENGINE_LIVE_BUCKETS + 1). */
static void hist_series(struct out *o, const struct metrics_variant *mv, const char *name,
			const char *phase, const uint64_t *b, uint64_t sum_ns, bool lag)
{
	char le[32];
	uint64_t cum = 0;
	for (size_t k = 0; k <= ENGINE_LIVE_BUCKETS; k++) {
		cum += b[k];
		if (k < ENGINE_LIVE_BUCKETS && !exported_edge(k, lag))
			continue;
		if (k < ENGINE_LIVE_BUCKETS) /* 4 significant digits are the edge exactly */
			snprintf(le, sizeof le, "%.4g", (double)engine_live_edge_ns(k) / 1e9);
		else
			strcpy(le, "+Inf");
		bool first = sample_open(o, mv, name, "_bucket");
		if (phase)
			label(o->f, &first, "phase", phase);
		label(o->f, &first, "le", le);
		fputc('}', o->f);
		val_u64(o, cum);
	}
	sample(o, mv, name, "_sum", phase ? "phase" : NULL, phase);
	val_double(o, (double)sum_ns / 1e9);
	sample(o, mv, name, "_count", phase ? "phase" : NULL, phase);
	val_u64(o, cum);
}

/* The latency histogram, a series per phase the responses were due in
 * (warmup, measure: a step's figures are of the latter), or the loop lag's. */
static void histogram(struct out *o, const char *name, const char *help, bool lag)
{
	family(o, name, "histogram", help);
	for (size_t i = 0; i < o->v->n_variants; i++) {
		const struct metrics_variant *mv = &o->v->v[i];
		if (lag) {
			hist_series(o, mv, name, NULL, mv->live.lag_bucket, mv->live.lag_sum_ns,
				    true);
			continue;
		}
		static const char *const phase[2] = {"warmup", "measure"};
		for (int p = 0; p < 2; p++)
			hist_series(o, mv, name, phase[p], mv->live.phase_bucket[p],
				    mv->live.phase_sum_ns[p], false);
	}
}

int metrics_expo_write(FILE *f, const struct metrics_view *v, enum metrics_format fmt)
{
	struct out o = {.f = f, .fmt = fmt, .v = v};
	if (v->version) {
		const struct metrics_variant none = {0}; /* the process's, no variant label */
		family(&o, "pacer_build_info", "gauge",
		       "Always 1; its labels name the pacer that serves these metrics.");
		bool first = sample_open(&o, &none, "pacer_build_info", "");
		label(f, &first, "version", v->version);
		label(f, &first, "commit", v->commit ? v->commit : "");
		fputs("} 1\n", f);
	}
	simple_u64(&o, "pacer_requests_scheduled", "counter",
		   "Requests due by the schedule (open loop) or issued (closed loop).", g_sched);
	simple_u64(&o, "pacer_requests_sent", "counter",
		   "Requests handed to a connection and written.", g_sent);
	simple_u64(&o, "pacer_requests_completed", "counter",
		   "Full responses received, any status.", g_compl);
	simple_u64(&o, "pacer_requests_dropped", "counter",
		   "Due requests never sent: the backlog was full or the host refused.", g_drop);

	/* errors in two families, so that summing one means something: the
	 * requests that did not succeed (over pacer_requests_sent, pacer's
	 * error rate), and the connections that failed, which no request was
	 * waiting on */
	family(&o, "pacer_request_errors", "counter",
	       "Requests sent that did not succeed, by kind: failed on their connection (read, "
	       "write, timeout, parse, closed, reset) or a full response that failed --success "
	       "(failed_response). Their sum over pacer_requests_sent is pacer's error rate.");
	for (size_t i = 0; i < v->n_variants; i++) {
		const struct metrics_variant *mv = &v->v[i];
		for (int k = 0; k < ERRK_COUNT; k++) {
			if (err_kind_is_connection((enum err_kind)k))
				continue;
			sample(&o, mv, "pacer_request_errors", "_total", "kind",
			       err_kind_name((enum err_kind)k));
			val_u64(&o, mv->live.errors[k]);
		}
		sample(&o, mv, "pacer_request_errors", "_total", "kind", "failed_response");
		val_u64(&o, mv->live.failed);
	}
	family(&o, "pacer_connection_errors", "counter",
	       "Connections that failed, by kind: connect, tls (handshake), protocol (HTTP/2 or "
	       "HTTP/3 ended by an error or by the peer before it took a request). Not requests: "
	       "the requests they held back wait or are dropped.");
	for (size_t i = 0; i < v->n_variants; i++) {
		const struct metrics_variant *mv = &v->v[i];
		for (int k = 0; k < ERRK_COUNT; k++) {
			if (!err_kind_is_connection((enum err_kind)k))
				continue;
			sample(&o, mv, "pacer_connection_errors", "_total", "kind",
			       err_kind_name((enum err_kind)k));
			val_u64(&o, mv->live.errors[k]);
		}
	}

	family(&o, "pacer_connect_failures", "counter",
	       "Connects that failed (pacer_connection_errors kind connect), by cause: refused "
	       "(nothing listens), reset, timeout, other.");
	for (size_t i = 0; i < v->n_variants; i++) {
		const struct metrics_variant *mv = &v->v[i];
		for (int k = 0; k < CONNF_COUNT; k++) {
			sample(&o, mv, "pacer_connect_failures", "_total", "cause",
			       connect_cause_name((enum connect_cause)k));
			val_u64(&o, mv->live.connect_fail[k]);
		}
	}

	family(&o, "pacer_responses", "counter", "Full responses by status class.");
	static const char *const cls[6] = {"other", "1xx", "2xx", "3xx", "4xx", "5xx"};
	for (size_t i = 0; i < v->n_variants; i++)
		for (int k = 1; k <= 6; k++) {
			sample(&o, &v->v[i], "pacer_responses", "_total", "class", cls[k % 6]);
			val_u64(&o, v->v[i].live.status_class[k % 6]);
		}

	if (v->n_outcomes) {
		family(&o, "pacer_outcomes", "counter", "Responses matching each --outcome rule.");
		for (size_t i = 0; i < v->n_variants; i++)
			for (uint32_t k = 0; k < v->n_outcomes && k < ENGINE_LIVE_OUTCOMES; k++) {
				sample(&o, &v->v[i], "pacer_outcomes", "_total", "outcome",
				       v->outcome_names[k]);
				val_u64(&o, v->v[i].live.outcome[k]);
			}
	}

	simple_u64(&o, "pacer_backlog_requests", "gauge",
		   "Due requests waiting for a connection.", g_backlog);
	simple_u64(&o, "pacer_connections_open", "gauge", "Established connections.", g_open);
	simple_u64(&o, "pacer_connections_connecting", "gauge", "Connections being opened.",
		   g_conn);
	simple_u64(&o, "pacer_step", "gauge",
		   "The measurement or ramp step under way (or last), 1-based; 0 before the first.",
		   g_step);

	family(&o, "pacer_offered_rate_requests_per_second", "gauge",
	       "Offered rate of the current step (0: closed loop).");
	for (size_t i = 0; i < v->n_variants; i++) {
		sample(&o, &v->v[i], "pacer_offered_rate_requests_per_second", "", NULL, NULL);
		val_double(&o, v->v[i].offered_per_s);
	}

	family(&o, "pacer_phase", "gauge", "1 for the phase the load is in, else 0.");
	static const char *const ph[4] = {"idle", "warmup", "measure", "drain"};
	for (size_t i = 0; i < v->n_variants; i++)
		for (int k = 0; k < 4; k++) {
			sample(&o, &v->v[i], "pacer_phase", "", "phase", ph[k]);
			val_u64(&o, v->v[i].phase == (enum metrics_phase)k);
		}

	histogram(
		&o, "pacer_latency_seconds",
		"Latency from the scheduled time to the last byte, of full responses, by the phase "
		"they were due in.",
		false);

	char help[160];
	snprintf(
		help, sizeof help,
		"Latency quantiles of the full responses of the last %g s (estimated, within 3%%).",
		v->window_s);
	family(&o, "pacer_latency_recent_seconds", "summary", help);
	char q[16];
	for (size_t i = 0; i < v->n_variants; i++) {
		const struct metrics_variant *mv = &v->v[i];
		for (int k = 0; k < METRICS_N_QUANTILES; k++) {
			snprintf(q, sizeof q, "%g", metrics_quantiles[k]);
			sample(&o, mv, "pacer_latency_recent_seconds", "", "quantile", q);
			val_double(&o, mv->recent_s[k]);
		}
		sample(&o, mv, "pacer_latency_recent_seconds", "_count", NULL, NULL);
		val_u64(&o, mv->recent_count);
	}

	histogram(&o, "pacer_generator_loop_lag_seconds",
		  "Open loop: due time to pick-up by the generator's loop, per scheduled request.",
		  true);

	family(&o, "pacer_generator_cpu_seconds", "counter", "CPU time of the worker threads.");
	for (size_t i = 0; i < v->n_variants; i++) {
		sample(&o, &v->v[i], "pacer_generator_cpu_seconds", "_total", NULL, NULL);
		val_double(&o, (double)v->v[i].live.cpu_ns / 1e9);
	}
	if (v->steal_known) {
		static const char *const cpus[2] = {"generator", "machine"};
		const struct metrics_variant none = {0}; /* the process's, no variant label */
		family(&o, "pacer_steal_seconds", "counter",
		       "The hypervisor's steal time since pacer started (/proc/stat), on the CPUs "
		       "the generator may run on and on every CPU; over pacer_steal_cpus, the share "
		       "of their time.");
		for (int k = 0; k < 2; k++) {
			sample(&o, &none, "pacer_steal_seconds", "_total", "cpus", cpus[k]);
			val_double(&o, v->steal_s[k]);
		}
		family(&o, "pacer_steal_cpus", "gauge", "The CPUs pacer_steal_seconds is over.");
		for (int k = 0; k < 2; k++) {
			sample(&o, &none, "pacer_steal_cpus", "", "cpus", cpus[k]);
			val_u64(&o, v->steal_cpus[k]);
		}
	}
	simple_u64(&o, "pacer_generator_threads", "gauge", "Worker threads.", g_threads);

	if (fmt == METRICS_OPENMETRICS)
		fputs("# EOF\n", f);
	return ferror(f) ? -EIO : 0;
}

const char *metrics_content_type(enum metrics_format fmt)
{
	return fmt == METRICS_OPENMETRICS ? "application/openmetrics-text; version=1.0.0; charset=utf-8"
					  : "text/plain; version=0.0.4; charset=utf-8";
}

enum metrics_format metrics_negotiate(const char *accept)
{
	const char *p = accept;
	while (p && (p = strstr(p, "application/openmetrics-text"))) {
		/* this media range's parameters run to the next comma */
		const char *end = strchr(p, ',');
		if (!end)
			end = p + strlen(p);
		double qv = 1;
		for (const char *s = p; s < end; s++)
			if (*s == ';') {
				while (s + 1 < end && s[1] == ' ')
					s++;
				if (s + 2 < end && s[1] == 'q' && s[2] == '=')
					qv = strtod(s + 3, NULL);
			}
		if (qv > 0)
			return METRICS_OPENMETRICS;
		p = end;
	}
	return METRICS_TEXT;
}

double metrics_quantile(const uint64_t *b, double q)
{
	uint64_t total = 0;
	for (size_t k = 0; k <= ENGINE_LIVE_BUCKETS; k++)
		total += b[k];
	if (!total)
		return NAN;
	if (q < 0)
		q = 0;
	if (q > 1)
		q = 1;
	double rank = q * (double)total;
	uint64_t cum = 0;
	for (size_t k = 0; k < ENGINE_LIVE_BUCKETS; k++) {
		if (!b[k])
			continue;
		if ((double)(cum + b[k]) >= rank) {
			double lo = k ? (double)engine_live_edge_ns(k - 1) : 0;
			double hi = (double)engine_live_edge_ns(k);
			double x = lo + (hi - lo) * ((rank - (double)cum) / (double)b[k]);
			return x / 1e9;
		}
		cum += b[k];
	}
	return (double)engine_live_edge_ns(ENGINE_LIVE_BUCKETS - 1) / 1e9;
}
