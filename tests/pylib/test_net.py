"""net.py's clients and servers against each other and small fakes, on
loopback; every socket has a timeout, every server stops with its test."""
import contextlib
import io
import os
import shutil
import socket
import ssl
import struct
import subprocess
import tempfile
import threading
import time
import unittest

from tests.pylib import net

T = 5   # seconds: the bound of any wait here


def reset(c):
    """Close C with a reset."""
    c.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    c.close()


class Server:
    """SERVE(listener, stop, idle) in a thread on a free port, stopped on exit."""

    def __init__(self, serve):
        self.lsock = net.listener(0)
        self.port = self.lsock.getsockname()[1]
        self.stop = threading.Event()
        self.thread = threading.Thread(target=serve, args=(self.lsock, self.stop, T), daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *_):
        self.stop.set()
        self.thread.join(T)
        self.lsock.close()


def handler(handle):
    """A SERVE for Server: HANDLE(conn) for each connection."""
    return lambda lsock, stop, idle: net._serve(lsock, handle, stop, idle)


def close_after(n):
    """A handler: read N bytes, then close with a FIN."""
    def handle(c):
        with c:
            c.recv(n)
    return handle


def silent(c):
    """A handler: hold the connection until the peer goes (or T)."""
    with c:
        try:
            while c.recv(100):
                pass
        except OSError:
            pass


class Tmp(unittest.TestCase):
    def setUp(self):
        d = tempfile.TemporaryDirectory()
        self.addCleanup(d.cleanup)
        self.dir = d.name

    def path(self, name):
        return os.path.join(self.dir, name)


class Servers(unittest.TestCase):
    def test_echo(self):
        with Server(net.echo_server) as s:
            net.send_expect(s.port, b"hello", timeout=T)
            net.send_expect(s.port, b"t" * 100000, half_close=True, timeout=T)

    def test_reset_after_the_first_read(self):
        with Server(net.reset_server) as s:
            net.expect_reset(s.port, b"hello", timeout=T)
            self.assertEqual(net.expect_close(s.port, b"x", timeout=T), "reset")

    def test_ipv6_loopback_is_a_yes_or_no(self):
        self.assertIn(net.ipv6_loopback(), (True, False))


class Clients(Tmp):
    def test_send_expect_names_what_came_back(self):
        def wrong(c):
            with c:
                c.recv(10)
                c.sendall(b"HELLO")
        with Server(handler(wrong)) as s:
            with self.assertRaisesRegex(net.Failed, "sent 5 bytes b'hello', got back 5: b'HELLO'"):
                net.send_expect(s.port, b"hello", timeout=T)

    def test_expect_close(self):
        with Server(handler(close_after(100))) as s:
            self.assertEqual(net.expect_close(s.port, b"GET /", timeout=T), "fin")
        with Server(net.echo_server) as s:
            with self.assertRaisesRegex(net.Failed, r"not closed within 0.3 s \(5 bytes read\)"):
                net.expect_close(s.port, b"GET /", timeout=0.3)

    def test_expect_reset_fails_on_a_fin_or_on_bytes(self):
        with Server(handler(close_after(100))) as s:
            with self.assertRaisesRegex(net.Failed, "closed with a FIN: no reset"):
                net.expect_reset(s.port, b"hello", timeout=T)
        with Server(net.echo_server) as s:
            with self.assertRaisesRegex(net.Failed, "got b'hello', not the end"):
                net.expect_reset(s.port, b"hello", timeout=T)

    def test_stall_reader_wants_a_reset_after_the_data(self):
        def flood(fin):
            def handle(c):
                c.recv(100)
                try:
                    c.sendall(b"x" * 300000)
                except socket.timeout:
                    pass
                c.close() if fin else reset(c)
            return handle
        with Server(handler(flood(fin=False))) as s:
            net.stall_reader(s.port, b"GET /big", pause=0.1, timeout=T)
        with Server(handler(flood(fin=True))) as s:
            with self.assertRaisesRegex(net.Failed, "closed with a FIN: looks like a clean end"):
                net.stall_reader(s.port, b"GET /big", pause=0.1, timeout=T)

    def test_hold_partial_tls(self):
        got = []

        def header(c):
            with c:
                got.append(c.recv(10))
        with Server(handler(header)) as s:
            net.hold_partial_tls(s.port, 3, self.path("ready"), timeout=T)
        self.assertTrue(os.path.exists(self.path("ready")))
        self.assertEqual(got, [net.TLS_RECORD_HEAD] * 3)
        with Server(handler(silent)) as s:
            with self.assertRaisesRegex(net.Failed, "handshake 1 of 2 not closed within 0.3 s"):
                net.hold_partial_tls(s.port, 2, self.path("ready2"), timeout=0.3)
        with Server(net.echo_server) as s:
            with self.assertRaisesRegex(net.Failed, r"handshake 1 of 2 got b'\\x16'"):
                net.hold_partial_tls(s.port, 2, self.path("ready3"), timeout=T)

    def test_http_clients(self):
        def answer(body):
            def handle(c):
                with c:
                    c.recv(100)
                    c.sendall(b"HTTP/1.0 200 OK\r\n\r\n" + body)
            return handle
        with Server(handler(answer(b"ok\n"))) as s:
            net.http_clients(s.port, 4, self.path("ready"), timeout=T)
        self.assertTrue(os.path.exists(self.path("ready")))
        with Server(handler(answer(b"no\n"))) as s:
            with self.assertRaisesRegex(net.Failed, "client 1 of 2 was answered b'HTTP/1.0 200 OK"):
                net.http_clients(s.port, 2, self.path("ready2"), timeout=T)


class UDP(Tmp):
    def udp(self):
        u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.addCleanup(u.close)
        u.bind((net.HOST, 0))
        u.settimeout(T)
        return u, u.getsockname()[1]

    def replier(self, prefix, until):
        """A UDP socket answering PREFIX + each datagram until UNTIL is set."""
        u, port = self.udp()
        u.settimeout(0.1)

        def run():
            while not until.is_set():
                try:
                    d, src = u.recvfrom(2048)
                except socket.timeout:
                    continue
                u.sendto(prefix + d, src)
        t = threading.Thread(target=run, daemon=True)
        t.start()
        self.addCleanup(t.join, T)
        self.addCleanup(until.set)
        return port

    def test_udp_waiter(self):
        net.udp_waiter(self.replier(b"up:", threading.Event()), 5, timeout=T)

    def test_udp_waiter_names_a_wrong_reply(self):
        with self.assertRaisesRegex(net.Failed, "the reply to A1 was b'down:A1a"):
            net.udp_waiter(self.replier(b"down:", threading.Event()), 2, timeout=T)

    def test_udp_waiter_without_a_reply(self):
        _, port = self.udp()
        with self.assertRaisesRegex(net.Failed, "no reply to A1 within 0.2 s"):
            net.udp_waiter(port, 1, timeout=0.2)

    def test_udp_send_from_new_sources(self):
        u, port = self.udp()
        net.udp_send(port, 4, b"request")
        got = [u.recvfrom(100) for _ in range(4)]
        self.assertEqual({d for d, _ in got}, {b"request"})
        self.assertEqual(len({src for _, src in got}), 4)

    def test_udp_send_in_bursts(self):
        u, port = self.udp()
        t0 = time.monotonic()
        net.udp_send(port, 5, b"x", burst=2, gap=0.1)
        self.assertGreaterEqual(time.monotonic() - t0, 0.2)
        self.assertEqual([u.recv(100) for _ in range(5)], [b"x"] * 5)

    def thread(self, target, *args):
        """TARGET(*ARGS) in a thread, joined at the end; what it raised in .error."""
        t = threading.Thread(target=self._run, args=(target, args), daemon=True)
        t.error = None
        t.start()
        self.addCleanup(t.join, T)
        return t

    @staticmethod
    def _run(target, args):
        try:
            target(*args)
        except Exception as e:      # the test looks at it
            threading.current_thread().error = e

    def wait_file(self, path):
        for _ in range(10 * T):
            if os.path.exists(path):
                return
            time.sleep(0.05)
        self.fail("%s was not made" % path)

    def test_udp_silent(self):
        srv = net.udp_bind(0)
        port = srv.getsockname()[1]
        t = self.thread(net.udp_silent, srv, self.path("ready"), 0.5)
        self.wait_file(self.path("ready"))
        c, _ = self.udp()
        c.settimeout(0.2)
        c.sendto(b"hello", (net.HOST, port))
        with self.assertRaises(socket.timeout):
            c.recv(100)
        t.join(T)
        self.assertFalse(t.is_alive())
        self.assertEqual(srv.fileno(), -1)      # closed

    def test_udp_junk_echo(self):
        srv = net.udp_bind(0)
        port = srv.getsockname()[1]
        t = self.thread(net.udp_junk_echo, srv, self.path("ready"), 0.3)
        self.wait_file(self.path("ready"))
        c, _ = self.udp()
        for d in (b"one", b"two"):
            c.sendto(d, (net.HOST, port))
            self.assertEqual([c.recv(100), c.recv(100)], [d, net.JUNK])
        t.join(T)
        self.assertFalse(t.is_alive())
        self.assertIsNone(t.error)

    def switching(self, old, new, switch):
        """A UDP socket answering OLD + each datagram until SWITCH() is
        true, NEW + it after; stopped with the test."""
        u, port = self.udp()
        u.settimeout(0.05)
        stop = threading.Event()

        def run():
            while not stop.is_set():
                try:
                    d, src = u.recvfrom(2048)
                except socket.timeout:
                    continue
                u.sendto((new if switch() else old) + d, src)
        t = threading.Thread(target=run, daemon=True)
        t.start()
        self.addCleanup(t.join, T)
        self.addCleanup(stop.set)
        return port

    def test_udp_retry_until_the_new_prefix(self):
        ready = self.path("ready")
        since = []

        def switch():
            if os.path.exists(ready) and not since:
                since.append(time.monotonic())
            return since and time.monotonic() - since[0] > 0.3
        port = self.switching(b"a:", b"b:", switch)
        retries = net.udp_retry(port, b"a:", b"b:", ready, every=0.1, tries=20, timeout=T)
        self.assertTrue(os.path.exists(ready))
        self.assertIn(retries, range(2, 6))

    def test_udp_retry_fails(self):
        port = self.switching(b"a:", b"b:", lambda: False)
        with self.assertRaisesRegex(net.Failed, r"never answered with b'b:' in 3 retries"):
            net.udp_retry(port, b"a:", b"b:", self.path("ready"), every=0.05, tries=3, timeout=T)
        with self.assertRaisesRegex(net.Failed, r"the first request was answered b'a:first', not b'x:first'"):
            net.udp_retry(port, b"x:", b"b:", self.path("ready2"), timeout=T)
        self.assertFalse(os.path.exists(self.path("ready2")))
        _, quiet = self.udp()
        with self.assertRaisesRegex(net.Failed, "no reply to the first request within 0.2 s"):
            net.udp_retry(quiet, b"a:", b"b:", self.path("ready3"), timeout=0.2)

    def test_udp_keep_across_the_go(self):
        ready, go, done = self.path("ready"), self.path("go"), self.path("done")
        port = self.switching(b"a:", b"b:", lambda: os.path.exists(go))
        t = self.thread(net.udp_keep, port, b"a:", b"b:", ready, go, done, T)
        self.wait_file(ready)
        time.sleep(0.2)
        self.assertFalse(os.path.exists(done))
        net.touch(go)
        t.join(T)
        self.assertIsNone(t.error)
        self.assertTrue(os.path.exists(done))

    def test_udp_keep_names_a_reply_of_the_old_upstream(self):
        port = self.switching(b"a:", b"b:", lambda: False)
        with self.assertRaisesRegex(net.Failed, r"k1 was answered b'a:k1', not b'b:k1'"):
            net.udp_keep(port, b"a:", b"b:", self.path("ready"), self.path("go"), self.path("done"), 0.2)
        self.assertFalse(os.path.exists(self.path("done")))

    def test_udp_probe(self):
        self.assertEqual(net.udp_probe(self.replier(b"", threading.Event()), 16, wait=T), 16)
        self.assertEqual(net.udp_probe(self.replier(b"x", threading.Event()), 4, wait=0.3), 0)
        _, quiet = self.udp()
        self.assertEqual(net.udp_probe(quiet, 4, wait=0.3), 0)

    def test_storm_holds_until_told(self):
        u, pu = self.udp()
        with Server(handler(silent)) as s:
            ready, until = self.path("ready"), self.path("until")
            t = threading.Thread(target=net.storm,
                                 args=([(3, s.port)], [(2, pu)], ready, until, T), daemon=True)
            t0 = time.monotonic()
            t.start()
            for _ in range(10 * T):
                if os.path.exists(ready):
                    break
                time.sleep(0.1)
            self.assertTrue(os.path.exists(ready))
            self.assertEqual([u.recv(100) for _ in range(2)], [b"storm"] * 2)
            time.sleep(0.3)
            self.assertTrue(t.is_alive())
            net.touch(until)
            t.join(T)
            self.assertFalse(t.is_alive())
            self.assertLess(time.monotonic() - t0, T)


class PerSource:
    """A fake of relay's first-byte deadline and connections per source: the
    connection beyond LIMIT from an address is reset, one silent for
    DEADLINE s closed, the others echoed."""

    def __init__(self, limit, deadline):
        self.limit, self.deadline = limit, deadline
        self.active = {}
        self.lock = threading.Lock()

    def handle(self, c):
        src = c.getpeername()[0]
        with self.lock:
            n = self.active.get(src, 0)
            if n >= self.limit:
                reset(c)
                return
            self.active[src] = n + 1
        try:
            with c:
                c.settimeout(self.deadline)
                try:
                    d = c.recv(65536)
                except socket.timeout:
                    return
                c.settimeout(T)
                while d:
                    c.sendall(d)
                    d = c.recv(65536)
        except OSError:
            pass
        finally:
            with self.lock:
                self.active[src] -= 1


class Silence(unittest.TestCase):
    def test_silent_clients(self):
        with Server(handler(PerSource(3, 0.3).handle)) as s:
            took = net.silent_clients(s.port, 3, 0.3)
        self.assertGreaterEqual(took, 0.25)

    def test_silent_clients_without_a_limit(self):
        with Server(handler(PerSource(10, 0.3).handle)) as s:
            with self.assertRaisesRegex(net.Failed, "connection 4 from one address was served"):
                net.silent_clients(s.port, 3, 0.3)

    def test_silent_clients_closed_too_soon(self):
        with Server(handler(PerSource(3, 0.1).handle)) as s:
            with self.assertRaisesRegex(net.Failed, "before the deadline"):
                net.silent_clients(s.port, 3, 1)

    def test_source_limit_one(self):
        with Server(handler(PerSource(1, T).handle)) as s:
            net.source_limit_one(s.port, 0.1)
        with Server(handler(PerSource(2, T).handle)) as s:
            with self.assertRaisesRegex(net.Failed, "a second connection was served"):
                net.source_limit_one(s.port, 0.1)


@unittest.skipUnless(shutil.which("openssl"), "no openssl")
class TLS(Tmp):
    def test_one_connection_across_the_go(self):
        certs = self.path("certs")
        fixture = os.path.join(os.path.dirname(__file__), "../fixtures/tls/make-certs.sh")
        subprocess.run([fixture, certs], check=True, timeout=60, capture_output=True)
        ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        ctx.load_cert_chain(os.path.join(certs, "server.pem"), os.path.join(certs, "server.key"))
        requests = []

        def serve(c):
            with ctx.wrap_socket(c, server_side=True) as t:
                while d := t.recv(4096):
                    requests.append(d)
                    t.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nok\n")
        ready, go, done = self.path("ready"), self.path("go"), self.path("done")
        with Server(handler(serve)) as s:
            t = threading.Thread(target=net.tls_keep,
                                 args=(s.port, os.path.join(certs, "ca.pem"), ready, go, done, T))
            t.start()
            for _ in range(10 * T):
                if os.path.exists(ready):
                    break
                time.sleep(0.1)
            self.assertEqual(len(requests), 1)
            self.assertFalse(os.path.exists(done))
            net.touch(go)
            t.join(T)
        self.assertTrue(os.path.exists(done))
        self.assertEqual(len(requests), 2)


class Main(unittest.TestCase):
    def test_a_failed_check_exits_1_naming_it(self):
        with Server(handler(close_after(100))) as s:
            err = io.StringIO()
            with contextlib.redirect_stderr(err):
                rc = net.main(["expect-reset", str(s.port), "hello", "--timeout", str(T)])
        self.assertEqual((rc, err.getvalue()), (1, "net.py expect-reset: closed with a FIN: no reset\n"))

    def test_bad_arguments(self):
        with contextlib.redirect_stderr(io.StringIO()) as err:
            with self.assertRaises(SystemExit) as e:
                net.main(["storm", "r", "u", "1", "--tcp", "many"])
        self.assertEqual(e.exception.code, 2)
        self.assertIn("'many' is not N:PORT", err.getvalue())


if __name__ == "__main__":
    unittest.main()
