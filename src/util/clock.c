#include "util/clock.h"

#include <time.h>

static uint64_t read_clock(clockid_t id)
{
	struct timespec ts;
	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * NS_PER_S + (uint64_t)ts.tv_nsec;
}

uint64_t clock_now_ns(void) { return read_clock(CLOCK_MONOTONIC); }
uint64_t clock_wall_ns(void) { return read_clock(CLOCK_REALTIME); }
uint64_t clock_thread_cpu_ns(void) { return read_clock(CLOCK_THREAD_CPUTIME_ID); }
