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

/* Word-wrapped text at WIDTH from column `col0` (already written): first
 * line after `first`, the others after `rest`. */
static int wrap_at(FILE *f, const char *text, const char *first, const char *rest, size_t col0)
{
	char *t = clean(text);
	if (!t)
		return -ENOMEM;
	const char *lead = first;
	size_t col = 0;
	fputs(lead, f);
	col = col0 + text_columns(lead);
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

/* Word-wrapped text: first line after `first`, the others after `rest`. */
static int wrap(FILE *f, const char *text, const char *first, const char *rest)
{
	return wrap_at(f, text, first, rest, 0);
}

/* A table; screen: without the columns the terminal leaves out
 * (page_table_wide), its free last column cut at WIDTH. */
static int table(FILE *f, const struct page_block *b, bool screen)
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
	uint32_t shown = screen ? ~b->wide : ~0u;
	size_t last = 0, start = 2; /* the last column shown, and where it starts */
	for (size_t c = 0; c < b->cols; c++)
		if (shown & (1u << c))
			last = c;
	for (size_t c = 0; c < last; c++)
		if (shown & (1u << c))
			start += wcol[c] + 2;
	bool cut_last = screen && !(b->right & (1u << last)) && start + 12 < WIDTH;
	for (size_t r = 0; r <= rows; r++) {
		fputs("  ", f);
		for (size_t c = 0; c < b->cols; c++) {
			if (!(shown & (1u << c)))
				continue;
			const char *s = cells[r * b->cols + c];
			size_t pad = wcol[c] - text_columns(s);
			bool right = b->right & (1u << c);
			if (c == last && cut_last && start + text_columns(s) > WIDTH) {
				/* the rest of the line, then "..." (the report has it whole) */
				size_t cut = 0, seen = 0;
				while (s[cut] && seen + start + 3 < WIDTH) {
					cut++;
					while (((unsigned char)s[cut] & 0xc0) == 0x80)
						cut++;
					seen++;
				}
				fwrite(s, 1, cut, f);
				fputs("...\n", f);
				continue;
			}
			if (right)
				for (size_t k = 0; k < pad; k++)
					fputc(' ', f);
			fputs(s, f);
			if (c < last) {
				if (!right)
					for (size_t k = 0; k < pad; k++)
						fputc(' ', f);
				fputs("  ", f);
			} else if (c == last) {
				fputc('\n', f);
			}
		}
	}
out:
	for (size_t i = 0; i < b->n_items; i++)
		free(cells[i]);
	free(cells);
	return rc;
}

/* Blocks of one section (by its level-2 heading id); the heading is printed
 * unless it is the summary's or the next step's. screen: the one-screen
 * summary: besides the summary section, only the blocks marked for it
 * (page_screen), and the lists (the caveats) are left to caveats(). */
static int section(FILE *f, const struct page *d, const char *want, bool screen)
{
	const char *cur = "";
	int rc = 0;
	int prev = -1; /* the kind of the last block printed; -1: none yet */
	bool own = !strcmp(want, "summary") || !strcmp(want, "next");
	for (size_t i = 0; i < d->n && !rc; i++) {
		const struct page_block *b = &d->b[i];
		if (b->kind == PAGE_HEADING && b->level <= 2)
			cur = b->id ? b->id : "";
		if (strcmp(cur, want) != 0 || b->level == 1 || b->audience == PAGE_REPORT)
			continue;
		if (screen ? !own && !b->screen : b->audience == PAGE_SCREEN)
			continue;
		switch (b->kind) {
		case PAGE_HEADING:
			if (b->level == 2 && own)
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
			rc = table(f, b, screen);
			break;
		case PAGE_CHART:
			break;
		}
		if (b->kind != PAGE_CHART)
			prev = (int)b->kind;
	}
	return rc;
}

/* Lines of text in buf[len]. */
static size_t lines_of(const char *buf, size_t len)
{
	size_t n = 0;
	for (size_t i = 0; i < len; i++)
		n += buf[i] == '\n';
	return n;
}

/* Whether the conditions' first brief item fits `room` lines, with a
 * line left for the count when there are others (total). */
static bool first_fits(const struct page *d, size_t total, size_t room)
{
	const char *cur = "";
	for (size_t i = 0; i < d->n; i++) {
		const struct page_block *b = &d->b[i];
		if (b->kind == PAGE_HEADING && b->level <= 2)
			cur = b->id ? b->id : "";
		if (strcmp(cur, "conditions") || b->kind != PAGE_LIST || b->audience == PAGE_REPORT)
			continue;
		for (size_t k = 0; k < b->n_items; k++) {
			const char *s = b->briefs && b->briefs[k] ? b->briefs[k] : b->items[k];
			if (!*s)
				continue;
			char *buf = NULL;
			size_t len = 0;
			FILE *m = open_memstream(&buf, &len);
			if (!m)
				return true; /* caveats() says so */
			int rc = wrap(m, s, "  - ", "    ");
			fclose(m);
			size_t need = rc ? 0 : lines_of(buf, len);
			free(buf);
			return need + (total > 1 ? 1 : 0) <= room;
		}
	}
	return true;
}

/* The caveats of the one-screen summary: the conditions' list items in
 * brief, as many as fit `room` lines (the heading included), the others
 * counted in one last line. */
static int caveats(FILE *f, const struct page *d, size_t room)
{
	const char *cur = "";
	const char *heading = NULL;
	size_t total = 0;
	for (size_t i = 0; i < d->n; i++) {
		const struct page_block *b = &d->b[i];
		if (b->kind == PAGE_HEADING && b->level <= 2) {
			cur = b->id ? b->id : "";
			if (!strcmp(cur, "conditions"))
				heading = b->text;
		}
		if (!strcmp(cur, "conditions") && b->kind == PAGE_LIST &&
		    b->audience != PAGE_REPORT)
			for (size_t k = 0; k < b->n_items; k++) {
				const char *s = b->briefs && b->briefs[k] ? b->briefs[k]
									  : b->items[k];
				total += *s != '\0';
			}
	}
	if (!heading || total == 0)
		return 0;
	if (room >= 3 && !first_fits(d, total, room - 2))
		room = 2; /* not one fits under the heading: their number alone */
	if (room < 3) {
		/* no room for one: their number, once (a line over when there is
		 * no room at all: that there are caveats is not left out) */
		fprintf(f, "%s  %s: %zu in the full report.\n", room >= 2 ? "\n" : "", heading,
			total);
		return 0;
	}
	fprintf(f, "\n%s\n", heading);
	room -= 2;
	size_t said = 0;
	int rc = 0;
	cur = "";
	for (size_t i = 0; i < d->n && !rc; i++) {
		const struct page_block *b = &d->b[i];
		if (b->kind == PAGE_HEADING && b->level <= 2)
			cur = b->id ? b->id : "";
		if (strcmp(cur, "conditions") || b->kind != PAGE_LIST || b->audience == PAGE_REPORT)
			continue;
		for (size_t k = 0; k < b->n_items && !rc; k++) {
			const char *s = b->briefs && b->briefs[k] ? b->briefs[k] : b->items[k];
			if (!*s)
				continue;
			char *buf = NULL;
			size_t len = 0;
			FILE *m = open_memstream(&buf, &len);
			if (!m)
				return -ENOMEM;
			rc = wrap(m, s, "  - ", "    ");
			if (fclose(m) != 0 && !rc)
				rc = -ENOMEM;
			size_t need = lines_of(buf, len);
			/* the last one, or one that leaves a line for the count */
			if (!rc && (said + 1 == total ? need <= room : need + 1 <= room)) {
				fwrite(buf, 1, len, f);
				room -= need;
				said++;
			}
			free(buf);
		}
	}
	if (!rc && said < total)
		fprintf(f, "  - and %zu more in the full report.\n", total - said);
	return rc;
}

/* Whether the page has the one-screen form (a run's, ramp's or
 * comparison's: its "next"). */
static bool has_screen(const struct page *d)
{
	for (size_t i = 0; i < d->n; i++)
		if (d->b[i].kind == PAGE_HEADING && d->b[i].id && !strcmp(d->b[i].id, "next"))
			return true;
	return false;
}

/* The one-screen summary: rows in all, 2 left for the caller's trailer. */
static int txt_screen(FILE *f, const struct page *d, unsigned rows)
{
	char *head = NULL, *next = NULL;
	size_t hl = 0, nl = 0;
	FILE *h = open_memstream(&head, &hl);
	FILE *n = h ? open_memstream(&next, &nl) : NULL;
	int rc = h && n ? 0 : -ENOMEM;
	for (size_t i = 0; i < d->n && !rc; i++)
		if (d->b[i].kind == PAGE_HEADING && d->b[i].level == 1)
			rc = wrap(h, d->b[i].text, "", "  ");
	static const char *const order[] = {"summary", "results", "cost"};
	for (size_t k = 0; k < sizeof order / sizeof order[0] && !rc; k++)
		rc = section(h, d, order[k], true);
	if (!rc)
		rc = section(n, d, "next", true);
	if (h && fclose(h) != 0 && !rc)
		rc = -ENOMEM;
	if (n && fclose(n) != 0 && !rc)
		rc = -ENOMEM;
	if (!rc) {
		size_t used = lines_of(head, hl) + lines_of(next, nl) + 2;
		fwrite(head, 1, hl, f);
		rc = caveats(f, d, rows > used ? rows - used : 0);
		fwrite(next, 1, nl, f);
	}
	free(head);
	free(next);
	return rc;
}

int txt_write(FILE *f, const struct page *d, unsigned screen_rows)
{
	int rc = 0;
	if (screen_rows && has_screen(d)) {
		rc = txt_screen(f, d, screen_rows < 12 ? 12 : screen_rows);
	} else {
		for (size_t i = 0; i < d->n && !rc; i++)
			if (d->b[i].kind == PAGE_HEADING && d->b[i].level == 1)
				rc = wrap(f, d->b[i].text, "", "  ");
		static const char *const order[] = {"summary", "results", "cost", "conditions"};
		for (size_t k = 0; k < sizeof order / sizeof order[0] && !rc; k++)
			rc = section(f, d, order[k], false);
	}
	if (rc)
		return rc;
	if (fflush(f) != 0 || ferror(f))
		return errno ? -errno : -EIO;
	return 0;
}
