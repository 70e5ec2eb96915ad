/* pacer — request tables: what the loaders share (private to src/table).
 *
 * A loader creates a builder (tb_init), adds requests one by one (tb_add
 * validates, normalises and copies them into the table's arena) and either
 * takes the finished table (tb_finish) or throws everything away (tb_abort).
 * tb_add leaves a message without the "FILE:LINE: " prefix in b->why; the
 * loader adds the prefix.
 *
 * Where things are: the arena and table_free in arena.c; the builder in
 * build.c (no file I/O); every file read in load.c; format names,
 * table_parse and table_load in table.c; encoding and the hash in wire.c;
 * the parsers in targets.c, jsonl.c, har.c and mix_spec.c / mix_gen.c.
 * Calls go one way: table.c → parsers → load.c → build.c → arena.c. */
#ifndef PACER_TABLE_TABLE_INT_H
#define PACER_TABLE_TABLE_INT_H

#include "util/text.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <strings.h>

#include "http/url.h"
#include "table/table.h"

/* An arena: many small allocations released at once (calloc the struct;
 * ta_free releases the chunks and the struct). */
struct ta {
	struct ta_chunk *head;
};
/* n bytes aligned for any type, or NULL on ENOMEM. */
void *ta_alloc(struct ta *a, size_t n);
/* A NUL-terminated copy of s[n], or NULL. */
char *ta_strndup(struct ta *a, const char *s, size_t n);
void ta_free(struct ta *a);

/* A header as given: name and value (value untrimmed). */
struct tb_hdr {
	const char *name;
	size_t name_len;
	const char *value;
	size_t value_len;
};

struct tb_req {
	const char *method;            /* NUL-terminated */
	const char *url;               /* NUL-terminated */
	const struct tb_hdr *headers;
	size_t n_headers;
	const char *body;              /* may be NULL when body_len is 0 */
	size_t body_len;
	bool body_in_arena;            /* body is already in this table's arena (cached body file) */
	const char *shape;             /* NULL or NUL-terminated */
	const char *name;              /* NULL (derived: see table_req.name) or NUL-terminated:
	                                * 1..TABLE_NAME_MAX bytes, no control characters */
	unsigned line;
};

/* A string → size_t map (open addressing), keys copied into the arena. */
struct tb_map {
	struct tb_map_slot {
		const char *key;
		size_t klen;
		uint64_t hash;
		size_t val;
	} *slots;
	size_t cap, n;
};

struct tb {
	struct table *t;
	struct table_limits lim;
	size_t cap;                    /* capacity of t->reqs */
	size_t host_cap;               /* capacity of t->hosts */
	struct tb_map hosts;
	struct tb_map bodies;          /* body file path → index into cached[] */
	struct tb_body {
		const char *p;
		size_t len;
	} *cached;
	size_t n_cached, cap_cached;
	uint64_t total;                /* bytes counted against max_total_bytes */
	struct url *u;                 /* scratch */
	char *line;                    /* scratch: one header line */
	size_t line_cap;
	char **hdr_out;                /* scratch: normalised header lines */
	size_t hdr_cap;
	char why[512];
	enum { TB_AT_REQ, TB_AT_HEADER, TB_AT_BODY } why_at; /* what b->why is about */
	size_t why_header;             /* TB_AT_HEADER: index into tb_req.headers */
	unsigned line0;                /* lines of the source before the text parsed (a
	                                * piece of a stream, stream.c): messages and
	                                * table_req.line count from line0 + 1 */
};

/* Find key in m; when absent and insert is true, add it (the key copied
 * into the table's arena) with value val. Returns the slot, or NULL (absent
 * and not inserted, or ENOMEM). */
struct tb_map_slot *tb_map_find(struct tb *b, struct tb_map *m, const char *key, size_t klen,
                                bool insert, size_t val);

/* Whether a[an] is lit, ignoring ASCII case. */
static inline bool tb_ieq(const char *a, size_t an, const char *lit)
{
	return an == strlen(lit) && strncasecmp(a, lit, an) == 0;
}

/* Fill in the defaults for the zero fields of lim (NULL: all defaults). */
void tb_limits(struct table_limits *out, const struct table_limits *lim);

/* 0 or -ENOMEM. source is copied. */
int tb_init(struct tb *b, const struct table_limits *lim, enum table_format fmt,
            const char *source);
/* Validate and add one request. 0 or a negative code with b->why set. */
int tb_add(struct tb *b, const struct tb_req *r);
/* The finished table (NULL with b->why set when it holds no request);
 * the builder is released either way. */
struct table *tb_finish(struct tb *b);
/* Release the builder and the table under construction. */
void tb_abort(struct tb *b);

/* n bytes from the table's arena (aligned for any type); NULL on ENOMEM. */
void *tb_alloc(struct tb *b, size_t n);
/* A NUL-terminated copy of s[n] in the arena. */
char *tb_strndup(struct tb *b, const char *s, size_t n);

/* Read a body file once: path resolved against base_dir unless absolute.
 * *body points into the arena (shared by every request that names the
 * same path). 0 or a negative code with b->why set ("body file P: ..."). */
int tb_body_file(struct tb *b, const char *base_dir, const char *path, size_t path_len,
                 const char **body, size_t *len);

/* Write "fmt..." into b->why and return code. */
__attribute__((format(printf, 3, 4))) int tb_why(struct tb *b, int code, const char *fmt, ...);
/* Write "prefix: fmt..." into err[cap] (when cap > 0) and return code. */
__attribute__((format(printf, 4, 5))) int tb_err(char *err, size_t cap, int code,
                                                 const char *fmt, ...);

/* Read all of path (at most max_bytes) into *text (malloc'd, NUL-
 * terminated; *len without the NUL). 0, or -EISDIR, PACER_ETOOBIG or
 * -errno with "PATH: cannot read: it is a folder", "PATH: over the limit of
 * N bytes" or "PATH: cannot read: REASON" in err[cap] (*text NULL then). */
int tb_read_file(const char *path, size_t max_bytes, char **text, size_t *len, char *err,
                 size_t cap);

/* Folder part of path ("." when none), malloc'd; NULL on ENOMEM. */
char *tb_dirname(const char *path);

/* Register prev's hosts (in their order, with their n_reqs) before any
 * request is added, so that the table being built numbers hosts as prev
 * does and its counts go on from prev's (stream.c). 0 or -ENOMEM. */
int tb_seed_hosts(struct tb *b, const struct table *prev);

/* The format of a table text (AUTO resolved): JSONL when the first byte
 * that is neither whitespace nor in a '#' comment line is '{', else
 * targets. *known (may be NULL) is false when text[len] holds no such
 * byte (only whitespace and comments, the last line maybe unfinished). */
enum table_format tb_detect(const char *text, size_t len, bool *known);

/* Where a targets text that starts between requests may be cut so that
 * text[0..cut) holds only whole requests and parsing the two parts gives
 * what parsing it whole gives, errors included: the latest of the start of
 * a complete line that opens a request, the end of a complete blank line,
 * and the end of a run of comment lines that follows a blank line or the
 * text's start, among lines the parser takes (at most max_line bytes, no
 * NUL); 0 when there is none. */
size_t tb_targets_cut(const char *text, size_t len, size_t max_line);

/* Parsers of table_parse (targets.c, jsonl.c). */
int tb_parse_targets(struct tb *b, const char *text, size_t len, const char *base_dir,
                     char *err, size_t cap);
int tb_parse_jsonl(struct tb *b, const char *text, size_t len, const char *base_dir,
                   char *err, size_t cap);

#endif
