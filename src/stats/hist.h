/* pacer — log-linear histogram of non-negative integer values (nanoseconds).
 *
 * Layout (the HdrHistogram scheme, our own code): values below
 * 2^sub_bits are exact; above, each power-of-two range [2^k, 2^(k+1)) is
 * split into 2^(sub_bits-1) equal sub-buckets, so the relative error of any
 * recorded value is below 2^-(sub_bits-1).  With sub_bits = 11 that is
 * < 0.1 % (1/1024), 1 ns resolution below 2.048 us, and with max_value of
 * 2^42 ns (~73 min) the counts array has fixed size decided at init.
 *
 * Caller-allocated struct; counts are heap memory owned by the histogram.
 * Not thread-safe: one histogram per thread, merged after the phase. */
#ifndef PACER_STATS_HIST_H
#define PACER_STATS_HIST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Default layout used for every latency histogram in pacer. */
#define HIST_SUB_BITS 11
#define HIST_MAX_NS (1ull << 42) /* ~73 minutes */

struct hist {
	uint32_t sub_bits;   /* bits of sub-bucket resolution (>= 2, <= 20) */
	uint64_t max_value;  /* highest trackable value; larger values clamp */
	size_t counts_len;   /* number of counters */
	uint64_t *counts;    /* counts_len counters */
	uint64_t total;      /* sum of counts */
	uint64_t min, max;   /* exact min/max recorded (min = UINT64_MAX when empty);
			      * a clamped value counts as max_value here too */
	uint64_t clamped;    /* values recorded above max_value (counted at max) */
	long double sum;     /* for the mean; long double keeps ns sums exact enough */
};

/* Allocate counters for the given layout. 0, -EINVAL (bad layout: sub_bits
 * outside 2..20 or max_value 0) or -ENOMEM. counts_len is the index of
 * max_value + 1: 33793 counters (264 KiB) with the defaults. On error *h is
 * left zeroed (hist_free is safe). Does not free a previous layout. */
int hist_init(struct hist *h, uint32_t sub_bits, uint64_t max_value);
/* Free counters; the struct may be re-initialized. Safe on a zeroed struct. */
void hist_free(struct hist *h);
/* Zero all counts, keep layout. */
void hist_reset(struct hist *h);

/* Record one value. Values above max_value are counted at max_value and in
 * `clamped`. Never allocates. */
void hist_record(struct hist *h, uint64_t value);
/* Record `count` occurrences of value (count 0 is a no-op). Never allocates. */
void hist_record_n(struct hist *h, uint64_t value, uint64_t count);

/* Add src into dst (counts, total, clamped, sum, min/max). Both must share a
 * layout (sub_bits and max_value): 0 or PACER_ELAYOUT, dst unchanged. */
int hist_merge(struct hist *dst, const struct hist *src);

/* Move src's recordings into each of dst[0..n_dst) (each of src's layout)
 * and, when coarse is not NULL, into coarse (src's max_value, sub_bits no
 * more than src's: each of its buckets is a union of src's), all exact, as
 * hist_merge would; then empty src. Only src's counters from its min's to
 * its max's are read and cleared: cheap for a histogram that holds a narrow
 * range (a second's latencies), where hist_merge and hist_reset pass over
 * every counter. PACER_ELAYOUT (nothing changed) when a layout does not
 * fit. */
int hist_move(struct hist *src, struct hist *const *dst, size_t n_dst, struct hist *coarse);

/* Take src out of dst: the recordings of a subset (recorded into src as
 * well as dst). Both must share a layout: PACER_ELAYOUT; a counter of src
 * above dst's: PACER_ERANGE; dst unchanged on error. min and max stay exact
 * where src did not hold them, else become the bounds of the first and last
 * non-empty bucket left (as an empty histogram's when nothing is left). */
int hist_subtract(struct hist *dst, const struct hist *src);

/* Value at percentile p in [0,100]: the highest value equivalent to the
 * bucket holding the ceil(p/100*total)-th smallest recording, clamped into
 * [min, max] (so p=0 → min, p=100 → max, exact; p < 0 or NaN acts as 0,
 * p > 100 as 100). 0 when empty. The result r for rank value x satisfies
 * x <= r and (r - x) < x * 2^-(sub_bits-1). */
uint64_t hist_percentile(const struct hist *h, double p);
/* Exact mean of the recorded values (sum / total); 0 when empty. */
double hist_mean(const struct hist *h);
/* Population standard deviation around the exact mean, taking each bucket at
 * its midpoint (exact below 2^sub_bits); 0 when empty. */
double hist_stddev(const struct hist *h);

/* Bucket geometry: index of the counter a value lands in (values above
 * max_value land where max_value does), and the lowest / highest values
 * equivalent to that counter. The bucket of value v >= 2^sub_bits has width
 * 2^(floor(log2 v) - sub_bits + 1); below 2^sub_bits low == high == index. */
size_t hist_index(const struct hist *h, uint64_t value);
uint64_t hist_bucket_low(const struct hist *h, size_t index);
uint64_t hist_bucket_high(const struct hist *h, size_t index);

/* Iterate non-empty counters in value order. Start with *cursor = 0; returns
 * false when done. *low_value is the bucket's lowest equivalent value, so
 * re-recording (low_value, count) pairs (hist_from_pairs in stats/hist_io.h)
 * into the same layout reproduces the counts exactly. Either out pointer may
 * be NULL. */
bool hist_next_nonzero(const struct hist *h, size_t *cursor, uint64_t *low_value,
		       uint64_t *count);

/* One row of the percentile spectrum. */
struct hist_pct_row {
	uint64_t value;     /* highest equivalent value at this percentile */
	double percentile;  /* 0..1 */
	uint64_t total_count; /* recordings <= value */
};

/* Percentile spectrum as HdrHistogram's "percentile distribution" iterates it:
 * `ticks_per_half` steps per halving of the remaining distance to 100 %
 * (HdrHistogram's outputPercentileDistribution uses 5; 0 means 5). Rows start
 * at percentile 0 (first non-empty bucket) and end with exactly one 100 %
 * row whose total_count is h->total; values are bucket highest-equivalent
 * values as HdrHistogram prints them (not clamped to max). Writes at most
 * `cap` rows into `rows` and returns the number written; if the full
 * spectrum does not fit, the rows are truncated but the last written row is
 * still the 100 % row. With rows == NULL nothing is written and the full
 * spectrum's row count is returned (to size the array). 0 when empty. */
size_t hist_spectrum(const struct hist *h, uint32_t ticks_per_half, struct hist_pct_row *rows,
		     size_t cap);

#endif
