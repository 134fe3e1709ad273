"""tests/pylib/demo_matrix.py, what make test-matrix asserts: on the
historical pair's row of a real matrix run (tests/fixtures/demo-matrix/,
both wakers' demos), completed with the two other pairs, and on each way
it can fall short."""
import copy
import json
import os
import unittest

from tests.pylib import demo_matrix

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURE = os.path.join(HERE, "..", "fixtures", "demo-matrix", "matrix-6.1.8-rt.json")
with open(FIXTURE, encoding="utf-8") as f:
    REAL = json.load(f)


def full():
    """The real 6.1.8-rt row after a 6.12 and a 6.1 row made from it (the
    6.12 one FIXED with loopback UDP too, as 6.12 is)."""
    hist = REAL["pairs"][0]
    a, b = copy.deepcopy(hist), copy.deepcopy(hist)
    a.update(pair="6.12")
    a["stock"]["kernel"] = "6.12.117-relay-stock"
    a["patched"].update(kernel="6.12.117-relay-patched",
                        obtained="Debian's linux-source-6.12 6.12.117-1~deb12u1")
    a["demos"]["udp"].update(verdict="fixed")
    a["demos"]["udp"]["stock"]["stalls"] = 29
    b.update(pair="6.1")
    b["stock"]["kernel"] = "6.1.187-rt64-relay-stock"
    b["patched"].update(kernel="6.1.187-rt64-relay-patched",
                        obtained="Debian's linux 6.1.187-1 with its own RT patches")
    return {"pairs": [a, b, copy.deepcopy(hist)]}


class MatrixChecksTest(unittest.TestCase):
    def test_the_real_row_holds(self):
        self.assertEqual(REAL["pairs"][0]["verdict"], "fixed")
        self.assertEqual(REAL["pairs"][0]["demos"]["unix"]["verdict"], "fixed")
        self.assertEqual(demo_matrix.problems(full()), [])
        self.assertEqual(demo_matrix.problems(REAL),
                         ["pairs ['6.1.8-rt'], expected ['6.12', '6.1', '6.1.8-rt']"])

    def test_each_shortfall_is_named(self):
        m = full()
        m["pairs"][0]["demos"]["udp"]["verdict"] = "no effect"
        del m["pairs"][0]["demos"]["unix"]
        m["pairs"][1]["demos"]["unix"]["patched"]["stalls"] = 2
        m["pairs"][2]["patched"].update(kernel="6.1.187-rt64-relay-patched", obtained="?")
        m["pairs"][2]["demos"]["unix"]["verdict"] = "no effect"
        m["pairs"][2]["verdict"] = "no effect"
        self.assertEqual(demo_matrix.problems(m), [
            "6.12: demos ['udp'], expected ['udp', 'unix']",
            "6.12, udp: verdict no effect, expected fixed",
            "6.1, unix: the patched kernel stalled 2 times",
            "6.1.8-rt: patched kernel 6.1.187-rt64-relay-patched, expected /6\\.1\\.0-\\d+-rt-amd64/",
            "6.1.8-rt: patched kernel obtained '?', expected 'as shipped'",
            "6.1.8-rt, unix: verdict no effect, expected fixed",
            "6.1.8-rt: the pair's verdict no effect, expected fixed"])
        m = full()
        m["pairs"][1]["demos"]["unix"] = {"error": "lab/demo/run exited 4"}
        m["pairs"][1]["verdict"] = "incomplete"
        self.assertEqual(demo_matrix.problems(m), [
            "6.1, unix: no report: lab/demo/run exited 4",
            "6.1: the pair's verdict incomplete, expected fixed"])


if __name__ == "__main__":
    unittest.main()
