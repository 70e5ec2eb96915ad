/* pacer — request names: the label each request of a run carries ("GET
 * /users/{id}" from a table's `name`, a mix shape, or METHOD path), interned
 * before the run into a small, bounded list so that the engine counts per
 * name with an index (engine_req.name) and the result reports per name.
 *
 * Bounded: the first RESULT_MAX_NAMES distinct names (in order of first
 * appearance) get figures of their own; every later distinct name is pooled
 * into one more entry, "other", and how many were pooled is kept. Pure: no
 * I/O, no globals. */
#ifndef PACER_RESULT_NAMES_H
#define PACER_RESULT_NAMES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "result/result.h"

/* The name the pooled entry is reported under. */
#define REQ_NAMES_OTHER "other"

struct req_names {
	uint32_t n;          /* entries in name[]: 1..RESULT_MAX_NAMES + 1 (0 before build) */
	bool other;          /* name[n - 1] is the pooled entry "other" */
	uint64_t pooled;     /* distinct names pooled into "other" (0 unless other) */
	char *name[RESULT_MAX_NAMES + 1]; /* owned, NUL-terminated */
};

/* Intern names[0..n) (n >= 1, each a NUL-terminated string; borrowed, only
 * read during the call): out gets the distinct names in order of first
 * appearance, the first RESULT_MAX_NAMES of them with their own entry and
 * the rest pooled into a last entry "other"; idx[i] (n entries, caller's)
 * gets the entry of names[i]. 0, -EINVAL (n is 0, a name is NULL) or
 * -ENOMEM; on error *out is empty (req_names_free is still safe). */
int req_names_build(struct req_names *out, const char *const *names, size_t n, uint16_t *idx);

/* The same a name at a time, in bounded memory (a table streamed from a
 * file may hold any number of distinct names): the names' entries are as
 * req_names_build gives them, except that pooled counts at most
 * REQ_NAMES_POOLED_MAX distinct names (each remembered by a 64-bit hash).
 * new: 0 or -ENOMEM. add: idx gets the entry of name (a NUL-terminated
 * string, only read during the call); 0, -EINVAL or -ENOMEM. finish: the
 * entries into *out (req_names_free releases them), 0 or -ENOMEM; the
 * namer is spent. free: NULL is fine. */
#define REQ_NAMES_POOLED_MAX (1u << 20)
struct req_namer;
int req_namer_new(struct req_namer **out);
int req_namer_add(struct req_namer *nm, const char *name, uint16_t *idx);
int req_namer_finish(struct req_namer *nm, struct req_names *out);
void req_namer_free(struct req_namer *nm);

/* Release what req_names_build allocated; the struct is left empty. Safe on a
 * zeroed struct. */
void req_names_free(struct req_names *r);

#endif
