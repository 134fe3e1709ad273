#!/usr/bin/env python3
"""Summarize the selftest guests of kernel/selftests/run.

Reads OUT/<kernel>/{outcome,results/} for kernel in stock, patched (and any
other directory holding an outcome file), writes OUT/selftests.json and
OUT/cost.json, prints a table, and exits 0 only when the patched kernel's
guest finished and every epoll selftest passed: in the full run, or, for a
test that failed there, when run alone again (it is then listed as flaky).
"""
import argparse
import json
import os
import re
import statistics
import sys

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


def perf_wait(results):
    runs = []
    for i in range(1, 10):
        text = read(os.path.join(results, "perf-epoll-wait-%d.txt" % i), None)
        if text is None:
            break
        m = PERF_AVG.search(text)
        if m:
            runs.append({"ops_per_sec": int(m.group(1)), "stddev_pct": float(m.group(2))})
    out = {"command": "perf bench epoll wait -t 4 -r 10", "runs": runs}
    if runs:
        out["median_ops_per_sec"] = statistics.median(r["ops_per_sec"] for r in runs)
    return out


def stress(results):
    rows = []
    for line in read(os.path.join(results, "epoll-stress.jsonl")).splitlines():
        try:
            rows.append(json.loads(line))
        except ValueError:
            continue
    by_threads = {}
    for r in rows:
        by_threads.setdefault(r["threads"], []).append(r["events_per_ms"])
    medians = [{"threads": t, "median_events_per_ms": statistics.median(v), "rounds": len(v)}
               for t, v in sorted(by_threads.items())]
    return {"command": "epoll-stress -t T -n 20000", "runs": rows, "medians": medians}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--line", required=True)
    ap.add_argument("--manifest", required=True)
    ap.add_argument("out")
    args = ap.parse_args()

    with open(args.manifest) as f:
        manifest = json.load(f)
    kernels = sorted(
        (d for d in os.listdir(args.out) if os.path.isfile(os.path.join(args.out, d, "outcome"))),
        key=lambda d: (d != "stock", d != "patched", d),
    )
    st, cost = {}, {}
    for k in kernels:
        kd = os.path.join(args.out, k)
        results = os.path.join(kd, "results")
        outcome = read(os.path.join(kd, "outcome")).strip()
        st[k] = dict(outcome=outcome,
                     kernel_release=read(os.path.join(results, "kernel-release")).strip(),
                     console_log=os.path.join(kd, "console.log"),
                     **selftests(results))
        load = read(os.path.join(kd, "host-loadavg")).split()
        cost[k] = {"perf_bench_epoll_wait": perf_wait(results), "epoll_stress": stress(results),
                   "host_loadavg_1min_before_after": [float(x) for x in load]}

    common = {"line": args.line, "package": manifest["package"], "version": manifest["version"],
              "preempt_rt": manifest["preempt_rt"], "vcpus": 2, "emulation": "qemu TCG"}
    with open(os.path.join(args.out, "selftests.json"), "w") as f:
        json.dump(dict(common, kernels=st), f, indent=2)
    with open(os.path.join(args.out, "cost.json"), "w") as f:
        json.dump(dict(common, kernels=cost), f, indent=2)

    print("linux %s (%s %s), epoll selftests and cost, QEMU TCG 2 vCPUs"
          % (args.line, manifest["package"], manifest["version"]))
    print("%-10s %-11s %6s %6s %6s %14s %-12s %s" % ("kernel", "guest", "pass", "fail", "skip",
                                                    "epoll-wait/s", "host load", "epoll-stress events/ms, median (1/2/4/8 thr)"))
    for k in kernels:
        s, c = st[k], cost[k]
        wait = c["perf_bench_epoll_wait"].get("median_ops_per_sec")
        ev = "/".join("%.0f" % r["median_events_per_ms"] for r in c["epoll_stress"]["medians"]) or "-"
        load = "/".join("%.1f" % x for x in c["host_loadavg_1min_before_after"]) or "-"
        print("%-10s %-11s %6d %6d %6d %14s %-12s %s" % (k, s["outcome"], s["passed"], s["failed"],
                                                         s["skipped"], "%.0f" % wait if wait else "-", load, ev))
        if s["failed_tests"]:
            print("           failed: %s" % ", ".join(s["failed_tests"]))
        if s["flaky_tests"]:
            print("           flaky: %s failed in the full run, then passed alone"
                  % ", ".join(s["flaky_tests"]))
        if s["planned"] != s["passed"] + s["failed"] + s["skipped"]:
            print("           incomplete: %s tests planned, %d reported"
                  % (s["planned"], s["passed"] + s["failed"] + s["skipped"]))
    print("results: %s/selftests.json, %s/cost.json" % (args.out, args.out))

    p = st.get("patched")
    ok = (p is not None and p["outcome"] == "ok" and p["failed"] == 0 and p["passed"] > 0
          and p["planned"] == p["passed"] + p["skipped"])
    if p is not None and not ok:
        print("FAIL: the patched kernel did not pass the epoll selftests (guest %s, %d failed)"
              % (p["outcome"], p["failed"]), file=sys.stderr)
    return 0 if ok or p is None else 1


if __name__ == "__main__":
    sys.exit(main())
