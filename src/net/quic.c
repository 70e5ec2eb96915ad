/* pacer — QUIC v1 with GnuTLS (net/quic.h): credentials, client
 * connections, failure reasons in words, and the probe before a run. */
#include "net/quic.h"

#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <gnutls/crypto.h>
#include <gnutls/x509.h>
#include <ngtcp2/ngtcp2_crypto_gnutls.h>

#include "net/udp.h"
#include "util/clock.h"

struct quic_ctx {
	gnutls_certificate_credentials_t cred;
	bool server;
	bool verify;
};

/* TLS 1.3 only, QUIC's ciphers and groups; no middlebox compatibility mode
 * (QUIC has no middleboxes to fool). */
static const char PRIORITY[] =
	"%DISABLE_TLS13_COMPAT_MODE:NORMAL:-VERS-ALL:+VERS-TLS1.3:-CIPHER-ALL:+AES-128-GCM:"
	"+AES-256-GCM:+CHACHA20-POLY1305:+AES-128-CCM:-GROUP-ALL:+GROUP-X25519:+GROUP-SECP256R1:"
	"+GROUP-SECP384R1:+GROUP-SECP521R1";

static const char ALPN_H3[] = "h3";

const char *quic_priority(void) { return PRIORITY; }

gnutls_certificate_credentials_t quic_ctx_cred(const struct quic_ctx *ctx) { return ctx->cred; }

static void say(char *err, size_t cap, const char *fmt, ...)
{
	if (!err || !cap)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, cap, fmt, ap);
	va_end(ap);
}

int quic_client_ctx_new(struct quic_ctx **out, const struct quic_client_cfg *cfg, char *err,
			size_t errlen)
{
	*out = NULL;
	struct quic_ctx *c = calloc(1, sizeof *c);
	if (!c || gnutls_certificate_allocate_credentials(&c->cred) < 0) {
		free(c);
		say(err, errlen, "out of memory for QUIC's TLS credentials");
		return -ENOMEM;
	}
	int rc = 0;
	c->verify = !cfg->insecure;
	if (c->verify) {
		if (cfg->trust_pem) {
			gnutls_datum_t d = {.data = (unsigned char *)cfg->trust_pem,
					    .size = (unsigned)strlen(cfg->trust_pem)};
			rc = gnutls_certificate_set_x509_trust_mem(c->cred, &d, GNUTLS_X509_FMT_PEM);
			if (rc <= 0)
				say(err, errlen, "the generated certificate: %s",
				    rc < 0 ? gnutls_strerror(rc) : "no certificate in it");
		} else if (cfg->cacert) {
			rc = gnutls_certificate_set_x509_trust_file(c->cred, cfg->cacert,
								     GNUTLS_X509_FMT_PEM);
			if (rc <= 0)
				say(err, errlen, "--cacert %s: %s", cfg->cacert,
				    rc < 0 ? gnutls_strerror(rc) : "no PEM certificate in it");
		} else {
			rc = gnutls_certificate_set_x509_system_trust(c->cred);
			if (rc < 0)
				say(err, errlen, "the system's trusted certificates: %s",
				    gnutls_strerror(rc));
			else
				rc = 1; /* an empty store is the system's; verification says so */
		}
		if (rc <= 0) {
			quic_ctx_free(c);
			return -EINVAL;
		}
	}
	if (cfg->cert) {
		const char *key = cfg->key ? cfg->key : cfg->cert;
		rc = gnutls_certificate_set_x509_key_file(c->cred, cfg->cert, key, GNUTLS_X509_FMT_PEM);
		if (rc < 0) {
			say(err, errlen, "--cert %s / --key %s: %s", cfg->cert, key, gnutls_strerror(rc));
			quic_ctx_free(c);
			return -EINVAL;
		}
	}
	*out = c;
	return 0;
}

int quic_server_ctx_new(struct quic_ctx **out, const char *cert_file, const char *key_file,
			const char *cert_pem, const char *key_pem, char *err, size_t errlen)
{
	*out = NULL;
	struct quic_ctx *c = calloc(1, sizeof *c);
	if (!c || gnutls_certificate_allocate_credentials(&c->cred) < 0) {
		free(c);
		say(err, errlen, "out of memory for QUIC's TLS credentials");
		return -ENOMEM;
	}
	c->server = true;
	int rc;
	if (cert_pem && key_pem) {
		gnutls_datum_t cd = {.data = (unsigned char *)cert_pem, .size = (unsigned)strlen(cert_pem)};
		gnutls_datum_t kd = {.data = (unsigned char *)key_pem, .size = (unsigned)strlen(key_pem)};
		rc = gnutls_certificate_set_x509_key_mem(c->cred, &cd, &kd, GNUTLS_X509_FMT_PEM);
		if (rc < 0)
			say(err, errlen, "the generated certificate: %s", gnutls_strerror(rc));
	} else {
		const char *key = key_file ? key_file : cert_file;
		rc = cert_file ? gnutls_certificate_set_x509_key_file(c->cred, cert_file, key,
								      GNUTLS_X509_FMT_PEM)
			       : GNUTLS_E_INVALID_REQUEST;
		if (rc < 0)
			say(err, errlen, "%s / %s: %s", cert_file ? cert_file : "(no certificate)",
			    key ? key : "", gnutls_strerror(rc));
	}
	if (rc < 0) {
		quic_ctx_free(c);
		return -EINVAL;
	}
	*out = c;
	return 0;
}

void quic_ctx_free(struct quic_ctx *ctx)
{
	if (!ctx)
		return;
	if (ctx->cred)
		gnutls_certificate_free_credentials(ctx->cred);
	free(ctx);
}

/* ---- client connections --------------------------------------------------- */

static void rand_cb(uint8_t *dest, size_t len, const ngtcp2_rand_ctx *rctx)
{
	(void)rctx;
	(void)gnutls_rnd(GNUTLS_RND_RANDOM, dest, len);
}

static int new_cid_cb(ngtcp2_conn *conn, ngtcp2_cid *cid, uint8_t *token, size_t cidlen,
		      void *ud)
{
	(void)conn;
	(void)ud;
	if (gnutls_rnd(GNUTLS_RND_RANDOM, cid->data, cidlen) != 0 ||
	    gnutls_rnd(GNUTLS_RND_RANDOM, token, NGTCP2_STATELESS_RESET_TOKENLEN) != 0)
		return NGTCP2_ERR_CALLBACK_FAILURE;
	cid->datalen = cidlen;
	return 0;
}

static ngtcp2_conn *get_conn(ngtcp2_crypto_conn_ref *ref)
{
	return ((struct quic_client *)ref->user_data)->conn;
}

static bool ip_literal(const char *host)
{
	unsigned char b[16];
	return inet_pton(AF_INET, host, b) == 1 || inet_pton(AF_INET6, host, b) == 1;
}

static int session_new(struct quic_client *q, struct quic_ctx *ctx, const char *host, char *err,
		       size_t errlen)
{
	int rc = gnutls_init(&q->tls, GNUTLS_CLIENT | GNUTLS_NO_END_OF_EARLY_DATA);
	if (rc < 0) {
		q->tls = NULL;
		say(err, errlen, "gnutls_init: %s", gnutls_strerror(rc));
		return rc == GNUTLS_E_MEMORY_ERROR ? -ENOMEM : -EIO;
	}
	gnutls_datum_t alpn = {.data = (unsigned char *)ALPN_H3, .size = sizeof ALPN_H3 - 1};
	if ((rc = gnutls_priority_set_direct(q->tls, PRIORITY, NULL)) < 0 ||
	    ngtcp2_crypto_gnutls_configure_client_session(q->tls) != 0 ||
	    (rc = gnutls_credentials_set(q->tls, GNUTLS_CRD_CERTIFICATE, ctx->cred)) < 0 ||
	    (rc = gnutls_alpn_set_protocols(q->tls, &alpn, 1, GNUTLS_ALPN_MANDATORY)) < 0) {
		say(err, errlen, "QUIC's TLS session: %s", rc < 0 ? gnutls_strerror(rc)
								 : "ngtcp2 refused the session");
		return -EIO;
	}
	gnutls_session_set_ptr(q->tls, &q->ref);
	if (host && *host && !ip_literal(host))
		gnutls_server_name_set(q->tls, GNUTLS_NAME_DNS, host, strlen(host));
	q->verify = ctx->verify;
	if (ctx->verify)
		gnutls_session_set_verify_cert(q->tls, host && *host ? host : NULL, 0);
	return 0;
}

int quic_client_new(struct quic_client *q, struct quic_ctx *ctx, const struct quic_client_params *p,
		    const ngtcp2_callbacks *app, void *user_data, char *err, size_t errlen)
{
	memset(q, 0, sizeof *q);
	q->ref.get_conn = get_conn;
	q->ref.user_data = q;
	int rc = session_new(q, ctx, p->host, err, errlen);
	if (rc) {
		quic_client_free(q);
		return rc;
	}
	ngtcp2_callbacks cb = *app;
	cb.client_initial = ngtcp2_crypto_client_initial_cb;
	cb.recv_crypto_data = ngtcp2_crypto_recv_crypto_data_cb;
	cb.encrypt = ngtcp2_crypto_encrypt_cb;
	cb.decrypt = ngtcp2_crypto_decrypt_cb;
	cb.hp_mask = ngtcp2_crypto_hp_mask_cb;
	cb.recv_retry = ngtcp2_crypto_recv_retry_cb;
	cb.rand = rand_cb;
	cb.get_new_connection_id = new_cid_cb;
	cb.update_key = ngtcp2_crypto_update_key_cb;
	cb.delete_crypto_aead_ctx = ngtcp2_crypto_delete_crypto_aead_ctx_cb;
	cb.delete_crypto_cipher_ctx = ngtcp2_crypto_delete_crypto_cipher_ctx_cb;
	cb.get_path_challenge_data = ngtcp2_crypto_get_path_challenge_data_cb;
	cb.version_negotiation = ngtcp2_crypto_version_negotiation_cb;

	ngtcp2_cid dcid = {.datalen = 18}, scid = {.datalen = 17};
	if (gnutls_rnd(GNUTLS_RND_RANDOM, dcid.data, dcid.datalen) != 0 ||
	    gnutls_rnd(GNUTLS_RND_RANDOM, scid.data, scid.datalen) != 0) {
		say(err, errlen, "no random connection IDs");
		quic_client_free(q);
		return -EIO;
	}
	ngtcp2_settings st;
	ngtcp2_settings_default(&st);
	st.initial_ts = p->now_ns;
	st.handshake_timeout = p->handshake_timeout_ns ? p->handshake_timeout_ns : UINT64_MAX;
	if (p->stream_window)
		st.max_stream_window = p->stream_window;
	if (p->conn_window)
		st.max_window = p->conn_window;
	ngtcp2_transport_params tp;
	ngtcp2_transport_params_default(&tp);
	tp.initial_max_stream_data_bidi_local = p->stream_window ? p->stream_window : 256 * 1024;
	tp.initial_max_stream_data_uni = p->stream_window ? p->stream_window : 256 * 1024;
	tp.initial_max_data = p->conn_window ? p->conn_window : 1024 * 1024;
	tp.initial_max_streams_bidi = 0; /* the server opens none */
	tp.initial_max_streams_uni = p->max_streams_uni ? p->max_streams_uni : 3;
	tp.max_idle_timeout = p->idle_timeout_ns;
	tp.active_connection_id_limit = 4; /* more NEW_CONNECTION_ID is the server's error */
	ngtcp2_path path = {
		.local = {.addr = (ngtcp2_sockaddr *)&p->local->ss, .addrlen = p->local->len},
		.remote = {.addr = (ngtcp2_sockaddr *)&p->remote->ss, .addrlen = p->remote->len},
	};
	rc = ngtcp2_conn_client_new(&q->conn, &dcid, &scid, &path, NGTCP2_PROTO_VER_V1, &cb, &st, &tp,
				    NULL, user_data);
	if (rc) {
		q->conn = NULL;
		say(err, errlen, "ngtcp2_conn_client_new: %s", ngtcp2_strerror(rc));
		quic_client_free(q);
		return rc == NGTCP2_ERR_NOMEM ? -ENOMEM : -EIO;
	}
	ngtcp2_conn_set_tls_native_handle(q->conn, q->tls);
	return 0;
}

void quic_client_free(struct quic_client *q)
{
	if (q->conn)
		ngtcp2_conn_del(q->conn);
	if (q->tls)
		gnutls_deinit(q->tls);
	q->conn = NULL;
	q->tls = NULL;
}

int quic_client_write(struct quic_client *q, uint8_t *buf, size_t cap, size_t *lens, size_t max,
		      uint64_t now)
{
	size_t pmax = ngtcp2_conn_get_max_tx_udp_payload_size(q->conn);
	size_t n = 0, off = 0;
	ngtcp2_path_storage ps;
	ngtcp2_path_storage_zero(&ps);
	while (n < max && cap - off >= pmax) {
		ngtcp2_pkt_info pi;
		ngtcp2_ssize w = ngtcp2_conn_write_pkt(q->conn, &ps.path, &pi, buf + off, pmax, now);
		if (w < 0)
			return (int)w;
		if (w == 0)
			break;
		lens[n++] = (size_t)w;
		off += (size_t)w;
	}
	ngtcp2_conn_update_pkt_tx_time(q->conn, now);
	return (int)n;
}

/* ---- failures in words ------------------------------------------------------- */

const char *quic_transport_error_name(uint64_t code)
{
	static const char *const names[] = {
		"NO_ERROR",           "INTERNAL_ERROR",        "CONNECTION_REFUSED",
		"FLOW_CONTROL_ERROR", "STREAM_LIMIT_ERROR",    "STREAM_STATE_ERROR",
		"FINAL_SIZE_ERROR",   "FRAME_ENCODING_ERROR",  "TRANSPORT_PARAMETER_ERROR",
		"CONNECTION_ID_LIMIT_ERROR", "PROTOCOL_VIOLATION", "INVALID_TOKEN",
		"APPLICATION_ERROR",  "CRYPTO_BUFFER_EXCEEDED", "KEY_UPDATE_ERROR",
		"AEAD_LIMIT_REACHED", "NO_VIABLE_PATH"};
	if (code < sizeof names / sizeof names[0])
		return names[code];
	if (code >= 0x100 && code <= 0x1ff)
		return "CRYPTO_ERROR";
	return NULL;
}

const char *quic_h3_error_name(uint64_t code)
{
	static const char *const h3[] = {
		"H3_NO_ERROR",           "H3_GENERAL_PROTOCOL_ERROR", "H3_INTERNAL_ERROR",
		"H3_STREAM_CREATION_ERROR", "H3_CLOSED_CRITICAL_STREAM", "H3_FRAME_UNEXPECTED",
		"H3_FRAME_ERROR",        "H3_EXCESSIVE_LOAD",         "H3_ID_ERROR",
		"H3_SETTINGS_ERROR",     "H3_MISSING_SETTINGS",       "H3_REQUEST_REJECTED",
		"H3_REQUEST_CANCELLED",  "H3_REQUEST_INCOMPLETE",     "H3_MESSAGE_ERROR",
		"H3_CONNECT_ERROR",      "H3_VERSION_FALLBACK"};
	static const char *const qpack[] = {"QPACK_DECOMPRESSION_FAILED",
					    "QPACK_ENCODER_STREAM_ERROR",
					    "QPACK_DECODER_STREAM_ERROR"};
	if (code >= 0x100 && code < 0x100 + sizeof h3 / sizeof h3[0])
		return h3[code - 0x100];
	if (code >= 0x200 && code < 0x200 + sizeof qpack / sizeof qpack[0])
		return qpack[code - 0x200];
	return NULL;
}

/* The server's CONNECTION_CLOSE, in words. */
static void peer_close(struct quic_client *q, char *out, size_t cap)
{
	ngtcp2_connection_close_error e;
	ngtcp2_conn_get_connection_close_error(q->conn, &e);
	char why[96] = "";
	if (e.reasonlen) {
		size_t n = e.reasonlen < 64 ? e.reasonlen : 64;
		size_t k = 0;
		why[k++] = ':';
		why[k++] = ' ';
		for (size_t i = 0; i < n; i++) /* printable ASCII only: the server's words */
			why[k++] = e.reason[i] >= 0x20 && e.reason[i] < 0x7f ? (char)e.reason[i] : '?';
		why[k] = '\0';
	}
	switch (e.type) {
	case NGTCP2_CONNECTION_CLOSE_ERROR_CODE_TYPE_APPLICATION: {
		const char *n = quic_h3_error_name(e.error_code);
		snprintf(out, cap, "the server closed the connection: %s (0x%llx)%s",
			 n ? n : "application error", (unsigned long long)e.error_code, why);
		break;
	}
	case NGTCP2_CONNECTION_CLOSE_ERROR_CODE_TYPE_TRANSPORT: {
		const char *n = quic_transport_error_name(e.error_code);
		if (e.error_code >= 0x100 && e.error_code <= 0x1ff)
			snprintf(out, cap, "the server closed the connection: CRYPTO_ERROR (TLS "
					   "alert %s)%s",
				 gnutls_alert_get_strname((gnutls_alert_description_t)(e.error_code &
										       0xff)),
				 why);
		else
			snprintf(out, cap, "the server closed the connection: %s (0x%llx)%s",
				 n ? n : "transport error", (unsigned long long)e.error_code, why);
		break;
	}
	default:
		snprintf(out, cap, "the server closed the connection%s", why);
	}
}

static void verify_reason(struct quic_client *q, char *out, size_t cap)
{
	unsigned status = gnutls_session_get_verify_cert_status(q->tls);
	gnutls_datum_t d = {0};
	const char *why = "not trusted";
	if (gnutls_certificate_verification_status_print(status, GNUTLS_CRT_X509, &d, 0) == 0 &&
	    d.data) {
		why = (const char *)d.data;
		for (size_t n = strlen(why); n && why[n - 1] == ' '; n--)
			d.data[n - 1] = '\0'; /* GnuTLS ends its sentences with a space */
	}
	const char *hint = " — pass --cacert FILE (the CA that signed it) or --insecure";
	if (status & GNUTLS_CERT_UNEXPECTED_OWNER)
		hint = " — the certificate is for another name; connect by its name or pass --insecure";
	else if (status & (GNUTLS_CERT_EXPIRED | GNUTLS_CERT_NOT_ACTIVATED))
		hint = " — renew it, or pass --insecure";
	snprintf(out, cap, "certificate verify failed (%s)%s", why, hint);
	gnutls_free(d.data);
}

void quic_client_reason(struct quic_client *q, int liberr, char *out, size_t cap)
{
	switch (liberr) {
	case NGTCP2_ERR_DRAINING:
	case NGTCP2_ERR_CLOSING:
		peer_close(q, out, cap);
		return;
	case NGTCP2_ERR_IDLE_CLOSE:
		snprintf(out, cap, "QUIC idle timeout: nothing from the server within the idle "
				   "timeout");
		return;
	case NGTCP2_ERR_HANDSHAKE_TIMEOUT:
		snprintf(out, cap, "QUIC handshake timed out (--timeout)");
		return;
	case NGTCP2_ERR_RECV_VERSION_NEGOTIATION:
	case NGTCP2_ERR_VERSION_NEGOTIATION_FAILURE:
		snprintf(out, cap, "the server does not speak QUIC v1 (version negotiation)");
		return;
	case NGTCP2_ERR_CRYPTO:
		if (q->verify && gnutls_session_get_verify_cert_status(q->tls) != 0) {
			verify_reason(q, out, cap);
			return;
		}
		{
			uint8_t alert = ngtcp2_conn_get_tls_alert(q->conn);
			if (alert == GNUTLS_A_NO_APPLICATION_PROTOCOL)
				snprintf(out, cap, "the server does not offer HTTP/3 (ALPN h3)");
			else
				snprintf(out, cap, "TLS handshake failed (alert %s)",
					 alert ? gnutls_alert_get_strname(alert) : "none");
		}
		return;
	default: {
		/* a violation pacer found in what the server sent: named by the
		 * QUIC transport error pacer closed the connection with */
		uint64_t code = ngtcp2_err_infer_quic_transport_error_code(liberr);
		const char *n = quic_transport_error_name(code);
		if (code != NGTCP2_INTERNAL_ERROR && n)
			snprintf(out, cap, "the server broke QUIC: %s (pacer closed the connection; %s)",
				 n, ngtcp2_strerror(liberr));
		else
			snprintf(out, cap, "QUIC: %s", ngtcp2_strerror(liberr));
	}
	}
}

const char *quic_tls_version(const struct quic_client *q)
{
	const char *v = gnutls_protocol_get_name(gnutls_protocol_get_version(q->tls));
	return v && !strcmp(v, "TLS1.3") ? "TLSv1.3" : v ? v : "";
}

const char *quic_tls_cipher(const struct quic_client *q)
{
	const char *c = gnutls_cipher_get_name(gnutls_cipher_get(q->tls));
	return c ? c : "";
}

/* ---- the probe -------------------------------------------------------------- */

struct probe {
	bool done;
};

static int probe_done(ngtcp2_conn *conn, void *ud)
{
	(void)conn;
	((struct probe *)ud)->done = true;
	return 0;
}

static int probe_stream_data(ngtcp2_conn *conn, uint32_t flags, int64_t sid, uint64_t off,
			     const uint8_t *data, size_t len, void *ud, void *sud)
{
	(void)flags, (void)off, (void)data, (void)ud, (void)sud;
	ngtcp2_conn_extend_max_stream_offset(conn, sid, len);
	ngtcp2_conn_extend_max_offset(conn, len);
	return 0;
}

int quic_probe(struct quic_ctx *ctx, const struct net_addr *a, const char *host,
	       uint64_t timeout_ns, char *reason, size_t cap)
{
	if (cap)
		reason[0] = '\0';
	struct udp_caps caps;
	int fd = net_udp_connect(a);
	if (fd < 0)
		return fd;
	net_udp_caps(fd, &caps);
	struct net_addr local = {.len = sizeof local.ss};
	if (getsockname(fd, (struct sockaddr *)&local.ss, &local.len) < 0) {
		int e = -errno;
		close(fd);
		return e;
	}
	uint64_t t0 = clock_now_ns(), end = t0 + timeout_ns;
	struct probe pr = {0};
	ngtcp2_callbacks cb = {.handshake_completed = probe_done,
			       .recv_stream_data = probe_stream_data};
	struct quic_client_params p = {.local = &local, .remote = a, .host = host, .now_ns = t0,
				       .handshake_timeout_ns = timeout_ns, .max_streams_uni = 3};
	struct quic_client q;
	int rc = quic_client_new(&q, ctx, &p, &cb, &pr, reason, cap);
	if (rc) {
		close(fd);
		return rc;
	}
	uint8_t *buf = malloc(65536);
	if (!buf) {
		quic_client_free(&q);
		close(fd);
		return -ENOMEM;
	}
	size_t lens[UDP_TX_MAX];
	for (;;) {
		uint64_t now = clock_now_ns();
		int n = quic_client_write(&q, buf, 65536, lens, UDP_TX_MAX, now);
		if (n < 0) {
			quic_client_reason(&q, n, reason, cap);
			rc = QUIC_FAILED;
			break;
		}
		if (n > 0 && (rc = udp_send(fd, &caps, buf, lens, (size_t)n)) < 0 && rc != -EAGAIN)
			break;
		rc = 0;
		if (pr.done)
			break;
		if (now >= end) {
			rc = -ETIMEDOUT;
			break;
		}
		uint64_t exp = ngtcp2_conn_get_expiry(q.conn);
		uint64_t until = exp < end ? exp : end;
		int ms = until > now ? (int)((until - now + 999999) / 1000000) : 0;
		struct pollfd pfd = {.fd = fd, .events = POLLIN};
		int pn = poll(&pfd, 1, ms);
		now = clock_now_ns();
		if (pn > 0) {
			ssize_t len = recv(fd, buf, 65536, MSG_DONTWAIT);
			if (len < 0 && errno != EAGAIN && errno != EINTR) {
				rc = -errno;
				break;
			}
			if (len > 0) {
				ngtcp2_path path = {
					.local = {.addr = (ngtcp2_sockaddr *)&local.ss, .addrlen = local.len},
					.remote = {.addr = (ngtcp2_sockaddr *)&a->ss, .addrlen = a->len},
				};
				ngtcp2_pkt_info pi = {0};
				int r = ngtcp2_conn_read_pkt(q.conn, &path, &pi, buf, (size_t)len, now);
				if (r) {
					quic_client_reason(&q, r, reason, cap);
					rc = QUIC_FAILED;
					break;
				}
			}
		} else if (now >= exp) {
			int r = ngtcp2_conn_handle_expiry(q.conn, now);
			if (r) {
				quic_client_reason(&q, r, reason, cap);
				rc = r == NGTCP2_ERR_HANDSHAKE_TIMEOUT ? -ETIMEDOUT : QUIC_FAILED;
				break;
			}
		}
	}
	if (rc == 0 || rc == QUIC_FAILED) {
		/* say goodbye, so that the server does not keep the connection */
		ngtcp2_connection_close_error ce;
		ngtcp2_connection_close_error_default(&ce);
		if (rc == QUIC_FAILED)
			ngtcp2_connection_close_error_set_transport_error_liberr(&ce, NGTCP2_ERR_INTERNAL,
										 NULL, 0);
		else
			ngtcp2_connection_close_error_set_application_error(&ce, 0x100, NULL, 0);
		ngtcp2_path_storage ps;
		ngtcp2_path_storage_zero(&ps);
		ngtcp2_pkt_info pi;
		ngtcp2_ssize w = ngtcp2_conn_write_connection_close(q.conn, &ps.path, &pi, buf, 1500, &ce,
								   clock_now_ns());
		if (w > 0)
			(void)send(fd, buf, (size_t)w, MSG_DONTWAIT);
	}
	free(buf);
	quic_client_free(&q);
	close(fd);
	return rc;
}
