/* Tests of the workload description (src/plan/workload.c): methods counted
 * and sorted by count (ties in first-seen order), the one method or null
 * when mixed, uniform body size or not, the first requests kept one by one
 * with long targets and names cut, methods past the cap pooled, and bodies
 * summed with their smallest and largest. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "plan/workload.h"

static void add(struct plan_workload *w, const char *method, const char *target, uint64_t body,
		const char *name)
{
	plan_workload_add(w, method, target, strlen(target), body, name);
}

/* The embedded vast_ortb_mix plan: one GET and one POST with a body. */
static void test_routes(void **state)
{
	(void)state;
	struct plan_workload w;
	plan_workload_init(&w, "embedded_routes");
	add(&w, "GET", "/vast", 0, NULL);
	add(&w, "POST", "/openrtb2/auction", 127, NULL);
	plan_workload_finish(&w);
	assert_string_equal(w.source, "embedded_routes");
	assert_int_equal(w.requests, 2);
	assert_int_equal(w.n_methods, 2);
	assert_string_equal(w.methods[0].method, "GET"); /* a tie keeps first-seen order */
	assert_string_equal(w.methods[1].method, "POST");
	assert_int_equal(w.methods[0].requests, 1);
	assert_null(plan_workload_method(&w));
	uint64_t b = 99;
	assert_false(plan_workload_body_bytes(&w, &b));
	assert_int_equal(w.with_body, 1);
	assert_int_equal(w.body_bytes_total, 127);
	assert_int_equal(w.body_bytes_min, 127);
	assert_int_equal(w.body_bytes_max, 127);
	assert_int_equal(w.n_listed, 2);
	assert_string_equal(w.listed[1].target, "/openrtb2/auction");
	assert_int_equal(w.listed[1].body_bytes, 127);
	assert_string_equal(w.listed[0].name, "");
	assert_int_equal(w.n_names, 0);
	assert_int_equal(w.unnamed, 2);
}

/* --bodies: every request a POST, bodies of different sizes. */
static void test_bodies(void **state)
{
	(void)state;
	struct plan_workload w;
	plan_workload_init(&w, "bodies");
	add(&w, "POST", "/ingest", 7, NULL);
	add(&w, "POST", "/ingest", 12, NULL);
	add(&w, "POST", "/ingest", 9, NULL);
	plan_workload_finish(&w);
	assert_string_equal(plan_workload_method(&w), "POST");
	uint64_t b = 99;
	assert_false(plan_workload_body_bytes(&w, &b));
	assert_int_equal(w.body_bytes_min, 7);
	assert_int_equal(w.body_bytes_max, 12);
	assert_int_equal(w.body_bytes_total, 28);
	/* the same size everywhere is one figure; no body at all is 0 */
	plan_workload_init(&w, "bodies");
	add(&w, "POST", "/a", 5, NULL);
	add(&w, "POST", "/b", 5, NULL);
	assert_true(plan_workload_body_bytes(&w, &b));
	assert_int_equal(b, 5);
	plan_workload_init(&w, "url");
	add(&w, "GET", "/", 0, NULL);
	b = 99;
	assert_true(plan_workload_body_bytes(&w, &b));
	assert_int_equal(b, 0);
	assert_string_equal(plan_workload_method(&w), "GET");
	/* bodies on some requests only: not uniform */
	add(&w, "GET", "/", 3, NULL);
	assert_false(plan_workload_body_bytes(&w, &b));
}

/* A big table: methods sorted by count, the first 8 listed, caps hold. */
static void test_table(void **state)
{
	(void)state;
	struct plan_workload w;
	plan_workload_init(&w, "table");
	char long_target[400];
	memset(long_target, 'x', sizeof long_target - 1);
	long_target[0] = '/';
	long_target[sizeof long_target - 1] = '\0';
	char long_name[100];
	memset(long_name, 'n', sizeof long_name - 1);
	long_name[sizeof long_name - 1] = '\0';
	add(&w, "DELETE", long_target, 0, long_name);
	for (int i = 0; i < 600; i++)
		add(&w, "GET", "/items/1", 0, "rest_id");
	for (int i = 0; i < 300; i++)
		add(&w, "POST", "/items", 100 + (uint64_t)i, "create");
	plan_workload_finish(&w);
	assert_int_equal(w.requests, 901);
	assert_int_equal(w.n_methods, 3);
	assert_string_equal(w.methods[0].method, "GET");
	assert_int_equal(w.methods[0].requests, 600);
	assert_string_equal(w.methods[1].method, "POST");
	assert_string_equal(w.methods[2].method, "DELETE");
	assert_int_equal(w.n_listed, PLAN_WL_MAX_LISTED);
	assert_true(w.listed[0].target_cut);
	assert_int_equal(strlen(w.listed[0].target), PLAN_WL_TARGET_CAP - 1);
	assert_int_equal(strlen(w.listed[0].name), PLAN_WL_NAME_CAP - 1);
	assert_string_equal(w.listed[1].name, "rest_id");
	assert_false(w.listed[1].target_cut);
	assert_int_equal(w.with_body, 300);
	assert_int_equal(w.body_bytes_min, 100);
	assert_int_equal(w.body_bytes_max, 399);
	assert_int_equal(w.body_bytes_total, 300 * 100 + 299 * 300 / 2);
	/* names counted like methods: most first, a long one cut */
	assert_int_equal(w.n_names, 3);
	assert_string_equal(w.names[0].name, "rest_id");
	assert_int_equal(w.names[0].requests, 600);
	assert_string_equal(w.names[1].name, "create");
	assert_int_equal(strlen(w.names[2].name), PLAN_WL_NAME_CAP - 1);
	assert_int_equal(w.unnamed, 0);
	assert_int_equal(w.other_name_requests, 0);
}

/* More distinct methods than kept: the rest pooled, never a wrong "one method". */
static void test_method_cap(void **state)
{
	(void)state;
	struct plan_workload w;
	plan_workload_init(&w, "table");
	char m[16];
	for (int i = 0; i < PLAN_WL_MAX_METHODS + 3; i++) {
		snprintf(m, sizeof m, "M%d", i);
		add(&w, m, "/", 0, NULL);
	}
	plan_workload_finish(&w);
	assert_int_equal(w.n_methods, PLAN_WL_MAX_METHODS);
	assert_int_equal(w.other_method_requests, 3);
	assert_null(plan_workload_method(&w));
	/* names past the cap pooled the same way */
	plan_workload_init(&w, "table");
	for (int i = 0; i < PLAN_WL_MAX_NAMES + 2; i++) {
		snprintf(m, sizeof m, "n%d", i);
		add(&w, "GET", "/", 0, m);
	}
	add(&w, "GET", "/", 0, "n3");
	add(&w, "GET", "/", 0, "");
	plan_workload_finish(&w);
	assert_int_equal(w.n_names, PLAN_WL_MAX_NAMES);
	assert_int_equal(w.other_name_requests, 2);
	assert_int_equal(w.unnamed, 1);
	assert_string_equal(w.names[0].name, "n3"); /* the most requests */
	assert_int_equal(w.names[0].requests, 2);
	assert_string_equal(w.names[1].name, "n0"); /* then first seen first */
	/* one method kept but others pooled: still not "one method" */
	plan_workload_init(&w, "table");
	add(&w, "GET", "/", 0, NULL);
	w.other_method_requests = 1;
	assert_null(plan_workload_method(&w));
	/* a method token longer than the cap is cut, not overrun */
	plan_workload_init(&w, "url");
	add(&w, "AVERYLONGMETHODNAMEOVERTWENTYFOUR", "/", 0, NULL);
	assert_int_equal(strlen(w.methods[0].method), PLAN_WL_METHOD_CAP - 1);
	/* NULL method: GET, as the encoder defaults */
	plan_workload_init(&w, "url");
	plan_workload_add(&w, NULL, NULL, 0, 0, NULL);
	assert_string_equal(plan_workload_method(&w), "GET");
	assert_string_equal(w.listed[0].target, "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_routes),
		cmocka_unit_test(test_bodies),
		cmocka_unit_test(test_table),
		cmocka_unit_test(test_method_cap),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
