#!/usr/bin/env python3
"""Summarize the selftest guests of kernel/selftests/run.

Reads OUT/<kernel>/{outcome,results/} (the selftests) and
OUT/cost-<i>-<kernel>/results/ (the cost benchmarks, any number of boots
per kernel), writes OUT/selftests.json and OUT/cost.json, prints a table,
and exits 0 only when the patched kernel's guest finished and every epoll
selftest passed: in the full run, or, for a test that failed there, when
run alone again (it is then listed as flaky).

Each cost figure comes with an interval: the ratio patched / stock of the
medians of all rounds, and a 95 % bootstrap interval of that ratio
(resampling each kernel's rounds). A figure whose interval holds 1.0 is
"inconclusive": the runs cannot tell the kernels apart.

Every file it reads from the guests (epoll-stress.jsonl, boot.json) and
both it writes go through their readers (report/formats.py,
docs/formats.md): a line or file that does not fit is refused naming it
and the field, exit 65.
"""
import argparse
import json
import os
import random
import re
import statistics
import sys

from report import formats
from report.files import DataError

TAP_RESULT = re.compile(r"^(ok|not ok) (\d+) (.*?)(?:\s+#\s*(SKIP|skip).*)?$")
TAP_PLAN = re.compile(r"^1\.\.(\d+)$", re.M)
PERF_AVG = re.compile(r"Averaged (\d+) operations/sec \(\+- ([0-9.]+)%\)")


def read(path, default=""):
    try:
        with open(path) as f:
            return f.read()
    except FileNotFoundError:
        return default


def tap_results(tap):
    """(passed, failed, skipped) test names from kselftest TAP output."""
    passed, failed, skipped = [], [], []
    for line in tap.splitlines():
        m = TAP_RESULT.match(line.strip())
        if not m:
            continue
        name = m.group(3).strip()
        if m.group(4):
            skipped.append(name)
        elif m.group(1) == "ok":
            passed.append(name)
        else:
            failed.append(name)
    return passed, failed, skipped


def passed_alone(results, name):
    """Whether test name (global.X) passed in one of its runs alone."""
    short = name.split(".", 1)[-1]
    for i in range(1, 10):
        tap = read(os.path.join(results, "rerun-%s-%d.tap" % (short, i)), None)
        if tap is None:
            return False
        if name in tap_results(tap)[0]:
            return True
    return False


def selftests(results):
    """The full run's counts, a failure that passed alone counted as flaky."""
    tap = read(os.path.join(results, "selftest.tap"))
    passed, failed, skipped = tap_results(tap)
    plan = TAP_PLAN.search(tap)
    flaky = [t for t in failed if passed_alone(results, t)]
    rc = read(os.path.join(results, "selftest.rc")).strip()
    return {
        "exit_status": int(rc) if rc.isdigit() else None,
        "planned": int(plan.group(1)) if plan else None,
        "passed": len(passed) + len(flaky),
        "failed": len(failed) - len(flaky),
        "skipped": len(skipped),
        "failed_tests": [t for t in failed if t not in flaky],
        "flaky_tests": flaky,
    }


COST_DIR = re.compile(r"^cost-(\d+)-(\w+)$")
BOOTSTRAP_ROUNDS = 4000
CONFIDENCE = 0.95


def perf_wait(results_dirs):
    runs = []
    for results in results_dirs:
        for i in range(1, 100):
            text = read(os.path.join(results, "perf-epoll-wait-%d.txt" % i), None)
            if text is None:
                break
            m = PERF_AVG.search(text)
            if m:
                runs.append({"ops_per_sec": int(m.group(1)), "stddev_pct": float(m.group(2))})
    out = {"command": "perf bench epoll wait -t 4 -r 5", "runs": runs}
    if runs:
        out["median_ops_per_sec"] = statistics.median(r["ops_per_sec"] for r in runs)
    return out


def stress(results_dirs):
    """epoll-stress's rounds of every boot and their medians by threads; a
    line that is not JSON (a round cut short) is left out, one that is
    and does not fit its record is a DataError."""
    rows = []
    for results in results_dirs:
        path = os.path.join(results, "epoll-stress.jsonl")
        for n, line in enumerate(read(path).splitlines(), 1):
            try:
                obj = json.loads(line)
            except ValueError:
                continue
            formats.parse(formats.StressRound, obj, "%s:%d" % (path, n))
            rows.append(obj)
    by_threads = {}
    for r in rows:
        by_threads.setdefault(r["threads"], []).append(r["events_per_ms"])
    medians = [{"threads": t, "median_events_per_ms": statistics.median(v), "rounds": len(v)}
               for t, v in sorted(by_threads.items())]
    return {"command": "epoll-stress -t T -n 20000", "runs": rows, "medians": medians}


def ratio_interval(stock, patched, seed=1):
    """patched/stock ratio of the medians and its bootstrap interval, from
    the two lists of samples; None when either has fewer than 2."""
    if len(stock) < 2 or len(patched) < 2:
        return None
    rng = random.Random(seed)   # the same files give the same interval
    ratios = sorted(statistics.median(rng.choices(patched, k=len(patched))) /
                    statistics.median(rng.choices(stock, k=len(stock)))
                    for _ in range(BOOTSTRAP_ROUNDS))
    tail = (1 - CONFIDENCE) / 2
    lo, hi = ratios[int(tail * len(ratios))], ratios[int((1 - tail) * len(ratios)) - 1]
    if lo <= 1.0 <= hi:
        word = "inconclusive"
    else:
        word = "patched faster" if lo > 1.0 else "patched slower"
    return {"ratio": statistics.median(patched) / statistics.median(stock),
            "low": lo, "high": hi, "confidence": CONFIDENCE,
            "samples": [len(stock), len(patched)], "verdict": word}


def compare(cost):
    """Every cost figure, stock against patched, with its interval."""
    if not {"stock", "patched"} <= set(cost):
        return []
    out = []

    def add(name, unit, stock, patched):
        iv = ratio_interval(stock, patched)
        if iv:
            out.append(dict(name=name, unit=unit, stock_median=statistics.median(stock),
                            patched_median=statistics.median(patched), **iv))

    add("perf bench epoll wait -t 4", "ops/s",
        *[[r["ops_per_sec"] for r in cost[k]["perf_bench_epoll_wait"]["runs"]]
          for k in ("stock", "patched")])
    threads = sorted({r["threads"] for k in ("stock", "patched")
                      for r in cost[k]["epoll_stress"]["runs"]})
    for t in threads:
        add("epoll-stress %d producers" % t, "events/ms",
            *[[r["events_per_ms"] for r in cost[k]["epoll_stress"]["runs"] if r["threads"] == t]
              for k in ("stock", "patched")])
    return out


def boot_clock(d):
    """The clock kernel/vm/boot ran a guest on (boot.json), or None."""
    try:
        return formats.read(formats.Boot, os.path.join(d, "boot.json")).clock
    except DataError:
        return None


def cost_dirs(out):
    """{kernel: [results dirs of its cost boots, in boot order]}."""
    found = {}
    for d in os.listdir(out):
        m = COST_DIR.match(d)
        if m and os.path.isdir(os.path.join(out, d)):
            found.setdefault(m.group(2), []).append((int(m.group(1)), os.path.join(out, d)))
    return {k: [d for _, d in sorted(v)] for k, v in found.items()}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--line", required=True)
    ap.add_argument("--manifest", required=True)
    ap.add_argument("out")
    args = ap.parse_args()

    with open(args.manifest) as f:
        manifest = json.load(f)

    def order(d):
        return (d != "stock", d != "patched", d)
    kernels = sorted((d for d in os.listdir(args.out) if not COST_DIR.match(d) and
                      os.path.isfile(os.path.join(args.out, d, "outcome"))), key=order)
    boots = cost_dirs(args.out)
    st, cost = {}, {}
    for k in kernels:
        kd = os.path.join(args.out, k)
        results = os.path.join(kd, "results")
        outcome = read(os.path.join(kd, "outcome")).strip()
        st[k] = dict(outcome=outcome,
                     kernel_release=read(os.path.join(results, "kernel-release")).strip(),
                     console_log=os.path.join(kd, "console.log"),
                     clock=boot_clock(kd), **selftests(results))
    for k in sorted(boots, key=order):
        dirs = boots[k]
        loads = [[float(x) for x in read(os.path.join(d, "host-loadavg")).split()] for d in dirs]
        res = [os.path.join(d, "results") for d in dirs]
        cost[k] = {"perf_bench_epoll_wait": perf_wait(res), "epoll_stress": stress(res),
                   "boots": [dict(dir=os.path.basename(d), outcome=read(os.path.join(d, "outcome")).strip(),
                                  clock=boot_clock(d), host_loadavg_1min_before_after=l)
                             for d, l in zip(dirs, loads)]}
    comparison = compare(cost)

    common = {"line": args.line, "package": manifest["package"], "version": manifest["version"],
              "preempt_rt": manifest["preempt_rt"], "vcpus": 2, "emulation": "qemu TCG"}
    for name, cls, obj in (("selftests.json", formats.Selftests, dict(common, kernels=st)),
                           ("cost.json", formats.Cost, dict(common, kernels=cost, comparison=comparison))):
        path = os.path.join(args.out, name)
        formats.parse(cls, json.loads(json.dumps(obj)), path)
        with open(path, "w") as f:
            json.dump(obj, f, indent=2)

    print("linux %s (%s %s), epoll selftests, QEMU TCG 2 vCPUs"
          % (args.line, manifest["package"], manifest["version"]))
    print("%-10s %-11s %-8s %6s %6s %6s" % ("kernel", "guest", "clock", "pass", "fail", "skip"))
    for k in kernels:
        s = st[k]
        print("%-10s %-11s %-8s %6d %6d %6d" % (k, s["outcome"], s["clock"], s["passed"],
                                                s["failed"], s["skipped"]))
        if s["failed_tests"]:
            print("           failed: %s" % ", ".join(s["failed_tests"]))
        if s["flaky_tests"]:
            print("           flaky: %s failed in the full run, then passed alone"
                  % ", ".join(s["flaky_tests"]))
        if s["planned"] != s["passed"] + s["failed"] + s["skipped"]:
            print("           incomplete: %s tests planned, %d reported"
                  % (s["planned"], s["passed"] + s["failed"] + s["skipped"]))
    if comparison:
        loads = [x for k in cost for b in cost[k]["boots"] for x in b["host_loadavg_1min_before_after"]]
        print()
        nboots = sum(len(c["boots"]) for c in cost.values())
        print("cost of the fix, host clock, %d boots (host load %.1f-%.1f): patched / stock "
              "of the medians, %.0f %% interval"
              % (nboots, min(loads or [0]), max(loads or [0]), CONFIDENCE * 100))
        print("%-30s %10s %10s %7s %15s  %s" % ("benchmark", "stock", "patched", "ratio",
                                                "interval", "n"))
        for c in comparison:
            print("%-30s %10.0f %10.0f %7.2f %15s  %d/%d  %s"
                  % (c["name"] + " " + c["unit"], c["stock_median"], c["patched_median"],
                     c["ratio"], "%.2f-%.2f" % (c["low"], c["high"]), c["samples"][0],
                     c["samples"][1], c["verdict"]))
    print("results: %s/selftests.json, %s/cost.json" % (args.out, args.out))

    p = st.get("patched")
    ok = (p is not None and p["outcome"] == "ok" and p["failed"] == 0 and p["passed"] > 0
          and p["planned"] == p["passed"] + p["skipped"])
    if p is not None and not ok:
        print("FAIL: the patched kernel did not pass the epoll selftests (guest %s, %d failed)"
              % (p["outcome"], p["failed"]), file=sys.stderr)
    return 0 if ok or p is None else 1


if __name__ == "__main__":
    try:
        sys.exit(main())
    except DataError as e:
        print("summarize: %s" % e, file=sys.stderr)
        sys.exit(65)
