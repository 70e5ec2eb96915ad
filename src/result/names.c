/* pacer — request names interned into a bounded list (see names.h). */
#include "result/names.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* The names with an entry of their own (at most RESULT_MAX_NAMES, in a
 * set of OWN_SLOTS) and the 64-bit hashes of the pooled ones (open
 * addressing, grown at half load up to REQ_NAMES_POOLED_MAX of them). */
#define OWN_SLOTS 256 /* a power of two over 2 x RESULT_MAX_NAMES */

struct req_namer {
	struct req_names names;        /* the entries being built */
	struct { uint64_t h; uint16_t val; bool used; } own[OWN_SLOTS];
	uint64_t *pool;                /* hashes of pooled names, 0: empty slot */
	size_t pool_cap, pool_n;
};

static uint64_t fnv1a(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ull;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
	return h;
}

int req_namer_new(struct req_namer **out)
{
	*out = calloc(1, sizeof **out);
	return *out ? 0 : -ENOMEM;
}

static size_t pool_find(const uint64_t *pool, size_t cap, uint64_t h)
{
	size_t m = cap - 1;
	size_t i = (size_t)h & m;
	while (pool[i] && pool[i] != h)
		i = (i + 1) & m;
	return i;
}

static int pool_grow(struct req_namer *nm)
{
	size_t cap = nm->pool_cap ? nm->pool_cap * 2 : 256;
	uint64_t *np = calloc(cap, sizeof *np);
	if (!np)
		return -ENOMEM;
	for (size_t i = 0; i < nm->pool_cap; i++)
		if (nm->pool[i])
			np[pool_find(np, cap, nm->pool[i])] = nm->pool[i];
	free(nm->pool);
	nm->pool = np;
	nm->pool_cap = cap;
	return 0;
}

/* A pooled name: count it once. */
static int pool_add(struct req_namer *nm, uint64_t h)
{
	h = h ? h : 1; /* 0 marks an empty slot */
	if (nm->pool_cap && nm->pool[pool_find(nm->pool, nm->pool_cap, h)])
		return 0;
	if (nm->pool_n >= REQ_NAMES_POOLED_MAX)
		return 0; /* counted no further */
	if (2 * (nm->pool_n + 1) > nm->pool_cap) {
		int rc = pool_grow(nm);
		if (rc)
			return rc;
	}
	nm->pool[pool_find(nm->pool, nm->pool_cap, h)] = h;
	nm->pool_n++;
	nm->names.pooled++;
	return 0;
}

int req_namer_add(struct req_namer *nm, const char *name, uint16_t *idx)
{
	if (!name)
		return -EINVAL;
	uint64_t h = fnv1a(name);
	struct req_names *r = &nm->names;
	for (size_t i = (size_t)h & (OWN_SLOTS - 1);; i = (i + 1) & (OWN_SLOTS - 1)) {
		if (!nm->own[i].used)
			break;
		if (nm->own[i].h == h && strcmp(r->name[nm->own[i].val], name) == 0) {
			*idx = nm->own[i].val;
			return 0;
		}
	}
	*idx = RESULT_MAX_NAMES;
	if (r->n >= RESULT_MAX_NAMES)
		return pool_add(nm, h);
	size_t i = (size_t)h & (OWN_SLOTS - 1);
	while (nm->own[i].used)
		i = (i + 1) & (OWN_SLOTS - 1);
	if (!(r->name[r->n] = strdup(name)))
		return -ENOMEM;
	nm->own[i].used = true;
	nm->own[i].h = h;
	nm->own[i].val = (uint16_t)r->n;
	*idx = (uint16_t)r->n++;
	return 0;
}

int req_namer_finish(struct req_namer *nm, struct req_names *out)
{
	*out = nm->names;
	memset(&nm->names, 0, sizeof nm->names);
	if (out->pooled) {
		if (!(out->name[out->n] = strdup(REQ_NAMES_OTHER))) {
			req_names_free(out);
			return -ENOMEM;
		}
		out->n++;
		out->other = true;
	}
	return 0;
}

void req_namer_free(struct req_namer *nm)
{
	if (!nm)
		return;
	req_names_free(&nm->names);
	free(nm->pool);
	free(nm);
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
	struct req_namer *nm;
	int rc = req_namer_new(&nm);
	for (size_t i = 0; !rc && i < n; i++)
		rc = req_namer_add(nm, names[i], &idx[i]);
	if (!rc)
		rc = req_namer_finish(nm, out);
	req_namer_free(nm);
	return rc;
}
