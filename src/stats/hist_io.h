/* pacer — histogram import/export: HdrHistogram's `.hgrm` percentile text and
 * (value, count) pairs for saved results.
 *
 * Export of pairs uses hist_next_nonzero() (stats/hist.h); this file reads
 * them back. Not on the hot path: these may allocate. */
#ifndef PACER_STATS_HIST_IO_H
#define PACER_STATS_HIST_IO_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "stats/hist.h"

/* Write h as HdrHistogram's outputPercentileDistribution prints it (the
 * `.hgrm` layout other tools plot): a `Value Percentile TotalCount
 * 1/(1-Percentile)` header, one row per hist_spectrum() row with 5 ticks per
 * half distance (values divided by value_scale, e.g. 1e3 for microseconds
 * or 1e6 for milliseconds from ns; the 100 % row has no 1/(1-p) column), and
 * the `#[Mean ...]`, `#[Max ...]`, `#[Buckets ...]` footer. Values carry as
 * many decimals as the layout has significant digits (3 for sub_bits 11).
 * Mean is exact, StdDeviation per hist_stddev(), Max is the exact max.
 * An empty histogram gives the header and a zero footer.
 * f stays open and owned by the caller. 0, -EINVAL (bad argument), -ENOMEM,
 * or -errno (-EIO when the stream gives no errno) on a write error. */
int hist_write_hgrm(FILE *f, const struct hist *h, double value_scale);

/* Re-record (value, count) pairs — as produced by hist_next_nonzero() — into
 * an initialized histogram h (added to what it holds). All-or-nothing: 0, or
 * PACER_ERANGE with h unchanged when a value exceeds h->max_value or the
 * counts would overflow the total, -EINVAL when h is not initialized or
 * pairs is NULL with n > 0. Pairs with count 0 add nothing (their value is
 * still range-checked). min/max/sum become those of the pair values (bucket
 * low values), not the originals. */
int hist_from_pairs(struct hist *h, const uint64_t (*pairs)[2], size_t n);

#endif
