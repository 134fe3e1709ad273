"""What make test-matrix asserts of a demo matrix's matrix.json
(tests/request/demo_matrix.sh).

The pairs, in order, each with a report for every run of each waker; the
kernels each pair should boot, how each was obtained, its ep->lock and
its CFS throttle model as the trace read them; no kernel with the epoll
change stalling; every pair with the rwlock and the per-cfs_rq throttle
FIXED with the AF_UNIX waker (6.12 with loopback UDP too); no 7.x kernel
stalling (the task-based throttle takes no task off inside the kernel);
the quota period's timer traced on every kernel; a sentence for each fix;
and what each fix protects on 7.x stated for both kinds of 7.x kernel.
The 6.1 pairs' loopback verdicts are reported, not judged: Debian's 6.1
RT kernels cut that inversion short (lab/demo/README.md says why).

    python3 demo_matrix.py MATRIX.JSON

Exit status: 0 it holds; 1 it does not (each failure on a line); 2 usage."""
import json
import re
import sys

WAKERS = ("unix", "udp")
# pair -> {side: (release, what "obtained" must say, ep->lock, model)},
# and whether the pair must be FIXED (with the AF_UNIX waker)
EXPECTED = {
    "6.12": ({"stock": (r"6\.12\.\d+-relay-stock", "the fix reversed", "rwlock_t", "cfs_rq"),
              "patched": (r"6\.12\.\d+-relay-patched", "Debian's linux-source-6.12", "spinlock_t", "cfs_rq")},
             True),
    "6.1": ({"stock": (r"6\.1\.\d+-rt\d+-relay-stock", "the fix reversed", "rwlock_t", "cfs_rq"),
             "patched": (r"6\.1\.\d+-rt\d+-relay-patched", "with its own RT patches", "spinlock_t",
                         "cfs_rq")},
            True),
    "6.1.8-rt": ({"stock": (r"6\.1\.8-rt\d+-relay-historical", "as shipped", "rwlock_t", "cfs_rq"),
                  "patched": (r"6\.1\.0-\d+-rt-amd64", "as shipped", "spinlock_t", "cfs_rq")}, True),
    "debian13": ({"stock": (r"6\.16\.12\+deb13-rt-amd64", "as shipped", "rwlock_t", "cfs_rq"),
                  "patched": (r"6\.17\.13\+deb13-rt-amd64", "as shipped", "spinlock_t", "cfs_rq")}, True),
    "debian13-task": ({"stock": (r"6\.18\.12\+deb13-rt-amd64", "as shipped", "spinlock_t", "task"),
                       "patched": (r"7\.3\.\d+\+deb13-rt-amd64", "as shipped", "spinlock_t", "task")}, False),
    "7.3": ({"stock": (r"7\.3\.\d+-relay-stock", "the fix reversed", "rwlock_t", "task"),
             "patched": (r"7\.3\.\d+-relay-patched", "linux-source-7.3", "spinlock_t", "task")}, False),
}


def demo_problems(name, p, runs):
    out = []
    demos = p.get("demos") or {}
    for waker in WAKERS:
        got = demos.get(waker) or []
        if len(got) != runs.get(waker, 0):
            out.append(f"{name}, {waker}: {len(got)} demos, expected {runs.get(waker, 0)}")
        for d in got:
            if "error" in d:
                out.append(f"{name}, {waker}: no report: {d['error']}")
            elif not d.get("verdict") or not d.get("headline"):
                out.append(f"{name}, {waker}: no verdict")
    return out


def kernel_problems(name, sides, rows):
    out = []
    for side, (release, obtained, lock, model) in sides.items():
        r = rows.get((name, side))
        if r is None:
            out.append(f"{name}: no row for its {side} kernel")
            continue
        if not re.fullmatch(release, str(r.get("kernel"))):
            out.append(f"{name}: {side} kernel {r.get('kernel')}, expected /{release}/")
        if obtained not in str(r.get("obtained")):
            out.append(f"{name}: {side} kernel obtained '{r.get('obtained')}', expected '{obtained}'")
        for key, want in (("lock", lock), ("model", model)):
            if r.get(key) != want:
                out.append(f"{name}: {side} kernel's {key} {r.get(key)}, expected {want}")
        cells = r.get("cells") or {}
        rt, quota = cells.get("rt") or {}, cells.get("quota") or {}
        if r.get("lock") == "spinlock_t" and rt.get("word") == "STALLED":
            out.append(f"{name}: the {side} kernel has the epoll change and stalled ({rt.get('figures')})")
        if str(r.get("kernel")).startswith("7.") and rt.get("word") in ("STALLED", None):
            out.append(f"{name}: the 7.x {side} kernel's RT ticker {rt.get('word')}, expected no stall")
        if quota.get("word") in ("NOT TRACED", None):
            out.append(f"{name}: the {side} kernel's quota period's timer not traced")
    return out


def problems(matrix):
    """Each way MATRIX (the parsed matrix.json) falls short, as text."""
    out = []
    pairs = matrix.get("pairs") or []
    names = [p.get("pair") for p in pairs]
    if names != list(EXPECTED):
        out.append(f"pairs {names}, expected {list(EXPECTED)}")
    runs = matrix.get("runs") or {}
    rows = {(r.get("pair"), r.get("side")): r for r in matrix.get("kernels") or []}
    for p in pairs:
        name = p.get("pair")
        if name not in EXPECTED:
            continue
        sides, fixed = EXPECTED[name]
        out += demo_problems(name, p, runs)
        out += kernel_problems(name, sides, rows)
        if fixed:
            for waker in WAKERS:
                for d in (p.get("demos") or {}).get(waker) or []:
                    got = d.get("verdict")
                    if got and (waker == "unix" or name == "6.12") and got != "fixed":
                        out.append(f"{name}, {waker}: verdict {got}, expected fixed")
            if p.get("verdict") != "fixed":
                out.append(f"{name}: the pair's verdict {p.get('verdict')}, expected fixed")
    for fix in ("epoll", "throttle"):
        f = (matrix.get("fixes") or {}).get(fix) or {}
        if not f.get("comparisons") or "no two kernels" in f.get("sentence", "no two kernels"):
            out.append(f"the {fix} fix: no comparison of two kernels that differ in it alone")
    kinds = {(k.get("lock"), k.get("model")) for k in (matrix.get("on_7x") or {}).get("kernels") or []
             if {"rt", "tick", "quota"} <= set(k.get("waiters") or {})}
    for kind in (("rwlock_t", "task"), ("spinlock_t", "task")):
        if kind not in kinds:
            out.append(f"on_7x: no 7.x kernel with {kind[0]} and the {kind[1]} throttle, "
                       "with its three waiters")
    return out


def main(argv):
    if len(argv) != 2:
        print(__doc__.split("\n\n")[2].strip(), file=sys.stderr)
        return 2
    with open(argv[1], encoding="utf-8") as f:
        found = problems(json.load(f))
    for line in found:
        print(line)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
