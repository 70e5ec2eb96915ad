/* pacer — the report's content, generated from the facts in a result
 * (docs/report.md): a headline, identity, methodology, test conditions and
 * limits, results, cost and resources, and what the number means and does
 * not establish. This file gathers the facts the sections share and calls
 * the sections in their order; the sections are in content_*.c (see
 * content_int.h). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "doc/keys.h"
#include "report/content_int.h"
#include "table/table.h"

/* Host of the URL as written (a unix: URL's after its socket path), without
 * port or brackets; "" when it is not an http(s) URL pacer could have sent
 * to. */
static void url_host(const char *url, char *out, size_t cap)
{
	out[0] = '\0';
	const char *upath, *http;
	size_t upath_len;
	struct url u;
	if (url && !table_url_unix(url, &upath, &upath_len, &http, NULL) &&
	    !url_parse(&u, http, NULL))
		snprintf(out, cap, "%s", u.host);
}

static bool host_is_loopback(const char *h)
{
	if (!h[0])
		return false;
	if (strncmp(h, "127.", 4) == 0 || strcmp(h, "::1") == 0 || strcasecmp(h, "localhost") == 0 ||
	    strcmp(h, "0:0:0:0:0:0:0:1") == 0 || strncasecmp(h, "::ffff:127.", 11) == 0)
		return true;
	size_t n = strlen(h);
	return n > 10 && strcasecmp(h + n - 10, ".localhost") == 0;
}

/* The addresses pacer connected to (a "connected" array: a run's or ramp's,
 * or one variant's), folded into c: loopback only when every one was, the
 * address when there is one (and the same everywhere). false when arr is
 * not there (an older result). */
static bool gather_connected(struct content_ctx *c, const json_t *arr, bool *first)
{
	if (!arr)
		return false;
	size_t i;
	const json_t *e;
	json_array_foreach(arr, i, e) {
		const char *a = rr_str(e, KEY_ADDRESS);
		if (!rr_true(e, KEY_LOOPBACK))
			c->loopback = false;
		if (*first)
			snprintf(c->address, sizeof c->address, "%s", a ? a : "");
		else if (!a || strcmp(c->address, a) != 0)
			c->address[0] = '\0';
		*first = false;
	}
	return true;
}

static void gather(struct content_ctx *c)
{
	c->root = c->r->root;
	c->plan = rr_obj(c->root, KEY_PLAN);
	c->env = rr_obj(c->root, KEY_ENVIRONMENT);
	const char *mode = rr_str(c->root, KEY_MODE);
	c->self_contained = mode && strcmp(mode, "self_contained") == 0;
	const char *loop = rr_str(c->plan, KEY_LOOP);
	c->open_loop = loop && strcmp(loop, "open") == 0;
	c->interrupted = rr_true(c->root, KEY_INTERRUPTED);
	double rep = rr_num_or(c->plan, KEY_REPEAT, 1);
	c->repeat = rep >= 1 && rep < 1e6 ? (unsigned)rep : 1;
	if (c->r->kind == RESULT_KIND_COMPARE && rep == 0)
		c->repeat = 0; /* interrupted before a round completed: say so, not "1" */
	if (c->r->kind == RESULT_KIND_COMPARE) {
		c->loopback = true;
		size_t i;
		const json_t *v;
		bool first = true;
		json_array_foreach(rr_arr(c->root, KEY_VARIANTS), i, v) {
			char h[URL_HOST_CAP];
			url_host(rr_str(v, KEY_URL), h, sizeof h);
			if (!host_is_loopback(h))
				c->loopback = false;
			const char *vm = rr_str(v, KEY_MODE);
			if (vm && strcmp(vm, "self_contained") == 0)
				c->self_contained = true;
			if (first)
				snprintf(c->host, sizeof c->host, "%s", h);
			else if (strcmp(c->host, h) != 0)
				c->host[0] = '\0';
			first = false;
		}
	} else {
		url_host(rr_str(c->plan, KEY_URL), c->host, sizeof c->host);
		c->loopback = host_is_loopback(c->host);
	}
	/* where pacer connected, when the result says (--connect-to, DNS and
	 * Unix sockets included): that, not the URL's name, is where the
	 * requests went */
	bool first = true, known = true;
	bool lo = c->loopback;
	c->loopback = true;
	if (c->r->kind == RESULT_KIND_COMPARE) {
		size_t i;
		const json_t *v;
		json_array_foreach(rr_arr(c->root, KEY_VARIANTS), i, v)
			known = gather_connected(c, rr_arr(v, KEY_CONNECTED), &first) && known;
		known = known && !first;
	} else {
		known = gather_connected(c, rr_arr(c->root, KEY_CONNECTED), &first) && !first;
	}
	if (!known) {
		c->loopback = lo;
		c->address[0] = '\0';
	}
}

/* What names a run or ramp: its request table (source, hash, hosts), else
 * its URL. */
static void run_name(struct content_ctx *c, char *out, size_t cap)
{
	const json_t *t = rr_obj(c->plan, KEY_TABLE);
	const char *url = rr_str(c->plan, KEY_URL);
	if (!t) {
		snprintf(out, cap, "%s", url ? url : "(no URL)");
		return;
	}
	double n = rr_num_or(t, KEY_REQUESTS, NAN), nh = (double)rr_len(t, KEY_HOSTS);
	size_t l = (size_t)snprintf(out, cap, "table %s (SHA-256 %.12s, %s %s, %s %s",
				    rr_str(t, KEY_SOURCE) ? rr_str(t, KEY_SOURCE) : "?",
				    rr_str(t, KEY_SHA256) ? rr_str(t, KEY_SHA256) : "?",
				    fmt_int(&c->f, n), plural(n, "request", "requests"),
				    fmt_int(&c->f, nh), plural(nh, "host", "hosts"));
	size_t i;
	const json_t *h;
	json_array_foreach(rr_arr(t, KEY_HOSTS), i, h) {
		if (l + 8 >= cap)
			break;
		if (i == 3) {
			l += (size_t)snprintf(out + l, cap - l, ", ...");
			break;
		}
		const char *sock = rr_str(h, KEY_UNIX_SOCKET);
		l += (size_t)snprintf(
			out + l, cap - l, "%s%s%s%s%s%s:%.0f", i ? ", " : ": ", sock ? "unix:" : "",
			sock ? sock : "", sock ? ":" : "", rr_true(h, KEY_TLS) ? "https://" : "",
			rr_str(h, KEY_HOST) ? rr_str(h, KEY_HOST) : "?", rr_num_or(h, KEY_PORT, 0));
	}
	if (l < cap)
		snprintf(out + l, cap - l, ")");
}

/* The charts, right after the summary: the answer first, then what it
 * rests on (a kind's charts in its order, then the trend of --history). */
static void content_charts(struct content_ctx *c)
{
	static const char *const run[] = {"timeline", "spectrum", "histogram", "status", NULL};
	static const char *const ramp[] = {
		"latency-vs-load", "timeline", "spectrum", "histogram", "status", NULL,
	};
	static const char *const cmp[] = {
		"compare-ratios",    "compare-latency",  "compare-throughput", "compare-spectrum",
		"compare-histogram", "compare-timeline", "compare-status",     NULL,
	};
	const char *const *names = run;
	if (c->r->kind == RESULT_KIND_RAMP)
		names = ramp;
	else if (c->r->kind == RESULT_KIND_COMPARE)
		names = cmp;
	const struct chart *trend = charts_find(c->cs, "trend");
	bool own = false;
	for (size_t i = 0; names[i]; i++)
		own = own || charts_find(c->cs, names[i]);
	if (!own && !trend)
		return;
	page_heading(c->d, 2, "charts", "Charts");
	/* asked for with --history: the trend first, then this result's own */
	if (trend) {
		page_heading(c->d, 3, "trend", "Trend");
		page_para(
			c->d, false,
			"The same benchmark over the runs of its history (pacer report --history): "
			"runs pacer diff calls comparable with this one in one series, the others "
			"apart, labelled with the field that makes them not comparable.");
		page_chart(c->d, trend->name, trend->title);
		if (own)
			page_heading(c->d, 3, "charts-this", "This %s",
				     c->r->kind == RESULT_KIND_COMPARE ? "comparison"
				     : c->r->kind == RESULT_KIND_RAMP  ? "ramp"
								       : "run");
	}
	for (size_t i = 0; names[i]; i++)
		chart_ref(c, names[i]);
}

int report_doc_build(const struct loaded_result *r, const struct chart_set *cs, struct page *d)
{
	struct content_ctx c;
	memset(&c, 0, sizeof c);
	c.r = r;
	c.d = d;
	c.cs = cs;
	gather(&c);
	const char *kind = result_kind_name(r->kind);
	if (r->kind == RESULT_KIND_COMPARE) {
		char names[256] = "";
		size_t i;
		const json_t *v;
		json_array_foreach(rr_arr(c.root, KEY_VARIANTS), i, v) {
			size_t l = strlen(names);
			if (l > 200) {
				snprintf(names + l, sizeof names - l, " ...");
				break;
			}
			snprintf(names + l, sizeof names - l, "%s%s", i ? " vs " : "",
				 rr_str(v, KEY_NAME) ? rr_str(v, KEY_NAME) : "?");
		}
		page_heading(d, 1, "title", "pacer compare report: %s", names);
	} else {
		char name[700];
		run_name(&c, name, sizeof name);
		page_heading(d, 1, "title", "pacer %s report: %s", kind, name);
	}
	page_heading(d, 2, "summary", "Summary");
	switch (r->kind) {
	case RESULT_KIND_RUN: content_summary_run(&c); break;
	case RESULT_KIND_RAMP: content_summary_ramp(&c); break;
	case RESULT_KIND_COMPARE: content_summary_compare(&c); break;
	}
	content_charts(&c);
	content_identity(&c);
	content_methodology(&c);
	content_conditions(&c);
	/* a ramp's terminal summary fits a screen: straight to its steps
	 * table; the cost per step is the report's */
	bool ramp = r->kind == RESULT_KIND_RAMP;
	page_audience(d, ramp ? PAGE_REPORT : PAGE_ALL);
	page_heading(d, 2, "results", "Results");
	page_audience(d, PAGE_ALL);
	switch (r->kind) {
	case RESULT_KIND_RUN: content_results_run(&c); break;
	case RESULT_KIND_RAMP: content_results_ramp(&c); break;
	case RESULT_KIND_COMPARE: content_results_compare(&c); break;
	}
	page_audience(d, ramp ? PAGE_REPORT : PAGE_ALL);
	content_cost(&c);
	page_audience(d, PAGE_ALL);
	content_meaning(&c);
	content_next(&c);
	return d->oom ? -ENOMEM : 0;
}
