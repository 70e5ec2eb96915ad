/* pacer — the live metrics endpoint (--metrics-listen): a thread of its own
 * with a small non-blocking HTTP/1.1 server answering GET /metrics in the
 * Prometheus text format, or OpenMetrics when the Accept header asks
 * (metrics/expo.h), and a live page: GET / and /live.js (metrics/
 * live_page.h) drawing GET /live.json (metrics/live.h) in a browser. Whatever its clients do, it holds at most
 * METRICS_MAX_CLIENTS connections, each for at most METRICS_CONN_MS, and
 * metrics_stop returns without waiting for any of them. It reads the engines' live figures (engine_live:
 * relaxed atomics); the workers never wait for it. Its one mutex is shared
 * only by the thread that drives the runner (metrics_begin/phase/end) and
 * this server's thread. Never prints, never exits. */
#ifndef PACER_METRICS_SERVER_H
#define PACER_METRICS_SERVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/engine.h"
#include "metrics/expo.h"
#include "net/sock.h"

#define METRICS_WINDOW_S 10 /* the recent window of pacer_latency_recent_seconds */
#define METRICS_MAX_CLIENTS 8 /* connections open at once */
#define METRICS_HEAD_MS 2000  /* a connection's request head must be in by then */
#define METRICS_CONN_MS 5000  /* and its whole answer taken by then, from its accept */

/* Parse --metrics-listen's value: PORT, :PORT, ADDR:PORT or [ADDR6]:PORT,
 * with numeric addresses or localhost (no address: 127.0.0.1), port 0 (the
 * system picks one) to 65535. A non-loopback address is refused unless
 * `any`. 0, or -EINVAL with a message naming the problem in err. */
int metrics_listen_parse(const char *arg, bool any, struct net_addr *out, char *err, size_t cap);

struct metrics_cfg {
	struct net_addr addr;           /* where to listen */
	size_t n_variants;              /* 1..METRICS_MAX_VARIANTS */
	const char *const *names;       /* n_variants names (borrowed; NULL or "" for none);
	                                 * with one variant no label is written */
	const char *const *outcome_names; /* --outcome names (the array is copied; the strings
	                                   * are borrowed and must outlive the server) */
	uint32_t n_outcomes;
	/* labels on every sample and pacer_build_info's (metrics_view; copied,
	 * each up to METRICS_LABEL_CAP - 1 bytes; NULL: none) */
	const char *run, *scenario, *version, *commit;
};

#define METRICS_LABEL_CAP 256

struct metrics_server;

/* Bind and listen on cfg->addr, then start the server thread (all signals
 * blocked in it). 0, or a negative errno (bind: -EADDRINUSE, ...;
 * -ENOMEM). */
int metrics_start(struct metrics_server **out, const struct metrics_cfg *cfg);
/* The port listened on (useful with port 0). */
uint16_t metrics_port(const struct metrics_server *m);
/* Connections open now (0..METRICS_MAX_CLIENTS; for tests). */
size_t metrics_clients(const struct metrics_server *m);

/* A measurement of `variant` starts on engine e (borrowed until
 * metrics_end): new_step counts a new step (pacer_step), offered_per_s is
 * its offered rate (0: closed loop). */
void metrics_begin(struct metrics_server *m, size_t variant, struct engine *e, bool new_step,
		   double offered_per_s);
/* A ramp's step for the live page (/live.json), before its metrics_begin
 * (0: not a ramp; the default). */
void metrics_live_step(struct metrics_server *m, size_t variant, uint32_t step,
		       uint32_t planned_steps);
/* Where the measurement is (from engine_progress, on the runner's thread). */
void metrics_phase(struct metrics_server *m, size_t variant, enum metrics_phase ph);
/* The measurement ended: its last figures are kept, the engine is not read
 * again. */
void metrics_end(struct metrics_server *m, size_t variant);

/* Stop the thread, close the socket and every client's connection at
 * once (an answer still being written is cut), free. Returns within
 * milliseconds whatever the clients do: the thread waits only in its poll,
 * which the stop wakes. NULL is fine. */
void metrics_stop(struct metrics_server *m);

#endif
