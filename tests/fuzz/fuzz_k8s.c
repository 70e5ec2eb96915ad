/* libFuzzer harness for the manifests of `pacer k8s` (src/dist/k8s.c):
 * whatever the values, the output parses back (libyaml, a YAML 1.1 reader
 * that takes NEL, U+2028 and U+2029 for line breaks, as PyYAML and the Go
 * reader of kubectl do) to exactly the documents promised, in order -- a
 * ConfigMap (a Secret when the scenario holds a secret header), and with
 * the barrier a Secret and a Service, then the Job -- each with the name,
 * namespace and values given: the scenario byte for byte, the image, the
 * CPU and memory, the token, the start time, the barrier's timeout. No
 * value can end its scalar, add a key or start a document.
 *
 * Input: a flags byte (bit 0: --start-at mode, bit 1: the scenario is a
 * secret), then the fields separated by NUL bytes: name, namespace, image,
 * cpu, memory, the scenario's file name, start_at, barrier_timeout, token,
 * and the scenario's text (the rest, NUL bytes and all). Missing fields are
 * empty. A refusal (-EILSEQ: a value not UTF-8; -ENAMETOOLONG) writes
 * nothing. Violations abort(). */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yaml.h>

#include "dist/k8s.h"
#include "util/b64.h"

#define FUZZ_NAME "fuzz_k8s"
#include "common/fuzz_check.h"

enum { F_NAME, F_NS, F_IMAGE, F_CPU, F_MEMORY, F_FILE, F_START, F_TIMEOUT, F_TOKEN, N_FIELDS };

/* The node at a path of mapping keys separated by spaces ("metadata name";
 * label keys hold dots) under n, or NULL. A key given twice is a violation
 * (a value that added a key). */
static yaml_node_t *at(yaml_document_t *d, yaml_node_t *n, const char *path)
{
	char key[64];
	while (n && *path) {
		const char *dot = strchr(path, ' ');
		size_t kl = dot ? (size_t)(dot - path) : strlen(path);
		snprintf(key, sizeof key, "%.*s", (int)kl, path);
		path += kl + (dot != NULL);
		if (n->type != YAML_MAPPING_NODE)
			return NULL;
		yaml_node_t *found = NULL;
		for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top;
		     p++) {
			yaml_node_t *k = yaml_document_get_node(d, p->key);
			if (k && k->type == YAML_SCALAR_NODE && k->data.scalar.length == strlen(key) &&
			    !memcmp(k->data.scalar.value, key, strlen(key))) {
				CHECK(!found);
				found = yaml_document_get_node(d, p->value);
			}
		}
		n = found;
	}
	return n;
}

/* Whether n is a scalar of exactly v[0..len). */
static bool is(const yaml_node_t *n, const char *v, size_t len)
{
	return n && n->type == YAML_SCALAR_NODE && n->data.scalar.length == len &&
	       !memcmp(n->data.scalar.value, v, len);
}

static bool is_str(const yaml_node_t *n, const char *v)
{
	return is(n, v, strlen(v));
}

/* Whether n is a scalar holding v[0..len) in base64. */
static bool is_b64(const yaml_node_t *n, const char *v, size_t len)
{
	if (!n || n->type != YAML_SCALAR_NODE)
		return false;
	unsigned char *out = malloc(n->data.scalar.length / 4 * 3 + 3);
	size_t got = 0;
	bool ok = out &&
		  !b64_decode((const char *)n->data.scalar.value, n->data.scalar.length, out, &got) &&
		  got == len && !memcmp(out, v, len);
	free(out);
	return ok;
}

/* name + suffix as one string. */
static bool is_named(const yaml_node_t *n, const char *name, const char *suffix)
{
	char full[K8S_NAME_MAX + 16];
	snprintf(full, sizeof full, "%s%s", name, suffix);
	return is_str(n, full);
}

/* Whether the sequence n holds the scalar v. */
static bool has_item(yaml_document_t *d, const yaml_node_t *n, const char *v)
{
	if (!n || n->type != YAML_SEQUENCE_NODE)
		return false;
	for (yaml_node_item_t *i = n->data.sequence.items.start; i < n->data.sequence.items.top; i++)
		if (is_str(yaml_document_get_node(d, *i), v))
			return true;
	return false;
}

static void check_meta(yaml_document_t *d, yaml_node_t *root, const struct k8s_spec *k,
		       const char *kind, const char *suffix)
{
	CHECK(root && root->type == YAML_MAPPING_NODE);
	CHECK(is_str(at(d, root, "kind"), kind));
	CHECK(is_named(at(d, root, "metadata name"), k->name, suffix));
	CHECK(is_str(at(d, root, "metadata namespace"), k->ns));
	CHECK(is_str(at(d, root, "metadata labels app.kubernetes.io/instance"), k->name));
	CHECK(is_str(at(d, root, "metadata labels app.kubernetes.io/name"), "pacer"));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	unsigned flags = data[0];
	char *fields[N_FIELDS];
	const char *p = (const char *)data + 1, *end = (const char *)data + size;
	for (int i = 0; i < N_FIELDS; i++) {
		const char *nul = p < end ? memchr(p, '\0', (size_t)(end - p)) : NULL;
		size_t n = p < end ? (nul ? (size_t)(nul - p) : (size_t)(end - p)) : 0;
		fields[i] = strndup(p < end ? p : "", n);
		CHECK(fields[i]);
		p = nul ? nul + 1 : end;
	}
	struct k8s_spec k = {
		.name = fields[F_NAME],
		.ns = fields[F_NS],
		.image = fields[F_IMAGE],
		.cpu = fields[F_CPU],
		.memory = fields[F_MEMORY],
		.scenario_file = fields[F_FILE],
		.start_at = flags & 1 ? fields[F_START] : NULL,
		.barrier_timeout = fields[F_TIMEOUT],
		.token = fields[F_TOKEN],
		.text = p,
		.len = (size_t)(end - p),
		.scenario_secret = flags & 2,
		.segments = 2 + (flags >> 2),
	};
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);
	CHECK(f);
	int rc = k8s_write(f, &k);
	CHECK(fclose(f) == 0);
	if (rc) {
		CHECK(rc == -EILSEQ || rc == -ENAMETOOLONG);
		CHECK(len == 0);
	} else {
		/* the documents, in order */
		static const char *const barrier[] = {"", "Secret", "Service", "Job"};
		static const char *const at_time[] = {"", "Job"};
		const char *const *kinds = k.start_at ? at_time : barrier;
		size_t n_kinds = k.start_at ? 2 : 4;
		yaml_parser_t ps;
		CHECK(yaml_parser_initialize(&ps));
		yaml_parser_set_input_string(&ps, (const unsigned char *)out, len);
		size_t ndoc = 0;
		for (;;) {
			yaml_document_t d;
			if (!yaml_parser_load(&ps, &d)) {
				fprintf(stderr, "fuzz_k8s: %s at line %zu\n", ps.problem ? ps.problem : "?",
					ps.problem_mark.line + 1);
				CHECK(!"the manifests parse");
			}
			yaml_node_t *root = yaml_document_get_root_node(&d);
			if (!root) {
				yaml_document_delete(&d);
				break;
			}
			CHECK(ndoc < n_kinds);
			const char *kind = kinds[ndoc];
			if (ndoc == 0) { /* the scenario */
				if (k.scenario_secret) {
					check_meta(&d, root, &k, "Secret", "-scenario");
					CHECK(is_b64(at(&d, root, "data scenario.yaml"), k.text, k.len));
				} else {
					check_meta(&d, root, &k, "ConfigMap", "-scenario");
					yaml_node_t *dm = at(&d, root, "data");
					CHECK(dm ? is(at(&d, dm, "scenario.yaml"), k.text, k.len)
						   : is_b64(at(&d, root, "binaryData scenario.yaml"), k.text,
							    k.len));
				}
			} else if (!strcmp(kind, "Secret")) {
				check_meta(&d, root, &k, "Secret", "-token");
				CHECK(is_str(at(&d, root, "stringData token"), k.token));
			} else if (!strcmp(kind, "Service")) {
				check_meta(&d, root, &k, "Service", "");
				CHECK(is_str(at(&d, root, "spec selector app.kubernetes.io/instance"),
					     k.name));
			} else {
				check_meta(&d, root, &k, "Job", "");
				yaml_node_t *tpl = at(&d, root, "spec template spec");
				yaml_node_t *cs = at(&d, tpl, "containers");
				CHECK(cs && cs->type == YAML_SEQUENCE_NODE &&
				      cs->data.sequence.items.top - cs->data.sequence.items.start == 1);
				yaml_node_t *c = yaml_document_get_node(&d, *cs->data.sequence.items.start);
				CHECK(is_str(at(&d, c, "image"), k.image));
				CHECK(is_str(at(&d, c, "resources requests cpu"), k.cpu));
				CHECK(is_str(at(&d, c, "resources requests memory"), k.memory));
				CHECK(is_str(at(&d, c, "resources limits memory"), k.memory));
				yaml_node_t *args = at(&d, c, "args");
				CHECK(has_item(&d, args, "/etc/pacer/scenario.yaml"));
				if (k.start_at) {
					CHECK(has_item(&d, args, k.start_at));
				} else {
					CHECK(has_item(&d, args, k.barrier_timeout));
					CHECK(is_named(at(&d, tpl, "subdomain"), k.name, ""));
				}
			}
			yaml_document_delete(&d);
			ndoc++;
		}
		CHECK(ndoc == n_kinds);
		yaml_parser_delete(&ps);
	}
	free(out);
	for (int i = 0; i < N_FIELDS; i++)
		free(fields[i]);
	return 0;
}
