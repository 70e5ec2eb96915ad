"""Self-tests of the harness: nginx and badserver behave as the pacer tests
assume. These need no pacer binary."""

import os
import signal
import socket
import time
import unittest

import harness
from harness import BadServer, Nginx, parse_response_head, raw_exchange

GET = b"GET /x HTTP/1.1\r\nHost: t\r\n\r\n"


def split_responses(data):
    """Splits concatenated Content-Length responses."""
    out = []
    while data:
        status, headers, rest = parse_response_head(data)
        n = int(headers["content-length"])
        out.append((status, headers, rest[:n]))
        data = rest[n:]
    return out


class NginxHarnessTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.ngx = Nginx().start()

    @classmethod
    def tearDownClass(cls):
        cls.ngx.stop()

    def get(self, path, keep_alive=True):
        req = ("GET %s HTTP/1.1\r\nHost: localhost\r\n%s\r\n"
               % (path, "" if keep_alive else "Connection: close\r\n")).encode()
        return raw_exchange(self.ngx.port, req, timeout=3.0)

    def test_hello_has_length_and_keeps_alive(self):
        mark = self.ngx.log_mark()
        with socket.create_connection(("127.0.0.1", self.ngx.port), timeout=3) as s:
            s.sendall(b"GET /hello HTTP/1.1\r\nHost: x\r\n\r\n" * 3)
            data = b""
            while data.count(b"hello\n") < 3:
                d = s.recv(65536)
                self.assertTrue(d, "nginx closed a keep-alive connection")
                data += d
        rs = split_responses(data)
        self.assertEqual([r[0] for r in rs], [200, 200, 200])
        self.assertEqual(rs[0][2], b"hello\n")
        self.assertEqual(self.ngx.count(mark, path="/hello", status=200), 3)
        lines = self.ngx.log_lines(mark)
        self.assertEqual(len({l.connection for l in lines}), 1)
        self.assertEqual(sorted(l.connection_requests for l in lines), [1, 2, 3])

    def test_notfound(self):
        data, _ = self.get("/notfound", keep_alive=False)
        self.assertEqual(parse_response_head(data)[0], 404)

    def test_chunked_is_chunked(self):
        if not self.ngx.has_echo:
            self.skipTest("nginx echo module not installed")
        data, closed = self.get("/chunked", keep_alive=False)
        status, headers, body = parse_response_head(data)
        self.assertEqual(status, 200)
        self.assertEqual(headers.get("transfer-encoding"), "chunked")
        self.assertNotIn("content-length", headers)
        self.assertTrue(body.endswith(b"0\r\n\r\n"))
        self.assertIn(b"first chunk", body)

    def test_close_is_close_delimited(self):
        if not self.ngx.has_echo:
            self.skipTest("nginx echo module not installed")
        # A keep-alive request: nginx must close anyway, as it has no other
        # way to delimit the body.
        data, closed = self.get("/close", keep_alive=True)
        status, headers, body = parse_response_head(data)
        self.assertEqual(status, 200)
        self.assertTrue(closed, "nginx did not close the connection")
        self.assertNotIn("content-length", headers)
        self.assertNotIn("transfer-encoding", headers)
        self.assertEqual(body, b"a body delimited by the end of the connection\n")

    def test_file_has_known_size(self):
        data, _ = self.get("/file", keep_alive=False)
        status, headers, body = parse_response_head(data)
        self.assertEqual(status, 200)
        self.assertEqual(int(headers["content-length"]), harness.FILE_SIZE)
        self.assertEqual(len(body), harness.FILE_SIZE)

    def test_counts_by_path_and_status(self):
        mark = self.ngx.log_mark()
        for p in ("/hello", "/hello", "/notfound", "/file?x=1"):
            self.get(p, keep_alive=False)
        by = self.ngx.counts_by(mark)
        self.assertEqual(by, {("/hello", 200): 2, ("/notfound", 404): 1, ("/file", 200): 1})
        self.assertEqual(len(self.ngx.connections(mark)), 4)

    def test_pause_and_resume(self):
        workers = self.ngx.worker_pids()
        self.assertEqual(len(workers), 1)
        self.ngx.pause()
        try:
            with socket.create_connection(("127.0.0.1", self.ngx.port), timeout=3) as s:
                s.sendall(b"GET /hello HTTP/1.1\r\nHost: x\r\n\r\n")
                s.settimeout(0.3)
                with self.assertRaises(socket.timeout):
                    s.recv(100)
                self.ngx.resume()
                s.settimeout(3)
                self.assertTrue(s.recv(100).startswith(b"HTTP/1.1 200"))
        finally:
            self.ngx.resume()


class NginxLifecycleTest(unittest.TestCase):
    def test_stop_kills_master_and_worker_even_when_stopped(self):
        ngx = Nginx().start()
        pids = ngx.all_pids()
        prefix = ngx.dir
        self.assertEqual(len(pids), 2)
        ngx.pause()
        ngx.stop()
        for p in pids:
            self.assertFalse(harness._pid_alive(p), "pid %d still alive" % p)
        self.assertFalse(os.path.exists(prefix))

    def test_context_manager(self):
        with Nginx() as ngx:
            port = ngx.port
            pid = ngx.master_pid
            data, _ = raw_exchange(port, b"GET /hello HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            self.assertTrue(data.startswith(b"HTTP/1.1 200"))
        self.assertFalse(harness._pid_alive(pid))


class BadServerTest(unittest.TestCase):
    def exchange(self, mode, data=GET, timeout=2.0, **kw):
        with BadServer(mode, **kw) as bs:
            self.assertEqual(bs.port, bs.port_file_port)
            return raw_exchange(bs.port, data, timeout=timeout)

    def test_ok_keep_alive_pipelined_and_partial(self):
        with BadServer("ok") as bs:
            with socket.create_connection(("127.0.0.1", bs.port), timeout=3) as s:
                # one request byte by byte, then two pipelined, the second
                # with a body to skip
                req = b"GET /a HTTP/1.1\r\nHost: t\r\n\r\n"
                for i in range(len(req)):
                    s.sendall(req[i:i + 1])
                    time.sleep(0.001)
                s.sendall(b"POST /b HTTP/1.1\r\nContent-Length: 7\r\n\r\nGET / H"
                          b"GET /c HTTP/1.1\r\n\r\n")
                data = b""
                while data.count(b"hello\n") < 3:
                    d = s.recv(65536)
                    self.assertTrue(d)
                    data += d
                s.settimeout(0.2)
                with self.assertRaises(socket.timeout):
                    s.recv(100)  # exactly three responses
        rs = split_responses(data)
        self.assertEqual([r[0] for r in rs], [200, 200, 200])
        self.assertEqual(bs.returncode, 0)

    def test_ok_many_connections(self):
        with BadServer("ok") as bs:
            socks = [socket.create_connection(("127.0.0.1", bs.port), timeout=3) for _ in range(300)]
            try:
                for s in socks:
                    s.sendall(GET)
                for s in socks:
                    self.assertTrue(s.recv(4096).startswith(b"HTTP/1.1 200 OK"))
            finally:
                for s in socks:
                    s.close()

    def test_oversized_headers_dropped(self):
        big = b"GET / HTTP/1.1\r\nX-Big: " + b"a" * (70 * 1024)
        with BadServer("ok") as bs:
            with socket.create_connection(("127.0.0.1", bs.port), timeout=3) as s:
                try:
                    s.sendall(big)
                except (BrokenPipeError, ConnectionResetError):
                    pass
                data, closed = harness._read_all(s, 3.0, 1 << 20)
            self.assertEqual(data, b"")
            self.assertTrue(closed)
            # the server lives on
            data, _ = raw_exchange(bs.port, GET, timeout=2.0, read_until_close=False)
            self.assertTrue(data.startswith(b"HTTP/1.1 200"))

    def test_stall(self):
        data, closed = self.exchange("stall", timeout=0.5)
        self.assertEqual(data, b"")
        self.assertFalse(closed)

    def test_close_before(self):
        data, closed = self.exchange("close-before")
        self.assertEqual(data, b"")
        self.assertTrue(closed)

    def test_close_mid(self):
        data, closed = self.exchange("close-mid")
        status, headers, body = parse_response_head(data)
        self.assertEqual(headers["content-length"], "1000")
        self.assertEqual(len(body), 10)
        self.assertTrue(closed)

    def test_garbage(self):
        data, closed = raw_exchange_keep(self, "garbage", 200)
        self.assertEqual(len(data), 200)
        self.assertFalse(data.startswith(b"HTTP"))
        self.assertFalse(closed)

    def test_huge_headers(self):
        with BadServer("huge-headers") as bs:
            with socket.create_connection(("127.0.0.1", bs.port), timeout=3) as s:
                s.sendall(GET)
                data = b""
                while b"hello\n" not in data:
                    d = s.recv(65536)
                    self.assertTrue(d)
                    data += d
        status, headers, body = parse_response_head(data)
        self.assertEqual(status, 200)
        self.assertGreater(data.index(b"\r\n\r\n"), 190 * 1024)
        self.assertEqual(body, b"hello\n")

    def test_slow(self):
        with BadServer("slow", delay_ms=200) as bs:
            with socket.create_connection(("127.0.0.1", bs.port), timeout=3) as s:
                s.sendall(GET * 2)
                s.settimeout(0.1)
                with self.assertRaises(socket.timeout):
                    s.recv(100)  # not yet
                s.settimeout(3)
                data = b""
                while data.count(b"hello\n") < 2:
                    data += s.recv(4096)
        self.assertEqual(len(split_responses(data)), 2)

    def test_every_other_close(self):
        with BadServer("every-other-close") as bs:
            results = [raw_exchange(bs.port, GET, timeout=0.3) for _ in range(4)]
        # each exchange ends with a close: good responses are followed by our
        # recv timing out, so look only at the bytes
        got = [d.startswith(b"HTTP/1.1 200") for d, _ in results]
        self.assertEqual(got, [True, False, True, False])
        self.assertTrue(results[1][1])

    def test_chunked(self):
        with BadServer("chunked") as bs:
            data, _ = raw_exchange(bs.port, GET, timeout=0.5)
        status, headers, body = parse_response_head(data)
        self.assertEqual(headers["transfer-encoding"], "chunked")
        self.assertIn(b";ext=1\r\n", body)
        self.assertTrue(body.endswith(b"0\r\nX-Checksum: abc123\r\n\r\n"))

    def test_close_delimited(self):
        data, closed = self.exchange("close-delimited")
        status, headers, body = parse_response_head(data)
        self.assertEqual(status, 200)
        self.assertNotIn("content-length", headers)
        self.assertNotIn("transfer-encoding", headers)
        self.assertTrue(body)
        self.assertTrue(closed)

    def test_interim(self):
        with BadServer("interim") as bs:
            data, _ = raw_exchange(bs.port, GET, timeout=0.5)
        status, _, rest = parse_response_head(data)
        self.assertEqual(status, 100)
        status, headers, body = parse_response_head(rest)
        self.assertEqual(status, 200)
        self.assertEqual(body, b"hello\n")

    def test_sigint_and_sigterm_exit_zero(self):
        for sig in (signal.SIGINT, signal.SIGTERM):
            bs = BadServer("ok").start()
            os.kill(bs.proc.pid, sig)
            self.assertEqual(bs.proc.wait(timeout=5), 0)
            bs.stop()

    def test_bad_mode_rejected(self):
        import subprocess
        r = subprocess.run([harness.badserver_bin(), "--mode", "nope"], capture_output=True, timeout=5)
        self.assertEqual(r.returncode, 2)
        self.assertIn(b"unknown mode", r.stderr)


def raw_exchange_keep(test, mode, n):
    """Reads exactly n bytes of the answer to one request, then checks for 0.2 s
    whether the server closes."""
    with BadServer(mode) as bs:
        with socket.create_connection(("127.0.0.1", bs.port), timeout=3) as s:
            s.sendall(GET)
            data = b""
            while len(data) < n:
                d = s.recv(n - len(data))
                test.assertTrue(d)
                data += d
            rest, closed = harness._read_all(s, 0.2, 1 << 20)
            return data + rest, closed


if __name__ == "__main__":
    unittest.main()
