/* pacer — what the target uses: CPU time and resident memory of a process
 * (its threads, optionally its descendants) from /proc, of a cgroup v2 from
 * cpu.stat and memory.current, or of the embedded target through a
 * callback; and how long it waited for a CPU: its threads' run delay
 * (/proc/PID/task/TID/schedstat) or, for a cgroup, its CPU pressure
 * (cpu.pressure "some"). A sampler thread reads them every interval (100 ms
 * by default) into a bounded series; probe_window turns the series into
 * figures over a phase's [start, end] (CLOCK_MONOTONIC), interpolating CPU
 * and waits between samples and taking the RSS peak among the samples in
 * the window.
 *
 * Pure readers (probe_read_proc, probe_read_cgroup, probe_read_schedstat,
 * probe_read_pressure) take a root directory so tests can point them at a
 * fake tree. */
#ifndef PACER_PROBE_PROBE_H
#define PACER_PROBE_PROBE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "result/result.h"

#define PROBE_MAX_SAMPLES (1u << 19) /* ~14.5 h at 100 ms; later samples are dropped */

#define PROBE_MAX_THREADS 65536u /* threads whose waits one reading adds up */

struct probe_sample {
	uint64_t t_ns;          /* CLOCK_MONOTONIC */
	uint64_t user_ns, sys_ns; /* cumulative; split unknown: all in user_ns */
	uint64_t rss_bytes;
	/* cumulative waits for a CPU: the threads' summed run delay (pid,
	 * self-contained; see probe_threads_since), or a cgroup's cpu.pressure
	 * "some" total */
	uint64_t wait_ns;
	bool rss_ok;
};

/* The threads one reading found, each with its schedstat counters so far
 * (ns on a CPU, ns runnable waiting for one), sorted by TID. err: 0, or the
 * first failure: -ENOENT, a thread without schedstat (a kernel without
 * CONFIG_SCHED_INFO), -EINVAL, one that did not parse (bad_tid names it),
 * -E2BIG, more than PROBE_MAX_THREADS (the rest not read). */
struct probe_thread {
	pid_t tid;
	uint64_t run_ns, wait_ns;
};
struct probe_threads {
	struct probe_thread *v;
	size_t n, cap;
	int err;
	pid_t bad_tid;
};

/* One reading of process `pid` under `proc_root` ("/proc"): utime+stime of
 * all its threads, and VmRSS; with `children`, plus every live descendant.
 * With thr (may be NULL), also every such thread's schedstat into *thr
 * (reset first), and out->wait_ns the sum of their run delays. 0, -ENOENT
 * when the process is gone, or another negative errno; a schedstat that
 * cannot be read is thr->err, not a failure of the reading. */
int probe_read_proc(const char *proc_root, pid_t pid, bool children, struct probe_sample *out,
		    struct probe_threads *thr);

/* The schedstat of thread `tid` of process `pid`
 * (ROOT/PID/task/TID/schedstat: "RUN_NS WAIT_NS TIMESLICES"): 0, -ENOENT
 * when the file is absent, -EINVAL when it is not three numbers, or
 * another negative errno. */
int probe_read_schedstat(const char *proc_root, pid_t pid, pid_t tid, uint64_t *run_ns,
			 uint64_t *wait_ns);

/* The schedstat of the given threads of process `pid` appended to *thr
 * (sorted after): a thread whose task directory is gone has exited and is
 * skipped; one whose schedstat is absent or malformed sets thr->err. */
void probe_read_tids(const char *proc_root, pid_t pid, const pid_t *tids, size_t n,
		     struct probe_threads *thr);

/* What the threads of `cur` waited for a CPU (*wait_ns) and ran (*run_ns)
 * since `prev`, an earlier reading of the same source: per TID the growth
 * of its counters; a TID new in cur (or whose counters went back: a reused
 * TID) counts whole, as a thread born since; a TID gone from cur adds
 * nothing, so a thread that exits takes no waits away. */
void probe_threads_since(const struct probe_threads *prev, const struct probe_threads *cur,
			 uint64_t *wait_ns, uint64_t *run_ns);

void probe_threads_free(struct probe_threads *thr);

/* A cgroup v2 directory's CPU pressure: the "some" line's total= of its
 * cpu.pressure, in µs (the time at least one of its tasks was runnable
 * and waiting for a CPU). 0, -ENOENT when absent (a kernel without PSI, or
 * booted with psi=0), -EINVAL when it does not parse. */
int probe_read_pressure(const char *dir, uint64_t *some_us);

/* One reading of a cgroup v2 directory: cpu.stat user_usec/system_usec and
 * memory.current (rss_ok false when the memory controller is off). */
int probe_read_cgroup(const char *dir, struct probe_sample *out);

/* The cores a cgroup v2 directory may use: its cpu.max quota ("QUOTA
 * PERIOD": QUOTA / PERIOD cores, e.g. "150000 100000" is 1.5), or, when
 * that says "max" (no quota) or is absent, the CPUs of its
 * cpuset.cpus.effective ("0-3,6": 5). `cgroup` is absolute or relative to
 * /sys/fs/cgroup, as --target-cgroup. 0 with *cores and *basis ("cpu.max"
 * or "cpuset"; static), -ENOENT when neither file limits it, or another
 * negative errno / -EINVAL for a file that does not parse. Only the
 * directory's own files are read: a quota set on a parent is not seen. */
int probe_cgroup_cores(const char *cgroup, double *cores, const char **basis);

struct probe_cfg {
	pid_t pid;              /* > 0: probe this process */
	bool children;          /* with pid: its descendants too */
	const char *cgroup;     /* or: a cgroup v2 directory (absolute, or relative to
	                         * /sys/fs/cgroup) */
	/* or: the embedded target (self-contained): its CPU so far, in ns */
	uint64_t (*self_cpu_ns)(void *arg);
	/* and its threads' TIDs in this process (up to cap; the count), for
	 * their waits for a CPU; NULL: not measured */
	size_t (*self_tids)(void *arg, pid_t *tids, size_t cap);
	void *self_arg;
	uint64_t interval_ns;   /* 0: 100 ms */
};

struct probe;

/* Check the source is readable now (so a typo fails before any load) and
 * start sampling. 0, or a negative code with one line in err naming the PID
 * or path and the cause. */
int probe_start(struct probe **out, const struct probe_cfg *cfg, char *err, size_t cap);

/* The same check as probe_start, without starting anything: one reading
 * of the source. 0, or a negative code with one line in err. */
int probe_check(const struct probe_cfg *cfg, char *err, size_t cap);

/* Figures over [t0_ns, t1_ns]: takes a sample at once if the newest is older
 * than t1_ns, so a window that just ended is covered. Fills every field of
 * *out (known true unless no sample at all fell near the window, in which
 * case a note says why). Notes name a process that exited, samples
 * dropped past PROBE_MAX_SAMPLES, a wait for a CPU that could not be
 * measured and why, and, self-contained, that the RSS is the whole
 * process's. */
void probe_window(struct probe *p, uint64_t t0_ns, uint64_t t1_ns, struct target_usage *out);

/* Stop the sampler and free. NULL is fine. */
void probe_stop(struct probe *p);

#endif
