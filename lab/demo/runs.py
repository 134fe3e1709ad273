"""runs: the table of several make demo runs, one row each, from their
summary.json (the form of the tables in docs/notes/).

    mk/py lab.demo.runs RUN_DIR...          (lab/demo/repeat's last step)

Exit status: 0 printed; 1 printed, but two runs have the same figures (one
trajectory twice: not independent runs); 2 no run given; 65 a run without
a readable summary.json (named).
"""
import json
import os
import sys

from report import formats
from report.files import DataError

HEAD = ("| run | initramfs | stock stalls (explained) | stock RT late | stock RT p99.9 / max | "
        "patched stalls | patched RT p99.9 / max | p99.9 ratio | patched RT waits boosted | "
        "latest probe wake-up, stock / patched | freezes outside stalls (explained) | "
        "trace lost | wall | verdict |")


def _ms(us):
    return "-" if us is None else f"{us / 1000:.3g}"


def kernels(s, where):
    """The stock and the patched kernel of the summary S (a
    formats.DemoSummary): a run of both, or a DataError naming WHERE."""
    if s.stock is None or s.patched is None:
        raise DataError(f"{where}: not a run of the stock and the patched kernel")
    return s.stock, s.patched


def row(n, s, wall_s, where="summary.json"):
    """The markdown row of run number n from its summary s (a
    formats.DemoSummary)."""
    st, pa = kernels(s, where)
    sw, pw = st.why or {}, pa.why or {}
    rs, rp = st.rt_latency_us, pa.rt_latency_us
    ratio = f"{rs.p99_9 / rp.p99_9:.0f}x" if rs and rp and rs.p99_9 and rp.p99_9 else "-"
    explained = f" ({sw['totals']['stalls_explained']})" if sw else " (not traced)"
    boosted = (f"{pw['contentions']['boosts']} of {pw['contentions']['rt_waits']}" if pw else "-")
    lost = "/".join(str(w["trace"]["lost"]["total"]) for w in (sw, pw) if w) or "-"
    probe = " / ".join("-" if not k.guest_freezes else f"{k.guest_freezes.max_ms:.3g} ms" for k in (st, pa))
    outside = " / ".join("-" if not k.guest_freezes else
                         f"{len(k.guest_freezes.outside or [])} ({len(k.guest_freezes.explained or [])})"
                         for k in (st, pa))
    return (f"| {n} | {(s.initramfs_sha256 or '?')[:8]} | {st.stalls}{explained} | "
            f"{st.rt_late} of {st.rt_samples} | "
            f"{_ms(rs and rs.p99_9)} / {_ms(rs and rs.max)} ms | "
            f"{pa.stalls} | {_ms(rp and rp.p99_9)} / {_ms(rp and rp.max)} ms | {ratio} | {boosted} | "
            f"{probe} | {outside} | {lost} | {wall_s if wall_s is not None else '?'} s | {s.verdict} |")


def freezes(n, s):
    """Each freeze of run n outside its stalls (s: a formats.DemoSummary),
    in words: explained (and how), borderline or unexplained, with its CPU
    and time."""
    out = []
    for name, k in (("stock", s.stock), ("patched", s.patched)):
        f = k.guest_freezes if k else None
        for word in ("explained", "borderline", "unexplained"):
            each = (getattr(f, word) if f else None) or []
            out += [f"- run {n}, {name}, {word}: {x.get('text') or x}" for x in each]
    return out


def figures(s):
    """What two runs on independent trajectories do not share."""
    st, pa = kernels(s, "summary.json")
    return (st.stalls, st.rt_late, st.rt_samples, pa.rt_samples,
            json.dumps(formats.shown(st.rt_latency_us), sort_keys=True),
            json.dumps(formats.shown(pa.rt_latency_us), sort_keys=True))


def wall(run_dir):
    """The whole run's seconds, from its phases in run.json; None without
    a run.json that reads."""
    try:
        run = formats.read(formats.RunRecord, os.path.join(run_dir, "run.json"))
    except DataError:
        return None
    return round(sum(p.seconds for p in run.phases))


def main(argv):
    if not argv:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    out = [HEAD, "|" + "---|" * (HEAD.count("|") - 1)]
    seen, same, notes = {}, [], []
    for n, d in enumerate(argv, 1):
        path = os.path.join(d, "summary.json")
        try:
            s = formats.read(formats.DemoSummary, path)
            out.append(row(n, s, wall(d), path))
            notes += freezes(n, s)
            key = figures(s)
        except (DataError, KeyError, TypeError) as e:
            print(f"runs: {e}" if isinstance(e, DataError) else f"runs: {path}: {e}", file=sys.stderr)
            return 65
        if key in seen:
            same.append((seen[key], n))
        seen.setdefault(key, n)
    print("\n".join(out))
    if notes:
        print("\nThe freeze probes' late wake-ups outside the stalls:\n")
        print("\n".join(notes))
    for a, b in same:
        print(f"runs: runs {a} and {b} have the same figures: one trajectory twice, not "
              "independent runs", file=sys.stderr)
    return 1 if same else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
