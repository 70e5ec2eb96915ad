/* pacer — facts about the machine a result was measured on. */
#ifndef PACER_UTIL_SYSINFO_H
#define PACER_UTIL_SYSINFO_H

#include <sched.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct sysinfo_facts {
	char hostname[128];
	char os[72];        /* "Linux" */
	char kernel[128];   /* uname release */
	char arch[72];      /* uname machine */
	char cpu_model[160];
	int cores;          /* online CPUs */
};

/* Fill from uname(2), /proc/cpuinfo and sysconf; fields it cannot read are
 * "unknown" (cores 0). Never fails. */
void sysinfo_read(struct sysinfo_facts *s);

/* Steal time: what a hypervisor took of the CPUs (the 8th figure of each
 * "cpuN" line of /proc/stat, in USER_HZ ticks). A sample sums it over the
 * CPUs in `mask` (the generator's: its affinity) and over every CPU listed
 * (the machine's). */
struct steal_sample {
	bool known;            /* every per-CPU line had a steal figure */
	uint64_t gen_ticks;    /* over the CPUs in the mask */
	uint64_t all_ticks;    /* over every CPU listed */
	uint32_t gen_cpus;     /* CPUs of the mask that were listed */
	uint32_t all_cpus;     /* CPUs listed */
	uint64_t at_ns;        /* CLOCK_MONOTONIC when taken (sysinfo_steal_sample) */
	uint64_t tick_ns;      /* one tick (1e9 / USER_HZ; sysinfo_steal_sample) */
};

/* Parse /proc/stat's text (len bytes, need not be terminated). Lines other
 * than "cpuN" are skipped; a "cpuN" line without eight figures, or a CPU
 * number over CPU_SETSIZE, leaves the sample unknown. Never fails
 * otherwise. */
void sysinfo_steal_parse(const char *text, size_t len, const cpu_set_t *mask,
			 struct steal_sample *s);

/* Read /proc/stat and this thread's affinity now (unknown when either
 * cannot be read). */
void sysinfo_steal_sample(struct steal_sample *s);

/* Between two samples a then b: the steal in nanoseconds over the
 * generator's CPUs and over the machine's, the CPU time they had (wall time
 * × CPUs) from from_ns (or a, if later: a load that began after a was
 * taken, as at --start-at; an idle CPU collects next to no steal before
 * it), and the counters' resolution (a tick per CPU: each CPU's count may
 * be up to a tick short or over). False, all zero, when either is unknown
 * or the CPUs listed differ. */
struct steal_span {
	uint64_t gen_ns, gen_span_ns, gen_err_ns;
	uint64_t all_ns, all_span_ns, all_err_ns;
};
bool sysinfo_steal_between(const struct steal_sample *a, const struct steal_sample *b,
			   uint64_t from_ns, struct steal_span *out);

#endif
