#include "util/text.h"

#include <stdarg.h>
#include <stdbool.h>
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
