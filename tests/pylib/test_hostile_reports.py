"""tests/pylib/hostile_reports: the places of a document, a value put in
one, and how a case's ending is judged."""
import json
import unittest

from tests.pylib import hostile_reports as h

DOC = json.dumps({"a": {"b": [1, {"c": 2}, 3]}, "d": "x"})


class MutateTest(unittest.TestCase):
    def test_places(self):
        self.assertEqual(h.places(json.loads(DOC)),
                         ["/a", "/a/b", "/a/b/0", "/a/b/1", "/a/b/1/c", "/d"])
        # a key a path cannot name (a task's, "rcuc/1") is left out
        self.assertEqual(h.places({"rcuc/1": {"x": 1}, "e": 2}), ["/e"])

    def test_a_value_in_a_place(self):
        self.assertEqual(json.loads(h.mutated(DOC, "/a/b/1/c", '"1\\n2"'))["a"]["b"][1]["c"], "1\n2")
        self.assertNotEqual(json.loads(h.mutated(DOC, "/a/b/0", "NaN"))["a"]["b"][0], 0)
        self.assertNotIn("d", json.loads(h.mutated(DOC, "/d", "delete")))
        self.assertEqual(h.mutated(DOC, "/", "[]"), "[]")
        self.assertEqual(json.loads(h.mutated(DOC, "/a/b/0", "digits:4300"))["a"]["b"][0], int("9" * 4300))
        self.assertEqual(len(h.mutated(DOC, "/", "deep")), 200000)

    def test_the_corpus_is_drawn_the_same_each_time(self):
        self.assertEqual(h.cases(), h.cases())
        names = [c[0] for c in h.cases()]
        self.assertEqual(len(names), len(set(names)))


class JudgeTest(unittest.TestCase):
    def verdict(self, status, err, place="/stock/stalls", file="summary.json"):
        return h.judge("case", file, place, status, err)

    def test_endings(self):
        self.assertIsNone(self.verdict(0, ""))
        self.assertIsNone(self.verdict(65, "render: d/summary.json: stock.stalls: expected a whole number\n"))
        self.assertIsNone(self.verdict(65, "render: d/summary.json: expected an object, got []\n", place="/"))
        self.assertIn("traceback", self.verdict("traceback", "Traceback ..."))
        self.assertIn("exit 1", self.verdict(1, "check failed"))
        self.assertIn("does not name stalls", self.verdict(65, "render: d/summary.json: bad\n"))
        self.assertIn("does not name summary.json", self.verdict(65, "render: stalls: bad\n"))
        self.assertIn("2 lines", self.verdict(65, "render: d/summary.json: stalls\nmore\n"))
        # a list's element: its key is the list's
        self.assertIsNone(self.verdict(65, "x: d/summary.json: stock.problems[0]: expected text\n",
                                       place="/stock/problems/0"))


if __name__ == "__main__":
    unittest.main()
