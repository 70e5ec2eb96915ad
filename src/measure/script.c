/* pacer — a measurement's script (-s FILE.lua; src/script): loaded with
 * the URL and the options as wrk's fields, started once the target is
 * resolved (a Lua state per worker, setup and init run), handed to the
 * engine as its flows, and asked at the end for done() and what failed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "measure/measure_int.h"
#include "script/script.h"
#include "util/units.h"

int measure_script_load(struct measure *s, struct run_plan *plan)
{
	if (!s->script_path)
		return 0;
	if (s->requests_file || s->bodies_dir || s->offered_table)
		return measure_fail(
			s, MEASURE_EUSAGE,
			"-s %s: a script makes the requests; give it or a request table "
			"(--requests-file, --bodies), not both",
			s->script_path);
	uint64_t mem = SCRIPT_MEM_DEFAULT;
	if (s->script_memory &&
	    (units_parse_size(s->script_memory, &mem) || mem < (1u << 20) || mem > (64ull << 30)))
		return measure_fail(
			s, MEASURE_EUSAGE,
			"--script-memory '%s': expected a size from 1MiB to 64GiB, like "
			"256MiB",
			s->script_memory);
	if (s->script_args.n > SCRIPT_MAX_ARGS)
		return measure_fail(s, MEASURE_EUSAGE, "-s: %zu arguments after --; at most %d",
				    s->script_args.n, SCRIPT_MAX_ARGS);
	uint64_t body_cap = SCRIPT_BODY_CAP_DEFAULT;
	if (s->inspect_body) {
		uint64_t v;
		if (units_parse_size(s->inspect_body, &v) == 0 && v > 0)
			body_cap = v; /* checked by measure_rules */
	}
	struct script_cfg cfg = {
		.path = s->script_path,
		.url = s->url_http ? s->url_http : plan->url_str,
		.headers = plan->headers,
		.n_headers = plan->n_headers,
		.method = plan->method,
		.body = plan->body,
		.body_len = plan->body_len,
		.args = (const char *const *)s->script_args.v,
		.n_args = s->script_args.n,
		.threads = plan->threads,
		.open_loop = plan->open_loop,
		.mem_cap = (size_t)mem,
		.call_limit_ns = s->script_timeout_ns,
		.body_cap = (size_t)body_cap,
		.names = &s->names,
	};
	char err[SCRIPT_ERR_CAP];
	if (script_load(&s->script, &cfg, err, sizeof err))
		return measure_fail(s, MEASURE_EUSAGE, "script %s", err);
	const struct script_info *in = script_info(s->script);
	struct plan_script *r = &s->script_rec;
	static const char *const modes[] = {"static", "wrk", "session"};
	*r = (struct plan_script){
		.path = s->script_path,
		.sha256 = in->sha256,
		.mode = modes[in->mode],
		.args = cfg.args,
		.n_args = cfg.n_args,
		.memory_bytes = mem,
		.call_limit_ns = s->script_timeout_ns ? s->script_timeout_ns
						      : SCRIPT_CALL_LIMIT_DEFAULT_NS,
		.body_cap = body_cap,
		.delay_ignored = in->delay_ignored,
	};
	const bool has[] = {in->has_setup,   in->has_init,     in->has_delay,
			    in->has_request, in->has_response, in->has_done};
	static const char *const names[] = {"setup",   "init",     "delay",
					    "request", "response", "done"};
	for (size_t i = 0; i < sizeof has / sizeof has[0]; i++)
		if (has[i])
			r->hooks[r->n_hooks++] = names[i];
	if (in->mode == SCRIPT_SESSION)
		r->hooks[r->n_hooks++] = "session";
	plan->script = r;
	if (in->delay_ignored)
		measure_note(s,
			     "%s defines delay(): in open loop the schedule decides when each "
			     "request is due, so delay() is not called (closed loop calls it; "
			     "docs/scripting.md)",
			     s->script_path);
	return 0;
}

int measure_script_start(struct measure *s)
{
	if (!s->script)
		return 0;
	if (s->n_hosts)
		return measure_fail(s, MEASURE_EUSAGE, "-s: a script sends to one host");
	char err[SCRIPT_ERR_CAP];
	if (script_start(s->script, &s->addr, err, sizeof err))
		return measure_fail(s, MEASURE_EUSAGE, "script %s", err);
	const struct script_info *in = script_info(s->script);
	s->script_rec.response_headers = in->want_headers;
	s->script_rec.response_body = in->want_body;
	/* a static script that init() made differ per thread is sent as flows */
	static const char *const modes[] = {"static", "wrk", "session"};
	s->script_rec.mode = modes[in->mode];
	return 0;
}

void measure_script_engine(const struct measure *s, struct engine_cfg *cfg)
{
	if (!s->script)
		return;
	const struct script_info *in = script_info(s->script);
	cfg->flows = script_flow_ops(s->script);
	cfg->flow_state = script_flow_states(s->script);
	cfg->worker_addr = script_worker_addrs(s->script);
	if (!cfg->flows)
		return;
	cfg->flow_sessions = in->mode == SCRIPT_SESSION;
	cfg->flow_headers = in->want_headers;
	cfg->flow_body_cap = in->want_body ? (size_t)s->script_rec.body_cap : 0;
	if (in->mode == SCRIPT_SESSION)
		cfg->n_names = RESULT_MAX_NAMES + 1; /* the steps' names come as they run */
}

bool measure_script_failed(const struct measure *s, char *msg, size_t cap)
{
	char why[SCRIPT_ERR_CAP];
	if (!s->script || !script_failed(s->script, why, sizeof why))
		return false;
	snprintf(msg, cap, "script %s", why);
	return true;
}

int measure_script_done(struct measure *s, const struct run_result *r, const char *label)
{
	if (!s->script || !script_info(s->script)->has_done)
		return 0;
	const struct phase_stats *p = &r->measure;
	uint64_t status = 0;
	for (int st = 400; st <= STATUS_MAX; st++)
		status += p->status[st];
	uint64_t *per_sec = r->series_len ? calloc(r->series_len, sizeof *per_sec) : NULL;
	for (size_t i = 0; per_sec && i < r->series_len; i++)
		per_sec[i] = r->series[i].completed;
	struct script_summary sum = {
		.duration_ns = r->measure_ns,
		.requests = p->completed,
		.bytes = p->bytes_in,
		.err_connect = p->errors[ERRK_CONNECT],
		.err_read = p->errors[ERRK_READ] + p->errors[ERRK_CLOSED] + p->errors[ERRK_PARSE] +
			    p->errors[ERRK_RESET],
		.err_write = p->errors[ERRK_WRITE],
		.err_status = status,
		.err_timeout = p->errors[ERRK_TIMEOUT],
		.latency = &p->timing[TIM_LATENCY],
		.per_sec = per_sec,
		.n_per_sec = per_sec ? r->series_len : 0,
		.label = label,
		.rate_per_s = r->offered_rate_per_s,
	};
	char err[SCRIPT_ERR_CAP];
	int rc = script_done(s->script, &sum, err, sizeof err);
	free(per_sec);
	if (rc)
		return measure_fail(s, MEASURE_EUSAGE, "script %s", err);
	return 0;
}
