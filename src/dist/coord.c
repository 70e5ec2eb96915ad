/* pacer — segment 0's coordinator: the start barrier and the collection of
 * the segments' results (see dist.h). */
#include "dist/dist.h"

#include <arpa/inet.h>
#include <errno.h>
#include <jansson.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "dist/frame.h"
#include "net/sock.h"
#include "util/clock.h"
#include "util/err.h"

#define TICK_MS 100                /* the thread looks at the clock and the stop flag */
#define BODY_BYTES_PER_S (4u << 20) /* a body's time allowance beyond DIST_IO_TIMEOUT_NS */

struct seg {
	bool in;          /* checked in */
	uint64_t in_ns;   /* when it first did (CLOCK_REALTIME) */
	char *json;       /* its result, decoded (owned) */
	size_t len;
};

struct dist_coord {
	struct dist_coord_cfg cfg;
	char *secret;
	int fd;
	uint16_t port;
	pthread_t thread;
	atomic_bool stop;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	/* under mu */
	struct seg *seg;
	uint32_t n_in;
	bool released, closed;
	uint64_t start_ns;
	uint32_t in_at_release;
	uint32_t refused;
	const char *last_why;
	uint64_t t0_mono;
};

static void release_locked(struct dist_coord *c)
{
	if (c->released)
		return;
	c->released = true;
	c->start_ns = clock_wall_ns() + c->cfg.margin_ns;
	c->in_at_release = c->n_in;
	pthread_cond_broadcast(&c->cv);
}

/* ---- one connection ------------------------------------------------------------ */

/* Wait until fd is readable or deadline (CLOCK_MONOTONIC) passes: 1, 0
 * (the deadline), or a negative errno. */
static int wait_readable(int fd, uint64_t deadline)
{
	for (;;) {
		uint64_t now = clock_now_ns();
		if (now >= deadline)
			return 0;
		struct pollfd p = {.fd = fd, .events = POLLIN};
		int ms = (int)((deadline - now) / 1000000u) + 1;
		int n = poll(&p, 1, ms > 1000 ? 1000 : ms);
		if (n > 0)
			return 1;
		if (n < 0 && errno != EINTR)
			return -errno;
	}
}

/* Read into buf[have..cap) once fd is readable: the new count of bytes,
 * or a negative errno (-ETIMEDOUT past deadline, -ECONNRESET at the end
 * of the stream). */
static ssize_t read_more(int fd, char *buf, size_t cap, size_t have, uint64_t deadline)
{
	for (;;) {
		int w = wait_readable(fd, deadline);
		if (w <= 0)
			return w < 0 ? w : -ETIMEDOUT;
		ssize_t r = read(fd, buf + have, cap - have);
		if (r < 0 && (errno == EAGAIN || errno == EINTR))
			continue;
		if (r <= 0)
			return r < 0 ? -errno : -ECONNRESET;
		return (ssize_t)have + r;
	}
}

/* The request's head into buf[WIRE_MAX_HEAD] (with whatever of the body
 * came with it): the bytes held, *status 0 and *rq; or *status an HTTP
 * status to answer with and *why; or a negative errno (gone, too slow). */
static ssize_t read_head(int fd, char *buf, uint64_t deadline, struct wire_request *rq,
			 int *status, const char **why)
{
	size_t have = 0;
	for (;;) {
		int st = wire_parse_request(buf, have, rq, why);
		if (st != 1) {
			*status = st;
			return (ssize_t)have;
		}
		ssize_t r = read_more(fd, buf, WIRE_MAX_HEAD, have, deadline);
		if (r < 0)
			return r;
		have = (size_t)r;
	}
}

static void write_all(int fd, const char *p, size_t n, uint64_t deadline)
{
	while (n) {
		uint64_t now = clock_now_ns();
		if (now >= deadline)
			return;
		struct pollfd pf = {.fd = fd, .events = POLLOUT};
		if (poll(&pf, 1, (int)((deadline - now) / 1000000u) + 1) <= 0)
			continue;
		ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
		if (w < 0 && (errno == EAGAIN || errno == EINTR))
			continue;
		if (w <= 0)
			return;
		p += w;
		n -= (size_t)w;
	}
}

static void reply(struct dist_coord *c, int fd, const char *req_mac, int status, const char *body)
{
	char out[WIRE_MAX_HEAD + WIRE_MAX_REPLY];
	/* an unauthenticated request gets a reply no one can check: its MAC is
	 * over a MAC of zeros */
	static const char zeros[WIRE_MAC_HEX + 1] =
		"0000000000000000000000000000000000000000000000000000000000000000";
	size_t n = wire_format_reply(c->secret, req_mac && req_mac[0] ? req_mac : zeros, status,
				     body, strlen(body), out, sizeof out);
	if (n)
		write_all(fd, out, n, clock_now_ns() + DIST_IO_TIMEOUT_NS);
}

static void refuse(struct dist_coord *c, int fd, const char *req_mac, int status, const char *why)
{
	pthread_mutex_lock(&c->mu);
	c->refused++;
	c->last_why = why;
	pthread_mutex_unlock(&c->mu);
	char body[WIRE_MAX_REPLY];
	snprintf(body, sizeof body, "error %.900s\n", why);
	reply(c, fd, req_mac, status, body);
}

static void on_checkin(struct dist_coord *c, int fd, const struct wire_request *rq,
		       const char *body, size_t len)
{
	struct wire_checkin ci;
	const char *why;
	if (wire_parse_checkin(body, len, &ci, &why)) {
		refuse(c, fd, rq->mac, 400, why);
		return;
	}
	if (ci.count != c->cfg.count) {
		refuse(c, fd, rq->mac, 409, "another segment count than segment 0's");
		return;
	}
	if (strcmp(ci.plan, c->cfg.plan)) {
		refuse(c, fd, rq->mac, 409, "another plan than segment 0's (its arguments differ)");
		return;
	}
	if (ci.segment == 0) {
		refuse(c, fd, rq->mac, 409, "segment 0 is the one answering: two segments 0?");
		return;
	}
	char out[160];
	pthread_mutex_lock(&c->mu);
	if (c->closed && !c->seg[ci.segment].in) {
		pthread_mutex_unlock(&c->mu);
		refuse(c, fd, rq->mac, 410, "the run is over: segment 0 has finished its load");
		return;
	}
	if (!c->seg[ci.segment].in) {
		c->seg[ci.segment].in = true;
		c->seg[ci.segment].in_ns = clock_wall_ns();
		c->n_in++;
		if (c->n_in == c->cfg.count)
			release_locked(c);
	}
	if (c->released)
		snprintf(out, sizeof out, "start %llu %u/%u\n", (unsigned long long)c->start_ns,
			 c->n_in, c->cfg.count);
	else
		snprintf(out, sizeof out, "wait %u %u/%u\n", 100 + c->cfg.count / 4, c->n_in,
			 c->cfg.count);
	pthread_mutex_unlock(&c->mu);
	reply(c, fd, rq->mac, 200, out);
}

/* The segment index and count a result's JSON names (plan.segment). */
static bool result_segment(const char *json, size_t len, uint32_t *k, uint32_t *n)
{
	json_t *root = json_loadb(json, len, 0, NULL);
	json_t *seg = json_object_get(json_object_get(root, "plan"), "segment");
	json_t *ki = json_object_get(seg, "index"), *ni = json_object_get(seg, "count");
	bool ok = json_is_integer(ki) && json_is_integer(ni) && json_integer_value(ni) >= 1 &&
		  json_integer_value(ni) <= 1024 && json_integer_value(ki) >= 0 &&
		  json_integer_value(ki) < json_integer_value(ni);
	if (ok) {
		*k = (uint32_t)json_integer_value(ki);
		*n = (uint32_t)json_integer_value(ni);
	}
	json_decref(root);
	return ok;
}

static void on_result(struct dist_coord *c, int fd, const struct wire_request *rq,
		      const char *body, size_t len)
{
	struct frame_list fl;
	char ferr[256];
	int rc = frame_scan(body, len, FRAME_MAX_JSON, &fl, ferr, sizeof ferr);
	if (rc == -ENOMEM) {
		refuse(c, fd, rq->mac, 503, "out of memory");
		return;
	}
	if (rc || fl.n != 1) {
		frame_list_free(&fl);
		refuse(c, fd, rq->mac, 400, rc ? "the framed result does not decode"
					       : "not one framed result");
		return;
	}
	uint32_t k, n;
	if (!result_segment(fl.v[0].json, fl.v[0].len, &k, &n)) {
		frame_list_free(&fl);
		refuse(c, fd, rq->mac, 400, "not a segment's result (no plan.segment)");
		return;
	}
	const char *why = NULL;
	int status = 200;
	pthread_mutex_lock(&c->mu);
	if (n != c->cfg.count) {
		why = "a result of another segment count than segment 0's";
		status = 409;
	} else if (k == 0) {
		why = "segment 0's result comes from segment 0 itself";
		status = 409;
	} else if (!c->seg[k].in) {
		why = "a result of a segment that never checked in";
		status = 409;
	} else if (c->seg[k].json) {
		if (c->seg[k].len != fl.v[0].len || memcmp(c->seg[k].json, fl.v[0].json, fl.v[0].len)) {
			why = "another result of this segment was handed in before";
			status = 409;
		}
	} else {
		c->seg[k].json = fl.v[0].json;
		c->seg[k].len = fl.v[0].len;
		fl.v[0].json = NULL;
		pthread_cond_broadcast(&c->cv);
	}
	pthread_mutex_unlock(&c->mu);
	frame_list_free(&fl);
	if (why) {
		refuse(c, fd, rq->mac, status, why);
		return;
	}
	char out[64];
	snprintf(out, sizeof out, "stored %u/%u\n", k, n);
	reply(c, fd, rq->mac, 200, out);
}

static void serve_one(struct dist_coord *c, int fd)
{
	char head[WIRE_MAX_HEAD];
	struct wire_request rq;
	int status = 0;
	const char *why = "";
	uint64_t deadline = clock_now_ns() + c->cfg.io_timeout_ns;
	ssize_t have = read_head(fd, head, deadline, &rq, &status, &why);
	if (have < 0)
		return; /* gone or too slow: nothing to answer */
	if (status) {
		refuse(c, fd, NULL, status, why);
		return;
	}
	size_t cl = rq.content_length;
	char *body = malloc(cl + 1);
	if (!body) {
		refuse(c, fd, NULL, 503, "out of memory");
		return;
	}
	size_t got = (size_t)have - rq.head_len;
	if (got > cl)
		got = cl; /* bytes past the body: ignored (one request per connection) */
	memcpy(body, head + rq.head_len, got);
	deadline += (uint64_t)(cl / BODY_BYTES_PER_S) * 1000000000ull;
	while (got < cl) {
		ssize_t r = read_more(fd, body, cl, got, deadline);
		if (r < 0) {
			free(body);
			return;
		}
		got = (size_t)r;
	}
	char want[WIRE_MAC_HEX + 1];
	const char *path = rq.op == WIRE_CHECKIN ? WIRE_PATH_CHECKIN : WIRE_PATH_RESULT;
	if (!wire_mac_request(c->secret, path, body, cl, want) || !wire_mac_equal(want, rq.mac)) {
		free(body);
		refuse(c, fd, NULL, 401, "not authenticated: X-Pacer-Auth does not match "
					 "(another PACER_BARRIER_TOKEN?)");
		return;
	}
	if (rq.op == WIRE_CHECKIN)
		on_checkin(c, fd, &rq, body, cl);
	else
		on_result(c, fd, &rq, body, cl);
	free(body);
}

static void *coord_main(void *arg)
{
	struct dist_coord *c = arg;
	while (!atomic_load(&c->stop)) {
		pthread_mutex_lock(&c->mu);
		if (!c->released && clock_now_ns() - c->t0_mono >= c->cfg.barrier_timeout_ns)
			release_locked(c);
		pthread_mutex_unlock(&c->mu);
		struct pollfd p = {.fd = c->fd, .events = POLLIN};
		int n = poll(&p, 1, TICK_MS);
		if (n <= 0)
			continue;
		int fd = accept4(c->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0)
			continue;
		serve_one(c, fd);
		close(fd);
	}
	return NULL;
}

/* ---- the interface ------------------------------------------------------------ */

static int listen_on(const struct dist_coord_cfg *cfg)
{
	struct net_addr a;
	memset(&a, 0, sizeof a);
	if (!cfg->loopback) {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&a.ss;
		s6->sin6_family = AF_INET6;
		s6->sin6_addr = in6addr_any;
		s6->sin6_port = htons(cfg->port);
		a.len = sizeof *s6;
		int fd = net_listen(&a, 128, false);
		if (fd >= 0 || fd != -EAFNOSUPPORT)
			return fd;
		memset(&a, 0, sizeof a); /* no IPv6: IPv4 alone */
	}
	struct sockaddr_in *s4 = (struct sockaddr_in *)&a.ss;
	s4->sin_family = AF_INET;
	s4->sin_addr.s_addr = htonl(cfg->loopback ? INADDR_LOOPBACK : INADDR_ANY);
	s4->sin_port = htons(cfg->port);
	a.len = sizeof *s4;
	return net_listen(&a, 128, false);
}

int dist_coord_start(const struct dist_coord_cfg *cfg, struct dist_coord **out)
{
	*out = NULL;
	if (cfg->count < 2 || cfg->count > 1024 || !cfg->secret || !cfg->secret[0])
		return -EINVAL;
	struct dist_coord *c = calloc(1, sizeof *c);
	if (!c)
		return -ENOMEM;
	c->cfg = *cfg;
	c->secret = strdup(cfg->secret);
	c->seg = calloc(cfg->count, sizeof *c->seg);
	c->last_why = "";
	if (!c->secret || !c->seg) {
		free(c->secret);
		free(c->seg);
		free(c);
		return -ENOMEM;
	}
	c->cfg.secret = c->secret;
	if (!c->cfg.io_timeout_ns)
		c->cfg.io_timeout_ns = DIST_IO_TIMEOUT_NS;
	c->fd = listen_on(cfg);
	if (c->fd < 0) {
		int rc = c->fd;
		free(c->secret);
		free(c->seg);
		free(c);
		return rc;
	}
	int port = net_local_port(c->fd);
	c->port = port > 0 ? (uint16_t)port : cfg->port;
	c->seg[0].in = true;
	c->seg[0].in_ns = clock_wall_ns();
	c->n_in = 1;
	c->t0_mono = clock_now_ns();
	pthread_mutex_init(&c->mu, NULL);
	pthread_cond_init(&c->cv, NULL);
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	int rc = -pthread_create(&c->thread, NULL, coord_main, c);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc) {
		close(c->fd);
		pthread_mutex_destroy(&c->mu);
		pthread_cond_destroy(&c->cv);
		free(c->secret);
		free(c->seg);
		free(c);
		return rc;
	}
	*out = c;
	return 0;
}

uint16_t dist_coord_port(const struct dist_coord *c)
{
	return c->port;
}

void dist_coord_wait_release(struct dist_coord *c, uint64_t *start_ns, uint32_t *checked_in)
{
	pthread_mutex_lock(&c->mu);
	while (!c->released)
		pthread_cond_wait(&c->cv, &c->mu);
	*start_ns = c->start_ns;
	*checked_in = c->in_at_release;
	pthread_mutex_unlock(&c->mu);
}

void dist_coord_close_checkin(struct dist_coord *c)
{
	pthread_mutex_lock(&c->mu);
	c->closed = true;
	pthread_mutex_unlock(&c->mu);
}

/* Those checked in (0 aside) without a result; under mu. */
static uint32_t missing_locked(const struct dist_coord *c)
{
	uint32_t m = 0;
	for (uint32_t k = 1; k < c->cfg.count; k++)
		m += c->seg[k].in && !c->seg[k].json;
	return m;
}

uint32_t dist_coord_wait_results(struct dist_coord *c, uint64_t deadline_ns)
{
	pthread_mutex_lock(&c->mu);
	uint32_t m;
	while ((m = missing_locked(c)) > 0) {
		uint64_t now = clock_now_ns();
		if (now >= deadline_ns)
			break;
		/* the condition variable waits by CLOCK_REALTIME: wake at least
		 * once a tick and look at the monotonic clock again */
		uint64_t wall = clock_wall_ns() + (uint64_t)TICK_MS * 1000000u;
		struct timespec ts = {(time_t)(wall / 1000000000u), (long)(wall % 1000000000u)};
		pthread_cond_timedwait(&c->cv, &c->mu, &ts);
	}
	pthread_mutex_unlock(&c->mu);
	return m;
}

bool dist_coord_checked_in(struct dist_coord *c, uint32_t k)
{
	pthread_mutex_lock(&c->mu);
	bool in = k < c->cfg.count && c->seg[k].in;
	pthread_mutex_unlock(&c->mu);
	return in;
}

const char *dist_coord_result(struct dist_coord *c, uint32_t k, size_t *len)
{
	pthread_mutex_lock(&c->mu);
	const char *j = k < c->cfg.count ? c->seg[k].json : NULL;
	*len = j ? c->seg[k].len : 0;
	pthread_mutex_unlock(&c->mu);
	return j;
}

uint64_t dist_coord_latest_checkin(struct dist_coord *c)
{
	pthread_mutex_lock(&c->mu);
	uint64_t t = 0;
	for (uint32_t k = 0; k < c->cfg.count; k++)
		if (c->seg[k].in && c->seg[k].in_ns > t)
			t = c->seg[k].in_ns;
	pthread_mutex_unlock(&c->mu);
	return t;
}

uint32_t dist_coord_refused(struct dist_coord *c, const char **last_why)
{
	pthread_mutex_lock(&c->mu);
	uint32_t n = c->refused;
	*last_why = c->last_why;
	pthread_mutex_unlock(&c->mu);
	return n;
}

void dist_coord_stop(struct dist_coord *c)
{
	if (!c)
		return;
	atomic_store(&c->stop, true);
	pthread_join(c->thread, NULL);
	close(c->fd);
	pthread_mutex_destroy(&c->mu);
	pthread_cond_destroy(&c->cv);
	for (uint32_t k = 0; k < c->cfg.count; k++)
		free(c->seg[k].json);
	free(c->seg);
	free(c->secret);
	free(c);
}
