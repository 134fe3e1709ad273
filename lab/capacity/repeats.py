"""A capacity cell over its independent repeats: the rule that turns the
searches of one kernel, quota and co-tenant rate, each in a guest of its
own (its own boot and salt, lab/capacity/run), into the cell's answer,
and the rule by which two runs agree. loadgen sweep --search applies the
same rule to its own --searches (loadgen/search.c, search_summarize).

  mk/py lab.capacity.repeats RUN_A RUN_B   the cells of two runs side by
                                           side, and whether they agree

A repeat found a capacity (the last rate that met; a lower bound when it
ended at a ceiling of loadgen's) or none (its lowest rate missed); one
that ended at loadgen's own limit at its lowest rate says neither. Over
the repeats:

- all found one: the median (the lower middle of an even count) and the
  interval from the lowest to the highest, which holds the median of
  what such a search finds with confidence 1 - 2^(1-k) for k independent
  repeats (75 % for 3, 94 % for 5);
- all found none: none;
- some found one and some none: they disagree, and there is no single
  number: unstable, with the fraction that found one and the interval of
  those that did.

Two runs agree on a cell when both say none, both say unstable, or both
found one and their intervals overlap.
"""
import os
import sys
from dataclasses import dataclass

from report import formats
from report.files import DataError


@dataclass(frozen=True)
class Repeat:
    """One repeat's search of a cell: how it ended (loadgen's found, none,
    to, sender), the capacity it found (None when none met), and whether
    that is a lower bound (a ceiling of loadgen's: the highest rate the
    plan allows, or what its senders could send)."""
    repeat: int
    end: str
    capacity_pps: float | None
    at_least: bool = False


def combine(repeats):
    """The cell's answer over REPEATS (Repeat, those that ran without a
    problem): {"repeats", "found", "none", "unstable", "fraction_found",
    "median_pps", "min_pps", "max_pps", "confidence", "at_least"}, or None
    when there is no repeat at all. median_pps is None when none found one
    or the repeats disagree."""
    if not repeats:
        return None
    found = sorted((r for r in repeats if r.capacity_pps is not None),
                   key=lambda r: (r.capacity_pps, r.at_least))
    n, k = len(repeats), len(found)
    none = sum(1 for r in repeats if r.end == "none")
    unstable = k > 0 and none > 0
    mid = found[(k - 1) // 2] if k and not unstable else None
    return {"repeats": n, "found": k, "none": none, "unstable": unstable,
            "fraction_found": k / n,
            "median_pps": mid.capacity_pps if mid else None,
            "min_pps": found[0].capacity_pps if found else None,
            "max_pps": found[-1].capacity_pps if found else None,
            "confidence": 1 - 2.0 ** (1 - k) if k >= 2 else 0.0,
            "at_least": bool(mid and mid.at_least)}


def kind(c):
    """A combined cell in one word: "found", "none", "unstable", "unknown"
    (only loadgen's own limits) or "no result" (None: no repeat ran)."""
    if c is None:
        return "no result"
    if c["unstable"]:
        return "unstable"
    return "found" if c["found"] else "none" if c["none"] else "unknown"


def agree(a, b):
    """Whether two runs' answers for one cell (combine()'s) agree: both
    none, both unstable, or both found one with intervals that overlap.
    A cell with no result, or only loadgen's own limits, agrees with
    nothing."""
    ka, kb = kind(a), kind(b)
    if ka != kb or ka in ("no result", "unknown"):
        return False
    if ka == "found":
        return a["min_pps"] <= b["max_pps"] and b["min_pps"] <= a["max_pps"]
    return True


def text(c):
    """A combined cell in words: "26000 pps (24000-28000 over 3 repeats)",
    "none (3 repeats)", "unstable: found in 1 of 3 repeats (5000 pps)",
    ">= 468 pps (468-468 over 2 repeats; a ceiling of loadgen's)"."""
    if c is None:
        return "no result"
    n = c["repeats"]
    over = f"{n} repeat{'s' if n != 1 else ''}"
    lo, hi = c["min_pps"], c["max_pps"]
    span = f"{lo:.0f}-{hi:.0f}" if lo is not None and hi > lo else (f"{hi:.0f}" if hi is not None else "")
    if c["unstable"]:
        return f"unstable: found in {c['found']} of {over} ({span} pps)"
    if not c["found"]:
        return f"none ({over})" if c["none"] else f"unknown ({over}: loadgen's own limit)"
    if c["at_least"]:
        return f">= {c['median_pps']:.0f} pps ({span} over {over}; a ceiling of loadgen's)"
    return f"{c['median_pps']:.0f} pps ({span} over {over})"


def compare(a, b):
    """Two capacity.json documents' cells side by side: [(kernel, quota,
    co-tenant rate, A's text, B's text, agree)] and whether all agree."""
    rows = []
    for k in ("stock", "patched"):
        cells = {}
        for side, doc in enumerate((a, b)):
            for c in doc["kernels"][k]["by_quota"]:
                key = (c["cpu_quota_pct"], c["cotenant_rate_pps"])
                cells.setdefault(key, [None, None])[side] = c.get("capacity")
        for (q, rate), (x, y) in sorted(cells.items()):
            rows.append((k, q, rate, text(x), text(y), agree(x, y)))
    return rows, all(r[-1] for r in rows)


def main(argv):
    if len(argv) != 2:
        print("usage: mk/py lab.capacity.repeats RUN_A RUN_B", file=sys.stderr)
        return 64
    try:
        docs = [formats.raw(formats.read(formats.Capacity, os.path.join(run, "capacity.json")))
                for run in argv]
    except DataError as e:
        print(f"repeats: {e}", file=sys.stderr)
        return 65
    rows, ok = compare(*docs)
    for k, q, rate, x, y, same in rows:
        print(f"{k:8} {q:3d} % {rate:6d} pps  {x:45}  {y:45}  {'agree' if same else 'DISAGREE'}")
    print("every cell agrees" if ok else "some cells disagree")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
