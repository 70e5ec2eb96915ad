"""Failures are failures: a response that fails the success rule is an error,
in every figure. Against real nginx:

- a ramp against `limit_req` at 3,000 requests/s (503 above it) with a
  success-based SLO finds its capacity within 10 %, and its table and JSON
  show the 503s as errors;
- a target whose successes are slow (20 ms) and whose failures are fast
  (an immediate 503) keeps the latency of each apart, and an SLO on
  `ok.p99` judges the successes alone;
- a --success rule that every response fails makes every request an error,
  counted by status, with the transport errors apart;
- the counts agree with nginx's access log.
"""

import re
import unittest

import harness
from harness import Nginx, PacerTestCase, describe

LIMIT_PER_S = 3000  # nginx.conf.in: zone pacer_limit


def setUpModule():
    harness.require_pacer()


def ms(us):
    return us / 1000.0


class LimitReqRampTest(PacerTestCase):
    def test_capacity_of_a_rate_limiter(self):
        with Nginx() as ngx:
            for _attempt in range(3):
                run = harness.run_pacer(
                    [ngx.url("/limited"), "--from", 500, "--to", 12000, "--factor", 2, "--refine",
                     "--slo", "success>=99%", "--step-duration", "1s", "--step-warmup", "0.3s",
                     "--connections", 64, "--threads", 1],
                    subcommand="ramp", timeout=120.0, limited_ok=False)
                # exit 4: the generator's own lateness decided the first failing
                # step (a busy machine), so the capacity found is not nginx's
                if run.code != 4:
                    break
        if run.code == 4:
            self.skipTest("the generator was limited on its deciding step 3 times: " + run.stdout)
        self.assertFalse(run.timed_out, describe(run))
        self.assertIn(run.code, (0, 1), describe(run))
        res = run.json
        self.assertIsNotNone(res, describe(run))
        hp = res["highest_passing"]
        self.assertIsNotNone(hp, describe(run))
        found = hp["offered_per_s"]
        self.assertLessEqual(abs(found - LIMIT_PER_S), 0.10 * LIMIT_PER_S,
                             "found %.0f req/s for a %d req/s limiter\n%s"
                             % (found, LIMIT_PER_S, run.stdout))
        # the steps above the limit failed on their 503s, which are errors
        over = [s for s in res["steps"] if s["offered_per_s"] >= 1.3 * LIMIT_PER_S]
        self.assertTrue(over, run.stdout)
        for s in over:
            m = s["measure"]
            n503 = m["responses"]["by_status"].get("503", 0)
            self.assertGreater(n503, 0, s)
            self.assertFalse(s["verdict"]["pass"], s)
            self.assertIn("success", s["verdict"]["reason"])
            self.assertEqual(m["errors"]["by_status"].get("503"), n503, m["errors"])
            self.assertEqual(m["errors"]["total"],
                             n503 + m["errors"]["transport"], m["errors"])
            self.assertAlmostEqual(s["error_pct"],
                                   100.0 * m["errors"]["total"] / m["requests"]["sent"], places=3)
            self.assertAlmostEqual(s["success_pct"] + s["error_pct"], 100.0, delta=0.5)
        # the table's errors column says so too (not 0.00 %)
        rows = [l for l in run.stdout.splitlines() if re.match(r"\s+r?\d+\s+[\d,]+\s", l)]
        self.assertTrue(rows, run.stdout)
        worst = max(s["error_pct"] for s in over)
        self.assertIn("%.2f%%" % worst, run.stdout)
        self.assertRegex(run.stdout, r"errors [\d,]+ \([\d.]+ %\): 503 \S+[\d,]+")


class LatencyByOutcomeTest(PacerTestCase):
    def setUp(self):
        if not harness.echo_module():
            self.skipTest("nginx echo module (libnginx-mod-http-echo) not installed")

    def test_fast_failures_do_not_flatter_the_successes(self):
        with Nginx() as ngx:
            mark = ngx.log_mark()
            run = harness.run_pacer(
                [ngx.url("/limited_slow"), "--rate", 400, "--duration", "3s", "--warmup", "0.5s",
                 "--connections", 64, "--threads", 1], timeout=40.0)
            logged = ngx.counts_by(mark)
        self.assertEqual(run.code, 0, describe(run))
        m = run.json["measure"]
        w = run.json["warmup"]
        ok, failed, all_ = m["latency_ok"], m["latency_failed"], m["latency"]
        n503 = m["responses"]["by_status"].get("503", 0)
        n200 = m["responses"]["by_status"].get("200", 0)
        self.assertGreater(n503, 0.2 * m["requests"]["sent"], m["responses"])
        self.assertGreater(n200, 0.2 * m["requests"]["sent"], m["responses"])
        # every request in exactly one of the two
        self.assertEqual(ok["count"] + failed["count"], all_["count"])
        self.assertEqual(ok["count"], n200)
        self.assertEqual(failed["count"], n503 + m["transport_errors"]["timeout"])
        # the successes took the 20 ms nginx sleeps; the 503s came at once
        self.assertGreaterEqual(ms(ok["p50_us"]), 19.0, ok)
        self.assertLess(ms(failed["p50_us"]), 5.0, failed)
        # errors: the 503s, by status, with no transport error
        self.assertEqual(m["errors"]["total"], n503, m["errors"])
        self.assertEqual(m["errors"]["failed_responses"], n503)
        self.assertEqual(m["errors"]["transport"], 0)
        self.assertAlmostEqual(m["error_pct"], 100.0 * n503 / m["requests"]["sent"], places=3)
        self.assertEqual(m["success"]["ok"], n200)
        # the counts are nginx's
        self.assertEqual(logged.get(("/limited_slow", 503), 0),
                         n503 + w["responses"]["by_status"].get("503", 0))
        self.assertEqual(logged.get(("/limited_slow", 200), 0),
                         n200 + w["responses"]["by_status"].get("200", 0))
        # the terminal shows both apart, and the errors by status
        self.assertRegex(run.stdout, r"\n\s+… of the requests that succeeded\s+\d")
        self.assertRegex(run.stdout, r"\n\s+… of the requests that failed\s+\d")
        flat = " ".join(run.stdout.split())  # the summary is wrapped at 78 columns
        self.assertIn("%s requests did not succeed (status 503: %s): %.2f%% of those sent."
                      % ("{:,}".format(n503), "{:,}".format(n503), m["error_pct"]), flat)
        self.assertTrue(any(w.startswith("errors %s (%.2f %%): 503 \u00d7%s; transport 0"
                                         % ("{:,}".format(n503), m["error_pct"],
                                            "{:,}".format(n503)))
                            for w in run.json["warnings"]), run.json["warnings"])

    def test_ok_latency_in_an_slo(self):
        # 600/s against a 200/s limiter: two thirds are fast 503s, so the
        # blend's median is a failure's and the successes' median is 20 ms
        with Nginx() as ngx:
            run = harness.run_pacer(
                [ngx.url("/limited_slow"), "--steps", 600, "--step-duration", "1s",
                 "--step-warmup", "0.3s", "--connections", 64,
                 "--slo", "p50<10ms,failed.p50<10ms,ok.p50<10ms"],
                subcommand="ramp", timeout=40.0)
        self.assertEqual(run.code, 1, describe(run))
        step = run.json["steps"][0]
        clauses = [c.split(" ")[0] for c in step["verdict"]["reason"][len("Fail "):].split("; ")]
        # the blend and the failures are fast; the successes are not
        self.assertEqual(clauses, ["ok.p50"], step["verdict"]["reason"])


class SuccessRuleTest(PacerTestCase):
    def test_every_response_failing_the_rule_is_an_error(self):
        with Nginx() as ngx:
            run = harness.run_pacer(
                [ngx.url("/hello"), "--requests", 500, "--concurrency", 4,
                 "--success", "status == 404"], timeout=30.0)
        self.assertEqual(run.code, 0, describe(run))
        m = run.json["measure"]
        self.assertEqual(m["requests"]["completed"], 500)
        self.assertEqual(m["errors"]["total"], 500, m["errors"])
        self.assertEqual(m["errors"]["by_status"], {"200": 500})
        self.assertEqual(m["error_pct"], 100.0)
        self.assertEqual(m["transport_errors"]["total"], 0)
        self.assertEqual(m["success"]["ok"], 0)
        self.assertEqual(m["latency_failed"]["count"], 500)
        self.assertEqual(m["latency_ok"]["count"], 0)
        flat = " ".join(run.stdout.split())  # the summary is wrapped at 78 columns
        # said once in the summary: the condition, not pacer's warning beside it
        self.assertIn("- 500 requests did not succeed (status 200: 500): 100.00% of those sent.",
                      flat)
        self.assertNotIn("errors 500 (100.00 %)", flat)
        self.assertTrue(any(w.startswith("errors 500 (100.00 %): 200 \u00d7500; transport 0")
                            for w in run.json["warnings"]), run.json["warnings"])


if __name__ == "__main__":
    unittest.main()
