/* pacer — the mix generator (pure): a YAML spec of route shapes, methods,
 * locality, query strings and body templates → a deterministic request
 * table. The same spec, size and seed give the same requests, byte for byte,
 * on every machine. The spec's schema is in docs/tables.md; in short:
 *
 *   base_url: http://127.0.0.1:8080
 *   methods: {GET: 65, POST: 20, PUT: 8, PATCH: 5, DELETE: 2}
 *   locality: {requests: 0.7, routes: 0.2}
 *   query: {share: 0.25, template: "page=${id}&sort=${word}"}
 *   body: {content_type: application/json, template: '{"id":${id},"name":"${word}"}'}
 *   shapes:
 *     - {name: rest_id, weight: 30, routes: 1000, templates: ["/api/r${route}/users/${id}"]}
 */
#ifndef PACER_TABLE_MIX_H
#define PACER_TABLE_MIX_H

#include <stddef.h>
#include <stdint.h>
#include <yaml.h>

#include "table/table.h"

/* A parsed, validated spec. Immutable; may be shared by threads. */
struct table_mix;

/* Parse a spec from YAML text (text[len]); source names it in messages.
 * 0 or PACER_EPARSE / PACER_ERANGE / PACER_ETOOBIG / -ENOMEM with err set
 * to "SOURCE:LINE: key: what was wrong". *out is NULL on error. */
int table_mix_parse(const char *text, size_t len, const char *source, struct table_mix **out,
                    char *err, size_t cap);
/* The same from a file (at most 1 MiB); -errno when it cannot be read. */
int table_mix_load(const char *path, struct table_mix **out, char *err, size_t cap);
/* The same from a mapping node of a document the caller parsed (a mix spec
 * inline in a scenario file). doc and node are only read. In all three, a
 * key given twice in one mapping is PACER_EPARSE "SOURCE:LINE: duplicate key
 * 'K' (first at line N)" (util/yaml_get.h). */
int table_mix_from_yaml(yaml_document_t *doc, yaml_node_t *node, const char *source,
                        struct table_mix **out, char *err, size_t cap);
void table_mix_free(struct table_mix *m);

/* Build a table of `size` requests (1 .. lim->max_requests) from m with
 * seed. Method, shape and query shares are met exactly (largest remainder
 * of size × share); within each method-and-shape cell, locality.requests of
 * the requests go to the first locality.routes of the shape's routes and the
 * rest to the others. The table's requests carry their shape's name. lim may
 * be NULL. 0 or a negative code with err set; *out NULL on error. */
int table_mix_generate(const struct table_mix *m, size_t size, uint64_t seed,
                       const struct table_limits *lim, struct table **out, char *err, size_t cap);

#endif
