/* pacer — monotonic and wall clocks in nanoseconds. */
#ifndef PACER_UTIL_CLOCK_H
#define PACER_UTIL_CLOCK_H

#include <stdint.h>

#include "util/time_units.h" /* NS_PER_US, NS_PER_MS, NS_PER_S */

/* CLOCK_MONOTONIC in ns: for every interval pacer measures. */
uint64_t clock_now_ns(void);
/* CLOCK_REALTIME in ns since the Unix epoch: only for labelling results. */
uint64_t clock_wall_ns(void);
/* CLOCK_REALTIME minus CLOCK_MONOTONIC now, in ns: maps a kernel receive
 * timestamp (realtime) onto the monotonic clock. A few vDSO reads; *err_ns
 * (may be NULL): how far off the offset can be (half the narrowest bracket
 * of monotonic reads around the realtime one). */
uint64_t clock_realtime_offset_ns(uint64_t *err_ns);
/* Sleep until CLOCK_MONOTONIC reaches t_ns (returns at once if it has). */
void clock_sleep_until_ns(uint64_t t_ns);
/* This thread's CPU time (user+sys) in ns. */
uint64_t clock_thread_cpu_ns(void);
/* The time this thread has spent runnable but waiting for a CPU (Linux
 * schedstat run delay), in ns; UINT64_MAX when the kernel does not say.
 * Reads /proc/thread-self/schedstat: a few syscalls, not for hot paths. */
uint64_t clock_thread_cpu_wait_ns(void);

#endif
