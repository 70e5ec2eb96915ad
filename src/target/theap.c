#include "target/theap.h"

#include <errno.h>
#include <stdlib.h>

void theap_init(struct theap *h)
{
	h->v = NULL;
	h->n = h->cap = 0;
}

void theap_free(struct theap *h)
{
	free(h->v);
	theap_init(h);
}

static void put(struct theap *h, uint32_t i, struct theap_node *t)
{
	h->v[i] = t;
	t->slot = i;
}

static void sift_up(struct theap *h, uint32_t i)
{
	struct theap_node *t = h->v[i];
	while (i > 0) {
		uint32_t p = (i - 1) / 2;
		if (h->v[p]->deadline_ns <= t->deadline_ns)
			break;
		put(h, i, h->v[p]);
		i = p;
	}
	put(h, i, t);
}

static void sift_down(struct theap *h, uint32_t i)
{
	struct theap_node *t = h->v[i];
	for (;;) {
		uint32_t l = 2 * i + 1;
		if (l >= h->n)
			break;
		uint32_t m = l;
		if (l + 1 < h->n && h->v[l + 1]->deadline_ns < h->v[l]->deadline_ns)
			m = l + 1;
		if (h->v[m]->deadline_ns >= t->deadline_ns)
			break;
		put(h, i, h->v[m]);
		i = m;
	}
	put(h, i, t);
}

int theap_arm(struct theap *h, struct theap_node *t, uint64_t deadline_ns)
{
	if (theap_armed(t)) {
		uint64_t old = t->deadline_ns;
		t->deadline_ns = deadline_ns;
		if (deadline_ns < old)
			sift_up(h, t->slot);
		else if (deadline_ns > old)
			sift_down(h, t->slot);
		return 0;
	}
	if (h->n == h->cap) {
		uint32_t cap = h->cap ? h->cap * 2 : 64;
		struct theap_node **v = realloc(h->v, (size_t)cap * sizeof *v);
		if (!v)
			return -ENOMEM;
		h->v = v;
		h->cap = cap;
	}
	t->deadline_ns = deadline_ns;
	put(h, h->n++, t);
	sift_up(h, t->slot);
	return 0;
}

void theap_cancel(struct theap *h, struct theap_node *t)
{
	if (!theap_armed(t))
		return;
	uint32_t i = t->slot;
	t->slot = THEAP_UNARMED;
	h->n--;
	if (i == h->n)
		return;
	struct theap_node *last = h->v[h->n];
	put(h, i, last);
	if (i > 0 && h->v[(i - 1) / 2]->deadline_ns > last->deadline_ns)
		sift_up(h, i);
	else
		sift_down(h, i);
}

struct theap_node *theap_pop_expired(struct theap *h, uint64_t now_ns)
{
	if (h->n == 0 || h->v[0]->deadline_ns > now_ns)
		return NULL;
	struct theap_node *t = h->v[0];
	theap_cancel(h, t);
	return t;
}
