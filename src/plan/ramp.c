#include "plan/ramp.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "util/err.h"
#include "util/units.h"

int ramp_parse_steps(const char *list, double *rates, size_t cap, size_t *n, char *err,
		     size_t errcap)
{
	*n = 0;
	if (!list || !*list) {
		snprintf(err, errcap, "--steps: empty (expected rates like 500,1000,2k)");
		return PACER_EPARSE;
	}
	const char *p = list;
	for (size_t idx = 1;; idx++) {
		const char *comma = strchr(p, ',');
		size_t len = comma ? (size_t)(comma - p) : strlen(p);
		/* spaces around an item are allowed, as in SLO expressions */
		while (len && (*p == ' ' || *p == '\t')) {
			p++;
			len--;
		}
		while (len && (p[len - 1] == ' ' || p[len - 1] == '\t'))
			len--;
		char item[64];
		if (len == 0 || len >= sizeof item) {
			snprintf(err, errcap, "--steps: item %zu is %s (expected a rate like 500 or 2k)",
				 idx, len ? "too long" : "empty");
			return PACER_EPARSE;
		}
		memcpy(item, p, len);
		item[len] = '\0';
		double r;
		int rc = units_parse_rate(item, &r);
		if (rc) {
			snprintf(err, errcap, "--steps: item %zu '%s' is not a rate above 0 (like 500 or 2k)",
				 idx, item);
			return rc;
		}
		if (*n && r <= rates[*n - 1]) {
			snprintf(err, errcap, "--steps: item %zu '%s' is not above the step before it", idx,
				 item);
			return PACER_ERANGE;
		}
		if (*n == cap) {
			snprintf(err, errcap, "--steps: more than %zu steps", cap);
			return PACER_ERANGE;
		}
		rates[(*n)++] = r;
		if (!comma)
			return 0;
		p = comma + 1;
	}
}

int ramp_geometric(double from, double to, double factor, double *rates, size_t cap, size_t *n,
		   char *err, size_t errcap)
{
	*n = 0;
	if (!(from > 0) || !(to >= from)) {
		snprintf(err, errcap, "--from/--to: need 0 < --from <= --to");
		return PACER_ERANGE;
	}
	if (!(factor > 1.0) || !isfinite(factor)) {
		snprintf(err, errcap, "--factor: must be above 1");
		return PACER_ERANGE;
	}
	for (double r = from;; r *= factor) {
		/* Past `to`, or short of it by a rounding error only (250 * 1.4 *
		 * 1.4 is 489.99999999999994): the step is `to` itself, and the last. */
		double v = r > to || (*n && r >= to * (1 - 1e-9)) ? to : r;
		if (*n == cap) {
			snprintf(err, errcap, "--from/--to/--factor: more than %zu steps", cap);
			return PACER_ERANGE;
		}
		if (*n && v <= rates[*n - 1])
			return 0;
		rates[(*n)++] = v;
		if (v >= to)
			return 0;
	}
}

double ramp_bisect(double pass_rate, double fail_rate) { return (pass_rate + fail_rate) / 2; }

bool ramp_refined(double pass_rate, double fail_rate, double precision)
{
	return pass_rate > 0 && (fail_rate - pass_rate) / pass_rate <= precision;
}
