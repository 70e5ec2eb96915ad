/* Request names (src/result/names.c): interned in order of first
 * appearance, bounded to RESULT_MAX_NAMES with the rest pooled as "other"
 * (and counted); per-name figures of phase_stats (src/result/result.c):
 * allocated only on request, reset in place, merged by index (threads,
 * repetitions), refused when the name counts differ. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "result/names.h"
#include "result/result.h"
#include "util/err.h"

static void test_first_appearance(void **state)
{
	(void)state;
	const char *nm[] = {"GET /b", "GET /a", "GET /b", "POST /a", "GET /a", "GET /b"};
	uint16_t idx[6];
	struct req_names r;
	assert_int_equal(req_names_build(&r, nm, 6, idx), 0);
	assert_int_equal(r.n, 3);
	assert_false(r.other);
	assert_int_equal(r.pooled, 0);
	assert_string_equal(r.name[0], "GET /b");
	assert_string_equal(r.name[1], "GET /a");
	assert_string_equal(r.name[2], "POST /a");
	const uint16_t want[6] = {0, 1, 0, 2, 1, 0};
	assert_memory_equal(idx, want, sizeof want);
	/* copies: the caller's strings may go */
	assert_ptr_not_equal(r.name[0], nm[0]);
	req_names_free(&r);
	assert_int_equal(r.n, 0);
	req_names_free(&r); /* twice is fine */
}

static void test_one_name(void **state)
{
	(void)state;
	const char *nm[] = {"GET /", "GET /", "GET /"};
	uint16_t idx[3] = {9, 9, 9};
	struct req_names r;
	assert_int_equal(req_names_build(&r, nm, 3, idx), 0);
	assert_int_equal(r.n, 1);
	assert_int_equal(idx[0] + idx[1] + idx[2], 0);
	req_names_free(&r);
}

/* k distinct names, each used `rep` times, interleaved: name j at positions
 * j, j + k, j + 2k, ... */
static void check_bound(size_t k, size_t rep)
{
	size_t n = k * rep;
	char(*buf)[32] = calloc(k, sizeof *buf);
	const char **nm = calloc(n, sizeof *nm);
	uint16_t *idx = calloc(n, sizeof *idx);
	assert_non_null(buf);
	assert_non_null(nm);
	assert_non_null(idx);
	for (size_t j = 0; j < k; j++)
		snprintf(buf[j], sizeof buf[j], "GET /r%zu", j);
	for (size_t i = 0; i < n; i++)
		nm[i] = buf[i % k];
	struct req_names r;
	assert_int_equal(req_names_build(&r, nm, n, idx), 0);
	size_t own = k < RESULT_MAX_NAMES ? k : RESULT_MAX_NAMES;
	bool other = k > RESULT_MAX_NAMES;
	assert_int_equal(r.n, own + other);
	assert_int_equal(r.other, other);
	assert_int_equal(r.pooled, other ? k - RESULT_MAX_NAMES : 0);
	for (size_t j = 0; j < own; j++)
		assert_string_equal(r.name[j], buf[j]);
	if (other)
		assert_string_equal(r.name[own], REQ_NAMES_OTHER);
	for (size_t i = 0; i < n; i++) {
		size_t j = i % k;
		assert_int_equal(idx[i], j < RESULT_MAX_NAMES ? j : RESULT_MAX_NAMES);
	}
	req_names_free(&r);
	free(buf);
	free(nm);
	free(idx);
}

static void test_bounded(void **state)
{
	(void)state;
	check_bound(RESULT_MAX_NAMES - 1, 3);
	check_bound(RESULT_MAX_NAMES, 3);     /* exactly 64: no "other" */
	check_bound(RESULT_MAX_NAMES + 1, 3); /* one pooled */
	check_bound(200, 5);
	check_bound(5000, 2); /* the set grows past its first size */
}

/* A name at a time, past the pooled names it counts: the entries stay
 * right, pooled stops at REQ_NAMES_POOLED_MAX, memory bounded. */
static void test_namer_cap(void **state)
{
	(void)state;
	struct req_namer *nm;
	assert_int_equal(req_namer_new(&nm), 0);
	size_t total = RESULT_MAX_NAMES + REQ_NAMES_POOLED_MAX + 100;
	char name[32];
	uint16_t idx;
	for (size_t i = 0; i < total; i++) {
		snprintf(name, sizeof name, "GET /n%zu", i);
		assert_int_equal(req_namer_add(nm, name, &idx), 0);
		assert_int_equal(idx, i < RESULT_MAX_NAMES ? i : RESULT_MAX_NAMES);
		if (i % 100000 == 0 && i > 0) { /* an own name again, and a pooled one again */
			assert_int_equal(req_namer_add(nm, "GET /n3", &idx), 0);
			assert_int_equal(idx, 3);
			assert_int_equal(req_namer_add(nm, "GET /n70", &idx), 0);
			assert_int_equal(idx, RESULT_MAX_NAMES);
		}
	}
	assert_int_equal(req_namer_add(nm, NULL, &idx), -EINVAL);
	struct req_names r;
	assert_int_equal(req_namer_finish(nm, &r), 0);
	req_namer_free(nm);
	assert_int_equal(r.n, RESULT_MAX_NAMES + 1);
	assert_true(r.other);
	assert_int_equal(r.pooled, REQ_NAMES_POOLED_MAX);
	assert_string_equal(r.name[RESULT_MAX_NAMES], REQ_NAMES_OTHER);
	assert_string_equal(r.name[5], "GET /n5");
	req_names_free(&r);
	/* freed unfinished: nothing leaks */
	assert_int_equal(req_namer_new(&nm), 0);
	assert_int_equal(req_namer_add(nm, "GET /", &idx), 0);
	req_namer_free(nm);
	req_namer_free(NULL);
}

static void test_bad_input(void **state)
{
	(void)state;
	struct req_names r;
	uint16_t idx[2];
	const char *nm[] = {"GET /", NULL};
	assert_int_equal(req_names_build(&r, nm, 0, idx), -EINVAL);
	assert_int_equal(r.n, 0);
	assert_int_equal(req_names_build(&r, nm, 2, idx), -EINVAL);
	assert_int_equal(r.n, 0);
	assert_null(r.name[0]);
}

static void test_phase_init_names(void **state)
{
	(void)state;
	struct phase_stats p;
	assert_int_equal(phase_stats_init(&p), 0);
	assert_int_equal(p.n_names, 0);
	assert_null(p.name);
	assert_int_equal(phase_stats_init_names(&p, 1), -EINVAL);
	assert_int_equal(phase_stats_init_names(&p, RESULT_MAX_NAMES + 2), -EINVAL);
	assert_int_equal(phase_stats_init_names(&p, RESULT_MAX_NAMES + 1), 0);
	assert_int_equal(p.n_names, RESULT_MAX_NAMES + 1);
	assert_int_equal(p.name[RESULT_MAX_NAMES].latency.sub_bits, NAME_SUB_BITS);
	assert_int_equal(phase_stats_init_names(&p, 2), -EINVAL); /* already there */

	/* reset keeps the allocation and zeroes every figure */
	struct name_stats *keep = p.name;
	p.name[3].in_flight_at_end = 5;
	p.name[3].ok = 2;
	hist_record(&p.name[3].latency, 1000);
	phase_stats_reset(&p);
	assert_ptr_equal(p.name, keep);
	assert_int_equal(p.n_names, RESULT_MAX_NAMES + 1);
	assert_int_equal(p.name[3].in_flight_at_end, 0);
	assert_int_equal(p.name[3].ok, 0);
	assert_int_equal(p.name[3].latency.total, 0);
	assert_non_null(p.name[3].latency.counts);
	phase_stats_free(&p);
	assert_null(p.name);
	assert_int_equal(p.n_names, 0);
}

static void fill(struct name_stats *ns, uint64_t in_flight, uint64_t completed, uint64_t ok,
		 uint64_t errors, uint64_t lat_ns)
{
	ns->in_flight_at_end = in_flight;
	ns->completed = completed;
	ns->ok = ok;
	ns->errors = errors;
	for (uint64_t i = 0; i < completed; i++)
		hist_record(&ns->latency, lat_ns);
}

static void test_merge_names(void **state)
{
	(void)state;
	struct phase_stats a, b, dst;
	assert_int_equal(phase_stats_init(&a), 0);
	assert_int_equal(phase_stats_init(&b), 0);
	assert_int_equal(phase_stats_init(&dst), 0);
	assert_int_equal(phase_stats_init_names(&a, 3), 0);
	assert_int_equal(phase_stats_init_names(&b, 3), 0);
	fill(&a.name[0], 10, 9, 8, 1, 1000);
	fill(&a.name[2], 4, 4, 0, 0, 50000);
	fill(&b.name[0], 6, 6, 6, 0, 3000);
	fill(&b.name[1], 2, 1, 1, 1, 7000);

	/* a merge target without per-name figures gets them */
	assert_int_equal(phase_stats_merge(&dst, &a), 0);
	assert_int_equal(dst.n_names, 3);
	assert_int_equal(phase_stats_merge(&dst, &b), 0);
	assert_int_equal(dst.name[0].in_flight_at_end, 16);
	assert_int_equal(dst.name[0].completed, 15);
	assert_int_equal(dst.name[0].ok, 14);
	assert_int_equal(dst.name[0].errors, 1);
	assert_int_equal(dst.name[1].in_flight_at_end, 2);
	assert_int_equal(dst.name[1].errors, 1);
	assert_int_equal(dst.name[2].completed, 4);
	assert_int_equal(dst.name[2].ok, 0);
	assert_int_equal(dst.name[0].latency.total, 15);
	assert_int_equal(dst.name[0].latency.min, 1000);
	assert_int_equal(dst.name[0].latency.max, 3000);
	/* 9 at 1 us then 6 at 3 us: the median is 1 us, p90 3 us (within 1/64) */
	assert_in_range(hist_percentile(&dst.name[0].latency, 50), 1000, 1000 + 1000 / 64);
	assert_in_range(hist_percentile(&dst.name[0].latency, 90), 3000, 3000 + 3000 / 64);
	assert_int_equal(dst.name[2].latency.max, 50000);

	/* merging a phase without names changes nothing per name */
	struct phase_stats none;
	assert_int_equal(phase_stats_init(&none), 0);
	assert_int_equal(phase_stats_merge(&dst, &none), 0);
	assert_int_equal(dst.name[0].in_flight_at_end, 16);
	/* and one with another name count is refused, dst unchanged */
	struct phase_stats four;
	assert_int_equal(phase_stats_init(&four), 0);
	assert_int_equal(phase_stats_init_names(&four, 4), 0);
	four.name[0].in_flight_at_end = 99;
	four.sent = 99;
	assert_int_equal(phase_stats_merge(&dst, &four), PACER_ELAYOUT);
	assert_int_equal(dst.name[0].in_flight_at_end, 16);
	assert_int_equal(dst.sent, 0);

	phase_stats_free(&a);
	phase_stats_free(&b);
	phase_stats_free(&dst);
	phase_stats_free(&none);
	phase_stats_free(&four);
}

/* Repetitions pool per name too (run_result_pool). */
static void test_pool_names(void **state)
{
	(void)state;
	struct run_result x = {0}, y = {0};
	assert_int_equal(phase_stats_init(&x.warmup), 0);
	assert_int_equal(phase_stats_init(&x.measure), 0);
	assert_int_equal(phase_stats_init(&y.warmup), 0);
	assert_int_equal(phase_stats_init(&y.measure), 0);
	assert_int_equal(phase_stats_init_names(&x.measure, 2), 0);
	assert_int_equal(phase_stats_init_names(&y.measure, 2), 0);
	fill(&x.measure.name[1], 3, 3, 3, 0, 2000);
	fill(&y.measure.name[1], 5, 4, 2, 1, 4000);
	assert_int_equal(run_result_pool(&x, &y), 0);
	assert_int_equal(x.measure.name[1].in_flight_at_end, 8);
	assert_int_equal(x.measure.name[1].completed, 7);
	assert_int_equal(x.measure.name[1].ok, 5);
	assert_int_equal(x.measure.name[1].errors, 1);
	assert_int_equal(x.measure.name[1].latency.total, 7);
	assert_int_equal(x.warmup.n_names, 0);
	run_result_free(&x);
	run_result_free(&y);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_first_appearance),
		cmocka_unit_test(test_one_name),
		cmocka_unit_test(test_bounded),
		cmocka_unit_test(test_namer_cap),
		cmocka_unit_test(test_bad_input),
		cmocka_unit_test(test_phase_init_names),
		cmocka_unit_test(test_merge_names),
		cmocka_unit_test(test_pool_names),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
