/* pacer — engine: HTTP/1.1 over a connection's transport (engine_int.h
 * draws the whole engine). One request at a time on a connection, not
 * pipelined: write it, parse the response (http/h1.h), then keep the
 * connection for the next request or close it.
 *
 * HTTP/1.1 has no request ids: a response is the answer to the request
 * outstanding, so bytes a server sends unasked could be credited to a
 * request. pacer credits none of a connection's responses that bytes
 * nobody asked for surround: bytes that came before the request was
 * written (the kernel's stamp says so), or that follow a response before
 * the next request is written (in the same read; or, after a connection's
 * first response, which a server may have sent on accept before it read
 * anything, within H1_SETTLE_NS, while the connection waits before its next
 * request). Such a request counts as `parse` (which response answered it
 * cannot be told) and the connection closes (closed_stray). */
#include <errno.h>

#include "engine/engine_int.h"

/* How long a connection's first response waits to be credited (and the
 * connection to take its next request), so that a response that follows it
 * unasked is seen: a server that answers on accept, before it read the
 * request, sends the real answer this soon after. Once per connection. */
#define H1_SETTLE_NS (1 * NS_PER_MS)

static void h1_start(struct worker *w, struct conn *c, uint64_t now)
{
	phase_of(w, c->connect_start_ns)->host[c->host].conns_h1++;
	eng_conn_connected(w, c);
	list_remove(&w->timed, c);
	eng_conn_want(w, c, EV_IN);
	eng_conn_idle(w, c, now);
}

/* Did the bytes of a read (stamped rx_rt_ns) reach the socket before c's
 * request was written? write_ns is read before the write, so a true
 * response never does. The margin covers the realtime-to-monotonic mapping
 * (its error, doubled) and the kernel's stamp granularity; a stray
 * response that precedes the request by less is read as its answer (the
 * real one then comes as a stray and closes the connection). */
#define STRAY_MARGIN_NS (20 * NS_PER_US)
static bool came_before_send(const struct worker *w, const struct conn *c, uint64_t rx_rt_ns)
{
	uint64_t margin = STRAY_MARGIN_NS + 2 * w->rt_off_err_ns;
	return rx_rt_ns > w->rt_off_ns && rx_rt_ns - w->rt_off_ns + margin < c->write_ns;
}

/* Write what is left of c's request. False: the write failed (counted, c
 * closed). */
static bool h1_write(struct worker *w, struct conn *c)
{
	const struct engine_req *rq = c->req;
	while (c->wr_off < rq->len) {
		ssize_t n = c->xport->tx(w, c, rq->buf + c->wr_off, rq->len - c->wr_off);
		if (n > 0) {
			c->wr_off += (size_t)n;
			phase_of(w, c->sched_ns)->bytes_out += (uint64_t)n;
			continue;
		}
		if (n == -EAGAIN) {
			c->state = CS_WRITING; /* the transport registered what it waits for */
			return true;
		}
		eng_count_error(w, c, ERRK_WRITE, clock_now_ns());
		eng_conn_close(w, c);
		return false;
	}
	eng_conn_want(w, c, EV_IN);
	c->state = CS_READING;
	return true;
}

static void h1_send(struct worker *w, struct conn *c, uint64_t sched_ns,
		    const struct engine_req *rq, bool lagged, uint32_t flow)
{
	uint64_t now = clock_now_ns();
	list_remove(&w->hp[c->host].idle, c);
	struct phase_stats *ph = phase_of(w, sched_ns);
	ph->sent++;
	ph->lagged_sent += lagged;
	c->lagged = lagged;
	ph->host[c->host].sent_h1++;
	live_add(&w->live.sent, 1);
	if (w->e->cfg.open_loop)
		hist_record(&ph->timing[TIM_SEND_LAG], now > sched_ns ? now - sched_ns : 0);
	c->sched_ns = sched_ns;
	c->write_ns = now;
	c->deadline_ns = now + w->e->cfg.timeout_ns;
	c->req = rq ? rq : &w->e->cfg.reqs[pick_req(w)];
	c->flow = flow;
	c->wr_off = 0;
	c->got_byte = false;
	h1_resp_init(&c->resp, c->req->head);
	if (w->capture)
		h1_resp_capture(&c->resp, &c->cap);
	c->state = CS_READING; /* h1_write makes it CS_WRITING if needed */
	list_push_tail(&w->timed, c);
	h1_write(w, c);
}

/* May c, its response complete, take another request (the server did not
 * say close nor close its side, the request was written whole, no
 * --no-keepalive)? */
static bool h1_keep(const struct worker *w, const struct conn *c)
{
	return c->resp.keep_alive && c->state == CS_READING && !c->peer_closed &&
	       !w->e->cfg.no_keepalive;
}

/* The response is counted: keep the connection for the next request, or
 * close it (the server said so or closed its side, or --no-keepalive). */
static void h1_done(struct worker *w, struct conn *c, uint64_t now)
{
	c->answered = true;
	if (h1_keep(w, c)) {
		eng_conn_idle(w, c, now);
		return;
	}
	if (!c->resp.keep_alive || c->peer_closed)
		phase_of(w, c->sched_ns)->closed_by_server++;
	eng_conn_release(w, c);
}

/* Bytes nobody asked for around c's response: the request is not credited
 * with any (`parse`: which one answered it cannot be told), and the
 * connection, whose responses cannot be trusted, closes (closed_stray). */
static void h1_stray(struct worker *w, struct conn *c, uint64_t now)
{
	phase_of(w, now)->closed_stray++;
	eng_count_error(w, c, ERRK_PARSE, now);
	eng_conn_release(w, c);
}

/* c's first response (arrived at c->done_ns) settled: credit it, and the
 * connection takes requests. */
static void h1_settled(struct worker *w, struct conn *c)
{
	c->state = CS_READING;               /* as when it arrived */
	eng_conn_complete(w, c, c->done_ns); /* off w->h1_settling, then h1_done */
}

/* The first responses whose H1_SETTLE_NS have passed are credited (now
 * UINT64_MAX: all, the load is over); the time the next one's do. */
static uint64_t h1_timers(struct worker *w, uint64_t now)
{
	struct list *l = &w->h1_settling;
	while (l->head && l->head->done_ns + H1_SETTLE_NS <= now)
		h1_settled(w, l->head);
	return l->head ? l->head->done_ns + H1_SETTLE_NS : UINT64_MAX;
}

static void h1_readable(struct worker *w, struct conn *c)
{
	for (;;) {
		uint64_t rx_rt;
		ssize_t n = c->xport->rx(w, c, w->rbuf, READ_BUF_CAP, &rx_rt);
		uint64_t now = clock_now_ns();
		if (!c->rd_wants_write && (c->ev & EPOLLOUT) && c->state != CS_WRITING)
			eng_conn_want(w, c, EV_IN); /* a read that wanted a write got it */
		if (n == -EAGAIN)
			return; /* TLS: also records that were not data (session tickets) */
		if (c->state == CS_SETTLE) {
			/* after the connection's first response, before its next
			 * request: bytes nobody asked for, or the end */
			if (n > 0) {
				h1_stray(w, c, now);
			} else {
				c->peer_closed = true; /* closed by the server, after its answer */
				h1_settled(w, c);
			}
			return;
		}
		if (c->state == CS_IDLE) {
			/* The server closed an idle keep-alive connection, or sent
			 * bytes nobody asked for (a second response: HTTP/1.1 is not
			 * pipelined here) and pacer closes it. No request was
			 * outstanding, so no request error is counted. */
			struct phase_stats *ip = phase_of(w, now);
			if (n > 0)
				ip->closed_stray++;
			else
				ip->closed_by_server++;
			eng_conn_release(w, c);
			return;
		}
		if (n <= 0) {
			if (n == 0 && c->got_byte && h1_resp_eof(&c->resp) == 0) {
				eng_conn_complete(w, c, now); /* close-delimited body: done, conn closes */
				return;
			}
			enum err_kind k = (n == 0 && !c->got_byte) ? ERRK_CLOSED : ERRK_READ;
			eng_count_error(w, c, k, now);
			eng_conn_release(w, c);
			return;
		}
		struct phase_stats *ph = phase_of(w, c->sched_ns);
		ph->bytes_in += (uint64_t)n;
		if (!c->got_byte && c->xport->exact_stamps && came_before_send(w, c, rx_rt)) {
			/* Bytes the server sent before this request was written:
			 * a response nobody asked for, which would otherwise be
			 * credited to this request. */
			h1_stray(w, c, now);
			return;
		}
		uint64_t at = eng_arrival_ns(w, rx_rt, c->got_byte ? c->first_byte_ns : c->write_ns, now);
		if (!c->got_byte) {
			c->got_byte = true;
			c->first_byte_ns = at;
		}
		ssize_t used = h1_resp_feed(&c->resp, w->rbuf, (size_t)n);
		if (used < 0) {
			eng_count_error(w, c, ERRK_PARSE, now);
			eng_conn_release(w, c);
			return;
		}
		if (h1_resp_done(&c->resp)) {
			if ((size_t)used < (size_t)n) {
				/* bytes beyond the response: we never pipeline, so the
				 * server sent a response (or more) unasked */
				h1_stray(w, c, now);
			} else if (!c->answered && h1_keep(w, c)) {
				/* a connection's first response: credited once
				 * H1_SETTLE_NS showed nothing unasked follows it */
				list_remove(&w->timed, c);
				c->state = CS_SETTLE;
				c->done_ns = at;
				list_push_tail(&w->h1_settling, c);
			} else {
				eng_conn_complete(w, c, at);
			}
			return;
		}
		if ((size_t)n < READ_BUF_CAP && !c->xport->pending(c))
			return; /* level-triggered: epoll tells us when there is more */
	}
}

static void h1_event(struct worker *w, struct conn *c, uint32_t events)
{
	c->peer_closed = (events & EPOLLRDHUP) != 0;
	/* a crossed transport (TLS): a write may wait for readability, a read
	 * for writability */
	uint32_t wr_ev = c->xport->crossed ? EPOLLOUT | EPOLLIN : EPOLLOUT;
	if (c->state == CS_WRITING && (events & wr_ev)) {
		if (!h1_write(w, c))
			return;
	}
	if ((events & (EPOLLIN | EPOLLERR | EPOLLHUP)) ||
	    (c->xport->crossed && (c->ev & EPOLLOUT) && c->state != CS_WRITING))
		h1_readable(w, c);
}

static uint32_t h1_in_flight(const struct conn *c)
{
	return c->state == CS_READING || c->state == CS_WRITING;
}

const struct eng_proto eng_proto_h1 = {
	.name = "http/1.1",
	.start = h1_start,
	.send = h1_send,
	.event = h1_event,
	.done = h1_done,
	.close = eng_conn_release,
	.in_flight = h1_in_flight,
	.timers = h1_timers,
	.connect_timeout_reason = "the connection did not become ready within --timeout",
};
