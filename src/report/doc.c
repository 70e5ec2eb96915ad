/* pacer — report content blocks, escapers and number formats (see doc.h). */
#include "report/doc.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "util/units.h"

void doc_init(struct doc *d)
{
	memset(d, 0, sizeof *d);
}

static void block_free(struct doc_block *b)
{
	free(b->text);
	free(b->id);
	for (size_t i = 0; i < b->n_items; i++)
		free(b->items[i]);
	free(b->items);
}

void doc_free(struct doc *d)
{
	for (size_t i = 0; i < d->n; i++)
		block_free(&d->b[i]);
	free(d->b);
	memset(d, 0, sizeof *d);
}

static struct doc_block *push(struct doc *d, enum doc_kind kind)
{
	if (d->oom)
		return NULL;
	if (d->n == d->cap) {
		size_t nc = d->cap ? d->cap * 2 : 32;
		struct doc_block *nb = realloc(d->b, nc * sizeof *nb);
		if (!nb) {
			d->oom = true;
			return NULL;
		}
		d->b = nb;
		d->cap = nc;
	}
	struct doc_block *b = &d->b[d->n++];
	memset(b, 0, sizeof *b);
	b->kind = kind;
	return b;
}

static char *vfmt(struct doc *d, const char *fmt, va_list ap)
{
	char *s = NULL;
	if (vasprintf(&s, fmt, ap) < 0) {
		d->oom = true;
		return NULL;
	}
	return s;
}

static char *dup(struct doc *d, const char *s)
{
	char *c = strdup(s ? s : "");
	if (!c)
		d->oom = true;
	return c;
}

static bool add_item(struct doc *d, struct doc_block *b, char *s)
{
	if (!s)
		return false;
	/* grow in powers of two */
	size_t n = b->n_items;
	if ((n & (n - 1)) == 0 || n == 0) {
		size_t nc = n ? n * 2 : 8;
		if (nc < 8)
			nc = 8;
		char **ni = realloc(b->items, nc * sizeof *ni);
		if (!ni) {
			free(s);
			d->oom = true;
			return false;
		}
		b->items = ni;
	}
	b->items[b->n_items++] = s;
	return true;
}

void doc_heading(struct doc *d, int level, const char *id, const char *fmt, ...)
{
	struct doc_block *b = push(d, DOC_HEADING);
	if (!b)
		return;
	b->level = level < 1 ? 1 : level > 3 ? 3 : level;
	b->id = dup(d, id);
	va_list ap;
	va_start(ap, fmt);
	b->text = vfmt(d, fmt, ap);
	va_end(ap);
}

void doc_para(struct doc *d, bool strong, const char *fmt, ...)
{
	struct doc_block *b = push(d, DOC_PARA);
	if (!b)
		return;
	b->strong = strong;
	va_list ap;
	va_start(ap, fmt);
	b->text = vfmt(d, fmt, ap);
	va_end(ap);
}

void doc_list(struct doc *d)
{
	push(d, DOC_LIST);
}

void doc_item(struct doc *d, const char *fmt, ...)
{
	if (d->oom)
		return;
	if (!d->n || d->b[d->n - 1].kind != DOC_LIST)
		doc_list(d);
	if (d->oom)
		return;
	va_list ap;
	va_start(ap, fmt);
	char *s = vfmt(d, fmt, ap);
	va_end(ap);
	add_item(d, &d->b[d->n - 1], s);
}

void doc_table(struct doc *d, size_t cols, uint32_t right, const char *const *header)
{
	if (cols == 0 || cols > DOC_MAX_COLS)
		return;
	struct doc_block *b = push(d, DOC_TABLE);
	if (!b)
		return;
	b->cols = cols;
	b->right = right;
	for (size_t c = 0; c < cols; c++)
		if (!add_item(d, b, dup(d, header[c])))
			return;
}

void doc_row(struct doc *d, const char *const *cells)
{
	if (d->oom || !d->n || d->b[d->n - 1].kind != DOC_TABLE)
		return;
	struct doc_block *b = &d->b[d->n - 1];
	for (size_t c = 0; c < b->cols; c++)
		if (!add_item(d, b, dup(d, cells[c])))
			return;
}

void doc_chart(struct doc *d, const char *name, const char *caption)
{
	struct doc_block *b = push(d, DOC_CHART);
	if (!b)
		return;
	b->id = dup(d, name);
	b->text = dup(d, caption);
}

/* ---- escaping -------------------------------------------------------------- */

void esc_md(FILE *f, const char *s)
{
	for (; s && *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c < 0x20 || c == 0x7f) {
			fputc(' ', f);
			continue;
		}
		if (strchr("\\`*_[]<>|&~#$", c))
			fputc('\\', f);
		fputc(c, f);
	}
}

void esc_html(FILE *f, const char *s)
{
	for (; s && *s; s++) {
		unsigned char c = (unsigned char)*s;
		switch (c) {
		case '&': fputs("&amp;", f); break;
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '"': fputs("&quot;", f); break;
		case '\'': fputs("&#39;", f); break;
		default:
			if ((c < 0x20 && c != '\t' && c != '\n') || c == 0x7f)
				fputc('?', f);
			else
				fputc(c, f);
		}
	}
}

/* ---- numbers ----------------------------------------------------------------- */

static char *slot(struct fring *r)
{
	char *b = r->b[r->i % (sizeof r->b / sizeof r->b[0])];
	r->i++;
	return b;
}

const char *fmt_us(struct fring *r, double us)
{
	char *b = slot(r);
	if (isnan(us)) {
		snprintf(b, 64, "–");
		return b;
	}
	double a = fabs(us);
	if (a < 1.0)
		snprintf(b, 64, "%.0f ns", us * 1e3);
	else if (a < 9.995)
		snprintf(b, 64, "%.2f µs", us);
	else if (a < 99.95)
		snprintf(b, 64, "%.1f µs", us);
	else if (a < 999.5)
		snprintf(b, 64, "%.0f µs", us);
	else if (a < 9995)
		snprintf(b, 64, "%.2f ms", us / 1e3);
	else if (a < 99950)
		snprintf(b, 64, "%.1f ms", us / 1e3);
	else if (a < 999500)
		snprintf(b, 64, "%.0f ms", us / 1e3);
	else if (a < 9.995e6)
		snprintf(b, 64, "%.2f s", us / 1e6);
	else if (a < 99.95e6)
		snprintf(b, 64, "%.1f s", us / 1e6);
	else
		snprintf(b, 64, "%.0f s", us / 1e6);
	return b;
}

const char *fmt_num(struct fring *r, double v, int decimals)
{
	char *b = slot(r);
	if (!isfinite(v)) {
		snprintf(b, 64, "–");
		return b;
	}
	if (fabs(v) >= 1e15) {
		snprintf(b, 64, "%.3g", v);
		return b;
	}
	return units_fmt_thousands(b, 64, v, decimals);
}

const char *fmt_rate(struct fring *r, double per_s)
{
	if (isfinite(per_s) && (per_s == floor(per_s) || fabs(per_s) >= 1e4))
		return fmt_num(r, per_s, 0);
	return fmt_num(r, per_s, 1);
}

const char *fmt_int(struct fring *r, double n)
{
	return fmt_num(r, n, 0);
}

const char *fmt_pct(struct fring *r, double pct)
{
	char *b = slot(r);
	if (!isfinite(pct))
		snprintf(b, 64, "–");
	else if (pct != 0 && fabs(pct) < 0.01)
		snprintf(b, 64, "%.2g%%", pct);
	else
		snprintf(b, 64, "%.2f%%", pct);
	return b;
}

const char *fmt_bytes(struct fring *r, double v)
{
	char *b = slot(r);
	if (!isfinite(v))
		snprintf(b, 64, "–");
	else if (v >= 1024.0 * 1024 * 1024)
		snprintf(b, 64, "%.2f GiB", v / (1024.0 * 1024 * 1024));
	else if (v >= 1024.0 * 1024)
		snprintf(b, 64, "%.1f MiB", v / (1024.0 * 1024));
	else if (v >= 1024)
		snprintf(b, 64, "%.1f KiB", v / 1024.0);
	else
		snprintf(b, 64, "%.0f B", v);
	return b;
}

const char *fmt_ratio(struct fring *r, double v)
{
	char *b = slot(r);
	double a = fabs(v);
	if (!isfinite(v))
		snprintf(b, 64, "–");
	else if (a < 10)
		snprintf(b, 64, "%.3f", v);
	else if (a < 1000)
		snprintf(b, 64, "%.1f", v);
	else
		snprintf(b, 64, "%.0f", v);
	return b;
}

const char *fmt_s(struct fring *r, double s)
{
	char *b = slot(r);
	if (!isfinite(s))
		snprintf(b, 64, "–");
	else if (s < 1)
		snprintf(b, 64, "%.3f s", s);
	else if (s < 100)
		snprintf(b, 64, "%.1f s", s);
	else
		snprintf(b, 64, "%.0f s", s);
	return b;
}
