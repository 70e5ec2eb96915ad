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

/* The i-th number (i = 0, 1, ...) of the SplitMix64 sequence seeded with
 * key: a stream any position of which costs the same one step, so that
 * lanes of it (every N-th number) are drawn without the others. */
static inline uint64_t rng_at(uint64_t key, uint64_t i)
{
	uint64_t z = key + (i + 1) * 0x9e3779b97f4a7c15ull;
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

#endif
