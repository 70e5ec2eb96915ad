/* pacer — the tables of one measured phase that run and ramp reports share
 * (see content_int.h): latency by timing, outcomes, request names, the
 * seconds of an outage. */
#include <math.h>
#include <stdio.h>

#include "doc/keys.h"
#include "report/content_int.h"

void content_latency_table(struct content_ctx *c, const json_t *ph)
{
	static const struct {
		const char *key;
		const char *open_label, *closed_label;
		bool open_only;
	} rows[] = {
		{"latency", "latency (from scheduled time)", "latency (from send)", false},
		{KEY_LATENCY_OK, "… of the requests that succeeded",
		 "… of the requests that succeeded", false},
		{KEY_LATENCY_FAILED, "… of the requests that failed",
		 "… of the requests that failed", false},
		{KEY_SERVICE_TIME, "service time (write to last byte)",
		 "service time (write to last byte)", false},
		{"ttfb", "time to first byte", "time to first byte", false},
		{KEY_SERVER_TIME, "server-reported time", "server-reported time", false},
		{KEY_SEND_LAG, "send lag (due to write)", "", true},
		{KEY_LOOP_LAG, "loop lag (generator lateness)", "", true},
		{KEY_CONNECT_TIME, "connect time (per connection)", "connect time (per connection)",
		 false},
		{"handshake", "TLS handshake (per connection)", "TLS handshake (per connection)",
		 false},
	};
	const char *hdr[9] = {"Timing", "p50", "p90", "p99", "p99.9", "p99.99", "max", "mean", "count"};
	page_table(c->d, 9, 0x1fe, hdr);
	for (size_t i = 0; i < N(rows); i++) {
		const json_t *t = rr_obj(ph, rows[i].key);
		if (!t || (rows[i].open_only && !c->open_loop))
			continue;
		double count = rr_num_or(t, KEY_COUNT, NAN);
		if (i > 0 && !(count > 0))
			continue;
		/* successes and failures apart only when there were failures */
		if ((i == 1 || i == 2) && !(rr_num_or(ph, "latency_failed.count", 0) > 0))
			continue;
		const char *label = c->open_loop ? rows[i].open_label : rows[i].closed_label;
		/* interrupted: the requests then unanswered are in the failed ones
		 * too, at their wait until the interrupt */
		double left = rr_num_or(ph, "requests.queued_at_end", 0) +
			      rr_num_or(ph, "requests.in_flight_at_end", 0);
		if (i == 2 && c->interrupted && left > 0)
			label = "… failed, or unanswered at the interrupt";
		const char *row[9] = {
			label,
			fmt_us(&c->f, rr_num_or(t, KEY_P50_US, NAN)),
			fmt_us(&c->f, rr_num_or(t, KEY_P90_US, NAN)),
			fmt_us(&c->f, rr_num_or(t, KEY_P99_US, NAN)),
			fmt_us(&c->f, rr_num_or(t, KEY_P99_9_US, NAN)),
			fmt_us(&c->f, rr_num_or(t, KEY_P99_99_US, NAN)),
			fmt_us(&c->f, rr_num_or(t, KEY_MAX_US, NAN)),
			fmt_us(&c->f, rr_num_or(t, KEY_MEAN_US, NAN)),
			fmt_int(&c->f, count),
		};
		page_row(c->d, row);
	}
}

void content_outcomes_table(struct content_ctx *c, const json_t *ph)
{
	const json_t *oc = rr_arr(ph, KEY_OUTCOMES);
	const json_t *succ = rr_obj(ph, KEY_SUCCESS);
	if (!oc && !succ)
		return;
	const char *hdr[5] = {"Outcome", "Rule", "Count", "Of", "Rate"};
	page_table(c->d, 5, 0x1c, hdr);
	if (succ) {
		const char *row[5] = {
			"success", rr_str(succ, KEY_RULE),
			fmt_int(&c->f, rr_num_or(succ, KEY_OK, NAN)),
			fmt_int(&c->f, rr_num_or(succ, KEY_OK, 0) + rr_num_or(succ, KEY_FAILED, 0)),
			fmt_pct(&c->f, rr_num_or(succ, KEY_OK_PCT, NAN))};
		page_row(c->d, row);
	}
	size_t i;
	const json_t *o;
	json_array_foreach(oc, i, o) {
		const char *row[5] = {rr_str(o, KEY_NAME), rr_str(o, KEY_RULE),
				      fmt_int(&c->f, rr_num_or(o, KEY_COUNT, NAN)),
				      fmt_int(&c->f, rr_num_or(o, KEY_OF, NAN)),
				      fmt_pct(&c->f, rr_num_or(o, KEY_RATE_PCT, NAN))};
		page_row(c->d, row);
	}
}

/* Per request name (a phase's "by_name"), when there is more than one. */
void content_by_name_table(struct content_ctx *c, const json_t *ph, bool heading)
{
	const json_t *bn = rr_arr(ph, KEY_BY_NAME);
	if (!bn || json_array_size(bn) < 2)
		return;
	if (heading)
		page_heading(c->d, 3, "by-name", "By request name");
	const char *hdr[10] = {"Name", "Sent", "Completed", "Errors", "Error rate",
			       "p50", "p90", "p99", "p99.9", "max"};
	page_table(c->d, 10, 0x3fe, hdr);
	size_t i;
	const json_t *e;
	double pooled = NAN, sub_bits = NAN;
	json_array_foreach(bn, i, e) {
		if (i >= RESULT_READ_MAX_NAMES)
			break;
		if (!json_is_object(e))
			continue;
		char label[300];
		const char *name = rr_str(e, KEY_NAME);
		if (rr_true(e, KEY_OTHER)) {
			pooled = rr_num_or(e, KEY_POOLED_NAMES, NAN);
			if (pooled >= 0)
				snprintf(label, sizeof label, "other (%s pooled %s)", fmt_int(&c->f, pooled),
					 plural(pooled, "name", "names"));
			else
				snprintf(label, sizeof label, "other (pooled)");
			name = label;
		}
		if (!isfinite(sub_bits))
			sub_bits = rr_num_or(e, "latency.sub_bits", NAN);
		const char *row[10] = {name ? name : "–",
				       fmt_int(&c->f, rr_num_or(e, KEY_SENT, NAN)),
				       fmt_int(&c->f, rr_num_or(e, KEY_COMPLETED, NAN)),
				       fmt_int(&c->f, rr_num_or(e, KEY_ERRORS, NAN)),
				       fmt_pct(&c->f, rr_num_or(e, KEY_ERROR_PCT, NAN)),
				       fmt_us(&c->f, rr_num_or(e, "latency.p50_us", NAN)),
				       fmt_us(&c->f, rr_num_or(e, "latency.p90_us", NAN)),
				       fmt_us(&c->f, rr_num_or(e, "latency.p99_us", NAN)),
				       fmt_us(&c->f, rr_num_or(e, "latency.p99_9_us", NAN)),
				       fmt_us(&c->f, rr_num_or(e, "latency.max_us", NAN))};
		page_row(c->d, row);
	}
	char prec[96] = "";
	if (sub_bits >= 2 && sub_bits <= RESULT_HIST_MAX_SUB_BITS)
		snprintf(prec, sizeof prec, " Per-name latency is kept to within %s.",
			 fmt_pct(&c->f, 100.0 / ldexp(1.0, (int)sub_bits - 1)));
	page_para(c->d, false,
		 "Errors per name are its responses that failed the success rule plus its "
		 "requests that failed on the connection (read, write, timeout, parse, closed); "
		 "the error rate is of the requests that ended.%s%s",
		 prec, isfinite(pooled) ? " Names beyond the first 64 are pooled as \"other\"." : "");
}

void content_sessions_table(struct content_ctx *c, const json_t *ph, bool heading)
{
	const json_t *s = rr_obj(ph, KEY_SESSIONS);
	if (!s)
		return;
	if (heading)
		page_heading(c->d, 3, "sessions", "Sessions");
	const char *hdr[11] = {"Started", "Completed", "Failed",      "Abandoned",
			       "Dropped", "Steps",     "Completed %", "Duration p50",
			       "p90",     "p99",       "max"};
	page_table(c->d, 11, 0x7ff, hdr);
	const json_t *d = rr_obj(s, KEY_DURATION);
	const char *row[11] = {fmt_int(&c->f, rr_num_or(s, KEY_STARTED, NAN)),
			       fmt_int(&c->f, rr_num_or(s, KEY_COMPLETED, NAN)),
			       fmt_int(&c->f, rr_num_or(s, KEY_FAILED, NAN)),
			       fmt_int(&c->f, rr_num_or(s, KEY_ABANDONED, NAN)),
			       fmt_int(&c->f, rr_num_or(s, KEY_DROPPED, NAN)),
			       fmt_int(&c->f, rr_num_or(s, KEY_STEPS, NAN)),
			       fmt_pct(&c->f, rr_num_or(s, KEY_COMPLETED_PCT, NAN)),
			       fmt_us(&c->f, rr_num_or(d, KEY_P50_US, NAN)),
			       fmt_us(&c->f, rr_num_or(d, KEY_P90_US, NAN)),
			       fmt_us(&c->f, rr_num_or(d, KEY_P99_US, NAN)),
			       fmt_us(&c->f, rr_num_or(d, KEY_MAX_US, NAN))};
	page_row(c->d, row);
	page_para(c->d, false,
		  "Each arrival started a session (docs/scripting.md); its steps are the "
		  "requests by name above, each timed from when it was due. A session's "
		  "duration runs from its arrival's due time to its end, think time included; "
		  "abandoned sessions were still under way when the drain ended.");
}

/* Connects that failed in one second (or phase), by cause. */
static double connect_fails_of(const json_t *o, char *causes, size_t cap)
{
	static const char *const keys[] = {"refused", "reset", "timeout", "other"};
	double sum = 0;
	size_t len = 0;
	causes[0] = '\0';
	for (size_t k = 0; k < N(keys); k++) {
		double v = rr_num_or(rr_obj(o, KEY_CONNECT_FAILURES), keys[k], 0);
		if (!(v > 0))
			continue;
		sum += v;
		int w = snprintf(causes + len, len < cap ? cap - len : 0, "%s%s %.0f",
				 len ? ", " : "", keys[k], v);
		if (w > 0 && len + (size_t)w < cap)
			len += (size_t)w;
	}
	return sum;
}

#define OUTAGE_ROWS_MAX 30

void content_outage_table(struct content_ctx *c, const json_t *series)
{
	size_t i, shown = 0, more = 0;
	const json_t *pt;
	bool any = false;
	char causes[128];
	json_array_foreach(series, i, pt)
		any = any || connect_fails_of(pt, causes, sizeof causes) > 0 ||
		      rr_num_or(pt, KEY_DROPPED, 0) > 0;
	if (!any)
		return;
	page_heading(c->d, 3, "outage", "Seconds with failed connects or unsent requests");
	page_para(c->d, false,
		 "Each second of the measured phase in which connects to the target failed, "
		 "requests were dropped, or requests due had not been sent by its end (they waited "
		 "for a connection), with the responses completed in it.");
	const char *hdr[6] = {"Second", "Completed", "Connects failed", "By cause",
			      "Unsent at its end", "Dropped"};
	page_table(c->d, 6, 0x37, hdr);
	json_array_foreach(series, i, pt) {
		double f = connect_fails_of(pt, causes, sizeof causes);
		double unsent = rr_num_or(pt, KEY_UNSENT, 0),
		       dropped = rr_num_or(pt, KEY_DROPPED, 0);
		if (!(f > 0 || unsent > 0 || dropped > 0))
			continue;
		if (shown == OUTAGE_ROWS_MAX) {
			more++;
			continue;
		}
		shown++;
		const char *row[6] = {fmt_int(&c->f, rr_num_or(pt, KEY_T_S, (double)i)),
				      fmt_int(&c->f, rr_num_or(pt, KEY_COMPLETED, NAN)),
				      fmt_int(&c->f, f),
				      causes[0] ? causes : "–",
				      fmt_int(&c->f, unsent),
				      fmt_int(&c->f, dropped)};
		page_row(c->d, row);
	}
	if (more)
		page_para(c->d, false,
			 "… and %zu more such seconds (the JSON series has them all).", more);
}
