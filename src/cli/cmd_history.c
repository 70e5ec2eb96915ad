/* pacer history FILE.db [show ID | export ID -o FILE] and pacer diff OLD NEW
 * (docs/history.md): the run history read back, and two saved results
 * compared, with a CI gate (--fail-on). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/help.h"
#include "cli/history_io.h"
#include "cli/opts.h"
#include "doc/keys.h"
#include "history/diff.h"
#include "history/history.h"
#include "util/afile.h"
#include "util/err.h"
#include "util/file.h"
#include "util/jsonw.h"
#include "util/text.h"
#include "util/units.h"

/* Bad input (a missing, corrupt, foreign, newer or locked database, a
 * missing id, a file that is not a result) exits 2; the rest 3. */
static int exit_for(int rc)
{
	if (rc == -ENOMEM || rc == -EIO || rc == -ENOSPC)
		return EXIT_RUNTIME;
	return EXIT_USAGE;
}

/* Every string a history or a saved result holds is input: it goes to the
 * terminal through text_term_safe (an ESC[2J stored in a target would
 * clear the reader's screen). SAFE(s) is s so made, in a buffer of the
 * enclosing statement. */
#define SAFE_CAP 1024
#define SAFE(s) text_term_safe((char[SAFE_CAP]){0}, SAFE_CAP, (s))

/* An error message (it may quote what a file holds) on stderr. */
static void print_err(const char *cmd, const char *err)
{
	fprintf(stderr, "pacer %s: %s\n", cmd, SAFE(err));
}

/* A headline figure for a reader ("-" when absent). */
static const char *fmt_metric(char *out, size_t cap, enum headline_metric m, double v)
{
	char b[48];
	if (!isfinite(v)) {
		snprintf(out, cap, "-");
		return out;
	}
	switch (m) {
	case HM_ACHIEVED:
	case HM_CAPACITY:
		snprintf(out, cap, "%s/s", units_fmt_thousands(b, sizeof b, v, v < 100 ? 2 : 1));
		break;
	case HM_P50:
	case HM_P90:
	case HM_P99:
	case HM_P999:
	case HM_SESSION_P50:
	case HM_SESSION_P99:
		units_fmt_duration(out, cap, v * 1e3);
		break;
	case HM_ERRORS:
	case HM_SESSIONS:
		snprintf(out, cap, "%.4g%%", v);
		break;
	case HM_CPU:
		snprintf(out, cap, "%.4g ms", v);
		break;
	case HM_COST:
		snprintf(out, cap, "$%.4g", v);
		break;
	case HM_COUNT:
		snprintf(out, cap, "?");
		break;
	}
	return out;
}

/* ---- pacer history -------------------------------------------------------- */

static const struct cli_example history_examples[] = {
	{"pacer history perf/all.db --target http://127.0.0.1:8080/", "that target's runs, newest first"},
	{"pacer history perf/all.db --trend p99", "one metric over the stored runs"},
	{"pacer history perf/all.db export last -o last.json", "the newest stored result as a file"},
};

static const struct cli_help cli_help_history = {
	.name = "history",
	.summary = "the runs kept in a history: list, show, export, trends",
	.synopsis = "pacer history FILE.db [filters]\n"
		    "pacer history FILE.db --trend METRIC [filters]\n"
		    "pacer history FILE.db show ID\n"
		    "pacer history FILE.db export ID -o FILE\n"
		    "pacer history FILE.db add RESULT.json",
	.description = "FILE.db is a run history written by run, ramp, compare and bench with "
		       "--history FILE.db (or PACER_HISTORY): list its runs (newest first), one "
		       "metric over time (METRIC: " HEADLINE_METRIC_LIST "; sessions is the "
		       "sessions completed, % of started), a stored result, or store a saved one. "
		       "A session run's listing has a second line: its sessions and each step's "
		       "latency. ID may be last or prev.",
	.examples = history_examples,
	.n_examples = sizeof history_examples / sizeof history_examples[0],
	.exits = cli_exits_plain,
	.n_exits = sizeof cli_exits_plain / sizeof cli_exits_plain[0],
	.see = "docs/history.md",
};

static void history_usage(FILE *f, struct opt *tab, size_t n)
{
	cli_help_print(f, &cli_help_history, tab, n);
}

/* A session run's second line in the listing: its sessions (started,
 * completed, failed, abandoned; duration p50 and p99) and each step's p50
 * and p99 latency, from its due time. */
static void sessions_line(const struct history_headline *h)
{
	char a[32], b[32], c[32];
	printf("%5s  sessions %.0f started, %.0f completed (%s), %.0f failed, %.0f abandoned; "
	       "duration p50 %s p99 %s",
	       "", h->sess.started, h->sess.completed,
	       fmt_metric(a, sizeof a, HM_SESSIONS, h->v[HM_SESSIONS]), h->sess.failed,
	       h->sess.abandoned, fmt_metric(b, sizeof b, HM_SESSION_P50, h->v[HM_SESSION_P50]),
	       fmt_metric(c, sizeof c, HM_SESSION_P99, h->v[HM_SESSION_P99]));
	for (size_t k = 0; k < h->n_steps; k++) {
		const struct history_step *s = &h->steps[k];
		printf("%s %s p50 %s p99 %s", k ? "," : "; steps", SAFE(s->name),
		       fmt_metric(b, sizeof b, HM_P50, s->p50_us),
		       fmt_metric(c, sizeof c, HM_P99, s->p99_us));
	}
	putchar('\n');
}

struct list_ctx {
	enum headline_metric trend; /* HM_COUNT: a plain listing */
	size_t rows;
	/* --trend: the newest row's result, against which the others are
	 * judged comparable by pacer diff's rule (history/diff.h) */
	struct history_db *db;
	struct loaded_result ref;
	char ref_target[512];
	bool have_ref;
};

/* The stored result of row id, parsed. 0 or a code (then *r is empty). */
static int load_row(struct history_db *db, int64_t id, struct loaded_result *r)
{
	char err[512], name[32];
	char *json = NULL;
	size_t len = 0;
	memset(r, 0, sizeof *r);
	int rc = history_get(db, id, &json, &len, err, sizeof err);
	snprintf(name, sizeof name, "run %lld", (long long)id);
	if (!rc)
		rc = result_read_mem(r, json, len, name, err, sizeof err);
	free(json);
	return rc;
}

static int list_row(void *arg, const struct history_row *r)
{
	struct list_ctx *c = arg;
	const struct history_headline *h = &r->h;
	char when[20];
	snprintf(when, sizeof when, "%.16s", SAFE(r->recorded_at));
	for (char *p = when; *p; p++)
		if (*p == 'T')
			*p = ' ';
	char a[32], b[32], d[32], e[32], f[32];
	if (c->trend == HM_COUNT) {
		if (!c->rows)
			printf("%5s  %-16s  %-7s  %-12s  %10s  %9s  %9s  %8s  %10s  %-12s  %s\n",
			       "id", "recorded (UTC)", "kind", "workload", "achieved", "p50", "p99",
			       "errors", "capacity", "commit", "target");
		printf("%5lld  %-16s  %-7s  %-12.12s  %10s  %9s  %9s  %8s  %10s  %-12.12s  %s%s\n",
		       (long long)r->id, when, SAFE(h->kind),
		       /* what was sent, not where (pacer diff's rule); older
			* results: their request table's hash */
		       h->workload_hash && *h->workload_hash ? SAFE(h->workload_hash)
							     : SAFE(h->table_hash),
		       fmt_metric(a, sizeof a, HM_ACHIEVED, h->v[HM_ACHIEVED]),
		       fmt_metric(b, sizeof b, HM_P50, h->v[HM_P50]),
		       fmt_metric(d, sizeof d, HM_P99, h->v[HM_P99]),
		       fmt_metric(e, sizeof e, HM_ERRORS, h->v[HM_ERRORS]),
		       fmt_metric(f, sizeof f, HM_CAPACITY, h->v[HM_CAPACITY]),
		       r->git_commit[0] ? SAFE(r->git_commit) : "-", SAFE(h->target),
		       h->interrupted ? "  (interrupted)" : "");
		if (isfinite(h->sess.started))
			sessions_line(h);
	} else {
		if (!c->rows)
			printf("%5s  %-16s  %10s  %s\n", "id", "recorded (UTC)",
			       headline_metric_name(c->trend), "comparable with the newest");
		/* pacer diff's rule, the newest run as NEW */
		char why[128] = "yes";
		struct loaded_result row;
		struct diff_result *dr = malloc(sizeof *dr);
		if (!dr || !c->have_ref || load_row(c->db, r->id, &row)) {
			snprintf(why, sizeof why, "no: %s",
				 dr ? "the stored result does not read" : "out of memory");
		} else {
			diff_comparable(&row, &c->ref, dr);
			result_free(&row);
			if (!dr->comparable) {
				char shown[64];
				text_term_safe(shown, sizeof shown, dr->field);
				snprintf(why, sizeof why, "no: %s differs", shown);
			} else if (strcmp(c->ref_target, h->target)) {
				snprintf(why, sizeof why, "yes (another target)");
			}
		}
		free(dr);
		printf("%5lld  %-16s  %10s  %s\n", (long long)r->id, when,
		       fmt_metric(a, sizeof a, c->trend, h->v[c->trend]), why);
	}
	c->rows++;
	return 0;
}

static int ref_row(void *arg, const struct history_row *r)
{
	struct list_ctx *c = arg;
	snprintf(c->ref_target, sizeof c->ref_target, "%s", r->h.target);
	c->have_ref = load_row(c->db, r->id, &c->ref) == 0;
	return 0;
}

/* A stored result for a terminal: control characters (C0 but tab, newline
 * and carriage return; C1 as UTF-8) written as \u00XX escapes. In a JSON
 * string that is the same value; valid JSON has them nowhere else. */
static void write_json_for_terminal(FILE *f, const char *json, size_t len)
{
	const unsigned char *p = (const unsigned char *)json;
	for (size_t i = 0; i < len; i++) {
		unsigned c = p[i];
		if (c == 0xc2 && i + 1 < len && p[i + 1] >= 0x80 && p[i + 1] < 0xa0)
			fprintf(f, "\\u%04x", p[++i]);
		else if ((c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0x7f)
			fprintf(f, "\\u%04x", c);
		else
			fputc((int)c, f);
	}
}

static int show_or_export(const char *db, const char *verb, const char *run, const char *out)
{
	char err[1024];
	struct history_db *h;
	struct history_open_opts o = {.read_only = true};
	int rc = history_open(&h, db, &o, err, sizeof err);
	int64_t id = 0;
	char *json = NULL;
	size_t len = 0;
	if (!rc)
		rc = cli_history_resolve(h, db, run, &id, err, sizeof err);
	if (!rc)
		rc = history_get(h, id, &json, &len, err, sizeof err);
	history_close(h);
	if (rc) {
		print_err("history", rc == -ENOMEM ? "out of memory" : err);
		return exit_for(rc);
	}
	/* the bytes as stored, byte for byte; on a terminal, with control
	 * characters as JSON escapes (the same JSON, if it was JSON) */
	int ret = EXIT_OK;
	if (!strcmp(verb, "show")) {
		if (isatty(STDOUT_FILENO))
			write_json_for_terminal(stdout, json, len);
		else
			fwrite(json, 1, len, stdout);
	} else {
		struct afile af;
		rc = afile_open(&af, out);
		if (!rc) {
			if (fwrite(json, 1, len, af.f) != len) {
				afile_abort(&af);
				rc = -EIO;
			} else {
				rc = afile_commit(&af);
			}
		}
		if (rc) {
			fprintf(stderr, "pacer history: cannot write -o %s: %s\n", out, err_name(rc));
			ret = EXIT_RUNTIME;
		}
	}
	free(json);
	return ret;
}

/* pacer history FILE.db add RESULT.json: a saved result into the history
 * (created when missing), e.g. the run a CI gate just accepted. */
static int add_file(const char *db, const char *file)
{
	char err[1024];
	char *buf = NULL;
	size_t len = 0;
	int rc = file_read_all(file, RESULT_READ_CAP, &buf, &len);
	if (rc) {
		fprintf(stderr, "pacer history: %s: cannot read: %s\n", file_shown(file),
			rc == PACER_ETOOBIG ? "too big" : err_name(rc));
		return EXIT_USAGE;
	}
	/* checked first, so a message about the result names its file */
	struct loaded_result r;
	rc = result_read_mem(&r, buf, len, file_shown(file), err, sizeof err);
	if (rc) {
		free(buf);
		print_err("history", rc == -ENOMEM ? "out of memory" : err);
		return exit_for(rc);
	}
	result_free(&r);
	struct history_db *h;
	rc = history_open(&h, db, NULL, err, sizeof err);
	int64_t id = 0;
	if (!rc) {
		struct timespec now;
		clock_gettime(CLOCK_REALTIME, &now);
		struct history_meta m = {
			.command = "add",
			.recorded_ms = (int64_t)now.tv_sec * 1000 + now.tv_nsec / 1000000,
		};
		rc = history_add(h, &m, buf, len, &id, err, sizeof err);
		history_close(h);
	}
	free(buf);
	if (rc) {
		print_err("history", rc == -ENOMEM ? "out of memory" : err);
		return exit_for(rc);
	}
	printf("history: %s run %lld\n", db, (long long)id);
	return EXIT_OK;
}

/* --trend --limit N: the id of the N-th newest row. */
static int nth_row(void *arg, const struct history_row *r)
{
	*(int64_t *)arg = r->id;
	return 0;
}

int cmd_history(int argc, char **argv)
{
	const char *target = NULL, *scenario = NULL, *hash = NULL, *since = NULL, *until = NULL;
	const char *kind = NULL, *trend = NULL, *out = NULL;
	uint32_t limit = 0;
	bool help = false;
	struct opt tab[] = {
		{'h', "help", OPT_HELP, &help, NULL, NULL, "show this help", false},
		{0, "kind", OPT_STR, &kind, "run|ramp|compare", NULL, "only results of this kind", false},
		{0, "limit", OPT_U32, &limit, "N", "all", "at most N runs (the newest)", false},
		{'o', "out", OPT_STR, &out, "FILE", NULL, "export: write the result here (atomically)", false},
		{0, "scenario", OPT_STR, &scenario, "NAME", NULL, "only runs of this scenario", false},
		{0, "since", OPT_STR, &since, "DATE", NULL, "only runs recorded at or after DATE (2026-12-01, UTC)", false},
		{0, "table-hash", OPT_STR, &hash, "HEX", NULL, "only runs whose workload hash (as listed) or request-table hash starts so", false},
		{0, "target", OPT_STR, &target, "URL", NULL, "only runs against this target (as listed)", false},
		{0, "trend", OPT_STR, &trend, "METRIC", NULL, "list one metric, oldest first, marking runs not comparable with the newest", false},
		{0, "until", OPT_STR, &until, "DATE", NULL, "only runs recorded before DATE", false},
	};
	size_t ntab = sizeof tab / sizeof tab[0];
	const char *pos[4];
	struct opts_positionals args = {.what = "FILE.db [show|export ID | add RESULT.json]",
					.min = 1, .max = 3, .v = pos};
	int rc = opts_parse_cmd("history", tab, ntab, argc, argv, history_usage, &args);
	if (rc >= 0)
		return rc;
	size_t npos = args.n;
	char err[1024];
	const char *db = pos[0];
	if (npos > 1) {
		const char *verb = pos[1];
		if (strcmp(verb, "show") && strcmp(verb, "export") && strcmp(verb, "add")) {
			static const char *const words[] = {"show", "export", "add"};
			char dym[64];
			fprintf(stderr, "pacer history: '%s': expected show, export or add%s\n",
				verb, opts_did_you_mean(dym, sizeof dym, verb, words, 3));
			return EXIT_USAGE;
		}
		if (npos != 3) {
			fprintf(stderr, "pacer history: %s needs %s\n", verb,
				strcmp(verb, "add") ? "a run ID" : "a RESULT.json");
			return EXIT_USAGE;
		}
		if (!strcmp(verb, "add")) {
			if (out) {
				fprintf(stderr, "pacer history: add takes no -o\n");
				return EXIT_USAGE;
			}
			return add_file(db, pos[2]);
		}
		if (!strcmp(verb, "export") && !out) {
			fprintf(stderr, "pacer history: export needs -o FILE\n");
			return EXIT_USAGE;
		}
		if (!strcmp(verb, "show") && out) {
			fprintf(stderr, "pacer history: show prints to stdout; use export ID -o FILE\n");
			return EXIT_USAGE;
		}
		return show_or_export(db, verb, pos[2], out);
	}
	if (out) {
		fprintf(stderr, "pacer history: -o is for export ID -o FILE\n");
		return EXIT_USAGE;
	}
	struct list_ctx c = {.trend = HM_COUNT};
	if (trend) {
		int m = headline_metric_parse(trend);
		if (m < 0) {
			const char *names[HM_COUNT];
			for (int i = 0; i < HM_COUNT; i++)
				names[i] = headline_metric_name((enum headline_metric)i);
			char dym[64];
			fprintf(stderr,
				"pacer history: --trend '%s': expected one of " HEADLINE_METRIC_LIST "%s\n",
				trend, opts_did_you_mean(dym, sizeof dym, trend, names, HM_COUNT));
			return EXIT_USAGE;
		}
		c.trend = (enum headline_metric)m;
	}
	if (kind && strcmp(kind, "run") && strcmp(kind, "ramp") && strcmp(kind, "compare")) {
		static const char *const words[] = {"run", "ramp", "compare"};
		char dym[64];
		fprintf(stderr, "pacer history: --kind '%s': expected run, ramp or compare%s\n",
			kind, opts_did_you_mean(dym, sizeof dym, kind, words, 3));
		return EXIT_USAGE;
	}
	struct history_db *h;
	struct history_open_opts o = {.read_only = true};
	rc = history_open(&h, db, &o, err, sizeof err);
	if (rc) {
		print_err("history", err);
		return exit_for(rc);
	}
	struct history_filter f = {.target = target, .scenario = scenario, .table_hash = hash,
				   .since = since, .until = until, .kind = kind, .limit = limit};
	c.db = h;
	if (trend) {
		struct history_filter newest = f;
		newest.limit = 1;
		rc = history_list(h, &newest, ref_row, &c, err, sizeof err);
		if (!rc && limit) {
			/* the newest N, still printed oldest first */
			rc = history_list(h, &f, nth_row, &f.min_id, err, sizeof err);
			f.limit = 0;
		}
		f.oldest_first = true;
	}
	if (!rc)
		rc = history_list(h, &f, list_row, &c, err, sizeof err);
	if (c.have_ref)
		result_free(&c.ref);
	history_close(h);
	if (rc) {
		print_err("history", err);
		return exit_for(rc);
	}
	if (!c.rows)
		printf("no runs%s in %s\n",
		       target || scenario || hash || since || until || kind ? " match" : "", db);
	return EXIT_OK;
}

/* ---- pacer diff ----------------------------------------------------------- */

static const struct cli_example diff_examples[] = {
	{"pacer diff perf/all.db:prev perf/all.db:last", "the newest run against the one before"},
	{"pacer diff accepted.json new.json --fail-on 'p99>+10%,capacity<-5%,errors>+0.1pp'",
	 "a CI gate: exit 1 on a regression beyond noise"},
};

static const struct cli_exit diff_exits[] = {
	{0, "no --fail-on rule fired"},
	{1, "a --fail-on rule fired: a change beyond the noise and past its threshold (a regression)"},
	{2, "bad input, or the results are not comparable (without --force)"},
};

static const struct cli_help cli_help_diff = {
	.name = "diff",
	.summary = "two saved results side by side: changes beyond noise, a CI gate",
	.synopsis = "pacer diff OLD NEW [--noise 5%] [--fail-on RULES] [--force] [--json]",
	.description =
		"OLD and NEW are saved results (--out FILE) or runs of a history (FILE.db:ID, "
		"FILE.db:last, FILE.db:prev). Per metric: old, new, the change and whether "
		"it is beyond the noise (bootstrap over repetitions, else each side's "
		"percentile interval; errors: a two-proportion test). Results of another "
		"table hash, workload, protocol, hardware or pacer major version are not "
		"comparable.\n"
		"RULES: comma-separated, e.g. 'p99>+10%,capacity<-5%,errors>+0.1pp': a rule "
		"fires when the change is beyond the noise and past its threshold.",
	.examples = diff_examples,
	.n_examples = sizeof diff_examples / sizeof diff_examples[0],
	.exits = diff_exits,
	.n_exits = sizeof diff_exits / sizeof diff_exits[0],
	.see = "docs/history.md",
};

static void diff_usage(FILE *f, struct opt *tab, size_t n)
{
	cli_help_print(f, &cli_help_diff, tab, n);
}

static const char *verdict_of(const struct diff_row *r)
{
	if (r->method == DIFF_NONE)
		return "-";
	if (!r->significant)
		return "no significant change";
	return r->worse ? "worse" : "better";
}

static void fmt_change(char *out, size_t cap, const struct diff_row *r)
{
	if (r->m == HM_ERRORS)
		snprintf(out, cap, "%+.3gpp", r->delta);
	else if (isfinite(r->ratio))
		snprintf(out, cap, "%+.1f%%", (r->ratio - 1) * 100);
	else
		snprintf(out, cap, "-");
}

/* One metric's line of the diff's table. */
static void diff_row_text(const char *name, const struct diff_row *r)
{
	char a[32], b[32], ch[24], ci[40] = "-";
	fmt_change(ch, sizeof ch, r);
	if (isfinite(r->lo) && isfinite(r->hi))
		snprintf(ci, sizeof ci, "[%.3f, %.3f]", r->lo, r->hi);
	printf("  %-11s %12s %12s %9s  %-17s %-27s %s\n", name,
	       fmt_metric(a, sizeof a, r->m, r->old_v), fmt_metric(b, sizeof b, r->m, r->new_v), ch,
	       ci, diff_method_name(r->method), verdict_of(r));
}

/* "SRC (kind, started AT, TARGET, pacer V)" */
static void side_line(const char *what, const char *src, const struct loaded_result *r)
{
	struct history_headline h;
	history_headline_of(r, &h);
	printf("%s: %s (%s, started %s, %s, pacer %s)\n", what, SAFE(src), SAFE(h.kind),
	       SAFE(h.started_at), h.target[0] ? SAFE(h.target) : "no target",
	       SAFE(h.pacer_version));
}

static void diff_text(const struct loaded_result *ra, const struct loaded_result *rb,
		      const char *old_src, const char *new_src, const struct diff_result *d,
		      const struct diff_rule *rules, size_t nrules)
{
	side_line("old", old_src, ra);
	side_line("new", new_src, rb);
	if (d->comparable)
		printf("comparable: same kind, request table, workload, hardware and pacer major "
		       "version\n");
	else
		printf("NOT COMPARABLE: %s differs (old %s, new %s); shown because of --force\n",
		       SAFE(d->field), SAFE(d->old_s), SAFE(d->new_s));
	printf("\n  %-11s %12s %12s %9s  %-17s %-27s %s\n", "metric", "old", "new", "change",
	       "ratio 95% CI", "method", "verdict");
	for (size_t i = 0; i < d->n_rows; i++)
		diff_row_text(headline_metric_name(d->rows[i].m), &d->rows[i]);
	if (d->n_steps) {
		/* a session run's steps: each one's latency from its due time */
		printf("\n  %-11s %12s %12s %9s  %-17s %-27s %s\n", "step", "old", "new", "change",
		       "ratio 95% CI", "method", "verdict");
		for (size_t i = 0; i < d->n_steps; i++) {
			char name[160];
			snprintf(name, sizeof name, "%s p50", SAFE(d->steps[i].name));
			diff_row_text(name, &d->steps[i].p50);
			snprintf(name, sizeof name, "%s p99", SAFE(d->steps[i].name));
			diff_row_text(name, &d->steps[i].p99);
		}
	}
	for (size_t i = 0; i < nrules; i++) {
		const struct diff_rule *u = &rules[i];
		bool fired = diff_rule_fires(u, d);
		char mb[160];
		printf("%s %s%c%+g%s\n", fired ? "FAIL" : "ok  ",
		       SAFE(diff_rule_metric(u, mb, sizeof mb)), u->op,
		       u->pp ? u->threshold : u->threshold * 100, u->pp ? "pp" : "%");
	}
}

/* One metric of the diff as a JSON object. */
static void diff_row_json(struct jsonw *w, const char *name, const struct diff_row *r)
{
	jw_obj(w);
	jw_key(w, KEY_METRIC);
	jw_str(w, name);
	jw_key(w, "old");
	jw_dbl(w, r->old_v, 6);
	jw_key(w, "new");
	jw_dbl(w, r->new_v, 6);
	jw_key(w, KEY_RATIO);
	if (isfinite(r->ratio))
		jw_dbl(w, r->ratio, 6);
	else
		jw_null(w);
	jw_key(w, "delta");
	jw_dbl(w, r->delta, 6);
	jw_key(w, KEY_CI95_LOW);
	if (isfinite(r->lo))
		jw_dbl(w, r->lo, 6);
	else
		jw_null(w);
	jw_key(w, KEY_CI95_HIGH);
	if (isfinite(r->hi))
		jw_dbl(w, r->hi, 6);
	else
		jw_null(w);
	jw_key(w, KEY_METHOD);
	jw_str(w, diff_method_name(r->method));
	jw_key(w, KEY_SIGNIFICANT);
	jw_bool(w, r->significant);
	jw_key(w, KEY_VERDICT);
	jw_str(w, verdict_of(r));
	jw_obj_end(w);
}

static void diff_json(const char *old_src, const char *new_src, const struct diff_result *d,
		      const struct diff_rule *rules, size_t nrules, double noise)
{
	struct jsonw w;
	jw_init(&w, stdout, 2);
	jw_obj(&w);
	jw_key(&w, "old");
	jw_str(&w, old_src);
	jw_key(&w, "new");
	jw_str(&w, new_src);
	jw_key(&w, KEY_NOISE_PCT);
	jw_dbl(&w, noise * 100, 3);
	jw_key(&w, "comparable");
	jw_bool(&w, d->comparable);
	jw_key(&w, "differs");
	if (d->comparable) {
		jw_null(&w);
	} else {
		jw_obj(&w);
		jw_key(&w, "field");
		jw_str(&w, d->field);
		jw_key(&w, "old");
		jw_str(&w, d->old_s);
		jw_key(&w, "new");
		jw_str(&w, d->new_s);
		jw_obj_end(&w);
	}
	jw_key(&w, "metrics");
	jw_arr(&w);
	for (size_t i = 0; i < d->n_rows; i++)
		diff_row_json(&w, headline_metric_name(d->rows[i].m), &d->rows[i]);
	jw_arr_end(&w);
	/* a session run's steps both sides have: [{name, p50: {...}, p99: {...}}] */
	jw_key(&w, KEY_STEPS);
	jw_arr(&w);
	for (size_t i = 0; i < d->n_steps; i++) {
		jw_obj(&w);
		jw_key(&w, KEY_NAME);
		jw_str(&w, d->steps[i].name);
		jw_key(&w, "p50");
		diff_row_json(&w, "p50", &d->steps[i].p50);
		jw_key(&w, "p99");
		diff_row_json(&w, "p99", &d->steps[i].p99);
		jw_obj_end(&w);
	}
	jw_arr_end(&w);
	jw_key(&w, KEY_RULES);
	jw_arr(&w);
	for (size_t i = 0; i < nrules; i++) {
		char txt[224], mb[160];
		snprintf(txt, sizeof txt, "%s%c%+g%s", diff_rule_metric(&rules[i], mb, sizeof mb),
			 rules[i].op, rules[i].pp ? rules[i].threshold : rules[i].threshold * 100,
			 rules[i].pp ? "pp" : "%");
		jw_obj(&w);
		jw_key(&w, KEY_RULE);
		jw_str(&w, txt);
		jw_key(&w, KEY_FIRED);
		jw_bool(&w, diff_rule_fires(&rules[i], d));
		jw_obj_end(&w);
	}
	jw_arr_end(&w);
	jw_obj_end(&w);
	fputc('\n', stdout);
}

int cmd_diff(int argc, char **argv)
{
	const char *noise_arg = NULL, *fail_on = NULL;
	bool force = false, json = false, help = false;
	struct opt tab[] = {
		{0, "fail-on", OPT_STR, &fail_on, "RULES", NULL, "exit 1 when a rule fires, e.g. 'p99>+10%,capacity<-5%,errors>+0.1pp' (a session step: 'step:login.p99>+10%')", false},
		{0, "force", OPT_FLAG, &force, NULL, NULL, "print (and gate) results that are not comparable", false},
		{'h', "help", OPT_HELP, &help, NULL, NULL, "show this help", false},
		{0, "json", OPT_FLAG, &json, NULL, NULL, "print the diff as JSON", false},
		{0, "noise", OPT_STR, &noise_arg, "P%", "5%", "changes smaller than this are not called significant", false},
	};
	size_t ntab = sizeof tab / sizeof tab[0];
	const char *pos[3];
	struct opts_positionals args = {.what = "OLD and NEW (files or FILE.db:ID)", .min = 2,
					.max = 2, .v = pos};
	int rc = opts_parse_cmd("diff", tab, ntab, argc, argv, diff_usage, &args);
	if (rc >= 0)
		return rc;
	char err[1024];
	double noise = 0.05;
	if (noise_arg) {
		if (units_parse_percent(noise_arg, &noise) || noise < 0 || noise >= 100) {
			fprintf(stderr, "pacer diff: --noise '%s': expected a percent like 5%%\n",
				noise_arg);
			return EXIT_USAGE;
		}
		noise /= 100;
	}
	struct diff_rule rules[DIFF_MAX_RULES];
	size_t nrules = 0;
	if (fail_on && diff_rules_parse(fail_on, rules, DIFF_MAX_RULES, &nrules, err, sizeof err)) {
		print_err("diff", err);
		return EXIT_USAGE;
	}
	if ((!strcmp(pos[0], "-") && !opts_stdin_take("diff", "OLD -")) ||
	    (!strcmp(pos[1], "-") && !opts_stdin_take("diff", "NEW -")))
		return EXIT_USAGE;
	struct loaded_result a, b;
	rc = cli_result_load_src(&a, pos[0], err, sizeof err);
	if (rc) {
		print_err("diff", err);
		return exit_for(rc);
	}
	rc = cli_result_load_src(&b, pos[1], err, sizeof err);
	if (rc) {
		print_err("diff", err);
		result_free(&a);
		return exit_for(rc);
	}
	static struct diff_result d;
	diff_results(&a, &b, noise, &d);
	if (!d.comparable && !force) {
		fprintf(stderr,
			"pacer diff: not comparable: %s differs (old %s, new %s); a changed "
			"workload, hardware or harness is a new benchmark (--force prints the diff "
			"anyway)\n",
			SAFE(d.field), SAFE(d.old_s), SAFE(d.new_s));
		result_free(&a);
		result_free(&b);
		return EXIT_USAGE;
	}
	if (json)
		diff_json(pos[0], pos[1], &d, rules, nrules, noise);
	else
		diff_text(&a, &b, pos[0], pos[1], &d, rules, nrules);
	result_free(&a);
	result_free(&b);
	for (size_t i = 0; i < nrules; i++)
		if (diff_rule_fires(&rules[i], &d))
			return EXIT_SLO_FAILED;
	return EXIT_OK;
}
