/* Unit tests: the workload and the target's cores as the result writers put
 * them (doc/workload.c, doc/ramp.c): plan.workload in
 * the JSON, method/body_bytes as sent (null when mixed), the terminal name
 * of a table run and its requests line, and which cores a ramp's per-core
 * figure divides by. */
#include <jansson.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "plan/workload.h"
#include "doc/json_parts.h"
#include "doc/ramp.h"
#include "doc/workload.h"
#include "table/table.h"

/* The plan fields of p as a JSON object (owned by the caller). */
static json_t *plan_json(const struct run_plan *p)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_non_null(f);
	struct jsonw j;
	jw_init(&j, f, 0);
	jw_obj(&j);
	rj_plan_fields(&j, p);
	jw_obj_end(&j);
	fclose(f);
	json_error_t e;
	json_t *o = json_loads(buf, 0, &e);
	if (!o)
		fail_msg("not JSON: %s: %s", e.text, buf);
	free(buf);
	return o;
}

static void add(struct plan_workload *w, const char *m, const char *t, uint64_t body)
{
	plan_workload_add(w, m, t, strlen(t), body, NULL);
}

static void test_plan_json(void **state)
{
	(void)state;
	struct run_plan p;
	plan_defaults(&p);
	p.url_str = "http://127.0.0.1:1/";
	/* no workload (a compare's shared plan): --method as given */
	json_t *o = plan_json(&p);
	assert_string_equal(json_string_value(json_object_get(o, "method")), "GET");
	assert_true(json_is_null(json_object_get(o, "workload")));
	json_decref(o);

	/* the embedded routes: mixed methods and bodies are null, listed in workload */
	struct plan_workload w;
	plan_workload_init(&w, "embedded_routes");
	add(&w, "GET", "/vast", 0);
	add(&w, "POST", "/openrtb2/auction", 127);
	memcpy(w.sha256, "00ff", 5);
	plan_workload_finish(&w);
	p.workload = &w;
	o = plan_json(&p);
	assert_true(json_is_null(json_object_get(o, "method")));
	assert_true(json_is_null(json_object_get(o, "body_bytes")));
	json_t *wl = json_object_get(o, "workload");
	assert_string_equal(json_string_value(json_object_get(wl, "source")), "embedded_routes");
	assert_int_equal(json_integer_value(json_object_get(wl, "requests")), 2);
	json_t *ms = json_object_get(wl, "methods");
	assert_int_equal(json_array_size(ms), 2);
	assert_string_equal(json_string_value(json_object_get(json_array_get(ms, 1), "method")), "POST");
	assert_true(json_real_value(json_object_get(json_array_get(ms, 1), "share_pct")) == 50.0);
	assert_int_equal(json_integer_value(json_object_get(json_object_get(wl, "bodies"), "bytes_total")),
			 127);
	assert_true(json_is_true(json_object_get(wl, "listed_all")));
	assert_string_equal(json_string_value(json_object_get(wl, "sha256")), "00ff");
	json_decref(o);

	/* --bodies: POST, one size */
	plan_workload_init(&w, "bodies");
	add(&w, "POST", "/in", 5);
	add(&w, "POST", "/in", 5);
	plan_workload_finish(&w);
	o = plan_json(&p);
	assert_string_equal(json_string_value(json_object_get(o, "method")), "POST");
	assert_int_equal(json_integer_value(json_object_get(o, "body_bytes")), 5);
	assert_true(json_is_null(json_object_get(json_object_get(o, "workload"), "sha256")));
	json_decref(o);
}

static char *capture_text(const struct run_plan *p)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_non_null(f);
	report_text_workload(f, p);
	fclose(f);
	return buf;
}

static void test_terminal(void **state)
{
	(void)state;
	struct run_plan p;
	plan_defaults(&p);
	p.url_str = "http://127.0.0.1:1/a";
	char name[512];
	assert_string_equal(report_run_name(name, sizeof name, &p), "http://127.0.0.1:1/a");
	struct table_host hosts[2] = {{.name = "127.0.0.1", .port = 1, .n_reqs = 2},
				      {.name = "api.example", .port = 443, .tls = true, .n_reqs = 1}};
	p.table_source = "api.jsonl";
	p.table_sha256 = "0123456789abcdef0123";
	p.table_requests = 3;
	p.table_hosts = hosts;
	p.table_n_hosts = 2;
	assert_string_equal(report_run_name(name, sizeof name, &p),
			    "table api.jsonl (sha256 0123456789ab, 3 requests, 2 hosts: 127.0.0.1:1, "
			    "https://api.example:443)");
	p.table_n_hosts = 1;
	assert_string_equal(report_run_name(name, sizeof name, &p),
			    "table api.jsonl (sha256 0123456789ab, 3 requests, host 127.0.0.1:1)");
	/* a small buffer is cut, not overrun */
	char small[20];
	report_run_name(small, sizeof small, &p);
	assert_int_equal(strlen(small), sizeof small - 1);

	struct plan_workload w;
	plan_workload_init(&w, "table");
	add(&w, "GET", "/a", 0);
	add(&w, "POST", "/b", 7);
	add(&w, "GET", "/c?x=1", 0);
	plan_workload_finish(&w);
	p.workload = &w;
	char *t = capture_text(&p);
	assert_string_equal(t, "  requests   3 distinct from the table, in turn: GET 2 (66.7 %), POST 1 "
			       "(33.3 %)\n"
			       "             GET /a\n"
			       "             POST /b, body 7 B\n"
			       "             GET /c?x=1\n");
	free(t);
	plan_workload_init(&w, "url");
	add(&w, "POST", "/x", 2048);
	t = capture_text(&p);
	assert_string_equal(t, "  request    POST /x, body 2.0 KiB\n");
	free(t);
}

static void test_per_core(void **state)
{
	(void)state;
	struct ramp_report rr;
	memset(&rr, 0, sizeof rr);
	struct ramp_step s;
	memset(&s, 0, sizeof s);
	double cores = 0;
	const char *basis = NULL;
	/* the embedded target's one thread, not the machine's cores */
	rr.ctx.target_cores = 1;
	rr.ctx.target_cores_basis = "embedded_threads";
	assert_true(ramp_per_core_cores(&rr, &s, &cores, &basis));
	assert_true(cores == 1);
	assert_string_equal(basis, "embedded_threads");
	/* the machine is no basis: the probe's busy cores are, when measured */
	rr.ctx.target_cores = 8;
	rr.ctx.target_cores_basis = "machine";
	assert_false(ramp_per_core_cores(&rr, &s, &cores, &basis));
	s.run.target.known = true;
	s.run.target.cores_busy = 0.54;
	assert_true(ramp_per_core_cores(&rr, &s, &cores, &basis));
	assert_true(cores == 0.54);
	assert_string_equal(basis, "measured_busy");
	/* a quota wins over what was busy */
	rr.ctx.target_cores = 1.5;
	rr.ctx.target_cores_basis = "cgroup_cpu_max";
	assert_true(ramp_per_core_cores(&rr, &s, &cores, &basis));
	assert_true(cores == 1.5);
	assert_string_equal(basis, "cgroup_cpu_max");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plan_json),
		cmocka_unit_test(test_terminal),
		cmocka_unit_test(test_per_core),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
