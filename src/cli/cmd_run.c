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
#include "cli/opts.h"
#include "cli/setup.h"
#include "target/plan.h"
#include "engine/engine.h"
#include "net/sock.h"
#include "plan/plan.h"
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
	fprintf(f, "\nExit codes: 0 finished, 2 usage error, 3 runtime failure, 130 interrupted.\n"
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

int cmd_run(int argc, char **argv)
{
	struct run_plan plan;
	plan_defaults(&plan);
	plan.argc = argc;
	plan.argv = argv;
	struct opt_list headers = {0};
	const char *order = NULL;
	const char *arrival = NULL;
	struct cli_setup setup = {.cmd = "run"};
	bool help = false;
	const char *report_dir = NULL;
	char report_json[4096];
	struct opt tab[] = {
		{0, "arrival", OPT_STR, &arrival, "constant|poisson", "constant", "spacing of due times (open loop)", false},
		{0, "bodies", OPT_STR, &setup.bodies_dir, "DIR", NULL, "one request per file in DIR, sent in turn to URL", false},
		{0, "body", OPT_STR, &setup.body_arg, "DATA|@FILE", NULL, "request body, literal or from a file", false},
		{0, "by-name", OPT_FLAG, &plan.by_name, NULL, NULL, "a table per request name: count, errors, latency (docs/tables.md#request-names)", false},
		{'c', "connections", OPT_U32, &plan.connections, "N", "64", "open loop: most connections (closed loop: same as --concurrency)", false},
		{0, "concurrency", OPT_U32, &plan.concurrency, "P", "10", "closed loop: connections each with one request outstanding", false},
		{0, "drain", OPT_DURATION, &plan.drain_ns, "D", "= --timeout", "after the measured phase, wait this long for responses", false},
		{'d', "duration", OPT_DURATION, &plan.duration_ns, "D", "10s", "measured phase length", false},
		{'H', "header", OPT_STRLIST, &headers, "'Name: value'", NULL, "extra request header (repeatable)", false},
		{'h', "help", OPT_HELP, &help, NULL, NULL, "show this help", false},
		{0, "hgrm", OPT_STR, &plan.hgrm_path, "FILE", NULL, "write the latency spectrum as HdrHistogram .hgrm (ms)", false},
		{0, "max-body", OPT_STR, &setup.max_body, "SIZE", "1MiB", "largest request body in a table", false},
		{'X', "method", OPT_STR, &plan.method, "M", "GET", "request method (POST when a body is given)", false},
		{0, "order", OPT_STR, &order, "sequential|random", "sequential", "order of a table's requests (random: seeded by --seed)", false},
		{'o', "out", OPT_STR, &plan.out_path, "FILE", NULL, "write the JSON result (docs/result.md)", false},
		{'q', "quiet", OPT_FLAG, &plan.quiet, NULL, NULL, "no progress line, no summary", false},
		{'r', "rate", OPT_RATE, &plan.rate_per_s, "R", NULL, "open loop: offered requests/s (k, M suffixes)", false},
		{0, "repeat", OPT_U32, &plan.repeat, "N", "1", "repeat the measurement N times (same connections): results pooled, each kept", false},
		{'n', "requests", OPT_COUNT, &plan.requests, "N", NULL, "closed loop: stop after N requests", false},
		{0, "requests-file", OPT_STR, &setup.requests_file, "FILE", NULL, "a request table (targets or JSON Lines; docs/tables.md)", false},
		{0, "requests-format", OPT_STR, &setup.requests_format, "auto|targets|jsonl", "auto", "format of --requests-file", false},
		{0, "seed", OPT_U64, &plan.seed, "S", "1", "seed of Poisson schedules and --order random", false},
		{0, "self-contained", OPT_OPTSTR, &setup.self_contained, "PLAN", "hello", "drive pacer's own embedded target (a built-in plan or a plan file) on a loopback port", false},
		{0, "spin", OPT_DURATION, &plan.spin_ns, "D", "100us", "open loop: poll instead of sleeping this close to a due time (0: always sleep)", false},
		{0, "target-threads", OPT_U32, &setup.target_threads, "N", "1", "self-contained: threads of the embedded target", false},
		{'t', "threads", OPT_U32, &plan.threads, "T", "1", "worker threads", false},
		{0, "timeout", OPT_DURATION, &plan.timeout_ns, "D", "10s", "per-request timeout: close, count, reconnect", false},
		{'w', "warmup", OPT_DURATION, &plan.warmup_ns, "D", "0s", "warm-up phase, run but not counted", false},
		{0, "report-dir", OPT_STR, &report_dir, "DIR", NULL, "also write Markdown, HTML, text, CSV, hgrm, hlog and SVG charts into DIR (docs/report.md)", false},
		CLI_RULE_OPTS(setup),
		CLI_TARGET_OPTS(setup),
		CLI_TRANSPORT_OPTS(plan),
	};
	size_t ntab = sizeof tab / sizeof tab[0];
	char err[512];
	int ret = cli_parse_args("run", tab, ntab, argc, argv, usage, &setup.url_arg);
	if (ret >= 0)
		goto out;
	ret = EXIT_USAGE;
	plan.open_loop = opts_given(tab, ntab, "rate");
	plan.duration_given = opts_given(tab, ntab, "duration");
	if (!plan.open_loop && opts_given(tab, ntab, "connections") &&
	    !opts_given(tab, ntab, "concurrency"))
		plan.concurrency = plan.connections;
	if (!opts_given(tab, ntab, "drain"))
		plan.drain_ns = plan.timeout_ns;
	if (cli_parse_arrival("run", arrival, &plan) || cli_parse_order("run", order, &plan))
		goto out;
	if (setup.target_threads > 256) {
		fprintf(stderr, "pacer run: --target-threads %u: at most 256\n", setup.target_threads);
		goto out;
	}
	plan.headers = headers.v;
	plan.n_headers = headers.n;
	if (cli_setup_rules(&setup, &plan) ||
	    cli_report_dir_prepare("run", report_dir, &plan.out_path, report_json,
				   sizeof report_json))
		goto out;
	if (plan_validate(&plan, err, sizeof err)) {
		fprintf(stderr, "pacer run: %s\n", err);
		goto out;
	}
	ret = cli_setup_prepare(&setup, &plan);
	if (!ret)
		ret = cli_setup_start_probe(&setup);
	if (ret)
		goto out;

	struct engine_cfg cfg;
	cli_setup_engine_cfg(&setup, &plan, &cfg);
	struct engine_step step = {
		.rate_per_s = plan.rate_per_s,
		.warmup_ns = plan.warmup_ns,
		.duration_ns = plan.duration_ns,
		.drain_ns = plan.drain_ns,
		.requests = plan.requests,
		.duration_limits = plan.duration_given,
	};

	sigset_t set, old;
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigprocmask(SIG_BLOCK, &set, &old);
	signal(SIGPIPE, SIG_IGN);

	uint64_t wall0 = clock_wall_ns();
	uint64_t tcpu0 = cli_setup_target_cpu_ns(&setup);
	struct engine *e = NULL;
	int rc = engine_open(&e, &cfg);
	if (rc) {
		sigprocmask(SIG_SETMASK, &old, NULL);
		fprintf(stderr, "pacer run: cannot start: %s\n", err_name(rc));
		ret = EXIT_RUNTIME;
		goto out;
	}
	bool progress = !plan.quiet && isatty(STDOUT_FILENO);
	bool interrupted = false;
	struct run_result res = {0};
	/* --repeat: the same measurement again on the same connections; the
	 * result pools them and keeps each one's figures. */
	res.reps = calloc(plan.repeat, sizeof *res.reps);
	if (!res.reps)
		rc = -ENOMEM;
	for (uint32_t k = 0; k < plan.repeat && !rc && !interrupted; k++) {
		rc = engine_step_start(e, &step);
		if (rc)
			break;
		interrupted = cli_wait_engine(e, progress);
		struct run_result cur;
		rc = engine_step_finish(e, &cur);
		if (!rc)
			cli_setup_probe_window(&setup, &cur);
		if (!rc) {
			rep_figure_of(&cur, &res.reps[res.n_reps++]);
			if (plan.repeat > 1 && !plan.quiet) {
				const struct rep_figure *f = &res.reps[res.n_reps - 1];
				char a[32], b[32], c[32];
				printf("  repetition %u/%u: %s/s  p50 %s  p99 %s  errors %llu\n", k + 1,
				       plan.repeat, units_fmt_thousands(a, sizeof a, f->achieved_per_s, 1),
				       units_fmt_duration(b, sizeof b, (double)f->p50_ns),
				       units_fmt_duration(c, sizeof c, (double)f->p99_ns),
				       (unsigned long long)f->errors);
				fflush(stdout);
			}
		}
		if (!rc && k == 0) {
			struct rep_figure *keep = res.reps;
			size_t n = res.n_reps;
			res = cur;
			res.reps = keep;
			res.n_reps = n;
		} else {
			if (!rc)
				rc = run_result_pool(&res, &cur);
			run_result_free(&cur);
		}
	}
	engine_close(e);
	uint64_t tcpu1 = cli_setup_target_cpu_ns(&setup);
	sigprocmask(SIG_SETMASK, &old, NULL);
	res.started_wall_ns = wall0;
	res.interrupted = res.interrupted || interrupted;
	if (rc) {
		fprintf(stderr, "pacer run: %s\n", err_name(rc));
		run_result_free(&res);
		ret = EXIT_RUNTIME;
		goto out;
	}

	struct sysinfo_facts env;
	sysinfo_read(&env);
	struct report_target tgt = {0};
	if (setup.srv) {
		tgt.plan_name = setup.tplan->name;
		tgt.threads = setup.target_threads ? setup.target_threads : 1;
		tgt.cpu_ns = tcpu1 - tcpu0;
	}
	struct report_ctx ctx = {
		.plan = &plan,
		.env = &env,
		.res = &res,
		.mode = setup.srv ? "self_contained" : "live",
		.target = setup.srv ? &tgt : NULL,
		.version = PACER_VERSION,
		.commit = PACER_COMMIT,
	};
	cli_setup_report_ctx(&setup, &ctx);
	if (!plan.quiet)
		report_text(stdout, &ctx);
	fflush(stdout);
	struct gen_verdict gv;
	report_gencheck(&res, &ctx, &gv);
	ret = res.interrupted ? EXIT_INTERRUPTED : cli_setup_exit_code(&setup, EXIT_OK, gv.flagged);
	if (write_outputs(&ctx) || cli_report_dir_write("run", report_dir, plan.out_path))
		ret = EXIT_RUNTIME;
	run_result_free(&res);
out:
	cli_setup_release(&setup);
	opt_list_free(&headers);
	return ret;
}
