"""Live metrics (--metrics-listen, docs/metrics.md) against real tools.

One 20 s open-loop run at 1000 req/s of the embedded target, serving
/metrics on a free loopback port, is scraped three ways while it runs:

- by this test, in the text format: Debian's `promtool check metrics` must
  pass on it, and its figures must hold together (sent <= scheduled,
  histogram count = its +Inf bucket, responses by class = completed);
- by this test with an OpenMetrics Accept header: the content type and the
  closing "# EOF";
- by a real Prometheus server started here on loopback (temp config and data
  dir, scrape_interval 1s, stopped by PID), whose HTTP API must then give a
  rate(pacer_requests_completed_total[10s]) inside the measured phase equal
  to pacer's own achieved rate within 5 %.

Before that, the refusals: a non-loopback address without
--metrics-listen-any and a bad port are usage errors (exit 2) naming the
value, and a port already in use fails the command (exit 3) before any load.
"""

import http.client
import json
import os
import shutil
import socket
import subprocess
import tempfile
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


def samples(text):
    """{'name{labels}': float} of an exposition."""
    out = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        key, val = line.rsplit(" ", 1)
        out[key] = float(val)
    return out


class Prometheus:
    """A Prometheus server on 127.0.0.1 scraping one target each second."""

    def __init__(self, target_port):
        self.dir = tempfile.mkdtemp(prefix="pacer-prom-")
        self.port = harness.free_port()
        with open(os.path.join(self.dir, "prometheus.yml"), "w") as f:
            f.write("global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n"
                    "  evaluation_interval: 1s\n"
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


class MetricsTest(PacerTestCase):
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
            seen["404"] = http_get(port, "/")

        try:
            t_start = time.time()
            run = self.run_ok(["--self-contained", "--rate", RATE, "--duration",
                               "%ds" % DURATION_S, "--metrics-listen", "127.0.0.1:%d" % port],
                              timeout=60, actions=[(SCRAPE_AT_S, scrape)])
            self.assertIn("metrics at http://127.0.0.1:%d/metrics" % port, run.stderr)

            # our own text scrape: promtool, and figures that hold together
            status, hdr, body = seen["text"]
            self.assertEqual(status, 200)
            self.assertEqual(hdr["content-type"], "text/plain; version=0.0.4; charset=utf-8")
            chk = subprocess.run([PROMTOOL, "check", "metrics"], input=body.encode(),
                                 capture_output=True, timeout=20)
            self.assertEqual(chk.returncode, 0, chk.stdout + chk.stderr)
            s = samples(body)
            completed = s["pacer_requests_completed_total"]
            self.assertGreater(completed, RATE * (SCRAPE_AT_S - 2))
            self.assertLessEqual(s["pacer_requests_sent_total"], s["pacer_requests_scheduled_total"])
            self.assertEqual(s['pacer_latency_seconds_bucket{le="+Inf"}'],
                             s["pacer_latency_seconds_count"])
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


if __name__ == "__main__":
    unittest.main()
