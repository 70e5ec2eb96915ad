/* Per-name figures in reports: the arithmetic of report_name_figures
 * (errors = failed responses + transport errors, error_pct over the requests
 * that ended; one name = the phase's own figures), the "by_name" JSON as
 * rj_by_name writes it (read back with jansson), the --by-name terminal
 * table, and the "By request name" table of the Markdown/text reports (only
 * with more than one name; the pooled entry said so). */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "common/doc_fixtures.h"
#include "plan/inspect.h"
#include "doc/names.h"
#include "report/render.h"
#include "result/names.h"

/* Three names, the last one the pooled "other" of 7 names. */
static void three_names(struct req_names *rn, struct phase_stats *p)
{
	memset(rn, 0, sizeof *rn);
	rn->n = 3;
	rn->other = true;
	rn->pooled = 7;
	rn->name[0] = strdup("GET /a");
	rn->name[1] = strdup("POST /b");
	rn->name[2] = strdup(REQ_NAMES_OTHER);
	assert_int_equal(phase_stats_init(p), 0);
	assert_int_equal(phase_stats_init_names(p, 3), 0);
	/* GET /a: 100 sent, 98 completed (90 ok), 2 timeouts */
	p->name[0] = (struct name_stats){.completed = 98, .ok = 90, .errors = 2,
					 .latency = p->name[0].latency};
	for (int i = 0; i < 100; i++)
		hist_record(&p->name[0].latency, i < 50 ? 1000000 : 3000000);
	/* POST /b: all fine */
	p->name[1] = (struct name_stats){.completed = 10, .ok = 10,
					 .latency = p->name[1].latency};
	for (int i = 0; i < 10; i++)
		hist_record(&p->name[1].latency, 500000);
	/* other: one sent, nothing ended yet */
	p->name[2].in_flight_at_end = 1;
}

static void test_figures(void **state)
{
	(void)state;
	struct req_names rn;
	struct phase_stats p;
	three_names(&rn, &p);
	assert_int_equal(report_name_count(&p, &rn), 3);
	struct name_figures f;
	report_name_figures(&p, &rn, 0, &f);
	assert_string_equal(f.name, "GET /a");
	assert_false(f.other);
	assert_int_equal(f.sent, 100); /* completed + transport errors + in flight */
	assert_int_equal(f.failed, 8);
	assert_int_equal(f.transport_errors, 2);
	assert_int_equal(f.errors, 10);
	assert_true(fabs(f.error_pct - 10.0) < 1e-9); /* 10 of 100 ended */
	assert_int_equal(f.latency->total, 100);
	report_name_figures(&p, &rn, 2, &f);
	assert_true(f.other);
	assert_int_equal(f.pooled, 7);
	assert_int_equal(f.sent, 1);
	assert_int_equal(f.errors, 0);
	assert_true(f.error_pct == 0);

	/* names that do not match the phase: no entries */
	rn.n = 2;
	assert_int_equal(report_name_count(&p, &rn), 0);
	/* but a script's sessions count in room for every name they may meet
	 * (more than they met): the names met are the entries */
	p.sessions.on = true;
	assert_int_equal(report_name_count(&p, &rn), 2);
	rn.n = 4;
	assert_int_equal(report_name_count(&p, &rn), 0);
	p.sessions.on = false;
	rn.n = 3;
	assert_int_equal(report_name_count(&p, NULL), 0);
	phase_stats_free(&p);
	req_names_free(&rn);
}

/* One name: the entry is the phase itself, the default success rule or
 * --success deciding ok. */
static void test_one_name(void **state)
{
	(void)state;
	struct req_names rn = {.n = 1};
	rn.name[0] = strdup("GET /");
	struct phase_stats p;
	assert_int_equal(phase_stats_init(&p), 0);
	p.sent = 50;
	p.completed = 47;
	p.status[200] = 40;
	p.status[302] = 2;
	p.status[503] = 5;
	p.errors[ERRK_TIMEOUT] = 1;
	p.errors[ERRK_CONNECT] = 4; /* per connection: not a request's */
	p.success_ok = 42; /* the default rule: the 200s and 302s (the engine counts it) */
	for (int i = 0; i < 48; i++)
		hist_record(&p.timing[TIM_LATENCY], 2000);
	assert_int_equal(report_name_count(&p, &rn), 1);
	struct name_figures f;
	report_name_figures(&p, &rn, 0, &f);
	assert_int_equal(f.sent, 50);
	assert_int_equal(f.ok, 42);
	assert_int_equal(f.failed, 5);
	assert_int_equal(f.transport_errors, 1);
	assert_int_equal(f.errors, 6);
	assert_ptr_equal(f.latency, &p.timing[TIM_LATENCY]);

	/* a --success rule that fewer held: what the engine counted is what counts */
	p.success_ok = 30;
	report_name_figures(&p, &rn, 0, &f);
	assert_int_equal(f.ok, 30);
	assert_int_equal(f.errors, 17 + 1);
	phase_stats_free(&p);
	req_names_free(&rn);
}

static char *capture(void (*fn)(FILE *, void *), void *arg)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_non_null(f);
	fn(f, arg);
	assert_int_equal(fclose(f), 0);
	return buf;
}

struct both {
	struct req_names *rn;
	struct phase_stats *p;
};

static void write_json(FILE *f, void *arg)
{
	struct both *b = arg;
	struct jsonw j;
	jw_init(&j, f, 1);
	jw_obj(&j);
	rj_by_name(&j, b->p, b->rn);
	jw_obj_end(&j);
}

static void write_text(FILE *f, void *arg)
{
	struct both *b = arg;
	report_text_by_name(f, b->p, b->rn);
}

static void test_json(void **state)
{
	(void)state;
	struct req_names rn;
	struct phase_stats p;
	three_names(&rn, &p);
	struct both b = {&rn, &p};
	char *text = capture(write_json, &b);
	json_error_t je;
	json_t *root = json_loads(text, 0, &je);
	if (!root)
		fail_msg("not JSON (%s):\n%s", je.text, text);
	json_t *bn = json_object_get(root, "by_name");
	assert_int_equal(json_array_size(bn), 3);
	json_t *a = json_array_get(bn, 0);
	assert_string_equal(json_string_value(json_object_get(a, "name")), "GET /a");
	assert_null(json_object_get(a, "other"));
	assert_int_equal(json_integer_value(json_object_get(a, "sent")), 100);
	assert_int_equal(json_integer_value(json_object_get(a, "ok")), 90);
	assert_int_equal(json_integer_value(json_object_get(a, "failed")), 8);
	assert_int_equal(json_integer_value(json_object_get(a, "transport_errors")), 2);
	assert_int_equal(json_integer_value(json_object_get(a, "errors")), 10);
	assert_true(fabs(json_number_value(json_object_get(a, "error_pct")) - 10.0) < 1e-9);
	json_t *lat = json_object_get(a, "latency");
	assert_int_equal(json_integer_value(json_object_get(lat, "count")), 100);
	assert_int_equal(json_integer_value(json_object_get(lat, "sub_bits")), NAME_SUB_BITS);
	double p50 = json_number_value(json_object_get(lat, "p50_us"));
	double p90 = json_number_value(json_object_get(lat, "p90_us"));
	assert_true(p50 >= 1000 && p50 < 1000 * (1 + 1.0 / 64));
	assert_true(p90 >= 3000 && p90 < 3000 * (1 + 1.0 / 64));
	assert_true(json_number_value(json_object_get(lat, "max_us")) == 3000);
	json_t *o = json_array_get(bn, 2);
	assert_string_equal(json_string_value(json_object_get(o, "name")), "other");
	assert_true(json_is_true(json_object_get(o, "other")));
	assert_int_equal(json_integer_value(json_object_get(o, "pooled_names")), 7);
	json_decref(root);
	free(text);

	char *t = capture(write_text, &b);
	assert_non_null(strstr(t, "by name"));
	assert_non_null(strstr(t, "GET /a"));
	assert_non_null(strstr(t, "10.00%"));
	assert_non_null(strstr(t, "other (7 names)"));
	assert_non_null(strstr(t, "relative error < 1.6%"));
	free(t);
	phase_stats_free(&p);
	req_names_free(&rn);
}

/* A long UTF-8 name is cut at a code point, with "...", in the terminal. */
static void test_text_long_name(void **state)
{
	(void)state;
	struct req_names rn = {.n = 2};
	char longname[120] = "GET /";
	for (int i = 0; i < 40; i++)
		strcat(longname, "\xc3\xa9"); /* é: two bytes, one column */
	rn.name[0] = strdup(longname);
	rn.name[1] = strdup("GET /b");
	struct phase_stats p;
	assert_int_equal(phase_stats_init(&p), 0);
	assert_int_equal(phase_stats_init_names(&p, 2), 0);
	struct both b = {&rn, &p};
	char *t = capture(write_text, &b);
	/* 40 columns: "GET /" and 32 é, then "..." */
	char want[120] = "GET /";
	for (int i = 0; i < 32; i++)
		strcat(want, "\xc3\xa9");
	strcat(want, "...");
	if (!strstr(t, want))
		fail_msg("no '%s' in:\n%s", want, t);
	free(t);
	phase_stats_free(&p);
	req_names_free(&rn);
}

static json_t *by_name_entry(const char *name, int sent, int errors, double p99)
{
	char buf[512];
	snprintf(buf, sizeof buf,
		 "{\"name\":\"%s\",\"sent\":%d,\"completed\":%d,\"ok\":%d,\"failed\":%d,"
		 "\"transport_errors\":0,\"errors\":%d,\"error_pct\":%g,\"latency\":{\"count\":%d,"
		 "\"p50_us\":100,\"p90_us\":200,\"p99_us\":%g,\"p99_9_us\":400,\"max_us\":500,"
		 "\"mean_us\":120,\"sub_bits\":7}}",
		 name, sent, sent, sent - errors, errors, errors, 100.0 * errors / sent, sent, p99);
	return fx_parse(buf);
}

static void test_report_table(void **state)
{
	(void)state;
	json_t *j = fx_run();
	json_t *bn = json_array();
	json_array_append_new(bn, by_name_entry("GET /static/app.css", 400, 0, 300));
	json_array_append_new(bn, by_name_entry("PATCH /users/{id}", 100, 25, 42000));
	json_t *other = by_name_entry("other", 10, 1, 900);
	json_object_set_new(other, "other", json_true());
	json_object_set_new(other, "pooled_names", json_integer(3));
	json_array_append_new(bn, other);
	json_object_set_new(json_object_get(j, "measure"), "by_name", bn);
	struct loaded_result r;
	char err[512];
	assert_int_equal(fx_load(j, &r, err, sizeof err), 0);
	int rc;
	char *md = fx_render(&r, REPORT_FMT_MD, NULL, &rc, err, sizeof err);
	assert_int_equal(rc, 0);
	static const char *const facts[] = {
		"### By request name",
		"| GET /static/app.css | 400 | 400 | 0 | 0.00% | 100 µs | 200 µs | 300 µs | 400 µs | 500 µs |",
		"| PATCH /users/{id} | 100 | 100 | 25 | 25.00% |",
		"| 42.0 ms |",
		"| other (3 pooled names) | 10 |",
		"kept to within 1.56%",
		"pooled as \"other\"",
	};
	for (size_t i = 0; i < sizeof facts / sizeof facts[0]; i++)
		if (!strstr(md, facts[i]))
			fail_msg("missing: %s\n%s", facts[i], md);
	free(md);
	result_free(&r);

	/* one name: no table (the figures are the run's own) */
	j = fx_run();
	bn = json_array();
	json_array_append_new(bn, by_name_entry("GET /", 500, 0, 300));
	json_object_set_new(json_object_get(j, "measure"), "by_name", bn);
	assert_int_equal(fx_load(j, &r, err, sizeof err), 0);
	md = fx_render(&r, REPORT_FMT_MD, NULL, &rc, err, sizeof err);
	assert_int_equal(rc, 0);
	assert_null(strstr(md, "By request name"));
	free(md);
	result_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_figures),
		cmocka_unit_test(test_one_name),
		cmocka_unit_test(test_json),
		cmocka_unit_test(test_text_long_name),
		cmocka_unit_test(test_report_table),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
