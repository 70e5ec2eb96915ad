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
            self._check_layout(page)
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

    def _check_layout(self, page):
        """Issue 18: every table fits its column (no horizontal scrollbar), no
        cell's content runs past its cell, a key column is not squeezed into
        mid-word breaks, and no chart label runs past its chart's edge."""
        over = json.loads(page.evaluate("""JSON.stringify((() => {
            const out = [];
            const main = document.querySelector('main');
            const mr = main.getBoundingClientRect();
            const cs = getComputedStyle(main);
            const right = mr.right - parseFloat(cs.paddingRight) + 0.5;
            document.querySelectorAll('table').forEach((t, i) => {
                const r = t.getBoundingClientRect();
                const wrap = t.parentElement;
                if (r.right > right || wrap.scrollWidth > wrap.clientWidth + 1)
                    out.push({table: i, head: t.rows[0].cells[0].innerText,
                              right: r.right, limit: right});
                t.querySelectorAll('th, td').forEach(c => {
                    if (c.scrollWidth > c.clientWidth + 1)
                        out.push({table: i, cell: c.innerText.slice(0, 60),
                                  scroll: c.scrollWidth, client: c.clientWidth});
                });
                // a first (key) column at least as wide as its longest word
                for (const row of t.rows) {
                    const c = row.cells[0];
                    const range = document.createRange();
                    for (const w of c.innerText.split(/\\s+/)) {
                        if (!w) continue;
                        const probe = document.createElement('span');
                        probe.textContent = w;
                        probe.style.whiteSpace = 'nowrap';
                        probe.style.position = 'absolute';
                        probe.style.visibility = 'hidden';
                        c.appendChild(probe);
                        const pw = probe.getBoundingClientRect().width;
                        c.removeChild(probe);
                        const inner = c.clientWidth - parseFloat(getComputedStyle(c).paddingLeft)
                                      - parseFloat(getComputedStyle(c).paddingRight);
                        if (pw > inner + 1)
                            out.push({table: i, word: w, width: pw, column: inner});
                    }
                }
            });
            document.querySelectorAll('figure.chart svg').forEach(s => {
                const sr = s.getBoundingClientRect();  // transforms (rotated labels) applied
                s.querySelectorAll('text').forEach(tx => {
                    const b = tx.getBoundingClientRect();
                    if (b.left < sr.left - 0.5 || b.right > sr.right + 0.5 ||
                        b.top < sr.top - 0.5 || b.bottom > sr.bottom + 0.5)
                        out.push({chart: s.parentElement.id, text: tx.textContent,
                                  left: b.left - sr.left, right: sr.right - b.right});
                });
            });
            return out;
        })())"""))
        self.assertEqual(over, [], "elements overflow: %r" % over[:10])

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
        # issue 18: the distribution beside the spectrum, status codes over time
        self.assertTrue({"chart-histogram", "chart-status"} <= ids, ids)

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
        self.assertTrue({"chart-histogram", "chart-status"} <= ids, ids)

    def tmpdir(self):
        d = tempfile.mkdtemp(prefix="pacer-html-")
        atexit.register(shutil.rmtree, d, True)
        return d


if __name__ == "__main__":
    unittest.main()
