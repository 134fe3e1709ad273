"""slow_dns's answers to made-up queries, and its server on loopback."""
import io
import socket
import struct
import threading
import time
import unittest

from tests.pylib import slow_dns

T = 5   # seconds: the bound of any wait here


def query(name, qtype, qid=0x1234):
    """A DNS query for NAME of type QTYPE, recursion desired."""
    labels = b"".join(bytes([len(p)]) + p.encode() for p in name.split("."))
    return struct.pack("!HHHHHH", qid, 0x0100, 1, 0, 0, 0) + labels + b"\0" + struct.pack("!HH", qtype, 1)


QUESTION_A = query("upstream.relay.test", 1)[12:]


class Answer(unittest.TestCase):
    def test_an_a_query(self):
        resp, qtype = slow_dns.answer(query("upstream.relay.test", 1))
        self.assertEqual(qtype, 1)
        self.assertEqual(struct.unpack("!HHHHHH", resp[:12]), (0x1234, 0x8180, 1, 1, 0, 0))
        self.assertEqual(resp[12:12 + len(QUESTION_A)], QUESTION_A)
        an = resp[12 + len(QUESTION_A):]
        self.assertEqual(struct.unpack("!HHHIH", an[:12]), (0xC00C, 1, 1, 60, 4))
        self.assertEqual(socket.inet_ntoa(an[12:]), "127.0.0.1")

    def test_another_type_has_no_record(self):
        q = query("upstream.relay.test", 28, qid=7)      # AAAA
        resp, qtype = slow_dns.answer(q)
        self.assertEqual(qtype, 28)
        self.assertEqual(resp, struct.pack("!HHHHHH", 7, 0x8180, 1, 0, 0, 0) + q[12:])


class Serve(unittest.TestCase):
    def test_answers_late_and_logs(self):
        srv = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.addCleanup(srv.close)
        srv.bind((slow_dns.HOST, 0))
        log = io.StringIO()
        t = threading.Thread(target=slow_dns.serve, args=(srv, 0.3, log, 1.5), daemon=True)
        t.start()
        self.addCleanup(t.join, T)
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as c:
            c.settimeout(T)
            c.bind((slow_dns.HOST, 0))
            me = c.getsockname()
            t0 = time.monotonic()
            c.sendto(query("upstream.relay.test", 1), srv.getsockname())
            c.sendto(query("upstream.relay.test", 28, qid=2), srv.getsockname())
            got = sorted(struct.unpack("!H", c.recv(512)[:2])[0] for _ in range(2))
            took = time.monotonic() - t0
        self.assertEqual(got, [2, 0x1234])
        self.assertGreaterEqual(took, 0.3)
        self.assertLess(took, 0.3 + 1)          # both waited at once
        t.join(T)
        self.assertFalse(t.is_alive())
        lines = [line.split(" ", 1)[1] for line in log.getvalue().splitlines()]
        # the two answers in either order: each waited in a thread of its own
        self.assertEqual(lines[:2], ["query from %s" % (me,)] * 2)
        self.assertEqual(sorted(lines[2:]), ["answered type 1", "answered type 28"])


if __name__ == "__main__":
    unittest.main()
