#include "cli/opts.h"

#include <errno.h>
#include <getopt.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "util/err.h"
#include "util/text.h"
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
		/* the peers' letters that take something else here (docs/migrating.md) */
		const char *peer = "";
		bool digit = val[0] >= '0' && val[0] <= '9';
		if (!strcmp(o->long_name, "duration") && !digit && !strchr("-+.", val[0]))
			peer = "; a request body is --body DATA or --body @FILE here (h2load's, hey's "
			       "and oha's -d)";
		else if (!strcmp(o->long_name, "threads") && digit && strpbrk(val, "smh"))
			peer = "; a timeout is --timeout here (hey's and oha's -t)";
		snprintf(err, cap, "--%s '%s': %s (expected %s)%s", o->long_name, val, what(rc),
			 expect, peer);
		return -1;
	}
	return 0;
}

/* Other tools' options that pacer has under another name, or with another
 * meaning: what to give instead (docs/migrating.md). A hint is given only
 * by a command that has the option it names (needs). */
static const struct {
	const char *flag; /* as typed */
	const char *needs;
	const char *hint;
} peer_opts[] = {
	{"-D", "duration",
	 "h2load's -D (duration) is -d/--duration here; hey's and oha's -D FILE "
	 "(body from a file) is --body @FILE"},
	{"-T", "timeout",
	 "wrk's -T is --timeout here; hey's and oha's -T TYPE is "
	 "-H 'Content-Type: TYPE'"},
	{"-A", "header", "hey's and oha's -A TYPE is -H 'Accept: TYPE' here"},
	{"-a", "header", "oha's -a USER:PASS is -H 'Authorization: Basic BASE64' here"},
	{"-u", "concurrency",
	 "k6's -u/--vus is --concurrency here (closed loop; open loop: --rate)"},
	{"-i", "requests", "k6's -i/--iterations is -n/--requests here"},
	{"--vus", "concurrency",
	 "k6's --vus is --concurrency here (closed loop; open loop: --rate)"},
	{"--iterations", "requests", "k6's --iterations is -n/--requests here"},
	{"--rps", "rate",
	 "k6's --rps is -r/--rate here; h2load's --rps is per client: give -r "
	 "the total (--rps times -c) and --burst-size the -c to send as it does"},
	{"--qps", "rate", "--qps (requests/s) is -r/--rate here"},
	{"--warm-up-time", "warmup", "h2load's --warm-up-time is -w/--warmup here"},
	{"--h1", "http2", "pacer speaks HTTP/1.1 unless told otherwise (--h2c, --http2, --http3)"},
	{"--no-tui", "quiet",
	 "pacer draws no full-screen view; -q/--quiet prints nothing while it "
	 "runs"},
	{"--latency-correction", "rate",
	 "oha's --latency-correction is how pacer always measures "
	 "an open loop (--rate): latency from each request's "
	 "scheduled time"},
	{"--disable-keepalive", "no-keepalive", "oha's --disable-keepalive is --no-keepalive here"},
	{"--connections-per-second", "rate",
	 "pacer has no connection rate; -r/--rate is requests/s"},
};

/* vegeta's and hey's one-dash long options that pacer spells otherwise
 * (one that pacer has under its own name is only missing a dash). */
static const struct {
	const char *word, *who, *pacer;
} peer_words[] = {
	{"targets", "vegeta's", "--requests-file FILE"},
	{"workers", "vegeta's", "-c/--connections"},
	{"max-workers", "vegeta's", "-c/--connections"},
	{"h2", "hey's", "--http2 (https://) or --h2c (http://)"},
	{"h2c", "vegeta's", "--h2c"},
	{"http2", "vegeta's", "--http2"},
	{"disable-keepalive", "hey's", "--no-keepalive"},
	{"keepalive", "vegeta's", "--no-keepalive (for -keepalive=false)"},
	{"output", "vegeta's", "-o/--out"},
	{"cpus", "hey's and vegeta's", "-t/--threads"},
	{"redirects", "vegeta's", "not needed: pacer does not follow redirects"},
};

static const struct opt *find_long_c(const struct opt *tab, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(tab[i].long_name, name) == 0)
			return &tab[i];
	return NULL;
}

/* The hint for another tool's flag (NULL: none). */
static const char *peer_hint(const struct opt *tab, size_t n, const char *flag)
{
	for (size_t i = 0; i < sizeof peer_opts / sizeof peer_opts[0]; i++)
		if (!strcmp(peer_opts[i].flag, flag) && find_long_c(tab, n, peer_opts[i].needs))
			return peer_opts[i].hint;
	return NULL;
}

/* A number as the peers write a rate or a count: digits, maybe a point,
 * maybe a k/M suffix. */
static bool numberish(const char *s)
{
	if (!s || *s < '0' || *s > '9')
		return false;
	while ((*s >= '0' && *s <= '9') || *s == '.')
		s++;
	return !*s || ((*s == 'k' || *s == 'K' || *s == 'M') && !s[1]);
}

static bool all_digits(const char *s)
{
	if (!s || !*s)
		return false;
	for (; *s; s++)
		if (*s < '0' || *s > '9')
			return false;
	return true;
}

/* Whether the option that a (one argv element) names takes its value from
 * the next element. */
static bool takes_next(const struct opt *tab, size_t n, const char *a)
{
	const struct opt *o = NULL;
	if (a[0] == '-' && a[1] == '-' && a[2] && !strchr(a, '=')) {
		o = find_long_c(tab, n, a + 2);
		for (size_t i = 0; !o && i < n; i++) /* a unique prefix */
			if (!strncmp(tab[i].long_name, a + 2, strlen(a + 2)))
				o = &tab[i];
	} else if (a[0] == '-' && a[1] && a[1] != '-' && !a[2]) {
		for (size_t i = 0; i < n && !o; i++)
			if (tab[i].short_name == a[1] || opts_alias_of(tab, n, &tab[i]) == a[1])
				o = &tab[i];
	}
	return o && o->type != OPT_FLAG && o->type != OPT_HELP && o->type != OPT_OPTSTR;
}

/* Before parsing: the spellings of other tools that pacer would take for
 * something else, refused with the option meant (docs/migrating.md):
 * a long option with one dash (vegeta, hey: -rate=50/1s is -r "ate=50/1s"
 * here; -h2 is -h, help), h2load's -m N (streams per connection; -m is the
 * method here), oha's and hey's -q N (requests/s; -q is --quiet here).
 * 0, or -1 with the message in err. */
static int peer_check(const struct opt *tab, size_t n, int argc, char **argv, char *err,
		      size_t errcap)
{
	const struct opt *q = NULL;
	for (size_t i = 0; i < n; i++)
		if (tab[i].short_name == 'q')
			q = &tab[i];
	bool method_m = false;
	for (size_t i = 0; i < n; i++)
		if (!strcmp(tab[i].long_name, "method") &&
		    (tab[i].short_name == 'm' || opts_alias_of(tab, n, &tab[i]) == 'm'))
			method_m = true;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "--"))
			break;
		if (a[0] != '-' || a[1] == '-' || !a[1]) {
			if (takes_next(tab, n, a))
				i++;
			continue;
		}
		const char *next = i + 1 < argc ? argv[i + 1] : NULL;
		if (method_m && a[1] == 'm' && (a[2] ? all_digits(a + 2) : all_digits(next))) {
			snprintf(err, errcap,
				 "'-m %s': pacer's -m is the method (as hey's and oha's); "
				 "h2load's -m (streams per connection) is --max-streams "
				 "here",
				 a[2] ? a + 2 : next);
			return -1;
		}
		bool has_rate = find_long_c(tab, n, "rate") != NULL;
		if (q && q->type == OPT_FLAG && (has_rate || find_long_c(tab, n, "steps")) &&
		    a[1] == 'q' && (a[2] ? numberish(a + 2) : numberish(next))) {
			snprintf(err, errcap,
				 "'-q %s': pacer's -q is --%s; oha's -q (requests/s) is "
				 "%s here (hey's -q is per worker: the total is -q "
				 "times -c)",
				 a[2] ? a + 2 : next, q->long_name,
				 has_rate ? "-r/--rate" : "--steps (a ramp's rates)");
			return -1;
		}
		/* one dash before a long name */
		size_t wl = strcspn(a + 1, "=");
		char word[64];
		if (wl >= 2 && wl < sizeof word && ((a[1] >= 'a' && a[1] <= 'z'))) {
			snprintf(word, sizeof word, "%.*s", (int)wl, a + 1);
			const char *eq = a[1 + wl] ? a + 1 + wl : "";
			if (wl > 2 && find_long_c(tab, n, word)) {
				snprintf(err, errcap,
					 "'%s': pacer's long options take two dashes: --%s%s", a,
					 word, eq);
				return -1;
			}
			for (size_t k = 0; k < sizeof peer_words / sizeof peer_words[0]; k++)
				if (!strcmp(peer_words[k].word, word)) {
					snprintf(err, errcap, "'%s': %s -%s is %s here", a,
						 peer_words[k].who, word, peer_words[k].pacer);
					return -1;
				}
		}
		if (takes_next(tab, n, a))
			i++;
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
	if (hits > 1) {
		snprintf(err, errcap, "option '--%.*s' is ambiguous: %s", (int)len, name, cands);
		return;
	}
	char typed[80];
	snprintf(typed, sizeof typed, "--%.*s", (int)len, name);
	const char *hint = peer_hint(tab, n, typed);
	if (hint) {
		snprintf(err, errcap, "unknown option '%s': %s", typed, hint);
		return;
	}
	struct text_near near;
	text_near_init(&near, typed + 2);
	for (size_t i = 0; i < n; i++)
		text_near_offer(&near, tab[i].long_name);
	if (near.best)
		snprintf(err, errcap, "unknown option '%s' (did you mean --%s?)", typed, near.best);
	else
		snprintf(err, errcap, "unknown option '%s' (see --help)", typed);
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
	if (peer_check(tab, n, argc, argv, err, errcap))
		goto out;
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
			else if (optopt) {
				char typed[3] = {'-', (char)optopt, '\0'};
				const char *hint = peer_hint(tab, n, typed);
				if (hint)
					snprintf(err, errcap, "unknown option '%s': %s", typed,
						 hint);
				else
					snprintf(err, errcap, "unknown option '%s' (see --help)",
						 typed);
			} else if (arg[0] == '-' && arg[1] == '-')
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

const char *opts_did_you_mean(char *buf, size_t cap, const char *word, const char *const *cands,
			      size_t n)
{
	struct text_near near;
	text_near_init(&near, word ? word : "");
	for (size_t i = 0; i < n; i++)
		text_near_offer(&near, cands[i]);
	if (near.best)
		snprintf(buf, cap, " (did you mean %s?)", near.best);
	else if (cap)
		buf[0] = '\0';
	return buf;
}

bool opts_stdin_take(const char *cmd, const char *what)
{
	static char first[64];
	if (first[0]) {
		fprintf(stderr,
			"pacer %s: %s: standard input is already %s's (only one input can be "
			"-)\n",
			cmd, what, first);
		return false;
	}
	snprintf(first, sizeof first, "%s", what);
	return true;
}
