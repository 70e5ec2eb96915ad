#include "doc/workload.h"

#include <inttypes.h>
#include <string.h>

#include "doc/keys.h"
#include "table/table.h"
#include "util/units.h"

/* One {KEY: label, requests, share_pct} entry of the methods or names list,
 * on one line. */
static void share_entry(struct jsonw *j, const char *key, const char *label, uint64_t requests,
			uint64_t total)
{
	int saved = j->indent;
	jw_obj(j);
	j->indent = 0;
	jw_key(j, key);
	jw_str(j, label);
	jw_key(j, KEY_REQUESTS);
	jw_u64(j, requests);
	jw_key(j, KEY_SHARE_PCT);
	jw_dbl(j, total ? 100.0 * (double)requests / (double)total : 0, 3);
	jw_obj_end(j);
	j->indent = saved;
}

void rj_workload(struct jsonw *j, const struct plan_workload *w, bool order_random)
{
	jw_key(j, KEY_WORKLOAD);
	if (!w) {
		jw_null(j);
		return;
	}
	jw_obj(j);
	jw_key(j, KEY_SOURCE);
	jw_str(j, w->source);
	jw_key(j, KEY_REQUESTS);
	jw_u64(j, w->requests);
	jw_key(j, KEY_ORDER);
	jw_str(j, order_random ? "random" : "sequential");
	jw_key(j, KEY_SHA256);
	jw_str(j, w->sha256[0] ? w->sha256 : NULL);
	if (w->workload_sha256[0]) {
		jw_key(j, KEY_WORKLOAD_SHA256);
		jw_str(j, w->workload_sha256);
	}
	jw_key(j, KEY_METHODS);
	jw_arr(j);
	for (size_t i = 0; i < w->n_methods; i++)
		share_entry(j, "method", w->methods[i].method, w->methods[i].requests, w->requests);
	jw_arr_end(j);
	jw_key(j, KEY_OTHER_METHODS_REQUESTS);
	jw_u64(j, w->other_method_requests);
	jw_key(j, KEY_NAMES);
	jw_arr(j);
	for (size_t i = 0; i < w->n_names; i++)
		share_entry(j, "name", w->names[i].name, w->names[i].requests, w->requests);
	jw_arr_end(j);
	jw_key(j, KEY_OTHER_NAMES_REQUESTS);
	jw_u64(j, w->other_name_requests);
	jw_key(j, KEY_UNNAMED_REQUESTS);
	jw_u64(j, w->unnamed);
	jw_key(j, "bodies");
	jw_obj(j);
	jw_key(j, KEY_REQUESTS);
	jw_u64(j, w->with_body);
	jw_key(j, "bytes_total");
	jw_u64(j, w->body_bytes_total);
	jw_key(j, "bytes_min");
	jw_u64(j, w->body_bytes_min);
	jw_key(j, "bytes_max");
	jw_u64(j, w->body_bytes_max);
	jw_obj_end(j);
	jw_key(j, KEY_LISTED);
	jw_arr(j);
	for (size_t i = 0; i < w->n_listed; i++) {
		const struct plan_wl_request *r = &w->listed[i];
		int saved = j->indent;
		jw_obj(j);
		j->indent = 0;
		jw_key(j, KEY_METHOD);
		jw_str(j, r->method);
		jw_key(j, KEY_TARGET);
		jw_str(j, r->target);
		jw_key(j, KEY_TARGET_CUT);
		jw_bool(j, r->target_cut);
		jw_key(j, KEY_BODY_BYTES);
		jw_u64(j, r->body_bytes);
		jw_key(j, KEY_NAME);
		jw_str(j, r->name[0] ? r->name : NULL);
		jw_obj_end(j);
		j->indent = saved;
	}
	jw_arr_end(j);
	jw_key(j, KEY_LISTED_ALL);
	jw_bool(j, w->n_listed == w->requests);
	jw_obj_end(j);
}

const char *report_run_name(char *out, size_t cap, const struct run_plan *p)
{
	if (!p->table_sha256) {
		snprintf(out, cap, "%s", p->url_str ? p->url_str : "");
		return out;
	}
	char n[32];
	size_t len = 0;
	int w = snprintf(out, cap, "table %s (sha256 %.12s, %s request%s, ",
			 p->table_source ? p->table_source : "?", p->table_sha256,
			 units_fmt_thousands(n, sizeof n, (double)p->table_requests, 0),
			 p->table_requests == 1 ? "" : "s");
	len = w > 0 ? (size_t)w : 0;
	if (p->table_n_hosts == 1 && len < cap)
		len += (size_t)snprintf(out + len, cap - len, "host ");
	else if (len < cap)
		len += (size_t)snprintf(out + len, cap - len, "%zu hosts: ", p->table_n_hosts);
	for (size_t i = 0; i < p->table_n_hosts && len < cap; i++) {
		const struct table_host *h = &p->table_hosts[i];
		if (i == 3) {
			len += (size_t)snprintf(out + len, cap - len, ", ...");
			break;
		}
		len += (size_t)snprintf(out + len, cap - len, "%s%s%s%s%s%s:%u", i ? ", " : "",
					h->unix_path ? "unix:" : "", h->unix_path ? h->unix_path : "",
					h->unix_path ? ":" : "", h->tls ? "https://" : "", h->name,
					(unsigned)h->port);
	}
	if (len < cap)
		snprintf(out + len, cap - len, ")");
	return out;
}

void report_text_workload(FILE *f, const struct run_plan *p)
{
	const struct plan_workload *w = p->workload;
	if (!w || !w->requests)
		return;
	char a[48], b[48], c[48], d[48];
	bool all = w->n_listed == w->requests;
	if (w->requests == 1) {
		const struct plan_wl_request *r = &w->listed[0];
		fprintf(f, "  request    %s %s%s", r->method, r->target, r->target_cut ? "..." : "");
		if (r->body_bytes)
			fprintf(f, ", body %s", units_fmt_bytes(a, sizeof a, r->body_bytes));
		fprintf(f, "\n");
		return;
	}
	const char *from = !strcmp(w->source, "embedded_routes") ? ", one per route of the embedded plan"
			   : !strcmp(w->source, "bodies")        ? ", one per body file"
			   : !strcmp(w->source, "table")         ? " from the table"
								 : "";
	fprintf(f, "  requests   %s distinct%s, %s:", units_fmt_thousands(a, sizeof a, (double)w->requests, 0),
		from, p->order_random ? "in random order" : "in turn");
	for (size_t i = 0; i < w->n_methods; i++)
		fprintf(f, "%s %s %s (%.1f %%)", i ? "," : "", w->methods[i].method,
			units_fmt_thousands(a, sizeof a, (double)w->methods[i].requests, 0),
			100.0 * (double)w->methods[i].requests / (double)w->requests);
	if (w->other_method_requests)
		fprintf(f, ", other methods %s",
			units_fmt_thousands(a, sizeof a, (double)w->other_method_requests, 0));
	fprintf(f, "\n");
	if (all && w->n_listed <= 4) {
		for (size_t i = 0; i < w->n_listed; i++) {
			const struct plan_wl_request *r = &w->listed[i];
			fprintf(f, "             %s %s%s", r->method, r->target, r->target_cut ? "..." : "");
			if (r->name[0])
				fprintf(f, "  [%s]", r->name);
			if (r->body_bytes)
				fprintf(f, ", body %s", units_fmt_bytes(a, sizeof a, r->body_bytes));
			fprintf(f, "\n");
		}
		return;
	}
	if (w->n_names) {
		fprintf(f, "             names:");
		for (size_t i = 0; i < w->n_names && i < 8; i++)
			fprintf(f, "%s %s %.1f %%", i ? "," : "", w->names[i].name,
				100.0 * (double)w->names[i].requests / (double)w->requests);
		if (w->n_names > 8 || w->other_name_requests)
			fprintf(f, ", ...");
		fprintf(f, "\n");
	}
	if (w->with_body)
		fprintf(f, "             %s with a body: %s to %s, %s in all\n",
			units_fmt_thousands(a, sizeof a, (double)w->with_body, 0),
			units_fmt_bytes(b, sizeof b, w->body_bytes_min), units_fmt_bytes(c, sizeof c, w->body_bytes_max),
			units_fmt_bytes(d, sizeof d, w->body_bytes_total));
}
