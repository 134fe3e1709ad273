"""lab/demo/matrix.py: a pair's row, its verdict, the table and the page."""
import contextlib
import io
import json
import os
import tempfile
import unittest

from lab.demo import matrix
from lab.labkit import TOP
from lab.labkit.run import LabError
from report import page as report_page

from . import CHAINS, SUMMARY


class MatrixTest(unittest.TestCase):
    """lab/demo/matrix.py: a pair's row, from its run's summary and the
    kernels' manifests; the table and the page."""

    def setUp(self):
        self.d = tempfile.mkdtemp()
        self.addCleanup(__import__("shutil").rmtree, self.d)

    def image(self, name, manifest):
        kdir = os.path.join(self.d, name)
        os.makedirs(kdir, exist_ok=True)
        with open(os.path.join(kdir, "manifest.json"), "w", encoding="utf-8") as f:
            json.dump(manifest, f)
        return kdir

    def test_how_each_kernel_was_made(self):
        ab = self.image("6.1", {"package": "linux", "version": "6.1.187-1", "images_kind": "ab",
                                "source": {"rt_patches": [{"patch": "0001.patch"}]}})
        hist = self.image("6.1.8-rt", {"package": "linux", "version": "6.1.8-1",
                                       "images_kind": "historical"})
        self.assertEqual(matrix.obtained(os.path.join(ab, "bzImage-stock")),
                         "Debian's linux 6.1.187-1 with its own RT patches, the fix reversed")
        self.assertEqual(matrix.obtained(os.path.join(ab, "bzImage-patched")),
                         "Debian's linux 6.1.187-1 with its own RT patches")
        self.assertEqual(matrix.obtained(os.path.join(hist, "bzImage-historical")),
                         "Debian's linux 6.1.8-1 with its own RT patches, as shipped")
        shipped = "Debian's linux-image-6.1.0-57-rt-amd64 6.1.192-3, as shipped"
        signed = self.image("debian", {"images_kind": "debian-image", "obtained": shipped})
        self.assertEqual(matrix.obtained(os.path.join(signed, "vmlinuz")), shipped)
        self.assertEqual(matrix.obtained(os.path.join(self.d, "nowhere", "bzImage-stock")), "?")

    def demo_run(self, name, verdict, stock_stalls, hist):
        """A lab/demo/run directory whose summary has these figures."""
        run = os.path.join(self.d, name)
        os.makedirs(run)
        s = json.loads(json.dumps(SUMMARY))
        s["stock"].update(kernel="6.1.8-rt5-relay-historical", stalls=stock_stalls,
                          kernel_image=os.path.join(hist, "bzImage-historical"))
        s["patched"].update(kernel="6.1.187-rt64-relay-patched", kernel_image="/nowhere/bzImage-patched")
        s.update(verdict=verdict, headline=f"{verdict.upper()}: ...")
        with open(os.path.join(run, "summary.json"), "w", encoding="utf-8") as f:
            json.dump(s, f)
        return run

    def test_rows_table_and_page(self):
        hist = self.image("h", {"package": "linux", "version": "6.1.8-1", "images_kind": "historical"})
        udp = self.demo_run("20261204-220000-abcd", "no effect", 0, hist)
        unix = self.demo_run("20261204-221000-ef01", "fixed", 7, hist)
        rows = [matrix.row("6.1.8-rt", {"udp": udp, "unix": unix}),
                matrix.row("6.1", {"udp": LabError(1, "lab/demo/run exited 4 (log: x)"),
                                   "unix": LabError(1, "lab/demo/run exited 4 (log: y)")})]
        r = rows[0]
        unix_demo = r["demos"]["unix"]
        self.assertEqual((r["stock"]["kernel"], unix_demo["stock"]["stalls"],
                          unix_demo["stock"]["rt_p99_9_ms"], unix_demo["patched"]["rt_max_ms"],
                          r["demos"]["udp"]["verdict"], r["verdict"]),
                         ("6.1.8-rt5-relay-historical", 7, 215.0, 0.6, "no effect", "fixed"))
        self.assertEqual(rows[1]["verdict"], "incomplete")
        md = matrix.markdown(rows)
        self.assertIn("| 6.1.8-rt5-relay-historical (Debian's linux 6.1.8-1 with its own RT patches, "
                      "as shipped) | 6.1.187-rt64-relay-patched (?) | NO EFFECT: stock 0 stalls, RT p99.9 "
                      "215 / max 216 ms; patched 0 stalls, RT p99.9 0.095 / max 0.6 ms (trace: no trace "
                      "analysis) | FIXED: stock 7 stalls,", md)
        self.assertIn("| FIXED |", md)
        self.assertIn("| - | - | no report: lab/demo/run exited 4 (log: x) | no report: lab/demo/run "
                      "exited 4 (log: y) | INCOMPLETE |", md)
        # With the stock guest's chains.json (lab/ktrace/explain), the cell
        # says what the trace found.
        os.makedirs(os.path.join(udp, "stock", "results"))
        with open(os.path.join(udp, "stock", "results", "chains.json"), "w", encoding="utf-8") as f:
            json.dump(dict(CHAINS, contentions={"rt_waits": 83601, "boosts": 0, "rt_wait_us": {"max": 926.0},
                                                "lent_by_others": 2064,
                                                "lent_by": {"ktimers/1": 2000, "demo-scenario": 64}}), f)
        self.assertEqual(matrix.demo(udp)[0]["stock_trace"],
                         "83601 RT waits on ep->lock, longest 0.93 ms; 2064 ended when another task lent "
                         "the throttled holder its priority through another lock: ktimers/1 (2000), "
                         "demo-scenario (64)")
        with open(os.path.join(udp, "stock", "results", "chains.json"), "w", encoding="utf-8") as f:
            json.dump(dict(CHAINS, totals=dict(CHAINS["totals"], stalls=27, stalls_explained=26)), f)
        self.assertEqual(matrix.why(udp), "26 of 27 stalls explained")
        # one that does not read is no trace analysis, and the demo's verdict stays
        with open(os.path.join(udp, "stock", "results", "chains.json"), "w", encoding="utf-8") as f:
            json.dump({"totals": {"stalls": "27"}}, f)
        self.assertIsNone(matrix.why(udp))
        self.assertEqual(matrix.demo(udp)[0]["verdict"], "no effect")
        # a summary that does not read is the demo's cell's error, named
        with open(os.path.join(unix, "summary.json"), "w", encoding="utf-8") as f:
            json.dump(dict(SUMMARY, verdict=None), f)
        self.assertIn("summary.json: verdict: null, expected a value",
                      matrix.row("6.1.8-rt", {"udp": udp, "unix": unix})["demos"]["unix"]["error"])
        page = matrix.page(rows, "2026-12-06 12:00 UTC")
        self.assertIn('<a href="20261204-220000-abcd/report.html"><b>NO EFFECT</b></a>', page)
        self.assertIn('<a href="20261204-221000-ef01/report.html"><b>FIXED</b></a>', page)
        self.assertIn("lab/demo/run exited 4 (log: y)", page)
        # in the frame of every page: its style, and when and by what it was made
        self.assertIn(report_page.CSS, page)
        self.assertIn("Generated 2026-12-06 12:00 UTC by lab/demo/matrix from the result files", page)

    def test_a_pair_s_verdict_from_its_wakers(self):
        cases = (
            (("no effect", "fixed"), "fixed"),
            (("fixed", "fixed"), "fixed"),
            (("fixed", "not fixed"), "not fixed"),
            (("no effect", "no effect"), "no effect"),
            (("no effect", "incomplete"), "incomplete"),
            (("no effect", "invalid"), "invalid"),
            (("incomplete", "invalid"), "invalid"),
            (("invalid", "fixed"), "fixed"),
            (("fixed", None), "fixed"),
            (("no effect", None), "incomplete"),
        )
        for (udp, unix), want in cases:
            demos = {"udp": {"verdict": udp}, "unix": {"verdict": unix} if unix else {"error": "x"}}
            self.assertEqual(matrix.verdict(demos), want, (udp, unix))

    def test_the_recorded_matrix_reads_as_it_did(self):
        # tests/fixtures/report/expected/demo-matrix: the table of a real
        # matrix.json as the code made it when it was recorded.
        with open(os.path.join(TOP, "tests", "fixtures", "demo-matrix", "matrix-6.1.8-rt.json")) as f:
            rows = json.load(f)["pairs"]
        with open(os.path.join(TOP, "tests", "fixtures", "report", "expected", "demo-matrix",
                               "matrix.md")) as f:
            self.assertEqual(matrix.markdown(rows), f.read())
        self.assertEqual([matrix.verdict(r["demos"]) for r in rows], [r["verdict"] for r in rows])

    def test_bad_arguments(self):
        for argv, what in ((["--pairs", "6.1,5.10"], "5.10: not one of"),
                           (["--stock-image", "x"], "chooses each pair's kernels"),
                           (["--af-unix", "1"], "chooses each pair's kernels and wakers"),
                           (["--pairs", "--results", self.d], "--pairs: expected one argument")):
            err = io.StringIO()
            with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()), \
                    self.assertRaises(SystemExit) as e:
                matrix.matrix(argv + ["--results", self.d])
            self.assertEqual(e.exception.code, 2)
            self.assertIn(what, err.getvalue())
        self.assertEqual(os.listdir(self.d), [])


if __name__ == "__main__":
    unittest.main()
