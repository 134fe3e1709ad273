"""runs: the table of several make demo runs, one row each, from their
summary.json (the form of the tables in docs/measurements.md).

    python3 lab/demo/runs.py RUN_DIR...

Exit status: 0 printed; 1 printed, but two runs have the same figures (one
trajectory twice: not independent runs); 2 no run given; 65 a run without
a readable summary.json (named).
"""
import json
import os
import sys

HEAD = ("| run | initramfs | stock stalls (explained) | stock RT late | stock RT p99.9 / max | "
        "patched stalls | patched RT p99.9 / max | p99.9 ratio | patched RT waits boosted | "
        "latest probe wake-up, stock / patched | freezes outside stalls (explained) | "
        "trace lost | wall | verdict |")


def _ms(us):
    return "-" if us is None else f"{us / 1000:.3g}"


def row(n, s, wall_s):
    """The markdown row of run number n from its summary s."""
    st, pa = s["stock"], s["patched"]
    sw, pw = st.get("why") or {}, pa.get("why") or {}
    rs, rp = st.get("rt_latency_us") or {}, pa.get("rt_latency_us") or {}
    ratio = (f"{rs['p99_9'] / rp['p99_9']:.0f}x" if rs.get("p99_9") and rp.get("p99_9") else "-")
    explained = f" ({sw['totals']['stalls_explained']})" if sw else " (not traced)"
    boosted = (f"{pw['contentions']['boosts']} of {pw['contentions']['rt_waits']}" if pw else "-")
    lost = "/".join(str(w["trace"]["lost"]["total"]) for w in (sw, pw) if w) or "-"
    fs, fp = st.get("guest_freezes") or {}, pa.get("guest_freezes") or {}
    probe = " / ".join("-" if f.get("max_ms") is None else f"{f['max_ms']:.3g} ms" for f in (fs, fp))
    outside = " / ".join(f"{len(f.get('outside') or [])} ({len(f.get('explained') or [])})" for f in (fs, fp))
    return (f"| {n} | {(s.get('initramfs_sha256') or '?')[:8]} | {st.get('stalls')}{explained} | "
            f"{st.get('rt_late')} of {st.get('rt_samples')} | "
            f"{_ms(rs.get('p99_9'))} / {_ms(rs.get('max'))} ms | "
            f"{pa.get('stalls')} | {_ms(rp.get('p99_9'))} / {_ms(rp.get('max'))} ms | {ratio} | {boosted} | "
            f"{probe} | {outside} | {lost} | {wall_s if wall_s is not None else '?'} s | "
            f"{s.get('verdict')} |")


def freezes(n, s):
    """Each freeze of run n outside its stalls, in words: explained (and
    how), borderline or unexplained, with its CPU and time."""
    out = []
    for k in ("stock", "patched"):
        f = (s.get(k) or {}).get("guest_freezes") or {}
        for word in ("explained", "borderline", "unexplained"):
            out += [f"- run {n}, {k}, {word}: {x.get('text') or x}" for x in f.get(word) or []]
    return out


def figures(s):
    """What two runs on independent trajectories do not share."""
    st, pa = s["stock"], s["patched"]
    return (st.get("stalls"), st.get("rt_late"), st.get("rt_samples"), pa.get("rt_samples"),
            json.dumps(st.get("rt_latency_us"), sort_keys=True),
            json.dumps(pa.get("rt_latency_us"), sort_keys=True))


def wall(run_dir):
    """The whole run's seconds, from its phases in run.json."""
    try:
        with open(os.path.join(run_dir, "run.json"), encoding="utf-8") as f:
            return round(sum(p.get("seconds", 0) for p in json.load(f).get("phases", [])))
    except (OSError, ValueError):
        return None


def main(argv):
    if not argv:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    out = [HEAD, "|" + "---|" * (HEAD.count("|") - 1)]
    seen, same, notes = {}, [], []
    for n, d in enumerate(argv, 1):
        path = os.path.join(d, "summary.json")
        try:
            with open(path, encoding="utf-8") as f:
                s = json.load(f)
            out.append(row(n, s, wall(d)))
            notes += freezes(n, s)
            key = figures(s)
        except (OSError, ValueError, KeyError, TypeError) as e:
            print(f"runs: {path}: {e}", file=sys.stderr)
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
