"""kernel/selftests/compare.py: the follow-up patch against the fix alone,
on made-up cost.json kernels."""
import json
import os
import subprocess
import tempfile
import unittest

from kernel.selftests import compare

HERE = os.path.dirname(os.path.abspath(__file__))


def kernel(ops, stress):
    return {"perf_bench_epoll_wait": {"median_ops_per_sec": ops},
            "epoll_stress": {"medians": [{"threads": t, "median_events_per_ms": v, "rounds": 4}
                                         for t, v in stress.items()]}}


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

    def test_writes_compare_json(self):
        with tempfile.TemporaryDirectory() as d:
            paths = [os.path.join(d, n) for n in ("base.json", "followup.json", "compare.json")]
            for path, kernels in zip(paths, ({"stock": STOCK, "patched": FIX}, {"patched": FOLLOWUP})):
                with open(path, "w", encoding="utf-8") as f:
                    json.dump({"kernels": kernels}, f)
            py = os.path.join(HERE, "..", "..", "mk", "py")
            out = subprocess.run([py, "kernel.selftests.compare"] + paths, check=True, capture_output=True,
                                 text=True).stdout
            with open(paths[2], encoding="utf-8") as f:
                got = json.load(f)
        self.assertEqual(got["fix"]["epoll_stress_events_per_ms"], {"1": 510})
        self.assertEqual(out.splitlines()[1], "stock                    5025  1:500 4:1800")


if __name__ == "__main__":
    unittest.main()
