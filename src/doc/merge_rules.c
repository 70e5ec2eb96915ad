/* pacer — merge: the rule of every field of a segment result (see merge.h:
 * merge_rules). A field with no rule is refused before anything is
 * merged, so a field added to results later cannot be dropped or taken
 * from one segment unnoticed: it needs a rule here, and the merge code the
 * rule names. tests/integration/test_distributed.py walks the JSON schema
 * and real merged results against this table. */
#include "doc/keys.h"
#include "doc/merge.h"
#include "doc/merge_int.h"

#include <stdio.h>
#include <string.h>

#include "util/err.h"
#include "util/text.h"

/* Paths: ".key" per object level, "[]" per array level, "*" for any one
 * key; "@phase" stands for ".measure", ".warmup" and ".steps[].measure",
 * "@series" for ".series" and ".steps[].series", "@outcomes" for
 * "@phase.outcomes" and ".steps[].outcomes", "@genres" for every
 * generator_resources. A rule with `sub` covers everything under it. */
static const struct merge_rule rules[] = {
	/* the document */
	{".schema_version", MERGE_SAME, false, NULL},
	{".kind", MERGE_SAME, false, NULL},
	{".mode", MERGE_SAME, false, NULL},
	{".plan", MERGE_SAME, true,
	 "but for plan.segment (its index null), plan.argv and, self-contained, plan.url and "
	 "plan.workload (each segment's own port)"},
	{".scenario", MERGE_FIRST, false, "the scenario file's name"},
	{".pacer", MERGE_EACH, true, NULL},
	{".environment", MERGE_EACH, true, NULL},
	{".started_at", MERGE_MIN, false, "the earliest"},
	{".interrupted", MERGE_ANY, false, NULL},
	{".warnings", MERGE_WARNINGS, true, NULL},
	{".clock", MERGE_SEGMENT, true,
	 "merged.start_skew_ms, merged.late and the warnings say how the starts differed"},
	{".cost", MERGE_SEGMENT, true, "the cost of one segment's target share"},
	{".target_resources", MERGE_SEGMENT, true, "the segments may have probed one target"},
	{".repetitions", MERGE_SEGMENT, true, "--repeat's measurements, each segment's own"},
	{".repeat_summary", MERGE_SEGMENT, true, NULL},
	{".generator_limited", MERGE_FLAGGED, true, NULL},
	{".target_cores", MERGE_FIRST, true, "the one target's cores, as segment 0 knew them"},
	{".slo", MERGE_JUDGED, true, "pacer run --slo: the merged measured phase judged"},
	{".generator_resources", MERGE_REFUSE, true,
	 "a result of a pacer from before 2026-12 (generator_resources beside the phase)"},
	{".segments", MERGE_REFUSE, true, "a merged result is not merged again"},
	{".merged", MERGE_REFUSE, true, "a merged result is not merged again"},
	/* self-contained: each segment's embedded target */
	{".target.plan", MERGE_SAME, false, NULL},
	{".target.shares_process_with_driver", MERGE_SAME, false, NULL},
	{".target.threads", MERGE_SUM, false, NULL},
	{".target.cpu_s", MERGE_SUM, false, NULL},
	{".target.cpu_ms_per_request", MERGE_DERIVED, false, "target.cpu_s per response"},
	/* the generators */
	{".generator.threads", MERGE_SUM, false, NULL},
	{".generator.cpu_s", MERGE_SUM, false, NULL},
	{".generator.cpu_us_per_response", MERGE_DERIVED, false, "generator.cpu_s per response"},
	{".generator.busiest_thread_cpu_pct", MERGE_MAX, false, NULL},
	{".generator.thread_cpu_s", MERGE_CONCAT, true, NULL},
	{".generator.steal_pct", MERGE_WORST, false, NULL},
	{".generator.machine_steal_pct", MERGE_WORST, false, NULL},
	{".generator.floor", MERGE_WORST, true,
	 "the floor of the segment with the highest wake_p99_us (the machine that let pacer "
	 "promise least); each segment's own under segments[]"},
	{".generator.pacing", MERGE_WORST, true,
	 "the least precise segment's (the highest send_lag_p99_pct_of_p50); each segment's own "
	 "under segments[]"},
	{".generator.realtime.requested", MERGE_SAME, false, NULL},
	{".generator.realtime.granted", MERGE_ALL, false, NULL},
	{".generator.realtime.refused", MERGE_FIRST, false, "the first refusal among the segments"},
	/* where the requests went */
	{".connected", MERGE_UNION, true,
	 "every address the segments' requests went to, each once; none when a segment did not "
	 "record it"},
	/* a phase */
	{"@phase.duration_s", MERGE_MAX, false, "the longest segment's"},
	{"@phase.requests", MERGE_SUM, true, NULL},
	{"@phase.responses", MERGE_SUM, true, NULL},
	{"@phase.errors.total", MERGE_SUM, false, NULL},
	{"@phase.errors.failed_responses", MERGE_SUM, false, NULL},
	{"@phase.errors.transport", MERGE_SUM, false, NULL},
	{"@phase.errors.by_status", MERGE_SUM, true, NULL},
	{"@phase.errors.pct", MERGE_DERIVED, false, "errors.total per request sent"},
	{"@phase.error_pct", MERGE_DERIVED, false, "errors.total per request sent"},
	{"@phase.transport_errors", MERGE_SUM, true, NULL},
	{"@phase.connect_failures", MERGE_SUM, true, NULL},
	{"@phase.connections", MERGE_SUM, true, NULL},
	{"@phase.bytes", MERGE_SUM, true, NULL},
	{"@phase.server_time_missing", MERGE_SUM, false, NULL},
	{"@phase.rate.offered_per_s", MERGE_SUM, false, "the segments' shares of the plan's rate"},
	{"@phase.rate.achieved_per_s", MERGE_DERIVED, false, "completed per duration_s"},
	{"@phase.success.ok", MERGE_SUM, false, NULL},
	{"@phase.success.failed", MERGE_SUM, false, NULL},
	{"@phase.success.of", MERGE_SUM, false, NULL},
	{"@phase.success.ok_pct", MERGE_DERIVED, false, NULL},
	{"@phase.success.rule", MERGE_SAME, false, NULL},
	{"@phase.latency", MERGE_HIST, true, NULL},
	{"@phase.latency_ok", MERGE_HIST, true, NULL},
	{"@phase.latency_failed", MERGE_HIST, true, NULL},
	{"@phase.service_time", MERGE_HIST, true, NULL},
	{"@phase.ttfb", MERGE_HIST, true, NULL},
	{"@phase.connect_time", MERGE_HIST, true, NULL},
	{"@phase.handshake", MERGE_HIST, true, NULL},
	{"@phase.send_lag", MERGE_HIST, true, NULL},
	{"@phase.loop_lag", MERGE_HIST, true, NULL},
	{"@phase.latency_lagged", MERGE_HIST, true, NULL},
	{"@phase.server_time", MERGE_HIST, true, NULL},
	{"@phase.target_resources", MERGE_SEGMENT, true, "the segments may have probed one target"},
	/* a script's sessions (pacer.session) */
	{"@phase.sessions.started", MERGE_SUM, false, NULL},
	{"@phase.sessions.completed", MERGE_SUM, false, NULL},
	{"@phase.sessions.failed", MERGE_SUM, false, NULL},
	{"@phase.sessions.abandoned", MERGE_SUM, false, NULL},
	{"@phase.sessions.dropped", MERGE_SUM, false, NULL},
	{"@phase.sessions.steps", MERGE_SUM, false, NULL},
	{"@phase.sessions.completed_pct", MERGE_DERIVED, false, "completed per started"},
	{"@phase.sessions.duration", MERGE_HIST, true, NULL},
	{"@phase.by_name[].name", MERGE_KEY, false, NULL},
	{"@phase.by_name[].sent", MERGE_SUM, false, NULL},
	{"@phase.by_name[].completed", MERGE_SUM, false, NULL},
	{"@phase.by_name[].ok", MERGE_SUM, false, NULL},
	{"@phase.by_name[].failed", MERGE_SUM, false, NULL},
	{"@phase.by_name[].errors", MERGE_SUM, false, NULL},
	{"@phase.by_name[].transport_errors", MERGE_SUM, false, NULL},
	{"@phase.by_name[].error_pct", MERGE_DERIVED, false, NULL},
	{"@phase.by_name[].other", MERGE_SAME, false, "the row of the names beyond the first 64"},
	{"@phase.by_name[].pooled_names", MERGE_MAX, false,
	 "names pooled into the row: the table's, as each segment saw it"},
	{"@phase.by_name[].latency", MERGE_HIST, true, NULL},
	{"@phase.hosts[].host", MERGE_KEY, false, "rows by position: the table's hosts"},
	{"@phase.hosts[].port", MERGE_KEY, false, NULL},
	{"@phase.hosts[].unix_socket", MERGE_KEY, false, NULL},
	{"@phase.hosts[].protocol", MERGE_SAME, false, NULL},
	{"@phase.hosts[].completed", MERGE_SUM, false, NULL},
	{"@phase.hosts[].errors", MERGE_SUM, false, NULL},
	{"@phase.hosts[].connection_errors", MERGE_SUM, false, NULL},
	{"@phase.hosts[].connections_opened", MERGE_SUM, false, NULL},
	{"@phase.hosts[].connections_h1", MERGE_SUM, false, NULL},
	{"@phase.hosts[].connections_h2", MERGE_SUM, false, NULL},
	{"@phase.hosts[].streams_max", MERGE_MAX, false, NULL},
	{"@phase.hosts[].streams_mean", MERGE_MEAN, false, "weighted by completed"},
	{"@phase.http2.connections_h1", MERGE_SUM, false, NULL},
	{"@phase.http2.connections_h2", MERGE_SUM, false, NULL},
	{"@phase.http2.goaway", MERGE_SUM, false, NULL},
	{"@phase.http2.retried", MERGE_SUM, false, NULL},
	{"@phase.http2.refused", MERGE_SUM, false, NULL},
	{"@phase.http2.resets", MERGE_SUM, true, NULL},
	{"@phase.http2.streams_max", MERGE_MAX, false, NULL},
	{"@phase.http2.streams_mean", MERGE_MEAN, false, "weighted by requests.sent"},
	{"@phase.hosts[].connections_h3", MERGE_SUM, false, NULL},
	{"@phase.http3.connections_h3", MERGE_SUM, false, NULL},
	{"@phase.http3.goaway", MERGE_SUM, false, NULL},
	{"@phase.http3.retried", MERGE_SUM, false, NULL},
	{"@phase.http3.resets", MERGE_SUM, true, NULL},
	{"@phase.http3.streams_max", MERGE_MAX, false, NULL},
	{"@phase.http3.streams_mean", MERGE_MEAN, false, "weighted by requests.sent"},
	{"@phase.http3.stream_credit_waits", MERGE_SUM, false, NULL},
	{"@phase.http3.flow_control_blocked", MERGE_SUM, false, NULL},
	{"@phase.quic.handshakes", MERGE_SUM, false, NULL},
	{"@phase.quic.packets_sent", MERGE_SUM, false, NULL},
	{"@phase.quic.packets_received", MERGE_SUM, false, NULL},
	{"@phase.quic.packets_lost", MERGE_SUM, false, NULL},
	{"@phase.quic.congestion_events", MERGE_SUM, false, NULL},
	{"@phase.quic.probe_timeouts", MERGE_SUM, false, NULL},
	{"@phase.quic.cwnd_stalls", MERGE_SUM, false, NULL},
	{"@phase.quic.datagrams_dropped_tx", MERGE_SUM, false, NULL},
	{"@phase.quic.datagrams_dropped_rx", MERGE_SUM, false, NULL},
	{"@phase.quic.closes", MERGE_SUM, true, NULL},
	{"@phase.quic.smoothed_rtt.connections", MERGE_SUM, false, NULL},
	{"@phase.quic.smoothed_rtt.mean_us", MERGE_MEAN, false,
	 "weighted by smoothed_rtt.connections"},
	{"@phase.quic.smoothed_rtt.max_us", MERGE_MAX, false, NULL},
	{"@phase.quic.gso", MERGE_ANY, false, NULL},
	{"@phase.quic.gro", MERGE_ANY, false, NULL},
	{"@phase.tls.handshakes", MERGE_SUM, false, NULL},
	{"@phase.tls.failed", MERGE_SUM, false, NULL},
	{"@phase.tls.resumed", MERGE_SUM, false, NULL},
	{"@phase.tls.version", MERGE_FIRST, false, "the first segment's that negotiated one"},
	{"@phase.tls.cipher", MERGE_FIRST, false, "the first segment's that negotiated one"},
	{"@phase.tls.failure_reasons", MERGE_UNION, true, "the distinct reasons, at most 4"},
	{"@phase.generator_resources", MERGE_REFUSE, true,
	 "a result of a pacer from before 2026-12"},
	{"@outcomes[].name", MERGE_KEY, false, "rows by position: the plan's outcomes"},
	{"@outcomes[].rule", MERGE_SAME, false, NULL},
	{"@outcomes[].count", MERGE_SUM, false, NULL},
	{"@outcomes[].of", MERGE_SUM, false, NULL},
	{"@outcomes[].rate_pct", MERGE_DERIVED, false, NULL},
	/* a second of a series */
	{"@series[].t_s", MERGE_DERIVED, false,
	 "the wall-clock second after the earliest segment's measured phase began"},
	{"@series[].completed", MERGE_SUM, false, "at the same wall-clock second"},
	{"@series[].errors", MERGE_SUM, false, "at the same wall-clock second"},
	{"@series[].transport_errors", MERGE_SUM, false, "at the same wall-clock second"},
	{"@series[].dropped", MERGE_SUM, false, "at the same wall-clock second"},
	{"@series[].unsent", MERGE_SUM, false, "the backlogs at the same wall-clock second"},
	{"@series[].by_class", MERGE_SUM, true, "at the same wall-clock second"},
	{"@series[].connect_failures", MERGE_SUM, true, "at the same wall-clock second"},
	{"@series[].quic", MERGE_SUM, true, "at the same wall-clock second"},
	{"@series[].hist", MERGE_HIST, true, "at the same wall-clock second"},
	{"@series[].p50_us", MERGE_DERIVED, false, "from the second's merged histogram"},
	{"@series[].p99_us", MERGE_DERIVED, false, "from the second's merged histogram"},
	/* a ramp */
	{".highest_passing", MERGE_JUDGED, true, NULL},
	{".knee_per_s", MERGE_JUDGED, false, NULL},
	{".reached_require", MERGE_JUDGED, false, NULL},
	{".inconclusive_steps", MERGE_JUDGED, false, NULL},
	{".steps[].attempt", MERGE_SAME, false, "1: a segment measures each planned step once"},
	{".steps[].retried", MERGE_SAME, false, "false: a segment does not measure a step again"},
	{".steps[].offered_per_s", MERGE_SAME, false, NULL},
	{".steps[].refine", MERGE_SAME, false, NULL},
	{".steps[].achieved_per_s", MERGE_DERIVED, false, NULL},
	{".steps[].error_pct", MERGE_DERIVED, false, NULL},
	{".steps[].success_pct", MERGE_DERIVED, false, NULL},
	{".steps[].drop_pct", MERGE_DERIVED, false, NULL},
	{".steps[].verdict", MERGE_JUDGED, true, NULL},
	{".steps[].interrupted", MERGE_ANY, false, NULL},
	{".steps[].generator_cpu_s", MERGE_SUM, false, NULL},
	{".steps[].steal_pct", MERGE_WORST, false, NULL},
	{".steps[].warmup_completed", MERGE_SUM, false, NULL},
	{".steps[].warmup.duration_s", MERGE_MAX, false, NULL},
	{".steps[].warmup.requests", MERGE_SUM, true, NULL},
	{".steps[].warmup.connections", MERGE_SUM, true, NULL},
	{".steps[].warmup.errors", MERGE_SUM, false, NULL},
	{".steps[].warmup.achieved_per_s", MERGE_DERIVED, false, NULL},
	{".steps[].warmup.p50_us", MERGE_MAX, false, "a warm-up keeps no histogram: the highest"},
	{".steps[].warmup.p99_us", MERGE_MAX, false, "a warm-up keeps no histogram: the highest"},
	{".steps[].warmup.max_us", MERGE_MAX, false, NULL},
	{".steps[].generator_limited", MERGE_FLAGGED, true, NULL},
	{".steps[].generator_resources", MERGE_REFUSE, true,
	 "a result of a pacer from before 2026-12"},
	{".steps[].target_cpu_ms_per_request", MERGE_SEGMENT, false,
	 "each segment's target; under segments[].steps[]"},
	{".steps[].target_resources", MERGE_SEGMENT, true, "under segments[].steps[]"},
	{".steps[].cost", MERGE_SEGMENT, true, "under segments[].steps[]"},
	{".steps[].repetitions", MERGE_SEGMENT, true, "under segments[].steps[]"},
	{".steps[].repeat_summary", MERGE_SEGMENT, true, "under segments[].steps[]"},
};

const struct merge_rule *merge_rules(size_t *n)
{
	*n = sizeof rules / sizeof rules[0];
	return rules;
}

const char *merge_rule_name(enum merge_rule_kind k)
{
	switch (k) {
	case MERGE_SAME: return "same";
	case MERGE_FIRST: return "first";
	case MERGE_EACH: return "each";
	case MERGE_SUM: return "sum";
	case MERGE_MAX: return "max";
	case MERGE_MIN: return "min";
	case MERGE_ANY: return "any";
	case MERGE_ALL: return "all";
	case MERGE_MEAN: return "mean";
	case MERGE_HIST: return "histogram";
	case MERGE_DERIVED: return "derived";
	case MERGE_JUDGED: return "judged";
	case MERGE_KEY: return "key";
	case MERGE_CONCAT: return "concat";
	case MERGE_UNION: return "union";
	case MERGE_WORST: return "worst";
	case MERGE_FLAGGED: return "flagged";
	case MERGE_WARNINGS: return "warnings";
	case MERGE_SEGMENT: return "segment";
	case MERGE_REFUSE: return "refuse";
	}
	return "?";
}

/* path with its alias prefix replaced (into out[cap]). */
static void normalize(const char *path, char *out, size_t cap)
{
	static const struct {
		const char *from, *to;
	} alias[] = {
		{".steps[].measure.outcomes", "@outcomes"},
		{".measure.outcomes", "@outcomes"},
		{".warmup.outcomes", "@outcomes"},
		{".steps[].outcomes", "@outcomes"},
		{".steps[].measure", "@phase"},
		{".measure", "@phase"},
		{".warmup", "@phase"},
		{".steps[].series", "@series"},
		{".series", "@series"},
	};
	for (size_t i = 0; i < sizeof alias / sizeof alias[0]; i++) {
		size_t l = strlen(alias[i].from);
		if (!strncmp(path, alias[i].from, l) &&
		    (path[l] == '\0' || path[l] == '.' || path[l] == '[')) {
			snprintf(out, cap, "%s%s", alias[i].to, path + l);
			return;
		}
	}
	snprintf(out, cap, "%s", path);
}

/* Whether pattern p matches path q up to p's end: exactly (whole), or q
 * continues below it (prefix). '*' matches one key. */
static bool match(const char *p, const char *q, bool *whole)
{
	while (*p) {
		if (*p == '*') {
			p++;
			while (*q && *q != '.' && *q != '[')
				q++;
			continue;
		}
		if (*p != *q)
			return false;
		p++;
		q++;
	}
	*whole = *q == '\0';
	return *whole || *q == '.' || *q == '[';
}

const struct merge_rule *merge_rule_for(const char *path, bool *below)
{
	char n[512];
	normalize(path, n, sizeof n);
	*below = false;
	const struct merge_rule *found = NULL;
	for (size_t i = 0; i < sizeof rules / sizeof rules[0]; i++) {
		bool whole;
		if (!match(rules[i].path, n, &whole))
			continue;
		if (whole || rules[i].sub)
			found = &rules[i];
	}
	if (found)
		return found;
	/* a container of fields that have rules: a pattern's leading part
	 * matches the whole path and goes on below it */
	for (size_t i = 0; i < sizeof rules / sizeof rules[0]; i++) {
		const char *p = rules[i].path, *q = n;
		bool ok = true;
		while (*q && *p && ok) {
			if (*p == '*') {
				p++;
				while (*q && *q != '.' && *q != '[')
					q++;
			} else {
				ok = *p++ == *q++;
			}
		}
		if (ok && !*q && (*p == '.' || *p == '[')) {
			*below = true;
			break;
		}
	}
	return NULL;
}

/* ---- the check of the inputs ------------------------------------------------ */

/* Whether a and b are the same value (numbers by value). */
static bool same_value(const json_t *a, const json_t *b)
{
	if (json_is_number(a) && json_is_number(b))
		return json_number_value(a) == json_number_value(b);
	return json_equal((json_t *)a, (json_t *)b);
}

/* The row of ref's array matching v: by name in a by_name list, else the
 * i-th. */
static const json_t *ref_row(const json_t *ref, const json_t *v, size_t i, const char *path,
			     size_t at)
{
	if (!json_is_array(ref))
		return NULL;
	if (at >= 8 && !strcmp(path + at - 8, ".by_name")) {
		const char *name = json_string_value(json_object_get(v, KEY_NAME));
		for (size_t k = 0; name && k < json_array_size(ref); k++) {
			const char *rn = json_string_value(
				json_object_get(json_array_get(ref, k), KEY_NAME));
			if (rn && !strcmp(rn, name))
				return json_array_get(ref, k);
		}
		return NULL;
	}
	return json_array_get(ref, i);
}

struct walk {
	const char *file, *ref_file;
	char *err;
	size_t errlen;
	char shown[512]; /* the field's JSON path with each element's index, for messages */
};

/* Append ".k" (k non-NULL) or "[i]" to w->shown; its old length. */
static size_t shown_push(struct walk *w, const char *k, size_t i)
{
	size_t at = strlen(w->shown);
	if (k)
		snprintf(w->shown + at, sizeof w->shown - at, ".%s", k);
	else
		snprintf(w->shown + at, sizeof w->shown - at, "[%zu]", i);
	return at;
}

/* The fields summed that are quantities (seconds, a rate), not counts. */
static bool sum_of_reals(const struct merge_rule *r)
{
	static const char *const reals[] = {".target.cpu_s", ".generator.cpu_s",
					    ".steps[].generator_cpu_s", "@phase.rate.offered_per_s"};
	for (size_t i = 0; i < sizeof reals / sizeof reals[0]; i++)
		if (!strcmp(r->path, reals[i]))
			return true;
	return false;
}

/* The numbers a rule reads: a count summed is a whole number from 0 to
 * MERGE_COUNT_MAX; a quantity summed (sum_of_reals), compared (max, min, mean,
 * worst) or a timing's (histogram) a number from 0 to it, and a timing's
 * count and histogram entries whole. A value of the wrong type that the
 * merge would skip (a string "200", 200.5 as a count) is refused, not
 * dropped; null is "none". Containers under the rule are walked. 0,
 * PACER_EPARSE (the type) or PACER_ERANGE (the range) with one line naming
 * the file and the path. */
static int check_numbers(struct walk *w, const struct merge_rule *r, const json_t *v, bool whole)
{
	if (json_is_object(v) || json_is_array(v)) {
		if (!r->sub)
			return 0; /* a container of ruled fields: walked by check_node */
		const char *k;
		const json_t *x;
		size_t i;
		if (json_is_object(v)) {
			json_object_foreach((json_t *)v, k, x) {
				size_t at = shown_push(w, k, 0);
				/* a timing's count and histogram are whole numbers */
				bool wh = whole || !strcmp(k, KEY_COUNT) || !strcmp(k, KEY_COUNTS) ||
					  !strcmp(k, KEY_SUB_BITS) || !strcmp(k, KEY_MAX_VALUE);
				int rc = check_numbers(w, r, x, r->kind == MERGE_HIST ? wh : whole);
				w->shown[at] = '\0';
				if (rc)
					return rc;
			}
		} else {
			json_array_foreach(v, i, x) {
				size_t at = shown_push(w, NULL, i);
				int rc = check_numbers(w, r, x, whole);
				w->shown[at] = '\0';
				if (rc)
					return rc;
			}
		}
		return 0;
	}
	bool count = false, number = false;
	switch (r->kind) {
	case MERGE_SUM:
		count = !sum_of_reals(r);
		number = true;
		break;
	case MERGE_HIST:
		count = whole;
		break;
	case MERGE_MAX:
	case MERGE_MEAN:
		number = !r->sub; /* a leaf a rule compares: a number */
		break;
	case MERGE_MIN:
	case MERGE_WORST:
		break; /* a number when it is one (started_at is a text) */
	default:
		return 0;
	}
	if (json_is_null(v))
		return 0;
	if (json_is_number(v)) {
		double d = json_number_value(v);
		if (count && !json_is_integer(v)) {
			text_errf(w->err, w->errlen, "%s: %s: %.15g is not a count (a whole number)",
				  w->file, w->shown + 1, d);
			return PACER_EPARSE;
		}
		bool in_range = json_is_integer(v)
					? json_integer_value(v) >= 0 &&
						  (uint64_t)json_integer_value(v) <= MERGE_COUNT_MAX
					: d >= 0 && d <= (double)MERGE_COUNT_MAX;
		if (!in_range) {
			if (json_is_integer(v))
				text_errf(w->err, w->errlen, "%s: %s: %lld is out of range (0 to 2^53 - 1)",
					  w->file, w->shown + 1, (long long)json_integer_value(v));
			else
				text_errf(w->err, w->errlen, "%s: %s: %.15g is out of range (0 to 2^53 - 1)",
					  w->file, w->shown + 1, d);
			return PACER_ERANGE;
		}
		return 0;
	}
	if (count || number) {
		text_errf(w->err, w->errlen, "%s: %s: not a %s (%s)", w->file, w->shown + 1,
			  count ? "count" : "number",
			  json_is_string(v) ? "a string" : json_is_boolean(v) ? "a boolean" : "?");
		return PACER_EPARSE;
	}
	return 0;
}

/* v (at path[0..at)) and everything under it has a rule that does not
 * refuse it; a MERGE_SAME field equals ref's, the same field of segment 0
 * (NULL: none, or v is segment 0's); the numbers the rules read are in
 * range (check_numbers). */
static int check_node(struct walk *w, const json_t *v, const json_t *ref, char *path,
		      size_t at, size_t cap)
{
	bool below;
	const struct merge_rule *r = at ? merge_rule_for(path, &below) : NULL;
	if (at && !r && !below) {
		text_errf(w->err, w->errlen, "%s: %s: a field pacer merge has no rule for (a result "
					     "of a newer pacer?): refused rather than dropped",
			  w->file, path + 1);
		return PACER_EUNSUPPORTED;
	}
	if (r && r->kind == MERGE_REFUSE && !json_is_null(v)) {
		text_errf(w->err, w->errlen, "%s: %s: not merged: %s", w->file, path + 1, r->note);
		return PACER_EUNSUPPORTED;
	}
	/* plan: merge_check_inputs compares it, with its exceptions */
	if (r && r->kind == MERGE_SAME && ref && strcmp(path, ".plan") && !same_value(v, ref)) {
		text_errf(w->err, w->errlen, "%s and %s differ in %s: not segments of one plan",
			  w->ref_file, w->file, path + 1);
		return PACER_EUNSUPPORTED;
	}
	if (r) {
		int rc = check_numbers(w, r, v, false);
		if (rc)
			return rc;
	}
	if (r && r->sub)
		return 0;
	if (json_is_object(v)) {
		const char *k;
		const json_t *x;
		json_object_foreach((json_t *)v, k, x) {
			int n = snprintf(path + at, cap - at, ".%s", k);
			if (n < 0 || (size_t)n >= cap - at) {
				text_errf(w->err, w->errlen, "%s: a field's path over %zu bytes", w->file,
					  cap);
				return PACER_EPARSE;
			}
			size_t sat = shown_push(w, k, 0);
			int rc = check_node(w, x, ref ? json_object_get(ref, k) : NULL, path,
					    at + (size_t)n, cap);
			path[at] = '\0';
			w->shown[sat] = '\0';
			if (rc)
				return rc;
		}
	} else if (json_is_array(v)) {
		if (at + 3 >= cap)
			return PACER_EPARSE;
		for (size_t i = 0; i < json_array_size(v); i++) {
			const json_t *x = json_array_get(v, i);
			const json_t *rx = ref ? ref_row(ref, x, i, path, at) : NULL;
			memcpy(path + at, "[]", 3);
			size_t sat = shown_push(w, NULL, i);
			int rc = check_node(w, x, rx, path, at + 2, cap);
			path[at] = '\0';
			w->shown[sat] = '\0';
			if (rc)
				return rc;
		}
	} else if (!r && !json_is_null(v)) {
		/* a value where a container of ruled fields belongs (null: none) */
		text_errf(w->err, w->errlen, "%s: %s: a value where pacer merge expects fields",
			  w->file, path + 1);
		return PACER_EPARSE;
	}
	return 0;
}

int merge_check_fields(const struct merge_input *in, size_t n, char *err, size_t errlen)
{
	char path[512] = "";
	for (size_t i = 0; i < n; i++) {
		struct walk w = {.file = in[i].name, .ref_file = in[0].name, .err = err,
				 .errlen = errlen, .shown = ""};
		int rc = check_node(&w, in[i].root, i ? in[0].root : NULL, path, 0, sizeof path);
		if (rc)
			return rc;
	}
	return 0;
}
