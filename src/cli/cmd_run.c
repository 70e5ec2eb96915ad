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
#include "cli/dist_io.h"
#include "cli/help.h"
#include "cli/history_io.h"
#include "cli/options.h"
#include "cli/opts.h"
#include "cli/report_io.h"
#include "cli/run_hooks.h"
#include "measure/measure.h"
#include "target/plan.h"
#include "engine/engine.h"
#include "net/sock.h"
#include "plan/inspect.h"
#include "plan/plan.h"
#include "plan/inspect.h"
#include "plan/slo.h"
#include "result/verdict.h"
#include "doc/doc.h"
#include "result/ramp.h"
#include "result/verdict.h"
#include "doc/usage.h"
#include "stats/hist_io.h"
#include "util/afile.h"
#include "util/clock.h"
#include "util/err.h"
#include "util/sysinfo.h"
#include "util/units.h"

static const struct cli_example run_examples[] = {
	{"pacer run http://127.0.0.1:8080/ -R 2k -z 30s --latency",
	 "open loop: 2,000 requests/s for 30 s, latency from each request's scheduled time, with "
	 "the percentile spectrum"},
	{"pacer run http://127.0.0.1:8080/api -n 10k --concurrency 50 -m POST --body @req.json",
	 "closed loop: 10,000 POSTs, 50 at a time"},
	{"pacer run --self-contained=vast_ortb_mix -r 1k -d 1m30s -o result.json --slo 'p99<20ms'",
	 "drive pacer's own embedded target on loopback, keep the JSON result, exit 1 if p99 was "
	 "20 ms or more (a CI gate)"},
};

static const struct cli_exit run_exits[] = {
	{EXIT_OK, "the run finished (errors from the target are reported, not a failure of pacer); "
		  "with --slo, the SLO held"},
	{EXIT_SLO_FAILED, "--slo: the measured phase failed the SLO (the reason is printed and in "
			  "the JSON's slo)"},
	{EXIT_USAGE, "usage error: bad option or value, bad URL, a target that does not resolve or "
		     "refuses the first connection; one line on stderr"},
	{EXIT_RUNTIME, "runtime failure of pacer itself (out of memory, cannot write an output file)"},
	{EXIT_GENERATOR_LIMITED, "results written, but flagged generator-limited: pacer, not the "
				 "target, may have been the limit (--limited-ok: the code above instead)"},
	{EXIT_INTERRUPTED, "interrupted by Ctrl-C / SIGINT / SIGTERM: what was measured is still "
			   "printed and written, marked interrupted"},
};

static const struct cli_help cli_help_run = {
	.name = "run",
	.summary = "measure a target (open loop with --rate, closed loop without)",
	.synopsis = "pacer run URL [options]\npacer run --self-contained[=PLAN] [/path] [options]",
	.description = "Open loop with --rate: requests are sent on a schedule whether or not "
		       "earlier ones returned, and latency counts from each request's scheduled "
		       "time. Closed loop without: --concurrency connections, each with one request "
		       "outstanding, for --requests or --duration.",
	.examples = run_examples,
	.n_examples = sizeof run_examples / sizeof run_examples[0],
	.exits = run_exits,
	.n_exits = sizeof run_exits / sizeof run_exits[0],
	.see = "docs/run.md",
	.grouped = true,
};

static void usage(FILE *f, struct opt *tab, size_t n)
{
	cli_help_print(f, &cli_help_run, tab, n);
}

/* --out and --report-dir get the JSON result's bytes (json[len]), --hgrm
 * the latency spectrum. */
static int write_outputs(const struct report_ctx *ctx, const struct cli_dist *dist,
			 const char *report_dir, const char *json, size_t len)
{
	const struct run_plan *p = ctx->plan;
	int rc = 0;
	if (cli_dist_emit("run", dist, json, len, p->out_path, report_dir))
		return EXIT_RUNTIME;
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
				cli_output_why(rc));
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
	const struct cli_hooks *ch = arg;
	const struct run_plan *plan = ch->arg;
	if (plan->repeat <= 1 || plan->quiet)
		return;
	char a[32], b[32], c[32];
	fprintf(ch->text, "  repetition %u/%u: %s/s  p50 %s  p99 %s  errors %llu\n",
		at->measurement + 1, plan->repeat,
		units_fmt_thousands(a, sizeof a, f->achieved_per_s, 1),
		units_fmt_duration(b, sizeof b, (double)f->p50_ns),
		units_fmt_duration(c, sizeof c, (double)f->p99_ns), (unsigned long long)f->errors);
	fflush(ch->text);
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
	struct measure setup = {.cmd = "run", .offered_table = table};
	bool help = false, latency = false;
	const char *slo_expr = NULL;
	static struct slo slo; /* large: not on the stack */
	memset(&slo, 0, sizeof slo);
	struct slo_verdict verdict = {0};
	struct cli_dist dist;
	cli_dist_defaults(&dist);
	struct opt tab[] = {
		{0, "concurrency", OPT_U32, &plan.concurrency, "P", "10", "closed loop: connections each with one request outstanding", false},
		{'d', "duration", OPT_DURATION, &plan.duration_ns, "D", "10s", "measured phase length", false},
		{'h', "help", OPT_HELP, &help, NULL, NULL, "show this help", false},
		{0, "slo", OPT_STR, &slo_expr, "EXPR", NULL, "judge the measured phase, e.g. 'p99<100ms,errors<1%' (docs/slo.md): exit 1 when it fails", false},
		{0, "latency", OPT_FLAG, &latency, NULL, NULL, "after the summary, print the latency percentile spectrum (as wrk2 --latency; the .hgrm table, ms)", false},
		{0, "hgrm", OPT_STR, &plan.hgrm_path, "FILE", NULL, "write the latency spectrum as HdrHistogram .hgrm (ms)", false},
		{'r', "rate", OPT_RATE, &plan.rate_per_s, "R", NULL, "open loop: offered requests/s (k, M suffixes)", false},
		{0, "repeat", OPT_U32, &plan.repeat, "N", "1", "repeat the measurement N times (same connections): results pooled, each kept", false},
		{'n', "requests", OPT_COUNT, &plan.requests, "N", NULL, "closed loop: stop after N requests", false},
		{'w', "warmup", OPT_DURATION, &plan.warmup_ns, "D", "0s", "warm-up phase, run but not counted", false},
		CLI_LOAD_OPTS(setup, plan),
		CLI_DIST_OPTS(dist),
	};
	size_t ntab = sizeof tab / sizeof tab[0];
	char err[512];
	struct runner_result rr = {0};
	int ret = cli_parse_args_rest("run", tab, ntab, argc, argv, usage, &setup.url_arg,
				      &setup.script_args);
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
	ret = cli_dist_apply("run", &dist, &plan, tab, ntab, argc, argv);
	if (ret)
		goto out;
	ret = EXIT_USAGE;
	if (slo_expr) { /* after the rules: an SLO may name their outcomes */
		const char *onames[RESULT_MAX_OUTCOMES];
		inspect_outcome_names(&setup.inspect, onames);
		if (slo_parse(&slo, slo_expr, onames, setup.inspect.n_outcomes, err, sizeof err)) {
			fprintf(stderr, "pacer run: --slo: %s\n", err);
			goto out;
		}
	}
	if ((ret = cli_prepare(&setup, &plan, &dist)))
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
	measure_report_ctx(&setup, &ctx);
	if (slo_expr) {
		ctx.slo = &slo;
		ctx.slo_expr = slo_expr;
	}
	struct measure_variant var = {.name = "", .m = &setup, .plan = &plan};
	struct measure_spec spec = {.n = 1, .v = &var};
	/* with the JSON on stdout, what people read goes to stderr */
	FILE *text = afile_is_stdout(plan.out_path) ? stderr : stdout;
	struct cli_hooks ch = {.setup = {&setup},
			       .progress = cli_progress_wanted(plan.quiet),
			       .text = text,
			       .arg = &plan};
	struct runner_hooks hooks = cli_hooks(&ch);
	hooks.run_measurement = run_row;
	if ((ret = cli_measure(&ch, &spec, &hooks, &rr, plan.quiet)))
		goto out;
	struct run_result *res = &rr.v[0].run;
	if (setup.srv) {
		tgt.plan_name = setup.tplan->name;
		tgt.threads = setup.target_threads ? setup.target_threads : 1;
		tgt.cpu_ns = rr.v[0].target_cpu_ns;
	}
	ctx.res = res;
	ctx.floor = rr.floor.known ? &rr.floor : NULL;
	ctx.realtime = rr.realtime;
	struct gen_verdict gv;
	report_gencheck(res, &ctx, &gv);
	if (slo_expr) { /* the same judgement as a ramp's step (result/verdict.h) */
		struct slo_measure m;
		struct slo_share sh;
		double pct[RESULT_MAX_OUTCOMES];
		ramp_step_measure(res, setup.inspect.n_outcomes, pct, &m);
		ramp_step_share(res, &gv, ctx.floor, &sh);
		slo_eval_share(&slo, &m, &sh, &verdict);
		ctx.verdict = &verdict;
	}
	/* the JSON result once: --out gets its bytes, and the summary is
	 * rendered from them as `pacer report --format text` renders the file */
	char *json;
	size_t json_len;
	if (cli_result_render("run", run_json, &ctx, &json, &json_len)) {
		ret = EXIT_RUNTIME;
		goto out;
	}
	int sret = plan.quiet ? 0 : cli_summary_print("run", json, json_len, text);
	if (!plan.quiet && latency) {
		fprintf(text, "\nLatency percentile spectrum (from each request's scheduled time, ms):\n");
		hist_write_hgrm(text, &res->measure.timing[TIM_LATENCY], 1e6);
	}
	fflush(text);
	ret = res->interrupted ? EXIT_INTERRUPTED
	      : cli_exit_code(&setup, slo_expr && !verdict.pass ? EXIT_SLO_FAILED : EXIT_OK,
				    gv.flagged || (slo_expr && verdict.inconclusive));
	int script_ret = cli_script_end(&setup, res, NULL); /* -s: a hook failed, or done() */
	if (script_ret)
		ret = script_ret;
	if (sret || write_outputs(&ctx, &dist, setup.report_dir, json, json_len)) {
		ret = EXIT_RUNTIME;
	} else {
		if (!plan.quiet)
			cli_summary_next(text, plan.out_path, setup.report_dir);
		if (cli_history_record(&setup, plan.quiet, run_json, &ctx))
			ret = EXIT_RUNTIME;
	}
	/* --barrier: hand the result in (segment 0: collect and merge) */
	int dret = cli_dist_finish("run", &dist, json, json_len);
	if (dret)
		ret = dret;
	free(json);
out:
	cli_dist_release(&dist);
	runner_result_free(&rr);
	cli_release(&setup);
	return ret;
}
