"""admin_client's checks against small fakes of an admin endpoint on
loopback; every wait here is bounded, every server stops with its test."""
import contextlib
import io
import os
import socket
import struct
import threading
import time
import unittest

from tests.pylib import admin_client

T = 5   # seconds: the bound of any wait here


class Server:
    """HANDLE(conn) for each connection to a free port, in a thread each,
    with at most CAP connections accepted at once (the rest wait in the
    backlog); stopped on exit. .active counts the connections accepted."""

    def __init__(self, handle, cap=1000):
        self.lsock = socket.create_server((admin_client.HOST, 0), backlog=128)
        self.port = self.lsock.getsockname()[1]
        self.handle, self.cap = handle, cap
        self.active = 0
        self.lock = threading.Lock()
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.serve, daemon=True)

    def serve(self):
        self.lsock.settimeout(0.05)
        while not self.stop.is_set():
            if self.active >= self.cap:
                time.sleep(0.01)
                continue
            try:
                c, _ = self.lsock.accept()
            except socket.timeout:
                continue
            with self.lock:
                self.active += 1
            threading.Thread(target=self.run, args=(c,), daemon=True).start()

    def run(self, c):
        try:
            with c:
                c.settimeout(T)
                self.handle(c)
        except OSError:
            pass
        finally:
            with self.lock:
                self.active -= 1

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *_):
        self.stop.set()
        self.thread.join(T)
        self.lsock.close()


def read_up_to(n, then):
    """A handler: read N bytes, then THEN(conn)."""
    def handle(c):
        got = 0
        while got < n and (d := c.recv(min(65536, n - got))):
            got += len(d)
        then(c)
    return handle


def reset(c):
    c.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))


def read_all(c):
    while c.recv(65536):
        pass


class LongHeader(unittest.TestCase):
    def test_cut_off(self):
        # closed, reset or refused after 8 KiB: how much was sent by then
        # depends on the socket buffers, but not more than the 2 MiB
        for then in (lambda c: None, reset, lambda c: c.sendall(b"HTTP/1.1 431 Too Large\r\n\r\n")):
            with Server(read_up_to(8192, then)) as s:
                self.assertIn(admin_client.long_header(s.port, seconds=T, wait=T), range(1, (2 << 20) + 1010))

    def test_read_to_the_end(self):
        with Server(read_all) as s:
            with self.assertRaisesRegex(admin_client.Failed, "a 200791-byte header was still being read"):
                admin_client.long_header(s.port, size=200000, seconds=T, wait=0.2)

    def test_answered_but_not_refused(self):
        with Server(read_up_to(8192, lambda c: c.sendall(b"HTTP/1.1 200 OK\r\n\r\n") or read_all(c))) as s:
            with self.assertRaisesRegex(admin_client.Failed, "header was still being read"):
                admin_client.long_header(s.port, size=100000, seconds=T, wait=0.2)


class Silent(unittest.TestCase):
    def test_closed(self):
        for end in (lambda c: None, reset):
            with Server(lambda c: time.sleep(0.2) or end(c)) as s:
                took = admin_client.silent(s.port, within=T, timeout=T)
            self.assertGreaterEqual(took, 0.15)

    def test_closed_too_late(self):
        with Server(lambda c: time.sleep(0.5)) as s:
            with self.assertRaisesRegex(admin_client.Failed, r"got b'' after 0.\d s \(limit 0.2 s\)"):
                admin_client.silent(s.port, within=0.2, timeout=T)

    def test_never_closed_or_talking(self):
        with Server(read_all) as s:
            with self.assertRaisesRegex(admin_client.Failed, "still open after 0.3 s"):
                admin_client.silent(s.port, within=0.2, timeout=0.3)
        with Server(lambda c: c.sendall(b"hello")) as s:
            with self.assertRaisesRegex(admin_client.Failed, "a silent connection got b'hello'"):
                admin_client.silent(s.port, within=T, timeout=T)


def healthz(idle):
    """A handler: answer GET /healthz, close a connection silent IDLE s."""
    def handle(c):
        c.settimeout(idle)
        try:
            d = c.recv(100)
        except socket.timeout:
            return
        if d.startswith(b"GET /healthz"):
            c.sendall(b"HTTP/1.0 200 OK\r\n\r\nok\n")
    return handle


class Settled(unittest.TestCase):
    def test_waits_for_a_count_still_rising(self):
        # Four reads SETTLE/4 apart within 9 x SETTLE: 0.01 s left a host
        # busy with other work too little time for them (12 came back).
        reads = iter([3, 7, 12, 15, 15, 99])
        self.assertEqual(admin_client.settled(lambda: next(reads), 0.2), 15)

    def test_bounded(self):
        n = iter(range(10 ** 6))
        t0 = time.monotonic()
        admin_client.settled(lambda: next(n), 0.02)
        self.assertLess(time.monotonic() - t0, 2)


class Cap(unittest.TestCase):
    def test_capped(self):
        with Server(healthz(0.3), cap=16) as s:
            held, took = admin_client.cap(s.port, lambda: s.active, settle=0.2, timeout=T)
        self.assertEqual(held, 16)
        self.assertGreater(took, 0.05)

    def test_not_capped(self):
        with Server(healthz(T)) as s:
            with self.assertRaisesRegex(admin_client.Failed, "40 idle admin connections took 40 descriptors"):
                admin_client.cap(s.port, lambda: s.active, settle=0.3, timeout=T)

    def test_not_answered(self):
        with Server(healthz(0.2), cap=16) as s:
            with self.assertRaisesRegex(admin_client.Failed, "was not answered within 0.1 s"):
                admin_client.cap(s.port, lambda: s.active, settle=0.05, timeout=0.1)
        with Server(lambda c: c.recv(100) and c.sendall(b"HTTP/1.0 503 Busy\r\n\r\n"), cap=100) as s:
            with self.assertRaisesRegex(admin_client.Failed, "was answered b'HTTP/1.0 503 Busy"):
                admin_client.cap(s.port, lambda: 0, settle=0.05, timeout=T)


class Main(unittest.TestCase):
    def test_a_failed_check_exits_1_naming_it(self):
        with Server(lambda c: c.sendall(b"hello")) as s:
            with contextlib.redirect_stderr(io.StringIO()) as err:
                rc = admin_client.main(["silent", str(s.port)])
        self.assertEqual(rc, 1)
        self.assertRegex(err.getvalue(), r"^admin_client.py silent: a silent connection got b'hello' "
                         r"after \d+\.\d s \(limit 11 s\)\n$")

    def test_passed_says_so(self):
        with Server(lambda c: None) as s:
            with contextlib.redirect_stdout(io.StringIO()) as out:
                rc = admin_client.main(["silent", str(s.port)])
        self.assertEqual(rc, 0)
        self.assertRegex(out.getvalue(), r"^silent connection closed after \d+\.\d s\n$")

    def test_proc_fds(self):
        n = admin_client.proc_fds(os.getpid())()
        with socket.socket():
            self.assertEqual(admin_client.proc_fds(os.getpid())(), n + 1)


if __name__ == "__main__":
    unittest.main()
