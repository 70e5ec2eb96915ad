/* Tests of the embedded target server (src/target/server.c, conn.c, exec.c) over real
 * loopback sockets: the server is started on an ephemeral port and driven
 * with blocking client sockets (5 s receive timeout, so a bug fails a test
 * instead of hanging it). Checks responses byte for byte where they are
 * fixed, framing (keep-alive, HTTP/1.0, HEAD, pipelining, request bodies,
 * 100-continue), hostile input (garbage, huge heads, chunked bodies, a
 * request that never completes), misbehaviours, templates, kv, seeded
 * determinism, several threads, and stopping with connections open.
 * Timing is only ever asserted as a lower bound the server cannot beat. */
#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "net/sock.h"
#include "target/target.h"
#include "util/clock.h"
#include "util/err.h"

/* ---- client helpers ------------------------------------------------- */

struct client {
	int fd;
	size_t len;
	char buf[1 << 20];
};

struct resp {
	int status;
	char head[8192];
	size_t body_len;
	char body[1 << 18];
};

static struct target *srv;
static struct target_plan *plan;

static void start(const char *yaml, unsigned threads)
{
	char err[512];
	int rc = target_plan_parse(yaml, strlen(yaml), "test.yaml", &plan, err, sizeof err);
	if (rc)
		fail_msg("plan: %s", err);
	struct net_addr a;
	assert_int_equal(net_resolve("127.0.0.1", 0, &a, NULL), 0);
	assert_int_equal(target_start(&srv, plan, &a, threads), 0);
	assert_true(target_port(srv) > 0);
}

static void stop(void)
{
	target_stop(srv);
	srv = NULL;
	target_plan_free(plan);
	plan = NULL;
}

static struct client *dial(void)
{
	struct client *c = malloc(sizeof *c);
	assert_non_null(c);
	c->len = 0;
	c->fd = socket(AF_INET, SOCK_STREAM, 0);
	assert_true(c->fd >= 0);
	struct timeval tv = {.tv_sec = 5};
	setsockopt(c->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
	int one = 1;
	setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	struct sockaddr_in sin = {.sin_family = AF_INET, .sin_port = htons((uint16_t)target_port(srv))};
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(connect(c->fd, (struct sockaddr *)&sin, sizeof sin), 0);
	return c;
}

static void hangup(struct client *c)
{
	close(c->fd);
	free(c);
}

static void say(struct client *c, const char *s, size_t n)
{
	if (n == 0)
		n = strlen(s);
	while (n) {
		ssize_t w = send(c->fd, s, n, MSG_NOSIGNAL);
		assert_true(w > 0);
		s += w;
		n -= (size_t)w;
	}
}

/* Read more bytes into c->buf. Returns bytes read, 0 on EOF, -1 on timeout
 * or error (a reset counts as EOF). */
static ssize_t fill(struct client *c)
{
	if (c->len == sizeof c->buf)
		return -1;
	ssize_t n = recv(c->fd, c->buf + c->len, sizeof c->buf - c->len, 0);
	if (n < 0 && errno == ECONNRESET)
		return 0;
	if (n > 0)
		c->len += (size_t)n;
	return n;
}

static void consume(struct client *c, size_t n)
{
	memmove(c->buf, c->buf + n, c->len - n);
	c->len -= n;
}

static const char *hdr(const struct resp *r, const char *name, char *out, size_t cap)
{
	char pat[128];
	snprintf(pat, sizeof pat, "\r\n%s: ", name);
	const char *p = strcasestr(r->head, pat);
	if (!p)
		return NULL;
	p += strlen(pat);
	const char *e = strstr(p, "\r\n");
	snprintf(out, cap, "%.*s", (int)(e - p), p);
	return out;
}

/* Read one response (Content-Length framing, or none for HEAD/204). false
 * if the connection ended or timed out first. */
static bool get(struct client *c, struct resp *r, bool head_req)
{
	memset(r, 0, offsetof(struct resp, body));
	char *end;
	for (;;) {
		end = c->len ? memmem(c->buf, c->len, "\r\n\r\n", 4) : NULL;
		if (end)
			break;
		if (fill(c) <= 0)
			return false;
	}
	size_t hl = (size_t)(end - c->buf) + 4;
	assert_true(hl < sizeof r->head);
	memcpy(r->head, c->buf, hl);
	r->head[hl] = '\0';
	if (sscanf(r->head, "HTTP/1.1 %d ", &r->status) != 1)
		fail_msg("not a status line: %.40s", r->head);
	consume(c, hl);
	char v[64];
	size_t bl = 0;
	if (!head_req && r->status != 204 && hdr(r, "Content-Length", v, sizeof v))
		bl = strtoul(v, NULL, 10);
	while (c->len < bl)
		if (fill(c) <= 0)
			return false;
	assert_true(bl < sizeof r->body);
	memcpy(r->body, c->buf, bl);
	r->body[bl] = '\0';
	r->body_len = bl;
	consume(c, bl);
	return true;
}

/* The server closes: EOF (or reset) arrives, nothing else is pending. */
static void want_eof(struct client *c)
{
	for (;;) {
		ssize_t n = fill(c);
		if (n == 0)
			break;
		if (n < 0)
			fail_msg("no EOF (timeout); %zu bytes pending", c->len);
	}
}

static void want_resp(struct client *c, const char *req, int status, const char *body)
{
	struct resp r;
	say(c, req, 0);
	if (!get(c, &r, !strncmp(req, "HEAD", 4)))
		fail_msg("no response to %.30s", req);
	if (r.status != status)
		fail_msg("status %d, want %d for %.30s", r.status, status, req);
	if (body && strcmp(r.body, body) != 0)
		fail_msg("body '%s', want '%s'", r.body, body);
}

static double server_timing_ms(const struct resp *r)
{
	char v[64];
	if (!hdr(r, "Server-Timing", v, sizeof v))
		fail_msg("no Server-Timing in\n%s", r->head);
	double ms;
	if (sscanf(v, "app;dur=%lf", &ms) != 1)
		fail_msg("bad Server-Timing '%s'", v);
	return ms;
}

#define GET(path) "GET " path " HTTP/1.1\r\nHost: t\r\n\r\n"

static const char hello_plan[] = "routes:\n"
                                 "  - path: /\n"
                                 "    prefix: true\n"
                                 "    headers: {Content-Type: text/plain}\n"
                                 "    body: \"hello\\n\"\n";

/* ---- tests ---------------------------------------------------------- */

static void test_hello_exact(void **state)
{
	(void)state;
	start(hello_plan, 1);
	struct client *c = dial();
	say(c, GET("/"), 0);
	const char *want = "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 6\r\n\r\nhello\n";
	while (c->len < strlen(want))
		assert_true(fill(c) > 0);
	assert_int_equal(c->len, strlen(want));
	assert_memory_equal(c->buf, want, strlen(want));
	consume(c, c->len);
	/* keep-alive: the same connection goes on serving */
	for (int i = 0; i < 100; i++)
		want_resp(c, GET("/any/path?x=1"), 200, "hello\n");
	/* HEAD: headers only */
	struct resp r;
	say(c, "HEAD / HTTP/1.1\r\nHost: t\r\n\r\n", 0);
	assert_true(get(c, &r, true));
	char v[32];
	assert_string_equal(hdr(&r, "Content-Length", v, sizeof v), "6");
	/* a request body is read and skipped */
	want_resp(c, "POST /x HTTP/1.1\r\nHost: t\r\nContent-Length: 11\r\n\r\nhello world", 200, "hello\n");
	want_resp(c, GET("/"), 200, "hello\n");
	assert_int_equal(c->len, 0);
	hangup(c);
	struct target_stats st;
	target_stats(srv, &st);
	assert_int_equal(st.requests, 104);
	assert_int_equal(st.connections, 1);
	stop();
}

static void test_pipelining_in_order(void **state)
{
	(void)state;
	start("routes:\n"
	      "  - {path: /slow, latency: 30ms, body: slow, server_timing: false}\n"
	      "  - {path: /fast, body: fast}\n",
	      1);
	struct client *c = dial();
	char req[4096] = "";
	const char *seq[] = {"/slow", "/fast", "/fast", "/slow", "/fast", "/nothing"};
	for (int i = 0; i < 6; i++) {
		char one[128];
		snprintf(one, sizeof one, "GET %s HTTP/1.1\r\nHost: t\r\n\r\n", seq[i]);
		strcat(req, one);
	}
	uint64_t t0 = clock_now_ns();
	say(c, req, 0); /* one write: six pipelined requests */
	for (int i = 0; i < 6; i++) {
		struct resp r;
		assert_true(get(c, &r, false));
		if (!strcmp(seq[i], "/nothing")) {
			assert_int_equal(r.status, 404);
			assert_string_equal(r.body, "404 Not Found\n");
		} else {
			assert_int_equal(r.status, 200);
			assert_string_equal(r.body, seq[i] + 1);
		}
	}
	/* two 30 ms answers, one after the other */
	assert_true(clock_now_ns() - t0 >= 60 * NS_PER_MS);
	hangup(c);
	stop();
}

/* Many pipelined requests whose answers have large bodies: the server must
 * keep answering after each body drains, to the last request. */
static void test_pipelined_large(void **state)
{
	(void)state;
	start("routes:\n  - {path: /big, body_size: 100k}\n  - {path: /small, body: s}\n", 1);
	struct client *c = dial();
	static char req[64 * 60];
	req[0] = '\0';
	for (int i = 0; i < 60; i++)
		strcat(req, i % 3 ? GET("/big") : GET("/small"));
	say(c, req, 0);
	for (int i = 0; i < 60; i++) {
		struct resp r;
		if (!get(c, &r, false))
			fail_msg("response %d missing", i);
		assert_int_equal(r.status, 200);
		assert_int_equal(r.body_len, i % 3 ? 100 * 1024 : 1);
	}
	hangup(c);
	stop();
}

static void test_http10(void **state)
{
	(void)state;
	start(hello_plan, 1);
	struct client *c = dial();
	struct resp r;
	say(c, "GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n", 0);
	assert_true(get(c, &r, false));
	char v[64];
	assert_string_equal(hdr(&r, "Connection", v, sizeof v), "keep-alive");
	say(c, "GET / HTTP/1.0\r\n\r\n", 0);
	assert_true(get(c, &r, false));
	assert_string_equal(r.body, "hello\n");
	assert_string_equal(hdr(&r, "Connection", v, sizeof v), "close");
	want_eof(c);
	hangup(c);
	/* Connection: close in 1.1 */
	c = dial();
	say(c, "GET / HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n", 0);
	assert_true(get(c, &r, false));
	assert_string_equal(hdr(&r, "Connection", v, sizeof v), "close");
	want_eof(c);
	hangup(c);
	stop();
}

static void want_refusal(const char *req, size_t len, int status)
{
	struct client *c = dial();
	say(c, req, len);
	struct resp r;
	if (!get(c, &r, false))
		fail_msg("no answer (want %d)", status);
	assert_int_equal(r.status, status);
	char v[32];
	assert_string_equal(hdr(&r, "Connection", v, sizeof v), "close");
	want_eof(c);
	hangup(c);
}

static void test_hostile(void **state)
{
	(void)state;
	start("timeouts: {request: 300ms}\n"
	      "routes:\n"
	      "  - {path: /, prefix: true, body: ok}\n",
	      1);
	struct client *keep = dial();
	want_resp(keep, GET("/"), 200, "ok");

	want_refusal("\x16\x03\x01\x00\xa5\x01\x00\x00\xa1\x03\x03", 11, 400); /* a TLS hello */
	want_refusal("GET / HTTP/1.1\r\nHost: t\r\nBad Header: x\r\n\r\n", 0, 400);
	want_refusal("POST / HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
	             0, 411);
	want_refusal("GET / HTTP/2.0\r\nHost: t\r\n\r\n", 0, 505);
	/* 20 KiB of headers, sent whole: 431, with unread input behind it */
	size_t big = 20 << 10;
	char *buf = malloc(big);
	assert_non_null(buf);
	memcpy(buf, "GET / HTTP/1.1\r\nHost: t\r\nX-Big: ", 32);
	memset(buf + 32, 'x', big - 32);
	want_refusal(buf, big, 431);
	free(buf);

	/* slowloris: a request that never completes gets 408, then a close */
	struct client *c = dial();
	uint64_t t0 = clock_now_ns();
	say(c, "GET / HTTP/1.1\r\nHost: t\r\nX-Slow: ", 0);
	struct resp r;
	assert_true(get(c, &r, false));
	assert_int_equal(r.status, 408);
	assert_true(clock_now_ns() - t0 >= 300 * NS_PER_MS);
	want_eof(c);
	hangup(c);

	/* a connection that sends half a request and closes costs nothing */
	c = dial();
	say(c, "GET / HT", 0);
	hangup(c);

	/* the first client was never disturbed */
	want_resp(keep, GET("/"), 200, "ok");
	hangup(keep);
	struct target_stats st;
	target_stats(srv, &st);
	assert_int_equal(st.bad_requests, 5);
	assert_true(st.timeouts >= 1);
	stop();
}

/* Idle connections are closed after timeouts.idle; a body that stops
 * arriving gets 408 after timeouts.request. */
static void test_timeouts(void **state)
{
	(void)state;
	start("timeouts: {request: 200ms, idle: 300ms}\nroutes:\n  - {path: /, body: ok}\n", 1);
	/* lower bounds: the clock is read before the server can start its
	 * own timer */
	uint64_t t0 = clock_now_ns();
	struct client *c = dial();
	want_eof(c); /* never sent anything */
	assert_true(clock_now_ns() - t0 >= 300 * NS_PER_MS);
	hangup(c);

	c = dial();
	t0 = clock_now_ns();
	want_resp(c, GET("/"), 200, "ok");
	want_eof(c); /* idle after a request */
	assert_true(clock_now_ns() - t0 >= 300 * NS_PER_MS);
	hangup(c);

	c = dial();
	say(c, "POST / HTTP/1.1\r\nHost: t\r\nContent-Length: 10\r\n\r\nabc", 0);
	struct resp r;
	assert_true(get(c, &r, false));
	assert_int_equal(r.status, 408);
	want_eof(c);
	hangup(c);
	stop();
}

/* A client that sends its requests and shuts its side down still gets
 * every answer, then the server closes. */
static void test_half_close(void **state)
{
	(void)state;
	start("routes:\n  - {path: /, body: ok}\n  - {path: /slow, latency: 20ms, body: slow}\n", 1);
	struct client *c = dial();
	say(c, GET("/") GET("/slow") GET("/"), 0);
	shutdown(c->fd, SHUT_WR);
	struct resp r;
	assert_true(get(c, &r, false));
	assert_string_equal(r.body, "ok");
	assert_true(get(c, &r, false));
	assert_string_equal(r.body, "slow");
	assert_true(get(c, &r, false));
	assert_string_equal(r.body, "ok");
	want_eof(c);
	hangup(c);
	/* half a request, then shutdown: just a close */
	c = dial();
	say(c, "GET / HTTP/1.1\r\nHo", 0);
	shutdown(c->fd, SHUT_WR);
	want_eof(c);
	assert_int_equal(c->len, 0);
	hangup(c);
	stop();
}

static void test_expect_continue(void **state)
{
	(void)state;
	start(hello_plan, 1);
	struct client *c = dial();
	say(c, "POST / HTTP/1.1\r\nHost: t\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n", 0);
	struct resp r;
	assert_true(get(c, &r, true));
	assert_int_equal(r.status, 100);
	say(c, "abcde", 0);
	assert_true(get(c, &r, false));
	assert_int_equal(r.status, 200);
	assert_string_equal(r.body, "hello\n");
	hangup(c);
	stop();
}

static void test_latency_and_timing(void **state)
{
	(void)state;
	start("routes:\n"
	      "  - {path: /fixed, latency: 40ms}\n"
	      "  - {path: /work, work: 20ms}\n"
	      "  - {path: /none}\n",
	      1);
	struct client *c = dial();
	struct resp r;
	uint64_t t0 = clock_now_ns();
	say(c, GET("/fixed"), 0);
	assert_true(get(c, &r, false));
	assert_true(clock_now_ns() - t0 >= 40 * NS_PER_MS);
	double ms = server_timing_ms(&r);
	assert_true(ms >= 40.0);

	uint64_t cpu0, cpu1;
	assert_int_equal(target_cpu_ns(srv, &cpu0), 0);
	say(c, GET("/work"), 0);
	assert_true(get(c, &r, false));
	assert_true(server_timing_ms(&r) >= 20.0);
	assert_int_equal(target_cpu_ns(srv, &cpu1), 0);
	assert_true(cpu1 - cpu0 >= 20 * NS_PER_MS); /* real CPU was burnt */

	say(c, GET("/none"), 0);
	assert_true(get(c, &r, false));
	char v[64];
	assert_null(hdr(&r, "Server-Timing", v, sizeof v));
	hangup(c);
	stop();
}

static void test_close_after_and_garbage(void **state)
{
	(void)state;
	start("routes:\n"
	      "  - {path: /two, body: ok, misbehave: {close_after: 2}}\n"
	      "  - {path: /junk, misbehave: {garbage: 1}}\n",
	      1);
	struct client *c = dial();
	want_resp(c, GET("/two"), 200, "ok");
	want_resp(c, GET("/two"), 200, "ok");
	want_eof(c); /* closed after exactly two */
	hangup(c);

	c = dial();
	say(c, GET("/junk"), 0);
	want_eof(c);
	assert_true(c->len > 0);
	assert_true(c->len < 5 || memcmp(c->buf, "HTTP/", 5) != 0);
	hangup(c);
	struct target_stats st;
	target_stats(srv, &st);
	assert_int_equal(st.misbehaved, 2);
	stop();
}

static void test_slow_body(void **state)
{
	(void)state;
	start("routes:\n"
	      "  - {path: /, body_size: 100, misbehave: {slow_body: {bytes: 10, every: 10ms}}}\n",
	      1);
	struct client *c = dial();
	uint64_t t0 = clock_now_ns();
	struct resp r;
	say(c, GET("/"), 0);
	assert_true(get(c, &r, false));
	assert_int_equal(r.body_len, 100);
	/* ten pieces, nine pauses of 10 ms */
	assert_true(clock_now_ns() - t0 >= 90 * NS_PER_MS);
	/* and the connection goes on normally */
	t0 = clock_now_ns();
	say(c, GET("/"), 0);
	assert_true(get(c, &r, false));
	assert_int_equal(r.body_len, 100);
	hangup(c);
	stop();
}

static void test_stall(void **state)
{
	(void)state;
	start("routes:\n"
	      "  - {path: /, misbehave: {stall_every: 100ms, stall_for: 60ms}, server_timing: true}\n",
	      1);
	struct client *c = dial();
	double max_ms = 0;
	int stalled = 0;
	for (int i = 0; i < 40; i++) {
		struct resp r;
		say(c, GET("/"), 0);
		assert_true(get(c, &r, false));
		double ms = server_timing_ms(&r);
		max_ms = ms > max_ms ? ms : max_ms;
		stalled += ms >= 1.0;
		usleep(5000);
	}
	/* at least 200 ms of wall time: some requests fell into a stall
	 * window (the first stall starts 100 ms after the server) */
	assert_true(stalled >= 1);
	assert_true(max_ms >= 1.0);
	hangup(c);
	stop();
}

static void test_templates_and_kv(void **state)
{
	(void)state;
	start("routes:\n"
	      "  - path: /t\n"
	      "    body: 'id={{id}} again={{id}} n={{seq}} q={{query:name}}.'\n"
	      "  - path: /kv\n"
	      "    kv: {generate: 100, value_size: 8, table: {lit: value}}\n",
	      1);
	struct client *c = dial();
	struct resp r;
	say(c, GET("/t?name=a%20b%3Cc&x=1"), 0);
	assert_true(get(c, &r, false));
	char id1[17], id2[17];
	unsigned n;
	char q[64];
	assert_int_equal(sscanf(r.body, "id=%16s again=%16s n=%u q=%63s", id1, id2, &n, q), 4);
	assert_string_equal(id1, id2); /* one id per response */
	assert_int_equal(n, 1);
	assert_string_equal(q, "a"); /* "a b_c." — sscanf stops at the space */
	assert_non_null(strstr(r.body, "q=a b_c."));
	say(c, "HEAD /t HTTP/1.1\r\nHost: t\r\n\r\n", 0);
	assert_true(get(c, &r, true));
	say(c, GET("/t"), 0);
	assert_true(get(c, &r, false));
	assert_non_null(strstr(r.body, " n=3 q=."));

	say(c, GET("/kv?keys=key7,nope,lit,key100,key07,a%22b"), 0);
	assert_true(get(c, &r, false));
	assert_int_equal(r.status, 200);
	/* {"key7":"<8 chars>","nope":null,...} */
	assert_int_equal(strncmp(r.body, "{\"key7\":\"", 9), 0);
	assert_int_equal(r.body[9 + 8], '"');
	assert_non_null(strstr(r.body, ",\"nope\":null,\"lit\":\"value\",\"key100\":null,\"key07\":null,"
	                               "\"a\\\"b\":null}\n"));
	/* the same key gives the same value */
	char first[64];
	snprintf(first, sizeof first, "%.18s", r.body);
	say(c, GET("/kv?keys=key7"), 0);
	assert_true(get(c, &r, false));
	assert_int_equal(strncmp(r.body, first, 18), 0);
	say(c, GET("/kv"), 0);
	assert_true(get(c, &r, false));
	assert_string_equal(r.body, "{}\n");
	hangup(c);
	stop();
}

/* Answers drawn from the plan's rng: the same seed gives the same sequence,
 * and the proportions are those configured. */
static void outcomes(const char *yaml, char *seq, int n)
{
	start(yaml, 1);
	struct client *c = dial();
	for (int i = 0; i < n; i++) {
		struct resp r;
		say(c, GET("/"), 0);
		assert_true(get(c, &r, false));
		seq[i] = r.status == 503 ? 'E' : r.status == 204 ? 'N' : 'F';
	}
	seq[n] = '\0';
	hangup(c);
	stop();
}

static void test_seeded_outcomes(void **state)
{
	(void)state;
	const char *base = "routes:\n  - {path: /, fill: 0.5, status: {200: 0.9, 503: 0.1}, body: ad}\n";
	char yaml[256], a[2001], b[2001], d[2001];
	snprintf(yaml, sizeof yaml, "seed: 7\n%s", base);
	outcomes(yaml, a, 2000);
	outcomes(yaml, b, 2000);
	assert_string_equal(a, b);
	snprintf(yaml, sizeof yaml, "seed: 8\n%s", base);
	outcomes(yaml, d, 2000);
	assert_string_not_equal(a, d);
	size_t f = 0, nf = 0, e = 0;
	for (int i = 0; i < 2000; i++)
		f += a[i] == 'F', nf += a[i] == 'N', e += a[i] == 'E';
	/* within 5 standard deviations */
	assert_true(fabs((double)e - 200) <= 5 * sqrt(2000 * 0.1 * 0.9));
	assert_true(fabs((double)f - 900) <= 5 * sqrt(2000 * 0.45 * 0.55));
	assert_int_equal(f + nf + e, 2000);
}

static void test_threads_and_limits(void **state)
{
	(void)state;
	start("max_connections: 6\nroutes:\n  - {path: /, prefix: true, body: hi}\n", 3);
	struct client *cs[6];
	for (int i = 0; i < 6; i++) {
		cs[i] = dial();
		want_resp(cs[i], GET("/"), 200, "hi");
	}
	/* a seventh is accepted and closed at once */
	struct client *extra = dial();
	want_eof(extra);
	hangup(extra);
	for (int i = 0; i < 6; i++)
		want_resp(cs[i], GET("/again"), 200, "hi");
	struct target_stats st;
	target_stats(srv, &st);
	assert_int_equal(st.connections, 6);
	assert_int_equal(st.rejected, 1);
	assert_int_equal(st.requests, 12);
	/* the three server threads' IDs, each a thread of this process, none
	 * this test's own (a thread says it once it runs: waited for) */
	pid_t tids[8];
	for (int i = 0; i < 500 && target_tids(srv, tids, 8) < 3; i++)
		nanosleep(&(struct timespec){0, 10 * 1000 * 1000}, NULL);
	assert_int_equal(target_tids(srv, tids, 8), 3);
	assert_int_equal(target_tids(srv, tids, 2), 2);
	assert_int_equal(target_tids(srv, tids, 8), 3);
	for (int i = 0; i < 3; i++) {
		char path[64];
		snprintf(path, sizeof path, "/proc/self/task/%d", (int)tids[i]);
		assert_int_equal(access(path, F_OK), 0);
		assert_true(tids[i] != gettid());
		for (int k = 0; k < i; k++)
			assert_true(tids[k] != tids[i]);
	}
	/* stop with the connections still open */
	stop();
	for (int i = 0; i < 6; i++) {
		want_eof(cs[i]);
		hangup(cs[i]);
	}
}

static void test_bind_in_use(void **state)
{
	(void)state;
	start(hello_plan, 1);
	struct net_addr a;
	assert_int_equal(net_resolve("127.0.0.1", (uint16_t)target_port(srv), &a, NULL), 0);
	struct target *t2 = NULL;
	assert_int_equal(target_start(&t2, plan, &a, 1), -EADDRINUSE);
	assert_null(t2);
	assert_int_equal(target_start(&t2, plan, &a, 0), -EINVAL);
	stop();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hello_exact),      cmocka_unit_test(test_pipelining_in_order),
		cmocka_unit_test(test_pipelined_large),
		cmocka_unit_test(test_http10),           cmocka_unit_test(test_hostile),
		cmocka_unit_test(test_timeouts),         cmocka_unit_test(test_half_close),
		cmocka_unit_test(test_expect_continue),  cmocka_unit_test(test_latency_and_timing),
		cmocka_unit_test(test_close_after_and_garbage), cmocka_unit_test(test_slow_body),
		cmocka_unit_test(test_stall),            cmocka_unit_test(test_templates_and_kv),
		cmocka_unit_test(test_seeded_outcomes),  cmocka_unit_test(test_threads_and_limits),
		cmocka_unit_test(test_bind_in_use),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
