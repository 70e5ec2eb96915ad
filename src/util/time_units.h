/* pacer — time unit constants (no clock: safe for the pure modules). */
#ifndef PACER_UTIL_TIME_UNITS_H
#define PACER_UTIL_TIME_UNITS_H

#define NS_PER_US 1000ull
#define NS_PER_MS 1000000ull
#define NS_PER_S 1000000000ull

#endif
