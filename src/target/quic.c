/* The embedded target server: HTTP/3's transport. Each thread has its own
 * non-blocking UDP socket on the server's port (SO_REUSEPORT: the kernel
 * hands all datagrams of one client address and port to one socket, so a
 * connection lives on one thread, in that thread's loop, as a TCP
 * connection does). A thread takes its datagrams in batches (recvmmsg) and
 * routes each by its destination connection ID: every ID the server
 * issues begins with its connection's random key (H3_KEY_LEN bytes, a
 * hash table by key), and a client's Initial packets before it learns one
 * are found by the ID it chose (a second table). An Initial for no known
 * connection makes a new one (ngtcp2 server connection, GnuTLS server
 * session, ALPN h3), unless the server is at its plan's max_connections:
 * then the client gets a CONNECTION_CLOSE (CONNECTION_REFUSED) and the
 * attempt is counted as rejected. A long header of another QUIC version
 * gets a Version Negotiation packet naming v1. Other packets for no known
 * connection are dropped: no stateless reset is sent, and there is no
 * Retry (no address validation: the server is for tests and loopback).
 *
 * A connection's timer (w->qheap) is ngtcp2's expiry (loss detection,
 * ACK delay, pacing, its idle timeout: the plan's idle_timeout as
 * max_idle_timeout) and the server's own idleness: a connection where no
 * request's bytes moved either way for the plan's idle timeout (and no
 * request waits on its latency) is closed (H3_NO_ERROR), counted as a
 * timeout (as are ngtcp2's idle and handshake timeouts), even if the client keeps it alive with ACKs or PINGs, so a
 * client that stops reading holds its streams only that long. Connection
 * IDs of the packets of a connection that ended are unknown afterwards:
 * its late packets are dropped.
 *
 * Packets go out in batches (sendmmsg) to the address the connection
 * began from (active migration is refused in the transport parameters); a
 * datagram the socket does not take is dropped (QUIC resends what it
 * carried). No GSO on the server side. A connection that sent GOAWAY
 * (the plan's close_after) is closed (H3_NO_ERROR) once its last stream
 * has ended. */
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <gnutls/crypto.h>
#include <ngtcp2/ngtcp2_crypto_gnutls.h>

#include "net/loop.h"
#include "net/quic.h"
#include "net/udp.h"
#include "target/h3_int.h"

#define RX_SLOTS 32
#define RX_CAP 4096               /* bytes of a datagram taken (the max_udp_payload_size told) */
#define RX_ROUNDS 8               /* receive batches per readable event */
#define TX_SLOT 1500              /* bytes of a datagram sent */
#define TX_MAX 64                 /* datagrams per send */
#define FLUSH_BATCHES 4           /* send batches per connection per flush (the rest: its timer) */
#define STREAM_WINDOW (64u << 10) /* what a client may send on a stream before it is read */
#define CONN_WINDOW (1u << 20)
#define CONN_BYTES (48u << 10) /* about what ngtcp2, GnuTLS and nghttp3 hold for a connection */

/* ---- the tables -------------------------------------------------------- */

static uint32_t hash_bytes(const uint8_t *p, size_t n)
{
	uint32_t h = 2166136261u;
	for (size_t i = 0; i < n; i++)
		h = (h ^ p[i]) * 16777619u;
	return h & (H3_HT_SIZE - 1);
}

static struct h3c **bucket(struct h3_worker *hw, int k, const uint8_t *p, size_t n)
{
	return &hw->ht[k * H3_HT_SIZE + hash_bytes(p, n)];
}

static struct h3c *find(struct h3_worker *hw, const uint8_t *dcid, size_t len)
{
	if (len == H3_CID_LEN)
		for (struct h3c *c = *bucket(hw, 0, dcid, H3_KEY_LEN); c; c = c->chain[0])
			if (!memcmp(c->key, dcid, H3_KEY_LEN))
				return c;
	for (struct h3c *c = *bucket(hw, 1, dcid, len); c; c = c->chain[1])
		if (c->odcid.datalen == len && !memcmp(c->odcid.data, dcid, len))
			return c;
	return NULL;
}

static void unlink_chain(struct h3c **head, struct h3c *c, int k)
{
	for (struct h3c **p = head; *p; p = &(*p)->chain[k])
		if (*p == c) {
			*p = c->chain[k];
			return;
		}
}

/* ---- sending ------------------------------------------------------------ */

static void send_to(struct h3c *c, size_t n)
{
	struct h3_worker *hw = c->w->h3;
	for (size_t i = 0; i < n; i++) {
		hw->tiov[i] =
			(struct iovec){.iov_base = hw->tx + i * TX_SLOT, .iov_len = hw->tx_len[i]};
		memset(&hw->tmsgs[i], 0, sizeof hw->tmsgs[i]);
		hw->tmsgs[i].msg_hdr.msg_name = &c->peer;
		hw->tmsgs[i].msg_hdr.msg_namelen = c->peer_len;
		hw->tmsgs[i].msg_hdr.msg_iov = &hw->tiov[i];
		hw->tmsgs[i].msg_hdr.msg_iovlen = 1;
	}
	size_t done = 0;
	while (done < n) {
		int k = sendmmsg(c->w->udp_fd, hw->tmsgs + done, (unsigned)(n - done),
				 MSG_DONTWAIT);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return; /* the rest is dropped: QUIC resends */
		done += (size_t)k;
	}
}

static void send_raw(struct worker *w, const struct sockaddr_storage *to, socklen_t tolen,
		     const uint8_t *p, size_t n)
{
	(void)!sendto(w->udp_fd, p, n, MSG_DONTWAIT, (const struct sockaddr *)to, tolen);
}

/* ---- connections -------------------------------------------------------- */

static void conn_arm(struct h3c *c);

/* Free c's QUIC and HTTP/3 state at once; its struct waits on the dirty
 * list (if there) until the flush passes it. */
static void conn_end(struct h3c *c)
{
	struct worker *w = c->w;
	struct h3_worker *hw = w->h3;
	if (!c->q)
		return;
	theap_cancel(&w->qheap, &c->tn);
	unlink_chain(bucket(hw, 0, c->key, H3_KEY_LEN), c, 0);
	unlink_chain(bucket(hw, 1, c->odcid.data, c->odcid.datalen), c, 1);
	if (c->prev)
		c->prev->next = c->next;
	else
		hw->live = c->next;
	if (c->next)
		c->next->prev = c->prev;
	h3_session_free(c);
	ngtcp2_conn_del(c->q);
	c->q = NULL;
	gnutls_deinit(c->tls);
	c->tls = NULL;
	atomic_fetch_sub_explicit(&w->t->open, 1, memory_order_relaxed);
	w->freed += CONN_BYTES;
	if (!c->dirty)
		free(c);
}

/* End c, first telling the client why (CONNECTION_CLOSE) unless silent:
 * liberr an ngtcp2 error (0: the HTTP/3 application code app). */
static void conn_close(struct h3c *c, int liberr, uint64_t app, bool silent)
{
	if (!c->q)
		return;
	if (!silent && !ngtcp2_conn_is_in_closing_period(c->q) &&
	    !ngtcp2_conn_is_in_draining_period(c->q)) {
		ngtcp2_connection_close_error ce;
		ngtcp2_connection_close_error_default(&ce);
		if (liberr)
			ngtcp2_connection_close_error_set_transport_error_liberr(&ce, liberr, NULL,
										 0);
		else
			ngtcp2_connection_close_error_set_application_error(&ce, app, NULL, 0);
		ngtcp2_path_storage ps;
		ngtcp2_path_storage_zero(&ps);
		ngtcp2_pkt_info pi;
		struct h3_worker *hw = c->w->h3;
		ngtcp2_ssize k = ngtcp2_conn_write_connection_close(c->q, &ps.path, &pi, hw->tx,
								    TX_SLOT, &ce, c->w->now);
		if (k > 0) {
			hw->tx_len[0] = (size_t)k;
			send_to(c, 1);
		}
	}
	conn_end(c);
}

static void conn_fail(struct h3c *c, int liberr)
{
	stat_inc(&c->w->st.bad_requests);
	if (c->failed)
		conn_close(c, 0, c->fail_code, false);
	else
		conn_close(c, liberr, 0, false);
}

static void conn_flush(struct h3c *c)
{
	struct worker *w = c->w;
	struct h3_worker *hw = w->h3;
	size_t pmax = ngtcp2_conn_get_max_tx_udp_payload_size(c->q);
	pmax = pmax > TX_SLOT ? TX_SLOT : pmax;
	ngtcp2_path_storage ps;
	ngtcp2_path_storage_zero(&ps);
	if (c->goaway_due && !c->goaway && c->h3) {
		/* close_after: the streams received so far are answered */
		c->goaway = true;
		nghttp3_conn_shutdown(c->h3);
	}
	size_t n = 0;
	for (int batches = 0; batches < FLUSH_BATCHES;) {
		int64_t sid = -1;
		int fin = 0;
		nghttp3_vec vec[16];
		nghttp3_ssize nv = 0;
		if (c->h3 && ngtcp2_conn_get_max_data_left(c->q)) {
			nv = nghttp3_conn_writev_stream(c->h3, &sid, &fin, vec, 16);
			if (nv < 0) {
				c->failed = true;
				c->fail_code = nghttp3_err_infer_quic_app_error_code((int)nv);
				conn_fail(c, 0);
				return;
			}
		}
		ngtcp2_vec v[16];
		for (nghttp3_ssize i = 0; i < nv; i++)
			v[i] = (ngtcp2_vec){.base = vec[i].base, .len = vec[i].len};
		uint32_t fl = NGTCP2_WRITE_STREAM_FLAG_MORE |
			      (fin ? NGTCP2_WRITE_STREAM_FLAG_FIN : 0);
		ngtcp2_ssize nd = -1;
		ngtcp2_pkt_info pi;
		ngtcp2_ssize k = ngtcp2_conn_writev_stream(c->q, &ps.path, &pi,
							   hw->tx + n * TX_SLOT, pmax, &nd, fl, sid,
							   v, (size_t)nv, w->now);
		if (k == NGTCP2_ERR_STREAM_DATA_BLOCKED) {
			nghttp3_conn_block_stream(c->h3, sid);
			continue;
		}
		if (k == NGTCP2_ERR_STREAM_SHUT_WR) {
			nghttp3_conn_shutdown_stream_write(c->h3, sid);
			continue;
		}
		if (k == NGTCP2_ERR_WRITE_MORE) {
			if (nghttp3_conn_add_write_offset(c->h3, sid, (size_t)nd)) {
				conn_fail(c, NGTCP2_ERR_CALLBACK_FAILURE);
				return;
			}
			continue;
		}
		if (k < 0) {
			conn_fail(c, (int)k);
			return;
		}
		if (nd >= 0 && sid >= 0 && nghttp3_conn_add_write_offset(c->h3, sid, (size_t)nd)) {
			conn_fail(c, NGTCP2_ERR_CALLBACK_FAILURE);
			return;
		}
		if (k == 0)
			break;
		hw->tx_len[n++] = (size_t)k;
		if (n == TX_MAX) {
			send_to(c, n);
			n = 0;
			batches++;
		}
	}
	if (n)
		send_to(c, n);
	ngtcp2_conn_update_pkt_tx_time(c->q, w->now);
	if (c->goaway && c->s.n == 0) {
		/* close_after: GOAWAY sent and every stream before it answered and
		 * acknowledged (a record lives until its stream closes) */
		conn_close(c, 0, NGHTTP3_H3_NO_ERROR, false);
		return;
	}
	conn_arm(c);
}

/* When c is idle: no request's bytes moved for the plan's idle timeout
 * and no request waits on a timer (UINT64_MAX: not while one does). */
static uint64_t idle_at(const struct h3c *c)
{
	uint64_t idle = c->w->t->plan->idle_timeout_ns;
	if (!idle || !c->established || c->s.n_timed)
		return UINT64_MAX;
	return c->last_act_ns + idle;
}

static void conn_arm(struct h3c *c)
{
	uint64_t at = ngtcp2_conn_get_expiry(c->q), idle = idle_at(c);
	at = idle < at ? idle : at;
	if (at == UINT64_MAX)
		theap_cancel(&c->w->qheap, &c->tn);
	else if (theap_arm(&c->w->qheap, &c->tn, at) < 0)
		conn_close(c, 0, NGHTTP3_H3_INTERNAL_ERROR, false);
}

static void conn_timer(struct h3c *c)
{
	struct worker *w = c->w;
	if (w->now >= idle_at(c)) {
		stat_inc(&w->st.timeouts);
		conn_close(c, 0, NGHTTP3_H3_NO_ERROR, false);
		return;
	}
	int rv = ngtcp2_conn_handle_expiry(c->q, w->now);
	if (rv == NGTCP2_ERR_IDLE_CLOSE || rv == NGTCP2_ERR_HANDSHAKE_TIMEOUT) {
		stat_inc(&w->st.timeouts);
		conn_close(c, 0, 0, true);
		return;
	}
	if (rv) {
		conn_close(c, rv, 0, false);
		return;
	}
	h3_dirty(c);
}

/* ---- ngtcp2 callbacks ---------------------------------------------------- */

static void rand_cb(uint8_t *dest, size_t len, const ngtcp2_rand_ctx *rctx)
{
	(void)rctx;
	(void)gnutls_rnd(GNUTLS_RND_RANDOM, dest, len);
}

static int new_cid(ngtcp2_conn *q, ngtcp2_cid *cid, uint8_t *token, size_t cidlen, void *ud)
{
	(void)q, (void)cidlen;
	struct h3c *c = ud;
	memcpy(cid->data, c->key, H3_KEY_LEN);
	if (gnutls_rnd(GNUTLS_RND_RANDOM, cid->data + H3_KEY_LEN, H3_CID_LEN - H3_KEY_LEN) != 0 ||
	    gnutls_rnd(GNUTLS_RND_RANDOM, token, NGTCP2_STATELESS_RESET_TOKENLEN) != 0)
		return NGTCP2_ERR_CALLBACK_FAILURE;
	cid->datalen = H3_CID_LEN;
	return 0;
}

static ngtcp2_conn *get_conn(ngtcp2_crypto_conn_ref *ref)
{
	return ((struct h3c *)ref->user_data)->q;
}

/* The HTTP/3 session, once the client allows the server's 3 uni streams. */
static int session(struct h3c *c)
{
	if (c->h3)
		return 0;
	if (ngtcp2_conn_get_streams_uni_left(c->q) < 3) {
		c->failed = true;
		c->fail_code = NGHTTP3_H3_STREAM_CREATION_ERROR;
		return NGTCP2_ERR_CALLBACK_FAILURE;
	}
	if (h3_session_new(c)) {
		c->failed = true;
		c->fail_code = NGHTTP3_H3_INTERNAL_ERROR;
		return NGTCP2_ERR_CALLBACK_FAILURE;
	}
	return 0;
}

static int on_handshake_completed(ngtcp2_conn *q, void *ud)
{
	(void)q;
	struct h3c *c = ud;
	c->established = true;
	c->last_act_ns = c->w->now;
	stat_inc(&c->w->st.connections);
	return session(c);
}

static int on_recv_stream_data(ngtcp2_conn *q, uint32_t flags, int64_t sid, uint64_t off,
			       const uint8_t *data, size_t len, void *ud, void *sud)
{
	(void)off, (void)sud;
	struct h3c *c = ud;
	int rv = session(c);
	if (rv)
		return rv;
	nghttp3_ssize n = nghttp3_conn_read_stream(c->h3, sid, data, len,
						   flags & NGTCP2_STREAM_DATA_FLAG_FIN);
	if (n < 0) {
		c->failed = true;
		c->fail_code = nghttp3_err_infer_quic_app_error_code((int)n);
		return NGTCP2_ERR_CALLBACK_FAILURE;
	}
	ngtcp2_conn_extend_max_stream_offset(q, sid, (uint64_t)n);
	ngtcp2_conn_extend_max_offset(q, (uint64_t)n);
	return 0;
}

static int on_acked(ngtcp2_conn *q, int64_t sid, uint64_t off, uint64_t len, void *ud, void *sud)
{
	(void)q, (void)off, (void)sud;
	struct h3c *c = ud;
	if (!c->h3)
		return 0;
	if (ngtcp2_is_bidi_stream(sid))
		c->last_act_ns = c->w->now; /* the client takes an answer's bytes */
	return nghttp3_conn_add_ack_offset(c->h3, sid, len) ? NGTCP2_ERR_CALLBACK_FAILURE : 0;
}

static int on_stream_close(ngtcp2_conn *q, uint32_t flags, int64_t sid, uint64_t code, void *ud,
			   void *sud)
{
	(void)sud;
	struct h3c *c = ud;
	if (!(flags & NGTCP2_STREAM_CLOSE_FLAG_APP_ERROR_CODE_SET))
		code = NGHTTP3_H3_NO_ERROR;
	if (c->h3) {
		int rv = nghttp3_conn_close_stream(c->h3, sid, code);
		if (rv && rv != NGHTTP3_ERR_STREAM_NOT_FOUND) {
			c->failed = true;
			c->fail_code = nghttp3_err_infer_quic_app_error_code(rv);
			return NGTCP2_ERR_CALLBACK_FAILURE;
		}
	}
	if (ngtcp2_is_bidi_stream(sid) && !ngtcp2_conn_is_local_stream(q, sid))
		ngtcp2_conn_extend_max_streams_bidi(q, 1); /* room for the client's next request */
	return 0;
}

static int on_stream_reset(ngtcp2_conn *q, int64_t sid, uint64_t final_size, uint64_t code,
			   void *ud, void *sud)
{
	(void)q, (void)final_size, (void)code, (void)sud;
	struct h3c *c = ud;
	return c->h3 && nghttp3_conn_shutdown_stream_read(c->h3, sid) ? NGTCP2_ERR_CALLBACK_FAILURE
								      : 0;
}

static int on_stop_sending(ngtcp2_conn *q, int64_t sid, uint64_t code, void *ud, void *sud)
{
	(void)q, (void)code, (void)sud;
	struct h3c *c = ud;
	return c->h3 && nghttp3_conn_shutdown_stream_read(c->h3, sid) ? NGTCP2_ERR_CALLBACK_FAILURE
								      : 0;
}

static int on_more_client_streams(ngtcp2_conn *q, uint64_t max, void *ud)
{
	(void)q;
	struct h3c *c = ud;
	if (c->h3)
		nghttp3_conn_set_max_client_streams_bidi(c->h3, max);
	return 0;
}

static int on_credit(ngtcp2_conn *q, int64_t sid, uint64_t max, void *ud, void *sud)
{
	(void)q, (void)max, (void)sud;
	struct h3c *c = ud;
	int rv = c->h3 ? nghttp3_conn_unblock_stream(c->h3, sid) : 0;
	return rv && rv != NGHTTP3_ERR_STREAM_NOT_FOUND ? NGTCP2_ERR_CALLBACK_FAILURE : 0;
}

static const ngtcp2_callbacks server_cbs = {
	.recv_client_initial = ngtcp2_crypto_recv_client_initial_cb,
	.recv_crypto_data = ngtcp2_crypto_recv_crypto_data_cb,
	.handshake_completed = on_handshake_completed,
	.encrypt = ngtcp2_crypto_encrypt_cb,
	.decrypt = ngtcp2_crypto_decrypt_cb,
	.hp_mask = ngtcp2_crypto_hp_mask_cb,
	.recv_stream_data = on_recv_stream_data,
	.acked_stream_data_offset = on_acked,
	.stream_close = on_stream_close,
	.rand = rand_cb,
	.get_new_connection_id = new_cid,
	.update_key = ngtcp2_crypto_update_key_cb,
	.stream_reset = on_stream_reset,
	.extend_max_remote_streams_bidi = on_more_client_streams,
	.extend_max_stream_data = on_credit,
	.delete_crypto_aead_ctx = ngtcp2_crypto_delete_crypto_aead_ctx_cb,
	.delete_crypto_cipher_ctx = ngtcp2_crypto_delete_crypto_cipher_ctx_cb,
	.get_path_challenge_data = ngtcp2_crypto_get_path_challenge_data_cb,
	.stream_stop_sending = on_stop_sending,
	.version_negotiation = ngtcp2_crypto_version_negotiation_cb,
};

static int tls_session(struct h3c *c)
{
	static const char alpn_h3[] = "h3";
	if (gnutls_init(&c->tls, GNUTLS_SERVER | GNUTLS_NO_END_OF_EARLY_DATA) < 0) {
		c->tls = NULL;
		return -1;
	}
	gnutls_datum_t alpn = {.data = (unsigned char *)alpn_h3, .size = 2};
	if (gnutls_priority_set_direct(c->tls, quic_priority(), NULL) < 0 ||
	    ngtcp2_crypto_gnutls_configure_server_session(c->tls) != 0 ||
	    gnutls_credentials_set(c->tls, GNUTLS_CRD_CERTIFICATE, quic_ctx_cred(c->w->t->quic)) <
		    0 ||
	    gnutls_alpn_set_protocols(c->tls, &alpn, 1, GNUTLS_ALPN_MANDATORY) < 0)
		return -1;
	gnutls_session_set_ptr(c->tls, &c->ref);
	return 0;
}

/* A new connection for the client's first Initial hd, from `from`. NULL:
 * out of memory or refused by the libraries (the packet is dropped). */
static struct h3c *conn_new(struct worker *w, const ngtcp2_pkt_hd *hd,
			    const struct sockaddr_storage *from, socklen_t flen)
{
	struct h3_worker *hw = w->h3;
	const struct target_plan *plan = w->t->plan;
	struct h3c *c = calloc(1, sizeof *c);
	if (!c)
		return NULL;
	theap_node_init(&c->tn);
	c->w = w;
	c->s.conn = c;
	c->peer = *from;
	c->peer_len = flen;
	c->odcid = hd->dcid;
	c->ref.get_conn = get_conn;
	c->ref.user_data = c;
	ngtcp2_cid scid = {.datalen = H3_CID_LEN};
	ngtcp2_transport_params tp;
	ngtcp2_transport_params_default(&tp);
	if (gnutls_rnd(GNUTLS_RND_RANDOM, c->key, H3_KEY_LEN) != 0 ||
	    gnutls_rnd(GNUTLS_RND_RANDOM, scid.data + H3_KEY_LEN, H3_CID_LEN - H3_KEY_LEN) != 0 ||
	    gnutls_rnd(GNUTLS_RND_RANDOM, tp.stateless_reset_token,
		       sizeof tp.stateless_reset_token) != 0 ||
	    tls_session(c)) {
		if (c->tls)
			gnutls_deinit(c->tls);
		free(c);
		return NULL;
	}
	memcpy(scid.data, c->key, H3_KEY_LEN);
	ngtcp2_settings st;
	ngtcp2_settings_default(&st);
	st.initial_ts = w->now;
	st.max_window = CONN_WINDOW;
	st.max_stream_window = STREAM_WINDOW;
	st.no_pmtud = 1; /* datagrams of at most TX_SLOT bytes */
	st.handshake_timeout = plan->request_timeout_ns ? plan->request_timeout_ns : 10 * NS_PER_S;
	tp.stateless_reset_token_present = 1;
	tp.original_dcid = hd->dcid;
	tp.initial_max_stream_data_bidi_remote = STREAM_WINDOW;
	tp.initial_max_stream_data_uni = STREAM_WINDOW;
	tp.initial_max_data = CONN_WINDOW;
	tp.initial_max_streams_bidi = w->t->max_streams;
	tp.initial_max_streams_uni = 3; /* the client's control and QPACK streams */
	tp.max_idle_timeout = plan->idle_timeout_ns;
	tp.max_udp_payload_size = RX_CAP;
	tp.disable_active_migration = 1; /* answers go to the address the connection began from */
	ngtcp2_path path = {
		.local = {.addr = (ngtcp2_sockaddr *)&hw->local.ss, .addrlen = hw->local.len},
		.remote = {.addr = (ngtcp2_sockaddr *)&c->peer, .addrlen = c->peer_len},
	};
	if (ngtcp2_conn_server_new(&c->q, &hd->scid, &scid, &path, hd->version, &server_cbs, &st,
				   &tp, NULL, c) != 0) {
		gnutls_deinit(c->tls);
		free(c);
		return NULL;
	}
	ngtcp2_conn_set_tls_native_handle(c->q, c->tls);
	struct h3c **b0 = bucket(hw, 0, c->key, H3_KEY_LEN);
	c->chain[0] = *b0;
	*b0 = c;
	struct h3c **b1 = bucket(hw, 1, c->odcid.data, c->odcid.datalen);
	c->chain[1] = *b1;
	*b1 = c;
	c->next = hw->live;
	if (hw->live)
		hw->live->prev = c;
	hw->live = c;
	return c;
}

/* ---- datagrams in -------------------------------------------------------- */

static void datagram(struct worker *w, const uint8_t *d, size_t len,
		     const struct sockaddr_storage *from, socklen_t flen)
{
	struct h3_worker *hw = w->h3;
	ngtcp2_version_cid vc;
	int rv = ngtcp2_pkt_decode_version_cid(&vc, d, len, H3_CID_LEN);
	if (rv == NGTCP2_ERR_VERSION_NEGOTIATION) {
		uint8_t buf[256];
		uint32_t sv[] = {NGTCP2_PROTO_VER_V1};
		uint8_t r;
		(void)gnutls_rnd(GNUTLS_RND_NONCE, &r, 1);
		ngtcp2_ssize k = ngtcp2_pkt_write_version_negotiation(
			buf, sizeof buf, r, vc.scid, vc.scidlen, vc.dcid, vc.dcidlen, sv, 1);
		if (k > 0)
			send_raw(w, from, flen, buf, (size_t)k);
		return;
	}
	if (rv)
		return;
	struct h3c *c = find(hw, vc.dcid, vc.dcidlen);
	if (!c) {
		ngtcp2_pkt_hd hd;
		if (ngtcp2_accept(&hd, d, len) != 0 || hd.type != NGTCP2_PKT_INITIAL)
			return; /* not a client's first packet: dropped (no stateless reset) */
		struct target *t = w->t;
		uint_fast32_t open = atomic_fetch_add_explicit(&t->open, 1, memory_order_relaxed);
		if (open >= t->plan->max_connections) {
			atomic_fetch_sub_explicit(&t->open, 1, memory_order_relaxed);
			stat_inc(&w->st.rejected);
			uint8_t buf[TX_SLOT];
			ngtcp2_ssize k = ngtcp2_crypto_write_connection_close(
				buf, sizeof buf, hd.version, &hd.scid, &hd.dcid,
				NGTCP2_CONNECTION_REFUSED, NULL, 0);
			if (k > 0)
				send_raw(w, from, flen, buf, (size_t)k);
			return;
		}
		c = conn_new(w, &hd, from, flen);
		if (!c) {
			atomic_fetch_sub_explicit(&t->open, 1, memory_order_relaxed);
			return;
		}
	}
	ngtcp2_path path = {
		.local = {.addr = (ngtcp2_sockaddr *)&hw->local.ss, .addrlen = hw->local.len},
		.remote = {.addr = (ngtcp2_sockaddr *)from, .addrlen = flen},
	};
	ngtcp2_pkt_info pi = {0};
	rv = ngtcp2_conn_read_pkt(c->q, &path, &pi, d, len, w->now);
	if (rv == 0) {
		h3_dirty(c);
		return;
	}
	if (rv == NGTCP2_ERR_DRAINING || rv == NGTCP2_ERR_DROP_CONN)
		conn_close(c, 0, 0, true); /* the client closed it, or ngtcp2 gave it up */
	else
		conn_fail(c, rv);
}

void target_quic_input(struct worker *w)
{
	struct h3_worker *hw = w->h3;
	for (int round = 0; round < RX_ROUNDS; round++) {
		for (unsigned i = 0; i < RX_SLOTS; i++) {
			struct msghdr *m = &hw->rmsgs[i].msg_hdr;
			m->msg_name = &hw->from[i];
			m->msg_namelen = sizeof hw->from[i];
			m->msg_iov = &hw->riov[i];
			m->msg_iovlen = 1;
			m->msg_control = NULL;
			m->msg_controllen = 0;
			m->msg_flags = 0;
		}
		int n = recvmmsg(w->udp_fd, hw->rmsgs, RX_SLOTS, MSG_DONTWAIT, NULL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return;
		/* these datagrams may have come after the loop woke: a request's
		 * delay counts from now, not from then */
		w->now = clock_now_ns();
		for (int i = 0; i < n; i++) {
			if (hw->rmsgs[i].msg_hdr.msg_flags & MSG_TRUNC)
				continue; /* larger than the server said it takes */
			datagram(w, hw->rx + (size_t)i * RX_CAP, hw->rmsgs[i].msg_len, &hw->from[i],
				 hw->rmsgs[i].msg_hdr.msg_namelen);
		}
		if (n < RX_SLOTS)
			return;
	}
}

/* ---- the thread's part --------------------------------------------------- */

void target_quic_timers(struct worker *w)
{
	if (!w->h3)
		return;
	for (int i = 0; i < 4096; i++) {
		struct theap_node *n = theap_pop_expired(&w->qheap, w->now);
		if (!n)
			break;
		conn_timer((struct h3c *)n);
	}
	h3_stream_timers(w);
}

void target_quic_flush(struct worker *w)
{
	if (!w->h3)
		return;
	struct h3c *c;
	while ((c = w->h3->dirty)) {
		w->h3->dirty = c->dirty_next;
		c->dirty = false;
		if (!c->q)
			free(c); /* ended while it waited here */
		else
			conn_flush(c);
	}
}

uint64_t target_quic_next(const struct worker *w)
{
	if (!w->h3)
		return UINT64_MAX;
	if (w->h3->dirty)
		return w->now;
	const struct theap_node *a = theap_peek(&w->qheap), *b = theap_peek(&w->h3heap);
	uint64_t x = a ? a->deadline_ns : UINT64_MAX, y = b ? b->deadline_ns : UINT64_MAX;
	return x < y ? x : y;
}

static void worker_state_free(struct h3_worker *hw)
{
	free(hw->ht);
	free(hw->rx);
	free(hw->rmsgs);
	free(hw->riov);
	free(hw->from);
	free(hw->tx);
	free(hw->tmsgs);
	free(hw->tiov);
	free(hw);
}

static int worker_state_new(struct worker *w, const struct net_addr *local)
{
	struct h3_worker *hw = calloc(1, sizeof *hw);
	if (!hw)
		return -ENOMEM;
	hw->local = *local;
	hw->ht = calloc(2 * H3_HT_SIZE, sizeof *hw->ht);
	hw->rx = malloc((size_t)RX_SLOTS * RX_CAP);
	hw->rmsgs = calloc(RX_SLOTS, sizeof *hw->rmsgs);
	hw->riov = calloc(RX_SLOTS, sizeof *hw->riov);
	hw->from = calloc(RX_SLOTS, sizeof *hw->from);
	hw->tx = malloc((size_t)TX_MAX * TX_SLOT);
	hw->tmsgs = calloc(TX_MAX, sizeof *hw->tmsgs);
	hw->tiov = calloc(TX_MAX, sizeof *hw->tiov);
	if (!hw->ht || !hw->rx || !hw->rmsgs || !hw->riov || !hw->from || !hw->tx || !hw->tmsgs ||
	    !hw->tiov) {
		worker_state_free(hw);
		return -ENOMEM;
	}
	for (unsigned i = 0; i < RX_SLOTS; i++)
		hw->riov[i] =
			(struct iovec){.iov_base = hw->rx + (size_t)i * RX_CAP, .iov_len = RX_CAP};
	w->h3 = hw;
	return 0;
}

int target_quic_open(struct target *t, const struct net_addr *listen)
{
	for (unsigned i = 0; i < t->n; i++)
		t->w[i].udp_fd = -1;
	if (!t->quic)
		return 0;
	struct net_addr a = *listen;
	if (a.ss.ss_family == AF_INET)
		((struct sockaddr_in *)&a.ss)->sin_port = htons((uint16_t)t->port);
	else
		((struct sockaddr_in6 *)&a.ss)->sin6_port = htons((uint16_t)t->port);
	for (unsigned i = 0; i < t->n; i++) {
		struct worker *w = &t->w[i];
		int fd = net_udp_bind(&a, true);
		if (fd < 0)
			return fd;
		w->udp_fd = fd;
		int rc = worker_state_new(w, &a);
		if (rc)
			return rc;
	}
	return 0;
}

void target_quic_worker_free(struct worker *w)
{
	if (w->h3) {
		while (w->h3->live)
			conn_close(w->h3->live, 0, NGHTTP3_H3_NO_ERROR, false);
		target_quic_flush(w); /* frees the structs left on the dirty list */
		h3_worker_free_streams(w);
		worker_state_free(w->h3);
		w->h3 = NULL;
	}
	if (w->udp_fd >= 0)
		close(w->udp_fd);
	w->udp_fd = -1;
}
