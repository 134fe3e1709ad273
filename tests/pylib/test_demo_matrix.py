"""tests/pylib/demo_matrix.py, what make test-matrix asserts: on the
historical pair's row of a real matrix run (tests/fixtures/demo-matrix/),
completed with the two other pairs, and on each way it can fall short."""
import copy
import json
import os
import unittest

import demo_matrix

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURE = os.path.join(HERE, "..", "fixtures", "demo-matrix", "matrix-6.1.8-rt.json")
with open(FIXTURE, encoding="utf-8") as f:
    REAL = json.load(f)


def full():
    """The real 6.1.8-rt row after a 6.12 and a 6.1 row made from it."""
    hist = REAL["pairs"][0]
    a, b = copy.deepcopy(hist), copy.deepcopy(hist)
    a.update(pair="6.12", verdict="fixed")
    a["stock"].update(kernel="6.12.117-relay-stock", stalls=40)
    a["patched"].update(kernel="6.12.117-relay-patched",
                        obtained="Debian's linux-source-6.12 6.12.117-1~deb12u1")
    b.update(pair="6.1")
    b["stock"]["kernel"] = "6.1.187-rt64-relay-stock"
    b["patched"].update(kernel="6.1.187-rt64-relay-patched",
                        obtained="Debian's linux 6.1.187-1 with its own RT patches")
    return {"pairs": [a, b, copy.deepcopy(hist)]}


class MatrixChecksTest(unittest.TestCase):
    def test_the_real_row_holds(self):
        self.assertEqual(demo_matrix.problems(full()), [])
        self.assertEqual(demo_matrix.problems(REAL),
                         ["pairs ['6.1.8-rt'], expected ['6.12', '6.1', '6.1.8-rt']"])

    def test_each_shortfall_is_named(self):
        m = full()
        m["pairs"][0]["verdict"] = "no effect"
        m["pairs"][1]["patched"]["stalls"] = 2
        m["pairs"][2]["patched"].update(kernel="6.1.187-rt64-relay-patched", obtained="?")
        m["pairs"][2]["unixwake"]["verdict"] = "no effect"
        del m["pairs"][0]["unixwake"]
        self.assertEqual(demo_matrix.problems(m), [
            "6.12: AF_UNIX waker verdict None, expected fixed",
            "6.1: the patched kernel stalled 2 times",
            "6.1.8-rt: patched kernel 6.1.187-rt64-relay-patched, expected /6\\.1\\.0-\\d+-rt-amd64/",
            "6.1.8-rt: patched kernel obtained '?', expected 'as shipped'",
            "6.1.8-rt: AF_UNIX waker verdict no effect, expected fixed",
            "6.12: verdict no effect, expected fixed"])
        m = full()
        m["pairs"][1] = {"pair": "6.1", "error": "lab/demo/run exited 4"}
        self.assertEqual(demo_matrix.problems(m), ["6.1: no report: lab/demo/run exited 4"])


if __name__ == "__main__":
    unittest.main()
