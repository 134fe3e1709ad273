"""The demo's verdict on the virtual clock (lab/demo/judge.py,
lab/demo/margins.py): freezes of the probes outside the stalls judged by
what the kernel's trace says of them, and inputs within their resolution
of a limit said, not flipped. On a copy of tests/fixtures/report/
demo-virtual (a real 6.12 run: stock stalled, patched clean, no freeze)
with freezes and chains added."""
import json
import os
import shutil
import tempfile
import unittest

from lab.demo import judge, margins
from lab.labkit import TOP

RUN = os.path.join(TOP, "tests", "fixtures", "report", "demo-virtual")


def edit(path, change):
    with open(path, encoding="utf-8") as f:
        doc = json.load(f)
    change(doc)
    with open(path, "w", encoding="utf-8") as f:
        json.dump(doc, f)


def chains(rows):
    """A chains.json with the freezes explain writes, and nothing else to say."""
    return {"kernel": "stock", "line": "...", "totals": {"stalls": 0, "stalls_explained": 0, "late": 0,
                                                         "late_explained": 0},
            "stalls": [], "late": [], "contentions": {"rt_waits": 0, "boosts": 0},
            "trace": {"events": 1, "lost": {"total": 0}, "complete": True},
            "freezes": {"limit_ms": 5, "counted": len(rows), "rows": rows, "in_stalls": 0,
                        "explained": sum(1 for r in rows if "cause" in r),
                        "unexplained": sum(1 for r in rows if "unexplained" in r)}}


class VerdictTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, self.dir)
        shutil.copytree(RUN, self.dir, dirs_exist_ok=True)

    def build(self):
        return judge.build(self.dir)

    def freeze(self, due, late_ms, kernel="stock", cpu=0):
        """One freeze of kernel's CPU cpu probe, due at due s, late_ms late."""
        def change(s):
            p = s["ticker"]["freeze_probes"][cpu]
            p["freezes"] = p.get("freezes", 0) + 1
            p["max_ms"] = max(p["max_ms"], late_ms)
            p.setdefault("listed", []).append({"due_s": due, "woke_s": due + late_ms / 1000})
            for q in s["ticker"]["freeze_probes"]:
                q.setdefault("listed", [])
        edit(os.path.join(self.dir, kernel, "results", "scenario.json"), change)

    def trace_says(self, rows, kernel="stock"):
        with open(os.path.join(self.dir, kernel, "results", "chains.json"), "w", encoding="utf-8") as f:
            json.dump(chains(rows), f)

    def test_the_fixture_is_fixed(self):
        self.assertEqual(self.build()["verdict"], "fixed")

    def test_a_freeze_the_trace_explains_is_counted_apart(self):
        self.freeze(12.345, 5.009)
        text = "5.009 ms on CPU 0 at 12.345 s: CPU 0 stayed idle 5.0 ms with the probe woken (...)"
        self.trace_says([{"cpu": 0, "due_s": 12.345, "late_ms": 5.009, "cause": "idle", "text": text}])
        s = self.build()
        self.assertEqual(s["verdict"], "fixed", s["headline"])
        self.assertIn("the stock freeze probes woke late 1 time outside the stalls, each explained by the "
                      f"trace ({text})", s["headline"])
        f = s["stock"]["guest_freezes"]
        self.assertEqual((len(f["outside"]), len(f["explained"]), f["unexplained"]), (1, 1, []))

    def test_a_freeze_the_trace_cannot_account_for_is_invalid_and_named(self):
        self.freeze(12.345, 7.5)
        self.trace_says([{"cpu": 0, "due_s": 12.345, "late_ms": 7.5,
                          "unexplained": "no wake-up of the probe on CPU 0 in the trace",
                          "text": "7.500 ms on CPU 0 at 12.345 s: unexplained (no wake-up of the probe "
                                  "on CPU 0 in the trace)"}])
        s = self.build()
        self.assertEqual(s["verdict"], "invalid")
        self.assertIn("that the trace does not account for: 7.500 ms on CPU 0 at 12.345 s: unexplained "
                      "(no wake-up of the probe on CPU 0 in the trace)", s["headline"])

    def recorded(self, drop=()):
        """The freezes of tests/fixtures/ktrace/stock-idle (three of CPU 0's
        probe, 3.005, 2.004 and 1.005 ms late, the idle task holding the
        CPU) listed on the stock kernel, and their chains from explain on
        that trace, less the lines that hold any of DROP."""
        from lab.ktrace import explain
        fix = os.path.join(TOP, "tests", "fixtures", "ktrace", "stock-idle")
        d = os.path.join(self.dir, "excerpt")
        shutil.copytree(fix, d)
        if drop:
            import gzip
            with gzip.open(os.path.join(fix, "trace.txt.gz"), "rt", encoding="utf-8") as f:
                lines = [ln for ln in f if not any(x in ln for x in drop)]
            with gzip.open(os.path.join(d, "trace.txt.gz"), "wt", encoding="utf-8") as f:
                f.writelines(lines)
        with open(os.path.join(fix, "scenario.json"), encoding="utf-8") as f:
            listed = json.load(f)["ticker"]["freeze_probes"][0]["listed"]
        for x in listed:
            self.freeze(x["due_s"], (x["woke_s"] - x["due_s"]) * 1000)
        doc = explain.GuestTrace(d, "stock").document()
        with open(os.path.join(self.dir, "stock", "results", "chains.json"), "w", encoding="utf-8") as f:
            json.dump(dict(chains([]), freezes=doc["freezes"]), f)

    def test_the_recorded_freezes_explained_by_their_trace_give_fixed(self):
        # The first two meet a stall of this run (23.39-23.605 s): not
        # judged; the third, outside, is explained.
        self.recorded()
        s = self.build()
        self.assertEqual(s["verdict"], "fixed", s["headline"])
        f = s["stock"]["guest_freezes"]
        self.assertEqual([(x["late_ms"], x["cause"]) for x in f["explained"]], [(1.005, "idle")])
        self.assertIn("the stock freeze probes woke late 1 time outside the stalls, each explained by the "
                      "trace (1.005 ms on CPU 0 at 23.609 s: CPU 0 stayed idle 1.0 ms with the probe woken",
                      s["headline"])

    def test_a_recorded_freeze_its_trace_cannot_account_for_gives_invalid_naming_it(self):
        # The probe's wake-up at the third freeze's slot cut from the trace.
        self.recorded(drop=("25.450007: sched_waking: comm=demo-scenario pid=76 ",))
        s = self.build()
        self.assertEqual(s["verdict"], "invalid", s["headline"])
        self.assertIn("the virtual clock did not hold on the stock kernel (the freeze probes saw late "
                      "wake-ups outside the stalls that the trace does not account for: 1.005 ms on CPU 0 at "
                      "23.609 s: unexplained (no wake-up of the probe on CPU 0 in the trace", s["headline"])

    def test_untraced_a_freeze_stays_invalid_and_a_borderline_one_is_said(self):
        self.freeze(2.0, 7.5)
        s = self.build()
        self.assertEqual(s["verdict"], "invalid")
        self.assertIn("7.500 ms on CPU 0 at 2.000 s: the run was not traced", s["headline"])
        self.setUp()
        self.freeze(2.0, 5.009)
        s = self.build()
        self.assertEqual(s["verdict"], "fixed", s["headline"])
        self.assertIn("borderline: the stock freeze probe's 5.009 ms wake-up on CPU 0 at 2.000 s lies within "
                      "its 0.1 ms resolution of the 5 ms limit", s["headline"])
        self.assertTrue(s["borderline"][0].startswith("the stock freeze probe's 5.009 ms wake-up"))

    def test_freezes_in_stalls_are_not_judged(self):
        def first_stall(s):
            return s["stalls"][0]
        with open(os.path.join(self.dir, "stock", "results", "scenario.json"), encoding="utf-8") as f:
            st = first_stall(json.load(f))
        self.freeze(st["start_s"] + 0.05, 9.0)
        s = self.build()
        self.assertEqual(s["verdict"], "fixed", s["headline"])
        self.assertEqual(s["stock"]["guest_freezes"]["outside"], [])

    def test_a_scenario_from_before_the_list_is_judged_by_its_count(self):
        edit(os.path.join(self.dir, "stock", "results", "scenario.json"),
             lambda s: s["ticker"]["freeze_probes"][0].update(freezes=1, max_ms=5.2))
        self.assertEqual(self.build()["verdict"], "invalid")

    def test_a_patched_datagram_within_the_resolution_of_the_limit(self):
        res = margins.bucket_ms(5.0)

        def late(s):
            s["ticker"]["late"] = 1
            s["ticker"]["listed"] = [{"due_s": 2.0, "echo_s": 2.0 + (5.0 + res / 2) / 1000}]
        edit(os.path.join(self.dir, "patched", "results", "scenario.json"), late)
        s = self.build()
        self.assertEqual(s["verdict"], "fixed", s["headline"])
        self.assertIn("1 patched RT datagrams took over 5 ms by no more than its 4 us resolution",
                      s["headline"])
        # a whole bucket further: late, not fixed
        edit(os.path.join(self.dir, "patched", "results", "scenario.json"),
             lambda s: s["ticker"]["listed"][0].update(echo_s=2.0 + (5.0 + 2 * res) / 1000))
        self.assertEqual(self.build()["verdict"], "not fixed")

    def test_margins(self):
        rows = {r["input"]: r for r in self.build()["margins"]}
        m = rows["patched RT datagrams, max"]
        self.assertEqual((m["limit"], m["resolution"], m["borderline"]), (5.0, 0.004, False))
        self.assertLess(m["value"], 1.0)
        self.assertEqual(rows["stock freeze probes, latest wake-up"]["resolution"], 0.1)
        self.assertGreater(rows["RT max, stock over patched"]["value"], 10)

    def test_the_histogram_s_buckets(self):
        self.assertEqual([margins.bucket_ms(v) for v in (0.5, 2.047, 2.048, 4.5, 5.0, 8.2)],
                         [0.001, 0.001, 0.002, 0.004, 0.004, 0.008])


if __name__ == "__main__":
    unittest.main()
