"""Usage errors: exit status 2 and one clear line on stderr that names the
problem."""

import os
import shutil
import tempfile
import unittest

import harness
from harness import Nginx, PacerTestCase

_ngx = None


def setUpModule():
    global _ngx
    harness.require_pacer()
    _ngx = Nginx().start()


def tearDownModule():
    if _ngx is not None:
        _ngx.stop()


class BadInputTest(PacerTestCase):
    def assert_usage_error(self, args, *mentions):
        """pacer run ARGS exits 2 with a single stderr line that contains at
        least one of `mentions` (case-insensitive)."""
        run = harness.run_pacer(args, timeout=20.0)
        self.assertFalse(run.timed_out, harness.describe(run))
        self.assertEqual(run.code, 2, harness.describe(run))
        lines = [l for l in run.stderr.splitlines() if l.strip()]
        self.assertEqual(len(lines), 1, "stderr should be one line:\n" + run.stderr)
        low = lines[0].lower()
        self.assertTrue(any(x.lower() in low for x in mentions),
                        "stderr %r mentions none of %r" % (lines[0], mentions))
        return run

    # A run that would be valid apart from the one bad thing: short, so that
    # a pacer that wrongly accepts it still ends quickly.
    def ok_args(self):
        return [_ngx.url("/hello"), "--duration", "200ms", "--rate", 10]

    def test_unknown_option(self):
        self.assert_usage_error(self.ok_args() + ["--no-such-option"], "--no-such-option")

    def test_bad_rate(self):
        self.assert_usage_error([_ngx.url("/hello"), "--duration", "200ms", "--rate", "abc"], "rate", "abc")

    def test_negative_duration(self):
        self.assert_usage_error([_ngx.url("/hello"), "--rate", 10, "--duration", "-1s"], "duration", "-1s")

    def test_url_without_host(self):
        self.assert_usage_error(["http://", "--duration", "200ms", "--rate", 10], "url", "http://", "host")

    def test_unsupported_scheme(self):
        self.assert_usage_error(["ftp://x", "--duration", "200ms", "--rate", 10], "ftp", "scheme")

    def test_unresolvable_host(self):
        self.assert_usage_error(["http://no-such-host.invalid/", "--duration", "200ms", "--rate", 10],
                                "no-such-host.invalid", "resolve")

    def test_connection_refused(self):
        port = harness.free_port()  # nobody listens there
        self.assert_usage_error(["http://127.0.0.1:%d/" % port, "--duration", "200ms", "--rate", 10],
                                "refused", str(port))

    def test_missing_body_file(self):
        missing = "/nonexistent/pacer-body-%d" % os.getpid()
        self.assertFalse(os.path.exists(missing))
        self.assert_usage_error(self.ok_args() + ["--body", "@" + missing], missing, "nonexistent")

    def test_rate_that_rounds_to_nothing(self):
        # issue 19 item 1: accepted before as rate_per_s 0.0, a run that never ended
        self.assert_usage_error([_ngx.url("/hello"), "--duration", "200ms", "--rate",
                                 ".000000000199"], "--rate")

    def test_requests_zero_is_no_limit_refused(self):
        # issue 19 item 6: 0 (or a fraction rounding to it) meant "no limit"
        for n in ("0", ".0000000002"):
            with self.subTest(requests=n):
                self.assert_usage_error([_ngx.url("/hello"), "--requests", n], "--requests",
                                        "at least 1")

    def test_table_options_checked_without_a_table(self):
        # issue 19 item 6: ignored before when no --requests-file was given
        self.assert_usage_error(self.ok_args() + ["--max-body", "1XB"], "--max-body '1XB'")
        self.assert_usage_error(self.ok_args() + ["--requests-format", "bogus"],
                                "--requests-format 'bogus'")

    def test_bad_url_control_bytes_not_echoed(self):
        # issue 19 item 10: ESC, CR and LF went to the terminal as they were
        run = self.assert_usage_error(["http://127.0.0.1:1/\x1b[31mred\r\nX", "--duration",
                                       "200ms", "--rate", 10], "bad URL")
        self.assertNotIn("\x1b", run.stderr)
        self.assertNotIn("\r", run.stderr)
        self.assertIn("/?[31mred??X", run.stderr)

    def test_bench_on_a_directory(self):
        # issue 19 item 10: said "Input/output error"
        d = tempfile.mkdtemp()
        run = harness.run_pacer([d], subcommand="bench", out=False, timeout=20.0)
        self.assertEqual(run.code, 2, harness.describe(run))
        self.assertIn(d + ": cannot read: Is a directory", run.stderr)
        os.rmdir(d)

    def test_low_rate_ends_at_its_duration(self):
        # issue 19 item 1: the schedule ended only at the first due time after
        # the phase (10 s later at 0.1 req/s); the phase ends at its planned end
        run = harness.run_pacer([_ngx.url("/hello"), "--rate", "0.1", "--duration", "1s"],
                                timeout=30.0)
        self.assertEqual(run.code, 0, harness.describe(run))
        self.assertLess(run.elapsed_s, 6.0, "a 1 s phase at 0.1 req/s took %.1f s" % run.elapsed_s)
        m = run.json["measure"]
        self.assertEqual(m["requests"]["scheduled"], 1, m["requests"])
        self.assertAlmostEqual(m["duration_s"], 1.0, delta=0.2)

    def test_nothing_sent_on_usage_error(self):
        mark = _ngx.log_mark()
        self.assert_usage_error(self.ok_args() + ["--threads", "zero"], "threads", "zero")
        self.assertEqual(_ngx.count(mark), 0)

    def test_unwritable_outputs_refused_before_the_load(self):
        # issue 18: an output that cannot be written failed only after the
        # whole load had run, losing the result
        d = tempfile.mkdtemp(prefix="pacer-out-")
        self.addCleanup(shutil.rmtree, d, True)
        afile = os.path.join(d, "a-file")
        with open(afile, "w") as f:
            f.write("x")
        cases = [
            (["--out", "/nonexistent/pacer-%d/r.json" % os.getpid()], "--out"),
            (["--out", d], "--out"),                               # a folder
            (["--hgrm", os.path.join(afile, "l.hgrm")], "--hgrm"),  # through a file
            (["--report-dir", os.path.join(afile, "rep")], "--report-dir"),
        ]
        for extra, opt in cases:
            with self.subTest(args=extra):
                mark = _ngx.log_mark()
                run = self.assert_usage_error(self.ok_args() + extra, opt)
                self.assertIn(extra[1], run.stderr)
                self.assertEqual(_ngx.count(mark), 0, "a load was sent: " + run.stderr)

    # issue 30 item 3: other tools' flags that mean something else here are
    # refused, naming pacer's option, before anything is sent (h2load's -m 10
    # sent the method "10": 1,000 x 404 and exit 0; oha's -q 500 said
    # "expected one URL, got 2 arguments")
    def test_peer_flags_name_pacers_option(self):
        cases = [
            (["-m", "10"], "--max-streams", "pacer's -m is the method"),
            (["--method", "10"], "--max-streams", "a number is no method"),
            (["-q", "500"], "-r/--rate", "pacer's -q is --quiet"),
            (["-rate=50/1s"], "two dashes: --rate=50/1s"),
            (["-h2"], "--http2"),
            (["-D", "5"], "-d/--duration"),
            (["-d", '{"a":1}'], "--body @FILE"),
            (["-t", "5s"], "--timeout"),
            (["-T", "application/json"], "--timeout", "Content-Type"),
            (["--vus", "10"], "--concurrency"),
            (["--rps", "100"], "-r/--rate"),
            (["-targets=t.txt"], "--requests-file"),
        ]
        for url, want in (("script.js", "pacer runs no k6 JavaScript"),
                          ("script.lua", "a wrk script goes with -s FILE.lua")):
            with self.subTest(url=url):
                self.assert_usage_error([url, "--duration", "200ms", "--rate", 10], want)
        for extra, *mentions in cases:
            with self.subTest(args=extra):
                mark = _ngx.log_mark()
                run = self.assert_usage_error(self.ok_args() + extra, *mentions)
                for m in mentions:
                    self.assertIn(m, run.stderr)
                self.assertEqual(_ngx.count(mark), 0, "a load was sent: " + run.stderr)

    def test_peer_flags_that_mean_the_same_work(self):
        # wrk's -t -c -d -H --latency, wrk2's -R, hey's and oha's -z -m -n
        for extra in (["-t", "1", "-c", "2", "-d", "300ms", "-H", "X-A: 1", "--latency", "-R", "20"],
                      ["-z", "300ms", "-m", "POST", "-c", "2"], ["-n", "5", "-c", "2", "-m", "GET"]):
            with self.subTest(args=extra):
                run = harness.run_pacer([_ngx.url("/hello")] + extra, timeout=30.0)
                self.assertEqual(run.code, 0, harness.describe(run))

    def test_did_you_mean(self):
        cases = [
            (self.ok_args() + ["--duraton", "1s"], "(did you mean --duration?)"),
            (self.ok_args() + ["--arrival", "poison"], "(did you mean poisson?)"),
            (["--self-contained=helo", "-n", "1"], "did you mean hello?"),
        ]
        for args, want in cases:
            with self.subTest(args=args):
                run = self.assert_usage_error(args, want)
        for argv, want in ((["rnu", "x"], "unknown command 'rnu' (did you mean run?)"),
                           (["help", "rmap"], "(did you mean ramp?)"),
                           (["report", "x.json", "--format", "htm"], "(did you mean html?)"),
                           (["history", "x.db", "--trend", "p99x"], "(did you mean p99?)"),
                           (["table", "hsah"], "(did you mean hash?)")):
            with self.subTest(argv=argv):
                r = harness.run_pacer(argv[1:], subcommand=argv[0], out=False, timeout=20.0,
                                      limited_ok=False)
                self.assertEqual(r.code, 2, harness.describe(r))
                self.assertIn(want, r.stderr)
                self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)


if __name__ == "__main__":
    unittest.main()
