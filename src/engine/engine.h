/* pacer — the load engine: worker threads, each with its own event loop,
 * connections, schedule and statistics (nothing shared on the hot path),
 * merged into a run_result after the join. Never prints, never exits. */
#ifndef PACER_ENGINE_ENGINE_H
#define PACER_ENGINE_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "net/sock.h"
#include "plan/plan.h"
#include "plan/sched.h"
#include "result/result.h"

struct inspect;
struct quic_ctx;
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
	struct quic_ctx *quic;  /* HTTP/3 (ENGINE_H3): QUIC with this client context (borrowed,
	                         * must outlive the engine; net/quic.h); tls_host as for TLS */
};

/* The HTTP version spoken to every host. */
enum engine_http {
	ENGINE_H1 = 0,     /* HTTP/1.1 */
	ENGINE_H2C,        /* --h2c: HTTP/2 over cleartext TCP, prior knowledge (plain hosts) */
	ENGINE_H2,         /* --http2: HTTP/2 over TLS chosen by ALPN "h2" (TLS hosts; the
	                    * TLS context must offer h2: tls_client_cfg.alpn_h2); a server
	                    * that keeps HTTP/1.1 fails the connection (errors.protocol) */
	ENGINE_H2_PREFER,  /* --http2=prefer: as ENGINE_H2, HTTP/1.1 where the server keeps it */
	ENGINE_H3,         /* --http3: HTTP/3 over QUIC v1 (UDP), ALPN h3; every host needs a
	                    * QUIC context (engine_host.quic, engine_cfg.quic) */
};

/* ---- flows: requests made while the load runs (src/script) ----------------
 *
 * With engine_cfg.flows, requests are not taken from cfg.reqs: each arrival
 * (open loop: a due time of the schedule; closed loop: a free slot of the
 * concurrency) starts a flow, and the flow says, one step at a time, what
 * it wants: a request sent (due at a time from which its latency counts),
 * a wait until a time, or its end. A flow has at most one request
 * outstanding; its request's outcome (a response, or a transport error)
 * is handed back, and the flow says what next. A wrk script's flow is
 * one request (a delay() before it in closed loop); a session's is its
 * steps. The callbacks run on the worker's thread, each worker with its
 * own state (cfg.flow_state[worker]): nothing is shared between workers. */

enum engine_flow_op {
	ENGINE_FLOW_SEND = 1, /* req, due at at_ns (its latency counts from then) */
	ENGINE_FLOW_WAIT,     /* wake the flow at at_ns */
	ENGINE_FLOW_END,      /* the flow is over (at_ns: when; failed: a session that failed) */
};

struct engine_flow_next {
	enum engine_flow_op op;
	const struct engine_req *req; /* SEND: borrowed until the flow's next callback (or
	                               * its abandon); host and name as in cfg.reqs */
	uint64_t at_ns;               /* CLOCK_MONOTONIC */
	bool failed;                  /* END */
	bool stop;                    /* the script asks its worker to issue no more (wrk's
	                               * thread:stop()): the schedule ends for this worker */
};

/* What came of a flow's request (valid during the callback only). */
struct engine_flow_result {
	int status;        /* the response's status; 0: none came (err says why) */
	bool ok;           /* it succeeded (--success, else a status in 200..399) */
	enum err_kind err; /* status 0: the transport error */
	/* the response's header fields ("name\0value\0" pairs) and body, when
	 * engine_cfg.flow_headers / flow_body_cap asked for them (else empty) */
	const char *hbuf;
	size_t hbuf_len;
	uint32_t n_fields;
	const char *body;
	size_t body_len;
	bool body_cut;     /* longer than flow_body_cap: cut there */
	uint64_t bytes_in; /* response bytes (HTTP/1.1: as read; HTTP/2: body) */
};

/* The callbacks of flows. Each returns 0 with *next filled, or a negative
 * code: the flow's script failed, and the engine ends the step at once on
 * every worker (engine_aborted; the result is marked interrupted). ws is
 * the worker's cfg.flow_state; flow is the flow's handle (an index below
 * ENGINE_FLOWS_MAX, reused after the flow ends). */
struct engine_flow_ops {
	/* a new flow, for an arrival due at due_ns */
	int (*start)(void *ws, uint32_t flow, uint64_t due_ns, struct engine_flow_next *next);
	/* its request's outcome, at now_ns (the response's arrival) */
	int (*result)(void *ws, uint32_t flow, const struct engine_flow_result *r, uint64_t now_ns,
		      struct engine_flow_next *next);
	/* its wait (due at due_ns) is over */
	int (*wake)(void *ws, uint32_t flow, uint64_t due_ns, struct engine_flow_next *next);
	/* the flow is dropped without its outcome: its request could not be
	 * queued (the backlog full, its host refusing), or the step ended
	 * with it under way. It is over; nothing more is asked of it. */
	void (*abandon)(void *ws, uint32_t flow);
};

#define ENGINE_FLOWS_MAX 0x3fffffffu /* flow handles are below this */

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
	uint32_t burst;         /* open loop: arrivals per burst, sharing a due time (>= 1) */
	uint64_t seed;
	uint32_t connections;   /* open loop: most connections in total */
	uint32_t concurrency;   /* closed loop: connections in total */
	uint32_t threads;
	uint64_t timeout_ns;
	uint64_t spin_ns;       /* open loop, precise pacing: poll instead of sleeping this close
	                         * to a due time */
	uint64_t send_window_ns; /* open loop: requests due within this window leave at one
	                          * wake-up (batched pacing; send lag stays under it); 0: wake
	                          * for each due time (precise pacing). Batched needs receive
	                          * timestamps: with a Unix-socket host the engine paces
	                          * precisely (engine_batched says which) */
	double precision;       /* open loop, batched: --precision-budget's share (0.05: 5 %):
	                         * each worker sizes its window once a second from the last second's
	                         * latency p50 (plan/precision.h), send_window_ns until one is
	                         * known. 0: send_window_ns throughout */
	bool no_keepalive;      /* close each connection after its response: one per request */
	size_t queue_cap;       /* open loop: per-thread backlog cap; 0 = 30 s of the step's rate */
	struct tls_ctx *tls;    /* n_hosts 0: NULL (plain) or TLS with this client context
	                         * (borrowed, must outlive the engine; see net/tls.h) */
	const char *tls_host;   /* n_hosts 0, TLS: SNI and the name the certificate must carry */
	bool tls_resume;        /* TLS: offer each thread's last session (per host) on reconnects */
	struct quic_ctx *quic;  /* n_hosts 0, ENGINE_H3: the QUIC client context (borrowed) */
	/* --segment K/N (segments >= 2; 0 or 1: the whole plan): this session
	 * is segment `segment` of `segments`. Open loop: a step's rate_per_s is
	 * the global rate, and worker w sends the global schedule's arrivals i
	 * with i mod (segments * threads) == segment + segments * w, each with
	 * the request the whole plan picks for arrival i (in turn: i mod
	 * n_reqs; at random: draw i of one seeded stream, util/rng.h rng_at).
	 * Arrivals are numbered over every step of the session (a step's first
	 * is the sum of sched_count over the steps before it), as one process
	 * of one thread numbers them. Closed loop with step.requests R: the
	 * segment sends its share sched_split(R, segments, segment), the
	 * requests numbered from sched_split_first(R, ...) on (after the
	 * segments before it; R more each step), in turn or at random as
	 * above. The caller splits connections and concurrency. */
	uint32_t segment, segments;
	enum engine_http http;  /* HTTP/1.1, one of the HTTP/2 modes, or HTTP/3 */
	uint32_t max_streams;   /* HTTP/2, HTTP/3: most requests in flight on one connection (0:
	                         * ENGINE_H2_STREAMS_DEFAULT), also capped by the server's
	                         * SETTINGS_MAX_CONCURRENT_STREAMS; closed loop keeps
	                         * concurrency x max_streams requests outstanding */
	uint32_t h2_window;     /* HTTP/2: receive window of each stream and of the connection,
	                         * bytes (0: ENGINE_H2_WINDOW_DEFAULT); HTTP/3: of each stream
	                         * (0: ENGINE_H3_STREAM_WINDOW_DEFAULT; the connection's is
	                         * ENGINE_H3_CONN_WINDOW_DEFAULT or this, the larger) */
	const struct inspect *inspect; /* NULL, or response rules evaluated on every completed
	                                * response (borrowed, read-only, shared by the threads;
	                                * inspect_finish must have been called) */
	uint64_t lag_limit_ns;  /* open loop: a request picked up by its worker's loop more than
	                         * this after it was due, or within as long after such a one
	                         * as it was late, is counted lagged (phase_stats.lagged_sent,
	                         * lagged_failed); 0: ENGINE_LAG_LIMIT_NS */
	bool realtime;          /* run the worker threads at a real-time priority (SCHED_RR, the
	                         * lowest); engine_realtime says whether it was granted */

	/* Flows (above): NULL, requests from reqs. Else every request is a
	 * flow's; reqs still names the hosts connections are opened to before
	 * the load (eng_preopen) and must hold at least one request. */
	const struct engine_flow_ops *flows;
	void *const *flow_state; /* threads entries: worker i's state (borrowed) */
	bool flow_sessions;      /* count each flow as a session (phase_stats.sessions) */
	bool flow_headers;       /* hand each response's header fields to result */
	size_t flow_body_cap;    /* and up to this many bytes of its body (0: none) */
	const struct net_addr *worker_addr; /* NULL, or threads entries: worker i connects
	                                     * to worker_addr[i] (its family 0: the host's) in
	                                     * place of host 0's address (wrk's thread.addr;
	                                     * with or without flows) */
};

/* The default lag limit (--lag-limit): lateness under it is pacer's stated
 * precision, never flagged. */
#define ENGINE_LAG_LIMIT_NS 1000000ull
/* --realtime: the workers' policy and priority, and the guard that keeps a
 * real-time worker from holding its CPU: it sleeps ENGINE_RT_BREATHE_NS at
 * least every ENGINE_RT_SLICE_NS of wall time (a busy loop never blocks in
 * epoll), and RLIMIT_RTTIME (CPU time without a blocking call) is lowered to
 * ENGINE_RT_RTTIME_US when it is higher, so a worker that runs away without
 * passing its loop's guard is stopped by the kernel. */
#define ENGINE_RT_POLICY SCHED_RR
#define ENGINE_RT_PRIORITY 1
#define ENGINE_RT_SLICE_NS (50ull * 1000 * 1000)
#define ENGINE_RT_BREATHE_NS (50ull * 1000)
#define ENGINE_RT_RTTIME_US (2ull * 1000 * 1000)

#define ENGINE_H2_STREAMS_DEFAULT PLAN_DEFAULT_STREAMS
#define ENGINE_H2_STREAMS_MAX PLAN_MAX_STREAMS
#define ENGINE_H2_WINDOW_DEFAULT (16u << 20) /* 16 MiB */
#define ENGINE_H3_STREAM_WINDOW_DEFAULT (1u << 20) /* 1 MiB */
#define ENGINE_H3_CONN_WINDOW_DEFAULT (16u << 20)  /* 16 MiB */

/* One measurement: warm-up then measured phase, then a drain. Connections
 * carry over from one step to the next. */
struct engine_step {
	double rate_per_s;      /* open loop: total offered rate */
	uint64_t warmup_ns, duration_ns, drain_ns;
	uint64_t requests;      /* closed loop: total measured requests (of the whole plan: a
	                         * segment sends its share, sched_split); 0 = by duration */
	bool duration_limits;   /* closed loop with requests: duration also a cap */
	uint64_t start_ns;      /* CLOCK_MONOTONIC: the load (warm-up) starts then, when
	                         * that is later than the usual short lead (--start-at);
	                         * 0: after the lead */
};

struct engine;

/* Validate cfg, allocate every worker and start the threads (signals blocked
 * in them); they wait for a step. 0, -EINVAL (also: more than
 * ENGINE_MAX_HOSTS hosts, a request naming a host that is not there, more
 * than RESULT_MAX_NAMES + 1 names or a request name index out of range;
 * HTTP/2: a request it cannot carry, more than ENGINE_H2_STREAMS_MAX
 * streams, --h2c to a TLS host or --http2 to a plain one), -ENOMEM, or
 * -errno from thread creation.
 *
 * Hosts (one is the case of several): a request is chosen (in order or at
 * random) when it is due and waits in its host's backlog, at most the host's
 * share of the backlog (by its share of the requests; beyond, it is
 * dropped); a host without an idle connection opens one while the worker is
 * under its share of the cap, else closes the least recently used idle
 * connection of another host to make room, else waits. While a host refuses
 * connections (a connect failed and none is established), one probe
 * connection at a time tries it again (backoff per host). Closed loop: a
 * worker keeps `concurrency share` requests outstanding (sent or waiting for
 * a connection), each scheduled when it is chosen; one chosen for a host
 * that refuses is dropped (it would hold a slot). */
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
/* True when a flow's callback failed (engine_flow_ops) and ended the
 * current or last step on every worker: its result is marked interrupted;
 * what failed is the flows' owner's to say. */
bool engine_aborted(const struct engine *e);

struct engine_progress {
	uint64_t elapsed_ns;    /* since the step's load started (warm-up included) */
	uint64_t total_ns;      /* planned warm-up + measure; 0 if unknown */
	bool in_warmup;
	uint64_t warmup_ns;     /* the step's planned warm-up (0: none) */
	uint64_t completed;     /* all phases and steps */
	uint64_t errors;
	uint64_t p99_ns;        /* highest per-thread p99 of the last full second: measured, or
	                         * until one closes, the warm-up's (p99_warmup) */
	bool p99_warmup;
	uint64_t max_ns;         /* highest latency of the same second (exact) */
	uint64_t max_measure_ns; /* highest of the step's measured seconds closed so far */
	double rate_per_s;      /* completions in the last full measured second */
	uint64_t backlog;       /* open loop: requests due and waiting for a connection */
	bool in_drain;          /* the measured phase ended; waiting for its responses */
};

/* Measure the machine's floor (struct gen_floor) on the worker threads for
 * about duration_ns, and, when loopback (the target is on this machine), a
 * loopback round trip for half as long again; between steps only. 0,
 * -EBUSY (a step is under way, or duration_ns 0), -ENOMEM. */
int engine_floor(struct engine *e, uint64_t duration_ns, bool loopback, struct gen_floor *out);

/* Whether the worker threads run at a real-time priority (cfg.realtime):
 * 0 granted (every thread), 1 not asked, or the negative errno with which
 * the kernel refused it (-EPERM without CAP_SYS_NICE or an RLIMIT_RTPRIO;
 * the threads then run at their normal priority). */
int engine_realtime(const struct engine *e);

/* Whether the open loop paces in batches (cfg.send_window_ns > 0 and every
 * host is TCP, whose receive timestamps time responses read late). */
bool engine_batched(const struct engine *e);

/* CLOCK_MONOTONIC at which the current (or last) step's load begins: a
 * moment after engine_step_start, or its start_ns (--start-at). */
uint64_t engine_step_t0_ns(const struct engine *e);

/* A racy but safe snapshot for a progress line. */
void engine_progress(struct engine *e, struct engine_progress *p);

/* Live figures for a metrics endpoint (src/metrics): counters since
 * engine_open over every step and phase (warm-up included), never reset, so
 * that a scraper can take rates of them. Each worker keeps its own as
 * relaxed atomics written only by itself; engine_live sums them. */
#define ENGINE_LIVE_PER_DECADE 80 /* edges a decade: a ratio of 10^(1/80) = 1.029 */
#define ENGINE_LIVE_BUCKETS 561   /* latency buckets (7 decades), upper edges engine_live_edge_ns */
#define ENGINE_LIVE_OUTCOMES 16 /* = RESULT_MAX_OUTCOMES */

struct engine_live {
	uint64_t scheduled;     /* due (open loop) or issued (closed loop) */
	uint64_t sent;          /* handed to a connection and written */
	uint64_t completed;     /* full responses (any status) */
	uint64_t dropped;       /* due, but the backlog was full (or the host refused) */
	uint64_t failed;        /* complete responses that failed the success rule */
	uint64_t errors[ERRK_COUNT]; /* transport errors by kind (connect and tls:
	                              * per connection, the rest per request) */
	uint64_t connect_fail[CONNF_COUNT]; /* errors[ERRK_CONNECT] by cause */
	uint64_t status_class[6];    /* completed by status/100 (1..5; 0: outside 100..599) */
	uint64_t outcome[ENGINE_LIVE_OUTCOMES]; /* per --outcome rule, in order */
	uint32_t n_outcomes;
	/* latency (scheduled time -> last byte) of completed responses:
	 * latency_bucket[i] counts those <= engine_live_edge_ns(i) and above the
	 * edge before (not cumulative); [ENGINE_LIVE_BUCKETS] counts the rest */
	uint64_t latency_bucket[ENGINE_LIVE_BUCKETS + 1];
	uint64_t latency_sum_ns;
	/* the same by the phase they were due in: [0] a warm-up, [1] a measured
	 * phase (the responses a step's figures are of, drain included) */
	uint64_t phase_bucket[2][ENGINE_LIVE_BUCKETS + 1];
	uint64_t phase_sum_ns[2];
	/* open loop: due time -> picked up by the worker's loop, per scheduled
	 * request, in the same buckets */
	uint64_t lag_bucket[ENGINE_LIVE_BUCKETS + 1];
	uint64_t lag_sum_ns;
	/* gauges, as of each worker's last loop turn */
	uint64_t backlog;       /* due requests waiting for a connection */
	uint64_t conns_open;    /* established (connecting ones not included) */
	uint64_t conns_connecting;
	uint64_t cpu_ns;        /* CPU time of the worker threads since engine_open */
	uint32_t threads;
	bool done;              /* the current step ended (or none started) */
};

/* Upper edge of live latency bucket i (0 <= i < ENGINE_LIVE_BUCKETS), in ns:
 * 10 us * 10^(i/80) rounded to 4 significant digits (10000, 10290, 10590,
 * ..., 100000000000: 10 us to 100 s), consecutive edges a factor 1.0285 to
 * 1.0299 apart; UINT64_MAX past the end. */
uint64_t engine_live_edge_ns(size_t i);
/* The live bucket of a value in ns (ENGINE_LIVE_BUCKETS: above 100 s). */
size_t engine_live_bucket(uint64_t ns);

/* A racy but safe sum of the workers' live figures (relaxed loads; each
 * figure is exact as of some moment during the call). Any thread; never
 * blocks the workers. The engine must stay open during the call. */
void engine_live(struct engine *e, struct engine_live *out);

/* Wait for the current step to end and merge the workers' statistics into
 * `res` (initialised here; free with run_result_free). 0 or -ENOMEM. */
int engine_step_finish(struct engine *e, struct run_result *res);

/* Stop the threads, close every connection, free. NULL is fine. */
void engine_close(struct engine *e);

#endif
