/* pacer — the report's content as a list of blocks (headings, paragraphs,
 * lists, tables, charts), built once from a result (report/content.c) and
 * written out as Markdown (md.c), HTML (html.c) or terminal text (txt.c), so
 * every format says the same thing. Text in blocks is plain: each writer
 * escapes it for its own syntax.
 *
 * Also the escapers, and the report writers' handles on the number formats
 * (fmt_*, over util/units.h).
 *
 * Building never fails loudly: an allocation failure sets doc->oom and later
 * calls do nothing; check it once at the end. */
#ifndef PACER_REPORT_DOC_H
#define PACER_REPORT_DOC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum doc_kind {
	DOC_HEADING,
	DOC_PARA,
	DOC_LIST,
	DOC_TABLE,
	DOC_CHART,
};

#define DOC_MAX_COLS 32

/* Who a block is for: every format, or the report only (Markdown and
 * HTML: the details the terminal's summary leaves out to fit a screen). A
 * list item's short form for the terminal is its brief (doc_item_brief). */
enum doc_audience {
	DOC_ALL,
	DOC_REPORT,
};

struct doc_block {
	enum doc_kind kind;
	int level;        /* heading: 1..3 */
	bool strong;      /* paragraph: the headline */
	char *text;       /* heading, paragraph; chart: caption */
	char *id;         /* heading: section id; chart: chart name */
	char **items;     /* list items, or table cells row by row (header first) */
	size_t n_items;
	size_t cols;      /* table columns */
	uint32_t right;   /* table: bit c set = column c right-aligned */
	enum doc_audience audience;
	char **briefs;    /* list: each item's short form for the terminal (NULL: the
	                   * item itself; "": not in the terminal), n_items of them */
};

struct doc {
	struct doc_block *b;
	size_t n, cap;
	bool oom;
	enum doc_audience audience; /* of the blocks added from now on */
};

void doc_init(struct doc *d);
void doc_free(struct doc *d);

/* The audience of the blocks added from now on (DOC_ALL again to end). A
 * list item goes into the last list only when that list has the same
 * audience. */
void doc_audience(struct doc *d, enum doc_audience a);

/* A heading; id names the section (e.g. "summary") and becomes the HTML id. */
void doc_heading(struct doc *d, int level, const char *id, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* A paragraph (strong: the headline). */
void doc_para(struct doc *d, bool strong, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Start a bulleted list; doc_item appends to it (and starts one if the last
 * block is not a list). */
void doc_list(struct doc *d);
void doc_item(struct doc *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A list item with its short form for the terminal: brief NULL says it as
 * it is, "" leaves it out of the terminal (it is said there another way). */
void doc_item_brief(struct doc *d, const char *brief, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Start a table with `cols` (<= DOC_MAX_COLS) header cells; right-aligned
 * columns as a bit mask. doc_row adds a row of `cols` cells (NULL = empty). */
void doc_table(struct doc *d, size_t cols, uint32_t right, const char *const *header);
void doc_row(struct doc *d, const char *const *cells);
/* A chart by name (its SVG lives in a struct chart_set) with a caption. */
void doc_chart(struct doc *d, const char *name, const char *caption);

/* Rows of a table block (header excluded). */
static inline size_t doc_table_rows(const struct doc_block *b)
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
