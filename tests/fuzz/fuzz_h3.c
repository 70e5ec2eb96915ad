/* libFuzzer harness for pacer's HTTP/3 client side (src/engine/proto_h3.c):
 * nghttp3 parses the frames and QPACK; what is fuzzed is pacer's callbacks
 * and stream bookkeeping behind them — completion through the HTTP/1.1
 * path, resets, STOP_SENDING, GOAWAY and rejected-request retries, stream
 * credit, timeouts, connection failure.
 *
 * QUIC itself is stood in for: this file defines the stream interface
 * proto_h3.c calls (engine_int.h's eng_quic_open_bidi ... eng_quic_fail,
 * whose real bodies are src/engine/xport_quic_streams.c, which the linker
 * then leaves out of the archive), so there are no packets, no handshake
 * and no crypto: streams are numbered as a client's are (bidirectional 0,
 * 4, 8, ...; unidirectional 2, 6, 10), what HTTP/3 writes is pulled,
 * taken and acknowledged at once, and the input is what the server sent
 * on its streams. A real worker (eng_worker_init) of a hand-made one-host
 * HTTP/3 engine gets one connection, begun as after its handshake.
 *
 * Input: byte 0 is a control byte, then records.
 *   control bits 0..1  requests kept in flight: 1, 2, 4 or 8 (a GET and a
 *                      POST with a body alternate)
 *           bits 2..3  the server's stream credit (MAX_STREAMS): 0, 1, 8, 100
 *           bit 6      every fourth record, give up on the oldest stream (a
 *                      timeout: the stream is cancelled)
 *           bit 7      response rules look at headers and the body (capture)
 *   record: a selector byte, a length byte, that many bytes
 *     selector bits 0..1  0 the server's control stream (id 3), 1 its QPACK
 *                         encoder stream (7), 2 a request stream, 3 an event
 *              bit 2      the bytes end the stream (FIN)
 *              bits 3..5  request streams: the k-th most recent one opened
 *              bits 6..7  events: 0 RESET_STREAM, 1 STOP_SENDING, 2 the
 *                         stream closed, 3 more stream credit; the code is
 *                         0x100 + the record's first byte
 * After the input the step ends. Invariants (checked, else abort()): every
 * request sent is completed, a request error, in flight at the end, or was
 * put back for a retry (and then not counted as sent); no more streams in
 * flight on the connection than --max-streams; nothing left on the
 * worker's lists. */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <ngtcp2/ngtcp2.h>

#include "engine/engine_int.h"
#include "plan/inspect.h"

#define FUZZ_NAME "fuzz_h3"
#include "common/fuzz_check.h"

#define MAX_STREAMS 8
#define OPENED_RING 8

static const char get_req[] = "GET /a HTTP/1.1\r\nHost: localhost\r\nUser-Agent: fuzz\r\n\r\n";
static const char post_req[] = "POST /b HTTP/1.1\r\nHost: localhost\r\nContent-Length: 5\r\n"
			       "Content-Type: text/plain\r\n\r\nhello";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* ---- QUIC's streams, stood in for --------------------------------------------- */

static struct {
	int64_t next_bidi, next_uni;
	uint64_t bidi_left;          /* the server's stream credit left */
	bool failed;                 /* eng_quic_fail: the connection ends */
	int64_t opened[OPENED_RING]; /* the request streams opened last */
	uint32_t n_opened;
} fq;

void eng_quic_fail(struct worker *w, struct conn *c, uint64_t code, const char *reason)
{
	(void)code;
	if (fq.failed)
		return;
	fq.failed = true;
	phase_stats_tls_reason(eng_conn_error(w, c->host, ERRK_PROTOCOL, clock_now_ns()), reason);
}

int eng_quic_open_bidi(struct conn *c, int64_t *sid, void *ud)
{
	(void)c, (void)ud;
	if (!fq.bidi_left)
		return -EAGAIN;
	fq.bidi_left--;
	*sid = fq.next_bidi;
	fq.next_bidi += 4;
	fq.opened[fq.n_opened++ % OPENED_RING] = *sid;
	return 0;
}

int eng_quic_open_uni(struct conn *c, int64_t *sid)
{
	(void)c;
	*sid = fq.next_uni;
	fq.next_uni += 4;
	return 0;
}

uint64_t eng_quic_streams_left(const struct conn *c)
{
	(void)c;
	return fq.bidi_left;
}

uint64_t eng_quic_uni_left(const struct conn *c)
{
	(void)c;
	return 3;
}

void eng_quic_consumed(struct conn *c, int64_t sid, size_t n)
{
	(void)c, (void)sid, (void)n;
}

void eng_quic_shutdown_stream(struct conn *c, int64_t sid, uint64_t code)
{
	(void)c, (void)sid, (void)code;
}

void eng_quic_shutdown_read(struct conn *c, int64_t sid, uint64_t code)
{
	(void)c, (void)sid, (void)code;
}

void eng_quic_shutdown_write(struct conn *c, int64_t sid, uint64_t code)
{
	(void)c, (void)sid, (void)code;
}

uint64_t eng_quic_stream_lost(const struct conn *c, int64_t sid)
{
	(void)c, (void)sid;
	return 0;
}

uint64_t eng_quic_rx_rt(const struct conn *c)
{
	(void)c;
	return 0;
}

/* What HTTP/3 has to write: pulled, taken whole and acknowledged, as a
 * transport with room and a server that reads at once would. */
static void drain(struct worker *w, struct conn *c)
{
	const struct eng_stream_ops *ops = eng_proto_h3.streams;
	for (int i = 0; i < 64 && c->h3 && !fq.failed; i++) {
		int64_t sid;
		int fin;
		ngtcp2_vec v[16];
		long n = ops->pull(w, c, &sid, &fin, v, 16);
		if (n < 0 || sid < 0)
			return;
		size_t len = 0;
		for (long k = 0; k < n; k++)
			len += v[k].len;
		if (ops->wrote(w, c, sid, len) || (len && ops->acked(w, c, sid, len)))
			return;
		if (!len && !fin)
			return;
	}
}

/* ---- the engine --------------------------------------------------------------------- */

/* One engine and worker per capture setting, made once and reset before
 * each input, as a step reset does (as fuzz_h2.c). */
struct fixture {
	struct engine *e;
	struct worker *w;
	struct inspect rules;
	struct engine_host host;
};

static struct engine_req reqs[2] = {
	{.buf = get_req, .len = sizeof get_req - 1},
	{.buf = post_req, .len = sizeof post_req - 1},
};

static struct fixture *fixture(bool capture)
{
	static struct fixture fx[2];
	static char not_a_context; /* HTTP/3 wants a QUIC context per host: never used here */
	struct fixture *f = &fx[capture];
	if (f->w)
		return f;
	char err[256];
	inspect_init(&f->rules);
	if (capture) {
		CHECK(inspect_add_outcome(&f->rules, "x=header \"x-a\" contains \"b\"", err,
					  sizeof err) == 0);
		CHECK(inspect_add_outcome(&f->rules, "y=body contains \"ok\"", err, sizeof err) ==
		      0);
	}
	inspect_finish(&f->rules);
	f->host.addr.ss.ss_family = AF_INET;
	f->host.quic = (struct quic_ctx *)(void *)&not_a_context;
	struct engine *e = calloc(1, sizeof *e);
	CHECK(e);
	e->cfg = (struct engine_cfg){
		.reqs = reqs,
		.n_reqs = 2,
		.threads = 1,
		.concurrency = 1,
		.timeout_ns = 10 * NS_PER_S,
		.http = ENGINE_H3,
		.max_streams = MAX_STREAMS,
		.inspect = capture ? &f->rules : NULL,
	};
	e->hosts = &f->host;
	e->n_hosts = 1;
	e->cfg.hosts = &f->host;
	e->cfg.n_hosts = 1;
	e->host_reqs[0] = 2;
	static const struct eng_proto *const h3_only[] = {&eng_proto_h3};
	e->protos = h3_only;
	e->n_protos = 1;
	e->proto_default = &eng_proto_h3;
	CHECK(eng_proto_h3.prepare(e) == 0);
	struct worker *w = aligned_alloc(64, (sizeof *w + 63) / 64 * 64);
	CHECK(w);
	memset(w, 0, sizeof *w);
	CHECK(eng_worker_init(w, e, 0) == 0);
	CHECK(eng_queue_size(w, 0) == 0);
	f->e = e;
	f->w = w;
	return f;
}

/* A phase's counters to zero, its histograms kept as they are. */
static void counters_reset(struct phase_stats *p)
{
	struct hist keep[TIM_COUNT];
	memcpy(keep, p->timing, sizeof keep);
	struct hist sdur = p->sessions.duration;
	memset(p, 0, sizeof *p);
	memcpy(p->timing, keep, sizeof keep);
	p->sessions.duration = sdur;
}

/* Send requests until want are in flight or the connection takes no more. */
static void send_some(struct worker *w, struct conn *c, uint32_t want, uint64_t now)
{
	struct hpool *p = &w->hp[0];
	while (c->state != CS_FREE && c->in == &p->idle && p->q_len) {
		struct qent q = q_pop(w, p);
		eng_conn_send(w, c, q.due_ns, &reqs[q.req & ~QE_LAGGED], false);
	}
	while (c->state != CS_FREE && c->in == &p->idle && w->timed.len < want)
		eng_conn_send(w, c, now, NULL, false);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	uint8_t ctl = data[0];
	data++;
	size--;
	uint32_t want = 1u << (ctl & 3);
	static const uint64_t credit[4] = {0, 1, 8, 100};
	bool give_up = ctl & 64;

	struct fixture *f = fixture(ctl & 128);
	struct engine *e = f->e;
	struct worker *w = f->w;
	counters_reset(&w->warm);
	counters_reset(&w->meas);
	w->warm.n_hosts = w->meas.n_hosts = 1;
	w->secs_len = w->pairs_len = 0;
	w->sec_cur = 0;
	hist_reset(&w->sec_hist);
	e->warm_end_ns = clock_now_ns();
	w->q_len = 0;
	w->q_free = QE_NONE;
	w->q_hi = 0;
	/* the host's share of the backlog (eng_queue_size) is kept: retries go there */
	w->hp[0] = (struct hpool){
		.q_head = QE_NONE, .q_tail = QE_NONE, .fair = 1, .q_share = w->hp[0].q_share};
	memset(&fq, 0, sizeof fq);
	fq.next_uni = 2;
	fq.bidi_left = credit[(ctl >> 2) & 3];

	/* one connection, its handshake just completed: as eng_conn_open and
	 * the QUIC transport's start (no QUIC state of its own: c->quic NULL) */
	uint64_t now = clock_now_ns();
	struct conn *c = w->free_slots;
	w->free_slots = c->next;
	c->fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
	CHECK(c->fd >= 0);
	c->host = 0;
	c->state = CS_HANDSHAKE;
	c->connect_start_ns = now;
	c->deadline_ns = now + e->cfg.timeout_ns;
	list_push_tail(&w->timed, c);
	w->n_open++;
	w->n_connecting++;
	w->hp[0].n_open++;
	w->hp[0].n_connecting++;
	c->ev = EPOLLIN;
	c->xport = &eng_xport_quic;
	c->quic = NULL;
	c->proto = &eng_proto_h3;
	eng_proto_h3.start(w, c, now);
	if (fq.failed && c->state != CS_FREE)
		eng_conn_close(w, c);

	const struct eng_stream_ops *ops = eng_proto_h3.streams;
	size_t off = 0;
	for (uint32_t turn = 0; off + 2 <= size && c->state != CS_FREE && c->h3; turn++) {
		now = clock_now_ns();
		send_some(w, c, want, now);
		if (c->state == CS_FREE || !c->h3)
			break;
		drain(w, c);
		if (give_up && turn % 4 == 3 && w->timed.head && w->timed.head->h3_parent) {
			struct conn *s = w->timed.head;
			eng_count_error(w, s, ERRK_TIMEOUT, now);
			eng_conn_close(w, s);
		}
		uint8_t sel = data[off], len = data[off + 1];
		off += 2;
		if (len > size - off)
			len = (uint8_t)(size - off);
		const uint8_t *b = data + off;
		off += len;
		bool fin = sel & 4;
		int64_t req_sid =
			fq.n_opened ? fq.opened[(fq.n_opened - 1 - ((sel >> 3) & 7) % fq.n_opened) %
						OPENED_RING]
				    : 0;
		int rv = 0;
		switch (sel & 3) {
		case 0: rv = eng_h3_recv(w, c, 3, b, len, fin); break;
		case 1: rv = eng_h3_recv(w, c, 7, b, len, fin); break;
		case 2:
			rv = eng_h3_recv(w, c, req_sid, b, len, fin);
			if (!rv && fin && c->h3)
				rv = ops->closed(w, c, req_sid, 0x100);
			break;
		default: {
			uint64_t code = 0x100 + (len ? b[0] : 0);
			switch (sel >> 6) {
			case 0: rv = ops->reset(w, c, req_sid, code); break;
			case 1: rv = ops->stop_sending(w, c, req_sid, code); break;
			case 2: rv = ops->closed(w, c, req_sid, code); break;
			default: fq.bidi_left += 1 + (len ? b[0] % 8 : 0); ops->more_streams(w, c);
			}
		}
		}
		CHECK(rv == 0 || fq.failed);
		if (fq.failed && c->state != CS_FREE) /* the transport ends it */
			eng_conn_close(w, c);
		else if (c->state != CS_FREE && c->h3)
			drain(w, c);
	}
	eng_proto_h3.step_end(w);
	if (c->state != CS_FREE)
		eng_conn_close(w, c);
	CHECK(w->timed.len == 0);

	const struct phase_stats *m = &w->meas;
	CHECK(m->sent == m->completed + phase_stats_request_errors(m) + m->in_flight_at_end);
	CHECK(m->h3.streams_max <= MAX_STREAMS);
	CHECK(w->n_open == 0 && w->n_connecting == 0 && w->free_slots);
	return 0;
}
