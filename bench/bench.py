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
  serve                        wrk against `pacer serve --plan hello` vs nginx, 1 thread/worker each
"""
import argparse
import datetime
import json
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


def start_nginx(tmp, port):
    conf = os.path.join(tmp, "nginx.conf")
    with open(conf, "w") as f:
        f.write(f"""worker_processes 1;
daemon off;
master_process off;
pid {tmp}/nginx.pid;
error_log {tmp}/error.log;
events {{ worker_connections 4096; }}
http {{
  access_log off;
  keepalive_requests 10000000;
  client_body_temp_path {tmp}; proxy_temp_path {tmp}; fastcgi_temp_path {tmp};
  uwsgi_temp_path {tmp}; scgi_temp_path {tmp};
  server {{ listen 127.0.0.1:{port}; location / {{ return 200 "hello\\n"; }} }}
}}
""")
    # master_process off: one process serves, so pinning it pins the server.
    return Proc(["/usr/sbin/nginx", "-p", tmp, "-c", conf], 0, port)


def start_serve(port):
    return Proc([PACER, "serve", "--plan", "hello", "--threads", "1",
                 "--listen", f"127.0.0.1:{port}"], 0, port)


def rusage_run(argv):
    """Run argv pinned to CPU 1 under GNU time; return (exit code, stdout,
    CPU seconds user+sys, peak RSS KiB) of that process alone. (os.wait4 on a
    child forked from Python would count Python's own RSS in ru_maxrss.)"""
    tf = argv_out_path + ".time"
    p = subprocess.run(["/usr/bin/time", "-o", tf, "-f", "%U %S %M", "taskset", "-c", "1"] + argv,
                       stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, timeout=180)
    with open(tf) as f:
        last = f.read().strip().splitlines()[-1].split()
    return p.returncode, p.stdout, float(last[0]) + float(last[1]), int(last[2])


argv_out_path = ""


def wrk_flat(url, secs):
    rc, out, cpu, rss = rusage_run(["wrk", "-t1", f"-c{CONNS}", f"-d{secs}s", url])
    m = re.search(r"(\d+) requests in", out)
    rps = re.search(r"Requests/sec:\s*([\d.]+)", out)
    if rc != 0 or not m or not rps:
        raise RuntimeError("wrk failed: " + out)
    n = int(m.group(1))
    return {"responses": n, "rps": float(rps.group(1)), "cpu_us_per_resp": cpu * 1e6 / n,
            "rss_kib": rss}


def pacer_run(url, args, tmp):
    js = os.path.join(tmp, "r.json")
    rc, out, cpu, rss = rusage_run([PACER, "run", url, "-q", "-o", js] + args)
    if rc != 0:
        raise RuntimeError(f"pacer failed ({rc}): {out}")
    with open(js) as f:
        d = json.load(f)
    m = d["measure"]
    n = m["requests"]["completed"] + d.get("warmup", {}).get("requests", {}).get("completed", 0)
    return {"responses": m["requests"]["completed"], "rps": m["rate"]["achieved_per_s"],
            "cpu_us_per_resp": cpu * 1e6 / max(n, 1), "rss_kib": rss,
            "send_lag_p99_us": m["send_lag"]["p99_us"], "loop_lag_p99_us": m["loop_lag"]["p99_us"],
            "latency_p99_us": m["latency"]["p99_us"], "errors": m["errors"]["total"]}


def med(rows, key):
    vals = [r[key] for r in rows if key in r]
    return statistics.median(vals) if vals else None


def main():
    global argv_out_path
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--secs", type=int, default=5)
    ap.add_argument("--rate", default="20k")
    ap.add_argument("--out-dir", default=os.path.join(ROOT, "bench", "results"))
    ap.add_argument("--no-docs", dest="docs", action="store_false",
                    help="do not rewrite docs/bench.md with this run's figures")
    a = ap.parse_args()
    for tool in ("wrk", "taskset", "/usr/sbin/nginx", "/usr/bin/time"):
        if not shutil.which(tool):
            sys.exit(f"bench: {tool} not found (run scripts/deps.sh)")
    if (os.cpu_count() or 1) < 2:
        print("bench: fewer than 2 CPUs: target and generator share a core", file=sys.stderr)

    tmp = tempfile.mkdtemp(prefix="pacer-bench-")
    argv_out_path = os.path.join(tmp, "stdout")
    port = free_port()
    url = f"http://127.0.0.1:{port}/"
    res = {"wrk_flat": [], "pacer_flat": [], "pacer_rate": [], "pacer_rate_nospin": [], "serve_wrk": [], "nginx_wrk": []}
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
            res["pacer_rate_nospin"].append(pacer_run(
                url, ["--rate", a.rate, "-c", str(CONNS), "-d", f"{a.secs}s", "-w", "1s",
                      "--spin", "0"], tmp))
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
        "nospin_cpu_us_per_resp": med(res["pacer_rate_nospin"], "cpu_us_per_resp"),
        "nospin_send_lag_p99_us": med(res["pacer_rate_nospin"], "send_lag_p99_us"),
        "nospin_loop_lag_p99_us": med(res["pacer_rate_nospin"], "loop_lag_p99_us"),
        "nospin_achieved": med(res["pacer_rate_nospin"], "rps"),
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
            "rate": a.rate}
    os.makedirs(a.out_dir, exist_ok=True)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    with open(os.path.join(a.out_dir, f"bench-{stamp}.json"), "w") as f:
        json.dump({"meta": meta, "summary": summary, "runs": res}, f, indent=1)

    def fmt(v, d=1):
        return "—" if v is None else f"{v:,.{d}f}"

    md = [f"# pacer bench {meta['date']}", "",
          f"commit {commit}; {cpu_model}, {meta['cores']} CPUs, kernel {meta['kernel']}; "
          f"medians of {a.reps} interleaved repetitions of {a.secs} s; target on CPU 0, "
          f"generator on CPU 1, one thread each, {CONNS} connections.", "",
          "## Generators against nginx (`return 200`), flat out (closed loop)", "",
          "| | wrk | pacer | pacer / wrk |", "|---|---|---|---|",
          f"| requests/s | {fmt(summary['wrk_rps'])} | {fmt(summary['pacer_rps'])} | "
          f"{fmt(summary['rps_ratio_pacer_over_wrk'], 2)} |",
          f"| generator CPU µs per response | {fmt(summary['wrk_cpu_us_per_resp'], 2)} | "
          f"{fmt(summary['pacer_cpu_us_per_resp'], 2)} | {fmt(summary['cpu_ratio_pacer_over_wrk'], 2)} |",
          f"| peak RSS KiB | {fmt(summary['wrk_rss_kib'], 0)} | {fmt(summary['pacer_rss_kib'], 0)} | |",
          "", f"## pacer open loop at a fixed {a.rate} req/s (1 s warm-up)", "",
          "| wait | achieved/s | send-lag p99 µs | loop-lag p99 µs | CPU µs per response |",
          "|---|---|---|---|---|",
          f"| `--spin 100us` (default) | {fmt(summary['pacer_rate_achieved'])} | "
          f"{fmt(summary['pacer_rate_send_lag_p99_us'])} | "
          f"{fmt(summary['pacer_rate_loop_lag_p99_us'])} | {fmt(summary['pacer_rate_cpu_us_per_resp'], 2)} |",
          f"| `--spin 0` (always sleep) | {fmt(summary['nospin_achieved'])} | "
          f"{fmt(summary['nospin_send_lag_p99_us'])} | "
          f"{fmt(summary['nospin_loop_lag_p99_us'])} | {fmt(summary['nospin_cpu_us_per_resp'], 2)} |",
          "", "wrk has no fixed-rate mode, so this row has no wrk column.", ""]
    if have_serve:
        md += ["## Targets measured by wrk: `pacer serve --plan hello` vs nginx, one thread/worker", "",
               "| nginx req/s | pacer serve req/s | serve / nginx |", "|---|---|---|",
               f"| {fmt(summary['nginx_rps_by_wrk'])} | {fmt(summary['serve_rps_by_wrk'])} | "
               f"{fmt(summary['serve_over_nginx'], 2)} |", ""]
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
