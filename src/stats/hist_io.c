/* pacer — histogram import/export (see hist_io.h). */
#include "stats/hist_io.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>

#include "util/err.h"

/* Decimal significant digits HdrHistogram would have configured for this
 * layout: it picks sub_bits = ceil(log2(2 * 10^d)), whose inverse is
 * floor((sub_bits - 1) * log10(2)) (11 → 3, 8 → 2, 15 → 4). */
static int sig_digits(uint32_t sub_bits)
{
	return (int)floor((double)(sub_bits - 1) * log10(2.0) + 1e-9);
}

/* HdrHistogram's bucketCount: bucket 0 holds [0, 2^sub_bits), bucket k >= 1
 * holds [2^(sub_bits+k-1), 2^(sub_bits+k)); enough to cover max_value. */
static int bucket_count(const struct hist *h)
{
	if (h->max_value < (1ull << h->sub_bits))
		return 1;
	return (63 - __builtin_clzll(h->max_value)) - (int)h->sub_bits + 2;
}

static int write_err(void)
{
	return errno > 0 ? -errno : -EIO;
}

int hist_write_hgrm(FILE *f, const struct hist *h, double value_scale)
{
	if (!f || !h || !h->counts || !(value_scale > 0.0) || isinf(value_scale))
		return -EINVAL;
	int digits = sig_digits(h->sub_bits);
	struct hist_pct_row *rows = NULL;
	size_t n = hist_spectrum(h, 5, NULL, 0);
	if (n) {
		rows = calloc(n, sizeof(*rows));
		if (!rows)
			return -ENOMEM;
		n = hist_spectrum(h, 5, rows, n);
	}
	int rc = 0;
	errno = 0;
	if (fprintf(f, "%12s %14s %10s %14s\n\n", "Value", "Percentile", "TotalCount",
		    "1/(1-Percentile)") < 0) {
		rc = write_err();
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		double v = (double)rows[i].value / value_scale;
		double p = rows[i].percentile;
		int w;
		if (i + 1 < n)
			w = fprintf(f, "%12.*f %2.12f %10" PRIu64 " %14.2f\n", digits, v, p,
				    rows[i].total_count, 1.0 / (1.0 - p));
		else
			w = fprintf(f, "%12.*f %2.12f %10" PRIu64 "\n", digits, v, p,
				    rows[i].total_count);
		if (w < 0) {
			rc = write_err();
			goto out;
		}
	}
	double max = h->total ? (double)h->max / value_scale : 0.0;
	if (fprintf(f, "#[Mean    = %12.*f, StdDeviation   = %12.*f]\n", digits,
		    hist_mean(h) / value_scale, digits, hist_stddev(h) / value_scale) < 0 ||
	    fprintf(f, "#[Max     = %12.*f, Total count    = %12" PRIu64 "]\n", digits, max,
		    h->total) < 0 ||
	    fprintf(f, "#[Buckets = %12d, SubBuckets     = %12d]\n", bucket_count(h),
		    1 << h->sub_bits) < 0) {
		rc = write_err();
		goto out;
	}
	if (fflush(f) != 0 || ferror(f))
		rc = write_err();
out:
	free(rows);
	return rc;
}

int hist_from_pairs(struct hist *h, const uint64_t (*pairs)[2], size_t n)
{
	if (!h || !h->counts || (n && !pairs))
		return -EINVAL;
	uint64_t total = h->total;
	for (size_t i = 0; i < n; i++) {
		if (pairs[i][0] > h->max_value)
			return PACER_ERANGE;
		if (__builtin_add_overflow(total, pairs[i][1], &total))
			return PACER_ERANGE;
	}
	for (size_t i = 0; i < n; i++)
		hist_record_n(h, pairs[i][0], pairs[i][1]);
	return 0;
}
