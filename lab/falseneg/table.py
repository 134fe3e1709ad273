"""The false-negative guests' counts (lab/falseneg/run), one row
per kernel: epoll_wait(..., 0) calls, how many returned 0 with an event
ready, the rate and its one-sided 95 % upper bound. Writes DIR/falseneg.json
and prints the table.

    mk/py lab.falseneg.table DIR NAME...     (lab/falseneg/run.py's last step)

Exit status: 0 every kernel has its counts; 1 one has none (its row says
so); 2 usage."""
import json
import math
import os
import sys

from report import formats
from report.files import DataError


def upper_95(k, n):
    """The one-sided 95 % upper bound of a rate after k events in n trials:
    the Poisson mean whose chance of k or fewer events is 5 % (3.00/n for
    k = 0, 4.74/n for 1, 6.30/n for 2), found by bisection."""
    if n <= 0:
        return None

    def at_most_k(lam):
        logs = [i * math.log(lam) - lam - math.lgamma(i + 1) for i in range(k + 1)]
        top = max(logs)
        return math.exp(top) * sum(math.exp(v - top) for v in logs)

    lo, hi = 1e-12, k + 10 * math.sqrt(k + 1) + 10
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if at_most_k(mid) > 0.05 else (lo, mid)
    return hi / n


def row(directory, name):
    """One kernel's row from DIR/NAME/results/: its passes summed."""
    res = os.path.join(directory, name, "results")
    out = {"name": name, "release": None, "passes": [], "calls": 0, "false_negatives": 0}
    try:
        with open(os.path.join(res, "kernel-release"), encoding="utf-8") as f:
            out["release"] = f.read().strip()
        for p in formats.read_lines(formats.FalsenegPass, os.path.join(res, "falseneg.jsonl")):
            out["passes"].append(formats.raw(p))
            out["calls"] += p.calls
            out["false_negatives"] += p.false_negatives
    except (OSError, DataError) as e:
        out["error"] = str(e)
        return out
    if not out["passes"]:
        out["error"] = f"{res}/falseneg.jsonl: no passes"
        return out
    n, k = out["calls"], out["false_negatives"]
    out["rate"] = k / n if n else None
    out["rate_upper_95"] = upper_95(k, n)
    return out


def table(rows):
    lines = [f"{'kernel':<16} {'release':<32} {'calls':>10} {'false neg.':>10} "
             f"{'rate':>9} {'95% upper':>9}"]
    for r in rows:
        if "error" in r:
            lines.append(f"{r['name']:<16} {'-':<32} no counts: {r['error']}")
            continue
        lines.append(f"{r['name']:<16} {r['release']:<32} {r['calls']:>10} "
                     f"{r['false_negatives']:>10} {r['rate']:>9.2g} {r['rate_upper_95']:>9.2g}")
    return "\n".join(lines)


def main(argv):
    if len(argv) < 2:
        print(__doc__.split("\n\n")[1].strip(), file=sys.stderr)
        return 2
    directory, names = argv[0], argv[1:]
    rows = [row(directory, n) for n in names]
    with open(os.path.join(directory, "falseneg.json"), "w", encoding="utf-8") as f:
        json.dump({"kernels": rows}, f, indent=1)
        f.write("\n")
    print(table(rows))
    return 1 if any("error" in r for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
