/* pacer calibrate — what this machine lets pacer promise, on its own: the
 * machine's floor (generator.floor, docs/selfcheck.md) measured on worker
 * threads set up as a run sets them up, without any load. */
#include <math.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/help.h"
#include "cli/opts.h"
#include "engine/engine.h"
#include "doc/json_parts.h"
#include "util/err.h"
#include "util/jsonw.h"
#include "util/sysinfo.h"
#include "util/units.h"

static const struct cli_example calibrate_examples[] = {
	{"pacer calibrate", "one worker thread for 1 s: how late it wakes, and a loopback round trip"},
	{"pacer calibrate --threads 2 --precise --realtime",
	 "two threads, waking as --precise pacing does, at a real-time priority"},
	{"pacer calibrate --json", "the same as JSON (the generator.floor of a result)"},
};

static const struct cli_help cli_help_calibrate = {
	.name = "calibrate",
	.summary = "what this machine lets pacer promise: wake-up lateness, loopback round trip",
	.synopsis = "pacer calibrate [options]",
	.description = "Measures, without any load, how late pacer's worker threads wake from a "
		       "timed sleep on this machine (by the call and timer slack pacing uses) and "
		       "what one loopback round trip takes: the floor every run records as "
		       "generator.floor before its load (--calibrate). No latency difference "
		       "below the wake-up p99 is pacer's to promise here.",
	.examples = calibrate_examples,
	.n_examples = sizeof calibrate_examples / sizeof calibrate_examples[0],
	.exits = cli_exits_plain,
	.n_exits = sizeof cli_exits_plain / sizeof cli_exits_plain[0],
	.see = "docs/selfcheck.md",
};

/* Prints the floor in words. */
static void print_floor(FILE *f, const struct gen_floor *fl, uint32_t threads, int realtime,
			double steal_pct)
{
	char a[32], b[32], c[32];
	fprintf(f, "pacer calibrate: %u worker thread%s, %s, timer slack %lu ns%s\n", threads,
		threads == 1 ? "" : "s",
		!strcmp(fl->method, "sleep") ? "waking by clock_nanosleep (batched pacing)"
					     : "waking by the loop's epoll wait (--precise)",
		(unsigned long)fl->slack_ns,
		realtime == 0 ? ", real-time priority (SCHED_RR 1)"
		: realtime < 0 ? ", real-time priority refused"
			       : "");
	fprintf(f, "  wake-up lateness     p50 %s, p99 %s, max %s (%llu timed sleeps)\n",
		units_fmt_duration(a, sizeof a, (double)fl->wake_p50_ns),
		units_fmt_duration(b, sizeof b, (double)fl->wake_p99_ns),
		units_fmt_duration(c, sizeof c, (double)fl->wake_max_ns),
		(unsigned long long)fl->samples);
	if (fl->rtt_known)
		fprintf(f, "  loopback round trip  p50 %s, p99 %s, %.1f µs of CPU each (%llu)\n",
			units_fmt_duration(a, sizeof a, (double)fl->rtt_p50_ns),
			units_fmt_duration(b, sizeof b, (double)fl->rtt_p99_ns), fl->rtt_cpu_ns / 1e3,
			(unsigned long long)fl->rtt_samples);
	if (!isnan(steal_pct))
		fprintf(f, "  hypervisor steal     %.2f %% of the generator's CPUs meanwhile%s\n", steal_pct,
			steal_pct >= 1 ? ": the host took them; measure again on a quieter machine" : "");
	fprintf(f, "  no latency difference below %s is pacer's to promise on this machine\n",
		units_fmt_duration(b, sizeof b, (double)fl->wake_p99_ns));
}

int cmd_calibrate(int argc, char **argv)
{
	uint64_t dur_ns = 1000000000ull;
	uint32_t threads = 1;
	bool precise = false, realtime = false, json = false, help = false;
	struct opt tab[] = {
		{'h', "help", OPT_HELP, &help, NULL, NULL, "show this help", false},
		{'d', "duration", OPT_DURATION, &dur_ns, "D", "1s",
		 "how long to time sleeps (the round trips take half as long again)", false},
		{0, "json", OPT_FLAG, &json, NULL, NULL,
		 "print JSON: the generator object of a result (realtime, floor)", false},
		{0, "precise", OPT_FLAG, &precise, NULL, NULL,
		 "wake as --precise pacing does (the loop's epoll wait), not by clock_nanosleep",
		 false},
		{0, "realtime", OPT_FLAG, &realtime, NULL, NULL,
		 "at a real-time priority, as --realtime runs (root or CAP_SYS_NICE)", false},
		{'t', "threads", OPT_U32, &threads, "T", "1", "worker threads", false},
	};
	size_t ntab = sizeof tab / sizeof tab[0];
	const char *pos[1];
	size_t npos = 0;
	char err[512];
	int prc = opts_parse(tab, ntab, argc, argv, pos, 0, &npos, err, sizeof err);
	if (prc == 1) {
		cli_help_print(stdout, &cli_help_calibrate, tab, ntab);
		return EXIT_OK;
	}
	if (prc < 0) {
		fprintf(stderr, "pacer calibrate: %s\n", err);
		return EXIT_USAGE;
	}
	if (threads < 1 || threads > 256) {
		fprintf(stderr, "pacer calibrate: --threads %u: from 1 to 256\n", threads);
		return EXIT_USAGE;
	}
	if (dur_ns < 10000000ull || dur_ns > 60000000000ull) {
		fprintf(stderr, "pacer calibrate: --duration: from 10ms to 60s\n");
		return EXIT_USAGE;
	}
	/* an engine that never starts a step: its workers are only woken to
	 * time their sleeps (no connection is made to the address) */
	static const char req[] = "GET / HTTP/1.1\r\nHost: calibrate\r\n\r\n";
	struct engine_req r = {.buf = req, .len = sizeof req - 1};
	struct engine_cfg cfg = {.reqs = &r, .n_reqs = 1, .open_loop = true, .connections = threads,
				 .threads = threads, .timeout_ns = 1000000000ull, .burst = 1,
				 .send_window_ns = precise ? 0 : 1000000ull, .realtime = realtime};
	cfg.addr.ss.ss_family = AF_INET; /* a TCP target: batched pacing is possible */
	cfg.addr.len = sizeof(struct sockaddr_in);
	struct engine *e;
	int rc = engine_open(&e, &cfg);
	if (rc) {
		fprintf(stderr, "pacer calibrate: %s\n", err_name(rc));
		return EXIT_RUNTIME;
	}
	int rt = engine_realtime(e);
	if (realtime && rt < 0)
		fprintf(stderr, "pacer calibrate: --realtime refused (%s): at the normal priority\n",
			err_name(rt));
	struct steal_sample s0, s1;
	sysinfo_steal_sample(&s0);
	uint64_t t0 = 0;
	struct gen_floor fl;
	rc = engine_floor(e, dur_ns, true, &fl);
	sysinfo_steal_sample(&s1);
	struct steal_span span;
	double steal = sysinfo_steal_between(&s0, &s1, t0, &span) && span.gen_span_ns
			       ? 100.0 * (double)span.gen_ns / (double)span.gen_span_ns
			       : NAN;
	engine_close(e);
	if (rc || !fl.known) {
		fprintf(stderr, "pacer calibrate: %s\n", rc ? err_name(rc) : "no sleep was timed");
		return EXIT_RUNTIME;
	}
	if (json) {
		struct report_ctx ctx = {.floor = &fl, .realtime = rt};
		struct jsonw j;
		jw_init(&j, stdout, 1);
		jw_obj(&j);
		rj_gen_session(&j, &ctx);
		jw_obj_end(&j);
		fputc('\n', stdout);
	} else {
		print_floor(stdout, &fl, threads, rt, steal);
	}
	return fflush(stdout) ? EXIT_RUNTIME : EXIT_OK;
}
