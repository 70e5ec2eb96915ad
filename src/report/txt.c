/* pacer — the compact terminal summary: the headline, the result tables
 * (aligned columns) and the test conditions and limits, wrapped at 78
 * columns. Blocks meant for the report only (PAGE_REPORT: the details) are
 * left out, and a list item with a short form (page_item_brief) is said in
 * it, so that each caveat is said once and briefly. Control bytes (ESC
 * among them) and C1 controls from the result are replaced by '?', so a
 * hostile string cannot drive the terminal. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "report/render_int.h"
#include "util/text.h"

#define WIDTH 78

/* A copy of s safe for a terminal; NULL when out of memory. */
static char *clean(const char *s)
{
	size_t n = strlen(s ? s : "");
	char *o = malloc(n + 1), *p = o;
	if (!o)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c < 0x20 || c == 0x7f) {
			*p++ = '?';
		} else if (c == 0xc2 && i + 1 < n && (unsigned char)s[i + 1] >= 0x80 &&
			   (unsigned char)s[i + 1] <= 0x9f) {
			*p++ = '?';
			i++;
		} else {
			*p++ = (char)c;
		}
	}
	*p = '\0';
	return o;
}

/* Word-wrapped text: first line after `first`, the others after `rest`. */
static int wrap(FILE *f, const char *text, const char *first, const char *rest)
{
	char *t = clean(text);
	if (!t)
		return -ENOMEM;
	const char *lead = first;
	size_t col = 0;
	fputs(lead, f);
	col = text_columns(lead);
	size_t lead_w = col;
	char *p = t;
	bool line_empty = true;
	while (*p) {
		while (*p == ' ')
			p++;
		if (!*p)
			break;
		char *e = p;
		while (*e && *e != ' ')
			e++;
		char save = *e;
		*e = '\0';
		size_t w = text_columns(p);
		if (!line_empty && col + 1 + w > WIDTH) {
			fputc('\n', f);
			lead = rest;
			fputs(lead, f);
			col = text_columns(lead);
			lead_w = col;
			line_empty = true;
		}
		if (!line_empty) {
			fputc(' ', f);
			col++;
		}
		fputs(p, f);
		col += w;
		line_empty = false;
		*e = save;
		p = e;
	}
	(void)lead_w;
	fputc('\n', f);
	free(t);
	return 0;
}

static int table(FILE *f, const struct page_block *b)
{
	size_t rows = page_table_rows(b);
	size_t wcol[PAGE_MAX_COLS] = {0};
	char **cells = calloc(b->n_items, sizeof *cells);
	if (!cells)
		return -ENOMEM;
	int rc = 0;
	for (size_t i = 0; i < b->n_items; i++) {
		cells[i] = clean(b->items[i]);
		if (!cells[i]) {
			rc = -ENOMEM;
			goto out;
		}
		size_t w = text_columns(cells[i]);
		/* a long URL or command: cut it in the table; a left-aligned last
		 * column pads nothing, so it stays whole (a ramp step's verdict
		 * names every clause that failed) */
		size_t col = i % b->cols;
		bool free_end = col == b->cols - 1 && !(b->right & (1u << col));
		if (w > 60 && !free_end) {
			size_t cut = 0, seen = 0;
			while (cells[i][cut] && seen < 57) {
				cut++;
				while (((unsigned char)cells[i][cut] & 0xc0) == 0x80)
					cut++;
				seen++;
			}
			memcpy(cells[i] + cut, "...", 4);
			w = 60;
		}
		if (w > wcol[i % b->cols])
			wcol[i % b->cols] = w;
	}
	for (size_t r = 0; r <= rows; r++) {
		fputs("  ", f);
		for (size_t c = 0; c < b->cols; c++) {
			const char *s = cells[r * b->cols + c];
			size_t pad = wcol[c] - text_columns(s);
			bool right = b->right & (1u << c);
			if (right)
				for (size_t k = 0; k < pad; k++)
					fputc(' ', f);
			fputs(s, f);
			if (c + 1 < b->cols) {
				if (!right)
					for (size_t k = 0; k < pad; k++)
						fputc(' ', f);
				fputs("  ", f);
			}
		}
		fputc('\n', f);
	}
out:
	for (size_t i = 0; i < b->n_items; i++)
		free(cells[i]);
	free(cells);
	return rc;
}

/* Blocks of one section (by its level-2 heading id); the heading is printed
 * unless it is the summary's. */
static int section(FILE *f, const struct page *d, const char *want)
{
	const char *cur = "";
	int rc = 0;
	int prev = -1; /* the kind of the last block printed; -1: none yet */
	for (size_t i = 0; i < d->n && !rc; i++) {
		const struct page_block *b = &d->b[i];
		if (b->kind == PAGE_HEADING && b->level <= 2)
			cur = b->id ? b->id : "";
		if (strcmp(cur, want) != 0 || b->level == 1 || b->audience == PAGE_REPORT)
			continue;
		switch (b->kind) {
		case PAGE_HEADING:
			if (b->level == 2 && !strcmp(want, "summary"))
				break;
			fputc('\n', f);
			rc = wrap(f, b->text, b->level == 2 ? "" : "  ", "  ");
			break;
		case PAGE_PARA:
			fputc('\n', f);
			rc = wrap(f, b->text, "  ", "  ");
			break;
		case PAGE_LIST:
			for (size_t k = 0; k < b->n_items && !rc; k++) {
				const char *s = b->briefs && b->briefs[k] ? b->briefs[k] : b->items[k];
				if (*s)
					rc = wrap(f, s, "  - ", "    ");
			}
			break;
		case PAGE_TABLE:
			/* a table without its heading (the report's) stands apart */
			if (prev == -1 || prev == PAGE_PARA)
				fputc('\n', f);
			rc = table(f, b);
			break;
		case PAGE_CHART:
			break;
		}
		if (b->kind != PAGE_CHART)
			prev = (int)b->kind;
	}
	return rc;
}

int txt_write(FILE *f, const struct page *d)
{
	int rc = 0;
	for (size_t i = 0; i < d->n && !rc; i++)
		if (d->b[i].kind == PAGE_HEADING && d->b[i].level == 1)
			rc = wrap(f, d->b[i].text, "", "  ");
	static const char *const order[] = {"summary", "results", "cost", "conditions"};
	for (size_t k = 0; k < sizeof order / sizeof order[0] && !rc; k++)
		rc = section(f, d, order[k]);
	if (rc)
		return rc;
	if (fflush(f) != 0 || ferror(f))
		return errno ? -errno : -EIO;
	return 0;
}
