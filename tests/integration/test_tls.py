"""HTTPS and Unix sockets: pacer against nginx with TLS (a CA, a server and a
client certificate made here with `openssl req`), against `pacer serve --tls`
and with `--self-contained --tls`; certificate verification failures, a
client certificate nginx requires, session resumption across reconnects, a
plain-HTTP server on an https:// URL, and nginx listening on Unix sockets."""

import hashlib
import os
import re
import shutil
import socket
import ssl
import subprocess
import tempfile
import unittest

import harness
from harness import Nginx, PacerServe, PacerTestCase

_ngx = None
_pki = None
_ports = {}


def _openssl(*args):
    subprocess.run(("openssl",) + args, check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.PIPE)


def make_pki(d):
    """In directory d: ca.pem/ca.key, other-ca.pem (an unrelated CA),
    server.pem/server.key (localhost and 127.0.0.1, signed by ca) and
    client.pem/client.key (signed by ca, for mutual TLS)."""
    ec = ("-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes")
    ca_ext = ("-addext", "basicConstraints=critical,CA:TRUE",
              "-addext", "keyUsage=critical,keyCertSign,cRLSign")
    for name, cn in (("ca", "pacer test CA"), ("other-ca", "pacer unrelated CA")):
        _openssl("req", "-x509", *ec, "-keyout", os.path.join(d, name + ".key"),
                 "-out", os.path.join(d, name + ".pem"), "-days", "2", "-subj", "/CN=" + cn,
                 *ca_ext)
    for name, cn, ext in (
            ("server", "localhost",
             "subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n"),
            ("client", "pacer test client", "extendedKeyUsage=clientAuth\n")):
        key, csr = os.path.join(d, name + ".key"), os.path.join(d, name + ".csr")
        extfile = os.path.join(d, name + ".ext")
        with open(extfile, "w") as f:
            f.write(ext)
        _openssl("req", "-new", *ec, "-keyout", key, "-out", csr, "-subj", "/CN=" + cn)
        _openssl("x509", "-req", "-in", csr, "-CA", os.path.join(d, "ca.pem"),
                 "-CAkey", os.path.join(d, "ca.key"), "-CAcreateserial",
                 "-out", os.path.join(d, name + ".pem"), "-days", "2", "-extfile", extfile)


def nginx_tls_conf():
    """Server blocks added to the harness's nginx: fresh ports per attempt."""
    _ports.update(tls=harness.free_port(), short=harness.free_port(), short12=harness.free_port(),
                  mtls=harness.free_port())
    cert = "ssl_certificate %s/server.pem; ssl_certificate_key %s/server.key;" % (_pki, _pki)
    hello = 'location = /hello { default_type text/plain; return 200 "hello\\n"; }'
    return """
	server {
		listen 127.0.0.1:%(tls)d ssl;
		listen unix:@PREFIX@/https.sock ssl;
		server_name localhost;
		ssl_protocols TLSv1.2 TLSv1.3;
		%(cert)s
		%(hello)s
	}
	server {
		listen 127.0.0.1:%(short)d ssl;
		ssl_protocols TLSv1.3;
		%(cert)s
		keepalive_requests 10;
		%(hello)s
	}
	server {
		listen 127.0.0.1:%(short12)d ssl;
		ssl_protocols TLSv1.2;
		%(cert)s
		keepalive_requests 10;
		%(hello)s
	}
	server {
		listen 127.0.0.1:%(mtls)d ssl;
		%(cert)s
		ssl_client_certificate %(pki)s/ca.pem;
		ssl_verify_client on;
		%(hello)s
	}
	server {
		listen unix:@PREFIX@/http.sock;
		%(hello)s
	}
""" % dict(_ports, cert=cert, hello=hello, pki=_pki)


def setUpModule():
    global _ngx, _pki
    harness.require_pacer()
    if not shutil.which("openssl"):
        raise unittest.SkipTest("openssl command not found")
    _pki = tempfile.mkdtemp(prefix="pacer-pki-")
    make_pki(_pki)
    _ngx = Nginx(extra_http=nginx_tls_conf).start()


def tearDownModule():
    if _ngx is not None:
        _ngx.stop()
    if _pki and not os.environ.get("PACER_KEEP_TMP"):
        shutil.rmtree(_pki, ignore_errors=True)


def pki(name):
    return os.path.join(_pki, name)


def https(port_name, path="/hello", host="localhost"):
    return "https://%s:%d%s" % (host, _ports[port_name], path)


class TlsTestCase(PacerTestCase):
    def assert_tls_ok(self, run, handshakes=None):
        m = self.phase(run)
        self.assert_no_errors(m, run)
        self.assert_accounted(m, run)
        t = m["tls"]
        self.assertEqual(t["failed"], 0, t)
        self.assertEqual(t["failure_reasons"], [], t)
        self.assertIn(t["version"], ("TLSv1.2", "TLSv1.3"), t)
        self.assertTrue(t["cipher"], t)
        if handshakes is not None:
            self.assertEqual(t["handshakes"], handshakes, t)
        # one handshake time per completed handshake
        self.assertEqual(m["handshake"]["count"], t["handshakes"], m["handshake"])
        return m


class NginxTlsTest(TlsTestCase):
    def test_open_loop_counts_and_percentiles(self):
        mark = _ngx.log_mark()
        run = self.run_ok([https("tls"), "--cacert", pki("ca.pem"), "--rate", 500,
                           "--duration", "2s", "--connections", 8])
        m = self.assert_tls_ok(run)
        r = m["requests"]
        self.assertLessEqual(abs(r["scheduled"] - 1000), 10, r)
        self.assertEqual(r["sent"], r["completed"], r)
        self.assertEqual(m["responses"]["by_status"], {"200": r["completed"]})
        self.assertEqual(_ngx.count(mark, path="/hello"), r["sent"])
        lat = m["latency"]
        self.assertEqual(lat["count"], r["completed"])
        self.assertTrue(lat["min_us"] <= lat["p50_us"] <= lat["p90_us"] <= lat["p99_us"]
                        <= lat["max_us"], lat)
        hs = m["handshake"]
        self.assertGreater(hs["count"], 0)
        self.assertLessEqual(hs["count"], 8)
        self.assertGreater(hs["min_us"], 0)
        self.assertEqual(m["tls"]["version"], "TLSv1.3")
        p = run.json["plan"]["tls"]
        self.assertEqual(p["verify"], True)
        self.assertEqual(p["trust"], "cacert")
        self.assertEqual(p["cacert"], pki("ca.pem"))
        self.assertTrue(p["resume"])
        self.assertIsNone(run.json["plan"]["unix_socket"])
        self.assertIn("TLS handshake (per connection)", run.stdout)

    def test_closed_loop_exact_counts(self):
        mark = _ngx.log_mark()
        run = self.run_ok([https("tls", host="127.0.0.1"), "--cacert", pki("ca.pem"),
                           "--requests", 1000, "--concurrency", 4])
        m = self.assert_tls_ok(run, handshakes=4)
        self.assertEqual(m["requests"]["completed"], 1000)
        self.assertEqual(m["connections"]["opened"], 4)
        self.assertEqual(_ngx.count(mark, path="/hello"), 1000)
        self.assertEqual(len(_ngx.connections(mark, path="/hello")), 4)

    def test_wrong_ca_fails_verification(self):
        run = self.run_ok([https("tls"), "--cacert", pki("other-ca.pem"), "--duration", "1s",
                           "--concurrency", 2])
        m = self.phase(run)
        self.assertGreater(m["transport_errors"]["tls"], 0, m["errors"])
        self.assertEqual(m["transport_errors"]["total"], m["transport_errors"]["tls"])
        self.assertEqual(m["errors"]["total"], 0)  # no request was sent
        self.assertEqual(m["tls"]["failed"], m["transport_errors"]["tls"])
        self.assertEqual(m["requests"]["completed"], 0)
        self.assertEqual(m["tls"]["handshakes"], 0)
        reasons = m["tls"]["failure_reasons"]
        self.assertEqual(len(reasons), 1, reasons)
        self.assertIn("certificate verify failed", reasons[0])
        self.assertIn("unable to get local issuer certificate", reasons[0])
        self.assertIn("--cacert", reasons[0])
        self.assert_accounted(m, run)
        # said once at the start, and as a warning
        self.assertEqual(run.stderr.count("TLS handshake with"), 1, run.stderr)
        self.assertIn("certificate verify failed", run.stderr)
        self.assertTrue(any("TLS handshake failed" in w for w in run.json["warnings"]),
                        run.json["warnings"])

    def test_system_store_rejects_a_private_ca(self):
        run = self.run_ok([https("tls"), "--duration", "1s", "--concurrency", 1])
        m = self.phase(run)
        self.assertGreater(m["transport_errors"]["tls"], 0)
        self.assertIn("certificate verify failed", m["tls"]["failure_reasons"][0])
        self.assertEqual(run.json["plan"]["tls"]["trust"], "system store")

    def test_insecure_accepts_any_certificate(self):
        run = self.run_ok([https("tls"), "--insecure", "--requests", 200, "--concurrency", 2])
        self.assert_tls_ok(run, handshakes=2)
        self.assertFalse(run.json["plan"]["tls"]["verify"])

    def test_requests_alone_against_a_bad_certificate_is_refused(self):
        # it could never finish: a usage error, at once, naming the cause
        run = harness.run_pacer([https("tls"), "--requests", 100])
        self.assertEqual(run.code, 2, harness.describe(run))
        self.assertIn("certificate verify failed", run.stderr)
        self.assertIn("--cacert FILE", run.stderr)

    def test_plain_http_server_on_an_https_url(self):
        url = "https://127.0.0.1:%d/hello" % _ngx.port
        run = self.run_ok([url, "--insecure", "--duration", "1s", "--concurrency", 1])
        m = self.phase(run)
        self.assertGreater(m["transport_errors"]["tls"], 0, m["errors"])
        self.assertEqual(m["requests"]["completed"], 0)
        reason = m["tls"]["failure_reasons"][0]
        self.assertIn("does not speak TLS", reason)
        self.assertIn("does not speak TLS", run.stderr)

    def test_client_certificate_required(self):
        mark = _ngx.log_mark()
        run = self.run_ok([https("mtls"), "--cacert", pki("ca.pem"), "--cert", pki("client.pem"),
                           "--key", pki("client.key"), "--requests", 300, "--concurrency", 2])
        m = self.assert_tls_ok(run)
        self.assertEqual(m["responses"]["by_status"], {"200": 300})
        self.assertEqual(_ngx.count(mark, path="/hello", status=200), 300)
        self.assertEqual(run.json["plan"]["tls"]["client_cert"], pki("client.pem"))

        # without one, nginx refuses every request (400 "No required SSL
        # certificate was sent"), or the handshake (TLS alert)
        mark = _ngx.log_mark()
        run = self.run_ok([https("mtls"), "--cacert", pki("ca.pem"), "--duration", "1s",
                           "--concurrency", 2])
        m = self.phase(run)
        self.assertEqual(m["responses"]["by_class"]["2xx"], 0, m["responses"])
        self.assertEqual(_ngx.count(mark, path="/hello", status=200), 0)
        self.assertGreater(m["responses"]["by_status"].get("400", 0) + m["errors"]["total"], 0)

    def test_client_key_that_does_not_match(self):
        run = harness.run_pacer([https("mtls"), "--cacert", pki("ca.pem"), "--cert",
                                 pki("client.pem"), "--key", pki("server.key"), "-n", 10])
        self.assertEqual(run.code, 2, harness.describe(run))
        self.assertIn("does not match", run.stderr)

    def resumed_run(self, port_name, version):
        # nginx closes each connection after 10 requests: 500 requests need
        # about 50 connections, and all but the first few resume the session
        run = self.run_ok([https(port_name), "--cacert", pki("ca.pem"), "--requests", 500,
                           "--concurrency", 2])
        m = self.assert_tls_ok(run)
        t, opened = m["tls"], m["connections"]["opened"]
        self.assertEqual(t["version"], version, t)
        self.assertGreaterEqual(opened, 45, m["connections"])
        self.assertEqual(t["handshakes"], opened, t)
        self.assertGreater(t["resumed"], 0, t)
        full = t["handshakes"] - t["resumed"]
        self.assertLess(full, opened, t)
        self.assertLessEqual(full, opened // 2, t)  # in practice 2: one per first connection
        self.assertEqual(m["requests"]["completed"], 500)

    def test_resumption_across_reconnects(self):
        self.resumed_run("short", "TLSv1.3")  # session tickets after the handshake
        self.resumed_run("short12", "TLSv1.2")

        run = self.run_ok([https("short"), "--cacert", pki("ca.pem"), "--requests", 200,
                           "--concurrency", 2, "--no-tls-resume"])
        m = self.assert_tls_ok(run)
        self.assertEqual(m["tls"]["resumed"], 0, m["tls"])
        self.assertGreaterEqual(m["tls"]["handshakes"], 18)
        self.assertFalse(run.json["plan"]["tls"]["resume"])

    def test_tls_options_need_https(self):
        run = harness.run_pacer([_ngx.url("/hello"), "--cacert", pki("ca.pem"), "-n", 10])
        self.assertEqual(run.code, 2)
        self.assertIn("https", run.stderr)
        run = harness.run_pacer([https("tls"), "--insecure", "--cacert", pki("ca.pem"), "-n", 10])
        self.assertEqual(run.code, 2)
        self.assertIn("--insecure", run.stderr)
        run = harness.run_pacer([https("tls"), "--cacert", pki("nope.pem"), "-n", 10])
        self.assertEqual(run.code, 2)
        self.assertIn("nope.pem", run.stderr)
        run = harness.run_pacer([https("tls"), "--tls", "-n", 10])
        self.assertEqual(run.code, 2)
        self.assertIn("--self-contained", run.stderr)


class UnixSocketTest(TlsTestCase):
    def test_plain_http_over_a_unix_socket(self):
        mark = _ngx.log_mark()
        sock = os.path.join(_ngx.dir, "http.sock")
        run = self.run_ok(["http://localhost/hello", "--unix-socket", sock, "--requests", 500,
                           "--concurrency", 3])
        m = self.phase(run)
        self.assert_no_errors(m, run)
        self.assertEqual(m["requests"]["completed"], 500)
        self.assertEqual(m["connections"]["opened"], 3)
        self.assertEqual(m["responses"]["by_status"], {"200": 500})
        self.assertEqual(_ngx.count(mark, path="/hello"), 500)
        self.assertEqual(run.json["plan"]["unix_socket"], sock)
        self.assertIsNone(run.json["plan"]["tls"])
        self.assertEqual(m["tls"]["handshakes"], 0)

    def test_https_over_a_unix_socket(self):
        sock = os.path.join(_ngx.dir, "https.sock")
        run = self.run_ok(["https://localhost/hello", "--unix-socket", sock, "--cacert",
                           pki("ca.pem"), "--requests", 300, "--concurrency", 2])
        self.assert_tls_ok(run, handshakes=2)
        # the name checked is the URL's: not in the certificate
        run = self.run_ok(["https://other.invalid/hello", "--unix-socket", sock, "--cacert",
                           pki("ca.pem"), "--duration", "1s", "--concurrency", 1])
        m = self.phase(run)
        self.assertGreater(m["transport_errors"]["tls"], 0)
        self.assertIn("hostname mismatch", m["tls"]["failure_reasons"][0])

    def test_missing_socket_is_named(self):
        path = os.path.join(_ngx.dir, "nothing-here.sock")
        run = harness.run_pacer(["http://localhost/", "--unix-socket", path, "-n", 10])
        self.assertEqual(run.code, 2, harness.describe(run))
        self.assertIn(path, run.stderr)
        self.assertIn("No such file or directory", run.stderr)
        self.assertIsNone(run.json)

    def test_unix_socket_with_self_contained_is_refused(self):
        run = harness.run_pacer(["--self-contained", "--unix-socket", "/tmp/x.sock", "-n", 10])
        self.assertEqual(run.code, 2)
        self.assertIn("--unix-socket", run.stderr)


class PacerTlsTargetTest(TlsTestCase):
    def test_self_contained_tls(self):
        run = self.run_ok(["--self-contained", "--tls", "--requests", 2000, "--concurrency", 4])
        m = self.assert_tls_ok(run, handshakes=4)
        self.assertEqual(m["requests"]["completed"], 2000)
        self.assertEqual(m["responses"]["by_class"]["2xx"], 2000)
        j = run.json
        self.assertEqual(j["mode"], "self_contained")
        self.assertTrue(j["plan"]["url"].startswith("https://127.0.0.1:"), j["plan"]["url"])
        self.assertEqual(j["plan"]["tls"]["trust"], "generated certificate")
        self.assertTrue(j["plan"]["tls"]["verify"])
        self.assertEqual(m["tls"]["version"], "TLSv1.3")

    def test_self_contained_tls_open_loop(self):
        run = self.run_ok(["--self-contained", "--tls", "--rate", 1000, "--duration", "1s",
                           "--connections", 4])
        m = self.assert_tls_ok(run)
        self.assertEqual(m["requests"]["sent"], m["requests"]["completed"])
        self.assertLessEqual(m["tls"]["handshakes"], 4)

    def test_pacer_serve_tls(self):
        with PacerServe("hello", extra=["--tls"]) as srv:
            m = re.search(r"certificate SHA-256 ([0-9A-F:]{95})", srv.stderr())
            self.assertIsNotNone(m, srv.stderr())
            # the certificate served is the one announced
            ctx = ssl.create_default_context()
            ctx.check_hostname = False
            ctx.verify_mode = ssl.CERT_NONE
            ctx.set_alpn_protocols(["h2", "http/1.1"])
            with socket.create_connection(("127.0.0.1", srv.port), timeout=5) as s:
                with ctx.wrap_socket(s, server_hostname="localhost") as t:
                    der = t.getpeercert(binary_form=True)
                    self.assertEqual(t.selected_alpn_protocol(), "http/1.1")
            fp = ":".join("%02X" % b for b in hashlib.sha256(der).digest())
            self.assertEqual(fp, m.group(1))

            url = "https://127.0.0.1:%d/" % srv.port
            run = self.run_ok([url, "--insecure", "--requests", 500, "--concurrency", 2])
            self.assert_tls_ok(run, handshakes=2)
            run = self.run_ok([url, "--duration", "1s", "--concurrency", 1])
            m2 = self.phase(run)
            self.assertGreater(m2["transport_errors"]["tls"], 0)
            self.assertIn("self-signed certificate", m2["tls"]["failure_reasons"][0])
            self.assertTrue(srv.alive())

    def test_pacer_serve_with_certificate_files(self):
        with PacerServe("hello", extra=["--tls-cert", pki("server.pem"), "--tls-key",
                                        pki("server.key")]) as srv:
            self.assertIn("certificate SHA-256", srv.stderr())
            url = "https://localhost:%d/" % srv.port
            run = self.run_ok([url, "--cacert", pki("ca.pem"), "--requests", 500,
                               "--concurrency", 2])
            self.assert_tls_ok(run, handshakes=2)
        run = harness.run_pacer(["--plan", "hello", "--tls-cert", pki("nope.pem")],
                                subcommand="serve", out=False, timeout=10)
        self.assertEqual(run.code, 2)
        self.assertIn("nope.pem", run.stderr)


if __name__ == "__main__":
    unittest.main()
