/* Tests of the text helpers (src/util/text.c): text_one_line, and
 * text_shell_quote checked two ways: its exact output for plain and quoted
 * words, and that /bin/sh reads every quoted word back as the original
 * string (spaces, quotes, $, backslashes, newlines, non-ASCII, empty). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "util/text.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* text_shell_quote(s) as a malloc'd string. */
static char *quoted(const char *s)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_non_null(f);
	text_shell_quote(f, s);
	assert_int_equal(fclose(f), 0);
	return buf;
}

static void test_one_line(void **state)
{
	(void)state;
	char s[] = "a\nb\tc\x7f" "d\r";
	text_one_line(s);
	assert_string_equal(s, "a?b?c?d?");
}

static void test_shell_quote_exact(void **state)
{
	(void)state;
	static const struct {
		const char *in, *out;
	} v[] = {
		{"run", "run"},
		{"--rate=1000", "--rate=1000"},
		{"http://127.0.0.1:8080/a_b.c?x", "'http://127.0.0.1:8080/a_b.c?x'"},
		{"user@host:/p,q+r%2F", "user@host:/p,q+r%2F"},
		{"", "''"},
		{"a b", "'a b'"},
		{"it's", "'it'\\''s'"},
		{"'", "''\\'''"},
		{"$HOME", "'$HOME'"},
		{"p99<100ms", "'p99<100ms'"},
		{"caf\xc3\xa9", "'caf\xc3\xa9'"},
	};
	for (size_t i = 0; i < N(v); i++) {
		char *q = quoted(v[i].in);
		if (strcmp(q, v[i].out) != 0)
			fail_msg("quote(%s) = %s, want %s", v[i].in, q, v[i].out);
		free(q);
	}
}

/* What sh makes of the word: `printf %s WORD` run by /bin/sh. */
static char *through_sh(const char *word)
{
	char *cmd = NULL;
	assert_true(asprintf(&cmd, "printf %%s %s", word) > 0);
	FILE *p = popen(cmd, "r");
	assert_non_null(p);
	char *out = NULL;
	size_t cap = 0, n = 0;
	FILE *m = open_memstream(&out, &cap);
	assert_non_null(m);
	char buf[256];
	while ((n = fread(buf, 1, sizeof buf, p)) > 0)
		fwrite(buf, 1, n, m);
	assert_int_equal(pclose(p), 0);
	assert_int_equal(fclose(m), 0);
	free(cmd);
	return out;
}

static void test_shell_round_trip(void **state)
{
	(void)state;
	static const char *const words[] = {
		"plain",    "two words", "it's",      "''",         "\"dq\"",      "$HOME",
		"$(false)", "`false`",   "back\\slash", "new\nline", "tab\there",  "*",
		"a;b&c|d",  "-n",        "~",         "caf\xc3\xa9", "%s %d",      "!x",
	};
	for (size_t i = 0; i < N(words); i++) {
		char *q = quoted(words[i]);
		char *back = through_sh(q);
		if (strcmp(back, words[i]) != 0)
			fail_msg("sh read %s back as [%s], want [%s]", q, back, words[i]);
		free(back);
		free(q);
	}
}

/* A field width in columns: multi-byte UTF-8 counts once. */
static void test_field(void **state)
{
	(void)state;
	assert_int_equal(text_field("2.31 ms", 9), 9);
	assert_int_equal(text_field("2.31 \xc2\xb5s", 9), 10);
	assert_int_equal(text_field("\xe2\x80\x93", 9), 11);
	assert_int_equal(text_columns("2.31 \xc2\xb5s"), 7);
	assert_int_equal(text_columns(""), 0);
	char b[32];
	snprintf(b, sizeof b, "[%*s]", text_field("1 \xc2\xb5s", 6), "1 \xc2\xb5s");
	assert_string_equal(b, "[  1 \xc2\xb5s]"); /* six columns, seven bytes */
}

static void test_term_safe(void **state)
{
	(void)state;
	static const struct {
		const char *in, *out;
	} cases[] = {
		{"plain http://h/ 2.31 \xc2\xb5s \xe2\x82\xac \xf0\x9f\x98\x80", NULL},
		{"\x1b[2J\x1b]0;owned\x07x", "?[2J?]0;owned?x"},
		{"a\nb\rc\td\x7f", "a?b?c?d?"},
		{"csi \xc2\x9b[31m, nel \xc2\x85.", "csi ?[31m, nel ?."}, /* C1 in UTF-8 */
		{"raw \x9b[31m \xff \xc0\xaf \xed\xa0\x80 \xe2\x82", "raw ?[31m ? ?? ??? ??"},
		{"", ""},
	};
	char out[64];
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		const char *want = cases[i].out ? cases[i].out : cases[i].in; /* NULL: as it is */
		assert_ptr_equal(text_term_safe(out, sizeof out, cases[i].in), out);
		assert_string_equal(out, want);
	}
	/* cut at a character, never inside one */
	char small[6];
	assert_string_equal(text_term_safe(small, sizeof small, "ab\xe2\x82\xac\x1b"),
			    "ab\xe2\x82\xac");
	assert_string_equal(text_term_safe(small, 5, "ab\xe2\x82\xac"), "ab");
	assert_string_equal(text_term_safe(small, 1, "abc"), "");
}

/* Damerau-Levenshtein (optimal string alignment) against distances worked
 * out by hand, and "did you mean"'s choice and threshold. */
static void test_edit_distance(void **state)
{
	(void)state;
	static const struct {
		const char *a, *b;
		size_t d;
	} cases[] = {
		{"", "", 0},
		{"", "abc", 3},
		{"abc", "", 3},
		{"run", "run", 0},
		{"rnu", "run", 1},            /* a swap is one edit */
		{"duraton", "duration", 1},   /* a letter left out */
		{"durattion", "duration", 1}, /* one too many */
		{"poison", "poisson", 1},
		{"htm", "html", 1},
		{"HTML", "html", 0}, /* ASCII case ignored */
		{"kitten", "sitting", 3},
		{"ca", "abc", 3}, /* OSA, not 2 */
		{"abcdef", "badcfe", 3},
		{"connetcions", "connections", 1},
		{"steps", "step", 1},
		{"xyz", "abc", 3},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		size_t d = text_edit_distance(cases[i].a, cases[i].b);
		if (d != cases[i].d)
			fail_msg("distance('%s', '%s') = %zu, expected %zu", cases[i].a, cases[i].b,
				 d, cases[i].d);
		/* symmetric */
		assert_int_equal(text_edit_distance(cases[i].b, cases[i].a), d);
	}
	/* longer than TEXT_NEAR_MAX: the first 64 bytes only, no overflow */
	char l1[200], l2[200];
	memset(l1, 'a', sizeof l1 - 1);
	l1[sizeof l1 - 1] = '\0';
	memcpy(l2, l1, sizeof l2);
	l2[150] = 'b';
	assert_int_equal(text_edit_distance(l1, l2), 0);
	l2[10] = 'b';
	assert_int_equal(text_edit_distance(l1, l2), 1);
}

static const char *nearest(const char *word, const char *const *cands, size_t n)
{
	struct text_near t;
	text_near_init(&t, word);
	for (size_t i = 0; i < n; i++)
		text_near_offer(&t, cands[i]);
	return t.best;
}

static void test_near(void **state)
{
	(void)state;
	static const char *const fmts[] = {"md", "html", "text", "csv", "hgrm", "hlog"};
	static const char *const opts[] = {"duration", "drain",       "rate",        "requests",
					   "repeat",   "connections", "concurrency", "max-streams"};
#define NEAR(w, c) nearest((w), (c), sizeof(c) / sizeof((c)[0]))
	assert_string_equal(NEAR("htm", fmts), "html");
	assert_string_equal(NEAR("HTML", fmts), "html");
	assert_string_equal(NEAR("txet", fmts), "text");
	assert_string_equal(NEAR("mdd", fmts), "md");
	assert_string_equal(NEAR("duraton", opts), "duration");
	assert_string_equal(NEAR("rates", opts), "rate");
	assert_string_equal(NEAR("connectoins", opts), "connections");
	assert_string_equal(NEAR("concurency", opts), "concurrency");
	assert_string_equal(NEAR("max-stream", opts), "max-streams");
	/* too far, or too short to tell: nothing */
	assert_null(NEAR("x", fmts));
	assert_null(NEAR("pdf", fmts));  /* 3 edits from md */
	assert_null(NEAR("json", fmts)); /* 2 edits from text/hlog: too many for 4 bytes */
	assert_null(NEAR("vus", opts));
	assert_null(NEAR("iterations", opts));
	assert_null(NEAR("", fmts));
	/* the word itself is no suggestion; the first of equals wins */
	static const char *const same[] = {"rate", "rats", "rare"};
	assert_string_equal(NEAR("rat", same), "rate");
	assert_null(nearest("rate", same, 1));
#undef NEAR
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_one_line),
		cmocka_unit_test(test_shell_quote_exact),
		cmocka_unit_test(test_shell_round_trip),
		cmocka_unit_test(test_field),
		cmocka_unit_test(test_term_safe),
		cmocka_unit_test(test_edit_distance),
		cmocka_unit_test(test_near),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
