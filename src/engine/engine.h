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

/* One request, encoded to wire bytes before the run. */
struct engine_req {
	const char *buf;        /* borrowed; must outlive the run */
	size_t len;
	bool head;              /* HEAD: the response has no body */
};

struct engine_cfg {
	struct net_addr addr;   /* where to connect */
	const struct engine_req *reqs; /* sent in turn; each thread starts at its own offset */
	size_t n_reqs;

	bool open_loop;
	double rate_per_s;      /* open loop: total offered rate */
	enum sched_arrival arrival;
	uint64_t seed;
	uint32_t connections;   /* open loop: most connections in total */
	uint32_t concurrency;   /* closed loop: connections in total */
	uint64_t requests;      /* closed loop: total measured requests; 0 = by duration */
	bool duration_limits;   /* closed loop with requests: duration also a cap */
	uint32_t threads;

	uint64_t warmup_ns, duration_ns, timeout_ns, drain_ns;
	uint64_t spin_ns;       /* open loop: poll instead of sleeping this close to a due time */
	size_t queue_cap;       /* open loop: per-thread backlog cap; 0 = default */
};

struct engine;

/* Validate cfg, allocate every worker, start the threads (signals blocked in
 * them) and return. 0, -EINVAL, -ENOMEM, or -errno from thread creation. */
int engine_start(struct engine **out, const struct engine_cfg *cfg);

/* Ask the workers to stop now (Ctrl-C). Safe from any thread, idempotent. */
void engine_interrupt(struct engine *e);
/* True when every worker has finished. */
bool engine_done(struct engine *e);

struct engine_progress {
	uint64_t elapsed_ns;    /* since the load started (warm-up included) */
	uint64_t total_ns;      /* planned warm-up + measure; 0 if unknown */
	bool in_warmup;
	uint64_t completed;     /* all phases */
	uint64_t errors;
	uint64_t p99_ns;        /* highest per-thread p99 of the last full second */
	double rate_per_s;      /* completions in the last full second */
};

/* A racy but safe snapshot for a progress line. */
void engine_progress(struct engine *e, struct engine_progress *p);

/* Join the workers, merge their statistics into `res` (initialised here) and
 * free the engine. 0 or -ENOMEM / PACER_ELAYOUT. */
int engine_finish(struct engine *e, struct run_result *res);

#endif
