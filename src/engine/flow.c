/* pacer — engine: flows (engine.h, engine_cfg.flows; engine_int.h draws the
 * whole engine). Requests a script makes while the load runs: an arrival
 * starts a flow; the flow says what it wants next (a request, due at a time
 * from which its latency counts; a wait; its end), one step at a time,
 * through the callbacks of its worker's state. A flow's request goes into
 * its host's backlog like any due request, carrying the flow's handle
 * (QE_FLOW), and its outcome comes back here from conn.c.
 *
 * Each worker keeps a table of its flows (handles are indices, reused
 * through a free list; grown by doubling up to flows_max, so nothing is
 * allocated per request once it has grown) and a min-heap of the flows
 * that wait. Sessions (cfg.flow_sessions) are counted here, in the phase of
 * their start. Nothing here sends: conn.c and pool.c call in, never the
 * other way, so a flow's next request waits for the loop's next dispatch. */
#include <errno.h>
#include <stdlib.h>

#include "engine/engine_int.h"

/* next_free of a flow in use (ENG_FLOW_NONE ends the free list) */
#define FLOW_IN_USE (ENG_FLOW_NONE - 1)
/* the table's first size (or flows_max, when smaller) */
#define FLOWS_FIRST 1024u

static struct session_stats *sessions_of(struct worker *w, uint32_t f)
{
	return w->e->cfg.flow_sessions ? &phase_of(w, w->flows[f].start_ns)->sessions : NULL;
}

/* ---- the table ------------------------------------------------------------ */

static int flows_grow(struct worker *w, uint32_t cap)
{
	if (cap <= w->flows_cap)
		return 0;
	struct eng_flow *f = realloc(w->flows, (size_t)cap * sizeof *f);
	if (!f)
		return -ENOMEM;
	w->flows = f;
	struct eng_wait *q = realloc(w->waits, (size_t)cap * sizeof *q);
	if (!q)
		return -ENOMEM;
	w->waits = q;
	w->flows_cap = cap;
	return 0;
}

int eng_flow_reserve(struct worker *w, uint64_t max)
{
	if (max > ENGINE_FLOWS_MAX)
		max = ENGINE_FLOWS_MAX;
	w->flows_max = max ? (uint32_t)max : 1;
	w->flows_free = ENG_FLOW_NONE;
	w->flows_hi = w->n_flows = w->n_waits = 0;
	w->flows_stopped = false;
	return flows_grow(w, w->flows_max < FLOWS_FIRST ? w->flows_max : FLOWS_FIRST);
}

void eng_flow_free(struct worker *w)
{
	free(w->flows);
	free(w->waits);
	w->flows = NULL;
	w->waits = NULL;
	w->flows_cap = 0;
}

/* A new flow started at start_ns, or ENG_FLOW_NONE (flows_max under way,
 * or no memory to grow the table). */
static uint32_t flow_new(struct worker *w, uint64_t start_ns)
{
	if (w->n_flows >= w->flows_max)
		return ENG_FLOW_NONE;
	uint32_t f = w->flows_free;
	if (f != ENG_FLOW_NONE) {
		w->flows_free = w->flows[f].next_free;
	} else {
		if (w->flows_hi == w->flows_cap) {
			uint64_t cap = 2ull * w->flows_cap;
			if (cap > w->flows_max)
				cap = w->flows_max;
			if (flows_grow(w, (uint32_t)cap) || w->flows_hi == w->flows_cap)
				return ENG_FLOW_NONE;
		}
		f = w->flows_hi++;
	}
	w->flows[f] =
		(struct eng_flow){.req = NULL, .start_ns = start_ns, .next_free = FLOW_IN_USE};
	w->n_flows++;
	return f;
}

static void flow_release(struct worker *w, uint32_t f)
{
	w->flows[f].req = NULL;
	w->flows[f].next_free = w->flows_free;
	w->flows_free = f;
	w->n_flows--;
}

/* ---- the waits: a binary min-heap by at_ns --------------------------------- */

static void wait_push(struct worker *w, uint64_t at_ns, uint32_t f)
{
	uint32_t i = w->n_waits++; /* room: one wait per flow, and flows_cap flows */
	while (i > 0) {
		uint32_t up = (i - 1) / 2;
		if (w->waits[up].at_ns <= at_ns)
			break;
		w->waits[i] = w->waits[up];
		i = up;
	}
	w->waits[i] = (struct eng_wait){.at_ns = at_ns, .flow = f};
}

static struct eng_wait wait_pop(struct worker *w)
{
	struct eng_wait top = w->waits[0];
	struct eng_wait last = w->waits[--w->n_waits];
	uint32_t n = w->n_waits, i = 0;
	for (;;) {
		uint32_t k = 2 * i + 1;
		if (k >= n)
			break;
		if (k + 1 < n && w->waits[k + 1].at_ns < w->waits[k].at_ns)
			k++;
		if (last.at_ns <= w->waits[k].at_ns)
			break;
		w->waits[i] = w->waits[k];
		i = k;
	}
	if (n)
		w->waits[i] = last;
	return top;
}

/* ---- what a flow asks for ----------------------------------------------------- */

/* The flow's script failed: the flow is over (counted abandoned) and every
 * worker ends the step. */
static void flow_failed(struct worker *w, uint32_t f)
{
	struct session_stats *ss = sessions_of(w, f);
	if (ss)
		ss->abandoned++;
	w->e->cfg.flows->abandon(w->flow_state, f);
	flow_release(w, f);
	atomic_store(&w->e->aborted, true);
	eng_stop_all(w->e);
}

static void flow_end(struct worker *w, uint32_t f, bool failed, uint64_t at_ns)
{
	struct session_stats *ss = sessions_of(w, f);
	if (ss) {
		uint64_t start = w->flows[f].start_ns;
		if (failed)
			ss->failed++;
		else
			ss->completed++;
		hist_record(&ss->duration, at_ns > start ? at_ns - start : 0);
	}
	flow_release(w, f);
}

/* Do what the flow's callback asked (rc: its return). */
static void flow_next(struct worker *w, uint32_t f, int rc, const struct engine_flow_next *nx)
{
	if (rc) {
		flow_failed(w, f);
		return;
	}
	if (nx->stop)
		w->flows_stopped = true;
	const struct engine_cfg *cfg = &w->e->cfg;
	switch (nx->op) {
	case ENGINE_FLOW_SEND: {
		/* due at at_ns, picked up now: after the script made it, so
		 * that its own time counts as the generator's lateness */
		uint64_t t = clock_now_ns(), at = nx->at_ns;
		struct phase_stats *ph = phase_of(w, at);
		ph->scheduled++;
		uint64_t lag = t > at ? t - at : 0;
		bool lagged = false;
		if (cfg->open_loop) {
			hist_record(&ph->timing[TIM_LOOP_LAG], lag);
			lagged = lag > w->lag_limit_ns || t < w->shadow_until_ns;
			if (lag > w->lag_limit_ns && t + lag > w->shadow_until_ns)
				w->shadow_until_ns = t + lag;
		}
		live_due(w, lag);
		struct session_stats *ss = sessions_of(w, f);
		if (ss)
			ss->steps++;
		w->flows[f].req = nx->req;
		if (!q_push(w, nx->req->host, at, f | QE_FLOW | (lagged ? QE_LAGGED : 0)))
			eng_flow_drop(w, f, at, t);
		return;
	}
	case ENGINE_FLOW_WAIT: wait_push(w, nx->at_ns, f); return;
	case ENGINE_FLOW_END:
	default: flow_end(w, f, nx->failed, nx->at_ns); return;
	}
}

void eng_flow_arrival(struct worker *w, uint64_t due_ns, uint64_t now)
{
	const struct engine_cfg *cfg = &w->e->cfg;
	struct phase_stats *ph = phase_of(w, due_ns);
	if (cfg->flow_sessions) {
		ph->sessions.on = true;
		ph->sessions.started++;
	}
	uint32_t f = flow_new(w, due_ns);
	if (f == ENG_FLOW_NONE) {
		/* its first request was due: dropped, as one the backlog
		 * cannot hold */
		ph->scheduled++;
		live_due(w, 0);
		eng_count_dropped(w, ph, now);
		if (cfg->flow_sessions)
			ph->sessions.dropped++;
		return;
	}
	struct engine_flow_next nx = {0};
	int rc = cfg->flows->start(w->flow_state, f, due_ns, &nx);
	flow_next(w, f, rc, &nx);
}

void eng_flow_result(struct worker *w, struct conn *c, const struct engine_flow_result *r,
		     uint64_t now)
{
	uint32_t f = c->flow;
	c->flow = ENG_FLOW_NONE;
	if (f == ENG_FLOW_NONE || f >= w->flows_hi || w->flows[f].next_free != FLOW_IN_USE)
		return;
	w->flows[f].req = NULL;
	if (atomic_load_explicit(&w->e->aborted, memory_order_relaxed))
		return; /* the script failed: nothing more is asked of it (abandoned at the end) */
	struct engine_flow_next nx = {0};
	int rc = w->e->cfg.flows->result(w->flow_state, f, r, now, &nx);
	flow_next(w, f, rc, &nx);
}

void eng_flow_wakes(struct worker *w, uint64_t now)
{
	/* the waits due now, but not one a wake adds again for now (a flow
	 * that waits 0 in a loop gets a turn per loop, not the whole loop) */
	uint32_t n = w->n_waits;
	while (n-- && w->n_waits && w->waits[0].at_ns <= now) {
		if (atomic_load_explicit(&w->e->aborted, memory_order_relaxed))
			return;
		struct eng_wait wt = wait_pop(w);
		struct engine_flow_next nx = {0};
		int rc = w->e->cfg.flows->wake(w->flow_state, wt.flow, wt.at_ns, &nx);
		flow_next(w, wt.flow, rc, &nx);
	}
}

void eng_flow_drop(struct worker *w, uint32_t f, uint64_t due_ns, uint64_t now)
{
	eng_count_dropped(w, phase_of(w, due_ns), now);
	struct session_stats *ss = sessions_of(w, f);
	if (ss)
		ss->dropped++;
	w->e->cfg.flows->abandon(w->flow_state, f);
	flow_release(w, f);
}

void eng_flow_step_end(struct worker *w)
{
	for (uint32_t f = 0; f < w->flows_hi; f++) {
		if (w->flows[f].next_free != FLOW_IN_USE)
			continue;
		struct session_stats *ss = sessions_of(w, f);
		if (ss)
			ss->abandoned++;
		w->e->cfg.flows->abandon(w->flow_state, f);
		flow_release(w, f);
	}
	w->n_waits = 0;
}
