"""pacer run and ramp with a mixed request table against nginx: figures per
request name (docs/tables.md#request-names). The count, completed and errors
of every name in the JSON equal what nginx logged for that name's method and
paths, exactly; names beyond the first 64 are pooled as "other", said so;
--success decides what a name's errors are; --by-name prints the table; the
reports show it."""

import collections
import json
import os
import subprocess
import tempfile
import time
import unittest

import harness

_ports = {}


def names_server():
    """A server block of its own, logging method, status and path, with the
    locations of a typical API mix (static, REST id, nested, writes)."""
    _ports["api"] = harness.free_port()
    return """
    log_format pacer_names '$request_method $status $uri';
    server {
        listen 127.0.0.1:%d backlog=4096;
        access_log @PREFIX@/names.log pacer_names;
        location = /ready { access_log off; return 200 "ready\\n"; }
        location = /static/app.css { default_type text/css; return 200 "body{}\\n"; }
        location /api/ { default_type application/json; return 200 "{}\\n"; }
        location = /forbidden { return 403; }
    }
""" % _ports["api"]


def url(path):
    return "http://127.0.0.1:%d%s" % (_ports["api"], path)


# (method, path and query, name or None, body or None): the Amber shape.
MIX = [
    ("GET", "/static/app.css", None, None),
    ("GET", "/api/users/1", "GET /api/users/{id}", None),
    ("GET", "/api/users/2?fields=name", "GET /api/users/{id}", None),
    ("GET", "/api/users/3", "GET /api/users/{id}", None),
    ("GET", "/api/users/7/orders/3", "GET /api/users/{id}/orders/{id}", None),
    ("GET", "/api/users/8/orders/1", "GET /api/users/{id}/orders/{id}", None),
    ("POST", "/api/users", None, b'{"name":"ada"}'),
    ("PUT", "/api/users/2", "PUT /api/users/{id}", b'{"name":"bob"}'),
    ("PATCH", "/api/users/3?x=1", None, b'{"active":true}'),
    ("DELETE", "/api/users/4", None, None),
    ("GET", "/static/app.css", None, None),
    ("GET", "/forbidden", None, None),          # 403
    ("GET", "/missing/page", None, None),       # 404
]


def name_of(method, target, name):
    return name if name else method + " " + target.split("?", 1)[0]


def write_jsonl(path, mix):
    import base64
    with open(path, "w") as f:
        for method, target, name, body in mix:
            o = {"method": method, "url": url(target)}
            if name:
                o["name"] = name
            if body is not None:
                o["header"] = {"Content-Type": ["application/json"]}
                o["body"] = base64.b64encode(body).decode()
            f.write(json.dumps(o) + "\n")


class NamesTest(harness.PacerTestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.ngx = harness.Nginx(extra_http=names_server).start()
        cls.log = os.path.join(cls.ngx.dir, "names.log")
        cls.dir = tempfile.mkdtemp(prefix="pacer-names-")
        cls.table = os.path.join(cls.dir, "mix.jsonl")
        write_jsonl(cls.table, MIX)
        # (method, path) -> name, from the table: what each logged line counts for
        cls.key_name = {}
        for method, target, name, _ in MIX:
            cls.key_name[(method, target.split("?", 1)[0])] = name_of(method, target, name)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:  # the second server is up with the first
            try:
                import urllib.request
                urllib.request.urlopen(url("/ready"), timeout=1).read()
                break
            except OSError:
                time.sleep(0.05)

    @classmethod
    def tearDownClass(cls):
        cls.ngx.stop()

    def mark(self):
        try:
            return os.path.getsize(self.log)
        except OSError:
            return 0

    def logged(self, since, settle=0.3):
        """[(method, status, path)] logged after `since`, once the log is still."""
        last, stable = None, time.monotonic()
        while True:
            size = os.path.getsize(self.log) if os.path.exists(self.log) else 0
            if size != last:
                last, stable = size, time.monotonic()
            elif time.monotonic() - stable >= settle:
                break
            time.sleep(0.05)
        with open(self.log, "rb") as f:
            f.seek(since)
            out = []
            for raw in f.read().decode("latin-1").splitlines():
                m, st, p = raw.split(" ", 2)
                out.append((m, int(st), p))
            return out

    def check_exact(self, phase, lines, key_name, ok=lambda status: 200 <= status <= 399):
        """Each name's sent/completed/ok/errors equal nginx's lines of its
        (method, path)s; the names are those of the table, in first order."""
        want = collections.OrderedDict()
        for n in key_name.values():
            want.setdefault(n, collections.Counter())
        for method, status, path in lines:
            c = want[key_name[(method, path)]]
            c["n"] += 1
            c["ok"] += 1 if ok(status) else 0
        by = phase["by_name"]
        self.assertEqual([e["name"] for e in by], list(want), by)
        for e in by:
            w = want[e["name"]]
            self.assertEqual(e["completed"], w["n"], e)
            self.assertEqual(e["sent"], w["n"], e)
            self.assertEqual(e["ok"], w["ok"], e)
            self.assertEqual(e["transport_errors"], 0, e)
            self.assertEqual(e["errors"], w["n"] - w["ok"], e)
            if w["n"]:
                self.assertAlmostEqual(e["error_pct"], 100.0 * (w["n"] - w["ok"]) / w["n"],
                                       places=3)
            self.assertEqual(e["latency"]["count"], w["n"], e)
            self.assertEqual(e["latency"]["sub_bits"], 7)
            if w["n"]:
                self.assertLessEqual(e["latency"]["p50_us"], e["latency"]["max_us"] * (1 + 1 / 64))
        # the names add up to the phase
        self.assertEqual(sum(e["completed"] for e in by), phase["requests"]["completed"])
        self.assertEqual(sum(e["sent"] for e in by), phase["requests"]["sent"])
        self.assertEqual(sum(e["latency"]["count"] for e in by), phase["latency"]["count"])

    def test_closed_loop_counts_equal_access_log(self):
        mark = self.mark()
        run = harness.run_pacer(["--requests-file", self.table, "-n", 1300, "--concurrency", 4,
                                 "--by-name"])
        self.assertEqual(run.code, 0, run.stderr)
        m = run.json["measure"]
        self.assertEqual(m["requests"]["completed"], 1300)
        lines = self.logged(mark)
        self.assertEqual(len(lines), 1300)
        self.check_exact(m, lines, self.key_name)
        by = {e["name"]: e for e in m["by_name"]}
        # 13 requests in turn, 100 rounds: exact per name
        self.assertEqual(by["GET /api/users/{id}"]["completed"], 300)
        self.assertEqual(by["GET /static/app.css"]["completed"], 200)
        self.assertEqual(by["PATCH /api/users/3"]["completed"], 100)
        self.assertEqual(by["GET /forbidden"]["errors"], 100)
        self.assertEqual(by["GET /missing/page"]["errors"], 100)
        self.assertEqual(by["POST /api/users"]["errors"], 0)
        # the terminal table, one row per name
        out = run.stdout
        self.assertIn("By request name", out)
        for n in by:
            self.assertIn(n, out)
        row = [l for l in out.splitlines() if l.strip().startswith("GET /forbidden")][0]
        self.assertIn("100.00%", row)

    def test_open_loop_threads_and_success_rule(self):
        """Two threads (per-name figures merged after the join), open loop, and
        --success deciding what a name's errors are: 403 counts as ok here."""
        mark = self.mark()
        run = harness.run_pacer(["--requests-file", self.table, "--rate", 1300, "-d", "2s",
                                 "-t", 2, "-c", 16, "--success", "status < 404"])
        self.assertEqual(run.code, 0, run.stderr)
        m = run.json["measure"]
        self.assertEqual(m["requests"]["in_flight_at_end"], 0)
        lines = self.logged(mark)
        self.assertEqual(len(lines), m["requests"]["completed"])
        self.assertGreater(len(lines), 2000)
        self.check_exact(m, lines, self.key_name, ok=lambda st: st < 404)
        by = {e["name"]: e for e in m["by_name"]}
        self.assertEqual(by["GET /forbidden"]["errors"], 0)
        self.assertGreater(by["GET /missing/page"]["errors"], 0)
        # the summary is the report's text: the table is there without --by-name
        self.assertIn("By request name", run.stdout)
        for n in by:
            self.assertIn(n, run.stdout)

    def test_pooled_beyond_64(self):
        """70 paths, unnamed: 64 names and "other" with the last 6."""
        mix = [("GET", "/api/p%d" % i, None, None) for i in range(70)]
        path = os.path.join(self.dir, "many.jsonl")
        write_jsonl(path, mix)
        key_name = {}
        for i in range(70):
            key_name[("GET", "/api/p%d" % i)] = "GET /api/p%d" % i if i < 64 else "other"
        mark = self.mark()
        run = harness.run_pacer(["--requests-file", path, "-n", 700, "--concurrency", 2])
        self.assertEqual(run.code, 0, run.stderr)
        m = run.json["measure"]
        by = m["by_name"]
        self.assertEqual(len(by), 65)
        self.assertEqual(by[64]["name"], "other")
        self.assertTrue(by[64]["other"])
        self.assertEqual(by[64]["pooled_names"], 6)
        self.assertNotIn("other", by[63])
        self.check_exact(m, self.logged(mark), key_name)
        self.assertEqual(by[64]["completed"], 60)

    def test_ramp_steps_and_reports(self):
        run = harness.run_pacer(["--requests-file", self.table, "--steps", "200,400",
                                 "--step-duration", "1s", "--step-warmup", "0.2s", "--by-name"],
                                subcommand="ramp")
        self.assertIn(run.code, (0, 1), run.stderr)
        for step in run.json["steps"]:
            by = step["measure"]["by_name"]
            self.assertEqual(len(by), 9)
            self.assertEqual(sum(e["completed"] for e in by), step["measure"]["requests"]["completed"])
        # one table per step, after its row
        self.assertEqual(run.stdout.count("by name"), 2)
        # the reports of the saved result have the table
        d = tempfile.mkdtemp(prefix="pacer-names-rep-")
        res = os.path.join(d, "r.json")
        with open(res, "w") as f:
            json.dump(run.json, f)
        md = subprocess.run([harness.pacer_bin(), "report", res, "--format", "md"],
                            capture_output=True, text=True, timeout=30)
        self.assertEqual(md.returncode, 0, md.stderr)
        self.assertIn("| GET /api/users/{id}/orders/{id} |", md.stdout)

    def test_transport_errors_per_name(self):
        """A name whose server closes before answering: its requests are
        transport errors of that name alone; the other name's counts still
        equal nginx's log."""
        with harness.BadServer("close-before") as bad:
            path = os.path.join(self.dir, "two-hosts.jsonl")
            with open(path, "w") as f:
                f.write(json.dumps({"method": "GET", "url": url("/api/fine"), "name": "fine"}) + "\n")
                f.write(json.dumps({"method": "GET", "url": bad.url("/x"), "name": "broken"}) + "\n")
            mark = self.mark()
            run = harness.run_pacer(["--requests-file", path, "-n", 400, "--concurrency", 2])
        self.assertEqual(run.code, 0, run.stderr)
        m = run.json["measure"]
        by = {e["name"]: e for e in m["by_name"]}
        lines = self.logged(mark)
        self.assertEqual(by["fine"]["completed"], len(lines))
        self.assertEqual(by["fine"]["transport_errors"], 0)
        self.assertEqual(by["fine"]["errors"], 0)
        b = by["broken"]
        self.assertEqual(b["completed"], 0)
        self.assertGreater(b["transport_errors"], 0)
        req_errors = m["transport_errors"]["requests"]
        self.assertEqual(b["transport_errors"], req_errors)
        self.assertEqual(b["errors"], b["transport_errors"])
        self.assertEqual(b["error_pct"], 100.0)
        self.assertEqual(b["sent"], b["transport_errors"] + b["completed"])

    def test_single_url_one_entry(self):
        run = harness.run_pacer([url("/api/one?x=1"), "-n", 50, "--concurrency", 2, "--by-name"])
        self.assertEqual(run.code, 0, run.stderr)
        by = run.json["measure"]["by_name"]
        self.assertEqual(len(by), 1)
        self.assertEqual(by[0]["name"], "GET /api/one")
        self.assertEqual(by[0]["completed"], 50)
        self.assertEqual(by[0]["latency"]["sub_bits"], 11)  # the phase's own histogram
        self.assertNotIn("By request name", run.stdout)  # one name: no table


    def test_workload_names_are_the_tables(self):
        """plan.workload.names counts the names the table gives (as by_name
        reports them), read at once or through --lazy's spool, not only
        the mix generator's shapes: none of these requests has a shape."""
        want = collections.Counter(name_of(m, t, n) for m, t, n, _ in MIX)
        for lazy in ([], ["--lazy"]):
            with self.subTest(lazy=bool(lazy)):
                run = harness.run_pacer(["--requests-file", self.table, "-n", 13,
                                         "--concurrency", 1] + lazy)
                self.assertEqual(run.code, 0, run.stderr)
                wl = run.json["plan"]["workload"]
                got = {e["name"]: e["requests"] for e in wl["names"]}
                self.assertEqual(got, dict(want), wl)
                self.assertEqual(wl["unnamed_requests"], 0, wl)
                self.assertEqual(wl["other_names_requests"], 0, wl)
                # sorted by count, most first
                self.assertEqual(wl["names"][0]["name"], "GET /api/users/{id}")
                # and the report says them
                md = subprocess.run([harness.pacer_bin(), "report", run.out_path],
                                    capture_output=True, text=True, check=True).stdout
                self.assertIn("GET /api/users/{id} 3 (23.08%)", md)

if __name__ == "__main__":
    unittest.main()
