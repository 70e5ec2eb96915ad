/* pacer — the result of a run: pure data filled by the engine, read by the
 * report writers. Per-thread phase stats are merged into one after the join.
 * No sockets, threads or clocks here. */
#ifndef PACER_RESULT_RESULT_H
#define PACER_RESULT_RESULT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "stats/hist.h"

/* Error kinds counted per request / connection. */
enum err_kind {
	ERRK_CONNECT = 0, /* connect() failed or timed out */
	ERRK_READ,        /* read error, or connection closed mid-response */
	ERRK_WRITE,       /* write error */
	ERRK_TIMEOUT,     /* no complete response within --timeout */
	ERRK_PARSE,       /* malformed response */
	ERRK_CLOSED,      /* closed by the server before any response byte */
	ERRK_COUNT
};

/* JSON / text name of an error kind ("connect", "read", ...). */
const char *err_kind_name(enum err_kind k);

enum timing {
	TIM_LATENCY = 0, /* scheduled time → last byte */
	TIM_SERVICE,     /* write → last byte */
	TIM_TTFB,        /* write → first byte */
	TIM_CONNECT,     /* connect() → connected, per new connection */
	TIM_SEND_LAG,    /* write − scheduled time (open loop) */
	TIM_LOOP_LAG,    /* due → picked up by the worker's loop (open loop):
			  * the generator's own lateness, without waits for a
			  * free connection */
	TIM_COUNT
};

/* JSON name of a timing ("latency", "service_time", ...). */
const char *timing_name(enum timing t);

#define STATUS_MIN 100
#define STATUS_MAX 999

/* What one phase (warm-up or measure) saw, for one thread or merged. */
struct phase_stats {
	uint64_t scheduled;        /* open loop: due in this phase; closed loop: = sent */
	uint64_t sent;             /* fully written */
	uint64_t completed;        /* full responses received (any status) */
	uint64_t queued_at_end;    /* due but never sent by the end of the drain */
	uint64_t in_flight_at_end; /* sent, no response by the end of the drain */
	uint64_t dropped;          /* due, but the queue was full: never sent */
	uint64_t late;             /* completed after their timeout had passed */
	uint64_t errors[ERRK_COUNT];
	uint64_t conns_opened;
	uint64_t closed_by_server; /* keep-alive ended by the server */
	uint64_t bytes_in, bytes_out;
	uint64_t status[STATUS_MAX + 1]; /* index = status code */
	struct hist timing[TIM_COUNT];
};

/* Allocate the histograms (default layout). 0 or -ENOMEM. */
int phase_stats_init(struct phase_stats *p);
void phase_stats_free(struct phase_stats *p);
/* Zero every counter and histogram, keeping the allocations. */
void phase_stats_reset(struct phase_stats *p);
/* dst += src. 0 or a negative code from hist_merge. */
int phase_stats_merge(struct phase_stats *dst, const struct phase_stats *src);
uint64_t phase_stats_errors(const struct phase_stats *p);
/* Responses with status in [lo*100, lo*100+99]. */
uint64_t phase_stats_class(const struct phase_stats *p, int cls);

/* Per-second time series of the measured phase. */
struct series_point {
	uint64_t completed;
	uint64_t errors;
	uint64_t p50_ns, p99_ns;
};

/* The headline figures of one repetition. */
struct rep_figure {
	double achieved_per_s;
	uint64_t p50_ns, p90_ns, p99_ns, p99_9_ns, max_ns;
	uint64_t completed, errors;
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
	uint32_t threads;
};

void run_result_free(struct run_result *r);
/* Pool `add` (a later repetition) into `into`: counters, histograms,
 * durations and CPU are summed; the series of `into` is kept. */
int run_result_pool(struct run_result *into, const struct run_result *add);
/* Headline figures of a finished run's measured phase. */
void rep_figure_of(const struct run_result *r, struct rep_figure *f);

#endif
