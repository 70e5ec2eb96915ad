"""Scripts in wrk's style (pacer run -s FILE.lua; docs/scripting.md) against
real nginx, whose access log must show exactly the requests the script
made:

- a counter in the path, each thread with the id setup() gave it
  (thread:set): every thread's paths are 1..n once each, the counts add up
  to the run's requests, closed loop (-n) and open loop (-r);
- POST with a JSON body and headers set on the wrk table, sent as the one
  request wrk.format() makes (no request()), and a request() that makes a
  new JSON body each call: methods, bodies and Content-Type as logged;
- response() counting statuses and done() reading them from each thread
  (thread:get) and printing latency percentiles and wrk's summary;
- arguments after -- reach init(args);
- bad scripts: a compile error and an error in init stop before the load
  (exit 2, nothing sent); an error in request() or response(), an endless
  loop and unbounded allocation stop the load (exit 2, the result kept and
  marked interrupted), each in one line naming the file, the line and the
  hook;
- request()'s own time is pacer's lateness: a request() that spins 3 ms
  at 200/s shows in the send lag (p50 at least 3 ms);
- over HTTP/3 (--http3) against Debian's caddy, whose JSON access log must
  show exactly the counter's paths, each once, as HTTP/3.0; response() and
  done() see every response; POST bodies a request() made reach nginx
  behind caddy's reverse proxy as made; a login session (caddy proxies
  /login and /account to the nginx above) carries the token to the next
  steps over HTTP/3.
"""

import json
import os
import re
import shutil
import sqlite3
import tempfile
import time
import urllib.request

import harness
from harness import describe
from test_http3 import Caddy, caddy_bin

_ports = {}


def script_server():
    """A server block of its own logging method, path, Content-Type and the
    body (JSON-escaped; a proxied location reads the body, so nginx has
    it), one line per request; a login that answers a token, and an
    account that needs it."""
    _ports["api"] = harness.free_port()
    return """
    log_format pacer_script escape=json
        '$request_method|$request_uri|$http_content_type|$request_body';
    server {
        listen 127.0.0.1:%d backlog=4096;
        access_log @PREFIX@/script.log pacer_script;
        location = /ready { access_log off; return 200 "ready\\n"; }
        location /missing/ { return 404; }
        location = /login { rewrite ^ /token break; proxy_pass http://127.0.0.1:%d; }
        location = /token {
            access_log off;
            default_type application/json;
            return 200 '{"token":"t0k3n-42"}';
        }
        location = /account {
            if ($http_authorization != "Bearer t0k3n-42") { return 401; }
            default_type text/plain;
            return 200 "account\n";
        }
        location /api/ { rewrite ^ /hello break; proxy_pass http://127.0.0.1:@PORT@; }
        location / { default_type text/plain; return 200 "ok\\n"; }
    }
""" % (_ports["api"], _ports["api"])


def url(path="/"):
    return "http://127.0.0.1:%d%s" % (_ports["api"], path)


COUNTER = """
local n = 0
function setup(thread)
  n = n + 1
  thread:set("id", n)
end
counter = 0
function request()
  counter = counter + 1
  return wrk.format(nil, "/t" .. id .. "/" .. counter)
end
"""

POST_STATIC = """
wrk.method = "POST"
wrk.body   = '{"user":"ada","n":1}'
wrk.headers["Content-Type"] = "application/json"
"""

POST_REQUEST = """
wrk.headers["Content-Type"] = "application/json"
n = 0
request = function()
  n = n + 1
  return wrk.format("POST", "/api/item", nil, string.format('{"id":%d,"tag":"%s"}', n, tag))
end
init = function(args)
  tag = args[1] .. "-" .. args[2]
end
"""

STATUSES = """
local threads = {}
function setup(thread)
  table.insert(threads, thread)
end
statuses = {}
i = 0
function request()
  i = i + 1
  if i % 2 == 0 then
    return wrk.format(nil, "/missing/" .. i)
  end
  return wrk.format(nil, "/ok/" .. i)
end
function response(status, headers, body)
  statuses[status] = (statuses[status] or 0) + 1
end
function done(summary, latency, requests)
  local ok, missing = 0, 0
  for _, t in ipairs(threads) do
    local s = t:get("statuses")
    ok = ok + (s[200] or 0)
    missing = missing + (s[404] or 0)
  end
  io.write(string.format("statuses 200=%d 404=%d\\n", ok, missing))
  io.write(string.format("summary requests=%d status_errors=%d\\n",
                         summary.requests, summary.errors.status))
  io.write(string.format("latency p50=%.1f p99=%.1f max=%.1f ok=%s\\n",
                         latency:percentile(50), latency:percentile(99), latency.max,
                         tostring(latency.min > 0 and latency.min <= latency.max)))
end
"""

SLOW_REQUEST = """
request = function()
  local t0 = os.clock()
  while os.clock() - t0 < 0.003 do end
  return wrk.format()
end
"""


SESSION = """
pacer.session(function(s)
  local status, headers, body = s:post("/login", '{"user":"ada"}', {name = "login"})
  local token = body:match('"token":"([^"]+)"')
  if not token then s:fail() end
  s:sleep("60ms")
  status = s:get("/account", {name = "account",
                              headers = {Authorization = "Bearer " .. token}})
  s:sleep(0.02)
  s:get("/account", {name = "again", headers = {Authorization = "Bearer " .. token}})
end)
"""


class ScriptTest(harness.PacerTestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.ngx = harness.Nginx(extra_http=script_server).start()
        cls.log = os.path.join(cls.ngx.dir, "script.log")
        cls.dir = tempfile.mkdtemp(prefix="pacer-script-")
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:  # the second server is up with the first
            try:
                urllib.request.urlopen(url("/ready"), timeout=1).read()
                break
            except OSError:
                time.sleep(0.05)

    @classmethod
    def tearDownClass(cls):
        if getattr(cls, "caddy", None):
            cls.caddy.stop()
        cls.ngx.stop()
        shutil.rmtree(cls.dir, ignore_errors=True)

    def h3(self):
        """Caddy (HTTPS and HTTP/3, "hello" at every path), started once for
        the class, with /login, /account and /api/ proxied to the nginx
        server above (its log has the bodies). Skips without caddy."""
        if not caddy_bin():
            self.skipTest("caddy not found (Debian package caddy; make deps installs it)")
        if not getattr(type(self), "caddy", None):
            type(self).caddy = Caddy(proxy={"/login": _ports["api"], "/account": _ports["api"],
                                            "/api/": _ports["api"]}).start()
        return type(self).caddy

    def script(self, name, text):
        p = os.path.join(self.dir, name)
        with open(p, "w") as f:
            f.write(text)
        return p

    def mark(self):
        try:
            return os.path.getsize(self.log)
        except OSError:
            return 0

    def logged(self, since, want=None):
        """(method, uri, content_type, body) of each line logged after
        `since`; waits up to 2 s for `want` lines (nginx logs after it
        answers)."""
        deadline = time.monotonic() + 2
        while True:
            with open(self.log, "rb") as f:
                f.seek(since)
                lines = [l for l in f.read().decode().split("\n") if l]
            if want is None or len(lines) >= want or time.monotonic() > deadline:
                break
            time.sleep(0.05)
        out = []
        for l in lines:
            method, uri, ctype, body = l.split("|", 3)
            out.append((method, uri, ctype, json.loads('"%s"' % body) if body else ""))
        return out

    def completed(self, run):
        return self.phase(run)["requests"]["completed"]

    def check_counter(self, lines, threads):
        """Each thread's paths are /tID/1..k, each once, all GETs."""
        per = {}
        for method, uri, _, body in lines:
            self.assertEqual(method, "GET")
            self.assertEqual(body, "")
            m = re.fullmatch(r"/t(\d+)/(\d+)", uri)
            self.assertIsNotNone(m, uri)
            per.setdefault(int(m.group(1)), []).append(int(m.group(2)))
        self.assertEqual(sorted(per), list(range(1, threads + 1)), per.keys())
        for tid, ns in per.items():
            self.assertEqual(sorted(ns), list(range(1, len(ns) + 1)),
                             "thread %d: paths not 1..n once each" % tid)
        return per

    def test_counter_closed_loop(self):
        s = self.script("counter.lua", COUNTER)
        since = self.mark()
        run = self.run_ok([url("/"), "-s", s, "-n", 300, "--concurrency", 4, "-t", 2])
        self.assertEqual(self.completed(run), 300, describe(run))
        lines = self.logged(since, 300)
        self.assertEqual(len(lines), 300, lines[:5])
        per = self.check_counter(lines, 2)
        self.assertEqual(sorted(len(v) for v in per.values()), [150, 150])
        sc = run.json["plan"]["script"]
        self.assertEqual(sc["mode"], "wrk")
        self.assertEqual(sc["hooks"], ["setup", "request"])
        self.assertEqual(len(sc["sha256"]), 64)

    def test_counter_open_loop(self):
        s = self.script("counter.lua", COUNTER)
        since = self.mark()
        run = self.run_ok([url("/"), "-s", s, "-r", 400, "-d", "1s", "-t", 2])
        done = self.completed(run)
        self.assertGreater(done, 300, describe(run))
        lines = self.logged(since, done)
        self.assertEqual(len(lines), done)
        self.check_counter(lines, 2)
        self.assert_no_errors(self.phase(run), run)

    def test_post_json_static(self):
        s = self.script("post.lua", POST_STATIC)
        since = self.mark()
        run = self.run_ok([url("/api/users"), "-s", s, "-n", 20, "--concurrency", 2])
        self.assertEqual(run.json["plan"]["script"]["mode"], "static")
        lines = self.logged(since, 20)
        self.assertEqual(lines, [("POST", "/api/users", "application/json",
                                  '{"user":"ada","n":1}')] * 20)
        self.assert_no_errors(self.phase(run), run)

    def test_post_json_request_and_init_args(self):
        s = self.script("post2.lua", POST_REQUEST)
        since = self.mark()
        # what follows -- is the script's: pacer's own options go before it
        out = os.path.join(self.dir, "post2.json")
        run = self.run_ok([url("/"), "-s", s, "-n", 50, "--concurrency", 3, "-o", out,
                           "--limited-ok", "--", "red", "7"])
        # init's arguments may be credentials: the result keeps fingerprints
        args = run.json["plan"]["script"]["args"]
        self.assertEqual(len(args), 2)
        self.assertTrue(all(re.fullmatch(r"\[redacted fingerprint [0-9a-f]{12}\]", a)
                            for a in args), args)
        self.assertNotEqual(args[0], args[1])
        self.assertEqual(run.json["plan"]["argv"][-3:], ["--"] + args, run.json["plan"]["argv"])
        lines = self.logged(since, 50)
        self.assertEqual(len(lines), 50)
        bodies = []
        for method, uri, ctype, body in lines:
            self.assertEqual((method, uri, ctype), ("POST", "/api/item", "application/json"))
            bodies.append(json.loads(body))
        self.assertEqual(sorted(b["id"] for b in bodies), list(range(1, 51)))
        self.assertEqual({b["tag"] for b in bodies}, {"red-7"})

    def test_response_and_done(self):
        s = self.script("statuses.lua", STATUSES)
        since = self.mark()
        run = self.run_ok([url("/"), "-s", s, "-n", 200, "--concurrency", 4, "-t", 2])
        lines = self.logged(since, 200)
        self.assertEqual(len(lines), 200)
        ok = sum(1 for l in lines if l[1].startswith("/ok/"))
        missing = sum(1 for l in lines if l[1].startswith("/missing/"))
        self.assertEqual((ok, missing), (100, 100))
        self.assertIn("statuses 200=100 404=100\n", run.stdout, describe(run))
        self.assertIn("summary requests=200 status_errors=100\n", run.stdout, describe(run))
        m = re.search(r"latency p50=([\d.]+) p99=([\d.]+) max=([\d.]+) ok=true", run.stdout)
        self.assertIsNotNone(m, describe(run))
        # done()'s latency is in microseconds, as wrk's, and is the result's
        p50_us = self.phase(run)["latency"]["p50_us"]
        self.assertAlmostEqual(float(m.group(1)), p50_us, delta=0.02 * p50_us + 0.1)
        sc = run.json["plan"]["script"]
        self.assertFalse(sc["response_headers"])
        self.assertFalse(sc["response_body"])

    def test_session_login_token(self):
        """Each arrival runs the session: login, a token from its body, a
        think time, two requests that need the token. Every step succeeds,
        each step's latency counts from when it was due (the response
        before it plus the sleep), not from the session's start."""
        s = self.script("session.lua", SESSION)
        since = self.mark()
        run = self.run_ok([url("/"), "-s", s, "-r", 20, "-d", "1s", "--drain", "2s"])
        ph = self.phase(run)
        ss = ph["sessions"]
        self.assertEqual(ss["started"], 20, ss)
        self.assertEqual(ss["completed"], 20, ss)
        self.assertEqual((ss["failed"], ss["abandoned"], ss["dropped"]), (0, 0, 0), ss)
        self.assertEqual(ss["steps"], 60, ss)
        # a session lasts its two sleeps and three round trips
        self.assertGreaterEqual(ss["duration"]["p50_us"], 80000, ss)
        by = {e["name"]: e for e in ph["by_name"]}
        self.assertEqual(sorted(by), ["account", "again", "login"], list(by))
        for name in by:
            self.assertEqual(by[name]["completed"], 20, by[name])
            self.assertEqual(by[name]["errors"], 0, by[name])
        # the steps after a sleep are due when the sleep ends: their latency
        # is a round trip on loopback, not the 60 ms before them
        self.assertLess(by["account"]["latency"]["p50_us"], 10000, by["account"])
        self.assertLess(by["again"]["latency"]["p50_us"], 10000, by["again"])
        lines = self.logged(since, 60)
        self.assertEqual(len(lines), 60)
        logins = [l for l in lines if l[1] == "/login"]
        self.assertEqual(len(logins), 20)
        self.assertTrue(all(l[0] == "POST" and l[3] == '{"user":"ada"}' for l in logins), logins)
        self.assertEqual(sum(1 for l in lines if l[:2] == ("GET", "/account")), 40)
        self.assertEqual(run.json["plan"]["script"]["mode"], "session")
        # the summary has the sessions' table: 20 started, 20 completed, 60 steps
        self.assertRegex(run.stdout, r"\n  Sessions\n  Started .*\n +20 +20 +0 +0 +0 +60 +100\.00%")

    def test_session_segments_merge(self):
        """Two segments of a session run (--segment K/2, half the rate
        each) merge exactly: the sessions' counts add, their durations'
        histograms add, and the steps by name add."""
        s = self.script("session.lua", SESSION)
        segs = []
        for k in range(2):
            run = self.run_ok([url("/"), "-s", s, "-r", 20, "-d", "1s", "--drain", "2s",
                               "--segment", "%d/2" % k])
            segs.append(run)
        out = os.path.join(self.dir, "merged.json")
        merged = harness.run_pacer([segs[0].out_path, segs[1].out_path, "-o", out],
                                   subcommand="merge")
        self.assertEqual(merged.code, 0, describe(merged))
        m = merged.json["measure"]
        parts = [r.json["measure"] for r in segs]
        for key in ("started", "completed", "failed", "abandoned", "dropped", "steps"):
            self.assertEqual(m["sessions"][key], sum(p["sessions"][key] for p in parts), key)
        self.assertEqual(m["sessions"]["started"], 20)
        self.assertEqual(m["sessions"]["completed_pct"], 100.0)
        self.assertEqual(m["sessions"]["duration"]["count"],
                         sum(p["sessions"]["duration"]["count"] for p in parts))
        by = {e["name"]: e for e in m["by_name"]}
        for name in ("login", "account", "again"):
            self.assertEqual(by[name]["completed"], 20, by[name])
            self.assertEqual(by[name]["latency"]["count"], 20, by[name])

    def test_request_and_response_http2(self):
        """wrk's hooks over HTTP/2 (h2c to pacer serve): request()'s
        HTTP/1.1 bytes become a stream's fields, response() gets the
        header fields (lower case, found by any case) and the body."""
        s = self.script("h2.lua", """
n = 0
seen = 0
function request()
  n = n + 1
  return wrk.format("GET", "/?n=" .. n)
end
function response(status, headers, body)
  if status == 200 and headers["Content-Type"] and #body > 0 then seen = seen + 1 end
end
local threads = {}
function setup(t) table.insert(threads, t) end
function done(summary)
  io.write(string.format("seen %d of %d\\n", threads[1]:get("seen"), summary.requests))
end
""")
        with harness.PacerServe("hello", extra=("--h2c",)) as srv:
            run = self.run_ok([srv.url("/"), "-s", s, "--h2c", "-n", 200, "--concurrency", 4])
        self.assertIn("seen 200 of 200\n", run.stdout, describe(run))
        h2 = self.phase(run)["http2"]
        self.assertGreater(h2["connections_h2"], 0, h2)
        sc = run.json["plan"]["script"]
        self.assertTrue(sc["response_headers"] and sc["response_body"], sc)

    def test_session_http2(self):
        """The same session machinery over HTTP/2 (h2c to pacer serve): each
        step's response body reaches the next step, every session completes."""
        s = self.script("session_h2.lua", """
pacer.session(function(s)
  local status, headers, body = s:get("/", {name = "first"})
  if status ~= 200 or #body == 0 then s:fail() end
  s:sleep("10ms")
  s:get("/?len=" .. #body, {name = "second"})
end)
""")
        with harness.PacerServe("hello", extra=("--h2c",)) as srv:
            run = self.run_ok([srv.url("/"), "-s", s, "--h2c", "-r", 40, "-d", "1s",
                               "--drain", "2s"])
        ph = self.phase(run)
        ss = ph["sessions"]
        self.assertEqual((ss["started"], ss["completed"], ss["steps"]), (40, 40, 80), ss)
        by = {e["name"]: e for e in ph["by_name"]}
        self.assertEqual((by["first"]["completed"], by["second"]["completed"]), (40, 40), by)
        self.assertLess(by["second"]["latency"]["p50_us"], 5000, by["second"])
        h2 = ph["http2"]
        self.assertGreater(h2["connections_h2"], 0, h2)
        self.assertEqual(h2["connections_h1"], 0, h2)

    def test_thread_addr(self):
        """setup() moves each thread with thread.addr (an address from
        wrk.lookup): the URL names one server, the requests go to the
        other, with and without request()."""
        for extra in ("", "function request() return wrk.format(nil, '/moved') end\n"):
            s = self.script("addr.lua", (
                "function setup(thread)\n"
                "  local addrs = wrk.lookup('127.0.0.1', '%d')\n"
                "  assert(wrk.connect(addrs[1]))\n"
                "  thread.addr = addrs[1]\n"
                "end\n" % _ports["api"]) + extra)
            since = self.mark()
            run = self.run_ok([self.ngx.url("/moved"), "-s", s, "-n", 30, "--concurrency", 2,
                               "-t", 2])
            self.assertEqual(self.completed(run), 30, describe(run))
            lines = self.logged(since, 30)
            self.assertEqual([l[1] for l in lines], ["/moved"] * 30, extra)
            self.assertEqual(run.json["plan"]["script"]["mode"], "wrk" if extra else "static")

    def test_thread_stop(self):
        """thread:stop() ends that thread's requests: 10 a thread, however
        long the run."""
        s = self.script("stop.lua", "n = 0\nfunction request()\n  n = n + 1\n"
                        "  if n == 10 then wrk.thread:stop() end\n  return wrk.format()\nend\n")
        since = self.mark()
        run = self.run_ok([url("/"), "-s", s, "-r", 200, "-d", "1s", "-t", 2])
        self.assertEqual(self.completed(run), 20, describe(run))
        self.assertEqual(len(self.logged(since, 20)), 20)

    def test_delay(self):
        """delay() is think time in closed loop (10 requests one after the
        other, 50 ms before each), and not called in open loop, which says
        so once."""
        s = self.script("delay.lua", "function delay() return 50 end\n")
        run = self.run_ok([url("/"), "-s", s, "-n", 10, "--concurrency", 1])
        self.assertEqual(self.completed(run), 10, describe(run))
        self.assertGreaterEqual(self.phase(run)["duration_s"], 0.45, describe(run))
        self.assertFalse(run.json["plan"]["script"]["delay_ignored"])
        run = self.run_ok([url("/"), "-s", s, "-r", 100, "-d", "0.5s"])
        self.assertTrue(run.json["plan"]["script"]["delay_ignored"])
        self.assertIn("delay.lua defines delay(): in open loop the schedule decides", run.stderr)
        self.assertLess(self.phase(run)["latency"]["p50_us"], 40000, describe(run))

    def test_ramp_and_compare(self):
        """The same script under ramp (done() once per step, labelled with
        its rate; the log's count is what the steps sent) and compare
        (each variant runs it in states of its own)."""
        s = self.script("ramp.lua", COUNTER + """
function done(summary, latency, requests)
  io.write(string.format("step %s: %d requests\\n", summary.label or "?", summary.requests))
end
""")
        since = self.mark()
        run = self.run_ok([url("/"), "-s", s, "--steps", "50,100", "--step-duration", "1s",
                           "--step-warmup", "0.2s", "-t", 2], subcommand="ramp")
        steps = run.json["steps"]
        self.assertEqual([st["offered_per_s"] for st in steps], [50, 100])
        for st in steps:
            self.assertIn("step %g/s: %d requests\n" % (st["offered_per_s"],
                                                          st["measure"]["requests"]["completed"]),
                          run.stdout, describe(run))
        sent = sum(st["measure"]["requests"]["sent"] + st["warmup"]["requests"]["sent"]
                   for st in steps)
        lines = self.logged(since, sent)
        self.assertEqual(len(lines), sent)
        self.check_counter(lines, 2)  # the counters go on from step to step
        since = self.mark()
        run = self.run_ok(["--variant", "A=" + url("/"), "--variant", "B=" + url("/"), "-s", s,
                           "-r", 50, "-d", "0.5s", "--repeat", 2], subcommand="compare")
        for v in run.json["variants"]:
            self.assertEqual(v["script"]["mode"], "wrk", v["name"])
            # done() once per variant, labelled with its name, with its
            # repetitions' requests together
            done = sum(r["completed"] for r in v["repetitions"])
            self.assertEqual(run.stdout.count("step %s: " % v["name"]), 1, describe(run))
            self.assertIn("step %s: %d requests\n" % (v["name"], done), run.stdout)
        self.assertGreater(len(self.logged(since)), 0)

    def test_compare_sessions(self):
        """compare with a session script: each variant's sessions and steps
        (its repetitions pooled) in the result, the summary's Sessions
        table (a row a variant, then its steps) and the Markdown report;
        done() once per variant; the history keeps the baseline's sessions
        as a compare's headline."""
        s = self.script("cmp_session.lua", SESSION + """
function done(summary, latency, requests)
  io.write(string.format("done %s: %d requests\\n", summary.label, summary.requests))
end
""")
        since = self.mark()
        out = os.path.join(self.dir, "cmp_session.json")
        db = os.path.join(self.dir, "cmp_session.db")
        run = self.run_ok(["--variant", "A=" + url("/"), "--variant", "B=" + url("/"), "-s", s,
                           "-r", 10, "-d", "1s", "-w", "0s", "--drain", "2s", "--repeat", 2,
                           "-o", out, "--history", db], subcommand="compare")
        steps_logged = 0
        for v in run.json["variants"]:
            ss = v["sessions"]
            # 10/s for 1 s, twice: 20 sessions of 3 steps each
            self.assertEqual((ss["started"], ss["completed"], ss["failed"], ss["abandoned"]),
                             (20, 20, 0, 0), v["name"])
            self.assertEqual(ss["steps"], 60)
            self.assertEqual(ss["duration"]["count"], 20)
            by = {e["name"]: e for e in v["by_name"]}
            self.assertEqual(sorted(by), ["account", "again", "login"])
            for e in by.values():
                self.assertEqual((e["completed"], e["errors"]), (20, 0), e)
            self.assertEqual(sum(r["completed"] for r in v["repetitions"]), 60)
            self.assertIn("done %s: 60 requests\n" % v["name"], run.stdout, describe(run))
            steps_logged += ss["steps"]
        self.assertEqual(len(self.logged(since, steps_logged)), steps_logged)
        self.assertRegex(run.stdout, r"Sessions: sums over repetitions\n  Variant +Started .*\n"
                                     r"  A +20 +20 +0 +0 +0 +60 +100\.00%.*\n"
                                     r"  B +20 +20 +0 +0 +0 +60 +100\.00%")
        self.assertRegex(run.stdout, r"\n  A +login +20 +0 ")
        self.assertRegex(run.stdout, r"\n  B +again +20 +0 ")
        md = harness.run_pacer([out, "--format", "md"], subcommand="report", out=False)
        self.assertEqual(md.code, 0, describe(md))
        self.assertIn("Sessions: sums over repetitions", md.stdout)
        self.assertRegex(md.stdout, r"\| B +\| +20 +\| +20 +\|")
        con = sqlite3.connect(db)
        try:
            row = con.execute("SELECT kind, sessions_started, sessions_completed FROM runs"
                              ).fetchone()
            steps = [r[0] for r in con.execute("SELECT name FROM steps ORDER BY seq")]
        finally:
            con.close()
        self.assertEqual(row, ("compare", 20, 20))
        self.assertEqual(sorted(steps), ["account", "again", "login"])

    # -- HTTP/3

    def test_http3_counter_response_done(self):
        """wrk's hooks over HTTP/3: request()'s paths reach caddy exactly
        (its access log: each thread's /tID/1..n once, GET, HTTP/3.0, as
        many as completed), response() sees each status, header and body,
        done() reads the threads' counts."""
        caddy = self.h3()
        s = self.script("h3.lua", COUNTER + """
seen = 0
function response(status, headers, body)
  if status == 200 and headers["Server"] == "Caddy" and body == "hello" then seen = seen + 1 end
end
local threads = {}
local setup0 = setup
function setup(t) setup0(t); table.insert(threads, t) end
function done(summary, latency)
  local n = 0
  for _, t in ipairs(threads) do n = n + t:get("seen") end
  io.write(string.format("seen %d of %d, p50 %s\\n", n, summary.requests,
                         tostring(latency:percentile(50) > 0)))
end
""")
        since = caddy.log_mark()
        run = self.run_ok([caddy.url("/"), "--http3", "--insecure", "-s", s, "-n", 300,
                           "--concurrency", 2, "-t", 2])
        ph = self.phase(run)
        self.assertEqual(self.completed(run), 300, describe(run))
        self.assertIn("seen 300 of 300, p50 true\n", run.stdout, describe(run))
        logged = caddy.entries(since)
        self.assertEqual(len(logged), 300, describe(run))
        self.assertEqual({e["request"]["proto"] for e in logged}, {"HTTP/3.0"})
        self.check_counter([(e["request"]["method"], e["request"]["uri"], "", "")
                            for e in logged], 2)
        self.assertGreater(ph["http3"]["connections_h3"], 0, ph["http3"])
        self.assertEqual(run.json["plan"]["script"]["mode"], "wrk")

    def test_http3_post_bodies(self):
        """A request() that makes a JSON POST body each call, over HTTP/3:
        caddy logs each as POST over HTTP/3.0, and nginx behind it gets the
        bodies exactly as made (1..n once each, Content-Type as set)."""
        caddy = self.h3()
        s = self.script("h3post.lua", POST_REQUEST)
        since, csince = self.mark(), caddy.log_mark()
        out = os.path.join(self.dir, "h3post.json")
        run = self.run_ok([caddy.url("/"), "--http3", "--insecure", "-s", s, "-r", 100, "-d",
                           "1s", "-o", out, "--limited-ok", "--", "h3", "x"])
        n = self.completed(run)
        self.assertGreater(n, 50, describe(run))
        logged = caddy.entries(csince)
        self.assertEqual(len(logged), run.json["measure"]["requests"]["sent"])
        self.assertEqual({(e["request"]["method"], e["request"]["uri"], e["request"]["proto"])
                          for e in logged}, {("POST", "/api/item", "HTTP/3.0")})
        lines = self.logged(since, n)
        self.assertEqual(len(lines), n)
        ids = []
        for method, uri, ctype, body in lines:
            self.assertEqual((method, uri, ctype), ("POST", "/api/item", "application/json"))
            doc = json.loads(body)
            self.assertEqual(doc["tag"], "h3-x")
            ids.append(doc["id"])
        self.assertEqual(sorted(ids), list(range(1, n + 1)))

    def test_http3_session(self):
        """The login session over HTTP/3: caddy proxies /login and
        /account to nginx; the token from the login's body reaches the
        next two steps (nginx answers 401 without it), every session
        completes, and caddy logged 20 POST /login and 40 GET /account,
        all HTTP/3.0 and 200."""
        caddy = self.h3()
        s = self.script("session.lua", SESSION)
        csince = caddy.log_mark()
        run = self.run_ok([caddy.url("/"), "--http3", "--insecure", "-s", s, "-r", 20, "-d",
                           "1s", "--drain", "3s"])
        ph = self.phase(run)
        ss = ph["sessions"]
        self.assertEqual((ss["started"], ss["completed"], ss["failed"], ss["abandoned"],
                          ss["steps"]), (20, 20, 0, 0, 60), ss)
        by = {e["name"]: e for e in ph["by_name"]}
        for name in ("login", "account", "again"):
            self.assertEqual((by[name]["completed"], by[name]["errors"]), (20, 0), by[name])
        logged = caddy.entries(csince)
        got = sorted((e["request"]["method"], e["request"]["uri"], e["request"]["proto"],
                      e["status"]) for e in logged)
        self.assertEqual(got, sorted([("POST", "/login", "HTTP/3.0", 200)] * 20 +
                                     [("GET", "/account", "HTTP/3.0", 200)] * 40))
        self.assertGreater(ph["http3"]["connections_h3"], 0, ph["http3"])

    # -- bad scripts

    def bad(self, text, args=("-r", 200, "-d", "2s"), name="bad.lua"):
        s = self.script(name, text)
        since = self.mark()
        run = harness.run_pacer([url("/"), "-s", s] + list(args), timeout=30)
        self.assertFalse(run.timed_out, describe(run))
        self.assertEqual(run.code, 2, describe(run))
        err = [l for l in run.stderr.split("\n") if l.startswith("pacer run: ")]
        self.assertEqual(len(err), 1, describe(run))
        return run, err[0], self.logged(since)

    def test_compile_error_before_load(self):
        run, err, lines = self.bad("request = function()\n  return wrk.format('GET', '/x'\nend\n")
        self.assertRegex(err, r"bad\.lua:3: '\)' expected")
        self.assertEqual(lines, [])
        self.assertIsNone(run.json)

    def test_init_error_before_load(self):
        run, err, lines = self.bad("function init(args)\n  error('no ' .. args[0])\nend\n")
        self.assertIn("bad.lua:2: in init(): no " + url("/"), err)
        self.assertEqual(lines, [])

    def check_stopped(self, run, err, lines, where):
        self.assertIn(where, err)
        self.assertIn("the load stopped there", err)
        self.assertTrue(run.json["interrupted"], describe(run))
        # what was measured is kept: the requests before the failure
        self.assertGreaterEqual(self.completed(run), 10, describe(run))
        self.assertLess(run.elapsed_s, 10)
        return err

    def test_error_in_request_stops_load(self):
        run, err, lines = self.bad(
            "n = 0\nfunction request()\n  n = n + 1\n  if n > 40 then error('boom ' .. n) end\n"
            "  return wrk.format()\nend\n")
        self.check_stopped(run, err, lines, "bad.lua:4: in request(): boom 41")
        self.assertEqual(len(lines), 40)

    def test_error_in_response_stops_load(self):
        run, err, lines = self.bad(
            "n = 0\nfunction response(status)\n  n = n + 1\n"
            "  if n == 20 then local x = nil; return x.y end\nend\n")
        self.check_stopped(run, err, lines, "bad.lua:4: in response(): attempt to index local 'x'")

    def test_non_string_request(self):
        run, err, lines = self.bad(
            "n = 0\nfunction request()\n  n = n + 1\n  if n > 30 then return {} end\n"
            "  return wrk.format()\nend\n")
        self.check_stopped(run, err, lines,
                           "bad.lua:2: in request(): it returned table, not a request")

    def test_endless_loop(self):
        run, err, lines = self.bad(
            "n = 0\nfunction request()\n  n = n + 1\n  while n > 30 do end\n"
            "  return wrk.format()\nend\n",
            args=("-r", 200, "-d", "2s", "--script-timeout", "50ms"))
        self.check_stopped(run, err, lines,
                           "bad.lua:4: in request(): still running after 50 ms")

    def test_memory_cap(self):
        run, err, lines = self.bad(
            "n = 0\nt = {}\nfunction request()\n  n = n + 1\n"
            "  while n > 30 do t[#t + 1] = string.rep('x', 65536) .. #t end\n"
            "  return wrk.format()\nend\n",
            args=("-r", 200, "-d", "2s", "--script-memory", "16MiB"))
        # the line that allocated (5), or, when the allocator refused a
        # large block at once (no handler runs then), where request() begins
        self.check_stopped(run, err, lines,
                           "in request(): the script's Lua state ran out of memory")
        self.assertRegex(err, r"bad\.lua:[35]: in request\(\)")

    # -- honest latency

    def test_request_time_is_pacer_lag(self):
        s = self.script("slow.lua", SLOW_REQUEST)
        run = self.run_ok([url("/"), "-s", s, "-r", 200, "-d", "1s"])
        lag = run.json["measure"]["send_lag"]
        self.assertGreaterEqual(lag["p50_us"], 3000, lag)


if __name__ == "__main__":
    harness.run_suite()
