"""How the whole integration suite runs (scripts/run-integration.sh without
test names, as `make test` calls it).

Most test files spend their time waiting on timers, servers and pacer runs of
a few seconds, using about a third of a CPU: they run in parallel, each file
in a process of its own (a "unit"), PACER_TEST_JOBS units at a time (default:
the CPUs this process may use, plus one), the longest first (their times are
kept in BUILD_DIR/integration-times.json from the last run).

The tests named in ALONE measure time or CPU, or skip when the machine is
busy: beside other tests they would fail or skip (and the suite would pass
with less coverage). They run after the parallel part, one unit at a time,
with nothing else of the suite beside them. PACER_SUITE_PART=shared runs
the parallel part only, =alone the other (scripts/run-tests.sh runs the
CPU-bound stages of `make test` beside the first, none beside the second).

Every unit prints its tests (PASS/FAIL/SKIP with their times) and the time of
each class's setUpClass (and setUpModule) when it ends, with its wall time;
the run ends with the wall time of each part, the busy time of each shard and
the line "N passed, N failed" (after "N skipped" when some were). A unit that
crashes, or is stopped after PACER_TEST_UNIT_TIMEOUT seconds (default 1200),
counts every test it did not report as failed.
"""

import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
import unittest

import harness

# Tests that run alone, after the parallel part: a module, module.Class or
# module.Class.test_method, and why. An entry that names no test fails the
# suite (so the list cannot go stale).
ALONE = (
    # target CPU per request (pinned CPUs), a cgroup, a CPU hog, the
    # generator self-checks; skips when this machine wakes threads late
    "test_cost",
    # latency percentiles of a 2 s stall within 10 % of the formula
    "test_run_stall",
    # ratios of CPU-bound variants (2x the work, capacity); skips "machine busy"
    "test_compare",
    # --refine against a CPU-bound capacity on pinned CPUs; skips "machine busy"
    "test_ramp.CapacityTest",
    # service-time percentiles within 10 % + 2 ms of the configured ones
    "test_serve.LatencyDistributionTest",
    # p90 of bursts against fixed thresholds in ms
    "test_serve.BurstTest",
    # CPU-bound capacity within 20 %; skips "machine busy"
    "test_serve.ServeCapacityTest",
    # the share of requests a timed stall times out (25-50 %)
    "test_serve.MisbehaviourTest",
    # a ramp's capacity within 10 %; skips when the generator was limited
    "test_failures.LimitReqRampTest",
    # a 2 ms against 3 ms latency regression (ratio 1.3-1.7), and the same
    # plan run twice at once judged "no significant change"
    "test_history.HistoryTest",
    # the latency of a stall from the schedule within 10 % of the formula
    "test_http2.Http2Test.test_stall_shows_in_latency_from_the_schedule",
    # per-stream service time p50 within 2 ms of 20 ms
    "test_http2.ServeHttp2Test.test_plan_latency_per_stream",
    # stops the target 0.9 s after pacer starts, which must fall inside
    # step 2 of 0.6 s steps: a late start moves it into another step
    "test_ramp.DeadTargetTest",
    # a ramp against a limiter whose exit code says whether pacer's own
    # lateness decided a step (skips when the machine kept pacer late)
    "test_selfcheck.StalledGeneratorTest",
    "test_selfcheck.ErrorsDecideTest",
    # runs make in this repository (make install): not beside the builds
    # that make test runs at the same time as the parallel part
    "test_install.InstallTest",
)

UNIT_TIMEOUT_S = float(os.environ.get("PACER_TEST_UNIT_TIMEOUT", "1200"))
PARTS = ("all", "shared", "alone")
TIMES_FILE = "integration-times.json"


def _jobs():
    env = os.environ.get("PACER_TEST_JOBS")
    if env:
        return max(1, int(env))
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cpus = os.cpu_count() or 1
    return cpus + 1


def _tests(suite):
    for t in suite:
        if isinstance(t, unittest.TestSuite):
            yield from _tests(t)
        else:
            yield t


def _alone(test_id):
    return next((e for e in ALONE if test_id == e or test_id.startswith(e + ".")), None)


class Unit:
    """Tests of one module run by one process."""

    def __init__(self, module, alone):
        self.module = module
        self.alone = alone
        self.ids = []
        self.name = module + (" (alone)" if alone else "")
        self.proc = None
        self.out = None
        self.slot = None
        self.t0 = self.took = 0.0
        self.passed = self.failed = self.skipped = 0
        self.note = ""

    def start(self, slot):
        self.slot = slot
        self.out = tempfile.TemporaryFile()
        argv = [sys.executable, "-c", "import sys, harness; sys.exit(harness.run_suite())"]
        self.t0 = time.monotonic()
        self.proc = subprocess.Popen(argv + self.ids, cwd=harness.HERE, stdin=subprocess.DEVNULL,
                                     stdout=self.out, stderr=subprocess.STDOUT)

    def stop(self, why):
        """SIGTERM (the harness then stops what it started), SIGKILL after 10 s."""
        self.note = why
        if self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.kill(self.proc.pid, signal.SIGKILL)
                self.proc.wait()

    def finish(self):
        """Reads the unit's output and counts; returns the text to print."""
        self.took = time.monotonic() - self.t0
        self.out.seek(0)
        text = self.out.read().decode("utf-8", "replace")
        self.out.close()
        lines = text.splitlines()
        summary = None
        for line in lines:
            words = line.split()
            if len(words) == 4 and words[1] == "passed," and words[3] == "failed":
                summary = (int(words[0]), int(words[2]))
            elif len(words) == 2 and words[1] == "skipped" and words[0].isdigit():
                self.skipped = int(words[0])
        rc = self.proc.returncode
        if summary is None or self.note:
            # crashed or stopped: what it reported passed, the rest failed
            self.passed = sum(1 for l in lines if l.startswith("PASS "))
            self.skipped = sum(1 for l in lines if l.startswith("SKIP "))
            self.failed = max(1, len(self.ids) - self.passed - self.skipped)
            self.note = self.note or "exited with status %s before its summary" % rc
        else:
            self.passed, self.failed = summary
            if rc != 0 and self.failed == 0:
                self.failed = 1
                self.note = "exited with status %s" % rc
        head = "-- %s: %.1fs%s, %d passed, %d failed%s%s" % (
            self.name, self.took, " on shard %d" % self.slot if not self.alone else "",
            self.passed, self.failed, ", %d skipped" % self.skipped if self.skipped else "",
            " (FAIL: %s)" % self.note if self.note else "")
        # its summary lines are in the header
        body = [l for l in lines if not re.fullmatch(r"\d+ passed, \d+ failed|\d+ skipped|"
                                                     r"\(\d+\.\ds\)", l)]
        return "\n".join([head] + body)


def _load_times(path):
    try:
        with open(path) as f:
            return {k: float(v) for k, v in json.load(f).items()}
    except (OSError, ValueError, AttributeError):
        return {}


def _save_times(path, times):
    try:
        tmp = path + ".tmp.%d" % os.getpid()
        with open(tmp, "w") as f:
            json.dump(times, f, indent=1, sort_keys=True)
        os.replace(tmp, path)
    except OSError:
        pass


def _run(units, jobs, times, stopping):
    """Runs units, up to jobs at a time, printing each as it ends. Returns the
    busy seconds per slot."""
    pending = list(units)
    running = []
    busy = [0.0] * jobs
    try:
        while pending or running:
            while pending and len(running) < jobs and not stopping:
                free = min(set(range(1, jobs + 1)) - {u.slot for u in running})
                u = pending.pop(0)
                u.start(free)
                running.append(u)
            time.sleep(0.05)
            for u in list(running):
                if u.proc.poll() is None and time.monotonic() - u.t0 > UNIT_TIMEOUT_S:
                    u.stop("still running after %.0fs, stopped" % UNIT_TIMEOUT_S)
                if u.proc.poll() is not None:
                    running.remove(u)
                    print(u.finish(), flush=True)
                    busy[u.slot - 1] += u.took
                    if not u.note:
                        times[u.name] = round(u.took, 1)
            if stopping and not running:
                break
    finally:
        for u in running:
            u.stop("interrupted")
    return busy


def main():
    """Discovers tests/integration/test_*.py, runs them as the module
    docstring says and returns the exit status (0: nothing failed)."""
    t_start = time.monotonic()
    part = os.environ.get("PACER_SUITE_PART") or "all"
    if part not in PARTS:
        print("PACER_SUITE_PART=%s: expected one of %s" % (part, ", ".join(PARTS)))
        print("0 passed, 1 failed")
        return 2
    loader = unittest.TestLoader()
    suite = loader.discover(harness.HERE, pattern="test_*.py", top_level_dir=harness.HERE)
    units = {}
    broken = []
    used = set()
    for t in _tests(suite):
        tid = t.id()
        if tid.startswith("unittest.loader."):  # a file that failed to import
            tid = tid.rsplit(".", 1)[-1]
            broken.append(tid)
        entry = _alone(tid)
        if entry:
            used.add(entry)
        module = tid.split(".", 1)[0]
        key = (module, entry is not None)
        if key not in units:
            units[key] = Unit(module, entry is not None)
        units[key].ids.append(tid)
    stale = [e for e in ALONE if e not in used] if part != "shared" else []
    for e in stale:
        print("FAIL suite: ALONE names %r, which is no test (tests/integration/suite.py)" % e)

    times_path = os.path.join(harness.build_dir(), TIMES_FILE)
    times = _load_times(times_path)

    def weight(u):  # the longest first; never measured: by the file's size
        path = os.path.join(harness.HERE, u.module + ".py")
        return times.get(u.name, os.path.getsize(path) / 100.0 if os.path.exists(path) else 0)

    shared = sorted((u for u in units.values() if not u.alone), key=weight, reverse=True)
    alone = [u for u in units.values() if u.alone]
    if part == "shared":
        alone = []
    elif part == "alone":
        shared = []
    jobs = _jobs()
    chosen = shared + alone
    n_tests = sum(len(u.ids) for u in chosen)
    print("integration%s: %d tests in %d files: %d units in %d shards, then %d units alone"
          % ("" if part == "all" else " (%s part)" % part, n_tests,
             len({u.module for u in chosen}), len(shared), jobs, len(alone)), flush=True)

    stopping = []

    def on_signal(signum, frame):  # noqa: ARG001
        stopping.append(signum)
        raise KeyboardInterrupt

    old = signal.signal(signal.SIGTERM, on_signal)
    interrupted = False
    t0 = time.monotonic()
    busy, t_shared, t_alone = [], 0.0, 0.0
    try:
        busy = _run(shared, jobs, times, stopping)
        t_shared = time.monotonic() - t0
        t1 = time.monotonic()
        _run(alone, 1, times, stopping)
        t_alone = time.monotonic() - t1
    except KeyboardInterrupt:
        interrupted = True
    finally:
        signal.signal(signal.SIGTERM, old)
    _save_times(times_path, times)

    ran = [u for u in chosen if u.proc is not None and u.proc.returncode is not None]
    passed = sum(u.passed for u in ran)
    failed = sum(u.failed for u in ran) + len(stale)
    skipped = sum(u.skipped for u in ran)
    not_run = n_tests - sum(len(u.ids) for u in ran)
    if interrupted or not_run:
        failed += not_run
        print("interrupted: %d tests not run (counted as failed)" % not_run)
    print()
    print("integration wall time: %.1fs in %d shards, %.1fs alone, %.1fs in all"
          % (t_shared, jobs, t_alone, time.monotonic() - t_start))
    print("shard busy time: " + ", ".join("%d: %.1fs" % (i + 1, b) for i, b in enumerate(busy)))
    slow = sorted(ran, key=lambda u: u.took, reverse=True)[:8]
    print("slowest units: " + ", ".join("%s %.1fs" % (u.name, u.took) for u in slow))
    if skipped:
        print("%d skipped" % skipped)
    print("%d passed, %d failed" % (passed, failed), flush=True)
    return 1 if failed or broken else 0


if __name__ == "__main__":
    sys.exit(main())
