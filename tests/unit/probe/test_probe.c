/* Target probes: /proc and cgroup v2 readers on a fake tree, and the
 * sampler's window arithmetic through the self-CPU callback. */
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
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "probe/probe.h"
#include "util/clock.h"

static char root[256];

static void put(const char *rel, const char *text)
{
	char path[512];
	snprintf(path, sizeof path, "%s/%s", root, rel);
	char *slash = strrchr(path, '/');
	*slash = '\0';
	char cmd[600];
	snprintf(cmd, sizeof cmd, "mkdir -p '%s'", path);
	assert_int_equal(system(cmd), 0);
	*slash = '/';
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

/* A /proc/PID/stat line: the name holds ") (" and spaces to test parsing
 * after the last ')'. */
static void proc(int pid, int ppid, unsigned ut, unsigned st, unsigned rss_kib)
{
	char rel[64], text[512];
	snprintf(rel, sizeof rel, "%d/stat", pid);
	snprintf(text, sizeof text,
		 "%d (we) (ird name) S %d 1 1 0 -1 4194560 100 0 0 0 %u %u 0 0 20 0 1 0 1 0 0\n", pid,
		 ppid, ut, st);
	put(rel, text);
	snprintf(rel, sizeof rel, "%d/status", pid);
	snprintf(text, sizeof text, "Name:\twe\nState:\tS\nVmPeak:\t 9999 kB\nVmRSS:\t %u kB\n", rss_kib);
	put(rel, text);
}

static int setup(void **state)
{
	(void)state;
	snprintf(root, sizeof root, "/tmp/pacer-probe-test-%d", (int)getpid());
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	char cmd[300];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
	return system(cmd) == 0 ? 0 : -1;
}

static void test_proc(void **state)
{
	(void)state;
	long hz = sysconf(_SC_CLK_TCK);
	uint64_t tick = 1000000000ull / (uint64_t)hz;
	proc(100, 1, 50, 20, 1000);
	proc(101, 100, 5, 5, 200);  /* child */
	proc(102, 101, 1, 0, 50);   /* grandchild */
	proc(103, 1, 999, 999, 999); /* unrelated */
	put("self/stat", "not a pid dir\n");
	struct probe_sample s;
	assert_int_equal(probe_read_proc(root, 100, false, &s), 0);
	assert_int_equal(s.user_ns, 50 * tick);
	assert_int_equal(s.sys_ns, 20 * tick);
	assert_true(s.rss_ok);
	assert_int_equal(s.rss_bytes, 1000 * 1024);
	assert_int_equal(probe_read_proc(root, 100, true, &s), 0);
	assert_int_equal(s.user_ns, 56 * tick);
	assert_int_equal(s.sys_ns, 25 * tick);
	assert_int_equal(s.rss_bytes, 1250 * 1024);
	assert_int_equal(probe_read_proc(root, 4242, false, &s), -ENOENT);
	/* a zombie (exited, not reaped) counts as gone */
	put("104/stat", "104 (z) Z 1 1 1 0 -1 0 0 0 0 0 7 3 0 0 20 0 1 0 1 0 0\n");
	put("104/status", "Name:\tz\nState:\tZ\n");
	assert_int_equal(probe_read_proc(root, 104, false, &s), -ENOENT);
	/* a live process without VmRSS (a kernel thread): CPU still read */
	put("106/stat", "106 (k) S 2 0 0 0 -1 0 0 0 0 0 7 3 0 0 20 0 1 0 1 0 0\n");
	put("106/status", "Name:\tk\nState:\tS\n");
	assert_int_equal(probe_read_proc(root, 106, false, &s), 0);
	assert_false(s.rss_ok);
	assert_int_equal(s.user_ns, 7 * tick);
	put("105/stat", "105 (garbage\n");
	assert_true(probe_read_proc(root, 105, false, &s) < 0);
}

static void test_cgroup(void **state)
{
	(void)state;
	put("cg/cpu.stat", "usage_usec 3500\nuser_usec 2500\nsystem_usec 1000\nnr_periods 0\n");
	put("cg/memory.current", "8192\n");
	char dir[300];
	snprintf(dir, sizeof dir, "%s/cg", root);
	struct probe_sample s;
	assert_int_equal(probe_read_cgroup(dir, &s), 0);
	assert_int_equal(s.user_ns, 2500000);
	assert_int_equal(s.sys_ns, 1000000);
	assert_true(s.rss_ok);
	assert_int_equal(s.rss_bytes, 8192);
	put("cg2/cpu.stat", "usage_usec 3500\n");
	snprintf(dir, sizeof dir, "%s/cg2", root);
	assert_int_equal(probe_read_cgroup(dir, &s), -EINVAL);
	snprintf(dir, sizeof dir, "%s/nope", root);
	assert_int_equal(probe_read_cgroup(dir, &s), -ENOENT);
}

/* The cores a cgroup may use: cpu.max first, then its cpuset. */
static void test_cgroup_cores(void **state)
{
	(void)state;
	char dir[300];
	double cores = 0;
	const char *basis = NULL;
	put("q1/cpu.max", "150000 100000\n");
	put("q1/cpuset.cpus.effective", "0-3\n");
	snprintf(dir, sizeof dir, "%s/q1", root);
	assert_int_equal(probe_cgroup_cores(dir, &cores, &basis), 0);
	assert_true(cores == 1.5);
	assert_string_equal(basis, "cpu.max");
	/* no quota: the cpuset */
	put("q2/cpu.max", "max 100000\n");
	put("q2/cpuset.cpus.effective", "0-3,6,8-9\n");
	snprintf(dir, sizeof dir, "%s/q2", root);
	assert_int_equal(probe_cgroup_cores(dir, &cores, &basis), 0);
	assert_true(cores == 7);
	assert_string_equal(basis, "cpuset");
	/* neither limits it */
	put("q3/cpu.max", "max 100000\n");
	snprintf(dir, sizeof dir, "%s/q3", root);
	assert_int_equal(probe_cgroup_cores(dir, &cores, &basis), -ENOENT);
	put("q4/cpu.max", "max 100000\n");
	put("q4/cpuset.cpus.effective", "\n");
	snprintf(dir, sizeof dir, "%s/q4", root);
	assert_int_equal(probe_cgroup_cores(dir, &cores, &basis), -ENOENT);
	/* garbage is an error, not a guess */
	put("q5/cpu.max", "lots\n");
	snprintf(dir, sizeof dir, "%s/q5", root);
	assert_int_equal(probe_cgroup_cores(dir, &cores, &basis), -EINVAL);
	put("q6/cpu.max", "0 100000\n");
	snprintf(dir, sizeof dir, "%s/q6", root);
	assert_int_equal(probe_cgroup_cores(dir, &cores, &basis), -EINVAL);
	put("q7/cpuset.cpus.effective", "3-1\n");
	snprintf(dir, sizeof dir, "%s/q7", root);
	assert_int_equal(probe_cgroup_cores(dir, &cores, &basis), -EINVAL);
	snprintf(dir, sizeof dir, "%s/nope", root);
	assert_int_equal(probe_cgroup_cores(dir, &cores, &basis), -ENOENT);
}

/* The embedded-target source: CPU grows at exactly half the wall clock
 * from a fixed start, so the window's CPU is half its length whatever the
 * sample times (linear interpolation is exact for a linear counter). */
static uint64_t t_start;
static uint64_t half_wall(void *arg)
{
	(void)arg;
	return (clock_now_ns() - t_start) / 2;
}

static void test_window(void **state)
{
	(void)state;
	char err[256];
	struct probe *p;
	assert_int_equal(probe_start(&p, &(struct probe_cfg){.pid = 999999999}, err, sizeof err),
			 -ENOENT);
	assert_non_null(strstr(err, "999999999"));
	err[0] = '\0';
	assert_int_equal(probe_check(&(struct probe_cfg){.pid = 999999999}, err, sizeof err), -ENOENT);
	assert_non_null(strstr(err, "--target-pid 999999999: no such process"));
	assert_int_equal(probe_check(&(struct probe_cfg){.pid = getpid()}, err, sizeof err), 0);
	t_start = clock_now_ns();
	struct probe_cfg cfg = {.self_cpu_ns = half_wall, .interval_ns = 10 * 1000 * 1000};
	assert_int_equal(probe_start(&p, &cfg, err, sizeof err), 0);
	struct timespec ts = {0, 120 * 1000 * 1000};
	nanosleep(&ts, NULL);
	uint64_t t1 = clock_now_ns() - 5 * 1000 * 1000;
	uint64_t t0 = t1 - 80 * 1000 * 1000;
	struct target_usage u;
	probe_window(p, t0, t1, &u);
	assert_true(u.known);
	assert_string_equal(u.source, "self_contained");
	assert_false(u.split_known);
	/* 80 ms of window, half busy: 40 ms, up to rounding of one sample */
	assert_true(fabs(u.cpu_s - 0.040) < 0.002);
	assert_true(fabs(u.cores_busy - 0.5) < 0.03);
	assert_true(u.rss_known && u.rss_peak_bytes >= u.rss_start_bytes && u.rss_end_bytes > 0);
	assert_true(u.n_notes >= 1); /* says memory is the whole process */
	/* a window with no samples near it */
	probe_window(p, 1000, 2000, &u);
	assert_false(u.known);
	assert_true(u.n_notes >= 1);
	probe_stop(p);
	probe_stop(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_proc),
		cmocka_unit_test(test_cgroup),
		cmocka_unit_test(test_cgroup_cores),
		cmocka_unit_test(test_window),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
