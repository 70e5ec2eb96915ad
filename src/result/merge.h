/* pacer — merging the results of the segments of one plan (`pacer merge`,
 * docs/distributed.md) into the result one generator running the whole plan
 * would have written.
 *
 * Pure: it works on parsed JSON result trees (jansson), never on files; the
 * CLI reads the files (report/result_read.h checks them) and writes the
 * merged tree. Histograms are merged exactly (same layout: the same
 * buckets, so the merged percentiles are those of one histogram fed every
 * value), counters are summed, per-second series are aligned by wall-clock
 * second, and each segment's self-checks, environment and warnings are kept
 * under `segments`, named by index and file. A ramp is merged step by step,
 * and its verdicts, highest passing step and knee are recomputed from the
 * merged steps with the plan's SLO. */
#ifndef PACER_RESULT_MERGE_H
#define PACER_RESULT_MERGE_H

#include <jansson.h>
#include <stddef.h>

#define MERGE_MAX_INPUTS 1024 /* segments one merge takes */

struct merge_input {
	const char *name;   /* the file, for messages and for segments[].file (borrowed) */
	const json_t *root; /* a checked result (report/result_read.h: run or ramp), borrowed */
};

/* Merge n (1..MERGE_MAX_INPUTS) segment results into *out (a new tree the
 * caller releases with json_decref). 0, or on refusal a one-line message
 * naming the file(s) in err and:
 *   PACER_EPARSE        an input is not a segment result (no plan.segment),
 *                       is a compare result, or a field merge needs is
 *                       missing or malformed (histogram, step list)
 *   PACER_EUNSUPPORTED  the inputs do not make one plan: kinds, plans
 *                       (the first differing field is named), request
 *                       tables (sha256), segment counts or histogram layouts
 *                       differ, a segment is duplicated or missing, or the
 *                       ramps ran different steps
 *   -ENOMEM
 * The inputs are not changed. */
int result_merge(const struct merge_input *in, size_t n, json_t **out, char *err, size_t errlen);

#endif
