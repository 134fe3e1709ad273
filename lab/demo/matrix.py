"""matrix: make demo-matrix. The demo on each pair of kernels a
Debian 12 user meets, one after the other, then one page with a row per
pair and a link to each pair's own report.

  6.12      the default pair: Debian's linux-source-6.12 with the project's
            config; stock is the same tree with the fix reversed
  6.1       Debian 12's RT line: Debian's linux 6.1 source with its own RT
            patches; stock is the fix reversed
  6.1.8-rt  the historical kernel: Debian's linux 6.1.8-1 as bookworm
            released it (the rwlock as shipped), against Debian's own signed
            RT image of today (kernel/debian-images.conf), both as shipped

  python3 lab/demo/matrix.py [--results DIR] [--pairs 6.12,6.1,6.1.8-rt] [FLAG VALUE]...

Flags go to every lab/demo/run (scenario parameters, --trace, --clock).
Each pair then runs kernel/selftests/unixwake (the same inversion with the
co-tenant waking the RT side over AF_UNIX instead of loopback UDP, which
on Debian's 6.1 RT kernels the timer softirq thread cuts short).
Writes DIR/<date>-<id>-demo-matrix/ (DIR: results/ in the source tree)
with each pair's run directory, matrix.json, matrix.md and matrix.html,
and points DIR/latest-demo-matrix at it.
Exit status: 0 every pair has its report; 1 a pair has none (its row says
why); 2 bad arguments.
"""
import html
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.realpath(__file__)), ".."))
from labkit import TOP, kernels  # noqa: E402
from labkit.run import LabError, Run, main, write_json  # noqa: E402
from labkit.spec import Parser  # noqa: E402

PROG = "lab/demo/matrix.py"
HERE = os.path.dirname(os.path.realpath(__file__))
# pair -> (what it is, where its stock and its patched image come from: a
# kernel line of kernel/lines/, or "debian:" and a name of
# kernel/debian-images.conf; the kernel line the run records)
PAIRS = {
    "6.12": ("6.12 reconstruction (the default pair)", "6.12", "6.12", "6.12"),
    "6.1": ("6.1-rt reconstruction (Debian 12's RT line)", "6.1", "6.1", "6.1"),
    "6.1.8-rt": ("historical 6.1.8-rt against Debian's signed 6.1 RT image", "6.1.8-rt",
                 "debian:6.1-rt-signed", "6.1"),
}


def obtained(image):
    """How a kernel image was made, from the manifest beside it."""
    try:
        with open(os.path.join(os.path.dirname(image), "manifest.json"), encoding="utf-8") as f:
            m = json.load(f)
    except (OSError, ValueError):
        return "?"
    if m.get("obtained"):
        return m["obtained"]
    src = m.get("source") or {}
    what = f"Debian's {m.get('package', '?')} {m.get('version') or src.get('version', '?')}"
    if m.get("images_kind") == "historical":
        return what + " with its own RT patches, as shipped"
    kind = os.path.basename(image).removeprefix("bzImage-")
    if src.get("rt_patches"):
        what += " with its own RT patches"
    return what + (", the fix reversed" if kind == "stock" else "")


def why(run_dir):
    """What the stock kernel's trace says (its guest's chains.json,
    lab/ktrace), in a line; None when the run had the trace off."""
    try:
        with open(os.path.join(run_dir, "stock", "results", "chains.json"), encoding="utf-8") as f:
            c = json.load(f)
    except (OSError, ValueError):
        return None
    t, w = c["totals"], c["contentions"]
    parts = [f"{t['stalls_explained']} of {t['stalls']} stalls explained"] if t["stalls"] else []
    if w["rt_waits"]:
        parts.append(f"{w['rt_waits']} RT waits on ep->lock, longest {w['rt_wait_us']['max'] / 1000:.2f} ms")
        if w.get("lent_by_others"):
            by = ", ".join(f"{k} ({n})" for k, n in w["lent_by"].items())
            parts.append(f"{w['lent_by_others']} ended when another task lent the throttled holder "
                         f"its priority through another lock: {by}")
    return "; ".join(parts) or "no RT wait on ep->lock"


def row(pair, run_dir, error=None):
    """One pair's row: its kernels, how they were made, what the demo saw."""
    r = {"pair": pair, "what": PAIRS[pair][0], "run": os.path.basename(run_dir) if run_dir else None}
    if error:
        return dict(r, error=error)
    with open(os.path.join(run_dir, "summary.json"), encoding="utf-8") as f:
        s = json.load(f)
    for k in ("stock", "patched"):
        ks = s[k]
        lat = ks.get("rt_latency_us") or {}
        r[k] = {"kernel": ks.get("kernel"), "obtained": obtained(ks.get("kernel_image") or ""),
                "stalls": ks.get("stalls"), "worst_stall_ms": ks.get("worst_stall_ms"),
                "rt_p99_9_ms": None if lat.get("p99_9") is None else lat["p99_9"] / 1000,
                "rt_max_ms": None if lat.get("max") is None else lat["max"] / 1000}
    r["verdict"] = s.get("verdict")
    r["headline"] = s.get("headline")
    r["stock_trace"] = why(run_dir)
    return r


def _side(u, k):
    x = u[k]
    if x["pings"] is None:
        return f"{k} {x['outcome']}"
    return f"{k} {x['late']} of {x['pings']} over 5 ms, max {_ms(x['max_ms'])} ms, {x['stalls']} stalls"


def _unixwake_cell(u):
    if not u:
        return "not run"
    return f"{u['verdict']}: {_side(u, 'stock')}; {_side(u, 'patched')}"


def unixwake(d):
    """The AF_UNIX waker's stock and patched results in D
    (kernel/selftests/unixwake/run's unixwake.json) and their verdict, by
    the demo's rule: the stock kernel stalls or is late, the patched one
    never is. None when D has none."""
    try:
        with open(os.path.join(d, "unixwake.json"), encoding="utf-8") as f:
            rows = {r["name"]: r for r in json.load(f)["kernels"]}
    except (OSError, ValueError, KeyError, TypeError):
        return None
    out = {}
    for k in ("stock", "patched"):
        r = rows.get(k) or {"outcome": "not run"}
        p = r.get("ping_us") or {}
        out[k] = {"outcome": r.get("outcome"), "pings": r.get("pings"), "late": r.get("late"),
                  "stalls": r.get("stalls"),
                  "max_ms": None if p.get("max") is None else round(p["max"] / 1000, 4)}
    bad = {k: out[k]["outcome"] in ("stalled", "late", "hung") for k in out}
    clean = {k: out[k]["outcome"] == "ok" for k in out}
    out["verdict"] = ("fixed" if bad["stock"] and clean["patched"] else
                      "not fixed" if bad["patched"] else
                      "no effect" if clean["stock"] and clean["patched"] else "incomplete")
    return out


def _ms(v):
    return "-" if v is None else f"{v:.3g}"


def markdown(rows):
    out = ["| pair | stock kernel | patched kernel | stock stalls | stock RT p99.9 / max | "
           "patched stalls | patched RT p99.9 / max | verdict | the stock kernel's trace | "
           "AF_UNIX waker (kernel/selftests/unixwake) |",
           "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        if "error" in r:
            out.append(f"| {r['what']} | - | - | - | - | - | - | no report: {r['error']} | - | "
                       f"{_unixwake_cell(r.get('unixwake'))} |")
            continue
        st, pa = r["stock"], r["patched"]
        out.append(f"| {r['what']} | {st['kernel']} ({st['obtained']}) | {pa['kernel']} ({pa['obtained']}) "
                   f"| {st['stalls']} | {_ms(st['rt_p99_9_ms'])} / {_ms(st['rt_max_ms'])} ms "
                   f"| {pa['stalls']} | {_ms(pa['rt_p99_9_ms'])} / {_ms(pa['rt_max_ms'])} ms "
                   f"| {r['verdict']} | {r.get('stock_trace') or 'no trace analysis'} "
                   f"| {_unixwake_cell(r.get('unixwake'))} |")
    return "\n".join(out) + "\n"


def page(rows):
    """matrix.html: the table, each pair linked to its report."""
    e = html.escape
    body = []
    for r in rows:
        link = (f'<a href="{e(r["run"])}/report.html">{e(r["what"])}</a>'
                if r.get("run") and "error" not in r else e(r["what"]))
        if "error" in r:
            body.append(f"<tr><td>{link}</td><td colspan=8>no report: {e(r['error'])}</td>"
                        f"<td>{e(_unixwake_cell(r.get('unixwake')))}</td></tr>")
            continue
        st, pa = r["stock"], r["patched"]
        cells = [f"{e(str(st['kernel']))}<br><small>{e(st['obtained'])}</small>",
                 f"{e(str(pa['kernel']))}<br><small>{e(pa['obtained'])}</small>",
                 e(str(st["stalls"])), f"{_ms(st['rt_p99_9_ms'])} / {_ms(st['rt_max_ms'])} ms",
                 e(str(pa["stalls"])), f"{_ms(pa['rt_p99_9_ms'])} / {_ms(pa['rt_max_ms'])} ms",
                 f"<b>{e(str(r['verdict']))}</b>", e(r.get("stock_trace") or "no trace analysis"),
                 e(_unixwake_cell(r.get("unixwake")))]
        body.append(f"<tr><td>{link}</td>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>relay: the demo on each kernel pair</title>
<style>body{{font-family:sans-serif;margin:2em}}table{{border-collapse:collapse}}
td,th{{border:1px solid #bbb;padding:.3em .6em;vertical-align:top}}th{{background:#eee}}</style></head>
<body><h1>The epoll ready-list fix on each kernel pair</h1>
<p>make demo on each pair, one after the other: the same scenario and rule, virtual clock.
Each pair's link opens its full report.</p>
<table><tr><th>pair</th><th>stock kernel</th><th>patched kernel</th><th>stock stalls</th>
<th>stock RT p99.9 / max</th><th>patched stalls</th><th>patched RT p99.9 / max</th><th>verdict</th>
<th>the stock kernel's trace</th><th>AF_UNIX waker</th></tr>
{chr(10).join(body)}
</table>
<p>A wait that ended when another task lent the holder its priority: on Debian's 6.1 RT
kernels a thread (<code>ktimers/N</code>) runs the timer softirqs; it needs the CPU's
softirq lock, which a sender throttled inside <code>ep_poll_callback()</code> on loopback
also holds, and boosts it out of the rwlock too (lab/demo/README.md, "The kernel pairs").
The last column runs the same inversion with the co-tenant waking the RT side over
AF_UNIX, from its own context, where nothing boosts a throttled holder but the
lock itself (kernel/selftests/unixwake, kernel/README.md).</p>
</body></html>
"""


def images(run, pair):
    """The stock and patched images of PAIR, built (or fetched) first if
    need be."""
    _, stock_from, patched_from, _ = PAIRS[pair]
    if stock_from == patched_from:
        return kernels.images(run, patched_from)
    patched = (kernels.debian_image(run, patched_from.removeprefix("debian:"))
               if patched_from.startswith("debian:") else kernels.images(run, patched_from)["patched"])
    return {"stock": kernels.historical(run, stock_from), "patched": patched}


def parse(argv):
    ap = Parser(prog=PROG, description="make demo on each kernel pair, and one page of them",
                epilog="Other flags go to every lab/demo/run.")
    ap.add_argument("--results", default=os.path.join(TOP, "results"), help="where run directories go")
    ap.add_argument("--pairs", default=",".join(PAIRS), help=f"which pairs, in order ({','.join(PAIRS)})")
    args, rest = ap.parse_known_args(argv)
    pairs = args.pairs.split(",")
    bad = [p for p in pairs if p not in PAIRS]
    if bad:
        ap.error(f"--pairs: {','.join(bad)}: not one of {','.join(PAIRS)}")
    chosen = [a for a in rest if a.split("=")[0] in ("--kernel-line", "--stock-image", "--patched-image")]
    if chosen:
        ap.error(f"{chosen[0]}: the matrix chooses each pair's kernels")
    return args.results, pairs, rest


def matrix(argv):
    results, pairs, rest = parse(argv)
    run = Run(PROG, results, kind="demo-matrix", phases=3 * len(pairs) + 1)
    rows, status = [], 0
    for pair in pairs:
        try:
            with run.phase(f"kernels of {PAIRS[pair][0]}", "seconds from the cache, about 25 minutes "
                           "to build a line on 2 cores"):
                imgs = images(run, pair)
        except LabError as e:
            rows.append(row(pair, None, str(e)))
            status = 1
            continue
        with run.phase(f"make demo: {PAIRS[pair][0]}", "5-10 minutes with the trace, on 2 free cores"):
            log = run.path(f"demo-{pair}.log")
            argv = [os.path.join(HERE, "run"), "--results", run.dir, "--kernel-line", PAIRS[pair][3],
                    "--stock-image", imgs["stock"], "--patched-image", imgs["patched"]] + rest
            with open(log, "w", encoding="utf-8") as f:
                rc = subprocess.run(argv, stdout=f, stderr=subprocess.STDOUT).returncode
            latest = os.path.realpath(run.path("latest"))
            if rc != 0 or not os.path.exists(os.path.join(latest, "summary.json")):
                rows.append(row(pair, None, f"lab/demo/run exited {rc} (log: {log})"))
                status = 1
                continue
            rows.append(row(pair, latest))
            run.say(f"      {rows[-1]['verdict']}: {rows[-1]['headline']}")
        with run.phase(f"AF_UNIX waker: {PAIRS[pair][0]}", "2-3 minutes"):
            d = run.path(f"unixwake-{pair}")
            log = run.path(f"unixwake-{pair}.log")
            argv = [os.path.join(TOP, "kernel/selftests/unixwake/run"), "--out", d,
                    f"stock={imgs['stock']}", f"patched={imgs['patched']}"]
            with open(log, "w", encoding="utf-8") as f:
                subprocess.run(argv, stdout=f, stderr=subprocess.STDOUT)
            rows[-1]["unixwake"] = unixwake(d)
            run.say(f"      {_unixwake_cell(rows[-1]['unixwake'])} (log: {log})")
    with run.phase("the matrix: matrix.json, matrix.md, matrix.html", "a second"):
        write_json(run.path("matrix.json"), {"pairs": rows})
        with open(run.path("matrix.md"), "w", encoding="utf-8") as f:
            f.write(markdown(rows))
        with open(run.path("matrix.html"), "w", encoding="utf-8") as f:
            f.write(page(rows))
    run.say("")
    run.say(markdown(rows).rstrip("\n"))
    run.finish({"pairs": pairs, "status": status})
    run.say(f"page: {run.path('matrix.html')}")
    return status


if __name__ == "__main__":
    sys.exit(main(PROG, matrix))
