"""pacer report: the JSON schema (docs/schema/result.schema.json) against real
results of pacer run, ramp and compare, validated with Debian's
python3-jsonschema; golden Markdown of fixed results (tests/integration/
golden/, rewritten with PACER_UPDATE_GOLDEN=1); byte-identical re-rendering;
well-formed HTML with a chart in every figure; hostile strings escaped; CSV,
hgrm and the report folder; bad input files with one-line errors and exit
codes; and the .hlog decoded by HdrHistogram's own Java implementation
(Debian's libhdrhistogram-java: HistogramLogReader through
tests/integration/java/HlogCheck.java, and HistogramLogProcessor), compared
with the result's per-second counts and with percentiles computed here from
the same histogram pairs.

The browser test of the HTML (headless Chromium) lives elsewhere."""

import copy
import json
import os
import re
import shutil
import subprocess
import tempfile
import unittest
import xml.etree.ElementTree as ET

import harness
from harness import PacerTestCase, describe

GOLDEN = os.path.join(harness.HERE, "golden")
GOLDEN_CASES = ("run", "ramp_fail", "compare", "self_contained")
SCHEMA_PATH = os.path.join(harness.REPO, "docs", "schema", "result.schema.json")
# The schema of 1.x results, kept for readers of old files (pacer report
# upgrades them on load); the golden inputs are 1.0 results.
SCHEMA_1_PATH = os.path.join(harness.REPO, "docs", "schema", "result-1.x.schema.json")
HLOG_CHECK = os.path.join(harness.HERE, "java", "HlogCheck.java")
HDR_JAR = "/usr/share/java/hdrhistogram.jar"
PLANS = os.path.join(harness.HERE, "plans")
SVG_NS = "{http://www.w3.org/2000/svg}"
SECTIONS = ("Summary", "Identity", "Methodology", "Test conditions and limits", "Results",
            "Cost and resources", "What this number means / does not establish")

try:
    import jsonschema
except ImportError:  # pragma: no cover - Debian's python3-jsonschema is a test dependency
    jsonschema = None


def setUpModule():
    harness.require_pacer()


def report(args, timeout=60.0):
    """`pacer report ARGS...` (no --out added)."""
    return harness.run_pacer([str(a) for a in args], timeout=timeout, out=False,
                             subcommand="report")


def tmpdir():
    d = tempfile.mkdtemp(prefix="pacer-report-")
    if not os.environ.get("PACER_KEEP_TMP"):
        import atexit
        atexit.register(shutil.rmtree, d, True)
    return d


def write_json(d, obj, name):
    path = os.path.join(d, name)
    with open(path, "w") as f:
        json.dump(obj, f)
    return path


def load_json(path):
    with open(path) as f:
        return json.load(f)


def golden_path(case, ext):
    return os.path.join(GOLDEN, case + ext)


# ---------------------------------------------------------------- real results, made once

_results = {}


def real_results():
    """{"run"|"ramp"|"compare": path} of short real results, made on first use."""
    if _results:
        return _results
    d = tmpdir()
    runs = {
        "run": (["--self-contained=vast_ortb_mix", "--rate", 300, "--duration", "3s", "--warmup",
                 "0.3s", "--outcome", "fill=status==200"], "run"),
        "ramp": (["--self-contained=hello", "--steps", "100,200,400", "--step-duration", "2s",
                  "--step-warmup", "0.2s", "--slo", "p99<100ms"], "ramp"),
        "compare": (["--variant", "a=@hello", "--variant", "b=@hello", "--repeat", 2,
                     "--duration", "0.5s", "--warmup", "0.1s", "--rate", 200], "compare"),
        # the optional parts: TLS, rules, server time, target resources, cost
        "run_tls_rules": (["--self-contained=exec", "--tls", "--rate", 40, "--duration", "1s",
                           "--server-time", "server-timing:app", "--success", "status == 200",
                           "--outcome", "ok=status == 200"], "run"),
    }
    for name, (args, sub) in runs.items():
        path = os.path.join(d, name + ".json")
        run = harness.run_pacer(args + ["-q", "--out", path], subcommand=sub, timeout=120.0)
        # 4: written, but flagged generator-limited (a busy test machine)
        if run.code not in (0, 1, 4) or run.json is None:
            raise RuntimeError("pacer %s failed:\n%s" % (sub, describe(run)))
        _results[name] = path
    return _results


# ---------------------------------------------------------------- schema helpers


def schema(path=SCHEMA_PATH):
    with open(path) as f:
        return json.load(f)


def validator(path=SCHEMA_PATH):
    if jsonschema is None:
        raise unittest.SkipTest("python3-jsonschema is not installed")
    s = schema(path)
    jsonschema.Draft202012Validator.check_schema(s)
    return jsonschema.Draft202012Validator(s)


def undescribed_fields(s, instance):
    """Paths of fields in instance that the schema does not declare (a field
    allowed only because objects are open is not described)."""
    defs = s["$defs"]
    missing = []

    def resolve(node):
        while "$ref" in node:
            node = defs[node["$ref"].split("/")[-1]]
        return node

    def pick(node, inst):
        node = resolve(node)
        if "oneOf" in node:
            for branch in node["oneOf"]:
                probe = dict(resolve(branch))
                probe["$defs"] = defs
                if jsonschema.Draft202012Validator(probe).is_valid(inst):
                    return pick(branch, inst)
        return node

    def walk(node, inst, path):
        node = pick(node, inst)
        if isinstance(inst, dict):
            props = node.get("properties", {})
            pats = node.get("patternProperties", {})
            for k, v in inst.items():
                if k in props:
                    walk(props[k], v, path + "." + k)
                    continue
                sub = [p for pat, p in pats.items() if re.search(pat, k)]
                if sub:
                    walk(sub[0], v, path + "." + k)
                else:
                    missing.append(path + "." + k)
        elif isinstance(inst, list):
            prefix = node.get("prefixItems")
            items = node.get("items")
            for i, x in enumerate(inst):
                if prefix and i < len(prefix):
                    walk(prefix[i], x, path + "[%d]" % i)
                elif isinstance(items, dict):
                    walk(items, x, path + "[]")

    walk(defs[instance["kind"]], instance, instance["kind"])
    return sorted(set(missing))


def undocumented_schema_nodes(s):
    """Schema locations of properties or items without a description."""
    bad = []

    def walk(node, path):
        if not isinstance(node, dict):
            return
        for k, v in node.get("properties", {}).items():
            if "description" not in v:
                bad.append(path + "." + k)
            walk(v, path + "." + k)
        for k, v in node.get("patternProperties", {}).items():
            if "description" not in v:
                bad.append(path + "[" + k + "]")
            walk(v, path + "[" + k + "]")
        for key in ("items",):
            if isinstance(node.get(key), dict):
                if "description" not in node[key]:
                    bad.append(path + "[]")
                walk(node[key], path + "[]")
        for key in ("oneOf", "prefixItems"):
            for i, b in enumerate(node.get(key, [])):
                if "description" not in b:
                    bad.append("%s.%s[%d]" % (path, key, i))
                walk(b, "%s.%s[%d]" % (path, key, i))

    for name, d in s["$defs"].items():
        if "description" not in d:
            bad.append("$defs." + name)
        walk(d, "$defs." + name)
    return bad


# ---------------------------------------------------------------- schema


class SchemaTest(PacerTestCase):
    def test_real_and_golden_results_validate(self):
        by_major = {"1": validator(SCHEMA_1_PATH), "2": validator()}
        paths = list(real_results().values()) + [golden_path(c, ".json") for c in GOLDEN_CASES]
        for path in paths:
            with self.subTest(result=os.path.basename(path)):
                doc = load_json(path)
                major = doc["schema_version"].split(".")[0]
                if path in real_results().values():
                    self.assertEqual(major, "2", "this build writes 2.x")
                errors = ["%s: %s" % ("/".join(map(str, e.path)), e.message)
                          for e in by_major[major].iter_errors(doc)]
                self.assertEqual(errors, [], path)

    def test_docs_name_the_schema_version_results_carry(self):
        """Each page that names the schema version of a result names the one
        this build writes (docs/ramp.md once said 1.0 of 2.0 results)."""
        versions = {load_json(p)["schema_version"] for p in real_results().values()}
        self.assertEqual(len(versions), 1, versions)
        want = versions.pop()
        named = 0
        docs = os.path.join(harness.REPO, "docs")
        for page in sorted(os.listdir(docs)):
            if not page.endswith(".md"):
                continue
            with open(os.path.join(docs, page)) as f:
                text = f.read()
            for m in re.finditer(r"[Ss]chema version \**`?\"?(\d+\.\d+)", text):
                named += 1
                self.assertEqual(m.group(1), want, "docs/%s: %s" % (page, m.group(0)))
        self.assertGreaterEqual(named, 2)  # result.md and ramp.md at least

    def test_every_field_is_described(self):
        if jsonschema is None:
            self.skipTest("python3-jsonschema is not installed")
        s = schema()
        self.assertEqual(undocumented_schema_nodes(s), [])
        for name, path in real_results().items():
            with self.subTest(result=name):
                self.assertEqual(undescribed_fields(s, load_json(path)), [],
                                 "fields of a real %s result missing from %s" % (name, SCHEMA_PATH))

    def test_broken_results_fail(self):
        v = validator()
        good = load_json(real_results()["run"])
        ramp = load_json(real_results()["ramp"])
        self.assertTrue(v.is_valid(good))

        def broken(base, edit):
            x = copy.deepcopy(base)
            edit(x)
            return x
        cases = {
            "measure missing": broken(good, lambda x: x.pop("measure")),
            "p99 as text": broken(good, lambda x: x["measure"]["latency"].__setitem__("p99_us", "fast")),
            "major version 3": broken(good, lambda x: x.__setitem__("schema_version", "3.0")),
            "major version 1": broken(good, lambda x: x.__setitem__("schema_version", "1.0")),
            "errors as a count": broken(good, lambda x: x["measure"].__setitem__("errors", 3)),
            "unknown kind": broken(good, lambda x: x.__setitem__("kind", "bench")),
            "negative count": broken(good, lambda x: x["measure"]["requests"].__setitem__("sent", -1)),
            "histogram pair of one": broken(good, lambda x: x["measure"]["latency"]["hist"]["counts"].append([5])),
            "status key not a code": broken(good, lambda x: x["measure"]["responses"]["by_status"].__setitem__("OK", 1)),
            "verdict without pass": broken(ramp, lambda x: x["steps"][0]["verdict"].pop("pass")),
        }
        for name, doc in cases.items():
            with self.subTest(case=name):
                self.assertFalse(v.is_valid(doc), "a result with %s validates" % name)


# ---------------------------------------------------------------- golden Markdown


class GoldenTest(PacerTestCase):
    def test_markdown_matches_golden(self):
        update = os.environ.get("PACER_UPDATE_GOLDEN") == "1"
        for case in GOLDEN_CASES:
            with self.subTest(case=case):
                run = report([golden_path(case, ".json"), "--format", "md"])
                self.assertEqual(run.code, 0, describe(run))
                md_path = golden_path(case, ".md")
                if update:
                    with open(md_path, "w") as f:
                        f.write(run.stdout)
                with open(md_path) as f:
                    want = f.read()
                self.assertEqual(run.stdout, want, "%s differs from the golden file (rerun with "
                                 "PACER_UPDATE_GOLDEN=1 after checking the change)" % md_path)

    def test_golden_facts(self):
        """The cases say what they are there to show."""
        md = {c: report([golden_path(c, ".json")]).stdout for c in GOLDEN_CASES}
        for case, text in md.items():
            headings = re.findall(r"^## (.*)$", text, re.M)
            self.assertEqual(tuple(headings), SECTIONS, case)
        self.assertIn("Self-contained: the driver and the target (pacer's embedded plan "
                      "vast\\_ortb\\_mix) shared one process", md["self_contained"])
        self.assertNotIn("Self-contained", md["run"])
        self.assertIn("Loopback: the target was on this machine (127.0.0.1)", md["run"])
        self.assertRegex(md["ramp_fail"], r"\| no: p99 [0-9.]+m?s \\> 100ms \|")
        self.assertRegex(md["ramp_fail"], r"The next step tried, [0-9,]+ requests/s, did not: Fail")
        self.assertIn("| p50 | slow | fast |", md["compare"])

    def test_rerender_is_identical(self):
        formats = ("md", "html", "text", "csv", "hgrm", "hlog")
        for case in GOLDEN_CASES:
            for fmt in formats:
                if case == "compare" and fmt in ("hgrm", "hlog"):
                    continue
                with self.subTest(case=case, format=fmt):
                    a = report([golden_path(case, ".json"), "--format", fmt])
                    b = report([golden_path(case, ".json"), "--format", fmt])
                    self.assertEqual(a.code, 0, describe(a))
                    self.assertTrue(a.stdout)
                    self.assertEqual(a.stdout, b.stdout)


# ---------------------------------------------------------------- formats


class FormatsTest(PacerTestCase):
    def render(self, path, *args):
        run = report([path] + list(args))
        self.assertEqual(run.code, 0, describe(run))
        self.assertEqual(run.stderr, "")
        return run.stdout

    def check_html(self, html, charts):
        root = ET.fromstring(html.split("\n", 1)[1])  # after <!DOCTYPE html>
        self.assertEqual(root.tag, "html")
        self.assertEqual(root.findall(".//script"), [])
        self.assertEqual(root.findall(".//" + SVG_NS + "script"), [])
        metas = [m.get("content", "") for m in root.iter("meta")
                 if m.get("http-equiv") == "Content-Security-Policy"]
        self.assertTrue(metas and "default-src 'none'" in metas[0], metas)
        for el in root.iter():
            for attr in ("src", "href", "{http://www.w3.org/1999/xlink}href"):
                self.assertNotIn("//", el.get(attr, ""), "external reference in <%s>" % el.tag)
        ids = [el.get("id") for el in root.iter() if el.get("id")]
        self.assertEqual(len(ids), len(set(ids)), "duplicate ids")
        figures = [f for f in root.iter("figure") if f.get("class") == "chart"]
        self.assertEqual(sorted(f.get("id") for f in figures), sorted("chart-" + c for c in charts))
        for fig in figures:
            svgs = fig.findall(SVG_NS + "svg")
            self.assertEqual(len(svgs), 1, fig.get("id"))
            marks = [el for el in svgs[0].iter()
                     if el.tag in (SVG_NS + "polyline", SVG_NS + "circle", SVG_NS + "path")
                     or (el.tag == SVG_NS + "rect" and el.get("fill") not in ("#ffffff", "none"))]
            self.assertTrue(marks, "%s has no visible marks" % fig.get("id"))
            self.assertTrue(fig.find("figcaption").text)
        return root

    def test_run_summary_is_the_text_report(self):
        """One terminal renderer: what `pacer run` prints is, byte for byte,
        what `pacer report RESULT --format text` prints of the result it
        saved (a short self-contained run, with a warm-up and two request
        names, so the summary has several sections and tables)."""
        run = harness.run_pacer(["--self-contained=vast_ortb_mix", "--rate", 200, "-d", "0.5s",
                                 "-w", "0.2s"], timeout=30.0)
        self.assertIn(run.code, (0, 4), describe(run))
        text = self.render(run.out_path, "--format", "text")
        self.assertEqual(run.stdout, text + harness.summary_trailer(run.out_path))
        # and it is the report: headline, tables, conditions
        self.assertTrue(text.startswith("pacer run report: "), text)
        for part in ("Results", "  Latency", "  By request name", "Test conditions and limits"):
            self.assertIn("\n" + part + "\n", text)

    def test_html_well_formed_with_charts(self):
        res = real_results()
        self.check_html(self.render(res["run"], "--format", "html"),
                        ("spectrum", "histogram", "timeline", "status"))
        self.check_html(self.render(res["ramp"], "--format", "html"),
                        ("latency-vs-load", "spectrum", "histogram", "timeline", "status"))
        self.check_html(self.render(res["compare"], "--format", "html"),
                        ("compare-ratios", "compare-latency", "compare-throughput",
                         "compare-spectrum", "compare-histogram", "compare-timeline",
                         "compare-status"))

    def test_markdown_sections(self):
        for name, path in real_results().items():
            with self.subTest(kind=name):
                md = self.render(path)
                self.assertEqual(tuple(re.findall(r"^## (.*)$", md, re.M)), SECTIONS)
                self.assertRegex(md.split("## Summary\n\n", 1)[1], r"^\*\*In an? ")
                self.assertNotIn("chart-", md)  # stdout Markdown references no files

    def test_steal_time_shown(self):
        """The hypervisor's steal time of a real run is in its Markdown, as
        recorded; a result without it (written before pacer measured it)
        renders without the line."""
        path = real_results()["run"]
        g = load_json(path)["generator"]
        md = self.render(path)
        self.assertIn("| Hypervisor steal time | %.2f%% of the generator's CPUs" % g["steal_pct"],
                      md)
        doc = load_json(path)
        del doc["generator"]["steal_pct"], doc["generator"]["machine_steal_pct"]
        old = os.path.join(tmpdir(), "before-steal.json")
        with open(old, "w") as f:
            json.dump(doc, f)
        self.assertNotIn("Hypervisor steal", self.render(old))
        # 1 % or more: what the result does not establish says so, for a run,
        # a ramp (its steps) and a comparison (its variants)
        said = "That the latency tails are the target's: the hypervisor took up to %s"

        def quiet_then(doc, kind, pct, warned=True):
            """All the steal figures of doc 0 (null), then one at pct, with
            the warning pacer gives (it alone knew the counters' resolution)
            when `warned`."""
            doc["warnings"] = [w for w in doc["warnings"] if "hypervisor" not in w]
            if warned:
                doc["warnings"].append("the hypervisor took %g%% of the generator's CPUs" % pct)
            if kind == "run":
                doc["generator"]["steal_pct"] = pct
            elif kind == "ramp":
                for st in doc["steps"]:
                    st["steal_pct"] = 0
                doc["steps"][1]["steal_pct"] = pct
            else:
                for v in doc["variants"]:
                    v["steal_max_pct"] = None
                doc["variants"][0]["steal_max_pct"] = pct
        for kind, pct, text, warned in (("run", 12.5, "12.50%", True),
                                        ("ramp", 3.25, "3.25%", True),
                                        ("compare", 7, "7.00%", True),
                                        ("run", 0.5, None, False),
                                        ("ramp", 1.5, None, False)):  # a tick, not said
            with self.subTest(kind=kind, pct=pct):
                doc = load_json(real_results()[kind])
                quiet_then(doc, kind, pct, warned)
                p = os.path.join(tmpdir(), "steal-%s.json" % kind)
                with open(p, "w") as f:
                    json.dump(doc, f)
                md = self.render(p)
                if text:
                    self.assertIn(said % text, md)
                else:
                    self.assertNotIn(said % "", md)

    def test_hostile_strings_are_escaped(self):
        d = tmpdir()
        doc = load_json(real_results()["run"])
        evil = "<script>alert(1)</script>|x\ny & \"q\" 'a' [l](javascript:alert(1)) \x1b[2J"
        doc["plan"]["url"] = "http://127.0.0.1:1/" + evil
        doc["plan"]["headers"] = ["X-Evil: " + evil]
        doc["warnings"].append(evil)
        doc["measure"]["outcomes"][0]["name"] = evil
        path = write_json(d, doc, "evil.json")
        md = self.render(path)
        self.assertNotIn("\x1b", md)
        self.assertIsNone(re.search(r"(?<!\\)<", md), "unescaped < in Markdown")
        self.assertIsNone(re.search(r"(?<!\\)\[l", md), "a link survived")
        for block in md.split("\n\n"):
            rows = [l for l in block.split("\n") if l.startswith("|")]
            cells = {len(re.findall(r"(?<!\\)\|", r)) for r in rows}
            self.assertLessEqual(len(cells), 1, "a table row broke:\n" + block)
        html = self.render(path, "--format", "html")
        root = self.check_html(html, ("spectrum", "histogram", "timeline", "status"))
        self.assertIn("&lt;script&gt;alert(1)&lt;/script&gt;", html)
        text = "".join(root.itertext())
        self.assertIn("<script>alert(1)</script>", text)  # shown as text, not run
        txt = self.render(path, "--format", "text")
        self.assertNotIn("\x1b", txt)

    def test_csv(self):
        import csv
        import io
        res = real_results()
        run, ramp, cmp = (load_json(res[k]) for k in ("run", "ramp", "compare"))
        rows = list(csv.DictReader(io.StringIO(self.render(res["run"], "--format", "csv"))))
        self.assertEqual(len(rows), len(run["series"]))
        self.assertEqual([int(r["completed"]) for r in rows], [p["completed"] for p in run["series"]])
        rows = list(csv.DictReader(io.StringIO(self.render(res["ramp"], "--format", "csv"))))
        self.assertEqual(len(rows), len(ramp["steps"]))
        self.assertEqual([float(r["offered_per_s"]) for r in rows],
                         [s["offered_per_s"] for s in ramp["steps"]])
        self.assertEqual([r["pass"] for r in rows],
                         ["true" if s["verdict"]["pass"] else "false" for s in ramp["steps"]])
        rows = list(csv.DictReader(io.StringIO(self.render(res["compare"], "--format", "csv"))))
        self.assertEqual(len(rows), sum(len(v["summary"]) for v in cmp["variants"]))
        b50 = [r for r in rows if r["variant"] == "b" and r["metric"] == "p50_us"][0]
        ratio = [r for r in cmp["ratios"] if r["variant"] == "b" and r["metric"] == "p50"][0]
        self.assertAlmostEqual(float(b50["ratio"]), ratio["ratio"])

    def test_csv_summary(self):
        # issue 18: a summary row per phase/step and per request name, one
        # header for every kind, that a spreadsheet takes as is
        import csv
        import io
        res = real_results()
        run, ramp, cmp = (load_json(res[k]) for k in ("run", "ramp", "compare"))
        header = None

        def rows_of(kind):
            nonlocal header
            text = self.render(res[kind], "--format", "csv", "--rows", "summary")
            r = list(csv.DictReader(io.StringIO(text)))
            h = text.split("\n", 1)[0]
            if header is None:
                header = h
            self.assertEqual(h, header, "one header for every kind")
            return r

        rows = rows_of("run")
        names = [n["name"] for n in run["measure"]["by_name"]]
        self.assertGreaterEqual(len(names), 2)
        self.assertEqual([(r["phase"], r["name"]) for r in rows],
                         [(p, n) for p in ("warmup", "measure") for n in [""] + names])
        m = [r for r in rows if r["phase"] == "measure" and not r["name"]][0]
        self.assertEqual(int(m["completed"]), run["measure"]["requests"]["completed"])
        self.assertEqual(float(m["p99_us"]), run["measure"]["latency"]["p99_us"])
        self.assertEqual(int(m["errors"]), run["measure"]["errors"]["total"])
        per_name = [r for r in rows if r["phase"] == "measure" and r["name"]]
        self.assertEqual(sum(int(r["completed"]) for r in per_name), int(m["completed"]))

        rows = rows_of("ramp")
        measured = [r for r in rows if r["phase"] == "measure" and not r["name"]]
        self.assertEqual([int(r["step"]) for r in measured], list(range(1, len(ramp["steps"]) + 1)))
        self.assertEqual([r["pass"] for r in measured],
                         ["true" if s["verdict"]["pass"] else "false" for s in ramp["steps"]])
        self.assertEqual([float(r["p99_us"]) for r in measured],
                         [s["measure"]["latency"]["p99_us"] for s in ramp["steps"]])
        warm = [r for r in rows if r["phase"] == "warmup"]
        self.assertEqual([int(r["completed"]) for r in warm],
                         [s["warmup"]["requests"]["completed"] for s in ramp["steps"]])

        rows = rows_of("compare")
        self.assertEqual([(r["variant"], int(r["repetition"])) for r in rows],
                         [(v["name"], i + 1) for v in cmp["variants"]
                          for i in range(len(v["repetitions"]))])
        self.assertEqual([float(r["p50_us"]) for r in rows],
                         [x["p50_us"] for v in cmp["variants"] for x in v["repetitions"]])

    def test_hgrm(self):
        res = real_results()
        doc = load_json(res["run"])
        for timing in ("latency", "service_time"):
            with self.subTest(timing=timing):
                rows, footer = harness.parse_hgrm(self.render(res["run"], "--format", "hgrm",
                                                              "--timing", timing))
                t = doc["measure"][timing]
                self.assertEqual(int(footer["Total count"]), t["count"])
                self.assertAlmostEqual(footer["Max"], t["max_us"] / 1e3, places=3)
                self.assertEqual(rows[-1][1], 1.0)
                p50 = [v for v, p, _ in rows if p >= 0.5][0]
                self.assertLessEqual(abs(p50 - t["p50_us"] / 1e3), t["p50_us"] / 1e3 / 1000 + 0.001)
        ramp = load_json(res["ramp"])
        rows, footer = harness.parse_hgrm(self.render(res["ramp"], "--format", "hgrm", "--step", 1))
        self.assertEqual(int(footer["Total count"]), ramp["steps"][0]["measure"]["latency"]["count"])

    def test_report_dir(self):
        d = os.path.join(tmpdir(), "out", "ramp")
        run = report([real_results()["ramp"], "--report-dir", d])
        self.assertEqual(run.code, 0, describe(run))
        files = sorted(os.listdir(d))
        self.assertEqual(files, sorted(["report.md", "report.html", "report.txt", "report.csv",
                                        "summary.csv",
                                        "latency.hgrm", "latency.hlog", "chart-latency-vs-load.svg",
                                        "chart-spectrum.svg", "chart-histogram.svg",
                                        "chart-timeline.svg", "chart-status.svg"]))
        with open(os.path.join(d, "report.md")) as f:
            md = f.read()
        refs = re.findall(r"!\[[^\]]*\]\(([^)]+)\)", md)
        self.assertEqual(sorted(refs), sorted(x for x in files if x.endswith(".svg")))
        for svg in refs:
            ET.parse(os.path.join(d, svg))  # each chart is a well-formed SVG file
        with open(os.path.join(d, "report.html")) as f:
            self.assertEqual(f.read(), self.render(real_results()["ramp"], "--format", "html"))


# ---------------------------------------------------------------- where the requests went


class ConnectedTest(PacerTestCase):
    """Loopback is judged from the address pacer connected to (the result's
    "connected"), not from the URL's name: a URL whose host is a name of
    another machine, sent through --connect-to 127.0.0.1, stayed on this
    one; an older result without the field is judged by the URL's host."""

    HOST = "api.pacer-test.example"

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.ngx = harness.Nginx().start()
        cls.url = "http://%s:%d/hello" % (cls.HOST, cls.ngx.port)
        cls.to = "127.0.0.1:%d" % cls.ngx.port

    @classmethod
    def tearDownClass(cls):
        cls.ngx.stop()

    def test_run_through_connect_to_is_loopback(self):
        run = harness.run_pacer([self.url, "--connect-to", self.to, "-n", 40, "--concurrency", 2])
        self.assertEqual(run.code, 0, describe(run))
        self.assertEqual(run.json["connected"], [{"host": self.HOST, "port": self.ngx.port,
                                                  "address": self.to, "loopback": True}])
        md = harness.words(report([run.out_path]).stdout)
        self.assertIn("Loopback: the target was on this machine (%s, connected at %s)"
                      % (self.HOST, self.to), md)
        self.assertNotIn("network path", md)
        self.assertIn("over loopback HTTP", md)
        # an older result (no "connected"): the URL's name decides, as before
        doc = load_json(run.out_path)
        del doc["connected"]
        old = harness.words(report([write_json(tmpdir(), doc, "old.json")]).stdout)
        self.assertIn("Network: requests went to %s; the figures include the network path"
                      % self.HOST, old)
        # and a URL that names loopback but went elsewhere is not loopback
        doc = load_json(run.out_path)
        doc["plan"]["url"] = "http://127.0.0.1:%d/hello" % self.ngx.port
        doc["connected"][0].update(host="127.0.0.1", address="192.0.2.7:80", loopback=False)
        far = harness.words(report([write_json(tmpdir(), doc, "far.json")]).stdout)
        self.assertIn("Network: requests went to 127.0.0.1, connected at 192.0.2.7:80;", far)

    def test_compare_of_two_builds_through_connect_to_is_loopback(self):
        run = harness.run_pacer(["--variant", "A=" + self.url, "--variant", "B=" + self.url,
                                 "--variant-set", "A.connect-to=" + self.to,
                                 "--variant-set", "B.connect-to=" + self.to,
                                 "--concurrency", 2, "-d", "0.2s", "-w", "0", "--repeat", 2],
                                subcommand="compare", timeout=60)
        self.assertEqual(run.code, 0, describe(run))
        for v in run.json["variants"]:
            self.assertEqual([(c["address"], c["loopback"]) for c in v["connected"]],
                             [(self.to, True)], v["name"])
        md = harness.words(report([run.out_path]).stdout)
        self.assertIn("Loopback: the target was on this machine", md)
        self.assertNotIn("network path between the two machines", md)


# ---------------------------------------------------------------- bad input


class BadInputTest(PacerTestCase):
    def fails(self, args, code, pattern):
        run = report(args)
        self.assertEqual(run.code, code, describe(run))
        lines = run.stderr.strip().split("\n")
        self.assertEqual(len(lines), 1, run.stderr)
        self.assertRegex(lines[0], pattern)
        self.assertEqual(run.stdout, "")
        return run

    def test_report_dir_all_or_nothing(self):
        """A folder in one file's place: nothing is written (the files before
        it in the order used to stay behind), the message names that file
        and the cause, and no temporary folder is left."""
        d = os.path.join(tmpdir(), "rd")
        os.makedirs(os.path.join(d, "latency.hgrm"))
        run = self.fails([golden_path("run", ".json"), "--report-dir", d], 3,
                         re.escape(os.path.join(d, "latency.hgrm")) + r": cannot write: is a directory")
        self.assertEqual(os.listdir(d), ["latency.hgrm"], run.stderr)

    def test_malformed_histogram_refused_by_every_format(self):
        """One validating reader: a histogram --format hgrm refuses is refused
        by md, html, text and csv too, naming it."""
        g = load_json(golden_path("run", ".json"))
        g["measure"]["latency"]["hist"]["counts"] = [[1000, -5]]
        path = os.path.join(tmpdir(), "neg.json")
        with open(path, "w") as f:
            json.dump(g, f)
        for fmt in ("md", "html", "text", "csv", "hgrm"):
            with self.subTest(fmt=fmt):
                self.fails([path, "--format", fmt], 2,
                           r"measure\.latency\.hist: histogram counts\[0\]")

    def test_bad_files(self):
        d = tmpdir()
        good = load_json(golden_path("run", ".json"))

        def variant(name, edit):
            x = copy.deepcopy(good)
            edit(x)
            return write_json(d, x, name)
        not_json = os.path.join(d, "not.json")
        with open(not_json, "w") as f:
            f.write('{"schema_version": "1.0",\n  "kind": "run",\n  "plan": {]\n}\n')
        self.fails([not_json], 2, r"^pacer report: .*not\.json: not JSON: line 3 column \d+: ")
        self.fails([variant("v3.json", lambda x: x.__setitem__("schema_version", "3.0"))], 2,
                   r"v3\.json: schema_version 3\.0 is not supported: this pacer reads 1\.x to 2\.x "
                   r"results$")
        self.fails([variant("kind.json", lambda x: x.__setitem__("kind", "bench"))], 2,
                   r"kind\.json: unknown kind 'bench' \(expected run, ramp or compare\)$")
        self.fails([variant("nomeasure.json", lambda x: x.pop("measure"))], 2,
                   r"nomeasure\.json: not a complete pacer run result: field 'measure' is missing$")
        self.fails([variant("nover.json", lambda x: x.pop("schema_version"))], 2,
                   r"not a pacer result \(no schema_version\)$")
        self.fails([os.path.join(d, "missing.json")], 2, r"missing\.json: cannot read: ")
        big = os.path.join(d, "big.json")
        with open(big, "wb") as f:
            f.truncate(300 << 20)  # sparse: refused before it is read
        self.fails([big], 2, r"big\.json: larger than 256 MiB$")
        bad_hist = variant("badhist.json", lambda x: x["measure"]["latency"]["hist"]["counts"].append(["x", 1]))
        self.fails([bad_hist, "--format", "hgrm"], 2, r"latency\.hist: histogram counts\[\d+\] is not")
        # one validating reader: the document formats refuse it too (issue 19 item 9)
        self.fails([bad_hist], 2, r"latency\.hist: histogram counts\[\d+\] is not")

    def test_bad_usage(self):
        g = golden_path("run", ".json")
        self.fails([g, "--format", "pdf"], 2, r"--format 'pdf': expected md, html, text, csv, hgrm or hlog")
        self.fails([], 2, r"expected one RESULT\.json, got 0")
        self.fails([g, g], 2, r"expected one RESULT\.json, got 2")
        self.fails([g, "--timing", "latency"], 2, r"--timing and --step apply to --format hgrm and hlog")
        self.fails([g, "--format", "hgrm", "--timing", "bogus"], 2, r"unknown timing 'bogus'")
        self.fails([g, "--format", "hgrm", "--step", 2], 2, r"--step is for ramp results")
        self.fails([golden_path("ramp_fail", ".json"), "--format", "hlog", "--step", 9], 2,
                   r"--step 9: the ramp has \d+ steps")
        self.fails([golden_path("compare", ".json"), "--format", "hgrm"], 2,
                   r"a compare result carries no histograms")
        self.fails([g, "-o", "/nonexistent-dir/x.md"], 3, r"cannot write -o /nonexistent-dir/x\.md")
        self.fails([g, "--report-dir", "/proc/pacer-report"], 3, r"cannot create the folder")
        run = report(["--help"])
        self.assertEqual(run.code, 0)
        self.assertIn("usage: pacer report RESULT.json", run.stdout)

    def test_out_file_is_atomic(self):
        d = tmpdir()
        out = os.path.join(d, "r.md")
        run = report([golden_path("run", ".json"), "-o", out])
        self.assertEqual(run.code, 0, describe(run))
        self.assertEqual(os.listdir(d), ["r.md"])
        with open(out) as f:
            self.assertEqual(f.read(), report([golden_path("run", ".json")]).stdout)


# ---------------------------------------------------------------- hlog through HdrHistogram (Java)


def java_available():
    return shutil.which("java") is not None and os.path.isfile(HDR_JAR)


def hlog_check(path):
    """[(start_s, length_s, count, p50, p99, max)] and the summary line, from
    HistogramLogReader (values in ns)."""
    out = subprocess.run(["java", "-cp", HDR_JAR, HLOG_CHECK, path], capture_output=True,
                         text=True, timeout=120)
    if out.returncode != 0:
        raise AssertionError("HlogCheck failed (%d):\n%s%s" % (out.returncode, out.stdout, out.stderr))
    intervals, summary = [], None
    for line in out.stdout.splitlines():
        f = line.split()
        if f[0] == "interval":
            intervals.append((float(f[1]), float(f[2])) + tuple(int(x) for x in f[3:]))
        elif f[0] == "start_time":
            summary = {"start_time": float(f[1]), "intervals": int(f[3]), "total": int(f[5])}
    return intervals, summary


def bucket_low(v, sub_bits):
    """Lowest value of v's bucket in pacer's log-linear layout."""
    if v < (1 << sub_bits):
        return v
    b = v.bit_length() - sub_bits
    return (v >> b) << b


def hdr_value_at(pairs, pct):
    """The pair value HdrHistogram's getValueAtPercentile lands on: the value
    where the running count reaches max(1, ceil(p' / 100 * total)), p' being
    pct nudged down by one ulp (as HdrHistogram 2.1.x computes the rank)."""
    import math
    total = sum(c for _, c in pairs)
    rank = max(1, math.ceil(math.nextafter(pct, -math.inf) / 100.0 * total))
    run = 0
    for v, c in sorted(pairs):
        run += c
        if run >= rank:
            return v
    return 0


@unittest.skipUnless(java_available(), "java or %s missing (Debian: default-jre-headless, "
                     "libhdrhistogram-java)" % HDR_JAR)
class HlogJavaTest(PacerTestCase):
    def hlog(self, path, *args):
        d = tmpdir()
        out = os.path.join(d, "latency.hlog")
        run = report([path, "--format", "hlog", "-o", out] + list(args))
        self.assertEqual(run.code, 0, describe(run))
        return out

    def assert_close(self, java_ns, pair_ns, what):
        # HdrHistogram reports the highest value equivalent to the pair's value in its
        # 3-significant-digit layout: at most 1/1024 above it
        self.assertGreaterEqual(java_ns, pair_ns, what)
        self.assertLessEqual(java_ns, pair_ns + pair_ns / 1024.0 + 1, what)

    def check_intervals(self, intervals, series):
        self.assertEqual(len(intervals), len(series))
        for (start, length, count, p50, p99, mx), point in zip(intervals, series):
            what = "second %s" % point["t_s"]
            pairs = [tuple(p) for p in point["hist"]["counts"]]
            self.assertEqual(count, point["completed"], what)
            self.assertEqual(count, sum(c for _, c in pairs), what)
            if not count:
                continue
            self.assertAlmostEqual(length, 1.0, places=3)
            for v, _ in pairs:  # the saved pairs are sub_bits-7 bucket lows
                self.assertEqual(bucket_low(v, point["hist"]["sub_bits"]), v)
            self.assert_close(p50, hdr_value_at(pairs, 50), what + " p50")
            self.assert_close(p99, hdr_value_at(pairs, 99), what + " p99")
            self.assert_close(mx, max(v for v, _ in pairs), what + " max")
            # and near the result's own per-second percentiles (1.6 % resolution)
            self.assertLess(abs(p50 / 1e3 - point["p50_us"]), point["p50_us"] * 0.02 + 0.01, what)

    def test_run_hlog(self):
        path = real_results()["run"]
        doc = load_json(path)
        self.assertTrue(all("hist" in p for p in doc["series"]), "series without histograms")
        intervals, summary = hlog_check(self.hlog(path))
        self.check_intervals(intervals, doc["series"])
        self.assertEqual([i[0] for i in intervals], [float(p["t_s"]) for p in doc["series"]])
        self.assertEqual(summary["total"], sum(p["completed"] for p in doc["series"]))
        # StartTime: started_at plus the warm-up
        import datetime
        t = datetime.datetime.strptime(doc["started_at"], "%Y-%m-%dT%H:%M:%S.%fZ").replace(
            tzinfo=datetime.timezone.utc).timestamp()
        self.assertAlmostEqual(summary["start_time"], t + doc["warmup"]["duration_s"], places=2)

    def test_ramp_hlog(self):
        path = real_results()["ramp"]
        doc = load_json(path)
        intervals, summary = hlog_check(self.hlog(path))
        series = [p for s in doc["steps"] for p in s["series"]]
        self.check_intervals(intervals, series)
        starts = [i[0] for i in intervals]
        self.assertEqual(starts, sorted(starts))
        one, _ = hlog_check(self.hlog(path, "--step", 2))
        self.check_intervals(one, doc["steps"][1]["series"])

    def test_whole_phase_without_series_histograms(self):
        d = tmpdir()
        doc = load_json(real_results()["run"])
        for p in doc["series"]:
            p.pop("hist", None)
        path = write_json(d, doc, "nohist.json")
        intervals, summary = hlog_check(self.hlog(path))
        self.assertEqual(len(intervals), 1)
        lat = doc["measure"]["latency"]
        pairs = [tuple(p) for p in lat["hist"]["counts"]]
        start, length, count, p50, p99, mx = intervals[0]
        self.assertEqual(count, lat["count"])
        self.assertAlmostEqual(length, doc["measure"]["duration_s"], places=3)
        self.assert_close(p50, hdr_value_at(pairs, 50), "p50")
        self.assert_close(p99, hdr_value_at(pairs, 99), "p99")
        self.assert_close(mx, max(v for v, _ in pairs), "max")
        # another timing is one interval too
        intervals, _ = hlog_check(self.hlog(path, "--timing", "service_time"))
        self.assertEqual(intervals[0][2], doc["measure"]["service_time"]["count"])

    def test_histogram_log_processor(self):
        path = real_results()["run"]
        doc = load_json(path)
        log = self.hlog(path)
        out = os.path.join(os.path.dirname(log), "processed")
        run = subprocess.run(["java", "-cp", HDR_JAR, "org.HdrHistogram.HistogramLogProcessor",
                              "-i", log, "-o", out], capture_output=True, text=True, timeout=120)
        self.assertEqual(run.returncode, 0, run.stdout + run.stderr)
        with open(out + ".hgrm") as f:
            rows, footer = harness.parse_hgrm(f.read())
        self.assertEqual(int(footer["Total count"]), sum(p["completed"] for p in doc["series"]))
        # the processor's default output ratio is 1e6: ns become ms
        self.assertAlmostEqual(footer["Max"], max(v for p in doc["series"] for v, _ in p["hist"]["counts"]) / 1e6,
                               delta=footer["Max"] / 1000 + 0.001)
