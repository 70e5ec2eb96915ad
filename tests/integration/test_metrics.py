"""Live metrics (--metrics-listen, docs/metrics.md) against real tools.

One 20 s open-loop run at 1000 req/s of the embedded target, serving
/metrics on a free loopback port, is scraped three ways while it runs:

- by this test, in the text format: Debian's `promtool check metrics` must
  pass on it, and its figures must hold together (sent <= scheduled,
  histogram count = its +Inf bucket, responses by class = completed); every
  sample carries the run and scenario labels, pacer_build_info names the
  binary (`pacer --version`), and the errors are in two families, per
  request and per connection (issue 30);
- by this test with an OpenMetrics Accept header: the content type and the
  closing "# EOF";
- by a real Prometheus server started here on loopback (temp config and data
  dir, scrape_interval 1s, stopped by PID), whose HTTP API must then give a
  rate(pacer_requests_completed_total[10s]) inside the measured phase equal
  to pacer's own achieved rate within 5 %.

Before that, the refusals: a non-loopback address without
--metrics-listen-any and a bad port are usage errors (exit 2) naming the
value, and a port already in use fails the command (exit 3) before any load.

PrometheusRampTest (issue 30): a 3-step ramp scraped by Prometheus every
50 ms; the p99 of each step's measured responses, by histogram_quantile
over the difference of two scrapes, is within 3 % of the step's p99 in the
JSON result, and counts exactly its responses.

HostileScrapersTest (issue 32 item 5): scrapers that trickle their request
a byte every 1.5 s, many idle connections, a scraper that never reads its
answer. None delays pacer's end by more than the stated bound (1 s past
the same run without them), the JSON is written, a real scrape among them
is still answered, and Ctrl-C still ends the run at once.
"""

import http.client
import json
import os
import re
import shutil
import sys
import signal
import socket
import subprocess
import tempfile
import threading
import time
import unittest
import urllib.parse
import urllib.request

import harness
from harness import PacerTestCase

RATE = 1000
DURATION_S = 20
SCRAPE_AT_S = 4.0     # our own scrapes, after pacer's start
QUERY_AT_S = 16.0     # Prometheus' rate over [QUERY_AT_S - 10, QUERY_AT_S] of the run
PROMETHEUS = shutil.which("prometheus") or "/usr/bin/prometheus"
PROMTOOL = shutil.which("promtool") or "/usr/bin/promtool"


def http_get(port, path, headers=None, method="GET"):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    try:
        c.request(method, path, headers=headers or {})
        r = c.getresponse()
        return r.status, dict((k.lower(), v) for k, v in r.getheaders()), r.read().decode()
    finally:
        c.close()


RUN_LABELS = re.compile(r'run="([^"]+)",scenario="([^"]+)",?')


def samples(text, scenario="run", run=None):
    """{'name{labels}': float} of an exposition, without the run and scenario
    labels that every sample carries (asserted here: one run id, that one if
    given, and the given scenario)."""
    out = {}
    runs = set()
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        key, val = line.rsplit(" ", 1)
        m = RUN_LABELS.search(key)
        assert m and m.group(2) == scenario, line
        runs.add(m.group(1))
        key = RUN_LABELS.sub("", key).replace("{}", "")
        out[key] = float(val)
    assert len(runs) == 1 and (run is None or runs == {run}), (runs, run)
    return out


class Prometheus:
    """A Prometheus server on 127.0.0.1 scraping one target each interval."""

    def __init__(self, target_port, interval="1s"):
        self.dir = tempfile.mkdtemp(prefix="pacer-prom-")
        self.port = harness.free_port()
        with open(os.path.join(self.dir, "prometheus.yml"), "w") as f:
            f.write("global:\n  scrape_interval: %s\n  scrape_timeout: %s\n"
                    "  evaluation_interval: 1s\n" % (interval, interval) +
                    "scrape_configs:\n  - job_name: pacer\n    static_configs:\n"
                    "      - targets: ['127.0.0.1:%d']\n" % target_port)
        self.log = open(os.path.join(self.dir, "log"), "wb")
        self.proc = subprocess.Popen(
            [PROMETHEUS, "--config.file=" + os.path.join(self.dir, "prometheus.yml"),
             "--storage.tsdb.path=" + os.path.join(self.dir, "data"),
             "--web.listen-address=127.0.0.1:%d" % self.port, "--log.level=warn"],
            stdin=subprocess.DEVNULL, stdout=self.log, stderr=self.log)
        harness._register(self.proc)
        deadline = time.monotonic() + 15
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError("prometheus exited: " + self.log_text())
            try:
                if http_get(self.port, "/-/ready")[0] == 200:
                    break
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError("prometheus not ready: " + self.log_text())
            time.sleep(0.05)

    def wait_scraping(self, timeout=20):
        """Until the first scrape was tried (up exists, 0 while nothing
        listens): Prometheus applies new targets only every 5 s, so a run
        started at once would go unseen for its first seconds."""
        deadline = time.monotonic() + timeout
        while not self.api("/api/v1/query", query="up")["result"]:
            if time.monotonic() > deadline:
                raise RuntimeError("prometheus scraped nothing: " + self.log_text())
            time.sleep(0.1)

    def log_text(self):
        self.log.flush()
        with open(os.path.join(self.dir, "log"), "rb") as f:
            return f.read().decode(errors="replace")[-2000:]

    def api(self, path, **params):
        url = "http://127.0.0.1:%d%s?%s" % (self.port, path, urllib.parse.urlencode(params))
        with urllib.request.urlopen(url, timeout=5) as r:
            doc = json.load(r)
        assert doc["status"] == "success", doc
        return doc["data"]

    def stop(self):
        harness.stop_process(self.proc)
        self.log.close()
        shutil.rmtree(self.dir, True)


class BuildInfoCheck:
    def assert_build_info(self, s, run):
        """pacer_build_info (in samples s) is 1 with the version and commit
        of `pacer --version` and of the run's JSON. (The Makefile does not
        rebuild an object when only the commit changed, so a tree built
        across commits may hold several: the commit is compared only when
        --version and the JSON agree, and a tree where src/cli/run_hooks.o
        alone was rebuilt since still fails here; rebuild it whole.)"""
        out = subprocess.run([harness.pacer_bin(), "--version"], capture_output=True,
                             text=True, timeout=10).stdout.split()
        keys = [k for k in s if k.startswith("pacer_build_info")]
        self.assertEqual(len(keys), 1, keys)
        self.assertEqual(s[keys[0]], 1)
        m = re.fullmatch(r'pacer_build_info\{version="([^"]*)",commit="([^"]*)"\}', keys[0])
        self.assertTrue(m, keys)
        self.assertEqual(m.group(1), out[1])
        self.assertEqual(m.group(1), run.json["pacer"]["version"])
        self.assertRegex(m.group(2), r"^([0-9a-f]{12}|unknown)$")
        if out[3].rstrip(")") == run.json["pacer"]["commit"]:  # a consistent build
            self.assertEqual(m.group(2), run.json["pacer"]["commit"])


class MetricsTest(BuildInfoCheck, PacerTestCase):
    def test_refusals(self):
        for value, msg in (("0.0.0.0:9100", "not a loopback address"),
                           ("127.0.0.1:70000", "expected a port")):
            run = harness.run_pacer(["--self-contained", "-r", "100", "-d", "1s",
                                     "--metrics-listen", value], timeout=20)
            self.assertEqual(run.code, 2, harness.describe(run))
            self.assertIn("--metrics-listen " + value + ": " + msg, run.stderr)
            self.assertEqual(run.stderr.count("\n"), 1, run.stderr)
        with socket.socket() as busy:
            busy.bind(("127.0.0.1", 0))
            busy.listen(1)
            port = busy.getsockname()[1]
            run = harness.run_pacer(["--self-contained", "-r", "100", "-d", "5s",
                                     "--metrics-listen", "127.0.0.1:%d" % port], timeout=20)
        self.assertEqual(run.code, 3, harness.describe(run))
        self.assertIn("--metrics-listen 127.0.0.1:%d: " % port, run.stderr)
        self.assertLess(run.elapsed_s, 3.0, "refused before the 5 s load")
        self.assertIsNone(run.json)

    def test_scrapes_and_prometheus_rate(self):
        for tool in (PROMETHEUS, PROMTOOL):
            self.assertTrue(os.access(tool, os.X_OK),
                            "%s missing (Debian package prometheus)" % tool)
        port = harness.free_port()
        prom = Prometheus(port)
        seen = {}

        def scrape(_pid):
            seen["text"] = http_get(port, "/metrics")
            seen["om"] = http_get(port, "/metrics", {
                "Accept": "application/openmetrics-text;version=1.0.0,text/plain;q=0.5"})
            seen["head"] = http_get(port, "/metrics", method="HEAD")
            seen["404"] = http_get(port, "/nothing")  # / is the live page

        try:
            t_start = time.time()
            run = self.run_ok(["--self-contained", "--rate", RATE, "--duration",
                               "%ds" % DURATION_S, "--metrics-listen", "127.0.0.1:%d" % port],
                              timeout=60, actions=[(SCRAPE_AT_S, scrape)])
            self.assertIn("metrics at http://127.0.0.1:%d/metrics" % port, run.stderr)
            # the run's id, which every sample carries
            rid = re.search(r'/metrics, live page at \S+ \(run="(\d{8}T\d{6}Z-\d+)"\)\n', run.stderr)
            self.assertTrue(rid, run.stderr)

            # our own text scrape: promtool, and figures that hold together
            status, hdr, body = seen["text"]
            self.assertEqual(status, 200)
            self.assertEqual(hdr["content-type"], "text/plain; version=0.0.4; charset=utf-8")
            chk = subprocess.run([PROMTOOL, "check", "metrics"], input=body.encode(),
                                 capture_output=True, timeout=20)
            self.assertEqual(chk.returncode, 0, chk.stdout + chk.stderr)
            s = samples(body, run=rid.group(1))
            completed = s["pacer_requests_completed_total"]
            self.assertGreater(completed, RATE * (SCRAPE_AT_S - 2))
            self.assertLessEqual(s["pacer_requests_sent_total"], s["pacer_requests_scheduled_total"])
            for ph in ("warmup", "measure"):
                self.assertEqual(s['pacer_latency_seconds_bucket{phase="%s",le="+Inf"}' % ph],
                                 s['pacer_latency_seconds_count{phase="%s"}' % ph])
            # no warm-up by default: every response was due in the measured phase
            self.assertEqual(s['pacer_latency_seconds_count{phase="warmup"}'], 0)
            self.assertGreater(s['pacer_latency_seconds_count{phase="measure"}'], 0)
            classes = sum(v for k, v in s.items() if k.startswith("pacer_responses_total"))
            self.assertAlmostEqual(classes, completed, delta=RATE * 0.05)
            self.assertEqual(s['pacer_phase{phase="measure"}'], 1)
            self.assertEqual(s["pacer_step"], 1)
            self.assertEqual(s["pacer_offered_rate_requests_per_second"], RATE)
            self.assertGreater(s["pacer_connections_open"], 0)
            self.assertGreater(s["pacer_generator_cpu_seconds_total"], 0)
            # the hypervisor's steal since the start: within the CPUs' wall time
            gen, mach = s['pacer_steal_seconds_total{cpus="generator"}'], \
                s['pacer_steal_seconds_total{cpus="machine"}']
            ncpu = s['pacer_steal_cpus{cpus="machine"}']
            self.assertEqual(ncpu, os.cpu_count())
            self.assertTrue(1 <= s['pacer_steal_cpus{cpus="generator"}'] <= ncpu, s)
            self.assertTrue(0 <= gen <= mach <= ncpu * (SCRAPE_AT_S + 5), (gen, mach))
            self.assertGreater(s["pacer_latency_recent_seconds_count"], 0)
            # the pacer serving them, and errors in two families (issue 30)
            self.assert_build_info(s, run)
            self.assertEqual(sorted(k for k in s if k.startswith("pacer_request_errors_total")),
                             ['pacer_request_errors_total{kind="%s"}' % k for k in sorted(
                                 ("read", "write", "timeout", "parse", "closed", "reset",
                                  "failed_response"))])
            self.assertEqual(sorted(k for k in s if k.startswith("pacer_connection_errors")),
                             ['pacer_connection_errors_total{kind="%s"}' % k
                              for k in ("connect", "protocol", "tls")])
            self.assertFalse([k for k in s if k.startswith("pacer_errors")])

            status, hdr, body = seen["om"]
            self.assertEqual(status, 200)
            self.assertTrue(hdr["content-type"].startswith("application/openmetrics-text; "
                                                           "version=1.0.0"), hdr)
            self.assertTrue(body.endswith("\n# EOF\n"), body[-200:])
            self.assertIn("# TYPE pacer_requests_completed counter\n", body)
            self.assertEqual(seen["head"][0], 200)
            self.assertEqual(seen["head"][2], "")
            self.assertEqual(seen["404"][0], 404)

            # Prometheus scraped the whole run (as OpenMetrics: it asks for it)
            targets = prom.api("/api/v1/targets")["activeTargets"]
            self.assertEqual(len(targets), 1, targets)
            # its last scrape may have come after pacer exited (refused):
            # every scrape inside the run succeeded
            t_query = "%.3f" % (t_start + QUERY_AT_S)
            up = prom.api("/api/v1/query", query="min_over_time(up[%ds])" % (QUERY_AT_S - 2),
                          time=t_query)
            self.assertEqual([r["value"][1] for r in up["result"]], ["1"], (up, targets))
            data = prom.api("/api/v1/query", query="rate(pacer_requests_completed_total[10s])",
                            time=t_query)
            self.assertEqual(len(data["result"]), 1, data)
            prom_rate = float(data["result"][0]["value"][1])
            ours = self.phase(run)["rate"]["achieved_per_s"]
            self.assertAlmostEqual(prom_rate, ours, delta=ours * 0.05,
                                   msg="Prometheus rate %.1f vs pacer %.1f" % (prom_rate, ours))
        finally:
            prom.stop()

# PrometheusRampTest: a ramp scraped by a real Prometheus, whose p99 per step
# must agree with pacer's own.
PLAN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "plans",
                    "prom_lognormal.yaml")
STEPS = (1000, 1500, 2000)     # req/s, 3 s measured after 1 s of warm-up each
SCRAPE_S = 0.05                # Prometheus' scrape interval
P99_TOLERANCE = 0.03           # issue 30: within 3 % of pacer's p99
# the exported buckets before issue 30: 1, 2.5 and 5 of each decade, 10 us .. 100 s
OLD_EDGES_S = [m * 10.0 ** e for e in range(-5, 2) for m in (1, 2.5, 5)] + [100.0]


def histogram_quantile(q, edges_s, values):
    """Prometheus' histogram_quantile over the samples `values` (seconds)
    counted into buckets with upper edges edges_s (and +Inf): linear inside
    the bucket holding rank q * count."""
    counts = [0] * (len(edges_s) + 1)
    for v, n in values:
        lo, hi = 0, len(edges_s)
        while lo < hi:  # the first edge >= v
            mid = (lo + hi) // 2
            if edges_s[mid] < v:
                lo = mid + 1
            else:
                hi = mid
        counts[lo] += n
    rank = q * sum(counts)
    cum = 0
    for i, c in enumerate(counts):
        if c and cum + c >= rank:
            if i == len(edges_s):
                return edges_s[-1]
            lo = edges_s[i - 1] if i else 0.0
            return lo + (edges_s[i] - lo) * (rank - cum) / c
        cum += c
    return float("nan")


class PrometheusRampTest(BuildInfoCheck, PacerTestCase):
    def test_ramp_p99_per_step(self):
        """A 3-step ramp (1000, 1500, 2000 req/s; 1 s warm-up, 3 s measured)
        of the embedded target with a lognormal latency (p50 2 ms, p99
        20 ms), scraped by Prometheus every 50 ms. For each step,
        Prometheus' p99 is

          histogram_quantile(0.99, sum by (le) (B - B offset D))

        with B = pacer_latency_seconds_bucket{run=...,phase="measure"},
        evaluated at t1 with D = t1 - t0: the responses counted between two
        scrapes, exactly (no rate() extrapolation, which would scale each
        bucket by a factor of its own). t0 is the first scrape that shows
        the step (pacer_step), still in its warm-up; t1 the first that
        shows the next step, whose measured phase has not begun, or the
        last scrape of all. The measure series counts only the responses
        due in a measured phase, so between t0 and t1 it gained exactly the
        step's measured responses: the window's count must equal the
        step's latency count in the JSON result (the last step: the
        endpoint stops with the load, so its last scrape may miss a few),
        and the only difference left between the two p99 is the buckets'.
        That p99 must be within 3 % of the step's p99 in the result. The
        labels of pacer_build_info name the run's pacer; the sum of
        pacer_request_errors_total is the JSON's errors. Figures (and what
        the buckets of before issue 30 would have given on the same step's
        latencies, from the result's histogram) go to stderr."""
        port = harness.free_port()
        prom = Prometheus(port, interval="%dms" % (SCRAPE_S * 1000))
        seen = {}
        prom.wait_scraping()

        def scrape(_pid):
            seen["text"] = http_get(port, "/metrics")

        try:
            run = self.run_ok(["--self-contained=" + PLAN, "/", "--steps",
                               ",".join(str(r) for r in STEPS), "--step-duration", "3s",
                               "--step-warmup", "1s", "--slo", "p99<1s",
                               "--metrics-listen", "127.0.0.1:%d" % port],
                              subcommand="ramp", timeout=90, actions=[(2.0, scrape)])
            steps = run.json["steps"]
            self.assertEqual([s["offered_per_s"] for s in steps], list(STEPS))

            # a scrape of the ramp passes promtool, labelled with the scenario
            status, _, body = seen["text"]
            self.assertEqual(status, 200)
            chk = subprocess.run([PROMTOOL, "check", "metrics"], input=body.encode(),
                                 capture_output=True, timeout=20)
            self.assertEqual(chk.returncode, 0, chk.stdout + chk.stderr)
            samples(body, scenario="ramp")

            # (the series ended with the run: asked for raw samples, not "now")
            info = prom.api("/api/v1/query", query="pacer_build_info[10m]")["result"]
            self.assertEqual(len(info), 1, info)
            lab = info[0]["metric"]
            self.assert_build_info({'pacer_build_info{version="%s",commit="%s"}'
                                    % (lab["version"], lab["commit"]): 1}, run)
            self.assertEqual(lab["scenario"], "ramp")
            sel = 'run="%s"' % lab["run"]

            # every scrape's step and phase, by its timestamp
            def raw(query):
                res = prom.api("/api/v1/query", query=query + "[10m]")["result"]
                self.assertEqual(len(res), 1, res)
                return {float(t): float(v) for t, v in res[0]["values"]}
            step_at = raw("pacer_step{%s}" % sel)
            times = sorted(step_at)
            self.assertGreater(len(times), 100, "scrapes of a ~16 s ramp every 50 ms")

            figures = []
            for n, st in enumerate(steps, 1):
                t0 = min(t for t in times if step_at[t] == n)
                later = [t for t in times if step_at[t] > n]
                t1 = later[0] if later else times[-1]
                d_ms = int(round((t1 - t0) * 1000))
                b = 'pacer_latency_seconds_bucket{%s,phase="measure"}' % sel
                q = "histogram_quantile(0.99, sum by (le) (%s - %s offset %dms))" % (b, b, d_ms)
                res = prom.api("/api/v1/query", query=q, time="%.3f" % t1)["result"]
                self.assertEqual(len(res), 1, (q, res))
                prom_p99 = float(res[0]["value"][1])
                ours = st["measure"]["latency"]["p99_us"] / 1e6
                bi = b.replace("}", ',le="+Inf"}')
                res = prom.api("/api/v1/query", query="%s - %s offset %dms" % (bi, bi, d_ms),
                               time="%.3f" % t1)["result"]
                count, want = float(res[0]["value"][1]), st["measure"]["latency"]["count"]
                if n < len(steps):
                    self.assertEqual(count, want, "step %d: the window's responses" % n)
                else:
                    self.assertTrue(0.95 * want <= count <= want, (count, want))
                err = prom_p99 / ours - 1
                # the same step's latencies (the result's histogram, 0.1 %)
                # in the old buckets and in the exported ones
                hist = [(v / 1e9, c) for v, c in st["measure"]["latency"]["hist"]["counts"]]
                les = sorted(float(r["metric"]["le"]) for r in prom.api(
                    "/api/v1/query", query=b, time="%.3f" % t1)["result"]
                    if r["metric"]["le"] != "+Inf")
                old = histogram_quantile(0.99, OLD_EDGES_S, hist) / ours - 1
                new = histogram_quantile(0.99, les, hist) / ours - 1
                figures.append((n, prom_p99, ours, err, old, new, count))
            for f in figures:
                print("prometheus p99, step %d: %.3f ms, pacer's %.3f ms: %+.2f %% "
                      "(buckets alone, on the result's latencies: before issue 30 %+.2f %%, "
                      "now %+.2f %%; %d responses)" % (f[0], f[1] * 1e3, f[2] * 1e3, f[3] * 100,
                                                       f[4] * 100, f[5] * 100, f[6]),
                      file=sys.stderr)
            for f in figures:
                self.assertLessEqual(abs(f[3]), P99_TOLERANCE,
                                     "step %d: Prometheus p99 %.3f ms vs pacer %.3f ms"
                                     % (f[0], f[1] * 1e3, f[2] * 1e3))
                self.assertLess(len(les), 600)

            # pacer's errors: the sum of the request errors (none here)
            last = "%.3f" % times[-1]
            errs = prom.api("/api/v1/query", time=last,
                            query="sum(pacer_request_errors_total{%s})" % sel)["result"]
            def total(e):
                return e["total"] if isinstance(e, dict) else e
            self.assertEqual(len(errs), 1, errs)
            self.assertEqual(float(errs[0]["value"][1]),
                             sum(total(s["measure"]["errors"]) + total(s["warmup"]["errors"])
                                 for s in steps))
        finally:
            prom.stop()


STOP_BOUND_S = 1.0  # docs/metrics.md: the endpoint delays the end by at most this


class Scrapers:
    """Hostile clients of a metrics port, each on a thread of its own:
    trickle (the request head a byte every 1.5 s), idle (connect, send
    nothing) and deaf (send a whole request, never read the answer, with a
    tiny receive buffer). Started at once by start(pid) (a run_pacer
    action), closed by close()."""

    def __init__(self, port, trickle=0, idle=0, deaf=0):
        self.port, self.n = port, (trickle, idle, deaf)
        self.socks, self.threads = [], []
        self.done = threading.Event()
        self.lock = threading.Lock()

    def _connect(self, rcvbuf=None):
        s = socket.socket()
        if rcvbuf:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
        s.settimeout(5)
        try:
            s.connect(("127.0.0.1", self.port))
        except OSError:
            s.close()
            return None
        with self.lock:
            self.socks.append(s)
        return s

    def _trickle(self):
        s = self._connect()
        req = b"GET /metrics HTTP/1.1\r\nHost: x\r\nX-Slow: " + b"a" * 4000 + b"\r\n\r\n"
        for i in range(len(req)):
            if not s or self.done.wait(1.5 if i else 0):
                return
            try:
                s.send(req[i:i + 1])
            except OSError:  # closed by pacer: connect again, as a scraper would
                s = self._connect()

    def _deaf(self):
        s = self._connect(rcvbuf=1024)
        if s:
            try:
                s.send(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
            except OSError:
                pass

    def start(self, _pid=None):
        trickle, idle, deaf = self.n
        for _ in range(idle):
            self._connect()
        for fn, k in ((self._trickle, trickle), (self._deaf, deaf)):
            for _ in range(k):
                t = threading.Thread(target=fn, daemon=True)
                t.start()
                self.threads.append(t)

    def close(self):
        self.done.set()
        for t in self.threads:
            t.join(5)
        with self.lock:
            for s in self.socks:
                s.close()


class HostileScrapersTest(PacerTestCase):
    def run_with(self, scrapers=None, port=None, actions=(), duration="2s", code=0):
        port = port or harness.free_port()
        args = ["--self-contained", "--rate", 200, "--duration", duration,
                "--metrics-listen", "127.0.0.1:%d" % port]
        acts = list(actions)
        if scrapers:
            acts.append((0.3, scrapers.start))
        try:
            return self.run_ok(args, code=code, timeout=60, actions=acts)
        finally:
            if scrapers:
                scrapers.close()

    def baseline_s(self):
        """The same run without scrapers: its wall time."""
        if not hasattr(HostileScrapersTest, "_baseline"):
            HostileScrapersTest._baseline = self.run_with().elapsed_s
        return HostileScrapersTest._baseline

    def assert_within_bound(self, run, what):
        base = self.baseline_s()
        # the bound, plus room for this shared machine's noise
        self.assertLess(run.elapsed_s, base + STOP_BOUND_S + 0.5,
                        "%s held pacer: %.1f s against %.1f s without them\n%s"
                        % (what, run.elapsed_s, base, harness.describe(run)))

    def test_trickling_scrapers(self):
        """The issue's scraper (a byte every 1.5 s), four of them: a 2 s run
        exited at 30.9 s (the old server read a head until it was complete,
        2 s at most per byte); now the run ends as it does without them."""
        port = harness.free_port()
        run = self.run_with(Scrapers(port, trickle=4), port=port)
        self.assert_within_bound(run, "trickling scrapers")
        self.assertFalse(run.json["interrupted"])

    def test_many_idle_scrapers_and_a_real_one(self):
        """50 idle connections (the old server answered one connection at a
        time, 2 s each): a real scrape among them is answered within 1 s,
        and the run ends in time."""
        port = harness.free_port()
        seen = {}

        def scrape(_pid):
            t0 = time.monotonic()
            try:
                seen["status"] = http_get(port, "/metrics")[0]
            except OSError as e:
                seen["status"] = repr(e)
            seen["took"] = time.monotonic() - t0

        run = self.run_with(Scrapers(port, idle=50), port=port, actions=[(1.0, scrape)])
        self.assert_within_bound(run, "idle scrapers")
        self.assertEqual(seen.get("status"), 200, seen)
        self.assertLess(seen["took"], 1.0, seen)

    def test_deaf_scrapers(self):
        """Scrapers that send their request and never read the answer (a
        guard: the kernel took the old server's small answers whole)."""
        port = harness.free_port()
        run = self.run_with(Scrapers(port, deaf=20), port=port)
        self.assert_within_bound(run, "scrapers that never read")

    def test_ctrl_c_with_trickling_scrapers(self):
        """SIGINT 1.5 s into a 20 s run, trickling scrapers connected:
        pacer ends within the bound of the signal, exit 130,
        its JSON written and marked interrupted (before: the signal was
        not looked at until the metrics thread let go, and the run died
        without a JSON)."""
        port = harness.free_port()
        times = {}

        def interrupt(pid):
            times["int"] = time.monotonic()
            os.kill(pid, signal.SIGINT)

        t0 = time.monotonic()
        run = self.run_with(Scrapers(port, trickle=4), port=port, duration="20s",
                            actions=[(1.5, interrupt)], code=130)
        after = t0 + run.elapsed_s - times["int"]
        self.assertLess(after, STOP_BOUND_S + 1.0, "pacer ended %.1f s after SIGINT" % after)
        self.assertTrue(run.json["interrupted"])


if __name__ == "__main__":
    unittest.main()
