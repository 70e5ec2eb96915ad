/* Tests of the steal-time sample (src/util/sysinfo.c): /proc/stat's text is
 * read for the 8th figure of each CPU's own line, over the CPUs of a mask
 * and over all of them; anything it cannot trust leaves the sample
 * unknown; the span between two samples is the steal in nanoseconds beside
 * the CPU time it came out of. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "result/result.h"
#include "util/sysinfo.h"

/* A 4-CPU /proc/stat: CPU n's steal is 100 * (n + 1) + extra. */
static const char *stat_text(char *buf, size_t cap, unsigned extra)
{
	size_t o = (size_t)snprintf(buf, cap, "cpu  1 2 3 4 5 6 7 9999 0 0\n");
	for (unsigned n = 0; n < 4; n++)
		o += (size_t)snprintf(buf + o, cap - o, "cpu%u 10 0 20 30000 4 0 5 %u 0 0\n", n,
				      100 * (n + 1) + extra);
	snprintf(buf + o, cap - o,
		 "intr 123 1 2 3\nctxt 456\nbtime 1\nprocesses 9\nprocs_running 1\n");
	return buf;
}

static void test_parse_mask_and_machine(void **state)
{
	(void)state;
	char buf[1024];
	stat_text(buf, sizeof buf, 0);
	cpu_set_t mask;
	CPU_ZERO(&mask);
	CPU_SET(1, &mask);
	CPU_SET(3, &mask);
	CPU_SET(7, &mask); /* not listed (offline): not counted */
	struct steal_sample s;
	sysinfo_steal_parse(buf, strlen(buf), &mask, &s);
	assert_true(s.known);
	assert_int_equal(s.gen_cpus, 2);
	assert_int_equal(s.gen_ticks, 200 + 400);
	assert_int_equal(s.all_cpus, 4);
	assert_int_equal(s.all_ticks, 100 + 200 + 300 + 400); /* not the "cpu " sum line */
	/* no mask: the machine's only */
	sysinfo_steal_parse(buf, strlen(buf), NULL, &s);
	assert_true(s.known);
	assert_int_equal(s.gen_cpus, 0);
	assert_int_equal(s.all_ticks, 1000);
}

static void test_parse_unknown(void **state)
{
	(void)state;
	cpu_set_t mask;
	CPU_ZERO(&mask);
	CPU_SET(0, &mask);
	struct steal_sample s;
	static const char *const refused[] = {
		/* a kernel without the steal figure (7 figures) */
		"cpu  1 2 3 4 5 6 7\ncpu0 1 2 3 4 5 6 7\n",
		/* nothing but the sum line, or nothing at all */
		"cpu  1 2 3 4 5 6 7 8\nintr 1\n",
		"",
		/* the mask's CPUs not listed */
		"cpu1 1 2 3 4 5 6 7 8\n",
		/* a figure that overflows, a CPU number past CPU_SETSIZE, a letter */
		"cpu0 1 2 3 4 5 6 7 99999999999999999999999\n",
		"cpu0 1 2 3 4 5 6 7 8\ncpu99999 1 2 3 4 5 6 7 8\n",
		"cpu0 1 2 3 4 5 6 x 8\n",
		/* two CPUs whose sum passes 2^64 */
		"cpu0 1 2 3 4 5 6 7 18446744073709551615\ncpu1 1 2 3 4 5 6 7 1\n",
	};
	for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
		sysinfo_steal_parse(refused[i], strlen(refused[i]), &mask, &s);
		assert_false(s.known);
	}
	/* a cut last line is not read (not taken for a short figure) */
	const char *cut = "cpu0 1 2 3 4 5 6 7 8\ncpu1 1 2 3 4 5 6 7 1";
	sysinfo_steal_parse(cut, strlen(cut), &mask, &s);
	assert_true(s.known);
	assert_int_equal(s.all_cpus, 1);
	assert_int_equal(s.gen_ticks, 8);
	/* the text need not be terminated: only len bytes are read */
	char raw[32];
	memcpy(raw, "cpu0 1 2 3 4 5 6 7 8\nXXXXXXXXXX", 31);
	sysinfo_steal_parse(raw, 21, &mask, &s);
	assert_true(s.known);
	assert_int_equal(s.gen_ticks, 8);
}

static void test_between_and_percent(void **state)
{
	(void)state;
	char buf[1024];
	cpu_set_t mask;
	CPU_ZERO(&mask);
	CPU_SET(2, &mask);
	struct steal_sample a, b;
	stat_text(buf, sizeof buf, 0);
	sysinfo_steal_parse(buf, strlen(buf), &mask, &a);
	stat_text(buf, sizeof buf, 25);
	sysinfo_steal_parse(buf, strlen(buf), &mask, &b);
	a.tick_ns = b.tick_ns = 10000000; /* USER_HZ 100 */
	a.at_ns = 1000000000;
	b.at_ns = 3000000000; /* 2 s later */
	struct steal_span sp;
	assert_true(sysinfo_steal_between(&a, &b, 0, &sp));
	assert_int_equal(sp.gen_ns, 250000000);     /* 25 ticks of 10 ms */
	assert_int_equal(sp.gen_span_ns, 2000000000); /* 2 s of one CPU */
	assert_int_equal(sp.gen_err_ns, 10000000);    /* a tick of one CPU */
	assert_int_equal(sp.all_ns, 4 * 250000000ull);
	assert_int_equal(sp.all_span_ns, 8000000000ull);
	assert_int_equal(sp.all_err_ns, 40000000);
	/* a load that began later (--start-at): the span is from then */
	struct steal_span late;
	assert_true(sysinfo_steal_between(&a, &b, 2500000000ull, &late));
	assert_int_equal(late.gen_ns, 250000000);
	assert_int_equal(late.gen_span_ns, 500000000);
	/* a start outside the samples is not taken */
	assert_true(sysinfo_steal_between(&a, &b, 9000000000ull, &late));
	assert_int_equal(late.gen_span_ns, 2000000000);
	struct run_result r;
	memset(&r, 0, sizeof r);
	assert_true(isnan(run_result_steal_pct(&r, false)));
	r.gen_steal_known = true;
	r.gen_steal = sp;
	assert_true(fabs(run_result_steal_pct(&r, false) - 12.5) < 1e-9);
	assert_true(fabs(run_result_steal_pct(&r, true) - 12.5) < 1e-9);
	/* coarse ticks never make more than the span */
	/* one tick of a 0.5 s load is 2 %, but not worth a warning: with the
	 * tick taken off it is 0 */
	struct run_result one;
	memset(&one, 0, sizeof one);
	one.gen_steal_known = true;
	one.gen_steal.gen_ns = 10000000;
	one.gen_steal.gen_err_ns = 10000000;
	one.gen_steal.gen_span_ns = 500000000;
	assert_true(fabs(run_result_steal_pct(&one, false) - 2.0) < 1e-9);
	assert_false(run_result_steal_material(&one));
	one.gen_steal.gen_ns = 20000000; /* two ticks: 4 %, at least 2 % */
	assert_true(run_result_steal_material(&one));
	/* 0.996 % is written 1.00 %: said so too, as the result shows it */
	one.gen_steal.gen_err_ns = 0;
	one.gen_steal.gen_ns = 4980000;
	assert_true(run_result_steal_material(&one));
	one.gen_steal.gen_ns = 4970000; /* 0.994 % */
	assert_false(run_result_steal_material(&one));
	b.at_ns = a.at_ns + 100000000; /* 0.1 s: 25 ticks would be 0.25 s */
	assert_true(sysinfo_steal_between(&a, &b, 0, &sp));
	assert_int_equal(sp.gen_ns, sp.gen_span_ns);
	/* unknown, other CPUs, or a counter that went back: no span */
	struct steal_sample u = b;
	u.known = false;
	assert_false(sysinfo_steal_between(&a, &u, 0, &sp));
	assert_int_equal(sp.gen_ns, 0);
	u = b;
	u.all_cpus = 3;
	assert_false(sysinfo_steal_between(&a, &u, 0, &sp));
	assert_false(sysinfo_steal_between(&b, &a, 0, &sp));
}

static void test_sample_here(void **state)
{
	(void)state;
	/* this machine's own /proc/stat: a Linux kernel since 2.6.11 has it */
	struct steal_sample a, b;
	sysinfo_steal_sample(&a);
	sysinfo_steal_sample(&b);
	assert_true(a.known);
	assert_true(a.gen_cpus >= 1 && a.gen_cpus <= a.all_cpus);
	assert_true(a.tick_ns > 0);
	struct steal_span sp;
	assert_true(sysinfo_steal_between(&a, &b, 0, &sp));
	assert_true(sp.gen_ns <= sp.gen_span_ns);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_mask_and_machine),
		cmocka_unit_test(test_parse_unknown),
		cmocka_unit_test(test_between_and_percent),
		cmocka_unit_test(test_sample_here),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
