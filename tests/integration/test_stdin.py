"""Every input that reads a file takes "-" for standard input (issue 30
item 3: `pacer report -` said "-: cannot read: No such file or directory",
though `-o -` wrote to stdout), named "stdin" in messages; and standard input
is one input: a second "-" is refused, naming the first."""

import json
import os
import shutil
import subprocess
import tempfile
import unittest

import harness

EXAMPLES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples")


def pacer(args, stdin=b"", timeout=60, cwd=None):
    return subprocess.run([harness.pacer_bin()] + [str(a) for a in args], input=stdin,
                          capture_output=True, timeout=timeout, cwd=cwd)


class StdinTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        harness.require_pacer()
        cls.dir = tempfile.mkdtemp(prefix="pacer-stdin-")
        cls.result = os.path.join(cls.dir, "r.json")
        r = pacer(["run", "--self-contained", "-n", "40", "-c", "2", "-q", "--limited-ok",
                   "-o", cls.result])
        assert r.returncode == 0, r.stderr
        with open(cls.result, "rb") as f:
            cls.json = f.read()

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.dir, True)

    def ok(self, args, stdin=b"", cwd=None):
        r = pacer(args, stdin, cwd=cwd)
        self.assertEqual(r.returncode, 0, "%s: %s" % (args, r.stderr.decode()))
        return r

    def test_report_reads_stdin(self):
        a = self.ok(["report", "-", "--format", "md"], self.json).stdout
        b = self.ok(["report", self.result, "--format", "md"]).stdout
        self.assertGreater(len(a), 200)
        self.assertEqual(a, b, "the same bytes from stdin and from the file render alike")
        r = pacer(["report", "-"], b"{")
        self.assertEqual(r.returncode, 2)
        self.assertTrue(r.stderr.decode().startswith("pacer report: stdin: not JSON"), r.stderr)

    def test_diff_takes_one_side_from_stdin(self):
        r = self.ok(["diff", "-", self.result, "--json"], self.json)
        self.assertTrue(json.loads(r.stdout)["comparable"])
        r = pacer(["diff", "-", "-"], self.json)
        self.assertEqual(r.returncode, 2)
        self.assertEqual(r.stderr.decode().strip(),
                         "pacer diff: NEW -: standard input is already OLD -'s "
                         "(only one input can be -)")

    def test_history_add_from_stdin(self):
        db = os.path.join(self.dir, "h.db")
        self.ok(["history", db, "add", "-"], self.json)
        r = self.ok(["history", db, "show", "last"])
        self.assertEqual(r.stdout, self.json)

    def test_table_and_import_from_stdin(self):
        with open(os.path.join(EXAMPLES, "tables", "api.targets"), "rb") as f:
            targets = f.read()
        # @body files of a table on stdin are relative to the working folder
        tables = os.path.join(EXAMPLES, "tables")
        a = self.ok(["table", "hash", "-"], targets, cwd=tables).stdout.split()[0]
        b = self.ok(["table", "hash", os.path.join(tables, "api.targets")]).stdout.split()[0]
        self.assertEqual(a, b)
        show = self.ok(["table", "show", "-"], targets, cwd=tables).stdout.decode()
        self.assertIn("stdin", show)
        har = json.dumps({"log": {"entries": [{"request": {
            "method": "GET", "url": "http://127.0.0.1:8080/x", "headers": [],
            "httpVersion": "HTTP/1.1"}}]}}).encode()
        out = self.ok(["import", "har", "-"], har).stdout.decode()
        self.assertIn('"url":"http://127.0.0.1:8080/x"', out.replace(" ", ""))

    def test_bench_scenario_from_stdin(self):
        scen = b"kind: run\ntarget: self-contained\nrequests: 20\nconcurrency: 2\n"
        r = pacer(["bench", "-", "-q", "--limited-ok", "-o", os.path.join(self.dir, "b.json")],
                  scen)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(os.path.join(self.dir, "b.json")) as f:
            self.assertEqual(json.load(f)["measure"]["requests"]["completed"], 20)

    def test_body_from_stdin_and_one_stdin(self):
        out = os.path.join(self.dir, "body.json")
        r = pacer(["run", "--self-contained", "-n", "5", "-c", "1", "-q", "--limited-ok",
                   "-X", "POST", "--body", "@-", "-o", out], b"x" * 123)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(out) as f:
            self.assertEqual(json.load(f)["plan"]["body_bytes"], 123)
        r = pacer(["run", "--self-contained", "-n", "5", "--requests-file", "-", "--body", "@-"])
        self.assertEqual(r.returncode, 2)
        self.assertIn("--body @-: standard input is already --requests-file -'s", r.stderr.decode())

    def test_merge_one_stdin(self):
        r = pacer(["merge", "-", "-", "-o", os.path.join(self.dir, "m.json")], self.json)
        self.assertEqual(r.returncode, 2)
        self.assertIn("standard input is already SEGMENT -'s", r.stderr.decode())


if __name__ == "__main__":
    unittest.main()
