/* pacer — where a measurement's requests go (measure/measure_int.h): TLS, Unix
 * sockets, --connect-to, a table's several hosts, resolving and probing
 * each before the run, and the descriptor limit. */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "measure/measure_int.h"
#include "net/h2probe.h"
#include "net/quic.h"
#include "net/sock.h"
#include "net/tls.h"
#include "table/table.h"
#include "util/err.h"

/* Headroom for the descriptors that are neither connections nor the
 * workers' loops: stdio, the output files, the probe's reads, the embedded
 * target's listener and loops, the connection probes. */
#define FD_SPARE 64
/* Descriptors of each worker's event loop: its epoll and its wake-up
 * eventfd (net/loop.c). */
#define FD_PER_LOOP 2

/* --http3: the QUIC client context (GnuTLS), verifying as HTTPS does. */
static int quic_ctx(struct measure *s, const struct run_plan *plan)
{
	const struct plan_tls *t = &plan->tls;
	char *cert_pem = NULL, *key_pem = NULL;
	if (s->tls_id && tls_identity_pem(s->tls_id, &cert_pem, &key_pem))
		return measure_fail(s, MEASURE_ERUNTIME, "out of memory");
	struct quic_client_cfg cfg = {
		.insecure = t->insecure,
		.cacert = t->cacert,
		.cert = t->cert,
		.key = t->key,
		.trust_pem = cert_pem, /* self-contained: exactly the generated certificate */
	};
	char err[512];
	int rc = quic_client_ctx_new(&s->quic_client, &cfg, err, sizeof err);
	free(cert_pem);
	free(key_pem);
	if (rc)
		return measure_fail(s, rc == -ENOMEM ? MEASURE_ERUNTIME : MEASURE_EUSAGE, "%s", err);
	return 0;
}

int measure_net_tls(struct measure *s, const struct run_plan *plan)
{
	const struct plan_tls *t = &plan->tls;
	bool any_tls = plan->url.tls;
	for (size_t i = 0; s->table && i < s->table->n_hosts; i++)
		any_tls |= s->table->hosts[i].tls;
	for (size_t i = 0; s->table && i < s->table->n_hosts; i++) {
		const struct table_host *th = &s->table->hosts[i];
		if ((plan->http.h2c && th->tls) || (plan->http.http2 && !th->tls) ||
		    (plan_http3(plan) && (!th->tls || th->unix_path))) {
			return measure_fail(s, MEASURE_EUSAGE, "%s: host %s is %s, but %s",
				s->table->source, th->name,
				th->unix_path ? "a Unix socket" : th->tls ? "https" : "plain http",
				plan->http.h2c ? "--h2c is HTTP/2 over cleartext"
				: plan_http3(plan) ? "--http3 is HTTP/3 over QUIC (UDP, always encrypted)"
						   : "--http2 is HTTP/2 over TLS (--h2c for cleartext)");
		}
	}
	if (!any_tls) {
		const char *opt = t->insecure ? "--insecure"
				  : t->cacert ? "--cacert"
				  : t->cert   ? "--cert"
				  : t->key    ? "--key"
					      : NULL;
		if (opt) {
			return measure_fail(s, MEASURE_EUSAGE, "%s is for https:// URLs; '%s' is plain http",
				opt, plan->url_str);
		}
		return 0;
	}
	if (plan_http3(plan))
		return quic_ctx(s, plan);
	struct tls_client_cfg cfg = {
		.insecure = t->insecure,
		.cacert = t->cacert,
		.cert = t->cert,
		.key = t->key,
		.trust = s->tls_id, /* self-contained --tls: exactly the generated one */
		.alpn_h2 = plan->http.http2 != NULL,
	};
	char err[512];
	int rc = tls_client_ctx_new(&s->tls_client, &cfg, err, sizeof err);
	if (rc)
		return measure_fail(s, rc == -ENOMEM ? MEASURE_ERUNTIME : MEASURE_EUSAGE, "%s", err);
	return 0;
}

/* https: one handshake before the run, so that a certificate or protocol
 * problem is said once, at the start, in words. The run still goes on (each
 * failed handshake counted in errors.tls), unless it is bounded by
 * --requests alone and so could never end. 0 or an exit code. */
static int probe_h2c(struct measure *s, const struct run_plan *plan)
{
	char reason[256] = "";
	int rc = net_h2c_probe(&s->addr, measure_probe_timeout_ns(plan), reason, sizeof reason);
	if (rc == 0)
		return 0;
	if (rc != -EPROTO)
		snprintf(reason, sizeof reason, "%s", rc == -ETIMEDOUT ? "timed out" : err_name(rc));
	bool endless = !plan->open_loop && plan->requests && !plan->duration_given;
	if (endless)
		return measure_fail(s, MEASURE_EUSAGE, "--h2c: %s: %s", plan->url_str, reason);
	measure_note(s, "--h2c: %s: %s (the run goes on; every failed connection is counted in "
			"errors.protocol)", plan->url_str, reason);
	return 0;
}

/* --http3: one QUIC handshake before the run (the same rules as for TLS). */
static int probe_quic(struct measure *s, const struct run_plan *plan)
{
	char reason[256] = "";
	int rc = quic_probe(s->quic_client, &s->addr, plan->url.host, measure_probe_timeout_ns(plan),
			    reason, sizeof reason);
	if (rc == 0)
		return 0;
	if (rc != QUIC_FAILED)
		snprintf(reason, sizeof reason, "%s",
			 rc == -ETIMEDOUT ? "no QUIC answer (timed out: is an HTTP/3 server listening "
					    "on that UDP port?)"
			 : rc == -ECONNREFUSED ? "nothing listens on that UDP port (ICMP port unreachable)"
					       : err_name(rc));
	bool endless = !plan->open_loop && plan->requests && !plan->duration_given;
	if (endless || rc == -ECONNREFUSED)
		return measure_fail(s, MEASURE_EUSAGE, "--http3: QUIC handshake with %s failed: %s",
				    plan->url_str, reason);
	measure_note(s, "--http3: QUIC handshake with %s failed: %s (the run goes on; every failed "
			"handshake is counted)", plan->url_str, reason);
	return 0;
}

static int probe_tls(struct measure *s, const struct run_plan *plan)
{
	if (plan_http3(plan) && !s->n_hosts)
		return probe_quic(s, plan);
	if (plan->http.h2c && !s->n_hosts)
		return probe_h2c(s, plan);
	if (!s->tls_client)
		return 0;
	char reason[256] = "";
	uint64_t t = measure_probe_timeout_ns(plan);
	int rc = tls_probe(s->tls_client, &s->addr, plan->url.host, t, reason, sizeof reason);
	if (rc == 0 || (rc == TLS_NO_H2 && plan->http.http2 && *plan->http.http2))
		return 0; /* --http2=prefer: HTTP/1.1 it is */
	bool endless = !plan->open_loop && plan->requests && !plan->duration_given;
	if (rc == TLS_NO_H2) {
		if (endless)
			return measure_fail(s, MEASURE_EUSAGE, "--http2: %s: %s", plan->url_str, reason);
		measure_note(s, "--http2: %s: %s (the run goes on; every connection is counted in "
				"errors.protocol)", plan->url_str, reason);
		return 0;
	}
	if (rc != TLS_FAILED)
		snprintf(reason, sizeof reason, "%s", rc == -ETIMEDOUT ? "timed out" : err_name(rc));
	if (endless)
		return measure_fail(s, MEASURE_EUSAGE, "TLS handshake with %s failed: %s",
				    plan->url_str, reason);
	measure_note(s, "TLS handshake with %s failed: %s (the run goes on; every failed handshake "
			"is counted in errors.tls)", plan->url_str, reason);
	return 0;
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
 * ("--unix-socket /run/x.sock", or a table host). 0, or MEASURE_EUSAGE with
 * one line in s->err when the path does not fit a socket address. */
static int unix_addr(struct measure *s, const char *who, const char *path,
		     struct net_addr *a)
{
	int rc = net_addr_unix(path, a);
	if (rc) {
		return measure_fail(s, MEASURE_EUSAGE, "%s: %s", who,
			rc == -ENAMETOOLONG ? "path too long for a Unix socket (107 bytes at most)"
					    : err_name(rc));
	}
	return 0;
}

/* A table of several hosts: resolve each (an error names the host and the
 * table), give https hosts the driver's TLS context with their own name,
 * and check that each accepts a connection. A host that does not is
 * reported and the run goes on (its requests are dropped while it refuses,
 * its connects counted in errors.connect), unless none does. 0 or an exit
 * code after printing. */
static int prepare_hosts(struct measure *s, const struct run_plan *plan)
{
	const struct table *t = s->table;
	s->hosts = calloc(t->n_hosts, sizeof *s->hosts);
	if (!s->hosts) {
		return measure_fail(s, MEASURE_ERUNTIME, "out of memory");
	}
	s->n_hosts = (uint32_t)t->n_hosts;
	uint64_t tmo = measure_probe_timeout_ns(plan);
	size_t up = 0, notes0 = s->n_notes; /* a host that is down: said only when some is up */
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
				return measure_fail(s, MEASURE_EUSAGE, "%s: host %s: cannot resolve '%s': %s",
					t->source, label, th->name, why ? why : err_name(rc));
			}
		}
		eh->tls = th->tls ? s->tls_client : NULL;
		eh->quic = th->tls ? s->quic_client : NULL;
		eh->tls_host = th->name;
		if (eh->quic) { /* --http3: a QUIC handshake, there is no TCP connect */
			char reason[256] = "";
			rc = quic_probe(eh->quic, &eh->addr, th->name, tmo, reason, sizeof reason);
			if (rc == QUIC_FAILED)
				measure_note(s, "%s: host %s: QUIC handshake failed: %s", t->source, label,
					     reason);
			up += rc == 0 || rc == QUIC_FAILED;
			if (rc && rc != QUIC_FAILED)
				measure_note(s, "%s: host %s: no QUIC answer: %s (the run goes on)",
					     t->source, label, err_name(rc));
			continue;
		}
		rc = net_probe(&eh->addr, tmo);
		/* a socket path that names no socket is a wrong address, like a
		 * name that does not resolve; one that refuses is a host that is down */
		if (rc && th->unix_path && rc != -ECONNREFUSED && rc != -ETIMEDOUT && rc != -EAGAIN) {
			return measure_fail(s, MEASURE_EUSAGE, "%s: host %s: socket %s: cannot connect: %s%s",
				t->source, label, th->unix_path, err_name(rc), unix_hint(rc));
		}
		if (rc) {
			char astr[96];
			net_addr_str(&eh->addr, astr, sizeof astr);
			measure_note(s, "%s: host %s (%s): cannot connect: %s (the run goes on: requests "
					"to a host that refuses are dropped, its connects counted in "
					"errors.connect)", t->source, label, astr, err_name(rc));
			continue;
		}
		up++;
		if (eh->tls) {
			char reason[256] = "";
			rc = tls_probe(s->tls_client, &eh->addr, th->name, tmo, reason, sizeof reason);
			if (rc == TLS_NO_H2 && plan->http.http2 && *plan->http.http2)
				rc = 0; /* --http2=prefer */
			if (rc == TLS_NO_H2)
				measure_note(s, "%s: host %s: --http2: %s", t->source, label, reason);
			else if (rc && rc != TLS_FAILED)
				snprintf(reason, sizeof reason, "%s",
					 rc == -ETIMEDOUT ? "timed out" : err_name(rc));
			if (rc && rc != TLS_NO_H2)
				measure_note(s, "%s: host %s: TLS handshake failed: %s", t->source, label,
					     reason);
		}
	}
	if (!up) {
		s->n_notes = notes0; /* the failure says it all */
		return measure_fail(s, MEASURE_EUSAGE,
				    "%s: none of the table's %zu hosts accepts a connection", t->source,
				    t->n_hosts);
	}
	return 0;
}

/* --connect-to HOST:PORT ([V6]:PORT): the one host's address, instead of
 * the URL's; the requests (and their Host headers, and TLS's name) stay. */
static int connect_to(struct measure *s, const struct run_plan *plan)
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
		return measure_fail(s, MEASURE_EUSAGE, "--connect-to '%s': expected HOST:PORT",
			plan->connect_to);
	}
	memcpy(host, arg, hl);
	host[hl] = '\0';
	const char *why = NULL;
	int rc = net_resolve(host, (uint16_t)port, &s->addr, &why);
	if (rc) {
		return measure_fail(s, MEASURE_EUSAGE, "--connect-to '%s': cannot resolve '%s': %s",
			plan->connect_to, host, why ? why : err_name(rc));
	}
	rc = plan_http3(plan) ? 0 : net_probe(&s->addr, measure_probe_timeout_ns(plan));
	if (rc) {
		return measure_fail(s, MEASURE_EUSAGE, "--connect-to %s: cannot connect: %s",
			plan->connect_to, err_name(rc));
	}
	return probe_tls(s, plan);
}

int measure_net_fd_limit(struct measure *s, const struct run_plan *plan)
{
	uint32_t conns = plan->open_loop ? plan->connections : plan->concurrency;
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
	    (rlim_t)conns * (s->srv ? 2 : 1) + FD_SPARE + FD_PER_LOOP * plan->threads >
		    rl.rlim_cur) {
		return measure_fail(s, MEASURE_EUSAGE, "%u connections need more file descriptors than the limit of %llu (ulimit -n)%s", conns, (unsigned long long)rl.rlim_cur,
			s->srv ? "; self-contained, both ends of each connection count" : "");
	}
	return 0;
}

int measure_net_connect(struct measure *s, const struct run_plan *plan, const char *url_http)
{
	const char *why = NULL;
	int rc;
	if (plan->connect_to && (plan->unix_socket || (s->table && s->table->n_hosts > 1) ||
				 (s->table && s->table->hosts[0].unix_path) || s->srv)) {
		return measure_fail(s, MEASURE_EUSAGE, "--connect-to %s: only for requests to one TCP host (not with --unix-socket, a self-contained target or a table of several hosts)",
			plan->connect_to);
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
		rc = net_probe(&s->addr, measure_probe_timeout_ns(plan));
		if (rc) {
			return measure_fail(s, MEASURE_EUSAGE, "%s: cannot connect: %s%s", who,
				err_name(rc), unix_hint(rc));
		}
		return probe_tls(s, plan);
	}
	if (plan->connect_to)
		return connect_to(s, plan);
	rc = net_resolve(plan->url.host, plan->url.port, &s->addr, &why);
	if (rc) {
		return measure_fail(s, MEASURE_EUSAGE, "cannot resolve '%s': %s", plan->url.host,
			why ? why : err_name(rc));
	}
	rc = plan_http3(plan) ? 0 : net_probe(&s->addr, measure_probe_timeout_ns(plan));
	if (rc) {
		char astr[96];
		net_addr_str(&s->addr, astr, sizeof astr);
		return measure_fail(s, MEASURE_EUSAGE, "cannot connect to %s (%s): %s", plan->url_str,
			astr, err_name(rc));
	}
	return probe_tls(s, plan);
}
