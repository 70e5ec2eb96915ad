#include "cli/opts.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/err.h"
#include "util/units.h"

static const char *what(int rc)
{
	return rc == PACER_ERANGE ? "out of range" : "not understood";
}

static int set_value(struct opt *o, const char *val, char *err, size_t cap)
{
	int rc = 0;
	const char *expect = "";
	switch (o->type) {
	case OPT_STR:
	case OPT_OPTSTR:
		*(const char **)o->dst = val;
		return 0;
	case OPT_STRLIST:
		if (opt_list_add(o->dst, val)) {
			snprintf(err, cap, "out of memory");
			return -1;
		}
		return 0;
	case OPT_RATE:
		rc = units_parse_rate(val, o->dst);
		expect = "a rate of at least 0.001 such as 500, 2.5k or 1M";
		break;
	case OPT_DURATION:
		rc = units_parse_duration_ns(val, o->dst);
		expect = "a duration such as 250ms, 10s, 2m or 1h";
		break;
	case OPT_COUNT:
		rc = units_parse_count(val, o->dst);
		expect = "a whole number such as 1000 or 10k";
		break;
	case OPT_U32: {
		uint64_t v;
		rc = units_parse_count(val, &v);
		if (!rc && v > UINT32_MAX)
			rc = PACER_ERANGE;
		if (!rc)
			*(uint32_t *)o->dst = (uint32_t)v;
		expect = "a whole number";
		break;
	}
	case OPT_U64: {
		char *end = NULL;
		errno = 0;
		unsigned long long v = strtoull(val, &end, 10);
		if (val[0] < '0' || val[0] > '9' || !end || *end)
			rc = PACER_EPARSE;
		else if (errno == ERANGE)
			rc = PACER_ERANGE;
		else
			*(uint64_t *)o->dst = (uint64_t)v;
		expect = "a whole number from 0 to 18446744073709551615";
		break;
	}
	default:
		break;
	}
	if (rc) {
		snprintf(err, cap, "--%s '%s': %s (expected %s)", o->long_name, val, what(rc), expect);
		return -1;
	}
	return 0;
}

static struct opt *find_long(struct opt *tab, size_t n, const char *name, size_t len)
{
	for (size_t i = 0; i < n; i++)
		if (strlen(tab[i].long_name) == len && strncmp(tab[i].long_name, name, len) == 0)
			return &tab[i];
	return NULL;
}

int opts_parse(struct opt *tab, size_t n, int argc, char **argv, const char **pos, size_t pos_cap,
	       size_t *npos, char *err, size_t errcap)
{
	*npos = 0;
	bool only_pos = false;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (only_pos || a[0] != '-' || a[1] == '\0') {
			if (*npos >= pos_cap) {
				snprintf(err, errcap, "unexpected argument '%s'", a);
				return -1;
			}
			pos[(*npos)++] = a;
			continue;
		}
		if (strcmp(a, "--") == 0) {
			only_pos = true;
			continue;
		}
		struct opt *o = NULL;
		const char *val = NULL;
		if (a[1] == '-') {
			const char *name = a + 2;
			const char *eq = strchr(name, '=');
			size_t len = eq ? (size_t)(eq - name) : strlen(name);
			o = find_long(tab, n, name, len);
			if (!o) {
				snprintf(err, errcap, "unknown option '--%.*s' (see --help)", (int)len, name);
				return -1;
			}
			if (eq)
				val = eq + 1;
		} else {
			for (size_t k = 0; k < n; k++)
				if (tab[k].short_name == a[1])
					o = &tab[k];
			if (!o) {
				snprintf(err, errcap, "unknown option '-%c' (see --help)", a[1]);
				return -1;
			}
			if (a[2])
				val = a + 2;
		}
		o->given = true;
		if (o->type == OPT_HELP)
			return 1;
		if (o->type == OPT_OPTSTR && !val) {
			*(const char **)o->dst = "";
			continue;
		}
		if (o->type == OPT_FLAG) {
			if (val) {
				snprintf(err, errcap, "--%s takes no value", o->long_name);
				return -1;
			}
			*(bool *)o->dst = true;
			continue;
		}
		if (!val) {
			if (i + 1 >= argc) {
				snprintf(err, errcap, "--%s needs a value (%s)", o->long_name,
					 o->metavar ? o->metavar : "value");
				return -1;
			}
			val = argv[++i];
		}
		if (set_value(o, val, err, errcap))
			return -1;
	}
	return 0;
}

bool opts_given(const struct opt *tab, size_t n, const char *long_name)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(tab[i].long_name, long_name) == 0)
			return tab[i].given;
	return false;
}

static int by_long_name(const void *a, const void *b)
{
	const struct opt *x = *(const struct opt *const *)a, *y = *(const struct opt *const *)b;
	return strcmp(x->long_name, y->long_name);
}

void opts_help(FILE *f, const struct opt *tab, size_t n)
{
	/* Listed by name, whatever the table's order: shared option groups
	 * (e.g. CLI_RULE_OPTS) can sit anywhere in a table. */
	const struct opt *sorted[256];
	if (n > sizeof sorted / sizeof sorted[0])
		n = sizeof sorted / sizeof sorted[0];
	for (size_t i = 0; i < n; i++)
		sorted[i] = &tab[i];
	qsort(sorted, n, sizeof sorted[0], by_long_name);
	for (size_t i = 0; i < n; i++) {
		const struct opt *o = sorted[i];
		char left[64];
		const char *sep = !o->metavar ? "" : o->type == OPT_OPTSTR ? "[=" : " ";
		const char *end = o->metavar && o->type == OPT_OPTSTR ? "]" : "";
		if (o->short_name)
			snprintf(left, sizeof left, "-%c, --%s%s%s%s", o->short_name, o->long_name, sep,
				 o->metavar ? o->metavar : "", end);
		else
			snprintf(left, sizeof left, "    --%s%s%s%s", o->long_name, sep,
				 o->metavar ? o->metavar : "", end);
		fprintf(f, "  %-28s %s", left, o->help);
		if (o->def)
			fprintf(f, " [default: %s]", o->def);
		fprintf(f, "\n");
	}
}

int opt_list_add(struct opt_list *l, const char *v)
{
	if (l->n == l->cap) {
		size_t nc = l->cap ? l->cap * 2 : 8;
		const char **nv = realloc(l->v, nc * sizeof *nv);
		if (!nv)
			return -ENOMEM;
		l->v = nv;
		l->cap = nc;
	}
	l->v[l->n++] = v;
	return 0;
}

void opt_list_free(struct opt_list *l)
{
	free(l->v);
	memset(l, 0, sizeof *l);
}
