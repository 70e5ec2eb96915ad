/* h3hostile — hostile HTTP/3 (QUIC v1) servers for pacer's integration tests.
 *
 *   h3hostile MODE
 *
 * Binds UDP 127.0.0.1 on an ephemeral port, prints "port N" on stdout and
 * serves until SIGTERM or SIGINT, then prints one line of counters
 * ("stats datagrams=.. vn=.. conns=.. handshakes=.. requests=.. answered=..
 * resets=.. tampered=.. encoder_bytes=..") and exits 0. One thread, one
 * poll loop, at most MAX_CONNS connections (further Initials are dropped).
 *
 * Modes that need no handshake are raw UDP (Version Negotiation packets are
 * not encrypted); the others are an ngtcp2 server with GnuTLS (a fresh
 * self-signed certificate: clients use --insecure) that speaks HTTP/3 as
 * raw bytes on its streams (no nghttp3: the point is to send what nghttp3
 * would not). Stream data lives in static buffers (ngtcp2 keeps pointers to
 * it until it is acknowledged).
 *
 * Modes:
 *   ok             a well-behaved server: every request gets 200 and "ok"
 *   vn_unknown     every long-header packet gets a Version Negotiation
 *                  packet listing only versions the client does not speak
 *   vn_own         the same, but the list names QUIC v1 too (the client's own
 *                  version: RFC 9000 6.2 says such a packet is ignored)
 *   silent         reads every datagram, answers none
 *   garbage        answers every datagram with 1,200 random bytes
 *   reset          completes the handshake, then answers the first request
 *                  with a stateless reset (the token it advertised) and
 *                  forgets the connection
 *   bad_frame      after the handshake, the 1-RTT packets that carry the
 *                  answer are rewritten to hold a frame of an unknown type
 *                  (0x21: FRAME_ENCODING_ERROR)
 *   huge_frame     answers each request with an HTTP/3 HEADERS frame that
 *                  says it is 4 GiB long: well-formed field lines (x-big:
 *                  100 bytes) without end
 *   ncid_flood     after the handshake, every 1-RTT packet is rewritten to
 *                  hold NEW_CONNECTION_ID frames, their sequence numbers
 *                  rising without end, none retired
 *   no_streams     initial_max_streams_bidi 0, never raised: the client may
 *                  open no request stream
 *   qpack_flood    the ok answers, and a QPACK encoder stream that inserts
 *                  entries without end (within the client's 4 KiB table:
 *                  each insert evicts an older entry)
 *   qpack_overflow the ok answers, and an encoder stream whose first
 *                  instruction sets a dynamic table of 1 MiB (more than the
 *                  client allows)
 *   goaway_at_once GOAWAY 0 on the control stream right after SETTINGS:
 *                  no request will be processed (those that come anyway
 *                  are answered with a stream reset, H3_REQUEST_REJECTED)
 */
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <gnutls/crypto.h>
#include <gnutls/gnutls.h>
#include <ngtcp2/ngtcp2.h>
#include <ngtcp2/ngtcp2_crypto.h>
#include <ngtcp2/ngtcp2_crypto_gnutls.h>

#include "net/quic.h"
#include "net/tls.h"

#define MAX_CONNS 64
#define CID_LEN 16
#define KEY_LEN 4      /* every connection ID of a connection begins with its key */
#define PKT_CAP 1500
#define RX_CAP 65536
#define MAX_OUT 1024   /* stream writes waiting per connection */
#define PKTS_PER_FLUSH 64
#define PATTERN_LEN 4088 /* 56 QPACK inserts of 73 bytes (103 of table each) */
#define NS_PER_S 1000000000ull

enum mode {
	M_OK,
	M_VN_UNKNOWN,
	M_VN_OWN,
	M_SILENT,
	M_GARBAGE,
	M_RESET,
	M_BAD_FRAME,
	M_HUGE_FRAME,
	M_NCID_FLOOD,
	M_NO_STREAMS,
	M_QPACK_FLOOD,
	M_QPACK_OVERFLOW,
	M_GOAWAY_AT_ONCE,
};

static const char *const MODE_NAMES[] = {
	"ok",          "vn_unknown",     "vn_own",         "silent",     "garbage",
	"reset",       "bad_frame",      "huge_frame",     "ncid_flood", "no_streams",
	"qpack_flood", "qpack_overflow", "goaway_at_once",
};

struct out {
	int64_t sid;
	const uint8_t *p;
	size_t len; /* SIZE_MAX: endless (p is plen bytes, repeated) */
	size_t plen;
	size_t off;
	bool fin;
	bool blocked;
};

struct hconn {
	bool used;
	ngtcp2_conn *q;
	gnutls_session_t tls;
	ngtcp2_crypto_conn_ref ref;
	uint8_t key[KEY_LEN];
	ngtcp2_cid odcid;
	struct sockaddr_storage peer;
	socklen_t peer_len;
	uint8_t reset_token[NGTCP2_STATELESS_RESET_TOKENLEN];
	bool hs_done;
	bool opened_uni;
	int tamper; /* 1-RTT packets still to rewrite (-1: every one) */
	size_t rr;  /* where the next look for a write begins (round robin) */
	struct out out[MAX_OUT];
	size_t n_out;
};

static enum mode mode;
static int fd = -1;
static struct sockaddr_storage local;
static socklen_t local_len;
static struct quic_ctx *qctx;
static struct hconn conns[MAX_CONNS];
static struct hconn *writing; /* the connection whose packets are being written */
static volatile sig_atomic_t stop;
static uint64_t ncid_seq = 1000;
static struct {
	unsigned long long datagrams, vn, conns, handshakes, requests, answered, resets, tampered,
		encoder_bytes;
} st;

/* ---- HTTP/3 as bytes ------------------------------------------------------ */

/* Control stream: type 0x00, an empty SETTINGS frame. */
static const uint8_t CONTROL[] = {0x00, 0x04, 0x00};
/* The same and GOAWAY 0: no request stream will be processed. */
static const uint8_t CONTROL_GOAWAY[] = {0x00, 0x04, 0x00, 0x07, 0x01, 0x00};
/* A response: HEADERS (QPACK: no dynamic table, static index 25 ":status
 * 200"), DATA "ok". */
static const uint8_t RESPONSE[] = {0x01, 0x03, 0x00, 0x00, 0xd9, 0x00, 0x02, 'o', 'k'};
/* The same with a body of 1,100 bytes: its packets are large enough to be
 * rewritten (bad_frame, ncid_flood) */
#define BIG_LEN (5 + 3 + 1100)
static uint8_t BIG_RESPONSE[BIG_LEN] = {0x01, 0x03, 0x00, 0x00, 0xd9, 0x00, 0x40 | (1100 >> 8),
					1100 & 0xff};
/* HEADERS of 2^32 bytes (an 8-byte varint) and the QPACK prefix (no
 * dynamic table), then FIELDS without end. */
static const uint8_t HUGE_HEAD[] = {0x01, 0xc0, 0x00, 0x00, 0x01, 0x00,
				    0x00, 0x00, 0x00, 0x00, 0x00};
/* Literal Field Lines with Literal Names, "x-big: " and 100 bytes: 107 bytes each */
#define FIELDS_LEN (38 * 107)
static uint8_t FIELDS[FIELDS_LEN];
/* Encoder stream type 0x02 and Set Dynamic Table Capacity 4096 (fits the
 * client), or 1 MiB (does not). */
static uint8_t ENC_OPEN[8], ENC_OPEN_LEN;
static uint8_t PATTERN[PATTERN_LEN];

/* A QPACK prefixed integer (RFC 9204 4.1.1) with the first byte's high bits
 * `hi` and an n-bit prefix. */
static size_t qpack_int(uint8_t *p, uint8_t hi, int n, uint64_t v)
{
	uint64_t max = (1u << n) - 1;
	if (v < max) {
		p[0] = (uint8_t)(hi | v);
		return 1;
	}
	size_t k = 0;
	p[k++] = (uint8_t)(hi | max);
	v -= max;
	while (v >= 128) {
		p[k++] = (uint8_t)(0x80 | (v & 0x7f));
		v >>= 7;
	}
	p[k++] = (uint8_t)v;
	return k;
}

static void build_static(void)
{
	ENC_OPEN[0] = 0x02;
	ENC_OPEN_LEN = (uint8_t)(1 + qpack_int(ENC_OPEN + 1, 0x20, 5,
					       mode == M_QPACK_OVERFLOW ? 1u << 20 : 4096));
	/* Insert with Literal Name: 01 H=0 5-bit name length, "x-flood", value
	 * with H=0 7-bit length: 7 + 64 + 32 = 103 bytes of table each */
	size_t off = 0;
	while (off + 2 + 7 + 64 <= PATTERN_LEN) {
		PATTERN[off++] = 0x40 | 7;
		memcpy(PATTERN + off, "x-flood", 7);
		off += 7;
		PATTERN[off++] = 64;
		memset(PATTERN + off, 'v', 64);
		off += 64;
	}
	for (size_t f = 0; f < FIELDS_LEN; f += 107) {
		FIELDS[f] = 0x20 | 5;
		memcpy(FIELDS + f + 1, "x-big", 5);
		FIELDS[f + 6] = 100;
		memset(FIELDS + f + 7, 'a', 100);
	}
	if (off != PATTERN_LEN) {
		fprintf(stderr, "h3hostile: pattern of %zu bytes\n", off);
		exit(1);
	}
}

/* ---- connections ---------------------------------------------------------- */

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * NS_PER_S + (uint64_t)ts.tv_nsec;
}

static void rnd(void *p, size_t n) { (void)gnutls_rnd(GNUTLS_RND_NONCE, p, n); }

static void send_to(const struct sockaddr_storage *to, socklen_t tolen, const uint8_t *p, size_t n)
{
	(void)!sendto(fd, p, n, MSG_DONTWAIT, (const struct sockaddr *)to, tolen);
}

static struct hconn *find(const uint8_t *dcid, size_t len)
{
	for (int i = 0; i < MAX_CONNS; i++) {
		struct hconn *c = &conns[i];
		if (!c->used)
			continue;
		if (len == CID_LEN && !memcmp(dcid, c->key, KEY_LEN))
			return c;
		if (c->odcid.datalen == len && !memcmp(c->odcid.data, dcid, len))
			return c;
	}
	return NULL;
}

static void conn_del(struct hconn *c)
{
	if (c->q)
		ngtcp2_conn_del(c->q);
	if (c->tls)
		gnutls_deinit(c->tls);
	memset(c, 0, sizeof *c);
}

static bool queue(struct hconn *c, int64_t sid, const uint8_t *p, size_t len, bool fin)
{
	if (c->n_out == MAX_OUT)
		return false;
	c->out[c->n_out++] = (struct out){.sid = sid, .p = p, .len = len, .fin = fin};
	return true;
}

/* Bytes p of plen, repeated without end on stream sid. */
static void queue_endless(struct hconn *c, int64_t sid, const uint8_t *p, size_t plen)
{
	if (queue(c, sid, p, SIZE_MAX, false))
		c->out[c->n_out - 1].plen = plen;
}

/* In order: a stream's writes follow one another. */
static void unqueue(struct hconn *c, size_t i)
{
	memmove(&c->out[i], &c->out[i + 1], (c->n_out - i - 1) * sizeof c->out[0]);
	c->n_out--;
}

/* Write and send what c has: queued stream bytes first, then ACKs and the
 * rest. False: c failed and is gone. */
static bool flush(struct hconn *c, uint64_t now, bool *more)
{
	uint8_t buf[PKT_CAP];
	ngtcp2_path_storage ps;
	ngtcp2_path_storage_zero(&ps);
	for (size_t i = 0; i < c->n_out; i++)
		c->out[i].blocked = false;
	writing = c;
	int pkts = 0;
	while (pkts < PKTS_PER_FLUSH) {
		struct out *o = NULL;
		for (size_t r = 0; r < c->n_out && !o; r++) {
			size_t i = (c->rr + r) % c->n_out;
			bool earlier = false; /* a write before it on its stream waits */
			for (size_t j = 0; j < i && !earlier; j++)
				earlier = c->out[j].sid == c->out[i].sid;
			if (!c->out[i].blocked && !earlier)
				o = &c->out[i];
		}
		c->rr++;
		ngtcp2_vec v = {0};
		uint32_t fl = NGTCP2_WRITE_STREAM_FLAG_MORE;
		int64_t sid = -1;
		size_t nv = 0;
		if (o) {
			sid = o->sid;
			if (o->len == SIZE_MAX) {
				size_t at = o->off % o->plen;
				v = (ngtcp2_vec){.base = (uint8_t *)o->p + at, .len = o->plen - at};
			} else {
				v = (ngtcp2_vec){.base = (uint8_t *)o->p + o->off, .len = o->len - o->off};
				if (o->fin)
					fl |= NGTCP2_WRITE_STREAM_FLAG_FIN;
			}
			nv = 1;
		}
		ngtcp2_ssize nd = -1;
		ngtcp2_pkt_info pi;
		ngtcp2_ssize k = ngtcp2_conn_writev_stream(c->q, &ps.path, &pi, buf, sizeof buf, &nd,
							   fl, sid, nv ? &v : NULL, nv, now);
		if (o && nd >= 0) {
			o->off += (size_t)nd;
			if (o->len == SIZE_MAX && o->p == PATTERN)
				st.encoder_bytes += (uint64_t)nd;
			if (o->len != SIZE_MAX && o->off == o->len) {
				if (o->fin && o->p != CONTROL)
					st.answered++;
				unqueue(c, (size_t)(o - c->out));
			}
		}
		if (k == NGTCP2_ERR_STREAM_DATA_BLOCKED || k == NGTCP2_ERR_STREAM_SHUT_WR ||
		    k == NGTCP2_ERR_STREAM_NOT_FOUND) {
			if (o && k == NGTCP2_ERR_STREAM_DATA_BLOCKED)
				o->blocked = true;
			else if (o)
				unqueue(c, (size_t)(o - c->out));
			continue;
		}
		if (k == NGTCP2_ERR_WRITE_MORE)
			continue;
		if (k < 0) {
			writing = NULL;
			conn_del(c);
			return false;
		}
		if (k == 0)
			break;
		send_to(&c->peer, c->peer_len, buf, (size_t)k);
		pkts++;
	}
	writing = NULL;
	ngtcp2_conn_update_pkt_tx_time(c->q, now);
	if (pkts == PKTS_PER_FLUSH)
		*more = true;
	return true;
}

/* ---- ngtcp2 callbacks ------------------------------------------------------- */

static void rand_cb(uint8_t *dest, size_t len, const ngtcp2_rand_ctx *rctx)
{
	(void)rctx;
	rnd(dest, len);
}

static int new_cid(ngtcp2_conn *q, ngtcp2_cid *cid, uint8_t *token, size_t cidlen, void *ud)
{
	(void)q, (void)cidlen;
	struct hconn *c = ud;
	memcpy(cid->data, c->key, KEY_LEN);
	rnd(cid->data + KEY_LEN, CID_LEN - KEY_LEN);
	cid->datalen = CID_LEN;
	rnd(token, NGTCP2_STATELESS_RESET_TOKENLEN);
	return 0;
}

static ngtcp2_conn *get_conn(ngtcp2_crypto_conn_ref *ref)
{
	return ((struct hconn *)ref->user_data)->q;
}

/* The plaintext of a 1-RTT packet of the connection being written, rewritten
 * when it is to be (bad_frame, ncid_flood), then encrypted as usual. */
static int encrypt_cb(uint8_t *dest, const ngtcp2_crypto_aead *aead,
		      const ngtcp2_crypto_aead_ctx *aead_ctx, const uint8_t *plaintext,
		      size_t plaintextlen, const uint8_t *nonce, size_t noncelen, const uint8_t *aad,
		      size_t aadlen)
{
	struct hconn *c = writing;
	if (!c || !c->tamper || !aadlen || (aad[0] & 0x80) || plaintextlen < 30 ||
	    plaintextlen > PKT_CAP)
		return ngtcp2_crypto_encrypt_cb(dest, aead, aead_ctx, plaintext, plaintextlen, nonce,
						noncelen, aad, aadlen);
	uint8_t p[PKT_CAP];
	memset(p, 0, plaintextlen); /* PADDING */
	if (mode == M_BAD_FRAME) {
		p[0] = 0x21; /* no such frame type */
	} else {
		/* NEW_CONNECTION_ID: type, sequence (2-byte varint), retire prior
		 * to 0, length 8, the ID, the reset token: 29 bytes */
		for (size_t off = 0; off + 29 <= plaintextlen; off += 29) {
			uint64_t seq = ncid_seq++ & 0x3fff;
			p[off] = 0x18;
			p[off + 1] = (uint8_t)(0x40 | (seq >> 8));
			p[off + 2] = (uint8_t)seq;
			p[off + 3] = 0;
			p[off + 4] = 8;
			rnd(p + off + 5, 8 + 16);
		}
	}
	if (c->tamper > 0)
		c->tamper--;
	st.tampered++;
	return ngtcp2_crypto_encrypt_cb(dest, aead, aead_ctx, p, plaintextlen, nonce, noncelen, aad,
					aadlen);
}

static int on_handshake_completed(ngtcp2_conn *q, void *ud)
{
	(void)q;
	struct hconn *c = ud;
	c->hs_done = true;
	st.handshakes++;
	return 0;
}

/* The server's unidirectional streams: control, and the QPACK encoder's. */
static int open_uni(struct hconn *c)
{
	if (c->opened_uni)
		return 0;
	c->opened_uni = true;
	int64_t ctrl, enc;
	if (ngtcp2_conn_open_uni_stream(c->q, &ctrl, NULL))
		return 0; /* not allowed yet: without */
	if (mode == M_GOAWAY_AT_ONCE)
		queue(c, ctrl, CONTROL_GOAWAY, sizeof CONTROL_GOAWAY, false);
	else
		queue(c, ctrl, CONTROL, sizeof CONTROL, false);
	if ((mode == M_QPACK_FLOOD || mode == M_QPACK_OVERFLOW) &&
	    !ngtcp2_conn_open_uni_stream(c->q, &enc, NULL)) {
		queue(c, enc, ENC_OPEN, ENC_OPEN_LEN, false);
		if (mode == M_QPACK_FLOOD)
			queue_endless(c, enc, PATTERN, PATTERN_LEN);
	}
	return 0;
}

static void stateless_reset(struct hconn *c)
{
	uint8_t buf[64], r[40];
	rnd(r, sizeof r);
	ngtcp2_ssize k = ngtcp2_pkt_write_stateless_reset(buf, sizeof buf, c->reset_token, r,
							  sizeof r);
	if (k > 0) {
		send_to(&c->peer, c->peer_len, buf, (size_t)k);
		st.resets++;
	}
}

static int on_recv_stream_data(ngtcp2_conn *q, uint32_t flags, int64_t sid, uint64_t off,
			       const uint8_t *data, size_t len, void *ud, void *sud)
{
	(void)off, (void)data, (void)sud;
	struct hconn *c = ud;
	ngtcp2_conn_extend_max_stream_offset(q, sid, len);
	ngtcp2_conn_extend_max_offset(q, len);
	open_uni(c);
	if ((sid & 3) != 0 || !(flags & NGTCP2_STREAM_DATA_FLAG_FIN))
		return 0; /* the client's uni streams, or more of a request to come */
	st.requests++;
	switch (mode) {
	case M_RESET:
		return NGTCP2_ERR_CALLBACK_FAILURE; /* the caller resets and forgets c */
	case M_BAD_FRAME:
		c->tamper = 4;
		queue(c, sid, BIG_RESPONSE, BIG_LEN, true);
		break;
	case M_NCID_FLOOD:
		c->tamper = -1;
		queue(c, sid, BIG_RESPONSE, BIG_LEN, true);
		break;
	case M_GOAWAY_AT_ONCE:
		ngtcp2_conn_shutdown_stream(q, sid, 0x10b); /* H3_REQUEST_REJECTED */
		break;
	case M_HUGE_FRAME:
		queue(c, sid, HUGE_HEAD, sizeof HUGE_HEAD, false);
		queue_endless(c, sid, FIELDS, FIELDS_LEN);
		break;
	default:
		queue(c, sid, RESPONSE, sizeof RESPONSE, true);
	}
	return 0;
}

static int on_stream_close(ngtcp2_conn *q, uint32_t flags, int64_t sid, uint64_t code, void *ud,
			   void *sud)
{
	(void)flags, (void)code, (void)sud;
	struct hconn *c = ud;
	for (size_t i = c->n_out; i-- > 0;)
		if (c->out[i].sid == sid)
			unqueue(c, i);
	if ((sid & 3) == 0 && mode != M_NO_STREAMS)
		ngtcp2_conn_extend_max_streams_bidi(q, 1);
	return 0;
}

static const ngtcp2_callbacks CBS = {
	.recv_client_initial = ngtcp2_crypto_recv_client_initial_cb,
	.recv_crypto_data = ngtcp2_crypto_recv_crypto_data_cb,
	.handshake_completed = on_handshake_completed,
	.encrypt = encrypt_cb,
	.decrypt = ngtcp2_crypto_decrypt_cb,
	.hp_mask = ngtcp2_crypto_hp_mask_cb,
	.recv_stream_data = on_recv_stream_data,
	.stream_close = on_stream_close,
	.rand = rand_cb,
	.get_new_connection_id = new_cid,
	.update_key = ngtcp2_crypto_update_key_cb,
	.delete_crypto_aead_ctx = ngtcp2_crypto_delete_crypto_aead_ctx_cb,
	.delete_crypto_cipher_ctx = ngtcp2_crypto_delete_crypto_cipher_ctx_cb,
	.get_path_challenge_data = ngtcp2_crypto_get_path_challenge_data_cb,
	.version_negotiation = ngtcp2_crypto_version_negotiation_cb,
};

static struct hconn *conn_new(const ngtcp2_pkt_hd *hd, const struct sockaddr_storage *from,
			      socklen_t flen, uint64_t now)
{
	struct hconn *c = NULL;
	for (int i = 0; i < MAX_CONNS && !c; i++)
		if (!conns[i].used)
			c = &conns[i];
	if (!c)
		return NULL;
	static const char alpn_h3[] = "h3";
	gnutls_datum_t alpn = {.data = (unsigned char *)alpn_h3, .size = 2};
	if (gnutls_init(&c->tls, GNUTLS_SERVER | GNUTLS_NO_END_OF_EARLY_DATA) < 0)
		return NULL;
	c->used = true;
	c->ref = (ngtcp2_crypto_conn_ref){.get_conn = get_conn, .user_data = c};
	if (gnutls_priority_set_direct(c->tls, quic_priority(), NULL) < 0 ||
	    ngtcp2_crypto_gnutls_configure_server_session(c->tls) != 0 ||
	    gnutls_credentials_set(c->tls, GNUTLS_CRD_CERTIFICATE, quic_ctx_cred(qctx)) < 0 ||
	    gnutls_alpn_set_protocols(c->tls, &alpn, 1, GNUTLS_ALPN_MANDATORY) < 0) {
		conn_del(c);
		return NULL;
	}
	gnutls_session_set_ptr(c->tls, &c->ref);
	c->peer = *from;
	c->peer_len = flen;
	c->odcid = hd->dcid;
	rnd(c->key, KEY_LEN);
	ngtcp2_cid scid = {.datalen = CID_LEN};
	memcpy(scid.data, c->key, KEY_LEN);
	rnd(scid.data + KEY_LEN, CID_LEN - KEY_LEN);
	ngtcp2_settings s;
	ngtcp2_settings_default(&s);
	s.initial_ts = now;
	s.no_pmtud = 1;
	s.handshake_timeout = 10 * NS_PER_S;
	ngtcp2_transport_params tp;
	ngtcp2_transport_params_default(&tp);
	rnd(c->reset_token, sizeof c->reset_token);
	memcpy(tp.stateless_reset_token, c->reset_token, sizeof c->reset_token);
	tp.stateless_reset_token_present = 1;
	tp.original_dcid = hd->dcid;
	tp.initial_max_stream_data_bidi_remote = 256u << 10;
	tp.initial_max_stream_data_uni = 256u << 10;
	tp.initial_max_data = 4u << 20;
	tp.initial_max_streams_bidi = mode == M_NO_STREAMS ? 0 : 100;
	tp.initial_max_streams_uni = 3;
	tp.max_idle_timeout = 10 * NS_PER_S;
	tp.max_udp_payload_size = PKT_CAP;
	tp.disable_active_migration = 1;
	ngtcp2_path path = {
		.local = {.addr = (ngtcp2_sockaddr *)&local, .addrlen = local_len},
		.remote = {.addr = (ngtcp2_sockaddr *)&c->peer, .addrlen = c->peer_len},
	};
	if (ngtcp2_conn_server_new(&c->q, &hd->scid, &scid, &path, hd->version, &CBS, &s, &tp, NULL,
				   c) != 0) {
		c->q = NULL;
		conn_del(c);
		return NULL;
	}
	ngtcp2_conn_set_tls_native_handle(c->q, c->tls);
	st.conns++;
	return c;
}

/* ---- datagrams ---------------------------------------------------------------- */

static void version_negotiation(const ngtcp2_version_cid *vc, const struct sockaddr_storage *from,
				socklen_t flen)
{
	/* reserved versions (RFC 9000 15: 0x?a?a?a?a) and a draft's, and in
	 * vn_own QUIC v1, the version the client asked for */
	uint32_t sv[] = {0x1a2a3a4au, 0xff00001du, NGTCP2_PROTO_VER_V1};
	size_t n = mode == M_VN_OWN ? 3 : 2;
	uint8_t buf[256], r;
	rnd(&r, 1);
	ngtcp2_ssize k = ngtcp2_pkt_write_version_negotiation(buf, sizeof buf, r, vc->scid,
							      vc->scidlen, vc->dcid, vc->dcidlen, sv, n);
	if (k > 0) {
		send_to(from, flen, buf, (size_t)k);
		st.vn++;
	}
}

static void datagram(const uint8_t *d, size_t len, const struct sockaddr_storage *from,
		     socklen_t flen, uint64_t now)
{
	st.datagrams++;
	if (mode == M_SILENT)
		return;
	if (mode == M_GARBAGE) {
		uint8_t g[1200];
		rnd(g, sizeof g);
		send_to(from, flen, g, sizeof g);
		return;
	}
	ngtcp2_version_cid vc;
	int rv = ngtcp2_pkt_decode_version_cid(&vc, d, len, CID_LEN);
	if (rv != 0 && rv != NGTCP2_ERR_VERSION_NEGOTIATION)
		return;
	if (mode == M_VN_UNKNOWN || mode == M_VN_OWN) {
		if (d[0] & 0x80)
			version_negotiation(&vc, from, flen);
		return;
	}
	if (rv)
		return;
	struct hconn *c = find(vc.dcid, vc.dcidlen);
	if (!c) {
		ngtcp2_pkt_hd hd;
		if (ngtcp2_accept(&hd, d, len) != 0 || hd.type != NGTCP2_PKT_INITIAL)
			return;
		c = conn_new(&hd, from, flen, now);
		if (!c)
			return;
	}
	ngtcp2_path path = {
		.local = {.addr = (ngtcp2_sockaddr *)&local, .addrlen = local_len},
		.remote = {.addr = (ngtcp2_sockaddr *)from, .addrlen = flen},
	};
	ngtcp2_pkt_info pi = {0};
	rv = ngtcp2_conn_read_pkt(c->q, &path, &pi, d, len, now);
	if (rv == NGTCP2_ERR_CALLBACK_FAILURE && mode == M_RESET && c->hs_done) {
		stateless_reset(c);
		conn_del(c);
		return;
	}
	if (rv) {
		if (rv != NGTCP2_ERR_DRAINING && rv != NGTCP2_ERR_DROP_CONN &&
		    !ngtcp2_conn_is_in_closing_period(c->q)) {
			ngtcp2_connection_close_error ce;
			ngtcp2_connection_close_error_set_transport_error_liberr(&ce, rv, NULL, 0);
			ngtcp2_path_storage ps;
			ngtcp2_path_storage_zero(&ps);
			uint8_t buf[PKT_CAP];
			ngtcp2_ssize k = ngtcp2_conn_write_connection_close(c->q, &ps.path, &pi, buf,
									   sizeof buf, &ce, now);
			if (k > 0)
				send_to(&c->peer, c->peer_len, buf, (size_t)k);
		}
		conn_del(c);
	}
}

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

int main(int argc, char **argv)
{
	size_t nmodes = sizeof MODE_NAMES / sizeof *MODE_NAMES;
	size_t m = nmodes;
	for (size_t i = 0; argc == 2 && i < nmodes; i++)
		if (!strcmp(argv[1], MODE_NAMES[i]))
			m = i;
	if (m == nmodes) {
		fprintf(stderr, "usage: h3hostile MODE (");
		for (size_t i = 0; i < nmodes; i++)
			fprintf(stderr, "%s%s", i ? ", " : "", MODE_NAMES[i]);
		fprintf(stderr, ")\n");
		return 2;
	}
	mode = (enum mode)m;
	build_static();
	struct tls_identity *id = NULL;
	char *cert = NULL, *key = NULL, err[256] = "";
	if (tls_identity_self_signed(&id, err, sizeof err) || tls_identity_pem(id, &cert, &key) ||
	    quic_server_ctx_new(&qctx, NULL, NULL, cert, key, err, sizeof err)) {
		fprintf(stderr, "h3hostile: certificate: %s\n", err);
		return 1;
	}
	free(cert);
	free(key);
	tls_identity_free(id);
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	local_len = sizeof local;
	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof a) < 0 ||
	    getsockname(fd, (struct sockaddr *)&local, &local_len) < 0) {
		perror("h3hostile: socket");
		return 1;
	}
	struct sigaction sa = {.sa_handler = on_signal};
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	printf("port %u\n", ntohs(((struct sockaddr_in *)&local)->sin_port));
	fflush(stdout);
	static uint8_t rx[RX_CAP];
	bool more = false;
	while (!stop) {
		uint64_t now = now_ns(), next = UINT64_MAX;
		for (int i = 0; i < MAX_CONNS; i++)
			if (conns[i].used) {
				uint64_t x = ngtcp2_conn_get_expiry(conns[i].q);
				next = x < next ? x : next;
			}
		int tmo = more ? 0
			  : next == UINT64_MAX ? 200
			  : next <= now	       ? 0
					       : (int)((next - now) / 1000000 + 1);
		tmo = tmo > 200 ? 200 : tmo;
		struct pollfd p = {.fd = fd, .events = POLLIN};
		int pr = poll(&p, 1, tmo);
		if (pr < 0 && errno != EINTR)
			break;
		now = now_ns();
		for (int round = 0; pr > 0 && round < 64; round++) {
			struct sockaddr_storage from;
			socklen_t flen = sizeof from;
			ssize_t n = recvfrom(fd, rx, sizeof rx, 0, (struct sockaddr *)&from, &flen);
			if (n < 0)
				break;
			datagram(rx, (size_t)n, &from, flen, now);
		}
		more = false;
		for (int i = 0; i < MAX_CONNS; i++) {
			struct hconn *c = &conns[i];
			if (!c->used)
				continue;
			if (ngtcp2_conn_get_expiry(c->q) <= now) {
				int rv = ngtcp2_conn_handle_expiry(c->q, now);
				if (rv) {
					conn_del(c);
					continue;
				}
			}
			if (ngtcp2_conn_is_in_closing_period(c->q) ||
			    ngtcp2_conn_is_in_draining_period(c->q)) {
				conn_del(c);
				continue;
			}
			if (c->hs_done)
				open_uni(c); /* SETTINGS (and the encoder stream) at once */
			flush(c, now, &more);
		}
	}
	for (int i = 0; i < MAX_CONNS; i++)
		if (conns[i].used)
			conn_del(&conns[i]);
	quic_ctx_free(qctx);
	printf("stats datagrams=%llu vn=%llu conns=%llu handshakes=%llu requests=%llu answered=%llu "
	       "resets=%llu tampered=%llu encoder_bytes=%llu\n",
	       st.datagrams, st.vn, st.conns, st.handshakes, st.requests, st.answered, st.resets,
	       st.tampered, st.encoder_bytes);
	fflush(stdout);
	close(fd);
	return 0;
}
