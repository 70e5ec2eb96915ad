/* pacer — figures per request name in the JSON result and the terminal. */
#include "doc/names.h"

#include <string.h>

#include "doc/json_parts.h"
#include "doc/keys.h"
#include "doc/rules.h"
#include "util/text.h"
#include "util/units.h"

uint32_t report_name_count(const struct phase_stats *p, const struct req_names *names)
{
	if (!names || !names->n)
		return 0;
	if (names->n == 1)
		return 1;
	if (!p->name)
		return 0;
	/* a script's sessions count in room for every name they may meet
	 * (RESULT_MAX_NAMES + 1), the names they met first */
	return p->n_names == names->n || (p->sessions.on && p->n_names > names->n) ? names->n : 0;
}

void report_name_figures(const struct phase_stats *p, const struct req_names *names, uint32_t i,
			 struct name_figures *out)
{
	memset(out, 0, sizeof *out);
	out->name = names->name[i];
	out->other = names->other && i == names->n - 1;
	out->pooled = out->other ? names->pooled : 0;
	if (names->n == 1) {
		/* one name: the phase's own figures, in its full-precision histogram */
		struct success_figures s;
		report_success(p, &s);
		out->sent = p->sent;
		out->completed = p->completed;
		out->transport_errors = phase_stats_request_errors(p);
		out->ok = s.ok;
		out->latency = &p->timing[TIM_LATENCY];
	} else {
		const struct name_stats *ns = &p->name[i];
		out->sent = ns->completed + ns->errors + ns->in_flight_at_end;
		out->completed = ns->completed;
		out->transport_errors = ns->errors;
		out->ok = ns->ok < ns->completed ? ns->ok : ns->completed;
		out->latency = &ns->latency;
	}
	out->failed = out->completed - out->ok;
	out->errors = out->failed + out->transport_errors;
	/* over the requests sent, as the phase's errors (phase_stats_error_pct) */
	out->error_pct = out->sent ? 100.0 * (double)out->errors / (double)out->sent : 0;
}

static void rj_name_latency(struct jsonw *j, const struct hist *h)
{
	static const struct {
		const char *key;
		double p;
	} pcts[] = {{KEY_P50_US, 50}, {KEY_P90_US, 90}, {KEY_P99_US, 99}, {KEY_P99_9_US, 99.9}};
	jw_obj(j);
	jw_key(j, KEY_COUNT);
	jw_u64(j, h->total);
	for (size_t i = 0; i < sizeof pcts / sizeof pcts[0]; i++) {
		jw_key(j, pcts[i].key);
		jw_dbl(j, (double)hist_percentile(h, pcts[i].p) / 1e3, 3);
	}
	jw_key(j, KEY_MAX_US);
	jw_dbl(j, h->total ? (double)h->max / 1e3 : 0, 3);
	jw_key(j, KEY_MEAN_US);
	jw_dbl(j, hist_mean(h) / 1e3, 3);
	jw_key(j, KEY_SUB_BITS); /* precision: relative error below 2^-(sub_bits - 1) */
	jw_u64(j, h->sub_bits);
	rj_hist_buckets(j, h); /* the buckets, so that segments merge exactly (pacer merge) */
	jw_obj_end(j);
}

void rj_by_name(struct jsonw *j, const struct phase_stats *p, const struct req_names *names)
{
	uint32_t n = report_name_count(p, names);
	if (!n)
		return;
	jw_key(j, KEY_BY_NAME);
	jw_arr(j);
	for (uint32_t i = 0; i < n; i++) {
		struct name_figures f;
		report_name_figures(p, names, i, &f);
		int saved = j->indent;
		jw_obj(j);
		j->indent = 0; /* one line per name */
		jw_key(j, KEY_NAME);
		jw_str(j, f.name);
		if (f.other) {
			jw_key(j, KEY_OTHER);
			jw_bool(j, true);
			jw_key(j, KEY_POOLED_NAMES);
			jw_u64(j, f.pooled);
		}
		jw_key(j, KEY_SENT);
		jw_u64(j, f.sent);
		jw_key(j, KEY_COMPLETED);
		jw_u64(j, f.completed);
		jw_key(j, KEY_OK);
		jw_u64(j, f.ok);
		jw_key(j, KEY_FAILED);
		jw_u64(j, f.failed);
		jw_key(j, KEY_TRANSPORT_ERRORS);
		jw_u64(j, f.transport_errors);
		jw_key(j, KEY_ERRORS);
		jw_u64(j, f.errors);
		jw_key(j, KEY_ERROR_PCT);
		jw_dbl(j, f.error_pct, 4);
		jw_key(j, KEY_LATENCY);
		rj_name_latency(j, f.latency);
		jw_obj_end(j);
		j->indent = saved;
	}
	jw_arr_end(j);
}

void rj_sessions(struct jsonw *j, const struct phase_stats *p)
{
	const struct session_stats *s = &p->sessions;
	if (!s->on)
		return;
	jw_key(j, KEY_SESSIONS);
	jw_obj(j);
	jw_key(j, KEY_STARTED);
	jw_u64(j, s->started);
	jw_key(j, KEY_COMPLETED);
	jw_u64(j, s->completed);
	jw_key(j, KEY_FAILED);
	jw_u64(j, s->failed);
	jw_key(j, KEY_ABANDONED);
	jw_u64(j, s->abandoned);
	jw_key(j, KEY_DROPPED);
	jw_u64(j, s->dropped);
	jw_key(j, KEY_STEPS);
	jw_u64(j, s->steps);
	jw_key(j, KEY_COMPLETED_PCT); /* of those started */
	jw_dbl(j, s->started ? 100.0 * (double)s->completed / (double)s->started : 0, 4);
	jw_key(j, KEY_DURATION);
	rj_name_latency(j, &s->duration);
	jw_obj_end(j);
}

/* Display columns of a UTF-8 string: one per code point. */
static size_t u8_width(const char *s)
{
	size_t w = 0;
	for (; *s; s++)
		if (((unsigned char)*s & 0xc0) != 0x80)
			w++;
	return w;
}

#define NAME_COL_MAX 40

/* s cut to at most `cols` display columns ("..." ending a cut one), padded
 * with spaces to `cols`, into out[cap]. */
static const char *name_cell(char *out, size_t cap, const char *s, size_t cols)
{
	size_t w = u8_width(s), n = strlen(s);
	if (w > cols) {
		size_t keep = cols > 3 ? cols - 3 : 0, k = 0, c = 0;
		for (; k < n; k++) { /* up to the first byte of code point keep + 1 */
			if (((unsigned char)s[k] & 0xc0) == 0x80)
				continue;
			if (c == keep)
				break;
			c++;
		}
		snprintf(out, cap, "%.*s...", (int)k, s);
		return out;
	}
	snprintf(out, cap, "%s%*s", s, (int)(cols - w), "");
	return out;
}

void report_text_by_name(FILE *f, const struct phase_stats *p, const struct req_names *names)
{
	uint32_t n = report_name_count(p, names);
	if (!n)
		return;
	size_t cols = 8;
	char label[RESULT_MAX_NAMES + 1][NAME_COL_MAX * 4 + 48];
	for (uint32_t i = 0; i < n; i++) {
		struct name_figures fg;
		report_name_figures(p, names, i, &fg);
		if (fg.other)
			snprintf(label[i], sizeof label[i], "other (%llu name%s)",
				 (unsigned long long)fg.pooled, fg.pooled == 1 ? "" : "s");
		else
			snprintf(label[i], sizeof label[i], "%.*s", NAME_COL_MAX * 4, fg.name);
		size_t w = u8_width(label[i]);
		if (w > cols)
			cols = w;
	}
	if (cols > NAME_COL_MAX)
		cols = NAME_COL_MAX;
	char cell[NAME_COL_MAX * 4 + 8];
	fprintf(f, "\n  %s %10s %10s %9s %8s %9s %9s %9s %9s %9s\n",
		name_cell(cell, sizeof cell, "by name", cols), "sent", "completed", "errors", "err%",
		"p50", "p90", "p99", "p99.9", "max");
	static const double pcts[] = {50, 90, 99, 99.9};
	for (uint32_t i = 0; i < n; i++) {
		struct name_figures fg;
		report_name_figures(p, names, i, &fg);
		char a[32], b[32], c[32], d[32];
		fprintf(f, "  %s %10s %10s %9s %7.2f%%", name_cell(cell, sizeof cell, label[i], cols),
			units_fmt_thousands(a, sizeof a, (double)fg.sent, 0),
			units_fmt_thousands(b, sizeof b, (double)fg.completed, 0),
			units_fmt_thousands(c, sizeof c, (double)fg.errors, 0), fg.error_pct);
		const struct hist *h = fg.latency;
		for (size_t k = 0; k < sizeof pcts / sizeof pcts[0] + 1; k++) {
			const char *v = "-";
			if (h->total)
				v = units_fmt_duration(d, sizeof d,
						       k < sizeof pcts / sizeof pcts[0]
							       ? (double)hist_percentile(h, pcts[k])
							       : (double)h->max);
			fprintf(f, " %*s", text_field(v, 9), v);
		}
		fprintf(f, "\n");
	}
	if (n > 1)
		fprintf(f, "  (per-name latency: relative error < %.1f%%; errors: failed responses + "
			   "transport errors)\n",
			100.0 / (double)(1u << (NAME_SUB_BITS - 1)));
}
