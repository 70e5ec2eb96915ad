/* Tests of the embedded target's HTTP/2 (src/target/h2.c) over real loopback
 * sockets: the server is started with target_opts.h2 on an ephemeral port
 * and driven by an nghttp2 client session on a blocking socket (5 s receive
 * timeout, so a bug fails a test instead of hanging it). Checks that many
 * streams of one connection are answered (and counted in target_stats as
 * requests), the SETTINGS the server sends, per-stream latency as a lower
 * bound, the server's own errors and misbehaviours per stream, and HTTP/1.1
 * beside h2c on the same port. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <setjmp.h>
#include <stdbool.h>
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
#include <nghttp2/nghttp2.h>

#include "net/sock.h"
#include "target/target.h"
#include "util/clock.h"

#define MAXS 64

static struct target *srv;
static struct target_plan *plan;

static const char yaml[] = "name: t\n"
			   "routes:\n"
			   "  - path: /slow\n"
			   "    latency: {dist: fixed, value: 20ms}\n"
			   "  - path: /garbage\n"
			   "    misbehave: {garbage: 1}\n"
			   "  - path: /echo\n"
			   "    body: \"q={{query:x}}\\n\"\n"
			   "  - path: /\n"
			   "    prefix: true\n"
			   "    body: \"hello\\n\"\n";

static void start_plan(const char *text, uint32_t max_streams)
{
	char err[512];
	if (target_plan_parse(text, strlen(text), "test.yaml", &plan, err, sizeof err))
		fail_msg("plan: %s", err);
	struct net_addr a;
	assert_int_equal(net_resolve("127.0.0.1", 0, &a, NULL), 0);
	struct target_opts o = {.h2 = true, .max_streams = max_streams};
	assert_int_equal(target_start_opts(&srv, plan, &a, 1, &o), 0);
}

static void start(uint32_t max_streams) { start_plan(yaml, max_streams); }

static void stop(void)
{
	target_stop(srv);
	srv = NULL;
	target_plan_free(plan);
	plan = NULL;
}

static int dial(void)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	assert_true(fd >= 0);
	struct timeval tv = {.tv_sec = 5};
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
	int one = 1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	struct sockaddr_in sin = {.sin_family = AF_INET, .sin_port = htons((uint16_t)target_port(srv))};
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(connect(fd, (struct sockaddr *)&sin, sizeof sin), 0);
	return fd;
}

/* ---- an nghttp2 client on a blocking socket ----------------------------- */

struct h2c {
	int fd;
	nghttp2_session *ng;
	int n, done;
	int32_t id[MAXS];
	int status[MAXS];
	uint32_t reset[MAXS]; /* RST_STREAM code, or 0 */
	size_t body_len[MAXS];
	char body[MAXS][64];
	uint64_t t0[MAXS], t1[MAXS];
};

static int slot_of(struct h2c *h, int32_t id)
{
	for (int i = 0; i < h->n; i++)
		if (h->id[i] == id)
			return i;
	return -1;
}

static ssize_t c_send(nghttp2_session *ng, const uint8_t *d, size_t n, int fl, void *ud)
{
	(void)ng;
	(void)fl;
	struct h2c *h = ud;
	ssize_t w = send(h->fd, d, n, MSG_NOSIGNAL);
	return w < 0 ? NGHTTP2_ERR_CALLBACK_FAILURE : w;
}

static int c_header(nghttp2_session *ng, const nghttp2_frame *f, const uint8_t *name, size_t nl,
		    const uint8_t *value, size_t vl, uint8_t flags, void *ud)
{
	(void)ng;
	(void)flags;
	(void)vl;
	struct h2c *h = ud;
	int i = slot_of(h, f->hd.stream_id);
	if (i >= 0 && nl == 7 && !memcmp(name, ":status", 7))
		h->status[i] = atoi((const char *)value); /* nghttp2 ends it with a NUL */
	return 0;
}

static int c_data(nghttp2_session *ng, uint8_t flags, int32_t id, const uint8_t *d, size_t n,
		  void *ud)
{
	(void)ng;
	(void)flags;
	struct h2c *h = ud;
	int i = slot_of(h, id);
	if (i >= 0) {
		size_t room = sizeof h->body[i] - 1 - h->body_len[i];
		memcpy(h->body[i] + h->body_len[i], d, n < room ? n : room);
		h->body_len[i] += n < room ? n : room;
	}
	return 0;
}

static int c_close(nghttp2_session *ng, int32_t id, uint32_t code, void *ud)
{
	(void)ng;
	struct h2c *h = ud;
	int i = slot_of(h, id);
	if (i >= 0) {
		h->reset[i] = code;
		h->t1[i] = clock_now_ns();
		h->done++;
	}
	return 0;
}

static void h2c_open(struct h2c *h)
{
	memset(h, 0, sizeof *h);
	h->fd = dial();
	nghttp2_session_callbacks *cb;
	assert_int_equal(nghttp2_session_callbacks_new(&cb), 0);
	nghttp2_session_callbacks_set_send_callback(cb, c_send);
	nghttp2_session_callbacks_set_on_header_callback(cb, c_header);
	nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cb, c_data);
	nghttp2_session_callbacks_set_on_stream_close_callback(cb, c_close);
	assert_int_equal(nghttp2_session_client_new(&h->ng, cb, h), 0);
	nghttp2_session_callbacks_del(cb);
	assert_int_equal(nghttp2_submit_settings(h->ng, NGHTTP2_FLAG_NONE, NULL, 0), 0);
}

static void h2c_close(struct h2c *h)
{
	nghttp2_session_del(h->ng);
	close(h->fd);
}

#define NV(n, v) {(uint8_t *)(n), (uint8_t *)(v), sizeof(n) - 1, strlen(v), NGHTTP2_NV_FLAG_NONE}

static void h2c_get(struct h2c *h, const char *path, const char *extra_name, const char *extra_val)
{
	assert_true(h->n < MAXS);
	nghttp2_nv nv[5] = {NV(":method", "GET"), NV(":scheme", "http"), NV(":authority", "127.0.0.1"),
			    NV(":path", path)};
	size_t n = 4;
	if (extra_name)
		nv[n++] = (nghttp2_nv){(uint8_t *)(uintptr_t)extra_name, (uint8_t *)(uintptr_t)extra_val,
				       strlen(extra_name), strlen(extra_val), NGHTTP2_NV_FLAG_NONE};
	int32_t id = nghttp2_submit_request(h->ng, NULL, nv, n, NULL, NULL);
	assert_true(id > 0);
	h->id[h->n] = id;
	h->t0[h->n] = clock_now_ns();
	h->n++;
}

/* Send and receive until every stream submitted has closed. */
static void h2c_wait(struct h2c *h)
{
	uint8_t buf[16384];
	while (h->done < h->n) {
		assert_int_equal(nghttp2_session_send(h->ng), 0);
		ssize_t r = recv(h->fd, buf, sizeof buf, 0);
		if (r <= 0)
			fail_msg("recv: %zd (%s) with %d of %d streams done", r, strerror(errno), h->done,
				 h->n);
		assert_int_equal(nghttp2_session_mem_recv(h->ng, buf, (size_t)r), r);
	}
	assert_int_equal(nghttp2_session_send(h->ng), 0);
}

/* ---- tests ------------------------------------------------------------ */

static void test_streams_answered_and_counted(void **state)
{
	(void)state;
	start(0);
	struct h2c h;
	h2c_open(&h);
	for (int i = 0; i < 50; i++)
		h2c_get(&h, "/", NULL, NULL);
	h2c_wait(&h);
	for (int i = 0; i < 50; i++) {
		assert_int_equal(h.status[i], 200);
		assert_int_equal(h.reset[i], 0);
		assert_string_equal(h.body[i], "hello\n");
	}
	/* the server's own SETTINGS: the default stream limit and header cap */
	assert_int_equal(nghttp2_session_get_remote_settings(h.ng, NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS),
			 TARGET_H2_STREAMS_DEFAULT);
	assert_int_equal(nghttp2_session_get_remote_settings(h.ng, NGHTTP2_SETTINGS_MAX_HEADER_LIST_SIZE),
			 16384);
	struct target_stats st;
	target_stats(srv, &st);
	assert_int_equal(st.requests, 50);
	assert_int_equal(st.connections, 1);
	assert_int_equal(st.bad_requests, 0);
	h2c_close(&h);
	stop();
}

static void test_latency_per_stream(void **state)
{
	(void)state;
	start(0);
	struct h2c h;
	h2c_open(&h);
	for (int i = 0; i < 20; i++)
		h2c_get(&h, "/slow", NULL, NULL);
	h2c_get(&h, "/", NULL, NULL); /* not held back by the slow ones */
	h2c_wait(&h);
	for (int i = 0; i < 20; i++) {
		assert_int_equal(h.status[i], 200);
		assert_true(h.t1[i] - h.t0[i] >= 20 * NS_PER_MS);
	}
	assert_int_equal(h.status[20], 200);
	/* every slow stream's timer ran at once: the fast one was answered
	 * before the first slow one, whatever the machine's speed */
	assert_true(h.t1[20] <= h.t1[0]);
	h2c_close(&h);
	stop();
}

static void test_errors_and_misbehaviour_per_stream(void **state)
{
	(void)state;
	start(4);
	struct h2c h;
	h2c_open(&h);
	static char big[20000];
	memset(big, 'a', sizeof big - 1);
	h2c_get(&h, "/garbage", NULL, NULL);
	h2c_get(&h, "/", "x-big", big);
	h2c_get(&h, "/echo?x=a%20b", NULL, NULL);
	h2c_get(&h, "/nope/../", NULL, NULL);
	h2c_wait(&h);
	assert_int_equal(nghttp2_session_get_remote_settings(h.ng, NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS),
			 4);
	assert_int_equal(h.reset[0], NGHTTP2_INTERNAL_ERROR); /* garbage: the stream reset */
	assert_int_equal(h.status[1], 431);
	assert_int_equal(h.status[2], 200);
	assert_string_equal(h.body[2], "q=a b\n");
	assert_int_equal(h.status[3], 200);
	struct target_stats st;
	target_stats(srv, &st);
	assert_int_equal(st.requests, 4);
	assert_int_equal(st.bad_requests, 1);
	assert_int_equal(st.misbehaved, 1);
	h2c_close(&h);
	stop();
}

static void test_http1_beside_h2c(void **state)
{
	(void)state;
	start(0);
	int fd = dial();
	const char req[] = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";
	assert_int_equal(send(fd, req, sizeof req - 1, 0), (ssize_t)(sizeof req - 1));
	char buf[512];
	size_t len = 0;
	while (len < 10 || !strstr(buf, "hello\n")) {
		ssize_t r = recv(fd, buf + len, sizeof buf - 1 - len, 0);
		assert_true(r > 0);
		len += (size_t)r;
		buf[len] = '\0';
	}
	assert_memory_equal(buf, "HTTP/1.1 200 OK\r\n", 17);
	close(fd);
	/* almost the preface: HTTP/1.1 refuses it */
	fd = dial();
	const char pri[] = "PRI * HTTP/2.1\r\n\r\n";
	assert_int_equal(send(fd, pri, sizeof pri - 1, 0), (ssize_t)(sizeof pri - 1));
	len = 0;
	ssize_t r;
	while ((r = recv(fd, buf + len, sizeof buf - 1 - len, 0)) > 0)
		len += (size_t)r;
	buf[len] = '\0';
	assert_true(len >= 12);
	assert_memory_equal(buf, "HTTP/1.1 ", 9);
	assert_true(buf[9] == '4' || buf[9] == '5');
	close(fd);
	stop();
}

/* A client that opens no window for the answers (SETTINGS_INITIAL_WINDOW_SIZE
 * 0) and sends nothing more: the answer's DATA can never go, and the
 * connection is closed by the idle timeout rather than kept for ever. */
static void test_zero_window_is_idle(void **state)
{
	(void)state;
	start_plan("name: t\ntimeouts: {idle: 300ms}\nroutes:\n  - path: /\n    prefix: true\n"
		   "    body: \"hello\\n\"\n",
		   0);
	int fd = dial();
	static const unsigned char hs[] =
		"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
		"\0\0\6\4\0\0\0\0\0" "\0\4\0\0\0\0"       /* SETTINGS INITIAL_WINDOW_SIZE 0 */
		"\0\0\10\1\5\0\0\0\1" "\x82\x86\x84\x01\3a.b"; /* HEADERS, stream 1, GET / */
	uint64_t t0 = clock_now_ns();
	assert_int_equal(send(fd, hs, sizeof hs - 1, 0), (ssize_t)(sizeof hs - 1));
	char buf[4096];
	ssize_t r;
	while ((r = recv(fd, buf, sizeof buf, 0)) > 0)
		;
	assert_true(r == 0 || errno == ECONNRESET); /* closed, not the 5 s receive timeout */
	assert_true(clock_now_ns() - t0 >= 300 * NS_PER_MS);
	struct target_stats st;
	target_stats(srv, &st);
	assert_int_equal(st.requests, 1);
	assert_int_equal(st.timeouts, 1);
	close(fd);
	stop();
}

/* The client preface in two pieces, the first of which is a complete
 * HTTP/1.1-looking head ("PRI * HTTP/2.0\r\n\r\n"): still HTTP/2, and the
 * request after it is answered (a HEADERS and a DATA frame on stream 1). */
static void test_preface_in_pieces(void **state)
{
	(void)state;
	start(0);
	int fd = dial();
	static const char p1[] = "PRI * HTTP/2.0\r\n\r\nS";
	static const unsigned char p2[] = "M\r\n\r\n"
					  "\0\0\0\4\0\0\0\0\0"                  /* SETTINGS */
					  "\0\0\10\1\5\0\0\0\1" "\x82\x86\x84\x01\3a.b"; /* GET / */
	assert_int_equal(send(fd, p1, sizeof p1 - 1, 0), (ssize_t)(sizeof p1 - 1));
	struct timespec ts = {0, 50 * 1000000L};
	nanosleep(&ts, NULL);
	assert_int_equal(send(fd, p2, sizeof p2 - 1, 0), (ssize_t)(sizeof p2 - 1));
	unsigned char buf[4096];
	size_t len = 0;
	bool headers = false, data = false;
	while (!(headers && data)) {
		ssize_t r = recv(fd, buf + len, sizeof buf - len, 0);
		assert_true(r > 0);
		len += (size_t)r;
		size_t off = 0;
		while (len - off >= 9) {
			size_t n = (size_t)buf[off] << 16 | (size_t)buf[off + 1] << 8 | buf[off + 2];
			if (len - off < 9 + n)
				break;
			uint32_t sid = ((uint32_t)buf[off + 5] << 24 | (uint32_t)buf[off + 6] << 16 |
					(uint32_t)buf[off + 7] << 8 | buf[off + 8]) & 0x7fffffffu;
			assert_true(buf[off + 3] != 7); /* no GOAWAY */
			if (sid == 1 && buf[off + 3] == 1)
				headers = true;
			if (sid == 1 && buf[off + 3] == 0) {
				assert_int_equal(n, 6);
				assert_memory_equal(buf + off + 9, "hello\n", 6);
				data = true;
			}
			off += 9 + n;
		}
		memmove(buf, buf + off, len - off);
		len -= off;
	}
	close(fd);
	stop();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_streams_answered_and_counted),
		cmocka_unit_test(test_latency_per_stream),
		cmocka_unit_test(test_errors_and_misbehaviour_per_stream),
		cmocka_unit_test(test_http1_beside_h2c),
		cmocka_unit_test(test_zero_window_is_idle),
		cmocka_unit_test(test_preface_in_pieces),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
