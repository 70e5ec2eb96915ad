/* Tests of the metrics endpoint's HTTP side (src/metrics/server.c), on a
 * loopback port the system picks: GET and HEAD /metrics in both formats,
 * 404 for other paths, 405 for other methods, 431 for a request head over
 * the cap, and the step/rate/phase figures the runner's thread hands it
 * (no engine needed: before a measurement every counter is 0). Hostile
 * clients: one trickling its head a byte at a time, many idle ones, one
 * that never reads its answer; none holds a connection past its deadline,
 * none keeps a real scrape out, and metrics_stop returns at once with any
 * of them connected. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
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
	size_t cap = 1 << 22, n = 0; /* 8 variants of 561 buckets: about 600 KB */
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

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int connect_to(uint16_t port)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	assert_true(fd >= 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port)};
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof a), 0);
	return fd;
}

/* Seconds until the server closes fd (recv gives 0 or an error), at most
 * limit_s; what it sent meanwhile is read away. */
static double closed_after(int fd, double limit_s)
{
	struct timeval tv = {0, 100 * 1000};
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
	double t0 = now_s();
	char buf[4096];
	while (now_s() - t0 < limit_s) {
		ssize_t k = recv(fd, buf, sizeof buf, 0);
		if (k == 0 || (k < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR))
			break;
	}
	return now_s() - t0;
}

/* metrics_stop(m), and how long it took in seconds. */
static double stop_time(struct metrics_server *m)
{
	double t0 = now_s();
	metrics_stop(m);
	return now_s() - t0;
}

static struct metrics_server *start_n(size_t n_variants)
{
	static const char *const names[] = {"aaaa", "bbbb", "cccc", "dddd",
					    "eeee", "ffff", "gggg", "hhhh"};
	struct metrics_cfg cfg = {.n_variants = n_variants, .names = names};
	char err[128];
	assert_int_equal(metrics_listen_parse("127.0.0.1:0", false, &cfg.addr, err, sizeof err), 0);
	struct metrics_server *m = NULL;
	assert_int_equal(metrics_start(&m, &cfg), 0);
	return m;
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

/* The live page: / and /live.js with the CSP that allows scripts and
 * fetches from this server only, /live.json with the variants' figures
 * (zeros and nulls before any measurement). */
static void test_live_page(void **state)
{
	(void)state;
	struct metrics_server *m = start();
	uint16_t port = metrics_port(m);
	char *r = get(port, "GET / HTTP/1.1\r\n\r\n");
	assert_int_equal(strncmp(r, "HTTP/1.1 200 OK\r\n", 17), 0);
	assert_contains(r, "Content-Type: text/html; charset=utf-8\r\n");
	assert_contains(r, "Content-Security-Policy: default-src 'none'; script-src 'self'; "
			   "connect-src 'self';");
	assert_contains(r, "<script src=\"live.js\"></script>");
	assert_null(strstr(r, "http://")); /* nothing from elsewhere */
	assert_null(strstr(r, "https://"));
	free(r);
	r = get(port, "GET /live.js HTTP/1.1\r\n\r\n");
	assert_int_equal(strncmp(r, "HTTP/1.1 200 OK\r\n", 17), 0);
	assert_contains(r, "Content-Type: text/javascript; charset=utf-8\r\n");
	assert_contains(r, "fetch(\"live.json\"");
	assert_null(strstr(r, "https://"));
	free(r);
	r = get(port, "GET /live.json?x=1 HTTP/1.1\r\n\r\n");
	assert_int_equal(strncmp(r, "HTTP/1.1 200 OK\r\n", 17), 0);
	assert_contains(r, "Content-Type: application/json\r\n");
	assert_contains(r, "\r\n\r\n{\"variants\":[{\"name\":\"\",\"phase\":\"idle\"");
	assert_contains(r, "\"p99_s\":null");
	free(r);
	r = get(port, "HEAD /live.json HTTP/1.1\r\n\r\n");
	assert_string_equal(strstr(r, "\r\n\r\n"), "\r\n\r\n"); /* no body */
	free(r);
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

/* A client sending its head a byte every 50 ms is closed at
 * METRICS_HEAD_MS; while it trickles, a stop returns at once. */
static void test_slow_head(void **state)
{
	(void)state;
	struct metrics_server *m = start();
	int fd = connect_to(metrics_port(m));
	double t0 = now_s();
	static const char head[] = "GET /metrics HTTP/1.1\r\nX-Slow: aaaaaaaaaaaaaaaaaaaaaaaaaaaa"
				   "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
	size_t i = 0;
	for (; i < sizeof head - 1; i++) {
		if (send(fd, head + i, 1, MSG_NOSIGNAL) != 1)
			break;
		usleep(50 * 1000);
		if (now_s() - t0 > METRICS_HEAD_MS / 1e3 + 1)
			break;
	}
	double closed = now_s() - t0 + closed_after(fd, 3);
	assert_true(i < sizeof head - 1); /* cut off before it was done */
	assert_true(closed >= METRICS_HEAD_MS / 1e3 - 0.1);
	assert_true(closed < METRICS_HEAD_MS / 1e3 + 1.5);
	close(fd);

	/* another one trickling: the stop does not wait for it */
	fd = connect_to(metrics_port(m));
	assert_int_equal(send(fd, "G", 1, MSG_NOSIGNAL), 1);
	usleep(100 * 1000);
	assert_int_equal(metrics_clients(m), 1);
	double took = stop_time(m);
	assert_true(took < 0.2);
	assert_true(closed_after(fd, 1) < 0.5); /* and closed it */
	close(fd);
}

/* Three times as many idle connections as slots: at most
 * METRICS_MAX_CLIENTS stay open, a scrape that sends its head is still
 * answered at once, and the stop does not wait. */
static void test_many_idle(void **state)
{
	(void)state;
	struct metrics_server *m = start();
	uint16_t port = metrics_port(m);
	int idle[3 * METRICS_MAX_CLIENTS];
	for (size_t i = 0; i < 3 * METRICS_MAX_CLIENTS; i++)
		idle[i] = connect_to(port);
	usleep(200 * 1000);
	assert_true(metrics_clients(m) <= METRICS_MAX_CLIENTS);
	double t0 = now_s();
	char *r = get(port, "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
	assert_true(now_s() - t0 < 1.0);
	assert_int_equal(strncmp(r, "HTTP/1.1 200 OK\r\n", 17), 0);
	free(r);
	assert_true(metrics_clients(m) <= METRICS_MAX_CLIENTS);
	double took = stop_time(m);
	assert_true(took < 0.2);
	for (size_t i = 0; i < 3 * METRICS_MAX_CLIENTS; i++)
		close(idle[i]);
}

/* A client that asks for a large answer (8 variants) with a tiny receive
 * buffer and never reads it keeps its connection at most METRICS_CONN_MS;
 * a stop meanwhile returns at once. */
static void test_never_reads(void **state)
{
	(void)state;
	struct metrics_server *m = start_n(8);
	uint16_t port = metrics_port(m);
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	assert_true(fd >= 0);
	int small = 1024;
	setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port)};
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof a), 0);
	static const char req[] = "GET /metrics HTTP/1.1\r\n\r\n";
	assert_int_equal(send(fd, req, sizeof req - 1, MSG_NOSIGNAL), (ssize_t)(sizeof req - 1));
	usleep(300 * 1000);
	/* still being answered, and the server is free for others */
	assert_int_equal(metrics_clients(m), 1);
	char *r = get(port, "GET /metrics HTTP/1.1\r\n\r\n");
	assert_int_equal(strncmp(r, "HTTP/1.1 200 OK\r\n", 17), 0);
	free(r);
	double took = stop_time(m);
	assert_true(took < 0.2);
	close(fd);

	/* without a stop: closed at its deadline */
	m = start_n(8);
	port = metrics_port(m);
	fd = socket(AF_INET, SOCK_STREAM, 0);
	setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
	a.sin_port = htons(port);
	assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof a), 0);
	assert_int_equal(send(fd, req, sizeof req - 1, MSG_NOSIGNAL), (ssize_t)(sizeof req - 1));
	double t0 = now_s();
	while (!metrics_clients(m) && now_s() - t0 < 1) /* accepted */
		usleep(10 * 1000);
	while (metrics_clients(m) && now_s() - t0 < METRICS_CONN_MS / 1e3 + 2)
		usleep(50 * 1000);
	double gone = now_s() - t0;
	assert_int_equal(metrics_clients(m), 0);
	assert_true(gone > METRICS_CONN_MS / 1e3 - 0.5);
	metrics_stop(m);
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_http),
		cmocka_unit_test(test_live_page),
		cmocka_unit_test(test_step_and_phase),
		cmocka_unit_test(test_port_in_use),
		cmocka_unit_test(test_slow_head),
		cmocka_unit_test(test_many_idle),
		cmocka_unit_test(test_never_reads),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
