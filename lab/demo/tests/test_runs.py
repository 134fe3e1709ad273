"""lab/demo/runs.py: the table of several demo runs, from their summaries."""
import contextlib
import io
import json
import os
import tempfile
import unittest

from lab.demo import runs

from . import SUMMARY, summary


class DemoRunsTest(unittest.TestCase):
    """lab/demo/runs.py: a run's row, from its summary."""
    SUMMARY = SUMMARY

    def test_row(self):
        r = runs.row(3, summary(self.SUMMARY), 451)
        self.assertEqual(r, "| 3 | 8e4772c9 | 7 (7) | 147 of 1360 | 215 / 216 ms | 0 | 0.095 / 0.6 ms | "
                            "2263x | 37375 of 37375 | - / - | - / - | 0/2 | 451 s | fixed |")
        s = json.loads(json.dumps(self.SUMMARY))
        idle = "5.009 ms on CPU 0 at 12.345 s: CPU 0 stayed idle ..."
        s["stock"]["guest_freezes"] = {"count": 1, "in_stalls": 0, "total_ms": 5.0, "max_ms": 5.009,
                                       "outside": [{}], "explained": [{"text": idle}]}
        s["patched"]["guest_freezes"] = {"count": 0, "in_stalls": 0, "total_ms": 0, "max_ms": 0.06,
                                         "outside": [], "explained": []}
        self.assertIn("| 5.01 ms / 0.06 ms | 1 (1) / 0 (0) |", runs.row(3, summary(s), 451))
        self.assertEqual(runs.freezes(3, summary(s)), [f"- run 3, stock, explained: {idle}"])

    def test_untraced_and_unreadable(self):
        s = json.loads(json.dumps(self.SUMMARY))
        del s["stock"]["why"], s["patched"]["why"]
        self.assertIn("| 7 (not traced) |", runs.row(1, summary(s), None))
        with tempfile.TemporaryDirectory() as d:
            self.assertEqual(runs.main([d]), 65)
        self.assertEqual(runs.main([]), 2)

    def test_one_trajectory_twice_is_said(self):
        with tempfile.TemporaryDirectory() as d:
            dirs = []
            for i, p99 in enumerate((95, 96, 95)):
                s = json.loads(json.dumps(self.SUMMARY))
                s["patched"]["rt_latency_us"]["p99_9"] = p99
                dirs.append(os.path.join(d, str(i)))
                os.makedirs(dirs[-1])
                with open(os.path.join(dirs[-1], "summary.json"), "w", encoding="utf-8") as f:
                    json.dump(s, f)
            err = io.StringIO()
            with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
                self.assertEqual(runs.main(dirs), 1)
            self.assertIn("runs 1 and 3 have the same figures", err.getvalue())
            with contextlib.redirect_stdout(io.StringIO()):
                self.assertEqual(runs.main(dirs[:2]), 0)


if __name__ == "__main__":
    unittest.main()
