/* pacer — the start barrier and the hand-in of segment results
 * (docs/distributed.md#the-barrier), over the wire of dist/wire.h.
 *
 * Segment 0 runs the coordinator: a thread of its own with a small
 * blocking HTTP/1.1 server. It holds the barrier until all N segments have
 * checked in, or until the barrier timeout passes, and then gives every
 * segment one start time a margin ahead (those checking in later get that
 * time too: they start at once, late, and their results say by how much).
 * After its own run segment 0 closes the check-in and collects the other
 * segments' results, each one request of its framed result, checked (one
 * frame of a segment result of this plan's count, from a segment that
 * checked in) and kept decoded.
 *
 * The other segments check in (dist_checkin), polling until the start is
 * given or their deadline passes, and at the end hand their result in
 * (dist_handin), retrying until their deadline.
 *
 * One connection at a time, each bounded in size (wire.h) and in time
 * (DIST_IO_TIMEOUT_NS plus one second per 4 MiB of body); a request that is
 * not authenticated by the shared secret gets 401 and changes nothing.
 * Never prints, never exits. */
#ifndef PACER_DIST_DIST_H
#define PACER_DIST_DIST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dist/wire.h"
#include "net/sock.h"

#define DIST_IO_TIMEOUT_NS (5ull * 1000000000ull) /* a request's head, a reply, a connect */

struct dist_coord_cfg {
	uint16_t port;               /* to listen on (0: any free port, for tests) */
	bool loopback;               /* listen on 127.0.0.1 only (tests) */
	uint32_t count;              /* N: segments of the plan, 2..1024 */
	const char *secret;          /* the shared secret (copied) */
	char plan[WIRE_MAC_HEX + 1]; /* the plan's fingerprint (wire_plan_fingerprint) */
	uint64_t barrier_timeout_ns; /* from dist_coord_start: release with those present */
	uint64_t margin_ns;          /* the start: this long after the release */
	uint64_t io_timeout_ns;      /* a request's head (0: DIST_IO_TIMEOUT_NS) */
};

struct dist_coord;

/* Listen on cfg->port (every address, IPv6 and IPv4, unless loopback) and
 * start the coordinator thread (all signals blocked in it), segment 0
 * checked in. 0, or a negative errno (-EADDRINUSE, -ENOMEM, -EINVAL for a
 * bad count or an empty secret). */
int dist_coord_start(const struct dist_coord_cfg *cfg, struct dist_coord **out);

/* The port listened on. */
uint16_t dist_coord_port(const struct dist_coord *c);

/* Block until the barrier releases: every segment checked in, or the
 * barrier timeout passed. *start_ns: the start (CLOCK_REALTIME ns);
 * *checked_in: segments in at the release. */
void dist_coord_wait_release(struct dist_coord *c, uint64_t *start_ns, uint32_t *checked_in);

/* The run is over: a check-in from now on gets 410. */
void dist_coord_close_checkin(struct dist_coord *c);

/* Block until every segment that checked in (0 aside) has handed its
 * result in, or until deadline_ns (CLOCK_MONOTONIC). The count of those
 * still missing. */
uint32_t dist_coord_wait_results(struct dist_coord *c, uint64_t deadline_ns);

/* Segment k (1..N-1): whether it checked in, and its result as handed in
 * (the decoded JSON, *len bytes; borrowed until dist_coord_stop), or NULL. */
bool dist_coord_checked_in(struct dist_coord *c, uint32_t k);
const char *dist_coord_result(struct dist_coord *c, uint32_t k, size_t *len);

/* When the last segment to check in first did (CLOCK_REALTIME ns). */
uint64_t dist_coord_latest_checkin(struct dist_coord *c);

/* Requests refused so far (malformed, not authenticated, another plan),
 * and the last one's reason (a static string, "" when none). */
uint32_t dist_coord_refused(struct dist_coord *c, const char **last_why);

/* Stop the thread, close the socket, free (the results too). NULL is fine. */
void dist_coord_stop(struct dist_coord *c);

/* ---- the other segments ---------------------------------------------------- */

struct dist_peer {
	const char *host;   /* segment 0's name or address */
	uint16_t port;
	const char *secret;
	/* the address host resolved to, kept between requests (resolved again
	 * after a connection to it fails); zero it before the first */
	struct net_addr addr;
	bool resolved;
};

/* Check in as c->segment of c->count and wait for the start: ask again as
 * segment 0 says until it gives the start, retrying while it cannot be
 * reached, until deadline_ns (CLOCK_MONOTONIC). 0 with *start_ns
 * (CLOCK_REALTIME) and *checked_in; else one line in err and
 * -ETIMEDOUT (no start by the deadline: the last failure is named),
 * PACER_EUNSUPPORTED (segment 0 refused: another plan, secret or count,
 * or the run is over), -ENOMEM. */
int dist_checkin(struct dist_peer *p, const struct wire_checkin *c, uint64_t deadline_ns,
		 uint64_t *start_ns, uint32_t *checked_in, char *err, size_t errlen);

/* Hand the framed result frame[len] in, retrying while segment 0 cannot be
 * reached, until deadline_ns. 0; else one line in err and -ETIMEDOUT,
 * PACER_EUNSUPPORTED (refused), -ENOMEM. */
int dist_handin(struct dist_peer *p, const char *frame, size_t len, uint64_t deadline_ns,
		char *err, size_t errlen);

#endif
