"""pacer table hash|show|generate and pacer import har, from the command
line: outputs (the hash over the documented canonical wire bytes, checked
against Python's hashlib; summaries; generated tables that are byte-identical
for one seed; HAR imports) and bad input (exit status 2 and one stderr line
naming the file and line or entry). No network traffic."""

import base64
import collections
import hashlib
import json
import os
import re
import shutil
import struct
import tempfile
import unittest

import harness
from harness import PacerTestCase

REPO = harness.REPO
EXAMPLES = os.path.join(REPO, "examples", "tables")
SMALL_HAR = os.path.join(REPO, "tests", "unit", "table", "data", "small.har")
HASH_LINE = re.compile(r"^([0-9a-f]{64})  (\d+) requests$")


def canonical_hash(wires):
    """SHA-256 over each request's length (8 bytes, big-endian) and bytes."""
    h = hashlib.sha256()
    for w in wires:
        h.update(struct.pack(">Q", len(w)))
        h.update(w)
    return h.hexdigest()


class TableCliTest(PacerTestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="pacer-table-")
        self.addCleanup(shutil.rmtree, self.tmp, True)

    def path(self, name):
        return os.path.join(self.tmp, name)

    def write(self, name, data):
        p = self.path(name)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "wb") as f:
            f.write(data.encode() if isinstance(data, str) else data)
        return p

    def pacer(self, sub, args, code=0):
        run = harness.run_pacer(args, timeout=60.0, out=False, subcommand=sub)
        self.assertFalse(run.timed_out, harness.describe(run))
        self.assertEqual(run.code, code, harness.describe(run))
        return run

    def table(self, args, code=0):
        return self.pacer("table", args, code)

    def usage_error(self, sub, args, *mentions):
        """Exit 2, one stderr line starting "pacer SUB" that contains every mention."""
        run = self.pacer(sub, args, code=2)
        lines = [l for l in run.stderr.splitlines() if l.strip()]
        self.assertEqual(len(lines), 1, "stderr should be one line:\n" + run.stderr)
        self.assertTrue(lines[0].startswith("pacer " + sub), lines[0])
        for m in mentions:
            self.assertIn(m, lines[0])
        self.assertEqual(run.stdout, "")
        return lines[0]

    def hash_of(self, args):
        run = self.table(["hash"] + args)
        m = HASH_LINE.match(run.stdout.strip())
        self.assertIsNotNone(m, run.stdout)
        self.assertEqual(run.stderr, "")
        return m.group(1), int(m.group(2))

    # ------------------------------------------------------------ hash

    def test_hash_is_sha256_over_canonical_wire_bytes(self):
        t = self.write("t.targets", "GET http://127.0.0.1:8080/a\n\n"
                                    "POST http://127.0.0.1:8080/b\nContent-Type: text/plain\n@body.txt\n")
        self.write("body.txt", "abc")
        h, n = self.hash_of([t, "-H", "User-Agent: test"])
        self.assertEqual(n, 2)
        wires = [
            b"GET /a HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nUser-Agent: test\r\n\r\n",
            b"POST /b HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nContent-Type: text/plain\r\n"
            b"User-Agent: test\r\nContent-Length: 3\r\n\r\nabc",
        ]
        self.assertEqual(h, canonical_hash(wires))

    def test_example_targets_and_jsonl_are_one_table(self):
        ht, nt = self.hash_of([os.path.join(EXAMPLES, "api.targets")])
        hj, nj = self.hash_of([os.path.join(EXAMPLES, "api.jsonl")])
        self.assertEqual((ht, nt), (hj, nj))
        self.assertEqual(nt, 6)
        # a header added to every request changes the hash
        hh, _ = self.hash_of([os.path.join(EXAMPLES, "api.targets"), "-H", "X-Trial: 2"])
        self.assertNotEqual(hh, ht)

    def test_hash_bodies_folder(self):
        d = os.path.join(self.tmp, "bodies")
        bodies = {"b.json": b'{"b":2}', "a.json": b'{"a":1}', "c.bin": bytes(range(256))}
        for name, data in bodies.items():
            self.write(os.path.join("bodies", name), data)
        self.write(os.path.join("bodies", ".hidden"), "skipped")
        h, n = self.hash_of(["--bodies", d, "--url", "http://127.0.0.1:8080/bid",
                             "--content-type", "application/json"])
        self.assertEqual(n, 3)
        # the same requests written as JSON Lines, in name order
        with open(self.path("same.jsonl"), "w") as f:
            for name in sorted(bodies):
                f.write(json.dumps({"method": "POST", "url": "http://127.0.0.1:8080/bid",
                                    "header": {"Content-Type": ["application/json"]},
                                    "body": base64.b64encode(bodies[name]).decode()}) + "\n")
        self.assertEqual(self.hash_of([self.path("same.jsonl")]), (h, n))
        self.usage_error("table", ["hash", "--bodies", d], "--bodies needs --url")
        self.usage_error("table", ["hash", "--bodies", d, "--url", "http://h/", "--max-body", "100"],
                         "c.bin", "over the limit of 100 bytes")

    # ------------------------------------------------------------ show

    def test_show(self):
        run = self.table(["show", os.path.join(EXAMPLES, "api.targets")])
        out = run.stdout
        self.assertIn("requests  6\n", out)
        self.assertRegex(out, r"sha256    [0-9a-f]{64}\n")
        self.assertRegex(out, r"\n  GET +3 +50\.0%\n")
        self.assertRegex(out, r"\n  127\.0\.0\.1:8080 +6 +100\.0%\n")
        self.assertIn("shapes (path templates)", out)
        self.assertRegex(out, r"\n  /users/\{id\} +4 +66\.7%\n")
        self.assertIn("queries   1 (16.7%)", out)
        self.assertRegex(out, r"bodies    2 \(33\.3%\), 30 to 65 bytes")
        # a targets file names each request METHOD path (docs/tables.md#request-names)
        self.assertIn("names (figures per name in a run)\n", out)
        self.assertRegex(out, r"\n  GET /users/1 +1 +16\.7%\n")
        self.assertRegex(out, r"\n  DELETE /users/3 +1 +16\.7%\n")
        self.assertNotIn("pools the other", out)
        # more than 64 names: said how many a run pools
        many = self.path("many.targets")
        with open(many, "w") as f:
            f.write("".join("GET http://127.0.0.1:8080/p%d\n\n" % i for i in range(70)))
        out = self.table(["show", many]).stdout
        self.assertIn("(70 names: a run reports the first 64 in table order apart and pools the "
                      "other 6 as \"other\")", out)

    # ------------------------------------------------------------ generate

    def generate(self, args, code=0):
        return self.table(["generate", "--spec", os.path.join(EXAMPLES, "mix.yaml")] + args, code)

    def test_generate_is_deterministic_and_matches_the_spec(self):
        a = self.generate(["--size", "4096", "--seed", "1"])
        b = self.generate(["--size", "4096", "--seed", "1"])
        c = self.generate(["--size", "4096", "--seed", "2"])
        self.assertEqual(a.stdout, b.stdout)
        self.assertNotEqual(a.stdout, c.stdout)
        lines = a.stdout.splitlines()
        self.assertEqual(len(lines), 4096)
        methods = collections.Counter()
        shapes = collections.Counter()
        queries = 0
        for line in lines:
            o = json.loads(line)
            methods[o["method"]] += 1
            shapes[o["shape"]] += 1
            queries += "?" in o["url"]
            self.assertTrue(o["url"].startswith("http://127.0.0.1:8080/"))
            self.assertEqual("body" in o, o["method"] in ("POST", "PUT", "PATCH"))
            if "body" in o:
                self.assertEqual(len(json.loads(base64.b64decode(o["body"]))), 8)
        for m, share in {"GET": .65, "POST": .20, "PUT": .08, "PATCH": .05, "DELETE": .02}.items():
            self.assertLess(abs(methods[m] - share * 4096), 1.0, methods)
        for s, share in {"static": .2, "rest_id": .3, "id_action": .15, "nested": .15,
                         "constrained": .1, "glob": .1}.items():
            self.assertLess(abs(shapes[s] - share * 4096), 1.0, shapes)
        self.assertEqual(queries, 1024)
        # -o writes the same bytes to a file; the file hashes and shows
        out = self.path("t.jsonl")
        self.generate(["--size", "4096", "--seed", "1", "-o", out])
        with open(out) as f:
            self.assertEqual(f.read(), a.stdout)
        self.assertEqual(self.hash_of([out])[1], 4096)
        show = self.table(["show", out]).stdout
        self.assertRegex(show, r"\nshapes\n  rest_id +1,229 +30\.0%\n")
        # generated requests are named METHOD shape
        self.assertRegex(show, r"\n  GET rest_id +[0-9,]+ +[0-9.]+%\n")

    def test_generate_errors(self):
        self.usage_error("table", ["generate", "--size", "10"], "missing --spec")
        self.usage_error("table", ["generate", "--spec", os.path.join(EXAMPLES, "mix.yaml")], "missing --size")
        self.usage_error("table", ["generate", "--spec", os.path.join(EXAMPLES, "mix.yaml"), "--size", "0"],
                         "--size 0")
        self.usage_error("table", ["generate", "--spec", os.path.join(EXAMPLES, "mix.yaml"), "--size", "5",
                                   "--seed", "-3"], "--seed '-3'")
        spec = self.write("bad.yaml", "base_url: http://h\nshapes:\n  - {name: a, routes: 5, template: /a}\n")
        self.usage_error("table", ["generate", "--spec", spec, "--size", "5"],
                         spec + ":3: shapes[0] (a): 5 distinct routes from 1 templates need ${route}")
        self.usage_error("table", ["generate", "--spec", self.path("none.yaml"), "--size", "5"],
                         "none.yaml: cannot read: No such file or directory")

    # ------------------------------------------------------------ import har

    def test_import_har(self):
        run = self.pacer("import", ["har", SMALL_HAR])
        self.assertIn("2 of 6 entries skipped (not http or https)", run.stderr)
        reqs = [json.loads(l) for l in run.stdout.splitlines()]
        self.assertEqual([r["method"] for r in reqs], ["GET", "POST", "POST", "PUT"])
        for r in reqs:
            names = {n.lower() for n in r.get("header", {})}
            self.assertFalse(names & {"cookie", "host", "content-length", "connection", "keep-alive",
                                      "te", "trailer", "upgrade", "transfer-encoding", "x-hop",
                                      "proxy-authorization"}, names)
            self.assertFalse(any(n.startswith(":") for n in names), names)
        self.assertEqual(base64.b64decode(reqs[2]["body"]), b"user=ada+lovelace&pass=a%26b%3Dc")
        out = self.write("har.jsonl", run.stdout)
        self.assertEqual(self.hash_of([out])[1], 4)

        kept = self.pacer("import", ["har", SMALL_HAR, "--keep-cookies"])
        first = json.loads(kept.stdout.splitlines()[0])
        self.assertEqual(first["header"]["cookie"], ["session=abc; theme=dark"])

    def test_import_errors(self):
        not_har = self.write("x.har", '{"entries": []}')
        self.usage_error("import", ["har", not_har], not_har + ": not a HAR file")
        bad = self.write("bad.har", json.dumps({"log": {"entries": [
            {"request": {"method": "GET", "url": "http://h/"}},
            {"request": {"method": "GET", "url": "http://h/ x"}}]}}))
        self.usage_error("import", ["har", bad], "log.entries[1].request: bad URL")
        self.usage_error("import", ["har", self.path("none.har")], "No such file or directory")
        self.usage_error("import", ["har"], "missing FILE.har")
        self.usage_error("import", ["csv", not_har], "unknown format 'csv'")
        self.pacer("import", [], code=2)

    # ------------------------------------------------------------ bad tables

    def test_bad_tables(self):
        t = self.write("dup.targets", "GET http://h/\nHost: a\nHost: b\n")
        self.usage_error("table", ["hash", t], t + ":3: duplicate header 'Host' (it may appear once)")
        t = self.write("body.targets", "GET http://h/ok\n\nPOST http://h/\n@missing.json\n")
        self.usage_error("table", ["show", t], t + ":4: cannot read body file", "missing.json")
        t = self.write("big.jsonl", '{"method":"POST","url":"http://h/","body":"aGVsbG8gd29ybGQ="}\n')
        self.usage_error("table", ["hash", t, "--max-body", "4"], t + ":1: body is over the limit of 4 bytes")
        self.usage_error("table", ["hash", os.path.join(EXAMPLES, "api.targets"), "--format", "jsonl"],
                         "api.targets:5: invalid JSON")
        self.usage_error("table", ["hash", os.path.join(EXAMPLES, "api.targets"), "--format", "csv"],
                         "--format 'csv'")
        self.usage_error("table", ["hash", os.path.join(EXAMPLES, "api.targets"), "-H", "Content-Length: 1"],
                         "Content-Length")
        self.usage_error("table", ["hash"], "missing FILE")
        self.usage_error("table", ["hash", self.tmp], "it is a folder")
        self.usage_error("table", ["frob"], "unknown command 'frob'")
        self.usage_error("table", ["hash", "--nope"], "--nope")
        self.pacer("table", [], code=2)
        self.assertIn("usage: pacer table", self.table(["--help"]).stdout)
        self.assertIn("--max-body", self.table(["hash", "--help"]).stdout)


if __name__ == "__main__":
    unittest.main()
