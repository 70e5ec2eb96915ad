/* Unit tests: the report writers (report/render.c and the files behind it):
 * escaping in Markdown, HTML and text; the seven sections and the facts they
 * state (self-contained, loopback, closed loop, interrupted, errors,
 * generator-limited, cost, the target's waits for a CPU); determinism; CSV layout and quoting; .hgrm from
 * saved pairs; .hlog decoded here by an independent reader of HdrHistogram's
 * V2 encoding (base64, zlib, ZigZag LEB128, HdrHistogram's own index
 * formula); the SVG charts; and the files of a report folder. */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <cmocka.h>

#include "common/check.h"
#include "common/doc_fixtures.h"
#include "report/page.h"
#include "report/render.h"
#include "report/render_int.h"
#include "report/svg.h"
#include "stats/hist.h"
#include "stats/hist_io.h"
#include "util/err.h"

static const char HOSTILE[] = "<script>alert(1)</script>|x\ny & \"q\" 'a' `c` *b* _u_ "
			      "[l](javascript:alert(1)) # $m$ \x1b[31m";

/* Render fmt of j (taking it) with options o; asserts success. */
static char *render(json_t *j, enum report_format fmt, const struct report_options *o)
{
	struct loaded_result r;
	char err[512];
	int rc = fx_load(j, &r, err, sizeof err);
	CHECK(rc == 0, "load: %s", err);
	char *out = fx_render(&r, fmt, o, &rc, err, sizeof err);
	CHECK(rc == 0 && out, "render %s: rc %d: %s", report_format_name(fmt), rc, err);
	result_free(&r);
	return out;
}

static bool has(const char *hay, const char *needle)
{
	return strstr(hay, needle) != NULL;
}

/* ---- escaping ------------------------------------------------------------------ */

static char *capture_esc(void (*esc)(FILE *, const char *), const char *s)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	esc(f, s);
	fclose(f);
	return buf;
}

static void test_escape_md(void **state)
{
	(void)state;
	char *m = capture_esc(esc_md, HOSTILE);
	/* every markup character is preceded by a backslash, no line break remains */
	for (const char *p = m; *p; p++) {
		CHECK(*p != '\n' && *p != '\r' && (unsigned char)*p >= 0x20, "control byte in '%s'", m);
		if (strchr("<>|`*_[]&#$~", *p))
			CHECK(p > m && p[-1] == '\\', "unescaped '%c' at %zu in '%s'", *p,
			      (size_t)(p - m), m);
	}
	assert_string_equal(m, "\\<script\\>alert(1)\\</script\\>\\|x y \\& \"q\" 'a' \\`c\\` \\*b\\* "
			       "\\_u\\_ \\[l\\](javascript:alert(1)) \\# \\$m\\$  \\[31m");
	free(m);
	m = capture_esc(esc_md, "a\\b");
	assert_string_equal(m, "a\\\\b");
	free(m);
}

static void test_escape_html(void **state)
{
	(void)state;
	char *h = capture_esc(esc_html, HOSTILE);
	CHECK(!has(h, "<") && !has(h, ">") && !has(h, "\""), "'%s'", h);
	assert_string_equal(h, "&lt;script&gt;alert(1)&lt;/script&gt;|x\ny &amp; &quot;q&quot; "
			       "&#39;a&#39; `c` *b* _u_ [l](javascript:alert(1)) # $m$ ?[31m");
	free(h);
}

static void test_numbers(void **state)
{
	(void)state;
	struct fring r = {0};
	static const struct {
		double us;
		const char *want;
	} us[] = {{0.85, "850 ns"}, {28.83, "28.8 µs"}, {2646.015, "2.65 ms"}, {26656.8, "26.7 ms"},
		  {634400, "634 ms"}, {1380000, "1.38 s"}, {5.0, "5.00 µs"}, {999.6, "1.00 ms"},
		  {NAN, "–"}};
	for (size_t i = 0; i < sizeof us / sizeof us[0]; i++)
		CHECK(strcmp(fmt_us(&r, us[i].us), us[i].want) == 0, "%g us: '%s' want '%s'", us[i].us,
		      fmt_us(&r, us[i].us), us[i].want);
	assert_string_equal(fmt_rate(&r, 1000), "1,000");
	assert_string_equal(fmt_rate(&r, 499.549), "499.5");
	assert_string_equal(fmt_rate(&r, 107572.1), "107,572");
	assert_string_equal(fmt_int(&r, 1500), "1,500");
	assert_string_equal(fmt_pct(&r, 0), "0.00%");
	assert_string_equal(fmt_pct(&r, 1.234), "1.23%");
	assert_string_equal(fmt_pct(&r, 0.001), "0.001%");
	assert_string_equal(fmt_ratio(&r, 0.99664), "0.997");
	assert_string_equal(fmt_ratio(&r, 100.51), "100.5");
	assert_string_equal(fmt_bytes(&r, 7012352), "6.7 MiB");
	assert_string_equal(fmt_s(&r, 3.0027), "3.0 s");
	/* the ring keeps 32 results alive at once */
	const char *first = fmt_int(&r, 1);
	for (int i = 0; i < 31; i++)
		fmt_int(&r, 2);
	assert_string_equal(first, "1");
}

/* ---- Markdown / HTML / text -------------------------------------------------------- */

static const char *const sections[7] = {
	"## Summary", "## Identity", "## Methodology", "## Test conditions and limits",
	"## Results", "## Cost and resources", "## What this number means / does not establish"};

/* What pacing bought (generator.pacing), in the method section: a budget's
 * windows and send lag; --precise's spin, and a core above ~10k/s a thread. */
static void test_pacing_sentence(void **state)
{
	(void)state;
	json_t *j = fx_run();
	json_t *plan = json_object_get(j, "plan");
	json_object_set_new(plan, "pacing",
			    json_pack("{s:s, s:f, s:f, s:n}", "mode", "batched", "send_window_us",
				      1000.0, "precision_budget_pct", 5.0, "why_precise"));
	json_t *gen = json_object_get(j, "generator");
	json_object_set_new(gen, "pacing",
			    json_pack("{s:{s:f, s:f, s:f}, s:n, s:n, s:f, s:f, s:f}",
				      "send_window_us", "min", 600.0, "median", 800.0, "max",
				      1100.0, "spin_s", "spin_pct_of_cpu", "send_lag_p99_ms", 0.9,
				      "latency_p50_ms", 22.0, "send_lag_p99_pct_of_p50", 4.09));
	char *md = render(j, REPORT_FMT_MD, NULL);
	CHECK(has(md, "Send window adapted to 5"), "no budget sentence:\n%s", md);
	CHECK(has(md,
		  "600 µs–1.10 ms (median 800 µs); send lag p99 900 µs = 4.09% of the latency's p50"),
	      "budget sentence:\n%s", md);
	CHECK(!has(md, "Precise pacing spun"), "a spin without precise pacing");
	free(md);

	for (int fast = 0; fast < 2; fast++) {
		j = fx_run();
		plan = json_object_get(j, "plan");
		json_object_set_new(plan, "rate_per_s", json_real(fast ? 20000.0 : 1000.0));
		json_object_set_new(plan, "pacing",
				    json_pack("{s:s, s:n, s:n, s:n}", "mode", "precise",
					      "send_window_us", "precision_budget_pct",
					      "why_precise"));
		gen = json_object_get(j, "generator");
		json_object_set_new(gen, "pacing",
				    json_pack("{s:n, s:f, s:f, s:f, s:f, s:f}", "send_window_us",
					      "spin_s", 0.25, "spin_pct_of_cpu", 31.5,
					      "send_lag_p99_ms", 0.05, "latency_p50_ms", 20.0,
					      "send_lag_p99_pct_of_p50", 0.25));
		md = render(j, REPORT_FMT_MD, NULL);
		CHECK(has(md,
			  "Precise pacing spun 0.250 s before due times (31.50% of pacer's CPU)"),
		      "no spin sentence:\n%s", md);
		CHECK(has(md, "needs a core per thread") == (fast == 1), "core sentence at %s/s",
		      fast ? "20k" : "1k");
		free(md);
	}
}

static void test_md_sections_and_facts(void **state)
{
	(void)state;
	json_t *(*const make[3])(void) = {fx_run, fx_ramp, fx_compare};
	for (int k = 0; k < 3; k++) {
		char *md = render(make[k](), REPORT_FMT_MD, NULL);
		const char *prev = md;
		for (int s = 0; s < 7; s++) {
			const char *at = strstr(md, sections[s]);
			CHECK(at && at >= prev, "kind %d: section '%s' missing or out of order", k,
			      sections[s]);
			prev = at ? at : prev;
		}
		/* the headline is a bold paragraph right after "## Summary" */
		CHECK(has(md, "## Summary\n\n**In a"), "kind %d: no headline", k);
		CHECK(!has(md, "chart-"), "kind %d: stdout Markdown references a chart file", k);
		free(md);
	}
	char *md = render(fx_run(), REPORT_FMT_MD, NULL);
	CHECK(has(md, "**In an open-loop test over loopback HTTP on a 4-core Test CPU machine, the "
		      "target measured p50 1.00 ms and p99 20.0 ms at 500 requests/s offered (500 "
		      "achieved) with a 1.00% error rate.**"),
	      "headline: %s", md);
	CHECK(has(md, "Loopback: the target was on this machine (127.0.0.1)"), "no loopback fact");
	CHECK(has(md, "One run: there is no estimate of run-to-run variance"), "no variance fact");
	CHECK(has(md, "10 responses had a status other than 2xx (5xx 10)"), "no 5xx fact");
	CHECK(!has(md, "Self-contained"), "a live run called self-contained");
	CHECK(!has(md, "Closed loop"), "an open loop called closed");
	/* statuses in numeric order although the file has 503 first */
	const char *s200 = strstr(md, "| 200 |"), *s503 = strstr(md, "| 503 |");
	CHECK(s200 && s503 && s200 < s503, "status order");
	free(md);

	md = render(fx_ramp(), REPORT_FMT_MD, NULL);
	CHECK(has(md, "Self-contained: the driver and the target (pacer's embedded plan hello) "
		      "shared one process"),
	      "no self-contained caveat");
	CHECK(has(md, "the highest step within the SLO p99\\<10ms,errors\\<1% reached 500 "
		      "requests/s"),
	      "ramp headline: %s", md);
	CHECK(has(md, "The next step tried, 1,000 requests/s, did not: Fail p99 20.0ms \\> 10ms."),
	      "no next-step reason");
	CHECK(has(md, "| 3 | 1,000 | 700 | 1.00 ms | 20.0 ms | 0.00% | 0.00% | no: p99 20.0ms \\> "
		      "10ms |"),
	      "ramp row: %s", md);
	CHECK(has(md, "capacity lies between 500 and 1,000 requests/s"), "no capacity range");
	free(md);

	md = render(fx_compare(), REPORT_FMT_MD, NULL);
	CHECK(has(md, "b against baseline a: throughput faster (ratio 2.000, 95% CI 1.800–2.200)"),
	      "compare headline: %s", md);
	CHECK(has(md, "| throughput | b | a | 2.000 | 1.800–2.200 | faster |"), "ratio row");
	CHECK(has(md, "Closed loop: each connection waits"), "no closed-loop caveat");
	CHECK(has(md, "Only 3 repetitions per variant"), "no repetitions caveat");
	CHECK(!has(md, "Sessions"), "sessions without a session script: %s", md);
	free(md);

	/* a session script's compare: the Sessions table, a row a variant, and
	 * each variant's steps */
	json_t *j = fx_compare();
	json_t *vars = json_object_get(j, "variants");
	fx_sessions(json_array_get(vars, 0), 40000, 1000);
	fx_sessions(json_array_get(vars, 1), 80000, 3000);
	md = render(j, REPORT_FMT_MD, NULL);
	CHECK(has(md, "Sessions: sums over repetitions"), "no sessions table: %s", md);
	CHECK(has(md, "| a | 20 | 19 | 1 | 0 | 0 | 40 | 95.00% | 40.0 ms |"), "a's sessions: %s",
	      md);
	CHECK(has(md, "| b | 20 | 19 | 1 | 0 | 0 | 40 | 95.00% | 80.0 ms |"), "b's sessions: %s",
	      md);
	CHECK(has(md, "| b | account | 20 | 1 | 6.00 ms | 6.00 ms |"), "b's step: %s", md);
	free(md);
}

static void test_conditions_from_facts(void **state)
{
	(void)state;
	json_t *j = fx_run();
	json_object_set_new(j, "interrupted", json_true());
	json_t *plan = json_object_get(j, "plan");
	json_object_set_new(plan, "loop", json_string("closed"));
	json_object_set_new(plan, "url", json_string("http://[::1]:9/"));
	json_t *m = json_object_get(j, "measure");
	json_t *e = json_object_get(m, "errors");
	json_object_set_new(e, "timeout", json_integer(3));
	json_object_set_new(e, "read", json_integer(2));
	json_object_set_new(e, "total", json_integer(5));
	json_object_set_new(json_object_get(m, "requests"), "dropped", json_integer(7));
	json_object_set_new(j, "generator_limited",
			    fx_parse("{\"flagged\":true,\"checks\":[{\"name\":\"loop_lag_p99\","
				     "\"fired\":true,\"value\":1500.0,\"threshold\":1000.0,"
				     "\"unit\":\"us\",\"advice\":\"add --threads\"}]}"));
	json_object_set_new(j, "cost",
			    fx_parse("{\"basis\":\"target CPU\",\"caveat\":\"CPU only.\","
				     "\"profiles\":[{\"name\":\"x\",\"usd_per_core_hour\":0.02,"
				     "\"usd_per_million_requests\":0.000555}]}"));
	char *md = render(j, REPORT_FMT_MD, NULL);
	static const char *const facts[] = {
		"Interrupted: the run was stopped before its planned end",
		"Closed loop: each connection waits for a response",
		"coordinated omission",
		"Loopback: the target was on this machine (::1)",
		/* the fixture is a 1.0 result: its 10 503s count as errors once upgraded */
		"15 requests did not succeed (status 503: 10, read 2, timeout 3): 1.50% of those sent.",
		"A timed-out request is in the latency figures at the moment it was abandoned",
		"7 requests were due but never sent (7 dropped",
		("Generator-limited: the check loop\\_lag\\_p99 fired: 1.50 ms against a limit of "
		 "1.00 ms."),
		"Advice: add --threads.",
		"Cost figures are CPU-only extrapolations",
		"| x | \\$0.02 | \\$0.000555 |", /* Markdown escapes the $ */
		"The run was interrupted before its planned end.",
		"pacer flagged the load generator itself as a possible limit.",
		"A bill: cost figures extrapolate CPU time only.",
		"Latency at a given arrival rate: a closed loop slows down with the target",
	};
	for (size_t i = 0; i < sizeof facts / sizeof facts[0]; i++)
		CHECK(has(md, facts[i]), "missing: %s\n%s", facts[i], md);
	free(md);

	/* a target on another machine: no loopback claim */
	j = fx_run();
	json_object_set_new(json_object_get(j, "plan"), "url",
			    json_string("http://bench-target.example:8080/"));
	md = render(j, REPORT_FMT_MD, NULL);
	CHECK(!has(md, "Loopback"), "a remote target called loopback");
	CHECK(has(md, "over HTTP to bench-target.example"), "no host in the headline");
	free(md);
}

/* The headline of a run whose connections all failed as HTTP/2 says so and
 * why, with no latency and no error rate of nothing sent; an interrupted
 * run's unanswered requests are said beside its error rate (issue 32). */
static void test_headline_failures_and_unanswered(void **state)
{
	(void)state;
	json_t *j = fx_run();
	json_t *m = json_object_get(j, "measure");
	json_object_set_new(
		m, "requests",
		fx_parse("{\"scheduled\":200,\"sent\":0,\"completed\":0,"
			 "\"queued_at_end\":200,\"in_flight_at_end\":0,\"dropped\":0}"));
	json_object_set_new(m, "responses", fx_parse("{\"by_class\":{},\"by_status\":{}}"));
	json_object_set_new(json_object_get(m, "errors"), "protocol", json_integer(9));
	json_object_set_new(
		m, "tls",
		fx_parse("{\"failure_reasons\":[\"bad certificate\",\"the server broke "
			 "HTTP/2 (pacer ended the connection with GOAWAY PROTOCOL_ERROR): "
			 "SETTINGS: invalid\"]}"));
	char *md = render(j, REPORT_FMT_MD, NULL);
	CHECK(has(md,
		  "completed no request at 500 requests/s offered (500 achieved): 9 "
		  "connections failed as HTTP/2 (the server broke HTTP/2 (pacer ended the "
		  "connection with GOAWAY PROTOCOL\\_ERROR): SETTINGS: invalid), and no request "
		  "was sent."),
	      "headline:\n%s", md);
	CHECK(!has(md, "error rate."), "an error rate of nothing sent:\n%s", md);
	CHECK(has(md, "9 connections failed as HTTP/2 (not counted as requests): the server broke"),
	      "no condition of the failed connections:\n%s", md);
	CHECK(has(md, "– (none sent)"), "an error rate in the results table:\n%s", md);
	free(md);

	j = fx_run();
	json_object_set_new(j, "interrupted", json_true());
	m = json_object_get(j, "measure");
	json_t *r = json_object_get(m, "requests");
	json_object_set_new(r, "queued_at_end", json_integer(150));
	json_object_set_new(r, "in_flight_at_end", json_integer(50));
	json_object_set_new(r, "scheduled", json_integer(1150));
	json_object_set_new(r, "sent", json_integer(1050));
	md = render(j, REPORT_FMT_MD, NULL);
	CHECK(has(md,
		  "error rate; when the run was interrupted before its planned end, 200 of the "
		  "1,150 requests due (17.39%) had no answer (in flight, or never sent): each is "
		  "in the latency at its wait until then, a lower bound."),
	      "headline:\n%s", md);
	CHECK(has(md, "50 requests had no complete response at the interrupt."), "%s", md);
	CHECK(!has(md, "The run was interrupted before its planned end."), "said twice:\n%s", md);
	free(md);
}

/* What was sent, in the identity, methodology and meaning sections. */
static const char WL_ROUTES[] =
	"{\"source\":\"embedded_routes\",\"requests\":2,\"order\":\"sequential\",\"sha256\":\"ab12\","
	"\"methods\":[{\"method\":\"GET\",\"requests\":1,\"share_pct\":50.0},"
	"{\"method\":\"POST\",\"requests\":1,\"share_pct\":50.0}],\"other_methods_requests\":0,"
	"\"bodies\":{\"requests\":1,\"bytes_total\":127,\"bytes_min\":127,\"bytes_max\":127},"
	"\"listed\":[{\"method\":\"GET\",\"target\":\"/vast\",\"target_cut\":false,\"body_bytes\":0,"
	"\"name\":null},{\"method\":\"POST\",\"target\":\"/openrtb2/auction\",\"target_cut\":false,"
	"\"body_bytes\":127,\"name\":null}],\"listed_all\":true}";

static const char WL_BODIES[] =
	"{\"source\":\"bodies\",\"requests\":3,\"order\":\"sequential\",\"sha256\":\"cd34\","
	"\"methods\":[{\"method\":\"POST\",\"requests\":3,\"share_pct\":100.0}],"
	"\"other_methods_requests\":0,\"bodies\":{\"requests\":3,\"bytes_total\":28,"
	"\"bytes_min\":7,\"bytes_max\":12},\"listed\":[{\"method\":\"POST\",\"target\":\"/in\","
	"\"body_bytes\":7},{\"method\":\"POST\",\"target\":\"/in\",\"body_bytes\":12},"
	"{\"method\":\"POST\",\"target\":\"/in\",\"body_bytes\":9}],\"listed_all\":true}";

static void test_workload_sentences(void **state)
{
	(void)state;
	/* an older result without plan.workload: as before */
	char *md = render(fx_run(), REPORT_FMT_MD, NULL);
	CHECK(has(md, "| Requests | one request: GET to the target URL, 1 extra header, 0 body bytes |"),
	      "%s", md);
	CHECK(has(md, "It holds for this workload: one GET request to http://127.0.0.1:8080/x."), "%s", md);
	free(md);

	/* the embedded plan's routes: both methods, everywhere */
	json_t *j = fx_run();
	json_t *plan = json_object_get(j, "plan");
	json_object_set_new(plan, "method", json_null());
	json_object_set_new(plan, "body_bytes", json_null());
	json_object_set_new(plan, "workload", fx_parse(WL_ROUTES));
	md = render(j, REPORT_FMT_MD, NULL);
	static const char *const want[] = {
		"| Requests | 2 requests in turn, one per route of the embedded plan: GET /vast, POST "
		"/openrtb2/auction (127-byte body) |",
		"| Methods | GET 1 (50.00%), POST 1 (50.00%) |",
		"| Request 2 | POST /openrtb2/auction (127-byte body) |",
		"| Bodies | 1 of 2 requests: 127-byte body |",
		"| Requests SHA-256 | ab12 |",
		"| Header 1 | X-A: 1 |",
		"- What was sent: 2 requests in turn, one per route of the embedded plan: GET /vast, "
		"POST /openrtb2/auction (127-byte body). Methods: GET 1 (50.00%), POST 1 (50.00%) of "
		"the requests.",
		"- It holds for this workload: 2 requests in turn, one per route of the embedded plan: "
		"GET /vast, POST /openrtb2/auction (127-byte body).",
	};
	for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
		CHECK(has(md, want[i]), "missing: %s\n%s", want[i], md);
	CHECK(!has(md, "one request: GET") && !has(md, "one GET request"), "%s", md);
	free(md);

	/* --bodies: POST, the bodies' sizes; a table run is titled by its table */
	j = fx_run();
	plan = json_object_get(j, "plan");
	json_object_set_new(plan, "method", json_string("POST"));
	json_object_set_new(plan, "body_bytes", json_null());
	json_object_set_new(plan, "workload", fx_parse(WL_BODIES));
	json_object_set_new(plan, "table",
			    fx_parse("{\"source\":\"bodies\",\"format\":\"bodies\",\"requests\":3,"
				     "\"sha256\":\"cd34cd34cd34cd34cd34\",\"order\":\"sequential\","
				     "\"seed\":1,\"hosts\":[{\"host\":\"127.0.0.1\",\"port\":8080,"
				     "\"tls\":false,\"requests\":3},{\"host\":\"b.example\","
				     "\"port\":443,\"tls\":true,\"requests\":0}]}"));
	md = render(j, REPORT_FMT_MD, NULL);
	CHECK(has(md, "# pacer run report: table bodies (SHA-256 cd34cd34cd34, 3 requests, 2 hosts: "
		      "127.0.0.1:8080, https://b.example:443)\n"),
	      "title: %s", md);
	CHECK(has(md, "| Requests | 3 requests to the target URL in turn, one per body file of "
		      "bodies (bodies of 7 B to 12 B, 28 B in all): POST /in (7-byte body), POST /in "
		      "(12-byte body), POST /in (9-byte body) |"),
	      "%s", md);
	CHECK(has(md, "| First request's URL | http://127.0.0.1:8080/x |"), "%s", md);
	CHECK(has(md, "It holds for this workload: 3 requests to http://127.0.0.1:8080/x in turn, "
		      "one per body file of bodies"),
	      "%s", md);
	free(md);

	/* a big named table: methods and names with shares, no list */
	j = fx_run();
	plan = json_object_get(j, "plan");
	json_object_set_new(plan, "method", json_null());
	json_object_set_new(plan, "table",
			    fx_parse("{\"source\":\"mix.jsonl\",\"format\":\"jsonl\",\"requests\":900,"
				     "\"sha256\":\"ee11ee11ee11ee11ee11\",\"order\":\"random\",\"seed\":1,"
				     "\"hosts\":[{\"host\":\"127.0.0.1\",\"port\":8080,\"tls\":false,"
				     "\"requests\":900}]}"));
	json_object_set_new(plan, "workload",
			    fx_parse("{\"source\":\"table\",\"requests\":900,\"order\":\"random\","
				     "\"methods\":[{\"method\":\"GET\",\"requests\":600,\"share_pct\":66.667},"
				     "{\"method\":\"POST\",\"requests\":300,\"share_pct\":33.333}],"
				     "\"names\":[{\"name\":\"rest_id\",\"requests\":600,\"share_pct\":66.667},"
				     "{\"name\":\"create\",\"requests\":300,\"share_pct\":33.333}],"
				     "\"bodies\":{\"requests\":300,\"bytes_total\":30000,\"bytes_min\":90,"
				     "\"bytes_max\":110},\"listed\":[{\"method\":\"GET\",\"target\":\"/i/1\","
				     "\"body_bytes\":0,\"name\":\"rest_id\"}],\"listed_all\":false}"));
	md = render(j, REPORT_FMT_MD, NULL);
	CHECK(has(md, "| Requests | 900 requests of the request table mix.jsonl (SHA-256 "
		      "ee11ee11ee11ee11...) at random: GET 600 (66.67%), POST 300 (33.33%); by name "
		      "rest\\_id 600 (66.67%), create 300 (33.33%); bodies of 90 B to 110 B, 29.3 KiB in "
		      "all |"),
	      "%s", md);
	CHECK(has(md, "| Request names | rest\\_id 600 (66.67%), create 300 (33.33%) |"), "%s", md);
	CHECK(has(md, "| Request 1 | GET /i/1 (rest\\_id) |"), "%s", md);
	CHECK(has(md, "| Other requests | 899 more (only the first 1 listed) |"), "%s", md);
	CHECK(has(md, "# pacer run report: table mix.jsonl (SHA-256 ee11ee11ee11, 900 requests, 1 "
		      "host: 127.0.0.1:8080)"),
	      "%s", md);
	free(md);

	/* one POST with a body */
	j = fx_run();
	plan = json_object_get(j, "plan");
	json_object_set_new(plan, "method", json_string("POST"));
	json_object_set_new(plan, "body_bytes", json_integer(12));
	json_object_set_new(plan, "workload",
			    fx_parse("{\"source\":\"url\",\"requests\":1,\"methods\":[{\"method\":"
				     "\"POST\",\"requests\":1,\"share_pct\":100}],\"bodies\":{"
				     "\"requests\":1,\"bytes_total\":12,\"bytes_min\":12,\"bytes_max\":12},"
				     "\"listed\":[{\"method\":\"POST\",\"target\":\"/x\",\"body_bytes\":12}],"
				     "\"listed_all\":true}"));
	md = render(j, REPORT_FMT_MD, NULL);
	CHECK(has(md, "| Requests | one POST request to the target URL with a 12-byte body |"), "%s",
	      md);
	CHECK(has(md, "It holds for this workload: one POST request to http://127.0.0.1:8080/x with a "
		      "12-byte body."),
	      "%s", md);
	free(md);
}

/* Costs with significant digits; the self-contained CPU statement; the
 * connections of each phase; per-core figures naming their cores. */
static void test_costs_cores_connections(void **state)
{
	(void)state;
	json_t *j = fx_run();
	json_object_set_new(j, "mode", json_string("self_contained"));
	json_object_set_new(j, "target", fx_parse("{\"plan\":\"vast_ortb_mix\",\"threads\":1,"
						  "\"cpu_s\":0.1,\"cpu_ms_per_request\":0.1}"));
	json_object_set_new(j, "target_cores", fx_parse("{\"cores\":1,\"basis\":\"embedded_threads\"}"));
	json_object_set_new(j, "cost",
			    fx_parse("{\"basis\":\"target CPU\",\"caveat\":\"CPU only.\","
				     "\"profiles\":[{\"name\":\"tiny\",\"usd_per_core_hour\":0.02,"
				     "\"usd_per_million_requests\":0.000095},{\"name\":\"big\","
				     "\"usd_per_core_hour\":2.5,\"usd_per_million_requests\":1234.5}]}"));
	json_t *m = json_object_get(j, "measure");
	json_object_set_new(json_object_get(m, "connections"), "open_at_start", json_integer(8));
	json_object_set_new(json_object_get(m, "connections"), "opened", json_integer(0));
	json_t *w = fx_parse(PHASE_500);
	json_object_set_new(w, "duration_s", json_real(1.0));
	json_object_set_new(json_object_get(w, "connections"), "open_at_start", json_integer(0));
	json_object_set_new(j, "warmup", w);
	char *md = render(j, REPORT_FMT_MD, NULL);
	static const char *const want[] = {
		"| tiny | \\$0.02 | \\$0.000095 |",
		"| big | \\$2.50 | \\$1,234.50 |",
		"count only the embedded target's own threads, not the driver's",
		"| Target cores assumed | 1 (the embedded target's threads) |",
		/* the fixture is a 1.0 phase with 10 503s: errors once upgraded */
		"Connections of the measured phase: 8 open when it began, 0 opened during it. The "
		"warm-up before it (1.0 s, not counted) completed 1,000 responses with 10 errors and p99 "
		"20.0 ms; connections: 0 open when it began, 8 opened during it.",
	};
	for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
		CHECK(has(md, want[i]), "missing: %s\n%s", want[i], md);
	CHECK(!has(md, "e-05") && !has(md, "0.0000 ") && !has(md, "includes the driver"), "%s", md);
	free(md);

	/* a ramp whose target's CPU was its limit: per core over the target's
	 * cores, its basis named; warm-ups kept */
	j = fx_ramp();
	json_t *hp = json_object_get(j, "highest_passing");
	json_object_set_new(hp, "per_core_per_s", json_real(500));
	json_object_set_new(hp, "cores", json_integer(1));
	json_object_set_new(hp, "cores_basis", json_string("embedded_threads"));
	json_object_set_new(hp, "cpu_limited", json_true());
	json_t *steps = json_object_get(j, "steps");
	for (size_t i = 0; i < json_array_size(steps); i++) {
		json_t *st = json_array_get(steps, i);
		json_object_set_new(st, "warmup",
				    fx_parse("{\"duration_s\":1.0,\"requests\":{\"scheduled\":250,"
					     "\"sent\":250,\"completed\":249,\"dropped\":0},\"errors\":1,"
					     "\"connections\":{\"open_at_start\":0,\"opened\":8,"
					     "\"closed_by_server\":0},\"achieved_per_s\":249,\"p50_us\":100,"
					     "\"p99_us\":1500,\"max_us\":2000}"));
		json_object_set_new(json_object_get(json_object_get(st, "measure"), "connections"),
				    "open_at_start", json_integer(8));
		json_object_set_new(st, "cost",
				    fx_parse("{\"profiles\":[{\"name\":\"p\",\"usd_per_core_hour\":0.02,"
					     "\"usd_per_million_requests\":0.00055}]}"));
	}
	md = render(json_incref(j), REPORT_FMT_MD, NULL);
	CHECK(has(md, "about 500 per core over 1 core (the embedded target's threads)"), "%s", md);
	CHECK(has(md, "| 1 | 1.0 s | 249 | 1 | 1.50 ms | 0 | 8 | 8 | 8 |"), "warm-up row: %s", md);
	CHECK(has(md, "| \\$0.00055 |"), "ramp cost cell: %s", md);
	free(md);
	char *c = render(json_incref(j), REPORT_FMT_CSV, NULL);
	CHECK(has(c, ",usd_per_million_p\n") && has(c, ",0.00055\n") && !has(c, "e-0"), "%s", c);
	free(c);
	/* the probe's busy cores: said as what it is, efficiency at that load */
	json_object_set_new(hp, "per_core_per_s", json_real(1000));
	json_object_set_new(hp, "cores", json_real(0.5));
	json_object_set_new(hp, "cores_basis", json_string("measured_busy"));
	md = render(json_incref(j), REPORT_FMT_MD, NULL);
	CHECK(has(md, "about 1,000 per busy core (the target kept 0.50 cores busy, as measured)"), "%s",
	      md);
	free(md);
	json_object_set_new(hp, "per_core_per_s", json_real(500));
	json_object_set_new(hp, "cores", json_integer(1));
	/* an older result: the count without a basis */
	json_object_del(hp, "cores_basis");
	md = render(json_incref(j), REPORT_FMT_MD, NULL);
	CHECK(has(md, "about 500 per core over 1 core;") || has(md, "about 500 per core over 1 core."),
	      "%s", md);
	free(md);
	/* the CPU was not the limit, or that was not measured: no figure, and why */
	json_object_set_new(hp, "cpu_limited", json_false());
	md = render(json_incref(j), REPORT_FMT_MD, NULL);
	CHECK(!has(md, "per core over") && has(md, "No per-core figure: the target's CPU was not its "
						   "limit"), "%s", md);
	free(md);
	json_object_set_new(hp, "cpu_limited", json_null());
	md = render(j, REPORT_FMT_MD, NULL);
	CHECK(!has(md, "per core over") && has(md, "No per-core figure: the target's CPU at step 3 "
						   "was not measured"), "%s", md);
	free(md);
}

/* A target_resources with waits for a CPU: by PID (wait_pct, wait_s) or,
 * for a cgroup, its pressure (NAN leaves a pair null). */
static json_t *waits(double busy, double wait_s, double wait_pct, double psi_s, double psi_pct)
{
	json_t *t = fx_parse("{\"source\":\"pid 1\",\"cpu_s\":1.0,\"cpu_ms_per_request\":1.0,"
			     "\"notes\":[]}");
	json_object_set_new(t, "cores_busy", json_real(busy));
	json_object_set_new(t, "cpu_wait_s", isnan(wait_s) ? json_null() : json_real(wait_s));
	json_object_set_new(t, "cpu_wait_pct", isnan(wait_pct) ? json_null() : json_real(wait_pct));
	json_object_set_new(t, "cpu_pressure_some_s",
			    isnan(psi_s) ? json_null() : json_real(psi_s));
	json_object_set_new(t, "cpu_pressure_some_pct",
			    isnan(psi_pct) ? json_null() : json_real(psi_pct));
	return t;
}

/* The target's waits for a CPU: a material share (20 % of its runnable
 * time, and 5 % of the phase in waits) says it was starved by other work
 * on its machine when it left cores idle, that its threads queued for its
 * own cores when it filled them, nothing when not material or not
 * measured; a cgroup's pressure likewise; the ramp's capacity sentence
 * says it of the deciding step. */
static void test_cpu_wait(void **state)
{
	(void)state;
	/* 0.5 s of waits beside 1 s of CPU in a 2 s phase, 0.5 of 4 cores busy */
	json_t *j = fx_run();
	json_object_set_new(j, "target_resources", waits(0.5, 0.5, 33.33, NAN, NAN));
	char *md = render(json_incref(j), REPORT_FMT_MD, NULL);
	char *t = render(json_incref(j), REPORT_FMT_TEXT, NULL);
	static const char *const want[] = {
		"- Starved of CPU by other work on its machine: the target's threads waited for a CPU "
		"for 33.33% of the time they were ready to run (",
		"while it kept 0.50 of the 4 cores it could use busy. Other work had the CPUs it could "
		"use (pacer's own threads among it: the target ran on this machine), so these figures "
		"are those of the target on a busy machine",
		"| Target waits for a CPU | 0.500 s (33.33% of the time its threads were ready to run) |",
	};
	for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
		CHECK(has(md, want[i]), "missing: %s\n%s", want[i], md);
	/* the terminal: the brief form */
	CHECK(has(t,
		  "  - Starved of CPU by other work on its machine: the target waited for a CPU\n"
		  "    33.33% of the time it was ready to run;") &&
		      !has(t, "pacer's own threads among it"),
	      "%s", t);
	free(md);
	free(t);
	/* the target filled its cores: its own threads queued */
	json_object_set_new(j, "target_resources", waits(3.8, 0.5, 33.33, NAN, NAN));
	md = render(json_incref(j), REPORT_FMT_MD, NULL);
	CHECK(has(md, "- CPU wait: the target's threads waited for a CPU for 33.33%") &&
		      has(md, "while it kept 3.80 of the 4 cores it could use busy: its runnable "
			      "threads outnumbered the cores it could use") &&
		      !has(md, "Starved"),
	      "%s", md);
	free(md);
	/* not material: a small share, or a large share of tiny waits (2.5 %
	 * of the phase); not measured: no row either */
	static const double calm[][2] = {{0.5, 19.9}, {0.05, 80}};
	for (size_t i = 0; i < 2; i++) {
		json_object_set_new(j, "target_resources",
				    waits(0.5, calm[i][0], calm[i][1], NAN, NAN));
		md = render(json_incref(j), REPORT_FMT_MD, NULL);
		CHECK(!has(md, "Starved") && !has(md, "CPU wait:") &&
			      has(md, "| Target waits for a CPU |"),
		      "%s", md);
		free(md);
	}
	json_object_set_new(j, "target_resources", waits(0.5, NAN, NAN, NAN, NAN));
	md = render(json_incref(j), REPORT_FMT_MD, NULL);
	CHECK(!has(md, "Starved") && !has(md, "waits for a CPU |") && !has(md, "CPU pressure"),
	      "%s", md);
	free(md);
	/* a cgroup: its pressure, another figure, the same judgement */
	json_object_set_new(j, "target_resources", waits(0.5, NAN, NAN, 0.8, 40));
	md = render(json_incref(j), REPORT_FMT_MD, NULL);
	CHECK(has(md, "- Starved of CPU by other work on its machine: for 40.00% of the measured "
		      "phase at least one of the target cgroup's tasks waited for a CPU") &&
		      has(md,
			  "| Target CPU pressure (cgroup) | 0.800 s with a task waiting for a CPU "
			  "(40.00% of the phase) |"),
	      "%s", md);
	free(md);
	json_object_set_new(j, "target_resources", waits(0.5, NAN, NAN, 0.3, 15));
	md = render(j, REPORT_FMT_MD, NULL);
	CHECK(!has(md, "Starved"), "%s", md);
	free(md);

	/* a ramp: the failing step 3 decides the capacity and was starved */
	j = fx_ramp();
	json_t *steps = json_object_get(j, "steps");
	for (size_t i = 0; i < 3; i++)
		json_object_set_new(json_array_get(steps, i), "target_resources",
				    i == 2 ? waits(0.9, 0.8, 44.44, NAN, NAN)
					   : waits(0.5, 0.02, 2, NAN, NAN));
	md = render(json_incref(j), REPORT_FMT_MD, NULL);
	CHECK(has(md,
		  " At step 3 the target was starved of CPU by other work on its machine (the "
		  "target waited for a CPU 44.44% of the time it was ready to run, while it kept "
		  "0.90 of the 4 cores it could use busy): this is the capacity of the target on "
		  "a busy machine, not on an idle one."),
	      "%s", md);
	CHECK(has(md, "- Step 3 (1,000 requests/s): Starved of CPU by other work on its machine") &&
		      !has(md, "Step 1 (250 requests/s): Starved"),
	      "%s", md);
	CHECK(has(md, "| Target CPU wait |") && has(md, "| 44.44% |") && has(md, "| 2.00% |"), "%s",
	      md);
	free(md);
	/* the highest passing step starved, the failing one not */
	json_object_set_new(json_array_get(steps, 2), "target_resources",
			    waits(0.5, 0.02, 2, NAN, NAN));
	json_object_set_new(json_array_get(steps, 1), "target_resources",
			    waits(0.5, 0.6, 37.5, NAN, NAN));
	md = render(json_incref(j), REPORT_FMT_MD, NULL);
	CHECK(has(md, " At step 2 the target was starved of CPU"), "%s", md);
	free(md);
	/* none starved: no such sentence */
	json_object_set_new(json_array_get(steps, 1), "target_resources",
			    waits(0.5, 0.02, 2, NAN, NAN));
	md = render(j, REPORT_FMT_MD, NULL);
	CHECK(!has(md, "starved") && !has(md, "Starved"), "%s", md);
	free(md);
}

static void test_hostile_strings(void **state)
{
	(void)state;
	json_t *j = fx_run();
	json_t *plan = json_object_get(j, "plan");
	char url[256];
	snprintf(url, sizeof url, "http://127.0.0.1:1/%s", HOSTILE);
	json_object_set_new(plan, "url", json_string(url));
	json_t *hdrs = json_array();
	json_array_append_new(hdrs, json_string(HOSTILE));
	json_object_set_new(plan, "headers", hdrs);
	json_array_append_new(json_object_get(j, "warnings"), json_string(HOSTILE));
	json_t *copy = json_deep_copy(j);
	json_t *copy2 = json_deep_copy(j);

	char *md = render(j, REPORT_FMT_MD, NULL);
	for (const char *p = md; (p = strchr(p, '<')); p++)
		CHECK(p > md && p[-1] == '\\', "unescaped < in Markdown: %.40s", p);
	CHECK(!has(md, "\x1b"), "ESC in Markdown");
	/* every table row has as many unescaped pipes as its header */
	char *save = NULL;
	int want = -1;
	for (char *line = strtok_r(md, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (line[0] != '|') {
			want = -1;
			continue;
		}
		int pipes = 0;
		for (char *p = line; *p; p++)
			if (*p == '|' && (p == line || p[-1] != '\\'))
				pipes++;
		if (want < 0)
			want = pipes;
		CHECK(pipes == want, "row with %d cells, header %d: %s", pipes, want, line);
	}
	free(md);

	char *html = render(copy, REPORT_FMT_HTML, NULL);
	CHECK(!has(html, "<script"), "raw <script in HTML");
	CHECK(has(html, "&lt;script&gt;alert(1)&lt;/script&gt;"), "escaped text missing");
	CHECK(has(html, "default-src 'none'"), "no Content-Security-Policy");
	free(html);

	char *txt = render(copy2, REPORT_FMT_TEXT, NULL);
	CHECK(!has(txt, "\x1b"), "ESC reaches the terminal");
	free(txt);
}

static void test_html_structure(void **state)
{
	(void)state;
	json_t *(*const make[3])(void) = {fx_run, fx_ramp, fx_compare};
	static const char *const charts[3][3] = {{"chart-spectrum", "chart-timeline", NULL},
						 {"chart-latency-vs-load", "chart-spectrum", "chart-timeline"},
						 {"chart-compare-ratios", "chart-compare-latency",
						  "chart-compare-throughput"}};
	for (int k = 0; k < 3; k++) {
		char *html = render(make[k](), REPORT_FMT_HTML, NULL);
		CHECK(strncmp(html, "<!DOCTYPE html>\n<html lang=\"en\">", 32) == 0, "kind %d", k);
		CHECK(has(html, "</html>\n"), "kind %d: not closed", k);
		for (int c = 0; c < 3 && charts[k][c]; c++) {
			char id[80];
			snprintf(id, sizeof id, "<figure class=\"chart\" id=\"%s\">\n<svg ", charts[k][c]);
			const char *at = strstr(html, id);
			CHECK(at, "kind %d: no figure %s", k, charts[k][c]);
			if (!at)
				continue;
			const char *end = strstr(at, "</svg>");
			CHECK(end, "kind %d: %s not closed", k, charts[k][c]);
			/* visible marks: a line, bar or dot inside that svg */
			size_t n = (size_t)(end - at);
			char *fig = strndup(at, n);
			CHECK(has(fig, "<polyline") || has(fig, "<rect x=\"") || has(fig, "<circle"),
			      "kind %d: %s has no marks", k, charts[k][c]);
			free(fig);
		}
		/* balanced elements we open */
		static const char *const tags[] = {"figure", "table", "ul", "svg", "p"};
		for (size_t t = 0; t < sizeof tags / sizeof tags[0]; t++) {
			char open[16], close[16];
			snprintf(open, sizeof open, "<%s", tags[t]);
			snprintf(close, sizeof close, "</%s>", tags[t]);
			size_t no = 0, nc = 0;
			for (const char *p = html; (p = strstr(p, open)); p++)
				if (p[strlen(open)] == ' ' || p[strlen(open)] == '>')
					no++;
			for (const char *p = html; (p = strstr(p, close)); p++)
				nc++;
			CHECK(no == nc, "kind %d: %zu <%s> but %zu closed", k, no, tags[t], nc);
		}
		CHECK(!has(html, "<script") && !has(html, "src=\"http") && !has(html, "href=\"http"),
		      "kind %d: script or external reference", k);
		free(html);
	}
}

/* The figure with id in html, its text up to </svg> (malloc'd), or NULL. */
static char *figure(const char *html, const char *id)
{
	char open[96];
	snprintf(open, sizeof open, "<figure class=\"chart\" id=\"%s\">", id);
	const char *at = strstr(html, open);
	const char *end = at ? strstr(at, "</svg>") : NULL;
	return end ? strndup(at, (size_t)(end - at)) : NULL;
}

/* Issue 30: a comparison whose variants carry measure and series gets the
 * charts a single run has, the variants overlaid with a legend naming
 * each; a comparison written before (no measure, no series) keeps its
 * three bar charts and draws no empty ones. */
static void test_compare_overlays_the_variants(void **state)
{
	(void)state;
	json_t *j = fx_compare();
	json_t *vs = json_object_get(j, "variants");
	for (size_t i = 0; i < 2; i++) {
		json_t *v = json_array_get(vs, i);
		json_t *m = json_object();
		json_object_set_new(m, "duration_s", json_real(2));
		json_object_set_new(m, "latency", fx_timing_at(i ? 2000 : 9000, 100));
		json_object_set_new(v, "measure", m);
		json_t *series = json_array();
		for (int t = 0; t < 2; t++) {
			char pt[256];
			snprintf(pt, sizeof pt,
				 "{\"t_s\":%d,\"completed\":%d,\"errors\":%d,\"p99_us\":%d,"
				 "\"transport_errors\":0,\"by_class\":{\"1xx\":0,\"2xx\":%d,"
				 "\"3xx\":0,\"4xx\":%d,\"5xx\":0}}",
				 t, 50 + 10 * (int)i, i ? 5 : 0, i ? 2500 : 9500, 50 + 5 * (int)i,
				 i ? 5 : 0);
			json_array_append_new(series, fx_parse(pt));
		}
		json_object_set_new(v, "series", series);
	}
	char *html = render(j, REPORT_FMT_HTML, NULL);
	static const char *const ids[] = {"chart-compare-spectrum", "chart-compare-histogram",
					  "chart-compare-timeline", "chart-compare-status"};
	for (size_t k = 0; k < 4; k++) {
		char *fig = figure(html, ids[k]);
		CHECK(fig, "no %s", ids[k]);
		if (!fig)
			continue;
		size_t lines = 0;
		for (const char *p = fig; (p = strstr(p, "<polyline")); p++)
			lines++;
		CHECK(lines >= 2, "%s: %zu lines, want one per variant", ids[k], lines);
		if (k < 3)
			CHECK(has(fig, ">a</text>") && has(fig, ">b</text>"), "%s: legend", ids[k]);
		free(fig);
	}
	/* status: each variant's 2xx above; only b answered 4xx */
	char *st = figure(html, "chart-compare-status");
	CHECK(st && has(st, ">a 2xx/s<") && has(st, ">b 2xx/s<") && has(st, ">b 4xx/s<") &&
		      !has(st, ">a 4xx/s<"),
	      "status legend");
	free(st);
	/* in the page's order: the bar charts, then the overlays */
	const char *prev = html;
	static const char *const order[] = {"chart-compare-ratios",   "chart-compare-throughput",
					    "chart-compare-spectrum", "chart-compare-histogram",
					    "chart-compare-timeline", "chart-compare-status"};
	for (size_t k = 0; k < 6; k++) {
		char open[96];
		snprintf(open, sizeof open, "id=\"%s\"", order[k]);
		const char *at = strstr(html, open);
		CHECK(at && at > prev, "%s out of order", order[k]);
		if (at)
			prev = at;
	}
	free(html);
	html = render(fx_compare(), REPORT_FMT_HTML, NULL);
	for (size_t k = 0; k < 4; k++)
		CHECK(!has(html, ids[k]), "%s drawn without data", ids[k]);
	free(html);
}

static void test_deterministic(void **state)
{
	(void)state;
	json_t *(*const make[3])(void) = {fx_run, fx_ramp, fx_compare};
	for (int k = 0; k < 3; k++)
		for (int fmt = REPORT_FMT_MD; fmt <= REPORT_FMT_HLOG; fmt++) {
			if (k == 2 && fmt >= REPORT_FMT_HGRM)
				continue;
			char *a = render(make[k](), (enum report_format)fmt, NULL);
			char *b = render(make[k](), (enum report_format)fmt, NULL);
			CHECK(strcmp(a, b) == 0, "kind %d format %d differs between renders", k, fmt);
			CHECK(strlen(a) > 50, "kind %d format %d: %zu bytes", k, fmt, strlen(a));
			free(a);
			free(b);
		}
}

static void test_text(void **state)
{
	(void)state;
	char *t = render(fx_ramp(), REPORT_FMT_TEXT, NULL);
	CHECK(strncmp(t, "pacer ramp report: http://127.0.0.1:8080/x\n", 43) == 0, "%s", t);
	/* a ramp's goes from its headline to its steps table (a screen) */
	CHECK(has(t, "\n\n  Step  Offered/s ") && has(t, "\nTest conditions and limits\n"), "%s", t);
	CHECK(!has(t, "\nResults\n") && !has(t, "  Steps\n"), "%s", t);
	CHECK(!has(t, "Identity") && !has(t, "**") && !has(t, "\\"), "not compact plain text");
	/* the result section comes before the conditions */
	CHECK(strstr(t, "  Step  Offered/s ") < strstr(t, "\nTest conditions"), "order");
	for (const char *line = t; *line;) {
		const char *nl = strchr(line, '\n');
		size_t n = nl ? (size_t)(nl - line) : strlen(line);
		size_t cols = 0;
		for (size_t i = 0; i < n; i++)
			if (((unsigned char)line[i] & 0xc0) != 0x80)
				cols++;
		/* prose wraps at 78; tables may be wider */
		if (!strstr(line, "  ") || line[0] != ' ' || line[2] == '-')
			CHECK(cols <= 78 || memchr(line, '%', n), "line of %zu columns: %.*s", cols,
			      (int)n, line);
		line = nl ? nl + 1 : line + n;
	}
	free(t);
}

/* The terminal says each caveat once and briefly; the report keeps them
 * whole: a brief replaces its item in text only, an empty one leaves the
 * item out of text only, and blocks for the report are not in text. */
static void test_text_briefs(void **state)
{
	(void)state;
	struct page d;
	page_init(&d);
	page_heading(&d, 1, "title", "pacer run report: x");
	page_heading(&d, 2, "conditions", "Test conditions and limits");
	page_item_brief(&d, "Short form.", "The long form, with its figures and advice.");
	page_item_brief(&d, "", "Said elsewhere in the terminal.");
	page_item(&d, "Said as it is.");
	page_audience(&d, PAGE_REPORT);
	page_para(&d, false, "Only in the report.");
	page_audience(&d, PAGE_ALL);
	page_item(&d, "After the report's paragraph.");
	CHECK(!d.oom, "oom");
	char *t = NULL, *m = NULL;
	size_t tn = 0, mn = 0;
	FILE *f = open_memstream(&t, &tn);
	CHECK(f && txt_write(f, &d, 0) == 0, "txt_write");
	fclose(f);
	f = open_memstream(&m, &mn);
	CHECK(f && md_write(f, &d, NULL) == 0, "md_write");
	fclose(f);
	CHECK(!strcmp(t, "pacer run report: x\n\nTest conditions and limits\n  - Short form.\n"
			 "  - Said as it is.\n  - After the report's paragraph.\n"),
	      "%s", t);
	CHECK(has(m, "- The long form, with its figures and advice.\n- Said elsewhere in the "
		     "terminal.\n- Said as it is.\n\nOnly in the report.\n\n- After the report's "
		     "paragraph.\n") && !has(m, "Short form"),
	      "%s", m);
	free(t);
	free(m);
	page_free(&d);

	/* a ramp: a note three steps share is one line naming them, the kinds the
	 * steps table says are left out, and a warning a condition says is not
	 * said again; the Markdown keeps every one */
	json_t *j = fx_ramp();
	json_t *w = json_object_get(j, "warnings");
	json_array_append_new(w, json_string("step 2 (500 req/s): generator limited (loop_lag_p99: "
					     "x); a failure there may be pacer's, not the target's"));
	json_array_append_new(w, json_string("a warning no condition says"));
	t = render(json_incref(j), REPORT_FMT_TEXT, NULL);
	m = render(j, REPORT_FMT_MD, NULL);
	CHECK(!has(t, "Responses with a status other than 2xx") &&
		      has(m, "Responses with a status other than 2xx, in steps 1, 2 and 3"),
	      "%s", t);
	CHECK(!has(t, "generator limited (") && !has(t, "share one process") &&
		      has(t, "  - a warning no condition says\n") && !has(t, "Warnings recorded"),
	      "%s", t);
	CHECK(has(m, "### Warnings recorded by pacer") && has(m, "generator limited (loop\\_lag") &&
		      has(m, "share one process"),
	      "%s", m);
	free(t);
	free(m);
}

/* Lines of s, and its widest in columns (UTF-8 characters). */
static size_t text_shape(const char *s, size_t *widest)
{
	size_t lines = 0, cols = 0;
	*widest = 0;
	for (; *s; s++) {
		if (*s == '\n') {
			lines++;
			cols = 0;
		} else if (((unsigned char)*s & 0xc0) != 0x80 && ++cols > *widest) {
			*widest = cols;
		}
	}
	return lines;
}

/* Issue 30: on a terminal (screen_rows) a run's and a ramp's summary fit
 * that many rows less the 2 of the caller's trailer, and 78 columns: the
 * headline, the table (a ramp's without the drop rate and the target's
 * CPU), the verdict, the caveats that fit, each once (the others counted),
 * and what to look at next; the whole text (screen_rows 0) and the report
 * keep every caveat. */
static void test_text_screen(void **state)
{
	(void)state;
	struct report_options o;
	report_options_default(&o);
	for (int kind = 0; kind < 2; kind++) {
		json_t *j = kind ? fx_ramp() : fx_run();
		/* caveats enough to overflow a screen */
		json_t *w = json_object_get(j, "warnings");
		for (int i = 0; i < 12; i++) {
			char msg[96];
			snprintf(msg, sizeof msg,
				 "caveat number %d of the ones pacer recorded here", i);
			json_array_append_new(w, json_string(msg));
		}
		o.screen_rows = 0;
		char *full = render(json_incref(j), REPORT_FMT_TEXT, &o);
		char *md = render(json_incref(j), REPORT_FMT_MD, NULL);
		o.screen_rows = 24;
		char *t = render(json_incref(j), REPORT_FMT_TEXT, &o);
		o.screen_rows = 200;
		char *tall = render(json_incref(j), REPORT_FMT_TEXT, &o);
		json_decref(j);
		size_t widest, lines = text_shape(t, &widest);
		CHECK(lines <= 22 && widest <= 78, "%zu lines, %zu columns:\n%s", lines, widest, t);
		CHECK(has(t, kind ? "pacer ramp report: " : "pacer run report: ") &&
			      has(t, kind ? "\n  Step  Offered/s  Achieved/s "
					  : "\n  Offered/s  Achieved/s ") &&
			      has(t, "\nTest conditions and limits\n") && has(t, "\n  Next: ") &&
			      has(t, " more in the full report.\n"),
		      "%s", t);
		CHECK(!has(t, "Drop rate") && (!kind || has(full, "Drop rate")), "%s", t);
		CHECK(!has(t, "caveat number 11 ") && has(full, "caveat number 11 ") &&
			      has(tall, "caveat number 11 ") &&
			      !has(tall, " more in the full report") &&
			      has(md, "caveat number 11 "),
		      "%s", t);
		/* each caveat once */
		for (const char *a = strstr(t, "\n  - "); a; a = strstr(a + 1, "\n  - ")) {
			const char *e = strchr(a + 1, '\n');
			char line[200];
			snprintf(line, sizeof line, "%.*s", (int)(e - a), a);
			CHECK(strstr(strstr(t, line) + 1, line) == NULL, "said twice: %s", line);
		}
		/* the next step is the screen's, not the whole text's or the report's */
		CHECK(!has(full, "Next: ") && !has(md, "Next: "), "%s", md);
		free(t);
		free(tall);
		free(full);
		free(md);
	}
	/* a comparison (issue 30): its medians and its ratios in a word within
	 * 78 columns, on one screen; the whole text and the report keep the
	 * tables whole and have no screen table */
	o.screen_rows = 24;
	char *t = render(fx_compare(), REPORT_FMT_TEXT, &o);
	char *full = render(fx_compare(), REPORT_FMT_TEXT, NULL);
	char *md = render(fx_compare(), REPORT_FMT_MD, NULL);
	size_t widest, lines = text_shape(t, &widest);
	CHECK(lines <= 22 && widest <= 78, "%zu lines, %zu columns:\n%s", lines, widest, t);
	CHECK(has(t, "\n  Variant   Throughput/s      p50      p99  max  Errors\n") &&
		      has(t, "\n  b        2.000 faster  0.500 faster  0.500 faster  –\n") &&
		      has(t, "\n  Next: ") && !has(t, "median (min–max)"),
	      "%s", t);
	/* no room for one caveat: their number in one line, not a heading
	 * over "- and 4 more" */
	CHECK(has(t, "\n  Test conditions and limits: 4 in the full report.\n") &&
		      !has(t, "limits\n  - and "),
	      "%s", t);
	CHECK(has(full, "median (min–max)") && !has(full, "ratio and verdict") &&
		      !has(full, "Next: "),
	      "%s", full);
	CHECK(!has(md, "ratio and verdict") && !has(md, "Next: ") &&
		      !has(md, "Variants: median over"),
	      "%s", md);
	free(t);
	free(full);
	free(md);
}

/* ---- CSV ------------------------------------------------------------------------------- */

static size_t count_lines(const char *s)
{
	size_t n = 0;
	for (; *s; s++)
		n += *s == '\n';
	return n;
}

static void test_csv(void **state)
{
	(void)state;
	char *c = render(fx_run(), REPORT_FMT_CSV, NULL);
	assert_string_equal(c, "t_s,completed,errors,p50_us,p99_us,connect_refused,connect_reset,"
			       "connect_timeout,connect_other,dropped,unsent\n"
			       "0,600,0,999,1998,,,,,,\n1,400,0,1998,19988,,,,,,\n");
	free(c);
	/* an outage second: its failed connects by cause, dropped and unsent */
	json_t *j = fx_run();
	json_t *pt = json_array_get(json_object_get(j, "series"), 1);
	json_object_set_new(pt, "connect_failures",
			    fx_parse("{\"refused\":4,\"reset\":1,\"timeout\":0,\"other\":2}"));
	json_object_set_new(pt, "dropped", json_integer(3));
	json_object_set_new(pt, "unsent", json_integer(210));
	c = render(j, REPORT_FMT_CSV, NULL);
	CHECK(has(c, "\n1,400,0,1998,19988,4,1,0,2,3,210\n"), "%s", c);
	free(c);
	/* the text report lists that second, and only it */
	j = fx_run();
	pt = json_array_get(json_object_get(j, "series"), 1);
	json_object_set_new(pt, "connect_failures",
			    fx_parse("{\"refused\":4,\"reset\":0,\"timeout\":0,\"other\":0}"));
	json_object_set_new(pt, "dropped", json_integer(0));
	json_object_set_new(pt, "unsent", json_integer(210));
	c = render(j, REPORT_FMT_TEXT, NULL);
	CHECK(has(c, "Seconds with failed connects or unsent requests"), "%s", c);
	CHECK(has(c, "       1        400                4  refused 4                210"
		     "        0\n"),
	      "%s", c);
	free(c);
	/* nothing failed: no such section */
	c = render(fx_run(), REPORT_FMT_TEXT, NULL);
	CHECK(!has(c, "Seconds with failed connects"), "%s", c);
	free(c);
	j = fx_ramp();
	json_t *s2 = json_array_get(json_object_get(j, "steps"), 2);
	json_object_set_new(json_object_get(s2, "verdict"), "reason",
			    json_string("=HYPERLINK(\"x\"), p99"));
	json_t *oc = json_array();
	json_array_append_new(oc, fx_parse("{\"name\":\"fill\",\"rate_pct\":76.5}"));
	json_object_set_new(s2, "outcomes", oc);
	c = render(j, REPORT_FMT_CSV, NULL);
	static const char hdr[] = "step,refine,interrupted,offered_per_s,achieved_per_s,p50_us,p90_us,"
				  "p99_us,p99_9_us,max_us,error_pct,drop_pct,pass,reason,fill_rate_pct\n";
	CHECK(strncmp(c, hdr, strlen(hdr)) == 0, "%s", c);
	assert_int_equal(count_lines(c), 4);
	CHECK(has(c, "\n1,false,false,250,250,999.999,999.999,19988.479,19988.48,19988.48,0,0,true,"
		     "Pass,\n"),
	      "%s", c);
	CHECK(has(c, ",false,\"'=HYPERLINK(\"\"x\"\"), p99\",76.5\n"), "quoting: %s", c);
	free(c);
	c = render(fx_compare(), REPORT_FMT_CSV, NULL);
	assert_int_equal(count_lines(c), 1 + 2 * 3);
	CHECK(has(c, "\nb,a,achieved_per_s,200,200,200,2,1.8,2.2,true,faster\n"), "%s", c);
	CHECK(has(c, "\na,a,p50_us,10,10,10,,,,,\n"), "%s", c);
	free(c);
	/* summary rows: one header for every kind */
	struct report_options o;
	report_options_default(&o);
	o.csv_summary = true;
	static const char sum_hdr[] =
		"variant,repetition,step,offered_per_s,phase,name,duration_s,scheduled,sent,completed,"
		"errors,error_pct,dropped,achieved_per_s,p50_us,p90_us,p99_us,p99_9_us,max_us,mean_us,"
		"pass\n";
	json_t *(*const make[3])(void) = {fx_run, fx_ramp, fx_compare};
	static const size_t rows[3] = {1, 3, 2}; /* measure; a measure row per step; a rep each */
	for (int k = 0; k < 3; k++) {
		c = render(make[k](), REPORT_FMT_CSV, &o);
		CHECK(strncmp(c, sum_hdr, strlen(sum_hdr)) == 0, "kind %d: %s", k, c);
		CHECK(count_lines(c) == 1 + rows[k], "kind %d: %zu lines: %s", k, count_lines(c), c);
		free(c);
	}
	c = render(fx_ramp(), REPORT_FMT_CSV, &o);
	CHECK(has(c, "\n,,3,1000,measure,,"), "%s", c);
	CHECK(has(c, ",true\n") && has(c, ",false\n"), "%s", c);
	free(c);
}

/* Notes the steps of a ramp share are said once, listing the steps; a note
 * of one step keeps its own sentence (issue 18). */
static void test_conditions_folded(void **state)
{
	(void)state;
	json_t *j = fx_ramp();
	json_t *s3 = json_array_get(json_object_get(j, "steps"), 2);
	json_object_set_new(json_object_get(json_object_get(s3, "measure"), "requests"), "late",
			    json_integer(5));
	char *md = render(j, REPORT_FMT_MD, NULL);
	const char *cond = strstr(md, "## Test conditions and limits");
	CHECK(cond, "no conditions");
	if (cond) {
		char *sec = strndup(cond, (size_t)(strstr(cond + 3, "\n## ") - cond));
		/* every step had 10 5xx responses: one statement for the three */
		CHECK(has(sec, "- Responses with a status other than 2xx, in steps 1, 2 and 3 (250, "
			       "500 and 1,000 requests/s): step 1: 10 (5xx 10), 1.00% of responses; "
			       "step 2: 10 (5xx 10), 1.00% of responses; step 3: 10 (5xx 10), 1.00% "
			       "of responses. Every complete response"),
		      "%s", sec);
		CHECK(!has(sec, "Step 1 (250 requests/s): 10 responses had a status"), "%s", sec);
		/* said once, not three times */
		size_t n = 0;
		for (const char *p = sec; (p = strstr(p, "Every complete response")); p++)
			n++;
		CHECK(n == 1, "explanation said %zu times", n);
		/* only step 3 had late responses: its own sentence */
		CHECK(has(sec, "- Step 3 (1,000 requests/s): 5 responses completed after their "
			       "timeout had passed.\n"),
		      "%s", sec);
		free(sec);
	}
	free(md);
}

/* ---- charts: drain seconds apart, status over time, the distribution ------------------ */

static void test_charts_drain_status(void **state)
{
	(void)state;
	json_t *j = fx_run();
	/* two measured seconds and a drain second (the phase lasts 2 s) with 5xx
	 * responses and connection failures */
	json_object_set_new(
		j, "series",
		fx_parse("[{\"t_s\":0,\"completed\":600,\"errors\":0,\"transport_errors\":0,"
			 "\"by_class\":{\"1xx\":0,\"2xx\":600,\"3xx\":0,\"4xx\":0,\"5xx\":0},"
			 "\"p50_us\":999.0,\"p99_us\":1998.0},"
			 "{\"t_s\":1,\"completed\":400,\"errors\":0,\"transport_errors\":0,"
			 "\"by_class\":{\"1xx\":0,\"2xx\":400,\"3xx\":0,\"4xx\":0,\"5xx\":0},"
			 "\"p50_us\":1998.0,\"p99_us\":19988.0},"
			 "{\"t_s\":2,\"completed\":5,\"errors\":5,\"transport_errors\":2,"
			 "\"by_class\":{\"1xx\":0,\"2xx\":0,\"3xx\":0,\"4xx\":0,\"5xx\":3},"
			 "\"p50_us\":5000.0,\"p99_us\":9000.0}]"));
	char *html = render(j, REPORT_FMT_HTML, NULL);
	const char *tl = strstr(html, "id=\"chart-timeline\"");
	const char *st = strstr(html, "id=\"chart-status\"");
	const char *hi = strstr(html, "id=\"chart-histogram\"");
	CHECK(tl && st && hi, "timeline %p, status %p, histogram %p", (void *)tl, (void *)st,
	      (void *)hi);
	if (tl && st && hi) {
		char *tl_svg = strndup(tl, (size_t)(strstr(tl, "</svg>") - tl));
		char *st_svg = strndup(st, (size_t)(strstr(st, "</svg>") - st));
		CHECK(has(tl_svg, "drain (after the schedule)") && has(tl_svg, "p99 in the drain"),
		      "no drain series");
		/* the responses/s line has the two measured seconds only: one
		 * polyline of two points, the drain second drawn apart */
		const char *pl = strstr(tl_svg, "<polyline");
		CHECK(pl, "no line");
		if (pl) {
			const char *pts = strstr(pl, "points=\"");
			const char *q = pts ? strchr(pts + 8, '"') : NULL;
			size_t n = 0;
			for (const char *p = pts; p && q && p < q; p++)
				n += *p == ',';
			CHECK(n == 2, "responses/s line has %zu points", n);
		}
		CHECK(has(st_svg, "2xx/s") && has(st_svg, "5xx/s") &&
			      has(st_svg, "failed on the connection/s"),
		      "status chart series missing");
		CHECK(!has(st_svg, "4xx/s"), "a class without responses is drawn");
		free(tl_svg);
		free(st_svg);
	}
	free(html);
	/* an older result (series without by_class) has no status chart */
	html = render(fx_run(), REPORT_FMT_HTML, NULL);
	CHECK(!has(html, "id=\"chart-status\""), "status chart without data");
	CHECK(has(html, "id=\"chart-histogram\""), "no histogram");
	free(html);
}

/* ---- hgrm ------------------------------------------------------------------------------ */

static void test_hgrm(void **state)
{
	(void)state;
	char *got = render(fx_run(), REPORT_FMT_HGRM, NULL);
	/* the same as hist_write_hgrm of the pairs, with the exact max */
	struct hist h;
	assert_int_equal(hist_init(&h, 11, HIST_MAX_NS), 0);
	const uint64_t pairs[4][2] = {{1000, 1}, {999936, 599}, {1998848, 390}, {19988480, 10}};
	assert_int_equal(hist_from_pairs(&h, pairs, 4), 0);
	h.sum = (long double)999.999e3L * 1000;
	char *want = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&want, &len);
	assert_int_equal(hist_write_hgrm(f, &h, 1e6), 0);
	fclose(f);
	assert_string_equal(got, want);
	CHECK(has(got, "#[Max     =       19.988, Total count    =         1000]"), "%s", got);
	free(want);
	free(got);
	hist_free(&h);

	/* another timing, a ramp step, and the errors */
	struct report_options o;
	report_options_default(&o);
	o.timing = "service_time";
	got = render(fx_run(), REPORT_FMT_HGRM, &o);
	CHECK(has(got, "Total count    =         1000"), "%s", got);
	free(got);
	o.timing = "latency";
	o.step = 1;
	got = render(fx_ramp(), REPORT_FMT_HGRM, &o);
	CHECK(has(got, "Value"), "%s", got);
	free(got);

	struct loaded_result r;
	char err[256];
	int rc;
	assert_int_equal(fx_load(fx_ramp(), &r, err, sizeof err), 0);
	o.step = 4;
	assert_null(fx_render(&r, REPORT_FMT_HGRM, &o, &rc, err, sizeof err));
	assert_int_equal(rc, PACER_EPARSE);
	assert_string_equal(err, "--step 4: the ramp has 3 steps");
	o.step = 0;
	o.timing = "bogus";
	assert_null(fx_render(&r, REPORT_FMT_HGRM, &o, &rc, err, sizeof err));
	CHECK(has(err, "unknown timing 'bogus'"), "'%s'", err);
	result_free(&r);
	assert_int_equal(fx_load(fx_compare(), &r, err, sizeof err), 0);
	assert_null(fx_render(&r, REPORT_FMT_HGRM, NULL, &rc, err, sizeof err));
	assert_int_equal(rc, PACER_EUNSUPPORTED);
	CHECK(has(err, "a compare result carries no histograms"), "'%s'", err);
	assert_null(fx_render(&r, REPORT_FMT_HLOG, NULL, &rc, err, sizeof err));
	assert_int_equal(rc, PACER_EUNSUPPORTED);
	result_free(&r);
	/* a malformed histogram is refused when the result is read, for every
	 * format alike (md, html, text, csv rendered them before), naming it */
	static const struct {
		const char *key, *value, *msg;
	} bad[] = {
		{"counts", "[[5,1],[\"x\",2]]", "measure.latency.hist: histogram counts[1]"},
		{"counts", "[[5,-3]]", "measure.latency.hist: histogram counts[0]"},
		{"sub_bits", "200", "measure.latency.hist: histogram sub_bits"},
		{"counts", "[[4398046511105,1]]", "above max_value"},
		{"unit", "\"parsecs\"", "measure.latency.hist: histogram unit 'parsecs'"},
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		json_t *j = fx_run();
		json_object_set_new(
			json_object_get(json_object_get(json_object_get(j, "measure"), "latency"), "hist"),
			bad[i].key, json_loads(bad[i].value, JSON_DECODE_ANY, NULL));
		assert_int_equal(fx_load(j, &r, err, sizeof err), PACER_EPARSE);
		CHECK(has(err, bad[i].msg), "case %zu: '%s'", i, err);
	}
	/* and one in a series point, deeper down */
	json_t *j = fx_run();
	json_object_set_new(json_object_get(json_array_get(json_object_get(j, "series"), 1), "hist"),
			    "counts", fx_parse("[[1,-1]]"));
	assert_int_equal(fx_load(j, &r, err, sizeof err), PACER_EPARSE);
	CHECK(has(err, "series[1].hist: histogram counts[0]"), "'%s'", err);
}

/* ---- hlog: an independent decoder ----------------------------------------------------------- */

static int b64_val(char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '+')
		return 62;
	if (c == '/')
		return 63;
	return -1;
}

static size_t b64_decode(const char *s, size_t n, unsigned char *out)
{
	size_t o = 0;
	uint32_t acc = 0;
	int bits = 0;
	for (size_t i = 0; i < n && s[i] != '='; i++) {
		int v = b64_val(s[i]);
		CHECK(v >= 0, "bad base64 byte 0x%02x", (unsigned char)s[i]);
		acc = acc << 6 | (uint32_t)v;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			out[o++] = (unsigned char)(acc >> bits);
		}
	}
	return o;
}

static uint32_t be32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static uint64_t be64(const unsigned char *p)
{
	return (uint64_t)be32(p) << 32 | be32(p + 4);
}

/* HdrHistogram's countsArrayIndex for 3 significant digits, lowest 1:
 * subBucketCount 2048, subBucketHalfCountMagnitude 10, unitMagnitude 0. */
static size_t hdr_index(uint64_t v)
{
	int lzc_base = 64 - 0 - 10 - 1;
	int bucket = lzc_base - __builtin_clzll(v | 2047);
	uint64_t sub = v >> bucket;
	return ((size_t)(bucket + 1) << 10) + (size_t)(sub - 1024);
}

struct decoded {
	double start, len, max_ms;
	uint64_t counts[40000];
	size_t n;
	uint64_t total;
};

/* Decode one interval line; returns false on a layout error (reported). */
static bool decode_line(const char *line, struct decoded *d)
{
	memset(d, 0, sizeof *d);
	char *end;
	d->start = strtod(line, &end);
	CHECK(*end == ',', "no start in '%s'", line);
	d->len = strtod(end + 1, &end);
	CHECK(*end == ',', "no length");
	d->max_ms = strtod(end + 1, &end);
	CHECK(*end == ',', "no max");
	const char *b = end + 1;
	size_t bl = strcspn(b, "\n");
	unsigned char *raw = malloc(bl);
	size_t n = b64_decode(b, bl, raw);
	CHECK(n >= 8 && be32(raw) == 0x1c849314u, "compressed cookie %08x", n >= 4 ? be32(raw) : 0);
	uint32_t clen = be32(raw + 4);
	CHECK(clen == n - 8, "compressed length %u of %zu", clen, n - 8);
	uLongf ulen = 1 << 20;
	unsigned char *u = malloc(ulen);
	CHECK(uncompress(u, &ulen, raw + 8, clen) == Z_OK, "zlib");
	free(raw);
	CHECK(ulen >= 40 && be32(u) == 0x1c849313u, "cookie %08x", be32(u));
	/* the base cookie, as readers mask it */
	CHECK((be32(u) & ~0xf0u) == 0x1c849303u, "cookie base");
	uint32_t plen = be32(u + 4);
	CHECK(plen == ulen - 40, "payload length %u of %lu", plen, (unsigned long)(ulen - 40));
	CHECK(be32(u + 8) == 0, "normalizing offset");
	CHECK(be32(u + 12) == 3, "significant digits %u", be32(u + 12));
	CHECK(be64(u + 16) == 1, "lowest");
	CHECK(be64(u + 24) == (1ull << 42), "highest");
	double ratio;
	uint64_t bits = be64(u + 32);
	memcpy(&ratio, &bits, sizeof ratio);
	CHECK(ratio == 1.0, "ratio %g", ratio);
	size_t idx = 0;
	for (size_t p = 40; p < ulen;) {
		uint64_t z = 0;
		int shift = 0, k = 0;
		for (;;) {
			unsigned char c = u[p++];
			if (k == 8) {
				z |= (uint64_t)c << 56;
				break;
			}
			z |= (uint64_t)(c & 0x7f) << shift;
			shift += 7;
			k++;
			if (!(c & 0x80))
				break;
		}
		int64_t v = (int64_t)(z >> 1) ^ -(int64_t)(z & 1);
		if (v < 0) {
			idx += (size_t)-v;
		} else {
			CHECK(idx < 40000, "index %zu", idx);
			d->counts[idx++] = (uint64_t)v;
			d->total += (uint64_t)v;
		}
	}
	d->n = idx;
	free(u);
	return true;
}

static void test_hlog_decodes(void **state)
{
	(void)state;
	char *log = render(fx_run(), REPORT_FMT_HLOG, NULL);
	CHECK(has(log, "#[Histogram log format version 1.3]\n"), "%s", log);
	/* 2026-01-02T03:04:05.678Z is 1767323045.678 */
	CHECK(has(log, "#[StartTime: 1767323045.678 (seconds since epoch), Fri Jan 02 03:04:05 UTC "
		       "2026]\n"),
	      "%s", log);
	CHECK(has(log, "#[BaseTime: 1767323045.678 (seconds since epoch)]\n"), "%s", log);
	CHECK(has(log, "\"StartTimestamp\",\"Interval_Length\",\"Interval_Max\","
		       "\"Interval_Compressed_Histogram\"\n"),
	      "no legend");
	/* the series' sub_bits-7 pairs, per second */
	static const uint64_t pairs[2][2][2] = {{{983040, 300}, {1966080, 300}},
						 {{1966080, 390}, {19922944, 10}}};
	static struct decoded d;
	int seen = 0;
	char *save = NULL;
	for (char *line = strtok_r(log, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (line[0] == '#' || line[0] == '"')
			continue;
		CHECK(seen < 2, "more intervals than seconds");
		if (seen >= 2 || !decode_line(line, &d))
			break;
		CHECK(d.start == seen && d.len == 1.0, "interval %d at %g+%g", seen, d.start, d.len);
		uint64_t want_total = 0;
		uint64_t top = 0;
		for (int k = 0; k < 2; k++) {
			uint64_t v = pairs[seen][k][0], c = pairs[seen][k][1];
			size_t i = hdr_index(v);
			CHECK(d.counts[i] == c, "second %d value %llu: count %llu at index %zu, want %llu",
			      seen, (unsigned long long)v, (unsigned long long)d.counts[i], i,
			      (unsigned long long)c);
			want_total += c;
			top = v;
		}
		CHECK(d.total == want_total, "second %d: total %llu", seen, (unsigned long long)d.total);
		/* encoded up to the highest non-empty index, no further */
		CHECK(d.n == hdr_index(top) + 1, "second %d: %zu counts", seen, d.n);
		/* Interval_Max: the top bucket's highest equivalent value, in ms */
		double max_ms = top >= 16777216 ? (double)(top + 16383) / 1e6 : (double)(top + 1023) / 1e6;
		CHECK(fabs(d.max_ms - max_ms) < 0.0006, "second %d: max %.3f want %.3f", seen, d.max_ms,
		      max_ms);
		seen++;
	}
	assert_int_equal(seen, 2);
	free(log);

	/* without per-second histograms: one interval, the measured phase */
	json_t *j = fx_run();
	json_t *series = json_object_get(j, "series");
	size_t i;
	json_t *pt;
	json_array_foreach(series, i, pt) json_object_del(pt, "hist");
	log = render(j, REPORT_FMT_HLOG, NULL);
	const char *line = strstr(log, "\n0.000,2.000,");
	CHECK(line, "no whole-phase interval: %s", log);
	if (line) {
		assert_true(decode_line(line + 1, &d));
		assert_int_equal(d.total, 1000);
		assert_int_equal(d.counts[hdr_index(1000)], 1);
		assert_int_equal(d.counts[hdr_index(999936)], 599);
	}
	free(log);

	/* a ramp: every step's seconds, one after another */
	log = render(fx_ramp(), REPORT_FMT_HLOG, NULL);
	CHECK(has(log, "#[pacer ramp step 1: 250.000 requests/s offered, from 0.000 s]\n0.000,"), "%s",
	      log);
	CHECK(has(log, "#[pacer ramp step 2: 500.000 requests/s offered, from 2.000 s]\n2.000,"), "%s",
	      log);
	CHECK(has(log, "#[pacer ramp step 3: 1000.000 requests/s offered, from 4.000 s]\n4.000,2.000,"),
	      "%s", log);
	free(log);
}

/* ---- SVG ---------------------------------------------------------------------------------- */

static void test_svg(void **state)
{
	(void)state;
	double x[4] = {0, 0.5, 0.9, 0.99}, y[4] = {1, 2, -3, 4};
	struct svg_series s = {"<lat>", x, y, 4, 0, false, true};
	struct svg_panel p = {.x = {"pct", SVG_INV_PCT, false},
			      .y = {"ms & more", SVG_LOG10, true},
			      .series = &s,
			      .n_series = 1};
	char *svg = svg_line_chart("T \"1\"", &p, 1);
	assert_non_null(svg);
	CHECK(strncmp(svg, "<svg xmlns=\"http://www.w3.org/2000/svg\"", 39) == 0, "%.60s", svg);
	CHECK(has(svg, "<title>T &quot;1&quot;</title>") && has(svg, "&lt;lat&gt;") &&
		      has(svg, "ms &amp; more"),
	      "labels not escaped");
	/* the negative value breaks the line on a log axis: two polylines */
	size_t lines = 0;
	for (const char *q = svg; (q = strstr(q, "<polyline")); q++)
		lines++;
	assert_int_equal(lines, 2);
	CHECK(has(svg, ">99%</text>") && has(svg, ">90%</text>"), "percentile ticks");
	free(svg);
	/* nothing drawable: no chart */
	double bad[2] = {-1, 0};
	struct svg_series s2 = {"x", bad, bad, 2, 0, false, false};
	struct svg_panel p2 = {.x = {"x", SVG_LOG10, false}, .y = {"y", SVG_LOG10, false},
			       .series = &s2, .n_series = 1};
	assert_null(svg_line_chart("none", &p2, 1));
	assert_null(svg_line_chart("none", &p2, 0));
	struct svg_bar bars[2] = {{"g", "a", 1.0, 0.5, 1.5, true}, {"g", "b", 2.0, 0, 0, false}};
	svg = svg_bar_chart("bars", "y", bars, 2, 1.0, "ref", false);
	assert_non_null(svg);
	CHECK(has(svg, "<path d=\"M") && has(svg, "stroke-dasharray=\"8 4\""), "whisker or ref missing");
	free(svg);
	assert_true(svg_wants_log(1, 100));
	assert_false(svg_wants_log(1, 10));
	assert_false(svg_wants_log(0, 10));
}

/* ---- the report folder -------------------------------------------------------------------- */

/* File i of d into a malloc'd string; asserts success. */
static char *dir_file(const struct report_dir *d, size_t i)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_non_null(f);
	char err[512];
	int rc = report_dir_write(d, i, f, err, sizeof err);
	fclose(f);
	CHECK(rc == 0, "%s: rc %d: %s", report_dir_name(d, i), rc, err);
	return buf;
}

/* What a report folder holds, file by file, written to streams handed in
 * (creating the folder and the files is src/cli's: test_report_io). */
static void test_dir_files(void **state)
{
	(void)state;
	struct loaded_result r;
	char err[512];
	assert_int_equal(fx_load(fx_ramp(), &r, err, sizeof err), 0);
	struct report_dir *d;
	assert_int_equal(report_dir_open(&d, &r, err, sizeof err), 0);
	/* the charts first, then the documents, in this order */
	static const char *const tail[] = {"report.md",   "report.html",  "report.txt",
					   "report.csv",  "summary.csv",  "latency.hgrm",
					   "latency.hlog"};
	static const char *const charts[] = {"chart-spectrum.svg", "chart-histogram.svg",
					     "chart-timeline.svg", "chart-latency-vs-load.svg"};
	size_t n = report_dir_count(d), nt = sizeof tail / sizeof tail[0];
	assert_int_equal(n, nt + sizeof charts / sizeof charts[0]);
	for (size_t i = 0; i < nt; i++)
		assert_string_equal(report_dir_name(d, n - nt + i), tail[i]);
	for (size_t k = 0; k < sizeof charts / sizeof charts[0]; k++) {
		bool found = false;
		for (size_t i = 0; i < n - nt; i++)
			found |= !strcmp(report_dir_name(d, i), charts[k]);
		CHECK(found, "%s missing", charts[k]);
	}
	assert_null(report_dir_name(d, n));
	/* each file is what its format renders; the Markdown names the chart files */
	static const enum report_format fmts[] = {REPORT_FMT_MD,  REPORT_FMT_HTML, REPORT_FMT_TEXT,
						  REPORT_FMT_CSV, REPORT_FMT_CSV,  REPORT_FMT_HGRM,
						  REPORT_FMT_HLOG};
	for (size_t i = 0; i < nt; i++) {
		struct report_options o;
		report_options_default(&o);
		if (fmts[i] == REPORT_FMT_MD)
			o.chart_prefix = "";
		o.csv_summary = !strcmp(tail[i], "summary.csv");
		int rc;
		char *want = fx_render(&r, fmts[i], &o, &rc, err, sizeof err);
		CHECK(want, "%s: %s", tail[i], err);
		char *got = dir_file(d, n - nt + i);
		CHECK(!strcmp(got, want), "%s differs from --format %s", tail[i],
		      report_format_name(fmts[i]));
		if (fmts[i] == REPORT_FMT_MD)
			CHECK(has(got, "](chart-latency-vs-load.svg)") && has(got, "](chart-spectrum.svg)"),
			      "no chart references");
		free(got);
		free(want);
	}
	for (size_t i = 0; i < n - nt; i++) {
		char *svg = dir_file(d, i);
		CHECK(!strncmp(svg, "<svg", 4) && has(svg, "</svg>"), "%s is no SVG", report_dir_name(d, i));
		free(svg);
	}
	/* no such file; a stream that fails */
	assert_int_equal(report_dir_write(d, n, stdout, err, sizeof err), -EINVAL);
	FILE *full = fopen("/dev/full", "w");
	if (full) {
		setvbuf(full, NULL, _IONBF, 0);
		CHECK(report_dir_write(d, 0, full, err, sizeof err) < 0, "wrote to /dev/full");
		CHECK(has(err, "cannot write"), "'%s'", err);
		fclose(full);
	}
	report_dir_free(d);
	result_free(&r);
	/* a compare folder has no histogram files */
	assert_int_equal(fx_load(fx_compare(), &r, err, sizeof err), 0);
	assert_int_equal(report_dir_open(&d, &r, err, sizeof err), 0);
	for (size_t i = 0; i < report_dir_count(d); i++)
		CHECK(strncmp(report_dir_name(d, i), "latency.", 8), "compare has %s",
		      report_dir_name(d, i));
	assert_string_equal(report_dir_name(d, report_dir_count(d) - 1), "summary.csv");
	report_dir_free(d);
	result_free(&r);
	report_dir_free(NULL);
	struct loaded_result none = {0};
	assert_int_equal(report_dir_open(&d, &none, err, sizeof err), -EINVAL);
	assert_null(d);
}

static void test_formats(void **state)
{
	(void)state;
	static const char *const names[] = {"md", "html", "text", "csv", "hgrm", "hlog"};
	for (int i = 0; i < 6; i++) {
		enum report_format f;
		assert_int_equal(report_format_parse(names[i], &f), 0);
		assert_int_equal((int)f, i);
		assert_string_equal(report_format_name(f), names[i]);
	}
	enum report_format f;
	assert_int_equal(report_format_parse("pdf", &f), PACER_EPARSE);
	assert_int_equal(report_format_parse(NULL, &f), PACER_EPARSE);
	/* a failing stream is reported, not ignored */
	struct loaded_result r;
	char err[256];
	assert_int_equal(fx_load(fx_run(), &r, err, sizeof err), 0);
	FILE *full = fopen("/dev/full", "w");
	if (full) {
		setvbuf(full, NULL, _IONBF, 0);
		int rc = report_render(&r, REPORT_FMT_MD, full, err, sizeof err);
		CHECK(rc < 0, "rc %d", rc);
		fclose(full);
	}
	result_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_escape_md),
		cmocka_unit_test(test_escape_html),
		cmocka_unit_test(test_numbers),
		cmocka_unit_test(test_md_sections_and_facts),
		cmocka_unit_test(test_pacing_sentence),
		cmocka_unit_test(test_conditions_from_facts),
		cmocka_unit_test(test_headline_failures_and_unanswered),
		cmocka_unit_test(test_workload_sentences),
		cmocka_unit_test(test_costs_cores_connections),
		cmocka_unit_test(test_cpu_wait),
		cmocka_unit_test(test_hostile_strings),
		cmocka_unit_test(test_html_structure),
		cmocka_unit_test(test_compare_overlays_the_variants),
		cmocka_unit_test(test_deterministic),
		cmocka_unit_test(test_text),
		cmocka_unit_test(test_text_briefs),
		cmocka_unit_test(test_text_screen),
		cmocka_unit_test(test_csv),
		cmocka_unit_test(test_charts_drain_status),
		cmocka_unit_test(test_conditions_folded),
		cmocka_unit_test(test_hgrm),
		cmocka_unit_test(test_hlog_decodes),
		cmocka_unit_test(test_svg),
		cmocka_unit_test(test_dir_files),
		cmocka_unit_test(test_formats),
	};
	return cmocka_run_group_tests_name("report/render", tests, NULL, NULL);
}
