/* pacer — the manifests of `pacer k8s` (dist/k8s.h). */
#include "dist/k8s.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "dist/wire.h"
#include "util/b64.h"

/* The code point of the valid UTF-8 sequence at s[0..len) into *cp and its
 * length, or 0 when the bytes there are not one. */
static size_t utf8_next(const unsigned char *s, size_t len, uint32_t *cp)
{
	if (s[0] < 0x80) {
		*cp = s[0];
		return 1;
	}
	size_t n;
	uint32_t c, min;
	if ((s[0] & 0xe0) == 0xc0) {
		n = 2, c = s[0] & 0x1f, min = 0x80;
	} else if ((s[0] & 0xf0) == 0xe0) {
		n = 3, c = s[0] & 0x0f, min = 0x800;
	} else if ((s[0] & 0xf8) == 0xf0) {
		n = 4, c = s[0] & 0x07, min = 0x10000;
	} else {
		return 0;
	}
	if (n > len)
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		c = c << 6 | (s[i] & 0x3f);
	}
	if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
		return 0;
	*cp = c;
	return n;
}

bool k8s_utf8_ok(const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s;
	uint32_t cp;
	for (size_t i = 0, n; i < len; i += n)
		if (!(n = utf8_next(p + i, len - i, &cp)))
			return false;
	return true;
}

/* Whether code point c may stand as it is in YAML text, inside a scalar:
 * printable (YAML 1.1's c-printable), not a line break of any YAML version
 * (NEL U+0085, U+2028, U+2029), not a byte order mark. */
static bool plain_char(uint32_t c)
{
	if (c == '\t')
		return true;
	if (c < 0x20 || c == 0x7f || (c >= 0x80 && c <= 0x9f))
		return false;
	if (c == 0x2028 || c == 0x2029 || c == 0xfeff || c == 0xfffe || c == 0xffff)
		return false;
	return true;
}

/* s[0..len) as a double-quoted scalar; lossy: bytes that are not UTF-8
 * written as \xXX (a comment's text; a value is refused instead). */
static int quote(FILE *f, const char *s, size_t len, bool lossy)
{
	const unsigned char *p = (const unsigned char *)s;
	if (!lossy && !k8s_utf8_ok(s, len))
		return -EILSEQ;
	fputc('"', f);
	for (size_t i = 0, n; i < len; i += n) {
		uint32_t c;
		n = utf8_next(p + i, len - i, &c);
		if (!n) { /* lossy: one byte */
			fprintf(f, "\\x%02x", p[i]);
			n = 1;
		} else if (c == '"' || c == '\\') {
			fprintf(f, "\\%c", (int)c);
		} else if (c == '\n') {
			fputs("\\n", f);
		} else if (c == '\t') {
			fputs("\\t", f);
		} else if (!plain_char(c)) {
			if (c < 0x100)
				fprintf(f, "\\x%02x", (unsigned)c);
			else
				fprintf(f, "\\u%04x", (unsigned)c);
		} else {
			fwrite(p + i, 1, n, f);
		}
	}
	fputc('"', f);
	return 0;
}

int k8s_yaml_str(FILE *f, const char *s, size_t len)
{
	return quote(f, s, len, false);
}

/* A value that is a C string (checked for UTF-8 before anything is
 * written, in k8s_write). */
static void yq(FILE *f, const char *s)
{
	quote(f, s, strlen(s), true);
}

/* Whether text can go in a literal block scalar unchanged and be read
 * back exactly by any YAML reader: valid UTF-8 of characters that may
 * stand as they are (plain_char) and newlines, lines without trailing
 * blanks, the first beginning with neither a blank nor a newline (the
 * block's indentation is taken from it), ending in exactly one newline. */
static bool block_ok(const char *t, size_t len)
{
	if (!len || t[len - 1] != '\n' || t[0] == ' ' || t[0] == '\t' || t[0] == '\n' ||
	    (len > 1 && t[len - 2] == '\n'))
		return false;
	const unsigned char *p = (const unsigned char *)t;
	for (size_t i = 0, n; i < len; i += n) {
		uint32_t c;
		if (!(n = utf8_next(p + i, len - i, &c)))
			return false;
		if (c == '\n') {
			if (i > 0 && (t[i - 1] == ' ' || t[i - 1] == '\t'))
				return false;
		} else if (!plain_char(c)) {
			return false;
		}
	}
	return true;
}

static void labels(FILE *f, const char *indent, const char *name)
{
	fprintf(f, "%slabels:\n%s  app.kubernetes.io/name: pacer\n%s  app.kubernetes.io/instance: ",
		indent, indent, indent);
	yq(f, name);
	fputc('\n', f);
}

/* name and suffix, one quoted value ("NAME-token"). */
static void name_with(FILE *f, const char *name, const char *suffix)
{
	char full[K8S_NAME_MAX + 16];
	snprintf(full, sizeof full, "%s%s", name, suffix); /* k8s_write checked the length */
	yq(f, full);
}

static void metadata(FILE *f, const char *name, const char *suffix, const char *ns)
{
	fputs("metadata:\n  name: ", f);
	name_with(f, name, suffix);
	fputs("\n  namespace: ", f);
	yq(f, ns);
	fputc('\n', f);
	labels(f, "  ", name);
}

/* The scenario's bytes as base64 (a Secret's data, a ConfigMap's
 * binaryData). */
static void base64(FILE *f, const char *t, size_t len)
{
	char out[4096];
	for (size_t at = 0; at < len;) {
		size_t n = len - at < 3072 ? len - at : 3072; /* a multiple of 3 */
		fwrite(out, 1, b64_encode((const unsigned char *)t + at, n, out), f);
		at += n;
	}
}

static void scenario(FILE *f, const struct k8s_spec *k)
{
	if (k->scenario_secret) {
		/* a secret header in it: a Secret, base64 as Secrets keep data */
		fputs("---\napiVersion: v1\nkind: Secret\n", f);
		metadata(f, k->name, "-scenario", k->ns);
		fputs("type: Opaque\ndata:\n  scenario.yaml: \"", f);
		base64(f, k->text, k->len);
		fputs("\"\n", f);
		return;
	}
	fputs("apiVersion: v1\nkind: ConfigMap\n", f);
	metadata(f, k->name, "-scenario", k->ns);
	if (block_ok(k->text, k->len)) {
		fputs("data:\n  scenario.yaml: |\n", f);
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
	} else if (k8s_utf8_ok(k->text, k->len)) {
		fputs("data:\n  scenario.yaml: ", f);
		quote(f, k->text, k->len, false);
		fputc('\n', f);
	} else { /* not text: a ConfigMap keeps bytes in binaryData */
		fputs("binaryData:\n  scenario.yaml: \"", f);
		base64(f, k->text, k->len);
		fputs("\"\n", f);
	}
}

int k8s_write(FILE *f, const struct k8s_spec *k)
{
	const char *values[] = {k->name, k->ns, k->image, k->cpu, k->memory, k->start_at,
				k->barrier_timeout, k->token};
	if (strlen(k->name) > K8S_NAME_MAX)
		return -ENAMETOOLONG;
	for (size_t i = 0; i < sizeof values / sizeof values[0]; i++)
		if (values[i] && !k8s_utf8_ok(values[i], strlen(values[i])))
			return -EILSEQ;
	fputs("# pacer k8s: ", f);
	fprintf(f, "%u segments of ", k->segments);
	quote(f, k->scenario_file, strlen(k->scenario_file), true);
	if (k->start_at) {
		fputs(" starting at ", f);
		yq(f, k->start_at);
		fputs(" (docs/distributed.md)\n", f);
	} else {
		fputs(", started together by pod 0 once all are up (docs/distributed.md)\n", f);
	}
	if (k->scenario_secret)
		fputs("# the scenario sets a secret header: it is a Secret, not a ConfigMap\n", f);
	scenario(f, k);
	if (!k->start_at) {
		/* the barrier's secret, and the names pod K reaches pod 0 by
		 * (NAME-0.NAME: the Job's pods take the Service's name as their
		 * subdomain); published before the pods are ready, so that a pod
		 * can check in while the others still start */
		fputs("---\napiVersion: v1\nkind: Secret\n", f);
		metadata(f, k->name, "-token", k->ns);
		fputs("type: Opaque\nstringData:\n  token: ", f);
		yq(f, k->token ? k->token : "");
		fputs("\n---\napiVersion: v1\nkind: Service\n", f);
		metadata(f, k->name, "", k->ns);
		fputs("spec:\n"
		      "  clusterIP: None\n"
		      "  publishNotReadyAddresses: true\n"
		      "  selector:\n"
		      "    app.kubernetes.io/instance: ",
		      f);
		yq(f, k->name);
		fprintf(f, "\n  ports:\n"
			   "  - name: barrier\n"
			   "    port: %d\n"
			   "    targetPort: %d\n",
			WIRE_PORT, WIRE_PORT);
	}
	fputs("---\napiVersion: batch/v1\nkind: Job\n", f);
	metadata(f, k->name, "", k->ns);
	fprintf(f, "spec:\n"
		   "  completionMode: Indexed\n"
		   "  completions: %u\n"
		   "  parallelism: %u\n"
		   "  backoffLimit: 0\n" /* a retried segment would start late: rerun it by hand */
		   "  template:\n"
		   "    metadata:\n",
		k->segments, k->segments);
	labels(f, "      ", k->name);
	fputs("    spec:\n"
	      "      restartPolicy: Never\n",
	      f);
	if (!k->start_at) {
		fputs("      subdomain: ", f);
		yq(f, k->name);
		fputc('\n', f);
	}
	fputs("      affinity:\n"
	      "        podAntiAffinity:\n"
	      "          requiredDuringSchedulingIgnoredDuringExecution:\n"
	      "          - topologyKey: kubernetes.io/hostname\n"
	      "            labelSelector:\n"
	      "              matchLabels:\n"
	      "                app.kubernetes.io/instance: ",
	      f);
	yq(f, k->name);
	fputs("\n      containers:\n"
	      "      - name: pacer\n"
	      "        image: ",
	      f);
	yq(f, k->image);
	/* the arguments: fixed words and the values, each quoted; a pod's
	 * index comes from Kubernetes' $(JOB_COMPLETION_INDEX) */
	char seg[48], barrier[512];
	snprintf(seg, sizeof seg, "$(JOB_COMPLETION_INDEX)/%u", k->segments);
	const char *args[16];
	size_t n = 0;
	args[n++] = "bench";
	args[n++] = "/etc/pacer/scenario.yaml";
	args[n++] = "--segment";
	args[n++] = seg;
	if (k->start_at) {
		args[n++] = "--start-at";
		args[n++] = k->start_at;
	} else {
		snprintf(barrier, sizeof barrier, "%s-0.%s:%d", k->name, k->name, WIRE_PORT);
		args[n++] = "--barrier";
		args[n++] = barrier;
		args[n++] = "--barrier-timeout";
		args[n++] = k->barrier_timeout ? k->barrier_timeout : "5m";
		args[n++] = "--merged-out";
		args[n++] = "-";
	}
	args[n++] = "--quiet";
	args[n++] = "--limited-ok";
	args[n++] = "--out";
	args[n++] = "-";
	args[n++] = "--framed";
	fputs("\n        workingDir: /work\n        args: [", f);
	for (size_t i = 0; i < n; i++) {
		if (i)
			fputs(", ", f);
		yq(f, args[i]);
	}
	fputs("]\n", f);
	if (!k->start_at) {
		fputs("        env:\n"
		      "        - name: PACER_BARRIER_TOKEN\n"
		      "          valueFrom:\n"
		      "            secretKeyRef:\n"
		      "              name: ",
		      f);
		name_with(f, k->name, "-token");
		fprintf(f, "\n              key: token\n"
			   "        ports:\n"
			   "        - name: barrier\n"
			   "          containerPort: %d\n",
			WIRE_PORT);
	}
	fputs("        resources:\n"
	      "          requests:\n"
	      "            cpu: ",
	      f);
	yq(f, k->cpu);
	fputs("\n            memory: ", f);
	yq(f, k->memory);
	fputs("\n          limits:\n            memory: ", f);
	yq(f, k->memory);
	fputs("\n        volumeMounts:\n"
	      "        - name: scenario\n"
	      "          mountPath: /etc/pacer\n"
	      "          readOnly: true\n"
	      "        - name: work\n"
	      "          mountPath: /work\n"
	      "      volumes:\n"
	      "      - name: scenario\n",
	      f);
	if (k->scenario_secret) {
		fputs("        secret:\n          secretName: ", f);
		name_with(f, k->name, "-scenario");
	} else {
		fputs("        configMap:\n          name: ", f);
		name_with(f, k->name, "-scenario");
	}
	fputs("\n      - name: work\n"
	      "        emptyDir: {}\n",
	      f);
	return ferror(f) ? -EIO : 0;
}
