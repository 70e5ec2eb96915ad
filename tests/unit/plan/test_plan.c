/* Tests of the run plan (src/plan/plan.c): defaults, the method chosen, and
 * plan_validate accepting sane plans and rejecting each contradiction with
 * a one-line message that names the option. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "plan/plan.h"
#include "util/clock.h"
#include "util/err.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

static void test_defaults(void **state)
{
	(void)state;
	struct run_plan p;
	memset(&p, 0xab, sizeof p);
	plan_defaults(&p);
	assert_false(p.open_loop);
	assert_int_equal(p.arrival, SCHED_CONSTANT);
	assert_true(p.seed == 1);
	assert_true(p.duration_ns == 10 * NS_PER_S);
	assert_true(p.timeout_ns == 10 * NS_PER_S);
	assert_true(p.warmup_ns == 0);
	assert_true(p.requests == 0);
	assert_int_equal(p.threads, 1);
	assert_int_equal(p.connections, 64);
	assert_int_equal(p.concurrency, 10);
	assert_null(p.method);
	assert_null(p.body);
	assert_null(p.headers);
	assert_int_equal(p.n_headers, 0);
	assert_false(p.quiet);
	char err[128] = "";
	/* closed loop by duration is valid as is */
	assert_int_equal(plan_validate(&p, err, sizeof err), 0);
	/* open loop: defaults + a rate */
	p.open_loop = true;
	p.rate_per_s = 1000;
	assert_int_equal(plan_validate(&p, err, sizeof err), 0);
}

static void test_method(void **state)
{
	(void)state;
	struct run_plan p;
	plan_defaults(&p);
	assert_string_equal(plan_method(&p), "GET");
	p.body = "x";
	p.body_len = 1;
	assert_string_equal(plan_method(&p), "POST");
	p.method = "PUT";
	assert_string_equal(plan_method(&p), "PUT");
	p.body = NULL;
	p.body_len = 0;
	p.method = "DELETE";
	assert_string_equal(plan_method(&p), "DELETE");
	assert_string_equal(sched_arrival_name(SCHED_CONSTANT), "constant");
	assert_string_equal(sched_arrival_name(SCHED_POISSON), "poisson");
}

/* resumption follows the options alone: on by default and with
 * --tls-resume, off with --no-tls-resume; nothing has to store it */
static void test_tls_resume(void **state)
{
	(void)state;
	struct run_plan p;
	plan_defaults(&p);
	assert_true(plan_tls_resume(&p));
	p.tls.resume_flag = true;
	assert_true(plan_tls_resume(&p));
	p.tls.resume_flag = false;
	p.tls.no_resume = true;
	assert_false(plan_tls_resume(&p));
}

enum loop { CLOSED, OPEN };

struct bad_case {
	const char *what;
	enum loop loop;
	void (*mutate)(struct run_plan *p);
	const char *needles[3]; /* substrings the message must contain */
};

static void threads0(struct run_plan *p) { p->threads = 0; }
static void threads257(struct run_plan *p) { p->threads = 257; }
static void spin_big(struct run_plan *p) { p->spin_ns = 10 * NS_PER_MS + 1; }
static void timeout_small(struct run_plan *p) { p->timeout_ns = NS_PER_MS - 1; }
static void timeout0(struct run_plan *p) { p->timeout_ns = 0; }
static void rate0(struct run_plan *p) { p->rate_per_s = 0; }
static void rate_neg(struct run_plan *p) { p->rate_per_s = -5; }
static void rate_tiny(struct run_plan *p) { p->rate_per_s = 1.99e-10; }
static void conns0(struct run_plan *p) { p->connections = 0; }
static void conns_lt_threads(struct run_plan *p)
{
	p->threads = 8;
	p->connections = 4;
}
static void requests_open(struct run_plan *p) { p->requests = 100; }
static void duration0(struct run_plan *p) { p->duration_ns = 0; }
static void conc0(struct run_plan *p) { p->concurrency = 0; }
static void conc_lt_threads(struct run_plan *p)
{
	p->threads = 16;
	p->concurrency = 3;
}
static void conns_huge(struct run_plan *p) { p->connections = 2000000; }
static void conc_huge(struct run_plan *p) { p->concurrency = 2000000; }
static void tls_not_sc(struct run_plan *p) { p->tls.self_signed = true; }
static void unix_sc(struct run_plan *p)
{
	p->unix_socket = "/run/x.sock";
	p->self_contained = "hello";
}
static void connect_unix(struct run_plan *p)
{
	p->unix_socket = "/run/x.sock";
	p->connect_to = "127.0.0.1:81";
}
static void connect_sc(struct run_plan *p)
{
	p->connect_to = "127.0.0.1:81";
	p->self_contained = "hello";
}

static const struct bad_case bad[] = {
	{ "threads 0", CLOSED, threads0, { "--threads", "0" } },
	{ "threads 0 (open)", OPEN, threads0, { "--threads" } },
	{ "threads 257", CLOSED, threads257, { "--threads", "257", "256" } },
	{ "spin over 10ms", OPEN, spin_big, { "--spin", "10ms" } },
	{ "timeout under 1ms", CLOSED, timeout_small, { "--timeout", "1ms" } },
	{ "timeout 0", OPEN, timeout0, { "--timeout" } },
	{ "rate 0", OPEN, rate0, { "--rate", "above 0" } },
	{ "rate negative", OPEN, rate_neg, { "--rate" } },
	{ "rate that rounds to nothing", OPEN, rate_tiny, { "--rate", "at least 0.001" } },
	{ "connections 0", OPEN, conns0, { "--connections" } },
	{ "connections < threads", OPEN, conns_lt_threads, { "--connections 4", "--threads 8" } },
	{ "requests with rate", OPEN, requests_open, { "--requests", "--rate" } },
	{ "duration 0 with rate", OPEN, duration0, { "--duration", "--rate" } },
	{ "concurrency 0", CLOSED, conc0, { "--concurrency" } },
	{ "concurrency < threads", CLOSED, conc_lt_threads, { "--concurrency 3", "--threads 16" } },
	{ "duration 0 without requests", CLOSED, duration0, { "--duration", "--requests" } },
	{ "too many connections (open)", OPEN, conns_huge, { "--connections", "2000000" } },
	{ "too many connections (closed)", CLOSED, conc_huge, { "--concurrency", "2000000" } },
	{ "--tls without --self-contained", OPEN, tls_not_sc, { "--tls", "--self-contained" } },
	{ "--unix-socket with --self-contained", CLOSED, unix_sc, { "--unix-socket", "--self-contained" } },
	{ "--connect-to with --unix-socket", CLOSED, connect_unix, { "--connect-to", "--unix-socket" } },
	{ "--connect-to with --self-contained", OPEN, connect_sc, { "--connect-to", "--self-contained" } },
};

static void base(struct run_plan *p, enum loop loop)
{
	plan_defaults(p);
	if (loop == OPEN) {
		p->open_loop = true;
		p->rate_per_s = 1000;
	}
}

static void test_rejects(void **state)
{
	(void)state;
	unsigned failed = 0;
	for (size_t i = 0; i < N(bad); i++) {
		const struct bad_case *c = &bad[i];
		struct run_plan p;
		base(&p, c->loop);
		c->mutate(&p);
		char err[160];
		memset(err, 0, sizeof err);
		int rc = plan_validate(&p, err, sizeof err);
		bool ok = rc == PACER_ERANGE && err[0] && !strchr(err, '\n');
		for (int k = 0; k < 3 && c->needles[k]; k++)
			ok = ok && strstr(err, c->needles[k]);
		if (!ok) {
			print_message("%s: rc %d, message \"%s\"; want PACER_ERANGE and", c->what, rc,
			              err);
			for (int k = 0; k < 3 && c->needles[k]; k++)
				print_message(" \"%s\"", c->needles[k]);
			print_message("\n");
			failed++;
		}
	}
	assert_int_equal(failed, 0);
}

/* Values right at each limit are accepted. */
static void test_accepts_limits(void **state)
{
	(void)state;
	char err[160] = "";
	struct run_plan p;

	base(&p, OPEN);
	p.threads = 256;
	p.connections = 256;
	p.spin_ns = 10 * NS_PER_MS;
	p.timeout_ns = NS_PER_MS;
	p.rate_per_s = 0.001;
	p.arrival = SCHED_POISSON;
	assert_int_equal(plan_validate(&p, err, sizeof err), 0);
	p.connections = 1000000;
	assert_int_equal(plan_validate(&p, err, sizeof err), 0);

	base(&p, CLOSED);
	p.threads = 4;
	p.concurrency = 4;
	assert_int_equal(plan_validate(&p, err, sizeof err), 0);
	/* closed loop by request count: no duration needed */
	p.requests = 1000;
	p.duration_ns = 0;
	assert_int_equal(plan_validate(&p, err, sizeof err), 0);
	/* the open-loop-only fields do not matter in closed loop */
	p.connections = 0;
	p.rate_per_s = 0;
	assert_int_equal(plan_validate(&p, err, sizeof err), 0);

	/* and the closed-loop fields do not matter in open loop */
	base(&p, OPEN);
	p.concurrency = 0;
	assert_int_equal(plan_validate(&p, err, sizeof err), 0);
}

/* The message is cut to the buffer and stays terminated. */
static void test_small_err_buffer(void **state)
{
	(void)state;
	struct run_plan p;
	base(&p, CLOSED);
	p.threads = 0;
	char err[8];
	memset(err, 'X', sizeof err);
	assert_int_equal(plan_validate(&p, err, sizeof err), PACER_ERANGE);
	assert_string_equal(err, "--threa");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_method),
		cmocka_unit_test(test_tls_resume),
		cmocka_unit_test(test_rejects),
		cmocka_unit_test(test_accepts_limits),
		cmocka_unit_test(test_small_err_buffer),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
