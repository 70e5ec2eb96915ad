/* pacer — the embedded target server's dynamic bodies: body templates and kv
 * lookups rendered into a per-connection buffer. Pure: no sockets, clocks or
 * threads; the only state is the buffer the caller hands in (and, for
 * {{id}}, the caller's generator). Not for use outside src/target. */
#ifndef PACER_TARGET_RENDER_H
#define PACER_TARGET_RENDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "target/plan.h"
#include "util/rng.h"

/* The golden-ratio increment of SplitMix64 (2^64 / phi, odd): a seed
 * spreader, also used to derive per-thread seeds and kv values. */
#define TARGET_GOLDEN_GAMMA 0x9e3779b97f4a7c15ull

/* A rendered body. Zeroed means empty; it grows on demand (first to
 * TARGET_DYN_INIT bytes, then by doubling) up to TARGET_DYN_CAP, and keeps
 * its memory between requests (set len to 0 to reuse it). The owner frees
 * buf with free(). */
struct target_dyn {
	char *buf;
	uint32_t len, cap;
};

#define TARGET_DYN_INIT 4096u

/* Make room for `need` more bytes. false: over TARGET_DYN_CAP or out of
 * memory (the buffer is left as it was). */
bool target_dyn_reserve(struct target_dyn *d, size_t need);

/* Append p[0..n). A piece that does not fit (see target_dyn_reserve) is
 * dropped whole; later, smaller pieces may still fit. The template and kv
 * limits of a plan keep a rendered body under the cap. */
void target_dyn_put(struct target_dyn *d, const void *p, size_t n);

/* Write v in decimal at p (no NUL; at most 20 bytes). Returns the length. */
size_t target_fmt_u64(char *p, uint64_t v);

/* Percent-decode s[0..n) into out, writing at most cap bytes: "%XY" with two
 * hex digits becomes that byte, '+' a space; anything else (a lone or
 * malformed '%' too) is copied. Returns the length written. */
size_t target_pct_decode(const char *s, size_t n, char *out, size_t cap);

/* Append the template `b` (b->segs non-NULL) for a request whose query
 * string is query[0..qlen): text literally, {{id}} as 16 hex digits of one
 * draw from r (the same for every {{id}} of one body; no draw when there is
 * none), {{seq}} as `seq` in decimal, {{query:NAME}} as the decoded
 * parameter with bytes outside [A-Za-z0-9 ._~,:-] replaced by '_', at most
 * TARGET_QUERY_ECHO_CAP bytes (nothing when the parameter is absent). */
void target_render_template(struct target_dyn *d, const struct target_body *b, const char *query,
                            size_t qlen, struct rng *r, uint64_t seq);

/* Append s[0..n) as a JSON string: quotes, \" and \\ escaped, bytes below
 * 0x20 and from 0x7f up as \u00XX. */
void target_json_str(struct target_dyn *d, const char *s, size_t n);

/* Append the generated value of key number i: a JSON string of n characters
 * of [a-z0-9], the same for the same (i, n) on every run and machine. */
void target_kv_gen_value(struct target_dyn *d, uint64_t i, uint32_t n);

/* Look key[0..n) up in kv. A generated key (prefix followed by a decimal
 * number below kv->generate, no leading zero) sets *is_gen and *gen to the
 * number and returns NULL; otherwise the table's value (kv->table sorted by
 * name), or NULL when there is none. */
const char *target_kv_lookup(const struct target_kv *kv, const char *key, size_t n, uint64_t *gen,
                             bool *is_gen);

/* Append the kv answer for a request whose query string is query[0..qlen):
 * a JSON object of the comma-separated keys in parameter kv->param
 * (percent-decoded; empty keys skipped; at most TARGET_KV_MAX_KEYS), each
 * mapped to its value or null, then a newline. "{}\n" when the parameter
 * is absent. */
void target_render_kv(struct target_dyn *d, const struct target_kv *kv, const char *query,
                      size_t qlen);

#endif
