/* pacer — internals of the embedded target server, shared by its files:
 *   server.c  the API, the threads and their loops, accepting and handing
 *             connections to the threads in turn
 *   conn.c    one connection: reading and parsing, flushing, lingering,
 *             timers, TLS
 *   exec.c    answering one request: prepare, execute (work, latency,
 *             stalls), emit, the canned errors and misbehaviours; the
 *             choice of answer and its delay are shared with h2.c
 *   h2.c      HTTP/2 connections: an nghttp2 server session per connection,
 *             many streams each answered as exec.c answers a request
 *   quic.c    HTTP/3's transport: a UDP socket per thread, datagrams routed
 *             to QUIC connections (ngtcp2) by connection ID, their timers
 *   h3.c      HTTP/3 streams: an nghttp3 server session per QUIC
 *             connection, each request stream answered as h2.c answers one
 *   render.c  dynamic bodies, pure (target/render.h)
 * Everything here runs on the thread that owns the connection; the only
 * cross-thread state is marked in struct worker and struct target. Not for
 * use outside src/target. */
#ifndef PACER_TARGET_SERVER_INT_H
#define PACER_TARGET_SERVER_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "http/h1req.h"
#include "net/loop.h"
#include "target/render.h"
#include "target/target.h"
#include "target/theap.h"
#include "target/tstream.h"
#include "util/clock.h"
#include "util/rng.h"

#define IN_INIT (4u << 10)
#define IN_MAX (H1REQ_HEADERS_CAP + (4u << 10)) /* must exceed the head cap */
#define OUT_INIT (4u << 10)
#define OUT_MAX (64u << 10)
#define OUT_HIGH (32u << 10) /* stop taking requests while more than this waits */
#define COPY_MAX (4u << 10)  /* larger bodies are sent from where they are */
#define LINGER_NS (2 * NS_PER_S)
#define INBOX_CAP 256        /* connections handed to a thread, not yet taken */
#define N_CANNED 8           /* canned error responses (exec.c: canned_status) */
#define CANNED_CAP 160       /* bytes of one canned error response */

_Static_assert(OUT_HIGH + TARGET_HEADERS_CAP + 512 + COPY_MAX <= OUT_MAX, "out buffer too small");
_Static_assert(IN_MAX > H1REQ_HEADERS_CAP, "input buffer must exceed the head cap");

enum cstate {
	C_READ,   /* reading / parsing request heads */
	C_BODY,   /* discarding a request body */
	C_WAIT,   /* a request is executing: its latency timer runs */
	C_LINGER, /* write side shut; draining input before close */
};

struct worker;
struct h3_worker;
struct h2_sess;
struct h2_stream;
struct h2_plan;

struct conn {
	struct theap_node tn; /* first: the timer node leads to the conn */
	struct worker *w;
	struct conn *prev, *next; /* live list, or free list (next only) */
	int fd;
	uint32_t events; /* registered epoll interest */
	enum cstate state;
	bool dead;
	bool peer_eof;
	bool closing;       /* close once the output is flushed */
	bool write_blocked; /* the last send hit EAGAIN */
	bool need_more;     /* the input holds an incomplete request */
	struct tls_conn *tls; /* NULL: plain */
	bool tls_ready;       /* TLS handshake done */
	bool tls_rd_want_wr;  /* a TLS read waits for the socket to be writable */

	/* input: the current request starts at in + in_off */
	char *in;
	uint32_t in_cap, in_len, in_off;
	struct h1req req;
	uint64_t body_left;
	uint64_t req_start_ns; /* first byte of an incomplete request; 0: none */
	uint64_t last_io_ns;
	uint64_t linger_end_ns;

	/* output: out[out_off, out_len) then ext[ext_off, ext_len) */
	char *out;
	uint32_t out_cap, out_len, out_off;
	const char *ext;
	size_t ext_len, ext_off;
	uint64_t blocked_since_ns;
	/* slow body: bytes that may still go out before slow_next_ns */
	bool slow;
	size_t slow_budget;
	uint64_t slow_next_ns;

	/* the request being executed */
	const struct target_route *rt;
	const struct target_resp *resp;
	bool head_req, keep_alive, v10, garbage;
	uint64_t dispatch_ns, ready_ns;
	struct target_dyn dyn; /* rendered body (templates, kv) */
	uint64_t nreq;         /* requests answered on this connection */

	/* HTTP/2 (h2.c): the session, NULL for HTTP/1.1 */
	struct h2_sess *h2;
	struct tstream_set h2s; /* its streams (tstream.h): open ones, timed ones, budgets */
	bool proto_known;      /* h2c: the first bytes were not the client preface: HTTP/1.1 */
	bool h2_dirty;         /* on w->h2_dirty: streams answered by a timer, to be sent */
	struct conn *dirty_next;
};

struct target;

struct worker {
	struct target *t;
	unsigned idx;
	pthread_t th;
	bool started;
	_Atomic pid_t tid; /* its thread's ID, once it runs (0 before) */
	struct loop loop;
	struct theap heap;
	struct rng rng;
	uint64_t now;
	uint64_t seq;
	struct conn *live;
	struct conn *free_list;
	unsigned n_free;
	struct conn *dead; /* closed this iteration; recycled after it */
	char listen_tag;
	bool accept_paused;
	struct theap_node accept_tn;
	pthread_mutex_t mu; /* guards inbox and inbox_n: other threads hand off */
	int inbox[INBOX_CAP];
	unsigned inbox_n;
	struct target_stats st; /* written by this thread only, read by any */
	/* HTTP/2 (h2.c) */
	struct theap sheap;          /* the streams' timers (latency, slow bodies, timeouts) */
	struct tstream_pool h2pool;  /* its HTTP/2 streams (tstream.h) */
	struct conn *h2_dirty;       /* connections with answers a timer made */
	/* HTTP/3 (quic.c, h3.c) */
	int udp_fd; /* its own UDP socket on the port (SO_REUSEPORT); -1: none */
	char udp_tag;
	struct h3_worker *h3; /* its QUIC connections, their table and buffers */
	struct theap qheap;   /* the QUIC connections' timers (ngtcp2's expiry, idleness) */
	struct theap h3heap;  /* the HTTP/3 streams' timers (latency, slow bodies, timeouts) */
	/* memory given back (mem_trim) */
	size_t freed;                /* bytes of buffers freed since the last trim */
	uint64_t trim_ns;            /* when it last trimmed */
};

struct target {
	const struct target_plan *plan;
	struct tls_ctx *tls; /* NULL: plain HTTP; borrowed */
	int lfd;
	int port;
	unsigned n;
	struct worker *w;
	atomic_bool stop;
	atomic_uint_fast64_t ticket;
	atomic_uint_fast32_t open;
	uint64_t t0_ns;
	char errs[N_CANNED][CANNED_CAP]; /* canned error responses */
	size_t errs_len[N_CANNED];
	bool h2;              /* serve HTTP/2: ALPN h2 over TLS, prior knowledge in cleartext */
	uint32_t max_streams; /* HTTP/2: SETTINGS_MAX_CONCURRENT_STREAMS */
	struct h2_plan *h2p;  /* HTTP/2: the plan's answers as header fields (h2.c) */
	struct quic_ctx *quic; /* HTTP/3: the server's credentials (borrowed); NULL: no HTTP/3 */
	struct h3_plan *h3p;   /* HTTP/3: the plan's answers as header fields (h3.c) */
};

/* One thread writes a counter, others read it: a relaxed store suffices. */
static inline void stat_inc(uint64_t *c) { __atomic_store_n(c, *c + 1, __ATOMIC_RELAXED); }

/* Bytes waiting to be sent: out, then ext. */
static inline size_t out_pending(const struct conn *c)
{
	return (size_t)(c->out_len - c->out_off) + (c->ext ? c->ext_len - c->ext_off : 0);
}

/* Append p[0..n) to out; room must have been made by target_out_reserve. */
static inline void out_put(struct conn *c, const void *p, size_t n)
{
	memcpy(c->out + c->out_len, p, n);
	c->out_len += (uint32_t)n;
}

/* ---- conn.c ---- */

/* Serve the accepted socket fd on w (takes fd: on any failure it is closed
 * and the open count dropped). */
void target_conn_new(struct worker *w, int fd);

/* Close c now: cancel its timer, free its TLS state, close the socket, move
 * it from w->live to w->dead (recycled by target_conn_reap). Idempotent. */
void target_conn_close(struct conn *c);

/* Free a closed connection struct and its buffers. */
void target_conn_free(struct conn *c);

/* Recycle the connections closed during this loop iteration: up to a few
 * kept on w->free_list with their buffers, the rest freed. */
void target_conn_reap(struct worker *w);

/* epoll reported `ev` on c. */
void target_conn_event(struct conn *c, uint32_t ev);

/* c's timer fired (w->now at or past its deadline). */
void target_conn_timer(struct conn *c);

/* ---- exec.c ---- */

/* Make room for `need` more bytes in c->out (compacting, then growing up to
 * OUT_MAX). false: over the cap or out of memory. */
bool target_out_reserve(struct conn *c, size_t need);

/* Render the canned error responses into t->errs (once, before the threads
 * start). */
void target_canned_build(struct target *t);

/* Append the canned error response for `status` (one of the parser's
 * statuses, or 408) and mark c to close once it is sent. */
void target_emit_canned(struct conn *c, int status);

/* A request head is complete and matched `rt` (NULL: no route): choose the
 * answer, render a dynamic body from the query (query[0..qlen) lives in
 * the input buffer, which may be overwritten once the body is read). */
void target_prepare(struct conn *c, const struct target_route *rt, const char *query, size_t qlen);

/* The request's body has been read: do its CPU work, then answer now or
 * set c->ready_ns and enter C_WAIT. false: no room for the answer (as
 * target_emit): the caller closes c. */
bool target_execute(struct conn *c);

/* Append the response of the current request. false: no room for it in
 * c->out (over the cap or out of memory): the caller closes c. */
bool target_emit(struct conn *c);

/* The answer to a request that matched rt (NULL: the plan's 404): a variant
 * drawn from the status mix, *garbage when the route's garbage draw says so,
 * and a dynamic body rendered into dyn (emptied first) from
 * query[0..qlen). Shared by HTTP/1.1 and HTTP/2. */
const struct target_resp *target_choose(struct worker *w, const struct target_route *rt,
                                        bool *garbage, struct target_dyn *dyn, const char *query,
                                        size_t qlen);

/* Do rt's CPU work, then sample its latency (and the plan's stalls): the
 * time the answer is due (at or before w->now: at once). *dispatch_ns is
 * the start, for Server-Timing; w->now is set to the end of the work. */
uint64_t target_ready_at(struct worker *w, const struct target_route *rt, uint64_t *dispatch_ns);

/* Burn ns of this thread's CPU time in a real busy loop. */
void target_busy_work(uint64_t ns);

/* Write a Server-Timing value "app;dur=<ms>.<3 digits>" for dur_ns at p (no
 * NUL; at most 33 bytes). Returns its length. */
size_t target_fmt_timing(char *p, uint64_t dur_ns);

/* ---- conn.c, after h2.c's timers ---- */

/* Run, flush and re-arm the connections on w->h2_dirty, whose streams a
 * timer answered (target_h2_timers), and empty the list. */
void target_conn_settle_dirty(struct worker *w);

/* ---- h2.c ---- */

#define H2_PREFACE "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
#define H2_PREFACE_LEN 24

/* Build t->h2p (the plan's answers as HTTP/2 header fields) when t->h2.
 * 0 or -ENOMEM / -E2BIG (a variant with too many header fields). */
int target_h2_build(struct target *t);
/* Free t->h2p. */
void target_h2_free_plan(struct target *t);

/* c speaks HTTP/2 from now on: a server session with its SETTINGS queued
 * (the client's preface is still to be read from c->in). 0 or -ENOMEM. */
int target_h2_start(struct conn *c);

/* Feed c->in to the session and queue its output in c->out (c->ext for a
 * large frame), as conn_run does for HTTP/1.1. Returns 1 if it stopped only
 * to let the output drain, 0 if not, -1 when the session failed (the
 * caller closes c). */
int target_h2_run(struct conn *c);

/* Release c's streams (their timers too) and its session; called by
 * target_conn_close. */
void target_h2_close(struct conn *c);

/* Run the expired stream timers of w; the connections they answered on go
 * on w->h2_dirty, for target_conn_settle_dirty to send. */
void target_h2_timers(struct worker *w);

/* Free w's kept stream records (the thread is ending). */
void target_h2_worker_free(struct worker *w);

/* ---- quic.c and h3.c ---- */

/* Open a UDP socket on t's port for each thread (SO_REUSEPORT: the kernel
 * keeps each client's datagrams on one socket, so on one thread) and make
 * each thread's QUIC state, when t->quic. 0 or -errno (-EADDRINUSE: the
 * UDP port is taken). */
int target_quic_open(struct target *t, const struct net_addr *listen);
/* The thread's socket is readable: take its datagrams. */
void target_quic_input(struct worker *w);
/* Run the expired connection and stream timers, then send what the
 * connections touched since the last flush have to send. */
void target_quic_timers(struct worker *w);
void target_quic_flush(struct worker *w);
/* The earliest deadline of w's QUIC and HTTP/3 timers (UINT64_MAX: none). */
uint64_t target_quic_next(const struct worker *w);
/* Close every connection of w and free its QUIC state (the thread ends). */
void target_quic_worker_free(struct worker *w);

/* Build and free t->h3p (the plan's answers for HTTP/3). 0 or -ENOMEM /
 * -E2BIG. */
int target_h3_build(struct target *t);
void target_h3_free_plan(struct target *t);

#endif
