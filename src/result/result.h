/* pacer — the result of a run: pure data filled by the engine, read by the
 * report writers. Per-thread phase stats are merged into one after the join.
 * No sockets, threads or clocks here. */
#ifndef PACER_RESULT_RESULT_H
#define PACER_RESULT_RESULT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "stats/hist.h"
#include "util/sysinfo.h"

/* Error kinds counted per request / connection. */
enum err_kind {
	ERRK_CONNECT = 0, /* connect() failed or timed out */
	ERRK_READ,        /* read error, or connection closed mid-response */
	ERRK_WRITE,       /* write error */
	ERRK_TIMEOUT,     /* no complete response within --timeout */
	ERRK_PARSE,       /* malformed response */
	ERRK_CLOSED,      /* closed by the server before any response byte */
	ERRK_TLS,         /* TLS handshake failed (not tied to a request, like connect) */
	ERRK_RESET,       /* HTTP/2: the stream was reset by the peer (RST_STREAM, any code but
			   * REFUSED_STREAM, which is retried) */
	ERRK_PROTOCOL,    /* HTTP/2 connections that failed (not tied to a request, like
			   * connect): the peer sent no HTTP/2 SETTINGS (it does not speak
			   * HTTP/2), the peer ended it (GOAWAY or close) before it took any
			   * of the requests waiting for it, or a protocol, flow-control or
			   * compression error ended it (ours, or a GOAWAY code from the
			   * peer). Its requests in flight count as read (or closed) errors */
	ERRK_COUNT
};

/* JSON / text name of an error kind ("connect", "read", ...). */
const char *err_kind_name(enum err_kind k);
/* Whether a kind counts connections, not requests (connect, tls, protocol):
 * no request was waiting on such a failure, so it is not among a phase's
 * errors (phase_stats_request_errors). */
bool err_kind_is_connection(enum err_kind k);

/* Why a connect failed (errors[ERRK_CONNECT] split by cause): the target
 * refused it (ECONNREFUSED: nothing listens), reset or aborted it, it did
 * not complete within --timeout (or the kernel's SYN retries timed out), or
 * anything else (unreachable, out of local ports or descriptors, ...). */
enum connect_cause {
	CONNF_REFUSED = 0,
	CONNF_RESET,
	CONNF_TIMEOUT,
	CONNF_OTHER,
	CONNF_COUNT
};

/* JSON / text name of a connect cause ("refused", "reset", "timeout",
 * "other"). */
const char *connect_cause_name(enum connect_cause k);
/* The cause of a failed connect from its errno (positive or negative; 0:
 * the socket reported an error without a code, CONNF_OTHER). */
enum connect_cause connect_cause_of(int err);

enum timing {
	TIM_LATENCY = 0, /* scheduled time → last byte */
	TIM_SERVICE,     /* write → last byte */
	TIM_TTFB,        /* write → first byte */
	TIM_CONNECT,     /* connect() → connected, per new connection */
	TIM_SEND_LAG,    /* write − scheduled time (open loop) */
	TIM_LOOP_LAG,    /* due → picked up by the worker's loop (open loop):
			  * the generator's own lateness, without waits for a
			  * free connection */
	TIM_SERVER,      /* server-reported execution time (--server-time);
			  * empty unless asked for */
	TIM_HANDSHAKE,   /* connected → TLS handshake done, per new TLS connection
			  * (full and resumed handshakes both) */
	TIM_LATENCY_OK,  /* latency of the requests that succeeded */
	TIM_LATENCY_FAILED, /* latency of the requests that did not: failed
			  * responses, and timeouts at the time waited */
	TIM_LATENCY_LAGGED, /* latency of the requests the generator's loop picked
			  * up late (lagged_sent; open loop): TIM_LATENCY less
			  * these is the requests pacer sent on time */
	TIM_COUNT
};

/* JSON name of a timing ("latency", "service_time", ...). */
const char *timing_name(enum timing t);

#define RESULT_MAX_OUTCOMES 16 /* --outcome rules per run */
#define RESULT_MAX_HOSTS 64    /* hosts of one request table */
#define RESULT_MAX_NAMES 64    /* request names with figures of their own; later
				* distinct names are pooled into one more entry,
				* "other" (result/names.h) */
#define NAME_SUB_BITS 7        /* per-name latency histograms: relative error < 1/64 */

/* What one host of a request table saw (index = the table's host index). */
struct host_stats {
	uint64_t completed;        /* full responses received */
	uint64_t errors;           /* its requests that did not succeed (phase_stats_errors) */
	uint64_t conn_errors;      /* failed connects and TLS handshakes */
	uint64_t conns_opened;
	/* The protocol it spoke: connections that spoke HTTP/2 (the server's
	 * SETTINGS came) or HTTP/1.1 (plain runs, and --http2=prefer when the
	 * server kept it), and the requests sent over each (a phase's requests
	 * by their scheduled time, so that connections opened in the warm-up
	 * still tell the measured phase's protocol; over HTTP/2 each stream
	 * opened, a retried request again). */
	uint64_t conns_h2, conns_h1;
	uint64_t sent_h2, sent_h1;
	uint64_t conns_h3, sent_h3; /* HTTP/3 (--http3): connections whose QUIC handshake
	                             * completed, and the requests (streams) sent over them */
	/* HTTP/2 and HTTP/3: streams in flight on the connection at each
	 * request sent over it: the most, and their sum (mean = streams_sum /
	 * (sent_h2 + sent_h3)). */
	uint64_t streams_max, streams_sum;
};

/* What the requests of one name saw (index = the run's name index,
 * result/names.h). A response succeeds when the --success rule holds or,
 * without one, when its status is 200..399; the name's errors are its
 * failed responses plus its transport errors (completed - ok + errors). */
struct name_stats {
	uint64_t completed;        /* full responses received (any status) */
	uint64_t ok;               /* completed responses that succeeded */
	uint64_t errors;           /* request transport errors: read, write, timeout,
				    * parse, closed (connect and TLS are per connection) */
	uint64_t in_flight_at_end; /* sent, no response by the end of the drain. Sent
				    * (not counted apart, to keep it off the send path)
				    * = completed + errors + in_flight_at_end */
	struct hist latency;       /* as TIM_LATENCY (timeouts at the time waited), in the
				    * coarser NAME_SUB_BITS layout */
};

#define RESULT_TLS_REASONS 4       /* distinct TLS failure reasons kept */
#define RESULT_TLS_REASON_CAP 200  /* bytes of each, NUL included */

#define STATUS_MIN 100
#define STATUS_MAX 999

#define H2_RST_CODES 14 /* HTTP/2 error codes 0x0..0xd; another code is counted in the last */

/* HTTP/2 (--h2c, --http2) of one phase; all zero over HTTP/1.1. */
struct h2_stats {
	uint64_t conns_h2;          /* connections that spoke HTTP/2 */
	uint64_t conns_h1;          /* --http2=prefer: connections the server kept on HTTP/1.1 */
	uint64_t goaway;            /* GOAWAY frames received */
	uint64_t retried;           /* requests the server did not process (above a GOAWAY's
	                             * last stream, or reset with REFUSED_STREAM), sent again
	                             * (their latency still counts from the first schedule;
	                             * each is counted in sent once) */
	uint64_t refused;           /* of those, reset with REFUSED_STREAM */
	uint64_t rst[H2_RST_CODES]; /* streams reset by the peer, by error code (REFUSED_STREAM
	                             * included: retried, not an error) */
	uint64_t streams_max;       /* most streams in flight on one connection */
	uint64_t streams_sum;       /* streams in flight on the connection, summed at each
	                             * request sent: mean = streams_sum / sent */
	uint64_t streams_n;         /* requests sent over HTTP/2 */
};

/* Sessions of a script (pacer.session; engine_cfg.flow_sessions): each
 * arrival starts one, which sends its steps in turn. Counted in the phase
 * of its start (the arrival's due time); started = completed + failed +
 * abandoned + dropped. Its steps are requests like any other, counted by
 * their own due times (per step: the per-name figures). */
struct session_stats {
	bool on;              /* the run had sessions (the figures below mean something) */
	uint64_t started;     /* arrivals that started a session */
	uint64_t completed;   /* ended with every step successful */
	uint64_t failed;      /* ended after a step failed (a transport error, a response that
			     * failed the success rule) or the script failed it (s:fail) */
	uint64_t abandoned;   /* still under way when the step's drain ended */
	uint64_t dropped;     /* a request of theirs could not be queued (the backlog full, the
			     * host refusing; or more sessions under way than a worker keeps):
			     * ended there, never sent */
	uint64_t steps;       /* requests the sessions sent (a step retried counts once) */
	struct hist duration; /* completed and failed: start -> end (the last step's response,
			       * or the end of a sleep after it), NAME_SUB_BITS layout */
};

/* HTTP/3 stream resets and connection closes by application error code:
 * H3_NO_ERROR..H3_VERSION_FALLBACK (0x100..0x110), QPACK's three
 * (0x200..0x202), then any other code. */
#define H3_ERR_CODES 21
/* The index of an HTTP/3 application error code, and the code's name
 * ("H3_REQUEST_REJECTED"; "OTHER" for the last index). */
unsigned h3_err_index(uint64_t code);
const char *h3_err_name(unsigned index);

/* HTTP/3 (--http3) of one phase; all zero otherwise. */
struct h3_stats {
	uint64_t conns_h3;          /* connections whose QUIC handshake completed (HTTP/3 by
	                             * ALPN h3) */
	uint64_t goaway;            /* GOAWAY frames received */
	uint64_t retried;           /* requests the server did not process (reset with
	                             * H3_REQUEST_REJECTED, or above a GOAWAY's id), sent again
	                             * (latency from the first schedule; counted in sent once) */
	uint64_t resets[H3_ERR_CODES]; /* request streams reset by the server, by code
	                             * (H3_REQUEST_REJECTED included: retried, not an error) */
	uint64_t streams_max;       /* most streams in flight on one connection */
	uint64_t streams_sum;       /* streams in flight, summed at each request sent */
	uint64_t streams_n;         /* requests sent over HTTP/3 */
	uint64_t stream_credit_waits; /* requests that found every connection of their host
	                             * open, ready and out of stream credit (the server's
	                             * MAX_STREAMS): they wait in the backlog, their latency
	                             * running */
	uint64_t fc_blocked;        /* requests whose bytes waited for the server's flow
	                             * control credit (MAX_STREAM_DATA, MAX_DATA) */
};

/* QUIC (--http3) of one phase: what the transport under HTTP/3 did, from
 * ngtcp2's connection figures. Packets are UDP datagrams on pacer's side;
 * what the server lost and resent shows only as latency. */
struct quic_stats {
	uint64_t handshakes;        /* completed (in the phase of their connect) */
	uint64_t pkts_sent, pkts_recv; /* datagrams */
	uint64_t pkts_lost;         /* pacer's packets carrying request data that ngtcp2 declared
	                             * lost (and sent again), by the stream loss count */
	uint64_t congestion_events; /* times ngtcp2 entered congestion recovery (a loss or an
	                             * ECN mark: the congestion window cut) */
	uint64_t pto;               /* probe timeouts: nothing acknowledged in time, probes sent */
	uint64_t cwnd_stalls;       /* writes that stopped with request bytes left, the
	                             * congestion window full (the bytes wait: latency counts) */
	uint64_t tx_dropped;        /* datagrams the socket did not take (its buffer full);
	                             * QUIC sends their data again */
	uint64_t rx_dropped;        /* datagrams received and dropped (larger than 64 KiB, or
	                             * refused by ngtcp2 as not this connection's) */
	/* How connections ended (each counted once; none for those pacer
	 * closed itself at the end or when done) */
	uint64_t close_idle;        /* the idle timeout: nothing from the server in time */
	uint64_t close_peer;        /* the server's CONNECTION_CLOSE (a transport error code,
	                             * NO_ERROR included) */
	uint64_t close_peer_app;    /* the server's CONNECTION_CLOSE with an application code */
	uint64_t close_app_codes[H3_ERR_CODES]; /* close_peer_app by code */
	uint64_t close_reset;       /* a stateless reset from the server */
	uint64_t close_unreachable; /* ICMP port unreachable after the handshake: the server's
	                             * process or port went away (as a TCP reset; counted in
	                             * connections.closed_by_server, not as a protocol error) */
	uint64_t close_local;       /* pacer closed it: the server broke QUIC or HTTP/3 (a
	                             * malformed frame, a flow-control or limit violation) */
	uint64_t version_negotiation; /* handshakes answered by a version negotiation
	                             * without QUIC v1 */
	/* each connection's smoothed RTT when it ended */
	uint64_t rtt_n, rtt_sum_ns, rtt_max_ns;
	bool gso, gro;              /* the sockets sent with UDP GSO / received with GRO */
};

/* What one phase (warm-up or measure) saw, for one thread or merged. */
struct phase_stats {
	uint64_t scheduled;        /* open loop: due in this phase; closed loop: = sent */
	uint64_t sent;             /* fully written */
	uint64_t completed;        /* full responses received (any status) */
	uint64_t queued_at_end;    /* due but never sent by the end of the drain */
	uint64_t in_flight_at_end; /* sent, no response by the end of the drain */
	uint64_t dropped;          /* due, but the queue was full: never sent */
	uint64_t late;             /* completed after their timeout had passed */
	/* Open loop: requests the generator's loop picked up more than the lag
	 * limit (--lag-limit) after they were due, so that they left in a clump
	 * with those due after them, or in such a clump's shadow (picked up
	 * within as long after it as it was late: the target is still absorbing
	 * the clump), and of those the ones that did not succeed (a failed
	 * response or a request transport error). The self-check judges SLO
	 * clauses by them (result/verdict.h, docs/selfcheck.md). */
	uint64_t lagged_sent, lagged_failed;
	uint64_t errors[ERRK_COUNT];
	uint64_t connect_fail[CONNF_COUNT]; /* errors[ERRK_CONNECT] by cause (sums to it) */
	uint64_t conns_opened;
	uint64_t conns_connecting_at_start; /* still connecting when the phase began (the
					     * pool not yet up): same snapshot and rules */
	uint64_t conns_open_at_start; /* connected when the phase began: a snapshot at the
				       * boundary (a step's first phase: connections carried
				       * over; those opened before its first request count in
				       * conns_opened). Threads: summed; repetitions: the first's */
	uint64_t closed_by_server; /* keep-alive ended by the server */
	uint64_t closed_stray;     /* closed by pacer: the server sent bytes nobody asked for
	                            * (a response without a request; HTTP/1.1 is not pipelined) */
	/* Open loop, summed over threads: wall time in which due requests waited
	 * in the backlog while every connection of their worker was in use
	 * (open or opening), and the part of it that worker spent blocked
	 * waiting for responses (the rest it was busy, or off its CPU). Set by
	 * the engine; read by the achieved_rate self-check (gencheck.h). */
	uint64_t cap_wait_ns, cap_wait_idle_ns;
	uint64_t bytes_in, bytes_out;
	uint64_t status[STATUS_MAX + 1]; /* index = status code */
	uint64_t status_failed[STATUS_MAX + 1]; /* of those, failed the success rule */
	struct hist timing[TIM_COUNT];

	/* Response rules (--success, --outcome, --server-time): counted for
	 * completed responses. success_ok always (the --success rule, or by
	 * default a status in 200..399); the others only when given. */
	uint64_t success_ok;                   /* responses that succeeded */
	uint64_t outcome[RESULT_MAX_OUTCOMES]; /* per --outcome, in the order given */
	uint64_t server_time_missing;          /* no readable server time in the response */

	/* TLS: completed handshakes, resumed ones among them, what was
	 * negotiated first, and the first distinct failure reasons (failures
	 * are counted in errors[ERRK_TLS]). */
	uint64_t tls_handshakes, tls_resumed;
	char tls_version[16], tls_cipher[64];
	uint32_t n_tls_reasons;
	char tls_reasons[RESULT_TLS_REASONS][RESULT_TLS_REASON_CAP];

	struct h2_stats h2;        /* HTTP/2: zero otherwise */
	struct session_stats sessions; /* scripts' sessions: zero (on false) otherwise */
	struct h3_stats h3;        /* HTTP/3: zero otherwise */
	struct quic_stats quic;    /* QUIC (HTTP/3): zero otherwise */

	/* Per host (counted with one host too; reported with several). */
	uint32_t n_hosts;
	struct host_stats host[RESULT_MAX_HOSTS];

	/* Per request name: only when the run has 2 or more names
	 * (phase_stats_init_names), else n_names 0 and name NULL: a run of one
	 * name records nothing per name. Owned. */
	uint32_t n_names;
	struct name_stats *name;
};

/* Allocate the histograms (default layout); no per-name figures. 0 or
 * -ENOMEM. */
int phase_stats_init(struct phase_stats *p);
/* Add per-name figures for n names (2..RESULT_MAX_NAMES + 1) to an
 * initialised phase without them: counters zeroed, histograms in the
 * NAME_SUB_BITS layout. 0, -EINVAL (n out of range, or names already there)
 * or -ENOMEM (p unchanged). Not for the hot path. */
int phase_stats_init_names(struct phase_stats *p, uint32_t n);
/* Free the histograms and the per-name figures (name NULL, n_names 0). */
void phase_stats_free(struct phase_stats *p);
/* Zero every counter and histogram, keeping the allocations (the per-name
 * entries too). */
void phase_stats_reset(struct phase_stats *p);
/* dst += src. Per-name figures are summed by index; dst gets them (zeroed,
 * then added) when src has them and dst has none. 0, -ENOMEM, or
 * PACER_ELAYOUT (histogram layouts, or the two phases' name counts, differ). */
int phase_stats_merge(struct phase_stats *dst, const struct phase_stats *src);
/* Transport errors of every kind, connection-level ones included. */
uint64_t phase_stats_transport_errors(const struct phase_stats *p);
/* Transport errors of requests sent: all but the connection-level kinds
 * (connect, tls, protocol), which no request was waiting on. */
uint64_t phase_stats_request_errors(const struct phase_stats *p);
/* Complete responses that failed the success rule. */
uint64_t phase_stats_failed_responses(const struct phase_stats *p);
/* The errors of a phase: requests sent that did not succeed, i.e. request
 * transport errors + failed responses. The one definition every figure,
 * table, SLO and report uses. */
uint64_t phase_stats_errors(const struct phase_stats *p);
/* errors / sent, in percent (0 when nothing was sent). */
double phase_stats_error_pct(const struct phase_stats *p);
/* Keep a TLS failure reason if it is new and there is room (truncated to
 * RESULT_TLS_REASON_CAP - 1 bytes). */
void phase_stats_tls_reason(struct phase_stats *p, const char *reason);
/* Whether the phase spoke HTTP/3 over QUIC (or tried: a connection sent
 * or received a datagram). */
bool phase_stats_quic(const struct phase_stats *p);
/* Responses with status in [lo*100, lo*100+99]. */
uint64_t phase_stats_class(const struct phase_stats *p, int cls);

/* The target's resources over one measured phase (--target-pid,
 * --target-cgroup, or the embedded target when self-contained). */
#define TARGET_NOTE_CAP 6
#define TARGET_NOTE_LEN 200
struct target_usage {
	bool known;
	char source[128];        /* "pid 1234", "pid 1234 + children", "cgroup PATH", "self_contained" */
	bool split_known;        /* user/system split available */
	double cpu_user_s, cpu_sys_s, cpu_s;
	double cores_busy;       /* cpu_s / phase seconds */
	bool rss_known;
	uint64_t rss_start_bytes, rss_peak_bytes, rss_end_bytes;
	/* Waits for a CPU over the phase (docs/cost.md "The target's waits for
	 * a CPU"): by PID and self-contained, its threads' summed run delay
	 * (time runnable, waiting on a run queue); for a cgroup, the time at
	 * least one of its tasks so waited (cpu.pressure "some"), another
	 * quantity, kept apart. */
	bool cpu_wait_known;
	double cpu_wait_s;
	bool cpu_pressure_known;
	double cpu_pressure_some_s;
	size_t n_notes;
	char notes[TARGET_NOTE_CAP][TARGET_NOTE_LEN];
};

/* A target's wait for a CPU is material, and the reports say it was
 * starved of CPU, when its threads waited at least this share of the time
 * they were ready to run (wait / (wait + CPU)): at a CPU-bound load that
 * share is about the share of its capacity the wait took away, and 20 %
 * is a capacity a fifth short; */
#define TARGET_CPU_WAIT_MATERIAL_PCT 20.0
/* and when those waits add up to at least this percent of the phase (on
 * average a twentieth of a thread waiting): a nearly idle target waits a
 * few microseconds at each wake-up, a large share of its short bursts of
 * CPU even on an idle machine, and costs nothing of its capacity. */
#define TARGET_CPU_WAIT_MIN_PHASE_PCT 5.0
/* For a cgroup: at least one of its tasks waited for a CPU this share of
 * the phase (cpu.pressure "some" over the phase, as PSI's own averages). */
#define TARGET_CPU_PRESSURE_MATERIAL_PCT 20.0

/* 100 * wait / (wait + CPU) of t's phase: the share of the time its
 * threads were ready to run that they spent waiting for a CPU; NAN when
 * the wait was not measured, 0 when they neither ran nor waited. */
double target_usage_cpu_wait_pct(const struct target_usage *t);
/* 100 * cpu_pressure_some_s / phase_s; NAN when not measured. */
double target_usage_pressure_pct(const struct target_usage *t, double phase_s);
/* Whether a wait of wait_pct (target_usage_cpu_wait_pct) adding up to
 * wait_s over a phase of phase_s is material (the thresholds above);
 * false when any is not finite. */
bool target_cpu_wait_material(double wait_pct, double wait_s, double phase_s);
/* Whether a cgroup's CPU pressure of pressure_pct is material. */
bool target_cpu_pressure_material(double pressure_pct);

/* Per-second time series of the measured phase. */
struct series_point {
	uint64_t completed;
	uint64_t errors;           /* failed responses + transport_errors */
	uint64_t by_class[5];      /* responses by status class, 1xx..5xx */
	uint64_t transport_errors; /* requests failed on the connection */
	/* What kept requests from being sent: connects that failed in this
	 * second, by cause (summed over the seconds: the phase's connect_fail,
	 * measured phase and drain); requests due in this second and dropped
	 * (summed: the phase's dropped); and requests due but not yet sent at
	 * the second's end, waiting in the backlog for a connection (a gauge:
	 * not summed over seconds; the last second's is the phase's
	 * queued_at_end when the run ends in it). */
	uint64_t connect_fail[CONNF_COUNT];
	uint64_t dropped;
	uint64_t unsent;
	/* QUIC (--http3): packets declared lost and congestion-window stalls
	 * in this second (summed: the phase's pkts_lost and cwnd_stalls) */
	uint64_t quic_lost, quic_stalls;
	uint64_t p50_ns, p99_ns;
	/* the second's latency histogram (layout SERIES_SUB_BITS): non-empty
	 * buckets as [lowest value ns, count] pairs, owned */
	uint64_t (*pairs)[2];
	size_t n_pairs;
};

#define SERIES_SUB_BITS 7 /* per-second histograms: relative error < 1/64 */

/* The headline figures of one repetition. */
struct rep_figure {
	double achieved_per_s;
	uint64_t p50_ns, p90_ns, p99_ns, p99_9_ns, max_ns;
	uint64_t completed, errors;
	uint64_t failed_responses; /* of errors: complete responses that failed the success rule */
	uint64_t transport_errors; /* of errors: requests that failed on their connection */
	double error_pct;          /* errors / sent, percent */
	/* the warm-up before it (rep_figure_of; not counted in the figures
	 * above): responses and requests that did not succeed */
	uint64_t warmup_completed, warmup_errors;
	/* outcome k's share of the completed responses, percent */
	double outcome_pct[RESULT_MAX_OUTCOMES];
	/* what the target used (run_result.target), when it was measured */
	bool target_known, target_rss_known;
	double target_cpu_ms_per_req;   /* its CPU over the completed responses */
	double target_rss_peak_mib;
};

/* What this machine lets the generator promise (generator.floor), measured
 * on its worker threads before the load (engine_floor): how late a timed
 * sleep of theirs wakes, by the same call and timer slack pacing uses, and,
 * when the target is on this machine, what one loopback round trip takes. */
struct gen_floor {
	bool known;
	const char *method;          /* static: "sleep" (clock_nanosleep, batched pacing) or
				      * "epoll" (the loop's timed wait, precise pacing) */
	uint64_t slack_ns;           /* the workers' timer slack */
	bool realtime;               /* measured at the real-time priority (--realtime) */
	uint64_t duration_ns;        /* the measurement's wall time */
	uint64_t samples;            /* timed sleeps, over every worker */
	uint64_t wake_p50_ns, wake_p99_ns, wake_max_ns; /* their lateness */
	bool rtt_known;              /* a loopback round trip was measured */
	uint64_t rtt_samples;
	uint64_t rtt_p50_ns, rtt_p99_ns;
	double rtt_cpu_ns;           /* CPU of one round trip, both ends */
};

/* Everything a report needs about one run. */
struct run_result {
	/* identity / conditions */
	uint64_t started_wall_ns;
	bool interrupted;
	bool open_loop;
	double offered_rate_per_s; /* 0 in closed loop */
	uint64_t warmup_ns;        /* as run */
	uint64_t measure_ns;       /* measured phase as run (shorter if interrupted) */
	uint64_t window_ns;        /* the measured phase as planned (0: bounded by a count),
				    * in which its `scheduled` requests were due */

	struct phase_stats warmup;
	struct phase_stats measure;

	struct series_point *series; /* owned */
	size_t series_len;

	/* --repeat: each repetition's figures (owned); the phases above pool
	 * every repetition (counters summed, histograms merged). */
	struct rep_figure *reps;
	size_t n_reps;

	/* generator self-check inputs */
	uint64_t gen_cpu_ns;         /* worker threads' CPU, measured phase + drain */
	uint64_t gen_spin_ns;        /* precise pacing: time the workers spent polling for due
				      * times (their CPU), over the same span */
	uint64_t *pace_windows_ns;   /* batched pacing: the send window of each worker's each
				      * measured second (owned; repetitions appended) */
	size_t n_pace_windows;
	bool pace_batched;             /* the open loop paced in batches (else precisely) */
	double gen_busiest_thread_pct; /* the busiest worker's CPU over its step, % of one core */
	uint64_t *gen_thread_cpu_ns; /* per worker thread (threads entries), owned; NULL if unknown */
	bool gen_cpu_wait_known;     /* the kernel reported the run delay below */
	uint64_t gen_cpu_wait_ns;    /* worker threads' time runnable but waiting for a CPU,
				      * summed, over the whole step (warm-up to drain) */
	bool gen_steal_known;        /* the hypervisor's steal time was read around the load */
	struct steal_span gen_steal; /* that steal, and the CPU time it came out of, over the
				      * load (warm-up to drain): the generator's CPUs (its
				      * affinity) and the machine's; summed over repetitions */
	uint64_t measure_start_ns;   /* CLOCK_MONOTONIC start of the measured phase (its
				      * end: + measure_ns), for probes sampled beside it */

	/* What the target used over the measured phase (probe/probe.h), filled
	 * by the CLI after the step; known = false when nothing was probed. */
	struct target_usage target;
	uint32_t threads;
	bool rx_stamped;             /* responses were timed by the kernel's receive stamps
				      * (TCP), not when the loop read them (Unix sockets) */
};

void run_result_free(struct run_result *r);
/* Add a later measurement's target usage (CPU summed, RSS peak kept, notes
 * merged); total_s: the pooled measured seconds, for cores_busy. */
void target_usage_pool(struct target_usage *into, const struct target_usage *add,
		       double total_s);
/* Pool `add` (a later repetition) into `into`: counters, histograms,
 * durations and CPU are summed; the series of `into` is kept. */
int run_result_pool(struct run_result *into, const struct run_result *add);

/* The hypervisor's steal time on the generator's CPUs at or above this
 * percent of their time is worth a warning: on this project's 2-CPU VM, at
 * 20k req/s, 0.5 % left send-lag p99 under 1 ms, 3 % took it to 8 ms and
 * 30 % to 20 ms. */
#define RESULT_STEAL_WARN_PCT 1.0

/* The hypervisor's steal time over the load as a percent of the CPU time
 * of the generator's CPUs (machine: of every CPU); NAN when not known. */
double run_result_steal_pct(const struct run_result *r, bool machine);

/* Whether that steal is worth a warning: RESULT_STEAL_WARN_PCT or more as
 * the result writes it (two decimals), and still so with a tick taken off
 * each CPU's count (a short load's single tick is not a warning). */
bool run_result_steal_material(const struct run_result *r);
/* Headline figures of a finished run's measured phase. */
void rep_figure_of(const struct run_result *r, struct rep_figure *f);
/* The same figures of any phase p that lasted duration_ns (a warm-up). */
void rep_figure_of_phase(const struct phase_stats *p, uint64_t duration_ns, struct rep_figure *f);

#endif
