#!/usr/bin/env python3
"""Check the layering of src/ that shared/DESIGN.md draws (section 3).

1. The module graph (module = first folder under src/, an edge for every
   `#include "other/..."` in its .c and .h files) has no cycle, direct or
   around a circle.
2. The file graph of #include "..." lines has no cycle either.
3. The pure modules (plan, stats, http, doc, report) include no sockets, threads,
   clocks or event loops: no such system header, no header of a module that
   has them (net, engine, runner, target, probe, cli), and no util/clock.h.
4. With --objects DIR (a build folder such as build/rel): inside each
   module, the files' calls (from `nm` of DIR/src/MODULE/*.o: a symbol one
   object needs and another defines) have no cycle, so each file builds on
   the ones below it.

Prints the module graph and every violation; exit status 1 when there is
one. Usage: scripts/check-layers.py [--src src] [--objects build/rel]
"""
import argparse
import os
import re
import subprocess
import sys

PURE = ("plan", "stats", "http", "doc", "report")
# modules whose headers bring sockets, threads, clocks or loops with them
IMPURE_MODULES = ("net", "engine", "runner", "target", "probe", "measure", "cli", "store",
                  "history", "dist", "script")
FORBIDDEN_SYSTEM = {
    "sockets": re.compile(r"^(sys/socket\.h|sys/un\.h|netinet/.*|arpa/.*|netdb\.h|net/.*|"
                          r"openssl/ssl\.h)$"),
    "threads": re.compile(r"^(pthread\.h|threads\.h|stdatomic\.h|semaphore\.h)$"),
    "clocks": re.compile(r"^(sys/time\.h|sys/times\.h|sys/timerfd\.h)$"),
    "loops": re.compile(r"^(sys/epoll\.h|poll\.h|sys/select\.h|sys/eventfd\.h|signal\.h)$"),
}
FORBIDDEN_PROJECT = {"util/clock.h": "clocks"}
# calls that read a clock (time.h itself is allowed: gmtime_r, strftime and
# timegm only convert a recorded time)
CLOCK_CALL = re.compile(r"\b(clock_gettime|gettimeofday|clock_now_ns|clock_wall_ns|"
                        r"clock_thread_cpu_ns|time\s*\(\s*(NULL|0|&)|clock\s*\(\s*\))")
# Calls between two files of one module, (module, caller, callee), that may
# close a cycle for now: they are left out of the call graph, so any other
# cycle still fails. A call listed here that is no longer made is reported,
# to be taken off the list.
ALLOWED_CALLS = set()  # none: the engine's connection interface closed its cycles
INCLUDE = re.compile(r'^\s*#\s*include\s+([<"])([^>"]+)[>"]')


def sources(src):
    for mod in sorted(os.listdir(src)):
        d = os.path.join(src, mod)
        if not os.path.isdir(d):
            continue
        for f in sorted(os.listdir(d)):
            if f.endswith((".c", ".h")):
                yield mod, os.path.join(mod, f)


def strip_comments(text):
    return re.sub(r"/\*.*?\*/|//[^\n]*", " ", text, flags=re.S)


def cycles(graph):
    """Strongly connected components with more than one node (or a self
    loop), by Tarjan's algorithm, each as a sorted list."""
    index, low, on, stack, out = {}, {}, set(), [], []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1 or v in graph.get(v, ()):
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def witness(graph, comp, why):
    """One edge list around a cycle of comp, for the message."""
    comp = set(comp)
    start = min(comp)
    path, seen, v = [start], {start}, start
    while True:
        nxt = sorted(w for w in graph[v] if w in comp)
        back = [w for w in nxt if w == start]
        if back and len(path) > 1 or (back and v == start and len(comp) == 1):
            path.append(start)
            break
        fresh = [w for w in nxt if w not in seen]
        if not fresh:
            path.append(nxt[0])
            break
        v = fresh[0]
        seen.add(v)
        path.append(v)
    hops = []
    for a, b in zip(path, path[1:]):
        hops.append("%s -> %s (%s)" % (a, b, why.get((a, b), "?")))
    return "; ".join(hops)


def check_includes(src):
    problems = []
    mod_graph, mod_why = {}, {}
    file_graph = {}
    for mod, rel in sources(src):
        mod_graph.setdefault(mod, set())
        with open(os.path.join(src, rel), errors="replace") as f:
            text = f.read()
        code = strip_comments(text)
        file_graph.setdefault(rel, set())
        for line in code.splitlines():
            m = INCLUDE.match(line)
            if not m:
                continue
            kind, name = m.groups()
            if kind == '"':
                file_graph[rel].add(name)
                other = name.split("/", 1)[0]
                if "/" in name and other != mod:
                    mod_graph[mod].add(other)
                    mod_why.setdefault((mod, other), rel + " includes " + name)
            if mod in PURE:
                for what, rx in FORBIDDEN_SYSTEM.items():
                    if kind == "<" and rx.match(name):
                        problems.append("%s: includes <%s> (%s) in a pure module" %
                                        (rel, name, what))
                if kind == '"' and name in FORBIDDEN_PROJECT:
                    problems.append("%s: includes %s (%s) in a pure module" %
                                    (rel, name, FORBIDDEN_PROJECT[name]))
                if kind == '"' and name.split("/", 1)[0] in IMPURE_MODULES:
                    problems.append("%s: includes %s, a module with sockets, threads or clocks" %
                                    (rel, name))
        if mod in PURE:
            for m in CLOCK_CALL.finditer(code):
                problems.append("%s: reads a clock (%s) in a pure module" % (rel, m.group(1)))
    for comp in cycles(mod_graph):
        problems.append("module cycle: " + witness(mod_graph, comp, mod_why))
    # file graph: only edges to files that exist under src/
    fg = {f: {t for t in ts if t in file_graph} for f, ts in file_graph.items()}
    for comp in cycles(fg):
        problems.append("include cycle: " + " -> ".join(comp))
    return mod_graph, problems


def nm_symbols(obj):
    out = subprocess.run(["nm", "-P", obj], capture_output=True, text=True, check=True).stdout
    defined, needed = set(), set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) < 2:
            continue
        sym, typ = parts[0], parts[1]
        if typ == "U":
            needed.add(sym)
        elif typ in "TDBRCVW":
            defined.add(sym)
    return defined, needed


def check_calls(objdir, src):
    """Call cycles inside each module, and allowed calls no longer made. Only
    the objects of sources that exist count (a build folder keeps the objects
    of files since removed)."""
    problems, notes = [], []
    seen_allowed = set()
    base = os.path.join(objdir, "src")
    if not os.path.isdir(base):
        return ["%s: no objects (build first)" % base], notes
    for mod in sorted(os.listdir(base)):
        d = os.path.join(base, mod)
        objs = sorted(f for f in os.listdir(d) if f.endswith(".o") and
                      os.path.exists(os.path.join(src, mod, f[:-2] + ".c")))
        syms = {o: nm_symbols(os.path.join(d, o)) for o in objs}
        owner = {}
        for o, (defined, _) in syms.items():
            for s in defined:
                owner[s] = o
        graph, why = {}, {}
        for o, (_, needed) in syms.items():
            graph.setdefault(o, set())
            for s in sorted(needed):
                t = owner.get(s)
                if not t or t == o:
                    continue
                if (mod, o, t) in ALLOWED_CALLS:
                    seen_allowed.add((mod, o, t))
                    continue
                graph[o].add(t)
                why.setdefault((o, t), "calls " + s)
        for comp in cycles(graph):
            problems.append("call cycle in src/%s: %s" % (mod, witness(graph, comp, why)))
    for mod, o, t in sorted(ALLOWED_CALLS - seen_allowed):
        notes.append("src/%s: %s no longer calls %s: take it off ALLOWED_CALLS "
                     "(scripts/check-layers.py)" % (mod, o, t))
    return problems, notes


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--src", default=os.path.join(os.path.dirname(__file__), "..", "src"))
    ap.add_argument("--objects", help="a build folder (build/rel): also check calls in modules")
    a = ap.parse_args()
    graph, problems = check_includes(a.src)
    for mod in sorted(graph):
        print("%-7s -> %s" % (mod, ", ".join(sorted(graph[mod] - {"util"})) or "(util only)"))
    if a.objects:
        calls, notes = check_calls(a.objects, a.src)
        problems += calls
        for n in notes:
            print("note: " + n)
        print("calls allowed to close a cycle for now: %d (ALLOWED_CALLS)" % len(ALLOWED_CALLS))
    for p in problems:
        print("FAIL " + p)
    print("layers: %s" % ("%d problems" % len(problems) if problems else
                          "no cycle; %s pure" % ", ".join(PURE)))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
