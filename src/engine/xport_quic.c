/* pacer — engine: QUIC, the transport under HTTP/3 (engine_int.h draws
 * the whole engine): eng_xport_quic.
 *
 * A connection is a connected, non-blocking UDP socket in the worker's
 * epoll set and an ngtcp2 client connection with its GnuTLS session
 * (net/quic.c). Datagrams are read in batches (recvmmsg, GRO runs split
 * into their datagrams), each with the kernel's arrival stamp, which the
 * protocol uses to time responses read late; packets are written in
 * batches of ngtcp2's send quantum and sent at once (GSO where the kernel
 * has it, else sendmmsg). ngtcp2's expiry (loss detection, ACK delay,
 * pacing, idle timeout) is the connection's timer in the worker's heap
 * (timers.c), so it costs no wake-up of its own.
 *
 * The handshake is the connection's set-up: it counts as connecting until
 * it completes (the connect deadline, --timeout), then the handshake time
 * is recorded and HTTP/3 begins at once, from inside ngtcp2's callback
 * (eng_conn_begin), so that the server's first streams find it ready.
 * Stream events go to the protocol's stream ops; the protocol's bytes are
 * pulled when packets are written.
 *
 * What QUIC adds is counted per phase (struct quic_stats) and the losses
 * and congestion-window stalls per second: how each connection ended
 * (idle timeout, the server's CONNECTION_CLOSE and its code, a stateless
 * reset, a version negotiation, a violation pacer closed on), packets of
 * request data declared lost (ngtcp2's stream loss counts), congestion
 * events, probe timeouts, datagrams sent, received and dropped.
 *
 * Memory: the worker's receive slots and packet buffer are made once; a
 * connection allocates its state when it opens. Per request nothing is
 * allocated here; ngtcp2 allocates its stream objects (from a pool it
 * keeps per connection) and the frames it queues, GnuTLS nothing after
 * the handshake. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <ngtcp2/ngtcp2.h>

#include "engine/engine_int.h"
#include "engine/xport_quic_int.h"
#include "net/quic.h"
#include "net/udp.h"

#define QUIC_PKT_CAP 1500     /* bytes of one packet's slot (ngtcp2 sends 1452 at most) */
#define QUIC_RX_BATCHES 4     /* receive calls a turn (level-triggered: the rest next turn) */
#define QUIC_IDLE_TIMEOUT_NS (30ull * NS_PER_S)
#define QUIC_UNI_STREAMS 16   /* the server's unidirectional streams (HTTP/3 opens 3) */
#define QUIC_STREAM_VECS 16
#define H3_NO_ERROR 0x100
#define HS_ANSWERED \
	"the QUIC handshake did not complete within --timeout (the server answered, with " \
	"nothing that completed it)"

struct eng_quic_worker {
	struct udp_rx rx;
	uint8_t *tx;                /* UDP_TX_MAX packets of QUIC_PKT_CAP */
	size_t lens[UDP_TX_MAX];
};

/* ---- per worker -------------------------------------------------------------- */

static int quic_worker_init(struct worker *w)
{
	bool any = false;
	for (uint32_t h = 0; h < w->e->n_hosts; h++)
		any |= w->e->xport[h] == &eng_xport_quic;
	if (!any)
		return 0;
	struct eng_quic_worker *qw = calloc(1, sizeof *qw);
	if (!qw)
		return -ENOMEM;
	qw->tx = malloc((size_t)UDP_TX_MAX * QUIC_PKT_CAP);
	if (!qw->tx || udp_rx_init(&qw->rx)) {
		free(qw->tx);
		free(qw);
		return -ENOMEM;
	}
	w->quic = qw;
	return 0;
}

static void quic_worker_free(struct worker *w)
{
	if (!w->quic)
		return;
	udp_rx_free(&w->quic->rx);
	free(w->quic->tx);
	free(w->quic);
	w->quic = NULL;
}

/* ---- counting ----------------------------------------------------------------- */

/* The phase of an event now, and its second in the measured phase. */
static void count_lost(struct worker *w, uint64_t n, uint64_t now)
{
	struct phase_stats *ph = phase_of(w, now);
	ph->quic.pkts_lost += n;
	if (ph == &w->meas) {
		struct sec_rec *r = series_at(w, now);
		if (r)
			r->quic_lost += n;
	}
}

static void count_stall(struct worker *w, uint64_t now)
{
	struct phase_stats *ph = phase_of(w, now);
	ph->quic.cwnd_stalls++;
	if (ph == &w->meas) {
		struct sec_rec *r = series_at(w, now);
		if (r)
			r->quic_stalls++;
	}
}

/* Congestion events and probe timeouts since the last look. */
static void look_at_recovery(struct worker *w, struct eng_quic *q, uint64_t now)
{
	ngtcp2_conn_stat cs;
	ngtcp2_conn_get_conn_stat(q->q.conn, &cs);
	struct phase_stats *ph = phase_of(w, now);
	if (cs.congestion_recovery_start_ts != UINT64_MAX &&
	    cs.congestion_recovery_start_ts != q->recovery_ts) {
		q->recovery_ts = cs.congestion_recovery_start_ts;
		ph->quic.congestion_events++;
	}
	if (cs.pto_count > q->pto_seen)
		ph->quic.pto += cs.pto_count - q->pto_seen;
	q->pto_seen = cs.pto_count;
}

/* A connection of host h failed as HTTP/3 (errors.protocol), for why: its
 * reason begins "HTTP/3: ", as the protocol's own do (eng_quic_fail), which
 * is how reports tell these reasons from the TLS handshakes'. */
static void count_failed(struct worker *w, uint32_t h, uint64_t now, const char *why)
{
	char r[QUIC_REASON_CAP + 8];
	snprintf(r, sizeof r, "HTTP/3: %s", why);
	phase_stats_tls_reason(eng_conn_error(w, h, ERRK_PROTOCOL, now), r);
}

/* c's QUIC connection ended: liberr the ngtcp2 error (NGTCP2_ERR_DRAINING:
 * the server closed it, or reset it), or sock_err a socket's error (the
 * ICMP of a port where nothing listens), or the protocol's failure
 * (q->failed). Counted once, by kind: before the handshake completed, as
 * a failed connect (with backoff); after, in quic_stats, and as
 * errors.protocol when it is a failure (a close without error, or the idle
 * timeout, is none: the requests in flight are counted by the protocol). */
static void quic_end(struct worker *w, struct conn *c, int liberr, int sock_err)
{
	struct eng_quic *q = c->quic;
	if (q->ended)
		return;
	q->ended = true;
	q->end_err = liberr;
	uint64_t now = clock_now_ns();
	uint32_t h = c->host;
	struct phase_stats *ph = phase_of(w, now);
	char why[QUIC_REASON_CAP];
	if (sock_err) {
		q->silent = true;
		if (!q->hs_done) {
			eng_connect_error(w, h, sock_err, now);
			eng_connect_failed(w, h, now);
			return;
		}
		/* the server's process or port went away (ICMP port unreachable):
		 * as a TCP reset, the server closed it; its streams in flight are
		 * counted by the close. Not a protocol failure. */
		ph->quic.close_unreachable++;
		ph->closed_by_server++;
		return;
	}
	if (q->failed) { /* the protocol's, counted by eng_quic_fail */
		ph->quic.close_local++;
		if (!q->hs_done)
			eng_connect_failed(w, h, now);
		return;
	}
	quic_client_reason(&q->q, liberr, why, sizeof why);
	switch (liberr) {
	case NGTCP2_ERR_DRAINING:
	case NGTCP2_ERR_CLOSING: {
		q->silent = true;
		if (q->reset) {
			ph->quic.close_reset++;
			count_failed(w, h, now, "the server reset the QUIC connection (stateless reset)");
			break;
		}
		ngtcp2_connection_close_error e;
		ngtcp2_conn_get_connection_close_error(q->q.conn, &e);
		bool app = e.type == NGTCP2_CONNECTION_CLOSE_ERROR_CODE_TYPE_APPLICATION;
		if (app) {
			ph->quic.close_peer_app++;
			ph->quic.close_app_codes[h3_err_index(e.error_code)]++;
		} else {
			ph->quic.close_peer++;
		}
		bool clean = app ? e.error_code == H3_NO_ERROR : e.error_code == 0;
		if (clean && q->hs_done) {
			ph->closed_by_server++;
		} else {
			bool tls = !app && e.error_code >= 0x100 && e.error_code <= 0x1ff;
			if (tls && !q->hs_done)
				phase_stats_tls_reason(eng_conn_error(w, h, ERRK_TLS, now), why);
			else
				count_failed(w, h, now, why);
		}
		break;
	}
	case NGTCP2_ERR_IDLE_CLOSE:
		q->silent = true;
		ph->quic.close_idle++;
		break;
	case NGTCP2_ERR_HANDSHAKE_TIMEOUT:
		/* ngtcp2's own deadline (--timeout) before the engine's: counted as
		 * the engine's would count it (quic_hs_timeout) */
		q->silent = true;
		if (q->got_pkt)
			phase_stats_tls_reason(eng_conn_error(w, h, ERRK_TLS, now), HS_ANSWERED);
		else
			eng_connect_error(w, h, ETIMEDOUT, now);
		break;
	case NGTCP2_ERR_RECV_VERSION_NEGOTIATION:
	case NGTCP2_ERR_VERSION_NEGOTIATION_FAILURE:
		q->silent = true;
		ph->quic.version_negotiation++;
		count_failed(w, h, now, why);
		break;
	case NGTCP2_ERR_CRYPTO:
		if (q->hs_done)
			count_failed(w, h, now, why);
		else
			phase_stats_tls_reason(eng_conn_error(w, h, ERRK_TLS, now), why);
		break;
	default:
		ph->quic.close_local++;
		count_failed(w, h, now, why);
	}
	if (!q->hs_done)
		eng_connect_failed(w, h, now);
}

/* ---- ngtcp2 callbacks (inside ngtcp2_conn_read_pkt / writev / expiry) ------------- */

static const struct eng_stream_ops *ops_of(const struct eng_quic *q)
{
	return q->c->proto ? q->c->proto->streams : NULL;
}

static int on_handshake_completed(ngtcp2_conn *conn, void *ud)
{
	(void)conn;
	struct eng_quic *q = ud;
	struct worker *w = q->w;
	struct conn *c = q->c;
	uint64_t now = clock_now_ns();
	q->hs_done = true;
	struct phase_stats *ph = phase_of(w, c->connect_start_ns);
	ph->conns_opened++; /* established: a UDP socket alone is not a connection */
	ph->host[c->host].conns_opened++;
	ph->quic.handshakes++;
	ph->tls_handshakes++;
	ph->quic.gso |= q->caps.gso;
	ph->quic.gro |= q->caps.gro;
	for (int k = 0; k < 2; k++) { /* what was negotiated: for both phases */
		struct phase_stats *p = k ? &w->meas : &w->warm;
		if (!p->tls_version[0]) {
			snprintf(p->tls_version, sizeof p->tls_version, "%s", quic_tls_version(&q->q));
			snprintf(p->tls_cipher, sizeof p->tls_cipher, "%s", quic_tls_cipher(&q->q));
		}
	}
	hist_record(&ph->timing[TIM_HANDSHAKE], now - c->hs_start_ns);
	eng_conn_begin(w, c, now); /* HTTP/3, before its first stream bytes */
	return q->failed ? NGTCP2_ERR_CALLBACK_FAILURE : 0;
}

static int on_recv_stream_data(ngtcp2_conn *conn, uint32_t flags, int64_t sid, uint64_t off,
			       const uint8_t *data, size_t len, void *ud, void *sud)
{
	(void)off, (void)sud;
	struct eng_quic *q = ud;
	const struct eng_stream_ops *ops = ops_of(q);
	if (!ops) { /* nothing to hand it to: consumed (cannot happen after the handshake) */
		ngtcp2_conn_extend_max_stream_offset(conn, sid, len);
		ngtcp2_conn_extend_max_offset(conn, len);
		return 0;
	}
	if (ops->recv(q->w, q->c, sid, data, len, flags & NGTCP2_STREAM_DATA_FLAG_FIN))
		return NGTCP2_ERR_CALLBACK_FAILURE;
	return 0;
}

static int on_acked(ngtcp2_conn *conn, int64_t sid, uint64_t off, uint64_t len, void *ud,
		    void *sud)
{
	(void)conn, (void)off, (void)sud;
	struct eng_quic *q = ud;
	const struct eng_stream_ops *ops = ops_of(q);
	return ops && ops->acked(q->w, q->c, sid, len) ? NGTCP2_ERR_CALLBACK_FAILURE : 0;
}

static int on_stream_close(ngtcp2_conn *conn, uint32_t flags, int64_t sid, uint64_t code,
			   void *ud, void *sud)
{
	(void)sud;
	struct eng_quic *q = ud;
	size_t lost = ngtcp2_conn_get_stream_loss_count(conn, sid);
	if (lost)
		count_lost(q->w, lost, clock_now_ns());
	if (!(flags & NGTCP2_STREAM_CLOSE_FLAG_APP_ERROR_CODE_SET))
		code = H3_NO_ERROR;
	if (!ngtcp2_is_bidi_stream(sid) && !ngtcp2_conn_is_local_stream(conn, sid))
		ngtcp2_conn_extend_max_streams_uni(conn, 1); /* room for another of the server's */
	const struct eng_stream_ops *ops = ops_of(q);
	return ops && ops->closed(q->w, q->c, sid, code) ? NGTCP2_ERR_CALLBACK_FAILURE : 0;
}

static int on_stream_reset(ngtcp2_conn *conn, int64_t sid, uint64_t final_size, uint64_t code,
			   void *ud, void *sud)
{
	(void)conn, (void)final_size, (void)sud;
	struct eng_quic *q = ud;
	const struct eng_stream_ops *ops = ops_of(q);
	return ops && ops->reset(q->w, q->c, sid, code) ? NGTCP2_ERR_CALLBACK_FAILURE : 0;
}

static int on_stop_sending(ngtcp2_conn *conn, int64_t sid, uint64_t code, void *ud, void *sud)
{
	(void)conn, (void)sud;
	struct eng_quic *q = ud;
	const struct eng_stream_ops *ops = ops_of(q);
	return ops && ops->stop_sending(q->w, q->c, sid, code) ? NGTCP2_ERR_CALLBACK_FAILURE : 0;
}

static int on_more_streams(ngtcp2_conn *conn, uint64_t max, void *ud)
{
	(void)conn, (void)max;
	struct eng_quic *q = ud;
	const struct eng_stream_ops *ops = ops_of(q);
	if (ops)
		ops->more_streams(q->w, q->c);
	return 0;
}

static int on_credit(ngtcp2_conn *conn, int64_t sid, uint64_t max, void *ud, void *sud)
{
	(void)conn, (void)max, (void)sud;
	struct eng_quic *q = ud;
	const struct eng_stream_ops *ops = ops_of(q);
	return ops && ops->credit(q->w, q->c, sid) ? NGTCP2_ERR_CALLBACK_FAILURE : 0;
}

static int on_stateless_reset(ngtcp2_conn *conn, const ngtcp2_pkt_stateless_reset *sr, void *ud)
{
	(void)conn, (void)sr;
	((struct eng_quic *)ud)->reset = true;
	return 0;
}

static const ngtcp2_callbacks quic_cbs = {
	.handshake_completed = on_handshake_completed,
	.recv_stream_data = on_recv_stream_data,
	.acked_stream_data_offset = on_acked,
	.stream_close = on_stream_close,
	.stream_reset = on_stream_reset,
	.stream_stop_sending = on_stop_sending,
	.extend_max_local_streams_bidi = on_more_streams,
	.extend_max_stream_data = on_credit,
	.recv_stateless_reset = on_stateless_reset,
};

/* ---- reading and writing --------------------------------------------------------- */

/* Send n packets of the worker's buffer. Datagrams the socket does not take
 * are dropped (QUIC resends what they carried). 0, or a socket error. */
static int send_batch(struct worker *w, struct conn *c, size_t n, uint64_t now)
{
	struct eng_quic_worker *qw = w->quic;
	struct eng_quic *q = c->quic;
	struct phase_stats *ph = phase_of(w, now);
	size_t off = 0, done = 0;
	while (done < n) {
		int k = udp_send(c->fd, &q->caps, qw->tx + off, qw->lens + done, n - done);
		if (k == -EAGAIN) {
			ph->quic.tx_dropped += n - done;
			return 0;
		}
		if (k < 0)
			return k == -EMSGSIZE || k == -ENOBUFS ? 0 : k;
		for (int i = 0; i < k; i++) {
			ph->bytes_out += qw->lens[done];
			off += qw->lens[done++];
		}
		ph->quic.pkts_sent += (uint64_t)k;
	}
	return 0;
}

int eng_quic_flush(struct worker *w, struct conn *c, uint64_t now)
{
	struct eng_quic *q = c->quic;
	struct eng_quic_worker *qw = w->quic;
	ngtcp2_conn *conn = q->q.conn;
	if (q->ended)
		return -1;
	const struct eng_stream_ops *ops = ops_of(q);
	size_t pmax = ngtcp2_conn_get_max_tx_udp_payload_size(conn);
	if (pmax > QUIC_PKT_CAP)
		pmax = QUIC_PKT_CAP;
	size_t quantum = ngtcp2_conn_get_send_quantum(conn) / pmax;
	quantum = quantum < 1 ? 1 : quantum > UDP_TX_MAX ? UDP_TX_MAX : quantum;
	size_t n = 0, off = 0; /* packets in the batch, laid end to end */
	bool stalled = false;
	ngtcp2_path_storage ps;
	ngtcp2_path_storage_zero(&ps);
	while (n < quantum) {
		int64_t sid = -1;
		int fin = 0;
		long nv = 0;
		ngtcp2_vec v[QUIC_STREAM_VECS];
		if (ops && ngtcp2_conn_get_max_data_left(conn)) {
			nv = ops->pull(w, c, &sid, &fin, v, QUIC_STREAM_VECS);
			if (nv < 0 || q->failed) {
				quic_end(w, c, NGTCP2_ERR_CALLBACK_FAILURE, 0);
				break;
			}
		}
		uint32_t fl = NGTCP2_WRITE_STREAM_FLAG_MORE | (fin ? NGTCP2_WRITE_STREAM_FLAG_FIN : 0);
		ngtcp2_ssize nd = -1;
		ngtcp2_pkt_info pi;
		ngtcp2_ssize k = ngtcp2_conn_writev_stream(conn, &ps.path, &pi, qw->tx + off, pmax, &nd,
							   fl, sid, v, (size_t)nv, now);
		if (k == NGTCP2_ERR_STREAM_DATA_BLOCKED) {
			ops->blocked(w, c, sid);
			continue;
		}
		if (k == NGTCP2_ERR_STREAM_SHUT_WR) {
			ops->shut_wr(w, c, sid);
			continue;
		}
		if (k == NGTCP2_ERR_WRITE_MORE) {
			if (ops->wrote(w, c, sid, (size_t)nd) || q->failed) {
				quic_end(w, c, NGTCP2_ERR_CALLBACK_FAILURE, 0);
				break;
			}
			continue;
		}
		if (k < 0) {
			quic_end(w, c, (int)k, 0);
			break;
		}
		if (nd > 0 && (ops->wrote(w, c, sid, (size_t)nd) || q->failed)) {
			quic_end(w, c, NGTCP2_ERR_CALLBACK_FAILURE, 0);
			break;
		}
		if (k == 0) {
			/* request bytes to send and none written: the congestion
			 * window is full (or pacing holds them) */
			stalled = nv > 0;
			break;
		}
		qw->lens[n++] = (size_t)k;
		off += (size_t)k;
	}
	int rc = n ? send_batch(w, c, n, now) : 0;
	ngtcp2_conn_update_pkt_tx_time(conn, now);
	if (rc < 0) {
		quic_end(w, c, 0, rc);
		return -1;
	}
	if (q->ended)
		return -1;
	if (stalled && !q->stalled) {
		ngtcp2_conn_stat cs;
		ngtcp2_conn_get_conn_stat(conn, &cs);
		if (cs.bytes_in_flight >= cs.cwnd)
			count_stall(w, now);
	}
	q->stalled = stalled;
	eng_timer_set(w, c, ngtcp2_conn_get_expiry(conn));
	return 0;
}

int eng_quic_input(struct worker *w, struct conn *c)
{
	struct eng_quic *q = c->quic;
	struct eng_quic_worker *qw = w->quic;
	ngtcp2_path path = {
		.local = {.addr = (ngtcp2_sockaddr *)&q->local.ss, .addrlen = q->local.len},
		.remote = {.addr = (ngtcp2_sockaddr *)&w->e->hosts[c->host].addr.ss,
			   .addrlen = w->e->hosts[c->host].addr.len},
	};
	uint64_t now = clock_now_ns();
	for (int b = 0; b < QUIC_RX_BATCHES; b++) {
		int n = udp_recv(c->fd, &qw->rx);
		if (n < 0) {
			quic_end(w, c, 0, n);
			return -1;
		}
		if (n == 0)
			break;
		now = clock_now_ns();
		struct phase_stats *ph = phase_of(w, now);
		for (unsigned i = 0; i < qw->rx.n; i++) {
			if (qw->rx.trunc[i]) {
				ph->quic.rx_dropped++;
				continue;
			}
			const uint8_t *d = udp_rx_data(&qw->rx, i);
			size_t len = qw->rx.len[i], seg = qw->rx.seg[i] ? qw->rx.seg[i] : len;
			q->rx_rt = qw->rx.rx_rt[i];
			q->got_pkt = true;
			for (size_t off = 0; off < len; off += seg) {
				size_t k = len - off < seg ? len - off : seg;
				ph->quic.pkts_recv++;
				ph->bytes_in += k;
				ngtcp2_pkt_info pi = {0};
				int rv = ngtcp2_conn_read_pkt(q->q.conn, &path, &pi, d + off, k, now);
				if (rv == 0 && !q->failed)
					continue;
				q->rx_rt = 0;
				quic_end(w, c, rv ? rv : NGTCP2_ERR_CALLBACK_FAILURE, 0);
				return -1;
			}
		}
		if (n < UDP_RX_SLOTS)
			break;
	}
	q->rx_rt = 0;
	look_at_recovery(w, q, now);
	return eng_quic_flush(w, c, clock_now_ns());
}

/* ---- the transport ------------------------------------------------------------- */

static int quic_connect(const struct net_addr *a) { return net_udp_connect(a); }

/* The socket is connected (at once: UDP): make the QUIC connection and send
 * its first flight. It counts as connecting until the handshake completes. */
static int quic_start(struct worker *w, struct conn *c, uint64_t now)
{
	const struct engine *e = w->e;
	const struct engine_host *eh = &e->hosts[c->host];
	const struct engine_cfg *cfg = &e->cfg;
	c->state = CS_HANDSHAKE;
	c->hs_start_ns = now;
	struct eng_quic *q = calloc(1, sizeof *q);
	char err[QUIC_REASON_CAP] = "out of memory for a QUIC connection";
	int rc = q ? 0 : -ENOMEM;
	if (q) {
		q->w = w;
		q->c = c;
		q->recovery_ts = UINT64_MAX;
		q->local.len = sizeof q->local.ss;
		if (getsockname(c->fd, (struct sockaddr *)&q->local.ss, &q->local.len) < 0)
			rc = -errno;
		net_udp_caps(c->fd, &q->caps);
	}
	if (!rc) {
		uint64_t sw = cfg->h2_window ? cfg->h2_window : ENGINE_H3_STREAM_WINDOW_DEFAULT;
		uint64_t cw = sw > ENGINE_H3_CONN_WINDOW_DEFAULT ? sw : ENGINE_H3_CONN_WINDOW_DEFAULT;
		struct quic_client_params p = {
			.local = &q->local,
			.remote = &eh->addr,
			.host = eh->tls_host,
			.now_ns = now,
			.idle_timeout_ns = QUIC_IDLE_TIMEOUT_NS,
			.handshake_timeout_ns = cfg->timeout_ns,
			.stream_window = sw,
			.conn_window = cw,
			.max_streams_uni = QUIC_UNI_STREAMS,
		};
		rc = quic_client_new(&q->q, eh->quic, &p, &quic_cbs, q, err, sizeof err);
	}
	if (rc) {
		if (q)
			quic_client_free(&q->q);
		free(q);
		phase_stats_tls_reason(eng_conn_error(w, c->host, ERRK_TLS, now), err);
		eng_connect_failed(w, c->host, now);
		return -1;
	}
	c->quic = q;
	eng_conn_want(w, c, EV_IN); /* writes never wait: a datagram the socket refuses is lost */
	return eng_quic_flush(w, c, now) < 0 ? -1 : 0;
}

/* Datagrams during the handshake: its completion begins HTTP/3 (inside
 * ngtcp2's callback), so this never returns 1. */
static int quic_handshake(struct worker *w, struct conn *c)
{
	return eng_quic_input(w, c) < 0 ? -1 : 0;
}

static void quic_timer(struct worker *w, struct conn *c, uint64_t now)
{
	struct eng_quic *q = c->quic;
	if (!q)
		return;
	int rv = ngtcp2_conn_handle_expiry(q->q.conn, now);
	if (rv) {
		quic_end(w, c, rv, 0);
		eng_conn_close(w, c);
		return;
	}
	look_at_recovery(w, q, now);
	if (eng_quic_flush(w, c, now) < 0)
		eng_conn_close(w, c);
}

/* The handshake did not complete by the connect deadline: a connect that
 * timed out when the server never answered, else a handshake that did not
 * complete (errors.tls). */
static void quic_hs_timeout(struct worker *w, struct conn *c, uint64_t now)
{
	struct eng_quic *q = c->quic;
	if (q)
		q->ended = q->silent = true;
	if (!q || !q->got_pkt) {
		eng_connect_error(w, c->host, ETIMEDOUT, now);
		return;
	}
	phase_stats_tls_reason(eng_conn_error(w, c->host, ERRK_TLS, now), HS_ANSWERED);
}

/* A connection's smoothed RTT, counted in the phase of now (once the
 * handshake completed). */
static void count_rtt(struct worker *w, const struct eng_quic *q, uint64_t now)
{
	if (!q->hs_done)
		return;
	ngtcp2_conn_stat cs;
	ngtcp2_conn_get_conn_stat(q->q.conn, &cs);
	struct phase_stats *ph = phase_of(w, now);
	ph->quic.rtt_n++;
	ph->quic.rtt_sum_ns += cs.smoothed_rtt;
	if (cs.smoothed_rtt > ph->quic.rtt_max_ns)
		ph->quic.rtt_max_ns = cs.smoothed_rtt;
}

void eng_quic_step_end(struct worker *w, struct conn *c)
{
	if (c->quic)
		count_rtt(w, c->quic, clock_now_ns());
}

/* Free the connection: a CONNECTION_CLOSE first when one may be sent (the
 * protocol's failure code, ngtcp2's error, or H3_NO_ERROR when pacer is
 * done with it), and its smoothed RTT counted. */
static void quic_close(struct conn *c)
{
	struct eng_quic *q = c->quic;
	if (!q)
		return;
	struct worker *w = q->w;
	ngtcp2_conn *conn = q->q.conn;
	uint64_t now = clock_now_ns();
	count_rtt(w, q, now);
	if (!q->silent && c->fd >= 0 && !ngtcp2_conn_is_in_closing_period(conn) &&
	    !ngtcp2_conn_is_in_draining_period(conn)) {
		ngtcp2_connection_close_error ce;
		ngtcp2_connection_close_error_default(&ce);
		if (q->failed)
			ngtcp2_connection_close_error_set_application_error(&ce, q->app_code, NULL, 0);
		else if (q->end_err && q->end_err != NGTCP2_ERR_CALLBACK_FAILURE)
			ngtcp2_connection_close_error_set_transport_error_liberr(&ce, q->end_err, NULL,
										 0);
		else if (q->hs_done)
			ngtcp2_connection_close_error_set_application_error(&ce, H3_NO_ERROR, NULL, 0);
		ngtcp2_path_storage ps;
		ngtcp2_path_storage_zero(&ps);
		ngtcp2_pkt_info pi;
		uint8_t buf[QUIC_PKT_CAP];
		ngtcp2_ssize k = ngtcp2_conn_write_connection_close(conn, &ps.path, &pi, buf, sizeof buf,
								   &ce, now);
		if (k > 0 && send(c->fd, buf, (size_t)k, MSG_DONTWAIT) > 0) {
			struct phase_stats *ph = phase_of(w, now);
			ph->quic.pkts_sent++;
			ph->bytes_out += (uint64_t)k;
		}
	}
	quic_client_free(&q->q);
	free(q);
	c->quic = NULL;
}

static ssize_t quic_no_tx(struct worker *w, struct conn *c, const void *buf, size_t len)
{
	(void)w, (void)c, (void)buf, (void)len;
	return -EOPNOTSUPP; /* streams, not bytes */
}

static ssize_t quic_no_rx(struct worker *w, struct conn *c, void *buf, size_t cap,
			  uint64_t *rx_rt_ns)
{
	(void)w, (void)c, (void)buf, (void)cap;
	*rx_rt_ns = 0;
	return -EOPNOTSUPP;
}

static bool quic_pending(const struct conn *c)
{
	(void)c;
	return false;
}

static bool quic_alpn_h2(const struct conn *c)
{
	(void)c;
	return false; /* ALPN h3 */
}

const struct eng_xport eng_xport_quic = {
	.name = "quic",
	.connect = quic_connect,
	.start = quic_start,
	.handshake = quic_handshake,
	.tx = quic_no_tx,
	.rx = quic_no_rx,
	.pending = quic_pending,
	.close = quic_close,
	.alpn_h2 = quic_alpn_h2,
	.exact_stamps = true,
	.crossed = false,
	.datagram = true,
	.timer = quic_timer,
	.hs_timeout = quic_hs_timeout,
	.worker_init = quic_worker_init,
	.worker_free = quic_worker_free,
};
