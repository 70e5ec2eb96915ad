"""HTTP/2 (--h2c) against hostile peers (h2hostile.HostileH2, raw frames
over loopback): GOAWAY storms, RST_STREAM floods, an HPACK bomb, endless
CONTINUATION frames, a body that never ends, a zero window, a server that allows no streams, one
that never sends SETTINGS, sends garbage or answers in HTTP/1.1. For each:
the errors counted as their kind, the run ends on its own within its
--duration and --timeout, its memory stays bounded, and every request is
accounted for (scheduled = sent + queued + dropped, sent = completed +
request errors + in flight at the end)."""

import unittest

import harness
from h2hostile import HostileH2, RST_CODES
from harness import PacerTestCase

RST_NAMES = {1: "PROTOCOL_ERROR", 2: "INTERNAL_ERROR", 7: "REFUSED_STREAM", 8: "CANCEL",
             0xB: "ENHANCE_YOUR_CALM", 0x1234: "OTHER"}
RSS_MIB = 32  # pacer stays near 10 MiB on these runs; the bomb decodes ~48 MB a response


class HostileHttp2Test(PacerTestCase):
    def hostile(self, mode, args, duration_s=0.0, timeout_s=1.0, limited_ok=True):
        """pacer --h2c against a HostileH2(mode): it must end on its own
        within its duration and timeouts (the drain, and the check of the
        target before the run), in bounded memory, with every request
        accounted for. The server (for its counters), the run and its
        measured phase. limited_ok False: pacer must not blame itself (exit
        0, not 4)."""
        srv = HostileH2(mode)
        try:
            run = harness.run_pacer([srv.url(), "--h2c", "--timeout", "%gs" % timeout_s] +
                                    [str(a) for a in args], timeout=30.0, limited_ok=limited_ok)
        finally:
            srv.stop()
        self.assertFalse(run.timed_out, harness.describe(run))
        self.assertIn(run.code, (0, 4) if limited_ok else (0,), harness.describe(run))
        self.assertIsNotNone(run.json, harness.describe(run))
        # duration + drain (--timeout) + the probe (--timeout) + process start-up
        self.assertLess(run.elapsed_s, duration_s + 2 * timeout_s + 2.0, harness.describe(run))
        self.assertLess(run.maxrss_kib, harness.rss_limit_kib(RSS_MIB), harness.describe(run))
        m = self.phase(run)
        self.assert_accounted(m, run)
        r = m["requests"]
        self.assertEqual(r["scheduled"], r["sent"] + r["queued_at_end"] + r["dropped"], r)
        self.assertNotIn("warmup", run.json, "the tests run without a warm-up")
        return srv, run, m

    # ---- GOAWAY storms

    def test_goaway_after_every_response_loses_nothing(self):
        srv, run, m = self.hostile("goaway_each", ["--requests", 200, "--concurrency", 2,
                                                   "--max-streams", 4])
        r, h = m["requests"], m["http2"]
        self.assertEqual((r["sent"], r["completed"]), (200, 200), r)
        self.assert_no_errors(m, run)
        self.assertEqual(srv.answered, 200)
        # one response a connection; the streams sent behind it were retried
        self.assertGreaterEqual(h["connections_h2"], 200, h)
        self.assertGreater(h["retried"], 0, h)
        self.assertEqual(h["refused"], 0, h)
        self.assertIn(h["goaway"], (199, 200), h)  # the last may come after the end
        self.assertEqual(m["latency"]["count"], 200)

    def test_goaway_with_shrinking_last_stream_id(self):
        srv, run, m = self.hostile("goaway_shrink", ["--requests", 200, "--concurrency", 2,
                                                     "--max-streams", 4])
        r, h = m["requests"], m["http2"]
        self.assertEqual((r["sent"], r["completed"]), (200, 200), r)
        self.assert_no_errors(m, run)
        self.assertEqual(srv.answered, 200)
        # three GOAWAYs on most connections, every one of them read
        self.assertGreater(h["goaway"], 2 * 200 - 2 * 8, h)
        self.assertLessEqual(h["goaway"], srv.goaway_sent, h)
        self.assertGreater(h["retried"], 0, h)

    def test_goaway_before_any_stream_is_processed(self):
        # every stream refused by GOAWAY(last 0): retried up to the host's
        # budget, then errors, so the run ends
        srv, run, m = self.hostile("goaway_first", ["--requests", 50, "--concurrency", 2,
                                                    "--max-streams", 4])
        r, e, h = m["requests"], m["transport_errors"], m["http2"]
        self.assertEqual((r["sent"], r["completed"]), (50, 0), r)
        self.assertEqual(e["reset"], 50, e)
        self.assertEqual(h["retried"], 1024, h)
        self.assertEqual(srv.answered, 0)
        # every connection carried requests: no reconnecting for nothing
        self.assertLessEqual(m["connections"]["opened"], h["retried"] + r["sent"], m)

    def test_goaway_or_close_before_any_request_is_a_failed_connect(self):
        # SETTINGS and GOAWAY before pacer put a request on the connection:
        # counted as a failed connection and backed off, not reconnected to
        # without end (before: ~2,000 connections a second, and a
        # count-bounded run that never ended). SETTINGS and a close: the same
        # when the close is read first, else the requests sent fail as closed;
        # either way no connection is opened for nothing.
        for mode in ("goaway_at_once", "close_at_once"):
            for loop, args, dur, tmo in (
                    ("closed", ["--requests", 50, "--concurrency", 2, "--max-streams", 4], 0, 1),
                    ("open", ["--rate", 200, "--duration", "1s", "--warmup", 0,
                              "--connections", 2], 1.0, 0.5)):
                with self.subTest(mode=mode, loop=loop):
                    srv, run, m = self.hostile(mode, args, dur, tmo)
                    r, e, c = m["requests"], m["transport_errors"], m["connections"]
                    self.assertEqual(r["completed"], 0, r)
                    self.assertEqual(e["requests"], e["closed"], e)
                    self.assertGreaterEqual(e["protocol"] + e["closed"], 1, e)
                    # each connection took a request or counted as a failure
                    # (the last one or two may be opening as the run ends)
                    self.assertLessEqual(c["opened"], r["sent"] + e["protocol"] + 2, (c, r, e))
                    if mode == "close_at_once":
                        continue
                    self.assertEqual(r["sent"], 0, r)
                    self.assertGreaterEqual(e["protocol"], 1, e)
                    # backoff doubling from 10 ms: a dozen attempts, not thousands
                    self.assertLess(c["opened"], 40, c)
                    self.assertLess(srv.conns, 45)
                    self.assertTrue(any("before it took a request" in x
                                        for x in m["tls"]["failure_reasons"]), m["tls"])

    # ---- RST_STREAM flood

    def test_rst_stream_flood_counts_every_code(self):
        srv, run, m = self.hostile("rst", ["--requests", 300, "--concurrency", 2,
                                           "--max-streams", 4])
        r, e, h = m["requests"], m["transport_errors"], m["http2"]
        self.assertEqual((r["sent"], r["completed"]), (300, 0), r)
        self.assertEqual(e["reset"], 300, e)  # each request ends once, as reset
        self.assertEqual(e["requests"], 300, e)
        want = {}
        for code, n in srv.rst_sent.items():
            want[RST_NAMES[code]] = want.get(RST_NAMES[code], 0) + n
        self.assertEqual(h["resets"], want, h)
        self.assertEqual(set(want), set(RST_NAMES[c] for c in RST_CODES))
        # REFUSED_STREAM: not processed, retried (under the host's budget)
        self.assertEqual(h["refused"], srv.rst_sent[7], h)
        self.assertEqual(h["retried"], srv.rst_sent[7], h)
        self.assertEqual(srv.headers, 300 + h["retried"])
        # resets end streams, not connections
        self.assertEqual(m["connections"]["opened"], 2, m["connections"])

    # ---- a body that is not its content-length

    def test_body_not_its_content_length_is_an_error(self):
        # content-length: 100 and 10 bytes of DATA, then RST_STREAM(NO_ERROR)
        # (before: 20 of 20 completed, 0 errors) or END_STREAM; or 100 bytes
        # for a content-length of 10. A reset before END_STREAM is `reset`
        # whatever its code, a DATA total that is not the content-length
        # `parse` (RFC 9113 8.1.1); the connection stays for the next streams
        for mode, kind in (("truncated_rst", "reset"), ("truncated_end", "parse"),
                           ("long_end", "parse")):
            with self.subTest(mode=mode):
                srv, run, m = self.hostile(mode, ["--requests", 20, "--concurrency", 2,
                                                  "--max-streams", 4])
                r, e = m["requests"], m["transport_errors"]
                self.assertEqual((r["sent"], r["completed"]), (20, 0), r)
                self.assertEqual(e[kind], 20, e)
                self.assertEqual(e["requests"], 20, e)
                self.assertEqual(m["errors"]["total"], 20, m["errors"])
                self.assertEqual(m["responses"]["by_status"], {}, m["responses"])
                self.assertEqual(srv.answered, 20)
                self.assertEqual(m["connections"]["opened"], 2, m["connections"])
                self.assertEqual(m["http2"]["resets"],
                                 {"NO_ERROR": 20} if mode == "truncated_rst" else {}, m["http2"])

    # ---- huge header blocks

    def test_hpack_bomb_is_a_parse_error_per_stream(self):
        # one table entry of 4000 bytes referenced 12,000 times a response
        srv, run, m = self.hostile("hpack_bomb", ["--requests", 200, "--concurrency", 2,
                                                  "--max-streams", 4])
        r, e = m["requests"], m["transport_errors"]
        self.assertEqual((r["sent"], r["completed"]), (200, 0), r)
        self.assertEqual(e["parse"], 200, e)
        self.assertEqual(e["requests"], 200, e)
        self.assertEqual(srv.answered, 200)
        # the stream is reset, the connection stays
        self.assertEqual(m["connections"]["opened"], 2, m["connections"])
        self.assertEqual(e["protocol"], 0, e)

    def test_continuation_without_end_fails_the_connection(self):
        srv, run, m = self.hostile("continuation", ["--requests", 50, "--concurrency", 2,
                                                    "--max-streams", 4])
        r, e = m["requests"], m["transport_errors"]
        self.assertEqual((r["sent"], r["completed"]), (50, 0), r)
        # nghttp2 ends the session after a few CONTINUATIONs: a protocol error
        # per connection; the stream being answered was reading, the others
        # had nothing yet
        self.assertGreaterEqual(e["protocol"], 1, e)
        # (the last connection or two may be opened as the run ends)
        self.assertLessEqual(e["protocol"], m["connections"]["opened"], e)
        self.assertGreaterEqual(e["protocol"], m["connections"]["opened"] - 2, e)
        self.assertGreaterEqual(e["read"], 1, e)
        self.assertEqual(e["read"] + e["closed"], 50, e)

    # ---- flow control

    def test_endless_body_times_out_in_bounded_memory(self):
        # a body that never ends (tens of MB, past the reset): the stream
        # times out and is reset, the connection stays, nothing is kept
        srv, run, m = self.hostile("endless_data", ["--requests", 4, "--concurrency", 1,
                                                    "--max-streams", 2, "--h2-window", "1MiB"],
                                   0.0, 0.5)
        r, e = m["requests"], m["transport_errors"]
        self.assertEqual((r["sent"], r["completed"]), (4, 0), r)
        self.assertGreaterEqual(e["timeout"], 2, e)  # the two streams of the first turn
        self.assertEqual(e["timeout"] + r["in_flight_at_end"], 4, (r, e))
        self.assertEqual(e["requests"], e["timeout"], e)
        # read on, returning the window: many windows' worth came in
        self.assertGreater(m["bytes"]["in"], 4 << 20, m["bytes"])
        self.assertLessEqual(m["bytes"]["in"], srv.data_sent + 65536, m["bytes"])
        self.assertEqual(m["connections"]["opened"], 1, m["connections"])

    def test_zero_window_times_out_and_keeps_connections(self):
        body = "x" * 3000
        srv, run, m = self.hostile("zero_window", ["--requests", 24, "--concurrency", 2,
                                                   "--max-streams", 4, "--method", "POST",
                                                   "--body", body], 0.0, 0.3)
        r, e = m["requests"], m["transport_errors"]
        self.assertEqual((r["sent"], r["completed"]), (24, 0), r)
        # 8 in flight; each waits its --timeout (the last ones may still be in
        # flight when the drain, as long as --timeout, ends)
        self.assertEqual(e["timeout"] + r["in_flight_at_end"], 24, (r, e))
        self.assertGreaterEqual(e["timeout"], 16, e)
        self.assertEqual(e["requests"], e["timeout"], e)
        self.assertEqual(srv.headers, 24)
        # no body byte went out: only headers, SETTINGS and resets
        self.assertLess(m["bytes"]["out"], len(body), m["bytes"])
        self.assertEqual(m["connections"]["opened"], 2, m["connections"])

    def test_no_streams_allowed_waits_in_the_backlog(self):
        srv, run, m = self.hostile("no_streams", ["--requests", 20, "--concurrency", 2], 0.0, 0.3)
        r = m["requests"]
        self.assertEqual((r["sent"], r["completed"]), (0, 0), r)
        self.assertEqual(r["queued_at_end"] + r["dropped"], 20, r)
        self.assertEqual(srv.headers, 0)
        self.assertLessEqual(m["connections"]["opened"], 2, m["connections"])

    # ---- a server that breaks HTTP/2 on every connection

    def test_invalid_settings_fail_every_connection_with_their_reason(self):
        # SETTINGS_ENABLE_PUSH 2 (RFC 9113 6.5.2: 0 or 1 only): nghttp2 ends
        # each connection with GOAWAY PROTOCOL_ERROR. Before: no reason
        # recorded, open loop blamed the generator (loop lag against no
        # latency: exit 4) and spun its drain (a second of CPU)
        for loop, args, dur, tmo in (
                ("closed", ["--requests", 20, "--concurrency", 2], 0, 1),
                ("open", ["--rate", 100, "--duration", "1s", "--warmup", 0,
                          "--connections", 2, "--drain", "1s"], 1.0, 0.5)):
            with self.subTest(loop=loop):
                srv, run, m = self.hostile("bad_settings", args, dur, tmo, limited_ok=False)
                r, e = m["requests"], m["transport_errors"]
                self.assertEqual((r["sent"], r["completed"]), (0, 0), r)
                self.assertGreaterEqual(e["protocol"], 1, e)
                self.assertEqual(e["requests"], 0, e)
                self.assertEqual(m["http2"]["connections_h2"], 0, m["http2"])
                reasons = m["tls"]["failure_reasons"]
                self.assertTrue(any("GOAWAY PROTOCOL_ERROR" in x and "SETTINGS" in x
                                    for x in reasons), reasons)
                g = run.json["generator_limited"]
                self.assertFalse(g["flagged"], g)
                # the drain waits (for the backoff, the queue), it does not spin
                self.assertLess(run.json["generator"]["cpu_s"], 0.5, run.json["generator"])
                if loop == "open":
                    rate = {c["name"]: c for c in g["checks"]}["achieved_rate"]
                    self.assertEqual(rate["blame"], "target", rate)
                # the headline says that connections failed, and why; no error
                # rate of nothing sent (before: "a 0.00% error rate")
                head = harness.words(run.stdout.split("\n\n")[1])
                self.assertIn("connections failed as HTTP/2", head)
                self.assertIn("GOAWAY PROTOCOL_ERROR): SETTINGS", head)
                self.assertIn("no request was sent", head)
                self.assertNotIn("error rate", head)
                warns = run.json["warnings"]
                self.assertTrue(any("failed as HTTP/2" in x and "SETTINGS" in x for x in warns),
                                warns)
                # closed loop: dropped because no connection could be made,
                # not "backlog full"
                self.assertFalse(any("backlog full" in x for x in warns), warns)
                self.assertIn("failed as HTTP/2 (not counted as requests)", harness.words(run.stdout))

    # ---- servers that do not speak HTTP/2

    def test_servers_that_do_not_speak_http2(self):
        for mode, said in (("silent", "timed out"),
                           ("garbage", "not HTTP/2 SETTINGS"),
                           ("http1", "answered in HTTP/1.x")):
            with self.subTest(mode=mode, loop="open"):
                srv, run, m = self.hostile(mode, ["--rate", 50, "--duration", "1s", "--warmup",
                                                  0, "--connections", 2], 1.0, 0.3)
                r, e = m["requests"], m["transport_errors"]
                self.assertIn(said, run.stderr)
                self.assertEqual((r["sent"], r["completed"]), (0, 0), r)
                self.assertGreaterEqual(e["protocol"], 1, e)
                self.assertEqual(m["http2"]["connections_h2"], 0, m["http2"])
                self.assertLess(m["connections"]["opened"], 30, m["connections"])
            with self.subTest(mode=mode, loop="closed"):
                # bounded by --requests alone it could never end: refused at the start
                with HostileH2(mode) as srv:
                    run = harness.run_pacer([srv.url(), "--h2c", "--timeout", "300ms",
                                             "--requests", 20], timeout=10.0)
                self.assertFalse(run.timed_out, harness.describe(run))
                self.assertEqual(run.code, 2, harness.describe(run))
                self.assertIn(said, run.stderr)


if __name__ == "__main__":
    unittest.main()
