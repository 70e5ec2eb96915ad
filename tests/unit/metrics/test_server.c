/* Tests of the metrics endpoint's HTTP side (src/metrics/server.c), on a
 * loopback port the system picks: GET and HEAD /metrics in both formats,
 * 404 for other paths, 405 for other methods, 431 for a request head over
 * the cap, and the step/rate/phase figures the runner's thread hands it
 * (no engine needed: before a measurement every counter is 0). */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "metrics/server.h"

/* Send req to the server and return everything it answered (malloc'd). */
static char *exchange(uint16_t port, const char *req, size_t len)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	assert_true(fd >= 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port)};
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof a), 0);
	size_t off = 0;
	while (off < len) {
		ssize_t k = send(fd, req + off, len - off, MSG_NOSIGNAL);
		if (k <= 0)
			break; /* the server may answer and close before reading it all */
		off += (size_t)k;
	}
	size_t cap = 1 << 16, n = 0;
	char *buf = malloc(cap + 1);
	assert_non_null(buf);
	for (;;) {
		ssize_t k = recv(fd, buf + n, cap - n, 0);
		if (k <= 0)
			break;
		n += (size_t)k;
		assert_true(n < cap);
	}
	buf[n] = 0;
	close(fd);
	return buf;
}

static char *get(uint16_t port, const char *req) { return exchange(port, req, strlen(req)); }

static void assert_contains(const char *text, const char *part)
{
	if (!strstr(text, part))
		fail_msg("missing:\n%s\n---- in:\n%s", part, text);
}

static struct metrics_server *start(void)
{
	struct metrics_cfg cfg = {.n_variants = 1};
	char err[128];
	assert_int_equal(metrics_listen_parse("127.0.0.1:0", false, &cfg.addr, err, sizeof err), 0);
	struct metrics_server *m = NULL;
	assert_int_equal(metrics_start(&m, &cfg), 0);
	assert_true(metrics_port(m) > 0);
	return m;
}

static void test_http(void **state)
{
	(void)state;
	struct metrics_server *m = start();
	uint16_t port = metrics_port(m);

	char *r = get(port, "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
	assert_int_equal(strncmp(r, "HTTP/1.1 200 OK\r\n", 17), 0);
	assert_contains(r, "\r\nContent-Type: text/plain; version=0.0.4; charset=utf-8\r\n");
	assert_contains(r, "\r\nConnection: close\r\n");
	assert_contains(r, "\r\n\r\n# HELP pacer_requests_scheduled_total ");
	assert_contains(r, "\npacer_requests_completed_total 0\n");
	assert_contains(r, "\npacer_phase{phase=\"idle\"} 1\n");
	assert_contains(r, "\npacer_step 0\n");
	assert_contains(r, "\npacer_latency_recent_seconds{quantile=\"0.99\"} NaN\n");
	assert_null(strstr(r, "# EOF"));
	/* Content-Length is the body's */
	const char *cl = strstr(r, "Content-Length: ");
	assert_non_null(cl);
	assert_int_equal(strtoul(cl + 16, NULL, 10), strlen(strstr(r, "\r\n\r\n") + 4));
	free(r);

	r = get(port, "GET /metrics?x=1 HTTP/1.1\r\nAccept: application/openmetrics-text; "
		      "version=1.0.0\r\n\r\n");
	assert_contains(r, "\r\nContent-Type: application/openmetrics-text; version=1.0.0; "
			   "charset=utf-8\r\n");
	assert_contains(r, "\n# TYPE pacer_requests_completed counter\n");
	size_t n = strlen(r);
	assert_string_equal(r + n - 6, "# EOF\n");
	free(r);

	r = get(port, "HEAD /metrics HTTP/1.0\r\n\r\n");
	assert_int_equal(strncmp(r, "HTTP/1.1 200 OK\r\n", 17), 0);
	assert_string_equal(strstr(r, "\r\n\r\n"), "\r\n\r\n"); /* no body */
	free(r);

	r = get(port, "GET /metricsx HTTP/1.1\r\n\r\n");
	assert_int_equal(strncmp(r, "HTTP/1.1 404 Not Found\r\n", 24), 0);
	free(r);
	r = get(port, "POST /metrics HTTP/1.1\r\nContent-Length: 0\r\n\r\n");
	assert_int_equal(strncmp(r, "HTTP/1.1 405 Method Not Allowed\r\n", 33), 0);
	free(r);

	size_t big_len = 9000;
	char *big = malloc(big_len);
	assert_non_null(big);
	memset(big, 'a', big_len);
	memcpy(big, "GET /metrics HTTP/1.1\r\nX: ", 26);
	r = exchange(port, big, big_len);
	assert_int_equal(strncmp(r, "HTTP/1.1 431 ", 13), 0);
	free(r);
	free(big);
	metrics_stop(m);
}

static void test_step_and_phase(void **state)
{
	(void)state;
	struct metrics_server *m = start();
	uint16_t port = metrics_port(m);
	metrics_begin(m, 0, NULL, true, 2500);
	char *r = get(port, "GET /metrics HTTP/1.1\r\n\r\n");
	assert_contains(r, "\npacer_step 1\n");
	assert_contains(r, "\npacer_offered_rate_requests_per_second 2500\n");
	assert_contains(r, "\npacer_phase{phase=\"warmup\"} 1\n");
	free(r);
	metrics_phase(m, 0, MPH_DRAIN);
	r = get(port, "GET /metrics HTTP/1.1\r\n\r\n");
	assert_contains(r, "\npacer_phase{phase=\"drain\"} 1\n");
	assert_contains(r, "\npacer_phase{phase=\"warmup\"} 0\n");
	free(r);
	metrics_end(m, 0);
	/* a repeat of the same step does not count; the next step does */
	metrics_begin(m, 0, NULL, false, 2500);
	metrics_end(m, 0);
	metrics_begin(m, 0, NULL, true, 5000);
	metrics_end(m, 0);
	r = get(port, "GET /metrics HTTP/1.1\r\n\r\n");
	assert_contains(r, "\npacer_step 2\n");
	assert_contains(r, "\npacer_offered_rate_requests_per_second 5000\n");
	assert_contains(r, "\npacer_phase{phase=\"idle\"} 1\n");
	free(r);
	metrics_stop(m);
	metrics_stop(NULL);
}

static void test_port_in_use(void **state)
{
	(void)state;
	struct metrics_server *a = start();
	char arg[32];
	snprintf(arg, sizeof arg, "127.0.0.1:%u", metrics_port(a));
	struct metrics_cfg cfg = {.n_variants = 1};
	char err[128];
	assert_int_equal(metrics_listen_parse(arg, false, &cfg.addr, err, sizeof err), 0);
	struct metrics_server *b = NULL;
	assert_int_equal(metrics_start(&b, &cfg), -98); /* -EADDRINUSE */
	assert_null(b);
	metrics_stop(a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_http),
		cmocka_unit_test(test_step_and_phase),
		cmocka_unit_test(test_port_in_use),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
