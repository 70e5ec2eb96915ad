/* pacer — a thin epoll event loop with nanosecond wait timeouts
 * (epoll_pwait2; falls back to a timerfd-free ms rounding-up wait on kernels
 * without it). One loop per thread; not thread-safe. */
#ifndef PACER_NET_LOOP_H
#define PACER_NET_LOOP_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/epoll.h>

struct loop {
	int epfd;
	int wake_fd; /* eventfd another thread may write to interrupt a wait */
	bool pwait2; /* epoll_pwait2 (ns timeouts) works; false after ENOSYS. Per loop: each
	              * thread has its own, so finding out is no data race */
};

/* Create the epoll set and its wake eventfd (registered with data.ptr = the
 * loop itself). 0 or -errno. */
int loop_init(struct loop *l);
void loop_close(struct loop *l);
/* Register / change / remove fd with `events`, and `ptr` as its data. */
int loop_add(struct loop *l, int fd, uint32_t events, void *ptr);
int loop_mod(struct loop *l, int fd, uint32_t events, void *ptr);
int loop_del(struct loop *l, int fd);
/* Wait up to timeout_ns (0: poll, UINT64_MAX: forever). Returns the number of
 * events, or -errno (EINTR is returned as 0 events). */
int loop_wait(struct loop *l, struct epoll_event *ev, int max, uint64_t timeout_ns);
/* Wake a loop blocked in loop_wait, from any thread. */
void loop_wake(struct loop *l);
/* Drain the wake eventfd after it fired. */
void loop_wake_ack(struct loop *l);

#endif
