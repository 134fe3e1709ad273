"""report/sweep.py: the stored loadgen sweep gives its stored
table, and a sweep recorded before loadgen named the quota cpu_quota_pct
(it wrote quota_pct) reads the same."""
import copy
import json
import os
import unittest

from report import sweep
from report.files import DataError, read_json

HERE = os.path.dirname(os.path.abspath(__file__))

FIXTURE = os.path.join(HERE, "..", "fixtures", "report", "sweep")


def fixture():
    return read_json(os.path.join(FIXTURE, "sweep.json"))


def old_names(j):
    """J as loadgen wrote it before: quota_pct for cpu_quota_pct."""
    text = json.dumps(j).replace('"cpu_quota_pct"', '"quota_pct"')
    return json.loads(text)


def as_quota_sweep(j):
    """J as a quota sweep: each step's quota its position, in percent."""
    q = copy.deepcopy(j)
    q["mode"] = "quota"
    for n, s in enumerate(q["steps"] + q["noise"]):
        s["cpu_quota_pct"] = 10.0 + n % len(q["steps"])
    q["capacity"] = {"target_rate": 1000.0, "cpu_quota_pct": 12.0, "achieved_rate": 999.0}
    q["knee"] = {"target_rate": 1000.0, "cpu_quota_pct": 11.0, "why": "loss"}
    return q


class SweepTest(unittest.TestCase):
    def test_the_stored_sweep_gives_the_stored_table(self):
        with open(os.path.join(FIXTURE, "table.txt"), encoding="utf-8") as f:
            want = f.read()
        self.assertEqual(sweep.table(sweep.check(fixture(), "sweep.json")), want)

    def test_a_sweep_with_the_old_name_reads_the_same(self):
        for j in (fixture(), as_quota_sweep(fixture())):
            new = sweep.check(copy.deepcopy(j), "new.json")
            old = sweep.check(old_names(j), "old.json")
            self.assertEqual(old, new)
            self.assertEqual(sweep.points(old), sweep.points(new))
            self.assertEqual(sweep.table(old), sweep.table(new))
        q = sweep.check(old_names(as_quota_sweep(fixture())), "old.json")
        self.assertEqual([p["x"] for p in sweep.points(q)][:2], [10.0, 11.0])
        self.assertEqual(sweep.capacity_text(q), "quota 12%")

    def test_a_quota_that_is_no_number_is_refused_by_its_name(self):
        for name in ("cpu_quota_pct", "quota_pct"):
            q = as_quota_sweep(fixture())
            q["steps"][1].pop("cpu_quota_pct")
            q["steps"][1][name] = "ten"
            with self.assertRaises(DataError) as e:
                sweep.check(q, "q.json")
            self.assertIn("q.json: step 1: cpu_quota_pct", str(e.exception))


if __name__ == "__main__":
    unittest.main()
