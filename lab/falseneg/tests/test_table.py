"""lab/falseneg/table.py on the guests' own output
(tests/fixtures/falseneg/: a 6.1 PREEMPT_RT kernel with the spinlock fix
alone and a 6.12 one with the follow-up too), and on broken input."""
import json
import os
import shutil
import tempfile
import unittest

from lab.falseneg import table
from lab.labkit import TOP

FIXTURES = os.path.join(TOP, "tests", "fixtures", "falseneg")


class BoundTest(unittest.TestCase):
    def test_rule_of_three_and_known_values(self):
        # -ln 0.05 = 2.9957 for none; 4.7439 after 1 event, 6.2958 after 2
        # (the chi-square tables' 95 % points over 2).
        self.assertAlmostEqual(table.upper_95(0, 1000), 0.0029957, places=6)
        self.assertAlmostEqual(table.upper_95(1, 1), 4.7439, places=3)
        self.assertAlmostEqual(table.upper_95(2, 1), 6.2958, places=3)
        self.assertAlmostEqual(table.upper_95(454, 4813328) * 4813328, 490.0, delta=3)
        self.assertIsNone(table.upper_95(0, 0))


class FixtureTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp()
        shutil.copytree(FIXTURES, self.dir, dirs_exist_ok=True)

    def tearDown(self):
        shutil.rmtree(self.dir)

    def test_rows_sum_the_passes(self):
        rows = {r["name"]: r for r in (table.row(self.dir, n) for n in ("6.1-fix", "6.12-fix"))}
        fix61, fix612 = rows["6.1-fix"], rows["6.12-fix"]
        for r in rows.values():
            self.assertNotIn("error", r)
            self.assertEqual(len(r["passes"]), 2)
            self.assertEqual(r["calls"], sum(p["calls"] for p in r["passes"]))
        self.assertTrue(fix61["release"].startswith("6.1."))
        self.assertGreater(fix61["false_negatives"], 0)
        self.assertEqual(fix612["false_negatives"], 0)
        self.assertAlmostEqual(fix612["rate_upper_95"] * fix612["calls"], 2.9957, places=3)
        self.assertGreater(fix61["rate_upper_95"], fix61["rate"])

    def test_main_writes_json_and_table(self):
        rc = table.main([self.dir, "6.1-fix", "6.12-fix"])
        self.assertEqual(rc, 0)
        with open(os.path.join(self.dir, "falseneg.json"), encoding="utf-8") as f:
            names = [k["name"] for k in json.load(f)["kernels"]]
        self.assertEqual(names, ["6.1-fix", "6.12-fix"])

    def test_missing_and_broken_results(self):
        os.makedirs(os.path.join(self.dir, "broken", "results"))
        with open(os.path.join(self.dir, "broken", "results", "kernel-release"), "w") as f:
            f.write("6.1.0\n")
        with open(os.path.join(self.dir, "broken", "results", "falseneg.jsonl"), "w") as f:
            f.write('{"calls": 10, "false_negatives": 0}\n{"calls": "x"\n')
        broken = table.row(self.dir, "broken")
        self.assertIn("falseneg.jsonl:2", broken["error"])
        self.assertIn("No such file", table.row(self.dir, "absent")["error"])
        self.assertEqual(table.main([self.dir, "6.12-fix", "absent"]), 1)
        self.assertIn("no counts", table.table([table.row(self.dir, "absent")]))


if __name__ == "__main__":
    unittest.main()
