/* pacer — the mix generator's spec: YAML (libyaml document API) → a
 * validated struct table_mix (mix_int.h). See mix.h for the contract and
 * docs/tables.md for the schema. */
#include "table/mix.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "http/req.h"
#include "http/url.h"
#include "table/mix_int.h"
#include "util/err.h"
#include "util/file.h"
#include "util/yaml_get.h"
#include "util/units.h"

static const char *const ph_names[PH_COUNT] = {NULL, "route", "id", "uuid", "word", "path", "n"};

struct pctx {
	struct yaml_rd y; /* the document, its name, the message */
	struct table_mix *m;
};

/* Write "SRC:LINE: WHERE: message" and return code (util/yaml_get.h). */
#define fail(c, ...) yaml_fail(&(c)->y, __VA_ARGS__)

static int oom(struct pctx *c) { return fail(c, -ENOMEM, NULL, NULL, "out of memory"); }

static yaml_node_t *node(struct pctx *c, int id) { return yaml_rd_node(&c->y, id); }


/* n zeroed bytes from the spec's arena: ta_alloc hands out whatever the
 * allocator left there, and a spec is filled in piece by piece (a method's
 * body flag only in body()), so every field not yet set must read as 0 and
 * not as the heap's last contents (MALLOC_PERTURB_, a reused chunk). */
static void *alloc(struct pctx *c, size_t n)
{
	void *p = ta_alloc(c->m->arena, n);
	if (p)
		memset(p, 0, n);
	return p;
}

static int text(struct pctx *c, const yaml_node_t *n, const char *where, const char *what,
                const char **s, size_t *len)
{
	return yaml_get_text(&c->y, n, where, what, s, len);
}

/* A number in [lo, hi]; "N%" means N / 100 when pct is true. */
static int number(struct pctx *c, const yaml_node_t *n, const char *where, double lo, double hi,
                  bool pct, double *out)
{
	const char *s = "";
	size_t len = 0;
	int rc = text(c, n, where, "a number", &s, &len);
	if (rc)
		return rc;
	char buf[64];
	if (len == 0 || len >= sizeof buf)
		return fail(c, PACER_EPARSE, n, where, "expected a number, got '%.40s'", s);
	memcpy(buf, s, len + 1);
	bool percent = pct && buf[len - 1] == '%';
	if (percent)
		buf[--len] = '\0';
	char *end = NULL;
	errno = 0;
	double v = strtod(buf, &end);
	if (len == 0 || end != buf + len || errno || !isfinite(v) || buf[0] == ' ')
		return fail(c, PACER_EPARSE, n, where, "expected a number, got '%.40s'", s);
	if (percent)
		v /= 100.0;
	if (v < lo || v > hi)
		return fail(c, PACER_ERANGE, n, where, "%.40s is out of range (%g to %g%s)", s, lo, hi,
		            pct ? ", or a percentage" : "");
	*out = v;
	return 0;
}

static int count(struct pctx *c, const yaml_node_t *n, const char *where, uint64_t lo,
                 uint64_t hi, uint64_t *out)
{
	const char *s = "";
	size_t len = 0;
	int rc = text(c, n, where, "a whole number", &s, &len);
	if (rc)
		return rc;
	uint64_t v;
	if (units_parse_count(s, &v))
		return fail(c, PACER_EPARSE, n, where, "expected a whole number, got '%.40s'", s);
	if (v < lo || v > hi)
		return fail(c, PACER_ERANGE, n, where, "%.40s is out of range (%llu to %llu)", s,
		            (unsigned long long)lo, (unsigned long long)hi);
	*out = v;
	return 0;
}

/* Check n is a mapping whose keys are scalars from keys[] (no repeats);
 * vals[i] gets the value of keys[i] or NULL. */
static int fields(struct pctx *c, const yaml_node_t *n, const char *where, const char *what,
                  const char *const *keys, size_t nk, yaml_node_t **vals)
{
	return yaml_fields(&c->y, n, where, what, keys, nk, vals);
}

enum tpl_kind { TPL_PATH, TPL_QUERY, TPL_BODY };

/* Compile "text with ${name} placeholders" ("$$" is a literal '$'). */
static int template(struct pctx *c, const yaml_node_t *n, const char *where, enum tpl_kind kind,
                    struct tpl *t)
{
	const char *s;
	size_t len;
	int rc = text(c, n, where, "a template string", &s, &len);
	if (rc)
		return rc;
	size_t cap_bytes = kind == TPL_BODY ? MIX_BODY_TEMPLATE_CAP : MIX_TEMPLATE_CAP;
	if (len > cap_bytes)
		return fail(c, PACER_ETOOBIG, n, where, "template longer than %zu bytes", cap_bytes);
	if (kind == TPL_PATH && s[0] != '/')
		return fail(c, PACER_EPARSE, n, where, "a path template starts with '/', got '%.40s'", s);
	if (kind != TPL_BODY)
		for (size_t i = 0; i < len; i++) {
			unsigned char ch = (unsigned char)s[i];
			if (ch <= 0x20 || ch >= 0x7f)
				return fail(c, PACER_EPARSE, n, where,
				            "template has a space, control or non-ASCII byte (percent-encode it)");
			if (ch == '#' || (kind == TPL_PATH && ch == '?'))
				return fail(c, PACER_EPARSE, n, where,
				            "template has '%c' (query strings come from 'query:')", ch);
		}
	/* at most one part per byte, plus one */
	struct part *parts = alloc(c, (len + 1) * sizeof *parts);
	if (!parts)
		return oom(c);
	t->parts = parts;
	t->n = 0;
	t->has_route = false;
	size_t i = 0, lit = 0;
	char *buf = alloc(c, len + 1); /* literal text with "$$" folded */
	if (!buf)
		return oom(c);
	size_t bo = 0;
	while (i < len) {
		if (s[i] == '$' && i + 1 < len && s[i + 1] == '$') {
			buf[bo++] = '$';
			i += 2;
			continue;
		}
		if (s[i] == '$' && i + 1 < len && s[i + 1] == '{') {
			const char *close = memchr(s + i + 2, '}', len - i - 2);
			if (!close)
				return fail(c, PACER_EPARSE, n, where, "unterminated '${' in template");
			size_t nl = (size_t)(close - (s + i + 2));
			enum ph k = PH_LIT;
			for (int x = 1; x < PH_COUNT; x++)
				if (strlen(ph_names[x]) == nl && memcmp(ph_names[x], s + i + 2, nl) == 0)
					k = (enum ph)x;
			if (k == PH_LIT)
				return fail(c, PACER_EPARSE, n, where,
				            "unknown placeholder '${%.*s}' (expected route, id, uuid, word, path, n)",
				            nl > 30 ? 30 : (int)nl, s + i + 2);
			if (bo > lit)
				parts[t->n++] = (struct part){PH_LIT, buf + lit, bo - lit};
			lit = bo;
			parts[t->n++] = (struct part){k, NULL, 0};
			if (k == PH_ROUTE)
				t->has_route = true;
			i += nl + 3;
			continue;
		}
		buf[bo++] = s[i++];
	}
	if (bo > lit)
		parts[t->n++] = (struct part){PH_LIT, buf + lit, bo - lit};
	return 0;
}

static int locality(struct pctx *c, const yaml_node_t *n, const char *where, double *req,
                    double *routes)
{
	static const char *const keys[] = {"requests", "routes"};
	yaml_node_t *v[2];
	int rc = fields(c, n, where, "a mapping {requests: SHARE, routes: SHARE}", keys, 2, v);
	if (rc)
		return rc;
	if (!v[0] || !v[1])
		return fail(c, PACER_EPARSE, n, where, "expected both 'requests' and 'routes'");
	if ((rc = number(c, v[0], where, 0, 1, true, req)) ||
	    (rc = number(c, v[1], where, 0, 1, true, routes)))
		return rc;
	if (*routes <= 0)
		return fail(c, PACER_ERANGE, v[1], where, "routes must be above 0");
	return 0;
}

static int methods(struct pctx *c, const yaml_node_t *n)
{
	struct table_mix *m = c->m;
	if (n->type != YAML_MAPPING_NODE)
		return fail(c, PACER_EPARSE, n, "methods", "expected a mapping METHOD: weight, got %s",
		            yaml_kind_name(n));
	size_t k = (size_t)(n->data.mapping.pairs.top - n->data.mapping.pairs.start);
	if (k == 0 || k > MIX_MAX_METHODS)
		return fail(c, PACER_ERANGE, n, "methods", "expected 1 to %d methods", MIX_MAX_METHODS);
	m->methods = alloc(c, k * sizeof *m->methods);
	if (!m->methods)
		return oom(c);
	for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; p++) {
		yaml_node_t *kn = node(c, p->key), *vn = node(c, p->value);
		const char *name;
		size_t len;
		int rc = text(c, kn, "methods", "a method name", &name, &len);
		if (rc)
			return rc;
		if (req_method_check(name))
			return fail(c, PACER_EPARSE, kn, "methods", "'%.40s' is not a method token", name);
		for (size_t i = 0; i < m->n_methods; i++)
			if (strcmp(m->methods[i].name, name) == 0)
				return fail(c, PACER_EPARSE, kn, "methods", "duplicate method '%s'", name);
		struct method *me = &m->methods[m->n_methods];
		*me = (struct method){.name = name}; /* re-pointed into the arena below; body() sets body */
		if ((rc = number(c, vn, "methods", 0, MIX_MAX_WEIGHT, true, &me->weight)))
			return rc;
		if (!(me->name = ta_strndup(m->arena, name, len)))
			return oom(c);
		m->n_methods++;
	}
	double sum = 0;
	for (size_t i = 0; i < m->n_methods; i++)
		sum += m->methods[i].weight;
	if (sum <= 0)
		return fail(c, PACER_ERANGE, n, "methods", "the weights add up to 0");
	return 0;
}

static int shape(struct pctx *c, const yaml_node_t *n, size_t idx, struct shape *s)
{
	static const char *const keys[] = {"name", "weight", "routes", "templates", "template",
	                                   "locality"};
	enum { K_NAME, K_WEIGHT, K_ROUTES, K_TEMPLATES, K_TEMPLATE, K_LOCALITY, K_N };
	char where[64];
	snprintf(where, sizeof where, "shapes[%zu]", idx);
	yaml_node_t *v[K_N];
	int rc = fields(c, n, where, "a mapping with name and templates", keys, K_N, v);
	if (rc)
		return rc;
	s->line = yaml_node_line(n);
	const char *name;
	size_t len;
	if (!v[K_NAME])
		return fail(c, PACER_EPARSE, n, where, "missing 'name'");
	if ((rc = text(c, v[K_NAME], where, "a shape name", &name, &len)))
		return rc;
	if (len == 0 || len > 64)
		return fail(c, PACER_EPARSE, v[K_NAME], where, "a name of 1 to 64 characters");
	if (!(s->name = ta_strndup(c->m->arena, name, len)))
		return oom(c);
	snprintf(where, sizeof where, "shapes[%zu] (%s)", idx, s->name);
	s->weight = 1;
	if (v[K_WEIGHT] && (rc = number(c, v[K_WEIGHT], where, 0, MIX_MAX_WEIGHT, true, &s->weight)))
		return rc;
	if (v[K_TEMPLATES] && v[K_TEMPLATE])
		return fail(c, PACER_EPARSE, n, where, "give 'templates' or 'template', not both");
	if (v[K_TEMPLATE]) {
		s->n_tpls = 1;
		s->tpls = alloc(c, sizeof *s->tpls);
		if (!s->tpls)
			return oom(c);
		if ((rc = template(c, v[K_TEMPLATE], where, TPL_PATH, &s->tpls[0])))
			return rc;
	} else if (v[K_TEMPLATES]) {
		const yaml_node_t *l = v[K_TEMPLATES];
		if (l->type != YAML_SEQUENCE_NODE)
			return fail(c, PACER_EPARSE, l, where, "templates: expected a list, got %s", yaml_kind_name(l));
		size_t k = (size_t)(l->data.sequence.items.top - l->data.sequence.items.start);
		if (k == 0 || k > MIX_MAX_TEMPLATES)
			return fail(c, PACER_ERANGE, l, where, "templates: expected 1 to %d", MIX_MAX_TEMPLATES);
		s->tpls = alloc(c, k * sizeof *s->tpls);
		if (!s->tpls)
			return oom(c);
		for (yaml_node_item_t *it = l->data.sequence.items.start; it < l->data.sequence.items.top;
		     it++)
			if ((rc = template(c, node(c, *it), where, TPL_PATH, &s->tpls[s->n_tpls++])))
				return rc;
	} else {
		return fail(c, PACER_EPARSE, n, where, "missing 'templates'");
	}
	uint64_t routes = s->n_tpls;
	if (v[K_ROUTES] && (rc = count(c, v[K_ROUTES], where, 1, MIX_MAX_ROUTES, &routes)))
		return rc;
	if (routes < s->n_tpls)
		return fail(c, PACER_ERANGE, v[K_ROUTES], where,
		            "routes: %llu is fewer than the %zu templates", (unsigned long long)routes,
		            s->n_tpls);
	if (routes > s->n_tpls)
		for (size_t i = 0; i < s->n_tpls; i++)
			if (!s->tpls[i].has_route)
				return fail(c, PACER_EPARSE, v[K_ROUTES] ? v[K_ROUTES] : n, where,
				            "%llu distinct routes from %zu templates need ${route} in every "
				            "template",
				            (unsigned long long)routes, s->n_tpls);
	s->routes = (size_t)routes;
	if (v[K_LOCALITY]) {
		s->has_loc = true;
		if ((rc = locality(c, v[K_LOCALITY], where, &s->loc_req, &s->loc_routes)))
			return rc;
	}
	return 0;
}

static int shapes(struct pctx *c, const yaml_node_t *n)
{
	struct table_mix *m = c->m;
	if (n->type != YAML_SEQUENCE_NODE)
		return fail(c, PACER_EPARSE, n, "shapes", "expected a list of shapes, got %s", yaml_kind_name(n));
	size_t k = (size_t)(n->data.sequence.items.top - n->data.sequence.items.start);
	if (k == 0 || k > MIX_MAX_SHAPES)
		return fail(c, PACER_ERANGE, n, "shapes", "expected 1 to %d shapes", MIX_MAX_SHAPES);
	m->shapes = alloc(c, k * sizeof *m->shapes);
	if (!m->shapes)
		return oom(c);
	for (yaml_node_item_t *it = n->data.sequence.items.start; it < n->data.sequence.items.top; it++) {
		struct shape *s = &m->shapes[m->n_shapes];
		int rc = shape(c, node(c, *it), m->n_shapes, s);
		if (rc)
			return rc;
		for (size_t i = 0; i < m->n_shapes; i++)
			if (strcmp(m->shapes[i].name, s->name) == 0)
				return fail(c, PACER_EPARSE, node(c, *it), "shapes", "duplicate shape name '%s'",
				            s->name);
		m->n_shapes++;
	}
	double sum = 0;
	for (size_t i = 0; i < m->n_shapes; i++)
		sum += m->shapes[i].weight;
	if (sum <= 0)
		return fail(c, PACER_ERANGE, n, "shapes", "the weights add up to 0");
	return 0;
}

static bool named(const char *line, size_t n, const char *name)
{
	return n == strlen(name) && strncasecmp(line, name, n) == 0;
}

static int headers(struct pctx *c, const yaml_node_t *n)
{
	struct table_mix *m = c->m;
	if (n->type != YAML_SEQUENCE_NODE)
		return fail(c, PACER_EPARSE, n, "headers", "expected a list of \"Name: value\", got %s",
		            yaml_kind_name(n));
	size_t k = (size_t)(n->data.sequence.items.top - n->data.sequence.items.start);
	if (k > MIX_MAX_HEADERS)
		return fail(c, PACER_ERANGE, n, "headers", "more than %d headers", MIX_MAX_HEADERS);
	m->headers = alloc(c, (k ? k : 1) * sizeof *m->headers);
	if (!m->headers)
		return oom(c);
	for (yaml_node_item_t *it = n->data.sequence.items.start; it < n->data.sequence.items.top; it++) {
		yaml_node_t *h = node(c, *it);
		const char *s, *why = NULL;
		size_t len;
		int rc = text(c, h, "headers", "a \"Name: value\" string", &s, &len);
		if (rc)
			return rc;
		if (len > 8192)
			return fail(c, PACER_ETOOBIG, h, "headers", "header longer than 8192 bytes");
		if ((rc = req_header_check(s, &why)))
			return fail(c, rc, h, "headers", "'%.40s': %s", s, why);
		const char *colon = strchr(s, ':');
		size_t nl = (size_t)(colon - s);
		if (named(s, nl, "Content-Length") || named(s, nl, "Transfer-Encoding"))
			return fail(c, PACER_EPARSE, h, "headers", "'%.*s' is set by pacer, per request", (int)nl, s);
		char *copy = ta_strndup(m->arena, s, len);
		if (!copy)
			return oom(c);
		m->headers[m->n_headers++] = (struct tb_hdr){copy, nl, copy + nl + 1, len - nl - 1};
	}
	return 0;
}

static bool has_header(const struct table_mix *m, const char *name)
{
	for (size_t i = 0; i < m->n_headers; i++)
		if (named(m->headers[i].name, m->headers[i].name_len, name))
			return true;
	return false;
}

static int body(struct pctx *c, const yaml_node_t *n)
{
	static const char *const keys[] = {"methods", "content_type", "template"};
	struct table_mix *m = c->m;
	yaml_node_t *v[3];
	int rc = fields(c, n, "body", "a mapping with a template", keys, 3, v);
	if (rc)
		return rc;
	if (!v[2])
		return fail(c, PACER_EPARSE, n, "body", "missing 'template'");
	if ((rc = template(c, v[2], "body", TPL_BODY, &m->body)))
		return rc;
	m->has_body = true;
	if (v[1]) {
		const char *s, *why = NULL;
		size_t len;
		if ((rc = text(c, v[1], "body", "a content type", &s, &len)))
			return rc;
		if (has_header(m, "Content-Type"))
			return fail(c, PACER_EPARSE, v[1], "body",
			            "content_type and a Content-Type in headers: give one");
		char line[600];
		if (len > 500)
			return fail(c, PACER_ETOOBIG, v[1], "body", "content_type longer than 500 bytes");
		snprintf(line, sizeof line, "Content-Type: %s", s);
		if (len && (rc = req_header_check(line, &why)))
			return fail(c, rc, v[1], "body", "content_type: %s", why);
		m->content_type = len ? ta_strndup(m->arena, s, len) : NULL;
		if (len && !m->content_type)
			return oom(c);
	} else if (!has_header(m, "Content-Type")) {
		m->content_type = "application/json";
	}
	if (v[0]) {
		const yaml_node_t *l = v[0];
		if (l->type != YAML_SEQUENCE_NODE)
			return fail(c, PACER_EPARSE, l, "body", "methods: expected a list, got %s", yaml_kind_name(l));
		/* the methods listed get a body, every other one none */
		for (size_t i = 0; i < m->n_methods; i++)
			m->methods[i].body = false;
		for (yaml_node_item_t *it = l->data.sequence.items.start; it < l->data.sequence.items.top;
		     it++) {
			yaml_node_t *x = node(c, *it);
			const char *s;
			size_t len;
			if ((rc = text(c, x, "body", "a method", &s, &len)))
				return rc;
			size_t i = 0;
			while (i < m->n_methods && strcmp(m->methods[i].name, s) != 0)
				i++;
			if (i == m->n_methods)
				return fail(c, PACER_EPARSE, x, "body", "methods: '%.40s' is not in 'methods'", s);
			m->methods[i].body = true;
		}
	} else {
		for (size_t i = 0; i < m->n_methods; i++) {
			const char *s = m->methods[i].name;
			m->methods[i].body = strcmp(s, "POST") == 0 || strcmp(s, "PUT") == 0 ||
			                     strcmp(s, "PATCH") == 0;
		}
	}
	return 0;
}

static int query(struct pctx *c, const yaml_node_t *n)
{
	static const char *const keys[] = {"share", "template"};
	struct table_mix *m = c->m;
	yaml_node_t *v[2];
	int rc = fields(c, n, "query", "a mapping {share: SHARE, template: TEXT}", keys, 2, v);
	if (rc)
		return rc;
	if (!v[0])
		return fail(c, PACER_EPARSE, n, "query", "missing 'share'");
	if ((rc = number(c, v[0], "query", 0, 1, true, &m->query_share)))
		return rc;
	if (v[1])
		return template(c, v[1], "query", TPL_QUERY, &m->query);
	/* the default: q=${word}&page=${id} */
	static const struct part def[] = {{PH_LIT, "q=", 2}, {PH_WORD, NULL, 0},
	                                  {PH_LIT, "&page=", 6}, {PH_ID, NULL, 0}};
	m->query = (struct tpl){def, 4, false};
	return 0;
}

static int base_url(struct pctx *c, const yaml_node_t *n)
{
	struct table_mix *m = c->m;
	const char *s, *why = NULL;
	size_t len;
	int rc = text(c, n, "base_url", "a URL", &s, &len);
	if (rc)
		return rc;
	if (len > 1024)
		return fail(c, PACER_ETOOBIG, n, "base_url", "longer than 1024 bytes");
	struct url *u = malloc(sizeof *u);
	if (!u)
		return oom(c);
	const char *upath = NULL, *http = NULL;
	size_t upath_len = 0;
	rc = table_url_unix(s, &upath, &upath_len, &http, &why); /* unix:PATH:http://... too */
	if (!rc)
		rc = url_parse(u, http, &why);
	bool bad = !rc && (strchr(u->target, '?') || strchr(s, '#'));
	free(u);
	if (rc)
		return fail(c, rc, n, "base_url", "'%.100s': %s", s, why);
	if (bad)
		return fail(c, PACER_EURL, n, "base_url", "'%.100s': no query or fragment here", s);
	while (len && s[len - 1] == '/')
		len--;
	if (!(m->base_url = ta_strndup(m->arena, s, len)))
		return oom(c);
	return 0;
}

static int spec(struct pctx *c, const yaml_node_t *root)
{
	static const char *const keys[] = {"base_url", "methods", "shapes", "locality",
	                                   "query", "headers", "body", "id_max"};
	enum { K_BASE, K_METHODS, K_SHAPES, K_LOC, K_QUERY, K_HEADERS, K_BODY, K_IDMAX, K_N };
	struct table_mix *m = c->m;
	yaml_node_t *v[K_N];
	int rc = fields(c, root, NULL, "a mapping with base_url and shapes", keys, K_N, v);
	if (rc)
		return rc;
	if (!v[K_BASE])
		return fail(c, PACER_EPARSE, root, NULL, "missing 'base_url'");
	if (!v[K_SHAPES])
		return fail(c, PACER_EPARSE, root, NULL, "missing 'shapes'");
	if ((rc = base_url(c, v[K_BASE])))
		return rc;
	if (v[K_METHODS]) {
		if ((rc = methods(c, v[K_METHODS])))
			return rc;
	} else {
		m->methods = alloc(c, sizeof *m->methods);
		if (!m->methods)
			return oom(c);
		m->methods[0] = (struct method){"GET", 1, false};
		m->n_methods = 1;
	}
	if ((rc = shapes(c, v[K_SHAPES])))
		return rc;
	if (v[K_LOC]) {
		m->has_loc = true;
		if ((rc = locality(c, v[K_LOC], "locality", &m->loc_req, &m->loc_routes)))
			return rc;
	}
	if (v[K_QUERY] && (rc = query(c, v[K_QUERY])))
		return rc;
	if (v[K_HEADERS] && (rc = headers(c, v[K_HEADERS])))
		return rc;
	if (v[K_BODY] && (rc = body(c, v[K_BODY])))
		return rc;
	m->id_max = 1000000;
	if (v[K_IDMAX] && (rc = count(c, v[K_IDMAX], "id_max", 1, MIX_ID_MAX, &m->id_max)))
		return rc;
	return 0;
}

static struct table_mix *mix_new(const char *source)
{
	struct table_mix *m = calloc(1, sizeof *m);
	if (!m)
		return NULL;
	m->arena = calloc(1, sizeof *m->arena);
	if (!m->arena || !(m->source = ta_strndup(m->arena, source, strlen(source)))) {
		table_mix_free(m);
		return NULL;
	}
	return m;
}

void table_mix_free(struct table_mix *m)
{
	if (!m)
		return;
	ta_free(m->arena);
	free(m);
}

int table_mix_from_yaml(yaml_document_t *doc, yaml_node_t *n, const char *source,
                        struct table_mix **out, char *err, size_t cap)
{
	*out = NULL;
	if (err && cap)
		err[0] = '\0';
	if (!source)
		source = "(mix)";
	struct table_mix *m = mix_new(source);
	if (!m)
		return tb_err(err, cap, -ENOMEM, "%s: out of memory", source);
	struct pctx c = {.y = {.doc = doc, .src = m->source, .err = err, .cap = cap}, .m = m};
	int rc = !n ? fail(&c, PACER_EPARSE, NULL, NULL, "empty spec") : yaml_check_unique(&c.y, n);
	if (rc == 0)
		rc = spec(&c, n);
	if (rc) {
		table_mix_free(m);
		return rc;
	}
	*out = m;
	return 0;
}

int table_mix_parse(const char *text_in, size_t len, const char *source, struct table_mix **out,
                    char *err, size_t cap)
{
	*out = NULL;
	if (!source)
		source = "(mix)";
	if (len > MIX_FILE_CAP)
		return tb_err(err, cap, PACER_ETOOBIG, "%s: over the limit of %u bytes", source,
		              MIX_FILE_CAP);
	yaml_parser_t parser;
	yaml_document_t doc;
	if (!yaml_parser_initialize(&parser))
		return tb_err(err, cap, -ENOMEM, "%s: out of memory", source);
	yaml_parser_set_input_string(&parser, (const unsigned char *)text_in, len);
	if (!yaml_parser_load(&parser, &doc)) {
		int rc = tb_err(err, cap, PACER_EPARSE, "%s:%u: invalid YAML: %s%s%s", source,
		                (unsigned)parser.problem_mark.line + 1,
		                parser.problem ? parser.problem : "syntax error", parser.context ? " " : "",
		                parser.context ? parser.context : "");
		yaml_parser_delete(&parser);
		return rc;
	}
	yaml_node_t *root = yaml_document_get_root_node(&doc);
	int rc = table_mix_from_yaml(&doc, root, source, out, err, cap);
	if (rc == 0) {
		yaml_document_t doc2;
		if (yaml_parser_load(&parser, &doc2)) {
			yaml_node_t *r2 = yaml_document_get_root_node(&doc2);
			if (r2) {
				rc = tb_err(err, cap, PACER_EPARSE, "%s:%u: expected a single YAML document", source,
				            yaml_node_line(r2));
				table_mix_free(*out);
				*out = NULL;
			}
			yaml_document_delete(&doc2);
		}
	}
	yaml_document_delete(&doc);
	yaml_parser_delete(&parser);
	return rc;
}

int table_mix_load(const char *path, struct table_mix **out, char *err, size_t cap)
{
	*out = NULL;
	char *text_in = NULL;
	size_t len = 0;
	int rc = tb_read_file(path, MIX_FILE_CAP, &text_in, &len, err, cap);
	if (rc)
		return rc;
	rc = table_mix_parse(text_in, len, file_shown(path), out, err, cap);
	free(text_in);
	return rc;
}
