/* pacer — HdrHistogram interop: the .hgrm percentile distribution and the
 * .hlog interval log (docs/report.md).
 *
 * hlog layout, as HdrHistogram's HistogramLogReader (Java) reads it:
 *
 *   #[pacer result <id>: latency, recorded in ns, Interval_Max in ms]
 *   #[Histogram log format version 1.3]
 *   #[StartTime: 1795987411.438 (seconds since epoch), Sun Nov 29 21:23:31 UTC 2026]
 *   #[BaseTime: 1795987411.438 (seconds since epoch)]
 *   "StartTimestamp","Interval_Length","Interval_Max","Interval_Compressed_Histogram"
 *   0.000,1.000,28.836,HISTFAAAA...
 *
 * StartTime is the start of the measured phase (started_at plus the
 * warm-up); timestamps are seconds relative to it; each line is one second
 * of the result's `series` (ramp: the steps one after another on measured
 * time, each step preceded by a comment line). Values are recorded in ns and
 * Interval_Max is the interval's highest value in ms (ns / 1e6, the Java
 * tools' default ratio). When the series carries no histograms (results
 * written before per-second histograms, or a timing other than latency),
 * the log holds one interval: the whole measured phase.
 *
 * Histogram payload: HdrHistogram's V2 encoding (cookie 0x1c849313: base
 * 0x1c849303 with the word-size nibble the reference writers set; payload
 * length; normalizing index offset 0; 3 significant digits; lowest
 * discernible value 1; highest trackable value 2^42; integer-to-double
 * ratio 1.0; then the counts from index 0 to the highest non-zero one as
 * ZigZag LEB128 varints, a run of k > 1 zero counts written as -k), wrapped
 * by the compressed V2 encoding (cookie 0x1c849314, length, zlib deflate)
 * and base64. Counts are re-recorded into HdrHistogram's own layout for 3
 * significant digits (2048 sub-buckets, unit magnitude 0), which is pacer's
 * log-linear layout with sub_bits 11, so a bucket's index is the same in
 * both; a series histogram of sub_bits 7 is re-recorded value by value. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zlib.h>

#include "doc/keys.h"
#include "report/render_int.h"
#include "stats/hist.h"
#include "stats/hist_io.h"
#include "util/b64.h"
#include "util/err.h"

#define HDR_COOKIE 0x1c849313u
#define HDR_COMPRESSED_COOKIE 0x1c849314u
#define HDR_SUB_BITS 11 /* 3 significant digits: subBucketCount 2048 */
#define HDR_HIGHEST ((uint64_t)1 << 42)

static const char *const timings[] = {"latency",        KEY_SERVICE_TIME, "ttfb",
				      KEY_CONNECT_TIME, KEY_SEND_LAG,     KEY_LOOP_LAG,
				      KEY_SERVER_TIME};

static bool timing_known(const char *t)
{
	for (size_t i = 0; i < sizeof timings / sizeof timings[0]; i++)
		if (strcmp(timings[i], t) == 0)
			return true;
	return false;
}

const json_t *report_hist_phase(const struct loaded_result *r, const struct report_options *o,
				const json_t **series, char *err, size_t errlen)
{
	*series = NULL;
	if (r->kind == RESULT_KIND_COMPARE) {
		snprintf(err, errlen,
			 "%s: a compare result carries no histograms (use --format md, html, text or "
			 "csv)",
			 r->name ? r->name : "result");
		return NULL;
	}
	if (r->kind == RESULT_KIND_RUN) {
		if (o->step) {
			snprintf(err, errlen, "--step is for ramp results; this is a run");
			return NULL;
		}
		*series = rr_arr(r->root, KEY_SERIES);
		return rr_obj(r->root, KEY_MEASURE);
	}
	const json_t *steps = rr_arr(r->root, KEY_STEPS);
	size_t n = json_array_size(steps);
	long k = o->step ? (long)o->step - 1 : report_focus_step(r->root);
	if (k < 0 || (size_t)k >= n) {
		if (n)
			snprintf(err, errlen, "--step %u: the ramp has %zu %s", o->step, n,
				 n == 1 ? "step" : "steps");
		else
			snprintf(err, errlen, "%s: the ramp has no steps", r->name ? r->name : "result");
		return NULL;
	}
	const json_t *s = json_array_get(steps, (size_t)k);
	*series = rr_arr(s, KEY_SERIES);
	const json_t *m = rr_obj(s, KEY_MEASURE);
	if (!m)
		snprintf(err, errlen, "step %ld has no measure", k + 1);
	return m;
}

/* The timing object o->timing of a phase, or NULL with a message. */
static const json_t *timing_of(const json_t *phase, const struct report_options *o, char *err,
			       size_t errlen)
{
	const char *t = o->timing ? o->timing : "latency";
	if (!timing_known(t)) {
		snprintf(err, errlen,
			 "unknown timing '%.40s' (latency, service_time, ttfb, connect_time, send_lag, "
			 "loop_lag, server_time)",
			 t);
		return NULL;
	}
	const json_t *tm = rr_obj(phase, t);
	if (!tm)
		snprintf(err, errlen, "the result has no %s timing", t);
	return tm;
}

int hgrm_write(FILE *f, const struct loaded_result *r, const struct report_options *o, char *err,
	       size_t errlen)
{
	const json_t *series;
	const json_t *ph = report_hist_phase(r, o, &series, err, errlen);
	if (!ph)
		return r->kind == RESULT_KIND_COMPARE ? PACER_EUNSUPPORTED : PACER_EPARSE;
	const json_t *tm = timing_of(ph, o, err, errlen);
	if (!tm)
		return PACER_EPARSE;
	struct hist h;
	char e2[200];
	int rc = rr_timing_hist(tm, &h, e2, sizeof e2);
	if (rc) {
		snprintf(err, errlen, "%s: %s", o->timing ? o->timing : "latency", e2);
		return rc;
	}
	rc = hist_write_hgrm(f, &h, 1e6);
	hist_free(&h);
	if (rc)
		snprintf(err, errlen, "cannot write: %s", err_name(rc));
	return rc;
}

/* ---- V2 encoding ------------------------------------------------------------ */

struct bytes {
	unsigned char *p;
	size_t n, cap;
	bool oom;
};

static void put(struct bytes *b, const void *src, size_t n)
{
	if (b->oom || n == 0)
		return;
	if (b->n + n > b->cap) {
		size_t nc = b->cap ? b->cap : 256;
		while (nc < b->n + n)
			nc *= 2;
		unsigned char *np = realloc(b->p, nc);
		if (!np) {
			b->oom = true;
			return;
		}
		b->p = np;
		b->cap = nc;
	}
	memcpy(b->p + b->n, src, n);
	b->n += n;
}

static void put_u8(struct bytes *b, unsigned v)
{
	unsigned char c = (unsigned char)v;
	put(b, &c, 1);
}

static void put_be32(struct bytes *b, uint32_t v)
{
	unsigned char c[4] = {(unsigned char)(v >> 24), (unsigned char)(v >> 16),
			      (unsigned char)(v >> 8), (unsigned char)v};
	put(b, c, 4);
}

static void put_be64(struct bytes *b, uint64_t v)
{
	put_be32(b, (uint32_t)(v >> 32));
	put_be32(b, (uint32_t)v);
}

/* ZigZag, then LEB128 of up to 8 bytes of 7 bits; a 9th byte carries the
 * last 8 bits (HdrHistogram's ZigZagEncoding.putLong). */
static void put_zigzag(struct bytes *b, int64_t v)
{
	uint64_t z = ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
	for (int i = 0; i < 8; i++) {
		if ((z >> 7) == 0) {
			put_u8(b, (unsigned)z);
			return;
		}
		put_u8(b, (unsigned)((z & 0x7f) | 0x80));
		z >>= 7;
	}
	put_u8(b, (unsigned)(z & 0xff));
}

/* One interval's counts in HdrHistogram's 3-digit layout. The histogram is
 * allocated once per log and cleared bucket by bucket after each interval,
 * and only the touched buckets are visited when encoding, so the cost of an
 * interval follows its pairs, not the layout's 33,793 counters. */
struct hdr_acc {
	struct hist h;     /* sub_bits 11, max 2^42 */
	size_t *idx;       /* indexes touched in this interval (may repeat) */
	size_t n, cap;
};

static int cmp_size(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	return x < y ? -1 : x > y;
}

static void acc_clear(struct hdr_acc *a)
{
	for (size_t i = 0; i < a->n; i++)
		a->h.counts[a->idx[i]] = 0;
	a->n = 0;
	a->h.total = 0;
	a->h.min = UINT64_MAX;
	a->h.max = 0;
	a->h.clamped = 0;
	a->h.sum = 0;
}


/* Re-record a saved histogram object's pairs into the accumulator (values
 * above 2^42 ns count at 2^42, as pacer's own histograms clamp). 0,
 * PACER_EPARSE with a message, or -ENOMEM. */
static int acc_record(struct hdr_acc *a, const json_t *hobj, char *err, size_t errlen)
{
	if (!json_is_object(hobj)) {
		snprintf(err, errlen, "histogram is not an object");
		return PACER_EPARSE;
	}
	const char *unit = rr_str(hobj, KEY_UNIT);
	if (unit && strcmp(unit, "ns") != 0) {
		snprintf(err, errlen, "histogram unit is not ns");
		return PACER_EPARSE;
	}
	const json_t *counts = json_object_get(hobj, KEY_COUNTS);
	if (!json_is_array(counts)) {
		snprintf(err, errlen, "histogram counts is not an array");
		return PACER_EPARSE;
	}
	size_t i;
	const json_t *pair;
	uint64_t total = a->h.total;
	json_array_foreach(counts, i, pair) {
		uint64_t v, c;
		if (!json_is_array(pair) || json_array_size(pair) != 2 ||
		    !rr_as_u64(json_array_get(pair, 0), &v) || !rr_as_u64(json_array_get(pair, 1), &c)) {
			snprintf(err, errlen, "histogram counts[%zu] is not [value_ns, count]", i);
			return PACER_EPARSE;
		}
		if (__builtin_add_overflow(total, c, &total) || total > (1ull << 62)) {
			snprintf(err, errlen, "histogram counts overflow");
			return PACER_EPARSE;
		}
		if (!c)
			continue;
		if (a->n == a->cap) {
			size_t nc = a->cap ? a->cap * 2 : 256;
			size_t *ni = realloc(a->idx, nc * sizeof *ni);
			if (!ni)
				return -ENOMEM;
			a->idx = ni;
			a->cap = nc;
		}
		hist_record_n(&a->h, v, c);
		a->idx[a->n++] = hist_index(&a->h, v > HDR_HIGHEST ? HDR_HIGHEST : v);
	}
	return 0;
}

/* The uncompressed V2 encoding of the accumulator: counts from index 0 to
 * the highest non-empty one, runs of k > 1 empty buckets as -k, a single
 * empty bucket as 0 (as HdrHistogram writes them). Sorts a->idx. */
static void encode_v2(struct hdr_acc *a, struct bytes *out)
{
	struct bytes counts = {0};
	if (a->n)
		qsort(a->idx, a->n, sizeof *a->idx, cmp_size);
	size_t next = 0; /* first index not written yet */
	for (size_t k = 0; k < a->n; k++) {
		size_t i = a->idx[k];
		if (k && i == a->idx[k - 1])
			continue;
		size_t gap = i - next;
		if (gap > 1)
			put_zigzag(&counts, -(int64_t)gap);
		else if (gap == 1)
			put_zigzag(&counts, 0);
		uint64_t c = a->h.counts[i];
		put_zigzag(&counts, c > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)c);
		next = i + 1;
	}
	if (!a->n)
		put_zigzag(&counts, 0); /* an empty histogram: one empty bucket */
	if (counts.oom) {
		out->oom = true;
		free(counts.p);
		return;
	}
	put_be32(out, HDR_COOKIE);
	put_be32(out, (uint32_t)counts.n);
	put_be32(out, 0); /* normalizing index offset */
	put_be32(out, 3); /* significant digits */
	put_be64(out, 1); /* lowest discernible value */
	put_be64(out, HDR_HIGHEST);
	double ratio = 1.0;
	uint64_t bits;
	memcpy(&bits, &ratio, sizeof bits);
	put_be64(out, bits);
	put(out, counts.p, counts.n);
	free(counts.p);
}

/* One interval line from the accumulator, which is cleared afterwards.
 * 0, -ENOMEM or PACER_EPARSE (zlib). */
static int interval_line(FILE *f, struct hdr_acc *a, double start_s, double len_s)
{
	struct bytes raw = {0}, comp = {0};
	const struct hist *h = &a->h;
	encode_v2(a, &raw);
	if (raw.oom) {
		free(raw.p);
		return -ENOMEM;
	}
	uLongf zlen = compressBound((uLong)raw.n);
	unsigned char *z = malloc(zlen);
	if (!z) {
		free(raw.p);
		return -ENOMEM;
	}
	int zrc = compress2(z, &zlen, raw.p, (uLong)raw.n, Z_DEFAULT_COMPRESSION);
	free(raw.p);
	if (zrc != Z_OK) {
		free(z);
		return zrc == Z_MEM_ERROR ? -ENOMEM : PACER_EPARSE;
	}
	put_be32(&comp, HDR_COMPRESSED_COOKIE);
	put_be32(&comp, (uint32_t)zlen);
	put(&comp, z, zlen);
	free(z);
	char *text = comp.oom ? NULL : malloc(B64_ENCODED_LEN(comp.n));
	if (!text) {
		free(comp.p);
		return -ENOMEM;
	}
	size_t text_len = b64_encode(comp.p, comp.n, text);
	free(comp.p);
	double max_ms = h->total ? (double)hist_bucket_high(h, hist_index(h, h->max)) / 1e6 : 0.0;
	fprintf(f, "%.3f,%.3f,%.3f,", start_s, len_s, max_ms);
	fwrite(text, 1, text_len, f);
	fputc('\n', f);
	free(text);
	acc_clear(a);
	return 0;
}

/* started_at ("2026-11-29T21:23:31.438Z") in seconds since the epoch. */
static bool parse_started(const char *s, double *out)
{
	if (!s)
		return false;
	struct tm tm;
	memset(&tm, 0, sizeof tm);
	int ms = 0, used = 0;
	if (sscanf(s, "%4d-%2d-%2dT%2d:%2d:%2d%n", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour,
		   &tm.tm_min, &tm.tm_sec, &used) != 6)
		return false;
	const char *p = s + used;
	if (*p == '.') {
		p++;
		int digits = 0;
		while (*p >= '0' && *p <= '9') {
			if (digits < 3) {
				ms = ms * 10 + (*p - '0');
				digits++;
			}
			p++;
		}
		while (digits++ < 3)
			ms *= 10;
	}
	if (tm.tm_year < 1970 || tm.tm_year > 9999 || tm.tm_mon < 1 || tm.tm_mon > 12)
		return false;
	tm.tm_year -= 1900;
	tm.tm_mon -= 1;
	time_t t = timegm(&tm);
	if (t == (time_t)-1)
		return false;
	*out = (double)t + ms / 1000.0;
	return true;
}

/* Intervals of one series (or the phase as one interval when the series has
 * no histograms). *t0 advances by the seconds written. */
static int phase_intervals(FILE *f, struct hdr_acc *a, const json_t *phase, const json_t *series,
			   const struct report_options *o, double *t0, char *err, size_t errlen)
{
	const char *timing = o->timing ? o->timing : "latency";
	bool per_second = strcmp(timing, "latency") == 0 && series && json_array_size(series);
	size_t i;
	const json_t *pt;
	if (per_second)
		json_array_foreach(series, i, pt)
			if (!rr_obj(pt, KEY_HIST))
				per_second = false;
	int rc = 0;
	char e2[200];
	if (per_second) {
		double last = 0;
		json_array_foreach(series, i, pt) {
			rc = acc_record(a, rr_obj(pt, KEY_HIST), e2, sizeof e2);
			if (rc) {
				snprintf(err, errlen, "series[%zu].hist: %s", i,
					 rc == -ENOMEM ? "out of memory" : e2);
				return rc;
			}
			double ts = rr_num_or(pt, KEY_T_S, (double)i);
			rc = interval_line(f, a, *t0 + ts, 1.0);
			if (rc) {
				snprintf(err, errlen, "cannot encode series[%zu]: %s", i, err_name(rc));
				return rc;
			}
			last = fmax(last, ts + 1);
		}
		*t0 += last;
		return 0;
	}
	const json_t *tm = timing_of(phase, o, err, errlen);
	if (!tm)
		return PACER_EPARSE;
	rc = acc_record(a, rr_obj(tm, KEY_HIST), e2, sizeof e2);
	if (rc) {
		snprintf(err, errlen, "%s.hist: %s", timing, rc == -ENOMEM ? "out of memory" : e2);
		return rc;
	}
	double len = rr_num_or(phase, KEY_DURATION_S, 1.0);
	if (!(len > 0))
		len = 1.0;
	rc = interval_line(f, a, *t0, len);
	if (rc)
		snprintf(err, errlen, "cannot encode %s: %s", timing, err_name(rc));
	*t0 += len;
	return rc;
}

int hlog_write(FILE *f, const struct loaded_result *r, const struct report_options *o, char *err,
	       size_t errlen)
{
	const json_t *series;
	const json_t *ph = report_hist_phase(r, o, &series, err, errlen);
	if (!ph)
		return r->kind == RESULT_KIND_COMPARE ? PACER_EUNSUPPORTED : PACER_EPARSE;
	const char *timing = o->timing ? o->timing : "latency";
	if (!timing_of(ph, o, err, errlen))
		return PACER_EPARSE;
	double start = 0;
	bool have_start = parse_started(rr_str(r->root, KEY_STARTED_AT), &start);
	if (have_start && r->kind == RESULT_KIND_RUN) {
		double w = rr_num_or(r->root, "warmup.duration_s", rr_num_or(r->root, "plan.warmup_s", 0));
		if (w > 0)
			start += w;
	}
	fprintf(f, "#[pacer result %s (%s): %s, recorded in ns, Interval_Max in ms]\n", r->id,
		result_kind_name(r->kind), timing);
	fputs("#[Histogram log format version 1.3]\n", f);
	if (have_start) {
		time_t t = (time_t)floor(start);
		struct tm tm;
		char date[64] = "";
		if (gmtime_r(&t, &tm))
			strftime(date, sizeof date, "%a %b %d %H:%M:%S UTC %Y", &tm);
		fprintf(f, "#[StartTime: %.3f (seconds since epoch), %s]\n", start, date);
		fprintf(f, "#[BaseTime: %.3f (seconds since epoch)]\n", start);
	}
	fputs("\"StartTimestamp\",\"Interval_Length\",\"Interval_Max\",\"Interval_Compressed_Histogram\"\n",
	      f);
	double t0 = 0;
	struct hdr_acc acc = {0};
	int rc = hist_init(&acc.h, HDR_SUB_BITS, HDR_HIGHEST);
	if (rc) {
		snprintf(err, errlen, "out of memory");
		return rc;
	}
	if (r->kind == RESULT_KIND_RAMP && !o->step) {
		size_t i;
		const json_t *s;
		json_array_foreach(rr_arr(r->root, KEY_STEPS), i, s) {
			const json_t *m = rr_obj(s, KEY_MEASURE);
			if (!m)
				continue;
			fprintf(f,
				"#[pacer ramp step %s%zu: %.3f requests/s offered, from %.3f s]\n",
				rr_true(s, KEY_REFINE) ? "r" : "", i + 1,
				rr_num_or(s, KEY_OFFERED_PER_S, 0), t0);
			rc = phase_intervals(f, &acc, m, rr_arr(s, KEY_SERIES), o, &t0, err,
					     errlen);
			if (rc)
				break;
		}
	} else {
		rc = phase_intervals(f, &acc, ph, series, o, &t0, err, errlen);
	}
	hist_free(&acc.h);
	free(acc.idx);
	if (rc)
		return rc;
	if (fflush(f) != 0 || ferror(f)) {
		rc = errno ? -errno : -EIO;
		snprintf(err, errlen, "cannot write: %s", err_name(rc));
	}
	return rc;
}
