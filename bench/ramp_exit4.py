#!/usr/bin/env python3
"""How often a plain `pacer ramp` exits 4 ("the generator may have been the
limit") on this machine, and what it states as the capacity, with and
without a stalled generator. Not a test: a measurement for the self-check's
notes (issue 25), run by hand:

    bench/ramp_exit4.py [--pacer PATH] [--runs 10] [--stall] [--json OUT]

The target is nginx with a 1,000 requests/s limit_req (burst 50, nodelay;
503 above it), so the true capacity is known: a ramp over
250 ... 2,000 requests/s with 'p99<100ms,errors<1%' should find 1,000.
--stall stops pacer's own process for 100 ms in every 500 ms (SIGSTOP,
SIGCONT of its PID: a noisy neighbour), as in the issue's reproduction.
Every load is on loopback and bounded (7 steps of 3 s + 1 s warm-up)."""

import argparse
import collections
import json
import os
import signal
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "tests", "integration"))
import harness  # noqa: E402

STEPS = "250,500,750,1000,1250,1500,2000"
SLO = "p99<100ms,errors<1%"


def limiter_http(port_box):
    def extra():
        port_box[0] = harness.free_port()
        return ("limit_req_zone $server_name zone=bench1k:1m rate=1000r/s;\n"
                "server { listen 127.0.0.1:%d; server_name bench1k;\n"
                "  location = /ready { access_log off; return 200 \"ready\\n\"; }\n"
                "  location = /limited1k { limit_req zone=bench1k burst=50 nodelay; empty_gif; }\n"
                "}\n" % port_box[0])
    return extra


def stall_actions(seconds):
    acts = []
    t = 0.7
    while t < seconds:
        acts.append((t, lambda pid: os.kill(pid, signal.SIGSTOP)))
        acts.append((t + 0.1, lambda pid: os.kill(pid, signal.SIGCONT)))
        t += 0.5
    return acts


def verdict_word(step):
    v = step.get("verdict") or {}
    if v.get("inconclusive"):
        return "inconclusive"
    return "pass" if v.get("pass") else "fail"


def one(url, stall):
    args = [url, "--steps", STEPS, "--step-duration", "3s", "--step-warmup", "1s",
            "--slo", SLO, "--connections", "32"]
    acts = stall_actions(40.0) if stall else ()
    run = harness.run_pacer(args, timeout=90.0, subcommand="ramp", limited_ok=False,
                            actions=acts)
    res = run.json or {}
    hp = res.get("highest_passing") or {}
    steps = res.get("steps") or []
    return {
        "exit": run.code,
        "capacity": hp.get("offered_per_s"),
        "bound": hp.get("bound"),
        "verdicts": [(s.get("offered_per_s"), verdict_word(s)) for s in steps],
        "limited": (res.get("generator") or {}).get("limited"),
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pacer", default=None)
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--stall", action="store_true")
    ap.add_argument("--json", default=None)
    a = ap.parse_args()
    if a.pacer:
        os.environ["PACER_BIN"] = os.path.abspath(a.pacer)
    box = [None]
    rows = []
    with harness.Nginx(extra_http=limiter_http(box)):
        url = "http://127.0.0.1:%d/limited1k" % box[0]
        for i in range(a.runs):
            r = one(url, a.stall)
            rows.append(r)
            print("run %d: exit %s, capacity %s (bound %s), steps %s" %
                  (i + 1, r["exit"], r["capacity"], r["bound"], r["verdicts"]), flush=True)
            time.sleep(1.0)
    codes = collections.Counter(r["exit"] for r in rows)
    print("exit codes: %s" % dict(sorted(codes.items())))
    print("capacities: %s" % [r["capacity"] for r in rows])
    if a.json:
        with open(a.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
