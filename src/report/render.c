/* pacer — report entry points: one format to a stream, or the whole report
 * folder (see render.h). */
#include "report/render.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/render_int.h"
#include "util/err.h"
#include "util/text.h"

static const char *const format_names[] = {"md", "html", "text", "csv", "hgrm", "hlog"};

int report_format_parse(const char *s, enum report_format *out)
{
	for (size_t i = 0; i < sizeof format_names / sizeof format_names[0]; i++)
		if (s && strcmp(s, format_names[i]) == 0) {
			*out = (enum report_format)i;
			return 0;
		}
	return PACER_EPARSE;
}

const char *report_format_name(enum report_format f)
{
	return (unsigned)f < sizeof format_names / sizeof format_names[0] ? format_names[f] : "?";
}

void report_options_default(struct report_options *o)
{
	memset(o, 0, sizeof *o);
	o->timing = "latency";
}

static int page_format(const struct loaded_result *r, enum report_format fmt,
		      const struct report_options *o, FILE *out, char *err, size_t errlen)
{
	struct chart_set cs;
	struct page d;
	page_init(&d);
	int rc = 0;
	bool charts = fmt == REPORT_FMT_HTML || (fmt == REPORT_FMT_MD && o->chart_prefix);
	if (charts)
		rc = charts_build(r, &cs);
	else
		memset(&cs, 0, sizeof cs);
	if (!rc && charts && o->trend)
		rc = charts_add_trend(&cs, o->trend);
	if (!rc)
		rc = report_doc_build(r, &cs, &d);
	if (rc) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	switch (fmt) {
	case REPORT_FMT_MD: rc = md_write(out, &d, o->chart_prefix); break;
	case REPORT_FMT_HTML: rc = html_write(out, &d, &cs); break;
	default: rc = txt_write(out, &d, o->screen_rows); break;
	}
	if (rc)
		snprintf(err, errlen, "cannot write: %s", err_name(rc));
out:
	page_free(&d);
	charts_free(&cs);
	return rc;
}

int report_render_opts(const struct loaded_result *r, enum report_format fmt,
		       const struct report_options *o, FILE *out, char *err, size_t errlen)
{
	struct report_options def;
	char scratch[8];
	if (!err || !errlen) {
		err = scratch;
		errlen = sizeof scratch;
	}
	err[0] = '\0';
	if (!o) {
		report_options_default(&def);
		o = &def;
	}
	if (!r || !r->root || !out) {
		snprintf(err, errlen, "no result");
		return -EINVAL;
	}
	int rc;
	switch (fmt) {
	case REPORT_FMT_MD:
	case REPORT_FMT_HTML:
	case REPORT_FMT_TEXT: rc = page_format(r, fmt, o, out, err, errlen); break;
	case REPORT_FMT_CSV:
		rc = csv_write(out, r, o, err, errlen);
		if (rc && !err[0])
			snprintf(err, errlen, "cannot write: %s", err_name(rc));
		break;
	case REPORT_FMT_HGRM: rc = hgrm_write(out, r, o, err, errlen); break;
	case REPORT_FMT_HLOG: rc = hlog_write(out, r, o, err, errlen); break;
	default:
		snprintf(err, errlen, "unknown format");
		rc = -EINVAL;
	}
	text_one_line(err);
	return rc;
}

int report_render(const struct loaded_result *r, enum report_format fmt, FILE *out, char *err,
		  size_t errlen)
{
	return report_render_opts(r, fmt, NULL, out, err, errlen);
}


/* ---- the report folder ------------------------------------------------- */

#define REPORT_DIR_MAX_FILES (CHART_MAX + 7)

struct report_dir_file {
	char name[64];
	enum report_format fmt;
	bool chart_files; /* md: charts referenced as the folder's files */
	const char *raw;  /* a chart's SVG (owned by charts); NULL: rendered */
	bool csv_summary; /* csv: the summary rows */
};

struct report_dir {
	const struct loaded_result *r;
	struct chart_set cs;
	const struct report_trend *trend; /* borrowed; NULL: none */
	struct report_dir_file f[REPORT_DIR_MAX_FILES];
	size_t n;
};

static void dir_add(struct report_dir *d, const char *name, enum report_format fmt,
		    bool chart_files, const char *raw)
{
	struct report_dir_file *f = &d->f[d->n++];
	snprintf(f->name, sizeof f->name, "%s", name);
	f->fmt = fmt;
	f->chart_files = chart_files;
	f->raw = raw;
}

int report_dir_open(struct report_dir **out, const struct loaded_result *r, char *err,
		    size_t errlen)
{
	return report_dir_open_trend(out, r, NULL, err, errlen);
}

int report_dir_open_trend(struct report_dir **out, const struct loaded_result *r,
			  const struct report_trend *trend, char *err, size_t errlen)
{
	char scratch[8];
	if (!err || !errlen) {
		err = scratch;
		errlen = sizeof scratch;
	}
	err[0] = '\0';
	*out = NULL;
	if (!r || !r->root) {
		snprintf(err, errlen, "no result");
		return -EINVAL;
	}
	struct report_dir *d = calloc(1, sizeof *d);
	if (!d || charts_build(r, &d->cs) || (trend && charts_add_trend(&d->cs, trend))) {
		if (d)
			charts_free(&d->cs);
		free(d);
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	d->r = r;
	d->trend = trend;
	for (size_t i = 0; i < d->cs.n; i++) {
		char name[64];
		snprintf(name, sizeof name, "chart-%s.svg", d->cs.c[i].name);
		dir_add(d, name, REPORT_FMT_MD, false, d->cs.c[i].svg);
	}
	dir_add(d, "report.md", REPORT_FMT_MD, true, NULL);
	dir_add(d, "report.html", REPORT_FMT_HTML, false, NULL);
	dir_add(d, "report.txt", REPORT_FMT_TEXT, false, NULL);
	dir_add(d, "report.csv", REPORT_FMT_CSV, false, NULL);
	dir_add(d, "summary.csv", REPORT_FMT_CSV, false, NULL);
	d->f[d->n - 1].csv_summary = true;
	if (r->kind != RESULT_KIND_COMPARE) {
		dir_add(d, "latency.hgrm", REPORT_FMT_HGRM, false, NULL);
		dir_add(d, "latency.hlog", REPORT_FMT_HLOG, false, NULL);
	}
	*out = d;
	return 0;
}

size_t report_dir_count(const struct report_dir *d) { return d->n; }

const char *report_dir_name(const struct report_dir *d, size_t i)
{
	return i < d->n ? d->f[i].name : NULL;
}

int report_dir_write(const struct report_dir *d, size_t i, FILE *out, char *err, size_t errlen)
{
	char scratch[8];
	if (!err || !errlen) {
		err = scratch;
		errlen = sizeof scratch;
	}
	err[0] = '\0';
	if (i >= d->n || !out) {
		snprintf(err, errlen, "no such file");
		return -EINVAL;
	}
	const struct report_dir_file *f = &d->f[i];
	if (f->raw) {
		if (fputs(f->raw, out) < 0) {
			snprintf(err, errlen, "cannot write: %s", err_name(-EIO));
			return -EIO;
		}
		return 0;
	}
	struct report_options o;
	report_options_default(&o);
	if (f->chart_files)
		o.chart_prefix = "";
	o.csv_summary = f->csv_summary;
	o.trend = d->trend;
	return report_render_opts(d->r, f->fmt, &o, out, err, errlen);
}

void report_dir_free(struct report_dir *d)
{
	if (!d)
		return;
	charts_free(&d->cs);
	free(d);
}
