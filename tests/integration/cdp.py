"""A small Chrome DevTools Protocol client for pacer's tests.

Starts Debian's headless Chromium (/usr/bin/chromium) with a fresh profile in
a temp dir, talks to one page target over its DevTools websocket (python3-
websocket), and always stops the browser it started, by PID, when the `with`
block ends (also on failure) or at the latest at interpreter exit. Every wait
is bounded.

    with cdp.Browser() as b:
        page = b.page()
        page.open_page("http://127.0.0.1:8080/")
        page.evaluate("document.title")
        page.console_messages(), page.exceptions()
        png = page.screenshot_png()
        cdp.non_blank_fraction(png, (0, 0, 200, 100))

HAR recording (HarRecorder) writes a HAR 1.2 log from Chromium's own network
events: Network.requestWillBeSent (+ ...ExtraInfo, which carries the headers
as they went on the wire), Network.responseReceived (+ ...ExtraInfo),
Network.dataReceived, Network.loadingFinished / loadingFailed, and
Network.getRequestPostData for request bodies. That is the source Chromium's
own DevTools "Save all as HAR" reads; the browser does every request, this
module only writes down what the browser reports. See HarRecorder.
"""

import atexit
import base64
import datetime
import http.client
import json
import os
import shutil
import signal
import struct
import subprocess
import tempfile
import threading
import time
import urllib.parse
import zlib

import harness

try:
    import websocket  # Debian: python3-websocket
except ImportError:  # pragma: no cover - reported by available()
    websocket = None

CHROMIUM = os.environ.get("CHROMIUM_BIN", "/usr/bin/chromium")
PACKAGE_HINT = ("Debian packages chromium and python3-websocket "
                "(scripts/deps.sh installs them)")

FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--remote-debugging-port=0")


class CdpError(Exception):
    """A DevTools command failed, a wait timed out, or the browser died."""


def available():
    """(True, "") when the browser and the websocket module are there, else
    (False, a message naming what is missing and the Debian package)."""
    if not (os.path.isfile(CHROMIUM) and os.access(CHROMIUM, os.X_OK)):
        return False, "%s not found: install the Debian package chromium (scripts/deps.sh)" % CHROMIUM
    if websocket is None:
        return False, "python module websocket not found: install the Debian package python3-websocket (scripts/deps.sh)"
    return True, ""


# ---------------------------------------------------------------- processes

_browsers = set()
_browsers_lock = threading.Lock()


def _descendants(pid):
    """PIDs of pid's children, grandchildren, ... (from /proc)."""
    parent_of = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % name) as f:
                stat = f.read()
        except OSError:
            continue
        parent_of[int(name)] = int(stat[stat.rindex(")") + 2:].split()[1])
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        kids = [c for c, pp in parent_of.items() if pp == p]
        out += kids
        todo += kids
    return out


def _pids_with_arg_under(path):
    """PIDs whose command line has an argument naming a file under path
    (e.g. Chromium's crash handler, --database=<path>/...)."""
    out = []
    needle = os.fsencode(path.rstrip("/") + "/")
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == os.getpid():
            continue
        try:
            with open("/proc/%s/cmdline" % name, "rb") as f:
                args = f.read().split(b"\0")
        except OSError:
            continue
        if any(needle in a for a in args[1:]):
            out.append(int(name))
    return out


_alive = harness._pid_alive  # alive and not a zombie


def _kill(pid, sig):
    try:
        os.kill(pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def _stop_all():
    with _browsers_lock:
        bs = list(_browsers)
    for b in bs:
        try:
            b.stop()
        except Exception:  # noqa: BLE001 - best effort at exit
            pass


atexit.register(_stop_all)


# ---------------------------------------------------------------- browser


class Browser:
    """Headless Chromium with a fresh --user-data-dir in a temp dir and the
    DevTools port it picked (read from <user-data-dir>/DevToolsActivePort).
    A context manager: stop() runs on leaving the block, whatever happens."""

    def __init__(self, binary=None, timeout=30.0, extra_flags=()):
        self.binary = binary or CHROMIUM
        self.timeout = timeout
        self.extra_flags = list(extra_flags)
        self.proc = None
        self.dir = None
        self.port = None
        self.browser_ws_path = None
        self._pages = []
        self._known_pids = set()

    def start(self):
        ok, why = available() if self.binary == CHROMIUM else (True, "")
        if not ok:
            raise CdpError(why)
        self.dir = tempfile.mkdtemp(prefix="pacer-chromium-")
        profile = os.path.join(self.dir, "profile")
        os.mkdir(profile)
        self._log = open(os.path.join(self.dir, "chromium.log"), "wb")
        argv = [self.binary, *FLAGS, "--user-data-dir=" + profile, *self.extra_flags, "about:blank"]
        # /usr/bin/chromium is a shell script that execs the browser: the PID
        # stays the browser's. Its own session, so no terminal signal reaches it.
        # HOME and the XDG dirs in the temp dir too: nothing is written to the
        # user's ~/.config or ~/.cache (e.g. crash reports), and the crash
        # handler Chromium double-forks names the temp dir, so stop() finds it.
        env = dict(os.environ, HOME=self.dir, XDG_CONFIG_HOME=os.path.join(self.dir, "config"),
                   XDG_CACHE_HOME=os.path.join(self.dir, "cache"))
        self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=self._log,
                                     stderr=self._log, start_new_session=True, env=env)
        with _browsers_lock:
            _browsers.add(self)
        try:
            self._wait_port(os.path.join(profile, "DevToolsActivePort"))
        except Exception:
            self.stop()
            raise
        return self

    def _wait_port(self, path):
        deadline = time.monotonic() + self.timeout
        while True:
            if self.proc.poll() is not None:
                raise CdpError("chromium exited (%s) before opening its DevTools port\n%s"
                               % (self.proc.returncode, self.log_tail()))
            try:
                with open(path) as f:
                    lines = f.read().split("\n")
                if len(lines) >= 2 and lines[0].strip().isdigit() and lines[1].strip():
                    self.port = int(lines[0])
                    self.browser_ws_path = lines[1].strip()
                    return
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise CdpError("no %s after %.0fs\n%s" % (path, self.timeout, self.log_tail()))
            time.sleep(0.05)

    def log_tail(self, n=3000):
        """The end of the browser's stdout/stderr (for failure messages)."""
        if not self.dir:
            return ""
        try:
            with open(os.path.join(self.dir, "chromium.log"), "rb") as f:
                return f.read()[-n:].decode(errors="replace")
        except OSError:
            return ""

    def _http_json(self, path, method="GET"):
        c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=self.timeout)
        try:
            c.request(method, path)
            r = c.getresponse()
            body = r.read()
            if r.status != 200:
                raise CdpError("GET %s: HTTP %d %r" % (path, r.status, body[:200]))
            return json.loads(body)
        finally:
            c.close()

    def page(self, timeout=None):
        """A Page connected to a page target: the first tab (about:blank),
        or a new one when it is taken."""
        taken = {p.target_id for p in self._pages}
        deadline = time.monotonic() + self.timeout
        target = None
        while target is None:
            targets = [t for t in self._http_json("/json/list")
                       if t.get("type") == "page" and t["id"] not in taken]
            if targets:
                target = targets[0]
            elif taken:
                target = self._http_json("/json/new?about:blank", method="PUT")
            elif time.monotonic() > deadline:
                raise CdpError("no page target in %.0fs" % self.timeout)
            else:
                time.sleep(0.05)
        p = Page(target["webSocketDebuggerUrl"], target["id"], timeout or self.timeout)
        self._pages.append(p)
        return p

    def stop(self):
        """Closes the pages, then stops the browser and every process it
        started: SIGTERM to the browser's PID, SIGKILL after 5 s, then
        SIGKILL to each of its descendants still alive and to the crash
        handlers it double-forked (found by their arguments naming this
        browser's temp dir). Removes the temp dir (unless PACER_KEEP_TMP is
        set). Idempotent."""
        for p in self._pages:
            p.close()
        self._pages = []
        if self.proc is not None:
            kids = set(_descendants(self.proc.pid)) | set(_pids_with_arg_under(self.dir))
            if self.proc.poll() is None:
                _kill(self.proc.pid, signal.SIGTERM)
                try:
                    self.proc.wait(timeout=5.0)
                except subprocess.TimeoutExpired:
                    _kill(self.proc.pid, signal.SIGKILL)
                    self.proc.wait(timeout=5.0)
            deadline = time.monotonic() + 3.0
            for k in sorted(kids):
                while _alive(k) and time.monotonic() < deadline:
                    time.sleep(0.02)
                if _alive(k):
                    _kill(k, signal.SIGKILL)
            self.proc = None
            self._log.close()
        with _browsers_lock:
            _browsers.discard(self)
        if self.dir and not os.environ.get("PACER_KEEP_TMP"):
            shutil.rmtree(self.dir, ignore_errors=True)
            self.dir = None

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()
        return False


# ---------------------------------------------------------------- page


class Page:
    """One DevTools session on a page target. send() numbers commands and
    waits for the reply with that id; every event that arrives meanwhile is
    kept in self.events (method, params) and offered to the listeners."""

    def __init__(self, ws_url, target_id, timeout=30.0):
        self.timeout = timeout
        self.target_id = target_id
        self.ws = websocket.create_connection(ws_url, timeout=timeout, suppress_origin=True)
        self.next_id = 0
        self.events = []
        self.listeners = []
        self._replies = {}
        for domain in ("Page", "Runtime", "Log"):
            self.send(domain + ".enable")

    def close(self):
        if self.ws is not None:
            try:
                self.ws.close(timeout=1.0)
            except Exception:  # noqa: BLE001 - the browser may be gone
                pass
            self.ws = None

    def _pump(self, deadline):
        """Reads one message (bounded by deadline). False on timeout."""
        left = deadline - time.monotonic()
        if left <= 0:
            return False
        self.ws.settimeout(left)
        try:
            raw = self.ws.recv()
        except websocket.WebSocketTimeoutException:
            return False
        except (websocket.WebSocketException, OSError) as e:
            raise CdpError("DevTools connection lost: %s" % e) from None
        msg = json.loads(raw)
        if "id" in msg:
            self._replies[msg["id"]] = msg
        elif "method" in msg:
            ev = (msg["method"], msg.get("params", {}))
            self.events.append(ev)
            for fn in list(self.listeners):
                fn(*ev)
        return True

    def send(self, method, params=None, timeout=None):
        """Sends one command and returns its result (a dict). Raises
        CdpError on an error reply or when no reply comes in time."""
        self.next_id += 1
        cid = self.next_id
        self.ws.send(json.dumps({"id": cid, "method": method, "params": params or {}}))
        deadline = time.monotonic() + (timeout or self.timeout)
        while cid not in self._replies:
            if not self._pump(deadline):
                raise CdpError("%s: no reply in %.0fs" % (method, timeout or self.timeout))
        msg = self._replies.pop(cid)
        if "error" in msg:
            raise CdpError("%s: %s" % (method, msg["error"].get("message", msg["error"])))
        return msg.get("result", {})

    def wait_event(self, method, pred=None, timeout=None, since=0):
        """The params of the first event `method` (at index >= since in
        self.events) for which pred(params) holds; waits for it (bounded)."""
        deadline = time.monotonic() + (timeout or self.timeout)
        i = since
        while True:
            while i < len(self.events):
                m, p = self.events[i]
                i += 1
                if m == method and (pred is None or pred(p)):
                    return p
            if not self._pump(deadline):
                raise CdpError("no %s event in %.0fs" % (method, timeout or self.timeout))

    def drain(self, quiet=0.2, timeout=5.0):
        """Reads events until none arrives for `quiet` seconds (bounded)."""
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if not self._pump(min(end, time.monotonic() + quiet)):
                return

    def open_page(self, url, timeout=None):
        """Navigates to url and waits for its load event. Raises CdpError
        when the navigation fails (e.g. connection refused)."""
        since = len(self.events)
        r = self.send("Page.navigate", {"url": url}, timeout=timeout)
        if r.get("errorText"):
            raise CdpError("navigate %s: %s" % (url, r["errorText"]))
        self.wait_event("Page.loadEventFired", timeout=timeout, since=since)
        return r

    def evaluate(self, js, await_promise=True, timeout=None):
        """The value of the JavaScript expression js (a promise is awaited).
        Raises CdpError when it throws."""
        r = self.send("Runtime.evaluate", {"expression": js, "returnByValue": True,
                                           "awaitPromise": await_promise}, timeout=timeout)
        if "exceptionDetails" in r:
            d = r["exceptionDetails"]
            text = d.get("exception", {}).get("description") or d.get("text")
            raise CdpError("evaluate: %s" % text)
        return r.get("result", {}).get("value")

    def console_messages(self):
        """[(level, text)]: console.* calls (Runtime.consoleAPICalled) and
        browser log entries (Log.entryAdded, e.g. failed loads), in order."""
        out = []
        for m, p in self.events:
            if m == "Runtime.consoleAPICalled":
                parts = []
                for a in p.get("args", []):
                    parts.append(str(a["value"]) if "value" in a else a.get("description", ""))
                out.append((p.get("type", "log"), " ".join(parts)))
            elif m == "Log.entryAdded":
                e = p.get("entry", {})
                out.append((e.get("level", "info"), e.get("text", "")))
        return out

    def exceptions(self):
        """Texts of uncaught exceptions (Runtime.exceptionThrown)."""
        out = []
        for m, p in self.events:
            if m == "Runtime.exceptionThrown":
                d = p.get("exceptionDetails", {})
                out.append(d.get("exception", {}).get("description") or d.get("text", ""))
        return out

    def screenshot_png(self, clip=None, timeout=None):
        """A PNG of the viewport, or of clip = (x, y, width, height) in CSS
        pixels. Returns the PNG bytes."""
        params = {"format": "png"}
        if clip is not None:
            x, y, w, h = clip
            params["clip"] = {"x": x, "y": y, "width": w, "height": h, "scale": 1}
        r = self.send("Page.captureScreenshot", params, timeout=timeout)
        return base64.b64decode(r["data"])


# ---------------------------------------------------------------- PNG


def decode_png(data):
    """(width, height, channels, rows) of a non-interlaced 8-bit PNG of
    color type 0 (gray), 2 (RGB), 4 (gray+alpha) or 6 (RGBA); rows is a list
    of bytes objects, width * channels bytes each. Raises ValueError on
    anything else."""
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG")
    pos, idat, hdr = 8, [], None
    while pos + 8 <= len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        pos += 12 + n
        if kind == b"IHDR":
            hdr = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat.append(body)
        elif kind == b"IEND":
            break
    if hdr is None:
        raise ValueError("PNG without IHDR")
    w, h, depth, ctype, _comp, _filt, interlace = hdr
    channels = {0: 1, 2: 3, 4: 2, 6: 4}.get(ctype)
    if depth != 8 or channels is None or interlace:
        raise ValueError("unsupported PNG (depth %d, color type %d, interlace %d)"
                         % (depth, ctype, interlace))
    raw = zlib.decompress(b"".join(idat))
    stride = w * channels
    if len(raw) < h * (stride + 1):
        raise ValueError("PNG data too short")
    rows, prev = [], bytearray(stride)
    for y in range(h):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        if f == 1:
            for i in range(channels, stride):
                line[i] = (line[i] + line[i - channels]) & 0xFF
        elif f == 2:
            for i in range(stride):
                line[i] = (line[i] + prev[i]) & 0xFF
        elif f == 3:
            for i in range(stride):
                left = line[i - channels] if i >= channels else 0
                line[i] = (line[i] + ((left + prev[i]) >> 1)) & 0xFF
        elif f == 4:
            for i in range(stride):
                a = line[i - channels] if i >= channels else 0
                b = prev[i]
                c = prev[i - channels] if i >= channels else 0
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pred = a if pa <= pb and pa <= pc else b if pb <= pc else c
                line[i] = (line[i] + pred) & 0xFF
        elif f != 0:
            raise ValueError("bad PNG filter %d in row %d" % (f, y))
        rows.append(bytes(line))
        prev = line
    return w, h, channels, rows


def non_blank_fraction(png, rect=None, background=(255, 255, 255), tolerance=8):
    """The share (0..1) of pixels in rect = (x, y, width, height) (default:
    the whole image; clipped to it) that are drawn: not fully transparent and
    differing from `background` (RGB) by more than `tolerance` in some
    channel. 0.0 for an empty rect."""
    w, h, ch, rows = decode_png(png)
    x0, y0, rw, rh = rect if rect is not None else (0, 0, w, h)
    x1, y1 = min(w, x0 + rw), min(h, y0 + rh)
    x0, y0 = max(0, x0), max(0, y0)
    total = drawn = 0
    for y in range(y0, y1):
        row = rows[y]
        for x in range(x0, x1):
            px = row[x * ch:(x + 1) * ch]
            total += 1
            if ch in (2, 4) and px[-1] == 0:
                continue
            rgb = (px[0], px[0], px[0]) if ch in (1, 2) else px[:3]
            if any(abs(rgb[i] - background[i]) > tolerance for i in range(3)):
                drawn += 1
    return drawn / total if total else 0.0


# ---------------------------------------------------------------- HAR


def _header_list(headers):
    """DevTools headers (an object; repeated fields joined by newlines) →
    HAR [{"name", "value"}], one entry per field, in the order given."""
    out = []
    for name, value in (headers or {}).items():
        for v in str(value).split("\n"):
            out.append({"name": name, "value": v})
    return out


def _get_header(headers, name):
    for h in headers:
        if h["name"].lower() == name:
            return h["value"]
    return None


def _iso(wall_s):
    return (datetime.datetime.fromtimestamp(wall_s, datetime.timezone.utc)
            .isoformat(timespec="milliseconds").replace("+00:00", "Z"))


def _cookie_pairs(value):
    out = []
    for part in (value or "").split(";"):
        name, eq, v = part.strip().partition("=")
        if name and eq:
            out.append({"name": name, "value": v})
    return out


class HarRecorder:
    """Records a page's network traffic as HAR 1.2, from Chromium's DevTools
    events (the browser makes every request; this only writes down what it
    reports):

    - request: method, url (with its #fragment when it had one),
      httpVersion (the response's protocol), headers as sent on the wire
      (Network.requestWillBeSentExtraInfo; the renderer's view from
      requestWillBeSent when there is none, e.g. a request served from the
      cache), cookies and queryString parsed from those, postData {mimeType
      (the Content-Type sent), text (Network.getRequestPostData, asked as
      soon as the request is announced; a body that is not UTF-8 has no
      text, HAR 1.2 cannot carry it, and a comment says so)};
    - response: status, statusText, headers (responseReceivedExtraInfo when
      there, else responseReceived), content {size (Network.dataReceived),
      mimeType}, redirectURL;
    - timings from the response's ResourceTiming (ms; -1 = not applicable;
      blocked = from the request's start to the first of DNS, connect or
      send), startedDateTime from the request's wallTime.

    Redirects become one entry per hop, as in Chromium's export. Requests
    that never got a response (failed, cancelled) are left out, as are
    data: URLs. Usage:

        rec = HarRecorder(page)       # enables Network on the page (disable_cache=True:
                                      # no cache, and no-cache headers on every request)
        page.open_page(url); ...      # let the page do its requests
        har = rec.har()               # waits (bounded) for loads to finish
    """

    def __init__(self, page, creator="pacer tests/integration/cdp.py", disable_cache=False):
        self.page = page
        self.creator = creator
        self.order = []          # entries in order of requestWillBeSent
        self.by_id = {}          # requestId -> current (last hop) entry
        # ExtraInfo events arrive on their own schedule (before or after the
        # event they belong to); kept per requestId in order and matched to
        # the hops of that id when the HAR is written
        self.req_extra = {}      # requestId -> [headers as sent, ...]
        self.resp_extra = {}     # requestId -> [responseReceivedExtraInfo params, ...]
        page.listeners.append(self._on_event)
        page.send("Network.enable", {"maxPostDataSize": 1 << 20})
        if disable_cache:  # adds Cache-Control/Pragma: no-cache to every request
            page.send("Network.setCacheDisabled", {"cacheDisabled": True})

    def _on_event(self, method, p):
        rid = p.get("requestId")
        if method == "Network.requestWillBeSent":
            prev = self.by_id.get(rid)
            if prev is not None and p.get("redirectResponse"):
                self._response(prev, p["redirectResponse"])
                prev["done"] = True
            e = {"rid": rid, "req": p["request"], "wall": p.get("wallTime", time.time()),
                 "ts": p.get("timestamp"), "resp": None, "extra_req": None,
                 "extra_resp": None, "size": 0, "done": False, "failed": None, "end_ts": None,
                 "post": None, "post_tried": False}
            self.by_id[rid] = e
            self.order.append(e)
            if p["request"].get("hasPostData"):
                # now, while the request is in flight: Chromium keeps some
                # bodies (Blobs, files) only until it is done. A command from
                # inside a listener is fine: replies are matched by id.
                e["post_tried"] = True
                e["post"] = self._fetch_post(e)
        elif method == "Network.requestWillBeSentExtraInfo":
            self.req_extra.setdefault(rid, []).append(p.get("headers"))
        elif method == "Network.responseReceived":
            e = self.by_id.get(rid)
            if e is not None:
                self._response(e, p["response"])
        elif method == "Network.responseReceivedExtraInfo":
            self.resp_extra.setdefault(rid, []).append(p)
        elif method == "Network.dataReceived":
            e = self.by_id.get(rid)
            if e is not None:
                e["size"] += p.get("dataLength", 0)
        elif method in ("Network.loadingFinished", "Network.loadingFailed"):
            e = self.by_id.get(rid)
            if e is not None:
                e["done"] = True
                e["end_ts"] = p.get("timestamp")
                if method == "Network.loadingFailed":
                    e["failed"] = p.get("errorText", "failed")

    def _response(self, e, resp):
        e["resp"] = resp

    def _match_extra_info(self):
        """The k-th request ExtraInfo of a requestId belongs to its k-th hop
        (each redirect is a hop); the k-th response ExtraInfo to its k-th
        hop with a response, when their status codes agree (a response from
        the cache has none)."""
        hops = {}
        for e in self.order:
            hops.setdefault(e["rid"], []).append(e)
        for rid, es in hops.items():
            for e, h in zip(es, self.req_extra.get(rid, [])):
                e["extra_req"] = h
            for e, x in zip([e for e in es if e["resp"] is not None], self.resp_extra.get(rid, [])):
                e["extra_resp"] = x if x.get("statusCode") == e["resp"].get("status") else None

    def wait_idle(self, timeout=15.0, quiet=0.3):
        """Reads events until every request seen has finished or failed and
        nothing new arrived for `quiet` s. Raises CdpError after timeout."""
        end = time.monotonic() + timeout
        while True:
            self.page.drain(quiet=quiet, timeout=max(0.0, min(quiet * 4, end - time.monotonic())))
            if all(e["done"] for e in self.order):
                return
            if time.monotonic() > end:
                pending = [e["req"]["url"] for e in self.order if not e["done"]]
                raise CdpError("requests still pending after %.0fs: %s" % (timeout, pending))

    def _fetch_post(self, e):
        """The request's body as bytes, or None when the browser does not
        have it (any more). Network.getRequestPostData first (it says when
        it answers in base64), else what requestWillBeSent carried."""
        req = e["req"]
        try:
            r = self.page.send("Network.getRequestPostData", {"requestId": e["rid"]})
            data = r.get("postData", "")
            return base64.b64decode(data) if r.get("base64Encoded") else data.encode()
        except CdpError:
            pass
        if "postData" in req:
            return req["postData"].encode()
        entries = req.get("postDataEntries") or []
        if entries and all("bytes" in x for x in entries):
            return b"".join(base64.b64decode(x["bytes"]) for x in entries)
        return None

    def _post_data(self, e, mime):
        """HAR postData for entry e (None without a body): the body as text
        when it is UTF-8; else no text and a comment saying why (HAR 1.2
        has no way to carry other bytes in postData)."""
        if not e["req"].get("hasPostData"):
            return None, 0
        body = e["post"] if e["post_tried"] else self._fetch_post(e)
        if body is None:
            return {"mimeType": mime, "comment": "the browser did not keep this body"}, -1
        try:
            return {"mimeType": mime, "text": body.decode("utf-8")}, len(body)
        except UnicodeDecodeError:
            return {"mimeType": mime, "comment": "a binary body of %d bytes: HAR text cannot "
                    "hold it" % len(body)}, len(body)

    @staticmethod
    def _timings(e):
        resp = e["resp"]
        t = resp.get("timing") if resp else None
        if not t:
            return {"blocked": -1, "dns": -1, "connect": -1, "send": 0, "wait": 0,
                    "receive": 0, "ssl": -1}, 0

        def span(a, b):
            s, f = t.get(a, -1), t.get(b, -1)
            return round(f - s, 3) if s >= 0 and f >= 0 else -1

        starts = [t[k] for k in ("dnsStart", "connectStart", "sendStart") if t.get(k, -1) >= 0]
        blocked = round(min(starts), 3) if starts else -1
        send = span("sendStart", "sendEnd")
        wait = span("sendEnd", "receiveHeadersEnd")
        receive = 0
        if e["end_ts"] is not None and t.get("requestTime"):
            receive = round(max(0.0, (e["end_ts"] - t["requestTime"]) * 1000.0
                                - t.get("receiveHeadersEnd", 0)), 3)
        tm = {"blocked": blocked, "dns": span("dnsStart", "dnsEnd"),
              "connect": span("connectStart", "connectEnd"), "send": max(send, 0),
              "wait": max(wait, 0), "receive": receive, "ssl": span("sslStart", "sslEnd")}
        total = sum(v for k, v in tm.items() if k != "ssl" and v > 0)
        return tm, round(total, 3)

    def har(self, wait=True, timeout=15.0):
        """The HAR 1.2 log (a dict) of what was recorded so far; with wait,
        first waits (bounded) until the page's requests are done."""
        if wait:
            self.wait_idle(timeout=timeout)
        self._match_extra_info()
        entries = []
        for e in self.order:
            req, resp = e["req"], e["resp"]
            url = req["url"] + req.get("urlFragment", "")
            if resp is None or url.startswith("data:"):
                continue
            wire = e["extra_req"] is not None
            headers = _header_list(e["extra_req"] if wire else req.get("headers"))
            http_version = resp.get("protocol", "http/1.1")
            http_version = "HTTP/1.1" if http_version == "http/1.1" else http_version
            post, body_size = self._post_data(e, _get_header(headers, "content-type") or "")
            q = urllib.parse.urlsplit(url).query
            request = {
                "method": req["method"],
                "url": url,
                "httpVersion": http_version,
                "headers": headers,
                "queryString": [{"name": k, "value": v}
                                for k, v in urllib.parse.parse_qsl(q, keep_blank_values=True)],
                "cookies": _cookie_pairs(_get_header(headers, "cookie")),
                "headersSize": -1,
                "bodySize": body_size,
            }
            if post is not None:
                request["postData"] = post
            rx = e["extra_resp"]
            rh = _header_list(rx["headers"] if rx else resp.get("headers"))
            timings, total = self._timings(e)
            entries.append({
                "startedDateTime": _iso(e["wall"]),
                "time": total,
                "request": request,
                "response": {
                    "status": rx.get("statusCode", resp["status"]) if rx else resp["status"],
                    "statusText": resp.get("statusText", ""),
                    "httpVersion": http_version,
                    "headers": rh,
                    "cookies": [],
                    "content": {"size": e["size"], "mimeType": resp.get("mimeType", "")},
                    "redirectURL": _get_header(rh, "location") or "",
                    "headersSize": -1,
                    "bodySize": -1,
                },
                "cache": {},
                "timings": timings,
                "serverIPAddress": resp.get("remoteIPAddress", ""),
                "_wireHeaders": wire,
            })
        return {"log": {
            "version": "1.2",
            "creator": {"name": self.creator, "version": "1",
                        "comment": "written from Chromium DevTools Network events"},
            "browser": {"name": "Chromium", "version": self.page.send("Browser.getVersion")
                        .get("product", "")},
            "pages": [],
            "entries": entries,
        }}
