/* Tests of the embedded target's dynamic bodies (src/target/render.c), which
 * are pure: the body buffer and its cap, decimal formatting, percent
 * decoding, JSON strings, kv lookups (table, generated keys and their edges),
 * generated kv values, whole kv answers, and templates ({{id}} draws, {{seq}},
 * the query echo's sanitising and cap), also from a parsed plan. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "target/plan.h"
#include "target/render.h"
#include "util/rng.h"

/* The buffer's contents as a NUL-terminated string (owned by the buffer). */
static const char *str(struct target_dyn *d)
{
	assert_true(target_dyn_reserve(d, 1));
	d->buf[d->len] = '\0';
	return d->buf;
}

static void test_dyn_grows_to_cap(void **state)
{
	(void)state;
	struct target_dyn d = {0};
	target_dyn_put(&d, "ab", 2);
	assert_int_equal(d.len, 2);
	assert_int_equal(d.cap, TARGET_DYN_INIT);
	assert_memory_equal(d.buf, "ab", 2);
	/* doubling: one byte past the first size */
	static char big[TARGET_DYN_CAP];
	memset(big, 'x', sizeof big);
	target_dyn_put(&d, big, TARGET_DYN_INIT - 1);
	assert_int_equal(d.cap, 2 * TARGET_DYN_INIT);
	assert_int_equal(d.len, TARGET_DYN_INIT + 1);
	/* over the cap: refused, nothing changes */
	uint32_t len = d.len;
	assert_false(target_dyn_reserve(&d, TARGET_DYN_CAP - len + 1));
	assert_int_equal(d.len, len);
	target_dyn_put(&d, big, TARGET_DYN_CAP - len + 1); /* dropped whole */
	assert_int_equal(d.len, len);
	/* exactly to the cap fits; then not one byte more */
	target_dyn_put(&d, big, TARGET_DYN_CAP - len);
	assert_int_equal(d.len, TARGET_DYN_CAP);
	assert_int_equal(d.cap, TARGET_DYN_CAP);
	target_dyn_put(&d, "y", 1);
	assert_int_equal(d.len, TARGET_DYN_CAP);
	assert_int_equal(d.buf[TARGET_DYN_CAP - 1], 'x');
	/* reuse keeps the memory */
	d.len = 0;
	target_dyn_put(&d, "z", 1);
	assert_int_equal(d.cap, TARGET_DYN_CAP);
	free(d.buf);
}

static void test_fmt_u64(void **state)
{
	(void)state;
	static const uint64_t v[] = {0, 7, 10, 99, 100, 1234567890, UINT64_MAX};
	for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
		char got[32], want[32];
		size_t n = target_fmt_u64(got, v[i]);
		int wn = snprintf(want, sizeof want, "%llu", (unsigned long long)v[i]);
		assert_int_equal(n, (size_t)wn);
		got[n] = '\0';
		assert_string_equal(got, want);
	}
}

static void check_decode(const char *in, size_t cap, const char *want, size_t want_len)
{
	char out[64];
	assert_true(cap <= sizeof out);
	size_t n = target_pct_decode(in, strlen(in), out, cap);
	assert_int_equal(n, want_len);
	assert_memory_equal(out, want, want_len);
}

static void test_pct_decode(void **state)
{
	(void)state;
	check_decode("a%20b", 64, "a b", 3);
	check_decode("%41%4a%4A", 64, "AJJ", 3); /* both cases of hex digit */
	check_decode("a+b", 64, "a b", 3);
	check_decode("%2B", 64, "+", 1); /* an encoded plus stays a plus */
	check_decode("%00x", 64, "\0x", 2);
	check_decode("%zz", 64, "%zz", 3); /* not hex: copied */
	check_decode("%4g", 64, "%4g", 3);
	check_decode("ab%4", 64, "ab%4", 4); /* cut short at the end: copied */
	check_decode("ab%", 64, "ab%", 3);
	check_decode("%%41", 64, "%A", 2);
	check_decode("", 64, "", 0);
	/* the cap bounds the output, however long the input */
	check_decode("abcdef", 3, "abc", 3);
	check_decode("%41%42%43", 2, "AB", 2);
	check_decode("abc", 0, "", 0);
}

static void check_json(const char *in, size_t n, const char *want)
{
	struct target_dyn d = {0};
	target_json_str(&d, in, n);
	assert_string_equal(str(&d), want);
	free(d.buf);
}

static void test_json_str(void **state)
{
	(void)state;
	check_json("", 0, "\"\"");
	check_json("plain text", 10, "\"plain text\"");
	check_json("a\"b\\c", 5, "\"a\\\"b\\\\c\"");
	check_json("\n\t\x1f", 3, "\"\\u000a\\u0009\\u001f\"");
	check_json("\x7f\xff\xc3\xa9", 4, "\"\\u007f\\u00ff\\u00c3\\u00a9\"");
	check_json("a\0b", 3, "\"a\\u0000b\"");
}

static const char alnum36[] = "abcdefghijklmnopqrstuvwxyz0123456789";

static void test_kv_gen_value(void **state)
{
	(void)state;
	struct target_dyn a = {0}, b = {0};
	target_kv_gen_value(&a, 7, 32);
	assert_int_equal(a.len, 34);
	assert_int_equal(a.buf[0], '"');
	assert_int_equal(a.buf[33], '"');
	for (int k = 1; k < 33; k++)
		assert_non_null(memchr(alnum36, a.buf[k], 36));
	/* the same key and size: the same value; a shorter size: its prefix */
	target_kv_gen_value(&b, 7, 32);
	assert_memory_equal(a.buf, b.buf, 34);
	b.len = 0;
	target_kv_gen_value(&b, 7, 5);
	assert_int_equal(b.len, 7);
	assert_memory_equal(a.buf + 1, b.buf + 1, 5);
	b.len = 0;
	target_kv_gen_value(&b, 7, 0);
	assert_string_equal(str(&b), "\"\"");

	/* different keys differ, and the characters are spread over all 36 */
	enum { KEYS = 2000, LEN = 16 };
	static char vals[KEYS][LEN];
	unsigned count[256] = {0};
	for (uint64_t i = 0; i < KEYS; i++) {
		b.len = 0;
		target_kv_gen_value(&b, i, LEN);
		memcpy(vals[i], b.buf + 1, LEN);
		for (int k = 0; k < LEN; k++)
			count[(unsigned char)vals[i][k]]++;
	}
	for (size_t i = 1; i < KEYS; i++)
		assert_memory_not_equal(vals[i - 1], vals[i], LEN);
	double expect = (double)KEYS * LEN / 36;
	for (int k = 0; k < 36; k++) {
		unsigned c = count[(unsigned char)alnum36[k]];
		if (c < 0.7 * expect || c > 1.3 * expect)
			fail_msg("'%c' drawn %u times, expected about %.0f", alnum36[k], c, expect);
	}
	free(a.buf);
	free(b.buf);
}

static struct target_header table[] = {{"a", "1"}, {"lit", "value"}, {"zz", "last"}};

static const char *look(const struct target_kv *kv, const char *key, uint64_t *gen, bool *is_gen)
{
	*gen = UINT64_MAX;
	return target_kv_lookup(kv, key, strlen(key), gen, is_gen);
}

static void test_kv_lookup(void **state)
{
	(void)state;
	struct target_kv kv = {.param = "keys", .prefix = "key", .generate = 100, .value_size = 8,
	                       .table = table, .n_table = 3};
	uint64_t g;
	bool is_gen;
	assert_null(look(&kv, "key7", &g, &is_gen));
	assert_true(is_gen);
	assert_int_equal(g, 7);
	assert_null(look(&kv, "key0", &g, &is_gen));
	assert_true(is_gen);
	assert_int_equal(g, 0);
	assert_null(look(&kv, "key99", &g, &is_gen));
	assert_true(is_gen);
	assert_int_equal(g, 99);
	/* not generated: at the count, a leading zero, no number, not a number */
	static const char *const not_gen[] = {"key100", "key07", "key00", "key", "keyx", "key7x",
	                                      "ke", "Key7", "key-1", "key+7"};
	for (size_t i = 0; i < sizeof not_gen / sizeof not_gen[0]; i++) {
		if (look(&kv, not_gen[i], &g, &is_gen) || is_gen)
			fail_msg("'%s' was found", not_gen[i]);
	}
	/* the table: exact names only */
	assert_string_equal(look(&kv, "a", &g, &is_gen), "1");
	assert_false(is_gen);
	assert_string_equal(look(&kv, "lit", &g, &is_gen), "value");
	assert_string_equal(look(&kv, "zz", &g, &is_gen), "last");
	assert_null(look(&kv, "li", &g, &is_gen));
	assert_null(look(&kv, "litx", &g, &is_gen));
	assert_null(look(&kv, "", &g, &is_gen));
	assert_null(look(&kv, "0", &g, &is_gen));
	/* a key in the table that also looks generated is generated */
	struct target_header t2[] = {{"key5", "from table"}};
	kv.table = t2;
	kv.n_table = 1;
	assert_null(look(&kv, "key5", &g, &is_gen));
	assert_true(is_gen);
	assert_int_equal(g, 5);
	/* ... unless generation is off */
	kv.generate = 0;
	assert_string_equal(look(&kv, "key5", &g, &is_gen), "from table");
	assert_false(is_gen);
	/* the largest count a plan allows: 10 digits are read, 11 are not */
	kv.generate = 1000000000;
	assert_null(look(&kv, "key999999999", &g, &is_gen));
	assert_true(is_gen);
	assert_int_equal(g, 999999999);
	assert_null(look(&kv, "key1000000000", &g, &is_gen));
	assert_false(is_gen);
	assert_null(look(&kv, "key99999999999", &g, &is_gen));
	assert_false(is_gen);
	/* 2^64 + 5 would wrap to a small number if it were read */
	assert_null(look(&kv, "key18446744073709551621", &g, &is_gen));
	assert_false(is_gen);
	/* an empty prefix: bare numbers */
	kv.prefix = "";
	assert_null(look(&kv, "42", &g, &is_gen));
	assert_true(is_gen);
	assert_int_equal(g, 42);
}

static void test_render_kv(void **state)
{
	(void)state;
	struct target_kv kv = {.param = "keys", .prefix = "key", .generate = 100, .value_size = 8,
	                       .table = table, .n_table = 3};
	struct target_dyn d = {0}, v = {0};
	const char *q = "x=1&keys=key7,nope,,lit,a%22b&y=2";
	target_render_kv(&d, &kv, q, strlen(q));
	target_kv_gen_value(&v, 7, 8);
	char want[256];
	snprintf(want, sizeof want, "{\"key7\":%.*s,\"nope\":null,\"lit\":\"value\",\"a\\\"b\":null}\n",
	         (int)v.len, v.buf);
	assert_string_equal(str(&d), want);

	/* no parameter, or an empty one */
	d.len = 0;
	target_render_kv(&d, &kv, "other=key1", 10);
	assert_string_equal(str(&d), "{}\n");
	d.len = 0;
	target_render_kv(&d, &kv, "keys=", 5);
	assert_string_equal(str(&d), "{}\n");
	d.len = 0;
	target_render_kv(&d, &kv, "keys=,,", 7);
	assert_string_equal(str(&d), "{}\n");

	/* at most TARGET_KV_MAX_KEYS keys are answered */
	char many[1024] = "keys=";
	for (unsigned i = 0; i < TARGET_KV_MAX_KEYS + 6; i++)
		snprintf(many + strlen(many), sizeof many - strlen(many), "%sn%u", i ? "," : "", i);
	d.len = 0;
	target_render_kv(&d, &kv, many, strlen(many));
	const char *s = str(&d);
	unsigned nulls = 0;
	for (const char *p = s; (p = strstr(p, ":null")); p++)
		nulls++;
	assert_int_equal(nulls, TARGET_KV_MAX_KEYS);
	char last[32];
	snprintf(last, sizeof last, "\"n%u\":null}\n", TARGET_KV_MAX_KEYS - 1);
	assert_string_equal(s + strlen(s) - strlen(last), last);
	free(d.buf);
	free(v.buf);
}

static void test_template(void **state)
{
	(void)state;
	struct target_seg segs[] = {
		{TARGET_SEG_TEXT, "id=", 3},   {TARGET_SEG_ID, NULL, 0},     {TARGET_SEG_TEXT, " again=", 7},
		{TARGET_SEG_ID, NULL, 0},      {TARGET_SEG_TEXT, " n=", 3},  {TARGET_SEG_SEQ, NULL, 0},
		{TARGET_SEG_TEXT, " q=", 3},   {TARGET_SEG_QUERY, "name", 4}, {TARGET_SEG_TEXT, ".", 1},
	};
	struct target_body b = {.segs = segs, .n_segs = sizeof segs / sizeof segs[0]};
	struct rng r, ref;
	rng_seed(&r, 42);
	rng_seed(&ref, 42);
	struct target_dyn d = {0};
	const char *q = "x=1&name=a%20b%3Cc+d%0A~.,:-_&y=2";
	target_render_template(&d, &b, q, strlen(q), &r, 12345);
	char want[128];
	unsigned long long id = (unsigned long long)rng_next(&ref);
	snprintf(want, sizeof want, "id=%016llx again=%016llx n=12345 q=a b_c d_~.,:-_.", id, id);
	assert_string_equal(str(&d), want);
	/* one draw per body, however many {{id}} it has */
	assert_int_equal(rng_next(&r), rng_next(&ref));

	/* no {{id}}: no draw; an absent parameter: nothing */
	struct target_body b2 = {.segs = segs + 4, .n_segs = 5};
	d.len = 0;
	target_render_template(&d, &b2, "other=1", 7, &r, 0);
	assert_string_equal(str(&d), " n=0 q=.");
	assert_int_equal(rng_next(&r), rng_next(&ref));

	/* the echo is capped */
	char longq[600] = "name=";
	memset(longq + 5, 'x', 500);
	longq[505] = '\0';
	d.len = 0;
	target_render_template(&d, &b2, longq, strlen(longq), &r, 1);
	assert_int_equal(d.len, strlen(" n=1 q=.") + TARGET_QUERY_ECHO_CAP);
	free(d.buf);
}

/* The segments the plan parser makes render as the docs say. */
static void test_template_from_plan(void **state)
{
	(void)state;
	static const char yaml[] = "routes:\n"
	                           "  - path: /t\n"
	                           "    body: '<{{seq}}|{{query:who}}|{{seq}}>'\n";
	struct target_plan *p;
	char err[256];
	if (target_plan_parse(yaml, strlen(yaml), "t.yaml", &p, err, sizeof err))
		fail_msg("plan: %s", err);
	const struct target_body *b = p->routes[0].resps[0].body;
	assert_non_null(b->segs);
	struct rng r;
	rng_seed(&r, 1);
	struct target_dyn d = {0};
	target_render_template(&d, b, "who=%3Cme%3E", 12, &r, 9);
	assert_string_equal(str(&d), "<9|_me_|9>");
	free(d.buf);
	target_plan_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dyn_grows_to_cap), cmocka_unit_test(test_fmt_u64),
		cmocka_unit_test(test_pct_decode),       cmocka_unit_test(test_json_str),
		cmocka_unit_test(test_kv_gen_value),     cmocka_unit_test(test_kv_lookup),
		cmocka_unit_test(test_render_kv),        cmocka_unit_test(test_template),
		cmocka_unit_test(test_template_from_plan),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
