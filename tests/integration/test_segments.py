"""Four --segment processes against nginx, started with one --start-at,
merged with `pacer merge`: equal to a single-process run of the same plan
in everything deterministic (scheduled, sent and completed counts, the
requests per path in nginx's access log), per-second series that line up,
and refusals of a missing or duplicated segment (docs/distributed.md)."""

import collections
import datetime
import json
import math
import os
import subprocess
import tempfile
import time
import unittest

import harness
from harness import Nginx, PacerTestCase

SEGS = 4
RATE = 500
DURATION = "2s"
# paths of the request table, in order: 7 entries, so arrival i's request
# (i mod 7) and its segment (i mod 4) cycle differently
PATHS = ["/hello", "/notfound", "/hello", "/file", "/notfound", "/hello", "/file"]

_ngx = None


def setUpModule():
    global _ngx
    harness.require_pacer()
    _ngx = Nginx().start()


def tearDownModule():
    if _ngx is not None:
        _ngx.stop()


def start_proc(argv, d, name):
    so = open(os.path.join(d, name + ".out"), "wb")
    se = open(os.path.join(d, name + ".err"), "wb")
    p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=so, stderr=se)
    harness._register(p)
    return p, so, se


def finish(p, so, se, timeout):
    try:
        code = p.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        harness.stop_process(p)
        code = None
    harness._unregister(p)
    so.close()
    se.close()
    return code


class SegmentsTest(PacerTestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.dir = tempfile.mkdtemp(prefix="pacer-seg-")
        cls.table = os.path.join(cls.dir, "table.txt")
        with open(cls.table, "w") as f:
            f.write("\n".join(f"GET http://127.0.0.1:{_ngx.port}{p}\n" for p in PATHS))
        plan = ["--requests-file", cls.table, "--rate", RATE, "--duration", DURATION,
                "--connections", 8, "--timeout", "5s", "-q", "--limited-ok"]
        plan = [str(a) for a in plan]
        pacer = harness.pacer_bin()

        # the single-process run
        cls.mark0 = _ngx.log_mark()
        single = os.path.join(cls.dir, "single.json")
        p = start_proc([pacer, "run"] + plan + ["-o", single], cls.dir, "single")
        cls.single_code = finish(*p, timeout=30)
        cls.single_paths = cls.path_counts(cls.mark0)

        # four segments, one start time 2 s ahead
        start = (datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(seconds=2))
        cls.start_at = start.strftime("%Y-%m-%dT%H:%M:%S.") + f"{start.microsecond // 1000:03d}Z"
        cls.mark1 = _ngx.log_mark()
        procs, cls.seg_files = [], []
        for k in range(SEGS):
            out = os.path.join(cls.dir, f"seg{k}.json")
            cls.seg_files.append(out)
            procs.append(start_proc([pacer, "run"] + plan +
                                    ["--segment", f"{k}/{SEGS}", "--start-at", cls.start_at,
                                     "-o", out], cls.dir, f"seg{k}"))
        cls.seg_codes = [finish(*p, timeout=30) for p in procs]
        cls.seg_paths = cls.path_counts(cls.mark1)
        cls.merged_path = os.path.join(cls.dir, "merged.json")
        cls.merge = subprocess.run([pacer, "merge"] + cls.seg_files + ["-o", cls.merged_path],
                                   capture_output=True, timeout=30)
        with open(single) as f:
            cls.single = json.load(f)
        cls.merged = None
        if cls.merge.returncode == 0:
            with open(cls.merged_path) as f:
                cls.merged = json.load(f)

    @classmethod
    def path_counts(cls, mark):
        return collections.Counter(l.uri.split("?", 1)[0] for l in _ngx.log_lines(mark)) \
            if _ngx.count(mark) else collections.Counter()

    def err(self, name):
        with open(os.path.join(self.dir, name + ".err"), errors="replace") as f:
            return f.read()

    def test_processes_succeeded(self):
        self.assertEqual(self.single_code, 0, self.err("single"))
        for k, c in enumerate(self.seg_codes):
            self.assertEqual(c, 0, self.err(f"seg{k}"))
        self.assertEqual(self.merge.returncode, 0, self.merge.stderr)

    def test_counts_equal_single_run(self):
        self.assertIsNotNone(self.merged, self.merge.stderr)
        m, s = self.merged["measure"]["requests"], self.single["measure"]["requests"]
        for k in ("scheduled", "sent", "completed"):
            self.assertEqual(m[k], s[k], k)
        # the plan's arrivals: RATE/s for DURATION, each answered
        self.assertEqual(s["scheduled"], RATE * 2)
        self.assertEqual(m["completed"], m["scheduled"])
        # each segment scheduled its share: arrival i belongs to segment i mod 4
        for seg in self.merged["segments"]:
            k = seg["index"]
            self.assertEqual(seg["requests"]["scheduled"],
                             len(range(k, RATE * 2, SEGS)), seg["file"])

    def test_paths_equal_single_run(self):
        # arrival i carries request i mod len(PATHS), in one process or four
        want = collections.Counter(PATHS[i % len(PATHS)] for i in range(RATE * 2))
        self.assertEqual(dict(self.single_paths), dict(want))
        self.assertEqual(dict(self.seg_paths), dict(want))
        st_m = self.merged["measure"]["responses"]["by_status"]
        st_s = self.single["measure"]["responses"]["by_status"]
        self.assertEqual(st_m, st_s)

    def test_series_line_up(self):
        # seconds of completion since the measured phase began: the last
        # may hold a few responses that came after the load ended
        ms, ss = self.merged["series"], self.single["series"]
        self.assertLessEqual(abs(len(ms) - len(ss)), 1, (ms, ss))
        self.assertEqual([p["t_s"] for p in ms], list(range(len(ms))))
        self.assertEqual(sum(p["completed"] for p in ms), self.merged["measure"]["requests"]["completed"])
        for p in ms[:2]:  # each full second holds every segment's share
            self.assertGreater(p["completed"], RATE * 0.8, ms)
        # per segment, the same seconds (they started together)
        for seg in self.seg_files:
            with open(seg) as f:
                self.assertLessEqual(len(json.load(f)["series"]), len(ms))

    def test_start_at_recorded(self):
        for seg in self.merged["segments"]:
            clock = seg["clock"]
            self.assertEqual(clock["start_at"], self.start_at)
            # started at the given time: not before it, and not much after
            self.assertGreaterEqual(clock["late_ms"], 0)
            self.assertLess(clock["late_ms"], 500)
        self.assertLess(self.merged["merged"]["start_skew_ms"], 500)

    def test_merged_histogram_is_the_sum(self):
        lat = self.merged["measure"]["latency"]
        self.assertEqual(lat["count"], sum(c for _, c in lat["hist"]["counts"]))
        self.assertEqual(lat["count"], self.single["measure"]["latency"]["count"])

    def test_connected_merged(self):
        """Each segment keeps the addresses it connected to; the merged
        result lists each address once (all four went to one nginx)."""
        seen = set()
        for seg in self.merged["segments"]:
            self.assertEqual(len(seg["connected"]), 1, seg["connected"])
            seen.add(seg["connected"][0]["address"])
        self.assertEqual(len(seen), 1, seen)
        self.assertEqual(self.merged["connected"], self.merged["segments"][0]["connected"])
        self.assertTrue(self.merged["connected"][0]["loopback"])

    def test_report_renders_merged(self):
        r = subprocess.run([harness.pacer_bin(), "report", self.merged_path, "--format", "text"],
                           capture_output=True, timeout=30)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn(b"Latency", r.stdout)
        # its conditions name every generator
        r = subprocess.run([harness.pacer_bin(), "report", self.merged_path, "--format", "md"],
                           capture_output=True, timeout=30)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn(b"4 segments merged", r.stdout)
        for k in range(SEGS):
            self.assertIn(f"| Segment {k} |".encode(), r.stdout)
            self.assertIn(os.path.basename(self.seg_files[k]).encode(), r.stdout)

    def test_refusals(self):
        pacer = harness.pacer_bin()
        out = os.path.join(self.dir, "refused.json")
        r = subprocess.run([pacer, "merge"] + self.seg_files[:3] + ["-o", out],
                           capture_output=True, timeout=30)
        self.assertEqual(r.returncode, 2)
        self.assertIn(b"segment 3/4 is missing", r.stderr)
        r = subprocess.run([pacer, "merge"] + self.seg_files + [self.seg_files[1], "-o", out],
                           capture_output=True, timeout=30)
        self.assertEqual(r.returncode, 2)
        self.assertIn(b"are both segment 1/4", r.stderr)
        self.assertFalse(os.path.exists(out))

    def test_schema_describes_results(self):
        import test_report
        schema = test_report.schema()
        with open(self.seg_files[0]) as f:
            seg = json.load(f)
        for name, doc in (("segment", seg), ("merged", self.merged)):
            self.assertEqual(test_report.undescribed_fields(schema, doc), [], name)

    def test_refine_refused(self):
        r = subprocess.run([harness.pacer_bin(), "ramp", _ngx.url("/hello"), "--steps", "10,20",
                            "--slo", "p99<1s", "--refine", "--segment", "0/2"],
                           capture_output=True, timeout=30)
        self.assertEqual(r.returncode, 2)
        self.assertIn(b"--refine does not combine with --segment", r.stderr)


class PoissonRandomTest(PacerTestCase):
    """Seeded Poisson arrivals and --order random: the segments send the
    same arrivals with the same requests as one process (the same seed)."""

    def test_same_arrivals_and_requests(self):
        d = tempfile.mkdtemp(prefix="pacer-segpo-")
        table = os.path.join(d, "table.txt")
        with open(table, "w") as f:
            f.write("\n".join(f"GET http://127.0.0.1:{_ngx.port}{p}\n" for p in PATHS))
        plan = [str(a) for a in ["--requests-file", table, "--rate", 400, "--duration", "1500ms",
                                 "--arrival", "poisson", "--seed", 7, "--order", "random",
                                 "--connections", 8, "--timeout", "5s", "-q", "--limited-ok"]]
        pacer = harness.pacer_bin()
        mark = _ngx.log_mark()
        single = os.path.join(d, "single.json")
        self.assertEqual(finish(*start_proc([pacer, "run"] + plan + ["-o", single], d, "single"),
                                timeout=30), 0)
        single_paths = SegmentsTest.path_counts(mark)
        mark = _ngx.log_mark()
        files, procs = [], []
        for k in range(SEGS):
            files.append(os.path.join(d, f"p{k}.json"))
            procs.append(start_proc([pacer, "run"] + plan + ["--segment", f"{k}/{SEGS}",
                                    "--start-at", "+1s", "-o", files[-1]], d, f"p{k}"))
        self.assertEqual([finish(*p, timeout=30) for p in procs], [0] * SEGS)
        seg_paths = SegmentsTest.path_counts(mark)
        merged = os.path.join(d, "m.json")
        r = subprocess.run([pacer, "merge"] + files + ["-o", merged], capture_output=True, timeout=30)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(merged) as f:
            m = json.load(f)["measure"]["requests"]
        with open(single) as f:
            s = json.load(f)["measure"]["requests"]
        self.assertEqual((m["scheduled"], m["completed"]), (s["scheduled"], s["completed"]))
        self.assertEqual(dict(seg_paths), dict(single_paths))
        self.assertEqual(sum(single_paths.values()), s["completed"])
        # random order over 7 entries of 3 paths: not the sequential mix
        seq = collections.Counter(PATHS[i % len(PATHS)] for i in range(s["scheduled"]))
        self.assertNotEqual(dict(single_paths), dict(seq))


class ClosedLoopSegmentsTest(PacerTestCase):
    """Closed loop: --requests and --concurrency split with the remainder
    to the first segments; merged, the plan's total."""

    def test_requests_split(self):
        d = tempfile.mkdtemp(prefix="pacer-segcl-")
        pacer = harness.pacer_bin()
        files, mark = [], _ngx.log_mark()
        for k in range(SEGS):
            out = os.path.join(d, f"c{k}.json")
            files.append(out)
            r = subprocess.run([pacer, "run", _ngx.url("/hello"), "--requests", "103",
                                "--concurrency", "8", "--segment", f"{k}/{SEGS}", "-q", "-o", out],
                               capture_output=True, timeout=30)
            self.assertEqual(r.returncode, 0, r.stderr)
        got = []
        for f in files:
            with open(f) as fh:
                res = json.load(fh)
            got.append((res["measure"]["requests"]["completed"],
                        res["measure"]["connections"]["opened"]))
        self.assertEqual(got, [(26, 2), (26, 2), (26, 2), (25, 2)])
        self.assertEqual(_ngx.count(mark, path="/hello"), 103)
        merged = os.path.join(d, "m.json")
        r = subprocess.run([pacer, "merge"] + files + ["-o", merged], capture_output=True, timeout=30)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(merged) as fh:
            m = json.load(fh)
        self.assertEqual(m["measure"]["requests"]["completed"], 103)
        self.assertEqual(m["measure"]["connections"]["opened"], 8)

    def test_table_requests_exact(self):
        # segment k sends the plan's requests sched_split_first(103, 4, k)
        # onwards (its threads: the next ranges of its share), so the union
        # is requests 0..102 of one process: in turn, entry i mod 7; at
        # random, draw i of the seeded stream
        d = tempfile.mkdtemp(prefix="pacer-segclt-")
        table = os.path.join(d, "table.txt")
        with open(table, "w") as f:
            f.write("\n".join(f"GET http://127.0.0.1:{_ngx.port}{p}\n" for p in PATHS))
        pacer = harness.pacer_bin()
        plan = ["--requests-file", table, "--requests", "103", "--concurrency", "8", "-q"]

        def paths(extra):
            mark = _ngx.log_mark()
            r = subprocess.run([pacer, "run"] + plan + extra + ["-o", os.path.join(d, "x.json")],
                               capture_output=True, timeout=30)
            self.assertEqual(r.returncode, 0, r.stderr)
            return SegmentsTest.path_counts(mark)

        def segs(extra):
            total = collections.Counter()
            for k in range(SEGS):
                total += paths(extra + ["--segment", f"{k}/{SEGS}", "--threads", "2"])
            return total

        want = collections.Counter(PATHS[i % len(PATHS)] for i in range(103))
        self.assertEqual(dict(paths([])), dict(want))
        self.assertEqual(dict(segs([])), dict(want))
        rnd = ["--order", "random", "--seed", "5"]
        single = paths(rnd)
        self.assertEqual(sum(single.values()), 103)
        self.assertNotEqual(dict(single), dict(want))
        self.assertEqual(dict(segs(rnd)), dict(single))


class SegmentedRampTest(PacerTestCase):
    """Four segments of a ramp: the merged steps' verdicts are those of the
    pooled counts, whatever each segment judged of its own share."""

    SLO_ERR_PCT = 28.6  # the table's 404 share is 2/7 = 28.57 %: close to the line

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.dir = tempfile.mkdtemp(prefix="pacer-segramp-")
        table = os.path.join(cls.dir, "table.txt")
        with open(table, "w") as f:
            f.write("\n".join(f"GET http://127.0.0.1:{_ngx.port}{p}\n" for p in PATHS))
        pacer = harness.pacer_bin()
        cls.files, procs = [], []
        for k in range(SEGS):
            out = os.path.join(cls.dir, f"ramp{k}.json")
            cls.files.append(out)
            argv = [pacer, "ramp", "--requests-file", table, "--steps", "150,301",
                    "--step-duration", "1s", "--step-warmup", "0s",
                    "--slo", f"errors<{cls.SLO_ERR_PCT}%,p99<5s", "--connections", 8,
                    "--timeout", "5s", "-q", "--limited-ok", "--segment", f"{k}/{SEGS}",
                    "--start-at", "+1s", "-o", out]
            procs.append(start_proc([str(a) for a in argv], cls.dir, f"ramp{k}"))
        cls.codes = [finish(*p, timeout=30) for p in procs]
        cls.merged_path = os.path.join(cls.dir, "merged.json")
        cls.merge = subprocess.run([pacer, "merge"] + cls.files + ["-o", cls.merged_path],
                                   capture_output=True, timeout=30)

    def test_verdicts_from_pooled_counts(self):
        self.assertEqual(self.merge.returncode, 0, self.merge.stderr)
        segs = []
        for f in self.files:
            with open(f) as fh:
                segs.append(json.load(fh))
        with open(self.merged_path) as fh:
            merged = json.load(fh)
        self.assertEqual(len(merged["steps"]), 2)
        highest = None
        for i, step in enumerate(merged["steps"]):
            sent = sum(s["steps"][i]["measure"]["requests"]["sent"] for s in segs)
            errs = sum(s["steps"][i]["measure"]["errors"]["total"] for s in segs)
            self.assertEqual(step["measure"]["requests"]["sent"], sent)
            want_pass = 100.0 * errs / sent < self.SLO_ERR_PCT
            self.assertEqual(step["verdict"]["pass"], want_pass, (i, errs, sent, step["verdict"]))
            # inconclusive from the pooled lagged failures, as one process
            # judges its own (docs/selfcheck.md): failed, and the clause
            # would pass without the failures of requests sent late
            lagged_failed = sum(s["steps"][i]["measure"]["requests"]["lagged_failed"]
                                for s in segs)
            self.assertEqual(step["measure"]["requests"]["lagged_failed"], lagged_failed)
            v = step["verdict"]
            if not want_pass and "errors" in v["reason"]:
                material = 100.0 * (errs - lagged_failed) / sent < self.SLO_ERR_PCT
                self.assertEqual("errors<28.6%" in v["material"], material, v)
            self.assertEqual(step["attempt"], 1)
            if want_pass and not v["inconclusive"]:
                highest = i + 1
        # 150 arrivals: 43 of them the 404s (28.67 %): the merged step fails,
        # though segments whose own share had fewer 404s passed it
        self.assertFalse(merged["steps"][0]["verdict"]["pass"])
        self.assertTrue(any(s["steps"][0]["verdict"]["pass"] for s in segs))
        hp = merged["highest_passing"]
        self.assertEqual(hp["step"] if hp else None, highest)
        if hp:
            self.assertIn(hp["bound"], ("exact", "lower", "top"))
        self.assertEqual(merged["inconclusive_steps"],
                         sum(1 for st in merged["steps"] if st["verdict"]["inconclusive"]))

    def test_missing_step_refused(self):
        # a ramp segment from a different plan (other steps) is refused
        with open(self.files[3]) as f:
            other = json.load(f)
        other["plan"]["steps_per_s"] = [150.0, 300.0]
        path = os.path.join(self.dir, "other.json")
        with open(path, "w") as f:
            json.dump(other, f)
        r = subprocess.run([harness.pacer_bin(), "merge"] + self.files[:3] + [path, "-o",
                           os.path.join(self.dir, "x.json")], capture_output=True, timeout=30)
        self.assertEqual(r.returncode, 2)
        self.assertIn(b"plan.steps_per_s", r.stderr)


# A mix spec (docs/tables.md): the table is generated, its names are its
# shapes and methods (GET rest, POST static, ...)
MIX_SPEC = """base_url: BASE
methods: {GET: 3, POST: 1}
body: {template: '{"id":${id}}'}
shapes:
  - {name: static, weight: 2, routes: 4, templates: ["/static/r${route}.js"]}
  - {name: rest, weight: 3, routes: 9, templates: ["/api/r${route}/u/${id}"]}
  - {name: glob, weight: 1, routes: 2, templates: ["/files/r${route}/${path}"]}
"""


def llround(x):
    return math.floor(x + 0.5)


def constant_count(rate, window_s):
    """Arrivals of a constant schedule due within window_s of its start
    (due time of arrival k: llround(k * 1e9 / rate) ns; sched_count)."""
    n = 0
    while llround(n * 1e9 / rate) < window_s * 1e9:
        n += 1
    return n


class SegmentedRampExactTest(PacerTestCase):
    """Three segments of a three-step ramp, merged: step by step the same
    scheduled and sent counts and the same requests per name as one process,
    because arrivals are numbered over the whole ramp, not per step
    (docs/distributed.md). Once with a 5-entry table in turn at constant
    arrivals; once with a generated mix table at random over seeded Poisson
    arrivals. The eight processes run at once (their counts come from their
    results, not from nginx's log)."""

    STEPS = [101, 203, 307]
    WARM_S, STEP_S = 0.1, 0.7
    NSEG = 3
    # 5 paths of distinct names: each step's range of arrivals (i mod 5) shows
    # in its per-name counts
    PATHS5 = ["/hello", "/notfound", "/file", "/missing-a", "/missing-b"]

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.dir = tempfile.mkdtemp(prefix="pacer-segexact-")
        pacer = harness.pacer_bin()
        seq = os.path.join(cls.dir, "five.txt")
        with open(seq, "w") as f:
            f.write("\n".join(f"GET http://127.0.0.1:{_ngx.port}{p}\n" for p in cls.PATHS5))
        spec = os.path.join(cls.dir, "mix.yaml")
        with open(spec, "w") as f:
            f.write(MIX_SPEC.replace("BASE", f"http://127.0.0.1:{_ngx.port}"))
        mix = os.path.join(cls.dir, "mix.jsonl")
        r = subprocess.run([pacer, "table", "generate", "--spec", spec, "--size", "23",
                            "--seed", "3", "-o", mix], capture_output=True, timeout=30)
        assert r.returncode == 0, r.stderr
        ramp = ["ramp", "--steps", ",".join(map(str, cls.STEPS)),
                "--step-duration", f"{int(cls.STEP_S * 1000)}ms",
                "--step-warmup", f"{int(cls.WARM_S * 1000)}ms", "--slo", "p99<5s",
                "--connections", 6, "--timeout", "5s", "-q", "--limited-ok",
                # the one process is the reference: no step measured again
                "--retries", 0]
        cls.plans = {
            "seq": ramp + ["--requests-file", seq],
            "mix": ramp + ["--requests-file", mix, "--arrival", "poisson", "--seed", 11,
                           "--order", "random"],
        }
        procs = {}
        for v, plan in cls.plans.items():
            plan = [str(a) for a in plan]
            procs[(v, "single")] = start_proc([pacer] + plan + ["-o", cls.out(v, "single")],
                                              cls.dir, f"{v}-single")
            for k in range(cls.NSEG):
                procs[(v, k)] = start_proc([pacer] + plan + [
                    "--segment", f"{k}/{cls.NSEG}", "--start-at", "+1s",
                    "-o", cls.out(v, k)], cls.dir, f"{v}-{k}")
        cls.codes = {key: finish(*p, timeout=40) for key, p in procs.items()}
        cls.merges = {}
        for v in cls.plans:
            cls.merges[v] = subprocess.run(
                [pacer, "merge"] + [cls.out(v, k) for k in range(cls.NSEG)] +
                ["-o", cls.out(v, "merged")], capture_output=True, timeout=30)

    @classmethod
    def out(cls, v, k):
        return os.path.join(cls.dir, f"{v}-{k}.json")

    def load(self, v, k):
        with open(self.out(v, k)) as f:
            return json.load(f)

    def check_same_as_single(self, v):
        single = self.load(v, "single")
        stuck = [s for s in single["steps"] if s["verdict"]["inconclusive"]]
        if len(single["steps"]) < len(self.STEPS) and stuck:
            # eight processes on this machine's cores kept the one process
            # late: its ramp ended at a step it could not offer on time
            self.skipTest("the reference ramp stayed inconclusive at %s/s: %s" %
                          (stuck[0]["offered_per_s"], stuck[0]["verdict"]["why"]))
        for key, code in self.codes.items():
            if key[0] == v:
                self.assertEqual(code, 0, key)
        self.assertEqual(self.merges[v].returncode, 0, self.merges[v].stderr)
        merged = self.load(v, "merged")
        self.assertEqual(len(single["steps"]), len(self.STEPS))
        self.assertEqual(len(merged["steps"]), len(self.STEPS))
        names = []
        for i, (a, b) in enumerate(zip(single["steps"], merged["steps"])):
            ra, rb = a["measure"]["requests"], b["measure"]["requests"]
            for k in ("scheduled", "sent", "completed"):
                self.assertEqual(rb[k], ra[k], (v, i, k))
            na = {n["name"]: (n["sent"], n["completed"]) for n in a["measure"]["by_name"]}
            nb = {n["name"]: (n["sent"], n["completed"]) for n in b["measure"]["by_name"]}
            self.assertEqual(nb, na, (v, "step", i + 1))
            self.assertEqual(sum(s for s, _ in na.values()), ra["sent"])
            names.append(na)
        return single, names

    def test_sequential_table(self):
        single, names = self.check_same_as_single("seq")
        # and what one process sends is arrival i -> entry i mod 5, i counted
        # from the ramp's start through every step's warm-up and measured phase
        base = 0
        for i, rate in enumerate(self.STEPS):
            warm = constant_count(rate, self.WARM_S)
            total = constant_count(rate, self.WARM_S + self.STEP_S)
            want = collections.Counter(
                "GET " + self.PATHS5[j % 5] for j in range(base + warm, base + total))
            self.assertEqual({n: s for n, (s, _) in names[i].items()}, dict(want), i + 1)
            self.assertEqual(single["steps"][i]["measure"]["requests"]["scheduled"], total - warm)
            base += total

    def test_mix_table_random_poisson(self):
        _, names = self.check_same_as_single("mix")
        # random order over the generated table: several names in every step
        for i, na in enumerate(names):
            self.assertGreaterEqual(len(na), 4, (i, na))


if __name__ == "__main__":
    unittest.main()
