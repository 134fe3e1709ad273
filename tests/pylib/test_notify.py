import io
import os
import socket
import tempfile
import unittest
from contextlib import redirect_stderr

from tests.pylib import notify


class Serve(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.path = os.path.join(self.dir.name, "notify")
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(self.path)
        self.client = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)

    def tearDown(self):
        self.sock.close()
        self.client.close()
        self.dir.cleanup()

    def test_logs_each_message_until_stopping(self):
        for m in (b"READY=1\nSTATUS=up", b"WATCHDOG=1", b"STOPPING=1", b"late"):
            self.client.sendto(m, self.path)
        log = io.StringIO()
        t = iter(range(100))
        self.assertTrue(notify.serve(self.sock, log, 50, clock=lambda: float(next(t))))
        # the clock is read once to start, then twice a message: to loop, to log
        self.assertEqual(log.getvalue(), "2.000 READY=1|STATUS=up\n4.000 WATCHDOG=1\n6.000 STOPPING=1\n")

    def test_ends_after_the_seconds_without_stopping(self):
        self.client.sendto(b"READY=1", self.path)
        log = io.StringIO()
        t = iter([0.0, 0.5, 0.6, 2.0])
        self.assertFalse(notify.serve(self.sock, log, 1, clock=lambda: next(t)))
        self.assertEqual(log.getvalue(), "0.600 READY=1\n")

    def test_a_status_that_mentions_stopping_does_not_end_it(self):
        self.client.sendto(b"STATUS=not STOPPING=1 yet", self.path)
        log = io.StringIO()
        t = iter([0.0, 0.1, 0.2, 5.0])
        self.assertFalse(notify.serve(self.sock, log, 1, clock=lambda: next(t)))


class Main(unittest.TestCase):
    def test_bad_arguments(self):
        err = io.StringIO()
        with redirect_stderr(err):
            self.assertEqual(notify.main(["a", "b"]), 64)
            self.assertEqual(notify.main(["a", "b", "soon"]), 64)
        self.assertIn("SECONDS: 'soon' is not a number", err.getvalue())


if __name__ == "__main__":
    unittest.main()
