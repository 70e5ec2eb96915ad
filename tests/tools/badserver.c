/* badserver — a misbehaving HTTP/1.1 server for pacer's integration tests.
 *
 *   badserver --mode MODE [--port P] [--port-file F] [--delay-ms D]
 *
 * Binds 127.0.0.1:P (0 = an ephemeral port), prints "port N" on stdout and,
 * with --port-file, writes "N\n" to F (atomically: temp file + rename). Runs
 * until SIGTERM or SIGINT. One thread, one epoll loop, level-triggered.
 *
 * Requests are parsed up to the blank line; a Content-Length body is skipped,
 * other bodies are not understood. Memory is bounded: a connection whose
 * request header block exceeds 64 KiB is dropped, and a connection stops
 * being read while more than OUT_HIGH bytes of responses wait to be sent.
 *
 * Modes (what each complete request gets):
 *   ok                200 with Content-Length, keep-alive
 *   stall             nothing, ever (requests are read and discarded)
 *   close-before      the connection is closed without a byte
 *   close-mid         status line + headers (Content-Length: 1000) + 10 bytes, then close
 *   garbage           200 bytes that are not HTTP (ending in CRLF CRLF)
 *   huge-headers      a 200 response whose header block is ~200 KiB
 *   slow              the ok response, --delay-ms (default 50) later (timerfd)
 *   every-other-close alternately (server-wide) an ok response / close-before
 *   chunked           a chunked body with a chunk extension and a trailer
 *   close-delimited   200 without Content-Length or chunking; body; close
 *   interim           100 Continue, then the ok response
 *   double            the ok response and, in the same write, a 201 nobody asked for
 *   double-late       the ok response now, a 201 nobody asked for --delay-ms later
 *   early             a 299 nobody asked for as soon as the connection is
 *                     accepted, then the ok response to each request
 */
#include <errno.h>
#include <getopt.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#define IN_CAP (64u * 1024u)    /* request header block cap (and input buffer) */
#define OUT_HIGH (256u * 1024u) /* stop taking requests above this backlog */
#define SLOW_RING 64u           /* most delayed responses pending per connection */
#define HUGE_TARGET (200u * 1024u)
#define GARBAGE_LEN 200u
#define MAX_EVENTS 256

enum mode {
	MODE_OK,
	MODE_STALL,
	MODE_CLOSE_BEFORE,
	MODE_CLOSE_MID,
	MODE_GARBAGE,
	MODE_HUGE_HEADERS,
	MODE_SLOW,
	MODE_EVERY_OTHER_CLOSE,
	MODE_CHUNKED,
	MODE_CLOSE_DELIMITED,
	MODE_INTERIM,
	MODE_DOUBLE,
	MODE_DOUBLE_LATE,
	MODE_EARLY,
};

static const struct {
	const char *name;
	enum mode mode;
} mode_names[] = {
	{"ok", MODE_OK},
	{"stall", MODE_STALL},
	{"close-before", MODE_CLOSE_BEFORE},
	{"close-mid", MODE_CLOSE_MID},
	{"garbage", MODE_GARBAGE},
	{"huge-headers", MODE_HUGE_HEADERS},
	{"slow", MODE_SLOW},
	{"every-other-close", MODE_EVERY_OTHER_CLOSE},
	{"chunked", MODE_CHUNKED},
	{"close-delimited", MODE_CLOSE_DELIMITED},
	{"interim", MODE_INTERIM},
	{"double", MODE_DOUBLE},
	{"double-late", MODE_DOUBLE_LATE},
	{"early", MODE_EARLY},
};

enum item_kind { ITEM_LISTEN, ITEM_SIGNAL, ITEM_CONN, ITEM_TIMER };

/* What an epoll registration points at. */
struct item {
	enum item_kind kind;
	struct conn *conn; /* ITEM_CONN / ITEM_TIMER only */
};

struct conn {
	struct item io;
	struct item tm;
	int fd;
	int timer_fd; /* slow mode only, else -1 */
	bool dead;
	bool close_after_flush;
	bool reading; /* EPOLLIN registered */
	bool writing; /* EPOLLOUT registered */
	char in[IN_CAP];
	size_t in_len;
	uint64_t body_skip; /* request body bytes still to discard */
	char *out;
	size_t out_len, out_off, out_cap;
	uint64_t due_ns[SLOW_RING]; /* slow mode: when each pending response is due */
	unsigned due_head, due_count;
	struct conn *prev, *next; /* live connections */
	struct conn *next_dead;
};

static enum mode g_mode = MODE_OK;
static uint64_t g_delay_ns = 50ull * 1000000ull;
static int g_epfd = -1;
static uint64_t g_eoc_counter; /* every-other-close: requests seen server-wide */
static uint64_t g_rng = 0x9e3779b97f4a7c15ull;
static char *g_huge; /* huge-headers response */
static size_t g_huge_len;
static struct conn *g_dead;
static struct conn *g_live; /* every connection not yet closed */

static const char RESP_STRAY[] = "HTTP/1.1 201 Created\r\n"
				 "Content-Length: 6\r\n"
				 "\r\n"
				 "stray\n";
static const char RESP_EARLY[] = "HTTP/1.1 299 Early\r\n"
				 "Content-Length: 6\r\n"
				 "\r\n"
				 "early\n";
static const char RESP_OK[] = "HTTP/1.1 200 OK\r\n"
			      "Server: badserver\r\n"
			      "Content-Type: text/plain\r\n"
			      "Content-Length: 6\r\n"
			      "\r\n"
			      "hello\n";
static const char RESP_OK_CLOSE[] = "HTTP/1.1 200 OK\r\n"
				    "Server: badserver\r\n"
				    "Content-Type: text/plain\r\n"
				    "Content-Length: 6\r\n"
				    "Connection: close\r\n"
				    "\r\n"
				    "hello\n";
static const char RESP_CLOSE_MID[] = "HTTP/1.1 200 OK\r\n"
				     "Server: badserver\r\n"
				     "Content-Type: application/octet-stream\r\n"
				     "Content-Length: 1000\r\n"
				     "\r\n"
				     "0123456789";
static const char RESP_CHUNKED[] = "HTTP/1.1 200 OK\r\n"
				   "Server: badserver\r\n"
				   "Content-Type: text/plain\r\n"
				   "Transfer-Encoding: chunked\r\n"
				   "Trailer: X-Checksum\r\n"
				   "\r\n"
				   "5;ext=1\r\n"
				   "hello\r\n"
				   "7;name=\"quoted value\";flag\r\n"
				   ", world\r\n"
				   "1\r\n"
				   "\n\r\n"
				   "0\r\n"
				   "X-Checksum: abc123\r\n"
				   "\r\n";
static const char RESP_CLOSE_DELIMITED[] = "HTTP/1.1 200 OK\r\n"
					   "Server: badserver\r\n"
					   "Content-Type: text/plain\r\n"
					   "\r\n"
					   "a body whose end is the end of the connection\n";
static const char RESP_INTERIM[] = "HTTP/1.1 100 Continue\r\n"
				   "\r\n"
				   "HTTP/1.1 200 OK\r\n"
				   "Server: badserver\r\n"
				   "Content-Type: text/plain\r\n"
				   "Content-Length: 6\r\n"
				   "\r\n"
				   "hello\n";

static void die(const char *what)
{
	fprintf(stderr, "badserver: %s: %s\n", what, strerror(errno));
	exit(1);
}

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t rng_next(void)
{
	/* xorshift64* */
	g_rng ^= g_rng >> 12;
	g_rng ^= g_rng << 25;
	g_rng ^= g_rng >> 27;
	return g_rng * 0x2545f4914f6cdd1dull;
}

static void build_huge(void)
{
	static const char head[] = "HTTP/1.1 200 OK\r\nServer: badserver\r\n";
	static const char tail[] = "Content-Length: 6\r\n\r\nhello\n";
	size_t cap = HUGE_TARGET + 4096;
	g_huge = malloc(cap);
	if (!g_huge)
		die("malloc");
	size_t n = 0;
	memcpy(g_huge, head, sizeof head - 1);
	n += sizeof head - 1;
	for (unsigned i = 0; n < HUGE_TARGET; i++) {
		/* 128-byte header lines */
		int w = snprintf(g_huge + n, cap - n, "X-Pad-%06u: ", i);
		n += (size_t)w;
		while (n % 128 != 126) {
			g_huge[n] = (char)('a' + (n % 26));
			n++;
		}
		g_huge[n++] = '\r';
		g_huge[n++] = '\n';
	}
	memcpy(g_huge + n, tail, sizeof tail - 1);
	n += sizeof tail - 1;
	g_huge_len = n;
}

static void ep_ctl(int op, int fd, uint32_t events, struct item *it)
{
	struct epoll_event ev = {.events = events, .data.ptr = it};
	if (epoll_ctl(g_epfd, op, fd, &ev) < 0)
		die("epoll_ctl");
}

static void conn_update_events(struct conn *c)
{
	bool want_read = !c->close_after_flush && c->due_count < SLOW_RING &&
			 c->out_len - c->out_off < OUT_HIGH;
	bool want_write = c->out_len > c->out_off;
	if (want_read == c->reading && want_write == c->writing)
		return;
	uint32_t ev = (want_read ? EPOLLIN : 0u) | (want_write ? EPOLLOUT : 0u);
	ep_ctl(EPOLL_CTL_MOD, c->fd, ev, &c->io);
	c->reading = want_read;
	c->writing = want_write;
}

static void conn_close(struct conn *c)
{
	if (c->dead)
		return;
	c->dead = true;
	/* Drain unread input so close() sends FIN rather than RST (an RST could
	 * make the client lose bytes it has not read yet). */
	char sink[4096];
	while (recv(c->fd, sink, sizeof sink, MSG_DONTWAIT) > 0)
		;
	epoll_ctl(g_epfd, EPOLL_CTL_DEL, c->fd, NULL);
	close(c->fd);
	if (c->timer_fd >= 0) {
		epoll_ctl(g_epfd, EPOLL_CTL_DEL, c->timer_fd, NULL);
		close(c->timer_fd);
	}
	free(c->out);
	c->out = NULL;
	if (c->prev)
		c->prev->next = c->next;
	else
		g_live = c->next;
	if (c->next)
		c->next->prev = c->prev;
	c->next_dead = g_dead; /* freed after the current epoll batch */
	g_dead = c;
}

static void free_dead(void)
{
	while (g_dead) {
		struct conn *c = g_dead;
		g_dead = c->next_dead;
		free(c);
	}
}

static void out_append(struct conn *c, const char *p, size_t n)
{
	if (c->out_off == c->out_len)
		c->out_off = c->out_len = 0;
	if (c->out_len + n > c->out_cap) {
		if (c->out_off > 0) {
			memmove(c->out, c->out + c->out_off, c->out_len - c->out_off);
			c->out_len -= c->out_off;
			c->out_off = 0;
		}
		size_t cap = c->out_cap ? c->out_cap : 4096;
		while (cap < c->out_len + n)
			cap *= 2;
		char *q = realloc(c->out, cap);
		if (!q)
			die("realloc");
		c->out = q;
		c->out_cap = cap;
	}
	memcpy(c->out + c->out_len, p, n);
	c->out_len += n;
}

/* Sends what it can. Returns false when the connection was closed. */
static bool conn_flush(struct conn *c)
{
	while (c->out_off < c->out_len) {
		ssize_t w = send(c->fd, c->out + c->out_off, c->out_len - c->out_off, MSG_NOSIGNAL);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return true;
			conn_close(c);
			return false;
		}
		c->out_off += (size_t)w;
	}
	if (c->close_after_flush) {
		conn_close(c);
		return false;
	}
	return true;
}

static void timer_arm(struct conn *c)
{
	struct itimerspec its = {0};
	if (c->due_count > 0) {
		uint64_t due = c->due_ns[c->due_head];
		its.it_value.tv_sec = (time_t)(due / 1000000000ull);
		its.it_value.tv_nsec = (long)(due % 1000000000ull);
		if (its.it_value.tv_sec == 0 && its.it_value.tv_nsec == 0)
			its.it_value.tv_nsec = 1;
	}
	if (timerfd_settime(c->timer_fd, TFD_TIMER_ABSTIME, &its, NULL) < 0)
		die("timerfd_settime");
}

/* Answers one complete request. Returns false when the connection was closed. */
static bool respond(struct conn *c, bool client_close)
{
	switch (g_mode) {
	case MODE_OK:
	case MODE_EARLY:
		if (client_close) {
			out_append(c, RESP_OK_CLOSE, sizeof RESP_OK_CLOSE - 1);
			c->close_after_flush = true;
		} else {
			out_append(c, RESP_OK, sizeof RESP_OK - 1);
		}
		return true;
	case MODE_STALL:
		return true;
	case MODE_CLOSE_BEFORE:
		conn_close(c);
		return false;
	case MODE_CLOSE_MID:
		out_append(c, RESP_CLOSE_MID, sizeof RESP_CLOSE_MID - 1);
		c->close_after_flush = true;
		return true;
	case MODE_GARBAGE: {
		char g[GARBAGE_LEN];
		for (size_t i = 0; i < GARBAGE_LEN; i++)
			g[i] = (char)(rng_next() >> 56);
		g[0] = '\x01'; /* never "HTTP/" */
		memcpy(g + GARBAGE_LEN - 4, "\r\n\r\n", 4);
		out_append(c, g, GARBAGE_LEN);
		return true;
	}
	case MODE_HUGE_HEADERS:
		out_append(c, g_huge, g_huge_len);
		return true;
	case MODE_SLOW: {
		unsigned tail = (c->due_head + c->due_count) % SLOW_RING;
		c->due_ns[tail] = now_ns() + g_delay_ns;
		c->due_count++;
		if (c->due_count == 1)
			timer_arm(c);
		return true;
	}
	case MODE_EVERY_OTHER_CLOSE:
		if (g_eoc_counter++ % 2 == 1) {
			conn_close(c);
			return false;
		}
		out_append(c, RESP_OK, sizeof RESP_OK - 1);
		return true;
	case MODE_CHUNKED:
		out_append(c, RESP_CHUNKED, sizeof RESP_CHUNKED - 1);
		return true;
	case MODE_CLOSE_DELIMITED:
		out_append(c, RESP_CLOSE_DELIMITED, sizeof RESP_CLOSE_DELIMITED - 1);
		c->close_after_flush = true;
		return true;
	case MODE_INTERIM:
		out_append(c, RESP_INTERIM, sizeof RESP_INTERIM - 1);
		return true;
	case MODE_DOUBLE:
		out_append(c, RESP_OK, sizeof RESP_OK - 1);
		out_append(c, RESP_STRAY, sizeof RESP_STRAY - 1);
		return true;
	case MODE_DOUBLE_LATE: {
		out_append(c, RESP_OK, sizeof RESP_OK - 1);
		unsigned tail = (c->due_head + c->due_count) % SLOW_RING;
		c->due_ns[tail] = now_ns() + g_delay_ns;
		c->due_count++;
		if (c->due_count == 1)
			timer_arm(c);
		return true;
	}
	}
	return true;
}

/* Finds the end of the header block in p[0..n): index just past the blank
 * line, or 0 when not complete. Accepts CRLF and bare LF line ends. */
static size_t header_end(const char *p, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (p[i] != '\n')
			continue;
		if (i + 1 < n && p[i + 1] == '\n')
			return i + 2;
		if (i + 2 < n && p[i + 1] == '\r' && p[i + 2] == '\n')
			return i + 3;
	}
	return 0;
}

/* Looks at the header lines of one request for Content-Length and
 * "Connection: close". */
static void scan_headers(const char *p, size_t n, uint64_t *content_length, bool *close)
{
	*content_length = 0;
	*close = false;
	size_t i = 0;
	while (i < n && p[i] != '\n') /* skip the request line */
		i++;
	while (++i < n) {
		size_t start = i;
		while (i < n && p[i] != '\n')
			i++;
		size_t len = i - start;
		const char *line = p + start;
		if (len >= 15 && strncasecmp(line, "content-length:", 15) == 0) {
			uint64_t v = 0;
			for (size_t k = 15; k < len && line[k] != '\r'; k++) {
				if (line[k] >= '0' && line[k] <= '9' && v < (1ull << 60))
					v = v * 10 + (uint64_t)(line[k] - '0');
			}
			*content_length = v;
		} else if (len >= 11 && strncasecmp(line, "connection:", 11) == 0) {
			for (size_t k = 11; k + 5 <= len; k++) {
				if (strncasecmp(line + k, "close", 5) == 0)
					*close = true;
			}
		}
	}
}

/* Consumes complete requests from the input buffer while output has room.
 * Returns false when the connection was closed. */
static bool process_input(struct conn *c)
{
	for (;;) {
		if (c->body_skip > 0 && c->in_len > 0) {
			size_t k = c->body_skip < c->in_len ? (size_t)c->body_skip : c->in_len;
			memmove(c->in, c->in + k, c->in_len - k);
			c->in_len -= k;
			c->body_skip -= k;
		}
		if (c->body_skip > 0 || c->in_len == 0)
			return true;
		if (c->close_after_flush || c->due_count >= SLOW_RING ||
		    c->out_len - c->out_off >= OUT_HIGH)
			return true;
		size_t end = header_end(c->in, c->in_len);
		if (end == 0) {
			if (c->in_len >= IN_CAP) { /* header block over the cap */
				conn_close(c);
				return false;
			}
			return true;
		}
		uint64_t cl;
		bool client_close;
		scan_headers(c->in, end, &cl, &client_close);
		memmove(c->in, c->in + end, c->in_len - end);
		c->in_len -= end;
		c->body_skip = cl;
		if (!respond(c, client_close))
			return false;
	}
}

static void on_readable(struct conn *c)
{
	size_t room = IN_CAP - c->in_len;
	if (room == 0) { /* only reported for a hang-up or error while not reading */
		conn_close(c);
		return;
	}
	ssize_t r = recv(c->fd, c->in + c->in_len, room, 0);
	if (r < 0) {
		if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
			return;
		conn_close(c);
		return;
	}
	if (r == 0) {
		conn_close(c);
		return;
	}
	c->in_len += (size_t)r;
	if (!process_input(c))
		return;
	if (!conn_flush(c))
		return;
	conn_update_events(c);
}

static void on_writable(struct conn *c)
{
	if (!conn_flush(c))
		return;
	if (!process_input(c))
		return;
	if (!conn_flush(c))
		return;
	conn_update_events(c);
}

static void on_timer(struct conn *c)
{
	uint64_t expirations;
	if (read(c->timer_fd, &expirations, sizeof expirations) < 0 && errno != EAGAIN)
		die("read timerfd");
	uint64_t now = now_ns();
	while (c->due_count > 0 && c->due_ns[c->due_head] <= now) {
		if (g_mode == MODE_DOUBLE_LATE)
			out_append(c, RESP_STRAY, sizeof RESP_STRAY - 1);
		else
			out_append(c, RESP_OK, sizeof RESP_OK - 1);
		c->due_head = (c->due_head + 1) % SLOW_RING;
		c->due_count--;
	}
	timer_arm(c);
	if (!conn_flush(c))
		return;
	if (!process_input(c))
		return;
	if (!conn_flush(c))
		return;
	conn_update_events(c);
}

static void on_accept(int lfd)
{
	for (;;) {
		int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return;
			if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
				fprintf(stderr, "badserver: accept: %s\n", strerror(errno));
				return;
			}
			die("accept4");
		}
		int one = 1;
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
		struct conn *c = calloc(1, sizeof *c);
		if (!c)
			die("calloc");
		c->io = (struct item){.kind = ITEM_CONN, .conn = c};
		c->tm = (struct item){.kind = ITEM_TIMER, .conn = c};
		c->fd = fd;
		c->timer_fd = -1;
		c->next = g_live;
		if (g_live)
			g_live->prev = c;
		g_live = c;
		if (g_mode == MODE_SLOW || g_mode == MODE_DOUBLE_LATE) {
			c->timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
			if (c->timer_fd < 0)
				die("timerfd_create");
			ep_ctl(EPOLL_CTL_ADD, c->timer_fd, EPOLLIN, &c->tm);
		}
		ep_ctl(EPOLL_CTL_ADD, fd, EPOLLIN, &c->io);
		c->reading = true;
		if (g_mode == MODE_EARLY) {
			out_append(c, RESP_EARLY, sizeof RESP_EARLY - 1);
			if (conn_flush(c))
				conn_update_events(c);
		}
	}
}

static void usage(FILE *f)
{
	fprintf(f, "usage: badserver --mode MODE [--port P] [--port-file F] [--delay-ms D]\nmodes:");
	for (size_t i = 0; i < sizeof mode_names / sizeof mode_names[0]; i++)
		fprintf(f, " %s", mode_names[i].name);
	fputc('\n', f);
}

static void write_port_file(const char *path, unsigned port)
{
	size_t n = strlen(path) + 16;
	char *tmp = malloc(n);
	if (!tmp)
		die("malloc");
	snprintf(tmp, n, "%s.tmp", path);
	FILE *f = fopen(tmp, "w");
	if (!f)
		die(tmp);
	fprintf(f, "%u\n", port);
	if (fclose(f) != 0)
		die(tmp);
	if (rename(tmp, path) < 0)
		die(path);
	free(tmp);
}

static long parse_long(const char *s, const char *opt, long lo, long hi)
{
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < lo || v > hi) {
		fprintf(stderr, "badserver: bad value for %s: %s\n", opt, s);
		exit(2);
	}
	return v;
}

int main(int argc, char **argv)
{
	const char *mode = NULL, *port_file = NULL;
	long port = 0;
	static const struct option opts[] = {
		{"mode", required_argument, NULL, 'm'},
		{"port", required_argument, NULL, 'p'},
		{"port-file", required_argument, NULL, 'f'},
		{"delay-ms", required_argument, NULL, 'd'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	int ch;
	while ((ch = getopt_long(argc, argv, "m:p:f:d:h", opts, NULL)) != -1) {
		switch (ch) {
		case 'm':
			mode = optarg;
			break;
		case 'p':
			port = parse_long(optarg, "--port", 0, 65535);
			break;
		case 'f':
			port_file = optarg;
			break;
		case 'd':
			g_delay_ns = (uint64_t)parse_long(optarg, "--delay-ms", 0, 3600000) * 1000000ull;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (!mode || optind != argc) {
		usage(stderr);
		return 2;
	}
	bool found = false;
	for (size_t i = 0; i < sizeof mode_names / sizeof mode_names[0]; i++) {
		if (strcmp(mode, mode_names[i].name) == 0) {
			g_mode = mode_names[i].mode;
			found = true;
		}
	}
	if (!found) {
		fprintf(stderr, "badserver: unknown mode: %s\n", mode);
		usage(stderr);
		return 2;
	}
	if (g_mode == MODE_HUGE_HEADERS)
		build_huge();
	g_rng ^= now_ns() ^ ((uint64_t)getpid() << 32);

	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}

	sigset_t mask;
	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	if (sigprocmask(SIG_BLOCK, &mask, NULL) < 0)
		die("sigprocmask");
	signal(SIGPIPE, SIG_IGN);
	int sfd = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);
	if (sfd < 0)
		die("signalfd");

	int lfd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (lfd < 0)
		die("socket");
	int one = 1;
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	struct sockaddr_in sa = {.sin_family = AF_INET,
				 .sin_port = htons((uint16_t)port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	if (bind(lfd, (struct sockaddr *)&sa, sizeof sa) < 0)
		die("bind");
	if (listen(lfd, 4096) < 0)
		die("listen");
	socklen_t sl = sizeof sa;
	if (getsockname(lfd, (struct sockaddr *)&sa, &sl) < 0)
		die("getsockname");
	unsigned bound = ntohs(sa.sin_port);

	g_epfd = epoll_create1(EPOLL_CLOEXEC);
	if (g_epfd < 0)
		die("epoll_create1");
	struct item listen_item = {.kind = ITEM_LISTEN};
	struct item signal_item = {.kind = ITEM_SIGNAL};
	ep_ctl(EPOLL_CTL_ADD, lfd, EPOLLIN, &listen_item);
	ep_ctl(EPOLL_CTL_ADD, sfd, EPOLLIN, &signal_item);

	if (port_file)
		write_port_file(port_file, bound);
	printf("port %u\n", bound);
	fflush(stdout);

	bool running = true;
	struct epoll_event evs[MAX_EVENTS];
	while (running) {
		int n = epoll_wait(g_epfd, evs, MAX_EVENTS, -1);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			die("epoll_wait");
		}
		for (int i = 0; i < n; i++) {
			struct item *it = evs[i].data.ptr;
			uint32_t e = evs[i].events;
			switch (it->kind) {
			case ITEM_LISTEN:
				on_accept(lfd);
				break;
			case ITEM_SIGNAL: {
				struct signalfd_siginfo si;
				while (read(sfd, &si, sizeof si) == (ssize_t)sizeof si)
					running = false;
				break;
			}
			case ITEM_TIMER:
				if (!it->conn->dead)
					on_timer(it->conn);
				break;
			case ITEM_CONN: {
				struct conn *c = it->conn;
				if (!c->dead && (e & EPOLLOUT))
					on_writable(c);
				if (!c->dead && (e & (EPOLLIN | EPOLLHUP | EPOLLERR)))
					on_readable(c);
				break;
			}
			}
		}
		free_dead();
	}
	while (g_live)
		conn_close(g_live);
	free_dead();
	close(g_epfd);
	close(lfd);
	close(sfd);
	free(g_huge);
	return 0;
}
