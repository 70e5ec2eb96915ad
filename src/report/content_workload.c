/* pacer — the workload as sent, in words (see content_int.h): what the
 * identity, methodology and meaning sections say about plan.workload
 * (docs/result.md). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "doc/keys.h"
#include "report/content_int.h"

/* "127-byte body", "bodies of 10 B to 4.0 KiB, 1.2 MiB in all": the bodies
 * of a workload object; "no body" when none has one. */
static void wl_bodies(struct content_ctx *c, const json_t *wl, char *out, size_t cap)
{
	double n = rr_num_or(wl, "bodies.requests", 0), lo = rr_num_or(wl, "bodies.bytes_min", 0),
	       hi = rr_num_or(wl, "bodies.bytes_max", 0), all = rr_num_or(wl, "bodies.bytes_total", 0);
	if (!(n > 0))
		snprintf(out, cap, "no body");
	else if (lo == hi)
		snprintf(out, cap, "%s-byte %s", fmt_int(&c->f, lo), plural(n, "body", "bodies"));
	else
		snprintf(out, cap, "bodies of %s to %s, %s in all", fmt_bytes(&c->f, lo),
			 fmt_bytes(&c->f, hi), fmt_bytes(&c->f, all));
}

/* "GET 1 (50.00%), POST 1 (50.00%)": methods with counts and shares. */
void content_wl_methods(struct content_ctx *c, const json_t *wl, char *out, size_t cap)
{
	out[0] = '\0';
	size_t i, l = 0;
	const json_t *m;
	json_array_foreach(rr_arr(wl, KEY_METHODS), i, m) {
		if (l + 80 > cap)
			break;
		l += (size_t)snprintf(out + l, cap - l, "%s%s %s (%s)", l ? ", " : "",
				      rr_str(m, KEY_METHOD) ? rr_str(m, KEY_METHOD) : "?",
				      fmt_int(&c->f, rr_num_or(m, KEY_REQUESTS, NAN)),
				      fmt_pct(&c->f, rr_num_or(m, KEY_SHARE_PCT, NAN)));
	}
	double other = rr_num_or(wl, KEY_OTHER_METHODS_REQUESTS, 0);
	if (other > 0 && l + 60 < cap)
		snprintf(out + l, cap - l, ", other methods %s", fmt_int(&c->f, other));
}

/* "rest_id 600 (66.67%), create 300 (33.30%)": request names with counts
 * and shares; "" when none has a name. */
static void wl_names(struct content_ctx *c, const json_t *wl, char *out, size_t cap)
{
	out[0] = '\0';
	size_t i, l = 0;
	const json_t *m;
	json_array_foreach(rr_arr(wl, KEY_NAMES), i, m) {
		if (l + 120 > cap)
			break;
		l += (size_t)snprintf(out + l, cap - l, "%s%s %s (%s)", l ? ", " : "",
				      rr_str(m, KEY_NAME) ? rr_str(m, KEY_NAME) : "?",
				      fmt_int(&c->f, rr_num_or(m, KEY_REQUESTS, NAN)),
				      fmt_pct(&c->f, rr_num_or(m, KEY_SHARE_PCT, NAN)));
	}
	if (!l)
		return;
	double other = rr_num_or(wl, KEY_OTHER_NAMES_REQUESTS, 0),
	       unnamed = rr_num_or(wl, KEY_UNNAMED_REQUESTS, 0);
	if (other > 0 && l + 60 < cap)
		l += (size_t)snprintf(out + l, cap - l, ", other names %s", fmt_int(&c->f, other));
	if (unnamed > 0 && l + 60 < cap)
		snprintf(out + l, cap - l, ", no name %s", fmt_int(&c->f, unnamed));
}

/* "GET /vast", "POST /openrtb2/auction (127-byte body)" for listed request k. */
static void wl_request(struct content_ctx *c, const json_t *r, char *out, size_t cap)
{
	double body = rr_num_or(r, KEY_BODY_BYTES, 0);
	const char *name = rr_str(r, KEY_NAME);
	/* a name that only repeats "METHOD path" (a table's derived name,
	 * tables.md#request-names) says nothing the request does not */
	const char *m = rr_str(r, KEY_METHOD), *t = rr_str(r, KEY_TARGET);
	if (name && m && t) {
		size_t ml = strlen(m), tl = strcspn(t, "?");
		if (!strncmp(name, m, ml) && name[ml] == ' ' && !strncmp(name + ml + 1, t, tl) &&
		    !name[ml + 1 + tl])
			name = NULL;
	}
	char b[64] = "";
	if (body > 0)
		snprintf(b, sizeof b, "%s-byte body", fmt_int(&c->f, body));
	snprintf(out, cap, "%s %s%s%s%s%s%s%s", rr_str(r, KEY_METHOD) ? rr_str(r, KEY_METHOD) : "?",
		 rr_str(r, KEY_TARGET) ? rr_str(r, KEY_TARGET) : "?",
		 rr_true(r, KEY_TARGET_CUT) ? "..." : "", name || b[0] ? " (" : "",
		 name ? name : "", name && b[0] ? ", " : "", b, name || b[0] ? ")" : "");
}

/* What was sent, as a phrase: "one POST request to URL with a 12-byte body",
 * "2 requests in turn, one per route of the embedded plan: GET /vast, POST
 * /openrtb2/auction (127-byte body)", "1,000 requests of the request table
 * api.jsonl (SHA-256 0123456789abcdef...) in turn: GET 800 (80.00%), ...".
 * url: how to name the URL ("the target URL", or the URL itself). NULL
 * when wl is NULL (an older result: the caller says it its own way). */
bool content_wl_phrase(struct content_ctx *c, const json_t *wl, const json_t *plan,
		       const char *url, char *out, size_t cap)
{
	if (!wl)
		return false;
	const char *src = rr_str(wl, KEY_SOURCE);
	double n = rr_num_or(wl, KEY_REQUESTS, NAN);
	bool random = rr_str(wl, KEY_ORDER) && !strcmp(rr_str(wl, KEY_ORDER), "random");
	const json_t *listed = rr_arr(wl, KEY_LISTED);
	char bodies[160], methods[400];
	wl_bodies(c, wl, bodies, sizeof bodies);
	content_wl_methods(c, wl, methods, sizeof methods);
	const json_t *r0 = json_array_get(listed, 0);
	if (n == 1 && r0) {
		double body = rr_num_or(r0, KEY_BODY_BYTES, 0);
		const char *method = rr_str(r0, KEY_METHOD);
		snprintf(out, cap, "one %s request to %s%s%s%s", method ? method : "?", url,
			 body > 0 ? " with a " : "", body > 0 ? fmt_int(&c->f, body) : "",
			 body > 0 ? "-byte body" : "");
		return true;
	}
	const char *order = random ? "at random" : "in turn";
	size_t l = 0;
	if (src && !strcmp(src, "embedded_routes"))
		l = (size_t)snprintf(out, cap, "%s requests %s, one per route of the embedded plan",
				     fmt_int(&c->f, n), order);
	else if (src && !strcmp(src, "bodies"))
		l = (size_t)snprintf(out, cap, "%s requests to %s %s, one per body file of %s (%s)",
				     fmt_int(&c->f, n), url, order,
				     rr_str(plan, "table.source") ? rr_str(plan, "table.source") : "?",
				     bodies);
	else if (src && !strcmp(src, "table")) {
		/* the table's own hash, else (a comparison's variant in an older
		 * result) the workload's, which is the same: of the wire bytes */
		const char *tsrc = rr_str(plan, "table.source");
		const char *sha = rr_str(plan, "table.sha256") ? rr_str(plan, "table.sha256")
							       : rr_str(wl, KEY_SHA256);
		char hash[64] = "";
		if (sha)
			snprintf(hash, sizeof hash, " (SHA-256 %.16s...)", sha);
		l = (size_t)snprintf(out, cap, "%s requests of %s%s%s %s", fmt_int(&c->f, n),
				     tsrc ? "the request table " : "a request table", tsrc ? tsrc : "",
				     hash, order);
	}
	else
		l = (size_t)snprintf(out, cap, "%s requests %s", fmt_int(&c->f, n), order);
	if (l >= cap)
		return true;
	if (rr_true(wl, KEY_LISTED_ALL) && json_array_size(listed) <= 4) {
		size_t i;
		const json_t *r;
		json_array_foreach(listed, i, r) {
			char one[400];
			wl_request(c, r, one, sizeof one);
			if (l + strlen(one) + 4 >= cap)
				break;
			l += (size_t)snprintf(out + l, cap - l, "%s%s", i ? ", " : ": ", one);
		}
	} else {
		char names[600];
		wl_names(c, wl, names, sizeof names);
		l += (size_t)snprintf(out + l, cap - l, ": %s", methods);
		if (l < cap && names[0])
			l += (size_t)snprintf(out + l, cap - l, "; by name %s", names);
		if (l < cap && src && strcmp(src, "bodies") != 0)
			snprintf(out + l, cap - l, "; %s", bodies);
	}
	return true;
}

/* Identity rows for the requests of a workload object. */
void content_wl_rows(struct content_ctx *c, const json_t *wl)
{
	char b[1024];
	content_wl_phrase(c, wl, c->plan, "the target URL", b, sizeof b);
	kv(c, "Requests", b);
	content_wl_methods(c, wl, b, sizeof b);
	kv(c, "Methods", b);
	wl_names(c, wl, b, sizeof b);
	if (b[0])
		kv(c, "Request names", b);
	size_t i;
	const json_t *r;
	json_array_foreach(rr_arr(wl, KEY_LISTED), i, r) {
		char k[32];
		snprintf(k, sizeof k, "Request %zu", i + 1);
		wl_request(c, r, b, sizeof b);
		kv(c, k, b);
	}
	double n = rr_num_or(wl, KEY_REQUESTS, NAN);
	if (!rr_true(wl, KEY_LISTED_ALL) && rr_len(wl, KEY_LISTED)) {
		snprintf(b, sizeof b, "%s more (only the first %zu listed)",
			 fmt_int(&c->f, n - (double)rr_len(wl, KEY_LISTED)),
			 rr_len(wl, KEY_LISTED));
		kv(c, "Other requests", b);
	}
	if (n > 1) { /* one request: its body is in the Requests row */
		char bodies[160];
		wl_bodies(c, wl, bodies, sizeof bodies);
		snprintf(b, sizeof b, "%s of %s requests: %s",
			 fmt_int(&c->f, rr_num_or(wl, "bodies.requests", 0)), fmt_int(&c->f, n), bodies);
		kv(c, "Bodies", b);
	}
	if (rr_str(wl, KEY_SHA256))
		kv(c, "Requests SHA-256", rr_str(wl, KEY_SHA256));
}
