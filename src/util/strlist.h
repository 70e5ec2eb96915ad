/* pacer — a growable list of borrowed strings (a repeatable option's values,
 * the headers of a request). */
#ifndef PACER_UTIL_STRLIST_H
#define PACER_UTIL_STRLIST_H

#include <stddef.h>

struct strlist {
	const char **v;         /* n entries, borrowed */
	size_t n, cap;
};

/* Append v (borrowed: it must outlive the list). 0 or -ENOMEM. */
int strlist_add(struct strlist *l, const char *v);
/* Free the array (not the strings); the list is empty again. */
void strlist_free(struct strlist *l);

#endif
