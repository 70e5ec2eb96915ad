/* pacer — the runner's hooks from the command line's side (cli/run_hooks.h). */
#include "cli/run_hooks.h"

#include <stddef.h>
#include <stdio.h>
#include <time.h>

#include "util/clock.h"
#include "util/units.h"

static void progress_line(struct engine *e)
{
	struct engine_progress p;
	engine_progress(e, &p);
	char a[32], b[32], c[32];
	if (p.total_ns)
		snprintf(a, sizeof a, "%5.1fs/%.1fs", (double)p.elapsed_ns / 1e9,
			 (double)p.total_ns / 1e9);
	else
		snprintf(a, sizeof a, "%5.1fs", (double)p.elapsed_ns / 1e9);
	printf("\r\033[K[%s] %s  %s req/s  p99 %s  errors %llu", a, p.in_warmup ? "warm-up" : "measure",
	       units_fmt_thousands(b, sizeof b, p.rate_per_s, 0),
	       p.p99_ns ? units_fmt_duration(c, sizeof c, (double)p.p99_ns) : "-",
	       (unsigned long long)p.errors);
	fflush(stdout);
}

/* How long the wait sleeps between looks at the signals, the engine and
 * the clock: the latency of Ctrl-C. */
#define WAIT_SLICE_NS (100 * 1000 * 1000)

bool cli_wait_engine(struct engine *e, bool progress)
{
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	bool interrupted = false;
	uint64_t next_draw = clock_now_ns() + NS_PER_S;
	while (!engine_done(e)) {
		struct timespec ts = {0, WAIT_SLICE_NS};
		int sig = sigtimedwait(&set, NULL, &ts);
		if (sig == SIGINT || sig == SIGTERM) {
			interrupted = true;
			engine_interrupt(e);
		}
		if (progress && clock_now_ns() >= next_draw) {
			progress_line(e);
			next_draw += NS_PER_S;
		}
	}
	if (progress) {
		printf("\r\033[K");
		fflush(stdout);
	}
	return interrupted;
}

static bool hook_wait(void *arg, struct engine *e, const struct runner_at *at)
{
	(void)at;
	const struct cli_hooks *c = arg;
	return cli_wait_engine(e, c->progress);
}

static uint64_t hook_target_cpu(void *arg, size_t variant)
{
	const struct cli_hooks *c = arg;
	return c->setup[variant] ? cli_setup_target_cpu_ns(c->setup[variant]) : 0;
}

static void hook_measured(void *arg, const struct runner_at *at, struct run_result *r)
{
	const struct cli_hooks *c = arg;
	if (c->setup[at->variant])
		cli_setup_probe_window(c->setup[at->variant], r);
}

struct runner_hooks cli_hooks(struct cli_hooks *c)
{
	struct runner_hooks h = {
		.arg = c,
		.wait = hook_wait,
		.target_cpu_ns = hook_target_cpu,
		.measured = hook_measured,
	};
	return h;
}

void cli_signals_block(sigset_t *old)
{
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigprocmask(SIG_BLOCK, &set, old);
	signal(SIGPIPE, SIG_IGN);
}

void cli_signals_restore(const sigset_t *old)
{
	sigprocmask(SIG_SETMASK, old, NULL);
}
