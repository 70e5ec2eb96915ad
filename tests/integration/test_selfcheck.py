"""The generator's self-check (docs/selfcheck.md), against targets whose
truth is known: a number pacer set is never published as the target's.

- A stalled generator (pacer's own process stopped for 100 ms in every
  500 ms with SIGSTOP/SIGCONT, a noisy neighbour) ramping against nginx's
  1,000 requests/s limit_req: either the right capacity (1,000, between it
  and 1,250) or a lower bound with exit 4; never a wrong exact figure.
- A ramp decided by its errors clause (a 3,000 requests/s limiter answering
  503 above it) exits 1, or 0 with a --require it meets: not 4, though the
  machine may make pacer late beside sub-millisecond latencies.
- The machine's floor: `pacer calibrate`, generator.floor in every result
  (with a loopback round trip when the address connected to is local, after
  --connect-to), --calibrate 0, and the report's section.
- --realtime: granted as root, refused in one line without CAP_SYS_NICE,
  the run going on.

The ramps against the limiter measure lateness: they run alone (suite.py
ALONE)."""

import json
import os
import shutil
import signal
import subprocess
import tempfile
import unittest

import harness
from harness import PacerTestCase, describe

LIMIT_PER_S = 1000


def setUpModule():
    harness.require_pacer()


def _limiter_http(box):
    def extra():
        box[0] = harness.free_port()
        return ("limit_req_zone $server_name zone=self1k:1m rate=%dr/s;\n"
                "server { listen 127.0.0.1:%d; server_name self1k;\n"
                "  location = /ready { access_log off; return 200 \"ready\\n\"; }\n"
                "  location = /limited1k { limit_req zone=self1k burst=50 nodelay; empty_gif; }\n"
                "}\n" % (LIMIT_PER_S, box[0]))
    return extra


def stall(seconds, first=0.7, every=0.5, length=0.1):
    """Actions for run_pacer: pacer's own PID stopped for `length` seconds
    in every `every`, from `first` on."""
    acts, t = [], first
    while t < seconds:
        acts.append((t, lambda pid: os.kill(pid, signal.SIGSTOP)))
        acts.append((t + length, lambda pid: os.kill(pid, signal.SIGCONT)))
        t += every
    return acts


def decisive(steps):
    """The steps that decide (a step measured again does not)."""
    return [s for s in steps if not s.get("retried")]


class StalledGeneratorTest(PacerTestCase):
    """A ramp whose generator is stalled from outside never states a
    capacity pacer set as the target's."""

    STEPS = "250,500,750,1000,1250,1500,2000"

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        box = [None]
        cls.ngx = harness.Nginx(extra_http=_limiter_http(box)).start()
        cls.url = "http://127.0.0.1:%d/limited1k" % box[0]

    @classmethod
    def tearDownClass(cls):
        cls.ngx.stop()

    def ramp(self, actions=()):
        return harness.run_pacer(
            [self.url, "--steps", self.STEPS, "--step-duration", "2s", "--step-warmup", "0.5s",
             "--slo", "p99<100ms,errors<1%", "--connections", 32, "--calibrate", "0"],
            subcommand="ramp", limited_ok=False, timeout=150, actions=actions)

    def check_truth(self, run):
        """Either the capacity is the limiter's, exactly, or it is a lower
        bound at or under it, said so, with exit 4."""
        r = run.json
        self.assertIsNotNone(r, describe(run))
        hp = r["highest_passing"]
        bound = hp["bound"] if hp else None
        if bound == "exact":
            self.assertEqual(hp["offered_per_s"], LIMIT_PER_S, describe(run))
            self.assertEqual(hp["below_per_s"], 1250, describe(run))
            self.assertEqual(run.code, 1, describe(run))
            return "exact"
        # not exact: a lower bound (or nothing), and exit 4
        self.assertEqual(run.code, 4, describe(run))
        self.assertGreaterEqual(r["inconclusive_steps"], 1, describe(run))
        if hp:
            self.assertEqual(bound, "lower", describe(run))
            self.assertLessEqual(hp["offered_per_s"], LIMIT_PER_S, describe(run))
        last = decisive(r["steps"])[-1]
        self.assertTrue(last["verdict"]["inconclusive"], describe(run))
        self.assertIn("within pacer's share", last["verdict"]["why"])
        self.assertGreaterEqual(last["verdict"]["material"], [])
        # the inconclusive step was measured again (--retries 2)
        same = [s for s in r["steps"] if s["offered_per_s"] == last["offered_per_s"]]
        self.assertEqual([s["attempt"] for s in same], [1, 2, 3], describe(run))
        self.assertEqual([s["retried"] for s in same], [True, True, False])
        # the summary says it in words, once
        self.assertIn("at least", run.stdout)
        self.assertIn("inconclusive", run.stdout)
        return "lower"

    def test_stalled_generator_never_a_wrong_exact_capacity(self):
        run = self.ramp(stall(150))
        got = self.check_truth(run)
        steps = run.json["steps"]
        # the stall showed: requests were counted lagged in the steps it hit
        self.assertTrue(any(s["measure"]["requests"]["lagged"] > 0 for s in steps),
                        describe(run))
        print("  stalled: %s, capacity %s, steps %s" % (
            got, (run.json["highest_passing"] or {}).get("offered_per_s"),
            [(s["offered_per_s"], "i" if s["verdict"]["inconclusive"] else
              "p" if s["verdict"]["pass"] else "f") for s in steps]))

    def test_unstalled_finds_the_limit(self):
        run = self.ramp()
        got = self.check_truth(run)
        if got != "exact":
            self.skipTest("the machine kept pacer late even without a stall: %s" %
                          [s["verdict"]["why"] for s in run.json["steps"]
                           if s["verdict"]["inconclusive"]][:2])


class ErrorsDecideTest(PacerTestCase):
    """A ramp that fails on its rate limiter's 503s exits 1 (0 with a
    --require it meets), whatever pacer's lateness beside sub-millisecond
    latencies: no verdict depended on it."""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.ngx = harness.Nginx().start()

    @classmethod
    def tearDownClass(cls):
        cls.ngx.stop()

    def ramp(self, *extra):
        return harness.run_pacer(
            [self.ngx.url("/limited"), "--steps", "1000,2000,5000", "--step-duration", "1.5s",
             "--step-warmup", "0.5s", "--slo", "p99<100ms,errors<1%", "--connections", 32,
             "--calibrate", "0"] + list(extra),
            subcommand="ramp", limited_ok=False, timeout=90)

    def busy(self, run):
        """Skips, with the figures, when a step stayed inconclusive: this
        machine kept pacer late through every retry."""
        r = run.json or {}
        open_steps = [s for s in decisive(r.get("steps", [])) if s["verdict"]["inconclusive"]]
        if run.code == 4 and open_steps:
            self.skipTest("the machine kept pacer late: %s" % open_steps[0]["verdict"]["why"])

    def test_errors_clause_exits_1(self):
        run = self.ramp()
        self.busy(run)
        self.assertEqual(run.code, 1, describe(run))
        r = run.json
        self.assertEqual(r["highest_passing"]["offered_per_s"], 2000)
        self.assertEqual(r["highest_passing"]["bound"], "exact")
        self.assertEqual(r["highest_passing"]["below_per_s"], 5000)
        failing = [s for s in decisive(r["steps"]) if not s["verdict"]["pass"]]
        self.assertEqual(len(failing), 1)
        self.assertIn("errors", failing[0]["verdict"]["reason"])
        self.assertFalse(failing[0]["verdict"]["inconclusive"])
        self.assertEqual(failing[0]["verdict"]["material"], [])
        self.assertEqual(r["inconclusive_steps"], 0)

    def test_met_require_exits_0(self):
        run = self.ramp("--require", "2000")
        self.busy(run)
        self.assertEqual(run.code, 0, describe(run))


class FloorTest(PacerTestCase):
    """The machine's floor: on its own, in every result, and in the report."""

    def test_calibrate_json(self):
        r = subprocess.run([harness.pacer_bin(), "calibrate", "--json", "--duration", "200ms"],
                           capture_output=True, text=True, timeout=30)
        self.assertEqual(r.returncode, 0, r.stderr)
        g = json.loads(r.stdout)
        f = g["floor"]
        self.assertEqual(f["method"], "sleep")
        self.assertGreater(f["samples"], 50)
        self.assertLessEqual(f["wake_p50_us"], f["wake_p99_us"])
        self.assertLessEqual(f["wake_p99_us"], f["wake_max_us"])
        self.assertGreater(f["loopback_rtt"]["samples"], 10)
        self.assertFalse(g["realtime"]["requested"])

    def test_calibrate_text_and_precise(self):
        r = subprocess.run([harness.pacer_bin(), "calibrate", "--precise", "--threads", "2",
                            "--duration", "100ms"], capture_output=True, text=True, timeout=30)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("2 worker threads", r.stdout)
        self.assertIn("epoll wait", r.stdout)
        self.assertIn("is pacer's to promise on this machine", r.stdout)
        bad = subprocess.run([harness.pacer_bin(), "calibrate", "--threads", "0"],
                             capture_output=True, text=True, timeout=30)
        self.assertEqual(bad.returncode, 2)
        self.assertIn("--threads", bad.stderr)

    def test_run_records_the_floor(self):
        with harness.Nginx() as ngx:
            # a name that is not loopback in the URL, loopback where it connects
            run = self.run_ok([ngx.url("/hello").replace("127.0.0.1", "target.example"),
                               "--connect-to", "127.0.0.1:%d" % ngx.port, "--rate", 200,
                               "--duration", "1s", "--calibrate", "200ms"])
            f = run.json["generator"]["floor"]
            self.assertGreater(f["samples"], 0)
            self.assertIsNotNone(f["loopback_rtt"], "judged local from the address connected to")
            self.assertAlmostEqual(run.json["plan"]["calibrate_s"], 0.2)
            off = self.run_ok([ngx.url("/hello"), "--rate", 200, "--duration", "0.5s",
                               "--calibrate", "0"])
            self.assertIsNone(off.json["generator"]["floor"])
            text = harness.words(harness.report_text(run.out_path))
            self.assertIn("not pacer's to promise", text)

    def test_ramp_and_compare_record_it(self):
        ramp = harness.run_pacer(["--self-contained", "--steps", "100,200", "--step-duration",
                                  "0.3s", "--step-warmup", "0s", "--calibrate", "100ms"],
                                 subcommand="ramp", timeout=60)
        self.assertIn(ramp.code, (0, 4), describe(ramp))
        self.assertGreater(ramp.json["generator"]["floor"]["samples"], 0)
        self.assertEqual(ramp.json["plan"]["retries"], 2)


class RealtimeTest(PacerTestCase):
    """--realtime: granted where the process may, one line and the normal
    priority where it may not; recorded either way."""

    ARGS = ["--self-contained", "--rate", 200, "--duration", "0.5s", "--realtime",
            "--calibrate", "100ms"]

    def test_granted_as_root(self):
        if os.geteuid() != 0:
            self.skipTest("not root: SCHED_RR needs CAP_SYS_NICE")
        run = harness.run_pacer(self.ARGS, timeout=60)
        self.assertIn(run.code, (0, 4), describe(run))
        rt = run.json["generator"]["realtime"]
        self.assertEqual(rt, {"requested": True, "granted": True, "refused": None})
        self.assertTrue(run.json["generator"]["floor"]["realtime"])
        self.assertTrue(run.json["plan"]["realtime"])
        self.assertNotIn("refused", run.stderr)

    def test_refused_in_one_line(self):
        setpriv = shutil.which("setpriv")
        if not setpriv:
            self.skipTest("no setpriv (util-linux) to drop CAP_SYS_NICE")
        d = tempfile.mkdtemp(prefix="pacer-rt-")
        self.addCleanup(shutil.rmtree, d, True)
        out = os.path.join(d, "r.json")
        argv = [setpriv, "--inh-caps=-sys_nice", "--bounding-set=-sys_nice",
                harness.pacer_bin(), "run"] + [str(a) for a in self.ARGS] + [
                    "--limited-ok", "-o", out]
        r = subprocess.run(argv, capture_output=True, text=True, timeout=60)
        self.assertEqual(r.returncode, 0, r.stderr)
        lines = [l for l in r.stderr.splitlines() if "--realtime refused" in l]
        self.assertEqual(len(lines), 1, r.stderr)
        with open(out) as f:
            rt = json.load(f)["generator"]["realtime"]
        self.assertTrue(rt["requested"])
        self.assertFalse(rt["granted"])
        self.assertTrue(rt["refused"])


if __name__ == "__main__":
    harness.run_suite()
