/* pacer compare — A/B (or more) variants measured interleaved, rotating the
 * order each repetition (A B, B A, ...) so drift of the machine hits every
 * variant alike; medians, ranges, and the ratio of each variant to the first
 * with a bootstrap 95 % confidence interval over repetitions. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/opts.h"
#include "cli/setup.h"
#include "result/gencheck.h"
#include "engine/engine.h"
#include "plan/ramp.h"
#include "result/ramp.h"
#include "report/json_parts.h"
#include "report/workload_report.h"
#include "stats/summary.h"
#include "target/plan.h"
#include "util/afile.h"
#include "util/clock.h"
#include "util/err.h"
#include "util/jsonw.h"
#include "util/sysinfo.h"
#include "util/units.h"

#define MAX_VARIANTS 8
#define MAX_REPEAT 101

/* The figures compared, per repetition. */
enum cmp_metric { CM_RATE, CM_P50, CM_P90, CM_P99, CM_P99_9, CM_MAX, CM_COUNT };
static const char *metric_names[CM_COUNT] = {"throughput", "p50", "p90", "p99", "p99.9",
						   "max"};
static const char *metric_keys[CM_COUNT] = {"achieved_per_s", "p50_us", "p90_us",
						  "p99_us", "p99_9_us", "max_us"};

struct variant {
	char name[32];
	const char *spec;     /* URL, or @PLAN for an embedded target */
	struct cli_setup setup;
	struct run_plan plan; /* per variant: its URL, requests */
	struct engine *e;
	double v[CM_COUNT][MAX_REPEAT]; /* per repetition; latency in us */
	uint64_t errors[MAX_REPEAT];
	uint64_t completed[MAX_REPEAT];
	bool interrupted;
	size_t limited_reps;        /* repetitions the generator self-check flagged */
	char limited_by[96];        /* the checks that fired, comma-separated */
};

/* Ramp mode: the ramp every repetition runs (rates, SLO, refine). */
static struct ramp_plan ramp_rp;
static bool ramp_mode;

/* --lag-limit for the generator self-check (src/result/gencheck.h). */
static uint64_t lag_limit_ns;

/* Run the generator self-check on one repetition (run mode) or a ramp's
 * decisive step (against the ramp's SLO), and remember what fired. The
 * target's CPU is not probed in compare: the rate-shortfall check blames
 * from the engine's waits alone. */
static void check_generator(struct variant *v, const struct run_result *r)
{
	struct gen_verdict gv;
	gencheck_eval(r, lag_limit_ns, 0, ramp_mode ? &ramp_rp.slo : NULL, &gv);
	if (!gv.flagged)
		return;
	v->limited_reps++;
	for (int k = 0; k < GENCHECK_N; k++) {
		if (!gv.c[k].fired || strstr(v->limited_by, gv.c[k].name))
			continue;
		size_t n = strlen(v->limited_by);
		snprintf(v->limited_by + n, sizeof v->limited_by - n, "%s%s", n ? ", " : "",
			 gv.c[k].name);
	}
}

static void usage(FILE *f, struct opt *tab, size_t n)
{
	fprintf(f, "usage: pacer compare --variant A=URL --variant B=URL [options]\n"
		   "       (a variant may be @PLAN: pacer's embedded target with that plan)\n\n"
		   "Runs the variants interleaved, rotating their order each repetition, and reports "
		   "each\nvariant's medians and its ratio to the first with a 95 %% confidence "
		   "interval.\n\n");
	opts_help(f, tab, n);
	fprintf(f, "\nExit codes: 0 finished, 2 usage error, 3 runtime failure, 4 generator-limited "
		   "(results written), 130 interrupted. See docs/compare.md.\n");
}

static int parse_variant(const char *arg, struct variant *v)
{
	const char *eq = strchr(arg, '=');
	if (!eq || eq == arg || (size_t)(eq - arg) >= sizeof v->name || !eq[1]) {
		fprintf(stderr, "pacer compare: --variant '%s': expected NAME=URL or NAME=@PLAN\n", arg);
		return EXIT_USAGE;
	}
	memcpy(v->name, arg, (size_t)(eq - arg));
	v->name[eq - arg] = '\0';
	v->spec = eq + 1;
	return 0;
}

/* Store one repetition's figures and print its row. */
static void keep(struct variant *v, size_t rep, const struct rep_figure *f, bool quiet)
{
	v->v[CM_RATE][rep] = f->achieved_per_s;
	v->v[CM_P50][rep] = (double)f->p50_ns / 1e3;
	v->v[CM_P90][rep] = (double)f->p90_ns / 1e3;
	v->v[CM_P99][rep] = (double)f->p99_ns / 1e3;
	v->v[CM_P99_9][rep] = (double)f->p99_9_ns / 1e3;
	v->v[CM_MAX][rep] = (double)f->max_ns / 1e3;
	v->errors[rep] = f->errors;
	v->completed[rep] = f->completed;
	if (!quiet) {
		char a[32], b[32], c[32], d[32];
		printf("  %-4zu %-10s %12s %10s %10s %10s  %llu\n", rep + 1, v->name,
		       units_fmt_thousands(a, sizeof a, v->v[CM_RATE][rep], 1),
		       units_fmt_duration(b, sizeof b, v->v[CM_P50][rep] * 1e3),
		       units_fmt_duration(c, sizeof c, v->v[CM_P99][rep] * 1e3),
		       units_fmt_duration(d, sizeof d, v->v[CM_MAX][rep] * 1e3),
		       (unsigned long long)v->errors[rep]);
		fflush(stdout);
	}
}

/* Ramp mode: one repetition is a whole ramp; its figure is the capacity
 * (the highest passing offered rate, 0 if none passed) and the latency at
 * that step. */
static int measure_ramp(struct variant *v, size_t rep, bool quiet, bool *interrupted)
{
	struct ramp_plan rp = ramp_rp;
	rp.run = v->plan;
	rp.run.quiet = true;
	struct ramp_result res = {0};
	int rc = ramp_execute(v->e, &v->setup, &rp, &res, interrupted);
	if (rc) {
		ramp_result_free(&res);
		return rc;
	}
	ramp_result_summarize(&res, 0);
	struct rep_figure f = {0};
	if (res.highest_pass >= 0) {
		const struct ramp_step *st = &res.steps[res.highest_pass];
		rep_figure_of(&st->run, &f);
		f.achieved_per_s = st->offered_per_s;
	}
	/* the capacity is decided by the first failing step */
	for (size_t i = 0; i < res.n_steps; i++) {
		if (!res.steps[i].verdict.pass) {
			check_generator(v, &res.steps[i].run);
			break;
		}
	}
	v->interrupted = v->interrupted || res.interrupted;
	ramp_result_free(&res);
	keep(v, rep, &f, quiet);
	return 0;
}

/* One repetition of one variant: a warm-up + measured step on its session. */
static int measure(struct variant *v, const struct engine_step *step, size_t rep, bool quiet,
		   bool *interrupted)
{
	if (ramp_mode)
		return measure_ramp(v, rep, quiet, interrupted);
	int rc = engine_step_start(v->e, step);
	if (rc) {
		fprintf(stderr, "pacer compare: variant %s: cannot start: %s\n", v->name, err_name(rc));
		return EXIT_RUNTIME;
	}
	*interrupted = cli_wait_engine(v->e, false) || *interrupted;
	struct run_result r;
	rc = engine_step_finish(v->e, &r);
	if (rc) {
		run_result_free(&r);
		fprintf(stderr, "pacer compare: collecting results failed: %s\n", err_name(rc));
		return EXIT_RUNTIME;
	}
	struct rep_figure f;
	rep_figure_of(&r, &f);
	check_generator(v, &r);
	v->interrupted = v->interrupted || r.interrupted || *interrupted;
	keep(v, rep, &f, quiet);
	run_result_free(&r);
	return 0;
}

/* For latency a higher value is worse; for throughput a lower one. */
static const char *direction(enum cmp_metric m, const struct ratio_ci *ci)
{
	if (!ci->defined || !ci->significant)
		return "no significant difference";
	bool higher = ci->lo > 1.0;
	if (m == CM_RATE)
		return higher ? "faster" : "slower";
	return higher ? "slower" : "faster";
}

static void print_summary(struct variant *vs, size_t nv, size_t reps, double noise)
{
	printf("\n  medians over %zu repetitions (min-max):\n", reps);
	for (size_t i = 0; i < nv; i++) {
		printf("  %-10s", vs[i].name);
		for (int m = 0; m < CM_COUNT; m++) {
			struct summary s;
			summary_of(vs[i].v[m], reps, &s);
			char a[32], b[32], c[32];
			if (m == CM_RATE)
				printf("  %s/s (%s-%s)", units_fmt_thousands(a, sizeof a, s.median, 1),
				       units_fmt_thousands(b, sizeof b, s.min, 1),
				       units_fmt_thousands(c, sizeof c, s.max, 1));
			else if (m == CM_P50 || m == CM_P99)
				printf("  %s %s (%s-%s)", metric_names[m],
				       units_fmt_duration(a, sizeof a, s.median * 1e3),
				       units_fmt_duration(b, sizeof b, s.min * 1e3),
				       units_fmt_duration(c, sizeof c, s.max * 1e3));
		}
		printf("\n");
	}
	for (size_t i = 1; i < nv; i++) {
		printf("\n  %s / %s (95%% CI, bootstrap over repetitions; within %.0f%% is noise):\n",
		       vs[i].name, vs[0].name, noise * 100);
		for (int m = 0; m < CM_COUNT; m++) {
			struct ratio_ci ci;
			summary_ratio_ci(vs[0].v[m], reps, vs[i].v[m], reps, 2000, 1 + (uint64_t)m, noise, &ci);
			if (!ci.defined) {
				printf("    %-10s  -\n", metric_names[m]);
				continue;
			}
			printf("    %-10s  %.3f [%.3f, %.3f]  ", metric_names[m], ci.ratio, ci.lo, ci.hi);
			if (ci.significant)
				printf("%s is %s\n", vs[i].name, direction((enum cmp_metric)m, &ci));
			else
				printf("no significant difference\n");
		}
	}
}

static void json_summary(struct jsonw *j, const double *v, size_t n, double scale)
{
	struct summary s;
	summary_of(v, n, &s);
	jw_obj(j);
	jw_key(j, "median");
	jw_dbl(j, s.median * scale, 3);
	jw_key(j, "min");
	jw_dbl(j, s.min * scale, 3);
	jw_key(j, "max");
	jw_dbl(j, s.max * scale, 3);
	jw_obj_end(j);
}

static int write_json(FILE *f, const struct report_ctx *ctx, struct variant *vs, size_t nv,
		      size_t reps, double noise, const struct run_plan *plan, uint64_t wall0,
		      bool interrupted)
{
	struct jsonw jj, *j = &jj;
	jw_init(j, f, 1);
	rj_head(j, ctx, "compare", wall0, interrupted);
	jw_key(j, "plan");
	jw_obj(j);
	rj_plan_fields(j, plan);
	jw_key(j, "repeat");
	jw_u64(j, reps);
	jw_key(j, "order");
	jw_str(j, "rotating");
	jw_key(j, "noise_pct");
	jw_dbl(j, noise * 100, 3);
	jw_key(j, "ramp");
	if (ramp_mode) {
		jw_obj(j);
		jw_key(j, "steps_per_s");
		jw_arr(j);
		for (size_t i = 0; i < ramp_rp.n_rates; i++)
			jw_dbl(j, ramp_rp.rates[i], 3);
		jw_arr_end(j);
		jw_key(j, "slo");
		jw_str(j, ramp_rp.slo_expr);
		jw_key(j, "refine");
		jw_bool(j, ramp_rp.refine);
		jw_key(j, "step_duration_s");
		jw_dbl(j, (double)ramp_rp.step_ns / 1e9, 6);
		jw_obj_end(j);
	} else {
		jw_null(j);
	}
	jw_obj_end(j);
	/* the order the measurements ran in: A B, B A, ... */
	jw_key(j, "sequence");
	int indent = j->indent;
	jw_arr(j);
	j->indent = 0;
	for (size_t r = 0; r < reps; r++)
		for (size_t k = 0; k < nv; k++)
			jw_str(j, vs[(r + k) % nv].name);
	j->indent = indent;
	jw_arr_end(j);
	rj_env(j, ctx->env);
	jw_key(j, "variants");
	jw_arr(j);
	for (size_t i = 0; i < nv; i++) {
		struct variant *v = &vs[i];
		jw_obj(j);
		jw_key(j, "name");
		jw_str(j, v->name);
		jw_key(j, "target");
		jw_str(j, v->spec);
		jw_key(j, "url");
		jw_str(j, v->plan.url_str);
		jw_key(j, "mode");
		jw_str(j, v->setup.srv ? "self_contained" : "live");
		rj_workload(j, v->plan.workload, v->plan.order_random);
		jw_key(j, "generator_limited_repetitions");
		jw_u64(j, v->limited_reps);
		jw_key(j, "repetitions");
		jw_arr(j);
		for (size_t r = 0; r < reps; r++) {
			int saved = j->indent;
			jw_obj(j);
			j->indent = 0;
			for (int m = 0; m < CM_COUNT; m++) {
				jw_key(j, metric_keys[m]);
				jw_dbl(j, v->v[m][r], 3);
			}
			jw_key(j, "completed");
			jw_u64(j, v->completed[r]);
			jw_key(j, "errors");
			jw_u64(j, v->errors[r]);
			jw_obj_end(j);
			j->indent = saved;
		}
		jw_arr_end(j);
		jw_key(j, "summary");
		jw_obj(j);
		for (int m = 0; m < CM_COUNT; m++) {
			jw_key(j, metric_keys[m]);
			json_summary(j, v->v[m], reps, 1);
		}
		jw_obj_end(j);
		jw_obj_end(j);
	}
	jw_arr_end(j);
	jw_key(j, "ratios");
	jw_arr(j);
	for (size_t i = 1; i < nv; i++) {
		for (int m = 0; m < CM_COUNT; m++) {
			struct ratio_ci ci;
			summary_ratio_ci(vs[0].v[m], reps, vs[i].v[m], reps, 2000, 1 + (uint64_t)m, noise, &ci);
			jw_obj(j);
			jw_key(j, "metric");
			jw_str(j, metric_names[m]);
			jw_key(j, "variant");
			jw_str(j, vs[i].name);
			jw_key(j, "baseline");
			jw_str(j, vs[0].name);
			jw_key(j, "ratio");
			if (ci.defined)
				jw_dbl(j, ci.ratio, 4);
			else
				jw_null(j);
			jw_key(j, "ci95_low");
			if (ci.defined)
				jw_dbl(j, ci.lo, 4);
			else
				jw_null(j);
			jw_key(j, "ci95_high");
			if (ci.defined)
				jw_dbl(j, ci.hi, 4);
			else
				jw_null(j);
			jw_key(j, "significant");
			jw_bool(j, ci.defined && ci.significant);
			jw_key(j, "verdict");
			jw_str(j, direction((enum cmp_metric)m, &ci));
			jw_obj_end(j);
		}
	}
	jw_arr_end(j);
	struct report_warnings w = {0};
	for (size_t i = 0; i < nv && w.n < REPORT_WARN_CAP; i++)
		if (vs[i].setup.srv)
			snprintf(w.msg[w.n++], REPORT_WARN_LEN,
				 "variant %.31s is self-contained: driver and target share one process and "
				 "machine",
				 vs[i].name);
	if (reps < 5 && w.n < REPORT_WARN_CAP)
		snprintf(w.msg[w.n++], REPORT_WARN_LEN,
			 "only %zu repetitions: confidence intervals from so few are coarse", reps);
	if (interrupted && w.n < REPORT_WARN_CAP)
		snprintf(w.msg[w.n++], REPORT_WARN_LEN, "interrupted: the comparison was stopped early");
	for (size_t i = 0; i < nv && w.n < REPORT_WARN_CAP; i++)
		if (vs[i].limited_reps)
			snprintf(w.msg[w.n++], REPORT_WARN_LEN,
				 "generator limited in %zu of %zu repetitions of variant %.31s (%s): its "
				 "figures may be pacer's, not the target's; add --threads or run pacer on "
				 "another machine",
				 vs[i].limited_reps, reps, vs[i].name, vs[i].limited_by);
	rj_warnings(j, &w);
	jw_obj_end(j);
	return ferror(f) ? -1 : 0;
}

int cmd_compare(int argc, char **argv)
{
	static struct variant vs[MAX_VARIANTS];
	memset(vs, 0, sizeof vs);
	struct run_plan plan;
	plan_defaults(&plan);
	plan.argc = argc;
	plan.argv = argv;
	plan.duration_ns = 5 * NS_PER_S;
	plan.warmup_ns = NS_PER_S;
	struct opt_list variants = {0}, headers = {0};
	const char *arrival = NULL, *body_arg = NULL, *noise_arg = NULL, *steps = NULL,
		   *slo = NULL, *precision = NULL;
	uint64_t step_ns = 5 * NS_PER_S, step_warmup_ns = NS_PER_S;
	bool refine = false;
	double noise = 0.02;
	uint32_t repeat = 5, target_threads = 0;
	bool help = false;
	const char *report_dir = NULL;
	char report_json[4096];
	bool limited_ok = false;
	lag_limit_ns = 0;
	struct opt tab[] = {
		{0, "arrival", OPT_STR, &arrival, "constant|poisson", "constant", "spacing of due times (open loop)", false},
		{0, "body", OPT_STR, &body_arg, "DATA|@FILE", NULL, "request body, literal or from a file", false},
		{'c', "connections", OPT_U32, &plan.connections, "N", "64", "open loop: most connections per variant (closed loop: = --concurrency)", false},
		{0, "concurrency", OPT_U32, &plan.concurrency, "P", "10", "closed loop: connections per variant", false},
		{'d', "duration", OPT_DURATION, &plan.duration_ns, "D", "5s", "measured length of each repetition", false},
		{'H', "header", OPT_STRLIST, &headers, "'Name: value'", NULL, "extra request header (repeatable)", false},
		{'h', "help", OPT_HELP, &help, NULL, NULL, "show this help", false},
		{'X', "method", OPT_STR, &plan.method, "M", "GET", "request method", false},
		{0, "noise", OPT_STR, &noise_arg, "P%", "2%", "differences smaller than this are not called significant", false},
		{'o', "out", OPT_STR, &plan.out_path, "FILE", NULL, "write the JSON result", false},
		{'q', "quiet", OPT_FLAG, &plan.quiet, NULL, NULL, "no table", false},
		{'r', "rate", OPT_RATE, &plan.rate_per_s, "R", NULL, "open loop at R req/s (else closed loop: throughput compared)", false},
		{0, "precision", OPT_STR, &precision, "P%", "5%", "ramp mode, --refine: stop when pass and fail are this close", false},
		{0, "refine", OPT_FLAG, &refine, NULL, NULL, "ramp mode: bisect to the capacity", false},
		{0, "repeat", OPT_U32, &repeat, "N", "5", "repetitions per variant", false},
		{0, "seed", OPT_U64, &plan.seed, "S", "1", "seed of Poisson schedules", false},
		{0, "slo", OPT_STR, &slo, "EXPR", NULL, "ramp mode: pass condition of a step (docs/slo.md)", false},
		{0, "spin", OPT_DURATION, &plan.spin_ns, "D", "100us", "poll instead of sleeping this close to a due time", false},
		{0, "step-duration", OPT_DURATION, &step_ns, "D", "5s", "ramp mode: measured length of each step", false},
		{0, "step-warmup", OPT_DURATION, &step_warmup_ns, "D", "1s", "ramp mode: warm-up of each step", false},
		{0, "steps", OPT_STR, &steps, "R1,R2,...", NULL, "ramp mode: each repetition is a ramp over these rates; capacity is compared", false},
		{0, "target-threads", OPT_U32, &target_threads, "N", "1", "threads of embedded (@PLAN) targets", false},
		{'t', "threads", OPT_U32, &plan.threads, "T", "1", "worker threads per variant", false},
		{0, "timeout", OPT_DURATION, &plan.timeout_ns, "D", "10s", "per-request timeout", false},
		{0, "variant", OPT_STRLIST, &variants, "NAME=URL|NAME=@PLAN", NULL, "a variant (repeatable, at least 2; the first is the baseline)", false},
		{'w', "warmup", OPT_DURATION, &plan.warmup_ns, "D", "1s", "warm-up of each repetition, not counted", false},
		{0, "lag-limit", OPT_DURATION, &lag_limit_ns, "D", "1ms", "generator check: loop-lag p99 above this flags a repetition generator-limited", false},
		{0, "limited-ok", OPT_FLAG, &limited_ok, NULL, NULL, "exit 0 even when a repetition is flagged generator-limited (default: exit 4)", false},
		{0, "report-dir", OPT_STR, &report_dir, "DIR", NULL, "also write Markdown, HTML, text, CSV, hgrm, hlog and SVG charts into DIR (docs/report.md)", false},
		CLI_TRANSPORT_OPTS(plan),
	};
	size_t ntab = sizeof tab / sizeof tab[0];
	char err[512];
	size_t nv = 0;
	const char *nourl = NULL;
	int ret = cli_parse_args("compare", tab, ntab, argc, argv, usage, &nourl);
	if (ret >= 0)
		goto out;
	ret = EXIT_USAGE;
	if (cli_report_dir_prepare("compare", report_dir, &plan.out_path, report_json,
				   sizeof report_json))
		goto out;
	if (nourl) {
		fprintf(stderr, "pacer compare: targets are given with --variant NAME=URL, not '%s'\n", nourl);
		goto out;
	}
	if (variants.n < 2 || variants.n > MAX_VARIANTS) {
		fprintf(stderr, "pacer compare: give between 2 and %d --variant NAME=URL\n", MAX_VARIANTS);
		goto out;
	}
	if (repeat < 1 || repeat > MAX_REPEAT) {
		fprintf(stderr, "pacer compare: --repeat %u: between 1 and %d\n", repeat, MAX_REPEAT);
		goto out;
	}
	if (cli_parse_arrival("compare", arrival, &plan))
		goto out;
	if (noise_arg) {
		if (units_parse_percent(noise_arg, &noise)) {
			fprintf(stderr, "pacer compare: --noise '%s': expected a percent like 2%%\n",
				noise_arg);
			goto out;
		}
		noise /= 100;
	}
	ramp_mode = steps != NULL;
	if (ramp_mode) {
		memset(&ramp_rp, 0, sizeof ramp_rp);
		if (ramp_parse_steps(steps, ramp_rp.rates, RAMP_MAX_STEPS, &ramp_rp.n_rates, err,
				     sizeof err)) {
			fprintf(stderr, "pacer compare: %s\n", err);
			goto out;
		}
		if (!slo) {
			fprintf(stderr, "pacer compare: --steps needs --slo (what a passing step is)\n");
			goto out;
		}
		if (slo_parse(&ramp_rp.slo, slo, NULL, 0, err, sizeof err)) {
			fprintf(stderr, "pacer compare: --slo: %s\n", err);
			goto out;
		}
		ramp_rp.slo_expr = slo;
		ramp_rp.precision = 0.05;
		if (precision && (units_parse_percent(precision, &ramp_rp.precision) ||
				  ramp_rp.precision <= 0)) {
			fprintf(stderr, "pacer compare: --precision '%s': expected a percent like 5%%\n",
				precision);
			goto out;
		}
		if (precision)
			ramp_rp.precision /= 100;
		ramp_rp.refine = refine;
		ramp_rp.step_ns = step_ns;
		ramp_rp.step_warmup_ns = step_warmup_ns;
		if (opts_given(tab, ntab, "rate")) {
			fprintf(stderr, "pacer compare: give --rate or --steps, not both\n");
			goto out;
		}
		plan.rate_per_s = ramp_rp.rates[0];
		metric_names[CM_RATE] = "capacity";
		metric_keys[CM_RATE] = "capacity_per_s";
	}
	plan.open_loop = opts_given(tab, ntab, "rate") || ramp_mode;
	if (!plan.open_loop && opts_given(tab, ntab, "connections") &&
	    !opts_given(tab, ntab, "concurrency"))
		plan.concurrency = plan.connections;
	plan.drain_ns = plan.timeout_ns;
	plan.duration_given = true;
	plan.headers = headers.v;
	plan.n_headers = headers.n;
	if (plan_validate(&plan, err, sizeof err)) {
		fprintf(stderr, "pacer compare: %s\n", err);
		goto out;
	}
	for (size_t i = 0; i < variants.n; i++) {
		if (parse_variant(variants.v[i], &vs[i]))
			goto out;
		for (size_t k = 0; k < i; k++)
			if (strcmp(vs[k].name, vs[i].name) == 0) {
				fprintf(stderr, "pacer compare: variant name '%s' given twice\n", vs[i].name);
				goto out;
			}
		nv++;
	}
	for (size_t i = 0; i < nv; i++) {
		struct variant *v = &vs[i];
		v->plan = plan;
		v->setup = (struct cli_setup){.cmd = "compare", .body_arg = body_arg,
					      .target_threads = target_threads};
		if (v->spec[0] == '@')
			v->setup.self_contained = v->spec + 1;
		else
			v->setup.url_arg = v->spec;
		ret = cli_setup_prepare(&v->setup, &v->plan);
		if (ret)
			goto out;
	}

	sigset_t set, old;
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigprocmask(SIG_BLOCK, &set, &old);
	signal(SIGPIPE, SIG_IGN);
	uint64_t wall0 = clock_wall_ns();
	for (size_t i = 0; i < nv; i++) {
		struct engine_cfg cfg;
		cli_setup_engine_cfg(&vs[i].setup, &vs[i].plan, &cfg);
		int rc = engine_open(&vs[i].e, &cfg);
		if (rc) {
			fprintf(stderr, "pacer compare: cannot start: %s\n", err_name(rc));
			ret = EXIT_RUNTIME;
			goto restore;
		}
	}
	struct engine_step step = {
		.rate_per_s = plan.rate_per_s,
		.warmup_ns = plan.warmup_ns,
		.duration_ns = plan.duration_ns,
		.drain_ns = plan.drain_ns,
	};
	if (!plan.quiet) {
		printf("pacer compare: %zu variants, %u repetitions each, order rotating (", nv, repeat);
		for (size_t i = 0; i < nv; i++)
			printf("%s%s", i ? " " : "", vs[i].name);
		printf(", then ");
		for (size_t i = 0; i < nv; i++)
			printf("%s%s", i ? " " : "", vs[(i + 1) % nv].name);
		printf(", ...)\n  %s; %.1fs warm-up + %.1fs measured per repetition\n\n",
		       plan.open_loop ? "open loop" : "closed loop", (double)plan.warmup_ns / 1e9,
		       (double)plan.duration_ns / 1e9);
		printf("  %-4s %-10s %12s %10s %10s %10s  %s\n", "rep", "variant", ramp_mode ? "capacity/s" : "achieved/s", "p50",
		       "p99", "max", "errors");
	}
	bool interrupted = false;
	size_t reps = 0;
	for (size_t r = 0; r < repeat && !interrupted; r++) {
		for (size_t k = 0; k < nv && !interrupted; k++) {
			struct variant *v = &vs[(r + k) % nv]; /* rotate: A B, B A, ... */
			ret = measure(v, &step, r, plan.quiet, &interrupted);
			if (ret)
				goto restore;
		}
		if (!interrupted)
			reps = r + 1;
	}
	if (!plan.quiet && reps)
		print_summary(vs, nv, reps, noise);

	struct sysinfo_facts env;
	sysinfo_read(&env);
	bool any_sc = false;
	for (size_t i = 0; i < nv; i++)
		any_sc = any_sc || vs[i].setup.srv;
	struct report_ctx ctx = {.plan = &plan, .env = &env,
				 .mode = any_sc ? "self_contained" : "live",
				 .version = PACER_VERSION, .commit = PACER_COMMIT};
	ret = interrupted ? EXIT_INTERRUPTED : EXIT_OK;
	for (size_t i = 0; i < nv && !interrupted && !limited_ok; i++)
		if (vs[i].limited_reps)
			ret = EXIT_GENERATOR_LIMITED;
	if (!plan.quiet)
		for (size_t i = 0; i < nv; i++)
			if (vs[i].limited_reps)
				printf("  warning: variant %s: generator limited in %zu of %zu repetitions "
				       "(%s)\n",
				       vs[i].name, vs[i].limited_reps, reps, vs[i].limited_by);
	if (plan.out_path) {
		struct afile af;
		int rc = afile_open(&af, plan.out_path);
		if (!rc) {
			rc = write_json(af.f, &ctx, vs, nv, reps, noise, &plan, wall0, interrupted);
			if (rc)
				afile_abort(&af);
			else
				rc = afile_commit(&af);
		}
		if (rc) {
			fprintf(stderr, "pacer compare: cannot write --out %s: %s\n", plan.out_path,
				err_name(rc));
			ret = EXIT_RUNTIME;
		} else if (cli_report_dir_write("compare", report_dir, plan.out_path)) {
			ret = EXIT_RUNTIME;
		}
	}
restore:
	for (size_t i = 0; i < nv; i++) {
		engine_close(vs[i].e);
		vs[i].e = NULL;
	}
	sigprocmask(SIG_SETMASK, &old, NULL);
out:
	for (size_t i = 0; i < nv; i++)
		cli_setup_release(&vs[i].setup);
	opt_list_free(&variants);
	opt_list_free(&headers);
	return ret;
}
