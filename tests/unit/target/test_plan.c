/* Tests of target plans (src/target/plan.c, plan_yaml.c, builtin.c):
 *  - valid plan files parse into the expected routes;
 *  - each malformed or impossible plan is refused with "FILE:LINE: ..." and
 *    the expected explanation;
 *  - the built-ins load, and examples/plans/NAME.yaml equals each built-in;
 *  - the compiled variants give the configured status mix and fill
 *    proportions (binomial tolerance) and route matching works. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "target/plan.h"
#include "util/clock.h"
#include "util/err.h"
#include "util/rng.h"

static struct target_plan *parse_ok(const char *yaml)
{
	struct target_plan *p = NULL;
	char err[512];
	int rc = target_plan_parse(yaml, strlen(yaml), "t.yaml", &p, err, sizeof err);
	if (rc != 0)
		fail_msg("unexpected error %d: %s\n--- plan:\n%s", rc, err, yaml);
	return p;
}

/* ---- valid plans ---------------------------------------------------- */

static void test_minimal(void **state)
{
	(void)state;
	struct target_plan *p = parse_ok("routes:\n  - path: /\n");
	assert_string_equal(p->name, "t");
	assert_int_equal(p->seed, 1);
	assert_int_equal(p->request_timeout_ns, 10 * NS_PER_S);
	assert_int_equal(p->idle_timeout_ns, 60 * NS_PER_S);
	assert_int_equal(p->max_connections, 10000);
	assert_int_equal(p->n_routes, 1);
	const struct target_route *rt = &p->routes[0];
	assert_null(rt->method);
	assert_string_equal(rt->path, "/");
	assert_false(rt->prefix);
	assert_int_equal(rt->latency.kind, TARGET_DIST_NONE);
	assert_false(rt->server_timing);
	assert_true(rt->simple);
	assert_int_equal(rt->n_resps, 1);
	assert_int_equal(rt->resps[0].status, 200);
	const char *want = "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n";
	assert_int_equal(rt->resps[0].wire_len, strlen(want));
	assert_memory_equal(rt->resps[0].wire, want, strlen(want));
	target_plan_free(p);
}

static void test_full_route(void **state)
{
	(void)state;
	struct target_plan *p = parse_ok(
		"name: full\n"
		"description: every key\n"
		"seed: 99\n"
		"timeouts: {request: 2s, idle: 30s}\n"
		"max_connections: 500\n"
		"routes:\n"
		"  - method: POST\n"
		"    path: /api/\n"
		"    prefix: true\n"
		"    latency: {dist: lognormal, p50: 2ms, p99: 20ms, cap: 1s}\n"
		"    work: 50us\n"
		"    status: {200: 0.9, 503: 0.1}\n"
		"    fill: 0.25\n"
		"    headers: {Content-Type: application/json, X-Test: yes}\n"
		"    body: '{\"id\":\"{{id}}\",\"n\":{{seq}},\"q\":\"{{query:q}}\"}'\n"
		"    nofill: {status: 204}\n"
		"    server_timing: false\n"
		"    misbehave:\n"
		"      stall_every: 10s\n"
		"      stall_for: 200ms\n"
		"      close_after: 100\n"
		"      garbage: 0.01\n"
		"      slow_body: {bytes: 10, every: 5ms}\n"
		"  - path: /fixed\n"
		"    latency: 3ms\n"
		"  - path: /u\n"
		"    latency: {dist: uniform, min: 1ms, max: 2ms}\n"
		"    body_size: 10k\n"
		"  - path: /e\n"
		"    latency: {dist: exponential, mean: 500us}\n"
		"    kv: {param: k, prefix: item, generate: 10, value_size: 8, table: {b: two, a: one}}\n");
	assert_string_equal(p->name, "full");
	assert_string_equal(p->description, "every key");
	assert_int_equal(p->seed, 99);
	assert_int_equal(p->request_timeout_ns, 2 * NS_PER_S);
	assert_int_equal(p->idle_timeout_ns, 30 * NS_PER_S);
	assert_int_equal(p->max_connections, 500);
	assert_int_equal(p->n_routes, 4);

	const struct target_route *rt = &p->routes[0];
	assert_string_equal(rt->method, "POST");
	assert_string_equal(rt->path, "/api/");
	assert_true(rt->prefix);
	assert_int_equal(rt->line, 7);
	assert_int_equal(rt->latency.kind, TARGET_DIST_LOGNORMAL);
	assert_int_equal(rt->latency.a_ns, 2 * NS_PER_MS);
	assert_int_equal(rt->latency.b_ns, 20 * NS_PER_MS);
	assert_int_equal(rt->latency.cap_ns, NS_PER_S);
	assert_int_equal(rt->work_ns, 50 * NS_PER_US);
	assert_int_equal(rt->n_status, 2);
	assert_int_equal(rt->status[1], 503);
	assert_true(fabs(rt->status_p[1] - 0.1) < 1e-12);
	assert_true(fabs(rt->fill - 0.25) < 1e-12);
	assert_int_equal(rt->filled.n_headers, 2);
	assert_string_equal(rt->filled.headers[1].name, "X-Test");
	assert_string_equal(rt->filled.headers[1].value, "yes");
	assert_non_null(rt->filled.body.segs);
	assert_int_equal(rt->nofill.status, 204);
	assert_false(rt->server_timing);
	assert_int_equal(rt->mis.stall_every_ns, 10 * NS_PER_S);
	assert_int_equal(rt->mis.stall_for_ns, 200 * NS_PER_MS);
	assert_int_equal(rt->mis.close_after, 100);
	assert_true(fabs(rt->mis.garbage - 0.01) < 1e-12);
	assert_int_equal(rt->mis.slow_bytes, 10);
	assert_int_equal(rt->mis.slow_every_ns, 5 * NS_PER_MS);
	assert_false(rt->simple);
	/* 200 filled, 200 no-fill (as 204), 503 */
	assert_int_equal(rt->n_resps, 3);
	assert_int_equal(rt->resps[0].status, 200);
	assert_int_equal(rt->resps[0].kind, TARGET_RESP_FILLED);
	assert_null(rt->resps[0].wire); /* a template: rendered per request */
	assert_int_equal(rt->resps[1].status, 204);
	assert_int_equal(rt->resps[1].kind, TARGET_RESP_NOFILL);
	assert_true(rt->resps[1].no_body_allowed);
	assert_non_null(strstr(rt->resps[1].wire, "X-Test: yes\r\n")); /* route headers inherited */
	assert_null(strstr(rt->resps[1].wire, "Content-Length"));
	assert_int_equal(rt->resps[2].status, 503);
	assert_int_equal(rt->resps[2].kind, TARGET_RESP_ERROR);
	assert_non_null(strstr(rt->resps[2].wire, "503 Service Unavailable\n"));

	rt = &p->routes[1];
	assert_int_equal(rt->latency.kind, TARGET_DIST_FIXED);
	assert_int_equal(rt->latency.a_ns, 3 * NS_PER_MS);
	assert_true(rt->server_timing); /* on by default with latency */
	rt = &p->routes[2];
	assert_int_equal(rt->latency.kind, TARGET_DIST_UNIFORM);
	assert_int_equal(rt->filled.body.len, 10240);
	assert_int_equal(rt->resps[0].wire_len - rt->resps[0].wire_body_off, 10240);
	assert_non_null(strstr(rt->resps[0].wire, "Content-Length: 10240\r\n"));
	rt = &p->routes[3];
	assert_int_equal(rt->latency.kind, TARGET_DIST_EXPONENTIAL);
	assert_non_null(rt->kv);
	assert_string_equal(rt->kv->param, "k");
	assert_string_equal(rt->kv->prefix, "item");
	assert_int_equal(rt->kv->generate, 10);
	assert_int_equal(rt->kv->n_table, 2);
	assert_string_equal(rt->kv->table[0].name, "a"); /* sorted */
	assert_string_equal(rt->kv->table[1].value, "two");
	target_plan_free(p);
}

/* The YAML 1.2 core schema's spellings of true and false, quoted or not. */
static void test_booleans(void **state)
{
	(void)state;
	static const char *const t[] = {"true", "True", "TRUE", "'true'"};
	static const char *const f[] = {"false", "False", "FALSE", "\"FALSE\""};
	for (size_t i = 0; i < 4; i++) {
		char yaml[128];
		snprintf(yaml, sizeof yaml,
		         "routes:\n  - path: /\n    prefix: %s\n    latency: 1ms\n    server_timing: %s\n",
		         t[i], f[i]);
		struct target_plan *p = parse_ok(yaml);
		assert_true(p->routes[0].prefix);
		assert_false(p->routes[0].server_timing);
		target_plan_free(p);
		snprintf(yaml, sizeof yaml,
		         "routes:\n  - path: /\n    prefix: %s\n    server_timing: %s\n", f[i], t[i]);
		p = parse_ok(yaml);
		assert_false(p->routes[0].prefix);
		assert_true(p->routes[0].server_timing);
		target_plan_free(p);
	}
}

static void test_template_segments(void **state)
{
	(void)state;
	struct target_plan *p = parse_ok("routes:\n  - path: /\n    body: 'a{{id}}b{{seq}}{{query:x_y}}c'\n");
	const struct target_body *b = &p->routes[0].filled.body;
	assert_int_equal(b->n_segs, 6);
	assert_int_equal(b->segs[0].kind, TARGET_SEG_TEXT);
	assert_int_equal(b->segs[1].kind, TARGET_SEG_ID);
	assert_int_equal(b->segs[3].kind, TARGET_SEG_SEQ);
	assert_int_equal(b->segs[4].kind, TARGET_SEG_QUERY);
	assert_int_equal(b->segs[4].len, 3);
	assert_memory_equal(b->segs[4].text, "x_y", 3);
	assert_int_equal(b->segs[5].kind, TARGET_SEG_TEXT);
	target_plan_free(p);
}

/* ---- refused plans -------------------------------------------------- */

struct bad {
	const char *yaml;
	const char *want; /* the whole message */
};

static const struct bad bads[] = {
	{"", "t.yaml: empty plan: expected a mapping with 'routes:'"},
	{"routes: [\n", "t.yaml:2: invalid YAML: did not find expected node content while parsing a flow node"},
	{"- a\n- b\n", "t.yaml:1: expected a plan (a mapping), got a list"},
	{"name: x\n", "t.yaml:1: expected 'routes:' with a list of routes"},
	{"routes: []\n", "t.yaml:1: routes: expected 1 to 64 routes"},
	{"routes: {a: b}\n", "t.yaml:1: routes: expected a list of routes, got a mapping"},
	{"routes:\n  - path: /\nroutez: 1\n",
	 "t.yaml:3: unknown key 'routez' (expected one of: name, description, seed, timeouts, "
	 "max_connections, routes)"},
	{"routes:\n  - path: /\n    laytency: 1ms\n",
	 "t.yaml:3: routes[0]: unknown key 'laytency' (expected one of: method, path, prefix, latency, "
	 "work, status, fill, body, body_size, headers, nofill, server_timing, kv, misbehave)"},
	/* a key twice in one mapping, anywhere: the first such key in the text */
	{"routes:\n  - path: /\n    path: /b\n", "t.yaml:3: duplicate key 'path' (first at line 2)"},
	{"routes:\n  - path: /\n    headers: {X-A: 1, X-A: 2}\n",
	 "t.yaml:3: duplicate key 'X-A' (first at line 3)"},
	{"routes:\n  - path: /\n    kv: {table: {a: 1, b: 2, a: 3}}\n",
	 "t.yaml:3: duplicate key 'a' (first at line 3)"},
	{"routes:\n  - path: /\n    prefix: true\n    prefix: false\nseed: 1\nseed: 2\n",
	 "t.yaml:4: duplicate key 'prefix' (first at line 3)"},
	{"seed: 1\nroutes:\n  - path: /\n    laytency: 1ms\nseed: 2\n",
	 "t.yaml:5: duplicate key 'seed' (first at line 1)"},
	{"routes:\n  - method: GET\n", "t.yaml:2: routes[0]: expected 'path: /something'"},
	{"routes:\n  - path: nope\n",
	 "t.yaml:2: routes[0].path: expected a path starting with '/', visible ASCII, without '?' or '#'"},
	{"routes:\n  - path: /a?b\n",
	 "t.yaml:2: routes[0].path: expected a path starting with '/', visible ASCII, without '?' or '#'"},
	{"routes:\n  - path: /\n    method: 'G T'\n",
	 "t.yaml:3: routes[0].method: expected a method such as GET or POST, or '*'"},
	{"routes:\n  - path: /\n    latency: -5ms\n",
	 "t.yaml:3: routes[0].latency: expected a duration such as 250us, 5ms or 1.5s (not negative), got '-5ms'"},
	{"routes:\n  - path: /\n    latency: {dist: lognormal, p50: 10ms, p99: 5ms}\n",
	 "t.yaml:3: routes[0].latency: expected p99 >= p50"},
	{"routes:\n  - path: /\n    latency:\n      dist: lognormal\n      p50: 0ms\n      p99: 5ms\n",
	 "t.yaml:5: routes[0].latency: expected p50 > 0"},
	{"routes:\n  - path: /\n    latency: {dist: uniform, min: 3ms, max: 2ms}\n",
	 "t.yaml:3: routes[0].latency: expected max >= min"},
	{"routes:\n  - path: /\n    latency: {dist: gauss, p50: 1ms}\n",
	 "t.yaml:3: routes[0].latency.dist: expected fixed, uniform, exponential or lognormal, got 'gauss'"},
	{"routes:\n  - path: /\n    latency: {dist: lognormal, p50: 1ms}\n",
	 "t.yaml:3: routes[0].latency: a lognormal latency needs 'p99' (expected p50, p99, cap)"},
	{"routes:\n  - path: /\n    latency: {dist: fixed, value: 1ms, mean: 2ms}\n",
	 "t.yaml:3: routes[0].latency: 'mean' does not apply to a fixed latency (expected value)"},
	{"routes:\n  - path: /\n    latency: {p50: 1ms}\n",
	 "t.yaml:3: routes[0].latency: expected 'dist: fixed|uniform|exponential|lognormal'"},
	{"routes:\n  - path: /\n    latency: 2h\n", "t.yaml:3: routes[0].latency: expected a latency of at most 1h"},
	{"routes:\n  - path: /\n    work: 2s\n", "t.yaml:3: routes[0].work: expected at most 1s of CPU work per request"},
	{"routes:\n  - path: /\n    fill: 1.5\n", "t.yaml:3: routes[0].fill: expected a probability between 0 and 1, got 1.5"},
	{"routes:\n  - path: /\n    fill: -0.1\n", "t.yaml:3: routes[0].fill: expected a probability between 0 and 1, got -0.1"},
	{"routes:\n  - path: /\n    fill: lots\n", "t.yaml:3: routes[0].fill: expected a probability between 0 and 1, got 'lots'"},
	{"routes:\n  - path: /\n    status: {200: 0.5, 503: 0.4}\n",
	 "t.yaml:3: routes[0].status: expected probabilities summing to 1, they sum to 0.9"},
	{"routes:\n  - path: /\n    status: {200: 1.2}\n",
	 "t.yaml:3: routes[0].status.200: expected a probability between 0 and 1, got 1.2"},
	{"routes:\n  - path: /\n    status: 99\n", "t.yaml:3: routes[0].status: expected a status code from 200 to 599, got '99'"},
	{"routes:\n  - path: /\n    status: {200: 0.5, 0200: 0.5}\n", "t.yaml:3: routes[0].status: duplicate status 200"},
	{"routes:\n  - path: /\n    status: 204\n    body: x\n", "t.yaml:3: routes[0].status: expected no body with status 204"},
	{"routes:\n  - path: /\n    status: {200: 0.5, 304: 0.5}\n    body: x\n",
	 "t.yaml:3: routes[0].status: expected no body with status 304"},
	{"routes:\n  - path: /\n    body: x\n    body_size: 10\n",
	 "t.yaml:4: routes[0]: expected either 'body' or 'body_size', not both"},
	{"routes:\n  - path: /\n    body_size: 17MiB\n",
	 "t.yaml:3: routes[0].body_size: expected a size such as 512, 4k or 1MiB, at most 16777216 bytes, got '17MiB'"},
	{"routes:\n  - path: /\n    body: 'a {{nope}}'\n",
	 "t.yaml:3: routes[0].body: unknown placeholder '{{nope}}' (expected {{id}}, {{seq}} or {{query:NAME}})"},
	{"routes:\n  - path: /\n    body: 'a {{id'\n", "t.yaml:3: routes[0].body: expected '}}' closing a placeholder"},
	{"routes:\n  - path: /\n    headers: {Content-Length: 5}\n",
	 "t.yaml:3: routes[0].headers: 'Content-Length' is set by the server; expected another header"},
	{"routes:\n  - path: /\n    headers: {'Bad Name': 5}\n",
	 "t.yaml:3: routes[0].headers: expected a header name (letters, digits, '-'), got 'Bad Name'"},
	{"routes:\n  - path: /\n    headers: [a, b]\n",
	 "t.yaml:3: routes[0].headers: expected a mapping of header names to values, got a list"},
	{"routes:\n  - path: /\n    nofill: {status: 204, body: x}\n",
	 "t.yaml:3: routes[0].nofill: expected no body with status 204"},
	{"routes:\n  - path: /\n    kv: {}\n    body: x\n",
	 "t.yaml:3: routes[0]: expected either 'kv' or a body ('body'/'body_size'), not both"},
	{"routes:\n  - path: /\n    kv: {value_size: 0}\n",
	 "t.yaml:3: routes[0].kv.value_size: expected a whole number from 1 to 1024, got '0'"},
	{"routes:\n  - path: /\n    misbehave: {stall_every: 1s}\n",
	 "t.yaml:3: routes[0].misbehave: expected both stall_every and stall_for, or neither"},
	{"routes:\n  - path: /\n    misbehave: {stall_every: 1s, stall_for: 2s}\n",
	 "t.yaml:3: routes[0].misbehave.stall_for: expected 0 < stall_for < stall_every"},
	{"routes:\n  - path: /\n    misbehave: {garbage: 2}\n",
	 "t.yaml:3: routes[0].misbehave.garbage: expected a probability between 0 and 1, got 2"},
	{"routes:\n  - path: /\n    misbehave: {close_after: 0}\n",
	 "t.yaml:3: routes[0].misbehave.close_after: expected a whole number from 1 to 4294967295, got '0'"},
	{"routes:\n  - path: /\n    misbehave: {slow_body: {bytes: 1}}\n",
	 "t.yaml:3: routes[0].misbehave.slow_body: expected both 'bytes' and 'every'"},
	{"routes:\n  - path: /\n    prefix: maybe\n", "t.yaml:3: routes[0].prefix: expected true or false, got 'maybe'"},
	/* booleans are YAML 1.2's */
	{"routes:\n  - path: /\n    prefix: yes\n",
	 "t.yaml:3: routes[0].prefix: expected true or false, got 'yes' (YAML 1.2 booleans: yes/no/on/off "
	 "are YAML 1.1's)"},
	{"routes:\n  - path: /\n    server_timing: Off\n",
	 "t.yaml:3: routes[0].server_timing: expected true or false, got 'Off' (YAML 1.2 booleans: "
	 "yes/no/on/off are YAML 1.1's)"},
	{"routes:\n  - path: /\n    prefix: tRUE\n", "t.yaml:3: routes[0].prefix: expected true or false, got 'tRUE'"},
	{"timeouts: {request: 0s}\nroutes:\n  - path: /\n", "t.yaml:1: timeouts.request: expected a timeout from 1ms to 1h"},
	{"seed: -1\nroutes:\n  - path: /\n", "t.yaml:1: seed: expected a whole number from 0 to 18446744073709551615, got '-1'"},
	{"routes:\n  - path: /\n---\nroutes:\n  - path: /\n", "t.yaml:4: expected a single YAML document"},
	{"routes:\n  - path: [a]\n", "t.yaml:2: routes[0].path: expected a path, got a list"},
};

static void test_refused(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof bads / sizeof bads[0]; i++) {
		struct target_plan *p = (struct target_plan *)1;
		char err[512];
		int rc = target_plan_parse(bads[i].yaml, strlen(bads[i].yaml), "t.yaml", &p, err, sizeof err);
		if (rc >= 0)
			fail_msg("accepted:\n%s", bads[i].yaml);
		assert_null(p);
		if (strcmp(err, bads[i].want) != 0)
			fail_msg("case %zu\n got: %s\nwant: %s", i, err, bads[i].want);
	}
}

static void test_load_file(void **state)
{
	(void)state;
	char path[] = "/tmp/pacer-plan-XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	const char *yaml = "routes:\n  - path: /\n    latency: {dist: lognormal, p50: 5ms, p99: 1ms}\n";
	assert_int_equal(write(fd, yaml, strlen(yaml)), (ssize_t)strlen(yaml));
	close(fd);
	struct target_plan *p = NULL;
	char err[512], want[600];
	assert_int_equal(target_plan_load(path, &p, err, sizeof err), PACER_ERANGE);
	snprintf(want, sizeof want, "%s:3: routes[0].latency: expected p99 >= p50", path);
	assert_string_equal(err, want);
	unlink(path);
	assert_true(target_plan_load(path, &p, err, sizeof err) < 0);
	assert_non_null(strstr(err, "cannot open"));
	assert_true(target_plan_load("/", &p, err, sizeof err) < 0);
}

/* ---- built-ins ------------------------------------------------------ */

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	static char buf[1 << 16];
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = '\0';
	return buf;
}

/* examples/plans/NAME.yaml, found from $PACER_SRCDIR, from this file's
 * compile-time path, or from the working directory. NULL if none. */
static const char *example(const char *name)
{
	char root[512], path[700];
	const char *env = getenv("PACER_SRCDIR");
	if (env) {
		snprintf(path, sizeof path, "%s/examples/plans/%s.yaml", env, name);
		return slurp(path);
	}
	snprintf(root, sizeof root, "%s", __FILE__); /* .../tests/unit/target/test_plan.c */
	for (int up = 0; up < 4; up++) {
		char *s = strrchr(root, '/');
		if (s)
			*s = '\0';
		else
			strcpy(root, ".");
	}
	snprintf(path, sizeof path, "%s/examples/plans/%s.yaml", root, name);
	const char *text = slurp(path);
	if (!text) {
		snprintf(path, sizeof path, "examples/plans/%s.yaml", name);
		text = slurp(path);
	}
	return text;
}

static void test_builtins(void **state)
{
	(void)state;
	size_t n;
	const struct target_builtin *b = target_plan_builtins(&n);
	assert_int_equal(n, 4);
	const char *names[] = {"hello", "vast_ortb_mix", "kv", "exec"};
	for (size_t i = 0; i < n; i++) {
		assert_string_equal(b[i].name, names[i]);
		struct target_plan *p = NULL;
		assert_int_equal(target_plan_builtin(b[i].name, &p), 0);
		assert_string_equal(p->name, b[i].name);
		assert_string_equal(p->description, b[i].summary);
		char src[64];
		snprintf(src, sizeof src, "builtin:%s", b[i].name);
		assert_string_equal(p->source, src);
		target_plan_free(p);
	}
	struct target_plan *p = (struct target_plan *)1;
	assert_int_equal(target_plan_builtin("nope", &p), PACER_EPARSE);
	assert_null(p);

	/* hello is the fast path */
	assert_int_equal(target_plan_builtin("hello", &p), 0);
	assert_true(p->routes[0].simple);
	target_plan_free(p);
	/* vast_ortb_mix: 55 % fill on both routes, errors 0.5 % */
	assert_int_equal(target_plan_builtin("vast_ortb_mix", &p), 0);
	assert_int_equal(p->n_routes, 2);
	for (int r = 0; r < 2; r++) {
		assert_true(fabs(p->routes[r].fill - 0.55) < 1e-12);
		assert_true(p->routes[r].server_timing);
		assert_int_equal(p->routes[r].n_resps, 3);
	}
	assert_int_equal(p->routes[1].resps[1].status, 204);
	target_plan_free(p);
}

/* examples/plans holds the built-ins verbatim (skipped when the source tree
 * cannot be found: set PACER_SRCDIR). */
static void test_examples_match_builtins(void **state)
{
	(void)state;
	size_t n;
	const struct target_builtin *b = target_plan_builtins(&n);
	if (!example(b[0].name)) {
		print_message("examples/plans not found; set PACER_SRCDIR to the source tree\n");
		skip();
	}
	for (size_t i = 0; i < n; i++) {
		const char *text = example(b[i].name);
		if (!text)
			fail_msg("cannot read examples/plans/%s.yaml", b[i].name);
		if (strcmp(text, b[i].yaml) != 0)
			fail_msg("examples/plans/%s.yaml differs from the built-in", b[i].name);
	}
}

/* ---- proportions ---------------------------------------------------- */

/* |observed - expected| within 5 standard deviations of a binomial count. */
static void binomial(size_t got, size_t n, double p, const char *what)
{
	double mean = n * p, sd = sqrt(n * p * (1 - p));
	if (fabs((double)got - mean) > 5 * sd + 1e-9)
		fail_msg("%s: %zu of %zu, want %.1f ± %.1f", what, got, n, mean, 5 * sd);
}

static void test_mix_proportions(void **state)
{
	(void)state;
	struct target_plan *p = parse_ok("routes:\n"
	                                 "  - path: /\n"
	                                 "    status: {200: 0.9, 503: 0.07, 429: 0.03}\n"
	                                 "    fill: 0.55\n"
	                                 "    body: ad\n");
	const struct target_route *rt = &p->routes[0];
	assert_int_equal(rt->n_resps, 4);
	size_t counts[4] = {0};
	struct rng r;
	rng_seed(&r, 2024);
	const size_t n = 400000;
	for (size_t i = 0; i < n; i++)
		counts[target_route_pick(rt, &r)]++;
	assert_int_equal(rt->resps[0].kind, TARGET_RESP_FILLED);
	assert_int_equal(rt->resps[1].kind, TARGET_RESP_NOFILL);
	assert_int_equal(rt->resps[2].status, 503);
	assert_int_equal(rt->resps[3].status, 429);
	binomial(counts[0], n, 0.9 * 0.55, "filled");
	binomial(counts[1], n, 0.9 * 0.45, "no-fill");
	binomial(counts[2], n, 0.07, "503");
	binomial(counts[3], n, 0.03, "429");
	/* fill among the 200s */
	binomial(counts[0], counts[0] + counts[1], 0.55, "fill ratio");
	target_plan_free(p);

	/* extremes draw nothing else */
	p = parse_ok("routes:\n  - path: /\n    fill: 0\n    nofill: {status: 200, body: none}\n");
	rt = &p->routes[0];
	assert_int_equal(rt->n_resps, 1);
	assert_int_equal(rt->resps[0].kind, TARGET_RESP_NOFILL);
	assert_int_equal(target_route_pick(rt, &r), 0);
	target_plan_free(p);
}

static void test_match(void **state)
{
	(void)state;
	struct target_plan *p = parse_ok("routes:\n"
	                                 "  - {method: GET, path: /a}\n"
	                                 "  - {method: POST, path: /a}\n"
	                                 "  - {path: /static/, prefix: true}\n"
	                                 "  - {method: GET, path: /, prefix: true}\n");
#define M(m, path) target_plan_match(p, m, strlen(m), path, strlen(path))
	assert_ptr_equal(M("GET", "/a"), &p->routes[0]);
	assert_ptr_equal(M("HEAD", "/a"), &p->routes[0]);
	assert_ptr_equal(M("POST", "/a"), &p->routes[1]);
	assert_null(M("PUT", "/a"));
	assert_ptr_equal(M("PUT", "/static/x.css"), &p->routes[2]);
	assert_ptr_equal(M("GET", "/ab"), &p->routes[3]);
	assert_null(M("DELETE", "/ab"));
	assert_null(M("get", "/a") == &p->routes[0] ? &p->routes[0] : NULL); /* methods are case-sensitive */
#undef M
	target_plan_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_minimal),         cmocka_unit_test(test_full_route),
		cmocka_unit_test(test_template_segments), cmocka_unit_test(test_refused),
		cmocka_unit_test(test_booleans),
		cmocka_unit_test(test_load_file),       cmocka_unit_test(test_builtins),
		cmocka_unit_test(test_examples_match_builtins),
		cmocka_unit_test(test_mix_proportions), cmocka_unit_test(test_match),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
