/* pacer — plan: the precision budget (--precision-budget P%, docs/run.md#precision-budget).
 * The open loop's send window sized from the latency being measured: a
 * share P of the last second's p50, so that the send lag a window adds (up
 * to one window) stays under P of the latency, between a floor and a
 * ceiling, and never wider than the arrival process allows. Pure. */
#ifndef PACER_PLAN_PRECISION_H
#define PACER_PLAN_PRECISION_H

#include <stdint.h>

#include "plan/sched.h"

#define PRECISION_FLOOR_NS (50 * 1000ull)          /* never wake more often than every 50 us */
#define PRECISION_CEILING_NS (10 * 1000 * 1000ull) /* nor batch more than 10 ms */
#define PRECISION_MIN 0.001                        /* --precision-budget 0.1% */
#define PRECISION_MAX 0.5                          /* --precision-budget 50% */

/* The send window for a budget `share` (0.05: 5 %) of p50_ns, for a worker
 * whose arrivals come at rate_per_s (its share of the rate) in bursts of
 * `burst` due at once, by `arrival`:
 *   window = clamp(share * p50, floor, ceiling)
 * with ceiling = PRECISION_CEILING_NS and, for constant arrivals, at most
 * the gap between due times (burst / rate): a wider window would send
 * requests meant to be spread by that gap together; the gap counts only
 * down to the floor (above 20k/s per worker the floor's few merged
 * requests are the price of not waking per request). Poisson arrivals
 * have no such limit: their gaps are exponential, so a share of them is
 * shorter than any window and no window keeps them apart; a window moves
 * each request by less than itself (within the budget) and leaves the
 * count in every window Poisson, as planned. p50_ns 0 (no latency known
 * yet) or share <= 0: 0, meaning "keep the window you have". */
uint64_t precision_window_ns(uint64_t p50_ns, double share, double rate_per_s, uint32_t burst,
			     enum sched_arrival arrival);

/* Parse "5%", "5" (percent) or "0.5%": the share (0.05) into *share. 0 or
 * -1 (not a number, or outside PRECISION_MIN..PRECISION_MAX). */
int precision_parse(const char *s, double *share);

#endif
