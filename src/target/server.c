/* The embedded target server: threads, connections, timers, responses. */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "http/h1req.h"
#include "net/loop.h"
#include "net/sock.h"
#include "net/tls.h"
#include "target/target.h"
#include "target/theap.h"
#include "util/clock.h"
#include "util/err.h"

#define IN_INIT (4u << 10)
#define IN_MAX (H1REQ_HEADERS_CAP + (4u << 10)) /* must exceed the head cap */
#define OUT_INIT (4u << 10)
#define OUT_MAX (64u << 10)
#define OUT_HIGH (32u << 10) /* stop taking requests while more than this waits */
#define COPY_MAX (4u << 10)  /* larger bodies are sent from where they are */
#define LINGER_NS (2 * NS_PER_S)
#define ACCEPT_PAUSE_NS (100 * NS_PER_MS)
#define MAX_EVENTS 256
#define INBOX_CAP 256
#define FREE_KEEP 256 /* idle connection structs kept for reuse per thread */
#define ACCEPT_BURST 64

_Static_assert(OUT_HIGH + TARGET_HEADERS_CAP + 512 + COPY_MAX <= OUT_MAX, "out buffer too small");
_Static_assert(IN_MAX > H1REQ_HEADERS_CAP, "input buffer must exceed the head cap");

enum cstate {
	C_READ,   /* reading / parsing request heads */
	C_BODY,   /* discarding a request body */
	C_WAIT,   /* a request is executing: its latency timer runs */
	C_LINGER, /* write side shut; draining input before close */
};

struct worker;

struct conn {
	struct theap_node tn; /* first: the timer node leads to the conn */
	struct worker *w;
	struct conn *prev, *next; /* live list, or free list (next only) */
	int fd;
	uint32_t events; /* registered epoll interest */
	enum cstate state;
	bool dead;
	bool peer_eof;
	bool closing;       /* close once the output is flushed */
	bool write_blocked; /* the last send hit EAGAIN */
	bool need_more;     /* the input holds an incomplete request */
	struct tls_conn *tls; /* NULL: plain */
	bool tls_ready;       /* TLS handshake done */
	bool tls_rd_want_wr;  /* a TLS read waits for the socket to be writable */

	/* input: the current request starts at in + in_off */
	char *in;
	uint32_t in_cap, in_len, in_off;
	struct h1req req;
	uint64_t body_left;
	uint64_t req_start_ns; /* first byte of an incomplete request; 0: none */
	uint64_t last_io_ns;
	uint64_t linger_end_ns;

	/* output: out[out_off, out_len) then ext[ext_off, ext_len) */
	char *out;
	uint32_t out_cap, out_len, out_off;
	const char *ext;
	size_t ext_len, ext_off;
	uint64_t blocked_since_ns;
	/* slow body: bytes that may still go out before slow_next_ns */
	bool slow;
	size_t slow_budget;
	uint64_t slow_next_ns;

	/* the request being executed */
	const struct target_route *rt;
	const struct target_resp *resp;
	bool head_req, keep_alive, v10, garbage;
	uint64_t dispatch_ns, ready_ns;
	char *dyn; /* rendered body (templates, kv) */
	uint32_t dyn_len, dyn_cap;
	uint64_t nreq; /* requests answered on this connection */
};

struct target;

struct worker {
	struct target *t;
	unsigned idx;
	pthread_t th;
	bool started;
	struct loop loop;
	struct theap heap;
	struct rng rng;
	uint64_t now;
	uint64_t seq;
	struct conn *live;
	struct conn *free_list;
	unsigned n_free;
	struct conn *dead; /* closed this iteration; recycled after it */
	char listen_tag;
	bool accept_paused;
	struct theap_node accept_tn;
	pthread_mutex_t mu;
	int inbox[INBOX_CAP];
	unsigned inbox_n;
	struct target_stats st;
};

struct target {
	const struct target_plan *plan;
	struct tls_ctx *tls; /* NULL: plain HTTP; borrowed */
	int lfd;
	int port;
	unsigned n;
	struct worker *w;
	atomic_bool stop;
	atomic_uint_fast64_t ticket;
	atomic_uint_fast32_t open;
	uint64_t t0_ns;
	char errs[8][160]; /* canned error responses */
	size_t errs_len[8];
};

static const int err_status[8] = {400, 408, 411, 413, 414, 431, 501, 505};
static const char continue_100[] = "HTTP/1.1 100 Continue\r\n\r\n";
static const char garbage_bytes[] = "\x01\x02 pacer garbage: this is not HTTP \xff\xfe\r\n\r\n";

/* ---- small helpers -------------------------------------------------- */

static inline void stat_inc(uint64_t *c) { __atomic_store_n(c, *c + 1, __ATOMIC_RELAXED); }

static size_t fmt_u64(char *p, uint64_t v)
{
	char tmp[24];
	size_t n = 0;
	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	for (size_t i = 0; i < n; i++)
		p[i] = tmp[n - 1 - i];
	return n;
}

static inline size_t out_pending(const struct conn *c)
{
	return (size_t)(c->out_len - c->out_off) + (c->ext ? c->ext_len - c->ext_off : 0);
}

/* Make room for `need` more bytes in out. false: no memory (or over cap). */
static bool out_reserve(struct conn *c, size_t need)
{
	if (c->out_len + need <= c->out_cap)
		return true;
	if (c->out_off) {
		memmove(c->out, c->out + c->out_off, c->out_len - c->out_off);
		c->out_len -= c->out_off;
		c->out_off = 0;
		if (c->out_len + need <= c->out_cap)
			return true;
	}
	size_t cap = c->out_cap ? c->out_cap : OUT_INIT;
	while (cap < c->out_len + need)
		cap *= 2;
	if (cap > OUT_MAX)
		cap = OUT_MAX;
	if (c->out_len + need > cap)
		return false;
	char *o = realloc(c->out, cap);
	if (!o)
		return false;
	c->out = o;
	c->out_cap = (uint32_t)cap;
	return true;
}

static inline void out_put(struct conn *c, const void *p, size_t n)
{
	memcpy(c->out + c->out_len, p, n);
	c->out_len += (uint32_t)n;
}

/* A real busy loop: burn `ns` of this thread's CPU time. */
static void busy_work(uint64_t ns)
{
	uint64_t end = clock_thread_cpu_ns() + ns;
	volatile uint64_t sink = 0;
	uint64_t x = 0x9e3779b97f4a7c15ull;
	do {
		for (int i = 0; i < 64; i++)
			x = x * 6364136223846793005ull + 1442695040888963407ull;
		sink = x;
	} while (clock_thread_cpu_ns() < end);
	(void)sink;
}

/* ---- connections ---------------------------------------------------- */

static void conn_rearm(struct conn *c);
static void conn_settle(struct conn *c);

static void conn_close(struct conn *c)
{
	if (c->dead)
		return;
	struct worker *w = c->w;
	theap_cancel(&w->heap, &c->tn);
	tls_conn_free(c->tls);
	c->tls = NULL;
	close(c->fd);
	c->fd = -1;
	c->dead = true;
	if (c->prev)
		c->prev->next = c->next;
	else
		w->live = c->next;
	if (c->next)
		c->next->prev = c->prev;
	c->next = w->dead;
	w->dead = c;
	atomic_fetch_sub_explicit(&w->t->open, 1, memory_order_relaxed);
}

static void conn_free(struct conn *c)
{
	free(c->in);
	free(c->out);
	free(c->dyn);
	free(c);
}

/* Recycle the connections closed during this iteration. */
static void reap(struct worker *w)
{
	while (w->dead) {
		struct conn *c = w->dead;
		w->dead = c->next;
		if (w->n_free < FREE_KEEP) {
			c->next = w->free_list;
			w->free_list = c;
			w->n_free++;
		} else {
			conn_free(c);
		}
	}
}

static void conn_new(struct worker *w, int fd)
{
	struct conn *c = w->free_list;
	if (c) {
		w->free_list = c->next;
		w->n_free--;
	} else {
		c = calloc(1, sizeof *c);
		if (!c) {
			close(fd);
			atomic_fetch_sub_explicit(&w->t->open, 1, memory_order_relaxed);
			return;
		}
	}
	/* keep the buffers of a recycled struct, reset the rest */
	char *in = c->in, *out = c->out, *dyn = c->dyn;
	uint32_t in_cap = c->in_cap, out_cap = c->out_cap, dyn_cap = c->dyn_cap;
	memset(c, 0, sizeof *c);
	c->in = in;
	c->in_cap = in_cap;
	c->out = out;
	c->out_cap = out_cap;
	c->dyn = dyn;
	c->dyn_cap = dyn_cap;
	if (!c->in) {
		c->in = malloc(IN_INIT);
		c->in_cap = c->in ? IN_INIT : 0;
	}
	if (!c->out) {
		c->out = malloc(OUT_INIT);
		c->out_cap = c->out ? OUT_INIT : 0;
	}
	c->w = w;
	c->fd = fd;
	theap_node_init(&c->tn);
	h1req_init(&c->req);
	c->last_io_ns = w->now;
	c->state = C_READ;
	c->events = EPOLLIN;
	c->next = w->live;
	if (w->live)
		w->live->prev = c;
	w->live = c;
	if (!c->in || !c->out || loop_add(&w->loop, fd, EPOLLIN, c) < 0) {
		conn_close(c);
		return;
	}
	int one = 1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	if (w->t->tls && tls_conn_new(&c->tls, w->t->tls, fd, NULL, NULL) < 0) {
		conn_close(c);
		return;
	}
	stat_inc(&w->st.connections);
	conn_rearm(c);
}

/* ---- responses ------------------------------------------------------ */

static void emit_canned(struct conn *c, int status)
{
	struct target *t = c->w->t;
	size_t i = 0;
	while (i < 7 && err_status[i] != status)
		i++;
	if (out_reserve(c, t->errs_len[i]))
		out_put(c, t->errs[i], t->errs_len[i]);
	c->closing = true;
	stat_inc(&c->w->st.requests);
}

/* Append the response of the current request. */
static void emit(struct conn *c)
{
	struct worker *w = c->w;
	const struct target_route *rt = c->rt;
	const struct target_resp *r = c->resp;
	c->nreq++;
	stat_inc(&w->st.requests);
	if (c->garbage) {
		if (out_reserve(c, sizeof garbage_bytes - 1))
			out_put(c, garbage_bytes, sizeof garbage_bytes - 1);
		c->closing = true;
		stat_inc(&w->st.misbehaved);
		return;
	}
	bool dynamic = r->wire == NULL;
	const char *body = dynamic ? c->dyn : r->wire + r->wire_body_off;
	size_t body_len = dynamic ? c->dyn_len : r->wire_len - r->wire_body_off;
	bool conn_hdr = !c->keep_alive || c->v10;
	bool timing = rt && rt->server_timing;
	bool send_body = !c->head_req && body_len > 0;
	size_t head_room = r->head_len + 160;
	if (!dynamic && !conn_hdr && !timing) {
		/* precomputed bytes */
		size_t n = send_body ? r->wire_len : r->wire_body_off;
		if (send_body && body_len > COPY_MAX)
			n = r->wire_body_off;
		if (!out_reserve(c, n)) {
			conn_close(c);
			return;
		}
		out_put(c, r->wire, n);
	} else {
		if (!out_reserve(c, head_room + (send_body && body_len <= COPY_MAX ? body_len : 0))) {
			conn_close(c);
			return;
		}
		out_put(c, r->head, r->head_len);
		char *p = c->out + c->out_len;
		if (!r->no_body_allowed) {
			memcpy(p, "Content-Length: ", 16);
			p += 16;
			p += fmt_u64(p, body_len);
			*p++ = '\r';
			*p++ = '\n';
		}
		if (timing) {
			uint64_t dur_us = (clock_now_ns() - c->dispatch_ns) / 1000;
			memcpy(p, "Server-Timing: app;dur=", 23);
			p += 23;
			p += fmt_u64(p, dur_us / 1000);
			*p++ = '.';
			uint64_t frac = dur_us % 1000;
			*p++ = (char)('0' + frac / 100);
			*p++ = (char)('0' + frac / 10 % 10);
			*p++ = (char)('0' + frac % 10);
			*p++ = '\r';
			*p++ = '\n';
		}
		if (conn_hdr) {
			const char *v = c->keep_alive ? "Connection: keep-alive\r\n" : "Connection: close\r\n";
			size_t vl = strlen(v);
			memcpy(p, v, vl);
			p += vl;
		}
		*p++ = '\r';
		*p++ = '\n';
		c->out_len = (uint32_t)(p - c->out);
		if (send_body && body_len <= COPY_MAX)
			out_put(c, body, body_len);
	}
	if (send_body && body_len > COPY_MAX) {
		c->ext = body;
		c->ext_len = body_len;
		c->ext_off = 0;
	}
	if (!c->keep_alive)
		c->closing = true;
	if (rt && rt->mis.close_after && c->nreq >= rt->mis.close_after) {
		c->closing = true;
		stat_inc(&w->st.misbehaved);
	}
	if (rt && rt->mis.slow_bytes && send_body) {
		/* everything before the body, plus the first piece of it, now */
		c->slow = true;
		c->slow_budget = out_pending(c) - body_len + rt->mis.slow_bytes;
		c->slow_next_ns = w->now + rt->mis.slow_every_ns;
	}
}

/* ---- rendering ------------------------------------------------------ */

static bool dyn_reserve(struct conn *c, size_t need)
{
	if (c->dyn_len + need <= c->dyn_cap)
		return true;
	size_t cap = c->dyn_cap ? c->dyn_cap : 4096;
	while (cap < c->dyn_len + need)
		cap *= 2;
	if (cap > TARGET_DYN_CAP)
		cap = TARGET_DYN_CAP;
	if (c->dyn_len + need > cap)
		return false;
	char *d = realloc(c->dyn, cap);
	if (!d)
		return false;
	c->dyn = d;
	c->dyn_cap = (uint32_t)cap;
	return true;
}

static void dyn_put(struct conn *c, const void *p, size_t n)
{
	if (dyn_reserve(c, n)) {
		memcpy(c->dyn + c->dyn_len, p, n);
		c->dyn_len += (uint32_t)n;
	}
}

static int hexval(char ch)
{
	if (ch >= '0' && ch <= '9')
		return ch - '0';
	if (ch >= 'a' && ch <= 'f')
		return ch - 'a' + 10;
	if (ch >= 'A' && ch <= 'F')
		return ch - 'A' + 10;
	return -1;
}

/* Percent-decode s[0..n) into out (cap bytes at most). Returns the length. */
static size_t pct_decode(const char *s, size_t n, char *out, size_t cap)
{
	size_t o = 0;
	for (size_t i = 0; i < n && o < cap; i++) {
		int hi, lo;
		if (s[i] == '%' && i + 2 < n && (hi = hexval(s[i + 1])) >= 0 && (lo = hexval(s[i + 2])) >= 0) {
			out[o++] = (char)(hi * 16 + lo);
			i += 2;
		} else if (s[i] == '+') {
			out[o++] = ' ';
		} else {
			out[o++] = s[i];
		}
	}
	return o;
}

static bool echo_safe(unsigned char ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
	       ch == ' ' || ch == '.' || ch == '_' || ch == '~' || ch == ',' || ch == ':' || ch == '-';
}

static void render_template(struct conn *c, const struct target_body *b, const char *query,
                            size_t qlen)
{
	struct worker *w = c->w;
	char id[16];
	bool have_id = false;
	for (size_t i = 0; i < b->n_segs; i++) {
		const struct target_seg *s = &b->segs[i];
		switch (s->kind) {
		case TARGET_SEG_TEXT:
			dyn_put(c, s->text, s->len);
			break;
		case TARGET_SEG_ID:
			if (!have_id) {
				uint64_t v = rng_next(&w->rng);
				for (int k = 0; k < 16; k++)
					id[k] = "0123456789abcdef"[(v >> (60 - 4 * k)) & 15];
				have_id = true;
			}
			dyn_put(c, id, sizeof id);
			break;
		case TARGET_SEG_SEQ: {
			char num[24];
			dyn_put(c, num, fmt_u64(num, w->seq));
			break;
		}
		case TARGET_SEG_QUERY: {
			char name[72];
			memcpy(name, s->text, s->len);
			name[s->len] = '\0';
			const char *v;
			size_t vl;
			if (h1req_query_param(query, qlen, name, &v, &vl)) {
				char dec[TARGET_QUERY_ECHO_CAP];
				size_t n = pct_decode(v, vl, dec, sizeof dec);
				for (size_t k = 0; k < n; k++)
					if (!echo_safe((unsigned char)dec[k]))
						dec[k] = '_';
				dyn_put(c, dec, n);
			}
			break;
		}
		}
	}
}

static void json_str(struct conn *c, const char *s, size_t n)
{
	dyn_put(c, "\"", 1);
	for (size_t i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)s[i];
		if (ch == '"' || ch == '\\') {
			char e[2] = {'\\', (char)ch};
			dyn_put(c, e, 2);
		} else if (ch < 0x20 || ch >= 0x7f) {
			char e[6] = {'\\', 'u', '0', '0', "0123456789abcdef"[ch >> 4], "0123456789abcdef"[ch & 15]};
			dyn_put(c, e, 6);
		} else {
			dyn_put(c, s + i, 1);
		}
	}
	dyn_put(c, "\"", 1);
}

/* The generated value of key number i: value_size characters of [a-z0-9],
 * the same on every run. */
static void kv_gen_value(struct conn *c, uint64_t i, uint32_t n)
{
	if (!dyn_reserve(c, (size_t)n + 2))
		return;
	char *p = c->dyn + c->dyn_len;
	*p++ = '"';
	uint64_t x = i * 0x9e3779b97f4a7c15ull + 0x632be59bd9b4e019ull;
	for (uint32_t k = 0; k < n; k++) {
		if (k % 8 == 0) {
			x += 0x9e3779b97f4a7c15ull;
			uint64_t z = x;
			z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
			z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
			x = z ^ (z >> 31);
		}
		*p++ = "abcdefghijklmnopqrstuvwxyz0123456789"[((x >> (8 * (k % 8))) & 0xff) % 36];
	}
	*p++ = '"';
	c->dyn_len += n + 2;
}

static const char *kv_lookup(const struct target_kv *kv, const char *key, size_t n, uint64_t *gen,
                             bool *is_gen)
{
	*is_gen = false;
	size_t pl = strlen(kv->prefix);
	if (kv->generate && n > pl && !memcmp(key, kv->prefix, pl) && n - pl <= 10) {
		uint64_t v = 0;
		bool ok = !(key[pl] == '0' && n - pl > 1);
		for (size_t i = pl; i < n && ok; i++) {
			ok = key[i] >= '0' && key[i] <= '9';
			v = v * 10 + (uint64_t)(key[i] - '0');
		}
		if (ok && v < kv->generate) {
			*is_gen = true;
			*gen = v;
			return NULL;
		}
	}
	size_t lo = 0, hi = kv->n_table;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		const char *k = kv->table[mid].name;
		int cmp = strncmp(k, key, n);
		if (cmp == 0 && k[n] != '\0')
			cmp = 1;
		if (cmp == 0)
			return kv->table[mid].value;
		if (cmp < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

static void render_kv(struct conn *c, const struct target_kv *kv, const char *query, size_t qlen)
{
	const char *v;
	size_t vl;
	dyn_put(c, "{", 1);
	if (h1req_query_param(query, qlen, kv->param, &v, &vl)) {
		char dec[H1REQ_LINE_CAP];
		size_t n = pct_decode(v, vl, dec, sizeof dec);
		size_t i = 0, keys = 0;
		while (i < n && keys < TARGET_KV_MAX_KEYS) {
			size_t j = i;
			while (j < n && dec[j] != ',')
				j++;
			if (j > i) {
				if (keys++)
					dyn_put(c, ",", 1);
				json_str(c, dec + i, j - i);
				dyn_put(c, ":", 1);
				uint64_t gi;
				bool is_gen;
				const char *val = kv_lookup(kv, dec + i, j - i, &gi, &is_gen);
				if (is_gen)
					kv_gen_value(c, gi, kv->value_size);
				else if (val)
					json_str(c, val, strlen(val));
				else
					dyn_put(c, "null", 4);
			}
			i = j + 1;
		}
	}
	dyn_put(c, "}\n", 2);
}

/* ---- request execution ---------------------------------------------- */

/* A request head is complete: decide how it will be answered. The query
 * is only available now (the head may be overwritten while the body is
 * read), so dynamic bodies are rendered here. */
static void prepare(struct conn *c, const struct target_route *rt, const char *query, size_t qlen)
{
	struct worker *w = c->w;
	c->rt = rt;
	c->garbage = false;
	c->dyn_len = 0;
	w->seq++;
	if (!rt) {
		c->resp = &w->t->plan->not_found;
		return;
	}
	c->resp = &rt->resps[target_route_pick(rt, &w->rng)];
	if (rt->mis.garbage > 0 &&
	    (rt->mis.garbage >= 1 || rng_next(&w->rng) < rt->mis.garbage_thresh)) {
		c->garbage = true;
		return;
	}
	const struct target_body *b = c->resp->body;
	if (b->kv)
		render_kv(c, rt->kv, query, qlen);
	else if (b->segs)
		render_template(c, b, query, qlen);
}

/* The body has been read: do the work, then answer now or later. */
static void execute(struct conn *c)
{
	struct worker *w = c->w;
	const struct target_route *rt = c->rt;
	c->req_start_ns = 0;
	if (!rt || rt->simple) {
		emit(c);
		c->state = C_READ;
		return;
	}
	uint64_t t0 = clock_now_ns();
	c->dispatch_ns = t0;
	if (rt->work_ns) {
		busy_work(rt->work_ns);
		t0 = clock_now_ns();
	}
	w->now = t0;
	uint64_t ready = t0 + target_dist_sample(&rt->latency, &w->rng);
	const struct target_misbehave *m = &rt->mis;
	if (m->stall_every_ns) {
		uint64_t base = w->t->t0_ns, since = ready - base;
		if (since >= m->stall_every_ns && since % m->stall_every_ns < m->stall_for_ns)
			ready = base + since / m->stall_every_ns * m->stall_every_ns + m->stall_for_ns;
	}
	if (ready > t0) {
		c->ready_ns = ready;
		c->state = C_WAIT;
		return;
	}
	emit(c);
	c->state = C_READ;
}

/* Parse and answer what is in the input buffer until blocked. Returns true
 * if it stopped only to let the output drain. */
static bool conn_run(struct conn *c)
{
	struct worker *w = c->w;
	const struct target_plan *plan = w->t->plan;
	bool output_bound = false;
	c->need_more = false;
	while (!c->dead && !c->closing && c->state != C_WAIT && c->state != C_LINGER) {
		if (c->ext || c->slow || out_pending(c) > OUT_HIGH) {
			output_bound = true; /* let the output drain first */
			break;
		}
		if (c->state == C_BODY) {
			uint32_t avail = c->in_len - c->in_off;
			uint64_t take = avail < c->body_left ? avail : c->body_left;
			c->in_off += (uint32_t)take;
			c->body_left -= take;
			if (c->body_left) {
				c->need_more = true;
				break;
			}
			execute(c);
			continue;
		}
		uint32_t avail = c->in_len - c->in_off;
		if (avail == 0)
			break;
		const char *msg = c->in + c->in_off;
		int rc = h1req_parse(&c->req, msg, avail);
		if (rc == 0) {
			c->need_more = true;
			break;
		}
		if (rc < 0) {
			stat_inc(&w->st.bad_requests);
			emit_canned(c, c->req.error_status);
			break;
		}
		const struct h1req *q = &c->req;
		const char *path, *query;
		size_t path_len, qlen;
		h1req_split_target(q, msg, &path, &path_len, &query, &qlen);
		const struct target_route *rt =
			target_plan_match(plan, msg + q->method_off, q->method_len, path, path_len);
		c->head_req = q->method_len == 4 && !memcmp(msg + q->method_off, "HEAD", 4);
		c->keep_alive = q->keep_alive;
		c->v10 = q->version_minor == 0;
		c->body_left = q->content_length;
		if (q->expect_continue && c->body_left > avail - (uint32_t)rc &&
		    out_reserve(c, sizeof continue_100 - 1))
			out_put(c, continue_100, sizeof continue_100 - 1);
		if (rt && rt->simple && c->body_left == 0 && !c->head_req && c->keep_alive && !c->v10) {
			/* the fast path: precomputed bytes, nothing else */
			const struct target_resp *r = &rt->resps[0];
			c->in_off += (uint32_t)rc;
			h1req_init(&c->req);
			c->nreq++;
			stat_inc(&w->st.requests);
			w->seq++;
			size_t n = r->wire_len;
			if (n - r->wire_body_off > COPY_MAX) {
				n = r->wire_body_off;
				c->ext = r->wire + n;
				c->ext_len = r->wire_len - n;
				c->ext_off = 0;
			}
			if (!out_reserve(c, n)) {
				conn_close(c);
				return false;
			}
			out_put(c, r->wire, n);
			continue;
		}
		prepare(c, rt, query, qlen);
		c->in_off += (uint32_t)rc;
		h1req_init(&c->req);
		c->state = C_BODY;
	}
	if (c->dead)
		return false;
	/* buffer housekeeping */
	if (c->in_off == c->in_len) {
		c->in_off = c->in_len = 0;
	} else if (c->in_off > c->in_cap / 2) {
		memmove(c->in, c->in + c->in_off, c->in_len - c->in_off);
		c->in_len -= c->in_off;
		c->in_off = 0;
	}
	if (!c->need_more)
		c->req_start_ns = 0;
	else if (!c->req_start_ns)
		c->req_start_ns = w->now;
	return output_bound;
}

/* Send what is pending. Returns false if the connection was closed. */
static bool conn_flush(struct conn *c)
{
	struct worker *w = c->w;
	while (out_pending(c)) {
		struct iovec iov[2] = {{NULL, 0}, {NULL, 0}};
		int n = 0;
		if (c->out_len > c->out_off)
			iov[n++] = (struct iovec){c->out + c->out_off, c->out_len - c->out_off};
		if (c->ext && c->ext_off < c->ext_len)
			iov[n++] = (struct iovec){(void *)(c->ext + c->ext_off), c->ext_len - c->ext_off};
		size_t limit = SIZE_MAX;
		if (c->slow) {
			if (c->slow_budget == 0)
				return true; /* the timer will add budget */
			limit = c->slow_budget;
			if (iov[0].iov_len >= limit) {
				iov[0].iov_len = limit;
				n = 1;
			} else if (n == 2 && iov[0].iov_len + iov[1].iov_len > limit) {
				iov[1].iov_len = limit - iov[0].iov_len;
			}
		}
		ssize_t s;
		if (c->tls) {
			/* one segment per round; a retry after "would block" sends
			 * the same bytes (at least as many), as OpenSSL requires */
			s = tls_write(c->tls, iov[0].iov_base, iov[0].iov_len);
			if (s == TLS_WANT_WRITE || s == TLS_WANT_READ) {
				s = -1;
				errno = EAGAIN;
			} else if (s < 0) {
				conn_close(c);
				return false;
			}
		} else if (n == 1) {
			s = send(c->fd, iov[0].iov_base, iov[0].iov_len, MSG_NOSIGNAL);
		} else {
			struct msghdr mh = {.msg_iov = iov, .msg_iovlen = (size_t)n};
			s = sendmsg(c->fd, &mh, MSG_NOSIGNAL);
		}
		if (s < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK) {
				if (!c->write_blocked) {
					c->write_blocked = true;
					c->blocked_since_ns = w->now;
				}
				return true;
			}
			conn_close(c);
			return false;
		}
		size_t sent = (size_t)s;
		c->write_blocked = false;
		if (c->slow)
			c->slow_budget -= sent;
		size_t o = c->out_len - c->out_off;
		if (sent >= o) {
			c->out_off = c->out_len = 0;
			c->ext_off += sent - o;
		} else {
			c->out_off += (uint32_t)sent;
		}
		if (c->ext && c->ext_off >= c->ext_len) {
			c->ext = NULL;
			c->ext_len = c->ext_off = 0;
		}
	}
	c->write_blocked = false;
	c->slow = false;
	return true;
}

static void start_linger(struct conn *c)
{
	if (c->peer_eof) {
		conn_close(c);
		return;
	}
	if (c->tls)
		tls_shutdown(c->tls); /* close_notify before the FIN */
	shutdown(c->fd, SHUT_WR);
	c->state = C_LINGER;
	c->linger_end_ns = c->w->now + LINGER_NS;
}

static uint64_t conn_deadline(const struct conn *c)
{
	const struct target_plan *p = c->w->t->plan;
	if (c->state == C_LINGER)
		return c->linger_end_ns;
	uint64_t d = UINT64_MAX;
	if (c->state == C_WAIT)
		d = c->ready_ns;
	if (c->slow && c->slow_budget == 0 && out_pending(c))
		d = d < c->slow_next_ns ? d : c->slow_next_ns;
	if (c->write_blocked) {
		uint64_t x = c->blocked_since_ns + p->idle_timeout_ns;
		d = d < x ? d : x;
	}
	if (c->req_start_ns) {
		uint64_t x = c->req_start_ns + p->request_timeout_ns;
		d = d < x ? d : x;
	} else if (c->state == C_READ && !out_pending(c)) {
		uint64_t x = c->last_io_ns + p->idle_timeout_ns;
		d = d < x ? d : x;
	}
	return d;
}

static void conn_rearm(struct conn *c)
{
	uint64_t d = conn_deadline(c);
	if (d == UINT64_MAX) {
		theap_cancel(&c->w->heap, &c->tn);
		return;
	}
	/* lazily: a timer that fires early just re-arms itself */
	if (!theap_armed(&c->tn) || d < c->tn.deadline_ns)
		if (theap_arm(&c->w->heap, &c->tn, d) < 0)
			conn_close(c);
}

/* After any activity: run, flush, close or linger, update interest and
 * deadline. */
static void conn_settle(struct conn *c)
{
	/* Each round answers requests already in the input buffer, so this
	 * ends: it goes on only while the run stopped to let output drain and
	 * the output did drain. */
	for (;;) {
		bool output_bound = conn_run(c);
		if (c->dead)
			return;
		if (!c->write_blocked && !conn_flush(c))
			return;
		if (!output_bound || out_pending(c))
			break;
	}
	if (c->closing && !out_pending(c) && c->state != C_LINGER && c->state != C_WAIT) {
		start_linger(c);
		if (c->dead)
			return;
	}
	if (c->peer_eof && c->state != C_LINGER && c->state != C_WAIT && !out_pending(c) &&
	    !c->closing) {
		/* the client is done sending: everything complete it sent is
		 * answered, and an incomplete request never will be */
		conn_close(c);
		return;
	}
	uint32_t want = 0;
	bool room = c->in_len < IN_MAX || c->in_off > 0;
	if (!c->peer_eof && (c->state == C_LINGER || (!c->closing && room)))
		want |= EPOLLIN;
	if (c->write_blocked || c->tls_rd_want_wr)
		want |= EPOLLOUT;
	if (want != c->events) {
		if (loop_mod(&c->w->loop, c->fd, want, c) < 0) {
			conn_close(c);
			return;
		}
		c->events = want;
	}
	conn_rearm(c);
}

static void conn_read(struct conn *c)
{
	struct worker *w = c->w;
	if (c->state == C_LINGER) {
		char sink[4096];
		ssize_t n = read(c->fd, sink, sizeof sink);
		if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
			conn_close(c);
		return;
	}
	if (c->in_len == c->in_cap) {
		if (c->in_off) {
			memmove(c->in, c->in + c->in_off, c->in_len - c->in_off);
			c->in_len -= c->in_off;
			c->in_off = 0;
		} else if (c->in_cap < IN_MAX) {
			uint32_t cap = c->in_cap * 2 > IN_MAX ? IN_MAX : c->in_cap * 2;
			char *p = realloc(c->in, cap);
			if (!p) {
				conn_close(c);
				return;
			}
			c->in = p;
			c->in_cap = cap;
		} else {
			return; /* full and blocked: conn_settle drops EPOLLIN */
		}
	}
	ssize_t n;
	if (c->tls) {
		n = tls_read(c->tls, c->in + c->in_len, c->in_cap - c->in_len);
		c->tls_rd_want_wr = n == TLS_WANT_WRITE;
		if (n == TLS_WANT_READ || n == TLS_WANT_WRITE) {
			n = -1;
			errno = EAGAIN;
		} else if (n < 0) {
			conn_close(c);
			return;
		}
	} else {
		n = read(c->fd, c->in + c->in_len, c->in_cap - c->in_len);
	}
	if (n > 0) {
		c->in_len += (uint32_t)n;
		c->last_io_ns = w->now;
	} else if (n == 0) {
		c->peer_eof = true;
	} else if (errno != EAGAIN && errno != EINTR) {
		conn_close(c);
	}
}

/* TLS: advance the handshake. false while it is not done (interest set
 * for what it waits for) or when it failed (connection closed). */
static bool conn_tls_handshake(struct conn *c)
{
	int rc = tls_handshake(c->tls);
	if (rc == 0) {
		c->tls_ready = true;
		c->last_io_ns = c->w->now;
		return true;
	}
	if (rc == TLS_FAILED) {
		conn_close(c);
		return false;
	}
	uint32_t want = rc == TLS_WANT_WRITE ? EPOLLIN | EPOLLOUT : EPOLLIN;
	if (want != c->events) {
		if (loop_mod(&c->w->loop, c->fd, want, c) < 0) {
			conn_close(c);
			return false;
		}
		c->events = want;
	}
	conn_rearm(c); /* the idle timeout bounds a stalled handshake */
	return false;
}

/* TLS: bytes already decrypted or read ahead never wake epoll again; take
 * them in while the connection wants input. */
static void conn_tls_more(struct conn *c)
{
	for (int i = 0; i < 64 && !c->dead && c->tls && c->tls_ready && (c->events & EPOLLIN) &&
	                c->state != C_LINGER && tls_pending(c->tls);
	     i++) {
		conn_read(c);
		if (c->dead)
			return;
		conn_settle(c);
	}
}

static void conn_event(struct conn *c, uint32_t ev)
{
	if (ev & (EPOLLERR | EPOLLHUP)) {
		/* reset, or both directions shut: nothing can be answered */
		conn_close(c);
		return;
	}
	if (c->tls && !c->tls_ready) {
		if (!conn_tls_handshake(c))
			return;
		ev = EPOLLIN; /* the client's first request may be here already */
	}
	if (ev & EPOLLOUT) {
		c->write_blocked = false;
		if (c->tls_rd_want_wr)
			ev |= EPOLLIN;
		if (!conn_flush(c))
			return;
	}
	if (ev & EPOLLIN) {
		conn_read(c);
		if (c->dead)
			return;
	}
	conn_settle(c);
	conn_tls_more(c);
}

static void conn_timer(struct conn *c)
{
	struct worker *w = c->w;
	const struct target_plan *p = w->t->plan;
	uint64_t now = w->now;
	if (c->state == C_LINGER) {
		if (now >= c->linger_end_ns) {
			conn_close(c);
			return;
		}
		conn_rearm(c);
		return;
	}
	if (c->state == C_WAIT && now >= c->ready_ns) {
		emit(c);
		if (c->dead)
			return;
		c->state = C_READ;
	}
	if (c->slow && c->slow_budget == 0 && now >= c->slow_next_ns) {
		c->slow_budget = c->rt ? c->rt->mis.slow_bytes : SIZE_MAX;
		c->slow_next_ns = now + (c->rt ? c->rt->mis.slow_every_ns : 0);
	}
	if (c->write_blocked && now >= c->blocked_since_ns + p->idle_timeout_ns) {
		stat_inc(&w->st.timeouts);
		conn_close(c);
		return;
	}
	if (c->req_start_ns && now >= c->req_start_ns + p->request_timeout_ns) {
		stat_inc(&w->st.timeouts);
		c->req_start_ns = 0;
		if (out_pending(c)) {
			conn_close(c);
			return;
		}
		c->state = C_READ;
		emit_canned(c, 408);
	} else if (!c->req_start_ns && c->state == C_READ && !out_pending(c) && !c->closing &&
	           now >= c->last_io_ns + p->idle_timeout_ns) {
		stat_inc(&w->st.timeouts);
		conn_close(c);
		return;
	}
	if (c->tls && !c->tls_ready) {
		conn_rearm(c); /* still in the handshake: its interest stays */
		return;
	}
	conn_settle(c);
	conn_tls_more(c);
}

/* ---- accepting ------------------------------------------------------ */

static void worker_take(struct worker *w, int fd) { conn_new(w, fd); }

static void hand_off(struct worker *w, int fd)
{
	struct target *t = w->t;
	if (t->n == 1) {
		worker_take(w, fd);
		return;
	}
	unsigned to = (unsigned)(atomic_fetch_add_explicit(&t->ticket, 1, memory_order_relaxed) % t->n);
	if (to == w->idx) {
		worker_take(w, fd);
		return;
	}
	struct worker *o = &t->w[to];
	pthread_mutex_lock(&o->mu);
	bool ok = o->inbox_n < INBOX_CAP;
	if (ok)
		o->inbox[o->inbox_n++] = fd;
	pthread_mutex_unlock(&o->mu);
	if (ok)
		loop_wake(&o->loop);
	else
		worker_take(w, fd);
}

static void drain_inbox(struct worker *w)
{
	int fds[INBOX_CAP];
	pthread_mutex_lock(&w->mu);
	unsigned n = w->inbox_n;
	memcpy(fds, w->inbox, n * sizeof fds[0]);
	w->inbox_n = 0;
	pthread_mutex_unlock(&w->mu);
	for (unsigned i = 0; i < n; i++)
		worker_take(w, fds[i]);
}

static void on_accept(struct worker *w)
{
	struct target *t = w->t;
	for (int i = 0; i < ACCEPT_BURST; i++) {
		int fd = accept4(t->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
				/* out of descriptors: stop accepting for a while rather
				 * than spin on a listener that stays readable */
				loop_del(&w->loop, t->lfd);
				w->accept_paused = true;
				theap_arm(&w->heap, &w->accept_tn, w->now + ACCEPT_PAUSE_NS);
			}
			return;
		}
		uint_fast32_t open = atomic_fetch_add_explicit(&t->open, 1, memory_order_relaxed);
		if (open >= t->plan->max_connections) {
			atomic_fetch_sub_explicit(&t->open, 1, memory_order_relaxed);
			close(fd);
			stat_inc(&w->st.rejected);
			continue;
		}
		hand_off(w, fd);
	}
}

/* ---- the loop ------------------------------------------------------- */

static void run_timers(struct worker *w)
{
	for (int i = 0; i < 4096; i++) {
		struct theap_node *n = theap_pop_expired(&w->heap, w->now);
		if (!n)
			return;
		if (n == &w->accept_tn) {
			if (w->accept_paused && loop_add(&w->loop, w->t->lfd, EPOLLIN | EPOLLEXCLUSIVE,
			                                 &w->listen_tag) == 0)
				w->accept_paused = false;
			else if (w->accept_paused)
				theap_arm(&w->heap, &w->accept_tn, w->now + ACCEPT_PAUSE_NS);
			continue;
		}
		conn_timer((struct conn *)n);
	}
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct target *t = w->t;
	struct epoll_event ev[MAX_EVENTS];
	prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0); /* timers within ~1 us */
	w->now = clock_now_ns();
	while (!atomic_load_explicit(&t->stop, memory_order_acquire)) {
		uint64_t timeout = UINT64_MAX;
		struct theap_node *first = theap_peek(&w->heap);
		if (first)
			timeout = first->deadline_ns > w->now ? first->deadline_ns - w->now : 0;
		int n = loop_wait(&w->loop, ev, MAX_EVENTS, timeout);
		w->now = clock_now_ns();
		for (int i = 0; i < n; i++) {
			void *p = ev[i].data.ptr;
			if (p == &w->loop) {
				loop_wake_ack(&w->loop);
				drain_inbox(w);
			} else if (p == &w->listen_tag) {
				on_accept(w);
			} else {
				struct conn *c = p;
				if (!c->dead)
					conn_event(c, ev[i].events);
			}
		}
		run_timers(w);
		reap(w);
	}
	/* close everything this thread owns */
	while (w->live)
		conn_close(w->live);
	reap(w);
	pthread_mutex_lock(&w->mu); /* fds handed over but never taken */
	for (unsigned i = 0; i < w->inbox_n; i++)
		close(w->inbox[i]);
	w->inbox_n = 0;
	pthread_mutex_unlock(&w->mu);
	while (w->free_list) {
		struct conn *c = w->free_list;
		w->free_list = c->next;
		conn_free(c);
	}
	w->n_free = 0;
	return NULL;
}

/* ---- public --------------------------------------------------------- */

static void worker_destroy(struct worker *w)
{
	theap_free(&w->heap);
	loop_close(&w->loop);
	pthread_mutex_destroy(&w->mu);
}

int target_start(struct target **out, const struct target_plan *plan, const struct net_addr *listen,
                 unsigned threads)
{
	return target_start_tls(out, plan, listen, threads, NULL);
}

int target_start_tls(struct target **out, const struct target_plan *plan,
                     const struct net_addr *listen, unsigned threads, struct tls_ctx *tls)
{
	*out = NULL;
	if (!plan || !listen || threads == 0 || threads > TARGET_MAX_THREADS)
		return -EINVAL;
	struct target *t = calloc(1, sizeof *t);
	if (!t)
		return -ENOMEM;
	t->plan = plan;
	t->tls = tls;
	t->n = threads;
	atomic_init(&t->stop, false);
	atomic_init(&t->ticket, 0);
	atomic_init(&t->open, 0);
	for (int i = 0; i < 8; i++) {
		int s = err_status[i];
		char body[80];
		int bl = snprintf(body, sizeof body, "%d %s\n", s, target_reason(s));
		t->errs_len[i] = (size_t)snprintf(t->errs[i], sizeof t->errs[i],
		                                  "HTTP/1.1 %d %s\r\nContent-Type: text/plain\r\n"
		                                  "Content-Length: %d\r\nConnection: close\r\n\r\n%s",
		                                  s, target_reason(s), bl, body);
	}
	t->lfd = net_listen(listen, 4096, false);
	if (t->lfd < 0) {
		int rc = t->lfd;
		free(t);
		return rc;
	}
	t->port = net_local_port(t->lfd);
	t->w = calloc(threads, sizeof *t->w);
	if (!t->w) {
		close(t->lfd);
		free(t);
		return -ENOMEM;
	}
	int rc = 0;
	unsigned inited = 0;
	for (; inited < threads; inited++) {
		struct worker *w = &t->w[inited];
		w->t = t;
		w->idx = inited;
		theap_init(&w->heap);
		theap_node_init(&w->accept_tn);
		rng_seed(&w->rng, plan->seed ^ (0x9e3779b97f4a7c15ull * (inited + 1)));
		pthread_mutex_init(&w->mu, NULL);
		if ((rc = loop_init(&w->loop)) < 0) {
			pthread_mutex_destroy(&w->mu);
			break;
		}
		if ((rc = loop_add(&w->loop, t->lfd, EPOLLIN | EPOLLEXCLUSIVE, &w->listen_tag)) < 0) {
			worker_destroy(w);
			break;
		}
	}
	sigset_t block, old;
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGHUP);
	sigaddset(&block, SIGQUIT);
	sigaddset(&block, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &block, &old);
	t->t0_ns = clock_now_ns();
	for (unsigned i = 0; rc == 0 && i < threads; i++) {
		int e = pthread_create(&t->w[i].th, NULL, worker_main, &t->w[i]);
		if (e) {
			rc = -e;
			break;
		}
		t->w[i].started = true;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc < 0) {
		atomic_store_explicit(&t->stop, true, memory_order_release);
		for (unsigned i = 0; i < inited; i++) {
			if (t->w[i].started) {
				loop_wake(&t->w[i].loop);
				pthread_join(t->w[i].th, NULL);
			}
			worker_destroy(&t->w[i]);
		}
		close(t->lfd);
		free(t->w);
		free(t);
		return rc;
	}
	*out = t;
	return 0;
}

int target_port(const struct target *t) { return t->port; }

int target_cpu_ns(const struct target *t, uint64_t *cpu_ns)
{
	uint64_t sum = 0;
	for (unsigned i = 0; i < t->n; i++) {
		clockid_t cid;
		int e = pthread_getcpuclockid(t->w[i].th, &cid);
		if (e)
			return -e;
		struct timespec ts;
		if (clock_gettime(cid, &ts) < 0)
			return -errno;
		sum += (uint64_t)ts.tv_sec * NS_PER_S + (uint64_t)ts.tv_nsec;
	}
	*cpu_ns = sum;
	return 0;
}

void target_stats(const struct target *t, struct target_stats *st)
{
	memset(st, 0, sizeof *st);
	for (unsigned i = 0; i < t->n; i++) {
		const struct target_stats *s = &t->w[i].st;
		st->connections += __atomic_load_n(&s->connections, __ATOMIC_RELAXED);
		st->rejected += __atomic_load_n(&s->rejected, __ATOMIC_RELAXED);
		st->requests += __atomic_load_n(&s->requests, __ATOMIC_RELAXED);
		st->bad_requests += __atomic_load_n(&s->bad_requests, __ATOMIC_RELAXED);
		st->timeouts += __atomic_load_n(&s->timeouts, __ATOMIC_RELAXED);
		st->misbehaved += __atomic_load_n(&s->misbehaved, __ATOMIC_RELAXED);
	}
}

void target_stop(struct target *t)
{
	if (!t)
		return;
	atomic_store_explicit(&t->stop, true, memory_order_release);
	for (unsigned i = 0; i < t->n; i++)
		loop_wake(&t->w[i].loop);
	for (unsigned i = 0; i < t->n; i++)
		pthread_join(t->w[i].th, NULL);
	/* connections other threads handed over after their owner exited */
	for (unsigned i = 0; i < t->n; i++) {
		for (unsigned k = 0; k < t->w[i].inbox_n; k++)
			close(t->w[i].inbox[k]); /* handed over after the owner exited */
		t->w[i].inbox_n = 0;
		worker_destroy(&t->w[i]);
	}
	close(t->lfd);
	free(t->w);
	free(t);
}
