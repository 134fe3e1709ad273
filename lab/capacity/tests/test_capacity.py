"""lab/capacity's judge and page: the reading of the searches, and
lab/capacity/run's count of a search's steps and its progress, on
made-up cells and consoles (the real run: tests/fixtures/report/capacity,
tests/integration/report_capacity.sh)."""
import json
import os
import subprocess
import tempfile
import unittest
from unittest import mock

from lab.capacity import judge, page
from lab.capacity import run as capacity_run
from lab.labkit import TOP, spec
from report.files import DataError


# A chains.json with nothing in it but what every one has.
CHAINS = {"line": "", "totals": {"stalls": 0, "stalls_explained": 0, "late": 0, "late_explained": 0},
          "stalls": [], "late": [], "contentions": {"rt_waits": 0, "boosts": 0},
          "trace": {"events": 0, "lost": {"total": 0}, "complete": True}}


def cell(q, caps, at_least=False, problems=()):
    """A by_quota cell whose searches found CAPS (None: none)."""
    found = [x for x in caps if x is not None]
    cap = None
    if found:
        ordered = sorted(caps, key=lambda x: -1 if x is None else x)
        cap = {"median_pps": ordered[(len(caps) - 1) // 2], "min_pps": ordered[0],
               "max_pps": max(found), "searches": len(caps)}
    return {"cpu_quota_pct": q, "cotenant_rate_pps": 30000, "capacity": cap,
            "capacity_pps": cap and cap["median_pps"], "at_least": at_least,
            "limit": "cpu", "problems": list(problems)}


class CapacityTextTest(unittest.TestCase):
    def test_median_range_and_what_bounded_it(self):
        self.assertEqual(judge.cap_text(cell(10, [26000, 24000, 28000])),
                         "26000 pps (24000-28000, 3 searches; cpu)")
        self.assertEqual(judge.cap_text(cell(10, [5000])), "5000 pps (1 search; cpu)")
        none = cell(10, [None, None])
        none["limit"] = "lock"
        self.assertEqual(judge.cap_text(none), "none (lock)")
        # a search that found none is the low end of the range, never 0
        self.assertEqual(judge.cap_text(cell(10, [None, 3000, 4000])),
                         "3000 pps (none-4000, 3 searches; cpu)")
        self.assertEqual(judge.cap_text(cell(10, [468], at_least=True)),
                         ">= 468 pps (1 search; a ceiling of loadgen's)")
        # a cell whose co-tenant was not there throughout proves nothing
        self.assertEqual(judge.cap_text(cell(25, [None], problems=["the trace did not start"])),
                         "no result (a problem, below)")


class QuotaForTest(unittest.TestCase):
    def kernel(self, *cells):
        return {"by_quota": list(cells)}

    def test_the_tightest_quota_from_which_every_looser_one_met(self):
        k = self.kernel(cell(10, [900, 1200]), cell(25, [5200, 6000]), cell(50, [8000]))
        self.assertEqual(judge.quota_for(k, 5000, 30000),
                         {"cpu_quota_pct": 25, "tightest_tried": False})
        self.assertEqual(judge.quota_for(k, 800, 30000),
                         {"cpu_quota_pct": 10, "tightest_tried": True})
        self.assertIsNone(judge.quota_for(k, 9000, 30000))

    def test_a_looser_quota_that_missed_breaks_the_run(self):
        # 50 % met, 25 % did not, 10 % did: not monotonic, so only 50 %
        k = self.kernel(cell(10, [6000]), cell(25, [None]), cell(50, [7000]))
        self.assertEqual(judge.quota_for(k, 5000, 30000)["cpu_quota_pct"], 50)
        # the lowest search counts, and a cell with a problem proves nothing
        k = self.kernel(cell(10, [6000, 4000, 7000]), cell(50, [9000], problems=["ended"]))
        self.assertIsNone(judge.quota_for(k, 5000, 30000))
        self.assertEqual(judge.quota_text(None, [10, 25, 50]), "none of 10-50 %")
        self.assertEqual(judge.quota_text({"cpu_quota_pct": 10, "tightest_tried": True}, [10]),
                         "10 % (the tightest tried)")


class LimitsTest(unittest.TestCase):
    def test_each_search_is_bounded_by_its_first_missed_rate(self):
        steps = [{"search": 1, "target_rate": r, "meets_slo": m, "cause": c}
                 for r, m, c in ((117, True, None), (234, False, "lock"), (175, True, None),
                                 (205, False, "cpu"))] + \
                [{"search": 2, "target_rate": 117, "meets_slo": False, "cause": "lock"}]
        got = judge.search_limits({"steps": steps}, [
            {"search": 1, "end": "found", "met": 175, "missed": 205, "steps": 4},
            {"search": 2, "end": "none", "met": None, "missed": 117, "steps": 1},
            {"search": 3, "end": "to", "met": 468, "missed": None, "steps": 3}])
        self.assertEqual([(s["search"], s["limit"]) for s in got],
                         [(1, "cpu"), (2, "lock"), (3, "ceiling")])
        self.assertEqual(page.search_text(got[1]), "none at 117 pps (lock)")
        self.assertEqual(page.search_text(got[2]),
                         ">= 468 pps (ceiling: the highest rate the plan allows)")


class TableTest(unittest.TestCase):
    def test_mixed_rates_and_a_search_that_was_not_monotonic_are_said(self):
        stock = cell(10, [None, 234, None])
        stock.update(limit="lock", monotonic=False, cotenant_spin_us=5,
                     verdict="capacity none (median of 3; none-234), not monotonic: 234 pps met "
                             "(search 2) above 117 pps missed (search 1)",
                     rates=[{"target_rate": 117, "runs": 3, "met": 1},
                            {"target_rate": 234, "runs": 1, "met": 1},
                            {"target_rate": 468, "runs": 1, "met": 0}],
                     searches=[{"search": 1, "end": "none", "met_pps": None, "missed_pps": 117,
                                "steps": 1, "limit": "lock"}])
        stock["capacity_pps"] = None
        patched = cell(10, [468], at_least=True)
        patched.update(monotonic=True, cotenant_spin_us=5, rates=[], searches=[])
        cap = {"spec": {"capacity": {"rt_rate_from_pps": 117, "rt_rate_to_pps": 468,
                                     "resolution_pct": 5, "step_s": 4}},
               "slo": {"p99_9": 2000}, "clock": "virtual", "headline": "h",
               "kernels": {"stock": {"outcome": "ok", "by_quota": [stock]},
                           "patched": {"outcome": "ok", "by_quota": [patched]}}}
        text = page.table(cap)
        self.assertIn("rates some runs met and some did not:\n  stock at 10%: 117 pps 1/3\n", text)
        self.assertIn("not monotonic (a rate missed below one that met):\n  stock at 10%: capacity none",
                      text)
        self.assertIn("  stock at 10%: 1: none at 117 pps (lock)\n", text)
        self.assertTrue(text.endswith("headline: h\n"))


PLAN = {"planned_rate_pps": 5000, "quota_search": "on", "threshold_demand_pct": 60,
        "threshold_quota_pct": [5, 95],
        "threshold_resolution_pct": 5}


def probes(d, k, outcomes):
    """Kernel K's quota search in run directory D: OUTCOMES, in the
    order probed, as (quota, met) with met True, False or a problem."""
    for n, (q, met) in enumerate(outcomes, 1):
        p = os.path.join(d, k, "results", "grid", "threshold", f"q{q}")
        os.makedirs(p)
        with open(os.path.join(p, "probe.json"), "w") as f:
            json.dump({"cpu_quota_pct": q, "probe": n}, f)
        if isinstance(met, str):
            with open(os.path.join(p, "failed"), "w") as f:
                f.write(met)
            continue
        step = {"target_rate": 5000, "meets_slo": met, "cause": None if met else "throttled",
                "why": None if met else "p99.9 210 ms > 2 ms",
                "result": {"latency_us": {"corrected": {"p99_9": 900 if met else 210000}},
                           "watched_cgroup": {"nr_throttled": 0 if met else 300}}}
        with open(os.path.join(p, "sweep.json"), "w") as f:
            json.dump({"steps": [step]}, f)


class QuotaSearchTest(unittest.TestCase):
    def threshold(self, outcomes, plan=PLAN):
        with tempfile.TemporaryDirectory() as d:
            probes(d, "stock", outcomes)
            return judge.quota_search(d, "stock", plan)

    def test_bisected(self):
        t = self.threshold([(95, True), (5, False), (50, False), (72, True), (61, False),
                            (66, True), (63, True)])
        self.assertEqual((t["tightest_met_pct"], t["loosest_missed_pct"]), (63, 61))
        self.assertTrue(t["monotonic"])
        self.assertEqual([r["probe"] for r in t["probes"]], list(range(1, 8)))
        self.assertEqual(t["probes"][1]["p99_9_us"], 210000)
        self.assertEqual(judge.threshold_text(t), "63 % (61 % missed; throttled)")

    def test_the_ends_of_the_range(self):
        self.assertEqual(judge.threshold_text(self.threshold([(95, True), (5, True)])),
                         "any (met at 5 %, the lowest tried)")
        self.assertEqual(judge.threshold_text(self.threshold([(95, False)])),
                         "none (missed at 95 %, the highest tried; throttled)")

    def test_not_monotonic_is_said(self):
        t = self.threshold([(95, True), (5, False), (50, True), (27, True), (16, False), (38, False)])
        self.assertFalse(t["monotonic"])
        self.assertEqual(judge.threshold_text(t), "27 % (38 % missed; throttled; not monotonic)")

    def test_a_probe_that_could_not_run(self):
        t = self.threshold([(95, True), (5, "grid: the co-tenant did not start")])
        self.assertEqual(t["problems"], ["probe 2 at 5 %: grid: the co-tenant did not start"])
        self.assertEqual(judge.threshold_text(t), "no result (a problem, below)")

    def test_none_planned(self):
        self.assertIsNone(self.threshold([], {**PLAN, "quota_search": "off"}))
        self.assertEqual(judge.threshold_text(None), "not searched")


class DriverTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.drv = capacity_run

    def test_most_steps_of_a_search(self):
        # 117, 234, 468; then 100 % -> 50, 25, 13, 7, 4 % of a gap; and
        # two for a warm start's smaller first steps
        self.assertEqual(self.drv.max_steps(
            {"rt_rate_from_pps": 117, "rt_rate_to_pps": 468, "resolution_pct": 5}), 10)
        self.assertEqual(self.drv.max_steps(
            {"rt_rate_from_pps": 1000, "rt_rate_to_pps": 1000, "resolution_pct": 100}), 3)

    def test_the_readme_lists_the_parameters_as_the_driver_has_them(self):
        with open(os.path.join(TOP, "lab", "capacity", "README.md"), encoding="utf-8") as f:
            self.assertIn(spec.table(self.drv.PARAMS), f.read())

    def test_progress_from_the_console(self):
        class Run:
            def __init__(self, d):
                self.d = d

            def path(self, *p):
                return os.path.join(self.d, *p)
        with tempfile.TemporaryDirectory() as d:
            os.makedirs(os.path.join(d, "patched"))
            run = Run(d)
            self.assertIsNone(self.drv.progress(run, "patched"))
            with open(os.path.join(d, "patched", "console.log"), "w") as f:
                f.write("boot\ngrid: cell 1 of 2: quota 10%\n"
                        "loadgen sweep: search 1 of 1, step 1: 117 pps\n"
                        "loadgen sweep: search 1 of 1, step 2: 234 pps\n"
                        "grid: cell 2 of 2: quota 50%\n"
                        "loadgen sweep: search 1 of 3, step 1: 117 pps\n")
            self.assertEqual(self.drv.progress(run, "patched"), (2, 3, 1, 1, "117 pps", False, 0))
            with open(os.path.join(d, "patched", "console.log"), "a") as f:
                f.write("search 1: 468 pps met\nsearch 2: 5000 pps met, 5250 missed\n"
                        "search 3: --from 117 pps missed\n")
            self.assertEqual(self.drv.progress(run, "patched")[-2:], (True, 0))
            with open(os.path.join(d, "patched", "console.log"), "a") as f:
                f.write("grid: threshold probe 1: quota 95%, RT 5000 pps\n"
                        "grid: threshold probe 2: quota 5%, RT 5000 pps\n")
            self.assertEqual(self.drv.progress(run, "patched")[-1], 2)

    def test_most_probes_of_the_quota_search(self):
        # 95, 5, then 50, 27 or 72, ... down to a gap of 5 points
        grid = {"quota_search": "on", "threshold_quota_pct": [5, 95],
                "threshold_resolution_pct": 5}
        self.assertEqual(self.drv.max_probes(grid), 7)
        self.assertEqual(self.drv.max_probes({**grid, "quota_search": "off"}), 0)


if __name__ == "__main__":
    unittest.main()


class TraceStepsTest(unittest.TestCase):
    """A cell's chains.json: each missed step's cause from the trace, and
    none where the trace had stopped seeing (a buffer that filled)."""

    def test_covered_and_not(self):
        with tempfile.TemporaryDirectory() as d:
            os.makedirs(os.path.join(d, "cotenant"))
            with open(os.path.join(d, "cotenant", "chains.json"), "w") as f:
                json.dump(dict(CHAINS, steps=[
                    {"covered": True, "cause": "cpu", "lock_waits": 0, "lock_wait_ms_max": 0.0,
                     "relay_cpu_share": 0.95},
                    {"covered": False, "cause": None}]), f)
            c = {"steps": [{"meets_slo": False, "cause": "objective"},
                           {"meets_slo": False, "cause": "throttled"}]}
            judge.trace_steps(d, c)
            first, second = c["steps"]
            self.assertEqual((first["cause"], first["trace"]["covered"], first["trace"]["relay_cpu_share"]),
                             ("cpu", True, 0.95))
            self.assertEqual((second["cause"], second["trace"]),
                             ("throttled", {"covered": False, "lock_waits": None, "lock_wait_ms_max": None,
                                            "relay_cpu_share": None}))
            with open(os.path.join(d, "cotenant", "chains.json"), "w") as f:
                json.dump(dict(CHAINS, steps=[{"covered": "yes"}, {}]), f)
            with self.assertRaisesRegex(DataError,
                                        r"chains.json: steps\[0\].covered: expected true or false"):
                judge.trace_steps(d, c)
            with open(os.path.join(d, "cotenant", "chains.json"), "w") as f:
                json.dump(dict(CHAINS, steps=[{}]), f)
            with self.assertRaisesRegex(DataError, "chains.json: steps: 1 of them, the search had 2"):
                judge.trace_steps(d, c)


class ExplainerTest(unittest.TestCase):
    """lab/capacity/run's Explainer: a guest's cells queued when it ends,
    started no more than the free CPUs allow, each one's line said."""

    def test_slots_and_lines(self):
        mod = capacity_run
        started = []

        def fake(res, name, log, sweep=None, missed_only=False):
            self.assertTrue(missed_only)
            started.append(name)
            with open(log, "w") as f:
                f.write(f"{name}: explained\n")
            return subprocess.Popen(["true"])
        with mock.patch.object(mod.guest, "explain", fake), tempfile.TemporaryDirectory() as d, \
                open(os.devnull, "w") as out:
            run = mod.Run("t", d, out=out)
            for k in ("stock", "patched"):
                for q in ("q10-c1", "q25-c1"):
                    res = run.path(k, "results", "grid", q, "cotenant", "trace")
                    os.makedirs(res)
                    open(run.path(k, "results", "grid", q, "sweep.json"), "w").close()
            os.makedirs(run.path("stock", "results", "grid", "q50-c1", "cotenant"))  # no trace
            # the biggest trace first
            with open(run.path("patched", "results", "grid", "q25-c1", "cotenant", "trace", "cpu1.raw.gz"),
                      "wb") as f:
                f.write(b"x" * 1000)
            ex = mod.Explainer(run)
            ex.add("stock")
            ex.pump(0)
            self.assertEqual(started, [])
            ex.pump(1)
            self.assertEqual(started, ["stock q10-c1"])
            ex.add("patched")
            ex.drain()
            self.assertEqual(started, ["stock q10-c1", "patched q25-c1", "stock q25-c1", "patched q10-c1"])
            with open(run.path("run.log")) as f:
                said = f.read()
            for name in started:
                self.assertIn(f"[{name}] {name}: explained", said)
