/* pacer run — options → plan → engine → reports. The only layer that
 * touches argv, stdout, signals and exit codes. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/opts.h"
#include "engine/engine.h"
#include "http/req.h"
#include "net/sock.h"
#include "plan/plan.h"
#include "report/report.h"
#include "stats/hist_io.h"
#include "util/afile.h"
#include "util/clock.h"
#include "util/err.h"
#include "util/sysinfo.h"
#include "util/units.h"

#define MAX_BODY_BYTES (64ull * 1024 * 1024)

static void usage(FILE *f, struct opt *tab, size_t n)
{
	fprintf(f, "usage: pacer run URL [options]\n\n"
		   "Open loop with --rate (latency from each request's scheduled time), closed loop "
		   "without.\n\n");
	opts_help(f, tab, n);
	fprintf(f, "\nExit codes: 0 finished, 2 usage error, 3 runtime failure, 130 interrupted.\n"
		   "See docs/run.md.\n");
}

/* Read a whole file of at most MAX_BODY_BYTES. */
static int read_file(const char *path, char **out, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return -errno;
	size_t cap = 4096, n = 0;
	char *buf = malloc(cap);
	if (!buf) {
		fclose(f);
		return -ENOMEM;
	}
	for (;;) {
		if (n == cap) {
			if (cap >= MAX_BODY_BYTES) {
				free(buf);
				fclose(f);
				return PACER_ETOOBIG;
			}
			cap *= 2;
			char *nb = realloc(buf, cap);
			if (!nb) {
				free(buf);
				fclose(f);
				return -ENOMEM;
			}
			buf = nb;
		}
		size_t r = fread(buf + n, 1, cap - n, f);
		n += r;
		if (r == 0)
			break;
	}
	int rc = ferror(f) ? -EIO : 0;
	fclose(f);
	if (rc) {
		free(buf);
		return rc;
	}
	*out = buf;
	*len = n;
	return 0;
}

static void progress_line(struct engine *e)
{
	struct engine_progress p;
	engine_progress(e, &p);
	char a[32], b[32], c[32];
	if (p.total_ns)
		snprintf(a, sizeof a, "%5.1fs/%.1fs", (double)p.elapsed_ns / 1e9,
			 (double)p.total_ns / 1e9);
	else
		snprintf(a, sizeof a, "%5.1fs", (double)p.elapsed_ns / 1e9);
	printf("\r\033[K[%s] %s  %s req/s  p99 %s  errors %llu", a, p.in_warmup ? "warm-up" : "measure",
	       units_fmt_thousands(b, sizeof b, p.rate_per_s, 0),
	       p.p99_ns ? units_fmt_duration(c, sizeof c, (double)p.p99_ns) : "-",
	       (unsigned long long)p.errors);
	fflush(stdout);
}

/* Wait for the engine, handling SIGINT/SIGTERM and the progress line.
 * Returns true when interrupted. */
static bool wait_engine(struct engine *e, bool progress)
{
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	bool interrupted = false;
	uint64_t next_draw = clock_now_ns() + NS_PER_S;
	while (!engine_done(e)) {
		struct timespec ts = {0, 100 * 1000 * 1000};
		int sig = sigtimedwait(&set, NULL, &ts);
		if (sig == SIGINT || sig == SIGTERM) {
			interrupted = true;
			engine_interrupt(e);
		}
		if (progress && clock_now_ns() >= next_draw) {
			progress_line(e);
			next_draw += NS_PER_S;
		}
	}
	if (progress) {
		printf("\r\033[K");
		fflush(stdout);
	}
	return interrupted;
}

static int write_outputs(const struct report_ctx *ctx)
{
	const struct run_plan *p = ctx->plan;
	int rc = 0;
	if (p->out_path) {
		struct afile af;
		rc = afile_open(&af, p->out_path);
		if (!rc) {
			rc = report_json(af.f, ctx);
			if (rc)
				afile_abort(&af);
			else
				rc = afile_commit(&af);
		}
		if (rc) {
			fprintf(stderr, "pacer run: cannot write --out %s: %s\n", p->out_path,
				err_name(rc));
			return rc;
		}
	}
	if (p->hgrm_path) {
		struct afile af;
		rc = afile_open(&af, p->hgrm_path);
		if (!rc) {
			rc = hist_write_hgrm(af.f, &ctx->res->measure.timing[TIM_LATENCY], 1e6);
			if (rc)
				afile_abort(&af);
			else
				rc = afile_commit(&af);
		}
		if (rc) {
			fprintf(stderr, "pacer run: cannot write --hgrm %s: %s\n", p->hgrm_path,
				err_name(rc));
			return rc;
		}
	}
	return 0;
}

int cmd_run(int argc, char **argv)
{
	struct run_plan plan;
	plan_defaults(&plan);
	plan.argc = argc;
	plan.argv = argv;
	struct opt_list headers = {0};
	const char *body_arg = NULL, *arrival = NULL;
	bool help = false;
	struct opt tab[] = {
		{0, "arrival", OPT_STR, &arrival, "constant|poisson", "constant", "spacing of due times (open loop)", false},
		{0, "body", OPT_STR, &body_arg, "DATA|@FILE", NULL, "request body, literal or from a file", false},
		{'c', "connections", OPT_U32, &plan.connections, "N", "64", "open loop: most connections (closed loop: same as --concurrency)", false},
		{0, "concurrency", OPT_U32, &plan.concurrency, "P", "10", "closed loop: connections each with one request outstanding", false},
		{0, "drain", OPT_DURATION, &plan.drain_ns, "D", "= --timeout", "after the measured phase, wait this long for responses", false},
		{'d', "duration", OPT_DURATION, &plan.duration_ns, "D", "10s", "measured phase length", false},
		{'H', "header", OPT_STRLIST, &headers, "'Name: value'", NULL, "extra request header (repeatable)", false},
		{'h', "help", OPT_HELP, &help, NULL, NULL, "show this help", false},
		{0, "hgrm", OPT_STR, &plan.hgrm_path, "FILE", NULL, "write the latency spectrum as HdrHistogram .hgrm (ms)", false},
		{'X', "method", OPT_STR, &plan.method, "M", "GET", "request method (POST when a body is given)", false},
		{'o', "out", OPT_STR, &plan.out_path, "FILE", NULL, "write the JSON result (docs/result.md)", false},
		{'q', "quiet", OPT_FLAG, &plan.quiet, NULL, NULL, "no progress line, no summary", false},
		{'r', "rate", OPT_RATE, &plan.rate_per_s, "R", NULL, "open loop: offered requests/s (k, M suffixes)", false},
		{'n', "requests", OPT_COUNT, &plan.requests, "N", NULL, "closed loop: stop after N requests", false},
		{0, "seed", OPT_COUNT, &plan.seed, "S", "1", "seed of the Poisson schedule", false},
		{0, "spin", OPT_DURATION, &plan.spin_ns, "D", "100us", "open loop: poll instead of sleeping this close to a due time (0: always sleep)", false},
		{'t', "threads", OPT_U32, &plan.threads, "T", "1", "worker threads", false},
		{0, "timeout", OPT_DURATION, &plan.timeout_ns, "D", "10s", "per-request timeout: close, count, reconnect", false},
		{'w', "warmup", OPT_DURATION, &plan.warmup_ns, "D", "0s", "warm-up phase, run but not counted", false},
	};
	size_t ntab = sizeof tab / sizeof tab[0];
	const char *pos[4];
	size_t npos = 0;
	char err[512];
	int ret = EXIT_USAGE;
	char *body_buf = NULL;
	char *req = NULL;

	int prc = opts_parse(tab, ntab, argc, argv, pos, 4, &npos, err, sizeof err);
	if (prc == 1) {
		usage(stdout, tab, ntab);
		ret = 0;
		goto out;
	}
	if (prc < 0) {
		fprintf(stderr, "pacer run: %s\n", err);
		goto out;
	}
	if (npos != 1) {
		fprintf(stderr, npos ? "pacer run: expected one URL, got %zu arguments\n"
				     : "pacer run: missing URL (usage: pacer run URL [options]; see --help)\n",
			npos);
		goto out;
	}
	plan.url_str = pos[0];
	const char *why = NULL;
	if (url_parse(&plan.url, plan.url_str, &why) < 0) {
		fprintf(stderr, "pacer run: bad URL '%s': %s\n", plan.url_str, why ? why : "not understood");
		goto out;
	}
	if (plan.url.tls) {
		fprintf(stderr, "pacer run: %s: https is not supported yet (plain http:// only)\n",
			plan.url_str);
		goto out;
	}
	plan.open_loop = opts_given(tab, ntab, "rate");
	plan.duration_given = opts_given(tab, ntab, "duration");
	if (!plan.open_loop && opts_given(tab, ntab, "connections") &&
	    !opts_given(tab, ntab, "concurrency"))
		plan.concurrency = plan.connections;
	if (!opts_given(tab, ntab, "drain"))
		plan.drain_ns = plan.timeout_ns;
	if (arrival) {
		if (strcmp(arrival, "constant") == 0)
			plan.arrival = SCHED_CONSTANT;
		else if (strcmp(arrival, "poisson") == 0)
			plan.arrival = SCHED_POISSON;
		else {
			fprintf(stderr, "pacer run: --arrival '%s': expected constant or poisson\n", arrival);
			goto out;
		}
	}
	if (plan.method && req_method_check(plan.method) < 0) {
		fprintf(stderr, "pacer run: --method '%s': not a valid method token\n", plan.method);
		goto out;
	}
	if (body_arg) {
		if (body_arg[0] == '@') {
			size_t len = 0;
			int rc = read_file(body_arg + 1, &body_buf, &len);
			if (rc) {
				fprintf(stderr, "pacer run: --body %s: cannot read: %s\n", body_arg,
					rc == PACER_ETOOBIG ? "larger than 64 MiB" : err_name(rc));
				goto out;
			}
			plan.body = body_buf;
			plan.body_len = len;
			plan.body_source = body_arg;
		} else {
			plan.body = body_arg;
			plan.body_len = strlen(body_arg);
			plan.body_source = "literal";
		}
	}
	plan.headers = headers.v;
	plan.n_headers = headers.n;
	if (plan_validate(&plan, err, sizeof err)) {
		fprintf(stderr, "pacer run: %s\n", err);
		goto out;
	}

	struct req_spec rs = {
		.method = plan_method(&plan),
		.url = &plan.url,
		.headers = plan.headers,
		.n_headers = plan.n_headers,
		.body = plan.body,
		.body_len = plan.body_len,
		.user_agent = "pacer/" PACER_VERSION,
	};
	size_t req_len = 0;
	int rc = req_encode(&rs, &req, &req_len, &why);
	if (rc) {
		fprintf(stderr, "pacer run: --header: %s\n", rc == -ENOMEM ? "out of memory" : why);
		goto out;
	}

	uint32_t conns = plan.open_loop ? plan.connections : plan.concurrency;
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
	    (rlim_t)conns + 64 + 2 * plan.threads > rl.rlim_cur) {
		fprintf(stderr,
			"pacer run: %u connections need more file descriptors than the limit of %llu "
			"(ulimit -n)\n",
			conns, (unsigned long long)rl.rlim_cur);
		goto out;
	}

	struct net_addr addr;
	rc = net_resolve(plan.url.host, plan.url.port, &addr, &why);
	if (rc) {
		fprintf(stderr, "pacer run: cannot resolve '%s': %s\n", plan.url.host,
			why ? why : err_name(rc));
		goto out;
	}
	char astr[96];
	net_addr_str(&addr, astr, sizeof astr);
	rc = net_probe(&addr, plan.timeout_ns < 5 * NS_PER_S ? plan.timeout_ns : 5 * NS_PER_S);
	if (rc) {
		fprintf(stderr, "pacer run: cannot connect to %s (%s): %s\n", plan.url_str, astr,
			err_name(rc));
		goto out;
	}

	struct engine_req ereq = {.buf = req, .len = req_len, .head = strcmp(rs.method, "HEAD") == 0};
	struct engine_cfg cfg = {
		.addr = addr,
		.reqs = &ereq,
		.n_reqs = 1,
		.open_loop = plan.open_loop,
		.arrival = plan.arrival,
		.seed = plan.seed,
		.connections = plan.connections,
		.concurrency = plan.concurrency,
		.threads = plan.threads,
		.timeout_ns = plan.timeout_ns,
		.spin_ns = plan.spin_ns,
	};
	struct engine_step step = {
		.rate_per_s = plan.rate_per_s,
		.warmup_ns = plan.warmup_ns,
		.duration_ns = plan.duration_ns,
		.drain_ns = plan.drain_ns,
		.requests = plan.requests,
		.duration_limits = plan.duration_given,
	};

	sigset_t set, old;
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigprocmask(SIG_BLOCK, &set, &old);
	signal(SIGPIPE, SIG_IGN);

	uint64_t wall0 = clock_wall_ns();
	struct engine *e = NULL;
	rc = engine_open(&e, &cfg);
	if (!rc) {
		rc = engine_step_start(e, &step);
		if (rc)
			engine_close(e);
	}
	if (rc) {
		sigprocmask(SIG_SETMASK, &old, NULL);
		fprintf(stderr, "pacer run: cannot start: %s\n", err_name(rc));
		ret = EXIT_RUNTIME;
		goto out;
	}
	bool progress = !plan.quiet && isatty(STDOUT_FILENO);
	bool interrupted = wait_engine(e, progress);
	struct run_result res;
	rc = engine_step_finish(e, &res);
	engine_close(e);
	sigprocmask(SIG_SETMASK, &old, NULL);
	res.started_wall_ns = wall0;
	res.interrupted = res.interrupted || interrupted;
	if (rc) {
		fprintf(stderr, "pacer run: collecting results failed: %s\n", err_name(rc));
		run_result_free(&res);
		ret = EXIT_RUNTIME;
		goto out;
	}

	struct sysinfo_facts env;
	sysinfo_read(&env);
	struct report_ctx ctx = {
		.plan = &plan,
		.env = &env,
		.res = &res,
		.mode = "live",
		.version = PACER_VERSION,
		.commit = PACER_COMMIT,
	};
	if (!plan.quiet)
		report_text(stdout, &ctx);
	fflush(stdout);
	ret = res.interrupted ? EXIT_INTERRUPTED : 0;
	if (write_outputs(&ctx))
		ret = EXIT_RUNTIME;
	run_result_free(&res);
out:
	free(req);
	free(body_buf);
	opt_list_free(&headers);
	return ret;
}
