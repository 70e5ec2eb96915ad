/* pacer — a request stream of the embedded target's multiplexed protocols
 * (HTTP/2: h2.c, HTTP/3: h3.c), one implementation for both: its record,
 * from a per-thread pool and kept for reuse; what its request holds while
 * it arrives and while it is answered (a long :path, a rendered answer),
 * counted against its connection's and its thread's budgets; and what the
 * plan does with the whole request (an error of the server's own, an
 * answer now, or one when its latency has passed, on the stream's own
 * timer). A protocol keeps only its framing: how a stream's header fields
 * arrive and how an answer is written. Everything here runs on the thread
 * that owns the stream's connection. Not for use outside src/target. */
#ifndef PACER_TARGET_TSTREAM_H
#define PACER_TARGET_TSTREAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "http/h1req.h"
#include "target/render.h"
#include "target/theap.h"

#define TSTREAM_HEADERS_CAP                                                                        \
	H1REQ_HEADERS_CAP       /* a request's header fields, counted as
					       * SETTINGS_MAX_HEADER_LIST_SIZE counts them */
#define TSTREAM_METHOD_CAP 16   /* longest method taken (longer: 501) */
#define TSTREAM_PATH_INIT 256   /* first size of a stream's :path buffer */
#define TSTREAM_KEEP_PATH 1024u /* a kept record keeps a :path buffer up to this size */
#define TSTREAM_KEEP_DYN (4 * TARGET_DYN_INIT) /* and a rendered-body buffer up to this */
#define TSTREAM_FREE_KEEP 1024                 /* records kept for reuse per thread and protocol */
#define TSTREAM_CONN_HELD_MAX                                                                      \
	(4 * TSTREAM_HEADERS_CAP)           /* long :path bytes a connection's
							 * incomplete requests may hold */
#define TSTREAM_THREAD_HELD_MAX (16u << 20) /* ... and a thread's, over its connections */
#define TSTREAM_CONN_DYN_MIN                                                                       \
	(4 * TARGET_DYN_CAP)                     /* rendered answers a connection's streams
						   * hold, */
#define TSTREAM_STREAM_DYN (2 * TARGET_DYN_INIT) /* or this much a stream if that is more */
#define TSTREAM_THREAD_DYN_MAX (64u << 20)       /* ... and a thread's */
#define TSTREAM_TIMERS_PER_ROUND 4096            /* timers taken in one turn of the loop */

enum tstream_state {
	TS_HEAD, /* reading the request's header fields */
	TS_BODY, /* reading (discarding) its body */
	TS_WAIT, /* answered later: its latency timer runs */
	TS_SENT, /* answer submitted; the record lives until the stream closes */
};

/* What a connection's (or a thread's) streams hold. */
struct tstream_budget {
	size_t held; /* bytes of long :path (over TSTREAM_KEEP_PATH) of requests still coming */
	size_t dyn;  /* bytes of rendered answers held until they are sent */
};

struct tstream;
struct worker;

/* What a protocol does to one of its streams. */
struct tstream_ops {
	void (*answer)(struct tstream *st);             /* st->resp, now (tstream_body_of) */
	void (*canned)(struct tstream *st, int status); /* the server's own error */
	void (*resume)(struct tstream *st);             /* a deferred (slow) body may go on */
	void (*reset)(struct tstream *st);              /* the stream fails (internal error) */
	void (*timed)(struct tstream *st);              /* a timer acted on st: flush its
							 * connection */
};

/* A thread's streams of one protocol: the records kept for reuse, the
 * budgets over its connections, and the timer heap of its streams. */
struct tstream_pool {
	struct worker *w;
	struct theap *heap;
	const struct tstream_ops *ops;
	struct tstream *free;
	unsigned n_free;
	struct tstream_budget b;
	size_t conn_dyn_max; /* a connection's rendered answers (from max_streams) */
};

/* A connection's streams. */
struct tstream_set {
	struct tstream *head;
	uint32_t n;       /* records: requests not yet answered and sent */
	uint32_t n_timed; /* of them, waiting on their own timer (latency, slow body):
			   * the connection is not idle while one does */
	struct tstream_budget b;
	void *conn; /* the protocol's connection */
};

struct tstream {
	struct theap_node tn; /* first: the timer node leads to the stream */
	struct tstream_set *set;
	struct tstream_pool *pool;
	struct tstream *prev, *next; /* the set's streams, or the pool's free list (next) */
	int64_t id;
	enum tstream_state state;
	bool head_req, too_big, long_method, garbage;
	bool slow, deferred;
	bool held;         /* its :path is held (its request is still coming) */
	uint32_t dyn_held; /* its rendered answer's capacity, counted in the budgets */
	uint8_t method_len;
	char method[TSTREAM_METHOD_CAP];
	char *path;
	uint32_t path_len, path_cap;
	uint32_t hdr_bytes;
	uint64_t begin_ns; /* its header fields began: the request timeout counts from here */
	const struct target_route *rt;
	const struct target_resp *resp;
	uint64_t dispatch_ns, ready_ns;
	const char *body; /* the answer's body, sent from here */
	size_t body_len, body_off;
	size_t slow_budget;
	uint64_t slow_next_ns;
	struct target_dyn dyn;
};

/* The pool of worker w's streams of one protocol (ops), timed on heap. */
void tstream_pool_init(struct tstream_pool *p, struct worker *w, struct theap *heap,
		       const struct tstream_ops *ops);
/* Free the records kept for reuse. */
void tstream_pool_free(struct tstream_pool *p);

/* Whether a new stream may begin on set: the requests still coming hold
 * less than the connection's and the thread's budgets of long :path bytes
 * (else it is refused, for the client to retry later). */
bool tstream_may_begin(const struct tstream_pool *p, const struct tstream_set *set);
/* A record for stream id of set, its request timeout armed; NULL: no
 * memory. */
struct tstream *tstream_get(struct tstream_pool *p, struct tstream_set *set, int64_t id);
/* The stream closed: its timer, holdings and record go. */
void tstream_put(struct tstream *st);

/* A request header field of st, of kind k, name_len bytes of name and
 * value[0..vl). :method and :path are kept (within TSTREAM_METHOD_CAP,
 * and the budgets of long paths); past TSTREAM_HEADERS_CAP in all, or a
 * :path past the budgets, the request is too big (431 once it is whole)
 * and nothing more is kept. -ENOMEM: no memory for the path. */
enum tstream_field { TF_OTHER, TF_METHOD, TF_PATH };
int tstream_header(struct tstream *st, enum tstream_field k, size_t name_len, const uint8_t *value,
		   size_t vl);

/* The whole request of st has arrived: matched to the plan, its answer
 * chosen (and rendered, within the budgets: else 503), answered now or,
 * after its latency, by its timer (ops). */
void tstream_request_done(struct tstream *st);
/* The timers of p's streams that are due: answers after their latency,
 * slow bodies' next pieces, requests not whole within the plan's request
 * timeout (408). */
void tstream_run_timers(struct tstream_pool *p);
/* Arm st's timer for `at`; on failure the stream is reset (ops). */
void tstream_arm(struct tstream *st, uint64_t at);

/* The body of st's answer st->resp (rendered, or the plan's), from its
 * start; whether it is sent (not for HEAD, a status without a body, or an
 * empty one), slowly if the route says so. */
bool tstream_body_of(struct tstream *st);
/* How many of n bytes of st's body may go now: n, or a slow body's
 * budget; 0 when it must wait (deferred, its timer armed for the next
 * piece, when ops->resume is called). */
size_t tstream_slow_take(struct tstream *st, size_t n);

/* ---- the plan's answers as header fields --------------------------------- */

/* One header field of an answer, pointing into the plan or a names buffer. */
struct target_field {
	const char *name, *value;
	size_t nl, vl;
};

/* r's head ("HTTP/1.1 S R" then "Name: value" lines) as header fields: the
 * names lower-cased into names (r->head_len bytes at least), the
 * connection-specific ones HTTP/2 and HTTP/3 forbid left out, at most cap
 * of them in f. 0, or -E2BIG over cap. */
int target_head_fields(const struct target_resp *r, char *names, struct target_field *f, size_t cap,
		       size_t *n);

#define TSTREAM_FIELDS_MAX (2 * TARGET_MAX_HEADERS + 5) /* an answer's, from its head */
#define TSTREAM_NV_MAX                                                                             \
	(TSTREAM_FIELDS_MAX + 3) /* with :status, content-length and
						 * server-timing */

/* An answer's header fields, from its HTTP/1.1 head: the head's fields
 * with lower-case names, the connection-specific ones (Connection,
 * Keep-Alive, ...) that HTTP/2 and HTTP/3 forbid left out; its status as
 * the ":status" value. */
struct tstream_fields {
	char status[4];
	char *names; /* the lower-case names, owned */
	size_t n;
	struct target_field f[TSTREAM_FIELDS_MAX];
};

/* The server's own errors: status, text/plain, a short body. */
#define TSTREAM_N_CANNED 5 /* 400, 408, 431, 501, 503 */
struct tstream_canned {
	int status;
	char st[12], len[12];
	char body[64];
	size_t body_len;
};

/* A plan's answers, made once for a protocol's connections. */
struct tstream_answers {
	struct tstream_fields **route; /* [route][variant] */
	struct tstream_fields nf;      /* the plan's 404 */
	struct tstream_canned canned[TSTREAM_N_CANNED];
};

/* Build a (zeroed before) from plan: 0, -ENOMEM, or -E2BIG (an answer with
 * more fields than TSTREAM_FIELDS_MAX). Free it with tstream_answers_free,
 * whatever came of it. */
int tstream_answers_build(struct tstream_answers *a, const struct target_plan *plan);
void tstream_answers_free(struct tstream_answers *a, const struct target_plan *plan);
/* The fields of answer r of route rt (NULL: the plan's 404). */
const struct tstream_fields *tstream_fields_of(const struct tstream_answers *a,
					       const struct target_plan *plan,
					       const struct target_route *rt,
					       const struct target_resp *r);
/* The server's own error of that status (a 400 for one it has not). */
const struct tstream_canned *tstream_canned_of(const struct tstream_answers *a, int status);

#endif
