/* pacer — engine: the byte transports under the protocols (engine_int.h
 * draws the whole engine): a plain socket (TCP or Unix) and TLS over TCP
 * (QUIC, a transport of datagrams and streams, is xport_quic.c).
 * A transport moves bytes and says what it waits for (eng_conn_want); the
 * protocol on top (proto_h1.c, proto_h2.c) never asks which one it has. */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "engine/engine_int.h"

/* ---- plain: a socket -------------------------------------------------------- */

static int plain_start(struct worker *w, struct conn *c, uint64_t now)
{
	(void)w, (void)c, (void)now;
	return 1; /* nothing to negotiate */
}

static int plain_handshake(struct worker *w, struct conn *c)
{
	(void)w, (void)c;
	return 1;
}

static ssize_t plain_tx(struct worker *w, struct conn *c, const void *buf, size_t len)
{
	for (;;) {
		ssize_t n = write(c->fd, buf, len);
		if (n >= 0)
			return n;
		if (errno == EINTR)
			continue;
		if (errno == EAGAIN || errno == EWOULDBLOCK) {
			eng_conn_want(w, c, EV_IN | EPOLLOUT);
			return -EAGAIN;
		}
		return -errno;
	}
}

static ssize_t plain_rx(struct worker *w, struct conn *c, void *buf, size_t cap,
			uint64_t *rx_rt_ns)
{
	(void)w;
	c->rd_wants_write = false;
	if (c->rx_ts) {
		ssize_t n = net_recv_ts(c->fd, buf, cap, rx_rt_ns);
		return n == -EWOULDBLOCK ? -EAGAIN : n;
	}
	*rx_rt_ns = 0;
	for (;;) {
		ssize_t n = read(c->fd, buf, cap);
		if (n >= 0 || errno != EINTR)
			return n >= 0 ? n : errno == EWOULDBLOCK ? -EAGAIN : -errno;
	}
}

static bool plain_pending(const struct conn *c)
{
	(void)c;
	return false;
}

static void plain_close(struct conn *c) { (void)c; }

static bool plain_alpn_h2(const struct conn *c)
{
	(void)c;
	return false;
}

const struct eng_xport eng_xport_plain = {
	.name = "plain",
	.connect = net_connect_start,
	.start = plain_start,
	.handshake = plain_handshake,
	.tx = plain_tx,
	.rx = plain_rx,
	.pending = plain_pending,
	.close = plain_close,
	.alpn_h2 = plain_alpn_h2,
	.exact_stamps = true,
	.crossed = false,
};

/* ---- TLS over TCP ----------------------------------------------------------- */

/* A TLS failure on an established connection: keep OpenSSL's reason (the
 * error itself is counted by the protocol, as a read or write error). */
static void tls_reason(struct worker *w, struct conn *c)
{
	phase_stats_tls_reason(phase_of(w, clock_now_ns()), tls_fail_reason(c->tls));
}

static void copy_str(char *dst, size_t cap, const char *src)
{
	size_t n = strnlen(src, cap - 1);
	memcpy(dst, src, n);
	dst[n] = '\0';
}

/* Advance the handshake: 1 done (counted, with what was negotiated), 0
 * waiting for the event it registered, -1 failed (counted like a failed
 * connect: errors.tls with its reason, backoff). */
static int tls_step(struct worker *w, struct conn *c)
{
	int rc = tls_handshake(c->tls);
	if (rc == TLS_WANT_READ || rc == TLS_WANT_WRITE) {
		eng_conn_want(w, c, rc == TLS_WANT_WRITE ? EV_IN | EPOLLOUT : EV_IN);
		return 0;
	}
	uint64_t now = clock_now_ns();
	if (rc != 0) {
		struct phase_stats *ph = eng_conn_error(w, c->host, ERRK_TLS, now);
		phase_stats_tls_reason(ph, tls_fail_reason(c->tls));
		eng_connect_failed(w, c->host, now);
		return -1;
	}
	struct phase_stats *ph = phase_of(w, c->connect_start_ns);
	ph->tls_handshakes++;
	if (tls_resumed(c->tls))
		ph->tls_resumed++;
	for (int k = 0; k < 2; k++) { /* what was negotiated: for both phases */
		struct phase_stats *p = k ? &w->meas : &w->warm;
		if (!p->tls_version[0]) {
			copy_str(p->tls_version, sizeof p->tls_version, tls_version(c->tls));
			copy_str(p->tls_cipher, sizeof p->tls_cipher, tls_cipher(c->tls));
		}
	}
	hist_record(&ph->timing[TIM_HANDSHAKE], now - c->hs_start_ns);
	return 1;
}

/* Connected over TCP: start TLS. The handshake keeps the connect deadline
 * and counts as connecting until it is done. */
static int tls_start(struct worker *w, struct conn *c, uint64_t now)
{
	const struct engine_host *h = &w->e->hosts[c->host];
	c->state = CS_HANDSHAKE;
	c->hs_start_ns = now;
	if (tls_conn_new(&c->tls, h->tls, c->fd, h->tls_host,
			 w->e->cfg.tls_resume ? &w->hp[c->host].tls_resume : NULL) < 0) {
		struct phase_stats *ph = eng_conn_error(w, c->host, ERRK_TLS, now);
		phase_stats_tls_reason(ph, "out of memory for a TLS connection");
		eng_connect_failed(w, c->host, now);
		return -1;
	}
	return tls_step(w, c);
}

static ssize_t tls_tx(struct worker *w, struct conn *c, const void *buf, size_t len)
{
	ssize_t n = tls_write(c->tls, buf, len);
	if (n > 0)
		return n;
	if (n == TLS_WANT_WRITE || n == TLS_WANT_READ) {
		eng_conn_want(w, c, n == TLS_WANT_WRITE ? EV_IN | EPOLLOUT : EV_IN);
		return -EAGAIN;
	}
	tls_reason(w, c);
	return -EPROTO;
}

static ssize_t tls_rx(struct worker *w, struct conn *c, void *buf, size_t cap,
		      uint64_t *rx_rt_ns)
{
	ssize_t n = tls_read(c->tls, buf, cap);
	*rx_rt_ns = c->rx_ts ? tls_rx_time(c->tls) : 0;
	c->rd_wants_write = n == TLS_WANT_WRITE;
	if (n == TLS_WANT_WRITE) {
		eng_conn_want(w, c, c->ev | EPOLLOUT);
		return -EAGAIN;
	}
	if (n >= 0)
		return n;
	if (n == TLS_WANT_READ)
		return -EAGAIN;
	tls_reason(w, c);
	return -EPROTO;
}

static bool xtls_pending(const struct conn *c) { return tls_pending(c->tls); }

static void tls_close(struct conn *c)
{
	tls_conn_free(c->tls);
	c->tls = NULL;
}

static bool xtls_alpn_h2(const struct conn *c) { return tls_alpn_h2(c->tls); }

const struct eng_xport eng_xport_tls = {
	.name = "tls",
	.connect = net_connect_start,
	.start = tls_start,
	.handshake = tls_step,
	.tx = tls_tx,
	.rx = tls_rx,
	.pending = xtls_pending,
	.close = tls_close,
	.alpn_h2 = xtls_alpn_h2,
	.exact_stamps = false,
	.crossed = true,
};
