/* pacer — report entry points: one format to a stream, or the whole report
 * folder (see render.h). */
#include "report/render.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "report/render_int.h"
#include "util/afile.h"
#include "util/err.h"
#include "util/file.h"
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

static int doc_format(const struct loaded_result *r, enum report_format fmt,
		      const struct report_options *o, FILE *out, char *err, size_t errlen)
{
	struct chart_set cs;
	struct doc d;
	doc_init(&d);
	int rc = 0;
	bool charts = fmt == REPORT_FMT_HTML || (fmt == REPORT_FMT_MD && o->chart_prefix);
	if (charts)
		rc = charts_build(r, &cs);
	else
		memset(&cs, 0, sizeof cs);
	if (!rc)
		rc = report_doc_build(r, &cs, &d);
	if (rc) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	switch (fmt) {
	case REPORT_FMT_MD: rc = md_write(out, &d, o->chart_prefix); break;
	case REPORT_FMT_HTML: rc = html_write(out, &d, &cs); break;
	default: rc = txt_write(out, &d); break;
	}
	if (rc)
		snprintf(err, errlen, "cannot write: %s", err_name(rc));
out:
	doc_free(&d);
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
	case REPORT_FMT_TEXT: rc = doc_format(r, fmt, o, out, err, errlen); break;
	case REPORT_FMT_CSV:
		rc = csv_write(out, r, err, errlen);
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


static int write_one(const char *dir, const char *name, const struct loaded_result *r,
		     enum report_format fmt, const struct report_options *o, const char *raw,
		     char *err, size_t errlen)
{
	size_t n = strlen(dir) + strlen(name) + 2;
	char *path = malloc(n);
	if (!path) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	snprintf(path, n, "%s/%s", dir, name);
	struct afile af;
	int rc = afile_open(&af, path);
	if (rc) {
		snprintf(err, errlen, "%s: cannot create: %s", path, err_name(rc));
		free(path);
		return rc;
	}
	char e2[512] = "";
	if (raw)
		rc = fputs(raw, af.f) < 0 ? -EIO : 0;
	else
		rc = report_render_opts(r, fmt, o, af.f, e2, sizeof e2);
	if (rc) {
		afile_abort(&af);
		snprintf(err, errlen, "%s: %s", path, e2[0] ? e2 : err_name(rc));
	} else {
		rc = afile_commit(&af);
		if (rc)
			snprintf(err, errlen, "%s: cannot write: %s", path, err_name(rc));
	}
	free(path);
	return rc;
}

int report_write_dir_loaded(const struct loaded_result *r, const char *dir, char *err,
			    size_t errlen)
{
	char scratch[8];
	if (!err || !errlen) {
		err = scratch;
		errlen = sizeof scratch;
	}
	err[0] = '\0';
	if (!r || !r->root || !dir || !*dir) {
		snprintf(err, errlen, "no result or no folder");
		return -EINVAL;
	}
	int rc = file_mkdir_p(dir);
	if (rc) {
		snprintf(err, errlen, "%s: cannot create the folder: %s", dir, err_name(rc));
		text_one_line(err);
		return rc;
	}
	struct report_options o;
	report_options_default(&o);
	struct chart_set cs;
	rc = charts_build(r, &cs);
	if (rc) {
		snprintf(err, errlen, "out of memory");
		return rc;
	}
	for (size_t i = 0; i < cs.n && !rc; i++) {
		char name[64];
		snprintf(name, sizeof name, "chart-%s.svg", cs.c[i].name);
		rc = write_one(dir, name, r, REPORT_FMT_MD, &o, cs.c[i].svg, err, errlen);
	}
	charts_free(&cs);
	struct report_options md = o;
	md.chart_prefix = "";
	if (!rc)
		rc = write_one(dir, "report.md", r, REPORT_FMT_MD, &md, NULL, err, errlen);
	if (!rc)
		rc = write_one(dir, "report.html", r, REPORT_FMT_HTML, &o, NULL, err, errlen);
	if (!rc)
		rc = write_one(dir, "report.txt", r, REPORT_FMT_TEXT, &o, NULL, err, errlen);
	if (!rc)
		rc = write_one(dir, "report.csv", r, REPORT_FMT_CSV, &o, NULL, err, errlen);
	if (!rc && r->kind != RESULT_KIND_COMPARE) {
		rc = write_one(dir, "latency.hgrm", r, REPORT_FMT_HGRM, &o, NULL, err, errlen);
		if (!rc)
			rc = write_one(dir, "latency.hlog", r, REPORT_FMT_HLOG, &o, NULL, err, errlen);
	}
	text_one_line(err);
	return rc;
}

int report_write_dir(const char *result_path, const char *dir, char *err, size_t errlen)
{
	struct loaded_result r;
	int rc = result_read_file(&r, result_path, err, errlen);
	if (rc)
		return rc;
	rc = report_write_dir_loaded(&r, dir, err, errlen);
	result_free(&r);
	return rc;
}
