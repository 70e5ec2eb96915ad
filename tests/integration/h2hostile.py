"""A hostile HTTP/2 server for the tests (Python standard library only).

Raw frames over a loopback socket (h2c, prior knowledge): HTTP/2 framing is
a 9-byte header and a payload, and the few header blocks sent here are
HPACK without Huffman (an indexed :status, literals), so no library is
needed. One thread per connection; every mode is bounded by a count of
frames and by socket timeouts, so that a thread ends whatever pacer does.

Modes (HostileH2(mode)):
  goaway_each    answer the first request of a connection, then GOAWAY
                 (NO_ERROR, last stream = that request) and close: the
                 streams pacer sent after it were not processed
  goaway_shrink  answer the first request, then three GOAWAYs whose last
                 stream id shrinks (2^31-1, the highest stream seen, the
                 answered stream), then close
  goaway_first   GOAWAY (NO_ERROR, last stream 0) when the first request
                 comes: nothing is ever processed
  goaway_at_once SETTINGS and GOAWAY (last stream 0) in one write, before
                 any request
  close_at_once  SETTINGS, then close
  rst            reset every stream, the codes taken in turn from RST_CODES
                 (REFUSED_STREAM among them)
  hpack_bomb     answer every request with one header block: a 4000-byte
                 field added to the HPACK table, then that entry referenced
                 BOMB_REFS times (tens of MB decoded from 16 KB)
  continuation   answer every request with a HEADERS frame without
                 END_HEADERS and CONTINUATION frames that never end (up to
                 CONTINUATION_MAX of them)
  endless_data   answer the first request of a connection with a body that
                 does not end (16 KB DATA frames for ENDLESS_DATA_S, whatever
                 pacer resets), then close
  zero_window    SETTINGS_INITIAL_WINDOW_SIZE 0, never a WINDOW_UPDATE:
                 request bodies cannot be sent; nothing is answered
  no_streams     SETTINGS_MAX_CONCURRENT_STREAMS 0: no stream may be opened
  silent         read everything, send nothing (no SETTINGS)
  garbage        send bytes that are not HTTP/2 instead of SETTINGS
  http1          answer the preface with an HTTP/1.1 response and close
  truncated_rst  answer every request with HEADERS (content-length: 100),
                 10 bytes of DATA and RST_STREAM(NO_ERROR): a body cut short
  truncated_end  the same, the DATA with END_STREAM instead of a reset: a
                 body shorter than its content-length
  long_end       content-length: 10 and 100 bytes of DATA with END_STREAM
  bad_settings   a SETTINGS frame with an invalid value (ENABLE_PUSH 2),
                 then every frame the client sends is read

Counters (under .lock): conns, headers (request HEADERS frames seen),
rst_sent[code], goaway_sent, answered (responses completed), data_sent
(body bytes)."""

import collections
import socket
import struct
import threading
import time


def recv_exact(c, n):
    """n bytes from socket c (EOFError if it closes first)."""
    b = b""
    while len(b) < n:
        got = c.recv(n - len(b))
        if not got:
            raise EOFError
        b += got
    return b


PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
T_DATA, T_HEADERS, T_RST, T_SETTINGS, T_PING, T_GOAWAY, T_WINDOW, T_CONT = 0, 1, 3, 4, 6, 7, 8, 9
F_END_STREAM, F_ACK, F_END_HEADERS = 1, 1, 4
S_ENABLE_PUSH, S_MAX_CONCURRENT_STREAMS, S_INITIAL_WINDOW_SIZE = 2, 3, 4

# NO_ERROR is no reset; 0x1234 is a code HTTP/2 does not define
RST_CODES = (7, 8, 2, 1, 0xB, 7, 0x1234)
BOMB_VALUE = 4000
BOMB_REFS = 12000
CONTINUATION_MAX = 2000
ENDLESS_DATA_FRAMES = 16384  # 256 MiB of body a connection at most ...
ENDLESS_DATA_S = 1.5  # ... and this long


def frame(typ, flags, sid, payload=b""):
    return struct.pack(">I", len(payload))[1:] + bytes((typ, flags)) + struct.pack(">I", sid) + payload


def hpack_int(v, prefix_bits, first=0):
    """An HPACK integer with an N-bit prefix (first: the bits above it)."""
    top = (1 << prefix_bits) - 1
    if v < top:
        return bytes((first | v,))
    out = bytearray((first | top,))
    v -= top
    while v >= 128:
        out.append((v & 0x7F) | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


def hpack_literal(name, value, indexing=False):
    """A literal field with a new name, without Huffman: added to the
    dynamic table when indexing, else never indexed."""
    return (bytes((0x40 if indexing else 0x10,)) + hpack_int(len(name), 7) + name +
            hpack_int(len(value), 7) + value)


STATUS_200 = b"\x88"  # static table index 8
OK_BLOCK = STATUS_200 + hpack_literal(b"x-hostile", b"1")
LENGTH_100_BLOCK = STATUS_200 + hpack_literal(b"content-length", b"100")
LENGTH_10_BLOCK = STATUS_200 + hpack_literal(b"content-length", b"10")


def bomb_block():
    """:status 200, a 4000-byte field into the dynamic table (index 62),
    then BOMB_REFS references to it: about 48 MB of header fields."""
    return STATUS_200 + hpack_literal(b"x-bomb", b"a" * BOMB_VALUE, True) + b"\xbe" * BOMB_REFS


class HostileH2:
    MODES = ("goaway_each", "goaway_shrink", "goaway_first", "goaway_at_once",
             "close_at_once", "rst", "hpack_bomb",
             "continuation", "endless_data", "zero_window", "no_streams", "silent", "garbage", "http1",
             "truncated_rst", "truncated_end", "long_end", "bad_settings")

    def __init__(self, mode):
        assert mode in self.MODES, mode
        self.mode = mode
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(128)
        self.port = self.sock.getsockname()[1]
        self.lock = threading.Lock()
        self.conns = 0
        self.headers = 0
        self.answered = 0
        self.goaway_sent = 0
        self.data_sent = 0
        self.rst_sent = collections.Counter()
        self._stop = threading.Event()
        self._threads = []
        t = threading.Thread(target=self._accept, daemon=True)
        t.start()
        self._acceptor = t

    def url(self, path="/"):
        return "http://127.0.0.1:%d%s" % (self.port, path)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()

    def stop(self):
        self._stop.set()
        try:
            self.sock.shutdown(socket.SHUT_RDWR)  # wakes the accept (a close alone does not)
        except OSError:
            pass
        try:
            self.sock.close()
        except OSError:
            pass
        self._acceptor.join(2)
        for t in list(self._threads):
            t.join(2)

    def _accept(self):
        while not self._stop.is_set():
            try:
                c, _ = self.sock.accept()
            except OSError:
                return
            with self.lock:
                self.conns += 1
            t = threading.Thread(target=self._serve, args=(c,), daemon=True)
            self._threads.append(t)
            t.start()

    # ---- reading

    def _frames(self, c):
        """The client's frames after its preface, as (type, flags, stream,
        payload); SETTINGS acknowledged and PINGs answered on the way (not
        in zero_window/silent, which stay quiet but for their SETTINGS)."""
        if recv_exact(c, 24) != PREFACE:
            raise EOFError
        quiet = self.mode == "silent"
        while not self._stop.is_set():
            hd = recv_exact(c, 9)
            n, typ, flags = int.from_bytes(hd[:3], "big"), hd[3], hd[4]
            sid = int.from_bytes(hd[5:9], "big") & 0x7FFFFFFF
            payload = recv_exact(c, n)
            if typ == T_SETTINGS and not flags & F_ACK and not quiet:
                c.sendall(frame(T_SETTINGS, F_ACK, 0))
            elif typ == T_PING and not flags & F_ACK and not quiet:
                c.sendall(frame(T_PING, F_ACK, 0, payload))
            yield typ, flags, sid, payload

    def _requests(self, c):
        """Stream ids of the client's requests (HEADERS frames)."""
        for typ, _, sid, _ in self._frames(c):
            if typ == T_HEADERS:
                with self.lock:
                    self.headers += 1
                yield sid

    # ---- writing

    def _respond(self, c, sid, body=b"ok\n"):
        c.sendall(frame(T_HEADERS, F_END_HEADERS, sid, OK_BLOCK) +
                  frame(T_DATA, F_END_STREAM, sid, body))
        with self.lock:
            self.answered += 1

    def _goaway(self, c, last, code=0):
        c.sendall(frame(T_GOAWAY, 0, 0, struct.pack(">II", last, code)))
        with self.lock:
            self.goaway_sent += 1

    def _linger(self, c):
        """Half-close and read until the client closes (at most the socket
        timeout): what was sent is not lost to a reset."""
        try:
            c.shutdown(socket.SHUT_WR)
            while c.recv(65536):
                pass
        except OSError:
            pass

    def _serve(self, c):
        c.settimeout(5.0)
        try:
            getattr(self, "_mode_" + self.mode)(c)
        except (EOFError, OSError):
            pass
        finally:
            c.close()

    def _settings(self, c, entries=()):
        c.sendall(frame(T_SETTINGS, 0, 0, b"".join(struct.pack(">HI", k, v) for k, v in entries)))

    # ---- modes

    def _mode_goaway_each(self, c):
        self._settings(c)
        for sid in self._requests(c):
            self._respond(c, sid)
            self._goaway(c, sid)
            break
        self._linger(c)

    def _mode_goaway_shrink(self, c):
        self._settings(c)
        first = None
        for sid in self._requests(c):
            if first is None:
                first = sid
                self._respond(c, sid)
                continue
            self._goaway(c, 0x7FFFFFFF)
            self._goaway(c, sid)
            self._goaway(c, first)
            break
        self._linger(c)

    def _mode_goaway_first(self, c):
        self._settings(c)
        for _ in self._requests(c):
            self._goaway(c, 0)
            break
        self._linger(c)

    def _mode_goaway_at_once(self, c):
        # one write: pacer reads SETTINGS and GOAWAY together, before it has
        # put a request on the connection
        c.sendall(frame(T_SETTINGS, 0, 0) + frame(T_GOAWAY, 0, 0, struct.pack(">II", 0, 0)))
        with self.lock:
            self.goaway_sent += 1
        self._linger(c)

    def _mode_close_at_once(self, c):
        c.sendall(frame(T_SETTINGS, 0, 0))

    def _mode_rst(self, c):
        self._settings(c)
        for sid in self._requests(c):
            with self.lock:
                code = RST_CODES[sum(self.rst_sent.values()) % len(RST_CODES)]
                self.rst_sent[code] += 1
            c.sendall(frame(T_RST, 0, sid, struct.pack(">I", code)))

    def _mode_hpack_bomb(self, c):
        self._settings(c)
        block = bomb_block()
        assert len(block) <= 16384
        for sid in self._requests(c):
            c.sendall(frame(T_HEADERS, F_END_HEADERS | F_END_STREAM, sid, block))
            with self.lock:
                self.answered += 1

    def _mode_continuation(self, c):
        self._settings(c)
        for sid in self._requests(c):
            c.sendall(frame(T_HEADERS, 0, sid, STATUS_200))
            piece = frame(T_CONT, 0, sid, hpack_literal(b"x-more", b"b" * 100))
            for _ in range(CONTINUATION_MAX):
                if self._stop.is_set():
                    return
                c.sendall(piece)
            return

    def _mode_endless_data(self, c):
        self._settings(c)
        chunk = b"z" * 16384
        for sid in self._requests(c):
            c.sendall(frame(T_HEADERS, F_END_HEADERS, sid, OK_BLOCK))
            piece = frame(T_DATA, 0, sid, chunk)
            end = time.monotonic() + ENDLESS_DATA_S
            for i in range(ENDLESS_DATA_FRAMES):
                if self._stop.is_set() or time.monotonic() > end:
                    return
                if i % 16 == 15:
                    time.sleep(0.005)  # at most ~50 MB/s: this machine is shared
                c.sendall(piece)
                with self.lock:
                    self.data_sent += len(chunk)
            return

    def _mode_zero_window(self, c):
        self._settings(c, ((S_INITIAL_WINDOW_SIZE, 0),))
        for _ in self._requests(c):
            pass

    def _mode_no_streams(self, c):
        self._settings(c, ((S_MAX_CONCURRENT_STREAMS, 0),))
        for _ in self._requests(c):
            pass

    def _mode_silent(self, c):
        for _ in self._frames(c):
            pass

    def _mode_garbage(self, c):
        c.sendall(b"\x16\x03\x01 this is not HTTP/2 at all \xff\xfe" * 8)
        self._linger(c)

    def _mode_http1(self, c):
        recv_exact(c, 24)
        c.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
        self._linger(c)

    def _answer_each(self, c, block, body, end):
        """Answer every request with HEADERS (block) and one DATA frame of
        body, ended with END_STREAM when end, else cut by RST_STREAM(NO_ERROR)."""
        self._settings(c)
        for sid in self._requests(c):
            out = frame(T_HEADERS, F_END_HEADERS, sid, block)
            out += frame(T_DATA, F_END_STREAM if end else 0, sid, body)
            if not end:
                out += frame(T_RST, 0, sid, struct.pack(">I", 0))
            c.sendall(out)
            with self.lock:
                self.answered += 1

    def _mode_truncated_rst(self, c):
        self._answer_each(c, LENGTH_100_BLOCK, b"t" * 10, False)

    def _mode_truncated_end(self, c):
        self._answer_each(c, LENGTH_100_BLOCK, b"t" * 10, True)

    def _mode_long_end(self, c):
        self._answer_each(c, LENGTH_10_BLOCK, b"t" * 100, True)

    def _mode_bad_settings(self, c):
        self._settings(c, ((S_ENABLE_PUSH, 2),))
        for _ in self._frames(c):
            pass
