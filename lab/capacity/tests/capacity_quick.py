"""lab/capacity/tests/capacity_quick.sh's checks of a make capacity --quick run.

  capacity_quick.py RUN      every assertion on the run directory RUN
"""
import os
import re
import sys

from report import formats, search
from report.files import read_json


def read(path):
    """The JSON file at PATH as its writer wrote it, once its reader
    (report.formats, docs/formats.md; loadgen's sweeps: report.search)
    has found it fits."""
    if path.endswith("sweep.json"):
        return search.check(read_json(path), path)
    return formats.raw(formats.check(path))


def check(run):
    """capacity.json carries the interface and the spec, and says the fix
    buys capacity where the stock kernel stalled."""
    c = read(os.path.join(run, "capacity.json"))
    # The plan went from the spec to each cell and back by one name.
    spec = read(os.path.join(run, "spec.json"))
    assert spec["capacity"]["cpu_quota_pct"] == [10] and spec["repeats"] == 1, spec
    # the co-tenant is the demo's, on its waker for the clock
    assert spec["scenario"]["af_unix"] == 1 and spec["scenario"]["ticker_us"] == 0, spec["scenario"]
    assert c["spec"] == spec, "capacity.json does not carry the spec it ran"
    for k in ("stock", "patched"):
        cell = read(os.path.join(run, k, "r1/results/grid/q10-c30000/cell.json"))
        assert cell == {"cpu_quota_pct": 10, "cotenant_rate_pps": 30000, "cotenant_spin_us": 0}, cell
    assert c["slo"] and c["headline"].startswith("at quota "), c["headline"]
    for k in ("stock", "patched"):
        kern = c["kernels"][k]
        assert kern["outcome"] == "ok", (k, kern["outcome"])
        assert [q["cpu_quota_pct"] for q in kern["by_quota"]] == [10], kern["by_quota"]
        for q in kern["by_quota"]:
            assert not q["problems"], (k, q["cpu_quota_pct"], q["problems"])
            steps = q["steps"]
            assert steps and all(s["repeat"] == 1 for s in steps), (k, steps)
            for s in steps:
                assert set(s["latency_us"]) >= {"p50", "p99", "p99_9", "max"}, s
                assert s["lost"] is not None and s["throttled_periods"] is not None, s
                assert os.path.getsize(os.path.join(run, s["hgrm"])) > 0, s["hgrm"]
            # one repeat's search, its end and what bounded it; every rate it tried
            assert len(q["searches"]) == 1 and q["searches"][0]["end"] in ("found", "none", "to"), q
            assert {r["target_rate"] for r in q["rates"]} == {s["target_rate"] for s in steps}, q
            # never a capacity above a step that missed
            cap = q["capacity_pps"]
            if cap is not None:
                assert all(s["meets_slo"] for s in steps if s["target_rate"] <= cap), (k, q)
                assert q["capacity"]["repeats"] == 1 and not q["capacity"]["unstable"], q["capacity"]
            else:
                assert not steps[0]["meets_slo"] and q["searches"][0]["end"] == "none", q
        # the co-tenant was throttled under the 10 % quota
        assert sum(s["throttled_periods"] for s in kern["by_quota"][0]["steps"]) > 0, k
    # The headline's quota is where the patched kernel gains the most.
    q = int(c["headline"].split()[2].rstrip("%,"))
    cells = {k: next(x for x in c["kernels"][k]["by_quota"] if x["cpu_quota_pct"] == q)
             for k in ("stock", "patched")}
    st, pa = cells["stock"]["capacity_pps"], cells["patched"]["capacity_pps"]
    print(f"quota {q} %: stock {st}, patched {pa}")
    assert pa is not None and (st is None or pa > st), (q, st, pa)
    # the stock kernel failed where the bug bites: a stall, not a hiccup
    first = next(s for s in cells["stock"]["steps"] if not s["meets_slo"])
    assert first["target_rate"] <= pa and first["latency_us"]["p99_9"] > 100000, first
    # and the cell's kernel trace says so: an RT wait on the ready-list lock
    # held by a throttled task (lab/ktrace), which the patched kernel's steps
    # never show; it is what bounded the stock search.
    assert first.get("cause") == "lock" and first["trace"]["lock_waits"] >= 1, first
    assert cells["stock"]["limit"] == "lock", cells["stock"]["searches"]
    assert all(s["trace"]["lock_waits"] == 0 for s in cells["patched"]["steps"]), cells["patched"]["steps"]
    # Each guest sent its cell's trace pages for the missed steps' spans
    # only (lab/capacity/grid's missed, ktrace stop --keep): each missed
    # step from 1 s before it lies within what was kept; a cell that
    # missed no step sent every page.
    for k in ("stock", "patched"):
        cell = os.path.join(run, k, "r1/results/grid/q10-c30000")
        steps = read(os.path.join(cell, "sweep.json"))["steps"]
        missed = [st["result"] for st in steps if not st["meets_slo"]]
        kept = os.path.join(cell, "cotenant/trace/kept.txt")
        if not missed:
            assert not os.path.exists(kept), (k, "kept.txt without a missed step")
            continue
        with open(kept, encoding="utf-8") as f:
            spans = [tuple(map(float, ln.split())) for ln in f]
        for r in missed:
            a, b = r["start_mono_s"] - 1, r["start_mono_s"] + r["elapsed_s"]
            assert any(x <= a and b <= y for x, y in spans), (k, a, b, spans)
        # and said what it kept of each CPU's pages (ktrace-drain)
        with open(os.path.join(cell, "cotenant/trace/drain.log"), encoding="utf-8") as f:
            said = f.read().splitlines()
        assert len(said) == 2 and all(re.fullmatch(r"\d+ bytes, \d+ of \d+ pages", ln) for ln in said), said
        # and the host read every missed step from what was kept
        for st in c["kernels"][k]["by_quota"][0]["steps"]:
            if not st["meets_slo"]:
                assert st["trace"]["covered"], (k, st)
    # the tightest quota for the planned rate (the lowest): patched 10 %,
    # stock none of the plan's
    planned = c["quota_for_rate"]
    assert planned["rt_rate_pps"] == spec["capacity"]["planned_rate_pps"], planned
    assert planned["stock"] is None and planned["patched"]["cpu_quota_pct"] == 10, planned


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    check(sys.argv[1])
