/* pacer — what the files of the report's content share (private to
 * src/report/content*.c; the entry point is report_doc_build in
 * render_int.h).
 *
 * content.c gathers the facts every section uses into a struct content_ctx
 * and calls the sections in their order; each section appends its blocks to
 * c->d. Sections never fail: an allocation failure sets c->d->oom, which
 * report_doc_build returns once at the end. Every sentence is built from
 * fields of the result; a field that is missing is left out (or shown as
 * "–"), never invented. The strings returned by the fmt_* helpers live in
 * c->f, a ring of buffers (page.h): use them before formatting many more. */
#ifndef PACER_REPORT_CONTENT_INT_H
#define PACER_REPORT_CONTENT_INT_H

#include <stdbool.h>
#include <stddef.h>

#include "doc/keys.h"
#include "http/url.h"
#include "report/render_int.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* The facts of one result, gathered once (content.c). */
struct content_ctx {
	const struct loaded_result *r;
	const json_t *root, *plan, *env;
	struct page *d;
	const struct chart_set *cs;
	struct fring f;
	bool self_contained;  /* mode self_contained (any variant, for compare) */
	bool loopback;        /* every target on a loopback address: judged from the
	                       * addresses connected to ("connected"), else (older
	                       * results) from the URL's host */
	bool open_loop;
	bool interrupted;
	unsigned repeat;      /* repetitions (1 when not recorded) */
	char host[URL_HOST_CAP]; /* the target's host, "" when unknown or several */
	char address[128];    /* the one address connected to ("127.0.0.1:8080",
	                       * "unix:/x.sock"), "" when not recorded or several */
};

/* ---- small helpers ------------------------------------------------------ */

static inline const char *plural(double n, const char *one, const char *many)
{
	return n == 1 ? one : many;
}

/* A row of a two-column table; "not recorded" when v is NULL or "". */
static inline void kv(struct content_ctx *c, const char *k, const char *v)
{
	const char *row[2] = {k, v && *v ? v : "not recorded"};
	page_row(c->d, row);
}

/* Ramp step i of the result, or NULL (i < 0 or past the end). */
static inline const json_t *step_at(struct content_ctx *c, long i)
{
	return i >= 0 ? json_array_get(rr_arr(c->root, KEY_STEPS), (size_t)i) : NULL;
}

/* A reference to the chart of that name, when the result has one. */
static inline void chart_ref(struct content_ctx *c, const char *name)
{
	const struct chart *ch = charts_find(c->cs, name);
	if (ch)
		page_chart(c->d, ch->name, ch->title);
}

/* The most steal time on the generator's CPUs the result records (a run's,
 * a ramp's steps', a comparison's variants'); NAN when none is recorded
 * (content_phrases.c). */
double content_most_steal(const struct content_ctx *c);
/* Whether pacer warned of the steal when it measured (it alone knew the
 * counters' resolution: a short load's single tick is no warning). */
bool content_steal_warned(const struct content_ctx *c);

/* The cores the target could use: target_cores (its basis may be only the
 * machine's cores), else the machine's; NAN when neither is recorded
 * (content_phrases.c). */
double content_target_cores(struct content_ctx *c);

/* What the target's waits for a CPU over a phase say (docs/cost.md "The
 * target's waits for a CPU"), from its target_resources tr and the
 * phase's seconds (content_phrases.c): nothing when they were not
 * measured or are not material (result.h: target_cpu_wait_material,
 * target_cpu_pressure_material); else whether other work on its machine
 * had the CPUs it could use (it kept under RAMP_CPU_LIMIT_SHARE of them
 * busy, or that is not known) or it filled them itself (its threads
 * queued for its own cores), with the figures in words. */
enum content_wait_kind { CW_NONE, CW_OTHERS, CW_OWN };
struct content_wait {
	enum content_wait_kind kind;
	double pct;      /* cpu_wait_pct, or cpu_pressure_some_pct for a cgroup */
	char fig[300];   /* "the target's threads waited for a CPU for 31.00% of the
	                  * time they were ready to run (1.20 s waiting, 2.70 s on a CPU)" */
	char brief[160]; /* "the target waited for a CPU 31.00% of the time it was ready
	                  * to run" */
	char busy[160];  /* "it kept 0.90 of the 2 cores it could use busy", or "" */
};
void content_cpu_wait(struct content_ctx *c, const json_t *tr, double phase_s,
		      struct content_wait *w);

/* The helpers below write into out[cap] and return out (content_phrases.c). */
/* "a 4-core Intel ... machine", or what of it the result records. */
const char *content_machine(struct content_ctx *c, char *out, size_t cap);
/* The target as named and as connected to: "api.test, connected at
 * 127.0.0.1:8080", "127.0.0.1:8080" when the name is the address, the host
 * alone in older results (no "connected"), "" when neither is known. */
const char *content_target(struct content_ctx *c, char *out, size_t cap);
/* Connections that spoke HTTP/2 (*h2) and that --http2=prefer kept on
 * HTTP/1.1 (*h1) over the whole load: a run's warm-up and measured phase
 * (connections opened in the warm-up carry into the measured phase), a
 * ramp's steps; false when the result records none (HTTP/1.1, older
 * results, a comparison). */
bool content_h2_conns(struct content_ctx *c, double *h2, double *h1);
/* The protocol spoken, from plan.http, plan.tls and the connections:
 * "HTTP/1.1", "HTTPS (HTTP/1.1 over TLS)", "h2c (HTTP/2 over cleartext)",
 * "HTTPS (HTTP/2 over TLS)", "HTTPS (HTTP/3 over QUIC)", ... ; "HTTP" for
 * an older result. */
const char *content_protocol(struct content_ctx *c, char *out, size_t cap);
/* "over loopback PROTOCOL", "over PROTOCOL to HOST" or "over PROTOCOL". */
const char *content_where(struct content_ctx *c, char *out, size_t cap);
/* "median (min–max)" of summary[key], as microseconds (us) or a rate; "–"
 * when absent. */
const char *content_med_range(struct content_ctx *c, char *out, size_t cap,
			      const json_t *summary, const char *key, bool us);
/* The reasons of a phase's failed connections (tls.failure_reasons): those
 * of HTTP/2 (which name it) when h2, else those of TLS, as ": r1; r2" ("" when
 * none). */
const char *content_fail_reasons(const json_t *ph, bool h2, char *out, size_t cap);
/* A phase's failed connections in words, with their cause: "5 connections
 * failed as HTTP/2 (the server broke HTTP/2 ...)", "12 connects failed
 * (refused), 3 TLS handshakes failed (...)"; "" when none failed. */
const char *content_conn_failures(struct content_ctx *c, const json_t *ph, char *out, size_t cap);

/* ---- the tables of a measured phase (content_tables.c) --------------------- */

/* Latency percentiles of each timing the phase has. */
void content_latency_table(struct content_ctx *c, const json_t *ph);
/* The success rule and the outcomes with their rates, when there are any. */
void content_outcomes_table(struct content_ctx *c, const json_t *ph);
/* Per request name, when there is more than one; heading: under its own
 * "By request name" heading. */
void content_by_name_table(struct content_ctx *c, const json_t *ph, bool heading);
/* A script's sessions (a phase's "sessions", pacer.session), when it has
 * them: their counts and durations; nothing otherwise. */
void content_sessions_table(struct content_ctx *c, const json_t *ph, bool heading);
/* The seconds of series (a run's or a step's) in which connects failed,
 * requests were dropped or were still unsent at the second's end, with
 * their responses, under their own heading; nothing when no connect failed
 * and nothing was dropped. */
void content_outage_table(struct content_ctx *c, const json_t *series);

/* ---- the workload as sent: plan.workload (content_workload.c) --------------- */

/* What was sent, as a phrase ("one POST request to URL with a 12-byte
 * body", "1,000 requests of the request table ... in turn: GET 800
 * (80.00%), ..."); plan is the object whose "table" names the request
 * table (a plan, or a comparison's variant); url names the URL ("the
 * target URL", or the URL itself). false (out untouched) when wl is NULL:
 * an older result. */
bool content_wl_phrase(struct content_ctx *c, const json_t *wl, const json_t *plan,
		       const char *url, char *out, size_t cap);
/* "GET 1 (50.00%), POST 1 (50.00%)": methods with counts and shares. */
void content_wl_methods(struct content_ctx *c, const json_t *wl, char *out, size_t cap);
/* The identity rows of a workload object. */
void content_wl_rows(struct content_ctx *c, const json_t *wl);

/* ---- the sections, in their order -------------------------------------------- */

/* 1. Summary: one paragraph per kind (content_run.c, content_ramp.c,
 * content_compare.c). */
void content_summary_run(struct content_ctx *c);
void content_summary_ramp(struct content_ctx *c);
void content_summary_compare(struct content_ctx *c);
/* 2. Identity and 3. methodology (content_method.c). */
void content_identity(struct content_ctx *c);
void content_methodology(struct content_ctx *c);
/* 4. Test conditions and limits (content_limits.c). */
void content_conditions(struct content_ctx *c);
/* 5. Results, under the "Results" heading (content_run.c, content_ramp.c,
 * content_compare.c). */
void content_results_run(struct content_ctx *c);
void content_results_ramp(struct content_ctx *c);
void content_results_compare(struct content_ctx *c);
/* 6. Cost and resources (content_cost.c). */
void content_cost(struct content_ctx *c);
/* 7. What the number means and does not establish (content_meaning.c). */
void content_meaning(struct content_ctx *c);
/* The terminal's last word: what to look at next (content_next.c). */
void content_next(struct content_ctx *c);

#endif
