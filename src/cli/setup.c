/* pacer — shared set-up of a measurement: requests, target, engine config. */
#include "cli/setup.h"

#include <errno.h>
#include <stddef.h>
#include <signal.h>
#include <time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/opts.h"
#include "cli/report_io.h"
#include "http/req.h"
#include "net/sock.h"
#include "net/tls.h"
#include "report/report.h"
#include "table/table.h"
#include "target/plan.h"
#include "target/target.h"
#include "util/clock.h"
#include "util/err.h"
#include "util/file.h"
#include "util/units.h"

#define MAX_BODY_BYTES (64u * 1024 * 1024)

/* A JSON body for routes of the embedded target that take one. */
static const char sample_json_body[] =
	"{\"id\":\"pacer-self-contained\",\"imp\":[{\"id\":\"1\",\"video\":{\"w\":640,\"h\":360}}],"
	"\"site\":{\"page\":\"http://example.invalid/\"},\"tmax\":120}";

static int add_request(struct cli_setup *s, const char *method,
		       const struct url *u, const char *const *headers, size_t n_headers,
		       const char *body, size_t body_len)
{
	struct req_spec rs = {
		.method = method,
		.url = u,
		.headers = headers,
		.n_headers = n_headers,
		.body = body,
		.body_len = body_len,
		.user_agent = PACER_USER_AGENT,
	};
	char *buf = NULL;
	size_t len = 0;
	const char *why = "out of memory";
	int rc = req_encode(&rs, &buf, &len, &why);
	if (rc) {
		fprintf(stderr, "pacer %s: --header: %s\n", s->cmd, why);
		return EXIT_USAGE;
	}
	struct engine_req *nr = realloc(s->reqs, (s->n_reqs + 1) * sizeof *nr);
	char **nb = realloc(s->bufs, (s->n_reqs + 1) * sizeof *nb);
	if (nr)
		s->reqs = nr;
	if (nb)
		s->bufs = nb;
	if (!nr || !nb) {
		free(buf);
		fprintf(stderr, "pacer %s: out of memory\n", s->cmd);
		return EXIT_RUNTIME;
	}
	s->bufs[s->n_reqs] = buf;
	s->reqs[s->n_reqs] = (struct engine_req){
		.buf = buf, .len = len, .head = strcmp(method, "HEAD") == 0};
	s->n_reqs++;
	plan_workload_add(&s->workload, method, u->target, strlen(u->target), body_len, NULL);
	return 0;
}

/* Self-contained without a path: one request per route of the plan, so the
 * load covers what the plan describes (e.g. vast_ortb_mix: half VAST GETs,
 * half OpenRTB POSTs). */
static int add_route_requests(struct cli_setup *s, const struct run_plan *plan, struct url *base)
{
	const struct target_plan *tp = s->tplan;
	for (size_t i = 0; i < tp->n_routes; i++) {
		const struct target_route *rt = &tp->routes[i];
		const char *method = rt->method ? rt->method : "GET";
		bool has_body = strcmp(method, "POST") == 0 || strcmp(method, "PUT") == 0 ||
				strcmp(method, "PATCH") == 0;
		struct url u = *base;
		int n = snprintf(u.target, sizeof u.target, "%.*s", (int)rt->path_len, rt->path);
		if (rt->kv && rt->kv->param) {
			/* a lookup of a few keys the table holds */
			n += snprintf(u.target + n, sizeof u.target - (size_t)n, "?%s=", rt->kv->param);
			for (int k = 0; k < 4; k++) {
				const char *key = NULL;
				char gen[96];
				if (rt->kv->generate) {
					snprintf(gen, sizeof gen, "%s%llu", rt->kv->prefix ? rt->kv->prefix : "",
						 (unsigned long long)((uint64_t)k % rt->kv->generate));
					key = gen;
				} else if (rt->kv->n_table) {
					key = rt->kv->table[(size_t)k % rt->kv->n_table].name;
				}
				if (!key)
					break;
				n += snprintf(u.target + n, sizeof u.target - (size_t)n, "%s%s",
					      k ? "," : "", key);
			}
		}
		const char *hdrs[64];
		size_t nh = 0;
		for (size_t k = 0; k < plan->n_headers && nh < 63; k++)
			hdrs[nh++] = plan->headers[k];
		if (has_body && !plan->body)
			hdrs[nh++] = "Content-Type: application/json";
		const char *body = plan->body ? plan->body : has_body ? sample_json_body : NULL;
		size_t body_len = plan->body ? plan->body_len : has_body ? strlen(sample_json_body) : 0;
		int rc = add_request(s, method, &u, hdrs, nh, body, body_len);
		if (rc)
			return rc;
	}
	return 0;
}

/* The workload's identity when there is no table: the SHA-256 of the
 * requests' wire bytes in the form a table's is taken (table_wire_hash), so
 * the same bytes give the same hash however they were made. */
static int hash_requests(struct cli_setup *s)
{
	size_t total = 0;
	for (size_t i = 0; i < s->n_reqs; i++)
		total += s->reqs[i].len;
	struct table_wire w = {.n = s->n_reqs};
	w.bytes = malloc(total ? total : 1);
	w.off = malloc((s->n_reqs + 1) * sizeof *w.off);
	int rc = w.bytes && w.off ? 0 : -ENOMEM;
	if (!rc) {
		w.off[0] = 0;
		for (size_t i = 0; i < s->n_reqs; i++) {
			memcpy(w.bytes + w.off[i], s->reqs[i].buf, s->reqs[i].len);
			w.off[i + 1] = w.off[i] + s->reqs[i].len;
		}
		rc = table_wire_hash(&w, s->workload.sha256);
	}
	free(w.bytes);
	free(w.off);
	if (rc) {
		fprintf(stderr, "pacer %s: out of memory\n", s->cmd);
		return EXIT_RUNTIME;
	}
	return 0;
}

static int start_embedded(struct cli_setup *s, struct run_plan *plan)
{
	const char *name = s->self_contained && *s->self_contained ? s->self_contained : "hello";
	char err[512] = "";
	int rc = target_plan_builtin(name, &s->tplan);
	if (rc == PACER_EPARSE && access(name, F_OK) == 0) {
		rc = target_plan_load(name, &s->tplan, err, sizeof err);
		if (rc) {
			fprintf(stderr, "pacer %s: --self-contained: %s\n", s->cmd, err);
			return EXIT_USAGE;
		}
	} else if (rc == PACER_EPARSE) {
		fprintf(stderr,
			"pacer %s: --self-contained=%s: no such built-in plan or plan file (see pacer "
			"serve --list-plans)\n",
			s->cmd, name);
		return EXIT_USAGE;
	} else if (rc) {
		fprintf(stderr, "pacer %s: --self-contained=%s: %s\n", s->cmd, name, err_name(rc));
		return EXIT_RUNTIME;
	}
	if (plan->tls.self_signed) {
		/* a certificate of its own, trusted by this driver alone */
		rc = tls_identity_self_signed(&s->tls_id, err, sizeof err);
		if (!rc)
			rc = tls_server_ctx_new(&s->tls_server, NULL, NULL, s->tls_id, err, sizeof err);
		if (rc) {
			fprintf(stderr, "pacer %s: --tls: %s\n", s->cmd, err);
			return EXIT_RUNTIME;
		}
	}
	struct net_addr listen;
	net_resolve("127.0.0.1", 0, &listen, NULL);
	unsigned threads = s->target_threads ? s->target_threads : 1;
	rc = target_start_tls(&s->srv, s->tplan, &listen, threads, s->tls_server);
	if (rc) {
		fprintf(stderr, "pacer %s: cannot start the embedded target: %s\n", s->cmd,
			err_name(rc));
		return EXIT_RUNTIME;
	}
	int port = target_port(s->srv);
	const char *path = s->url_arg ? s->url_arg : "/";
	snprintf(s->url_buf, sizeof s->url_buf, "%s://127.0.0.1:%d%s",
		 plan->tls.self_signed ? "https" : "http", port, path);
	plan->url_str = s->url_buf;
	return 0;
}

int cli_parse_args(const char *cmd, struct opt *tab, size_t n, int argc, char **argv,
		   void (*usage)(FILE *, struct opt *, size_t), const char **url)
{
	const char *pos[2];
	size_t npos = 0;
	char err[512];
	int rc = opts_parse(tab, n, argc, argv, pos, 2, &npos, err, sizeof err);
	if (rc == 1) {
		usage(stdout, tab, n);
		return EXIT_OK;
	}
	if (rc < 0) {
		fprintf(stderr, "pacer %s: %s\n", cmd, err);
		return EXIT_USAGE;
	}
	if (npos > 1) {
		fprintf(stderr, "pacer %s: expected one URL, got %zu arguments\n", cmd, npos);
		return EXIT_USAGE;
	}
	*url = npos ? pos[0] : NULL;
	return -1;
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
		fprintf(stderr, "pacer %s: --arrival '%s': expected constant or poisson\n", cmd,
			arrival);
		return EXIT_USAGE;
	}
	return 0;
}

/* A table built by the caller of the subcommand (cli_setup_offer_table). */
static struct table *offered_table;

void cli_setup_offer_table(struct table *t)
{
	if (offered_table != t)
		table_free(offered_table);
	offered_table = t;
}

/* --requests-file / --bodies / an offered table: load, check, encode and
 * identify the table. */
static int load_table(struct cli_setup *s, struct run_plan *plan)
{
	char err[1024];
	struct table_limits lim = {0};
	if (s->max_body) {
		uint64_t v;
		if (units_parse_size(s->max_body, &v) || v == 0) {
			fprintf(stderr, "pacer %s: --max-body '%s': expected a size like 64k or 1MiB\n",
				s->cmd, s->max_body);
			return EXIT_USAGE;
		}
		lim.max_body_bytes = (size_t)v;
	}
	int rc;
	if (s->bodies_dir) {
		if (!s->url_arg) {
			fprintf(stderr, "pacer %s: --bodies needs the URL to send them to\n", s->cmd);
			return EXIT_USAGE;
		}
		rc = table_from_bodies(s->bodies_dir, s->url_arg, plan->method, NULL, &lim, &s->table,
				       err, sizeof err);
	} else if (!s->requests_file) {
		s->table = offered_table;
		offered_table = NULL;
		rc = 0;
	} else {
		enum table_format fmt = TABLE_FMT_AUTO;
		if (s->requests_format && table_format_parse(s->requests_format, &fmt)) {
			fprintf(stderr,
				"pacer %s: --requests-format '%s': expected auto, targets or jsonl\n",
				s->cmd, s->requests_format);
			return EXIT_USAGE;
		}
		rc = table_load(s->requests_file, fmt, &lim, &s->table, err, sizeof err);
	}
	if (rc) {
		fprintf(stderr, "pacer %s: %s\n", s->cmd, err);
		return EXIT_USAGE;
	}
	const struct table *t = s->table;
	if (t->n_hosts > ENGINE_MAX_HOSTS) {
		fprintf(stderr, "pacer %s: %s: the table spans %zu hosts; at most %d per run\n", s->cmd,
			t->source, t->n_hosts, ENGINE_MAX_HOSTS);
		return EXIT_USAGE;
	}
	for (size_t i = 0; plan->unix_socket && i < t->n_hosts; i++)
		if (t->hosts[i].unix_path) {
			fprintf(stderr, "pacer %s: %s: --unix-socket does not combine with a table whose "
				"URLs name their own socket (unix:%s:...); drop --unix-socket\n", s->cmd,
				t->source, t->hosts[i].unix_path);
			return EXIT_USAGE;
		}
	if (t->n_hosts > 1 && plan->unix_socket) {
		fprintf(stderr, "pacer %s: %s: --unix-socket sends every request to one socket; the "
			"table spans %zu hosts\n", s->cmd, t->source, t->n_hosts);
		return EXIT_USAGE;
	}
	/* The URL of the first request names the run (and, with one host, the
	 * host all of them go to). */
	plan->url_str = t->reqs[0].url;
	s->wire = calloc(1, sizeof *s->wire);
	if (!s->wire)
		return EXIT_RUNTIME;
	rc = table_encode(t, PACER_USER_AGENT, plan->headers, plan->n_headers, s->wire, err,
			  sizeof err);
	if (!rc)
		rc = table_wire_hash(s->wire, s->table_sha256);
	if (rc) {
		fprintf(stderr, "pacer %s: %s\n", s->cmd, err);
		return EXIT_USAGE;
	}
	s->reqs = calloc(t->n, sizeof *s->reqs);
	if (!s->reqs)
		return EXIT_RUNTIME;
	for (size_t i = 0; i < t->n; i++)
		s->reqs[i] = (struct engine_req){
			.buf = s->wire->bytes + s->wire->off[i],
			.len = s->wire->off[i + 1] - s->wire->off[i],
			.head = strcmp(t->reqs[i].method, "HEAD") == 0,
			.host = (uint32_t)t->reqs[i].host,
		};
	s->n_reqs = t->n;
	plan_workload_init(&s->workload, s->bodies_dir ? "bodies" : "table");
	for (size_t i = 0; i < t->n; i++)
		plan_workload_add(&s->workload, t->reqs[i].method, t->reqs[i].target,
				  strlen(t->reqs[i].target), t->reqs[i].body_len, t->reqs[i].shape);
	memcpy(s->workload.sha256, s->table_sha256, sizeof s->workload.sha256);
	plan->table_source = t->source;
	plan->table_format = table_format_name(t->format);
	plan->table_sha256 = s->table_sha256;
	plan->table_requests = t->n;
	plan->table_hosts = t->hosts;
	plan->table_n_hosts = t->n_hosts;
	return 0;
}

int cli_parse_order(const char *cmd, const char *order, struct run_plan *plan)
{
	if (!order || !strcmp(order, "sequential"))
		plan->order_random = false;
	else if (!strcmp(order, "random"))
		plan->order_random = true;
	else {
		fprintf(stderr, "pacer %s: --order '%s': expected sequential or random\n", cmd, order);
		return EXIT_USAGE;
	}
	return 0;
}

/* The TLS side of the plan: check the options against the URL and make the
 * driver's context. 0 or an exit code after one line. */
static int setup_tls(struct cli_setup *s, struct run_plan *plan)
{
	const struct plan_tls *t = &plan->tls;
	plan->tls.resume = !t->no_resume;
	bool any_tls = plan->url.tls;
	for (size_t i = 0; s->table && i < s->table->n_hosts; i++)
		any_tls |= s->table->hosts[i].tls;
	if (!any_tls) {
		const char *opt = t->insecure ? "--insecure"
				  : t->cacert ? "--cacert"
				  : t->cert   ? "--cert"
				  : t->key    ? "--key"
					      : NULL;
		if (opt) {
			fprintf(stderr, "pacer %s: %s is for https:// URLs; '%s' is plain http\n", s->cmd,
				opt, plan->url_str);
			return EXIT_USAGE;
		}
		return 0;
	}
	struct tls_client_cfg cfg = {
		.insecure = t->insecure,
		.cacert = t->cacert,
		.cert = t->cert,
		.key = t->key,
		.trust = s->tls_id, /* self-contained --tls: exactly the generated one */
	};
	char err[512];
	int rc = tls_client_ctx_new(&s->tls_client, &cfg, err, sizeof err);
	if (rc) {
		fprintf(stderr, "pacer %s: %s\n", s->cmd, err);
		return rc == -ENOMEM ? EXIT_RUNTIME : EXIT_USAGE;
	}
	return 0;
}

/* https: one handshake before the run, so that a certificate or protocol
 * problem is said once, at the start, in words. The run still goes on (each
 * failed handshake counted in errors.tls), unless it is bounded by
 * --requests alone and so could never end. 0 or an exit code. */
static int probe_tls(struct cli_setup *s, const struct run_plan *plan)
{
	if (!s->tls_client)
		return 0;
	char reason[256] = "";
	uint64_t t = plan->timeout_ns < 5 * NS_PER_S ? plan->timeout_ns : 5 * NS_PER_S;
	int rc = tls_probe(s->tls_client, &s->addr, plan->url.host, t, reason, sizeof reason);
	if (rc == 0)
		return 0;
	if (rc != TLS_FAILED)
		snprintf(reason, sizeof reason, "%s", rc == -ETIMEDOUT ? "timed out" : err_name(rc));
	bool endless = !plan->open_loop && plan->requests && !plan->duration_given;
	fprintf(stderr, "pacer %s: TLS handshake with %s failed: %s%s\n", s->cmd, plan->url_str,
		reason,
		endless ? "" : "\n  (the run goes on; every failed handshake is counted in errors.tls)");
	return endless ? EXIT_USAGE : 0;
}

/* Why a connect to a Unix socket failed, in words ("" when errno says it). */
static const char *unix_hint(int rc)
{
	return rc == -ENOENT	   ? " (no socket at that path: is the server listening there?)"
	       : rc == -ECONNREFUSED ? " (a socket file, but nothing accepts on it)"
	       : rc == -ENOTSOCK     ? " (not a socket)"
				     : "";
}

/* A Unix socket at path into *a (no DNS). who names it in messages
 * ("--unix-socket /run/x.sock", or a table host). 0, or EXIT_USAGE after
 * one line when the path does not fit a socket address. */
static int unix_addr(const struct cli_setup *s, const char *who, const char *path,
		     struct net_addr *a)
{
	int rc = net_addr_unix(path, a);
	if (rc) {
		fprintf(stderr, "pacer %s: %s: %s\n", s->cmd, who,
			rc == -ENAMETOOLONG ? "path too long for a Unix socket (107 bytes at most)"
					    : err_name(rc));
		return EXIT_USAGE;
	}
	return 0;
}

/* A table of several hosts: resolve each (an error names the host and the
 * table), give https hosts the driver's TLS context with their own name,
 * and check that each accepts a connection. A host that does not is
 * reported and the run goes on (its requests are dropped while it refuses,
 * its connects counted in errors.connect), unless none does. 0 or an exit
 * code after printing. */
static int prepare_hosts(struct cli_setup *s, const struct run_plan *plan)
{
	const struct table *t = s->table;
	s->hosts = calloc(t->n_hosts, sizeof *s->hosts);
	if (!s->hosts) {
		fprintf(stderr, "pacer %s: out of memory\n", s->cmd);
		return EXIT_RUNTIME;
	}
	s->n_hosts = (uint32_t)t->n_hosts;
	uint64_t tmo = plan->timeout_ns < 5 * NS_PER_S ? plan->timeout_ns : 5 * NS_PER_S;
	size_t up = 0;
	char down[2048] = ""; /* said only when some host is up */
	size_t down_len = 0;
	for (size_t i = 0; i < t->n_hosts; i++) {
		const struct table_host *th = &t->hosts[i];
		struct engine_host *eh = &s->hosts[i];
		char label[512];
		snprintf(label, sizeof label, "%s%s%s%s://%s%s%s:%u", th->unix_path ? "unix:" : "",
			 th->unix_path ? th->unix_path : "", th->unix_path ? ":" : "",
			 th->tls ? "https" : "http", th->ipv6 ? "[" : "", th->name, th->ipv6 ? "]" : "",
			 (unsigned)th->port);
		int rc;
		if (th->unix_path) {
			char who[700];
			snprintf(who, sizeof who, "%s: host %s: socket %s", t->source, label,
				 th->unix_path);
			if ((rc = unix_addr(s, who, th->unix_path, &eh->addr)))
				return rc;
		} else {
			const char *why = NULL;
			rc = net_resolve(th->name, th->port, &eh->addr, &why);
			if (rc) {
				fprintf(stderr, "pacer %s: %s: host %s: cannot resolve '%s': %s\n", s->cmd,
					t->source, label, th->name, why ? why : err_name(rc));
				return EXIT_USAGE;
			}
		}
		eh->tls = th->tls ? s->tls_client : NULL;
		eh->tls_host = th->name;
		rc = net_probe(&eh->addr, tmo);
		/* a socket path that names no socket is a wrong address, like a
		 * name that does not resolve; one that refuses is a host that is down */
		if (rc && th->unix_path && rc != -ECONNREFUSED && rc != -ETIMEDOUT && rc != -EAGAIN) {
			fprintf(stderr, "pacer %s: %s: host %s: socket %s: cannot connect: %s%s\n", s->cmd,
				t->source, label, th->unix_path, err_name(rc), unix_hint(rc));
			return EXIT_USAGE;
		}
		if (rc) {
			char astr[96];
			net_addr_str(&eh->addr, astr, sizeof astr);
			if (down_len < sizeof down) {
				int n = snprintf(down + down_len, sizeof down - down_len,
						 "pacer %s: %s: host %s (%s): cannot connect: %s\n", s->cmd,
						 t->source, label, astr, err_name(rc));
				down_len += n > 0 ? (size_t)n : 0;
			}
			continue;
		}
		up++;
		if (eh->tls) {
			char reason[256] = "";
			rc = tls_probe(s->tls_client, &eh->addr, th->name, tmo, reason, sizeof reason);
			if (rc && rc != TLS_FAILED)
				snprintf(reason, sizeof reason, "%s",
					 rc == -ETIMEDOUT ? "timed out" : err_name(rc));
			if (rc)
				fprintf(stderr, "pacer %s: %s: host %s: TLS handshake failed: %s\n", s->cmd,
					t->source, label, reason);
		}
	}
	if (!up) {
		fprintf(stderr, "pacer %s: %s: none of the table's %zu hosts accepts a connection\n",
			s->cmd, t->source, t->n_hosts);
		return EXIT_USAGE;
	}
	if (up < t->n_hosts)
		fprintf(stderr, "%s  (the run goes on: requests to a host that refuses are dropped, its "
			"connects counted in errors.connect)\n", down);
	return 0;
}

/* Name every request and intern the names (result/names.h): a table's
 * requests carry theirs (table_req.name); others are named "METHOD path"
 * from their request line. Sets reqs[i].name and plan->names. 0 or
 * EXIT_RUNTIME after one line. */
static int name_requests(struct cli_setup *s, struct run_plan *plan)
{
	const char **nm = calloc(s->n_reqs, sizeof *nm);
	char **own = s->table ? NULL : calloc(s->n_reqs, sizeof *own);
	uint16_t *idx = calloc(s->n_reqs, sizeof *idx);
	int rc = nm && idx && (s->table || own) ? 0 : -ENOMEM;
	for (size_t i = 0; !rc && i < s->n_reqs; i++) {
		if (s->table) {
			nm[i] = s->table->reqs[i].name;
			continue;
		}
		/* "METHOD SP target SP HTTP/1.1": the method and the path */
		const char *b = s->reqs[i].buf, *end = b + s->reqs[i].len;
		const char *sp = memchr(b, ' ', (size_t)(end - b));
		const char *t = sp ? sp + 1 : end, *te = t;
		while (te < end && *te != ' ' && *te != '?')
			te++;
		own[i] = strndup(b, (size_t)(te - b));
		if (!own[i])
			rc = -ENOMEM;
		nm[i] = own[i];
	}
	if (!rc)
		rc = req_names_build(&s->names, nm, s->n_reqs, idx);
	for (size_t i = 0; !rc && i < s->n_reqs; i++)
		s->reqs[i].name = idx[i];
	for (size_t i = 0; own && i < s->n_reqs; i++)
		free(own[i]);
	free(own);
	free(nm);
	free(idx);
	if (rc) {
		fprintf(stderr, "pacer %s: out of memory\n", s->cmd);
		return EXIT_RUNTIME;
	}
	plan->names = &s->names;
	return 0;
}

/* --connect-to HOST:PORT ([V6]:PORT): the one host's address, instead of
 * the URL's; the requests (and their Host headers, and TLS's name) stay. */
static int connect_to(struct cli_setup *s, struct run_plan *plan)
{
	const char *arg = plan->connect_to;
	char host[256];
	const char *colon = strrchr(arg, ':');
	size_t hl = colon ? (size_t)(colon - arg) : 0;
	if (hl >= 2 && arg[0] == '[' && arg[hl - 1] == ']') {
		arg++;
		hl -= 2;
	}
	char *end = NULL;
	unsigned long port = colon ? strtoul(colon + 1, &end, 10) : 0;
	if (!colon || hl == 0 || hl >= sizeof host || !colon[1] || *end || port == 0 || port > 65535) {
		fprintf(stderr, "pacer %s: --connect-to '%s': expected HOST:PORT\n", s->cmd,
			plan->connect_to);
		return EXIT_USAGE;
	}
	memcpy(host, arg, hl);
	host[hl] = '\0';
	const char *why = NULL;
	int rc = net_resolve(host, (uint16_t)port, &s->addr, &why);
	if (rc) {
		fprintf(stderr, "pacer %s: --connect-to '%s': cannot resolve '%s': %s\n", s->cmd,
			plan->connect_to, host, why ? why : err_name(rc));
		return EXIT_USAGE;
	}
	rc = net_probe(&s->addr, plan->timeout_ns < 5 * NS_PER_S ? plan->timeout_ns : 5 * NS_PER_S);
	if (rc) {
		fprintf(stderr, "pacer %s: --connect-to %s: cannot connect: %s\n", s->cmd,
			plan->connect_to, err_name(rc));
		return EXIT_USAGE;
	}
	return probe_tls(s, plan);
}

int cli_setup_prepare(struct cli_setup *s, struct run_plan *plan)
{
	const char *why = NULL;
	if (plan->tls.self_signed && !s->self_contained) {
		fprintf(stderr, "pacer %s: --tls is for --self-contained runs; for another server "
			"give an https:// URL\n", s->cmd);
		return EXIT_USAGE;
	}
	if (plan->unix_socket && s->self_contained) {
		fprintf(stderr, "pacer %s: --unix-socket does not combine with --self-contained (the "
			"embedded target listens on loopback TCP)\n", s->cmd);
		return EXIT_USAGE;
	}
	if (s->self_contained) {
		if (s->url_arg && s->url_arg[0] != '/') {
			fprintf(stderr,
				"pacer %s: with --self-contained, give a path on the embedded target "
				"(like /vast) or nothing, not '%s'\n",
				s->cmd, s->url_arg);
			return EXIT_USAGE;
		}
		int rc = start_embedded(s, plan);
		if (rc)
			return rc;
	} else if (s->requests_file || s->bodies_dir || offered_table) {
		if (s->requests_file && s->bodies_dir) {
			fprintf(stderr, "pacer %s: give --requests-file or --bodies, not both\n", s->cmd);
			return EXIT_USAGE;
		}
		if (!s->bodies_dir && s->url_arg) {
			fprintf(stderr, "pacer %s: with %s the table names the URLs; drop '%s'\n", s->cmd,
				s->requests_file ? "--requests-file" : "a scenario's table", s->url_arg);
			return EXIT_USAGE;
		}
		if (s->body_arg) {
			fprintf(stderr, "pacer %s: --body does not combine with a request table\n", s->cmd);
			return EXIT_USAGE;
		}
		int rc = load_table(s, plan);
		if (rc)
			return rc;
	} else {
		if (!s->url_arg) {
			fprintf(stderr, "pacer %s: missing URL (usage: pacer %s URL [options]; see --help)\n",
				s->cmd, s->cmd);
			return EXIT_USAGE;
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
		fprintf(stderr, "pacer %s: bad URL '%s': %s\n", s->cmd, plan->url_str,
			why ? why : "not understood");
		return EXIT_USAGE;
	}
	int trc = setup_tls(s, plan);
	if (trc)
		return trc;
	if (plan->method && req_method_check(plan->method) < 0) {
		fprintf(stderr, "pacer %s: --method '%s': not a valid method token\n", s->cmd,
			plan->method);
		return EXIT_USAGE;
	}
	if (s->body_arg) {
		if (s->body_arg[0] == '@') {
			size_t len = 0;
			int rc = file_read_all(s->body_arg + 1, MAX_BODY_BYTES, &s->body_buf, &len);
			if (rc) {
				fprintf(stderr, "pacer %s: --body %s: cannot read: %s\n", s->cmd, s->body_arg,
					rc == PACER_ETOOBIG ? "larger than 64 MiB" : err_name(rc));
				return EXIT_USAGE;
			}
			plan->body = s->body_buf;
			plan->body_len = len;
			plan->body_source = s->body_arg;
		} else {
			plan->body = s->body_arg;
			plan->body_len = strlen(s->body_arg);
			plan->body_source = "literal";
		}
	}

	int rc;
	if (s->table) {
		rc = 0; /* encoded (and described) by load_table */
	} else if (s->self_contained && !s->url_arg) {
		plan_workload_init(&s->workload, "embedded_routes");
		rc = add_route_requests(s, plan, &plan->url);
	} else {
		plan_workload_init(&s->workload, "url");
		rc = add_request(s, plan_method(plan), &plan->url, plan->headers,
				 plan->n_headers, plan->body, plan->body_len);
	}
	if (!rc && !s->table)
		rc = hash_requests(s);
	if (!rc)
		rc = name_requests(s, plan);
	if (rc)
		return rc;
	plan_workload_finish(&s->workload);
	plan->workload = &s->workload;

	uint32_t conns = plan->open_loop ? plan->connections : plan->concurrency;
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
	    (rlim_t)conns * (s->srv ? 2 : 1) + 64 + 2 * plan->threads > rl.rlim_cur) {
		fprintf(stderr,
			"pacer %s: %u connections need more file descriptors than the limit of %llu "
			"(ulimit -n)%s\n",
			s->cmd, conns, (unsigned long long)rl.rlim_cur,
			s->srv ? "; self-contained, both ends of each connection count" : "");
		return EXIT_USAGE;
	}

	if (plan->connect_to && (plan->unix_socket || (s->table && s->table->n_hosts > 1) ||
				 (s->table && s->table->hosts[0].unix_path) || s->srv)) {
		fprintf(stderr, "pacer %s: --connect-to %s: only for requests to one TCP host (not with "
			"--unix-socket, a self-contained target or a table of several hosts)\n", s->cmd,
			plan->connect_to);
		return EXIT_USAGE;
	}
	if (s->table && s->table->n_hosts > 1)
		return prepare_hosts(s, plan);
	/* one Unix socket: --unix-socket, or a one-host table of unix:PATH:... URLs */
	const char *sock = plan->unix_socket;
	char who[700];
	if (sock) {
		snprintf(who, sizeof who, "--unix-socket %s", sock);
	} else if (s->table && s->table->hosts[0].unix_path) {
		sock = s->table->hosts[0].unix_path;
		snprintf(who, sizeof who, "%s: socket %s (unix:%s:%s)", s->table->source, sock, sock,
			 url_http);
	}
	if (sock) {
		if ((rc = unix_addr(s, who, sock, &s->addr)))
			return rc;
		rc = net_probe(&s->addr,
			       plan->timeout_ns < 5 * NS_PER_S ? plan->timeout_ns : 5 * NS_PER_S);
		if (rc) {
			fprintf(stderr, "pacer %s: %s: cannot connect: %s%s\n", s->cmd, who,
				err_name(rc), unix_hint(rc));
			return EXIT_USAGE;
		}
		return probe_tls(s, plan);
	}
	if (plan->connect_to)
		return connect_to(s, plan);
	rc = net_resolve(plan->url.host, plan->url.port, &s->addr, &why);
	if (rc) {
		fprintf(stderr, "pacer %s: cannot resolve '%s': %s\n", s->cmd, plan->url.host,
			why ? why : err_name(rc));
		return EXIT_USAGE;
	}
	rc = net_probe(&s->addr, plan->timeout_ns < 5 * NS_PER_S ? plan->timeout_ns : 5 * NS_PER_S);
	if (rc) {
		char astr[96];
		net_addr_str(&s->addr, astr, sizeof astr);
		fprintf(stderr, "pacer %s: cannot connect to %s (%s): %s\n", s->cmd, plan->url_str,
			astr, err_name(rc));
		return EXIT_USAGE;
	}
	return probe_tls(s, plan);
}

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

void cli_setup_report_ctx(const struct cli_setup *s, struct report_ctx *ctx)
{
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

int cli_report_dir_prepare(const char *cmd, const char *dir, const char **out_path, char *buf,
			   size_t cap)
{
	if (!dir)
		return 0;
	int rc = file_mkdir_p(dir);
	if (rc) {
		fprintf(stderr, "pacer %s: --report-dir %s: cannot create it: %s\n", cmd, dir,
			err_name(rc));
		return EXIT_USAGE;
	}
	if (!*out_path) {
		if ((size_t)snprintf(buf, cap, "%s/result.json", dir) >= cap) {
			fprintf(stderr, "pacer %s: --report-dir %s: path too long\n", cmd, dir);
			return EXIT_USAGE;
		}
		*out_path = buf;
	}
	return 0;
}

int cli_report_dir_write(const char *cmd, const char *dir, const char *json_path)
{
	if (!dir)
		return 0;
	char err[512];
	if (cli_report_folder_write_from(json_path, dir, err, sizeof err)) {
		fprintf(stderr, "pacer %s: --report-dir: %s\n", cmd, err);
		return EXIT_RUNTIME;
	}
	return 0;
}

int cli_setup_exit_code(const struct cli_setup *s, int base, bool limited)
{
	if (limited && !s->limited_ok)
		return EXIT_GENERATOR_LIMITED;
	return base;
}

void cli_setup_engine_cfg(const struct cli_setup *s, const struct run_plan *plan,
			  struct engine_cfg *cfg)
{
	*cfg = (struct engine_cfg){
		.addr = s->addr,
		.reqs = s->reqs,
		.n_reqs = s->n_reqs,
		.order_random = plan->order_random,
		.open_loop = plan->open_loop,
		.arrival = plan->arrival,
		.seed = plan->seed,
		.connections = plan->connections,
		.concurrency = plan->concurrency,
		.threads = plan->threads,
		.timeout_ns = plan->timeout_ns,
		.spin_ns = plan->spin_ns,
		.inspect = plan->inspect,
		.tls = s->tls_client,
		.tls_host = plan->url.host,
		.tls_resume = plan->tls.resume,
		.hosts = s->hosts,
		.n_hosts = s->n_hosts,
		.n_names = s->names.n,
	};
}

uint64_t cli_setup_target_cpu_ns(const struct cli_setup *s)
{
	uint64_t ns = 0;
	if (s->srv && target_cpu_ns(s->srv, &ns) != 0)
		ns = 0;
	return ns;
}

static int copy_list(struct opt_list *dst, const struct opt_list *src)
{
	*dst = (struct opt_list){0};
	for (size_t i = 0; i < src->n; i++)
		if (opt_list_add(dst, src->v[i]))
			return -ENOMEM;
	return 0;
}

int cli_setup_copy_inputs(struct cli_setup *dst, const struct cli_setup *src)
{
	memset(dst, 0, sizeof *dst);
	memcpy(dst, src, offsetof(struct cli_setup, addr));
	dst->outcomes = dst->cost_args = dst->headers = (struct opt_list){0};
	if (copy_list(&dst->outcomes, &src->outcomes) || copy_list(&dst->cost_args, &src->cost_args) ||
	    copy_list(&dst->headers, &src->headers))
		return -ENOMEM;
	return 0;
}

void cli_setup_release(struct cli_setup *s)
{
	probe_stop(s->probe);
	s->probe = NULL;
	opt_list_free(&s->cost_args);
	opt_list_free(&s->headers);
	inspect_free(&s->inspect);
	opt_list_free(&s->outcomes);
	target_stop(s->srv);
	s->srv = NULL;
	tls_ctx_free(s->tls_client);
	tls_ctx_free(s->tls_server);
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
	table_free(s->table);
	s->table = NULL;
	free(s->hosts);
	s->hosts = NULL;
	s->n_hosts = 0;
	free(s->bufs);
	free(s->reqs);
	req_names_free(&s->names);
	free(s->body_buf);
	s->bufs = NULL;
	s->reqs = NULL;
	s->n_reqs = 0;
	s->body_buf = NULL;
}

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

/* Wait for the engine, handling SIGINT/SIGTERM and the progress line.
 * Returns true when interrupted. */
bool cli_wait_engine(struct engine *e, bool progress)
{
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	bool interrupted = false;
	uint64_t next_draw = clock_now_ns() + NS_PER_S;
	while (!engine_done(e)) {
		struct timespec ts = {0, 100 * 1000 * 1000};
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

