/* pacer — what a request table holds: counts by method, host and shape,
 * distinct targets, queries, bodies and wire sizes (`pacer table show`). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "table/table.h"

/* Strings the summary owns, freed by table_summary_free. */
struct spriv {
	char **s;
	size_t n, cap;
};

static char *keep(struct spriv *p, char *s)
{
	if (!s)
		return NULL;
	if (p->n == p->cap) {
		size_t nc = p->cap ? p->cap * 2 : 16;
		char **ns = realloc(p->s, nc * sizeof *ns);
		if (!ns) {
			free(s);
			return NULL;
		}
		p->s = ns;
		p->cap = nc;
	}
	p->s[p->n++] = s;
	return s;
}

static int cmp_pstr(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static int cmp_count(const void *a, const void *b)
{
	const struct table_count *x = a, *y = b;
	if (x->n != y->n)
		return x->n > y->n ? -1 : 1;
	return strcmp(x->name, y->name);
}

static int cmp_size(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	return x < y ? -1 : x > y;
}

/* names[n] (not owned) → counts by name, most first. */
static int count_names(const char **names, size_t n, struct table_count **out, size_t *n_out)
{
	*out = NULL;
	*n_out = 0;
	if (!n)
		return 0;
	qsort(names, n, sizeof *names, cmp_pstr);
	size_t k = 1;
	for (size_t i = 1; i < n; i++)
		k += strcmp(names[i], names[i - 1]) != 0;
	struct table_count *c = calloc(k, sizeof *c);
	if (!c)
		return -ENOMEM;
	size_t j = 0;
	c[0] = (struct table_count){names[0], 1};
	for (size_t i = 1; i < n; i++) {
		if (strcmp(names[i], names[i - 1]) != 0)
			c[++j] = (struct table_count){names[i], 0};
		c[j].n++;
	}
	qsort(c, k, sizeof *c, cmp_count);
	*out = c;
	*n_out = k;
	return 0;
}

static bool all_digits(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (s[i] < '0' || s[i] > '9')
			return false;
	return n > 0;
}

static bool hexish(const char *s, size_t n)
{
	if (n < 16)
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F') || c == '-'))
			return false;
	}
	return true;
}

/* The path of target with its variable-looking segments replaced. */
static char *path_template(const char *target)
{
	size_t n = strcspn(target, "?");
	char *out = malloc(n * 2 + 8);
	if (!out)
		return NULL;
	size_t o = 0, i = 0;
	while (i < n) {
		if (target[i] == '/') {
			out[o++] = '/';
			i++;
			continue;
		}
		size_t e = i;
		while (e < n && target[e] != '/')
			e++;
		if (all_digits(target + i, e - i)) {
			memcpy(out + o, "{id}", 4);
			o += 4;
		} else if (hexish(target + i, e - i)) {
			memcpy(out + o, "{hex}", 5);
			o += 5;
		} else {
			memcpy(out + o, target + i, e - i);
			o += e - i;
		}
		i = e;
	}
	out[o] = '\0';
	return out;
}

struct tgt {
	size_t host;
	const char *target;
};

static int cmp_tgt(const void *a, const void *b)
{
	const struct tgt *x = a, *y = b;
	if (x->host != y->host)
		return x->host < y->host ? -1 : 1;
	return strcmp(x->target, y->target);
}

int table_summarize(const struct table *t, const struct table_wire *w, struct table_summary *s)
{
	memset(s, 0, sizeof *s);
	struct spriv *p = calloc(1, sizeof *p);
	const char **names = malloc((t->n ? t->n : 1) * sizeof *names);
	size_t *sizes = malloc((t->n ? t->n : 1) * sizeof *sizes);
	struct tgt *tg = malloc((t->n ? t->n : 1) * sizeof *tg);
	int rc = (p && names && sizes && tg) ? 0 : -ENOMEM;
	s->priv = p;
	s->n = t->n;
	if (!rc) {
		for (size_t i = 0; i < t->n; i++)
			names[i] = t->reqs[i].method;
		rc = count_names(names, t->n, &s->methods, &s->n_methods);
	}
	if (!rc) {
		s->hosts = calloc(t->n_hosts ? t->n_hosts : 1, sizeof *s->hosts);
		rc = s->hosts ? 0 : -ENOMEM;
		for (size_t i = 0; !rc && i < t->n_hosts; i++) {
			const struct table_host *h = &t->hosts[i];
			char buf[512];
			/* a unix: host reads as its URL form: unix:PATH:http://host:port */
			snprintf(buf, sizeof buf, "%s%s%s%s%s%s%s:%u", h->unix_path ? "unix:" : "",
			         h->unix_path ? h->unix_path : "", h->unix_path ? ":" : "",
			         h->tls ? "https://" : h->unix_path ? "http://" : "", h->ipv6 ? "[" : "",
			         h->name, h->ipv6 ? "]" : "", (unsigned)h->port);
			s->hosts[i].name = keep(p, strdup(buf));
			s->hosts[i].n = h->n_reqs;
			if (!s->hosts[i].name)
				rc = -ENOMEM;
		}
		if (!rc) {
			s->n_hosts = t->n_hosts;
			qsort(s->hosts, s->n_hosts, sizeof *s->hosts, cmp_count);
		}
	}
	if (!rc) {
		for (size_t i = 0; i < t->n; i++)
			if (t->reqs[i].shape)
				s->shapes_known = true;
		for (size_t i = 0; !rc && i < t->n; i++) {
			const struct table_req *q = &t->reqs[i];
			if (s->shapes_known)
				names[i] = q->shape ? q->shape : "(none)";
			else if (!(names[i] = keep(p, path_template(q->target))))
				rc = -ENOMEM;
		}
		if (!rc)
			rc = count_names(names, t->n, &s->shapes, &s->n_shapes);
	}
	if (!rc) {
		for (size_t i = 0; i < t->n; i++)
			names[i] = t->reqs[i].name;
		rc = count_names(names, t->n, &s->names, &s->n_names);
	}
	if (!rc) {
		for (size_t i = 0; i < t->n; i++) {
			const struct table_req *q = &t->reqs[i];
			tg[i] = (struct tgt){q->host, q->target};
			if (strchr(q->target, '?'))
				s->with_query++;
			if (q->body_len) {
				if (!s->with_body || q->body_len < s->body_min)
					s->body_min = q->body_len;
				if (q->body_len > s->body_max)
					s->body_max = q->body_len;
				s->with_body++;
				s->body_total += q->body_len;
			}
		}
		if (t->n) {
			qsort(tg, t->n, sizeof *tg, cmp_tgt);
			s->distinct_targets = 1;
			for (size_t i = 1; i < t->n; i++)
				s->distinct_targets += cmp_tgt(&tg[i], &tg[i - 1]) != 0;
		}
		if (w && w->n == t->n && t->n) {
			for (size_t i = 0; i < w->n; i++) {
				sizes[i] = w->off[i + 1] - w->off[i];
				s->wire_total += sizes[i];
			}
			qsort(sizes, w->n, sizeof *sizes, cmp_size);
			s->wire_min = sizes[0];
			s->wire_max = sizes[w->n - 1];
			s->wire_p50 = sizes[(w->n - 1) / 2];
		}
	}
	free(names);
	free(sizes);
	free(tg);
	if (rc)
		table_summary_free(s);
	return rc;
}

void table_summary_free(struct table_summary *s)
{
	struct spriv *p = s->priv;
	if (p) {
		for (size_t i = 0; i < p->n; i++)
			free(p->s[i]);
		free(p->s);
		free(p);
	}
	free(s->methods);
	free(s->hosts);
	free(s->shapes);
	free(s->names);
	memset(s, 0, sizeof *s);
}
