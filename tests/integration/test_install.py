"""Installable, and the peers' habits (issue 18): `make install` into a
temporary DESTDIR puts the binary, the generated man pages, the bash
completion, docs and examples where the GNU conventions say, man(1) renders
a page without warnings and it lists every option --help lists, the
completion completes commands, options, choices and plan names in a real
bash, `make uninstall` takes it all away; and on the command line: getopt
habits (bundled flags, prefixes), the peers' aliases, --no-keepalive and a
request table on standard input."""

import json
import os
import re
import shutil
import subprocess
import tempfile
import unittest

import harness
from harness import PacerTestCase


def pacer(*args, **kw):
    return subprocess.run([harness.pacer_bin(), *args], capture_output=True, text=True,
                          timeout=kw.pop("timeout", 30), **kw)


class InstallTest(PacerTestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        if not shutil.which("man") or not shutil.which("bash"):
            raise unittest.SkipTest("man or bash missing")
        cls.tmp = tempfile.mkdtemp(prefix="pacer-install-")
        cls.dest = os.path.join(cls.tmp, "dest")
        build = os.path.relpath(harness.build_dir(), harness.REPO)
        cls.make = ["make", "-s", "-C", harness.REPO, "BUILD=" + build,
                    "DESTDIR=" + cls.dest, "PREFIX=/opt/pacer"]
        r = subprocess.run(cls.make + ["install"], capture_output=True, text=True, timeout=300)
        if r.returncode != 0:
            raise AssertionError("make install failed: " + r.stderr[-2000:])
        cls.root = os.path.join(cls.dest, "opt/pacer")

    @classmethod
    def tearDownClass(cls):
        if not os.environ.get("PACER_KEEP_TMP"):
            shutil.rmtree(cls.tmp, ignore_errors=True)

    def path(self, rel):
        return os.path.join(self.root, rel)

    def test_layout(self):
        self.assertTrue(os.access(self.path("bin/pacer"), os.X_OK))
        r = subprocess.run([self.path("bin/pacer"), "-V"], capture_output=True, text=True)
        self.assertEqual(r.returncode, 0)
        self.assertRegex(r.stdout, r"^pacer \d+\.\d+\.\d+ \(commit ")
        for cmd in ["", "-run", "-ramp", "-compare", "-serve", "-bench", "-table", "-import",
                    "-report", "-demo"]:
            self.assertTrue(os.path.isfile(self.path(f"share/man/man1/pacer{cmd}.1")), cmd)
        self.assertTrue(os.path.isfile(self.path("share/bash-completion/completions/pacer")))
        doc = self.path("share/doc/pacer")
        with open(os.path.join(doc, "LICENSE")) as f:
            lic = f.read()
        self.assertIn("MIT License", lic)
        self.assertIn("Copyright (c) 2026 the pacer authors", lic)
        for rel in ["CHANGELOG.md", "README.md", "docs/run.md", "docs/schema/result.schema.json",
                    "examples/plans/hello.yaml"]:
            self.assertTrue(os.path.isfile(os.path.join(doc, rel)), rel)

    def man(self, page):
        env = dict(os.environ, MANWIDTH="100", MAN_KEEP_FORMATTING="0", LANG="C.UTF-8")
        r = subprocess.run(["man", "--warnings", "-l", self.path(f"share/man/man1/{page}.1")],
                           capture_output=True, text=True, env=env, timeout=30)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stderr.strip(), "", "man warnings")
        # man may underline/embolden with backspaces even to a pipe
        return re.sub(r".\x08", "", r.stdout)

    def test_man_run_matches_help(self):
        text = self.man("pacer-run")
        self.assertIn("PACER-RUN(1)", text)
        for section in ["NAME", "SYNOPSIS", "OPTIONS", "EXAMPLES", "EXIT STATUS", "SEE ALSO"]:
            self.assertRegex(text, r"(?m)^" + section + "$")
        for group in ["Load", "Requests", "Transport", "Response rules", "Output"]:
            self.assertRegex(text, r"(?m)^   " + group + "$")
        # every option --help lists is in the page (one table renders both)
        help_text = pacer("run", "--help").stdout
        names = set(re.findall(r"--([a-z][a-z0-9-]+)", help_text.split("Exit codes:")[0]))
        opts = {n for n in re.findall(r"(?m)^\s+(?:-\w, )*--([a-z][a-z0-9-]+)", help_text)}
        self.assertGreater(len(opts), 40)
        for n in opts:
            self.assertRegex(text, r"(?m)^\s+(-\w, )*--" + re.escape(n) + r"\b", n)
        self.assertTrue(opts <= names)
        self.assertRegex(text, r"(?m)^\s+-r, -R, --rate R$")
        self.assertRegex(text, r"(?m)^\s+4\s+results\s+written")  # exit status 4 documented
        top = self.man("pacer")
        for cmd in ["run", "ramp", "compare", "serve", "report"]:
            self.assertRegex(top, r"(?m)^\s+" + cmd + r"\b")

    def complete(self, *words):
        """COMPREPLY of the installed completion for the command line words
        (the last one being completed)."""
        script = self.path("share/bash-completion/completions/pacer")
        arr = " ".join("'" + w + "'" for w in words)
        prog = (f"source '{script}'; COMP_WORDS=({arr}); COMP_CWORD={len(words) - 1}; "
                "_pacer; printf '%s\\n' \"${COMPREPLY[@]}\"")
        r = subprocess.run(["bash", "--norc", "--noprofile", "-c", prog], capture_output=True,
                           text=True, timeout=30, cwd=self.tmp)
        self.assertEqual(r.returncode, 0, r.stderr)
        return [w for w in r.stdout.split("\n") if w]

    def test_completion(self):
        self.assertEqual(self.complete("pacer", "ra"), ["ramp"])
        self.assertIn("compare", self.complete("pacer", "c"))
        self.assertEqual(self.complete("pacer", "run", "--no-k"), ["--no-keepalive"])
        self.assertEqual(self.complete("pacer", "ramp", "--step-d"), ["--step-duration"])
        self.assertEqual(sorted(self.complete("pacer", "run", "--arrival", "")),
                         ["constant", "poisson"])
        plans = self.complete("pacer", "run", "--self-contained", "=", "")
        self.assertIn("hello", plans)
        self.assertIn("vast_ortb_mix", plans)
        self.assertEqual(self.complete("pacer", "run", "--self-contained", "=", "va"),
                         ["vast_ortb_mix"])
        # a FILE option completes file names
        with open(os.path.join(self.tmp, "table.targets"), "w") as f:
            f.write("GET http://127.0.0.1/\n")
        self.assertIn("table.targets", self.complete("pacer", "run", "--requests-file", "tab"))
        self.assertEqual(self.complete("pacer", "help", "rep"), ["report"])
        self.assertEqual(self.complete("pacer", "table", "s"), ["show"])
        self.assertEqual(self.complete("pacer", "serve", "--list"), ["--listen", "--list-plans"])

    def complete_opts(self, *words):
        """(COMPREPLY, whether compopt -o nospace was asked) for words."""
        script = self.path("share/bash-completion/completions/pacer")
        arr = " ".join("'" + w + "'" for w in words)
        prog = ("compopt() { [ \"$*\" = '-o nospace' ] && echo NOSPACE; return 0; }; "
                f"source '{script}'; COMP_WORDS=({arr}); COMP_CWORD={len(words) - 1}; "
                "_pacer; printf '%s\\n' \"${COMPREPLY[@]}\"")
        r = subprocess.run(["bash", "--norc", "--noprofile", "-c", prog], capture_output=True,
                           text=True, timeout=30, cwd=self.tmp)
        self.assertEqual(r.returncode, 0, r.stderr)
        out = [w for w in r.stdout.split("\n") if w]
        return [w for w in out if w != "NOSPACE"], "NOSPACE" in out

    def test_completion_values(self):
        # issue 30 item 7: --self-contained= and --http2= got a trailing
        # space; nothing completed after --opt=, for --trend or for history's
        # subcommands
        self.assertEqual(self.complete_opts("pacer", "run", "--self-cont"),
                         (["--self-contained="], True))
        self.assertEqual(self.complete_opts("pacer", "run", "--http2"), (["--http2="], True))
        self.assertEqual(self.complete_opts("pacer", "run", "--no-keep"),
                         (["--no-keepalive"], False))
        self.assertEqual(self.complete("pacer", "run", "--http2", "=", ""), ["prefer"])
        self.assertEqual(self.complete("pacer", "report", "r.json", "--format", "=", "ht"),
                         ["html"])
        self.assertEqual(sorted(self.complete("pacer", "report", "r.json", "--format", "=")),
                         ["csv", "hgrm", "hlog", "html", "md", "text"])
        self.assertEqual(self.complete("pacer", "run", "--arrival", "=", "p"), ["poisson"])
        self.assertEqual(self.complete("pacer", "history", "h.db", "--trend", "p9"),
                         ["p90", "p99", "p99.9"])
        self.assertEqual(self.complete("pacer", "history", "h.db", "--trend", "=", "cap"),
                         ["capacity"])
        self.assertEqual(self.complete_opts("pacer", "report", "r.json", "--history", "h.db",
                                            "--trend", "p50,p9"),
                         (["p50,p90", "p50,p99", "p50,p99.9"], True))
        self.assertEqual(self.complete("pacer", "report", "r.json", "--timing", "tt"), ["ttfb"])
        self.assertEqual(self.complete("pacer", "history", "h.db", ""), ["show", "export", "add"])
        self.assertEqual(self.complete("pacer", "history", "--kind", "run", "h.db", "ex"),
                         ["export"])
        self.assertEqual(self.complete("pacer", "history", "h.db", "show", ""), ["last", "prev"])
        with open(os.path.join(self.tmp, "result.json"), "w") as f:
            f.write("{}")
        self.assertIn("result.json", self.complete("pacer", "history", "h.db", "add", "res"))

    def test_man_see_also_and_examples_paste(self):
        # pacer(1) lists every command's page; the --help examples break
        # between words with a backslash, so a pasted example is one command
        top = self.man("pacer")
        see = top.split("SEE ALSO")[1]
        for cmd in ["run", "ramp", "bench", "compare", "serve", "demo", "calibrate", "table",
                    "import", "report", "merge", "k8s", "history", "diff"]:
            self.assertIn("pacer-%s(1)" % cmd, see.replace("\u2010", "-"))
            self.assertTrue(os.path.isfile(self.path("share/man/man1/pacer-%s.1" % cmd)), cmd)
        for cmd in ["run", "ramp", "compare", "report", "history", "diff"]:
            text = pacer(cmd, "--help", env=dict(os.environ, COLUMNS="60")).stdout
            ex = text.split("Examples:\n")[1].split("\n\n")[0].split("\n")
            i = 0
            while i < len(ex):
                line = ex[i]
                if line.startswith("  pacer "):
                    cmdline = line[2:]
                    while cmdline.endswith(" \\"):
                        i += 1
                        self.assertTrue(ex[i].startswith("      "), ex[i])
                        cmdline = cmdline[:-1] + ex[i].strip()
                    # the shell reads the pasted lines as one command
                    r = subprocess.run(["bash", "-c", "printf '%s\\n' " + cmdline.split(" ", 1)[1]],
                                       capture_output=True, text=True, timeout=10)
                    self.assertEqual(r.returncode, 0, cmdline)
                    self.assertLessEqual(max(len(l) for l in ex), 60 + 40, ex)
                i += 1

    def test_uninstall(self):
        dest = os.path.join(self.tmp, "again")
        make = [a if not a.startswith("DESTDIR=") else "DESTDIR=" + dest for a in self.make]
        r = subprocess.run(make + ["install"], capture_output=True, text=True, timeout=300)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertTrue(os.path.isfile(os.path.join(dest, "opt/pacer/bin/pacer")))
        r = subprocess.run(make + ["uninstall"], capture_output=True, text=True, timeout=60)
        self.assertEqual(r.returncode, 0, r.stderr)
        left = [os.path.join(d, f) for d, _, fs in os.walk(dest) for f in fs]
        self.assertEqual(left, [])


class HabitsTest(PacerTestCase):
    def test_help_command_and_exit_codes(self):
        r = pacer("help", "run")
        self.assertEqual(r.returncode, 0)
        self.assertEqual(r.stdout, pacer("run", "--help").stdout)
        self.assertIn("usage: pacer run URL", r.stdout)
        for code in ["0", "2", "3", "4", "130"]:
            self.assertRegex(r.stdout, r"(?m)^  " + code + r"\s")
        for cmd in ["ramp", "compare", "report", "demo"]:
            out = pacer(cmd, "--help").stdout
            self.assertIn("Exit codes:", out, cmd)
            self.assertIn("Examples:", out, cmd)
        self.assertRegex(pacer("ramp", "--help").stdout, r"(?m)^  4\s")
        self.assertEqual(pacer("help", "nope").returncode, 2)
        # wrapped: to 80 columns off a terminal, to $COLUMNS when given
        env = dict(os.environ)
        env.pop("COLUMNS", None)
        lines = pacer("run", "--help", env=env).stdout.split("\n")
        self.assertLessEqual(max(len(x) for x in lines), 80)
        wide = pacer("run", "--help", env=dict(env, COLUMNS="150")).stdout.split("\n")
        self.assertGreater(max(len(x) for x in wide), 100)
        self.assertLess(len(wide), len(lines))

    def test_aliases_bundles_no_keepalive(self):
        tmp = tempfile.mkdtemp(prefix="pacer-habits-")
        try:
            out = os.path.join(tmp, "a.json")
            # -R (wrk2), -z (hey) with a compound duration, a bundle, prefixes
            r = pacer("run", "--self-contained", "-R", "100/1s", "-qz1s", "-c2",
                      "--limited", "--warm=0s", "-o", out)
            self.assertEqual(r.returncode, 0, r.stderr)
            with open(out) as f:
                d = json.load(f)
            self.assertEqual(d["plan"]["rate_per_s"], 100)
            self.assertEqual(d["plan"]["duration_s"], 1)
            self.assertTrue(d["plan"]["keepalive"])
            # argv is recorded as typed (getopt_long works on a copy)
            self.assertEqual(d["plan"]["argv"][-2:], ["-o", out])
            r = pacer("run", "--self-contained", "--d", "1s")
            self.assertEqual(r.returncode, 2)
            self.assertIn("ambiguous", r.stderr)
            # --no-keepalive: a connection for every request
            for flag, most in ((["--no-keepalive"], None), ([], 2)):
                r = pacer("run", "--self-contained", "-n", "40", "--concurrency", "2", "-q",
                          "--limited-ok", "-o", out, *flag)
                self.assertEqual(r.returncode, 0, r.stderr)
                with open(out) as f:
                    d = json.load(f)
                opened = d["measure"]["connections"]["opened"]
                if most is None:
                    self.assertEqual(opened, 40)
                    self.assertFalse(d["plan"]["keepalive"])
                else:
                    self.assertLessEqual(opened, most)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)

    def test_run_slo(self):
        """run --slo: ramp's verdict on the measured phase; exit 1 on a fail."""
        tmp = tempfile.mkdtemp(prefix="pacer-slo-")
        try:
            out = os.path.join(tmp, "r.json")
            for slo, code, passed in (("p99<10s,errors<50%", 0, True), ("p99<1ns", 1, False)):
                r = pacer("run", "--self-contained", "-n", "50", "--concurrency", "2",
                          "--limited-ok", "--slo", slo, "-o", out)
                self.assertEqual(r.returncode, code, r.stderr)
                self.assertIn("SLO " + slo + ": " + ("Pass" if passed else "Fail p99 "),
                              r.stdout)
                with open(out) as f:
                    d = json.load(f)
                self.assertEqual(d["slo"]["expr"], slo)
                self.assertEqual(d["slo"]["pass"], passed)
            r = pacer("run", "--self-contained", "-n", "5", "--slo", "p99<fast")
            self.assertEqual(r.returncode, 2)
            self.assertIn("--slo:", r.stderr)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)

    def test_requests_file_stdin(self):
        tmp = tempfile.mkdtemp(prefix="pacer-stdin-")
        srv = harness.PacerServe("hello")
        try:
            os.mkdir(os.path.join(tmp, "b"))
            with open(os.path.join(tmp, "b", "req.json"), "w") as f:
                f.write('{"a": 1}')
            port = srv.start().port
            table = f"POST http://127.0.0.1:{port}/\n@b/req.json\n"
            out = os.path.join(tmp, "r.json")
            r = pacer("run", "-n", "5", "--concurrency", "1", "--requests-file", "-", "-q",
                      "--limited-ok", "-o", out, input=table, cwd=tmp)
            self.assertEqual(r.returncode, 0, r.stderr)
            with open(out) as f:
                d = json.load(f)
            self.assertEqual(d["plan"]["table"]["source"], "stdin")
            self.assertEqual(d["plan"]["table"]["requests"], 1)
            # compare: every variant gets the table stdin gave once
            r = pacer("compare", "--variant", "a=", "--variant", "b=", "--requests-file", "-",
                      "-n", "10", "--repeat", "1", "-q", "--limited-ok", "-o", out,
                      input=table, cwd=tmp, timeout=60)
            self.assertEqual(r.returncode, 0, r.stderr)
            with open(out) as f:
                d = json.load(f)
            self.assertEqual([v["workload"]["requests"] for v in d["variants"]], [1, 1])
            # @body paths are relative to the working folder, not /dev/
            r = pacer("run", "-n", "5", "--requests-file", "-", "-q", input=table,
                      cwd=harness.REPO)
            self.assertEqual(r.returncode, 2)
            self.assertIn("stdin:2:", r.stderr)
            self.assertIn("b/req.json", r.stderr)
        finally:
            srv.stop()
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    unittest.main()
