/* pacer — wall-clock times as people write them: RFC 3339 timestamps
 * ("2026-12-01T12:00:00Z", "2026-12-01T13:00:00.250+01:00") and times
 * relative to now ("+30s"), for --start-at. Pure: "now" is the caller's. */
#ifndef PACER_UTIL_TIMESTAMP_H
#define PACER_UTIL_TIMESTAMP_H

#include <stddef.h>
#include <stdint.h>

/* Parse s into ns since the Unix epoch (UTC). s is an RFC 3339 date-time
 * (YYYY-MM-DDTHH:MM:SS, 't' or ' ' for 'T' too, an optional fraction of up
 * to 9 digits, then Z or ±HH:MM; a leap second, 23:59:60 UTC only, is
 * the instant it ends: 00:00:00 of the next day), or '+' and a duration (util/units.h:
 * "+30s", "+2m") added to now_wall_ns. 0, or PACER_EPARSE (not one of
 * those forms, a field out of range: month 13, hour 24, ...) or
 * PACER_ERANGE (before 1970 or after 2262). Nothing else is written. */
int timestamp_parse(const char *s, uint64_t now_wall_ns, uint64_t *wall_ns);

/* RFC 3339 in UTC with milliseconds ("2026-12-01T12:00:00.250Z") into
 * out[cap] (at least 25 bytes; always terminated). */
void timestamp_format(char *out, size_t cap, uint64_t wall_ns);

#endif
