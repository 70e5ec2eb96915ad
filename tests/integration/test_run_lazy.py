"""--lazy: a request table read a piece at a time into a file-backed spool.
It sends what the same table read whole sends (nginx's access log, the
hash, the names), takes a table over the 1,000,000-request limit (its
hash checked against one computed here from the wire format) without its
memory growing with the table, reads standard input, and refuses what it
cannot do with one line."""

import hashlib
import json
import os
import subprocess
import tempfile
import unittest

import harness


def rss_anon_kib(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("RssAnon:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


class LazyTableTest(harness.PacerTestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.ngx = harness.Nginx().start()
        cls.dir = tempfile.mkdtemp(prefix="pacer-lazy-")
        cls.version = subprocess.run([harness.pacer_bin(), "-V"], capture_output=True, text=True,
                                     check=True).stdout.split()[1]

    @classmethod
    def tearDownClass(cls):
        cls.ngx.stop()

    def path(self, name):
        return os.path.join(self.dir, name)

    def write_targets(self, name, n, extra=""):
        """n requests, some with a header, grouped in blocks with comments."""
        p = self.path(name)
        with open(p, "w") as f:
            for i in range(n):
                if i % 1000 == 0:
                    f.write(f"# block {i // 1000}\n")
                f.write(f"GET http://127.0.0.1:{self.ngx.port}/p/{i}?k={i * 7}\n")
                if i % 3 == 0:
                    f.write("X-Third: yes\n")
                f.write("\n")
            f.write(extra)
        return p

    def wire(self, i):
        """The wire bytes pacer sends for request i of write_jsonl's table."""
        return (f"GET /p/{i} HTTP/1.1\r\nHost: 127.0.0.1:{self.ngx.port}\r\n"
                f"User-Agent: pacer/{self.version}\r\n\r\n").encode()

    def write_jsonl(self, name, n):
        """n requests and, computed independently, the table's SHA-256."""
        h = hashlib.sha256()
        p = self.path(name)
        with open(p, "w") as f:
            for i in range(n):
                f.write(f'{{"method":"GET","url":"http://127.0.0.1:{self.ngx.port}/p/{i}"}}\n')
                w = self.wire(i)
                h.update(len(w).to_bytes(8, "big"))
                h.update(w)
        return p, h.hexdigest()

    def test_sends_what_the_whole_table_sends(self):
        table = self.write_targets("same.targets", 5000)
        seen, results = [], []
        for lazy in ([], ["--lazy"]):
            mark = self.ngx.log_mark()
            run = harness.run_pacer(["--requests-file", table, "-n", "6000", "--concurrency", "3"]
                                    + lazy)
            self.assertEqual(run.code, 0, run.stderr)
            self.assertEqual(run.json["measure"]["requests"]["completed"], 6000)
            seen.append(self.ngx.counts_by_path(mark))
            results.append(run.json)
        # in turn, wrapping: the first 1,000 twice, the rest once, both ways
        self.assertEqual(seen[0], seen[1])
        self.assertEqual(seen[1]["/p/0"], 2)
        self.assertEqual(seen[1]["/p/4999"], 1)
        self.assertEqual(sum(seen[1].values()), 6000)
        a, b = (dict(r["plan"]["table"]) for r in results)
        self.assertIs(a.pop("lazy"), False)
        self.assertIs(b.pop("lazy"), True)
        self.assertEqual(a, b)
        self.assertEqual(b["requests"], 5000)
        h = subprocess.run([harness.pacer_bin(), "table", "hash", table], capture_output=True,
                           text=True, check=True).stdout.split()[0]
        self.assertEqual(b["sha256"], h)
        # the same names, pooled the same way
        names = [[(e["name"], e.get("pooled_names")) for e in r["measure"]["by_name"]]
                 for r in results]
        self.assertEqual(names[0], names[1])
        self.assertEqual(names[1][-1], ("other", 5000 - 64))

    def test_the_hash_computed_here_matches(self):
        # the wire format this test assumes is pacer's: checked on a small table first
        small, want = self.write_jsonl("small.jsonl", 10)
        out = subprocess.run([harness.pacer_bin(), "table", "hash", small], capture_output=True,
                             text=True, check=True).stdout.split()[0]
        self.assertEqual(out, want)

    def test_over_the_limit_with_bounded_memory(self):
        n = 1_050_000
        big, want = self.write_jsonl("big.jsonl", n)
        run = harness.run_pacer(["--requests-file", big, "-n", "1"], out=False)
        self.assertEqual(run.code, 2, run.stderr)
        self.assertIn(big + ":1000001: more than 1000000 requests", run.stderr)
        self.assertIn("--lazy", run.stderr)
        # pacer table hash --lazy prints the same hash, streaming too
        out = subprocess.run([harness.pacer_bin(), "table", "hash", "--lazy", big],
                             capture_output=True, text=True, check=True, timeout=60).stdout
        self.assertEqual(out.split(), [want, str(n), "requests"])
        samples = []
        mark = self.ngx.log_mark()
        run = harness.run_pacer(["--requests-file", big, "--lazy", "--order", "random", "--seed",
                                 "3", "-n", "3000", "--concurrency", "4"], timeout=120,
                                actions=[(0.25 * k, lambda pid: samples.append(rss_anon_kib(pid)))
                                         for k in range(1, 200)])
        self.assertEqual(run.code, 0, run.stderr)
        t = run.json["plan"]["table"]
        self.assertEqual(t["requests"], n)
        self.assertEqual(t["sha256"], want)
        self.assertEqual(t["hosts"][0]["requests"], n)
        seen = self.ngx.counts_by_path(mark)
        self.assertEqual(sum(seen.values()), 3000)
        # random over the whole table: about 5 % of the picks lie past the
        # first 1,000,000 (150 expected; fewer than 90 is 5 standard deviations off)
        past = sum(v for p, v in seen.items() if int(p.rsplit("/", 1)[1]) >= 1_000_000)
        self.assertGreater(past, 90, past)
        # read whole, the table would take over 200 MB; the spool keeps
        # pacer's own (anonymous) memory far below that, while it reads
        # the table and while it sends
        self.assertTrue(samples, "no memory sample taken")
        if not harness.is_sanitized_binary(harness.pacer_bin()):  # ASan keeps what is freed
            self.assertLess(max(samples), 64 * 1024, samples)

    def test_ramp_and_compare(self):
        """ramp and compare take --lazy as run does: the same table hash in
        every step and in both variants (each reads its own spool)."""
        table = self.write_targets("rc.targets", 3000)
        want = subprocess.run([harness.pacer_bin(), "table", "hash", table], capture_output=True,
                              text=True, check=True).stdout.split()[0]
        mark = self.ngx.log_mark()
        run = harness.run_pacer(["--requests-file", table, "--lazy", "--steps", "200,400",
                                 "--step-duration", "0.5s", "--step-warmup", "0.1s"],
                                subcommand="ramp", timeout=60)
        self.assertEqual(run.code, 0, harness.describe(run))
        self.assertEqual(run.json["plan"]["table"]["sha256"], want)
        self.assertGreater(sum(self.ngx.counts_by_path(mark).values()), 100)
        run = harness.run_pacer(["--requests-file", table, "--lazy", "--variant", "A=",
                                 "--variant", "B=", "--rate", "200", "--duration", "0.5s",
                                 "--warmup", "0.1s", "--repeat", "1"],
                                subcommand="compare", timeout=60)
        self.assertEqual(run.code, 0, harness.describe(run))
        shas = {v["workload"]["sha256"] for v in run.json["variants"]}
        self.assertEqual(shas, {want})

    def test_scenario_key(self):
        table = self.path("sc.targets")
        with open(table, "w") as f:
            f.write(f"GET {self.ngx.url('/hello')}\n\n" * 50)
        sc = self.path("lazy.yaml")
        with open(sc, "w") as f:
            f.write(f"name: lazy\nkind: run\nrequests_file: {table}\nlazy: true\n"
                    "rate: 100\nduration: 0.5s\nwarmup: 0s\n")
        run = harness.run_pacer([sc, "--limited-ok"], subcommand="bench", timeout=30)
        self.assertEqual(run.code, 0, harness.describe(run))
        self.assertEqual(run.json["plan"]["table"]["requests"], 50)

    def test_standard_input(self):
        table = self.write_targets("stdin.targets", 2500)
        want = subprocess.run([harness.pacer_bin(), "table", "hash", table], capture_output=True,
                              text=True, check=True).stdout.split()[0]
        d = tempfile.mkdtemp(prefix="pacer-lazy-stdin-")
        out = os.path.join(d, "r.json")
        with open(table, "rb") as f:
            p = subprocess.run([harness.pacer_bin(), "run", "--requests-file", "-", "--lazy",
                                "-n", "100", "--concurrency", "2", "-q", "-o", out,
                                "--limited-ok"], stdin=f, capture_output=True, timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)
        with open(out) as f:
            r = json.load(f)
        self.assertEqual(r["plan"]["table"]["sha256"], want)
        self.assertEqual(r["plan"]["table"]["source"], "stdin")

    def test_refusals_name_the_cause(self):
        bad = self.write_targets("bad.targets", 30000, extra="GET http://h/x\nBad Header\n")
        good = self.write_targets("good.targets", 3)
        lines = sum(1 for _ in open(bad))
        cases = [
            (["--requests-file", bad, "--lazy", "-n", "1"], f"{bad}:{lines}: "),
            ([self.ngx.url("/"), "--bodies", self.dir, "--lazy", "-n", "1"],
             "--lazy streams a --requests-file table"),
            ([self.ngx.url("/"), "--lazy", "-n", "1"], "--lazy streams a --requests-file table"),
            (["--requests-file", good, "--lazy", "--h2c", "-n", "1"],
             "--lazy does not combine with HTTP/2"),
        ]
        for args, want in cases:
            run = harness.run_pacer(args, out=False, timeout=30)
            self.assertEqual(run.code, 2, (args, run.stderr))
            lines_out = run.stderr.splitlines()
            self.assertEqual(len(lines_out), 1, run.stderr)
            self.assertIn(want, lines_out[0])

    def test_spool_folder_falls_back(self):
        table = self.write_targets("tmpdir.targets", 10)
        env = dict(os.environ, TMPDIR="/proc")
        p = subprocess.run([harness.pacer_bin(), "run", "--requests-file", table, "--lazy", "-n",
                            "1", "--limited-ok"], capture_output=True, text=True, env=env,
                           timeout=30)
        # $TMPDIR=/proc takes no file: /var/tmp (or /tmp) is used instead
        self.assertEqual(p.returncode, 0, p.stderr)


if __name__ == "__main__":
    harness.run_suite()
