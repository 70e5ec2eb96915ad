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
	rng_seed(&s->rng, seed);
}

uint64_t sched_next(struct sched *s)
{
	double t;
	if (s->arrival == SCHED_POISSON) {
		s->t_ns += -log(rng_unit(&s->rng)) * s->interval_ns;
		t = s->t_ns;
	} else {
		t = s->offset_ns + (double)s->k * s->interval_ns;
	}
	s->k++;
	return s->start_ns + (uint64_t)llround(t);
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
