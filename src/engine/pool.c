/* pacer — engine: per-host connection pools of a worker. Serving a host's
 * backlog from its idle connections, opening connections for what waits
 * (connect backoff, one probe at a time after failures), making room at the
 * cap by closing another host's least recently used idle connection, opening
 * connections before a step, and sizing the backlog pool. One host is the
 * case of several: the same code, with no other host to share with. */
#include <errno.h>
#include <stdlib.h>

#include "engine/engine_int.h"

/* A host that refuses and has nothing waiting (closed loop drops its
 * requests, which would hold slots of the concurrency) needs a probe
 * connection of its own, when none is under way. */
static inline bool needs_probe(const struct hpool *p)
{
	return host_down(p) && !p->n_connecting;
}

/* At the cap: close the least recently used idle connection of another
 * host to make room for host h, when h has no connection at all, or has
 * fewer than its share and the other host more than its own (so that
 * connections settle at the shares instead of moving back and forth).
 * False when there is none to close (always, with one host). */
static bool evict_idle(struct worker *w, uint32_t h)
{
	bool starved = w->hp[h].n_open == 0;
	if (!starved && w->hp[h].n_open >= w->hp[h].fair)
		return false;
	struct conn *lru = NULL;
	for (uint32_t g = 0; g < w->n_hosts; g++) {
		struct conn *c = w->hp[g].idle.head; /* each idle list is oldest first */
		while (c && c->proto->in_flight(c))
			c = c->next; /* a multiplexed connection with a free stream may have others busy */
		if (g != h && c && (starved || w->hp[g].n_open > w->hp[g].fair) &&
		    (!lru || c->idle_ns < lru->idle_ns))
			lru = c;
	}
	if (!lru)
		return false;
	eng_conn_close(w, lru);
	return true;
}

/* Serve host h's backlog from its idle connections, then open connections
 * for what still waits (after failures one probe at a time; a host that
 * refuses is probed even with nothing waiting, since closed loop drops its
 * requests meanwhile), at the cap making room with evict_idle. */
void eng_serve_host(struct worker *w, uint32_t h, uint64_t now)
{
	const struct engine_cfg *cfg = &w->e->cfg;
	struct hpool *p = &w->hp[h];
	if (!cfg->open_loop && p->q_len && needs_probe(p)) {
		/* closed loop: requests that wait for a host that now refuses,
		 * with no connect under way that could take them, hold slots of
		 * the concurrency; dropped, as closed_issue drops the new ones,
		 * so that a count-bounded run ends */
		while (p->q_len) {
			struct qent q = q_pop(w, p);
			if (q.req & QE_FLOW) { /* its flow ends there (it cannot push again) */
				eng_flow_drop(w, QE_INDEX(q.req), q.due_ns, now);
				continue;
			}
			phase_of(w, q.due_ns)->dropped++;
			live_add(&w->live.dropped, 1);
		}
	}
	while (p->q_len && p->idle.head) {
		struct qent q = q_pop(w, p);
		bool lagged = (q.req & QE_LAGGED) != 0;
		if (q.req & QE_FLOW) {
			uint32_t f = QE_INDEX(q.req);
			eng_conn_send_flow(w, p->idle.head, q.due_ns, w->flows[f].req, lagged, f);
		} else {
			eng_conn_send(w, p->idle.head, q.due_ns, &cfg->reqs[q.req & ~QE_LAGGED],
				      lagged);
		}
	}
	/* protocols that queue (HTTP/2): this turn's requests, a write a connection */
	for (size_t k = 0; k < w->e->n_protos; k++)
		if (w->e->protos[k]->flush_host)
			w->e->protos[k]->flush_host(w, h, now);
	size_t want = p->q_len > p->n_connecting ? p->q_len - p->n_connecting : 0;
	if (!want && needs_probe(p))
		want = 1;
	if (p->connect_fails && want > 1)
		want = p->n_connecting ? 0 : 1;
	while (want-- && now >= p->backoff_until_ns) {
		if (!w->free_slots && !evict_idle(w, h))
			break;
		eng_conn_open(w, h, now);
	}
}

uint64_t eng_backoff_wake(const struct worker *w, uint64_t now)
{
	uint64_t wake = UINT64_MAX;
	for (uint32_t h = 0; h < w->n_hosts; h++) {
		const struct hpool *p = &w->hp[h];
		bool waits = p->q_len || needs_probe(p);
		if (waits && p->backoff_until_ns > now)
			wake = min_u64(wake, p->backoff_until_ns);
	}
	return wake;
}

/* Can host p take a connection before the start (under its share, not
 * backing off)? */
static inline bool preopen_short(const struct hpool *p, uint64_t now)
{
	return p->n_open < p->fair && now >= p->backoff_until_ns;
}

/* Open connections before the start, so the first requests do not pay for
 * them: first up to each host's share, the hosts of the next requests
 * first, then the rest to the hosts of the next requests in turn. (One
 * host: its share is every connection of the worker.) */
void eng_preopen(struct worker *w, uint64_t now)
{
	const struct engine_cfg *cfg = &w->e->cfg;
	uint32_t short_hosts = 0; /* hosts that can take one more in the first pass */
	for (uint32_t h = 0; h < w->n_hosts; h++)
		short_hosts += preopen_short(&w->hp[h], now);
	size_t k = w->next_req;
	for (size_t i = 0; i < cfg->n_reqs && w->free_slots && short_hosts; i++) {
		uint32_t h = cfg->reqs[k].host;
		if (++k == cfg->n_reqs)
			k = 0;
		if (preopen_short(&w->hp[h], now)) {
			eng_conn_open(w, h, now);
			short_hosts -= !preopen_short(&w->hp[h], now);
		}
	}
	k = w->next_req;
	for (uint32_t i = w->n_open; i < w->max_conns && w->free_slots; i++) {
		uint32_t h = cfg->reqs[k].host;
		if (++k == cfg->n_reqs)
			k = 0;
		if (now >= w->hp[h].backoff_until_ns)
			eng_conn_open(w, h, now);
	}
}

int eng_queue_size(struct worker *w, double rate_per_s)
{
	size_t cap = w->e->cfg.queue_cap;
	if (!cap) {
		double c = rate_per_s * QUEUE_DEFAULT_S;
		cap = c < QUEUE_MIN_ENTRIES ? QUEUE_MIN_ENTRIES
		      : c > QUEUE_MAX_ENTRIES ? QUEUE_MAX_ENTRIES
					      : (size_t)c;
	}
	if (cap > (size_t)QE_NONE - 1)
		cap = (size_t)QE_NONE - 1; /* entries are indexed with 32 bits */
	if (cap > w->q_cap) {
		struct qent *q = realloc(w->q, cap * sizeof *q);
		if (!q)
			return -ENOMEM;
		w->q = q;
		w->q_cap = cap;
	}
	/* each host's share by its share of the requests, at least one entry */
	const struct engine *e = w->e;
	for (uint32_t h = 0; h < w->n_hosts; h++) {
		uint64_t s = (uint64_t)w->q_cap * e->host_reqs[h] / e->cfg.n_reqs;
		w->hp[h].q_share = s ? (size_t)s : 1;
	}
	return 0;
}
