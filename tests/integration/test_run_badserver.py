"""pacer run against tests/tools/badserver: each misbehaviour is counted as
its error kind, the run goes on and ends normally (exit 0), and pacer's
memory stays bounded."""

import unittest

import harness
from harness import BadServer, PacerTestCase


class BadServerRunTest(PacerTestCase):
    def run_mode(self, mode, extra=(), delay_ms=None):
        """An open-loop run (200/s for 1 s) against badserver in `mode`;
        returns (PacerRun, measure phase). The server must survive it."""
        with BadServer(mode, delay_ms=delay_ms) as bs:
            args = [bs.url("/"), "--rate", 200, "--duration", "1s"]
            args += list(extra) or ["--timeout", "2s", "--drain", "1s"]
            run = self.run_ok(args, timeout=30.0)
            alive = bs.proc.poll() is None
        self.assertTrue(alive, "badserver died during the run")
        self.assertEqual(bs.returncode, 0, "badserver exit status")
        m = self.phase(run)
        self.assert_accounted(m, run)
        self.assertGreater(m["requests"]["sent"], 0, harness.describe(run))
        return run, m

    def assert_only_error(self, m, kind, run):
        e = m["transport_errors"]
        self.assertGreater(e[kind], 0, "%s: errors %s\n%s" % (kind, e, harness.describe(run)))
        self.assertEqual(e["total"], e[kind], "errors other than %s: %s" % (kind, e))
        self.assertEqual(m["requests"]["completed"], 0, m["requests"])
        # every request but those still in flight at the end failed this way
        self.assertEqual(e[kind], m["requests"]["sent"] - m["requests"]["in_flight_at_end"], m["requests"])

    def assert_rss_bounded(self, run):
        self.assertLess(run.maxrss_kib, harness.rss_limit_kib(64),
                        "pacer max RSS %d KiB" % run.maxrss_kib)

    def test_ok_baseline(self):
        run, m = self.run_mode("ok")
        self.assertEqual(m["requests"]["completed"], m["requests"]["sent"])
        self.assert_no_errors(m, run)

    def test_stall_is_timeout(self):
        run, m = self.run_mode("stall", extra=["--timeout", "300ms"])
        self.assert_only_error(m, "timeout", run)
        # a timed-out request keeps its latency (the time waited, >= timeout)
        self.assertGreaterEqual(m["latency"]["count"], m["transport_errors"]["timeout"])
        self.assertGreaterEqual(m["latency"]["max_us"], 300000)

    def test_close_before_is_closed(self):
        run, m = self.run_mode("close-before")
        self.assert_only_error(m, "closed", run)

    def test_close_mid_is_read(self):
        run, m = self.run_mode("close-mid")
        self.assert_only_error(m, "read", run)

    def test_garbage_is_parse(self):
        run, m = self.run_mode("garbage")
        self.assert_only_error(m, "parse", run)
        self.assert_rss_bounded(run)

    def test_huge_headers_is_parse(self):
        run, m = self.run_mode("huge-headers")
        self.assert_only_error(m, "parse", run)
        self.assert_rss_bounded(run)

    def test_every_other_close_continues(self):
        run, m = self.run_mode("every-other-close")
        self.assertGreater(m["requests"]["completed"], 0, m["requests"])
        self.assertGreater(m["transport_errors"]["closed"], 0, m["errors"])
        self.assertEqual(m["errors"]["total"], m["transport_errors"]["closed"], m["errors"])
        self.assertEqual(m["responses"]["by_status"].get("200"), m["requests"]["completed"])

    def test_stray_response_in_the_same_write(self):
        """A 200 and then, in the same write, a 201 nobody asked for: two
        responses to one request, and which one answered it cannot be told
        (HTTP/1.1 has no request ids, and a server that speaks unasked may
        have sent the first unasked: see the next test). Neither is
        credited: the request is a parse error and pacer closes the
        connection (closed_stray, not closed_by_server)."""
        run, m = self.run_mode("double", extra=["--timeout", "2s", "--drain", "1s", "-c", 1])
        c = m["connections"]
        self.assertEqual(m["responses"]["by_status"], {}, harness.describe(run))
        self.assert_only_error(m, "parse", run)
        self.assertEqual(c["closed_stray"], m["transport_errors"]["parse"], c)
        self.assertEqual(c["closed_by_server"], 0, c)

    def test_stray_response_before_any_request(self):
        """A 299 nobody asked for as soon as a connection is accepted, then
        the 200 to each request. Before, the 299 was credited to 100 of 100
        requests (the 200 then came as a stray and only closed the
        connection). A connection's first response waits 1 ms before it is
        credited, and the 200 that follows it unasked shows the connection
        cannot be trusted: the request is a parse error, open or closed
        loop. (A server slower than that with its real answer could still
        have its early response credited: at most a few here.)"""
        for args in (["--rate", 100, "--duration", "1s", "-c", 1, "--timeout", "2s",
                      "--drain", "1s"],
                     ["--requests", 100, "--concurrency", 2, "--timeout", "2s"]):
            with self.subTest(loop="open" if "--rate" in args else "closed"):
                with BadServer("early") as bs:
                    run = self.run_ok([bs.url("/")] + args, timeout=30.0)
                m = self.phase(run)
                self.assert_accounted(m, run)
                r, c, e = m["requests"], m["connections"], m["transport_errors"]
                self.assertEqual(r["sent"], 100, r)
                taken = m["responses"]["by_status"].get("299", 0)
                self.assertLessEqual(taken, 5, harness.describe(run))
                self.assertEqual(r["completed"], taken, r)  # the 200s are never the answer
                self.assertEqual(e["parse"], r["sent"] - taken, e)
                self.assertGreaterEqual(c["closed_stray"], e["parse"], c)

    def test_stray_response_later(self):
        """The 201 comes 2 ms after the 200, on one connection at 200/s (a
        request every 5 ms): it reaches an idle connection, or one whose next
        request it predates (the kernel's receive stamp says so), and is not
        taken as a response. Only when a late send puts the next request
        within 2 ms of the last (a busy machine) can the 201 come after it
        and be taken for its answer (HTTP/1.1 has no request ids); that
        request's own 200 is then the stray one and closes the connection,
        so such cases are at most one per closed_stray and rare."""
        run, m = self.run_mode("double-late", delay_ms=2,
                               extra=["--timeout", "2s", "--drain", "1s", "-c", 1])
        c = m["connections"]
        taken = m["responses"]["by_status"].get("201", 0)
        self.assertGreater(c["closed_stray"], 0, c)
        self.assertLessEqual(taken, c["closed_stray"], harness.describe(run))
        self.assertLessEqual(taken, m["requests"]["completed"] // 20, harness.describe(run))
        self.assertEqual(c["closed_by_server"], 0, c)

    def test_slow_latency_includes_delay(self):
        run, m = self.run_mode("slow", delay_ms=50)
        self.assertEqual(m["requests"]["completed"], m["requests"]["sent"], m["requests"])
        self.assert_no_errors(m, run)
        # the server answers no sooner than 50 ms after reading a request
        self.assertGreaterEqual(m["latency"]["min_us"], 50000, m["latency"])
        self.assertGreaterEqual(m["service_time"]["min_us"], 50000, m["service_time"])

    def closed_run(self, mode, n=200):
        with BadServer(mode) as bs:
            run = self.run_ok([bs.url("/"), "--requests", n, "--concurrency", 2, "--timeout", "2s"],
                              timeout=30.0)
        self.assertEqual(bs.returncode, 0)
        m = self.phase(run)
        self.assertEqual(m["requests"]["sent"], n, m["requests"])
        self.assertEqual(m["requests"]["completed"], n, m["requests"])
        self.assert_no_errors(m, run)
        self.assertEqual(m["responses"]["by_status"].get("200"), n, m["responses"])
        return run, m

    def test_chunked_with_extension_and_trailer(self):
        run, m = self.closed_run("chunked")
        self.assertEqual(m["connections"]["opened"], 2, m["connections"])

    def test_close_delimited(self):
        run, m = self.closed_run("close-delimited")
        self.assertEqual(m["connections"]["opened"], 200, m["connections"])

    def test_interim_100_continue(self):
        run, m = self.closed_run("interim")
        self.assertEqual(m["responses"]["by_class"]["2xx"], 200, m["responses"])
        self.assertEqual(m["connections"]["opened"], 2, m["connections"])


if __name__ == "__main__":
    unittest.main()
