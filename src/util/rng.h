/* pacer — small deterministic PRNG (xoshiro256**, seeded by splitmix64).
 * Same seed → same sequence on every machine. Not for cryptography. */
#ifndef PACER_UTIL_RNG_H
#define PACER_UTIL_RNG_H

#include <stdint.h>

struct rng {
	uint64_t s[4];
};

/* Seed the generator; any seed (including 0) is fine. */
void rng_seed(struct rng *r, uint64_t seed);
/* Next 64 random bits. */
uint64_t rng_next(struct rng *r);
/* Uniform double in (0, 1] (never 0, so -log(u) is finite). */
double rng_unit(struct rng *r);

#endif
