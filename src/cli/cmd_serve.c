/* pacer serve — run the embedded target server until SIGINT/SIGTERM.
 *
 *   pacer serve --plan NAME|FILE [--listen 127.0.0.1:8080] [--threads N]
 *               [--seed S] [--list-plans] [--tls | --tls-cert FILE [--tls-key FILE]]
 *               [--http2 | --h2c] [--http3] [--max-streams N]
 *
 * Prints "listening on ADDR:PORT" on stdout once the socket listens; errors
 * as one line "pacer serve: <what>" on stderr. Exit: 0 after a clean stop,
 * 2 on usage errors (bad option or value, unknown plan, invalid plan file,
 * address that cannot be bound), 3 when the server cannot start for lack of
 * resources. On a clean stop it prints what it served on stderr ("pacer
 * serve: served N requests on C connections ..."). See docs/serve.md. */
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/cli.h"
#include "cli/help.h"
#include "cli/opts.h"
#include "net/quic.h"
#include "net/sock.h"
#include "net/tls.h"
#include "target/target.h"
#include "util/err.h"
#include "util/units.h"

static const struct cli_example serve_examples[] = {
	{"pacer serve --plan hello --listen 127.0.0.1:8080", "the smallest plan: 200 OK, \"hello\""},
	{"pacer serve --plan vast_ortb_mix -t 2 --listen 0", "the ad-serving mix on two threads, "
	 "on any free port (printed as \"listening on ADDR:PORT\")"},
	{"pacer serve --plan examples/plans/kv.yaml --tls", "a plan file, over HTTPS with a "
	 "generated certificate"},
	{"pacer serve --plan hello --h2c --listen 0", "HTTP/2 in cleartext (prior knowledge), "
	 "HTTP/1.1 for clients that do not start with the HTTP/2 preface"},
	{"pacer serve --plan hello --http2", "HTTP/2 over TLS (ALPN h2; http/1.1 still offered), "
	 "with a generated certificate"},
	{"pacer serve --plan hello --http3 --listen 0", "HTTP/3 over QUIC on the UDP port of the "
	 "same number as HTTPS's TCP port, with a generated certificate (docs/http3.md)"},
};

static const struct cli_exit serve_exits[] = {
	{EXIT_OK, "stopped cleanly by Ctrl-C / SIGTERM (or --list-plans, --help)"},
	{EXIT_USAGE, "usage error: bad option or value, unknown plan, invalid plan file (named "
		     "with its line), an address that cannot be bound"},
	{EXIT_RUNTIME, "the server cannot start for lack of resources"},
};

static const struct cli_help serve_help = {
	.name = "serve",
	.summary = "run the embedded target server (pacer serve --list-plans)",
	.synopsis = "pacer serve --plan NAME|FILE [options]",
	.description = "Run pacer's embedded HTTP/1.1 target server until Ctrl-C / SIGTERM; with "
		       "--http2 or --h2c it speaks HTTP/2 too (docs/http2.md), with --http3 HTTP/3 "
		       "over QUIC on the same port number, UDP (docs/http3.md). "
		       "Prints \"listening on ADDR:PORT\" once ready. Plan files: see "
		       "docs/serve.md.",
	.examples = serve_examples,
	.n_examples = sizeof serve_examples / sizeof serve_examples[0],
	.exits = serve_exits,
	.n_exits = sizeof serve_exits / sizeof serve_exits[0],
	.see = "docs/serve.md",
};

static void on_signal(int sig) { (void)sig; }

static int usage_error(const char *fmt, const char *arg)
{
	fprintf(stderr, "pacer serve: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, " (see pacer serve --help)\n");
	return EXIT_USAGE;
}

static void list_plans(void)
{
	size_t n;
	const struct target_builtin *b = target_plan_builtins(&n);
	for (size_t i = 0; i < n; i++)
		printf("%-14s %s\n", b[i].name, b[i].summary);
}

/* "HOST:PORT", "[V6]:PORT", "PORT". */
static int parse_listen(const char *s, struct net_addr *a, const char **why)
{
	char host[256];
	const char *port_s;
	*why = NULL;
	if (s[0] == '[') {
		const char *rb = strchr(s, ']');
		if (!rb || rb[1] != ':' || (size_t)(rb - s - 1) >= sizeof host)
			return PACER_EPARSE;
		memcpy(host, s + 1, (size_t)(rb - s - 1));
		host[rb - s - 1] = '\0';
		port_s = rb + 2;
	} else {
		const char *colon = strrchr(s, ':');
		if (!colon) {
			strcpy(host, "127.0.0.1");
			port_s = s;
		} else {
			if ((size_t)(colon - s) >= sizeof host || colon == s || strchr(s, ':') != colon)
				return PACER_EPARSE;
			memcpy(host, s, (size_t)(colon - s));
			host[colon - s] = '\0';
			port_s = colon + 1;
		}
	}
	if (!*port_s || strlen(port_s) > 5 || strspn(port_s, "0123456789") != strlen(port_s))
		return PACER_EPARSE;
	long port = strtol(port_s, NULL, 10);
	if (port > 65535)
		return PACER_EPARSE;
	return net_resolve(host, (uint16_t)port, a, why);
}

static bool is_builtin(const char *name)
{
	size_t n;
	const struct target_builtin *b = target_plan_builtins(&n);
	for (size_t i = 0; i < n; i++)
		if (!strcmp(b[i].name, name))
			return true;
	return false;
}

static bool looks_like_file(const char *s)
{
	size_t n = strlen(s);
	return strchr(s, '/') || (n > 5 && !strcmp(s + n - 5, ".yaml")) ||
	       (n > 4 && !strcmp(s + n - 4, ".yml"));
}

int cmd_serve(int argc, char **argv)
{
	const char *plan_arg = NULL, *listen_arg = "127.0.0.1:8080";
	uint32_t threads = 1;
	uint64_t seed = 0;
	bool tls_gen = false, list = false, help = false, http2 = false, h2c = false, http3 = false;
	uint32_t max_streams = TARGET_H2_STREAMS_DEFAULT;
	const char *tls_cert = NULL, *tls_key = NULL;
	struct opt tab[] = {
		{'p', "plan", OPT_STR, &plan_arg, "NAME|FILE", NULL, "built-in plan name or YAML plan file (required)", false},
		{'l', "listen", OPT_STR, &listen_arg, "ADDR", "127.0.0.1:8080", "address to listen on: HOST:PORT, [IPv6]:PORT or PORT; port 0 = any free port", false},
		{'t', "threads", OPT_U32, &threads, "N", "1", "server threads, each with its own event loop (1 to 256)", false},
		{0, "seed", OPT_U64, &seed, "S", "the plan's, else 1", "seed of the plan's randomness", false},
		{0, "list-plans", OPT_FLAG, &list, NULL, NULL, "list the built-in plans and exit", false},
		{0, "tls", OPT_FLAG, &tls_gen, NULL, NULL, "serve HTTPS with a generated self-signed certificate (localhost, 127.0.0.1, ::1; its SHA-256 fingerprint goes to stderr)", false},
		{0, "tls-cert", OPT_STR, &tls_cert, "FILE", NULL, "serve HTTPS with this PEM certificate (chain)", false},
		{0, "tls-key", OPT_STR, &tls_key, "FILE", "in --tls-cert", "its PEM private key", false},
		{0, "http2", OPT_FLAG, &http2, NULL, NULL, "HTTP/2 over TLS by ALPN h2, http/1.1 still offered (with --tls-cert, or a generated certificate as --tls)", false},
		{0, "h2c", OPT_FLAG, &h2c, NULL, NULL, "HTTP/2 in cleartext with prior knowledge (a connection starting with the HTTP/2 preface); others get HTTP/1.1", false},
		{0, "http3", OPT_FLAG, &http3, NULL, NULL, "HTTP/3 over QUIC v1 too, on the UDP port of the same number (with --tls-cert, or a generated certificate as --tls); TCP still serves HTTPS", false},
		{0, "max-streams", OPT_U32, &max_streams, "N", "100", "HTTP/2 and HTTP/3: streams at once per connection (SETTINGS_MAX_CONCURRENT_STREAMS, QUIC's MAX_STREAMS; 1 to 1000)", false},
		{'h', "help", OPT_HELP, &help, NULL, NULL, "show this help", false},
	};
	size_t ntab = sizeof tab / sizeof tab[0];
	const char *pos[1];
	size_t npos = 0;
	char perr[512];
	int prc = opts_parse(tab, ntab, argc, argv, pos, 0, &npos, perr, sizeof perr);
	if (prc == 1) {
		cli_help_print(stdout, &serve_help, tab, ntab);
		return EXIT_OK;
	}
	if (prc < 0) {
		fprintf(stderr, "pacer serve: %s\n", perr);
		return EXIT_USAGE;
	}
	if (list) {
		list_plans();
		return EXIT_OK;
	}
	bool have_seed = opts_given(tab, ntab, "seed");
	if (threads < 1 || threads > TARGET_MAX_THREADS) {
		fprintf(stderr, "pacer serve: --threads %u: expected a whole number from 1 to %d\n",
			threads, TARGET_MAX_THREADS);
		return EXIT_USAGE;
	}
	if (!plan_arg)
		return usage_error("%s", "--plan is required: a built-in name (see --list-plans) or a YAML file");
	if (tls_gen && (tls_cert || tls_key))
		return usage_error("%s", "--tls generates a certificate: give it or --tls-cert, not both");
	if (tls_key && !tls_cert)
		return usage_error("%s", "--tls-key needs --tls-cert");
	if (http2 && h2c)
		return usage_error("%s", "--http2 and --h2c: give one (--http2 over TLS, --h2c in cleartext)");
	if (h2c && (tls_gen || tls_cert))
		return usage_error("%s", "--h2c is HTTP/2 in cleartext; over TLS give --http2");
	if (http3 && h2c)
		return usage_error("%s", "--http3 is always encrypted (QUIC); --h2c is cleartext: give one");
	if (opts_given(tab, ntab, "max-streams") && !http2 && !h2c && !http3)
		return usage_error("%s", "--max-streams: only with --http2, --h2c or --http3");
	if (max_streams < 1 || max_streams > TARGET_H2_STREAMS_MAX) {
		fprintf(stderr, "pacer serve: --max-streams %u: expected a whole number from 1 to %d\n",
			max_streams, TARGET_H2_STREAMS_MAX);
		return EXIT_USAGE;
	}
	if ((http2 || http3) && !tls_cert)
		tls_gen = true; /* HTTP/2 over TLS, HTTP/3: a generated certificate unless given one */

	struct net_addr addr;
	const char *why = NULL;
	int rc = parse_listen(listen_arg, &addr, &why);
	if (rc < 0) {
		if (rc == PACER_ERESOLVE)
			fprintf(stderr, "pacer serve: --listen: cannot resolve '%s': %s\n", listen_arg,
			        why ? why : "no address");
		else
			fprintf(stderr,
			        "pacer serve: --listen: expected HOST:PORT, [IPv6]:PORT or PORT, got '%s'\n",
			        listen_arg);
		return EXIT_USAGE;
	}

	struct target_plan *plan = NULL;
	struct stat st;
	if (!looks_like_file(plan_arg) && is_builtin(plan_arg)) {
		rc = target_plan_builtin(plan_arg, &plan);
		if (rc < 0) {
			fprintf(stderr, "pacer serve: built-in plan '%s' does not load: %s\n", plan_arg,
			        err_name(rc));
			return EXIT_RUNTIME;
		}
	} else if (looks_like_file(plan_arg) || stat(plan_arg, &st) == 0) {
		char err[512];
		rc = target_plan_load(plan_arg, &plan, err, sizeof err);
		if (rc < 0) {
			fprintf(stderr, "pacer serve: %s\n", err[0] ? err : err_name(rc));
			return rc == -ENOMEM ? EXIT_RUNTIME : EXIT_USAGE;
		}
	} else {
		size_t n;
		const struct target_builtin *b = target_plan_builtins(&n);
		char names[256] = "";
		for (size_t i = 0; i < n; i++) {
			if (i)
				strncat(names, ", ", sizeof names - strlen(names) - 1);
			strncat(names, b[i].name, sizeof names - strlen(names) - 1);
		}
		fprintf(stderr, "pacer serve: unknown plan '%s' (built-in plans: %s; or a .yaml file)\n",
		        plan_arg, names);
		return EXIT_USAGE;
	}
	if (have_seed)
		plan->seed = seed;

	struct tls_identity *tls_id = NULL;
	struct tls_ctx *tls = NULL;
	struct quic_ctx *quic = NULL;
	char fp[TLS_FINGERPRINT_CAP] = "";
	if (tls_gen || tls_cert) {
		char err[512] = "";
		rc = tls_gen ? tls_identity_self_signed(&tls_id, err, sizeof err) : 0;
		if (!rc)
			rc = tls_server_ctx_new(&tls, tls_cert, tls_key, tls_id, err, sizeof err);
		if (rc) {
			fprintf(stderr, "pacer serve: %s\n", err);
			tls_identity_free(tls_id);
			target_plan_free(plan);
			return rc == -EINVAL ? EXIT_USAGE : EXIT_RUNTIME;
		}
		tls_ctx_fingerprint(tls, fp, sizeof fp);
		if (http2)
			tls_server_ctx_offer_h2(tls);
	}
	if (http3) {
		char err[512] = "", *cert_pem = NULL, *key_pem = NULL;
		rc = tls_id ? tls_identity_pem(tls_id, &cert_pem, &key_pem) : 0;
		if (rc)
			snprintf(err, sizeof err, "out of memory");
		else
			rc = quic_server_ctx_new(&quic, tls_cert, tls_key, cert_pem, key_pem, err,
			                         sizeof err);
		free(cert_pem);
		free(key_pem);
		if (rc) {
			fprintf(stderr, "pacer serve: --http3: %s\n", err);
			tls_ctx_free(tls);
			tls_identity_free(tls_id);
			target_plan_free(plan);
			return rc == -EINVAL ? EXIT_USAGE : EXIT_RUNTIME;
		}
	}

	/* SIGINT/SIGTERM are taken synchronously with sigwait: block them
	 * before the server threads exist (they inherit the mask). A handler
	 * (never run) replaces SIG_IGN, which a shell sets for background
	 * jobs and which would discard the signals instead of queueing them. */
	sigset_t sigs, old;
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &sigs, &old);
	struct sigaction sa = {.sa_handler = on_signal}, old_int, old_term;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);

	struct target *t = NULL;
	struct target_opts topts = {
		.tls = tls, .h2 = http2 || h2c, .max_streams = max_streams, .quic = quic};
	rc = target_start_opts(&t, plan, &addr, (unsigned)threads, &topts);
	if (rc < 0) {
		char a[80];
		sigaction(SIGINT, &old_int, NULL);
		sigaction(SIGTERM, &old_term, NULL);
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		target_plan_free(plan);
		tls_ctx_free(tls);
		quic_ctx_free(quic);
		tls_identity_free(tls_id);
		fprintf(stderr, "pacer serve: cannot listen on %s%s: %s\n",
		        net_addr_str(&addr, a, sizeof a), http3 ? " (TCP and UDP)" : "", err_name(rc));
		return rc == -ENOMEM || rc == -EAGAIN ? EXIT_RUNTIME : EXIT_USAGE;
	}
	struct net_addr bound = addr;
	uint16_t port = (uint16_t)target_port(t);
	if (bound.ss.ss_family == AF_INET)
		((struct sockaddr_in *)&bound.ss)->sin_port = htons(port);
	else
		((struct sockaddr_in6 *)&bound.ss)->sin6_port = htons(port);
	char a[80];
	if (tls) {
		/* before the ready line: whoever waits for that has this too */
		fprintf(stderr, "pacer serve: HTTPS%s%s with %s%s; certificate SHA-256 %s\n",
		        http2 ? " (HTTP/2 by ALPN h2, and HTTP/1.1)" : "",
		        http3 ? ", and HTTP/3 over QUIC on the UDP port of the same number" : "",
		        tls_gen ? "a generated self-signed certificate (localhost, 127.0.0.1, ::1)"
		                : "certificate ",
		        tls_gen ? "" : tls_cert, fp);
		fflush(stderr);
	}
	printf("listening on %s\n", net_addr_str(&bound, a, sizeof a));
	fflush(stdout);

	int sig = 0;
	while (sigwait(&sigs, &sig) != 0)
		;
	struct target_stats ts;
	target_stats(t, &ts);
	target_stop(t);
	/* what was served, for whoever counts both ends */
	fprintf(stderr,
	        "pacer serve: served %llu requests on %llu connections (%llu bad requests, %llu "
	        "timeouts, %llu misbehaviours, %llu connections rejected)\n",
	        (unsigned long long)ts.requests, (unsigned long long)ts.connections,
	        (unsigned long long)ts.bad_requests, (unsigned long long)ts.timeouts,
	        (unsigned long long)ts.misbehaved, (unsigned long long)ts.rejected);
	target_plan_free(plan);
	tls_ctx_free(tls);
	quic_ctx_free(quic);
	tls_identity_free(tls_id);
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return EXIT_OK;
}
