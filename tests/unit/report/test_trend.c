/* The trend chart of pacer report --history (src/report/trend_chart.c and
 * its section): drawn in HTML and Markdown-with-charts when given points,
 * comparable runs apart from the others; absent otherwise. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "common/doc_fixtures.h"
#include "report/render.h"

static char *render(const struct report_trend *t, enum report_format fmt, const char *prefix)
{
	struct loaded_result r;
	char err[256];
	assert_int_equal(fx_load(fx_run(), &r, err, sizeof err), 0);
	struct report_options o;
	report_options_default(&o);
	o.trend = t;
	o.chart_prefix = prefix;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_non_null(f);
	assert_int_equal(report_render_opts(&r, fmt, &o, f, err, sizeof err), 0);
	fclose(f);
	result_free(&r);
	return buf;
}

static const struct report_trend_point pts[] = {
	{.id = 1, .v = {1000, 5000}, .comparable = true},
	{.id = 2, .v = {1100, NAN}, .comparable = true},
	{.id = 5, .v = {3000, 9000}, .comparable = false, .why = "rate"},
	{.id = 6, .v = {3100, 9100}, .comparable = false, .why = "cpu_model"},
	{.id = 7, .v = {3200, 9200}, .comparable = false, .why = "rate"},
	{.id = 8, .v = {3300, 9300}, .comparable = false, .why = "workload"},
	{.id = 9, .v = {3400, 9400}, .comparable = false, .why = "pacer major"},
};

static void test_html_and_md_get_the_chart(void **state)
{
	(void)state;
	struct report_trend t = {.source = "perf.db",
				 .metrics = {"p50 (ms)", "p99 (ms)"},
				 .n_metrics = 2,
				 .pts = pts,
				 .n = 7};
	char *html = render(&t, REPORT_FMT_HTML, NULL);
	assert_non_null(strstr(html, "Trend over 7 stored runs of perf.db"));
	assert_non_null(strstr(html, "id=\"trend\""));
	assert_non_null(strstr(html, "comparable with this run"));
	/* the others by the field pacer diff names: three apart, the rest together */
	assert_non_null(strstr(html, "not comparable: rate differs"));
	assert_non_null(strstr(html, "not comparable: cpu_model differs"));
	assert_non_null(strstr(html, "not comparable: workload differs"));
	assert_null(strstr(html, "pacer major differs"));
	assert_non_null(strstr(html, "not comparable: another field differs"));
	assert_null(strstr(html, "other table or hardware"));
	assert_non_null(strstr(html, "p99 (ms)"));
	free(html);
	char *md = render(&t, REPORT_FMT_MD, "");
	assert_non_null(strstr(md, "## Trend"));
	assert_non_null(strstr(md, "(chart-trend.svg)"));
	free(md);
	/* runs 1, 2 and 3: the run axis is ticked at whole ids (it read 1.0, 1.5, ...) */
	struct report_trend t3 = {
		.source = "perf.db", .metrics = {"p50 (ms)"}, .n_metrics = 1, .pts = pts, .n = 2};
	html = render(&t3, REPORT_FMT_HTML, NULL);
	const char *fig = strstr(html, "<figure class=\"chart\" id=\"chart-trend\">");
	assert_non_null(fig);
	const char *end = strstr(fig, "</figure>");
	assert_non_null(end);
	for (const char *p = fig; p < end; p++)
		assert_false(!strncmp(p, ">1.5<", 5) || !strncmp(p, ">1.0<", 5));
	assert_true(strstr(fig, ">2<") && strstr(fig, ">2<") < end);
	free(html);
	/* text has no charts: the section is not there either */
	char *txt = render(&t, REPORT_FMT_TEXT, NULL);
	assert_null(strstr(txt, "Trend over"));
	free(txt);
}

static void test_no_points_no_chart(void **state)
{
	(void)state;
	char *html = render(NULL, REPORT_FMT_HTML, NULL);
	assert_null(strstr(html, "Trend over"));
	free(html);
	static const struct report_trend_point none[] = {{.id = 1, .v = {NAN}, .comparable = true}};
	struct report_trend t = {.source = "perf.db", .metrics = {"capacity (req/s)"},
				 .n_metrics = 1, .pts = none, .n = 1};
	html = render(&t, REPORT_FMT_HTML, NULL);
	assert_null(strstr(html, "Trend over"));
	assert_null(strstr(html, "id=\"trend\""));
	free(html);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_html_and_md_get_the_chart),
		cmocka_unit_test(test_no_points_no_chart),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
