"""HTTP/3 (--http3) against hostile QUIC servers (tests/tools/h3hostile.c,
one mode each, over loopback): Version Negotiation (only unknown versions;
and one naming v1, which the client must ignore), a server that answers
nothing or garbage, a stateless reset, a malformed QUIC frame, an endless
HEADERS frame, a flood of NEW_CONNECTION_ID, MAX_STREAMS 0, a QPACK
encoder stream without end and one that asks for a table larger than the
client allows. For each: the error counted as its kind with a reason that
names it, the run ends on its own within its --duration and --timeout, its
memory stays bounded, and every request is accounted for (scheduled = sent
+ queued + dropped, sent = completed + request errors + in flight)."""

import os
import re
import subprocess
import unittest

import harness
from harness import PacerTestCase, describe

RSS_MIB = 48  # pacer stays near 15-20 MiB on these runs
STATS = re.compile(r"stats ((?:\w+=\d+ ?)+)")


def h3hostile_bin():
    return os.path.join(harness.build_dir(), "tests", "tools", "h3hostile")


class H3Hostile:
    """tests/tools/h3hostile MODE on an ephemeral loopback UDP port; stop()
    (SIGTERM, by PID) reads its counters."""

    def __init__(self, mode):
        self.mode = mode
        self.proc = subprocess.Popen([h3hostile_bin(), mode], stdin=subprocess.DEVNULL,
                                     stdout=subprocess.PIPE)
        harness._register(self.proc)
        self.stats = {}
        try:
            line = harness.read_first_line(self.proc, 10.0, "h3hostile", "port line")
            m = re.fullmatch(r"port (\d+)\n", line)
            if not m:
                raise RuntimeError("h3hostile printed %r, not 'port N'" % line)
            self.port = int(m.group(1))
        except Exception:
            self.stop()
            raise

    def url(self):
        return "https://127.0.0.1:%d/" % self.port

    def stop(self):
        if self.proc is None:
            return
        harness.stop_process(self.proc)
        out = self.proc.stdout.read().decode(errors="replace")
        self.proc.stdout.close()
        self.proc = None
        m = STATS.search(out)
        if m:
            self.stats = {k: int(v) for k, v in (kv.split("=") for kv in m.group(1).split())}


class HostileHttp3Test(PacerTestCase):
    def hostile(self, mode, args=(), duration_s=2.0, timeout_s=1.0, rate=50, connections=4):
        """pacer --http3 at `rate` for `duration_s` against an H3Hostile(mode):
        it must end on its own within its duration and timeouts (the check
        of the target before the run, the drain), in bounded memory, with
        every request accounted for. The server's counters, the run and its
        measured phase."""
        srv = H3Hostile(mode)
        try:
            run = harness.run_pacer(
                [srv.url(), "--http3", "--insecure", "--timeout", "%gs" % timeout_s, "--rate",
                 rate, "--duration", "%gs" % duration_s, "--warmup", 0, "--connections",
                 connections] + [str(a) for a in args], timeout=40.0)
        finally:
            srv.stop()
        self.assertFalse(run.timed_out, describe(run))
        self.assertIn(run.code, (0, 4), describe(run))
        self.assertIsNotNone(run.json, describe(run))
        # the probe (--timeout) + duration + drain (--timeout) + start-up
        self.assertLess(run.elapsed_s, duration_s + 2 * timeout_s + 3.0, describe(run))
        self.assertLess(run.maxrss_kib, harness.rss_limit_kib(RSS_MIB), describe(run))
        m = self.phase(run)
        self.assert_accounted(m, run)
        r = m["requests"]
        self.assertEqual(r["scheduled"], r["sent"] + r["queued_at_end"] + r["dropped"], r)
        self.assertEqual(r["scheduled"], int(rate * duration_s), r)
        return srv, run, m

    def reasons(self, m):
        return " | ".join(m["tls"]["failure_reasons"])

    # ---- a well-behaved server first: the tool itself works

    def test_baseline_every_request_answered(self):
        srv, run, m = self.hostile("ok")
        r = m["requests"]
        self.assertEqual(r["completed"], r["sent"], r)
        self.assertEqual(r["sent"], 100, r)
        self.assert_no_errors(m, run)
        self.assertEqual(srv.stats["answered"], 100, srv.stats)

    # ---- no handshake

    def test_version_negotiation_with_only_unknown_versions(self):
        # every Initial answered by a Version Negotiation packet naming
        # versions pacer does not speak: each attempt fails at once, counted
        # as the protocol's failure with its reason, and backed off (a dozen
        # attempts, not a loop)
        srv, run, m = self.hostile("vn_unknown")
        r, e, q = m["requests"], m["transport_errors"], m["quic"]
        self.assertEqual(r["sent"], 0, r)
        self.assertGreaterEqual(e["protocol"], 1, e)
        self.assertEqual(q["closes"]["version_negotiation"], e["protocol"], q)
        self.assertIn("does not speak QUIC v1 (version negotiation)", self.reasons(m))
        self.assertEqual(m["connections"]["opened"], 0, m["connections"])
        self.assertLess(srv.stats["vn"], 40, srv.stats)
        self.assertIn("failed as HTTP/3", run.stdout)
        self.assertNotIn("failed as HTTP/2", run.stdout)

    def test_version_negotiation_naming_v1_is_ignored(self):
        # RFC 9000 6.2: a Version Negotiation packet that lists the version
        # the client chose is ignored; the handshake then times out, counted
        # as a TLS failure (the server answered), not a version negotiation
        srv, run, m = self.hostile("vn_own")
        r, e, q = m["requests"], m["transport_errors"], m["quic"]
        self.assertGreaterEqual(srv.stats["vn"], 1, srv.stats)
        self.assertEqual(q["closes"]["version_negotiation"], 0, q)
        self.assertEqual(e["protocol"], 0, e)
        self.assertGreaterEqual(e["tls"], 1, e)
        self.assertIn("did not complete within --timeout (the server answered", self.reasons(m))
        self.assertEqual(r["sent"], 0, r)

    def test_server_that_answers_nothing(self):
        srv, run, m = self.hostile("silent")
        r, e = m["requests"], m["transport_errors"]
        self.assertGreaterEqual(srv.stats["datagrams"], 1, srv.stats)
        self.assertEqual(r["sent"], 0, r)
        self.assertGreaterEqual(e["connect"], 1, e)
        self.assertEqual(e["tls"] + e["protocol"], 0, e)
        self.assertEqual(m["quic"]["packets_received"], 0, m["quic"])

    def test_server_that_answers_garbage(self):
        # garbage is received and dropped; the handshake times out, always
        # counted the same way whichever deadline fires first (ngtcp2's or
        # pacer's: before, some counted as connect timeouts, some as TLS)
        srv, run, m = self.hostile("garbage")
        r, e = m["requests"], m["transport_errors"]
        self.assertEqual(r["sent"], 0, r)
        self.assertGreater(m["quic"]["packets_received"], 0, m["quic"])
        self.assertGreaterEqual(e["tls"], 1, e)
        self.assertEqual(e["connect"] + e["protocol"], 0, e)
        self.assertIn("did not complete within --timeout (the server answered", self.reasons(m))

    # ---- after the handshake

    def test_stateless_reset(self):
        # the server answers each connection's first request with a
        # stateless reset carrying the token it advertised
        srv, run, m = self.hostile("reset")
        r, e, q = m["requests"], m["transport_errors"], m["quic"]
        self.assertGreaterEqual(srv.stats["resets"], 1, srv.stats)
        self.assertGreaterEqual(q["closes"]["stateless_reset"], 1, q)
        self.assertLessEqual(q["closes"]["stateless_reset"], srv.stats["resets"], q)
        self.assertEqual(e["protocol"], q["closes"]["stateless_reset"], e)
        self.assertIn("HTTP/3: the server reset the QUIC connection (stateless reset)",
                      self.reasons(m))
        self.assertEqual(r["completed"], 0, r)
        # the requests on a reset connection end as closed, none lost
        self.assertEqual(e["closed"], r["sent"], e)
        # the summary names the protocol that failed (it said HTTP/2)
        self.assertIn("failed as HTTP/3", run.stdout)
        self.assertNotIn("HTTP/2", run.stdout)

    def test_malformed_quic_frame(self):
        # a 1-RTT packet holding a frame of no known type: pacer closes the
        # connection with FRAME_ENCODING_ERROR and says so
        srv, run, m = self.hostile("bad_frame")
        e, q = m["transport_errors"], m["quic"]
        self.assertGreaterEqual(srv.stats["tampered"], 1, srv.stats)
        self.assertGreaterEqual(e["protocol"], 1, e)
        self.assertGreaterEqual(q["closes"]["by_pacer"], 1, q)
        self.assertIn("the server broke QUIC: FRAME_ENCODING_ERROR", self.reasons(m))

    def test_headers_frame_without_end(self):
        # a HEADERS frame that says it is 4 GiB long, its field lines
        # coming without end: each response is cut at pacer's header limit,
        # counted as malformed, its stream cancelled; the connection stays
        srv, run, m = self.hostile("huge_frame")
        r, e = m["requests"], m["transport_errors"]
        self.assertEqual(r["completed"], 0, r)
        self.assertGreaterEqual(e["parse"], 1, e)
        self.assertEqual(e["protocol"], 0, e)
        # cancelling a stream keeps its connection: not one per request
        self.assertLess(m["connections"]["opened"], r["sent"], m["connections"])

    def test_new_connection_id_flood(self):
        # NEW_CONNECTION_ID frames beyond the active_connection_id_limit
        # pacer gave: the connection is closed with CONNECTION_ID_LIMIT_ERROR
        srv, run, m = self.hostile("ncid_flood")
        e = m["transport_errors"]
        self.assertGreaterEqual(srv.stats["tampered"], 1, srv.stats)
        self.assertGreaterEqual(e["protocol"], 1, e)
        self.assertIn("the server broke QUIC: CONNECTION_ID_LIMIT_ERROR", self.reasons(m))
        self.assertEqual(m["requests"]["completed"], 0, m["requests"])

    def test_max_streams_zero(self):
        # initial_max_streams_bidi 0, never raised: no request can be sent;
        # they wait in pacer's backlog (counted as queued or dropped, not
        # as errors), the wait for credit is counted, and the run ends on time
        srv, run, m = self.hostile("no_streams")
        r, h = m["requests"], m["http3"]
        self.assertEqual(r["sent"], 0, r)
        self.assertEqual(srv.stats["requests"], 0, srv.stats)
        self.assertEqual(r["queued_at_end"] + r["dropped"], r["scheduled"], r)
        self.assertGreaterEqual(h["stream_credit_waits"], 1, h)
        self.assertGreaterEqual(h["connections_h3"], 1, h)
        self.assertEqual(m["transport_errors"]["total"], 0, m["transport_errors"])
        # a closed loop bounded by a count only: it ends too (nothing can be
        # sent, nothing is in flight), its requests still queued
        srv = H3Hostile("no_streams")
        try:
            run = harness.run_pacer([srv.url(), "--http3", "--insecure", "--timeout", "1s",
                                     "-n", 10, "--concurrency", 2], timeout=30.0)
        finally:
            srv.stop()
        self.assertFalse(run.timed_out, describe(run))
        self.assertLess(run.elapsed_s, 10.0, describe(run))
        r = self.phase(run)["requests"]
        self.assertEqual((r["sent"], r["queued_at_end"]), (0, 10), r)

    def test_qpack_encoder_stream_without_end(self):
        # inserts into the dynamic table without end, each within the
        # client's 4 KiB table (evicting older entries): megabytes of
        # encoder instructions read in bounded memory, every response served
        srv, run, m = self.hostile("qpack_flood")
        r = m["requests"]
        self.assertGreater(srv.stats["encoder_bytes"], 1 << 20, srv.stats)
        self.assertEqual(r["completed"], r["sent"], r)
        self.assertEqual(r["sent"], 100, r)
        self.assert_no_errors(m, run)

    def test_qpack_table_larger_than_the_client_allows(self):
        srv, run, m = self.hostile("qpack_overflow")
        e = m["transport_errors"]
        self.assertGreaterEqual(e["protocol"], 1, e)
        self.assertIn("HTTP/3: the server broke HTTP/3: QPACK_ENCODER_STREAM_ERROR",
                      self.reasons(m))
        # each connection fails once it reads the instruction (responses
        # that came before it were complete, and count)
        self.assertLess(m["requests"]["completed"], m["requests"]["sent"], m["requests"])

    def test_goaway_at_once(self):
        # SETTINGS and GOAWAY 0 right after the handshake; the requests
        # pacer sent before reading it are rejected (H3_REQUEST_REJECTED).
        # Each such connection is counted once as failed and backed off like
        # a failed connect; the requests the server never processed wait in
        # the backlog, not counted as errors. Before: 109 connections in
        # 2 s, the host's 1,024 retries spent and the requests then counted
        # as resets
        srv, run, m = self.hostile("goaway_at_once")
        r, e, h = m["requests"], m["transport_errors"], m["http3"]
        self.assertEqual(srv.stats["answered"], 0, srv.stats)
        self.assertEqual(r["completed"], 0, r)
        self.assertEqual(e["requests"], 0, e)
        self.assertGreaterEqual(e["protocol"], 1, e)
        self.assertIn("HTTP/3: the server sent GOAWAY before it answered any request",
                      self.reasons(m))
        self.assertEqual(r["queued_at_end"] + r["dropped"], r["scheduled"], r)
        self.assertGreater(h["retried"], 0, h)
        self.assertLess(h["retried"], 1024, h)
        # backoff doubling from 10 ms: a dozen or two connections, not 100
        self.assertLess(m["connections"]["opened"], 40, m["connections"])

    # ---- bad options

    def test_header_over_the_limit_is_one_clear_error(self):
        # over HTTP/3 (and HTTP/2) a request is header fields; one over
        # 16 KiB was a bare "Invalid argument" from the engine
        run = harness.run_pacer(["https://127.0.0.1:9/", "--http3", "--insecure", "--rate", 10,
                                 "--duration", "1s", "-H", "X-Big: " + "a" * 17000])
        self.assertEqual(run.code, 2, describe(run))
        err = run.stderr.strip()
        self.assertEqual(len(err.splitlines()), 1, err)
        self.assertIn("--http3", err)
        self.assertIn("16 KiB", err)
        self.assertIn("X-Big", err)
        self.assertNotIn("Invalid argument", err)


if __name__ == "__main__":
    unittest.main()
