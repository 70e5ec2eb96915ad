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
 * With target_opts.h2 it also speaks HTTP/2 (docs/http2.md): over TLS when
 * the client chooses h2 by ALPN, in cleartext when a connection starts with
 * the client preface (prior knowledge); other connections stay HTTP/1.1.
 * Each stream is answered as a request is (latency, status mix, bodies, CPU
 * work); at most max_streams at once per connection, and an HTTP/2
 * connection holds, beyond the buffers above, at most max_streams stream
 * records (each a :path of at most 16 KiB and, on template or kv routes, a
 * rendered body) and what nghttp2 keeps for them.
 *
 * The server never prints, never exits and never touches signal handlers;
 * its threads block SIGINT, SIGTERM, SIGHUP, SIGQUIT and SIGPIPE so they are
 * left to the caller. */
#ifndef PACER_TARGET_TARGET_H
#define PACER_TARGET_TARGET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "net/sock.h"
#include "target/plan.h"

#define TARGET_MAX_THREADS 256
#define TARGET_H2_STREAMS_DEFAULT 100 /* SETTINGS_MAX_CONCURRENT_STREAMS unless told */
#define TARGET_H2_STREAMS_MAX 1000
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
struct quic_ctx;

/* target_start serving HTTPS: every accepted connection does a TLS
 * handshake (non-blocking, bounded by the idle timeout) with `tls`, a server
 * context from tls_server_ctx_new, borrowed until target_stop. NULL: plain,
 * as target_start. Same returns. */
int target_start_tls(struct target **out, const struct target_plan *plan,
                     const struct net_addr *listen, unsigned threads, struct tls_ctx *tls);

/* How the server speaks. Zeroed: plain HTTP/1.1. */
struct target_opts {
	struct tls_ctx *tls;  /* NULL: cleartext; else as target_start_tls (borrowed). For
	                       * HTTP/2 over TLS the context must offer h2 by ALPN
	                       * (tls_server_ctx_offer_h2) */
	bool h2;              /* HTTP/2 too: ALPN h2 over TLS; in cleartext, connections
	                       * that begin with the client preface (h2c, prior knowledge) */
	uint32_t max_streams; /* HTTP/2 and HTTP/3: streams at once per connection (0: the
	                       * default; at most TARGET_H2_STREAMS_MAX) */
	struct quic_ctx *quic; /* HTTP/3 too: QUIC v1 on UDP, on the same port as TCP, with
	                        * these server credentials (quic_server_ctx_new; borrowed
	                        * until target_stop). NULL: no HTTP/3 */
};

/* target_start with the options in o (borrowed for the call; o->tls until
 * target_stop). Same returns; -EINVAL for max_streams over the cap too. */
int target_start_opts(struct target **out, const struct target_plan *plan,
                      const struct net_addr *listen, unsigned threads, const struct target_opts *o);

/* The port the server listens on. */
int target_port(const struct target *t);

/* CPU time (user + system) consumed so far by the server threads, summed,
 * in ns (per-thread clocks from pthread_getcpuclockid). 0 or -errno. */
int target_cpu_ns(const struct target *t, uint64_t *cpu_ns);

/* The thread IDs of the server threads that have started, up to cap: for
 * reading their scheduler statistics (/proc/self/task/TID). The count. */
size_t target_tids(const struct target *t, pid_t *tids, size_t cap);

/* Sum the threads' counters into *st (each read is atomic; the sum is not a
 * snapshot of one instant). */
void target_stats(const struct target *t, struct target_stats *st);

/* Stop: wake every loop, join the threads, close every connection and the
 * listening socket, free everything. NULL is fine. */
void target_stop(struct target *t);

#endif
