"""HTTP/2 (--h2c, --http2): pacer against nginx's HTTP/2 module over
cleartext (prior knowledge) and over TLS (ALPN h2, a test certificate made
here): exact counts against nginx's access log, streams multiplexed on fewer
connections than requests in flight, GOAWAY after keepalive_requests with
nothing lost, a stream timeout that keeps its connection, --http2=prefer
falling back to HTTP/1.1, and servers that do not speak HTTP/2: counted
errors and no hang. ServeHttp2Test: pacer's own embedded target over HTTP/2
(`pacer serve --h2c` / `--http2`, `--self-contained`), answered by pacer and
by h2load, its plans' latency and misbehaviours per stream."""

import contextlib
import os
import re
import shutil
import subprocess
import signal
import sys
import socket
import struct
import threading
import tempfile
import time
import unittest

import harness
from h2hostile import (F_END_HEADERS, PREFACE, T_HEADERS, T_PING, T_RST, T_SETTINGS, frame,
                       hpack_int, recv_exact)
from harness import Nginx, PacerServe, PacerTestCase
from test_tls import make_pki

_ngx = None
_pki = None
_ports = {}


def nginx_h2_conf():
    """Server blocks added to the harness's nginx: fresh ports per attempt."""
    for k in ("h2c", "h2c_short", "h2", "h1tls"):
        _ports[k] = harness.free_port()
    cert = "ssl_certificate %s/server.pem; ssl_certificate_key %s/server.key;" % (_pki, _pki)
    hello = 'location = /hello { default_type text/plain; return 200 "hello\\n"; }'
    # /post answers a POST with its body's length (nginx reads the body)
    post = ('location = /post { default_type text/plain; '
            'return 200 "got $content_length\\n"; }')
    return """
	server {
		listen 127.0.0.1:%(h2c)d http2;
		%(hello)s
		%(post)s
		location = /big { alias @PREFIX@/file.bin; }
	}
	server {
		listen 127.0.0.1:%(h2c_short)d http2;
		keepalive_requests 10;
		%(hello)s
	}
	server {
		listen 127.0.0.1:%(h2)d ssl http2;
		%(cert)s
		%(hello)s
	}
	server {
		listen 127.0.0.1:%(h1tls)d ssl;
		%(cert)s
		%(hello)s
	}
""" % dict(_ports, cert=cert, hello=hello, post=post)


def setUpModule():
    global _ngx, _pki
    harness.require_pacer()
    if not shutil.which("openssl"):
        raise unittest.SkipTest("openssl command not found")
    _pki = tempfile.mkdtemp(prefix="pacer-pki-")
    make_pki(_pki)
    _ngx = Nginx(extra_http=nginx_h2_conf).start()


def tearDownModule():
    if _ngx is not None:
        _ngx.stop()
    if _pki and not os.environ.get("PACER_KEEP_TMP"):
        shutil.rmtree(_pki, ignore_errors=True)


def url(port_name, path="/hello"):
    scheme = "https" if port_name in ("h2", "h1tls") else "http"
    host = "localhost" if scheme == "https" else "127.0.0.1"
    return "%s://%s:%d%s" % (scheme, host, _ports[port_name], path)


class RefusingServer:
    """An HTTP/2 (h2c) server that refuses every stream: SETTINGS, then a
    RST_STREAM REFUSED_STREAM for each request's HEADERS. A thread per
    connection; stopped by closing its listener."""

    def __init__(self):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.port = self.sock.getsockname()[1]
        self.refused = 0
        self.lock = threading.Lock()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while True:
            try:
                c, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(c,), daemon=True).start()

    def _serve(self, c):
        try:
            recv_exact(c, 24)  # the preface
            c.sendall(b"\0\0\0\4\0\0\0\0\0")  # SETTINGS, empty
            while True:
                hd = recv_exact(c, 9)
                n, typ, flags = int.from_bytes(hd[:3], "big"), hd[3], hd[4]
                sid = int.from_bytes(hd[5:9], "big") & 0x7FFFFFFF
                recv_exact(c, n)
                if typ == 4 and not flags & 1:
                    c.sendall(b"\0\0\0\4\1\0\0\0\0")  # SETTINGS ACK
                elif typ == 1:
                    c.sendall(b"\0\0\4\3\0" + struct.pack(">II", sid, 7))
                    with self.lock:
                        self.refused += 1
        except (EOFError, OSError):
            pass
        finally:
            c.close()

    def stop(self):
        self.sock.close()


class Http2Test(PacerTestCase):
    def run_bounded(self, args):
        """A run that ends on its own: exit 0, or 4 when it is flagged
        generator-limited (no response completed: loop lag is all there is)."""
        t0 = time.monotonic()
        run = harness.run_pacer(args, limited_ok=False)
        self.assertFalse(run.timed_out, harness.describe(run))
        self.assertIn(run.code, (0, 4), harness.describe(run))
        self.assertIsNotNone(run.json, harness.describe(run))
        self.assertLess(time.monotonic() - t0, 15)
        return run

    def assert_all_done(self, run, n=None):
        m = self.phase(run)
        self.assert_no_errors(m, run)
        self.assert_accounted(m, run)
        r = m["requests"]
        if n is not None:
            self.assertEqual(r["sent"], n, r)
        self.assertEqual(r["sent"], r["completed"], r)
        self.assertEqual(r["in_flight_at_end"], 0, r)
        return m

    def test_h2c_closed_loop_exact_counts_and_multiplexing(self):
        mark = _ngx.log_mark()
        run = self.run_ok([url("h2c"), "--h2c", "--requests", 3000, "--concurrency", 2,
                           "--max-streams", 16])
        m = self.assert_all_done(run, 3000)
        self.assertEqual(m["responses"]["by_status"], {"200": 3000})
        self.assertEqual(_ngx.count(mark, path="/hello"), 3000)
        # 32 requests in flight on 2 connections: streams were multiplexed
        self.assertEqual(len(_ngx.connections(mark, path="/hello")), 2)
        self.assertEqual(m["connections"]["opened"], 2)
        h = m["http2"]
        self.assertEqual(h["connections_h2"], 2, h)
        self.assertEqual(h["streams_max"], 16, h)
        self.assertGreater(h["streams_mean"], 1.0, h)
        self.assertEqual((h["goaway"], h["retried"], h["resets"]), (0, 0, {}), h)
        self.assertEqual(m["latency"]["count"], 3000)
        self.assertEqual(m["ttfb"]["count"], 3000)
        self.assertEqual(run.json["plan"]["http"], "h2c")
        self.assertEqual(run.json["plan"]["max_streams"], 16)
        self.assertIn("HTTP/2: 2 connections spoke h2", run.stdout)

    def test_h2c_open_loop_counts(self):
        mark = _ngx.log_mark()
        run = self.run_ok([url("h2c"), "--h2c", "--rate", 1000, "--duration", "1s",
                           "--connections", 4, "--max-streams", 32])
        m = self.assert_all_done(run)
        r = m["requests"]
        self.assertEqual(r["scheduled"], r["sent"], r)
        self.assertLessEqual(abs(r["scheduled"] - 1000), 10, r)
        self.assertEqual(_ngx.count(mark, path="/hello"), r["sent"])
        # a free stream is taken before a new connection is opened
        self.assertLessEqual(m["connections"]["opened"], 4)
        self.assertEqual(m["latency"]["count"], r["completed"])

    def test_protocol_named_and_warmup_connections_counted(self):
        """The headline and the methodology name the protocol, and the
        connections opened during the warm-up count as connections that
        spoke h2 (they once said "0 connections spoke h2": the measured
        phase opened none)."""
        cases = (
            ([url("h2c"), "--h2c"], "h2c (HTTP/2 over cleartext)"),
            ([url("h2"), "--http2", "--cacert", os.path.join(_pki, "ca.pem")],
             "HTTPS (HTTP/2 over TLS)"),
        )
        for args, proto in cases:
            with self.subTest(protocol=proto):
                run = self.run_ok(args + ["--rate", 200, "-d", "0.5s", "-w", "0.3s",
                                          "--connections", 3, "--max-streams", 4])
                j = run.json
                warm = j["warmup"]["http2"]["connections_h2"]
                meas = j["measure"]["http2"]["connections_h2"]
                self.assertGreater(warm, 0, j["warmup"]["http2"])
                self.assertEqual(meas, 0, j["measure"]["http2"])  # opened in the warm-up
                out = harness.words(run.stdout)
                md = harness.words(harness.run_pacer([run.out_path], out=False,
                                                     subcommand="report").stdout)
                for where, text in (("summary", out), ("md", md)):
                    self.assertIn("over loopback %s on a" % proto, text, where)
                    self.assertIn("HTTP/2: %d connection%s spoke h2 (%d of them opened in the "
                                  "warm-up)" % (warm + meas, "" if warm + meas == 1 else "s",
                                                warm), text, where)
                    self.assertNotIn("0 connections spoke h2", text, where)
                self.assertIn("Protocol: %s, at most 4 concurrent streams per connection; %d "
                              "connection%s spoke HTTP/2 (warm-up included)."
                              % (proto, warm + meas, "" if warm + meas == 1 else "s"), md)
        # HTTP/1.1 is named too
        run = self.run_ok([_ngx.url("/hello"), "--requests", 20, "--concurrency", 1])
        self.assertIn("over loopback HTTP/1.1 on a", harness.words(run.stdout))

    def test_goaway_after_keepalive_requests_loses_nothing(self):
        mark = _ngx.log_mark()
        run = self.run_ok([url("h2c_short"), "--h2c", "--requests", 1000, "--concurrency", 2,
                           "--max-streams", 8])
        m = self.assert_all_done(run, 1000)
        self.assertEqual(_ngx.count(mark, path="/hello"), 1000)
        h = m["http2"]
        # nginx ends each connection after 10 requests with a GOAWAY
        self.assertGreaterEqual(h["goaway"], 90, h)
        self.assertGreaterEqual(h["connections_h2"], 100, h)
        self.assertEqual(m["connections"]["opened"], h["connections_h2"])
        self.assertRegex(run.stdout, r"GOAWAY [1-9][0-9,]*")

    def test_table_of_two_hosts(self):
        # one of them ends its connections every 10 requests (GOAWAY)
        d = tempfile.mkdtemp(prefix="pacer-h2-table-")
        try:
            path = os.path.join(d, "targets.txt")
            with open(path, "w") as f:
                f.write("GET %s\nGET %s\n" % (url("h2c"), url("h2c_short")))
            mark = _ngx.log_mark()
            run = self.run_ok(["--requests-file", path, "--h2c", "--rate", 500, "--duration",
                               "1s", "--connections", 4, "--max-streams", 8])
        finally:
            shutil.rmtree(d, ignore_errors=True)
        m = self.assert_all_done(run)
        r = m["requests"]
        self.assertEqual(r["scheduled"], r["sent"], r)
        self.assertEqual(_ngx.count(mark, path="/hello"), r["sent"])
        hosts = m["hosts"]
        self.assertEqual(len(hosts), 2, hosts)
        self.assertEqual(sum(h["completed"] for h in hosts), r["completed"], hosts)
        self.assertTrue(all(h["completed"] > 0 and h["errors"] == 0 for h in hosts), hosts)
        self.assertTrue(all(h["protocol"] == "h2" and h["connections_h1"] == 0 and
                            h["connections_h2"] == h["connections_opened"] and
                            1 <= h["streams_max"] <= 8 for h in hosts), hosts)
        short = [h for h in hosts if h["port"] == _ports["h2c_short"]][0]
        self.assertGreater(short["connections_opened"], 2, hosts)  # after each GOAWAY
        self.assertGreater(m["http2"]["goaway"], 0, m["http2"])

    def test_post_body_and_rules(self):
        mark = _ngx.log_mark()
        run = self.run_ok([url("h2c", "/post"), "--h2c", "--method", "POST", "--body",
                           "x" * 3000, "--requests", 200, "--concurrency", 2,
                           "--success", 'body contains "got 3000"',
                           "--outcome", 'plain=header "content-type" contains "text/plain"'])
        m = self.assert_all_done(run, 200)
        self.assertEqual(m["success"]["ok"], 200, m["success"])
        self.assertEqual(_ngx.count(mark, path="/post", status=200), 200)
        self.assertIn("plain", str(m))

    def test_large_responses(self):
        run = self.run_ok([url("h2c", "/big"), "--h2c", "--requests", 200, "--concurrency", 2,
                           "--max-streams", 8])
        m = self.assert_all_done(run, 200)
        self.assertGreaterEqual(m["bytes"]["in"], 200 * harness.FILE_SIZE)

    def test_h2_over_tls_by_alpn(self):
        mark = _ngx.log_mark()
        run = self.run_ok([url("h2"), "--http2", "--cacert", os.path.join(_pki, "ca.pem"),
                           "--requests", 2000, "--concurrency", 2, "--max-streams", 10])
        m = self.assert_all_done(run, 2000)
        self.assertEqual(_ngx.count(mark, path="/hello"), 2000)
        self.assertEqual(len(_ngx.connections(mark, path="/hello")), 2)
        self.assertEqual(m["tls"]["handshakes"], 2, m["tls"])
        self.assertEqual(m["http2"]["connections_h2"], 2, m["http2"])
        self.assertEqual(m["http2"]["streams_max"], 10, m["http2"])
        self.assertEqual(run.json["plan"]["http"], "h2")

    def test_prefer_falls_back_to_http1(self):
        mark = _ngx.log_mark()
        run = self.run_ok([url("h1tls"), "--http2=prefer", "--cacert",
                           os.path.join(_pki, "ca.pem"), "--requests", 300, "--concurrency", 3])
        m = self.assert_all_done(run, 300)
        self.assertEqual(_ngx.count(mark, path="/hello"), 300)
        self.assertEqual(m["http2"]["connections_h1"], 3, m["http2"])
        self.assertEqual(m["http2"]["connections_h2"], 0, m["http2"])
        self.assertEqual(run.json["plan"]["http"], "h2-prefer")

    def test_prefer_table_says_the_protocol_per_host(self):
        # one host speaks h2, the other keeps HTTP/1.1: the result says which per host
        d = tempfile.mkdtemp(prefix="pacer-h2-prefer-")
        try:
            path = os.path.join(d, "targets.txt")
            with open(path, "w") as f:
                f.write("GET %s\nGET %s\n" % (url("h2"), url("h1tls")))
            mark = _ngx.log_mark()
            run = self.run_ok(["--requests-file", path, "--http2=prefer", "--cacert",
                               os.path.join(_pki, "ca.pem"), "--requests", 400,
                               "--concurrency", 2, "--max-streams", 4])
        finally:
            shutil.rmtree(d, ignore_errors=True)
        m = self.assert_all_done(run, 400)
        self.assertEqual(_ngx.count(mark, path="/hello"), 400)
        by_port = {h["port"]: h for h in m["hosts"]}
        h2, h1 = by_port[_ports["h2"]], by_port[_ports["h1tls"]]
        self.assertEqual((h2["protocol"], h1["protocol"]), ("h2", "http/1.1"), m["hosts"])
        self.assertEqual(h2["completed"] + h1["completed"], 400, m["hosts"])
        self.assertEqual(h2["connections_h1"], 0, h2)
        self.assertEqual(h1["connections_h2"], 0, h1)
        self.assertGreaterEqual(h2["connections_h2"], 1, h2)
        self.assertGreaterEqual(h1["connections_h1"], 1, h1)
        self.assertEqual(h2["connections_h2"], h2["connections_opened"], h2)
        self.assertEqual(h1["connections_h1"], h1["connections_opened"], h1)
        # the phase's counts are the hosts' sums
        self.assertEqual(m["http2"]["connections_h2"], h2["connections_h2"], m["http2"])
        self.assertEqual(m["http2"]["connections_h1"], h1["connections_h1"], m["http2"])
        self.assertTrue(1 <= h2["streams_max"] <= 4, h2)
        self.assertGreaterEqual(h2["streams_mean"], 1.0, h2)
        self.assertEqual((h1["streams_max"], h1["streams_mean"]), (0, 0), h1)
        # the schema describes and admits the hosts' new fields
        import test_report
        self.assertEqual(test_report.undescribed_fields(test_report.schema(), run.json), [])
        errors = [e.message for e in test_report.validator().iter_errors(run.json)]
        self.assertEqual(errors, [])
        text = " ".join(run.stdout.split())  # the report wraps its lines
        self.assertRegex(text, r"By host: localhost:%d h2 \([0-9]+ connections?, streams "
                         r"at most [1-4], [0-9.]+ on average\); localhost:%d http/1\.1 \("
                         % (_ports["h2"], _ports["h1tls"]))

    def test_http2_required_but_server_keeps_http1(self):
        # bounded by --requests alone it could never end: refused at the start
        run = harness.run_pacer([url("h1tls"), "--http2", "--cacert", os.path.join(_pki, "ca.pem"),
                                 "--requests", 100])
        self.assertFalse(run.timed_out, harness.describe(run))
        self.assertEqual(run.code, 2, harness.describe(run))
        self.assertIn("did not choose HTTP/2", run.stderr)
        # an open-loop run goes on, every connection counted
        run = self.run_bounded([url("h1tls"), "--http2", "--cacert", os.path.join(_pki, "ca.pem"),
                                "--rate", 50, "--duration", "500ms", "--timeout", "500ms"])
        m = self.phase(run)
        self.assertGreater(m["transport_errors"]["protocol"], 0, m["transport_errors"])
        self.assertEqual(m["requests"]["completed"], 0)
        self.assertTrue(any("ALPN h2" in x for x in m["tls"]["failure_reasons"]),
                        m["tls"]["failure_reasons"])
        self.assert_accounted(m, run)

    def test_h2c_against_http1_server(self):
        # bounded by --requests alone it could never end: refused at the start
        run = harness.run_pacer([_ngx.url("/hello"), "--h2c", "--requests", 100])
        self.assertFalse(run.timed_out, harness.describe(run))
        self.assertEqual(run.code, 2, harness.describe(run))
        self.assertIn("--h2c", run.stderr)
        self.assertIn("answered in HTTP/1.x", run.stderr)
        # an open-loop run goes on: every failed connection counted, no hang
        run = self.run_bounded([_ngx.url("/hello"), "--h2c", "--rate", 50, "--duration",
                                "500ms", "--timeout", "2s"])
        m = self.phase(run)
        te = m["transport_errors"]
        self.assertEqual(m["requests"]["completed"], 0)
        self.assertEqual(m["http2"]["connections_h2"], 0)
        self.assert_accounted(m, run)
        # In two clean-clone runs of make test (not alone, not in a run of
        # this module) every connection of this run was a connect error (64,
        # 0 protocol), though the run above reached nginx's HTTP/1.x answer;
        # not yet explained (issue 32's notes). Either way each failure is
        # counted and said; the causes are in the message when it is so.
        if te["connect"]:  # the unexplained case: its causes into the log
            print("test_h2c_against_http1_server: %d connect errors, causes %s, reasons %s"
                  % (te["connect"], m.get("connect_failures"), m["tls"]["failure_reasons"]),
                  file=sys.stderr)
        self.assertGreater(te["protocol"] + te["connect"], 0, te)
        self.assertEqual(te["protocol"] + te["connect"], te["total"], (te, m.get("connect_failures")))
        if te["protocol"]:
            self.assertIn("failed as HTTP/2", run.stdout)

    def paused_run(self, args, at_s, for_s):
        """pacer with nginx frozen (SIGSTOP) from at_s after the start for
        for_s; the pause achieved, in seconds, and the run."""
        pids = _ngx.all_pids()
        times = {}

        def stop(_pid):
            times["stop"] = time.monotonic()
            for p in pids:
                os.kill(p, signal.SIGSTOP)

        def cont(_pid):
            for p in pids:
                os.kill(p, signal.SIGCONT)
            times["cont"] = time.monotonic()

        try:
            run = harness.run_pacer(args, timeout=45.0,
                                    actions=[(at_s, stop), (at_s + for_s, cont)])
        finally:
            for p in pids:
                try:
                    os.kill(p, signal.SIGCONT)
                except ProcessLookupError:
                    pass
        self.assertFalse(run.timed_out, harness.describe(run))
        self.assertIsNotNone(run.json, harness.describe(run))
        self.assertIn("cont", times)
        return times["cont"] - times["stop"], run

    def test_stall_shows_in_latency_from_the_schedule(self):
        # as test_run_stall over HTTP/1.1: the q-quantile of latency is
        # pause - (1-q) * duration, streams or not
        rate, duration = 1000, 4.0
        pause, run = self.paused_run(
            [url("h2c"), "--h2c", "--rate", rate, "--duration", "4s", "--warmup", "500ms",
             "--connections", 4, "--max-streams", 100], 2.0, 1.0)
        m = self.assert_all_done(run)
        lat = m["latency"]
        msg = "pause %.3fs latency %s" % (
            pause, {k: lat[k] for k in ("p50_us", "p90_us", "p99_us", "max_us")})
        # the formula is for a backlog that drains at once: allow the ~1000
        # requests due in the pause up to 0.1 s to get through nginx after it
        for q, key in ((0.90, "p90_us"), (0.99, "p99_us")):
            want = (pause - (1 - q) * duration) * 1e6
            self.assertGreaterEqual(lat[key], 0.9 * want, msg)
            self.assertLessEqual(lat[key], want + 100000, msg)
        self.assertLess(m["service_time"]["p50_us"], 50000, msg)
        # at most 4 x 100 in flight on 4 connections; the rest waited for a stream
        self.assertLessEqual(m["connections"]["opened"], 4)
        self.assertEqual(m["http2"]["streams_max"], 100, m["http2"])

    def test_stream_timeout_resets_the_stream_and_keeps_the_connection(self):
        pause, run = self.paused_run(
            [url("h2c"), "--h2c", "--rate", 200, "--duration", "2s", "--timeout", "300ms",
             "--connections", 2, "--max-streams", 50], 0.8, 0.8)
        m = self.phase(run)
        self.assert_accounted(m, run)
        e, r = m["transport_errors"], m["requests"]
        self.assertGreater(e["timeout"], 50, e)  # about 200/s x (0.8 s - 0.3 s)
        self.assertEqual(e["timeout"] + r["completed"] + r["in_flight_at_end"], r["sent"], e)
        self.assertEqual(e["requests"], e["timeout"], e)
        # timeouts reset streams (CANCEL): no connection was closed for them
        self.assertLessEqual(m["connections"]["opened"], 2)
        self.assertGreater(r["completed"], 0)

    def test_server_refusing_every_stream_cannot_keep_a_run_going(self):
        srv = RefusingServer()
        try:
            run = self.run_bounded(["http://127.0.0.1:%d/" % srv.port, "--h2c", "--requests", 50,
                                    "--concurrency", 1, "--max-streams", 4, "--timeout", "2s"])
        finally:
            srv.stop()
        m = self.phase(run)
        self.assert_accounted(m, run)
        r, e, h = m["requests"], m["transport_errors"], m["http2"]
        self.assertEqual(r["completed"], 0, r)
        self.assertEqual(e["reset"], 50, e)  # each request ends once, as an error
        self.assertEqual(r["sent"], 50, r)
        self.assertEqual(h["retried"], 1024, h)  # the run of refusals allowed
        self.assertEqual(h["resets"]["REFUSED_STREAM"], 1024 + 50, h)
        self.assertEqual(srv.refused, 1024 + 50)

    def test_bad_options(self):
        cases = (
            ([url("h2c"), "--h2c", "--http2", "-n", 1], "give one"),
            ([url("h2c"), "--max-streams", 4, "-n", 1], "only with --h2c, --http2 or --http3"),
            ([url("h2c"), "--h2c", "--max-streams", 5000, "-n", 1], "at most 1000"),
            ([url("h2c"), "--http2", "-n", 1], "https:// URL"),
            ([url("h2"), "--h2c", "-n", 1], "cleartext"),
            ([url("h2c"), "--http2=yes", "-n", 1], "'prefer'"),
            ([url("h2c"), "--h2c", "--h2-window", "1k", "-n", 1], "--h2-window"),
        )
        for args, want in cases:
            run = harness.run_pacer(args)
            self.assertEqual(run.code, 2, harness.describe(run))
            self.assertIn(want, run.stderr, harness.describe(run))


PLANS = os.path.join(harness.HERE, "plans")


class ServeHttp2Test(PacerTestCase):
    """`pacer serve --h2c` / `--http2`: many streams per connection, each
    answered as the plan says, by pacer's client and by h2load; HTTP/1.1
    clients still served beside them."""

    def h2load(self, url, n=200, extra=()):
        """h2load -n N -c 2 -m 10 URL: its 'requests:' figures and output."""
        if not shutil.which("h2load"):
            self.skipTest("h2load not installed")
        p = subprocess.run(["h2load", "-n", str(n), "-c", "2", "-m", "10"] + list(extra) + [url],
                           capture_output=True, text=True, timeout=30)
        m = re.search(r"requests: (\d+) total, (\d+) started, (\d+) done, (\d+) succeeded, "
                      r"(\d+) failed, (\d+) errored", p.stdout)
        self.assertIsNotNone(m, p.stdout + p.stderr)
        return dict(zip(("total", "started", "done", "succeeded", "failed", "errored"),
                        map(int, m.groups()))), p.stdout

    @contextlib.contextmanager
    def serve_plan(self, text):
        """`pacer serve --h2c` with a plan of that YAML text, in a file of its
        own (removed after)."""
        d = tempfile.mkdtemp(prefix="pacer-h2-plan-")
        try:
            plan = os.path.join(d, "plan.yaml")
            with open(plan, "w") as f:
                f.write(text)
            with PacerServe(plan, extra=["--h2c"]) as srv:
                yield srv
        finally:
            shutil.rmtree(d, ignore_errors=True)

    def assert_multiplexed(self, run, n, conns=2, streams=10):
        m = self.phase(run)
        self.assert_no_errors(m, run)
        self.assert_accounted(m, run)
        r = m["requests"]
        self.assertEqual((r["sent"], r["completed"], r["in_flight_at_end"]), (n, n, 0), r)
        self.assertEqual(m["responses"]["by_status"], {"200": n})
        # conns x streams requests in flight on `conns` connections
        self.assertEqual(m["connections"]["opened"], conns)
        h = m["http2"]
        self.assertEqual(h["connections_h2"], conns, h)
        self.assertEqual(h["streams_max"], streams, h)
        self.assertEqual((h["goaway"], h["retried"], h["resets"]), (0, 0, {}), h)
        return m

    def test_h2c_served_to_pacer_h2load_and_http1(self):
        with PacerServe("hello", extra=["--h2c"]) as srv:
            run = self.run_ok([srv.url("/"), "--h2c", "-n", 2000, "--concurrency", 2,
                               "--max-streams", 10])
            self.assert_multiplexed(run, 2000)
            got, out = self.h2load(srv.url("/"))
            self.assertEqual((got["succeeded"], got["failed"], got["errored"]), (200, 0, 0), out)
            self.assertIn("Application protocol: h2c", out)
            # no preface: HTTP/1.1 on the same port
            run = self.run_ok([srv.url("/"), "-n", 300, "--concurrency", 3])
            m = self.phase(run)
            self.assertEqual(m["responses"]["by_status"], {"200": 300})
            self.assertEqual(run.json["plan"]["http"], "1.1")
            self.assertTrue(srv.alive())

    def test_http2_over_tls_by_alpn_and_http1_beside_it(self):
        with PacerServe("hello", extra=["--http2", "--tls-cert", os.path.join(_pki, "server.pem"),
                                        "--tls-key", os.path.join(_pki, "server.key")]) as srv:
            u = "https://localhost:%d/" % srv.port
            ca = os.path.join(_pki, "ca.pem")
            run = self.run_ok([u, "--http2", "--cacert", ca, "-n", 2000, "--concurrency", 2,
                               "--max-streams", 10])
            m = self.assert_multiplexed(run, 2000)
            self.assertEqual(m["tls"]["handshakes"], 2, m["tls"])
            self.assertEqual(run.json["plan"]["http"], "h2")
            got, out = self.h2load(u)
            self.assertEqual((got["succeeded"], got["failed"]), (200, 0), out)
            self.assertIn("Application protocol: h2", out)
            # a client offering only http/1.1 by ALPN is served HTTP/1.1
            run = self.run_ok([u, "--cacert", ca, "-n", 300, "--concurrency", 3])
            m = self.phase(run)
            self.assertEqual(m["responses"]["by_status"], {"200": 300})
            self.assertEqual(m["tls"]["handshakes"], 3, m["tls"])
            got, out = self.h2load(u, extra=["--h1"])
            self.assertEqual((got["succeeded"], got["failed"]), (200, 0), out)
            self.assertIn("Application protocol: http/1.1", out)

    def test_plan_latency_per_stream(self):
        # a fixed 20 ms on each of 2 x 25 streams: every request waits its own
        # timer, concurrently (1000 x 20 ms in about 0.4 s, not 20 s)
        with PacerServe(os.path.join(PLANS, "latency.yaml"), extra=["--h2c"]) as srv:
            t0 = time.monotonic()
            run = self.run_ok([srv.url("/fixed"), "--h2c", "-n", 1000, "--concurrency", 2,
                               "--max-streams", 25])
            took = time.monotonic() - t0
            m = self.assert_multiplexed(run, 1000, streams=25)
            lat = m["service_time"]
            self.assertGreaterEqual(lat["min_us"], 20000, lat)
            self.assertGreaterEqual(lat["p50_us"], 20000, lat)
            self.assertLessEqual(lat["p50_us"], 22000, lat)
            self.assertLess(took, 10, "streams did not wait concurrently")
            run = self.run_ok([srv.url("/uniform"), "--h2c", "-n", 1000, "--concurrency", 2,
                               "--max-streams", 25])
            lat = self.assert_multiplexed(run, 1000, streams=25)["service_time"]
            self.assertGreaterEqual(lat["min_us"], 10000, lat)
            self.assertLessEqual(abs(lat["p50_us"] - 20000), 4000, lat)  # 10 % + 2 ms

    def test_plan_features_per_stream(self):
        with PacerServe(os.path.join(PLANS, "behaviour.yaml"), extra=["--h2c"]) as srv:
            common = ["--h2c", "--concurrency", 2, "--max-streams", 10, "--timeout", "5s"]
            # the status mix and fill, per stream
            run = self.run_ok([srv.url("/mix"), "-n", 1000] + common)
            m = self.phase(run)
            by = m["responses"]["by_status"]
            self.assertEqual(sum(by.values()), 1000, by)
            self.assertEqual(set(by), {"200", "204", "503"}, by)
            self.assertLessEqual(abs(by["503"] - 100), 45, by)
            # close_after: 10 -> GOAWAY after every 10th answer, nothing lost
            run = self.run_ok([srv.url("/close-after"), "-n", 200] + common)
            m = self.phase(run)
            r, h = m["requests"], m["http2"]
            self.assertEqual((r["sent"], r["completed"]), (200, 200), r)
            self.assertEqual(m["responses"]["by_status"], {"200": 200})
            self.assertGreaterEqual(h["goaway"], 19, h)
            # garbage: 1 -> every stream reset, the connections kept
            run = self.run_ok([srv.url("/garbage"), "-n", 100] + common)
            m = self.phase(run)
            self.assertEqual(m["transport_errors"]["reset"], 100, m["transport_errors"])
            self.assertEqual(m["http2"]["resets"], {"INTERNAL_ERROR": 100}, m["http2"])
            self.assertEqual(m["connections"]["opened"], 2)
            # a slow body, 16 bytes every 10 ms: >= 90 ms a response, streams in parallel
            run = self.run_ok([srv.url("/slow"), "-n", 40] + common)
            m = self.phase(run)
            self.assertEqual(m["responses"]["by_status"], {"200": 40})
            self.assertGreaterEqual(m["service_time"]["min_us"], 90000, m["service_time"])
            self.assertGreaterEqual(m["bytes"]["in"], 40 * 160)
        with PacerServe("kv", extra=["--h2c"]) as srv:
            # a kv body rendered from each stream's own query
            run = self.run_ok([srv.url("/v1/getvalues?keys=key7,nosuchkey"), "-n", 500,
                               "--success", 'body contains "key7" and body contains ":null}"'] + common)
            m = self.assert_multiplexed(run, 500)
            self.assertEqual(m["success"]["ok"], 500, m["success"])

    def test_self_contained_h2c_and_http2(self):
        run = self.run_ok(["--self-contained", "--h2c", "-n", 2000, "--concurrency", 2,
                           "--max-streams", 10])
        self.assert_multiplexed(run, 2000)
        self.assertEqual(run.json["plan"]["http"], "h2c")
        run = self.run_ok(["--self-contained", "--http2", "-n", 2000, "--concurrency", 2,
                           "--max-streams", 10])
        m = self.assert_multiplexed(run, 2000)
        self.assertEqual(m["tls"]["handshakes"], 2, m["tls"])
        self.assertEqual(run.json["plan"]["http"], "h2")

    def test_header_list_over_the_cap_gets_431(self):
        if not shutil.which("nghttp"):
            self.skipTest("nghttp not installed")
        with PacerServe("hello", extra=["--h2c"]) as srv:
            p = subprocess.run(["nghttp", "-nv", "-H", "x-big: " + "a" * 20000, srv.url("/")],
                               capture_output=True, text=True, timeout=20)
            self.assertIn(":status: 431", p.stdout)
            p = subprocess.run(["nghttp", "-nv", srv.url("/")], capture_output=True, text=True,
                               timeout=20)
            self.assertIn(":status: 200", p.stdout)

    def test_client_that_never_reads_is_bounded(self):
        # 1 MiB answers asked for on stream after stream, with the client's
        # windows opened wide, and nothing read: the server stops reading
        # the connection once its output is full, so its memory stays flat
        with self.serve_plan("name: big\nroutes:\n  - path: /big\n    body_size: 1048576\n"
                             "  - path: /\n    prefix: true\n    body: \"ok\\n\"\n") as srv:
            rss0 = srv.rss_kib()
            c = socket.socket()
            c.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            c.connect(("127.0.0.1", srv.port))
            c.sendall(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" +
                      frame(4, 0, 0, struct.pack(">HI", 4, 2 ** 31 - 1)) +
                      frame(8, 0, 0, struct.pack(">I", 2 ** 31 - 1 - 65535)))
            block = (b"\x82\x86\x04\x04/big\x01" + bytes([len("127.0.0.1")]) +
                     b"127.0.0.1")
            c.settimeout(1.0)
            sid, sent = 1, 0
            try:
                while sid < 2 * 200000:
                    batch = b"".join(frame(1, 5, sid + 2 * i, block) for i in range(500))
                    c.sendall(batch)
                    sid += 1000
                    sent += 500
            except socket.timeout:
                pass  # the server stopped reading: what we meant to see
            time.sleep(0.5)
            grown = srv.rss_kib() - rss0
            # served beside it, on another connection
            run = self.run_ok([srv.url("/"), "--h2c", "-n", 200, "--concurrency", 2,
                               "--max-streams", 10])
            c.close()
            self.assertLess(sent, 200000, "the server read every request")
            self.assertLess(grown, 16 * 1024, "server RSS grew %d KiB" % grown)
            self.assert_multiplexed(run, 200)

    @staticmethod
    def held_streams(port, n, path_len):
        """A connection to port with n request streams begun and never ended:
        HEADERS (END_HEADERS, no END_STREAM) each with a :path of path_len
        bytes, as a client that sends no body would."""
        c = socket.create_connection(("127.0.0.1", port), timeout=5)
        blocks = []
        for i in range(n):
            p = b"/%05d" % i + b"a" * (path_len - 6)
            blocks.append(frame(T_HEADERS, F_END_HEADERS, 2 * i + 1,
                                b"\x82\x86\x04" + hpack_int(len(p), 7) + p + b"\x01\x09127.0.0.1"))
        c.sendall(PREFACE + frame(T_SETTINGS, 0, 0) + b"".join(blocks))
        return c

    def test_held_streams_bounded_and_memory_returned(self):
        # 200 connections, each with 100 streams whose 15 KB :path is held
        # while their request never ends (issue 32: 339 MB, 1.67 MB a
        # connection, 154 MB still held after they closed): the :path bytes
        # of a connection's incomplete requests are bounded (64 KiB; further
        # streams are refused), and what was freed is given back
        with PacerServe("hello", extra=["--h2c"]) as srv:
            rss0 = srv.rss_kib()
            socks = []
            try:
                for _ in range(200):
                    socks.append(self.held_streams(srv.port, 100, 15000))
                time.sleep(0.5)  # let the server read them
                rss_held = srv.rss_kib()
                # the streams past the budget were refused (REFUSED_STREAM),
                # the first four kept
                c = socks[0]
                c.settimeout(2.0)
                refused = set()
                while len(refused) < 96:
                    hd = recv_exact(c, 9)
                    payload = recv_exact(c, int.from_bytes(hd[:3], "big"))
                    if hd[3] == T_RST and struct.unpack(">I", payload)[0] == 7:
                        refused.add(int.from_bytes(hd[5:9], "big") & 0x7FFFFFFF)
                self.assertNotIn(1, refused)
                # answered beside them
                run = self.run_ok([srv.url("/"), "--h2c", "-n", 200, "--concurrency", 2,
                                   "--max-streams", 10])
            finally:
                for c in socks:
                    c.close()
            time.sleep(1.5)  # closed, and given back within a second
            rss_after = srv.rss_kib()
        self.assert_multiplexed(run, 200)
        self.assertLess(rss_held, harness.rss_limit_kib(64),
                        "RSS %d KiB with 200 connections of held streams" % rss_held)
        if not harness.is_sanitized_binary(harness.pacer_bin()):
            self.assertLess(rss_held - rss0, 200 * 160, "%d KiB a connection" %
                            ((rss_held - rss0) // 200))
            self.assertLess(rss_after - rss0, 16 * 1024, "RSS %d KiB after they closed, %d "
                            "before" % (rss_after, rss0))

    def test_rendered_answers_held_are_bounded(self):
        # kv answers of 64 KB (64 keys of 1 KB: 128 KiB buffers) held 2 s by
        # the route's latency, 20 streams on one connection: the first 8 fill
        # the connection's 1 MiB of rendered answers, the rest get 503 at
        # once instead of 128 KiB more each (100 streams could hold 12.5 MiB)
        keys = ",".join("key%d" % i for i in range(64))
        with self.serve_plan("name: bigkv\nroutes:\n  - path: /kv\n    latency: {dist: fixed, "
                             "value: 2s}\n    kv: {param: keys, prefix: key, generate: 1000, "
                             "value_size: 1024}\n") as srv:
            run = self.run_ok([srv.url("/kv?keys=" + keys), "--h2c", "-n", 20,
                               "--concurrency", 1, "--max-streams", 20, "--timeout", "5s"])
        m = self.phase(run)
        self.assert_accounted(m, run)
        self.assertEqual(m["responses"]["by_status"], {"200": 8, "503": 12}, m["responses"])

    def test_pings_do_not_keep_a_connection_open(self):
        # a connection that only pings, and one whose stream never ends:
        # closed by the idle timeout (timeouts.request then timeouts.idle),
        # a PING being no activity (before: a PING every 3 s kept a
        # connection open for ever)
        with self.serve_plan("name: idle\ntimeouts: {request: 300ms, idle: 700ms}\nroutes:\n"
                             "  - path: /\n    prefix: true\n    body: \"ok\\n\"\n") as srv:
            quiet = socket.create_connection(("127.0.0.1", srv.port), timeout=5)
            quiet.sendall(PREFACE + frame(T_SETTINGS, 0, 0))
            held = self.held_streams(srv.port, 1, 100)
            t0 = time.monotonic()
            closed = {}
            while len(closed) < 2 and time.monotonic() - t0 < 6.0:
                for name, c in (("quiet", quiet), ("held", held)):
                    if name in closed:
                        continue
                    try:
                        c.sendall(frame(T_PING, 0, 0, b"12345678"))
                        c.settimeout(0.2)
                        while c.recv(65536):
                            pass
                        closed[name] = time.monotonic() - t0  # EOF
                    except socket.timeout:
                        pass
                    except OSError:
                        closed[name] = time.monotonic() - t0
            quiet.close()
            held.close()
        self.assertEqual(set(closed), {"quiet", "held"}, closed)
        self.assertLess(closed["quiet"], 0.7 + 1.5, closed)
        # the stream's 408 at 300 ms is the last activity: idle 700 ms later
        self.assertGreater(closed["held"], 0.3 + 0.7 - 0.1, closed)
        self.assertLess(closed["held"], 0.3 + 0.7 + 1.5, closed)

    def test_serve_bad_options(self):
        cases = (
            (["--h2c", "--http2"], "give one"),
            (["--h2c", "--tls"], "over TLS give --http2"),
            (["--max-streams", 10], "only with --http2, --h2c or --http3"),
            (["--h2c", "--max-streams", 0], "--max-streams 0"),
            (["--h2c", "--max-streams", 1001], "from 1 to 1000"),
        )
        for args, want in cases:
            run = harness.run_pacer(["--plan", "hello", "--listen", "0"] + args,
                                    subcommand="serve", out=False, timeout=10)
            self.assertEqual(run.code, 2, harness.describe(run))
            self.assertIn(want, run.stderr, harness.describe(run))


if __name__ == "__main__":
    unittest.main()
