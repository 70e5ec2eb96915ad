#include "cli/opts.h"

#include <errno.h>
#include <getopt.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
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
		if (strlist_add(o->dst, val)) {
			snprintf(err, cap, "out of memory");
			return -1;
		}
		return 0;
	case OPT_RATE:
		rc = units_parse_rate(val, o->dst);
		expect = "a rate of at least 0.001 such as 500, 2.5k, 1M or 50/1s";
		break;
	case OPT_DURATION:
		rc = units_parse_duration_ns(val, o->dst);
		expect = "a duration such as 250ms, 10s, 1m30s or 1h";
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

/* The peers' spellings of pacer's options (wrk2's -R, hey's and oha's -z and
 * -m, bombardier's -b), accepted by every table that has the option and does
 * not use the letter itself. (hey's and oha's -d body is not: -d is the
 * duration, as in wrk.) */
static const struct opts_alias aliases[] = {
	{'R', "rate", "wrk2"},
	{'z', "duration", "hey, oha"},
	{'m', "method", "hey, oha"},
	{'b', "body", "bombardier"},
};

const struct opts_alias *opts_aliases(size_t *n)
{
	*n = sizeof aliases / sizeof aliases[0];
	return aliases;
}

static struct opt *find_short(struct opt *tab, size_t n, int c)
{
	for (size_t i = 0; i < n; i++)
		if (tab[i].short_name == c)
			return &tab[i];
	return NULL;
}

static struct opt *find_long(struct opt *tab, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(tab[i].long_name, name) == 0)
			return &tab[i];
	return NULL;
}

char opts_alias_of(const struct opt *tab, size_t n, const struct opt *o)
{
	for (size_t a = 0; a < sizeof aliases / sizeof aliases[0]; a++) {
		if (strcmp(aliases[a].long_name, o->long_name) != 0)
			continue;
		bool taken = false;
		for (size_t i = 0; i < n; i++)
			taken |= tab[i].short_name == aliases[a].short_name;
		return taken ? 0 : aliases[a].short_name;
	}
	return 0;
}

/* The option that takes short letter c: its own, or an alias's. */
static struct opt *by_letter(struct opt *tab, size_t n, int c)
{
	struct opt *o = find_short(tab, n, c);
	if (o)
		return o;
	for (size_t a = 0; a < sizeof aliases / sizeof aliases[0]; a++)
		if (aliases[a].short_name == c)
			return find_long(tab, n, aliases[a].long_name);
	return NULL;
}

/* "--name[=value]" that getopt_long refused: unknown, or a prefix of
 * several (its message names them). */
static void long_error(struct opt *tab, size_t n, const char *arg, char *err, size_t errcap)
{
	const char *name = arg + 2;
	const char *eq = strchr(name, '=');
	size_t len = eq ? (size_t)(eq - name) : strlen(name);
	char cands[256] = "";
	size_t used = 0, hits = 0;
	for (size_t i = 0; len && i < n; i++) {
		if (strncmp(tab[i].long_name, name, len) != 0)
			continue;
		hits++;
		int w = snprintf(cands + used, sizeof cands - used, "%s--%s", used ? ", " : "",
				 tab[i].long_name);
		if (w > 0 && (size_t)w < sizeof cands - used)
			used += (size_t)w;
	}
	if (hits > 1)
		snprintf(err, errcap, "option '--%.*s' is ambiguous: %s", (int)len, name, cands);
	else
		snprintf(err, errcap, "unknown option '--%.*s' (see --help)", (int)len, name);
}

int opts_parse(struct opt *tab, size_t n, int argc, char **argv, const char **pos, size_t pos_cap,
	       size_t *npos, char *err, size_t errcap)
{
	*npos = 0;
	/* getopt_long permutes the vector it is given: it works on a copy, so
	 * the caller's argv (kept in results as the command line) stays as typed. */
	char **av = calloc((size_t)argc + 1, sizeof *av);
	struct option *lo = calloc(n + 1, sizeof *lo);
	char *shorts = malloc(6 * n + 2);
	int ret = -1;
	if (!av || !lo || !shorts) {
		snprintf(err, errcap, "out of memory");
		goto out;
	}
	memcpy(av, argv, (size_t)argc * sizeof *av);
	size_t nl = 0, ns = 0;
	shorts[ns++] = ':'; /* a missing value is ':', not '?' */
	for (size_t i = 0; i < n; i++) {
		const struct opt *o = &tab[i];
		int has = o->type == OPT_FLAG || o->type == OPT_HELP ? no_argument
			  : o->type == OPT_OPTSTR			  ? optional_argument
									  : required_argument;
		lo[nl++] = (struct option){o->long_name, has, NULL, 256 + (int)i};
		char letters[2] = {o->short_name, opts_alias_of(tab, n, o)};
		for (int k = 0; k < 2; k++) {
			if (!letters[k])
				continue;
			shorts[ns++] = letters[k];
			if (has == required_argument)
				shorts[ns++] = ':';
			else if (has == optional_argument) {
				shorts[ns++] = ':';
				shorts[ns++] = ':';
			}
		}
	}
	shorts[ns] = '\0';
	optind = 0; /* full reinitialisation (GNU): av[0] is the subcommand */
	opterr = 0;
	int c;
	while ((c = getopt_long(argc, av, shorts, lo, NULL)) != -1) {
		struct opt *o = c >= 256 ? &tab[c - 256] : NULL;
		if (c == '?' || c == ':') {
			const char *arg = av[optind - 1];
			o = optopt >= 256 ? &tab[optopt - 256] : optopt ? by_letter(tab, n, optopt) : NULL;
			if (c == ':')
				snprintf(err, errcap, "--%s needs a value (%s)", o->long_name,
					 o->metavar ? o->metavar : "value");
			else if (o) /* a flag given a value */
				snprintf(err, errcap, "--%s takes no value", o->long_name);
			else if (optopt)
				snprintf(err, errcap, "unknown option '-%c' (see --help)", optopt);
			else if (arg[0] == '-' && arg[1] == '-')
				long_error(tab, n, arg, err, errcap);
			else /* an unknown letter inside a bundle ("-qz") */
				snprintf(err, errcap, "unknown option in '%s' (see --help)", arg);
			goto out;
		}
		if (!o)
			o = by_letter(tab, n, c);
		o->given = true;
		if (o->type == OPT_HELP) {
			ret = 1;
			goto out;
		}
		if (o->type == OPT_OPTSTR && !optarg) {
			*(const char **)o->dst = "";
			continue;
		}
		if (o->type == OPT_FLAG) {
			*(bool *)o->dst = true;
			continue;
		}
		if (set_value(o, optarg, err, errcap))
			goto out;
	}
	for (int i = optind; i < argc; i++) {
		if (*npos >= pos_cap) {
			snprintf(err, errcap, "unexpected argument '%s'", av[i]);
			goto out;
		}
		pos[(*npos)++] = av[i];
	}
	ret = 0;
out:
	free(av);
	free(lo);
	free(shorts);
	return ret;
}

bool opts_given(const struct opt *tab, size_t n, const char *long_name)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(tab[i].long_name, long_name) == 0)
			return tab[i].given;
	return false;
}

int opts_parse_cmd(const char *cmd, struct opt *tab, size_t n, int argc, char **argv,
		   void (*usage)(FILE *, struct opt *, size_t), struct opts_positionals *p)
{
	char err[1024];
	p->n = 0;
	int rc = opts_parse(tab, n, argc, argv, p->v, p->max + 1, &p->n, err, sizeof err);
	if (rc == 1) {
		usage(stdout, tab, n);
		return EXIT_OK;
	}
	if (rc < 0) {
		fprintf(stderr, "pacer %s: %s\n", cmd, err);
		return EXIT_USAGE;
	}
	if (p->n < p->min || p->n > p->max) {
		fprintf(stderr, "pacer %s: expected %s, got %zu argument%s (see pacer %s --help)\n", cmd,
			p->what, p->n, p->n == 1 ? "" : "s", cmd);
		return EXIT_USAGE;
	}
	return -1;
}
