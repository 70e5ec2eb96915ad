/* pacer — what a measurement judges and watches (measure/measure.h): response
 * rules and outcomes, cost profiles, and the probe of the target's CPU and
 * memory. */
#include <stdio.h>
#include <sys/types.h>

#include "measure/measure.h"
#include "util/units.h"

int measure_rules(struct measure *s, struct run_plan *plan)
{
	char err[512];
	inspect_init(&s->inspect);
	if (s->inspect_body) {
		uint64_t v;
		if (units_parse_size(s->inspect_body, &v) || v == 0 || v > INSPECT_BODY_CAP_MAX) {
			return measure_fail(s, MEASURE_EUSAGE, "--inspect-body '%s': expected a size from 1 to 16MiB", s->inspect_body);
		}
		s->inspect.body_cap = (size_t)v;
	}
	if (s->success && inspect_set_success(&s->inspect, s->success, err, sizeof err)) {
		return measure_fail(s, MEASURE_EUSAGE, "--success: %s", err);
	}
	for (size_t i = 0; i < s->outcomes.n; i++) {
		if (inspect_add_outcome(&s->inspect, s->outcomes.v[i], err, sizeof err)) {
			return measure_fail(s, MEASURE_EUSAGE, "--outcome '%s': %s", s->outcomes.v[i], err);
		}
	}
	if (s->server_time && inspect_set_srvtime(&s->inspect, s->server_time, err, sizeof err)) {
		return measure_fail(s, MEASURE_EUSAGE, "%s", err);
	}
	inspect_finish(&s->inspect);
	plan->inspect = s->inspect.active ? &s->inspect : NULL;

	cost_profiles_default(&s->costs);
	for (size_t i = 0; i < s->cost_args.n; i++) {
		if (cost_profile_add(&s->costs, s->cost_args.v[i], err, sizeof err)) {
			return measure_fail(s, MEASURE_EUSAGE, "%s", err);
		}
	}
	int sources = (s->target_pid != 0) + (s->target_cgroup != NULL) + (s->self_contained != NULL);
	if (sources > 1) {
		return measure_fail(s, MEASURE_EUSAGE, "give one of --target-pid, --target-cgroup, --self-contained (a self-contained run measures its embedded target itself)");
	}
	if (s->target_children && !s->target_pid) {
		return measure_fail(s, MEASURE_EUSAGE, "--target-children needs --target-pid");
	}
	/* A wrong PID or path fails now, before anything connects. */
	if (s->target_pid || s->target_cgroup) {
		struct probe_cfg pc = {.pid = (pid_t)s->target_pid, .cgroup = s->target_cgroup};
		if (probe_check(&pc, err, sizeof err)) {
			return measure_fail(s, MEASURE_EUSAGE, "%s", err);
		}
	}
	return 0;
}

static uint64_t self_target_cpu(void *arg)
{
	return measure_target_cpu_ns(arg);
}

static size_t self_target_tids(void *arg, pid_t *tids, size_t cap)
{
	return measure_target_tids(arg, tids, cap);
}

int measure_start_probe(struct measure *s)
{
	struct probe_cfg pc = {.pid = (pid_t)s->target_pid,
			       .children = s->target_children,
			       .cgroup = s->target_cgroup};
	if (s->srv) {
		pc.self_cpu_ns = self_target_cpu;
		pc.self_tids = self_target_tids;
		pc.self_arg = s;
	} else if (!s->target_pid && !s->target_cgroup) {
		return 0;
	}
	char err[512];
	int rc = probe_start(&s->probe, &pc, err, sizeof err);
	if (rc) {
		return measure_fail(s, MEASURE_EUSAGE, "%s", err);
	}
	return 0;
}

void measure_probe_window(struct measure *s, struct run_result *res)
{
	if (!s->probe)
		return;
	probe_window(s->probe, res->measure_start_ns, res->measure_start_ns + res->measure_ns,
		     &res->target);
}
