/* pacer run — options → plan → engine → reports. The only layer that
 * touches argv, stdout, signals and exit codes. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/history_io.h"
#include "cli/options.h"
#include "cli/opts.h"
#include "cli/report_io.h"
#include "cli/run_hooks.h"
#include "cli/setup.h"
#include "target/plan.h"
#include "engine/engine.h"
#include "net/sock.h"
#include "plan/inspect.h"
#include "plan/plan.h"
#include "plan/slo.h"
#include "result/verdict.h"
#include "report/report.h"
#include "report/usage_report.h"
#include "stats/hist_io.h"
#include "util/afile.h"
#include "util/clock.h"
#include "util/err.h"
#include "util/sysinfo.h"
#include "util/units.h"

static void usage(FILE *f, struct opt *tab, size_t n)
{
	fprintf(f, "usage: pacer run URL [options]\n"
		   "       pacer run --self-contained[=PLAN] [/path] [options]\n\n"
		   "Open loop with --rate (latency from each request's scheduled time), closed loop "
		   "without.\n\n");
	opts_help(f, tab, n);
	fprintf(f, "\nExit codes: 0 finished, 1 the --slo failed, 2 usage error, 3 runtime failure,\n"
		   "4 generator limited, 130 interrupted.\n"
		   "See docs/run.md.\n");
}

static int write_outputs(const struct report_ctx *ctx)
{
	const struct run_plan *p = ctx->plan;
	int rc = 0;
	if (p->out_path) {
		struct afile af;
		rc = afile_open(&af, p->out_path);
		if (!rc) {
			rc = report_json(af.f, ctx);
			if (rc)
				afile_abort(&af);
			else
				rc = afile_commit(&af);
		}
		if (rc) {
			fprintf(stderr, "pacer run: cannot write --out %s: %s\n", p->out_path,
				err_name(rc));
			return rc;
		}
	}
	if (p->hgrm_path) {
		struct afile af;
		rc = afile_open(&af, p->hgrm_path);
		if (!rc) {
			rc = hist_write_hgrm(af.f, &ctx->res->measure.timing[TIM_LATENCY], 1e6);
			if (rc)
				afile_abort(&af);
			else
				rc = afile_commit(&af);
		}
		if (rc) {
			fprintf(stderr, "pacer run: cannot write --hgrm %s: %s\n", p->hgrm_path,
				err_name(rc));
			return rc;
		}
	}
	return 0;
}

static int run_json(FILE *f, const void *ctx)
{
	return report_json(f, ctx);
}

/* --repeat N: a row per measurement. */
static void run_row(void *arg, const struct runner_at *at, const struct rep_figure *f)
{
	const struct run_plan *plan = ((const struct cli_hooks *)arg)->arg;
	if (plan->repeat <= 1 || plan->quiet)
		return;
	char a[32], b[32], c[32];
	printf("  repetition %u/%u: %s/s  p50 %s  p99 %s  errors %llu\n", at->measurement + 1,
	       plan->repeat, units_fmt_thousands(a, sizeof a, f->achieved_per_s, 1),
	       units_fmt_duration(b, sizeof b, (double)f->p50_ns),
	       units_fmt_duration(c, sizeof c, (double)f->p99_ns), (unsigned long long)f->errors);
	fflush(stdout);
}

int cmd_run(int argc, char **argv)
{
	return cmd_run_offered(argc, argv, NULL);
}

int cmd_run_offered(int argc, char **argv, struct table *table)
{
	struct run_plan plan;
	plan_defaults(&plan);
	plan.argc = argc;
	plan.argv = argv;
	struct cli_setup setup = {.cmd = "run", .offered_table = table};
	bool help = false;
	const char *slo_expr = NULL;
	static struct slo slo; /* large (clauses): not on the stack */
	memset(&slo, 0, sizeof slo);
	struct opt tab[] = {
		{0, "concurrency", OPT_U32, &plan.concurrency, "P", "10", "closed loop: connections each with one request outstanding", false},
		{'d', "duration", OPT_DURATION, &plan.duration_ns, "D", "10s", "measured phase length", false},
		{'h', "help", OPT_HELP, &help, NULL, NULL, "show this help", false},
		{0, "hgrm", OPT_STR, &plan.hgrm_path, "FILE", NULL, "write the latency spectrum as HdrHistogram .hgrm (ms)", false},
		{'r', "rate", OPT_RATE, &plan.rate_per_s, "R", NULL, "open loop: offered requests/s (k, M suffixes)", false},
		{0, "repeat", OPT_U32, &plan.repeat, "N", "1", "repeat the measurement N times (same connections): results pooled, each kept", false},
		{'n', "requests", OPT_COUNT, &plan.requests, "N", NULL, "closed loop: stop after N requests", false},
		{0, "slo", OPT_STR, &slo_expr, "EXPR", NULL, "exit 1 unless the measured phase meets it, e.g. 'p99<100ms,errors<1%' (docs/slo.md)", false},
		{'w', "warmup", OPT_DURATION, &plan.warmup_ns, "D", "0s", "warm-up phase, run but not counted", false},
		CLI_LOAD_OPTS(setup, plan),
	};
	size_t ntab = sizeof tab / sizeof tab[0];
	char err[512];
	struct runner_result rr = {0};
	int ret = cli_parse_args("run", tab, ntab, argc, argv, usage, &setup.url_arg);
	if (ret >= 0)
		goto out;
	ret = EXIT_USAGE;
	plan.open_loop = opts_given(tab, ntab, "rate");
	plan.duration_given = opts_given(tab, ntab, "duration");
	if (!plan.open_loop && opts_given(tab, ntab, "connections") &&
	    !opts_given(tab, ntab, "concurrency"))
		plan.concurrency = plan.connections;
	if (cli_options_apply(&setup, &plan, tab, ntab))
		goto out;
	if (slo_expr) {
		const char *onames[RESULT_MAX_OUTCOMES];
		inspect_outcome_names(&setup.inspect, onames);
		if (slo_parse(&slo, slo_expr, onames, setup.inspect.n_outcomes, err, sizeof err)) {
			fprintf(stderr, "pacer run: --slo: %s\n", err);
			goto out;
		}
	}
	/* the plan is complete (URL, body, table, requests) before it is
	 * validated, and unchanged from then on */
	ret = cli_setup_build(&setup, &plan);
	if (ret)
		goto out;
	ret = EXIT_USAGE;
	if (plan_validate(&plan, err, sizeof err)) {
		fprintf(stderr, "pacer run: %s\n", err);
		goto out;
	}
	ret = cli_setup_connect(&setup, &plan);
	if (!ret)
		ret = cli_setup_start_probe(&setup);
	if (ret)
		goto out;

	struct sysinfo_facts env;
	sysinfo_read(&env);
	struct report_target tgt = {0};
	struct report_ctx ctx = {
		.plan = &plan,
		.env = &env,
		.mode = setup.srv ? "self_contained" : "live",
		.target = setup.srv ? &tgt : NULL,
		.version = PACER_VERSION,
		.commit = PACER_COMMIT,
	};
	cli_setup_report_ctx(&setup, &ctx);
	ctx.slo = slo_expr ? &slo : NULL;
	struct runner_variant var = {.name = "", .run = &plan, .target_cores = ctx.target_cores};
	cli_setup_engine_cfg(&setup, &plan, &var.cfg);
	struct runner_plan rp = {.n_variants = 1, .variants = &var, .lag_limit_ns = setup.lag_limit_ns};
	struct cli_hooks ch = {.setup = {&setup}, .progress = !plan.quiet && isatty(STDOUT_FILENO),
			       .arg = &plan};
	struct runner_hooks hooks = cli_hooks(&ch);
	hooks.run_measurement = run_row;

	sigset_t old;
	cli_signals_block(&old);
	size_t failed = 0;
	int rc = runner_execute(&rp, &hooks, &rr, &failed);
	cli_signals_restore(&old);
	if (rc) {
		fprintf(stderr, "pacer run: %s\n", err_name(rc));
		ret = EXIT_RUNTIME;
		goto out;
	}
	struct run_result *res = &rr.v[0].run;
	if (setup.srv) {
		tgt.plan_name = setup.tplan->name;
		tgt.threads = setup.target_threads ? setup.target_threads : 1;
		tgt.cpu_ns = rr.v[0].target_cpu_ns;
	}
	ctx.res = res;
	if (!plan.quiet)
		report_text(stdout, &ctx);
	fflush(stdout);
	struct gen_verdict gv;
	report_gencheck(res, &ctx, &gv);
	int base = EXIT_OK;
	if (ctx.slo) {
		struct slo_verdict sv;
		report_run_slo(&ctx, &sv);
		if (!plan.quiet)
			printf("  slo %s: %s\n", slo_expr, sv.reason);
		if (!sv.pass)
			base = EXIT_SLO_FAILED;
	}
	ret = res->interrupted ? EXIT_INTERRUPTED : cli_setup_exit_code(&setup, base, gv.flagged);
	if (write_outputs(&ctx) || cli_report_dir_write("run", setup.report_dir, plan.out_path) ||
	    cli_history_record(&setup, plan.quiet, run_json, &ctx))
		ret = EXIT_RUNTIME;
out:
	runner_result_free(&rr);
	cli_setup_release(&setup);
	return ret;
}
