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
	s->burst = 1;
	s->groups = 0;
	rng_seed(&s->rng, seed);
}

void sched_init_lane(struct sched *s, enum sched_arrival arrival, double rate_per_s,
		     uint64_t start_ns, uint64_t seed, uint32_t lane, uint32_t stride)
{
	sched_init(s, arrival, rate_per_s, start_ns, 0, seed);
	s->stride = stride ? stride : 1;
	s->lane = lane < s->stride ? lane : 0;
}

void sched_set_burst(struct sched *s, uint32_t n)
{
	s->burst = n ? n : 1;
	s->offset_ns *= s->burst;
}

uint64_t sched_next(struct sched *s)
{
	double t;
	uint64_t b = sched_index(s) / s->burst; /* this arrival's burst */
	if (s->arrival == SCHED_POISSON) {
		/* the global stream's bursts up to this one (a lane skips the
		 * others' arrivals, but draws their gaps) */
		while (s->groups <= b) {
			s->t_ns += -log(rng_unit(&s->rng)) * s->interval_ns * s->burst;
			s->groups++;
		}
		t = s->t_ns;
	} else {
		t = s->offset_ns + (double)b * s->burst * s->interval_ns;
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
