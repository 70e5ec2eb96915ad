/* libFuzzer harness for pacer's HTTP/2 client side (src/engine/proto_h2.c):
 * nghttp2 parses the frames; what is fuzzed is pacer's callbacks and
 * stream bookkeeping behind them — completion through the HTTP/1.1 path,
 * resets, GOAWAY and refused-stream retries, timeouts, connection failure.
 *
 * A real worker (eng_worker_init) of a hand-made one-host --h2c engine gets
 * one connection whose writes go to /dev/null; its session is started as
 * after a TCP connect, and the input is fed to it as what the server sent.
 *
 * Input: byte 0 is a control byte, the rest the server's bytes.
 *   bits 0..3  piece size - 1: bytes fed per call
 *   bits 4..5  requests kept in flight: 1, 2, 4 or 8 (two requests alternate:
 *              a GET and a POST with a body)
 *   bit 6      every fourth piece, give up on the oldest stream (as a
 *              timeout does: RST_STREAM CANCEL)
 *   bit 7      response rules look at headers and the body (capture)
 * After the input the step ends. Invariants (checked, else abort()): every
 * request sent is completed, a request error, in flight at the end, or was
 * put back for a retry (and then not counted as sent). */
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/engine_int.h"
#include "plan/inspect.h"

#define FUZZ_NAME "fuzz_h2"
#include "common/fuzz_check.h"

static const char get_req[] = "GET /a HTTP/1.1\r\nHost: localhost\r\nUser-Agent: fuzz\r\n\r\n";
static const char post_req[] = "POST /b HTTP/1.1\r\nHost: localhost\r\nContent-Length: 5\r\n"
			       "Content-Type: text/plain\r\n\r\nhello";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* One engine and worker per capture setting, made once (a worker's
 * histograms are large: making them per input would be most of the time)
 * and reset before each input, as a step reset does. */
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
	struct fixture *f = &fx[capture];
	if (f->w)
		return f;
	char err[256];
	inspect_init(&f->rules);
	if (capture) {
		CHECK(inspect_add_outcome(&f->rules, "x=header \"x-a\" contains \"b\"", err,
					  sizeof err) == 0);
		CHECK(inspect_add_outcome(&f->rules, "y=body contains \"ok\"", err, sizeof err) == 0);
	}
	inspect_finish(&f->rules);
	struct engine *e = calloc(1, sizeof *e);
	CHECK(e);
	e->cfg = (struct engine_cfg){
		.reqs = reqs,
		.n_reqs = 2,
		.threads = 1,
		.concurrency = 1,
		.timeout_ns = 10 * NS_PER_S,
		.http = ENGINE_H2C,
		.max_streams = 8,
		.inspect = capture ? &f->rules : NULL,
	};
	e->hosts = &f->host;
	e->n_hosts = 1;
	e->cfg.hosts = &f->host;
	e->cfg.n_hosts = 1;
	e->host_reqs[0] = 2;
	static const struct eng_proto *const h2_only[] = {&eng_proto_h2};
	e->protos = h2_only;
	e->n_protos = 1;
	e->proto_default = &eng_proto_h2;
	CHECK(eng_proto_h2.prepare(e) == 0);
	struct worker *w = aligned_alloc(64, (sizeof *w + 63) / 64 * 64);
	CHECK(w);
	memset(w, 0, sizeof *w);
	CHECK(eng_worker_init(w, e, 0) == 0);
	CHECK(eng_queue_size(w, 0) == 0);
	f->e = e;
	f->w = w;
	return f;
}

/* A phase's counters to zero, its histograms kept as they are (resetting
 * them costs more than the rest of an input; no check reads them). */
static void counters_reset(struct phase_stats *p)
{
	struct hist keep[TIM_COUNT];
	memcpy(keep, p->timing, sizeof keep);
	struct hist sdur = p->sessions.duration;
	memset(p, 0, sizeof *p);
	memcpy(p->timing, keep, sizeof keep);
	p->sessions.duration = sdur;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	uint8_t ctl = data[0];
	data++;
	size--;
	size_t piece = (size_t)(ctl & 15) + 1;
	uint32_t want = 1u << ((ctl >> 4) & 3);
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
	e->warm_end_ns = clock_now_ns(); /* the measured phase, its first second, starts now */
	w->q_len = 0;
	w->q_free = QE_NONE;
	w->q_hi = 0;
	/* the host's share of the backlog (eng_queue_size) is kept: retries go
	 * there (reset to 0, every refused stream was an error, never a retry) */
	w->hp[0] = (struct hpool){
		.q_head = QE_NONE, .q_tail = QE_NONE, .fair = 1, .q_share = w->hp[0].q_share};

	/* one connection, connected: as eng_conn_open + a TCP connect */
	uint64_t now = clock_now_ns();
	struct conn *c = w->free_slots;
	w->free_slots = c->next;
	c->fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
	CHECK(c->fd >= 0);
	c->host = 0;
	c->state = CS_CONNECTING;
	c->connect_start_ns = now;
	c->deadline_ns = now + e->cfg.timeout_ns;
	list_push_tail(&w->timed, c);
	w->n_open++;
	w->n_connecting++;
	w->hp[0].n_open++;
	w->hp[0].n_connecting++;
	c->ev = EPOLLIN | EPOLLRDHUP | EPOLLOUT;
	c->xport = &eng_xport_plain;
	c->proto = &eng_proto_h2;
	eng_proto_h2.start(w, c, now);

	size_t off = 0;
	for (uint32_t turn = 0; off < size && c->state != CS_FREE; turn++) {
		now = clock_now_ns();
		/* requests: from the backlog (retries) first, then new ones */
		struct hpool *p = &w->hp[0];
		while (c->state != CS_FREE && c->in == &p->idle && p->q_len) {
			struct qent q = q_pop(w, p);
			eng_conn_send(w, c, q.due_ns, &reqs[q.req], false);
		}
		while (c->state != CS_FREE && c->in == &p->idle && w->timed.len < want)
			eng_conn_send(w, c, now, NULL, false);
		if (c->state != CS_FREE)
			eng_proto_h2.flush_host(w, 0, now);
		if (c->state == CS_FREE)
			break;
		if (give_up && turn % 4 == 3 && w->timed.head && w->timed.head->h2_parent) {
			struct conn *s = w->timed.head;
			eng_count_error(w, s, ERRK_TIMEOUT, now);
			eng_conn_close(w, s);
			if (c->state == CS_FREE)
				break;
		}
		size_t n = size - off < piece ? size - off : piece;
		bool alive = eng_h2_input(w, c, (const char *)data + off, n, now);
		off += n;
		if (!alive)
			break;
		CHECK(c->h2);
	}
	eng_proto_h2.step_end(w);
	if (c->state != CS_FREE)
		eng_conn_close(w, c);
	CHECK(w->timed.len == 0);

	const struct phase_stats *m = &w->meas;
	CHECK(m->sent == m->completed + phase_stats_request_errors(m) + m->in_flight_at_end);
	CHECK(m->h2.streams_max <= 8);
	CHECK(m->h2.refused <= m->h2.rst[7]);
	CHECK(w->n_open == 0 && w->n_connecting == 0 && w->free_slots);
	return 0;
}
