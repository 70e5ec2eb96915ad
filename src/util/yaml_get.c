#include "util/yaml_get.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "util/err.h"
#include "util/units.h"

#define KEY_SHOWN 60 /* bytes of a key echoed in a message */

int yaml_fail(const struct yaml_rd *r, int code, const yaml_node_t *n, const char *where,
              const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	yaml_msg_v(r->err, r->cap, r->src, n, where, fmt, ap);
	va_end(ap);
	return code;
}

const char *yaml_scalar(const yaml_node_t *n)
{
	return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

int yaml_get_scalar(const struct yaml_rd *r, const yaml_node_t *n, const char *where,
                    const char *what, const char **s, size_t *len)
{
	*s = "";
	if (len)
		*len = 0;
	if (!n || n->type != YAML_SCALAR_NODE)
		return yaml_fail(r, PACER_EPARSE, n, where, "expected %s, got %s", what,
		                 yaml_kind_name(n));
	*s = (const char *)n->data.scalar.value;
	if (len)
		*len = n->data.scalar.length;
	return 0;
}

int yaml_get_text(const struct yaml_rd *r, const yaml_node_t *n, const char *where,
                  const char *what, const char **s, size_t *len)
{
	size_t l = 0;
	int rc = yaml_get_scalar(r, n, where, what, s, &l);
	if (len)
		*len = l;
	if (rc == 0 && strlen(*s) != l)
		return yaml_fail(r, PACER_EPARSE, n, where, "expected %s without NUL bytes", what);
	return rc;
}

bool yaml_bool_of(const char *s, bool *b)
{
	static const char *const yes[] = {"true", "True", "TRUE"};
	static const char *const no[] = {"false", "False", "FALSE"};
	for (size_t i = 0; i < 3; i++) {
		if (!strcmp(s, yes[i])) {
			*b = true;
			return true;
		}
		if (!strcmp(s, no[i])) {
			*b = false;
			return true;
		}
	}
	return false;
}

int yaml_get_bool(const struct yaml_rd *r, const yaml_node_t *n, const char *where, bool *b)
{
	const char *s;
	int rc = yaml_get_text(r, n, where, "true or false", &s, NULL);
	if (rc < 0)
		return rc;
	if (yaml_bool_of(s, b))
		return 0;
	static const char *const yaml11[] = {"yes", "no", "on", "off", "y", "n"};
	for (size_t i = 0; i < sizeof yaml11 / sizeof yaml11[0]; i++)
		if (!strcasecmp(s, yaml11[i]))
			return yaml_fail(r, PACER_EPARSE, n, where,
			                 "expected true or false, got '%s' (YAML 1.2 booleans: "
			                 "yes/no/on/off are YAML 1.1's)",
			                 s);
	return yaml_fail(r, PACER_EPARSE, n, where, "expected true or false, got '%.40s'", s);
}

int yaml_get_count(const struct yaml_rd *r, const yaml_node_t *n, const char *where, uint64_t lo,
                   uint64_t hi, uint64_t *v)
{
	const char *s;
	int rc = yaml_get_text(r, n, where, "a whole number", &s, NULL);
	if (rc < 0)
		return rc;
	if (units_parse_count(s, v) < 0 || *v < lo || *v > hi)
		return yaml_fail(r, PACER_ERANGE, n, where,
		                 "expected a whole number from %llu to %llu, got '%.40s'",
		                 (unsigned long long)lo, (unsigned long long)hi, s);
	return 0;
}

int yaml_get_duration(const struct yaml_rd *r, const yaml_node_t *n, const char *where,
                      uint64_t *ns)
{
	static const char what[] = "a duration such as 250us, 5ms or 1.5s (not negative)";
	const char *s;
	int rc = yaml_get_text(r, n, where, what, &s, NULL);
	if (rc < 0)
		return rc;
	if (units_parse_duration_ns(s, ns) < 0)
		return yaml_fail(r, PACER_ERANGE, n, where, "expected %s, got '%.40s'", what, s);
	return 0;
}

int yaml_get_size(const struct yaml_rd *r, const yaml_node_t *n, const char *where, uint64_t hi,
                  uint64_t *v)
{
	const char *s;
	int rc = yaml_get_text(r, n, where, "a size", &s, NULL);
	if (rc < 0)
		return rc;
	if (units_parse_size(s, v) < 0 || *v > hi)
		return yaml_fail(r, PACER_ERANGE, n, where,
		                 "expected a size such as 512, 4k or 1MiB, at most %llu bytes, got '%.40s'",
		                 (unsigned long long)hi, s);
	return 0;
}

int yaml_get_prob(const struct yaml_rd *r, const yaml_node_t *n, const char *where, double *p)
{
	static const char what[] = "a probability between 0 and 1";
	const char *s;
	int rc = yaml_get_text(r, n, where, what, &s, NULL);
	if (rc < 0)
		return rc;
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (end == s || *end || errno || !isfinite(v))
		return yaml_fail(r, PACER_EPARSE, n, where, "expected %s, got '%.40s'", what, s);
	if (v < 0 || v > 1)
		return yaml_fail(r, PACER_ERANGE, n, where, "expected %s, got %.40s", what, s);
	*p = v;
	return 0;
}

int yaml_fields(const struct yaml_rd *r, const yaml_node_t *n, const char *where, const char *what,
                const char *const *keys, size_t nk, yaml_node_t **vals)
{
	for (size_t i = 0; i < nk; i++)
		vals[i] = NULL;
	if (!n || n->type != YAML_MAPPING_NODE)
		return yaml_fail(r, PACER_EPARSE, n, where, "expected %s, got %s", what,
		                 yaml_kind_name(n));
	for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; p++) {
		yaml_node_t *k = yaml_rd_node(r, p->key), *v = yaml_rd_node(r, p->value);
		const char *ks;
		int rc = yaml_get_text(r, k, where, "a key", &ks, NULL);
		if (rc < 0)
			return rc;
		size_t i = 0;
		while (i < nk && strcmp(keys[i], ks) != 0)
			i++;
		if (i == nk) {
			char list[256] = "";
			size_t o = 0;
			for (size_t j = 0; j < nk && o < sizeof list; j++)
				o += (size_t)snprintf(list + o, sizeof list - o, "%s%s", j ? ", " : "", keys[j]);
			return yaml_fail(r, PACER_EPARSE, k, where, "unknown key '%.*s' (expected one of: %s)",
			                 KEY_SHOWN, ks, list);
		}
		if (vals[i])
			return yaml_fail(r, PACER_EPARSE, k, where, "duplicate key '%s'", ks);
		vals[i] = v;
	}
	return 0;
}

/* ---- unique keys ---------------------------------------------------- */

struct key_ref {
	const yaml_node_t *node; /* a scalar key */
};

static int key_cmp(const void *a, const void *b)
{
	const yaml_node_t *x = ((const struct key_ref *)a)->node, *y = ((const struct key_ref *)b)->node;
	size_t xl = x->data.scalar.length, yl = y->data.scalar.length;
	int c = memcmp(x->data.scalar.value, y->data.scalar.value, xl < yl ? xl : yl);
	if (c)
		return c;
	if (xl != yl)
		return xl < yl ? -1 : 1;
	/* equal keys in the order of the text, the first one first */
	return x->start_mark.index < y->start_mark.index ? -1 : x->start_mark.index > y->start_mark.index;
}

int yaml_check_unique(const struct yaml_rd *r, const yaml_node_t *root)
{
	if (!root)
		return 0;
	const yaml_document_t *d = r->doc;
	size_t nn = (size_t)(d->nodes.top - d->nodes.start);
	size_t at = (size_t)(root - d->nodes.start);
	if (at >= nn)
		return 0; /* not a node of this document */
	unsigned char *seen = calloc(nn, 1);
	size_t *stack = malloc(nn * sizeof *stack);
	struct key_ref *keys = NULL;
	size_t keys_cap = 0, top = 0;
	const yaml_node_t *dup = NULL, *first = NULL; /* the earliest duplicate in the text */
	int rc = 0;
	if (!seen || !stack) {
		rc = -ENOMEM;
		goto out;
	}
	seen[at] = 1;
	stack[top++] = at;
	while (top) {
		const yaml_node_t *n = &d->nodes.start[stack[--top]];
		/* children first onto the stack (each node once) */
		if (n->type == YAML_SEQUENCE_NODE) {
			for (yaml_node_item_t *it = n->data.sequence.items.start; it < n->data.sequence.items.top;
			     it++) {
				size_t c = (size_t)(*it - 1);
				if (c < nn && !seen[c]) {
					seen[c] = 1;
					stack[top++] = c;
				}
			}
			continue;
		}
		if (n->type != YAML_MAPPING_NODE)
			continue;
		size_t np = (size_t)(n->data.mapping.pairs.top - n->data.mapping.pairs.start), nk = 0;
		if (np > keys_cap) {
			struct key_ref *k = realloc(keys, np * sizeof *k);
			if (!k) {
				rc = -ENOMEM;
				goto out;
			}
			keys = k;
			keys_cap = np;
		}
		for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; p++) {
			int ids[2] = {p->key, p->value};
			for (int j = 0; j < 2; j++) {
				size_t c = (size_t)(ids[j] - 1);
				if (c < nn && !seen[c]) {
					seen[c] = 1;
					stack[top++] = c;
				}
			}
			const yaml_node_t *k = yaml_document_get_node(r->doc, p->key);
			if (k && k->type == YAML_SCALAR_NODE)
				keys[nk++].node = k;
		}
		if (nk < 2)
			continue;
		qsort(keys, nk, sizeof *keys, key_cmp);
		for (size_t i = 1; i < nk; i++) {
			const yaml_node_t *a = keys[i - 1].node, *b = keys[i].node;
			if (a->data.scalar.length != b->data.scalar.length ||
			    memcmp(a->data.scalar.value, b->data.scalar.value, a->data.scalar.length))
				continue;
			/* b repeats a. Equal keys are sorted in the order of the text,
			 * so the first repeat of a run is met first, next to the run's
			 * first key; later repeats of the run are later in the text. */
			if (!dup || b->start_mark.index < dup->start_mark.index) {
				dup = b;
				first = a;
			}
		}
	}
	if (dup)
		rc = yaml_fail(r, PACER_EPARSE, dup, NULL, "duplicate key '%.*s' (first at line %u)",
		               (int)(dup->data.scalar.length < KEY_SHOWN ? dup->data.scalar.length : KEY_SHOWN),
		               (const char *)dup->data.scalar.value, yaml_node_line(first));
out:
	if (rc == -ENOMEM)
		yaml_fail(r, rc, NULL, NULL, "out of memory");
	free(seen);
	free(stack);
	free(keys);
	return rc;
}
