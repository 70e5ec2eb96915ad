"""pacer --history, pacer history and pacer diff against two `pacer serve`
plans that differ only in their latency (2 ms and 3 ms).

HostileHistoryTest (issue 32 item 10): history files pacer must not trust.
A read-only, page-damaged or trigger-laden history fails `run --history`
before the load (exit 2, one line naming the file and the problem; before:
exit 3 after the whole load, "not a pacer history", or a run reported
stored that a trigger deleted); a FIFO fails history, show, diff, report
and run at once (before: they hung); escape sequences stored in a run are
not printed raw by history and diff."""

import json
import os
import pty
import shutil
import sqlite3
import subprocess
import tempfile
import threading
import time
import unittest

import harness
from harness import PacerServe

PLANS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "plans")
# one URL for every run, so the requests (and their hash) are the same; the
# server is chosen with --connect-to
URL = "http://bench.test/"
LOAD = ["--rate", "300", "-d", "0.7s", "-w", "0.2s", "-c", "8", "--repeat", "3"]


def pacer(*args, env=None, timeout=60):
    return subprocess.run([harness.pacer_bin()] + [str(a) for a in args], capture_output=True,
                          text=True, timeout=timeout, env=env)


def metric(diff, name):
    for m in diff["metrics"]:
        if m["metric"] == name:
            return m
    raise AssertionError("no %s in %s" % (name, diff))


class HistoryTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        harness.require_pacer()
        cls.dir = tempfile.mkdtemp(prefix="pacer-history-")
        cls.db = os.path.join(cls.dir, "runs.db")
        with PacerServe(os.path.join(PLANS, "cmp_lat2ms.yaml")) as fast, \
                PacerServe(os.path.join(PLANS, "cmp_lat3ms.yaml")) as slow:
            cls.fast_port, cls.slow_port = fast.port, slow.port
            # two runs of the fast plan at once, one by --history, one by
            # PACER_HISTORY: both must land
            runs = [None, None]

            def one(i):
                env = dict(os.environ)
                args = [URL, "--connect-to", "127.0.0.1:%d" % fast.port] + LOAD
                if i == 0:
                    args += ["--history", cls.db]
                else:
                    env["PACER_HISTORY"] = cls.db
                runs[i] = harness.run_pacer(args, timeout=60) if i == 0 else \
                    subprocess.run([harness.pacer_bin(), "run"] + args + ["--limited-ok", "-q"],
                                   capture_output=True, text=True, env=env, timeout=60)
            threads = [threading.Thread(target=one, args=(i,)) for i in range(2)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            cls.concurrent = runs
            cls.slow_run = harness.run_pacer([URL, "--connect-to", "127.0.0.1:%d" % slow.port,
                                              "--history", cls.db] + LOAD, timeout=60)
            # another path: other request bytes, another table hash
            cls.other_run = harness.run_pacer([URL + "other", "--connect-to",
                                               "127.0.0.1:%d" % fast.port, "--history", cls.db,
                                               "--rate", "300", "-d", "0.5s", "-c", "8"])
            cls.ramp_run = harness.run_pacer([URL, "--connect-to", "127.0.0.1:%d" % fast.port,
                                              "--history", cls.db, "--steps", "100,200",
                                              "--step-duration", "0.4s", "--step-warmup", "0.1s",
                                              "--slo", "p99<1s"], subcommand="ramp")

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.dir, True)

    def diff(self, *args):
        return pacer("diff", *args)

    def test_runs_land_newest_first(self):
        for r in self.concurrent:
            code = r.code if hasattr(r, "code") else r.returncode
            self.assertEqual(code, 0, r.stderr)
        self.assertEqual(self.slow_run.code, 0, self.slow_run.stderr)
        self.assertEqual(self.ramp_run.code, 0, self.ramp_run.stderr)
        con = sqlite3.connect(self.db)
        try:
            rows = con.execute("SELECT id, kind, command, p50_us, capacity_per_s, target, "
                               "table_hash FROM runs ORDER BY id").fetchall()
            self.assertEqual(con.execute("PRAGMA integrity_check").fetchone()[0], "ok")
        finally:
            con.close()
        self.assertEqual(len(rows), 5, rows)
        self.assertEqual([r[1] for r in rows], ["run"] * 4 + ["ramp"])
        self.assertEqual(rows[4][4], 200.0)  # the ramp's capacity: its highest passing step
        # the same requests (one hash) to both servers; the other path differs
        self.assertEqual(len({r[6] for r in rows[:3]}), 1, rows)
        self.assertNotEqual(rows[3][6], rows[0][6])
        out = pacer("history", self.db)
        self.assertEqual(out.returncode, 0, out.stderr)
        ids = [int(line.split()[0]) for line in out.stdout.splitlines()[1:]]
        self.assertEqual(ids, [5, 4, 3, 2, 1])
        out = pacer("history", self.db, "--kind", "ramp")
        self.assertEqual([int(line.split()[0]) for line in out.stdout.splitlines()[1:]], [5])
        out = pacer("history", self.db, "--table-hash", rows[3][6][:12])
        self.assertEqual([int(line.split()[0]) for line in out.stdout.splitlines()[1:]], [4])

    def test_slower_plan_is_a_regression_same_plan_is_not(self):
        same = self.diff("%s:1" % self.db, "%s:2" % self.db, "--json",
                         "--fail-on", "p50>+10%,p99>+50%,errors>+0.1pp")
        self.assertEqual(same.returncode, 0, same.stdout + same.stderr)
        d = json.loads(same.stdout)
        self.assertTrue(d["comparable"], d)
        p50 = metric(d, "p50")
        # 3 repetitions: fewer than a bootstrap verdict needs (5), so each
        # side's pooled histogram decides
        self.assertEqual(p50["method"], "percentile intervals")
        self.assertFalse(p50["significant"], p50)
        self.assertEqual(p50["verdict"], "no significant change")
        self.assertFalse(any(r["fired"] for r in d["rules"]), d["rules"])

        slow = self.diff("%s:1" % self.db, "%s:3" % self.db, "--json", "--fail-on", "p50>+10%")
        self.assertEqual(slow.returncode, 1, slow.stdout + slow.stderr)
        d = json.loads(slow.stdout)
        self.assertTrue(d["comparable"], d)
        p50 = metric(d, "p50")
        self.assertTrue(p50["significant"], p50)
        self.assertEqual(p50["verdict"], "worse")
        self.assertGreater(p50["ci95_low"], 1.0, p50)
        # 3 ms against 2 ms of planned latency, plus the same overheads
        self.assertGreater(p50["ratio"], 1.3, p50)
        self.assertLess(p50["ratio"], 1.7, p50)
        self.assertEqual(d["rules"], [{"rule": "p50>+10%", "fired": True}])
        # the text form says the same
        text = self.diff("%s:1" % self.db, "%s:3" % self.db, "--fail-on", "p50>+10%")
        self.assertEqual(text.returncode, 1)
        self.assertRegex(text.stdout, r"\n  p50 .* worse\n")
        self.assertIn("FAIL p50>+10%", text.stdout)

    def test_table_hash_change_is_not_comparable(self):
        r = self.diff("%s:1" % self.db, "%s:4" % self.db)
        self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
        self.assertEqual(r.stdout, "")
        self.assertIn("not comparable: workload hash differs", r.stderr)
        self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
        r = self.diff("%s:1" % self.db, "%s:4" % self.db, "--force", "--json")
        self.assertEqual(r.returncode, 0, r.stderr)
        d = json.loads(r.stdout)
        self.assertFalse(d["comparable"])
        self.assertEqual(d["differs"]["field"], "workload hash")
        self.assertGreater(len(d["metrics"]), 0)
        # a run against a ramp: another kind
        r = self.diff("%s:1" % self.db, "%s:last" % self.db)
        self.assertEqual(r.returncode, 2)
        self.assertIn("kind differs", r.stderr)

    def test_show_export_report_and_files(self):
        show = pacer("history", self.db, "show", "3")
        self.assertEqual(show.returncode, 0, show.stderr)
        stored = json.loads(show.stdout)
        self.assertEqual(stored, self.slow_run.json)  # the result as written, byte for byte
        out = os.path.join(self.dir, "exported.json")
        r = pacer("history", self.db, "export", "3", "-o", out)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(out) as f:
            self.assertEqual(f.read(), show.stdout)
        # a saved file and a history id diff alike
        r = self.diff(out, "%s:3" % self.db, "--json")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertFalse(any(m["significant"] for m in json.loads(r.stdout)["metrics"]))
        r = pacer("report", "%s:3" % self.db, "--format", "text")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("p99", r.stdout)
        trend = pacer("history", self.db, "--trend", "p50", "--kind", "run")
        self.assertEqual(trend.returncode, 0, trend.stderr)
        lines = trend.stdout.splitlines()[1:]
        self.assertEqual([int(x.split()[0]) for x in lines], [1, 2, 3, 4])  # oldest first
        self.assertIn("no: workload hash differs", lines[0])
        self.assertTrue(lines[3].endswith("yes"), lines[3])
        # the trend chart of a report: the runs of the same kind and target
        r = pacer("report", "%s:1" % self.db, "--format", "html", "--history", self.db,
                  "--trend", "p50,p99,achieved")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("Trend over 2 stored runs of %s" % self.db, r.stdout)
        self.assertIn("achieved (req/s)", r.stdout)
        r = pacer("report", "%s:1" % self.db, "--history", self.db, "--trend", "p42")
        self.assertEqual(r.returncode, 2)
        trend = pacer("history", self.db, "--trend", "p50", "--kind", "run", "--limit", "2")
        self.assertEqual([int(x.split()[0]) for x in trend.stdout.splitlines()[1:]], [3, 4])

    def test_bad_input(self):
        junk = os.path.join(self.dir, "junk.db")
        with open(junk, "w") as f:
            f.write("not a database at all\n" * 10)
        foreign = os.path.join(self.dir, "foreign.db")
        con = sqlite3.connect(foreign)
        con.execute("CREATE TABLE t(x)")
        con.commit()
        con.close()
        cases = [
            (["history", junk], "not a pacer history"),
            (["history", foreign], "not a pacer history"),
            (["history", os.path.join(self.dir, "missing.db")], "no such history database"),
            (["history", self.db, "show", "99"], "no run 99"),
            (["history", self.db, "show", "x"], "run id 'x'"),
            (["diff", "%s:99" % self.db, "%s:1" % self.db], "no run 99"),
            (["diff", "%s:1" % junk, "%s:1" % self.db], "not a pacer history"),
            (["diff", "%s:1" % self.db, "%s:2" % self.db, "--fail-on", "p99>10"],
             "expected % or pp"),
            (["report", "%s:42" % self.db], "no run 42"),
            (["run", "--self-contained", "-d", "5s", "--history", foreign], "application_id"),
        ]
        for args, want in cases:
            r = pacer(*args, timeout=20)
            self.assertEqual(r.returncode, 2, (args, r.stdout, r.stderr))
            self.assertIn(want, r.stderr, args)
            self.assertEqual(len(r.stderr.strip().splitlines()), 1, (args, r.stderr))
        # nothing stored was lost or changed
        con = sqlite3.connect(foreign)
        self.assertEqual([r[0] for r in con.execute("SELECT name FROM sqlite_master")], ["t"])
        con.close()
        with open(junk) as f:
            self.assertEqual(f.read(), "not a database at all\n" * 10)


SESSION = """
pacer.session(function(s)
  local status = s:get("/", {name = "login"})
  if status ~= 200 then s:fail() end
  s:sleep("20ms")
  s:get("/", {name = "account"})
end)
"""


class SessionHistoryTest(unittest.TestCase):
    """A session run's figures in the history (schema 3): two session runs,
    against the 2 ms and the 3 ms plan, stored with --history; the listing
    says how many sessions started, completed, failed and were abandoned,
    their duration and each step's latency; --trend takes the sessions'
    metrics; diff compares them and each step."""

    @classmethod
    def setUpClass(cls):
        harness.require_pacer()
        cls.dir = tempfile.mkdtemp(prefix="pacer-history-sess-")
        cls.db = os.path.join(cls.dir, "runs.db")
        script = os.path.join(cls.dir, "session.lua")
        with open(script, "w") as f:
            f.write(SESSION)
        cls.runs = []
        for plan in ("cmp_lat2ms.yaml", "cmp_lat3ms.yaml"):
            with PacerServe(os.path.join(PLANS, plan)) as srv:
                cls.runs.append(harness.run_pacer(
                    [URL, "--connect-to", "127.0.0.1:%d" % srv.port, "-s", script, "-r", 20,
                     "-d", "1s", "--drain", "3s", "--history", cls.db], timeout=60))

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.dir, True)

    def test_listing_trend_and_diff(self):
        for r in self.runs:
            self.assertEqual(r.code, 0, harness.describe(r))
        con = sqlite3.connect(self.db)
        try:
            rows = con.execute("SELECT id, sessions_started, sessions_completed, "
                               "sessions_failed, sessions_abandoned, session_p50_us "
                               "FROM runs ORDER BY id").fetchall()
            steps = con.execute("SELECT run_id, name FROM steps ORDER BY run_id, seq").fetchall()
            version = con.execute("PRAGMA user_version").fetchone()[0]
        finally:
            con.close()
        self.assertEqual(version, 4)
        for r, run in zip(rows, self.runs):
            ss = run.json["measure"]["sessions"]
            self.assertEqual(r[1:5], (ss["started"], ss["completed"], ss["failed"],
                                      ss["abandoned"]), run.json["measure"]["sessions"])
            self.assertEqual(r[5], ss["duration"]["p50_us"])
        self.assertEqual(rows[0][1], 20)
        self.assertEqual(steps, [(1, "login"), (1, "account"), (2, "login"), (2, "account")])
        out = pacer("history", self.db)
        self.assertEqual(out.returncode, 0, out.stderr)
        lines = out.stdout.splitlines()
        sess = [l for l in lines if l.strip().startswith("sessions ")]
        self.assertEqual(len(sess), 2, out.stdout)
        for l in sess:
            self.assertRegex(l, r"sessions 20 started, \d+ completed \([\d.]+%\), \d+ failed, "
                                r"\d+ abandoned; duration p50 \S+ \S+ p99 \S+ \S+; steps login "
                                r"p50 .* p99 .*, account p50 .* p99 ")
        # the session line follows its run's line
        self.assertTrue(lines[1].split()[0] == "2" and lines[2] == sess[0], out.stdout)
        out = pacer("history", self.db, "--trend", "session_p50")
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertEqual([int(l.split()[0]) for l in out.stdout.splitlines()[1:]], [1, 2])
        self.assertIn("session_p50", out.stdout.splitlines()[0])
        d = pacer("diff", self.db + ":1", self.db + ":2", "--json")
        self.assertEqual(d.returncode, 0, d.stderr)
        diff = json.loads(d.stdout)
        self.assertTrue(diff["comparable"], diff)
        for name in ("sessions", "session_p50", "session_p99"):
            metric(diff, name)
        self.assertEqual(metric(diff, "sessions")["method"], "two-proportion z test")
        self.assertEqual(metric(diff, "session_p50")["method"], "percentile intervals")
        self.assertEqual([s["name"] for s in diff["steps"]], ["login", "account"])
        for s in diff["steps"]:
            # each step's latency as each run measured it: the 3 ms plan's later
            by = {e["name"]: e for e in self.runs[0].json["measure"]["by_name"]}
            self.assertAlmostEqual(s["p50"]["old"], by[s["name"]]["latency"]["p50_us"], 3)
            self.assertEqual(s["p99"]["method"], "percentile intervals")
        t = self.diff(self.db + ":1", self.db + ":2")
        self.assertEqual(t.returncode, 0, t.stderr)
        self.assertRegex(t.stdout, r"\n  step +old +new")
        self.assertRegex(t.stdout, r"\n  login p50 ")
        self.assertRegex(t.stdout, r"\n  account p99 ")
        # a gate on the sessions' duration reads the same rows
        g = self.diff(self.db + ":1", self.db + ":1", "--fail-on",
                      "session_p99>+10%,step:login.p99>+10%")
        self.assertEqual(g.returncode, 0, g.stdout + g.stderr)
        self.assertIn("ok   session_p99>+10%", g.stdout)
        self.assertIn("ok   step:login.p99>+10%", g.stdout)
        bad = self.diff(self.db + ":1", self.db + ":2", "--fail-on", "step:login.p90>+10%")
        self.assertEqual(bad.returncode, 2, bad.stdout + bad.stderr)
        self.assertIn("step:NAME.p50 or step:NAME.p99", bad.stderr)

    def diff(self, *args):
        return pacer("diff", *args)


class RunSloTest(unittest.TestCase):
    """pacer run --slo: the measured phase judged, exit 1 on failure, the
    verdict in the JSON result (as the schema describes it)."""

    @classmethod
    def setUpClass(cls):
        harness.require_pacer()

    def run_slo(self, slo):
        return harness.run_pacer(["--self-contained", "--rate", "200", "-d", "0.4s", "-q",
                                  "--slo", slo])

    def test_pass_and_fail(self):
        ok = self.run_slo("p50<10s,errors<1%")
        self.assertEqual(ok.code, 0, ok.stderr)
        self.assertEqual(ok.json["slo"], {"expr": "p50<10s,errors<1%", "pass": True,
                                          "inconclusive": False, "reason": "Pass", "why": None,
                                          "material": []})
        bad = self.run_slo("p99<1ns")
        self.assertEqual(bad.code, 1, bad.stderr)
        self.assertFalse(bad.json["slo"]["pass"])
        self.assertTrue(bad.json["slo"]["reason"].startswith("Fail p99 "), bad.json["slo"])
        import test_report
        v = test_report.validator()
        errors = sorted(v.iter_errors(bad.json), key=str)
        self.assertEqual(errors, [], [e.message for e in errors[:3]])
        self.assertEqual(test_report.undescribed_fields(test_report.schema(), bad.json), [])
        usage = self.run_slo("p99<")
        self.assertEqual(usage.code, 2)
        self.assertIn("--slo", usage.stderr)


NOBODY = 65534
# what must never reach a terminal from a stored value: ESC, BEL, and C1
# CSI/OSC (U+009B, U+009D) in UTF-8
RAW_CONTROLS = (b"\x1b", b"\x07", b"\xc2\x9b", b"\xc2\x9d")
HOSTILE = "\x1b[2J\x1b]0;owned\x07\u009b31m"


class HostileHistoryTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        harness.require_pacer()
        cls.dir = tempfile.mkdtemp(prefix="pacer-history-hostile-")
        os.chmod(cls.dir, 0o777)  # the read-only case runs pacer as nobody when root
        cls.db = os.path.join(cls.dir, "good.db")
        for _ in range(2):
            r = pacer("run", "--self-contained", "-r", 100, "-d", "0.3s", "-q", "--limited-ok",
                      "-o", os.devnull, "--history", cls.db)
            assert r.returncode == 0, r.stderr

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.dir, True)

    def copy(self, name):
        path = os.path.join(self.dir, name)
        shutil.copy(self.db, path)
        return path

    def run_into(self, db, as_nobody=False):
        """pacer run -d 5s --history db: (CompletedProcess, seconds)."""
        kw = {}
        if as_nobody:
            def drop():
                os.setgid(NOBODY)
                os.setuid(NOBODY)
            kw["preexec_fn"] = drop
        t0 = time.monotonic()
        r = subprocess.run([harness.pacer_bin(), "run", "--self-contained", "-r", "100",
                            "-d", "5s", "-q", "--limited-ok", "-o", os.devnull,
                            "--history", db], capture_output=True, text=True, timeout=60, **kw)
        return r, time.monotonic() - t0

    def assert_refused_before_load(self, r, took, db, want):
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertLess(took, 2.5, "refused after the 5 s load, not before it")
        self.assertEqual(r.stderr.count("\n"), 1, r.stderr)
        self.assertIn("pacer run: --history %s: %s" % (db, want), r.stderr)

    def test_read_only_refused_before_the_load(self):
        db = self.copy("ro.db")
        os.chmod(db, 0o444)
        r, took = self.run_into(db, as_nobody=os.geteuid() == 0)
        self.assert_refused_before_load(r, took, db, "read-only: pacer cannot record into it")

    def test_damaged_pages_refused_before_the_load(self):
        db = self.copy("damaged.db")
        con = sqlite3.connect(db)
        page = con.execute("PRAGMA page_size").fetchone()[0]
        root = con.execute("SELECT rootpage FROM sqlite_master WHERE name = 'runs'").fetchone()[0]
        con.close()
        with open(db, "r+b") as f:
            f.seek((root - 1) * page)
            f.write(b"\xff" * 64)
        r, took = self.run_into(db)
        self.assert_refused_before_load(r, took, db, "damaged (PRAGMA quick_check: ")
        self.assertNotIn("not a pacer history", r.stderr)
        r = pacer("history", db, timeout=20)
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("%s: damaged (" % db, r.stderr)
        self.assertNotIn("not a pacer history", r.stderr)

    def test_trigger_refused_and_nothing_lost(self):
        db = self.copy("trigger.db")
        con = sqlite3.connect(db)
        con.execute("CREATE TRIGGER wipe AFTER INSERT ON runs BEGIN DELETE FROM runs; END")
        con.commit()
        con.close()
        r, took = self.run_into(db)
        self.assert_refused_before_load(r, took, db,
                                        "not pacer's schema: trigger 'wipe' was added outside "
                                        "pacer")
        con = sqlite3.connect(db)
        self.assertEqual(con.execute("SELECT count(*) FROM runs").fetchone()[0], 2)
        con.close()
        r = pacer("history", db, timeout=20)
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("trigger 'wipe'", r.stderr)

    def test_fifo_refused_at_once(self):
        fifo = os.path.join(self.dir, "fifo.db")
        os.mkfifo(fifo)
        cases = [["history", fifo], ["history", fifo, "show", "1"],
                 ["diff", fifo + ":1", self.db + ":1"], ["report", fifo + ":1"],
                 ["report", self.db + ":1", "--history", fifo],
                 ["run", "--self-contained", "-d", "5s", "--history", fifo]]
        for args in cases:
            try:  # a regression hangs here: the timeout fails the test instead of CI
                r = pacer(*args, timeout=10)
            except subprocess.TimeoutExpired:
                self.fail("%s hung on a FIFO" % args)
            self.assertEqual(r.returncode, 2, (args, r.stderr))
            self.assertIn("%s: a FIFO, not a history database" % fifo, r.stderr)
            self.assertEqual(r.stderr.count("\n"), 1, (args, r.stderr))

    def hostile_copy(self):
        """A copy whose runs hold escape sequences in their stored fields
        (the columns history lists, and the JSON diff reads)."""
        db = self.copy("escapes.db")
        con = sqlite3.connect(db)
        for i, field in ((1, "$.environment.cpu_model"), (2, "$.environment.cpu_model")):
            con.execute("UPDATE runs SET target = ?1, kind = 'run' || ?1, git_commit = ?1, "
                        "result_json = json_set(result_json, '$.pacer.version', ?1, "
                        "'$.started_at', ?1, ?3, ?1 || ?2) WHERE id = ?2",
                        ("http://x/" + HOSTILE, i, field))
        con.commit()
        con.close()
        return db

    def assert_no_raw_controls(self, data, what):
        for c in RAW_CONTROLS:
            self.assertNotIn(c, data, "%s printed %r raw: %r" % (what, c, data[:300]))

    def test_escape_sequences_not_printed_raw(self):
        db = self.hostile_copy()
        runs = [
            ("history", ["history", db]),
            ("diff --force", ["diff", db + ":1", db + ":2", "--force"]),
            ("diff, not comparable", ["diff", db + ":1", db + ":2"]),
        ]
        for what, args in runs:
            r = subprocess.run([harness.pacer_bin()] + args, capture_output=True, timeout=30)
            self.assertIn(r.returncode, (0, 2), (what, r.stderr))
            self.assert_no_raw_controls(r.stdout + r.stderr, what)
        r = subprocess.run([harness.pacer_bin(), "history", db], capture_output=True, timeout=30)
        self.assertIn(b"http://x/?[2J?]0;owned??31m", r.stdout)  # shown, made harmless
        r = subprocess.run([harness.pacer_bin(), "diff", db + ":1", db + ":2", "--force"],
                           capture_output=True, timeout=30)
        self.assertIn(b"NOT COMPARABLE: environment.cpu_model differs (old http://x/?[2J", r.stdout)
        # show on a terminal: the same JSON, its control characters escaped
        pid, fd = pty.fork()
        if pid == 0:
            os.execv(harness.pacer_bin(), [harness.pacer_bin(), "history", db, "show", "1"])
        out = b""
        while True:
            try:
                chunk = os.read(fd, 65536)
            except OSError:
                break
            if not chunk:
                break
            out += chunk
        os.close(fd)
        _, status = os.waitpid(pid, 0)
        self.assertEqual(os.waitstatus_to_exitcode(status), 0, out[-300:])
        self.assert_no_raw_controls(out, "history show on a terminal")
        shown = json.loads(out.decode().replace("\r\n", "\n"))
        self.assertEqual(shown["pacer"]["version"], "http://x/" + HOSTILE)
        # piped, byte for byte as stored
        r = subprocess.run([harness.pacer_bin(), "history", db, "show", "1"],
                           capture_output=True, timeout=30)
        con = sqlite3.connect(db)
        stored = con.execute("SELECT result_json FROM runs WHERE id = 1").fetchone()[0]
        con.close()
        self.assertEqual(r.stdout, stored.encode())


class TwoPortsTest(unittest.TestCase):
    """issue 30 item 7: two builds of one service on two ports were "not
    comparable" (the table hash holds the URL's host and port, sent in the
    Host header), although the target may differ; and `history --trend`
    called a rate change comparable that `diff` refused. One rule now: the
    workload hash (what was sent, not where) and diff's comparability, in
    diff, history --trend and report's trend chart alike."""

    @classmethod
    def setUpClass(cls):
        harness.require_pacer()
        cls.dir = tempfile.mkdtemp(prefix="pacer-history-ports-")
        cls.db = os.path.join(cls.dir, "runs.db")
        plan = os.path.join(PLANS, "cmp_lat2ms.yaml")
        with PacerServe(plan) as a, PacerServe(plan) as b:
            cls.ports = (a.port, b.port)
            cls.runs = []
            for port, rate in ((a.port, "200"), (b.port, "200"), (a.port, "300"),
                               (b.port, "200")):
                cls.runs.append(harness.run_pacer(
                    ["http://127.0.0.1:%d/" % port, "--rate", rate, "-d", "0.4s", "-c", "4",
                     "--history", cls.db], timeout=60))

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.dir, True)

    def test_two_ports_compare_a_rate_change_does_not(self):
        for r in self.runs:
            self.assertEqual(r.code, 0, r.stderr)
        w = [r.json["plan"]["workload"] for r in self.runs]
        # the bytes sent differ (Host: 127.0.0.1:PORT), the workload does not
        self.assertNotEqual(w[0]["sha256"], w[1]["sha256"])
        self.assertEqual(w[0]["workload_sha256"], w[1]["workload_sha256"])
        self.assertRegex(w[0]["workload_sha256"], r"^[0-9a-f]{64}$")
        r = pacer("diff", "%s:1" % self.db, "%s:2" % self.db, "--json")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertTrue(json.loads(r.stdout)["comparable"])
        r = pacer("diff", "%s:3" % self.db, "%s:4" % self.db)
        self.assertEqual(r.returncode, 2)
        self.assertIn("not comparable: plan.rate_per_s differs (old 300, new 200)", r.stderr)
        # the trend judges each run against the newest by the same rule
        t = pacer("history", self.db, "--trend", "p99")
        self.assertEqual(t.returncode, 0, t.stderr)
        why = {int(l.split()[0]): l.split("  ")[-1].strip() for l in t.stdout.splitlines()[1:]}
        self.assertEqual(why, {1: "yes (another target)", 2: "yes",
                               3: "no: plan.rate_per_s differs", 4: "yes"})
        # the report's trend chart takes the runs of the reported one's
        # target (runs 2 and 4) and judges them by the same rule
        r = pacer("report", "%s:4" % self.db, "--format", "html", "--history", self.db)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("Trend over 2 stored runs", r.stdout)

    def test_listing_shows_and_filters_the_workload_hash(self):
        """Before: the listing's column and --table-hash were the bytes' hash,
        so the two ports showed two prefixes while --trend called them
        comparable. Now the workload hash, one for both ports."""
        for r in self.runs:
            self.assertEqual(r.code, 0, r.stderr)
        whash = self.runs[0].json["plan"]["workload"]["workload_sha256"]
        out = pacer("history", self.db)
        self.assertEqual(out.returncode, 0, out.stderr)
        lines = out.stdout.splitlines()
        self.assertRegex(lines[0], r"^ +id +recorded \(UTC\) +kind +workload +achieved ")
        shown = {int(l.split()[0]): l.split()[4] for l in lines[1:]}
        self.assertEqual(shown, {i: whash[:12] for i in (1, 2, 3, 4)}, out.stdout)
        # the prefix of the workload hash finds both ports' runs, as does
        # the bytes' hash its own
        out = pacer("history", self.db, "--table-hash", whash[:8])
        self.assertEqual([int(l.split()[0]) for l in out.stdout.splitlines()[1:]], [4, 3, 2, 1])
        bytes1 = self.runs[1].json["plan"]["workload"]["sha256"]
        out = pacer("history", self.db, "--table-hash", bytes1[:16])
        self.assertEqual([int(l.split()[0]) for l in out.stdout.splitlines()[1:]], [4, 2])
        con = sqlite3.connect(self.db)
        try:
            self.assertEqual(con.execute("PRAGMA user_version").fetchone()[0], 4)
            self.assertEqual({r[0] for r in con.execute("SELECT workload_hash FROM runs")},
                             {whash})
        finally:
            con.close()


if __name__ == "__main__":
    unittest.main()
