"""The live view on stderr (cli/live_view.c, docs/run.md "The live view"),
watched in a real terminal: tmux, on a server socket of its own, its pane
captured with `tmux capture-pane -p` while pacer runs against `pacer serve`
and after it ended.

- At 80x24 and 200x50: the view's lines (the head with elapsed and
  remaining, rate, last second, the phase so far, status, errors, backlog)
  are each present once, fit the width (cols - 1), and the achieved rate is
  near the offered one; stdout goes to a file (`> file`) and the view is
  still on the terminal; at the end the view is cleared (the pane holds no
  line of it).
- A resize mid-run (resize-window) re-flows the view: after it every line
  fits the new width, each label once, no fragment of a wider line left.
- --quiet: no view. TERM=dumb: plain lines, at most one a second. stderr to
  a file: nothing of the view in it.
- A ramp with its rows in a file shows the ladder of landed steps, with
  their verdicts, above the live lines.

Each load is a few seconds at a few hundred requests/s of the embedded
target on loopback; tmux's server is stopped at the end (kill-server on its
own socket)."""

import os
import re
import shlex
import shutil
import subprocess
import tempfile
import time
import unittest

import harness
from harness import PacerServe, PacerTestCase

LABELS = ("pacer ", "rate ", "last second ", "measured ", "status ", "errors ", "backlog ")


def setUpModule():
    harness.require_pacer()
    if not shutil.which("tmux"):
        raise unittest.SkipTest("tmux not installed")


class LiveViewTest(PacerTestCase):
    RATE = 400

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.sock = "pacer-live-%d" % os.getpid()
        cls.dir = tempfile.mkdtemp(prefix="pacer-live-")
        cls.srv = PacerServe("hello").start()
        cls.n = 0
        # a session that stays while the tests' sessions come and go: the
        # server exits with its last session, and a new-session racing that
        # exit fails
        subprocess.run(["tmux", "-L", cls.sock, "new-session", "-d", "-s", "keep", "-x", "80",
                        "-y", "24", "sleep", "600"], check=True, timeout=10)

    @classmethod
    def tearDownClass(cls):
        subprocess.run(["tmux", "-L", cls.sock, "kill-server"], capture_output=True)
        cls.srv.stop()
        shutil.rmtree(cls.dir, True)

    def tmux(self, *args):
        r = subprocess.run(["tmux", "-L", self.sock] + list(args), capture_output=True,
                           text=True, timeout=10)
        return r.stdout

    def start(self, args, cols, rows, env="", redirect=None, sub="run"):
        """pacer SUB ARGS in a new tmux session cols x rows, stdout to a file
        (unless redirect says otherwise); the exit code is written to a file
        when it ends and the pane stays. Returns (session, rc path, out path)."""
        LiveViewTest.n += 1
        name = "t%d" % self.n
        rc = os.path.join(self.dir, name + ".rc")
        out = os.path.join(self.dir, name + ".out")
        cmd = "%s %s %s %s --limited-ok %s" % (
            env, shlex.quote(harness.pacer_bin()), sub,
            " ".join(shlex.quote(str(a)) for a in args),
            redirect if redirect is not None else "> " + shlex.quote(out))
        script = "%s; echo $? > %s; sleep 60" % (cmd, shlex.quote(rc))
        r = subprocess.run(["tmux", "-L", self.sock, "new-session", "-d", "-s", name, "-x",
                            str(cols), "-y", str(rows), "sh", "-c", script],
                           capture_output=True, text=True, timeout=10)
        self.assertEqual(r.returncode, 0, "tmux new-session: %s" % r.stderr)
        self.addCleanup(self.tmux, "kill-session", "-t", "=" + name)
        return name, rc, out

    def capture(self, name):
        return self.tmux("capture-pane", "-p", "-t", name).split("\n")

    def wait_end(self, rc, timeout=60):
        t_end = time.monotonic() + timeout
        while time.monotonic() < t_end:
            if os.path.exists(rc) and open(rc).read().strip():
                return int(open(rc).read())
            time.sleep(0.2)
        self.fail("pacer did not end within %d s" % timeout)

    def view_lines(self, lines):
        return [l for l in lines if l.startswith(LABELS) and not l.startswith("pacer run report")]

    def wait_frame(self, name, pred, timeout=30, rc=None):
        """Captures until pred(lines) holds (a frame with measured figures);
        fails at once when pacer ended first (rc: its exit code's file)."""
        t_end = time.monotonic() + timeout
        last = []
        while time.monotonic() < t_end:
            last = self.capture(name)
            if pred(last):
                return last
            if rc and os.path.exists(rc) and open(rc).read().strip():
                self.fail("pacer ended (exit %s) before such a frame; the pane:\n%s"
                          % (open(rc).read().strip(), "\n".join(self.capture(name))))
            time.sleep(0.25)
        ps = subprocess.run(["ps", "-eo", "pid,stat,wchan:24,etime,args"], capture_output=True,
                            text=True).stdout
        ps = "\n".join(l for l in ps.splitlines() if harness.pacer_bin() in l)
        self.fail("no such frame within %d s; last capture:\n%s\npacer processes:\n%s"
                  % (timeout, "\n".join(last), ps))

    def measured_frame(self, lines):
        return any(l.startswith("measured ") and re.search(r"\(\d[\d,]*\)", l)
                   and "(0)" not in l for l in lines)

    def check_frame(self, lines, cols):
        view = self.view_lines(lines)
        for l in lines:
            self.assertLessEqual(len(l), cols - 1, "a line wider than the pane:\n%s" % "\n".join(lines))
        for lab in LABELS:
            hits = [l for l in view if l.startswith(lab)]
            self.assertEqual(len(hits), 1, "label %r not once:\n%s" % (lab, "\n".join(lines)))
        # from the view's head down, nothing but its lines and blank rows:
        # no stale fragment (a notice pacer wrote before the load may stand
        # above it)
        top = [i for i, l in enumerate(lines) if l.startswith(LABELS[0])][0]
        for l in lines[top:]:
            if l.strip():
                self.assertTrue(l.startswith(LABELS), "stray line %r in:\n%s" % (l, "\n".join(lines)))
        return view

    def achieved(self, view):
        rate = [l for l in view if l.startswith("rate ")][0]
        m = re.search(r"achieved ([\d,.]+)/s", rate)
        self.assertIsNotNone(m, rate)
        return float(m.group(1).replace(",", ""))

    def run_at(self, cols, rows):
        args = ["-r", self.RATE, "-d", "8s", self.srv.url("/")]
        name, rc, out = self.start(args, cols, rows)
        lines = self.wait_frame(name, self.measured_frame, rc=rc)
        view = self.check_frame(lines, cols)
        got = self.achieved(view)
        self.assertLess(abs(got - self.RATE), 0.3 * self.RATE, "\n".join(view))
        self.assertRegex([l for l in view if l.startswith("last second")][0],
                         r"p50 \d.* p99 \d")
        self.assertRegex(view[0], r"measure.*\d+\.\ds / 8\.0s +\d+\.\ds left")
        if cols >= 100:
            self.assertRegex(view[0], r"\[#+\.*\]")
        self.assertEqual(self.wait_end(rc), 0)
        time.sleep(0.3)
        end = self.capture(name)
        self.assertEqual(self.view_lines(end), [], "the view was not cleared:\n%s" % "\n".join(end))
        with open(out) as f:
            self.assertIn("pacer run report", f.read())  # the summary went to the file

    def test_80x24(self):
        self.run_at(80, 24)

    def test_200x50(self):
        self.run_at(200, 50)

    def test_resize_reflows(self):
        args = ["-r", self.RATE, "-d", "8s", self.srv.url("/")]
        name, rc, _ = self.start(args, 120, 30)
        self.check_frame(self.wait_frame(name, self.measured_frame, rc=rc), 120)
        for cols, rows in ((50, 30), (200, 40), (80, 12)):
            self.tmux("resize-window", "-t", name, "-x", str(cols), "-y", str(rows))
            time.sleep(1.5)  # a redraw at once on SIGWINCH, and one tick
            if os.path.exists(rc):
                break
            lines = self.capture(name)
            self.assertEqual(len(lines[-1]) <= cols, True)
            self.check_frame(lines, cols)
        self.assertEqual(self.wait_end(rc), 0)

    def test_short_terminal_keeps_to_its_height(self):
        args = ["-r", self.RATE, "-d", "4s", self.srv.url("/")]
        name, rc, _ = self.start(args, 80, 5)
        lines = self.wait_frame(name, lambda ls: any(l.startswith("rate ") for l in ls))
        view = self.view_lines(lines)
        self.assertLessEqual(len(view), 4, "\n".join(lines))
        self.assertTrue(view[0].startswith("pacer run"), "\n".join(lines))
        self.assertEqual(self.wait_end(rc), 0)

    def test_quiet_shows_nothing(self):
        args = ["--quiet", "-r", self.RATE, "-d", "3s", self.srv.url("/")]
        name, rc, _ = self.start(args, 80, 24)
        seen = []
        t_end = time.monotonic() + 60
        while (not os.path.exists(rc) or not open(rc).read().strip()) and time.monotonic() < t_end:
            seen += self.view_lines(self.capture(name))
            time.sleep(0.3)
        self.assertEqual(seen, [])
        self.assertEqual(self.wait_end(rc), 0)

    def test_dumb_terminal_one_line_a_second(self):
        args = ["-r", self.RATE, "-d", "4s", self.srv.url("/")]
        t0 = time.monotonic()
        name, rc, _ = self.start(args, 100, 40, env="env TERM=dumb")
        self.assertEqual(self.wait_end(rc), 0)
        took = time.monotonic() - t0
        lines = [l for l in self.capture(name) if l.startswith("[run ")]
        self.assertGreaterEqual(len(lines), 2, "\n".join(self.capture(name)))
        self.assertLessEqual(len(lines), took + 1)
        for l in lines:
            self.assertLessEqual(len(l), 99)
            self.assertRegex(l, r"^\[run (warm-up|measure|drain)\] \d+\.\ds +[\d,.]+/s of 400/s +p99 ")

    def test_stderr_to_a_file_gets_no_view(self):
        err = os.path.join(self.dir, "stderr.txt")
        args = ["-r", self.RATE, "-d", "3s", self.srv.url("/")]
        name, rc, out = self.start(args, 80, 24, redirect="> %s 2> %s" % (
            shlex.quote(os.path.join(self.dir, "so.txt")), shlex.quote(err)))
        self.assertEqual(self.wait_end(rc), 0)
        with open(err, "rb") as f:
            data = f.read()
        self.assertNotIn(b"\x1b[", data)
        self.assertNotIn(b"achieved", data)

    def test_ramp_shows_its_ladder(self):
        args = ["--steps", "200,300,400", "--step-duration", "2s", "--step-warmup", "0.5s",
                "--slo", "errors<50%", self.srv.url("/")]
        name, rc, out = self.start(args, 100, 30, sub="ramp")
        lines = self.wait_frame(name, lambda ls: any(
            l.startswith("step 2 ") for l in ls) and any(l.startswith("pacer ramp step 3/3") for l in ls),
            timeout=40)
        ladder = [l for l in lines if l.startswith("step ")]
        self.assertEqual(len(ladder), 2, "\n".join(lines))
        self.assertRegex(ladder[0], r"^step 1 +200/s +achieved [\d.,]+/s +p99 \S+ \S+ +errors [\d.]+% +Pass")
        self.assertRegex(ladder[1], r"^step 2 +300/s .*Pass")
        self.assertEqual(self.wait_end(rc), 0)
        time.sleep(0.3)
        end = self.capture(name)
        self.assertEqual([l for l in end if l.startswith(("step ", "pacer ramp step"))], [],
                         "\n".join(end))

    def test_compare_side_by_side(self):
        args = ["--variant", "A=" + self.srv.url("/"), "--variant", "B=" + self.srv.url("/b"),
                "-r", 300, "-d", "2s", "-w", "0.5s", "--repeat", 1]
        name, rc, _ = self.start(args, 100, 30, sub="compare")
        # B under way, A's figures kept from its measurement
        lines = self.wait_frame(name, lambda ls: any(l.startswith("> B ") for l in ls)
                                and any(l.startswith("pacer compare B") for l in ls)
                                and any(re.match(r"  A  [\d,.]+/s", l) for l in ls), timeout=40)
        a = [l for l in lines if l.startswith("  A  ")][0]
        self.assertRegex(a, r"^  A  [\d,.]+/s  p99 \d\S* \S+  errors 0$")
        got = float(re.match(r"  A  ([\d,.]+)/s", a).group(1).replace(",", ""))
        self.assertLess(abs(got - 300), 90, a)
        for l in lines:
            self.assertLessEqual(len(l), 99)
        self.assertEqual(self.wait_end(rc), 0)

    def test_ramp_rows_through_a_pipe(self):
        # `| cat` shows the rows on the terminal: no ladder in the view (it
        # would say each step twice), and the rows and the view do not mix
        args = ["--steps", "200,300", "--step-duration", "1.5s", "--step-warmup", "0.5s",
                "--slo", "errors<50%", self.srv.url("/")]
        name, rc, _ = self.start(args, 100, 40, sub="ramp", redirect="| cat")
        self.assertEqual(self.wait_end(rc), 0)
        time.sleep(0.3)
        end = self.capture(name)
        rows = [l for l in end if re.match(r"  step \d: ", l)]
        self.assertEqual(len(rows), 2, "\n".join(end))
        self.assertEqual([l for l in end if l.startswith(("step ",) + LABELS[1:])
                          or re.match(r"pacer ramp (step|  )", l)], [], "\n".join(end))


if __name__ == "__main__":
    unittest.main()
