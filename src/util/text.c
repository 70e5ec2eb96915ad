#include "util/text.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

void text_one_line(char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			*s = '?';
}

static bool shell_plain(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       (c != '\0' && strchr("_./:=@%+,-", c));
}

void text_shell_quote(FILE *f, const char *s)
{
	bool plain = *s != '\0';
	for (const char *p = s; *p && plain; p++)
		plain = shell_plain((unsigned char)*p);
	if (plain) {
		fputs(s, f);
		return;
	}
	fputc('\'', f);
	for (const char *p = s; *p; p++) {
		if (*p == '\'')
			fputs("'\\''", f);
		else
			fputc(*p, f);
	}
	fputc('\'', f);
}

/* Bytes of the valid UTF-8 character at s (1..4), or 0 when it is not
 * one: a stray continuation byte, an overlong form, a surrogate, past
 * U+10FFFF, cut short. */
static size_t utf8_len(const unsigned char *s)
{
	unsigned char c = s[0];
	size_t n;
	unsigned char lo = 0x80, hi = 0xbf; /* the second byte's range */
	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		n = 2;
	else if (c >= 0xe0 && c <= 0xef)
		n = 3;
	else if (c >= 0xf0 && c <= 0xf4)
		n = 4;
	else
		return 0;
	if (c == 0xe0)
		lo = 0xa0;
	else if (c == 0xed)
		hi = 0x9f;
	else if (c == 0xf0)
		lo = 0x90;
	else if (c == 0xf4)
		hi = 0x8f;
	if (s[1] < lo || s[1] > hi)
		return 0;
	for (size_t i = 2; i < n; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	return n;
}

const char *text_term_safe(char *out, size_t cap, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t o = 0;
	while (*p) {
		size_t n = utf8_len(p);
		bool c0 = n == 1 && (*p < 0x20 || *p == 0x7f);
		bool c1 = n == 2 && p[0] == 0xc2 && p[1] < 0xa0;
		if (!n || c0 || c1) { /* one '?' for the byte, or the C1 character */
			if (o + 1 >= cap)
				break;
			out[o++] = '?';
			p += c1 ? 2 : 1;
			continue;
		}
		if (o + n >= cap)
			break;
		memcpy(out + o, p, n);
		o += n;
		p += n;
	}
	out[o] = '\0';
	return out;
}

size_t text_columns(const char *s)
{
	size_t w = 0;
	for (; *s; s++)
		if (((unsigned char)*s & 0xc0) != 0x80)
			w++;
	return w;
}

int text_field(const char *s, int cols)
{
	return cols + (int)(strlen(s) - text_columns(s));
}

void text_errf(char *err, size_t errlen, const char *fmt, ...)
{
	if (!err || !errlen)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	text_one_line(err);
}

size_t text_edit_distance(const char *a, const char *b)
{
	size_t la = strnlen(a, TEXT_NEAR_MAX), lb = strnlen(b, TEXT_NEAR_MAX);
	/* three rows of the dynamic programme: i - 2, i - 1, i */
	size_t rows[3][TEXT_NEAR_MAX + 1];
	size_t *pp = rows[0], *prev = rows[1], *cur = rows[2];
	for (size_t j = 0; j <= lb; j++)
		prev[j] = j;
	for (size_t i = 1; i <= la; i++) {
		cur[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			int ca = tolower((unsigned char)a[i - 1]),
			    cb = tolower((unsigned char)b[j - 1]);
			size_t cost = ca != cb;
			size_t d = prev[j] + 1; /* deletion */
			if (cur[j - 1] + 1 < d)
				d = cur[j - 1] + 1; /* insertion */
			if (prev[j - 1] + cost < d)
				d = prev[j - 1] + cost; /* substitution */
			if (i > 1 && j > 1 && ca == tolower((unsigned char)b[j - 2]) &&
			    tolower((unsigned char)a[i - 2]) == cb && pp[j - 2] + 1 < d)
				d = pp[j - 2] + 1; /* two neighbours swapped */
			cur[j] = d;
		}
		size_t *t = pp;
		pp = prev;
		prev = cur;
		cur = t;
	}
	return prev[lb];
}

void text_near_init(struct text_near *n, const char *word)
{
	n->word = word;
	n->best = NULL;
	n->best_d = SIZE_MAX;
}

void text_near_offer(struct text_near *n, const char *cand)
{
	if (!cand || !*cand || !strcmp(cand, n->word))
		return;
	size_t lw = strlen(n->word), lc = strlen(cand);
	size_t limit = lw <= 4 ? 1 : lw <= 8 ? 2 : 3;
	size_t d = text_edit_distance(n->word, cand);
	if (d > limit || d >= lc || d >= lw || d >= n->best_d)
		return;
	n->best = cand;
	n->best_d = d;
}
