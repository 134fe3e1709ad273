import io
import os
import socket
import tempfile
import unittest
from contextlib import redirect_stderr
from unittest import mock

from tests.pylib import ports


class FreePort(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.ledger = os.path.join(self.dir.name, "ports")

    def tearDown(self):
        self.dir.cleanup()

    def test_skips_ports_the_ledger_names_and_records_the_new_one(self):
        with open(self.ledger, "w") as f:
            f.write("udp/1000\nudp/1001\n")
        picks = iter([1000, 1001, 1000, 1002])
        self.assertEqual(ports.free_port("udp", self.ledger, lambda _: next(picks)), 1002)
        with open(self.ledger) as f:
            self.assertEqual(f.read().split(), ["udp/1000", "udp/1001", "udp/1002"])

    def test_a_udp_port_does_not_hide_the_same_tcp_port(self):
        with open(self.ledger, "w") as f:
            f.write("udp/2000\n")
        self.assertEqual(ports.free_port("tcp", self.ledger, lambda _: 2000), 2000)

    def test_gives_up_after_the_tries(self):
        with open(self.ledger, "w") as f:
            f.write("tcp/3000\n")
        with self.assertRaisesRegex(LookupError, "no new tcp port in 100 tries"):
            ports.free_port("tcp", self.ledger, lambda _: 3000)

    def test_a_real_port_is_bindable(self):
        p = ports.free_port("udp", self.ledger)
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.bind(("127.0.0.1", p))
        self.assertNotEqual(ports.free_port("udp", self.ledger), p)


class Hold(unittest.TestCase):
    def test_writes_the_bound_port_and_holds_it(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "held")
            seen = []

            def sleep(seconds):
                with open(path) as f:
                    port = int(f.read())
                with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
                    seen.append(s.connect_ex(("127.0.0.1", port)))
                self.assertEqual(seconds, 7)
            ports.hold("tcp", 0, path, 7, sleep)
            self.assertEqual(seen, [0])
            self.assertFalse(os.path.exists(path + ".tmp"))


class Unbound(unittest.TestCase):
    def test_a_bound_port_and_a_free_one(self):
        for kind, sock_kind in ports.KINDS.items():
            with socket.socket(socket.AF_INET, sock_kind) as s:
                s.bind(("127.0.0.1", 0))
                port = s.getsockname()[1]
                self.assertFalse(ports.unbound(kind, port))
                self.assertEqual(ports.main(["unbound", kind, str(port)]), 1)
            self.assertTrue(ports.unbound(kind, port))
            self.assertEqual(ports.main(["unbound", kind, str(port)]), 0)

    def test_a_reuseport_socket_holds_the_port(self):
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
            s.bind(("127.0.0.1", 0))
            self.assertFalse(ports.unbound("udp", s.getsockname()[1]))


class Main(unittest.TestCase):
    def run_main(self, *argv):
        err = io.StringIO()
        with redirect_stderr(err):
            return ports.main(list(argv)), err.getvalue()

    def test_bad_kind(self):
        self.assertEqual(self.run_main("free", "sctp", "/nonexistent"),
                         (64, "ports.py: unknown socket kind 'sctp' (udp or tcp)\n"))

    def test_bad_port(self):
        rc, err = self.run_main("hold", "udp", "70000", "/nonexistent", "1")
        self.assertEqual((rc, err), (64, "ports.py: PORT: 70000 is out of range\n"))
        rc, err = self.run_main("hold", "udp", "x", "/nonexistent", "1")
        self.assertEqual((rc, err), (64, "ports.py: PORT: 'x' is not a number\n"))

    def test_usage(self):
        rc, err = self.run_main("take", "udp")
        self.assertEqual(rc, 64)
        self.assertIn("usage: ports.py free", err)

    def test_exhausted(self):
        with mock.patch.object(ports, "free_port", side_effect=LookupError("no new udp port")):
            self.assertEqual(self.run_main("free", "udp", "/x"), (69, "ports.py: no new udp port\n"))


if __name__ == "__main__":
    unittest.main()
