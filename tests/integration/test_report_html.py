"""The HTML report in a real browser (issue 7): Debian's headless Chromium,
driven over the DevTools protocol by cdp.py, opens report.html from a
file:// URL with no console errors or exceptions, every chart figure is
drawn (a screenshot of its area has marks), and strings that came from the
command line, rules or warnings (here a header and an outcome rule holding
<script>) are shown as text and never run."""

import atexit
import base64
import json
import os
import shutil
import tempfile
import unittest

import cdp
import harness
from harness import PacerTestCase

EVIL_HDR = "X-Evil: <script>window.__pwned=1</script><img src=x onerror=window.__pwned=3>"
EVIL_RULE = 'x=body contains "<script>window.__pwned=2</script>"'


def setUpModule():
    harness.require_pacer()
    if not cdp.available():
        raise unittest.SkipTest("chromium not installed (Debian package chromium; "
                                "scripts/deps.sh installs it)")


class HtmlReportTest(PacerTestCase):
    def _check_html(self, path, min_charts):
        with cdp.Browser() as b:
            page = b.page()
            page.send("Runtime.enable")
            page.send("Log.enable")
            page.send("Page.enable")
            page.send("Emulation.setDeviceMetricsOverride",
                      {"width": 1280, "height": 900, "deviceScaleFactor": 1, "mobile": False})
            page.open_page("file://" + os.path.abspath(path))
            page.drain(quiet=0.5)
            self.assertEqual(page.exceptions(), [])
            bad = [m for m in page.console_messages() if m[0] in ("error", "warning")]
            self.assertEqual(bad, [], "console: %r" % bad)
            self.assertEqual(page.evaluate("typeof window.__pwned"), "undefined")
            text = page.evaluate("document.body.innerText")
            self.assertIn("<script>window.__pwned=1</script>", text)
            self.assertEqual(page.evaluate("document.scripts.length"), 0)
            boxes = json.loads(page.evaluate(
                "JSON.stringify([...document.querySelectorAll('figure.chart')].map(f => {"
                " const s = f.querySelector('svg'); const r = s.getBoundingClientRect();"
                " return {id: f.id, x: r.left + scrollX, y: r.top + scrollY,"
                " w: r.width, h: r.height}; }))"))
            self.assertGreaterEqual(len(boxes), min_charts, boxes)
            for bx in boxes:
                self.assertGreater(bx["w"], 100, bx)
                self.assertGreater(bx["h"], 50, bx)
                r = page.send("Page.captureScreenshot", {
                    "format": "png", "captureBeyondViewport": True,
                    "clip": {"x": bx["x"], "y": bx["y"], "width": bx["w"], "height": bx["h"],
                             "scale": 1}})
                png = base64.b64decode(r["data"])
                frac = cdp.non_blank_fraction(png)
                # axes, lines and labels: clearly more than nothing, far from a
                # solid block
                self.assertGreater(frac, 0.01, "chart %s looks blank (%.4f)" % (bx["id"], frac))
                self.assertLess(frac, 0.95, "chart %s looks solid (%.4f)" % (bx["id"], frac))
            return boxes

    def test_run_report(self):
        d = os.path.join(self.tmpdir(), "rep")
        run = harness.run_pacer(["--self-contained=vast_ortb_mix", "--rate", "300",
                                 "--duration", "3s", "-H", EVIL_HDR, "--outcome", EVIL_RULE,
                                 "--report-dir", d])
        self.assertEqual(run.code, 0, harness.describe(run))
        for f in ("report.html", "report.md", "report.csv", "latency.hlog"):
            self.assertTrue(os.path.exists(os.path.join(d, f)), f)
        md = open(os.path.join(d, "report.md")).read()
        self.assertNotIn("<script>", md)
        boxes = self._check_html(os.path.join(d, "report.html"), 2)
        ids = {b["id"] for b in boxes}
        self.assertTrue(any("spectrum" in i for i in ids), ids)

    def test_ramp_report(self):
        d = os.path.join(self.tmpdir(), "rep")
        run = harness.run_pacer(["--self-contained=vast_ortb_mix", "--steps", "200,400,800",
                                 "--step-duration", "1s", "--slo", "p99<50ms",
                                 "-H", EVIL_HDR, "--outcome", EVIL_RULE, "--report-dir", d],
                                subcommand="ramp")
        self.assertIn(run.code, (0, 1), harness.describe(run))
        boxes = self._check_html(os.path.join(d, "report.html"), 3)
        ids = {b["id"] for b in boxes}
        self.assertTrue(any("load" in i or "ramp" in i for i in ids), ids)

    def tmpdir(self):
        d = tempfile.mkdtemp(prefix="pacer-html-")
        atexit.register(shutil.rmtree, d, True)
        return d


if __name__ == "__main__":
    unittest.main()
