/* pacer — merging the results of the segments of one plan (`pacer merge`,
 * docs/distributed.md) into the result one generator running the whole plan
 * would have written.
 *
 * Pure: it works on parsed JSON result trees (jansson), never on files; the
 * CLI reads the files (doc/read.h checks them) and writes the
 * merged tree. Histograms are merged exactly (same layout: the same
 * buckets, so the merged percentiles are those of one histogram fed every
 * value), counters are summed, per-second series are aligned by wall-clock
 * second, and each segment's self-checks, environment and warnings are kept
 * under `segments`, named by index and file. A ramp is merged step by step,
 * and its verdicts, highest passing step and knee are recomputed from the
 * merged steps with the plan's SLO. */
#ifndef PACER_DOC_MERGE_H
#define PACER_DOC_MERGE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#define MERGE_MAX_INPUTS 1024 /* segments one merge takes */

struct merge_input {
	const char *name;   /* the file, for messages and for segments[].file (borrowed) */
	const json_t *root; /* a checked result (doc/read.h: run or ramp), borrowed */
};

/* Merge n (1..MERGE_MAX_INPUTS) segment results into *out (a new tree the
 * caller releases with json_decref). 0, or on refusal a one-line message
 * naming the file(s) in err and:
 *   PACER_EPARSE        an input is not a segment result (no plan.segment),
 *                       is a compare result, or a field merge needs is
 *                       missing or malformed (histogram, step list, a
 *                       count that is not a whole number: 200.5, "200")
 *   PACER_ERANGE        a number out of its range (a negative count, one
 *                       over MERGE_COUNT_MAX, 1e300 seconds), or counts
 *                       whose sum would pass MERGE_COUNT_MAX; the message
 *                       names the file and the field's JSON path
 *   PACER_EUNSUPPORTED  the inputs do not make one plan: kinds, plans
 *                       (the first differing field is named), request
 *                       tables (sha256), segment counts or histogram layouts
 *                       differ, a segment is duplicated or missing, or the
 *                       ramps ran different steps
 *   -ENOMEM
 * The inputs are not changed. */
int result_merge(const struct merge_input *in, size_t n, json_t **out, char *err, size_t errlen);

/* How each field of a segment result merges (merge_rules.c). */
enum merge_rule_kind {
	MERGE_SAME = 1, /* equal in every segment, else refused */
	MERGE_FIRST,    /* segment 0's (the note says why that is the plan's) */
	MERGE_EACH,     /* segment 0's here, every segment's own under segments[] */
	MERGE_SUM,      /* added (a subtree: every integer in it) */
	MERGE_MAX,      /* the largest */
	MERGE_MIN,      /* the smallest (the earliest) */
	MERGE_ANY,      /* true when any segment's is */
	MERGE_ALL,      /* true when every segment's is */
	MERGE_MEAN,     /* the segments' means, weighted (the note says by what) */
	MERGE_HIST,     /* a timing: histograms added bucket by bucket, the figures made again
	                 * from the merged one; min and max the segments' exact extremes */
	MERGE_DERIVED,  /* made again from the merged figures */
	MERGE_JUDGED,   /* judged again from the merged figures with the plan's SLO */
	MERGE_KEY,      /* the key rows are matched by */
	MERGE_CONCAT,   /* the segments' lists, joined in segment order */
	MERGE_UNION,    /* the distinct values of every segment */
	MERGE_WORST,    /* the worst segment's (the note says by what; steal: the most, each
			 * machine its own hypervisor) */
	MERGE_FLAGGED,  /* flagged when any segment's is; the first flagged segment's checks,
	                 * named; every segment's own under segments[] */
	MERGE_WARNINGS, /* once when every segment gave it, else prefixed with the segment */
	MERGE_SEGMENT,  /* not pooled: under segments[] (each segment's own), not at the top */
	MERGE_REFUSE,   /* a segment with it is refused (the note says why) */
};

struct merge_rule {
	const char *path; /* ".measure.latency", "@phase.requests", "*" one key, "[]" elements */
	enum merge_rule_kind kind;
	bool sub;         /* the rule covers everything under path */
	const char *note; /* NULL, or what the rule means here */
};

/* The largest count a segment may give and a merged count may reach:
 * 2^53 - 1, the integers every JSON reader holds exactly (so 1,024 of them
 * add up without overflow, too). A count is a whole number from 0 to it; a
 * quantity summed (seconds of CPU, a
 * rate: merge_rules.c) or compared (max, min, mean,
 * worst) a number from 0 to it. */
#define MERGE_COUNT_MAX 9007199254740991ull

/* The rules, every field of a run or ramp segment result covered
 * (result_merge refuses a field without one). */
const struct merge_rule *merge_rules(size_t *n);
/* The rule's name ("sum", "histogram", ...). */
const char *merge_rule_name(enum merge_rule_kind k);
/* The rule for a field's path (".measure.requests.sent",
 * ".steps[].series[].hist"), or NULL; *below then says whether fields
 * under it have rules (it is a container of them). */
const struct merge_rule *merge_rule_for(const char *path, bool *below);

#endif
