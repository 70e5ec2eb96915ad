/* pacer — TLS transport over OpenSSL. See tls.h. */
#include "net/tls.h"

#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "net/sock.h"
#include "util/clock.h"

static const unsigned char alpn_h1[] = "\x08http/1.1";
static const unsigned char alpn_h2_h1[] = "\x02h2\x08http/1.1";

struct tls_ctx {
	SSL_CTX *ssl;
	bool server;
	bool alpn_h2; /* client: offers h2 first */
	bool serve_h2; /* server: chooses h2 when the client offers it */
};

struct tls_conn {
	SSL *ssl;
	int fd;
	uint64_t rx_rt_ns; /* client: arrival (CLOCK_REALTIME) of the last segment read; 0: none */
	bool eof;          /* client: the socket read its end */
	struct tls_resume *resume;
	bool server;
	enum tls_fail fail;
	char reason[TLS_REASON_CAP];
};

struct tls_identity {
	EVP_PKEY *key;
	X509 *cert;
};

/* ---- errors --------------------------------------------------------- */

/* The last OpenSSL error of this thread as text (and clear the queue). */
static void ossl_err(char *out, size_t cap, const char *what)
{
	unsigned long e = ERR_peek_last_error();
	const char *r = e ? ERR_reason_error_string(e) : NULL;
	if (r)
		snprintf(out, cap, "%s: %s", what, r);
	else
		snprintf(out, cap, "%s", what);
	ERR_clear_error();
}

/* A private key file that did not load: not a key, or not the one of the
 * certificate. */
static void key_err(char *err, size_t errlen, const char *opt, const char *file,
                    const char *cert_opt, const char *cert_file)
{
	unsigned long e = ERR_peek_last_error();
	if (e && ERR_GET_REASON(e) == X509_R_KEY_VALUES_MISMATCH) {
		snprintf(err, errlen, "%s %s: does not match the certificate in %s %s", opt, file,
		         cert_opt, cert_file);
		ERR_clear_error();
		return;
	}
	char what[160];
	snprintf(what, sizeof what, "%s %s: cannot load", opt, file);
	ossl_err(err, errlen, what);
}

/* ---- contexts ------------------------------------------------------- */

static SSL_CTX *ctx_common(const SSL_METHOD *m)
{
	SSL_CTX *s = SSL_CTX_new(m);
	if (!s)
		return NULL;
	SSL_CTX_set_min_proto_version(s, TLS1_2_VERSION);
	/* Writes behave like write(): partial counts, and a retry may come
	 * from a moved buffer (the same bytes). A peer closing without
	 * close_notify is an EOF, as in plain HTTP. */
	SSL_CTX_set_mode(s, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
	SSL_CTX_set_options(s, SSL_OP_IGNORE_UNEXPECTED_EOF | SSL_OP_NO_RENEGOTIATION);
	/* One read() takes in what the kernel has, not 5 header bytes and then
	 * the record: half the syscalls. Buffered bytes are seen through
	 * tls_pending. */
	SSL_CTX_set_read_ahead(s, 1);
	return s;
}

static int new_session(SSL *ssl, SSL_SESSION *sess)
{
	struct tls_conn *c = SSL_get_app_data(ssl);
	if (!c || !c->resume)
		return 0;
	if (c->resume->sess)
		SSL_SESSION_free(c->resume->sess);
	c->resume->sess = sess;
	return 1; /* we keep the reference */
}

int tls_client_ctx_new(struct tls_ctx **out, const struct tls_client_cfg *cfg, char *err,
                       size_t errlen)
{
	*out = NULL;
	struct tls_ctx *c = calloc(1, sizeof *c);
	if (!c)
		return -ENOMEM;
	c->ssl = ctx_common(TLS_client_method());
	if (!c->ssl) {
		free(c);
		snprintf(err, errlen, "cannot create a TLS context");
		return -ENOMEM;
	}
	SSL_CTX *s = c->ssl;
	int rc = -EINVAL;
	c->alpn_h2 = cfg->alpn_h2;
	if (cfg->alpn_h2)
		SSL_CTX_set_alpn_protos(s, alpn_h2_h1, sizeof alpn_h2_h1 - 1);
	else
		SSL_CTX_set_alpn_protos(s, alpn_h1, sizeof alpn_h1 - 1);
	SSL_CTX_set_session_cache_mode(s, SSL_SESS_CACHE_CLIENT | SSL_SESS_CACHE_NO_INTERNAL_STORE);
	SSL_CTX_sess_set_new_cb(s, new_session);
	if (cfg->insecure) {
		SSL_CTX_set_verify(s, SSL_VERIFY_NONE, NULL);
	} else {
		SSL_CTX_set_verify(s, SSL_VERIFY_PEER, NULL);
		if (cfg->trust) {
			if (!X509_STORE_add_cert(SSL_CTX_get_cert_store(s), cfg->trust->cert)) {
				ossl_err(err, errlen, "cannot trust the generated certificate");
				goto fail;
			}
		} else if (cfg->cacert) {
			if (!SSL_CTX_load_verify_locations(s, cfg->cacert, NULL)) {
				char what[160];
				snprintf(what, sizeof what, "--cacert %s: cannot load", cfg->cacert);
				ossl_err(err, errlen, what);
				goto fail;
			}
		} else if (!SSL_CTX_set_default_verify_paths(s)) {
			ossl_err(err, errlen, "cannot load the system's trusted certificates");
			goto fail;
		}
	}
	if (cfg->cert) {
		if (SSL_CTX_use_certificate_chain_file(s, cfg->cert) != 1) {
			char what[160];
			snprintf(what, sizeof what, "--cert %s: cannot load", cfg->cert);
			ossl_err(err, errlen, what);
			goto fail;
		}
		const char *kf = cfg->key ? cfg->key : cfg->cert;
		if (SSL_CTX_use_PrivateKey_file(s, kf, SSL_FILETYPE_PEM) != 1) {
			key_err(err, errlen, "--key", kf, "--cert", cfg->cert);
			goto fail;
		}
		if (SSL_CTX_check_private_key(s) != 1) {
			snprintf(err, errlen, "--key %s: does not match the certificate in --cert %s", kf,
			         cfg->cert);
			ERR_clear_error();
			goto fail;
		}
	} else if (cfg->key) {
		snprintf(err, errlen, "--key needs --cert");
		goto fail;
	}
	*out = c;
	return 0;
fail:
	SSL_CTX_free(s);
	free(c);
	return rc;
}

static int select_alpn(SSL *ssl, const unsigned char **out, unsigned char *outlen,
                       const unsigned char *in, unsigned inlen, void *arg)
{
	(void)ssl;
	const struct tls_ctx *ctx = arg;
	unsigned char *sel = NULL;
	if (ctx->serve_h2 &&
	    SSL_select_next_proto(&sel, outlen, alpn_h2_h1, sizeof alpn_h2_h1 - 1, in, inlen) ==
	            OPENSSL_NPN_NEGOTIATED) {
		*out = sel;
		return SSL_TLSEXT_ERR_OK;
	}
	if (SSL_select_next_proto(&sel, outlen, alpn_h1, sizeof alpn_h1 - 1, in, inlen) !=
	    OPENSSL_NPN_NEGOTIATED)
		return SSL_TLSEXT_ERR_NOACK; /* no http/1.1 offered: go on without ALPN */
	*out = sel;
	return SSL_TLSEXT_ERR_OK;
}

int tls_server_ctx_new(struct tls_ctx **out, const char *cert_file, const char *key_file,
                       const struct tls_identity *id, char *err, size_t errlen)
{
	*out = NULL;
	struct tls_ctx *c = calloc(1, sizeof *c);
	if (!c)
		return -ENOMEM;
	c->server = true;
	c->ssl = ctx_common(TLS_server_method());
	if (!c->ssl) {
		free(c);
		snprintf(err, errlen, "cannot create a TLS context");
		return -ENOMEM;
	}
	SSL_CTX *s = c->ssl;
	SSL_CTX_set_alpn_select_cb(s, select_alpn, c);
	SSL_CTX_set_num_tickets(s, 1);
	static const unsigned char sid_ctx[] = "pacer";
	SSL_CTX_set_session_id_context(s, sid_ctx, sizeof sid_ctx - 1);
	if (id) {
		if (SSL_CTX_use_certificate(s, id->cert) != 1 || SSL_CTX_use_PrivateKey(s, id->key) != 1) {
			ossl_err(err, errlen, "cannot use the generated certificate");
			goto fail;
		}
	} else {
		if (!cert_file || SSL_CTX_use_certificate_chain_file(s, cert_file) != 1) {
			char what[160];
			snprintf(what, sizeof what, "--tls-cert %s: cannot load",
			         cert_file ? cert_file : "(none)");
			ossl_err(err, errlen, what);
			goto fail;
		}
		const char *kf = key_file ? key_file : cert_file;
		if (SSL_CTX_use_PrivateKey_file(s, kf, SSL_FILETYPE_PEM) != 1) {
			key_err(err, errlen, "--tls-key", kf, "--tls-cert", cert_file);
			goto fail;
		}
	}
	if (SSL_CTX_check_private_key(s) != 1) {
		snprintf(err, errlen, "the TLS key does not match the certificate");
		ERR_clear_error();
		goto fail;
	}
	*out = c;
	return 0;
fail:
	SSL_CTX_free(s);
	free(c);
	return -EINVAL;
}

void tls_ctx_free(struct tls_ctx *ctx)
{
	if (!ctx)
		return;
	SSL_CTX_free(ctx->ssl);
	free(ctx);
}

static int fingerprint(X509 *x, char *out, size_t cap)
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned n = 0;
	if (!x || cap < TLS_FINGERPRINT_CAP || !X509_digest(x, EVP_sha256(), md, &n))
		return -EINVAL;
	for (unsigned i = 0; i < n; i++)
		snprintf(out + 3 * i, cap - 3 * i, "%02X%s", md[i], i + 1 < n ? ":" : "");
	return 0;
}

int tls_ctx_fingerprint(const struct tls_ctx *ctx, char *out, size_t cap)
{
	if (!ctx->server)
		return -EINVAL;
	return fingerprint(SSL_CTX_get0_certificate(ctx->ssl), out, cap);
}

/* ---- self-signed identity ------------------------------------------- */

static bool add_ext(X509 *x, int nid, const char *value)
{
	X509V3_CTX v3;
	X509V3_set_ctx_nodb(&v3);
	X509V3_set_ctx(&v3, x, x, NULL, NULL, 0);
	X509_EXTENSION *ext = X509V3_EXT_conf_nid(NULL, &v3, nid, value);
	if (!ext)
		return false;
	bool ok = X509_add_ext(x, ext, -1) == 1;
	X509_EXTENSION_free(ext);
	return ok;
}

int tls_identity_self_signed(struct tls_identity **out, char *err, size_t errlen)
{
	*out = NULL;
	struct tls_identity *id = calloc(1, sizeof *id);
	if (!id)
		return -ENOMEM;
	id->key = EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256");
	id->cert = X509_new();
	if (!id->key || !id->cert) {
		ossl_err(err, errlen, "cannot generate a key");
		tls_identity_free(id);
		return -ENOMEM;
	}
	X509 *x = id->cert;
	uint64_t serial = 0;
	RAND_bytes((unsigned char *)&serial, sizeof serial);
	serial >>= 1; /* positive */
	X509_NAME *name = X509_get_subject_name(x);
	bool ok = X509_set_version(x, 2) &&
	          ASN1_INTEGER_set_uint64(X509_get_serialNumber(x), serial ? serial : 1) &&
	          X509_gmtime_adj(X509_getm_notBefore(x), -3600) &&
	          X509_gmtime_adj(X509_getm_notAfter(x), 30L * 86400) && X509_set_pubkey(x, id->key) &&
	          X509_NAME_add_entry_by_txt(name, "O", MBSTRING_ASC,
	                                     (const unsigned char *)"pacer self-signed", -1, -1, 0) &&
	          X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
	                                     (const unsigned char *)"localhost", -1, -1, 0) &&
	          X509_set_issuer_name(x, name) &&
	          add_ext(x, NID_subject_alt_name, "DNS:localhost,IP:127.0.0.1,IP:::1") &&
	          add_ext(x, NID_basic_constraints, "critical,CA:TRUE") &&
	          add_ext(x, NID_key_usage, "critical,digitalSignature,keyCertSign") &&
	          add_ext(x, NID_ext_key_usage, "serverAuth") &&
	          add_ext(x, NID_subject_key_identifier, "hash") &&
	          X509_sign(x, id->key, EVP_sha256()) > 0;
	if (!ok) {
		ossl_err(err, errlen, "cannot make a self-signed certificate");
		tls_identity_free(id);
		return -EIO;
	}
	*out = id;
	return 0;
}

void tls_identity_free(struct tls_identity *id)
{
	if (!id)
		return;
	EVP_PKEY_free(id->key);
	X509_free(id->cert);
	free(id);
}

int tls_identity_write_cert(const struct tls_identity *id, const char *path)
{
	FILE *f = fopen(path, "w");
	if (!f)
		return -errno;
	int ok = PEM_write_X509(f, id->cert);
	if (fclose(f) != 0 || !ok) {
		ERR_clear_error();
		return -EIO;
	}
	return 0;
}

/* One PEM object of a BIO, as a NUL-terminated string (malloc'ed). */
static char *bio_string(BIO *b)
{
	char *data = NULL;
	long n = BIO_get_mem_data(b, &data);
	char *out = n >= 0 ? malloc((size_t)n + 1) : NULL;
	if (out) {
		memcpy(out, data, (size_t)n);
		out[n] = '\0';
	}
	return out;
}

int tls_identity_pem(const struct tls_identity *id, char **cert_pem, char **key_pem)
{
	*cert_pem = *key_pem = NULL;
	BIO *c = BIO_new(BIO_s_mem()), *k = BIO_new(BIO_s_mem());
	int rc = -ENOMEM;
	if (c && k && PEM_write_bio_X509(c, id->cert) &&
	    PEM_write_bio_PrivateKey(k, id->key, NULL, NULL, 0, NULL, NULL)) {
		*cert_pem = bio_string(c);
		*key_pem = bio_string(k);
		if (*cert_pem && *key_pem)
			rc = 0;
	}
	ERR_clear_error();
	BIO_free(c);
	BIO_free(k);
	if (rc) {
		free(*cert_pem);
		free(*key_pem);
		*cert_pem = *key_pem = NULL;
	}
	return rc;
}

/* ---- connections ---------------------------------------------------- */

/* A client connection's socket BIO: reads go through net_recv_ts, so that
 * a record read late still tells when its bytes arrived (tls_rx_time).
 * Writes are plain; the fd is never closed here (the engine owns it). */
static int bio_write(BIO *b, const char *buf, size_t len, size_t *done)
{
	struct tls_conn *c = BIO_get_data(b);
	BIO_clear_retry_flags(b);
	ssize_t n;
	do
		n = write(c->fd, buf, len);
	while (n < 0 && errno == EINTR);
	if (n < 0) {
		if (errno == EAGAIN || errno == EWOULDBLOCK)
			BIO_set_retry_write(b);
		return 0;
	}
	*done = (size_t)n;
	return 1;
}

static int bio_read(BIO *b, char *buf, size_t cap, size_t *done)
{
	struct tls_conn *c = BIO_get_data(b);
	BIO_clear_retry_flags(b);
	uint64_t rt;
	ssize_t n = net_recv_ts(c->fd, buf, cap, &rt);
	if (n < 0) {
		errno = (int)-n;
		if (n == -EAGAIN || n == -EWOULDBLOCK)
			BIO_set_retry_read(b);
		return 0;
	}
	if (rt)
		c->rx_rt_ns = rt;
	if (n == 0)
		c->eof = true; /* BIO_CTRL_EOF: a plain close, told apart from an error */
	*done = (size_t)n;
	return n > 0; /* 0 bytes: the peer closed (not a retry) */
}

static long bio_ctrl(BIO *b, int cmd, long num, void *ptr)
{
	(void)num;
	struct tls_conn *c = BIO_get_data(b);
	switch (cmd) {
	case BIO_CTRL_FLUSH:
	case BIO_CTRL_DUP:
		return 1;
	case BIO_CTRL_EOF:
		return c->eof;
	case BIO_C_GET_FD:
		if (ptr)
			*(int *)ptr = c->fd;
		return c->fd;
	default:
		return 0;
	}
}

static BIO_METHOD *bio_method;
static pthread_once_t bio_once = PTHREAD_ONCE_INIT;

static void bio_method_make(void)
{
	BIO_METHOD *m = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK | BIO_TYPE_DESCRIPTOR,
				     "pacer socket");
	if (m && BIO_meth_set_write_ex(m, bio_write) && BIO_meth_set_read_ex(m, bio_read) &&
	    BIO_meth_set_ctrl(m, bio_ctrl))
		bio_method = m;
	else if (m)
		BIO_meth_free(m);
}

/* Attach c's socket to c->ssl through the timestamping BIO. */
static bool attach_bio(struct tls_conn *c)
{
	pthread_once(&bio_once, bio_method_make);
	if (!bio_method)
		return false;
	BIO *b = BIO_new(bio_method);
	if (!b)
		return false;
	BIO_set_data(b, c);
	BIO_set_init(b, 1);
	SSL_set_bio(c->ssl, b, b); /* the SSL owns b now */
	return true;
}

uint64_t tls_rx_time(const struct tls_conn *c) { return c->rx_rt_ns; }

int tls_conn_new(struct tls_conn **out, struct tls_ctx *ctx, int fd, const char *host,
                 struct tls_resume *resume)
{
	*out = NULL;
	struct tls_conn *c = calloc(1, sizeof *c);
	if (!c)
		return -ENOMEM;
	c->ssl = SSL_new(ctx->ssl);
	c->fd = fd;
	if (!c->ssl || !(ctx->server ? SSL_set_fd(c->ssl, fd) == 1 : attach_bio(c))) {
		ERR_clear_error();
		tls_conn_free(c);
		return -ENOMEM;
	}
	SSL_set_app_data(c->ssl, c);
	c->server = ctx->server;
	if (ctx->server) {
		SSL_set_accept_state(c->ssl);
		*out = c;
		return 0;
	}
	SSL_set_connect_state(c->ssl);
	if (host && *host) {
		unsigned char ip[16];
		bool literal = inet_pton(AF_INET, host, ip) == 1 || inet_pton(AF_INET6, host, ip) == 1;
		bool ok;
		if (literal) {
			ok = X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(c->ssl), host) == 1;
		} else {
			ok = SSL_set_tlsext_host_name(c->ssl, host) == 1 && SSL_set1_host(c->ssl, host) == 1;
		}
		if (!ok) {
			ERR_clear_error();
			tls_conn_free(c);
			return -ENOMEM;
		}
	}
	c->resume = resume;
	if (resume && resume->sess)
		SSL_set_session(c->ssl, resume->sess);
	*out = c;
	return 0;
}

static void set_fail(struct tls_conn *c, enum tls_fail k, const char *fmt, const char *a,
                     const char *b)
{
	c->fail = k;
	snprintf(c->reason, sizeof c->reason, fmt, a, b);
}

/* Classify a failed SSL call (SSL_get_error gave `e`) and note the reason. */
static int failed(struct tls_conn *c, int e, bool handshake)
{
	int saved_errno = errno;
	const char *phase = handshake ? "during the TLS handshake" : "on the TLS connection";
	long vr = SSL_get_verify_result(c->ssl);
	unsigned long oe = ERR_peek_last_error();
	int reason = oe ? ERR_GET_REASON(oe) : 0;
	if (e == SSL_ERROR_SSL && !c->server && vr != X509_V_OK &&
	    reason == SSL_R_CERTIFICATE_VERIFY_FAILED) {
		const char *why = X509_verify_cert_error_string(vr);
		const char *hint = " — pass --cacert FILE (the CA that signed it) or --insecure";
		if (vr == X509_V_ERR_HOSTNAME_MISMATCH || vr == X509_V_ERR_IP_ADDRESS_MISMATCH)
			hint = " — the certificate is for another name; connect by its name or pass "
			       "--insecure";
		else if (vr == X509_V_ERR_CERT_HAS_EXPIRED || vr == X509_V_ERR_CERT_NOT_YET_VALID)
			hint = " — renew it, or pass --insecure";
		set_fail(c, TLS_FAIL_VERIFY, "certificate verify failed (%s)%s", why, hint);
	} else if (e == SSL_ERROR_SSL &&
	           (reason == SSL_R_WRONG_VERSION_NUMBER || reason == SSL_R_PACKET_LENGTH_TOO_LONG ||
	            reason == SSL_R_HTTP_REQUEST)) {
		set_fail(c, TLS_FAIL_NOT_TLS, "%s — the %s does not speak TLS (plain HTTP?)",
		         ERR_reason_error_string(oe), c->server ? "client" : "server");
	} else if (e == SSL_ERROR_SSL) {
		const char *r = oe ? ERR_reason_error_string(oe) : NULL;
		const char *hint = "";
		if (!c->server && (reason == SSL_R_TLSV13_ALERT_CERTIFICATE_REQUIRED ||
		                   reason == SSL_R_PEER_DID_NOT_RETURN_A_CERTIFICATE))
			hint = " — the server wants a client certificate: pass --cert FILE --key FILE";
		set_fail(c, TLS_FAIL_PROTOCOL, "%s%s", r ? r : "TLS protocol error", hint);
	} else if (e == SSL_ERROR_SYSCALL && saved_errno != 0 && saved_errno != EAGAIN) {
		char buf[128];
		const char *msg = strerror_r(saved_errno, buf, sizeof buf);
		set_fail(c, TLS_FAIL_IO, "connection error %s: %s", phase, msg);
	} else {
		set_fail(c, TLS_FAIL_IO, "the %s closed the connection %s",
		         c->server ? "client" : "server", phase);
	}
	ERR_clear_error();
	return TLS_FAILED;
}

static int want(struct tls_conn *c, int rc, bool handshake)
{
	int e = SSL_get_error(c->ssl, rc);
	if (e == SSL_ERROR_WANT_READ)
		return TLS_WANT_READ;
	if (e == SSL_ERROR_WANT_WRITE)
		return TLS_WANT_WRITE;
	return failed(c, e, handshake);
}

int tls_handshake(struct tls_conn *c)
{
	errno = 0;
	int rc = SSL_do_handshake(c->ssl);
	if (rc == 1)
		return 0;
	return want(c, rc, true);
}

ssize_t tls_read(struct tls_conn *c, void *buf, size_t cap)
{
	size_t n = 0;
	errno = 0;
	c->rx_rt_ns = 0; /* bytes already inside TLS came at no time this read can tell */
	int rc = SSL_read_ex(c->ssl, buf, cap, &n);
	if (rc == 1)
		return (ssize_t)n;
	int e = SSL_get_error(c->ssl, rc);
	if (e == SSL_ERROR_ZERO_RETURN) {
		ERR_clear_error();
		return 0;
	}
	if (e == SSL_ERROR_WANT_READ)
		return TLS_WANT_READ;
	if (e == SSL_ERROR_WANT_WRITE)
		return TLS_WANT_WRITE;
	return failed(c, e, false);
}

ssize_t tls_write(struct tls_conn *c, const void *buf, size_t len)
{
	size_t n = 0;
	errno = 0;
	int rc = SSL_write_ex(c->ssl, buf, len, &n);
	if (rc == 1)
		return (ssize_t)n;
	return want(c, rc, false);
}

bool tls_pending(const struct tls_conn *c) { return SSL_has_pending(c->ssl) == 1; }

bool tls_resumed(const struct tls_conn *c) { return SSL_session_reused(c->ssl) == 1; }

bool tls_alpn_h2(const struct tls_conn *c)
{
	const unsigned char *p = NULL;
	unsigned int n = 0;
	SSL_get0_alpn_selected(c->ssl, &p, &n);
	return n == 2 && p[0] == 'h' && p[1] == '2';
}

const char *tls_version(const struct tls_conn *c) { return SSL_get_version(c->ssl); }

const char *tls_cipher(const struct tls_conn *c)
{
	const char *s = SSL_get_cipher_name(c->ssl);
	return s ? s : "";
}

enum tls_fail tls_fail_kind(const struct tls_conn *c) { return c->fail; }

const char *tls_fail_reason(const struct tls_conn *c) { return c->reason; }

void tls_shutdown(struct tls_conn *c)
{
	if (SSL_is_init_finished(c->ssl))
		SSL_shutdown(c->ssl);
	ERR_clear_error();
}

int tls_probe(struct tls_ctx *ctx, const struct net_addr *a, const char *host,
              uint64_t timeout_ns, char *reason, size_t cap)
{
	uint64_t end = clock_now_ns() + timeout_ns;
	/* OpenSSL writes with write(): a peer that closed early must give
	 * EPIPE, not kill the process (this runs before the CLI ignores it) */
	sigset_t pipe_set, old_set;
	sigemptyset(&pipe_set);
	sigaddset(&pipe_set, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &pipe_set, &old_set);
	int fd = net_connect_start(a);
	if (fd < 0) {
		pthread_sigmask(SIG_SETMASK, &old_set, NULL);
		return fd;
	}
	struct tls_conn *c = NULL;
	short ev = POLLOUT;
	int rc = 1; /* 1: connecting */
	for (;;) {
		uint64_t now = clock_now_ns();
		if (now >= end) {
			rc = -ETIMEDOUT;
			break;
		}
		struct pollfd p = {.fd = fd, .events = ev};
		int ms = (int)((end - now + 999999) / 1000000);
		int n = poll(&p, 1, ms);
		if (n < 0 && errno != EINTR) {
			rc = -errno;
			break;
		}
		if (n <= 0)
			continue;
		if (rc == 1) {
			rc = net_connect_result(fd);
			if (rc)
				break;
			rc = tls_conn_new(&c, ctx, fd, host, NULL);
			if (rc)
				break;
		}
		rc = tls_handshake(c);
		if (rc == TLS_WANT_READ || rc == TLS_WANT_WRITE) {
			ev = rc == TLS_WANT_READ ? POLLIN : POLLOUT;
			continue;
		}
		if (rc == TLS_FAILED)
			snprintf(reason, cap, "%s", c->reason);
		if (rc == 0 && ctx->alpn_h2 && !tls_alpn_h2(c)) {
			rc = TLS_NO_H2;
			snprintf(reason, cap, "the server did not choose HTTP/2 (ALPN h2): it speaks "
					      "HTTP/1.1 here (--http2=prefer falls back to it)");
		}
		break;
	}
	if (c && (rc == 0 || rc == TLS_NO_H2))
		tls_shutdown(c);
	tls_conn_free(c);
	close(fd);
	struct timespec zero = {0, 0};
	while (sigtimedwait(&pipe_set, NULL, &zero) == SIGPIPE)
		; /* drop a SIGPIPE this raised */
	pthread_sigmask(SIG_SETMASK, &old_set, NULL);
	return rc;
}

void tls_conn_free(struct tls_conn *c)
{
	if (!c)
		return;
	/* A connection closed without close_notify would mark its session
	 * not resumable (OpenSSL's "bad session" rule); only failed ones are. */
	if (c->ssl && c->fail == TLS_FAIL_NONE)
		SSL_set_shutdown(c->ssl, SSL_SENT_SHUTDOWN | SSL_RECEIVED_SHUTDOWN);
	SSL_free(c->ssl);
	free(c);
}

void tls_resume_clear(struct tls_resume *r)
{
	if (r->sess)
		SSL_SESSION_free(r->sess);
	r->sess = NULL;
}

void tls_server_ctx_offer_h2(struct tls_ctx *ctx)
{
	if (ctx && ctx->server)
		ctx->serve_h2 = true;
}
