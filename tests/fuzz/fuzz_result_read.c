/* libFuzzer harness for saved results (src/doc/read.c) and every
 * report writer behind them (src/report/).
 *
 * Input: the bytes of a result file. On failure: a negative PACER_E* code,
 * no tree kept, and one terminated line that names the file. On success: a
 * known kind and major version 1; then every format is rendered (md, html,
 * text, csv and, for run and ramp, hgrm and hlog; plus md with chart files
 * and each ramp step's hgrm) and must either succeed or fail with a one-line
 * message and a PACER_E* code, never crash or run away; HTML output holds no
 * <script element and every <figure> is closed; Markdown has no '<' that is
 * not escaped; rendering twice gives the same bytes. Violations abort(). */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/render.h"
#include "doc/read.h"
#include "util/err.h"

#define FUZZ_NAME "fuzz_result_read"
#include "common/fuzz_check.h"

static bool one_line(const char *s, size_t cap)
{
	return memchr(s, '\0', cap) != NULL && strchr(s, '\n') == NULL && s[0] != '\0';
}

static size_t count(const char *hay, const char *needle)
{
	size_t n = 0;
	for (const char *p = hay; (p = strstr(p, needle)); p++)
		n++;
	return n;
}

/* Render into memory; NULL when the writer refused (checked here). */
static char *render(const struct loaded_result *r, enum report_format fmt,
		    const struct report_options *o)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	CHECK(f != NULL);
	char err[512];
	memset(err, 0x5a, sizeof err);
	int rc = report_render_opts(r, fmt, o, f, err, sizeof err);
	CHECK(fclose(f) == 0);
	if (rc) {
		CHECK(rc == PACER_EPARSE || rc == PACER_EUNSUPPORTED || rc == -ENOMEM);
		CHECK(one_line(err, sizeof err));
		free(buf);
		return NULL;
	}
	CHECK(len == strlen(buf));
	return buf;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct loaded_result r;
	char err[512];
	memset(err, 0x5a, sizeof err);
	int rc = result_read_mem(&r, (const char *)data, size, "fuzz.json", err, sizeof err);
	if (rc) {
		CHECK(rc == PACER_EPARSE || rc == PACER_EUNSUPPORTED || rc == PACER_ETOOBIG ||
		      rc == -ENOMEM);
		CHECK(r.root == NULL && r.name == NULL);
		CHECK(one_line(err, sizeof err));
		CHECK(strncmp(err, "fuzz.json: ", 11) == 0);
		return 0;
	}
	CHECK(r.root != NULL && r.schema_major >= RESULT_SCHEMA_OLDEST &&
	      r.schema_major <= RESULT_SCHEMA_MAJOR);
	CHECK(r.kind == RESULT_KIND_RUN || r.kind == RESULT_KIND_RAMP ||
	      r.kind == RESULT_KIND_COMPARE);
	CHECK(strlen(r.id) == 16);

	for (int fmt = REPORT_FMT_MD; fmt <= REPORT_FMT_HLOG; fmt++) {
		char *a = render(&r, (enum report_format)fmt, NULL);
		if (fmt <= REPORT_FMT_CSV)
			CHECK(a != NULL); /* the document formats never refuse a loaded result */
		if (r.kind == RESULT_KIND_COMPARE && fmt >= REPORT_FMT_HGRM)
			CHECK(a == NULL);
		if (!a)
			continue;
		if (fmt == REPORT_FMT_HTML) {
			CHECK(strstr(a, "<script") == NULL);
			CHECK(count(a, "<figure") == count(a, "</figure>"));
			CHECK(count(a, "<svg ") == count(a, "</svg>"));
			CHECK(strstr(a, "</html>\n") != NULL);
		}
		if (fmt == REPORT_FMT_MD)
			for (const char *p = a; (p = strchr(p, '<')); p++)
				CHECK(p > a && p[-1] == '\\');
		if (fmt == REPORT_FMT_TEXT)
			for (const char *p = a; *p; p++)
				CHECK((unsigned char)*p >= 0x20 || *p == '\n');
		char *b = render(&r, (enum report_format)fmt, NULL);
		CHECK(b != NULL && strcmp(a, b) == 0);
		free(a);
		free(b);
	}
	struct report_options o;
	report_options_default(&o);
	o.chart_prefix = "";
	free(render(&r, REPORT_FMT_MD, &o));
	if (r.kind == RESULT_KIND_RAMP) {
		size_t n = rr_len(r.root, "steps");
		for (size_t i = 1; i <= n && i <= 4; i++) {
			report_options_default(&o);
			o.step = (unsigned)i;
			o.timing = i % 2 ? "service_time" : "latency";
			free(render(&r, REPORT_FMT_HGRM, &o));
			free(render(&r, REPORT_FMT_HLOG, &o));
		}
	}
	result_free(&r);
	return 0;
}
