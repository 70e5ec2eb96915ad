/* Tests of the YAML helper layer under the plan, scenario and mix readers
 * (src/util/yaml_get.c): the YAML 1.2 booleans (and the message for YAML
 * 1.1's), scalars with and without NUL bytes, counts and their range,
 * mappings matched against keys, and the duplicate-key check: found in any
 * mapping of the document, the first one in the text named with the line of
 * the key it repeats, bytes compared exactly, aliases and self-referencing
 * anchors visited once, a subtree checked alone, large mappings. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "util/err.h"
#include "util/yaml_get.h"

static yaml_document_t doc;
static char err[512];
static struct yaml_rd rd;

/* Load text as the one document under test; returns its root. */
static yaml_node_t *load(const char *text)
{
	yaml_parser_t p;
	assert_true(yaml_parser_initialize(&p));
	yaml_parser_set_input_string(&p, (const unsigned char *)text, strlen(text));
	if (!yaml_parser_load(&p, &doc))
		fail_msg("not YAML: %s\n%s", p.problem, text);
	yaml_parser_delete(&p);
	err[0] = '\0';
	rd = (struct yaml_rd){.doc = &doc, .src = "y.yaml", .err = err, .cap = sizeof err};
	return yaml_document_get_root_node(&doc);
}

static void unload(void) { yaml_document_delete(&doc); }

/* The value of key k in mapping m (first match), or NULL. */
static yaml_node_t *val(yaml_node_t *m, const char *k)
{
	for (yaml_node_pair_t *p = m->data.mapping.pairs.start; p < m->data.mapping.pairs.top; p++) {
		const char *s = yaml_scalar(yaml_rd_node(&rd, p->key));
		if (s && !strcmp(s, k))
			return yaml_rd_node(&rd, p->value);
	}
	return NULL;
}

static void test_bool_of(void **state)
{
	(void)state;
	static const char *const t[] = {"true", "True", "TRUE"}, *const f[] = {"false", "False", "FALSE"};
	for (size_t i = 0; i < 3; i++) {
		bool b = false;
		assert_true(yaml_bool_of(t[i], &b));
		assert_true(b);
		assert_true(yaml_bool_of(f[i], &b));
		assert_false(b);
	}
	static const char *const bad[] = {"tRUE", "truE", "FaLse", "yes", "no", "on", "off", "y", "n",
	                                  "1", "0", "", " true", "true ", "t", "f", "~", "null"};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		bool b = true;
		if (yaml_bool_of(bad[i], &b))
			fail_msg("'%s' read as a boolean", bad[i]);
		assert_true(b); /* left alone */
	}
}

static void test_get_bool(void **state)
{
	(void)state;
	yaml_node_t *r = load("a: True\nb: 'FALSE'\nc: yes\nd: OFF\ne: maybe\nf: [true]\n");
	bool b = false;
	assert_int_equal(yaml_get_bool(&rd, val(r, "a"), "a", &b), 0);
	assert_true(b);
	assert_int_equal(yaml_get_bool(&rd, val(r, "b"), "b", &b), 0);
	assert_false(b);
	assert_int_equal(yaml_get_bool(&rd, val(r, "c"), "c", &b), PACER_EPARSE);
	assert_string_equal(err, "y.yaml:3: c: expected true or false, got 'yes' (YAML 1.2 booleans: "
	                         "yes/no/on/off are YAML 1.1's)");
	assert_int_equal(yaml_get_bool(&rd, val(r, "d"), "d", &b), PACER_EPARSE);
	assert_non_null(strstr(err, "got 'OFF' (YAML 1.2"));
	assert_int_equal(yaml_get_bool(&rd, val(r, "e"), "x.e", &b), PACER_EPARSE);
	assert_string_equal(err, "y.yaml:5: x.e: expected true or false, got 'maybe'");
	assert_int_equal(yaml_get_bool(&rd, val(r, "f"), "f", &b), PACER_EPARSE);
	assert_string_equal(err, "y.yaml:6: f: expected true or false, got a list");
	assert_int_equal(yaml_get_bool(&rd, NULL, "g", &b), PACER_EPARSE);
	assert_string_equal(err, "y.yaml: g: expected true or false, got nothing");
	unload();
}

static void test_scalars(void **state)
{
	(void)state;
	yaml_node_t *r = load("nul: \"a\\0b\"\nplain: text\nmap: {x: 1}\nn: 10k\nneg: -1\nbig: 2M\n");
	const char *s;
	size_t len = 99;
	assert_int_equal(yaml_get_scalar(&rd, val(r, "nul"), "nul", "a name", &s, &len), 0);
	assert_int_equal(len, 3);
	assert_memory_equal(s, "a\0b", 3);
	assert_int_equal(yaml_get_text(&rd, val(r, "nul"), "nul", "a name", &s, &len), PACER_EPARSE);
	assert_string_equal(err, "y.yaml:1: nul: expected a name without NUL bytes");
	assert_int_equal(yaml_get_text(&rd, val(r, "plain"), "", "a name", &s, NULL), 0);
	assert_string_equal(s, "text");
	assert_int_equal(yaml_get_text(&rd, val(r, "map"), "map", "a name", &s, &len), PACER_EPARSE);
	assert_string_equal(err, "y.yaml:3: map: expected a name, got a mapping");
	assert_string_equal(s, "");
	assert_int_equal(len, 0);
	assert_null(yaml_scalar(val(r, "map")));
	assert_null(yaml_scalar(NULL));

	uint64_t v = 0;
	assert_int_equal(yaml_get_count(&rd, val(r, "n"), "n", 1, 10000, &v), 0);
	assert_int_equal(v, 10000);
	assert_int_equal(yaml_get_count(&rd, val(r, "n"), "n", 1, 9999, &v), PACER_ERANGE);
	assert_string_equal(err, "y.yaml:4: n: expected a whole number from 1 to 9999, got '10k'");
	assert_int_equal(yaml_get_count(&rd, val(r, "neg"), "neg", 0, 10, &v), PACER_ERANGE);
	assert_int_equal(yaml_get_count(&rd, val(r, "plain"), "p", 0, 10, &v), PACER_ERANGE);
	uint64_t bytes;
	assert_int_equal(yaml_get_size(&rd, val(r, "big"), "big", 4u << 20, &bytes), 0);
	assert_int_equal(bytes, 2u << 20); /* sizes are binary */
	double p;
	assert_int_equal(yaml_get_prob(&rd, val(r, "plain"), "p", &p), PACER_EPARSE);
	assert_int_equal(yaml_get_prob(&rd, val(r, "n"), "p", &p), PACER_EPARSE);
	unload();
}

static void test_fields(void **state)
{
	(void)state;
	static const char *const keys[] = {"alpha", "beta", "gamma"};
	yaml_node_t *v[3];
	yaml_node_t *r = load("alpha: 1\ngamma: 3\n");
	assert_int_equal(yaml_fields(&rd, r, "", "a test (a mapping)", keys, 3, v), 0);
	assert_string_equal(yaml_scalar(v[0]), "1");
	assert_null(v[1]);
	assert_string_equal(yaml_scalar(v[2]), "3");
	unload();

	r = load("alpha: 1\nbetta: 2\n");
	assert_int_equal(yaml_fields(&rd, r, "t", "a test", keys, 3, v), PACER_EPARSE);
	assert_string_equal(err, "y.yaml:2: t: unknown key 'betta' (expected one of: alpha, beta, gamma)");
	unload();

	/* a long unknown key is cut, so the list still shows */
	char text[400];
	snprintf(text, sizeof text, "%0200d: 1\n", 7);
	r = load(text);
	assert_int_equal(yaml_fields(&rd, r, NULL, "a test", keys, 3, v), PACER_EPARSE);
	assert_non_null(strstr(err, "(expected one of: alpha, beta, gamma)"));
	unload();

	r = load("[1, 2]\n");
	assert_int_equal(yaml_fields(&rd, r, "t", "a test (a mapping)", keys, 3, v), PACER_EPARSE);
	assert_string_equal(err, "y.yaml:1: t: expected a test (a mapping), got a list");
	unload();

	r = load("? [a]\n: 1\n");
	assert_int_equal(yaml_fields(&rd, r, "t", "a test", keys, 3, v), PACER_EPARSE);
	assert_string_equal(err, "y.yaml:1: t: expected a key, got a list");
	unload();

	/* on a document nobody checked first, a repeat is still refused */
	r = load("beta: 1\nbeta: 2\n");
	assert_int_equal(yaml_fields(&rd, r, "t", "a test", keys, 3, v), PACER_EPARSE);
	assert_string_equal(err, "y.yaml:2: t: duplicate key 'beta'");
	unload();
}

struct dup_case {
	const char *text;
	const char *want; /* NULL: no duplicate */
};

static void test_check_unique(void **state)
{
	(void)state;
	static const struct dup_case cases[] = {
		{"a: 1\nb: 2\nab: 3\nA: 4\n", NULL},
		{"a: 1\nb: 2\na: 3\n", "y.yaml:3: duplicate key 'a' (first at line 1)"},
		{"{x: 1, y: 2, x: 3}\n", "y.yaml:1: duplicate key 'x' (first at line 1)"},
		/* quoting does not make another key; the bytes are compared */
		{"a: 1\n'a': 2\n", "y.yaml:2: duplicate key 'a' (first at line 1)"},
		/* a control byte is shown as ? (one line) */
		{"\"a\\tb\": 1\n\"a\\tb\": 2\n", "y.yaml:2: duplicate key 'a?b' (first at line 1)"},
		/* deep inside lists of mappings */
		{"list:\n  - {k: 1}\n  - k: 1\n    j: 2\n    k: 3\n", "y.yaml:5: duplicate key 'k' (first at line 3)"},
		/* the first repeat in the text, wherever its mapping is */
		{"top: 1\ninner:\n  z: 1\n  z: 2\ntop: 2\n", "y.yaml:4: duplicate key 'z' (first at line 3)"},
		{"top: 1\ntop: 2\ninner:\n  z: 1\n  z: 2\n", "y.yaml:2: duplicate key 'top' (first at line 1)"},
		/* three times: the second one is named, after the first */
		{"a: 1\nb: 0\na: 2\na: 3\n", "y.yaml:3: duplicate key 'a' (first at line 1)"},
		/* the same key in different mappings is fine */
		{"a: {k: 1}\nb: {k: 2}\n", NULL},
		/* an anchored mapping used twice is one mapping, named once */
		{"a: &m {k: 1, k: 2}\nb: *m\n", "y.yaml:1: duplicate key 'k' (first at line 1)"},
		{"a: &m {k: 1}\nb: *m\nc: *m\n", NULL},
		/* structures that contain themselves end */
		{"&s [*s, *s]\n", NULL},
		{"&m {k: *m, j: *m}\n", NULL},
		{"&m {k: *m, k: 1}\n", "y.yaml:1: duplicate key 'k' (first at line 1)"},
		/* non-scalar keys are not compared */
		{"? [1]\n: a\n? [1]\n: b\n", NULL},
		{"", NULL},
		{"just a scalar\n", NULL},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		yaml_node_t *r = load(cases[i].text);
		int rc = yaml_check_unique(&rd, r);
		if (!cases[i].want && rc != 0)
			fail_msg("case %zu refused: %s", i, err);
		if (cases[i].want) {
			if (rc != PACER_EPARSE)
				fail_msg("case %zu accepted:\n%s", i, cases[i].text);
			if (strcmp(err, cases[i].want) != 0)
				fail_msg("case %zu\n got: %s\nwant: %s", i, err, cases[i].want);
		}
		unload();
	}
}

/* A subtree is checked alone; a repeat elsewhere is not its business. */
static void test_check_unique_subtree(void **state)
{
	(void)state;
	yaml_node_t *r = load("a: 1\na: 2\nsub:\n  x: 1\n  y: 2\nbad:\n  q: 1\n  q: 2\n");
	assert_int_equal(yaml_check_unique(&rd, val(r, "sub")), 0);
	assert_int_equal(yaml_check_unique(&rd, val(r, "bad")), PACER_EPARSE);
	assert_string_equal(err, "y.yaml:8: duplicate key 'q' (first at line 7)");
	assert_int_equal(yaml_check_unique(&rd, NULL), 0);
	unload();
}

/* Many keys: sorted, not compared pairwise; the repeat is found at the end. */
static void test_check_unique_large(void **state)
{
	(void)state;
	enum { KEYS = 100000 };
	size_t cap = (size_t)KEYS * 16 + 64;
	char *text = malloc(cap);
	assert_non_null(text);
	size_t o = 0;
	for (int i = 0; i < KEYS; i++)
		o += (size_t)snprintf(text + o, cap - o, "k%d: %d\n", i, i);
	yaml_node_t *r = load(text);
	assert_int_equal(yaml_check_unique(&rd, r), 0);
	unload();
	snprintf(text + o, cap - o, "k%d: again\n", KEYS / 2);
	r = load(text);
	assert_int_equal(yaml_check_unique(&rd, r), PACER_EPARSE);
	char want[128];
	snprintf(want, sizeof want, "y.yaml:%d: duplicate key 'k%d' (first at line %d)", KEYS + 1,
	         KEYS / 2, KEYS / 2 + 1);
	assert_string_equal(err, want);
	unload();
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bool_of),          cmocka_unit_test(test_get_bool),
		cmocka_unit_test(test_scalars),          cmocka_unit_test(test_fields),
		cmocka_unit_test(test_check_unique),     cmocka_unit_test(test_check_unique_subtree),
		cmocka_unit_test(test_check_unique_large),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
