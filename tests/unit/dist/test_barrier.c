/* Tests of the start barrier and the hand-in (src/dist/coord.c, client.c)
 * on loopback: N segments get one start; a barrier timeout releases those
 * present and a late segment gets the same (past) start; a segment that
 * cannot reach segment 0 gives up at its deadline naming why; another
 * secret, plan or count is refused; results are stored once, refused when
 * they contradict; hostile connections get an error or are dropped by the
 * read timeout, and the coordinator goes on. */
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
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

#include "dist/dist.h"
#include "dist/frame.h"
#include "util/clock.h"
#include "util/err.h"

#define MS 1000000ull
#define SECRET "s3cret"

static const char *plan_hex(void)
{
	static char h[WIRE_MAC_HEX + 1];
	char *argv[] = {"run", "http://t/", "--segment", "0/3", "--rate", "100"};
	assert_true(wire_plan_fingerprint(6, argv, h));
	return h;
}

/* Segment 1 of 3's check-in, of the plan plan_hex() fingerprints, from host "h". */
static struct wire_checkin checkin_1_of_3(void)
{
	struct wire_checkin ci = {.segment = 1, .count = 3};
	snprintf(ci.plan, sizeof ci.plan, "%s", plan_hex());
	snprintf(ci.host, sizeof ci.host, "h");
	return ci;
}

static struct dist_coord *start(uint32_t n, uint64_t timeout_ns, uint64_t margin_ns)
{
	struct dist_coord_cfg cfg = {.port = 0, .loopback = true, .count = n, .secret = SECRET,
				     .barrier_timeout_ns = timeout_ns, .margin_ns = margin_ns,
				     .io_timeout_ns = 300 * MS};
	memcpy(cfg.plan, plan_hex(), sizeof cfg.plan);
	struct dist_coord *c;
	assert_int_equal(dist_coord_start(&cfg, &c), 0);
	return c;
}

struct checker {
	uint16_t port;
	uint32_t seg, count;
	const char *secret;
	char plan[WIRE_MAC_HEX + 1]; /* its own copy: the thread reads it */
	uint64_t deadline;
	int rc;
	uint64_t start_ns;
	uint32_t in;
	char err[256];
	pthread_t t;
};

static void *check_in(void *arg)
{
	struct checker *k = arg;
	struct dist_peer p = {.host = "127.0.0.1", .port = k->port, .secret = k->secret};
	struct wire_checkin ci = {.segment = k->seg, .count = k->count};
	snprintf(ci.plan, sizeof ci.plan, "%s", k->plan);
	snprintf(ci.host, sizeof ci.host, "seg-%u", k->seg);
	k->rc = dist_checkin(&p, &ci, k->deadline, &k->start_ns, &k->in, k->err, sizeof k->err);
	return NULL;
}

static void spawn(struct checker *k, uint16_t port, uint32_t seg, uint32_t count,
		  uint64_t deadline)
{
	memset(k, 0, sizeof *k);
	k->port = port;
	k->seg = seg;
	k->count = count;
	k->secret = SECRET;
	memcpy(k->plan, plan_hex(), sizeof k->plan);
	k->deadline = deadline;
	assert_int_equal(pthread_create(&k->t, NULL, check_in, k), 0);
}

static void test_all_check_in_one_start(void **state)
{
	(void)state;
	struct dist_coord *c = start(3, 10000 * MS, 300 * MS);
	uint16_t port = dist_coord_port(c);
	struct checker k[2];
	uint64_t t0 = clock_now_ns();
	for (uint32_t i = 0; i < 2; i++)
		spawn(&k[i], port, i + 1, 3, t0 + 5000 * MS);
	uint64_t start_ns;
	uint32_t in;
	dist_coord_wait_release(c, &start_ns, &in);
	assert_int_equal(in, 3);
	/* released as soon as all were in, not at the timeout */
	assert_true(clock_now_ns() - t0 < 3000 * MS);
	uint64_t wall = clock_wall_ns();
	assert_true(start_ns > wall && start_ns <= wall + 300 * MS);
	for (int i = 0; i < 2; i++) {
		pthread_join(k[i].t, NULL);
		assert_int_equal(k[i].rc, 0);
		assert_true(k[i].start_ns == start_ns);
		assert_true(dist_coord_checked_in(c, (uint32_t)i + 1));
	}
	const char *why;
	assert_int_equal(dist_coord_refused(c, &why), 0);
	dist_coord_stop(c);
}

static void test_timeout_releases_and_late_gets_past_start(void **state)
{
	(void)state;
	uint64_t t0 = clock_now_ns();
	struct dist_coord *c = start(3, 400 * MS, 100 * MS);
	uint16_t port = dist_coord_port(c);
	struct checker k1, k2;
	spawn(&k1, port, 1, 3, t0 + 5000 * MS);
	uint64_t start_ns;
	uint32_t in;
	dist_coord_wait_release(c, &start_ns, &in);
	uint64_t waited = clock_now_ns() - t0;
	assert_int_equal(in, 2); /* 0 and 1: 2 never came in time */
	assert_true(waited >= 400 * MS && waited < 1500 * MS);
	pthread_join(k1.t, NULL);
	assert_int_equal(k1.rc, 0);
	assert_true(k1.start_ns == start_ns);
	/* segment 2 comes after the start: it gets the same start, now past */
	while (clock_wall_ns() < start_ns + 50 * MS)
		usleep(10000);
	spawn(&k2, port, 2, 3, clock_now_ns() + 5000 * MS);
	pthread_join(k2.t, NULL);
	assert_int_equal(k2.rc, 0);
	assert_true(k2.start_ns == start_ns);
	assert_true(k2.start_ns < clock_wall_ns());
	assert_int_equal(k2.in, 3);
	/* after the run, a check-in is refused: it is over */
	dist_coord_close_checkin(c);
	dist_coord_stop(c);
}

static void test_unreachable_gives_up_at_deadline(void **state)
{
	(void)state;
	/* a port no one listens on: bind one, close it */
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t al = sizeof a;
	assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
	getsockname(fd, (struct sockaddr *)&a, &al);
	uint16_t port = ntohs(a.sin_port);
	close(fd);
	struct checker k;
	uint64_t t0 = clock_now_ns();
	spawn(&k, port, 1, 3, t0 + 500 * MS);
	pthread_join(k.t, NULL);
	uint64_t took = clock_now_ns() - t0;
	assert_int_equal(k.rc, -ETIMEDOUT);
	assert_true(took >= 500 * MS && took < 2500 * MS);
	assert_non_null(strstr(k.err, "before the barrier timeout"));
	assert_non_null(strstr(k.err, "cannot connect"));
	/* the tries are tallied: every one could not connect to the address */
	assert_non_null(strstr(k.err, "tries over"));
	assert_non_null(strstr(k.err, "could not connect in"));
	assert_non_null(strstr(k.err, "last resolved to 127.0.0.1"));
	assert_null(strstr(k.err, "did not resolve"));
}

static void test_unresolvable_name_said(void **state)
{
	(void)state;
	/* a name under .invalid never resolves (RFC 6761) */
	struct dist_peer p = {.host = "segment-0.pacer.invalid", .port = 7450, .secret = SECRET};
	struct wire_checkin ci = checkin_1_of_3();
	uint64_t s;
	uint32_t in;
	char err[512];
	assert_int_equal(dist_checkin(&p, &ci, clock_now_ns() + 300 * MS, &s, &in, err, sizeof err),
			 -ETIMEDOUT);
	assert_non_null(strstr(err, "the name did not resolve in"));
	assert_non_null(strstr(err, "the name never resolved"));
}

static void test_refusals(void **state)
{
	(void)state;
	struct dist_coord *c = start(3, 10000 * MS, 100 * MS);
	uint16_t port = dist_coord_port(c);
	/* another secret: segment 0 answers 401 with a reply this side cannot
	 * check */

	struct dist_peer bad = {.host = "127.0.0.1", .port = port, .secret = "other"};
	struct wire_checkin ci = checkin_1_of_3();
	uint64_t s;
	uint32_t in;
	char err[256];
	assert_int_equal(dist_checkin(&bad, &ci, clock_now_ns() + 2000 * MS, &s, &in, err, sizeof err),
			 PACER_EUNSUPPORTED);
	assert_non_null(strstr(err, "PACER_BARRIER_TOKEN"));
	struct dist_peer good = {.host = "127.0.0.1", .port = port, .secret = SECRET};
	/* another plan */
	struct wire_checkin other = ci;
	other.plan[0] = other.plan[0] == 'a' ? 'b' : 'a';
	assert_int_equal(dist_checkin(&good, &other, clock_now_ns() + 2000 * MS, &s, &in, err,
				      sizeof err),
			 PACER_EUNSUPPORTED);
	assert_non_null(strstr(err, "(409)"));
	assert_non_null(strstr(err, "another plan"));
	/* another count */
	other = ci;
	other.count = 4;
	assert_int_equal(dist_checkin(&good, &other, clock_now_ns() + 2000 * MS, &s, &in, err,
				      sizeof err),
			 PACER_EUNSUPPORTED);
	assert_non_null(strstr(err, "segment count"));
	/* a second segment 0 */
	other = ci;
	other.segment = 0;
	assert_int_equal(dist_checkin(&good, &other, clock_now_ns() + 2000 * MS, &s, &in, err,
				      sizeof err),
			 PACER_EUNSUPPORTED);
	assert_non_null(strstr(err, "two segments 0"));
	const char *why;
	assert_int_equal(dist_coord_refused(c, &why), 4);
	/* none of them checked in */
	assert_false(dist_coord_checked_in(c, 1));
	dist_coord_close_checkin(c);
	/* closed: too late */
	assert_int_equal(dist_checkin(&good, &ci, clock_now_ns() + 2000 * MS, &s, &in, err, sizeof err),
			 PACER_EUNSUPPORTED);
	assert_non_null(strstr(err, "(410)"));
	dist_coord_stop(c);
}

static char *result_frame(uint32_t k, uint32_t n, const char *extra, size_t *len)
{
	char json[256];
	snprintf(json, sizeof json, "{\"kind\":\"run\",\"plan\":{\"segment\":{\"index\":%u,\"count\":%u}}%s}",
		 k, n, extra);
	char *f;
	assert_int_equal(frame_encode(json, strlen(json), "segment", "x", &f, len), 0);
	return f;
}

static void test_handin(void **state)
{
	(void)state;
	struct dist_coord *c = start(3, 300 * MS, 10 * MS);
	uint16_t port = dist_coord_port(c);
	struct checker k;
	spawn(&k, port, 1, 3, clock_now_ns() + 5000 * MS);
	pthread_join(k.t, NULL);
	assert_int_equal(k.rc, 0);
	uint64_t s;
	uint32_t in;
	dist_coord_wait_release(c, &s, &in);
	struct dist_peer p = {.host = "127.0.0.1", .port = port, .secret = SECRET};
	char err[256];
	size_t len;
	char *f1 = result_frame(1, 3, "", &len);
	assert_int_equal(dist_handin(&p, f1, len, clock_now_ns() + 2000 * MS, err, sizeof err), 0);
	/* again, the same: fine */
	assert_int_equal(dist_handin(&p, f1, len, clock_now_ns() + 2000 * MS, err, sizeof err), 0);
	size_t jl;
	const char *j = dist_coord_result(c, 1, &jl);
	assert_non_null(j);
	assert_non_null(strstr(j, "\"index\":1"));
	/* another result of segment 1: refused */
	size_t l2;
	char *f2 = result_frame(1, 3, ",\"x\":1", &l2);
	assert_int_equal(dist_handin(&p, f2, l2, clock_now_ns() + 2000 * MS, err, sizeof err),
			 PACER_EUNSUPPORTED);
	assert_non_null(strstr(err, "handed in before"));
	/* segment 2 never checked in */
	size_t l3;
	char *f3 = result_frame(2, 3, "", &l3);
	assert_int_equal(dist_handin(&p, f3, l3, clock_now_ns() + 2000 * MS, err, sizeof err),
			 PACER_EUNSUPPORTED);
	assert_non_null(strstr(err, "never checked in"));
	/* not a frame */
	assert_int_equal(dist_handin(&p, "{}", 2, clock_now_ns() + 2000 * MS, err, sizeof err),
			 PACER_EUNSUPPORTED);
	assert_non_null(strstr(err, "(400)"));
	/* all those that checked in have handed in: no wait */
	uint64_t t0 = clock_now_ns();
	assert_int_equal(dist_coord_wait_results(c, t0 + 5000 * MS), 0);
	assert_true(clock_now_ns() - t0 < 200 * MS);
	free(f1);
	free(f2);
	free(f3);
	dist_coord_stop(c);
}

static void test_wait_results_times_out(void **state)
{
	(void)state;
	struct dist_coord *c = start(2, 5000 * MS, 10 * MS);
	struct checker k;
	spawn(&k, dist_coord_port(c), 1, 2, clock_now_ns() + 5000 * MS);
	pthread_join(k.t, NULL);
	assert_int_equal(k.rc, 0);
	uint64_t t0 = clock_now_ns();
	assert_int_equal(dist_coord_wait_results(c, t0 + 300 * MS), 1);
	uint64_t took = clock_now_ns() - t0;
	assert_true(took >= 300 * MS && took < 1500 * MS);
	dist_coord_stop(c);
}

/* Raw bytes to the coordinator; its reply (or "" when it closed). */
static void raw(uint16_t port, const char *send_, size_t n, char *out, size_t cap)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port),
				.sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof a), 0);
	if (n)
		assert_int_equal(write(fd, send_, n), (ssize_t)n);
	size_t have = 0;
	ssize_t r;
	while (have + 1 < cap && (r = read(fd, out + have, cap - have - 1)) > 0)
		have += (size_t)r;
	out[have] = '\0';
	close(fd);
}

static void test_hostile_connections(void **state)
{
	(void)state;
	struct dist_coord *c = start(2, 60000 * MS, 10 * MS);
	uint16_t port = dist_coord_port(c);
	char out[2048];
	const struct {
		const char *req;
		const char *status;
	} cases[] = {
		{"GET / HTTP/1.1\r\n\r\n", "404"},
		{"GET /pacer/v1/checkin HTTP/1.1\r\n\r\n", "405"},
		{"POST /pacer/v1/checkin HTTP/1.1\r\n\r\n", "411"},
		{"POST /pacer/v1/checkin HTTP/1.1\r\nContent-Length: 99999999\r\n\r\n", "413"},
		{"POST /pacer/v1/checkin HTTP/1.1\r\nContent-Length: 3\r\n\r\nabc", "401"},
		{"POST /pacer/v1/checkin HTTP/1.1\r\nContent-Length: 3\r\nX-Pacer-Auth: "
		 "0000000000000000000000000000000000000000000000000000000000000000\r\n\r\nabc",
		 "401"},
		{"POST /pacer/v1/result HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n", "400"},
		{"garbage\r\n\r\n", "400"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		raw(port, cases[i].req, strlen(cases[i].req), out, sizeof out);
		if (strncmp(out, "HTTP/1.1 ", 9) || strncmp(out + 9, cases[i].status, 3))
			fail_msg("case %zu: '%.60s'", i, out);
		assert_non_null(strstr(out, "error "));
	}
	/* a head with no end, over the cap */
	char *big = malloc(WIRE_MAX_HEAD + 10);
	memset(big, 'a', WIRE_MAX_HEAD + 10);
	raw(port, big, WIRE_MAX_HEAD + 10, out, sizeof out);
	assert_memory_equal(out, "HTTP/1.1 413", 12);
	free(big);
	/* silent, then a body that never comes: dropped at the read timeout */
	uint64_t t0 = clock_now_ns();
	raw(port, "", 0, out, sizeof out);
	assert_string_equal(out, "");
	const char *part = "POST /pacer/v1/checkin HTTP/1.1\r\nContent-Length: 100\r\nX-Pacer-Auth: "
			   "0000000000000000000000000000000000000000000000000000000000000000\r\n\r\nab";
	raw(port, part, strlen(part), out, sizeof out);
	assert_string_equal(out, "");
	assert_true(clock_now_ns() - t0 < 3000 * MS);
	/* and it still works */
	struct checker k;
	spawn(&k, port, 1, 2, clock_now_ns() + 5000 * MS);
	pthread_join(k.t, NULL);
	assert_int_equal(k.rc, 0);
	const char *why;
	assert_true(dist_coord_refused(c, &why) >= 8);
	dist_coord_stop(c);
}

/* The plan's fingerprint: the same for every segment of one plan, whatever
 * its K, outputs or barrier options; another for another plan. */
static void test_fingerprint(void **state)
{
	(void)state;
	char a[WIRE_MAC_HEX + 1], b[WIRE_MAC_HEX + 1];
	char *s0[] = {"http://t/", "--rate", "1k", "--segment", "0/3", "-o", "-", "--barrier",
		      "x-0.x:7450", "--barrier-timeout", "1s", "--framed", "-q"};
	char *s2[] = {"http://t/", "--rate", "1k", "--segment=2/3", "--out=seg2.json",
		      "--barrier", "x-0.x", "--barrier-timeout=30s", "--limited-ok"};
	assert_true(wire_plan_fingerprint(13, s0, a));
	assert_true(wire_plan_fingerprint(9, s2, b));
	assert_string_equal(a, b);
	char *other[] = {"http://t/", "--rate", "2k", "--segment", "0/3"};
	char *four[] = {"http://t/", "--rate", "1k", "--segment", "0/4"};
	assert_true(wire_plan_fingerprint(5, other, b));
	assert_string_not_equal(a, b);
	assert_true(wire_plan_fingerprint(5, four, b));
	assert_string_not_equal(a, b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_all_check_in_one_start),
		cmocka_unit_test(test_timeout_releases_and_late_gets_past_start),
		cmocka_unit_test(test_unreachable_gives_up_at_deadline),
		cmocka_unit_test(test_unresolvable_name_said),
		cmocka_unit_test(test_refusals),
		cmocka_unit_test(test_handin),
		cmocka_unit_test(test_wait_results_times_out),
		cmocka_unit_test(test_hostile_connections),
		cmocka_unit_test(test_fingerprint),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
