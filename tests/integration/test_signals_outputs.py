"""SIGINT and SIGTERM while pacer writes its outputs (issue 32, item 4).

After the load, the first SIGINT or SIGTERM of a run (one that interrupted
the load counts) is said on stderr and every output is still written - the
JSON, the report folder, the history row - with the exit code the run
earned. The next ends pacer by that signal, saying so: what was written
stays, what was not is left as it was (an old file kept, not a half-new
one), and no temporary file or report folder is left behind. Outside a
measurement (`pacer merge`) one signal ends pacer the same way.

No sleeps: the moments are fixed two ways.
- The test hook PACER_TEST_SIGNAL_AT (src/cli/signals.h) raises SIGINT in
  pacer at a named point: "measured" (the load over, the signals still
  blocked), "out-open" (the result's temporary file open), "report-file"
  (a report file written into its temporary folder), "history".
- From outside, by PID: --out is a FIFO whose pipe holds 4 KiB and that the
  test does not read, so pacer, past its summary, is held writing the
  result (12 KB) for as long as the test likes; the test signals it there,
  waits for pacer's line on stderr, then signals again or reads the FIFO.
"""

import fcntl
import json
import os
import select
import signal
import sqlite3
import subprocess
import tempfile
import unittest

import harness
from harness import PacerTestCase

F_SETPIPE_SZ = 1031
FIRST = b"interrupted while writing the results"
AGAIN = b"interrupted again"
# short loads, without the timer-floor calibration before them
QUICK = ["--limited-ok", "--calibrate", "0"]
LOAD = ["run", "--self-contained", "-r", "200", "-d", "200ms"] + QUICK


def default_signals():
    """In pacer's child: SIGINT and SIGTERM at their default, as a shell's
    foreground job has them (pacer leaves a signal it was started with
    ignored so, and a test runner started with `&` ignores SIGINT)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


def outputs(d, out="r.json"):
    return ["-o", os.path.join(d, out), "--report-dir", os.path.join(d, "rep"),
            "--history", os.path.join(d, "h.db")]


def history_rows(d):
    with sqlite3.connect(os.path.join(d, "h.db")) as c:
        try:
            return c.execute("SELECT count(*) FROM runs").fetchone()[0]
        except sqlite3.OperationalError:  # no table yet
            return 0


def leftovers(d):
    """Temporary files and report folders anywhere under d."""
    found = []
    for root, dirs, files in os.walk(d):
        found += [os.path.join(root, n) for n in files + dirs
                  if ".tmp." in n or n.startswith(".pacer-report-")]
    return found


def read_until(stream, needle, proc, timeout=30.0):
    """Bytes from the pipe `stream` until they hold needle (or EOF)."""
    got = b""
    fd = stream.fileno()
    while needle not in got:
        ready, _, _ = select.select([fd], [], [], timeout)
        if not ready:
            proc.kill()
            raise AssertionError(f"no {needle!r} within {timeout}s: {got!r}")
        chunk = os.read(fd, 65536)
        if not chunk:
            break
        got += chunk
    return got


class SignalsWhileWritingTest(PacerTestCase):
    def pacer(self, args, d, at=None, quiet=True):
        env = dict(os.environ)
        env.pop("PACER_TEST_SIGNAL_AT", None)
        if at:
            env["PACER_TEST_SIGNAL_AT"] = at
        return subprocess.run([harness.pacer_bin()] + args + (["-q"] if quiet else []),
                              capture_output=True, timeout=120, env=env, cwd=d,
                              preexec_fn=default_signals)

    def assert_all_written(self, d, r, what, code=0):
        self.assertEqual(r.returncode, code, (what, r.stderr))
        self.assertIn(FIRST, r.stderr, what)
        self.assertNotIn(AGAIN, r.stderr, what)
        with open(os.path.join(d, "r.json")) as f:
            doc = json.load(f)
        self.assertEqual(doc["kind"], what[0], what)
        self.assertIs(doc["interrupted"], False, what)  # the load was whole
        self.assertTrue(os.path.exists(os.path.join(d, "rep", "report.html")), what)
        self.assertEqual(history_rows(d), 1, what)
        self.assertEqual(leftovers(d), [], what)

    def test_first_signal_at_each_point(self):
        """One signal anywhere in the writing: everything is written."""
        cases = [("run", p) for p in ("measured", "out-open", "report-file", "history")]
        cases += [("ramp", "measured"), ("compare", "out-open")]
        for cmd, point in cases:
            d = tempfile.mkdtemp(prefix="pacer-sig-")
            args = {"run": LOAD,
                    "ramp": ["ramp", "--self-contained", "--steps", "100,200", "--step-duration",
                             "200ms", "--step-warmup", "0s", "--slo", "p99<1s"] + QUICK,
                    "compare": ["compare", "--self-contained", "--variant", "A=/", "--variant",
                                "B=/", "-r", "100", "-d", "200ms", "--repeat", "1"] + QUICK}[cmd]
            r = self.pacer(args + outputs(d), d, at=point)
            self.assert_all_written(d, r, (cmd, point))

    def old_outputs(self, d):
        """A result and a report already there, to be kept as they were."""
        os.mkdir(os.path.join(d, "rep"))
        for name, text in (("r.json", "{}"), ("rep/report.html", "old")):
            with open(os.path.join(d, name), "w") as f:
                f.write(text)

    def assert_kept(self, d, name, text):
        with open(os.path.join(d, name)) as f:
            self.assertEqual(f.read(), text, name)

    def test_second_signal_ends_pacer(self):
        """A second signal ends pacer by it: the file being written and
        those after it are left as they were; no temporary is left."""
        # while the result's temporary is open: nothing is replaced
        d = tempfile.mkdtemp(prefix="pacer-sig2-")
        self.old_outputs(d)
        r = self.pacer(LOAD + outputs(d), d, at="out-open,out-open")
        self.assertEqual(r.returncode, -signal.SIGINT, r.stderr)
        self.assertIn(FIRST, r.stderr)
        self.assertIn(AGAIN, r.stderr)
        self.assert_kept(d, "r.json", "{}")
        self.assert_kept(d, "rep/report.html", "old")
        self.assertEqual(sorted(os.listdir(os.path.join(d, "rep"))), ["report.html"])
        self.assertEqual(history_rows(d), 0)
        self.assertEqual(leftovers(d), [])
        # half-way through the report folder: the result was written, the
        # folder is the old one whole (no new file in it, no temporary folder)
        d = tempfile.mkdtemp(prefix="pacer-sig2-")
        self.old_outputs(d)
        r = self.pacer(LOAD + outputs(d), d, at="report-file,report-file")
        self.assertEqual(r.returncode, -signal.SIGINT, r.stderr)
        with open(os.path.join(d, "r.json")) as f:
            self.assertIn("measure", json.load(f))
        self.assertEqual(sorted(os.listdir(os.path.join(d, "rep"))), ["report.html"])
        self.assert_kept(d, "rep/report.html", "old")
        self.assertEqual(history_rows(d), 0)
        self.assertEqual(leftovers(d), [])

    def test_signal_that_stopped_the_load_was_the_first(self):
        """Ctrl-C during the load stops it (exit 130, written, marked
        interrupted); a signal after that is the second and ends pacer."""
        d = tempfile.mkdtemp(prefix="pacer-sig4-")
        env = dict(os.environ, PACER_TEST_SIGNAL_AT="out-open")
        p = subprocess.Popen([harness.pacer_bin(), "run", "--self-contained", "-r", "200",
                              "-d", "60s", "--metrics-listen", "127.0.0.1:0"] + QUICK
                             + outputs(d), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             cwd=d, env=env, preexec_fn=default_signals)
        try:
            # said once the signals are blocked for the load: one sent now
            # stops it, however soon
            err = read_until(p.stderr, b"metrics at", p)
            p.send_signal(signal.SIGINT)
            out, rest = p.communicate(timeout=60)
        finally:
            if p.poll() is None:
                p.kill()
        err += rest
        self.assertEqual(p.returncode, -signal.SIGINT, err)
        self.assertIn(AGAIN, err)
        self.assertFalse(os.path.exists(os.path.join(d, "r.json")))
        self.assertEqual(leftovers(d), [])
        # without the second, the interrupted run is written, exit 130
        d = tempfile.mkdtemp(prefix="pacer-sig4-")
        p = subprocess.Popen([harness.pacer_bin(), "run", "--self-contained", "-r", "200",
                              "-d", "60s", "--metrics-listen", "127.0.0.1:0"] + QUICK
                             + outputs(d), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             cwd=d, preexec_fn=default_signals)
        try:
            err = read_until(p.stderr, b"metrics at", p)
            p.send_signal(signal.SIGINT)
            out, rest = p.communicate(timeout=60)
        finally:
            if p.poll() is None:
                p.kill()
        self.assertEqual(p.returncode, 130, err + rest)
        with open(os.path.join(d, "r.json")) as f:
            self.assertTrue(json.load(f)["interrupted"])
        self.assertEqual(history_rows(d), 1)

    def held(self, d):
        """pacer run with --out a FIFO it cannot finish writing until the
        test reads it, signalled by PID once its summary is out (the files
        are written after it). The test holds a write end too, so that
        reading never meets an end of file before pacer has opened the
        FIFO. The FIFO's read and write ends."""
        fifo = os.path.join(d, "out.fifo")
        os.mkfifo(fifo)
        rd = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
        wr = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
        fcntl.fcntl(rd, F_SETPIPE_SZ, 4096)
        p = subprocess.Popen([harness.pacer_bin()] + LOAD + outputs(d, "out.fifo"),
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=d,
                             preexec_fn=default_signals)
        read_until(p.stdout, b"\n", p)  # the summary has begun
        return p, rd, wr

    def drain(self, p, rd, wr):
        """The result pacer writes into the FIFO, read until it parses and
        then to pacer's end of file."""
        data = b""
        while True:
            ready, _, _ = select.select([rd], [], [], 30)
            if not ready:
                p.kill()
                raise AssertionError(f"no whole result in the FIFO: {len(data)} bytes")
            data += os.read(rd, 65536)
            try:
                doc = json.loads(data)
                break
            except ValueError:
                continue
        os.close(wr)  # the rest, up to pacer's close
        os.set_blocking(rd, True)
        while os.read(rd, 65536):
            pass
        os.close(rd)
        return doc

    def test_signals_from_outside_while_held(self):
        """SIGINT by PID while pacer is held writing its result into a FIFO:
        it says so and finishes, all outputs whole, exit 0. A SIGTERM after
        that line ends it by SIGTERM before the report and history."""
        d = tempfile.mkdtemp(prefix="pacer-sig3-")
        p, rd, wr = self.held(d)
        try:
            p.send_signal(signal.SIGINT)
            err = read_until(p.stderr, FIRST, p)
            doc = self.drain(p, rd, wr)  # lets pacer go on
            out, rest = p.communicate(timeout=60)
        finally:
            if p.poll() is None:
                p.kill()
        self.assertEqual(p.returncode, 0, err + rest)
        self.assertIs(doc["interrupted"], False)
        self.assertIn("measure", doc)
        self.assertTrue(os.path.exists(os.path.join(d, "rep", "report.html")))
        self.assertEqual(history_rows(d), 1)
        self.assertEqual(leftovers(d), [])

        d = tempfile.mkdtemp(prefix="pacer-sig3-")
        p, rd, wr = self.held(d)
        try:
            p.send_signal(signal.SIGINT)
            err = read_until(p.stderr, FIRST, p)
            p.send_signal(signal.SIGTERM)
            out, rest = p.communicate(timeout=60)
        finally:
            if p.poll() is None:
                p.kill()
            os.close(rd)
            os.close(wr)
        self.assertEqual(p.returncode, -signal.SIGTERM, err + rest)
        self.assertIn(AGAIN, rest)
        self.assertFalse(os.path.exists(os.path.join(d, "rep", "report.html")))
        self.assertEqual(history_rows(d), 0)
        self.assertEqual(leftovers(d), [])

    def test_merge_signal_keeps_old_result(self):
        """pacer merge: a signal while the merged result is written ends it
        by the signal, the old file kept whole, no temporary left."""
        d = tempfile.mkdtemp(prefix="pacer-sig5-")
        for k in (0, 1):
            r = self.pacer(LOAD + ["--segment", f"{k}/2", "-o", f"s{k}.json"], d)
            self.assertEqual(r.returncode, 0, r.stderr)
        with open(os.path.join(d, "m.json"), "w") as f:
            f.write("{}")
        r = self.pacer(["merge", "s0.json", "s1.json", "-o", "m.json"], d, at="out-open",
                       quiet=False)
        self.assertEqual(r.returncode, -signal.SIGINT, r.stderr)
        self.assertIn(b"interrupted while writing", r.stderr)
        self.assert_kept(d, "m.json", "{}")
        self.assertEqual(leftovers(d), [])
        r = self.pacer(["merge", "s0.json", "s1.json", "-o", "m.json"], d, quiet=False)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(os.path.join(d, "m.json")) as f:
            self.assertIn("merged", json.load(f))


if __name__ == "__main__":
    unittest.main()
