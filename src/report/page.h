/* pacer — a page of the report: its content as a list of blocks (headings, paragraphs,
 * lists, tables, charts), built once from a result (report/content.c) and
 * written out as Markdown (md.c), HTML (html.c) or terminal text (txt.c), so
 * every format says the same thing. Text in blocks is plain: each writer
 * escapes it for its own syntax.
 *
 * Also the escapers, and the report writers' handles on the number formats
 * (fmt_*, over util/units.h).
 *
 * Building never fails loudly: an allocation failure sets page->oom and later
 * calls do nothing; check it once at the end. */
#ifndef PACER_REPORT_PAGE_H
#define PACER_REPORT_PAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum page_kind {
	PAGE_HEADING,
	PAGE_PARA,
	PAGE_LIST,
	PAGE_TABLE,
	PAGE_CHART,
};

#define PAGE_MAX_COLS 32

/* Who a block is for: every format, or the report only (Markdown and
 * HTML: the details the terminal's summary leaves out to fit a screen). A
 * list item's short form for the terminal is its brief (page_item_brief). */
enum page_audience {
	PAGE_ALL,
	PAGE_REPORT,
	PAGE_TERMINAL, /* the terminal's summary only (what to look at next) */
	PAGE_SCREEN,   /* the terminal's one-screen summary only: a compact form of
			* what the full text has whole (a comparison's variants) */
};

struct page_block {
	enum page_kind kind;
	int level;        /* heading: 1..3 */
	bool strong;      /* paragraph: the headline */
	char *text;       /* heading, paragraph; chart: caption */
	char *id;         /* heading: section id; chart: chart name */
	char **items;     /* list items, or table cells row by row (header first) */
	size_t n_items;
	size_t cols;      /* table columns */
	uint32_t right;   /* table: bit c set = column c right-aligned */
	uint32_t wide;    /* table: bit c set = column c left out of the terminal */
	bool key;         /* table: the key figures (one row), the answer at a glance */
	bool screen;      /* in the terminal's one-screen summary too (page_screen) */
	enum page_audience audience;
	char **briefs;    /* list: each item's short form for the terminal (NULL: the
	                   * item itself; "": not in the terminal), n_items of them */
};

struct page {
	struct page_block *b;
	size_t n, cap;
	bool oom;
	enum page_audience audience; /* of the blocks added from now on */
	bool screen;                 /* the blocks added from now on are on the screen */
};

void page_init(struct page *d);
void page_free(struct page *d);

/* The audience of the blocks added from now on (PAGE_ALL again to end). A
 * list item goes into the last list only when that list has the same
 * audience. */
void page_audience(struct page *d, enum page_audience a);

/* Whether the blocks added from now on are in the terminal's one-screen
 * summary (txt.c, for a terminal): there a run or ramp shows its summary
 * section, the results blocks marked so, the caveats that fit and what to
 * look at next. */
void page_screen(struct page *d, bool on);

/* A heading; id names the section (e.g. "summary") and becomes the HTML id. */
void page_heading(struct page *d, int level, const char *id, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* A paragraph (strong: the headline). */
void page_para(struct page *d, bool strong, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Start a bulleted list; page_item appends to it (and starts one if the last
 * block is not a list). */
void page_list(struct page *d);
void page_item(struct page *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A list item with its short form for the terminal: brief NULL says it as
 * it is, "" leaves it out of the terminal (it is said there another way). */
void page_item_brief(struct page *d, const char *brief, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Start a table with `cols` (<= PAGE_MAX_COLS) header cells; right-aligned
 * columns as a bit mask. page_row adds a row of `cols` cells (NULL = empty). */
void page_table(struct page *d, size_t cols, uint32_t right, const char *const *header);
void page_row(struct page *d, const char *const *cells);
/* The last table's columns the terminal leaves out (bit c: column c) to fit
 * 80 columns; the report keeps them. */
void page_table_wide(struct page *d, uint32_t wide);
/* The key figures: a table of one row (label i over value i), every value
 * right-aligned; HTML shows them as large figures under the headline. */
void page_key_figures(struct page *d, size_t n, const char *const *labels,
		      const char *const *values);
/* A chart by name (its SVG lives in a struct chart_set) with a caption. */
void page_chart(struct page *d, const char *name, const char *caption);

/* Rows of a table block (header excluded). */
static inline size_t page_table_rows(const struct page_block *b)
{
	return b->cols ? b->n_items / b->cols - 1 : 0;
}

/* ---- escaping -------------------------------------------------------------- */

/* Markdown inline text: a backslash before \ ` * _ [ ] < > | & ~ # $ (so no
 * emphasis, code, link, raw HTML, entity, strikethrough, heading, math or
 * table cell can start inside the text); newlines, tabs and other control
 * bytes become a space, so text never breaks a table row. Parentheses and
 * "!" need no escape once [ and ] are escaped. */
void esc_md(FILE *f, const char *s);
/* HTML / XML text and attribute values: & < > " ' as entities; control bytes
 * other than tab and newline become '?'. */
void esc_html(FILE *f, const char *s);

/* ---- numbers for people ------------------------------------------------------
 * The report writers' handles on util/units.h (the one family of number
 * formats, documented there): each call takes the next of 32 buffers of a
 * ring, so several formatted numbers can go in one printf. */

struct fring {
	char b[32][64];
	unsigned i;
};

/* Microseconds: units_fmt_duration of us * 1000 ("28.8 µs"). */
const char *fmt_us(struct fring *r, double us);
/* units_fmt_rate. */
const char *fmt_rate(struct fring *r, double per_s);
/* units_fmt_thousands with no decimals. */
const char *fmt_int(struct fring *r, double n);
/* units_fmt_pct. */
const char *fmt_pct(struct fring *r, double pct);
/* units_fmt_thousands. */
const char *fmt_num(struct fring *r, double v, int decimals);
/* units_fmt_bytes. */
const char *fmt_bytes(struct fring *r, double bytes);
/* units_fmt_ratio. */
const char *fmt_ratio(struct fring *r, double v);
/* units_fmt_seconds. */
const char *fmt_s(struct fring *r, double s);

#endif
