"""Distributed runs on one machine (docs/distributed.md): segments started
together by segment 0's barrier (--barrier, on loopback), each printing its
result framed into a log where stderr is mixed in, as kubectl logs gives
them, and handing it in to segment 0, which merges; pacer merge reads the
raw logs; a segment that misses the start is counted and named; and every
field of a segment result merges by a stated rule (pacer merge --rules),
checked against the JSON schema and against real merged results."""

import base64
import hashlib
import json
import os
import re
import socket
import subprocess
import tempfile
import time
import unittest
import zlib

import harness
from harness import PacerTestCase

TOKEN = "test-secret-%d" % os.getpid()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


BEGIN_RE = re.compile(r"pacer-frame-begin 1 ([0-9a-f]{12}) (\S+) (\S+) (\d+) (\d+) (\d+) "
                      r"([0-9a-f]{64})$")
DATA_RE = re.compile(r"pacer-frame ([0-9a-f]{12}) (\d+)/(\d+) ([0-9a-f]{8}) ([A-Za-z0-9+/=]+)$")
END_RE = re.compile(r"pacer-frame-end 1 ([0-9a-f]{12})$")


def frames(text):
    """The framed documents of a log (dist/frame.h), decoded independently
    of pacer: [(kind, label, document)]. A frame line that a log split, with
    another stream's text spliced in and its rest on a later line (conmon
    logs long writes in pieces), is joined again, checked by its CRC-32."""
    begins, data = {}, {}

    def take(line):
        m = BEGIN_RE.match(line)
        if m:
            if m.group(7).startswith(m.group(1)):
                begins.setdefault(m.group(1), m.groups())
                return True
            return False
        m = DATA_RE.match(line)
        if m:
            fid, seq, n, crc, b64 = m.groups()
            if zlib.crc32(("%s %s/%s %s" % (fid, seq, n, b64)).encode()) == int(crc, 16):
                data.setdefault(fid, {})[int(seq)] = b64
                return True
            return False
        m = END_RE.match(line)
        return bool(m)

    heads = []
    for lno, raw in enumerate(text.splitlines()):
        line = raw.rstrip("\r")
        at = -1
        for m in re.finditer(r"pacer-frame", line):
            if m.start() == 0 or line[m.start() - 1] in " ]\t":
                at = m.start()
                break
        if at >= 0 and take(line[at:]):
            continue
        # maybe the rest of a split line: kubectl's prefix off, or not
        tails = [line]
        for pre in (r"^\[[^\]]*\] ", r"^\S+Z "):
            m = re.match(pre, tails[-1])
            if m:
                tails.append(tails[-1][m.end():])
        joined = False
        for hi in range(len(heads) - 1, -1, -1):
            hl, head = heads[hi]
            if lno - hl > 256:
                continue
            for t in tails:
                for k in range(len(head), -1, -1):
                    if take(head[:k] + t):
                        joined = True
                        break
                if joined:
                    break
            if joined:
                del heads[hi]
                break
        if not joined:
            for t in tails:
                for mark in ("pacer-frame-begin", "pacer-frame-end", "pacer-frame"):
                    for j in range(1, len(mark)):
                        if t.startswith(mark[j:]) and take(mark[:j] + t):
                            joined = True
                            break
                    if joined:
                        break
                if joined:
                    break
        if not joined and at >= 0:
            heads.append((lno, line[at:]))
    out = []
    for fid, (_, kind, label, jlen, zlen, lines, sha) in begins.items():
        z = b"".join(base64.b64decode(data[fid][i]) for i in range(1, int(lines) + 1))
        doc = zlib.decompress(z)
        assert len(z) == int(zlen) and len(doc) == int(jlen)
        assert hashlib.sha256(doc).hexdigest() == sha
        out.append((kind, label, json.loads(doc)))
    return out


def start_segment(d, k, n, port, plan, extra=(), env_token=TOKEN):
    """A segment process whose stdout and stderr go to one log, as a pod's."""
    log = open(os.path.join(d, "seg%d.log" % k), "wb")
    env = dict(os.environ, PACER_BARRIER_TOKEN=env_token)
    p = subprocess.Popen([harness.pacer_bin(), "run"] + plan +
                         ["--segment", "%d/%d" % (k, n), "--barrier", "127.0.0.1:%d" % port,
                          "--out", "-", "--framed", "-q", "--limited-ok"] + list(extra),
                         stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, env=env)
    harness._register(p)
    return p, log


def finish(p, log, timeout=60):
    try:
        code = p.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        harness.stop_process(p)
        code = None
    harness._unregister(p)
    log.close()
    return code


def read(path):
    with open(path, errors="replace") as f:
        return f.read()


PLAN = ["--self-contained", "--rate", "300", "--duration", "2s", "--connections", "6"]


class BarrierTest(PacerTestCase):
    """Three segments on loopback, started by the barrier; the merged
    result segment 0 writes and the one pacer merge makes of the logs."""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.dir = tempfile.mkdtemp(prefix="pacer-dist-")
        port = free_port()
        procs = {}
        # the others first: they retry until segment 0 listens
        for k in (2, 1, 0):
            procs[k] = start_segment(cls.dir, k, 3, port, PLAN, ["--barrier-margin", "700ms"])
            time.sleep(0.2)
        cls.codes = {k: finish(*procs[k]) for k in procs}
        cls.logs = [read(os.path.join(cls.dir, "seg%d.log" % k)) for k in range(3)]
        cls.merged_path = os.path.join(cls.dir, "merged.json")
        cls.merge = subprocess.run([harness.pacer_bin(), "merge"] +
                                   [os.path.join(cls.dir, "seg%d.log" % k) for k in (1, 2, 0)] +
                                   ["-o", cls.merged_path], capture_output=True, timeout=60)

    def test_segments_ran_and_handed_in(self):
        for k in range(3):
            self.assertEqual(self.codes[k], 0, self.logs[k])
        self.assertIn("barrier: all 3 segments in", self.logs[0])
        self.assertIn("the 3 segments' results merged into stdout", self.logs[0])
        for k in (1, 2):
            self.assertIn("segment %d's result handed in" % k, self.logs[k])

    def test_one_start(self):
        segs = {}
        for k in range(3):
            fr = [f for f in frames(self.logs[k]) if f[0] == "segment"]
            self.assertEqual(len(fr), 1, self.logs[k][:2000])
            segs[k] = fr[0][2]
            self.assertEqual(fr[0][1], "%d/3" % k)
        starts = {segs[k]["clock"]["start_at"] for k in segs}
        self.assertEqual(len(starts), 1, starts)
        for k in segs:
            self.assertLess(segs[k]["clock"]["late_ms"], 100, segs[k]["clock"])

    def test_merged_by_segment_0_equals_merged_from_logs(self):
        self.assertEqual(self.merge.returncode, 0, self.merge.stderr)
        with open(self.merged_path) as f:
            from_logs = json.load(f)
        mf = [f for f in frames(self.logs[0]) if f[0] == "merged"]
        self.assertEqual(len(mf), 1)
        self.assertEqual(mf[0][1], "3")
        by_0 = mf[0][2]
        for key in ("measure", "series", "plan", "generator_limited", "interrupted"):
            self.assertEqual(by_0[key], from_logs[key], key)
        self.assertEqual(by_0["merged"], from_logs["merged"])
        self.assertEqual(from_logs["merged"]["late"], [])
        self.assertEqual(from_logs["measure"]["requests"]["scheduled"], 600)
        self.assertEqual(from_logs["measure"]["requests"]["completed"], 600)
        self.assertEqual([s["file"] for s in by_0["segments"]],
                         ["hand-in 0/3", "hand-in 1/3", "hand-in 2/3"])

    def test_merge_reads_prefixed_interleaved_logs(self):
        # kubectl logs -l ... --prefix: every pod's lines, prefixed, in one stream
        text = "".join("[pod/pacer-x-%d-abcde/pacer] %s\n" % (k, line)
                       for k in range(3) for line in self.logs[k].splitlines())
        r = subprocess.run([harness.pacer_bin(), "merge", "-", "-o", "-"], input=text.encode(),
                           capture_output=True, timeout=60)
        self.assertEqual(r.returncode, 0, r.stderr)
        m = json.loads(r.stdout)
        self.assertEqual(m["measure"]["requests"]["completed"], 600)
        self.assertEqual(len(m["segments"]), 3)
        # without segment 2's log, segment 0's merged result stands in
        part = "".join(l + "\n" for l in text.splitlines() if "pacer-x-2-" not in l)
        r = subprocess.run([harness.pacer_bin(), "merge", "-", "-o", "-"], input=part.encode(),
                           capture_output=True, timeout=60)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn(b"taking the merged result segment 0 wrote", r.stderr)
        self.assertEqual(json.loads(r.stdout)["measure"]["requests"]["completed"], 600)
        # a log cut short: one line naming the frame and why
        cut = "\n".join(self.logs[1].splitlines()[:-10]) + "\n"
        r = subprocess.run([harness.pacer_bin(), "merge", "-", "-o", "-"], input=cut.encode(),
                           capture_output=True, timeout=60)
        self.assertEqual(r.returncode, 2)
        self.assertRegex(r.stderr.decode(), r"stdin: line \d+: frame [0-9a-f]{12} \(segment 1/3\)"
                                            r"(: \d+ of its \d+ data lines are missing| has "
                                            r"\d+ data lines, more than the whole text)")
        # pacer report reads a log with one framed result
        p = os.path.join(self.dir, "seg1.log")
        r = subprocess.run([harness.pacer_bin(), "report", p, "--format", "text"],
                           capture_output=True, timeout=60)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn(b"Latency", r.stdout)


class LateSegmentTest(PacerTestCase):
    """Segment 2 comes after the barrier timeout released the others: it
    gets the same start, now past, starts at once, and the merged result
    counts and names it."""

    def test_late_segment_named(self):
        d = tempfile.mkdtemp(prefix="pacer-dist-late-")
        port = free_port()
        # segment 0 gives up on the others after 1 s; they would wait 30 s
        # for it (as segment 0 might be scheduled late)
        wait = ["--barrier-timeout", "30s", "--barrier-margin", "300ms"]
        p1 = start_segment(d, 1, 3, port, PLAN, wait)
        time.sleep(0.2)
        p0 = start_segment(d, 0, 3, port, PLAN, ["--barrier-timeout", "1s",
                                                  "--barrier-margin", "300ms"])
        time.sleep(2.5)
        p2 = start_segment(d, 2, 3, port, PLAN, wait)
        codes = [finish(*p) for p in (p0, p1, p2)]
        logs = [read(os.path.join(d, "seg%d.log" % k)) for k in range(3)]
        self.assertEqual(codes, [0, 0, 0], logs)
        self.assertIn("2 of 3 segments in after", logs[0])
        self.assertIn("has passed: segment 2 checked in after segment 0 released", logs[2])
        merged = [f[2] for f in frames(logs[0]) if f[0] == "merged"][0]
        late = merged["merged"]["late"]
        self.assertEqual([x["index"] for x in late], [2], merged["merged"])
        self.assertGreater(late[0]["late_ms"], 500)
        self.assertTrue(any("segment 2" in w and "late" in w for w in merged["warnings"]),
                        merged["warnings"])
        # every count is still the plan's
        self.assertEqual(merged["measure"]["requests"]["scheduled"], 600)


class RefusalTest(PacerTestCase):
    def test_refusals(self):
        pacer = harness.pacer_bin()
        env = dict(os.environ, PACER_BARRIER_TOKEN=TOKEN)
        noenv = {k: v for k, v in os.environ.items() if k != "PACER_BARRIER_TOKEN"}
        cases = [
            (["--barrier", "127.0.0.1:1"], env, b"--barrier starts the segments of one plan "
                                                b"together: give --segment K/N"),
            (["--segment", "1/2", "--barrier", "127.0.0.1:1"], noenv, b"PACER_BARRIER_TOKEN"),
            (["--segment", "1/2", "--barrier", "127.0.0.1:1", "--start-at", "+5s"], env,
             b"--barrier and --start-at both set the start"),
            (["--segment", "1/2", "--barrier", "a:b:c"], env, b"expected HOST[:PORT]"),
            (["--framed"], env, b"--framed frames the result --out writes"),
            (["--barrier-timeout", "5s"], env, b"--barrier-timeout is for --barrier"),
        ]
        for args, e, needle in cases:
            r = subprocess.run([pacer, "run"] + PLAN + args, capture_output=True, timeout=30,
                               env=e)
            self.assertEqual(r.returncode, 2, (args, r.stderr))
            self.assertIn(needle, r.stderr, args)

    def test_another_secret_refused(self):
        d = tempfile.mkdtemp(prefix="pacer-dist-secret-")
        port = free_port()
        extra = ["--barrier-timeout", "20s"]
        p0 = start_segment(d, 0, 2, port, PLAN, extra)
        p1 = start_segment(d, 1, 2, port, PLAN, extra, env_token="not-the-secret")
        c1 = finish(*p1, timeout=30)
        harness.stop_process(p0[0])
        finish(*p0, timeout=10)
        log = read(os.path.join(d, "seg1.log"))
        self.assertEqual(c1, 2, log)
        self.assertIn("X-Pacer-Auth does not match", log)


# ---------------------------------------------------------------- merge rules


def rules():
    r = subprocess.run([harness.pacer_bin(), "merge", "--rules"], capture_output=True,
                       timeout=30, check=True)
    return json.loads(r.stdout)


ALIASES = [(".steps[].measure.outcomes", "@outcomes"), (".measure.outcomes", "@outcomes"),
           (".warmup.outcomes", "@outcomes"), (".steps[].outcomes", "@outcomes"),
           (".steps[].measure", "@phase"), (".measure", "@phase"), (".warmup", "@phase"),
           (".steps[].series", "@series"), (".series", "@series")]


def normalize(path):
    for a, b in ALIASES:
        if path == a or path.startswith(a + ".") or path.startswith(a + "["):
            return b + path[len(a):]
    return path


def rule_for(table, path):
    """The rule of a path as pacer merge applies it (merge_rules.c):
    (rule, covered_below) or (None, is_container)."""
    q = normalize(path)
    found = None
    for r in table:
        pat = "^" + re.escape(r["path"]).replace(r"\*", r"[^.\[]+")
        m = re.match(pat + r"(?=$|[.\[])", q)
        if m and (m.end() == len(q) or r["sub"]):
            found = r
    if found:
        return found, True
    for r in table:
        pat = "^" + re.escape(r["path"]).replace(r"\*", r"[^.\[]+")
        for cut in range(len(r["path"])):
            if r["path"][cut] in ".[":
                head = "^" + re.escape(r["path"][:cut]).replace(r"\*", r"[^.\[]+") + "$"
                if re.match(head, q):
                    return None, True
    return None, False


def schema_paths():
    import test_report
    s = test_report.schema()
    defs = s["$defs"]
    out = set()

    def resolve(n):
        while "$ref" in n:
            n = defs[n["$ref"].split("/")[-1]]
        return n

    def walk(n, p, depth):
        n = resolve(n)
        if depth > 14:
            return
        for key in ("oneOf", "anyOf", "allOf"):
            for b in n.get(key, []):
                walk(b, p, depth + 1)
        for k, v in n.get("properties", {}).items():
            out.add(p + "." + k)
            walk(v, p + "." + k, depth + 1)
        for _, v in n.get("patternProperties", {}).items():
            out.add(p + ".X")
            walk(v, p + ".X", depth + 1)
        it = n.get("items")
        if isinstance(it, dict):
            walk(it, p + "[]", depth + 1)

    for kind in ("run", "ramp"):
        walk(defs[kind], "", 0)
    return out


def leaves(doc, path=""):
    """(path, value) of every leaf (arrays of scalars are one leaf)."""
    if isinstance(doc, dict):
        for k, v in doc.items():
            yield from leaves(v, path + "." + k)
    elif isinstance(doc, list) and doc and all(isinstance(x, (dict, list)) for x in doc):
        for i, x in enumerate(doc):
            yield from leaves(x, "%s[%d]" % (path, i))
    else:
        yield path, doc


def get(doc, path):
    """The value at an indexed path (".measure.by_name[2].sent"), or KeyError."""
    for part in re.findall(r"\.([^.\[]+)|\[(\d+)\]", path):
        doc = doc[part[0]] if part[0] else doc[int(part[1])]
    return doc


class MergeRulesTest(PacerTestCase):
    """Every field of the schema has a rule; every field of real segment
    results is in the merged result by its rule, with the value the rule
    gives; the merged report has every chart a single run's has."""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.table = rules()
        cls.dir = tempfile.mkdtemp(prefix="pacer-dist-rules-")
        pacer = harness.pacer_bin()
        run = ["run", "--self-contained", "--rate", "200", "--duration", "2s", "--warmup",
               "500ms", "--connections", "4", "--slo", "p99<1s", "--outcome",
               "ok=status == 200", "-q", "--limited-ok", "--start-at", "+1s"]
        ramp = ["ramp", "--self-contained", "--steps", "100,200", "--step-duration", "1s",
                "--step-warmup", "300ms", "--slo", "p99<1s", "--connections", "4", "-q",
                "--limited-ok", "--start-at", "+1s"]
        cls.docs = {}
        for name, argv in (("run", run), ("ramp", ramp)):
            procs, files = [], []
            for k in range(2):
                f = os.path.join(cls.dir, "%s%d.json" % (name, k))
                files.append(f)
                procs.append(subprocess.Popen([pacer] + argv + ["--segment", "%d/2" % k, "-o", f],
                                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE))
            for p in procs:
                _, err = p.communicate(timeout=60)
                assert p.returncode == 0, err
            m = os.path.join(cls.dir, "%s-merged.json" % name)
            subprocess.run([pacer, "merge"] + files + ["-o", m], check=True, timeout=60)
            segs = []
            for f in files:
                with open(f) as fh:
                    segs.append(json.load(fh))
            with open(m) as fh:
                cls.docs[name] = (segs, json.load(fh), m, files)

    def test_every_schema_field_has_a_rule(self):
        missing = []
        for p in sorted(schema_paths()):
            if p.startswith((".segments", ".merged")):
                continue  # written by merge, refused in a segment (a rule says so)
            q = p.replace(".X", ".x")
            r, ok = rule_for(self.table, q)
            if not ok:
                missing.append(p)
        self.assertEqual(missing, [], "schema fields pacer merge has no rule for")

    def check_by_rule(self, segs, merged):
        problems = []
        for path, v in leaves(segs[0]):
            generic = re.sub(r"\[\d+\]", "[]", path)
            r, _ = rule_for(self.table, generic)
            if r is None:
                problems.append("%s: no rule" % path)
                continue
            kind = r["rule"]
            if path.startswith(".plan"):
                continue  # compared with its exceptions; its segment.index null
            if kind == "segment":
                if normalize(generic).startswith((".steps[]", "@phase")):
                    continue  # a step's: under segments[].steps[] (checked below)
                top = path.split(".")[1].split("[")[0]
                if top in merged:
                    problems.append("%s: per segment, yet at the top" % path)
                for i, s in enumerate(merged["segments"]):
                    if top not in s:
                        problems.append("%s: not under segments[%d]" % (path, i))
                continue
            if generic.startswith((".series", ".steps[].series")):
                continue  # by wall-clock second: the totals are checked below
            try:
                mv = get(merged, path)
            except (KeyError, IndexError, TypeError):
                if re.search(r"\.by_name\[", path):
                    continue  # rows by name: positions may differ
                problems.append("%s: dropped (rule %s)" % (path, kind))
                continue
            if v is not None and mv is None:
                problems.append("%s: null in the merged result (rule %s)" % (path, kind))
                continue
            vals = []
            for s in segs:
                try:
                    vals.append(get(s, path))
                except (KeyError, IndexError, TypeError):
                    pass
            nums = [x for x in vals if isinstance(x, (int, float)) and not isinstance(x, bool)]
            if kind == "sum" and len(nums) == len(vals) and all(isinstance(x, int) for x in nums):
                if mv != sum(nums) and not re.search(r"\.(by_name|hosts|outcomes)\[", path):
                    problems.append("%s: %r, not the sum %r" % (path, mv, sum(nums)))
            elif kind == "max" and nums and abs(mv - max(nums)) > 1e-6 * max(1, abs(max(nums))):
                problems.append("%s: %r, not the largest %r" % (path, mv, max(nums)))
            elif kind == "any" and mv != any(vals):
                problems.append("%s: %r, not any of %r" % (path, mv, vals))
            elif kind == "all" and mv != all(vals):
                problems.append("%s: %r, not all of %r" % (path, mv, vals))
            elif kind in ("same", "first", "key") and mv != v:
                problems.append("%s: %r, not segment 0's %r" % (path, mv, v))
            elif kind == "each":
                top = path.split(".")[1]
                for i, s in enumerate(merged["segments"]):
                    if s.get(top) != segs[i].get(top):
                        problems.append("%s: segments[%d] is not its own" % (path, i))
        return problems

    def test_run_merged_by_rule(self):
        segs, merged, _, _ = self.docs["run"]
        self.assertEqual(self.check_by_rule(segs, merged), [])
        # the series keep every counter, at the same totals
        for key in ("completed", "errors", "transport_errors", "dropped"):
            self.assertEqual(sum(p[key] for p in merged["series"]),
                             sum(p[key] for s in segs for p in s["series"]), key)
        for cls_ in ("2xx", "5xx"):
            self.assertEqual(sum(p["by_class"][cls_] for p in merged["series"]),
                             sum(p["by_class"][cls_] for s in segs for p in s["series"]))
        self.assertEqual(merged["slo"]["expr"], "p99<1s")
        self.assertIn("pass", merged["slo"])

    def test_ramp_merged_by_rule(self):
        segs, merged, _, _ = self.docs["ramp"]
        self.assertEqual(self.check_by_rule(segs, merged), [])
        for i, st in enumerate(merged["steps"]):
            self.assertEqual(sum(p["completed"] for p in st["series"]),
                             sum(p["completed"] for s in segs for p in s["steps"][i]["series"]))
            self.assertTrue(all(isinstance(p["by_class"], dict) for p in st["series"]))
        for i, s in enumerate(merged["segments"]):
            self.assertEqual(len(s["steps"]), len(merged["steps"]))
            self.assertEqual(s["steps"][0].get("cost"), segs[i]["steps"][0].get("cost"))

    def test_merged_report_has_every_chart(self):
        def charts(path):
            out = os.path.join(self.dir, os.path.basename(path) + ".html")
            subprocess.run([harness.pacer_bin(), "report", path, "--format", "html", "-o", out],
                           check=True, timeout=60, capture_output=True)
            h = read(out)
            return {i: body.count("<polyline") for i, body in
                    re.findall(r'<figure class="chart" id="([^"]+)">(.*?)</figure>', h, re.S)}

        for name in ("run", "ramp"):
            _, _, merged, files = self.docs[name]
            single, m = charts(files[0]), charts(merged)
            self.assertEqual(sorted(m), sorted(single), name)
            for cid, lines in single.items():
                if lines:
                    self.assertGreater(m[cid], 0, "%s: %s drawn empty" % (name, cid))


if __name__ == "__main__":
    unittest.main()
