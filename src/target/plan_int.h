/* pacer — internals shared by the plan loader (plan_yaml.c) and the plan
 * compiler (plan.c). Not for use outside src/target. */
#ifndef PACER_TARGET_PLAN_INT_H
#define PACER_TARGET_PLAN_INT_H

#include <stddef.h>

#include "target/plan.h"

/* A bump allocator owning everything hanging off a plan. */
struct plan_arena;

/* Zeroed, 16-byte aligned memory from the arena, or NULL (out of memory). */
void *plan_alloc(struct plan_arena **a, size_t n);
/* Copy of s[0..n) plus a NUL, or NULL. */
char *plan_strndup(struct plan_arena **a, const char *s, size_t n);
void plan_arena_free(struct plan_arena *a);

/* Fill in the derived parts of a parsed plan: compiled variants, their
 * precomputed bytes, the 404 answer, `simple` flags. 0 or -ENOMEM. */
int plan_compile(struct target_plan *p);

#endif
