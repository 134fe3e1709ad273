"""lab/capacity's judge and page: the reading of the repeats' searches, and
lab/capacity/run's count of a search's steps and its progress, on
made-up cells and consoles (the real run: tests/fixtures/report/capacity,
lab/capacity/tests/report_capacity.sh)."""
import json
import os
import subprocess
import tempfile
import unittest
from unittest import mock

from lab.capacity import judge, page, repeats
from lab.capacity import run as capacity_run
from lab.labkit import TOP, spec
from report.files import DataError


# A chains.json with nothing in it but what every one has.
CHAINS = {"line": "", "totals": {"stalls": 0, "stalls_explained": 0, "late": 0, "late_explained": 0},
          "stalls": [], "late": [], "contentions": {"rt_waits": 0, "boosts": 0},
          "trace": {"events": 0, "lost": {"total": 0}, "complete": True}}


def cell(q, caps, at_least=False, problems=()):
    """A by_quota cell whose repeats found CAPS (None: none)."""
    cap = repeats.combine([repeats.Repeat(i, "none" if x is None else "to" if at_least else "found", x,
                                          at_least and x is not None)
                           for i, x in enumerate(caps, 1)])
    return {"cpu_quota_pct": q, "cotenant_rate_pps": 30000, "capacity": cap,
            "capacity_pps": cap and cap["median_pps"], "at_least": bool(cap and cap["at_least"]),
            "limit": "cpu", "problems": list(problems), "stalls": []}


class CapacityTextTest(unittest.TestCase):
    def test_median_interval_and_what_bounded_it(self):
        self.assertEqual(judge.cap_text(cell(10, [26000, 24000, 28000])),
                         "26000 pps (24000-28000 over 3 repeats; cpu)")
        self.assertEqual(judge.cap_text(cell(10, [5000])), "5000 pps (5000 over 1 repeat; cpu)")
        none = cell(10, [None, None])
        none["limit"] = "lock"
        self.assertEqual(judge.cap_text(none), "none (2 repeats; lock)")
        self.assertEqual(judge.cap_text(cell(10, [468], at_least=True)),
                         ">= 468 pps (468 over 1 repeat; a ceiling of loadgen's)")

    def test_repeats_that_disagree_are_unstable_not_a_number(self):
        self.assertEqual(judge.cap_text(cell(10, [None, 3000, 4000])),
                         "unstable: found in 2 of 3 repeats (3000-4000 pps; cpu)")

    def test_a_repeat_with_a_problem_is_left_out_and_said(self):
        c = cell(25, [5000, 6000], problems=["repeat 3: the trace did not start"])
        self.assertEqual(judge.cap_text(c),
                         "5000 pps (5000-6000 over 2 repeats; cpu) [1 repeat left out: a problem]")
        # with none left, no result
        c = cell(25, [], problems=["repeat 1: ended"])
        self.assertEqual(judge.cap_text(c), "no result (a problem, below)")


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
        # the lowest repeat counts, and an unstable cell is no answer
        k = self.kernel(cell(10, [6000, 4000, 7000]), cell(50, [9000]))
        self.assertEqual(judge.quota_for(k, 5000, 30000)["cpu_quota_pct"], 50)
        k = self.kernel(cell(10, [6000, 7000]), cell(50, [9000, None]))
        self.assertIsNone(judge.quota_for(k, 5000, 30000))
        self.assertEqual(judge.quota_text(None, [10, 25, 50]), "none of 10-50 %")
        self.assertEqual(judge.quota_text({"cpu_quota_pct": 10, "tightest_tried": True}, [10]),
                         "10 % (the tightest tried)")


def write_repeat(d, k, r, name, sweep, chains=None, problem=None):
    """One repeat's cell NAME of kernel K in run directory D, as the grid
    leaves it: cell.json, sweep.json, cotenant/chains.json, a failure."""
    cd = os.path.join(d, k, f"r{r}", "results", "grid", name)
    os.makedirs(os.path.join(cd, "cotenant"))
    with open(os.path.join(cd, "cell.json"), "w") as f:
        json.dump({"cpu_quota_pct": 10, "cotenant_rate_pps": 30000, "cotenant_spin_us": 0}, f)
    with open(os.path.join(cd, "sweep.json"), "w") as f:
        json.dump(sweep, f)
    if chains is not None:
        with open(os.path.join(cd, "cotenant", "chains.json"), "w") as f:
            json.dump(dict(CHAINS, **chains), f)
    if problem:
        with open(os.path.join(cd, "failed"), "w") as f:
            f.write(problem)
    return cd


def search_json(outcomes, end, met, missed):
    """A one-search loadgen sweep --search JSON of OUTCOMES [(rate, met,
    cause)] that ended END."""
    steps = [{"search": 1, "target_rate": rate, "meets_slo": ok, "cause": None if ok else cause,
              "why": None if ok else "p99.9 210 ms > 2 ms", "objectives_us": {"p99_9": 900 if ok else 210000},
              "result": {"latency_us": {"corrected": {"p99_9": 900 if ok else 210000}},
                         "watched_cgroup": {"nr_throttled": 3}}}
             for rate, ok, cause in outcomes]
    return {"mode": "search", "slo": {"p99_9": 2000}, "resolution_pct": 5, "steps": steps,
            "rates": [], "intervals": [{"search": 1, "end": end, "met": met, "missed": missed,
                                        "steps": len(steps)}],
            "capacity": None, "verdict": f"search ended {end}"}


class RepeatsTest(unittest.TestCase):
    """A cell over its repeats' directories: each repeat's search and what
    bounded it, every step with its repeat, the capacity over the repeats
    without a problem, the stalls with what the trace said."""

    def test_a_cell_over_three_repeats(self):
        with tempfile.TemporaryDirectory() as d:
            dirs = [
                write_repeat(d, "patched", 1, "q10-c30000", search_json(
                    [(117, True, None), (234, True, None), (468, False, "cpu"), (351, True, None),
                     (409, False, "cpu")], "found", 351, 409),
                    chains={"steps": [{"covered": True, "cause": None}] * 2
                            + [{"covered": True, "cause": "cpu"}, {"covered": True, "cause": None},
                               {"covered": True, "cause": "lock", "lock_waits": 3}],
                            "stalls": [{"start_s": 3.2, "length_ms": 214.0, "line": "held by x",
                                        "chain": {"complete": True}}]}),
                write_repeat(d, "patched", 2, "q10-c30000", search_json(
                    [(117, False, "lock")], "none", None, 117)),
                write_repeat(d, "patched", 3, "q10-c30000", search_json(
                    [(117, True, None)], "found", 117, 234), problem="grid: the co-tenant ended early"),
            ]
            c, slo = judge._cell("patched", list(enumerate(dirs, 1)))
        self.assertEqual(slo, {"p99_9": 2000})
        self.assertEqual([(s["repeat"], s["end"], s["limit"]) for s in c["searches"]],
                         [(1, "found", "lock"), (2, "none", "lock"), (3, "found", None)])
        self.assertEqual(c["problems"], ["repeat 3: grid: the co-tenant ended early"])
        # repeat 3 is left out: one found 351, one none, so unstable
        cap = c["capacity"]
        self.assertEqual((cap["repeats"], cap["found"], cap["unstable"], cap["median_pps"]),
                         (2, 1, True, None))
        self.assertIsNone(c["capacity_pps"])
        self.assertTrue(all("repeat" in s for s in c["steps"]))
        self.assertEqual({r["target_rate"]: (r["runs"], r["met"]) for r in c["rates"]}[117], (3, 2))
        self.assertEqual(c["nonmonotonic"], "351 pps met (repeat 1) above 117 pps missed (repeat 2)")
        self.assertEqual(c["stalls"][0]["text"], "held by x")
        self.assertEqual(page.stall_lines(c),
                         ["1 stall, the longest 214 ms, 1 explained by the trace",
                          "1x (repeat 1): held by x"])

    def test_repeats_that_ran_other_cells_are_refused(self):
        with tempfile.TemporaryDirectory() as d:
            missed = search_json([(117, False, "lock")], "none", None, 117)
            a = write_repeat(d, "stock", 1, "q10-c30000", missed)
            b = write_repeat(d, "stock", 2, "q10-c30000", missed)
            with open(os.path.join(b, "cell.json"), "w") as f:
                json.dump({"cpu_quota_pct": 25, "cotenant_rate_pps": 30000, "cotenant_spin_us": 0}, f)
            with self.assertRaisesRegex(DataError, "is not what the other repeats ran"):
                judge._cell("stock", [(1, a), (2, b)])

    def test_each_search_is_bounded_by_its_first_missed_rate(self):
        steps = [{"target_rate": r, "meets_slo": m, "cause": c}
                 for r, m, c in ((117, True, None), (234, False, "lock"), (175, True, None),
                                 (205, False, "cpu"))]
        got = judge.search_limit(steps, {"end": "found", "met": 175, "missed": 205, "steps": 4})
        self.assertEqual(got["limit"], "cpu")
        got = judge.search_limit([{"target_rate": 117, "meets_slo": False, "cause": "lock"}],
                                 {"end": "none", "met": None, "missed": 117, "steps": 1})
        self.assertEqual(page.search_text(got), "none at 117 pps (lock)")
        got = judge.search_limit([], {"end": "to", "met": 468, "missed": None, "steps": 3})
        self.assertEqual(page.search_text(got), ">= 468 pps (ceiling: the highest rate the plan allows)")


class TableTest(unittest.TestCase):
    def test_unstable_mixed_rates_and_not_monotonic_are_said(self):
        stock = cell(10, [None, 234, None])
        stock.update(limit="lock", nonmonotonic="234 pps met (repeat 2) above 117 pps missed (repeat 1)",
                     cotenant_spin_us=5,
                     rates=[{"target_rate": 117, "runs": 3, "met": 1},
                            {"target_rate": 234, "runs": 1, "met": 1},
                            {"target_rate": 468, "runs": 1, "met": 0}],
                     searches=[{"repeat": 1, "end": "none", "met_pps": None, "missed_pps": 117,
                                "steps": 1, "limit": "lock"}])
        patched = cell(10, [468], at_least=True)
        patched.update(nonmonotonic=None, cotenant_spin_us=5, rates=[], searches=[])
        cap = {"spec": {"repeats": 3, "capacity": {"rt_rate_from_pps": 117, "rt_rate_to_pps": 468,
                                                   "resolution_pct": 5, "step_s": 4}},
               "slo": {"p99_9": 2000}, "clock": "virtual", "headline": "h",
               "kernels": {"stock": {"outcome": "ok", "by_quota": [stock]},
                           "patched": {"outcome": "ok", "by_quota": [patched]}}}
        text = page.table(cap)
        self.assertIn("median of each cell's 3 independent repeats", text)
        self.assertIn("unstable (some repeats found a capacity and some none: no single number):\n"
                      "  stock at 10%: unstable: found in 1 of 3 repeats (234 pps; lock)\n", text)
        self.assertIn("rates some runs met and some did not:\n  stock at 10%: 117 pps 1/3\n", text)
        self.assertIn("not monotonic (a rate missed below one that met):\n  stock at 10%: 234 pps met",
                      text)
        self.assertIn("  stock at 10%: r1: none at 117 pps (lock)\n", text)
        self.assertTrue(text.endswith("headline: h\n"))


PLAN = {"planned_rate_pps": 5000, "quota_search": "on", "threshold_demand_pct": 60,
        "threshold_quota_pct": [5, 95],
        "threshold_resolution_pct": 5}


def probes(d, k, outcomes, r=1):
    """Kernel K's quota search in repeat R of run directory D: OUTCOMES,
    in the order probed, as (quota, met) with met True, False or a
    problem."""
    for n, (q, met) in enumerate(outcomes, 1):
        p = os.path.join(d, k, f"r{r}", "results", "grid", "threshold", f"q{q}")
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
        x = t["repeats"][0]
        self.assertEqual((x["tightest_met_pct"], x["loosest_missed_pct"]), (63, 61))
        self.assertTrue(x["monotonic"])
        self.assertEqual([r["probe"] for r in x["probes"]], list(range(1, 8)))
        self.assertEqual(x["probes"][1]["p99_9_us"], 210000)
        self.assertEqual(t["tightest"]["median_pps"], 63)
        self.assertEqual(judge.threshold_text(t), "63 % (61 % missed; throttled)")

    def test_the_ends_of_the_range(self):
        self.assertEqual(judge.threshold_text(self.threshold([(95, True), (5, True)])),
                         "any (met at 5 %, the lowest tried)")
        self.assertEqual(judge.threshold_text(self.threshold([(95, False)])),
                         "none (missed at 95 %, the highest tried; throttled)")

    def test_not_monotonic_is_said(self):
        t = self.threshold([(95, True), (5, False), (50, True), (27, True), (16, False), (38, False)])
        self.assertFalse(t["repeats"][0]["monotonic"])
        self.assertEqual(judge.threshold_text(t), "27 % (38 % missed; throttled; not monotonic)")

    def test_a_probe_that_could_not_run(self):
        t = self.threshold([(95, True), (5, "grid: the co-tenant did not start")])
        self.assertEqual(t["problems"], ["repeat 1, probe 2 at 5 %: grid: the co-tenant did not start"])
        self.assertEqual(judge.threshold_text(t), "no result (a problem, below)")

    def test_over_repeats(self):
        bisected = [(95, True), (5, False), (50, False), (72, True), (61, False), (66, True)]
        with tempfile.TemporaryDirectory() as d:
            probes(d, "stock", bisected + [(63, True)], 1)
            probes(d, "stock", bisected, 2)
            t = judge.quota_search(d, "stock", PLAN)
        self.assertEqual(judge.threshold_text(t), "63 % (63-66 % over 2 repeats)")
        with tempfile.TemporaryDirectory() as d:
            probes(d, "stock", [(95, False)], 1)
            probes(d, "stock", bisected, 2)
            t = judge.quota_search(d, "stock", PLAN)
        self.assertEqual(judge.threshold_text(t), "unstable: a quota that met in 1 of 2 repeats (66 %)")
        with tempfile.TemporaryDirectory() as d:
            for r in (1, 2, 3):
                probes(d, "stock", [(95, True), (5, True)], r)
            t = judge.quota_search(d, "stock", PLAN)
        self.assertEqual(judge.threshold_text(t), "any (met at 5 %, the lowest tried, in 3 repeats)")

    def test_none_planned(self):
        self.assertIsNone(self.threshold([], {**PLAN, "quota_search": "off"}))
        self.assertEqual(judge.threshold_text(None), "not searched")


class DriverTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.drv = capacity_run

    def test_most_steps_of_a_search(self):
        # 117, 234, 468; then 100 % -> 50, 25, 13, 7, 4 % of a gap
        self.assertEqual(self.drv.max_steps(
            {"rt_rate_from_pps": 117, "rt_rate_to_pps": 468, "resolution_pct": 5}), 8)
        self.assertEqual(self.drv.max_steps(
            {"rt_rate_from_pps": 1000, "rt_rate_to_pps": 1000, "resolution_pct": 100}), 1)

    def test_the_readme_lists_the_parameters_as_the_driver_has_them(self):
        with open(os.path.join(TOP, "lab", "capacity", "README.md"), encoding="utf-8") as f:
            self.assertIn(spec.table(self.drv.PARAMS), f.read())

    def test_progress_from_the_console(self):
        with tempfile.TemporaryDirectory() as d:
            self.assertIsNone(self.drv.progress(d))
            with open(os.path.join(d, "console.log"), "w") as f:
                f.write("boot\ngrid: cell 1 of 2: quota 10%\n"
                        "loadgen sweep: search 1 of 1, step 1: 117 pps\n"
                        "loadgen sweep: search 1 of 1, step 2: 234 pps\n"
                        "grid: cell 2 of 2: quota 50%\n"
                        "loadgen sweep: search 1 of 1, step 1: 117 pps\n")
            self.assertEqual(self.drv.progress(d), (2, 3, 1, "117 pps", False, 0))
            with open(os.path.join(d, "console.log"), "a") as f:
                f.write("search 1: --from 117 pps missed\n")
            self.assertEqual(self.drv.progress(d)[-2:], (True, 0))
            with open(os.path.join(d, "console.log"), "a") as f:
                f.write("grid: threshold probe 1: quota 95%, RT 5000 pps\n"
                        "grid: threshold probe 2: quota 5%, RT 5000 pps\n")
            self.assertEqual(self.drv.progress(d)[-1], 2)

    def test_every_repeat_boots_at_most_slots_at_once(self):
        """watch: the guests in the order given, never more than the slots
        at once, each booted once; a guest that ended is said and its
        cells queued for the explainer."""
        class Proc:
            def __init__(self, n):
                self.polls, self.returncode = n, 0

            def poll(self):
                self.polls -= 1
                return None if self.polls > 0 else 0
        booted, most = [], [0]
        with tempfile.TemporaryDirectory() as d, open(os.devnull, "w") as out, \
                mock.patch.object(self.drv.time, "sleep"):
            run = self.drv.Run("t", d, out=out)
            guests = [self.drv.Guest(run, k, r) for r in (1, 2) for k in ("patched", "stock")]

            def start(g):
                booted.append(g.name)
                g.t0, g.proc = 0, Proc(3 if g.kernel == "patched" else 1)
                most[0] = max(most[0], sum(x.running() for x in guests))
            explained = []
            ex = mock.Mock(add=lambda g: explained.append(g.name), pump=lambda n: None)
            self.drv.watch(run, guests, start, 2, 3, 16, 0, ex)
        self.assertEqual(booted, ["patched r1", "stock r1", "patched r2", "stock r2"])
        self.assertLessEqual(most[0], 2)
        self.assertEqual(sorted(explained), sorted(booted))
        self.assertTrue(all(g.wall_s is not None for g in guests))

    def test_most_probes_of_the_quota_search(self):
        # 95, 5, then 50, 27 or 72, ... down to a gap of 5 points
        grid = {"quota_search": "on", "threshold_quota_pct": [5, 95],
                "threshold_resolution_pct": 5}
        self.assertEqual(self.drv.max_probes(grid), 7)
        self.assertEqual(self.drv.max_probes({**grid, "quota_search": "off"}), 0)


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
            steps = [{"meets_slo": False, "cause": "objective"},
                     {"meets_slo": False, "cause": "throttled"}]
            judge.trace_steps(d, steps)
            first, second = steps
            self.assertEqual((first["cause"], first["trace"]["covered"], first["trace"]["relay_cpu_share"]),
                             ("cpu", True, 0.95))
            self.assertEqual((second["cause"], second["trace"]),
                             ("throttled", {"covered": False, "lock_waits": None, "lock_wait_ms_max": None,
                                            "relay_cpu_share": None}))
            with open(os.path.join(d, "cotenant", "chains.json"), "w") as f:
                json.dump(dict(CHAINS, steps=[{"covered": "yes"}, {}]), f)
            with self.assertRaisesRegex(DataError,
                                        r"chains.json: steps\[0\].covered: expected true or false"):
                judge.trace_steps(d, steps)
            with open(os.path.join(d, "cotenant", "chains.json"), "w") as f:
                json.dump(dict(CHAINS, steps=[{}]), f)
            with self.assertRaisesRegex(DataError, "chains.json: steps: 1 of them, the search had 2"):
                judge.trace_steps(d, steps)


class ExplainerTest(unittest.TestCase):
    """lab/capacity/run's Explainer: a guest's cells queued when it ends,
    started no more than the free CPUs allow, each one's line said."""

    def test_slots_and_lines(self):
        mod = capacity_run
        started = []

        def fake(res, name, log, sweep=None, missed_only=False, kernel=None):
            self.assertTrue(missed_only)
            # each cell's kernel as the driver described it
            self.assertEqual(kernel, run.path(name.split()[0], "kernel.json"))
            started.append(name)
            with open(log, "w") as f:
                f.write(f"{name}: explained\n")
            return subprocess.Popen(["true"])
        with mock.patch.object(mod.guest, "explain", fake), tempfile.TemporaryDirectory() as d, \
                open(os.devnull, "w") as out:
            run = mod.Run("t", d, out=out)
            guests = {k: mod.Guest(run, k, 1) for k in ("stock", "patched")}
            for k in ("stock", "patched"):
                for q in ("q10-c1", "q25-c1"):
                    res = run.path(k, "r1", "results", "grid", q, "cotenant", "trace")
                    os.makedirs(res)
                    open(run.path(k, "r1", "results", "grid", q, "sweep.json"), "w").close()
            os.makedirs(run.path("stock", "r1", "results", "grid", "q50-c1", "cotenant"))  # no trace
            # the biggest trace first
            with open(run.path("patched", "r1", "results", "grid", "q25-c1", "cotenant", "trace",
                               "cpu1.raw.gz"), "wb") as f:
                f.write(b"x" * 1000)
            ex = mod.Explainer(run)
            ex.add(guests["stock"])
            ex.pump(0)
            self.assertEqual(started, [])
            ex.pump(1)
            self.assertEqual(started, ["stock r1 q10-c1"])
            ex.add(guests["patched"])
            ex.drain()
            self.assertEqual(started, ["stock r1 q10-c1", "patched r1 q25-c1", "stock r1 q25-c1",
                                       "patched r1 q10-c1"])
            with open(run.path("run.log")) as f:
                said = f.read()
            for name in started:
                self.assertIn(f"[{name}] {name}: explained", said)


if __name__ == "__main__":
    unittest.main()
