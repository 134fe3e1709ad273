"""kernel/selftests/compare.py: the follow-up patch against the fix alone,
on made-up cost.json kernels."""
import json
import os
import subprocess
import tempfile
import unittest

from kernel.selftests import compare
from report import formats

HERE = os.path.dirname(os.path.abspath(__file__))


def kernel(ops, stress):
    """A cost.json kernel as summarize.py writes it (its reader's fields)."""
    return {"perf_bench_epoll_wait": {"command": "perf bench epoll wait -t 4 -r 5", "runs": [],
                                      "median_ops_per_sec": ops},
            "epoll_stress": {"command": "epoll-stress -t T -n 20000", "runs": [],
                             "medians": [{"threads": t, "median_events_per_ms": v, "rounds": 4}
                                         for t, v in stress.items()]},
            "boots": []}


STOCK, FIX, FOLLOWUP = kernel(5025, {1: 500, 4: 1800}), kernel(3935, {1: 510}), kernel(4100.5, {1: 499.6})


class CompareTest(unittest.TestCase):
    def test_rows_per_kernel(self):
        rows = compare.compare({"stock": STOCK, "patched": FIX}, FOLLOWUP)
        self.assertEqual(list(rows), ["stock", "fix", "fix+followup"])
        self.assertEqual(rows["stock"], {"perf_bench_epoll_wait_ops_per_sec": 5025,
                                         "epoll_stress_events_per_ms": {1: 500, 4: 1800}})
        self.assertEqual(compare.table(rows)[3], "fix+followup           4100.5  1:500")

    def test_a_kernel_missing_is_left_out(self):
        rows = compare.compare({}, FOLLOWUP)
        self.assertEqual(list(rows), ["fix+followup"])
        no_wait = dict(FIX, perf_bench_epoll_wait={})
        fix = compare.compare({"patched": no_wait}, FOLLOWUP)["fix"]
        self.assertIsNone(fix["perf_bench_epoll_wait_ops_per_sec"])

    def run_compare(self, d, base, followup):
        paths = [os.path.join(d, n) for n in ("cost.json", "followup-cost.json", "compare.json")]
        for path, kernels in zip(paths, (base, followup)):
            with open(path, "w", encoding="utf-8") as f:
                json.dump({"kernels": kernels}, f)
        py = os.path.join(HERE, "..", "..", "mk", "py")
        return paths, subprocess.run([py, "kernel.selftests.compare"] + paths, capture_output=True, text=True)

    def test_writes_compare_json(self):
        with tempfile.TemporaryDirectory() as d:
            paths, p = self.run_compare(d, {"stock": STOCK, "patched": FIX}, {"patched": FOLLOWUP})
            self.assertEqual(p.returncode, 0, p.stderr)
            got = formats.read(formats.Compare, paths[2])
        self.assertEqual(got.fix.epoll_stress_events_per_ms, {"1": 510})
        self.assertEqual(got.fix_followup.perf_bench_epoll_wait_ops_per_sec, 4100.5)
        self.assertEqual(p.stdout.splitlines()[1], "stock                    5025  1:500 4:1800")

    def test_a_cost_json_that_does_not_fit_is_refused(self):
        bad = dict(FIX, epoll_stress={"medians": []})
        cases = (({"patched": bad}, {"patched": FOLLOWUP}, "kernels.patched.epoll_stress.command: missing"),
                 ({"stock": STOCK}, {"stock": STOCK}, "kernels.patched: missing"))
        for base, followup, what in cases:
            with self.subTest(what=what), tempfile.TemporaryDirectory() as d:
                paths, p = self.run_compare(d, base, followup)
                self.assertEqual(p.returncode, 65)
                self.assertIn(what, p.stderr)
                self.assertFalse(os.path.exists(paths[2]))


if __name__ == "__main__":
    unittest.main()
