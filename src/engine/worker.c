/* pacer — engine: the worker loop. Per step: reset, open connections, then
 * turn by turn take the due requests of the schedule (open loop) or keep the
 * concurrency outstanding (closed loop), serve every host, check the
 * timeouts and wait for events, until the load and its drain are over. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>

#include "engine/engine_int.h"
#include "plan/inspect.h"

static bool stopping(struct worker *w)
{
	return atomic_load_explicit(&w->e->stop, memory_order_relaxed);
}

/* May a closed-loop worker issue another request now? */
static bool closed_can_issue(struct worker *w, uint64_t now)
{
	const struct engine *e = w->e;
	if (now < e->t0_ns || now >= e->meas_end_ns || w->flows_stopped)
		return false;
	if (now >= e->warm_end_ns && e->step.requests && w->issued_measure >= w->quota)
		return false;
	return true;
}

/* Closed loop: keep the worker's share of the concurrency outstanding
 * (sent, or waiting for a connection of its host). A request is scheduled
 * when it is chosen (its host is known only then) and waits in its host's
 * backlog for a connection, which eng_serve_host opens; one for a host that
 * refuses is dropped, since it would hold a slot of the concurrency (at most
 * max_conns of them per call, so a dead target is not spun on). One host is
 * the case of several: connections closed by the server or after errors are
 * reopened for the requests that wait, and in a count-bounded phase only as
 * many requests are chosen as remain. */
static void closed_issue(struct worker *w)
{
	const struct engine_cfg *cfg = &w->e->cfg;
	uint32_t drops = 0;
	if (cfg->flows) {
		/* a flow is a virtual user: its wait, or its request queued or
		 * in flight, holds its slot until it ends (at most as many
		 * starts a call as slots: a flow may end at once) */
		for (uint32_t k = 0;
		     k < w->closed_outstanding && w->n_flows < w->closed_outstanding; k++) {
			uint64_t t = clock_now_ns();
			if (!closed_can_issue(w, t) ||
			    atomic_load_explicit(&w->e->aborted, memory_order_relaxed))
				break;
			if (t >= w->e->warm_end_ns)
				w->issued_measure++;
			eng_flow_arrival(w, t, t);
		}
		return;
	}
	while ((w->timed.len - w->n_connecting) + w->q_len < w->closed_outstanding) {
		uint64_t t = clock_now_ns();
		if (!closed_can_issue(w, t))
			break;
		if (t >= w->e->warm_end_ns)
			w->issued_measure++;
		struct phase_stats *ph = phase_of(w, t);
		ph->scheduled++;
		live_due(w, 0);
		uint32_t r = pick_req(w);
		uint32_t h = cfg->reqs[r].host;
		struct hpool *p = &w->hp[h];
		if (p->idle.head) {
			eng_conn_send(w, p->idle.head, t, &cfg->reqs[r], false);
		} else if (host_down(p) || !q_push(w, h, t, r)) {
			eng_count_dropped(w, ph, t);
			if (++drops >= w->max_conns)
				break;
		}
	}
}

/* Run the protocols' own timers due by now (UINT64_MAX: all of them); the
 * time the next is due (UINT64_MAX: none). */
static uint64_t proto_timers(struct worker *w, uint64_t now)
{
	uint64_t next = UINT64_MAX;
	for (size_t k = 0; k < w->e->n_protos; k++)
		if (w->e->protos[k]->timers)
			next = min_u64(next, w->e->protos[k]->timers(w, now));
	return next;
}

/* Issue what the loop model allows, then serve every host's backlog. */
static void dispatch(struct worker *w, uint64_t now)
{
	if (!w->e->cfg.open_loop)
		closed_issue(w);
	for (uint32_t h = 0; h < w->n_hosts; h++)
		eng_serve_host(w, h, now);
}

static void check_timeouts(struct worker *w, uint64_t now)
{
	while (w->timed.head && w->timed.head->deadline_ns <= now) {
		struct conn *c = w->timed.head;
		if (c->state == CS_CONNECTING) {
			eng_connect_error(w, c->host, ETIMEDOUT, now);
			eng_connect_failed(w, c->host, now);
		} else if (c->state == CS_HANDSHAKE && !c->proto && c->xport->hs_timeout) {
			c->xport->hs_timeout(w, c, now); /* a transport that counts its own (QUIC) */
			eng_connect_failed(w, c->host, now);
		} else if (c->state == CS_HANDSHAKE) {
			/* the protocol's own handshake (HTTP/2: the server's
			 * SETTINGS), or the transport's (TLS) */
			struct phase_stats *ph =
				eng_conn_error(w, c->host, c->proto ? ERRK_PROTOCOL : ERRK_TLS, now);
			phase_stats_tls_reason(ph, c->proto ? c->proto->connect_timeout_reason
							    : "TLS handshake timed out (--timeout)");
			eng_connect_failed(w, c->host, now);
		} else {
			/* Not dropped: the time waited is a lower bound of its latency. */
			eng_record_wait(w, phase_of(w, c->sched_ns), c->sched_ns, c->req, c->lagged,
					now);
			eng_count_error(w, c, ERRK_TIMEOUT, now);
		}
		eng_conn_close(w, c);
	}
}

/* --realtime: a worker at a real-time priority that has not slept for a
 * slice (events always ready, or a spin) sleeps briefly, so that it cannot
 * hold its CPU from every normal thread, nor run into RLIMIT_RTTIME. The
 * time after the sleep. */
static uint64_t rt_breathe(struct worker *w)
{
	struct timespec ts = {0, (long)ENGINE_RT_BREATHE_NS};
	nanosleep(&ts, NULL);
	uint64_t now = clock_now_ns();
	w->rt_breathe_ns = now + ENGINE_RT_SLICE_NS;
	return now;
}

/* --precise: a timed wake-up for a due time came `late` after it was
 * asked for. The poll before each due time follows the lateness as TCP's
 * retransmission timer follows round trips: a smoothed mean and four mean
 * deviations (what all but the rare wake-up needs), and a margin for the
 * loop's own pass, at most --spin. A wake-up later than the poll is send
 * lag; a poll longer than the lateness is CPU spent for nothing, and one
 * sized to the rare worst (a scheduler slice, milliseconds) would be all
 * CPU and still miss it. */
static void spin_adapt(struct worker *w, uint64_t late)
{
	uint64_t cap = w->e->cfg.spin_ns;
	if (!cap)
		return;
	int64_t x = (int64_t)(late < 10 * NS_PER_MS ? late : 10 * NS_PER_MS);
	if (!w->spin_seen) {
		w->spin_mean_ns = x;
		w->spin_dev_ns = x / 2;
		w->spin_seen = true;
	} else {
		int64_t err = x - w->spin_mean_ns;
		w->spin_mean_ns += err / 8;
		w->spin_dev_ns += ((err < 0 ? -err : err) - w->spin_dev_ns) / 4;
	}
	uint64_t want = (uint64_t)(w->spin_mean_ns + 4 * w->spin_dev_ns) + SPIN_MARGIN_NS;
	w->spin_eff_ns = want < cap ? want : cap;
}

/* Per-step state back to the start; connections stay. */
static void worker_reset(struct worker *w)
{
	struct engine *e = w->e;
	const struct engine_cfg *cfg = &e->cfg;
	phase_stats_reset(&w->warm);
	phase_stats_reset(&w->meas);
	w->warm.n_hosts = w->meas.n_hosts = w->n_hosts;
	hist_reset(&w->sec_hist);
	hist_reset(&w->lat_sec[0]);
	hist_reset(&w->lat_sec[1]);
	hist_reset(&w->warm_hist);
	w->warm_sec = UINT64_MAX;
	w->secs_len = w->pairs_len = 0;
	(void)eng_series_reserve(w, e->step.duration_ns + e->step.drain_ns);
	w->sec_cur = 0;
	w->last_completion_ns = 0;
	w->issued_measure = 0;
	w->q_len = 0;
	w->q_free = QE_NONE;
	w->q_hi = 0;
	for (uint32_t h = 0; h < w->n_hosts; h++) {
		struct hpool *p = &w->hp[h];
		p->q_head = p->q_tail = QE_NONE;
		p->q_len = 0;
		p->backoff_until_ns = 0;
	}
	w->sched_active = false;
	w->shadow_until_ns = 0;
	w->win_ns = cfg->send_window_ns; /* --precision-budget: until a second's latency is known */
	w->spin_eff_ns = cfg->spin_ns;   /* until wake-ups have been timed */
	w->spin_seen = false;
	w->spun_ns = 0;
	if (cfg->flows &&
	    eng_flow_reserve(w, cfg->open_loop ? 2 * (uint64_t)w->q_cap : w->closed_outstanding))
		w->oom = -ENOMEM;
	atomic_store_explicit(&w->pub_p99_ns, 0, memory_order_relaxed);
	atomic_store_explicit(&w->pub_p99_warm, false, memory_order_relaxed);
	atomic_store_explicit(&w->pub_last_sec_completed, 0, memory_order_relaxed);
	atomic_store_explicit(&w->pub_max_ns, 0, memory_order_relaxed);
	atomic_store_explicit(&w->pub_max_meas_ns, 0, memory_order_relaxed);
	if (cfg->open_loop && cfg->segments > 1) {
		/* a segment: one lane of the global schedule (engine.h) */
		uint32_t stride = cfg->segments * cfg->threads;
		w->rate_per_s = e->step.rate_per_s / stride;
		uint32_t lane = cfg->segment + cfg->segments * w->id;
		/* its first arrival's global number, over every step so far */
		uint64_t g = e->arrival_base + lane;
		w->next_req = (size_t)(g % cfg->n_reqs);
		w->order_ctr = g;
		if (w->rate_per_s > 0) {
			sched_init_lane(&w->sched, cfg->arrival, e->step.rate_per_s, e->t0_ns,
					cfg->seed * SEED_MIX_SCHED, lane, stride);
			sched_set_burst(&w->sched, cfg->burst);
			w->next_due_ns = sched_next(&w->sched);
			w->sched_active = true;
		}
	} else if (cfg->open_loop) {
		w->rate_per_s = sched_split_rate(e->step.rate_per_s, cfg->threads, w->id);
		if (w->rate_per_s > 0) {
			/* Threads are offset by a fraction of the gap so that their
			 * constant schedules interleave rather than coincide. */
			sched_init(&w->sched, cfg->arrival, w->rate_per_s, e->t0_ns,
				   (double)w->id / cfg->threads,
				   cfg->seed * SEED_MIX_SCHED + w->id);
			sched_set_burst(&w->sched, cfg->burst);
			w->next_due_ns = sched_next(&w->sched);
			w->sched_active = true;
		}
	} else if (cfg->segments > 1) {
		/* a segment's share of the plan's requests, this thread's of it,
		 * and its first request's global number */
		uint64_t share = sched_split(e->step.requests, cfg->segments, cfg->segment);
		w->quota = sched_split(share, cfg->threads, w->id);
		if (e->step.requests) {
			uint64_t g = e->arrival_base +
				     sched_split_first(e->step.requests, cfg->segments, cfg->segment) +
				     sched_split_first(share, cfg->threads, w->id);
			w->next_req = (size_t)(g % cfg->n_reqs);
			w->order_ctr = g;
		}
	} else {
		w->quota = sched_split(e->step.requests, cfg->threads, w->id);
	}
}

/* Run one step: warm-up, measure, drain. */
static void worker_step(struct worker *w, struct epoll_event *ev)
{
	struct engine *e = w->e;
	const struct engine_cfg *cfg = &e->cfg;
	uint64_t cpu0 = clock_thread_cpu_ns(), cpu_wait0 = clock_thread_cpu_wait_ns();
	uint64_t wall0 = clock_now_ns();
	worker_reset(w);

	/* Connected at each phase's start: now (carried over from the last
	 * step), and again when the warm-up ends (seen at the loop's first turn
	 * after it; only this thread opens or closes its connections). */
	w->warm.conns_open_at_start = w->meas.conns_open_at_start = w->n_open - w->n_connecting;
	bool meas_snapped = !e->step.warmup_ns;
	/* Still connecting when each phase begins (its first due time, t0 or
	 * the warm-up's end: after eng_preopen), for the pool-not-up warning. */
	bool warm_cing = !e->step.warmup_ns, meas_cing = false;

	/* Connections are opened before the start; later ones open on demand. */
	uint64_t now = clock_now_ns();
	eng_preopen(w, now);

	uint64_t drain_end = UINT64_MAX;
	/* The last iteration ended with due requests waiting while every
	 * connection was in use (open loop): its span counts in cap_wait_ns; its
	 * wait for events, or all of it when none came (a sleep or a spin to
	 * the next due time: UINT64_MAX), in cap_wait_idle_ns. */
	uint64_t held_from = 0, held_idle_ns = 0;
	bool more_events = false;
	/* Woken from a nap: send what is due on the free connections first,
	 * then take the events that came meanwhile (responses read late are
	 * timed by their stamps; reading them first would delay the sends). */
	bool woke_from_nap = false;
	/* precise: the thread's CPU at this iteration's start, and whether the
	 * last iteration only polled for a due time (its CPU is spin) */
	uint64_t cpu_top = 0;
	bool polled = false;
	for (;;) {
		now = clock_now_ns();
		uint64_t cpu_last = cpu_top;
		cpu_top = !e->batched && w->sched_active ? clock_thread_cpu_ns() : 0;
		if (polled && cpu_last && cpu_top > cpu_last)
			w->spun_ns += cpu_top - cpu_last;
		polled = false;
		if (e->rt_status == 0 && now >= w->rt_breathe_ns)
			now = rt_breathe(w);
		/* every second of the load gets its point, events or not (an
		 * outage is seconds of failed connects and a growing backlog) */
		if (now >= e->warm_end_ns && now < e->meas_end_ns)
			(void)series_at(w, now);
		if (!meas_snapped && now >= e->warm_end_ns) {
			w->meas.conns_open_at_start = w->n_open - w->n_connecting;
			meas_snapped = true;
			/* the warm-up's last second, however short, sizes the
			 * first measured second's window */
			eng_precision_adapt(w, &w->warm_hist);
		}
		if (!warm_cing && now >= e->t0_ns) {
			w->warm.conns_connecting_at_start = w->n_connecting;
			warm_cing = true;
		}
		if (!meas_cing && now >= e->warm_end_ns) {
			w->meas.conns_connecting_at_start = w->n_connecting;
			meas_cing = true;
		}
		if (held_from) {
			struct phase_stats *hp = phase_of(w, held_from);
			hp->cap_wait_ns += now - held_from;
			hp->cap_wait_idle_ns +=
				held_idle_ns == UINT64_MAX ? now - held_from : held_idle_ns;
			held_from = 0;
		}
		if (stopping(w))
			break;
		if (w->sched_active && now >= e->t0_ns) {
			while (w->next_due_ns <= now) {
				if (w->next_due_ns >= e->meas_end_ns) {
					w->sched_active = false;
					break;
				}
				if (cfg->flows) {
					/* an arrival starts a flow, whose requests are
					 * counted (due, lateness) as it makes them:
					 * after its script ran */
					eng_flow_arrival(w, w->next_due_ns, now);
					w->next_due_ns = sched_next(&w->sched);
					if (w->flows_stopped) /* thread:stop() */
						w->sched_active = false;
					if (!w->sched_active || stopping(w))
						break;
					now = clock_now_ns(); /* the script's time has passed */
					continue;
				}
				struct phase_stats *ph = phase_of(w, w->next_due_ns);
				ph->scheduled++;
				uint64_t lag = now - w->next_due_ns;
				hist_record(&ph->timing[TIM_LOOP_LAG], lag);
				live_due(w, lag);
				/* lagged: picked up late, so it leaves in a clump with
				 * those due after it, or in such a clump's shadow (as
				 * long again after it: the target still absorbs it) */
				/* (a budget's window, when longer than the limit, is
				 * lateness chosen: not counted lagged) */
				uint64_t lim = cfg->precision > 0 && w->win_ns > w->lag_limit_ns
						       ? w->win_ns
						       : w->lag_limit_ns;
				bool lagged = lag > lim || now < w->shadow_until_ns;
				if (lag > lim && now + lag > w->shadow_until_ns)
					w->shadow_until_ns = now + lag;
				/* chosen now, so that it waits for its own host */
				uint32_t r = pick_req(w);
				uint32_t h = cfg->reqs[r].host;
				if (!q_push(w, h, w->next_due_ns, r | (lagged ? QE_LAGGED : 0)))
					eng_count_dropped(w, ph, now);
				w->next_due_ns = sched_next(&w->sched);
			}
			/* the load ends at the measured phase's planned end, not at the
			 * first due time after it (at 0.1 req/s that is 10 s later) */
			if (w->sched_active && now >= e->meas_end_ns)
				w->sched_active = false;
		}
		if (w->n_waits) /* flows whose waits are over */
			eng_flow_wakes(w, now);
		eng_timers_run(w, now); /* the transports' own (QUIC) */
		uint64_t proto_wake = UINT64_MAX;
		if (!woke_from_nap) { /* not before reading what came by now */
			check_timeouts(w, now);
			proto_wake = proto_timers(w, now);
		}
		dispatch(w, now);
		live_gauges(w);

		/* End of load: no more requests will be issued. */
		bool issuing = cfg->open_loop ? w->sched_active : closed_can_issue(w, now) || now < e->t0_ns;
		if (!issuing) {
			if (drain_end == UINT64_MAX)
				drain_end = now + e->step.drain_ns;
			bool busy = w->q_len || (w->timed.len > w->n_connecting) ||
				    proto_wake != UINT64_MAX || /* a protocol's timer to wait for */
				    w->n_waits;                 /* a flow's */
			if (!busy || now >= drain_end)
				break;
		}

		uint64_t wake = now + IDLE_WAIT_NS;
		if (w->timed.head)
			wake = min_u64(wake, w->timed.head->deadline_ns);
		wake = min_u64(wake, eng_timer_next(w)); /* no wake-up of their own */
		if (!cfg->open_loop && now < e->t0_ns)
			wake = min_u64(wake, e->t0_ns);
		if (e->meas_end_ns > now) /* past it (the drain): no reason to wake */
			wake = min_u64(wake, e->meas_end_ns);
		if (drain_end != UINT64_MAX)
			wake = min_u64(wake, drain_end);
		wake = min_u64(wake, eng_backoff_wake(w, now));
		wake = min_u64(wake, proto_wake);
		wake = min_u64(wake, eng_flow_next_wake(w));
		bool sched_wake = false; /* the schedule, not a deadline, set the wake-up */
		if (w->sched_active) {
			uint64_t due = w->next_due_ns > e->t0_ns ? w->next_due_ns : e->t0_ns, at;
			if (e->batched) {
				/* At most one wake-up per window: at the due time when
				 * the last one is a window ago (a sparse schedule waits
				 * for nothing), else a window after it, less the recent
				 * oversleep and a guard for its tail, with everything due
				 * by then. A request due after the last wake-up is thus
				 * sent within the window. */
				uint64_t win = w->win_ns;
				uint64_t guard = w->oversleep_ns + win / 16; /* the oversleep's tail */
				uint64_t next = w->last_wake_ns + (win > guard ? win - guard : 0);
				at = due > next ? due : next;
			} else {
				/* Sleep until spin_ns before the next due time, then
				 * poll: timer wake-ups overshoot (tens of us on some
				 * VMs), and a late wake-up is send lag. */
				at = due > w->spin_eff_ns ? due - w->spin_eff_ns : 0;
			}
			if (at <= wake) {
				wake = at;
				sched_wake = true;
			}
		}
		bool held = cfg->open_loop && w->q_len && !w->free_slots;
		/* With receive stamps the open loop sleeps through I/O to its
		 * wake-up (batched: the window's; precise: the next due time less
		 * the spin) and then takes what is ready: a response read late is
		 * timed when it came. Not while due requests wait for a connection
		 * (a response frees one), nor while a full batch of events may
		 * hold more. */
		/* Nor with sessions: a session's next step is due from its
		 * response, which must be read when it comes. */
		bool nap = e->stamps && w->sched_active && !held && !more_events &&
			   now >= e->t0_ns && !cfg->flow_sessions;
		uint64_t t_wait = held ? clock_now_ns() : 0;
		int n;
		if (woke_from_nap) {
			woke_from_nap = false;
			n = loop_wait(&w->loop, ev, MAX_EVENTS, 0);
		} else if (nap) {
			if (wake > now) {
				clock_sleep_until_ns(wake);
				uint64_t woke = clock_now_ns();
				w->last_wake_ns = woke;
				w->rt_breathe_ns = woke + ENGINE_RT_SLICE_NS; /* it slept */
				if (sched_wake && !e->batched) {
					spin_adapt(w, woke - wake);
				} else if (sched_wake) {
					uint64_t ov = woke - wake, cap = w->win_ns / 2;
					ov = ov < cap ? ov : cap;
					w->oversleep_ns = ov > w->oversleep_ns
								  ? ov
								  : w->oversleep_ns - (w->oversleep_ns >> 5);
				}
				woke_from_nap = true;
				continue;
			}
			n = loop_wait(&w->loop, ev, MAX_EVENTS, 0);
		} else {
			n = loop_wait(&w->loop, ev, MAX_EVENTS, wake > now ? wake - now : 0);
			if (n == 0 && wake > now) { /* it slept to the time-out */
				uint64_t woke = clock_now_ns();
				w->rt_breathe_ns = woke + ENGINE_RT_SLICE_NS;
				if (sched_wake && !e->batched)
					spin_adapt(w, woke - wake);
			}
		}
		/* a poll for a due time that found nothing: spin, its CPU counted */
		polled = n == 0 && sched_wake && !e->batched && wake <= now;
		more_events = n == MAX_EVENTS;
		if (held) {
			held_from = now;
			held_idle_ns = n > 0 ? clock_now_ns() - t_wait : UINT64_MAX;
		}
		if (n > 0)
			w->rt_off_ns = clock_realtime_offset_ns(&w->rt_off_err_ns);
		for (int i = 0; i < n; i++) {
			if (ev[i].data.ptr == &w->loop) {
				loop_wake_ack(&w->loop);
				continue;
			}
			struct conn *c = ev[i].data.ptr;
			if (c->state != CS_FREE)
				eng_conn_event(w, c, ev[i].events);
		}
	}

	/* What is left: never sent, or sent without a response (interrupted:
	 * their waits until the interrupt are in the latency). Idle
	 * connections carry over to the next step; busy ones are closed. The
	 * last second is closed first: its unsent are what is left queued (the
	 * protocols' timers before, so that what they credit is in it). */
	proto_timers(w, UINT64_MAX);
	if (w->secs_len)
		eng_series_close_sec(w);
	for (uint32_t h = 0; h < w->n_hosts; h++)
		while (w->hp[h].q_len) {
			struct qent q = q_pop(w, &w->hp[h]);
			eng_count_left(w, q.due_ns, eng_qent_req(w, q.req),
				       (q.req & QE_LAGGED) != 0,
				       false); /* a flow's: abandoned with its flow below */
		}
	for (size_t k = 0; k < e->n_protos; k++) /* HTTP/2 streams are not in w->conns */
		if (e->protos[k]->step_end)
			e->protos[k]->step_end(w);
	for (uint32_t i = 0; i < w->max_conns; i++) {
		struct conn *c = &w->conns[i];
		if (c->state == CS_READING || c->state == CS_WRITING) {
			eng_count_left(w, c->sched_ns, c->req, c->lagged, true);
			c->flow = ENG_FLOW_NONE; /* abandoned below, with every flow under way */
		}
		if (c->state != CS_FREE && c->state != CS_IDLE)
			eng_conn_close(w, c);
	}
	if (cfg->flows)
		eng_flow_step_end(w);
	eng_lat_move(w, false); /* what completed after the last second closed */
	live_gauges(w);
	w->cpu_ns = clock_thread_cpu_ns() - cpu0;
	uint64_t cpu_wait1 = clock_thread_cpu_wait_ns();
	bool waits_known = cpu_wait0 != UINT64_MAX && cpu_wait1 != UINT64_MAX;
	w->cpu_wait_ns = waits_known && cpu_wait1 >= cpu_wait0 ? cpu_wait1 - cpu_wait0 : UINT64_MAX;
	w->wall_ns = clock_now_ns() - wall0;
	atomic_store_explicit(&w->done, true, memory_order_release);
}

void *eng_worker_main(void *arg)
{
	struct worker *w = arg;
	struct engine *e = w->e;
	prctl(PR_SET_TIMERSLACK, TIMER_SLACK_NS, 0, 0, 0); /* wake within microseconds */
	struct epoll_event ev[MAX_EVENTS];
	uint64_t seen = 0;
	for (;;) {
		pthread_mutex_lock(&e->mu);
		while (e->step_seq == seen && !e->quit)
			pthread_cond_wait(&e->cv, &e->mu);
		bool quit = e->quit, floor = e->floor_ns != 0;
		seen = e->step_seq;
		pthread_mutex_unlock(&e->mu);
		if (quit)
			break;
		if (floor)
			eng_worker_floor(w, ev);
		else
			worker_step(w, ev);
	}
	for (uint32_t i = 0; i < w->max_conns; i++)
		if (w->conns[i].state != CS_FREE)
			eng_conn_close(w, &w->conns[i]);
	return NULL;
}

/* ---- set-up and release ------------------------------------------------- */

/* The worker's own copy of the response rules, compiled from their text:
 * evaluation then shares nothing between threads (glibc's regexec takes a
 * regex_t's lock and grows its DFA lazily). */
static int own_rules(struct worker *w, const struct inspect *in)
{
	struct inspect *o = &w->own_rules;
	inspect_init(o);
	w->has_own_rules = true;
	char err[256];
	o->body_cap = in->body_cap;
	if (in->success && inspect_set_success(o, in->success_text, err, sizeof err))
		return -EINVAL;
	for (size_t k = 0; k < in->n_outcomes; k++) {
		size_t n = strlen(in->outcome_name[k]) + strlen(in->outcome_text[k]) + 2;
		char *spec = malloc(n);
		if (!spec)
			return -ENOMEM;
		snprintf(spec, n, "%s=%s", in->outcome_name[k], in->outcome_text[k]);
		int rc = inspect_add_outcome(o, spec, err, sizeof err);
		free(spec);
		if (rc)
			return rc == -ENOMEM ? -ENOMEM : -EINVAL;
	}
	o->srvtime = in->srvtime;
	inspect_finish(o);
	w->inspect = o;
	return 0;
}

void eng_worker_free(struct worker *w)
{
	if (w->has_own_rules)
		inspect_free(&w->own_rules);
	loop_close(&w->loop);
	for (uint32_t h = 0; h < w->n_hosts && w->hp; h++)
		tls_resume_clear(&w->hp[h].tls_resume);
	free(w->hp);
	free(w->q);
	for (uint32_t i = 0; i < w->max_conns && w->conns; i++)
		h1_capture_free(&w->conns[i].cap);
	free(w->conns);
	for (size_t k = 0; k < w->e->n_protos; k++)
		if (w->e->protos[k]->worker_free)
			w->e->protos[k]->worker_free(w);
	for (size_t k = 0; k < w->e->n_xports; k++)
		if (w->e->xports[k]->worker_free)
			w->e->xports[k]->worker_free(w);
	free(w->theap);
	free(w->rbuf);
	eng_flow_free(w);
	free(w->secs);
	free(w->pairs);
	hist_free(&w->sec_hist);
	hist_free(&w->lat_sec[0]);
	hist_free(&w->lat_sec[1]);
	hist_free(&w->floor_hist);
	hist_free(&w->warm_hist);
	phase_stats_free(&w->warm);
	phase_stats_free(&w->meas);
}

int eng_worker_init(struct worker *w, struct engine *e, uint32_t id)
{
	const struct engine_cfg *cfg = &e->cfg;
	w->e = e;
	w->id = id;
	w->lag_limit_ns = cfg->lag_limit_ns ? cfg->lag_limit_ns : ENGINE_LAG_LIMIT_NS;
	w->loop.epfd = w->loop.wake_fd = -1;
	atomic_store(&w->done, true);
	int rc = loop_init(&w->loop);
	if (rc)
		return rc;
	if (phase_stats_init(&w->warm) || phase_stats_init(&w->meas) ||
	    hist_init(&w->floor_hist, 7, HIST_MAX_NS) ||
	    hist_init(&w->sec_hist, SERIES_SUB_BITS, HIST_MAX_NS) ||
	    hist_init(&w->lat_sec[0], HIST_SUB_BITS, HIST_MAX_NS) ||
	    hist_init(&w->lat_sec[1], HIST_SUB_BITS, HIST_MAX_NS) ||
	    hist_init(&w->warm_hist, SERIES_SUB_BITS, HIST_MAX_NS))
		return -ENOMEM;
	/* Per-name figures only with several names: allocated here, once, so
	 * that a run of one name records nothing more per request. */
	if (cfg->n_names >= 2) {
		if (phase_stats_init_names(&w->warm, cfg->n_names) ||
		    phase_stats_init_names(&w->meas, cfg->n_names))
			return -ENOMEM;
		w->by_name = true;
	}
	w->hp = calloc(e->n_hosts, sizeof *w->hp);
	if (!w->hp)
		return -ENOMEM;
	w->n_hosts = e->n_hosts;
	for (uint32_t h = 0; h < w->n_hosts; h++) {
		w->hp[h].q_head = w->hp[h].q_tail = QE_NONE;
		uint64_t f = (uint64_t)sched_split(cfg->open_loop ? cfg->connections : cfg->concurrency,
						   cfg->threads, id) * e->host_reqs[h] / cfg->n_reqs;
		w->hp[h].fair = f ? (uint32_t)f : 1;
	}
	w->next_req = (size_t)((uint64_t)cfg->n_reqs * id / cfg->threads);
	w->order_key = cfg->seed * SEED_MIX_ORDER + id;
	w->order_ctr = 0;
	w->req_stride = 1;
	if (cfg->segments > 1) {
		/* a segment picks the requests of its global arrivals from one
		 * stream (worker_reset places it at each step's first); open
		 * loop: those of its lane */
		w->order_key = cfg->seed * SEED_MIX_ORDER;
		if (cfg->open_loop)
			w->req_stride = cfg->segments * cfg->threads;
	}
	w->rbuf = malloc(READ_BUF_CAP);
	if (!w->rbuf)
		return -ENOMEM;
	w->max_conns = (uint32_t)sched_split(cfg->open_loop ? cfg->connections : cfg->concurrency,
					     cfg->threads, id);
	/* closed loop: a request outstanding per connection, or per stream of
	 * HTTP/2 (concurrency x max_streams; engine.h) */
	uint32_t streams = cfg->http == ENGINE_H1 ? 1
			   : cfg->max_streams ? cfg->max_streams : ENGINE_H2_STREAMS_DEFAULT;
	w->closed_outstanding = w->max_conns * streams;
	if (w->max_conns) {
		w->conns = calloc(w->max_conns, sizeof *w->conns);
		if (!w->conns || eng_timers_init(w))
			return -ENOMEM;
	}
	for (size_t k = 0; k < e->n_xports; k++)
		if (e->xports[k]->worker_init && (rc = e->xports[k]->worker_init(w)))
			return rc;
	const struct inspect *in = cfg->inspect;
	if (in && in->active) {
		if ((rc = own_rules(w, in)))
			return rc;
		w->cap_headers = in->need_headers;
		w->cap_body = in->need_body;
	}
	if (cfg->flows) { /* a script's response() or session steps read them */
		w->cap_headers = w->cap_headers || cfg->flow_headers;
		if (cfg->flow_body_cap > w->cap_body)
			w->cap_body = cfg->flow_body_cap;
		w->flow_state = cfg->flow_state[id];
	}
	/* a script's thread.addr: with or without flows (a static script
	 * that only moves its threads is sent as any other run's requests) */
	if (cfg->worker_addr && cfg->worker_addr[id].ss.ss_family)
		w->addr0 = &cfg->worker_addr[id];
	w->capture = w->cap_headers || w->cap_body;
	for (uint32_t i = w->max_conns; i-- > 0;) {
		w->conns[i].cap.headers = w->cap_headers;
		w->conns[i].cap.body_cap = w->cap_body;
		w->conns[i].flow = ENG_FLOW_NONE;
		w->conns[i].fd = -1;
		if (w->capture && h1_capture_reserve(&w->conns[i].cap))
			return -ENOMEM;
		w->conns[i].next = w->free_slots;
		w->free_slots = &w->conns[i];
	}
	return 0;
}
