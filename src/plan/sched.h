/* pacer — arrival schedules (pure): the due time of each request of one
 * thread's share of an open-loop load. Times are absolute CLOCK_MONOTONIC ns;
 * the k-th due time is computed from the start, never by accumulating rounded
 * gaps, so a constant schedule does not drift. */
#ifndef PACER_PLAN_SCHED_H
#define PACER_PLAN_SCHED_H

#include <stdint.h>

enum sched_arrival {
	SCHED_CONSTANT = 0, /* evenly spaced */
	SCHED_POISSON,      /* exponential gaps with mean 1/rate */
};

/* A Poisson stream is built as a tree (sched.c): S_j, the sum of its first
 * j gaps, is known at j = 2^k (the top), and a node [lo, hi] of 2w gaps
 * whose ends are known splits at lo + w by a Beta(w, w) share drawn from a
 * key of the node alone. A schedule finds its next arrivals (SCHED_BUF, or
 * fewer for a lane of a large stride) in one walk of the tree that enters
 * only the nodes holding them, so a lane finds its own arrivals without
 * drawing the others'. */
#define SCHED_TOP_MAX 64
#define SCHED_BUF 256

struct sched {
	enum sched_arrival arrival;
	double interval_ns; /* mean gap */
	uint64_t start_ns;
	double offset_ns;   /* constant: phase of the first arrival */
	uint64_t k;         /* arrivals handed out so far */
	uint32_t lane, stride; /* sched_init_lane: arrivals lane, lane + stride, ... of
			        * the global schedule (sched_init: 0 and 1) */
	/* Poisson: the stream's key, the top S_{2^k} drawn so far, and the due
	 * times (ns after the start) of the next buf_len - buf_pos arrivals */
	uint64_t key;
	uint32_t n_top;
	uint32_t buf_pos, buf_len;
	/* sched_set_burst: arrivals per burst (1: none); with bursts,
	 * interval_ns is the bursts' mean gap and a Poisson buf holds the due
	 * times of bursts gbase, gbase + 1, ... */
	uint32_t burst;
	uint64_t gbase;
	double top[SCHED_TOP_MAX];
	uint64_t buf[SCHED_BUF];
};

/* Start a schedule of `rate_per_s` (> 0) arrivals beginning at start_ns.
 * Constant schedules begin at start_ns + phase * interval, phase in [0,1)
 * (threads use different phases so their sends interleave); Poisson
 * schedules draw from `seed`. */
void sched_init(struct sched *s, enum sched_arrival arrival, double rate_per_s, uint64_t start_ns,
		double phase, uint64_t seed);
/* One lane of a global schedule of `rate_per_s` arrivals (constant, or
 * Poisson drawn from `seed`) beginning at start_ns: the arrivals numbered
 * lane, lane + stride, lane + 2 * stride, ... (lane < stride). The lanes
 * 0..stride-1 together give exactly the due times sched_init(arrival,
 * rate_per_s, start_ns, 0, seed) gives (--segment: arrival i belongs to
 * segment i mod N). A constant lane costs what the whole schedule costs per
 * arrival; a Poisson lane draws the tree's nodes on the way to its own
 * arrivals, about log2(stride) + 1 per arrival (the whole stream: about
 * one), never the other lanes' arrivals. sched_index gives the global
 * number of the next arrival. */
void sched_init_lane(struct sched *s, enum sched_arrival arrival, double rate_per_s,
		     uint64_t start_ns, uint64_t seed, uint32_t lane, uint32_t stride);
/* Release arrivals in bursts of n (>= 1; call right after sched_init or
 * sched_init_lane): the global arrivals b*n .. b*n + n - 1 share burst b's
 * due time, and bursts come at rate_per_s / n (evenly spaced, or Poisson),
 * so the mean rate is unchanged. A constant schedule's phase becomes a
 * fraction of the bursts' spacing. n = 1 leaves the schedule as it was,
 * draw for draw. A Poisson lane walks the bursts ahead of it in batches,
 * or, when its arrivals are over 16 bursts apart, each one's own burst
 * (about log2 of its index draws). */
void sched_set_burst(struct sched *s, uint32_t n);

/* The global number of the arrival the next sched_next returns. */
static inline uint64_t sched_index(const struct sched *s)
{
	return s->lane + s->k * s->stride;
}

/* Due time of the next arrival; advances the schedule. */
uint64_t sched_next(struct sched *s);

/* How many arrivals of the global schedule sched_init(arrival, rate_per_s,
 * start, 0, seed) are due less than window_ns after its start (a step's
 * warm-up and measured phase: its scheduled requests). Pure: the same on
 * every segment, so each can number a step's arrivals from those of the
 * steps before it. Constant: O(1); Poisson: a search of the stream's
 * tree, about log2(count)^2 draws. rate_per_s > 0. */
uint64_t sched_count(enum sched_arrival arrival, double rate_per_s, uint64_t seed,
		     uint64_t window_ns);
/* sched_count for a schedule released in bursts of `burst` (sched_set_burst):
 * every arrival of each burst due in the window. */
uint64_t sched_count_bursts(enum sched_arrival arrival, double rate_per_s, uint32_t burst,
			    uint64_t seed, uint64_t window_ns);

/* Split `total` over `parts` as evenly as possible: part i gets total/parts
 * plus one of the remainder when i < total % parts. */
static inline uint64_t sched_split(uint64_t total, uint32_t parts, uint32_t i)
{
	return total / parts + (i < total % parts ? 1 : 0);
}

/* Where part i begins when `total` items in order are split as sched_split
 * splits them: the sum of parts 0..i-1. */
static inline uint64_t sched_split_first(uint64_t total, uint32_t parts, uint32_t i)
{
	uint64_t rem = total % parts;
	return (uint64_t)i * (total / parts) + (i < rem ? i : rem);
}

/* Split a real-valued rate: the integral part as sched_split does, the
 * fractional part to part 0. */
double sched_split_rate(double rate_per_s, uint32_t parts, uint32_t i);

#endif
