/* pacer — engine: HTTP/2 connections and their streams, over libnghttp2
 * (engine_int.h draws the whole engine): the protocol eng_proto_h2.
 *
 * A connection (struct conn in w->conns) carries an nghttp2 client session
 * fed through mem_recv/mem_send over its transport (a plain socket: h2c, or
 * TLS with ALPN h2). It counts as connecting until the server's
 * first SETTINGS (a server that does not speak HTTP/2 fails there: errors.
 * protocol, with connect backoff), then sits on its host's idle list while
 * it has a free stream, so that a due request takes a free stream of an open
 * connection before a new connection is opened.
 *
 * Each stream is a struct conn record of its own (from a per-worker pool,
 * made on demand and reused): CS_READING and on w->timed from the moment it
 * is submitted, with the request's scheduled, write and first-byte times,
 * its status and the capture rules look at. Completion goes through the
 * same code as HTTP/1.1 (eng_conn_complete), so request tables, rules,
 * outcomes and timings are unchanged; a timeout resets the stream (CANCEL)
 * and keeps the connection.
 *
 * Requests the server did not process — above a GOAWAY's last stream id,
 * reset with REFUSED_STREAM, or never sent because the connection was
 * going away — are put back in their host's backlog with their first
 * scheduled time (latency keeps counting) and counted in h2.retried, and
 * taken out of sent, so each request is counted as sent once. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <nghttp2/nghttp2.h>

#include "engine/engine_int.h"
#include "http/h2req.h"
#include "util/err.h"

#define H2_HEADER_CAP H1_HEADERS_CAP /* bytes of one response's header fields */

struct h2_conn {
	nghttp2_session *ng;
	struct worker *w;
	struct conn *c;
	struct conn **act;   /* streams in flight, n_act of them (swap-removed) */
	uint32_t n_act;
	uint32_t limit;      /* streams allowed: min(max_streams, the server's) */
	uint32_t cap;        /* max_streams: the size of act */
	const uint8_t *out;  /* bytes mem_send returned, out_len not yet written */
	size_t out_len;
	bool ready;          /* the server's SETTINGS arrived */
	bool going;          /* GOAWAY received (or sent): no new streams */
	bool failed;         /* a connection error: count errors.protocol once */
	bool used;           /* a stream was opened on it (until then its connect has not
	                      * succeeded: the host's connect_fails stands) */
	bool dirty;          /* on its host's h2_dirty list (requests not yet written) */
	uint64_t rx_rt;      /* the kernel's stamp of the bytes being fed (0: none), so that
	                      * streams read late are timed when their bytes came */
	struct h2_conn *dirty_next;
	char why[RESULT_TLS_REASON_CAP]; /* pacer's GOAWAY with an error code: what it said, the
	                                  * reason of the protocol failure that follows */
};

/* ---- requests as header fields ------------------------------------------- */

/* Check cfg's HTTP/2 settings against its hosts and turn every request into
 * header fields (e->h2reqs). 0 (also over HTTP/1.1 and HTTP/3: nothing to do),
 * -EINVAL, -ENOMEM. */
static int h2_prepare(struct engine *e)
{
	const struct engine_cfg *cfg = &e->cfg;
	if (cfg->http == ENGINE_H1 || cfg->http == ENGINE_H3)
		return 0;
	if (cfg->max_streams > ENGINE_H2_STREAMS_MAX)
		return -EINVAL;
	for (uint32_t h = 0; h < e->n_hosts; h++)
		if ((cfg->http == ENGINE_H2C) == (e->hosts[h].tls != NULL))
			return -EINVAL; /* h2c is cleartext, --http2 TLS */
	e->h2reqs = calloc(cfg->n_reqs, sizeof *e->h2reqs);
	if (!e->h2reqs)
		return -ENOMEM;
	for (size_t i = 0; i < cfg->n_reqs; i++) {
		char err[160];
		const struct engine_req *rq = &cfg->reqs[i];
		int rc = h2req_from_h1(&e->h2reqs[i], rq->buf, rq->len,
				       e->hosts[rq->host].tls ? "https" : "http", err, sizeof err);
		if (rc)
			return rc;
	}
	return 0;
}

static void h2_release(struct engine *e)
{
	if (!e->h2reqs)
		return;
	for (size_t i = 0; i < e->cfg.n_reqs; i++)
		h2req_free(&e->h2reqs[i]);
	free(e->h2reqs);
	e->h2reqs = NULL;
}

/* ---- stream records ---------------------------------------------------------- */

static struct conn *stream_get(struct worker *w)
{
	struct conn *s = w->h2_free;
	if (s) {
		w->h2_free = s->next;
		return s;
	}
	if (w->h2_all_len == w->h2_all_cap) {
		size_t n = w->h2_all_cap ? 2 * w->h2_all_cap : 64;
		struct conn **a = realloc(w->h2_all, n * sizeof *a);
		if (!a)
			return NULL;
		w->h2_all = a;
		w->h2_all_cap = n;
	}
	s = calloc(1, sizeof *s);
	if (!s)
		return NULL;
	s->fd = -1;
	s->flow = ENG_FLOW_NONE;
	s->cap.headers = w->cap_headers;
	s->cap.body_cap = w->cap_body;
	w->h2_all[w->h2_all_len++] = s;
	return s;
}

static void h2_worker_free(struct worker *w)
{
	for (size_t i = 0; i < w->h2_all_len; i++) {
		h1_capture_free(&w->h2_all[i]->cap);
		free(w->h2_all[i]);
	}
	free(w->h2_all);
	w->h2_all = NULL;
	w->h2_free = NULL;
	w->h2_all_len = w->h2_all_cap = 0;
}

/* The connection can take another stream: on its host's idle list. */
static void conn_offer(struct worker *w, struct conn *c, uint64_t now)
{
	struct h2_conn *h = c->h2;
	struct list *idle = &w->hp[c->host].idle;
	if (c->state != CS_IDLE)
		return; /* connecting: on w->timed until the server's SETTINGS */
	bool room = !h->going && h->n_act < h->limit;
	if (room && !c->in) {
		c->idle_ns = now;
		list_push_tail(idle, c);
	} else if (!room && c->in == idle) {
		list_remove(idle, c);
	}
}

/* Take stream s out of its connection's active set and return its record
 * (it is off w->timed already, or taken off here). */
static void stream_release(struct worker *w, struct conn *s)
{
	struct conn *c = s->h2_parent;
	struct h2_conn *h = c->h2;
	if (s->in)
		list_remove(s->in, s);
	if (h) {
		uint32_t i = s->h2_slot;
		h->act[i] = h->act[--h->n_act];
		h->act[i]->h2_slot = i;
		if (h->ng && s->h2_id > 0)
			nghttp2_session_set_stream_user_data(h->ng, s->h2_id, NULL);
	}
	s->state = CS_FREE;
	s->h2_parent = NULL;
	if (s->h2_fields) { /* a flow's request, made into fields for this stream */
		h2req_free(s->h2_fields);
		free(s->h2_fields);
		s->h2_fields = NULL;
	}
	s->flow = ENG_FLOW_NONE;
	s->next = w->h2_free;
	w->h2_free = s;
}

/* The server did not process s: back to its host's backlog at its first
 * scheduled time, counted as retried and no longer as sent. A full backlog,
 * or H2_RETRY_RUN_MAX refusals in a row from the host: it is counted as
 * reset instead (never lost). */
static void stream_retry(struct worker *w, struct conn *s, uint64_t now)
{
	struct phase_stats *ph = phase_of(w, s->sched_ns);
	uint32_t r = s->flow != ENG_FLOW_NONE ? s->flow | QE_FLOW
					      : (uint32_t)(s->req - w->e->cfg.reqs);
	struct hpool *p = &w->hp[s->host];
	if (p->h2_refusals < H2_RETRY_RUN_MAX &&
	    q_push(w, s->host, s->sched_ns, r | (s->lagged ? QE_LAGGED : 0))) {
		p->h2_refusals++;
		ph->sent--;
		ph->lagged_sent -= s->lagged;
		ph->h2.retried++;
		s->flow = ENG_FLOW_NONE; /* it waits in the backlog, its flow with it */
	} else {
		eng_count_error(w, s, ERRK_RESET, now);
	}
	stream_release(w, s);
}

/* The connection failed as HTTP/2: errors.protocol, once per connection,
 * with its reason among the phase's failure reasons (tls.failure_reasons):
 * what pacer's GOAWAY said when nghttp2 ended the session on an error of
 * the server's, else why. */
static void h2_count_failure(struct worker *w, struct h2_conn *h, const char *why, uint64_t now)
{
	if (h->failed)
		return;
	h->failed = true;
	struct phase_stats *ph = eng_conn_error(w, h->c->host, ERRK_PROTOCOL, now);
	phase_stats_tls_reason(ph, h->why[0] ? h->why : why);
}

/* Up to cap - 1 bytes of p[0..n) as printable ASCII (others as '?'): words a
 * peer chose, fit for a report. */
static void printable(char *out, size_t cap, const uint8_t *p, size_t n)
{
	size_t k = 0;
	for (; k < n && k + 1 < cap; k++)
		out[k] = p[k] >= 0x20 && p[k] < 0x7f ? (char)p[k] : '?';
	if (cap)
		out[k] = '\0';
}

/* ---- nghttp2 callbacks ------------------------------------------------------- */

static struct conn *stream_of(nghttp2_session *ng, int32_t id)
{
	struct conn *s = id > 0 ? nghttp2_session_get_stream_user_data(ng, id) : NULL;
	return s && s->state == CS_READING ? s : NULL;
}

static int on_begin_headers(nghttp2_session *ng, const nghttp2_frame *f, void *ud)
{
	struct h2_conn *h = ud;
	struct conn *s = stream_of(ng, f->hd.stream_id);
	if (s && !s->got_byte) {
		s->got_byte = true;
		s->first_byte_ns = eng_arrival_ns(h->w, h->rx_rt, s->write_ns, clock_now_ns());
	}
	return 0;
}

static int on_header(nghttp2_session *ng, const nghttp2_frame *f, const uint8_t *name,
		     size_t nl, const uint8_t *value, size_t vl, uint8_t flags, void *ud)
{
	(void)flags;
	(void)ud;
	struct conn *s = stream_of(ng, f->hd.stream_id);
	if (!s || f->hd.type != NGHTTP2_HEADERS)
		return 0;
	s->resp.header_bytes += nl + vl + 32;
	if (s->resp.header_bytes > H2_HEADER_CAP)
		return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE; /* resets the stream */
	if (nl == 7 && memcmp(name, ":status", 7) == 0) {
		int st = 0;
		for (size_t i = 0; i < vl && i < 4; i++)
			st = (value[i] >= '0' && value[i] <= '9') ? st * 10 + (value[i] - '0') : -1000;
		if (vl != 3 || st < 100)
			return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
		if (st < 200) { /* an interim response: the final one follows */
			s->resp.interim += s->resp.interim < UINT32_MAX;
			if (s->resp.cap)
				h1_capture_clear(s->resp.cap);
			st = 0;
		}
		s->resp.status = st;
		return 0;
	}
	if (s->resp.cap && s->resp.status && name[0] != ':')
		h1_capture_add_field(s->resp.cap, (const char *)name, nl, (const char *)value, vl);
	return 0;
}

static int on_data(nghttp2_session *ng, uint8_t flags, int32_t id, const uint8_t *data,
		   size_t len, void *ud)
{
	(void)flags;
	(void)ud;
	struct conn *s = stream_of(ng, id);
	if (!s)
		return 0;
	s->resp.body_bytes += len;
	if (s->resp.cap)
		h1_capture_add_body(s->resp.cap, (const char *)data, len);
	return 0;
}

static int on_frame_recv(nghttp2_session *ng, const nghttp2_frame *f, void *ud)
{
	struct h2_conn *h = ud;
	struct worker *w = h->w;
	uint64_t now = clock_now_ns();
	if (f->hd.type == NGHTTP2_SETTINGS && !(f->hd.flags & NGHTTP2_FLAG_ACK)) {
		uint32_t srv = nghttp2_session_get_remote_settings(
			ng, NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS);
		h->limit = srv < h->cap ? srv : h->cap;
		h->ready = true; /* h2_event finishes connecting */
	} else if (f->hd.type == NGHTTP2_GOAWAY) {
		struct phase_stats *ph = phase_of(w, now);
		ph->h2.goaway++;
		h->going = true;
		if (f->goaway.error_code != NGHTTP2_NO_ERROR && !h->failed) {
			char dbg[80], why[RESULT_TLS_REASON_CAP];
			printable(dbg, sizeof dbg, f->goaway.opaque_data,
				  f->goaway.opaque_data_len);
			snprintf(why, sizeof why,
				 "the server ended an HTTP/2 connection with GOAWAY %s%s%s",
				 nghttp2_http2_strerror(f->goaway.error_code), dbg[0] ? ": " : "",
				 dbg);
			h2_count_failure(w, h, why, now);
		}
	} else if ((f->hd.type == NGHTTP2_HEADERS || f->hd.type == NGHTTP2_DATA) &&
		   (f->hd.flags & NGHTTP2_FLAG_END_STREAM)) {
		/* the response ended whole (nghttp2 checked its DATA against its
		 * content-length: a mismatch resets the stream, PROTOCOL_ERROR) */
		struct conn *s = stream_of(ng, f->hd.stream_id);
		if (s)
			s->h2_end = true;
	} else if (f->hd.type == NGHTTP2_RST_STREAM) {
		uint32_t code = f->rst_stream.error_code;
		struct phase_stats *ph = phase_of(w, now);
		ph->h2.rst[code < H2_RST_CODES ? code : H2_RST_CODES - 1]++;
		ph->h2.refused += code == NGHTTP2_REFUSED_STREAM;
		struct conn *s = stream_of(ng, f->hd.stream_id);
		if (s)
			s->h2_rst = true;
	}
	return 0;
}

static int on_stream_close(nghttp2_session *ng, int32_t id, uint32_t code, void *ud)
{
	struct h2_conn *h = ud;
	struct worker *w = h->w;
	struct conn *s = stream_of(ng, id);
	if (!s)
		return 0;
	uint64_t now = clock_now_ns();
	if (code == NGHTTP2_NO_ERROR && s->resp.status && s->h2_end) {
		now = eng_arrival_ns(w, h->rx_rt, s->got_byte ? s->first_byte_ns : s->write_ns, now);
		s->resp.keep_alive = true;
		w->hp[s->host].h2_refusals = 0;
		s->state = CS_IDLE;           /* done: h2_done releases, no reset */
		eng_conn_complete(w, s, now); /* releases the stream */
	} else if (code == NGHTTP2_REFUSED_STREAM) {
		stream_retry(w, s, now); /* not processed: a GOAWAY's or the server's refusal */
	} else {
		/* reset by the server before its response ended (whatever the
		 * code, NO_ERROR too: the body is cut short), or by nghttp2 for a
		 * malformed response (a DATA total that is not its content-length,
		 * a bad header: PROTOCOL_ERROR) or by pacer (a header block over
		 * the cap) */
		eng_count_error(w, s, s->h2_rst ? ERRK_RESET : ERRK_PARSE, now);
		stream_release(w, s);
	}
	return 0;
}

static int on_frame_not_send(nghttp2_session *ng, const nghttp2_frame *f, int lib_error, void *ud)
{
	(void)lib_error;
	struct h2_conn *h = ud;
	if (f->hd.type != NGHTTP2_HEADERS)
		return 0;
	struct conn *s = stream_of(ng, f->hd.stream_id);
	if (s)
		stream_retry(h->w, s, clock_now_ns()); /* never sent: going away */
	return 0;
}

/* pacer ends the session with a GOAWAY with an error code: nghttp2 found
 * the server breaking HTTP/2 (a bad SETTINGS value, a frame where it may
 * not be, a flood, a compression error), and its words in the GOAWAY's
 * debug data ("SETTINGS: invalid SETTINGS_ENBLE_PUSH") are the reason of
 * the protocol failure counted when the session is over. */
static int on_frame_send(nghttp2_session *ng, const nghttp2_frame *f, void *ud)
{
	(void)ng;
	struct h2_conn *h = ud;
	if (f->hd.type != NGHTTP2_GOAWAY || f->goaway.error_code == NGHTTP2_NO_ERROR || h->why[0])
		return 0;
	char dbg[96];
	printable(dbg, sizeof dbg, f->goaway.opaque_data, f->goaway.opaque_data_len);
	snprintf(h->why, sizeof h->why,
		 "the server broke HTTP/2 (pacer ended the connection with GOAWAY %s): %s",
		 nghttp2_http2_strerror(f->goaway.error_code),
		 dbg[0] ? dbg : "no detail from nghttp2");
	return 0;
}

/* A request body, from the encoded request (no copy). */
static ssize_t read_body(nghttp2_session *ng, int32_t id, uint8_t *buf, size_t len,
			 uint32_t *flags, nghttp2_data_source *src, void *ud)
{
	(void)ng;
	(void)id;
	struct conn *s = src->ptr;
	const struct engine *e = ((struct h2_conn *)ud)->w->e;
	const struct h2req *hr = s->h2_fields ? s->h2_fields : &e->h2reqs[s->req - e->cfg.reqs];
	size_t left = hr->body_len - s->wr_off;
	size_t n = left < len ? left : len;
	memcpy(buf, hr->body + s->wr_off, n);
	s->wr_off += n;
	if (s->wr_off == hr->body_len)
		*flags |= NGHTTP2_DATA_FLAG_EOF;
	return (ssize_t)n;
}

static nghttp2_session_callbacks *cbs;
static pthread_once_t cbs_once = PTHREAD_ONCE_INIT;

static void cbs_init(void)
{
	if (nghttp2_session_callbacks_new(&cbs))
		return;
	nghttp2_session_callbacks_set_on_begin_headers_callback(cbs, on_begin_headers);
	nghttp2_session_callbacks_set_on_header_callback(cbs, on_header);
	nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cbs, on_data);
	nghttp2_session_callbacks_set_on_frame_recv_callback(cbs, on_frame_recv);
	nghttp2_session_callbacks_set_on_stream_close_callback(cbs, on_stream_close);
	nghttp2_session_callbacks_set_on_frame_not_send_callback(cbs, on_frame_not_send);
	nghttp2_session_callbacks_set_on_frame_send_callback(cbs, on_frame_send);
}

/* ---- connections ----------------------------------------------------------------- */

/* Whether c, ready, never took a request though it was needed: requests
 * of its host wait, or it is the probe of a host whose connects fail. */
static bool h2_needed_unused(const struct worker *w, const struct conn *c)
{
	const struct hpool *p = &w->hp[c->host];
	return c->h2->ready && !c->h2->used && (p->q_len || p->connect_fails);
}

/* The server ended c (GOAWAY, or a close) after its SETTINGS but before c
 * took any of the requests waiting for its host (or, as a probe, any at
 * all): a failed connect, counted once as errors.protocol and backed off
 * like one, so that a server that sends GOAWAY at once (or closes) is not
 * reconnected to without end while nothing is sent. An unused connection
 * closed while nothing waits (an idle timeout) is no failure. */
static bool h2_wasted(struct worker *w, struct conn *c, uint64_t now)
{
	struct h2_conn *h = c->h2;
	if (!h2_needed_unused(w, c))
		return false;
	h2_count_failure(w, h,
			 "the server ended an HTTP/2 connection (GOAWAY or close) before it "
			 "took a request",
			 now);
	eng_connect_failed(w, c->host, now);
	return true;
}

/* The connection ended with an HTTP/2 (or transport) failure: counted once
 * as errors.protocol when `why` (its reason) is not NULL; before the
 * server's SETTINGS, or before it took a request that waited (h2_wasted),
 * it is a failed connect (backoff). Its streams in flight are counted by
 * the close. */
static void h2_fail(struct worker *w, struct conn *c, const char *why, uint64_t now)
{
	struct h2_conn *h = c->h2;
	if (!h2_wasted(w, c, now)) {
		if (why)
			h2_count_failure(w, h, why, now);
		if (!h->ready)
			eng_connect_failed(w, c->host, now);
	}
	eng_conn_close(w, c);
}

/* The reasons of a failure before the server's SETTINGS, and of one for
 * want of memory. */
#define WHY_NO_SETTINGS "the connection ended before the server's HTTP/2 SETTINGS"
#define WHY_NOMEM "out of memory for an HTTP/2 session"

/* The reason of a session that nghttp2 failed with its error code rc, in
 * buf[cap]. */
static const char *why_lib(char *buf, size_t cap, int rc)
{
	if (rc == NGHTTP2_ERR_NOMEM)
		return WHY_NOMEM;
	snprintf(buf, cap, "the server broke HTTP/2 (nghttp2 ended the session): %s",
		 nghttp2_strerror(rc));
	return buf;
}

/* Write what the session has to send. False: the connection is gone. */
static bool h2_flush(struct worker *w, struct conn *c, uint64_t now)
{
	struct h2_conn *h = c->h2;
	bool blocked = false;
	for (;;) {
		if (!h->out_len) {
			const uint8_t *p;
			ssize_t n = nghttp2_session_mem_send(h->ng, &p);
			if (n < 0) {
				char why[RESULT_TLS_REASON_CAP];
				h2_fail(w, c, why_lib(why, sizeof why, (int)n), now);
				return false;
			}
			if (n == 0)
				break;
			h->out = p;
			h->out_len = (size_t)n;
		}
		ssize_t k = c->xport->tx(w, c, h->out, h->out_len);
		if (k > 0) {
			h->out += k;
			h->out_len -= (size_t)k;
			phase_of(w, now)->bytes_out += (uint64_t)k;
			continue;
		}
		if (k == -EAGAIN) {
			blocked = true;
			break;
		}
		/* before SETTINGS: a failed connection, as on reads */
		h2_fail(w, c, h->ready ? NULL : WHY_NO_SETTINGS, now);
		return false;
	}
	if (!blocked && !nghttp2_session_want_read(h->ng) && !nghttp2_session_want_write(h->ng)) {
		/* the session is over: after the peer's GOAWAY, or nghttp2 ended it
		 * on a connection error (a GOAWAY of ours: a protocol failure) */
		const char *why = !h->ready   ? WHY_NO_SETTINGS
				  : !h->going ? "nghttp2 ended the HTTP/2 session"
					      : NULL;
		h2_fail(w, c, why, now);
		return false;
	}
	eng_conn_want(w, c, EPOLLIN | (blocked ? EPOLLOUT : 0));
	return true;
}

/* c is connected (its transport ready) and speaks HTTP/2: start its
 * session (preface and SETTINGS). It stays connecting (CS_HANDSHAKE, the
 * connect deadline) until the server's SETTINGS. A failure is counted
 * (errors.protocol) and closes c. */
static void h2_start(struct worker *w, struct conn *c, uint64_t now)
{
	const struct engine_cfg *cfg = &w->e->cfg;
	uint32_t cap = cfg->max_streams ? cfg->max_streams : ENGINE_H2_STREAMS_DEFAULT;
	uint32_t win = cfg->h2_window ? cfg->h2_window : ENGINE_H2_WINDOW_DEFAULT;
	if (win > NGHTTP2_MAX_WINDOW_SIZE)
		win = NGHTTP2_MAX_WINDOW_SIZE;
	pthread_once(&cbs_once, cbs_init);
	struct h2_conn *h = calloc(1, sizeof *h + cap * sizeof *h->act);
	nghttp2_option *opt = NULL;
	int rc = h && cbs ? nghttp2_option_new(&opt) : NGHTTP2_ERR_NOMEM;
	if (!rc) {
		h->act = (struct conn **)(h + 1);
		h->cap = h->limit = cap;
		h->w = w;
		h->c = c;
		/* a peer may reset many streams (a flood): nghttp2 ends such a session */
		rc = nghttp2_session_client_new2(&h->ng, cbs, h, opt);
		nghttp2_option_del(opt);
	}
	if (rc) {
		char why[RESULT_TLS_REASON_CAP];
		free(h);
		phase_stats_tls_reason(eng_conn_error(w, c->host, ERRK_PROTOCOL, now),
				       why_lib(why, sizeof why, rc));
		eng_connect_failed(w, c->host, now);
		eng_conn_close(w, c);
		return;
	}
	c->h2 = h;
	if (c->state == CS_CONNECTING) { /* h2c: connecting until SETTINGS, like a handshake */
		c->state = CS_HANDSHAKE;
		c->hs_start_ns = now;
	}
	nghttp2_settings_entry iv[] = {
		{NGHTTP2_SETTINGS_ENABLE_PUSH, 0},
		{NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, win},
		{NGHTTP2_SETTINGS_MAX_HEADER_LIST_SIZE, H2_HEADER_CAP},
	};
	if (nghttp2_submit_settings(h->ng, NGHTTP2_FLAG_NONE, iv, sizeof iv / sizeof iv[0]) ||
	    nghttp2_session_set_local_window_size(h->ng, NGHTTP2_FLAG_NONE, 0, (int32_t)win)) {
		h2_fail(w, c, WHY_NOMEM, now);
		return;
	}
	h2_flush(w, c, now);
}

/* The server's SETTINGS arrived: connected, and ready for streams (the
 * host's connect failures are forgotten when it takes one: h2_send). */
static void h2_ready(struct worker *w, struct conn *c)
{
	struct hpool *p = &w->hp[c->host];
	p->n_connecting--;
	w->n_connecting--;
	list_remove(&w->timed, c);
	c->state = CS_IDLE;
	struct phase_stats *ph = phase_of(w, c->connect_start_ns);
	ph->h2.conns_h2++;
	ph->host[c->host].conns_h2++;
}

bool eng_h2_input(struct worker *w, struct conn *c, const char *buf, size_t n, uint64_t now)
{
	struct h2_conn *h = c->h2;
	phase_of(w, now)->bytes_in += (uint64_t)n;
	ssize_t rv = nghttp2_session_mem_recv(h->ng, (const uint8_t *)buf, n);
	if (rv < 0) {
		char why[RESULT_TLS_REASON_CAP];
		h2_fail(w, c, why_lib(why, sizeof why, (int)rv), now);
		return false;
	}
	if (h->ready && c->state == CS_HANDSHAKE)
		h2_ready(w, c);
	if (!h2_flush(w, c, now)) /* SETTINGS ACK, WINDOW_UPDATE, resets */
		return false;
	if (h->going && !h->n_act && !h->out_len) {
		if (!h2_wasted(w, c, now))
			phase_of(w, now)->closed_by_server++; /* GOAWAY: done with it */
		eng_conn_close(w, c);
		return false;
	}
	conn_offer(w, c, now);
	return true;
}

static void h2_event(struct worker *w, struct conn *c, uint32_t events)
{
	struct h2_conn *h = c->h2;
	uint64_t now = clock_now_ns();
	if ((events & EPOLLOUT) && !h2_flush(w, c, now))
		return;
	for (;;) {
		ssize_t n = c->xport->rx(w, c, w->rbuf, READ_BUF_CAP, &h->rx_rt);
		now = clock_now_ns();
		if (n == -EAGAIN)
			break;
		if (n <= 0) {
			/* the peer closed (or a read failed): streams in flight are
			 * errors; before SETTINGS the server does not speak HTTP/2 */
			if (n == 0 && h->ready && !h->n_act && !h2_needed_unused(w, c))
				phase_of(w, now)->closed_by_server++;
			char why[RESULT_TLS_REASON_CAP];
			snprintf(why, sizeof why, "a read from an HTTP/2 connection failed: %s",
				 err_name((int)n));
			h2_fail(w, c, !h->ready ? WHY_NO_SETTINGS : n < 0 ? why : NULL, now);
			return;
		}
		if (!eng_h2_input(w, c, w->rbuf, (size_t)n, now))
			return;
		if ((size_t)n < READ_BUF_CAP && !c->xport->pending(c))
			break;
	}
}

/* Open a stream for rq (NULL: pick_req) scheduled at sched_ns on c, an HTTP/2
 * connection on its host's idle list (a free stream). Its HEADERS are
 * written by the next flush of its host (h2_flush_host). */
/* A flow's request as HTTP/2 fields, for stream s (s->h2_fields). False:
 * no memory, or a request the fields cannot carry (the flow's script made
 * it; counted dropped). */
static bool flow_fields(struct worker *w, struct conn *s, const struct engine_req *rq)
{
	char err[160];
	struct h2req *hr = calloc(1, sizeof *hr);
	if (!hr)
		return false;
	if (h2req_from_h1(hr, rq->buf, rq->len, w->e->hosts[rq->host].tls ? "https" : "http", err,
			  sizeof err)) {
		free(hr);
		return false;
	}
	s->h2_fields = hr;
	return true;
}

static void h2_send(struct worker *w, struct conn *c, uint64_t sched_ns,
		    const struct engine_req *rq, bool lagged, uint32_t flow)
{
	const struct engine_cfg *cfg = &w->e->cfg;
	struct h2_conn *h = c->h2;
	uint64_t now = clock_now_ns();
	if (!rq)
		rq = &cfg->reqs[pick_req(w)];
	struct phase_stats *ph = phase_of(w, sched_ns);
	struct conn *s = stream_get(w);
	if (s && flow != ENG_FLOW_NONE && !flow_fields(w, s, rq)) {
		s->next = w->h2_free; /* back, unused */
		w->h2_free = s;
		eng_flow_drop(w, flow, sched_ns, now);
		return;
	}
	if (!s) {
		if (flow != ENG_FLOW_NONE)
			eng_flow_drop(w, flow, sched_ns, now); /* counted dropped */
		else
			eng_count_dropped(w, ph, now); /* out of memory for a stream record */
		if (c->in)
			list_remove(c->in, c);
		return;
	}
	s->flow = flow;
	ph->sent++;
	ph->lagged_sent += lagged;
	if (cfg->open_loop)
		hist_record(&ph->timing[TIM_SEND_LAG], now > sched_ns ? now - sched_ns : 0);
	s->lagged = lagged;
	s->proto = &eng_proto_h2;
	s->host = c->host;
	s->req = rq;
	s->sched_ns = sched_ns;
	s->write_ns = now;
	s->deadline_ns = now + cfg->timeout_ns;
	s->got_byte = false;
	s->wr_off = 0;
	s->h2_rst = false;
	s->h2_end = false;
	s->h2_parent = c;
	s->state = CS_READING;
	h1_resp_init(&s->resp, rq->head);
	if (w->capture)
		h1_resp_capture(&s->resp, &s->cap);
	const struct h2req *hr = s->h2_fields ? s->h2_fields : &w->e->h2reqs[rq - cfg->reqs];
	nghttp2_data_provider dp = {.source.ptr = s, .read_callback = read_body};
	s->h2_slot = h->n_act;
	h->act[h->n_act++] = s;
	list_push_tail(&w->timed, s);
	int32_t id = nghttp2_submit_request(h->ng, NULL, hr->nv, hr->n_nv,
					    hr->body_len ? &dp : NULL, s);
	if (id < 0) { /* no more streams on this session (ids used up): elsewhere */
		s->h2_id = 0;
		h->going = true;
		stream_retry(w, s, now);
		conn_offer(w, c, now);
		return;
	}
	s->h2_id = id;
	if (!h->used) { /* connected for good: failures in a row end here */
		h->used = true;
		w->hp[c->host].connect_fails = 0;
	}
	ph->h2.streams_n++;
	ph->h2.streams_sum += h->n_act;
	if (h->n_act > ph->h2.streams_max)
		ph->h2.streams_max = h->n_act;
	struct host_stats *hs = &ph->host[c->host];
	hs->sent_h2++;
	hs->streams_sum += h->n_act;
	if (h->n_act > hs->streams_max)
		hs->streams_max = h->n_act;
	conn_offer(w, c, now);
	if (!h->dirty) { /* written with the others of this turn: h2_flush_host */
		struct hpool *p = &w->hp[c->host];
		h->dirty = true;
		h->dirty_next = p->h2_dirty;
		p->h2_dirty = h;
	}
}

/* Write the requests submitted on host h's HTTP/2 connections since the
 * last call (eng_serve_host calls it after its sends). */
static void h2_flush_host(struct worker *w, uint32_t host, uint64_t now)
{
	struct hpool *p = &w->hp[host];
	while (p->h2_dirty) {
		struct h2_conn *h = p->h2_dirty;
		p->h2_dirty = h->dirty_next;
		h->dirty = false;
		h2_flush(w, h->c, now); /* may close it: it is off the list already */
	}
}

/* Close a stream (reset it: a timeout; a stream done is released) or an
 * HTTP/2 connection (its streams in flight count as read or closed
 * errors). */
static void h2_close(struct worker *w, struct conn *c)
{
	uint64_t now = clock_now_ns();
	struct conn *parent = c->h2_parent;
	if (parent) { /* a stream */
		struct h2_conn *h = parent->h2;
		bool reset = c->state == CS_READING && h && h->ng && c->h2_id > 0;
		int32_t id = c->h2_id;
		stream_release(w, c);
		if (!h)
			return;
		if (reset) { /* given up on (a timeout): the connection stays */
			nghttp2_submit_rst_stream(h->ng, NGHTTP2_FLAG_NONE, id, NGHTTP2_CANCEL);
			if (!h2_flush(w, parent, now))
				return;
		}
		conn_offer(w, parent, now);
		return;
	}
	struct h2_conn *h = c->h2;
	if (!h) { /* its session never started */
		eng_conn_release(w, c);
		return;
	}
	if (h->dirty) { /* off its host's list of connections to write */
		struct h2_conn **pp = &w->hp[c->host].h2_dirty;
		while (*pp != h)
			pp = &(*pp)->dirty_next;
		*pp = h->dirty_next;
		h->dirty = false;
	}
	while (h->n_act) {
		struct conn *s = h->act[h->n_act - 1];
		if (s->in)
			list_remove(s->in, s);
		eng_count_error(w, s, s->got_byte ? ERRK_READ : ERRK_CLOSED, now);
		stream_release(w, s);
	}
	nghttp2_session_del(h->ng);
	free(h);
	c->h2 = NULL;
	eng_conn_release(w, c);
}

/* A stream's response is counted: its record goes back. */
static void h2_done(struct worker *w, struct conn *s, uint64_t now)
{
	(void)now;
	h2_close(w, s); /* done (CS_IDLE): released, not reset */
}

static uint32_t h2_in_flight(const struct conn *c)
{
	return c->h2 ? c->h2->n_act : 0;
}

/* The end of a step: streams in flight are counted in in_flight_at_end
 * (eng_count_left) and their connections closed. */
static void h2_step_end(struct worker *w)
{
	for (uint32_t i = 0; i < w->max_conns; i++) {
		struct conn *c = &w->conns[i];
		struct h2_conn *h = c->state != CS_FREE ? c->h2 : NULL;
		if (!h || !h->n_act)
			continue;
		while (h->n_act) {
			struct conn *s = h->act[h->n_act - 1];
			eng_count_left(w, s->sched_ns, s->req, s->lagged, true);
			stream_release(w, s);
		}
		eng_conn_close(w, c);
	}
}

const struct eng_proto eng_proto_h2 = {
	.name = "h2",
	.prepare = h2_prepare,
	.release = h2_release,
	.start = h2_start,
	.send = h2_send,
	.event = h2_event,
	.done = h2_done,
	.close = h2_close,
	.in_flight = h2_in_flight,
	.flush_host = h2_flush_host,
	.step_end = h2_step_end,
	.worker_free = h2_worker_free,
	.connect_timeout_reason = "no HTTP/2 SETTINGS from the server within --timeout",
};
