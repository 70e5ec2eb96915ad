/* pacer — the runner's hooks from the command line's side (cli/run_hooks.h). */
#include "cli/run_hooks.h"

#include <stddef.h>

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
