"""A HAR recorded by a real browser imports and replays.

A small site on 127.0.0.1 (Python's http.server in a thread) serves a page
whose script sets a cookie and does fetch() GET, POST (a JSON body with non-
ASCII text), PUT, and which loads a stylesheet and an image (the server sets
a cookie too). Headless Chromium (Debian's /usr/bin/chromium, driven through
tests/integration/cdp.py) loads it; the HAR is written from the browser's own
DevTools network events. Then `pacer import har` turns it into a table (the
methods, URLs and bodies the browser sent, byte for byte; cookies dropped by
default and kept with --keep-cookies; hop-by-hop headers dropped), `pacer
table show` and `hash` read it, and `pacer run --requests-file` replays it
against the same server, which sees exactly the table's mix.

Skipped only when /usr/bin/chromium is missing (Debian package chromium;
scripts/deps.sh installs it)."""

import base64
import collections
import http.server
import json
import os
import re
import shutil
import struct
import tempfile
import threading
import unittest
import zlib

import cdp
import harness

# What the page's script sends; the server checks it received exactly this.
POST_BODY = json.dumps({"name": "Zoë", "tags": ["a", "b"], "ok": True, "note": "x&y=z ✓"},
                       ensure_ascii=False, separators=(",", ":"))
PUT_BODY = "quantity=3\nline two"


def tiny_png():
    """A valid 2x2 RGB PNG."""
    def chunk(kind, data):
        return (struct.pack(">I", len(data)) + kind + data
                + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))
    raw = b"".join(b"\x00" + bytes([200, 30, 30] * 2) for _ in range(2))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 2, 2, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))


PAGE = """<!doctype html>
<html><head><meta charset="utf-8"><title>pacer HAR test</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/static/app.css"></head>
<body><h1>pacer</h1><img src="/static/logo.png" alt="logo">
<script>
document.cookie = "theme=dark; path=/";
(async () => {
  const r1 = await fetch("/api/items?page=2&sort=name");
  await r1.text();
  const r2 = await fetch("/api/items", {method: "POST",
    headers: {"Content-Type": "application/json", "X-Request-Id": "req-42"},
    body: %s});
  await r2.text();
  const r3 = await fetch("/api/items/7", {method: "PUT", body: %s});
  await r3.text();
  const r4 = await fetch("/old-items");  // 302 to /api/items?page=1
  await r4.text();
  window.__done = true;
})().catch(e => { console.error("fetch failed: " + e); window.__done = "error"; });
</script></body></html>
""" % (json.dumps(POST_BODY, ensure_ascii=False), json.dumps(PUT_BODY))

HELPERS_PAGE = b"""<!doctype html>
<html><head><meta charset="utf-8"><link rel="icon" href="data:,"></head>
<body style="margin:0;background:#fff">
<div style="position:absolute;left:10px;top:10px;width:100px;height:50px;background:#c00"></div>
<img src="/missing.png" style="display:none">
<script>
console.log("hello from the page", 42);
console.warn("careful");
setTimeout(() => { throw new Error("boom"); }, 0);
</script></body></html>
"""

STATIC = {
    "/helpers": ("text/html; charset=utf-8", HELPERS_PAGE),
    "/": ("text/html; charset=utf-8", PAGE.encode()),
    "/static/app.css": ("text/css", b"body { font-family: sans-serif; color: #222; }\n"),
    "/static/logo.png": ("image/png", tiny_png()),
    "/favicon.ico": ("image/png", tiny_png()),
}

Seen = collections.namedtuple("Seen", "method path query headers body")


class Site:
    """The test site: HTTP/1.1 with keep-alive, every request recorded."""

    def __init__(self):
        self.seen = []
        self.lock = threading.Lock()
        site = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # headers and body go out in two writes

            def log_message(self, *a):
                pass

            def handle_any(self):
                n = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(n) if n else b""
                path, _, query = self.path.partition("?")
                with site.lock:
                    site.seen.append(Seen(self.command, path, query, list(self.headers.items()), body))
                if path in STATIC and self.command == "GET":
                    ctype, out = STATIC[path]
                    status = 200
                elif path == "/old-items":
                    ctype, out, status = "text/plain", b"moved\n", 302
                elif path.startswith("/api/items"):
                    ctype, status = "application/json", 201 if self.command == "POST" else 200
                    out = json.dumps({"ok": True, "method": self.command}).encode()
                else:
                    ctype, out, status = "text/plain", b"not found\n", 404
                self.send_response(status)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(out)))
                if path == "/":
                    self.send_header("Set-Cookie", "session=abc123; Path=/")
                if status == 302:
                    self.send_header("Location", "/api/items?page=1")
                self.end_headers()
                self.wfile.write(out)

            do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = handle_any

        self.srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.srv.daemon_threads = True
        self.port = self.srv.server_address[1]
        self.thread = threading.Thread(target=self.srv.serve_forever, kwargs={"poll_interval": 0.05},
                                       daemon=True)
        self.thread.start()

    def url(self, path="/"):
        return "http://127.0.0.1:%d%s" % (self.port, path)

    def mark(self):
        with self.lock:
            return len(self.seen)

    def since(self, mark):
        with self.lock:
            return list(self.seen[mark:])

    def stop(self):
        self.srv.shutdown()
        self.srv.server_close()
        self.thread.join(timeout=5)


def header(headers, name):
    """The values of header `name` (any case) in a [(name, value)] list."""
    return [v for n, v in headers if n.lower() == name.lower()]


HASH_LINE = re.compile(r"^([0-9a-f]{64})  (\d+) requests$")


class HarBrowserTest(harness.PacerTestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        if not os.path.exists(cdp.CHROMIUM):
            raise unittest.SkipTest("%s not found: install the Debian package chromium "
                                    "(scripts/deps.sh does; CI has it)" % cdp.CHROMIUM)
        cls.tmp = tempfile.mkdtemp(prefix="pacer-har-browser-")
        cls.site = Site()
        try:
            cls.record()
        except Exception:
            cls.site.stop()
            shutil.rmtree(cls.tmp, ignore_errors=True)
            raise

    @classmethod
    def tearDownClass(cls):
        cls.site.stop()
        if not os.environ.get("PACER_KEEP_TMP"):
            shutil.rmtree(cls.tmp, ignore_errors=True)

    @classmethod
    def record(cls):
        """Chromium loads the page; its script does the fetches; the HAR is
        written from the browser's network events."""
        mark = cls.site.mark()
        with cdp.Browser() as b:
            page = b.page()
            rec = cdp.HarRecorder(page)
            page.open_page(cls.site.url("/"), timeout=30)
            done = page.evaluate(
                "new Promise(r => { const t = setInterval(() => { if (window.__done) "
                "{ clearInterval(t); r(window.__done); } }, 20); })", timeout=30)
            if done is not True:
                raise AssertionError("the page's script failed: %r %r %r"
                                     % (done, page.console_messages(), page.exceptions()))
            # the page names its icon (no late /favicon.ico): once the HAR's
            # requests are done, the server has seen all the browser sent
            cls.har = rec.har(timeout=30)
            cls.browser_seen = cls.site.since(mark)
            cls.page_errors = page.exceptions()
        cls.har_path = os.path.join(cls.tmp, "browser.har")
        with open(cls.har_path, "w") as f:
            json.dump(cls.har, f, indent=1, ensure_ascii=False)

    def pacer(self, args, sub, code=0):
        run = harness.run_pacer(args, timeout=60.0, out=False, subcommand=sub)
        self.assertFalse(run.timed_out, harness.describe(run))
        self.assertEqual(run.code, code, harness.describe(run))
        return run

    def import_har(self, *extra):
        run = self.pacer(["har", self.har_path, *extra], "import")
        return run, [json.loads(l) for l in run.stdout.splitlines()]

    def write(self, name, text):
        p = os.path.join(self.tmp, name)
        with open(p, "w") as f:
            f.write(text)
        return p

    def browser_request(self, method, path):
        got = [s for s in self.browser_seen if s.method == method and s.path == path]
        self.assertTrue(got, "the browser did not send %s %s: %s" % (method, path, self.browser_seen))
        return got[0]

    # ------------------------------------------------------------ the recording

    def test_har_is_the_browsers(self):
        """The HAR holds what the browser sent: its requests, wire headers
        (Host, Connection, Cookie), and the bodies as the server got them."""
        self.assertEqual(self.page_errors, [])
        entries = self.har["log"]["entries"]
        self.assertEqual(self.har["log"]["version"], "1.2")
        self.assertIn("Chrom", self.har["log"]["browser"]["version"])
        got = {(e["request"]["method"], e["request"]["url"]) for e in entries}
        for m, p in [("GET", "/"), ("GET", "/static/app.css"), ("GET", "/static/logo.png"),
                     ("GET", "/api/items?page=2&sort=name"), ("POST", "/api/items"),
                     ("PUT", "/api/items/7")]:
            self.assertIn((m, self.site.url(p)), got)
        # one entry per request the server saw, the same method and target
        self.assertEqual(sorted((e["request"]["method"], e["request"]["url"]) for e in entries),
                         sorted((s.method, self.site.url(s.path + ("?" + s.query if s.query else "")))
                                for s in self.browser_seen))
        post = [e for e in entries if e["request"]["method"] == "POST"][0]["request"]
        self.assertEqual(post["postData"]["text"].encode(), self.browser_request("POST", "/api/items").body)
        self.assertEqual(post["postData"]["mimeType"], "application/json")
        names = {h["name"].lower() for e in entries for h in e["request"]["headers"]}
        self.assertTrue({"host", "connection", "user-agent", "cookie"} <= names, names)
        status = {(e["request"]["method"], e["request"]["url"]): e["response"]["status"] for e in entries}
        self.assertEqual(status[("POST", self.site.url("/api/items"))], 201)
        # a redirect is two entries, each with its own response
        self.assertEqual(status[("GET", self.site.url("/old-items"))], 302)
        self.assertEqual(status[("GET", self.site.url("/api/items?page=1"))], 200)
        moved = [e for e in entries if e["request"]["url"].endswith("/old-items")][0]
        self.assertEqual(moved["response"]["redirectURL"], "/api/items?page=1")
        for e in entries:
            self.assertGreaterEqual(e["timings"]["wait"], 0)
            # the headers as sent on the wire carry the Content-Length of the body
            cl = [h["value"] for h in e["request"]["headers"] if h["name"].lower() == "content-length"]
            body = e["request"].get("postData", {}).get("text", "").encode()
            self.assertEqual(cl, [str(len(body))] if e["request"]["method"] in ("POST", "PUT") else [])

    def test_cdp_page_helpers(self):
        """cdp.py's helpers other tests use: console messages, exceptions,
        evaluate, and a screenshot whose drawn area is where the page drew."""
        with cdp.Browser() as b:
            page = b.page()
            page.open_page(self.site.url("/helpers"))
            self.assertEqual(page.evaluate("new Promise(r => setTimeout(() => r(6 * 7), 50))"), 42)
            page.drain(quiet=0.2)
            msgs = page.console_messages()
            self.assertIn(("log", "hello from the page 42"), msgs)
            self.assertIn(("warning", "careful"), msgs)
            self.assertTrue(any(level == "error" and "404" in text for level, text in msgs), msgs)
            self.assertTrue(any("boom" in e for e in page.exceptions()), page.exceptions())
            with self.assertRaises(cdp.CdpError):
                page.evaluate("nope()")
            png = page.screenshot_png()
            w, h, _, _ = cdp.decode_png(png)
            self.assertGreaterEqual((w, h), (200, 100))
            self.assertGreater(cdp.non_blank_fraction(png, (12, 12, 96, 46)), 0.99)
            self.assertEqual(cdp.non_blank_fraction(png, (130, 10, 60, 60)), 0.0)
            clip = page.screenshot_png(clip=(0, 0, 120, 70))
            self.assertEqual(cdp.decode_png(clip)[:2], (120, 70))
            # the box covers (10..110) x (10..60) of the 120 x 70 clip
            self.assertAlmostEqual(cdp.non_blank_fraction(clip), 100 * 50 / (120 * 70), delta=0.02)
        self.assertIsNone(b.proc)  # stopped
        self.assertIsNone(b.dir)

    # ------------------------------------------------------------ import

    def test_import(self):
        run, reqs = self.import_har()
        entries = self.har["log"]["entries"]
        self.assertEqual([(r["method"], r["url"]) for r in reqs],
                         [(e["request"]["method"], e["request"]["url"]) for e in entries])
        by = {(r["method"], r["url"]): r for r in reqs}
        post = by[("POST", self.site.url("/api/items"))]
        want = self.browser_request("POST", "/api/items").body
        self.assertEqual(base64.b64decode(post["body"]), want)
        self.assertEqual(want, POST_BODY.encode())
        put = by[("PUT", self.site.url("/api/items/7"))]
        self.assertEqual(base64.b64decode(put["body"]), PUT_BODY.encode())
        self.assertEqual({n.lower(): v for n, v in post["header"].items()}["content-type"],
                         ["application/json"])
        self.assertEqual({n.lower(): v for n, v in post["header"].items()}["x-request-id"], ["req-42"])
        for r in reqs:
            names = {n.lower() for n in r.get("header", {})}
            self.assertFalse(names & {"cookie", "host", "connection", "content-length", "keep-alive"},
                             (r["url"], names))
            self.assertFalse(any(n.startswith(":") for n in names), names)
            self.assertIn("user-agent", names)
        self.assertNotIn("body", by[("GET", self.site.url("/"))])
        # a HAR that lost part of a body (as browsers do with binary
        # uploads) is refused, naming the entry, rather than replayed wrong
        har = json.loads(json.dumps(self.har))
        i = [k for k, e in enumerate(har["log"]["entries"]) if e["request"]["method"] == "POST"][0]
        har["log"]["entries"][i]["request"]["postData"]["text"] = POST_BODY[:-1]
        cut = self.write("cut.har", json.dumps(har, ensure_ascii=False))
        run = self.pacer(["har", cut], "import", code=2)
        self.assertIn("%s: log.entries[%d].request.postData: holds %d bytes of body but the request "
                      "was sent with Content-Length: %d" % (cut, i, len(POST_BODY.encode()) - 1,
                                                           len(POST_BODY.encode())), run.stderr)
        # kept with --keep-cookies: what the browser sent
        _, kept = self.import_har("--keep-cookies")
        api = [r for r in kept if r["url"] == self.site.url("/api/items?page=2&sort=name")][0]
        cookie = {n.lower(): v for n, v in api["header"].items()}["cookie"]
        sent = header(self.browser_request("GET", "/api/items").headers, "Cookie")
        self.assertEqual(cookie, sent)
        self.assertIn("session=abc123", cookie[0])
        self.assertIn("theme=dark", cookie[0])

    def test_show_and_hash(self):
        run, reqs = self.import_har()
        table = self.write("show.jsonl", run.stdout)
        show = self.pacer(["show", table], "table").stdout
        self.assertIn("requests  %d" % len(reqs), show)
        self.assertIn("127.0.0.1:%d" % self.site.port, show)
        for m in ("GET", "POST", "PUT"):
            self.assertRegex(show, r"\n  %s +\d" % m)
        self.assertIn("/api/items/{id}", show)
        h = HASH_LINE.match(self.pacer(["hash", table], "table").stdout.strip())
        self.assertIsNotNone(h)
        self.assertEqual(int(h.group(2)), len(reqs))
        self.assertIn("sha256    " + h.group(1), show)
        # importing again gives the same table
        again = self.write("again.jsonl", self.import_har()[0].stdout)
        self.assertEqual(self.pacer(["hash", again], "table").stdout.split()[0], h.group(1))
        with_cookies = self.write("cookies.jsonl", self.import_har("--keep-cookies")[0].stdout)
        self.assertNotEqual(self.pacer(["hash", with_cookies], "table").stdout.split()[0], h.group(1))

    # ------------------------------------------------------------ replay

    def test_replay(self):
        run, reqs = self.import_har()
        table = self.write("replay.jsonl", run.stdout)
        n = 200
        mark = self.site.mark()
        res = harness.run_pacer(["--requests-file", table, "--requests", n, "--concurrency", "4",
                                 "--timeout", "5s", "-q"], timeout=90)
        self.assertEqual(res.code, 0, harness.describe(res))
        seen = self.site.since(mark)
        self.assertEqual(res.json["measure"]["requests"]["completed"], n)
        self.assertEqual(res.json["measure"]["errors"]["total"], 0, harness.describe(res))
        # sequential order, wrapping around: request i of the table is sent
        # n // len + (i < n % len) times; the server sees exactly that mix
        want = collections.Counter()
        for i, r in enumerate(reqs):
            path = r["url"].split("://", 1)[1].split("/", 1)[1]
            want[(r["method"], "/" + path.split("?")[0])] += n // len(reqs) + (i < n % len(reqs))
        got = collections.Counter((s.method, s.path) for s in seen)
        self.assertEqual(got, want)
        for s in seen:
            self.assertEqual(header(s.headers, "Cookie"), [], s)
            self.assertIn("HeadlessChrome", header(s.headers, "User-Agent")[0])
            if s.method == "POST":
                self.assertEqual(s.body, POST_BODY.encode())
                self.assertEqual(header(s.headers, "X-Request-Id"), ["req-42"])
            if s.method == "PUT":
                self.assertEqual(s.body, PUT_BODY.encode())
        t = res.json["plan"]["table"]
        self.assertEqual(t["requests"], len(reqs))
        h = self.pacer(["hash", table], "table").stdout.split()[0]
        self.assertEqual(t["sha256"], h)


def encode_png(w, h, channels, rows, filters):
    """A PNG of 8-bit pixels with the given filter type per row (0-4)."""
    ctype = {1: 0, 2: 4, 3: 2, 4: 6}[channels]
    raw, prev = bytearray(), bytes(w * channels)
    for y, row in enumerate(rows):
        f = filters[y % len(filters)]
        out = bytearray()
        for i, x in enumerate(row):
            a = row[i - channels] if i >= channels else 0
            b, c = prev[i], prev[i - channels] if i >= channels else 0
            if f == 0:
                pred = 0
            elif f == 1:
                pred = a
            elif f == 2:
                pred = b
            elif f == 3:
                pred = (a + b) >> 1
            else:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pred = a if pa <= pb and pa <= pc else b if pb <= pc else c
            out.append((x - pred) & 0xFF)
        raw += bytes([f]) + out
        prev = row

    def chunk(kind, data):
        return (struct.pack(">I", len(data)) + kind + data
                + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))
    return (b"\x89PNG\r\n\x1a\n"
            + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, ctype, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(bytes(raw))) + chunk(b"IEND", b""))


class PngDecoderTest(unittest.TestCase):
    """cdp.decode_png and non_blank_fraction on PNGs made here (every
    filter type, each color type); no browser needed."""

    def test_filters_and_color_types(self):
        import random
        rnd = random.Random(5)
        for channels in (1, 2, 3, 4):
            w, h = 7, 10
            rows = [bytes(rnd.randrange(256) for _ in range(w * channels)) for _ in range(h)]
            png = encode_png(w, h, channels, rows, [0, 1, 2, 3, 4])
            self.assertEqual(cdp.decode_png(png), (w, h, channels, rows))

    def test_non_blank_fraction(self):
        w, h = 10, 4
        white, red = bytes([255, 255, 255]), bytes([200, 0, 0])
        rows = [b"".join(red if x < 3 and y < 2 else white for x in range(w)) for y in range(h)]
        png = encode_png(w, h, 3, rows, [4])
        self.assertEqual(cdp.non_blank_fraction(png), 6 / 40)
        self.assertEqual(cdp.non_blank_fraction(png, (0, 0, 3, 2)), 1.0)
        self.assertEqual(cdp.non_blank_fraction(png, (0, 0, 6, 2)), 0.5)
        self.assertEqual(cdp.non_blank_fraction(png, (5, 0, 100, 100)), 0.0)  # clipped
        self.assertEqual(cdp.non_blank_fraction(png, (20, 20, 5, 5)), 0.0)    # empty
        # near-white within the tolerance is blank; transparent is blank
        rgba = [bytes([250, 250, 250, 255, 0, 0, 0, 0, 0, 0, 0, 255])]
        self.assertEqual(cdp.non_blank_fraction(encode_png(3, 1, 4, rgba, [0])), 1 / 3)
        with self.assertRaises(ValueError):
            cdp.decode_png(b"GIF89a")


if __name__ == "__main__":
    unittest.main()
