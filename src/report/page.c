/* pacer — report content blocks, escapers and number formats (see page.h). */
#include "report/page.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "util/units.h"

void page_init(struct page *d)
{
	memset(d, 0, sizeof *d);
}

static void block_free(struct page_block *b)
{
	free(b->text);
	free(b->id);
	for (size_t i = 0; i < b->n_items; i++) {
		free(b->items[i]);
		if (b->briefs)
			free(b->briefs[i]);
	}
	free(b->items);
	free(b->briefs);
}

void page_free(struct page *d)
{
	for (size_t i = 0; i < d->n; i++)
		block_free(&d->b[i]);
	free(d->b);
	memset(d, 0, sizeof *d);
}

static struct page_block *push(struct page *d, enum page_kind kind)
{
	if (d->oom)
		return NULL;
	if (d->n == d->cap) {
		size_t nc = d->cap ? d->cap * 2 : 32;
		struct page_block *nb = realloc(d->b, nc * sizeof *nb);
		if (!nb) {
			d->oom = true;
			return NULL;
		}
		d->b = nb;
		d->cap = nc;
	}
	struct page_block *b = &d->b[d->n++];
	memset(b, 0, sizeof *b);
	b->kind = kind;
	b->audience = d->audience;
	b->screen = d->screen;
	return b;
}

void page_screen(struct page *d, bool on)
{
	d->screen = on;
}

void page_audience(struct page *d, enum page_audience a)
{
	d->audience = a;
}

static char *vfmt(struct page *d, const char *fmt, va_list ap)
{
	char *s = NULL;
	if (vasprintf(&s, fmt, ap) < 0) {
		d->oom = true;
		return NULL;
	}
	return s;
}

static char *dup(struct page *d, const char *s)
{
	char *c = strdup(s ? s : "");
	if (!c)
		d->oom = true;
	return c;
}

/* Appends s (owned) to b's items and brief (owned, may be NULL) to its
 * short forms (lists only: with_brief). */
static bool add_item_brief(struct page *d, struct page_block *b, char *s, char *brief,
			   bool with_brief)
{
	if (!s) {
		free(brief);
		return false;
	}
	/* grow in powers of two */
	size_t n = b->n_items;
	if ((n & (n - 1)) == 0 || n == 0) {
		size_t nc = n ? n * 2 : 8;
		if (nc < 8)
			nc = 8;
		char **ni = realloc(b->items, nc * sizeof *ni);
		if (ni)
			b->items = ni;
		char **nb = ni && with_brief ? realloc(b->briefs, nc * sizeof *nb) : NULL;
		if (nb)
			b->briefs = nb;
		if (!ni || (with_brief && !nb)) {
			free(s);
			free(brief);
			d->oom = true;
			return false;
		}
	}
	if (with_brief)
		b->briefs[b->n_items] = brief;
	b->items[b->n_items++] = s;
	return true;
}

static bool add_item(struct page *d, struct page_block *b, char *s)
{
	return add_item_brief(d, b, s, NULL, false);
}

void page_heading(struct page *d, int level, const char *id, const char *fmt, ...)
{
	struct page_block *b = push(d, PAGE_HEADING);
	if (!b)
		return;
	b->level = level < 1 ? 1 : level > 3 ? 3 : level;
	b->id = dup(d, id);
	va_list ap;
	va_start(ap, fmt);
	b->text = vfmt(d, fmt, ap);
	va_end(ap);
}

void page_para(struct page *d, bool strong, const char *fmt, ...)
{
	struct page_block *b = push(d, PAGE_PARA);
	if (!b)
		return;
	b->strong = strong;
	va_list ap;
	va_start(ap, fmt);
	b->text = vfmt(d, fmt, ap);
	va_end(ap);
}

void page_list(struct page *d)
{
	push(d, PAGE_LIST);
}

static void vitem(struct page *d, const char *brief, const char *fmt, va_list ap)
{
	if (d->oom)
		return;
	if (!d->n || d->b[d->n - 1].kind != PAGE_LIST || d->b[d->n - 1].audience != d->audience)
		page_list(d);
	if (d->oom)
		return;
	char *s = vfmt(d, fmt, ap);
	char *b = brief ? dup(d, brief) : NULL;
	if (brief && !b) {
		free(s);
		return;
	}
	add_item_brief(d, &d->b[d->n - 1], s, b, true);
}

void page_item(struct page *d, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vitem(d, NULL, fmt, ap);
	va_end(ap);
}

void page_item_brief(struct page *d, const char *brief, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vitem(d, brief, fmt, ap);
	va_end(ap);
}

void page_table(struct page *d, size_t cols, uint32_t right, const char *const *header)
{
	if (cols == 0 || cols > PAGE_MAX_COLS)
		return;
	struct page_block *b = push(d, PAGE_TABLE);
	if (!b)
		return;
	b->cols = cols;
	b->right = right;
	for (size_t c = 0; c < cols; c++)
		if (!add_item(d, b, dup(d, header[c])))
			return;
}

void page_row(struct page *d, const char *const *cells)
{
	if (d->oom || !d->n || d->b[d->n - 1].kind != PAGE_TABLE)
		return;
	struct page_block *b = &d->b[d->n - 1];
	for (size_t c = 0; c < b->cols; c++)
		if (!add_item(d, b, dup(d, cells[c])))
			return;
}

void page_table_wide(struct page *d, uint32_t wide)
{
	if (!d->oom && d->n && d->b[d->n - 1].kind == PAGE_TABLE)
		d->b[d->n - 1].wide = wide;
}

void page_key_figures(struct page *d, size_t n, const char *const *labels,
		      const char *const *values)
{
	if (n == 0 || n > PAGE_MAX_COLS)
		return;
	page_table(d, n, (uint32_t)((1ull << n) - 1), labels);
	page_row(d, values);
	if (!d->oom && d->n && d->b[d->n - 1].kind == PAGE_TABLE)
		d->b[d->n - 1].key = true;
}

void page_chart(struct page *d, const char *name, const char *caption)
{
	struct page_block *b = push(d, PAGE_CHART);
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

/* The numbers themselves are formatted by util/units.c, the one family;
 * these give each a slot of the ring. */

const char *fmt_us(struct fring *r, double us)
{
	return units_fmt_duration(slot(r), sizeof r->b[0], us * 1e3);
}

const char *fmt_num(struct fring *r, double v, int decimals)
{
	return units_fmt_thousands(slot(r), sizeof r->b[0], v, decimals);
}

const char *fmt_rate(struct fring *r, double per_s)
{
	return units_fmt_rate(slot(r), sizeof r->b[0], per_s);
}

const char *fmt_int(struct fring *r, double n)
{
	return fmt_num(r, n, 0);
}

const char *fmt_pct(struct fring *r, double pct)
{
	return units_fmt_pct(slot(r), sizeof r->b[0], pct);
}

const char *fmt_bytes(struct fring *r, double v)
{
	return units_fmt_bytes(slot(r), sizeof r->b[0], v);
}

const char *fmt_ratio(struct fring *r, double v)
{
	return units_fmt_ratio(slot(r), sizeof r->b[0], v);
}

const char *fmt_s(struct fring *r, double s)
{
	return units_fmt_seconds(slot(r), sizeof r->b[0], s);
}
