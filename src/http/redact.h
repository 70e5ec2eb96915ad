/* pacer — the request headers whose values are secrets, and how a request
 * is described without them (pure). A result, a report, a history row, a
 * manifest or a message that describes a request shows such a header as
 * "Authorization: [redacted fingerprint 3f2a9c01b7de]": the name, and a
 * fingerprint of the value, so that two runs with different credentials
 * can still be told apart, but not the value. What is sent is unchanged
 * (a request table's hash is of the bytes sent). */
#ifndef PACER_HTTP_REDACT_H
#define PACER_HTTP_REDACT_H

#include <stdbool.h>
#include <stddef.h>

#define REDACT_FP_HEX 12     /* hex digits of a fingerprint (48 bits) */
#define REDACT_MAX_NAMES 32  /* --redact-header names */
#define REDACT_SHOWN_MAX 64  /* bytes a redacted value is shown in (with its NUL) */

/* Which headers are secrets: Authorization, Proxy-Authorization, Cookie
 * and Set-Cookie always, plus names[0..n_names) (--redact-header NAME,
 * borrowed), unless off (--no-redact: every value shown as given). A
 * zeroed struct is the default. */
struct redact {
	bool off;
	const char *const *names;
	size_t n_names;
};

/* Whether the header named name[0..len) (any case) is a secret under r
 * (NULL: the defaults). */
bool redact_header_name(const struct redact *r, const char *name, size_t len);

/* Whether name is a header name (an HTTP token, 1 to 64 bytes) that
 * --redact-header can take. */
bool redact_name_ok(const char *name);

/* The fingerprint of a secret value v[0..len): PBKDF2-HMAC-SHA256 with a
 * fixed salt and 10,000 rounds, its first 48 bits in hex, into
 * out[REDACT_FP_HEX + 1]. The same value gives the same fingerprint on
 * every machine; the rounds and the cut make checking guesses of a weak
 * secret against it slow and ambiguous. */
void redact_fingerprint(const char *v, size_t len, char out[REDACT_FP_HEX + 1]);

/* The header line "Name: value" as it is shown: line itself when its name
 * is not a secret under r (or it is not a header line), else "Name:
 * [redacted fingerprint F]" (the name and the spaces after the colon as
 * given) in out[cap] (cut to cap - 1 bytes, a name of any length kept
 * first). */
const char *redact_header_line(const struct redact *r, const char *line, char *out, size_t cap);

/* A command-line argument as it is shown (plan.argv, the compare
 * variant's overrides): arg itself, or a copy in out[cap] where every
 * header line with a secret name in it ("Authorization: x" as -H's value,
 * "-HAuthorization: x", "--header=...", "--head=...", a --variant-set
 * "B.header=Cookie: a=1") has its value redacted as redact_header_line
 * does. A name counts where it begins the argument or follows '=' or a
 * short option bundle's 'H'. */
const char *redact_arg(const struct redact *r, const char *arg, char *out, size_t cap);

/* A value that may be a secret whatever it is (a script's argument after
 * --, which pacer cannot read): v itself when r is off (--no-redact), else
 * "[redacted fingerprint F]" in out[cap]. */
const char *redact_value(const struct redact *r, const char *v, char *out, size_t cap);

#endif
