/* pacer — engine: the connections' own timers (engine_int.h draws the
 * whole engine). A transport that keeps time of its own (QUIC: loss
 * detection, acknowledgement delay, pacing, the idle timeout) sets one
 * deadline per connection; the worker folds the earliest into its own
 * wake-up, so that they cost no extra wake-ups, and fires the ones due
 * through the transport's timer. A binary min-heap over the worker's
 * connection slots, sized once (max_conns): nothing is allocated after
 * the worker's set-up. */
#include <errno.h>
#include <stdlib.h>

#include "engine/engine_int.h"

static inline bool before(const struct conn *a, const struct conn *b)
{
	return a->timer_ns < b->timer_ns;
}

static void place(struct worker *w, uint32_t i, struct conn *c)
{
	w->theap[i] = c;
	c->timer_pos = i + 1;
}

static void sift_up(struct worker *w, uint32_t i)
{
	struct conn *c = w->theap[i];
	while (i > 0) {
		uint32_t up = (i - 1) / 2;
		if (!before(c, w->theap[up]))
			break;
		place(w, i, w->theap[up]);
		i = up;
	}
	place(w, i, c);
}

static void sift_down(struct worker *w, uint32_t i)
{
	struct conn *c = w->theap[i];
	uint32_t n = w->theap_len;
	for (;;) {
		uint32_t l = 2 * i + 1, m = i;
		const struct conn *best = c;
		if (l < n && before(w->theap[l], best)) {
			m = l;
			best = w->theap[l];
		}
		if (l + 1 < n && before(w->theap[l + 1], best))
			m = l + 1;
		if (m == i)
			break;
		place(w, i, w->theap[m]);
		i = m;
	}
	place(w, i, c);
}

static void heap_remove(struct worker *w, struct conn *c)
{
	uint32_t i = c->timer_pos - 1;
	c->timer_pos = 0;
	struct conn *last = w->theap[--w->theap_len];
	if (last == c)
		return;
	place(w, i, last);
	if (i > 0 && before(last, w->theap[(i - 1) / 2]))
		sift_up(w, i);
	else
		sift_down(w, i);
}

int eng_timers_init(struct worker *w)
{
	if (!w->max_conns)
		return 0;
	w->theap = calloc(w->max_conns, sizeof *w->theap);
	return w->theap ? 0 : -ENOMEM;
}

void eng_timer_set(struct worker *w, struct conn *c, uint64_t at)
{
	if (c->timer_pos) {
		if (at == UINT64_MAX) {
			heap_remove(w, c);
			return;
		}
		uint64_t old = c->timer_ns;
		c->timer_ns = at;
		if (at < old)
			sift_up(w, c->timer_pos - 1);
		else if (at > old)
			sift_down(w, c->timer_pos - 1);
		return;
	}
	if (at == UINT64_MAX || w->theap_len >= w->max_conns)
		return;
	c->timer_ns = at;
	w->theap[w->theap_len] = c;
	c->timer_pos = ++w->theap_len;
	sift_up(w, w->theap_len - 1);
}

uint64_t eng_timer_next(const struct worker *w)
{
	return w->theap_len ? w->theap[0]->timer_ns : UINT64_MAX;
}

void eng_timers_run(struct worker *w, uint64_t now)
{
	/* each fires once a turn: a transport that sets its timer in the past
	 * again is served on the next turn, not in a loop here */
	uint32_t budget = w->theap_len;
	while (budget-- && w->theap_len && w->theap[0]->timer_ns <= now) {
		struct conn *c = w->theap[0];
		heap_remove(w, c);
		c->xport->timer(w, c, now);
	}
}
