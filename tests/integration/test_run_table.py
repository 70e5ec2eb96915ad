"""pacer run with request tables against nginx: the server sees the table's
mix; the result names the table by its SHA-256."""

import collections
import json
import os
import subprocess
import tempfile
import unittest

import harness


def write_targets(port, d):
    body = os.path.join(d, "body.json")
    with open(body, "w") as f:
        f.write('{"a": 1}')
    path = os.path.join(d, "t.targets")
    with open(path, "w") as f:
        f.write(f"# three requests\nGET http://127.0.0.1:{port}/hello\n\n"
                f"GET http://127.0.0.1:{port}/notfound?q=1\nX-Test: yes\n\n"
                f"POST http://127.0.0.1:{port}/file\nContent-Type: application/json\n@body.json\n")
    return path


class TableRunTest(harness.PacerTestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.ngx = harness.Nginx().start()
        cls.dir = tempfile.mkdtemp(prefix="pacer-table-")
        cls.table = write_targets(cls.ngx.port, cls.dir)

    @classmethod
    def tearDownClass(cls):
        cls.ngx.stop()

    def by_path(self, mark):
        c = collections.Counter()
        for (path, status), n in self.ngx.counts_by(mark).items():
            c[path] += n
        return c

    def test_sequential_mix_is_exact_and_hash_recorded(self):
        mark = self.ngx.log_mark()
        run = harness.run_pacer(["--requests-file", self.table, "-n", "300", "--concurrency", "3"])
        self.assertEqual(run.code, 0, run.stderr)
        m = run.json["measure"]
        self.assertEqual(m["requests"]["completed"], 300)
        seen = self.by_path(mark)
        # in order, wrapping around: exactly a third each
        self.assertEqual(seen["/hello"], 100)
        self.assertEqual(seen["/notfound"], 100)
        # nginx answers POST to a static file with 405
        self.assertEqual(seen["/file"], 100)
        self.assertEqual(m["responses"]["by_status"].get("404"), 100)
        t = run.json["plan"]["table"]
        self.assertEqual(t["requests"], 3)
        self.assertEqual(t["format"], "targets")
        self.assertEqual(t["order"], "sequential")
        h = subprocess.run([harness.pacer_bin(), "table", "hash", self.table], capture_output=True,
                           text=True, check=True).stdout.split()[0]
        self.assertEqual(t["sha256"], h)

    def test_random_order_is_seeded_and_mixed(self):
        counts = []
        for _ in range(2):
            mark = self.ngx.log_mark()
            run = harness.run_pacer(["--requests-file", self.table, "--order", "random",
                                     "--seed", "9", "-n", "3000", "--concurrency", "1"])
            self.assertEqual(run.code, 0, run.stderr)
            counts.append(self.by_path(mark))
        # one connection, one thread, same seed: the same sequence twice
        self.assertEqual(counts[0], counts[1])
        # each path ~1/3 of 3000: within 4.5 binomial standard deviations
        sd = (3000 * (1 / 3) * (2 / 3)) ** 0.5
        for p in ("/hello", "/notfound", "/file"):
            self.assertLess(abs(counts[0][p] - 1000), 4.5 * sd, counts[0])

    def test_bodies_folder(self):
        d = tempfile.mkdtemp(prefix="pacer-bodies-")
        for i in range(4):
            with open(os.path.join(d, f"{i}.json"), "w") as f:
                f.write("x" * (i + 1))
        run = harness.run_pacer([self.ngx.url("/hello"), "--bodies", d, "-X", "PUT", "-n", "8"])
        self.assertEqual(run.code, 0, run.stderr)
        self.assertEqual(run.json["plan"]["table"]["requests"], 4)
        self.assertEqual(run.json["plan"]["table"]["format"], "bodies")
        self.assertEqual(run.json["measure"]["requests"]["completed"], 8)

    def test_bad_tables(self):
        bad = os.path.join(self.dir, "bad.targets")
        with open(bad, "w") as f:
            f.write(f"GET http://127.0.0.1:{self.ngx.port}/hello\nBad Header Line\n")
        two = os.path.join(self.dir, "two.targets")
        with open(two, "w") as f:
            f.write(f"GET http://127.0.0.1:{self.ngx.port}/a\n\nGET http://127.0.0.2:{self.ngx.port}/b\n")
        cases = [
            (["--requests-file", bad, "-n", "1"], bad + ":2:"),
            (["--requests-file", "/nonexistent.targets", "-n", "1"], "/nonexistent.targets"),
            (["--requests-file", two, "-n", "1"], "hosts"),
            (["--requests-file", self.table, "--order", "shuffled", "-n", "1"], "--order"),
            (["--requests-file", self.table, self.ngx.url("/hello"), "-n", "1"], "table names the URLs"),
            ([self.ngx.url("/hello"), "--bodies", "/nonexistent-dir", "-n", "1"], "/nonexistent-dir"),
        ]
        for args, want in cases:
            run = harness.run_pacer(args, out=False, timeout=20)
            self.assertEqual(run.code, 2, (args, run.stderr))
            lines = run.stderr.splitlines()
            self.assertEqual(len(lines), 1, run.stderr)
            self.assertIn(want, lines[0])


if __name__ == "__main__":
    unittest.main()
