"""lab/unixwake/table.py on what the guests left
(tests/fixtures/unixwake/: a 6.12 stock guest's result, the consoles of a
6.1-rt and a 6.12 stock guest that hung without the quota lift), and on
broken input."""
import io
import json
import os
import shutil
import tempfile
import unittest
from contextlib import redirect_stderr, redirect_stdout

from lab.labkit import TOP
from lab.unixwake import table

FIXTURES = os.path.join(TOP, "tests", "fixtures", "unixwake")


def fixture(name):
    with open(os.path.join(FIXTURES, name), encoding="utf-8") as f:
        return f.read()


class BlockedTest(unittest.TestCase):
    def test_the_reader_queued_behind_the_writer(self):
        # 6.1-rt: the RT pinger's send, a reader of ep->lock behind the
        # waiter's pending writer; frames the unwinder is sure of.
        self.assertEqual(table.blocked(fixture("console-6.1-stock.txt")),
                         "__schedule < schedule_rtlock < rtlock_slowlock_locked < rt_read_lock < "
                         "ep_poll_callback < __wake_up_common < __wake_up_common_lock < "
                         "sock_def_readable < unix_dgram_sendmsg < sock_sendmsg_nosec < "
                         "__sys_sendto < __x64_sys_sendto")

    def test_the_timer_softirq_behind_the_writer(self):
        # 6.12: ksoftirqd/1 running the waiter's timerfd, every frame "?".
        got = table.blocked(fixture("console-6.12-stock.txt"))
        self.assertTrue(got.startswith("__schedule < schedule_rtlock < rtlock_slowlock_locked"), got)
        self.assertIn("rt_read_lock < ep_poll_callback < __wake_up_common < timerfd_alarmproc", got)
        self.assertIn("hrtimer_run_softirq < handle_softirqs.constprop.0", got)

    def test_no_report_no_frames(self):
        self.assertIsNone(table.blocked("Linux version 6.1\nboot: ok\n"))
        self.assertIsNone(table.blocked(fixture("console-6.1-stock.txt").split("Call Trace:")[0]))


class RowsTest(unittest.TestCase):
    def setUp(self):
        self.d = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, self.d)

    def guest(self, name, result=None, outcome=None, console=None):
        g = os.path.join(self.d, name)
        os.makedirs(os.path.join(g, "results"))
        if result is not None:
            with open(os.path.join(g, "results", "unixwake.json"), "w", encoding="utf-8") as f:
                f.write(result)
        for fname, text in (("outcome", outcome), ("console.log", console)):
            if text is not None:
                with open(os.path.join(g, fname), "w", encoding="utf-8") as f:
                    f.write(text)

    def main(self, *names):
        out, err = io.StringIO(), io.StringIO()
        with redirect_stdout(out), redirect_stderr(err):
            rc = table.main([self.d, *names])
        return rc, out.getvalue(), err.getvalue()

    def test_a_result_a_hang_and_the_json(self):
        self.guest("6.12-stock", fixture("unixwake-6.12-stock.json"))
        self.guest("6.1-stock", outcome="hung\n", console=fixture("console-6.1-stock.txt"))
        rc, out, _ = self.main("6.12-stock", "6.1-stock")
        self.assertEqual(rc, 0)
        self.assertIn("| 6.12-stock (6.12.117-relay-stock) | stalled | 2002 | 106 / 116 | 234 (58) | "
                      "562 of 996 |", out)
        self.assertIn("| 6.1-stock | hung; blocked in __schedule < schedule_rtlock", out)
        with open(os.path.join(self.d, "unixwake.json"), encoding="utf-8") as f:
            rows = json.load(f)["kernels"]
        self.assertEqual([(r["name"], r["outcome"]) for r in rows],
                         [("6.12-stock", "stalled"), ("6.1-stock", "hung")])
        self.assertIn("unix_dgram_sendmsg", rows[1]["blocked"])

    def test_quiet_and_late_runs(self):
        r = json.loads(fixture("unixwake-6.12-stock.json"))
        self.guest("quiet", json.dumps(dict(r, stalls=0, late=0)))
        self.guest("late", json.dumps(dict(r, stalls=0, late=3)))
        rc, out, _ = self.main("quiet", "late")
        self.assertEqual(rc, 0)
        self.assertIn("| ok |", out)
        self.assertIn("| late |", out)

    def test_a_guest_with_no_result_that_did_not_hang(self):
        self.guest("broken", "{not json")
        self.guest("failed", outcome="failed\n")
        self.guest("wrong", "[1, 2]")
        rc, out, err = self.main("broken", "failed", "wrong", "missing")
        self.assertEqual(rc, 1)
        self.assertIn("| broken | bad result |", out)
        self.assertIn("| failed | failed |", out)
        self.assertIn("| missing | not run |", out)
        for name in ("broken", "failed", "wrong", "missing"):
            self.assertIn(f"table: {name}: no result", err)

    def test_usage(self):
        err = io.StringIO()
        with redirect_stderr(err):
            self.assertEqual(table.main([self.d]), 2)
        self.assertIn("lab.unixwake.table DIR NAME", err.getvalue())


if __name__ == "__main__":
    unittest.main()
