"""What the load costs and whether the answers and the generator were right
(issue 6): target CPU and memory by PID (pacer serve, nginx) and for the
embedded target, cost per million requests, success and outcome rules
(binomial tolerance on vast_ortb_mix), outcome rates in ramp SLOs, the
server-reported execution time, and the generator self-checks.

pacer serve runs as a separate process pinned to one CPU, the generator on
the other (as in test_serve.py)."""

import math
import os
import signal
import subprocess
import sys
import time
import unittest

import harness
from harness import PacerServe, PacerTestCase

PLANS = os.path.join(harness.HERE, "plans")
_pins = None


def setUpModule():
    global _pins
    harness.require_pacer()
    _pins = harness.pin_cpus()


def serve(plan, **kw):
    return PacerServe(plan, cpu=_pins[0] if _pins else None, **kw)


def run_on(args, **kw):
    with harness.pinned(_pins[1] if _pins else None):
        return harness.run_pacer(args, **kw)


def binomial_ok(count, n, p, sigmas=5.0):
    """count out of n within `sigmas` standard deviations of n*p."""
    sd = math.sqrt(n * p * (1 - p))
    return abs(count - n * p) <= sigmas * sd + 1


class TargetCpuTest(PacerTestCase):
    def test_cpu_per_request_matches_configured_work(self):
        """plans/cmp_cpu2ms.yaml spends 2 ms of CPU per request: measured by
        PID over the measured phase, CPU-ms per request is within 20 %, and
        the cost follows from it by the documented formula exactly."""
        with serve(os.path.join(PLANS, "cmp_cpu2ms.yaml")) as srv:
            pid = srv.pid
            run = run_on([srv.url("/"), "--rate", "100", "--duration", "4s", "--warmup", "1s",
                          "--target-pid", pid, "--cost-profile", "a=0.05",
                          "--cost-profile", "b=1.5"])
        self.assertEqual(run.code, 0, harness.describe(run))
        t = run.json["target_resources"]
        self.assertEqual(t["source"], "pid %d" % pid)
        self.assertLess(abs(t["cpu_ms_per_request"] - 2.0), 0.4, t)
        self.assertAlmostEqual(t["cpu_s"], t["cpu_user_s"] + t["cpu_sys_s"], places=5)
        self.assertGreater(t["rss_peak_bytes"], 0)
        self.assertLessEqual(t["rss_start_bytes"], t["rss_peak_bytes"])
        self.assertLess(abs(t["cores_busy"] - 0.2), 0.06, t)  # 100/s x 2 ms
        cost = run.json["cost"]
        self.assertFalse(cost["default_prices"])
        self.assertIn("CPU only", cost["caveat"])
        for prof, price in zip(cost["profiles"], (0.05, 1.5)):
            self.assertEqual(prof["usd_per_core_hour"], price)
            want = cost["cpu_ms_per_request"] * 1e6 / 3.6e6 * price
            self.assertAlmostEqual(prof["usd_per_million_requests"], want, places=5)
        self.assertIn("USD per million requests", run.stdout)  # the cost table

    def test_nginx_by_pid_with_children(self):
        """nginx's master does no request work; with --target-children its
        workers' CPU and memory count: both plausible and non-zero."""
        with harness.Nginx() as ng:
            master = ng.master_pid
            run = self.run_ok([ng.url("/hello"), "--rate", "2000", "--duration", "3s",
                               "--target-pid", master, "--target-children"])
        t = run.json["target_resources"]
        self.assertEqual(t["source"], "pid %d + children" % master)
        self.assertGreater(t["cpu_s"], 0)
        self.assertGreater(t["cpu_ms_per_request"], 0.0005)
        self.assertLess(t["cpu_ms_per_request"], 5)
        self.assertGreater(t["rss_peak_bytes"], 1 << 20)  # master + worker
        self.assertLess(t["rss_peak_bytes"], 1 << 30)

    def test_cgroup(self):
        """The target in a cgroup v2 made for the test: CPU from cpu.stat
        within 20 % of the configured 2 ms per request; memory null when the
        memory controller is not enabled there (then a hybrid host)."""
        root = None
        for cand in ("/sys/fs/cgroup", "/sys/fs/cgroup/unified"):
            if os.path.exists(os.path.join(cand, "cgroup.procs")) and \
                    os.path.exists(os.path.join(cand, "cgroup.subtree_control")):
                root = cand
                break
        if root is None or not os.access(root, os.W_OK):
            self.skipTest("no writable cgroup v2 hierarchy here")
        cg = os.path.join(root, "pacer-test-%d" % os.getpid())
        try:
            os.mkdir(cg)
        except OSError as e:
            self.skipTest("cannot create a cgroup: %s" % e)
        try:
            with serve(os.path.join(PLANS, "cmp_cpu2ms.yaml")) as srv:
                with open(os.path.join(cg, "cgroup.procs"), "w") as f:
                    f.write(str(srv.pid))
                run = run_on([srv.url("/"), "--rate", "100", "--duration", "3s",
                              "--target-cgroup", cg])
                with open(os.path.join(root, "cgroup.procs"), "w") as f:
                    f.write(str(srv.pid))  # back out, so the group can go
        finally:
            os.rmdir(cg)
        self.assertEqual(run.code, 0, harness.describe(run))
        t = run.json["target_resources"]
        self.assertEqual(t["source"], "cgroup " + cg)
        self.assertLess(abs(t["cpu_ms_per_request"] - 2.0), 0.4, t)
        has_mem = os.path.exists(os.path.join(root, "memory.current")) or \
            "memory" in open(os.path.join(root, "cgroup.subtree_control")).read()
        if not has_mem:
            self.assertIsNone(t["rss_peak_bytes"])

    def test_pid_exiting_mid_run(self):
        """The target exits 1.5 s into a 4 s run: the run finishes, counts the
        errors, and says in a note that the process exited."""
        srv = serve("hello").start()
        try:
            pid = srv.pid
            run = run_on([srv.url("/"), "--rate", "200", "--duration", "4s", "--timeout", "1s",
                          "--target-pid", pid],
                         actions=[(1.5, lambda _p: os.kill(pid, signal.SIGKILL))])
        finally:
            srv.stop()
        self.assertFalse(run.timed_out)
        self.assertIn(run.code, (0, 4), harness.describe(run))
        self.assertIsNotNone(run.json)
        t = run.json["target_resources"]
        self.assertTrue(any("exited" in n for n in t["notes"]), t)
        self.assertGreater(run.json["measure"]["transport_errors"]["total"], 0)

    def test_self_contained_target_and_bad_options(self):
        run = run_on(["--self-contained=hello", "--rate", "500", "--duration", "2s"])
        self.assertEqual(run.code, 0, harness.describe(run))
        t = run.json["target_resources"]
        self.assertEqual(t["source"], "self_contained")
        self.assertIsNone(t["cpu_user_s"])  # thread CPU clocks give no split
        self.assertGreater(t["cpu_s"], 0)
        self.assertTrue(any("whole pacer process" in n for n in t["notes"]))
        self.assertEqual(run.json["cost"]["default_prices"], True)
        for args, what in (
            (["--target-pid", "999999999"], "999999999"),
            (["--target-cgroup", "/nonexistent-pacer-cgroup"], "nonexistent-pacer-cgroup"),
            (["--cost-profile", "x=-1"], "--cost-profile"),
            (["--target-children"], "--target-children"),
            (["--outcome", "fill=body contains"], "--outcome"),
            (["--outcome", "9bad=true"], "--outcome"),
            (["--success", "status =="], "--success"),
            (["--server-time", "bogus"], "--server-time"),
            (["--inspect-body", "0"], "--inspect-body"),
        ):
            r = harness.run_pacer(["http://127.0.0.1:9/", "--rate", "10", "--duration", "1s"] + args)
            self.assertEqual(r.code, 2, harness.describe(r))
            self.assertIn(what, r.stderr)
            self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)


class OutcomeTest(PacerTestCase):
    def test_fill_rate_within_binomial_tolerance(self):
        """vast_ortb_mix fills 55 % of /vast answers (status 200 at 99.5 %):
        the fill outcome's rate is within 5 sigma of that, and a success rule
        demanding an ad counts the same responses."""
        run = run_on(["--self-contained=vast_ortb_mix", "/vast?placement=1", "--rate", "1000",
                      "--duration", "3s", "--connections", "128",
                      "--outcome", 'fill=status == 200 and body contains "<Ad "',
                      "--outcome", 'empty=body contains "<VAST version=\\"4.2\\"/>"',
                      "--outcome", "err=status >= 500",
                      "--success", 'status == 200 and body contains "<Ad "'])
        self.assertEqual(run.code, 0, harness.describe(run))
        m = run.json["measure"]
        n = m["requests"]["completed"]
        self.assertGreater(n, 2500)
        oc = {o["name"]: o for o in m["outcomes"]}
        self.assertEqual(list(oc), ["fill", "empty", "err"])
        self.assertEqual(oc["fill"]["of"], n)
        self.assertTrue(binomial_ok(oc["fill"]["count"], n, 0.55 * 0.995), oc["fill"])
        self.assertTrue(binomial_ok(oc["err"]["count"], n, 0.005), oc["err"])
        # every answer is a fill, an empty VAST or an error
        self.assertEqual(oc["fill"]["count"] + oc["empty"]["count"] + oc["err"]["count"], n)
        self.assertAlmostEqual(oc["fill"]["rate_pct"], 100.0 * oc["fill"]["count"] / n, places=3)
        self.assertEqual(m["success"]["ok"], oc["fill"]["count"])
        self.assertEqual(m["success"]["failed"], n - oc["fill"]["count"])
        self.assertEqual(run.json["plan"]["rules"]["outcomes"][0]["name"], "fill")
        self.assertIn("fill", run.stdout)

    def test_default_success_and_no_rules(self):
        """Without rules nothing is inspected, success is 2xx/3xx from the
        status counts, and the plan says rules: null."""
        with harness.Nginx() as ng:
            run = self.run_ok([ng.url("/status/503"), "--rate", "200", "--duration", "1s"])
        m = run.json["measure"]
        self.assertIsNone(run.json["plan"]["rules"])
        self.assertNotIn("outcomes", m)
        self.assertNotIn("server_time", m)
        self.assertEqual(m["success"]["ok"], 0)
        self.assertEqual(m["success"]["failed"], m["requests"]["completed"])

    def test_outcome_in_ramp_slo(self):
        """An outcome rate is an SLO metric: fill>=40% passes every step,
        fill>=70% fails each with a reason naming fill."""
        base = ["--self-contained=vast_ortb_mix", "/vast", "--steps", "300,600",
                "--step-duration", "2s", "--outcome", 'fill=body contains "<Ad "']
        ok = run_on(base + ["--slo", "fill>=40%"], subcommand="ramp")
        self.assertEqual(ok.code, 0, harness.describe(ok))
        self.assertTrue(all(s["verdict"]["pass"] for s in ok.json["steps"]))
        self.assertIn("outcomes", ok.json["steps"][0]["measure"])
        bad = run_on(base + ["--slo", "fill>=70%"], subcommand="ramp")
        self.assertEqual(bad.code, 1, harness.describe(bad))
        self.assertIn("fill", bad.json["steps"][0]["verdict"]["reason"])
        unknown = harness.run_pacer(base + ["--slo", "nofill>=70%"], subcommand="ramp")
        self.assertEqual(unknown.code, 2, harness.describe(unknown))

    def test_server_time_from_server_timing(self):
        """The exec plan reports its execution time in Server-Timing
        (app;dur=MS): the server-time histogram has a value for every
        response, and it never exceeds the request-to-response time."""
        run = run_on(["--self-contained=exec", "--rate", "40", "--duration", "3s",
                      "--server-time", "server-timing:app"])
        self.assertEqual(run.code, 0, harness.describe(run))
        m = run.json["measure"]
        st, lat = m["server_time"], m["latency"]
        self.assertEqual(st["count"], m["requests"]["completed"])
        self.assertEqual(m["server_time_missing"], 0)
        self.assertLessEqual(st["p50_us"], lat["p50_us"])
        self.assertGreater(st["p50_us"], 20000)  # median 50 ms configured
        self.assertLess(st["p50_us"], 100000)
        self.assertIn("server-reported time", run.stdout)  # its latency row
        miss = run_on(["--self-contained=hello", "--rate", "100", "--duration", "1s",
                       "--server-time", "header:X-Nope"])
        self.assertEqual(miss.json["measure"]["server_time_missing"],
                         miss.json["measure"]["requests"]["completed"])


class CpuHog:
    """`python3 -c 'while True: pass'` pinned to one CPU (taskset execs
    python, so the PID is the hog's), n of them; started on entering the
    `with` block and killed by PID on leaving it (and by the harness's kill
    guard at exit)."""

    def __init__(self, cpu, n=1):
        self.cpu, self.n, self.procs = cpu, n, []

    def __enter__(self):
        for _ in range(self.n):
            p = subprocess.Popen(["taskset", "-c", str(self.cpu), sys.executable, "-c",
                                  "while True: pass"], stdin=subprocess.DEVNULL)
            harness._register(p)
            self.procs.append(p)
        time.sleep(0.2)  # running before the load starts
        return self

    def __exit__(self, *exc):
        for p in self.procs:
            try:
                os.kill(p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            p.wait()
            harness._unregister(p)
        return False


def checks(run):
    """{name: check} of a result's generator self-checks."""
    return {c["name"]: c for c in run.json["generator_limited"]["checks"]}


class GeneratorCheckTest(PacerTestCase):
    def assert_fired_material(self, run):
        """Every check that fired says why with figures over its materiality
        line, and a shortfall that fired is the generator's."""
        for c in checks(run).values():
            if not c["fired"]:
                continue
            self.assertTrue(c["finding"], c)
            if c["name"] == "achieved_rate":
                self.assertEqual(c["blame"], "generator", c)
                self.assertGreater(c["impact_pct"], c["material_pct"], c)
            elif c["name"] == "loop_lag_p99":
                self.assertTrue(c["impact_pct"] > c["material_pct"]
                                or any(s["flips"] for s in c["slo"]), c)

    def test_fires_when_starved(self):
        """One thread asked for far more than it can send: flagged, exit 4,
        the check that fired named in a warning with its finding and advice;
        --limited-ok keeps the flag but exits 0."""
        args = ["--self-contained=hello", "--rate", "400k", "--duration", "2s", "--threads", "1",
                "--connections", "16", "--timeout", "2s"]
        run = run_on(args, limited_ok=False)
        self.assertEqual(run.code, 4, harness.describe(run))
        g = run.json["generator_limited"]
        self.assertTrue(g["flagged"])
        fired = [c["name"] for c in g["checks"] if c["fired"]]
        self.assertTrue(fired, g)
        self.assert_fired_material(run)
        self.assertTrue(any("generator limited" in w for w in run.json["warnings"]))
        ok = run_on(args + ["--limited-ok"], limited_ok=False)
        self.assertEqual(ok.code, 0, harness.describe(ok))
        self.assertTrue(ok.json["generator_limited"]["flagged"])

    def test_steal_time_reported(self):
        """The hypervisor's steal time over the load is in every result: a
        run's generator object (its CPUs' and the machine's, percents), a
        ramp's steps, a compare's variants; a warning only when it is 1 % or
        more of the generator's CPUs (and still is with a tick of the
        counters off: a short run's single tick is not one)."""
        run = run_on(["--self-contained=hello", "--rate", "200", "--duration", "0.5s"])
        self.assertIsNotNone(run.json, harness.describe(run))
        g = run.json["generator"]
        for k in ("steal_pct", "machine_steal_pct"):
            self.assertIsInstance(g[k], (int, float), g)
            self.assertTrue(0 <= g[k] <= 100, g)
        warned = [w for w in run.json["warnings"] if w.startswith("the hypervisor took")]
        if g["steal_pct"] < 1.0:
            self.assertEqual(warned, [], g)
        if warned:
            self.assertIn("%.2f%% of the generator's CPUs" % g["steal_pct"], warned[0])
        ramp = harness.run_pacer(["--self-contained=hello", "--steps", "100,200",
                                  "--step-duration", "0.3s", "--step-warmup", "0s",
                                  "--slo", "p99<10s"], subcommand="ramp", timeout=30)
        self.assertIsNotNone(ramp.json, harness.describe(ramp))
        for st in ramp.json["steps"]:
            self.assertTrue(0 <= st["steal_pct"] <= 100, st["steal_pct"])
        cmp_ = harness.run_pacer(["--variant", "a=@hello", "--variant", "b=@hello", "--rate",
                                  "200", "--duration", "0.3s", "--warmup", "0s", "--repeat",
                                  "1"], subcommand="compare", timeout=30)
        self.assertIsNotNone(cmp_.json, harness.describe(cmp_))
        for v in cmp_.json["variants"]:
            self.assertIn(v["steal_repetitions"], (0, 1), v["name"])
            self.assertTrue(0 <= v["steal_max_pct"] <= 100, v)  # measured, said or not
            if v["steal_repetitions"]:
                self.assertGreaterEqual(v["steal_max_pct"], 1.0, v)

    def test_compare_flags_limited_repetitions(self):
        """compare checks every repetition: a starved generator flags them,
        names the check, and exits 4 (0 with --limited-ok)."""
        args = ["--variant", "a=@hello", "--variant", "b=@hello", "--rate", "400k",
                "--duration", "1s", "--warmup", "0.2s", "--repeat", "2", "--connections", "16",
                "--timeout", "1s"]
        # not pinned: the embedded targets need the other core, so that the
        # generator thread, not a shared CPU, is what runs out
        run = harness.run_pacer(args, subcommand="compare", limited_ok=False)
        self.assertEqual(run.code, 4, harness.describe(run))
        for v in run.json["variants"]:
            self.assertEqual(v["generator_limited_repetitions"], 2, v["name"])
        self.assertTrue(any("generator limited in 2 of 2 repetitions" in w
                            for w in run.json["warnings"]), run.json["warnings"])
        ok = harness.run_pacer(args + ["--limited-ok"], subcommand="compare", limited_ok=False)
        self.assertEqual(ok.code, 0, harness.describe(ok))

    def test_exits_4_when_starved_of_cpu(self):
        """pacer pinned to a CPU it shares with two CPU hogs (started and
        stopped here by PID), nginx pinned to the other CPU: the generator
        gets about a third of a core, far less than 60,000 req/s needs, while
        nginx has a core to itself and answers /hello in microseconds. The
        requests wait for connections that pacer is too slow to turn over:
        achieved_rate blames the generator (it was busy or waiting for its
        CPU, not idle waiting for nginx), and the run exits 4. A noisy
        neighbour on pacer's CPU only starves it more."""
        if _pins is None:
            self.skipTest("needs 2 CPUs and taskset")
        with harness.Nginx() as ng:
            for pid in ng.all_pids():
                os.sched_setaffinity(pid, {_pins[0]})
            with CpuHog(_pins[1], n=2):
                run = run_on([ng.url("/hello"), "--rate", "60k", "--threads", 1,
                              "--connections", 64, "--warmup", "0.5s", "--duration", "3s",
                              "--timeout", "2s", "--target-pid", ng.master_pid,
                              "--target-children"], limited_ok=False, timeout=60.0)
        self.assertEqual(run.code, 4, harness.describe(run))
        self.assertTrue(run.json["generator_limited"]["flagged"])
        self.assert_fired_material(run)
        rate = checks(run)["achieved_rate"]
        msg = "%s\n%s" % (rate, harness.describe(run))
        self.assertTrue(rate["fired"], msg)
        self.assertEqual(rate["blame"], "generator", msg)
        self.assertIn("generator's fault", rate["finding"], msg)
        self.assertGreater(rate["cpu_wait_s"], 0, msg)  # it waited for its CPU
        self.assertTrue(any(w.startswith("generator limited (achieved_rate")
                            for w in run.json["warnings"]), run.json["warnings"])

    def test_slow_target_is_not_the_generator(self):
        """A target that answers after 10 ms (a timer, no CPU) on 4
        connections carries at most 400 req/s: offered 1,000/s, it achieves
        about 40 %. The requests waited for connections busy with requests in
        flight while pacer sat idle: the shortfall is the target's, so no
        check fires and the run exits 0 (before issue 12 it exited 4, the
        target's CPU being far under its cores), and the warning says whose
        it was with the figures."""
        run = run_on(["--self-contained=" + os.path.join(PLANS, "ramp_latency.yaml"), "/",
                      "--rate", 1000, "--connections", 4, "--duration", "2s", "--timeout", "2s"],
                     limited_ok=False)
        self.assertEqual(run.code, 0, harness.describe(run))
        g = run.json["generator_limited"]
        self.assertFalse(g["flagged"], g)
        rate = checks(run)["achieved_rate"]
        self.assertTrue(rate["evaluated"], rate)
        self.assertLess(rate["value"], 60, rate)
        self.assertEqual(rate["blame"], "target", rate)
        self.assertGreater(rate["cap_wait_s"], 1.0, rate)  # most of the run at the cap
        self.assertGreater(rate["cap_wait_idle_s"], 0.5 * rate["cap_wait_s"], rate)
        self.assertLess(rate["impact_pct"], rate["material_pct"], rate)
        lag = checks(run)["loop_lag_p99"]
        self.assertLess(lag["impact_pct"], lag["material_pct"], lag)  # latency is seconds
        self.assertTrue(any("the target's fault" in w and w.startswith("achieved rate")
                            for w in run.json["warnings"]), run.json["warnings"])
        self.assertFalse(any("generator limited" in w for w in run.json["warnings"]))

    def test_ramp_judges_lateness_against_its_slo(self):
        """A ramp over the same target on one connection (at most 100/s):
        20/s passes p99<100ms, 200/s fails it by seconds of queueing. Each
        step's loop-lag check compares the lateness with the clause; a
        failure by seconds cannot be pacer's few milliseconds, the failing
        step's shortfall is the target's, and the ramp exits 1 (SLO failed),
        not 4."""
        run = harness.run_pacer(["--self-contained=" + os.path.join(PLANS, "ramp_latency.yaml"),
                                 "/", "-c", 1, "--slo", "p99<100ms", "--steps", "20,200",
                                 "--step-duration", "1s", "--step-warmup", "0.2s"],
                                subcommand="ramp", limited_ok=False)
        self.assertEqual(run.code, 1, harness.describe(run))
        steps = run.json["steps"]
        self.assertEqual([s["verdict"]["pass"] for s in steps], [True, False], harness.describe(run))
        for s in steps:
            lag = {c["name"]: c for c in s["generator_limited"]["checks"]}["loop_lag_p99"]
            self.assertEqual([c["clause"] for c in lag["slo"]], ["p99<100ms"], lag)
            self.assertEqual(lag["slo"][0]["threshold_us"], 100000, lag)
            self.assertEqual(lag["slo"][0]["failed"], not s["verdict"]["pass"], lag)
            self.assertFalse(lag["slo"][0]["flips"], lag)
        fail = {c["name"]: c for c in steps[1]["generator_limited"]["checks"]}
        self.assertFalse(steps[1]["generator_limited"]["flagged"], fail)
        self.assertEqual(fail["achieved_rate"]["blame"], "target", fail["achieved_rate"])

    def test_quiet_on_an_easy_run(self):
        """500 req/s against nginx is easy: no check fires, exit 0. (1,500
        requests, so the loop-lag p99 is the 15th latest, not one stall.)
        A virtual machine can wake a sleeping thread milliseconds late, which
        is exactly what the check reports: up to three tries; when each one
        is flagged for lateness alone, the machine's own floor is measured
        (a bare sleep loop at the same period on the same CPU), and the test
        skips with the figures when that floor is a quarter of the lag limit
        or more: no generator could pace within the limit there."""
        tries, floors = [], []
        for _ in range(3):
            with harness.Nginx() as ng:
                run = run_on([ng.url("/hello"), "--rate", "500", "--duration", "3s",
                              "--target-pid", ng.master_pid, "--target-children"],
                             limited_ok=False)
            self.assertIsNotNone(run.json, harness.describe(run))
            g = run.json["generator_limited"]
            self.assertTrue(all(c["evaluated"] for c in g["checks"]), g)
            if not g["flagged"]:
                self.assertEqual(run.code, 0, harness.describe(run))
                return
            self.assertEqual(run.code, 4, harness.describe(run))
            fired = [c for c in g["checks"] if c["fired"]]
            tries.append(", ".join("%s %.1f (impact %.3g %%)" % (c["name"], c["value"],
                                                                 c["impact_pct"]) for c in fired))
            if [c["name"] for c in fired] != ["loop_lag_p99"]:
                continue
            steal = run.json["generator"]["steal_pct"]
            floors.append((harness.timer_lateness_us(0.002, 1500,
                                                     _pins[1] if _pins else None)[1], steal))
        lag_limit_us = 1000.0
        # the machine's: its timer wakes late, or its hypervisor took the CPU
        # (the steal time pacer reports, warned of from 1 %)
        machine = [f >= lag_limit_us / 4 or (st is not None and st >= 1.0) for f, st in floors]
        if len(floors) == len(tries) and all(machine):
            self.skipTest("this machine wakes a sleeping thread late (bare sleep loop p99 us, "
                          "hypervisor steal %%: %s): flagged every time: %s"
                          % (", ".join("%.0f us, %s" % f for f in floors), tries))
        self.fail("an easy run was flagged generator-limited every time: %s "
                  "(bare sleep-loop p99 us, steal %%: %s)" % (tries, floors))

if __name__ == "__main__":
    unittest.main()
