#include "plan/precision.h"

#include <math.h>
#include <stdlib.h>

uint64_t precision_window_ns(uint64_t p50_ns, double share, double rate_per_s, uint32_t burst,
			     enum sched_arrival arrival)
{
	if (!p50_ns || !(share > 0))
		return 0;
	double ceiling = (double)PRECISION_CEILING_NS;
	if (arrival == SCHED_CONSTANT && rate_per_s > 0) {
		double gap = 1e9 * (burst ? burst : 1) / rate_per_s;
		if (gap < ceiling)
			ceiling = gap;
	}
	if (ceiling < (double)PRECISION_FLOOR_NS)
		ceiling = (double)PRECISION_FLOOR_NS;
	double w = share * (double)p50_ns;
	if (w < (double)PRECISION_FLOOR_NS)
		w = (double)PRECISION_FLOOR_NS;
	if (w > ceiling)
		w = ceiling;
	return (uint64_t)llround(w);
}

int precision_parse(const char *s, double *share)
{
	if (!s || !*s)
		return -1;
	char *end;
	double v = strtod(s, &end);
	if (end == s || (*end && !(end[0] == '%' && end[1] == '\0')) || !isfinite(v))
		return -1;
	v /= 100;
	if (v < PRECISION_MIN || v > PRECISION_MAX)
		return -1;
	*share = v;
	return 0;
}
