#include "plan/scenario.h"

#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "table/mix.h"
#include "table/table.h"
#include "util/err.h"
#include "util/text.h"
#include "util/units.h"
#include "util/yaml_get.h"

/* The options each kind takes as keys (long option names; flags marked). */
struct key {
	const char *name;
	bool flag;
};

/* What every kind shares: the shared option set of run, ramp and compare
 * (cli/options.h: requests, connections, rules, the target's resources,
 * reports, TLS and Unix sockets; outcomes and cost_profiles are maps,
 * handled apart). */
#define LOAD_KEYS                                                                                 \
	{"arrival", 0}, {"bodies", 0}, {"burst-size", 0}, {"body", 0}, {"by-name", 1}, {"connections", 0},            \
	{"drain", 0}, {"history", 0}, {"lazy", 1}, {"max-body", 0}, {"method", 0}, {"order", 0}, {"out", 0},    \
	{"quiet", 1}, {"realtime", 1}, {"calibrate", 0},                                           \
	{"report-dir", 0}, {"requests-file", 0}, {"requests-format", 0}, {"seed", 0}, {"spin", 0}, \
	{"precise", 1}, {"send-window", 0}, {"precision-budget", 0}, {"target-threads", 0}, {"threads", 0}, {"timeout", 0}, {"success", 0}, {"server-time", 0}, \
	{"inspect-body", 0}, {"target-pid", 0}, {"target-children", 1}, {"target-cgroup", 0},      \
	{"target-cores", 0}, {"lag-limit", 0}, {"limited-ok", 1}, {"insecure", 1}, {"cacert", 0},  \
	{"cert", 0}, {"key", 0}, {"unix-socket", 0}, {"connect-to", 0}, {"tls", 1},            \
	{"no-tls-resume", 1}, {"h2c", 1}, {"http2", 0}, {"max-streams", 0}, {"h2-window", 0},     \
	{"http3", 1}, {"alpn", 0},                                                                \
	{"no-redact", 1}, {"redact-header", 0}

/* The shape of a ramp (ramp, and compare in ramp mode). */
#define RAMP_KEYS                                                                                 \
	{"after-fail", 0}, {"factor", 0}, {"from", 0}, {"precision", 0}, {"refine", 1},            \
	{"require", 0}, {"retries", 0}, {"slo", 0}, {"step-duration", 0}, {"step-warmup", 0},      \
	{"steps", 0}, {"to", 0}

static const struct key run_keys[] = {
	{"concurrency", 0}, {"duration", 0}, {"hgrm", 0}, {"rate", 0}, {"repeat", 0},
	{"requests", 0}, {"slo", 0}, {"warmup", 0}, LOAD_KEYS, {NULL, 0},
};
static const struct key ramp_keys[] = {
	{"repeat", 0}, RAMP_KEYS, LOAD_KEYS, {NULL, 0},
};
static const struct key compare_keys[] = {
	{"concurrency", 0}, {"duration", 0}, {"noise", 0}, {"rate", 0}, {"repeat", 0},
	{"requests", 0}, {"warmup", 0}, RAMP_KEYS, LOAD_KEYS, {NULL, 0},
};

struct ctx {
	const char *source;
	char *err;
	size_t errcap;
	struct scenario *s;
	yaml_document_t *doc;
};

/* The document as the YAML helper layer (util/yaml_get.h) reads it. */
#define RD(c)                                                                                     \
	(&(struct yaml_rd){.doc = (c)->doc, .src = (c)->source, .err = (c)->err, .cap = (c)->errcap})

/* "SRC:LINE: message"; PACER_EPARSE. */
#define fail(c, n, ...) yaml_fail(RD(c), PACER_EPARSE, n, NULL, __VA_ARGS__)

static int push(struct ctx *c, const yaml_node_t *at, const char *a)
{
	if (c->s->nargs >= SCENARIO_MAX_ARGS - 1)
		return fail(c, at, "too many settings (at most %d arguments)", SCENARIO_MAX_ARGS);
	char *d = strdup(a);
	if (!d)
		return -ENOMEM;
	c->s->args[c->s->nargs++] = d;
	return 0;
}

static int push_opt(struct ctx *c, const yaml_node_t *at, const char *name, const char *value)
{
	char opt[96];
	snprintf(opt, sizeof opt, "--%s", name);
	int rc = push(c, at, opt);
	return rc ? rc : value ? push(c, at, value) : 0;
}

static const char *scalar(const yaml_node_t *n) { return yaml_scalar(n); }

static const struct key *find_key(const struct key *tab, const char *name)
{
	for (; tab->name; tab++)
		if (strcmp(tab->name, name) == 0)
			return tab;
	return NULL;
}

static void key_list(const struct key *tab, char *out, size_t cap)
{
	size_t o = 0;
	out[0] = '\0';
	for (; tab->name && o < cap; tab++)
		o += (size_t)snprintf(out + o, cap - o, "%s%s", o ? ", " : "", tab->name);
}

/* "Name: value" headers from a map or a list of strings. */
static int headers(struct ctx *c, const yaml_node_t *v)
{
	if (v->type == YAML_MAPPING_NODE) {
		for (yaml_node_pair_t *p = v->data.mapping.pairs.start; p < v->data.mapping.pairs.top;
		     p++) {
			const char *k = scalar(yaml_document_get_node(c->doc, p->key));
			const yaml_node_t *vn = yaml_document_get_node(c->doc, p->value);
			const char *val = scalar(vn);
			if (!k || !val)
				return fail(c, vn, "header: expected Name: value pairs");
			char line[4096];
			snprintf(line, sizeof line, "%s: %s", k, val);
			int rc = push_opt(c, vn, "header", line);
			if (rc)
				return rc;
		}
		return 0;
	}
	if (v->type == YAML_SEQUENCE_NODE) {
		for (yaml_node_item_t *i = v->data.sequence.items.start; i < v->data.sequence.items.top;
		     i++) {
			const yaml_node_t *in = yaml_document_get_node(c->doc, *i);
			if (!scalar(in))
				return fail(c, in, "header: expected \"Name: value\" strings");
			int rc = push_opt(c, in, "header", scalar(in));
			if (rc)
				return rc;
		}
		return 0;
	}
	return push_opt(c, v, "header", scalar(v));
}

/* A map of NAME: VALUE given as one --option NAME=VALUE per entry
 * (variants, outcomes, cost_profiles). `shape` says what an entry is. */
static int name_map(struct ctx *c, const yaml_node_t *v, const char *key, const char *option,
		    const char *shape)
{
	if (v->type != YAML_MAPPING_NODE)
		return fail(c, v, "%s: expected a map of %s", key, shape);
	for (yaml_node_pair_t *p = v->data.mapping.pairs.start; p < v->data.mapping.pairs.top; p++) {
		const char *k = scalar(yaml_document_get_node(c->doc, p->key));
		const yaml_node_t *vn = yaml_document_get_node(c->doc, p->value);
		const char *val = scalar(vn);
		if (!k || !val || !*val)
			return fail(c, vn, "%s: expected %s", key, shape);
		char spec[2048];
		snprintf(spec, sizeof spec, "%s=%s", k, val);
		int rc = push_opt(c, vn, option, spec);
		if (rc)
			return rc;
	}
	return 0;
}

/* What a variant may set for itself (compare --variant-set NAME.KEY=VALUE). */
static const char *const variant_keys[] = {
	"requests-file", "requests-format", "bodies", "body", "header", "method", "target-pid",
	"target-cgroup", "target-children", "target-cores", "target-threads", "unix-socket",
	"connect-to", NULL,
};

/* variants: {A: URL, B: "@PLAN"}, or an entry as a map of its target and
 * its own settings: {B: {target: URL, requests_file: b.jsonl, header: [..],
 * target_pid: 1234}} (one --variant and a --variant-set per setting). */
static int variants(struct ctx *c, const yaml_node_t *v)
{
	static const char shape[] = "NAME: URL, NAME: \"@PLAN\" or NAME: {target: ..., KEY: VALUE}";
	if (v->type != YAML_MAPPING_NODE)
		return fail(c, v, "variants: expected a map of %s", shape);
	for (yaml_node_pair_t *p = v->data.mapping.pairs.start; p < v->data.mapping.pairs.top; p++) {
		const char *name = scalar(yaml_document_get_node(c->doc, p->key));
		const yaml_node_t *vn = yaml_document_get_node(c->doc, p->value);
		if (!name || !*name || strchr(name, '.'))
			return fail(c, vn, "variants: a name without '.' (expected %s)", shape);
		char spec[2048];
		int rc;
		if (vn->type != YAML_MAPPING_NODE) {
			const char *val = scalar(vn);
			if (!val || !*val)
				return fail(c, vn, "variants: expected %s", shape);
			snprintf(spec, sizeof spec, "%s=%s", name, val);
			if ((rc = push_opt(c, vn, "variant", spec)))
				return rc;
			continue;
		}
		const char *target = "";
		for (yaml_node_pair_t *q = vn->data.mapping.pairs.start; q < vn->data.mapping.pairs.top; q++) {
			const char *qk = scalar(yaml_document_get_node(c->doc, q->key));
			const char *qv = scalar(yaml_document_get_node(c->doc, q->value));
			if (qk && !strcmp(qk, "target")) {
				if (!qv)
					return fail(c, vn, "variants: %s: target: expected a URL or \"@PLAN\"",
						    name);
				target = qv;
			}
		}
		snprintf(spec, sizeof spec, "%s=%s", name, target);
		if ((rc = push_opt(c, vn, "variant", spec)))
			return rc;
		for (yaml_node_pair_t *q = vn->data.mapping.pairs.start; q < vn->data.mapping.pairs.top; q++) {
			const yaml_node_t *kn = yaml_document_get_node(c->doc, q->key);
			const yaml_node_t *valn = yaml_document_get_node(c->doc, q->value);
			const char *k0 = scalar(kn);
			if (!k0 || !strcmp(k0, "target"))
				continue;
			char k[64];
			snprintf(k, sizeof k, "%s", k0);
			for (char *r = k; *r; r++)
				if (*r == '_')
					*r = '-';
			if (!strcmp(k, "headers"))
				snprintf(k, sizeof k, "header");
			size_t i = 0;
			while (variant_keys[i] && strcmp(variant_keys[i], k))
				i++;
			if (!variant_keys[i])
				return fail(c, kn, "variants: %s: unknown key '%s' (expected target, "
					    "requests_file, requests_format, bodies, body, header, method, "
					    "target_pid, target_cgroup, target_children, target_cores, "
					    "target_threads, unix_socket or connect_to)", name, k0);
			/* a list (headers) gives one setting per item */
			const yaml_node_item_t *it = valn->type == YAML_SEQUENCE_NODE
							     ? valn->data.sequence.items.start : NULL;
			const yaml_node_item_t *end = it ? valn->data.sequence.items.top : NULL;
			do {
				const yaml_node_t *one = it ? yaml_document_get_node(c->doc, *it) : valn;
				const char *val = scalar(one);
				if (!val)
					return fail(c, one, "variants: %s: %s: expected a value", name, k0);
				snprintf(spec, sizeof spec, "%s.%s=%s", name, k, val);
				if ((rc = push_opt(c, one, "variant-set", spec)))
					return rc;
			} while (it && ++it < end);
		}
	}
	return 0;
}

/* A message of the mix generator ("SOURCE:LINE: what" or "SOURCE: what")
 * retold as "SOURCE:LINE: table: [mix: ]what" (LINE: its own, else `line`). */
static void retell(const char *source, unsigned line, const char *what, const char *msg,
		   char *err, size_t cap)
{
	size_t sl = strlen(source);
	const char *rest = msg;
	unsigned at = line;
	if (strncmp(msg, source, sl) == 0 && msg[sl] == ':') {
		const char *p = msg + sl + 1;
		if (isdigit((unsigned char)*p)) {
			unsigned long v = strtoul(p, (char **)&p, 10);
			if (*p == ':') {
				at = (unsigned)v;
				p++;
			}
		}
		rest = p + (*p == ' ');
	}
	snprintf(err, cap, "%s:%u: table: %s%s", source, at, what, rest);
	text_one_line(err);
}

static bool parse_u64(const char *v, uint64_t *out)
{
	if (!v || *v < '0' || *v > '9')
		return false;
	char *end = NULL;
	errno = 0;
	unsigned long long x = strtoull(v, &end, 10);
	if (errno == ERANGE || !end || *end)
		return false;
	*out = x;
	return true;
}

/* table: {mix: SPEC, size: N, seed: S}: the spec is parsed and checked now
 * (by the mix generator's own parser, on this document); built later by
 * scenario_table. */
static int table_spec(struct ctx *c, const yaml_node_t *kn, yaml_node_t *v)
{
	if (v->type != YAML_MAPPING_NODE)
		return fail(c, v, "table: expected {mix: {...}, size: N, seed: S} (a mix spec inline; "
			    "docs/scenario.md)");
	yaml_node_t *mix = NULL, *size = NULL, *seed = NULL;
	for (yaml_node_pair_t *p = v->data.mapping.pairs.start; p < v->data.mapping.pairs.top; p++) {
		const yaml_node_t *k = yaml_document_get_node(c->doc, p->key);
		yaml_node_t *val = yaml_document_get_node(c->doc, p->value);
		const char *name = scalar(k);
		yaml_node_t **slot = !name ? NULL
				   : !strcmp(name, "mix") ? &mix
				   : !strcmp(name, "size") ? &size
				   : !strcmp(name, "seed") ? &seed
							   : NULL;
		if (!slot)
			return fail(c, k, "table: unknown key '%s' (expected mix, size, seed)",
				    name ? name : "(not a plain key)");
		*slot = val; /* once: yaml_check_unique refused repeated keys */
	}
	if (!mix)
		return fail(c, v, "table: missing mix: {...} (the spec pacer table generate --spec "
			    "reads; docs/tables.md)");
	if (!size)
		return fail(c, v, "table: missing size: N (the number of requests)");
	uint64_t n;
	if (!scalar(size) || units_parse_count(scalar(size), &n) || n == 0 ||
	    n > TABLE_DEFAULT_MAX_REQUESTS)
		return fail(c, size, "table: size: expected a whole number from 1 to %u",
			    TABLE_DEFAULT_MAX_REQUESTS);
	uint64_t sd = 1;
	if (seed && !parse_u64(scalar(seed), &sd))
		return fail(c, seed, "table: seed: expected a whole number from 0 to 2^64-1");
	if (mix->type != YAML_MAPPING_NODE)
		return fail(c, mix, "table: mix: expected a mapping (base_url, methods, shapes, ...; "
			    "docs/tables.md)");
	char why[1024];
	int rc = table_mix_from_yaml(c->doc, mix, c->source, &c->s->table_mix, why, sizeof why);
	if (rc) {
		retell(c->source, (unsigned)mix->start_mark.line + 1, "mix: ", why, c->err, c->errcap);
		return rc;
	}
	c->s->table_size = n;
	c->s->table_seed = sd;
	c->s->table_line = (unsigned)kn->start_mark.line + 1;
	return 0;
}

/* A scalar, or a list of scalars joined by commas (e.g. steps). */
static int joined(struct ctx *c, const yaml_node_t *v, const char *name, char *out, size_t cap)
{
	if (v->type == YAML_SCALAR_NODE) {
		snprintf(out, cap, "%s", scalar(v));
		return 0;
	}
	if (v->type != YAML_SEQUENCE_NODE)
		return fail(c, v, "%s: expected a value or a list of values", name);
	size_t o = 0;
	out[0] = '\0';
	for (yaml_node_item_t *i = v->data.sequence.items.start; i < v->data.sequence.items.top; i++) {
		const yaml_node_t *in = yaml_document_get_node(c->doc, *i);
		if (!scalar(in))
			return fail(c, in, "%s: expected a list of plain values", name);
		o += (size_t)snprintf(out + o, o < cap ? cap - o : 0, "%s%s", o ? "," : "", scalar(in));
		if (o >= cap)
			return fail(c, in, "%s: list too long", name);
	}
	return 0;
}

/* Whether two keys name the same setting: `_` and `-` are one
 * (requests_file is --requests-file). */
static bool same_setting(const char *a, const char *b)
{
	for (; *a && *b; a++, b++)
		if (*a != *b && !((*a == '_' || *a == '-') && (*b == '_' || *b == '-')))
			return false;
	return *a == *b;
}

/* Keys of the top mapping seen so far: every one is a known setting (an
 * unknown key ends the parse), so this many is more than a kind has. */
#define SEEN_CAP 128

static int build(struct ctx *c, const yaml_node_t *root)
{
	if (!root || root->type != YAML_MAPPING_NODE)
		return fail(c, root, "expected a mapping with kind: run, ramp or compare");
	const yaml_node_t *kind_node = NULL, *target = NULL, *path = NULL;
	const yaml_node_t *table_key = NULL, *file_key = NULL, *bodies_key = NULL;
	for (yaml_node_pair_t *p = root->data.mapping.pairs.start; p < root->data.mapping.pairs.top;
	     p++) {
		const yaml_node_t *kn = yaml_document_get_node(c->doc, p->key);
		const char *k = scalar(kn);
		if (k && strcmp(k, "kind") == 0)
			kind_node = yaml_document_get_node(c->doc, p->value);
	}
	const char *kind = scalar(kind_node);
	const struct key *tab = NULL;
	if (kind && strcmp(kind, "run") == 0)
		tab = run_keys;
	else if (kind && strcmp(kind, "ramp") == 0)
		tab = ramp_keys;
	else if (kind && strcmp(kind, "compare") == 0)
		tab = compare_keys;
	if (!tab)
		return fail(c, kind_node ? kind_node : root,
			    "kind: expected run, ramp or compare%s%s%s", kind ? " (got '" : "",
			    kind ? kind : "", kind ? "')" : "");
	const yaml_node_t *seen[SEEN_CAP];
	size_t n_seen = 0;
	snprintf(c->s->kind, sizeof c->s->kind, "%s", kind);
	int rc = push(c, root, kind);
	if (rc)
		return rc;
	for (yaml_node_pair_t *p = root->data.mapping.pairs.start; p < root->data.mapping.pairs.top;
	     p++) {
		const yaml_node_t *kn = yaml_document_get_node(c->doc, p->key);
		yaml_node_t *vn = yaml_document_get_node(c->doc, p->value);
		const char *k0 = scalar(kn);
		if (!k0)
			return fail(c, kn, "expected a plain key");
		for (size_t i = 0; i < n_seen; i++)
			if (same_setting(scalar(seen[i]), k0))
				return fail(c, kn, "duplicate key '%s' (first at line %u as '%s')", k0,
					    yaml_node_line(seen[i]), scalar(seen[i]));
		if (n_seen == SEEN_CAP)
			return fail(c, kn, "more than %d keys", SEEN_CAP);
		seen[n_seen++] = kn;
		char k[64];
		snprintf(k, sizeof k, "%s", k0);
		for (char *q = k; *q; q++)
			if (*q == '_')
				*q = '-';
		if (!strcmp(k, "kind"))
			continue;
		if (!strcmp(k, "name") || !strcmp(k, "description")) {
			if (!scalar(vn))
				return fail(c, vn, "%s: expected text", k);
			if (!strcmp(k, "name"))
				snprintf(c->s->name, sizeof c->s->name, "%s", scalar(vn));
			continue;
		}
		if (!strcmp(k, "target")) {
			if (tab == compare_keys)
				return fail(c, kn, "target: a compare takes variants: {A: URL, B: URL}");
			if (!scalar(vn) || !*scalar(vn))
				return fail(c, vn, "target: expected a URL or self-contained[:PLAN]");
			target = vn;
			continue;
		}
		if (!strcmp(k, "path")) {
			if (!scalar(vn) || scalar(vn)[0] != '/')
				return fail(c, vn, "path: expected a path starting with /");
			path = vn;
			continue;
		}
		if (!strcmp(k, "variants")) {
			if (tab != compare_keys)
				return fail(c, kn, "variants: only for kind: compare");
			if ((rc = variants(c, vn)))
				return rc;
			continue;
		}
		if (!strcmp(k, "outcomes") || !strcmp(k, "cost-profiles")) {
			bool oc = !strcmp(k, "outcomes");
			if ((rc = name_map(c, vn, k0, oc ? "outcome" : "cost-profile",
					   oc ? "NAME: RULE (docs/rules.md)" : "NAME: USD per core-hour")))
				return rc;
			continue;
		}
		if (!strcmp(k, "header") || !strcmp(k, "headers")) {
			if ((rc = headers(c, vn)))
				return rc;
			continue;
		}
		if (!strcmp(k, "redact-header") && vn->type == YAML_SEQUENCE_NODE) {
			/* a list of names: one --redact-header each */
			for (yaml_node_item_t *i = vn->data.sequence.items.start;
			     i < vn->data.sequence.items.top; i++) {
				const yaml_node_t *in = yaml_document_get_node(c->doc, *i);
				if (!scalar(in) || !*scalar(in))
					return fail(c, in, "redact_header: expected header names");
				if ((rc = push_opt(c, in, k, scalar(in))))
					return rc;
			}
			continue;
		}
		if (!strcmp(k, "table")) {
			if (tab == compare_keys)
				return fail(c, kn, "table: only for kind run or ramp");
			if ((rc = table_spec(c, kn, vn)))
				return rc;
			table_key = kn;
			continue;
		}
		if (!strcmp(k, "requests") && vn->type == YAML_MAPPING_NODE)
			return fail(c, vn, "requests: expected a count (closed loop: stop after N); a mix "
				    "spec inline goes under table: {mix: {...}, size: N, seed: S}");
		if (!strcmp(k, "requests-file"))
			file_key = kn;
		if (!strcmp(k, "bodies"))
			bodies_key = kn;
		const struct key *key = find_key(tab, k);
		if (!key) {
			char list[1024];
			key_list(tab, list, sizeof list);
			return fail(c, kn, "unknown key '%s' for kind %s (expected kind, name, %s%s)", k0,
				    kind, tab == compare_keys ? "variants, header, " : "target, path, header, ",
				    list);
		}
		if (key->flag) {
			bool on;
			if ((rc = yaml_get_bool(RD(c), vn, k0, &on)))
				return rc;
			if (on && (rc = push_opt(c, vn, k, NULL)))
				return rc;
			continue;
		}
		if (!strcmp(k, "http2")) { /* true, false, or prefer: --http2[=prefer] */
			const char *sv = scalar(vn);
			bool on = true;
			if (sv && !strcmp(sv, "prefer")) {
				rc = push(c, vn, "--http2=prefer");
			} else {
				rc = yaml_get_bool(RD(c), vn, k0, &on);
				if (!rc && on)
					rc = push(c, vn, "--http2");
			}
			if (rc)
				return rc;
			continue;
		}
		char val[4096];
		if ((rc = joined(c, vn, k0, val, sizeof val)))
			return rc;
		if ((rc = push_opt(c, vn, k, val)))
			return rc;
	}
	if (table_key && (file_key || bodies_key))
		return fail(c, file_key ? file_key : bodies_key,
			    "%s: not with table: (give one source of requests)",
			    file_key ? "requests_file" : "bodies");
	if ((table_key || file_key) && target)
		return fail(c, target, "target: not with %s (the table names the URLs%s)",
			    table_key ? "table:" : "requests_file",
			    table_key ? ": the mix's base_url" : "");
	if (tab != compare_keys && (table_key || file_key)) {
		if (path)
			return fail(c, path, "path: only with target: self-contained");
	} else if (tab != compare_keys) {
		const char *t = scalar(target);
		if (!t)
			return fail(c, root, "target: missing (a URL, or self-contained[:PLAN]; or "
				    "requests_file: or table: instead)");
		if (!strncmp(t, "self-contained", 14) && (t[14] == '\0' || t[14] == ':')) {
			char opt[1024];
			snprintf(opt, sizeof opt, "--self-contained%s%s", t[14] ? "=" : "", t[14] ? t + 15 : "");
			if ((rc = push(c, target, opt)))
				return rc;
			if (path && (rc = push(c, path, scalar(path))))
				return rc;
		} else {
			if (path)
				return fail(c, path, "path: only with target: self-contained (put it in the URL)");
			if ((rc = push(c, target, t)))
				return rc;
		}
	}
	return 0;
}

int scenario_parse(const char *text, size_t len, const char *source, struct scenario *out,
		   char *err, size_t errcap)
{
	memset(out, 0, sizeof *out);
	if (!source)
		source = "(scenario)";
	struct ctx c = {.source = source, .err = err, .errcap = errcap, .s = out};
	if (errcap)
		err[0] = '\0';
	if (len > SCENARIO_FILE_CAP) {
		snprintf(err, errcap, "%s: larger than 1 MiB", source);
		return PACER_ETOOBIG;
	}
	yaml_parser_t parser;
	yaml_document_t doc;
	if (!yaml_parser_initialize(&parser))
		return -ENOMEM;
	yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
	int rc;
	if (!yaml_parser_load(&parser, &doc)) {
		snprintf(err, errcap, "%s:%lu: %s", source, (unsigned long)parser.problem_mark.line + 1,
			 parser.problem ? parser.problem : "not valid YAML");
		yaml_parser_delete(&parser);
		return PACER_EPARSE;
	}
	c.doc = &doc;
	yaml_node_t *root = yaml_document_get_root_node(&doc);
	out->source = strdup(source);
	rc = !out->source ? -ENOMEM : yaml_check_unique(RD(&c), root);
	if (rc == 0)
		rc = build(&c, root);
	yaml_document_delete(&doc);
	yaml_parser_delete(&parser);
	if (rc)
		scenario_free(out);
	else
		out->args[out->nargs] = NULL;
	return rc;
}

int scenario_table(const struct scenario *s, const struct table_limits *lim, struct table **out,
		   char *err, size_t errcap)
{
	*out = NULL;
	if (!s->table_mix)
		return 0;
	char why[1024];
	int rc = table_mix_generate(s->table_mix, (size_t)s->table_size, s->table_seed, lim, out, why,
				    sizeof why);
	if (rc)
		retell(s->source, s->table_line, "", why, err, errcap);
	return rc;
}

void scenario_free(struct scenario *s)
{
	for (int i = 0; i < s->nargs; i++)
		free(s->args[i]);
	s->nargs = 0;
	table_mix_free(s->table_mix);
	s->table_mix = NULL;
	free(s->source);
	s->source = NULL;
}
