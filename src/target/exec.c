/* The embedded target server: answering one request (which variant, the CPU
 * work, the latency and stalls, the response bytes and the room for them in
 * the output, misbehaviour). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "target/server_int.h"

/* Room after a variant's head for the lines emit adds: Content-Length (16 +
 * 20 digits + CRLF), Server-Timing (23 + 20 digits + ".ddd" + CRLF),
 * "Connection: keep-alive" + CRLF, and the blank line. */
#define EMIT_HEAD_EXTRA 160
_Static_assert(EMIT_HEAD_EXTRA >= (16 + 20 + 2) + (23 + 20 + 4 + 2) + 24 + 2, "emit head room");

/* Busy work: rounds of the generator between two reads of the thread's CPU
 * clock, so the clock's own cost is a small part of the time burnt. */
#define BUSY_ROUNDS 64
/* Knuth's MMIX linear congruential step: a multiply-add the compiler cannot
 * drop or fold, since the result is stored to a volatile. */
#define BUSY_LCG_MUL 6364136223846793005ull
#define BUSY_LCG_INC 1442695040888963407ull

/* The statuses of the canned errors, in t->errs order; the parser's refusals
 * (h1req error_status) and 408. An unlisted status gets the last one. */
static const int canned_status[N_CANNED] = {400, 408, 411, 413, 414, 431, 501, 505};
static const char garbage_bytes[] = "\x01\x02 pacer garbage: this is not HTTP \xff\xfe\r\n\r\n";

void target_canned_build(struct target *t)
{
	for (int i = 0; i < N_CANNED; i++) {
		int s = canned_status[i];
		char body[80];
		int bl = snprintf(body, sizeof body, "%d %s\n", s, target_reason(s));
		t->errs_len[i] = (size_t)snprintf(t->errs[i], sizeof t->errs[i],
		                                  "HTTP/1.1 %d %s\r\nContent-Type: text/plain\r\n"
		                                  "Content-Length: %d\r\nConnection: close\r\n\r\n%s",
		                                  s, target_reason(s), bl, body);
	}
}

/* A real busy loop: burn `ns` of this thread's CPU time. */
void target_busy_work(uint64_t ns)
{
	uint64_t end = clock_thread_cpu_ns() + ns;
	volatile uint64_t sink = 0;
	uint64_t x = TARGET_GOLDEN_GAMMA;
	do {
		for (int i = 0; i < BUSY_ROUNDS; i++)
			x = x * BUSY_LCG_MUL + BUSY_LCG_INC;
		sink = x;
	} while (clock_thread_cpu_ns() < end);
	(void)sink;
}

/* Make room for `need` more bytes in out. false: no memory (or over cap). */
bool target_out_reserve(struct conn *c, size_t need)
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

void target_emit_canned(struct conn *c, int status)
{
	struct target *t = c->w->t;
	size_t i = 0;
	while (i < N_CANNED - 1 && canned_status[i] != status)
		i++;
	if (target_out_reserve(c, t->errs_len[i]))
		out_put(c, t->errs[i], t->errs_len[i]);
	c->closing = true;
	stat_inc(&c->w->st.requests);
}

bool target_emit(struct conn *c)
{
	struct worker *w = c->w;
	const struct target_route *rt = c->rt;
	const struct target_resp *r = c->resp;
	c->nreq++;
	stat_inc(&w->st.requests);
	if (c->garbage) {
		if (target_out_reserve(c, sizeof garbage_bytes - 1))
			out_put(c, garbage_bytes, sizeof garbage_bytes - 1);
		c->closing = true;
		stat_inc(&w->st.misbehaved);
		return true;
	}
	bool dynamic = r->wire == NULL;
	const char *body = dynamic ? c->dyn.buf : r->wire + r->wire_body_off;
	size_t body_len = dynamic ? c->dyn.len : r->wire_len - r->wire_body_off;
	bool conn_hdr = !c->keep_alive || c->v10;
	bool timing = rt && rt->server_timing;
	bool send_body = !c->head_req && body_len > 0;
	size_t head_room = r->head_len + EMIT_HEAD_EXTRA;
	if (!dynamic && !conn_hdr && !timing) {
		/* precomputed bytes */
		size_t n = send_body ? r->wire_len : r->wire_body_off;
		if (send_body && body_len > COPY_MAX)
			n = r->wire_body_off;
		if (!target_out_reserve(c, n))
			return false;
		out_put(c, r->wire, n);
	} else {
		if (!target_out_reserve(c, head_room + (send_body && body_len <= COPY_MAX ? body_len : 0)))
			return false;
		out_put(c, r->head, r->head_len);
		char *p = c->out + c->out_len;
		if (!r->no_body_allowed) {
			memcpy(p, "Content-Length: ", 16);
			p += 16;
			p += target_fmt_u64(p, body_len);
			*p++ = '\r';
			*p++ = '\n';
		}
		if (timing) {
			memcpy(p, "Server-Timing: ", 15);
			p += 15;
			p += target_fmt_timing(p, clock_now_ns() - c->dispatch_ns);
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
	return true;
}

size_t target_fmt_timing(char *p, uint64_t dur_ns)
{
	uint64_t dur_us = dur_ns / 1000;
	char *p0 = p;
	memcpy(p, "app;dur=", 8);
	p += 8;
	p += target_fmt_u64(p, dur_us / 1000);
	*p++ = '.';
	uint64_t frac = dur_us % 1000;
	*p++ = (char)('0' + frac / 100);
	*p++ = (char)('0' + frac / 10 % 10);
	*p++ = (char)('0' + frac % 10);
	return (size_t)(p - p0);
}

const struct target_resp *target_choose(struct worker *w, const struct target_route *rt,
                                        bool *garbage, struct target_dyn *dyn, const char *query,
                                        size_t qlen)
{
	*garbage = false;
	dyn->len = 0;
	w->seq++;
	if (!rt)
		return &w->t->plan->not_found;
	const struct target_resp *r = &rt->resps[target_route_pick(rt, &w->rng)];
	if (rt->mis.garbage > 0 &&
	    (rt->mis.garbage >= 1 || rng_next(&w->rng) < rt->mis.garbage_thresh)) {
		*garbage = true;
		return r;
	}
	const struct target_body *b = r->body;
	if (b->kv)
		target_render_kv(dyn, rt->kv, query, qlen);
	else if (b->segs)
		target_render_template(dyn, b, query, qlen, &w->rng, w->seq);
	return r;
}

uint64_t target_ready_at(struct worker *w, const struct target_route *rt, uint64_t *dispatch_ns)
{
	uint64_t t0 = clock_now_ns();
	*dispatch_ns = t0;
	if (rt->work_ns) {
		target_busy_work(rt->work_ns);
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
	return ready;
}

void target_prepare(struct conn *c, const struct target_route *rt, const char *query, size_t qlen)
{
	c->rt = rt;
	c->resp = target_choose(c->w, rt, &c->garbage, &c->dyn, query, qlen);
}

bool target_execute(struct conn *c)
{
	struct worker *w = c->w;
	const struct target_route *rt = c->rt;
	c->req_start_ns = 0;
	if (!rt || rt->simple) {
		bool ok = target_emit(c);
		c->state = C_READ;
		return ok;
	}
	uint64_t ready = target_ready_at(w, rt, &c->dispatch_ns);
	if (ready > w->now) {
		c->ready_ns = ready;
		c->state = C_WAIT;
		return true;
	}
	bool ok = target_emit(c);
	c->state = C_READ;
	return ok;
}
