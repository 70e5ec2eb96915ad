"""The distributed path end to end with real containers (docs/distributed.md):
the image built as `make image` builds it (its base from Debian's archive by
debootstrap, cached), a target container (pacer serve) and three segment
containers on an internal podman network, each addressed by name as a pod
of the Indexed Job is (JOB-INDEX.SUBDOMAIN, from /etc/hosts: see
container()), started by segment 0's barrier;
segment 2 held back 8 s, so it misses the start and is counted and named.
The results are collected twice, from `podman logs` (stdout and stderr
mixed, as kubectl logs gives them) and from segment 0, which merged the
handed-in results; both equal one unsegmented run of the same plan in every
count, and their percentiles are those of the segments' histograms pooled.

Skips, saying why, only where podman cannot run containers. Leaves no
container, network, image or firewall rule behind (the cached base stays).
The figures (segments, counts, time from start to merged result, image
size, build time) are printed and written to $PACER_E2E_FIGURES when set."""

import json
import math
import os
import re
import shutil
import subprocess
import tempfile
import time
import unittest

import harness
from harness import PacerTestCase
from test_distributed import frames

REPO = harness.REPO
CONF = os.path.join(REPO, "scripts", "containers.conf")
NAME = "pacer-e2e-%d" % os.getpid()      # every container and network of the test
JOB = "pacer-e2e"                         # the Job's name: pod K is JOB-K.JOB
RATE, DURATION, LATENCY_MS = 300, 3, 20
# 30 connections: RATE x 20 ms is 6 requests in flight on average, so
# the target is far from saturated and latency is its 20 ms plus the path's
PLAN = ["http://target:8080/", "--rate", str(RATE), "--duration", "%ds" % DURATION,
        "--connections", "30", "--timeout", "5s"]
TOKEN = "e2e-%d-%d" % (os.getpid(), int(time.time()))


def podman(*args, check=True, timeout=120, **kw):
    env = dict(os.environ, CONTAINERS_CONF=CONF)
    r = subprocess.run(["podman"] + list(args), capture_output=True, timeout=timeout, env=env,
                       **kw)
    if check and r.returncode != 0:
        raise AssertionError("podman %s: %s" % (" ".join(args[:3]), r.stderr.decode()[-2000:]))
    return r


def firewall():
    """The firewall's rules, to compare before and after (root only)."""
    out = []
    for tool in ("iptables", "ip6tables"):
        for table in ("filter", "nat"):
            r = subprocess.run([tool, "-t", table, "-S"], capture_output=True, timeout=30)
            out.append(r.stdout.decode())
    return out


def logs(name):
    """podman logs, stdout and stderr in one stream (as kubectl logs)."""
    r = subprocess.run(["podman", "logs", name], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, timeout=60,
                       env=dict(os.environ, CONTAINERS_CONF=CONF))
    return r.stdout.decode(errors="replace")


def wait_log(name, needle, timeout):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if needle in logs(name):
            return True
        time.sleep(0.1)
    return False


def pooled_percentile(counts, p):
    """The low value of the bucket holding percentile p of hist counts
    [[low_value_ns, n], ...] (the rank as pacer's hist_percentile takes it)."""
    total = sum(n for _, n in counts)
    rank = min(total, max(1, math.ceil(p / 100 * total * (1 - 1e-15))))
    seen = 0
    for v, n in sorted(counts):
        seen += n
        if seen >= rank:
            return v
    return 0


def add_counts(*lists):
    acc = {}
    for l in lists:
        for v, n in l:
            acc[v] = acc.get(v, 0) + n
    return sorted([v, n] for v, n in acc.items())


class ContainersE2ETest(PacerTestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        if not shutil.which("podman"):
            raise unittest.SkipTest("podman is not installed (scripts/deps.sh installs it)")
        r = subprocess.run(["podman", "info"], capture_output=True, timeout=60,
                           env=dict(os.environ, CONTAINERS_CONF=CONF))
        if r.returncode != 0:
            raise unittest.SkipTest("podman cannot run here: %s" % r.stderr.decode()[-300:])
        cls.dir = tempfile.mkdtemp(prefix="pacer-e2e-")
        os.chmod(cls.dir, 0o755)
        cls.tag = "localhost/%s:test" % NAME
        cls.made = {"containers": [], "network": None, "image": None}
        cls.fw_before = firewall() if os.geteuid() == 0 else None
        cls.figures = {}
        try:
            cls.build()
            cls.run_all()
        except BaseException:
            cls.cleanup()
            raise

    @classmethod
    def build(cls):
        t0 = time.monotonic()
        r = subprocess.run([os.path.join(REPO, "scripts", "image.sh"), cls.tag],
                           capture_output=True, timeout=1800,
                           env=dict(os.environ, CONTAINERS_CONF=CONF))
        cls.figures["image_build_s"] = round(time.monotonic() - t0, 1)
        cls.build_log = r.stderr.decode(errors="replace")
        if r.returncode != 0:
            # podman unable to run a container is a skip; anything else a failure
            bases = [l for l in podman("images", "--format", "{{.Repository}}:{{.Tag}}",
                                       "localhost/pacer-base", check=False).stdout.decode().split()
                     if l.endswith("-runtime")]
            if bases:
                probe = podman("run", "--rm", "--network", "none", "--entrypoint", "/bin/true",
                               bases[0], check=False)
                if probe.returncode != 0:
                    raise unittest.SkipTest("podman cannot run containers here: %s"
                                            % probe.stderr.decode()[-300:])
            raise AssertionError("scripts/image.sh failed:\n" + cls.build_log[-3000:])
        cls.made["image"] = cls.tag
        cls.figures["image_bytes"] = int(podman("image", "inspect", "-f", "{{.Size}}",
                                                cls.tag).stdout)
        cls.ldd = podman("run", "--rm", "--network", "none", "--entrypoint", "ldd", cls.tag,
                         "/usr/local/bin/pacer").stdout.decode()

    @classmethod
    def container(cls, name, args, alias=None, hostname=None, env=(), detach=True, volume=None,
                  ip=None):
        argv = ["run", "--name", name, "--network", cls.net, "--pull=never"]
        if ip:
            argv += ["--ip", ip]
        # every name the containers use is in their /etc/hosts (as the
        # pods' names are in the cluster's DNS), not left to podman's
        # aardvark-dns: in CI it once never answered segment 1, started
        # first, with segment 0's name during segment 0's whole life while
        # it answered segment 2 at once (aardvark-dns 1.4 reloads its whole
        # view on every container start); the test is of pacer, and a
        # segment still starts before segment 0 can be reached
        for host, addr in cls.hosts.items():
            argv += ["--add-host", "%s:%s" % (host, addr)]
        if detach:
            argv.append("-d")
        if alias:
            argv += ["--network-alias", alias]
        if hostname:
            argv += ["--hostname", hostname]
        if volume:
            argv += ["-v", volume]
        for e in env:
            argv += ["-e", e]
        cls.made["containers"].append(name)
        return podman(*(argv + [cls.tag] + args), timeout=300, check=False)

    @classmethod
    def run_all(cls):
        cls.net = NAME
        # a subnet of its own, so that every container has a known address
        # (another network may hold one of them: try the next)
        for k in range(8):
            net = "10.%d.%d" % (200 + (os.getpid() + k) % 50, (os.getpid() // 50 + k) % 250)
            r = podman("network", "create", "--internal", "--subnet", net + ".0/24", cls.net,
                       check=False)
            if r.returncode == 0:
                break
        else:
            raise AssertionError("podman network create: " + r.stderr.decode()[-2000:])
        cls.made["network"] = cls.net
        cls.ip = {"target": net + ".2"}
        cls.ip.update({"%s-%d.%s" % (JOB, k, JOB): "%s.%d" % (net, 10 + k) for k in (0, 1, 2)})
        cls.hosts = {"target": cls.ip["target"], "%s-0.%s" % (JOB, JOB): cls.ip["%s-0.%s" % (JOB, JOB)]}
        plan_file = os.path.join(cls.dir, "plan.yaml")
        with open(plan_file, "w") as f:
            f.write("name: fixed\nroutes:\n  - path: /\n    prefix: true\n"
                    "    latency: %dms\n    body: \"ok\\n\"\n" % LATENCY_MS)
        os.chmod(plan_file, 0o644)
        r = cls.container(NAME + "-target", ["serve", "--plan", "/plans/plan.yaml", "--listen",
                                             "0.0.0.0:8080", "--threads", "2"],
                          alias="target", volume="%s:/plans:ro" % cls.dir, ip=cls.ip["target"])
        assert r.returncode == 0, r.stderr.decode()
        assert wait_log(NAME + "-target", "listening on", 30), logs(NAME + "-target")

        # one unsegmented run of the same plan
        r = cls.container(NAME + "-single", ["run"] + PLAN + ["--out", "-", "-q", "--limited-ok"],
                          detach=False)
        assert r.returncode == 0, r.stderr.decode()[-2000:]
        cls.single = json.loads(r.stdout)

        # three segments, addressed as pods are; segment 0 gives up on the
        # others after 5 s (the others would wait a minute for it): segment 1,
        # started first, retries until segment 0's address answers (an
        # address no one holds yet: each try may wait out ARP, about 3 s)
        # and checks in within it; segment 2 comes after it
        env = ["PACER_BARRIER_TOKEN=" + TOKEN]
        seg_args = lambda k, timeout: (["run"] + PLAN + [
            "--segment", "%d/3" % k, "--barrier", "%s-0.%s:7450" % (JOB, JOB),
            "--barrier-timeout", timeout, "--barrier-margin", "1s", "--out", "-", "--framed",
            "--merged-out", "-", "-q", "--limited-ok"])
        seg = lambda k: NAME + "-seg%d" % k
        t0 = time.monotonic()
        r = cls.container(seg(1), seg_args(1, "60s"), alias="%s-1.%s" % (JOB, JOB),
                          hostname="%s-1" % JOB, env=env, ip=cls.ip["%s-1.%s" % (JOB, JOB)])
        assert r.returncode == 0, r.stderr.decode()
        assert wait_log(seg(1), "checking in", 30), logs(seg(1))
        r = cls.container(seg(0), seg_args(0, "5s"), alias="%s-0.%s" % (JOB, JOB),
                          hostname="%s-0" % JOB, env=env, ip=cls.ip["%s-0.%s" % (JOB, JOB)])
        assert r.returncode == 0, r.stderr.decode()
        assert wait_log(seg(0), "waiting on port", 30), logs(seg(0))
        time.sleep(8)  # segment 2 held back: it misses the start (5 s + 1 s margin)
        r = cls.container(seg(2), seg_args(2, "60s"), alias="%s-2.%s" % (JOB, JOB),
                          hostname="%s-2" % JOB, env=env, ip=cls.ip["%s-2.%s" % (JOB, JOB)])
        assert r.returncode == 0, r.stderr.decode()
        cls.codes = {}
        for k in (0, 1, 2):
            w = podman("wait", seg(k), timeout=300)
            cls.codes[k] = int(w.stdout.split()[0])
            if k == 0:
                cls.figures["start_to_merged_s"] = round(time.monotonic() - t0, 1)
        cls.logs = {k: logs(seg(k)) for k in (0, 1, 2)}
        for k in (0, 1, 2):
            with open(os.path.join(cls.dir, "seg%d.log" % k), "w") as f:
                f.write(cls.logs[k])
        # collected from the logs alone
        cls.from_logs_path = os.path.join(cls.dir, "merged-from-logs.json")
        cls.merge = subprocess.run([harness.pacer_bin(), "merge"] +
                                   [os.path.join(cls.dir, "seg%d.log" % k) for k in (0, 1, 2)] +
                                   ["-o", cls.from_logs_path], capture_output=True, timeout=60)

    @classmethod
    def cleanup(cls):
        for name in reversed(cls.made["containers"]):
            podman("rm", "-f", "-t", "2", name, check=False, timeout=120)
        if cls.made["network"]:
            podman("network", "rm", "-f", cls.made["network"], check=False)
        if cls.made["image"]:
            # the build made this image alone (--layers=false: no stages kept);
            # images others made meanwhile are theirs
            podman("rmi", "-f", cls.made["image"], check=False)
        cls.made = {"containers": [], "network": None, "image": None}
        shutil.rmtree(cls.dir, ignore_errors=True)

    @classmethod
    def tearDownClass(cls):
        cls.cleanup()
        left = podman("ps", "-a", "--filter", "name=" + NAME, "-q", check=False).stdout.strip()
        nets = podman("network", "ls", "-q", "--filter", "name=" + NAME,
                      check=False).stdout.strip()
        cls.leftovers = (left, nets, cls.fw_before is not None and firewall() != cls.fw_before)
        figures = dict(cls.figures)
        print("\ncontainers e2e figures: %s" % json.dumps(figures, sort_keys=True), flush=True)
        out = os.environ.get("PACER_E2E_FIGURES")
        if out:
            with open(out, "w") as f:
                json.dump(figures, f, indent=1, sort_keys=True)
        assert not left and not nets, "left behind: containers %r, networks %r" % (left, nets)
        assert not cls.leftovers[2], "the firewall's rules changed"
        super().tearDownClass()

    # ------------------------------------------------------------- tests

    def test_image_has_every_library(self):
        self.assertNotIn("not found", self.ldd)
        for lib in ("libsqlite3", "libnghttp2", "libssl", "libjansson", "libyaml", "libz"):
            self.assertIn(lib, self.ldd)

    def test_segments_ran(self):
        self.assertEqual(self.codes, {0: 0, 1: 0, 2: 0}, self.logs)
        self.assertIn("2 of 3 segments in after", self.logs[0])
        self.assertIn("has passed: segment 2 checked in after segment 0 released", self.logs[2])
        self.assertIn("the 3 segments' results merged into stdout", self.logs[0])

    def merged_both(self):
        self.assertEqual(self.merge.returncode, 0, "%s\nsegment logs (frames left out):\n%s" % (
            self.merge.stderr.decode(errors="replace"),
            "\n".join("seg%d: %s" % (k, "\n".join(l for l in self.logs[k].splitlines()
                                                    if not l.startswith("pacer-frame")))
                      for k in (0, 1, 2))))
        with open(self.from_logs_path) as f:
            from_logs = json.load(f)
        by_0 = [d for kind, _, d in frames(self.logs[0]) if kind == "merged"]
        self.assertEqual(len(by_0), 1, "segment 0 wrote no merged result")
        return from_logs, by_0[0]

    def test_both_merged_results_agree(self):
        from_logs, by_0 = self.merged_both()
        for key in ("measure", "series", "generator_limited", "merged", "interrupted", "warnings"):
            a, b = by_0.get(key), from_logs.get(key)
            if key == "warnings":  # they name the files: hand-in K/N vs seg K.log
                a = [re.sub(r"\(.*?\)", "", w) for w in a]
                b = [re.sub(r"\(.*?\)", "", w) for w in b]
            elif key == "merged":
                a = dict(a, late=[dict(x, file="") for x in a["late"]])
                b = dict(b, late=[dict(x, file="") for x in b["late"]])
            self.assertEqual(a, b, key)

    def test_late_segment_counted_and_named(self):
        from_logs, _ = self.merged_both()
        late = from_logs["merged"]["late"]
        self.assertEqual([x["index"] for x in late], [2], from_logs["merged"])
        self.assertGreater(late[0]["late_ms"], 500)
        self.figures["late_ms"] = late[0]["late_ms"]
        self.assertTrue(any(w.startswith("segment 2") and "late" in w
                            for w in from_logs["warnings"]), from_logs["warnings"])

    def test_counts_equal_one_run(self):
        s = self.single["measure"]
        for m in self.merged_both():
            mm = m["measure"]
            for key in ("scheduled", "sent", "completed", "dropped", "queued_at_end",
                        "in_flight_at_end"):
                self.assertEqual(mm["requests"][key], s["requests"][key], key)
            self.assertEqual(mm["responses"], s["responses"])
            self.assertEqual(mm["errors"]["total"], s["errors"]["total"])
            self.assertEqual(mm["transport_errors"], s["transport_errors"])
            self.assertEqual(mm["latency"]["count"], s["latency"]["count"])
            self.assertEqual(sum(p["completed"] for p in m["series"]), s["requests"]["completed"])
        self.assertEqual(s["requests"]["scheduled"], RATE * DURATION)
        self.figures.update(segments=3, scheduled=s["requests"]["scheduled"],
                            completed=s["requests"]["completed"])

    def test_percentiles(self):
        """The merged percentiles are those of the segments' histograms
        pooled (exactly, to the bucket); beside one unsegmented run of the
        same plan against a target that answers in 20 ms, they agree within
        the histogram's precision where the run's noise lets them (p50,
        p90), and the figures are kept for p99 and beyond."""
        from_logs, _ = self.merged_both()
        segs = [d for k in (0, 1, 2) for kind, _, d in frames(self.logs[k]) if kind == "segment"]
        self.assertEqual(sorted(d["plan"]["segment"]["index"] for d in segs), [0, 1, 2])
        pooled = add_counts(*[d["measure"]["latency"]["hist"]["counts"] for d in segs])
        lat = from_logs["measure"]["latency"]
        self.assertEqual(lat["hist"]["counts"], pooled)
        sub_bits = lat["hist"]["sub_bits"]
        # a bucket spans at most 2^-(sub_bits-1) of its low value; the
        # counts list buckets by their low value, percentiles give the high
        precision = 2.0 ** -(sub_bits - 1)
        single = self.single["measure"]["latency"]
        cmp = {}
        for key, p in (("p50_us", 50), ("p90_us", 90), ("p99_us", 99), ("p99_9_us", 99.9)):
            low = pooled_percentile(pooled, p) / 1e3
            cmp[key] = {"merged": lat[key], "pooled_bucket_low": low, "one_run": single[key],
                        "diff_pct": round(100 * (lat[key] - single[key]) / single[key], 2)}
        self.figures["latency_vs_one_run"] = cmp
        self.figures["bucket_precision_pct"] = round(100 * precision, 2)
        for key, c in cmp.items():
            # exactly the pooled histogram's, to its bucket
            self.assertTrue(c["pooled_bucket_low"] <= c["merged"] <=
                            c["pooled_bucket_low"] * (1 + precision) + 0.001, (key, c))
        for key, tol in (("p50_us", 5), ("p90_us", 15)):
            # one run of the same plan against a target answering in 20 ms:
            # two runs on a shared machine differ by their own noise, far
            # more than a bucket (0.1 %), so only a bound here; the figures
            # of every percentile are kept
            self.assertLessEqual(abs(cmp[key]["diff_pct"]), tol, (key, cmp[key]))


if __name__ == "__main__":
    unittest.main()
