#include "plan/regex_shape.h"

#include <ctype.h>
#include <limits.h>
#include <string.h>



/* One operand or group: nodes, whether it can match the empty string. */
struct re_part {
	unsigned long nodes;
	bool nullable;
};

/* One open group: the alternatives closed so far, the current one, and its
 * last operand (which a quantifier applies to). */
struct re_group {
	unsigned long nodes;   /* of the closed alternatives and their `|` */
	bool any_nullable;     /* some closed alternative matches empty */
	struct re_part cur;    /* the current alternative before `last` */
	struct re_part last;   /* its last operand; nodes 0 when there is none */
};

static unsigned long re_cap(unsigned long v)
{
	return v > RE_COST_MAX ? RE_COST_MAX + 1 : v;
}

static void re_push(struct re_group *g, struct re_part a)
{
	g->cur.nodes = re_cap(g->cur.nodes + g->last.nodes);
	g->cur.nullable = g->cur.nullable && g->last.nullable;
	g->last = a;
}

/* The group as one operand: its alternatives and the current one. */
static struct re_part re_close(const struct re_group *g)
{
	struct re_part a;
	a.nodes = re_cap(g->nodes + g->cur.nodes + g->last.nodes);
	a.nullable = g->any_nullable || (g->cur.nullable && g->last.nullable);
	return a;
}

static void re_open(struct re_group *g)
{
	g->nodes = 0;
	g->any_nullable = false;
	g->cur = (struct re_part){0, true};
	g->last = (struct re_part){0, true};
}

/* Reads {m}, {m,}, {,n} or {m,n} at re[*i] (just past the "{"); hi is
 * ULONG_MAX for no upper bound. */
static void re_bounds(const char *re, size_t n, size_t *i, unsigned long *lo, unsigned long *hi)
{
	unsigned long m = 0;
	while (*i < n && isdigit((unsigned char)re[*i]) && m < 100000)
		m = m * 10 + (unsigned long)(re[(*i)++] - '0');
	*lo = *hi = m;
	if (*i < n && re[*i] == ',') {
		(*i)++;
		if (*i < n && isdigit((unsigned char)re[*i])) {
			unsigned long h = 0;
			while (*i < n && isdigit((unsigned char)re[*i]) && h < 100000)
				h = h * 10 + (unsigned long)(re[(*i)++] - '0');
			*hi = h;
		} else {
			*hi = ULONG_MAX;
		}
	}
	if (*i < n && re[*i] == '}')
		(*i)++;
}

struct re_shape regex_shape(const char *re, size_t n)
{
	struct re_group g[RE_MAX_GROUPS];
	struct re_shape s = {0, false, false};
	size_t d = 0, i = 0;
	re_open(&g[0]);
	while (i < n) {
		char c = re[i];
		struct re_part atom = {1, false};
		if (c == '\\') {
			char e = i + 1 < n ? re[i + 1] : '\0';
			if (e >= '1' && e <= '9')
				s.backref = true;
			if (e && strchr("bB<>`'", e))
				atom.nullable = true; /* an anchor: a node that matches nothing */
			i += 2;
		} else if (c == '^' || c == '$') {
			atom.nullable = true;
			i++;
		} else if (c == '[') {
			/* a bracket expression: "]" first is literal; [:class:] inside */
			i++;
			if (i < n && re[i] == '^')
				i++;
			if (i < n && re[i] == ']')
				i++;
			while (i < n && re[i] != ']') {
				if (re[i] == '[' && i + 1 < n && memchr(":.=", re[i + 1], 3)) {
					/* to its closing ":]", ".]" or "=]", within re[0..n) */
					char k = re[i + 1];
					size_t j = i + 2;
					while (j + 1 < n && !(re[j] == k && re[j + 1] == ']'))
						j++;
					i = j + 1 < n ? j + 2 : n;
				} else {
					i++;
				}
			}
			i++;
		} else if (c == '(' && d + 1 < RE_MAX_GROUPS) {
			re_open(&g[++d]);
			i++;
			continue;
		} else if (c == ')' && d > 0) {
			atom = re_close(&g[d]);
			if (atom.nodes == 0)
				atom.nodes = 2; /* "()" keeps its open and close nodes */
			d--;
			i++;
		} else if (c == '|') {
			struct re_part alt = re_close(&g[d]);
			g[d].nodes = re_cap(alt.nodes + 1); /* the alternation node */
			g[d].any_nullable = alt.nullable;
			g[d].cur = (struct re_part){0, true};
			g[d].last = (struct re_part){0, true};
			i++;
			continue;
		} else if (c == '{' && !(i + 1 < n && (isdigit((unsigned char)re[i + 1]) ||
						    (re[i + 1] == ',' && i + 2 < n &&
						     isdigit((unsigned char)re[i + 2]))))) {
			i++; /* not an interval: a literal "{" (an atom) */
		} else if (c == '*' || c == '?' || c == '+' || c == '{') {
			unsigned long lo, hi;
			i++;
			if (c == '{')
				re_bounds(re, n, &i, &lo, &hi);
			else
				lo = c == '+', hi = c == '?' ? 1 : ULONG_MAX;
			struct re_part *x = &g[d].last;
			if (hi == ULONG_MAX) {
				/* lo copies (at least 1), then a loop over one more */
				if (x->nullable)
					s.loop_nullable = true;
				unsigned long copies = lo > 0 ? lo + 1 : 1;
				x->nodes = re_cap(x->nodes * copies + 1);
				x->nullable = x->nullable || lo == 0;
			} else {
				/* hi copies, the last hi - lo optional (one node each);
				 * never fewer than the operand's own: regcomp builds
				 * the operand before it copies it ({0} included) */
				if (hi < lo)
					hi = lo; /* regcomp refuses it */
				unsigned long copied = re_cap(x->nodes * hi + (hi - lo));
				x->nodes = copied > x->nodes ? copied : x->nodes;
				x->nullable = x->nullable || lo == 0;
			}
			continue;
		} else {
			i++;
		}
		re_push(&g[d], atom);
	}
	unsigned long total = 0;
	for (size_t k = 0; k <= d; k++)
		total = re_cap(total + re_close(&g[k]).nodes);
	s.nodes = total;
	return s;
}
