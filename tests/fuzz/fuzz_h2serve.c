/* libFuzzer harness for the embedded target's HTTP/2 (src/target/h2.c):
 * nghttp2 parses the frames; what is fuzzed is the target's callbacks and
 * stream bookkeeping behind them — header capture and its caps, request
 * completion, answers (latency timers, slow bodies, close_after's GOAWAY,
 * garbage resets, templates and kv from the :path), the gate on input while
 * output waits, timeouts and closing.
 *
 * A hand-made target and worker (no threads) serve one connection over a
 * socketpair: the input is written to the client end in pieces, each
 * followed by the connection's read event, the output is read and thrown
 * away (or not: the client may stop reading), and the worker's clock moves
 * on so that timers fire.
 *
 * Input: byte 0 is a control byte, the rest the client's bytes after the
 * connection preface (sent by the harness unless bit 7 is set).
 *   bits 0..3  piece size: 16 << (bits & 7) bytes (16 B .. 2 KiB); bit 3 set:
 *              the client stops reading after the first half of the pieces
 *   bits 4..6  ms the clock moves on after each piece: 0, 1, 2, 5, 10, 20, 50, 100
 *   bit 7      no preface from the harness (the input brings its own, or not)
 * After the input the connection is closed. Invariants (checked, else
 * abort()): while open, the streams waiting on timers are among the open
 * ones; once the connection is closed no stream record, stream or
 * connection timer, waiting count or pending send is left behind. */
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "target/plan.h"
#include "target/server_int.h"

#define FUZZ_NAME "fuzz_h2serve"
#include "common/fuzz_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char plan_yaml[] =
	"name: fuzz\n"
	"timeouts: {request: 30ms, idle: 200ms}\n"
	"routes:\n"
	"  - path: /lat\n"
	"    latency: {dist: uniform, min: 1ms, max: 40ms}\n"
	"    server_timing: true\n"
	"  - path: /slow\n"
	"    body_size: 200\n"
	"    misbehave: {slow_body: {bytes: 16, every: 3ms}}\n"
	"  - path: /close\n"
	"    misbehave: {close_after: 3}\n"
	"  - path: /garbage\n"
	"    misbehave: {garbage: 0.5}\n"
	"  - path: /mix\n"
	"    status: {200: 0.6, 503: 0.4}\n"
	"    body: \"id={{id}} seq={{seq}} q={{query:q}}\\n\"\n"
	"  - path: /big\n"
	"    body_size: 100000\n"
	"  - method: GET\n"
	"    path: /kv\n"
	"    kv: {param: keys, prefix: k, generate: 100, value_size: 8}\n"
	"  - path: /\n"
	"    prefix: true\n"
	"    body: \"ok\\n\"\n";

static struct target *tgt;
static struct worker *wk;

static void setup(void)
{
	if (tgt)
		return;
	struct target_plan *plan = NULL;
	char err[256];
	CHECK(target_plan_parse(plan_yaml, sizeof plan_yaml - 1, "fuzz.yaml", &plan, err,
				sizeof err) == 0);
	tgt = calloc(1, sizeof *tgt);
	wk = calloc(1, sizeof *wk);
	CHECK(tgt && wk);
	tgt->plan = plan;
	tgt->n = 1;
	tgt->w = wk;
	tgt->h2 = true;
	tgt->max_streams = 8;
	tgt->lfd = -1;
	atomic_init(&tgt->open, 0);
	target_canned_build(tgt);
	CHECK(target_h2_build(tgt) == 0);
	wk->t = tgt;
	theap_init(&wk->heap);
	theap_init(&wk->sheap);
	theap_node_init(&wk->accept_tn);
	rng_seed(&wk->rng, 1);
	CHECK(loop_init(&wk->loop) == 0);
	tgt->t0_ns = clock_now_ns();
}

static void drain(int fd)
{
	char sink[65536];
	while (read(fd, sink, sizeof sink) > 0)
		;
}

/* Run the connection's and the streams' timers due at w->now. */
static void timers(struct worker *w)
{
	struct theap_node *n;
	while ((n = theap_pop_expired(&w->heap, w->now)))
		target_conn_timer((struct conn *)n);
	target_h2_timers(w);
	target_conn_settle_dirty(w);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint64_t step_ms[8] = {0, 1, 2, 5, 10, 20, 50, 100};
	if (size < 1)
		return 0;
	uint8_t ctl = data[0];
	data++;
	size--;
	size_t piece = (size_t)16 << (ctl & 7);
	bool stop_reading = ctl & 8;
	uint64_t step_ns = step_ms[(ctl >> 4) & 7] * NS_PER_MS;
	bool own_preface = ctl & 128;
	setup();
	struct worker *w = wk;
	int sv[2];
	CHECK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv) == 0);
	int rcv = 4096;
	setsockopt(sv[1], SOL_SOCKET, SO_RCVBUF, &rcv, sizeof rcv);
	uint64_t skew = 0; /* how far the harness moved the clock on */
	w->now = clock_now_ns();
	atomic_fetch_add(&tgt->open, 1);
	target_conn_new(w, sv[0]);
	struct conn *c = w->live;
	CHECK(c && c->fd == sv[0]);
	if (!own_preface) {
		CHECK(write(sv[1], H2_PREFACE, H2_PREFACE_LEN) == H2_PREFACE_LEN);
		target_conn_event(c, EPOLLIN);
	}
	size_t n_pieces = (size + piece - 1) / piece, i = 0;
	for (size_t off = 0; off < size && !c->dead; off += piece, i++) {
		size_t n = size - off < piece ? size - off : piece;
		ssize_t wr = write(sv[1], data + off, n);
		(void)wr; /* a full socket: the server stopped reading, as it may */
		target_conn_event(c, EPOLLIN | (c->write_blocked ? EPOLLOUT : 0));
		if (!stop_reading || i < n_pieces / 2)
			drain(sv[1]);
		skew += step_ns;
		w->now = clock_now_ns() + skew;
		if (!c->dead)
			timers(w);
	}
	/* let every timer that is due within a second run, reading all */
	for (int k = 0; k < 50 && !c->dead && (theap_peek(&w->sheap) || c->h2s.n); k++) {
		drain(sv[1]);
		if (c->write_blocked)
			target_conn_event(c, EPOLLOUT);
		skew += 20 * NS_PER_MS;
		w->now = clock_now_ns() + skew;
		if (!c->dead)
			timers(w);
	}
	if (!c->dead) {
		CHECK(c->h2s.n_timed <= c->h2s.n);
		target_conn_close(c);
	}
	CHECK(c->h2 == NULL);
	CHECK(c->h2s.n == 0);
	CHECK(c->h2s.n_timed == 0);
	CHECK(w->h2pool.b.held == 0); /* every stream's holdings given back */
	CHECK(w->h2pool.b.dyn == 0);
	CHECK(theap_peek(&w->sheap) == NULL);
	CHECK(theap_peek(&w->heap) == NULL);
	CHECK(w->h2_dirty == NULL);
	target_conn_reap(w);
	close(sv[1]);
	return 0;
}
