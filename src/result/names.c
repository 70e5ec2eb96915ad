/* pacer — request names interned into a bounded list (see names.h). */
#include "result/names.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* A set of the distinct names seen, open addressing, grown at half load.
 * Slots borrow the caller's strings; val is the entry they map to. */
struct nslot {
	const char *s;
	uint64_t h;
	uint16_t val;
};

struct nset {
	struct nslot *slot;
	size_t cap, n;
};

static uint64_t fnv1a(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ull;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
	return h;
}

static struct nslot *nset_find(struct nset *t, const char *s, uint64_t h)
{
	size_t m = t->cap - 1;
	for (size_t i = (size_t)h & m;; i = (i + 1) & m) {
		struct nslot *e = &t->slot[i];
		if (!e->s || (e->h == h && strcmp(e->s, s) == 0))
			return e;
	}
}

static int nset_grow(struct nset *t)
{
	size_t cap = t->cap ? t->cap * 2 : 256;
	struct nslot *ns = calloc(cap, sizeof *ns);
	if (!ns)
		return -ENOMEM;
	struct nset g = {ns, cap, 0};
	for (size_t i = 0; i < t->cap; i++)
		if (t->slot[i].s)
			*nset_find(&g, t->slot[i].s, t->slot[i].h) = t->slot[i];
	free(t->slot);
	t->slot = ns;
	t->cap = cap;
	return 0;
}

void req_names_free(struct req_names *r)
{
	for (uint32_t i = 0; i < r->n; i++)
		free(r->name[i]);
	memset(r, 0, sizeof *r);
}

int req_names_build(struct req_names *out, const char *const *names, size_t n, uint16_t *idx)
{
	memset(out, 0, sizeof *out);
	if (!n || !names || !idx)
		return -EINVAL;
	struct nset set = {0};
	int rc = 0;
	uint32_t own = 0; /* entries with a name of their own */
	for (size_t i = 0; i < n && !rc; i++) {
		if (!names[i]) {
			rc = -EINVAL;
			break;
		}
		if (2 * (set.n + 1) > set.cap && (rc = nset_grow(&set)))
			break;
		uint64_t h = fnv1a(names[i]);
		struct nslot *e = nset_find(&set, names[i], h);
		if (!e->s) {
			e->s = names[i];
			e->h = h;
			set.n++;
			if (own < RESULT_MAX_NAMES) {
				if (!(out->name[own] = strdup(names[i])))
					rc = -ENOMEM;
				e->val = (uint16_t)own++;
				out->n = own;
			} else {
				e->val = RESULT_MAX_NAMES;
				out->pooled++;
			}
		}
		idx[i] = e->val;
	}
	free(set.slot);
	if (!rc && out->pooled) {
		if (!(out->name[own] = strdup(REQ_NAMES_OTHER)))
			rc = -ENOMEM;
		out->n = own + 1;
		out->other = true;
	}
	if (rc)
		req_names_free(out);
	return rc;
}
