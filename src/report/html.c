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
	/* 1,180 px and its padding fit a 1,280 px window beside a scrollbar */
	"main{max-width:1180px;margin:0 auto;padding:20px 28px 48px;background:#ffffff}\n"
	"h1{font-size:1.4em;margin:0.2em 0 0.5em;overflow-wrap:anywhere}\n"
	"h2{font-size:1.2em;margin:1.6em 0 0.5em;border-bottom:1px solid #dddddd;padding-bottom:4px}\n"
	"h3{font-size:1.02em;margin:1.2em 0 0.4em}\n"
	"p.headline{font-size:1.08em;background:#f1f6fb;border-left:4px solid #1f77b4;"
	"padding:10px 14px}\n"
	/* a table too wide scrolls inside its own box, never the page */
	".table-wrap{overflow-x:auto;max-width:100%;margin:0.4em 0 1em}\n"
	/* the key figures: the answer at a glance, under the headline */
	".key{display:flex;flex-wrap:wrap;gap:10px;margin:0.8em 0 1em}\n"
	".fig{border:1px solid #d5dde6;border-radius:6px;padding:6px 14px;min-width:96px}\n"
	".fig .label{font-size:0.8em;color:#555555}\n"
	".fig .value{font-size:1.45em;font-weight:600;white-space:nowrap}\n"
	".fig .note{font-size:0.8em;color:#555555}\n"
	".fig .pass{color:#1a7f37}\n.fig .fail{color:#c62828}\n"
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
	/* a median (min–max) may go to a second line before its range */
	"td.num.range{white-space:normal}\n"
	/* a value (not a figure, not the row's key) may break anywhere: a hash or
	 * a URL must not push the table past its column */
	"td:not(:first-child):not(.num){overflow-wrap:anywhere}\n"
	"figure.chart{margin:1em 0 1.5em}\n"
	"figure.chart svg{max-width:100%;height:auto;border:1px solid #eeeeee}\n"
	"figcaption{font-size:0.85em;color:#555555}\n"
	"footer{margin-top:2em;font-size:0.8em;color:#777777}\n";

/* Text with a place to break after / ? & = , ; in a long word (a URL, a
 * list of hosts), so it wraps at a sensible point rather than anywhere. */
static void esc_wrap(FILE *f, const char *s)
{
	size_t word = 0;
	for (; s && *s; s++) {
		char one[2] = {*s, '\0'};
		esc_html(f, one);
		word = *s == ' ' ? 0 : word + 1;
		if (word >= 12 && strchr("/?&=,;", *s) && s[1] && s[1] != ' ') {
			fputs("<wbr/>", f);
			word = 0;
		}
	}
}

/* A figure's cell: its spaces do not break ("1.20 ms"), but a median may
 * go to the next line before its (min–max) range. */
static void esc_num(FILE *f, const char *s)
{
	for (; s && *s; s++) {
		if (*s == ' ' && s[1] != '(') {
			fputs("&#160;", f);
		} else {
			char one[2] = {*s, '\0'};
			esc_html(f, one);
		}
	}
}

/* The key figures (page_key_figures): a box per figure, large. */
static void key_figures(FILE *f, const struct page_block *b)
{
	fputs("<div class=\"key\">\n", f);
	for (size_t c = 0; c < b->cols; c++) {
		const char *v = b->items[b->cols + c];
		fputs("<div class=\"fig\"><div class=\"label\">", f);
		esc_html(f, b->items[c]);
		fputs(!strcmp(v, "Pass")   ? "</div><div class=\"value pass\">"
		      : !strcmp(v, "Fail") ? "</div><div class=\"value fail\">"
					   : "</div><div class=\"value\">",
		      f);
		/* "1.03 (not enough repetitions)": the figure large, its note under it */
		const char *note = strstr(v, " (");
		size_t vl = note ? (size_t)(note - v) : strlen(v);
		for (size_t k = 0; k < vl; k++) {
			char one[2] = {v[k], '\0'};
			esc_html(f, one);
		}
		fputs("</div>", f);
		if (note) {
			fputs("<div class=\"note\">", f);
			esc_html(f, note + 1);
			fputs("</div>", f);
		}
		fputs("</div>\n", f);
	}
	fputs("</div>\n", f);
}

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
		if (b->audience == PAGE_TERMINAL || b->audience == PAGE_SCREEN)
			continue;
		switch (b->kind) {
		case PAGE_HEADING:
			fprintf(f, "<h%d id=\"", b->level);
			esc_html(f, b->id);
			fputs("\">", f);
			esc_wrap(f, b->text);
			fprintf(f, "</h%d>\n", b->level);
			break;
		case PAGE_PARA:
			fputs(b->strong ? "<p class=\"headline\"><strong>" : "<p>", f);
			esc_wrap(f, b->text);
			fputs(b->strong ? "</strong></p>\n" : "</p>\n", f);
			break;
		case PAGE_LIST:
			if (!b->n_items)
				break;
			fputs("<ul>\n", f);
			for (size_t k = 0; k < b->n_items; k++) {
				fputs("<li>", f);
				esc_wrap(f, b->items[k]);
				fputs("</li>\n", f);
			}
			fputs("</ul>\n", f);
			break;
		case PAGE_TABLE: {
			size_t rows = page_table_rows(b);
			if (b->key && rows == 1) {
				key_figures(f, b);
				break;
			}
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
					const char *v = b->items[r * b->cols + c];
					bool num = b->right & (1u << c);
					fputs(!num              ? "<td>"
					      : strstr(v, " (") ? "<td class=\"num range\">"
								: "<td class=\"num\">",
					      f);
					if (num)
						esc_num(f, v);
					else
						esc_wrap(f, v);
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
