/* Tests of arrival schedules (src/plan/sched.c): constant schedules are
 * exact and do not drift, Poisson gaps have the right mean and variance and
 * depend only on the seed (and, built as a tree of Beta splits, are iid
 * exponential at every scale), and work/rate splitting hands out the
 * remainder and sums back to the total. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "plan/sched.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* Rates whose interval is a whole number of ns: every due time is exact. */
struct const_exact {
	double rate_per_s;
	uint64_t interval_ns;
	double phase;
	uint64_t offset_ns;
	uint64_t start_ns;
};

static const struct const_exact exact_cases[] = {
	{ 1000, 1000000, 0, 0, 0 },
	{ 1000, 1000000, 0.25, 250000, 123456789 },
	{ 1, 1000000000, 0.5, 500000000, 5000000000000ull },
	{ 20000, 50000, 0.75, 37500, 1 },
	{ 1e6, 1000, 0.5, 500, 987654321987ull },
	{ 1e9, 1, 0, 0, 42 },
	{ 0.5, 2000000000, 0.1, 200000000, 0 },
};

static void test_constant_exact(void **state)
{
	(void)state;
	for (size_t i = 0; i < N(exact_cases); i++) {
		const struct const_exact *c = &exact_cases[i];
		struct sched s;
		sched_init(&s, SCHED_CONSTANT, c->rate_per_s, c->start_ns, c->phase, 99);
		for (uint64_t k = 0; k < 1000000; k++) {
			uint64_t due = sched_next(&s);
			uint64_t want = c->start_ns + c->offset_ns + k * c->interval_ns;
			if (due != want) {
				print_message("rate %g phase %g: arrival %llu due %llu, want %llu\n",
				              c->rate_per_s, c->phase, (unsigned long long)k,
				              (unsigned long long)due, (unsigned long long)want);
				fail();
			}
		}
		assert_true(s.k == 1000000);
	}
}

/* Rates whose interval is not whole: each due time is the exact one rounded
 * (|error| <= 1 ns), even after a million arrivals; gaps are floor or ceil of
 * the interval, so rounding never accumulates. */
struct const_frac {
	double rate_per_s;
	uint64_t num, den; /* interval = num / den ns, exactly */
	double phase;      /* a multiple of 1/4 */
};

static const struct const_frac frac_cases[] = {
	{ 3, 1000000000, 3, 0 },
	{ 3, 1000000000, 3, 0.5 },
	{ 7, 1000000000, 7, 0.25 },
	{ 30000, 100000, 3, 0 },
	{ 2.5e6, 2000, 5, 0.75 }, /* 400 exactly */
	{ 6e5, 10000, 6, 0.5 },
};

static void test_constant_no_drift(void **state)
{
	(void)state;
	const uint64_t start = 1000000007ull;
	for (size_t i = 0; i < N(frac_cases); i++) {
		const struct const_frac *c = &frac_cases[i];
		struct sched s;
		sched_init(&s, SCHED_CONSTANT, c->rate_per_s, start, c->phase, 1);
		uint64_t lo = c->num / c->den, hi = (c->num + c->den - 1) / c->den;
		/* phase as quarters so the exact offset is num*q/(4*den) */
		uint64_t q = (uint64_t)llround(c->phase * 4);
		uint64_t prev = 0;
		for (uint64_t k = 0; k < 1000000; k++) {
			uint64_t due = sched_next(&s);
			/* exact time * 4*den = num*(q + 4k) (< 2^63 here) */
			uint64_t x = c->num * (q + 4 * k);
			uint64_t d = 4 * c->den;
			uint64_t want_floor = start + (uint64_t)(x / d);
			uint64_t want_ceil = start + (uint64_t)((x + d - 1) / d);
			if (due != want_floor && due != want_ceil) {
				print_message("rate %g: arrival %llu due %llu, want %llu or %llu\n",
				              c->rate_per_s, (unsigned long long)k,
				              (unsigned long long)due, (unsigned long long)want_floor,
				              (unsigned long long)want_ceil);
				fail();
			}
			if (k > 0) {
				uint64_t gap = due - prev;
				if (gap != lo && gap != hi) {
					print_message("rate %g: gap %llu at %llu\n", c->rate_per_s,
					              (unsigned long long)gap, (unsigned long long)k);
					fail();
				}
			}
			prev = due;
		}
	}
}

/* A phase shifts every arrival by phase * interval; threads with phases i/n
 * interleave evenly. */
static void test_constant_phases_interleave(void **state)
{
	(void)state;
	enum { THREADS = 4, PER = 1000 };
	const double rate_total = 4000; /* 1000/s per thread: 1 ms each */
	uint64_t all[THREADS * PER];
	size_t n = 0;
	for (uint32_t t = 0; t < THREADS; t++) {
		struct sched s;
		sched_init(&s, SCHED_CONSTANT, rate_total / THREADS, 10, (double)t / THREADS, t);
		for (int k = 0; k < PER; k++)
			all[n++] = sched_next(&s);
	}
	/* merged, they form one constant schedule of 4000/s: every 250 us */
	for (size_t i = 0; i < n; i++) {
		size_t t = i / PER, k = i % PER;
		assert_true(all[i] == 10 + k * 1000000 + t * 250000);
	}
}

struct stats {
	double mean, var;
	double frac_above_mean;
	uint64_t zero_or_negative;
};

static struct stats poisson_gaps(double rate_per_s, uint64_t seed, size_t n)
{
	struct sched s;
	const uint64_t start = 5000000000ull;
	sched_init(&s, SCHED_POISSON, rate_per_s, start, 0, seed);
	double *gaps = malloc(n * sizeof *gaps);
	assert_non_null(gaps);
	uint64_t prev = start;
	struct stats st = { 0, 0, 0, 0 };
	for (size_t i = 0; i < n; i++) {
		uint64_t due = sched_next(&s);
		if (due < prev)
			st.zero_or_negative++; /* never goes back in time */
		gaps[i] = (double)(due - prev);
		prev = due;
	}
	double sum = 0;
	for (size_t i = 0; i < n; i++)
		sum += gaps[i];
	st.mean = sum / (double)n;
	double ss = 0;
	size_t above = 0;
	for (size_t i = 0; i < n; i++) {
		ss += (gaps[i] - st.mean) * (gaps[i] - st.mean);
		above += gaps[i] > st.mean;
	}
	st.var = ss / (double)(n - 1);
	st.frac_above_mean = (double)above / (double)n;
	free(gaps);
	return st;
}

static void test_poisson_moments(void **state)
{
	(void)state;
	static const double rates[] = { 1000, 37, 250000 };
	static const uint64_t seeds[] = { 1, 0, 0xdeadbeef };
	for (size_t i = 0; i < N(rates); i++) {
		double interval = 1e9 / rates[i];
		struct stats st = poisson_gaps(rates[i], seeds[i], 200000);
		print_message("rate %g: mean gap %.6g (want %.6g), var %.6g (want %.6g), "
		              "P(gap > mean) %.4f\n",
		              rates[i], st.mean, interval, st.var, interval * interval,
		              st.frac_above_mean);
		assert_int_equal(st.zero_or_negative, 0);
		assert_true(fabs(st.mean / interval - 1) < 0.02);
		assert_true(fabs(st.var / (interval * interval) - 1) < 0.05);
		/* exponential: P(X > mean) = 1/e */
		assert_true(fabs(st.frac_above_mean - exp(-1)) < 0.01);
	}
}

static void test_poisson_seeded(void **state)
{
	(void)state;
	enum { M = 10000 };
	static uint64_t a[M], b[M], c[M];
	struct sched sa, sb, sc;
	sched_init(&sa, SCHED_POISSON, 5000, 777, 0, 42);
	sched_init(&sb, SCHED_POISSON, 5000, 777, 0.9, 42); /* phase ignored by Poisson */
	sched_init(&sc, SCHED_POISSON, 5000, 777, 0, 43);
	for (int i = 0; i < M; i++) {
		a[i] = sched_next(&sa);
		b[i] = sched_next(&sb);
		c[i] = sched_next(&sc);
	}
	assert_memory_equal(a, b, sizeof a);
	size_t same = 0;
	for (int i = 0; i < M; i++)
		same += a[i] == c[i];
	assert_true(same < M / 100);
	/* re-initialising restarts the same sequence */
	sched_init(&sa, SCHED_POISSON, 5000, 777, 0, 42);
	for (int i = 0; i < M; i++)
		assert_true(sched_next(&sa) == a[i]);
	/* the seed does not matter to a constant schedule */
	struct sched k1, k2;
	sched_init(&k1, SCHED_CONSTANT, 5000, 777, 0.5, 1);
	sched_init(&k2, SCHED_CONSTANT, 5000, 777, 0.5, 2);
	for (int i = 0; i < 1000; i++)
		assert_true(sched_next(&k1) == sched_next(&k2));
}

/* The Poisson stream is built as a tree of Beta splits (sched.c): its gaps
 * must still be iid exponential at every scale. Deciles of the gaps, their
 * lag-1 correlation, and sums of w consecutive gaps (Gamma(w): mean and
 * variance w) both aligned with the tree's nodes and straddling them. */
static void test_poisson_tree_gaps(void **state)
{
	(void)state;
	enum { G = 1 << 18 };
	static double gap[G];
	struct sched s;
	sched_init(&s, SCHED_POISSON, 1, 0, 0, 5); /* 1/s: gaps in whole seconds of ns */
	uint64_t last = 0;
	for (size_t i = 0; i < G; i++) {
		uint64_t t = sched_next(&s);
		gap[i] = (double)(t - last) / 1e9;
		last = t;
	}
	/* deciles of Exp(1): chi-square with 9 degrees of freedom */
	size_t bins[10] = {0};
	for (size_t i = 0; i < G; i++) {
		double u = 1 - exp(-gap[i]); /* its CDF: uniform if exponential */
		size_t b = (size_t)(u * 10);
		bins[b > 9 ? 9 : b]++;
	}
	double chi2 = 0, want = G / 10.0;
	for (int b = 0; b < 10; b++)
		chi2 += (bins[b] - want) * (bins[b] - want) / want;
	print_message("gap deciles: chi2 %.2f (9 dof)\n", chi2);
	assert_true(chi2 < 30); /* p < 0.0005 */
	double sxy = 0, sx = 0, sxx = 0;
	for (size_t i = 0; i + 1 < G; i++) {
		sx += gap[i];
		sxx += gap[i] * gap[i];
		sxy += gap[i] * gap[i + 1];
	}
	double n = G - 1, mean = sx / n, var = sxx / n - mean * mean;
	double r1 = (sxy / n - mean * mean) / var;
	print_message("gap lag-1 correlation %.5f\n", r1);
	assert_true(fabs(r1) < 5 / sqrt(n));
	for (unsigned m = 1; m <= 11; m++) {
		size_t w = (size_t)1 << m;
		for (size_t off = 0; off <= w / 2; off += w / 2) { /* aligned, straddling */
			double sum = 0, sum2 = 0;
			size_t nb = 0;
			for (size_t lo = off; lo + w <= G; lo += w, nb++) {
				double b = 0;
				for (size_t i = lo; i < lo + w; i++)
					b += gap[i];
				sum += b;
				sum2 += b * b;
			}
			double bm = sum / nb, bv = sum2 / nb - bm * bm;
			double sd_mean = sqrt((double)w / nb), sd_var = (double)w * sqrt(2.0 / nb);
			if (fabs(bm - w) > 5 * sd_mean || fabs(bv - w) > 5 * sd_var)
				print_message("sums of %zu gaps from %zu: mean %.3f var %.3f (%zu)\n", w,
					      off, bm, bv, nb);
			assert_true(fabs(bm - (double)w) < 5 * sd_mean);
			assert_true(fabs(bv - (double)w) < 5 * sd_var);
		}
	}
}

/* The Poisson clock is kept in double ns from the start, so the mean rate
 * over a long run matches: n arrivals take about n / rate. */
static void test_poisson_long_run_rate(void **state)
{
	(void)state;
	struct sched s;
	const double rate = 100000;
	sched_init(&s, SCHED_POISSON, rate, 0, 0, 9);
	uint64_t last = 0;
	const uint64_t n = 2000000;
	for (uint64_t i = 0; i < n; i++)
		last = sched_next(&s);
	double expect = (double)n / rate * 1e9;
	/* sd of the sum is sqrt(n) * interval: 0.07 % here */
	assert_true(fabs((double)last / expect - 1) < 0.005);
}

struct split_case {
	uint64_t total;
	uint32_t parts;
	uint64_t want[8];
};

static const struct split_case splits[] = {
	{ 10, 3, { 4, 3, 3 } },
	{ 9, 3, { 3, 3, 3 } },
	{ 11, 3, { 4, 4, 3 } },
	{ 3, 5, { 1, 1, 1, 0, 0 } },
	{ 0, 4, { 0, 0, 0, 0 } },
	{ 7, 1, { 7 } },
	{ 64, 8, { 8, 8, 8, 8, 8, 8, 8, 8 } },
	{ 65, 8, { 9, 8, 8, 8, 8, 8, 8, 8 } },
	{ 71, 8, { 9, 9, 9, 9, 9, 9, 9, 8 } },
};

static void test_split(void **state)
{
	(void)state;
	for (size_t i = 0; i < N(splits); i++) {
		const struct split_case *c = &splits[i];
		uint64_t sum = 0;
		for (uint32_t p = 0; p < c->parts; p++) {
			uint64_t got = sched_split(c->total, c->parts, p);
			if (got != c->want[p])
				print_message("split %llu/%u part %u: %llu, want %llu\n",
				              (unsigned long long)c->total, c->parts, p,
				              (unsigned long long)got, (unsigned long long)c->want[p]);
			assert_true(got == c->want[p]);
			sum += got;
		}
		assert_true(sum == c->total);
	}
	/* sums back, and parts differ by at most one, for many shapes */
	for (uint64_t total = 0; total < 300; total += 7)
		for (uint32_t parts = 1; parts <= 17; parts++) {
			uint64_t sum = 0, mn = UINT64_MAX, mx = 0;
			for (uint32_t p = 0; p < parts; p++) {
				uint64_t v = sched_split(total, parts, p);
				sum += v;
				mn = v < mn ? v : mn;
				mx = v > mx ? v : mx;
			}
			assert_true(sum == total);
			assert_true(mx - mn <= 1);
		}
	/* each part begins where the parts before it end */
	for (uint64_t total = 0; total < 300; total += 11)
		for (uint32_t parts = 1; parts <= 17; parts++) {
			uint64_t at = 0;
			for (uint32_t p = 0; p < parts; p++) {
				assert_true(sched_split_first(total, parts, p) == at);
				at += sched_split(total, parts, p);
			}
			assert_true(at == total);
		}
	/* large totals */
	uint64_t big = UINT64_MAX, sum = 0;
	for (uint32_t p = 0; p < 256; p++)
		sum += sched_split(big, 256, p);
	assert_true(sum == big);
}

struct split_rate_case {
	double rate;
	uint32_t parts;
	double want[6];
};

static const struct split_rate_case rate_splits[] = {
	{ 1000.5, 2, { 500.5, 500 } },
	{ 1000, 3, { 334, 333, 333 } },
	{ 10.25, 4, { 3.25, 3, 2, 2 } },
	{ 2.5, 4, { 1.5, 1, 0, 0 } }, /* fewer whole units than parts: some get 0 */
	{ 0.75, 3, { 0.75, 0, 0 } },
	{ 7, 1, { 7 } },
	{ 1e6, 6, { 166667, 166667, 166667, 166667, 166666, 166666 } },
};

static void test_split_rate(void **state)
{
	(void)state;
	for (size_t i = 0; i < N(rate_splits); i++) {
		const struct split_rate_case *c = &rate_splits[i];
		double sum = 0;
		for (uint32_t p = 0; p < c->parts; p++) {
			double got = sched_split_rate(c->rate, c->parts, p);
			if (fabs(got - c->want[p]) > 1e-9)
				print_message("split_rate %g/%u part %u: %.17g, want %.17g\n", c->rate,
				              c->parts, p, got, c->want[p]);
			assert_true(fabs(got - c->want[p]) <= 1e-9);
			sum += got;
		}
		assert_true(fabs(sum - c->rate) <= 1e-9 * c->rate);
	}
	/* sums back for many rates */
	for (double r = 0.5; r < 5e6; r = r * 1.37 + 0.1)
		for (uint32_t parts = 1; parts <= 12; parts++) {
			double sum = 0;
			for (uint32_t p = 0; p < parts; p++) {
				double v = sched_split_rate(r, parts, p);
				assert_true(v >= 0);
				sum += v;
			}
			assert_true(fabs(sum - r) <= 1e-9 * r);
		}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_constant_exact),
		cmocka_unit_test(test_constant_no_drift),
		cmocka_unit_test(test_constant_phases_interleave),
		cmocka_unit_test(test_poisson_moments),
		cmocka_unit_test(test_poisson_seeded),
		cmocka_unit_test(test_poisson_long_run_rate),
		cmocka_unit_test(test_poisson_tree_gaps),
		cmocka_unit_test(test_split),
		cmocka_unit_test(test_split_rate),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
