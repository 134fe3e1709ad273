"""report/search.py: a stored loadgen sweep --search drawn and
tabled, and doctored copies of it refused by name or said as they are."""
import copy
import os
import subprocess
import tempfile
import unittest

from report import search
from report.files import DataError, read_json

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

FIXTURE = os.path.join(TOP, "tests", "fixtures", "report", "search")


def fixture():
    return read_json(os.path.join(FIXTURE, "search.json"))


def gnuplot_available():
    return subprocess.run(["sh", "-c", "command -v gnuplot"], capture_output=True).returncode == 0


class TableTest(unittest.TestCase):
    def test_the_stored_search_gives_the_stored_table(self):
        j = fixture()
        self.assertTrue(search.is_search(j))
        with open(os.path.join(FIXTURE, "table.txt"), encoding="utf-8") as f:
            self.assertEqual(search.table(search.check(j, "search.json")), f.read())

    def test_not_monotonic_is_said_with_the_rates(self):
        j = fixture()
        j["monotonic"] = False
        j["nonmonotonic"] = {"met": {"search": 1, "target_rate": 5000},
                             "missed_below": [{"search": 2, "target_rate": 4750.0},
                                              {"search": 2, "target_rate": 4875}]}
        text = search.table(search.check(j, "search.json"))
        self.assertIn("not monotonic: 5000 pps met (search 1); missed below it: "
                      "4750 pps (search 2), 4875 pps (search 2)\n", text)

    def test_a_step_sweep_is_not_a_search(self):
        self.assertFalse(search.is_search({"mode": "rate"}))
        self.assertFalse(search.is_search([]))


class RefusedTest(unittest.TestCase):
    def refused(self, change, name):
        j = copy.deepcopy(fixture())
        change(j)
        with self.assertRaises(DataError) as e:
            search.check(j, "search.json")
        self.assertIn(name, str(e.exception))

    def test_each_wrong_name_is_named(self):
        def put(path, value):
            def change(j):
                *head, last = path
                for k in head:
                    j = j[k]
                j[last] = value
            return change
        self.refused(put(["steps", 3, "objectives_us", "p90"], "fast"), "steps[3].objectives_us.p90")
        self.refused(put(["steps", 0, "meets_slo"], "yes"), "steps[0].meets_slo")
        self.refused(put(["steps", 1, "cause"], 7), "steps[1].cause")
        self.refused(put(["steps", 2], []), "steps[2]: expected an object")
        self.refused(put(["steps", 2, "result"], "x"), "steps[2].result")
        self.refused(put(["rates", 0, "runs"], None), "rates[0].runs")
        self.refused(put(["intervals", 1, "met"], "5000"), "intervals[1].met")
        self.refused(put(["capacity", "target_rate"], [5000]), "capacity.target_rate")
        self.refused(put(["capacity", "at_least"], 0), "capacity.at_least")
        self.refused(put(["nonmonotonic"], {"met": {"search": 1}, "missed_below": []}),
                     "nonmonotonic.met.target_rate")
        self.refused(put(["nonmonotonic"], {"met": {"search": 1, "target_rate": 1},
                                            "missed_below": [3]}),
                     "nonmonotonic.missed_below[0]: expected an object")
        self.refused(put(["slo"], {}), "slo: no objective")
        self.refused(lambda j: j.pop("intervals"), "no intervals")


@unittest.skipUnless(gnuplot_available(), "gnuplot not installed")
class DrawTest(unittest.TestCase):
    def draw(self, j):
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "latency.svg")
            self.assertTrue(search.draw(search.check(j, "search.json"), out))
            with open(out, encoding="utf-8") as f:
                return f.read()

    def test_every_step_and_the_capacity(self):
        svg = self.draw(fixture())
        for word in ("p90 met", "p90 missed", "objective p90 &lt;= 5 ms", "capacity 5000 pps"):
            self.assertIn(word, svg)

    def test_the_interval_over_the_searches(self):
        j = fixture()
        j["capacity"]["min_rate"] = 4750
        self.assertIn("capacity 5000 pps (median of 2 independent searches; 4750-5000)",
                      self.draw(j))

    def test_searches_that_disagree_have_no_capacity_line(self):
        j = fixture()
        j["capacity"].update(target_rate=None, unstable=True, found=1, min_rate=4750,
                             max_rate=4750, fraction_found=0.5)
        svg = self.draw(j)
        self.assertIn("unstable: a capacity in 1 of 2 independent searches (4750 pps)", svg)
        self.assertNotIn("capacity 4750 pps", svg)

    def test_only_an_unstable_capacity_may_lack_its_median(self):
        j = fixture()
        j["capacity"]["target_rate"] = None
        with self.assertRaises(DataError) as e:
            search.check(j, "search.json")
        self.assertIn("capacity.target_rate", str(e.exception))

    def test_no_capacity_draws_the_steps(self):
        j = fixture()
        j["capacity"] = None
        self.assertNotIn("capacity", self.draw(j).replace("capacity search", ""))


if __name__ == "__main__":
    unittest.main()
