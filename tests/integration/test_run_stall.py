"""The coordinated-omission test: nginx is frozen (SIGSTOP) for 2 s in the
middle of an open-loop run. Latency, measured from each request's scheduled
time, must show the stall; service time must not hide it nor be hurt by it.

Expectation: at rate R over a measured phase of D s with a pause of P s,
R*P requests fall due during the pause; the one due x s after the pause began
waits about P - x. The top (1-q) fraction of all R*D requests are those due in
the first (1-q)*D s of the pause, so the q-quantile of latency is
P - (1-q)*D: with P = 2, D = 10 it is 1.0 s for p90 and 1.9 s for p99. The
pause actually achieved (signals are sent from Python) is measured and used.

The stall is the target's, and the generator self-checks must say so (issue
12): the run goes without --limited-ok and exits 0 with no generator
warning. Whatever lateness this machine gave the generator is immaterial
beside a p99 of seconds, and the requests that waited for connections waited
while every one was busy with a request nginx had not answered, pacer idle.
"""

import os
import signal
import socket
import time
import unittest

import harness
from harness import Nginx, PacerTestCase

RATE = 1000
WARMUP_S = 1.0
DURATION_S = 10.0
PAUSE_AT_S = WARMUP_S + 4.0  # after pacer's process start
PAUSE_S = 2.0


class StallTest(PacerTestCase):
    def test_stall_shows_in_latency_not_service_time(self):
        with Nginx() as ngx:
            mark = ngx.log_mark()
            pids = ngx.all_pids()
            self.assertEqual(len(pids), 2)
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
                run = harness.run_pacer(
                    [ngx.url("/hello"), "--rate", RATE, "--threads", 1, "--connections", 200,
                     "--warmup", "1s", "--duration", "10s"],
                    timeout=45.0, actions=[(PAUSE_AT_S, stop), (PAUSE_AT_S + PAUSE_S, cont)],
                    limited_ok=False)
            finally:
                for p in pids:
                    try:
                        os.kill(p, signal.SIGCONT)
                    except ProcessLookupError:
                        pass
            logged = ngx.count(mark, path="/hello")

        self.assertFalse(run.timed_out, harness.describe(run))
        self.assertEqual(run.code, 0, harness.describe(run))
        self.assertIsNotNone(run.json, harness.describe(run))
        self.assertIn("stop", times)
        self.assertIn("cont", times)
        pause = times["cont"] - times["stop"]
        m = run.json["measure"]
        w = run.json.get("warmup")
        self.assertIsNotNone(w, "no warmup phase in the result")
        r = m["requests"]

        # nothing lost, nothing timed out
        self.assertEqual(r["sent"], r["completed"], r)
        self.assertEqual(m["transport_errors"]["timeout"], 0, m["errors"])
        self.assert_no_errors(m, run)
        self.assertEqual(r["in_flight_at_end"], 0, r)
        self.assertLessEqual(abs(r["scheduled"] - RATE * DURATION_S), RATE * DURATION_S * 0.01, r)
        self.assertEqual(logged, w["requests"]["sent"] + r["sent"])

        series = run.json["series"]
        self.assertLessEqual(abs(len(series) - DURATION_S), 1, "series of %d entries" % len(series))
        # the second of the pause has no completions; the one after has the backlog
        self.assertIn(0, [s["completed"] for s in series])

        lat = m["latency"]
        p90_expect_us = (pause - 0.10 * DURATION_S) * 1e6
        p99_expect_us = (pause - 0.01 * DURATION_S) * 1e6
        msg = "pause %.3fs latency %s service_time p50 %s" % (
            pause, {k: lat[k] for k in ("p50_us", "p90_us", "p99_us", "max_us")}, m["service_time"]["p50_us"])
        self.assertAlmostEqual(lat["p90_us"], p90_expect_us, delta=0.10 * p90_expect_us, msg=msg)
        self.assertAlmostEqual(lat["p99_us"], p99_expect_us, delta=0.10 * p99_expect_us, msg=msg)
        self.assertGreaterEqual(lat["max_us"], 0.9 * pause * 1e6, msg)
        self.assertLess(m["service_time"]["p50_us"], 50000, msg)

        # the target's stall, not the generator's: no check fired, no
        # generator warning (the hypervisor's steal, when there was any, is
        # the host's); the lateness moved p99 by under 5 %, and the
        # wait for the 200 busy connections (from about 0.2 s into the pause,
        # when all were sending) was spent idle, waiting for nginx
        g = run.json["generator_limited"]
        checks = {c["name"]: c for c in g["checks"]}
        self.assertFalse(g["flagged"], g)
        self.assertEqual([w for w in run.json["warnings"]
                          if "generator" in w and not w.startswith("the hypervisor took")], [],
                         run.json["warnings"])
        lag = checks["loop_lag_p99"]
        self.assertTrue(lag["evaluated"], lag)
        self.assertLess(lag["impact_pct"], lag["material_pct"], lag)
        self.assertAlmostEqual(lag["latency_us"], lat["p99_us"], delta=1e-3 * lat["p99_us"])
        rate = checks["achieved_rate"]
        self.assertGreaterEqual(rate["value"], rate["threshold"], rate)
        self.assertGreater(rate["cap_wait_s"], 0.5 * pause, rate)
        self.assertGreater(rate["cap_wait_idle_s"], 0.5 * rate["cap_wait_s"], rate)


class InterruptAfterStallTest(PacerTestCase):
    def test_interrupt_during_a_stall_measures_until_the_interrupt(self):
        """nginx answers for about 1.5 s, then is frozen; SIGINT 2 s later.
        The measured phase ends at the interrupt, not at the last response:
        the achieved rate is the responses over that time (well under the
        offered 100/s), and the requests due during the stall are reported
        queued or in flight (issue 19 item 2; the old result said 100/s over
        1.5 s, as if the target were healthy), with their waits in the
        latency and their share beside the error rate (issue 32)."""
        with Nginx() as ngx:
            pids = ngx.all_pids()
            times = {}

            def stop(_pid):
                times["stop"] = time.monotonic()
                for p in pids:
                    os.kill(p, signal.SIGSTOP)

            def interrupt(pid):
                times["int"] = time.monotonic()
                os.kill(pid, signal.SIGINT)

            try:
                run = harness.run_pacer(
                    [ngx.url("/hello"), "--rate", 100, "--connections", 50, "--warmup", "0",
                     "--duration", "20s"],
                    timeout=20.0, actions=[(1.5, stop), (3.5, interrupt)])
            finally:
                for p in pids:
                    try:
                        os.kill(p, signal.SIGCONT)
                    except ProcessLookupError:
                        pass
        self.assertEqual(run.code, 130, harness.describe(run))
        m = run.json["measure"]
        r = m["requests"]
        dur = m["duration_s"]
        # from the measured start (after startup) to the interrupt: most of 3.5 s
        self.assertGreater(dur, times["int"] - times["stop"] + 0.5, m)
        self.assertLess(dur, 3.5 + 0.1, m)
        self.assertAlmostEqual(m["rate"]["achieved_per_s"], r["completed"] / dur, delta=0.5)
        self.assertLess(m["rate"]["achieved_per_s"], 80, m)
        unanswered = r["queued_at_end"] + r["in_flight_at_end"]
        # about 2 s of requests at 100/s fell due while nginx was frozen
        self.assertGreater(unanswered, 150, r)
        self.assertEqual(r["scheduled"], r["completed"] + unanswered + r["dropped"]
                         + m["transport_errors"]["timeout"], r)
        # the unanswered are outcomes, not omissions (issue 32: the headline
        # said p99 10.9 ms while 74 % had no answer): each is in the latency
        # at its wait until the interrupt, a lower bound, with the failures
        timeouts = m["transport_errors"]["timeout"]
        lat, failed = m["latency"], m["latency_failed"]
        self.assertEqual(lat["count"], r["completed"] + unanswered + timeouts, (lat, r))
        self.assertEqual(failed["count"], unanswered + timeouts, failed)
        self.assertEqual(m["latency_ok"]["count"] + failed["count"], lat["count"])
        stalled_s = times["int"] - times["stop"]
        self.assertGreater(lat["p99_us"], 0.7 * stalled_s * 1e6, lat)
        self.assertLess(lat["max_us"], (stalled_s + 0.5) * 1e6, lat)
        # said beside the error rate, in the headline and the warnings
        head = harness.words(run.stdout.split("\n\n")[1])
        self.assertIn("when the run was interrupted before its planned end, %d of the %d "
                      "requests due" % (unanswered, r["scheduled"]), head)
        self.assertIn("had no answer", head)
        self.assertTrue(any(w.startswith("interrupted:") and "had no answer then" in w
                            for w in run.json["warnings"]), run.json["warnings"])

class PoolNotUpTest(PacerTestCase):
    def test_connections_still_connecting_when_measuring_starts(self):
        """A listener with a backlog of 1 that never accepts: of 20
        connections most are still connecting at the first due time. The
        result says how many (issue 19 item 10), and a warning names it."""
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        s.listen(1)
        try:
            port = s.getsockname()[1]
            run = harness.run_pacer(["http://127.0.0.1:%d/" % port, "--rate", 10, "-d", "0.5s",
                                     "--connections", 20, "--timeout", "300ms", "--drain",
                                     "200ms", "--warmup", "0"], timeout=20.0)
        finally:
            s.close()
        self.assertIsNotNone(run.json, harness.describe(run))
        c = run.json["measure"]["connections"]
        self.assertGreaterEqual(c["connecting_at_start"], 15, c)
        self.assertLessEqual(c["connecting_at_start"] + c["open_at_start"], 20, c)
        self.assertTrue(any("still connecting when the measured phase began" in w
                            for w in run.json["warnings"]), run.json["warnings"])

if __name__ == "__main__":
    unittest.main()
