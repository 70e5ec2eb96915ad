/* pacer — outcome and success rules (pure): parse one boolean expression
 * over a response's status, headers and body, such as
 *   status in 200..299 and body contains "result"
 *   header "Content-Type" contains "json" or status == 204
 *   not (status >= 500)
 * once, then evaluate it on each response without allocating.
 *
 * Grammar (see docs/rules.md); precedence not > and > or, left to right:
 *   expr    := and ("or" and)*
 *   and     := unary ("and" unary)*
 *   unary   := "not" unary | "(" expr ")" | atom
 *   atom    := "true"
 *            | "status" ("==" | "!=" | "<" | "<=" | ">" | ">=") INT
 *            | "status" "in" INT ".." INT
 *            | "body" ("contains" | "matches") STRING
 *            | "header" STRING ("contains" STRING | "==" STRING | "exists")
 * INT is a status code 0..999. STRING is double-quoted; inside it \" and \\
 * are the only escapes. `matches` takes a POSIX extended regex, compiled at
 * parse time. Keywords are lower case; header names compare case-
 * insensitively, header values and bodies case-sensitively.
 * Limits: RULE_MAX_EXPR bytes, RULE_MAX_NODES terms and operators,
 * RULE_MAX_STRING bytes per string (after escapes), RULE_MAX_DEPTH nested
 * parentheses and `not`s. */
#ifndef PACER_PLAN_RULE_H
#define PACER_PLAN_RULE_H

#include <stdbool.h>
#include <stddef.h>

#define RULE_MAX_EXPR 1024  /* bytes of the expression, not counting the NUL */
#define RULE_MAX_NODES 64   /* atoms plus and/or/not operators */
#define RULE_MAX_STRING 256 /* bytes of one string literal after unescaping */
#define RULE_MAX_DEPTH 16   /* nested parentheses and `not`s */
#define RULE_NAME_MAX 64    /* rule name incl. NUL: up to 63 bytes */

/* A parsed rule; opaque, immutable after parsing, so one rule may be
 * evaluated from several threads at once. */
struct rule;

/* Parse `text` (NUL-terminated) into a new rule owned by the caller (free
 * it with rule_free). Returns 0, or on error a negative code with *out =
 * NULL and one line in err (when err && cap > 0; truncated to fit, always
 * terminated) of the form "rule: at column N: expected ..., got \"tok\""
 * (columns are 1-based bytes):
 *   PACER_EPARSE   unexpected or unknown token, unterminated string, bad
 *                  escape, bad header name, bad regex or one with a
 *                  back-reference (\1..\9: exponential in glibc), empty rule
 *   PACER_ERANGE   status code over 999, range A..B with A > B
 *   PACER_ETOOBIG  over RULE_MAX_EXPR bytes, RULE_MAX_NODES nodes,
 *                  RULE_MAX_STRING bytes in a string or RULE_MAX_DEPTH levels,
 *                  or a regex whose automaton has over 2000 nodes (+ and
 *                  {m,n} copy their operand, nested copies multiplying) or
 *                  that loops (*, +, {m,}) over a part that can match
 *                  nothing: regcomp would take seconds or exhaust memory
 *                  (docs/rules.md derives the bound)
 *   -ENOMEM        out of memory (regcomp included)
 *   -EINVAL        text or out NULL */
int rule_parse(const char *text, struct rule **out, char *err, size_t cap);

/* Parse "NAME=EXPR" (for --outcome): NAME is [A-Za-z_][A-Za-z0-9_-]{0,62}
 * directly followed by '='; EXPR is parsed as by rule_parse, and error
 * columns count from the start of arg. On success the name is copied into
 * name (always terminated); on error name holds "". Errors as rule_parse,
 * plus PACER_EPARSE for a missing or bad name. */
int rule_parse_named(const char *arg, char name[RULE_NAME_MAX], struct rule **out, char *err,
		     size_t cap);

/* Whether evaluating r can look at the body / the headers at all, so that
 * the caller collects only what is needed. false for NULL. */
bool rule_needs_body(const struct rule *r);
bool rule_needs_headers(const struct rule *r);

/* One response, as the rule sees it; everything is borrowed. The body need
 * not be NUL-terminated and may contain NUL bytes; the caller cuts it at
 * its inspection cap (a rule then sees only that prefix). Header names and
 * values are NUL-terminated, values without surrounding whitespace; a name
 * may repeat (an atom holds when it holds for any one of them); NULL
 * entries are skipped. body and the arrays may be NULL when their counts
 * are 0. */
struct rule_input {
	int status;
	const char *body;
	size_t body_len;
	const char *const *header_names;
	const char *const *header_values;
	size_t n_headers;
};

/* Evaluate r on one response. Does not allocate (regexec on glibc with
 * REG_STARTEND aside, which may use its own scratch memory); never fails.
 * r and in must not be NULL. */
bool rule_eval(const struct rule *r, const struct rule_input *in);

/* Free a rule from rule_parse / rule_parse_named; NULL is fine. */
void rule_free(struct rule *r);

#endif
