/* Per-host counters of phase_stats (src/result/result.c): zeroed by reset,
 * summed per host index by merge (threads, repetitions), with the host count
 * the largest seen. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "result/result.h"

static void test_merge_sums_per_host(void **state)
{
	(void)state;
	struct phase_stats a, b;
	assert_int_equal(phase_stats_init(&a), 0);
	assert_int_equal(phase_stats_init(&b), 0);
	a.n_hosts = 2;
	a.host[0] = (struct host_stats){.completed = 5, .errors = 1, .conns_opened = 2};
	a.host[1] = (struct host_stats){.completed = 7, .errors = 0, .conns_opened = 3};
	b.n_hosts = 3;
	b.host[0] = (struct host_stats){.completed = 1, .errors = 2, .conns_opened = 1};
	b.host[2] = (struct host_stats){.completed = 4, .errors = 9, .conns_opened = 6};
	b.host[5].completed = 100; /* beyond b's hosts: not merged */
	assert_int_equal(phase_stats_merge(&a, &b), 0);
	assert_int_equal(a.n_hosts, 3);
	assert_int_equal(a.host[0].completed, 6);
	assert_int_equal(a.host[0].errors, 3);
	assert_int_equal(a.host[0].conns_opened, 3);
	assert_int_equal(a.host[1].completed, 7);
	assert_int_equal(a.host[2].completed, 4);
	assert_int_equal(a.host[2].errors, 9);
	assert_int_equal(a.host[2].conns_opened, 6);
	assert_int_equal(a.host[5].completed, 0);

	/* a merge into a phase of more hosts keeps its count */
	struct phase_stats c;
	assert_int_equal(phase_stats_init(&c), 0);
	c.n_hosts = 1;
	c.host[0].completed = 1;
	assert_int_equal(phase_stats_merge(&a, &c), 0);
	assert_int_equal(a.n_hosts, 3);
	assert_int_equal(a.host[0].completed, 7);

	phase_stats_reset(&a);
	assert_int_equal(a.n_hosts, 0);
	assert_int_equal(a.host[2].conns_opened, 0);
	phase_stats_free(&a);
	phase_stats_free(&b);
	phase_stats_free(&c);
}

/* The protocol figures of a host: connections and requests by protocol
 * summed, the most streams in flight the larger of the two. */
static void test_merge_protocol_per_host(void **state)
{
	(void)state;
	struct phase_stats a, b;
	assert_int_equal(phase_stats_init(&a), 0);
	assert_int_equal(phase_stats_init(&b), 0);
	a.n_hosts = b.n_hosts = 2;
	a.host[0] = (struct host_stats){.conns_h2 = 2, .sent_h2 = 10, .streams_max = 4,
					.streams_sum = 25};
	a.host[1] = (struct host_stats){.conns_h1 = 3, .sent_h1 = 30};
	b.host[0] = (struct host_stats){.conns_h2 = 1, .conns_h1 = 1, .sent_h2 = 5, .sent_h1 = 2,
					.streams_max = 7, .streams_sum = 20};
	b.host[1] = (struct host_stats){.conns_h1 = 1, .sent_h1 = 4, .streams_max = 0};
	assert_int_equal(phase_stats_merge(&a, &b), 0);
	assert_int_equal(a.host[0].conns_h2, 3);
	assert_int_equal(a.host[0].conns_h1, 1);
	assert_int_equal(a.host[0].sent_h2, 15);
	assert_int_equal(a.host[0].sent_h1, 2);
	assert_int_equal(a.host[0].streams_max, 7);
	assert_int_equal(a.host[0].streams_sum, 45);
	assert_int_equal(a.host[1].conns_h1, 4);
	assert_int_equal(a.host[1].sent_h1, 34);
	assert_int_equal(a.host[1].conns_h2, 0);
	assert_int_equal(a.host[1].streams_max, 0);
	phase_stats_reset(&a);
	assert_int_equal(a.host[0].streams_max, 0);
	assert_int_equal(a.host[0].sent_h2, 0);
	phase_stats_free(&a);
	phase_stats_free(&b);
}

static void test_merge_all_hosts_bounded(void **state)
{
	(void)state;
	struct phase_stats a, b;
	assert_int_equal(phase_stats_init(&a), 0);
	assert_int_equal(phase_stats_init(&b), 0);
	b.n_hosts = RESULT_MAX_HOSTS;
	for (int i = 0; i < RESULT_MAX_HOSTS; i++)
		b.host[i].completed = (uint64_t)i + 1;
	assert_int_equal(phase_stats_merge(&a, &b), 0);
	assert_int_equal(phase_stats_merge(&a, &b), 0);
	assert_int_equal(a.n_hosts, RESULT_MAX_HOSTS);
	assert_int_equal(a.host[RESULT_MAX_HOSTS - 1].completed, 2 * RESULT_MAX_HOSTS);
	phase_stats_free(&a);
	phase_stats_free(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_merge_sums_per_host),
		cmocka_unit_test(test_merge_protocol_per_host),
		cmocka_unit_test(test_merge_all_hosts_bounded),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
