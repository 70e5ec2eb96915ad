"""pacer bench SCENARIO.yaml: scenario files become subcommand runs."""

import collections
import json
import os
import subprocess
import tempfile
import unittest

import harness

REPO = harness.REPO

# A valid value for every key each kind accepts (the keys are listed in
# src/plan/scenario.c; the subcommand parses them).
VALUES = {
    "after_fail": "1", "arrival": "poisson", "body": "x", "connections": "8",
    "concurrency": "4", "drain": "1s", "duration": "1s", "factor": "2", "from": "100",
    "hgrm": "/tmp/x.hgrm", "method": "GET", "noise": "2%", "out": "/tmp/x.json",
    "precision": "5%", "quiet": "true", "rate": "100", "refine": "true", "repeat": "2",
    "require": "100", "requests": "10", "seed": "3", "slo": "p99<1s", "spin": "50us",
    "step_duration": "1s", "step_warmup": "0s", "steps": "[100, 200]", "target_cores": "2",
    "target_threads": "1", "threads": "1", "timeout": "2s", "to": "400", "warmup": "0s",
    "order": "random", "max_body": "64k", "requests_format": "jsonl",
}
KEYS = {
    "run": ["arrival", "order", "max_body", "requests_format", "body", "connections", "concurrency", "drain", "duration", "hgrm",
            "method", "out", "quiet", "rate", "repeat", "requests", "seed", "spin",
            "target_threads", "threads", "timeout", "warmup"],
    "ramp": ["after_fail", "arrival", "order", "max_body", "requests_format", "body", "connections", "drain", "factor", "from", "method",
             "out", "precision", "quiet", "refine", "repeat", "require", "seed", "slo", "spin",
             "step_duration", "step_warmup", "steps", "target_cores", "target_threads",
             "threads", "timeout", "to"],
    "compare": ["arrival", "body", "concurrency", "connections", "duration", "method", "noise",
                "out", "quiet", "repeat", "seed", "spin", "target_threads", "threads",
                "timeout", "warmup", "precision", "refine", "slo", "step_duration",
                "step_warmup", "steps"],
}


def write(text, suffix=".yaml"):
    fd, path = tempfile.mkstemp(suffix=suffix, prefix="pacer-scenario-")
    with os.fdopen(fd, "w") as f:
        f.write(text)
    return path


def bench(path, *extra, timeout=60):
    p = subprocess.run([harness.pacer_bin(), "bench", path, *extra], capture_output=True,
                       text=True, timeout=timeout)
    return p.returncode, p.stdout, p.stderr


class ScenarioTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        harness.require_pacer()

    def test_every_key_is_an_option_of_its_kind(self):
        """Each key the scenario parser accepts is an option the subcommand
        parses (with --help appended, parsing ends in the usage text)."""
        for kind, keys in KEYS.items():
            lines = [f"kind: {kind}"]
            if kind == "compare":
                lines.append("variants: {A: '@hello', B: '@hello'}")
            else:
                lines.append("target: self-contained:hello")
            # --from/--to and --steps exclude each other: test them apart
            groups = [[k for k in keys if k not in ("from", "to", "factor")]]
            if kind == "ramp":
                groups.append(["from", "to", "factor"])
            for g in groups:
                text = "\n".join(lines + [f"{k}: {VALUES[k]}" for k in g]) + "\n"
                path = write(text)
                try:
                    code, out, err = bench(path, "--help")
                finally:
                    os.unlink(path)
                self.assertEqual(code, 0, f"{kind} {g}: {err}")
                self.assertIn("usage: pacer " + kind, out)

    def test_ramp_scenario_runs_and_flags_override(self):
        d = tempfile.mkdtemp(prefix="pacer-scenario-")
        out = os.path.join(d, "r.json")
        path = write("name: tiny\nkind: ramp\ntarget: self-contained:hello\n"
                     "steps: [200, 400]\nstep_duration: 0.5s\nstep_warmup: 0s\n"
                     "slo: p99<500ms\nout: /nonexistent-dir/never.json\n"
                     "header: {X-Scenario: yes}\n")
        try:
            code, outp, err = bench(path, "-q", "--out", out, "--steps", "300,600")
        finally:
            os.unlink(path)
        self.assertEqual(code, 0, err)
        with open(out) as f:
            r = json.load(f)
        self.assertEqual(r["kind"], "ramp")
        self.assertEqual(r["plan"]["steps_per_s"], [300, 600])  # the flag won
        self.assertIn("X-Scenario: yes", r["plan"]["headers"])
        self.assertEqual(r["mode"], "self_contained")

    def test_compare_takes_table_probes_and_rules(self):
        """A scenario of kind compare with a request table, a success rule,
        an outcome, and variants as maps of their own settings (an address
        and a probe each): every one reaches the comparison."""
        with harness.PacerServe("hello") as a, harness.PacerServe("hello") as b:
            table = write('{"method":"GET","url":"http://127.0.0.1:9/","name":"root"}\n'
                          '{"method":"GET","url":"http://127.0.0.1:9/x","name":"x"}\n',
                          suffix=".jsonl")
            out = write("", suffix=".json")
            path = write(
                "kind: compare\n"
                "requests_file: %s\n"
                "success: status == 200\n"
                "outcomes: {okay: status == 200}\n"
                "variants:\n"
                "  A: {connect_to: '127.0.0.1:%d', target_pid: %d}\n"
                "  B: {connect_to: '127.0.0.1:%d', target_pid: %d, header: ['X-Variant: b']}\n"
                "concurrency: 2\nduration: 0.3s\nwarmup: 0.1s\nrepeat: 2\nout: %s\n"
                % (table, a.port, a.proc.pid, b.port, b.proc.pid, out))
            try:
                code, stdout, err = bench(path, "--limited-ok")
                with open(out) as f:
                    r = json.load(f)
            finally:
                for p in (path, table, out):
                    os.unlink(p)
        self.assertEqual(code, 0, err)
        self.assertEqual(r["kind"], "compare")
        self.assertEqual(r["plan"]["rules"]["success"], "status == 200")
        va, vb = r["variants"]
        self.assertEqual(va["workload"]["requests"], 2)
        self.assertNotEqual(va["workload"]["sha256"], vb["workload"]["sha256"])  # B's header
        for v in (va, vb):
            self.assertEqual(len(v["repetitions"]), 2)
            for rep in v["repetitions"]:
                self.assertGreater(rep["completed"], 0)
                self.assertEqual(rep["outcome_okay_pct"], 100.0)
                self.assertGreater(rep["target_cpu_ms_per_request"], 0)
        self.assertIn("header=X-Variant: b", vb["target"])
        self.assertIn("connect-to=127.0.0.1:%d" % b.port, vb["target"])

    def test_examples_parse(self):
        """The shipped examples are valid scenarios of their kind."""
        ex = os.path.join(REPO, "examples", "scenarios")
        names = sorted(os.listdir(ex))
        self.assertGreaterEqual(len(names), 3)
        for n in names:
            code, out, err = bench(os.path.join(ex, n), "--help")
            self.assertEqual(code, 0, f"{n}: {err}")
            self.assertIn("usage: pacer ", out)

    def test_errors_name_file_and_line(self):
        cases = [
            ("kind: ramp\ntarget: self-contained\nstepz: [1]\n", ":3: unknown key 'stepz'"),
            ("kind: walk\n", ":1: kind: expected run, ramp or compare"),
            ("target: http://x/\n", "kind: expected run, ramp or compare"),
            ("kind: run\nrate: 1k\n", "target: missing"),
            ("kind: run\ntarget: [\n", ":3:"),
            ("kind: compare\ntarget: http://x/\n", ":2: target: a compare takes variants"),
            ("kind: run\ntarget: self-contained\nquiet: maybe\n", ":3: quiet: expected true or false"),
            ("kind: run\ntarget: http://127.0.0.1:1/\npath: /x\n", ":3: path: only with"),
            ("kind: ramp\nvariants: {A: x}\n", ":2: variants: only for kind: compare"),
        ]
        for text, want in cases:
            path = write(text)
            try:
                code, out, err = bench(path)
            finally:
                os.unlink(path)
            self.assertEqual(code, 2, f"{text!r}: {err}")
            lines = err.splitlines()
            self.assertEqual(len(lines), 1, err)
            self.assertTrue(lines[0].startswith("pacer bench: " + path), err)
            self.assertIn(want, lines[0])
        code, out, err = bench("/nonexistent/scenario.yaml")
        self.assertEqual(code, 2)
        self.assertIn("cannot read", err)


# A mix spec as its own file would hold it; the scenario tests put the same
# lines, indented, under `table: mix:` (BASE is replaced by nginx's URL).
MIX_SPEC = """base_url: BASE
methods: {GET: 6, POST: 3, DELETE: 1}
locality: {requests: 70%, routes: 20%}
query: {share: 0.3, template: "page=${id}&sort=${word}"}
headers: ["Accept: application/json"]
body:
  template: '{"id":${id},"name":"${word}","seq":${n}}'
shapes:
  - {name: static, weight: 2, routes: 20, templates: ["/static/r${route}/app.js"]}
  - {name: rest_id, weight: 3, routes: 50, templates: ["/api/r${route}/users/${id}"]}
  - name: glob
    weight: 1
    routes: 5
    templates: ["/files/r${route}/${path}"]
"""


def inline(head, spec, size, seed, extra_table=""):
    """A scenario with `head` lines and the spec under table: mix:."""
    body = "".join("    " + l + "\n" for l in spec.splitlines())
    return f"{head}table:\n  size: {size}\n  seed: {seed}\n{extra_table}  mix:\n{body}"


class InlineTableTest(harness.PacerTestCase):
    """table: {mix: SPEC, size: N, seed: S} in a scenario: built in memory
    before the run, the same table (hash) as pacer table generate; the
    server sees its mix; --requests-file after the file overrides it."""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.ngx = harness.Nginx().start()
        cls.dir = tempfile.mkdtemp(prefix="pacer-scenario-table-")
        cls.spec = MIX_SPEC.replace("BASE", cls.ngx.url("/bench"))

    @classmethod
    def tearDownClass(cls):
        cls.ngx.stop()
        if not os.environ.get("PACER_KEEP_TMP"):
            import shutil
            shutil.rmtree(cls.dir, ignore_errors=True)

    def file(self, name, text):
        p = os.path.join(self.dir, name)
        with open(p, "w") as f:
            f.write(text)
        return p

    def generated(self, size, seed):
        """(table JSON Lines, hash) from pacer table generate on the spec."""
        spec = self.file("mix.yaml", self.spec)
        g = subprocess.run([harness.pacer_bin(), "table", "generate", "--spec", spec, "--size",
                            str(size), "--seed", str(seed)], capture_output=True, check=True,
                           timeout=60)
        table = self.file("gen-%d-%d.jsonl" % (size, seed), g.stdout.decode())
        h = subprocess.run([harness.pacer_bin(), "table", "hash", table], capture_output=True,
                           text=True, check=True, timeout=60).stdout.split()
        self.assertEqual(h[1], str(size))
        return table, h[0]

    def test_run_sends_the_generated_table(self):
        size, seed, n = 300, 5, 450
        path = self.file("run.yaml", inline(
            f"name: inline\nkind: run\nrequests: {n}\nconcurrency: 3\nquiet: true\n",
            self.spec, size, seed))
        out = os.path.join(self.dir, "run.json")
        mark = self.ngx.log_mark()
        code, _, err = bench(path, "--out", out, timeout=120)
        self.assertEqual(code, 0, err)
        with open(out) as f:
            r = json.load(f)
        table, h = self.generated(size, seed)
        t = r["plan"]["table"]
        self.assertEqual(t["sha256"], h)
        self.assertEqual(t["requests"], size)
        self.assertEqual(t["format"], "mix")
        self.assertEqual(t["source"], path)
        self.assertEqual(r["measure"]["requests"]["completed"], n)
        # in order, wrapping around: request i is sent n // size + (i < n % size) times
        want = collections.Counter()
        with open(table) as f:
            reqs = [json.loads(l) for l in f]
        for i, q in enumerate(reqs):
            want[q["url"].split(str(self.ngx.port), 1)[1]] += n // size + (i < n % size)
        self.ngx.count(mark)
        got = collections.Counter(l.uri for l in self.ngx.log_lines(mark))
        self.assertEqual(got, want)
        # a different seed is a different table
        self.assertNotEqual(self.generated(size, seed + 1)[1], h)

    def test_ramp_and_override(self):
        path = self.file("ramp.yaml", inline(
            "kind: ramp\nsteps: [200]\nstep_duration: 0.5s\nstep_warmup: 0s\nslo: p99<1s\n"
            "quiet: true\n", self.spec, 64, 1))
        out = os.path.join(self.dir, "ramp.json")
        code, _, err = bench(path, "--out", out, timeout=120)
        self.assertEqual(code, 0, err)
        with open(out) as f:
            r = json.load(f)
        self.assertEqual(r["plan"]["table"]["sha256"], self.generated(64, 1)[1])
        # --requests-file after the file replaces the scenario's table
        other = self.file("one.targets", "GET %s\n" % self.ngx.url("/hello"))
        run = self.file("over.yaml", inline("kind: run\nrequests: 5\nquiet: true\n", self.spec, 64, 1))
        out = os.path.join(self.dir, "over.json")
        code, _, err = bench(run, "--requests-file", other, "--out", out, timeout=60)
        self.assertEqual(code, 0, err)
        with open(out) as f:
            t = json.load(f)["plan"]["table"]
        self.assertEqual((t["format"], t["requests"], t["source"]), ("targets", 1, other))
        # requests_file: in a scenario stands instead of target:
        plain = self.file("file.yaml", f"kind: run\nrequests_file: {other}\nrequests: 3\nquiet: true\n")
        out = os.path.join(self.dir, "file.json")
        code, _, err = bench(plain, "--out", out, timeout=60)
        self.assertEqual(code, 0, err)
        with open(out) as f:
            r = json.load(f)
        self.assertEqual(r["plan"]["table"]["source"], other)
        self.assertEqual(r["measure"]["requests"]["completed"], 3)
        # a URL after the file does not combine with the scenario's table
        code, _, err = bench(run, self.ngx.url("/hello"), timeout=60)
        self.assertEqual(code, 2)
        self.assertIn("with a scenario's table the table names the URLs", err)

    def test_errors_name_file_and_line(self):
        cases = [
            (inline("kind: run\n", self.spec.replace("GET: 6", "GET: -6"), 10, 1),
             ":7: table: mix: methods: -6 is out of range"),
            (inline("kind: run\n", self.spec.replace("shapes:", "shapez:"), 10, 1),
             ":13: table: mix: unknown key 'shapez'"),
            (inline("kind: run\n", self.spec, 0, 1), ":3: table: size: expected a whole number"),
            (inline("kind: run\n", self.spec, 10, "x"), ":4: table: seed: expected a whole number"),
            (inline("kind: run\n", self.spec, 10, 1, "  shuffle: yes\n"),
             ":5: table: unknown key 'shuffle' (expected mix, size, seed)"),
            (inline("kind: run\ntarget: http://127.0.0.1:1/\n", self.spec, 10, 1),
             ":2: target: not with table:"),
            (inline("kind: compare\nvariants: {A: '@hello'}\n", self.spec, 10, 1),
             ":3: table: only for kind run or ramp"),
            ("kind: run\nrequests: {mix: {}, size: 3}\n", ":2: requests: expected a count"),
        ]
        for text, want in cases:
            path = write(text)
            try:
                code, out, err = bench(path)
            finally:
                os.unlink(path)
            self.assertEqual(code, 2, f"{text!r}: {err}")
            lines = err.splitlines()
            self.assertEqual(len(lines), 1, err)
            self.assertTrue(lines[0].startswith("pacer bench: " + path), err)
            self.assertIn(want, lines[0])


if __name__ == "__main__":
    unittest.main()
