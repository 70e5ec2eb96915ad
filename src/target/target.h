/* pacer — the embedded target server, used by `pacer serve` and by the
 * self-contained mode of `pacer run`.
 *
 * A fast HTTP/1.1 keep-alive server driven by a plan (target/plan.h): one
 * epoll loop per thread, all threads accepting from one listening socket and
 * handing each new connection to the threads in turn (so N connections are
 * spread exactly evenly). Requests on a connection are answered one after
 * another, in order (pipelining works; a delayed answer holds back the ones
 * behind it, as in any HTTP/1.1 server). Simulated latency uses timers in the
 * loop, never sleeps; CPU work is a real busy loop.
 *
 * Hostile clients are bounded: a request head over 16 KiB gets 431, garbage
 * 400, a request not complete within the plan's request timeout 408, then
 * the connection is closed (lingering: the server stops writing, drains
 * input for up to 2 s, then closes, so the error reaches the client).
 * Per-connection memory is at most TARGET_CONN_MEM_CAP bytes.
 *
 * The server never prints, never exits and never touches signal handlers;
 * its threads block SIGINT, SIGTERM, SIGHUP, SIGQUIT and SIGPIPE so they are
 * left to the caller. */
#ifndef PACER_TARGET_TARGET_H
#define PACER_TARGET_TARGET_H

#include <stdint.h>

#include "net/sock.h"
#include "target/plan.h"

#define TARGET_MAX_THREADS 256
/* input buffer (≤ 20 KiB) + output buffer (≤ 64 KiB) + rendered body
 * (≤ TARGET_DYN_CAP, only on routes with templates or kv) */
#define TARGET_CONN_MEM_CAP ((20u << 10) + (64u << 10) + TARGET_DYN_CAP)

struct target;

/* Counters over all threads since target_start (read while running). */
struct target_stats {
	uint64_t connections;  /* accepted and served */
	uint64_t rejected;     /* accepted then closed at once: over max_connections */
	uint64_t requests;     /* responses started, including the server's own errors */
	uint64_t bad_requests; /* requests refused by the parser (400/411/413/414/431/501/505) */
	uint64_t timeouts;     /* 408s and connections closed for idleness */
	uint64_t misbehaved;   /* garbage answers and close_after closes */
};

/* Start the server: bind `listen` (port 0: an ephemeral port), start
 * `threads` threads (1..TARGET_MAX_THREADS) each with its own loop, and
 * return once the socket is listening (connections are queued by the kernel
 * until a loop accepts them). `plan` is borrowed and must stay alive and
 * unchanged until target_stop. 0 and *out, or -errno (-EADDRINUSE,
 * -EACCES, ... from bind/listen; -EINVAL for bad arguments; -ENOMEM, -EAGAIN
 * from thread creation). */
int target_start(struct target **out, const struct target_plan *plan, const struct net_addr *listen,
                 unsigned threads);

struct tls_ctx;

/* target_start serving HTTPS: every accepted connection does a TLS
 * handshake (non-blocking, bounded by the idle timeout) with `tls`, a server
 * context from tls_server_ctx_new, borrowed until target_stop. NULL: plain,
 * as target_start. Same returns. */
int target_start_tls(struct target **out, const struct target_plan *plan,
                     const struct net_addr *listen, unsigned threads, struct tls_ctx *tls);

/* The port the server listens on. */
int target_port(const struct target *t);

/* CPU time (user + system) consumed so far by the server threads, summed,
 * in ns (per-thread clocks from pthread_getcpuclockid). 0 or -errno. */
int target_cpu_ns(const struct target *t, uint64_t *cpu_ns);

/* Sum the threads' counters into *st (each read is atomic; the sum is not a
 * snapshot of one instant). */
void target_stats(const struct target *t, struct target_stats *st);

/* Stop: wake every loop, join the threads, close every connection and the
 * listening socket, free everything. NULL is fine. */
void target_stop(struct target *t);

#endif
