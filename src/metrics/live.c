/* pacer — the live figures a person watches (metrics/live.h). */
#include "metrics/live.h"

#include <errno.h>
#include <math.h>
#include <string.h>

const char *live_phase_name(enum live_phase ph)
{
	switch (ph) {
	case LIVE_WARMUP: return "warm-up";
	case LIVE_MEASURE: return "measure";
	case LIVE_DRAIN: return "drain";
	default: return "idle";
	}
}

uint64_t live_quantile_ns(const uint64_t *b, double q)
{
	uint64_t n = 0;
	for (size_t k = 0; k <= ENGINE_LIVE_BUCKETS; k++)
		n += b[k];
	if (!n)
		return 0;
	double rank = q * (double)n;
	if (rank < 1)
		rank = 1;
	uint64_t cum = 0;
	for (size_t k = 0; k <= ENGINE_LIVE_BUCKETS; k++) {
		if (!b[k])
			continue;
		if ((double)(cum + b[k]) >= rank) {
			double lo = k ? (double)engine_live_edge_ns(k - 1) : 0;
			if (k == ENGINE_LIVE_BUCKETS)
				return (uint64_t)lo;
			double hi = (double)engine_live_edge_ns(k);
			double f = (rank - (double)cum) / (double)b[k];
			return (uint64_t)llround(lo + (hi - lo) * f);
		}
		cum += b[k];
	}
	return (uint64_t)engine_live_edge_ns(ENGINE_LIVE_BUCKETS - 1);
}

static uint64_t sub(uint64_t a, uint64_t b)
{
	return a > b ? a - b : 0;
}

/* The buckets of a - b into d; their count. */
static uint64_t bucket_diff(uint64_t *d, const uint64_t *a, const uint64_t *b)
{
	uint64_t n = 0;
	for (size_t k = 0; k <= ENGINE_LIVE_BUCKETS; k++) {
		d[k] = sub(a[k], b[k]);
		n += d[k];
	}
	return n;
}

void live_track_begin(struct live_track *t, const struct engine_live *now, uint64_t now_ns,
		      uint32_t step, uint32_t planned_steps, double offered_per_s)
{
	memset(t, 0, sizeof *t);
	t->at_step = *now;
	t->at_phase = *now;
	t->prev = *now;
	t->prev_ns = now_ns;
	t->phase = LIVE_WARMUP;
	t->figs.phase = LIVE_WARMUP;
	t->figs.step = step;
	t->figs.planned_steps = planned_steps;
	t->figs.offered_per_s = offered_per_s;
	t->begun = true;
}

void live_track_phase_start(struct live_track *t, const struct engine_live *now)
{
	if (t->phase != LIVE_WARMUP)
		return;
	t->at_phase = *now;
	t->phase = LIVE_MEASURE;
}

static enum live_phase phase_of(const struct engine_progress *p)
{
	if (p->in_warmup)
		return LIVE_WARMUP;
	if (p->in_drain || (p->total_ns && p->elapsed_ns >= p->total_ns))
		return LIVE_DRAIN;
	return LIVE_MEASURE;
}

void live_track_tick(struct live_track *t, const struct engine_live *now,
		     const struct engine_progress *p, uint64_t now_ns)
{
	struct live_figs *f = &t->figs;
	enum live_phase ph = phase_of(p);
	/* the measured phase starts its own latency figures (a drain keeps
	 * counting into the measured phase's: its responses are measured) */
	if (ph != LIVE_WARMUP && t->phase == LIVE_WARMUP)
		t->at_phase = t->prev;
	t->phase = ph;
	f->phase = ph;
	f->elapsed_ns = p->elapsed_ns;
	f->total_ns = p->total_ns;
	uint64_t d[ENGINE_LIVE_BUCKETS + 1];
	if (now_ns >= t->prev_ns + 200 * 1000 * 1000ull) {
		double s = (double)(now_ns - t->prev_ns) / 1e9;
		f->achieved_per_s = (double)sub(now->completed, t->prev.completed) / s;
		f->sent_per_s = (double)sub(now->sent, t->prev.sent) / s;
		f->sec_n = bucket_diff(d, now->latency_bucket, t->prev.latency_bucket);
		f->sec_p50_ns = live_quantile_ns(d, 0.50);
		f->sec_p99_ns = live_quantile_ns(d, 0.99);
		bucket_diff(d, now->lag_bucket, t->prev.lag_bucket);
		f->lag_p99_ns = live_quantile_ns(d, 0.99);
		t->prev = *now;
		t->prev_ns = now_ns;
	}
	/* the engine's exact max is of its last full second (none in the
	 * first); the bucket's edge stands in until then */
	f->sec_max_ns = p->max_ns;
	f->phase_n = bucket_diff(d, now->latency_bucket, t->at_phase.latency_bucket);
	f->phase_p50_ns = live_quantile_ns(d, 0.50);
	f->phase_p99_ns = live_quantile_ns(d, 0.99);
	if (ph == LIVE_WARMUP) {
		if (p->max_ns > t->last_max_ns)
			t->last_max_ns = p->max_ns;
		f->phase_max_ns = t->last_max_ns;
	} else {
		f->phase_max_ns = p->max_measure_ns;
	}
	f->completed = sub(now->completed, t->at_step.completed);
	f->sent = sub(now->sent, t->at_step.sent);
	f->dropped = sub(now->dropped, t->at_step.dropped);
	f->errors_total = 0;
	for (int k = 0; k < ERRK_COUNT; k++) {
		f->errors[k] = sub(now->errors[k], t->at_step.errors[k]);
		f->errors_total += f->errors[k];
	}
	for (int k = 0; k < 6; k++)
		f->status_class[k] = sub(now->status_class[k], t->at_step.status_class[k]);
	f->backlog = now->backlog;
	f->conns_open = now->conns_open;
}

/* A duration in ns as seconds, or null when 0 (none). */
static void json_s(FILE *f, const char *key, uint64_t ns, bool comma)
{
	if (ns)
		fprintf(f, "\"%s\":%.9g%s", key, (double)ns / 1e9, comma ? "," : "");
	else
		fprintf(f, "\"%s\":null%s", key, comma ? "," : "");
}

/* A string with JSON's escapes (names come from the command line). */
static void json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
		if (*p == '"' || *p == '\\')
			fprintf(f, "\\%c", *p);
		else if (*p < 0x20)
			fprintf(f, "\\u%04x", *p);
		else
			fputc(*p, f);
	}
	fputc('"', f);
}

int live_json_write(FILE *f, const struct live_figs *const *v, const char *const *names, size_t n)
{
	fputs("{\"variants\":[", f);
	for (size_t i = 0; i < n; i++) {
		const struct live_figs *x = v[i];
		fputs(i ? ",{" : "{", f);
		fputs("\"name\":", f);
		json_str(f, names ? names[i] : "");
		fprintf(f, ",\"phase\":\"%s\",\"step\":%u,\"planned_steps\":%u,",
			live_phase_name(x->phase), x->step, x->planned_steps);
		fprintf(f, "\"offered_per_s\":%.6g,\"elapsed_s\":%.3f,\"total_s\":%.3f,",
			x->offered_per_s, (double)x->elapsed_ns / 1e9, (double)x->total_ns / 1e9);
		fprintf(f,
			"\"last_second\":{\"achieved_per_s\":%.6g,\"sent_per_s\":%.6g,"
			"\"responses\":%llu,",
			x->achieved_per_s, x->sent_per_s, (unsigned long long)x->sec_n);
		json_s(f, "p50_s", x->sec_p50_ns, true);
		json_s(f, "p99_s", x->sec_p99_ns, true);
		json_s(f, "max_s", x->sec_max_ns, true);
		json_s(f, "lag_p99_s", x->lag_p99_ns, false);
		fprintf(f, "},\"phase_so_far\":{\"responses\":%llu,",
			(unsigned long long)x->phase_n);
		json_s(f, "p50_s", x->phase_p50_ns, true);
		json_s(f, "p99_s", x->phase_p99_ns, true);
		json_s(f, "max_s", x->phase_max_ns, false);
		fprintf(f,
			"},\"step_so_far\":{\"completed\":%llu,\"sent\":%llu,\"dropped\":%llu,"
			"\"errors\":{",
			(unsigned long long)x->completed, (unsigned long long)x->sent,
			(unsigned long long)x->dropped);
		for (int k = 0; k < ERRK_COUNT; k++)
			fprintf(f, "%s\"%s\":%llu", k ? "," : "", err_kind_name((enum err_kind)k),
				(unsigned long long)x->errors[k]);
		fputs("},\"status\":{", f);
		for (int k = 1; k <= 5; k++)
			fprintf(f, "\"%dxx\":%llu,", k, (unsigned long long)x->status_class[k]);
		fprintf(f, "\"other\":%llu}},\"backlog\":%llu,\"connections\":%llu}",
			(unsigned long long)x->status_class[0], (unsigned long long)x->backlog,
			(unsigned long long)x->conns_open);
	}
	fputs("]}\n", f);
	return ferror(f) ? -EIO : 0;
}
