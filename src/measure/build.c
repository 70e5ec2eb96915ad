/* pacer — a measurement's set-up (measure/measure.h): the order of its
 * steps (measure_build), the embedded target, the engine config, the
 * report settings, copying, release, and its failures and notices. The
 * steps themselves are in requests.c, spool.c, net.c and rules.c
 * (measure_int.h). */
#include "measure/measure.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "measure/measure_int.h"
#include "http/req.h"
#include "net/sock.h"
#include "net/quic.h"
#include "net/tls.h"
#include "script/script.h"
#include "doc/doc.h"
#include "table/table.h"
#include "target/plan.h"
#include "target/target.h"
#include "util/err.h"
#include "util/units.h"
#include "util/text.h"

static int start_embedded(struct measure *s, struct run_plan *plan)
{
	const char *name = s->self_contained && *s->self_contained ? s->self_contained : "hello";
	char err[512] = "";
	int rc = target_plan_builtin(name, &s->tplan);
	if (rc == PACER_EPARSE && access(name, F_OK) == 0) {
		rc = target_plan_load(name, &s->tplan, err, sizeof err);
		if (rc) {
			return measure_fail(s, MEASURE_EUSAGE, "--self-contained: %s", err);
		}
	} else if (rc == PACER_EPARSE) {
		size_t np;
		const struct target_builtin *b = target_plan_builtins(&np);
		struct text_near near;
		text_near_init(&near, name);
		for (size_t i = 0; i < np; i++)
			text_near_offer(&near, b[i].name);
		char dym[96] = "";
		if (near.best)
			snprintf(dym, sizeof dym, "; did you mean %s?", near.best);
		return measure_fail(
			s, MEASURE_EUSAGE,
			"--self-contained=%s: no such built-in plan or plan file (see pacer serve --list-plans%s)",
			name, dym);
	} else if (rc) {
		return measure_fail(s, MEASURE_ERUNTIME, "--self-contained=%s: %s", name, err_name(rc));
	}
	bool h2 = plan->http.http2 || plan->http.h2c, h3 = plan_http3(plan);
	if (plan->http.http2 || h3)
		plan->tls.self_signed = true; /* HTTP/2 over TLS, HTTP/3: the target's own certificate */
	if (plan->tls.self_signed) {
		/* a certificate of its own, trusted by this driver alone */
		rc = tls_identity_self_signed(&s->tls_id, err, sizeof err);
		if (!rc)
			rc = tls_server_ctx_new(&s->tls_server, NULL, NULL, s->tls_id, err, sizeof err);
		if (rc) {
			return measure_fail(s, MEASURE_ERUNTIME, "--tls: %s", err);
		}
		if (plan->http.http2)
			tls_server_ctx_offer_h2(s->tls_server);
	}
	if (h3) {
		/* HTTP/3: QUIC on the UDP port of the target's number, the same certificate */
		char *cert_pem = NULL, *key_pem = NULL;
		rc = tls_identity_pem(s->tls_id, &cert_pem, &key_pem);
		if (!rc)
			rc = quic_server_ctx_new(&s->quic_server, NULL, NULL, cert_pem, key_pem, err,
						 sizeof err);
		else
			snprintf(err, sizeof err, "out of memory");
		free(cert_pem);
		free(key_pem);
		if (rc)
			return measure_fail(s, MEASURE_ERUNTIME, "--http3: %s", err);
	}
	struct net_addr listen;
	net_resolve("127.0.0.1", 0, &listen, NULL);
	unsigned threads = s->target_threads ? s->target_threads : 1;
	/* the target offers as many streams as the driver may use (its default
	 * otherwise); a --max-streams over the cap is refused by plan_validate */
	uint32_t streams = plan->http.max_streams;
	struct target_opts topts = {.tls = s->tls_server,
				    .h2 = h2,
				    .max_streams = streams <= TARGET_H2_STREAMS_MAX ? streams : 0,
				    .quic = s->quic_server};
	rc = target_start_opts(&s->srv, s->tplan, &listen, threads, &topts);
	if (rc) {
		return measure_fail(s, MEASURE_ERUNTIME, "cannot start the embedded target: %s",
			err_name(rc));
	}
	int port = target_port(s->srv);
	const char *path = s->url_arg ? s->url_arg : "/";
	snprintf(s->url_buf, sizeof s->url_buf, "%s://127.0.0.1:%d%s",
		 plan->tls.self_signed ? "https" : "http", port, path);
	plan->url_str = s->url_buf;
	return 0;
}

int measure_build(struct measure *s, struct run_plan *plan)
{
	const char *why = NULL;
	plan->self_contained = s->self_contained;
	int orc = measure_req_table_opts(s);
	if (orc)
		return orc;
	if (s->self_contained) {
		if (s->url_arg && s->url_arg[0] != '/') {
			return measure_fail(s, MEASURE_EUSAGE, "with --self-contained, give a path on the embedded target (like /vast) or nothing, not '%s'", s->url_arg);
		}
		int rc = start_embedded(s, plan);
		if (rc)
			return rc;
	} else if (s->requests_file || s->bodies_dir || s->offered_table) {
		if (s->requests_file && s->bodies_dir) {
			return measure_fail(s, MEASURE_EUSAGE, "give --requests-file or --bodies, not both");
		}
		if (!s->bodies_dir && s->url_arg) {
			return measure_fail(s, MEASURE_EUSAGE, "with %s the table names the URLs; drop '%s'",
				s->requests_file ? "--requests-file" : "a scenario's table", s->url_arg);
		}
		if (s->body_arg) {
			return measure_fail(s, MEASURE_EUSAGE, "--body does not combine with a request table");
		}
		int rc = measure_req_table(s, plan);
		if (rc)
			return rc;
	} else {
		if (!s->url_arg) {
			return measure_fail(s, MEASURE_EUSAGE, "missing URL (usage: pacer %s URL [options]; see --help)", s->cmd);
		}
		plan->url_str = s->url_arg;
	}
	/* a table's first URL may be unix:PATH:http://...: the http part names the run's host */
	const char *url_http = plan->url_str;
	if (s->table) {
		const char *upath = NULL;
		size_t upath_len = 0;
		(void)table_url_unix(plan->url_str, &upath, &upath_len, &url_http, NULL);
	}
	if (url_parse(&plan->url, url_http, &why) < 0) {
		char shown[512]; /* its control bytes (ESC, CR, LF) not echoed to the terminal */
		snprintf(shown, sizeof shown, "%s", plan->url_str);
		text_one_line(shown);
		/* a script where the URL goes: k6's habit, or a wrk script without -s */
		size_t ul = strlen(shown);
		const char *hint = "";
		if (ul > 3 && !strstr(shown, "://") && !strcmp(shown + ul - 3, ".js"))
			hint = " (pacer runs no k6 JavaScript: -s takes wrk's Lua interface, a request "
			       "table --requests-file; docs/migrating.md)";
		else if (ul > 4 && !strstr(shown, "://") && !strcmp(shown + ul - 4, ".lua"))
			hint = " (a wrk script goes with -s FILE.lua, then the URL)";
		return measure_fail(s, MEASURE_EUSAGE, "bad URL '%s': %s%s", shown,
			why ? why : "not understood", hint);
	}
	s->url_http = url_http;
	int rc = measure_net_tls(s, plan);
	if (rc)
		return rc;
	if (plan->method && req_method_check(plan->method) < 0) {
		bool digits = strspn(plan->method, "0123456789") == strlen(plan->method);
		return measure_fail(
			s, MEASURE_EUSAGE, "--method '%s': %s", plan->method,
			digits ? "a number is no method (h2load's -m N, streams per connection, is "
				 "--max-streams here)"
			       : "not a valid method token");
	}
	if ((rc = measure_req_body(s, plan)) || (rc = measure_script_load(s, plan)) ||
	    (rc = measure_req_encode(s, plan)))
		return rc;
	return 0;
}

/* One "connected" entry: the host as named, the address connected to. */
static void conn_of(struct report_conn *c, const char *host, uint16_t port,
		    const struct net_addr *a)
{
	snprintf(c->host, sizeof c->host, "%s", host ? host : "");
	c->port = port;
	net_addr_str(a, c->address, sizeof c->address);
	c->loopback = net_addr_is_loopback(a);
}

int measure_connect(struct measure *s, const struct run_plan *plan)
{
	int rc = measure_net_fd_limit(s, plan);
	if (!rc)
		rc = measure_net_connect(s, plan, s->url_http);
	if (!rc)
		rc = measure_script_start(s);
	if (rc)
		return rc;
	size_t n = s->n_hosts ? s->n_hosts : 1;
	s->conns = calloc(n, sizeof *s->conns);
	if (!s->conns) {
		return measure_fail(s, MEASURE_ERUNTIME, "out of memory");
	}
	s->n_conns = n;
	if (!s->n_hosts) {
		const struct table_host *th = s->table ? &s->table->hosts[0] : NULL;
		bool sock = plan->unix_socket || (th && th->unix_path);
		conn_of(&s->conns[0], th ? th->name : plan->url.host,
			sock ? 0 : th ? th->port : plan->url.port, &s->addr);
	}
	for (size_t i = 0; i < s->n_hosts; i++)
		conn_of(&s->conns[i], s->table->hosts[i].name,
			s->table->hosts[i].unix_path ? 0 : s->table->hosts[i].port,
			&s->hosts[i].addr);
	return 0;
}

void measure_report_ctx(const struct measure *s, struct report_ctx *ctx)
{
	ctx->conns = s->conns;
	ctx->n_conns = s->n_conns;
	ctx->cost = &s->costs;
	ctx->lag_limit_ns = s->lag_limit_ns;
	double cg = 0;
	const char *cg_basis = NULL;
	if (s->target_cores) {
		ctx->target_cores = s->target_cores;
		ctx->target_cores_basis = "option";
	} else if (s->srv) {
		ctx->target_cores = s->target_threads ? s->target_threads : 1;
		ctx->target_cores_basis = "embedded_threads";
	} else if (s->target_cgroup && probe_cgroup_cores(s->target_cgroup, &cg, &cg_basis) == 0) {
		ctx->target_cores = cg;
		ctx->target_cores_basis = !strcmp(cg_basis, "cpu.max") ? "cgroup_cpu_max"
									: "cgroup_cpuset";
	} else {
		long cores = sysconf(_SC_NPROCESSORS_ONLN);
		ctx->target_cores = (double)(cores > 0 ? cores : 1);
		ctx->target_cores_basis = "machine";
	}
}

void measure_engine_cfg(const struct measure *s, const struct run_plan *plan,
			  struct engine_cfg *cfg)
{
	*cfg = (struct engine_cfg){
		.addr = s->addr,
		.reqs = s->reqs,
		.n_reqs = s->n_reqs,
		.order_random = plan->order_random,
		.open_loop = plan->open_loop,
		.arrival = plan->arrival,
		.burst = plan->burst_size,
		.seed = plan->seed,
		/* a segment's share (plan_validate: at least one per thread) */
		.connections = plan->segments > 1 ? (uint32_t)sched_split(plan->connections,
									  plan->segments, plan->segment)
						  : plan->connections,
		.concurrency = plan->segments > 1 ? (uint32_t)sched_split(plan->concurrency,
									  plan->segments, plan->segment)
						  : plan->concurrency,
		.segment = plan->segment,
		.segments = plan->segments,
		.threads = plan->threads,
		.timeout_ns = plan->timeout_ns,
		.spin_ns = plan->spin_ns,
		.send_window_ns = plan->precise ? 0 : plan->send_window_ns,
		.precision = plan->precision,
		.no_keepalive = plan->no_keepalive,
		.inspect = plan->inspect,
		.tls = s->tls_client,
		.tls_host = plan->url.host,
		.tls_resume = plan_tls_resume(plan),
		.hosts = s->hosts,
		.n_hosts = s->n_hosts,
		.n_names = s->names.n,
		.quic = s->quic_client,
		.http = plan_http3(plan)	   ? ENGINE_H3
			: plan->http.h2c	   ? ENGINE_H2C
			: !plan->http.http2	   ? ENGINE_H1
			: *plan->http.http2 == '\0' ? ENGINE_H2
						   : ENGINE_H2_PREFER,
		.max_streams = plan->http.max_streams,
		.lag_limit_ns = s->lag_limit_ns,
		.realtime = plan->realtime,
	};
	uint64_t win = 0;
	if (plan->http.window && units_parse_size(plan->http.window, &win) == 0)
		cfg->h2_window = (uint32_t)win; /* checked by plan_validate */
	measure_script_engine(s, cfg);
}

bool measure_target_local(const struct measure *s)
{
	if (!s->n_hosts)
		return net_addr_is_loopback(&s->addr);
	for (uint32_t h = 0; h < s->n_hosts; h++)
		if (net_addr_is_loopback(&s->hosts[h].addr))
			return true;
	return false;
}

uint64_t measure_target_cpu_ns(const struct measure *s)
{
	uint64_t ns = 0;
	if (s->srv && target_cpu_ns(s->srv, &ns) != 0)
		ns = 0;
	return ns;
}

size_t measure_target_tids(const struct measure *s, pid_t *tids, size_t cap)
{
	return s->srv ? target_tids(s->srv, tids, cap) : 0;
}

static int copy_list(struct strlist *dst, const struct strlist *src)
{
	*dst = (struct strlist){0};
	for (size_t i = 0; i < src->n; i++)
		if (strlist_add(dst, src->v[i]))
			return -ENOMEM;
	return 0;
}

int measure_copy_inputs(struct measure *dst, const struct measure *src)
{
	memset(dst, 0, sizeof *dst);
	memcpy(dst, src, offsetof(struct measure, addr));
	dst->outcomes = dst->cost_args = dst->headers = dst->script_args = (struct strlist){0};
	if (copy_list(&dst->outcomes, &src->outcomes) ||
	    copy_list(&dst->cost_args, &src->cost_args) ||
	    copy_list(&dst->headers, &src->headers) ||
	    copy_list(&dst->script_args, &src->script_args))
		return -ENOMEM;
	return 0;
}

void measure_release(struct measure *s)
{
	probe_stop(s->probe);
	s->probe = NULL;
	script_free(s->script); /* its states: before the names they interned into */
	s->script = NULL;
	strlist_free(&s->script_args);
	strlist_free(&s->cost_args);
	strlist_free(&s->headers);
	strlist_free(&s->redact_headers);
	inspect_free(&s->inspect);
	strlist_free(&s->outcomes);
	target_stop(s->srv);
	s->srv = NULL;
	tls_ctx_free(s->tls_client);
	tls_ctx_free(s->tls_server);
	quic_ctx_free(s->quic_client);
	quic_ctx_free(s->quic_server);
	s->quic_client = s->quic_server = NULL;
	tls_identity_free(s->tls_id);
	s->tls_client = s->tls_server = NULL;
	s->tls_id = NULL;
	if (s->tplan)
		target_plan_free(s->tplan);
	s->tplan = NULL;
	for (size_t i = 0; s->bufs && i < s->n_reqs; i++)
		free(s->bufs[i]);
	if (s->wire) {
		table_wire_free(s->wire);
		free(s->wire);
		s->wire = NULL;
	}
	if (s->table != s->offered_table)
		table_free(s->table);
	s->table = NULL;
	free(s->hosts);
	free(s->conns);
	s->conns = NULL;
	s->n_conns = 0;
	s->hosts = NULL;
	s->n_hosts = 0;
	measure_spool_release(s);
	free(s->bufs);
	free(s->reqs);
	req_names_free(&s->names);
	free(s->body_buf);
	s->bufs = NULL;
	s->reqs = NULL;
	s->n_reqs = 0;
	s->body_buf = NULL;
}
