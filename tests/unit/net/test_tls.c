/* Tests of the TLS transport (src/net/tls.c): a client and a server
 * connection over a non-blocking socketpair, both driven from this thread
 * until each handshake is done or failed. Checks a handshake with the
 * generated certificate, data both ways, verification failures (another
 * CA, the system store, a wrong host name), --insecure, a CA file, a peer
 * that does not speak TLS, session resumption on the second connection,
 * end of stream, and the set-up errors that name the file. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "net/sock.h"
#include "net/tls.h"

static struct tls_identity *id_a, *id_b; /* two unrelated self-signed identities */
static struct tls_ctx *srv_a;            /* a server with identity a */

static int group_setup(void **state)
{
	(void)state;
	char err[256] = "";
	if (tls_identity_self_signed(&id_a, err, sizeof err) ||
	    tls_identity_self_signed(&id_b, err, sizeof err)) {
		fprintf(stderr, "identity: %s\n", err);
		return -1;
	}
	if (tls_server_ctx_new(&srv_a, NULL, NULL, id_a, err, sizeof err)) {
		fprintf(stderr, "server ctx: %s\n", err);
		return -1;
	}
	return 0;
}

static int group_teardown(void **state)
{
	(void)state;
	tls_ctx_free(srv_a);
	tls_identity_free(id_a);
	tls_identity_free(id_b);
	return 0;
}

/* ---- a client/server pair over a socketpair -------------------------- */

struct pair {
	int fd[2]; /* 0: client, 1: server */
	struct tls_conn *cli, *srv;
	int cli_rc, srv_rc; /* last handshake results */
};

static void pair_open(struct pair *p, struct tls_ctx *cctx, const char *host,
                      struct tls_resume *resume)
{
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, p->fd), 0);
	assert_int_equal(tls_conn_new(&p->cli, cctx, p->fd[0], host, resume), 0);
	assert_int_equal(tls_conn_new(&p->srv, srv_a, p->fd[1], NULL, NULL), 0);
}

static void pair_close(struct pair *p)
{
	tls_conn_free(p->cli);
	tls_conn_free(p->srv);
	if (p->fd[0] >= 0)
		close(p->fd[0]);
	if (p->fd[1] >= 0)
		close(p->fd[1]);
	memset(p, 0, sizeof *p);
}

static bool busy(int rc) { return rc == TLS_WANT_READ || rc == TLS_WANT_WRITE; }

/* Drive both handshakes until neither wants more (or 1000 rounds). */
static void pair_handshake(struct pair *p)
{
	p->cli_rc = p->srv_rc = TLS_WANT_READ;
	for (int i = 0; i < 1000 && (busy(p->cli_rc) || busy(p->srv_rc)); i++) {
		if (busy(p->cli_rc))
			p->cli_rc = tls_handshake(p->cli);
		if (busy(p->srv_rc))
			p->srv_rc = tls_handshake(p->srv);
		/* one side failed: the other one cannot finish */
		if (p->cli_rc == TLS_FAILED && busy(p->srv_rc) && i > 10)
			break;
		if (p->srv_rc == TLS_FAILED && busy(p->cli_rc) && i > 10)
			break;
	}
}

/* Write all of `s` on `from`, then read it on `to` (pumping both). */
static void pair_send(struct tls_conn *from, struct tls_conn *to, const char *s)
{
	size_t len = strlen(s), off = 0, got = 0;
	char buf[256];
	assert_true(len < sizeof buf);
	for (int i = 0; i < 1000 && got < len; i++) {
		if (off < len) {
			ssize_t n = tls_write(from, s + off, len - off);
			if (n > 0)
				off += (size_t)n;
			else
				assert_true(busy((int)n));
		}
		ssize_t n = tls_read(to, buf + got, sizeof buf - got);
		if (n > 0)
			got += (size_t)n;
		else
			assert_true(busy((int)n));
	}
	assert_int_equal(got, len);
	assert_memory_equal(buf, s, len);
}

static struct tls_ctx *client(const struct tls_client_cfg *cfg)
{
	struct tls_ctx *c = NULL;
	char err[256] = "";
	int rc = tls_client_ctx_new(&c, cfg, err, sizeof err);
	if (rc)
		fail_msg("client ctx: %s", err);
	return c;
}

/* ---- tests ------------------------------------------------------------ */

static void test_handshake_trusted_identity(void **state)
{
	(void)state;
	struct tls_client_cfg cfg = {.trust = id_a};
	struct tls_ctx *cctx = client(&cfg);
	struct pair p;
	pair_open(&p, cctx, "localhost", NULL);
	pair_handshake(&p);
	assert_int_equal(p.cli_rc, 0);
	assert_int_equal(p.srv_rc, 0);
	assert_string_equal(tls_version(p.cli), "TLSv1.3");
	assert_true(strlen(tls_cipher(p.cli)) > 0);
	assert_false(tls_resumed(p.cli));
	pair_send(p.cli, p.srv, "GET / HTTP/1.1\r\nHost: localhost\r\n\r\n");
	pair_send(p.srv, p.cli, "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n");
	pair_close(&p);
	tls_ctx_free(cctx);
}

static void test_ip_literal_matches_san(void **state)
{
	(void)state;
	struct tls_client_cfg cfg = {.trust = id_a};
	struct tls_ctx *cctx = client(&cfg);
	struct pair p;
	pair_open(&p, cctx, "127.0.0.1", NULL);
	pair_handshake(&p);
	assert_int_equal(p.cli_rc, 0);
	pair_close(&p);
	pair_open(&p, cctx, "::1", NULL);
	pair_handshake(&p);
	assert_int_equal(p.cli_rc, 0);
	pair_close(&p);
	pair_open(&p, cctx, "10.1.2.3", NULL); /* not in the certificate */
	pair_handshake(&p);
	assert_int_equal(p.cli_rc, TLS_FAILED);
	assert_int_equal(tls_fail_kind(p.cli), TLS_FAIL_VERIFY);
	assert_non_null(strstr(tls_fail_reason(p.cli), "IP address mismatch"));
	pair_close(&p);
	tls_ctx_free(cctx);
}

static void test_wrong_ca_fails_verification(void **state)
{
	(void)state;
	struct tls_client_cfg cfg = {.trust = id_b}; /* not the server's */
	struct tls_ctx *cctx = client(&cfg);
	struct pair p;
	pair_open(&p, cctx, "localhost", NULL);
	pair_handshake(&p);
	assert_int_equal(p.cli_rc, TLS_FAILED);
	assert_int_equal(tls_fail_kind(p.cli), TLS_FAIL_VERIFY);
	const char *r = tls_fail_reason(p.cli);
	assert_non_null(strstr(r, "certificate verify failed"));
	assert_non_null(strstr(r, "--cacert"));
	assert_true(strlen(r) < TLS_REASON_CAP);
	pair_close(&p);
	tls_ctx_free(cctx);
}

static void test_system_store_rejects_self_signed(void **state)
{
	(void)state;
	struct tls_client_cfg cfg = {0};
	struct tls_ctx *cctx = client(&cfg);
	struct pair p;
	pair_open(&p, cctx, "localhost", NULL);
	pair_handshake(&p);
	assert_int_equal(p.cli_rc, TLS_FAILED);
	assert_int_equal(tls_fail_kind(p.cli), TLS_FAIL_VERIFY);
	assert_non_null(strstr(tls_fail_reason(p.cli), "self-signed"));
	pair_close(&p);
	tls_ctx_free(cctx);
}

static void test_hostname_mismatch(void **state)
{
	(void)state;
	struct tls_client_cfg cfg = {.trust = id_a};
	struct tls_ctx *cctx = client(&cfg);
	struct pair p;
	pair_open(&p, cctx, "example.com", NULL);
	pair_handshake(&p);
	assert_int_equal(p.cli_rc, TLS_FAILED);
	assert_int_equal(tls_fail_kind(p.cli), TLS_FAIL_VERIFY);
	assert_non_null(strstr(tls_fail_reason(p.cli), "hostname mismatch"));
	pair_close(&p);
	tls_ctx_free(cctx);
}

static void test_insecure_skips_verification(void **state)
{
	(void)state;
	struct tls_client_cfg cfg = {.insecure = true};
	struct tls_ctx *cctx = client(&cfg);
	struct pair p;
	pair_open(&p, cctx, "example.com", NULL);
	pair_handshake(&p);
	assert_int_equal(p.cli_rc, 0);
	assert_int_equal(p.srv_rc, 0);
	pair_close(&p);
	tls_ctx_free(cctx);
}

static void test_cacert_file(void **state)
{
	(void)state;
	char dir[] = "/tmp/pacer-tls-test-XXXXXX";
	assert_non_null(mkdtemp(dir));
	char path[128];
	snprintf(path, sizeof path, "%s/ca.pem", dir);
	assert_int_equal(tls_identity_write_cert(id_a, path), 0);
	struct tls_client_cfg cfg = {.cacert = path};
	struct tls_ctx *cctx = client(&cfg);
	struct pair p;
	pair_open(&p, cctx, "localhost", NULL);
	pair_handshake(&p);
	assert_int_equal(p.cli_rc, 0);
	pair_close(&p);
	tls_ctx_free(cctx);

	/* a missing file: an error naming it */
	char missing[160];
	snprintf(missing, sizeof missing, "%s/nope.pem", dir);
	cfg.cacert = missing;
	char err[256] = "";
	struct tls_ctx *bad = NULL;
	assert_int_equal(tls_client_ctx_new(&bad, &cfg, err, sizeof err), -EINVAL);
	assert_null(bad);
	assert_non_null(strstr(err, "--cacert"));
	assert_non_null(strstr(err, "nope.pem"));

	/* a client certificate that is not there either */
	cfg = (struct tls_client_cfg){.insecure = true, .cert = missing};
	assert_int_equal(tls_client_ctx_new(&bad, &cfg, err, sizeof err), -EINVAL);
	assert_non_null(strstr(err, "--cert"));
	/* a certificate file without its key */
	cfg = (struct tls_client_cfg){.insecure = true, .cert = path};
	assert_int_equal(tls_client_ctx_new(&bad, &cfg, err, sizeof err), -EINVAL);
	assert_non_null(strstr(err, "--key"));
	/* a server without its files */
	assert_int_equal(tls_server_ctx_new(&bad, missing, NULL, NULL, err, sizeof err), -EINVAL);
	assert_non_null(strstr(err, "--tls-cert"));

	unlink(path);
	rmdir(dir);
}

static void test_resumption_on_second_connection(void **state)
{
	(void)state;
	struct tls_client_cfg cfg = {.trust = id_a};
	struct tls_ctx *cctx = client(&cfg);
	struct tls_resume res = {0};
	struct pair p;
	pair_open(&p, cctx, "localhost", &res);
	pair_handshake(&p);
	assert_int_equal(p.cli_rc, 0);
	assert_false(tls_resumed(p.cli));
	/* TLS 1.3 tickets come after the handshake: a read takes them in */
	pair_send(p.cli, p.srv, "request");
	pair_send(p.srv, p.cli, "response");
	assert_non_null(res.sess);
	pair_close(&p);

	pair_open(&p, cctx, "localhost", &res);
	pair_handshake(&p);
	assert_int_equal(p.cli_rc, 0);
	assert_true(tls_resumed(p.cli));
	assert_true(tls_resumed(p.srv));
	pair_send(p.cli, p.srv, "again");
	pair_close(&p);

	/* without a resume slot: always a full handshake */
	pair_open(&p, cctx, "localhost", NULL);
	pair_handshake(&p);
	assert_int_equal(p.cli_rc, 0);
	assert_false(tls_resumed(p.cli));
	pair_close(&p);

	tls_resume_clear(&res);
	assert_null(res.sess);
	tls_ctx_free(cctx);
}

static void test_peer_not_speaking_tls(void **state)
{
	(void)state;
	struct tls_client_cfg cfg = {.trust = id_a};
	struct tls_ctx *cctx = client(&cfg);
	int fd[2];
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, fd), 0);
	struct tls_conn *c = NULL;
	assert_int_equal(tls_conn_new(&c, cctx, fd[0], "localhost", NULL), 0);
	assert_int_equal(tls_handshake(c), TLS_WANT_READ);
	static const char plain[] = "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n";
	assert_int_equal(write(fd[1], plain, sizeof plain - 1), (ssize_t)(sizeof plain - 1));
	assert_int_equal(tls_handshake(c), TLS_FAILED);
	assert_int_equal(tls_fail_kind(c), TLS_FAIL_NOT_TLS);
	assert_non_null(strstr(tls_fail_reason(c), "does not speak TLS"));
	tls_conn_free(c);

	/* the peer closes during the handshake */
	assert_int_equal(tls_conn_new(&c, cctx, fd[0], "localhost", NULL), 0);
	close(fd[1]);
	int rc = tls_handshake(c);
	assert_int_equal(rc, TLS_FAILED);
	assert_int_equal(tls_fail_kind(c), TLS_FAIL_IO);
	assert_non_null(strstr(tls_fail_reason(c), "handshake"));
	tls_conn_free(c);
	close(fd[0]);
	tls_ctx_free(cctx);
}

static void test_end_of_stream(void **state)
{
	(void)state;
	struct tls_client_cfg cfg = {.trust = id_a};
	struct tls_ctx *cctx = client(&cfg);
	struct pair p;
	pair_open(&p, cctx, "localhost", NULL);
	pair_handshake(&p);
	assert_int_equal(p.cli_rc, 0);
	char buf[64];
	assert_int_equal(tls_read(p.cli, buf, sizeof buf), TLS_WANT_READ);
	assert_false(tls_pending(p.cli));
	/* close_notify, then a plain close: both read as 0 */
	tls_shutdown(p.srv);
	ssize_t n;
	for (int i = 0; i < 10 && (n = tls_read(p.cli, buf, sizeof buf)) == TLS_WANT_READ; i++)
		;
	assert_int_equal(n, 0);
	pair_close(&p);

	pair_open(&p, cctx, "localhost", NULL);
	pair_handshake(&p);
	assert_int_equal(p.cli_rc, 0);
	/* drain the server's ticket first */
	assert_int_equal(tls_read(p.cli, buf, sizeof buf), TLS_WANT_READ);
	close(p.fd[1]);
	p.fd[1] = -1;
	assert_int_equal(tls_read(p.cli, buf, sizeof buf), 0);
	pair_close(&p);
	tls_ctx_free(cctx);
}

/* An EC key and a self-signed certificate for localhost that expired
 * yesterday, written as PEM to dir/expired.pem and dir/expired.key. */
static void write_expired(const char *dir, char *cert_path, char *key_path, size_t cap)
{
	EVP_PKEY *k = EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256");
	X509 *x = X509_new();
	assert_non_null(k);
	assert_non_null(x);
	X509_set_version(x, 2);
	ASN1_INTEGER_set(X509_get_serialNumber(x), 7);
	X509_gmtime_adj(X509_getm_notBefore(x), -10L * 86400);
	X509_gmtime_adj(X509_getm_notAfter(x), -86400);
	X509_set_pubkey(x, k);
	X509_NAME *n = X509_get_subject_name(x);
	X509_NAME_add_entry_by_txt(n, "CN", MBSTRING_ASC, (const unsigned char *)"localhost", -1,
	                           -1, 0);
	X509_set_issuer_name(x, n);
	X509V3_CTX v3;
	X509V3_set_ctx_nodb(&v3);
	X509V3_set_ctx(&v3, x, x, NULL, NULL, 0);
	X509_EXTENSION *e = X509V3_EXT_conf_nid(NULL, &v3, NID_subject_alt_name, "DNS:localhost");
	X509_add_ext(x, e, -1);
	X509_EXTENSION_free(e);
	assert_true(X509_sign(x, k, EVP_sha256()) > 0);
	snprintf(cert_path, cap, "%s/expired.pem", dir);
	snprintf(key_path, cap, "%s/expired.key", dir);
	FILE *f = fopen(cert_path, "w");
	assert_non_null(f);
	assert_int_equal(PEM_write_X509(f, x), 1);
	fclose(f);
	f = fopen(key_path, "w");
	assert_non_null(f);
	assert_int_equal(PEM_write_PrivateKey(f, k, NULL, NULL, 0, NULL, NULL), 1);
	fclose(f);
	X509_free(x);
	EVP_PKEY_free(k);
}

static void test_expired_certificate_from_files(void **state)
{
	(void)state;
	char dir[] = "/tmp/pacer-tls-test-XXXXXX";
	assert_non_null(mkdtemp(dir));
	char cert[128], key[128];
	write_expired(dir, cert, key, sizeof cert);
	/* a server from PEM files */
	struct tls_ctx *srv = NULL;
	char err[256] = "";
	assert_int_equal(tls_server_ctx_new(&srv, cert, key, NULL, err, sizeof err), 0);
	/* a key that is not the certificate's */
	struct tls_ctx *bad = NULL;
	char other[160];
	snprintf(other, sizeof other, "%s/other.pem", dir);
	assert_int_equal(tls_identity_write_cert(id_a, other), 0);
	assert_int_equal(tls_server_ctx_new(&bad, other, key, NULL, err, sizeof err), -EINVAL);
	assert_non_null(strstr(err, "does not match"));

	/* trusted, but expired */
	struct tls_client_cfg cfg = {.cacert = cert};
	struct tls_ctx *cctx = client(&cfg);
	int fd[2];
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, fd), 0);
	struct tls_conn *c = NULL, *s = NULL;
	assert_int_equal(tls_conn_new(&c, cctx, fd[0], "localhost", NULL), 0);
	assert_int_equal(tls_conn_new(&s, srv, fd[1], NULL, NULL), 0);
	int rc = TLS_WANT_READ, rs = TLS_WANT_READ;
	for (int i = 0; i < 100 && busy(rc); i++) {
		rc = tls_handshake(c);
		if (busy(rs))
			rs = tls_handshake(s);
	}
	assert_int_equal(rc, TLS_FAILED);
	assert_int_equal(tls_fail_kind(c), TLS_FAIL_VERIFY);
	assert_non_null(strstr(tls_fail_reason(c), "certificate has expired"));
	tls_conn_free(c);
	tls_conn_free(s);
	close(fd[0]);
	close(fd[1]);
	tls_ctx_free(cctx);
	tls_ctx_free(srv);
	unlink(cert);
	unlink(key);
	unlink(other);
	rmdir(dir);
}

/* A server thread: accept one connection on a listening socket and run
 * the server side of the handshake to its end. */
static void *serve_one(void *arg)
{
	int lfd = *(int *)arg;
	struct pollfd p = {.fd = lfd, .events = POLLIN};
	if (poll(&p, 1, 5000) != 1)
		return NULL;
	int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK);
	if (fd < 0)
		return NULL;
	struct tls_conn *s = NULL;
	if (tls_conn_new(&s, srv_a, fd, NULL, NULL) == 0) {
		int rc = TLS_WANT_READ;
		for (int i = 0; i < 100 && busy(rc); i++) {
			struct pollfd q = {.fd = fd, .events = rc == TLS_WANT_READ ? POLLIN : POLLOUT};
			poll(&q, 1, 1000);
			rc = tls_handshake(s);
		}
		char buf[16];
		struct pollfd q = {.fd = fd, .events = POLLIN};
		poll(&q, 1, 1000); /* until the client closes */
		(void)tls_read(s, buf, sizeof buf);
	}
	tls_conn_free(s);
	close(fd);
	return NULL;
}

static void test_probe(void **state)
{
	(void)state;
	char dir[] = "/tmp/pacer-tls-test-XXXXXX";
	assert_non_null(mkdtemp(dir));
	char path[128];
	snprintf(path, sizeof path, "%s/s.sock", dir);
	struct net_addr a;
	assert_int_equal(net_addr_unix(path, &a), 0);
	struct tls_client_cfg good = {.trust = id_a}, wrong = {.trust = id_b};
	struct tls_ctx *cg = client(&good), *cw = client(&wrong);
	char reason[TLS_REASON_CAP] = "";
	/* nothing listens yet */
	assert_int_equal(tls_probe(cg, &a, "localhost", 1000000000ull, reason, sizeof reason),
	                 -ENOENT);
	int lfd = net_listen(&a, 4, false);
	assert_true(lfd >= 0);
	for (int k = 0; k < 2; k++) {
		pthread_t th;
		assert_int_equal(pthread_create(&th, NULL, serve_one, &lfd), 0);
		int rc = tls_probe(k ? cw : cg, &a, "localhost", 5000000000ull, reason, sizeof reason);
		pthread_join(th, NULL);
		if (k == 0) {
			assert_int_equal(rc, 0);
		} else {
			assert_int_equal(rc, TLS_FAILED);
			assert_non_null(strstr(reason, "certificate verify failed"));
		}
	}
	char s[160], want[160];
	snprintf(want, sizeof want, "unix:%s", path);
	assert_string_equal(net_addr_str(&a, s, sizeof s), want);
	close(lfd);
	unlink(path);
	rmdir(dir);
	tls_ctx_free(cg);
	tls_ctx_free(cw);
	/* a path too long for sun_path */
	char longp[200];
	memset(longp, 'x', sizeof longp - 1);
	longp[sizeof longp - 1] = '\0';
	assert_int_equal(net_addr_unix(longp, &a), -ENAMETOOLONG);
	assert_int_equal(net_addr_unix("", &a), -EINVAL);
}

static void test_fingerprint(void **state)
{
	(void)state;
	char fp[TLS_FINGERPRINT_CAP];
	assert_int_equal(tls_ctx_fingerprint(srv_a, fp, sizeof fp), 0);
	assert_int_equal(strlen(fp), 95);
	for (int i = 0; i < 95; i++) {
		if (i % 3 == 2)
			assert_int_equal(fp[i], ':');
		else
			assert_non_null(strchr("0123456789ABCDEF", fp[i]));
	}
	/* another identity, another fingerprint */
	struct tls_ctx *b = NULL;
	char err[128];
	assert_int_equal(tls_server_ctx_new(&b, NULL, NULL, id_b, err, sizeof err), 0);
	char fp2[TLS_FINGERPRINT_CAP];
	assert_int_equal(tls_ctx_fingerprint(b, fp2, sizeof fp2), 0);
	assert_string_not_equal(fp, fp2);
	tls_ctx_free(b);
	/* clients have none; a short buffer is refused */
	struct tls_client_cfg cfg = {.insecure = true};
	struct tls_ctx *c = client(&cfg);
	assert_int_equal(tls_ctx_fingerprint(c, fp, sizeof fp), -EINVAL);
	tls_ctx_free(c);
	assert_int_equal(tls_ctx_fingerprint(srv_a, fp, 10), -EINVAL);
}

int main(void)
{
	signal(SIGPIPE, SIG_IGN); /* writes to a closed socketpair: EPIPE, not death */
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_handshake_trusted_identity),
		cmocka_unit_test(test_ip_literal_matches_san),
		cmocka_unit_test(test_wrong_ca_fails_verification),
		cmocka_unit_test(test_system_store_rejects_self_signed),
		cmocka_unit_test(test_hostname_mismatch),
		cmocka_unit_test(test_insecure_skips_verification),
		cmocka_unit_test(test_cacert_file),
		cmocka_unit_test(test_resumption_on_second_connection),
		cmocka_unit_test(test_peer_not_speaking_tls),
		cmocka_unit_test(test_end_of_stream),
		cmocka_unit_test(test_expired_certificate_from_files),
		cmocka_unit_test(test_probe),
		cmocka_unit_test(test_fingerprint),
	};
	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
