/* pacer — which charts a result gets, and their data (drawn by svg.c).
 *
 *   spectrum         latency and service time percentile spectrum, log
 *                    1/(1-p) axis (run: measure; ramp: the focus step)
 *   histogram        latency distribution: the share of requests in each of
 *                    10 log-spaced bins a decade (beside the spectrum)
 *   status           responses per second by status class, and the requests
 *                    that failed on the connection and the connects that
 *                    failed, per second (results whose series carry
 *                    by_class), drain seconds apart
 *   timeline         responses/s and p50/p99 per second, and the requests
 *                    unsent at each second's end when any were (ramp: all
 *                    steps end to end with step boundaries, or per-step
 *                    points)
 *   latency-vs-load  ramp: p50/p99 against offered rate with the SLO line;
 *                    achieved against offered below
 *   compare-ratios   compare: each variant's ratio to the baseline with its
 *                    95 % interval
 *   compare-latency  compare: median latency percentiles per variant with
 *                    min-max whiskers
 *   compare-throughput  compare: median throughput (or capacity) per variant
 *   compare-spectrum, compare-histogram, compare-timeline, compare-status
 *                    compare (run mode): a single run's charts with the
 *                    variants overlaid, one color each (the timeline and
 *                    status from each variant's first measurement)
 *
 * This file chooses the families for a result: charts_phase.c (spectrum,
 * histogram, timeline, status), charts_ramp.c and charts_compare.c. The set
 * and the helpers they share are charts_set.c (charts_int.h). */
#include <string.h>

#include "report/charts_int.h"
#include "report/render_int.h"

int charts_build(const struct loaded_result *r, struct chart_set *cs)
{
	memset(cs, 0, sizeof *cs);
	int rc = 0;
	switch (r->kind) {
	case RESULT_KIND_RUN: rc = run_charts(r->root, cs); break;
	case RESULT_KIND_RAMP: rc = ramp_charts(r->root, cs); break;
	case RESULT_KIND_COMPARE: rc = compare_charts(r->root, cs); break;
	}
	if (rc)
		charts_free(cs);
	return rc;
}
