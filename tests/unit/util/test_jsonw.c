/* Tests of the streaming JSON writer (src/util/jsonw.c): exact output of
 * nested documents in compact and indented form, string escaping (control
 * characters, quotes, UTF-8 kept when valid and replaced by U+FFFD when not),
 * non-finite doubles, and a strict RFC 8259 validator run over documents
 * and over many random byte strings. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "util/jsonw.h"
#include "util/rng.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* ---- capture: a writer on an in-memory stream ---- */

struct cap {
	FILE *f;
	char *buf;
	size_t len;
	struct jsonw w;
};

static void cap_open(struct cap *c, int indent)
{
	c->buf = NULL;
	c->len = 0;
	c->f = open_memstream(&c->buf, &c->len);
	assert_non_null(c->f);
	jw_init(&c->w, c->f, indent);
}

/* Closes the stream; c->buf (NUL-terminated, c->len bytes) is then valid
 * until cap_free. */
static const char *cap_close(struct cap *c)
{
	assert_int_equal(fclose(c->f), 0);
	c->f = NULL;
	return c->buf;
}

static void cap_free(struct cap *c)
{
	free(c->buf);
	c->buf = NULL;
}

/* ---- a strict JSON validator (RFC 8259, UTF-8 checked) ---- */

struct jv {
	const unsigned char *p, *end;
	int depth;
};

static void jv_ws(struct jv *v)
{
	while (v->p < v->end && (*v->p == ' ' || *v->p == '\n' || *v->p == '\r' || *v->p == '\t'))
		v->p++;
}

static bool jv_lit(struct jv *v, const char *lit)
{
	size_t n = strlen(lit);
	if ((size_t)(v->end - v->p) < n || memcmp(v->p, lit, n) != 0)
		return false;
	v->p += n;
	return true;
}

static bool jv_hex4(struct jv *v, unsigned *out)
{
	if (v->end - v->p < 4)
		return false;
	unsigned x = 0;
	for (int i = 0; i < 4; i++) {
		unsigned char c = v->p[i];
		x <<= 4;
		if (c >= '0' && c <= '9')
			x |= (unsigned)(c - '0');
		else if (c >= 'a' && c <= 'f')
			x |= (unsigned)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			x |= (unsigned)(c - 'A' + 10);
		else
			return false;
	}
	v->p += 4;
	*out = x;
	return true;
}

/* One UTF-8 scalar value, shortest form, no surrogates. */
static bool jv_utf8(struct jv *v)
{
	const unsigned char *s = v->p;
	size_t avail = (size_t)(v->end - s);
	unsigned cp, len;
	if (s[0] < 0x80)
		len = 1, cp = s[0];
	else if (s[0] >= 0xc2 && s[0] <= 0xdf)
		len = 2, cp = s[0] & 0x1fu;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		len = 3, cp = s[0] & 0x0fu;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		len = 4, cp = s[0] & 0x07u;
	else
		return false;
	if (avail < len)
		return false;
	for (unsigned i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return false;
		cp = (cp << 6) | (s[i] & 0x3fu);
	}
	if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) || cp > 0x10ffff ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return false;
	v->p += len;
	return true;
}

static bool jv_string(struct jv *v)
{
	if (v->p >= v->end || *v->p != '"')
		return false;
	v->p++;
	while (v->p < v->end) {
		unsigned char c = *v->p;
		if (c == '"') {
			v->p++;
			return true;
		}
		if (c < 0x20)
			return false;
		if (c == '\\') {
			v->p++;
			if (v->p >= v->end)
				return false;
			c = *v->p++;
			if (c == 'u') {
				unsigned x;
				if (!jv_hex4(v, &x))
					return false;
				if (x >= 0xd800 && x <= 0xdbff) { /* needs a low surrogate */
					unsigned y;
					if (!jv_lit(v, "\\u") || !jv_hex4(v, &y) || y < 0xdc00 ||
					    y > 0xdfff)
						return false;
				} else if (x >= 0xdc00 && x <= 0xdfff) {
					return false;
				}
			} else if (!strchr("\"\\/bfnrt", c)) {
				return false;
			}
			continue;
		}
		if (!jv_utf8(v))
			return false;
	}
	return false;
}

static bool jv_digits(struct jv *v)
{
	const unsigned char *s = v->p;
	while (v->p < v->end && *v->p >= '0' && *v->p <= '9')
		v->p++;
	return v->p > s;
}

static bool jv_number(struct jv *v)
{
	if (v->p < v->end && *v->p == '-')
		v->p++;
	if (v->p >= v->end)
		return false;
	if (*v->p == '0')
		v->p++;
	else if (!jv_digits(v))
		return false;
	if (v->p < v->end && *v->p == '.') {
		v->p++;
		if (!jv_digits(v))
			return false;
	}
	if (v->p < v->end && (*v->p == 'e' || *v->p == 'E')) {
		v->p++;
		if (v->p < v->end && (*v->p == '+' || *v->p == '-'))
			v->p++;
		if (!jv_digits(v))
			return false;
	}
	return true;
}

static bool jv_value(struct jv *v)
{
	jv_ws(v);
	if (v->p >= v->end)
		return false;
	unsigned char c = *v->p;
	if (c == '{' || c == '[') {
		char close = c == '{' ? '}' : ']';
		if (++v->depth > 1000)
			return false;
		v->p++;
		jv_ws(v);
		if (v->p < v->end && *v->p == close) {
			v->p++;
			v->depth--;
			return true;
		}
		for (;;) {
			if (c == '{') {
				jv_ws(v);
				if (!jv_string(v))
					return false;
				jv_ws(v);
				if (v->p >= v->end || *v->p != ':')
					return false;
				v->p++;
			}
			if (!jv_value(v))
				return false;
			jv_ws(v);
			if (v->p >= v->end)
				return false;
			if (*v->p == ',') {
				v->p++;
				continue;
			}
			if (*v->p != close)
				return false;
			v->p++;
			v->depth--;
			return true;
		}
	}
	if (c == '"')
		return jv_string(v);
	if (c == 't')
		return jv_lit(v, "true");
	if (c == 'f')
		return jv_lit(v, "false");
	if (c == 'n')
		return jv_lit(v, "null");
	return jv_number(v);
}

/* Is buf[0..len) exactly one JSON text? */
static bool json_valid(const char *buf, size_t len)
{
	struct jv v = { (const unsigned char *)buf, (const unsigned char *)buf + len, 0 };
	if (!jv_value(&v))
		return false;
	jv_ws(&v);
	return v.p == v.end;
}

/* The validator itself must tell good from bad. */
static void test_validator(void **state)
{
	(void)state;
	static const char *good[] = {
		"{}", "[]", "0", "-0.5e+3", "\"a\"", " {\"a\":[1,2,{\"b\":null}],\"c\":true} ",
		"\"\\u00e9\\ud83d\\ude00\"", "\"\xc3\xa9\"", "[false]",
	};
	static const char *bad[] = {
		"", "{", "[1,]", "[,1]", "{\"a\"}", "{\"a\":1,}", "01", "1.", "\"\x01\"", "\"\\x\"",
		"\"\xc0\xaf\"", "\"\xed\xa0\x80\"", "\"\x80\"", "\"\\ud800\"", "[1]]", "nul", "[1 2]",
		"{1:2}", "\"abc",
	};
	for (size_t i = 0; i < N(good); i++) {
		if (!json_valid(good[i], strlen(good[i])))
			print_message("validator rejected %s\n", good[i]);
		assert_true(json_valid(good[i], strlen(good[i])));
	}
	for (size_t i = 0; i < N(bad); i++) {
		if (json_valid(bad[i], strlen(bad[i])))
			print_message("validator accepted %s\n", bad[i]);
		assert_false(json_valid(bad[i], strlen(bad[i])));
	}
}

/* ---- exact output ---- */

static void sample_doc(struct jsonw *w)
{
	jw_obj(w);
	jw_key(w, "a");
	jw_u64(w, 1);
	jw_key(w, "b");
	jw_arr(w);
	jw_u64(w, 1);
	jw_i64(w, -2);
	jw_obj(w);
	jw_key(w, "c");
	jw_null(w);
	jw_obj_end(w);
	jw_arr(w);
	jw_arr_end(w);
	jw_arr_end(w);
	jw_key(w, "d");
	jw_obj(w);
	jw_obj_end(w);
	jw_key(w, "e");
	jw_bool(w, true);
	jw_key(w, "f");
	jw_bool(w, false);
	jw_key(w, "g");
	jw_str(w, "x");
	jw_key(w, "h");
	jw_dbl(w, 1.5, 3);
	jw_obj_end(w);
}

static void test_compact_nesting(void **state)
{
	(void)state;
	struct cap c;
	cap_open(&c, 0);
	sample_doc(&c.w);
	const char *out = cap_close(&c);
	assert_string_equal(out, "{\"a\":1,\"b\":[1,-2,{\"c\":null},[]],\"d\":{},\"e\":true,"
	                         "\"f\":false,\"g\":\"x\",\"h\":1.500}");
	assert_true(json_valid(c.buf, c.len));
	cap_free(&c);

	/* top-level array of containers; empty containers side by side */
	cap_open(&c, 0);
	jw_arr(&c.w);
	jw_obj(&c.w);
	jw_obj_end(&c.w);
	jw_obj(&c.w);
	jw_key(&c.w, "a");
	jw_arr(&c.w);
	jw_arr(&c.w);
	jw_arr_end(&c.w);
	jw_arr(&c.w);
	jw_arr_end(&c.w);
	jw_arr_end(&c.w);
	jw_key(&c.w, "b");
	jw_str(&c.w, NULL); /* NULL string: null */
	jw_obj_end(&c.w);
	jw_u64(&c.w, 3);
	jw_arr_end(&c.w);
	out = cap_close(&c);
	assert_string_equal(out, "[{},{\"a\":[[],[]],\"b\":null},3]");
	cap_free(&c);

	/* a scalar document */
	cap_open(&c, 0);
	jw_str(&c.w, "only");
	assert_string_equal(cap_close(&c), "\"only\"");
	cap_free(&c);
}

static void test_indented(void **state)
{
	(void)state;
	struct cap c;
	cap_open(&c, 2);
	sample_doc(&c.w);
	const char *out = cap_close(&c);
	assert_string_equal(out, "{\n"
	                         "  \"a\": 1,\n"
	                         "  \"b\": [\n"
	                         "    1,\n"
	                         "    -2,\n"
	                         "    {\n"
	                         "      \"c\": null\n"
	                         "    },\n"
	                         "    []\n"
	                         "  ],\n"
	                         "  \"d\": {},\n"
	                         "  \"e\": true,\n"
	                         "  \"f\": false,\n"
	                         "  \"g\": \"x\",\n"
	                         "  \"h\": 1.500\n"
	                         "}\n");
	assert_true(json_valid(c.buf, c.len));
	cap_free(&c);

	cap_open(&c, 4);
	jw_arr(&c.w);
	jw_u64(&c.w, 1);
	jw_arr_end(&c.w);
	assert_string_equal(cap_close(&c), "[\n    1\n]\n");
	cap_free(&c);
}

static void test_numbers(void **state)
{
	(void)state;
	struct cap c;
	cap_open(&c, 0);
	jw_arr(&c.w);
	jw_u64(&c.w, UINT64_MAX);
	jw_i64(&c.w, INT64_MIN);
	jw_i64(&c.w, INT64_MAX);
	jw_u64(&c.w, 0);
	jw_dbl(&c.w, 0.1234567, 3);
	jw_dbl(&c.w, -2.5, 1);
	jw_dbl(&c.w, 42.0, 0);
	jw_dbl(&c.w, NAN, 3);
	jw_dbl(&c.w, INFINITY, 3);
	jw_dbl(&c.w, -INFINITY, 0);
	jw_dbl(&c.w, 1e20, 2);
	jw_arr_end(&c.w);
	const char *out = cap_close(&c);
	assert_string_equal(out, "[18446744073709551615,-9223372036854775808,9223372036854775807,0,"
	                         "0.123,-2.5,42,null,null,null,100000000000000000000.00]");
	assert_true(json_valid(c.buf, c.len));
	cap_free(&c);

	/* non-finite values as object members keep the commas right */
	cap_open(&c, 0);
	jw_obj(&c.w);
	jw_key(&c.w, "x");
	jw_dbl(&c.w, NAN, 2);
	jw_key(&c.w, "y");
	jw_dbl(&c.w, 1, 2);
	jw_obj_end(&c.w);
	assert_string_equal(cap_close(&c), "{\"x\":null,\"y\":1.00}");
	cap_free(&c);
}

/* ---- escaping ---- */

struct esc_case {
	const char *in;
	size_t len;   /* 0: strlen(in) */
	const char *want; /* without the surrounding quotes */
};

#define FFFD "\\ufffd"

static const struct esc_case escapes[] = {
	{ "", 0, "" },
	{ "plain text /slash", 0, "plain text /slash" },
	{ "a\"b", 0, "a\\\"b" },
	{ "\\", 0, "\\\\" },
	{ "\\\"", 0, "\\\\\\\"" },
	{ "\n\r\t", 0, "\\n\\r\\t" },
	{ "\x01\x08\x0c\x1b\x1f", 0, "\\u0001\\u0008\\u000c\\u001b\\u001f" },
	{ "a\x7f" "b", 0, "a\\u007fb" },
	{ "a\0b", 3, "a\\u0000b" },
	{ " ~", 0, " ~" },
	/* valid UTF-8 is kept as is */
	{ "caf\xc3\xa9", 0, "caf\xc3\xa9" },
	{ "\xc2\x80", 0, "\xc2\x80" },
	{ "\xdf\xbf", 0, "\xdf\xbf" },
	{ "\xe2\x82\xac", 0, "\xe2\x82\xac" },
	{ "\xe0\xa0\x80", 0, "\xe0\xa0\x80" },
	{ "\xed\x9f\xbf", 0, "\xed\x9f\xbf" },       /* U+D7FF */
	{ "\xee\x80\x80", 0, "\xee\x80\x80" },       /* U+E000 */
	{ "\xef\xbf\xbf", 0, "\xef\xbf\xbf" },       /* U+FFFF */
	{ "\xf0\x9f\x98\x80", 0, "\xf0\x9f\x98\x80" }, /* U+1F600 */
	{ "\xf4\x8f\xbf\xbf", 0, "\xf4\x8f\xbf\xbf" }, /* U+10FFFF */
	/* lone continuation bytes */
	{ "\x80", 0, FFFD },
	{ "a\xbf" "b", 0, "a" FFFD "b" },
	/* overlong forms */
	{ "\xc0\xaf", 0, FFFD FFFD },
	{ "\xc1\xbf", 0, FFFD FFFD },
	{ "\xe0\x80\xaf", 0, FFFD FFFD FFFD },
	{ "\xe0\x9f\xbf", 0, FFFD FFFD FFFD },
	{ "\xf0\x80\x80\xaf", 0, FFFD FFFD FFFD FFFD },
	{ "\xf0\x8f\xbf\xbf", 0, FFFD FFFD FFFD FFFD },
	/* UTF-16 surrogates */
	{ "\xed\xa0\x80", 0, FFFD FFFD FFFD },
	{ "\xed\xbf\xbf", 0, FFFD FFFD FFFD },
	/* above U+10FFFF and bytes never valid */
	{ "\xf4\x90\x80\x80", 0, FFFD FFFD FFFD FFFD },
	{ "\xf5\x80\x80\x80", 0, FFFD FFFD FFFD FFFD },
	{ "\xf8\x88\x80\x80\x80", 0, FFFD FFFD FFFD FFFD FFFD },
	{ "\xfe\xff", 0, FFFD FFFD },
	/* truncated sequences: at the end, and followed by ASCII */
	{ "\xc3", 0, FFFD },
	{ "\xe2\x82", 0, FFFD FFFD },
	{ "\xf0\x9f\x98", 0, FFFD FFFD FFFD },
	{ "\xe2\x82" "A", 0, FFFD FFFD "A" },
	{ "\xf0\x9f\x98\"", 0, FFFD FFFD FFFD "\\\"" },
	/* a valid sequence right after an invalid one survives */
	{ "\xc3\xc3\xa9", 0, FFFD "\xc3\xa9" },
	/* jw_strn stops at n even inside a sequence */
	{ "\xe2\x82\xac", 2, FFFD FFFD },
};

static void test_escaping(void **state)
{
	(void)state;
	char want[256];
	for (size_t i = 0; i < N(escapes); i++) {
		const struct esc_case *e = &escapes[i];
		size_t len = e->len ? e->len : strlen(e->in);
		struct cap c;
		cap_open(&c, 0);
		jw_strn(&c.w, e->in, len);
		const char *out = cap_close(&c);
		snprintf(want, sizeof want, "\"%s\"", e->want);
		if (strcmp(out, want) != 0)
			print_message("case %zu: got %s, want %s\n", i, out, want);
		assert_string_equal(out, want);
		assert_true(json_valid(c.buf, c.len));
		cap_free(&c);
	}
}

static void test_keys_escaped(void **state)
{
	(void)state;
	struct cap c;
	cap_open(&c, 0);
	jw_obj(&c.w);
	jw_key(&c.w, "q\"k\n\xff");
	jw_str(&c.w, "v");
	jw_obj_end(&c.w);
	const char *out = cap_close(&c);
	assert_string_equal(out, "{\"q\\\"k\\n" FFFD "\":\"v\"}");
	assert_true(json_valid(c.buf, c.len));
	cap_free(&c);
}

/* Any bytes at all come out as a valid JSON string, as keys and values. */
static void test_random_bytes_valid(void **state)
{
	(void)state;
	struct rng r;
	rng_seed(&r, 7);
	unsigned char bytes[48];
	for (int iter = 0; iter < 20000; iter++) {
		size_t len = (size_t)(rng_next(&r) % sizeof bytes);
		uint64_t mode = rng_next(&r) % 3;
		for (size_t i = 0; i < len; i++) {
			uint64_t x = rng_next(&r);
			if (mode == 0) /* any byte */
				bytes[i] = (unsigned char)x;
			else if (mode == 1) /* mostly high bytes: UTF-8 lookalikes */
				bytes[i] = (unsigned char)(0x80 | (x & 0x7f));
			else /* lead bytes then continuation bytes */
				bytes[i] = (unsigned char)((x & 3) == 0 ? 0xc0 | ((x >> 8) & 0x3f)
				                                        : 0x80 | ((x >> 8) & 0x3f));
		}
		struct cap c;
		cap_open(&c, iter & 1 ? 2 : 0);
		jw_obj(&c.w);
		jw_key(&c.w, "k");
		jw_strn(&c.w, (const char *)bytes, len);
		jw_key(&c.w, "a");
		jw_arr(&c.w);
		jw_strn(&c.w, (const char *)bytes, len);
		jw_strn(&c.w, (const char *)bytes, len / 2);
		jw_arr_end(&c.w);
		jw_obj_end(&c.w);
		cap_close(&c);
		if (!json_valid(c.buf, c.len)) {
			print_message("invalid JSON for %zu random bytes (mode %llu): %s\n", len,
			              (unsigned long long)mode, c.buf);
			fail();
		}
		cap_free(&c);
	}
}

/* A report-shaped document, written to a real temporary file, reads back as
 * one valid JSON text. */
static void test_sample_document_file(void **state)
{
	(void)state;
	char path[] = "/tmp/test_jsonw_XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	FILE *f = fdopen(fd, "w+");
	assert_non_null(f);
	struct jsonw w;
	jw_init(&w, f, 2);
	jw_obj(&w);
	jw_key(&w, "schema");
	jw_str(&w, "pacer.run/1");
	jw_key(&w, "argv");
	jw_arr(&w);
	jw_str(&w, "pacer");
	jw_str(&w, "run");
	jw_str(&w, "-H");
	jw_str(&w, "X-Odd: \"quoted\" \\ \t\x01 caf\xc3\xa9 \xff");
	jw_arr_end(&w);
	jw_key(&w, "steps");
	jw_arr(&w);
	for (int s = 0; s < 3; s++) {
		jw_obj(&w);
		jw_key(&w, "rate_per_s");
		jw_dbl(&w, 1000.0 * (s + 1), 1);
		jw_key(&w, "latency_us");
		jw_obj(&w);
		jw_key(&w, "p50");
		jw_dbl(&w, 12.5 * (s + 1), 3);
		jw_key(&w, "p99");
		jw_dbl(&w, s == 2 ? NAN : 99.0, 3);
		jw_obj_end(&w);
		jw_key(&w, "errors");
		jw_obj(&w);
		jw_obj_end(&w);
		jw_key(&w, "passed");
		jw_bool(&w, s < 2);
		jw_obj_end(&w);
	}
	jw_arr_end(&w);
	jw_key(&w, "note");
	jw_null(&w);
	jw_obj_end(&w);
	assert_int_equal(fflush(f), 0);
	rewind(f);
	char buf[4096];
	size_t n = fread(buf, 1, sizeof buf, f);
	assert_true(n > 0 && n < sizeof buf);
	fclose(f);
	unlink(path);
	buf[n] = '\0';
	if (!json_valid(buf, n))
		print_message("invalid:\n%s\n", buf);
	assert_true(json_valid(buf, n));
	assert_non_null(strstr(buf, "\"p99\": null"));
	assert_non_null(strstr(buf, "\"X-Odd: \\\"quoted\\\" \\\\ \\t\\u0001 caf\xc3\xa9 " FFFD "\""));
	assert_int_equal(buf[n - 1], '\n');
}

/* Nesting up to the writer's depth cap keeps the commas right. */
static void test_deep_nesting(void **state)
{
	(void)state;
	const int depth = JSONW_DEPTH - 1;
	struct cap c;
	cap_open(&c, 0);
	for (int i = 0; i < depth; i++) {
		jw_arr(&c.w);
		jw_u64(&c.w, (uint64_t)i);
	}
	for (int i = 0; i < depth; i++) {
		jw_arr_end(&c.w);
		jw_u64(&c.w, (uint64_t)i);
	}
	cap_close(&c);
	/* expected: [0,[1,[2,...[30]0]1]...]  — the last value is top-level */
	char want[1024];
	size_t o = 0;
	for (int i = 0; i < depth; i++)
		o += (size_t)snprintf(want + o, sizeof want - o, "%s[%d", i ? "," : "", i);
	for (int i = 0; i < depth - 1; i++)
		o += (size_t)snprintf(want + o, sizeof want - o, "],%d", i);
	o += (size_t)snprintf(want + o, sizeof want - o, "]%d", depth - 1);
	assert_string_equal(c.buf, want);
	cap_free(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_validator),
		cmocka_unit_test(test_compact_nesting),
		cmocka_unit_test(test_indented),
		cmocka_unit_test(test_numbers),
		cmocka_unit_test(test_escaping),
		cmocka_unit_test(test_keys_escaped),
		cmocka_unit_test(test_random_bytes_valid),
		cmocka_unit_test(test_sample_document_file),
		cmocka_unit_test(test_deep_nesting),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
