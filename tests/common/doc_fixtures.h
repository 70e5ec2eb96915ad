/* Shared by the unit tests of doc/, report/, history/ and cli/report_io:
 * small but complete results of each kind (as pacer writes them, trimmed),
 * and helpers to edit, load and render them. */
#ifndef PACER_TEST_COMMON_DOC_FIXTURES_H
#define PACER_TEST_COMMON_DOC_FIXTURES_H

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/render.h"
#include "doc/read.h"

#define TIMING(count, p50, p99, max, pairs)                                                    \
	"{\"count\":" #count ",\"min_us\":1.0,\"mean_us\":" #p50 ",\"stddev_us\":1.0,"            \
	"\"p50_us\":" #p50 ",\"p90_us\":" #p50 ",\"p99_us\":" #p99 ",\"p99_9_us\":" #max          \
	",\"p99_99_us\":" #max ",\"max_us\":" #max ",\"hist\":{\"unit\":\"ns\",\"sub_bits\":11,"   \
	"\"max_value\":4398046511104,\"counts\":" pairs "}}"

#define EMPTY_TIMING TIMING(0, 0, 0, 0, "[]")

/* 1,000 latencies: 600 at 1 ms, 390 at 2 ms, 10 at 20 ms (max exactly 20 ms). */
#define LAT_PAIRS "[[1000,1],[999936,599],[1998848,390],[19988480,10]]"

#define PHASE(offered, dur)                                                                    \
	"{\"duration_s\":" #dur ",\"requests\":{\"scheduled\":1000,\"sent\":1000,"               \
	"\"completed\":1000,\"queued_at_end\":0,\"in_flight_at_end\":0,\"dropped\":0,"           \
	"\"late\":0},\"responses\":{\"by_class\":{\"1xx\":0,\"2xx\":990,\"3xx\":0,\"4xx\":0,"    \
	"\"5xx\":10},\"by_status\":{\"503\":10,\"200\":990}},\"errors\":{\"connect\":0,"         \
	"\"read\":0,\"write\":0,\"timeout\":0,\"parse\":0,\"closed\":0,\"total\":0},"           \
	"\"connections\":{\"opened\":8,\"closed_by_server\":0},\"bytes\":{\"in\":1000,"          \
	"\"out\":1000},\"rate\":{\"offered_per_s\":" #offered ",\"achieved_per_s\":500.0},"     \
	"\"latency\":" TIMING(1000, 999.999, 19988.479, 19988.48, LAT_PAIRS)                   \
	",\"service_time\":" TIMING(1000, 900.0, 19000.0, 19988.48, LAT_PAIRS)                 \
	",\"ttfb\":" EMPTY_TIMING ",\"connect_time\":" EMPTY_TIMING ",\"send_lag\":"            \
	EMPTY_TIMING ",\"loop_lag\":" EMPTY_TIMING "}"

#define HEAD(kind, mode)                                                                       \
	"\"schema_version\":\"1.0\",\"kind\":\"" kind "\",\"pacer\":{\"version\":\"0.1.0\","      \
	"\"commit\":\"abc\"},\"mode\":\"" mode "\",\"started_at\":\"2026-01-02T03:04:05.678Z\","   \
	"\"interrupted\":false,\"environment\":{\"hostname\":\"h\",\"os\":\"Linux\","            \
	"\"kernel\":\"6.1\",\"arch\":\"x86_64\",\"cpu_model\":\"Test CPU\",\"cores\":4}"

#define PLAN_FIELDS(loop, rate)                                                                \
	"\"url\":\"http://127.0.0.1:8080/x\",\"method\":\"GET\",\"loop\":\"" loop "\","           \
	"\"rate_per_s\":" #rate ",\"arrival\":\"constant\",\"seed\":7,\"duration_s\":2.0,"       \
	"\"warmup_s\":0.0,\"connections\":8,\"concurrency\":10,\"requests\":null,\"threads\":1,"  \
	"\"timeout_ms\":10000.0,\"drain_ms\":10000.0,\"spin_us\":100.0,\"repeat\":1,"             \
	"\"table\":null,\"headers\":[\"X-A: 1\"],\"body_bytes\":0,\"argv\":[\"run\",\"x\"]"

/* Per-second points with sub_bits-7 histograms (values are sub_bits-7 bucket lows). */
#define SERIES                                                                                 \
	"[{\"t_s\":0,\"completed\":600,\"errors\":0,\"p50_us\":999.0,\"p99_us\":1998.0,"          \
	"\"hist\":{\"unit\":\"ns\",\"sub_bits\":7,\"counts\":[[983040,300],[1966080,300]]}},"     \
	"{\"t_s\":1,\"completed\":400,\"errors\":0,\"p50_us\":1998.0,\"p99_us\":19988.0,"        \
	"\"hist\":{\"unit\":\"ns\",\"sub_bits\":7,\"counts\":[[1966080,390],[19922944,10]]}}]"

static const char RUN_HEAD[] =
	"{" HEAD("run", "live") ",\"plan\":{" PLAN_FIELDS("open", 500.0) "},"
	"\"generator\":{\"threads\":1,\"cpu_s\":0.5,\"cpu_us_per_response\":500.0},"
	"\"series\":" SERIES ",\"warnings\":[]}";

static const char PHASE_500[] = PHASE(500.0, 2.0);

static const char RAMP_HEAD[] =
	"{" HEAD("ramp", "self_contained") ",\"plan\":{" PLAN_FIELDS("open", 250.0)
	",\"steps_per_s\":[250.0,500.0,1000.0],\"step_duration_s\":2.0,\"step_warmup_s\":1.0,"
	"\"slo\":\"p99<10ms,errors<1%\",\"after_fail\":0,\"refine\":false,\"precision\":0.05,"
	"\"require_per_s\":null},"
	"\"target\":{\"plan\":\"hello\",\"threads\":1,\"shares_process_with_driver\":true},"
	"\"steps\":[],\"highest_passing\":{\"step\":2,\"offered_per_s\":500.0,\"achieved_per_s\":500.0,"
	"\"per_core_per_s\":125.0,\"cores\":4},\"knee_per_s\":null,\"reached_require\":false,"
	"\"warnings\":[\"self-contained: driver and target share one process\"]}";

static const char RAMP_STEP[] =
	"{\"offered_per_s\":250.0,\"achieved_per_s\":250.0,\"refine\":false,\"interrupted\":false,"
	"\"error_pct\":0.0,\"drop_pct\":0.0,\"verdict\":{\"pass\":true,\"reason\":\"Pass\"},"
	"\"series\":" SERIES "}";

static const char COMPARE_HEAD[] =
	"{" HEAD("compare", "self_contained") ",\"plan\":{\"url\":null,\"method\":\"GET\","
	"\"loop\":\"closed\",\"rate_per_s\":null,\"concurrency\":10,\"repeat\":3,"
	"\"order\":\"rotating\",\"noise_pct\":2.0,\"ramp\":null,\"argv\":[\"compare\"]},"
	"\"sequence\":[\"a\",\"b\",\"b\",\"a\",\"a\",\"b\"],\"variants\":[],"
	"\"ratios\":[{\"metric\":\"throughput\",\"variant\":\"b\",\"baseline\":\"a\",\"ratio\":2.0,"
	"\"ci95_low\":1.8,\"ci95_high\":2.2,\"significant\":true,\"verdict\":\"faster\"},"
	"{\"metric\":\"p50\",\"variant\":\"b\",\"baseline\":\"a\",\"ratio\":0.5,\"ci95_low\":0.4,"
	"\"ci95_high\":0.6,\"significant\":true,\"verdict\":\"faster\"},"
	"{\"metric\":\"p99\",\"variant\":\"b\",\"baseline\":\"a\",\"ratio\":0.5,\"ci95_low\":0.45,"
	"\"ci95_high\":0.55,\"significant\":true,\"verdict\":\"faster\"}],"
	"\"warnings\":[]}";

#define VARIANT(name, port, rate, p50, p99)                                                     \
	"{\"name\":\"" name "\",\"target\":\"@hello\",\"url\":\"http://127.0.0.1:" #port "/\","   \
	"\"mode\":\"self_contained\",\"repetitions\":[{\"achieved_per_s\":" #rate ","              \
	"\"p50_us\":" #p50 ",\"p90_us\":" #p50 ",\"p99_us\":" #p99 ",\"p99_9_us\":" #p99 ","      \
	"\"max_us\":" #p99 ",\"completed\":100,\"errors\":0}],\"summary\":{\"achieved_per_s\":"    \
	"{\"median\":" #rate ",\"min\":" #rate ",\"max\":" #rate "},\"p50_us\":{\"median\":" #p50  \
	",\"min\":" #p50 ",\"max\":" #p50 "},\"p99_us\":{\"median\":" #p99 ",\"min\":" #p99        \
	",\"max\":" #p99 "}}}"

static const char VARIANT_A[] = VARIANT("a", 1, 100.0, 10.0, 30.0);
static const char VARIANT_B[] = VARIANT("b", 2, 200.0, 5.0, 15.0);

/* Parse a fixture for editing (aborts the test on a fixture bug). */
static json_t *fx_parse(const char *text);

/* A run: the measured phase of PHASE_500. */
static __attribute__((unused)) json_t *fx_run(void)
{
	json_t *j = fx_parse(RUN_HEAD);
	json_object_set_new(j, "measure", fx_parse(PHASE_500));
	return j;
}

/* A ramp of three steps (250, 500 pass; 1000 fails p99 > 10ms), self-contained. */
static __attribute__((unused)) json_t *fx_ramp(void)
{
	json_t *j = fx_parse(RAMP_HEAD);
	json_t *steps = json_object_get(j, "steps");
	static const double offered[3] = {250, 500, 1000};
	for (int i = 0; i < 3; i++) {
		json_t *s = fx_parse(RAMP_STEP);
		json_object_set_new(s, "offered_per_s", json_real(offered[i]));
		json_object_set_new(s, "measure", fx_parse(PHASE_500));
		if (i == 2) {
			json_object_set_new(s, "achieved_per_s", json_real(700));
			json_object_set_new(s, "verdict",
					    fx_parse("{\"pass\":false,\"reason\":\"Fail p99 20.0ms > 10ms\"}"));
			json_object_set_new(s, "series", json_array());
		}
		json_array_append_new(steps, s);
	}
	return j;
}

/* A closed-loop comparison of two self-contained variants. */
static __attribute__((unused)) json_t *fx_compare(void)
{
	json_t *j = fx_parse(COMPARE_HEAD);
	json_array_append_new(json_object_get(j, "variants"), fx_parse(VARIANT_A));
	json_array_append_new(json_object_get(j, "variants"), fx_parse(VARIANT_B));
	return j;
}

/* A histogram object of n values at v_ns, as pacer writes one (sub_bits 7). */
static __attribute__((unused)) json_t *fx_hist_at(double v_ns, int n)
{
	json_t *h = fx_parse("{\"unit\":\"ns\",\"sub_bits\":7,\"max_value\":4398046511104}");
	json_t *pair = json_array();
	json_array_append_new(pair, json_integer((json_int_t)v_ns));
	json_array_append_new(pair, json_integer(n));
	json_t *counts = json_array();
	json_array_append_new(counts, pair);
	json_object_set_new(h, "counts", counts);
	return h;
}

/* A timing object of n values all at v_us (its percentiles v_us). */
static __attribute__((unused)) json_t *fx_timing_at(double v_us, int n)
{
	json_t *t = json_object();
	json_object_set_new(t, "count", json_integer(n));
	static const char *const keys[] = {"p50_us",   "p90_us", "p99_us",
					   "p99_9_us", "max_us", "mean_us"};
	for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
		json_object_set_new(t, keys[i], json_real(v_us));
	json_object_set_new(t, "sub_bits", json_integer(7));
	json_object_set_new(t, "hist", fx_hist_at(v_us * 1e3, n));
	return t;
}

/* Sessions in phase (a measured phase or a compare variant), as a session
 * run has them: 20 started, 19 completed, 1 failed; durations all at
 * dur_us; the steps "login" at step_us and "account" at 2 * step_us in
 * by_name (replacing what was there), 20 requests each. */
static __attribute__((unused)) void fx_sessions(json_t *phase, double dur_us, double step_us)
{
	json_t *ss = fx_parse("{\"started\":20,\"completed\":19,\"failed\":1,\"abandoned\":0,"
			      "\"dropped\":0,\"steps\":40,\"completed_pct\":95.0}");
	json_object_set_new(ss, "duration", fx_timing_at(dur_us, 20));
	json_object_set_new(phase, "sessions", ss);
	json_t *by = json_array();
	static const char *const names[] = {"login", "account"};
	for (int i = 0; i < 2; i++) {
		json_t *e = json_object();
		json_object_set_new(e, "name", json_string(names[i]));
		json_object_set_new(e, "sent", json_integer(20));
		json_object_set_new(e, "completed", json_integer(20));
		json_object_set_new(e, "errors", json_integer(i));
		json_object_set_new(e, "latency", fx_timing_at(step_us * (i + 1), 20));
		json_array_append_new(by, e);
	}
	json_object_set_new(phase, "by_name", by);
}

/* Parse a fixture for editing (aborts the test on a fixture bug). */
static json_t *fx_parse(const char *text)
{
	json_error_t e;
	json_t *j = json_loads(text, 0, &e);
	if (!j) {
		fprintf(stderr, "fixture: line %d: %s\n", e.line, e.text);
		abort();
	}
	return j;
}

/* Load edited JSON (taking the reference) as a result. Returns the code. */
static __attribute__((unused)) int fx_load(json_t *j, struct loaded_result *r, char *err, size_t errlen)
{
	char *text = json_dumps(j, JSON_COMPACT);
	json_decref(j);
	if (!text)
		abort();
	int rc = result_read_mem(r, text, strlen(text), "fixture.json", err, errlen);
	free(text);
	return rc;
}

/* The fixture as compact JSON text (malloc'd), taking the reference. */
static __attribute__((unused)) char *fx_text(json_t *j)
{
	char *t = json_dumps(j, JSON_COMPACT);
	json_decref(j);
	if (!t)
		abort();
	return t;
}

/* Load a fixture text as it is. */
static __attribute__((unused)) int fx_load_text(const char *text, struct loaded_result *r, char *err, size_t errlen)
{
	return result_read_mem(r, text, strlen(text), "fixture.json", err, errlen);
}

/* Render into a malloc'd string (NULL on a render error; *rc gets the code). */
static __attribute__((unused)) char *fx_render(const struct loaded_result *r, enum report_format fmt,
		       const struct report_options *o, int *rc, char *err, size_t errlen)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (!f)
		abort();
	*rc = report_render_opts(r, fmt, o, f, err, errlen);
	fclose(f);
	if (*rc) {
		free(buf);
		return NULL;
	}
	return buf;
}

#endif
