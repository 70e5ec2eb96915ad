/* pacer — the mix generator's spec as parsed (private to src/table): what
 * mix_spec.c builds from the YAML and mix_gen.c expands into a table. See
 * mix.h for the contract. Everything in a table_mix lives in its arena. */
#ifndef PACER_TABLE_MIX_INT_H
#define PACER_TABLE_MIX_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "table/mix.h"
#include "table/table_int.h"

/* Limits of a spec (docs/tables.md). */
#define MIX_FILE_CAP (1u << 20)
#define MIX_MAX_SHAPES 64
#define MIX_MAX_TEMPLATES 256
#define MIX_MAX_METHODS 16
#define MIX_MAX_ROUTES 1000000u
#define MIX_MAX_HEADERS 32
#define MIX_TEMPLATE_CAP 4096u
#define MIX_BODY_TEMPLATE_CAP (64u << 10)
#define MIX_MAX_WEIGHT 1e9
#define MIX_ID_MAX 1000000000000ull

enum ph { PH_LIT, PH_ROUTE, PH_ID, PH_UUID, PH_WORD, PH_PATH, PH_N, PH_COUNT };

struct part {
	enum ph kind;
	const char *lit;
	size_t len;
};

struct tpl {
	const struct part *parts;
	size_t n;
	bool has_route;
};

struct shape {
	const char *name;
	double weight;
	size_t routes;
	struct tpl *tpls;
	size_t n_tpls;
	bool has_loc;
	double loc_req, loc_routes;
	unsigned line;
};

struct method {
	const char *name;
	double weight;
	bool body;
};

struct table_mix {
	struct ta *arena;
	const char *source;
	const char *base_url;          /* without a trailing '/' */
	struct method *methods;
	size_t n_methods;
	struct shape *shapes;
	size_t n_shapes;
	bool has_loc;
	double loc_req, loc_routes;
	double query_share;
	struct tpl query;
	struct tb_hdr *headers;
	size_t n_headers;
	bool has_body;
	struct tpl body;
	const char *content_type;      /* NULL: none added */
	uint64_t id_max;
};

#endif
