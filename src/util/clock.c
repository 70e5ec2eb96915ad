#include "util/clock.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

static uint64_t read_clock(clockid_t id)
{
	struct timespec ts;
	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * NS_PER_S + (uint64_t)ts.tv_nsec;
}

uint64_t clock_now_ns(void) { return read_clock(CLOCK_MONOTONIC); }
uint64_t clock_wall_ns(void) { return read_clock(CLOCK_REALTIME); }
uint64_t clock_thread_cpu_ns(void) { return read_clock(CLOCK_THREAD_CPUTIME_ID); }

uint64_t clock_realtime_offset_ns(uint64_t *err_ns)
{
	/* the realtime read between two monotonic ones: the narrowest bracket of
	 * a few tries (a thread preempted between the reads widens it) */
	uint64_t best_gap = UINT64_MAX, off = 0;
	for (int i = 0; i < 4 && best_gap > 200; i++) {
		uint64_t m0 = clock_now_ns(), rt = clock_wall_ns(), m1 = clock_now_ns();
		if (m1 - m0 < best_gap) {
			best_gap = m1 - m0;
			off = rt - (m0 + best_gap / 2);
		}
	}
	if (err_ns)
		*err_ns = best_gap / 2 + 1;
	return off;
}

void clock_sleep_until_ns(uint64_t t_ns)
{
	struct timespec ts = {.tv_sec = (time_t)(t_ns / NS_PER_S), .tv_nsec = (long)(t_ns % NS_PER_S)};
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

uint64_t clock_thread_cpu_wait_ns(void)
{
	/* "cpu_time_ns run_delay_ns timeslices\n" */
	int fd = open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return UINT64_MAX;
	char buf[96];
	ssize_t n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return UINT64_MAX;
	buf[n] = '\0';
	uint64_t run, wait;
	if (sscanf(buf, "%" SCNu64 " %" SCNu64, &run, &wait) != 2)
		return UINT64_MAX;
	return wait;
}
