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

# Issue 30: what a 1,280 x 800 window shows first, every report kind. Page
# coordinates (scrollY added) of the title, the headline, the key figures and
# the first chart; the widest table's right edge; and each table box's
# scroll width against its own width.
LEAD_JS = r"""JSON.stringify((() => {
  const box = e => { if (!e) return null; const r = e.getBoundingClientRect();
    return {top: r.top + scrollY, bottom: r.bottom + scrollY, left: r.left, right: r.right,
            width: r.width}; };
  const main = document.querySelector('main');
  const cs = getComputedStyle(main);
  const squeezed = [];
  document.querySelectorAll('td, th').forEach(c => {
    const t = c.innerText.trim();
    if (t.length >= 30 && c.clientWidth < 120) squeezed.push([t.slice(0, 40), c.clientWidth]);
  });
  return {
    h1: box(document.querySelector('h1')),
    headline: box(document.querySelector('p.headline')),
    key: box(document.querySelector('.key')),
    figures: [...document.querySelectorAll('.key .fig')].map(f => [
      f.querySelector('.label').innerText, box(f)]),
    chart: box(document.querySelector('figure.chart')),
    charts: [...document.querySelectorAll('figure.chart')].map(f => f.id),
    svgText: [...document.querySelectorAll('figure.chart svg text')].map(t => t.textContent),
    text: document.body.innerText,
    scrollWidth: document.documentElement.scrollWidth, innerWidth: innerWidth,
    contentRight: main.getBoundingClientRect().right - parseFloat(cs.paddingRight),
    tables: [...document.querySelectorAll('.table-wrap')].map(w => ({
      head: w.querySelector('th').innerText, right: w.firstElementChild.getBoundingClientRect().right,
      scroll: w.scrollWidth, client: w.clientWidth})),
    squeezed: squeezed};
})())"""

COMPARE_CHARTS = ["chart-compare-ratios", "chart-compare-latency",
                  "chart-compare-throughput", "chart-compare-spectrum",
                  "chart-compare-histogram", "chart-compare-timeline", "chart-compare-status"]
RUN_CHARTS = ["chart-timeline", "chart-spectrum", "chart-histogram", "chart-status"]

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

    def _lead(self, path, charts, shot=None):
        """The report at path, in a 1,280 x 800 window, leads with its answer:
        the headline, then the key figures, wholly on the first screen, and
        the first chart starting on it; nothing wider than the window, every
        table inside the page's column (a table too wide would scroll in its
        own box), no long value squeezed into a narrow column; the charts
        named (in order), latencies in µs/ms. Returns the positions."""
        with cdp.Browser() as b:
            page = b.page()
            page.send("Page.enable")
            page.send("Emulation.setDeviceMetricsOverride",
                      {"width": 1280, "height": 800, "deviceScaleFactor": 1, "mobile": False})
            page.open_page("file://" + os.path.abspath(path))
            page.drain(quiet=0.5)
            m = json.loads(page.evaluate(LEAD_JS))
            if shot:
                r = page.send("Page.captureScreenshot", {"format": "png"})
                with open(shot, "wb") as f:
                    f.write(base64.b64decode(r["data"]))
        where = {k: m[k] for k in ("h1", "headline", "key", "chart", "scrollWidth", "tables")}
        self.assertIsNotNone(m["key"], where)
        self.assertLess(m["h1"]["bottom"], m["headline"]["top"], where)
        self.assertLessEqual(m["headline"]["bottom"], m["key"]["top"], where)
        self.assertLessEqual(m["key"]["bottom"], 800, where)
        self.assertGreaterEqual(len(m["figures"]), 3, m["figures"])
        for label, fb in m["figures"]:
            self.assertLessEqual(fb["bottom"], 800, (label, fb))
        self.assertLessEqual(m["key"]["bottom"], m["chart"]["top"], where)
        self.assertLess(m["chart"]["top"], 800 - 150, where)  # a chart's top part shows
        self.assertEqual(m["charts"], charts)
        self.assertLessEqual(m["scrollWidth"], m["innerWidth"], where)
        for t in m["tables"]:
            self.assertLessEqual(t["right"], m["contentRight"] + 0.5, t)
            self.assertLessEqual(t["scroll"], t["client"] + 1, t)
        self.assertEqual(m["squeezed"], [], m["squeezed"])
        for t in m["svgText"]:
            self.assertNotRegex(t, r"\(us\)|\d us\b", t)
        self.assertNotRegex(m["text"], r"\d us\b")
        return m

    def _shot(self, name):
        d = os.environ.get("PACER_SCREENSHOT_DIR")
        return os.path.join(d, name + ".png") if d else None

    def test_run_and_trend_lead_with_the_answer(self):
        d = self.tmpdir()
        db = os.path.join(d, "h.db")
        for i in (1, 2):
            run = harness.run_pacer(["--self-contained", "--rate", "200", "--duration", "2s",
                                     "--slo", "p99<10s", "--history", db, "-o",
                                     os.path.join(d, "r%d.json" % i)])
            self.assertEqual(run.code, 0, harness.describe(run))
        r2 = os.path.join(d, "r2.json")
        for kind, extra, charts in (("run", [], RUN_CHARTS),
                                    ("trend", ["--history", db], ["chart-trend"] + RUN_CHARTS)):
            html = os.path.join(d, kind + ".html")
            p = harness.run_pacer([r2, "--format", "html", "-o", html] + extra,
                                  subcommand="report", out=False)
            self.assertEqual(p.code, 0, harness.describe(p))
            m = self._lead(html, charts, self._shot(kind))
            labels = [f[0] for f in m["figures"]]
            self.assertEqual(labels, ["Offered/s", "Achieved/s", "p50", "p99", "p99.9", "max",
                                      "Error rate", "SLO"])
            if kind == "trend":
                self.assertIn("p99 (ms)", m["svgText"])

    def test_ramp_leads_with_the_answer(self):
        d = self.tmpdir()
        run = harness.run_pacer(["--self-contained", "--steps", "200,400", "--step-duration", "1s",
                                 "--step-warmup", "0.2s", "--slo", "p99<10s", "--report-dir", d],
                                subcommand="ramp")
        self.assertEqual(run.code, 0, harness.describe(run))
        m = self._lead(os.path.join(d, "report.html"), ["chart-latency-vs-load"] + RUN_CHARTS,
                       self._shot("ramp"))
        self.assertEqual([f[0] for f in m["figures"]][:4],
                         ["Capacity/s", "Achieved/s", "p50 there", "p99 there"])

    def test_merged_has_a_single_runs_charts(self):
        d = self.tmpdir()
        segs = []
        for k in (0, 1):
            segs.append(os.path.join(d, "s%d.json" % k))
            run = harness.run_pacer(["--self-contained", "--rate", "200", "--duration", "2s",
                                     "--segment", "%d/2" % k, "-o", segs[-1]])
            self.assertEqual(run.code, 0, harness.describe(run))
        merged = os.path.join(d, "merged.json")
        p = harness.run_pacer(segs + ["-o", merged], subcommand="merge", out=False)
        self.assertEqual(p.code, 0, harness.describe(p))
        html = os.path.join(d, "merged.html")
        p = harness.run_pacer([merged, "--format", "html", "-o", html], subcommand="report",
                              out=False)
        self.assertEqual(p.code, 0, harness.describe(p))
        self._lead(html, RUN_CHARTS, self._shot("merged"))

    def test_compare_with_long_urls_fits_the_window(self):
        """Before: the variants table was 1,550 px wide in a 980 px column (p99.9,
        max and error rate off-screen) with the target URL one character per
        line, and the first chart 3,819 px down."""
        d = self.tmpdir()
        with harness.PacerServe("hello") as srv:
            url = srv.url("/api/v2/catalogue/products/search/by-category/electronics"
                          "?query=wireless-headphones&sort=price_ascending&page=1&per_page=50")
            run = harness.run_pacer(["--variant", "A=" + url, "--variant", "B=" + url + "&x=1",
                                     "--concurrency", "2", "-d", "0.3s", "-w", "0", "--repeat",
                                     "2", "--report-dir", d], subcommand="compare")
        self.assertEqual(run.code, 0, harness.describe(run))
        m = self._lead(os.path.join(d, "report.html"), COMPARE_CHARTS, self._shot("compare"))
        heads = [t["head"] for t in m["tables"]]
        self.assertIn("Variant", heads)
        self.assertTrue(any(f[0].startswith("p99 B/A") for f in m["figures"]), m["figures"])

    def test_compare_has_a_single_runs_charts(self):
        """Issue 30: a comparison draws the charts a single run has (spectrum,
        histogram, timeline, status), every variant overlaid in one chart each
        with a legend naming it; before, it drew only the three bar charts."""
        d = self.tmpdir()
        with harness.PacerServe("hello") as srv:
            run = harness.run_pacer(["--variant", "base=" + srv.url("/"),
                                     "--variant", "other=" + srv.url("/x"),
                                     "--rate", "200", "-d", "2s", "-w", "0", "--repeat", "2",
                                     "--report-dir", d], subcommand="compare")
        self.assertEqual(run.code, 0, harness.describe(run))
        doc = run.json
        for v in doc["variants"]:
            # what the charts need, in the document: a histogram of sparse
            # pairs pooled over the repetitions, status counts, a series
            lat = v["measure"]["latency"]
            self.assertEqual(lat["count"], v["measure"]["responses"]["by_class"]["2xx"],
                             v["name"])
            self.assertGreater(len(lat["hist"]["counts"]), 0)
            self.assertGreaterEqual(len(v["series"]), 1)
        html = os.path.join(d, "report.html")
        m = self._lead(html, COMPARE_CHARTS, self._shot("compare-charts"))
        boxes = {b["id"]: b for b in self._check_html_boxes(html)}
        for name in ("spectrum", "histogram", "timeline", "status"):
            bx = boxes["chart-compare-" + name]
            self.assertGreater(bx["w"], 100, bx)
            self.assertGreater(bx["h"], 150, bx)
            # one legend entry per variant, inside the chart
            self.assertIn("base", bx["text"])
            self.assertIn("other", bx["text"])
            self.assertLessEqual(bx["x"] + bx["w"], m["innerWidth"], bx)
        # the overlaid charts follow the bar charts, one under the other
        ys = [boxes["chart-" + n[len("chart-"):]]["y"] for n in COMPARE_CHARTS]
        self.assertEqual(ys, sorted(ys), ys)
        # the status chart names each variant's class; no errors: no 4xx line
        self.assertIn("base 2xx/s", boxes["chart-compare-status"]["text"])
        self.assertIn("other 2xx/s", boxes["chart-compare-status"]["text"])
        self.assertNotIn("4xx/s", boxes["chart-compare-status"]["text"])

    def _check_html_boxes(self, path):
        with cdp.Browser() as b:
            page = b.page()
            page.send("Page.enable")
            page.send("Emulation.setDeviceMetricsOverride",
                      {"width": 1280, "height": 800, "deviceScaleFactor": 1, "mobile": False})
            page.open_page("file://" + os.path.abspath(path))
            page.drain(quiet=0.5)
            self._check_layout(page)
            return json.loads(page.evaluate(
                "JSON.stringify([...document.querySelectorAll('figure.chart')].map(f => {"
                " const s = f.querySelector('svg'); const r = s.getBoundingClientRect();"
                " return {id: f.id, x: r.left + scrollX, y: r.top + scrollY,"
                " w: r.width, h: r.height, text: s.textContent}; }))"))

    def tmpdir(self):
        d = tempfile.mkdtemp(prefix="pacer-html-")
        atexit.register(shutil.rmtree, d, True)
        return d


if __name__ == "__main__":
    unittest.main()
