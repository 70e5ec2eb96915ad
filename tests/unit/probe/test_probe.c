/* Target probes: /proc and cgroup v2 readers on a fake tree (CPU, memory,
 * the threads' schedstat and a cgroup's cpu.pressure), and the sampler's
 * window arithmetic through the self-CPU callback. */
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

#include "common/check.h"
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
	assert_int_equal(probe_read_proc(root, 100, false, &s, NULL), 0);
	assert_int_equal(s.user_ns, 50 * tick);
	assert_int_equal(s.sys_ns, 20 * tick);
	assert_true(s.rss_ok);
	assert_int_equal(s.rss_bytes, 1000 * 1024);
	assert_int_equal(probe_read_proc(root, 100, true, &s, NULL), 0);
	assert_int_equal(s.user_ns, 56 * tick);
	assert_int_equal(s.sys_ns, 25 * tick);
	assert_int_equal(s.rss_bytes, 1250 * 1024);
	assert_int_equal(probe_read_proc(root, 4242, false, &s, NULL), -ENOENT);
	/* a zombie (exited, not reaped) counts as gone */
	put("104/stat", "104 (z) Z 1 1 1 0 -1 0 0 0 0 0 7 3 0 0 20 0 1 0 1 0 0\n");
	put("104/status", "Name:\tz\nState:\tZ\n");
	assert_int_equal(probe_read_proc(root, 104, false, &s, NULL), -ENOENT);
	/* a live process without VmRSS (a kernel thread): CPU still read */
	put("106/stat", "106 (k) S 2 0 0 0 -1 0 0 0 0 0 7 3 0 0 20 0 1 0 1 0 0\n");
	put("106/status", "Name:\tk\nState:\tS\n");
	assert_int_equal(probe_read_proc(root, 106, false, &s, NULL), 0);
	assert_false(s.rss_ok);
	assert_int_equal(s.user_ns, 7 * tick);
	put("105/stat", "105 (garbage\n");
	assert_true(probe_read_proc(root, 105, false, &s, NULL) < 0);
}

/* A thread's schedstat under ROOT/PID/task/TID. */
static void sched(int pid, int tid, const char *text)
{
	char rel[96];
	snprintf(rel, sizeof rel, "%d/task/%d/schedstat", pid, tid);
	put(rel, text);
}

/* The threads' run delays: summed over a process's threads and, with
 * children, its descendants'; a malformed or absent schedstat is an error
 * of the waits alone (CPU and memory still read), a thread gone between
 * the listing and the read is skipped. */
static void test_schedstat(void **state)
{
	(void)state;
	proc(200, 1, 10, 0, 100);
	sched(200, 200, "1000 500 3\n");
	sched(200, 203, "2000 700 5\n");
	sched(200, 201, "3 4 1\n");
	proc(210, 200, 1, 0, 10); /* a child with one thread */
	sched(210, 210, "10 20 1\n");
	struct probe_sample s;
	struct probe_threads thr = {0};
	assert_int_equal(probe_read_proc(root, 200, false, &s, &thr), 0);
	assert_int_equal(thr.err, 0);
	assert_int_equal(thr.n, 3);
	assert_int_equal(s.wait_ns, 500 + 700 + 4);
	/* sorted by TID */
	assert_int_equal(thr.v[0].tid, 200);
	assert_int_equal(thr.v[1].tid, 201);
	assert_int_equal(thr.v[2].tid, 203);
	assert_int_equal(thr.v[2].run_ns, 2000);
	assert_int_equal(thr.v[2].wait_ns, 700);
	assert_int_equal(probe_read_proc(root, 200, true, &s, &thr), 0);
	assert_int_equal(thr.n, 4);
	assert_int_equal(s.wait_ns, 500 + 700 + 4 + 20);
	/* without thr: no waits read, the rest as before */
	assert_int_equal(probe_read_proc(root, 200, false, &s, NULL), 0);
	assert_int_equal(s.wait_ns, 0);
	assert_true(s.rss_ok);

	/* malformed: a clear error of the waits, CPU and memory still read */
	static const char *const bad[] = {
		"12 abc 3\n",
		"-5 3 1\n",
		"1 2\n",
		"1 2 3 4\n",
		"",
		"\n",
		"99999999999999999999 1 1\n",
		"1 2 3x\n",
		"1,2,3\n",
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		proc(220, 1, 7, 0, 10);
		sched(220, 220, "5 6 7\n");
		sched(220, 221, bad[i]);
		assert_int_equal(probe_read_proc(root, 220, false, &s, &thr), 0);
		CHECK(thr.err == -EINVAL, "'%s': err %d", bad[i], thr.err);
		assert_int_equal(thr.bad_tid, 221);
		assert_true(s.user_ns > 0 && s.rss_ok);
	}
	uint64_t run = 0, wait = 0;
	assert_int_equal(probe_read_schedstat(root, 220, 220, &run, &wait), 0);
	assert_int_equal(run, 5);
	assert_int_equal(wait, 6);
	assert_int_equal(probe_read_schedstat(root, 220, 221, &run, &wait), -EINVAL);
	assert_int_equal(probe_read_schedstat(root, 220, 999, &run, &wait), -ENOENT);
	/* a thread whose folder is there but not its schedstat: a kernel
	 * without CONFIG_SCHED_INFO */
	proc(230, 1, 7, 0, 10);
	put("230/task/230/status", "Name:\twe\n");
	assert_int_equal(probe_read_proc(root, 230, false, &s, &thr), 0);
	assert_int_equal(thr.err, -ENOENT);
	assert_int_equal(thr.bad_tid, 230);
	/* no task folder at all */
	proc(240, 1, 7, 0, 10);
	assert_int_equal(probe_read_proc(root, 240, false, &s, &thr), 0);
	assert_int_equal(thr.err, -ENOENT);
	/* given TIDs (self-contained): one that exited is skipped */
	struct probe_threads t2 = {0};
	pid_t tids[] = {203, 4242, 200};
	probe_read_tids(root, 200, tids, 3, &t2);
	assert_int_equal(t2.err, 0);
	assert_int_equal(t2.n, 2);
	assert_int_equal(t2.v[0].tid, 200);
	assert_int_equal(t2.v[1].tid, 203);
	probe_threads_free(&t2);
	probe_threads_free(&thr);
	probe_threads_free(&thr); /* twice is fine */
}

/* The waits between two readings: per TID, so a thread that exits takes
 * nothing away and one born since counts whole. */
static void test_threads_since(void **state)
{
	(void)state;
	struct probe_thread a[] = {{1, 10, 5}, {2, 10, 5}, {4, 100, 50}};
	struct probe_thread b[] = {{1, 20, 8}, {3, 4, 2}, {4, 1, 1}};
	struct probe_threads prev = {.v = a, .n = 3}, cur = {.v = b, .n = 3};
	uint64_t w, r;
	/* 1 grew by 3 (10 run); 2 exited: nothing; 3 born: whole; 4's counters
	 * went back (a reused TID): whole */
	probe_threads_since(&prev, &cur, &w, &r);
	assert_int_equal(w, 3 + 2 + 1);
	assert_int_equal(r, 10 + 4 + 1);
	struct probe_threads none = {0};
	probe_threads_since(&none, &cur, &w, &r);
	assert_int_equal(w, 8 + 2 + 1);
	probe_threads_since(&cur, &none, &w, &r);
	assert_int_equal(w, 0);
	assert_int_equal(r, 0);
	probe_threads_since(&cur, &cur, &w, &r);
	assert_int_equal(w, 0);
}

/* A cgroup's cpu.pressure: the "some" line's total, in µs. */
static void test_pressure(void **state)
{
	(void)state;
	char dir[300];
	uint64_t us = 0;
	put("p1/cpu.pressure", "some avg10=1.00 avg60=0.50 avg300=0.10 total=123456\n"
			       "full avg10=0.00 avg60=0.00 avg300=0.00 total=7\n");
	snprintf(dir, sizeof dir, "%s/p1", root);
	assert_int_equal(probe_read_pressure(dir, &us), 0);
	assert_int_equal(us, 123456);
	/* "full" first, and no trailing newline */
	put("p2/cpu.pressure", "full avg10=0.00 avg60=0.00 avg300=0.00 total=7\n"
			       "some avg10=1.00 avg60=0.50 avg300=0.10 total=99");
	snprintf(dir, sizeof dir, "%s/p2", root);
	assert_int_equal(probe_read_pressure(dir, &us), 0);
	assert_int_equal(us, 99);
	static const char *const bad[] = {
		"some avg10=1.00 avg60=0.50 avg300=0.10\n",
		"full avg10=0.00 avg60=0.00 avg300=0.00 total=7\n",
		"some avg10=1.00 total=abc\n",
		"some avg10=1.00 total=-3\n",
		"some avg10=1.00 total=12x\n",
		"some total=99999999999999999999\n",
		"",
		"garbage\n",
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		put("p3/cpu.pressure", bad[i]);
		snprintf(dir, sizeof dir, "%s/p3", root);
		int rc = probe_read_pressure(dir, &us);
		CHECK(rc == -EINVAL, "'%s': %d", bad[i], rc);
	}
	snprintf(dir, sizeof dir, "%s/nope", root);
	assert_int_equal(probe_read_pressure(dir, &us), -ENOENT);
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

/* The embedded target's threads: this test's own thread. */
static size_t my_tid(void *arg, pid_t *tids, size_t cap)
{
	(void)arg;
	if (!cap)
		return 0;
	tids[0] = gettid();
	return 1;
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
	struct probe_cfg cfg = {
		.self_cpu_ns = half_wall, .self_tids = my_tid, .interval_ns = 10 * 1000 * 1000};
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
	/* this thread's waits for a CPU, or a note saying why not */
	bool said = false;
	for (size_t i = 0; i < u.n_notes; i++)
		said = said || strstr(u.notes[i], "schedstat");
	CHECK(u.cpu_wait_known != said, "known %d, note %d", u.cpu_wait_known, said);
	assert_true(!u.cpu_wait_known || (u.cpu_wait_s >= 0 && u.cpu_wait_s < 0.2));
	assert_false(u.cpu_pressure_known);
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
		cmocka_unit_test(test_proc),          cmocka_unit_test(test_schedstat),
		cmocka_unit_test(test_threads_since), cmocka_unit_test(test_pressure),
		cmocka_unit_test(test_cgroup),        cmocka_unit_test(test_cgroup_cores),
		cmocka_unit_test(test_window),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
