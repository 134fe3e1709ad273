#!/usr/bin/env python3
"""The follow-up patch's cost against the fix alone (kernel/selftests/followup).

  compare.py BASE_COST FOLLOWUP_COST OUT

BASE_COST is the cost.json of the stock and patched kernels (the fix),
FOLLOWUP_COST that of the kernel with the fix and the follow-up (its
"patched"). Writes OUT (compare.json: per kernel, perf bench epoll wait's
median operations per second and epoll-stress's median events per ms by
threads) and prints a table. Both cost.json are read through their
reader (report/formats.py): one that does not fit is refused naming the
file and the field, exit 65; what it writes fits compare.json's.
"""
import json
import sys

from report import formats
from report.files import DataError


def read(path):
    """The cost.json at PATH, checked, as the object it was."""
    return formats.raw(formats.read(formats.Cost, path))


def wait(k):
    return k["perf_bench_epoll_wait"].get("median_ops_per_sec")


def stress(k):
    return {r["threads"]: r["median_events_per_ms"] for r in k["epoll_stress"]["medians"]}


def compare(base, followup):
    """{kernel: figures} for stock, fix and fix+followup, from the kernels
    of the two cost.json; a kernel missing from them is left out."""
    rows = {}
    for name, k in (("stock", base.get("stock")), ("fix", base.get("patched")), ("fix+followup", followup)):
        if k:
            rows[name] = {"perf_bench_epoll_wait_ops_per_sec": wait(k),
                          "epoll_stress_events_per_ms": stress(k)}
    return rows


def table(rows):
    lines = ["%-14s %14s  %s" % ("kernel", "epoll-wait/s", "epoll-stress events/ms by threads")]
    for name, r in rows.items():
        lines.append("%-14s %14s  %s" % (name, r["perf_bench_epoll_wait_ops_per_sec"],
                     " ".join("%s:%.0f" % kv for kv in sorted(r["epoll_stress_events_per_ms"].items()))))
    return lines


def main(argv):
    if len(argv) != 4:
        sys.exit(__doc__)
    try:
        followup = read(argv[2])["kernels"].get("patched")
        if followup is None:
            raise DataError("%s: kernels.patched: missing" % argv[2])
        rows = compare(read(argv[1])["kernels"], followup)
        formats.parse(formats.Compare, json.loads(json.dumps(rows)), argv[3])
    except DataError as e:
        print("compare: %s" % e, file=sys.stderr)
        return 65
    with open(argv[3], "w", encoding="utf-8") as f:
        json.dump(rows, f, indent=2)
    print("\n".join(table(rows)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
