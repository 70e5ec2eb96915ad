/* pacer ramp — steps of offered load until the SLO breaks; the highest
 * passing step is the headline. Each step is an open-loop measurement with
 * its own warm-up; connections carry over between steps. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/opts.h"
#include "cli/setup.h"
#include "plan/inspect.h"
#include "report/names_report.h"
#include "report/usage_report.h"
#include "engine/engine.h"
#include "plan/ramp.h"
#include "report/ramp_report.h"
#include "target/plan.h"
#include "util/afile.h"
#include "util/clock.h"
#include "util/err.h"
#include "util/sysinfo.h"
#include "util/units.h"

static void usage(FILE *f, struct opt *tab, size_t n)
{
	fprintf(f, "usage: pacer ramp URL (--steps R1,R2,... | --from R --to R [--factor F]) [options]\n"
		   "       pacer ramp --self-contained[=PLAN] [/path] ...\n\n"
		   "Steps of open-loop load, each judged against --slo; stops after the first "
		   "failing step\nand reports the highest passing one.\n\n");
	opts_help(f, tab, n);
	fprintf(f, "\nExit codes: 0 the ramp reached --require (or every step passed), 1 the SLO "
		   "failed first,\n2 usage error, 3 runtime failure, 130 interrupted. See docs/ramp.md.\n");
}

/* Run one step at `rate`; append it to the result. Returns 0, or
 * EXIT_RUNTIME after printing. *interrupted is set on Ctrl-C. */
static int run_step(struct engine *e, struct cli_setup *setup, const struct ramp_plan *rp,
		    double rate, bool refine, struct ramp_result *res, bool *interrupted)
{
	struct engine_step step = {
		.rate_per_s = rate,
		.warmup_ns = rp->step_warmup_ns,
		.duration_ns = rp->step_ns,
		.drain_ns = rp->run.drain_ns,
	};
	uint64_t tcpu0 = cli_setup_target_cpu_ns(setup);
	struct ramp_step s = {.offered_per_s = rate, .refine = refine};
	uint32_t repeat = rp->run.repeat ? rp->run.repeat : 1;
	struct rep_figure *reps = calloc(repeat, sizeof *reps);
	size_t n_reps = 0;
	int rc = reps ? 0 : -ENOMEM;
	bool progress = !rp->run.quiet && isatty(STDOUT_FILENO);
	/* --repeat: the step is measured `repeat` times on the same
	 * connections; the verdict judges them pooled, and each is kept. */
	for (uint32_t k = 0; k < repeat && !rc && !*interrupted; k++) {
		rc = engine_step_start(e, &step);
		if (rc)
			break;
		*interrupted = cli_wait_engine(e, progress) || *interrupted;
		struct run_result cur;
		rc = engine_step_finish(e, &cur);
		if (!rc) {
			cli_setup_probe_window(setup, &cur);
			rep_figure_of(&cur, &reps[n_reps++]);
		}
		if (!rc && k == 0) {
			s.run = cur;
		} else {
			if (!rc)
				rc = run_result_pool(&s.run, &cur);
			run_result_free(&cur);
		}
	}
	s.run.reps = reps;
	s.run.n_reps = n_reps;
	if (rc) {
		run_result_free(&s.run);
		fprintf(stderr, "pacer ramp: a step failed: %s\n", err_name(rc));
		return EXIT_RUNTIME;
	}
	s.run.interrupted = s.run.interrupted || *interrupted;
	s.target_cpu_ns = cli_setup_target_cpu_ns(setup) - tcpu0;
	/* A ramp reports the measured phase of each step; the warm-up's
	 * histograms are not kept (its counts and figures are). */
	rep_figure_of_phase(&s.run.warmup, s.run.warmup_ns, &s.warmup_fig);
	phase_stats_free(&s.run.warmup);
	struct slo_measure m;
	double pct[RESULT_MAX_OUTCOMES];
	ramp_step_measure(&s.run, rp->run.inspect ? rp->run.inspect->n_outcomes : 0, pct, &m);
	slo_eval(&rp->slo, &m, &s.verdict);
	if (ramp_result_add(res, &s)) {
		run_result_free(&s.run);
		fprintf(stderr, "pacer ramp: out of memory\n");
		return EXIT_RUNTIME;
	}
	if (!rp->run.quiet) {
		ramp_text_row(stdout, &res->steps[res->n_steps - 1], res->n_steps - 1,
			      rp->run.inspect);
		if (rp->run.by_name) {
			report_text_by_name(stdout, &res->steps[res->n_steps - 1].run.measure,
					    rp->run.names);
			printf("\n");
		}
	}
	return 0;
}

int ramp_execute(struct engine *e, struct cli_setup *setup, const struct ramp_plan *rp,
		 struct ramp_result *res, bool *interrupted)
{
	long first_fail = -1;
	int ret;
	for (size_t i = 0; i < rp->n_rates && !*interrupted; i++) {
		ret = run_step(e, setup, rp, rp->rates[i], false, res, interrupted);
		if (ret)
			return ret;
		if (!res->steps[res->n_steps - 1].verdict.pass && first_fail < 0)
			first_fail = (long)i;
		if (first_fail >= 0 && i >= (size_t)first_fail + rp->after_fail)
			break;
	}
	/* --refine: bisect between the last passing rate before the first
	 * failure and that failure (planned steps come first in res). */
	if (rp->refine && first_fail > 0 && !*interrupted &&
	    res->steps[first_fail - 1].verdict.pass) {
		double fail = rp->rates[first_fail];
		double pass = rp->rates[first_fail - 1];
		while (!ramp_refined(pass, fail, rp->precision) && !*interrupted) {
			double mid = ramp_bisect(pass, fail);
			ret = run_step(e, setup, rp, mid, true, res, interrupted);
			if (ret)
				return ret;
			if (res->steps[res->n_steps - 1].verdict.pass)
				pass = mid;
			else
				fail = mid;
		}
	}
	res->interrupted = *interrupted;
	return 0;
}

int cmd_ramp(int argc, char **argv)
{
	static struct ramp_plan rp; /* large (rates, SLO): not on the stack */
	memset(&rp, 0, sizeof rp);
	struct run_plan *plan = &rp.run;
	plan_defaults(plan);
	plan->open_loop = true;
	plan->argc = argc;
	plan->argv = argv;
	rp.step_ns = 5 * NS_PER_S;
	rp.step_warmup_ns = NS_PER_S;
	rp.precision = 0.05;
	struct opt_list headers = {0};
	const char *order = NULL;
	const char *arrival = NULL, *steps = NULL, *precision = NULL;
	double from = 0, to = 0, factor = 2, require = 0;
	struct cli_setup setup = {.cmd = "ramp"};
	bool help = false;
	const char *report_dir = NULL;
	char report_json[4096];
	struct opt tab[] = {
		{0, "after-fail", OPT_U32, &rp.after_fail, "N", "0", "steps to run after the first failing one", false},
		{0, "arrival", OPT_STR, &arrival, "constant|poisson", "constant", "spacing of due times", false},
		{0, "bodies", OPT_STR, &setup.bodies_dir, "DIR", NULL, "one request per file in DIR, sent in turn to URL", false},
		{0, "body", OPT_STR, &setup.body_arg, "DATA|@FILE", NULL, "request body, literal or from a file", false},
		{0, "by-name", OPT_FLAG, &plan->by_name, NULL, NULL, "after each step's row, a table per request name (docs/tables.md#request-names)", false},
		{'c', "connections", OPT_U32, &plan->connections, "N", "64", "most connections", false},
		{0, "drain", OPT_DURATION, &plan->drain_ns, "D", "= --timeout", "after each step, wait this long for responses", false},
		{0, "factor", OPT_RATE, &factor, "F", "2", "geometric ramp: each step this many times the one before", false},
		{0, "from", OPT_RATE, &from, "R", NULL, "geometric ramp: first rate", false},
		{'H', "header", OPT_STRLIST, &headers, "'Name: value'", NULL, "extra request header (repeatable)", false},
		{'h', "help", OPT_HELP, &help, NULL, NULL, "show this help", false},
		{0, "max-body", OPT_STR, &setup.max_body, "SIZE", "1MiB", "largest request body in a table", false},
		{'X', "method", OPT_STR, &plan->method, "M", "GET", "request method (POST when a body is given)", false},
		{0, "order", OPT_STR, &order, "sequential|random", "sequential", "order of a table's requests (random: seeded by --seed)", false},
		{'o', "out", OPT_STR, &plan->out_path, "FILE", NULL, "write the JSON result (docs/result.md)", false},
		{0, "precision", OPT_STR, &precision, "P%", "5%", "--refine: stop when pass and fail rates are this close", false},
		{'q', "quiet", OPT_FLAG, &plan->quiet, NULL, NULL, "no table, no progress", false},
		{0, "refine", OPT_FLAG, &rp.refine, NULL, NULL, "bisect between the last passing and first failing rate", false},
		{0, "repeat", OPT_U32, &plan->repeat, "N", "1", "measure each step N times (same connections): judged pooled, each kept", false},
		{0, "require", OPT_RATE, &require, "R", NULL, "exit 0 only if a step at or above R passed", false},
		{0, "requests-file", OPT_STR, &setup.requests_file, "FILE", NULL, "a request table (targets or JSON Lines; docs/tables.md)", false},
		{0, "requests-format", OPT_STR, &setup.requests_format, "auto|targets|jsonl", "auto", "format of --requests-file", false},
		{0, "seed", OPT_U64, &plan->seed, "S", "1", "seed of Poisson schedules and --order random", false},
		{0, "self-contained", OPT_OPTSTR, &setup.self_contained, "PLAN", "hello", "drive pacer's own embedded target on a loopback port", false},
		{0, "slo", OPT_STR, &rp.slo_expr, "EXPR", NULL, "pass condition of a step, e.g. 'p99<100ms,errors<1%' (docs/slo.md)", false},
		{0, "spin", OPT_DURATION, &plan->spin_ns, "D", "100us", "poll instead of sleeping this close to a due time", false},
		{0, "step-duration", OPT_DURATION, &rp.step_ns, "D", "5s", "measured length of each step", false},
		{0, "step-warmup", OPT_DURATION, &rp.step_warmup_ns, "D", "1s", "warm-up of each step, not counted", false},
		{0, "steps", OPT_STR, &steps, "R1,R2,...", NULL, "offered rates, increasing (k, M suffixes)", false},
		{0, "target-threads", OPT_U32, &setup.target_threads, "N", "1", "self-contained: threads of the embedded target", false},
		{'t', "threads", OPT_U32, &plan->threads, "T", "1", "worker threads", false},
		{0, "timeout", OPT_DURATION, &plan->timeout_ns, "D", "10s", "per-request timeout", false},
		{0, "to", OPT_RATE, &to, "R", NULL, "geometric ramp: last rate", false},
		{0, "report-dir", OPT_STR, &report_dir, "DIR", NULL, "also write Markdown, HTML, text, CSV, hgrm, hlog and SVG charts into DIR (docs/report.md)", false},
		CLI_RULE_OPTS(setup),
		CLI_TARGET_OPTS(setup),
		CLI_TRANSPORT_OPTS(*plan),
	};
	size_t ntab = sizeof tab / sizeof tab[0];
	char err[512];
	struct ramp_result res = {0};
	struct engine *e = NULL;
	int ret = cli_parse_args("ramp", tab, ntab, argc, argv, usage, &setup.url_arg);
	if (ret >= 0)
		goto out;
	ret = EXIT_USAGE;
	bool geometric = opts_given(tab, ntab, "from") || opts_given(tab, ntab, "to");
	if (steps && geometric) {
		fprintf(stderr, "pacer ramp: give either --steps or --from/--to, not both\n");
		goto out;
	}
	if (steps) {
		if (ramp_parse_steps(steps, rp.rates, RAMP_MAX_STEPS, &rp.n_rates, err, sizeof err)) {
			fprintf(stderr, "pacer ramp: %s\n", err);
			goto out;
		}
	} else if (geometric) {
		if (!opts_given(tab, ntab, "from") || !opts_given(tab, ntab, "to")) {
			fprintf(stderr, "pacer ramp: a geometric ramp needs both --from and --to\n");
			goto out;
		}
		if (ramp_geometric(from, to, factor, rp.rates, RAMP_MAX_STEPS, &rp.n_rates, err,
				   sizeof err)) {
			fprintf(stderr, "pacer ramp: %s\n", err);
			goto out;
		}
	} else {
		fprintf(stderr, "pacer ramp: no steps: give --steps R1,R2,... or --from R --to R\n");
		goto out;
	}
	if (precision) {
		if (units_parse_percent(precision, &rp.precision) || rp.precision <= 0) {
			fprintf(stderr, "pacer ramp: --precision '%s': expected a percent like 5%%\n",
				precision);
			goto out;
		}
		rp.precision /= 100;
	}
	if (rp.step_ns == 0) {
		fprintf(stderr, "pacer ramp: --step-duration: must be above 0\n");
		goto out;
	}
	if (cli_setup_rules(&setup, plan) ||
	    cli_report_dir_prepare("ramp", report_dir, &plan->out_path, report_json,
				   sizeof report_json))
		goto out;
	const char *onames[RESULT_MAX_OUTCOMES];
	inspect_outcome_names(&setup.inspect, onames);
	if (rp.slo_expr && slo_parse(&rp.slo, rp.slo_expr, onames, setup.inspect.n_outcomes, err,
				     sizeof err)) {
		fprintf(stderr, "pacer ramp: --slo: %s\n", err);
		goto out;
	}
	if (cli_parse_arrival("ramp", arrival, plan) || cli_parse_order("ramp", order, plan))
		goto out;
	rp.require_per_s = require;
	rp.target_cores = setup.target_cores;
	if (!opts_given(tab, ntab, "drain"))
		plan->drain_ns = plan->timeout_ns;
	plan->rate_per_s = rp.rates[0];
	plan->duration_ns = rp.step_ns;
	plan->warmup_ns = rp.step_warmup_ns;
	plan->headers = headers.v;
	plan->n_headers = headers.n;
	if (plan_validate(plan, err, sizeof err)) {
		fprintf(stderr, "pacer ramp: %s\n", err);
		goto out;
	}
	ret = cli_setup_prepare(&setup, plan);
	if (!ret)
		ret = cli_setup_start_probe(&setup);
	if (ret)
		goto out;

	struct sysinfo_facts env;
	sysinfo_read(&env);
	struct report_target tgt = {0};
	if (setup.srv) {
		tgt.plan_name = setup.tplan->name;
		tgt.threads = setup.target_threads ? setup.target_threads : 1;
	}
	struct ramp_report rr = {
		.ctx = {.plan = plan, .env = &env, .mode = setup.srv ? "self_contained" : "live",
			.target = setup.srv ? &tgt : NULL, .version = PACER_VERSION,
			.commit = PACER_COMMIT},
		.plan = &rp,
		.res = &res,
	};
	cli_setup_report_ctx(&setup, &rr.ctx);
	rr.ctx.slo = &rp.slo;

	sigset_t set, old;
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigprocmask(SIG_BLOCK, &set, &old);
	signal(SIGPIPE, SIG_IGN);
	struct engine_cfg cfg;
	cli_setup_engine_cfg(&setup, plan, &cfg);
	res.started_wall_ns = clock_wall_ns();
	int rc = engine_open(&e, &cfg);
	if (rc) {
		fprintf(stderr, "pacer ramp: cannot start: %s\n", err_name(rc));
		ret = EXIT_RUNTIME;
		goto restore;
	}
	if (!plan->quiet)
		ramp_text_header(stdout, &rr);

	bool interrupted = false;
	ret = ramp_execute(e, &setup, &rp, &res, &interrupted);
	if (ret)
		goto restore;
	res.interrupted = interrupted;
	ramp_result_summarize(&res, rp.require_per_s);
	if (!plan->quiet)
		ramp_text_summary(stdout, &rr);
	fflush(stdout);
	ret = interrupted ? EXIT_INTERRUPTED : res.reached_require ? EXIT_OK : EXIT_SLO_FAILED;
	/* The answer is the first failing step: if the generator limited it,
	 * the capacity found may be pacer's, not the target's. */
	for (size_t i = 0; i < res.n_steps && !interrupted; i++) {
		if (res.steps[i].verdict.pass)
			continue;
		struct gen_verdict gv;
		report_gencheck(&res.steps[i].run, &rr.ctx, &gv);
		ret = cli_setup_exit_code(&setup, ret, gv.flagged);
		break;
	}
	if (plan->out_path) {
		struct afile af;
		rc = afile_open(&af, plan->out_path);
		if (!rc) {
			rc = ramp_json(af.f, &rr);
			if (rc)
				afile_abort(&af);
			else
				rc = afile_commit(&af);
		}
		if (rc) {
			fprintf(stderr, "pacer ramp: cannot write --out %s: %s\n", plan->out_path,
				err_name(rc));
			ret = EXIT_RUNTIME;
		} else if (cli_report_dir_write("ramp", report_dir, plan->out_path)) {
			ret = EXIT_RUNTIME;
		}
	}
restore:
	engine_close(e);
	sigprocmask(SIG_SETMASK, &old, NULL);
out:
	ramp_result_free(&res);
	cli_setup_release(&setup);
	opt_list_free(&headers);
	return ret;
}
