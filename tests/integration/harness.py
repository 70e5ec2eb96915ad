"""Integration-test harness for pacer (Python 3 standard library only).

Real processes on 127.0.0.1: nginx with a private prefix, the misbehaving
test server (tests/tools/badserver.c) and the pacer binary. Every process the
harness starts is registered and, whatever happens, stopped by PID when its
context manager exits or, at the latest, when the interpreter exits.

Environment:
  PACER_BIN     pacer binary (default: ./pacer at the repository root)
  PACER_BUILD   build directory with tests/tools/badserver (default build/rel)
  BADSERVER_BIN the badserver binary, overriding PACER_BUILD
  NGINX_BIN     nginx binary (default /usr/sbin/nginx)
"""

import atexit
import collections
import http.client
import json
import os
import re
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
NGINX_TEMPLATE = os.path.join(HERE, "nginx.conf.in")
ECHO_MODULE_DIRS = ("/usr/lib/nginx/modules", "/usr/share/nginx/modules")
FILE_SIZE = 65536  # bytes of /file


# ---------------------------------------------------------------- paths


def _repo_path(p):
    return p if os.path.isabs(p) else os.path.join(REPO, p)


def build_dir():
    return _repo_path(os.environ.get("PACER_BUILD", "build/rel"))


def pacer_bin():
    return _repo_path(os.environ.get("PACER_BIN", "pacer"))


def have_pacer():
    p = pacer_bin()
    return os.path.isfile(p) and os.access(p, os.X_OK)


def require_pacer():
    """Raises unittest.SkipTest when the pacer binary is missing."""
    if not have_pacer():
        raise unittest.SkipTest("pacer binary not found at %s" % pacer_bin())


def nginx_bin():
    return os.environ.get("NGINX_BIN", "/usr/sbin/nginx")


def echo_module():
    """Path of ngx_http_echo_module.so, or None."""
    for d in ECHO_MODULE_DIRS:
        p = os.path.join(d, "ngx_http_echo_module.so")
        if os.path.isfile(p):
            return p
    return None


_badserver_cache = None


def badserver_bin():
    """The badserver binary: $BADSERVER_BIN, else $PACER_BUILD/tests/tools/
    badserver, else (so the harness works before `make tools`) a copy
    compiled once into a temp dir with the project's warning flags."""
    global _badserver_cache
    env = os.environ.get("BADSERVER_BIN")
    if env:
        return _repo_path(env)
    built = os.path.join(build_dir(), "tests", "tools", "badserver")
    if os.path.isfile(built):
        return built
    if _badserver_cache is None:
        out_dir = tempfile.mkdtemp(prefix="pacer-badserver-")
        atexit.register(shutil.rmtree, out_dir, True)
        out = os.path.join(out_dir, "badserver")
        cc = os.environ.get("CC", "cc")
        subprocess.run(
            [cc, "-std=c17", "-D_GNU_SOURCE", "-I" + os.path.join(REPO, "src"),
             "-Wall", "-Wextra", "-Wshadow", "-Wpedantic", "-Werror", "-O2",
             os.path.join(REPO, "tests", "tools", "badserver.c"), "-o", out],
            check=True)
        _badserver_cache = out
    return _badserver_cache


# ---------------------------------------------------------------- processes

_live = {}  # pid -> (Popen, [extra pids]) of everything started and not yet reaped
_live_lock = threading.Lock()


def _register(proc):
    with _live_lock:
        _live[proc.pid] = proc


def _unregister(proc):
    with _live_lock:
        _live.pop(proc.pid, None)


def _signal_pid(pid, sig):
    try:
        os.kill(pid, sig)
        return True
    except ProcessLookupError:
        return False


def _pid_alive(pid):
    """True while pid exists and is not a zombie."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            stat = f.read()
    except OSError:
        return False
    return stat[stat.rindex(")") + 2] != "Z"


def child_pids(pid):
    """PIDs whose parent is pid (read from /proc)."""
    found = []
    try:
        with open("/proc/%d/task/%d/children" % (pid, pid)) as f:
            return [int(x) for x in f.read().split()]
    except OSError:
        pass
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % name) as f:
                stat = f.read()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2:].split()
        if int(fields[1]) == pid:
            found.append(int(name))
    return found


def stop_process(proc, extra_pids=(), timeout=5.0):
    """Stops proc (a Popen) by PID: SIGCONT (in case it was stopped), SIGTERM,
    then SIGKILL after timeout; extra_pids (e.g. nginx workers) get the same.
    Returns proc's exit status (as Popen.returncode)."""
    pids = [proc.pid] + list(extra_pids)
    if proc.poll() is None:
        for p in pids:
            _signal_pid(p, signal.SIGCONT)
        _signal_pid(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            _signal_pid(proc.pid, signal.SIGKILL)
            proc.wait(timeout=timeout)
    deadline = time.monotonic() + timeout
    for p in extra_pids:
        while _pid_alive(p) and time.monotonic() < deadline:
            time.sleep(0.01)
        if _pid_alive(p):
            _signal_pid(p, signal.SIGCONT)
            _signal_pid(p, signal.SIGKILL)
    _unregister(proc)
    return proc.returncode


def _cleanup_all():
    with _live_lock:
        procs = list(_live.values())
    for proc in procs:
        extra = getattr(proc, "pacer_extra_pids", ())
        try:
            stop_process(proc, extra, timeout=2.0)
        except Exception:  # noqa: BLE001 - best effort at exit
            pass


atexit.register(_cleanup_all)


def _term_handler(signum, frame):  # noqa: ARG001
    raise SystemExit(128 + signum)


if signal.getsignal(signal.SIGTERM) == signal.SIG_DFL:
    # So that atexit (and thus _cleanup_all) also runs on SIGTERM.
    signal.signal(signal.SIGTERM, _term_handler)


# ---------------------------------------------------------------- network


def free_port():
    """A TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port(port, timeout=10.0, proc=None):
    """Waits until 127.0.0.1:port accepts a TCP connection. Raises
    RuntimeError on timeout or when proc (a Popen) exits first."""
    deadline = time.monotonic() + timeout
    while True:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError("process %d exited (%s) before port %d was ready"
                               % (proc.pid, proc.returncode, port))
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            pass
        if time.monotonic() > deadline:
            raise RuntimeError("port %d not ready after %.1fs" % (port, timeout))
        time.sleep(0.02)


def raw_exchange(port, data, timeout=3.0, read_until_close=True, max_bytes=1 << 22):
    """Sends data (bytes, or a list of bytes sent one after the other with a
    short pause) to 127.0.0.1:port and returns what came back until the peer
    closed (or timeout). Returns (bytes, closed_by_peer)."""
    chunks = data if isinstance(data, list) else [data]
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        for i, c in enumerate(chunks):
            if i:
                time.sleep(0.01)
            s.sendall(c)
        return _read_all(s, timeout, max_bytes, read_until_close)


def _read_all(s, timeout, max_bytes, read_until_close=True):
    buf = bytearray()
    deadline = time.monotonic() + timeout
    s.setblocking(False)
    while len(buf) < max_bytes:
        left = deadline - time.monotonic()
        if left <= 0:
            return bytes(buf), False
        r, _, _ = select.select([s], [], [], left)
        if not r:
            return bytes(buf), False
        try:
            d = s.recv(65536)
        except ConnectionResetError:
            return bytes(buf), True
        except BlockingIOError:
            continue
        if not d:
            return bytes(buf), True
        buf += d
        if not read_until_close:
            return bytes(buf), False
    return bytes(buf), False


def parse_response_head(data):
    """Splits one HTTP response head off data: (status, {lower-name: value},
    rest). Raises ValueError when data has no complete head."""
    end = data.find(b"\r\n\r\n")
    if end < 0:
        raise ValueError("no complete response head")
    lines = data[:end].decode("latin-1").split("\r\n")
    m = re.match(r"HTTP/1\.[01] (\d{3})", lines[0])
    if not m:
        raise ValueError("bad status line %r" % lines[0])
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    return int(m.group(1)), headers, data[end + 4:]


# ---------------------------------------------------------------- nginx

LogLine = collections.namedtuple("LogLine", "connection connection_requests status bytes_sent uri")


class Nginx:
    """nginx with a private prefix in a temp dir, on a free loopback port.

        with Nginx() as ngx:
            url = ngx.url("/hello")
            mark = ngx.log_mark()
            ...
            ngx.log_lines(since=mark)

    Locations: /hello (200 "hello\\n", Content-Length), /notfound (404),
    /chunked (chunked body, echo module), /close (close-delimited body, echo
    module with chunked_transfer_encoding off), /file (static, FILE_SIZE
    bytes), /ready (readiness probe, not logged)."""

    def __init__(self, start_timeout=10.0, extra_http=None):
        """extra_http: nginx configuration added at the end of the http
        block (more server blocks, e.g. TLS or a Unix socket); a string, or a
        callable called once per start attempt (so it can pick fresh ports)
        returning one. @PREFIX@ in it is replaced as in the template."""
        self.start_timeout = start_timeout
        self.extra_http = extra_http
        self.dir = None
        self.port = None
        self.proc = None
        self.has_echo = echo_module() is not None
        self._workers = []

    # -- lifecycle

    def start(self):
        self.dir = tempfile.mkdtemp(prefix="pacer-nginx-")
        with open(os.path.join(self.dir, "file.bin"), "wb") as f:
            f.write(bytes((i * 7 + 3) & 0xFF for i in range(FILE_SIZE)))
        with open(NGINX_TEMPLATE) as f:
            conf = f.read()
        mod = echo_module()
        if mod is None:
            conf = "\n".join(l for l in conf.split("\n") if "needs-echo" not in l)
        else:
            conf = conf.replace("@ECHO_MODULE@", mod)
        # As root, nginx would switch its worker to "nobody", which could not
        # read the private prefix; keep it as the current user.
        user_line = "user root;" if os.geteuid() == 0 else ""
        last_err = None
        for _attempt in range(5):  # the free port may be taken meanwhile
            self.port = free_port()
            text = conf
            if self.extra_http:
                extra = self.extra_http() if callable(self.extra_http) else self.extra_http
                end = text.rstrip().rfind("}")  # the end of the http block
                text = text[:end] + extra + "\n}\n"
            text = (text.replace("@PREFIX@", self.dir).replace("@PORT@", str(self.port))
                    .replace("@USER_LINE@", user_line))
            conf_path = os.path.join(self.dir, "nginx.conf")
            with open(conf_path, "w") as f:
                f.write(text)
            self._stderr = open(os.path.join(self.dir, "stderr.log"), "wb")
            self.proc = subprocess.Popen(
                [nginx_bin(), "-p", self.dir + "/", "-c", conf_path, "-e",
                 os.path.join(self.dir, "error.log"), "-g", "daemon off; master_process on;"],
                stdin=subprocess.DEVNULL, stdout=self._stderr, stderr=self._stderr)
            _register(self.proc)
            try:
                self._wait_ready()
                return self
            except RuntimeError as e:
                last_err = e
                stop_process(self.proc, self._find_workers(), timeout=2.0)
                self._stderr.close()
        raise RuntimeError("nginx did not start: %s\n%s" % (last_err, self.error_log()))

    def _wait_ready(self):
        deadline = time.monotonic() + self.start_timeout
        wait_port(self.port, self.start_timeout, self.proc)
        # The master binds the socket before its worker exists: wait for an
        # HTTP answer (served by the worker) and note the worker's PID.
        while True:
            try:
                c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=1.0)
                c.request("GET", "/ready")
                r = c.getresponse()
                r.read()
                c.close()
                if r.status == 200:
                    break
            except OSError:
                pass
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("nginx not answering on port %d" % self.port)
            time.sleep(0.02)
        while not self._find_workers():
            if time.monotonic() > deadline:
                raise RuntimeError("no nginx worker process found")
            time.sleep(0.01)
        self._workers = self._find_workers()
        self.proc.pacer_extra_pids = self._workers

    def _find_workers(self):
        if self.proc is None:
            return []
        return child_pids(self.proc.pid)

    def stop(self):
        if self.proc is not None:
            workers = sorted(set(self._workers) | set(self._find_workers()))
            stop_process(self.proc, workers)
            self._stderr.close()
            self.proc = None
        if self.dir and not os.environ.get("PACER_KEEP_TMP"):
            shutil.rmtree(self.dir, ignore_errors=True)
            self.dir = None

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()
        return False

    # -- use

    @property
    def master_pid(self):
        return self.proc.pid

    def worker_pids(self):
        return self._find_workers()

    def all_pids(self):
        return [self.master_pid] + self.worker_pids()

    def pause(self):
        """SIGSTOP to master and workers."""
        for p in self.all_pids():
            os.kill(p, signal.SIGSTOP)

    def resume(self):
        """SIGCONT to master and workers."""
        for p in self.all_pids():
            os.kill(p, signal.SIGCONT)

    def url(self, path="/hello"):
        return "http://127.0.0.1:%d%s" % (self.port, path)

    def error_log(self):
        if not self.dir:
            return ""
        out = []
        for name in ("stderr.log", "error.log"):
            try:
                with open(os.path.join(self.dir, name), errors="replace") as f:
                    out.append(f.read())
            except OSError:
                pass
        return "".join(out)

    @property
    def access_log_path(self):
        return os.path.join(self.dir, "access.log")

    def log_mark(self):
        """Position in the access log; pass to log_lines(since=...) to see
        only the requests logged after this call."""
        try:
            return os.path.getsize(self.access_log_path)
        except OSError:
            return 0

    def log_lines(self, since=0):
        """Parsed access-log lines (LogLine) written after mark `since`, as
        they are now: call count() first to let nginx finish logging."""
        try:
            with open(self.access_log_path, "rb") as f:
                f.seek(since)
                data = f.read()
        except OSError:
            return []
        lines = []
        for raw in data.decode("latin-1").splitlines():
            parts = raw.split(" ", 4)
            if len(parts) != 5:
                continue
            lines.append(LogLine(int(parts[0]), int(parts[1]), int(parts[2]), int(parts[3]), parts[4]))
        return lines

    def count(self, since=0, path=None, status=None, settle=0.3):
        """Number of access-log lines after mark `since`, optionally only for
        one path (request_uri without the query) and/or status. Waits until
        the count has not changed for `settle` seconds (nginx writes the line
        just after the response)."""
        def n():
            return sum(1 for l in self.log_lines(since)
                       if (path is None or l.uri.split("?", 1)[0] == path)
                       and (status is None or l.status == status))
        last = n()
        stable_since = time.monotonic()
        deadline = stable_since + 5.0
        while time.monotonic() - stable_since < settle and time.monotonic() < deadline:
            time.sleep(0.05)
            cur = n()
            if cur != last:
                last, stable_since = cur, time.monotonic()
        return last

    def counts_by(self, since=0):
        """{(path, status): count} of the access-log lines after `since`."""
        self.count(since)  # settle
        c = collections.Counter()
        for l in self.log_lines(since):
            c[(l.uri.split("?", 1)[0], l.status)] += 1
        return dict(c)

    def counts_by_path(self, since=0):
        """{path: count} of the access-log lines after `since`, any status."""
        c = collections.Counter()
        for (path, _status), n in self.counts_by(since).items():
            c[path] += n
        return c

    def connections(self, since=0, path=None):
        """Distinct $connection values of the lines after `since`."""
        self.count(since)  # settle
        return {l.connection for l in self.log_lines(since)
                if path is None or l.uri.split("?", 1)[0] == path}


# ---------------------------------------------------------------- badserver

BADSERVER_MODES = ("ok", "stall", "close-before", "close-mid", "garbage", "huge-headers",
                   "slow", "every-other-close", "chunked", "close-delimited", "interim")


def read_first_line(proc, timeout, who, what):
    """The first line `proc` writes to its stdout pipe, within `timeout`
    seconds; RuntimeError naming `who` and `what` if it does not come."""
    fd = proc.stdout.fileno()
    buf = b""
    deadline = time.monotonic() + timeout
    while not buf.endswith(b"\n"):
        left = deadline - time.monotonic()
        r, _, _ = select.select([fd], [], [], max(left, 0))
        if not r:
            raise RuntimeError("%s printed no %s within %.1fs" % (who, what, timeout))
        d = os.read(fd, 256)
        if not d:
            raise RuntimeError("%s exited (%s) without a %s" % (who, proc.wait(), what))
        buf += d
    return buf.decode(errors="replace")


class BadServer:
    """tests/tools/badserver in one mode on an ephemeral loopback port.

        with BadServer("stall") as bs:
            bs.url("/")"""

    def __init__(self, mode, delay_ms=None, start_timeout=10.0):
        self.mode = mode
        self.delay_ms = delay_ms
        self.start_timeout = start_timeout
        self.proc = None
        self.port = None
        self.port_file_port = None
        self.dir = None
        self.returncode = None

    def start(self):
        self.dir = tempfile.mkdtemp(prefix="pacer-badserver-run-")
        port_file = os.path.join(self.dir, "port")
        argv = [badserver_bin(), "--mode", self.mode, "--port", "0", "--port-file", port_file]
        if self.delay_ms is not None:
            argv += ["--delay-ms", str(self.delay_ms)]
        self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE)
        _register(self.proc)
        try:
            line = self._read_line(self.start_timeout)
            m = re.fullmatch(r"port (\d+)\n", line)
            if not m:
                raise RuntimeError("badserver printed %r, not 'port N'" % line)
            self.port = int(m.group(1))
            with open(port_file) as f:
                self.port_file_port = int(f.read().strip())
            wait_port(self.port, self.start_timeout, self.proc)
        except Exception:
            self.stop()
            raise
        return self

    def _read_line(self, timeout):
        return read_first_line(self.proc, timeout, "badserver", "port line")

    def stop(self):
        if self.proc is not None:
            self.returncode = stop_process(self.proc)
            self.proc.stdout.close()
            self.proc = None
        if self.dir:
            shutil.rmtree(self.dir, ignore_errors=True)
            self.dir = None
        return self.returncode

    def url(self, path="/"):
        return "http://127.0.0.1:%d%s" % (self.port, path)

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()
        return False


# ---------------------------------------------------------------- pacer

PacerRun = collections.namedtuple(
    "PacerRun", "code stdout stderr json maxrss_kib elapsed_s out_path dir timed_out")


def run_pacer(args, timeout=60.0, actions=(), out=True, subcommand="run", limited_ok=True):
    """Runs `pacer run ARGS... --out DIR/result.json` (unless args already has
    --out/-o or out is False) with stdout/stderr to files and a hard timeout
    (SIGKILL). run, ramp and compare get --limited-ok unless limited_ok is False: a test
    of something else must not fail because this shared machine made the
    generator late (exit 4); the generator self-check tests pass False.
    actions: [(seconds after start, callable(pid)), ...] run from
    this thread at those times (e.g. signals). Returns a PacerRun with the exit
    code (negative signal number if killed), stdout, stderr, the parsed JSON
    result or None, the child's max RSS in KiB (from wait4) and the wall time.
    The temp dir (PacerRun.dir) holds further outputs, e.g. --hgrm files; it is
    removed at exit."""
    d = tempfile.mkdtemp(prefix="pacer-run-")
    if not os.environ.get("PACER_KEEP_TMP"):
        atexit.register(shutil.rmtree, d, True)
    argv = [pacer_bin()] + ([subcommand] if subcommand else []) + [str(a) for a in args]
    if limited_ok and subcommand in ("run", "ramp", "compare") and "--limited-ok" not in argv:
        argv.append("--limited-ok")
    out_path = None
    if out:
        given = [i for i, a in enumerate(argv) if a in ("--out", "-o")]
        if given and given[-1] + 1 < len(argv):
            out_path = argv[given[-1] + 1]
        else:
            out_path = os.path.join(d, "result.json")
            argv += ["--out", out_path]
    with open(os.path.join(d, "stdout"), "wb") as so, open(os.path.join(d, "stderr"), "wb") as se:
        t0 = time.monotonic()
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=so, stderr=se)
        _register(proc)
        pending = sorted(actions, key=lambda a: a[0])
        timed_out = False
        status = rusage = None
        hwm_kib = 0
        try:
            while True:
                hwm_kib = max(hwm_kib, _vm_hwm_kib(proc.pid))
                pid, st, ru = os.wait4(proc.pid, os.WNOHANG)
                if pid == proc.pid:
                    status, rusage = st, ru
                    break
                now = time.monotonic() - t0
                while pending and pending[0][0] <= now:
                    _, fn = pending.pop(0)
                    fn(proc.pid)
                if now > timeout:
                    timed_out = True
                    os.kill(proc.pid, signal.SIGKILL)
                    _, status, rusage = os.wait4(proc.pid, 0)
                    break
                nxt = pending[0][0] - now if pending else 0.005
                time.sleep(min(max(nxt, 0.0005), 0.005))
        finally:
            if status is None:  # an exception in an action: do not leak pacer
                os.kill(proc.pid, signal.SIGKILL)
                _, status, rusage = os.wait4(proc.pid, 0)
            proc.returncode = os.waitstatus_to_exitcode(status)
            _unregister(proc)
        elapsed = time.monotonic() - t0
    with open(os.path.join(d, "stdout"), "rb") as f:
        stdout = f.read().decode(errors="replace")
    with open(os.path.join(d, "stderr"), "rb") as f:
        stderr = f.read().decode(errors="replace")
    result = None
    if out_path and os.path.exists(out_path):
        try:
            with open(out_path) as f:
                result = json.load(f)
        except (OSError, ValueError):
            result = None
    # wait4's ru_maxrss counts the memory of this (Python) process that the
    # child had before its exec, so a large test process inflates it; the
    # child's own high-water mark (VmHWM, read while it runs) does not
    return PacerRun(proc.returncode, stdout, stderr, result, hwm_kib or rusage.ru_maxrss,
                    elapsed, out_path, d, timed_out)


def is_sanitized_binary(path):
    """True when the binary carries AddressSanitizer (memory limits differ):
    linked in, or dynamically (libasan: only its __asan_init is named)."""
    try:
        with open(path, "rb") as f:
            data = f.read()
            return b"AddressSanitizer" in data or b"__asan_init" in data
    except OSError:
        return False


def describe(run):
    """A short text of a PacerRun for assertion messages."""
    return "exit %s%s\nstderr: %s\nstdout (tail): %s\njson measure: %s" % (
        run.code, " (TIMED OUT)" if run.timed_out else "", run.stderr.strip()[-2000:],
        run.stdout.strip()[-1000:],
        json.dumps((run.json or {}).get("measure", {}).get("requests")) + " errors " +
        json.dumps((run.json or {}).get("measure", {}).get("errors")))


def words(text):
    """text as single-spaced words on one line: the text summaries are
    wrapped at 78 columns, so a phrase may span a line break."""
    return " ".join(text.split())


def summary_trailer(result_path):
    """The line run, ramp and compare print after their summary when they
    wrote their result to result_path (--out): where its full report is."""
    return "\n  Full report: pacer report %s --format html -o report.html\n" % result_path


def report_text(result_path, timeout=30.0):
    """`pacer report RESULT --format text`: the summary run, ramp and
    compare print at their end."""
    p = subprocess.run([pacer_bin(), "report", result_path, "--format", "text"],
                       capture_output=True, text=True, timeout=timeout)
    if p.returncode != 0:
        raise AssertionError("pacer report %s: exit %d: %s" % (result_path, p.returncode, p.stderr))
    return p.stdout


# ---------------------------------------------------------------- hgrm


def parse_hgrm(text):
    """Parses HdrHistogram percentile-distribution text. Returns (rows,
    footer) with rows = [(value, percentile, total_count)] and footer a dict
    of the '#[Name = value' fields (Mean, StdDeviation, Max, Total count,
    Buckets, SubBuckets). Raises ValueError on a malformed layout."""
    lines = text.splitlines()
    head = [i for i, l in enumerate(lines) if l.split() == ["Value", "Percentile", "TotalCount", "1/(1-Percentile)"]]
    if not head:
        raise ValueError("no 'Value Percentile TotalCount 1/(1-Percentile)' header")
    rows = []
    footer = {}
    for l in lines[head[0] + 1:]:
        s = l.strip()
        if not s:
            continue
        if s.startswith("#"):
            for name, value in re.findall(r"([A-Za-z][A-Za-z ]*?)\s*=\s*([0-9.]+)", s):
                footer[name.strip()] = float(value)
            continue
        f = s.split()
        if len(f) not in (3, 4):
            raise ValueError("bad hgrm line %r" % l)
        rows.append((float(f[0]), float(f[1]), int(f[2])))
    return rows, footer


# ---------------------------------------------------------------- runner


class _Result(unittest.TextTestResult):
    def __init__(self, stream, descriptions, verbosity):
        super().__init__(stream, descriptions, 0)
        self.passed = 0
        self._t0 = {}

    def _name(self, test):
        return test.id().split(".", 1)[-1] if "." in test.id() else test.id()

    def startTest(self, test):
        super().startTest(test)
        self._t0[test.id()] = time.monotonic()

    def _took(self, test):
        return time.monotonic() - self._t0.get(test.id(), time.monotonic())

    def addSuccess(self, test):
        super().addSuccess(test)
        self.passed += 1
        print("PASS %s (%.1fs)" % (self._name(test), self._took(test)), flush=True)

    def addFailure(self, test, err):
        super().addFailure(test, err)
        print("FAIL %s (%.1fs)\n%s" % (self._name(test), self._took(test), self.failures[-1][1]), flush=True)

    def addError(self, test, err):
        super().addError(test, err)
        print("FAIL %s (error)\n%s" % (self._name(test), self.errors[-1][1]), flush=True)

    def addSubTest(self, test, subtest, err):
        super().addSubTest(test, subtest, err)
        if err is not None:
            lst = self.failures if issubclass(err[0], test.failureException) else self.errors
            print("FAIL %s\n%s" % (subtest.id().split(".", 1)[-1], lst[-1][1]), flush=True)

    def addSkip(self, test, reason):
        super().addSkip(test, reason)
        print("SKIP %s: %s" % (self._name(test), reason), flush=True)

    def addExpectedFailure(self, test, err):
        super().addExpectedFailure(test, err)
        self.passed += 1

    def addUnexpectedSuccess(self, test):
        super().addUnexpectedSuccess(test)
        print("FAIL %s (unexpected success)" % self._name(test), flush=True)


class _TimedSuite(unittest.TestSuite):
    """A suite that prints how long each module's setUpModule and each
    class's setUpClass took ("SETUP test_x.SomeTest setUpClass 2.1s"): the
    time of a fixture is no test's, and is otherwise seen nowhere. (It hooks
    unittest.TestSuite's fixture handling, private but stable since 3.2.)"""

    def _handleModuleFixture(self, test, result):
        module = test.__class__.__module__
        prev = getattr(result, "_previousTestClass", None)
        if prev is not None and prev.__module__ == module:
            return super()._handleModuleFixture(test, result)
        t0 = time.monotonic()
        super()._handleModuleFixture(test, result)
        if hasattr(sys.modules.get(module), "setUpModule"):
            print("SETUP %s setUpModule %.1fs" % (module, time.monotonic() - t0), flush=True)
        return None

    def _handleClassSetUp(self, test, result):
        cls = test.__class__
        if getattr(result, "_previousTestClass", None) == cls:
            return super()._handleClassSetUp(test, result)
        t0 = time.monotonic()
        super()._handleClassSetUp(test, result)
        if not cls.__module__.startswith("unittest."):  # not a module that failed to load
            print("SETUP %s.%s setUpClass %.1fs" % (cls.__module__, cls.__name__,
                                                    time.monotonic() - t0), flush=True)
        return None


def run_suite(argv=None):
    """Discovers tests/integration/test_*.py (or the patterns in argv), runs
    them in this process, one after the other, prints PASS/FAIL/SKIP per
    test and the time of each class's setUpClass, and ends with `N passed, N
    failed`. Returns 0 when nothing failed. (tests/integration/suite.py runs
    the whole suite in parallel shards of these.)"""
    argv = sys.argv[1:] if argv is None else argv
    loader = unittest.TestLoader()
    loader.suiteClass = _TimedSuite
    if argv:
        suite = _TimedSuite(loader.loadTestsFromName(n) for n in argv)
    else:
        suite = loader.discover(HERE, pattern="test_*.py", top_level_dir=HERE)
    res = _Result(open(os.devnull, "w"), False, 0)
    t0 = time.monotonic()
    suite.run(res)
    failed = len(res.failures) + len(res.errors) + len(res.unexpectedSuccesses)
    if res.skipped:
        print("%d skipped" % len(res.skipped))
    print("(%.1fs)" % (time.monotonic() - t0))
    print("%d passed, %d failed" % (res.passed, failed), flush=True)
    return 1 if failed else 0


# ---------------------------------------------------------------- assertions

ERROR_KINDS = ("connect", "read", "write", "timeout", "parse", "closed", "tls", "reset",
               "protocol")
# Kinds not tied to a request: a connection that could not be set up (or,
# protocol, an HTTP/2 connection that failed).
CONNECTION_ERROR_KINDS = ("connect", "tls", "protocol")


def _vm_hwm_kib(pid):
    """The peak resident set of process pid since its exec (VmHWM), KiB; 0
    when it cannot be read (gone, or not yet exec'd into pacer)."""
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return 0


def rss_limit_kib(mib=64):
    """mib MiB in KiB, or 8x that for an AddressSanitizer build of pacer."""
    return mib * 1024 * (8 if is_sanitized_binary(pacer_bin()) else 1)


class PacerTestCase(unittest.TestCase):
    """unittest.TestCase with pacer-run helpers. Skips when pacer is missing."""

    @classmethod
    def setUpClass(cls):
        require_pacer()

    def run_ok(self, args, code=0, **kw):
        """run_pacer(args) and asserts the exit code and a parsed JSON result."""
        run = run_pacer(args, **kw)
        self.assertFalse(run.timed_out, describe(run))
        self.assertEqual(run.code, code, describe(run))
        self.assertIsNotNone(run.json, "no JSON result\n" + describe(run))
        return run

    def phase(self, run, name="measure"):
        self.assertIn(name, run.json, describe(run))
        return run.json[name]

    def assert_accounted(self, ph, run=None):
        """Every sent request is completed, one error kind (not connect or tls) or
        in flight at the end."""
        r, e = ph["requests"], ph["transport_errors"]
        req_errors = sum(e[k] for k in ERROR_KINDS if k not in CONNECTION_ERROR_KINDS)
        ended = r["completed"] + req_errors + r["in_flight_at_end"]
        self.assertEqual(r["sent"], ended, "requests %s errors %s\n%s"
                         % (r, e, describe(run) if run else ""))
        self.assertEqual(e["total"], sum(e[k] for k in ERROR_KINDS), "errors %s" % e)
        self.assertEqual(e["requests"], req_errors, "errors %s" % e)
        # errors: the requests that did not succeed, one definition
        errs = ph["errors"]
        failed = r["completed"] - ph["success"]["ok"]
        self.assertEqual(errs["failed_responses"], failed, errs)
        self.assertEqual(errs["transport"], req_errors, errs)
        self.assertEqual(errs["total"], failed + req_errors, errs)
        self.assertEqual(sum(errs["by_status"].values()), failed, errs)
        by = ph.get("by_name") or []
        if by:  # the names partition the phase's requests
            self.assertEqual(sum(e["completed"] for e in by), r["completed"], by)
            self.assertEqual(sum(e["errors"] for e in by), errs["total"], by)

    def assert_no_errors(self, ph, run=None, failing=()):
        """No request failed, except the responses with a status in `failing`
        (a table that asks for a 404 on purpose): those are errors, by the
        one definition, and nothing else is."""
        want = sum(ph["responses"]["by_status"].get(str(s), 0) for s in failing)
        msg = "errors %s\n%s" % (ph["errors"], describe(run) if run else "")
        self.assertEqual(ph["errors"]["total"], want, msg)
        self.assertEqual(ph["errors"]["transport"], 0, msg)


# ---------------------------------------------------------------- pacer serve


def _initial_cpus():
    try:
        return sorted(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return []


_CPUS_AT_START = _initial_cpus()


def pin_cpus():
    """(server CPU, generator CPU): two different CPUs this process could use
    when it started, or None on a machine with one CPU or without taskset."""
    if len(_CPUS_AT_START) < 2 or not shutil.which("taskset"):
        return None
    return _CPUS_AT_START[0], _CPUS_AT_START[1]


def timer_lateness_us(period_s=0.002, n=1500, cpu=None):
    """How late this machine wakes a thread that sleeps to a deadline: n
    sleeps to absolute deadlines period_s apart (pinned to `cpu` when given),
    and the (p50, p99) of the lateness in microseconds. A load generator's
    loop cannot pace more exactly than this: the bare floor of the machine,
    for tests that judge pacer's own lateness."""
    late = []
    with pinned(cpu):
        t = time.monotonic()
        for _ in range(n):
            t += period_s
            d = t - time.monotonic()
            if d > 0:
                time.sleep(d)
            late.append((time.monotonic() - t) * 1e6)
    late.sort()
    return late[n // 2], late[min(n - 1, (n * 99) // 100)]


class pinned:
    """Context manager: this process (and so every child started inside the
    block, e.g. by run_pacer) runs on `cpus` only; the previous affinity is
    restored on exit. cpus None or empty: no change.

        with harness.pinned({1}):
            harness.run_pacer([...])"""

    def __init__(self, cpus):
        if cpus is None:
            cpus = ()
        self.cpus = {cpus} if isinstance(cpus, int) else set(cpus)
        self.old = None

    def __enter__(self):
        if self.cpus:
            self.old = os.sched_getaffinity(0)
            os.sched_setaffinity(0, self.cpus)
        return self

    def __exit__(self, *exc):
        if self.old is not None:
            os.sched_setaffinity(0, self.old)
        return False


class PacerServe:
    """`pacer serve --plan PLAN --listen 127.0.0.1:0 --threads N` as a
    separate process on the port it picks, optionally pinned to one CPU with
    taskset (taskset execs pacer, so the PID is pacer's). Registered with the
    same kill guard as nginx: stopped by PID on stop(), on leaving the `with`
    block, or at interpreter exit.

        with PacerServe("hello", cpu=0) as srv:
            srv.url("/")"""

    def __init__(self, plan, threads=1, extra=(), cpu=None, start_timeout=10.0):
        self.plan = plan
        self.threads = threads
        self.extra = [str(a) for a in extra]
        self.cpu = cpu
        self.start_timeout = start_timeout
        self.proc = None
        self.port = None
        self.returncode = None
        self.dir = None

    def argv(self):
        argv = ["taskset", "-c", str(self.cpu)] if self.cpu is not None else []
        return argv + [pacer_bin(), "serve", "--plan", self.plan, "--listen", "127.0.0.1:0",
                       "--threads", str(self.threads)] + self.extra

    def start(self):
        self.dir = tempfile.mkdtemp(prefix="pacer-serve-")
        self._stderr = open(os.path.join(self.dir, "stderr"), "wb")
        self.proc = subprocess.Popen(self.argv(), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                     stderr=self._stderr)
        _register(self.proc)
        try:
            line = self._read_line(self.start_timeout)
            m = re.fullmatch(r"listening on 127\.0\.0\.1:(\d+)\n", line)
            if not m:
                raise RuntimeError("pacer serve printed %r, not 'listening on 127.0.0.1:PORT'" % line)
            self.port = int(m.group(1))
            wait_port(self.port, self.start_timeout, self.proc)
        except Exception as e:
            err = self.stderr()
            self.stop()
            raise RuntimeError("%s\nstderr: %s" % (e, err)) from None
        return self

    def _read_line(self, timeout):
        return read_first_line(self.proc, timeout, "pacer serve", "'listening on' line")

    @property
    def pid(self):
        return self.proc.pid

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def url(self, path="/"):
        return "http://127.0.0.1:%d%s" % (self.port, path)

    def rss_kib(self):
        """VmRSS of the server process in KiB (from /proc/PID/status)."""
        with open("/proc/%d/status" % self.pid) as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
        raise RuntimeError("no VmRSS for PID %d" % self.pid)

    def cpu_s(self):
        """User + system CPU time of the server process so far, in seconds."""
        with open("/proc/%d/stat" % self.pid) as f:
            stat = f.read()
        fields = stat[stat.rindex(")") + 2:].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def stderr(self):
        if not self.dir:
            return ""
        try:
            with open(os.path.join(self.dir, "stderr"), errors="replace") as f:
                return f.read()
        except OSError:
            return ""

    def signal_stop(self, sig, timeout=2.0):
        """Sends sig and waits up to timeout for the exit. Returns (exit
        status, seconds taken), or (None, timeout) when it did not exit in
        time (it is then killed by stop())."""
        t0 = time.monotonic()
        os.kill(self.pid, sig)
        try:
            code = self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            return None, timeout
        return code, time.monotonic() - t0

    def stop(self):
        """SIGTERM (SIGKILL after 5 s) by PID; returns the exit status."""
        if self.proc is not None:
            self.returncode = stop_process(self.proc)
            self.proc.stdout.close()
            self._stderr.close()
            self.proc = None
        if self.dir and not os.environ.get("PACER_KEEP_TMP"):
            shutil.rmtree(self.dir, ignore_errors=True)
            self.dir = None
        return self.returncode

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()
        return False
