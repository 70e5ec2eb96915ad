#include "plan/sched.h"

#include <math.h>

void sched_init(struct sched *s, enum sched_arrival arrival, double rate_per_s, uint64_t start_ns,
		double phase, uint64_t seed)
{
	s->arrival = arrival;
	s->interval_ns = 1e9 / rate_per_s;
	s->start_ns = start_ns;
	s->offset_ns = phase * s->interval_ns;
	s->k = 0;
	s->t_ns = 0;
	s->lane = 0;
	s->stride = 1;
	rng_seed(&s->rng, seed);
}

void sched_init_lane(struct sched *s, enum sched_arrival arrival, double rate_per_s,
		     uint64_t start_ns, uint64_t seed, uint32_t lane, uint32_t stride)
{
	sched_init(s, arrival, rate_per_s, start_ns, 0, seed);
	s->stride = stride ? stride : 1;
	s->lane = lane < s->stride ? lane : 0;
}

uint64_t sched_next(struct sched *s)
{
	double t;
	if (s->arrival == SCHED_POISSON) {
		/* a lane draws the global stream's arrivals up to its own */
		uint64_t draws = s->stride == 1 ? 1 : s->k == 0 ? s->lane + 1u : s->stride;
		for (uint64_t d = 0; d < draws; d++)
			s->t_ns += -log(rng_unit(&s->rng)) * s->interval_ns;
		t = s->t_ns;
	} else if (s->stride > 1) {
		t = s->offset_ns + (double)sched_index(s) * s->interval_ns;
	} else {
		t = s->offset_ns + (double)s->k * s->interval_ns;
	}
	s->k++;
	return s->start_ns + (uint64_t)llround(t);
}

uint64_t sched_count(enum sched_arrival arrival, double rate_per_s, uint64_t seed,
		     uint64_t window_ns)
{
	struct sched s;
	sched_init(&s, arrival, rate_per_s, 0, 0, seed);
	if (arrival == SCHED_POISSON) {
		uint64_t n = 0;
		while (sched_next(&s) < window_ns)
			n++;
		return n;
	}
	/* arrival k is due at llround(k * interval): start from the quotient,
	 * then settle the rounding at the edge exactly as sched_next rounds */
	double q = floor((double)window_ns / s.interval_ns);
	uint64_t n = q > 0 ? (uint64_t)q : 0;
	while (n > 0 && (uint64_t)llround((double)(n - 1) * s.interval_ns) >= window_ns)
		n--;
	while ((uint64_t)llround((double)n * s.interval_ns) < window_ns)
		n++;
	return n;
}

double sched_split_rate(double rate_per_s, uint32_t parts, uint32_t i)
{
	double whole = floor(rate_per_s);
	double frac = rate_per_s - whole;
	double share = (double)sched_split((uint64_t)whole, parts, i);
	if (i == 0)
		share += frac;
	return share;
}
