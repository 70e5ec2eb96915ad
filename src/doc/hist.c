/* pacer — a histogram in the JSON results: its summary figures and its
 * buckets (json_parts.h), written for a phase (run.c) and for each
 * request name (names.c). */
#include <stdint.h>

#include "doc/json_parts.h"
#include "stats/hist.h"
#include "util/jsonw.h"

void rj_hist(struct jsonw *j, const struct hist *h)
{
	jw_obj(j);
	jw_key(j, "count");
	jw_u64(j, h->total);
	static const struct {
		const char *key;
		double p;
	} pcts[] = {{"p50_us", 50},  {"p90_us", 90},      {"p99_us", 99},
		    {"p99_9_us", 99.9}, {"p99_99_us", 99.99}};
	jw_key(j, "min_us");
	jw_dbl(j, h->total ? (double)h->min / 1e3 : 0, 3);
	jw_key(j, "mean_us");
	jw_dbl(j, hist_mean(h) / 1e3, 3);
	jw_key(j, "stddev_us");
	jw_dbl(j, hist_stddev(h) / 1e3, 3);
	for (size_t i = 0; i < sizeof pcts / sizeof pcts[0]; i++) {
		jw_key(j, pcts[i].key);
		jw_dbl(j, (double)hist_percentile(h, pcts[i].p) / 1e3, 3);
	}
	jw_key(j, "max_us");
	jw_dbl(j, (double)h->max / 1e3, 3);
	rj_hist_buckets(j, h);
	jw_obj_end(j);
}

void rj_hist_buckets(struct jsonw *j, const struct hist *h)
{
	jw_key(j, "hist");
	jw_obj(j);
	jw_key(j, "unit");
	jw_str(j, "ns");
	jw_key(j, "sub_bits");
	jw_u64(j, h->sub_bits);
	jw_key(j, "max_value");
	jw_u64(j, h->max_value);
	jw_key(j, "counts");
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
