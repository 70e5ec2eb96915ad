/* pacer — the shared option set of run, ramp and compare (cli/options.h). */
#include "cli/options.h"

#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/history_io.h"
#include "cli/report_io.h"
#include "cli/run_hooks.h"
#include "metrics/server.h"
#include "plan/inspect.h"
#include "plan/precision.h"
#include "target/target.h"
#include "util/clock.h"
#include "util/err.h"
#include "util/timestamp.h"
#include "util/units.h"

int cli_parse_args(const char *cmd, struct opt *tab, size_t n, int argc, char **argv,
		   void (*usage)(FILE *, struct opt *, size_t), const char **url)
{
	const char *pos[2];
	struct opts_positionals p = {.what = "one URL", .min = 0, .max = 1, .v = pos};
	int rc = opts_parse_cmd(cmd, tab, n, argc, argv, usage, &p);
	*url = p.n ? pos[0] : NULL;
	return rc;
}

int cli_parse_args_rest(const char *cmd, struct opt *tab, size_t n, int argc, char **argv,
			void (*usage)(FILE *, struct opt *, size_t), const char **url,
			struct strlist *rest)
{
	int k = 1;
	while (k < argc && strcmp(argv[k], "--") != 0)
		k++;
	for (int i = k + 1; i < argc; i++)
		if (strlist_add(rest, argv[i])) {
			fprintf(stderr, "pacer %s: out of memory\n", cmd);
			return EXIT_RUNTIME;
		}
	return cli_parse_args(cmd, tab, n, k, argv, usage, url);
}

int cli_parse_arrival(const char *cmd, const char *arrival, struct run_plan *plan)
{
	if (!arrival)
		return 0;
	if (strcmp(arrival, "constant") == 0)
		plan->arrival = SCHED_CONSTANT;
	else if (strcmp(arrival, "poisson") == 0)
		plan->arrival = SCHED_POISSON;
	else {
		static const char *const words[] = {"constant", "poisson"};
		char dym[64];
		fprintf(stderr, "pacer %s: --arrival '%s': expected constant or poisson%s\n", cmd,
			arrival, opts_did_you_mean(dym, sizeof dym, arrival, words, 2));
		return EXIT_USAGE;
	}
	return 0;
}

int cli_parse_order(const char *cmd, const char *order, struct run_plan *plan)
{
	if (!order || !strcmp(order, "sequential"))
		plan->order_random = false;
	else if (!strcmp(order, "random"))
		plan->order_random = true;
	else {
		static const char *const words[] = {"sequential", "random"};
		char dym[64];
		fprintf(stderr, "pacer %s: --order '%s': expected sequential or random%s\n", cmd,
			order, opts_did_you_mean(dym, sizeof dym, order, words, 2));
		return EXIT_USAGE;
	}
	return 0;
}

const char *cli_bench_scenario;

int cli_options_apply(struct measure *s, struct run_plan *p, const struct opt *tab, size_t n)
{
	p->scenario = cli_bench_scenario;
	/* 0 (or a fraction that rounds to it) would mean "no limit" */
	if (opts_given(tab, n, "requests") && p->requests == 0) {
		fprintf(stderr, "pacer %s: --requests: must be at least 1\n", s->cmd);
		return EXIT_USAGE;
	}
	if (!opts_given(tab, n, "drain"))
		p->drain_ns = p->timeout_ns;
	if (cli_parse_arrival(s->cmd, s->arrival, p) || cli_parse_order(s->cmd, s->order, p))
		return EXIT_USAGE;
	if (s->precision_arg) {
		if (precision_parse(s->precision_arg, &p->precision)) {
			fprintf(stderr,
				"pacer %s: --precision-budget '%s': expected a share of the latency's p50 "
				"between %g%% and %g%%, e.g. 5%%\n",
				s->cmd, s->precision_arg, PRECISION_MIN * 100, PRECISION_MAX * 100);
			return EXIT_USAGE;
		}
		if (opts_given(tab, n, "send-window")) {
			fprintf(stderr,
				"pacer %s: --precision-budget and --send-window: give one "
				"(--precision-budget sizes the send window itself)\n",
				s->cmd);
			return EXIT_USAGE;
		}
	}
	if (s->target_threads > TARGET_MAX_THREADS) {
		fprintf(stderr, "pacer %s: --target-threads %u: at most %d\n", s->cmd, s->target_threads,
			TARGET_MAX_THREADS);
		return EXIT_USAGE;
	}
	p->map_realtime_ns = clock_wall_ns();
	p->map_monotonic_ns = clock_now_ns();
	if (s->segment_arg) {
		unsigned k, nseg;
		char extra;
		if (sscanf(s->segment_arg, "%u/%u%c", &k, &nseg, &extra) != 2 || !strchr(s->segment_arg, '/') ||
		    s->segment_arg[0] < '0' || s->segment_arg[0] > '9') {
			fprintf(stderr, "pacer %s: --segment '%s': expected K/N, e.g. 0/4 (segment K of N, "
					"K from 0)\n",
				s->cmd, s->segment_arg);
			return EXIT_USAGE;
		}
		if (nseg < 2) {
			fprintf(stderr, "pacer %s: --segment %u/%u: N must be at least 2 (one segment is "
					"the whole plan: leave --segment out)\n",
				s->cmd, k, nseg);
			return EXIT_USAGE;
		}
		p->segment = k;
		p->segments = nseg; /* ranges: plan_validate */
	}
	if (s->start_at_arg) {
		int rc = timestamp_parse(s->start_at_arg, p->map_realtime_ns, &p->start_at_wall_ns);
		if (rc) {
			fprintf(stderr, "pacer %s: --start-at '%s': %s\n", s->cmd, s->start_at_arg,
				rc == PACER_ERANGE ? "out of range (1970 to 2262)"
						   : "expected an RFC 3339 time like 2026-12-01T12:00:00Z "
						     "or +30s");
			return EXIT_USAGE;
		}
		char now[40];
		timestamp_format(now, sizeof now, p->map_realtime_ns);
		if (p->start_at_wall_ns + 3600 * NS_PER_S < p->map_realtime_ns) {
			fprintf(stderr, "pacer %s: --start-at '%s': more than an hour ago (it is now %s)\n",
				s->cmd, s->start_at_arg, now);
			return EXIT_USAGE;
		}
		/* a segment that comes up late still runs: the result says how late
		 * (clock.late_ms) and pacer merge warns */
		if (p->start_at_wall_ns + NS_PER_S < p->map_realtime_ns)
			fprintf(stderr, "pacer %s: --start-at '%s' has passed (it is now %s): starting "
					"at once, late\n",
				s->cmd, s->start_at_arg, now);
		if (p->start_at_wall_ns > p->map_realtime_ns + 24 * 3600 * NS_PER_S) {
			fprintf(stderr, "pacer %s: --start-at '%s': more than a day ahead\n", s->cmd,
				s->start_at_arg);
			return EXIT_USAGE;
		}
		p->start_at_text = s->start_at_arg;
	}
	/* standard input is one input: the first "-" takes it */
	if ((s->requests_file && !strcmp(s->requests_file, "-") &&
	     !opts_stdin_take(s->cmd, "--requests-file -")) ||
	    (s->body_arg && !strcmp(s->body_arg, "@-") && !opts_stdin_take(s->cmd, "--body @-")) ||
	    (s->script_path && !strcmp(s->script_path, "-") &&
	     !opts_stdin_take(s->cmd, "--script -")))
		return EXIT_USAGE;
	p->headers = s->headers.v;
	p->n_headers = s->headers.n;
	for (size_t i = 0; i < s->redact_headers.n; i++)
		if (!redact_name_ok(s->redact_headers.v[i]) || i >= REDACT_MAX_NAMES) {
			fprintf(stderr, "pacer %s: --redact-header '%s': %s\n", s->cmd,
				s->redact_headers.v[i],
				i >= REDACT_MAX_NAMES ? "at most 32 names"
						      : "expected a header name (letters, digits, "
							"'-', ...)");
			return EXIT_USAGE;
		}
	p->redact.names = s->redact_headers.v;
	p->redact.n_names = s->redact_headers.n;
	if (s->metrics_listen) {
		char err[256];
		if (metrics_listen_parse(s->metrics_listen, s->metrics_listen_any, &s->metrics_addr,
					 err, sizeof err)) {
			fprintf(stderr, "pacer %s: --metrics-listen %s\n", s->cmd, err);
			return EXIT_USAGE;
		}
	} else if (s->metrics_listen_any) {
		fprintf(stderr, "pacer %s: --metrics-listen-any needs --metrics-listen ADDR:PORT\n",
			s->cmd);
		return EXIT_USAGE;
	}
	int rc = measure_rules(s, p);
	if (rc)
		return cli_measure_fail(s, rc);
	if (cli_history_prepare(s))
		return EXIT_USAGE;
	if (cli_report_dir_prepare(s->cmd, s->report_dir, &p->out_path, s->report_json,
				   sizeof s->report_json))
		return EXIT_USAGE;
	/* every output can be written, or no load is sent */
	static const char *const names[] = {"out", "hgrm"};
	const char *paths[] = {p->out_path, p->hgrm_path};
	return cli_outputs_check(s->cmd, names, paths, 2);
}

void cli_ramp_defaults(struct ramp_plan *rp, struct cli_ramp_args *a)
{
	rp->step_ns = 5 * NS_PER_S;
	rp->step_warmup_ns = NS_PER_S;
	rp->precision = 0.05;
	rp->retries = RAMP_RETRIES_DEFAULT;
	a->factor = 2;
}

bool cli_ramp_given(const struct opt *tab, size_t n)
{
	static const char *const names[] = {"steps", "from", "to", "slo", "refine", "precision",
					    "step-duration", "step-warmup", "after-fail",
					    "require", "factor", "retries"};
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		if (opts_given(tab, n, names[i]))
			return true;
	return false;
}

int cli_ramp_apply(struct measure *s, struct ramp_plan *rp, const struct cli_ramp_args *a,
		   const struct opt *tab, size_t n)
{
	const char *cmd = s->cmd;
	char err[512];
	bool geometric = opts_given(tab, n, "from") || opts_given(tab, n, "to");
	if (a->steps && geometric) {
		fprintf(stderr, "pacer %s: give either --steps or --from/--to, not both\n", cmd);
		return EXIT_USAGE;
	}
	if (a->steps) {
		if (ramp_parse_steps(a->steps, rp->rates, RAMP_MAX_STEPS, &rp->n_rates, err,
				     sizeof err)) {
			fprintf(stderr, "pacer %s: %s\n", cmd, err);
			return EXIT_USAGE;
		}
	} else if (geometric) {
		if (!opts_given(tab, n, "from") || !opts_given(tab, n, "to")) {
			fprintf(stderr, "pacer %s: a geometric ramp needs both --from and --to\n", cmd);
			return EXIT_USAGE;
		}
		if (ramp_geometric(a->from, a->to, a->factor, rp->rates, RAMP_MAX_STEPS, &rp->n_rates,
				   err, sizeof err)) {
			fprintf(stderr, "pacer %s: %s\n", cmd, err);
			return EXIT_USAGE;
		}
	} else {
		fprintf(stderr, "pacer %s: no steps: give --steps R1,R2,... or --from R --to R\n", cmd);
		return EXIT_USAGE;
	}
	if (a->precision) {
		if (units_parse_percent(a->precision, &rp->precision) || rp->precision <= 0) {
			fprintf(stderr, "pacer %s: --precision '%s': expected a percent like 5%%\n", cmd,
				a->precision);
			return EXIT_USAGE;
		}
		rp->precision /= 100;
	}
	if (rp->step_ns == 0) {
		fprintf(stderr, "pacer %s: --step-duration: must be above 0\n", cmd);
		return EXIT_USAGE;
	}
	/* a step offered less than one request may schedule none, and then
	 * measures nothing: its verdict would be a failure ("no response
	 * measured") of nothing */
	for (size_t i = 0; i < rp->n_rates; i++) {
		double expect = rp->rates[i] * ((double)rp->step_ns / 1e9);
		if (expect < 1) {
			char d[32];
			fprintf(stderr,
				"pacer %s: step %zu is offered %.2g requests (%g/s for %s): a step needs "
				"at least one; lengthen --step-duration or raise the rate\n",
				cmd, i + 1, expect, rp->rates[i],
				units_fmt_duration(d, sizeof d, (double)rp->step_ns));
			return EXIT_USAGE;
		}
	}
	if (rp->retries > RAMP_RETRIES_MAX) {
		fprintf(stderr, "pacer %s: --retries %u: at most %u (each retry measures the step again)\n",
			cmd, rp->retries, RAMP_RETRIES_MAX);
		return EXIT_USAGE;
	}
	const char *onames[RESULT_MAX_OUTCOMES];
	inspect_outcome_names(&s->inspect, onames);
	if (rp->slo_expr && slo_parse(&rp->slo, rp->slo_expr, onames, s->inspect.n_outcomes, err,
				      sizeof err)) {
		fprintf(stderr, "pacer %s: --slo: %s\n", cmd, err);
		return EXIT_USAGE;
	}
	if (rp->refine && s->segment_arg) {
		fprintf(stderr, "pacer %s: --refine does not combine with --segment: where to bisect "
				"depends on the merged verdicts, which no segment knows; give the rates "
				"with --steps instead\n",
			cmd);
		return EXIT_USAGE;
	}
	rp->require_per_s = a->require;
	rp->target_cores = s->target_cores;
	struct run_plan *plan = &rp->run;
	plan->open_loop = true;
	plan->rate_per_s = rp->rates[0];
	plan->duration_ns = rp->step_ns;
	plan->warmup_ns = rp->step_warmup_ns;
	return 0;
}
