"""Secrets in outputs (issue 32): the values of Authorization,
Proxy-Authorization, Cookie, Set-Cookie and --redact-header's names are
sent as given (a server on loopback sees them) but written nowhere a run
describes its requests -- the JSON result, every file of --report-dir, the
run history's database and what `pacer history` prints, a compare's
variants -- only as a fingerprint that is the same for the same value;
--no-redact writes them; the request table's hash is of what was sent
either way; and a result file kept 0600 stays 0600 when a run rewrites
it."""

import http.server
import os
import sqlite3
import stat
import subprocess
import tempfile
import threading
import unittest

import harness
from harness import PacerTestCase, run_pacer, describe

SECRETS = {
    "Authorization": "Bearer s3cret-auth-value",
    "Cookie": "session=s3cret-cookie-value",
    "Proxy-Authorization": "Basic s3cret-proxy-value",
    "X-Api-Key": "s3cret-apikey-value",
}


class Recorder(http.server.BaseHTTPRequestHandler):
    """Answers 200 and keeps the headers of every request."""

    seen = []

    def do_GET(self):  # noqa: N802 (the stdlib's name)
        Recorder.seen.append(dict(self.headers.items()))
        body = b"ok"
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


class SecretsTest(PacerTestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Recorder)
        cls.thread = threading.Thread(target=cls.server.serve_forever, daemon=True)
        cls.thread.start()
        cls.url = "http://127.0.0.1:%d/" % cls.server.server_address[1]

    @classmethod
    def tearDownClass(cls):
        cls.server.shutdown()
        cls.server.server_close()

    def headers_args(self):
        args = []
        for k, v in SECRETS.items():
            args += ["-H", "%s: %s" % (k, v)]
        return args + ["--redact-header", "x-api-key", "-H", "Accept: text/plain"]

    def files_under(self, d):
        for root, _, files in os.walk(d):
            for f in files:
                yield os.path.join(root, f)

    def assert_no_secret(self, data, where):
        for v in SECRETS.values():
            self.assertNotIn(v.encode(), data, where)
            self.assertNotIn(v.split("=")[-1].split(" ")[-1].encode(), data, where)

    def test_redacted_everywhere(self):
        d = tempfile.mkdtemp(prefix="pacer-secrets-")
        db = os.path.join(d, "h.db")
        report = os.path.join(d, "report")
        Recorder.seen.clear()
        run = self.run_ok([self.url, "-r", "40", "-d", "1s", "--history", db,
                           "--report-dir", report] + self.headers_args())
        # sent as given
        self.assertTrue(Recorder.seen, describe(run))
        for k, v in SECRETS.items():
            self.assertEqual(Recorder.seen[-1].get(k), v, Recorder.seen[-1])
        # written nowhere: the result, the summary, every file of the report
        # folder, the database, what `pacer history` prints
        with open(run.out_path, "rb") as f:
            self.assert_no_secret(f.read(), "result.json")
        self.assert_no_secret((run.stdout + run.stderr).encode(), "the terminal")
        files = list(self.files_under(report))
        self.assertTrue(any(f.endswith("report.html") for f in files), files)
        self.assertTrue(any(f.endswith("report.md") for f in files), files)
        for f in files:
            with open(f, "rb") as fh:
                self.assert_no_secret(fh.read(), f)
        for f in os.listdir(d):
            if f.startswith("h.db"):
                with open(os.path.join(d, f), "rb") as fh:
                    self.assert_no_secret(fh.read(), f)
        with sqlite3.connect(db) as c:
            (rid,) = c.execute("SELECT id FROM runs").fetchone()
        for args in (["history", db], ["history", db, "show", str(rid)],
                     ["report", "%s:%d" % (db, rid), "--format", "html"]):
            r = subprocess.run([harness.pacer_bin()] + args, capture_output=True, timeout=60)
            self.assert_no_secret(r.stdout + r.stderr, args)
        # what is shown: the name and a fingerprint, in headers and argv
        plan = run.json["plan"]
        shown = {h.split(":")[0]: h for h in plan["headers"]}
        for k in SECRETS:
            self.assertRegex(shown[k], r"^%s: \[redacted fingerprint [0-9a-f]{12}\]$" % k)
        self.assertEqual(shown["Accept"], "Accept: text/plain")
        self.assertTrue(all(h in plan["argv"] for h in plan["headers"]), plan["argv"])
        # the same value, the same fingerprint; another value, another one
        again = self.run_ok([self.url, "-r", "20", "-d", "300ms"] + self.headers_args())
        self.assertEqual(again.json["plan"]["headers"], plan["headers"])
        other = self.run_ok([self.url, "-r", "20", "-d", "300ms",
                             "-H", "Authorization: Bearer another"])
        self.assertNotEqual(other.json["plan"]["headers"][0], shown["Authorization"])
        # --no-redact writes them, and the hash is of what was sent either way
        plain = self.run_ok([self.url, "-r", "20", "-d", "300ms", "--no-redact"]
                            + self.headers_args())
        self.assertIn("Authorization: " + SECRETS["Authorization"], plain.json["plan"]["headers"])
        self.assertEqual(plain.json["plan"]["workload"]["sha256"],
                         run.json["plan"]["workload"]["sha256"])

    def test_scenario_and_compare(self):
        d = tempfile.mkdtemp(prefix="pacer-secrets-sc-")
        scen = os.path.join(d, "s.yaml")
        with open(scen, "w") as f:
            f.write("kind: run\ntarget: %s\nrate: 20\nduration: 300ms\nredact_header: [X-Api-Key]\n"
                    "header:\n  Authorization: %s\n  X-Api-Key: %s\n"
                    % (self.url, SECRETS["Authorization"], SECRETS["X-Api-Key"]))
        out = os.path.join(d, "r.json")
        r = subprocess.run([harness.pacer_bin(), "bench", scen, "-q", "--limited-ok", "-o", out],
                           capture_output=True, timeout=60)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(out, "rb") as f:
            self.assert_no_secret(f.read(), "bench result")
        # a compare variant's own header, and a message quoting it
        run = run_pacer(["--variant", "A=" + self.url, "--variant", "B=" + self.url,
                         "--variant-set", "B.header=Cookie: " + SECRETS["Cookie"],
                         "-r", "20", "-d", "300ms", "--repeat", "1"], subcommand="compare")
        self.assertEqual(run.code, 0, describe(run))
        with open(run.out_path, "rb") as f:
            self.assert_no_secret(f.read(), "compare result")
        bad = run_pacer(["--variant", "A=" + self.url, "--variant", "B=" + self.url,
                         "--variant-set", "C.header=Cookie: " + SECRETS["Cookie"],
                         "-r", "20", "-d", "300ms"], subcommand="compare", out=False)
        self.assertEqual(bad.code, 2, describe(bad))
        self.assertIn("no variant C", bad.stderr)
        self.assert_no_secret(bad.stderr.encode(), "the message")

    def test_mode_kept(self):
        d = tempfile.mkdtemp(prefix="pacer-secrets-mode-")
        out = os.path.join(d, "r.json")
        fd = os.open(out, os.O_WRONLY | os.O_CREAT, 0o600)
        os.close(fd)
        os.chmod(out, 0o600)
        self.run_ok([self.url, "-r", "20", "-d", "300ms", "--no-redact", "-o", out]
                    + self.headers_args())
        self.assertEqual(stat.S_IMODE(os.stat(out).st_mode), 0o600)


if __name__ == "__main__":
    unittest.main()
