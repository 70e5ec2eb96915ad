"""pacer compare: rotation order, self-comparison, a 2x-work variant."""

import os
import signal
import subprocess
import tempfile
import unittest

import harness
from harness import Nginx, PacerServe

PLANS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "plans")


def ratio(result, metric, variant="B"):
    for r in result["ratios"]:
        if r["metric"] == metric and r["variant"] == variant:
            return r
    raise AssertionError(f"no ratio for {metric}/{variant}")


class CompareTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        harness.require_pacer()

    def compare(self, *args, timeout=90):
        run = harness.run_pacer(list(args), subcommand="compare", timeout=timeout)
        self.assertEqual(run.code, 0, run.stderr)
        self.assertIsNotNone(run.json)
        return run.json

    def self_compare(self):
        return self.compare("--variant", "A=@hello", "--variant", "B=@hello",
                            "--concurrency", "4", "-d", "0.5s", "-w", "0.2s", "--repeat", "5")

    def test_rotation_and_self_comparison(self):
        """The same plan twice: order A B, B A, ...; no significant difference
        in throughput. Any 95 % interval excludes the truth 5 % of the time,
        so a second, independent comparison is run when the first calls a
        difference: a method that is biased fails both, chance rarely does
        (about 0.25 %)."""
        r = self.self_compare()
        self.assertEqual(r["kind"], "compare")
        self.assertEqual(r["sequence"], ["A", "B", "B", "A", "A", "B", "B", "A", "A", "B"])
        names = [v["name"] for v in r["variants"]]
        self.assertEqual(names, ["A", "B"])
        for v in r["variants"]:
            self.assertEqual(len(v["repetitions"]), 5)
            for rep in v["repetitions"]:
                self.assertGreater(rep["completed"], 0)
                self.assertEqual(rep["errors"], 0)
        t = ratio(r, "throughput")
        if t["significant"]:
            r = self.self_compare()
            t = ratio(r, "throughput")
        self.assertFalse(t["significant"], t)
        self.assertEqual(t["verdict"], "no significant difference")
        if t["ci95_low"] > 1.0 or t["ci95_high"] < 1.0:
            # excluded 1 but within the noise threshold
            self.assertLessEqual(abs(t["ratio"] - 1.0), r["plan"]["noise_pct"] / 100)

    def test_three_variants_rotate(self):
        r = self.compare("--variant", "A=@hello", "--variant", "B=@hello", "--variant", "C=@hello",
                         "--concurrency", "2", "-d", "0.3s", "-w", "0", "--repeat", "3")
        self.assertEqual(r["sequence"], ["A", "B", "C", "B", "C", "A", "C", "A", "B"])
        self.assertEqual({x["variant"] for x in r["ratios"]}, {"B", "C"})

    def test_twice_the_work_is_slower_by_about_two(self):
        """B does 2 ms of CPU work per request, A 1 ms, each on one server
        thread, closed loop: B's throughput is about half of A's and its p50
        about twice, and both differences are significant."""
        a = os.path.join(PLANS, "cmp_cpu1ms.yaml")
        b = os.path.join(PLANS, "cmp_cpu2ms.yaml")
        r = self.compare("--variant", f"A=@{a}", "--variant", f"B=@{b}", "--concurrency", "4",
                         "-d", "1s", "-w", "0.3s", "--repeat", "5")
        # One server thread doing 1 ms of CPU per request answers about
        # 1,000/s. Far below that, something else held the CPUs (another
        # process on this 2-core machine, or the hypervisor): the fixed costs
        # then weigh differently in A and B and the ratios say nothing.
        ach = {v["name"]: v["summary"]["achieved_per_s"]["median"] for v in r["variants"]}
        steal = [v["steal_max_pct"] for v in r["variants"] if v["steal_max_pct"] is not None]
        if ach["A"] < 600:
            self.skipTest("machine busy: A (1 ms of CPU per request) achieved a median %.0f/s "
                          "of its ~1,000/s, B %.0f/s; hypervisor steal up to %s %%"
                          % (ach["A"], ach["B"], max(steal) if steal else "< 1"))
        t = ratio(r, "throughput")
        self.assertTrue(t["significant"], t)
        self.assertEqual(t["verdict"], "slower")
        # ~0.5: the fixed per-request cost (parsing, loopback, the driver) is
        # the same for both, which pulls the ratio a little toward 1.
        self.assertGreater(t["ratio"], 0.40)
        self.assertLess(t["ratio"], 0.65)
        p50 = ratio(r, "p50")
        self.assertTrue(p50["significant"], p50)
        self.assertEqual(p50["verdict"], "slower")
        self.assertGreater(p50["ratio"], 1.5)
        self.assertLess(p50["ratio"], 2.5)

    def test_ramp_mode_compares_capacity(self):
        """--steps: each repetition is a ramp per variant (refined to 10 %);
        the capacity of the 2 ms plan is about half that of the 1 ms plan. (The
        first step, 125/s, is far below either capacity, so a stall of the
        machine in it does not leave a repetition without one.)"""
        a = os.path.join(PLANS, "cmp_cpu1ms.yaml")
        b = os.path.join(PLANS, "cmp_cpu2ms.yaml")
        r = self.compare("--variant", f"A=@{a}", "--variant", f"B=@{b}", "--steps",
                         "125,250,500,750,1000,1250", "--slo", "p99<50ms", "--refine",
                         "--precision", "10%", "--step-duration", "0.5s", "--step-warmup", "0.1s",
                         "-c", "16", "--repeat", "3", timeout=150)
        self.assertEqual(r["plan"]["ramp"]["slo"], "p99<50ms")
        # the phases as run: each step's, not a run's defaults
        self.assertEqual(r["plan"]["duration_s"], 0.5)
        self.assertEqual(r["plan"]["warmup_s"], 0.1)
        self.assertEqual(r["plan"]["ramp"]["step_duration_s"], 0.5)
        self.assertEqual(r["plan"]["ramp"]["step_warmup_s"], 0.1)
        for v in r["variants"]:
            for rep in v["repetitions"]:
                self.assertGreater(rep["capacity_per_s"], 0, v)
                # each repetition's ramp, step by step: its capacity is the
                # highest step that passed conclusively (an attempt measured
                # again decides nothing)
                passing = [s["offered_per_s"] for s in rep["steps"]
                           if s["pass"] and not s["inconclusive"] and not s["retried"]]
                self.assertEqual(max(passing), rep["capacity_per_s"], rep["steps"])
                self.assertIn(rep["capacity_bound"], ("exact", "lower", "top"), rep)
                # an inconclusive step is measured again, twice at most (--retries 2)
                for s in rep["steps"]:
                    self.assertEqual(s["retried"], s["inconclusive"] and s["attempt"] <= 2,
                                     rep["steps"])
        cap = ratio(r, "capacity")
        # three repetitions are below the five a verdict needs (docs/compare.md)
        self.assertFalse(cap["significant"], cap)
        self.assertEqual(cap["verdict"], "not enough repetitions")
        self.assertGreater(cap["ratio"], 0.35)
        self.assertLess(cap["ratio"], 0.70)

    def test_amber_shape_one_table_two_servers(self):
        """Seven interleaved repetitions, rotating order, one deterministic
        4,096-request mix table, two `pacer serve` processes that differ only
        in their speed (2 ms and 3 ms): both variants send the very same
        requests (one hash), to their own server (--variant-set
        NAME.connect-to), and the 1.5x slower median is found with a
        confidence interval that excludes 1."""
        d = tempfile.mkdtemp(prefix="pacer-amber-")
        table = os.path.join(d, "mix.jsonl")
        gen = subprocess.run([harness.pacer_bin(), "table", "generate", "--spec",
                              os.path.join(harness.REPO, "examples", "tables", "mix.yaml"),
                              "--size", "4096", "--seed", "1"], capture_output=True, check=True)
        with open(table, "wb") as f:
            f.write(gen.stdout)
        sha = subprocess.run([harness.pacer_bin(), "table", "hash", table], capture_output=True,
                             text=True, check=True).stdout.split()[0]
        with PacerServe(os.path.join(PLANS, "cmp_lat2ms.yaml")) as fast, \
                PacerServe(os.path.join(PLANS, "cmp_lat3ms.yaml")) as slow:
            r = self.compare("--requests-file", table, "--variant", "A=", "--variant", "B=",
                             "--variant-set", "A.connect-to=127.0.0.1:%d" % fast.port,
                             "--variant-set", "B.connect-to=127.0.0.1:%d" % slow.port,
                             "--rate", "300", "-d", "1s", "-w", "0.3s", "-c", "16",
                             "--repeat", "7", timeout=120)
        self.assertEqual(r["sequence"][:4], ["A", "B", "B", "A"])
        self.assertEqual(len(r["sequence"]), 14)
        for v in r["variants"]:
            self.assertEqual(v["workload"]["sha256"], sha, v["workload"])
            self.assertEqual(v["workload"]["requests"], 4096)
            self.assertEqual(len(v["repetitions"]), 7)
            for rep in v["repetitions"]:
                self.assertGreater(rep["completed"], 250, rep)
                self.assertEqual(rep["errors"], 0, rep)
        p50 = ratio(r, "p50")
        self.assertTrue(p50["significant"], p50)
        self.assertGreater(p50["ci95_low"], 1.0, p50)
        self.assertEqual(p50["verdict"], "slower")
        self.assertGreater(p50["ratio"], 1.3, p50)
        self.assertLess(p50["ratio"], 1.7, p50)

    def test_criteo_shape_capacity_and_cpu_per_request(self):
        """Two nginx configurations (a rate limiter at 2,000 and one at 3,000
        requests/s), each repetition a ramp with --steps and a success SLO,
        each variant's nginx measured by --target-pid: the comparison
        reports each one's capacity and its CPU per request, with ratios."""
        with Nginx() as a, Nginx() as b:
            pa, pb = a.all_pids()[0], b.all_pids()[0]  # the masters (with children)
            run = harness.run_pacer(
                ["--variant", "A=" + a.url("/limited2k"), "--variant", "B=" + b.url("/limited"),
                 "--variant-set", "A.target-pid=%d" % pa, "--variant-set", "A.target-children=true",
                 "--variant-set", "B.target-pid=%d" % pb, "--variant-set", "B.target-children=true",
                 "--steps", "1000,1500,2500,3500", "--slo", "success>=99%",
                 "--step-duration", "0.5s", "--step-warmup", "0.2s", "--repeat", "3"],
                subcommand="compare", timeout=120)
        self.assertEqual(run.code, 0, harness.describe(run))
        r = run.json
        caps = {}
        for v in r["variants"]:
            caps[v["name"]] = [rep["capacity_per_s"] for rep in v["repetitions"]]
            for rep in v["repetitions"]:
                self.assertGreater(rep["target_cpu_ms_per_request"], 0, rep)
                self.assertGreater(rep["target_rss_peak_mib"], 0, rep)
            self.assertIn("target_cpu_ms_per_request", v["summary"])
        # 2,000/s passes and 2,500/s fails for A; 2,500/s passes and 3,500/s fails for B
        self.assertEqual(caps["A"], [1500.0] * 3, caps)
        self.assertEqual(caps["B"], [2500.0] * 3, caps)
        cap = ratio(r, "capacity")
        self.assertAlmostEqual(cap["ratio"], 2500 / 1500, places=3)
        self.assertFalse(cap["significant"], cap)  # 3 of the 5 repetitions a verdict needs
        self.assertEqual(cap["verdict"], "not enough repetitions")
        self.assertIn("target_cpu", {x["metric"] for x in r["ratios"]})
        # the summary: the capacities, their ratio and each one's CPU per request
        self.assertRegex(run.stdout, r"\n  A \(baseline\) .* 1,500 \(1,500–1,500\)")
        self.assertRegex(run.stdout, r"\n  B .* 2,500 \(2,500–2,500\)")
        self.assertRegex(run.stdout, r"\n  capacity +B +A +1\.667 ")
        self.assertRegex(run.stdout, r"\n  target_cpu +B +A ")
        self.assertIn("Target CPU per request", run.stdout)

    def test_report_names_the_table_splits_errors_and_counts_warmups(self):
        """A comparison from one request table: the report names the table
        and its SHA-256 (it once said "? (SHA-256 ?...)"), splits the
        requests that did not succeed into failed responses and transport
        errors, and gives each variant's warm-up counts."""
        d = tempfile.mkdtemp(prefix="pacer-cmp-table-")
        with Nginx() as ngx:
            table = os.path.join(d, "two.targets")
            with open(table, "w") as f:
                f.write("GET %s\nGET %s\n" % (ngx.url("/hello"), ngx.url("/notfound")))
            sha = subprocess.run([harness.pacer_bin(), "table", "hash", table],
                                 capture_output=True, text=True, check=True).stdout.split()[0]
            run = harness.run_pacer(["--requests-file", table, "--variant", "A=",
                                     "--variant", "B=", "-c", 2, "--rate", 100, "-d", "0.3s",
                                     "-w", "0.2s", "--repeat", 2], subcommand="compare",
                                    timeout=60)
        self.assertEqual(run.code, 0, run.stderr)
        counts = {}
        for v in run.json["variants"]:
            self.assertEqual((v["table"]["source"], v["table"]["sha256"]), (table, sha))
            for rep in v["repetitions"]:
                self.assertEqual(rep["failed_responses"] + rep["transport_errors"], rep["errors"])
                self.assertGreater(rep["failed_responses"], 0, rep)  # the 404s
                self.assertGreater(rep["warmup_completed"], 0, rep)
            counts[v["name"]] = [sum(r[k] for r in v["repetitions"])
                                 for k in ("errors", "failed_responses", "transport_errors",
                                           "warmup_completed", "warmup_errors")]
        md = subprocess.run([harness.pacer_bin(), "report", run.out_path], capture_output=True,
                            text=True, check=True).stdout
        flat = harness.words(md)
        self.assertNotIn("? (SHA-256 ?", flat)
        # Markdown escapes the path's underscores (mkdtemp's names have them)
        self.assertIn("2 requests of the request table %s (SHA-256 %s...)" %
                      (table.replace("_", "\\_"), sha[:16]), flat)
        self.assertIn("| Variant | Did not succeed | Failed responses | Transport errors | "
                      "Warm-up responses | Warm-up errors |", md)
        for name, k in counts.items():
            self.assertIn("| %s | %s |" % (name, " | ".join("{:,}".format(x) for x in k)), md)
            self.assertIn("Variant %s: %s requests did not succeed over its repetitions: %s "
                          "failed responses (the success rule), 0 transport errors."
                          % (name, "{:,}".format(k[0]), "{:,}".format(k[1])), flat)

    def test_one_repetition_is_no_verdict(self):
        """One server compared with itself once: the bootstrap over one value
        is a point, which excludes 1 almost always; that is no evidence, so
        every ratio says "not enough repetitions" (text and JSON)."""
        run = harness.run_pacer(["--variant", "A=@hello", "--variant", "B=@hello",
                                 "--concurrency", "2", "-d", "0.3s", "-w", "0", "--repeat", "1"],
                                subcommand="compare", timeout=30)
        self.assertEqual(run.code, 0, harness.describe(run))
        defined = [x for x in run.json["ratios"] if x["ratio"] is not None]
        self.assertIn("throughput", [x["metric"] for x in defined])
        for x in defined:
            self.assertFalse(x["significant"], x)
            self.assertEqual(x["verdict"], "not enough repetitions", x)
        self.assertIn("Not enough repetitions for a verdict: 1 per variant, and a verdict needs 5.",
                      harness.words(run.stdout))
        self.assertNotIn("slower", run.stdout)
        self.assertNotIn("faster", run.stdout)

    def test_interrupted_before_a_round_completes(self):
        """SIGINT during the first repetition: no round is complete, so the
        summaries are null (not 0.0), what ran is marked partial, and the
        report does not claim a repetition."""
        run = harness.run_pacer(["--variant", "A=@hello", "--variant", "B=@hello",
                                 "--concurrency", "2", "-d", "1s", "-w", "0", "--repeat", "5"],
                                subcommand="compare", timeout=30,
                                actions=[(1.5, lambda pid: os.kill(pid, signal.SIGINT))])
        self.assertEqual(run.code, 130, harness.describe(run))
        r = run.json
        self.assertTrue(r["interrupted"])
        self.assertIn("The comparison was interrupted before its planned end.",
                      harness.words(run.stdout))
        self.assertEqual(r["plan"]["repeat"], 0)
        reps = {v["name"]: v["repetitions"] for v in r["variants"]}
        self.assertTrue(all(rep["partial"] for v in reps.values() for rep in v), reps)
        self.assertGreaterEqual(len(reps["A"]), 1, reps)  # A's first measurement ran
        for v in r["variants"]:
            for fig, s in v["summary"].items():
                self.assertEqual(s, {"median": None, "min": None, "max": None}, fig)
        md = os.path.join(run.dir, "r.md")
        rep = subprocess.run([harness.pacer_bin(), "report", os.path.join(run.dir, "result.json"),
                              "--format", "md", "-o", md], capture_output=True, text=True,
                             timeout=30)
        self.assertEqual(rep.returncode, 0, rep.stderr)
        with open(md) as f:
            text = f.read()
        self.assertIn("0 interleaved repetitions", text)
        self.assertNotIn("1 interleaved repetition", text)

    def test_usage_errors(self):
        cases = [
            (["--variant", "A=@hello"], "between 2"),
            (["--variant", "A=@hello", "--variant", "A=@hello"], "given twice"),
            (["--variant", "noequals", "--variant", "B=@hello"], "NAME=URL"),
            (["--variant", "A=@nosuchplan", "--variant", "B=@hello"], "no such built-in plan"),
            (["http://127.0.0.1:1/", "--variant", "A=@hello", "--variant", "B=@hello"], "--variant"),
            (["--variant", "A=@hello", "--variant", "B=@hello", "--steps", "100,200"], "--slo"),
            (["--variant", "A=@hello", "--variant", "B=@hello", "--steps", "100,200", "--slo",
              "p99<1s", "--rate", "100"], "not both"),
            (["--variant", "A=@hello", "--variant", "B=@hello", "--variant-set", "C.header=X: y"],
             "no variant C"),
            (["--variant", "A=@hello", "--variant", "B=@hello", "--variant-set", "B.colour=red"],
             "unknown KEY 'colour'"),
            (["--variant", "A=@hello", "--variant", "B=@hello", "--variant-set", "B.target-pid=x"],
             "whole number"),
        ]
        for args, needle in cases:
            with self.subTest(args=args):
                run = harness.run_pacer(args, subcommand="compare", out=False, timeout=20)
                self.assertEqual(run.code, 2, run.stderr)
                lines = [ln for ln in run.stderr.splitlines() if ln.strip()]
                self.assertEqual(len(lines), 1, run.stderr)
                self.assertIn(needle, lines[0])


if __name__ == "__main__":
    unittest.main()
