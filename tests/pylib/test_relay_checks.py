"""relay_checks on made-up heartbeat files and time series."""
import contextlib
import io
import os
import struct
import tempfile
import unittest

from tests.pylib import relay_checks

HEADER = """# relay: per-100 ms window; count/p50/p99/max are timer tick lateness, rx_* the datagram \
latency (us)
t_s,count,p50_us,p99_us,max_us,rx_count,rx_p50_us,rx_p99_us,rx_max_us
"""


def hb_bytes(seq=5, mono=1000, ticks=4, packets=100, magic=b"RELAYHB1", version=1, nloops=1):
    head = struct.pack("<8sIIQQ", magic, version, nloops, 1234, 10).ljust(64, b"\0")
    return head + struct.pack("<QQQQii", seq, mono, ticks, packets, 0, 1235).ljust(64, b"\0")


def series(rows):
    """A time series of ROWS (t_s, tick max_us, rx_count)."""
    return HEADER + "".join("%.3f,10,5,8,%s,%d,20,30,40\n" % (t, mx, rx) for t, mx, rx in rows)


STALL = [(0.1 * (i + 1), 1300000 if i == 5 else 60, 10) for i in range(10)]


class Tmp(unittest.TestCase):
    def setUp(self):
        d = tempfile.TemporaryDirectory()
        self.addCleanup(d.cleanup)
        self.path = os.path.join(d.name, "f")

    def write(self, data):
        with open(self.path, "wb" if isinstance(data, bytes) else "w") as f:
            f.write(data)
        return self.path


class Heartbeat(Tmp):
    def check(self, after, first=None, now=1000 + 50_000_000):
        """heartbeat() on FIRST, rewritten to AFTER during its pause."""
        self.write(first or hb_bytes())
        relay_checks.heartbeat(self.path, 100, sleep=lambda _: self.write(after), now_ns=lambda: now)

    def test_advancing(self):
        self.check(hb_bytes(seq=9, mono=2000, ticks=8, packets=100), now=2000 + 99_999_999)

    def test_stuck(self):
        with self.assertRaisesRegex(relay_checks.Failed, "^seq, mono_ns did not advance in 0.2 s"):
            self.check(hb_bytes(seq=5, mono=1000, ticks=8))

    def test_too_few_packets(self):
        with self.assertRaisesRegex(relay_checks.Failed, "^99 datagrams counted, not 100 or more"):
            self.check(hb_bytes(seq=9, mono=2000, ticks=8, packets=99))

    def test_stale(self):
        with self.assertRaisesRegex(relay_checks.Failed, r"^the last update is 100.0 ms old"):
            self.check(hb_bytes(seq=9, mono=2000, ticks=8), now=2000 + 100_000_000)

    def test_not_a_heartbeat(self):
        with self.assertRaisesRegex(relay_checks.Failed, "not relay's heartbeat of one loop"):
            self.check(hb_bytes(seq=9, mono=2000, ticks=8), first=hb_bytes(nloops=2))
        with self.assertRaisesRegex(relay_checks.Failed, "has 70 bytes, not a header and a loop"):
            self.check(hb_bytes(), first=hb_bytes()[:70])


class Timeseries(Tmp):
    def test_a_stall_in_the_windows(self):
        relay_checks.timeseries(self.write(series(STALL)), 1000000, 100)

    def test_idle_windows_count_nothing(self):
        rows = series(STALL) + "1.100,0,,,,0,,,\n"
        relay_checks.timeseries(self.write(rows), 1000000, 100)

    def test_failures(self):
        for rows, words in (
                (STALL[:9], "^9 windows, not 10 or more"),
                (STALL[:5] + [STALL[6], STALL[5]] + STALL[7:], "the windows are out of order"),
                (STALL[:5] + STALL[6:] + [(1.2, 0, 0)], r"windows \[0.1, 0.2\] s apart, not 0.1"),
                ([(t, 999999 if m > 1000 else m, rx) for t, m, rx in STALL],
                 "the largest tick lateness is 999999 us"),
                (STALL[:9] + [(1.0, 60, 11)], "the windows count 101 datagrams, not 100")):
            with self.subTest(words):
                with self.assertRaisesRegex(relay_checks.Failed, words):
                    relay_checks.timeseries(self.write(series(rows)), 1000000, 100)

    def test_another_header(self):
        with self.assertRaisesRegex(relay_checks.Failed, "the header is"):
            swapped = series(STALL).replace("p99_us,max_us", "max_us,p99_us")
            relay_checks.timeseries(self.write(swapped), 1, 100)


class Main(Tmp):
    def test_exits_1_naming_the_file(self):
        self.write(series(STALL[:3]))
        with contextlib.redirect_stderr(io.StringIO()) as err:
            rc = relay_checks.main(["timeseries", self.path, "1000000", "100"])
        self.assertEqual((rc, err.getvalue()),
                         (1, "relay_checks.py timeseries: %s: 3 windows, not 10 or more\n" % self.path))
        with contextlib.redirect_stderr(io.StringIO()) as err:
            rc = relay_checks.main(["heartbeat", self.path + ".missing", "100"])
        self.assertEqual(rc, 1)
        self.assertIn("No such file", err.getvalue())


if __name__ == "__main__":
    unittest.main()
