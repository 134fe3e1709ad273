"""tests/vm/vm_clock.sh's checks (vm_clock.py) on made-up guest directories."""
import contextlib
import io
import json
import os
import shutil
import tempfile
import unittest

from tests.pylib import vm_clock

BOOT = {"clock": "virtual", "tsc_khz": 1000000}
RATE = {"tsc_per_ns": 1.0002, "monotonic_ns": 500000000}
WAKE = {"count": 3000, "p50_ns": 30000, "p99_9_ns": 60000, "max_ns": 80000}
TSC = "[    0.000000] tsc: Detected 1000.000 MHz processor\n"


def guest(d, boot=BOOT, rate=RATE, wake=WAKE, tsc=TSC):
    os.makedirs(os.path.join(d, "results"))
    with open(os.path.join(d, "boot.json"), "w", encoding="utf-8") as f:
        json.dump(boot, f)
    with open(os.path.join(d, "results", "clock.json"), "w", encoding="utf-8") as f:
        json.dump({"rate": rate, "wake": wake}, f)
    with open(os.path.join(d, "results", "tsc.txt"), "w", encoding="utf-8") as f:
        f.write(tsc)
    return d


class VmClockTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.quiet = guest(os.path.join(self.tmp.name, "quiet"))

    def tearDown(self):
        self.tmp.cleanup()

    def check(self, **busy):
        b = os.path.join(self.tmp.name, "busy")
        shutil.rmtree(b, ignore_errors=True)
        guest(b, **busy)
        with contextlib.redirect_stdout(io.StringIO()) as out:
            vm_clock.check(self.quiet, b, 100000, 1000000, 40, 55)
        return out.getvalue()

    def fails(self, words, **busy):
        with self.assertRaises(AssertionError) as e:
            self.check(**busy)
        self.assertIn(words, str(e.exception))

    def test_holds(self):
        out = self.check()
        self.assertIn("busy: TSC 1.000200 ticks/ns over 500 ms; wake-up late p50 30.0 us", out)
        self.assertIn("host time: quiet 40 s, busy 55 s; the wake-up figures are identical", out)
        self.assertIn("the wake-up figures are within the bound", self.check(wake=dict(WAKE, max_ns=179000)))

    def test_clocks_disagree(self):
        self.fails("busy: TSC and CLOCK_MONOTONIC disagree", rate=dict(RATE, tsc_per_ns=1.0011))

    def test_tsc_not_1000_mhz(self):
        self.fails("busy: the guest's TSC is not 1000 MHz", tsc="tsc: Detected 2400.000 MHz processor\n")

    def test_host_clock_or_rate(self):
        self.fails("'clock': 'host'", boot=dict(BOOT, clock="host"))
        self.fails("'tsc_khz': 2400000", boot=dict(BOOT, tsc_khz=2400000))

    def test_late_and_moved(self):
        self.fails("busy: a wake-up 1000000 ns late (limit 1000000)", wake=dict(WAKE, max_ns=1000000))
        self.fails("p99_9_ns: quiet 60000 ns, busy 160001 ns: differ by more than 100000",
                   wake=dict(WAKE, p99_9_ns=160001))
        self.fails("'count': 2999", wake=dict(WAKE, count=2999))


if __name__ == "__main__":
    unittest.main()
