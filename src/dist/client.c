/* pacer — the other segments' side of the barrier and the hand-in (see
 * dist.h): one request per connection to segment 0, retried while it
 * cannot be reached. */
#include "dist/dist.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "net/sock.h"
#include "util/clock.h"
#include "util/err.h"
#include "util/text.h"

static void sleep_ns(uint64_t ns)
{
	struct timespec ts = {(time_t)(ns / 1000000000u), (long)(ns % 1000000000u)};
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR) {
	}
}

/* Wait for events on fd until deadline: 1, or -ETIMEDOUT, or -errno. */
static int wait_fd(int fd, short events, uint64_t deadline)
{
	for (;;) {
		uint64_t now = clock_now_ns();
		if (now >= deadline)
			return -ETIMEDOUT;
		struct pollfd p = {.fd = fd, .events = events};
		int n = poll(&p, 1, (int)((deadline - now) / 1000000u) + 1);
		if (n > 0)
			return 1;
		if (n < 0 && errno != EINTR)
			return -errno;
	}
}

/* One request to p: path and body; its reply into *r. 0; a negative errno
 * or PACER_ERESOLVE when segment 0 cannot be reached or does not answer
 * in time (worth retrying), with *why; PACER_EPARSE or PACER_EUNSUPPORTED
 * when the reply is malformed or not authenticated. */
static int exchange(struct dist_peer *p, const char *path, const char *body, size_t len,
		    struct wire_reply *r, const char **why)
{
	*why = "";
	int rc;
	if (!p->resolved) {
		rc = net_resolve(p->host, p->port, &p->addr, why);
		if (rc)
			return rc;
		p->resolved = true;
	}
	const struct net_addr a = p->addr;
	char mac[WIRE_MAC_HEX + 1], head[512];
	if (!wire_mac_request(p->secret, path, body, len, mac))
		return -ENOMEM;
	size_t hl = wire_format_request_head(p->host, path, len, mac, head, sizeof head);
	if (!hl)
		return -EINVAL;
	int fd = net_connect_start(&a);
	if (fd < 0) {
		*why = "cannot connect";
		p->resolved = false;
		return fd;
	}
	uint64_t deadline = clock_now_ns() + DIST_IO_TIMEOUT_NS + (uint64_t)(len >> 22) * 1000000000ull;
	rc = wait_fd(fd, POLLOUT, deadline);
	if (rc > 0)
		rc = net_connect_result(fd);
	if (rc) {
		*why = "cannot connect";
		close(fd);
		p->resolved = false; /* the name may point elsewhere now */
		return rc < 0 ? rc : -EIO;
	}
	/* the head, then the body */
	const char *parts[2] = {head, body};
	size_t sizes[2] = {hl, len};
	for (int i = 0; i < 2 && !rc; i++) {
		size_t off = 0;
		while (off < sizes[i] && !rc) {
			ssize_t w = send(fd, parts[i] + off, sizes[i] - off, MSG_NOSIGNAL);
			if (w > 0)
				off += (size_t)w;
			else if (w < 0 && (errno == EAGAIN || errno == EINTR))
				rc = wait_fd(fd, POLLOUT, deadline) > 0 ? 0 : -ETIMEDOUT;
			else
				rc = w < 0 ? -errno : -EIO;
		}
	}
	char buf[WIRE_MAX_HEAD + WIRE_MAX_REPLY];
	size_t have = 0;
	while (!rc) {
		int w = wait_fd(fd, POLLIN, deadline);
		if (w < 0) {
			rc = w;
			break;
		}
		ssize_t n = read(fd, buf + have, sizeof buf - have);
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			continue;
		if (n < 0) {
			rc = -errno;
			break;
		}
		if (n == 0)
			break; /* the server closes after its reply */
		have += (size_t)n;
		if (have == sizeof buf) {
			rc = PACER_EPARSE;
			*why = "a reply over its cap";
		}
	}
	close(fd);
	if (rc) {
		if (!**why)
			*why = rc == -ETIMEDOUT ? "no reply in time" : "the connection failed";
		return rc;
	}
	if (have == 0) {
		*why = "the connection closed without a reply";
		return -ECONNRESET;
	}
	return wire_parse_reply(buf, have, p->secret, mac, r, why);
}

static bool retryable(int rc)
{
	return rc != PACER_EPARSE && rc != PACER_EUNSUPPORTED && rc != -ENOMEM && rc != -EINVAL;
}

/* What the tries that did not reach segment 0 met, for the message when
 * they run out: a name that never resolved reads differently from an
 * address that refused or a server that did not answer. */
struct tally {
	unsigned tries, unresolved, unreachable, unanswered;
	uint64_t first_ns;
	char addr[64]; /* the address the name last resolved to, or "" */
};

static void tally_add(struct tally *t, const struct dist_peer *p, int rc)
{
	if (!t->tries++)
		t->first_ns = clock_now_ns();
	if (rc == PACER_ERESOLVE)
		t->unresolved++;
	else if (!p->resolved && p->addr.len)
		t->unreachable++; /* exchange forgets an address it could not connect to */
	else
		t->unanswered++;
	if (p->addr.len && !net_addr_str(&p->addr, t->addr, sizeof t->addr))
		t->addr[0] = 0;
}

/* " (N tries over S s: a name did not resolve, b could not connect, c no
 * reply; it last resolved to ADDR)" into out. */
static void tally_text(const struct tally *t, char *out, size_t cap)
{
	if (!t->tries) {
		snprintf(out, cap, "no try");
		return;
	}
	size_t at = (size_t)snprintf(out, cap, "%u tr%s over %.1f s:", t->tries,
				     t->tries == 1 ? "y" : "ies",
				     (double)(clock_now_ns() - t->first_ns) / 1e9);
	const char *sep = " ";
	if (t->unresolved && at < cap) {
		at += (size_t)snprintf(out + at, cap - at, "%sthe name did not resolve in %u", sep,
				       t->unresolved);
		sep = ", ";
	}
	if (t->unreachable && at < cap) {
		at += (size_t)snprintf(out + at, cap - at, "%scould not connect in %u", sep,
				       t->unreachable);
		sep = ", ";
	}
	if (t->unanswered && at < cap)
		at += (size_t)snprintf(out + at, cap - at, "%sno reply in %u", sep, t->unanswered);
	if (at < cap)
		snprintf(out + at, cap - at,
			 t->addr[0] ? "; the name last resolved to %s"
				    : "; the name never resolved",
			 t->addr);
}

int dist_checkin(struct dist_peer *p, const struct wire_checkin *c, uint64_t deadline_ns,
		 uint64_t *start_ns, uint32_t *checked_in, char *err, size_t errlen)
{
	char body[WIRE_MAX_CHECKIN];
	size_t len = wire_format_checkin(c, body, sizeof body);
	if (!len) {
		text_errf(err, errlen, "a check-in that does not fit the wire (host name '%s')", c->host);
		return PACER_EUNSUPPORTED;
	}
	uint64_t backoff = 100000000u; /* 100 ms while segment 0 cannot be reached, up to 1 s */
	int last = 0;
	const char *last_why = "";
	struct wire_reply waited = {0}; /* segment 0's last "wait" */
	struct tally t = {0};
	while (clock_now_ns() < deadline_ns) {
		struct wire_reply r;
		const char *why;
		int rc = exchange(p, WIRE_PATH_CHECKIN, body, len, &r, &why);
		if (!rc && r.kind == WIRE_START) {
			*start_ns = r.start_ns;
			*checked_in = r.n;
			return 0;
		}
		if (!rc && r.kind == WIRE_WAIT) {
			waited = r;
			last = 0;
			backoff = 100000000u;
			sleep_ns((uint64_t)r.retry_ms * 1000000u);
			continue;
		}
		if (!rc) {
			text_errf(err, errlen, "%s:%u refused the check-in (%d): %s", p->host, p->port,
				  r.status, r.kind == WIRE_ERROR ? r.msg : "an unexpected reply");
			return PACER_EUNSUPPORTED;
		}
		if (!retryable(rc)) {
			text_errf(err, errlen, "%s:%u: %s", p->host, p->port, why);
			return rc == -ENOMEM ? rc : PACER_EUNSUPPORTED;
		}
		last = rc;
		last_why = why;
		tally_add(&t, p, rc);
		sleep_ns(backoff);
		if (backoff < 1000000000u)
			backoff *= 2;
	}
	if (waited.kind && !last)
		text_errf(err, errlen, "segment 0 at %s:%u had not given the start when the barrier "
				       "timeout passed (%u of %u segments in)",
			  p->host, p->port, waited.n, waited.count);
	else if (last) {
		char tl[256];
		tally_text(&t, tl, sizeof tl);
		text_errf(err, errlen,
			  "no start from segment 0 at %s:%u before the barrier timeout "
			  "(last: %s: %s; %s)",
			  p->host, p->port, last_why, err_name(last), tl);
	} else
		text_errf(err, errlen, "no start from segment 0 at %s:%u before the barrier timeout",
			  p->host, p->port);
	return -ETIMEDOUT;
}

int dist_handin(struct dist_peer *p, const char *frame, size_t len, uint64_t deadline_ns,
		char *err, size_t errlen)
{
	uint64_t backoff = 250000000u;
	int last = 0;
	const char *last_why = "";
	struct tally t = {0};
	while (clock_now_ns() < deadline_ns) {
		struct wire_reply r;
		const char *why;
		int rc = exchange(p, WIRE_PATH_RESULT, frame, len, &r, &why);
		if (!rc && r.kind == WIRE_STORED)
			return 0;
		if (!rc && r.status == 503) {
			sleep_ns(backoff);
			continue;
		}
		if (!rc) {
			text_errf(err, errlen, "%s:%u refused the result (%d): %s", p->host, p->port,
				  r.status, r.kind == WIRE_ERROR ? r.msg : "an unexpected reply");
			return PACER_EUNSUPPORTED;
		}
		if (!retryable(rc)) {
			text_errf(err, errlen, "%s:%u: %s", p->host, p->port, why);
			return rc == -ENOMEM ? rc : PACER_EUNSUPPORTED;
		}
		last = rc;
		last_why = why;
		tally_add(&t, p, rc);
		sleep_ns(backoff);
		if (backoff < 2000000000u)
			backoff *= 2;
	}
	char tl[256];
	tally_text(&t, tl, sizeof tl);
	text_errf(err, errlen,
		  "segment 0 at %s:%u did not take the result before the deadline "
		  "(last: %s: %s; %s)",
		  p->host, p->port, last_why[0] ? last_why : "no attempt",
		  last ? err_name(last) : "", tl);
	return -ETIMEDOUT;
}
