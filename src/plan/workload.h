/* pacer — the workload as sent: what the requests of a run are (methods and
 * their shares, the first requests one by one, bodies), described from the
 * requests the CLI encoded, whatever made them (one URL, the routes of an
 * embedded plan, a request table, a folder of bodies). Pure data, bounded:
 * fixed arrays, no allocation, so a table of a million requests costs a
 * few kilobytes here. Filled by the CLI before the run, read by the report
 * writers (plan.workload in the JSON, docs/result.md). */
#ifndef PACER_PLAN_WORKLOAD_H
#define PACER_PLAN_WORKLOAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PLAN_WL_MAX_METHODS 16 /* distinct methods counted; the rest pooled */
#define PLAN_WL_METHOD_CAP 24  /* bytes of a method token kept (longer: cut) */
#define PLAN_WL_MAX_LISTED 8   /* requests described one by one, in table order */
#define PLAN_WL_TARGET_CAP 200 /* bytes of a listed request's path?query kept */
#define PLAN_WL_NAME_CAP 64    /* bytes of a request's name kept */
#define PLAN_WL_MAX_NAMES 16   /* distinct request names counted; the rest pooled */

/* Where the requests came from ("url", "embedded_routes", "table",
 * "bodies"): see plan_workload_init. */
struct plan_wl_method {
	char method[PLAN_WL_METHOD_CAP];
	uint64_t requests;     /* requests of the rotation with this method */
};

struct plan_wl_name {
	char name[PLAN_WL_NAME_CAP];
	uint64_t requests;     /* requests of the rotation with this name */
};

struct plan_wl_request {
	char method[PLAN_WL_METHOD_CAP];
	char target[PLAN_WL_TARGET_CAP]; /* path and query as sent */
	bool target_cut;       /* longer than PLAN_WL_TARGET_CAP - 1 bytes */
	uint64_t body_bytes;
	char name[PLAN_WL_NAME_CAP]; /* the request's name (a table's: table_req.name); "" if none */
};

struct plan_workload {
	const char *source;    /* static: "url", "embedded_routes", "table", "bodies" */
	uint64_t requests;     /* distinct requests the run sends in turn (or at random) */
	struct plan_wl_method methods[PLAN_WL_MAX_METHODS]; /* most requests first */
	size_t n_methods;
	uint64_t other_method_requests; /* requests whose method did not fit in methods[] */
	struct plan_wl_name names[PLAN_WL_MAX_NAMES]; /* request names (a table's table_req.name),
						       * most requests first */
	size_t n_names;
	uint64_t other_name_requests;   /* named requests whose name did not fit in names[] */
	uint64_t unnamed;               /* requests without a name */
	struct plan_wl_request listed[PLAN_WL_MAX_LISTED];  /* the first requests */
	size_t n_listed;
	uint64_t with_body;    /* requests with a body (body_bytes > 0) */
	uint64_t body_bytes_total, body_bytes_min, body_bytes_max; /* over those with one */
	char sha256[65];       /* SHA-256 of the wire bytes (table_wire_hash's form); "" unknown */
	char workload_sha256[65]; /* the workload hash (what was sent, not where:
	                           * table_hasher_end_workload); "" unknown */
};

/* Empty, from `source` (a static string, one of the four above). */
void plan_workload_init(struct plan_workload *w, const char *source);

/* Count one request: method (a token), target (path?query, target_len
 * bytes, need not be NUL-terminated), body size and name (NULL or "" for
 * none). Strings are copied (cut to the caps). */
void plan_workload_add(struct plan_workload *w, const char *method, const char *target,
		       size_t target_len, uint64_t body_bytes, const char *name);

/* After the last add: methods and names sorted by count, most first
 * (ties: first seen first). */
void plan_workload_finish(struct plan_workload *w);

/* The one method every request uses, or NULL when they use several (or
 * there is none). Points into w. */
const char *plan_workload_method(const struct plan_workload *w);

/* True, with *bytes, when every request has a body of the same size (0:
 * none has one); false when sizes differ. */
bool plan_workload_body_bytes(const struct plan_workload *w, uint64_t *bytes);

#endif
