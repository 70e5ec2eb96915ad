/* pacer — request tables: the arena their strings and bodies live in, and
 * table_free, which releases a table with its arena. See table_int.h. */
#include <stdlib.h>
#include <string.h>

#include "table/table_int.h"

#define CHUNK_BYTES (1u << 20)
#define ALIGN 16u

struct ta_chunk {
	struct ta_chunk *next;
	size_t used, cap;
	_Alignas(16) unsigned char data[];
};

void *ta_alloc(struct ta *a, size_t n)
{
	n = (n + ALIGN - 1) & ~(size_t)(ALIGN - 1);
	if (n == 0)
		n = ALIGN;
	struct ta_chunk *c = a->head;
	if (!c || c->cap - c->used < n) {
		/* chunks grow from 4 KiB to CHUNK_BYTES: small tables stay small */
		size_t grow = c ? (c->cap * 2 > CHUNK_BYTES ? CHUNK_BYTES : c->cap * 2) : 4096;
		size_t cap = n > grow / 4 ? n : grow;
		struct ta_chunk *nc = malloc(sizeof *nc + cap);
		if (!nc)
			return NULL;
		nc->used = 0;
		nc->cap = cap;
		if (cap == n && c) {
			/* a big block gets its own chunk behind the current one */
			nc->next = c->next;
			c->next = nc;
		} else {
			nc->next = c;
			a->head = nc;
		}
		c = nc;
	}
	void *p = c->data + c->used;
	c->used += n;
	return p;
}

void ta_free(struct ta *a)
{
	if (!a)
		return;
	for (struct ta_chunk *c = a->head, *next; c; c = next) {
		next = c->next;
		free(c);
	}
	free(a);
}

char *ta_strndup(struct ta *a, const char *s, size_t n)
{
	char *p = ta_alloc(a, n + 1);
	if (p) {
		if (n)
			memcpy(p, s, n);
		p[n] = '\0';
	}
	return p;
}

void table_free(struct table *t)
{
	if (!t)
		return;
	free(t->reqs);
	free(t->hosts);
	ta_free(t->priv);
	free(t);
}
