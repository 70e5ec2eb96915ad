/* Unit tests: stats/hist.c (log-linear histogram) and stats/hist_io.c. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "common/check.h"
#include "stats/hist.h"
#include "stats/hist_io.h"
#include "util/err.h"

/* ---- deterministic random data ---------------------------------------- */

static uint64_t rng_next(uint64_t *s)
{
	/* splitmix64 */
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Uniform in (0, 1]. */
static double rng_unit(uint64_t *s)
{
	return ((double)(rng_next(s) >> 11) + 1.0) / 9007199254740992.0;
}

static uint64_t clamp_ns(double v, double lo, double hi)
{
	if (v < lo)
		v = lo;
	if (v > hi)
		v = hi;
	return (uint64_t)v;
}

static uint64_t gen_uniform_small(uint64_t *s)
{
	return rng_next(s) % 5000; /* straddles the exact/log boundary at 2048 */
}

static uint64_t gen_uniform_wide(uint64_t *s)
{
	return 1000 + rng_next(s) % (10000000000ull - 1000); /* 1 us .. 10 s */
}

static uint64_t gen_exponential(uint64_t *s)
{
	return (uint64_t)(-2e6 * log(rng_unit(s))); /* mean 2 ms, includes 0 */
}

static uint64_t gen_lognormal(uint64_t *s)
{
	double z = sqrt(-2.0 * log(rng_unit(s))) * cos(2.0 * M_PI * rng_unit(s));
	return clamp_ns(exp(log(1e6) + 2.0 * z), 1e3, 1e10); /* median 1 ms */
}

static uint64_t gen_loguniform(uint64_t *s)
{
	return clamp_ns(exp(log(1e3) + rng_unit(s) * (log(1e10) - log(1e3))), 1e3, 1e10);
}

static uint64_t gen_ties(uint64_t *s)
{
	static const uint64_t v[] = {100, 2047, 2048, 4095, 4096, 1000000, 1000000, 999999999};
	return v[rng_next(s) % (sizeof(v) / sizeof(v[0]))];
}

struct dist {
	const char *name;
	uint64_t (*gen)(uint64_t *s);
	size_t n;
	uint64_t seed;
};

static const struct dist dists[] = {
	{"uniform 0..5000", gen_uniform_small, 50000, 1},
	{"uniform 1us..10s", gen_uniform_wide, 100000, 2},
	{"exponential 2ms", gen_exponential, 100000, 3},
	{"lognormal 1us..10s", gen_lognormal, 100000, 4},
	{"log-uniform 1us..10s", gen_loguniform, 100000, 5},
	{"ties at edges", gen_ties, 20000, 6},
	{"single value", gen_ties, 1, 7},
};
#define NDISTS (sizeof(dists) / sizeof(dists[0]))

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static uint64_t *make_data(const struct dist *d)
{
	uint64_t *v = malloc(d->n * sizeof(*v));
	assert_non_null(v);
	uint64_t s = d->seed;
	for (size_t i = 0; i < d->n; i++)
		v[i] = d->gen(&s);
	return v;
}

static void fill(struct hist *h, const uint64_t *v, size_t n)
{
	assert_int_equal(hist_init(h, HIST_SUB_BITS, HIST_MAX_NS), 0);
	for (size_t i = 0; i < n; i++)
		hist_record(h, v[i]);
}

/* ---- layout and geometry ---------------------------------------------- */

static void test_default_layout(void **state)
{
	(void)state;
	struct hist h;
	assert_int_equal(hist_init(&h, HIST_SUB_BITS, HIST_MAX_NS), 0);
	assert_int_equal(h.counts_len, 33793);
	assert_int_equal(hist_index(&h, HIST_MAX_NS), h.counts_len - 1);
	assert_int_equal(h.min, UINT64_MAX);
	assert_int_equal(h.max, 0);
	hist_free(&h);
	assert_null(h.counts);
	hist_free(&h); /* twice is fine: zeroed */
}

static void test_init_rejects_bad_layout(void **state)
{
	(void)state;
	static const struct {
		uint32_t sub_bits;
		uint64_t max;
	} bad[] = {{0, 1000}, {1, 1000}, {21, 1000}, {11, 0}};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct hist h;
		memset(&h, 0xab, sizeof(h));
		assert_int_equal(hist_init(&h, bad[i].sub_bits, bad[i].max), -EINVAL);
		assert_null(h.counts);
		hist_free(&h);
	}
	struct hist z = {0};
	hist_free(&z);
}

/* Known indices for the default layout. */
static void test_index_table(void **state)
{
	(void)state;
	static const struct {
		uint64_t value;
		size_t index;
		uint64_t low, high;
	} t[] = {
		{0, 0, 0, 0},
		{1, 1, 1, 1},
		{2047, 2047, 2047, 2047},
		{2048, 2048, 2048, 2049},
		{2049, 2048, 2048, 2049},
		{2050, 2049, 2050, 2051},
		{4095, 3071, 4094, 4095},
		{4096, 3072, 4096, 4099},
		{4099, 3072, 4096, 4099},
		{4100, 3073, 4100, 4103},
		{1000000, 9u * 1024 + (1000000 >> 9), 1953u << 9, (1954u << 9) - 1},
		{1ull << 42, 33792, 1ull << 42, (1ull << 42) + (1ull << 32) - 1},
	};
	struct hist h;
	assert_int_equal(hist_init(&h, HIST_SUB_BITS, HIST_MAX_NS), 0);
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		size_t idx = hist_index(&h, t[i].value);
		CHECK(idx == t[i].index, "value %" PRIu64 ": index %zu, want %zu", t[i].value, idx,
		      t[i].index);
		CHECK(hist_bucket_low(&h, idx) == t[i].low, "value %" PRIu64 ": low %" PRIu64,
		      t[i].value, hist_bucket_low(&h, idx));
		CHECK(hist_bucket_high(&h, idx) == t[i].high, "value %" PRIu64 ": high %" PRIu64,
		      t[i].value, hist_bucket_high(&h, idx));
	}
	hist_free(&h);
}

/* 2^k-1, 2^k, 2^k+1 for every k, several layouts. */
static void test_bucket_edges(void **state)
{
	(void)state;
	static const uint32_t layouts[] = {2, 3, 5, 8, 11, 14, 16};
	for (size_t l = 0; l < sizeof(layouts) / sizeof(layouts[0]); l++) {
		uint32_t sb = layouts[l];
		struct hist h;
		assert_int_equal(hist_init(&h, sb, HIST_MAX_NS), 0);
		for (uint32_t k = 1; k <= 42; k++) {
			uint64_t p = 1ull << k;
			uint64_t vals[3] = {p - 1, p, p + 1};
			size_t idx[3];
			for (int j = 0; j < 3; j++) {
				if (vals[j] > h.max_value)
					continue;
				uint64_t v = vals[j];
				idx[j] = hist_index(&h, v);
				assert_true(idx[j] < h.counts_len);
				uint64_t lo = hist_bucket_low(&h, idx[j]);
				uint64_t hi = hist_bucket_high(&h, idx[j]);
				CHECK(lo <= v && v <= hi,
				      "sub_bits %u: %" PRIu64 " not in [%" PRIu64 ", %" PRIu64 "]", sb,
				      v, lo, hi);
				if (v < (1ull << sb)) {
					CHECK(lo == v && hi == v, "sub_bits %u: %" PRIu64 " not exact",
					      sb, v);
				} else {
					/* relative width below 2^-(sub_bits-1) of any member */
					uint32_t kk = 63 - (uint32_t)__builtin_clzll(v);
					CHECK(hi - lo + 1 == 1ull << (kk - sb + 1),
					      "sub_bits %u: width of %" PRIu64, sb, v);
					assert_true(ldexp((double)(hi - v), (int)sb - 1) < (double)v);
				}
			}
			if (p + 1 > h.max_value)
				continue;
			/* 2^k starts a bucket; 2^k-1 ends the one before */
			CHECK(hist_bucket_low(&h, idx[1]) == p || p < (1ull << sb),
			      "sub_bits %u: 2^%u not a bucket start", sb, k);
			assert_int_equal(idx[0] + 1, idx[1]);
			assert_int_equal(hist_bucket_high(&h, idx[0]), p - 1);
			assert_true(idx[2] == idx[1] || idx[2] == idx[1] + 1);
			assert_int_equal(idx[2] == idx[1], hist_bucket_high(&h, idx[1]) > p);
		}
		hist_free(&h);
	}
}

/* Buckets tile [0, max] with no gap or overlap, and index∘low = identity. */
static void test_buckets_contiguous(void **state)
{
	(void)state;
	static const struct {
		uint32_t sub_bits;
		uint64_t max;
	} layouts[] = {{2, 1000}, {3, 1}, {3, 7}, {3, 8}, {5, 123456789},
		       {HIST_SUB_BITS, HIST_MAX_NS}, {HIST_SUB_BITS, 2047}, {6, UINT64_MAX}};
	for (size_t l = 0; l < sizeof(layouts) / sizeof(layouts[0]); l++) {
		struct hist h;
		assert_int_equal(hist_init(&h, layouts[l].sub_bits, layouts[l].max), 0);
		assert_int_equal(hist_bucket_low(&h, 0), 0);
		for (size_t i = 0; i < h.counts_len; i++) {
			uint64_t lo = hist_bucket_low(&h, i), hi = hist_bucket_high(&h, i);
			assert_true(lo <= hi);
			CHECK(hist_index(&h, lo) == i, "layout %zu index %zu", l, i);
			if (hi <= h.max_value)
				assert_int_equal(hist_index(&h, hi), i);
			if (i + 1 < h.counts_len)
				CHECK(hist_bucket_low(&h, i + 1) == hi + 1, "layout %zu gap after %zu",
				      l, i);
		}
		uint64_t top_lo = hist_bucket_low(&h, h.counts_len - 1);
		uint64_t top_hi = hist_bucket_high(&h, h.counts_len - 1);
		assert_true(top_lo <= h.max_value && h.max_value <= top_hi);
		hist_free(&h);
	}
}

/* ---- percentiles, min/max/mean/stddev ---------------------------------- */

/* Percentile levels in parts per million. */
static const uint64_t levels_ppm[] = {0,      1,      10,     1000,   100000, 123450,
				      250000, 333333, 500000, 900000, 990000, 999000,
				      999900, 999990, 999999, 1000000};

static void test_percentiles_vs_exact(void **state)
{
	(void)state;
	const double bound = ldexp(1.0, -(HIST_SUB_BITS - 1));
	for (size_t d = 0; d < NDISTS; d++) {
		const struct dist *ds = &dists[d];
		uint64_t *v = make_data(ds);
		struct hist h;
		fill(&h, v, ds->n);
		qsort(v, ds->n, sizeof(*v), cmp_u64);
		assert_int_equal(h.total, ds->n);
		assert_int_equal(h.clamped, 0);
		CHECK(h.min == v[0], "%s: min %" PRIu64 " want %" PRIu64, ds->name, h.min, v[0]);
		CHECK(h.max == v[ds->n - 1], "%s: max", ds->name);

		for (size_t i = 0; i < sizeof(levels_ppm) / sizeof(levels_ppm[0]); i++) {
			uint64_t ppm = levels_ppm[i];
			uint64_t rank = (ppm * ds->n + 999999) / 1000000;
			if (rank < 1)
				rank = 1;
			uint64_t exact = v[rank - 1];
			uint64_t got = hist_percentile(&h, (double)ppm / 1e4);
			if (ppm == 0 || ppm == 1000000) {
				CHECK(got == exact, "%s p%g: %" PRIu64 " want exact %" PRIu64,
				      ds->name, (double)ppm / 1e4, got, exact);
				continue;
			}
			CHECK(hist_index(&h, got) == hist_index(&h, exact),
			      "%s p%g: %" PRIu64 " not in bucket of %" PRIu64, ds->name,
			      (double)ppm / 1e4, got, exact);
			CHECK(got >= exact && (double)(got - exact) <= bound * (double)exact,
			      "%s p%g: %" PRIu64 " vs exact %" PRIu64, ds->name, (double)ppm / 1e4,
			      got, exact);
			CHECK(got <= h.max && got >= h.min, "%s: outside [min,max]", ds->name);
		}

		long double sum = 0;
		for (size_t i = 0; i < ds->n; i++)
			sum += v[i];
		double mean = (double)(sum / ds->n);
		CHECK(fabs(hist_mean(&h) - mean) <= 1e-12 * mean + 1e-9, "%s: mean %f want %f",
		      ds->name, hist_mean(&h), mean);
		long double ss = 0;
		for (size_t i = 0; i < ds->n; i++)
			ss += ((long double)v[i] - mean) * ((long double)v[i] - mean);
		double sd = sqrt((double)(ss / ds->n));
		CHECK(fabs(hist_stddev(&h) - sd) <= 1e-3 * sd + 1.0, "%s: stddev %f want %f",
		      ds->name, hist_stddev(&h), sd);
		hist_free(&h);
		free(v);
	}
}

/* Percentile ranks: ceil(p/100*total) with p values that binary cannot hold. */
static void test_percentile_ranks(void **state)
{
	(void)state;
	struct hist h;
	assert_int_equal(hist_init(&h, HIST_SUB_BITS, HIST_MAX_NS), 0);
	for (uint64_t i = 1; i <= 1000; i++)
		hist_record(&h, i); /* exact region: the value is its own rank */
	static const struct {
		double p;
		uint64_t want;
	} t[] = {{0, 1},      {0.0001, 1},  {0.1, 1},   {0.1001, 2}, {10, 100}, {33.3, 333},
		 {50, 500},   {99, 990},    {99.9, 999}, {99.91, 1000}, {100, 1000},
		 {-5, 1},     {150, 1000},  {NAN, 1}};
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		CHECK(hist_percentile(&h, t[i].p) == t[i].want, "p%g: %" PRIu64 " want %" PRIu64,
		      t[i].p, hist_percentile(&h, t[i].p), t[i].want);
	hist_free(&h);
}

/* p100 and high percentiles are clamped to the exact max, never above it. */
static void test_percentile_clamped_to_max(void **state)
{
	(void)state;
	struct hist h;
	assert_int_equal(hist_init(&h, HIST_SUB_BITS, HIST_MAX_NS), 0);
	hist_record(&h, 1000001); /* bucket [999936, 1000447]: high > value */
	assert_true(hist_bucket_high(&h, hist_index(&h, 1000001)) > 1000001);
	assert_int_equal(hist_percentile(&h, 50), 1000001);
	assert_int_equal(hist_percentile(&h, 99.999), 1000001);
	hist_record(&h, 1000000);
	assert_int_equal(hist_percentile(&h, 0), 1000000);
	assert_int_equal(hist_percentile(&h, 50), 1000001); /* same bucket, clamped */
	hist_free(&h);
}

/* Stddev is exact in the linear range and takes log buckets at midpoints. */
static void test_stddev_table(void **state)
{
	(void)state;
	static const struct {
		uint64_t a, b; /* recorded twice each */
		double want, tol;
	} t[] = {
		{100, 300, 100.0, 1e-9},
		{7, 7, 0.0, 0.0},
		/* buckets [2^20, 2^20+1023] and [2^21, 2^21+2047], the latter cut
		 * at max = 2^21: taken at 2^20+511.5 and 2^21 around the exact
		 * mean 1.5*2^20, where the exact stddev would be 2^19 = 524288 */
		{1u << 20, 1u << 21, 524032.3124, 0.001},
	};
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		struct hist h;
		assert_int_equal(hist_init(&h, HIST_SUB_BITS, HIST_MAX_NS), 0);
		hist_record_n(&h, t[i].a, 2);
		hist_record_n(&h, t[i].b, 2);
		CHECK(fabs(hist_stddev(&h) - t[i].want) <= t[i].tol, "case %zu: stddev %f want %f",
		      i, hist_stddev(&h), t[i].want);
		CHECK(hist_mean(&h) == ((double)t[i].a + (double)t[i].b) / 2, "case %zu: mean", i);
		hist_free(&h);
	}
}

static void test_empty(void **state)
{
	(void)state;
	struct hist h;
	assert_int_equal(hist_init(&h, HIST_SUB_BITS, HIST_MAX_NS), 0);
	static const double ps[] = {0, 50, 99.99, 100};
	for (size_t i = 0; i < 4; i++)
		assert_int_equal(hist_percentile(&h, ps[i]), 0);
	assert_true(hist_mean(&h) == 0.0);
	assert_true(hist_stddev(&h) == 0.0);
	size_t cur = 0;
	uint64_t lo = 7, c = 7;
	assert_false(hist_next_nonzero(&h, &cur, &lo, &c));
	struct hist_pct_row rows[4];
	assert_int_equal(hist_spectrum(&h, 5, rows, 4), 0);
	assert_int_equal(hist_spectrum(&h, 5, NULL, 0), 0);
	hist_record_n(&h, 5, 0); /* count 0: still empty */
	assert_int_equal(h.total, 0);
	assert_int_equal(h.min, UINT64_MAX);
	hist_free(&h);
}

static void test_record_n_and_reset(void **state)
{
	(void)state;
	struct hist a, b;
	assert_int_equal(hist_init(&a, HIST_SUB_BITS, HIST_MAX_NS), 0);
	assert_int_equal(hist_init(&b, HIST_SUB_BITS, HIST_MAX_NS), 0);
	static const uint64_t vals[] = {3, 2048, 123456789, 5000000000ull};
	for (size_t i = 0; i < 4; i++) {
		hist_record_n(&a, vals[i], i + 1);
		for (size_t j = 0; j <= i; j++)
			hist_record(&b, vals[i]);
	}
	assert_memory_equal(a.counts, b.counts, a.counts_len * sizeof(uint64_t));
	assert_int_equal(a.total, 10);
	assert_true(a.sum == b.sum);
	assert_int_equal(a.min, 3);
	assert_int_equal(a.max, 5000000000ull);
	hist_reset(&a);
	assert_int_equal(a.total, 0);
	assert_int_equal(a.min, UINT64_MAX);
	assert_int_equal(a.max, 0);
	assert_true(a.sum == 0);
	for (size_t i = 0; i < a.counts_len; i++)
		assert_int_equal(a.counts[i], 0);
	assert_int_equal(a.counts_len, 33793); /* layout kept */
	hist_record(&a, 42);
	assert_int_equal(hist_percentile(&a, 50), 42);
	hist_free(&a);
	hist_free(&b);
}

static void test_clamp_above_max(void **state)
{
	(void)state;
	struct hist h;
	assert_int_equal(hist_init(&h, HIST_SUB_BITS, HIST_MAX_NS), 0);
	hist_record(&h, 10);
	hist_record(&h, HIST_MAX_NS); /* exactly max: not clamped */
	assert_int_equal(h.clamped, 0);
	hist_record(&h, HIST_MAX_NS + 1);
	hist_record(&h, UINT64_MAX);
	hist_record_n(&h, HIST_MAX_NS * 3, 3);
	assert_int_equal(h.clamped, 5);
	assert_int_equal(h.total, 7);
	assert_int_equal(h.max, HIST_MAX_NS);
	assert_int_equal(h.counts[h.counts_len - 1], 6);
	assert_int_equal(hist_percentile(&h, 100), HIST_MAX_NS);
	assert_int_equal(hist_percentile(&h, 50), HIST_MAX_NS);
	assert_int_equal(hist_index(&h, UINT64_MAX), h.counts_len - 1);
	CHECK(fabs(hist_mean(&h) - (10.0 + 6.0 * (double)HIST_MAX_NS) / 7.0) < 1.0,
	      "mean %f", hist_mean(&h));

	/* A small custom layout clamps the same way. */
	struct hist s;
	assert_int_equal(hist_init(&s, 3, 100), 0);
	hist_record(&s, 101);
	hist_record(&s, 100);
	assert_int_equal(s.clamped, 1);
	assert_int_equal(hist_percentile(&s, 100), 100);
	assert_int_equal(s.counts[hist_index(&s, 100)], 2);
	hist_free(&s);
	hist_free(&h);
}

/* ---- merge ------------------------------------------------------------- */

static void test_merge_equals_union(void **state)
{
	(void)state;
	for (size_t d = 0; d < NDISTS; d++) {
		const struct dist *ds = &dists[d];
		uint64_t *v = make_data(ds);
		struct hist all, a, b;
		fill(&all, v, ds->n);
		hist_record(&all, HIST_MAX_NS + 9); /* a clamped value travels too */
		assert_int_equal(hist_init(&a, HIST_SUB_BITS, HIST_MAX_NS), 0);
		assert_int_equal(hist_init(&b, HIST_SUB_BITS, HIST_MAX_NS), 0);
		uint64_t s = 99 + d;
		for (size_t i = 0; i < ds->n; i++)
			hist_record(rng_next(&s) & 1 ? &a : &b, v[i]);
		hist_record(&b, HIST_MAX_NS + 9);
		assert_int_equal(hist_merge(&a, &b), 0);
		assert_memory_equal(a.counts, all.counts, all.counts_len * sizeof(uint64_t));
		assert_int_equal(a.total, all.total);
		assert_int_equal(a.min, all.min);
		assert_int_equal(a.max, all.max);
		assert_int_equal(a.clamped, 1);
		assert_true(a.sum == all.sum);
		assert_int_equal(hist_percentile(&a, 99.9), hist_percentile(&all, 99.9));
		/* merging an empty histogram changes nothing */
		hist_reset(&b);
		assert_int_equal(hist_merge(&a, &b), 0);
		assert_int_equal(a.total, all.total);
		assert_int_equal(a.min, all.min);
		/* merging into an empty one copies */
		assert_int_equal(hist_merge(&b, &all), 0);
		assert_memory_equal(b.counts, all.counts, all.counts_len * sizeof(uint64_t));
		assert_int_equal(b.min, all.min);
		assert_int_equal(b.max, all.max);
		hist_free(&all);
		hist_free(&a);
		hist_free(&b);
		free(v);
	}
}

/* Subtracting a subset gives the histogram of the rest: counts exactly,
 * percentiles equal, min and max exact where the subset did not hold them
 * and within their bucket where it did; a subset that is not one is
 * refused and changes nothing. */
static void test_subtract_subset(void **state)
{
	(void)state;
	for (size_t d = 0; d < NDISTS; d++) {
		const struct dist *ds = &dists[d];
		uint64_t *v = make_data(ds);
		struct hist all, part, rest;
		fill(&all, v, ds->n);
		assert_int_equal(hist_init(&part, HIST_SUB_BITS, HIST_MAX_NS), 0);
		assert_int_equal(hist_init(&rest, HIST_SUB_BITS, HIST_MAX_NS), 0);
		uint64_t s = 7 + d;
		for (size_t i = 0; i < ds->n; i++)
			hist_record(rng_next(&s) % 4 == 0 ? &part : &rest, v[i]);
		assert_int_equal(hist_subtract(&all, &part), 0);
		assert_memory_equal(all.counts, rest.counts, rest.counts_len * sizeof(uint64_t));
		assert_int_equal(all.total, rest.total);
		assert_int_equal(hist_percentile(&all, 50), hist_percentile(&rest, 50));
		assert_int_equal(hist_percentile(&all, 99), hist_percentile(&rest, 99));
		assert_true(all.min <= rest.min &&
			    hist_index(&all, all.min) == hist_index(&all, rest.min));
		assert_true(all.max >= rest.max &&
			    hist_index(&all, all.max) == hist_index(&all, rest.max));
		assert_true(fabs((double)(all.sum - rest.sum)) <= 1e-6 * (double)rest.sum + 1);
		/* the rest is no subset of the part: refused, nothing changed */
		hist_record(&rest, 1);
		uint64_t before = part.total;
		assert_int_equal(hist_subtract(&part, &rest), PACER_ERANGE);
		assert_int_equal(part.total, before);
		/* everything taken out: empty */
		struct hist copy;
		assert_int_equal(hist_init(&copy, HIST_SUB_BITS, HIST_MAX_NS), 0);
		assert_int_equal(hist_merge(&copy, &part), 0);
		assert_int_equal(hist_subtract(&copy, &part), 0);
		assert_int_equal(copy.total, 0);
		assert_int_equal(hist_percentile(&copy, 99), 0);
		hist_free(&copy);
		hist_free(&all);
		hist_free(&part);
		hist_free(&rest);
		free(v);
	}
	struct hist a, b;
	assert_int_equal(hist_init(&a, HIST_SUB_BITS, HIST_MAX_NS), 0);
	assert_int_equal(hist_init(&b, 7, HIST_MAX_NS), 0);
	assert_int_equal(hist_subtract(&a, &b), PACER_ELAYOUT);
	hist_free(&a);
	hist_free(&b);
}

/* hist_move equals hist_merge into each target then hist_reset, and the
 * coarse copy equals recording the same values at fewer sub_bits (its
 * buckets are unions of the source's); src is empty and usable after, and
 * a target of another layout changes nothing. */
static void test_move_equals_merge_and_reset(void **state)
{
	(void)state;
	struct hist src, a, b, ref_a, ref_b, coarse, ref_coarse, bad;
	assert_int_equal(hist_init(&src, HIST_SUB_BITS, HIST_MAX_NS), 0);
	assert_int_equal(hist_init(&a, HIST_SUB_BITS, HIST_MAX_NS), 0);
	assert_int_equal(hist_init(&b, HIST_SUB_BITS, HIST_MAX_NS), 0);
	assert_int_equal(hist_init(&ref_a, HIST_SUB_BITS, HIST_MAX_NS), 0);
	assert_int_equal(hist_init(&ref_b, HIST_SUB_BITS, HIST_MAX_NS), 0);
	assert_int_equal(hist_init(&coarse, 7, HIST_MAX_NS), 0);
	assert_int_equal(hist_init(&ref_coarse, 7, HIST_MAX_NS), 0);
	assert_int_equal(hist_init(&bad, 10, HIST_MAX_NS), 0);
	uint64_t seed = 42;
	hist_record(&a, 5); /* targets that already hold something */
	hist_record(&ref_a, 5);
	hist_record(&b, HIST_MAX_NS);
	hist_record(&ref_b, HIST_MAX_NS);
	for (int round = 0; round < 3; round++) {
		for (int i = 0; i < 5000; i++) {
			uint64_t v = 20000 + rng_next(&seed) % (round == 1 ? 50000000 : 400000);
			if (i == 7 && round == 2)
				v = HIST_MAX_NS + 99; /* clamped */
			hist_record(&src, v);
			hist_record(&ref_coarse, v > HIST_MAX_NS ? HIST_MAX_NS : v);
		}
		struct hist *to[] = {&a, &b}, *wrong[] = {&a, &bad};
		struct hist copy_total = {.total = src.total};
		assert_int_equal(hist_move(&src, wrong, 2, &coarse), PACER_ELAYOUT);
		assert_int_equal(src.total, copy_total.total);
		assert_int_equal(hist_merge(&ref_a, &src), 0);
		assert_int_equal(hist_merge(&ref_b, &src), 0);
		assert_int_equal(hist_move(&src, to, 2, &coarse), 0);
		assert_int_equal(src.total, 0);
		assert_int_equal(src.min, UINT64_MAX);
		assert_int_equal(src.max, 0);
		for (size_t i = 0; i < src.counts_len; i++)
			assert_int_equal(src.counts[i], 0);
	}
	const struct hist *pairs[][2] = {{&a, &ref_a}, {&b, &ref_b}};
	for (int k = 0; k < 2; k++) {
		const struct hist *x = pairs[k][0], *y = pairs[k][1];
		assert_int_equal(x->total, y->total);
		assert_int_equal(x->min, y->min);
		assert_int_equal(x->max, y->max);
		assert_int_equal(x->clamped, y->clamped);
		assert_true(x->sum == y->sum);
		assert_memory_equal(x->counts, y->counts, x->counts_len * sizeof *x->counts);
	}
	assert_int_equal(a.clamped, 1);
	assert_int_equal(coarse.total, ref_coarse.total);
	assert_int_equal(coarse.min, ref_coarse.min);
	assert_int_equal(coarse.max, ref_coarse.max);
	assert_true(coarse.sum == ref_coarse.sum);
	assert_memory_equal(coarse.counts, ref_coarse.counts,
			    coarse.counts_len * sizeof *coarse.counts);
	/* an empty source moves nothing, a zeroed one is refused */
	struct hist *to1[] = {&a};
	assert_int_equal(hist_move(&src, to1, 1, NULL), 0);
	assert_int_equal(a.total, ref_a.total);
	struct hist zero = {0};
	assert_int_equal(hist_move(&zero, to1, 1, NULL), PACER_ELAYOUT);
	hist_record(&src, 1000);
	assert_int_equal(hist_move(&src, to1, 1, &bad), 0); /* 10 sub_bits: coarser, fits */
	hist_record(&src, 1000);
	assert_int_equal(hist_move(&src, NULL, 0, &a), 0);
	struct hist finer;
	assert_int_equal(hist_init(&finer, HIST_SUB_BITS + 1, HIST_MAX_NS), 0);
	hist_record(&src, 1000);
	assert_int_equal(hist_move(&src, to1, 1, &finer), PACER_ELAYOUT);
	assert_int_equal(src.total, 1);
	hist_free(&finer);
	struct hist *h[] = {&src, &a, &b, &ref_a, &ref_b, &coarse, &ref_coarse, &bad};
	for (size_t i = 0; i < sizeof h / sizeof h[0]; i++)
		hist_free(h[i]);
}

static void test_merge_rejects_other_layout(void **state)
{
	(void)state;
	static const struct {
		uint32_t sub_bits;
		uint64_t max;
	} other[] = {{10, HIST_MAX_NS}, {12, HIST_MAX_NS}, {HIST_SUB_BITS, HIST_MAX_NS - 1},
		     {HIST_SUB_BITS, HIST_MAX_NS * 2}};
	struct hist dst;
	assert_int_equal(hist_init(&dst, HIST_SUB_BITS, HIST_MAX_NS), 0);
	hist_record(&dst, 777);
	for (size_t i = 0; i < sizeof(other) / sizeof(other[0]); i++) {
		struct hist src;
		assert_int_equal(hist_init(&src, other[i].sub_bits, other[i].max), 0);
		hist_record(&src, 5);
		assert_int_equal(hist_merge(&dst, &src), PACER_ELAYOUT);
		assert_int_equal(hist_merge(&src, &dst), PACER_ELAYOUT);
		assert_int_equal(dst.total, 1);
		assert_int_equal(dst.min, 777);
		assert_int_equal(src.total, 1);
		hist_free(&src);
	}
	struct hist zero = {0};
	assert_int_equal(hist_merge(&dst, &zero), PACER_ELAYOUT);
	assert_int_equal(dst.total, 1);
	hist_free(&dst);
}

/* ---- pairs round trip ---------------------------------------------------- */

static void test_pairs_round_trip(void **state)
{
	(void)state;
	for (size_t d = 0; d < NDISTS; d++) {
		const struct dist *ds = &dists[d];
		uint64_t *v = make_data(ds);
		struct hist h, back;
		fill(&h, v, ds->n);
		uint64_t(*pairs)[2] = malloc(h.counts_len * sizeof(*pairs));
		assert_non_null(pairs);
		size_t n = 0, cur = 0;
		uint64_t lo, c, prev_lo = 0;
		while (hist_next_nonzero(&h, &cur, &lo, &c)) {
			assert_true(c > 0);
			assert_true(n == 0 || lo > prev_lo);
			prev_lo = lo;
			pairs[n][0] = lo;
			pairs[n][1] = c;
			n++;
		}
		assert_false(hist_next_nonzero(&h, &cur, &lo, &c)); /* stays done */
		assert_int_equal(hist_init(&back, HIST_SUB_BITS, HIST_MAX_NS), 0);
		assert_int_equal(hist_from_pairs(&back, (const uint64_t(*)[2])pairs, n), 0);
		assert_memory_equal(back.counts, h.counts, h.counts_len * sizeof(uint64_t));
		assert_int_equal(back.total, h.total);
		for (size_t i = 0; i < sizeof(levels_ppm) / sizeof(levels_ppm[0]); i++) {
			double p = (double)levels_ppm[i] / 1e4;
			if (p > 0 && p < 100) /* min/max are bucket lows after the trip */
				assert_int_equal(hist_index(&h, hist_percentile(&back, p)),
						 hist_index(&h, hist_percentile(&h, p)));
		}
		hist_free(&back);
		hist_free(&h);
		free(pairs);
		free(v);
	}
}

static void test_from_pairs_errors(void **state)
{
	(void)state;
	struct hist h;
	assert_int_equal(hist_init(&h, HIST_SUB_BITS, 1000000), 0);
	const uint64_t too_big[][2] = {{5, 1}, {1000000, 2}, {1000001, 1}};
	assert_int_equal(hist_from_pairs(&h, too_big, 3), PACER_ERANGE);
	assert_int_equal(h.total, 0); /* all or nothing */
	const uint64_t zero_count_big[][2] = {{5, 1}, {UINT64_MAX, 0}};
	assert_int_equal(hist_from_pairs(&h, zero_count_big, 2), PACER_ERANGE);
	assert_int_equal(h.total, 0);
	const uint64_t overflow[][2] = {{5, UINT64_MAX}, {6, 1}};
	assert_int_equal(hist_from_pairs(&h, overflow, 2), PACER_ERANGE);
	assert_int_equal(h.total, 0);
	assert_int_equal(hist_from_pairs(&h, NULL, 1), -EINVAL);
	assert_int_equal(hist_from_pairs(&h, NULL, 0), 0);
	const uint64_t ok[][2] = {{5, 3}, {1000000, 2}, {7, 0}};
	assert_int_equal(hist_from_pairs(&h, ok, 3), 0);
	assert_int_equal(h.total, 5);
	assert_int_equal(h.min, 5);
	assert_int_equal(h.max, 1000000);
	struct hist z = {0};
	assert_int_equal(hist_from_pairs(&z, ok, 3), -EINVAL);
	hist_free(&h);
}

/* ---- spectrum ----------------------------------------------------------- */

/* Hand-worked HdrHistogram iteration of {1,2,3,4}, 5 ticks per half distance:
 * levels 0,10,20 at value 1 (25 %), 30..50 at 2, 55..75 at 3 (tick 5 after
 * 50 %), 77.5 at 4 (tick 2.5 after 75 %), then the 100 % row. */
static void test_spectrum_small_exact(void **state)
{
	(void)state;
	static const struct hist_pct_row want[] = {
		{1, 0.00, 1},  {1, 0.10, 1},  {1, 0.20, 1},  {2, 0.30, 2},  {2, 0.40, 2},
		{2, 0.50, 2},  {3, 0.55, 3},  {3, 0.60, 3},  {3, 0.65, 3},  {3, 0.70, 3},
		{3, 0.75, 3},  {4, 0.775, 4}, {4, 1.00, 4},
	};
	const size_t nwant = sizeof(want) / sizeof(want[0]);
	struct hist h;
	assert_int_equal(hist_init(&h, HIST_SUB_BITS, HIST_MAX_NS), 0);
	for (uint64_t v = 1; v <= 4; v++)
		hist_record(&h, v);
	struct hist_pct_row rows[32];
	assert_int_equal(hist_spectrum(&h, 5, NULL, 0), nwant);
	assert_int_equal(hist_spectrum(&h, 0, NULL, 0), nwant); /* 0 means 5 */
	assert_int_equal(hist_spectrum(&h, 5, rows, 32), nwant);
	for (size_t i = 0; i < nwant; i++) {
		CHECK(rows[i].value == want[i].value && rows[i].total_count == want[i].total_count &&
			      fabs(rows[i].percentile - want[i].percentile) < 1e-12,
		      "row %zu: (%" PRIu64 ", %g, %" PRIu64 ")", i, rows[i].value,
		      rows[i].percentile, rows[i].total_count);
	}
	/* truncated: the first rows, then still the 100 % row */
	struct hist_pct_row few[5];
	assert_int_equal(hist_spectrum(&h, 5, few, 5), 5);
	for (size_t i = 0; i < 4; i++)
		assert_true(few[i].percentile == rows[i].percentile);
	assert_true(few[4].percentile == 1.0);
	assert_int_equal(few[4].total_count, 4);
	assert_int_equal(hist_spectrum(&h, 5, few, 1), 1);
	assert_true(few[0].percentile == 1.0);
	assert_int_equal(hist_spectrum(&h, 5, few, 0), 0);
	/* one tick per half distance: levels 0, 50, 75, 87.5, then 100 % */
	assert_int_equal(hist_spectrum(&h, 1, rows, 32), 5);
	assert_true(rows[1].percentile == 0.5 && rows[1].value == 2);
	assert_true(rows[2].percentile == 0.75 && rows[2].value == 3);
	assert_true(rows[3].percentile == 0.875 && rows[3].value == 4);
	assert_true(rows[4].percentile == 1.0 && rows[4].value == 4);
	hist_free(&h);
}

static void test_spectrum_monotone(void **state)
{
	(void)state;
	for (size_t d = 0; d < NDISTS; d++) {
		const struct dist *ds = &dists[d];
		uint64_t *v = make_data(ds);
		struct hist h;
		fill(&h, v, ds->n);
		static const uint32_t ticks[] = {1, 5, 20};
		for (size_t t = 0; t < 3; t++) {
			size_t n = hist_spectrum(&h, ticks[t], NULL, 0);
			assert_true(n >= 2);
			struct hist_pct_row *rows = calloc(n, sizeof(*rows));
			assert_non_null(rows);
			assert_int_equal(hist_spectrum(&h, ticks[t], rows, n), n);
			assert_true(rows[0].percentile == 0.0);
			assert_int_equal(rows[0].value, hist_bucket_high(&h, hist_index(&h, h.min)));
			for (size_t i = 1; i < n; i++) {
				CHECK(rows[i].percentile > rows[i - 1].percentile,
				      "%s ticks %u row %zu: percentile not increasing", ds->name,
				      ticks[t], i);
				assert_true(rows[i].value >= rows[i - 1].value);
				assert_true(rows[i].total_count >= rows[i - 1].total_count);
			}
			for (size_t i = 0; i + 1 < n; i++) {
				/* each level was reached by the count at its value */
				assert_true((double)rows[i].total_count / (double)h.total >=
					    rows[i].percentile - 1e-12);
				assert_true(rows[i].percentile < 1.0);
			}
			assert_true(rows[n - 1].percentile == 1.0);
			assert_int_equal(rows[n - 1].total_count, h.total);
			assert_int_equal(rows[n - 1].value,
					 hist_bucket_high(&h, hist_index(&h, h.max)));
			free(rows);
		}
		hist_free(&h);
		free(v);
	}
}

/* ---- hgrm ---------------------------------------------------------------- */

static char *hgrm_of(const struct hist *h, double scale, int *rc)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_non_null(f);
	*rc = hist_write_hgrm(f, h, scale);
	assert_int_equal(fclose(f), 0);
	return buf;
}

static void test_hgrm_exact_text(void **state)
{
	(void)state;
	struct hist h;
	assert_int_equal(hist_init(&h, HIST_SUB_BITS, HIST_MAX_NS), 0);
	for (uint64_t v = 1; v <= 4; v++)
		hist_record(&h, v * 1000); /* 1..4 us; 3000 and 4000 are in 2-ns buckets */
	int rc;
	char *out = hgrm_of(&h, 1e3, &rc);
	assert_int_equal(rc, 0);
	const char *want =
		"       Value     Percentile TotalCount 1/(1-Percentile)\n"
		"\n"
		"       1.000 0.000000000000          1           1.00\n"
		"       1.000 0.100000000000          1           1.11\n"
		"       1.000 0.200000000000          1           1.25\n"
		"       2.000 0.300000000000          2           1.43\n"
		"       2.000 0.400000000000          2           1.67\n"
		"       2.000 0.500000000000          2           2.00\n"
		"       3.001 0.550000000000          3           2.22\n"
		"       3.001 0.600000000000          3           2.50\n"
		"       3.001 0.650000000000          3           2.86\n"
		"       3.001 0.700000000000          3           3.33\n"
		"       3.001 0.750000000000          3           4.00\n"
		"       4.001 0.775000000000          4           4.44\n"
		"       4.001 1.000000000000          4\n"
		/* rows show bucket highest-equivalent values as HdrHistogram does;
		 * Mean and Max are exact */
		"#[Mean    =        2.500, StdDeviation   =        1.118]\n"
		"#[Max     =        4.000, Total count    =            4]\n"
		"#[Buckets =           33, SubBuckets     =         2048]\n";
	assert_string_equal(out, want);
	free(out);

	/* empty: header and a zero footer */
	hist_reset(&h);
	out = hgrm_of(&h, 1e6, &rc);
	assert_int_equal(rc, 0);
	assert_string_equal(out, "       Value     Percentile TotalCount 1/(1-Percentile)\n"
				 "\n"
				 "#[Mean    =        0.000, StdDeviation   =        0.000]\n"
				 "#[Max     =        0.000, Total count    =            0]\n"
				 "#[Buckets =           33, SubBuckets     =         2048]\n");
	free(out);
	hist_free(&h);
}

/* Read the rows back: every row but the last has 4 columns, the last has 3
 * and its TotalCount is the total; values match the spectrum. */
static void test_hgrm_parses_back(void **state)
{
	(void)state;
	for (size_t d = 0; d < NDISTS; d++) {
		const struct dist *ds = &dists[d];
		uint64_t *v = make_data(ds);
		struct hist h;
		fill(&h, v, ds->n);
		size_t n = hist_spectrum(&h, 5, NULL, 0);
		struct hist_pct_row *rows = calloc(n, sizeof(*rows));
		assert_non_null(rows);
		assert_int_equal(hist_spectrum(&h, 5, rows, n), n);
		int rc;
		char *out = hgrm_of(&h, 1e6, &rc); /* milliseconds */
		assert_int_equal(rc, 0);

		char *save = NULL;
		char *line = strtok_r(out, "\n", &save);
		assert_non_null(line);
		assert_string_equal(line, "       Value     Percentile TotalCount 1/(1-Percentile)");
		size_t got = 0;
		uint64_t last_total = 0;
		int last_fields = 0;
		while ((line = strtok_r(NULL, "\n", &save)) && strncmp(line, "#[", 2) != 0) {
			double val, pct, inv;
			uint64_t tc;
			int k = sscanf(line, "%lf %lf %" SCNu64 " %lf", &val, &pct, &tc, &inv);
			assert_true(k == 3 || k == 4);
			assert_true(got < n);
			CHECK(fabs(val - (double)rows[got].value / 1e6) <= 0.0005 + 1e-9,
			      "%s row %zu value %f", ds->name, got, val);
			assert_true(fabs(pct - rows[got].percentile) < 1e-12);
			assert_int_equal(tc, rows[got].total_count);
			if (k == 4)
				assert_true(fabs(inv - 1.0 / (1.0 - pct)) <= 0.005 + 1e-6 * inv);
			last_fields = k;
			last_total = tc;
			got++;
			if (got < n)
				assert_int_equal(k, 4);
		}
		assert_int_equal(got, n);
		assert_int_equal(last_fields, 3);
		assert_int_equal(last_total, h.total);
		double mean, sd, max;
		uint64_t total;
		int buckets, subs;
		assert_non_null(line);
		assert_int_equal(sscanf(line, "#[Mean    = %lf, StdDeviation   = %lf]", &mean, &sd),
				 2);
		assert_true(fabs(mean - hist_mean(&h) / 1e6) <= 0.0005 + 1e-9);
		line = strtok_r(NULL, "\n", &save);
		assert_non_null(line);
		assert_int_equal(
			sscanf(line, "#[Max     = %lf, Total count    = %" SCNu64 "]", &max, &total), 2);
		assert_true(fabs(max - (double)h.max / 1e6) <= 0.0005 + 1e-9);
		assert_int_equal(total, h.total);
		line = strtok_r(NULL, "\n", &save);
		assert_non_null(line);
		assert_int_equal(
			sscanf(line, "#[Buckets = %d, SubBuckets     = %d]", &buckets, &subs), 2);
		assert_int_equal(buckets, 33);
		assert_int_equal(subs, 2048);
		assert_null(strtok_r(NULL, "\n", &save));
		free(out);
		free(rows);
		hist_free(&h);
		free(v);
	}
}

static void test_hgrm_layout_digits_and_errors(void **state)
{
	(void)state;
	/* sub_bits 8 ~ 2 significant digits in HdrHistogram terms */
	struct hist h;
	assert_int_equal(hist_init(&h, 8, 1000000), 0);
	hist_record(&h, 1500);
	int rc;
	char *out = hgrm_of(&h, 1e3, &rc);
	assert_int_equal(rc, 0);
	/* 1500 → bucket [1496, 1503] (width 8 above 1024) */
	assert_non_null(strstr(out, "\n        1.50 0.000000000000          1           1.00\n"));
	assert_non_null(strstr(out, "\n        1.50 1.000000000000          1\n"));
	assert_non_null(strstr(out, "#[Buckets =           13, SubBuckets     =          256]\n"));
	free(out);

	assert_int_equal(hist_write_hgrm(NULL, &h, 1.0), -EINVAL);
	FILE *f = fopen("/dev/null", "w");
	assert_non_null(f);
	assert_int_equal(hist_write_hgrm(f, &h, 0.0), -EINVAL);
	assert_int_equal(hist_write_hgrm(f, &h, NAN), -EINVAL);
	struct hist z = {0};
	assert_int_equal(hist_write_hgrm(f, &z, 1.0), -EINVAL);
	fclose(f);
	f = fopen("/dev/full", "w");
	if (f) { /* writes fail with ENOSPC once flushed */
		assert_int_equal(hist_write_hgrm(f, &h, 1.0), -ENOSPC);
		fclose(f);
	}
	hist_free(&h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_default_layout),
		cmocka_unit_test(test_init_rejects_bad_layout),
		cmocka_unit_test(test_index_table),
		cmocka_unit_test(test_bucket_edges),
		cmocka_unit_test(test_buckets_contiguous),
		cmocka_unit_test(test_percentiles_vs_exact),
		cmocka_unit_test(test_percentile_ranks),
		cmocka_unit_test(test_percentile_clamped_to_max),
		cmocka_unit_test(test_stddev_table),
		cmocka_unit_test(test_empty),
		cmocka_unit_test(test_record_n_and_reset),
		cmocka_unit_test(test_clamp_above_max),
		cmocka_unit_test(test_merge_equals_union),
		cmocka_unit_test(test_merge_rejects_other_layout),
		cmocka_unit_test(test_move_equals_merge_and_reset),
		cmocka_unit_test(test_subtract_subset),
		cmocka_unit_test(test_pairs_round_trip),
		cmocka_unit_test(test_from_pairs_errors),
		cmocka_unit_test(test_spectrum_small_exact),
		cmocka_unit_test(test_spectrum_monotone),
		cmocka_unit_test(test_hgrm_exact_text),
		cmocka_unit_test(test_hgrm_parses_back),
		cmocka_unit_test(test_hgrm_layout_digits_and_errors),
	};
	return cmocka_run_group_tests_name("stats/hist", tests, NULL, NULL);
}
