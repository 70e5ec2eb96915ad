"""One terminal renderer: what run, ramp and compare print at their end is
`pacer report RESULT --format text` of the JSON result they saved, byte for
byte (report/txt.c). Before it a ramp prints its header and a progress line
per step, a compare its header and a row per measurement; the step table
itself is printed once, in the summary. Short self-contained loads (about
5 s in all)."""

import re
import subprocess
import unittest

import harness
from harness import PacerTestCase, describe, report_text


class SummaryIsTheTextReportTest(PacerTestCase):
    def summary_of(self, run):
        """The report text of run's saved result; asserts that run's stdout
        ends with it and returns (what came before it, the report)."""
        self.assertFalse(run.timed_out, describe(run))
        self.assertIsNotNone(run.json, describe(run))
        rep = report_text(run.out_path)
        self.assertTrue(rep.startswith("pacer %s report: " % run.json["kind"]), rep)
        # then one line: where the full report is
        trailer = harness.summary_trailer(run.out_path)
        self.assertTrue(run.stdout.endswith(rep + trailer),
                        "stdout does not end with the text report and its trailer\n--- stdout\n"
                        "%s\n--- report\n%s" % (run.stdout, rep))
        return run.stdout[:len(run.stdout) - len(rep + trailer)], rep

    def test_run(self):
        run = self.run_ok(["--self-contained", "-r", "200", "-d", "0.4s", "-w", "0.1s",
                           "--slo", "p99<10s"])
        before, rep = self.summary_of(run)
        self.assertEqual(before, "")  # a run prints its summary only
        self.assertEqual(run.stderr, "")
        self.assertIn("\n  SLO p99<10s: Pass.\n", rep)

    def test_ramp(self):
        run = harness.run_pacer(["--self-contained", "--steps", "100,200,400", "--step-duration",
                                 "0.3s", "--step-warmup", "0.1s", "--slo", "p99<10s",
                                 "--require", "150"], subcommand="ramp", timeout=30)
        self.assertEqual(run.code, 0, describe(run))
        before, rep = self.summary_of(run)
        n = len(run.json["steps"])
        self.assertEqual(n, 3)
        # before the summary: the header, then one progress line per step
        lines = [ln for ln in before.splitlines() if ln.strip()]
        self.assertTrue(lines[0].startswith("pacer ramp http://127.0.0.1:"), before)
        live = [ln for ln in lines if ln.startswith("  step ")]
        self.assertEqual(len(live), n, before)
        for i, (ln, s) in enumerate(zip(live, run.json["steps"])):
            self.assertTrue(ln.startswith("  step %d: %s req/s offered, " % (i + 1, "{:,.0f}".format(
                s["offered_per_s"]))), ln)
            self.assertTrue(ln.endswith(": " + s["verdict"]["reason"]), ln)
        self.assertNotIn("Offered/s", before)
        # the step table once, in the summary, a row per step
        self.assertEqual(run.stdout.count("\n  Step  Offered/s "), 1, run.stdout)
        rows = re.findall(r"\n  ([123])  +([\d,]+) ", rep)
        self.assertEqual(rows[:n], [("1", "100"), ("2", "200"), ("3", "400")], rep)
        flat = harness.words(rep)
        self.assertIn("Highest passing step: step 3, 400 requests/s offered", flat)
        self.assertIn("Required 150 requests/s: reached.", flat)

    def test_ramp_summary_fits_a_screen_and_says_each_caveat_once(self):
        """A 4-step ramp against nginx whose rate limiter (300 requests/s)
        fails the SLO on errors at the last step: its end summary (a
        125-line one once, half of it caveats, each said twice) fits an
        80x24 screen: the headline, the steps table, the verdict, one line
        per caveat, where the full report is. The details stay in the
        report."""
        port = harness.free_port()
        extra = ("limit_req_zone $server_port zone=pacer_sum300:1m rate=300r/s;\n"
                 "server { listen 127.0.0.1:%d; location = /ready { access_log off; "
                 "return 200; } location = /lim { limit_req zone=pacer_sum300 burst=10 "
                 "nodelay; empty_gif; } }\n" % port)
        with harness.Nginx(extra_http=extra):
            harness.wait_port(port)
            run = harness.run_pacer(["http://127.0.0.1:%d/lim" % port, "--steps",
                                     "100,200,250,600", "--step-duration", "1s",
                                     "--step-warmup", "0.3s", "--slo", "p99<100ms,errors<1%"],
                                    subcommand="ramp", timeout=60)
        self.assertIn(run.code, (1, 4), describe(run))
        before, rep = self.summary_of(run)
        self.assertFalse(run.json["steps"][-1]["verdict"]["pass"], run.json["steps"][-1])
        summary = (rep + harness.summary_trailer(run.out_path)).rstrip("\n").split("\n")
        start = summary.index("Test conditions and limits")
        caveats = summary[start + 1:]
        bullets = [ln for ln in caveats if ln.startswith("  - ")]
        # one line each, each once, and nothing of pacer's warnings said again
        self.assertFalse([ln for ln in caveats if ln.startswith("    ")], rep)
        self.assertEqual(len(bullets), len(set(bullets)), rep)
        self.assertNotIn("Warnings recorded by pacer", rep)
        self.assertNotIn("generator limited (", rep)
        # a screen: 24 lines with up to five caveats (a busy machine may add
        # the generator's other checks, and fail the last step on its p99 as
        # well as its errors: a clause more in the headline's sentence)
        clauses = run.json["steps"][-1]["verdict"]["reason"].count(";")
        self.assertLessEqual(len(summary), 24 + max(0, len(bullets) - 5) + clauses,
                             "\n".join(summary))
        self.assertEqual(summary[-1], harness.summary_trailer(run.out_path).strip("\n"))
        self.assertEqual(len(re.findall(r"\n  [1-4]  +[\d,]+ ", rep)), 4, rep)
        self.assertIn("no: errors", rep)
        # the details are the report's
        md = subprocess.run([harness.pacer_bin(), "report", run.out_path], capture_output=True,
                            text=True, check=True).stdout
        for part in ("### Steps", "### Warm-up and connections of each step", "## Cost and resources"):
            self.assertIn(part, md)
        for w in run.json["warnings"]:
            self.assertIn(w.split(" ")[0], md)

    def test_compare(self):
        run = harness.run_pacer(["--variant", "A=@hello", "--variant", "B=@hello",
                                 "--concurrency", "2", "-d", "0.2s", "-w", "0", "--repeat", "2",
                                 "--outcome", "ok=status == 200"],
                                subcommand="compare", timeout=30)
        self.assertEqual(run.code, 0, describe(run))
        before, rep = self.summary_of(run)
        lines = [ln for ln in before.splitlines() if ln.strip()]
        self.assertTrue(lines[0].startswith("pacer compare: 2 variants"), before)
        # a row per measurement as it ends: rep, variant, ...
        rows = [ln.split()[:2] for ln in lines if re.match(r"  \d+ +[AB] ", ln)]
        self.assertEqual(rows, [["1", "A"], ["1", "B"], ["2", "B"], ["2", "A"]], before)
        # the verdict table: every ratio with its interval and verdict
        table = {}
        for line in rep.splitlines():
            m = re.fullmatch(r"  (\S+) +B +A +([\d.]+) +([\d.]+)–([\d.]+) +([a-z ]+)", line)
            if m:
                table[m.group(1)] = ([float(m.group(k)) for k in (2, 3, 4)], m.group(5))
        defined = [r for r in run.json["ratios"] if r["ratio"] is not None]
        self.assertIn("throughput", [r["metric"] for r in defined])
        self.assertEqual(sorted(table), sorted(r["metric"] for r in defined), rep)
        for r in defined:
            shown, verdict = table[r["metric"]]
            for v, want in zip(shown, (r["ratio"], r["ci95_low"], r["ci95_high"])):
                self.assertAlmostEqual(v, want, delta=0.001 + 0.005 * abs(want), msg=rep)
            self.assertEqual(verdict, "not enough repetitions")
        self.assertIn("Not enough repetitions for a verdict: 2 per variant, and a verdict needs 5.",
                      harness.words(rep))
        # each variant's medians: error and outcome rates too; its target's CPU per request
        self.assertRegex(rep, r"\n  Variant .* Error rate +ok rate\n")
        for v in ("A \\(baseline\\)", "B"):
            self.assertRegex(rep, r"\n  " + v + r" .* 0\.00% \(0\.00%–0\.00%\) +100\.00% "
                             r"\(100\.00%–100\.00%\)\n")
        self.assertIn("ok", table)
        self.assertRegex(rep, r"\n  Variant +Target CPU per request +Target peak memory\n")


if __name__ == "__main__":
    unittest.main()
