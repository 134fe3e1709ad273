"""lab/demo/tests/demo_matrix.py, what make test-matrix asserts: on the
matrix.json that lab/demo/matrix makes of two recorded demos (the
debian13 and the 7.3 pair's, tests/fixtures/demo-matrix/), and on each
way it can fall short."""
import copy
import json
import os
import shutil
import tempfile
import unittest
from unittest import mock

from lab.demo import matrix
from lab.demo.tests import demo_matrix

TOP = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..")
FIX = os.path.join(TOP, "tests", "fixtures", "demo-matrix")
PAIRS = ("debian13", "7.3")
RUNS = {"unix": 1, "udp": 0}


def recorded():
    """matrix.json as lab/demo/matrix writes it, from the two recorded
    demos, each put where a run directory has its summary.json."""
    prows, krows = [], []
    with tempfile.TemporaryDirectory() as d:
        for pair in PAIRS:
            run = os.path.join(d, pair)
            os.makedirs(run)
            shutil.copy(os.path.join(FIX, f"summary-{pair}.json"), os.path.join(run, "summary.json"))
            r, obs = matrix.pair_row(pair, {"unix": [run]})
            prows.append(r)
            krows += [matrix.cells.row(pair, k, obs[k]) for k in ("stock", "patched")]
    doc, _ = matrix.document(prows, krows, RUNS)
    return json.loads(json.dumps(doc))


REAL = recorded()


def problems(m, pairs=PAIRS):
    """demo_matrix.problems, judging only PAIRS (the recorded ones)."""
    with mock.patch.dict(demo_matrix.EXPECTED, clear=True,
                         values={p: demo_matrix.EXPECTED[p] for p in pairs}):
        return demo_matrix.problems(m)


def kernel(m, pair, side):
    return next(k for k in m["kernels"] if (k["pair"], k["side"]) == (pair, side))


class MatrixChecksTest(unittest.TestCase):
    def test_the_recorded_pairs_hold(self):
        self.assertEqual([p["verdict"] for p in REAL["pairs"]], ["fixed", "no effect"])
        self.assertEqual(problems(REAL), [])
        # the full matrix wants every pair
        self.assertEqual(demo_matrix.problems(REAL)[0],
                         f"pairs {list(PAIRS)}, expected {list(demo_matrix.EXPECTED)}")

    def test_each_shortfall_is_named(self):
        m = copy.deepcopy(REAL)
        m["runs"]["udp"] = 1
        d13, k73 = m["pairs"]
        d13["demos"]["unix"][0]["verdict"] = "no effect"
        d13["verdict"] = "no effect"
        k73["demos"]["unix"] = [{"error": "lab/demo/run exited 4"}]
        kernel(m, "debian13", "patched")["cells"]["rt"]["word"] = "STALLED"
        kernel(m, "debian13", "stock").update(kernel="6.16.11+deb13-rt-amd64", model="task")
        kernel(m, "7.3", "stock")["cells"]["quota"]["word"] = "NOT TRACED"
        kernel(m, "7.3", "patched").update(obtained="?")
        self.assertEqual(problems(m), [
            "debian13, udp: 0 demos, expected 1",
            "debian13: stock kernel 6.16.11+deb13-rt-amd64, expected /6\\.16\\.12\\+deb13-rt-amd64/",
            "debian13: stock kernel's model task, expected cfs_rq",
            "debian13: the patched kernel has the epoll change and stalled "
            f"({kernel(m, 'debian13', 'patched')['cells']['rt']['figures']})",
            "debian13, unix: verdict no effect, expected fixed",
            "debian13: the pair's verdict no effect, expected fixed",
            "7.3, unix: no report: lab/demo/run exited 4",
            "7.3, udp: 0 demos, expected 1",
            "7.3: the stock kernel's quota period's timer not traced",
            "7.3: patched kernel obtained '?', expected 'linux-source-7.3'"])

    def test_the_fixes_and_7x_must_be_stated(self):
        m = copy.deepcopy(REAL)
        m["fixes"]["throttle"] = {"sentence": "The task-based CFS throttle: no two kernels of this matrix "
                                              "differ in it alone.", "comparisons": []}
        m["on_7x"]["kernels"] = [k for k in m["on_7x"]["kernels"] if k["lock"] != "rwlock_t"]
        kernel(m, "7.3", "patched")["cells"]["rt"] = None
        self.assertEqual(problems(m), [
            "7.3: the 7.x patched kernel's RT ticker None, expected no stall",
            "the throttle fix: no comparison of two kernels that differ in it alone",
            "on_7x: no 7.x kernel with rwlock_t and the task throttle, with its three waiters"])

    def test_the_matrix_of_today_s_kernels(self):
        # tests/fixtures/demo-matrix/matrix-2026-12-07.json: the new rows'
        # run (its 6.18.12/7.3.4 and 7.3 pairs without their UDP demo)
        with open(os.path.join(FIX, "matrix-2026-12-07.json"), encoding="utf-8") as f:
            m = json.load(f)
        self.assertEqual(problems(m, ("debian13", "debian13-task", "7.3")),
                         ["debian13-task, udp: 0 demos, expected 1", "7.3, udp: 0 demos, expected 1"])
        self.assertEqual([(k["kernel"], k["waiters"]["rt"]["word"]) for k in m["on_7x"]["kernels"]],
                         [("7.3.4+deb13-rt-amd64", "CLEAN"), ("7.3.4-relay-stock", "CLEAN"),
                          ("7.3.4-relay-patched", "CLEAN")])

    def test_usage(self):
        with mock.patch("sys.stderr") as err:
            self.assertEqual(demo_matrix.main(["demo_matrix.py"]), 2)
        self.assertIn("demo_matrix.py MATRIX.JSON", "".join(c.args[0] for c in err.write.call_args_list))


if __name__ == "__main__":
    unittest.main()
