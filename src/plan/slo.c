#include "plan/slo.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/err.h"
#include "util/units.h"

#define PCT_DECIMALS 9    /* most decimals of a percent (after trailing zeros) */
#define QUOTE_SHOWN 40    /* bytes of user text shown in a message */

static const struct {
	const char *name;
	enum slo_metric metric;
} builtin[] = {
	{"p50", SLO_M_P50},       {"p90", SLO_M_P90},   {"p99", SLO_M_P99},
	{"p99.9", SLO_M_P99_9},   {"p99.99", SLO_M_P99_99}, {"max", SLO_M_MAX},
	{"mean", SLO_M_MEAN},     {"errors", SLO_M_ERRORS}, {"success", SLO_M_SUCCESS},
	{"drops", SLO_M_DROPS},   {"rate", SLO_M_RATE},
};

/* Prefixes of latency metrics naming a set of requests (enum slo_set). */
static const char *const set_prefix[] = {"", "ok.", "failed."};

#define N_BUILTIN (sizeof builtin / sizeof builtin[0])
#define EXPECTED_METRICS                                                                           \
	"p50, p90, p99, p99.9, p99.99, max, mean (each also as ok.p99 or failed.p99), errors, "    \
	"success, drops, rate or an outcome name"

const char *slo_metric_name(enum slo_metric m)
{
	if (m == SLO_M_OUTCOME)
		return "outcome";
	for (size_t i = 0; i < N_BUILTIN; i++)
		if (builtin[i].metric == m)
			return builtin[i].name;
	return "?";
}

const char *slo_op_name(enum slo_op op)
{
	switch (op) {
	case SLO_LT: return "<";
	case SLO_LE: return "<=";
	case SLO_GT: return ">";
	case SLO_GE: return ">=";
	}
	return "?";
}

static bool is_latency(enum slo_metric m) { return m <= SLO_M_MEAN; }

bool slo_metric_is_latency(enum slo_metric m) { return is_latency(m); }

static bool is_space(char c) { return isspace((unsigned char)c) != 0; }

static bool is_op_char(char c) { return c == '<' || c == '>' || c == '=' || c == '!'; }

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

struct ctx {
	char *err;
	size_t cap;
	size_t pos;       /* 1-based clause position */
	const char *text; /* the clause, trimmed */
	size_t len;
};

#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static int fail(const struct ctx *x, int rc, const char *fmt, ...)
{
	if (!x->err || x->cap == 0)
		return rc;
	char detail[512], q[QUOTE_SHOWN + 8];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(detail, sizeof detail, fmt, ap);
	va_end(ap);
	quote(q, sizeof q, x->text, x->len);
	snprintf(x->err, x->cap, "SLO clause %zu \"%s\": %s", x->pos, q, detail);
	return rc;
}

#if defined(__GNUC__)
__attribute__((format(printf, 4, 5)))
#endif
static int fail_expr(char *err, size_t cap, int rc, const char *fmt, ...)
{
	if (err && cap > 0) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(err, cap, fmt, ap);
		va_end(ap);
	}
	return rc;
}

/* A plain decimal number: digits, optionally '.' and digits, at least one
 * digit, nothing else (no sign, exponent, space, inf or nan). */
struct decimal {
	const char *ip; /* integer digits, leading zeros removed */
	size_t il;
	const char *fp; /* fraction digits, trailing zeros removed */
	size_t fl;
};

static bool parse_decimal(const char *s, size_t n, struct decimal *d)
{
	size_t i = 0, digits = 0;
	while (i < n && isdigit((unsigned char)s[i]))
		i++;
	digits = i;
	d->ip = s;
	d->il = i;
	d->fp = s + i;
	d->fl = 0;
	if (i < n && s[i] == '.') {
		i++;
		d->fp = s + i;
		while (i < n && isdigit((unsigned char)s[i]))
			i++;
		d->fl = (size_t)(s + i - d->fp);
		digits += d->fl;
	}
	if (digits == 0 || i != n)
		return false;
	while (d->il > 0 && d->ip[0] == '0') {
		d->ip++;
		d->il--;
	}
	while (d->fl > 0 && d->fp[d->fl - 1] == '0')
		d->fl--;
	return true;
}

/* The value of d times 10^shift (shift 0 or 2), moving the decimal point
 * in the text so the result is the double nearest the exact decimal.
 * Values with more than 9 integer digits come back as 1e12 (out of every
 * range used here). */
static double decimal_value(const struct decimal *d, size_t shift)
{
	if (d->il > 9)
		return 1e12;
	char buf[64];
	size_t o = 0;
	memcpy(buf, d->ip, d->il);
	o = d->il;
	size_t f = 0;
	for (size_t k = 0; k < shift; k++)
		buf[o++] = f < d->fl ? d->fp[f++] : '0';
	if (o == 0)
		buf[o++] = '0';
	buf[o++] = '.';
	size_t rest = d->fl - f;
	if (rest > sizeof buf - o - 2)
		rest = sizeof buf - o - 2; /* not reached: decimals are capped first */
	memcpy(buf + o, d->fp + f, rest);
	o += rest;
	buf[o++] = '0';
	buf[o] = '\0';
	return strtod(buf, NULL);
}

/* PERCENT: a decimal number and '%', 0..100, at most PCT_DECIMALS decimals. */
static int parse_percent(const struct ctx *x, const char *v, size_t n, double *pct)
{
	char q[QUOTE_SHOWN + 8];
	quote(q, sizeof q, v, n);
	bool has_pct = n > 0 && v[n - 1] == '%';
	struct decimal d;
	if (!parse_decimal(v, has_pct ? n - 1 : n, &d))
		return fail(x, PACER_EPARSE, "bad percent \"%s\" (expected a number and %%, like 1%% or 0.5%%)",
			    q);
	if (!has_pct)
		return fail(x, PACER_EPARSE,
			    "missing %% after \"%s\" (expected a percent like 1%% or 0.5%%)", q);
	if (d.fl > PCT_DECIMALS)
		return fail(x, PACER_EPARSE, "too many decimals in \"%s\" (at most %d)", q,
			    PCT_DECIMALS);
	double p = decimal_value(&d, 0);
	if (!(p <= 100))
		return fail(x, PACER_ERANGE, "percent \"%s\" is over 100%%", q);
	*pct = p;
	return 0;
}

/* FRACTION (0..1, kept as a percent) or PERCENT, for `rate`. */
static int parse_rate(const struct ctx *x, const char *v, size_t n, double *pct)
{
	if (n > 0 && v[n - 1] == '%')
		return parse_percent(x, v, n, pct);
	char q[QUOTE_SHOWN + 8];
	quote(q, sizeof q, v, n);
	struct decimal d;
	if (!parse_decimal(v, n, &d))
		return fail(x, PACER_EPARSE,
			    "bad fraction \"%s\" (expected achieved/offered like 0.95, or a percent like 95%%)",
			    q);
	if (d.fl > PCT_DECIMALS + 2)
		return fail(x, PACER_EPARSE, "too many decimals in \"%s\" (at most %d)", q,
			    PCT_DECIMALS + 2);
	double p = decimal_value(&d, 2);
	if (!(p <= 100))
		return fail(x, PACER_ERANGE,
			    "fraction \"%s\" is over 1 (expected achieved/offered like 0.95, or a percent like 95%%)",
			    q);
	*pct = p;
	return 0;
}

/* DURATION: units_parse_duration_ns, but a unit is required. */
static int parse_duration(const struct ctx *x, const char *v, size_t n, double *ns)
{
	char q[QUOTE_SHOWN + 8];
	quote(q, sizeof q, v, n);
	struct decimal d;
	if (parse_decimal(v, n, &d))
		return fail(x, PACER_EPARSE,
			    "missing unit in \"%s\" (expected a duration like 100ms; units ns, us, ms, s, m, h)",
			    q);
	char buf[72];
	uint64_t t;
	int rc = PACER_EPARSE;
	if (n < sizeof buf) {
		memcpy(buf, v, n);
		buf[n] = '\0';
		rc = units_parse_duration_ns(buf, &t);
	}
	if (rc == PACER_ERANGE)
		return fail(x, PACER_ERANGE, "duration \"%s\" is out of range (at most 1e18 ns)", q);
	if (rc)
		return fail(x, PACER_EPARSE,
			    "bad duration \"%s\" (expected a number and a unit like 100ms or 1.5s; units ns, us, ms, s, m, h)",
			    q);
	*ns = (double)t;
	return 0;
}

static void fmt_percent(char *out, size_t cap, double p)
{
	char buf[24];
	if (!isfinite(p) || fabs(p) >= 1e9) {
		snprintf(out, cap, "%g%%", p);
		return;
	}
	for (int d = 0; d <= PCT_DECIMALS; d++) {
		snprintf(buf, sizeof buf, "%.*f", d, p);
		if (strtod(buf, NULL) == p)
			break;
	}
	snprintf(out, cap, "%s%%", buf);
}

static void fmt_threshold_duration(char *out, size_t cap, double ns)
{
	if (!(ns >= 0 && ns <= 1.8e19) || ns != floor(ns)) {
		snprintf(out, cap, "%.0fns", ns);
		return;
	}
	uint64_t n = (uint64_t)ns;
	static const struct {
		uint64_t div;
		const char *unit;
	} u[] = {{1000000000u, "s"}, {1000000u, "ms"}, {1000u, "us"}};
	for (size_t i = 0; i < sizeof u / sizeof u[0]; i++)
		if (n != 0 && n % u[i].div == 0) {
			snprintf(out, cap, "%llu%s", (unsigned long long)(n / u[i].div), u[i].unit);
			return;
		}
	snprintf(out, cap, "%lluns", (unsigned long long)n);
}

void slo_clause_threshold(char *out, size_t cap, const struct slo_clause *c)
{
	if (is_latency(c->metric))
		fmt_threshold_duration(out, cap, c->threshold);
	else
		fmt_percent(out, cap, c->threshold);
}

const char *slo_clause_name(const struct slo_clause *c)
{
	if (c->metric == SLO_M_OUTCOME || c->set != SLO_SET_ALL)
		return c->name;
	return slo_metric_name(c->metric);
}

static void clause_text(char *out, size_t cap, const struct slo_clause *c)
{
	char t[SLO_TEXT_MAX - SLO_NAME_MAX - 2]; /* name, op, value and NUL fit */
	slo_clause_threshold(t, sizeof t, c);
	snprintf(out, cap, "%s%s%s", slo_clause_name(c), slo_op_name(c->op), t);
}

static int parse_clause(const struct ctx *x, struct slo_clause *c, const char *const *outcomes,
			size_t n_outcomes)
{
	const char *s = x->text;
	size_t n = x->len;
	size_t i = 0;
	while (i < n && !is_op_char(s[i]))
		i++;
	if (i == n)
		return fail(x, PACER_EPARSE,
			    "missing comparison (expected METRIC OP VALUE, e.g. p99<100ms or errors<1%%)");
	size_t j = i;
	while (j < n && is_op_char(s[j]))
		j++;
	char qop[QUOTE_SHOWN + 8];
	quote(qop, sizeof qop, s + i, j - i);

	size_t ml = i;
	while (ml > 0 && is_space(s[ml - 1]))
		ml--;
	if (ml == 0)
		return fail(x, PACER_EPARSE, "missing metric before \"%s\" (expected " EXPECTED_METRICS ")",
			    qop);
	const char *v = s + j;
	size_t vl = n - j;
	while (vl > 0 && is_space(v[0])) {
		v++;
		vl--;
	}

	/* metric */
	memset(c, 0, sizeof *c);
	c->outcome_index = -1;
	bool found = false;
	for (size_t k = 0; k < N_BUILTIN && !found; k++)
		if (strlen(builtin[k].name) == ml && memcmp(builtin[k].name, s, ml) == 0) {
			c->metric = builtin[k].metric;
			found = true;
		}
	/* ok.p99, failed.mean: a latency metric of one set of requests
	 * (outcome names cannot hold a '.', so nothing is shadowed) */
	for (size_t set = SLO_SET_OK; set <= SLO_SET_FAILED && !found; set++) {
		size_t pl = strlen(set_prefix[set]);
		if (ml <= pl || memcmp(s, set_prefix[set], pl) != 0)
			continue;
		for (size_t k = 0; k < N_BUILTIN && !found; k++) {
			if (!is_latency(builtin[k].metric) || strlen(builtin[k].name) != ml - pl ||
			    memcmp(builtin[k].name, s + pl, ml - pl) != 0)
				continue;
			c->metric = builtin[k].metric;
			c->set = (enum slo_set)set;
			found = true;
		}
		if (!found) {
			char q[QUOTE_SHOWN + 8];
			quote(q, sizeof q, s, ml);
			return fail(x, PACER_EPARSE,
				    "unknown metric \"%s\" (after \"%s\" expected a latency metric: p50, "
				    "p90, p99, p99.9, p99.99, max or mean)",
				    q, set_prefix[set]);
		}
	}
	for (size_t k = 0; k < n_outcomes && !found; k++) {
		if (!outcomes[k] || strlen(outcomes[k]) != ml || memcmp(outcomes[k], s, ml) != 0)
			continue;
		char q[QUOTE_SHOWN + 8];
		quote(q, sizeof q, s, ml);
		if (ml >= SLO_NAME_MAX)
			return fail(x, PACER_EPARSE, "outcome name \"%s\" is too long (at most %d bytes)", q,
				    SLO_NAME_MAX - 1);
		if (k > (size_t)INT32_MAX)
			return fail(x, PACER_ERANGE, "outcome \"%s\" is past the first 2^31 outcomes", q);
		c->metric = SLO_M_OUTCOME;
		c->outcome_index = (int)k;
		found = true;
	}
	if (!found) {
		char q[QUOTE_SHOWN + 8], known[160] = "";
		quote(q, sizeof q, s, ml);
		size_t o = 0, shown = 0;
		for (size_t k = 0; k < n_outcomes && o + 1 < sizeof known; k++) {
			if (!outcomes[k])
				continue;
			char qn[QUOTE_SHOWN + 8];
			quote(qn, sizeof qn, outcomes[k], strlen(outcomes[k]));
			int w = snprintf(known + o, sizeof known - o, "%s%s", shown ? ", " : ": ", qn);
			if (w < 0 || (size_t)w + 6 >= sizeof known - o || shown == 8) {
				snprintf(known + o, sizeof known - o, ", ...");
				break;
			}
			o += (size_t)w;
			shown++;
		}
		return fail(x, PACER_EPARSE, "unknown metric \"%s\" (expected " EXPECTED_METRICS "%s)", q,
			    known);
	}
	memcpy(c->name, s, ml);
	c->name[ml] = '\0';

	/* operator */
	size_t ol = j - i;
	if (ol == 1 && s[i] == '<')
		c->op = SLO_LT;
	else if (ol == 2 && s[i] == '<' && s[i + 1] == '=')
		c->op = SLO_LE;
	else if (ol == 1 && s[i] == '>')
		c->op = SLO_GT;
	else if (ol == 2 && s[i] == '>' && s[i + 1] == '=')
		c->op = SLO_GE;
	else
		return fail(x, PACER_EPARSE, "bad operator \"%s\" (expected <, <=, > or >=)", qop);
	if (is_latency(c->metric) && (c->op == SLO_GT || c->op == SLO_GE))
		return fail(x, PACER_EPARSE,
			    "operator \"%s\" does not apply to %s (expected < or <=: latency must stay under a bound)",
			    qop, c->name);
	if (c->metric == SLO_M_RATE && (c->op == SLO_LT || c->op == SLO_LE))
		return fail(x, PACER_EPARSE,
			    "operator \"%s\" does not apply to rate (expected >= or >: achieved/offered must stay above a bound)",
			    qop);

	/* value */
	const char *want = is_latency(c->metric) ? "a duration like 100ms"
	                   : c->metric == SLO_M_RATE ? "a fraction like 0.95 or a percent like 95%"
	                                             : "a percent like 1% or 0.5%";
	if (vl == 0)
		return fail(x, PACER_EPARSE, "missing value after \"%s\" (expected %s)", qop, want);
	int rc;
	if (is_latency(c->metric))
		rc = parse_duration(x, v, vl, &c->threshold);
	else if (c->metric == SLO_M_RATE)
		rc = parse_rate(x, v, vl, &c->threshold);
	else
		rc = parse_percent(x, v, vl, &c->threshold);
	if (rc)
		return rc;
	clause_text(c->text, sizeof c->text, c);
	return 0;
}

int slo_parse(struct slo *out, const char *expr, const char *const *outcomes, size_t n_outcomes,
	      char *err, size_t cap)
{
	if (err && cap > 0)
		err[0] = '\0';
	if (!out || !expr || (!outcomes && n_outcomes > 0))
		return fail_expr(err, cap, -EINVAL, "slo_parse: bad arguments");
	out->n = 0;
	size_t len = strnlen(expr, SLO_MAX_EXPR + 1);
	if (len > SLO_MAX_EXPR)
		return fail_expr(err, cap, PACER_ETOOBIG, "SLO expression is over %d bytes (at most %d)",
				 SLO_MAX_EXPR, SLO_MAX_EXPR);
	size_t blank = 0, commas = 0;
	while (blank < len && is_space(expr[blank]))
		blank++;
	if (blank == len)
		return fail_expr(err, cap, PACER_EPARSE,
				 "SLO expression is empty (expected clauses like p99<100ms,errors<1%%)");
	for (size_t i = 0; i < len; i++)
		commas += expr[i] == ',';
	size_t total = commas + 1;
	if (total > SLO_MAX_CLAUSES)
		return fail_expr(err, cap, PACER_ETOOBIG, "SLO expression has %zu clauses (at most %d)",
				 total, SLO_MAX_CLAUSES);

	const char *p = expr, *end = expr + len;
	for (size_t k = 0; k < total; k++) {
		const char *e = memchr(p, ',', (size_t)(end - p));
		if (!e)
			e = end;
		const char *a = p, *b = e;
		while (a < b && is_space(*a))
			a++;
		while (b > a && is_space(b[-1]))
			b--;
		struct ctx x = {err, cap, k + 1, a, (size_t)(b - a)};
		if (x.len == 0) {
			const char *hint = k + 1 == total ? "trailing comma?"
			                   : k == 0      ? "leading comma?"
			                                 : "two commas in a row?";
			return fail(&x, PACER_EPARSE, "empty clause (%s)", hint);
		}
		int rc = parse_clause(&x, &out->c[k], outcomes, n_outcomes);
		if (rc)
			return rc;
		p = e + 1;
	}
	out->n = total;
	return 0;
}

int slo_format(const struct slo *s, char *out, size_t cap)
{
	size_t o = 0;
	size_t n = s->n <= SLO_MAX_CLAUSES ? s->n : SLO_MAX_CLAUSES;
	for (size_t i = 0; i < n; i++) {
		char t[SLO_TEXT_MAX];
		clause_text(t, sizeof t, &s->c[i]);
		size_t tl = strlen(t) + (i > 0);
		if (o + tl + 1 > cap) {
			if (cap > 0)
				out[0] = '\0';
			return PACER_ETOOBIG;
		}
		if (i > 0)
			out[o++] = ',';
		memcpy(out + o, t, strlen(t));
		o += strlen(t);
	}
	if (o + 1 > cap)
		return PACER_ETOOBIG;
	out[o] = '\0';
	return (int)o;
}
