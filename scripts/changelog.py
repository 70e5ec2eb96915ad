#!/usr/bin/env python3
"""Writes CHANGELOG.md from the git history, grouped by issue: a commit
belongs to the issue its subject names ("issue 18"), else to the one its
subject's words point at (the table below), else to issue 2 (pacer run, the
first). The issue titles come from `issues show N` when that command is
there, else from the table below. Oldest first within each issue.

    scripts/changelog.py [OUT]        (default: CHANGELOG.md)"""

import re
import shutil
import subprocess
import sys

# issue -> (title, still open); titles shortened from the issues' own
ISSUES = {
    2: "pacer run: the open-loop HTTP/1.1 load engine, honest latency, results, and a two-command setup",
    3: "pacer serve: the embedded target server, synthetic plans, and self-contained runs",
    4: "Ramps, SLO verdicts, capacity search, repetitions and A/B comparison",
    5: "Request tables: deterministic workloads from files, body folders, HAR and a mix generator",
    6: "What the load costs: target CPU and memory, cost per million requests, outcomes, server time, and generator self-checks",
    7: "Reports people publish: Markdown and HTML with charts, HdrHistogram logs, CSV, and a documented JSON schema",
    8: "HTTPS and Unix sockets",
    12: "Failures are failures: errors that include HTTP failures, latency by outcome and by request name",
    13: "The open-loop engine at h2load's cost or below",
    14: "One runner under run, ramp, compare and bench",
    15: "Beyond one machine: exact segments, a synchronized start, an exact merge",
    16: "HTTP/2: multiplexed streams through nghttp2",
    17: "Run history and regressions",
    18: "Fits the field: live metrics, an installable package, the peers' habits, output that plumbs",
    19: "Edges that lie, hang or exhaust",
}

# subject words -> issue, first match wins (for commits that name none)
KEYWORDS = [
    (8, r"\btls\b|https|unix|certificate|handshake"),
    (13, r"h2load|wake|spin|coalesc|batched"),
    (14, r"runner|split|layers|setup\.c|one writer"),
    (5, r"table|\bhar\b|\bmix\b|bodies|jsonl"),
    (6, r"cost|probe|gencheck|generator|cgroup|cpu"),
    (4, r"ramp|slo|compare|repetition|variant|refine|bench"),
    (7, r"report|html|csv|hgrm|hlog|markdown|chart|svg|schema"),
    (12, r"outcome|rule|error|by-name|names"),
    (3, r"serve|embedded|plan"),
]


def issue_state(n):
    """(title, open) from `issues show N`, or None."""
    if not shutil.which("issues"):
        return None
    r = subprocess.run(["issues", "show", str(n)], capture_output=True, text=True)
    lines = r.stdout.splitlines()
    if r.returncode or len(lines) < 2 or not lines[1].startswith("> # "):
        return None
    return lines[1][4:], lines[0].rstrip().endswith("open")


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "CHANGELOG.md"
    log = subprocess.run(["git", "log", "--no-merges", "--reverse", "--format=%ad\t%s",
                          "--date=short"], capture_output=True, text=True, check=True).stdout
    by = {}
    for line in log.splitlines():
        day, subj = line.split("\t", 1)
        named = [int(x) for x in re.findall(r"issue (\d+)", subj) if int(x) in ISSUES]
        n = named[0] if named else next(
            (i for i, rx in KEYWORDS if re.search(rx, subj, re.I)), 2)
        by.setdefault(n, []).append((day, subj))
    lines = ["# Changelog", "",
             "pacer has no release yet: 0.1.0 is the development line. This history is",
             "drawn from `git log` by `scripts/changelog.py` (oldest first in each part),",
             "grouped by the issue each change served: the issue a commit names, else the",
             "one its subject points at.", ""]
    for n in sorted(ISSUES):
        if n not in by:
            continue
        st = issue_state(n)
        title = st[0] if st else ISSUES[n]
        lines.append("## Issue %d: %s%s" % (n, title, " (in progress)" if st and st[1] else ""))
        lines.append("")
        for day, subj in by[n]:
            subj = subj.replace("*", "\\*").replace("_", "\\_")
            if len(subj) > 160:
                subj = subj[:157].rsplit(" ", 1)[0] + " …"
            lines.append("- %s %s" % (day, subj))
        lines.append("")
    with open(out, "w") as f:
        f.write("\n".join(lines))


if __name__ == "__main__":
    main()
