/* pacer — what is looked at in each response beyond framing: the --success
 * rule, the --outcome rules and the server-reported execution time
 * (--server-time). Parsed and checked here, once before the run (pure);
 * evaluated per response on the parser's capture (http/h1.h), without
 * allocating, by engine/inspect_eval.h. When none is given, nothing is
 * captured and the hot path does no extra work. */
#ifndef PACER_PLAN_INSPECT_H
#define PACER_PLAN_INSPECT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "http/h1.h"
#include "plan/rule.h"

#define INSPECT_MAX_OUTCOMES 16 /* --outcome rules per run */
#define INSPECT_BODY_CAP_DEFAULT (64 * 1024) /* body bytes inspected by default */
#define INSPECT_BODY_CAP_MAX (16 * 1024 * 1024)
#define SRVTIME_NAME_MAX 128

/* Where the server's own execution time comes from. */
enum srvtime_src {
	SRVTIME_NONE = 0,
	SRVTIME_SERVER_TIMING, /* Server-Timing: metric;dur=MS (W3C Server Timing) */
	SRVTIME_HEADER,        /* a header whose value is a number */
	SRVTIME_JSON,          /* a number at a dotted path in a JSON body */
};

struct srvtime_spec {
	enum srvtime_src src;
	char name[SRVTIME_NAME_MAX]; /* metric ("" = see srvtime_parse), header or path */
	double ns_per_unit;          /* value × this = ns */
};

/* Parse a --server-time spec:
 *   server-timing         the `total` metric if present, else the first
 *                         metric with a dur (milliseconds, per the W3C spec)
 *   server-timing:NAME    the dur of metric NAME
 *   header:NAME[:UNIT]    the header's value, a decimal number (default ms)
 *   json:PATH[:UNIT]      the number at PATH in a JSON object body: keys
 *                         separated by '.', array indices as numbers
 *                         (e.g. json:timing.exec_ms or json:ext.t.0:us)
 * UNIT is ns, us, ms or s. 0, or PACER_EPARSE with one line in err. */
int srvtime_parse(const char *arg, struct srvtime_spec *out, char *err, size_t cap);

/* Everything a run inspects. Fill with inspect_add_* before the run; read-
 * only (and shared by all threads) during it. */
struct inspect {
	struct rule *success;          /* NULL: the default, status 200..399 */
	char *success_text;            /* as given (owned) */
	size_t n_outcomes;
	struct rule *outcome[INSPECT_MAX_OUTCOMES];
	char outcome_name[INSPECT_MAX_OUTCOMES][RULE_NAME_MAX];
	char *outcome_text[INSPECT_MAX_OUTCOMES]; /* the rule part, owned */
	struct srvtime_spec srvtime;
	size_t body_cap;               /* body bytes kept for rules (default INSPECT_BODY_CAP_DEFAULT) */
	/* derived by inspect_finish */
	bool active;                   /* anything at all to evaluate per response */
	bool need_headers;
	size_t need_body;              /* body bytes to capture (0: none) */
};

void inspect_init(struct inspect *in);
void inspect_free(struct inspect *in);
/* --success RULE. PACER_EPARSE/... (see rule_parse) with one line in err;
 * PACER_EDUP if given twice. */
int inspect_set_success(struct inspect *in, const char *rule, char *err, size_t cap);
/* --outcome NAME=RULE. Errors as rule_parse_named, plus PACER_EDUP for a
 * repeated name and PACER_ETOOBIG past INSPECT_MAX_OUTCOMES. */
int inspect_add_outcome(struct inspect *in, const char *arg, char *err, size_t cap);
/* --server-time SPEC. */
int inspect_set_srvtime(struct inspect *in, const char *spec, char *err, size_t cap);
/* Derive the capture needs. Call once after the set/add calls. */
void inspect_finish(struct inspect *in);

/* Names of the outcomes, for slo_parse. */
static inline const char *const *inspect_outcome_names(const struct inspect *in, const char **tmp)
{
	for (size_t i = 0; i < in->n_outcomes; i++)
		tmp[i] = in->outcome_name[i];
	return tmp;
}

/* Whether a response with this status succeeds when no --success rule is
 * given: 200..399. */
static inline bool inspect_default_ok(int status) { return status >= 200 && status <= 399; }

#endif
