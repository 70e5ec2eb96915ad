/* pacer — log-linear histogram (see hist.h for the layout).
 *
 * Index arithmetic.  Let half = 2^(sub_bits-1) and, for a value v,
 *
 *     b = max(0, floor(log2 v) - sub_bits + 1)      (the bucket's shift)
 *
 * Then index(v) = b * half + (v >> b).  For v < 2^sub_bits, b = 0 and the
 * index is v itself (exact).  For v in [2^k, 2^(k+1)) with k >= sub_bits,
 * b = k - sub_bits + 1 >= 1 and v >> b lies in [half, 2*half), so the range
 * is split into `half` sub-buckets of width 2^b, stored contiguously after
 * the linear part.  b is computed without a branch: or-ing the low sub_bits
 * bits into v does not move a top bit at or above sub_bits, and lifts any
 * smaller value to exactly sub_bits-1. */
#include "stats/hist.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/err.h"

static inline uint32_t shift_of(uint32_t sub_bits, uint64_t value)
{
	uint64_t low_mask = (1ull << sub_bits) - 1;
	return (uint32_t)(63 - __builtin_clzll(value | low_mask)) - (sub_bits - 1);
}

static inline size_t index_of(uint32_t sub_bits, uint64_t value)
{
	uint32_t b = shift_of(sub_bits, value);
	return ((size_t)b << (sub_bits - 1)) + (size_t)(value >> b);
}

static void clear_stats(struct hist *h)
{
	h->total = 0;
	h->min = UINT64_MAX;
	h->max = 0;
	h->clamped = 0;
	h->sum = 0;
}

int hist_init(struct hist *h, uint32_t sub_bits, uint64_t max_value)
{
	if (!h)
		return -EINVAL;
	memset(h, 0, sizeof(*h));
	if (sub_bits < 2 || sub_bits > 20 || max_value == 0)
		return -EINVAL;
	size_t len = index_of(sub_bits, max_value) + 1;
	uint64_t *counts = calloc(len, sizeof(*counts));
	if (!counts)
		return -ENOMEM;
	h->sub_bits = sub_bits;
	h->max_value = max_value;
	h->counts_len = len;
	h->counts = counts;
	clear_stats(h);
	return 0;
}

void hist_free(struct hist *h)
{
	if (!h)
		return;
	free(h->counts);
	memset(h, 0, sizeof(*h));
}

void hist_reset(struct hist *h)
{
	/* An empty histogram is already zero: leaving its pages untouched keeps
	 * never-used histograms (e.g. server_time) out of the resident set. */
	if (h->counts && h->total)
		memset(h->counts, 0, h->counts_len * sizeof(*h->counts));
	clear_stats(h);
}

void hist_record(struct hist *h, uint64_t value)
{
	if (__builtin_expect(value > h->max_value, 0)) {
		value = h->max_value;
		h->clamped++;
	}
	h->counts[index_of(h->sub_bits, value)]++;
	h->total++;
	if (value < h->min)
		h->min = value;
	if (value > h->max)
		h->max = value;
	h->sum += (long double)value;
}

void hist_record_n(struct hist *h, uint64_t value, uint64_t count)
{
	if (count == 0)
		return;
	if (__builtin_expect(value > h->max_value, 0)) {
		value = h->max_value;
		h->clamped += count;
	}
	h->counts[index_of(h->sub_bits, value)] += count;
	h->total += count;
	if (value < h->min)
		h->min = value;
	if (value > h->max)
		h->max = value;
	h->sum += (long double)value * (long double)count;
}

int hist_merge(struct hist *dst, const struct hist *src)
{
	if (!dst || !src || !dst->counts || !src->counts || dst->sub_bits != src->sub_bits ||
	    dst->max_value != src->max_value || dst->counts_len != src->counts_len)
		return PACER_ELAYOUT;
	if (src->total == 0)
		return 0;
	for (size_t i = 0; i < src->counts_len; i++)
		dst->counts[i] += src->counts[i];
	dst->total += src->total;
	dst->clamped += src->clamped;
	dst->sum += src->sum;
	if (src->min < dst->min)
		dst->min = src->min;
	if (src->max > dst->max)
		dst->max = src->max;
	return 0;
}

int hist_move(struct hist *src, struct hist *const *dst, size_t n_dst, struct hist *coarse)
{
	if (!src || !src->counts ||
	    (coarse && (!coarse->counts || coarse->sub_bits > src->sub_bits ||
			coarse->max_value != src->max_value)))
		return PACER_ELAYOUT;
	for (size_t k = 0; k < n_dst; k++)
		if (!dst[k] || !dst[k]->counts || dst[k]->sub_bits != src->sub_bits ||
		    dst[k]->max_value != src->max_value || dst[k]->counts_len != src->counts_len)
			return PACER_ELAYOUT;
	if (src->total == 0)
		return 0;
	size_t lo = index_of(src->sub_bits, src->min), hi = index_of(src->sub_bits, src->max);
	for (size_t i = lo; i <= hi; i++) {
		uint64_t c = src->counts[i];
		if (!c)
			continue;
		src->counts[i] = 0;
		for (size_t k = 0; k < n_dst; k++)
			dst[k]->counts[i] += c;
		if (coarse) /* a bucket of src lies in one of coarse's */
			coarse->counts[index_of(coarse->sub_bits, hist_bucket_low(src, i))] += c;
	}
	for (size_t k = 0; k <= n_dst; k++) {
		struct hist *d = k < n_dst ? dst[k] : coarse;
		if (!d)
			break;
		d->total += src->total;
		d->clamped += src->clamped;
		d->sum += src->sum;
		if (src->min < d->min)
			d->min = src->min;
		if (src->max > d->max)
			d->max = src->max;
	}
	clear_stats(src);
	return 0;
}

int hist_subtract(struct hist *dst, const struct hist *src)
{
	if (!dst || !src || !dst->counts || !src->counts || dst->sub_bits != src->sub_bits ||
	    dst->max_value != src->max_value || dst->counts_len != src->counts_len)
		return PACER_ELAYOUT;
	if (src->total == 0)
		return 0;
	if (src->total > dst->total || src->clamped > dst->clamped)
		return PACER_ERANGE;
	for (size_t i = 0; i < src->counts_len; i++)
		if (src->counts[i] > dst->counts[i])
			return PACER_ERANGE;
	for (size_t i = 0; i < src->counts_len; i++)
		dst->counts[i] -= src->counts[i];
	dst->total -= src->total;
	dst->clamped -= src->clamped;
	dst->sum -= src->sum;
	if (dst->sum < 0 || dst->total == 0)
		dst->sum = 0;
	if (dst->total == 0) {
		dst->min = UINT64_MAX;
		dst->max = 0;
		return 0;
	}
	size_t first = 0, last = dst->counts_len - 1;
	while (!dst->counts[first])
		first++;
	while (!dst->counts[last])
		last--;
	if (src->min <= dst->min)
		dst->min = hist_bucket_low(dst, first);
	if (src->max >= dst->max) {
		uint64_t hi = hist_bucket_high(dst, last);
		dst->max = hi < dst->max ? hi : dst->max;
	}
	return 0;
}

size_t hist_index(const struct hist *h, uint64_t value)
{
	if (value > h->max_value)
		value = h->max_value;
	return index_of(h->sub_bits, value);
}

/* Shift (log2 of the width) of the bucket at `index`, or -1 when the index
 * lies beyond any 64-bit value. */
static int index_shift(uint32_t sub_bits, size_t index)
{
	size_t q = index >> (sub_bits - 1);
	if (q < 2)
		return 0;
	if (q - 1 > 64 - sub_bits)
		return -1;
	return (int)(q - 1);
}

uint64_t hist_bucket_low(const struct hist *h, size_t index)
{
	int b = index_shift(h->sub_bits, index);
	if (b < 0)
		return UINT64_MAX;
	uint64_t mantissa = (uint64_t)index - ((uint64_t)b << (h->sub_bits - 1));
	return mantissa << b;
}

uint64_t hist_bucket_high(const struct hist *h, size_t index)
{
	int b = index_shift(h->sub_bits, index);
	if (b < 0)
		return UINT64_MAX;
	return hist_bucket_low(h, index) + ((1ull << b) - 1);
}

/* ceil(p/100 * total), in [1, total].  The product is taken in long double
 * and nudged down by a relative 1e-15 so that a p that is not exactly
 * representable in binary (99.9) still yields the integer rank its decimal
 * value means (999 of 1000, not 1000). */
static uint64_t rank_of(double p, uint64_t total)
{
	long double x = (long double)p / 100.0L * (long double)total;
	x -= x * 1e-15L;
	long double r = ceill(x);
	if (r < 1.0L)
		return 1;
	if (r >= (long double)total)
		return total;
	return (uint64_t)r;
}

uint64_t hist_percentile(const struct hist *h, double p)
{
	if (!h->counts || h->total == 0)
		return 0;
	if (!(p > 0.0)) /* also NaN */
		return h->min;
	if (p >= 100.0)
		return h->max;
	uint64_t rank = rank_of(p, h->total);
	uint64_t seen = 0;
	for (size_t i = 0; i < h->counts_len; i++) {
		seen += h->counts[i];
		if (seen >= rank) {
			uint64_t v = hist_bucket_high(h, i);
			if (v > h->max)
				v = h->max;
			if (v < h->min)
				v = h->min;
			return v;
		}
	}
	return h->max; /* counts and total disagree: cannot happen via the API */
}

double hist_mean(const struct hist *h)
{
	if (h->total == 0)
		return 0.0;
	return (double)(h->sum / (long double)h->total);
}

double hist_stddev(const struct hist *h)
{
	if (!h->counts || h->total == 0)
		return 0.0;
	long double mean = h->sum / (long double)h->total;
	long double acc = 0;
	for (size_t i = 0; i < h->counts_len; i++) {
		uint64_t c = h->counts[i];
		if (!c)
			continue;
		uint64_t lo = hist_bucket_low(h, i), hi = hist_bucket_high(h, i);
		if (lo < h->min)
			lo = h->min;
		if (hi > h->max)
			hi = h->max;
		long double mid = (long double)lo + (long double)(hi - lo) / 2.0L;
		long double d = mid - mean;
		acc += d * d * (long double)c;
	}
	return (double)sqrtl(acc / (long double)h->total);
}

bool hist_next_nonzero(const struct hist *h, size_t *cursor, uint64_t *low_value,
		       uint64_t *count)
{
	if (!h->counts)
		return false;
	for (size_t i = *cursor; i < h->counts_len; i++) {
		if (h->counts[i]) {
			if (low_value)
				*low_value = hist_bucket_low(h, i);
			if (count)
				*count = h->counts[i];
			*cursor = i + 1;
			return true;
		}
	}
	*cursor = h->counts_len;
	return false;
}

/* HdrHistogram's PercentileIterator step: a fixed tick size within each
 * half-distance to 100 %, halved when the half-distance is crossed.  The
 * same float operations as the Java code, so the same levels come out. */
static double next_level(double level, uint32_t ticks_per_half)
{
	double remaining = 100.0 - level;
	double e = remaining > 0.0 ? log(100.0 / remaining) / log(2.0) : 62.0;
	if (!(e < 62.0)) /* level rounded up to 100: keep the shift defined */
		e = 62.0;
	double ticks = (double)ticks_per_half * ldexp(1.0, (int)(long)e + 1);
	double next = level + 100.0 / ticks;
	/* Within an ulp of 100 % (totals beyond ~2^50) the step can vanish;
	 * always move on so the iteration ends. */
	return next > level ? next : nextafter(level, INFINITY);
}

size_t hist_spectrum(const struct hist *h, uint32_t ticks_per_half, struct hist_pct_row *rows,
		     size_t cap)
{
	if (!h->counts || h->total == 0)
		return 0;
	if (rows && cap == 0)
		return 0;
	if (ticks_per_half == 0)
		ticks_per_half = 5;
	/* Regular rows kept; the last slot is reserved for the 100 % row. */
	size_t keep = rows ? cap - 1 : SIZE_MAX;
	size_t produced = 0;
	double level = 0.0;
	uint64_t seen = 0;
	size_t last = 0;
	for (size_t i = 0; i < h->counts_len && seen < h->total; i++) {
		uint64_t c = h->counts[i];
		if (!c)
			continue;
		seen += c;
		last = i;
		/* Several levels may be reached inside one bucket; once the
		 * last recording is counted, HdrHistogram emits one more row
		 * at that bucket and then only the final 100 % row. */
		while (100.0 * (double)seen / (double)h->total >= level) {
			if (produced < keep && rows) {
				rows[produced] = (struct hist_pct_row){
					.value = hist_bucket_high(h, i),
					.percentile = level / 100.0,
					.total_count = seen,
				};
			}
			produced++;
			level = next_level(level, ticks_per_half);
			if (seen >= h->total)
				break;
		}
	}
	size_t n = produced < keep ? produced : keep;
	if (rows) {
		rows[n] = (struct hist_pct_row){
			.value = hist_bucket_high(h, last),
			.percentile = 1.0,
			.total_count = h->total,
		};
	}
	return n + 1;
}
