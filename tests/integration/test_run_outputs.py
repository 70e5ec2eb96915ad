"""Outputs that plumb (issue 18): `-o -` puts the JSON alone on stdout and
the summary on stderr; a process substitution's /dev/fd/N and a FIFO get
the JSON written in place (never renamed over), with --report-dir made from
the same result; the FIFO is still a FIFO afterwards. Short self-contained
runs (about 1 s each)."""

import json
import os
import re
import select
import shutil
import stat
import subprocess
import tempfile
import threading
import unittest

import harness
from harness import PacerTestCase

LOAD = ["--self-contained", "--rate", "100", "--duration", "0.5s", "--limited-ok"]


def setUpModule():
    harness.require_pacer()


class OutputsTest(PacerTestCase):
    def setUp(self):
        self.d = tempfile.mkdtemp(prefix="pacer-outputs-")
        self.addCleanup(shutil.rmtree, self.d, True)

    def pacer(self, args, **kw):
        p = subprocess.run([harness.pacer_bin(), "run"] + LOAD + args, stdin=subprocess.DEVNULL,
                           capture_output=True, timeout=30, **kw)
        self.assertIn(p.returncode, (0, 4), p.stderr.decode(errors="replace"))
        return p

    def test_json_on_stdout_summary_on_stderr(self):
        p = self.pacer(["-o", "-"])
        res = json.loads(p.stdout)  # nothing but the JSON
        self.assertEqual(res["kind"], "run")
        err = p.stderr.decode()
        self.assertIn("pacer run report: http://127.0.0.1:", err)
        self.assertIn("latency", err)
        # /dev/stdout is the same stream
        p = self.pacer(["-o", "/dev/stdout"])
        self.assertEqual(json.loads(p.stdout)["kind"], "run")
        self.assertIn("latency", p.stderr.decode())
        # with another --out, the summary stays on stdout
        out = os.path.join(self.d, "r.json")
        p = self.pacer(["-o", out])
        self.assertIn("latency", p.stdout.decode())
        with open(out) as f:
            self.assertEqual(json.load(f)["kind"], "run")

    def test_dev_fd_pipe_like_process_substitution(self):
        r, w = os.pipe()
        got = []
        reader = threading.Thread(target=lambda: got.append(_drain(r)), daemon=True)
        reader.start()
        rep = os.path.join(self.d, "rep")
        try:
            self.pacer(["-q", "-o", "/dev/fd/%d" % w, "--report-dir", rep], pass_fds=(w,))
        finally:
            os.close(w)
            reader.join(10)
            os.close(r)
        self.assertEqual(json.loads(got[0])["kind"], "run")
        # the folder is made from the same result, not read back from the pipe
        self.assertTrue(os.path.isfile(os.path.join(rep, "report.html")))
        self.assertFalse(os.path.exists(os.path.join(rep, "result.json")))

    def test_unwritable_refused_before_the_load(self):
        """--report-dir - and a file of /proc are refused before any load
        (issue 32): the first made a folder named '-', the second passed the
        check (root may write /proc, by access()) and failed after the run."""
        for args, says in ((["--report-dir", "-"], b"--report-dir -: a folder is needed"),
                           (["-o", "/proc/version"], b"--out /proc/version: cannot write there"),
                           (["-o", "/proc/r.json"], b"--out /proc/r.json: cannot write there")):
            p = subprocess.run([harness.pacer_bin(), "run"] + LOAD + ["-q"] + args,
                               stdin=subprocess.DEVNULL, capture_output=True, timeout=30,
                               cwd=self.d)
            self.assertEqual(p.returncode, 2, (args, p.stderr))
            self.assertIn(says, p.stderr, args)
            self.assertNotIn(b"requests", p.stdout + p.stderr, args)  # no load, no summary
            self.assertEqual(os.listdir(self.d), [], args)
        p = subprocess.run([harness.pacer_bin(), "report", "/dev/null", "--report-dir", "-"],
                           capture_output=True, timeout=30, cwd=self.d)
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertEqual(os.listdir(self.d), [])

    def test_fifo_written_in_place(self):
        fifo = os.path.join(self.d, "fifo")
        os.mkfifo(fifo)
        # a reader from the start (pacer checks for one before the load);
        # the test's own write end keeps it from an end of file before
        # pacer has the FIFO open
        rd = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
        wr = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
        p = subprocess.Popen([harness.pacer_bin(), "run"] + LOAD + ["-q", "-o", fifo],
                             stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE)
        data = b""
        try:
            while True:
                ready, _, _ = select.select([rd], [], [], 30)
                self.assertTrue(ready, f"no whole result in the FIFO: {data[-200:]!r}")
                data += os.read(rd, 65536)
                try:
                    doc = json.loads(data)
                    break
                except ValueError:
                    continue
            os.close(wr)
            out, err = p.communicate(timeout=30)
        finally:
            if p.poll() is None:
                p.kill()
            os.close(rd)
        self.assertIn(p.returncode, (0, 4), err)
        self.assertEqual(doc["kind"], "run")
        self.assertTrue(stat.S_ISFIFO(os.lstat(fifo).st_mode))
        self.assertEqual(os.listdir(self.d), ["fifo"])  # no temporary left beside it

    def test_fifo_without_reader_refused(self):
        """A FIFO nobody reads, as -o, --hgrm or report -o, is refused at
        once (issue 32): pacer opened it after the load and waited for a
        reader for ever."""
        fifo = os.path.join(self.d, "fifo")
        os.mkfifo(fifo)
        says = b"a FIFO that no process reads"
        for args in (["-o", fifo], ["--hgrm", fifo]):
            p = subprocess.run([harness.pacer_bin(), "run"] + LOAD + ["-q"] + args,
                               stdin=subprocess.DEVNULL, capture_output=True, timeout=30)
            self.assertEqual(p.returncode, 2, (args, p.stderr))
            self.assertIn(says, p.stderr, args)
        res = os.path.join(self.d, "r.json")
        self.pacer(["-q", "-o", res])
        p = subprocess.run([harness.pacer_bin(), "report", res, "--format", "md", "-o", fifo],
                           capture_output=True, timeout=30)
        self.assertNotEqual(p.returncode, 0, p.stderr)
        self.assertIn(says, p.stderr)

    def test_link_to_dev_null_kept(self):
        link = os.path.join(self.d, "null.json")
        os.symlink("/dev/null", link)
        self.pacer(["-q", "-o", link])
        self.assertTrue(os.path.islink(link))
        self.assertEqual(os.readlink(link), "/dev/null")
        self.assertTrue(stat.S_ISCHR(os.stat("/dev/null").st_mode))

    def on_a_terminal(self, args, env):
        """pacer run ARGS with stdout and stderr a pseudo-terminal: what it
        drew there (raw, escapes and all)."""
        master, slave = os.openpty()
        try:
            p = subprocess.Popen([harness.pacer_bin(), "run"] + args, stdin=subprocess.DEVNULL,
                                 stdout=slave, stderr=slave,
                                 env=dict(os.environ, **env))
        finally:
            os.close(slave)
        out = []
        try:
            while True:
                try:
                    b = os.read(master, 65536)
                except OSError:  # EIO: the child closed the terminal
                    break
                if not b:
                    break
                out.append(b)
        finally:
            os.close(master)
            p.wait(30)
        self.assertIn(p.returncode, (0, 4))
        return b"".join(out).decode(errors="replace")

    def test_live_view(self):
        # issue 18: "0 req/s p99 -" all through the warm-up; issue 30: the
        # live view on stderr (tests/integration/test_live_view.py watches
        # it in tmux)
        args = ["--self-contained", "--rate", "400", "--warmup", "2.2s", "--duration", "1s",
                "--limited-ok"]
        raw = self.on_a_terminal(args, {"TERM": "xterm"})
        text = re.sub(r"\x1b\[[0-9;]*[A-Za-z]", "", raw).replace("\r", "\n")
        lines = text.split("\n")
        heads = [l for l in lines if l.startswith("pacer run  ")]
        self.assertTrue(any("  warm-up  " in l for l in heads), text)
        self.assertTrue(any("  measure  " in l for l in heads), text)
        rates = [float(m.group(1).replace(",", "")) for l in lines
                 for m in [re.search(r"^rate .* achieved ([\d,.]+)/s", l)] if m]
        self.assertGreaterEqual(len(rates), 2, text)
        self.assertTrue(all(r > 200 for r in rates), rates)  # live, not 0
        # the warm-up's own p99 from its first second on, not "-"
        warm = [l for l in lines if l.startswith("warm-up ")]
        self.assertTrue(any(re.search(r"p99 \d", l) for l in warm), warm)
        self.assertTrue(any(l.startswith("backlog ") for l in lines), text)
        # the summary after it (on a terminal, the one-screen form)
        self.assertIn("Achieved/s", text)
        dumb = self.on_a_terminal(["--self-contained", "--rate", "400", "--warmup", "1.2s",
                                   "--duration", "0.5s", "--limited-ok"], {"TERM": "dumb"})
        self.assertIn("Achieved/s", dumb)  # the summary
        self.assertNotIn("\x1b[", dumb)  # no escapes
        plain = [l for l in dumb.replace("\r", "").split("\n") if l.startswith("[run ")]
        self.assertLessEqual(len(plain), 2, dumb)  # one line a second at most (1.7 s)
        for l in plain:
            self.assertRegex(l, r"^\[run (warm-up|measure|drain)\] \d")


def _drain(fd):
    chunks = []
    while True:
        b = os.read(fd, 65536)
        if not b:
            return b"".join(chunks)
        chunks.append(b)


if __name__ == "__main__":
    unittest.main()
