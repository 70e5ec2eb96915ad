/* pacer — reading a saved JSON result (docs/result.md, docs/schema/) back
 * for everything after the run: the renderers (report/), the history and
 * its diffs (history/), pacer merge and the CLI.
 *
 * result_read_mem parses the bytes of a result file with jansson (reading
 * the file is the caller's: src/cli), checks that it is a pacer result of a
 * schema version this build understands (major 1) and of a known kind (run,
 * ramp, compare) with the fields every writer relies on, and keeps the
 * parsed tree. Everything else in the tree is optional for the writers:
 * they read it through the typed accessors below, which return "missing"
 * for absent fields and for fields of the wrong type alike, so a hostile or
 * hand-edited result can make a report poorer but never crash it.
 *
 * Bounded: a file over RESULT_READ_CAP bytes is refused before parsing;
 * jansson limits nesting depth. Not thread-safe per object; no globals. */
#ifndef PACER_DOC_READ_H
#define PACER_DOC_READ_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "stats/hist.h"

#define RESULT_READ_CAP (256u * 1024u * 1024u) /* bytes: larger files are refused */
#define RESULT_SCHEMA_MAJOR 2                  /* the major version this build writes */
#define RESULT_SCHEMA_OLDEST 1                 /* the oldest major it reads (1.x is upgraded
						* on load: see result_upgrade_v1) */

enum result_kind {
	RESULT_KIND_RUN,
	RESULT_KIND_RAMP,
	RESULT_KIND_COMPARE,
};

/* Bring a 1.x result up to 2.0 in place: every phase object's `errors`
 * (transport failures by kind) becomes `transport_errors`, and `errors`
 * counts requests that did not succeed (1.x's success.failed, which already
 * counted failed responses and request transport errors), with `pct`,
 * `failed_responses` and `transport`; `error_pct` beside it. Objects that
 * do not look like a 1.x phase are left alone. Returns 0 or -ENOMEM. */
int result_upgrade_v1(json_t *root);

struct loaded_result {
	json_t *root;           /* the parsed result (owned) */
	enum result_kind kind;
	int schema_major, schema_minor;
	char id[17];            /* report id: first 16 hex digits of the SHA-256 of the
				 * file's bytes, so a result always gets the same id */
	char *name;             /* the file name used in messages (owned) */
};

/* Parse and check the len bytes of a result file at buf (need not be
 * NUL-terminated; never read past buf + len); name (the file's) is used in
 * messages and kept in r->name. On success fills *r (release with
 * result_free) and returns 0. On failure *r is zeroed, a one-line message
 * naming the file (and, for bad JSON, the line and column; for a bad
 * version, the version) is written to err, and the return is PACER_ETOOBIG
 * (over RESULT_READ_CAP bytes), PACER_EPARSE (not JSON, or not a pacer
 * result: no schema_version, unknown kind, a required field missing or of
 * the wrong type), PACER_EUNSUPPORTED (a schema major version other than
 * RESULT_SCHEMA_MAJOR) or -ENOMEM. */
int result_read_mem(struct loaded_result *r, const char *buf, size_t len, const char *name,
		    char *err, size_t errlen);

/* Free what result_read_* allocated; safe on a zeroed struct. */
void result_free(struct loaded_result *r);

/* "run", "ramp" or "compare". */
const char *result_kind_name(enum result_kind k);

/* ---- typed accessors: never fail loudly, never allocate -------------------
 * `path` is a dotted list of object keys ("measure.latency.p99_us"); a path
 * of NULL or "" means obj itself. A missing key, a non-object on the way or a
 * value of another type all count as absent. */

/* The value at path, or NULL. */
const json_t *rr_get(const json_t *obj, const char *path);
/* A finite number (integer or real) at path into *out: true, else false and
 * *out untouched. */
/* A non-negative JSON integer (reals with an integral value up to 2^53
 * too, as other writers may emit 5.0) into *out; false otherwise. */
bool rr_as_u64(const json_t *v, uint64_t *out);
bool rr_num(const json_t *obj, const char *path, double *out);
/* The number at path, or def when absent. */
double rr_num_or(const json_t *obj, const char *path, double def);
/* The string at path (owned by the tree), or NULL. */
const char *rr_str(const json_t *obj, const char *path);
/* A boolean at path into *out: true, else false. */
bool rr_bool(const json_t *obj, const char *path, bool *out);
/* true only when path holds the boolean true. */
bool rr_true(const json_t *obj, const char *path);
/* The array / object at path, or NULL. */
const json_t *rr_arr(const json_t *obj, const char *path);
const json_t *rr_obj(const json_t *obj, const char *path);
/* Elements of the array at path (0 when absent). */
size_t rr_len(const json_t *obj, const char *path);

/* Rows of a phase's "by_name" a report shows at most (pacer writes 65). */
#define RESULT_READ_MAX_NAMES 65

/* Highest accepted sub_bits / max_value of a saved histogram, so a hostile
 * file cannot make a reader allocate more than a few MiB per histogram. */
#define RESULT_HIST_MAX_SUB_BITS 16
#define RESULT_HIST_MAX_VALUE (1ull << 50)

/* Rebuild a histogram from a saved `hist` object ({unit:"ns", sub_bits,
 * max_value (optional, default HIST_MAX_NS), counts:[[value_ns, count]...]})
 * into *h (initialized here; the caller frees it with hist_free). 0, or
 * PACER_EPARSE with a one-line message in err (not an object, unit not "ns",
 * a bad layout, a pair that is not two non-negative integers, a value above
 * max_value, counts overflowing), or -ENOMEM. On error *h is zeroed. */
int rr_hist(const json_t *hist_obj, struct hist *h, char *err, size_t errlen);

/* rr_hist of a timing object's `hist` (docs/result.md), then, when the
 * timing's exact min_us / max_us / mean_us fall in the histogram's lowest /
 * highest non-empty buckets, those exact figures replace the bucket values
 * (so max and mean print as the run measured them). Same returns; a timing
 * without `hist` is PACER_EPARSE ("no histogram"). */
int rr_timing_hist(const json_t *timing, struct hist *h, char *err, size_t errlen);

#endif
