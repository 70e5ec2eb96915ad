"""pacer bench SCENARIO.yaml: scenario files become subcommand runs."""

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


def write(text):
    fd, path = tempfile.mkstemp(suffix=".yaml", prefix="pacer-scenario-")
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


if __name__ == "__main__":
    unittest.main()
