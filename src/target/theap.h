/* pacer — intrusive binary min-heap of timers with absolute deadlines in ns
 * (CLOCK_MONOTONIC), for one event loop (not thread-safe).
 *
 * A timer is a struct theap_node embedded in the caller's object; the heap
 * stores pointers to nodes and each node knows its slot, so arming, moving
 * and cancelling are O(log n) with no search. The slot array grows by
 * doubling (the only allocation) and is never shrunk. */
#ifndef PACER_TARGET_THEAP_H
#define PACER_TARGET_THEAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define THEAP_UNARMED UINT32_MAX

struct theap_node {
	uint64_t deadline_ns;
	uint32_t slot; /* index in the heap, THEAP_UNARMED when not armed */
};

struct theap {
	struct theap_node **v;
	uint32_t n, cap;
};

/* An empty heap (no allocation until the first arm). */
void theap_init(struct theap *h);
/* Free the slot array; nodes are the caller's and are left untouched. */
void theap_free(struct theap *h);
/* Mark a node as not armed (call once before first use). */
static inline void theap_node_init(struct theap_node *t) { t->slot = THEAP_UNARMED; }
/* Whether t is in the heap. */
static inline bool theap_armed(const struct theap_node *t) { return t->slot != THEAP_UNARMED; }
/* Arm t at deadline_ns, or move it there if already armed. 0 or -ENOMEM. */
int theap_arm(struct theap *h, struct theap_node *t, uint64_t deadline_ns);
/* Disarm t (no-op if not armed). */
void theap_cancel(struct theap *h, struct theap_node *t);
/* The earliest node, or NULL if empty. */
static inline struct theap_node *theap_peek(const struct theap *h) { return h->n ? h->v[0] : NULL; }
/* Remove and return the earliest node whose deadline is <= now_ns, or NULL. */
struct theap_node *theap_pop_expired(struct theap *h, uint64_t now_ns);

#endif
