/* Plan files: YAML (through libyaml's document API) → struct target_plan.
 * Every error names the file, the line and the key path, and says what was
 * expected. The schema is in docs/serve.md. This file reads the document,
 * the plan and its routes; the values inside a route (latency, bodies,
 * headers, status mixes, kv, misbehaviour) are plan_yaml_values.c. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <yaml.h>

#include "http/h1req.h"
#include "target/plan.h"
#include "target/plan_yaml_int.h"
#include "util/err.h"
#include "util/file.h"
#include "util/time_units.h"

/* ---- routes --------------------------------------------------------- */

static int check_no_body(struct plan_yaml *c, const yaml_node_t *at, const char *where, int status,
                         const struct target_body *b)
{
	if ((status == 204 || status == 304) && (b->len || b->kv))
		return fail(c, PACER_ERANGE, at, where, "expected no body with status %d", status);
	return 0;
}

static int get_answer(struct plan_yaml *c, const yaml_node_t *n, const char *where, struct target_answer *a)
{
	static const char *const keys[] = {"status", "body", "body_size", "headers", NULL};
	yaml_node_t *f[4];
	char w[WHERE_CAP];
	int rc;
	if ((rc = fields(c, n, where, "the no-fill answer", keys, f)) < 0)
		return rc;
	if (f[0]) {
		sub(w, where, "status");
		if ((rc = pyaml_status(c, f[0], w, &a->status)) < 0)
			return rc;
	}
	if ((rc = pyaml_body(c, f[1], f[2], where, &a->body)) < 0)
		return rc;
	if (f[3]) {
		sub(w, where, "headers");
		if ((rc = pyaml_headers(c, f[3], w, &a->headers, &a->n_headers)) < 0)
			return rc;
		a->headers_set = true;
	}
	return check_no_body(c, f[0] ? f[0] : n, where, a->status, &a->body);
}

static int get_route(struct plan_yaml *c, const yaml_node_t *n, const char *where, struct target_route *rt)
{
	static const char *const keys[] = {"method", "path",    "prefix", "latency",       "work",
	                                   "status", "fill",    "body",   "body_size",     "headers",
	                                   "nofill", "server_timing",     "kv", "misbehave", NULL};
	enum {
		K_METHOD, K_PATH, K_PREFIX, K_LAT, K_WORK, K_STATUS, K_FILL, K_BODY, K_BSIZE, K_HDRS,
		K_NOFILL, K_ST, K_KV, K_MIS, K_N
	};
	yaml_node_t *f[K_N];
	char w[WHERE_CAP];
	int rc;
	if ((rc = fields(c, n, where, "a route", keys, f)) < 0)
		return rc;
	rt->line = yaml_node_line(n);
	rt->fill = 1;
	rt->n_status = 1;
	rt->status[0] = 200;
	rt->status_p[0] = 1;

	if (f[K_METHOD]) {
		sub(w, where, "method");
		const char *m;
		if ((rc = get_str(c, f[K_METHOD], w, "a method", &m)) < 0)
			return rc;
		bool tok = *m && strlen(m) <= H1REQ_METHOD_CAP;
		for (const char *q = m; *q; q++)
			tok = tok && h1req_is_tchar((unsigned char)*q);
		if (!tok)
			return fail(c, PACER_EPARSE, f[K_METHOD], w, "expected a method such as GET or POST, or '*'");
		rt->method = strcmp(m, "*") ? m : NULL;
	}
	if (!f[K_PATH])
		return fail(c, PACER_EPARSE, n, where, "expected 'path: /something'");
	sub(w, where, "path");
	if ((rc = get_str(c, f[K_PATH], w, "a path", &rt->path)) < 0)
		return rc;
	rt->path_len = strlen(rt->path);
	bool pok = rt->path[0] == '/' && rt->path_len <= H1REQ_LINE_CAP;
	for (const char *q = rt->path; *q && pok; q++)
		pok = (unsigned char)*q > 0x20 && (unsigned char)*q < 0x7f && *q != '?' && *q != '#';
	if (!pok)
		return fail(c, PACER_EPARSE, f[K_PATH], w,
		            "expected a path starting with '/', visible ASCII, without '?' or '#'");
	if (f[K_PREFIX]) {
		sub(w, where, "prefix");
		if ((rc = yaml_get_bool(&c->y, f[K_PREFIX], w, &rt->prefix)) < 0)
			return rc;
	}
	if (f[K_LAT]) {
		sub(w, where, "latency");
		if ((rc = pyaml_latency(c, f[K_LAT], w, &rt->latency)) < 0)
			return rc;
	}
	if (f[K_WORK]) {
		sub(w, where, "work");
		if ((rc = yaml_get_duration(&c->y, f[K_WORK], w, &rt->work_ns)) < 0)
			return rc;
		if (rt->work_ns > TARGET_WORK_CAP_NS)
			return fail(c, PACER_ERANGE, f[K_WORK], w, "expected at most 1s of CPU work per request");
	}
	if (f[K_STATUS]) {
		sub(w, where, "status");
		if ((rc = pyaml_status_mix(c, f[K_STATUS], w, rt)) < 0)
			return rc;
	}
	if (f[K_FILL]) {
		sub(w, where, "fill");
		if ((rc = yaml_get_prob(&c->y, f[K_FILL], w, &rt->fill)) < 0)
			return rc;
	}
	if (f[K_KV]) {
		sub(w, where, "kv");
		if (f[K_BODY] || f[K_BSIZE])
			return fail(c, PACER_EPARSE, f[K_KV], where,
			            "expected either 'kv' or a body ('body'/'body_size'), not both");
		if ((rc = pyaml_kv(c, f[K_KV], w, &rt->kv)) < 0)
			return rc;
		rt->filled.body = (struct target_body){.data = "", .len = 0, .kv = true};
	} else if ((rc = pyaml_body(c, f[K_BODY], f[K_BSIZE], where, &rt->filled.body)) < 0) {
		return rc;
	}
	if (f[K_HDRS]) {
		sub(w, where, "headers");
		if ((rc = pyaml_headers(c, f[K_HDRS], w, &rt->filled.headers, &rt->filled.n_headers)) < 0)
			return rc;
	}
	if (f[K_NOFILL]) {
		sub(w, where, "nofill");
		if ((rc = get_answer(c, f[K_NOFILL], w, &rt->nofill)) < 0)
			return rc;
	} else {
		rt->nofill.status = 204;
		rt->nofill.body = (struct target_body){.data = "", .len = 0};
	}
	/* a 204 drawn from the status mix answers with the filled body */
	for (size_t i = 0; i < rt->n_status; i++) {
		sub(w, where, "status");
		if (rt->fill > 0 && rt->status_p[i] > 0 &&
		    (rc = check_no_body(c, f[K_STATUS] ? f[K_STATUS] : n, w, rt->status[i], &rt->filled.body)) < 0)
			return rc;
		if (rt->fill < 1 && rt->status_p[i] > 0 && !rt->nofill.status &&
		    (rc = check_no_body(c, f[K_NOFILL], w, rt->status[i], &rt->nofill.body)) < 0)
			return rc;
	}
	rt->server_timing = rt->latency.kind != TARGET_DIST_NONE || rt->work_ns > 0;
	if (f[K_ST]) {
		sub(w, where, "server_timing");
		if ((rc = yaml_get_bool(&c->y, f[K_ST], w, &rt->server_timing)) < 0)
			return rc;
	}
	if (f[K_MIS]) {
		sub(w, where, "misbehave");
		if ((rc = pyaml_misbehave(c, f[K_MIS], w, &rt->mis)) < 0)
			return rc;
	}
	return 0;
}

/* ---- plan ----------------------------------------------------------- */

static int get_plan(struct plan_yaml *c, const yaml_node_t *root, struct target_plan *p)
{
	static const char *const keys[] = {"name", "description", "seed", "timeouts", "max_connections",
	                                   "routes", NULL};
	enum { K_NAME, K_DESC, K_SEED, K_TO, K_MAXC, K_ROUTES, K_N };
	yaml_node_t *f[K_N];
	int rc;
	if ((rc = fields(c, root, "", "a plan", keys, f)) < 0)
		return rc;
	if (f[K_NAME] && (rc = get_str(c, f[K_NAME], "name", "a plan name", &p->name)) < 0)
		return rc;
	if (f[K_DESC] && (rc = get_str(c, f[K_DESC], "description", "a description", &p->description)) < 0)
		return rc;
	if (f[K_SEED] && (rc = yaml_get_count(&c->y, f[K_SEED], "seed", 0, UINT64_MAX, &p->seed)) < 0)
		return rc;
	if (f[K_TO]) {
		static const char *const tk[] = {"request", "idle", NULL};
		yaml_node_t *g[2];
		if ((rc = fields(c, f[K_TO], "timeouts", "timeouts", tk, g)) < 0)
			return rc;
		uint64_t *dst[2] = {&p->request_timeout_ns, &p->idle_timeout_ns};
		for (int i = 0; i < 2; i++) {
			if (!g[i])
				continue;
			char w[WHERE_CAP];
			sub(w, "timeouts", tk[i]);
			if ((rc = yaml_get_duration(&c->y, g[i], w, dst[i])) < 0)
				return rc;
			if (*dst[i] < NS_PER_MS || *dst[i] > 3600 * NS_PER_S)
				return fail(c, PACER_ERANGE, g[i], w, "expected a timeout from 1ms to 1h");
		}
	}
	if (f[K_MAXC]) {
		uint64_t v;
		if ((rc = yaml_get_count(&c->y, f[K_MAXC], "max_connections", 1, 1000000, &v)) < 0)
			return rc;
		p->max_connections = (uint32_t)v;
	}
	if (!f[K_ROUTES])
		return fail(c, PACER_EPARSE, root, "", "expected 'routes:' with a list of routes");
	const yaml_node_t *rs = f[K_ROUTES];
	if (rs->type != YAML_SEQUENCE_NODE)
		return fail(c, PACER_EPARSE, rs, "routes", "expected a list of routes, got %s", yaml_kind_name(rs));
	size_t n = (size_t)(rs->data.sequence.items.top - rs->data.sequence.items.start);
	if (n == 0 || n > TARGET_MAX_ROUTES)
		return fail(c, PACER_ERANGE, rs, "routes", "expected 1 to %d routes", TARGET_MAX_ROUTES);
	p->routes = plan_alloc(c->arena, sizeof *p->routes * n);
	if (!p->routes)
		return oom(c);
	for (size_t i = 0; i < n; i++) {
		char w[WHERE_CAP];
		snprintf(w, sizeof w, "routes[%zu]", i);
		if ((rc = get_route(c, node(c, rs->data.sequence.items.start[i]), w, &p->routes[i])) < 0)
			return rc;
	}
	p->n_routes = n;
	return 0;
}

static const char *base_name(struct plan_arena **a, const char *src)
{
	const char *b = strrchr(src, '/');
	b = b ? b + 1 : src;
	if (!strncmp(b, "builtin:", 8))
		b += 8;
	size_t n = strlen(b);
	if (n > 5 && !strcmp(b + n - 5, ".yaml"))
		n -= 5;
	else if (n > 4 && !strcmp(b + n - 4, ".yml"))
		n -= 4;
	return plan_strndup(a, b, n);
}

int target_plan_parse(const char *text_in, size_t len, const char *source, struct target_plan **out,
                      char *err, size_t errcap)
{
	char dummy[1];
	if (!err || !errcap) {
		err = dummy;
		errcap = sizeof dummy;
	}
	*out = NULL;
	err[0] = '\0';
	struct target_plan *p = calloc(1, sizeof *p);
	if (!p)
		return -ENOMEM;
	struct plan_arena **arena = (struct plan_arena **)&p->arena;
	struct plan_yaml c = {.y = {.src = source, .err = err, .cap = errcap}, .arena = arena};
	if (len > TARGET_PLAN_FILE_CAP) {
		target_plan_free(p);
		return fail(&c, PACER_ETOOBIG, NULL, NULL, "expected a plan file of at most 1MiB");
	}
	p->seed = 1;
	p->request_timeout_ns = 10 * NS_PER_S;
	p->idle_timeout_ns = 60 * NS_PER_S;
	p->max_connections = 10000;
	p->source = plan_strndup(arena, source, strlen(source));

	yaml_parser_t parser;
	yaml_document_t doc;
	int rc = 0;
	if (!yaml_parser_initialize(&parser)) {
		target_plan_free(p);
		return -ENOMEM;
	}
	yaml_parser_set_input_string(&parser, (const unsigned char *)text_in, len);
	if (!yaml_parser_load(&parser, &doc)) {
		unsigned line = (unsigned)parser.problem_mark.line + 1;
		snprintf(err, errcap, "%s:%u: invalid YAML: %s%s%s", source, line,
		         parser.problem ? parser.problem : "syntax error", parser.context ? " " : "",
		         parser.context ? parser.context : "");
		yaml_parser_delete(&parser);
		target_plan_free(p);
		return PACER_EPARSE;
	}
	c.y.doc = &doc;
	yaml_node_t *root = yaml_document_get_root_node(&doc);
	if (!root) {
		rc = fail(&c, PACER_EPARSE, NULL, NULL, "empty plan: expected a mapping with 'routes:'");
	} else {
		rc = yaml_check_unique(&c.y, root);
		if (rc == 0)
			rc = get_plan(&c, root, p);
		if (rc == 0) {
			/* a second document is a mistake worth reporting */
			yaml_document_t doc2;
			if (yaml_parser_load(&parser, &doc2)) {
				yaml_node_t *r2 = yaml_document_get_root_node(&doc2);
				if (r2)
					rc = fail(&c, PACER_EPARSE, r2, NULL, "expected a single YAML document");
				yaml_document_delete(&doc2);
			}
		}
	}
	yaml_document_delete(&doc);
	yaml_parser_delete(&parser);
	if (rc == 0 && !p->name)
		p->name = base_name(arena, source);
	if (rc == 0 && !p->description)
		p->description = "";
	if (rc == 0 && (!p->name || !p->source))
		rc = oom(&c);
	if (rc == 0 && (rc = plan_compile(p)) < 0)
		rc = fail(&c, rc, NULL, NULL, "cannot compile the plan: %s",
			  rc == PACER_ETOOBIG ? "its precomputed responses would exceed 256 MiB (each "
						"status and fill variant of a route holds its own copy of "
						"the body): use smaller bodies or fewer variants"
					      : err_name(rc));
	if (rc < 0) {
		target_plan_free(p);
		return rc;
	}
	*out = p;
	return 0;
}

int target_plan_load(const char *path, struct target_plan **out, char *err, size_t errcap)
{
	char dummy[1];
	if (!err || !errcap) {
		err = dummy;
		errcap = sizeof dummy;
	}
	*out = NULL;
	err[0] = '\0';
	/* a folder or a FIFO would read as an error or block: say what it is */
	struct stat st;
	if (stat(path, &st) < 0) {
		int e = errno;
		snprintf(err, errcap, "%s: cannot open: %s", path, strerror(e));
		return -e;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(err, errcap, "%s: expected a regular file", path);
		return PACER_EPARSE;
	}
	char *buf;
	size_t len;
	int rc = file_read_all(path, TARGET_PLAN_FILE_CAP, &buf, &len);
	if (rc == PACER_ETOOBIG) {
		snprintf(err, errcap, "%s: expected a plan file of at most 1MiB", path);
		return rc;
	}
	if (rc < 0) {
		snprintf(err, errcap, "%s: cannot read: %s", path, strerror(-rc));
		return rc;
	}
	rc = target_plan_parse(buf, len, path, out, err, errcap);
	free(buf);
	return rc;
}
