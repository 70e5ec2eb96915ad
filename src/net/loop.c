#include "net/loop.h"

#include <errno.h>
#include <stdbool.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

int loop_init(struct loop *l)
{
	l->pwait2 = true;
	l->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (l->epfd < 0)
		return -errno;
	l->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (l->wake_fd < 0) {
		int e = errno;
		close(l->epfd);
		return -e;
	}
	return loop_add(l, l->wake_fd, EPOLLIN, l);
}

void loop_close(struct loop *l)
{
	if (l->wake_fd >= 0)
		close(l->wake_fd);
	if (l->epfd >= 0)
		close(l->epfd);
	l->wake_fd = l->epfd = -1;
}

static int ctl(struct loop *l, int op, int fd, uint32_t events, void *ptr)
{
	struct epoll_event ev = {.events = events, .data.ptr = ptr};
	return epoll_ctl(l->epfd, op, fd, &ev) < 0 ? -errno : 0;
}

int loop_add(struct loop *l, int fd, uint32_t events, void *ptr)
{
	return ctl(l, EPOLL_CTL_ADD, fd, events, ptr);
}

int loop_mod(struct loop *l, int fd, uint32_t events, void *ptr)
{
	return ctl(l, EPOLL_CTL_MOD, fd, events, ptr);
}

int loop_del(struct loop *l, int fd) { return ctl(l, EPOLL_CTL_DEL, fd, 0, NULL); }

int loop_wait(struct loop *l, struct epoll_event *ev, int max, uint64_t timeout_ns)
{
	int n;
	if (l->pwait2) {
		struct timespec ts, *tsp = NULL;
		if (timeout_ns != UINT64_MAX) {
			ts.tv_sec = (time_t)(timeout_ns / 1000000000ull);
			ts.tv_nsec = (long)(timeout_ns % 1000000000ull);
			tsp = &ts;
		}
		n = epoll_pwait2(l->epfd, ev, max, tsp, NULL);
		if (n >= 0)
			return n;
		if (errno != ENOSYS)
			return errno == EINTR ? 0 : -errno;
		l->pwait2 = false; /* an old kernel: milliseconds from now on */
	}
	int ms = timeout_ns == UINT64_MAX ? -1 : (int)((timeout_ns + 999999ull) / 1000000ull);
	n = epoll_wait(l->epfd, ev, max, ms);
	if (n < 0)
		return errno == EINTR ? 0 : -errno;
	return n;
}

void loop_wake(struct loop *l)
{
	uint64_t one = 1;
	ssize_t rc = write(l->wake_fd, &one, sizeof one);
	(void)rc;
}

void loop_wake_ack(struct loop *l)
{
	uint64_t v;
	ssize_t rc = read(l->wake_fd, &v, sizeof v);
	(void)rc;
}
