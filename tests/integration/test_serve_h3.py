"""`pacer serve --http3`: the embedded target over QUIC v1 (ngtcp2 with
GnuTLS, nghttp3's server side), driven by pacer's own HTTP/3 client.
Exact counts on both ends (the server prints what it served when it
stops), a known delay in the latency, a small ramp, the self-contained
mode, Version Negotiation for an unknown QUIC version, a client that opens
many streams and then stops reading and acknowledging anything (the
server's memory stays bounded, other clients are served, and its
connections end at the plan's idle timeout), and bad options: one clear
error each. No outside server needed."""

import os
import re
import shutil
import signal
import socket
import struct
import subprocess
import tempfile
import time

import harness
from harness import PacerServe, PacerTestCase, describe

SERVED = re.compile(r"pacer serve: served (\d+) requests on (\d+) connections \((\d+) bad requests, "
                    r"(\d+) timeouts, (\d+) misbehaviours, (\d+) connections rejected\)")


def served(srv):
    """Stop srv with SIGINT and read its closing line: a dict of its counts."""
    code, _ = srv.signal_stop(signal.SIGINT, timeout=10.0)
    err = srv.stderr()
    m = SERVED.search(err)
    if code != 0 or not m:
        raise AssertionError("pacer serve exited %s without its served line: %s" % (code, err))
    keys = ("requests", "connections", "bad_requests", "timeouts", "misbehaved", "rejected")
    return dict(zip(keys, map(int, m.groups())))


def sent_total(run):
    """Requests pacer sent over warm-up and measurement (or a ramp's steps)."""
    if "steps" in run.json:
        return sum(st["measure"]["requests"]["sent"] + st["warmup"]["requests"]["sent"]
                   for st in run.json["steps"])
    n = run.json["measure"]["requests"]["sent"]
    if "warmup" in run.json:
        n += run.json["warmup"]["requests"]["sent"]
    return n


class ServeH3(PacerServe):
    """pacer serve --http3 with a plan given as YAML text (or a built-in name)."""

    def __init__(self, plan="hello", text=None, extra=()):
        self.tmp = None
        if text is not None:
            self.tmp = tempfile.mkdtemp(prefix="pacer-h3-plan-")
            plan = os.path.join(self.tmp, "plan.yaml")
            with open(plan, "w") as f:
                f.write(text)
        super().__init__(plan, extra=["--http3"] + list(extra))

    def https(self, path="/"):
        return "https://127.0.0.1:%d%s" % (self.port, path)

    def stop(self):
        r = super().stop()
        if self.tmp:
            shutil.rmtree(self.tmp, ignore_errors=True)
            self.tmp = None
        return r


class ServeHttp3Test(PacerTestCase):
    def assert_connections(self, got, opened):
        """The server counted pacer's `opened` QUIC connections, the
        harness's TCP connect that waited for the port, and maybe pacer's
        QUIC check before the run (counted when the server saw its
        handshake complete, which the check does not wait for)."""
        self.assertIn(got["connections"], (opened + 1, opened + 2), (got, opened))

    def run_h3(self, url, args, subcommand="run", timeout=60.0):
        run = harness.run_pacer([url, "--http3", "--insecure"] + [str(a) for a in args],
                                timeout=timeout, subcommand=subcommand)
        self.assertFalse(run.timed_out, describe(run))
        self.assertEqual(run.code, 0, describe(run))
        self.assertIsNotNone(run.json, describe(run))
        return run

    def test_open_loop_counts_match_on_both_ends(self):
        with ServeH3() as srv:
            run = self.run_h3(srv.https(), ["--rate", "2k", "--duration", "2s", "--connections", 4])
            m = self.phase(run)
            self.assert_no_errors(m, run)
            self.assert_accounted(m, run)
            r = m["requests"]
            self.assertEqual(r["scheduled"], 4000, r)
            self.assertEqual((r["sent"], r["completed"], r["in_flight_at_end"]), (4000, 4000, 0), r)
            self.assertEqual(m["responses"]["by_status"], {"200": 4000})
            self.assertEqual(run.json["plan"]["http"], "h3")
            h3 = m["http3"]
            self.assertEqual(h3["connections_h3"], m["connections"]["opened"], h3)
            self.assertEqual((h3["goaway"], h3["retried"], h3["resets"]), (0, 0, {}), h3)
            opened = m["connections"]["opened"] + run.json.get("warmup", {}).get(
                "connections", {}).get("opened", 0)
            got = served(srv)
        # every request pacer sent was answered by the server, and nothing else
        self.assertEqual(got["requests"], sent_total(run), (got, describe(run)))
        self.assertEqual((got["bad_requests"], got["misbehaved"], got["rejected"]), (0, 0, 0), got)
        # connections: pacer's QUIC ones, the harness's TCP connect that
        # waited for the port, and the QUIC check pacer makes before a run
        # when its handshake completed on the server's side too (the check
        # closes as soon as its own side completes: sometimes before its
        # Finished went out)
        self.assert_connections(got, opened)

    def test_two_threads_each_with_its_socket(self):
        """--threads 2: a UDP socket per thread on one port (SO_REUSEPORT);
        every connection stays on the thread the kernel gave it, so every
        request is answered and counted once."""
        with ServeH3(extra=["--threads", 2]) as srv:
            run = self.run_h3(srv.https(), ["--rate", "1k", "--duration", "1s",
                                            "--connections", 8])
            m = self.phase(run)
            self.assert_no_errors(m, run)
            self.assertEqual(m["responses"]["by_status"], {"200": 1000})
            self.assertEqual(m["connections"]["opened"], 8, m["connections"])
            got = served(srv)
        self.assertEqual(got["requests"], sent_total(run), got)
        self.assert_connections(got, 8)

    def test_known_delay_is_in_the_latency_and_routes_answer_as_planned(self):
        plan = ("name: h3-delay\nroutes:\n"
                "  - path: /slow\n    latency: {dist: fixed, value: 40ms}\n"
                "  - path: /teapot\n    status: 418\n    body: tea\n"
                "  - path: /fast\n")
        with ServeH3(text=plan) as srv:
            run = self.run_h3(srv.https("/slow"), ["--rate", 100, "--duration", "1s",
                                                    "--connections", 2])
            m = self.phase(run)
            self.assert_no_errors(m, run)
            self.assertEqual(m["responses"]["by_status"], {"200": 100})
            lat = m["latency"]
            # a fixed 40 ms before every answer: no request faster, and the
            # median not far above (generous: a loaded machine)
            self.assertGreaterEqual(lat["min_us"], 40000, lat)
            self.assertLess(lat["p50_us"], 400000, lat)
            run2 = self.run_h3(srv.https("/teapot"), ["-n", 50, "--concurrency", 2])
            m2 = self.phase(run2)
            self.assertEqual(m2["responses"]["by_status"], {"418": 50})
            self.assertLess(m2["latency"]["p50_us"], lat["p50_us"])
            got = served(srv)
        self.assertEqual(got["requests"], sent_total(run) + sent_total(run2), got)

    def test_misbehaviours_over_http3(self):
        """The plan's misbehaviours, HTTP/3's way: garbage is a reset stream
        (H3_INTERNAL_ERROR), close_after a GOAWAY (the requests past it
        rejected, retried on a new connection, never counted twice), a slow
        body its pauses in the latency; the server's count is pacer's."""
        plan = os.path.join(harness.HERE, "plans", "behaviour.yaml")
        with ServeH3(plan) as srv:
            run = self.run_h3(srv.https("/garbage"), ["-n", 50, "--concurrency", 2])
            m = self.phase(run)
            self.assertEqual(m["requests"]["completed"], 0, m["requests"])
            self.assertEqual(m["transport_errors"]["reset"], 50, m["transport_errors"])
            self.assertEqual(m["http3"]["resets"], {"H3_INTERNAL_ERROR": 50}, m["http3"])
            run2 = self.run_h3(srv.https("/close-after"), ["-n", 100, "--concurrency", 2,
                                                            "--max-streams", 10])
            m2 = self.phase(run2)
            self.assert_no_errors(m2, run2)
            self.assertEqual(m2["responses"]["by_status"], {"200": 100})
            # one after a connection's 10th answer (the streams it had begun are
            # answered too, so a connection may carry a few more)
            goaways = m2["http3"]["goaway"]
            self.assertTrue(5 <= goaways <= 10, m2["http3"])
            # 100 streams at once on a connection: the GOAWAY goes after the
            # server read every datagram of its batch, so it answers the
            # streams already sent. Before, it named only those in the
            # packets read before the 10th request, and rejected the rest:
            # 1,330 streams retried for 200 requests, 894 H3_REQUEST_REJECTED
            run4 = self.run_h3(srv.https("/close-after"), ["-n", 200, "--concurrency", 2])
            m4 = self.phase(run4)
            self.assert_no_errors(m4, run4)
            self.assertEqual(m4["responses"]["by_status"], {"200": 200})
            self.assertLess(m4["http3"]["retried"], 100, m4["http3"])
            goaways += m4["http3"]["goaway"]
            run3 = self.run_h3(srv.https("/slow"), ["-n", 20, "--concurrency", 2])
            m3 = self.phase(run3)
            self.assertEqual(m3["responses"]["by_status"], {"200": 20})
            # 160 bytes 16 at a time, 10 ms apart: 9 pauses
            self.assertGreaterEqual(m3["latency"]["min_us"], 90000, m3["latency"])
            got = served(srv)
        self.assertEqual(got["requests"], 50 + 100 + 200 + 20, got)
        self.assertEqual(got["misbehaved"], 50 + goaways, got)

    def test_ramp_against_it(self):
        with ServeH3() as srv:
            run = self.run_h3(srv.https(), ["--steps", "100,200", "--step-duration", "1s",
                                            "--step-warmup", "300ms", "--slo", "p99<1s",
                                            "--connections", 2], subcommand="ramp")
            steps = run.json["steps"]
            self.assertEqual(len(steps), 2)
            for st in steps:
                self.assert_no_errors(st["measure"], run)
                self.assertIn("http3", st["measure"])
            got = served(srv)
        self.assertEqual(got["requests"], sent_total(run), got)

    def test_connections_over_the_plans_cap_are_refused_and_counted(self):
        """max_connections: 2 and a client with 4: the two over the cap get
        CONNECTION_CLOSE (CONNECTION_REFUSED), counted by the server as
        rejected and by pacer as failed connections; what the other two
        carried is answered and counted the same on both ends."""
        plan = "name: h3-cap\nmax_connections: 2\nroutes:\n  - path: /\n"
        with ServeH3(text=plan) as srv:
            run = harness.run_pacer([srv.https(), "--http3", "--insecure", "--rate", 200,
                                     "--duration", "1s", "--connections", 4])
            self.assertFalse(run.timed_out, describe(run))
            self.assertIsNotNone(run.json, describe(run))
            m = self.phase(run)
            done = m["requests"]["completed"] + run.json.get("warmup", {}).get(
                "requests", {}).get("completed", 0)
            self.assertGreater(done, 0, describe(run))
            # 2, or 1 if the QUIC check before the run still held a slot
            h3 = m["http3"]["connections_h3"]
            self.assertIn(h3, (1, 2), m["http3"])
            got = served(srv)
        self.assertGreaterEqual(got["rejected"], 4 - h3, got)
        self.assert_connections(got, h3)
        self.assertEqual(got["requests"], done, got)

    def test_self_contained(self):
        run = harness.run_pacer(["--self-contained", "--http3", "-n", 300, "--concurrency", 3,
                                 "--max-streams", 10])
        self.assertEqual(run.code, 0, describe(run))
        m = self.phase(run)
        self.assert_no_errors(m, run)
        self.assertEqual(m["responses"]["by_status"], {"200": 300})
        self.assertEqual(run.json["plan"]["http"], "h3")
        self.assertEqual(m["http3"]["connections_h3"], 3, m["http3"])
        # the ad-serving mix: GETs and POSTs with bodies, rendered answers,
        # a status mix: every request answered with one of the plan's
        run = harness.run_pacer(["--self-contained=vast_ortb_mix", "--http3", "-n", 400,
                                 "--concurrency", 4])
        self.assertEqual(run.code, 0, describe(run))
        m = self.phase(run)
        by = m["responses"]["by_status"]
        self.assertEqual(sum(by.values()), 400, by)
        self.assertLessEqual(set(by), {"200", "204", "500", "503"}, by)
        self.assertGreater(by.get("204", 0), 0, by)
        self.assertEqual(m["transport_errors"]["total"], 0, m["transport_errors"])

    def test_served_to_ngtcp2s_own_client(self):
        """Another HTTP/3 implementation than pacer's: ngtcp2's example
        client (Debian's ngtcp2-client, gtlsclient) gets the plan's bodies on
        10 streams of one connection, counted by the server."""
        exe = shutil.which("gtlsclient")
        if not exe:
            self.skipTest("gtlsclient (Debian's ngtcp2-client) not installed")
        plan = "name: h3-interop\nroutes:\n  - path: /a\n    body: alpha\n  - path: /b\n    status: 404\n"
        d = tempfile.mkdtemp(prefix="pacer-h3-dl-")
        try:
            with ServeH3(text=plan) as srv:
                p = subprocess.run([exe, "-q", "--exit-on-all-streams-close", "--download", d,
                                    "-n", "10", "127.0.0.1", str(srv.port), srv.https("/a")],
                                   capture_output=True, text=True, timeout=30)
                self.assertEqual(p.returncode, 0, p.stdout[-2000:] + p.stderr[-2000:])
                with open(os.path.join(d, "a")) as f:
                    self.assertEqual(f.read(), "alpha")
                p = subprocess.run([exe, "--exit-on-all-streams-close", "127.0.0.1",
                                    str(srv.port), srv.https("/b")],
                                   capture_output=True, text=True, timeout=30)
                self.assertIn("[:status: 404]", p.stdout + p.stderr)
                got = served(srv)
        finally:
            shutil.rmtree(d, ignore_errors=True)
        # two QUIC connections, and the harness's TCP connect
        self.assertEqual((got["requests"], got["connections"]), (11, 3), got)

    def test_unknown_quic_version_gets_version_negotiation(self):
        with ServeH3() as srv:
            dcid, scid = os.urandom(8), os.urandom(8)
            # a long header (Initial-like) of a version nobody speaks,
            # padded to QUIC's 1200-byte minimum
            pkt = bytes([0xc0]) + struct.pack("!I", 0x1a2a3a4a) + bytes([8]) + dcid + bytes([8]) + scid
            pkt += b"\0" * (1200 - len(pkt))
            with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as u:
                u.settimeout(5)
                u.sendto(pkt, ("127.0.0.1", srv.port))
                data, _ = u.recvfrom(2048)
            self.assertTrue(data[0] & 0x80, data[:8])
            self.assertEqual(struct.unpack("!I", data[1:5])[0], 0, "not a Version Negotiation")
            # its DCID is our SCID, its SCID our DCID, then the versions: v1
            self.assertEqual(data[5], 8)
            self.assertEqual(data[6:14], scid)
            self.assertEqual(data[14], 8)
            self.assertEqual(data[15:23], dcid)
            versions = [struct.unpack("!I", data[i:i + 4])[0] for i in range(23, len(data), 4)]
            self.assertIn(1, versions)
            self.assertTrue(srv.alive())

    def test_flood_of_bogus_initials_holds_nothing(self):
        """3,000 datagrams that look like QUIC v1 Initials (a valid long
        header whose length covers the datagram's 1,200 bytes, a payload
        that does not decrypt), each with a new connection ID: none keeps a
        connection, the server's RSS stays where it was,
        and a real client is served after them."""
        with ServeH3() as srv:
            base = srv.rss_kib()
            with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as u:
                for i in range(3000):
                    hdr = (bytes([0xc3]) + struct.pack("!I", 1) + bytes([8]) + os.urandom(8)
                           + bytes([8]) + os.urandom(8) + b"\x00" + b"\x44\x96" + bytes(4))
                    u.sendto(hdr + os.urandom(1200 - len(hdr)), ("127.0.0.1", srv.port))
                    if i % 200 == 199:
                        time.sleep(0.01)  # within the socket's buffer
            time.sleep(0.5)
            grown = srv.rss_kib() - base
            run = self.run_h3(srv.https(), ["-n", 50, "--concurrency", 2])
            self.assertEqual(self.phase(run)["responses"]["by_status"], {"200": 50})
            got = served(srv)
        # each is a connection made and freed at once (an AddressSanitizer
        # build keeps freed memory a while: 8x the room)
        self.assertLess(grown, harness.rss_limit_kib(16), "RSS grew by %d KiB" % grown)
        self.assertEqual(got["requests"], 50, got)
        self.assert_connections(got, 2)

    def test_client_that_stops_reading_holds_bounded_memory(self):
        """Four connections x 100 streams of 1 MiB answers, then the client
        is stopped (SIGSTOP): it reads and acknowledges nothing more. The
        server's RSS stays bounded, another client is served meanwhile, and
        the stopped client's connections are closed at the plan's 2 s idle
        timeout (counted as timeouts)."""
        plan = ("name: h3-big\ntimeouts: {idle: 2s}\nroutes:\n"
                "  - path: /big\n    body_size: 1048576\n  - path: /\n")
        with ServeH3(text=plan) as srv:
            base = srv.rss_kib()
            hog = subprocess.Popen([harness.pacer_bin(), "run", srv.https("/big"), "--http3",
                                    "--insecure", "-n", "100000", "--concurrency", "4",
                                    "--max-streams", "100", "--duration", "30s", "-o",
                                    os.devnull], stdout=subprocess.DEVNULL,
                                   stderr=subprocess.DEVNULL)
            harness._register(hog)
            try:
                time.sleep(1.5)
                os.kill(hog.pid, signal.SIGSTOP)
                peak = base
                t_end = time.monotonic() + 4.0
                while time.monotonic() < t_end:
                    peak = max(peak, srv.rss_kib())
                    time.sleep(0.1)
                # another client is served beside it
                run = self.run_h3(srv.https("/"), ["-n", 200, "--concurrency", 2])
                m = self.phase(run)
                self.assertEqual(m["responses"]["by_status"], {"200": 200})
                peak = max(peak, srv.rss_kib())
            finally:
                os.kill(hog.pid, signal.SIGKILL)
                os.kill(hog.pid, signal.SIGCONT)
                hog.wait()
                harness._unregister(hog)
            got = served(srv)
        # generous: 400 streams with 1 MiB answers each would be 400 MiB if
        # they were copied; they are sent from the plan's bytes
        self.assertLess(peak - base, harness.rss_limit_kib(96),
                        "RSS grew from %d to %d KiB" % (base, peak))
        self.assertGreaterEqual(got["timeouts"], 1, got)
        print("\n  never-reading client: server RSS %d KiB before, %d KiB at most (%s)"
              % (base, peak, got))


class ServeHttp3BadOptionsTest(PacerTestCase):
    def serve(self, args):
        p = subprocess.run([harness.pacer_bin(), "serve", "--plan", "hello", "--listen",
                            "127.0.0.1:0"] + args, capture_output=True, text=True, timeout=20)
        return p

    def test_bad_options(self):
        cases = [
            (["--http3", "--h2c"], "--http3 is always encrypted"),
            (["--http3", "--tls-cert", "/nonexistent/cert.pem"], "/nonexistent/cert.pem"),
            (["--http3", "--max-streams", "0"], "--max-streams 0"),
        ]
        for args, want in cases:
            p = self.serve(args)
            self.assertEqual(p.returncode, 2, (args, p.stdout, p.stderr))
            lines = p.stderr.strip().splitlines()
            self.assertEqual(len(lines), 1, (args, p.stderr))
            self.assertIn(want, lines[0], args)
            self.assertTrue(lines[0].startswith("pacer serve: "), lines[0])
            self.assertEqual(p.stdout, "", args)
