"""The live page of --metrics-listen (docs/metrics.md "The live page"),
in headless Chromium driven over the DevTools protocol (cdp.py) while a
run goes on: `/` loads with its script from the same server (`/live.js`),
nothing from elsewhere and no Content-Security-Policy violation or script
error; after a couple of seconds it shows the achieved rate and p99 of the
last second, and they match what `/live.json` says at the same moment (the
same tick: the page's data-elapsed equals the JSON's elapsed_s); the rate is
near the offered one, and the chart has drawn its lines.

One open-loop run of the embedded target (`pacer serve`), 400 req/s for
10 s on loopback; the browser is stopped by PID when the block ends."""

import http.client
import json
import re
import time
import unittest

import cdp
import harness
from harness import PacerServe, PacerTestCase

RATE = 400


def setUpModule():
    harness.require_pacer()
    if not cdp.available():
        raise unittest.SkipTest("chromium not installed (Debian package chromium; "
                                "scripts/deps.sh installs it)")


def http_get(port, path):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    try:
        c.request("GET", path)
        r = c.getresponse()
        return r.status, dict((k.lower(), v) for k, v in r.getheaders()), r.read().decode()
    finally:
        c.close()


def seconds(text):
    """'710 µs' -> 0.00071 (the page's duration format)."""
    m = re.fullmatch(r"([\d.]+) (µs|ms|s)", text)
    if not m:
        raise ValueError("not a duration: %r" % text)
    return float(m.group(1)) * {"µs": 1e-6, "ms": 1e-3, "s": 1.0}[m.group(2)]


PAGE_STATE = """(() => {
  const s = document.querySelector("section.v");
  if (!s) return null;
  const k = n => (s.querySelector('[data-k="' + n + '"]') || {}).textContent;
  return {elapsed: s.dataset.elapsed, phase: k("phase"), rate: k("rate"), p99: k("p99"),
          offered: k("offered"), lines: s.querySelectorAll("svg polyline").length,
          points: Array.from(s.querySelectorAll("svg polyline"))
                       .map(p => p.getAttribute("points").split(" ").length)};
})()"""


class LivePageTest(PacerTestCase):
    def test_page_matches_live_json(self):
        port = harness.free_port()
        seen = {}

        def browse(_pid):
            base = "http://127.0.0.1:%d" % port
            seen["head"] = http_get(port, "/")
            with cdp.Browser() as b:
                page = b.page()
                page.send("Runtime.enable")
                page.send("Log.enable")
                page.send("Page.enable")
                page.send("Network.enable")
                page.open_page(base + "/")
                # a couple of seconds of polling, then the page and the
                # JSON of one tick side by side (tries until they agree on
                # the tick: both move once a second)
                time.sleep(2.5)
                tries = []
                for _ in range(40):
                    st = page.evaluate(PAGE_STATE)
                    code, _, body = http_get(port, "/live.json")
                    j = json.loads(body)["variants"][0] if code == 200 else None
                    tries.append((st, j))
                    if st and j and st["elapsed"] and float(st["elapsed"]) == j["elapsed_s"] \
                            and j["phase"] == "measure" and j["last_second"]["responses"] > 0:
                        seen["match"] = (st, j)
                        break
                    time.sleep(0.15)
                seen["tries"] = tries[-3:]
                seen["urls"] = sorted({p["request"]["url"] for m, p in page.events
                                       if m == "Network.requestWillBeSent"})
                seen["console"] = page.console_messages()
                seen["exceptions"] = page.exceptions()

        with PacerServe("hello") as srv:
            run = self.run_ok([srv.url("/"), "--rate", RATE, "--duration", "10s",
                               "--metrics-listen", "127.0.0.1:%d" % port],
                              actions=[(1.0, browse)], timeout=90)
        self.assertIn("live page at http://127.0.0.1:%d/" % port, run.stderr)
        code, headers, html = seen["head"]
        self.assertEqual(code, 200)
        csp = headers["content-security-policy"]
        self.assertIn("default-src 'none'", csp)
        self.assertIn("script-src 'self'", csp)
        self.assertIn("connect-src 'self'", csp)
        self.assertNotRegex(html, r"(src|href)=\"?(https?:)?//")  # no outside asset
        # every request the browser made went to pacer's endpoint
        self.assertTrue(seen["urls"], seen)
        for u in seen["urls"]:
            self.assertTrue(u.startswith("http://127.0.0.1:%d/" % port), seen["urls"])
        self.assertIn("http://127.0.0.1:%d/live.json" % port, seen["urls"])
        self.assertEqual(seen["exceptions"], [])
        self.assertEqual([m for m in seen["console"] if m[0] in ("error", "warning")], [],
                         seen["console"])
        self.assertIn("match", seen, "the page never showed the JSON's tick: %r" % seen["tries"])
        st, j = seen["match"]
        ls = j["last_second"]
        page_rate = float(st["rate"].replace(",", ""))
        self.assertAlmostEqual(page_rate, ls["achieved_per_s"], delta=0.051 + 1e-4 * page_rate)
        self.assertLess(abs(page_rate - RATE), 0.3 * RATE, st)
        self.assertIsNotNone(ls["p99_s"], j)
        self.assertAlmostEqual(seconds(st["p99"]), ls["p99_s"], delta=0.006 * ls["p99_s"])
        self.assertEqual(st["offered"], "400")
        self.assertIn("measure", st["phase"])
        self.assertEqual(st["lines"], 2, st)  # rate and p99 drawn
        self.assertGreaterEqual(min(st["points"]), 2, st)


if __name__ == "__main__":
    unittest.main()
