/* The embedded target server: one connection's life. Reading and parsing
 * request heads (the fast path for simple routes included), flushing the
 * output (slow bodies too), lingering before a close, the per-connection
 * timer (latency, timeouts, slow bodies), and TLS. */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "net/tls.h"
#include "target/server_int.h"

#define FREE_KEEP 256      /* idle connection structs kept for reuse per thread */
#define LINGER_SINK 4096   /* bytes drained per read while lingering */
/* TLS records already read hold requests epoll will not report: take in at
 * most this many rounds of them per event, so one busy connection cannot
 * starve the others on its thread. */
#define TLS_MORE_ROUNDS 64

static const char continue_100[] = "HTTP/1.1 100 Continue\r\n\r\n";

static void conn_rearm(struct conn *c);
static void conn_tls_more(struct conn *c);

void target_conn_close(struct conn *c)
{
	if (c->dead)
		return;
	struct worker *w = c->w;
	theap_cancel(&w->heap, &c->tn);
	if (c->h2)
		target_h2_close(c);
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

void target_conn_free(struct conn *c)
{
	c->w->freed += sizeof *c + c->in_cap + c->out_cap + c->dyn.cap;
	free(c->in);
	free(c->out);
	free(c->dyn.buf);
	free(c);
}

/* Free *buf when its capacity is over keep (what a recycled struct keeps). */
static void shrink(struct worker *w, char **buf, uint32_t *cap, uint32_t keep)
{
	if (*cap <= keep)
		return;
	w->freed += *cap;
	free(*buf);
	*buf = NULL;
	*cap = 0;
}

/* Recycle the connections closed during this iteration: kept with their
 * first-size buffers (a burst of large ones does not stay pinned). */
void target_conn_reap(struct worker *w)
{
	while (w->dead) {
		struct conn *c = w->dead;
		w->dead = c->next;
		if (w->n_free < FREE_KEEP) {
			shrink(w, &c->in, &c->in_cap, IN_INIT);
			shrink(w, &c->out, &c->out_cap, OUT_INIT);
			shrink(w, &c->dyn.buf, &c->dyn.cap, TARGET_DYN_INIT);
			c->next = w->free_list;
			w->free_list = c;
			w->n_free++;
		} else {
			target_conn_free(c);
		}
	}
}

void target_conn_new(struct worker *w, int fd)
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
	char *in = c->in, *out = c->out;
	uint32_t in_cap = c->in_cap, out_cap = c->out_cap;
	struct target_dyn dyn = {c->dyn.buf, 0, c->dyn.cap};
	memset(c, 0, sizeof *c);
	c->in = in;
	c->in_cap = in_cap;
	c->out = out;
	c->out_cap = out_cap;
	c->dyn = dyn;
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
		target_conn_close(c);
		return;
	}
	int one = 1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	if (w->t->tls && tls_conn_new(&c->tls, w->t->tls, fd, NULL, NULL) < 0) {
		target_conn_close(c);
		return;
	}
	stat_inc(&w->st.connections);
	conn_rearm(c);
}

/* Parse and answer what is in the input buffer until blocked. Returns true
 * if it stopped only to let the output drain. */
static bool conn_run(struct conn *c)
{
	struct worker *w = c->w;
	const struct target_plan *plan = w->t->plan;
	bool output_bound = false;
	c->need_more = false;
	if (w->t->h2 && !c->proto_known && !c->h2 && !c->tls && c->in_len > c->in_off) {
		/* h2c: prior knowledge is told by the client preface */
		uint32_t k = c->in_len - c->in_off;
		k = k < H2_PREFACE_LEN ? k : H2_PREFACE_LEN;
		if (memcmp(c->in + c->in_off, H2_PREFACE, k) != 0) {
			c->proto_known = true;
		} else if (k < H2_PREFACE_LEN) {
			/* a preface in pieces: not a request to parse */
			if (!c->req_start_ns)
				c->req_start_ns = w->now;
			return false;
		} else if (target_h2_start(c) < 0) {
			target_conn_close(c);
			return false;
		}
	}
	if (c->h2) {
		int r = target_h2_run(c);
		if (r < 0)
			target_conn_close(c);
		return r > 0;
	}
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
			if (!target_execute(c))
				target_conn_close(c);
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
			target_emit_canned(c, c->req.error_status);
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
		    target_out_reserve(c, sizeof continue_100 - 1))
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
			if (!target_out_reserve(c, n)) {
				target_conn_close(c);
				return false;
			}
			out_put(c, r->wire, n);
			continue;
		}
		target_prepare(c, rt, query, qlen);
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
				target_conn_close(c);
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
			target_conn_close(c);
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
		target_conn_close(c);
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
	} else if (c->state == C_READ && !out_pending(c) && !c->h2s.n_timed) {
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
			target_conn_close(c);
}

/* After any activity: run, flush, close or linger, update interest and
 * deadline. */
static void conn_settle(struct conn *c);

void target_conn_settle_dirty(struct worker *w)
{
	while (w->h2_dirty) {
		struct conn *c = w->h2_dirty;
		w->h2_dirty = c->dirty_next;
		c->h2_dirty = false;
		if (!c->dead) {
			conn_settle(c);
			conn_tls_more(c);
		}
	}
}

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
	    !c->closing && !c->h2s.n) {
		/* the client is done sending: everything complete it sent is
		 * answered, and an incomplete request never will be */
		target_conn_close(c);
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
			target_conn_close(c);
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
		char sink[LINGER_SINK];
		ssize_t n = read(c->fd, sink, sizeof sink);
		if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
			target_conn_close(c);
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
				target_conn_close(c);
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
			target_conn_close(c);
			return;
		}
	} else {
		n = read(c->fd, c->in + c->in_len, c->in_cap - c->in_len);
	}
	if (n > 0) {
		c->in_len += (uint32_t)n;
		if (!c->h2) /* HTTP/2: a request's frames only (h2.c), not PINGs */
			c->last_io_ns = w->now;
	} else if (n == 0) {
		c->peer_eof = true;
	} else if (errno != EAGAIN && errno != EINTR) {
		target_conn_close(c);
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
		if (c->w->t->h2 && tls_alpn_h2(c->tls) && target_h2_start(c) < 0) {
			target_conn_close(c);
			return false;
		}
		return true;
	}
	if (rc == TLS_FAILED) {
		target_conn_close(c);
		return false;
	}
	uint32_t want = rc == TLS_WANT_WRITE ? EPOLLIN | EPOLLOUT : EPOLLIN;
	if (want != c->events) {
		if (loop_mod(&c->w->loop, c->fd, want, c) < 0) {
			target_conn_close(c);
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
	for (int i = 0; i < TLS_MORE_ROUNDS && !c->dead && c->tls && c->tls_ready && (c->events & EPOLLIN) &&
	                c->state != C_LINGER && tls_pending(c->tls);
	     i++) {
		conn_read(c);
		if (c->dead)
			return;
		conn_settle(c);
	}
}

void target_conn_event(struct conn *c, uint32_t ev)
{
	if (ev & (EPOLLERR | EPOLLHUP)) {
		/* reset, or both directions shut: nothing can be answered */
		target_conn_close(c);
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

void target_conn_timer(struct conn *c)
{
	struct worker *w = c->w;
	const struct target_plan *p = w->t->plan;
	uint64_t now = w->now;
	if (c->state == C_LINGER) {
		if (now >= c->linger_end_ns) {
			target_conn_close(c);
			return;
		}
		conn_rearm(c);
		return;
	}
	if (c->state == C_WAIT && now >= c->ready_ns) {
		if (!target_emit(c)) {
			target_conn_close(c);
			return;
		}
		c->state = C_READ;
	}
	if (c->slow && c->slow_budget == 0 && now >= c->slow_next_ns) {
		c->slow_budget = c->rt ? c->rt->mis.slow_bytes : SIZE_MAX;
		c->slow_next_ns = now + (c->rt ? c->rt->mis.slow_every_ns : 0);
	}
	if (c->write_blocked && now >= c->blocked_since_ns + p->idle_timeout_ns) {
		stat_inc(&w->st.timeouts);
		target_conn_close(c);
		return;
	}
	if (c->req_start_ns && now >= c->req_start_ns + p->request_timeout_ns) {
		stat_inc(&w->st.timeouts);
		c->req_start_ns = 0;
		if (out_pending(c)) {
			target_conn_close(c);
			return;
		}
		c->state = C_READ;
		target_emit_canned(c, 408);
	} else if (!c->req_start_ns && c->state == C_READ && !out_pending(c) && !c->closing &&
		   !c->h2s.n_timed && now >= c->last_io_ns + p->idle_timeout_ns) {
		stat_inc(&w->st.timeouts);
		target_conn_close(c);
		return;
	}
	if (c->tls && !c->tls_ready) {
		conn_rearm(c); /* still in the handshake: its interest stays */
		return;
	}
	conn_settle(c);
	conn_tls_more(c);
}
