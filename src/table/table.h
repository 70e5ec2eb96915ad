/* pacer — request tables (pure): a fixed, validated list of requests loaded
 * from a targets file, a JSON Lines file, a folder of bodies or a HAR
 * recording, or built by the mix generator (table/mix.h); encoded to wire
 * bytes once before a run and identified by a SHA-256 over those bytes.
 *
 * Ownership: a struct table owns every string it points at (one arena);
 * table_free releases all of it. Nothing in a table is modified after it is
 * returned, so one table may be shared read-only by any number of threads.
 *
 * Errors: every loader returns 0, or a negative code (PACER_EPARSE for
 * malformed input, PACER_ETOOBIG for a limit exceeded, PACER_EHEADER for a
 * bad header, PACER_EURL for a bad URL, -errno for a file that cannot be
 * read, -ENOMEM) and writes one line to err[cap] that names the file and the
 * line (or HAR entry, or body file) and says what was wrong:
 *   "api.targets:12: header 'X-A b: 1': header name has a character not allowed in a token"
 * On error *out is set to NULL: nothing partial is ever returned. */
#ifndef PACER_TABLE_TABLE_H
#define PACER_TABLE_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum table_format {
	TABLE_FMT_AUTO = 0, /* table_load: JSONL when the first significant byte is '{', else targets */
	TABLE_FMT_TARGETS,  /* "METHOD URL" + "Name: value" lines + "@body", blank line between */
	TABLE_FMT_JSONL,    /* {"method","url","header":{name:[values]},"body"(base64)|"body_file"} */
	TABLE_FMT_BODIES,   /* table_from_bodies */
	TABLE_FMT_HAR,      /* table_har_import */
	TABLE_FMT_MIX,      /* table_mix_generate */
};

/* Bounds on what a loader accepts. A field left 0 takes its default. */
struct table_limits {
	size_t max_requests;      /* default 1,000,000 */
	size_t max_body_bytes;    /* per request (--max-body); default 1 MiB */
	size_t max_line_bytes;    /* a targets line or header; default 64 KiB. A JSONL line
	                           * may be max_line_bytes + 4/3 max_body_bytes (base64). */
	size_t max_file_bytes;    /* a table, HAR or spec file; default 256 MiB */
	size_t max_headers;       /* per request; default 100 */
	uint64_t max_total_bytes; /* URLs + headers + distinct bodies of the table; default 1 GiB */
	bool no_body_files;       /* reject "@file" and "body_file" (fuzzing, untrusted input) */
};

#define TABLE_DEFAULT_MAX_REQUESTS 1000000u
#define TABLE_DEFAULT_MAX_BODY (1u << 20)
#define TABLE_DEFAULT_MAX_LINE (64u << 10)
#define TABLE_DEFAULT_MAX_FILE (256u << 20)
#define TABLE_DEFAULT_MAX_HEADERS 100u
#define TABLE_DEFAULT_MAX_TOTAL (1ull << 30)

/* A host the table sends to: connections are pooled per host. Two URLs name
 * the same host when socket path (byte for byte, or none), scheme, port and
 * host (ASCII case-insensitive) agree. */
struct table_host {
	const char *name;       /* as first written; IPv6 without brackets */
	uint16_t port;
	bool tls;               /* https */
	bool ipv6;              /* name is an IPv6 literal */
	size_t n_reqs;          /* requests in the table that go to this host */
	const char *unix_path;  /* "unix:PATH:http://..." URLs: the socket PATH (name and
	                         * port then only make the Host header and TLS name);
	                         * NULL for TCP */
};

/* Longest request name a table accepts, in bytes. */
#define TABLE_NAME_MAX 200

/* Longest Unix socket path a table accepts (sun_path less its NUL). */
#define TABLE_UNIX_PATH_MAX 107

/* Split a table URL of the form "unix:PATH:http(s)://host[:port]/..." (HTTP
 * over the Unix domain socket PATH; "unix:" in any case). PATH ends at the
 * first ":http://" or ":https://" (any case); it must be absolute, at most
 * TABLE_UNIX_PATH_MAX bytes of printable ASCII without spaces.
 * When url has the form: 0, *path / *path_len = PATH (not NUL-terminated,
 * points into url) and *http = the http(s) URL after it (not checked here).
 * When url does not start with "unix:": 0, *path = NULL, *path_len = 0 and
 * *http = url. A malformed form: PACER_EURL (PACER_ETOOBIG for a long
 * path) with *why (when not NULL) a static phrase. Pure; url NUL-terminated. */
int table_url_unix(const char *url, const char **path, size_t *path_len, const char **http,
                   const char **why);

/* One request. Every pointer is owned by the table. */
struct table_req {
	const char *method;           /* a token, e.g. "GET" */
	const char *url;              /* absolute URL as written in the source */
	const char *target;           /* path and query as sent ("/" when empty) */
	size_t host;                  /* index into table.hosts */
	const char *const *headers;   /* "Name: value", whitespace around the value trimmed;
	                               * repeats of one name are grouped, in their order */
	size_t n_headers;
	const char *body;             /* NULL when body_len is 0; may contain NUL bytes */
	size_t body_len;
	const char *shape;            /* mix generator shape or JSONL "shape"; NULL if unknown */
	const char *name;             /* never NULL: the name its figures are reported under
	                               * (table_req_name): the JSONL "name" / HAR import's,
	                               * else "METHOD shape" when the shape is known, else
	                               * "METHOD path" (the target without its query) */
	bool name_given;              /* name came from the source (written back by
	                               * table_write_jsonl), not derived */
	unsigned line;                /* source line (targets, JSONL), HAR entry index,
	                               * 1-based file number (bodies) or request number (mix) */
};

struct table {
	struct table_req *reqs;       /* n >= 1 */
	size_t n;
	struct table_host *hosts;     /* n_hosts >= 1, in order of first use */
	size_t n_hosts;
	const char *source;           /* file, folder or spec path as given */
	enum table_format format;     /* where the table came from */
	void *priv;                   /* the arena; private */
};

/* Wire bytes of every request, back to back: request i is
 * bytes[off[i]] .. bytes[off[i + 1]] (off has n + 1 entries). Owned by the
 * caller of table_encode; release with table_wire_free. */
struct table_wire {
	char *bytes;
	size_t *off;
	size_t n;
};

/* "targets", "jsonl", ... (static). */
const char *table_format_name(enum table_format f);
/* "auto", "targets", "jsonl" → AUTO/TARGETS/JSONL. 0 or PACER_EPARSE. */
int table_format_parse(const char *s, enum table_format *f);

/* Load a table file. fmt is AUTO, TARGETS or JSONL; lim may be NULL
 * (defaults). Body files ("@path", "body_file") are relative to the table
 * file's folder unless absolute; each is read once however often it is
 * named. 0 or a negative code with "FILE:LINE: ..." in err (see above). */
int table_load(const char *path, enum table_format fmt, const struct table_limits *lim,
               struct table **out, char *err, size_t cap);

/* The same from text in memory (text[len], need not be NUL-terminated).
 * source names the text in messages; base_dir resolves relative body files
 * (NULL: the current folder). */
int table_parse(const char *text, size_t len, enum table_format fmt, const char *source,
                const char *base_dir, const struct table_limits *lim, struct table **out,
                char *err, size_t cap);

/* A table file read a piece at a time (--lazy): for tables larger than
 * memory should hold. Each piece is a table of the next requests, parsed
 * from about piece_bytes of the text (cut between requests; default 1 MiB), exactly as
 * table_load would parse them: the pieces' requests, in order, are the
 * table's. Line numbers and messages are the whole file's ("FILE:LINE:
 * ..."). Hosts are numbered over the whole stream: a piece's hosts[] holds
 * every host of this and the earlier pieces in order of first use, and
 * hosts[i].n_reqs counts the requests to host i up to the piece's end.
 * The limits apply to each piece (max_file_bytes not at all); a request
 * whose text is longer than 64 MiB is an error. A regular file that is not
 * at its end what it was when opened (size, modification time, every byte
 * read) is the error -ESTALE there: cut short, grown or rewritten while it
 * was read, its requests would not be the file's. */
struct table_stream;

/* path "-" reads standard input (named "stdin", body files relative to the
 * working folder). fmt: AUTO, TARGETS or JSONL. piece_bytes 0: 1 MiB.
 * 0 or a negative code with the message in err. */
int table_stream_open(const char *path, enum table_format fmt, const struct table_limits *lim,
                      size_t piece_bytes, struct table_stream **out, char *err, size_t cap);
/* The same from an open descriptor (read, not closed; the stream does not
 * seek); source names it in messages, base_dir resolves body files. */
int table_stream_open_fd(int fd, const char *source, const char *base_dir,
                         enum table_format fmt, const struct table_limits *lim,
                         size_t piece_bytes, struct table_stream **out, char *err, size_t cap);
/* The next piece into *piece (the caller frees it with table_free), or
 * *piece NULL at the end (after at least one piece; a stream without any
 * request is the error "FILE: no requests"). 0 or a negative code with the
 * message in err; after an error the stream gives nothing more. */
int table_stream_next(struct table_stream *st, struct table **piece, char *err, size_t cap);
/* The format read (AUTO resolved once the first request is seen). */
enum table_format table_stream_format(const struct table_stream *st);
/* Requests given so far. */
size_t table_stream_count(const struct table_stream *st);
/* After the last piece: the table's hosts (with their counts over the
 * whole table), source and format, as a table without requests (n 0, reqs
 * NULL) that the caller frees with table_free; NULL before any piece or
 * when taken already. */
struct table *table_stream_take_hosts(struct table_stream *st);
/* Release the stream (and close what table_stream_open opened). NULL is fine. */
void table_stream_close(struct table_stream *st);

/* --bodies DIR: one request per regular file in dir (names starting with '.'
 * are skipped; symbolic links are followed), in byte order of the names,
 * each sent with `method` (NULL: POST) to `url`, with a Content-Type header
 * when content_type is not NULL. A file over max_body_bytes, an unreadable
 * file or an empty folder is an error naming the file ("DIR/NAME: ...").
 * 0 or a negative code. */
int table_from_bodies(const char *dir, const char *url, const char *method,
                      const char *content_type, const struct table_limits *lim,
                      struct table **out, char *err, size_t cap);

/* Release a table and everything it owns. NULL is fine. */
void table_free(struct table *t);

/* Encode every request with req_encode. Headers in extra[n_extra] ("Name:
 * value", e.g. from -H) are added to every request and replace the
 * request's own headers of the same name; user_agent (may be NULL) is sent
 * when neither has a User-Agent. w is filled (release with table_wire_free).
 * 0, PACER_EHEADER (a bad extra header: message in err) or -ENOMEM. */
int table_encode(const struct table *t, const char *user_agent, const char *const *extra,
                 size_t n_extra, struct table_wire *w, char *err, size_t cap);
/* The same for requests first .. first + count - 1 only (w->n = count;
 * -EINVAL when they are not all in t): a large table encoded a batch at a
 * time. */
int table_encode_range(const struct table *t, size_t first, size_t count, const char *user_agent,
                       const char *const *extra, size_t n_extra, struct table_wire *w, char *err,
                       size_t cap);
/* The same for each request in turn: fn(arg, i, its wire bytes, their
 * length), in batches that hold at most a few MiB of bodies, so that the
 * memory taken does not grow with the table. Stops at fn's first non-zero
 * return, which it returns; else 0 or table_encode's error (message in
 * err). */
int table_encode_each(const struct table *t, const char *user_agent, const char *const *extra,
                      size_t n_extra, int (*fn)(void *arg, size_t i, const char *req, size_t len),
                      void *arg, char *err, size_t cap);
void table_wire_free(struct table_wire *w);

/* The table's identity: SHA-256 over its canonical wire bytes, which are,
 * for each request in table order, its length as an 8-byte big-endian
 * integer followed by its wire bytes. hex gets 64 lowercase hex digits and a
 * NUL. 0 or -ENOMEM. */
int table_wire_hash(const struct table_wire *w, char hex[65]);
/* The same hash taken a request at a time (a table too large to encode at
 * once): new, add each request's wire bytes in table order, end (hex as
 * above; adds after end are ignored), free. new and end: 0 or -ENOMEM. */
struct table_hasher;
int table_hasher_new(struct table_hasher **out);
void table_hasher_add(struct table_hasher *h, const char *req, size_t len);
int table_hasher_end(struct table_hasher *h, char hex[65]);
void table_hasher_free(struct table_hasher *h);

/* The workload hash: what was sent, not where (docs/tables.md#the-hash).
 * The table hash's canonical form taken over the wire bytes with the value
 * of each Host header replaced by its number, in order of first
 * appearance ("Host: #1", "#2", ...; the 65th distinct value and later are
 * all "#65"), and pacer's own User-Agent ("pacer/VERSION") by "pacer". Two
 * tables that differ only in their hosts' names or ports, or in pacer's
 * version, have the same workload hash; which requests go to one host
 * together still counts. The hasher takes it beside the table hash:
 * table_hasher_end_workload instead of table_hasher_end gives both. 0 or
 * -ENOMEM. */
int table_hasher_end_workload(struct table_hasher *h, char hex[65], char workload_hex[65]);
/* table_wire_hash with the workload hash too. */
int table_wire_hashes(const struct table_wire *w, char hex[65], char workload_hex[65]);
/* table_encode + table_wire_hash + table_wire_free. */
int table_hash(const struct table *t, const char *user_agent, const char *const *extra,
               size_t n_extra, char hex[65], char *err, size_t cap);

/* Write the table as JSON Lines (one object per request: method, url,
 * header, body as base64, shape when known, name when given) that table_load reads back to
 * the same wire bytes and hash. 0, PACER_EUNSUPPORTED when a header value is
 * not UTF-8 (JSON cannot carry it; err names the request), -EIO on a write
 * error or -ENOMEM. */
int table_write_jsonl(FILE *f, const struct table *t, char *err, size_t cap);

/* A name and how many requests have it. */
struct table_count {
	const char *name;   /* owned by the summary (or the table) */
	size_t n;
};

/* What a table holds, for `pacer table show`. */
struct table_summary {
	size_t n;
	struct table_count *methods;  /* by count, most first; ties by name */
	size_t n_methods;
	struct table_count *hosts;    /* "host:port" (IPv6 in brackets), https:// prefixed;
	                               * unix hosts "unix:PATH:http(s)://host:port" */
	size_t n_hosts;
	struct table_count *shapes;   /* mix shapes when known, else path templates
	                               * (digit-only segments → {id}, long hex/UUIDs → {hex}) */
	size_t n_shapes;
	bool shapes_known;            /* shapes came from the table, not from paths */
	struct table_count *names;    /* request names (table_req.name), by count */
	size_t n_names;
	size_t distinct_targets;      /* distinct (host, path?query) */
	size_t with_query;
	size_t with_body;
	size_t body_min, body_max;    /* over requests with a body; 0 if none */
	uint64_t body_total;
	size_t wire_min, wire_p50, wire_max;
	uint64_t wire_total;
	void *priv;
};

/* Summarise t, whose encoding is w (for the sizes). 0 or -ENOMEM. Release
 * with table_summary_free. */
int table_summarize(const struct table *t, const struct table_wire *w, struct table_summary *s);
void table_summary_free(struct table_summary *s);

/* HAR 1.2 import options. */
struct table_har_opts {
	bool keep_cookies;            /* keep Cookie headers (several are joined with "; ") */
	/* keep only entries for these hosts ("HOST" matches any port,
	 * "HOST:PORT" / "[V6]:PORT" exactly; case-insensitive); none: all */
	const char *const *hosts;
	size_t n_hosts;
	bool skip_incomplete;         /* skip (and count) entries whose recorded body is
	                               * shorter than their Content-Length, instead of failing */
};

/* What a HAR import left out. */
struct table_har_stats {
	size_t entries;               /* log.entries */
	size_t skipped;               /* entries whose URL is not http(s): ws:, data:, blob:, ... */
	size_t dropped_headers;       /* hop-by-hop, Host, Content-Length, pseudo-headers */
	size_t dropped_cookies;       /* Cookie headers left out */
	size_t other_hosts;           /* entries left out by the hosts filter */
	size_t incomplete;            /* entries skipped by skip_incomplete */
};

/* Import a HAR file: log.entries[].request {method, url, headers[{name,
 * value}], postData {mimeType, text | params}}. Dropped: HTTP/2 pseudo-
 * headers (":authority", ...), hop-by-hop headers (Connection and the names
 * it lists, Keep-Alive, Proxy-*, TE, Trailer, Transfer-Encoding, Upgrade),
 * Host, Content-Length, and Cookie unless keep_cookies. A Content-Type is
 * added from postData.mimeType when missing. Entries that are not http(s)
 * are skipped and counted. Each request is named "METHOD path" (name_given,
 * so table_write_jsonl writes it). o and stats may be NULL. Errors name the entry:
 * "rec.har: log.entries[3].request.url: ...". 0 or a negative code. */
int table_har_import(const char *path, const struct table_har_opts *o,
                     const struct table_limits *lim, struct table **out,
                     struct table_har_stats *stats, char *err, size_t cap);
/* The same from text in memory. */
int table_har_parse(const char *text, size_t len, const char *source,
                    const struct table_har_opts *o, const struct table_limits *lim,
                    struct table **out, struct table_har_stats *stats, char *err, size_t cap);

#endif
