"""pacer ramp: --refine finds the capacity of `pacer serve` with a known
CPU-bound capacity; verdict wording and exit codes for pass, fail, --require
and usage errors; --after-fail; the JSON result of kind "ramp"; geometric
ramps; Ctrl-C.

The capacity test runs `pacer serve` as a separate process pinned to one CPU
and the ramp pinned to another (harness.pin_cpus). Every other test drives
pacer's embedded target (--self-contained) with short steps, using either
the built-in `hello` plan or plans/ramp_latency.yaml, whose fixed 10 ms
answers on a single connection (-c 1) make a step far above 100 req/s fail
and a step far below it pass, for certain, without depending on CPU speed.

DeadTargetTest is marked as an expected failure: it documents a known bug
(a step without a single response passes a latency SLO) and turns into an
"unexpected success" once that is fixed."""

import json
import os
import re
import signal
import tempfile
import time
import unittest

import harness
from harness import PacerServe, PacerTestCase, describe, words

PLANS = os.path.join(harness.HERE, "plans")
CPU_PLAN = os.path.join(PLANS, "ramp_cpu.yaml")          # 1 ms of CPU per request
LATENCY_PLAN = os.path.join(PLANS, "ramp_latency.yaml")  # 10 ms fixed, no CPU
WORK_US = 1000.0
# a step that passed, as the JSON writes its verdict (docs/selfcheck.md)
PASS_VERDICT = {"pass": True, "inconclusive": False, "reason": "Pass", "why": None, "material": []}


def setUpModule():
    harness.require_pacer()


def ramp(args, **kw):
    """run_pacer for `pacer ramp ARGS... --out DIR/result.json`."""
    kw.setdefault("timeout", 20.0)
    return harness.run_pacer(args, subcommand="ramp", **kw)


def short(steps, *extra, duration="0.4s", warmup="0.1s"):
    """Arguments of a short ramp: --steps, step duration and warm-up."""
    return ["--steps", steps, "--step-duration", duration, "--step-warmup", warmup] + list(extra)


def overload(*extra):
    """A self-contained ramp on plans/ramp_latency.yaml with one connection
    (at most 100 req/s): 20/s passes p99<100ms, 200/s and 300/s fail it."""
    return (["--self-contained=" + LATENCY_PLAN, "/", "-c", 1, "--slo", "p99<100ms"]
            + short("20,200,300") + list(extra))


def run_queue_wait_s(pid):
    """Seconds the threads of process pid have spent runnable but waiting for
    a CPU (/proc/PID/task/*/schedstat, second field): time another program
    took from it."""
    total = 0
    for tid in os.listdir("/proc/%d/task" % pid):
        try:
            with open("/proc/%d/task/%s/schedstat" % (pid, tid)) as f:
                total += int(f.read().split()[1])
        except (OSError, IndexError, ValueError):
            pass
    return total / 1e9


def table_rows(stdout):
    """{step label: row text} of the step table of the summary (the text
    report's steps table, under the headline: "1", "2", "r3", ...)."""
    rows = {}
    lines = stdout.splitlines()
    try:
        start = [i for i, ln in enumerate(lines) if ln.startswith("  Step  Offered/s ")][0] + 1
    except IndexError:
        return rows
    for line in lines[start:]:
        m = re.match(r"\s+(r?\d+)\s+[\d,.]+\s+[\d,.]+\s", line)
        if not m:
            break
        rows[m.group(1)] = line.strip()
    return rows


def live_rows(stdout):
    """{step label: line} of the progress lines printed as each step is
    judged ("  step 2: 200 req/s offered, ...: Pass")."""
    rows = {}
    for line in stdout.splitlines():
        m = re.match(r"  step (r?\d+): ", line)
        if m:
            rows[m.group(1)] = line.strip()
    return rows


class RampCase(PacerTestCase):
    def ramp_code(self, args, code, **kw):
        """ramp(args), asserting the exit code and a JSON result of kind
        "ramp" with one step per table row."""
        run = ramp(args, **kw)
        self.assertFalse(run.timed_out, describe(run))
        self.assertEqual(run.code, code, describe(run))
        self.assertIsNotNone(run.json, "no JSON result\n" + describe(run))
        self.assertEqual(run.json["kind"], "ramp")
        if "-q" not in args:
            self.assertEqual(len(table_rows(run.stdout)), len(run.json["steps"]), run.stdout)
            self.assertEqual(len(live_rows(run.stdout)), len(run.json["steps"]), run.stdout)
            self.assertEqual(run.stdout.count("  Step  Offered/s "), 1, run.stdout)  # one table
        return run

    def decisive(self, run):
        """The steps that decide: a step pacer's own lateness left
        inconclusive and measured again is passed over (docs/selfcheck.md);
        one that stayed so skips the test (the machine kept pacer late)."""
        steps = [s for s in run.json["steps"] if not s.get("retried")]
        stuck = [s for s in steps if s["verdict"].get("inconclusive")]
        if stuck:
            self.skipTest("the machine kept pacer late: step at %s/s inconclusive: %s" %
                          (stuck[0]["offered_per_s"], stuck[0]["verdict"]["why"]))
        return steps

    def offered(self, run):
        return [s["offered_per_s"] for s in self.decisive(run)]

    def verdicts(self, run):
        return [s["verdict"]["pass"] for s in self.decisive(run)]


# ---------------------------------------------------------------- capacity


class CapacityTest(RampCase):
    """`pacer serve` with 1 ms of CPU per request on one thread: a capacity
    of 1e6/W = 1,000 req/s, less the server's own per-request overhead (tens
    of us: a few %). The ramp 250, 500, 750, 1000, 1250 with --refine at
    5 % must find it within +-10 %.

    The reference is measured, not assumed: a closed-loop `pacer run` with 8
    connections (the server never idle) just before and just after the ramp,
    on the same pinned CPUs; their mean is the capacity the ramp is compared
    with. Then, more loosely, the ramp's answer must be within +-20 % of
    1e6/W itself.

    Why +-10 % holds: --refine stops when the last passing and first failing
    rates are within 5 %; and a rate above capacity passes p99<100ms only
    while its queue stays short: overloaded by a fraction x, the wait grows
    by x seconds per second, so over a 2.5 s step (warm-up included) a step
    x > 4 % over capacity fails. Below capacity (750 is 80 % of it) latency
    is a few ms, far under 100 ms.

    A capacity can only be measured on CPUs that are not busy with something
    else. When the machine was (the server got under 85 % of its CPU in a
    calibration run, or it waited on its run queue for over 3 % of the ramp,
    or the generator's loop lag p99 exceeded 20 ms in a step), the test is
    skipped with those figures, never passed."""

    STEPS = "250,500,750,1000,1250"

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.pins = harness.pin_cpus()
        if cls.pins is None:
            raise unittest.SkipTest("needs 2 CPUs and taskset to pin server and generator apart")
        cls.srv = PacerServe(CPU_PLAN, cpu=cls.pins[0]).start()

    @classmethod
    def tearDownClass(cls):
        cls.srv.stop()

    def calibrate(self):
        """Closed-loop capacity: (achieved req/s, server CPU share of the run)."""
        cpu0 = self.srv.cpu_s()
        with harness.pinned(self.pins[1]):
            run = harness.run_pacer([self.srv.url("/work"), "--concurrency", 8, "--duration", "2s",
                                     "--warmup", "0.2s"], timeout=20.0)
        cpu1 = self.srv.cpu_s()
        self.assertEqual(run.code, 0, describe(run))
        m = run.json["measure"]
        self.assert_no_errors(m, run)
        return m["rate"]["achieved_per_s"], (cpu1 - cpu0) / run.elapsed_s

    def test_refine_finds_capacity(self):
        before, util_before = self.calibrate()
        wait0, t0 = run_queue_wait_s(self.srv.pid), time.monotonic()
        with harness.pinned(self.pins[1]):
            run = self.ramp_code([self.srv.url("/work"), "--steps", self.STEPS, "--step-duration", "2s",
                                  "--step-warmup", "0.5s", "--slo", "p99<100ms", "--refine",
                                  "--precision", "5%"], 1, timeout=50.0)
        server_waited = (run_queue_wait_s(self.srv.pid) - wait0) / (time.monotonic() - t0)
        after, util_after = self.calibrate()
        j = run.json
        steps = j["steps"]
        loop_lag_ms = max(s["measure"]["loop_lag"]["p99_us"] for s in steps) / 1000
        busy = []
        if min(util_before, util_after) < 0.85:
            busy.append("server CPU in calibration %.0f %% / %.0f %% (< 85 %%)"
                        % (100 * util_before, 100 * util_after))
        if server_waited > 0.03:
            busy.append("server waited for its CPU %.1f %% of the ramp (> 3 %%)" % (100 * server_waited))
        if loop_lag_ms > 20:
            busy.append("generator loop lag p99 up to %.1f ms (> 20 ms)" % loop_lag_ms)
        if busy:
            self.skipTest("machine busy, capacity not measurable: " + "; ".join(busy))
        reference = (before + after) / 2
        hp = j["highest_passing"]
        self.assertIsNotNone(hp, describe(run))
        found = hp["offered_per_s"]
        trace = ", ".join("%s%.0f %s" % ("r" if s["refine"] else "", s["offered_per_s"],
                                         "pass" if s["verdict"]["pass"] else "FAIL") for s in steps)
        msg = ("ramp found %.0f req/s; closed-loop capacity %.0f before (server CPU %.0f %%) and "
               "%.0f after (%.0f %%), 1e6/W = %.0f; server run-queue wait %.1f %%, loop lag p99 "
               "up to %.1f ms; steps: %s\n%s"
               % (found, before, 100 * util_before, after, 100 * util_after, 1e6 / WORK_US,
                  100 * server_waited, loop_lag_ms, trace, run.stdout))

        # the shape of a refined ramp
        planned = [s for s in steps if not s["refine"]]
        refined = [s for s in steps if s["refine"]]
        self.assertEqual([s["offered_per_s"] for s in planned],
                         [250, 500, 750, 1000, 1250][:len(planned)], msg)
        self.assertTrue(all(s["verdict"]["pass"] for s in planned[:3]), msg)
        self.assertFalse(planned[-1]["verdict"]["pass"], msg)  # stopped at the first fail
        self.assertTrue(all(s["verdict"]["pass"] for s in planned[:-1]), msg)
        self.assertGreater(len(refined), 0, msg)
        lo, hi = planned[-2]["offered_per_s"], planned[-1]["offered_per_s"]
        for s in refined:
            self.assertTrue(lo < s["offered_per_s"] < hi, msg)
        for s in steps:
            self.assertEqual(s["error_pct"], 0, msg)
        self.assertEqual(steps[hp["step"] - 1]["offered_per_s"], found, msg)
        self.assertTrue(steps[hp["step"] - 1]["verdict"]["pass"], msg)
        # refined until the first failing rate above it is within 5 %
        fail_above = min(s["offered_per_s"] for s in steps
                         if not s["verdict"]["pass"] and s["offered_per_s"] > found)
        self.assertLessEqual((fail_above - found) / found, 0.05 + 1e-9, msg)
        self.assertEqual(j["plan"]["precision"], 0.05)
        self.assertTrue(j["plan"]["refine"])
        self.assertFalse(j["reached_require"])

        # the capacity itself
        self.assertLessEqual(abs(found - reference), 0.10 * reference, msg)
        self.assertLessEqual(abs(found - 1e6 / WORK_US), 0.20 * 1e6 / WORK_US, msg)
        self.assertIn("Highest passing step: step %d, " % hp["step"], words(run.stdout))


# ---------------------------------------------------------------- verdicts and exit codes


class PassTest(RampCase):
    """Every step passes a generous SLO: exit 0, every verdict "Pass"; and
    the JSON result's fields."""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.run_ = ramp(["--self-contained"] + short("100,200", "--slo", " p99 < 1s , errors<1.0% ",
                                                      duration="0.5s"))

    def test_exit_and_verdicts(self):
        run = self.run_
        self.assertEqual(run.code, 0, describe(run))
        self.assertEqual(run.stderr, "")
        self.assertEqual(self.offered(run), [100, 200])
        for s in run.json["steps"]:
            self.assertEqual(s["verdict"], PASS_VERDICT)
            self.assertFalse(s["refine"])
            self.assertFalse(s["interrupted"])
        rows = table_rows(run.stdout)
        self.assertEqual(sorted(rows), ["1", "2"])
        self.assertTrue(rows["1"].endswith("  yes"), rows)
        self.assertTrue(rows["2"].endswith("  yes"), rows)
        self.assertRegex(rows["2"], r"^2\s+200\s")
        live = live_rows(run.stdout)
        self.assertEqual(sorted(live), ["1", "2"])
        self.assertTrue(live["1"].endswith(": Pass"), live)
        self.assertRegex(live["2"], r"^step 2: 200 req/s offered, .*: Pass$")
        self.assertIn("Highest passing step: step 2, 200 requests/s offered", words(run.stdout))
        self.assertIn("SLO  p99 < 1s , errors<1.0% ", run.stdout)  # as written, in the header

    def test_target_cpu_in_the_steps_table(self):
        """The target's CPU at each step, as measured (self-contained: the
        embedded target's threads), is a column of the Markdown and HTML
        steps table, not only in the JSON: its cores busy of the cores it
        had."""
        run = self.run_
        md = harness.run_pacer([run.out_path], out=False, subcommand="report").stdout
        html = harness.run_pacer([run.out_path, "--format", "html"], out=False,
                                 subcommand="report").stdout
        section = md.split("### Steps", 1)[1].split("\n\n", 2)[1]
        lines = section.splitlines()
        self.assertIn("| Target cores busy |", lines[0])
        col = [c.strip() for c in lines[0].split("|")].index("Target cores busy")
        for s, line in zip(run.json["steps"], lines[2:]):
            busy = s["target_resources"]["cores_busy"]
            self.assertEqual([c.strip() for c in line.split("|")][col], "%.2f of 1" % busy, line)
        self.assertTrue('<th class="num">Target cores busy</th>' in html, "no column in the HTML")

    def test_json_result(self):
        j = self.run_.json
        self.assertEqual(j["kind"], "ramp")
        self.assertEqual(j["mode"], "self_contained")
        self.assertFalse(j["interrupted"])
        p = j["plan"]
        self.assertEqual(p["steps_per_s"], [100, 200])
        self.assertEqual(p["slo"], "p99<1s,errors<1%")  # canonical
        self.assertEqual(p["step_duration_s"], 0.5)
        self.assertEqual(p["step_warmup_s"], 0.1)
        self.assertEqual(p["after_fail"], 0)
        self.assertFalse(p["refine"])
        self.assertEqual(p["precision"], 0.05)
        self.assertIsNone(p["require_per_s"])
        self.assertEqual(p["loop"], "open")
        self.assertEqual(j["target"]["plan"], "hello")
        for s, rate in zip(j["steps"], (100, 200)):
            self.assertEqual(s["offered_per_s"], rate)
            m = s["measure"]
            self.assertEqual(m["rate"]["offered_per_s"], rate)
            self.assertEqual(s["achieved_per_s"], m["rate"]["achieved_per_s"])
            self.assertAlmostEqual(s["achieved_per_s"], m["requests"]["completed"] / m["duration_s"],
                                   delta=0.01)
            self.assertGreater(m["requests"]["completed"], 0)
            self.assert_accounted(m)
            self.assertEqual(s["error_pct"], 0)
            lat = m["latency"]
            self.assertEqual(lat["count"], m["requests"]["completed"])
            for k in ("p50_us", "p90_us", "p99_us", "p99_9_us", "max_us"):
                self.assertIn(k, lat)
            self.assertTrue(0 < lat["p50_us"] <= lat["p90_us"] <= lat["p99_us"] <= lat["p99_9_us"]
                            <= lat["max_us"], lat)
            self.assertGreater(s["warmup_completed"], 0)
            self.assertIn("series", s)
        hp = j["highest_passing"]
        self.assertEqual(hp["step"], 2)
        self.assertEqual(hp["offered_per_s"], 200)
        # self-contained: the embedded target's threads (one), not the machine's cores
        self.assertEqual(hp["cores"], 1)
        self.assertEqual(hp["cores_basis"], "embedded_threads")
        self.assertAlmostEqual(hp["per_core_per_s"], 200, places=3)
        self.assertEqual(j["target_cores"], {"cores": 1, "basis": "embedded_threads"})
        for s in j["steps"]:
            w = s["warmup"]
            self.assertEqual(w["requests"]["completed"], s["warmup_completed"])
            self.assertGreater(w["p99_us"], 0)
        first, second = j["steps"][0], j["steps"][1]
        # connections carry over: the first warm-up opens them, later phases find them open
        self.assertEqual(first["warmup"]["connections"]["open_at_start"], 0)
        self.assertGreater(first["warmup"]["connections"]["opened"], 0)
        # (on a busy machine the worker's first turn after the warm-up may
        # come before it has seen its connects complete: still connecting
        # then, but carried over all the same, not opened anew)
        mc = first["measure"]["connections"]
        self.assertGreater(mc["open_at_start"] + mc["connecting_at_start"], 0, mc)
        self.assertGreaterEqual(second["warmup"]["connections"]["open_at_start"],
                                first["measure"]["connections"]["open_at_start"])
        self.assertIn("knee_per_s", j)
        self.assertIn(j["knee_per_s"], (None, 200))
        self.assertTrue(j["reached_require"])
        self.assertTrue(any("self-contained" in w for w in j["warnings"]), j["warnings"])

    def test_per_core_over_the_targets_cores(self):
        """The per-core figure divides by the embedded target's threads
        (--target-threads 2), or by --target-cores when given; the JSON keeps
        it, with cpu_limited false: hello at 200 requests/s keeps a sliver of
        a core busy, so the summary gives no figure per core and says why."""
        run = self.ramp_code(["--self-contained", "--target-threads", 2] + short("100,200"), 0)
        hp = run.json["highest_passing"]
        self.assertEqual((hp["cores"], hp["cores_basis"]), (2, "embedded_threads"))
        self.assertAlmostEqual(hp["per_core_per_s"], 100, places=3)
        self.assertIs(hp["cpu_limited"], False)
        self.assertNotIn("per core over", words(run.stdout))
        flat = words(harness.run_pacer([run.out_path], out=False, subcommand="report").stdout)
        self.assertNotIn("per core over", flat)
        self.assertRegex(flat, r"No per-core figure: the target's CPU was not its limit: at step "
                         r"2 it kept [0-9.]+ cores busy of the 2 it could use, under 90 %\.")
        run = self.ramp_code(["--self-contained", "--target-cores", 4] + short("100,200"), 0)
        hp = run.json["highest_passing"]
        self.assertEqual((hp["cores"], hp["cores_basis"]), (4, "option"))
        self.assertAlmostEqual(hp["per_core_per_s"], 50, places=3)
        self.assertIs(hp["cpu_limited"], False)
        self.assertNotIn("per core over", words(run.stdout))
        # the figure is given when the CPU was the limit: the result's own
        # flag decides, else (an older result) the deciding step's cores busy
        doc = dict(run.json)
        d = tempfile.mkdtemp(prefix="pacer-percore-")
        cases = (("flag", True, None, True), ("busy", None, 3.7, True), ("idle", None, 0.5, False))
        for name, flag, busy, shown in cases:
            with self.subTest(case=name):
                x = json.loads(json.dumps(doc))
                if flag is None:
                    del x["highest_passing"]["cpu_limited"]
                else:
                    x["highest_passing"]["cpu_limited"] = flag
                if busy is not None:
                    x["steps"][-1]["target_resources"]["cores_busy"] = busy
                path = os.path.join(d, name + ".json")
                with open(path, "w") as f:
                    json.dump(x, f)
                text = words(harness.report_text(path))
                phrase = "about 50 per core over 4 cores (given with --target-cores)"
                self.assertEqual(phrase in text, shown, text)

    def test_require_above_highest_passing(self):
        """Every step passed, but not at the required rate: exit 1."""
        run = self.ramp_code(["--self-contained"] + short("100,200", "--require", 250), 1)
        self.assertTrue(all(self.verdicts(run)))
        self.assertFalse(run.json["reached_require"])
        self.assertEqual(run.json["plan"]["require_per_s"], 250)
        self.assertIn("Required 250 requests/s: NOT reached.", words(run.stdout))


class FailTest(RampCase):
    """An SLO that fails at the first step: exit 1, the reason in words."""

    def test_first_step_fails(self):
        run = self.ramp_code(["--self-contained"] + short("100,200,300", "--slo", "p50<1us"), 1)
        steps = run.json["steps"]
        self.assertEqual(len(steps), 1)  # stopped after the first failing step
        reason = steps[0]["verdict"]["reason"]
        self.assertFalse(steps[0]["verdict"]["pass"])
        self.assertTrue(reason.startswith("Fail p50 "), reason)
        self.assertRegex(reason, r"^Fail p50 [\d.]+ (ns|µs|ms|s) > 1us$")
        row = table_rows(run.stdout)["1"]
        self.assertRegex(row, r"  no: p50 [\d.]+ \S+ > 1us$")
        self.assertTrue(row.endswith("no: " + reason[len("Fail "):]), row)
        self.assertTrue(live_rows(run.stdout)["1"].endswith(": " + reason), run.stdout)
        self.assertIsNone(run.json["highest_passing"])
        self.assertFalse(run.json["reached_require"])
        self.assertEqual(run.json["plan"]["slo"], "p50<1us")
        self.assertIn("No step passed the SLO p50<1us.", words(run.stdout))

    def test_every_failing_clause_named(self):
        run = self.ramp_code(["--self-contained"] + short("100", "--slo", "p50<1us,max<2us,errors<1%"), 1)
        reason = run.json["steps"][0]["verdict"]["reason"]
        self.assertRegex(reason, r"^Fail p50 [\d.]+ \S+ > 1us; max [\d.]+ \S+ > 2us$")
        # four failing clauses: the summary's step table keeps the verdict whole
        run = self.ramp_code(["--self-contained"] + short("100", "--slo", "p50<1us,p90<1us,p99<1us,max<2us"), 1)
        reason = run.json["steps"][0]["verdict"]["reason"]
        self.assertRegex(reason, r"^Fail p50 .*; p90 .*; p99 .*; max [\d.]+ \S+ > 2us$")
        self.assertGreater(len(reason), 60)
        self.assertTrue(table_rows(run.stdout)["1"].endswith("  no: " + reason[len("Fail "):]),
                        run.stdout)

    def test_stops_after_first_fail(self):
        """20/s passes, 200/s fails: 300/s is never run."""
        run = self.ramp_code(overload(), 1)
        self.assertEqual(self.offered(run), [20, 200], run.stdout)
        self.assertEqual(self.verdicts(run), [True, False], run.stdout)
        self.assertRegex(run.json["steps"][1]["verdict"]["reason"], r"^Fail p99 [\d.]+ \S+ > 100ms$")
        self.assertEqual(run.json["highest_passing"]["offered_per_s"], 20)
        # p50 at 200/s (a growing backlog) is far over twice that at 20/s (10 ms)
        self.assertEqual(run.json["knee_per_s"], 200)
        self.assertIn("Median latency first exceeded twice its low-load value at 200 "
                      "requests/s.", words(run.stdout))  # the headline's; the report has more
        md = harness.run_pacer([run.out_path], out=False, subcommand="report").stdout
        self.assertIn("Knee: median latency first exceeded twice its low-load value (the first "
                      "step's) at 200 requests/s.", words(md))

    def test_after_fail_runs_one_more(self):
        run = self.ramp_code(overload("--after-fail", 1), 1)
        self.assertEqual(self.offered(run), [20, 200, 300], run.stdout)
        self.assertEqual(self.verdicts(run), [True, False, False], run.stdout)
        self.assertEqual(run.json["plan"]["after_fail"], 1)
        self.assertEqual(run.json["highest_passing"]["offered_per_s"], 20)

    def test_refine_steps_named_alike_everywhere(self):
        """A refine step is "rN" wherever a step is named: the step lines,
        the table, the conditions, the warnings, the Markdown and the
        chart marks; never "step N" for it."""
        run = self.ramp_code(overload("--refine", "--precision", "50%"), 1, timeout=40)
        steps = run.json["steps"]
        refined = [i + 1 for i, s in enumerate(steps) if s["refine"]]
        self.assertTrue(refined, steps)
        md = harness.run_pacer([run.out_path], out=False, subcommand="report").stdout
        html = harness.run_pacer([run.out_path, "--format", "html"], out=False,
                                 subcommand="report").stdout
        text = run.stdout + "\n".join(run.json["warnings"])
        for n in refined:
            self.assertIn("r%d" % n, live_rows(run.stdout))
            self.assertIn("r%d" % n, table_rows(run.stdout))
            for where, t in (("summary", words(text)), ("md", words(md)), ("html", html)):
                # "Step 4 (", "step 4:", "steps 1, 4 and 5 (": each item a step's name
                for m in re.finditer(r"(?i)\bsteps? ((?:r?\d+(?:, | and )?)+)", t):
                    items = re.split(r", | and ", m.group(1).strip(", "))
                    self.assertNotIn(str(n), items, "%s names refine step %d as a planned "
                                     "one: %r" % (where, n, m.group(0)))
            self.assertRegex(words(md), r"\b[Ss]teps? [^.]*\br%d\b" % n)  # the conditions
        self.assertIn("r%d: " % refined[0], html)  # the timeline's step marks

    def test_require_below_highest_passing(self):
        """A step failed, but the required rate was reached first: exit 0."""
        run = self.ramp_code(overload("--require", 20), 0)
        self.assertEqual(self.verdicts(run), [True, False], run.stdout)
        self.assertTrue(run.json["reached_require"])
        self.assertIn("Required 20 requests/s: reached.", words(run.stdout))
        run = self.ramp_code(overload("--require", 21), 1)
        self.assertFalse(run.json["reached_require"])


class UsageTest(RampCase):
    """Usage errors: exit 2, one line on stderr naming what is wrong, nothing
    on stdout, no result file, no load sent."""

    CASES = [
        (["--steps", "100", "--slo", "p98<1ms"], 'unknown metric "p98"'),
        (["--steps", "100", "--slo", "p99<100"], "missing unit"),
        (["--steps", "500,400"], "--steps: item 2 '400' is not above the step before it"),
        (["--steps", "100,,200"], "--steps: item 2 is empty"),
        (["--steps", "100,2x"], "--steps: item 2 '2x'"),
        (["--steps", "500", "--from", "100", "--to", "1k"], "either --steps or --from/--to"),
        ([], "no steps"),
        (["--from", "100"], "needs both --from and --to"),
        (["--from", "1k", "--to", "100"], "--from"),
        (["--from", "100", "--to", "1k", "--factor", "1"], "--factor"),
        (["--steps", "100", "--precision", "0"], "--precision '0'"),
        (["--steps", "100", "--precision", "100%"], "--precision"),
        (["--steps", "100", "--step-duration", "0"], "--step-duration"),
        (["--steps", "100", "--after-fail", "x"], "--after-fail"),
        # a step offered less than one request (issue 32): a Poisson one
        # scheduled none and failed as "no response measured"
        (["--steps", "0.5,1", "--step-duration", "300ms", "--arrival", "poisson"],
         "step 1 is offered 0.15 requests (0.5/s for 300 ms): a step needs at least one"),
        (["--from", "1", "--to", "100", "--step-duration", "300ms"], "step 1 is offered 0.3"),
    ]

    def test_usage_errors(self):
        for args, want in self.CASES:
            run = ramp(["--self-contained"] + args, timeout=10.0)
            what = "%s\n%s" % (args, describe(run))
            self.assertEqual(run.code, 2, what)
            lines = run.stderr.splitlines()
            self.assertEqual(len(lines), 1, what)
            self.assertTrue(lines[0].startswith("pacer ramp: "), what)
            self.assertIn(want, lines[0], what)
            self.assertEqual(run.stdout, "", what)
            self.assertFalse(os.path.exists(run.out_path), what)


class DeadTargetTest(RampCase):
    def test_dead_target_fails_its_steps(self):
        """KNOWN BUG (expected failure until fixed): the target stops during
        step 2, so step 3 gets not a single response (every connection
        attempt is refused). That step must not pass `p99<100ms`; but the
        latency histogram is empty, every percentile reads 0 and passes, so
        pacer reports 300 req/s as the highest passing step and exits 0."""
        srv = PacerServe("hello").start()
        try:
            # --calibrate 0: the stop at 0.9 s falls in step 2, not in the floor's
            run = ramp([srv.url("/"), "--slo", "p99<100ms", "--timeout", "300ms",
                        "--calibrate", "0"]
                       + short("100,200,300", duration="0.5s", warmup="0.1s"),
                       actions=[(0.9, lambda pid: srv.stop())])
        finally:
            srv.stop()
        self.assertFalse(run.timed_out, describe(run))
        self.assertIsNotNone(run.json, describe(run))
        steps = run.json["steps"]
        self.assertTrue(steps[0]["verdict"]["pass"], run.stdout)
        self.assertEqual(len(steps), 3, run.stdout)
        self.assertEqual(steps[2]["measure"]["requests"]["completed"], 0, run.stdout)
        self.assertFalse(steps[2]["verdict"]["pass"], run.stdout)
        self.assertEqual(run.code, 1, describe(run))


# ---------------------------------------------------------------- geometric


class RateLimiterPerCoreTest(RampCase):
    """A rate limiter's capacity is not a capacity per core: nginx answering
    503 above 300 requests/s, measured by --target-pid, keeps a sliver of a
    core busy at the failing step, so the summary gives no "per busy core"
    figure (it once said thousands per busy core) and the JSON says
    cpu_limited false beside the figure it keeps."""

    def test_no_per_core_figure_for_a_rate_limiter(self):
        port = harness.free_port()
        extra = ("limit_req_zone $server_port zone=pacer_ramp300:1m rate=300r/s;\n"
                 "server { listen 127.0.0.1:%d; location = /ready { access_log off; "
                 "return 200; } location = /lim { limit_req zone=pacer_ramp300 burst=10 "
                 "nodelay; empty_gif; } }\n" % port)
        with harness.Nginx(extra_http=extra) as ngx:
            harness.wait_port(port)
            run = self.ramp_code(["http://127.0.0.1:%d/lim" % port, "--target-pid",
                                  ngx.master_pid, "--target-children", "--slo", "errors<1%"]
                                 + short("100,900", duration="1s", warmup="0.2s"), 1, timeout=30)
        j = run.json
        self.assertFalse(j["steps"][1]["verdict"]["pass"], j["steps"][1]["verdict"])
        hp = j["highest_passing"]
        self.assertEqual(hp["step"], 1)
        self.assertIs(hp["cpu_limited"], False, j["steps"][1]["target_resources"])
        self.assertNotIn("per busy core", words(run.stdout))
        flat = words(harness.run_pacer([run.out_path], out=False, subcommand="report").stdout)
        self.assertNotIn("per busy core", flat)
        # the figure per busy core is kept in the JSON when the probe saw the
        # passing step's CPU (at 100 requests/s it may see less than a tick)
        if hp["per_core_per_s"] is not None:
            self.assertEqual(hp["cores_basis"], "measured_busy")
            self.assertIn("No per-core figure: the target's CPU was not its limit: at step 2",
                          flat)


class GeometricTest(RampCase):
    """--from/--to/--factor: the steps end exactly at --to. Without --slo
    every step passes."""

    def test_steps_end_at_to(self):
        for args, want in ((["--from", 100, "--to", "1k", "--factor", 3], [100, 300, 900, 1000]),
                           # 250 x 1.4 x 1.4 is 489.99999999999994 in floating point
                           (["--from", 250, "--to", 490, "--factor", 1.4], [250, 350, 490])):
            run = self.ramp_code(["--self-contained", "--step-duration", "0.2s", "--step-warmup", 0,
                                  "-q"] + args, 0)
            self.assertEqual(run.json["plan"]["steps_per_s"], want, args)
            self.assertEqual(self.offered(run), want, args)
            self.assertIsNone(run.json["plan"]["slo"])
            for s in self.decisive(run):
                self.assertEqual(s["verdict"], PASS_VERDICT)
            self.assertEqual(run.json["highest_passing"]["offered_per_s"], want[-1])
            self.assertEqual(run.stdout, "")  # -q

    def test_default_factor_is_2(self):
        run = self.ramp_code(["--self-contained", "--from", 100, "--to", 400, "--step-duration", "0.2s",
                              "--step-warmup", 0], 0)
        self.assertEqual(run.json["plan"]["steps_per_s"], [100, 200, 400])
        self.assertIn("3 steps of 0.2s", run.stdout)


# ---------------------------------------------------------------- Ctrl-C


class InterruptTest(RampCase):
    def test_ctrl_c(self):
        """SIGINT in the middle of step 2 (steps of 0.2 s warm-up + 1.5 s):
        exit 130, the JSON is still written, marked interrupted, with step 1
        whole and step 2 interrupted; step 3 never runs."""
        run = self.ramp_code(["--self-contained"] + short("100,200,300", duration="1.5s", warmup="0.2s"),
                             130, actions=[(2.5, lambda pid: os.kill(pid, signal.SIGINT))])
        j = run.json
        self.assertTrue(j["interrupted"])
        self.assertEqual(self.offered(run), [100, 200], run.stdout)
        self.assertFalse(j["steps"][0]["interrupted"])
        self.assertTrue(j["steps"][1]["interrupted"])
        # an interrupted step is not a passing step
        self.assertEqual(j["highest_passing"]["offered_per_s"], 100)
        self.assertTrue(any("interrupted" in w for w in j["warnings"]), j["warnings"])
        self.assertIn("(interrupted)", table_rows(run.stdout)["2"])
        self.assertTrue(live_rows(run.stdout)["2"].endswith(" (interrupted)"), run.stdout)
        self.assertNotIn("(interrupted)", table_rows(run.stdout)["1"])
        self.assertIn("The ramp was interrupted before its planned end.", words(run.stdout))


class RepeatTest(RampCase):
    def test_each_step_repeated_and_kept(self):
        """--repeat 3: every step is measured three times; the step keeps
        each repetition's figures with their median and range, and its
        measured phase pools all three (three times the step's length)."""
        run = self.ramp_code(["--self-contained", "--slo", "p99<1s", "--repeat", 3]
                             + short("100,200"), 0)
        self.assertEqual(run.json["plan"]["repeat"], 3)
        for st in run.json["steps"]:
            reps = st["repetitions"]
            self.assertEqual(len(reps), 3)
            self.assertEqual(sum(r["completed"] for r in reps),
                             st["measure"]["requests"]["completed"])
            s = st["repeat_summary"]["p50_us"]
            vals = sorted(r["p50_us"] for r in reps)
            self.assertEqual((s["min"], s["median"], s["max"]), (vals[0], vals[1], vals[2]))
            self.assertAlmostEqual(st["measure"]["duration_s"], 3 * 0.4, delta=0.1)
