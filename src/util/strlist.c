#include "util/strlist.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int strlist_add(struct strlist *l, const char *v)
{
	if (l->n == l->cap) {
		size_t nc = l->cap ? l->cap * 2 : 8;
		const char **nv = realloc(l->v, nc * sizeof *nv);
		if (!nv)
			return -ENOMEM;
		l->v = nv;
		l->cap = nc;
	}
	l->v[l->n++] = v;
	return 0;
}

void strlist_free(struct strlist *l)
{
	free(l->v);
	memset(l, 0, sizeof *l);
}
