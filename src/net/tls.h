/* pacer — TLS transport (OpenSSL) for the engine and the embedded target.
 *
 * A small interface over non-blocking sockets so callers need not know
 * OpenSSL: a context (client or server, shared read-only by threads), a
 * connection per socket with a non-blocking handshake, and read/write calls
 * that report "would block" the way read()/write() report EAGAIN — except
 * that TLS may need the other direction (a read can need a write, a write a
 * read), so both are reported distinctly.
 *
 * Client defaults: TLS 1.2 minimum (1.3 allowed), ALPN "http/1.1", SNI for
 * host names (not IP literals), certificate verification against the system
 * store with host-name (or IP) checking, session resumption through a
 * per-thread struct tls_resume (no locks).
 *
 * Return codes: 0 / a byte count, or TLS_WANT_READ, TLS_WANT_WRITE,
 * TLS_FAILED (the connection is unusable; tls_fail_kind/tls_fail_reason say
 * why), or a negative errno for set-up errors. */
#ifndef PACER_NET_TLS_H
#define PACER_NET_TLS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define TLS_WANT_READ (-20001)  /* wait until the socket is readable, then call again */
#define TLS_WANT_WRITE (-20002) /* wait until the socket is writable, then call again */
#define TLS_FAILED (-20003)     /* the connection failed; see tls_fail_kind */
#define TLS_NO_H2 (-20004)      /* tls_probe with a context offering h2: the handshake
                                 * worked, but the server chose HTTP/1.1 */

#define TLS_REASON_CAP 200 /* bytes of a failure reason, NUL included */
#define TLS_FINGERPRINT_CAP 96 /* "AB:CD:...": 32 bytes as hex pairs with colons, NUL */

/* Why a TLS connection failed. */
enum tls_fail {
	TLS_FAIL_NONE = 0,
	TLS_FAIL_VERIFY,   /* the peer's certificate was not accepted (CA, expiry, name) */
	TLS_FAIL_NOT_TLS,  /* the peer does not speak TLS (a plain-HTTP server?) */
	TLS_FAIL_PROTOCOL, /* any other TLS error: an alert, no common version or cipher */
	TLS_FAIL_IO,       /* the connection failed or was closed underneath */
};

struct tls_ctx;      /* an SSL_CTX: client or server; shared by threads for tls_conn_new */
struct tls_conn;     /* one TLS connection over one socket */
struct tls_identity; /* a private key and its certificate, in memory */

/* Client settings. Zero-initialised means: verify against the system store,
 * no client certificate. */
struct tls_client_cfg {
	bool insecure;      /* no certificate verification at all */
	const char *cacert; /* PEM file of trusted CAs, instead of the system store */
	const char *cert;   /* PEM client certificate (chain) for mutual TLS, or NULL */
	const char *key;    /* its PEM private key (NULL: in the cert file) */
	const struct tls_identity *trust; /* trust exactly this certificate (instead of
	                                   * the system store and cacert); borrowed */
	bool alpn_h2;       /* offer ALPN "h2" before "http/1.1" (--http2); tls_alpn_h2 says
	                     * what the server chose */
};

/* Resumption state of one thread: the last session a server issued, offered
 * on the next connection. Zero-initialise; not shared between threads; free
 * with tls_resume_clear. */
struct tls_resume {
	void *sess; /* SSL_SESSION *, owned */
};

/* A client context. 0, or -EINVAL with a one-line reason in err naming the
 * file that could not be loaded ("--cacert ca.pem: ..."), or -ENOMEM. */
int tls_client_ctx_new(struct tls_ctx **out, const struct tls_client_cfg *cfg, char *err,
                       size_t errlen);

/* A server context from PEM files (key_file NULL: the key is in cert_file)
 * or, when id is not NULL, from that in-memory identity (files ignored).
 * Offers ALPN http/1.1, TLS 1.2 and 1.3, session tickets. 0, -EINVAL with a
 * reason in err, or -ENOMEM. */
int tls_server_ctx_new(struct tls_ctx **out, const char *cert_file, const char *key_file,
                       const struct tls_identity *id, char *err, size_t errlen);

/* A server context chooses ALPN "h2" when the client offers it (before
 * "http/1.1", which is still chosen for clients that offer only that);
 * tls_alpn_h2 tells a connection's choice. Call before any connection is
 * made from ctx; no effect on client contexts or NULL. */
void tls_server_ctx_offer_h2(struct tls_ctx *ctx);

/* Free a context (after every connection made from it). NULL is fine. */
void tls_ctx_free(struct tls_ctx *ctx);

/* SHA-256 fingerprint of a server context's certificate, "AB:CD:..." in
 * out[cap] (cap >= TLS_FINGERPRINT_CAP). 0, or -EINVAL (no certificate,
 * or a client context). */
int tls_ctx_fingerprint(const struct tls_ctx *ctx, char *out, size_t cap);

/* A fresh self-signed identity: an EC P-256 key and a certificate for
 * CN=localhost with subjectAltName localhost, 127.0.0.1 and ::1, valid from
 * an hour ago for 30 days. 0, or -ENOMEM / -EIO with a reason in err. */
int tls_identity_self_signed(struct tls_identity **out, char *err, size_t errlen);
void tls_identity_free(struct tls_identity *id);

/* The identity's certificate and private key as PEM strings (malloc'ed,
 * the caller frees them), for a TLS stack other than OpenSSL (QUIC's
 * GnuTLS). 0 or -ENOMEM. */
int tls_identity_pem(const struct tls_identity *id, char **cert_pem, char **key_pem);

/* Write the identity's certificate as PEM to path (not the key). 0 or -errno. */
int tls_identity_write_cert(const struct tls_identity *id, const char *path);

/* A connection over the connected (or connecting) socket fd, which stays
 * the caller's (tls_conn_free does not close it). Client contexts: host is
 * the name to send as SNI and to verify the certificate against (an IP
 * literal is verified as an IP and sent without SNI; NULL: no name check);
 * with resume not NULL the thread's last session is offered and new ones are
 * stored there. Server contexts ignore host and resume. 0 or -ENOMEM. */
int tls_conn_new(struct tls_conn **out, struct tls_ctx *ctx, int fd, const char *host,
                 struct tls_resume *resume);

/* Advance the handshake: 0 when it is complete, TLS_WANT_READ or
 * TLS_WANT_WRITE to be called again when the socket is ready, TLS_FAILED. */
int tls_handshake(struct tls_conn *c);

/* Read decrypted bytes: a count > 0; 0 when the peer closed (close_notify
 * or a plain EOF); TLS_WANT_READ / TLS_WANT_WRITE; TLS_FAILED. */
ssize_t tls_read(struct tls_conn *c, void *buf, size_t cap);

/* Write: a count > 0 (possibly partial); TLS_WANT_WRITE / TLS_WANT_READ
 * (call again with the same bytes, at least as many); TLS_FAILED. */
ssize_t tls_write(struct tls_conn *c, const void *buf, size_t len);

/* Client connections: the arrival time (CLOCK_REALTIME ns, the kernel's
 * receive timestamp) of the last segment a read took from the socket, when
 * the socket has receive timestamps on (net_rx_timestamps), set by the last
 * tls_read when it read the socket; 0 otherwise. */
uint64_t tls_rx_time(const struct tls_conn *c);

/* True when bytes are buffered inside TLS (decrypted or read ahead) that a
 * read would return without the socket becoming readable again. */
bool tls_pending(const struct tls_conn *c);

/* After the handshake: was the session resumed (abbreviated handshake)? */
bool tls_resumed(const struct tls_conn *c);
/* Protocol version ("TLSv1.3") and cipher suite name of the connection;
 * static strings. */
const char *tls_version(const struct tls_conn *c);
const char *tls_cipher(const struct tls_conn *c);

/* After the handshake: did ALPN select "h2"? */
bool tls_alpn_h2(const struct tls_conn *c);

/* After TLS_FAILED: the kind and a one-line reason (OpenSSL's, with a hint,
 * e.g. "certificate verify failed (self-signed certificate) — pass --cacert
 * FILE or --insecure"), at most TLS_REASON_CAP bytes. */
enum tls_fail tls_fail_kind(const struct tls_conn *c);
const char *tls_fail_reason(const struct tls_conn *c);

/* Send a close_notify if the socket takes it now (never waits). */
void tls_shutdown(struct tls_conn *c);

struct net_addr;

/* Check before a run: connect to a, do one TLS handshake with ctx (as
 * tls_conn_new with host, no resumption), close; blocking, at most
 * timeout_ns in all. 0 when it succeeded; TLS_FAILED with the reason in
 * reason[cap]; TLS_NO_H2 (reason too) when ctx offers h2 (alpn_h2) and the
 * server chose otherwise; or a negative errno (-ETIMEDOUT, -ECONNREFUSED,
 * -ENOMEM). */
int tls_probe(struct tls_ctx *ctx, const struct net_addr *a, const char *host,
              uint64_t timeout_ns, char *reason, size_t cap);

/* Free the connection (not the socket). NULL is fine. */
void tls_conn_free(struct tls_conn *c);

/* Drop the stored session. */
void tls_resume_clear(struct tls_resume *r);

#endif
