/* pacer — QUIC v1 (ngtcp2) with its TLS 1.3 from GnuTLS (ngtcp2's GnuTLS
 * crypto backend: Debian's OpenSSL 3.0 has no QUIC API), for the engine's
 * HTTP/3 connections, the probe before a run and the embedded target.
 *
 * A context holds the GnuTLS credentials (client: the trust anchors and
 * the verification; server: the certificate and key), shared read-only by
 * threads. A client connection (struct quic_client, the caller's memory) is
 * an ngtcp2 client connection with its GnuTLS session, made with the
 * caller's stream callbacks (this file fills in the crypto ones); its
 * packets go through the caller's socket. ALPN "h3" is mandatory: a server
 * that does not choose it fails the handshake.
 *
 * Certificates are verified as for HTTPS (net/tls.h): the system store,
 * --cacert, or exactly one trusted certificate; a host name is sent as SNI
 * and checked, an IP literal is checked against the certificate's IP
 * addresses and not sent; --insecure checks nothing.
 *
 * Times are CLOCK_MONOTONIC nanoseconds (ngtcp2's timestamps). Return codes:
 * 0 or a negative errno, QUIC_FAILED with a reason. */
#ifndef PACER_NET_QUIC_H
#define PACER_NET_QUIC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <gnutls/gnutls.h>
#include <ngtcp2/ngtcp2.h>
#include <ngtcp2/ngtcp2_crypto.h>

#include "net/sock.h"

#define QUIC_FAILED (-20101)    /* the handshake (or the probe) failed: see the reason */
#define QUIC_REASON_CAP 200     /* bytes of a failure reason, NUL included */

struct quic_ctx; /* GnuTLS credentials, client or server */

/* Client settings (zero: verify against the system store). */
struct quic_client_cfg {
	bool insecure;          /* no certificate verification */
	const char *cacert;     /* PEM file of trusted CAs instead of the system store */
	const char *cert, *key; /* client certificate and key (PEM) for servers that ask */
	const char *trust_pem;  /* trust exactly this PEM certificate (in memory) */
};

/* A client context. 0, or -EINVAL with a one-line reason naming the file
 * ("--cacert ca.pem: ..."), or -ENOMEM. */
int quic_client_ctx_new(struct quic_ctx **out, const struct quic_client_cfg *cfg, char *err,
			size_t errlen);
/* A server context: the certificate (chain) and key as PEM files, or in
 * memory (cert_pem and key_pem not NULL: the files are ignored). 0, or
 * -EINVAL with a reason, -ENOMEM. */
int quic_server_ctx_new(struct quic_ctx **out, const char *cert_file, const char *key_file,
			const char *cert_pem, const char *key_pem, char *err, size_t errlen);
void quic_ctx_free(struct quic_ctx *ctx);

/* The credentials and the session priority (TLS 1.3, QUIC's ciphers), for
 * a server session of the embedded target. */
gnutls_certificate_credentials_t quic_ctx_cred(const struct quic_ctx *ctx);
const char *quic_priority(void);

/* What a client connection is made with. */
struct quic_client_params {
	const struct net_addr *local, *remote; /* the socket's two ends */
	const char *host;            /* SNI (a name) and the name verified; NULL: none */
	uint64_t now_ns;
	uint64_t idle_timeout_ns;    /* 0: none (the connection lives while used) */
	uint64_t handshake_timeout_ns;
	uint64_t stream_window;      /* receive window of each stream, bytes */
	uint64_t conn_window;        /* of the connection */
	uint64_t max_streams_uni;    /* unidirectional streams the server may open (HTTP/3: its
	                              * control and QPACK streams, and room for more) */
};

/* One client connection; zero it, then quic_client_new. */
struct quic_client {
	ngtcp2_conn *conn;
	gnutls_session_t tls;
	ngtcp2_crypto_conn_ref ref; /* GnuTLS's way back to conn */
	bool verify;                /* the certificate is checked */
};

/* Make q: a GnuTLS session of ctx and an ngtcp2 client connection with
 * random connection IDs, QUIC v1, the stream callbacks of app (its crypto
 * callbacks are ignored: this file's) and user_data for them. 0, -ENOMEM,
 * or -EIO with a reason in err. */
int quic_client_new(struct quic_client *q, struct quic_ctx *ctx, const struct quic_client_params *p,
		    const ngtcp2_callbacks *app, void *user_data, char *err, size_t errlen);
/* Free what quic_client_new made (the socket is the caller's). */
void quic_client_free(struct quic_client *q);

/* Write what q has to send (no stream data: the handshake, ACKs,
 * retransmissions, a CONNECTION_CLOSE after a failure) into buf as
 * datagrams of lens[i] bytes, at most max of them. The count, or an ngtcp2
 * error. */
int quic_client_write(struct quic_client *q, uint8_t *buf, size_t cap, size_t *lens, size_t max,
		      uint64_t now);

/* Why a connection failed, in words, from the ngtcp2 error liberr that
 * ended it (read_pkt, handle_expiry, writev_stream), the server's
 * CONNECTION_CLOSE (draining), or the certificate's verification. */
void quic_client_reason(struct quic_client *q, int liberr, char *out, size_t cap);

/* The TLS version ("TLSv1.3") and cipher of a connection's session. */
const char *quic_tls_version(const struct quic_client *q);
const char *quic_tls_cipher(const struct quic_client *q);

/* The name of a QUIC transport error code (RFC 9000 20.1; 0x100-0x1ff:
 * "CRYPTO_ERROR"), and of an HTTP/3 or QPACK application error code (RFC
 * 9114 8.1, RFC 9204 6); NULL when unknown. */
const char *quic_transport_error_name(uint64_t code);
const char *quic_h3_error_name(uint64_t code);

/* Check before a run: a QUIC handshake with the server at a (ALPN h3, ctx's
 * verification), blocking, at most timeout_ns. 0, QUIC_FAILED with the
 * reason, or a negative errno (-ETIMEDOUT: no answer; -ECONNREFUSED: an
 * ICMP port unreachable). */
int quic_probe(struct quic_ctx *ctx, const struct net_addr *a, const char *host,
	       uint64_t timeout_ns, char *reason, size_t cap);

#endif
