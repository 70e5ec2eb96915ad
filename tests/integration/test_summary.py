"""One terminal renderer: what run, ramp and compare print at their end is
`pacer report RESULT --format text` of the JSON result they saved, byte for
byte (report/txt.c). Before it a ramp prints its header and a progress line
per step, a compare its header and a row per measurement; the step table
itself is printed once, in the summary. Short self-contained loads (about
5 s in all). On a terminal a run's and a ramp's summary fit its screen
(ScreenSummaryTest)."""

import fcntl
import json
import os
import pty
import re
import select
import struct
import subprocess
import tempfile
import termios
import time
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


def run_on_terminal(args, subcommand, rows=24, cols=80, timeout=60.0):
    """`pacer SUBCOMMAND ARGS... --limited-ok -o DIR/result.json` with its
    stdout on a pseudo-terminal of rows x cols (stderr to a pipe, read at
    the end): returns (exit code, what the terminal got with CR LF as LF,
    the result's path). Killed by PID at the timeout."""
    d = tempfile.mkdtemp(prefix="pacer-tty-")
    out = os.path.join(d, "result.json")
    argv = [harness.pacer_bin(), subcommand] + [str(a) for a in args] + ["--limited-ok", "-o", out]
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
    with open(os.path.join(d, "stderr"), "wb") as err:
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=slave, stderr=err)
    os.close(slave)
    got = b""
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            r, _, _ = select.select([master], [], [], 0.5)
            if r:
                try:
                    chunk = os.read(master, 65536)
                except OSError:  # EIO: the terminal's last writer closed it
                    break
                if not chunk:
                    break
                got += chunk
            elif proc.poll() is not None:
                break
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        os.close(master)
    return proc.returncode, got.decode(errors="replace").replace("\r\n", "\n"), out


class ScreenSummaryTest(PacerTestCase):
    """Issue 30: on a terminal (80x24 here) a run's and a ramp's end summary
    fit the screen: the headline, the table, the verdict, the caveats that
    fit, each once and the others counted, what to look at next and where
    the full report is; no line wider than 80 columns. The full text (stdout
    not a terminal) and the report keep every caveat."""

    def screen(self, args, subcommand, title):
        code, tty, out = run_on_terminal(args, subcommand)
        self.assertIn(code, (0, 1, 4), tty)
        self.assertIn(title, tty)
        summary = tty[tty.rindex(title):].rstrip("\n").split("\n")
        self.assertLessEqual(len(summary), 24, "\n".join(summary))
        wide = [ln for ln in summary[:-1] if len(ln) > 80]  # the last: a path, whole
        self.assertEqual(wide, [], "\n".join(summary))
        self.assertEqual(summary[-1], harness.summary_trailer(out).strip("\n"))
        self.assertTrue(any(ln.startswith("  Next: ") for ln in summary), "\n".join(summary))
        bullets = [ln for ln in summary if ln.startswith("  - ")]
        self.assertEqual(len(bullets), len(set(bullets)), "\n".join(summary))
        full = report_text(out)
        md = subprocess.run([harness.pacer_bin(), "report", out], capture_output=True, text=True,
                            check=True).stdout
        counted = [ln for ln in summary if re.fullmatch(r"  - and \d+ more in the full report\.", ln)]
        for b in bullets:
            if b not in counted:
                self.assertIn(b, full)  # the brief, as the full text says it
        start = full.index("\nTest conditions and limits\n")
        in_full = [ln for ln in full[start:].split("\n") if ln.startswith("  - ")]
        only = [m for m in (re.fullmatch(r"  Test conditions and limits: (\d+) in the full "
                                         r"report\.", ln) for ln in summary) if m]
        if only:  # no room for one: their number
            self.assertEqual((bullets, int(only[0].group(1))), ([], len(in_full)))
        elif counted:
            n = int(counted[0].split()[2])
            self.assertEqual(len(bullets) - 1 + n, len(in_full), "\n".join(summary))
        else:
            self.assertEqual(len(bullets), len(in_full), "\n".join(summary))
        with open(out) as f:
            res = json.load(f)
        for w in res["warnings"]:
            self.assertIn(w.split(" ")[0], md)
        return summary, res, out

    def test_run_fits_80x24(self):
        summary, res, out = self.screen(["--self-contained", "-r", "200", "-d", "1s", "-w", "0.2s",
                                    "--slo", "p99<10s"], "run", "pacer run report: ")
        text = "\n".join(summary)
        self.assertRegex(text, r"\n  Offered/s  Achieved/s +p50 +p99 +p99\.9 +max +Error rate +SLO\n")
        self.assertIn("\n  SLO p99<10s: Pass.\n", text)
        # the whole text (what a file gets) keeps its tables
        self.assertIn("\n  Latency\n", report_text(out))

    def test_ramp_with_many_caveats_fits_80x24(self):
        """The ramp of test_ramp_summary_fits_a_screen_and_says_each_caveat_once
        (nginx limiting to 300 requests/s fails the last step on errors) on
        a terminal: without the drop rate and the target's CPU its steps
        table fits 80 columns."""
        port = harness.free_port()
        extra = ("limit_req_zone $server_port zone=pacer_tty300:1m rate=300r/s;\n"
                 "server { listen 127.0.0.1:%d; location = /ready { access_log off; "
                 "return 200; } location = /lim { limit_req zone=pacer_tty300 burst=10 "
                 "nodelay; empty_gif; } }\n" % port)
        with harness.Nginx(extra_http=extra):
            harness.wait_port(port)
            summary, res, _ = self.screen(["http://127.0.0.1:%d/lim" % port, "--steps",
                                        "100,200,250,600", "--step-duration", "1s",
                                        "--step-warmup", "0.3s", "--slo",
                                        "p99<100ms,errors<1%"], "ramp", "pacer ramp report: ")
        text = "\n".join(summary)
        self.assertFalse(res["steps"][-1]["verdict"]["pass"], res["steps"][-1])
        self.assertRegex(text, r"\n  Step  Offered/s  Achieved/s +p50 +p99 +Error rate +Within SLO\n")
        self.assertNotIn("Drop rate", text)
        self.assertEqual(len(re.findall(r"\n  [1-4]  +[\d,]+ ", text)), 4, text)
        self.assertIn("no: errors", text)

    def test_compare_fits_80x24(self):
        """Before: a comparison's summary was the whole text on a terminal too,
        78 lines and up to 212 columns (the variants table with every
        median (min-max)). On a terminal: the headline, each variant's
        medians and its ratios to the baseline with their verdicts in a word,
        within 78 columns, the caveats that fit, Next: and the paths."""
        summary, res, out = self.screen(["--variant", "a=@hello", "--variant", "b=@hello",
                                         "--repeat", "2", "-d", "0.5s", "-w", "0.1s",
                                         "-r", "200"], "compare", "pacer compare report: ")
        text = "\n".join(summary)
        self.assertRegex(text, r"\n  Variant +Throughput/s +p50 +p99 +max +Errors\n")
        self.assertEqual(len(re.findall(r"\n  (a \(base\)|b) +[\d,.]+ +[\d.]+ [µm]?s ", text)), 2,
                         text)
        self.assertRegex(text, r"\n  Variant +Throughput +p50 +p99 +Errors\n  b +[\d.]+ too few ")
        self.assertIn("  Next: --repeat 5 or more for a verdict (2 per variant now, too few).",
                      text)
        self.assertTrue(all(len(ln) <= 78 for ln in summary[:-1]), text)
        # the full text (a file, a pipe) keeps the tables whole
        full = report_text(out)
        self.assertIn("\n  Variants: median (min–max) over repetitions\n", full)
        self.assertIn("\n  Against the baseline\n", full)
        self.assertNotIn("too few", full)
        self.assertEqual(len(res["variants"]), 2)


if __name__ == "__main__":
    unittest.main()
