#include "target/dist.h"

#include <math.h>
#include <stddef.h>

#include "util/err.h"

/* z such that Phi(z) = 0.99 */
#define Z99 2.3263478740408408

int target_dist_set(struct target_dist *d, enum target_dist_kind kind, uint64_t a_ns, uint64_t b_ns,
                    uint64_t cap_ns, const char **why)
{
	static const char *const too_long = "at most 1h";
	*d = (struct target_dist){.kind = kind, .a_ns = a_ns, .b_ns = b_ns};
	d->cap_ns = cap_ns ? cap_ns : TARGET_LATENCY_CAP_NS;
	*why = NULL;
	if (a_ns > TARGET_LATENCY_CAP_NS || b_ns > TARGET_LATENCY_CAP_NS ||
	    d->cap_ns > TARGET_LATENCY_CAP_NS) {
		*why = too_long;
		return PACER_ERANGE;
	}
	switch (kind) {
	case TARGET_DIST_NONE:
	case TARGET_DIST_FIXED:
		break;
	case TARGET_DIST_UNIFORM:
		if (b_ns < a_ns) {
			*why = "max >= min";
			return PACER_ERANGE;
		}
		break;
	case TARGET_DIST_EXPONENTIAL:
		if (a_ns == 0) {
			*why = "mean > 0";
			return PACER_ERANGE;
		}
		break;
	case TARGET_DIST_LOGNORMAL:
		if (a_ns == 0) {
			*why = "p50 > 0";
			return PACER_ERANGE;
		}
		if (b_ns < a_ns) {
			*why = "p99 >= p50";
			return PACER_ERANGE;
		}
		d->mu = log((double)a_ns);
		d->sigma = (log((double)b_ns) - d->mu) / Z99;
		break;
	default:
		*why = "a known distribution";
		return PACER_ERANGE;
	}
	return 0;
}

static uint64_t clamp(const struct target_dist *d, double v)
{
	if (!(v >= 0))
		return 0;
	if (v >= (double)d->cap_ns)
		return d->cap_ns;
	return (uint64_t)(v + 0.5);
}

uint64_t target_dist_sample(const struct target_dist *d, struct rng *r)
{
	switch (d->kind) {
	case TARGET_DIST_FIXED:
		return d->a_ns;
	case TARGET_DIST_UNIFORM: {
		uint64_t span = d->b_ns - d->a_ns;
		if (span == 0)
			return d->a_ns;
		/* integers in [min, max]; the modulo bias is below 2^-20 for any
		 * span up to the 1 h cap */
		return d->a_ns + rng_next(r) % (span + 1);
	}
	case TARGET_DIST_EXPONENTIAL:
		return clamp(d, -(double)d->a_ns * log(rng_unit(r)));
	case TARGET_DIST_LOGNORMAL: {
		double u1 = rng_unit(r), u2 = rng_unit(r);
		double z = sqrt(-2.0 * log(u1)) * cos(2.0 * M_PI * u2);
		return clamp(d, exp(d->mu + d->sigma * z));
	}
	default:
		return 0;
	}
}

/* Inverse of the standard normal CDF (Acklam's rational approximation,
 * relative error < 1.2e-9 — ample for test tolerances). */
static double norm_inv(double p)
{
	static const double a[] = {-3.969683028665376e+01, 2.209460984245205e+02,
	                           -2.759285104469687e+02, 1.383577518672690e+02,
	                           -3.066479806614716e+01, 2.506628277459239e+00};
	static const double b[] = {-5.447609879822406e+01, 1.615858368580409e+02,
	                           -1.556989798598866e+02, 6.680131188771972e+01,
	                           -1.328068155288572e+01};
	static const double c[] = {-7.784894002430293e-03, -3.223964580411365e-01,
	                           -2.400758277161838e+00, -2.549732539343734e+00,
	                           4.374664141464968e+00,  2.938163982698783e+00};
	static const double dd[] = {7.784695709041462e-03, 3.224671290700398e-01,
	                            2.445134137142996e+00, 3.754408661907416e+00};
	const double lo = 0.02425, hi = 1 - lo;
	double q, r;
	if (p < lo) {
		q = sqrt(-2 * log(p));
		return (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
		       ((((dd[0] * q + dd[1]) * q + dd[2]) * q + dd[3]) * q + 1);
	}
	if (p > hi) {
		q = sqrt(-2 * log(1 - p));
		return -(((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
		       ((((dd[0] * q + dd[1]) * q + dd[2]) * q + dd[3]) * q + 1);
	}
	q = p - 0.5;
	r = q * q;
	return (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q /
	       (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1);
}

double target_dist_quantile(const struct target_dist *d, double q)
{
	switch (d->kind) {
	case TARGET_DIST_FIXED:
		return (double)d->a_ns;
	case TARGET_DIST_UNIFORM:
		return (double)d->a_ns + q * (double)(d->b_ns - d->a_ns);
	case TARGET_DIST_EXPONENTIAL:
		return -(double)d->a_ns * log(1 - q);
	case TARGET_DIST_LOGNORMAL:
		return exp(d->mu + d->sigma * norm_inv(q));
	default:
		return 0;
	}
}

const char *target_dist_name(enum target_dist_kind kind)
{
	switch (kind) {
	case TARGET_DIST_FIXED: return "fixed";
	case TARGET_DIST_UNIFORM: return "uniform";
	case TARGET_DIST_EXPONENTIAL: return "exponential";
	case TARGET_DIST_LOGNORMAL: return "lognormal";
	default: return "none";
	}
}
