/* pacer — the requests of a measurement (measure/measure_int.h): the body, a
 * request table, the embedded target's routes or the one URL, encoded to
 * wire bytes once, named and hashed. */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "measure/measure_int.h"
#include "http/h2req.h"
#include "http/req.h"
#include "script/script.h"
#include "table/table.h"
#include "target/plan.h"
#include "util/err.h"
#include "util/file.h"
#include "util/units.h"

#define MAX_BODY_BYTES (64u * 1024 * 1024)

/* A JSON body for routes of the embedded target that take one. */
static const char sample_json_body[] =
	"{\"id\":\"pacer-self-contained\",\"imp\":[{\"id\":\"1\",\"video\":{\"w\":640,\"h\":360}}],"
	"\"site\":{\"page\":\"http://example.invalid/\"},\"tmax\":120}";

static int add_request(struct measure *s, const char *method,
		       const struct url *u, const char *const *headers, size_t n_headers,
		       const char *body, size_t body_len)
{
	struct req_spec rs = {
		.method = method,
		.url = u,
		.headers = headers,
		.n_headers = n_headers,
		.body = body,
		.body_len = body_len,
		.user_agent = PACER_USER_AGENT,
	};
	char *buf = NULL;
	size_t len = 0;
	const char *why = "out of memory";
	int rc = req_encode(&rs, &buf, &len, &why);
	if (rc) {
		return measure_fail(s, MEASURE_EUSAGE, "--header: %s", why);
	}
	struct engine_req *nr = realloc(s->reqs, (s->n_reqs + 1) * sizeof *nr);
	char **nb = realloc(s->bufs, (s->n_reqs + 1) * sizeof *nb);
	if (nr)
		s->reqs = nr;
	if (nb)
		s->bufs = nb;
	if (!nr || !nb) {
		free(buf);
		return measure_fail(s, MEASURE_ERUNTIME, "out of memory");
	}
	s->bufs[s->n_reqs] = buf;
	s->reqs[s->n_reqs] = (struct engine_req){
		.buf = buf, .len = len, .head = strcmp(method, "HEAD") == 0};
	s->n_reqs++;
	plan_workload_add(&s->workload, method, u->target, strlen(u->target), body_len, NULL);
	return 0;
}

/* A request made elsewhere (a script's wrk.format()), its bytes as they are. */
static int add_request_bytes(struct measure *s, const char *bytes, size_t len)
{
	char *buf = malloc(len ? len : 1);
	struct engine_req *nr = realloc(s->reqs, (s->n_reqs + 1) * sizeof *nr);
	if (nr)
		s->reqs = nr;
	char **nb = realloc(s->bufs, (s->n_reqs + 1) * sizeof *nb);
	if (nb)
		s->bufs = nb;
	if (!buf || !nr || !nb) {
		free(buf);
		return measure_fail(s, MEASURE_ERUNTIME, "out of memory");
	}
	memcpy(buf, bytes, len);
	/* "METHOD SP target SP ...": for the record */
	const char *end = buf + len, *sp = memchr(buf, ' ', len);
	const char *t = sp ? sp + 1 : end, *te = t;
	while (te < end && *te != ' ')
		te++;
	char method[32];
	snprintf(method, sizeof method, "%.*s", sp ? (int)(sp - buf) : 0, buf);
	const char *body = memmem(buf, len, "\r\n\r\n", 4);
	s->bufs[s->n_reqs] = buf;
	s->reqs[s->n_reqs] =
		(struct engine_req){.buf = buf, .len = len, .head = strcmp(method, "HEAD") == 0};
	s->n_reqs++;
	plan_workload_add(&s->workload, method, t, (size_t)(te - t),
			  body ? (uint64_t)(end - (body + 4)) : 0, NULL);
	return 0;
}

/* Self-contained without a path: one request per route of the plan, so the
 * load covers what the plan describes (e.g. vast_ortb_mix: half VAST GETs,
 * half OpenRTB POSTs). */
static int add_route_requests(struct measure *s, const struct run_plan *plan, struct url *base)
{
	const struct target_plan *tp = s->tplan;
	for (size_t i = 0; i < tp->n_routes; i++) {
		const struct target_route *rt = &tp->routes[i];
		const char *method = rt->method ? rt->method : "GET";
		bool has_body = strcmp(method, "POST") == 0 || strcmp(method, "PUT") == 0 ||
				strcmp(method, "PATCH") == 0;
		struct url u = *base;
		int n = snprintf(u.target, sizeof u.target, "%.*s", (int)rt->path_len, rt->path);
		if (rt->kv && rt->kv->param) {
			/* a lookup of a few keys the table holds */
			n += snprintf(u.target + n, sizeof u.target - (size_t)n, "?%s=", rt->kv->param);
			for (int k = 0; k < 4; k++) {
				const char *key = NULL;
				char gen[96];
				if (rt->kv->generate) {
					snprintf(gen, sizeof gen, "%s%llu", rt->kv->prefix ? rt->kv->prefix : "",
						 (unsigned long long)((uint64_t)k % rt->kv->generate));
					key = gen;
				} else if (rt->kv->n_table) {
					key = rt->kv->table[(size_t)k % rt->kv->n_table].name;
				}
				if (!key)
					break;
				n += snprintf(u.target + n, sizeof u.target - (size_t)n, "%s%s",
					      k ? "," : "", key);
			}
		}
		const char *hdrs[64];
		size_t nh = 0;
		for (size_t k = 0; k < plan->n_headers && nh < 63; k++)
			hdrs[nh++] = plan->headers[k];
		if (has_body && !plan->body)
			hdrs[nh++] = "Content-Type: application/json";
		const char *body = plan->body ? plan->body : has_body ? sample_json_body : NULL;
		size_t body_len = plan->body ? plan->body_len : has_body ? strlen(sample_json_body) : 0;
		int rc = add_request(s, method, &u, hdrs, nh, body, body_len);
		if (rc)
			return rc;
	}
	return 0;
}

/* The workload's identity when there is no table: the SHA-256 of the
 * requests' wire bytes in the form a table's is taken (table_wire_hash), so
 * the same bytes give the same hash however they were made. */
static int hash_requests(struct measure *s)
{
	size_t total = 0;
	for (size_t i = 0; i < s->n_reqs; i++)
		total += s->reqs[i].len;
	struct table_wire w = {.n = s->n_reqs};
	w.bytes = malloc(total ? total : 1);
	w.off = malloc((s->n_reqs + 1) * sizeof *w.off);
	int rc = w.bytes && w.off ? 0 : -ENOMEM;
	if (!rc) {
		w.off[0] = 0;
		for (size_t i = 0; i < s->n_reqs; i++) {
			memcpy(w.bytes + w.off[i], s->reqs[i].buf, s->reqs[i].len);
			w.off[i + 1] = w.off[i] + s->reqs[i].len;
		}
		rc = table_wire_hashes(&w, s->workload.sha256, s->workload.workload_sha256);
	}
	free(w.bytes);
	free(w.off);
	if (rc) {
		return measure_fail(s, MEASURE_ERUNTIME, "out of memory");
	}
	return 0;
}

/* --requests-file -: the table on standard input, read once per process
 * (compare's variants each build their table from the same text) and kept
 * to its end; its @body files are relative to the working folder, as
 * vegeta's. 0 or a negative code with "stdin:LINE: ..." in err. */
static int stdin_table(enum table_format fmt, const struct table_limits *lim,
		       struct table **out, char *err, size_t cap)
{
	static char *text;
	static size_t len;
	static int read_rc = 1; /* 1: not read yet */
	size_t max = lim->max_file_bytes ? lim->max_file_bytes : TABLE_DEFAULT_MAX_FILE;
	if (read_rc == 1)
		read_rc = file_read_all("/dev/stdin", max, &text, &len);
	if (read_rc == PACER_ETOOBIG) {
		snprintf(err, cap, "stdin: over the limit of %zu bytes", max);
		return read_rc;
	}
	if (read_rc) {
		snprintf(err, cap, "stdin: cannot read: %s", strerror(-read_rc));
		return read_rc;
	}
	return table_parse(text, len, fmt, "stdin", ".", lim, out, err, cap);
}

int measure_req_table_opts(struct measure *s)
{
	uint64_t v;
	enum table_format fmt;
	if (s->max_body && (units_parse_size(s->max_body, &v) || v == 0)) {
		return measure_fail(s, MEASURE_EUSAGE, "--max-body '%s': expected a size like 64k or 1MiB", s->max_body);
	}
	if (s->requests_format && table_format_parse(s->requests_format, &fmt)) {
		return measure_fail(s, MEASURE_EUSAGE, "--requests-format '%s': expected auto, targets or jsonl", s->requests_format);
	}
	if (s->lazy && !s->requests_file) {
		return measure_fail(s, MEASURE_EUSAGE, "--lazy streams a --requests-file table (targets or JSON Lines)%s", s->bodies_dir ? ", not --bodies" : "");
	}
	return 0;
}

/* Encode the loaded table whole into s->wire and s->reqs, identified and
 * summed up in s->workload. */
static int encode_table(struct measure *s, struct run_plan *plan)
{
	char err[1024];
	const struct table *t = s->table;
	char wl_sha[65];
	s->wire = calloc(1, sizeof *s->wire);
	if (!s->wire)
		return measure_fail(s, MEASURE_ERUNTIME, "out of memory");
	int rc = table_encode(t, PACER_USER_AGENT, plan->headers, plan->n_headers, s->wire, err,
			      sizeof err);
	if (!rc)
		rc = table_wire_hashes(s->wire, s->table_sha256, wl_sha);
	if (rc) {
		return measure_fail(s, MEASURE_EUSAGE, "%s", err);
	}
	s->reqs = calloc(t->n, sizeof *s->reqs);
	if (!s->reqs)
		return measure_fail(s, MEASURE_ERUNTIME, "out of memory");
	for (size_t i = 0; i < t->n; i++)
		s->reqs[i] = (struct engine_req){
			.buf = s->wire->bytes + s->wire->off[i],
			.len = s->wire->off[i + 1] - s->wire->off[i],
			.head = strcmp(t->reqs[i].method, "HEAD") == 0,
			.host = (uint32_t)t->reqs[i].host,
		};
	s->n_reqs = t->n;
	plan_workload_init(&s->workload, s->bodies_dir ? "bodies" : "table");
	for (size_t i = 0; i < t->n; i++)
		plan_workload_add(&s->workload, t->reqs[i].method, t->reqs[i].target,
				  strlen(t->reqs[i].target), t->reqs[i].body_len, t->reqs[i].name);
	memcpy(s->workload.sha256, s->table_sha256, sizeof s->workload.sha256);
	memcpy(s->workload.workload_sha256, wl_sha, sizeof wl_sha);
	return 0;
}

int measure_req_table(struct measure *s, struct run_plan *plan)
{
	char err[1024];
	struct table_limits lim = {0};
	if (s->max_body) {
		uint64_t v;
		if (units_parse_size(s->max_body, &v) || v == 0) {
			return measure_fail(s, MEASURE_EUSAGE, "--max-body '%s': expected a size like 64k or 1MiB", s->max_body);
		}
		lim.max_body_bytes = (size_t)v;
	}
	enum table_format fmt = TABLE_FMT_AUTO;
	if (s->requests_format && table_format_parse(s->requests_format, &fmt)) {
		return measure_fail(s, MEASURE_EUSAGE, "--requests-format '%s': expected auto, targets or jsonl", s->requests_format);
	}
	int rc;
	if (s->lazy) {
		if ((rc = measure_spool_table(s, plan, &lim, fmt)))
			return rc;
	} else if (s->bodies_dir) {
		if (!s->url_arg) {
			return measure_fail(s, MEASURE_EUSAGE, "--bodies needs the URL to send them to");
		}
		rc = table_from_bodies(s->bodies_dir, s->url_arg, plan->method, NULL, &lim, &s->table,
				       err, sizeof err);
	} else if (!s->requests_file) {
		s->table = s->offered_table; /* borrowed: measure_release leaves it */
		rc = 0;
	} else {
		rc = strcmp(s->requests_file, "-") == 0
			     ? stdin_table(fmt, &lim, &s->table, err, sizeof err)
			     : table_load(s->requests_file, fmt, &lim, &s->table, err, sizeof err);
	}
	if (rc) {
		bool more = rc == PACER_ETOOBIG && s->requests_file && strstr(err, "requests (the limit)");
		return measure_fail(s, MEASURE_EUSAGE, "%s%s", err,
			more ? "; --lazy streams a table of any size" : "");
	}
	const struct table *t = s->table;
	if (t->n_hosts > ENGINE_MAX_HOSTS) {
		return measure_fail(s, MEASURE_EUSAGE, "%s: the table spans %zu hosts; at most %d per run",
			t->source, t->n_hosts, ENGINE_MAX_HOSTS);
	}
	for (size_t i = 0; plan->unix_socket && i < t->n_hosts; i++)
		if (t->hosts[i].unix_path) {
			return measure_fail(s, MEASURE_EUSAGE, "%s: --unix-socket does not combine with a table whose URLs name their own socket (unix:%s:...); drop --unix-socket",
				t->source, t->hosts[i].unix_path);
		}
	if (t->n_hosts > 1 && plan->unix_socket) {
		return measure_fail(s, MEASURE_EUSAGE, "%s: --unix-socket sends every request to one socket; the table spans %zu hosts", t->source, t->n_hosts);
	}
	if (!s->spool) {
		/* The URL of the first request names the run (and, with one
		 * host, the host all of them go to). */
		plan->url_str = t->reqs[0].url;
		if ((rc = encode_table(s, plan)))
			return rc;
	}
	plan->table_source = t->source;
	plan->table_format = table_format_name(t->format);
	plan->table_sha256 = s->table_sha256;
	plan->table_requests = s->n_reqs;
	plan->table_hosts = t->hosts;
	plan->table_n_hosts = t->n_hosts;
	return 0;
}

/* Name every request and intern the names (result/names.h): a table's
 * requests carry theirs (table_req.name); others are named "METHOD path"
 * from their request line. Sets reqs[i].name and plan->names. 0 or
 * MEASURE_ERUNTIME with one line in s->err. */
static int name_requests(struct measure *s, struct run_plan *plan)
{
	const char **nm = calloc(s->n_reqs, sizeof *nm);
	char **own = s->table ? NULL : calloc(s->n_reqs, sizeof *own);
	uint16_t *idx = calloc(s->n_reqs, sizeof *idx);
	int rc = nm && idx && (s->table || own) ? 0 : -ENOMEM;
	for (size_t i = 0; !rc && i < s->n_reqs; i++) {
		if (s->table) {
			nm[i] = s->table->reqs[i].name;
			continue;
		}
		if (s->script && script_info(s->script)->has_request) {
			/* request() makes them: named after the script */
			const char *base = strrchr(s->script_path, '/');
			own[i] = strdup(base ? base + 1 : s->script_path);
			if (!own[i])
				rc = -ENOMEM;
			nm[i] = own[i];
			continue;
		}
		/* "METHOD SP target SP HTTP/1.1": the method and the path */
		const char *b = s->reqs[i].buf, *end = b + s->reqs[i].len;
		const char *sp = memchr(b, ' ', (size_t)(end - b));
		const char *t = sp ? sp + 1 : end, *te = t;
		while (te < end && *te != ' ' && *te != '?')
			te++;
		own[i] = strndup(b, (size_t)(te - b));
		if (!own[i])
			rc = -ENOMEM;
		nm[i] = own[i];
	}
	if (!rc)
		rc = req_names_build(&s->names, nm, s->n_reqs, idx);
	for (size_t i = 0; !rc && i < s->n_reqs; i++)
		s->reqs[i].name = idx[i];
	for (size_t i = 0; own && i < s->n_reqs; i++)
		free(own[i]);
	free(own);
	free(nm);
	free(idx);
	if (rc) {
		return measure_fail(s, MEASURE_ERUNTIME, "out of memory");
	}
	plan->names = &s->names;
	return 0;
}

int measure_req_body(struct measure *s, struct run_plan *plan)
{
	if (!s->body_arg)
		return 0;
	if (s->body_arg[0] == '@') {
		size_t len = 0;
		int rc;
		if (!strcmp(s->body_arg, "@-")) {
			/* standard input, read once per process: compare's variants
			 * each take a copy of the same bytes */
			static char *in;
			static size_t in_len;
			static int in_rc = 1; /* 1: not read yet */
			if (in_rc == 1)
				in_rc = file_read_all("-", MAX_BODY_BYTES, &in, &in_len);
			rc = in_rc;
			if (!rc && !(s->body_buf = malloc(in_len + 1)))
				rc = -ENOMEM;
			if (!rc) {
				memcpy(s->body_buf, in, in_len + 1);
				len = in_len;
			}
		} else {
			rc = file_read_all(s->body_arg + 1, MAX_BODY_BYTES, &s->body_buf, &len);
		}
		if (rc) {
			return measure_fail(s, MEASURE_EUSAGE, "--body %s: cannot read: %s", s->body_arg,
				rc == PACER_ETOOBIG ? "larger than 64 MiB" : err_name(rc));
		}
		plan->body = s->body_buf;
		plan->body_len = len;
		plan->body_source = s->body_arg;
	} else {
		plan->body = s->body_arg;
		plan->body_len = strlen(s->body_arg);
		plan->body_source = "literal";
	}
	return 0;
}

/* The longest header line of the request head buf[len]: its name (at most
 * 63 bytes) into name, its length returned (0: none). */
static size_t longest_field(const char *buf, size_t len, char *name, size_t cap)
{
	const char *p = memchr(buf, '\n', len), *end = buf + len;
	size_t best = 0;
	name[0] = '\0';
	for (p = p ? p + 1 : end; p < end;) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));
		const char *le = eol ? eol : end;
		if (le - p <= 2)
			break; /* the blank line */
		const char *colon = memchr(p, ':', (size_t)(le - p));
		if ((size_t)(le - p) > best && colon) {
			best = (size_t)(le - p);
			size_t n = (size_t)(colon - p) < cap - 1 ? (size_t)(colon - p) : cap - 1;
			memcpy(name, p, n);
			name[n] = '\0';
		}
		p = eol ? eol + 1 : end;
	}
	return best;
}

/* Over HTTP/2 and HTTP/3 every request is turned into header fields before
 * the load (http/h2req.h): a request that cannot be (a head over
 * H1REQ_HEADERS_CAP bytes) is refused here, with one error naming it and
 * its largest header field, not by the engine as a bare errno. */
static int check_fields(struct measure *s, const struct run_plan *plan)
{
	const char *opt = plan_http3(plan) ? "--http3" : plan->http.h2c ? "--h2c" : "--http2";
	if ((!plan->http.http2 && !plan->http.h2c && !plan_http3(plan)) || s->spool)
		return 0;
	for (size_t i = 0; i < s->n_reqs; i++) {
		struct h2req f;
		char err[160] = "", name[64];
		int rc =
			h2req_from_h1(&f, s->reqs[i].buf, s->reqs[i].len, "https", err, sizeof err);
		h2req_free(&f);
		if (rc == -ENOMEM)
			return measure_fail(s, MEASURE_ERUNTIME, "out of memory");
		if (!rc)
			continue;
		size_t longest = longest_field(s->reqs[i].buf, s->reqs[i].len, name, sizeof name);
		char which[48] = "";
		if (s->n_reqs > 1)
			snprintf(which, sizeof which, " %zu", i + 1);
		if (longest)
			return measure_fail(
				s, MEASURE_EUSAGE,
				"%s: request%s: %s; its longest header field is %s (%zu "
				"bytes)",
				opt, which, err, name, longest);
		return measure_fail(s, MEASURE_EUSAGE, "%s: request%s: %s", opt, which, err);
	}
	return 0;
}

int measure_req_encode(struct measure *s, struct run_plan *plan)
{
	int rc;
	const struct script_info *si = s->script ? script_info(s->script) : NULL;
	if (s->table) {
		rc = 0; /* encoded (and described) by measure_req_table */
	} else if (si) {
		/* what wrk.format() makes of wrk's fields: sent as it is
		 * (mode static), and where connections go before the load */
		plan_workload_init(&s->workload, "script");
		rc = add_request_bytes(s, si->req, si->req_len);
	} else if (s->self_contained && !s->url_arg) {
		plan_workload_init(&s->workload, "embedded_routes");
		rc = add_route_requests(s, plan, &plan->url);
	} else {
		plan_workload_init(&s->workload, "url");
		rc = add_request(s, plan_method(plan), &plan->url, plan->headers,
				 plan->n_headers, plan->body, plan->body_len);
	}
	if (!rc && !s->table)
		rc = hash_requests(s);
	if (!rc && si && si->mode != SCRIPT_STATIC) { /* the requests are the script's */
		memcpy(s->workload.sha256, si->sha256, sizeof s->workload.sha256);
		s->workload.workload_sha256[0] = '\0';
	}
	if (!rc && si && si->mode == SCRIPT_SESSION)
		plan->names = &s->names; /* the steps' names, interned as they run */
	else if (!rc && !s->spool)
		rc = name_requests(s, plan); /* --lazy named them as they passed */
	if (!rc && !(si && si->mode != SCRIPT_STATIC))
		rc = check_fields(s, plan);
	if (rc)
		return rc;
	plan_workload_finish(&s->workload);
	plan->workload = &s->workload;
	return 0;
}
