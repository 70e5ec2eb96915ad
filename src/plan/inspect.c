#include "plan/inspect.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "util/err.h"

void inspect_init(struct inspect *in)
{
	memset(in, 0, sizeof *in);
	in->body_cap = INSPECT_BODY_CAP_DEFAULT;
}

void inspect_free(struct inspect *in)
{
	rule_free(in->success);
	free(in->success_text);
	for (size_t i = 0; i < in->n_outcomes; i++) {
		rule_free(in->outcome[i]);
		free(in->outcome_text[i]);
	}
	memset(in, 0, sizeof *in);
}

int inspect_set_success(struct inspect *in, const char *text, char *err, size_t cap)
{
	if (in->success) {
		snprintf(err, cap, "--success given twice (combine the rules with and/or)");
		return PACER_EPARSE;
	}
	int rc = rule_parse(text, &in->success, err, cap);
	if (rc)
		return rc;
	in->success_text = strdup(text);
	if (!in->success_text) {
		rule_free(in->success);
		in->success = NULL;
		return -ENOMEM;
	}
	return 0;
}

int inspect_add_outcome(struct inspect *in, const char *arg, char *err, size_t cap)
{
	if (in->n_outcomes >= INSPECT_MAX_OUTCOMES) {
		snprintf(err, cap, "at most %d --outcome rules", INSPECT_MAX_OUTCOMES);
		return PACER_ETOOBIG;
	}
	size_t k = in->n_outcomes;
	struct rule *r = NULL;
	int rc = rule_parse_named(arg, in->outcome_name[k], &r, err, cap);
	if (rc)
		return rc;
	for (size_t i = 0; i < k; i++) {
		if (!strcmp(in->outcome_name[i], in->outcome_name[k])) {
			snprintf(err, cap, "outcome \"%s\" given twice", in->outcome_name[k]);
			rule_free(r);
			in->outcome_name[k][0] = '\0';
			return PACER_EPARSE;
		}
	}
	const char *eq = strchr(arg, '=');
	in->outcome_text[k] = strdup(eq ? eq + 1 : "");
	if (!in->outcome_text[k]) {
		rule_free(r);
		return -ENOMEM;
	}
	in->outcome[k] = r;
	in->n_outcomes++;
	return 0;
}

static int parse_unit(const char *u, double *ns_per_unit)
{
	static const struct {
		const char *name;
		double ns;
	} units[] = {{"ns", 1}, {"us", 1e3}, {"ms", 1e6}, {"s", 1e9}};
	for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
		if (!strcmp(u, units[i].name)) {
			*ns_per_unit = units[i].ns;
			return 0;
		}
	}
	return -1;
}

int srvtime_parse(const char *arg, struct srvtime_spec *out, char *err, size_t cap)
{
	memset(out, 0, sizeof *out);
	out->ns_per_unit = 1e6;
	const char *rest = NULL;
	if (!strcmp(arg, "server-timing")) {
		out->src = SRVTIME_SERVER_TIMING;
		return 0;
	}
	if (!strncmp(arg, "server-timing:", 14)) {
		out->src = SRVTIME_SERVER_TIMING;
		rest = arg + 14;
	} else if (!strncmp(arg, "header:", 7)) {
		out->src = SRVTIME_HEADER;
		rest = arg + 7;
	} else if (!strncmp(arg, "json:", 5)) {
		out->src = SRVTIME_JSON;
		rest = arg + 5;
	} else {
		snprintf(err, cap,
			 "--server-time \"%.60s\": expected server-timing[:METRIC], header:NAME[:UNIT] "
			 "or json:PATH[:UNIT]",
			 arg);
		return PACER_EPARSE;
	}
	const char *colon = out->src == SRVTIME_SERVER_TIMING ? NULL : strrchr(rest, ':');
	size_t n = colon ? (size_t)(colon - rest) : strlen(rest);
	if (colon && parse_unit(colon + 1, &out->ns_per_unit)) {
		snprintf(err, cap, "--server-time \"%.60s\": unit \"%.20s\" is not one of ns, us, ms, s",
			 arg, colon + 1);
		return PACER_EPARSE;
	}
	if (n == 0 || n >= SRVTIME_NAME_MAX) {
		snprintf(err, cap, "--server-time \"%.60s\": the name must be 1 to %d bytes", arg,
			 SRVTIME_NAME_MAX - 1);
		return PACER_EPARSE;
	}
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)rest[i];
		if (c <= ' ' || c >= 0x7f || c == '"') {
			snprintf(err, cap, "--server-time \"%.60s\": bad character in the name", arg);
			return PACER_EPARSE;
		}
	}
	if (out->src == SRVTIME_JSON) {
		/* every path element non-empty */
		if (rest[0] == '.' || rest[n - 1] == '.' || memmem(rest, n, "..", 2)) {
			snprintf(err, cap, "--server-time \"%.60s\": empty element in the JSON path", arg);
			return PACER_EPARSE;
		}
	}
	memcpy(out->name, rest, n);
	out->name[n] = '\0';
	return 0;
}

int inspect_set_srvtime(struct inspect *in, const char *spec, char *err, size_t cap)
{
	return srvtime_parse(spec, &in->srvtime, err, cap);
}

void inspect_finish(struct inspect *in)
{
	bool body = false, headers = false;
	if (in->success) {
		body |= rule_needs_body(in->success);
		headers |= rule_needs_headers(in->success);
	}
	for (size_t i = 0; i < in->n_outcomes; i++) {
		body |= rule_needs_body(in->outcome[i]);
		headers |= rule_needs_headers(in->outcome[i]);
	}
	if (in->srvtime.src == SRVTIME_JSON)
		body = true;
	else if (in->srvtime.src != SRVTIME_NONE)
		headers = true;
	in->need_headers = headers;
	in->need_body = body ? in->body_cap : 0;
	in->active = in->success || in->n_outcomes || in->srvtime.src != SRVTIME_NONE;
}
