#!/usr/bin/env python3
"""pacer benchmarks: pacer measured beside wrk (Debian) on the same target.

Not a test: it asserts nothing, it measures and writes a Markdown and a JSON
table to bench/results/. Every figure is a median over interleaved repetitions
(wrk, pacer, pacer, wrk, ...) so drift of this shared machine hits both tools.

Targets run on CPU 0, generators on CPU 1 (taskset), one thread each.

  generator CPU per response  (user+sys of the whole generator process) / responses
  requests/s                   flat out, closed loop, 64 connections
  peak RSS                     ru_maxrss of the generator process
  send-lag p99                 pacer open loop at a fixed 20k req/s
  arrival precision            fixed-rate rows beside h2load: from nginx's own clock (an access
                               log of `$msec` per request) over the measured seconds, the share
                               of windows holding the planned rate's count within ±20 % (1 ms
                               windows, or as many whole ms as hold 5 requests on average under
                               5,000 req/s) and the requests nginx saw of those planned, so a
                               cheaper generator that sends in bursts or short shows it;
                               `--only-fixed --fixed-cases 1000/50,5000/50` runs a short look
                               (`--no-arrivals`: nginx without the log, to see what its write
                               per request costs the CPU figures)
  serve                        wrk against `pacer serve --plan hello` vs nginx, 1 thread/worker each
  tls                          the same nginx over https (TLS 1.3, keep-alive): wrk vs pacer flat
                               out, and pacer's CPU per response plain vs TLS (flat out and at a
                               fixed rate); `--only-tls` runs just this section
  steal                        the hypervisor's steal time on CPU 1 (generator) and CPU 0
                               (target) over each run, from /proc/stat; a fixed-rate run with
                               1 % or more on either is run again (up to twice, the quietest
                               kept), and docs/bench.md says how many were
  perf                         where pacer's CPU per response goes at 1k/50, 20k/50 and 20k/1000
                               (perf record -g, Debian linux-perf): its write()s, the target's
                               receive path that loopback runs inside them, recvmsg, sleeps,
                               epoll, its own code; `--only-perf` runs just this section
  realtime                     pacer at 5k req/s with a CPU hog pinned to its own CPU: send and loop
                               lag without it, with it, and with it under --realtime (SCHED_RR);
                               `--only-realtime` runs just this section
  http2                        nginx's HTTP/2 (h2c and h2 over TLS), 10 connections x 10 streams,
                               one thread: pacer beside h2load flat out and at a fixed rate
                               (h2load --rps); `--only-h2` runs just this section. Beside them,
                               `self-contained h2c`: `pacer run --self-contained --h2c` (driver
                               and target in one process) against h2load driving `pacer serve --h2c`
  http3                        --http3, 10 connections x 10 streams, beside ngtcp2's example client
                               (gtlsclient; Debian's h2load has no QUIC), against `pacer serve --http3
                               --max-streams 10` and Caddy, each started afresh per run on CPU 0:
                               flat out (both) and at a fixed rate (pacer alone: gtlsclient has no
                               rate); `--only-h3` runs just this section
"""
import argparse
import datetime
import json
import math
import os
import platform
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

PACER = os.environ.get("PACER_BIN", os.path.join(ROOT, "pacer"))
CONNS = 64


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port(port, timeout=10.0):
    end = time.time() + timeout
    while time.time() < end:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"nothing listening on {port}")


class Proc:
    """A background server pinned to a CPU, stopped by PID."""

    def __init__(self, argv, cpu, port):
        self.p = subprocess.Popen(["taskset", "-c", str(cpu)] + argv,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_port(port)

    def stop(self):
        if self.p.poll() is None:
            self.p.send_signal(signal.SIGTERM)
            try:
                self.p.wait(5)
            except subprocess.TimeoutExpired:
                self.p.kill()
                self.p.wait()


def nginx_conf(tmp, tag, tls=None, listen="", arrivals=None):
    """Write nginx-TAG.conf in tmp: one worker, no master process (so pinning
    it pins the server), keep-alive without limit, answering "hello" on every
    path from the listen directives given; tls (cert, key, protocols) adds the
    certificate. No access log, or with arrivals (a path) one line per request
    holding nginx's own clock, `$msec` (seconds with milliseconds), written
    unbuffered as each request is answered: ArrivalLog reads it. Returns the
    path."""
    conf = os.path.join(tmp, f"nginx-{tag}.conf")
    ssl = ""
    if tls:
        cert, key, protocols = tls
        ssl = f"  ssl_protocols {protocols};\n  ssl_certificate {cert}; ssl_certificate_key {key};\n"
    log = "access_log off;"
    if arrivals:
        log = f"log_format arrival '$msec';\n  access_log {arrivals} arrival;"
    with open(conf, "w") as f:
        f.write(f"""worker_processes 1;
daemon off;
master_process off;
pid {tmp}/nginx-{tag}.pid;
error_log {tmp}/error-{tag}.log;
events {{ worker_connections 4096; }}
http {{
  {log}
  keepalive_requests 10000000;
  client_body_temp_path {tmp}; proxy_temp_path {tmp}; fastcgi_temp_path {tmp};
  uwsgi_temp_path {tmp}; scgi_temp_path {tmp};
{ssl}  server {{ {listen}
           location / {{ return 200 "hello\\n"; }} }}
}}
""")
    return conf


def start_nginx(tmp, port, arrivals=None):
    conf = nginx_conf(tmp, "plain", listen=f"listen 127.0.0.1:{port};", arrivals=arrivals)
    return Proc(["/usr/sbin/nginx", "-p", tmp, "-c", conf], 0, port)


# Arrival precision at the target: the share of windows holding the planned
# rate's count within ±PRECISION_TOL. A window is 1 ms, or as many whole ms as
# hold PRECISION_MIN_MEAN requests on average at a rate under
# PRECISION_MIN_MEAN/ms: at 1 ms and 1,000 req/s the mean is 1 and ±20 % of
# it is "exactly 1", below 1,000 req/s ±20 % of a mean under 1 holds no whole
# count at all.
PRECISION_TOL = 0.20
PRECISION_MIN_MEAN = 5


def precision_window_ms(rate):
    return max(1, math.ceil(PRECISION_MIN_MEAN * 1000 / rate))


def window_bounds(mean):
    """The whole counts within ±PRECISION_TOL of mean."""
    return math.ceil(mean * (1 - PRECISION_TOL) - 1e-9), math.floor(mean * (1 + PRECISION_TOL) + 1e-9)


def poisson_share(mean):
    """The share of windows a Poisson process at this mean would score: the
    yardstick for the figure (even spacing scores near 100 %, bursts near 0)."""
    lo, hi = window_bounds(mean)
    return 100.0 * sum(math.exp(-mean + k * math.log(mean) - math.lgamma(k + 1))
                       for k in range(max(lo, 0), hi + 1))


def window_share(ms, start, n_win, win_ms, mean):
    counts = [0] * n_win
    for t in ms:
        k = (t - start) // win_ms
        if 0 <= k < n_win:
            counts[k] += 1
    lo, hi = window_bounds(mean)
    return 100.0 * sum(1 for c in counts if lo <= c <= hi) / n_win if n_win else None


def arrival_precision(ms, rate, warmup_s, secs):
    """From the target's arrival times (ms, its own clock): the requests it saw
    in the measured window and the arrival precision there. The measured window
    is `secs` long and starts `warmup_s` after the first arrival (the generators
    send from their first request on: warm-up, then the measured seconds), so
    its planned count is rate x secs."""
    planned = round(rate * secs)
    win = precision_window_ms(rate)
    out = {"planned": planned, "window_ms": win, "seen": 0, "precision_pct": None,
           "precision_1ms_pct": None, "poisson_pct": poisson_share(rate * win / 1000)}
    if not ms:
        return out
    start = min(ms) + round(warmup_s * 1000)
    span = round(secs * 1000)
    out["seen"] = sum(1 for t in ms if start <= t < start + span)
    out["precision_pct"] = window_share(ms, start, span // win, win, rate * win / 1000)
    out["precision_1ms_pct"] = window_share(ms, start, span, 1, rate / 1000)
    return out


class ArrivalLog:
    """nginx's arrival log (nginx_conf's arrivals): emptied before a run, read
    after it. nginx appends (O_APPEND), so truncating the file under it is
    safe: its next line goes to the new end."""

    def __init__(self, tmp, tag):
        self.path = os.path.join(tmp, f"arrivals-{tag}.log")

    def clear(self):
        if os.path.exists(self.path):
            os.truncate(self.path, 0)

    def read_ms(self):
        """Arrival times in whole ms of nginx's clock ("1764674123.456")."""
        with open(self.path) as f:
            return [int(line.replace(".", "")) for line in f if line.strip()]

    def measured(self, run, rate, warmup_s, secs):
        """run() with the log emptied first; its row gains `arrival`."""
        def go():
            self.clear()
            row = run()
            row["arrival"] = arrival_precision(self.read_ms(), rate, warmup_s, secs)
            return row
        return go


def h2load_rate(url, rate, conns, secs):
    """h2load (Debian nghttp2-client) over HTTP/1.1 at a fixed total rate:
    --rps is per client, so rate/conns each; CPU per response from rusage."""
    per = max(rate / conns, 0.001)
    rc, out, cpu, rss = rusage_run(["h2load", "--h1", "-t1", f"-c{conns}", f"--rps={per:g}",
                                    f"-D{secs}", "--warm-up-time=1", url])
    m = re.search(r"requests: \d+ total, \d+ started, (\d+) done, (\d+) succeeded", out)
    if rc != 0 or not m:
        raise RuntimeError("h2load failed: " + out[-2000:])
    n = int(m.group(2))
    return {"responses": n, "rps": n / secs, "cpu_us_per_resp": cpu * 1e6 / max(n, 1),
            "rss_kib": rss, "steal_pct": dict(last_steal)}


# The fixed-rate cases of the open-loop cost issue: (rate, connections).
FIXED_CASES = [(1000, 50), (20000, 50), (20000, 1000)]


STEAL_RETRY_PCT = 1.0  # pacer warns from 1 % (RESULT_STEAL_WARN_PCT)


def worst_steal(row):
    return max(row.get("steal_pct", {}).values(), default=0.0)


def quietest(run, tries=3):
    """run() until the hypervisor took under 1 % of either CPU, at most
    `tries` times; the attempt with the least steal, with its count."""
    best = None
    for k in range(tries):
        row = run()
        row["attempts"] = k + 1
        if best is None or worst_steal(row) < worst_steal(best):
            best = row
        if worst_steal(row) < STEAL_RETRY_PCT:
            break
    best["attempts"] = k + 1
    return best


def steal_line(rows, retried=True):
    """A sentence on the steal over rows: median and most on each CPU, and
    (retried) how many were run again."""
    gen = [r["steal_pct"].get("gen", 0.0) for r in rows if r.get("steal_pct")]
    tgt = [r["steal_pct"].get("target", 0.0) for r in rows if r.get("steal_pct")]
    if not gen:
        return "Hypervisor steal time: not known."
    again = sum(1 for r in rows if r.get("attempts", 1) > 1)
    still = sum(1 for r in rows if worst_steal(r) >= STEAL_RETRY_PCT)
    text = (f"Hypervisor steal time over each run (/proc/stat): generator CPU median "
            f"{statistics.median(gen):.2f} %, most {max(gen):.2f} %; target CPU median "
            f"{statistics.median(tgt):.2f} %, most {max(tgt):.2f} %.")
    if retried:
        return (text + f" {again} of {len(rows)} runs had {STEAL_RETRY_PCT:g} % or more on "
                f"either CPU and were run again (at most twice, the quietest kept); {still} "
                f"still had.")
    return text + f" {still} of {len(rows)} runs had {STEAL_RETRY_PCT:g} % or more on either CPU."


def fixed_rate_section(a, tmp):
    """pacer at fixed rates beside h2load --rps, against nginx pinned to CPU
    0 (generators on CPU 1), interleaved; CPU per response and send lag.
    (The warm-up's responses count in pacer's CPU per response, as h2load's
    warm-up does in its own.)"""
    res = {}
    have_h2load = shutil.which("h2load") is not None
    port = free_port()
    url = f"http://127.0.0.1:{port}/"
    cases = fixed_cases(a)
    log = ArrivalLog(tmp, "fixed") if a.arrivals else None
    ng = start_nginx(tmp, port, arrivals=log and log.path)
    try:
        for rate, conns in cases:
            key = f"{rate}_{conns}"
            rows = res.setdefault(key, {"pacer": [], "pacer_precise": [], "pacer_burst": [],
                                        "h2load": []})
            for i in range(a.reps):
                order = ["pacer", "pacer_precise", "pacer_burst", "h2load"]
                if i % 2:
                    order.reverse()
                for who in order:
                    base = ["--rate", str(rate), "-c", str(conns), "-d", f"{a.secs}s", "-w", "1s"]
                    if who == "pacer":
                        run = lambda: pacer_run(url, base, tmp)
                    elif who == "pacer_precise":
                        run = lambda: pacer_run(url, base + ["--precise"], tmp)
                    elif who == "pacer_burst":
                        # h2load's arrival process: every connection's timer
                        # fires in step, so bursts of `conns` at rate/conns
                        run = lambda: pacer_run(url, base + ["--burst-size", str(conns)], tmp)
                    elif have_h2load:
                        run = lambda: h2load_rate(url, rate, conns, a.secs)
                    else:
                        continue
                    rows[who].append(quietest(log.measured(run, rate, 1, a.secs) if log else run))
    finally:
        ng.stop()

    def fmt(v, d=1):
        return "—" if v is None else f"{v:,.{d}f}"

    summary = {}
    md = ["## Fixed rates beside h2load (open loop; CPU per response; medians)", "",
          "| req/s | connections | pacer default (`--send-window 1ms`) µs | send-lag p99 µs "
          "| pacer `--precise` µs | send-lag p99 µs | h2load `--rps` µs | default / h2load "
          "| precise / h2load | pacer `--burst-size C` µs | burst / h2load |",
          "|---|---|---|---|---|---|---|---|---|---|---|"]
    for rate, conns in cases:
        rows = res[f"{rate}_{conns}"]
        p, z, b, h = (med(rows[k], "cpu_us_per_resp")
                      for k in ("pacer", "pacer_precise", "pacer_burst", "h2load"))
        summary[f"fixed_{rate}_{conns}"] = {
            "pacer_cpu_us": p, "pacer_send_lag_p99_us": med(rows["pacer"], "send_lag_p99_us"),
            "precise_cpu_us": z, "precise_send_lag_p99_us": med(rows["pacer_precise"], "send_lag_p99_us"),
            "h2load_cpu_us": h, "default_over_h2load": ratio(p, h), "precise_over_h2load": ratio(z, h),
            "burst_cpu_us": b, "burst_over_h2load": ratio(b, h),
            "spread_burst_cpu_us": [r["cpu_us_per_resp"] for r in rows["pacer_burst"]],
            "spread_pacer_cpu_us": [r["cpu_us_per_resp"] for r in rows["pacer"]],
            "spread_precise_cpu_us": [r["cpu_us_per_resp"] for r in rows["pacer_precise"]],
            "spread_h2load_cpu_us": [r["cpu_us_per_resp"] for r in rows["h2load"]]}
        sm = summary[f"fixed_{rate}_{conns}"]
        md.append(f"| {rate:,} | {conns:,} | {fmt(p, 2)} | {fmt(sm['pacer_send_lag_p99_us'])} | "
                  f"{fmt(z, 2)} | {fmt(sm['precise_send_lag_p99_us'])} | {fmt(h, 2)} | "
                  f"{fmt(sm['default_over_h2load'], 2)} | {fmt(sm['precise_over_h2load'], 2)} | "
                  f"{fmt(b, 2)} | {fmt(sm['burst_over_h2load'], 2)} |")
    md += ["", "Spread of the repetitions (CPU µs per response):", ""]
    for rate, conns in cases:
        sm = summary[f"fixed_{rate}_{conns}"]
        md.append(f"- {rate:,} req/s, {conns:,} connections: default "
                  f"{', '.join(fmt(v, 2) for v in sm['spread_pacer_cpu_us'])}; precise "
                  f"{', '.join(fmt(v, 2) for v in sm['spread_precise_cpu_us'])}; burst "
                  f"{', '.join(fmt(v, 2) for v in sm['spread_burst_cpu_us'])}; h2load "
                  f"{', '.join(fmt(v, 2) for v in sm['spread_h2load_cpu_us'])}")
    md += arrival_table(res, cases, summary, fmt)
    md += ["", steal_line([r for k in res.values() for rs in k.values() for r in rs])]
    md += ["", "h2load `--rps R` is per connection and its connections' timers fire in step, "
           "so it offers the rate as bursts of C requests every C/rate seconds; "
           "`--burst-size C` gives pacer that arrival process (docs/run.md#bursts), "
           "the like-for-like comparison of the two implementations. The default and "
           "`--precise` columns spread the same rate evenly, one request at a time."]
    if not have_h2load:
        md += ["", "h2load not found (Debian nghttp2-client): its column is empty."]
    md.append("")
    return res, summary, md


FIXED_WHO = [("pacer", "pacer default"), ("pacer_precise", "pacer `--precise`"),
             ("pacer_burst", "pacer `--burst-size C`"), ("h2load", "h2load `--rps`")]


def fixed_cases(a):
    """FIXED_CASES, or --fixed-cases RATE/CONNS,... for a short look."""
    if not a.fixed_cases:
        return FIXED_CASES
    try:
        cases = [tuple(int(x) for x in c.split("/")) for c in a.fixed_cases.split(",")]
        if all(len(c) == 2 and min(c) > 0 for c in cases):
            return cases
    except ValueError:
        pass
    sys.exit(f"bench: --fixed-cases {a.fixed_cases!r}: give RATE/CONNS,... (positive whole "
             "numbers), e.g. 1000/50,5000/50")


def arrival_table(res, cases, summary, fmt):
    """The fixed-rate rows again, each generator's CPU per response beside the
    arrival precision nginx saw and the requests it saw (medians over the
    repetitions); the figures go into summary too. Nothing without them
    (--no-arrivals)."""
    if not any("arrival" in r for rows in res.values() for k in rows.values() for r in k):
        return []
    md = ["", "CPU per response beside the arrival precision measured at the target, so "
          "\"cheaper\" and \"as precise\" are read together. nginx logs each request with its "
          "own clock (`$msec`: the millisecond its event loop woke to serve it); the measured "
          "seconds start 1 s (the warm-up) after the run's first arrival. Precision: the share "
          "of windows whose request count is within ±20 % of the planned rate's (not the "
          "achieved rate's, so a generator that falls behind scores low too). A window is 1 ms, "
          f"or below {PRECISION_MIN_MEAN * 1000:,} req/s as many whole ms as hold "
          f"{PRECISION_MIN_MEAN} requests on average (1,000 req/s: 5 ms): at 1 ms, ±20 % of a "
          "mean under 1 holds no whole count, and of a mean of 1 only exactly 1. Even spacing "
          "scores near 100 %, bursts near 0, a Poisson process (`--arrival poisson`) the "
          "`Poisson %` column. Seen: the requests nginx logged in the measured seconds, of "
          "those planned (rate x seconds): a generator that sends short shows it here. "
          "(The JSON also has each run's share of 1 ms windows, `precision_1ms_pct`.)", "",
          "| req/s | connections | window ms | Poisson % | planned | "
          + " | ".join(f"{name}: µs · precision % · seen" for _, name in FIXED_WHO) + " |",
          "|---|---|---|---|---|" + "---|" * len(FIXED_WHO)]
    for rate, conns in cases:
        rows = res[f"{rate}_{conns}"]
        sm = summary[f"fixed_{rate}_{conns}"]
        arr = [r["arrival"] for k in rows.values() for r in k if "arrival" in r]
        if not arr:
            continue
        sm["arrival_window_ms"] = arr[0]["window_ms"]
        sm["arrival_planned"] = arr[0]["planned"]
        sm["arrival_poisson_pct"] = arr[0]["poisson_pct"]
        cells = []
        for who, _ in FIXED_WHO:
            ar = [r["arrival"] for r in rows[who] if "arrival" in r]
            pct = med(ar, "precision_pct")
            seen = med(ar, "seen")
            sm[f"{who}_arrival_precision_pct"] = pct
            sm[f"{who}_arrival_precision_1ms_pct"] = med(ar, "precision_1ms_pct")
            sm[f"{who}_arrival_seen"] = seen
            sm[f"spread_{who}_arrival_precision_pct"] = [x["precision_pct"] for x in ar]
            cells.append("—" if not ar else
                         f"{fmt(med(rows[who], 'cpu_us_per_resp'), 2)} · {fmt(pct)} · {fmt(seen, 0)}")
        md.append(f"| {rate:,} | {conns:,} | {sm['arrival_window_ms']} | "
                  f"{fmt(sm['arrival_poisson_pct'])} | {sm['arrival_planned']:,} | "
                  + " | ".join(cells) + " |")
    md += ["", "Spread of the repetitions (arrival precision %):", ""]
    for rate, conns in cases:
        sm = summary[f"fixed_{rate}_{conns}"]
        md.append(f"- {rate:,} req/s, {conns:,} connections: " + "; ".join(
            f"{name} {', '.join(fmt(v) for v in sm.get(f'spread_{who}_arrival_precision_pct', []))}"
            for who, name in FIXED_WHO))
    return md


# Where a response's CPU goes, by perf (`--children` shares of the samples):
# (label, symbols; the first one perf knows is taken).
PERF_PARTS = [
    ("write()", ["__GI___libc_write", "__libc_write", "write"]),
    ("  of which the target's receive path (loopback softirq)", ["net_rx_action"]),
    ("    of which waking the target's thread", ["sock_def_readable"]),
    ("recvmsg()", ["__libc_recvmsg", "recvmsg"]),
    ("sleeping and waking (clock_nanosleep)", ["clock_nanosleep@GLIBC_2.2.5", "clock_nanosleep",
                                               "__clock_nanosleep"]),
    ("epoll", ["epoll_pwait2", "epoll_wait", "__GI_epoll_pwait2"]),
]
PERF_CASES = [(1000, 50), (20000, 50), (20000, 1000)]


def perf_shares(data):
    """({symbol: children %}, {dso: self %}) of a perf.data file."""
    def report(*args):
        return subprocess.run(["perf", "report", "-i", data, "--stdio"] + list(args),
                              capture_output=True, text=True, timeout=300).stdout
    sym = {}
    for line in report("--children", "--sort", "sym", "-g", "none").splitlines():
        m = re.match(r"\s+([\d.]+)%\s+[\d.]+%\s+\[[^\]]+\]\s+(\S+)", line)
        if m:
            sym.setdefault(m.group(2), float(m.group(1)))
    dso = {}
    for line in report("--no-children", "--sort", "dso", "-g", "none").splitlines():
        m = re.match(r"\s+([\d.]+)%\s+(\S+)", line)
        if m:
            dso[m.group(2)] = float(m.group(1))
    return sym, dso


def perf_section(a, tmp):
    """pacer's default pacing against nginx under `perf record -g`: the
    shares of its CPU per response by where they go (no assertion; perf
    from Debian's linux-perf; skipped when it cannot record)."""
    md = ["## Where pacer's CPU per response goes (perf, default pacing, against nginx)", ""]
    if not shutil.which("perf"):
        return {}, md + ["perf not found (Debian linux-perf): not measured.", ""]
    port = free_port()
    url = f"http://127.0.0.1:{port}/"
    ng = start_nginx(tmp, port)
    rows = {}
    try:
        for rate, conns in PERF_CASES:
            data = os.path.join(tmp, f"perf-{rate}-{conns}.data")
            js = os.path.join(tmp, "perf.json")
            p = subprocess.run(["perf", "record", "-q", "-g", "-o", data, "--", "taskset", "-c",
                                "1", PACER, "run", url, "-q", "-o", js, "--rate", str(rate),
                                "-c", str(conns), "-d", f"{a.secs}s", "-w", "1s"],
                               capture_output=True, text=True, timeout=180)
            if p.returncode not in (0, 4) or not os.path.exists(data):
                return {}, md + ["perf could not record here: " + p.stderr.strip()[-300:], ""]
            d = json.load(open(js))
            sym, dso = perf_shares(data)
            rows[f"{rate}_{conns}"] = {"cpu_us_per_resp": d["generator"]["cpu_us_per_response"],
                                       "steal_pct": d["generator"].get("steal_pct"),
                                       "sym": {k: v for k, v in sym.items()
                                               if any(k in names for _, names in PERF_PARTS)},
                                       "dso": dso}
    finally:
        ng.stop()
    head = "| | " + " | ".join(f"{r:,}/s, {c:,} conns" for r, c in PERF_CASES) + " |"
    md += [head, "|---|" + "---|" * len(PERF_CASES)]
    md.append("| CPU µs per response (whole run) | " + " | ".join(
        f"{rows[f'{r}_{c}']['cpu_us_per_resp']:.1f}" for r, c in PERF_CASES) + " |")

    def cell(row, share):
        return "—" if share is None else f"{share:.0f} % ({share / 100 * row['cpu_us_per_resp']:.1f} µs)"
    for label, names in PERF_PARTS:
        cells = []
        for r, c in PERF_CASES:
            row = rows[f"{r}_{c}"]
            share = next((row["sym"][n] for n in names if n in row["sym"]), None)
            cells.append(cell(row, share))
        md.append(f"| {label} | " + " | ".join(cells) + " |")
    cells = []
    for r, c in PERF_CASES:
        row = rows[f"{r}_{c}"]
        own = sum(v for k, v in row["dso"].items() if k in ("pacer", os.path.basename(PACER)))
        cells.append(cell(row, own))
    md.append("| pacer's own code (user, its binary) | " + " | ".join(cells) + " |")
    md.append("| hypervisor steal during the run | " + " | ".join(
        "—" if rows[f"{r}_{c}"]["steal_pct"] is None else f"{rows[f'{r}_{c}']['steal_pct']:.1f} %"
        for r, c in PERF_CASES) + " |")
    md += ["", "Shares are perf's inclusive (`--children`) shares of pacer's samples; a µs figure "
           "is that share of the CPU per response. On loopback the kernel runs the target's "
           "receive path (the wake-up of its thread is part of it) inside the sender's `write()`: that "
           "part is the target's kernel work, paid by whichever generator sends, wrk and "
           "h2load alike, and on a real network it is on the target's machine.", ""]
    return rows, md


def perf_only(a, tmp):
    rows, md = perf_section(a, tmp)
    return rows, {}, md


def make_cert(tmp):
    """A self-signed EC certificate for localhost / 127.0.0.1 in tmp."""
    cert, key = os.path.join(tmp, "cert.pem"), os.path.join(tmp, "key.pem")
    if not os.path.exists(cert):
        subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
                        "ec_paramgen_curve:P-256", "-nodes", "-keyout", key, "-out", cert,
                        "-days", "2", "-subj", "/CN=localhost",
                        "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1"],
                       check=True, capture_output=True)
    return cert, key


def start_nginx_tls(tmp, port, tls_port):
    """nginx on CPU 0 with a plain and an https listener (TLS 1.2/1.3)."""
    cert, key = make_cert(tmp)
    conf = nginx_conf(tmp, "tls", (cert, key, "TLSv1.2 TLSv1.3"),
                      f"listen 127.0.0.1:{port}; listen 127.0.0.1:{tls_port} ssl;")
    p = Proc(["/usr/sbin/nginx", "-p", tmp, "-c", conf], 0, port)
    wait_port(tls_port)
    return p


def tls_section(a, tmp):
    """pacer and wrk over https against nginx, and pacer plain vs TLS on the
    same nginx. Returns (runs, summary, markdown lines)."""
    port, tls_port = free_port(), free_port()
    cert, _ = make_cert(tmp)
    plain = f"http://127.0.0.1:{port}/"
    https = f"https://127.0.0.1:{tls_port}/"
    res = {"tls_wrk_flat": [], "tls_pacer_flat": [], "tls_plain_pacer_flat": [],
           "tls_pacer_rate": [], "tls_plain_pacer_rate": [], "tls_pacer_paced": [],
           "tls_plain_pacer_paced": []}
    # --limited-ok: flat out, the generator is the limit by design (exit 0, not 4)
    flat = ["--concurrency", str(CONNS), "-d", f"{a.secs}s", "--limited-ok"]
    rate = ["--rate", a.tls_rate, "-c", str(CONNS), "-d", f"{a.secs}s", "-w", "1s", "--limited-ok"]
    ng = start_nginx_tls(tmp, port, tls_port)
    try:
        for i in range(a.reps):
            order = ["wrk", "pacer", "plain"] if i % 2 == 0 else ["plain", "pacer", "wrk"]
            for who in order:
                if who == "wrk":
                    res["tls_wrk_flat"].append(wrk_flat(https, a.secs))
                elif who == "pacer":
                    res["tls_pacer_flat"].append(pacer_run(https, flat + ["--cacert", cert], tmp))
                    res["tls_pacer_rate"].append(pacer_run(https, rate + ["--cacert", cert], tmp))
                else:
                    res["tls_plain_pacer_flat"].append(pacer_run(plain, flat, tmp))
                    res["tls_plain_pacer_rate"].append(pacer_run(plain, rate, tmp))
    finally:
        ng.stop()

    # A target as fast over TLS as in plain: `pacer serve` spending 40 us of
    # CPU per request, so both runs see the same pace and batching.
    plan = os.path.join(tmp, "paced.yaml")
    with open(plan, "w") as f:
        f.write("name: paced\nroutes:\n  - path: /\n    work: 40us\n    body: \"hello\\n\"\n"
                "    server_timing: false\n")
    for i in range(a.reps):
        for tls in ((False, True) if i % 2 == 0 else (True, False)):
            p2 = free_port()
            extra = ["--tls-cert", cert, "--tls-key", os.path.join(tmp, "key.pem")] if tls else []
            srv = Proc([PACER, "serve", "--plan", plan, "--threads", "1",
                        "--listen", f"127.0.0.1:{p2}"] + extra, 0, p2)
            try:
                u = f"{'https' if tls else 'http'}://127.0.0.1:{p2}/"
                args = flat + (["--cacert", cert] if tls else [])
                res["tls_pacer_paced" if tls else "tls_plain_pacer_paced"].append(
                    pacer_run(u, args, tmp))
            finally:
                srv.stop()

    s = {k + "_" + f: med(res[k], f) for k in res for f in ("rps", "cpu_us_per_resp")}
    s["tls_version"] = next((r.get("tls_version") for r in res["tls_pacer_flat"]), None)

    def ratio(x, y):
        return x / y if x and y else None

    s["tls_over_plain_cpu_flat"] = ratio(s["tls_pacer_flat_cpu_us_per_resp"],
                                         s["tls_plain_pacer_flat_cpu_us_per_resp"])
    s["tls_over_plain_cpu_rate"] = ratio(s["tls_pacer_rate_cpu_us_per_resp"],
                                         s["tls_plain_pacer_rate_cpu_us_per_resp"])
    s["tls_over_plain_cpu_paced"] = ratio(s["tls_pacer_paced_cpu_us_per_resp"],
                                          s["tls_plain_pacer_paced_cpu_us_per_resp"])
    s["tls_pacer_over_wrk_rps"] = ratio(s["tls_pacer_flat_rps"], s["tls_wrk_flat_rps"])
    s["tls_pacer_over_wrk_cpu"] = ratio(s["tls_pacer_flat_cpu_us_per_resp"],
                                        s["tls_wrk_flat_cpu_us_per_resp"])

    def fmt(v, d=1):
        return "—" if v is None else f"{v:,.{d}f}"

    md = ["## HTTPS: nginx with TLS (`return 200`, keep-alive, "
          f"{s['tls_version'] or 'TLS'}, ECDSA P-256 certificate)", "",
          "Flat out (closed loop); the TLS handshakes of the 64 connections happen once, at "
          "the start.", "",
          "| | wrk https | pacer https | pacer / wrk |", "|---|---|---|---|",
          f"| requests/s | {fmt(s['tls_wrk_flat_rps'])} | {fmt(s['tls_pacer_flat_rps'])} | "
          f"{fmt(s['tls_pacer_over_wrk_rps'], 2)} |",
          f"| generator CPU µs per response | {fmt(s['tls_wrk_flat_cpu_us_per_resp'], 2)} | "
          f"{fmt(s['tls_pacer_flat_cpu_us_per_resp'], 2)} | {fmt(s['tls_pacer_over_wrk_cpu'], 2)} |",
          "", "pacer's CPU per response, plain HTTP vs HTTPS on the same nginx (the issue asks "
          "for TLS within 1.5x of plain):", "",
          "| load | plain µs | https µs | https / plain |", "|---|---|---|---|",
          f"| flat out, {CONNS} connections | {fmt(s['tls_plain_pacer_flat_cpu_us_per_resp'], 2)} | "
          f"{fmt(s['tls_pacer_flat_cpu_us_per_resp'], 2)} | {fmt(s['tls_over_plain_cpu_flat'], 2)} |",
          f"| fixed {a.tls_rate} req/s (default pacing) | {fmt(s['tls_plain_pacer_rate_cpu_us_per_resp'], 2)} | "
          f"{fmt(s['tls_pacer_rate_cpu_us_per_resp'], 2)} | {fmt(s['tls_over_plain_cpu_rate'], 2)} |",
          f"| flat out, same-pace target¹ | {fmt(s['tls_plain_pacer_paced_cpu_us_per_resp'], 2)} | "
          f"{fmt(s['tls_pacer_paced_cpu_us_per_resp'], 2)} | {fmt(s['tls_over_plain_cpu_paced'], 2)} |",
          "",
          "Flat out against nginx, nginx is the limit in both columns, but it serves HTTPS more "
          f"slowly (plain {fmt(s['tls_plain_pacer_flat_rps'], 0)}/s, https "
          f"{fmt(s['tls_pacer_flat_rps'], 0)}/s), so each of pacer's loop wake-ups finds fewer "
          "responses and their fixed cost weighs more: that ratio overstates what TLS itself "
          "costs (one OpenSSL record each way per request). At a fixed rate the wake-ups "
          "dominate both columns.", "",
          "¹ `pacer serve` spending 40 µs of CPU per request (CPU 0), so it answers at nearly the "
          f"same pace over both (plain {fmt(s['tls_plain_pacer_paced_rps'], 0)}/s, https "
          f"{fmt(s['tls_pacer_paced_rps'], 0)}/s) and pacer's batching is alike: the closest of "
          "these rows to TLS's own cost.", ""]
    return res, s, md


def start_nginx_h2(tmp, port, tls_port, arrivals=None):
    """nginx on CPU 0 speaking HTTP/2: h2c (prior knowledge) on port, h2 over
    TLS (ALPN) on tls_port; its default 128 streams per connection;
    arrivals: nginx_conf's."""
    cert, key = make_cert(tmp)
    conf = nginx_conf(tmp, "h2-log" if arrivals else "h2", (cert, key, "TLSv1.3"),
                      f"listen 127.0.0.1:{port} http2; listen 127.0.0.1:{tls_port} ssl http2;",
                      arrivals)
    p = Proc(["/usr/sbin/nginx", "-p", tmp, "-c", conf], 0, port)
    wait_port(tls_port)
    return p


H2_CONNS, H2_STREAMS = 10, 10


def h2load_h2(url, secs, rate=None):
    """h2load over HTTP/2 (h2c for http://, ALPN h2 for https://), one thread,
    H2_CONNS x H2_STREAMS; at a fixed total rate when given (--rps is per
    client). CPU per response from rusage (its warm-up's responses are not
    in its count, so the figure leans against pacer, whose warm-up counts)."""
    args = ["h2load", "-t1", f"-c{H2_CONNS}", f"-m{H2_STREAMS}", f"-D{secs}",
            "--warm-up-time=1"]
    if rate:
        args.append(f"--rps={rate / H2_CONNS:g}")
    rc, out, cpu, rss = rusage_run(args + [url])
    m = re.search(r"requests: \d+ total, \d+ started, (\d+) done, (\d+) succeeded", out)
    if rc != 0 or not m:
        raise RuntimeError("h2load failed: " + out[-2000:])
    n = int(m.group(2))
    return {"responses": n, "rps": n / secs, "cpu_us_per_resp": cpu * 1e6 / max(n, 1),
            "rss_kib": rss}


def h2_section(a, tmp):
    """pacer beside h2load over nginx's HTTP/2, h2c and TLS, flat out (closed
    loop) and at a fixed rate, interleaved."""
    res = {}
    if not shutil.which("h2load"):
        return res, {}, ["## HTTP/2 beside h2load", "", "h2load not found (Debian nghttp2-client).", ""]
    # two nginx alike but for the arrival log, which the fixed-rate runs
    # read and which would slow nginx flat out, where it is the limit
    # (--no-arrivals: the one without it throughout)
    port, tls_port, lport, ltls_port = free_port(), free_port(), free_port(), free_port()
    ng = start_nginx_h2(tmp, port, tls_port)
    log, ng_log = None, None
    if a.arrivals:
        log = ArrivalLog(tmp, "h2")
        try:
            ng_log = start_nginx_h2(tmp, lport, ltls_port, log.path)
        except Exception:
            ng.stop()
            raise
    else:
        lport, ltls_port = port, tls_port
    rate = a.h2_rate
    cases = [("h2c", "http://127.0.0.1:{}/", (port, lport), ["--h2c"]),
             ("h2", "https://127.0.0.1:{}/", (tls_port, ltls_port), ["--http2", "--insecure"])]
    try:
        for name, url_fmt, ports, flags in cases:
            for mode in ("flat", "rate", "rate_precise", "rate_burst"):
                url = url_fmt.format(ports[0] if mode == "flat" else ports[1])
                rows = res.setdefault(f"{name}_{mode}", {"pacer": [], "h2load": []})
                for i in range(a.reps):
                    for who in (["pacer", "h2load"] if i % 2 == 0 else ["h2load", "pacer"]):
                        if who == "h2load":
                            run = lambda: h2load_h2(url, a.secs, None if mode == "flat" else rate)
                        elif mode == "flat":
                            run = lambda: pacer_run(url, flags + [
                                "--concurrency", str(H2_CONNS), "--max-streams", str(H2_STREAMS),
                                "-d", f"{a.secs}s", "-w", "1s"], tmp)
                        else:
                            # rate_burst: h2load's arrival process (its clients'
                            # timers fire in step: bursts of H2_CONNS)
                            pace = {"rate_precise": ["--precise"],
                                    "rate_burst": ["--burst-size", str(H2_CONNS)]}.get(mode, [])
                            run = lambda: pacer_run(url, flags + pace + [
                                "--rate", str(rate), "-c", str(H2_CONNS), "--max-streams",
                                str(H2_STREAMS), "-d", f"{a.secs}s", "-w", "1s"], tmp)
                        # at a fixed rate, the arrival precision nginx saw
                        rows[who].append(run() if mode == "flat" or not log else
                                         log.measured(run, rate, 1, a.secs)())
    finally:
        ng.stop()
        if ng_log:
            ng_log.stop()
    sc = h2_self_contained_rows(a, tmp)
    if sc:
        res["self-contained_h2c"] = sc

    def fmt(v, d=1):
        return "—" if v is None else f"{v:,.{d}f}"

    summ = {}
    md = [f"## HTTP/2 beside h2load ({H2_CONNS} connections x {H2_STREAMS} streams, one thread)", "",
          f"Flat out: closed loop, pacer `--concurrency {H2_CONNS} --max-streams {H2_STREAMS}`, h2load "
          f"`-c{H2_CONNS} -m{H2_STREAMS}`. Fixed rate: {rate:g} req/s, pacer `--rate` (open loop; "
          "its default batched pacing, `--send-window 1ms`; `rate precise`: `--precise`; "
          f"`rate burst`: `--burst-size {H2_CONNS}`, the arrival process of h2load's `--rps`, whose "
          "clients' timers fire in step), h2load `--rps` per client. CPU per response: the whole generator process's user+sys over "
          "its responses (pacer's 1 s warm-up included). `self-contained h2c`: flat out, "
          "`pacer run --self-contained --h2c` (driver and embedded target in one process on "
          "CPU 1) beside h2load driving `pacer serve --h2c` (on CPU 0); both CPU columns count "
          "both ends (h2load's: h2load + pacer serve). Arrival precision (fixed rates): "
          "the share of windows within ±20 % of the planned rate's count, from nginx's "
          f"access log over the measured seconds ({precision_window_ms(rate)} ms windows at "
          f"{rate:g} req/s, where a Poisson process would score "
          f"{poisson_share(rate * precision_window_ms(rate) / 1000):.1f} %), and the "
          f"requests nginx saw there of the {round(rate * a.secs):,} planned, as in the "
          "HTTP/1.1 fixed-rate section.", "",
          "| | pacer req/s | h2load req/s | pacer CPU µs/resp | h2load CPU µs/resp | pacer / h2load CPU "
          "| pacer precision % · seen | h2load precision % · seen |",
          "|---|---|---|---|---|---|---|---|"]
    for key, rows in res.items():
        p_rps, h_rps = med(rows["pacer"], "rps"), med(rows["h2load"], "rps")
        p_cpu, h_cpu = med(rows["pacer"], "cpu_us_per_resp"), med(rows["h2load"], "cpu_us_per_resp")
        summ[f"{key}_pacer_rps"], summ[f"{key}_h2load_rps"] = p_rps, h_rps
        summ[f"{key}_pacer_cpu_us"], summ[f"{key}_h2load_cpu_us"] = p_cpu, h_cpu
        summ[f"{key}_pacer_over_h2load_cpu"] = ratio(p_cpu, h_cpu)
        prec = []
        for who in ("pacer", "h2load"):
            ar = [r["arrival"] for r in rows[who] if "arrival" in r]
            pct, seen = med(ar, "precision_pct"), med(ar, "seen")
            if ar:
                summ[f"{key}_{who}_arrival_precision_pct"] = pct
                summ[f"{key}_{who}_arrival_seen"] = seen
            prec.append(f"{fmt(pct)} · {fmt(seen, 0)}" if ar else "")
        md.append(f"| {key.replace('_', ' ')} | {fmt(p_rps)} | {fmt(h_rps)} | {fmt(p_cpu, 2)} | "
                  f"{fmt(h_cpu, 2)} | {fmt(ratio(p_cpu, h_cpu), 2)} | {prec[0]} | {prec[1]} |")
    md.append("")
    return res, summ, md


H3_CONNS, H3_STREAMS = 10, 10
SERVED_RE = re.compile(r"pacer serve: served (\d+) requests on (\d+) connections")


def free_tcp_udp_port():
    """A port free for both TCP and UDP on 127.0.0.1 a moment ago (HTTP/3
    targets listen on TCP and on the UDP port of the same number)."""
    for _ in range(50):
        p = free_port()
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as u:
            try:
                u.bind(("127.0.0.1", p))
            except OSError:
                continue
        return p
    raise RuntimeError("no port free for both TCP and UDP")


class H3Target:
    """An HTTP/3 target on CPU 0, started afresh for each run so that its
    count of requests is that run's: `pacer serve --plan hello --http3
    --max-streams 10` (one thread; its closing line has the count) or
    Debian's Caddy (`tls internal`, "hello"; its JSON access log has the
    count). Stopped by PID."""

    def __init__(self, kind, tmp):
        self.kind, self.tmp = kind, tmp
        self.port = free_tcp_udp_port()
        self.err = open(os.path.join(tmp, f"h3-{kind}.err"), "w+")
        if kind == "serve":
            argv = [PACER, "serve", "--plan", "hello", "--http3", "--http2", "--threads", "1",
                    "--max-streams", str(H3_STREAMS), "--listen", f"127.0.0.1:{self.port}"]
            env = None
        else:
            d = os.path.join(tmp, "caddy")  # its CA and certificates, kept between runs
            os.makedirs(d, exist_ok=True)
            self.log = os.path.join(tmp, "caddy-access.log")
            if os.path.exists(self.log):
                os.unlink(self.log)
            conf = os.path.join(tmp, "Caddyfile")
            with open(conf, "w") as f:
                # localhost too: ngtcp2's example client sends SNI "localhost"
                # for an IP address, and Caddy refuses a name it has no
                # certificate for
                f.write(f"""{{
	admin off
	auto_https disable_redirects
	skip_install_trust
	storage file_system {d}/data
	http_port {free_port()}
	https_port {self.port}
	servers {{
		protocols h1 h2 h3
	}}
}}
https://127.0.0.1:{self.port}, https://localhost:{self.port} {{
	bind 127.0.0.1
	tls internal
	log {{
		output file {self.log}
		format json
	}}
	respond "hello" 200
}}
""")
            argv = ["caddy", "run", "--config", conf, "--adapter", "caddyfile"]
            env = dict(os.environ, HOME=d, XDG_DATA_HOME=os.path.join(d, "xdg"),
                       XDG_CONFIG_HOME=os.path.join(d, "xdg"))
        self.p = subprocess.Popen(["taskset", "-c", "0"] + argv, stdin=subprocess.DEVNULL,
                                  stdout=subprocess.DEVNULL, stderr=self.err,
                                  cwd=tmp if kind == "caddy" else None, env=env)
        wait_port(self.port, 30)
        end = time.time() + 30
        while kind == "caddy" and "enabling HTTP/3 listener" not in self.output():
            if time.time() > end or self.p.poll() is not None:
                self.stop()
                raise RuntimeError("caddy: no HTTP/3 listener: " + self.output()[-2000:])
            time.sleep(0.05)
        self.cpu0 = proc_cpu_s(self.p.pid)

    def output(self):
        with open(self.err.name, errors="replace") as f:
            return f.read()

    def url(self):
        return f"https://127.0.0.1:{self.port}/"

    def stop(self):
        """Stop it; (requests it counted, its CPU seconds since start())."""
        cpu = proc_cpu_s(self.p.pid) - self.cpu0 if self.p.poll() is None else None
        if self.p.poll() is None:
            self.p.send_signal(signal.SIGINT)
            try:
                self.p.wait(10)
            except subprocess.TimeoutExpired:
                self.p.kill()
                self.p.wait()
        self.err.close()
        if self.kind == "serve":
            m = SERVED_RE.search(self.output())
            n = int(m.group(1)) if m else None
        else:
            n = 0
            if os.path.exists(self.log):
                with open(self.log) as f:
                    n = sum(1 for line in f if '"status":200' in line)
        return n, cpu


def gtls_flat(target, tmp, n_each):
    """ngtcp2's example client (Debian ngtcp2-client, gtlsclient) as the
    HTTP/3 peer: H3_CONNS processes at once, each one QUIC connection
    asking for n_each requests of the URL and exiting when all its streams
    have closed; it opens as many streams at a time as the server's
    MAX_STREAMS credit allows. CPU from rusage of the shell that waits for
    them (their user+sys summed); responses from the target's own count."""
    errs = os.path.join(tmp, "gtls-err")
    script = ('pids=""; for i in $(seq %d); do gtlsclient -q --no-quic-dump --no-http-dump '
              '--exit-on-all-streams-close -n %d 127.0.0.1 %d %s >/dev/null 2>%s.$i & '
              'pids="$pids $!"; done; rc=0; for p in $pids; do wait $p || rc=1; done; exit $rc'
              % (H3_CONNS, n_each, target.port, target.url(), errs))
    t0 = time.monotonic()
    rc, _, cpu, rss = rusage_run(["sh", "-c", script])
    wall = time.monotonic() - t0
    steal = dict(last_steal)
    served, tcpu = target.stop()
    if rc != 0 or served is None:
        raise RuntimeError(f"gtlsclient failed ({rc}), target counted {served}")
    return {"responses": served, "asked": n_each * H3_CONNS, "rps": served / wall,
            "wall_s": wall, "cpu_us_per_resp": cpu * 1e6 / max(served, 1), "rss_kib": rss,
            "target_cpu_us_per_resp": tcpu * 1e6 / max(served, 1) if tcpu is not None else None,
            "steal_pct": steal}


def pacer_h3(target, tmp, args, proto="--http3"):
    """pacer --http3 (or proto: --http2, over TLS on the target's TCP
    port) against a fresh target; the target's count and CPU per response
    beside pacer's figures."""
    try:
        row = pacer_run(target.url(), [proto, "--insecure", "--max-streams", str(H3_STREAMS),
                                       "-w", "1s"] + args, tmp)
    finally:
        served, tcpu = target.stop()
    row["served"] = served
    with open(os.path.join(tmp, "r.json")) as f:
        d = json.load(f)
    m = d["measure"]
    row["sent"] = m["requests"]["sent"] + d.get("warmup", {}).get("requests", {}).get("sent", 0)
    if "quic" in m:
        row["packets_lost"] = m["quic"]["packets_lost"]
        row["cwnd_stalls"] = m["quic"]["cwnd_stalls"]
        row["smoothed_rtt_mean_us"] = m["quic"]["smoothed_rtt"]["mean_us"]
    row["limited"] = bool(d.get("generator_limited", {}).get("flagged"))
    if tcpu is not None and served:
        row["target_cpu_us_per_resp"] = tcpu * 1e6 / served
    return row


def h3_section(a, tmp):
    """pacer --http3 beside ngtcp2's example client (Debian's h2load has no
    QUIC), H3_CONNS connections x H3_STREAMS streams, against `pacer serve
    --http3` and against Caddy, flat out and at a fixed rate, interleaved;
    each run against a target started for it."""
    res = {}
    head = [f"## HTTP/3 beside ngtcp2's example client ({H3_CONNS} connections x {H3_STREAMS} "
            "streams)", ""]
    if not shutil.which("gtlsclient"):
        return res, {}, head + ["gtlsclient not found (Debian ngtcp2-client): not measured.", ""]
    targets = ["serve"] + (["caddy"] if shutil.which("caddy") else [])
    rate = a.h3_rate
    n_each = {}  # requests per gtlsclient connection, sized from its last rate
    for kind in targets:
        for mode in ("flat", "rate"):
            rows = res.setdefault(f"{kind}_{mode}", {"pacer": [], "peer": []})
            for i in range(a.reps):
                for who in (["pacer", "peer"] if i % 2 == 0 else ["peer", "pacer"]):
                    t = H3Target(kind, tmp)
                    if who == "peer" and mode == "rate":
                        # gtlsclient has no rate: the comparable is pacer's
                        # own HTTP/2 over TLS, same rate, same server
                        r = pacer_h3(t, tmp, ["--rate", f"{rate:g}", "-c", str(H3_CONNS),
                                              "-d", f"{a.secs}s"], "--http2")
                    elif who == "peer":
                        n = n_each.get(kind, 2000)
                        r = gtls_flat(t, tmp, n)
                        n_each[kind] = max(500, int(r["rps"] * a.secs / H3_CONNS))
                    elif mode == "flat":
                        r = pacer_h3(t, tmp, ["--concurrency", str(H3_CONNS), "-d",
                                              f"{a.secs}s", "--limited-ok"])
                    else:
                        r = pacer_h3(t, tmp, ["--rate", f"{rate:g}", "-c", str(H3_CONNS),
                                              "-d", f"{a.secs}s"])
                    rows[who].append(r)

    def fmt(v, d=1):
        return "—" if v is None else f"{v:,.{d}f}"

    summ = {}
    md = head + [
        "Debian's h2load (nghttp2 1.52) is built without QUIC (not linked with ngtcp2; "
        "`--npn-list h3` opens a TCP connection, offers h3 in TLS and every request fails), so "
        "the peer is ngtcp2's example client (`gtlsclient`, Debian ngtcp2-client 0.12, GnuTLS "
        f"like pacer): one QUIC connection per process, so {H3_CONNS} processes at once, each "
        "asking for N requests (`-n N --exit-on-all-streams-close -q --no-quic-dump "
        f"--no-http-dump`, N sized from its last rate to take about {a.secs} s); it opens as "
        "many streams at once as the server's `MAX_STREAMS` allows. pacer: `--http3 "
        f"--concurrency {H3_CONNS} --max-streams {H3_STREAMS} -d {a.secs}s -w 1s` flat out "
        f"(closed loop), `--rate {rate:g} -c {H3_CONNS} --max-streams {H3_STREAMS}` at a fixed "
        "rate (open loop, default pacing). gtlsclient has no rate option (nor a delay between "
        "requests), so no peer runs at a fixed rate: beside pacer's HTTP/3 there is pacer's "
        "HTTP/2 over TLS (`--http2`, the same options) against the same server's TCP port.", "",
        "Targets on CPU 0, started afresh for each run: `pacer serve --plan hello --http3 "
        f"--http2 --threads 1 --max-streams {H3_STREAMS}` (`MAX_STREAMS` {H3_STREAMS}, so "
        f"gtlsclient runs {H3_STREAMS} streams a connection as pacer does: the like-for-like "
        "target), and Caddy (`tls internal`, `respond \"hello\"`, a JSON access log to count "
        "by), whose quic-go offers 100 streams a connection (not configurable in Caddy 2.6): "
        f"gtlsclient keeps up to 100 in flight there, pacer {H3_STREAMS}. Generators on CPU 1. "
        "Responses are the target's count (its closing line, its access log); CPU per "
        "response: the generator processes' user+sys over them (pacer's 1 s warm-up included; "
        "gtlsclient's process starts and handshakes included); gtlsclient's rate: responses "
        "over the wall time of its run.", "",
        "Flat out:", "",
        "| target | pacer req/s | gtlsclient req/s | pacer CPU µs/resp | gtlsclient CPU µs/resp "
        "| pacer / gtlsclient CPU | target CPU µs/resp (pacer's run, gtlsclient's) |",
        "|---|---|---|---|---|---|---|"]
    names = {"serve": "`pacer serve --http3`", "caddy": "Caddy"}
    for key, rows in res.items():
        peer = "gtlsclient" if key.endswith("_flat") else "h2"
        p_rps, g_rps = med(rows["pacer"], "rps"), med(rows["peer"], "rps")
        p_cpu, g_cpu = med(rows["pacer"], "cpu_us_per_resp"), med(rows["peer"], "cpu_us_per_resp")
        tp, tg = med(rows["pacer"], "target_cpu_us_per_resp"), med(rows["peer"], "target_cpu_us_per_resp")
        summ[f"h3_{key}_pacer_rps"], summ[f"h3_{key}_{peer}_rps"] = p_rps, g_rps
        summ[f"h3_{key}_pacer_cpu_us"], summ[f"h3_{key}_{peer}_cpu_us"] = p_cpu, g_cpu
        summ[f"h3_{key}_pacer_over_{peer}_cpu"] = ratio(p_cpu, g_cpu)
        summ[f"h3_{key}_pacer_over_{peer}_rps"] = ratio(p_rps, g_rps)
        summ[f"h3_{key}_target_cpu_us"] = [tp, tg]
        summ[f"h3_{key}_spread_pacer_cpu_us"] = [r["cpu_us_per_resp"] for r in rows["pacer"]]
        summ[f"h3_{key}_spread_{peer}_cpu_us"] = [r["cpu_us_per_resp"] for r in rows["peer"]]
        summ[f"h3_{key}_pacer_limited_runs"] = sum(r["limited"] for r in rows["pacer"])
        summ[f"h3_{key}_{peer}_limited_runs"] = sum(r.get("limited", 0) for r in rows["peer"])
        if peer == "gtlsclient":
            md.append(f"| {names[key[:-5]]} | {fmt(p_rps)} | {fmt(g_rps)} | {fmt(p_cpu, 2)} | "
                      f"{fmt(g_cpu, 2)} | {fmt(ratio(p_cpu, g_cpu), 2)} | {fmt(tp, 2)}, {fmt(tg, 2)} |")
    md += ["", f"At a fixed {rate:g} req/s (no peer has a rate: pacer's HTTP/3 beside its "
           "HTTP/2 over TLS on the same server):", "",
           "| target | achieved/s h3, h2 | send-lag p99 µs h3, h2 | latency p99 µs h3, h2 | "
           "pacer CPU µs/resp h3 | pacer CPU µs/resp h2 | h3 / h2 CPU | target CPU µs/resp "
           "h3, h2 | runs pacer flagged generator-limited h3, h2 |",
           "|---|---|---|---|---|---|---|---|---|"]
    for key, rows in res.items():
        if key.endswith("_rate"):
            p, h = rows["pacer"], rows["peer"]

            def both(k, d=1):
                return f"{fmt(med(p, k), d)}, {fmt(med(h, k), d)}"
            pc, hc = summ[f"h3_{key}_pacer_cpu_us"], summ[f"h3_{key}_h2_cpu_us"]
            md.append(f"| {names[key[:-5]]} | {both('rps')} | {both('send_lag_p99_us', 0)} | "
                      f"{both('latency_p99_us', 0)} | {fmt(pc, 2)} | {fmt(hc, 2)} | "
                      f"{fmt(ratio(pc, hc), 2)} | {both('target_cpu_us_per_resp', 2)} | "
                      f"{summ[f'h3_{key}_pacer_limited_runs']} of {len(p)}, "
                      f"{summ[f'h3_{key}_h2_limited_runs']} of {len(h)} |")
    top = max((r["rps"] for rows in (res.get("caddy_flat"),) if rows
               for rs in rows.values() for r in rs), default=None)
    if top is not None and top < rate:
        md += ["", f"Caddy on one CPU, writing its access log, answered HTTP/3 at most "
               f"{top:,.0f}/s flat out here: below {rate:g} req/s, so the fixed-rate HTTP/3 run "
               "against it is bound by the target (requests queue in pacer, as its send lag "
               "shows), not a measure of pacer."]
    names = {"serve_flat": "`pacer serve --http3`, flat out",
             "serve_rate": f"`pacer serve --http3`, {rate:g} req/s",
             "caddy_flat": "Caddy, flat out", "caddy_rate": f"Caddy, {rate:g} req/s"}
    bad = [(k, r["sent"], r["served"]) for k, rows in res.items() for rs in rows.values()
           for r in rs if "sent" in r and r["served"] != r["sent"]]

    def spread(k):
        peer = "gtlsclient" if k.endswith("_flat") else "pacer --http2"
        other = summ[f"h3_{k}_spread_{'gtlsclient' if k.endswith('_flat') else 'h2'}_cpu_us"]
        return (f"{names[k]}: pacer " + ", ".join(fmt(v, 2) for v in summ[f"h3_{k}_spread_pacer_cpu_us"])
                + (f"; {peer} " + ", ".join(fmt(v, 2) for v in other) if other else ""))
    md += ["", "Spread of the repetitions (generator CPU µs per response): "
           + "; ".join(spread(k) for k in res), "",
           steal_line([r for rows in res.values() for rs in rows.values() for r in rs],
                      retried=False), "",
           ("Every request pacer sent was counted by the target." if not bad else
            "Runs where the target's count differs from pacer's requests sent (key, sent, "
            "counted): " + ", ".join(map(str, bad))), "",
           "On a shared machine the fixed-rate runs' send lag and generator-limited flags are "
           "its scheduling more than pacer: read the CPU per response and the ratios.", ""]
    return res, summ, md


def proc_cpu_s(pid):
    """User + system CPU seconds of process pid so far (/proc/PID/stat)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def h2_self_contained_rows(a, tmp):
    """pacer --self-contained --h2c flat out, and h2load against `pacer serve
    --h2c`, interleaved; CPU per response counts both ends of each."""
    rows = {"pacer": [], "h2load": []}
    for i in range(a.reps):
        for who in (["pacer", "h2load"] if i % 2 == 0 else ["h2load", "pacer"]):
            if who == "pacer":
                rows[who].append(pacer_run("--self-contained", [
                    "--h2c", "--concurrency", str(H2_CONNS), "--max-streams", str(H2_STREAMS),
                    "-d", f"{a.secs}s", "-w", "1s"], tmp))
                continue
            port = free_port()
            srv = Proc([PACER, "serve", "--plan", "hello", "--h2c", "--listen",
                        f"127.0.0.1:{port}"], 0, port)
            try:
                c0 = proc_cpu_s(srv.p.pid)
                r = h2load_h2(f"http://127.0.0.1:{port}/", a.secs)
                served = proc_cpu_s(srv.p.pid) - c0
            finally:
                srv.stop()
            r["serve_cpu_us_per_resp"] = served * 1e6 / max(r["responses"], 1)
            r["cpu_us_per_resp"] += r["serve_cpu_us_per_resp"]
            rows[who].append(r)
    return rows


def start_serve(port):
    return Proc([PACER, "serve", "--plan", "hello", "--threads", "1",
                 "--listen", f"127.0.0.1:{port}"], 0, port)


def steal_ticks():
    """{cpu index: steal ticks} from /proc/stat (the 8th figure of cpuN)."""
    out = {}
    try:
        with open("/proc/stat") as f:
            for line in f:
                w = line.split()
                if w and w[0].startswith("cpu") and w[0][3:].isdigit() and len(w) > 8:
                    out[int(w[0][3:])] = int(w[8])
    except OSError:
        pass
    return out


TICK_S = 1.0 / os.sysconf("SC_CLK_TCK")
last_steal = {}  # the steal of rusage_run's last run: {"gen": %, "target": %} (CPU 1, CPU 0)


def timer_lateness_us(period_s=0.001, n=2000):
    """A bare sleep loop on CPU 1 (timer slack 1 ns, as pacer's workers):
    (p50, p99) of how late it woke, in microseconds. Python adds a few."""
    import ctypes
    mask = os.sched_getaffinity(0)
    try:
        ctypes.CDLL(None, use_errno=True).prctl(29, 1, 0, 0, 0)  # PR_SET_TIMERSLACK
        os.sched_setaffinity(0, {1})
    except (OSError, AttributeError):
        pass
    late, t = [], time.monotonic()
    for _ in range(n):
        t += period_s
        d = t - time.monotonic()
        if d > 0:
            time.sleep(d)
        now = time.monotonic()
        late.append((now - t) * 1e6)
        t = max(t, now)
    try:
        os.sched_setaffinity(0, mask)
    except OSError:
        pass
    late.sort()
    return late[n // 2], late[n * 99 // 100]


def rusage_run(argv):
    """Run argv pinned to CPU 1 under GNU time; return (exit code, stdout,
    CPU seconds user+sys, peak RSS KiB) of that process alone. (os.wait4 on a
    child forked from Python would count Python's own RSS in ru_maxrss.)"""
    tf = argv_out_path + ".time"
    s0, t0 = steal_ticks(), time.monotonic()
    p = subprocess.run(["/usr/bin/time", "-o", tf, "-f", "%U %S %M", "taskset", "-c", "1"] + argv,
                       stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, timeout=180)
    s1, wall = steal_ticks(), time.monotonic() - t0
    last_steal.clear()
    for key, cpu in (("gen", 1), ("target", 0)):
        if cpu in s0 and cpu in s1 and wall > 0:
            last_steal[key] = 100.0 * (s1[cpu] - s0[cpu]) * TICK_S / wall
    with open(tf) as f:
        last = f.read().strip().splitlines()[-1].split()
    return p.returncode, p.stdout, float(last[0]) + float(last[1]), int(last[2])


argv_out_path = ""


def wrk_flat(url, secs, extra=()):
    rc, out, cpu, rss = rusage_run(["wrk", "-t1", f"-c{CONNS}", f"-d{secs}s"] + list(extra) + [url])
    m = re.search(r"(\d+) requests in", out)
    rps = re.search(r"Requests/sec:\s*([\d.]+)", out)
    if rc != 0 or not m or not rps:
        raise RuntimeError("wrk failed: " + out)
    n = int(m.group(1))
    return {"responses": n, "rps": float(rps.group(1)), "cpu_us_per_resp": cpu * 1e6 / n,
            "rss_kib": rss}


REALTIME_RATE = 5000
REALTIME_CONNS = 50


class Hog:
    """A CPU hog pinned to the generator's CPU: a busy loop at the normal
    priority (a build, a neighbour), stopped by PID."""

    def __init__(self, cpu=1):
        self.p = subprocess.Popen(["taskset", "-c", str(cpu), sys.executable, "-c",
                                   "while True: pass"])

    def stop(self):
        self.p.kill()
        self.p.wait()


def realtime_section(a, tmp):
    """pacer at a fixed rate against nginx on CPU 0, pacer on CPU 1: alone,
    beside a CPU hog on CPU 1, and beside the hog with --realtime;
    interleaved. What --realtime buys is the lag with the hog."""
    cases = [("alone", [], False), ("hog", [], True), ("hog_realtime", ["--realtime"], True)]
    res = {k: [] for k, _, _ in cases}
    port = free_port()
    url = f"http://127.0.0.1:{port}/"
    ng = start_nginx(tmp, port)
    try:
        for i in range(a.reps):
            order = cases if i % 2 == 0 else list(reversed(cases))
            for key, extra, hog in order:
                h = Hog() if hog else None
                try:
                    row = pacer_run(url, ["--rate", str(REALTIME_RATE), "-c", str(REALTIME_CONNS),
                                          "-d", f"{a.secs}s", "-w", "1s"] + extra, tmp)
                finally:
                    if h:
                        h.stop()
                res[key].append(row)
    finally:
        ng.stop()

    def fmt(v, d=1):
        return "—" if v is None else f"{v:,.{d}f}"

    summary = {}
    md = [f"## `--realtime` against a CPU hog on pacer's CPU ({REALTIME_RATE:,} req/s, "
          f"{REALTIME_CONNS} connections; medians)", "",
          "| | achieved/s | send-lag p99 µs | loop-lag p99 µs | latency p99 µs | "
          "CPU µs per response |", "|---|---|---|---|---|---|"]
    names = {"alone": "pacer alone on CPU 1", "hog": "a busy loop on CPU 1 beside it",
             "hog_realtime": "the busy loop, pacer `--realtime`"}
    for key, _, _ in cases:
        rows = res[key]
        sm = {k: med(rows, k) for k in ("rps", "send_lag_p99_us", "loop_lag_p99_us",
                                         "latency_p99_us", "cpu_us_per_resp")}
        sm["spread_loop_lag_p99_us"] = [r["loop_lag_p99_us"] for r in rows]
        summary[f"realtime_{key}"] = sm
        md.append(f"| {names[key]} | {fmt(sm['rps'])} | {fmt(sm['send_lag_p99_us'])} | "
                  f"{fmt(sm['loop_lag_p99_us'])} | {fmt(sm['latency_p99_us'])} | "
                  f"{fmt(sm['cpu_us_per_resp'], 2)} |")
    md += ["", "Loop-lag p99 of each repetition (µs): " + "; ".join(
        f"{names[k]}: " + ", ".join(fmt(v) for v in summary[f'realtime_{k}']['spread_loop_lag_p99_us'])
        for k, _, _ in cases), "",
        steal_line([r for rs in res.values() for r in rs], retried=False), "",
        "The hog is a normal-priority busy loop pinned to pacer's CPU: the kernel shares the "
        "CPU between them by time slices, so a pacer woken for a due time may wait a slice. "
        "Under `--realtime` (SCHED_RR, priority 1) pacer preempts it whenever it wakes "
        "(docs/run.md#realtime).", ""]
    return res, summary, md


TRIVIAL_SCRIPT = "request = function()\n  return wrk.format()\nend\n"


def script_section(a, tmp):
    """wrk and pacer flat out against nginx (closed loop, one thread, CONNS
    connections), each without a script and with the same trivial
    request() (wrk.format() each call), interleaved: what a script costs
    per response in each."""
    script = os.path.join(tmp, "trivial.lua")
    with open(script, "w") as f:
        f.write(TRIVIAL_SCRIPT)
    cases = [("wrk", []), ("wrk_script", ["-s", script]), ("pacer", []),
             ("pacer_script", ["-s", script])]
    res = {k: [] for k, _ in cases}
    port = free_port()
    url = f"http://127.0.0.1:{port}/"
    ng = start_nginx(tmp, port)
    try:
        for i in range(a.reps):
            for key, extra in (cases if i % 2 == 0 else list(reversed(cases))):
                if key.startswith("wrk"):
                    res[key].append(wrk_flat(url, a.secs, extra))
                else:
                    res[key].append(pacer_run(
                        url, ["--concurrency", str(CONNS), "-d", f"{a.secs}s"] + extra, tmp))
    finally:
        ng.stop()
    summary = {f"script_{k}_{m}": med(res[k], m) for k, _ in cases
               for m in ("rps", "cpu_us_per_resp")}

    def fmt(v, d=1):
        return "—" if v is None else f"{v:,.{d}f}"

    md = ["## A trivial `request()` script (`-s`, wrk's Lua interface), flat out against nginx", "",
          "| | no script | `request()` returning `wrk.format()` | script / none |",
          "|---|---|---|---|"]
    for who in ("wrk", "pacer"):
        for m, label, d in (("cpu_us_per_resp", "generator CPU µs per response", 2),
                            ("rps", "requests/s", 1)):
            x, y = summary[f"script_{who}_{m}"], summary[f"script_{who}_script_{m}"]
            md.append(f"| {who}: {label} | {fmt(x, d)} | {fmt(y, d)} | {fmt(ratio(y, x), 2)} |")
    md += ["", steal_line([r for rs in res.values() for r in rs], retried=False), "",
           "pacer runs a script in LuaJIT's interpreter (its JIT compiler is off so that the "
           "per-call time limit holds; docs/scripting.md); wrk compiles it.", ""]
    return res, summary, md


def pacer_run(url, args, tmp):
    js = os.path.join(tmp, "r.json")
    rc, out, cpu, rss = rusage_run([PACER, "run", url, "-q", "-o", js] + args)
    if rc not in (0, 4):  # 4: flagged generator-limited, still a measurement
        raise RuntimeError(f"pacer failed ({rc}): {out}")
    with open(js) as f:
        d = json.load(f)
    m = d["measure"]
    n = m["requests"]["completed"] + d.get("warmup", {}).get("requests", {}).get("completed", 0)
    return {"responses": m["requests"]["completed"], "rps": m["rate"]["achieved_per_s"],
            "cpu_us_per_resp": cpu * 1e6 / max(n, 1), "rss_kib": rss,
            "send_lag_p99_us": m["send_lag"]["p99_us"], "loop_lag_p99_us": m["loop_lag"]["p99_us"],
            "latency_p99_us": m["latency"]["p99_us"], "errors": m["errors"]["total"],
            "tls_version": m.get("tls", {}).get("version"), "steal_pct": dict(last_steal),
            "pacer_steal_pct": d.get("generator", {}).get("steal_pct")}


def ratio(x, y):
    return x / y if x is not None and y else None


def med(rows, key):
    vals = [r[key] for r in rows if r.get(key) is not None]
    return statistics.median(vals) if vals else None


def main():
    global argv_out_path
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--secs", type=int, default=5)
    ap.add_argument("--rate", default="20k")
    ap.add_argument("--out-dir", default=os.path.join(ROOT, "bench", "results"))
    ap.add_argument("--fixed-cases", default="",
                    help="fixed-rate cases RATE/CONNS,... instead of the default three "
                    "(a short look with --only-fixed)")
    ap.add_argument("--no-arrivals", dest="arrivals", action="store_false",
                    help="no arrival log on the fixed-rate sections' nginx, so no arrival "
                    "precision (to see what the log's write per request costs the figures)")
    ap.add_argument("--tls-rate", default="10k", help="fixed rate of the TLS section")
    ap.add_argument("--only-fixed", action="store_true",
                    help="run only the fixed-rate section beside h2load (printed)")
    ap.add_argument("--only-tls", action="store_true",
                    help="run only the TLS section (printed; docs/bench.md is left alone)")
    ap.add_argument("--h2-rate", type=float, default=2000,
                    help="fixed rate of the HTTP/2 section, req/s")
    ap.add_argument("--only-perf", action="store_true",
                    help="run only the perf breakdown of pacer's CPU (printed)")
    ap.add_argument("--only-h2", action="store_true",
                    help="run only the HTTP/2 section beside h2load (printed)")
    ap.add_argument("--h3-rate", type=float, default=2000,
                    help="fixed rate of the HTTP/3 section, req/s")
    ap.add_argument("--only-h3", action="store_true",
                    help="run only the HTTP/3 section beside ngtcp2's example client (printed)")
    ap.add_argument("--only-realtime", action="store_true",
                    help="run only the --realtime section against a CPU hog (printed)")
    ap.add_argument("--only-script", action="store_true",
                    help="run only the section of a trivial -s script beside wrk's (printed)")
    ap.add_argument("--no-docs", dest="docs", action="store_false",
                    help="do not rewrite docs/bench.md with this run's figures")
    a = ap.parse_args()
    fixed_cases(a)  # a bad --fixed-cases stops here, before any server starts
    for tool in ("wrk", "taskset", "/usr/sbin/nginx", "/usr/bin/time"):
        if not shutil.which(tool):
            sys.exit(f"bench: {tool} not found (run scripts/deps.sh)")
    if (os.cpu_count() or 1) < 2:
        print("bench: fewer than 2 CPUs: target and generator share a core", file=sys.stderr)

    tmp = tempfile.mkdtemp(prefix="pacer-bench-")
    argv_out_path = os.path.join(tmp, "stdout")
    # one section alone (--only-*): printed and saved, docs/bench.md untouched
    for only, name, section in ((a.only_perf, "perf", perf_only),
                                (a.only_fixed, "fixed", fixed_rate_section),
                                (a.only_h2, "h2", h2_section), (a.only_tls, "tls", tls_section),
                                (a.only_h3, "h3", h3_section),
                                (a.only_realtime, "realtime", realtime_section),
                                (a.only_script, "script", script_section)):
        if not only:
            continue
        sres, ssum, smd = section(a, tmp)
        os.makedirs(a.out_dir, exist_ok=True)
        stamp = time.strftime("%Y%m%d-%H%M%S")
        with open(os.path.join(a.out_dir, f"bench-{name}-{stamp}.json"), "w") as f:
            json.dump({"summary": ssum, "runs": sres}, f, indent=1)
        print("\n".join(smd))
        shutil.rmtree(tmp, ignore_errors=True)
        return
    timer = timer_lateness_us()
    port = free_port()
    url = f"http://127.0.0.1:{port}/"
    res = {"wrk_flat": [], "pacer_flat": [], "pacer_rate": [], "pacer_rate_precise": [], "serve_wrk": [], "nginx_wrk": []}
    ng = start_nginx(tmp, port)
    try:
        for i in range(a.reps):
            order = ["wrk", "pacer"] if i % 2 == 0 else ["pacer", "wrk"]
            for who in order:
                if who == "wrk":
                    res["wrk_flat"].append(wrk_flat(url, a.secs))
                else:
                    res["pacer_flat"].append(pacer_run(
                        url, ["--concurrency", str(CONNS), "-d", f"{a.secs}s"], tmp))
            res["pacer_rate"].append(pacer_run(
                url, ["--rate", a.rate, "-c", str(CONNS), "-d", f"{a.secs}s", "-w", "1s"], tmp))
            res["pacer_rate_precise"].append(pacer_run(
                url, ["--rate", a.rate, "-c", str(CONNS), "-d", f"{a.secs}s", "-w", "1s",
                      "--precise"], tmp))
    finally:
        ng.stop()

    # pacer serve --plan hello beside nginx, both measured by wrk
    have_serve = subprocess.run([PACER, "serve", "--list-plans"], capture_output=True).returncode == 0
    if have_serve:
        for i in range(a.reps):
            order = ["nginx", "serve"] if i % 2 == 0 else ["serve", "nginx"]
            for who in order:
                p2 = free_port()
                srv = start_nginx(tmp, p2) if who == "nginx" else start_serve(p2)
                try:
                    res[f"{who}_wrk"].append(wrk_flat(f"http://127.0.0.1:{p2}/", a.secs))
                finally:
                    srv.stop()

    # pacer and wrk over https, pacer plain vs TLS
    tres, tsum, tmd = tls_section(a, tmp)
    res.update(tres)
    # pacer at fixed rates beside h2load --rps
    fres, fsum, fmd = fixed_rate_section(a, tmp)
    res["fixed"] = fres
    # where pacer's CPU goes (perf)
    pres, pmd = perf_section(a, tmp)
    res["perf"] = pres
    # HTTP/2 beside h2load
    hres, hsum, hmd = h2_section(a, tmp)
    res["http2"] = hres
    # HTTP/3 beside ngtcp2's example client
    h3res, h3sum, h3md = h3_section(a, tmp)
    res["http3"] = h3res
    # --realtime against a CPU hog on pacer's CPU
    rtres, rtsum, rtmd = realtime_section(a, tmp)
    res["realtime"] = rtres
    # a trivial request() script, pacer's beside wrk's
    scres, scsum, scmd = script_section(a, tmp)
    res["script"] = scres

    summary = {
        "wrk_rps": med(res["wrk_flat"], "rps"),
        "pacer_rps": med(res["pacer_flat"], "rps"),
        "wrk_cpu_us_per_resp": med(res["wrk_flat"], "cpu_us_per_resp"),
        "pacer_cpu_us_per_resp": med(res["pacer_flat"], "cpu_us_per_resp"),
        "wrk_rss_kib": med(res["wrk_flat"], "rss_kib"),
        "pacer_rss_kib": med(res["pacer_flat"], "rss_kib"),
        "pacer_rate_cpu_us_per_resp": med(res["pacer_rate"], "cpu_us_per_resp"),
        "pacer_rate_send_lag_p99_us": med(res["pacer_rate"], "send_lag_p99_us"),
        "pacer_rate_loop_lag_p99_us": med(res["pacer_rate"], "loop_lag_p99_us"),
        "pacer_rate_achieved": med(res["pacer_rate"], "rps"),
        "precise_cpu_us_per_resp": med(res["pacer_rate_precise"], "cpu_us_per_resp"),
        "precise_send_lag_p99_us": med(res["pacer_rate_precise"], "send_lag_p99_us"),
        "precise_loop_lag_p99_us": med(res["pacer_rate_precise"], "loop_lag_p99_us"),
        "precise_achieved": med(res["pacer_rate_precise"], "rps"),
        "nginx_rps_by_wrk": med(res["nginx_wrk"], "rps"),
        "serve_rps_by_wrk": med(res["serve_wrk"], "rps"),
    }

    def ratio(a_, b_):
        return a_ / b_ if a_ and b_ else None

    summary["rps_ratio_pacer_over_wrk"] = ratio(summary["pacer_rps"], summary["wrk_rps"])
    summary["cpu_ratio_pacer_over_wrk"] = ratio(summary["pacer_cpu_us_per_resp"],
                                                summary["wrk_cpu_us_per_resp"])
    summary["serve_over_nginx"] = ratio(summary["serve_rps_by_wrk"], summary["nginx_rps_by_wrk"])

    cpu_model = "unknown"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu_model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    commit = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short=12", "HEAD"],
                            capture_output=True, text=True).stdout.strip() or "unknown"
    meta = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "commit": commit, "cpu_model": cpu_model, "cores": os.cpu_count(),
            "kernel": platform.release(), "reps": a.reps, "secs": a.secs, "connections": CONNS,
            "rate": a.rate, "timer_lateness_us": {"p50": timer[0], "p99": timer[1]}}
    os.makedirs(a.out_dir, exist_ok=True)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    with open(os.path.join(a.out_dir, f"bench-{stamp}.json"), "w") as f:
        json.dump({"meta": meta, "summary": summary, "runs": res}, f, indent=1)

    def fmt(v, d=1):
        return "—" if v is None else f"{v:,.{d}f}"

    md = [f"# pacer bench {meta['date']}", "",
          f"commit {commit}; {cpu_model}, {meta['cores']} CPUs, kernel {meta['kernel']}; "
          f"medians of {a.reps} interleaved repetitions of {a.secs} s; target on CPU 0, "
          f"generator on CPU 1, one thread each, {CONNS} connections. Before the runs, a bare "
          f"sleep loop at 1 ms on CPU 1 (timer slack 1 ns) woke {timer[0]:,.0f} µs late at "
          f"p50 and {timer[1]:,.0f} µs at p99: no sleeping thread paces closer than that.", "",
          "## Generators against nginx (`return 200`), flat out (closed loop)", "",
          "| | wrk | pacer | pacer / wrk |", "|---|---|---|---|",
          f"| requests/s | {fmt(summary['wrk_rps'])} | {fmt(summary['pacer_rps'])} | "
          f"{fmt(summary['rps_ratio_pacer_over_wrk'], 2)} |",
          f"| generator CPU µs per response | {fmt(summary['wrk_cpu_us_per_resp'], 2)} | "
          f"{fmt(summary['pacer_cpu_us_per_resp'], 2)} | {fmt(summary['cpu_ratio_pacer_over_wrk'], 2)} |",
          f"| peak RSS KiB | {fmt(summary['wrk_rss_kib'], 0)} | {fmt(summary['pacer_rss_kib'], 0)} | |",
          "", steal_line(res["wrk_flat"] + res["pacer_flat"], retried=False), "", f"## pacer open loop at a fixed {a.rate} req/s (1 s warm-up)", "",
          "| pacing | achieved/s | send-lag p99 µs | loop-lag p99 µs | CPU µs per response |",
          "|---|---|---|---|---|",
          f"| batched, `--send-window 1ms` (default) | {fmt(summary['pacer_rate_achieved'])} | "
          f"{fmt(summary['pacer_rate_send_lag_p99_us'])} | "
          f"{fmt(summary['pacer_rate_loop_lag_p99_us'])} | {fmt(summary['pacer_rate_cpu_us_per_resp'], 2)} |",
          f"| `--precise` (`--spin 100us`) | {fmt(summary['precise_achieved'])} | "
          f"{fmt(summary['precise_send_lag_p99_us'])} | "
          f"{fmt(summary['precise_loop_lag_p99_us'])} | {fmt(summary['precise_cpu_us_per_resp'], 2)} |",
          "", "wrk has no fixed-rate mode, so this row has no wrk column.", ""]
    if have_serve:
        md += ["## Targets measured by wrk: `pacer serve --plan hello` vs nginx, one thread/worker", "",
               "| nginx req/s | pacer serve req/s | serve / nginx |", "|---|---|---|",
               f"| {fmt(summary['nginx_rps_by_wrk'])} | {fmt(summary['serve_rps_by_wrk'])} | "
               f"{fmt(summary['serve_over_nginx'], 2)} |", ""]
    summary.update(tsum)
    summary.update(fsum)
    summary.update(hsum)
    summary.update(h3sum)
    summary.update(rtsum)
    summary.update(scsum)
    md += tmd + fmd + pmd + hmd + h3md + rtmd + scmd
    text = "\n".join(md)
    with open(os.path.join(a.out_dir, f"bench-{stamp}.md"), "w") as f:
        f.write(text)
    with open(os.path.join(a.out_dir, "latest.md"), "w") as f:
        f.write(text)
    if a.docs:
        intro = ("<!-- written by `make bench` (bench/bench.py); do not edit by hand -->\n"
                 "# Benchmarks: pacer beside its peers\n\n"
                 "How: `make bench` runs bench/bench.py. Speed is measured here, never asserted "
                 "in tests. Ratios matter more than absolute figures: this machine is shared and "
                 "noisy (max req/s wanders 10-25 % between runs; CPU per response at a fixed "
                 "rate about 5 %).\n\n")
        with open(os.path.join(ROOT, "docs", "bench.md"), "w") as f:
            f.write(intro + text.split("\n", 1)[1])
    print(text)
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
