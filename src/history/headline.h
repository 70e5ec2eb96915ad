/* pacer — the headline figures and conditions of a saved result, as the run
 * history stores them in columns and as `pacer diff` compares them (pure:
 * a function of the parsed result, no I/O).
 *
 * Strings point into the result's tree (or are "" when absent) and live as
 * long as it does. Figures absent from the result are NaN. */
#ifndef PACER_HISTORY_HEADLINE_H
#define PACER_HISTORY_HEADLINE_H

#include "doc/read.h"

enum headline_metric {
	HM_ACHIEVED, /* achieved requests/s */
	HM_P50,      /* latency percentiles, µs */
	HM_P90,
	HM_P99,
	HM_P999,
	HM_ERRORS,      /* errors, % of requests (compared in percentage points) */
	HM_CAPACITY,    /* ramp: highest passing offered rate, requests/s */
	HM_CPU,         /* target CPU ms per request */
	HM_COST,        /* USD per million requests, first cost profile */
	HM_SESSIONS,    /* sessions (pacer.session): completed, % of started */
	HM_SESSION_P50, /* sessions' duration percentiles, µs */
	HM_SESSION_P99,
	HM_COUNT
};

/* A session run's figures per step (by_name: each step is a request under
 * its name), at most HISTORY_STEPS_MAX of them, in the result's order;
 * names longer than the buffer are cut (the stored result has them whole). */
#define HISTORY_STEPS_MAX 32
#define HISTORY_STEP_NAME_CAP 96
struct history_step {
	char name[HISTORY_STEP_NAME_CAP];
	double completed, errors; /* counts */
	double p50_us, p99_us;    /* latency from each step's due time */
};

/* The counts of a session run (NaN when the result has no sessions). */
struct history_sessions {
	double started, completed, failed, abandoned;
};

struct history_headline {
	const char *kind, *started_at, *mode;
	const char *pacer_version, *pacer_commit;
	char target[512];  /* the URL (URL@HOST:PORT with --connect-to), or
			    * self-contained:PLAN[/path] (ports change), or a
			    * compare's compare:NAME=TARGET,... (cut to fit) */
	const char *scenario;
	const char *table_hash; /* plan.table.sha256, else plan.workload.sha256 */
	/* plan.workload.workload_sha256 (a compare's first variant's): the
	 * requests as sent, not where (pacer diff's rule); NULL or "" when the
	 * result has none (older results, a script's requests) */
	const char *workload_hash;
	const char *hostname, *cpu_model, *kernel, *arch;
	double cores;
	bool interrupted;
	double v[HM_COUNT];
	const char *report_id; /* the result's own id (SHA-256 of its bytes) */
	struct history_sessions sess;
	size_t n_steps; /* with sessions only */
	struct history_step steps[HISTORY_STEPS_MAX];
};

/* Fill *h from r (kind run, ramp or compare; for a compare, the figures of
 * its first variant, and capacity only in ramp mode; a session run's
 * sessions and steps from the same phase or variant). Never fails. */
void history_headline_of(const struct loaded_result *r, struct history_headline *h);

/* "achieved", "p50", "p90", "p99", "p99.9", "errors", "capacity", "cpu", "cost",
 * "sessions", "session_p50", "session_p99". */
const char *headline_metric_name(enum headline_metric m);
/* The metric named s (the names above; also "p999", "rate", "cpu_ms"),
 * or -1. */
int headline_metric_parse(const char *s);
/* The metric names as a reader lists them ("achieved, p50, ..., session_p99"). */
#define HEADLINE_METRIC_LIST                                                                       \
	"achieved, p50, p90, p99, p99.9, errors, capacity, cpu, cost, sessions, session_p50, "     \
	"session_p99"
/* Whether a larger value is better (achieved rate, capacity, sessions completed). */
bool headline_metric_higher_better(enum headline_metric m);

#endif
