/* libFuzzer harness for target plans (src/target/plan_yaml.c, plan.c): the
 * YAML plan files of `pacer serve` and self-contained runs.
 *
 * Input: the plan text (at most 64 KiB, so each run stays fast; the loader's
 * own cap is 1 MiB). It is parsed twice, as the source "fuzz.yaml". Both
 * parses must agree (return value and message). A failure must return a
 * known negative code with no plan and one error line "fuzz.yaml:LINE: ..."
 * or "fuzz.yaml: ...". A success must give a plan that holds what
 * docs/serve.md promises: 1..64 routes with paths of visible ASCII
 * starting with '/', status probabilities summing to 1, a fill in [0, 1],
 * compiled variants with increasing thresholds ending at UINT64_MAX and
 * well-formed precomputed bytes, latency samples within the cap, CPU work
 * within 1 s; each route is found by target_plan_match for its own method
 * and path (unless an earlier route shadows it), and target_route_pick
 * stays in range. The plan is then freed (LeakSanitizer checks that
 * everything went). Violations abort(). */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "http/h1req.h"
#include "target/dist.h"
#include "target/plan.h"
#include "util/err.h"
#include "util/rng.h"

#define FUZZ_NAME "fuzz_plan"
#include "common/fuzz_check.h"

#define MAX_INPUT (64u * 1024u)
#define SOURCE "fuzz.yaml"

static bool known_error(int rc)
{
	return rc == PACER_EPARSE || rc == PACER_ERANGE || rc == PACER_ETOOBIG;
}

static void check_error_line(const char *err)
{
	size_t n = strlen(err);
	CHECK(n > 0);
	CHECK(strncmp(err, SOURCE ":", sizeof SOURCE) == 0);
	/* one line: no line breaks in the message */
	CHECK(strchr(err, '\n') == NULL);
	CHECK(strchr(err, '\r') == NULL);
}

static void check_head(const char *h, size_t len, int status)
{
	char want[16];
	int k = snprintf(want, sizeof want, "HTTP/1.1 %d ", status);
	CHECK(len >= (size_t)k + 2 && memcmp(h, want, (size_t)k) == 0);
	CHECK(h[len - 2] == '\r' && h[len - 1] == '\n');
	/* no blank line inside the head; every line is "Name: value" */
	for (size_t i = 0; i + 3 < len; i++)
		CHECK(!(h[i] == '\r' && h[i + 1] == '\n' && h[i + 2] == '\r' && h[i + 3] == '\n'));
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)h[i];
		CHECK(c != 0);
		if (c == '\n')
			CHECK(i > 0 && h[i - 1] == '\r');
		if (c == '\r')
			CHECK(i + 1 < len && h[i + 1] == '\n');
	}
}

static void check_resp(const struct target_resp *r)
{
	CHECK(r->status >= 100 && r->status <= 599);
	CHECK(r->body != NULL && r->head != NULL);
	CHECK(r->p >= 0.0 && r->p <= 1.0 + 1e-9);
	check_head(r->head, r->head_len, r->status);
	CHECK(r->no_body_allowed == (r->status == 204 || r->status == 304));
	const struct target_body *b = r->body;
	if (r->no_body_allowed)
		CHECK(b->len == 0 && !b->kv && b->n_segs == 0);
	CHECK(b->len <= TARGET_BODY_CAP);
	if (b->segs) {
		CHECK(b->n_segs > 0 && b->len <= TARGET_TEMPLATE_CAP);
		for (size_t i = 0; i < b->n_segs; i++) {
			const struct target_seg *s = &b->segs[i];
			CHECK(s->kind == TARGET_SEG_TEXT || s->kind == TARGET_SEG_ID ||
			      s->kind == TARGET_SEG_SEQ || s->kind == TARGET_SEG_QUERY);
			if (s->kind == TARGET_SEG_TEXT || s->kind == TARGET_SEG_QUERY)
				CHECK(s->text != NULL || s->len == 0);
		}
	}
	if (r->wire) {
		CHECK(!b->segs && !b->kv);
		CHECK(r->wire_len >= r->head_len + 2 && memcmp(r->wire, r->head, r->head_len) == 0);
		CHECK(r->wire_body_off >= r->head_len + 2 && r->wire_body_off <= r->wire_len);
		CHECK(r->wire[r->wire_body_off - 2] == '\r' && r->wire[r->wire_body_off - 1] == '\n');
		CHECK(r->wire_len - r->wire_body_off == b->len);
		CHECK(b->len == 0 || memcmp(r->wire + r->wire_body_off, b->data, b->len) == 0);
		const char *cl = "Content-Length: ";
		bool has_cl = r->wire_body_off - r->head_len > 2 &&
		              memcmp(r->wire + r->head_len, cl, strlen(cl)) == 0;
		CHECK(has_cl == !r->no_body_allowed);
	} else {
		CHECK(b->segs || b->kv);
	}
}

static void check_headers(const struct target_header *h, size_t n)
{
	CHECK(n <= TARGET_MAX_HEADERS);
	for (size_t i = 0; i < n; i++) {
		CHECK(h[i].name && h[i].value && h[i].name[0]);
		for (const char *p = h[i].name; *p; p++)
			CHECK(h1req_is_tchar((unsigned char)*p));
		CHECK(strcasecmp(h[i].name, "Content-Length") != 0);
		CHECK(strcasecmp(h[i].name, "Transfer-Encoding") != 0);
		CHECK(strcasecmp(h[i].name, "Connection") != 0);
		for (const char *p = h[i].value; *p; p++)
			CHECK(*p != '\r' && *p != '\n');
	}
}

static void check_route(const struct target_plan *p, size_t idx, struct rng *rng)
{
	const struct target_route *rt = &p->routes[idx];
	CHECK(rt->path && rt->path_len == strlen(rt->path) && rt->path_len >= 1);
	CHECK(rt->path[0] == '/');
	for (size_t i = 0; i < rt->path_len; i++) {
		unsigned char c = (unsigned char)rt->path[i];
		CHECK(c > 0x20 && c < 0x7f && c != '?' && c != '#');
	}
	if (rt->method) {
		CHECK(rt->method[0] && strlen(rt->method) <= H1REQ_METHOD_CAP);
		for (const char *m = rt->method; *m; m++)
			CHECK(h1req_is_tchar((unsigned char)*m));
	}
	CHECK(rt->n_status >= 1 && rt->n_status <= TARGET_MAX_STATUSES);
	double sum = 0;
	for (size_t i = 0; i < rt->n_status; i++) {
		CHECK(rt->status[i] >= 200 && rt->status[i] <= 599);
		CHECK(rt->status_p[i] >= 0.0 && rt->status_p[i] <= 1.0);
		sum += rt->status_p[i];
	}
	CHECK(fabs(sum - 1.0) < 1e-6);
	CHECK(rt->fill >= 0.0 && rt->fill <= 1.0);
	CHECK(rt->work_ns <= TARGET_WORK_CAP_NS);
	check_headers(rt->filled.headers, rt->filled.n_headers);
	if (rt->nofill.headers_set)
		check_headers(rt->nofill.headers, rt->nofill.n_headers);
	if (rt->kv) {
		CHECK(rt->kv->param && rt->kv->prefix);
		CHECK(rt->kv->value_size >= 1 && rt->kv->value_size <= TARGET_KV_VALUE_CAP);
		CHECK(rt->kv->n_table <= TARGET_MAX_KV_TABLE);
		for (size_t i = 0; i + 1 < rt->kv->n_table; i++)
			CHECK(strcmp(rt->kv->table[i].name, rt->kv->table[i + 1].name) <= 0);
	}
	const struct target_misbehave *m = &rt->mis;
	CHECK(m->garbage >= 0.0 && m->garbage <= 1.0);
	CHECK(m->stall_every_ns == 0 || m->stall_for_ns <= TARGET_LATENCY_CAP_NS);
	CHECK(m->slow_bytes == 0 || m->slow_every_ns <= TARGET_LATENCY_CAP_NS);

	/* compiled variants */
	CHECK(rt->n_resps >= 1 && rt->n_resps <= 2 * TARGET_MAX_STATUSES);
	double psum = 0;
	for (size_t i = 0; i < rt->n_resps; i++) {
		check_resp(&rt->resps[i]);
		psum += rt->resps[i].p;
		if (i)
			CHECK(rt->resps[i].thresh >= rt->resps[i - 1].thresh);
	}
	CHECK(rt->resps[rt->n_resps - 1].thresh == UINT64_MAX);
	CHECK(fabs(psum - 1.0) < 1e-6);
	if (rt->simple)
		CHECK(rt->n_resps == 1 && rt->resps[0].wire && rt->latency.kind == TARGET_DIST_NONE &&
		      rt->work_ns == 0);
	for (int k = 0; k < 4; k++)
		CHECK(target_route_pick(rt, rng) < rt->n_resps);

	/* latency: parameters as documented, samples within the cap */
	const struct target_dist *d = &rt->latency;
	CHECK(d->kind >= TARGET_DIST_NONE && d->kind <= TARGET_DIST_LOGNORMAL);
	CHECK(d->a_ns <= TARGET_LATENCY_CAP_NS && d->b_ns <= TARGET_LATENCY_CAP_NS);
	uint64_t cap = d->cap_ns ? d->cap_ns : TARGET_LATENCY_CAP_NS;
	CHECK(cap <= TARGET_LATENCY_CAP_NS);
	if (d->kind == TARGET_DIST_UNIFORM || d->kind == TARGET_DIST_LOGNORMAL)
		CHECK(d->b_ns >= d->a_ns);
	for (int k = 0; k < 8; k++) {
		uint64_t s = target_dist_sample(d, rng);
		CHECK(s <= cap);
		if (d->kind == TARGET_DIST_NONE)
			CHECK(s == 0);
		if (d->kind == TARGET_DIST_FIXED)
			CHECK(s == d->a_ns);
		if (d->kind == TARGET_DIST_UNIFORM)
			CHECK(s >= d->a_ns && s <= d->b_ns);
	}

	/* the route answers its own path, unless an earlier route does */
	const char *method = rt->method ? rt->method : "GET";
	const struct target_route *got =
		target_plan_match(p, method, strlen(method), rt->path, rt->path_len);
	CHECK(got != NULL && got >= p->routes && got <= rt);
}

static void check_plan(const struct target_plan *p)
{
	CHECK(p->name && p->description && p->source);
	CHECK(strcmp(p->source, SOURCE) == 0);
	CHECK(p->n_routes >= 1 && p->n_routes <= TARGET_MAX_ROUTES && p->routes);
	CHECK(p->max_connections >= 1);
	struct rng rng;
	rng_seed(&rng, p->seed);
	for (size_t i = 0; i < p->n_routes; i++)
		check_route(p, i, &rng);
	check_resp(&p->not_found);
	CHECK(p->not_found.status == 404);
	/* a path no route can match: every route path starts with '/' */
	CHECK(target_plan_match(p, "GET", 3, "#", 1) == NULL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > MAX_INPUT)
		return 0;
	/* an exactly-sized copy: the parser must not read past len */
	char *text = malloc(size ? size : 1);
	CHECK(text != NULL);
	memcpy(text, data, size);

	struct target_plan *p1 = NULL, *p2 = NULL;
	char err1[512], err2[512];
	int rc1 = target_plan_parse(text, size, SOURCE, &p1, err1, sizeof err1);
	int rc2 = target_plan_parse(text, size, SOURCE, &p2, err2, sizeof err2);
	CHECK(rc1 == rc2);
	if (rc1 < 0) {
		CHECK(p1 == NULL && p2 == NULL);
		CHECK(known_error(rc1));
		CHECK(strcmp(err1, err2) == 0);
		check_error_line(err1);
	} else {
		CHECK(rc1 == 0 && p1 != NULL && p2 != NULL);
		check_plan(p1);
		CHECK(p1->n_routes == p2->n_routes && p1->seed == p2->seed);
	}
	target_plan_free(p1);
	target_plan_free(p2);
	free(text);
	return 0;
}
