#!/usr/bin/env python3
"""The demo scenario runner's record of a forced stall
(lab/demo/tests/report_scenario.sh).

  demo_scenario.py stopped OUT
      OUT is demo-scenario's --out directory of a run (--stall-ms 150) in
      which relay was stopped (SIGSTOP) for 0.6 s: both processes ended
      well, exactly that stall was recorded (detected within 150-400 ms,
      the quota lifted at once and restored after it ended), the watchdog
      and the RT ticker saw it, and every result file is there. Exit 0
      when so, 1 naming what is not.
"""
import argparse
import csv
import json
import os
import sys

FILES = ("relay.json", "loadgen.json", "relay.tick_lateness.hgrm", "loadgen.hgrm",
         "relay.timeseries.csv", "cpu.stat", "ticker.hgrm")


class Failed(Exception):
    """The record is not that of the forced stall."""


def expect(holds, what, seen):
    if not holds:
        raise Failed("%s: %s" % (what, seen))


def read_json(out, name):
    with open(os.path.join(out, name), encoding="utf-8") as f:
        return json.load(f)


def stopped(out):
    """Every check of the directory OUT; the first that fails raises Failed."""
    s = read_json(out, "scenario.json")
    expect(s["problems"] == [], "problems", s["problems"])
    # loadgen ends by itself, or is stopped (SIGINT, 130) when it ran late.
    p = s["processes"]
    expect(p["relay"] == "exited 0", "relay did not exit 0", p)
    expect(p["loadgen"] == "exited 0" or (p["loadgen"] == "exited 130" and s["loadgen_stopped_at_end"]),
           "loadgen did not exit 0 (nor 130, stopped at the end)", p)
    expect(len(s["stalls"]) == 1, "expected exactly the forced stall, got", s["stalls"])
    st = s["stalls"][0]
    # Stopped for 0.6 s: detected after 150 ms, lifted at once, ended on
    # SIGCONT while still lifted, then the quota went back.
    expect(500 <= st["length_ms"] <= 1500, "the stall's length is not 500-1500 ms", st)
    expect(0.14 <= st["detected_s"] - st["start_s"] <= 0.4, "the stall was not detected after 140-400 ms", st)
    expect(st["lift_s"] - st["detected_s"] < 0.1, "the quota was not lifted within 100 ms of the detection",
           st)
    expect(st["cleared"] and st["ended"] and st["restore_s"] >= st["end_s"],
           "the stall did not end, or the quota went back before it did", st)
    expect(200 <= st["after_lift_ms"] <= 1300, "the stall did not go on 200-1300 ms after the lift", st)
    with open(os.path.join(out, "events.csv"), encoding="utf-8") as f:
        kinds = sorted(r["kind"] for r in csv.DictReader(f))
    expect(kinds == ["quota_lift", "quota_restore", "stall"], "events.csv's kinds", kinds)
    expect(s["cgroup"]["nr_periods"] > 0, "no quota period in cgroup", s["cgroup"])
    w = s["watchdog"]
    expect(w["polls"] > 300 and w["max_poll_late_ms"] < 50, "the watchdog polled too little or too late", w)
    for name in FILES:
        expect(os.path.getsize(os.path.join(out, name)) > 0, "empty", name)
    relay = read_json(out, "relay.json")
    expect(relay["sched"]["realtime"], "relay did not run real-time", relay["sched"])
    # The RT ticker (on by default) saw the stopped relay as late datagrams,
    # and the freeze probes did not take the stop for a pause of the machine.
    t = s["ticker"]
    expect(t["enabled"] and t["echoes"] > 0 and t["send_errors"] == 0, "the ticker did not run cleanly", t)
    expect(t["late"] >= 1 and t["late_unexplained"] == t["late"] - t["late_in_guest_freeze"] >= 1,
           "the ticker's late datagrams are not the stall's", t)
    expect([f["cpu"] for f in t["freeze_probes"]] == [s["params"]["watchdog_cpu"], s["params"]["cpu"]],
           "the freeze probes are not on the watchdog's and relay's CPUs", t)
    expect(all(0 <= f.get("in_stalls", -1) <= f["freezes"] for f in t["freeze_probes"]),
           "freezes inside stalls are not counted among the freezes", t["freeze_probes"])
    # The relay's own record agrees: one tick at least ~0.5 s late.
    expect(relay["tick_lateness_us"]["max"] >= 450000, "relay's ticks were not 450 ms late",
           relay["tick_lateness_us"])


def main(argv):
    p = argparse.ArgumentParser(prog="demo_scenario.py", description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    sub.add_parser("stopped").add_argument("out")
    a = p.parse_args(argv)
    try:
        stopped(a.out)
    except Failed as e:
        print("demo_scenario.py %s: %s" % (a.cmd, e), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
