/* pacer — the segments' side of a distributed run in the CLI
 * (docs/distributed.md): --barrier (one start for all segments, held by
 * segment 0), the hand-in of each segment's result to segment 0, which
 * merges them, and --framed results that survive a mixed pod log.
 * The protocol is dist/dist.h and dist/wire.h, the framing dist/frame.h;
 * the options, the messages and the files are here. Prints one line per
 * event on stderr; returns exit codes. */
#ifndef PACER_CLI_DIST_IO_H
#define PACER_CLI_DIST_IO_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cli/opts.h"
#include "dist/wire.h"
#include "plan/plan.h"

struct dist_coord;
struct dist_peer;

struct cli_dist {
	/* options */
	const char *barrier;    /* --barrier HOST[:PORT]: segment 0's name and port */
	uint64_t timeout_ns;    /* --barrier-timeout */
	uint64_t margin_ns;     /* --barrier-margin */
	uint64_t handin_ns;     /* --handin-timeout */
	bool framed;            /* --framed: --out (and --merged-out) framed */
	const char *merged_out; /* --merged-out FILE (segment 0 with --barrier) */
	/* state */
	char host[256];
	uint16_t port;
	const char *secret;     /* PACER_BARRIER_TOKEN (the environment's) */
	char plan[WIRE_MAC_HEX + 1];
	uint32_t segment, count;
	struct dist_coord *coord; /* segment 0 */
	struct dist_peer *peer;   /* the others: segment 0, its address kept (owned) */
	uint64_t start_ns;
	char start_text[40];
};

/* The options, for run's and ramp's tables (d: a struct cli_dist). */
#define CLI_DIST_OPTS(d)                                                                           \
	{0, "barrier", OPT_STR, &(d).barrier, "HOST[:PORT]", NULL,                                 \
	 "with --segment: start when segment 0 (at HOST, listening on PORT, 7450) says, once all " \
	 "segments checked in; hand the result in to it (docs/distributed.md#the-barrier)", false}, \
	{0, "barrier-margin", OPT_DURATION, &(d).margin_ns, "D", "3s",                             \
	 "--barrier: the start this long after the last segment checked in", false},               \
	{0, "barrier-timeout", OPT_DURATION, &(d).timeout_ns, "D", "5m",                           \
	 "--barrier: segment 0 waits this long for the others, then starts those in; the others "  \
	 "try to reach it this long", false},                                                      \
	{0, "framed", OPT_FLAG, &(d).framed, NULL, NULL,                                           \
	 "--out (and --merged-out) as a framed result: compressed, encoded lines with checksums " \
	 "that survive a mixed log (pacer merge and report read them)", false},                    \
	{0, "handin-timeout", OPT_DURATION, &(d).handin_ns, "D", "2m",                             \
	 "--barrier: how long segment 0 waits after its run for the others' results (and they "    \
	 "try to hand them in)", false},                                                           \
	{0, "merged-out", OPT_STR, &(d).merged_out, "FILE", "-",                                   \
	 "--barrier, segment 0: write the merged result here (- is stdout)", false}

/* Defaults of the options. */
void cli_dist_defaults(struct cli_dist *d);

/* Check the options against the plan's --segment and --start-at (after
 * cli_options_apply), read PACER_BARRIER_TOKEN, and fingerprint the plan
 * from argv. 0, or EXIT_USAGE after one line. */
int cli_dist_apply(const char *cmd, struct cli_dist *d, const struct run_plan *p,
		   const struct opt *tab, size_t n, int argc, char **argv);

/* --barrier: check in (segment 0: start the coordinator and wait for the
 * others) and set the plan's start (start_at_wall_ns, start_at_text) to
 * the one segment 0 gives. Call when the plan is complete, before
 * plan_validate. 0, or an exit code after one line. */
int cli_dist_barrier(const char *cmd, struct cli_dist *d, struct run_plan *p);

/* The result's bytes json[len] to --out (framed with --framed) and to
 * --report-dir (cli_result_emit_buf's part). 0, or EXIT_RUNTIME after one
 * line. */
int cli_dist_emit(const char *cmd, const struct cli_dist *d, const char *json, size_t len,
		  const char *out_path, const char *report_dir);

/* --barrier, after the outputs: hand the result in to segment 0, or
 * (segment 0) collect the others', merge them with json[len] and write
 * the merged result to --merged-out. 0, or an exit code after one line. */
int cli_dist_finish(const char *cmd, struct cli_dist *d, const char *json, size_t len);

/* Stop segment 0's coordinator. */
void cli_dist_release(struct cli_dist *d);

/* A merged result written to out ("-": stdout), atomically, framed
 * ("merged", the segment count) when framed. 0, or EXIT_RUNTIME after one
 * line. */
int cli_merged_write(const char *cmd, const json_t *merged, const char *out, bool framed);

#endif
