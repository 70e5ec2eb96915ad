/* pacer — engine: the machine's floor (engine_floor). Before the load each
 * worker thread sleeps to random deadlines with the call its pacing uses
 * (clock_nanosleep for batched pacing, the loop's timed epoll wait for
 * precise), at its own timer slack and priority, and records how late it
 * woke; then, when the target is on this machine, one thread times round
 * trips of one byte over a loopback TCP connection to an echo thread. */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "engine/engine_int.h"

/* A timed sleep's deadline lies this far ahead, at random: the gaps of
 * pacing between 1 and 50 k requests/s a thread. */
#define FLOOR_GAP_MIN_NS (20 * NS_PER_US)
#define FLOOR_GAP_MAX_NS (1 * NS_PER_MS)
#define FLOOR_RTT_MAX 2000
#define FLOOR_RTT_TIMEOUT_MS 1000

void eng_worker_floor(struct worker *w, struct epoll_event *ev)
{
	struct engine *e = w->e;
	uint64_t end = clock_now_ns() + e->floor_ns;
	uint64_t x = 0x9e3779b97f4a7c15ull * (w->id + 1); /* xorshift: the gaps */
	hist_reset(&w->floor_hist);
	for (uint64_t now = clock_now_ns(); now < end && !atomic_load(&e->stop);) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		uint64_t at = now + FLOOR_GAP_MIN_NS + x % (FLOOR_GAP_MAX_NS - FLOOR_GAP_MIN_NS);
		if (e->batched) {
			clock_sleep_until_ns(at);
		} else {
			/* the loop's wait, to the deadline: wake-ups of its own
			 * (loop_wake) end it early and are not counted */
			int n = loop_wait(&w->loop, ev, MAX_EVENTS, at - now);
			if (n > 0) {
				loop_wake_ack(&w->loop);
				now = clock_now_ns();
				continue;
			}
		}
		now = clock_now_ns();
		hist_record(&w->floor_hist, now > at ? now - at : 0);
	}
	atomic_store_explicit(&w->done, true, memory_order_release);
}

struct echo {
	int fd;
	uint64_t cpu_ns;
};

/* The other end of the round trips: echo each byte until the peer closes. */
static void *echo_main(void *arg)
{
	struct echo *ec = arg;
	uint64_t cpu0 = clock_thread_cpu_ns();
	char b;
	while (read(ec->fd, &b, 1) == 1 && write(ec->fd, &b, 1) == 1)
		;
	ec->cpu_ns = clock_thread_cpu_ns() - cpu0;
	return NULL;
}

int eng_loopback_rtt(uint64_t duration_ns, struct gen_floor *f)
{
	int ls = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (ls < 0)
		return -errno;
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t al = sizeof a;
	int cs = -1, ss = -1, rc = 0;
	if (bind(ls, (struct sockaddr *)&a, sizeof a) || listen(ls, 1) ||
	    getsockname(ls, (struct sockaddr *)&a, &al)) {
		rc = -errno;
		goto out;
	}
	cs = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (cs < 0 || connect(cs, (struct sockaddr *)&a, sizeof a) ||
	    (ss = accept4(ls, NULL, NULL, SOCK_CLOEXEC)) < 0) {
		rc = -errno;
		goto out;
	}
	int one = 1;
	struct timeval tv = {.tv_sec = FLOOR_RTT_TIMEOUT_MS / 1000,
			     .tv_usec = (FLOOR_RTT_TIMEOUT_MS % 1000) * 1000};
	setsockopt(cs, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	setsockopt(ss, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	setsockopt(cs, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
	setsockopt(ss, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
	struct echo ec = {.fd = ss};
	pthread_t t;
	sigset_t all, old;
	sigfillset(&all); /* signals are for the thread that waits for them */
	pthread_sigmask(SIG_BLOCK, &all, &old);
	rc = -pthread_create(&t, NULL, echo_main, &ec);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc)
		goto out;
	struct hist h;
	rc = hist_init(&h, 7, HIST_MAX_NS);
	if (!rc) {
		uint64_t cpu0 = clock_thread_cpu_ns(), end = clock_now_ns() + duration_ns;
		char b = 'x';
		for (int i = 0; i < FLOOR_RTT_MAX && clock_now_ns() < end; i++) {
			uint64_t t0 = clock_now_ns();
			if (write(cs, &b, 1) != 1 || read(cs, &b, 1) != 1)
				break;
			hist_record(&h, clock_now_ns() - t0);
		}
		uint64_t cpu = clock_thread_cpu_ns() - cpu0;
		shutdown(cs, SHUT_RDWR);
		pthread_join(t, NULL);
		if (h.total) {
			f->rtt_known = true;
			f->rtt_samples = h.total;
			f->rtt_p50_ns = hist_percentile(&h, 50);
			f->rtt_p99_ns = hist_percentile(&h, 99);
			f->rtt_cpu_ns = (double)(cpu + ec.cpu_ns) / (double)h.total;
		}
		hist_free(&h);
	} else {
		shutdown(cs, SHUT_RDWR);
		pthread_join(t, NULL);
	}
out:
	if (ss >= 0)
		close(ss);
	if (cs >= 0)
		close(cs);
	close(ls);
	return rc;
}

