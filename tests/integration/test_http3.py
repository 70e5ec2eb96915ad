"""HTTP/3 (--http3): pacer against Caddy (Debian's caddy: HTTP/3 over QUIC
on by default, its own internal CA, loopback only): exact counts against
Caddy's JSON access log, every request logged as HTTP/3.0, one QUIC
connection per UDP source port, streams multiplexed; the result validates
against the schema and names the protocol. Targets that do not speak QUIC:
nothing on the UDP port (a TCP listener there does not make pacer fall
back) gives one error naming the target and the exit code of a refused
HTTPS target; a UDP port that never answers: failed handshakes counted, and
the run ends on time. Skipped with a reason when caddy is not installed."""

import collections
import json
import os
import select
import shutil
import signal
import socket
import ssl
import subprocess
import tempfile
import threading
import time
import unittest

import harness
from harness import PacerTestCase, describe

_caddy = None


def caddy_bin():
    return os.environ.get("CADDY_BIN") or shutil.which("caddy")


def free_tcp_udp_port():
    """A port free for both TCP and UDP on 127.0.0.1 a moment ago (Caddy
    serves HTTPS on TCP and HTTP/3 on UDP on the same port)."""
    for _ in range(50):
        p = harness.free_port()
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as u:
            try:
                u.bind(("127.0.0.1", p))
            except OSError:
                continue
        return p
    raise RuntimeError("no port free for both TCP and UDP")


class Caddy:
    """`caddy run` with a Caddyfile of its own in a temp dir: HTTPS with its
    internal CA on 127.0.0.1:PORT (TCP for HTTP/1.1 and HTTP/2, UDP for
    HTTP/3), "hello" at every path, a JSON access log. Stopped by PID (the
    harness's kill guard)."""

    def __init__(self, start_timeout=20.0, proxy=None):
        """proxy: {path prefix: upstream port}: those paths are proxied to
        127.0.0.1:port (a badserver) instead of answered "hello"."""
        self.start_timeout = start_timeout
        self.proxy = proxy or {}
        self.dir = tempfile.mkdtemp(prefix="pacer-caddy-")
        self.port = free_tcp_udp_port()
        self.log = os.path.join(self.dir, "access.log")
        self.proc = None

    def start(self):
        conf = os.path.join(self.dir, "Caddyfile")
        with open(conf, "w") as f:
            f.write("""{
	admin off
	auto_https disable_redirects
	skip_install_trust
	storage file_system %(dir)s/data
	http_port %(http)d
	https_port %(port)d
	servers {
		protocols h1 h2 h3
	}
}
https://127.0.0.1:%(port)d {
	bind 127.0.0.1
	tls internal
	log {
		output file %(log)s
		format json
	}
%(proxy)s	respond "hello" 200
}
""" % dict(dir=self.dir, port=self.port, http=harness.free_port(), log=self.log,
           proxy="".join("\thandle %s* {\n\t\treverse_proxy 127.0.0.1:%d\n\t}\n" % (k, v)
                         for k, v in self.proxy.items())))
        env = dict(os.environ, HOME=self.dir, XDG_DATA_HOME=os.path.join(self.dir, "xdg"),
                   XDG_CONFIG_HOME=os.path.join(self.dir, "xdg"))
        self.stderr = open(os.path.join(self.dir, "caddy.out"), "wb")
        self.proc = subprocess.Popen([caddy_bin(), "run", "--config", conf, "--adapter",
                                      "caddyfile"], stdin=subprocess.DEVNULL,
                                     stdout=self.stderr, stderr=self.stderr, cwd=self.dir, env=env)
        harness._register(self.proc)
        try:
            self._wait_ready()
        except Exception as e:
            out = self.output()
            self.stop()
            raise RuntimeError("%s\ncaddy: %s" % (e, out[-3000:])) from None
        return self

    def _wait_ready(self):
        """Ready when a TLS handshake on the TCP port completes (its
        internal CA has issued the certificate HTTP/3 uses too) and it has
        said that its HTTP/3 listener is on."""
        harness.wait_port(self.port, self.start_timeout, self.proc)
        deadline = time.monotonic() + self.start_timeout
        ctx = ssl.create_default_context()
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError("caddy exited (%s)" % self.proc.returncode)
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1) as s:
                    with ctx.wrap_socket(s):
                        if "enabling HTTP/3 listener" in self.output():
                            return
            except (OSError, ssl.SSLError):
                pass
            if time.monotonic() > deadline:
                raise RuntimeError("caddy not ready on port %d" % self.port)
            time.sleep(0.05)

    def output(self):
        try:
            with open(os.path.join(self.dir, "caddy.out"), errors="replace") as f:
                return f.read()
        except OSError:
            return ""

    def stop(self):
        if self.proc is not None:
            harness.stop_process(self.proc)
            self.proc = None
            self.stderr.close()
        if not os.environ.get("PACER_KEEP_TMP"):
            shutil.rmtree(self.dir, ignore_errors=True)

    def url(self, path="/"):
        return "https://127.0.0.1:%d%s" % (self.port, path)

    def log_mark(self):
        try:
            return os.path.getsize(self.log)
        except OSError:
            return 0

    def entries(self, since=0, settle=0.3, timeout=5.0):
        """The access log's entries after byte offset `since`, once the
        log has stopped growing for `settle` seconds (Caddy logs a request
        after its response)."""
        deadline = time.monotonic() + timeout
        last, still = -1, time.monotonic()
        while True:
            n = self.log_mark()
            if n != last:
                last, still = n, time.monotonic()
            elif time.monotonic() - still >= settle or time.monotonic() > deadline:
                break
            time.sleep(0.05)
        if not os.path.exists(self.log):
            return []
        with open(self.log, "rb") as f:
            f.seek(since)
            data = f.read().decode(errors="replace")
        return [json.loads(line) for line in data.splitlines() if line.strip()]


class LossyRelay:
    """A UDP relay on 127.0.0.1 in front of a QUIC server that drops every
    `every`-th datagram from the client (0: none) and holds each datagram,
    both ways, `delay` seconds (loss and a round-trip time on loopback
    without tc netem: this kernel has no sch_netem, not even in a network
    namespace of its own). One upstream socket per client address, as a
    NAT would; order kept; a thread, stopped by stop()."""

    def __init__(self, upstream_port, every, delay=0.0):
        self.up = ("127.0.0.1", upstream_port)
        self.every = every
        self.delay = delay
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.by_client, self.by_up = {}, {}
        self.held = collections.deque()  # (due, send) in order of arrival
        self.seen = self.dropped = 0
        self.stopping = False
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _hold(self, send):
        if self.delay > 0:
            self.held.append((time.monotonic() + self.delay, send))
        else:
            send()

    def _run(self):
        while not self.stopping:
            wait = 0.05
            if self.held:
                wait = min(wait, max(self.held[0][0] - time.monotonic(), 0.0))
            socks = [self.sock] + list(self.by_up)
            ready, _, _ = select.select(socks, [], [], wait)
            for s in ready:
                try:
                    data, addr = s.recvfrom(65536)
                except OSError:
                    continue
                if s is self.sock:
                    u = self.by_client.get(addr)
                    if u is None:
                        u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
                        u.connect(self.up)
                        self.by_client[addr] = u
                        self.by_up[u] = addr
                    self.seen += 1
                    if self.every and self.seen % self.every == 0:
                        self.dropped += 1
                        continue
                    self._hold(lambda u=u, data=data: u.send(data))
                else:
                    to = self.by_up[s]
                    self._hold(lambda data=data, to=to: self.sock.sendto(data, to))
            now = time.monotonic()
            while self.held and self.held[0][0] <= now:
                try:
                    self.held.popleft()[1]()
                except OSError:
                    pass

    def stop(self):
        if self.stopping:
            return
        self.stopping = True
        self.thread.join(2)
        for u in self.by_up:
            u.close()
        self.sock.close()


def slower_than(latency, limit_us):
    """Requests of a latency object (its exact histogram) at limit_us or
    more: the buckets whose lowest value is at least that."""
    return sum(c for v, c in latency["hist"]["counts"] if v >= limit_us * 1000)


def setUpModule():
    global _caddy
    harness.require_pacer()
    if not caddy_bin():
        raise unittest.SkipTest("caddy not found (Debian package caddy; make deps installs it)")
    _caddy = Caddy().start()


def tearDownModule():
    if _caddy is not None:
        _caddy.stop()


class Http3CaddyTest(PacerTestCase):
    def run_h3(self, args, timeout=60.0):
        run = harness.run_pacer([_caddy.url(), "--http3", "--insecure"] + args, timeout=timeout)
        self.assertFalse(run.timed_out, describe(run))
        self.assertEqual(run.code, 0, describe(run))
        self.assertIsNotNone(run.json, describe(run))
        return run

    def assert_log_matches(self, mark, run):
        """Caddy logged exactly the requests pacer sent, each over HTTP/3,
        and its requests came on no more QUIC connections (UDP source
        ports) than pacer opened; returns the log's entries."""
        m = self.phase(run)
        logged = _caddy.entries(mark)
        self.assertEqual(len(logged), m["requests"]["sent"], describe(run))
        protos = {e["request"]["proto"] for e in logged}
        self.assertEqual(protos, {"HTTP/3.0"}, protos)
        self.assertEqual({e["status"] for e in logged}, {200})
        ports = {e["request"]["remote_port"] for e in logged}
        opened = m["connections"]["opened"]
        if "warmup" in run.json:
            opened += run.json["warmup"]["connections"]["opened"]
        self.assertGreaterEqual(len(ports), 1)
        self.assertLessEqual(len(ports), opened, (ports, m["connections"]))
        return logged

    def test_open_loop_counts_match_caddys_log(self):
        mark = _caddy.log_mark()
        run = self.run_h3(["--rate", 200, "--duration", "2s", "--connections", 4])
        m = self.phase(run)
        self.assert_no_errors(m, run)
        self.assert_accounted(m, run)
        r = m["requests"]
        self.assertEqual(r["scheduled"], 400, r)
        self.assertEqual((r["sent"], r["completed"], r["in_flight_at_end"]), (400, 400, 0), r)
        self.assertEqual(m["responses"]["by_status"], {"200": 400})
        self.assertEqual(m["latency"]["count"], 400)
        self.assert_log_matches(mark, run)
        # the protocol and its figures: HTTP/3 instead of HTTP/2, QUIC under it
        self.assertEqual(run.json["plan"]["http"], "h3")
        self.assertEqual(run.json["plan"]["quic"],
                         {"version": "1", "zero_rtt": False, "congestion_control": "cubic"})
        self.assertNotIn("http2", m)
        h3, q = m["http3"], m["quic"]
        self.assertEqual(h3["connections_h3"], m["connections"]["opened"], h3)
        self.assertLessEqual(h3["connections_h3"], 4, h3)
        self.assertEqual((h3["goaway"], h3["retried"], h3["resets"]), (0, 0, {}), h3)
        self.assertEqual(q["handshakes"], h3["connections_h3"], q)
        self.assertEqual(m["tls"]["handshakes"], q["handshakes"], m["tls"])
        self.assertEqual(m["tls"]["version"], "TLSv1.3", m["tls"])
        self.assertEqual(m["handshake"]["count"], q["handshakes"], m["handshake"])
        self.assertGreaterEqual(q["packets_sent"], 400, q)  # a request is at least a packet
        self.assertGreaterEqual(q["packets_received"], 400, q)
        # connections open at the end: their smoothed RTT is counted
        self.assertEqual(q["smoothed_rtt"]["connections"], h3["connections_h3"], q)
        self.assertGreater(q["smoothed_rtt"]["mean_us"], 0, q)
        self.assertEqual(sum(c for c in q["closes"].values() if isinstance(c, int)), 0, q)
        # each second carries QUIC's losses and stalls; they sum to the phase's
        self.assertTrue(run.json["series"], run.json.keys())
        for k in ("packets_lost", "cwnd_stalls"):
            self.assertEqual(sum(s["quic"][k] for s in run.json["series"]), q[k], k)
        self.assertIn("HTTPS (HTTP/3 over QUIC)", harness.words(run.stdout))
        self.assertIn("HTTP/3: %d connection" % h3["connections_h3"], harness.words(run.stdout))

    def test_closed_loop_exact_count_and_multiplexing(self):
        mark = _caddy.log_mark()
        run = self.run_h3(["--requests", 600, "--concurrency", 2, "--max-streams", 8])
        m = self.phase(run)
        self.assert_no_errors(m, run)
        r = m["requests"]
        self.assertEqual((r["sent"], r["completed"]), (600, 600), r)
        logged = self.assert_log_matches(mark, run)
        self.assertEqual(len(logged), 600)
        # both connections carried requests: two QUIC connections in Caddy's log
        self.assertEqual(len({e["request"]["remote_port"] for e in logged}), 2)
        # 16 requests in flight on 2 connections: streams were multiplexed
        self.assertEqual(m["connections"]["opened"], 2, m["connections"])
        h3 = m["http3"]
        self.assertEqual(h3["streams_max"], 8, h3)
        self.assertGreater(h3["streams_mean"], 1.0, h3)
        self.assertEqual(run.json["plan"]["max_streams"], 8)

    def test_result_validates_against_the_schema(self):
        import test_report
        run = self.run_h3(["--rate", 100, "--duration", "1s", "--warmup", "300ms",
                           "--connections", 2])
        v = test_report.validator()
        errors = ["%s: %s" % ("/".join(map(str, e.path)), e.message)
                  for e in v.iter_errors(run.json)]
        self.assertEqual(errors, [])
        self.assertEqual(test_report.undescribed_fields(test_report.schema(), run.json), [])
        # pacer report renders the saved result with the same protocol
        text = harness.report_text(run.out_path)
        self.assertIn("HTTPS (HTTP/3 over QUIC)", harness.words(text))
        self.assertIn("QUIC:", text)

    def test_segments_merge_their_http3_and_quic_figures(self):
        """Two segments of one run (--segment k/2, side by side) merged:
        the counters summed, the smoothed RTT weighted by connections, and
        the merged count is Caddy's."""
        d = tempfile.mkdtemp(prefix="pacer-h3-seg-")
        self.addCleanup(shutil.rmtree, d, True)
        mark = _caddy.log_mark()
        procs, files = [], []
        for k in range(2):
            f = os.path.join(d, "seg%d.json" % k)
            files.append(f)
            procs.append(subprocess.Popen(
                [harness.pacer_bin(), "run", _caddy.url(), "--http3", "--insecure", "--rate", "200",
                 "--duration", "1s", "--connections", "2", "-q", "--limited-ok", "--segment",
                 "%d/2" % k, "--start-at", "+1s", "-o", f],
                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE))
        for p in procs:
            _, err = p.communicate(timeout=60)
            self.assertEqual(p.returncode, 0, err)
        merged = os.path.join(d, "merged.json")
        r = subprocess.run([harness.pacer_bin(), "merge"] + files + ["-o", merged],
                           capture_output=True, text=True, timeout=60)
        self.assertEqual(r.returncode, 0, r.stderr)
        segs = []
        for f in files:
            with open(f) as fh:
                segs.append(json.load(fh)["measure"])
        with open(merged) as fh:
            m = json.load(fh)["measure"]
        self.assertEqual(m["requests"]["sent"], sum(s["requests"]["sent"] for s in segs))
        self.assertEqual(len(_caddy.entries(mark)), m["requests"]["sent"])
        for k in ("connections_h3", "goaway", "retried", "stream_credit_waits"):
            self.assertEqual(m["http3"][k], sum(s["http3"][k] for s in segs), k)
        self.assertEqual(m["http3"]["streams_max"], max(s["http3"]["streams_max"] for s in segs))
        for k in ("handshakes", "packets_sent", "packets_received", "packets_lost"):
            self.assertEqual(m["quic"][k], sum(s["quic"][k] for s in segs), k)
        rtts = [s["quic"]["smoothed_rtt"] for s in segs]
        n = sum(x["connections"] for x in rtts)
        self.assertGreater(n, 0, rtts)
        self.assertEqual(m["quic"]["smoothed_rtt"]["connections"], n)
        self.assertAlmostEqual(m["quic"]["smoothed_rtt"]["mean_us"],
                               sum(x["mean_us"] * x["connections"] for x in rtts) / n, places=2)
        self.assertEqual(m["quic"]["smoothed_rtt"]["max_us"], max(x["max_us"] for x in rtts))
        self.assertEqual(m["quic"]["gso"], any(s["quic"]["gso"] for s in segs))

    def test_certificate_verified_as_for_https(self):
        """Without --insecure Caddy's internal CA is not trusted: every
        handshake fails as TLS (said once, naming --cacert); with --cacert
        of that CA the run succeeds, and its figures say verify on."""
        bad = harness.run_pacer([_caddy.url(), "--http3", "--rate", 20, "--duration", "1s",
                                 "--connections", 1, "--drain", "200ms"])
        self.assertIsNotNone(bad.json, describe(bad))
        m = self.phase(bad)
        self.assertEqual(m["requests"]["completed"], 0, m["requests"])
        self.assertGreater(m["transport_errors"]["tls"], 0, m["transport_errors"])
        self.assertEqual(m["quic"]["handshakes"], 0, m["quic"])
        self.assertIn("certificate verify failed", bad.stderr)
        self.assertIn("--cacert", bad.stderr)
        ca = os.path.join(_caddy.dir, "data", "pki", "authorities", "local", "root.crt")
        mark = _caddy.log_mark()
        run = harness.run_pacer([_caddy.url(), "--http3", "--cacert", ca, "--rate", 20,
                                 "--duration", "1s", "--connections", 1])
        self.assertEqual(run.code, 0, describe(run))
        m = self.phase(run)
        self.assert_no_errors(m, run)
        self.assertEqual(m["requests"]["completed"], 20, m["requests"])
        self.assertEqual(len(_caddy.entries(mark)), 20)
        self.assertEqual(run.json["plan"]["tls"]["verify"], True)

    def test_ramp_steps_carry_http3_and_quic(self):
        import test_report
        mark = _caddy.log_mark()
        run = harness.run_pacer([_caddy.url(), "--http3", "--insecure", "--steps", "100,200",
                                 "--step-duration", "1s", "--step-warmup", "300ms", "--slo",
                                 "p99<1s", "--connections", 2], subcommand="ramp")
        self.assertEqual(run.code, 0, describe(run))
        steps = run.json["steps"]
        self.assertEqual(len(steps), 2)
        sent = 0
        for st in steps:
            m = st["measure"]
            self.assert_no_errors(m, run)
            self.assertIn("http3", m)
            self.assertNotIn("http2", m)
            self.assertEqual(m["quic"]["smoothed_rtt"]["connections"], 2, m["quic"])
            self.assertTrue(all("quic" in x for x in st["series"]), st["series"])
            sent += m["requests"]["sent"] + st["warmup"]["requests"]["sent"]
        self.assertEqual(len(_caddy.entries(mark)), sent)
        v = test_report.validator()
        self.assertEqual([e.message for e in v.iter_errors(run.json)], [])
        self.assertEqual(test_report.undescribed_fields(test_report.schema(), run.json), [])

    # each way through the relay: a round-trip time of about 50 ms, so that
    # a retransmission (2.1 RTTs or more) stands out of this shared
    # machine's scheduling noise (stalls of tens of ms)
    RELAY_DELAY = 0.025

    def relayed_run(self, every):
        """pacer at 200 req/s for 2 s (after a 1 s warm-up that opens the
        connections) through a relay that holds each datagram RELAY_DELAY
        each way and drops every `every`-th from pacer (0: none); the
        counts match Caddy's log. Returns (run, measured phase, relay)."""
        relay = LossyRelay(_caddy.port, every=every, delay=self.RELAY_DELAY)
        self.addCleanup(relay.stop)
        mark = _caddy.log_mark()
        run = harness.run_pacer([_caddy.url(), "--connect-to", "127.0.0.1:%d" % relay.port,
                                 "--http3", "--insecure", "--rate", 200, "--duration", "2s",
                                 "--warmup", "1s", "--connections", 2])
        relay.stop()
        self.assertEqual(run.code, 0, describe(run))
        m = self.phase(run)
        self.assert_no_errors(m, run)
        r = m["requests"]
        self.assertEqual((r["sent"], r["completed"]), (400, 400), r)
        self.assertEqual(len(_caddy.entries(mark)), 400 + run.json["warmup"]["requests"]["sent"])
        return run, m, relay

    def test_loss_is_counted_and_shows_in_latency(self):
        """Every 8th datagram pacer sends is dropped on its way to Caddy,
        each datagram held 25 ms each way: QUIC sends the lost data again,
        so every request is still answered and Caddy's count is exact; the
        losses are counted (per phase and per second); and the latency
        shows them. A request whose packet was lost waits for the loss to
        be detected (an acknowledgement of a later packet, at least 9/8 of
        the RTT after it was sent, or a probe timeout) and then another
        round trip, so it takes about twice the RTT or more. The same run
        without loss is the measure of an untouched request: with loss
        there are more requests past 1.6 times its median, at least one
        for every two lost packets, and the p99 is past it."""
        clean, c, _ = self.relayed_run(0)
        run, m, relay = self.relayed_run(8)
        q = m["quic"]
        self.assertGreater(relay.dropped, 40, relay.dropped)
        self.assertGreater(q["packets_lost"], 0, q)
        self.assertLessEqual(q["packets_lost"], relay.dropped, q)
        # what pacer sent over warm-up and measurement is what the relay saw
        sent = q["packets_sent"] + run.json["warmup"]["quic"]["packets_sent"]
        self.assertGreater(sent, relay.seen * 0.9, (q, relay.seen))
        self.assertGreater(q["congestion_events"], 0, q)  # a loss cuts the window
        self.assertEqual(sum(x["quic"]["packets_lost"] for x in run.json["series"]),
                         q["packets_lost"])
        self.assertIn("packets of requests declared lost %d" % q["packets_lost"],
                      harness.words(run.stdout))
        # latency: distributions against each other, not the machine's timings
        lat, base = m["latency"], c["latency"]
        rtt = 2 * self.RELAY_DELAY * 1e6
        self.assertGreaterEqual(base["p50_us"], rtt, base)  # the relay's round trip is in it
        limit = 1.6 * base["p50_us"]
        slow, slow_clean = slower_than(lat, limit), slower_than(base, limit)
        figures = {"lost": q["packets_lost"], "pto": q["probe_timeouts"],
                   "dropped": relay.dropped, "limit_us": limit, "slow": slow,
                   "slow_clean": slow_clean, "lost_clean": c["quic"]["packets_lost"],
                   "p50": (base["p50_us"], lat["p50_us"]), "p99": (base["p99_us"], lat["p99_us"]),
                   "max": (base["max_us"], lat["max_us"])}
        self.assertGreaterEqual(slow, q["packets_lost"] // 2, figures)
        self.assertGreater(slow, slow_clean, figures)
        self.assertGreaterEqual(lat["p99_us"], limit, figures)

    def test_diff_says_a_protocol_change_is_not_comparable(self):
        """The same table over HTTPS (HTTP/1.1) and over HTTP/3 are two
        benchmarks: pacer diff refuses them, naming plan.http; two HTTP/3
        runs compare."""
        args = ["--insecure", "--rate", 50, "--duration", "1s", "--connections", 2]
        h1 = harness.run_pacer([_caddy.url()] + args)
        h3a = self.run_h3(["--rate", 50, "--duration", "1s", "--connections", 2])
        h3b = self.run_h3(["--rate", 50, "--duration", "1s", "--connections", 2])
        self.assertIsNotNone(h1.json, describe(h1))
        self.assertEqual(h1.json["plan"]["http"], "1.1")
        self.assertEqual(h1.json["plan"]["workload"]["sha256"],
                         h3a.json["plan"]["workload"]["sha256"])  # the same requests
        r = subprocess.run([harness.pacer_bin(), "diff", h1.out_path, h3a.out_path],
                           capture_output=True, text=True, timeout=30)
        self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
        self.assertIn("not comparable: plan.http differs (old 1.1, new h3)", r.stderr)
        r = subprocess.run([harness.pacer_bin(), "diff", h3a.out_path, h3b.out_path],
                           capture_output=True, text=True, timeout=30)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("comparable: same kind", r.stdout)


class Http3UpstreamTest(PacerTestCase):
    """Caddy in front of tests/tools/badserver: a known delay, and a server
    that never answers."""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.slow = harness.BadServer("slow", delay_ms=50).start()
        cls.stall = harness.BadServer("stall").start()
        try:
            cls.caddy = Caddy(proxy={"/slow": cls.slow.port, "/stall": cls.stall.port}).start()
        except Exception:
            cls.slow.stop()
            cls.stall.stop()
            raise

    @classmethod
    def tearDownClass(cls):
        cls.caddy.stop()
        cls.slow.stop()
        cls.stall.stop()

    def test_known_delay_is_in_the_latency(self):
        mark = self.caddy.log_mark()
        run = harness.run_pacer([self.caddy.url("/slow"), "--http3", "--insecure", "--rate", 20,
                                 "--duration", "2s", "--connections", 2])
        self.assertEqual(run.code, 0, describe(run))
        m = self.phase(run)
        self.assert_no_errors(m, run)
        self.assertEqual(m["requests"]["completed"], 40, m["requests"])
        self.assertEqual(len(self.caddy.entries(mark)), 40)
        # every response came 50 ms after its request at the earliest
        for k in ("latency", "service_time", "ttfb"):
            self.assertGreaterEqual(m[k]["min_us"], 50000, (k, m[k]))
        self.assertLess(m["latency"]["p50_us"], 50000 + 100000, m["latency"])

    def test_stream_timeout_cancels_the_stream_and_keeps_the_connection(self):
        t0 = time.monotonic()
        run = harness.run_pacer([self.caddy.url("/stall"), "--http3", "--insecure", "--rate", 10,
                                 "--duration", "1s", "--connections", 1, "--timeout", "300ms"])
        took = time.monotonic() - t0
        self.assertIsNotNone(run.json, describe(run))
        m = self.phase(run)
        self.assert_accounted(m, run)
        r, e = m["requests"], m["transport_errors"]
        self.assertEqual(r["sent"], 10, r)
        self.assertEqual((r["completed"], e["timeout"]), (0, 10), (r, e))
        # the streams were cancelled (H3_REQUEST_CANCELLED), their connection kept
        self.assertEqual(m["connections"]["opened"], 1, m["connections"])
        self.assertEqual(m["http3"]["connections_h3"], 1, m["http3"])
        self.assertEqual(m["quic"]["closes"]["by_pacer"], 0, m["quic"])
        self.assertLess(took, 10)

    def test_interrupt_counts_unanswered_streams_as_outcomes(self):
        """SIGINT while every stream waits on a server that never answers:
        exit 130, the result written, the streams in flight counted at the
        end and in the latency at their wait until the interrupt."""
        run = harness.run_pacer([self.caddy.url("/stall"), "--http3", "--insecure", "--rate", 20,
                                 "--duration", "10s", "--connections", 1, "--timeout", "20s"],
                                timeout=20.0,
                                actions=[(1.5, lambda pid: os.kill(pid, signal.SIGINT))])
        self.assertEqual(run.code, 130, describe(run))
        self.assertIsNotNone(run.json, describe(run))
        self.assertTrue(run.json["interrupted"])
        m = self.phase(run)
        r = m["requests"]
        self.assertEqual(r["completed"], 0, r)
        self.assertGreater(r["in_flight_at_end"], 5, r)
        unanswered = r["in_flight_at_end"] + r["queued_at_end"]
        self.assertEqual(m["latency"]["count"], unanswered, (m["latency"], r))
        self.assertEqual(m["latency_failed"]["count"], unanswered, m["latency_failed"])
        self.assertLess(m["latency"]["max_us"], 3e6, m["latency"])


class Http3ServerGoneTest(PacerTestCase):
    def test_server_that_exits_mid_run(self):
        """Caddy exits (SIGTERM: it sends no CONNECTION_CLOSE) halfway
        through: the ICMP port unreachable that follows ends each
        connection as a close by the server (as a TCP reset), not as a
        protocol error; reconnects are refused and counted; the run ends
        on time with every request accounted for."""
        caddy = Caddy().start()
        self.addCleanup(caddy.stop)
        pid = caddy.proc.pid
        t0 = time.monotonic()
        run = harness.run_pacer([caddy.url(), "--http3", "--insecure", "--rate", 100,
                                 "--duration", "3s", "--connections", 2, "--timeout", "1s"],
                                actions=[(1.5, lambda _: os.kill(pid, signal.SIGTERM))])
        took = time.monotonic() - t0
        self.assertFalse(run.timed_out, describe(run))
        self.assertIsNotNone(run.json, describe(run))
        self.assertLess(took, 15)
        m = self.phase(run)
        self.assert_accounted(m, run)
        r, e, q = m["requests"], m["transport_errors"], m["quic"]
        self.assertGreater(r["completed"], 20, r)
        self.assertLess(r["completed"], 300, r)
        self.assertGreaterEqual(q["closes"]["port_unreachable"], 1, q["closes"])
        self.assertEqual(q["closes"]["by_pacer"], 0, q["closes"])
        self.assertEqual(e["protocol"], 0, e)
        self.assertGreaterEqual(m["connections"]["closed_by_server"],
                                q["closes"]["port_unreachable"], m["connections"])
        self.assertGreater(m["connect_failures"]["refused"], 0, m["connect_failures"])


class Http3NoQuicTest(PacerTestCase):
    """Targets that do not speak QUIC, and options that do not go with it."""

    def test_bad_options(self):
        https = "https://127.0.0.1:9/"
        cases = (
            (["http://127.0.0.1:9/", "--http3"], "give an https:// URL"),
            ([https, "--http3", "--http2"], "give one"),
            ([https, "--http3", "--h2c"], "give one"),
            ([https, "--alpn", "h2"], "only h3"),
            ([https, "--http3", "--unix-socket", "/tmp/none.sock"], "not with --unix-socket"),
            ([https, "--max-streams", 4], "only with --h2c, --http2 or --http3"),
        )
        for args, want in cases:
            with self.subTest(args=args):
                run = harness.run_pacer(args + ["-n", 1])
                self.assertEqual(run.code, 2, describe(run))
                self.assertIn(want, run.stderr, describe(run))
                self.assertEqual(len(run.stderr.strip().splitlines()), 1, run.stderr)

    def test_closed_udp_port_is_one_clear_error(self):
        """Nothing on the UDP port, a TCP listener on the same port: no
        fallback to TCP; one error naming the target, and the exit code of
        an HTTPS target that refuses the connection."""
        port = free_tcp_udp_port()
        with socket.socket() as tcp:
            tcp.bind(("127.0.0.1", port))
            tcp.listen(8)
            url = "https://127.0.0.1:%d/" % port
            t0 = time.monotonic()
            h3 = harness.run_pacer([url, "--http3", "--insecure", "--rate", 50, "--duration",
                                    "1s"])
            took = time.monotonic() - t0
        refused = harness.run_pacer(["https://127.0.0.1:%d/" % free_tcp_udp_port(),
                                     "--insecure", "--rate", 50, "--duration", "1s"])
        self.assertEqual(refused.code, 2, describe(refused))
        self.assertEqual(h3.code, refused.code, describe(h3))
        self.assertLess(took, 10)
        lines = [ln for ln in h3.stderr.splitlines() if ln.strip()]
        self.assertEqual(len(lines), 1, h3.stderr)
        self.assertIn(url, lines[0])
        self.assertIn("UDP", lines[0])
        self.assertIn("--http3", lines[0])
        self.assertIsNone(h3.json, "no result for a target that was never reached")

    def test_silent_udp_port_counts_failed_handshakes_and_ends_on_time(self):
        """A UDP socket that reads and never answers: the probe says so
        once, the run goes on, every handshake fails by --timeout and is
        counted, nothing is sent, and the run ends on time."""
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as u:
            u.bind(("127.0.0.1", 0))
            port = u.getsockname()[1]
            url = "https://127.0.0.1:%d/" % port
            t0 = time.monotonic()
            run = harness.run_pacer([url, "--http3", "--insecure", "--rate", 20, "--duration",
                                     "1s", "--timeout", "500ms", "--connections", 2])
            took = time.monotonic() - t0
            got = 0
            u.setblocking(False)
            try:
                while True:
                    u.recv(65536)
                    got += 1
            except BlockingIOError:
                pass
        self.assertFalse(run.timed_out, describe(run))
        self.assertIsNotNone(run.json, describe(run))
        self.assertLess(took, 15)
        self.assertGreater(got, 0, "pacer sent no Initial packet")
        self.assertIn(url, run.stderr)
        self.assertIn("no QUIC answer", run.stderr)
        m = self.phase(run)
        r = m["requests"]
        self.assertEqual((r["sent"], r["completed"]), (0, 0), r)
        self.assertGreater(m["connect_failures"]["timeout"], 0, m["connect_failures"])
        self.assertEqual(m["connections"]["opened"], 0, m["connections"])
        self.assertEqual(m["quic"]["handshakes"], 0, m["quic"])


if __name__ == "__main__":
    harness.run_suite()
