/* pacer — the report's identity (what was measured, with what, where) and
 * methodology (how it was measured) sections; see content_int.h. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "doc/keys.h"
#include "report/content_int.h"
#include "stats/summary.h"
#include "util/text.h"

/* --precise above this rate per thread: the gaps between due times are
 * shorter than a wake-up is late, so the loop spins all the time */
#define PRECISE_CORE_RATE 10000.0

/* argv as a shell command line, each argument quoted when it needs it. */

/* What the pacing cost and bought (generator.pacing): the windows the
 * precision budget chose and the send lag they left, or precise pacing's
 * spin, with a word on rates where a spin needs a core. */
static void pacing_cost(struct content_ctx *c)
{
	const json_t *g = rr_obj(c->root, KEY_GENERATOR);
	const json_t *gp = g ? rr_obj(g, KEY_PACING) : NULL;
	const json_t *pp = rr_obj(c->plan, KEY_PACING);
	if (!gp || !pp)
		return;
	double budget = rr_num_or(pp, KEY_PRECISION_BUDGET_PCT, NAN);
	double lag99 = rr_num_or(gp, KEY_SEND_LAG_P99_MS, NAN);
	double share = rr_num_or(gp, KEY_SEND_LAG_P99_PCT_OF_P50, NAN);
	const json_t *win = rr_obj(gp, KEY_SEND_WINDOW_US);
	double spin = rr_num_or(gp, KEY_SPIN_S, NAN);
	char lag[160] = "";
	if (isfinite(lag99) && isfinite(share))
		snprintf(lag, sizeof lag, "; send lag p99 %s = %s of the latency's p50",
			 fmt_us(&c->f, lag99 * 1e3), fmt_pct(&c->f, share));
	if (isfinite(budget) && win) {
		page_item(
			c->d,
			"Send window adapted to %s of the last second's p50: %s–%s (median %s)%s.",
			fmt_pct(&c->f, budget), fmt_us(&c->f, rr_num_or(win, KEY_MIN, NAN)),
			fmt_us(&c->f, rr_num_or(win, KEY_MAX, NAN)),
			fmt_us(&c->f, rr_num_or(win, KEY_MEDIAN, NAN)), lag);
	} else if (isfinite(spin)) {
		double rate = rr_num_or(c->plan, KEY_RATE_PER_S, NAN);
		double threads = rr_num_or(c->plan, KEY_THREADS, 1);
		double pct = rr_num_or(gp, KEY_SPIN_PCT_OF_CPU, NAN);
		char of[64] = "";
		if (isfinite(pct))
			snprintf(of, sizeof of, " (%s of pacer's CPU)", fmt_pct(&c->f, pct));
		page_item(
			c->d, "Precise pacing spun %s before due times%s%s.%s", fmt_s(&c->f, spin),
			of, lag,
			isfinite(rate) && rate / (threads > 0 ? threads : 1) > PRECISE_CORE_RATE
				? " Above about 10k requests/s per thread the gaps are shorter than a "
				  "wake-up's lateness: precise pacing needs a core per thread."
				: "");
	}
}

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
		fputc(' ', f);
		text_shell_quote(f, json_string_value(a));
	}
	if (fclose(f) != 0) {
		free(buf);
		return NULL;
	}
	return buf;
}

void content_identity(struct content_ctx *c)
{
	page_heading(c->d, 2, "identity", "Identity");
	const char *hdr[2] = {"Field", "Value"};
	page_table(c->d, 2, 0, hdr);
	char b[1024];
	kv(c, "Report id", c->r->id);
	snprintf(b, sizeof b, "%s, schema version %d.%d", result_kind_name(c->r->kind),
		 c->r->schema_major, c->r->schema_minor);
	kv(c, "Result", b);
	kv(c, "Result started at", rr_str(c->root, KEY_STARTED_AT));
	const char *scen = rr_str(c->root, KEY_SCENARIO);
	if (!scen)
		scen = rr_str(c->plan, KEY_SCENARIO);
	if (scen)
		kv(c, "Scenario", scen);
	char *cmd = rr_arr(c->plan, KEY_ARGV) ? command_line(rr_arr(c->plan, KEY_ARGV)) : NULL;
	kv(c, "Command", cmd);
	free(cmd);
	const char *mode = rr_str(c->root, KEY_MODE);
	if (mode && strcmp(mode, "self_contained") == 0)
		kv(c, "Mode", "self_contained: pacer drove its own embedded target, in the same process");
	else if (mode && strcmp(mode, "live") == 0)
		kv(c, "Mode", "live: pacer drove a separate target");
	else
		kv(c, "Mode", mode);
	if (c->r->kind != RESULT_KIND_COMPARE) {
		/* a table's URLs are its own: plan.url is only its first */
		kv(c, rr_obj(c->plan, KEY_TABLE) ? "First request's URL" : "Target URL",
		   rr_str(c->plan, KEY_URL));
		if (rr_str(c->plan, KEY_UNIX_SOCKET))
			kv(c, "Unix socket", rr_str(c->plan, KEY_UNIX_SOCKET));
		const json_t *t = rr_obj(c->root, KEY_TARGET);
		if (t) {
			double th = rr_num_or(t, KEY_THREADS, NAN);
			snprintf(b, sizeof b, "embedded plan %s, %s %s",
				 rr_str(t, KEY_PLAN) ? rr_str(t, KEY_PLAN) : "?",
				 fmt_int(&c->f, th), plural(th, "thread", "threads"));
			kv(c, "Embedded target", b);
		}
	} else {
		size_t i;
		const json_t *v;
		json_array_foreach(rr_arr(c->root, KEY_VARIANTS), i, v) {
			char k[96];
			const char *name = rr_str(v, KEY_NAME);
			snprintf(k, sizeof k, "Variant %s%s", name ? name : "?", i == 0 ? " (baseline)" : "");
			const char *tg = rr_str(v, KEY_TARGET), *url = rr_str(v, KEY_URL),
				   *vm = rr_str(v, KEY_MODE);
			if (tg && !*tg)
				tg = NULL; /* the shared table's: its URL says it */
			snprintf(b, sizeof b, "%s%s%s%s%s%s", tg ? tg : "", tg && url ? " at " : "",
				 url ? url : "", vm ? " (" : "", vm ? vm : "", vm ? ")" : "");
			kv(c, k, b);
			/* its own table (v.table), not the shared plan's */
			if (content_wl_phrase(c, rr_obj(v, KEY_WORKLOAD), v, "its URL", b,
					      sizeof b)) {
				snprintf(k, sizeof k, "Variant %s requests", name ? name : "?");
				kv(c, k, b);
			}
		}
	}
	const char *ver = rr_str(c->root, "pacer.version"), *commit = rr_str(c->root, "pacer.commit");
	snprintf(b, sizeof b, "%s (commit %s)", ver ? ver : "?", commit ? commit : "?");
	kv(c, "pacer", b);
	const char *os = rr_str(c->env, KEY_OS), *kern = rr_str(c->env, KEY_KERNEL),
		   *arch = rr_str(c->env, KEY_ARCH);
	snprintf(b, sizeof b, "%s %s, %s", os ? os : "?", kern ? kern : "", arch ? arch : "?");
	kv(c, "OS / arch", c->env ? b : NULL);
	double cores = rr_num_or(c->env, KEY_CORES, NAN);
	const char *model = rr_str(c->env, KEY_CPU_MODEL);
	snprintf(b, sizeof b, "%s, %s online %s", model ? model : "?", fmt_int(&c->f, cores),
		 plural(cores, "core", "cores"));
	kv(c, "CPU", c->env ? b : NULL);
	kv(c, "Host name", rr_str(c->env, KEY_HOSTNAME));
	{ /* a merged result (pacer merge): every generator, by segment */
		const json_t *segs = rr_arr(c->root, KEY_SEGMENTS);
		size_t i;
		const json_t *sg;
		if (segs) {
			double skew = rr_num_or(c->root, "merged.start_skew_ms", NAN);
			snprintf(b, sizeof b, "%zu segments merged (pacer merge); their measured phases "
					      "began within %s ms of each other; the machine above is "
					      "segment 0's",
				 json_array_size(segs), isnan(skew) ? "?" : fmt_int(&c->f, skew));
			kv(c, "Generators", b);
		}
		json_array_foreach(segs, i, sg) {
			char k[48];
			const char *host = rr_str(sg, "environment.hostname"),
				   *file = rr_str(sg, "file");
			double late = rr_num_or(sg, "clock.late_ms", NAN);
			double sc = rr_num_or(sg, "environment.cores", NAN);
			snprintf(k, sizeof k, "Segment %zu", i);
			double th = rr_num_or(sg, "generator.threads", NAN);
			snprintf(b, sizeof b, "%s, %s %s, %s %s, %s%s%s%sfrom %s", host ? host : "?",
				 fmt_int(&c->f, sc), plural(sc, "core", "cores"), fmt_int(&c->f, th),
				 plural(th, "thread", "threads"),
				 rr_true(sg, "generator_limited.flagged") ? "generator-limited, " : "",
				 isnan(late) ? "" : "started ",
				 isnan(late) ? "" : fmt_us(&c->f, late * 1e3),
				 isnan(late) ? "" : " after --start-at, ", file ? file : "?");
			kv(c, k, b);
		}
	}
	const json_t *table = rr_obj(c->plan, KEY_TABLE);
	if (table) {
		const char *src = rr_str(table, KEY_SOURCE), *fmtn = rr_str(table, KEY_FORMAT),
			   *sha = rr_str(table, KEY_SHA256), *order = rr_str(table, KEY_ORDER);
		snprintf(b, sizeof b, "%s (%s), %s requests, %s order, SHA-256 %s", src ? src : "?",
			 fmtn ? fmtn : "?", fmt_int(&c->f, rr_num_or(table, KEY_REQUESTS, NAN)),
			 order ? order : "?", sha ? sha : "?");
		kv(c, "Request table", b);
	}
	const json_t *wl = rr_obj(c->plan, KEY_WORKLOAD);
	if (wl) {
		content_wl_rows(c, wl);
	} else if (!table) {
		/* an older result, or a comparison (each variant's requests are
		 * listed with it) */
		const char *method = rr_str(c->plan, KEY_METHOD);
		size_t nh = rr_len(c->plan, KEY_HEADERS);
		double body = rr_num_or(c->plan, KEY_BODY_BYTES, 0);
		bool variants_wl =
			c->r->kind == RESULT_KIND_COMPARE &&
			rr_obj(json_array_get(rr_arr(c->root, KEY_VARIANTS), 0), KEY_WORKLOAD);
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
		json_array_foreach(rr_arr(c->plan, KEY_HEADERS), i, h) {
			if (json_is_string(h)) {
				char k[32];
				snprintf(k, sizeof k, "Header %zu", i + 1);
				kv(c, k, json_string_value(h));
			}
		}
	}
	const json_t *tls = rr_obj(c->plan, KEY_TLS);
	if (tls) {
		const char *trust = rr_str(tls, KEY_TRUST);
		const char *tver = rr_str(c->root, "measure.tls.version");
		const char *cipher = rr_str(c->root, "measure.tls.cipher");
		snprintf(b, sizeof b, "HTTPS, certificate %s (trust: %s)%s%s%s%s%s",
			 rr_true(tls, KEY_VERIFY) ? "verified" : "NOT verified",
			 trust ? trust : "?", tver ? ", " : "", tver ? tver : "", cipher ? " " : "",
			 cipher ? cipher : "",
			 rr_true(tls, KEY_RESUME) ? ", session resumption on" : "");
		kv(c, "TLS", b);
	}
	const json_t *rules = rr_obj(c->plan, KEY_RULES);
	if (rules) {
		if (rr_str(rules, KEY_SUCCESS))
			kv(c, "Success rule", rr_str(rules, KEY_SUCCESS));
		size_t i;
		const json_t *o;
		json_array_foreach(rr_arr(rules, KEY_OUTCOMES), i, o) {
			char k[96];
			snprintf(k, sizeof k, "Outcome %s",
				 rr_str(o, KEY_NAME) ? rr_str(o, KEY_NAME) : "?");
			kv(c, k, rr_str(o, KEY_RULE));
		}
		const json_t *st = rr_obj(rules, KEY_SERVER_TIME);
		if (st) {
			snprintf(b, sizeof b, "%s%s%s",
				 rr_str(st, KEY_SOURCE) ? rr_str(st, KEY_SOURCE) : "?",
				 rr_str(st, KEY_NAME) && *rr_str(st, KEY_NAME) ? " " : "",
				 rr_str(st, KEY_NAME) ? rr_str(st, KEY_NAME) : "");
			kv(c, "Server-reported time from", b);
		}
	}
	double seed;
	if (rr_num(c->plan, KEY_SEED, &seed)) {
		const json_t *sv = rr_get(c->plan, KEY_SEED);
		if (json_is_integer(sv))
			snprintf(b, sizeof b, "%lld", (long long)json_integer_value(sv));
		else
			snprintf(b, sizeof b, "%.0f", seed);
		kv(c, "Seed", b);
	}
}

void content_methodology(struct content_ctx *c)
{
	page_heading(c->d, 2, "methodology", "Methodology");
	const char *arrival = rr_str(c->plan, KEY_ARRIVAL);
	double threads = rr_num_or(c->plan, KEY_THREADS, NAN);
	double conns = rr_num_or(c->plan, KEY_CONNECTIONS, NAN);
	double conc = rr_num_or(c->plan, KEY_CONCURRENCY, NAN);
	double warm = rr_num_or(c->plan, KEY_WARMUP_S, NAN);
	double timeout = rr_num_or(c->plan, KEY_TIMEOUT_MS, NAN);
	double drain = rr_num_or(c->plan, KEY_DRAIN_MS, NAN);
	page_list(c->d);
	if (c->r->kind == RESULT_KIND_COMPARE) {
		page_item(
			c->d,
			"Variants measured interleaved: each repetition runs every variant once, the "
			"order rotating from one repetition to the next (%s), so slow drift of the "
			"machine affects all variants alike.",
			rr_str(c->plan, KEY_ORDER) ? rr_str(c->plan, KEY_ORDER)
						   : "order not recorded");
		page_item(
			c->d,
			"Each variant's figure is the median over its %u %s; ratios to the baseline "
			"(the first variant) come with a 95%% bootstrap confidence interval, and a "
			"difference is called significant only with %d repetitions or more, when the "
			"interval excludes 1 and the ratio is more than %s away from 1.",
			c->repeat, plural(c->repeat, "complete repetition", "complete repetitions"),
			SUMMARY_MIN_N, fmt_pct(&c->f, rr_num_or(c->plan, KEY_NOISE_PCT, NAN)));
	}
	if (c->open_loop) {
		double rate = rr_num_or(c->plan, KEY_RATE_PER_S, NAN);
		if (c->r->kind == RESULT_KIND_RAMP) {
			char list[512] = "";
			size_t i;
			const json_t *s;
			json_array_foreach(rr_arr(c->plan, KEY_STEPS_PER_S), i, s) {
				size_t l = strlen(list);
				if (l > sizeof list - 40) {
					snprintf(list + l, sizeof list - l, ", ...");
					break;
				}
				snprintf(list + l, sizeof list - l, "%s%s", i ? ", " : "",
					 fmt_rate(&c->f, json_is_number(s) ? json_number_value(s) : NAN));
			}
			page_item(c->d,
				 "Open loop, in steps of offered load (%s requests/s planned): each step "
				 "sends requests on a fixed schedule (%s arrivals), whether or not earlier "
				 "ones have returned.",
				 list, arrival ? arrival : "?");
		} else if (c->r->kind == RESULT_KIND_COMPARE && rr_obj(c->plan, KEY_RAMP)) {
			page_item(c->d, "Open loop, in steps of offered load per variant (ramp mode).");
		} else {
			page_item(c->d,
				 "Open loop: requests were due on a fixed schedule at %s requests/s (%s "
				 "arrivals), whether or not earlier ones had returned.",
				 fmt_rate(&c->f, rate), arrival ? arrival : "?");
		}
		page_item(c->d,
			 "Latency is measured from each request's scheduled time to the last byte of "
			 "its response, so time spent waiting inside pacer for a free connection counts "
			 "against the target (no coordinated omission). Service time (write to last "
			 "byte) is kept beside it.");
		page_item(c->d, "Up to %s %s over %s worker %s.", fmt_int(&c->f, conns),
			 plural(conns, "connection", "connections"), fmt_int(&c->f, threads),
			 plural(threads, "thread", "threads"));
		pacing_cost(c);
	} else {
		double reqs;
		char bound[96] = "";
		if (rr_num(c->plan, KEY_REQUESTS, &reqs))
			snprintf(bound, sizeof bound, ", for %s requests", fmt_int(&c->f, reqs));
		page_item(c->d,
			 "Closed loop: %s %s, each with one request outstanding: a new request is "
			 "sent when the previous one returns%s.",
			 fmt_int(&c->f, conc), plural(conc, "connection", "connections"), bound);
		page_item(c->d,
			 "Latency is measured from each send to the last byte of the response. When the "
			 "target slows down, fewer requests are sent: waiting that real users would see "
			 "is not in these figures (coordinated omission).");
		page_item(c->d, "%s worker %s.", fmt_int(&c->f, threads),
			 plural(threads, "thread", "threads"));
	}
	{ /* the protocol, and what spoke it */
		char proto[96], more[256] = "";
		const char *http = rr_str(c->plan, KEY_HTTP);
		double h2, h1, streams;
		bool counted = content_h2_conns(c, &h2, &h1);
		if (http && strcmp(http, "1.1") != 0 && rr_num(c->plan, KEY_MAX_STREAMS, &streams))
			snprintf(more, sizeof more, ", at most %s concurrent %s per connection",
				 fmt_int(&c->f, streams), plural(streams, "stream", "streams"));
		else if (http && !rr_true(c->plan, KEY_KEEPALIVE) && rr_get(c->plan, KEY_KEEPALIVE))
			snprintf(more, sizeof more, ", a new connection for each request (--no-keepalive)");
		else if (http)
			snprintf(more, sizeof more, ", connections kept alive from request to request");
		size_t l = strlen(more);
		if (counted && c->r->kind == RESULT_KIND_RUN)
			snprintf(more + l, sizeof more - l, "; %s %s spoke HTTP/2%s%s%s (warm-up included)",
				 fmt_int(&c->f, h2), plural(h2, "connection", "connections"),
				 h1 > 0 ? ", " : "", h1 > 0 ? fmt_int(&c->f, h1) : "",
				 h1 > 0 ? " HTTP/1.1" : "");
		if (http)
			page_item(c->d, "Protocol: %s%s.", content_protocol(c, proto, sizeof proto), more);
	}
	{
		char wl[1200];
		const json_t *w = rr_obj(c->plan, KEY_WORKLOAD);
		if (content_wl_phrase(c, w, c->plan, "the target URL", wl, sizeof wl)) {
			/* a short list names each request; the shares then follow */
			bool listed = rr_true(w, KEY_LISTED_ALL) && rr_len(w, KEY_LISTED) <= 4;
			char methods[400];
			content_wl_methods(c, w, methods, sizeof methods);
			if (listed && rr_num_or(w, KEY_REQUESTS, 0) > 1)
				page_item(c->d, "What was sent: %s. Methods: %s of the requests.", wl,
					 methods);
			else
				page_item(c->d, "What was sent: %s.%s", wl,
					 listed ? ""
						: " The JSON result lists the first requests one by one "
						  "(plan.workload.listed).");
		}
	}
	if (c->r->kind == RESULT_KIND_RAMP) {
		double sd = rr_num_or(c->plan, KEY_STEP_DURATION_S, NAN);
		double sw = rr_num_or(c->plan, KEY_STEP_WARMUP_S, NAN);
		const char *slo = rr_str(c->plan, KEY_SLO);
		page_item(c->d,
			 "Each step: a %s warm-up (not counted), %s measured, then a drain of up to %s "
			 "for responses still due; connections carry over from step to step.",
			 fmt_s(&c->f, sw), fmt_s(&c->f, sd), fmt_us(&c->f, drain * 1e3));
		if (slo)
			page_item(
				c->d,
				"Each step is judged against the SLO %s; the ramp stops after the first "
				"failing step%s.",
				slo,
				rr_num_or(c->plan, KEY_AFTER_FAIL, 0) > 0
					? " (plus --after-fail steps)"
					: "");
		else
			page_item(c->d, "No SLO was given: every step passes.");
		if (rr_true(c->plan, KEY_REFINE))
			page_item(
				c->d,
				"Refined: pacer bisected between the last passing and first failing "
				"rates until they were within %s.",
				fmt_pct(&c->f, rr_num_or(c->plan, KEY_PRECISION, NAN) * 100));
	} else if (c->r->kind == RESULT_KIND_RUN) {
		double dur;
		if (rr_num(c->plan, KEY_DURATION_S, &dur))
			page_item(c->d, "Measured phase: %s planned (%s measured)%s.", fmt_s(&c->f, dur),
				 fmt_s(&c->f, rr_num_or(c->root, "measure.duration_s", NAN)),
				 warm > 0 ? "" : ", with no warm-up");
		if (warm > 0)
			page_item(c->d, "Warm-up: %s of the same load before the measured phase, not "
				       "counted.",
				 fmt_s(&c->f, warm));
		page_item(c->d, "Drain: after the measured phase, up to %s to collect responses to "
			       "requests already due.",
			 fmt_us(&c->f, drain * 1e3));
	} else {
		const json_t *ramp = rr_obj(c->plan, KEY_RAMP);
		if (ramp)
			page_item(
				c->d,
				"Each repetition is a ramp per variant, %s per step, judged by the "
				"SLO %s; the figure compared is the capacity (highest passing "
				"offered rate).",
				fmt_s(&c->f, rr_num_or(ramp, KEY_STEP_DURATION_S, NAN)),
				rr_str(ramp, KEY_SLO) ? rr_str(ramp, KEY_SLO) : "(none)");
		else
			page_item(c->d,
				  "Each repetition: %s warm-up (not counted), then %s measured.",
				  fmt_s(&c->f, warm),
				  fmt_s(&c->f, rr_num_or(c->plan, KEY_DURATION_S, NAN)));
	}
	if (c->r->kind != RESULT_KIND_COMPARE) {
		if (c->repeat > 1)
			page_item(c->d,
				 "Repetitions: %u on the same connections; the main figures pool every "
				 "repetition, and each repetition's figures are kept with their median "
				 "and range.",
				 c->repeat);
		else
			page_item(c->d, "Repetitions: one.");
	}
	page_item(c->d,
		 "Per-request timeout %s: a request without a full response by then is closed, "
		 "counted as an error and its connection reopened.",
		 fmt_us(&c->f, timeout * 1e3));
	page_item(c->d,
		 "Percentiles come from log-linear histograms with a relative error under 0.1%%; "
		 "minimum, maximum and mean are exact.");
}
