"""pacer serve (the embedded target) measured by pacer run: configured latency
distributions, CPU-bound capacity, status mix and fill, each misbehaviour
and the error it makes the engine count; self-contained runs and pacer demo;
serve's bad input, signals, and hostile clients.

`pacer serve` runs as a separate process, started and stopped by PID. On a
machine with 2+ CPUs it is pinned to the first CPU (taskset) and the pacer
generator to the second (the test process's affinity, inherited), so the
two do not compete for a core."""

import glob
import math
import os
import signal
import socket
import threading
import time
import unittest

import harness
from harness import PacerServe, PacerTestCase

PLANS = os.path.join(harness.HERE, "plans")
_pins = None  # (server CPU, generator CPU), or None on one CPU


def setUpModule():
    global _pins
    harness.require_pacer()
    _pins = harness.pin_cpus()


def plan_file(name):
    return os.path.join(PLANS, name)


def serve(plan, **kw):
    """A PacerServe on the server CPU (not started)."""
    return PacerServe(plan, cpu=_pins[0] if _pins else None, **kw)


def generator():
    """Context manager: pacer processes started inside run on the generator
    CPU."""
    return harness.pinned(_pins[1] if _pins else None)


def run_on(args, **kw):
    """run_pacer on the generator CPU."""
    with generator():
        return harness.run_pacer(args, **kw)


MS = 1000.0  # JSON timings are in microseconds


# ---------------------------------------------------------------- latency


class LatencyDistributionTest(PacerTestCase):
    """plans/latency.yaml: one route per distribution. Closed loop, 4,000
    requests on 100 connections: with latencies of tens of ms that is about
    5,000 req/s, some 5 % of the server's core, so the server is never what
    queues requests, and each service time (write -> last byte) is the
    sampled latency plus loopback and scheduling overhead (~0.1-1 ms, more
    when the VM is busy).

    Tolerances: p50 within +-(10 % + 2 ms), p99 within +-(20 % + 5 ms) of the
    configured value. Sampling error of a percentile of 4,000 draws is
    sqrt(p(1-p)/n)/f(x_p): for the widest distributions here (exponential
    mean 15 ms: p50 +-0.27 ms, p99 +-2.7 ms; lognormal p50 20 ms / p99 60 ms:
    p50 +-0.4 ms, p99 +-1.9 ms) that is under a quarter of the tolerance,
    which leaves the rest for overhead. The overhead is never negative: the
    server's timer starts after the request arrived, so the smallest service
    time is at least the distribution's minimum, exactly."""

    N = 4000
    ATTEMPTS = 3

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.srv = serve(plan_file("latency.yaml")).start()

    @classmethod
    def tearDownClass(cls):
        cls.srv.stop()

    def measure(self, path):
        run = run_on([self.srv.url(path), "--requests", self.N, "--concurrency", 100], timeout=60.0)
        self.assertEqual(run.code, 0, harness.describe(run))
        self.assertIsNotNone(run.json, harness.describe(run))
        m = run.json["measure"]
        self.assert_no_errors(m, run)
        self.assertEqual(m["requests"]["completed"], self.N, m["requests"])
        self.assertEqual(m["responses"]["by_status"], {"200": self.N})
        return m["service_time"]

    def check(self, path, p50_ms, p99_ms, min_ms=0.0):
        """Measures path and checks its percentiles. Overhead only ever adds
        to a service time, so a measurement below tolerance (or under the
        minimum) fails at once, while one above it may be the machine being
        busy (other programs share these CPUs; a stall of tens of ms for
        1 % of a 1 s run moves p99): it is measured again, up to 3 times in
        all, and fails only when every attempt was too slow."""
        tol50 = 0.10 * p50_ms + 2.0
        tol99 = 0.20 * p99_ms + 5.0
        tries = []
        for _ in range(self.ATTEMPTS):
            st = self.measure(path)
            got50, got99, gotmin = st["p50_us"] / MS, st["p99_us"] / MS, st["min_us"] / MS
            msg = ("%s service time p50 %.2f ms (want %.2f +- %.2f), p99 %.2f ms (want %.2f +- %.2f), "
                   "min %.2f ms (want >= %.2f)" % (path, got50, p50_ms, tol50, got99, p99_ms, tol99,
                                                   gotmin, min_ms))
            tries.append(msg)
            self.assertGreaterEqual(got50, p50_ms - tol50, msg)
            self.assertGreaterEqual(got99, p99_ms - tol99, msg)
            self.assertGreaterEqual(gotmin, min_ms, msg)
            if got50 <= p50_ms + tol50 and got99 <= p99_ms + tol99:
                return
        self.fail("too slow in every attempt:\n" + "\n".join(tries))

    def test_fixed(self):
        self.check("/fixed", 20.0, 20.0, min_ms=20.0)  # 20 ms

    def test_uniform(self):
        self.check("/uniform", 20.0, 10.0 + 0.99 * 20.0, min_ms=10.0)  # U[10 ms, 30 ms]

    def test_exponential(self):
        # mean 15 ms: p50 = 15 ln 2 = 10.4 ms, p99 = 15 ln 100 = 69.1 ms
        self.check("/exponential", 15.0 * math.log(2), 15.0 * math.log(100))

    def test_lognormal(self):
        self.check("/lognormal", 20.0, 60.0)  # given p50 20 ms, p99 60 ms


# ---------------------------------------------------------------- behaviour


class BurstTest(PacerTestCase):
    """--burst-size: 200 req/s to a fixed 20 ms route over 10 connections.
    One at a time, 4 are in flight and none waits; in bursts of 20 every
    100 ms, 10 go at once and the other 10 wait a response for a connection,
    so the latency from the schedule shows the bursts: p90 about 40 ms
    against 20. Counts stay exact; the plan records the burst size; the
    report says the load came in bursts."""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.srv = serve(plan_file("latency.yaml")).start()

    @classmethod
    def tearDownClass(cls):
        cls.srv.stop()
        super().tearDownClass()

    def run_bursts(self, n):
        run = run_on([self.srv.url("/fixed"), "--rate", "200", "--duration", "2s", "-w", "0",
                      "-c", "10", "--burst-size", str(n)], limited_ok=True)
        self.assertIn(run.code, (0, 4), harness.describe(run))
        m = run.json["measure"]
        r = m["requests"]
        self.assertEqual(r["scheduled"], 400, r)  # whole bursts: 20 of 20, or 400 of 1
        self.assertEqual(r["sent"], r["completed"], r)
        self.assert_no_errors(m, run)
        self.assertEqual(run.json["plan"]["burst_size"], n)
        return run, m["latency"]

    def test_bursts_queue_behind_the_connections(self):
        _, one = self.run_bursts(1)
        run, burst = self.run_bursts(20)
        self.assertLess(one["p90_us"], 30 * MS, one)
        self.assertGreater(burst["p90_us"], 38 * MS, burst)
        self.assertGreater(burst["min_us"], 19 * MS, burst)
        # the summary (the text report of the result) says how the load came
        self.assertIn("bursts of 20", " ".join(run.stdout.split()), run.stdout)

    def test_bad_burst_sizes(self):
        for args, msg in (
                (["--rate", "100", "--burst-size", "0"], "--burst-size 0: between 1 and 100000"),
                (["--rate", "100", "--burst-size", "100001"], "between 1 and 100000"),
                (["--burst-size", "5"], "--burst-size: open loop only (give --rate)")):
            run = harness.run_pacer([self.srv.url("/fixed"), "-d", "1s"] + args)
            self.assertEqual(run.code, 2, harness.describe(run))
            self.assertIn(msg, run.stderr)
            self.assertIsNone(run.json)


class BehaviourCase(PacerTestCase):
    """One server with plans/behaviour.yaml for the class."""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.srv = serve(plan_file("behaviour.yaml")).start()

    @classmethod
    def tearDownClass(cls):
        cls.srv.stop()

    def run_ok_on(self, path, args, **kw):
        run = run_on([self.srv.url(path)] + list(args), **kw)
        self.assertFalse(run.timed_out, harness.describe(run))
        self.assertEqual(run.code, 0, harness.describe(run))
        self.assertIsNotNone(run.json, harness.describe(run))
        self.assertTrue(self.srv.alive(), "pacer serve died\n" + self.srv.stderr())
        m = run.json["measure"]
        self.assert_accounted(m, run)
        return run, m


class ServeCapacityTest(BehaviourCase):
    W_US = 500.0  # /work: 500 us of CPU per request, one server thread

    def test_cpu_bound_capacity(self):
        """Capacity of one thread doing W us of CPU work per request is about
        1e6/W = 2,000 req/s. Closed loop with 16 connections for 3 s keeps
        the server's queue full while the generator (~2,000 req/s, a few %
        of its core) is far from its own limit. Achieved rate within +-20 %:
        the server's own per-request overhead (parse, timers, Server-Timing,
        syscalls: tens of us, i.e. a few %) takes the rate under 2,000, and
        the rest is room for a busy machine.

        Independently of speed, the server's CPU time per request (from
        /proc; its ticks of 10 ms are < 1 % of ~3 s) is at least W: the work
        is a real busy loop, and its overhead is small.

        The rate only means capacity when the server had its core. Other
        programs share this machine, so when the server's CPU use was under
        90 % of the run (another program took part of its core; with a full
        queue it is otherwise ~100 %), the run is repeated, up to 3 times;
        if it never had its core, the rate is not checked (skip), the CPU
        figures still are."""
        capacity = 1e6 / self.W_US
        tries = []
        for _ in range(3):
            cpu0 = self.srv.cpu_s()
            run, m = self.run_ok_on("/work", ["--concurrency", 16, "--duration", "3s"], timeout=30.0)
            cpu1 = self.srv.cpu_s()
            self.assert_no_errors(m, run)
            done = m["requests"]["completed"]
            self.assertGreater(done, 0)
            util = (cpu1 - cpu0) / m["duration_s"]
            rate = m["rate"]["achieved_per_s"]
            cpu_per_req_us = (cpu1 - cpu0) * 1e6 / done
            msg = ("achieved %.0f req/s, capacity %.0f; server CPU %.2fs over %.2fs (%.0f %%), "
                   "%.0f us per request" % (rate, capacity, cpu1 - cpu0, m["duration_s"], 100 * util,
                                            cpu_per_req_us))
            tries.append(msg)
            self.assertGreaterEqual(cpu_per_req_us, 0.97 * self.W_US, msg)
            self.assertLessEqual(cpu_per_req_us, 1.5 * self.W_US, msg)
            if util >= 0.90:
                self.assertLessEqual(abs(rate - capacity), 0.20 * capacity, msg)
                return
        self.skipTest("the server never had its CPU to itself (machine busy):\n" + "\n".join(tries))


class StatusMixTest(BehaviourCase):
    N = 6000

    def test_status_mix_and_fill(self):
        """/mix: status {200: 0.9, 503: 0.1}, fill 0.6, no-fill answered 204.
        So P(503) = 0.1, P(200) = 0.9 x 0.6 = 0.54, P(204) = 0.9 x 0.4 =
        0.36. Over 6,000 requests each count is within 4.5 binomial standard
        deviations sqrt(n p (1-p)) of n p (a false alarm about once in
        150,000 runs per count), and no other status appears."""
        run, m = self.run_ok_on("/mix", ["--requests", self.N, "--concurrency", 8], timeout=60.0)
        self.assert_no_errors(m, run, failing=(503,))  # the plan's 503s are errors, nothing else
        self.assertEqual(m["requests"]["completed"], self.N)
        by = m["responses"]["by_status"]
        self.assertEqual(set(by), {"200", "204", "503"}, by)
        self.assertEqual(sum(by.values()), self.N)
        for status, p in (("200", 0.54), ("204", 0.36), ("503", 0.10)):
            want = self.N * p
            sd = math.sqrt(self.N * p * (1 - p))
            self.assertLessEqual(abs(by[status] - want), 4.5 * sd,
                                 "status %s: %d of %d, expected %.0f +- %.0f (4.5 sd)"
                                 % (status, by[status], self.N, want, 4.5 * sd))
        self.assertEqual(m["responses"]["by_class"]["2xx"], by["200"] + by["204"])
        self.assertEqual(m["responses"]["by_class"]["5xx"], by["503"])


class MisbehaviourTest(BehaviourCase):
    """Each misbehaviour of plans/behaviour.yaml, and exactly the error kind
    (or absence of error) the engine is meant to count for it. Every run
    ends normally (exit 0) and the server keeps serving."""

    CLOSE_AFTER = 10

    def test_close_after_between_requests_is_not_an_error(self):
        """close_after 10, open loop at 250/s: the server closes each
        connection right after its 10th response, well before the next
        request is due (4 ms later), so pacer sees an idle keep-alive
        connection closed (connections.closed_by_server), not a request
        error. Every connection it saw closing carried exactly 10 responses,
        so there is about one connection per 10 requests.

        Only if the generator was descheduled past the next due time (a busy
        machine) can it write on the closing connection before reading the
        close, which is then counted as errors.closed: allowed for at most 1
        close in 20, and no other error."""
        n = self.CLOSE_AFTER
        run, m = self.run_ok_on("/close-after", ["--rate", 250, "--duration", "2s", "--drain", "1s",
                                                 "--connections", 4], timeout=30.0)
        r, c, e = m["requests"], m["connections"], m["transport_errors"]
        msg = "requests %s connections %s errors %s" % (r, c, e)
        self.assertEqual(e["total"], e["closed"], msg)
        self.assertEqual(r["completed"] + e["closed"], r["sent"], msg)
        self.assertGreater(r["completed"], 0, msg)
        closes = c["closed_by_server"] + e["closed"]
        self.assertGreaterEqual(closes, r["completed"] // n - 4, msg)
        self.assertLessEqual(e["closed"], closes // 20, msg)
        # responses on connections the server closed: n each; those still
        # open at the end carry at most n
        left = r["completed"] - n * closes
        still_open = c["opened"] - closes
        self.assertGreaterEqual(left, 0, msg)
        self.assertGreaterEqual(still_open, 0, msg)
        self.assertLessEqual(left, n * still_open, msg)
        # at most the 4 allowed connections were not closed by the server
        self.assertLessEqual(still_open, 4, msg)
        self.assertLessEqual(abs(c["opened"] - r["sent"] / n), 4, msg)

    def test_close_after_under_closed_loop(self):
        """close_after 10, closed loop: the next request is written as soon
        as the 10th response arrives, so it races the server's close; either
        pacer saw the close first (closed_by_server) or its request met a
        connection closed before any response byte (errors.closed, as
        docs/serve.md says: the next request on it fails). No other error,
        and every close is one or the other."""
        n, conc = self.CLOSE_AFTER, 4
        run, m = self.run_ok_on("/close-after", ["--requests", 500, "--concurrency", conc], timeout=30.0)
        r, c, e = m["requests"], m["connections"], m["transport_errors"]
        msg = "requests %s connections %s errors %s" % (r, c, e)
        self.assertEqual(e["total"], e["closed"], msg)
        self.assertEqual(r["sent"], 500, msg)
        self.assertEqual(r["completed"] + e["closed"], 500, msg)
        closes = e["closed"] + c["closed_by_server"]
        self.assertGreaterEqual(closes, 1, msg)
        self.assertLessEqual(n * closes, r["completed"], msg)
        self.assertLessEqual(r["completed"], n * closes + n * conc, msg)
        # each close is followed by a new connection, except at the very end
        self.assertLessEqual(c["opened"], conc + closes, msg)
        self.assertGreaterEqual(c["opened"], closes, msg)

    def test_garbage_is_parse_error(self):
        """garbage 1: every answer is non-HTTP bytes and a close, so every
        request is one parse error, on a connection of its own."""
        run, m = self.run_ok_on("/garbage", ["--requests", 300, "--concurrency", 4], timeout=30.0)
        r, e = m["requests"], m["transport_errors"]
        self.assertEqual(r["sent"], 300, r)
        self.assertEqual(e["parse"], r["sent"], e)
        self.assertEqual(e["total"], e["parse"], e)
        self.assertEqual(r["completed"], 0, r)
        self.assertEqual(m["connections"]["opened"], 300, m["connections"])

    def test_stall_is_timeout(self):
        """stall_every 400 ms, stall_for 250 ms, pacer --timeout 100ms, open
        loop at 500/s for 1.2 s (3 whole stall cycles, whatever their phase):
        a request due in the first 150 ms of a stall waits > 100 ms and times
        out, so 150/400 = 37.5 % of them; the others complete. Only timeouts
        are counted, and each timed-out connection is reopened."""
        run, m = self.run_ok_on("/stall", ["--rate", 500, "--duration", "1200ms", "--timeout", "100ms",
                                           "--drain", "1s"], timeout=30.0)
        r, e = m["requests"], m["transport_errors"]
        msg = "requests %s errors %s" % (r, e)
        self.assertEqual(e["total"], e["timeout"], msg)
        self.assertEqual(r["completed"] + e["timeout"], r["sent"], msg)
        frac = e["timeout"] / r["sent"]
        self.assertGreaterEqual(frac, 0.25, msg)
        self.assertLessEqual(frac, 0.50, msg)
        self.assertGreaterEqual(m["connections"]["opened"], e["timeout"], m["connections"])
        # a timed-out request's latency is the time waited: >= the timeout
        self.assertGreaterEqual(m["latency"]["max_us"], 100 * MS)

    def test_slow_body(self):
        """slow_body 16 bytes every 10 ms on a 160-byte body: 10 pieces, 9
        pauses, so no response completes in under 90 ms (service time), and
        the slowness is not an error."""
        run, m = self.run_ok_on("/slow", ["--requests", 40, "--concurrency", 10], timeout=30.0)
        self.assert_no_errors(m, run)
        self.assertEqual(m["requests"]["completed"], 40)
        self.assertEqual(m["responses"]["by_status"], {"200": 40})
        self.assertGreaterEqual(m["bytes"]["in"], 40 * 160)
        self.assertGreaterEqual(m["service_time"]["min_us"], 90 * MS, m["service_time"])


# ---------------------------------------------------------------- self-contained


class SelfContainedTest(PacerTestCase):
    def assert_usage_error(self, args, *mentions):
        run = harness.run_pacer(args, timeout=20.0, out=False)
        self.assertFalse(run.timed_out, harness.describe(run))
        self.assertEqual(run.code, 2, harness.describe(run))
        lines = [l for l in run.stderr.splitlines() if l.strip()]
        self.assertEqual(len(lines), 1, "stderr should be one line:\n" + run.stderr)
        low = lines[0].lower()
        self.assertTrue(any(x.lower() in low for x in mentions),
                        "stderr %r mentions none of %r" % (lines[0], mentions))

    def test_vast_ortb_mix(self):
        """The complete result of a self-contained run: mode, target block,
        both kinds of request (VAST GETs answer 200 only; OpenRTB POSTs give
        the 204 no-bids, ~22 % of all answers; POSTs alone could not make 200
        more than 55 % of them, ~77 % expected), and the caveat."""
        run = run_on(["--self-contained=vast_ortb_mix", "--rate", 500, "-d", "2s", "--quiet"],
                     timeout=30.0)
        self.assertEqual(run.code, 0, harness.describe(run))
        j = run.json
        self.assertIsNotNone(j, harness.describe(run))
        self.assertEqual(j["schema_version"], "2.0")
        self.assertEqual(j["mode"], "self_contained")
        self.assertFalse(j["interrupted"])
        t = j["target"]
        self.assertEqual(t["plan"], "vast_ortb_mix")
        self.assertGreater(t["cpu_ms_per_request"], 0)
        self.assertGreaterEqual(t["threads"], 1)
        m = j["measure"]
        self.assert_accounted(m, run)
        self.assert_no_errors(m, run, failing=(500, 503))  # the plan's own 5xx share
        done = m["requests"]["completed"]
        self.assertGreater(done, 900, m["requests"])
        by = m["responses"]["by_status"]
        self.assertGreaterEqual(by.get("204", 0), 0.10 * done, by)
        self.assertGreaterEqual(by.get("200", 0), 0.65 * done, by)
        self.assertTrue(set(by) <= {"200", "204", "500", "503"}, by)
        self.assertTrue(j["plan"]["url"].startswith("http://127.0.0.1:"), j["plan"]["url"])
        self.assertTrue(any("self-contained" in w for w in j["warnings"]), j["warnings"])
        for name in ("latency", "service_time", "ttfb"):
            self.assertEqual(m[name]["count"], done, name)

    def test_vast_ortb_mix_workload_as_sent(self):
        """The plan and the report say what was sent: one GET /vast and one
        POST /openrtb2/auction (with its JSON body) in turn. The 204s prove
        the POSTs went out (only the OpenRTB route answers 204); the report
        names both methods in its identity, methodology and meaning, and no
        longer says "one request: GET"."""
        d = harness.tempfile.mkdtemp(prefix="pacer-wl-")
        if not os.environ.get("PACER_KEEP_TMP"):
            harness.atexit.register(harness.shutil.rmtree, d, True)
        run = run_on(["--self-contained=vast_ortb_mix", "--rate", 300, "-d", "1s", "-w", "0.3s",
                      "--report-dir", d], timeout=30.0, out=False)
        self.assertIn(run.code, (0, 4), harness.describe(run))
        with open(os.path.join(d, "result.json")) as f:
            j = harness.json.load(f)
        p = j["plan"]
        self.assertIsNone(p["method"], p)  # two methods: no single one
        self.assertIsNone(p["body_bytes"], p)  # one body, one without
        wl = p["workload"]
        self.assertEqual(wl["source"], "embedded_routes")
        self.assertEqual(wl["requests"], 2)
        self.assertEqual([(m["method"], m["requests"], m["share_pct"]) for m in wl["methods"]],
                         [("GET", 1, 50.0), ("POST", 1, 50.0)])
        self.assertEqual([(r["method"], r["target"]) for r in wl["listed"]],
                         [("GET", "/vast"), ("POST", "/openrtb2/auction")])
        post = wl["listed"][1]
        self.assertGreater(post["body_bytes"], 0)
        self.assertEqual(wl["bodies"], {"requests": 1, "bytes_total": post["body_bytes"],
                                        "bytes_min": post["body_bytes"],
                                        "bytes_max": post["body_bytes"]})
        self.assertRegex(wl["sha256"], r"^[0-9a-f]{64}$")
        by = j["measure"]["responses"]["by_status"]
        self.assertGreater(by.get("204", 0), 0, by)  # POSTs were sent
        self.assertGreater(by.get("200", 0), 0, by)
        # the connections the warm-up opened are open when the measured phase begins
        conns, warm = j["measure"]["connections"], j["warmup"]["connections"]
        self.assertEqual(warm["open_at_start"], 0, warm)  # a fresh run
        self.assertGreater(warm["opened"], 0, warm)
        self.assertGreater(conns["open_at_start"], 0, conns)
        self.assertLessEqual(conns["open_at_start"], warm["opened"], (warm, conns))
        self.assertEqual(j["target_cores"], {"cores": 1, "basis": "embedded_threads"})
        with open(os.path.join(d, "report.md")) as f:
            md = f.read()
        self.assertNotIn("one request: GET", md)
        self.assertNotIn("one GET request", md)
        both = ("GET /vast, POST /openrtb2/auction (%d-byte body)" % post["body_bytes"])
        self.assertIn("| Requests | 2 requests in turn, one per route of the embedded plan: " + both,
                      md)
        self.assertIn("| Methods | GET 1 (50.00%), POST 1 (50.00%) |", md)
        self.assertIn("- What was sent: 2 requests in turn", md)
        self.assertIn("- It holds for this workload: 2 requests in turn, one per route of the "
                      "embedded plan: " + both, md)
        self.assertIn("count only the embedded target's own threads, not the driver's", md)
        self.assertNotIn("includes the driver's cost", md)
        self.assertRegex(md, r"Connections of the measured phase: [1-9][0-9,]* open when it began")
        # the terminal says it too: a row per request name
        rows = [l.split()[:2] for l in run.stdout.splitlines() if l.startswith("  GET /vast ")
                or l.startswith("  POST /openrtb2/auction ")]
        self.assertEqual(rows, [["GET", "/vast"], ["POST", "/openrtb2/auction"]], run.stdout)
        # costs with significant digits, never rounded away nor in exponent form
        costs = [l for l in run.stdout.splitlines() if "$" in l]
        self.assertTrue(costs, run.stdout)
        for line in costs:
            self.assertNotRegex(line, r"\$0\.0000(\s|$)|e-0", line)
            self.assertRegex(line, r"\$0\.0*[1-9][0-9]{0,2}(\s|$)", line)

    def test_unknown_plan(self):
        self.assert_usage_error(["--self-contained=nosuch", "--rate", 10, "-d", "200ms"], "nosuch")

    def test_full_url_refused(self):
        self.assert_usage_error(["--self-contained", "http://127.0.0.1:1/", "--rate", 10, "-d", "200ms"],
                                "http://127.0.0.1:1/", "path")

    def test_plan_file(self):
        """A plan file instead of a built-in name, driving one path of it."""
        run = run_on(["--self-contained=" + plan_file("behaviour.yaml"), "/mix", "--requests", 500,
                      "--concurrency", 4, "--quiet"], timeout=30.0)
        self.assertEqual(run.code, 0, harness.describe(run))
        j = run.json
        self.assertIsNotNone(j, harness.describe(run))
        self.assertEqual(j["mode"], "self_contained")
        self.assertEqual(j["target"]["plan"], "test-behaviour")
        self.assertTrue(j["plan"]["url"].endswith("/mix"), j["plan"]["url"])
        m = j["measure"]
        self.assert_no_errors(m, run, failing=(503,))
        self.assertEqual(m["requests"]["completed"], 500)
        by = m["responses"]["by_status"]
        self.assertTrue(set(by) <= {"200", "204", "503"} and "204" in by, by)


class DemoTest(PacerTestCase):
    def test_demo(self):
        """pacer demo (about 12 s): exit 0, a demo-* folder with run.json
        (self-contained, complete) and latency.hgrm agreeing with it."""
        d = harness.tempfile.mkdtemp(prefix="pacer-demo-")
        if not os.environ.get("PACER_KEEP_TMP"):
            harness.atexit.register(harness.shutil.rmtree, d, True)
        with generator():
            run = harness.run_pacer(["--out-dir", d], out=False, subcommand="demo", timeout=60.0)
        self.assertEqual(run.code, 0, harness.describe(run))
        subs = glob.glob(os.path.join(d, "demo-*"))
        self.assertEqual(len(subs), 1, os.listdir(d))
        out = os.path.join(subs[0], "run.json")
        hgrm = os.path.join(subs[0], "latency.hgrm")
        self.assertTrue(os.path.isfile(out) and os.path.isfile(hgrm), os.listdir(subs[0]))
        self.assertIn(out, run.stdout)  # it says where the results went
        with open(out) as f:
            j = harness.json.load(f)
        self.assertEqual(j["mode"], "self_contained")
        self.assertEqual(j["target"]["plan"], "vast_ortb_mix")
        m = j["measure"]
        self.assertGreater(m["requests"]["completed"], 0)
        self.assert_accounted(m)
        with open(hgrm) as f:
            rows, footer = harness.parse_hgrm(f.read())
        self.assertEqual(footer.get("Total count"), m["latency"]["count"])


# ---------------------------------------------------------------- serve CLI


class ServeBadInputTest(PacerTestCase):
    """pacer serve refuses bad input: exit 2, one line on stderr."""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.dir = harness.tempfile.mkdtemp(prefix="pacer-badplan-")

    @classmethod
    def tearDownClass(cls):
        harness.shutil.rmtree(cls.dir, ignore_errors=True)

    def serve_error(self, args, *mentions):
        """pacer serve ARGS exits 2 (not serving) with one stderr line that
        contains every string in mentions. Returns the line."""
        run = harness.run_pacer(args, out=False, subcommand="serve", timeout=10.0)
        self.assertFalse(run.timed_out, "pacer serve %s kept running\n%s" % (args, harness.describe(run)))
        self.assertEqual(run.code, 2, harness.describe(run))
        lines = [l for l in run.stderr.splitlines() if l.strip()]
        self.assertEqual(len(lines), 1, "stderr should be one line:\n" + run.stderr)
        for x in mentions:
            self.assertIn(x, lines[0])
        self.assertTrue(lines[0].startswith("pacer serve: "), lines[0])
        self.assertNotIn("listening", run.stdout)
        return lines[0]

    def bad_plan(self, name, text, *mentions):
        path = os.path.join(self.dir, name)
        with open(path, "w") as f:
            f.write(text)
        return self.serve_error(["--plan", path, "--listen", "127.0.0.1:0"], *mentions)

    def test_unknown_plan_name(self):
        line = self.serve_error(["--plan", "nosuch", "--listen", "127.0.0.1:0"], "nosuch")
        self.assertIn("hello", line)  # names the plans there are

    def test_malformed_yaml_names_file_and_line(self):
        # line 5 is indented wrongly for the mapping it continues
        text = "name: x\nroutes:\n  - path: /a\n    status: 200\n   work: 5us\n  - path: /b\n"
        path = os.path.join(self.dir, "malformed.yaml")
        self.bad_plan("malformed.yaml", text, path + ":5:")

    def test_negative_latency(self):
        path = os.path.join(self.dir, "neg.yaml")
        self.bad_plan("neg.yaml", "routes:\n  - path: /a\n    latency: -5ms\n", path + ":3:", "latency")

    def test_probability_above_one(self):
        path = os.path.join(self.dir, "fill.yaml")
        self.bad_plan("fill.yaml", "routes:\n  - path: /a\n    fill: 1.5\n", path + ":3:", "fill")

    def test_probability_below_zero(self):
        path = os.path.join(self.dir, "garbage.yaml")
        self.bad_plan("garbage.yaml", "routes:\n  - path: /a\n    misbehave: {garbage: -0.1}\n",
                      path + ":3:", "garbage")

    def test_status_mix_not_summing_to_one(self):
        path = os.path.join(self.dir, "sum.yaml")
        self.bad_plan("sum.yaml", "routes:\n  - path: /a\n    status: {200: 0.9, 503: 0.2}\n",
                      path + ":3:", "status")

    def test_p99_below_p50(self):
        path = os.path.join(self.dir, "p99.yaml")
        self.bad_plan("p99.yaml",
                      "routes:\n  - path: /a\n    work: 1us\n    latency: {dist: lognormal, p50: 20ms, p99: 10ms}\n",
                      path + ":4:", "p99")

    def test_unknown_key(self):
        path = os.path.join(self.dir, "unknown.yaml")
        self.bad_plan("unknown.yaml", "routes:\n  - path: /a\n    latncy: 5ms\n", path + ":3:", "latncy")

    def test_value_with_line_break_stays_one_line(self):
        # the bad value is echoed in the message: its line break must not be
        path = os.path.join(self.dir, "newline.yaml")
        self.bad_plan("newline.yaml", 'routes:\n  - path: /a\n    latency: "5\\nms"\n', path + ":3:", "latency")

    def test_port_in_use(self):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            s.listen()
            port = s.getsockname()[1]
            self.serve_error(["--plan", "hello", "--listen", "127.0.0.1:%d" % port], str(port))


class ServeSignalTest(PacerTestCase):
    def stop_with(self, sig):
        """With a keep-alive connection idle and another one half-way
        through a request, sig stops the server: exit 0 within 2 s, and the
        port no longer accepts."""
        with serve("hello") as srv:
            idle = socket.create_connection(("127.0.0.1", srv.port), timeout=3)
            idle.sendall(b"GET / HTTP/1.1\r\nHost: t\r\n\r\n")
            data, _ = harness._read_all(idle, 3.0, 1 << 16, read_until_close=False)
            self.assertTrue(data.startswith(b"HTTP/1.1 200"), data)
            partial = socket.create_connection(("127.0.0.1", srv.port), timeout=3)
            partial.sendall(b"GET / HTTP/1.1\r\nHost: t\r\n")
            time.sleep(0.1)
            code, took = srv.signal_stop(sig, timeout=2.0)
            idle.close()
            partial.close()
            self.assertIsNotNone(code, "pacer serve did not exit within 2 s of %s" % sig.name)
            self.assertEqual(code, 0, srv.stderr())
            with self.assertRaises(OSError):
                socket.create_connection(("127.0.0.1", srv.port), timeout=1).close()

    def test_sigint(self):
        self.stop_with(signal.SIGINT)

    def test_sigterm(self):
        self.stop_with(signal.SIGTERM)


# ---------------------------------------------------------------- hostile clients


class HostileClientTest(PacerTestCase):
    """plans/hostile.yaml (request timeout 2.5 s), one server thread."""

    GARBAGE = b"\x00\x01\x02 not http at all \xff\r\n\r\n"

    def setUp(self):
        self.srv = serve(plan_file("hostile.yaml")).start()

    def tearDown(self):
        self.srv.stop()

    def test_garbage_and_slowloris_do_not_disturb_a_run(self):
        """While a client keeps sending garbage (new connection each time)
        and another trickles a request head a byte every 50 ms (slowloris),
        a pacer run on the same server thread completes every request. Each
        garbage connection is answered 400 and closed; the slowloris client
        gets 408 once its request has taken longer than 2.5 s."""
        port = self.srv.port
        stop = threading.Event()
        garbage_answers = []
        slow = {"sent": 0}

        def garbage_client():
            while not stop.is_set():
                data, closed = harness.raw_exchange(port, self.GARBAGE, timeout=5.0)
                garbage_answers.append((data, closed))
                stop.wait(0.02)

        slowloris = socket.create_connection(("127.0.0.1", port), timeout=5)
        slowloris.sendall(b"GET / HTTP/1.1\r\nHost: t\r\n")
        t_slow = time.monotonic()

        def slow_client():
            pad = b"X-Slow: " + b"a" * 4000
            try:
                while not stop.is_set() and slow["sent"] < len(pad):
                    slowloris.sendall(pad[slow["sent"]:slow["sent"] + 1])
                    slow["sent"] += 1
                    stop.wait(0.05)
            except OSError:
                pass  # closed by the server (408): checked below

        threads = [threading.Thread(target=garbage_client), threading.Thread(target=slow_client)]
        for t in threads:
            t.start()
        try:
            time.sleep(0.1)
            run = run_on([self.srv.url("/"), "--rate", 1000, "--duration", "1500ms", "--quiet"],
                         timeout=30.0)
        finally:
            stop.set()
            for t in threads:
                t.join(10)
        self.assertEqual(run.code, 0, harness.describe(run))
        m = run.json["measure"]
        self.assert_no_errors(m, run)
        self.assert_accounted(m, run)
        self.assertEqual(m["requests"]["completed"], m["requests"]["sent"], m["requests"])
        self.assertEqual(m["responses"]["by_status"], {"200": m["requests"]["completed"]})
        self.assertGreater(len(garbage_answers), 5)
        for data, closed in garbage_answers:
            self.assertTrue(data.startswith(b"HTTP/1.1 400 "), data[:200])
            self.assertTrue(closed, "garbage connection left open after 400")
        self.assertGreater(slow["sent"], 10, "slowloris sent only %d bytes" % slow["sent"])
        # the slowloris request started at t_slow; its 408 is due 2.5 s later
        left = max(0.5, 2.5 + 2.0 - (time.monotonic() - t_slow))
        data, _ = harness._read_all(slowloris, left, 1 << 16, read_until_close=False)
        slowloris.close()
        self.assertTrue(data.startswith(b"HTTP/1.1 408 "), data[:200])
        self.assertTrue(self.srv.alive(), self.srv.stderr())

    def test_header_burst_memory_bounded(self):
        """200 connections each holding a 15 KiB request head (under the
        16 KiB cap, not yet ended by the blank line): the server's RSS stays
        under 64 MiB (8x for an ASan build); then each head is finished and
        answered 200."""
        head = b"GET / HTTP/1.1\r\nHost: t\r\n" + b"".join(
            b"X-Pad-%03d: %s\r\n" % (i, b"p" * 100) for i in range(135))
        self.assertTrue(15 * 1024 - 512 <= len(head) < 15 * 1024, len(head))
        socks = []
        try:
            for _ in range(200):
                s = socket.create_connection(("127.0.0.1", self.srv.port), timeout=5)
                s.sendall(head)
                socks.append(s)
            time.sleep(0.3)  # let the server read them all
            rss_held = self.srv.rss_kib()
            for s in socks:
                s.sendall(b"\r\n")
            ok = 0
            for s in socks:
                data, _ = harness._read_all(s, 5.0, 1 << 16, read_until_close=False)
                ok += data.startswith(b"HTTP/1.1 200 ")
            rss_after = self.srv.rss_kib()
        finally:
            for s in socks:
                s.close()
        limit = harness.rss_limit_kib(64)
        self.assertLess(rss_held, limit, "RSS %d KiB with 200 heads held" % rss_held)
        self.assertLess(rss_after, limit, "RSS %d KiB after the burst" % rss_after)
        self.assertEqual(ok, 200)

    def test_oversized_head_is_431(self):
        """A request head over 16 KiB is answered 431 and closed; the server
        goes on serving."""
        head = b"GET / HTTP/1.1\r\nHost: t\r\nX-Big: " + b"b" * (17 * 1024) + b"\r\n\r\n"
        data, closed = harness.raw_exchange(self.srv.port, head, timeout=5.0)
        self.assertTrue(data.startswith(b"HTTP/1.1 431 "), data[:200])
        self.assertTrue(closed)
        data, _ = harness.raw_exchange(self.srv.port, b"GET / HTTP/1.1\r\nHost: t\r\n\r\n",
                                       timeout=3.0, read_until_close=False)
        self.assertTrue(data.startswith(b"HTTP/1.1 200 "), data[:200])


if __name__ == "__main__":
    unittest.main()
