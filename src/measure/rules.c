/* pacer — what a measurement judges and watches (cli/setup.h): response
 * rules and outcomes, cost profiles, and the probe of the target's CPU and
 * memory. */
#include <stdio.h>
#include <sys/types.h>

#include "cli/cli.h"
#include "cli/setup.h"
#include "util/units.h"

int cli_setup_rules(struct cli_setup *s, struct run_plan *plan)
{
	char err[512];
	inspect_init(&s->inspect);
	if (s->inspect_body) {
		uint64_t v;
		if (units_parse_size(s->inspect_body, &v) || v == 0 || v > INSPECT_BODY_CAP_MAX) {
			fprintf(stderr, "pacer %s: --inspect-body '%s': expected a size from 1 to 16MiB\n",
				s->cmd, s->inspect_body);
			return EXIT_USAGE;
		}
		s->inspect.body_cap = (size_t)v;
	}
	if (s->success && inspect_set_success(&s->inspect, s->success, err, sizeof err)) {
		fprintf(stderr, "pacer %s: --success: %s\n", s->cmd, err);
		return EXIT_USAGE;
	}
	for (size_t i = 0; i < s->outcomes.n; i++) {
		if (inspect_add_outcome(&s->inspect, s->outcomes.v[i], err, sizeof err)) {
			fprintf(stderr, "pacer %s: --outcome '%s': %s\n", s->cmd, s->outcomes.v[i], err);
			return EXIT_USAGE;
		}
	}
	if (s->server_time && inspect_set_srvtime(&s->inspect, s->server_time, err, sizeof err)) {
		fprintf(stderr, "pacer %s: %s\n", s->cmd, err);
		return EXIT_USAGE;
	}
	inspect_finish(&s->inspect);
	plan->inspect = s->inspect.active ? &s->inspect : NULL;

	cost_profiles_default(&s->costs);
	for (size_t i = 0; i < s->cost_args.n; i++) {
		if (cost_profile_add(&s->costs, s->cost_args.v[i], err, sizeof err)) {
			fprintf(stderr, "pacer %s: %s\n", s->cmd, err);
			return EXIT_USAGE;
		}
	}
	int sources = (s->target_pid != 0) + (s->target_cgroup != NULL) + (s->self_contained != NULL);
	if (sources > 1) {
		fprintf(stderr, "pacer %s: give one of --target-pid, --target-cgroup, --self-contained "
			"(a self-contained run measures its embedded target itself)\n", s->cmd);
		return EXIT_USAGE;
	}
	if (s->target_children && !s->target_pid) {
		fprintf(stderr, "pacer %s: --target-children needs --target-pid\n", s->cmd);
		return EXIT_USAGE;
	}
	/* A wrong PID or path fails now, before anything connects. */
	if (s->target_pid || s->target_cgroup) {
		struct probe_cfg pc = {.pid = (pid_t)s->target_pid, .cgroup = s->target_cgroup};
		if (probe_check(&pc, err, sizeof err)) {
			fprintf(stderr, "pacer %s: %s\n", s->cmd, err);
			return EXIT_USAGE;
		}
	}
	return 0;
}

static uint64_t self_target_cpu(void *arg)
{
	return cli_setup_target_cpu_ns(arg);
}

int cli_setup_start_probe(struct cli_setup *s)
{
	struct probe_cfg pc = {.pid = (pid_t)s->target_pid,
			       .children = s->target_children,
			       .cgroup = s->target_cgroup};
	if (s->srv) {
		pc.self_cpu_ns = self_target_cpu;
		pc.self_arg = s;
	} else if (!s->target_pid && !s->target_cgroup) {
		return 0;
	}
	char err[512];
	int rc = probe_start(&s->probe, &pc, err, sizeof err);
	if (rc) {
		fprintf(stderr, "pacer %s: %s\n", s->cmd, err);
		return EXIT_USAGE;
	}
	return 0;
}

void cli_setup_probe_window(struct cli_setup *s, struct run_result *res)
{
	if (!s->probe)
		return;
	probe_window(s->probe, res->measure_start_ns, res->measure_start_ns + res->measure_ns,
		     &res->target);
}
