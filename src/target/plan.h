/* pacer — plans of the embedded target server: which routes exist and how
 * each one answers. A plan is loaded once (from a built-in or a YAML file),
 * validated, and compiled into precomputed response bytes; after that it is
 * immutable and shared read-only by all server threads.
 *
 * The YAML schema is documented in docs/serve.md. Every string and array
 * hanging off a plan is owned by the plan and freed by target_plan_free(). */
#ifndef PACER_TARGET_PLAN_H
#define PACER_TARGET_PLAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "target/dist.h"
#include "util/rng.h"

#define TARGET_MAX_ROUTES 64
#define TARGET_MAX_STATUSES 8
#define TARGET_MAX_HEADERS 16
#define TARGET_HEADERS_CAP 8192u      /* bytes of a route's extra headers */
#define TARGET_MAX_KV_TABLE 1024
#define TARGET_BODY_CAP (16u << 20)     /* largest static body */
#define TARGET_TEMPLATE_CAP (32u << 10) /* largest body template */
#define TARGET_QUERY_ECHO_CAP 256u      /* bytes a {{query:NAME}} expands to at most */
#define TARGET_QUERY_NAME_CAP 64u       /* longest NAME in {{query:NAME}} */
#define TARGET_KV_MAX_KEYS 64u          /* keys one kv request may ask for */
#define TARGET_KV_VALUE_CAP 1024u       /* longest kv value */
#define TARGET_DYN_CAP (256u << 10)    /* largest rendered template or kv body */
#define TARGET_WORK_CAP_NS (1000000000ull)
#define TARGET_PLAN_FILE_CAP (1u << 20) /* largest plan file */

struct target_header {
	const char *name;
	const char *value;
};

/* A piece of a body template. */
enum target_seg_kind {
	TARGET_SEG_TEXT,  /* text/len literally */
	TARGET_SEG_ID,    /* {{id}}: 16 random hex digits */
	TARGET_SEG_SEQ,   /* {{seq}}: this thread's request number, from 1 */
	TARGET_SEG_QUERY, /* {{query:NAME}}: the request's query parameter NAME
	                   * (text/len), percent-decoded; bytes outside
	                   * [A-Za-z0-9 ._~,:-] become '_'; at most
	                   * TARGET_QUERY_ECHO_CAP bytes */
};

struct target_seg {
	enum target_seg_kind kind;
	const char *text;
	size_t len;
};

/* The body of one kind of answer. */
struct target_body {
	const char *data; /* literal body, or the template's source text */
	size_t len;
	struct target_seg *segs; /* non-NULL: a template of n_segs pieces */
	size_t n_segs;
	bool kv; /* produced by the route's kv lookup instead */
};

/* What a response looks like before the status mix and fill are applied. */
struct target_answer {
	int status;          /* nofill only: 0 = keep the drawn status */
	struct target_body body;
	struct target_header *headers;
	size_t n_headers;
	bool headers_set;    /* nofill only: headers given (else the route's apply) */
};

/* A compiled variant: one (status, filled/no-fill/error) combination with
 * its precomputed bytes. */
struct target_resp {
	int status;
	enum { TARGET_RESP_FILLED, TARGET_RESP_NOFILL, TARGET_RESP_ERROR } kind;
	const struct target_body *body;
	bool no_body_allowed; /* 204, 304: no body and no Content-Length */
	/* "HTTP/1.1 <status> <reason>\r\n" + headers, each ending in CRLF; no
	 * Content-Length, no blank line */
	const char *head;
	size_t head_len;
	/* static bodies only: the whole keep-alive response (head +
	 * Content-Length + blank line + body) and where its body starts */
	const char *wire;
	size_t wire_len;
	size_t wire_body_off;
	uint64_t thresh; /* chosen when a 64-bit draw is <= thresh (cumulative) */
	double p;        /* its probability */
};

struct target_kv {
	const char *param;  /* query parameter holding comma-separated keys */
	const char *prefix; /* generated keys are prefix0 .. prefix<generate-1> */
	uint64_t generate;
	uint32_t value_size; /* length of generated values */
	struct target_header *table; /* literal key → value, sorted by key */
	size_t n_table;
};

struct target_misbehave {
	uint64_t stall_every_ns; /* 0: no stalls */
	uint64_t stall_for_ns;
	uint64_t close_after;    /* close the connection after this many requests (0: never) */
	double garbage;          /* probability of answering with non-HTTP bytes, then closing */
	uint64_t garbage_thresh;
	uint32_t slow_bytes;     /* 0: normal; else send the body slow_bytes at a time */
	uint64_t slow_every_ns;
};

struct target_route {
	const char *method; /* NULL: any method; a GET route also answers HEAD */
	const char *path;
	size_t path_len;
	bool prefix;        /* path is a prefix rather than the exact path */
	struct target_dist latency;
	uint64_t work_ns;   /* CPU busy work per request */
	size_t n_status;
	int status[TARGET_MAX_STATUSES];
	double status_p[TARGET_MAX_STATUSES];
	double fill;        /* probability of the filled answer for 2xx/3xx draws */
	struct target_answer filled, nofill;
	bool server_timing; /* add Server-Timing: app;dur=<ms> */
	struct target_kv *kv;
	struct target_misbehave mis;
	struct target_resp *resps; /* compiled variants */
	size_t n_resps;
	bool simple;        /* one variant, static body, no latency/work/timing/misbehaviour */
	unsigned line;      /* line of the route in its source */
};

struct target_plan {
	const char *name;
	const char *description;
	const char *source;          /* file name, or "builtin:NAME" */
	uint64_t seed;
	uint64_t request_timeout_ns; /* first byte of a request → whole request read */
	uint64_t idle_timeout_ns;    /* idle keep-alive connection, or a client not reading */
	uint32_t max_connections;    /* open connections over all threads */
	struct target_route *routes;
	size_t n_routes;
	struct target_resp not_found; /* 404 for unmatched requests */
	void *arena;                  /* internal: owns everything above */
};

struct target_builtin {
	const char *name;
	const char *summary; /* one line */
	const char *yaml;    /* the plan, in the same schema as plan files */
};

/* The built-in plans (static table) and their count. */
const struct target_builtin *target_plan_builtins(size_t *n);

/* Load the built-in plan `name`. 0 and *out (free with target_plan_free), or
 * PACER_EPARSE when there is no such built-in, -ENOMEM (-EINVAL would mean
 * a built-in that fails its own validation: a bug). */
int target_plan_builtin(const char *name, struct target_plan **out);

/* Load a YAML plan file. On failure returns a negative code (PACER_EPARSE,
 * PACER_ERANGE, PACER_ETOOBIG, -errno from opening/reading) and writes one
 * line "FILE:LINE: what was expected" (or "FILE: why" when no line applies)
 * to err; a key given twice in one mapping is PACER_EPARSE "FILE:LINE:
 * duplicate key 'K' (first at line N)" (util/yaml_get.h). */
int target_plan_load(const char *path, struct target_plan **out, char *err, size_t errcap);

/* Parse a plan held in memory; `source` names it in messages. Same results
 * as target_plan_load. */
int target_plan_parse(const char *text, size_t len, const char *source, struct target_plan **out,
                      char *err, size_t errcap);

/* Free a plan and everything it owns. NULL is fine. */
void target_plan_free(struct target_plan *p);

/* Pick a response variant of `rt` with one 64-bit draw from r (none when
 * the route has a single variant). Returns an index into rt->resps. */
size_t target_route_pick(const struct target_route *rt, struct rng *r);

/* First route matching method and path (a GET route also matches HEAD), or
 * NULL. */
const struct target_route *target_plan_match(const struct target_plan *p, const char *method,
                                             size_t method_len, const char *path, size_t path_len);

/* Reason phrase of a status code ("OK", "Service Unavailable", ... or
 * "Status"). */
const char *target_reason(int status);

#endif
