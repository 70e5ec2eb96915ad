/* pacer k8s SCENARIO.yaml --segments N --image IMAGE — print the
 * Kubernetes manifests that run a scenario as N segments on N nodes: a
 * ConfigMap holding the scenario, a Secret with the barrier's token, a
 * headless Service that gives each pod a stable name, and an Indexed Job
 * whose pod K runs `pacer bench --segment K/N --barrier NAME-0.NAME`:
 * pod 0 holds the start barrier and collects the others' results; every
 * pod prints its result framed to its log, pod 0 the merged one too, for
 * `pacer merge` (docs/distributed.md). With --start-at (or --start-in) the
 * pods start at that time instead, without a Service or Secret. Nothing is
 * applied: the output goes to kubectl. */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cli/cli.h"
#include "cli/help.h"
#include "cli/opts.h"
#include "dist/k8s.h"
#include "http/redact.h"
#include "http/url.h"
#include "plan/plan.h"
#include "plan/scenario.h"
#include "util/clock.h"
#include "util/err.h"
#include "util/file.h"
#include "util/time_units.h"
#include "util/timestamp.h"
#include "util/units.h"

static const struct cli_example k8s_examples[] = {
	{"pacer k8s bench.yaml --segments 4 --image registry.example/pacer:0.1 | kubectl apply -f -",
	 "four generators on four nodes, one start time"},
};

static const struct cli_help cli_help_k8s = {
	.name = "k8s",
	.summary = "Kubernetes manifests running a scenario as N segments",
	.synopsis = "pacer k8s SCENARIO.yaml --segments N --image IMAGE [options]",
	.description = "Prints a ConfigMap with the scenario, a Secret, a headless Service and an "
		       "Indexed Job of N pods, one per node, each running segment K of N: pod 0 "
		       "starts them together once all are up (a barrier) and merges their results "
		       "into its log; every pod prints its own result there too, framed. Apply with "
		       "kubectl apply -f -, then read pod 0's log (or all logs) with pacer merge.",
	.examples = k8s_examples,
	.n_examples = sizeof k8s_examples / sizeof k8s_examples[0],
	.exits = cli_exits_plain,
	.n_exits = sizeof cli_exits_plain / sizeof cli_exits_plain[0],
	.see = "docs/distributed.md",
};

static void usage(FILE *f, struct opt *tab, size_t n)
{
	cli_help_print(f, &cli_help_k8s, tab, n);
}

/* A DNS-1123 label from s: lowercase letters, digits and '-', at most 52
 * characters (Job names leave room for the pods' suffixes). */
static void dns_name(char *out, size_t cap, const char *s)
{
	size_t n = 0;
	bool dash = true; /* no leading '-' */
	for (; *s && n + 1 < cap && n < 52; s++) {
		unsigned char c = (unsigned char)tolower((unsigned char)*s);
		if (isalnum(c)) {
			out[n++] = (char)c;
			dash = false;
		} else if (!dash) {
			out[n++] = '-';
			dash = true;
		}
	}
	while (n && out[n - 1] == '-')
		n--;
	out[n] = '\0';
}

static bool dns_valid(const char *s)
{
	size_t n = strlen(s);
	if (n < 1 || n > 52 || s[0] == '-' || s[n - 1] == '-')
		return false;
	for (size_t i = 0; i < n; i++)
		if (!(islower((unsigned char)s[i]) || isdigit((unsigned char)s[i]) || s[i] == '-'))
			return false;
	return true;
}

/* Whether host names the machine itself: localhost (and *.localhost),
 * 127.0.0.0/8, ::1, the unspecified addresses, IPv4-mapped loopback. */
static bool is_loopback(const char *host)
{
	size_t n = strlen(host);
	if (!strcasecmp(host, "localhost") || (n > 10 && !strcasecmp(host + n - 10, ".localhost")) ||
	    !strcasecmp(host, "localhost."))
		return true;
	struct in_addr a4;
	struct in6_addr a6;
	if (inet_pton(AF_INET, host, &a4) == 1) {
		uint32_t v = ntohl(a4.s_addr);
		return (v >> 24) == 127 || v == 0;
	}
	if (inet_pton(AF_INET6, host, &a6) == 1) {
		if (IN6_IS_ADDR_LOOPBACK(&a6) || IN6_IS_ADDR_UNSPECIFIED(&a6))
			return true;
		return IN6_IS_ADDR_V4MAPPED(&a6) && a6.s6_addr[12] == 127;
	}
	return false;
}

/* The scenario's target (its URL, or --connect-to's host) on the
 * loopback: the one it names into what[cap]. */
static bool loopback_target(const struct scenario *sc, char *what, size_t cap)
{
	for (int i = 1; i < sc->nargs; i++) {
		const char *a = sc->args[i];
		if (!strncasecmp(a, "http://", 7) || !strncasecmp(a, "https://", 8)) {
			struct url u;
			const char *why;
			if (!url_parse(&u, a, &why) && is_loopback(u.host)) {
				snprintf(what, cap, "the target %s", a);
				return true;
			}
		} else if (!strncmp(a, "--connect-to", 12)) {
			const char *v = a[12] == '=' ? a + 13 : a[12] == '\0' && i + 1 < sc->nargs
									 ? sc->args[i + 1]
									 : NULL;
			char host[256];
			if (!v || !*v)
				continue;
			/* HOST:PORT or [V6]:PORT */
			if (v[0] == '[') {
				const char *rb = strchr(v, ']');
				snprintf(host, sizeof host, "%.*s", rb ? (int)(rb - v - 1) : 0, v + 1);
			} else {
				const char *c = strrchr(v, ':');
				snprintf(host, sizeof host, "%.*s", c ? (int)(c - v) : (int)strlen(v), v);
			}
			if (is_loopback(host)) {
				snprintf(what, cap, "--connect-to %s", v);
				return true;
			}
		}
	}
	return false;
}

/* Whether the scenario's arguments set a secret header (http/redact.h:
 * the defaults and the scenario's own redact-header names): its file then
 * goes in a Secret, not a ConfigMap. */
static bool sets_secret(const struct scenario *sc)
{
	const char *names[REDACT_MAX_NAMES];
	struct redact r = {.names = names};
	for (int i = 0; i + 1 < sc->nargs; i++)
		if (!strcmp(sc->args[i], "--redact-header") && r.n_names < REDACT_MAX_NAMES)
			names[r.n_names++] = sc->args[i + 1];
	char buf[64];
	for (int i = 0; i < sc->nargs; i++)
		if (redact_arg(&r, sc->args[i], buf, sizeof buf) != sc->args[i])
			return true;
	return false;
}

/* A token for the barrier's Secret: 128 random bits in hex. */
static int make_token(char out[33])
{
	unsigned char b[16];
	FILE *r = fopen("/dev/urandom", "rb");
	size_t n = r ? fread(b, 1, sizeof b, r) : 0;
	if (r)
		fclose(r);
	if (n != sizeof b)
		return -EIO;
	for (size_t i = 0; i < sizeof b; i++)
		snprintf(out + 2 * i, 3, "%02x", b[i]);
	return 0;
}

int cmd_k8s(int argc, char **argv)
{
	uint32_t segments = 0;
	const char *image = NULL, *ns = "default", *name = NULL, *cpu = "2", *memory = "1Gi";
	const char *start_at = NULL, *barrier_timeout = "5m";
	uint64_t start_in_ns = 60 * NS_PER_S, bt_ns = 0;
	bool help = false, allow_loopback = false;
	struct opt tab[] = {
		{0, "allow-loopback", OPT_FLAG, &allow_loopback, NULL, NULL, "let the scenario target the loopback (in a pod: the pod itself, a sidecar)", false},
		{0, "barrier-timeout", OPT_STR, &barrier_timeout, "D", "5m", "pod 0 waits this long for the others to come up, then starts those up", false},
		{0, "cpu", OPT_STR, &cpu, "Q", "2", "CPU each pod requests (a Kubernetes quantity)", false},
		{'h', "help", OPT_HELP, &help, NULL, NULL, "show this help", false},
		{0, "image", OPT_STR, &image, "IMAGE", NULL, "container image with pacer (Containerfile)", false},
		{0, "memory", OPT_STR, &memory, "Q", "1Gi", "memory each pod requests and is limited to", false},
		{0, "name", OPT_STR, &name, "NAME", "pacer-SCENARIO", "name of the Job and ConfigMap", false},
		{0, "namespace", OPT_STR, &ns, "NS", "default", "namespace of both", false},
		{0, "segments", OPT_U32, &segments, "N", NULL, "pods, one segment each, on N different nodes", false},
		{0, "start-at", OPT_STR, &start_at, "TIME", NULL, "start at this time (RFC 3339) instead of at pod 0's barrier: pods that cannot reach each other", false},
		{0, "start-in", OPT_DURATION, &start_in_ns, "D", NULL, "start this long after now instead of at the barrier (time to apply and schedule)", false},
	};
	size_t ntab = sizeof tab / sizeof tab[0];
	const char *pos[2];
	struct opts_positionals args = {.what = "one SCENARIO.yaml", .min = 1, .max = 1, .v = pos};
	int rc = opts_parse_cmd("k8s", tab, ntab, argc, argv, usage, &args);
	if (rc >= 0)
		return rc;
	char err[1024];
	if (segments < 2 || segments > PLAN_MAX_SEGMENTS) {
		fprintf(stderr, "pacer k8s: --segments N: from 2 to %d%s\n", PLAN_MAX_SEGMENTS,
			opts_given(tab, ntab, "segments") ? "" : " (required)");
		return EXIT_USAGE;
	}
	if (!image || !*image) {
		fprintf(stderr, "pacer k8s: --image IMAGE is required (build one with the "
				"Containerfile: docs/distributed.md)\n");
		return EXIT_USAGE;
	}
	if (!dns_valid(ns)) {
		fprintf(stderr, "pacer k8s: --namespace '%s': expected lowercase letters, digits and "
				"'-' (a DNS label)\n",
			ns);
		return EXIT_USAGE;
	}
	char *text = NULL;
	size_t len = 0;
	rc = file_read_all(pos[0], SCENARIO_FILE_CAP, &text, &len);
	if (rc) {
		fprintf(stderr, "pacer k8s: %s: cannot read: %s\n", file_shown(pos[0]),
			rc == PACER_ETOOBIG ? "larger than 1 MiB" : err_name(rc));
		return EXIT_USAGE;
	}
	struct scenario *sc = calloc(1, sizeof *sc);
	if (!sc) {
		free(text);
		return EXIT_RUNTIME;
	}
	rc = scenario_parse(text, len, file_shown(pos[0]), sc, err, sizeof err);
	int code = EXIT_USAGE;
	if (rc) {
		fprintf(stderr, "pacer k8s: %s\n", err);
		goto out;
	}
	if (strcmp(sc->kind, "run") && strcmp(sc->kind, "ramp")) {
		fprintf(stderr, "pacer k8s: %s: a %s scenario: segments are for run and ramp (a "
				"compare interleaves its variants in one process)\n",
			pos[0], sc->kind);
		goto out;
	}
	for (int i = 0; i < sc->nargs; i++)
		if (!strcmp(sc->args[i], "--refine") || !strcmp(sc->args[i], "--segment") ||
		    !strcmp(sc->args[i], "--start-at") || !strcmp(sc->args[i], "--barrier") ||
		    !strcmp(sc->args[i], "--merged-out")) {
			fprintf(stderr, "pacer k8s: %s: the scenario sets %s: %s\n", pos[0], sc->args[i],
				!strcmp(sc->args[i], "--refine")
					? "--refine does not combine with segments (give the steps)"
					: "pacer k8s sets it for each pod");
			goto out;
		}
	char def[64], when[40];
	if (!name) {
		const char *base = strrchr(pos[0], '/');
		base = base ? base + 1 : pos[0];
		char stem[128];
		snprintf(stem, sizeof stem, "%s", sc->name[0] ? sc->name : base);
		char *dot = sc->name[0] ? NULL : strrchr(stem, '.');
		if (dot)
			*dot = '\0';
		char label[64];
		dns_name(label, sizeof label, stem);
		snprintf(def, sizeof def, "pacer-%.40s", label[0] ? label : "scenario");
		name = def;
	}
	if (!dns_valid(name)) {
		fprintf(stderr, "pacer k8s: --name '%s': expected at most 52 lowercase letters, digits "
				"and '-'\n",
			name);
		goto out;
	}
	char what[600];
	if (!allow_loopback && loopback_target(sc, what, sizeof what)) {
		fprintf(stderr, "pacer k8s: %s: %s is the loopback: in a pod that is the pod itself, so "
				"each segment would load its own pod, not the target. Give the target's "
				"Service name or address (http://NAME.NAMESPACE.svc:PORT/), or "
				"--allow-loopback for a target beside pacer in each pod\n",
			pos[0], what);
		goto out;
	}
	if (units_parse_duration_ns(barrier_timeout, &bt_ns) || bt_ns < NS_PER_S) {
		fprintf(stderr, "pacer k8s: --barrier-timeout '%s': a duration of at least 1s\n",
			barrier_timeout);
		goto out;
	}
	uint64_t now = clock_wall_ns(), at = 0;
	if (start_at) {
		if (timestamp_parse(start_at, now, &at) || at < now) {
			fprintf(stderr, "pacer k8s: --start-at '%s': expected a future RFC 3339 time like "
					"2026-12-01T12:00:00Z\n",
				start_at);
			goto out;
		}
	} else if (opts_given(tab, ntab, "start-in")) {
		at = now + start_in_ns;
	}
	if (at)
		timestamp_format(when, sizeof when, at);
	char token[33] = "";
	struct k8s_spec k = {.name = name, .ns = ns, .image = image, .cpu = cpu, .memory = memory,
			     .start_at = at ? when : NULL, .barrier_timeout = barrier_timeout,
			     .token = token, .scenario_file = pos[0], .text = text, .len = len,
			     .scenario_secret = sets_secret(sc), .segments = segments};
	if (!at && make_token(token)) {
		fprintf(stderr, "pacer k8s: cannot read /dev/urandom for the barrier's token\n");
		code = EXIT_RUNTIME;
		goto out;
	}
	/* into memory first: nothing is printed when a value is refused */
	char *buf = NULL;
	size_t blen = 0;
	FILE *m = open_memstream(&buf, &blen);
	rc = m ? k8s_write(m, &k) : -ENOMEM;
	if (m && fclose(m) && !rc)
		rc = -ENOMEM;
	if (rc == -EILSEQ) {
		fprintf(stderr, "pacer k8s: --image, --cpu and --memory must be UTF-8 text\n");
	} else if (rc) {
		fprintf(stderr, "pacer k8s: %s\n", err_name(rc));
		code = EXIT_RUNTIME;
	} else {
		code = fwrite(buf, 1, blen, stdout) == blen && fflush(stdout) == 0 ? EXIT_OK
										 : EXIT_RUNTIME;
	}
	free(buf);
	rc = 0; /* sc was parsed: freed below */
out:
	if (!rc)
		scenario_free(sc);
	free(sc);
	free(text);
	return code;
}
