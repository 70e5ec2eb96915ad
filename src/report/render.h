/* pacer — reports of a saved result: Markdown, HTML with charts, a terminal
 * summary, CSV, HdrHistogram .hgrm and .hlog (docs/report.md).
 *
 * The one public entry of the report writers. They are pure functions of a
 * loaded result (doc/read.h): the same result gives the same
 * bytes (no clock, no locale, no environment), so a report can be
 * re-rendered at any time from the JSON file alone. */
#ifndef PACER_REPORT_RENDER_H
#define PACER_REPORT_RENDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "doc/read.h"

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

/* A metric over the stored runs of one benchmark (pacer report --history;
 * the CLI reads them from the run history, docs/history.md), drawn as the
 * "trend" chart of the HTML and Markdown reports: runs comparable with the
 * reported one as one series, the others apart. */
#define REPORT_TREND_MAX_METRICS 4
#define REPORT_TREND_MAX_POINTS 1000

struct report_trend_point {
	double id;                            /* the run's id in the history */
	double v[REPORT_TREND_MAX_METRICS];   /* NaN: the run lacks the figure */
	bool comparable;                      /* pacer diff's rule (history/diff.h) */
	char why[48];                         /* not comparable: the first field that
					       * differs ("rate", "cpu_model"); "" unknown */
};

struct report_trend {
	const char *source;                   /* the history's name, for the caption */
	const char *metrics[REPORT_TREND_MAX_METRICS]; /* labels ("p99 (ms)") */
	size_t n_metrics;
	const struct report_trend_point *pts; /* oldest first; borrowed */
	size_t n;
};

struct report_options {
	/* hgrm/hlog: the timing to write: "latency" (default), "service_time",
	 * "ttfb", "connect_time", "send_lag", "loop_lag", "server_time". */
	const char *timing;
	/* hgrm/hlog of a ramp: the step (1-based); 0: the highest passing step,
	 * else the last one. hlog writes every step when step is 0. */
	unsigned step;
	/* md: when not NULL, charts are referenced as image files named
	 * PREFIX "chart-NAME.svg" (as the report folder names them); NULL: the
	 * Markdown references no file. */
	const char *chart_prefix;
	/* csv: the summary rows (one shape for every kind: a row per phase or
	 * step, per request name, per repetition) instead of the rows of the
	 * kind (run: per second; ramp: per step; compare: per variant and
	 * figure). */
	bool csv_summary;
	/* md, html: also a trend chart of these runs (NULL: none); borrowed. */
	const struct report_trend *trend;
	/* text: 0, the whole text; else a summary that fits a terminal of this
	 * many rows (at least 12) with 2 to spare for the caller's trailer: a
	 * run's or ramp's headline, its table, its verdict, the caveats that fit
	 * (the others counted) and what to look at next; wrapped at 78 columns. */
	unsigned screen_rows;
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

/* ---- the report folder -------------------------------------------------
 * What a report folder holds, file by file; the caller creates the folder
 * and the files (src/cli does, atomically) and hands each file's stream to
 * report_dir_write. The files, in the order they are meant to be written:
 * the chart-NAME.svg files, report.md (charts referenced as those files),
 * report.html, report.txt, report.csv, summary.csv (the summary rows) and,
 * for run and ramp results,
 * latency.hgrm and latency.hlog. */
struct report_dir;

/* The folder's files for r (borrowed until report_dir_free; the charts are
 * drawn here, once). 0 and *out, or -ENOMEM ("out of memory" in err) with
 * *out NULL; -EINVAL when r holds no result. */
int report_dir_open(struct report_dir **out, const struct loaded_result *r, char *err,
		    size_t errlen);
/* The same with a trend chart among the files (and in report.md and
 * report.html); trend (NULL: none) is borrowed until report_dir_free. */
int report_dir_open_trend(struct report_dir **out, const struct loaded_result *r,
			  const struct report_trend *trend, char *err, size_t errlen);
/* How many files the folder has. */
size_t report_dir_count(const struct report_dir *d);
/* The name of file i (i < report_dir_count), owned by d: "report.md". */
const char *report_dir_name(const struct report_dir *d, size_t i);
/* Write file i to out (owned by the caller, left open). 0, or as
 * report_render_opts (a one-line message in err, not naming the file). */
int report_dir_write(const struct report_dir *d, size_t i, FILE *out, char *err, size_t errlen);
/* Free d. NULL is fine. */
void report_dir_free(struct report_dir *d);

#endif
