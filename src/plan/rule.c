#include "plan/rule.h"

#include <ctype.h>
#include <limits.h>
#include <errno.h>
#include <regex.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "plan/regex_shape.h"
#include "util/err.h"

#define QUOTE_SHOWN 40      /* bytes of user text shown in a message */
#define STATUS_MAX 999      /* largest status code a rule may name */
#define POOL_MAX (RULE_MAX_EXPR + 2)
_Static_assert(RE_MAX_GROUPS > RULE_MAX_STRING, "regex_shape must track every group a string can open");

enum node_kind {
	N_TRUE = 0,
	N_OR,
	N_AND,
	N_NOT,
	N_STATUS_CMP,
	N_STATUS_IN,
	N_BODY_CONTAINS,
	N_BODY_MATCHES,
	N_HDR_CONTAINS,
	N_HDR_EQ,
	N_HDR_EXISTS,
};

enum cmp_op { OP_EQ = 0, OP_NE, OP_LT, OP_LE, OP_GT, OP_GE };

struct rule_node {
	uint8_t kind;
	uint8_t op;         /* N_STATUS_CMP */
	int16_t a, b;       /* children (N_OR, N_AND: both; N_NOT: a); or status
	                     * codes (N_STATUS_CMP: a; N_STATUS_IN: a..b) */
	uint16_t s_off, s_len; /* string: needle, value or regex (in pool) */
	uint16_t h_off, h_len; /* header name (in pool) */
	int16_t re;            /* N_BODY_MATCHES: index into rule.re */
};

struct rule {
	struct rule_node n[RULE_MAX_NODES];
	size_t n_nodes;
	int root;
	bool needs_body, needs_headers;
	size_t pool_len;
	char pool[POOL_MAX]; /* decoded strings, each NUL-terminated: every
	                      * literal loses its two quotes, so they fit */
	size_t n_re;
	regex_t re[RULE_MAX_NODES];
};

/* ---- messages ---------------------------------------------------------- */

/* Copy n bytes of user text for a message: at most QUOTE_SHOWN of them,
 * bytes that are not printable ASCII as '?', "..." when cut. */
static void quote(char *dst, size_t cap, const char *s, size_t n)
{
	size_t o = 0;
	for (size_t i = 0; i < n && i < QUOTE_SHOWN && o + 1 < cap; i++) {
		unsigned char c = (unsigned char)s[i];
		dst[o++] = (c >= 0x20 && c < 0x7f) ? (char)c : '?';
	}
	if (n > QUOTE_SHOWN)
		for (int k = 0; k < 3 && o + 1 < cap; k++)
			dst[o++] = '.';
	dst[o] = '\0';
}

#if defined(__GNUC__)
__attribute__((format(printf, 4, 5)))
#endif
static int fail_plain(char *err, size_t cap, int rc, const char *fmt, ...)
{
	if (err && cap > 0) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(err, cap, fmt, ap);
		va_end(ap);
	}
	return rc;
}

/* ---- lexer ------------------------------------------------------------- */

enum tok_kind {
	T_END = 0,
	T_IDENT,
	T_INT,
	T_STRING,
	T_LPAREN,
	T_RPAREN,
	T_DOTDOT,
	T_OP,  /* == != < <= > >= */
	T_BAD, /* any other byte */
};

struct tok {
	enum tok_kind kind;
	size_t pos; /* 0-based offset in the expression */
	size_t len; /* source bytes */
	long ival;  /* T_INT (capped at 1e6) */
	enum cmp_op op;
};

struct parser {
	const char *s;
	size_t len;
	size_t col_base; /* columns of arg before the expression */
	size_t i;
	struct tok t;
	char sbuf[RULE_MAX_STRING + 1]; /* the last T_STRING, decoded */
	size_t slen;
	struct rule *r;
	char *err;
	size_t cap;
	int depth;
};

#if defined(__GNUC__)
__attribute__((format(printf, 4, 5)))
#endif
static int fail_at(const struct parser *p, size_t pos, int rc, const char *fmt, ...)
{
	if (!p->err || p->cap == 0)
		return rc;
	char detail[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(detail, sizeof detail, fmt, ap);
	va_end(ap);
	snprintf(p->err, p->cap, "rule: at column %zu: %s", p->col_base + pos + 1, detail);
	return rc;
}

/* "expected WHAT, got <the current token>" at the current token. */
static int expected(const struct parser *p, const char *what)
{
	char q[QUOTE_SHOWN + 8];
	const struct tok *t = &p->t;
	if (t->kind == T_END)
		return fail_at(p, t->pos, PACER_EPARSE, "expected %s, got end of rule", what);
	if (t->kind == T_STRING) {
		quote(q, sizeof q, p->s + t->pos + 1, t->len - 2);
		return fail_at(p, t->pos, PACER_EPARSE, "expected %s, got string \"%s\"", what, q);
	}
	quote(q, sizeof q, p->s + t->pos, t->len);
	return fail_at(p, t->pos, PACER_EPARSE, "expected %s, got \"%s\"", what, q);
}

static bool is_ident_start(char c) { return isalpha((unsigned char)c) || c == '_'; }
static bool is_ident(char c) { return isalnum((unsigned char)c) || c == '_'; }

static int lex_string(struct parser *p)
{
	size_t start = p->i;
	size_t i = start + 1;
	p->slen = 0;
	for (;;) {
		if (i >= p->len)
			return fail_at(p, start, PACER_EPARSE,
				       "unterminated string (expected a closing \")");
		char c = p->s[i];
		if (c == '"')
			break;
		if (c == '\\') {
			if (i + 1 >= p->len)
				return fail_at(p, start, PACER_EPARSE,
					       "unterminated string (expected a closing \")");
			char e = p->s[i + 1];
			if (e != '"' && e != '\\') {
				char q[QUOTE_SHOWN + 8];
				quote(q, sizeof q, &p->s[i + 1], 1);
				return fail_at(p, i, PACER_EPARSE,
					       "bad escape \"\\%s\" in string (expected \\\" or \\\\)", q);
			}
			c = e;
			i++;
		}
		if (p->slen >= RULE_MAX_STRING)
			return fail_at(p, start, PACER_ETOOBIG, "string is over %d bytes (at most %d)",
				       RULE_MAX_STRING, RULE_MAX_STRING);
		p->sbuf[p->slen++] = c;
		i++;
	}
	p->sbuf[p->slen] = '\0';
	p->t.kind = T_STRING;
	p->t.len = i + 1 - start;
	p->i = i + 1;
	return 0;
}

/* Read the next token into p->t. */
static int next(struct parser *p)
{
	while (p->i < p->len && isspace((unsigned char)p->s[p->i]))
		p->i++;
	struct tok *t = &p->t;
	t->pos = p->i;
	t->len = 0;
	if (p->i >= p->len) {
		t->kind = T_END;
		return 0;
	}
	const char *s = p->s + p->i;
	size_t left = p->len - p->i;
	char c = s[0];
	if (c == '"')
		return lex_string(p);
	if (isdigit((unsigned char)c)) {
		size_t n = 0;
		long v = 0;
		while (n < left && isdigit((unsigned char)s[n])) {
			if (v < 1000000)
				v = v * 10 + (s[n] - '0');
			n++;
		}
		t->kind = T_INT;
		t->ival = v > 1000000 ? 1000000 : v;
		t->len = n;
	} else if (is_ident_start(c)) {
		size_t n = 1;
		while (n < left && is_ident(s[n]))
			n++;
		t->kind = T_IDENT;
		t->len = n;
	} else if (c == '(' || c == ')') {
		t->kind = c == '(' ? T_LPAREN : T_RPAREN;
		t->len = 1;
	} else if (c == '.' && left > 1 && s[1] == '.') {
		t->kind = T_DOTDOT;
		t->len = 2;
	} else if ((c == '=' || c == '!') && left > 1 && s[1] == '=') {
		t->kind = T_OP;
		t->op = c == '=' ? OP_EQ : OP_NE;
		t->len = 2;
	} else if (c == '<' || c == '>') {
		bool eq = left > 1 && s[1] == '=';
		t->kind = T_OP;
		t->op = c == '<' ? (eq ? OP_LE : OP_LT) : (eq ? OP_GE : OP_GT);
		t->len = eq ? 2 : 1;
	} else {
		t->kind = T_BAD;
		t->len = 1;
	}
	p->i += t->len;
	return 0;
}

static bool is_kw(const struct parser *p, const char *kw)
{
	size_t n = strlen(kw);
	return p->t.kind == T_IDENT && p->t.len == n && memcmp(p->s + p->t.pos, kw, n) == 0;
}

/* ---- parser ------------------------------------------------------------ */

static int new_node(struct parser *p, enum node_kind kind, size_t pos)
{
	struct rule *r = p->r;
	if (r->n_nodes >= RULE_MAX_NODES)
		return fail_at(p, pos, PACER_ETOOBIG,
			       "rule has over %d terms and operators (at most %d)", RULE_MAX_NODES,
			       RULE_MAX_NODES);
	struct rule_node *n = &r->n[r->n_nodes];
	memset(n, 0, sizeof *n);
	n->kind = (uint8_t)kind;
	n->re = -1;
	return (int)r->n_nodes++;
}

/* Copy the last string into the pool; its offset and length. */
static void pool_add(struct parser *p, uint16_t *off, uint16_t *len)
{
	struct rule *r = p->r;
	/* cannot overflow: see the comment on rule.pool */
	*off = (uint16_t)r->pool_len;
	*len = (uint16_t)p->slen;
	memcpy(r->pool + r->pool_len, p->sbuf, p->slen + 1);
	r->pool_len += p->slen + 1;
}

static int enter(struct parser *p, size_t pos)
{
	if (++p->depth > RULE_MAX_DEPTH)
		return fail_at(p, pos, PACER_ETOOBIG,
			       "nested over %d levels of parentheses and \"not\" (at most %d)",
			       RULE_MAX_DEPTH, RULE_MAX_DEPTH);
	return 0;
}

static int parse_or(struct parser *p, int *out);

static int expect_string(struct parser *p, const char *what)
{
	if (p->t.kind != T_STRING)
		return expected(p, what);
	return 0;
}

static int parse_status(struct parser *p, int *out)
{
	int rc;
	if ((rc = next(p)))
		return rc;
	bool in = is_kw(p, "in");
	if (!in && p->t.kind != T_OP)
		return expected(p, "a comparison (==, !=, <, <=, >, >=) or \"in\" after status");
	enum cmp_op op = p->t.op;
	if ((rc = next(p)))
		return rc;
	if (p->t.kind != T_INT)
		return expected(p, "a status code (0..999)");
	size_t a_pos = p->t.pos;
	long a = p->t.ival, b = 0;
	char q[QUOTE_SHOWN + 8];
	quote(q, sizeof q, p->s + p->t.pos, p->t.len);
	if (a > STATUS_MAX)
		return fail_at(p, p->t.pos, PACER_ERANGE, "status code %s is out of range (0..999)", q);
	if ((rc = next(p)))
		return rc;
	if (in) {
		if (p->t.kind != T_DOTDOT)
			return expected(p, "\"..\" in a range like 200..299");
		if ((rc = next(p)))
			return rc;
		if (p->t.kind != T_INT)
			return expected(p, "a status code (0..999) after \"..\"");
		b = p->t.ival;
		char qb[QUOTE_SHOWN + 8];
		quote(qb, sizeof qb, p->s + p->t.pos, p->t.len);
		if (b > STATUS_MAX)
			return fail_at(p, p->t.pos, PACER_ERANGE,
				       "status code %s is out of range (0..999)", qb);
		if (a > b)
			return fail_at(p, a_pos, PACER_ERANGE,
				       "bad range %ld..%ld (the first code is over the last)", a, b);
		if ((rc = next(p)))
			return rc;
	}
	int k = new_node(p, in ? N_STATUS_IN : N_STATUS_CMP, a_pos);
	if (k < 0)
		return k;
	struct rule_node *n = &p->r->n[k];
	n->op = (uint8_t)op;
	n->a = (int16_t)a;
	n->b = (int16_t)b;
	*out = k;
	return 0;
}

static int parse_body(struct parser *p, int *out)
{
	int rc;
	if ((rc = next(p)))
		return rc;
	bool contains = is_kw(p, "contains");
	if (!contains && !is_kw(p, "matches"))
		return expected(p, "\"contains\" or \"matches\" after body");
	if ((rc = next(p)))
		return rc;
	if ((rc = expect_string(p, contains ? "a quoted string after contains"
	                                    : "a quoted regex after matches")))
		return rc;
	size_t pos = p->t.pos;
	int k = new_node(p, contains ? N_BODY_CONTAINS : N_BODY_MATCHES, pos);
	if (k < 0)
		return k;
	struct rule_node *n = &p->r->n[k];
	if (!contains) {
		char q[QUOTE_SHOWN + 8];
		quote(q, sizeof q, p->sbuf, p->slen);
		struct re_shape sh = regex_shape(p->sbuf, p->slen);
		if (sh.loop_nullable)
			return fail_at(p, pos, PACER_ETOOBIG,
				       "regex \"%s\" is too complex (a *, + or {m,} repeats a part that can "
				       "match nothing, as in (a*)* or a?+)",
				       q);
		if (sh.nodes > RE_COST_MAX)
			return fail_at(p, pos, PACER_ETOOBIG,
				       "regex \"%s\" is too complex (its repetitions expand to over %d terms)",
				       q, RE_COST_MAX);
		if (sh.backref) /* glibc matches them by backtracking: exponential time */
			return fail_at(p, pos, PACER_EPARSE,
				       "bad regex \"%s\": back-references (\\1 to \\9) are not supported", q);
		regex_t *re = &p->r->re[p->r->n_re];
		int e = regcomp(re, p->sbuf, REG_EXTENDED | REG_NOSUB);
		if (e) {
			char msg[128];
			regerror(e, re, msg, sizeof msg);
			quote(q, sizeof q, p->sbuf, p->slen);
			if (e == REG_ESPACE)
				return fail_at(p, pos, -ENOMEM, "regex \"%s\": %s", q, msg);
			return fail_at(p, pos, PACER_EPARSE, "bad regex \"%s\": %s", q, msg);
		}
		n->re = (int16_t)p->r->n_re++;
	}
	pool_add(p, &n->s_off, &n->s_len);
	p->r->needs_body = true;
	*out = k;
	return next(p);
}

static bool is_tchar(char c)
{
	return isalnum((unsigned char)c) || (c && strchr("!#$%&'*+-.^_`|~", c));
}

static int parse_header(struct parser *p, int *out)
{
	int rc;
	if ((rc = next(p)))
		return rc;
	if ((rc = expect_string(p, "a quoted header name after header")))
		return rc;
	size_t pos = p->t.pos;
	bool ok = p->slen > 0;
	for (size_t i = 0; i < p->slen; i++)
		ok = ok && is_tchar(p->sbuf[i]);
	if (!ok) {
		char q[QUOTE_SHOWN + 8];
		quote(q, sizeof q, p->sbuf, p->slen);
		return fail_at(p, pos, PACER_EPARSE,
			       "bad header name \"%s\" (expected a name like \"Content-Type\")", q);
	}
	int k = new_node(p, N_HDR_EXISTS, pos);
	if (k < 0)
		return k;
	struct rule_node *n = &p->r->n[k];
	pool_add(p, &n->h_off, &n->h_len);
	p->r->needs_headers = true;
	*out = k;
	if ((rc = next(p)))
		return rc;
	if (is_kw(p, "exists"))
		return next(p);
	if (is_kw(p, "contains"))
		n->kind = N_HDR_CONTAINS;
	else if (p->t.kind == T_OP && p->t.op == OP_EQ)
		n->kind = N_HDR_EQ;
	else
		return expected(p, "\"contains\", \"==\" or \"exists\" after the header name");
	if ((rc = next(p)))
		return rc;
	if ((rc = expect_string(p, "a quoted header value")))
		return rc;
	pool_add(p, &n->s_off, &n->s_len);
	return next(p);
}

#define EXPECTED_TERM "status, body, header, true, not or \"(\""

static int parse_unary(struct parser *p, int *out)
{
	int rc;
	size_t pos = p->t.pos;
	if (is_kw(p, "not")) {
		if ((rc = enter(p, pos)) || (rc = next(p)))
			return rc;
		int child;
		if ((rc = parse_unary(p, &child)))
			return rc;
		p->depth--;
		int k = new_node(p, N_NOT, pos);
		if (k < 0)
			return k;
		p->r->n[k].a = (int16_t)child;
		*out = k;
		return 0;
	}
	if (p->t.kind == T_LPAREN) {
		if ((rc = enter(p, pos)) || (rc = next(p)))
			return rc;
		if ((rc = parse_or(p, out)))
			return rc;
		if (p->t.kind != T_RPAREN)
			return expected(p, "\"and\", \"or\" or \")\"");
		p->depth--;
		return next(p);
	}
	if (is_kw(p, "status"))
		return parse_status(p, out);
	if (is_kw(p, "body"))
		return parse_body(p, out);
	if (is_kw(p, "header"))
		return parse_header(p, out);
	if (is_kw(p, "true")) {
		int k = new_node(p, N_TRUE, pos);
		if (k < 0)
			return k;
		*out = k;
		return next(p);
	}
	return expected(p, EXPECTED_TERM);
}

static int parse_binary(struct parser *p, int *out, bool is_or)
{
	int rc, left;
	if ((rc = is_or ? parse_binary(p, &left, false) : parse_unary(p, &left)))
		return rc;
	while (is_kw(p, is_or ? "or" : "and")) {
		size_t pos = p->t.pos;
		int right;
		if ((rc = next(p)))
			return rc;
		if ((rc = is_or ? parse_binary(p, &right, false) : parse_unary(p, &right)))
			return rc;
		int k = new_node(p, is_or ? N_OR : N_AND, pos);
		if (k < 0)
			return k;
		p->r->n[k].a = (int16_t)left;
		p->r->n[k].b = (int16_t)right;
		left = k;
	}
	*out = left;
	return 0;
}

static int parse_or(struct parser *p, int *out) { return parse_binary(p, out, true); }

static int parse_expr(const char *s, size_t col_base, struct rule **out, char *err, size_t cap)
{
	size_t len = strnlen(s, RULE_MAX_EXPR + 1);
	if (len > RULE_MAX_EXPR)
		return fail_plain(err, cap, PACER_ETOOBIG, "rule: expression is over %d bytes (at most %d)",
				  RULE_MAX_EXPR, RULE_MAX_EXPR);
	struct rule *r = calloc(1, sizeof *r);
	if (!r)
		return fail_plain(err, cap, -ENOMEM, "rule: out of memory");
	struct parser p = {.s = s, .len = len, .col_base = col_base, .r = r, .err = err, .cap = cap};
	int rc = next(&p);
	if (!rc && p.t.kind == T_END)
		rc = fail_at(&p, p.t.pos, PACER_EPARSE,
			     "empty rule (expected " EXPECTED_TERM ", e.g. status == 200)");
	if (!rc)
		rc = parse_or(&p, &r->root);
	if (!rc && p.t.kind != T_END)
		rc = expected(&p, "\"and\", \"or\" or end of rule");
	if (rc) {
		rule_free(r);
		return rc;
	}
	*out = r;
	return 0;
}

int rule_parse(const char *text, struct rule **out, char *err, size_t cap)
{
	if (err && cap > 0)
		err[0] = '\0';
	if (out)
		*out = NULL;
	if (!text || !out)
		return fail_plain(err, cap, -EINVAL, "rule_parse: bad arguments");
	return parse_expr(text, 0, out, err, cap);
}

int rule_parse_named(const char *arg, char name[RULE_NAME_MAX], struct rule **out, char *err,
		     size_t cap)
{
	if (err && cap > 0)
		err[0] = '\0';
	if (out)
		*out = NULL;
	if (name)
		name[0] = '\0';
	if (!arg || !name || !out)
		return fail_plain(err, cap, -EINVAL, "rule_parse_named: bad arguments");
	size_t n = 0;
	while (arg[n] && arg[n] != '=' && n < RULE_NAME_MAX)
		n++;
	char q[QUOTE_SHOWN + 8];
	quote(q, sizeof q, arg, n);
	if (n >= RULE_NAME_MAX)
		return fail_plain(err, cap, PACER_EPARSE, "rule: name \"%s\" is over %d bytes (at most %d)",
				  q, RULE_NAME_MAX - 1, RULE_NAME_MAX - 1);
	if (arg[n] != '=') {
		return fail_plain(err, cap, PACER_EPARSE,
				  "rule: missing \"=\" in \"%s\" (expected NAME=RULE, e.g. fill=status==200)",
				  q);
	}
	bool ok = n > 0 && is_ident_start(arg[0]);
	for (size_t i = 1; i < n; i++)
		ok = ok && (is_ident(arg[i]) || arg[i] == '-');
	if (!ok)
		return fail_plain(err, cap, PACER_EPARSE,
				  "rule: bad name \"%s\" (expected a letter or _ and then letters, digits, _ or -)",
				  q);
	int rc = parse_expr(arg + n + 1, n + 1, out, err, cap);
	if (rc)
		return rc;
	memcpy(name, arg, n);
	name[n] = '\0';
	return 0;
}

bool rule_needs_body(const struct rule *r) { return r && r->needs_body; }
bool rule_needs_headers(const struct rule *r) { return r && r->needs_headers; }

void rule_free(struct rule *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->n_re; i++)
		regfree(&r->re[i]);
	free(r);
}

/* ---- evaluation -------------------------------------------------------- */

static bool body_contains(const struct rule_input *in, const char *needle, size_t n)
{
	if (n == 0)
		return true;
	if (!in->body || in->body_len < n)
		return false;
	return memmem(in->body, in->body_len, needle, n) != NULL;
}

static bool body_matches(const regex_t *re, const struct rule_input *in)
{
	static const char empty[1] = "";
	regmatch_t m[1];
	m[0].rm_so = 0;
	m[0].rm_eo = in->body ? (regoff_t)in->body_len : 0;
	const char *b = in->body ? in->body : empty;
	return regexec(re, b, 1, m, REG_STARTEND) == 0;
}

static bool header_holds(const struct rule *r, const struct rule_node *n,
			 const struct rule_input *in)
{
	if (!in->header_names || !in->header_values)
		return false;
	const char *name = r->pool + n->h_off;
	const char *want = r->pool + n->s_off;
	for (size_t i = 0; i < in->n_headers; i++) {
		const char *hn = in->header_names[i], *hv = in->header_values[i];
		if (!hn || strcasecmp(hn, name) != 0)
			continue;
		if (n->kind == N_HDR_EXISTS)
			return true;
		if (!hv)
			continue;
		if (n->kind == N_HDR_EQ ? strcmp(hv, want) == 0 : strstr(hv, want) != NULL)
			return true;
	}
	return false;
}

static bool eval_node(const struct rule *r, int k, const struct rule_input *in)
{
	const struct rule_node *n = &r->n[k];
	int s = in->status;
	switch ((enum node_kind)n->kind) {
	case N_TRUE: return true;
	case N_OR: return eval_node(r, n->a, in) || eval_node(r, n->b, in);
	case N_AND: return eval_node(r, n->a, in) && eval_node(r, n->b, in);
	case N_NOT: return !eval_node(r, n->a, in);
	case N_STATUS_IN: return s >= n->a && s <= n->b;
	case N_STATUS_CMP:
		switch ((enum cmp_op)n->op) {
		case OP_EQ: return s == n->a;
		case OP_NE: return s != n->a;
		case OP_LT: return s < n->a;
		case OP_LE: return s <= n->a;
		case OP_GT: return s > n->a;
		case OP_GE: return s >= n->a;
		}
		return false;
	case N_BODY_CONTAINS: return body_contains(in, r->pool + n->s_off, n->s_len);
	case N_BODY_MATCHES: return body_matches(&r->re[n->re], in);
	case N_HDR_CONTAINS:
	case N_HDR_EQ:
	case N_HDR_EXISTS: return header_holds(r, n, in);
	}
	return false;
}

bool rule_eval(const struct rule *r, const struct rule_input *in)
{
	return eval_node(r, r->root, in);
}
