"""pacer run with request tables against nginx: the server sees the table's
mix; the result names the table by its SHA-256."""

import collections
import json
import os
import subprocess
import tempfile
import unittest

import harness


def write_targets(port, d):
    body = os.path.join(d, "body.json")
    with open(body, "w") as f:
        f.write('{"a": 1}')
    path = os.path.join(d, "t.targets")
    with open(path, "w") as f:
        f.write(f"# three requests\nGET http://127.0.0.1:{port}/hello\n\n"
                f"GET http://127.0.0.1:{port}/notfound?q=1\nX-Test: yes\n\n"
                f"POST http://127.0.0.1:{port}/file\nContent-Type: application/json\n@body.json\n")
    return path


class TableRunTest(harness.PacerTestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.ngx = harness.Nginx().start()
        cls.dir = tempfile.mkdtemp(prefix="pacer-table-")
        cls.table = write_targets(cls.ngx.port, cls.dir)

    @classmethod
    def tearDownClass(cls):
        cls.ngx.stop()

    def test_sequential_mix_is_exact_and_hash_recorded(self):
        mark = self.ngx.log_mark()
        run = harness.run_pacer(["--requests-file", self.table, "-n", "300", "--concurrency", "3"])
        self.assertEqual(run.code, 0, run.stderr)
        m = run.json["measure"]
        self.assertEqual(m["requests"]["completed"], 300)
        seen = self.ngx.counts_by_path(mark)
        # in order, wrapping around: exactly a third each
        self.assertEqual(seen["/hello"], 100)
        self.assertEqual(seen["/notfound"], 100)
        # nginx answers POST to a static file with 405
        self.assertEqual(seen["/file"], 100)
        self.assertEqual(m["responses"]["by_status"].get("404"), 100)
        t = run.json["plan"]["table"]
        self.assertEqual(t["requests"], 3)
        self.assertEqual(t["format"], "targets")
        self.assertEqual(t["order"], "sequential")
        h = subprocess.run([harness.pacer_bin(), "table", "hash", self.table], capture_output=True,
                           text=True, check=True).stdout.split()[0]
        self.assertEqual(t["sha256"], h)

    def test_random_order_is_seeded_and_mixed(self):
        counts = []
        for _ in range(2):
            mark = self.ngx.log_mark()
            run = harness.run_pacer(["--requests-file", self.table, "--order", "random",
                                     "--seed", "9", "-n", "3000", "--concurrency", "1"])
            self.assertEqual(run.code, 0, run.stderr)
            counts.append(self.ngx.counts_by_path(mark))
        # one connection, one thread, same seed: the same sequence twice
        self.assertEqual(counts[0], counts[1])
        # each path ~1/3 of 3000: within 4.5 binomial standard deviations
        sd = (3000 * (1 / 3) * (2 / 3)) ** 0.5
        for p in ("/hello", "/notfound", "/file"):
            self.assertLess(abs(counts[0][p] - 1000), 4.5 * sd, counts[0])

    def test_bodies_folder(self):
        d = tempfile.mkdtemp(prefix="pacer-bodies-")
        for i in range(4):
            with open(os.path.join(d, f"{i}.json"), "w") as f:
                f.write("x" * (i + 1))
        run = harness.run_pacer([self.ngx.url("/hello"), "--bodies", d, "-X", "PUT", "-n", "8"])
        self.assertEqual(run.code, 0, run.stderr)
        self.assertEqual(run.json["plan"]["table"]["requests"], 4)
        self.assertEqual(run.json["plan"]["table"]["format"], "bodies")
        self.assertEqual(run.json["measure"]["requests"]["completed"], 8)

    def test_bodies_sent_as_post(self):
        """--bodies sends POSTs with the files' bytes, and the result says so:
        nginx answers a POST to its static /file with 405 (a GET would get
        200), plan.method is POST, and plan.workload has each body's size."""
        d = tempfile.mkdtemp(prefix="pacer-bodies-")
        sizes = [3, 17, 40]
        for i, n in enumerate(sizes):
            with open(os.path.join(d, f"{i}.json"), "w") as f:
                f.write("y" * n)
        rd = tempfile.mkdtemp(prefix="pacer-bodies-report-")
        mark = self.ngx.log_mark()
        run = harness.run_pacer([self.ngx.url("/file"), "--bodies", d, "-n", "30", "--report-dir", rd],
                                out=False)
        self.assertEqual(run.code, 0, run.stderr)
        with open(os.path.join(rd, "result.json")) as f:
            j = json.load(f)
        self.assertEqual(j["measure"]["responses"]["by_status"], {"405": 30})
        self.assertEqual(sum(self.ngx.counts_by_path(mark).values()), 30)
        p = j["plan"]
        self.assertEqual(p["method"], "POST")
        self.assertIsNone(p["body_bytes"])  # three sizes
        wl = p["workload"]
        self.assertEqual(wl["source"], "bodies")
        self.assertEqual(wl["methods"], [{"method": "POST", "requests": 3, "share_pct": 100.0}])
        self.assertEqual([r["body_bytes"] for r in wl["listed"]], sizes)
        self.assertEqual(wl["bodies"], {"requests": 3, "bytes_total": sum(sizes), "bytes_min": 3,
                                        "bytes_max": 40})
        self.assertEqual(wl["sha256"], p["table"]["sha256"])
        # each body went out once per turn: the bytes written hold them
        self.assertGreaterEqual(j["measure"]["bytes"]["out"], 10 * sum(sizes))
        with open(os.path.join(rd, "report.md")) as f:
            md = f.read()
        self.assertIn("| Methods | POST 3 (100.00%) |", md)
        self.assertIn("3 requests to the target URL in turn, one per body file of " +
                      d.replace("_", "\\_") + " (bodies of 3 B to 40 B, %d B in all)" % sum(sizes),
                      md)
        self.assertIn("POST /file (17-byte body)", md)
        # a table run is titled by its table, not its first URL
        first = md.splitlines()[0]
        self.assertTrue(first.startswith("# pacer run report: table "), first)
        self.assertIn("3 requests, 1 host: 127.0.0.1:%d)" % self.ngx.port, first)
        flat = " ".join(run.stdout.split())  # the summary is wrapped at 78 columns
        self.assertTrue(flat.startswith("pacer run report: table %s (SHA-256 %s, 3 requests, 1 host: "
                                        "127.0.0.1:%d)" % (d, p["table"]["sha256"][:12],
                                                          self.ngx.port)), run.stdout)

    def test_bad_tables(self):
        bad = os.path.join(self.dir, "bad.targets")
        with open(bad, "w") as f:
            f.write(f"GET http://127.0.0.1:{self.ngx.port}/hello\nBad Header Line\n")
        many = os.path.join(self.dir, "many.targets")
        with open(many, "w") as f:  # 65 hosts: one more than a run takes
            f.write("\n".join(f"GET http://127.0.0.1:{1000 + i}/x\n" for i in range(65)))
        unres = os.path.join(self.dir, "unresolvable.targets")
        with open(unres, "w") as f:
            f.write(f"GET http://127.0.0.1:{self.ngx.port}/a\n\nGET http://no-such-host.invalid:81/b\n")
        down = os.path.join(self.dir, "alldown.targets")
        with open(down, "w") as f:
            f.write(f"GET http://127.0.0.1:{harness.free_port()}/a\n\n"
                    f"GET http://127.0.0.1:{harness.free_port()}/b\n")
        cases = [
            (["--requests-file", bad, "-n", "1"], bad + ":2:"),
            (["--requests-file", "/nonexistent.targets", "-n", "1"], "/nonexistent.targets"),
            (["--requests-file", many, "-n", "1"], "65 hosts; at most 64"),
            (["--requests-file", unres, "-n", "1"], unres + ": host http://no-such-host.invalid:81"),
            (["--requests-file", down, "-n", "1"], down + ": none of the table's 2 hosts"),
            (["--requests-file", self.table, "--order", "shuffled", "-n", "1"], "--order"),
            (["--requests-file", self.table, self.ngx.url("/hello"), "-n", "1"], "table names the URLs"),
            ([self.ngx.url("/hello"), "--bodies", "/nonexistent-dir", "-n", "1"], "/nonexistent-dir"),
        ]
        for args, want in cases:
            run = harness.run_pacer(args, out=False, timeout=20)
            self.assertEqual(run.code, 2, (args, run.stderr))
            lines = run.stderr.splitlines()
            self.assertEqual(len(lines), 1, run.stderr)
            self.assertIn(want, lines[0])


class MultiHostTest(harness.PacerTestCase):
    """A table spanning two nginx servers (two hosts): connections pooled per
    host, the mix per server, a dead host not blocking a live one."""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.a = harness.Nginx().start()
        cls.b = harness.Nginx().start()
        cls.dir = tempfile.mkdtemp(prefix="pacer-hosts-")
        # one request in three to a, two to b
        cls.table = os.path.join(cls.dir, "two.targets")
        with open(cls.table, "w") as f:
            f.write(f"GET http://127.0.0.1:{cls.a.port}/hello\n\n"
                    f"GET http://127.0.0.1:{cls.b.port}/hello\n\n"
                    f"GET http://127.0.0.1:{cls.b.port}/notfound\n")

    @classmethod
    def tearDownClass(cls):
        cls.a.stop()
        cls.b.stop()

    def marks(self):
        return self.a.log_mark(), self.b.log_mark()

    def seen(self, marks):
        return (collections.Counter(self.a.counts_by(marks[0])),
                collections.Counter(self.b.counts_by(marks[1])))

    def hosts_of(self, run):
        hs = run.json["measure"]["hosts"]
        self.assertEqual([(h["host"], h["port"]) for h in hs],
                         [("127.0.0.1", self.a.port), ("127.0.0.1", self.b.port)])
        return hs

    def check_plan_hosts(self, run, ports_requests):
        t = run.json["plan"]["table"]
        self.assertEqual([(h["host"], h["port"], h["tls"], h["requests"]) for h in t["hosts"]],
                         [("127.0.0.1", p, False, n) for p, n in ports_requests])
        self.assertTrue(run.json["plan"]["url"].endswith(f":{self.a.port}/hello"))

    def test_result_validates_with_hosts(self):
        try:
            import test_report
        except ImportError as e:  # pragma: no cover
            self.skipTest(str(e))
        if test_report.jsonschema is None:
            self.skipTest("python3-jsonschema is not installed")
        run = self.run_ok(["--requests-file", self.table, "-n", "30", "--concurrency", "2",
                           "--warmup", "100ms"])
        self.assertIn("hosts", run.json["measure"])
        self.assertIn("hosts", run.json["warmup"])
        errors = [e.message for e in test_report.validator().iter_errors(run.json)]
        self.assertEqual(errors, [])
        self.assertEqual(test_report.undescribed_fields(test_report.schema(), run.json), [])

    def test_closed_loop_mix_is_exact_per_server(self):
        for threads, conc in ((1, 3), (2, 4)):
            with self.subTest(threads=threads, concurrency=conc):
                m = self.marks()
                run = self.run_ok(["--requests-file", self.table, "-n", "600",
                                   "--concurrency", conc, "--threads", threads])
                ph = self.phase(run)
                self.assertEqual(ph["requests"]["completed"], 600)
                self.assert_accounted(ph, run)
                self.assert_no_errors(ph, run, failing=(404,))
                sa, sb = self.seen(m)
                self.assertEqual(sa, {("/hello", 200): 200})
                self.assertEqual(sb, {("/hello", 200): 200, ("/notfound", 404): 200})
                self.check_plan_hosts(run, [(self.a.port, 1), (self.b.port, 2)])
                ha, hb = self.hosts_of(run)
                self.assertEqual((ha["completed"], hb["completed"]), (200, 400))
                # b's 404s did not succeed: they are its errors
                self.assertEqual((ha["errors"], hb["errors"]), (0, 200))
                self.assertEqual((ha["connection_errors"], hb["connection_errors"]), (0, 0))
                # pooled per host, the cap a total: no more connections than
                # the concurrency, and none moved back and forth between hosts
                self.assertLessEqual(ha["connections_opened"] + hb["connections_opened"], conc)
                self.assertGreaterEqual(ha["connections_opened"], 1)
                self.assertGreaterEqual(hb["connections_opened"], 1)
                self.assertEqual(ph["connections"]["opened"],
                                 ha["connections_opened"] + hb["connections_opened"])
                # plain HTTP/1.1: every connection spoke it, no HTTP/2 figures
                for h in (ha, hb):
                    self.assertEqual((h["protocol"], h["connections_h1"], h["connections_h2"]),
                                     ("http/1.1", h["connections_opened"], 0), h)
                    self.assertNotIn("streams_max", h)
                self.assertLessEqual(len(self.a.connections(m[0])), conc)
                self.assertLessEqual(len(self.b.connections(m[1])), conc)

    def test_open_loop_mix_within_tolerance(self):
        m = self.marks()
        run = self.run_ok(["--requests-file", self.table, "--rate", "600", "-d", "2s",
                           "--connections", "6", "--threads", "2"])
        ph = self.phase(run)
        r = ph["requests"]
        self.assertEqual(r["scheduled"], r["sent"] + r["queued_at_end"] + r["dropped"], r)
        self.assert_accounted(ph, run)
        self.assert_no_errors(ph, run, failing=(404,))
        sa, sb = self.seen(m)
        na, nb = sum(sa.values()), sum(sb.values())
        total = r["completed"]
        self.assertGreater(total, 0)
        # in turn from each thread's offset: a third to a, within a request per thread
        self.assertLessEqual(abs(na - total / 3), 2, (na, nb, total))
        self.assertLessEqual(abs(sb[("/hello", 200)] - sb[("/notfound", 404)]), 2, sb)
        ha, hb = self.hosts_of(run)
        self.assertEqual(ha["completed"] + hb["completed"], total)
        for h in (ha, hb):
            self.assertLessEqual(h["connections_opened"], 6)
        w = run.json.get("warmup")
        if w:
            self.assertIn("hosts", w)

    def dead_table(self):
        dead = harness.free_port()
        path = os.path.join(self.dir, f"dead-{dead}.targets")
        with open(path, "w") as f:
            f.write(f"GET http://127.0.0.1:{self.a.port}/hello\n\n"
                    f"GET http://127.0.0.1:{dead}/hello\n")
        return path, dead

    def test_dead_host_does_not_block_the_live_one_open_loop(self):
        path, dead = self.dead_table()
        m = self.marks()
        run = self.run_ok(["--requests-file", path, "--rate", "400", "-d", "2s",
                           "--connections", "4", "--threads", "1"])
        self.assertIn(f"127.0.0.1:{dead}", run.stderr)
        self.assertIn("cannot connect", run.stderr)
        ph = self.phase(run)
        r = ph["requests"]
        self.assertEqual(r["scheduled"], r["sent"] + r["queued_at_end"] + r["dropped"], r)
        self.assert_accounted(ph, run)
        live, gone = ph["hosts"]
        self.assertEqual(gone["port"], dead)
        # every other request is for the live host: all of them completed,
        # none held up behind the dead host's
        self.assertEqual(live["completed"], r["scheduled"] // 2, (live, r))
        self.assertEqual(live["errors"], 0)
        self.assertEqual(sum(self.a.counts_by(m[0]).values()), live["completed"])
        self.assertEqual(gone["completed"], 0)
        self.assertGreaterEqual(gone["connection_errors"], 1)
        self.assertEqual(gone["errors"], 0)  # no request of it was sent
        self.assertEqual(gone["connection_errors"], ph["transport_errors"]["connect"])
        self.assertEqual(gone["connections_opened"], 0)
        # the dead host's requests waited in its own backlog (never sent),
        # not in front of the live host's
        self.assertEqual(r["dropped"] + r["queued_at_end"], r["scheduled"] - live["completed"])
        self.assertGreater(r["queued_at_end"], 0, r)
        # at the cap, a probe of the dead host may take the place of an idle
        # live connection (reopened after): at most one per probe
        self.assertLessEqual(live["connections_opened"], 4 + gone["connection_errors"])

    def test_dead_host_closed_loop_ends(self):
        path, dead = self.dead_table()
        run = self.run_ok(["--requests-file", path, "-n", "200", "--concurrency", "2"], timeout=30)
        ph = self.phase(run)
        live, gone = ph["hosts"]
        self.assertEqual(live["completed"], 100)
        self.assertEqual(gone["completed"], 0)
        self.assertGreaterEqual(gone["connection_errors"], 1)
        r = ph["requests"]
        self.assertEqual(r["scheduled"], 200)
        self.assertEqual(r["dropped"], 100)
        self.assertEqual(r["scheduled"], r["sent"] + r["queued_at_end"] + r["dropped"], r)

    def test_http_and_https_hosts(self):
        import shutil
        if not shutil.which("openssl"):
            self.skipTest("openssl command not found")
        import test_tls
        pki = tempfile.mkdtemp(prefix="pacer-hosts-pki-")
        test_tls.make_pki(pki)
        port = harness.free_port()
        conf = ("server { listen 127.0.0.1:%d ssl; ssl_certificate %s/server.pem; "
                "ssl_certificate_key %s/server.key; location = /hello { default_type text/plain; "
                "return 200 \"hello\\n\"; } }" % (port, pki, pki))
        tls_ngx = harness.Nginx(extra_http=conf).start()
        try:
            path = os.path.join(self.dir, "mixed.targets")
            with open(path, "w") as f:
                f.write(f"GET http://127.0.0.1:{self.a.port}/hello\n\n"
                        f"GET https://127.0.0.1:{port}/hello\n")
            run = self.run_ok(["--requests-file", path, "-n", "100", "--concurrency", "2",
                               "--cacert", os.path.join(pki, "ca.pem")])
            ph = self.phase(run)
            self.assert_no_errors(ph, run)
            self.assertEqual(ph["requests"]["completed"], 100)
            plain, tls = ph["hosts"]
            self.assertEqual((plain["completed"], tls["completed"]), (50, 50))
            # TLS only on the https host's connections
            self.assertEqual(ph["tls"]["handshakes"], tls["connections_opened"])
            self.assertGreaterEqual(tls["connections_opened"], 1)
            self.assertEqual([h["tls"] for h in run.json["plan"]["table"]["hosts"]], [False, True])
            # a certificate the driver does not trust: that host's handshakes
            # fail (errors.tls, its requests dropped), the plain host is served
            run = self.run_ok(["--requests-file", path, "--rate", "200", "-d", "1s",
                               "--cacert", os.path.join(pki, "other-ca.pem")])
            ph = self.phase(run)
            plain, tls = ph["hosts"]
            self.assertIn("TLS handshake failed", run.stderr)
            self.assertEqual(plain["completed"], ph["requests"]["scheduled"] // 2)
            self.assertEqual(tls["completed"], 0)
            self.assertGreaterEqual(tls["connection_errors"], 1)
            self.assertEqual(tls["connection_errors"], ph["transport_errors"]["tls"])
        finally:
            tls_ngx.stop()
            shutil.rmtree(pki, ignore_errors=True)

    def test_one_host_table_has_no_phase_hosts(self):
        path = os.path.join(self.dir, "one.targets")
        with open(path, "w") as f:
            f.write(f"GET http://127.0.0.1:{self.a.port}/hello\n")
        run = self.run_ok(["--requests-file", path, "-n", "20"])
        self.assertNotIn("hosts", run.json["measure"])
        self.check_plan_hosts(run, [(self.a.port, 1)])

    def test_cap_smaller_than_hosts_evicts_idle(self):
        # one connection for two hosts: each request needs the other host, so
        # the idle connection is closed to make room (no deadlock, no errors)
        m = self.marks()
        run = self.run_ok(["--requests-file", self.table, "-n", "30", "--concurrency", "1"])
        ph = self.phase(run)
        self.assertEqual(ph["requests"]["completed"], 30)
        self.assert_no_errors(ph, run, failing=(404,))
        sa, sb = self.seen(m)
        self.assertEqual(sum(sa.values()), 10)
        self.assertEqual(sum(sb.values()), 20)
        ha, hb = self.hosts_of(run)
        # a, b, b, a, ...: a new connection at each change of host
        self.assertEqual(ha["connections_opened"], 10)
        self.assertEqual(hb["connections_opened"], 10)



UNIX_SERVER = """
	server {
		listen unix:@PREFIX@/app.sock;
		location = /hello { default_type text/plain; return 200 "hello\\n"; }
		location = /unix { default_type text/plain; return 200 "unix\\n"; }
	}
"""


class UnixHostTableTest(harness.PacerTestCase):
    """Tables whose URLs name a Unix socket (unix:/PATH.sock:http://host/path),
    alone or beside TCP hosts: each request reaches the server its URL
    names, the result records the socket path, a missing path is an error."""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.tcp = harness.Nginx().start()
        cls.ux = harness.Nginx(extra_http=UNIX_SERVER).start()
        cls.sock = os.path.join(cls.ux.dir, "app.sock")
        cls.dir = tempfile.mkdtemp(prefix="pacer-unix-table-")
        # one request in three over TCP, two over the socket (two paths)
        cls.table = cls.write("mixed.targets",
                              f"GET unix:{cls.sock}:http://app.local/hello\n\n"
                              f"GET http://127.0.0.1:{cls.tcp.port}/hello\n\n"
                              f"GET unix:{cls.sock}:http://app.local/unix\n")

    @classmethod
    def tearDownClass(cls):
        cls.tcp.stop()
        cls.ux.stop()

    @classmethod
    def write(cls, name, text):
        path = os.path.join(cls.dir, name)
        with open(path, "w") as f:
            f.write(text)
        return path

    def seen(self, marks):
        return (collections.Counter(self.ux.counts_by(marks[0])),
                collections.Counter(self.tcp.counts_by(marks[1])))

    def test_unix_and_tcp_hosts_closed_loop_exact(self):
        for threads, conc in ((1, 3), (2, 4)):
            with self.subTest(threads=threads, concurrency=conc):
                m = (self.ux.log_mark(), self.tcp.log_mark())
                run = self.run_ok(["--requests-file", self.table, "-n", "600",
                                   "--concurrency", conc, "--threads", threads])
                ph = self.phase(run)
                self.assertEqual(ph["requests"]["completed"], 600)
                self.assert_accounted(ph, run)
                self.assert_no_errors(ph, run)
                su, st = self.seen(m)
                self.assertEqual(su, {("/hello", 200): 200, ("/unix", 200): 200})
                self.assertEqual(st, {("/hello", 200): 200})
                hosts = run.json["plan"]["table"]["hosts"]
                self.assertEqual([(h["host"], h["port"], h["tls"], h["requests"]) for h in hosts],
                                 [("app.local", 80, False, 2), ("127.0.0.1", self.tcp.port, False, 1)])
                # the socket path is in the result's identity of the table
                self.assertEqual(hosts[0]["unix_socket"], self.sock)
                self.assertNotIn("unix_socket", hosts[1])
                self.assertIsNone(run.json["plan"]["unix_socket"])
                hu, ht = ph["hosts"]
                self.assertEqual(hu["unix_socket"], self.sock)
                self.assertNotIn("unix_socket", ht)
                self.assertEqual((hu["completed"], ht["completed"]), (400, 200))
                self.assertEqual(ph["connections"]["opened"],
                                 hu["connections_opened"] + ht["connections_opened"])
                self.assertLessEqual(len(self.ux.connections(m[0])), conc)

    def test_result_validates(self):
        try:
            import test_report
        except ImportError as e:  # pragma: no cover
            self.skipTest(str(e))
        if test_report.jsonschema is None:
            self.skipTest("python3-jsonschema is not installed")
        run = self.run_ok(["--requests-file", self.table, "-n", "30", "--concurrency", "2"])
        errors = [e.message for e in test_report.validator().iter_errors(run.json)]
        self.assertEqual(errors, [])
        self.assertEqual(test_report.undescribed_fields(test_report.schema(), run.json), [])

    def test_jsonl_one_unix_host(self):
        path = self.write("one.jsonl",
                          json.dumps({"method": "GET",
                                      "url": f"unix:{self.sock}:http://app.local/unix"}) + "\n")
        m = self.ux.log_mark()
        run = self.run_ok(["--requests-file", path, "-n", "50", "--concurrency", "2"])
        ph = self.phase(run)
        self.assert_no_errors(ph, run)
        self.assertEqual(ph["requests"]["completed"], 50)
        self.assertEqual(self.ux.counts_by(m), {("/unix", 200): 50})
        self.assertNotIn("hosts", ph)
        self.assertEqual(run.json["plan"]["table"]["hosts"][0]["unix_socket"], self.sock)
        self.assertEqual(run.json["plan"]["table"]["format"], "jsonl")

    def test_missing_socket_path_is_named(self):
        missing = os.path.join(self.ux.dir, "nothing-here.sock")
        mixed = self.write("missing.targets",
                           f"GET http://127.0.0.1:{self.tcp.port}/hello\n\n"
                           f"GET unix:{missing}:http://app.local/hello\n")
        one = self.write("missing-one.targets", f"GET unix:{missing}:http://app.local/hello\n")
        for path in (mixed, one):
            with self.subTest(table=os.path.basename(path)):
                run = harness.run_pacer(["--requests-file", path, "-n", "10"])
                self.assertEqual(run.code, 2, harness.describe(run))
                lines = run.stderr.strip().splitlines()
                self.assertEqual(len(lines), 1, run.stderr)
                self.assertIn(path, lines[0])
                self.assertIn(missing, lines[0])
                self.assertIn("No such file or directory", lines[0])
                self.assertIn("no socket at that path", lines[0])
                self.assertIsNone(run.json)

    def test_bad_unix_url_names_file_and_line(self):
        path = self.write("bad.targets", "GET http://127.0.0.1:1/x\n\nGET unix:app.sock:http://h/\n")
        run = harness.run_pacer(["--requests-file", path, "-n", "10"])
        self.assertEqual(run.code, 2, harness.describe(run))
        self.assertIn(f"{path}:3: bad URL 'unix:app.sock:http://h/': the socket path after "
                      "'unix:' must be absolute", run.stderr)

    def test_unix_socket_option_with_unix_table_is_refused(self):
        run = harness.run_pacer(["--requests-file", self.table, "--unix-socket", self.sock,
                                 "-n", "10"])
        self.assertEqual(run.code, 2, harness.describe(run))
        self.assertIn("--unix-socket does not combine", run.stderr)
        self.assertIn(self.sock, run.stderr)

    def test_https_over_a_unix_socket_beside_tcp(self):
        import shutil
        if not shutil.which("openssl"):
            self.skipTest("openssl command not found")
        import test_tls
        pki = tempfile.mkdtemp(prefix="pacer-unix-pki-")
        test_tls.make_pki(pki)
        conf = ("server { listen unix:@PREFIX@/tls.sock ssl; ssl_certificate %s/server.pem; "
                "ssl_certificate_key %s/server.key; location = /hello { default_type text/plain; "
                "return 200 \"hello\\n\"; } }" % (pki, pki))
        tls_ngx = harness.Nginx(extra_http=conf).start()
        try:
            sock = os.path.join(tls_ngx.dir, "tls.sock")
            # the certificate names localhost: the name checked is the URL's
            path = self.write("tls.targets", f"GET unix:{sock}:https://localhost/hello\n\n"
                                             f"GET http://127.0.0.1:{self.tcp.port}/hello\n")
            m = (tls_ngx.log_mark(), self.tcp.log_mark())
            run = self.run_ok(["--requests-file", path, "-n", "100", "--concurrency", "2",
                               "--cacert", os.path.join(pki, "ca.pem")])
            ph = self.phase(run)
            self.assert_no_errors(ph, run)
            tls, plain = ph["hosts"]
            self.assertEqual((tls["completed"], plain["completed"]), (50, 50))
            self.assertEqual(ph["tls"]["handshakes"], tls["connections_opened"])
            self.assertGreaterEqual(tls["connections_opened"], 1)
            self.assertEqual(tls_ngx.counts_by(m[0]), {("/hello", 200): 50})
            self.assertEqual(self.tcp.counts_by(m[1]), {("/hello", 200): 50})
            hosts = run.json["plan"]["table"]["hosts"]
            self.assertEqual([(h["tls"], h.get("unix_socket")) for h in hosts],
                             [(True, sock), (False, None)])
        finally:
            tls_ngx.stop()
            shutil.rmtree(pki, ignore_errors=True)


if __name__ == "__main__":
    unittest.main()
