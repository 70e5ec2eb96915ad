/* pacer — the runner's hooks from the command line's side (cli/run_hooks.h). */
#include "cli/run_hooks.h"

#include <netinet/in.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/dist_io.h"
#include "cli/live_view.h"
#include "cli/signals.h"
#include "history/history.h"
#include "plan/inspect.h"
#include "util/clock.h"
#include "util/err.h"
#include "util/units.h"

bool cli_progress_wanted(bool quiet)
{
	return !quiet;
}

/* How long the wait sleeps between looks at the signals, the engine and
 * the clock: the latency of Ctrl-C. */
#define WAIT_SLICE_NS (100 * 1000 * 1000)

/* Wait for the engine's current step, turning SIGINT/SIGTERM (blocked by
 * the caller) into engine_interrupt, with the live view (NULL: none)
 * ticking; with m, telling it the phase of `variant` each slice. True when
 * interrupted. */
static bool wait_engine(struct engine *e, struct cli_live *live, const struct runner_at *at,
			struct metrics_server *m, size_t variant)
{
	cli_live_begin(live, e, at);
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	bool interrupted = false;
	while (!engine_done(e)) {
		if (engine_aborted(e))
			interrupted = true; /* a script's hook failed and stopped the step */
		if (m) {
			struct engine_progress p;
			engine_progress(e, &p);
			enum metrics_phase ph = MPH_MEASURE;
			if (p.in_warmup)
				ph = MPH_WARMUP;
			else if (p.total_ns && p.elapsed_ns >= p.total_ns)
				ph = MPH_DRAIN;
			metrics_phase(m, variant, ph);
		}
		struct timespec ts = {0, WAIT_SLICE_NS};
		int sig = sigtimedwait(&set, NULL, &ts);
		if (sig == SIGINT || sig == SIGTERM) {
			interrupted = true;
			cli_signal_taken();
			engine_interrupt(e);
		}
		cli_live_tick(live, e);
	}
	cli_live_end(live);
	return interrupted || engine_aborted(e);
}

static bool hook_wait(void *arg, struct engine *e, const struct runner_at *at)
{
	const struct cli_hooks *c = arg;
	if (at->in_ramp)
		metrics_live_step(c->metrics, at->variant, at->step, at->planned_steps);
	metrics_begin(c->metrics, at->variant, e, at->measurement == 0, at->offered_per_s);
	bool interrupted = wait_engine(e, c->live, at, c->metrics, at->variant);
	metrics_end(c->metrics, at->variant);
	return interrupted;
}

/* Before the first load: a --realtime the kernel refused, in one line (the
 * run goes on at the normal priority; the result records it too). */
static void hook_ready(void *arg, const struct runner_result *out)
{
	const struct cli_hooks *c = arg;
	if (out->realtime < 0)
		fprintf(stderr,
			"pacer %s: --realtime refused (%s): the worker threads run at their normal "
			"priority (root or CAP_SYS_NICE can raise it; docs/run.md#realtime)\n",
			c->setup[0] ? c->setup[0]->cmd : "run", err_name(out->realtime));
}

/* The pause before a retry, turning SIGINT/SIGTERM into an interrupt. */
static bool hook_pause(void *arg, uint64_t ns)
{
	(void)arg;
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	for (uint64_t end = clock_now_ns() + ns, now; (now = clock_now_ns()) < end;) {
		uint64_t left = end - now < WAIT_SLICE_NS ? end - now : WAIT_SLICE_NS;
		struct timespec ts = {0, (long)left};
		int sig = sigtimedwait(&set, NULL, &ts);
		if (sig == SIGINT || sig == SIGTERM) {
			cli_signal_taken();
			return true;
		}
	}
	return false;
}

static uint64_t hook_target_cpu(void *arg, size_t variant)
{
	const struct cli_hooks *c = arg;
	return c->setup[variant] ? measure_target_cpu_ns(c->setup[variant]) : 0;
}

static void hook_measured(void *arg, const struct runner_at *at, struct run_result *r)
{
	const struct cli_hooks *c = arg;
	if (c->setup[at->variant])
		measure_probe_window(c->setup[at->variant], r);
}

struct runner_hooks cli_hooks(struct cli_hooks *c)
{
	struct runner_hooks h = {
		.arg = c,
		.wait = hook_wait,
		.ready = hook_ready,
		.pause = hook_pause,
		.target_cpu_ns = hook_target_cpu,
		.measured = hook_measured,
	};
	return h;
}

/* The labels every metric carries (docs/metrics.md): the run's id, when
 * pacer started (UTC, to the second) and its process id, unique on a host;
 * the scenario, a bench scenario file's name without its directory and
 * .yaml/.yml, else the command (run, ramp, compare). */
static void metrics_labels(const struct measure *s, const struct measure_spec *spec, char *run,
			   size_t run_cap, char *scen, size_t scen_cap)
{
	time_t now = (time_t)(clock_wall_ns() / NS_PER_S);
	struct tm tm;
	gmtime_r(&now, &tm);
	char ts[32];
	strftime(ts, sizeof ts, "%Y%m%dT%H%M%SZ", &tm);
	snprintf(run, run_cap, "%s-%ld", ts, (long)getpid());
	const char *path = spec->v[0].plan->scenario;
	if (!path) {
		snprintf(scen, scen_cap, "%s", s->cmd);
		return;
	}
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	size_t n = strlen(base);
	const char *dot = strrchr(base, '.');
	if (dot && dot != base && (!strcmp(dot, ".yaml") || !strcmp(dot, ".yml")))
		n = (size_t)(dot - base);
	snprintf(scen, scen_cap, "%.*s", (int)n, base);
}

/* --metrics-listen of s (nothing to do without it): start the endpoint for
 * the spec's variants, into c->metrics, and say where on stderr unless
 * quiet. 0, or EXIT_RUNTIME after one line. */
static int metrics_start_for(struct cli_hooks *c, const struct measure *s,
			     const struct measure_spec *spec, bool quiet)
{
	c->metrics = NULL;
	if (!s->metrics_listen)
		return 0;
	const char *names[RUNNER_MAX_VARIANTS];
	for (size_t i = 0; i < spec->n && i < RUNNER_MAX_VARIANTS; i++)
		names[i] = spec->v[i].name;
	const char *onames[INSPECT_MAX_OUTCOMES];
	const struct inspect *in = spec->v[0].plan->inspect;
	char run[64], scen[METRICS_LABEL_CAP];
	metrics_labels(s, spec, run, sizeof run, scen, sizeof scen);
	struct metrics_cfg mc = {
		.run = run,
		.scenario = scen,
		.version = PACER_VERSION,
		.commit = PACER_COMMIT,
		.addr = s->metrics_addr,
		.n_variants = spec->n,
		.names = names,
		.outcome_names = in ? inspect_outcome_names(in, onames) : NULL,
		.n_outcomes = in ? (uint32_t)in->n_outcomes : 0,
	};
	int rc = metrics_start(&c->metrics, &mc);
	if (rc) {
		fprintf(stderr, "pacer %s: --metrics-listen %s: %s\n", s->cmd, s->metrics_listen,
			err_name(rc));
		c->metrics = NULL;
		return EXIT_RUNTIME;
	}
	if (!quiet) {
		char a[128];
		struct net_addr at = s->metrics_addr;
		if (at.ss.ss_family == AF_INET)
			((struct sockaddr_in *)&at.ss)->sin_port = htons(metrics_port(c->metrics));
		else
			((struct sockaddr_in6 *)&at.ss)->sin6_port = htons(metrics_port(c->metrics));
		fprintf(stderr,
			"pacer %s: metrics at http://%s/metrics, live page at http://%s/ (run=\"%s\")\n",
			s->cmd, net_addr_str(&at, a, sizeof a), a, run);
	}
	return 0;
}

static void metrics_stop_for(struct cli_hooks *c)
{
	metrics_stop(c->metrics);
	c->metrics = NULL;
}

int cli_measure_fail(const struct measure *m, int rc)
{
	fprintf(stderr, "pacer %s: %s\n", m->cmd, m->err[0] ? m->err : err_name(rc));
	return rc == MEASURE_EUSAGE ? EXIT_USAGE : EXIT_RUNTIME;
}

void cli_measure_notes(struct measure *m)
{
	for (size_t i = 0; i < m->n_notes && i < MEASURE_NOTES; i++)
		fprintf(stderr, "pacer %s: %s\n", m->cmd, m->notes[i]);
	m->n_notes = 0;
}

int cli_prepare(struct measure *m, struct run_plan *plan, struct cli_dist *dist)
{
	int rc = measure_build(m, plan);
	cli_measure_notes(m);
	if (rc)
		return cli_measure_fail(m, rc);
	/* --barrier: the start all segments share, in the plan before it is
	 * validated */
	int ret = dist ? cli_dist_barrier(m->cmd, dist, plan) : 0;
	if (ret)
		return ret;
	rc = measure_ready(m, plan);
	cli_measure_notes(m);
	return rc ? cli_measure_fail(m, rc) : 0;
}

int cli_measure(struct cli_hooks *ch, const struct measure_spec *spec,
		const struct runner_hooks *hooks, struct runner_result *out, bool quiet)
{
	struct measure *m0 = spec->v[0].m;
	sigset_t old;
	cli_signals_block(&old);
	int ret = metrics_start_for(ch, m0, spec, quiet);
	/* the live view: on stderr, whatever stdout is; a ramp's ladder in it
	 * when the step rows go to a file */
	const char *names[RUNNER_MAX_VARIANTS];
	for (size_t i = 0; i < spec->n && i < RUNNER_MAX_VARIANTS; i++)
		names[i] = spec->v[i].name;
	FILE *text = ch->text ? ch->text : stdout;
	ch->live = ret || !ch->progress ? NULL
					: cli_live_open(cli_live_mode(quiet), m0->cmd,
							cli_live_rows_hidden(text), names, spec->n);
	int rc = ret ? 0 : measure_run(spec, hooks, out);
	cli_live_close(ch->live);
	ch->live = NULL;
	metrics_stop_for(ch);
	/* a signal from here on finds the handler, not the default action */
	cli_test_signal("measured");
	cli_outputs_guard(&old);
	if (ret)
		return ret;
	return rc ? cli_measure_fail(m0, rc) : 0;
}

int cli_script_end(struct measure *m, const struct run_result *r, const char *label)
{
	char why[MEASURE_ERR_CAP];
	if (measure_script_failed(m, why, sizeof why)) {
		fprintf(stderr,
			"pacer %s: %s; the load stopped there (what was measured is kept, "
			"marked interrupted)\n",
			m->cmd, why);
		return EXIT_USAGE;
	}
	if (!r)
		return 0;
	fflush(stdout); /* done() prints after the summary */
	int rc = measure_script_done(m, r, label);
	fflush(stdout);
	return rc ? cli_measure_fail(m, rc) : 0;
}

int cli_exit_code(const struct measure *s, int base, bool limited)
{
	if (limited && !s->limited_ok)
		return EXIT_GENERATOR_LIMITED;
	return base;
}

void cli_release(struct measure *s)
{
	history_close(s->history_db);
	s->history_db = NULL;
	measure_release(s);
}
