/* pacer — a small streaming JSON writer to a FILE*. Tracks nesting and
 * commas; strings are escaped (control characters, quotes, backslash, and
 * invalid UTF-8 replaced by U+FFFD) so any input yields valid JSON.
 * Doubles that are not finite are written as null. */
#ifndef PACER_UTIL_JSONW_H
#define PACER_UTIL_JSONW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define JSONW_DEPTH 64 /* deeper nesting is a caller bug: it aborts */

struct jsonw {
	FILE *f;
	int depth;
	bool first[JSONW_DEPTH]; /* no element written yet at this depth */
	bool after_key;
	int indent;              /* spaces per level; 0 = compact */
};

void jw_init(struct jsonw *w, FILE *f, int indent);
void jw_obj(struct jsonw *w);   /* { */
void jw_obj_end(struct jsonw *w);
void jw_arr(struct jsonw *w);   /* [ */
void jw_arr_end(struct jsonw *w);
void jw_key(struct jsonw *w, const char *k);
void jw_str(struct jsonw *w, const char *s);
void jw_strn(struct jsonw *w, const char *s, size_t n);
void jw_u64(struct jsonw *w, uint64_t v);
void jw_i64(struct jsonw *w, int64_t v);
/* Fixed decimals (e.g. 3 for microseconds with ns resolution). */
void jw_dbl(struct jsonw *w, double v, int decimals);
void jw_bool(struct jsonw *w, bool v);
void jw_null(struct jsonw *w);

#endif
