/* pacer — reading values out of a libyaml document: the one layer under the
 * three hand-written YAML readers (target plans, scenario files, mix specs),
 * so that they agree on what a scalar, a boolean, a count and a mapping are,
 * refuse the same mistakes, and tell them the same way: one line
 * "SRC:LINE: WHERE: message" (util/yaml_msg.h).
 *
 * Booleans follow the YAML 1.2 core schema: true, True, TRUE, false, False,
 * FALSE, quoted or not. YAML 1.1's yes/no/on/off (and y/n) are refused with
 * a message saying so, rather than read as text or guessed.
 *
 * A key given twice in one mapping is refused in the whole document before
 * anything is read from it (yaml_check_unique): YAML says keys are unique,
 * and libyaml keeps both pairs, so without the check a reader would take
 * one of them silently.
 *
 * Pure: no I/O; the only allocation is the bookkeeping of yaml_check_unique. */
#ifndef PACER_UTIL_YAML_GET_H
#define PACER_UTIL_YAML_GET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <yaml.h>

#include "util/yaml_msg.h"

/* One document being read, and where a message about it goes. All borrowed. */
struct yaml_rd {
	yaml_document_t *doc;
	const char *src; /* names the input in messages ("plan.yaml") */
	char *err;       /* the message, one line; NULL: none wanted */
	size_t cap;      /* bytes at err */
};

/* Write "SRC:LINE: WHERE: message" for node n (see yaml_msg_v; n NULL: no
 * line; where NULL or "": no WHERE) and return code. */
__attribute__((format(printf, 5, 6))) int yaml_fail(const struct yaml_rd *r, int code,
                                                    const yaml_node_t *n, const char *where,
                                                    const char *fmt, ...);

/* Node number id of the document (libyaml's 1-based ids), or NULL. */
static inline yaml_node_t *yaml_rd_node(const struct yaml_rd *r, int id)
{
	return yaml_document_get_node(r->doc, id);
}

/* The scalar's text (NUL-terminated by libyaml), or NULL when n is not a
 * scalar (NULL too). */
const char *yaml_scalar(const yaml_node_t *n);

/* The scalar's bytes, NUL bytes and all: *s and *len (len may be NULL).
 * Not a scalar: PACER_EPARSE, "expected WHAT, got a list" ("got nothing" for
 * NULL), and *s = "". */
int yaml_get_scalar(const struct yaml_rd *r, const yaml_node_t *n, const char *where,
                    const char *what, const char **s, size_t *len);

/* As yaml_get_scalar, for a scalar that must be a C string: one holding a
 * NUL byte is PACER_EPARSE "expected WHAT without NUL bytes". */
int yaml_get_text(const struct yaml_rd *r, const yaml_node_t *n, const char *where,
                  const char *what, const char **s, size_t *len);

/* The YAML 1.2 core schema's booleans: true if s is true/True/TRUE, false if
 * false/False/FALSE (into *b); any other text returns false and leaves *b. */
bool yaml_bool_of(const char *s, bool *b);

/* A boolean scalar (see yaml_bool_of) into *b. PACER_EPARSE "expected true
 * or false, got 'S'" otherwise (naming YAML 1.1 when S is yes/no/on/off). */
int yaml_get_bool(const struct yaml_rd *r, const yaml_node_t *n, const char *where, bool *b);

/* A whole number (units_parse_count: 1000, 10k, 2M) from lo to hi into *v.
 * PACER_ERANGE "expected a whole number from LO to HI, got 'S'" otherwise;
 * PACER_EPARSE when n is not a text scalar. */
int yaml_get_count(const struct yaml_rd *r, const yaml_node_t *n, const char *where, uint64_t lo,
                   uint64_t hi, uint64_t *v);

/* A duration (units_parse_duration_ns: 250us, 5ms, 1.5s) into *ns.
 * PACER_ERANGE when it does not parse; PACER_EPARSE when not a scalar. */
int yaml_get_duration(const struct yaml_rd *r, const yaml_node_t *n, const char *where,
                      uint64_t *ns);

/* A size (units_parse_size: 512, 4k, 1MiB) of at most hi bytes into *v.
 * PACER_ERANGE otherwise; PACER_EPARSE when not a scalar. */
int yaml_get_size(const struct yaml_rd *r, const yaml_node_t *n, const char *where, uint64_t hi,
                  uint64_t *v);

/* A probability: a finite decimal number from 0 to 1 into *p. PACER_EPARSE
 * when it is not a number, PACER_ERANGE when outside [0, 1]. */
int yaml_get_prob(const struct yaml_rd *r, const yaml_node_t *n, const char *where, double *p);

/* Match the pairs of mapping n against keys[0..nk): vals[i] gets the value
 * node of keys[i], or NULL when absent. Errors (PACER_EPARSE): n not a
 * mapping ("expected WHAT, got a list"; WHAT should say it is a mapping), a
 * key that is not a text scalar, a key not in keys ("unknown key 'K'
 * (expected one of: a, b, c)"), a key given twice ("duplicate key 'K'";
 * yaml_check_unique has said so earlier in the readers that use it). */
int yaml_fields(const struct yaml_rd *r, const yaml_node_t *n, const char *where, const char *what,
                const char *const *keys, size_t nk, yaml_node_t **vals);

/* Refuse a key given twice in any mapping reachable from root (NULL: fine):
 * keys are compared as the bytes of scalar keys (non-scalar keys are not
 * compared). The duplicate that comes first in the text is named:
 * PACER_EPARSE "SRC:LINE: duplicate key 'K' (first at line N)". Each node is
 * visited once, aliases and self-referencing anchors included; the time is
 * O(n log n) in the document's size. 0, PACER_EPARSE, or -ENOMEM. */
int yaml_check_unique(const struct yaml_rd *r, const yaml_node_t *root);

#endif
