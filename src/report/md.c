/* pacer — the report as Markdown (GitHub-flavoured: pipe tables). Every
 * piece of text is escaped (report/page.c esc_md), so strings from the
 * result — URLs, headers, plan names, warnings — cannot add markup, links,
 * raw HTML or break a table row. */
#include <errno.h>
#include <string.h>

#include "report/render_int.h"

/* Text that starts a paragraph or a list item: a leading -, + or = and a
 * leading "12." / "12)" would start a list or a heading underline. */
static void block_text(FILE *f, const char *s)
{
	if (!s)
		return;
	if (*s == '-' || *s == '+' || *s == '=') {
		fputc('\\', f);
	} else {
		size_t d = 0;
		while (s[d] >= '0' && s[d] <= '9')
			d++;
		if (d && (s[d] == '.' || s[d] == ')')) {
			fwrite(s, 1, d, f);
			fputc('\\', f);
			s += d;
		}
	}
	esc_md(f, s);
}

int md_write(FILE *f, const struct page *d, const char *chart_prefix)
{
	for (size_t i = 0; i < d->n; i++) {
		const struct page_block *b = &d->b[i];
		if (b->audience == PAGE_TERMINAL || b->audience == PAGE_SCREEN)
			continue;
		/* without chart files the charts' heading has nothing under it */
		if (!chart_prefix && b->kind == PAGE_HEADING && b->id &&
		    (!strcmp(b->id, "charts") || !strcmp(b->id, "charts-this")))
			continue;
		switch (b->kind) {
		case PAGE_HEADING:
			for (int l = 0; l < b->level; l++)
				fputc('#', f);
			fputc(' ', f);
			esc_md(f, b->text);
			fputs("\n\n", f);
			break;
		case PAGE_PARA:
			if (b->strong)
				fputs("**", f);
			block_text(f, b->text);
			if (b->strong)
				fputs("**", f);
			fputs("\n\n", f);
			break;
		case PAGE_LIST:
			for (size_t k = 0; k < b->n_items; k++) {
				fputs("- ", f);
				block_text(f, b->items[k]);
				fputc('\n', f);
			}
			if (b->n_items)
				fputc('\n', f);
			break;
		case PAGE_TABLE: {
			size_t rows = page_table_rows(b);
			for (size_t r = 0; r <= rows; r++) {
				fputc('|', f);
				for (size_t c = 0; c < b->cols; c++) {
					fputc(' ', f);
					esc_md(f, b->items[r * b->cols + c]);
					fputs(" |", f);
				}
				fputc('\n', f);
				if (r == 0) {
					fputc('|', f);
					for (size_t c = 0; c < b->cols; c++)
						fputs(b->right & (1u << c) ? " ---: |" : " --- |", f);
					fputc('\n', f);
				}
			}
			fputc('\n', f);
			break;
		}
		case PAGE_CHART:
			if (!chart_prefix)
				break;
			fputs("![", f);
			esc_md(f, b->text);
			fprintf(f, "](%schart-%s.svg)\n\n", chart_prefix, b->id);
			break;
		}
	}
	if (fflush(f) != 0 || ferror(f))
		return errno ? -errno : -EIO;
	return 0;
}
