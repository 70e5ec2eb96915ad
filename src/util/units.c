#include "util/units.h"

#include <ctype.h>
#include <stdbool.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/err.h"

/* Parse a non-negative decimal number prefix; *end points past it. */
static int parse_number(const char *s, double *v, const char **end)
{
	if (!s || !*s || !(isdigit((unsigned char)s[0]) || s[0] == '.'))
		return PACER_EPARSE;
	const char *p = s;
	int digits = 0;
	while (isdigit((unsigned char)*p)) {
		p++;
		digits++;
	}
	if (*p == '.') {
		p++;
		while (isdigit((unsigned char)*p)) {
			p++;
			digits++;
		}
	}
	if (digits == 0)
		return PACER_EPARSE;
	char buf[64];
	size_t n = (size_t)(p - s);
	if (n >= sizeof buf)
		return PACER_ERANGE;
	memcpy(buf, s, n);
	buf[n] = '\0';
	double d = strtod(buf, NULL);
	if (!isfinite(d))
		return PACER_ERANGE;
	*v = d;
	*end = p;
	return 0;
}

struct suffix {
	const char *name;
	double mult;
};

static int parse_with(const char *s, const struct suffix *tab, double *out)
{
	double v;
	const char *end;
	int rc = parse_number(s, &v, &end);
	if (rc)
		return rc;
	for (const struct suffix *t = tab; t->name; t++) {
		if (strcmp(end, t->name) == 0) {
			double r = v * t->mult;
			if (!isfinite(r))
				return PACER_ERANGE;
			*out = r;
			return 0;
		}
	}
	return PACER_EPARSE;
}

static const struct suffix metric[] = {
	{"", 1}, {"k", 1e3}, {"K", 1e3}, {"M", 1e6}, {"G", 1e9}, {NULL, 0},
};

/* "N/D" (vegeta's 50/1s, 3000/1m): N events per duration D; "50/s" is 50/1s. */
static int parse_per_duration(const char *s, const char *slash, double *out)
{
	char num[64];
	size_t n = (size_t)(slash - s);
	if (n >= sizeof num)
		return PACER_ERANGE;
	memcpy(num, s, n);
	num[n] = '\0';
	double v;
	int rc = parse_with(num, metric, &v);
	if (rc)
		return rc;
	const char *d = slash + 1;
	char one[16];
	if (*d >= 'a' && *d <= 'z' && strlen(d) < sizeof one - 1) { /* "/s": one unit */
		snprintf(one, sizeof one, "1%s", d);
		d = one;
	}
	uint64_t ns;
	rc = units_parse_duration_ns(d, &ns);
	if (rc)
		return rc;
	if (ns == 0)
		return PACER_ERANGE;
	*out = v * 1e9 / (double)ns;
	return 0;
}

int units_parse_rate(const char *s, double *rate_per_s)
{
	double v;
	const char *slash = s ? strchr(s, '/') : NULL;
	int rc = slash ? parse_per_duration(s, slash, &v) : parse_with(s, metric, &v);
	if (rc)
		return rc;
	if (v < UNITS_MIN_RATE || v > 1e9) /* below it, a rate is a typo that prints as 0 */
		return PACER_ERANGE;
	*rate_per_s = v;
	return 0;
}

/* A duration of several parts, each a number and a unit, the units from
 * the largest down ("1m30s", "1h5m", "2s500ms"), as Go and vegeta write
 * them. tab is the duration suffixes, bare ("") first, by no order. */
static int parse_compound(const char *s, const struct suffix *tab, double *out)
{
	double sum = 0, last_mult = INFINITY;
	int parts = 0;
	const char *p = s;
	while (*p) {
		double v;
		const char *end;
		int rc = parse_number(p, &v, &end);
		if (rc)
			return rc;
		char unit[8];
		size_t n = 0;
		while (end[n] >= 'a' && end[n] <= 'z')
			n++;
		if (n == 0 || n >= sizeof unit)
			return PACER_EPARSE;
		memcpy(unit, end, n);
		unit[n] = '\0';
		const struct suffix *t = tab;
		while (t->name && strcmp(t->name, unit) != 0)
			t++;
		if (!t->name || t->mult >= last_mult)
			return PACER_EPARSE;
		last_mult = t->mult;
		sum += v * t->mult;
		parts++;
		p = end + n;
	}
	if (parts < 2 || !isfinite(sum))
		return PACER_EPARSE;
	*out = sum;
	return 0;
}

int units_parse_duration_ns(const char *s, uint64_t *ns)
{
	static const struct suffix tab[] = {
		{"", 1e9}, {"ns", 1}, {"us", 1e3}, {"ms", 1e6}, {"s", 1e9},
		{"m", 60e9}, {"min", 60e9}, {"h", 3600e9}, {NULL, 0},
	};
	double v;
	int rc = parse_with(s, tab, &v);
	if (rc == PACER_EPARSE && s)
		rc = parse_compound(s, tab, &v);
	if (rc)
		return rc;
	if (v > 1e18)
		return PACER_ERANGE;
	*ns = (uint64_t)llround(v);
	return 0;
}

/* A product like 16.1 * 1e3 is 16100.000000000002 in binary floating point:
 * accept values within a relative 1e-9 of a whole number, as that number. */
static int whole(double v, uint64_t *out)
{
	double r = nearbyint(v);
	if (fabs(v - r) > 1e-9 * (r > 1 ? r : 1))
		return PACER_EPARSE;
	*out = (uint64_t)r;
	return 0;
}

int units_parse_count(const char *s, uint64_t *n)
{
	double v;
	int rc = parse_with(s, metric, &v);
	if (rc)
		return rc;
	if (v > 1e18)
		return PACER_ERANGE;
	return whole(v, n);
}

int units_parse_size(const char *s, uint64_t *bytes)
{
	static const struct suffix tab[] = {
		{"", 1}, {"B", 1}, {"k", 1024.0}, {"K", 1024.0}, {"KiB", 1024.0}, {"kB", 1024.0},
		{"KB", 1024.0}, {"M", 1048576.0}, {"MiB", 1048576.0}, {"MB", 1048576.0},
		{"G", 1073741824.0}, {"GiB", 1073741824.0}, {"GB", 1073741824.0}, {NULL, 0},
	};
	double v;
	int rc = parse_with(s, tab, &v);
	if (rc)
		return rc;
	if (v > 1e15)
		return PACER_ERANGE;
	return whole(v, bytes);
}

int units_parse_percent(const char *s, double *pct)
{
	static const struct suffix tab[] = {{"", 1}, {"%", 1}, {NULL, 0}};
	double v;
	int rc = parse_with(s, tab, &v);
	if (rc)
		return rc;
	if (v >= 100)
		return PACER_ERANGE;
	*pct = v;
	return 0;
}

/* "–" (an en dash): what every formatter writes for NaN and infinities. */
#define NO_VALUE "\xe2\x80\x93"

char *units_fmt_duration(char *out, size_t cap, double ns)
{
	return units_fmt_duration_sig(out, cap, ns, 3);
}

char *units_fmt_duration_sig(char *out, size_t cap, double ns, int sig)
{
	static const struct {
		double div;
		const char *unit;
	} u[] = {{1, "ns"}, {1e3, "\xc2\xb5s"}, {1e6, "ms"}, {1e9, "s"}};
	if (!isfinite(ns)) {
		snprintf(out, cap, NO_VALUE);
		return out;
	}
	double a = fabs(ns);
	int i = a >= 1e9 ? 3 : a >= 1e6 ? 2 : a >= 1e3 ? 1 : 0;
	sig = sig < 3 ? 3 : sig > 6 ? 6 : sig;
	double digits = pow(10, sig);
	/* sig significant digits, chosen from the value as it will print
	 * (9.996 µs → "10.0 µs"), moving to the next unit when rounding
	 * reaches 1000 (999.6 ns → "1.00 µs") */
	for (;;) {
		double v = a / u[i].div;
		int d = i == 0 ? 0 : sig - 1;
		while (d > 0 && round(v * pow(10, d)) >= digits)
			d--;
		if (round(v * pow(10, d)) / pow(10, d) >= 1000 && i < 3) {
			i++;
			continue;
		}
		double r = round(v * pow(10, d)) / pow(10, d);
		snprintf(out, cap, "%s%.*f %s", ns < 0 && r > 0 ? "-" : "", d, v, u[i].unit);
		return out;
	}
}

char *units_fmt_thousands(char *out, size_t cap, double v, int decimals)
{
	if (!isfinite(v)) {
		snprintf(out, cap, NO_VALUE);
		return out;
	}
	if (fabs(v) >= 1e21) { /* past any 64-bit count: a hostile value stays short */
		snprintf(out, cap, "%.3g", v);
		return out;
	}
	char raw[400];
	snprintf(raw, sizeof raw, "%.*f", decimals, fabs(v)); /* -0.0 too: fabs, not v < 0 */
	bool neg = v < 0 && strspn(raw, "0.") != strlen(raw); /* no "-0" */
	char *dot = strchr(raw, '.');
	size_t int_len = dot ? (size_t)(dot - raw) : strlen(raw);
	char buf[520];
	size_t o = 0;
	if (neg)
		buf[o++] = '-';
	for (size_t i = 0; i < int_len; i++) {
		if (i > 0 && (int_len - i) % 3 == 0)
			buf[o++] = ',';
		buf[o++] = raw[i];
	}
	if (dot)
		for (const char *p = dot; *p && o < sizeof buf - 1; p++)
			buf[o++] = *p;
	buf[o] = '\0';
	snprintf(out, cap, "%s", buf);
	return out;
}

char *units_fmt_rate(char *out, size_t cap, double per_s)
{
	bool whole = isfinite(per_s) && (per_s == floor(per_s) || fabs(per_s) >= 1e4);
	return units_fmt_thousands(out, cap, per_s, whole ? 0 : 1);
}

char *units_fmt_pct(char *out, size_t cap, double pct)
{
	if (!isfinite(pct))
		snprintf(out, cap, NO_VALUE);
	else if (pct != 0 && fabs(pct) < 0.01)
		snprintf(out, cap, "%.2g%%", pct);
	else
		snprintf(out, cap, "%.2f%%", pct);
	return out;
}

char *units_fmt_ratio(char *out, size_t cap, double v)
{
	double a = fabs(v);
	if (!isfinite(v))
		snprintf(out, cap, NO_VALUE);
	else if (a < 10)
		snprintf(out, cap, "%.3f", v);
	else if (a < 1000)
		snprintf(out, cap, "%.1f", v);
	else
		snprintf(out, cap, "%.0f", v);
	return out;
}

char *units_fmt_seconds(char *out, size_t cap, double s)
{
	if (!isfinite(s))
		snprintf(out, cap, NO_VALUE);
	else if (s < 1)
		snprintf(out, cap, "%.3f s", s);
	else if (s < 100)
		snprintf(out, cap, "%.1f s", s);
	else
		snprintf(out, cap, "%.0f s", s);
	return out;
}

char *units_fmt_cost(char *out, size_t cap, double usd, const char *prefix)
{
	if (!prefix)
		prefix = "";
	if (!isfinite(usd)) {
		snprintf(out, cap, "-");
		return out;
	}
	double a = fabs(usd);
	char num[560];
	if (a >= 1) {
		units_fmt_thousands(num, sizeof num, a, 2);
		/* 0.999999 rounds up to "1.00" below; both sides agree on >= 1 */
	} else if (a == 0) {
		snprintf(num, sizeof num, "0");
	} else {
		/* decimals for 3 significant digits: 0.00055 (1e-4 <= a < 1e-3) → 6 */
		int mag = (int)floor(log10(a)); /* -1 for 0.5, -4 for 0.00055 */
		int decimals = 2 - mag;
		if (decimals > 17) {
			snprintf(out, cap, "<%s0.000000000000001", prefix); /* either sign */
			return out;
		}
		snprintf(num, sizeof num, "%.*f", decimals, a);
		/* rounding can carry into a new digit (0.0009996 → "0.001000"):
		 * trailing zeros go either way */
		char *dot = strchr(num, '.');
		if (dot) {
			size_t n = strlen(num);
			while (n > 0 && num[n - 1] == '0')
				num[--n] = '\0';
			if (n > 0 && num[n - 1] == '.')
				num[--n] = '\0';
		}
		if (!strcmp(num, "1")) /* 0.9996 rounds to 1: say it as 1.00 */
			snprintf(num, sizeof num, "1.00");
	}
	bool neg = usd < 0 && strcmp(num, "0") != 0;
	snprintf(out, cap, "%s%s%s", neg ? "-" : "", prefix, num);
	return out;
}

char *units_fmt_bytes(char *out, size_t cap, double v)
{
	if (!isfinite(v))
		snprintf(out, cap, NO_VALUE);
	else if (v >= 1024.0 * 1024 * 1024)
		snprintf(out, cap, "%.2f GiB", v / (1024.0 * 1024 * 1024));
	else if (v >= 1024.0 * 1024)
		snprintf(out, cap, "%.1f MiB", v / (1024.0 * 1024));
	else if (v >= 1024)
		snprintf(out, cap, "%.1f KiB", v / 1024.0);
	else
		snprintf(out, cap, "%.0f B", v);
	return out;
}
