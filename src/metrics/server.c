/* pacer — the live metrics endpoint (metrics/server.h). */
#include "metrics/server.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "metrics/live.h"
#include "metrics/live_page.h"
#include "util/clock.h"
#include "util/sysinfo.h"

#define RING (METRICS_WINDOW_S + 1) /* one snapshot a second: the window's both ends */
#define REQ_CAP 8192                /* bytes of a request head read at most */
/* a connection's send buffer (the kernel doubles it): what a client that
 * stops reading pins in the kernel */
#define SNDBUF 16384

struct mvar {
	const char *name;
	struct engine *e;             /* attached, or NULL */
	struct engine_live last;      /* as of the last look */
	uint32_t step;
	double offered_per_s;
	enum metrics_phase phase;
	uint64_t ring[RING][ENGINE_LIVE_BUCKETS + 1]; /* latency buckets, once a second */
	size_t ring_n, ring_head;     /* entries in use; the next to write */
	struct live_track tr;         /* the live view's figures (/live.json), once a second */
	uint32_t ramp_step, planned_steps; /* metrics_live_step: a ramp's (0: none) */
};

struct mconn;

struct metrics_server {
	int fd, wake_fd;
	uint16_t port;
	pthread_t thread;
	pthread_mutex_t mu;           /* guards vars and quit */
	bool quit;
	size_t n_variants;
	const char *outcome_names[ENGINE_LIVE_OUTCOMES]; /* the strings are borrowed */
	uint32_t n_outcomes;
	struct mvar vars[METRICS_MAX_VARIANTS];
	struct steal_sample steal0;   /* at the start: the steal counters count from it */
	char run[METRICS_LABEL_CAP], scenario[METRICS_LABEL_CAP]; /* "": none */
	char version[METRICS_LABEL_CAP], commit[METRICS_LABEL_CAP];
	struct mconn *conns;          /* METRICS_MAX_CLIENTS slots, the server thread's */
	atomic_size_t n_clients;      /* connections open */
};

/* ---- --metrics-listen ---------------------------------------------------- */

int metrics_listen_parse(const char *arg, bool any, struct net_addr *out, char *err, size_t cap)
{
	char host[64] = "";
	const char *port_s = arg;
	const char *colon = strrchr(arg, ':');
	if (arg[0] == '[') {
		const char *close = strchr(arg, ']');
		if (!close || close[1] != ':' || (size_t)(close - arg - 1) >= sizeof host) {
			snprintf(err, cap, "%s: expected [ADDR]:PORT", arg);
			return -EINVAL;
		}
		memcpy(host, arg + 1, (size_t)(close - arg - 1));
		port_s = close + 2;
	} else if (colon) {
		if (memchr(arg, ':', (size_t)(colon - arg))) {
			snprintf(err, cap, "%s: write an IPv6 address as [ADDR]:PORT", arg);
			return -EINVAL;
		}
		if ((size_t)(colon - arg) >= sizeof host) {
			snprintf(err, cap, "%s: address too long", arg);
			return -EINVAL;
		}
		memcpy(host, arg, (size_t)(colon - arg));
		port_s = colon + 1;
	}
	char *end;
	errno = 0;
	unsigned long port = strtoul(port_s, &end, 10);
	if (!*port_s || *end || errno || port > 65535 || port_s[0] == '-' || port_s[0] == '+') {
		snprintf(err, cap, "%s: expected a port 0..65535 (ADDR:PORT, or PORT for 127.0.0.1)",
			 arg);
		return -EINVAL;
	}
	memset(out, 0, sizeof *out);
	if (!host[0] || !strcasecmp(host, "localhost"))
		strcpy(host, "127.0.0.1");
	struct sockaddr_in *s4 = (struct sockaddr_in *)&out->ss;
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&out->ss;
	if (inet_pton(AF_INET, host, &s4->sin_addr) == 1) {
		s4->sin_family = AF_INET;
		s4->sin_port = htons((uint16_t)port);
		out->len = sizeof *s4;
	} else if (inet_pton(AF_INET6, host, &s6->sin6_addr) == 1) {
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons((uint16_t)port);
		out->len = sizeof *s6;
	} else {
		snprintf(err, cap, "%s: '%s' is not a numeric IPv4 or IPv6 address (or localhost)",
			 arg, host);
		return -EINVAL;
	}
	if (!any && !net_addr_is_loopback(out)) {
		snprintf(err, cap,
			 "%s: not a loopback address; add --metrics-listen-any to serve other hosts",
			 arg);
		return -EINVAL;
	}
	return 0;
}

/* ---- figures --------------------------------------------------------------- */

/* Look at an attached engine again (m->mu held). */
static void refresh(struct mvar *v)
{
	if (v->e)
		engine_live(v->e, &v->last);
}

/* Once a second: the latency buckets into the ring (m->mu held). */
static void tick(struct metrics_server *m)
{
	for (size_t i = 0; i < m->n_variants; i++) {
		struct mvar *v = &m->vars[i];
		refresh(v);
		if (v->e) {
			struct engine_progress p;
			engine_progress(v->e, &p);
			live_track_tick(&v->tr, &v->last, &p, clock_now_ns());
		}
		memcpy(v->ring[v->ring_head], v->last.latency_bucket, sizeof v->ring[0]);
		v->ring_head = (v->ring_head + 1) % RING;
		if (v->ring_n < RING)
			v->ring_n++;
	}
}

/* The view of a scrape (m->mu held): current figures, and the recent
 * window's quantiles from the oldest snapshot in the ring to now. */
static void view_of(struct metrics_server *m, struct metrics_variant *out)
{
	uint64_t d[ENGINE_LIVE_BUCKETS + 1];
	for (size_t i = 0; i < m->n_variants; i++) {
		struct mvar *v = &m->vars[i];
		refresh(v);
		const uint64_t *old = NULL;
		if (v->ring_n)
			old = v->ring[(v->ring_head + RING - v->ring_n) % RING];
		uint64_t n = 0;
		for (size_t k = 0; k <= ENGINE_LIVE_BUCKETS; k++) {
			uint64_t o = old ? old[k] : 0;
			d[k] = v->last.latency_bucket[k] >= o ? v->last.latency_bucket[k] - o : 0;
			n += d[k];
		}
		out[i] = (struct metrics_variant){.name = m->n_variants > 1 ? v->name : NULL,
						  .live = v->last,
						  .step = v->step,
						  .offered_per_s = v->offered_per_s,
						  .phase = v->phase,
						  .recent_count = n};
		for (int q = 0; q < METRICS_N_QUANTILES; q++)
			out[i].recent_s[q] = metrics_quantile(d, metrics_quantiles[q]);
	}
}

/* ---- HTTP ----------------------------------------------------------------
 *
 * One thread, one poll: the listening socket, the wake-up eventfd and at
 * most METRICS_MAX_CLIENTS connections, all non-blocking. Nothing a client
 * does can hold the thread: a connection that has not sent its request head
 * within METRICS_HEAD_MS, or has not taken its whole answer within
 * METRICS_CONN_MS of its accept, is closed; a new connection while every
 * slot is taken replaces the one that has waited longest for its head (a
 * scraper sends its head at once), or is closed when all are being
 * answered. The answer is rendered whole into memory, then written as the
 * socket takes it, through a small send buffer (SNDBUF). A stop closes
 * every connection at once. */

struct mconn {
	int fd;       /* -1: a free slot */
	bool writing; /* the head was read; out is the answer */
	uint64_t accepted_ns;
	size_t len; /* bytes of req */
	char req[REQ_CAP + 1];
	char *out; /* the whole answer (malloc'd), out_len bytes */
	size_t out_len, out_off;
};

static void conn_close(struct metrics_server *m, struct mconn *c)
{
	/* what the client sent beyond its head is read away first: closing a
	 * socket with unread bytes resets it, and a reset may discard the
	 * answer before the client has read it */
	char sink[512];
	for (int i = 0; i < 4 && recv(c->fd, sink, sizeof sink, MSG_DONTWAIT) > 0; i++) {
	}
	close(c->fd);
	c->fd = -1;
	free(c->out);
	c->out = NULL;
	c->writing = false;
	c->len = c->out_len = c->out_off = 0;
	atomic_fetch_sub_explicit(&m->n_clients, 1, memory_order_relaxed);
}

/* The answer into c->out: status line, headers (extra: more of them, each
 * ending in CRLF) and (unless head) body. */
static void answer_with(struct mconn *c, const char *status, const char *ctype, const char *extra,
			const char *body, size_t len, bool head)
{
	char h[768];
	int n = snprintf(h, sizeof h,
			 "HTTP/1.1 %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n"
			 "%sConnection: close\r\n\r\n",
			 status, ctype, len, extra);
	if (n < 0 || (size_t)n >= sizeof h)
		n = 0; /* cannot be: the extra headers are this file's own */
	size_t total = (size_t)n + (head ? 0 : len);
	c->out = malloc(total);
	c->writing = true;
	c->out_off = 0;
	if (!c->out) {
		c->out_len = 0; /* nothing to say: closed on the next turn */
		return;
	}
	memcpy(c->out, h, (size_t)n);
	if (!head && len)
		memcpy(c->out + n, body, len);
	c->out_len = total;
}

static void answer(struct mconn *c, const char *status, const char *ctype, const char *body,
		   size_t len, bool head)
{
	answer_with(c, status, ctype, "", body, len, head);
}

/* The live page's routes: / (the page), /live.js (its script) and
 * /live.json (the figures). False when path is none of them. */
static bool respond_live(struct metrics_server *m, struct mconn *c, const char *path, size_t plen,
			 bool head)
{
	static char page_headers[512];
	if (!page_headers[0])
		snprintf(page_headers, sizeof page_headers,
			 "Content-Security-Policy: %s\r\nX-Content-Type-Options: nosniff\r\n"
			 "Cache-Control: no-store\r\n",
			 live_page_csp);
	const char *const *parts = NULL;
	const char *ctype = NULL;
	if (plen == 1 && path[0] == '/') {
		parts = live_page_html;
		ctype = "text/html; charset=utf-8";
	} else if (plen == 8 && !strncmp(path, "/live.js", 8)) {
		parts = live_page_js;
		ctype = "text/javascript; charset=utf-8";
	}
	if (parts) {
		char text[16384]; /* both are under 8 KiB */
		size_t n = 0;
		for (; *parts; parts++) {
			size_t k = strlen(*parts);
			if (n + k > sizeof text)
				break;
			memcpy(text + n, *parts, k);
			n += k;
		}
		answer_with(c, "200 OK", ctype, page_headers, text, n, head);
		return true;
	}
	if (plen != 10 || strncmp(path, "/live.json", 10))
		return false;
	struct live_figs figs[METRICS_MAX_VARIANTS];
	const struct live_figs *fp[METRICS_MAX_VARIANTS];
	const char *names[METRICS_MAX_VARIANTS];
	pthread_mutex_lock(&m->mu);
	for (size_t i = 0; i < m->n_variants; i++) {
		figs[i] = m->vars[i].tr.figs;
		fp[i] = &figs[i];
		names[i] = m->vars[i].name;
	}
	pthread_mutex_unlock(&m->mu);
	char *body = NULL;
	size_t blen = 0;
	FILE *f = open_memstream(&body, &blen);
	int rc = f ? live_json_write(f, fp, names, m->n_variants) : -ENOMEM;
	if (f && fclose(f))
		rc = -EIO;
	if (rc) {
		static const char msg[] = "out of memory\n";
		answer(c, "500 Internal Server Error", "text/plain; charset=utf-8", msg,
		       sizeof msg - 1, head);
	} else {
		answer_with(c, "200 OK", "application/json", page_headers, body, blen, head);
	}
	free(body);
	return true;
}

/* The value of header `name` in a request head (NUL-terminated), copied
 * into out; false when absent. */
static bool header_value(const char *req, const char *name, char *out, size_t cap)
{
	size_t nl = strlen(name);
	for (const char *p = strstr(req, "\r\n"); p && p[2] != '\r'; p = strstr(p + 2, "\r\n")) {
		const char *line = p + 2;
		if (strncasecmp(line, name, nl) || line[nl] != ':')
			continue;
		const char *v = line + nl + 1;
		while (*v == ' ' || *v == '\t')
			v++;
		const char *e = strstr(v, "\r\n");
		size_t n = e ? (size_t)(e - v) : strlen(v);
		if (n >= cap)
			n = cap - 1;
		memcpy(out, v, n);
		out[n] = 0;
		return true;
	}
	return false;
}

/* The answer to the request head in c->req (complete, or REQ_CAP bytes
 * without its end). */
static void respond(struct metrics_server *m, struct mconn *c)
{
	const char *req = c->req;
	const char *text = "text/plain; charset=utf-8";
	if (!strstr(req, "\r\n\r\n")) {
		answer(c, "431 Request Header Fields Too Large", text, "", 0, false);
		return;
	}
	bool head = !strncmp(req, "HEAD ", 5);
	if (strncmp(req, "GET ", 4) && !head) {
		static const char msg[] = "only GET and HEAD\n";
		answer(c, "405 Method Not Allowed", text, msg, sizeof msg - 1, false);
		return;
	}
	const char *path = req + (head ? 5 : 4);
	size_t plen = strcspn(path, " ?\r");
	if (respond_live(m, c, path, plen, head))
		return;
	if (plen != 8 || strncmp(path, "/metrics", 8)) {
		static const char msg[] = "pacer serves /metrics, / (a live page) and /live.json\n";
		answer(c, "404 Not Found", text, msg, sizeof msg - 1, head);
		return;
	}
	char accept[1024];
	enum metrics_format fmt =
		metrics_negotiate(header_value(req, "Accept", accept, sizeof accept) ? accept : NULL);
	struct metrics_variant vv[METRICS_MAX_VARIANTS];
	pthread_mutex_lock(&m->mu);
	view_of(m, vv);
	pthread_mutex_unlock(&m->mu);
	struct metrics_view view = {.n_variants = m->n_variants,
				    .v = vv,
				    .outcome_names = m->outcome_names,
				    .n_outcomes = m->n_outcomes,
				    .window_s = METRICS_WINDOW_S,
				    .run = m->run,
				    .scenario = m->scenario,
				    .version = m->version[0] ? m->version : NULL,
				    .commit = m->commit};
	struct steal_sample now;
	struct steal_span sp;
	sysinfo_steal_sample(&now);
	if (sysinfo_steal_between(&m->steal0, &now, 0, &sp)) {
		view.steal_known = true;
		view.steal_s[0] = (double)sp.gen_ns / 1e9;
		view.steal_s[1] = (double)sp.all_ns / 1e9;
		view.steal_cpus[0] = now.gen_cpus;
		view.steal_cpus[1] = now.all_cpus;
	}
	char *body = NULL;
	size_t blen = 0;
	FILE *f = open_memstream(&body, &blen);
	int rc = f ? metrics_expo_write(f, &view, fmt) : -ENOMEM;
	if (f && fclose(f))
		rc = -EIO;
	if (rc) {
		static const char msg[] = "out of memory\n";
		answer(c, "500 Internal Server Error", text, msg, sizeof msg - 1, head);
	} else {
		answer(c, "200 OK", metrics_content_type(fmt), body, blen, head);
	}
	free(body);
}

/* Read what the client sent; answer once the head is in. False when the
 * connection is done with (closed by the client, or an error). */
static bool conn_read(struct metrics_server *m, struct mconn *c)
{
	for (;;) {
		ssize_t k = recv(c->fd, c->req + c->len, REQ_CAP - c->len, MSG_DONTWAIT);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return true;
		if (k <= 0)
			return false;
		/* look for the head's end from just before the new bytes */
		size_t from = c->len > 3 ? c->len - 3 : 0;
		c->len += (size_t)k;
		c->req[c->len] = 0;
		if (strstr(c->req + from, "\r\n\r\n") || c->len == REQ_CAP) {
			respond(m, c);
			return true;
		}
	}
}

/* Write what the socket takes of the answer. False when the connection is
 * done with (all written, or an error). */
static bool conn_write(struct mconn *c)
{
	while (c->out_off < c->out_len) {
		ssize_t k = send(c->fd, c->out + c->out_off, c->out_len - c->out_off,
				 MSG_NOSIGNAL | MSG_DONTWAIT);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return true;
		if (k <= 0)
			return false;
		c->out_off += (size_t)k;
	}
	return false;
}

/* The deadline of a connection: its head, then its whole exchange. */
static uint64_t conn_deadline(const struct mconn *c)
{
	return c->accepted_ns +
	       (uint64_t)(c->writing ? METRICS_CONN_MS : METRICS_HEAD_MS) * NS_PER_MS;
}

/* Accept what waits on the listening socket, into free slots (or the slot
 * of the connection that has waited longest for its head). False when the
 * process is out of descriptors or memory: then the listening socket is
 * left alone a while (it stays readable, and the thread would spin). */
static bool accept_new(struct metrics_server *m, uint64_t now)
{
	for (int i = 0; i < METRICS_MAX_CLIENTS; i++) {
		int fd = accept4(m->fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
		if (fd < 0)
			return !(errno == EMFILE || errno == ENFILE || errno == ENOBUFS ||
				 errno == ENOMEM);
		struct mconn *slot = NULL, *oldest = NULL;
		for (size_t k = 0; k < METRICS_MAX_CLIENTS && !slot; k++) {
			struct mconn *c = &m->conns[k];
			if (c->fd < 0)
				slot = c;
			else if (!c->writing && (!oldest || c->accepted_ns < oldest->accepted_ns))
				oldest = c;
		}
		if (!slot && oldest) {
			conn_close(m, oldest);
			slot = oldest;
		}
		if (!slot) { /* every slot is being answered: this one waits for none */
			close(fd);
			continue;
		}
		int sndbuf = SNDBUF;
		setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof sndbuf);
		slot->fd = fd;
		slot->accepted_ns = now;
		atomic_fetch_add_explicit(&m->n_clients, 1, memory_order_relaxed);
	}
	return true;
}

static void *server_main(void *arg)
{
	struct metrics_server *m = arg;
	uint64_t next_tick = clock_now_ns();
	struct pollfd p[2 + METRICS_MAX_CLIENTS];
	struct mconn *at[METRICS_MAX_CLIENTS]; /* the connection of p[2 + i] */
	uint64_t accept_at = 0; /* the listening socket is looked at from then */
	for (;;) {
		uint64_t now = clock_now_ns();
		if (now >= next_tick) {
			pthread_mutex_lock(&m->mu);
			tick(m);
			pthread_mutex_unlock(&m->mu);
			next_tick += NS_PER_S;
			if (next_tick <= now)
				next_tick = now + NS_PER_S;
		}
		pthread_mutex_lock(&m->mu);
		bool quit = m->quit;
		pthread_mutex_unlock(&m->mu);
		if (quit)
			break;
		uint64_t wake = next_tick;
		size_t np = 2;
		for (size_t k = 0; k < METRICS_MAX_CLIENTS; k++) {
			struct mconn *c = &m->conns[k];
			if (c->fd < 0)
				continue;
			if (conn_deadline(c) <= now) {
				conn_close(m, c);
				continue;
			}
			if (conn_deadline(c) < wake)
				wake = conn_deadline(c);
			at[np - 2] = c;
			p[np++] = (struct pollfd){.fd = c->fd,
						  .events = c->writing ? POLLOUT : POLLIN};
		}
		p[0] = (struct pollfd){.fd = accept_at <= now ? m->fd : -1, .events = POLLIN};
		p[1] = (struct pollfd){.fd = m->wake_fd, .events = POLLIN};
		if (accept_at > now && accept_at < wake)
			wake = accept_at;
		int ms = wake > now ? (int)((wake - now) / NS_PER_MS) + 1 : 0;
		int n = poll(p, (nfds_t)np, ms);
		if (n <= 0)
			continue;
		if (p[1].revents)
			continue; /* quit is looked at on the next turn */
		now = clock_now_ns();
		for (size_t i = 2; i < np; i++) {
			struct mconn *c = at[i - 2];
			if (!p[i].revents)
				continue;
			bool open = true;
			if (!c->writing)
				open = conn_read(m, c);
			if (open && c->writing)
				open = conn_write(c);
			if (!open)
				conn_close(m, c);
		}
		if ((p[0].revents & POLLIN) && !accept_new(m, now))
			accept_at = now + 100 * NS_PER_MS;
	}
	for (size_t k = 0; k < METRICS_MAX_CLIENTS; k++)
		if (m->conns[k].fd >= 0)
			conn_close(m, &m->conns[k]);
	return NULL;
}

/* ---- API ------------------------------------------------------------------- */

int metrics_start(struct metrics_server **out, const struct metrics_cfg *cfg)
{
	if (!cfg->n_variants || cfg->n_variants > METRICS_MAX_VARIANTS)
		return -EINVAL;
	struct metrics_server *m = calloc(1, sizeof *m);
	if (!m)
		return -ENOMEM;
	m->conns = calloc(METRICS_MAX_CLIENTS, sizeof *m->conns);
	if (!m->conns) {
		free(m);
		return -ENOMEM;
	}
	for (size_t i = 0; i < METRICS_MAX_CLIENTS; i++)
		m->conns[i].fd = -1;
	m->n_variants = cfg->n_variants;
	sysinfo_steal_sample(&m->steal0);
	snprintf(m->run, sizeof m->run, "%s", cfg->run ? cfg->run : "");
	snprintf(m->scenario, sizeof m->scenario, "%s", cfg->scenario ? cfg->scenario : "");
	snprintf(m->version, sizeof m->version, "%s", cfg->version ? cfg->version : "");
	snprintf(m->commit, sizeof m->commit, "%s", cfg->commit ? cfg->commit : "");
	m->n_outcomes = cfg->n_outcomes < ENGINE_LIVE_OUTCOMES ? cfg->n_outcomes : ENGINE_LIVE_OUTCOMES;
	for (uint32_t i = 0; i < m->n_outcomes; i++)
		m->outcome_names[i] = cfg->outcome_names[i];
	for (size_t i = 0; i < cfg->n_variants; i++)
		m->vars[i].name = cfg->names ? cfg->names[i] : NULL;
	m->fd = net_listen(&cfg->addr, 16, false);
	if (m->fd < 0) {
		int rc = m->fd;
		free(m->conns);
		free(m);
		return rc;
	}
	int port = net_local_port(m->fd);
	m->port = port > 0 ? (uint16_t)port : 0;
	m->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (m->wake_fd < 0) {
		int rc = -errno;
		close(m->fd);
		free(m->conns);
		free(m);
		return rc;
	}
	pthread_mutex_init(&m->mu, NULL);
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	int rc = -pthread_create(&m->thread, NULL, server_main, m);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc) {
		pthread_mutex_destroy(&m->mu);
		close(m->wake_fd);
		close(m->fd);
		free(m->conns);
		free(m);
		return rc;
	}
	*out = m;
	return 0;
}

uint16_t metrics_port(const struct metrics_server *m) { return m->port; }

size_t metrics_clients(const struct metrics_server *m)
{
	return atomic_load_explicit(&m->n_clients, memory_order_relaxed);
}

void metrics_begin(struct metrics_server *m, size_t variant, struct engine *e, bool new_step,
		   double offered_per_s)
{
	if (!m || variant >= m->n_variants)
		return;
	pthread_mutex_lock(&m->mu);
	struct mvar *v = &m->vars[variant];
	v->e = e;
	v->step += new_step || !v->step;
	v->offered_per_s = offered_per_s;
	v->phase = MPH_WARMUP;
	refresh(v);
	live_track_begin(&v->tr, &v->last, clock_now_ns(), v->ramp_step, v->planned_steps,
			 offered_per_s);
	struct engine_progress p;
	if (e) {
		engine_progress(e, &p);
		if (!p.warmup_ns) /* no warm-up: the measured phase is the step */
			live_track_phase_start(&v->tr, &v->last);
	}
	pthread_mutex_unlock(&m->mu);
}

void metrics_live_step(struct metrics_server *m, size_t variant, uint32_t step,
		       uint32_t planned_steps)
{
	if (!m || variant >= m->n_variants)
		return;
	pthread_mutex_lock(&m->mu);
	m->vars[variant].ramp_step = step;
	m->vars[variant].planned_steps = planned_steps;
	pthread_mutex_unlock(&m->mu);
}

void metrics_phase(struct metrics_server *m, size_t variant, enum metrics_phase ph)
{
	if (!m || variant >= m->n_variants)
		return;
	pthread_mutex_lock(&m->mu);
	struct mvar *v = &m->vars[variant];
	if (ph != MPH_WARMUP && v->phase == MPH_WARMUP && v->e) { /* the live page's phase */
		refresh(v);
		live_track_phase_start(&v->tr, &v->last);
	}
	v->phase = ph;
	pthread_mutex_unlock(&m->mu);
}

void metrics_end(struct metrics_server *m, size_t variant)
{
	if (!m || variant >= m->n_variants)
		return;
	pthread_mutex_lock(&m->mu);
	struct mvar *v = &m->vars[variant];
	refresh(v);
	v->e = NULL;
	v->phase = MPH_IDLE;
	v->tr.figs.phase = LIVE_IDLE;
	pthread_mutex_unlock(&m->mu);
}

void metrics_stop(struct metrics_server *m)
{
	if (!m)
		return;
	pthread_mutex_lock(&m->mu);
	m->quit = true;
	pthread_mutex_unlock(&m->mu);
	uint64_t one = 1;
	if (write(m->wake_fd, &one, sizeof one) < 0) {
		/* the eventfd cannot be full; the poll times out within a second anyway */
	}
	pthread_join(m->thread, NULL); /* prompt: the thread never blocks but in its poll */
	pthread_mutex_destroy(&m->mu);
	close(m->wake_fd);
	close(m->fd);
	free(m->conns);
	free(m);
}
