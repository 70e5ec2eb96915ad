/* pacer — RFC 3339 and relative times (see timestamp.h). */
#include "util/timestamp.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "util/err.h"
#include "util/units.h"

/* n digits at *s into *v. */
static bool digits(const char **s, int n, int *v)
{
	int x = 0;
	for (int i = 0; i < n; i++) {
		char c = (*s)[i];
		if (c < '0' || c > '9')
			return false;
		x = x * 10 + (c - '0');
	}
	*s += n;
	*v = x;
	return true;
}

static bool leap(int y)
{
	return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

/* Days from 1970-01-01 to y-m-d (proleptic Gregorian; y >= 1970). */
static int64_t days_from_epoch(int y, int m, int d)
{
	static const int cum[12] = {0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334};
	int64_t days = 0;
	for (int yy = 1970; yy < y; yy++)
		days += leap(yy) ? 366 : 365;
	days += cum[m - 1] + (m > 2 && leap(y) ? 1 : 0) + (d - 1);
	return days;
}

int timestamp_parse(const char *s, uint64_t now_wall_ns, uint64_t *wall_ns)
{
	if (!s)
		return PACER_EPARSE;
	if (s[0] == '+') {
		uint64_t ns;
		if (units_parse_duration_ns(s + 1, &ns))
			return PACER_EPARSE;
		if (ns > UINT64_MAX - now_wall_ns)
			return PACER_ERANGE;
		*wall_ns = now_wall_ns + ns;
		return 0;
	}
	int y, mo, d, h, mi, se;
	const char *p = s;
	if (!digits(&p, 4, &y) || *p++ != '-' || !digits(&p, 2, &mo) || *p++ != '-' ||
	    !digits(&p, 2, &d))
		return PACER_EPARSE;
	if (*p != 'T' && *p != 't' && *p != ' ')
		return PACER_EPARSE;
	p++;
	if (!digits(&p, 2, &h) || *p++ != ':' || !digits(&p, 2, &mi) || *p++ != ':' ||
	    !digits(&p, 2, &se))
		return PACER_EPARSE;
	static const int mdays[12] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
	if (mo < 1 || mo > 12 || d < 1 || d > mdays[mo - 1] || (mo == 2 && d == 29 && !leap(y)) ||
	    h > 23 || mi > 59 || se > 60)
		return PACER_EPARSE;
	uint64_t frac_ns = 0;
	if (*p == '.') {
		p++;
		int n = 0;
		uint64_t scale = 100000000;
		while (*p >= '0' && *p <= '9') {
			if (++n > 9)
				return PACER_EPARSE;
			frac_ns += (uint64_t)(*p++ - '0') * scale;
			scale /= 10;
		}
		if (!n)
			return PACER_EPARSE;
	}
	int64_t off_s = 0;
	if (*p == 'Z' || *p == 'z') {
		p++;
	} else if (*p == '+' || *p == '-') {
		int sign = *p++ == '-' ? -1 : 1, oh, om;
		if (!digits(&p, 2, &oh) || *p++ != ':' || !digits(&p, 2, &om) || oh > 23 || om > 59)
			return PACER_EPARSE;
		off_s = sign * (int64_t)(oh * 3600 + om * 60);
	} else {
		return PACER_EPARSE;
	}
	if (*p)
		return PACER_EPARSE;
	if (y < 1970 || y > 2262)
		return PACER_ERANGE;
	/* a leap second is 23:59:60 UTC and nothing else; Unix time has no
	 * name for it, so it is read as 00:00:00 of the next day, the instant
	 * it ends (with its fraction: a start given so is never early) */
	if (se == 60 && (((h * 3600 + mi * 60 - off_s) % 86400 + 86400) % 86400) != 86340)
		return PACER_EPARSE;
	int64_t secs = days_from_epoch(y, mo, d) * 86400 + h * 3600 + mi * 60 + se - off_s;
	if (secs < 0 || secs > 9223372035LL)
		return PACER_ERANGE;
	*wall_ns = (uint64_t)secs * 1000000000u + frac_ns;
	return 0;
}

void timestamp_format(char *out, size_t cap, uint64_t wall_ns)
{
	uint64_t secs = wall_ns / 1000000000u;
	unsigned ms = (unsigned)(wall_ns % 1000000000u / 1000000u);
	int64_t days = (int64_t)(secs / 86400);
	unsigned rem = (unsigned)(secs % 86400);
	int y = 1970;
	while (days >= (leap(y) ? 366 : 365))
		days -= leap(y++) ? 366 : 365;
	static const int ml[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
	int m = 0;
	while (days >= ml[m] + (m == 1 && leap(y) ? 1 : 0)) {
		days -= ml[m] + (m == 1 && leap(y) ? 1 : 0);
		m++;
	}
	snprintf(out, cap, "%04d-%02d-%02dT%02u:%02u:%02u.%03uZ", y, m + 1, (int)days + 1, rem / 3600,
		 rem / 60 % 60, rem % 60, ms);
}
