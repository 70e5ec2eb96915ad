#include "stats/summary.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/rng.h"

static int cmp_dbl(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;
	return (a > b) - (a < b);
}

static double median_sorted(const double *v, size_t n)
{
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

void summary_of(const double *v, size_t n, struct summary *s)
{
	memset(s, 0, sizeof *s);
	if (n > SUMMARY_MAX_N)
		n = SUMMARY_MAX_N;
	if (!n)
		return;
	double tmp[SUMMARY_MAX_N];
	memcpy(tmp, v, n * sizeof *v);
	qsort(tmp, n, sizeof *tmp, cmp_dbl);
	s->n = n;
	s->min = tmp[0];
	s->max = tmp[n - 1];
	s->median = median_sorted(tmp, n);
}

static double resample_median(const double *v, size_t n, struct rng *r, double *tmp)
{
	for (size_t i = 0; i < n; i++)
		tmp[i] = v[rng_next(r) % n];
	qsort(tmp, n, sizeof *tmp, cmp_dbl);
	return median_sorted(tmp, n);
}

void summary_ratio_ci(const double *a, size_t na, const double *b, size_t nb, unsigned iters,
		      uint64_t seed, double noise, struct ratio_ci *out)
{
	memset(out, 0, sizeof *out);
	if (na > SUMMARY_MAX_N)
		na = SUMMARY_MAX_N;
	if (nb > SUMMARY_MAX_N)
		nb = SUMMARY_MAX_N;
	struct summary sa, sb;
	summary_of(a, na, &sa);
	summary_of(b, nb, &sb);
	if (!na || !nb || sa.median == 0)
		return;
	out->defined = true;
	out->enough = na >= SUMMARY_MIN_N && nb >= SUMMARY_MIN_N;
	out->ratio = sb.median / sa.median;
	if (iters < 100)
		iters = 100;
	double *ratios = malloc(iters * sizeof *ratios);
	double tmp[SUMMARY_MAX_N];
	if (!ratios) {
		out->lo = out->hi = out->ratio;
		return;
	}
	struct rng r;
	rng_seed(&r, seed);
	unsigned k = 0;
	for (unsigned i = 0; i < iters; i++) {
		double ma = resample_median(a, na, &r, tmp);
		double mb = resample_median(b, nb, &r, tmp);
		if (ma != 0)
			ratios[k++] = mb / ma;
	}
	if (!k) {
		free(ratios);
		out->lo = out->hi = out->ratio;
		return;
	}
	qsort(ratios, k, sizeof *ratios, cmp_dbl);
	out->lo = ratios[(size_t)((double)(k - 1) * 0.025)];
	out->hi = ratios[(size_t)((double)(k - 1) * 0.975 + 0.5)];
	out->significant = out->enough && (out->lo > 1.0 || out->hi < 1.0) && fabs(out->ratio - 1.0) > noise;
	free(ratios);
}
