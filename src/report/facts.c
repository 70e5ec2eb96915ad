/* pacer — small facts about a loaded result that several writers need. */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "doc/keys.h"
#include "report/render_int.h"
#include "util/units.h"

long report_focus_step(const json_t *root)
{
	size_t n = rr_len(root, KEY_STEPS);
	if (!n)
		return -1;
	double hp;
	if (rr_num(root, "highest_passing.step", &hp) && hp >= 1 && hp <= (double)n &&
	    hp == floor(hp))
		return (long)hp - 1;
	return (long)n - 1;
}

const char *report_step_label(const json_t *root, long i, char *out, size_t cap)
{
	const json_t *s = i >= 0 ? json_array_get(rr_arr(root, KEY_STEPS), (size_t)i) : NULL;
	snprintf(out, cap, "%s%ld", rr_true(s, KEY_REFINE) ? "r" : "", i + 1);
	return out;
}

bool report_slo_pct(const char *slo, struct slo_pct *out)
{
	if (!slo)
		return false;
	const char *p = slo;
	while (*p) {
		const char *end = strchr(p, ',');
		size_t n = end ? (size_t)(end - p) : strlen(p);
		char clause[96];
		if (n < sizeof clause) {
			memcpy(clause, p, n);
			clause[n] = '\0';
			/* trim */
			char *c = clause;
			while (isspace((unsigned char)*c))
				c++;
			size_t cl = strlen(c);
			while (cl && isspace((unsigned char)c[cl - 1]))
				c[--cl] = '\0';
			if (c[0] == 'p' && isdigit((unsigned char)c[1])) {
				char *q;
				double pct = strtod(c + 1, &q);
				while (isspace((unsigned char)*q))
					q++;
				if (*q == '<') {
					q++;
					if (*q == '=')
						q++;
					while (isspace((unsigned char)*q))
						q++;
					uint64_t ns;
					if (pct > 0 && pct < 100 && units_parse_duration_ns(q, &ns) == 0 &&
					    ns > 0) {
						out->pct = pct;
						out->limit_us = (double)ns / 1e3;
						snprintf(out->text, sizeof out->text, "%s", c);
						return true;
					}
				}
			}
		}
		if (!end)
			break;
		p = end + 1;
	}
	return false;
}

void report_phase_fig(const json_t *ph, struct phase_fig *f)
{
	f->offered = rr_num_or(ph, "rate.offered_per_s", NAN);
	f->achieved = rr_num_or(ph, "rate.achieved_per_s", NAN);
	f->duration_s = rr_num_or(ph, KEY_DURATION_S, NAN);
	f->p50 = rr_num_or(ph, "latency.p50_us", NAN);
	f->p90 = rr_num_or(ph, "latency.p90_us", NAN);
	f->p99 = rr_num_or(ph, "latency.p99_us", NAN);
	f->p999 = rr_num_or(ph, "latency.p99_9_us", NAN);
	f->p9999 = rr_num_or(ph, "latency.p99_99_us", NAN);
	f->max = rr_num_or(ph, "latency.max_us", NAN);
	f->mean = rr_num_or(ph, "latency.mean_us", NAN);
	f->scheduled = rr_num_or(ph, "requests.scheduled", NAN);
	f->sent = rr_num_or(ph, "requests.sent", NAN);
	f->completed = rr_num_or(ph, "requests.completed", NAN);
	f->dropped = rr_num_or(ph, "requests.dropped", 0);
	f->queued = rr_num_or(ph, "requests.queued_at_end", 0);
	f->in_flight = rr_num_or(ph, "requests.in_flight_at_end", 0);
	f->errors = rr_num_or(ph, "errors.total", NAN);
	f->failed_responses = rr_num_or(ph, "errors.failed_responses", 0);
	f->connect_errors = rr_num_or(ph, "transport_errors.connect", 0);
	f->tls_errors = rr_num_or(ph, "transport_errors.tls", 0);
	f->error_pct = f->sent > 0 && f->errors >= 0 ? f->errors / f->sent * 100
						     : (f->sent == 0 ? 0 : NAN);
	f->drop_pct = f->scheduled > 0 ? (f->dropped + f->queued) / f->scheduled * 100
				       : (f->scheduled == 0 ? 0 : NAN);
	if (!isfinite(f->achieved) && isfinite(f->completed) && f->duration_s > 0)
		f->achieved = f->completed / f->duration_s;
}

const json_t *report_step_outcome(const json_t *step, const char *name)
{
	const json_t *oc = rr_arr(step, KEY_OUTCOMES);
	if (!oc)
		oc = rr_arr(step, "measure.outcomes");
	size_t k;
	const json_t *o;
	json_array_foreach(oc, k, o) {
		const char *n = rr_str(o, KEY_NAME);
		if (n && strcmp(n, name) == 0)
			return o;
	}
	return NULL;
}

size_t report_outcome_names(const json_t *steps, const char **names, size_t cap)
{
	size_t n = 0;
	size_t i;
	const json_t *s;
	json_array_foreach(steps, i, s) {
		const json_t *oc = rr_arr(s, KEY_OUTCOMES);
		if (!oc)
			oc = rr_arr(s, "measure.outcomes");
		size_t k;
		const json_t *o;
		json_array_foreach(oc, k, o) {
			const char *name = rr_str(o, KEY_NAME);
			if (!name)
				continue;
			bool seen = false;
			for (size_t j = 0; j < n && !seen; j++)
				seen = strcmp(names[j], name) == 0;
			if (!seen && n < cap)
				names[n++] = name;
		}
	}
	return n;
}
