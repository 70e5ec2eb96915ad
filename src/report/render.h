/* pacer — reports of a saved result: Markdown, HTML with charts, a terminal
 * summary, CSV, HdrHistogram .hgrm and .hlog (docs/report.md).
 *
 * The one public entry of the report writers. They are pure functions of a
 * loaded result (report/result_read.h): the same result gives the same
 * bytes (no clock, no locale, no environment), so a report can be
 * re-rendered at any time from the JSON file alone. */
#ifndef PACER_REPORT_RENDER_H
#define PACER_REPORT_RENDER_H

#include <stddef.h>
#include <stdio.h>

#include "report/result_read.h"

enum report_format {
	REPORT_FMT_MD,
	REPORT_FMT_HTML,
	REPORT_FMT_TEXT,
	REPORT_FMT_CSV,
	REPORT_FMT_HGRM,
	REPORT_FMT_HLOG,
};

/* "md", "html", "text", "csv", "hgrm", "hlog" → *out: 0, or PACER_EPARSE. */
int report_format_parse(const char *s, enum report_format *out);
const char *report_format_name(enum report_format f);

struct report_options {
	/* hgrm/hlog: the timing to write: "latency" (default), "service_time",
	 * "ttfb", "connect_time", "send_lag", "loop_lag", "server_time". */
	const char *timing;
	/* hgrm/hlog of a ramp: the step (1-based); 0: the highest passing step,
	 * else the last one. hlog writes every step when step is 0. */
	unsigned step;
	/* md: when not NULL, charts are referenced as image files named
	 * PREFIX "chart-NAME.svg" (as report_write_dir writes them); NULL: the
	 * Markdown references no file. */
	const char *chart_prefix;
};

/* Defaults: latency, step 0, no chart files. */
void report_options_default(struct report_options *o);

/* Write r in format fmt to out with default options. 0, or a negative code
 * with a one-line message in err: PACER_EUNSUPPORTED (the format needs data
 * this kind of result lacks, e.g. hgrm of a compare), PACER_EPARSE (the
 * data it needs is malformed: a bad histogram), -ENOMEM, or -errno / -EIO
 * when writing to out failed. out stays open and owned by the caller. */
int report_render(const struct loaded_result *r, enum report_format fmt, FILE *out, char *err,
		  size_t errlen);
/* The same with options (o NULL: defaults). */
int report_render_opts(const struct loaded_result *r, enum report_format fmt,
		       const struct report_options *o, FILE *out, char *err, size_t errlen);

/* The report folder: read the result at result_path and write into dir
 * (created, with missing parents, mode 0777 & ~umask) report.md (charts
 * referenced as files), report.html, report.txt, report.csv, the chart-*.svg
 * files and, for run and ramp results, latency.hgrm and latency.hlog. Each
 * file is written atomically (temporary file + rename), so a reader never
 * sees half a file; files already there are replaced. 0, or a negative code
 * (as result_read_file and report_render, or -errno from mkdir/write) with
 * a one-line message naming the file in err. */
int report_write_dir(const char *result_path, const char *dir, char *err, size_t errlen);
/* The same from a result already loaded. */
int report_write_dir_loaded(const struct loaded_result *r, const char *dir, char *err,
			    size_t errlen);

#endif
