/* pacer — what the load costs: CPU-only cost per million requests from the
 * target's CPU time per request and a price per core-hour. Pure arithmetic.
 *
 *   cost per 10^6 requests = cpu_ms_per_request × 10^6 / (3.6 × 10^6 ms/h)
 *                            × usd_per_core_hour
 *
 * This covers CPU only (not memory, network, storage or spare capacity) and
 * is an extrapolation, not a bill. */
#ifndef PACER_RESULT_COST_H
#define PACER_RESULT_COST_H

#include <stddef.h>

#define COST_MAX_PROFILES 8
#define COST_NAME_MAX 48

struct cost_profile {
	char name[COST_NAME_MAX];
	double usd_per_core_hour;
};

struct cost_profiles {
	size_t n;
	struct cost_profile p[COST_MAX_PROFILES];
	int defaults;            /* 1: the built-in illustrative prices are in use */
};

/* The built-in, illustrative profiles used when none is given (see
 * docs/cost.md for what they stand for; pass your own prices). */
void cost_profiles_default(struct cost_profiles *out);

/* Add "NAME=USD_PER_CORE_HOUR" (NAME: [A-Za-z0-9._-]{1,47}; price a finite
 * number >= 0). The first call replaces the defaults. 0, or PACER_EPARSE /
 * PACER_ETOOBIG with one line in err. */
int cost_profile_add(struct cost_profiles *ps, const char *arg, char *err, size_t cap);

/* USD per million requests. */
double cost_usd_per_million(double cpu_ms_per_request, double usd_per_core_hour);

#define COST_BASIS "target CPU time only"
#define COST_CAVEAT                                                                               \
	"CPU only (not memory, network, storage or spare capacity), extrapolated from the measured " \
	"CPU time per request at the given price per core-hour: an estimate, not a bill"

#endif
