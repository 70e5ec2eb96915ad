/* pacer — small text helpers: one-line messages, shell quoting. */
#ifndef PACER_UTIL_TEXT_H
#define PACER_UTIL_TEXT_H

#include <stdio.h>

/* Make a message one line: every control byte (newline included) and DEL
 * becomes '?', so text echoed from an input cannot break the line. */
void text_one_line(char *s);

/* Format a message into err[errlen] (nothing when err is NULL or errlen 0)
 * and make it one line (text_one_line): the one-line error of a reader. */
__attribute__((format(printf, 3, 4))) void text_errf(char *err, size_t errlen, const char *fmt,
						     ...);

/* Write s to f as one word of a POSIX shell command line: as it is when it
 * is not empty and holds only ASCII letters, digits and "_./:=@%+,-";
 * otherwise in single quotes, each ' inside written as '\''. Pasting the
 * output into sh gives back s. Write errors are f's (check ferror or
 * fclose). */
void text_shell_quote(FILE *f, const char *s);

/* s made safe to print on a terminal, into out[cap] (cut at a character
 * when it does not fit; cap > 0): every control character (C0, DEL, and
 * C1, U+0080..U+009F, written in UTF-8, which some terminals obey as
 * escape sequences) and every byte that is not part of valid UTF-8 becomes
 * '?', so a stored value cannot clear the screen, move the cursor or
 * retitle the window. Other text is copied as it is. Returns out. */
const char *text_term_safe(char *out, size_t cap, const char *s);

/* Terminal columns of the UTF-8 string s: one per code point ("2.31 µs" is
 * 8 bytes and 7 columns). */
size_t text_columns(const char *s);

/* The printf field width ("%*s") that gives s `cols` terminal columns: cols
 * plus the bytes of s beyond its text_columns. */
int text_field(const char *s, int cols);

/* The Damerau-Levenshtein distance between a and b (the optimal string
 * alignment form: each insertion, deletion, substitution, or swap of two
 * neighbouring bytes counts 1), ASCII letters compared without case. For
 * "did you mean": only the first TEXT_NEAR_MAX bytes of each are compared. */
#define TEXT_NEAR_MAX 64
size_t text_edit_distance(const char *a, const char *b);

/* "Did you mean": offer each candidate in turn; best is the closest one
 * that is close enough to be a slip of the fingers, else NULL. Close
 * enough: at most 1 edit for a word of up to 4 bytes, 2 up to 8, 3 beyond,
 * and fewer edits than the candidate and the word have bytes (so "x" never
 * suggests "md"). The first of equally close candidates wins; the word
 * itself (same case) is never suggested. */
struct text_near {
	const char *word;
	const char *best; /* NULL: none close enough (yet) */
	size_t best_d;
};
void text_near_init(struct text_near *n, const char *word);
void text_near_offer(struct text_near *n, const char *cand);

#endif
