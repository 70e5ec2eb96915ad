/* pacer — the report as one self-contained HTML page: inline CSS, the charts
 * as inline SVG, no script and nothing fetched (a Content-Security-Policy of
 * default-src 'none' says so to the browser too). Every piece of text is
 * escaped (& < > " '), and the page is well-formed XML as well as HTML, so
 * XML tools can check it. */
#include <errno.h>
#include <string.h>

#include "report/render_int.h"

static const char css[] =
	"body{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;margin:0;color:#1a1a1a;"
	"background:#fafafa;line-height:1.45}\n"
	"main{max-width:980px;margin:0 auto;padding:24px 28px 48px;background:#ffffff}\n"
	"h1{font-size:1.5em;margin:0.4em 0 0.6em;word-break:break-all}\n"
	"h2{font-size:1.2em;margin:1.6em 0 0.5em;border-bottom:1px solid #dddddd;padding-bottom:4px}\n"
	"h3{font-size:1.02em;margin:1.2em 0 0.4em}\n"
	"p.headline{font-size:1.08em;background:#f1f6fb;border-left:4px solid #1f77b4;"
	"padding:10px 14px}\n"
	".table-wrap{overflow-x:auto;margin:0.4em 0 1em}\n"
	"table{border-collapse:collapse;font-size:0.9em}\n"
	/* break-word, not anywhere: a long token (a hash, a URL) still breaks
	 * where it must, but a column is never squeezed below its longest word
	 * (anywhere lets the table shrink a key column to one letter) */
	"th,td{border:1px solid #dddddd;padding:4px 8px;text-align:left;vertical-align:top;"
	"overflow-wrap:break-word;word-break:normal;hyphens:manual}\n"
	"th{background:#f4f4f4}\n"
	/* figures stay on one line; their headings wrap between words */
	"td.num,th.num{text-align:right}\n"
	"td.num{white-space:nowrap}\n"
	/* a value (not a figure, not the row's key) may break anywhere: a hash or
	 * a URL must not push the table past its column */
	"td:not(:first-child):not(.num){overflow-wrap:anywhere}\n"
	"figure.chart{margin:1em 0 1.5em}\n"
	"figure.chart svg{max-width:100%;height:auto;border:1px solid #eeeeee}\n"
	"figcaption{font-size:0.85em;color:#555555}\n"
	"footer{margin-top:2em;font-size:0.8em;color:#777777}\n";

int html_write(FILE *f, const struct page *d, const struct chart_set *cs)
{
	const char *title = "pacer report";
	for (size_t i = 0; i < d->n; i++)
		if (d->b[i].kind == PAGE_HEADING && d->b[i].level == 1) {
			title = d->b[i].text;
			break;
		}
	fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n"
	      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"/>\n"
	      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
	      "style-src 'unsafe-inline'\"/>\n<title>",
	      f);
	esc_html(f, title);
	fprintf(f, "</title>\n<style>\n%s</style>\n</head>\n<body>\n<main>\n", css);
	for (size_t i = 0; i < d->n; i++) {
		const struct page_block *b = &d->b[i];
		switch (b->kind) {
		case PAGE_HEADING:
			fprintf(f, "<h%d id=\"", b->level);
			esc_html(f, b->id);
			fputs("\">", f);
			esc_html(f, b->text);
			fprintf(f, "</h%d>\n", b->level);
			break;
		case PAGE_PARA:
			fputs(b->strong ? "<p class=\"headline\"><strong>" : "<p>", f);
			esc_html(f, b->text);
			fputs(b->strong ? "</strong></p>\n" : "</p>\n", f);
			break;
		case PAGE_LIST:
			if (!b->n_items)
				break;
			fputs("<ul>\n", f);
			for (size_t k = 0; k < b->n_items; k++) {
				fputs("<li>", f);
				esc_html(f, b->items[k]);
				fputs("</li>\n", f);
			}
			fputs("</ul>\n", f);
			break;
		case PAGE_TABLE: {
			size_t rows = page_table_rows(b);
			fputs("<div class=\"table-wrap\"><table>\n<thead><tr>", f);
			for (size_t c = 0; c < b->cols; c++) {
				fputs(b->right & (1u << c) ? "<th class=\"num\">" : "<th>", f);
				esc_html(f, b->items[c]);
				fputs("</th>", f);
			}
			fputs("</tr></thead>\n<tbody>\n", f);
			for (size_t r = 1; r <= rows; r++) {
				fputs("<tr>", f);
				for (size_t c = 0; c < b->cols; c++) {
					fputs(b->right & (1u << c) ? "<td class=\"num\">" : "<td>", f);
					esc_html(f, b->items[r * b->cols + c]);
					fputs("</td>", f);
				}
				fputs("</tr>\n", f);
			}
			fputs("</tbody>\n</table></div>\n", f);
			break;
		}
		case PAGE_CHART: {
			const struct chart *ch = charts_find(cs, b->id);
			if (!ch)
				break;
			fputs("<figure class=\"chart\" id=\"chart-", f);
			esc_html(f, ch->name);
			fputs("\">\n", f);
			fputs(ch->svg, f);
			fputs("<figcaption>", f);
			esc_html(f, b->text);
			fputs("</figcaption>\n</figure>\n", f);
			break;
		}
		}
	}
	fputs("<footer>Written by pacer report from the JSON result alone; re-rendering the same "
	      "result gives the same page.</footer>\n</main>\n</body>\n</html>\n",
	      f);
	if (fflush(f) != 0 || ferror(f))
		return errno ? -errno : -EIO;
	return 0;
}
