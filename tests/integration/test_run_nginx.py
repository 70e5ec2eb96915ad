"""pacer run against nginx: exact counts, keep-alive, body framings, status
classes, open-loop scheduling, the JSON result, --hgrm and Ctrl-C."""

import os
import signal
import unittest

import harness
from harness import Nginx, PacerTestCase, parse_hgrm

_ngx = None


def setUpModule():
    global _ngx
    harness.require_pacer()
    _ngx = Nginx().start()


def tearDownModule():
    if _ngx is not None:
        _ngx.stop()


class ClosedLoopTest(PacerTestCase):
    """Closed loop: N requests, P connections."""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.mark = _ngx.log_mark()
        cls.run_ = harness.run_pacer([_ngx.url("/hello"), "--requests", 1000, "--concurrency", 4])
        cls.log = _ngx.log_lines(cls.mark) if _ngx.count(cls.mark) else []

    def setUp(self):
        run = self.run_
        self.assertFalse(run.timed_out, harness.describe(run))
        self.assertEqual(run.code, 0, harness.describe(run))
        self.assertIsNotNone(run.json, harness.describe(run))
        self.m = run.json["measure"]

    def test_exact_counts(self):
        r = self.m["requests"]
        self.assertEqual(r["sent"], 1000, r)
        self.assertEqual(r["completed"], 1000, r)
        self.assertEqual(r["in_flight_at_end"], 0, r)
        self.assertEqual(self.m["responses"]["by_status"].get("200"), 1000)
        self.assertEqual(self.m["responses"]["by_class"]["2xx"], 1000)
        self.assert_no_errors(self.m, self.run_)
        self.assertEqual(len(self.log), 1000)
        self.assertEqual(sum(1 for l in self.log if l.uri == "/hello" and l.status == 200), 1000)

    def test_keep_alive_reuse(self):
        self.assertEqual(self.m["connections"]["opened"], 4, self.m["connections"])
        self.assertEqual(len({l.connection for l in self.log}), 4)
        # nginx numbers requests per connection 1, 2, ...: 4 connections
        # carrying 1000 requests between them
        self.assertEqual(sum(1 for l in self.log if l.connection_requests == 1), 4)

    def test_plan_and_environment(self):
        j = self.run_.json
        self.assertEqual(j["schema_version"], "2.0")
        self.assertEqual(j["kind"], "run")
        self.assertFalse(j["interrupted"])
        p = j["plan"]
        self.assertEqual(p["loop"], "closed")
        self.assertEqual(p["requests"], 1000)
        self.assertEqual(p["concurrency"], 4)
        self.assertEqual(p["method"], "GET")
        self.assertEqual(p["url"], _ngx.url("/hello"))
        self.assertGreater(j["environment"]["cores"], 0)
        self.assertEqual(j["environment"]["os"], "Linux")
        self.assertNotIn("warmup", j)  # no warm-up asked for
        self.assertEqual(self.m["latency"]["count"], 1000)
        self.assertGreater(self.m["bytes"]["in"], 1000 * len("hello\n"))
        self.assertGreater(self.m["bytes"]["out"], 1000 * len("GET /hello HTTP/1.1\r\n\r\n"))


class FramingTest(PacerTestCase):
    def closed_run(self, path, n=500, concurrency=4):
        mark = _ngx.log_mark()
        run = self.run_ok([_ngx.url(path), "--requests", n, "--concurrency", concurrency])
        m = run.json["measure"]
        self.assertEqual(m["requests"]["sent"], n, m["requests"])
        self.assertEqual(m["requests"]["completed"], n, m["requests"])
        self.assertEqual(_ngx.count(mark, path=path), n)
        return run, m

    def require_echo(self):
        if not _ngx.has_echo:
            self.skipTest("nginx echo module (libnginx-mod-http-echo) not installed")

    def test_chunked_body(self):
        self.require_echo()
        run, m = self.closed_run("/chunked")
        self.assertEqual(m["responses"]["by_class"]["2xx"], 500)
        self.assert_no_errors(m, run)
        # chunked framing keeps the connection usable
        self.assertEqual(m["connections"]["opened"], 4, m["connections"])

    def test_close_delimited_body(self):
        self.require_echo()
        run, m = self.closed_run("/close")
        self.assertEqual(m["responses"]["by_class"]["2xx"], 500)
        self.assert_no_errors(m, run)
        # the end of each body is the end of its connection
        self.assertEqual(m["connections"]["opened"], m["requests"]["completed"], m["connections"])

    def test_static_file(self):
        run, m = self.closed_run("/file", n=200, concurrency=2)
        self.assert_no_errors(m, run)
        self.assertEqual(m["responses"]["by_status"].get("200"), 200)
        self.assertGreaterEqual(m["bytes"]["in"], 200 * harness.FILE_SIZE)

    def test_404_counted_by_class_and_status(self):
        run, m = self.closed_run("/notfound", n=200, concurrency=2)
        self.assertEqual(m["responses"]["by_class"]["4xx"], 200)
        self.assertEqual(m["responses"]["by_class"]["2xx"], 0)
        self.assertEqual(m["responses"]["by_status"], {"404": 200})
        self.assert_no_errors(m, run, failing=(404,))  # a complete response, and an error


class OpenLoopTest(PacerTestCase):
    """--rate 2000 --duration 2s, constant arrivals; also the JSON layout and
    --hgrm of that run."""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.mark = _ngx.log_mark()
        cls.hgrm = os.path.join(harness.tempfile.mkdtemp(prefix="pacer-hgrm-"), "lat.hgrm")
        harness.atexit.register(harness.shutil.rmtree, os.path.dirname(cls.hgrm), True)
        cls.run_ = harness.run_pacer([_ngx.url("/hello"), "--rate", "2k", "--duration", "2s",
                                      "--drain", "2s", "--hgrm", cls.hgrm])

    def setUp(self):
        run = self.run_
        self.assertFalse(run.timed_out, harness.describe(run))
        self.assertEqual(run.code, 0, harness.describe(run))
        self.assertIsNotNone(run.json, harness.describe(run))
        self.m = run.json["measure"]

    def test_schedule_and_counts(self):
        r = self.m["requests"]
        self.assertLessEqual(abs(r["scheduled"] - 4000), 40, r)
        self.assertEqual(r["sent"], r["completed"], r)
        self.assertEqual(r["in_flight_at_end"], 0, r)
        self.assert_no_errors(self.m, self.run_)
        self.assertEqual(self.m["responses"]["by_status"].get("200"), r["completed"])
        self.assertEqual(_ngx.count(self.mark, path="/hello"), r["sent"])
        self.assertEqual(self.m["rate"]["offered_per_s"], 2000)
        self.assert_accounted(self.m, self.run_)

    def test_json_layout(self):
        j = self.run_.json
        self.assertEqual(j["schema_version"], "2.0")
        self.assertEqual(j["kind"], "run")
        self.assertFalse(j["interrupted"])
        p = j["plan"]
        self.assertEqual(p["loop"], "open")
        self.assertEqual(p["rate_per_s"], 2000)
        self.assertEqual(p["arrival"], "constant")
        self.assertAlmostEqual(p["duration_s"], 2.0)
        self.assertGreater(j["environment"]["cores"], 0)
        for key in ("hostname", "kernel", "arch"):
            self.assertTrue(j["environment"].get(key), key)
        series = j["series"]
        self.assertTrue(1 <= len(series) <= 3, "series of %d entries for a 2 s phase" % len(series))
        self.assertEqual([s["t_s"] for s in series], list(range(len(series))))
        self.assertLessEqual(sum(s["completed"] for s in series), self.m["requests"]["completed"])
        self.assertGreater(sum(s["completed"] for s in series), 0)
        for name in ("latency", "service_time", "ttfb"):
            h = self.m[name]
            self.assertEqual(h["count"], self.m["requests"]["completed"], name)
            self.assertTrue(h["min_us"] <= h["p50_us"] <= h["p90_us"] <= h["p99_us"] <= h["max_us"], (name, h))
            self.assertEqual(sum(c for _, c in h["hist"]["counts"]), h["count"], name)

    def test_hgrm(self):
        with open(self.hgrm) as f:
            rows, footer = parse_hgrm(f.read())
        completed = self.m["requests"]["completed"]
        self.assertTrue(rows)
        self.assertEqual(rows[-1][2], completed)
        self.assertAlmostEqual(rows[-1][1], 1.0)
        for a, b in zip(rows, rows[1:]):
            self.assertLessEqual(a[0], b[0])
            self.assertLessEqual(a[1], b[1])
            self.assertLessEqual(a[2], b[2])
        self.assertEqual(footer.get("Total count"), completed)
        # values are in ms: the max is the JSON max_us / 1000
        self.assertAlmostEqual(footer["Max"], self.m["latency"]["max_us"] / 1000.0,
                               delta=max(0.01, footer["Max"] * 0.01))


class PoissonTest(PacerTestCase):
    def poisson(self):
        mark = _ngx.log_mark()
        run = self.run_ok([_ngx.url("/hello"), "--rate", 2000, "--duration", "2s", "--drain", "2s",
                           "--arrival", "poisson", "--seed", 7])
        m = run.json["measure"]
        self.assertEqual(run.json["plan"]["arrival"], "poisson")
        self.assertEqual(run.json["plan"]["seed"], 7)
        self.assertLessEqual(abs(m["requests"]["scheduled"] - 4000), 200, m["requests"])
        self.assertEqual(m["requests"]["sent"], m["requests"]["completed"])
        self.assert_no_errors(m, run)
        self.assertEqual(_ngx.count(mark, path="/hello"), m["requests"]["sent"])
        return m["requests"]["scheduled"]

    def test_poisson_schedule_is_seeded(self):
        first = self.poisson()
        self.assertEqual(self.poisson(), first, "same seed, different schedule")


class InterruptTest(PacerTestCase):
    def test_sigint_writes_interrupted_result(self):
        run = harness.run_pacer([_ngx.url("/hello"), "--rate", 1000, "--duration", "30s"],
                                timeout=20.0, actions=[(1.5, lambda pid: os.kill(pid, signal.SIGINT))])
        self.assertFalse(run.timed_out, harness.describe(run))
        self.assertEqual(run.code, 130, harness.describe(run))
        self.assertLess(run.elapsed_s, 1.5 + 5.0, "pacer took %.1fs to stop after SIGINT" % run.elapsed_s)
        self.assertIsNotNone(run.json, "no JSON written after SIGINT\n" + harness.describe(run))
        self.assertTrue(run.json["interrupted"])
        self.assertGreater(run.json["measure"]["requests"]["completed"], 0)
        self.assert_accounted(run.json["measure"], run)


if __name__ == "__main__":
    unittest.main()
