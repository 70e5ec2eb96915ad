/* pacer — engine: worker threads and the connection state machine.
 *
 * One worker = one thread = one epoll loop with its own connections, its own
 * share of the schedule and its own statistics. The only cross-thread state is
 * a stop flag, a done flag, and a few relaxed atomics read by the progress
 * line (each written by one thread only).
 *
 * Open loop: due times come from the thread's schedule; a due request is
 * chosen (in turn or at random) and goes to an idle connection of its host or
 * waits in that host's backlog (its latency clock is already running) while
 * more connections are opened up to the cap.
 * Closed loop: each connection sends its next request as soon as the previous
 * response is in. With several hosts, the worker keeps its share of the
 * concurrency outstanding instead: a request is chosen when a slot frees and
 * waits in its host's backlog when that host has no idle connection.
 *
 * Hosts: each worker keeps per host an idle list, open/connecting counts,
 * connect backoff and a FIFO backlog; backlog entries of all hosts share one
 * bounded pool (the per-thread backlog cap). The connection cap is per
 * worker over all hosts; a host that needs a connection at the cap closes
 * the least recently used idle connection of another host when it has none,
 * or fewer than its share while the other has more (evict_idle).
 *
 * Every request belongs to the phase (warm-up or measure) in which it was
 * scheduled. Timeouts: every deadline is start + timeout with a start that
 * only grows, so connecting and in-flight connections sit in one FIFO list in
 * deadline order and only its head is ever checked. */
#include "engine/engine.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include "http/h1.h"
#include "net/loop.h"
#include "net/tls.h"
#include "engine/inspect_eval.h"
#include "util/clock.h"
#include "util/err.h"

#define READ_BUF_CAP (64 * 1024)
#define MAX_EVENTS 256
#define CONNECT_BACKOFF_NS (10 * NS_PER_MS)   /* after a failed connect ... */
#define CONNECT_BACKOFF_MAX_NS (1 * NS_PER_S) /* ... doubling per failure in a row */
#define IDLE_WAIT_NS (100 * NS_PER_MS)

enum conn_state {
	CS_FREE = 0,
	CS_CONNECTING,
	CS_HANDSHAKE, /* connected, TLS handshake under way (counts as connecting) */
	CS_IDLE,
	CS_WRITING, /* request partly written */
	CS_READING, /* request written, waiting for the response */
};

struct worker;
struct conn;

struct list {
	struct conn *head, *tail;
	size_t len;
};

struct conn {
	int fd;
	enum conn_state state;
	struct conn *prev, *next; /* idle list or timed list (see `in`) */
	struct list *in;          /* the list the connection is on, or NULL */
	uint64_t connect_start_ns;
	uint64_t hs_start_ns;     /* TLS: connected, handshake started */
	struct tls_conn *tls;     /* NULL: plain TCP (or Unix socket) */
	uint32_t ev;              /* TLS: epoll interest registered */
	uint64_t sched_ns, write_ns, first_byte_ns, deadline_ns;
	uint64_t idle_ns;         /* when it last became idle (least recently used) */
	uint32_t host;            /* index into engine.hosts */
	const struct engine_req *req; /* the request in flight */
	size_t wr_off;
	bool got_byte;
	struct h1_resp resp;
	struct h1_capture cap; /* used only when cfg.inspect needs headers/body */
};

#define QE_NONE UINT32_MAX

/* A backlog entry: a due request waiting for a connection of its host. */
struct qent {
	uint64_t due_ns;
	uint32_t req;  /* index into cfg.reqs */
	uint32_t next; /* next entry of the same host's FIFO, or of the free list */
};

/* One worker's state for one host. */
struct hpool {
	struct list idle;
	uint32_t n_open, n_connecting;
	uint64_t backoff_until_ns;
	uint32_t connect_fails;  /* connect failures in a row (backoff doubles) */
	uint32_t q_head, q_tail; /* FIFO of struct qent, QE_NONE when empty */
	size_t q_len;
	struct tls_resume tls_resume; /* TLS: the last session, offered on reconnects */
	uint32_t fair;           /* its share of the worker's connections (by request share, >= 1) */
};

struct sec_rec {
	uint64_t completed, errors;
	size_t pairs_off, pairs_n;
};

struct worker {
	struct engine *e;
	uint32_t id;
	pthread_t thread;
	struct loop loop;

	/* share of the load */
	double rate_per_s;
	uint32_t max_conns;
	uint64_t quota; /* closed loop with --requests: measured requests to issue */
	uint64_t issued_measure;

	size_t next_req; /* index into cfg.reqs */
	struct rng order_rng; /* --order random */

	struct sched sched;
	bool sched_active;
	uint64_t next_due_ns;

	/* backlog entries of every host (open loop; closed loop with hosts) */
	struct qent *q;
	size_t q_cap, q_len;  /* q_len: entries in use, over all hosts */
	uint32_t q_free;      /* free list of returned entries */
	uint32_t q_hi;        /* entries [q_hi, q_cap) never used since the reset */

	struct conn *conns;
	struct conn *free_slots; /* singly linked through ->next */
	uint32_t n_open, n_connecting; /* over all hosts */
	struct list timed;
	struct hpool *hp;        /* per host */
	uint32_t n_hosts;

	char *rbuf;
	const struct inspect *inspect; /* NULL: no response rules */
	bool capture;                  /* rules look at headers or the body */
	bool by_name;                  /* 2 or more request names: count per name */

	struct phase_stats warm, meas;
	uint64_t last_completion_ns; /* of a measured request */

	/* per-second series of the measured phase */
	struct hist sec_hist;
	uint64_t sec_cur;
	struct sec_rec *secs;
	size_t secs_len, secs_cap;
	uint64_t (*pairs)[2];
	size_t pairs_len, pairs_cap;
	int oom;

	uint64_t cpu_ns, wall_ns; /* this thread's CPU and wall time over the step */
	uint64_t cpu_wait_ns;     /* its waits for a CPU over the step (UINT64_MAX: unknown) */

	/* read by the progress line; written only by this worker */
	_Alignas(64) _Atomic uint64_t pub_completed;
	_Atomic uint64_t pub_errors;
	_Atomic uint64_t pub_p99_ns;
	_Atomic uint64_t pub_last_sec_completed;
	_Atomic bool done;
};

struct engine {
	struct engine_cfg cfg;
	struct engine_host *hosts; /* n_hosts >= 1, owned (cfg.hosts copied, or made of cfg.addr) */
	uint32_t n_hosts;
	uint64_t host_reqs[ENGINE_MAX_HOSTS]; /* requests of the table per host */
	struct engine_step step;                  /* the current step */
	uint64_t t0_ns, warm_end_ns, meas_end_ns; /* meas_end: UINT64_MAX when by count */
	_Atomic bool stop;
	struct worker *w;
	uint32_t n_threads;
	uint32_t started;

	pthread_mutex_t mu;
	pthread_cond_t cv;
	uint64_t step_seq; /* bumped to start a step */
	bool quit;
	bool collected;    /* the last step's results were taken */
};

/* ---- intrusive list ---------------------------------------------------- */

static void list_push_tail(struct list *l, struct conn *c)
{
	c->in = l;
	c->next = NULL;
	c->prev = l->tail;
	if (l->tail)
		l->tail->next = c;
	else
		l->head = c;
	l->tail = c;
	l->len++;
}

static void list_remove(struct list *l, struct conn *c)
{
	if (c->prev)
		c->prev->next = c->next;
	else
		l->head = c->next;
	if (c->next)
		c->next->prev = c->prev;
	else
		l->tail = c->prev;
	c->prev = c->next = NULL;
	c->in = NULL;
	l->len--;
}

/* ---- statistics helpers ---------------------------------------------------- */

/* The phase an event at time t belongs to (a request: its scheduled time).
 * Connections opened before the start count in the first phase. */
static inline struct phase_stats *phase_of(struct worker *w, uint64_t t)
{
	return t < w->e->warm_end_ns && w->e->step.warmup_ns ? &w->warm : &w->meas;
}

static void series_push_sec(struct worker *w)
{
	if (w->secs_len == w->secs_cap) {
		size_t cap = w->secs_cap ? w->secs_cap * 2 : 64;
		struct sec_rec *n = realloc(w->secs, cap * sizeof *n);
		if (!n) {
			w->oom = 1;
			return;
		}
		w->secs = n;
		w->secs_cap = cap;
	}
	struct sec_rec *r = &w->secs[w->secs_len++];
	memset(r, 0, sizeof *r);
	r->pairs_off = w->pairs_len;
}

/* Close the current second: move its histogram into the sparse pair store. */
static void series_close_sec(struct worker *w)
{
	struct sec_rec *r = &w->secs[w->secs_len - 1];
	size_t cur = 0;
	uint64_t v, n;
	while (hist_next_nonzero(&w->sec_hist, &cur, &v, &n)) {
		if (w->pairs_len == w->pairs_cap) {
			size_t cap = w->pairs_cap ? w->pairs_cap * 2 : 1024;
			void *p = realloc(w->pairs, cap * sizeof *w->pairs);
			if (!p) {
				w->oom = 1;
				break;
			}
			w->pairs = p;
			w->pairs_cap = cap;
		}
		w->pairs[w->pairs_len][0] = v;
		w->pairs[w->pairs_len][1] = n;
		w->pairs_len++;
		r->pairs_n++;
	}
	atomic_store_explicit(&w->pub_p99_ns, hist_percentile(&w->sec_hist, 99.0),
			      memory_order_relaxed);
	atomic_store_explicit(&w->pub_last_sec_completed, r->completed, memory_order_relaxed);
	hist_reset(&w->sec_hist);
}

/* The series record for an event of a measured request at time now. */
static struct sec_rec *series_at(struct worker *w, uint64_t now)
{
	uint64_t warm_end = w->e->warm_end_ns;
	uint64_t sec = now > warm_end ? (now - warm_end) / NS_PER_S : 0;
	if (w->secs_len == 0) {
		series_push_sec(w);
		w->sec_cur = 0;
	}
	while (w->sec_cur < sec && !w->oom) {
		series_close_sec(w);
		series_push_sec(w);
		w->sec_cur++;
	}
	if (w->oom)
		return NULL;
	return &w->secs[w->secs_len - 1];
}

/* One more request that did not succeed, for the progress line. */
static void publish_error(struct worker *w)
{
	atomic_store_explicit(&w->pub_errors,
			      atomic_load_explicit(&w->pub_errors, memory_order_relaxed) + 1,
			      memory_order_relaxed);
}

/* A connection-level error (connect, TLS) of a connection to host h. */
static struct phase_stats *conn_error(struct worker *w, uint32_t h, enum err_kind k, uint64_t now)
{
	struct phase_stats *ph = phase_of(w, now);
	ph->errors[k]++;
	ph->host[h].conn_errors++;
	return ph;
}

static void count_error(struct worker *w, const struct conn *c, enum err_kind k, uint64_t now)
{
	struct phase_stats *ph = phase_of(w, c->sched_ns);
	ph->errors[k]++;
	ph->host[c->host].errors++;
	if (w->by_name)
		ph->name[c->req->name].errors++;
	publish_error(w);
	if (ph == &w->meas) {
		struct sec_rec *r = series_at(w, now);
		if (r)
			r->errors++;
	}
}

/* ---- connections ----------------------------------------------------------- */

static void conn_close(struct worker *w, struct conn *c)
{
	struct hpool *p = &w->hp[c->host];
	if (c->in)
		list_remove(c->in, c);
	if (c->state == CS_CONNECTING || c->state == CS_HANDSHAKE) {
		w->n_connecting--;
		p->n_connecting--;
	}
	if (c->tls) {
		tls_conn_free(c->tls);
		c->tls = NULL;
	}
	if (c->fd >= 0) {
		close(c->fd); /* also removes it from the epoll set */
		c->fd = -1;
	}
	c->state = CS_FREE;
	w->n_open--;
	p->n_open--;
	c->next = w->free_slots;
	w->free_slots = c;
}

/* A connect failed: wait before the next attempt, twice as long for each
 * failure in a row (a dead target is not hammered), up to a second. */
/* A connect to host h failed: wait before the next attempt to it, twice as
 * long for each failure in a row (a dead target is not hammered), up to a
 * second. Other hosts are not held back. */
static void connect_failed(struct worker *w, uint32_t h, uint64_t now)
{
	struct hpool *p = &w->hp[h];
	uint32_t k = p->connect_fails < 7 ? p->connect_fails : 7;
	uint64_t wait = CONNECT_BACKOFF_NS << k;
	p->backoff_until_ns = now + (wait < CONNECT_BACKOFF_MAX_NS ? wait : CONNECT_BACKOFF_MAX_NS);
	p->connect_fails++;
}

/* Connected (and TLS done): no longer connecting, failures forgotten. */
static void conn_connected(struct worker *w, struct conn *c)
{
	struct hpool *p = &w->hp[c->host];
	p->connect_fails = 0;
	p->n_connecting--;
	w->n_connecting--;
}

static void conn_open(struct worker *w, uint32_t h, uint64_t now)
{
	struct conn *c = w->free_slots;
	if (!c)
		return;
	int fd = net_connect_start(&w->e->hosts[h].addr);
	if (fd < 0) {
		conn_error(w, h, ERRK_CONNECT, now);
		connect_failed(w, h, now);
		return;
	}
	if (loop_add(&w->loop, fd, EPOLLIN | EPOLLOUT, c) < 0) {
		close(fd);
		conn_error(w, h, ERRK_CONNECT, now);
		connect_failed(w, h, now);
		return;
	}
	w->free_slots = c->next;
	c->fd = fd;
	c->host = h;
	c->state = CS_CONNECTING;
	c->connect_start_ns = now;
	c->deadline_ns = now + w->e->cfg.timeout_ns;
	list_push_tail(&w->timed, c);
	w->n_open++;
	w->n_connecting++;
	w->hp[h].n_open++;
	w->hp[h].n_connecting++;
}

static void conn_make_idle(struct worker *w, struct conn *c, uint64_t now)
{
	c->state = CS_IDLE;
	c->idle_ns = now;
	list_push_tail(&w->hp[c->host].idle, c);
}

/* ---- transport: plain socket or TLS ------------------------------------------ */

/* TLS: make `ev` the registered epoll interest (a TLS read may need the
 * socket writable, a write readable). */
static void conn_want(struct worker *w, struct conn *c, uint32_t ev)
{
	if (c->ev != ev) {
		loop_mod(&w->loop, c->fd, ev, c);
		c->ev = ev;
	}
}

/* A TLS failure on an established connection: keep OpenSSL's reason (the
 * error itself is counted by the caller, as a read or write error). */
static void conn_tls_reason(struct worker *w, struct conn *c)
{
	phase_stats_tls_reason(phase_of(w, clock_now_ns()), tls_fail_reason(c->tls));
}

/* Write through the transport: bytes written, -EAGAIN (wait for an event;
 * TLS registers the one it needs), or another negative errno. */
static ssize_t conn_tx(struct worker *w, struct conn *c, const char *buf, size_t len)
{
	if (!c->tls) {
		for (;;) {
			ssize_t n = write(c->fd, buf, len);
			if (n >= 0 || errno != EINTR)
				return n >= 0 ? n : -errno;
		}
	}
	ssize_t n = tls_write(c->tls, buf, len);
	if (n > 0)
		return n;
	if (n == TLS_WANT_WRITE || n == TLS_WANT_READ) {
		conn_want(w, c, n == TLS_WANT_WRITE ? EPOLLIN | EPOLLOUT : EPOLLIN);
		return -EAGAIN;
	}
	conn_tls_reason(w, c);
	return -EPROTO;
}

/* Read through the transport: bytes (0 at the end of the stream), -EAGAIN
 * (nothing now), or another negative errno. */
static ssize_t conn_rx(struct worker *w, struct conn *c, char *buf, size_t cap)
{
	if (!c->tls) {
		for (;;) {
			ssize_t n = read(c->fd, buf, cap);
			if (n >= 0 || errno != EINTR)
				return n >= 0 ? n : -errno;
		}
	}
	ssize_t n = tls_read(c->tls, buf, cap);
	if (n == TLS_WANT_WRITE) {
		conn_want(w, c, EPOLLIN | EPOLLOUT);
		return -EAGAIN;
	}
	if ((c->ev & EPOLLOUT) && c->state != CS_WRITING)
		conn_want(w, c, EPOLLIN); /* a read that wanted a write got it */
	if (n >= 0)
		return n;
	if (n == TLS_WANT_READ)
		return -EAGAIN;
	conn_tls_reason(w, c);
	return -EPROTO;
}

/* Write what remains of the request; returns false if the connection died. */
static bool conn_write(struct worker *w, struct conn *c)
{
	const struct engine_req *rq = c->req;
	while (c->wr_off < rq->len) {
		ssize_t n = conn_tx(w, c, rq->buf + c->wr_off, rq->len - c->wr_off);
		if (n > 0) {
			c->wr_off += (size_t)n;
			phase_of(w, c->sched_ns)->bytes_out += (uint64_t)n;
			continue;
		}
		if (n == -EAGAIN || n == -EWOULDBLOCK) {
			if (c->state != CS_WRITING) {
				c->state = CS_WRITING;
				if (!c->tls) /* TLS registered what it waits for */
					loop_mod(&w->loop, c->fd, EPOLLIN | EPOLLOUT, c);
			}
			return true;
		}
		count_error(w, c, ERRK_WRITE, clock_now_ns());
		conn_close(w, c);
		return false;
	}
	if (c->tls)
		conn_want(w, c, EPOLLIN);
	else if (c->state == CS_WRITING)
		loop_mod(&w->loop, c->fd, EPOLLIN, c);
	c->state = CS_READING;
	return true;
}

/* The next request: in turn, or at random. Its index into cfg.reqs. */
static inline uint32_t pick_req(struct worker *w)
{
	const struct engine_cfg *cfg = &w->e->cfg;
	if (cfg->order_random)
		return (uint32_t)(rng_next(&w->order_rng) % cfg->n_reqs);
	uint32_t r = (uint32_t)w->next_req;
	if (++w->next_req == cfg->n_reqs)
		w->next_req = 0;
	return r;
}

/* Hand request rq (NULL: the next one), scheduled at sched_ns, to an idle
 * connection of its host. */
static void conn_send(struct worker *w, struct conn *c, uint64_t sched_ns,
		      const struct engine_req *rq)
{
	uint64_t now = clock_now_ns();
	list_remove(&w->hp[c->host].idle, c);
	struct phase_stats *ph = phase_of(w, sched_ns);
	ph->sent++;
	if (w->e->cfg.open_loop)
		hist_record(&ph->timing[TIM_SEND_LAG], now > sched_ns ? now - sched_ns : 0);
	c->sched_ns = sched_ns;
	c->write_ns = now;
	c->deadline_ns = now + w->e->cfg.timeout_ns;
	c->req = rq ? rq : &w->e->cfg.reqs[pick_req(w)];
	c->wr_off = 0;
	c->got_byte = false;
	h1_resp_init(&c->resp, c->req->head);
	if (w->capture)
		h1_resp_capture(&c->resp, &c->cap);
	c->state = CS_READING; /* conn_write turns it into CS_WRITING if needed */
	list_push_tail(&w->timed, c);
	conn_write(w, c);
}

static void publish_completed(struct worker *w)
{
	atomic_store_explicit(&w->pub_completed,
			      atomic_load_explicit(&w->pub_completed, memory_order_relaxed) + 1,
			      memory_order_relaxed);
}

/* The per-name figures of a completed response (two names or more): out
 * of line and behind one flag, so that conn_done of a one-name run does
 * what it did before names were counted. */
static __attribute__((noinline)) void name_done(struct phase_stats *ph, const struct conn *c,
						bool ok, uint64_t now)
{
	struct name_stats *ns = &ph->name[c->req->name];
	ns->completed++;
	ns->ok += ok;
	hist_record(&ns->latency, now - c->sched_ns);
}

/* A full response arrived. */
static void conn_done(struct worker *w, struct conn *c, uint64_t now)
{
	struct phase_stats *ph = phase_of(w, c->sched_ns);
	ph->completed++;
	ph->host[c->host].completed++;
	int st = c->resp.status;
	bool ok = w->inspect ? inspect_response(w->inspect, st, c->resp.cap, ph)
			     : inspect_default_ok(st);
	ph->success_ok += ok;
	ph->host[c->host].errors += !ok;
	if (st >= STATUS_MIN && st <= STATUS_MAX) {
		ph->status[st]++;
		ph->status_failed[st] += !ok;
	}
	if (w->by_name)
		name_done(ph, c, ok, now);
	hist_record(&ph->timing[TIM_LATENCY], now - c->sched_ns);
	hist_record(&ph->timing[ok ? TIM_LATENCY_OK : TIM_LATENCY_FAILED], now - c->sched_ns);
	hist_record(&ph->timing[TIM_SERVICE], now - c->write_ns);
	hist_record(&ph->timing[TIM_TTFB], c->first_byte_ns - c->write_ns);
	if (now > c->deadline_ns)
		ph->late++;
	if (ph == &w->meas) {
		w->last_completion_ns = now;
		struct sec_rec *r = series_at(w, now);
		if (r) {
			r->completed++;
			r->errors += !ok;
			hist_record(&w->sec_hist, now - c->sched_ns);
		}
	}
	publish_completed(w);
	if (!ok)
		publish_error(w);
	list_remove(&w->timed, c);
	bool keep = c->resp.keep_alive && c->state == CS_READING;
	if (keep) {
		conn_make_idle(w, c, now);
	} else {
		ph->closed_by_server += c->resp.keep_alive ? 0 : 1;
		conn_close(w, c);
	}
}

static void conn_readable(struct worker *w, struct conn *c)
{
	for (;;) {
		ssize_t n = conn_rx(w, c, w->rbuf, READ_BUF_CAP);
		uint64_t now = clock_now_ns();
		if (n == -EAGAIN || n == -EWOULDBLOCK)
			return; /* TLS: also records that were not data (session tickets) */
		if (c->state == CS_IDLE) {
			/* The server closed an idle keep-alive connection (or sent
			 * bytes nobody asked for: not reusable either). No request
			 * was outstanding, so no request error is counted. */
			phase_of(w, now)->closed_by_server++;
			conn_close(w, c);
			return;
		}
		if (n <= 0) {
			if (n == 0 && c->got_byte && h1_resp_eof(&c->resp) == 0) {
				conn_done(w, c, now); /* close-delimited body: done, conn closes */
				return;
			}
			enum err_kind k = (n == 0 && !c->got_byte) ? ERRK_CLOSED : ERRK_READ;
			count_error(w, c, k, now);
			conn_close(w, c);
			return;
		}
		struct phase_stats *ph = phase_of(w, c->sched_ns);
		ph->bytes_in += (uint64_t)n;
		if (!c->got_byte) {
			c->got_byte = true;
			c->first_byte_ns = now;
		}
		ssize_t used = h1_resp_feed(&c->resp, w->rbuf, (size_t)n);
		if (used < 0) {
			count_error(w, c, ERRK_PARSE, now);
			conn_close(w, c);
			return;
		}
		if (h1_resp_done(&c->resp)) {
			/* Bytes beyond the response: we never pipeline, so the
			 * server sent something unasked; do not reuse it. */
			if ((size_t)used < (size_t)n)
				c->resp.keep_alive = false;
			conn_done(w, c, now);
			return;
		}
		if ((size_t)n < READ_BUF_CAP && !(c->tls && tls_pending(c->tls)))
			return; /* level-triggered: epoll tells us when there is more */
	}
}

static void copy_str(char *dst, size_t cap, const char *src)
{
	size_t n = strnlen(src, cap - 1);
	memcpy(dst, src, n);
	dst[n] = '\0';
}

/* Advance a TLS handshake; when done the connection becomes idle. A failure
 * is counted like a failed connect (errors.tls, backoff) with its reason. */
static void conn_handshake(struct worker *w, struct conn *c)
{
	int rc = tls_handshake(c->tls);
	if (rc == TLS_WANT_READ || rc == TLS_WANT_WRITE) {
		conn_want(w, c, rc == TLS_WANT_WRITE ? EPOLLIN | EPOLLOUT : EPOLLIN);
		return;
	}
	uint64_t now = clock_now_ns();
	if (rc != 0) {
		struct phase_stats *ph = conn_error(w, c->host, ERRK_TLS, now);
		phase_stats_tls_reason(ph, tls_fail_reason(c->tls));
		connect_failed(w, c->host, now);
		conn_close(w, c);
		return;
	}
	struct phase_stats *ph = phase_of(w, c->connect_start_ns);
	ph->tls_handshakes++;
	if (tls_resumed(c->tls))
		ph->tls_resumed++;
	for (int k = 0; k < 2; k++) { /* what was negotiated: for both phases */
		struct phase_stats *p = k ? &w->meas : &w->warm;
		if (!p->tls_version[0]) {
			copy_str(p->tls_version, sizeof p->tls_version, tls_version(c->tls));
			copy_str(p->tls_cipher, sizeof p->tls_cipher, tls_cipher(c->tls));
		}
	}
	hist_record(&ph->timing[TIM_HANDSHAKE], now - c->hs_start_ns);
	conn_connected(w, c);
	list_remove(&w->timed, c);
	conn_want(w, c, EPOLLIN);
	conn_make_idle(w, c, now);
}

/* Connected over TCP: start TLS. The handshake keeps the connect deadline
 * and counts as connecting until it is done. */
static void conn_start_tls(struct worker *w, struct conn *c, uint64_t now)
{
	const struct engine_host *h = &w->e->hosts[c->host];
	c->state = CS_HANDSHAKE;
	c->hs_start_ns = now;
	c->ev = EPOLLIN | EPOLLOUT; /* as conn_open registered it */
	if (tls_conn_new(&c->tls, h->tls, c->fd, h->tls_host,
			 w->e->cfg.tls_resume ? &w->hp[c->host].tls_resume : NULL) < 0) {
		struct phase_stats *ph = conn_error(w, c->host, ERRK_TLS, now);
		phase_stats_tls_reason(ph, "out of memory for a TLS connection");
		connect_failed(w, c->host, now);
		conn_close(w, c);
		return;
	}
	conn_handshake(w, c);
}

static void conn_event(struct worker *w, struct conn *c, uint32_t events)
{
	uint64_t now = clock_now_ns();
	if (c->state == CS_CONNECTING) {
		int rc = net_connect_result(c->fd);
		if (rc != 0 || (events & (EPOLLERR | EPOLLHUP))) {
			conn_error(w, c->host, ERRK_CONNECT, now);
			connect_failed(w, c->host, now);
			conn_close(w, c);
			return;
		}
		struct phase_stats *ph = phase_of(w, c->connect_start_ns);
		ph->conns_opened++;
		ph->host[c->host].conns_opened++;
		hist_record(&ph->timing[TIM_CONNECT], now - c->connect_start_ns);
		if (w->e->hosts[c->host].tls) {
			conn_start_tls(w, c, now);
			return;
		}
		conn_connected(w, c);
		list_remove(&w->timed, c);
		loop_mod(&w->loop, c->fd, EPOLLIN, c);
		conn_make_idle(w, c, now);
		return;
	}
	if (c->state == CS_HANDSHAKE) {
		conn_handshake(w, c);
		return;
	}
	/* TLS: a write may wait for readability, a read for writability */
	uint32_t wr_ev = c->tls ? EPOLLOUT | EPOLLIN : EPOLLOUT;
	if (c->state == CS_WRITING && (events & wr_ev)) {
		if (!conn_write(w, c))
			return;
	}
	if ((events & (EPOLLIN | EPOLLERR | EPOLLHUP)) || (c->tls && (c->ev & EPOLLOUT) &&
							       c->state != CS_WRITING))
		conn_readable(w, c);
}

/* ---- the worker loop ----------------------------------------------------- */

/* Append (due, request) to host h's backlog; false when the pool is full
 * (the per-thread backlog cap counts the entries of every host). */
static bool q_push(struct worker *w, uint32_t h, uint64_t due, uint32_t req)
{
	uint32_t i;
	if (w->q_free != QE_NONE) {
		i = w->q_free;
		w->q_free = w->q[i].next;
	} else if (w->q_hi < w->q_cap) {
		i = w->q_hi++;
	} else {
		return false;
	}
	w->q[i] = (struct qent){.due_ns = due, .req = req, .next = QE_NONE};
	struct hpool *p = &w->hp[h];
	if (p->q_tail == QE_NONE)
		p->q_head = i;
	else
		w->q[p->q_tail].next = i;
	p->q_tail = i;
	p->q_len++;
	w->q_len++;
	return true;
}

/* Take the oldest entry of a non-empty host backlog. */
static struct qent q_pop(struct worker *w, struct hpool *p)
{
	uint32_t i = p->q_head;
	struct qent v = w->q[i];
	p->q_head = v.next;
	if (p->q_head == QE_NONE)
		p->q_tail = QE_NONE;
	p->q_len--;
	w->q_len--;
	w->q[i].next = w->q_free;
	w->q_free = i;
	return v;
}

/* A host that refuses: its last connect failed and none is established. */
static inline bool host_down(const struct hpool *p)
{
	return p->connect_fails && p->n_open == p->n_connecting;
}

static bool stopping(struct worker *w)
{
	return atomic_load_explicit(&w->e->stop, memory_order_relaxed);
}

/* May a closed-loop worker issue another request now? */
static bool closed_can_issue(struct worker *w, uint64_t now)
{
	const struct engine *e = w->e;
	if (now < e->t0_ns || now >= e->meas_end_ns)
		return false;
	if (now >= e->warm_end_ns && e->step.requests && w->issued_measure >= w->quota)
		return false;
	return true;
}

/* At the cap: close the least recently used idle connection of another
 * host to make room for host h, when h has no connection at all, or has
 * fewer than its share and the other host more than its own (so that
 * connections settle at the shares instead of moving back and forth).
 * False when there is none to close. */
static bool evict_idle(struct worker *w, uint32_t h)
{
	bool starved = w->hp[h].n_open == 0;
	if (!starved && w->hp[h].n_open >= w->hp[h].fair)
		return false;
	struct conn *lru = NULL;
	for (uint32_t g = 0; g < w->n_hosts; g++) {
		struct conn *c = w->hp[g].idle.head; /* each idle list is oldest first */
		if (g != h && c && (starved || w->hp[g].n_open > w->hp[g].fair) &&
		    (!lru || c->idle_ns < lru->idle_ns))
			lru = c;
	}
	if (!lru)
		return false;
	conn_close(w, lru);
	return true;
}

/* Serve host h's backlog from its idle connections, then open connections
 * for what still waits (after failures one probe at a time; a host that
 * refuses is probed even with nothing waiting, since its requests are
 * dropped meanwhile), at the cap making room with evict_idle. */
static void serve_host(struct worker *w, uint32_t h, uint64_t now)
{
	const struct engine_cfg *cfg = &w->e->cfg;
	struct hpool *p = &w->hp[h];
	while (p->q_len && p->idle.head) {
		struct qent q = q_pop(w, p);
		conn_send(w, p->idle.head, q.due_ns, &cfg->reqs[q.req]);
	}
	size_t want = p->q_len > p->n_connecting ? p->q_len - p->n_connecting : 0;
	if (w->n_hosts > 1 && !want && host_down(p) && !p->n_connecting)
		want = 1;
	if (p->connect_fails && want > 1)
		want = p->n_connecting ? 0 : 1;
	while (want-- && now >= p->backoff_until_ns) {
		if (!w->free_slots && !evict_idle(w, h))
			break;
		conn_open(w, h, now);
	}
}

/* Closed loop with several hosts: keep the worker's share of the
 * concurrency outstanding (sent, or waiting for a connection of its host).
 * A request is scheduled when it is chosen; one for a host that refuses is
 * dropped (at most max_conns of them per call, so a dead target is not
 * spun on). */
static void closed_issue_hosts(struct worker *w)
{
	const struct engine_cfg *cfg = &w->e->cfg;
	uint32_t drops = 0;
	while ((w->timed.len - w->n_connecting) + w->q_len < w->max_conns) {
		uint64_t t = clock_now_ns();
		if (!closed_can_issue(w, t))
			break;
		if (t >= w->e->warm_end_ns)
			w->issued_measure++;
		struct phase_stats *ph = phase_of(w, t);
		ph->scheduled++;
		uint32_t r = pick_req(w);
		uint32_t h = cfg->reqs[r].host;
		struct hpool *p = &w->hp[h];
		if (p->idle.head) {
			conn_send(w, p->idle.head, t, &cfg->reqs[r]);
		} else if (host_down(p) || !q_push(w, h, t, r)) {
			ph->dropped++;
			if (++drops >= w->max_conns)
				break;
		}
	}
}

static void dispatch(struct worker *w, uint64_t now)
{
	const struct engine_cfg *cfg = &w->e->cfg;
	if (w->n_hosts > 1) {
		if (!cfg->open_loop)
			closed_issue_hosts(w);
		for (uint32_t h = 0; h < w->n_hosts; h++)
			serve_host(w, h, now);
		return;
	}
	if (cfg->open_loop) {
		serve_host(w, 0, now);
		return;
	}
	struct hpool *p = &w->hp[0];
	while (p->idle.head) {
		uint64_t t = clock_now_ns();
		if (!closed_can_issue(w, t))
			break;
		if (t >= w->e->warm_end_ns)
			w->issued_measure++;
		phase_of(w, t)->scheduled++;
		conn_send(w, p->idle.head, t, NULL);
	}
	/* Reopen connections (closed by the server or after errors), but in a
	 * count-bounded measure phase only as many as requests remain. */
	bool counted = w->e->step.requests && now >= w->e->warm_end_ns;
	while (w->n_open < w->max_conns && now >= p->backoff_until_ns && w->free_slots &&
	       closed_can_issue(w, now) &&
	       (!counted || w->quota - w->issued_measure > p->idle.len + w->n_connecting))
		conn_open(w, 0, now);
}

static void check_timeouts(struct worker *w, uint64_t now)
{
	while (w->timed.head && w->timed.head->deadline_ns <= now) {
		struct conn *c = w->timed.head;
		if (c->state == CS_CONNECTING) {
			conn_error(w, c->host, ERRK_CONNECT, now);
			connect_failed(w, c->host, now);
		} else if (c->state == CS_HANDSHAKE) {
			struct phase_stats *ph = conn_error(w, c->host, ERRK_TLS, now);
			phase_stats_tls_reason(ph, "TLS handshake timed out (--timeout)");
			connect_failed(w, c->host, now);
		} else {
			/* Not dropped: the time waited is a lower bound of its latency. */
			struct phase_stats *ph = phase_of(w, c->sched_ns);
			hist_record(&ph->timing[TIM_LATENCY], now - c->sched_ns);
			hist_record(&ph->timing[TIM_LATENCY_FAILED], now - c->sched_ns);
			if (w->by_name)
				hist_record(&ph->name[c->req->name].latency, now - c->sched_ns);
			count_error(w, c, ERRK_TIMEOUT, now);
		}
		conn_close(w, c);
	}
}

static uint64_t min_u64(uint64_t a, uint64_t b) { return a < b ? a : b; }

/* Per-step state back to the start; connections stay. */
static void worker_reset(struct worker *w)
{
	struct engine *e = w->e;
	const struct engine_cfg *cfg = &e->cfg;
	phase_stats_reset(&w->warm);
	phase_stats_reset(&w->meas);
	w->warm.n_hosts = w->meas.n_hosts = w->n_hosts;
	hist_reset(&w->sec_hist);
	w->secs_len = w->pairs_len = 0;
	w->sec_cur = 0;
	w->last_completion_ns = 0;
	w->issued_measure = 0;
	w->q_len = 0;
	w->q_free = QE_NONE;
	w->q_hi = 0;
	for (uint32_t h = 0; h < w->n_hosts; h++) {
		struct hpool *p = &w->hp[h];
		p->q_head = p->q_tail = QE_NONE;
		p->q_len = 0;
		p->backoff_until_ns = 0;
	}
	w->sched_active = false;
	atomic_store_explicit(&w->pub_p99_ns, 0, memory_order_relaxed);
	atomic_store_explicit(&w->pub_last_sec_completed, 0, memory_order_relaxed);
	if (cfg->open_loop) {
		w->rate_per_s = sched_split_rate(e->step.rate_per_s, cfg->threads, w->id);
		if (w->rate_per_s > 0) {
			/* Threads are offset by a fraction of the gap so that their
			 * constant schedules interleave rather than coincide. */
			sched_init(&w->sched, cfg->arrival, w->rate_per_s, e->t0_ns,
				   (double)w->id / cfg->threads,
				   cfg->seed * 0x9e3779b97f4a7c15ull + w->id);
			w->next_due_ns = sched_next(&w->sched);
			w->sched_active = true;
		}
	} else {
		w->quota = sched_split(e->step.requests, cfg->threads, w->id);
	}
}

/* The earliest end of a connect backoff that holds back a host with
 * something to do (UINT64_MAX: none). */
static uint64_t backoff_wake(const struct worker *w, uint64_t now)
{
	uint64_t wake = UINT64_MAX;
	for (uint32_t h = 0; h < w->n_hosts; h++) {
		const struct hpool *p = &w->hp[h];
		bool waits = p->q_len || (w->n_hosts > 1 && host_down(p) && !p->n_connecting);
		if (waits && p->backoff_until_ns > now)
			wake = min_u64(wake, p->backoff_until_ns);
	}
	return wake;
}

/* Open connections before the start, so the first requests do not pay for
 * them. With several hosts: first up to each host's share, the hosts of the
 * next requests first, then to the hosts of the next requests in turn. */
static void preopen(struct worker *w, uint64_t now)
{
	const struct engine_cfg *cfg = &w->e->cfg;
	if (w->n_hosts == 1) {
		while (w->free_slots && w->n_open < w->max_conns && now >= w->hp[0].backoff_until_ns)
			conn_open(w, 0, now);
		return;
	}
	size_t k = w->next_req;
	for (size_t i = 0; i < cfg->n_reqs && w->free_slots; i++) {
		uint32_t h = cfg->reqs[k].host;
		if (++k == cfg->n_reqs)
			k = 0;
		if (w->hp[h].n_open < w->hp[h].fair && now >= w->hp[h].backoff_until_ns)
			conn_open(w, h, now);
	}
	k = w->next_req;
	for (uint32_t i = w->n_open; i < w->max_conns && w->free_slots; i++) {
		uint32_t h = cfg->reqs[k].host;
		if (++k == cfg->n_reqs)
			k = 0;
		if (now >= w->hp[h].backoff_until_ns)
			conn_open(w, h, now);
	}
}

/* Run one step: warm-up, measure, drain. */
static void worker_step(struct worker *w, struct epoll_event *ev)
{
	struct engine *e = w->e;
	const struct engine_cfg *cfg = &e->cfg;
	uint64_t cpu0 = clock_thread_cpu_ns(), cpu_wait0 = clock_thread_cpu_wait_ns();
	uint64_t wall0 = clock_now_ns();
	worker_reset(w);

	/* Connected at each phase's start: now (carried over from the last
	 * step), and again when the warm-up ends (seen at the loop's first turn
	 * after it; only this thread opens or closes its connections). */
	w->warm.conns_open_at_start = w->meas.conns_open_at_start = w->n_open - w->n_connecting;
	bool meas_snapped = !e->step.warmup_ns;

	/* Connections are opened before the start; later ones open on demand. */
	uint64_t now = clock_now_ns();
	preopen(w, now);

	uint64_t drain_end = UINT64_MAX;
	/* The last iteration ended with due requests waiting while every
	 * connection was in use (open loop): its span counts in cap_wait_ns; its
	 * wait for events, or all of it when none came (a sleep or a spin to
	 * the next due time: UINT64_MAX), in cap_wait_idle_ns. */
	uint64_t held_from = 0, held_idle_ns = 0;
	for (;;) {
		now = clock_now_ns();
		if (!meas_snapped && now >= e->warm_end_ns) {
			w->meas.conns_open_at_start = w->n_open - w->n_connecting;
			meas_snapped = true;
		}
		if (held_from) {
			struct phase_stats *hp = phase_of(w, held_from);
			hp->cap_wait_ns += now - held_from;
			hp->cap_wait_idle_ns +=
				held_idle_ns == UINT64_MAX ? now - held_from : held_idle_ns;
			held_from = 0;
		}
		if (stopping(w))
			break;
		if (w->sched_active && now >= e->t0_ns) {
			while (w->next_due_ns <= now) {
				if (w->next_due_ns >= e->meas_end_ns) {
					w->sched_active = false;
					break;
				}
				struct phase_stats *ph = phase_of(w, w->next_due_ns);
				ph->scheduled++;
				hist_record(&ph->timing[TIM_LOOP_LAG], now - w->next_due_ns);
				/* chosen now, so that it waits for its own host */
				uint32_t r = pick_req(w);
				uint32_t h = cfg->reqs[r].host;
				if ((w->n_hosts > 1 && host_down(&w->hp[h])) ||
				    !q_push(w, h, w->next_due_ns, r))
					ph->dropped++;
				w->next_due_ns = sched_next(&w->sched);
			}
		}
		check_timeouts(w, now);
		dispatch(w, now);

		/* End of load: no more requests will be issued. */
		bool issuing = cfg->open_loop ? w->sched_active : closed_can_issue(w, now) || now < e->t0_ns;
		if (!issuing) {
			if (drain_end == UINT64_MAX)
				drain_end = now + e->step.drain_ns;
			bool busy = w->q_len || (w->timed.len > w->n_connecting);
			if (!busy || now >= drain_end)
				break;
		}

		uint64_t wake = now + IDLE_WAIT_NS;
		if (w->sched_active) {
			/* Sleep until spin_ns before the next due time, then poll:
			 * timer wake-ups overshoot (tens of us on some VMs), and a
			 * late wake-up is send lag. */
			uint64_t due = w->next_due_ns > e->t0_ns ? w->next_due_ns : e->t0_ns;
			wake = min_u64(wake, due > cfg->spin_ns ? due - cfg->spin_ns : 0);
		}
		if (w->timed.head)
			wake = min_u64(wake, w->timed.head->deadline_ns);
		if (!cfg->open_loop && now < e->t0_ns)
			wake = min_u64(wake, e->t0_ns);
		if (e->meas_end_ns != UINT64_MAX)
			wake = min_u64(wake, e->meas_end_ns);
		if (drain_end != UINT64_MAX)
			wake = min_u64(wake, drain_end);
		wake = min_u64(wake, backoff_wake(w, now));
		bool held = cfg->open_loop && w->q_len && !w->free_slots;
		uint64_t t_wait = held ? clock_now_ns() : 0;
		int n = loop_wait(&w->loop, ev, MAX_EVENTS, wake > now ? wake - now : 0);
		if (held) {
			held_from = now;
			held_idle_ns = n > 0 ? clock_now_ns() - t_wait : UINT64_MAX;
		}
		for (int i = 0; i < n; i++) {
			if (ev[i].data.ptr == &w->loop) {
				loop_wake_ack(&w->loop);
				continue;
			}
			struct conn *c = ev[i].data.ptr;
			if (c->state != CS_FREE)
				conn_event(w, c, ev[i].events);
		}
	}

	/* What is left: never sent, or sent without a response. Idle
	 * connections carry over to the next step; busy ones are closed. */
	for (uint32_t h = 0; h < w->n_hosts; h++)
		while (w->hp[h].q_len)
			phase_of(w, q_pop(w, &w->hp[h]).due_ns)->queued_at_end++;
	for (uint32_t i = 0; i < w->max_conns; i++) {
		struct conn *c = &w->conns[i];
		if (c->state == CS_READING || c->state == CS_WRITING) {
			struct phase_stats *ph = phase_of(w, c->sched_ns);
			ph->in_flight_at_end++;
			if (w->by_name)
				ph->name[c->req->name].in_flight_at_end++;
		}
		if (c->state != CS_FREE && c->state != CS_IDLE)
			conn_close(w, c);
	}
	if (w->secs_len)
		series_close_sec(w);
	w->cpu_ns = clock_thread_cpu_ns() - cpu0;
	uint64_t cpu_wait1 = clock_thread_cpu_wait_ns();
	bool waits_known = cpu_wait0 != UINT64_MAX && cpu_wait1 != UINT64_MAX;
	w->cpu_wait_ns = waits_known && cpu_wait1 >= cpu_wait0 ? cpu_wait1 - cpu_wait0 : UINT64_MAX;
	w->wall_ns = clock_now_ns() - wall0;
	atomic_store_explicit(&w->done, true, memory_order_release);
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct engine *e = w->e;
	prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0); /* wake within microseconds */
	struct epoll_event ev[MAX_EVENTS];
	uint64_t seen = 0;
	for (;;) {
		pthread_mutex_lock(&e->mu);
		while (e->step_seq == seen && !e->quit)
			pthread_cond_wait(&e->cv, &e->mu);
		bool quit = e->quit;
		seen = e->step_seq;
		pthread_mutex_unlock(&e->mu);
		if (quit)
			break;
		worker_step(w, ev);
	}
	for (uint32_t i = 0; i < w->max_conns; i++)
		if (w->conns[i].state != CS_FREE)
			conn_close(w, &w->conns[i]);
	return NULL;
}

/* ---- setup, progress, merge ---------------------------------------------- */

static void worker_free(struct worker *w)
{
	loop_close(&w->loop);
	for (uint32_t h = 0; h < w->n_hosts && w->hp; h++)
		tls_resume_clear(&w->hp[h].tls_resume);
	free(w->hp);
	free(w->q);
	for (uint32_t i = 0; i < w->max_conns && w->conns; i++)
		h1_capture_free(&w->conns[i].cap);
	free(w->conns);
	free(w->rbuf);
	free(w->secs);
	free(w->pairs);
	hist_free(&w->sec_hist);
	phase_stats_free(&w->warm);
	phase_stats_free(&w->meas);
}

static int worker_init(struct worker *w, struct engine *e, uint32_t id)
{
	const struct engine_cfg *cfg = &e->cfg;
	w->e = e;
	w->id = id;
	w->loop.epfd = w->loop.wake_fd = -1;
	atomic_store(&w->done, true);
	int rc = loop_init(&w->loop);
	if (rc)
		return rc;
	if (phase_stats_init(&w->warm) || phase_stats_init(&w->meas) ||
	    hist_init(&w->sec_hist, SERIES_SUB_BITS, HIST_MAX_NS))
		return -ENOMEM;
	/* Per-name figures only with several names: allocated here, once, so
	 * that a run of one name records nothing more per request. */
	if (cfg->n_names >= 2) {
		if (phase_stats_init_names(&w->warm, cfg->n_names) ||
		    phase_stats_init_names(&w->meas, cfg->n_names))
			return -ENOMEM;
		w->by_name = true;
	}
	w->hp = calloc(e->n_hosts, sizeof *w->hp);
	if (!w->hp)
		return -ENOMEM;
	w->n_hosts = e->n_hosts;
	for (uint32_t h = 0; h < w->n_hosts; h++) {
		w->hp[h].q_head = w->hp[h].q_tail = QE_NONE;
		uint64_t f = (uint64_t)sched_split(cfg->open_loop ? cfg->connections : cfg->concurrency,
						   cfg->threads, id) * e->host_reqs[h] / cfg->n_reqs;
		w->hp[h].fair = f ? (uint32_t)f : 1;
	}
	w->next_req = (size_t)((uint64_t)cfg->n_reqs * id / cfg->threads);
	rng_seed(&w->order_rng, cfg->seed * 0xbf58476d1ce4e5b9ull + id);
	w->rbuf = malloc(READ_BUF_CAP);
	if (!w->rbuf)
		return -ENOMEM;
	w->max_conns = (uint32_t)sched_split(cfg->open_loop ? cfg->connections : cfg->concurrency,
					     cfg->threads, id);
	if (w->max_conns) {
		w->conns = calloc(w->max_conns, sizeof *w->conns);
		if (!w->conns)
			return -ENOMEM;
	}
	const struct inspect *in = cfg->inspect;
	if (in && in->active) {
		w->inspect = in;
		w->capture = in->need_headers || in->need_body;
	}
	for (uint32_t i = w->max_conns; i-- > 0;) {
		w->conns[i].cap.headers = w->capture && in->need_headers;
		w->conns[i].cap.body_cap = w->capture ? in->need_body : 0;
		w->conns[i].fd = -1;
		w->conns[i].next = w->free_slots;
		w->free_slots = &w->conns[i];
	}
	return 0;
}

/* Size a worker's backlog for a step's rate (before the step starts). */
static int worker_size_queue(struct worker *w, double rate_per_s)
{
	size_t cap = w->e->cfg.queue_cap;
	if (!cap) {
		double c = rate_per_s * 30.0; /* 30 s of backlog */
		cap = c < 4096 ? 4096 : c > 4194304 ? 4194304 : (size_t)c;
	}
	if (cap > (size_t)QE_NONE - 1)
		cap = (size_t)QE_NONE - 1; /* entries are indexed with 32 bits */
	if (cap <= w->q_cap)
		return 0;
	struct qent *q = realloc(w->q, cap * sizeof *q);
	if (!q)
		return -ENOMEM;
	w->q = q;
	w->q_cap = cap;
	return 0;
}

static void engine_free(struct engine *e)
{
	for (uint32_t i = 0; i < e->n_threads; i++)
		worker_free(&e->w[i]);
	pthread_mutex_destroy(&e->mu);
	pthread_cond_destroy(&e->cv);
	free(e->w);
	free(e->hosts);
	free(e);
}

int engine_open(struct engine **out, const struct engine_cfg *cfg)
{
	if (cfg->threads == 0 || cfg->timeout_ns == 0 || !cfg->reqs || !cfg->n_reqs)
		return -EINVAL;
	if (cfg->n_hosts > ENGINE_MAX_HOSTS || (cfg->n_hosts && !cfg->hosts))
		return -EINVAL;
	uint32_t n_hosts = cfg->n_hosts ? cfg->n_hosts : 1;
	for (size_t i = 0; i < cfg->n_reqs; i++)
		if (!cfg->reqs[i].buf || !cfg->reqs[i].len || cfg->reqs[i].host >= n_hosts)
			return -EINVAL;
	if (cfg->n_names > RESULT_MAX_NAMES + 1)
		return -EINVAL;
	for (size_t i = 0; cfg->n_names >= 2 && i < cfg->n_reqs; i++)
		if (cfg->reqs[i].name >= cfg->n_names)
			return -EINVAL;
	if (cfg->open_loop ? cfg->connections == 0 : cfg->concurrency == 0)
		return -EINVAL;
	if (cfg->n_reqs > UINT32_MAX)
		return -EINVAL;
	struct engine *e = calloc(1, sizeof *e);
	if (!e)
		return -ENOMEM;
	e->hosts = calloc(n_hosts, sizeof *e->hosts);
	if (!e->hosts) {
		free(e);
		return -ENOMEM;
	}
	if (cfg->n_hosts)
		memcpy(e->hosts, cfg->hosts, n_hosts * sizeof *e->hosts);
	else
		e->hosts[0] = (struct engine_host){
			.addr = cfg->addr, .tls = cfg->tls, .tls_host = cfg->tls_host};
	e->n_hosts = n_hosts;
	for (size_t i = 0; i < cfg->n_reqs; i++)
		e->host_reqs[cfg->reqs[i].host]++;
	e->cfg = *cfg;
	e->cfg.hosts = e->hosts;
	e->cfg.n_hosts = n_hosts;
	e->n_threads = cfg->threads;
	e->collected = true;
	pthread_mutex_init(&e->mu, NULL);
	pthread_cond_init(&e->cv, NULL);
	e->w = aligned_alloc(64, ((sizeof *e->w * cfg->threads) + 63) / 64 * 64);
	if (!e->w) {
		free(e->hosts);
		free(e);
		return -ENOMEM;
	}
	memset(e->w, 0, sizeof *e->w * cfg->threads);
	int rc = 0;
	for (uint32_t i = 0; i < cfg->threads && !rc; i++)
		rc = worker_init(&e->w[i], e, i);
	sigset_t block, old;
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &block, &old);
	for (uint32_t i = 0; i < cfg->threads && !rc; i++) {
		rc = -pthread_create(&e->w[i].thread, NULL, worker_main, &e->w[i]);
		if (!rc)
			e->started++;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc) {
		engine_close(e);
		return rc;
	}
	*out = e;
	return 0;
}

int engine_step_start(struct engine *e, const struct engine_step *s)
{
	if (!e->collected || !engine_done(e))
		return -EBUSY;
	if (e->cfg.open_loop ? s->rate_per_s <= 0 || s->duration_ns == 0
			     : !s->requests && s->duration_ns == 0)
		return -EINVAL;
	for (uint32_t i = 0; i < e->n_threads; i++) {
		int rc = worker_size_queue(&e->w[i],
					   e->cfg.open_loop ? s->rate_per_s / e->n_threads : 0);
		if (rc)
			return rc;
	}
	pthread_mutex_lock(&e->mu);
	e->step = *s;
	/* Start shortly in the future so every worker is ready (and its
	 * connections are open) before the first request is due. */
	e->t0_ns = clock_now_ns() + 50 * NS_PER_MS;
	e->warm_end_ns = e->t0_ns + s->warmup_ns;
	bool by_count = !e->cfg.open_loop && s->requests && !s->duration_limits;
	e->meas_end_ns = by_count ? UINT64_MAX : e->warm_end_ns + s->duration_ns;
	atomic_store(&e->stop, false);
	for (uint32_t i = 0; i < e->n_threads; i++)
		atomic_store_explicit(&e->w[i].done, false, memory_order_relaxed);
	e->collected = false;
	e->step_seq++;
	pthread_cond_broadcast(&e->cv);
	pthread_mutex_unlock(&e->mu);
	return 0;
}

void engine_close(struct engine *e)
{
	if (!e)
		return;
	engine_interrupt(e);
	pthread_mutex_lock(&e->mu);
	e->quit = true;
	pthread_cond_broadcast(&e->cv);
	pthread_mutex_unlock(&e->mu);
	for (uint32_t i = 0; i < e->started; i++)
		pthread_join(e->w[i].thread, NULL);
	engine_free(e);
}

void engine_interrupt(struct engine *e)
{
	atomic_store(&e->stop, true);
	for (uint32_t i = 0; i < e->started; i++)
		loop_wake(&e->w[i].loop);
}

bool engine_done(struct engine *e)
{
	for (uint32_t i = 0; i < e->started; i++)
		if (!atomic_load_explicit(&e->w[i].done, memory_order_acquire))
			return false;
	return true;
}

void engine_progress(struct engine *e, struct engine_progress *p)
{
	memset(p, 0, sizeof *p);
	uint64_t now = clock_now_ns();
	p->elapsed_ns = now > e->t0_ns ? now - e->t0_ns : 0;
	p->in_warmup = now < e->warm_end_ns;
	if (e->meas_end_ns != UINT64_MAX)
		p->total_ns = e->meas_end_ns - e->t0_ns;
	for (uint32_t i = 0; i < e->started; i++) {
		struct worker *w = &e->w[i];
		p->completed += atomic_load_explicit(&w->pub_completed, memory_order_relaxed);
		p->errors += atomic_load_explicit(&w->pub_errors, memory_order_relaxed);
		uint64_t p99 = atomic_load_explicit(&w->pub_p99_ns, memory_order_relaxed);
		if (p99 > p->p99_ns)
			p->p99_ns = p99;
		p->rate_per_s += (double)atomic_load_explicit(&w->pub_last_sec_completed,
							      memory_order_relaxed);
	}
}

/* Merge the per-second series of every worker. */
static int merge_series(struct engine *e, struct run_result *res)
{
	size_t len = 0;
	for (uint32_t i = 0; i < e->n_threads; i++)
		if (e->w[i].secs_len > len)
			len = e->w[i].secs_len;
	if (!len)
		return 0;
	res->series = calloc(len, sizeof *res->series);
	if (!res->series)
		return -ENOMEM;
	res->series_len = len;
	struct hist h;
	if (hist_init(&h, SERIES_SUB_BITS, HIST_MAX_NS))
		return -ENOMEM;
	for (size_t s = 0; s < len; s++) {
		hist_reset(&h);
		struct series_point *pt = &res->series[s];
		for (uint32_t i = 0; i < e->n_threads; i++) {
			struct worker *w = &e->w[i];
			if (s >= w->secs_len)
				continue;
			struct sec_rec *r = &w->secs[s];
			pt->completed += r->completed;
			pt->errors += r->errors;
			for (size_t k = 0; k < r->pairs_n; k++)
				hist_record_n(&h, w->pairs[r->pairs_off + k][0],
					      w->pairs[r->pairs_off + k][1]);
		}
		pt->p50_ns = hist_percentile(&h, 50.0);
		pt->p99_ns = hist_percentile(&h, 99.0);
		size_t np = 0, cur = 0;
		uint64_t v, n;
		while (hist_next_nonzero(&h, &cur, &v, &n))
			np++;
		if (np) {
			pt->pairs = malloc(np * sizeof *pt->pairs);
			if (!pt->pairs) {
				hist_free(&h);
				return -ENOMEM;
			}
			cur = 0;
			while (hist_next_nonzero(&h, &cur, &v, &n)) {
				pt->pairs[pt->n_pairs][0] = v;
				pt->pairs[pt->n_pairs][1] = n;
				pt->n_pairs++;
			}
		}
	}
	hist_free(&h);
	return 0;
}

int engine_step_finish(struct engine *e, struct run_result *res)
{
	while (!engine_done(e)) {
		struct timespec ts = {0, 1000 * 1000};
		nanosleep(&ts, NULL);
	}
	e->collected = true;
	memset(res, 0, sizeof *res);
	int rc = phase_stats_init(&res->warmup);
	if (!rc)
		rc = phase_stats_init(&res->measure);
	if (!rc) {
		res->gen_thread_cpu_ns = calloc(e->n_threads, sizeof *res->gen_thread_cpu_ns);
		if (!res->gen_thread_cpu_ns)
			rc = -ENOMEM;
	}
	uint64_t last = 0;
	bool oom = false;
	res->gen_cpu_wait_known = true;
	for (uint32_t i = 0; i < e->n_threads && !rc; i++) {
		struct worker *w = &e->w[i];
		rc = phase_stats_merge(&res->warmup, &w->warm);
		if (!rc)
			rc = phase_stats_merge(&res->measure, &w->meas);
		if (w->last_completion_ns > last)
			last = w->last_completion_ns;
		res->gen_cpu_ns += w->cpu_ns;
		if (w->cpu_wait_ns == UINT64_MAX)
			res->gen_cpu_wait_known = false;
		else
			res->gen_cpu_wait_ns += w->cpu_wait_ns;
		if (res->gen_thread_cpu_ns)
			res->gen_thread_cpu_ns[i] = w->cpu_ns;
		double pct = w->wall_ns ? 100.0 * (double)w->cpu_ns / (double)w->wall_ns : 0;
		if (pct > res->gen_busiest_thread_pct)
			res->gen_busiest_thread_pct = pct;
		oom |= w->oom != 0;
	}
	if (!rc)
		rc = merge_series(e, res);
	res->interrupted = atomic_load(&e->stop);
	res->open_loop = e->cfg.open_loop;
	res->offered_rate_per_s = e->cfg.open_loop ? e->step.rate_per_s : 0;
	res->threads = e->n_threads;
	res->warmup_ns = e->step.warmup_ns;
	res->measure_start_ns = e->warm_end_ns;
	/* Measured time: the planned window, or up to the last measured response
	 * when that is later (a count-based run, or a backlog served in drain). */
	uint64_t window = e->meas_end_ns != UINT64_MAX ? e->meas_end_ns - e->warm_end_ns : 0;
	uint64_t to_last = last > e->warm_end_ns ? last - e->warm_end_ns : 0;
	res->measure_ns = to_last > window ? to_last : window;
	if (res->interrupted && to_last < window)
		res->measure_ns = to_last;
	if (oom && !rc)
		rc = -ENOMEM;
	return rc;
}
