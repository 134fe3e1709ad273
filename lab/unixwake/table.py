"""table: what epoll-unixwake saw on each kernel (lab/unixwake/run),
as a table on the terminal and DIR/unixwake.json.

    mk/py lab.unixwake.table DIR NAME...     (lab/unixwake/run.py's last step)

DIR/NAME/ is kernel/vm/boot's directory of one guest: results/unixwake.json
when the guest finished, else its outcome and console.log. A guest that
hung gets the frames of the task its console's RCU stall or hung-task
report names (the kernel's own account of who waits where).
Exit status: 0 written; 1 a guest neither finished nor hung; 2 usage.
"""
import json
import os
import re
import sys

from report import formats
from report.files import DataError

# The report's header, then its "Call Trace:" and the frames up to the
# entry from user space.
REPORT = re.compile(r"rcu: INFO: rcu_preempt detected stalls|INFO: task .* blocked for more than")
FRAME = re.compile(r"^\s*(?:\? )?([A-Za-z_][\w.]*)\+0x")
STOP = ("do_syscall_64", "entry_SYSCALL_64_after_hwframe", "ret_from_fork")


def blocked(console):
    """The first blocked task's frames in a console's stall report,
    innermost first, as "a < b < c"; None without a report. Frames the
    unwinder marks "?" are left out, unless it marks every one so."""
    frames, state = [], "before"
    for line in console.splitlines():
        if state == "before" and REPORT.search(line):
            state = "report"
        elif state == "report" and "Call Trace:" in line:
            state = "trace"
        elif state == "trace":
            m = FRAME.match(line)
            if m:
                if m[1] in STOP:
                    break
                frames.append((m[1], line.lstrip().startswith("?")))
            elif "</TASK>" in line:
                break
    sure = [f for f, unsure in frames if not unsure]
    return " < ".join(sure or [f for f, _ in frames]) or None


def row(out, name):
    d = os.path.join(out, name)
    path = os.path.join(d, "results", "unixwake.json")
    if os.path.exists(path):
        try:
            r = formats.read(formats.Unixwake, path)
        except DataError as e:
            return {"name": name, "outcome": "bad result", "error": str(e)}
        outcome = "stalled" if r.stalls else "late" if r.late else "ok"
        return dict(formats.raw(r), outcome=outcome, name=name)
    try:
        with open(os.path.join(d, "outcome"), encoding="utf-8") as f:
            outcome = f.read().strip() or "?"
    except OSError:
        outcome = "not run"
    console = ""
    try:
        with open(os.path.join(d, "console.log"), encoding="utf-8", errors="replace") as f:
            console = f.read()
    except OSError:
        pass
    return {"name": name, "outcome": outcome, "blocked": blocked(console)}


def table(rows):
    out = ["| kernel | outcome | pings | p99.9 / max, ms | stalls (longest, ms) | throttled periods |",
           "|---|---|---|---|---|---|"]
    for r in rows:
        if "pings" not in r:
            why = f"hung; blocked in {r['blocked']}" if r.get("blocked") else r["outcome"]
            out.append(f"| {r['name']} | {why} | - | - | - | - |")
            continue
        p = r["ping_us"]
        out.append(f"| {r['name']} ({r['kernel']}) | {r['outcome']} | {r['pings']} | "
                   f"{p['p99_9'] / 1000:.3g} / {p['max'] / 1000:.3g} | {r['stalls']} "
                   f"({r['longest_stall_ms']:.0f}) | {r['throttled_periods']} of {r['periods']} |")
    return "\n".join(out) + "\n"


def main(argv):
    if len(argv) < 2:
        print("usage: " + next(ln.strip() for ln in __doc__.splitlines() if "lab.unixwake.table DIR" in ln),
              file=sys.stderr)
        return 2
    out, names = argv[0], argv[1:]
    rows = [row(out, n) for n in names]
    with open(os.path.join(out, "unixwake.json"), "w", encoding="utf-8") as f:
        json.dump({"kernels": rows}, f, indent=1)
    sys.stdout.write(table(rows))
    bad = [r["name"] for r in rows if "pings" not in r and r["outcome"] != "hung"]
    for n in bad:
        print(f"table: {n}: no result ({next(r for r in rows if r['name'] == n)['outcome']})",
              file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
