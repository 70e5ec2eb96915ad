/* pacer — the live figures a person watches during a measurement: what the
 * terminal's live view (cli/live_view.c) and the page of --metrics-listen
 * (/live.json) show. A tracker is fed the engine's live counters
 * (engine_live) and progress (engine_progress) about once a second and
 * turns them into the figures of the last second and of the phase so far.
 * No sockets, threads or clocks: the caller hands it the time. */
#ifndef PACER_METRICS_LIVE_H
#define PACER_METRICS_LIVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "engine/engine.h"
#include "result/result.h"

enum live_phase { LIVE_IDLE = 0, LIVE_WARMUP, LIVE_MEASURE, LIVE_DRAIN };

/* Static name of a phase: "idle", "warm-up", "measure", "drain". */
const char *live_phase_name(enum live_phase ph);

struct live_figs {
	enum live_phase phase;
	uint32_t step;          /* ramp: 1-based step (0: not a ramp) */
	uint32_t planned_steps; /* ramp: the planned steps */
	double offered_per_s;   /* 0: closed loop */
	uint64_t elapsed_ns;    /* since the step's load began (warm-up included) */
	uint64_t total_ns;      /* planned warm-up + measure (0: unknown, -n N) */
	/* the last second (between the last two ticks) */
	double achieved_per_s;           /* responses */
	double sent_per_s;               /* requests written */
	uint64_t sec_n;                  /* responses in it */
	uint64_t sec_p50_ns, sec_p99_ns; /* from the live buckets (0: none) */
	uint64_t sec_max_ns;             /* exact, of the engine's last full second (0: none yet) */
	uint64_t lag_p99_ns;             /* open loop: generator lag (due -> picked up) */
	/* the phase so far (warm-up, then measure from its start) */
	uint64_t phase_n;
	uint64_t phase_p50_ns, phase_p99_ns, phase_max_ns;
	/* the step so far (warm-up included) */
	uint64_t completed, sent, dropped;
	uint64_t errors[ERRK_COUNT];
	uint64_t errors_total;
	uint64_t status_class[6]; /* 1xx..5xx; [0]: outside 100..599 */
	/* gauges */
	uint64_t backlog, conns_open;
};

/* The state between ticks: the counters at the step's and the phase's
 * start and at the last tick. Caller-allocated (about 7 KiB). */
struct live_track {
	struct engine_live at_step, at_phase, prev;
	uint64_t prev_ns;
	enum live_phase phase;
	uint64_t last_max_ns;
	struct live_figs figs; /* as of the last tick */
	bool begun;
};

/* A step begins: now is engine_live's snapshot at that moment, now_ns the
 * monotonic time. step/planned_steps: ramp (0 otherwise). */
void live_track_begin(struct live_track *t, const struct engine_live *now, uint64_t now_ns,
		      uint32_t step, uint32_t planned_steps, double offered_per_s);
/* The warm-up ended (looked at more often than the ticks): the measured
 * phase's figures count from now's counters. Once a step; a tick that
 * finds the warm-up over without it counts from the tick before. */
void live_track_phase_start(struct live_track *t, const struct engine_live *now);
/* A tick: the live counters and the progress now; fills t->figs. A tick
 * less than 0.2 s after the last one keeps the last second's figures. */
void live_track_tick(struct live_track *t, const struct engine_live *now,
		     const struct engine_progress *p, uint64_t now_ns);

/* Quantile q (0..1) of live buckets (ENGINE_LIVE_BUCKETS + 1 counts, not
 * cumulative), in ns: linear within the bucket holding the rank; 0 when
 * empty; the overflow bucket gives its lower edge. */
uint64_t live_quantile_ns(const uint64_t *buckets, double q);

/* /live.json: {"variants":[{...figures...}, ...]} for n trackers (names:
 * n strings or NULL). Pure but for f; 0, or -EIO. docs/metrics.md lists
 * the keys. */
int live_json_write(FILE *f, const struct live_figs *const *v, const char *const *names, size_t n);

#endif
