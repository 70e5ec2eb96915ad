/* pacer compare — A/B (or more) variants measured interleaved, rotating the
 * order each repetition (A B, B A, ...) so drift of the machine hits every
 * variant alike; medians, ranges, and the ratio of each variant to the first
 * with a bootstrap 95 % confidence interval over repetitions.
 *
 * Every option of `pacer run` applies to every variant (cli/options.h); a
 * variant overrides its target (--variant NAME=URL or NAME=@PLAN) and, with
 * --variant-set NAME.KEY=VALUE, its request table, headers, body, method,
 * probes or embedded target. The runner (runner/runner.h) runs them; the
 * writers are report/compare_report. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/help.h"
#include "cli/history_io.h"
#include "cli/options.h"
#include "cli/opts.h"
#include "cli/report_io.h"
#include "cli/run_hooks.h"
#include "measure/measure.h"
#include "doc/compare.h"
#include "http/redact.h"
#include "target/plan.h"
#include "util/afile.h"
#include "util/clock.h"
#include "util/err.h"
#include "util/sysinfo.h"
#include "util/units.h"

#define MAX_VARIANTS COMPARE_MAX_VARIANTS

struct variant {
	char name[32];
	const char *spec;     /* URL, @PLAN, or "" (the shared target) */
	char shown[512];      /* the spec with its overrides, for the record */
	struct measure setup;
	struct run_plan plan; /* per variant: its URL, requests, rules */
};

static const struct cli_example compare_examples[] = {
	{"pacer compare --variant old=http://127.0.0.1:8080/ --variant new=http://127.0.0.1:8081/ "
	 "-r 2k",
	 "two servers at 2,000 req/s, 5 repetitions each, interleaved"},
	{"pacer compare --variant a=@hello --variant b=@vast_ortb_mix --repeat 3",
	 "two plans of pacer's embedded target, closed loop: throughput compared"},
	{"pacer compare --variant a=http://h1/ --variant b=http://h2/ --steps 1k,2k,4k "
	 "--slo 'p99<100ms'",
	 "each repetition a ramp: the capacities compared"},
};

static const struct cli_help cli_help_compare = {
	.name = "compare",
	.summary = "A/B variants, interleaved, with confidence intervals",
	.synopsis = "pacer compare --variant A=URL --variant B=URL [options]\n"
		    "(a variant may be @PLAN: pacer's embedded target with that plan)",
	.description = "Runs the variants interleaved, rotating their order each repetition, and "
		       "reports each variant's medians and its ratio to the first with a 95 % "
		       "confidence interval. Every option of `pacer run` applies to every variant; "
		       "--variant-set NAME.KEY=VALUE sets one for one variant (KEY: requests-file, "
		       "requests-format, bodies, body, header, method, target-pid, target-cgroup, "
		       "target-children, target-cores, target-threads, unix-socket, connect-to). "
		       "With --steps each repetition is a ramp and the capacity is compared.",
	.examples = compare_examples,
	.n_examples = sizeof compare_examples / sizeof compare_examples[0],
	.exits = cli_exits_run,
	.n_exits = sizeof cli_exits_run / sizeof cli_exits_run[0],
	.see = "docs/compare.md",
	.grouped = true,
};

static void usage(FILE *f, struct opt *tab, size_t n)
{
	cli_help_print(f, &cli_help_compare, tab, n);
}

static int parse_variant(const char *arg, struct variant *v)
{
	const char *eq = strchr(arg, '=');
	if (!eq || eq == arg || (size_t)(eq - arg) >= sizeof v->name) {
		fprintf(stderr, "pacer compare: --variant '%s': expected NAME=URL or NAME=@PLAN\n", arg);
		return EXIT_USAGE;
	}
	memcpy(v->name, arg, (size_t)(eq - arg));
	v->name[eq - arg] = '\0';
	if (strchr(v->name, '.')) {
		fprintf(stderr, "pacer compare: --variant '%s': a name has no '.' (--variant-set "
				"NAME.KEY=VALUE)\n", arg);
		return EXIT_USAGE;
	}
	v->spec = eq + 1;
	snprintf(v->shown, sizeof v->shown, "%s", v->spec);
	return 0;
}

static int parse_u32(const char *what, const char *val, uint32_t *out)
{
	char *end;
	unsigned long long n = strtoull(val, &end, 10);
	if (!*val || *end || n > UINT32_MAX || val[0] == '-') {
		fprintf(stderr, "pacer compare: --variant-set %s=%s: expected a whole number\n", what,
			val);
		return EXIT_USAGE;
	}
	*out = (uint32_t)n;
	return 0;
}

/* --variant-set NAME.KEY=VALUE: one option for one variant. */
static int variant_set(const char *given, struct variant *vs, size_t nv)
{
	/* in messages, a secret header's value as its fingerprint */
	char shown[1024];
	const char *arg = given;
	const char *said = redact_arg(nv ? &vs[0].plan.redact : NULL, given, shown, sizeof shown);
	const char *dot = strchr(arg, '.'), *eq = dot ? strchr(dot, '=') : NULL;
	if (!dot || !eq || dot == arg || eq == dot + 1) {
		fprintf(stderr, "pacer compare: --variant-set '%s': expected NAME.KEY=VALUE\n", said);
		return EXIT_USAGE;
	}
	struct variant *v = NULL;
	for (size_t i = 0; i < nv && !v; i++)
		if (strlen(vs[i].name) == (size_t)(dot - arg) && !memcmp(vs[i].name, arg, dot - arg))
			v = &vs[i];
	if (!v) {
		fprintf(stderr, "pacer compare: --variant-set '%s': no variant %.*s\n", said,
			(int)(dot - arg), arg);
		return EXIT_USAGE;
	}
	char key[32];
	size_t kl = (size_t)(eq - dot - 1);
	if (kl >= sizeof key)
		kl = sizeof key - 1;
	memcpy(key, dot + 1, kl);
	key[kl] = '\0';
	const char *val = eq + 1;
	struct measure *s = &v->setup;
	int rc = 0;
	if (!strcmp(key, "requests-file"))
		s->requests_file = val;
	else if (!strcmp(key, "requests-format"))
		s->requests_format = val;
	else if (!strcmp(key, "bodies"))
		s->bodies_dir = val;
	else if (!strcmp(key, "body"))
		s->body_arg = val;
	else if (!strcmp(key, "header"))
		rc = strlist_add(&s->headers, val) ? EXIT_RUNTIME : 0;
	else if (!strcmp(key, "method"))
		v->plan.method = val;
	else if (!strcmp(key, "target-pid"))
		rc = parse_u32(key, val, &s->target_pid);
	else if (!strcmp(key, "target-cgroup"))
		s->target_cgroup = val;
	else if (!strcmp(key, "target-children"))
		s->target_children = strcmp(val, "false") != 0;
	else if (!strcmp(key, "target-cores"))
		rc = parse_u32(key, val, &s->target_cores);
	else if (!strcmp(key, "target-threads"))
		rc = parse_u32(key, val, &s->target_threads);
	else if (!strcmp(key, "unix-socket"))
		v->plan.unix_socket = val;
	else if (!strcmp(key, "connect-to"))
		v->plan.connect_to = val;
	else {
		fprintf(stderr, "pacer compare: --variant-set '%s': unknown KEY '%s' (expected "
				"requests-file, requests-format, bodies, body, header, method, target-pid, "
				"target-cgroup, target-children, target-cores, target-threads, "
				"unix-socket or connect-to)\n", said, key);
		return EXIT_USAGE;
	}
	if (!rc) {
		size_t l = strlen(v->shown);
		snprintf(v->shown + l, sizeof v->shown - l, " %s=%s", key,
			 strcmp(key, "header") ? val
					       : redact_header_line(&v->plan.redact, val, shown,
								    sizeof shown));
	}
	return rc;
}

/* A variant from the shared options and its own: its set-up and plan,
 * prepared (requests encoded, target started or checked, probe started). */
static int prepare_variant(struct variant *v, const struct measure *base)
{
	v->plan.headers = v->setup.headers.v;
	v->plan.n_headers = v->setup.headers.n;
	if (v->spec[0] == '@') {
		v->setup.self_contained = v->spec + 1;
		v->setup.url_arg = NULL;
	} else if (v->spec[0]) {
		v->setup.url_arg = v->spec;
	} else if (!base->self_contained && !v->setup.requests_file) {
		fprintf(stderr, "pacer compare: variant %s: no target (NAME=URL, NAME=@PLAN, or "
				"--variant-set %s.requests-file=FILE)\n", v->name, v->name);
		return EXIT_USAGE;
	}
	int rc = measure_rules(&v->setup, &v->plan);
	if (!rc)
		rc = measure_prepare(&v->setup, &v->plan);
	/* each line names its variant */
	for (size_t i = 0; i < v->setup.n_notes && i < MEASURE_NOTES; i++)
		fprintf(stderr, "pacer compare: variant %s: %s\n", v->name, v->setup.notes[i]);
	v->setup.n_notes = 0;
	if (!rc)
		return 0;
	fprintf(stderr, "pacer compare: variant %s: %s\n", v->name,
		v->setup.err[0] ? v->setup.err : err_name(rc));
	return rc == MEASURE_EUSAGE ? EXIT_USAGE : EXIT_RUNTIME;
}

static int json_of(FILE *f, const void *cr)
{
	return compare_json(f, cr);
}

/* A repetition of a variant finished: its row. */
static void rep_row(void *arg, const struct runner_at *at, const struct rep_figure *f)
{
	(void)f;
	const struct cli_hooks *ch = arg;
	const struct compare_report *c = ch->arg;
	if (!c->ctx.plan->quiet)
		compare_text_row(ch->text, c, at->variant, at->repetition);
}

int cmd_compare(int argc, char **argv)
{
	static struct variant vs[MAX_VARIANTS];
	static struct ramp_plan ramp_rp; /* large (rates, SLO): not on the stack */
	memset(vs, 0, sizeof vs);
	memset(&ramp_rp, 0, sizeof ramp_rp);
	struct run_plan plan;
	plan_defaults(&plan);
	plan.argc = argc;
	plan.argv = argv;
	plan.duration_ns = 5 * NS_PER_S;
	plan.warmup_ns = NS_PER_S;
	struct cli_ramp_args ra = {0};
	cli_ramp_defaults(&ramp_rp, &ra);
	struct strlist variants = {0}, sets = {0};
	const char *noise_arg = NULL;
	double noise = 0.02;
	uint32_t repeat = 5;
	bool help = false;
	struct measure setup = {.cmd = "compare"};
	struct opt tab[] = {
		{0, "concurrency", OPT_U32, &plan.concurrency, "P", "10", "closed loop: connections per variant", false},
		{'d', "duration", OPT_DURATION, &plan.duration_ns, "D", "5s", "measured length of each repetition", false},
		{'h', "help", OPT_HELP, &help, NULL, NULL, "show this help", false},
		{0, "noise", OPT_STR, &noise_arg, "P%", "2%", "differences smaller than this are not called significant", false},
		{'r', "rate", OPT_RATE, &plan.rate_per_s, "R", NULL, "open loop at R req/s (else closed loop: throughput compared)", false},
		{0, "repeat", OPT_U32, &repeat, "N", "5", "repetitions per variant", false},
		{'n', "requests", OPT_COUNT, &plan.requests, "N", NULL, "closed loop: each repetition stops after N requests", false},
		{0, "variant", OPT_STRLIST, &variants, "NAME=URL|NAME=@PLAN", NULL, "a variant (repeatable, at least 2; the first is the baseline)", false},
		{0, "variant-set", OPT_STRLIST, &sets, "NAME.KEY=VALUE", NULL, "an option for one variant only (repeatable; KEY in the text above)", false},
		{'w', "warmup", OPT_DURATION, &plan.warmup_ns, "D", "1s", "warm-up of each repetition, not counted", false},
		CLI_RAMP_OPTS(ra, ramp_rp),
		CLI_LOAD_OPTS(setup, plan),
	};
	size_t ntab = sizeof tab / sizeof tab[0];
	char err[512];
	size_t nv = 0;
	const char *nourl = NULL;
	struct runner_result out = {0};
	int ret = cli_parse_args("compare", tab, ntab, argc, argv, usage, &nourl);
	if (ret >= 0)
		goto out;
	ret = EXIT_USAGE;
	if (nourl) {
		fprintf(stderr, "pacer compare: targets are given with --variant NAME=URL, not '%s'\n", nourl);
		goto out;
	}
	if (variants.n < 2 || variants.n > MAX_VARIANTS) {
		fprintf(stderr, "pacer compare: give between 2 and %d --variant NAME=URL\n", MAX_VARIANTS);
		goto out;
	}
	if (repeat < 1 || repeat > RUNNER_MAX_REPEAT) {
		fprintf(stderr, "pacer compare: --repeat %u: between 1 and %d\n", repeat, RUNNER_MAX_REPEAT);
		goto out;
	}
	if (noise_arg) {
		if (units_parse_percent(noise_arg, &noise)) {
			fprintf(stderr, "pacer compare: --noise '%s': expected a percent like 2%%\n",
				noise_arg);
			goto out;
		}
		noise /= 100;
	}
	bool ramp_mode = cli_ramp_given(tab, ntab);
	plan.open_loop = opts_given(tab, ntab, "rate") || ramp_mode;
	if (!plan.open_loop && opts_given(tab, ntab, "connections") &&
	    !opts_given(tab, ntab, "concurrency"))
		plan.concurrency = plan.connections;
	plan.duration_given = !plan.requests || opts_given(tab, ntab, "duration");
	if (cli_options_apply(&setup, &plan, tab, ntab))
		goto out;
	if (setup.segment_arg || setup.start_at_arg) {
		fprintf(stderr, "pacer compare: --segment and --start-at are for run, ramp and bench "
				"(a compare interleaves its variants in one process)\n");
		goto out;
	}
	if (ramp_mode) {
		if (opts_given(tab, ntab, "rate") || opts_given(tab, ntab, "requests")) {
			fprintf(stderr, "pacer compare: give --rate (or --requests) or a ramp (--steps), "
					"not both\n");
			goto out;
		}
		if (!ramp_rp.slo_expr) {
			fprintf(stderr, "pacer compare: --steps needs --slo (what a passing step is)\n");
			goto out;
		}
		ramp_rp.run = plan;
		if (cli_ramp_apply(&setup, &ramp_rp, &ra, tab, ntab))
			goto out;
		/* the plan a variant runs is a ramp's: its steps' durations */
		plan.open_loop = true;
		plan.rate_per_s = ramp_rp.rates[0];
		plan.duration_ns = ramp_rp.step_ns;
		plan.warmup_ns = ramp_rp.step_warmup_ns;
		plan.duration_given = true;
	}
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
		if (measure_copy_inputs(&vs[i].setup, &setup)) {
			ret = EXIT_RUNTIME;
			goto out;
		}
		vs[i].plan = plan;
		nv++;
	}
	for (size_t i = 0; i < sets.n; i++)
		if ((ret = variant_set(sets.v[i], vs, nv)))
			goto out;
	ret = EXIT_USAGE;
	for (size_t i = 0; i < nv; i++)
		if ((ret = prepare_variant(&vs[i], &setup)))
			goto out;

	struct sysinfo_facts env;
	sysinfo_read(&env);
	static struct compare_report cr;
	memset(&cr, 0, sizeof cr);
	cr.ctx = (struct report_ctx){.plan = &plan, .env = &env, .version = PACER_VERSION,
				     .commit = PACER_COMMIT};
	measure_report_ctx(&setup, &cr.ctx);
	cr.ctx.slo = ramp_mode ? &ramp_rp.slo : NULL;
	cr.ramp = ramp_mode ? &ramp_rp : NULL;
	cr.n_variants = nv;
	cr.noise = noise;
	struct measure_variant mv[MAX_VARIANTS];
	/* with the JSON on stdout, what people read goes to stderr */
	struct cli_hooks ch = {.progress = cli_progress_wanted(plan.quiet),
			       .text = afile_is_stdout(plan.out_path) ? stderr : stdout,
			       .arg = &cr};
	bool any_sc = false;
	for (size_t i = 0; i < nv; i++) {
		struct report_ctx vctx = {0};
		measure_report_ctx(&vs[i].setup, &vctx);
		mv[i] = (struct measure_variant){.name = vs[i].name, .m = &vs[i].setup,
						 .plan = &vs[i].plan};
		ch.setup[i] = &vs[i].setup;
		cr.v[i] = (struct compare_view){.name = vs[i].name, .spec = vs[i].shown,
						.plan = &vs[i].plan, .conns = vctx.conns,
						.n_conns = vctx.n_conns,
						.self_contained = vs[i].setup.srv != NULL,
						.res = &out.v[i]};
		any_sc = any_sc || vs[i].setup.srv;
	}
	cr.ctx.mode = any_sc ? "self_contained" : "live";
	struct measure_spec spec = {.n = nv, .v = mv, .ramp = cr.ramp, .repetitions = repeat,
				    .compact_steps = true};
	struct runner_hooks hooks = cli_hooks(&ch);
	hooks.repetition = rep_row;
	if (!plan.quiet)
		compare_text_header(ch.text, &cr);
	cr.reps = repeat; /* the rows index repetitions as they come */
	if ((ret = cli_measure(&ch, &spec, &hooks, &out, plan.quiet)))
		goto out;
	cr.reps = out.repetitions_done;
	cr.started_wall_ns = out.started_wall_ns;
	cr.ctx.floor = out.floor.known ? &out.floor : NULL;
	cr.ctx.realtime = out.realtime;
	cr.interrupted = out.interrupted;
	/* the JSON result once: --out gets its bytes, and the summary (the
	 * generator-limited variants among its warnings) is rendered from them
	 * as `pacer report --format text` renders the file */
	char *json;
	size_t json_len;
	if (cli_result_render("compare", json_of, &cr, &json, &json_len)) {
		ret = EXIT_RUNTIME;
		goto out;
	}
	if (!plan.quiet)
		fputc('\n', ch.text);
	int sret = plan.quiet ? 0 : cli_summary_print("compare", json, json_len, ch.text);
	fflush(ch.text);
	ret = cr.interrupted ? EXIT_INTERRUPTED : EXIT_OK;
	for (size_t i = 0; i < nv && !cr.interrupted; i++)
		ret = cli_exit_code(&setup, ret, out.v[i].limited_reps > 0);
	/* -s: a hook that failed stopped the load; else done() per variant, as
	 * wrk calls it once for a run: with the variant's figures over every
	 * repetition (pooled) and its name as summary.label. With --steps it
	 * is not called: each step's histograms are freed as the repetitions
	 * go (compact_steps), so no step has a latency left to hand it. */
	int script_ret = 0;
	for (size_t i = 0; i < nv && !script_ret; i++)
		script_ret = cli_script_end(&vs[i].setup, NULL, NULL);
	for (size_t i = 0; i < nv && !script_ret && !cr.ramp; i++)
		script_ret = cli_script_end(&vs[i].setup, &out.v[i].run, vs[i].name);
	if (script_ret)
		ret = script_ret;
	if (sret || ((plan.out_path || setup.report_dir) &&
		     cli_result_emit_buf("compare", json, json_len, plan.out_path, setup.report_dir)))
		ret = EXIT_RUNTIME;
	else if (!plan.quiet)
		cli_summary_next(ch.text, plan.out_path, setup.report_dir);
	free(json);
	if (cli_history_record(&setup, plan.quiet, json_of, &cr))
		ret = EXIT_RUNTIME;
out:
	runner_result_free(&out);
	for (size_t i = 0; i < MAX_VARIANTS; i++)
		measure_release(&vs[i].setup);
	cli_release(&setup);
	strlist_free(&variants);
	strlist_free(&sets);
	return ret;
}
