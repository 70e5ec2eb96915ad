/* pacer — what the two halves of the plan-file reader share (plan_yaml.c:
 * the document, the plan, its routes; plan_yaml_values.c: the values inside
 * a route). Not for use outside src/target. The scalars, booleans, counts,
 * durations and mappings are read by the shared layer, util/yaml_get.h, as
 * the scenario and mix readers read them. */
#ifndef PACER_TARGET_PLAN_YAML_INT_H
#define PACER_TARGET_PLAN_YAML_INT_H

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <yaml.h>

#include "target/plan.h"
#include "target/plan_int.h"
#include "util/units.h"
#include "util/yaml_get.h"

/* Room for a key path in messages ("routes[3].misbehave.slow_body"). */
#define WHERE_CAP 96

/* One plan file being read: the document, its name and the message
 * (borrowed), and the arena that will own every string and array read. */
struct plan_yaml {
	struct yaml_rd y;
	struct plan_arena **arena;
};

/* Write "SRC:LINE: WHERE: message" and return code. */
#define fail(c, ...) yaml_fail(&(c)->y, __VA_ARGS__)

static inline int oom(struct plan_yaml *c) { return fail(c, -ENOMEM, NULL, NULL, "out of memory"); }

static inline yaml_node_t *node(struct plan_yaml *c, int id) { return yaml_rd_node(&c->y, id); }

/* A scalar's bytes (NUL bytes allowed) — yaml_get_scalar. */
static inline int scalar(struct plan_yaml *c, const yaml_node_t *n, const char *where,
                         const char *what, const char **s, size_t *len)
{
	return yaml_get_scalar(&c->y, n, where, what, s, len);
}

/* A scalar that must be a C string without NUL bytes — yaml_get_text. */
static inline int text(struct plan_yaml *c, const yaml_node_t *n, const char *where,
                       const char *what, const char **s)
{
	return yaml_get_text(&c->y, n, where, what, s, NULL);
}

/* A text scalar copied into the plan's arena: 0, its error, or -ENOMEM. */
static inline int get_str(struct plan_yaml *c, const yaml_node_t *n, const char *where,
                          const char *what, const char **out)
{
	const char *s;
	int rc = text(c, n, where, what, &s);
	if (rc < 0)
		return rc;
	*out = plan_strndup(c->arena, s, strlen(s));
	return *out ? 0 : oom(c);
}

/* Match the pairs of mapping n against keys (NULL-terminated); vals[i] gets
 * the value node of keys[i] or NULL. Unknown keys are errors; `what` names
 * the mapping ("a route" → "expected a route (a mapping), got a list"). */
static inline int fields(struct plan_yaml *c, const yaml_node_t *n, const char *where,
                         const char *what, const char *const *keys, yaml_node_t **vals)
{
	size_t nk = 0;
	while (keys[nk])
		nk++;
	char w[96];
	snprintf(w, sizeof w, "%s (a mapping)", what);
	return yaml_fields(&c->y, n, where, w, keys, nk, vals);
}

static inline size_t map_len(const yaml_node_t *n)
{
	return (size_t)(n->data.mapping.pairs.top - n->data.mapping.pairs.start);
}

/* out = where + "." + key (truncated to WHERE_CAP - 1 bytes). */
static inline void sub(char *out, const char *where, const char *key)
{
	size_t n = 0;
	for (const char *parts[3] = {where, *where ? "." : "", key}, **p = parts; p < parts + 3; p++)
		for (const char *q = *p; *q && n + 1 < WHERE_CAP; q++)
			out[n++] = *q;
	out[n] = '\0';
}

/* ---- the values of a route (plan_yaml_values.c) --------------------------
 * Each reads node n at key path `where` into its out-parameter (strings and
 * arrays in c's arena) and returns 0, or PACER_EPARSE / PACER_ERANGE with
 * the message written (file, line, key path, what was expected), or
 * -ENOMEM. */

/* A status code from 200 to 599. */
int pyaml_status(struct plan_yaml *c, const yaml_node_t *n, const char *where, int *status);
/* A latency: a duration, or a distribution mapping (dist: fixed, uniform,
 * exponential, lognormal, with its parameters). */
int pyaml_latency(struct plan_yaml *c, const yaml_node_t *n, const char *where,
                  struct target_dist *d);
/* A body from 'body' (text, a template) and/or 'body_size' (either may be
 * NULL: an empty body). */
int pyaml_body(struct plan_yaml *c, yaml_node_t *body, yaml_node_t *size, const char *where,
               struct target_body *b);
/* Response headers (a mapping; framing headers refused) into *out, *count. */
int pyaml_headers(struct plan_yaml *c, const yaml_node_t *n, const char *where,
                  struct target_header **out, size_t *count);
/* A route's status: one code, or a mapping of codes to probabilities. */
int pyaml_status_mix(struct plan_yaml *c, const yaml_node_t *n, const char *where,
                     struct target_route *rt);
/* The key-value store of a route into *out. */
int pyaml_kv(struct plan_yaml *c, const yaml_node_t *n, const char *where, struct target_kv **out);
/* A route's misbehaviour (stalls, closes, garbage, slow bodies). */
int pyaml_misbehave(struct plan_yaml *c, const yaml_node_t *n, const char *where,
                    struct target_misbehave *m);

#endif
