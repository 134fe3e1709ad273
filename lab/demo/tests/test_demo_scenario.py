"""demo_scenario's look at a scenario run's record, on made-up directories."""
import contextlib
import copy
import io
import json
import os
import tempfile
import unittest

from lab.demo.tests import demo_scenario

STALL = {"start_s": 2.0, "detected_s": 2.16, "lift_s": 2.165, "end_s": 2.6, "restore_s": 2.7,
         "length_ms": 600, "after_lift_ms": 435, "cleared": True, "ended": True}
SCENARIO = {
    "problems": [],
    "processes": {"relay": "exited 0", "loadgen": "exited 0"},
    "loadgen_stopped_at_end": False,
    "stalls": [STALL],
    "cgroup": {"nr_periods": 40},
    "watchdog": {"polls": 2000, "max_poll_late_ms": 3.5},
    "params": {"cpu": 1, "watchdog_cpu": 0},
    "ticker": {"enabled": True, "echoes": 400, "send_errors": 0, "late": 3, "late_unexplained": 3,
               "late_in_guest_freeze": 0,
               "freeze_probes": [{"cpu": 0, "freezes": 0, "in_stalls": 0},
                                 {"cpu": 1, "freezes": 1, "in_stalls": 1}]},
}
RELAY = {"sched": {"realtime": True}, "tick_lateness_us": {"max": 600000}}
EVENTS = "t_s,kind,detail\n2.16,stall,x\n2.165,quota_lift,y\n2.7,quota_restore,z\n"


class Stopped(unittest.TestCase):
    def setUp(self):
        d = tempfile.TemporaryDirectory()
        self.addCleanup(d.cleanup)
        self.out = d.name
        for name in demo_scenario.FILES:
            self.write(name, "x\n")
        self.write("events.csv", EVENTS)

    def write(self, name, text):
        with open(os.path.join(self.out, name), "w", encoding="utf-8") as f:
            f.write(text if isinstance(text, str) else json.dumps(text))

    def check(self, change=None, relay_change=None):
        s, relay = copy.deepcopy(SCENARIO), copy.deepcopy(RELAY)
        if change:
            change(s)
        if relay_change:
            relay_change(relay)
        self.write("scenario.json", s)
        self.write("relay.json", relay)
        demo_scenario.stopped(self.out)

    def fails(self, words, change=None, relay_change=None):
        with self.assertRaises(demo_scenario.Failed) as e:
            self.check(change, relay_change)
        self.assertIn(words, str(e.exception))

    def test_the_forced_stall(self):
        self.check()

    def test_loadgen_stopped_at_the_end(self):
        def stopped(s):
            s["processes"]["loadgen"] = "exited 130"
            s["loadgen_stopped_at_end"] = True
        self.check(stopped)
        self.fails("loadgen did not exit 0", lambda s: s["processes"].update(loadgen="exited 130"))

    def test_problems_or_a_second_stall(self):
        self.fails("problems: ['late']", lambda s: s["problems"].append("late"))
        self.fails("expected exactly the forced stall", lambda s: s["stalls"].append(STALL))
        self.fails("relay did not exit 0", lambda s: s["processes"].update(relay="killed by signal 9"))

    def test_the_stall_s_times(self):
        self.fails("length is not 500-1500 ms", lambda s: s["stalls"][0].update(length_ms=450))
        self.fails("not detected after 140-400 ms", lambda s: s["stalls"][0].update(detected_s=2.5))
        self.fails("not lifted within 100 ms", lambda s: s["stalls"][0].update(lift_s=2.3))
        self.fails("the quota went back before", lambda s: s["stalls"][0].update(restore_s=2.5))
        self.fails("the stall did not end", lambda s: s["stalls"][0].update(ended=False))
        self.fails("200-1300 ms after the lift", lambda s: s["stalls"][0].update(after_lift_ms=150))

    def test_freezes_inside_stalls(self):
        self.fails("freezes inside stalls are not counted among the freezes",
                   lambda s: s["ticker"]["freeze_probes"][0].update(in_stalls=1))
        self.fails("freezes inside stalls are not counted among the freezes",
                   lambda s: s["ticker"]["freeze_probes"][1].pop("in_stalls"))

    def test_events_files_and_relay(self):
        self.write("events.csv", EVENTS.replace("quota_restore", "stall"))
        self.fails("events.csv's kinds: ['quota_lift', 'stall', 'stall']")
        self.write("events.csv", EVENTS)
        self.write("ticker.hgrm", "")
        self.fails("empty: ticker.hgrm")
        self.write("ticker.hgrm", "x\n")
        self.fails("relay did not run real-time", relay_change=lambda r: r["sched"].update(realtime=False))
        self.fails("relay's ticks were not 450 ms late",
                   relay_change=lambda r: r["tick_lateness_us"].update(max=449999))

    def test_watchdog_and_ticker(self):
        self.fails("no quota period", lambda s: s["cgroup"].update(nr_periods=0))
        self.fails("polled too little or too late", lambda s: s["watchdog"].update(max_poll_late_ms=50))
        self.fails("the ticker did not run cleanly", lambda s: s["ticker"].update(send_errors=1))
        self.fails("late datagrams are not the stall's", lambda s: s["ticker"].update(late_in_guest_freeze=3))
        self.fails("freeze probes are not on", lambda s: s["params"].update(cpu=2))

    def test_main_exits_1_naming_it(self):
        self.write("scenario.json", dict(SCENARIO, problems=["x"]))
        with contextlib.redirect_stderr(io.StringIO()) as err:
            self.assertEqual(demo_scenario.main(["stopped", self.out]), 1)
        self.assertEqual(err.getvalue(), "demo_scenario.py stopped: problems: ['x']\n")


if __name__ == "__main__":
    unittest.main()
