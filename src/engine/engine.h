/* pacer — the load engine: worker threads, each with its own event loop,
 * connections, schedule and statistics (nothing shared on the hot path),
 * merged into a run_result after the join. Never prints, never exits. */
#ifndef PACER_ENGINE_ENGINE_H
#define PACER_ENGINE_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "net/sock.h"
#include "plan/sched.h"
#include "result/result.h"

struct inspect;
struct tls_ctx;

/* Most hosts one session may send to (RESULT_MAX_HOSTS). */
#define ENGINE_MAX_HOSTS RESULT_MAX_HOSTS

/* One request, encoded to wire bytes before the run. */
struct engine_req {
	const char *buf;        /* borrowed; must outlive the run */
	size_t len;
	bool head;              /* HEAD: the response has no body */
	uint32_t host;          /* index into engine_cfg.hosts (0 with one host) */
	uint16_t name;          /* its request name's index (result/names.h); read only
	                         * when engine_cfg.n_names >= 2 */
};

/* One host requests go to. Each worker keeps, per host, its own idle
 * connections, connect backoff and backlog; the connection cap is shared. */
struct engine_host {
	struct net_addr addr;   /* where to connect (TCP or a Unix socket) */
	struct tls_ctx *tls;    /* NULL: plain; else TLS with this client context (borrowed,
	                         * must outlive the engine; see net/tls.h) */
	const char *tls_host;   /* TLS: SNI and the name the certificate must carry (borrowed) */
};

/* What stays the same for the whole session: target, requests, connections. */
struct engine_cfg {
	struct net_addr addr;   /* where to connect, when n_hosts is 0 (one host) */
	const struct engine_host *hosts; /* n_hosts > 0: the hosts (copied by engine_open; their
	                                  * tls and tls_host are borrowed). 0: one host made of
	                                  * addr, tls and tls_host below */
	uint32_t n_hosts;       /* at most ENGINE_MAX_HOSTS; every reqs[i].host < max(1, n_hosts) */
	const struct engine_req *reqs; /* sent in turn; each thread starts at its own offset */
	size_t n_reqs;
	bool order_random;      /* pick requests at random (seeded) instead of in turn */
	uint32_t n_names;       /* request names (0 or 1: none counted apart); >= 2: each
	                         * phase counts completed, ok, errors, in flight and latency per
	                         * name (phase_stats.name), every reqs[i].name < n_names,
	                         * at most RESULT_MAX_NAMES + 1 */

	bool open_loop;
	enum sched_arrival arrival;
	uint64_t seed;
	uint32_t connections;   /* open loop: most connections in total */
	uint32_t concurrency;   /* closed loop: connections in total */
	uint32_t threads;
	uint64_t timeout_ns;
	uint64_t spin_ns;       /* open loop: poll instead of sleeping this close to a due time */
	size_t queue_cap;       /* open loop: per-thread backlog cap; 0 = 30 s of the step's rate */
	struct tls_ctx *tls;    /* n_hosts 0: NULL (plain) or TLS with this client context
	                         * (borrowed, must outlive the engine; see net/tls.h) */
	const char *tls_host;   /* n_hosts 0, TLS: SNI and the name the certificate must carry */
	bool tls_resume;        /* TLS: offer each thread's last session (per host) on reconnects */
	const struct inspect *inspect; /* NULL, or response rules evaluated on every completed
	                                * response (borrowed, read-only, shared by the threads;
	                                * inspect_finish must have been called) */
};

/* One measurement: warm-up then measured phase, then a drain. Connections
 * carry over from one step to the next. */
struct engine_step {
	double rate_per_s;      /* open loop: total offered rate */
	uint64_t warmup_ns, duration_ns, drain_ns;
	uint64_t requests;      /* closed loop: total measured requests; 0 = by duration */
	bool duration_limits;   /* closed loop with requests: duration also a cap */
};

struct engine;

/* Validate cfg, allocate every worker and start the threads (signals blocked
 * in them); they wait for a step. 0, -EINVAL (also: more than
 * ENGINE_MAX_HOSTS hosts, a request naming a host that is not there, more
 * than RESULT_MAX_NAMES + 1 names or a request name index out of range),
 * -ENOMEM, or -errno from thread creation.
 *
 * Several hosts: a request is chosen (in order or at random) when it is due
 * and waits in its host's backlog; a host without an idle connection opens
 * one while the worker is under its share of the cap, else closes the least
 * recently used idle connection of another host to make room, else waits.
 * While a host refuses connections (a connect failed and none is
 * established), requests due for it are counted as dropped instead of
 * waiting, and one probe connection at a time tries it again (backoff per
 * host). Closed loop: a worker keeps `concurrency share` requests
 * outstanding (sent or waiting for a connection), each scheduled when it is
 * chosen. One host: exactly the single-target behaviour. */
int engine_open(struct engine **out, const struct engine_cfg *cfg);

/* Start a step and return at once (the caller waits with engine_done, and
 * collects with engine_step_finish). -EINVAL for a bad step, -EBUSY if the
 * previous step was not collected. */
int engine_step_start(struct engine *e, const struct engine_step *s);

/* Ask the workers to end the current step now (Ctrl-C). Safe from any
 * thread, idempotent; the step's result is marked interrupted, and its
 * measured phase ends at the first call (measure_ns), whether or not the
 * target was still answering: what was due and unanswered by then is
 * counted queued_at_end or in_flight_at_end. */
void engine_interrupt(struct engine *e);
/* True when every worker has finished the current step. */
bool engine_done(struct engine *e);

struct engine_progress {
	uint64_t elapsed_ns;    /* since the step's load started (warm-up included) */
	uint64_t total_ns;      /* planned warm-up + measure; 0 if unknown */
	bool in_warmup;
	uint64_t completed;     /* all phases and steps */
	uint64_t errors;
	uint64_t p99_ns;        /* highest per-thread p99 of the last full second */
	double rate_per_s;      /* completions in the last full second */
};

/* A racy but safe snapshot for a progress line. */
void engine_progress(struct engine *e, struct engine_progress *p);

/* Wait for the current step to end and merge the workers' statistics into
 * `res` (initialised here; free with run_result_free). 0 or -ENOMEM. */
int engine_step_finish(struct engine *e, struct run_result *res);

/* Stop the threads, close every connection, free. NULL is fine. */
void engine_close(struct engine *e);

#endif
