/* pacer — engine internals shared by its files (not part of the API).
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
 * Closed loop: the worker keeps its share of the concurrency outstanding: a
 * request is chosen when a slot frees and waits in its host's backlog when
 * that host has no idle connection (one host: each connection sends the next
 * request as soon as its response is in).
 *
 * Hosts (one is the case of several): each worker keeps per host an idle
 * list, open/connecting counts, connect backoff and a FIFO backlog; backlog
 * entries of all hosts share one bounded pool (the per-thread backlog cap),
 * each host at most its share of it (by its share of the requests).
 * The connection cap is per worker over all hosts; a host that needs a
 * connection at the cap closes the least recently used idle connection of
 * another host when it has none, or fewer than its share while the other has
 * more (pool.c).
 *
 * Every request belongs to the phase (warm-up or measure) in which it was
 * scheduled. Timeouts: every deadline is start + timeout with a start that
 * only grows, so connecting and in-flight connections sit in one FIFO list in
 * deadline order and only its head is ever checked.
 *
 * A connection is a transport (struct eng_xport: a plain socket, TLS, or
 * QUIC) under a protocol (struct eng_proto: HTTP/1.1, HTTP/2, HTTP/3). conn.c does
 * what every connection does -- connect, the transport's handshake, picking
 * the protocol (ALPN), dispatching events, counting errors and completed
 * responses, closing -- and calls the transport and the protocol only
 * through their tables; each protocol is a file of its own that calls back
 * into conn.c, registered in engine.c. A new protocol is one file and a
 * line there (with a transport of its own if it needs one).
 *
 * HTTP/3 is a protocol (proto_h3.c, nghttp3) over a transport of its own,
 * QUIC (xport_quic.c: ngtcp2 with GnuTLS over a connected UDP socket per
 * connection, net/quic.c and net/udp.c). QUIC does not fit a byte
 * transport: it carries its own TLS, its connection is its handshake, it
 * moves streams, not bytes, and it keeps time. So the interface grows, not
 * conn.c: the transport makes its own socket (connect); a datagram
 * transport records no connect time and begins the protocol itself when
 * its handshake completes (eng_conn_begin, from inside its packets); the
 * protocol then hands it stream bytes and takes stream events through
 * struct eng_stream_ops (the transport pulls the bytes when it writes
 * packets, as nghttp3 wants); and a connection may keep a timer of its own
 * (timers.c), which the worker folds into its wake-up and fires through
 * the transport. Requests on HTTP/3 are stream records as on HTTP/2.
 *
 * Files, each calling only the ones after it (make check-layers holds
 * them to it): live.c the live figures; engine.c the API, threads, the
 * registration of transports and protocols, the floor's job and the merge;
 * xport.c the byte transports; worker.c the worker loop; proto_h3.c HTTP/3
 * connections and streams; xport_quic.c the QUIC transport;
 * xport_quic_streams.c its streams for the protocol; proto_h2.c
 * HTTP/2 connections and streams; proto_h1.c HTTP/1.1; pool.c host pools,
 * backlog and opening; floor.c the floor's timed sleeps and round trips;
 * conn.c the connection; flow.c the flows (requests a script makes while
 * the load runs); timers.c the connections' own timers; series.c the
 * per-second series; live_buckets.c the live latency buckets;
 * inspect_eval.c the response rules. */
#ifndef PACER_ENGINE_ENGINE_INT_H
#define PACER_ENGINE_ENGINE_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/engine.h"
#include "http/h1.h"
#include "net/loop.h"
#include "net/tls.h"
#include "plan/inspect.h"
#include "util/clock.h"
#include "util/rng.h"

#define READ_BUF_CAP (64 * 1024)
#define MAX_EVENTS 256
#define CONNECT_BACKOFF_NS (10 * NS_PER_MS)   /* after a failed connect ... */
#define CONNECT_BACKOFF_MAX_NS (1 * NS_PER_S) /* ... doubling per failure in a row */
/* Doublings counted at most: 10 ms << 7 is past the 1 s cap already, and the
 * shift stays defined however many failures come in a row. */
#define CONNECT_BACKOFF_SHIFT_MAX 7
#define IDLE_WAIT_NS (100 * NS_PER_MS)
/* Read interest: EPOLLRDHUP tells, in the same event as the last response,
 * that the server has closed behind it, so that a batched loop (which reads
 * that response late) does not send the next request into a closing
 * connection. */
#define EV_IN (EPOLLIN | EPOLLRDHUP)
/* The workers' timer slack (PR_SET_TIMERSLACK): they wake within microseconds. */
#define TIMER_SLACK_NS 1ul
/* --precise: the poll before a due time is this much longer than the recent
 * worst wake-up lateness (the loop's own pass) */
#define SPIN_MARGIN_NS (10 * NS_PER_US)
/* The per-second series is sized at each step's start for the step's
 * measured phase and drain (so it does not grow during the load), up to a
 * day of seconds and 1 Mi pairs (16 MiB) a worker; longer runs grow it. */
#define SERIES_RESERVE_SECS_MAX 86400
#define SERIES_RESERVE_PAIRS_PER_SEC 64
#define SERIES_RESERVE_PAIRS_MAX (1u << 20)
/* A step starts this far in the future, so that every worker is ready (and
 * its connections are open) before the first request is due. */
#define START_LEAD_NS (50 * NS_PER_MS)
/* The default per-thread backlog cap (engine_cfg.queue_cap 0): this much of
 * the step's load, within [QUEUE_MIN_ENTRIES, QUEUE_MAX_ENTRIES]. */
#define QUEUE_DEFAULT_S 30.0
#define QUEUE_MIN_ENTRIES 4096
#define QUEUE_MAX_ENTRIES 4194304 /* 4 Mi entries of 16 bytes: 64 MiB a thread */
/* Seeds of a thread's Poisson schedule and of its --order random generator:
 * cfg.seed times an odd 64-bit constant (splitmix64's increment and its
 * first multiplier), plus the thread's id, so that threads and the two uses
 * draw different streams from one seed. */
#define SEED_MIX_SCHED 0x9e3779b97f4a7c15ull
#define SEED_MIX_ORDER 0xbf58476d1ce4e5b9ull

enum conn_state {
	CS_FREE = 0,
	CS_CONNECTING,
	CS_HANDSHAKE, /* connected, TLS handshake under way (counts as connecting) */
	CS_IDLE,
	CS_WRITING, /* request partly written */
	CS_READING, /* request written, waiting for the response */
	CS_SETTLE,  /* HTTP/1.1: its first response is in, not yet credited (proto_h1.c) */
};

struct worker;
struct conn;
struct h2_conn;
struct h2req;
struct engine;

/* A byte transport under a protocol (xport.c). Results: bytes, -EAGAIN (it
 * registered the event it waits for with eng_conn_want), or another
 * negative errno (a TLS failure keeps its reason in the phase). */
struct eng_xport {
	const char *name;
	/* The connection's socket to a: its fd (TCP: the connect started, its
	 * result comes with writability; UDP: connected at once), or a
	 * negative errno. */
	int (*connect)(const struct net_addr *a);
	/* The socket connected: begin. 1 ready, 0 waiting (a handshake: the
	 * connection is CS_HANDSHAKE, its events go to handshake), -1 failed
	 * (counted as a failed connect, with backoff; the caller closes). */
	int (*start)(struct worker *w, struct conn *c, uint64_t now);
	int (*handshake)(struct worker *w, struct conn *c);
	ssize_t (*tx)(struct worker *w, struct conn *c, const void *buf, size_t len);
	/* *rx_rt_ns: the kernel's arrival stamp (CLOCK_REALTIME) of the last
	 * segment read, 0 when there is none; 0 bytes: the peer closed. */
	ssize_t (*rx)(struct worker *w, struct conn *c, void *buf, size_t cap, uint64_t *rx_rt_ns);
	bool (*pending)(const struct conn *c);  /* bytes decoded, not yet read */
	void (*close)(struct conn *c);          /* its state (the socket is the caller's) */
	bool (*alpn_h2)(const struct conn *c);  /* the server chose HTTP/2 (ALPN h2) */
	bool exact_stamps;  /* its stamps are those of the bytes read (a response that came
			     * before its request was written can be told) */
	bool crossed;       /* a read may wait for writability and a write for readability */
	/* A transport of datagrams (QUIC): no connection before its
	 * handshake, whose time is its set-up (no connect time recorded), and
	 * which may begin the protocol itself (eng_conn_begin) in the middle
	 * of its packets; its protocol then speaks through it by streams
	 * (struct eng_stream_ops), not bytes (tx, rx and pending unused). */
	bool datagram;
	/* Its own timer of c fired (eng_timer_set): handle it, and close c on
	 * a failure. NULL: it sets none. */
	void (*timer)(struct worker *w, struct conn *c, uint64_t now);
	/* c's handshake had not completed at its deadline: count the failure
	 * (the caller closes c). NULL: errors.tls, "TLS handshake timed out". */
	void (*hs_timeout)(struct worker *w, struct conn *c, uint64_t now);
	/* Its per-worker state (buffers; engine_open, NULL: none) and release. */
	int (*worker_init)(struct worker *w);
	void (*worker_free)(struct worker *w);
};

extern const struct eng_xport eng_xport_plain, eng_xport_tls, eng_xport_quic;

struct ngtcp2_vec;

/* A protocol over a transport of streams (HTTP/3 over QUIC): the
 * transport's packets bring stream events to it, and the transport's
 * writes pull the streams' bytes from it. Called in the middle of the
 * transport's packet processing: they count and set up but never close a
 * connection; a failure is eng_quic_fail (the connection ends once the
 * packets are processed) and a nonzero return. */
struct eng_stream_ops {
	int (*recv)(struct worker *w, struct conn *c, int64_t sid, const uint8_t *data,
		    size_t len, bool fin);
	int (*acked)(struct worker *w, struct conn *c, int64_t sid, uint64_t len);
	/* stream sid closed: app_code the application error code (0x100, H3_NO_ERROR, when
	 * none was given) */
	int (*closed)(struct worker *w, struct conn *c, int64_t sid, uint64_t app_code);
	/* the peer reset sid (RESET_STREAM), or asked it to stop sending (STOP_SENDING) */
	int (*reset)(struct worker *w, struct conn *c, int64_t sid, uint64_t app_code);
	int (*stop_sending)(struct worker *w, struct conn *c, int64_t sid, uint64_t app_code);
	/* sid got flow-control credit (MAX_STREAM_DATA): it may write again */
	int (*credit)(struct worker *w, struct conn *c, int64_t sid);
	/* the peer allows more streams (MAX_STREAMS) */
	void (*more_streams)(struct worker *w, struct conn *c);
	/* The next bytes to write: their stream in *sid (-1: none), *fin when
	 * they end it, at most n vectors. The vectors filled, or < 0 (a failure). */
	long (*pull)(struct worker *w, struct conn *c, int64_t *sid, int *fin,
		     struct ngtcp2_vec *v, size_t n);
	/* n bytes of sid went into packets */
	int (*wrote)(struct worker *w, struct conn *c, int64_t sid, size_t n);
	/* sid has no flow-control credit left (its bytes wait), or can write no more */
	void (*blocked)(struct worker *w, struct conn *c, int64_t sid);
	void (*shut_wr)(struct worker *w, struct conn *c, int64_t sid);
};

/* A protocol over a transport (proto_h1.c, proto_h2.c). A connection
 * record (struct conn) carries one request at a time; a protocol that
 * multiplexes (HTTP/2) makes a record of its own per request, whose proto
 * is its connection's. */
struct eng_proto {
	const char *name;
	/* Engine-wide preparation when the protocol may be spoken (engine_open:
	 * 0, -EINVAL, -ENOMEM) and its release; NULL: none. */
	int (*prepare)(struct engine *e);
	void (*release)(struct engine *e);
	/* The transport is ready: begin (HTTP/1.1: idle at once; HTTP/2: the
	 * preface, connecting until the server's SETTINGS). */
	void (*start)(struct worker *w, struct conn *c, uint64_t now);
	/* c, on its host's idle list, takes request rq (NULL: the next one)
	 * scheduled at sched_ns; lagged: picked up late; flow: the flow it
	 * belongs to (ENG_FLOW_NONE: none). */
	void (*send)(struct worker *w, struct conn *c, uint64_t sched_ns,
		     const struct engine_req *rq, bool lagged, uint32_t flow);
	/* An epoll event of c once the protocol started. */
	void (*event)(struct worker *w, struct conn *c, uint32_t events);
	/* Request r's response is counted (eng_conn_complete): reuse or
	 * release what carried it. */
	void (*done)(struct worker *w, struct conn *r, uint64_t now);
	/* Close r: one request given up on (a timeout), or a connection (the
	 * requests it had in flight count as errors). */
	void (*close)(struct worker *w, struct conn *r);
	uint32_t (*in_flight)(const struct conn *c); /* requests in flight on connection c */
	/* After a turn's sends: write what host h's connections queued (NULL:
	 * they write at once). */
	void (*flush_host)(struct worker *w, uint32_t h, uint64_t now);
	/* The protocol's own timers: act on those due by now (only after the
	 * loop has read what came by then; UINT64_MAX: every one, the load is
	 * over); the time the next is due, for the loop's wake-up (UINT64_MAX:
	 * none). NULL: none. */
	uint64_t (*timers)(struct worker *w, uint64_t now);
	/* The step ended: requests in flight that are not records of w->conns
	 * count as left (eng_count_left), and their connections close (NULL:
	 * none). */
	void (*step_end)(struct worker *w);
	void (*worker_free)(struct worker *w); /* its per-worker state (NULL: none) */
	/* Why a connection still connecting at its deadline (the protocol's
	 * own handshake) failed, for errors.protocol. */
	const char *connect_timeout_reason;
	/* Over a transport of streams (eng_xport.datagram): its stream events
	 * and bytes; NULL over a byte transport. */
	const struct eng_stream_ops *streams;
};

extern const struct eng_proto eng_proto_h1, eng_proto_h2, eng_proto_h3;

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
	const struct eng_xport *xport; /* its transport (set when it opens) */
	const struct eng_proto *proto; /* its protocol, once the transport is ready (a request
				   * record: its connection's); NULL before */
	struct tls_conn *tls;     /* TLS: the session; NULL: plain TCP (or Unix socket) */
	uint32_t ev;              /* epoll interest registered (eng_conn_want) */
	bool rd_wants_write;      /* the last read waits for writability (a crossed transport) */
	uint64_t sched_ns, write_ns, first_byte_ns, deadline_ns;
	uint64_t idle_ns;         /* when it last became idle (least recently used) */
	uint32_t host;            /* index into engine.hosts */
	const struct engine_req *req; /* the request in flight */
	uint32_t flow;                /* the flow the request belongs to (flow.c); ENG_FLOW_NONE */
	struct h2req *h2_fields;      /* a flow's request as HTTP/2 fields (a stream; NULL: the
	                           * engine's e->h2reqs entry) */
	struct h3req *h3_fields;      /* the same over HTTP/3 (NULL: the e->h3reqs entry) */
	size_t wr_off;
	bool got_byte;
	bool rx_ts;               /* the socket stamps what it receives (net_rx_timestamps) */
	bool answered;            /* a response of the connection was credited (HTTP/1.1) */
	uint64_t done_ns;         /* CS_SETTLE: when its response arrived */
	bool peer_closed;         /* the last event said the server closed its side (EPOLLRDHUP) */
	bool lagged;              /* its request was picked up late (engine_cfg.lag_limit_ns) */
	struct h1_resp resp;
	struct h1_capture cap; /* used only when cfg.inspect needs headers/body */
	/* HTTP/2 (conn_h2.c). A connection: h2 is its session (NULL over HTTP/1.1);
	 * it is CS_HANDSHAKE until the server's SETTINGS, then CS_IDLE, on its
	 * host's idle list while it has a free stream. A stream is a struct conn
	 * of its own (not in w->conns, no fd): h2_parent is its connection, it
	 * is CS_READING and on w->timed while in flight, so that sending,
	 * completing, errors and timeouts treat it as a request on a connection. */
	struct h2_conn *h2;
	struct conn *h2_parent;
	int32_t h2_id;            /* a stream: its id */
	uint32_t h2_slot;         /* a stream: its index in its connection's active set */
	bool h2_rst;              /* a stream: the peer sent RST_STREAM */
	bool h2_end;              /* a stream: the peer ended its response (END_STREAM) */
	/* QUIC and HTTP/3 (xport_quic.c, proto_h3.c), as HTTP/2 above: quic is
	 * the transport's connection, h3 the HTTP/3 session; a stream is a
	 * record of its own with h3_parent its connection, h3_id its QUIC
	 * stream id, h3_slot its index in its connection's active set. */
	struct eng_quic *quic;
	struct h3_conn *h3;
	struct conn *h3_parent;
	int64_t h3_id;
	uint32_t h3_slot;
	uint32_t h3_code;         /* a stream: the code of the server's reset (0: none) */
	bool h3_blocked;          /* a stream: its bytes waited for flow-control credit */
	/* The transport's own timer (timers.c): when, and the connection's
	 * place in the worker's heap (1-based; 0: not in it). */
	uint64_t timer_ns;
	uint32_t timer_pos;
};

/* HTTP/2: a host that refuses this many requests in a row (REFUSED_STREAM,
 * GOAWAY) without completing one gets its further refusals counted as
 * errors (reset) instead of retried, so that a server refusing everything
 * cannot keep a run going without end. */
#define H2_RETRY_RUN_MAX 1024

#define QE_NONE UINT32_MAX

/* A backlog entry: a due request waiting for a connection of its host. */
struct qent {
	uint64_t due_ns;
	uint32_t req;  /* index into cfg.reqs, with QE_LAGGED when the loop picked it
	                * up late (engine_open keeps the table under that bit) */
	uint32_t next; /* next entry of the same host's FIFO, or of the free list */
};

#define QE_LAGGED 0x80000000u
#define QE_FLOW 0x40000000u /* req is a flow's handle (flow.c), not an index into cfg.reqs */
#define QE_INDEX(r) ((r) & ~(QE_LAGGED | QE_FLOW))

/* No flow (struct conn.flow). */
#define ENG_FLOW_NONE UINT32_MAX
/* A flow's entry in its worker's table (flow.c). */
#define ENG_FLOW_LIVE UINT32_MAX /* next_free of a flow in use */
struct eng_flow {
	const struct engine_req *req; /* its request, while one is queued or in flight */
	uint64_t start_ns;            /* its arrival's due time */
	uint32_t next_free;           /* the free list; ENG_FLOW_LIVE while in use */
};

/* A flow waiting until at_ns (the worker's heap of waits, flow.c). */
struct eng_wait {
	uint64_t at_ns;
	uint32_t flow;
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
	size_t q_share;          /* most entries its backlog may hold: its share of the pool by
	                          * request share (one host: all of it), so that a host that
	                          * refuses or crawls cannot fill what the others need */
	uint32_t h2_refusals;     /* HTTP/2: requests put back for a retry since the host last
	                           * completed one (past H2_RETRY_RUN_MAX: errors, not retries) */
	struct h2_conn *h2_dirty; /* HTTP/2 connections with requests submitted, not yet written
	                           * (proto_h2.c's flush writes them: one write for a batch) */
	uint32_t h3_refusals;     /* HTTP/3: as h2_refusals */
	struct h3_conn *h3_dirty; /* HTTP/3: as h2_dirty */
};

/* One second of the measured phase's series (series.c). */
struct sec_rec {
	uint64_t completed, errors;
	uint64_t by_class[5]; /* responses by status class, 1xx..5xx */
	uint64_t transport;   /* requests failed on the connection (in errors too) */
	uint64_t connect_fail[CONNF_COUNT]; /* connects that failed in it, by cause */
	uint64_t dropped;     /* measured requests dropped in it (never sent) */
	uint64_t unsent;      /* the backlog when the second was closed (due, not sent) */
	uint64_t quic_lost, quic_stalls; /* QUIC: packets declared lost, congestion-window stalls */
	uint64_t window_ns; /* batched: the send window in force at its end */
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
	uint32_t closed_outstanding; /* closed loop: requests kept outstanding (max_conns, times
	                              * max_streams for HTTP/2) */
	uint64_t quota; /* closed loop with --requests: measured requests to issue */
	uint64_t issued_measure;

	size_t next_req; /* index into cfg.reqs */
	uint64_t order_key, order_ctr; /* --order random: the next pick is draw order_ctr
	                                * of rng_at(order_key, .) */
	uint32_t req_stride; /* picks advance by this (a segment's open-loop lane: the
			      * request of each of its global arrivals); else 1 */

	struct sched sched;
	bool sched_active;
	uint64_t next_due_ns;
	/* Open loop, batched pacing (engine.batched): sleep to the next due
	 * time plus the slack, then take every ready event and send everything
	 * due; responses read late are timed by their kernel arrival stamps. */
	uint64_t oversleep_ns;  /* recent worst overshoot of a timed sleep (decays) */
	uint64_t last_wake_ns;  /* end of the last batched sleep */
	uint64_t win_ns;        /* batched: the send window (cfg.send_window_ns, or sized by
	                         * --precision-budget once a second) */
	uint64_t spin_eff_ns;   /* precise: how long before a due time the loop polls: the
	                         * wake-ups' smoothed lateness and 4 mean deviations and a
	                         * margin, at most cfg.spin_ns */
	int64_t spin_mean_ns, spin_dev_ns; /* precise: the wake-ups' lateness, smoothed, and
	                                    * its mean deviation */
	bool spin_seen;                    /* a wake-up's lateness has been measured this step */
	uint64_t spun_ns;       /* precise: CPU spent polling for due times over the step */
	uint64_t rt_off_ns;     /* CLOCK_REALTIME - CLOCK_MONOTONIC, refreshed at each wake */
	uint64_t rt_off_err_ns; /* how far off rt_off_ns can be */

	/* backlog entries of every host (open loop, and closed loop waiting for a connection) */
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
	const struct inspect *inspect; /* NULL: no response rules; else own_rules */
	struct inspect own_rules;      /* this worker's compiled copy of cfg.inspect (a regex_t
	                                * shared by threads makes glibc's regexec serialise them) */
	bool has_own_rules;
	bool capture;                  /* rules look at headers or the body */
	bool by_name;                  /* 2 or more request names: count per name */

	struct phase_stats warm, meas;
	uint64_t last_completion_ns; /* of a measured request */

	/* per-second series of the measured phase (series.c) */
	struct hist sec_hist;
	/* The measured phase's latencies of the current second, of the
	 * requests that succeeded [0] and of those that failed [1]: the one
	 * record a completed response makes (eng_conn_complete). When the
	 * second closes (eng_series_close_sec) they move into the phase's
	 * TIM_LATENCY_OK / _FAILED and TIM_LATENCY, and into sec_hist, reading
	 * only the range the second held (eng_lat_move). */
	struct hist lat_sec[2];
	uint64_t sec_cur;
	/* the warm-up's seconds, for the progress line only (series.c) */
	struct hist warm_hist;
	uint64_t warm_sec; /* second since t0 that warm_hist holds; UINT64_MAX: none */
	struct sec_rec *secs;
	size_t secs_len, secs_cap;
	uint64_t (*pairs)[2];
	size_t pairs_len, pairs_cap;
	int oom;

	uint64_t rt_breathe_ns;   /* --realtime: when the loop next sleeps ENGINE_RT_BREATHE_NS */
	struct hist floor_hist;   /* engine_floor: the lateness of this thread's timed sleeps */
	uint64_t lag_limit_ns;    /* engine_cfg.lag_limit_ns, or its default */
	uint64_t shadow_until_ns; /* requests picked up before then are in the shadow of a
				   * late clump (counted lagged) */

	uint64_t cpu_ns, wall_ns; /* this thread's CPU and wall time over the step */
	uint64_t cpu_wait_ns;     /* its waits for a CPU over the step (UINT64_MAX: unknown) */

	/* read by the progress line; written only by this worker */
	_Alignas(64) _Atomic uint64_t pub_completed;
	_Atomic uint64_t pub_errors;
	_Atomic uint64_t pub_p99_ns;
	_Atomic bool pub_p99_warm;    /* pub_p99_ns is of a warm-up second */
	_Atomic uint64_t pub_last_sec_completed;
	_Atomic uint64_t pub_max_ns;      /* the highest latency of the second of pub_p99_ns */
	_Atomic uint64_t pub_max_meas_ns; /* the highest of the measured seconds closed so far */
	_Atomic uint64_t pub_backlog; /* q_len, as of its last change */
	_Atomic bool done;

	/* live figures (engine_live, live.c): written only by this worker */
	_Alignas(64) struct eng_live {
		_Atomic uint64_t scheduled, sent, dropped, failed;
		_Atomic uint64_t errors[ERRK_COUNT];
		_Atomic uint64_t connect_fail[CONNF_COUNT];
		_Atomic uint64_t status_class[6];
		_Atomic uint64_t outcome[ENGINE_LIVE_OUTCOMES];
		_Atomic uint64_t phase_bucket[2][ENGINE_LIVE_BUCKETS + 1]; /* warm-up, measured */
		_Atomic uint64_t phase_sum_ns[2];
		_Atomic uint64_t lag_bucket[ENGINE_LIVE_BUCKETS + 1];
		_Atomic uint64_t lag_sum_ns;
		_Atomic uint64_t backlog, conns_open, conns_connecting;
	} live;
	/* flows (engine_cfg.flows, flow.c): the table of flows, a free list,
	 * and the heap of the ones waiting */
	void *flow_state; /* cfg.flow_state[id] */
	struct eng_flow *flows;
	uint32_t flows_cap, flows_hi, flows_free, n_flows;
	uint32_t flows_max;     /* most flows under way at once (arrivals past it: dropped) */
	struct eng_wait *waits; /* a min-heap by at_ns, n_waits of them (room: flows_cap) */
	uint32_t n_waits;
	bool flows_stopped; /* the script stopped this worker (thread:stop()) */
	const struct net_addr
		*addr0;   /* cfg.worker_addr: where host 0 is for this worker, or NULL */
	bool cap_headers; /* capture each response's header fields (rules or flows) */
	size_t cap_body;  /* and this many bytes of its body */

	/* HTTP/1.1 connections in CS_SETTLE, oldest response first (proto_h1.c) */
	struct list h1_settling;
	/* HTTP/2 stream records (proto_h2.c): made on demand, kept for reuse */
	struct conn *h2_free;     /* free stream records, linked through ->next */
	struct conn **h2_all;     /* every record made, to free them */
	size_t h2_all_len, h2_all_cap;
	/* HTTP/3 stream records (proto_h3.c), as HTTP/2's */
	struct conn *h3_free;
	struct conn **h3_all;
	size_t h3_all_len, h3_all_cap;
	/* the connections' own timers (timers.c): a min-heap of max_conns slots */
	struct conn **theap;
	uint32_t theap_len;
	struct eng_quic_worker *quic; /* QUIC: the worker's datagram buffers (xport_quic.c) */
};

struct engine {
	struct engine_cfg cfg;
	struct engine_host *hosts; /* n_hosts >= 1, owned (cfg.hosts copied, or made of cfg.addr) */
	uint32_t n_hosts;
	uint64_t host_reqs[ENGINE_MAX_HOSTS]; /* requests of the table per host */
	struct h2req *h2reqs;      /* HTTP/2: cfg.reqs as header fields (proto_h2.c), else NULL */
	struct h3req *h3reqs;      /* HTTP/3: the same for nghttp3 (proto_h3.c), else NULL */
	/* The protocols (engine.c): every one registered, for their engine- and
	 * worker-wide hooks; the one a connection speaks when its transport
	 * is ready (default), and when the server chose HTTP/2 by ALPN
	 * (alpn_h2; NULL: h2 not offered). default NULL: nothing but h2 will do
	 * (--http2): a server that keeps HTTP/1.1 fails the connection. */
	const struct eng_proto *const *protos;
	size_t n_protos;
	const struct eng_xport *const *xports; /* every transport registered (worker hooks) */
	size_t n_xports;
	const struct eng_proto *proto_default, *proto_alpn_h2;
	const struct eng_xport *xport[ENGINE_MAX_HOSTS]; /* each host's transport */
	struct engine_step step;                  /* the current step */
	uint64_t t0_ns, warm_end_ns, meas_end_ns; /* meas_end: UINT64_MAX when by count */
	/* a segment: the global number of the current step's first arrival
	 * (the arrivals of the session's earlier steps: sched_count of each;
	 * closed loop: their step.requests) */
	uint64_t arrival_base;
	_Atomic bool stop;
	_Atomic uint64_t stop_ns;      /* CLOCK_MONOTONIC of the step's first interrupt; 0: none */
	_Atomic bool aborted;          /* a flow's callback failed and stopped the step */
	struct worker *w;
	uint32_t n_threads;
	uint32_t started;
	bool batched;      /* open loop paced in batches (engine_batched) */
	int rt_status;     /* engine_realtime */
	uint64_t floor_ns; /* nonzero: the job the workers are woken for is engine_floor's */
	bool stamps;       /* every host is TCP, whose sockets carry receive stamps */

	pthread_mutex_t mu;
	pthread_cond_t cv;
	uint64_t step_seq; /* bumped to start a step */
	bool quit;
	bool collected;    /* the last step's results were taken */
};

/* ---- intrusive list ---------------------------------------------------- */

static inline void list_push_tail(struct list *l, struct conn *c)
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

static inline void list_remove(struct list *l, struct conn *c)
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

/* ---- small shared helpers (hot path: inline) --------------------------- */

/* End the current step on every worker (engine_interrupt; a flow that
 * failed): the first call's time is the measured phase's end. Any thread. */
static inline void eng_stop_all(struct engine *e)
{
	uint64_t none = 0;
	atomic_compare_exchange_strong(&e->stop_ns, &none, clock_now_ns());
	atomic_store(&e->stop, true);
	for (uint32_t i = 0; i < e->started; i++)
		loop_wake(&e->w[i].loop);
}

static inline uint64_t min_u64(uint64_t a, uint64_t b) { return a < b ? a : b; }

/* The phase an event at time t belongs to (a request: its scheduled time).
 * Connections opened before the start count in the first phase. */
static inline struct phase_stats *phase_of(struct worker *w, uint64_t t)
{
	return t < w->e->warm_end_ns && w->e->step.warmup_ns ? &w->warm : &w->meas;
}

/* One more request that did not succeed, for the progress line. */
static inline void publish_error(struct worker *w)
{
	atomic_store_explicit(&w->pub_errors,
			      atomic_load_explicit(&w->pub_errors, memory_order_relaxed) + 1,
			      memory_order_relaxed);
}

/* Add n to a live figure (single writer: a relaxed load and store, no
 * locked instruction). */
static inline void live_add(_Atomic uint64_t *a, uint64_t n)
{
	atomic_store_explicit(a, atomic_load_explicit(a, memory_order_relaxed) + n,
			      memory_order_relaxed);
}

static inline void live_set(_Atomic uint64_t *a, uint64_t v)
{
	atomic_store_explicit(a, v, memory_order_relaxed);
}

/* A completed response for the live figures: its status class, success and
 * latency, the latter twice: over all and in its phase ([1]: it was due in a
 * measured phase, [0]: in a warm-up). Each its own counter, so that each
 * only ever grows as a reader sees it. */
static inline void live_done(struct worker *w, int status, bool ok, uint64_t latency_ns,
			     bool measured)
{
	live_add(&w->live.status_class[status >= 100 && status <= 599 ? status / 100 : 0], 1);
	if (!ok)
		live_add(&w->live.failed, 1);
	/* by the phase its request was due in: every response's histogram is
	 * the two phases' together (engine_live), not a record of its own */
	size_t b = engine_live_bucket(latency_ns);
	live_add(&w->live.phase_bucket[measured][b], 1);
	live_add(&w->live.phase_sum_ns[measured], latency_ns);
}

/* A request became due for the live figures (lag: open loop, else 0). */
static inline void live_due(struct worker *w, uint64_t lag_ns)
{
	live_add(&w->live.scheduled, 1);
	if (w->e->cfg.open_loop) {
		live_add(&w->live.lag_bucket[engine_live_bucket(lag_ns)], 1);
		live_add(&w->live.lag_sum_ns, lag_ns);
	}
}

/* The live gauges, once a loop turn. */
static inline void live_gauges(struct worker *w)
{
	live_set(&w->live.backlog, w->q_len);
	live_set(&w->live.conns_open, w->n_open - w->n_connecting);
	live_set(&w->live.conns_connecting, w->n_connecting);
}

static inline void publish_completed(struct worker *w)
{
	atomic_store_explicit(&w->pub_completed,
			      atomic_load_explicit(&w->pub_completed, memory_order_relaxed) + 1,
			      memory_order_relaxed);
}

/* The next request: in turn, or at random. Its index into cfg.reqs. */
static inline uint32_t pick_req(struct worker *w)
{
	const struct engine_cfg *cfg = &w->e->cfg;
	if (cfg->order_random) {
		/* a lane skips the other lanes' draws at no cost */
		uint32_t r = (uint32_t)(rng_at(w->order_key, w->order_ctr) % cfg->n_reqs);
		w->order_ctr += w->req_stride;
		return r;
	}
	uint32_t r = (uint32_t)w->next_req;
	w->next_req += w->req_stride;
	if (w->next_req >= cfg->n_reqs)
		w->next_req %= cfg->n_reqs;
	return r;
}

/* When the bytes of a read stamped rx_rt_ns (CLOCK_REALTIME, the kernel's
 * receive stamp; 0: none) arrived, on the monotonic clock: the stamp (a
 * batched loop reads late) mapped with the worker's offset, else now; never
 * before lo (the request's write, or its first byte), never after now. */
static inline uint64_t eng_arrival_ns(const struct worker *w, uint64_t rx_rt_ns, uint64_t lo,
				      uint64_t now)
{
	if (!rx_rt_ns || rx_rt_ns < w->rt_off_ns)
		return now;
	uint64_t t = rx_rt_ns - w->rt_off_ns;
	return t > now ? now : t < lo ? lo : t;
}

/* A host that refuses: its last connect failed and none is established. */
static inline bool host_down(const struct hpool *p)
{
	return p->connect_fails && p->n_open == p->n_connecting;
}

/* ---- backlog: one pool of entries, a FIFO per host --------------------- */

/* Append (due, request) to host h's backlog; false when h's share of the
 * pool is used up, or the pool is full (the per-thread backlog cap counts
 * the entries of every host). */
static inline bool q_push(struct worker *w, uint32_t h, uint64_t due, uint32_t req)
{
	struct hpool *p = &w->hp[h];
	if (p->q_len >= p->q_share)
		return false;
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
	if (p->q_tail == QE_NONE)
		p->q_head = i;
	else
		w->q[p->q_tail].next = i;
	p->q_tail = i;
	p->q_len++;
	w->q_len++;
	atomic_store_explicit(&w->pub_backlog, w->q_len, memory_order_relaxed);
	return true;
}

/* Take the oldest entry of a non-empty host backlog. */
static inline struct qent q_pop(struct worker *w, struct hpool *p)
{
	uint32_t i = p->q_head;
	struct qent v = w->q[i];
	p->q_head = v.next;
	if (p->q_head == QE_NONE)
		p->q_tail = QE_NONE;
	p->q_len--;
	w->q_len--;
	atomic_store_explicit(&w->pub_backlog, w->q_len, memory_order_relaxed);
	w->q[i].next = w->q_free;
	w->q_free = i;
	return v;
}

/* ---- conn.c: connections --------------------------------------------- */

/* Open a connection to host h over its transport (a free slot is needed;
 * none: nothing happens). A failure to start it is counted and backs the
 * host off. */
void eng_conn_open(struct worker *w, uint32_t h, uint64_t now);
/* Close c however its protocol closes it (a request record: given up on; a
 * connection: with the requests in flight on it) and return its slot. Any
 * state but CS_FREE. */
void eng_conn_close(struct worker *w, struct conn *c);
/* The connection's own part of a close: its transport, socket and slot
 * (what a protocol's close calls last for a connection). */
void eng_conn_release(struct worker *w, struct conn *c);
/* Hand request rq (NULL: the next one, pick_req), scheduled at sched_ns, to
 * c, an idle connection of rq's host, through its protocol. lagged: the
 * loop picked it up late (counted in lagged_sent, and lagged_failed when it
 * fails). */
void eng_conn_send(struct worker *w, struct conn *c, uint64_t sched_ns,
		   const struct engine_req *rq, bool lagged);
/* The same for a request of flow `flow` (ENG_FLOW_NONE: none), whose
 * outcome goes back to the flow (flow.c). */
void eng_conn_send_flow(struct worker *w, struct conn *c, uint64_t sched_ns,
			const struct engine_req *rq, bool lagged, uint32_t flow);
/* An epoll event of c (not CS_FREE). */
void eng_conn_event(struct worker *w, struct conn *c, uint32_t events);
/* Make ev the epoll interest registered for c. */
void eng_conn_want(struct worker *w, struct conn *c, uint32_t ev);
/* c (connecting) is connected for good: no longer counted connecting, and
 * its host's connect failures in a row are over. */
void eng_conn_connected(struct worker *w, struct conn *c);
/* c, ready for a request, goes on its host's idle list. */
void eng_conn_idle(struct worker *w, struct conn *c, uint64_t now);
/* c's transport is ready: the protocol it speaks (the server's ALPN choice)
 * begins (its start). conn.c calls it when the transport's handshake
 * returns 1; a datagram transport (QUIC) calls it itself from its
 * handshake's completion, in the middle of its packets. */
void eng_conn_begin(struct worker *w, struct conn *c, uint64_t now);
/* A connection-level error (connect, TLS) of a connection to host h, counted
 * in the phase of `now`; that phase's stats, for a TLS reason. */
struct phase_stats *eng_conn_error(struct worker *w, uint32_t h, enum err_kind k, uint64_t now);
/* A connect to host h failed with errno err (positive or negative; 0: no
 * code, e.g. the event loop refused the socket): errors.connect and its
 * cause (connect_cause_of; timed out: ETIMEDOUT) in the phase of `now`, and
 * in the second's series in the measured phase. Backoff is the caller's
 * (eng_connect_failed). */
void eng_connect_error(struct worker *w, uint32_t h, int err, uint64_t now);
/* An error of c's request (counted in the phase it was scheduled in); a
 * flow's request hands the error to its flow. */
void eng_count_error(struct worker *w, struct conn *c, enum err_kind k, uint64_t now);
/* A request of phase ph (request rq, scheduled at sched_ns) with no answer
 * at `now` (it timed out, or the run was interrupted): its wait, a lower
 * bound of its latency, in the latency figures (latency, latency_failed,
 * latency_lagged when lagged, its name's latency). */
void eng_record_wait(struct worker *w, struct phase_stats *ph, uint64_t sched_ns,
		     const struct engine_req *rq, bool lagged, uint64_t now);
/* A request left at the end of a step: sent and unanswered
 * (in_flight_at_end) or due and never sent (queued_at_end). When the step
 * was interrupted its wait until the interrupt is recorded too
 * (eng_record_wait): an outcome, not an omission. */
void eng_count_left(struct worker *w, uint64_t sched_ns, const struct engine_req *rq, bool lagged,
		    bool sent);

/* A full response to record r arrived at `now`: count it (phase, host,
 * name, rules, series, live figures) and let its protocol reuse or release
 * what carried it. */
void eng_conn_complete(struct worker *w, struct conn *r, uint64_t now);

/* A connect to host h failed: wait before the next attempt to it, twice as
 * long for each failure in a row (a dead target is not hammered), up to a
 * second. Other hosts are not held back. */
static inline void eng_connect_failed(struct worker *w, uint32_t h, uint64_t now)
{
	struct hpool *p = &w->hp[h];
	uint32_t k = p->connect_fails < CONNECT_BACKOFF_SHIFT_MAX ? p->connect_fails
								   : CONNECT_BACKOFF_SHIFT_MAX;
	uint64_t wait = CONNECT_BACKOFF_NS << k;
	p->backoff_until_ns = now + (wait < CONNECT_BACKOFF_MAX_NS ? wait : CONNECT_BACKOFF_MAX_NS);
	p->connect_fails++;
}

/* ---- proto_h2.c: HTTP/2 connections and streams ------------------------ */

/* Bytes read from HTTP/2 connection c, through its session (callbacks
 * complete, reset and retry its streams), then what the session has to
 * send; c back on its host's idle list when it has a free stream. False: c
 * failed, or was done after a GOAWAY, and is closed. (The fuzz harness
 * feeds it directly.) */
bool eng_h2_input(struct worker *w, struct conn *c, const char *buf, size_t n, uint64_t now);

/* ---- flow.c: flows (engine_cfg.flows) ---------------------------------- */

/* An arrival due at due_ns starts a flow (its first step: a request into
 * its host's backlog, or a wait); over w->flows_max flows under way, or
 * without memory, it is dropped. */
void eng_flow_arrival(struct worker *w, uint64_t due_ns, uint64_t now);
/* The request of c's flow ended: r (a response, or a transport error) goes
 * to the flow, whose next step follows (a request only ever into the
 * backlog: nothing is sent from here). c->flow is ENG_FLOW_NONE after. */
void eng_flow_result(struct worker *w, struct conn *c, const struct engine_flow_result *r,
		     uint64_t now);
/* Wake the flows whose waits are due by now. */
void eng_flow_wakes(struct worker *w, uint64_t now);
/* Flow f's request, due at due_ns, could not be queued or sent: counted
 * dropped (and its session), and the flow ends. */
void eng_flow_drop(struct worker *w, uint32_t f, uint64_t due_ns, uint64_t now);
/* The step ended: every flow still under way is abandoned (counted in its
 * session's abandoned). */
void eng_flow_step_end(struct worker *w);
/* Size the flow table for a step whose worker keeps at most `max` flows. 0
 * or -ENOMEM. */
int eng_flow_reserve(struct worker *w, uint64_t max);
void eng_flow_free(struct worker *w);

/* The request of backlog entry r: a flow's (QE_FLOW), or cfg.reqs'. */
static inline const struct engine_req *eng_qent_req(const struct worker *w, uint32_t r)
{
	return (r & QE_FLOW) ? w->flows[QE_INDEX(r)].req : &w->e->cfg.reqs[QE_INDEX(r)];
}

/* The earliest wait of a flow (UINT64_MAX: none). */
static inline uint64_t eng_flow_next_wake(const struct worker *w)
{
	return w->n_waits ? w->waits[0].at_ns : UINT64_MAX;
}

/* ---- timers.c: the connections' own timers ----------------------------- */

/* The worker's timer heap (max_conns slots). 0 or -ENOMEM. */
int eng_timers_init(struct worker *w);
/* c's timer fires at `at` (UINT64_MAX: never; it leaves the heap). */
void eng_timer_set(struct worker *w, struct conn *c, uint64_t at);
/* The earliest timer (UINT64_MAX: none). */
uint64_t eng_timer_next(const struct worker *w);
/* Fire the timers due by now (each at most once a call), through their
 * transports' timer. */
void eng_timers_run(struct worker *w, uint64_t now);

/* ---- xport_quic.c: QUIC, the transport under HTTP/3 -------------------- */

/* Read what came on QUIC connection c, through ngtcp2 (stream events go to
 * its protocol's stream ops), then write what it has to send and set its
 * timer. 0, or -1: c ended (its failure counted by kind; the caller closes
 * it with eng_conn_close). */
int eng_quic_input(struct worker *w, struct conn *c);
/* Write what c has to send (the protocol's stream bytes first) and set its
 * timer. 0 or -1 as eng_quic_input. */
int eng_quic_flush(struct worker *w, struct conn *c, uint64_t now);
/* Open a bidirectional stream on c for user data ud: 0 and its id, or
 * -EAGAIN when the server allows no more now (MAX_STREAMS). */
int eng_quic_open_bidi(struct conn *c, int64_t *sid, void *ud);
/* Open a unidirectional stream: 0 and its id, or a negative errno. */
int eng_quic_open_uni(struct conn *c, int64_t *sid);
/* Bidirectional streams the server allows c to open now. */
uint64_t eng_quic_streams_left(const struct conn *c);
/* Unidirectional streams the server allows c to open now. */
uint64_t eng_quic_uni_left(const struct conn *c);
/* n bytes of stream sid were consumed: credit for the server to send more. */
void eng_quic_consumed(struct conn *c, int64_t sid, size_t n);
/* Reset stream sid both ways with application code (a timeout: cancelled). */
void eng_quic_shutdown_stream(struct conn *c, int64_t sid, uint64_t code);
/* Stop reading stream sid (STOP_SENDING with code) / stop writing it (RESET_STREAM). */
void eng_quic_shutdown_read(struct conn *c, int64_t sid, uint64_t code);
void eng_quic_shutdown_write(struct conn *c, int64_t sid, uint64_t code);
/* Packets carrying stream sid's bytes declared lost so far. */
uint64_t eng_quic_stream_lost(const struct conn *c, int64_t sid);
/* The protocol failed c (the server broke HTTP/3): c ends with
 * application code `code` after the packets being processed, counted in
 * errors.protocol and quic.close_local with the reason. */
void eng_quic_fail(struct worker *w, struct conn *c, uint64_t code, const char *reason);
/* The kernel's arrival stamp (CLOCK_REALTIME) of the datagram being
 * processed, 0: none. */
uint64_t eng_quic_rx_rt(const struct conn *c);
/* c stays open over the end of a step (idle, carried over): its smoothed
 * RTT is counted in the step, as a connection's is when it closes. */
void eng_quic_step_end(struct worker *w, struct conn *c);

/* ---- proto_h3.c: HTTP/3 connections and streams ------------------------ */

/* HTTP/3 bytes of stream sid of connection c, as the transport hands them
 * (the fuzz harness feeds them directly). 0, or nonzero after eng_quic_fail. */
int eng_h3_recv(struct worker *w, struct conn *c, int64_t sid, const uint8_t *data, size_t len,
		bool fin);

/* ---- pool.c: host pools, backoff, opening ----------------------------- */

/* Serve host h's backlog from its idle connections, then open what it still
 * needs (backoff, probe, eviction at the cap). */
void eng_serve_host(struct worker *w, uint32_t h, uint64_t now);
/* The earliest end of a connect backoff that holds back a host with
 * something to do (UINT64_MAX: none). */
uint64_t eng_backoff_wake(const struct worker *w, uint64_t now);
/* Open connections before a step's start (up to each host's share first). */
void eng_preopen(struct worker *w, uint64_t now);
/* Size w's backlog pool for a step at rate_per_s (per thread); before the
 * step starts, never shrinks it. 0 or -ENOMEM (the old pool is kept). */
int eng_queue_size(struct worker *w, double rate_per_s);

/* ---- series.c: the per-second series ---------------------------------- */

/* The current second's record moved on to second `sec` of the measured
 * phase; NULL when out of memory (w->oom set). Use series_at. */
struct sec_rec *eng_series_advance(struct worker *w, uint64_t sec);
/* Size w's series for span_ns of measured seconds (at a step's start, so
 * that it does not grow under load). 0 or -ENOMEM (the series then grows
 * as before, or reports its OOM). */
int eng_series_reserve(struct worker *w, uint64_t span_ns);
/* Close the current second: its histogram into the sparse pair store, and
 * the progress line's figures of the last full second. */
void eng_series_close_sec(struct worker *w);

/* A warm-up request completed at `now` with `latency_ns`: kept per second
 * since t0 for the progress line, whose p99 is then the last full warm-up
 * second's until a measured second closes. Never allocates. */
void eng_warm_second(struct worker *w, uint64_t now, uint64_t latency_ns);
/* Move the second's latencies (w->lat_sec) into the measured phase's
 * histograms and, with `series`, into the second's (sec_hist). */
void eng_lat_move(struct worker *w, bool series);
/* --precision-budget: size w's send window from a second's latencies h (no
 * latency: the window stays). */
void eng_precision_adapt(struct worker *w, const struct hist *h);
/* Merge every worker's series into res->series (allocated here, owned by
 * res). 0 or -ENOMEM. */
int eng_series_merge(struct engine *e, struct run_result *res);

/* The series record for an event of a measured request at time now (NULL:
 * out of memory). The current second is the common case, inline. */
static inline struct sec_rec *series_at(struct worker *w, uint64_t now)
{
	uint64_t warm_end = w->e->warm_end_ns;
	uint64_t sec = now > warm_end ? (now - warm_end) / NS_PER_S : 0;
	if (w->secs_len && w->sec_cur >= sec && !w->oom)
		return &w->secs[w->secs_len - 1];
	return eng_series_advance(w, sec);
}

/* A due request of phase ph dropped at time now (the backlog full, its
 * host refusing in closed loop, no memory for an HTTP/2 stream): counted in
 * the phase, the live figures and, in the measured phase, the second's
 * series. */
static inline void eng_count_dropped(struct worker *w, struct phase_stats *ph, uint64_t now)
{
	ph->dropped++;
	live_add(&w->live.dropped, 1);
	if (ph == &w->meas) {
		struct sec_rec *r = series_at(w, now);
		if (r)
			r->dropped++;
	}
}

/* ---- worker.c: the worker ----------------------------------------------- */

/* Set up worker `id` of e (its memory zeroed by the caller). 0 or -errno;
 * on failure eng_worker_free releases what was set up. */
int eng_worker_init(struct worker *w, struct engine *e, uint32_t id);
/* Free what eng_worker_init allocated (the thread has ended). */
void eng_worker_free(struct worker *w);
/* The thread: wait for a step, run it, until e->quit. */
void *eng_worker_main(void *arg);

/* ---- floor.c: the machine's floor --------------------------------------- */

/* engine_floor's job on one worker: timed sleeps for e->floor_ns, their
 * lateness into w->floor_hist; then done. */
void eng_worker_floor(struct worker *w, struct epoll_event *ev);
/* Round trips of one byte over loopback TCP between this thread and an echo
 * thread, for at most duration_ns, into f's rtt figures. 0 or a negative
 * errno. */
int eng_loopback_rtt(uint64_t duration_ns, struct gen_floor *f);

#endif
