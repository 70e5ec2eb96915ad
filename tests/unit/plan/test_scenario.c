/* Tests of scenario files (src/plan/scenario.c), mostly the inline request
 * table: `table: {mix: SPEC, size: N, seed: S}` parses into a checked mix
 * spec with no target in the argv, and scenario_table builds exactly the
 * table `pacer table generate` builds from the same spec, size and seed (the
 * same SHA-256); each kind of bad table is one "FILE:LINE: ..." message; a
 * requests_file stands instead of a target too; plain scenarios still become
 * the argv they did. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "plan/scenario.h"
#include "table/mix.h"
#include "table/table.h"
#include "util/err.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* A mix spec as a file of its own (indentation 0) ... */
static const char *const spec_lines[] = {
	"base_url: http://127.0.0.1:8080/app",
	"methods: {GET: 65, POST: 20, PUT: 8, PATCH: 5, DELETE: 2}",
	"locality: {requests: 70%, routes: 20%}",
	"query: {share: 0.25, template: \"page=${id}&sort=${word}\"}",
	"headers: [\"Accept: application/json\"]",
	"body:",
	"  template: '{\"id\":${id},\"name\":\"${word}\",\"ref\":\"${uuid}\",\"seq\":${n}}'",
	"shapes:",
	"  - {name: static, weight: 20, routes: 50, templates: [\"/static/r${route}/a.js\"]}",
	"  - {name: rest_id, weight: 30, routes: 100, templates: [\"/api/r${route}/users/${id}\"]}",
	"  - name: glob",
	"    weight: 10",
	"    routes: 10",
	"    templates: [\"/files/r${route}/${path}\"]",
};

/* ... and the same spec inline in a scenario, under table: mix: */
static char *scenario_with(const char *head, const char *table_keys)
{
	size_t cap = 8192;
	char *t = malloc(cap);
	assert_non_null(t);
	int o = snprintf(t, cap, "%stable:\n%s  mix:\n", head, table_keys);
	for (size_t i = 0; i < N(spec_lines); i++)
		o += snprintf(t + o, cap - (size_t)o, "    %s\n", spec_lines[i]);
	return t;
}

static char *spec_file(void)
{
	size_t cap = 8192;
	char *t = malloc(cap);
	assert_non_null(t);
	int o = 0;
	t[0] = '\0';
	for (size_t i = 0; i < N(spec_lines); i++)
		o += snprintf(t + o, cap - (size_t)o, "%s\n", spec_lines[i]);
	return t;
}

static void hash_of(const struct table *t, char hex[65])
{
	char err[256];
	assert_int_equal(table_hash(t, "pacer/test", NULL, 0, hex, err, sizeof err), 0);
}

/* what `pacer table generate --spec FILE --size n --seed s` builds */
static void generated_hash(size_t n, uint64_t seed, char hex[65])
{
	char *text = spec_file();
	struct table_mix *m = NULL;
	struct table *t = NULL;
	char err[512];
	assert_int_equal(table_mix_parse(text, strlen(text), "mix.yaml", &m, err, sizeof err), 0);
	assert_int_equal(table_mix_generate(m, n, seed, NULL, &t, err, sizeof err), 0);
	hash_of(t, hex);
	table_free(t);
	table_mix_free(m);
	free(text);
}

static void parse_ok(const char *text, struct scenario *s)
{
	char err[512] = "";
	int rc = scenario_parse(text, strlen(text), "s.yaml", s, err, sizeof err);
	if (rc)
		fail_msg("scenario_parse: %d %s\n--\n%s", rc, err, text);
}

static void test_inline_table_is_the_generated_table(void **state)
{
	(void)state;
	char *text = scenario_with("name: routers\nkind: run\nconcurrency: 4\n",
				   "  size: 500\n  seed: 7\n");
	static struct scenario s;
	parse_ok(text, &s);
	assert_string_equal(s.kind, "run");
	/* no target in the argv: the table names it */
	assert_int_equal(s.nargs, 3);
	assert_string_equal(s.args[0], "run");
	assert_string_equal(s.args[1], "--concurrency");
	assert_string_equal(s.args[2], "4");
	assert_null(s.args[3]);
	assert_non_null(s.table_mix);
	assert_int_equal(s.table_size, 500);
	assert_int_equal(s.table_seed, 7);
	assert_int_equal(s.table_line, 4);

	struct table *t = NULL;
	char err[512];
	assert_int_equal(scenario_table(&s, NULL, &t, err, sizeof err), 0);
	assert_non_null(t);
	assert_int_equal(t->n, 500);
	assert_int_equal(t->format, TABLE_FMT_MIX);
	assert_string_equal(t->source, "s.yaml");
	assert_string_equal(t->hosts[0].name, "127.0.0.1");
	char a[65], b[65], c[65];
	hash_of(t, a);
	generated_hash(500, 7, b);
	assert_string_equal(a, b);
	generated_hash(500, 8, c);
	assert_string_not_equal(a, c);
	/* built again: the same bytes */
	struct table *t2 = NULL;
	assert_int_equal(scenario_table(&s, NULL, &t2, err, sizeof err), 0);
	hash_of(t2, c);
	assert_string_equal(a, c);
	table_free(t2);
	table_free(t);
	scenario_free(&s);
	scenario_free(&s); /* idempotent */
	free(text);
}

static void test_defaults_and_ramp(void **state)
{
	(void)state;
	/* seed defaults to 1 (as pacer table generate); size takes 2k */
	char *text = scenario_with("kind: ramp\nsteps: [100, 200]\n", "  size: 2k\n");
	static struct scenario s;
	parse_ok(text, &s);
	assert_string_equal(s.kind, "ramp");
	assert_int_equal(s.table_size, 2000);
	assert_int_equal(s.table_seed, 1);
	assert_int_equal(s.nargs, 3);
	assert_string_equal(s.args[1], "--steps");
	assert_string_equal(s.args[2], "100,200");
	struct table *t = NULL;
	char err[512], a[65], b[65];
	assert_int_equal(scenario_table(&s, NULL, &t, err, sizeof err), 0);
	hash_of(t, a);
	generated_hash(2000, 1, b);
	assert_string_equal(a, b);
	table_free(t);
	scenario_free(&s);
	free(text);

	/* the largest seed */
	text = scenario_with("kind: run\n", "  size: 1\n  seed: 18446744073709551615\n");
	parse_ok(text, &s);
	assert_true(s.table_seed == UINT64_MAX);
	scenario_free(&s);
	free(text);
}

static void test_no_table(void **state)
{
	(void)state;
	static struct scenario s;
	parse_ok("kind: run\ntarget: http://127.0.0.1:1/x\nrequests: 10\n", &s);
	assert_null(s.table_mix);
	assert_int_equal(s.nargs, 4);
	assert_string_equal(s.args[1], "--requests");
	assert_string_equal(s.args[2], "10");
	assert_string_equal(s.args[3], "http://127.0.0.1:1/x");
	struct table *t = (struct table *)&s; /* must be set to NULL */
	char err[64] = "untouched";
	assert_int_equal(scenario_table(&s, NULL, &t, err, sizeof err), 0);
	assert_null(t);
	scenario_free(&s);

	/* a requests_file stands instead of the target too */
	parse_ok("kind: run\nrequests_file: api.jsonl\nrequests: 10\n", &s);
	assert_int_equal(s.nargs, 5);
	assert_string_equal(s.args[1], "--requests-file");
	assert_string_equal(s.args[2], "api.jsonl");
	scenario_free(&s);

	/* outcomes and cost profiles as maps; rule and transport keys as options */
	parse_ok("kind: ramp\ntarget: self-contained:vast_ortb_mix\nsteps: [100]\n"
		 "outcomes:\n  fill: 'status == 200 and body contains \"<Ad\"'\n  err: status >= 500\n"
		 "cost_profiles: {x86: 0.02}\nsuccess: status == 200\nlimited_ok: true\n"
		 "report_dir: out/\nslo: fill>=50%\n", &s);
	bool fill = false, err5 = false, cost = false, lim = false, rep = false, succ = false;
	for (int i = 1; i + 1 < s.nargs; i++) {
		fill |= !strcmp(s.args[i], "--outcome") &&
			!strcmp(s.args[i + 1], "fill=status == 200 and body contains \"<Ad\"");
		err5 |= !strcmp(s.args[i], "--outcome") && !strcmp(s.args[i + 1], "err=status >= 500");
		cost |= !strcmp(s.args[i], "--cost-profile") && !strcmp(s.args[i + 1], "x86=0.02");
		succ |= !strcmp(s.args[i], "--success") && !strcmp(s.args[i + 1], "status == 200");
		rep |= !strcmp(s.args[i], "--report-dir") && !strcmp(s.args[i + 1], "out/");
	}
	for (int i = 1; i < s.nargs; i++)
		lim |= !strcmp(s.args[i], "--limited-ok");
	assert_true(fill && err5 && cost && lim && rep && succ);
	scenario_free(&s);
	char e2[512];
	static struct scenario s2;
	const char *bad = "kind: run\ntarget: http://127.0.0.1:1/\noutcomes: [a]\n";
	assert_int_not_equal(scenario_parse(bad, strlen(bad), "s.yaml", &s2, e2, sizeof e2), 0);
	assert_non_null(strstr(e2, "s.yaml:3: outcomes: expected a map of NAME: RULE"));

	/* self-contained with a path, as before */
	parse_ok("kind: run\ntarget: self-contained:hello\npath: /x\n", &s);
	assert_int_equal(s.nargs, 3);
	assert_string_equal(s.args[1], "--self-contained=hello");
	assert_string_equal(s.args[2], "/x");
	scenario_free(&s);
}

struct bad_case {
	const char *text;
	const char *want; /* the whole message */
};

static void test_bad_tables(void **state)
{
	(void)state;
	static const struct bad_case cases[] = {
		{"kind: compare\nvariants: {A: http://h/}\ntable: {size: 1, mix: {}}\n",
		 "s.yaml:3: table: only for kind run or ramp"},
		{"kind: run\ntable: 5\n",
		 "s.yaml:2: table: expected {mix: {...}, size: N, seed: S} (a mix spec inline; docs/scenario.md)"},
		{"kind: run\ntable:\n  size: 1\n  sizes: 2\n",
		 "s.yaml:4: table: unknown key 'sizes' (expected mix, size, seed)"},
		{"kind: run\ntable:\n  size: 1\n  size: 2\n", "s.yaml:4: duplicate key 'size' (first at line 3)"},
		{"kind: run\ntable: {size: 4}\n",
		 "s.yaml:2: table: missing mix: {...} (the spec pacer table generate --spec reads; docs/tables.md)"},
		{"kind: run\ntable: {mix: {}}\n", "s.yaml:2: table: missing size: N (the number of requests)"},
		{"kind: run\ntable: {mix: {}, size: 0}\n",
		 "s.yaml:2: table: size: expected a whole number from 1 to 1000000"},
		{"kind: run\ntable: {mix: {}, size: 1000001}\n",
		 "s.yaml:2: table: size: expected a whole number from 1 to 1000000"},
		{"kind: run\ntable:\n  mix: {}\n  size: [1]\n",
		 "s.yaml:4: table: size: expected a whole number from 1 to 1000000"},
		{"kind: run\ntable:\n  mix: {}\n  size: 1\n  seed: -1\n",
		 "s.yaml:5: table: seed: expected a whole number from 0 to 2^64-1"},
		{"kind: run\ntable:\n  mix: {}\n  size: 1\n  seed: 18446744073709551616\n",
		 "s.yaml:5: table: seed: expected a whole number from 0 to 2^64-1"},
		{"kind: run\ntable:\n  size: 1\n  mix: [a]\n",
		 "s.yaml:4: table: mix: expected a mapping (base_url, methods, shapes, ...; docs/tables.md)"},
		/* the mix generator's own message, at its line in the scenario */
		{"kind: run\ntable:\n  size: 1\n  mix:\n    base_url: http://h/\n    methods: {GET: -1}\n"
		 "    shapes: [{name: a, template: /a}]\n",
		 NULL},
		{"kind: run\ntable:\n  size: 1\n  mix:\n    base_url: http://h/\n", NULL},
		{"kind: run\ntarget: http://127.0.0.1:1/\ntable:\n  size: 1\n  mix:\n    base_url: http://h/\n"
		 "    shapes: [{name: a, template: /a}]\n",
		 "s.yaml:2: target: not with table: (the table names the URLs: the mix's base_url)"},
		{"kind: run\nrequests_file: a.jsonl\ntable:\n  size: 1\n  mix:\n    base_url: http://h/\n"
		 "    shapes: [{name: a, template: /a}]\n",
		 "s.yaml:2: requests_file: not with table: (give one source of requests)"},
		{"kind: run\nbodies: dir\ntable:\n  size: 1\n  mix:\n    base_url: http://h/\n"
		 "    shapes: [{name: a, template: /a}]\n",
		 "s.yaml:2: bodies: not with table: (give one source of requests)"},
		{"kind: run\ntable:\n  size: 1\n  mix:\n    base_url: http://h/\n"
		 "    shapes: [{name: a, template: /a}]\ntable:\n  size: 1\n  mix: {}\n",
		 "s.yaml:7: duplicate key 'table' (first at line 2)"},
		{"kind: run\npath: /x\ntable:\n  size: 1\n  mix:\n    base_url: http://h/\n"
		 "    shapes: [{name: a, template: /a}]\n",
		 "s.yaml:2: path: only with target: self-contained"},
		{"kind: run\nrequests: {mix: {}, size: 4}\n",
		 "s.yaml:2: requests: expected a count (closed loop: stop after N); a mix spec inline goes "
		 "under table: {mix: {...}, size: N, seed: S}"},
		{"kind: run\nrequests_file: a.jsonl\ntarget: http://127.0.0.1:1/\n",
		 "s.yaml:3: target: not with requests_file (the table names the URLs)"},
		{"kind: run\nrate: 1k\n",
		 "s.yaml:1: target: missing (a URL, or self-contained[:PLAN]; or requests_file: or table: "
		 "instead)"},
	};
	for (size_t i = 0; i < N(cases); i++) {
		static struct scenario s;
		char err[512] = "";
		int rc = scenario_parse(cases[i].text, strlen(cases[i].text), "s.yaml", &s, err, sizeof err);
		if (rc == 0)
			fail_msg("case %zu parsed:\n%s", i, cases[i].text);
		assert_true(rc < 0);
		assert_null(s.table_mix);
		assert_null(s.source);
		assert_int_equal(s.nargs, 0);
		assert_null(strchr(err, '\n'));
		if (cases[i].want && strcmp(err, cases[i].want) != 0)
			fail_msg("case %zu:\n got: %s\nwant: %s", i, err, cases[i].want);
	}
	/* the mix generator's messages keep their line and say where they are */
	static struct scenario s;
	char err[512] = "";
	const char *t = cases[12].text;
	assert_int_not_equal(scenario_parse(t, strlen(t), "s.yaml", &s, err, sizeof err), 0);
	assert_string_equal(err, "s.yaml:6: table: mix: methods: -1 is out of range (0 to 1e+09, or a "
				 "percentage)");
	t = cases[13].text;
	assert_int_not_equal(scenario_parse(t, strlen(t), "s.yaml", &s, err, sizeof err), 0);
	assert_string_equal(err, "s.yaml:5: table: mix: missing 'shapes'");
}

/* One way of reading YAML in all three readers: booleans are YAML 1.2's, and
 * a key given twice (or a setting under both its spellings) is refused with
 * its file, line and name, wherever it is (the inline mix spec too). */
static void test_booleans_and_duplicate_keys(void **state)
{
	(void)state;
	static struct scenario s;
	static const char *const on[] = {"true", "True", "TRUE", "'true'"};
	static const char *const off[] = {"false", "False", "FALSE"};
	for (size_t i = 0; i < N(on); i++) {
		char text[128];
		snprintf(text, sizeof text, "kind: run\ntarget: http://h/\nquiet: %s\n", on[i]);
		parse_ok(text, &s);
		assert_int_equal(s.nargs, 3);
		assert_string_equal(s.args[1], "--quiet");
		scenario_free(&s);
	}
	for (size_t i = 0; i < N(off); i++) {
		char text[128];
		snprintf(text, sizeof text, "kind: run\ntarget: http://h/\nquiet: %s\n", off[i]);
		parse_ok(text, &s);
		assert_int_equal(s.nargs, 2);
		scenario_free(&s);
	}
	static const struct bad_case cases[] = {
		{"kind: run\ntarget: http://h/\nquiet: yes\n",
		 "s.yaml:3: quiet: expected true or false, got 'yes' (YAML 1.2 booleans: yes/no/on/off are "
		 "YAML 1.1's)"},
		{"kind: run\ntarget: http://h/\nquiet: [true]\n",
		 "s.yaml:3: quiet: expected true or false, got a list"},
		{"kind: run\ntarget: http://h/\nrate: 10\nrate: 20\n",
		 "s.yaml:4: duplicate key 'rate' (first at line 3)"},
		{"kind: run\nkind: ramp\ntarget: http://h/\n", "s.yaml:2: duplicate key 'kind' (first at line 1)"},
		{"kind: run\nrequests_file: a.jsonl\nrequests-file: b.jsonl\n",
		 "s.yaml:3: duplicate key 'requests-file' (first at line 2 as 'requests_file')"},
		{"kind: run\ntarget: http://h/\nheader: {X-A: 1, X-A: 2}\n",
		 "s.yaml:3: duplicate key 'X-A' (first at line 3)"},
		{"kind: compare\nvariants:\n  A: http://a/\n  A: http://b/\n",
		 "s.yaml:4: duplicate key 'A' (first at line 3)"},
		{"kind: run\ntable:\n  size: 1\n  mix:\n    base_url: http://h/\n    shapes: []\n"
		 "    base_url: http://i/\n",
		 "s.yaml:7: duplicate key 'base_url' (first at line 5)"},
	};
	for (size_t i = 0; i < N(cases); i++) {
		char err[512] = "";
		int rc = scenario_parse(cases[i].text, strlen(cases[i].text), "s.yaml", &s, err, sizeof err);
		if (rc == 0)
			fail_msg("case %zu parsed:\n%s", i, cases[i].text);
		assert_int_equal(rc, PACER_EPARSE);
		assert_int_equal(s.nargs, 0);
		if (strcmp(err, cases[i].want) != 0)
			fail_msg("case %zu:\n got: %s\nwant: %s", i, err, cases[i].want);
	}
}

/* The redaction keys: redact_header a name or a list of them (one
 * --redact-header each), no_redact a flag. */
static void test_redact_keys(void **state)
{
	(void)state;
	static struct scenario s;
	const char *text = "kind: run\ntarget: http://h/\nredact_header: [X-A, X-B]\nno_redact: true\n"
			   "header:\n  X-A: secret\n";
	parse_ok(text, &s);
	const char *want[] = {"run", "--redact-header", "X-A", "--redact-header", "X-B", "--no-redact",
			      "--header", "X-A: secret"};
	assert_true(s.nargs >= (int)N(want));
	for (size_t k = 0; k < N(want); k++)
		assert_string_equal(s.args[k], want[k]);
	scenario_free(&s);
	text = "kind: run\ntarget: http://h/\nredact_header: X-C\n";
	parse_ok(text, &s);
	assert_string_equal(s.args[1], "--redact-header");
	assert_string_equal(s.args[2], "X-C");
	scenario_free(&s);
}

/* The HTTP/2 keys: h2c a flag, http2 true/false/prefer (--http2[=prefer]). */
static void test_http2_keys(void **state)
{
	(void)state;
	static struct scenario s;
	static const struct {
		const char *keys;
		int nargs;
		const char *a2, *a3, *a4;
	} cases[] = {
		{"h2c: true\nmax_streams: 16\n", 5, "--h2c", "--max-streams", "16"},
		{"http2: true\nh2_window: 1MiB\n", 5, "--http2", "--h2-window", "1MiB"},
		{"http2: prefer\n", 3, "--http2=prefer", NULL, NULL},
		{"http2: false\n", 2, NULL, NULL, NULL},
	};
	for (size_t i = 0; i < N(cases); i++) {
		char text[256];
		snprintf(text, sizeof text, "kind: run\ntarget: https://h/\n%s", cases[i].keys);
		parse_ok(text, &s);
		assert_int_equal(s.nargs, cases[i].nargs);
		const char *want[] = {cases[i].a2, cases[i].a3, cases[i].a4};
		for (int k = 0; k < cases[i].nargs - 2; k++)
			assert_string_equal(s.args[1 + k], want[k]);
		scenario_free(&s);
	}
	char err[512] = "";
	const char *bad = "kind: run\ntarget: https://h/\nhttp2: maybe\n";
	assert_int_equal(scenario_parse(bad, strlen(bad), "s.yaml", &s, err, sizeof err), PACER_EPARSE);
	assert_non_null(strstr(err, "http2"));
}

static void test_generation_error_names_the_table(void **state)
{
	(void)state;
	char *text = scenario_with("kind: run\n", "  size: 50\n");
	static struct scenario s;
	parse_ok(text, &s);
	struct table_limits lim = {.max_body_bytes = 8}; /* the body template needs more */
	struct table *t = (struct table *)&s;
	char err[512] = "";
	int rc = scenario_table(&s, &lim, &t, err, sizeof err);
	assert_true(rc < 0);
	assert_null(t);
	assert_true(strncmp(err, "s.yaml:2: table: request ", 25) == 0);
	assert_non_null(strstr(err, "body"));
	assert_null(strchr(err, '\n'));
	scenario_free(&s);
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_inline_table_is_the_generated_table),
		cmocka_unit_test(test_defaults_and_ramp),
		cmocka_unit_test(test_no_table),
		cmocka_unit_test(test_bad_tables),
		cmocka_unit_test(test_generation_error_names_the_table),
		cmocka_unit_test(test_booleans_and_duplicate_keys),
		cmocka_unit_test(test_http2_keys),
		cmocka_unit_test(test_redact_keys),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
