/* pacer — a histogram in the JSON results: its summary figures and its
 * buckets (json_parts.h), written for a phase (run.c) and for each
 * request name (names.c). */
#include <stdint.h>

#include "doc/json_parts.h"
#include "doc/keys.h"
#include "stats/hist.h"
#include "util/jsonw.h"

void rj_hist(struct jsonw *j, const struct hist *h)
{
	jw_obj(j);
	jw_key(j, KEY_COUNT);
	jw_u64(j, h->total);
	static const struct {
		const char *key;
		double p;
	} pcts[] = {{KEY_P50_US, 50},
		    {KEY_P90_US, 90},
		    {KEY_P99_US, 99},
		    {KEY_P99_9_US, 99.9},
		    {KEY_P99_99_US, 99.99}};
	jw_key(j, KEY_MIN_US);
	jw_dbl(j, h->total ? (double)h->min / 1e3 : 0, 3);
	jw_key(j, KEY_MEAN_US);
	jw_dbl(j, hist_mean(h) / 1e3, 3);
	jw_key(j, KEY_STDDEV_US);
	jw_dbl(j, hist_stddev(h) / 1e3, 3);
	for (size_t i = 0; i < sizeof pcts / sizeof pcts[0]; i++) {
		jw_key(j, pcts[i].key);
		jw_dbl(j, (double)hist_percentile(h, pcts[i].p) / 1e3, 3);
	}
	jw_key(j, KEY_MAX_US);
	jw_dbl(j, (double)h->max / 1e3, 3);
	rj_hist_buckets(j, h);
	jw_obj_end(j);
}

void rj_hist_buckets(struct jsonw *j, const struct hist *h)
{
	jw_key(j, KEY_HIST);
	jw_obj(j);
	jw_key(j, KEY_UNIT);
	jw_str(j, "ns");
	jw_key(j, KEY_SUB_BITS);
	jw_u64(j, h->sub_bits);
	jw_key(j, KEY_MAX_VALUE);
	jw_u64(j, h->max_value);
	jw_key(j, KEY_COUNTS);
	int saved = j->indent;
	jw_arr(j);
	j->indent = 0; /* pairs on one line: keeps files readable */
	size_t cur = 0;
	uint64_t v, n;
	while (hist_next_nonzero(h, &cur, &v, &n)) {
		jw_arr(j);
		jw_u64(j, v);
		jw_u64(j, n);
		jw_arr_end(j);
	}
	j->indent = saved;
	jw_arr_end(j);
	jw_obj_end(j);
}
