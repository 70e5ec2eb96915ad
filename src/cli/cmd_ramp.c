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
#include "cli/dist_io.h"
#include "cli/help.h"
#include "cli/history_io.h"
#include "cli/options.h"
#include "cli/opts.h"
#include "cli/report_io.h"
#include "cli/run_hooks.h"
#include "measure/measure.h"
#include "plan/inspect.h"
#include "doc/names.h"
#include "doc/usage.h"
#include "engine/engine.h"
#include "plan/ramp.h"
#include "doc/ramp.h"
#include "target/plan.h"
#include "util/afile.h"
#include "util/clock.h"
#include "util/err.h"
#include "util/sysinfo.h"
#include "util/units.h"

static const struct cli_example ramp_examples[] = {
	{"pacer ramp http://127.0.0.1:8080/ --steps 1k,2k,5k,10k --slo 'p99<100ms,errors<1%'",
	 "four steps of 5 s; the highest step that kept p99 under 100 ms and errors under 1 %"},
	{"pacer ramp http://127.0.0.1:8080/ --from 500 --to 64k --refine --slo 'p99<50ms' --require 8k",
	 "doubling steps, then bisection; exit 0 only if 8,000 req/s or more passed (a CI gate)"},
	{"pacer ramp --self-contained --steps 2k,4k --step-duration 10s -o ramp.json",
	 "against pacer's embedded target, the result kept as JSON"},
};

static const struct cli_help cli_help_ramp = {
	.name = "ramp",
	.summary = "steps of load until an SLO breaks: the highest passing step",
	.synopsis = "pacer ramp URL (--steps R1,R2,... | --from R --to R [--factor F]) [options]\n"
		    "pacer ramp --self-contained[=PLAN] [/path] ...",
	.description = "Steps of open-loop load, each judged against --slo; stops after the first "
		       "failing step and reports the highest passing one.",
	.examples = ramp_examples,
	.n_examples = sizeof ramp_examples / sizeof ramp_examples[0],
	.exits = cli_exits_ramp,
	.n_exits = sizeof cli_exits_ramp / sizeof cli_exits_ramp[0],
	.see = "docs/ramp.md",
	.grouped = true,
};

static void usage(FILE *f, struct opt *tab, size_t n)
{
	cli_help_print(f, &cli_help_ramp, tab, n);
}

static int json_of(FILE *f, const void *rr)
{
	return ramp_json(f, rr);
}

/* A step was judged: its row (and per-name table). */
static void step_row(void *arg, const struct runner_at *at, const struct ramp_result *r)
{
	(void)at;
	const struct cli_hooks *ch = arg;
	const struct ramp_plan *rp = ch->arg;
	if (rp->run.quiet)
		return;
	const struct ramp_step *s = &r->steps[r->n_steps - 1];
	cli_live_ramp_step(ch->live, s);
	ramp_text_row(ch->text, s, r->n_steps - 1, rp->run.inspect);
	if (rp->run.by_name) {
		report_text_by_name(ch->text, &s->run.measure, rp->run.names);
		fprintf(ch->text, "\n");
	}
	fflush(ch->text);
}

int cmd_ramp(int argc, char **argv)
{
	return cmd_ramp_offered(argc, argv, NULL);
}

int cmd_ramp_offered(int argc, char **argv, struct table *table)
{
	static struct ramp_plan rp; /* large (rates, SLO): not on the stack */
	memset(&rp, 0, sizeof rp);
	struct run_plan *plan = &rp.run;
	plan_defaults(plan);
	plan->open_loop = true;
	plan->argc = argc;
	plan->argv = argv;
	struct cli_ramp_args ra = {0};
	cli_ramp_defaults(&rp, &ra);
	struct measure setup = {.cmd = "ramp", .offered_table = table};
	bool help = false;
	struct cli_dist dist;
	cli_dist_defaults(&dist);
	struct opt tab[] = {
		{'h', "help", OPT_HELP, &help, NULL, NULL, "show this help", false},
		{0, "repeat", OPT_U32, &plan->repeat, "N", "1", "measure each step N times (same connections): judged pooled, each kept", false},
		CLI_RAMP_OPTS(ra, rp),
		CLI_LOAD_OPTS(setup, *plan),
		CLI_DIST_OPTS(dist),
	};
	size_t ntab = sizeof tab / sizeof tab[0];
	struct runner_result out = {0};
	int ret = cli_parse_args_rest("ramp", tab, ntab, argc, argv, usage, &setup.url_arg,
				      &setup.script_args);
	if (ret >= 0)
		goto out;
	ret = EXIT_USAGE;
	if (cli_options_apply(&setup, plan, tab, ntab) ||
	    cli_ramp_apply(&setup, &rp, &ra, tab, ntab))
		goto out;
	ret = cli_dist_apply("ramp", &dist, plan, tab, ntab, argc, argv);
	if (ret)
		goto out;
	if ((ret = cli_prepare(&setup, plan, &dist)))
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
	};
	measure_report_ctx(&setup, &rr.ctx);
	rr.ctx.slo = &rp.slo;

	struct measure_variant var = {.name = "", .m = &setup, .plan = plan};
	struct measure_spec spec = {.n = 1, .v = &var, .ramp = &rp};
	/* with the JSON on stdout, what people read goes to stderr */
	FILE *text = afile_is_stdout(plan->out_path) ? stderr : stdout;
	struct cli_hooks ch = {.setup = {&setup},
			       .progress = cli_progress_wanted(plan->quiet),
			       .text = text,
			       .arg = &rp};
	struct runner_hooks hooks = cli_hooks(&ch);
	hooks.ramp_step = step_row;
	if (!plan->quiet)
		ramp_text_header(text, &rr);
	if ((ret = cli_measure(&ch, &spec, &hooks, &out, plan->quiet)))
		goto out;
	if (out.v[0].n_ramps != 1) {
		fprintf(stderr, "pacer ramp: %s\n", err_name(-EINTR));
		ret = EXIT_RUNTIME;
		goto out;
	}
	struct ramp_result *res = &out.v[0].ramps[0];
	rr.res = res;
	rr.ctx.floor = out.floor.known ? &out.floor : NULL;
	rr.ctx.realtime = out.realtime;
	bool interrupted = out.interrupted;
	/* the JSON result once: --out gets its bytes, and the summary is
	 * rendered from them as `pacer report --format text` renders the file */
	char *json;
	size_t json_len;
	if (cli_result_render("ramp", json_of, &rr, &json, &json_len)) {
		ret = EXIT_RUNTIME;
		goto out;
	}
	if (!plan->quiet)
		fputc('\n', text);
	int sret = plan->quiet ? 0 : cli_summary_print("ramp", json, json_len, text);
	fflush(text);
	ret = interrupted ? EXIT_INTERRUPTED : res->reached_require ? EXIT_OK : EXIT_SLO_FAILED;
	/* The answer is the capacity: when a step that decides it stayed
	 * inconclusive (pacer's own error could have decided it), it is only a
	 * lower bound, and that is exit 4 -- unless --require was met by a
	 * conclusive pass, which answers the question asked. */
	if (!interrupted)
		ret = cli_exit_code(&setup, ret,
				    res->bound == RAMP_BOUND_LOWER &&
					    !(rp.require_per_s > 0 && res->reached_require));
	/* -s: a hook that failed; else done() once per step, labelled with its rate */
	int script_ret = cli_script_end(&setup, NULL, NULL);
	for (size_t i = 0; !script_ret && i < res->n_steps; i++) {
		char label[48];
		snprintf(label, sizeof label, "%g/s", res->steps[i].offered_per_s);
		script_ret = cli_script_end(&setup, &res->steps[i].run, label);
	}
	if (script_ret)
		ret = script_ret;
	if (sret || cli_dist_emit("ramp", &dist, json, json_len, plan->out_path, setup.report_dir))
		ret = EXIT_RUNTIME;
	else if (!plan->quiet)
		cli_summary_next(text, plan->out_path, setup.report_dir);
	if (cli_history_record(&setup, plan->quiet, json_of, &rr))
		ret = EXIT_RUNTIME;
	/* --barrier: hand the result in (segment 0: collect and merge) */
	int dret = cli_dist_finish("ramp", &dist, json, json_len);
	if (dret)
		ret = dret;
	free(json);
out:
	cli_dist_release(&dist);
	runner_result_free(&out);
	cli_release(&setup);
	return ret;
}
