#include "util/jsonw.h"

#include <assert.h>
#include <math.h>
#include <string.h>

void jw_init(struct jsonw *w, FILE *f, int indent)
{
	w->f = f;
	w->depth = 0;
	w->first[0] = true;
	w->after_key = false;
	w->indent = indent;
}

static void newline(struct jsonw *w)
{
	if (!w->indent)
		return;
	fputc('\n', w->f);
	for (int i = 0; i < w->depth * w->indent; i++)
		fputc(' ', w->f);
}

/* Separator before a value or key. */
static void pre(struct jsonw *w)
{
	if (w->after_key) {
		w->after_key = false;
		return;
	}
	if (w->depth > 0) {
		if (!w->first[w->depth])
			fputc(',', w->f);
		newline(w);
	}
	w->first[w->depth] = false;
}

static void open(struct jsonw *w, char c)
{
	pre(w);
	fputc(c, w->f);
	assert(w->depth < JSONW_DEPTH - 1);
	w->depth++;
	w->first[w->depth] = true;
}

static void close_(struct jsonw *w, char c)
{
	bool empty = w->first[w->depth];
	if (w->depth > 0)
		w->depth--;
	if (!empty)
		newline(w);
	fputc(c, w->f);
	if (w->depth == 0 && w->indent)
		fputc('\n', w->f);
}

void jw_obj(struct jsonw *w) { open(w, '{'); }
void jw_obj_end(struct jsonw *w) { close_(w, '}'); }
void jw_arr(struct jsonw *w) { open(w, '['); }
void jw_arr_end(struct jsonw *w) { close_(w, ']'); }

/* Length of a valid UTF-8 sequence at s (1..4), or 0 if invalid. */
static size_t utf8_len(const unsigned char *s, size_t n)
{
	unsigned char c = s[0];
	size_t len;
	uint32_t cp;
	if (c < 0x80)
		return 1;
	if ((c & 0xe0) == 0xc0) {
		len = 2;
		cp = c & 0x1f;
	} else if ((c & 0xf0) == 0xe0) {
		len = 3;
		cp = c & 0x0f;
	} else if ((c & 0xf8) == 0xf0) {
		len = 4;
		cp = c & 0x07;
	} else {
		return 0;
	}
	if (len > n)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
	    cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return len;
}

static void write_escaped(FILE *f, const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	fputc('"', f);
	for (size_t i = 0; i < n;) {
		unsigned char c = p[i];
		if (c == '"' || c == '\\') {
			fputc('\\', f);
			fputc(c, f);
			i++;
		} else if (c < 0x20 || c == 0x7f) {
			switch (c) {
			case '\n': fputs("\\n", f); break;
			case '\r': fputs("\\r", f); break;
			case '\t': fputs("\\t", f); break;
			default: fprintf(f, "\\u%04x", c); break;
			}
			i++;
		} else {
			size_t l = utf8_len(p + i, n - i);
			if (l == 0) {
				fputs("\\ufffd", f);
				i++;
			} else {
				fwrite(p + i, 1, l, f);
				i += l;
			}
		}
	}
	fputc('"', f);
}

void jw_key(struct jsonw *w, const char *k)
{
	pre(w);
	write_escaped(w->f, k, strlen(k));
	fputs(w->indent ? ": " : ":", w->f);
	w->after_key = true;
}

void jw_strn(struct jsonw *w, const char *s, size_t n)
{
	pre(w);
	write_escaped(w->f, s, n);
}

void jw_str(struct jsonw *w, const char *s)
{
	if (!s) {
		jw_null(w);
		return;
	}
	jw_strn(w, s, strlen(s));
}

void jw_u64(struct jsonw *w, uint64_t v)
{
	pre(w);
	fprintf(w->f, "%llu", (unsigned long long)v);
}

void jw_i64(struct jsonw *w, int64_t v)
{
	pre(w);
	fprintf(w->f, "%lld", (long long)v);
}

void jw_dbl(struct jsonw *w, double v, int decimals)
{
	pre(w);
	if (!isfinite(v))
		fputs("null", w->f);
	else
		fprintf(w->f, "%.*f", decimals, v);
}

void jw_bool(struct jsonw *w, bool v)
{
	pre(w);
	fputs(v ? "true" : "false", w->f);
}

void jw_null(struct jsonw *w)
{
	pre(w);
	fputs("null", w->f);
}
