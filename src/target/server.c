/* The embedded target server: the API, the threads and their loops,
 * accepting connections and handing them to the threads in turn. A
 * connection's life is in conn.c, answering a request in exec.c, dynamic
 * bodies in render.c (see target/server_int.h). */
#include <errno.h>
#include <malloc.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "net/loop.h"
#include "net/sock.h"
#include "target/server_int.h"

#define ACCEPT_PAUSE_NS (100 * NS_PER_MS) /* out of descriptors: retry accepting after */
#define MAX_EVENTS 256
#define ACCEPT_BURST 64      /* accepts per readable listener event */
#define TIMERS_PER_ROUND 4096 /* expired timers run per loop round; the rest next round */
#define LISTEN_BACKLOG 4096
#define LISTEN_TRIES 8        /* ephemeral ports tried for a TCP port whose UDP twin is free */
#define TIMER_SLACK_NS 1000UL /* the thread's timer slack: timers within ~1 us */
/* Memory freed is given back to the system (malloc_trim) once this much was
 * freed since the last time, at most once per TRIM_EVERY_NS a thread: the
 * allocator keeps freed memory otherwise, and a burst of hostile
 * connections would stay in the process's size. */
#define TRIM_BYTES (1u << 20)
#define TRIM_EVERY_NS NS_PER_S

/* ---- accepting ------------------------------------------------------ */

static void worker_take(struct worker *w, int fd) { target_conn_new(w, fd); }

static void hand_off(struct worker *w, int fd)
{
	struct target *t = w->t;
	if (t->n == 1) {
		worker_take(w, fd);
		return;
	}
	unsigned to = (unsigned)(atomic_fetch_add_explicit(&t->ticket, 1, memory_order_relaxed) % t->n);
	if (to == w->idx) {
		worker_take(w, fd);
		return;
	}
	struct worker *o = &t->w[to];
	pthread_mutex_lock(&o->mu);
	bool ok = o->inbox_n < INBOX_CAP;
	if (ok)
		o->inbox[o->inbox_n++] = fd;
	pthread_mutex_unlock(&o->mu);
	if (ok)
		loop_wake(&o->loop);
	else
		worker_take(w, fd);
}

static void drain_inbox(struct worker *w)
{
	int fds[INBOX_CAP];
	pthread_mutex_lock(&w->mu);
	unsigned n = w->inbox_n;
	memcpy(fds, w->inbox, n * sizeof fds[0]);
	w->inbox_n = 0;
	pthread_mutex_unlock(&w->mu);
	for (unsigned i = 0; i < n; i++)
		worker_take(w, fds[i]);
}

static void on_accept(struct worker *w)
{
	struct target *t = w->t;
	for (int i = 0; i < ACCEPT_BURST; i++) {
		int fd = accept4(t->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
				/* out of descriptors: stop accepting for a while rather
				 * than spin on a listener that stays readable */
				loop_del(&w->loop, t->lfd);
				w->accept_paused = true;
				theap_arm(&w->heap, &w->accept_tn, w->now + ACCEPT_PAUSE_NS);
			}
			return;
		}
		uint_fast32_t open = atomic_fetch_add_explicit(&t->open, 1, memory_order_relaxed);
		if (open >= t->plan->max_connections) {
			atomic_fetch_sub_explicit(&t->open, 1, memory_order_relaxed);
			close(fd);
			stat_inc(&w->st.rejected);
			continue;
		}
		hand_off(w, fd);
	}
}

/* ---- the loop ------------------------------------------------------- */

static void run_timers(struct worker *w)
{
	for (int i = 0; i < TIMERS_PER_ROUND; i++) {
		struct theap_node *n = theap_pop_expired(&w->heap, w->now);
		if (!n)
			return;
		if (n == &w->accept_tn) {
			if (w->accept_paused && loop_add(&w->loop, w->t->lfd, EPOLLIN | EPOLLEXCLUSIVE,
			                                 &w->listen_tag) == 0)
				w->accept_paused = false;
			else if (w->accept_paused)
				theap_arm(&w->heap, &w->accept_tn, w->now + ACCEPT_PAUSE_NS);
			continue;
		}
		target_conn_timer((struct conn *)n);
	}
}

/* When w gives memory back (UINT64_MAX: nothing to give); mem_trim does. */
static uint64_t trim_due(const struct worker *w)
{
	return w->freed >= TRIM_BYTES ? w->trim_ns + TRIM_EVERY_NS : UINT64_MAX;
}

static void mem_trim(struct worker *w)
{
	if (trim_due(w) > w->now)
		return;
#ifdef __GLIBC__
	malloc_trim(0);
#endif
	w->freed = 0;
	w->trim_ns = w->now;
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct target *t = w->t;
	struct epoll_event ev[MAX_EVENTS];
	prctl(PR_SET_TIMERSLACK, TIMER_SLACK_NS, 0, 0, 0);
	atomic_store_explicit(&w->tid, gettid(), memory_order_release);
	w->now = clock_now_ns();
	while (!atomic_load_explicit(&t->stop, memory_order_acquire)) {
		uint64_t timeout = UINT64_MAX;
		struct theap_node *first = theap_peek(&w->heap);
		struct theap_node *sfirst = theap_peek(&w->sheap); /* HTTP/2 streams */
		if (sfirst && (!first || sfirst->deadline_ns < first->deadline_ns))
			first = sfirst;
		uint64_t at = first ? first->deadline_ns : UINT64_MAX;
		at = at < trim_due(w) ? at : trim_due(w);
		uint64_t qat = target_quic_next(w); /* HTTP/3 */
		at = at < qat ? at : qat;
		if (at != UINT64_MAX)
			timeout = at > w->now ? at - w->now : 0;
		int n = loop_wait(&w->loop, ev, MAX_EVENTS, timeout);
		w->now = clock_now_ns();
		for (int i = 0; i < n; i++) {
			void *p = ev[i].data.ptr;
			if (p == &w->loop) {
				loop_wake_ack(&w->loop);
				drain_inbox(w);
			} else if (p == &w->listen_tag) {
				on_accept(w);
			} else if (p == &w->udp_tag) {
				target_quic_input(w);
			} else {
				struct conn *c = p;
				if (!c->dead)
					target_conn_event(c, ev[i].events);
			}
		}
		run_timers(w);
		target_h2_timers(w);
		target_conn_settle_dirty(w);
		target_quic_timers(w);
		target_quic_flush(w);
		target_conn_reap(w);
		mem_trim(w);
	}
	/* close everything this thread owns */
	while (w->live)
		target_conn_close(w->live);
	target_conn_reap(w);
	pthread_mutex_lock(&w->mu); /* fds handed over but never taken */
	for (unsigned i = 0; i < w->inbox_n; i++)
		close(w->inbox[i]);
	w->inbox_n = 0;
	pthread_mutex_unlock(&w->mu);
	while (w->free_list) {
		struct conn *c = w->free_list;
		w->free_list = c->next;
		target_conn_free(c);
	}
	w->n_free = 0;
	target_h2_worker_free(w);
	target_quic_worker_free(w);
	return NULL;
}

/* ---- public --------------------------------------------------------- */

static unsigned addr_port(const struct net_addr *a)
{
	if (a->ss.ss_family == AF_INET)
		return ntohs(((const struct sockaddr_in *)&a->ss)->sin_port);
	if (a->ss.ss_family == AF_INET6)
		return ntohs(((const struct sockaddr_in6 *)&a->ss)->sin6_port);
	return 0;
}

static void worker_destroy(struct worker *w)
{
	theap_free(&w->heap);
	theap_free(&w->sheap);
	theap_free(&w->qheap);
	theap_free(&w->h3heap);
	target_quic_worker_free(w); /* when the thread never ran */
	loop_close(&w->loop);
	pthread_mutex_destroy(&w->mu);
}

int target_start(struct target **out, const struct target_plan *plan, const struct net_addr *listen,
                 unsigned threads)
{
	return target_start_tls(out, plan, listen, threads, NULL);
}

int target_start_tls(struct target **out, const struct target_plan *plan,
                     const struct net_addr *listen, unsigned threads, struct tls_ctx *tls)
{
	struct target_opts o = {.tls = tls};
	return target_start_opts(out, plan, listen, threads, &o);
}

int target_start_opts(struct target **out, const struct target_plan *plan,
                      const struct net_addr *listen, unsigned threads, const struct target_opts *o)
{
	*out = NULL;
	if (!plan || !listen || !o || threads == 0 || threads > TARGET_MAX_THREADS ||
	    o->max_streams > TARGET_H2_STREAMS_MAX)
		return -EINVAL;
	struct target *t = calloc(1, sizeof *t);
	if (!t)
		return -ENOMEM;
	t->plan = plan;
	t->tls = o->tls;
	t->n = threads;
	t->h2 = o->h2;
	t->quic = o->quic;
	t->max_streams = o->max_streams ? o->max_streams : TARGET_H2_STREAMS_DEFAULT;
	atomic_init(&t->stop, false);
	atomic_init(&t->ticket, 0);
	atomic_init(&t->open, 0);
	target_canned_build(t);
	int brc = target_h2_build(t);
	if (!brc)
		brc = target_h3_build(t);
	if (brc < 0) {
		target_h2_free_plan(t);
		target_h3_free_plan(t);
		free(t);
		return brc;
	}
	t->w = calloc(threads, sizeof *t->w);
	if (!t->w) {
		target_h2_free_plan(t);
		target_h3_free_plan(t);
		free(t);
		return -ENOMEM;
	}
	/* the TCP listener, and with HTTP/3 a UDP socket per thread on the same
	 * port (an ephemeral TCP port whose UDP twin is taken: another try) */
	int lrc = 0;
	for (int attempt = 0; attempt < LISTEN_TRIES; attempt++) {
		t->lfd = net_listen(listen, LISTEN_BACKLOG, false);
		if (t->lfd < 0) {
			lrc = t->lfd;
			break;
		}
		t->port = net_local_port(t->lfd);
		t->n = threads;
		lrc = target_quic_open(t, listen);
		if (lrc == 0)
			break;
		for (unsigned i = 0; i < threads; i++)
			target_quic_worker_free(&t->w[i]);
		close(t->lfd);
		t->lfd = -1;
		if (lrc != -EADDRINUSE || addr_port(listen) != 0)
			break;
	}
	if (lrc < 0) {
		free(t->w);
		target_h2_free_plan(t);
		target_h3_free_plan(t);
		free(t);
		return lrc;
	}
	int rc = 0;
	unsigned inited = 0;
	for (; inited < threads; inited++) {
		struct worker *w = &t->w[inited];
		w->t = t;
		w->idx = inited;
		theap_init(&w->heap);
		theap_init(&w->sheap);
		theap_init(&w->qheap);
		theap_init(&w->h3heap);
		theap_node_init(&w->accept_tn);
		rng_seed(&w->rng, plan->seed ^ (TARGET_GOLDEN_GAMMA * (inited + 1)));
		pthread_mutex_init(&w->mu, NULL);
		if ((rc = loop_init(&w->loop)) < 0) {
			pthread_mutex_destroy(&w->mu);
			break;
		}
		if ((rc = loop_add(&w->loop, t->lfd, EPOLLIN | EPOLLEXCLUSIVE, &w->listen_tag)) <
			    0 ||
		    (w->udp_fd >= 0 &&
		     (rc = loop_add(&w->loop, w->udp_fd, EPOLLIN, &w->udp_tag)) < 0)) {
			worker_destroy(w);
			break;
		}
	}
	sigset_t block, old;
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGHUP);
	sigaddset(&block, SIGQUIT);
	sigaddset(&block, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &block, &old);
	t->t0_ns = clock_now_ns();
	for (unsigned i = 0; rc == 0 && i < threads; i++) {
		int e = pthread_create(&t->w[i].th, NULL, worker_main, &t->w[i]);
		if (e) {
			rc = -e;
			break;
		}
		t->w[i].started = true;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc < 0) {
		atomic_store_explicit(&t->stop, true, memory_order_release);
		for (unsigned i = 0; i < inited; i++) {
			if (t->w[i].started) {
				loop_wake(&t->w[i].loop);
				pthread_join(t->w[i].th, NULL);
			}
			worker_destroy(&t->w[i]);
		}
		for (unsigned i = inited; i < threads; i++)
			target_quic_worker_free(&t->w[i]); /* never set up as workers */
		close(t->lfd);
		free(t->w);
		target_h2_free_plan(t);
		target_h3_free_plan(t);
		free(t);
		return rc;
	}
	*out = t;
	return 0;
}

int target_port(const struct target *t) { return t->port; }

int target_cpu_ns(const struct target *t, uint64_t *cpu_ns)
{
	uint64_t sum = 0;
	for (unsigned i = 0; i < t->n; i++) {
		clockid_t cid;
		int e = pthread_getcpuclockid(t->w[i].th, &cid);
		if (e)
			return -e;
		struct timespec ts;
		if (clock_gettime(cid, &ts) < 0)
			return -errno;
		sum += (uint64_t)ts.tv_sec * NS_PER_S + (uint64_t)ts.tv_nsec;
	}
	*cpu_ns = sum;
	return 0;
}

size_t target_tids(const struct target *t, pid_t *tids, size_t cap)
{
	size_t n = 0;
	for (unsigned i = 0; i < t->n && n < cap; i++) {
		pid_t tid = atomic_load_explicit(&t->w[i].tid, memory_order_acquire);
		if (tid > 0)
			tids[n++] = tid;
	}
	return n;
}

void target_stats(const struct target *t, struct target_stats *st)
{
	memset(st, 0, sizeof *st);
	for (unsigned i = 0; i < t->n; i++) {
		const struct target_stats *s = &t->w[i].st;
		st->connections += __atomic_load_n(&s->connections, __ATOMIC_RELAXED);
		st->rejected += __atomic_load_n(&s->rejected, __ATOMIC_RELAXED);
		st->requests += __atomic_load_n(&s->requests, __ATOMIC_RELAXED);
		st->bad_requests += __atomic_load_n(&s->bad_requests, __ATOMIC_RELAXED);
		st->timeouts += __atomic_load_n(&s->timeouts, __ATOMIC_RELAXED);
		st->misbehaved += __atomic_load_n(&s->misbehaved, __ATOMIC_RELAXED);
	}
}

void target_stop(struct target *t)
{
	if (!t)
		return;
	atomic_store_explicit(&t->stop, true, memory_order_release);
	for (unsigned i = 0; i < t->n; i++)
		loop_wake(&t->w[i].loop);
	for (unsigned i = 0; i < t->n; i++)
		pthread_join(t->w[i].th, NULL);
	/* connections other threads handed over after their owner exited */
	for (unsigned i = 0; i < t->n; i++) {
		for (unsigned k = 0; k < t->w[i].inbox_n; k++)
			close(t->w[i].inbox[k]); /* handed over after the owner exited */
		t->w[i].inbox_n = 0;
		worker_destroy(&t->w[i]);
	}
	close(t->lfd);
	free(t->w);
	target_h2_free_plan(t);
	target_h3_free_plan(t);
	free(t);
}
