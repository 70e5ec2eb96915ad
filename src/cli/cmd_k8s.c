/* pacer k8s SCENARIO.yaml --segments N --image IMAGE — print the
 * Kubernetes manifests that run a scenario as N segments on N nodes: a
 * ConfigMap holding the scenario and an Indexed Job whose pod K runs
 * `pacer bench --segment K/N --start-at T` and prints its result to its
 * log, for `pacer merge` (docs/distributed.md). Nothing is applied: the
 * output goes to kubectl. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/help.h"
#include "cli/opts.h"
#include "plan/plan.h"
#include "plan/scenario.h"
#include "util/clock.h"
#include "util/err.h"
#include "util/file.h"
#include "util/time_units.h"
#include "util/timestamp.h"

static const struct cli_example k8s_examples[] = {
	{"pacer k8s bench.yaml --segments 4 --image registry.example/pacer:0.1 | kubectl apply -f -",
	 "four generators on four nodes, one start time"},
};

static const struct cli_help cli_help_k8s = {
	.name = "k8s",
	.summary = "Kubernetes manifests running a scenario as N segments",
	.synopsis = "pacer k8s SCENARIO.yaml --segments N --image IMAGE [options]",
	.description = "Prints a ConfigMap with the scenario and an Indexed Job of N pods, one per "
		       "node, each running segment K of N from one start time and printing its "
		       "result to its log. Apply with kubectl apply -f -, collect the logs, then "
		       "pacer merge.",
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

/* A YAML scalar as a JSON string (valid YAML, exact for any bytes). */
static void yq(FILE *f, const char *s)
{
	fputc('"', f);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '"' || *p == '\\')
			fprintf(f, "\\%c", *p);
		else if (*p == '\n')
			fputs("\\n", f);
		else if (*p == '\t')
			fputs("\\t", f);
		else if (*p < 0x20 || *p == 0x7f)
			fprintf(f, "\\x%02x", *p);
		else
			fputc(*p, f);
	}
	fputc('"', f);
}

/* Whether text can go in a literal block scalar unchanged: printable
 * lines (tabs are fine inside), none with trailing blanks, the first not
 * starting with a space, ending in one newline. */
static bool block_ok(const char *t, size_t len)
{
	if (!len || t[len - 1] != '\n' || t[0] == ' ' || (len > 1 && t[len - 2] == '\n'))
		return false;
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)t[i];
		if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7f)
			return false;
		if (c == '\n' && i > 0 && (t[i - 1] == ' ' || t[i - 1] == '\t'))
			return false;
	}
	return true;
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

struct k8s {
	const char *name, *ns, *image, *cpu, *memory, *start_at, *scenario_name;
	const char *text;
	size_t len;
	uint32_t segments;
};

static void write_manifests(FILE *f, const struct k8s *k)
{
	fprintf(f, "# pacer k8s: %u segments of %s starting at %s (docs/distributed.md)\n",
		k->segments, k->scenario_name, k->start_at);
	fprintf(f, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %s-scenario\n"
		   "  namespace: %s\n  labels:\n    app.kubernetes.io/name: pacer\n"
		   "    app.kubernetes.io/instance: %s\ndata:\n  scenario.yaml: ",
		k->name, k->ns, k->name);
	if (block_ok(k->text, k->len)) {
		fputs("|\n", f);
		const char *p = k->text, *end = k->text + k->len;
		while (p < end) {
			const char *nl = memchr(p, '\n', (size_t)(end - p));
			size_t n = (size_t)(nl - p);
			if (n)
				fprintf(f, "    %.*s\n", (int)n, p);
			else
				fputc('\n', f);
			p = nl + 1;
		}
	} else {
		char *z = strndup(k->text, k->len);
		yq(f, z ? z : "");
		free(z);
		fputc('\n', f);
	}
	fprintf(f, "---\napiVersion: batch/v1\nkind: Job\nmetadata:\n  name: %s\n  namespace: %s\n"
		   "  labels:\n    app.kubernetes.io/name: pacer\n    app.kubernetes.io/instance: %s\n"
		   "spec:\n"
		   "  completionMode: Indexed\n"
		   "  completions: %u\n"
		   "  parallelism: %u\n"
		   "  backoffLimit: 0\n" /* a retried segment would start late: rerun it by hand */
		   "  template:\n"
		   "    metadata:\n"
		   "      labels:\n"
		   "        app.kubernetes.io/name: pacer\n"
		   "        app.kubernetes.io/instance: %s\n"
		   "    spec:\n"
		   "      restartPolicy: Never\n"
		   "      affinity:\n"
		   "        podAntiAffinity:\n"
		   "          requiredDuringSchedulingIgnoredDuringExecution:\n"
		   "          - topologyKey: kubernetes.io/hostname\n"
		   "            labelSelector:\n"
		   "              matchLabels:\n"
		   "                app.kubernetes.io/instance: %s\n"
		   "      containers:\n"
		   "      - name: pacer\n"
		   "        image: ",
		k->name, k->ns, k->name, k->segments, k->segments, k->name, k->name);
	yq(f, k->image);
	fprintf(f, "\n        workingDir: /work\n"
		   "        args: [\"bench\", \"/etc/pacer/scenario.yaml\", \"--segment\", "
		   "\"$(JOB_COMPLETION_INDEX)/%u\", \"--start-at\", \"%s\", \"--quiet\", "
		   "\"--limited-ok\", \"--out\", \"-\"]\n"
		   "        resources:\n"
		   "          requests:\n"
		   "            cpu: ",
		k->segments, k->start_at);
	yq(f, k->cpu);
	fputs("\n            memory: ", f);
	yq(f, k->memory);
	fputs("\n          limits:\n            memory: ", f);
	yq(f, k->memory);
	fprintf(f, "\n        volumeMounts:\n"
		   "        - name: scenario\n"
		   "          mountPath: /etc/pacer\n"
		   "          readOnly: true\n"
		   "        - name: work\n"
		   "          mountPath: /work\n"
		   "      volumes:\n"
		   "      - name: scenario\n"
		   "        configMap:\n"
		   "          name: %s-scenario\n"
		   "      - name: work\n"
		   "        emptyDir: {}\n",
		k->name);
}

int cmd_k8s(int argc, char **argv)
{
	uint32_t segments = 0;
	const char *image = NULL, *ns = "default", *name = NULL, *cpu = "2", *memory = "1Gi";
	const char *start_at = NULL;
	uint64_t start_in_ns = 60 * NS_PER_S;
	bool help = false;
	struct opt tab[] = {
		{0, "cpu", OPT_STR, &cpu, "Q", "2", "CPU each pod requests (a Kubernetes quantity)", false},
		{'h', "help", OPT_HELP, &help, NULL, NULL, "show this help", false},
		{0, "image", OPT_STR, &image, "IMAGE", NULL, "container image with pacer (Containerfile)", false},
		{0, "memory", OPT_STR, &memory, "Q", "1Gi", "memory each pod requests and is limited to", false},
		{0, "name", OPT_STR, &name, "NAME", "pacer-SCENARIO", "name of the Job and ConfigMap", false},
		{0, "namespace", OPT_STR, &ns, "NS", "default", "namespace of both", false},
		{0, "segments", OPT_U32, &segments, "N", NULL, "pods, one segment each, on N different nodes", false},
		{0, "start-at", OPT_STR, &start_at, "TIME", NULL, "start time (RFC 3339) instead of --start-in", false},
		{0, "start-in", OPT_DURATION, &start_in_ns, "D", "60s", "start this long after now: time to apply and schedule", false},
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
		fprintf(stderr, "pacer k8s: %s: cannot read: %s\n", pos[0],
			rc == PACER_ETOOBIG ? "larger than 1 MiB" : err_name(rc));
		return EXIT_USAGE;
	}
	struct scenario *sc = calloc(1, sizeof *sc);
	if (!sc) {
		free(text);
		return EXIT_RUNTIME;
	}
	rc = scenario_parse(text, len, pos[0], sc, err, sizeof err);
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
		    !strcmp(sc->args[i], "--start-at")) {
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
	uint64_t now = clock_wall_ns(), at;
	if (start_at) {
		if (timestamp_parse(start_at, now, &at) || at < now) {
			fprintf(stderr, "pacer k8s: --start-at '%s': expected a future RFC 3339 time like "
					"2026-12-01T12:00:00Z\n",
				start_at);
			goto out;
		}
	} else {
		at = now + start_in_ns;
	}
	timestamp_format(when, sizeof when, at);
	struct k8s k = {.name = name, .ns = ns, .image = image, .cpu = cpu, .memory = memory,
			.start_at = when, .scenario_name = pos[0], .text = text, .len = len,
			.segments = segments};
	write_manifests(stdout, &k);
	code = fflush(stdout) == 0 ? EXIT_OK : EXIT_RUNTIME;
out:
	if (!rc)
		scenario_free(sc);
	free(sc);
	free(text);
	return code;
}
