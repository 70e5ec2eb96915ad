/* Tests of the live view's layout (src/cli/live_view.c, cli_live_render)
 * and of the live figures it shows (src/metrics/live.c): every line fits
 * the width at every width, the view keeps to the height, a ramp's ladder
 * keeps its latest steps, and the tracker's last second and phase so far
 * come from the counters it is handed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cli/live_view.h"
#include "metrics/live.h"

static struct live_figs figs(void)
{
	struct live_figs f = {0};
	f.phase = LIVE_MEASURE;
	f.offered_per_s = 12500;
	f.elapsed_ns = 3200000000ull;
	f.total_ns = 10000000000ull;
	f.achieved_per_s = 12487.5;
	f.sent_per_s = 12500;
	f.sec_n = 12487;
	f.sec_p50_ns = 28800; /* "28.8 µs": a two-byte unit */
	f.sec_p99_ns = 1234000;
	f.sec_max_ns = 98700000;
	f.phase_n = 27000;
	f.phase_p50_ns = 30000;
	f.phase_p99_ns = 1500000;
	f.phase_max_ns = 120000000;
	f.completed = 40000;
	f.errors[ERRK_TIMEOUT] = 12;
	f.errors[ERRK_CONNECT] = 3;
	f.errors_total = 15;
	f.status_class[2] = 39000;
	f.status_class[5] = 985;
	f.backlog = 7;
	f.lag_p99_ns = 150000;
	f.conns_open = 64;
	return f;
}

static void test_widths(void **state)
{
	(void)state;
	struct live_figs f = figs();
	struct cli_live_in in = {.cmd = "run", .cur = &f, .n_variants = 1};
	static char lines[CLI_LIVE_MAX_LINES][CLI_LIVE_LINE_CAP];
	for (int cols = 2; cols <= 400; cols++) {
		size_t n = cli_live_render(&in, cols, 24, lines);
		assert_int_equal(n, 7);
		for (size_t i = 0; i < n; i++) {
			size_t c = cli_live_cols(lines[i]);
			assert_true(c <= (size_t)cols - 1);
			assert_true(c >= 1 || cols < 3);
		}
		if (cols >= 80) { /* the figures a person looks for are all there */
			assert_non_null(strstr(lines[0], "3.2s / 10.0s"));
			assert_non_null(strstr(lines[0], "6.8s left"));
			assert_non_null(strstr(lines[1], "offered 12,500/s"));
			assert_non_null(strstr(lines[1], "achieved 12,488/s"));
			assert_non_null(strstr(lines[2], "p50 28.8 µs"));
			assert_non_null(strstr(lines[2], "max 98.7 ms"));
			assert_non_null(strstr(lines[3], "p99 1.50 ms"));
			assert_non_null(strstr(lines[4], "5xx 985"));
			assert_non_null(strstr(lines[5], "connect 3"));
			assert_non_null(strstr(lines[5], "timeout 12"));
			assert_non_null(strstr(lines[6], "backlog  7"));
		}
		if (cols >= 100)
			assert_non_null(strstr(lines[0], "[#"));
	}
	/* the µ is one column: a line that holds one fills exactly its width */
	assert_int_equal(cli_live_cols("28.8 µs"), 7);
}

static void test_heights(void **state)
{
	(void)state;
	struct live_figs f = figs();
	f.step = 9;
	f.planned_steps = 12;
	struct cli_live_step steps[12];
	for (int i = 0; i < 12; i++) {
		steps[i] = (struct cli_live_step){.offered_per_s = 1000.0 * (i + 1),
						  .achieved_per_s = 1000.0 * (i + 1),
						  .p99_ns = 2000000};
		snprintf(steps[i].verdict, sizeof steps[i].verdict, "%s",
			 i == 7 ? "Fail p99" : "Pass");
	}
	struct cli_live_in in = {.cmd = "ramp",
				 .cur = &f,
				 .n_variants = 1,
				 .steps = steps,
				 .n_steps = 8,
				 .first_step = 1};
	static char lines[CLI_LIVE_MAX_LINES][CLI_LIVE_LINE_CAP];
	for (int rows = 1; rows <= 60; rows++) {
		size_t n = cli_live_render(&in, 100, rows, lines);
		assert_true(n <= (size_t)(rows > 1 ? rows - 1 : 0));
		assert_true(n <= CLI_LIVE_MAX_LINES);
		if (rows >= 9) /* the live lines first; the ladder gets what is left */
			assert_non_null(strstr(lines[n - 7], "pacer ramp step 9/12"));
		if (rows >= 16) { /* all 8 steps, in order, the last failing */
			assert_int_equal(n, 15);
			assert_true(!strncmp(lines[0], "step 1 ", 7));
			assert_non_null(strstr(lines[7], "Fail p99"));
		} else if (rows >= 10) { /* the latest steps */
			assert_non_null(strstr(lines[n - 8], "Fail p99"));
			assert_null(strstr(lines[0], "step 1 "));
		}
	}
}

static void test_variants(void **state)
{
	(void)state;
	struct live_figs cur = figs(), a = figs();
	a.achieved_per_s = 999;
	const char *names[] = {"old", "new\033[2J"};
	const struct live_figs *last[] = {&a, NULL};
	struct cli_live_in in = {.cmd = "compare",
				 .cur = &cur,
				 .variant = 1,
				 .n_variants = 2,
				 .names = names,
				 .last = last};
	static char lines[CLI_LIVE_MAX_LINES][CLI_LIVE_LINE_CAP];
	size_t n = cli_live_render(&in, 80, 24, lines);
	assert_int_equal(n, 9);
	assert_non_null(strstr(lines[0], "pacer compare new?[2J"));
	for (size_t i = 0; i < n; i++)
		assert_null(strchr(lines[i], '\033'));
	assert_non_null(strstr(lines[7], "  old  999/s"));
	assert_non_null(strstr(lines[8], "> new?[2J  12,488/s"));
}

static void test_line(void **state)
{
	(void)state;
	struct live_figs f = figs();
	struct cli_live_in in = {.cmd = "run", .cur = &f, .n_variants = 1};
	char line[CLI_LIVE_LINE_CAP];
	cli_live_render_line(&in, 200, line, sizeof line);
	assert_string_equal(line, "[run measure] 3.2s  12,488/s of 12,500/s  p99 1.23 ms  "
				  "errors 15  backlog 7");
	cli_live_render_line(&in, 30, line, sizeof line);
	assert_true(cli_live_cols(line) <= 29);
	assert_null(strchr(line, '\033'));
}

/* The tracker: the last second between two ticks, the phase from the
 * measured phase's start, the step's counters from its start. */
static void test_track(void **state)
{
	(void)state;
	static struct engine_live a, b, c;
	static struct live_track t;
	memset(&a, 0, sizeof a);
	a.completed = 100; /* before the step: not counted */
	a.errors[ERRK_READ] = 5;
	a.latency_bucket[engine_live_bucket(50000)] = 100;
	live_track_begin(&t, &a, 1000000000ull, 2, 5, 500);
	b = a;
	b.completed += 500;
	b.sent += 500;
	b.latency_bucket[engine_live_bucket(1000000)] += 500; /* warm-up: 1 ms */
	struct engine_progress p = {.elapsed_ns = 1000000000ull,
				    .total_ns = 3000000000ull,
				    .in_warmup = true,
				    .max_ns = 1000000};
	live_track_tick(&t, &b, &p, 2000000000ull);
	assert_int_equal(t.figs.phase, LIVE_WARMUP);
	assert_true(t.figs.achieved_per_s > 499.9 && t.figs.achieved_per_s < 500.1);
	assert_int_equal(t.figs.sec_n, 500);
	assert_int_equal(t.figs.phase_n, 500);
	assert_int_equal(t.figs.completed, 500);
	assert_int_equal(t.figs.errors_total, 0);
	/* the sec p50 is within the bucket of 1 ms */
	assert_true(t.figs.sec_p50_ns > 900000 && t.figs.sec_p50_ns <= 1000000);
	c = b;
	c.completed += 1000; /* measured: 1000 in 2 s at 10 ms */
	c.errors[ERRK_TIMEOUT] += 2;
	c.status_class[2] += 1000;
	c.latency_bucket[engine_live_bucket(10000000)] += 1000;
	p = (struct engine_progress){.elapsed_ns = 3000000000ull,
				     .total_ns = 3000000000ull,
				     .max_ns = 11000000,
				     .max_measure_ns = 11000000};
	live_track_tick(&t, &c, &p, 4000000000ull);
	assert_int_equal(t.figs.phase, LIVE_DRAIN); /* at its end */
	assert_true(t.figs.achieved_per_s > 499.9 && t.figs.achieved_per_s < 500.1);
	assert_int_equal(t.figs.phase_n, 1000); /* the warm-up's 500 left out */
	assert_true(t.figs.phase_p99_ns > 9000000 && t.figs.phase_p99_ns <= 10000000);
	assert_int_equal(t.figs.phase_max_ns, 11000000);
	assert_int_equal(t.figs.completed, 1500);
	assert_int_equal(t.figs.errors[ERRK_TIMEOUT], 2);
	assert_int_equal(t.figs.errors_total, 2);
	assert_int_equal(t.figs.status_class[2], 1000);
	assert_int_equal(t.figs.step, 2);
	/* the measured phase marked between ticks counts from there */
	live_track_begin(&t, &a, 1000000000ull, 0, 0, 500);
	live_track_phase_start(&t, &b); /* b: the warm-up's 500 in */
	live_track_tick(&t, &c, &p, 2000000000ull);
	assert_int_equal(t.figs.phase_n, 1000);
	live_track_phase_start(&t, &c); /* once a step */
	assert_int_equal(t.at_phase.completed, b.completed);
	/* and the JSON of it */
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	const struct live_figs *v[] = {&t.figs};
	const char *names[] = {"a\"b"};
	assert_int_equal(live_json_write(f, v, names, 1), 0);
	fclose(f);
	assert_non_null(strstr(buf, "\"name\":\"a\\\"b\""));
	assert_non_null(strstr(buf, "\"phase\":\"drain\""));
	assert_non_null(strstr(buf, "\"timeout\":2"));
	assert_non_null(strstr(buf, "\"2xx\":1000"));
	assert_non_null(strstr(buf, "\"max_s\":0.011"));
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_widths),   cmocka_unit_test(test_heights),
		cmocka_unit_test(test_variants), cmocka_unit_test(test_line),
		cmocka_unit_test(test_track),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
