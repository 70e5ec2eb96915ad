#include "result/cost.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/err.h"

void cost_profiles_default(struct cost_profiles *out)
{
	memset(out, 0, sizeof *out);
	/* Illustrative list prices per vCPU-hour (the examples in the issue
	 * that asked for this): not measured, not current quotes. */
	static const struct cost_profile d[] = {{"on-demand-x86", 0.02}, {"arm-spot", 0.017}};
	for (size_t i = 0; i < sizeof d / sizeof d[0]; i++)
		out->p[out->n++] = d[i];
	out->defaults = 1;
}

int cost_profile_add(struct cost_profiles *ps, const char *arg, char *err, size_t cap)
{
	if (ps->defaults) {
		ps->n = 0;
		ps->defaults = 0;
	}
	const char *eq = strchr(arg, '=');
	size_t nl = eq ? (size_t)(eq - arg) : 0;
	if (!eq || nl == 0 || nl >= COST_NAME_MAX) {
		snprintf(err, cap, "--cost-profile '%.80s': expected NAME=USD_PER_CORE_HOUR, NAME 1-%d "
			 "characters", arg, COST_NAME_MAX - 1);
		return PACER_EPARSE;
	}
	for (size_t i = 0; i < nl; i++) {
		char c = arg[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '.' || c == '_' || c == '-')) {
			snprintf(err, cap, "--cost-profile '%.80s': the name may use letters, digits, . _ -",
				 arg);
			return PACER_EPARSE;
		}
	}
	char *end;
	double v = strtod(eq + 1, &end);
	if (end == eq + 1 || *end || !isfinite(v) || v < 0) {
		snprintf(err, cap, "--cost-profile '%.80s': the price must be a number >= 0 (USD per "
			 "core-hour)", arg);
		return PACER_EPARSE;
	}
	for (size_t i = 0; i < ps->n; i++) {
		if (!strncmp(ps->p[i].name, arg, nl) && ps->p[i].name[nl] == '\0') {
			snprintf(err, cap, "--cost-profile '%.*s' given twice", (int)nl, arg);
			return PACER_EPARSE;
		}
	}
	if (ps->n >= COST_MAX_PROFILES) {
		snprintf(err, cap, "at most %d --cost-profile options", COST_MAX_PROFILES);
		return PACER_ETOOBIG;
	}
	memcpy(ps->p[ps->n].name, arg, nl);
	ps->p[ps->n].name[nl] = '\0';
	ps->p[ps->n].usd_per_core_hour = v;
	ps->n++;
	return 0;
}

double cost_usd_per_million(double cpu_ms_per_request, double usd_per_core_hour)
{
	return cpu_ms_per_request * 1e6 / 3.6e6 * usd_per_core_hour;
}
