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

  lab/demo/matrix [--results DIR] [--pairs 6.12,6.1,6.1.8-rt] [FLAG VALUE]...

Flags go to every lab/demo/run (scenario parameters, --trace, --clock).
Each pair runs the demo twice: the co-tenant's sends wake the relay over
loopback UDP (the default), then over AF_UNIX (--af-unix 1), which Debian's
6.1 RT kernels' timer softirq thread cannot cut short.
Writes DIR/<date>-<id>-demo-matrix/ (DIR: results/ in the source tree)
with each pair's run directory, matrix.json, matrix.md and matrix.html,
and points DIR/latest-demo-matrix at it.
Exit status: 0 every demo has its report; 1 one has none (its cell says
why); 2 bad arguments.
"""
import html
import os
import subprocess
import sys
import time

from report import formats
from report.files import DataError
from report.page import frame

from ..labkit import TOP, kernels
from ..labkit.run import LabError, Run, main, write_json
from ..labkit.spec import Parser

PROG = "lab/demo/matrix"
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
    """How a kernel image was made, from the manifest beside it ("?" when
    there is none that reads)."""
    try:
        m = formats.read(formats.Manifest, os.path.join(os.path.dirname(image), "manifest.json"))
    except DataError:
        return "?"
    if m.obtained:
        return m.obtained
    src = m.source or formats.Source()
    what = f"Debian's {m.package or '?'} {m.version or src.version or '?'}"
    if m.images_kind == "historical":
        return what + " with its own RT patches, as shipped"
    kind = os.path.basename(image).removeprefix("bzImage-")
    if src.rt_patches:
        what += " with its own RT patches"
    return what + (", the fix reversed" if kind == "stock" else "")


def why(run_dir):
    """What the stock kernel's trace says (its guest's chains.json,
    lab/ktrace), in a line; None when the run had the trace off."""
    path = os.path.join(run_dir, "stock", "results", "chains.json")
    if not os.path.exists(path):
        return None
    try:
        c = formats.read(formats.Chains, path)
    except DataError:
        return None
    t, w = c.totals, c.contentions
    parts = [f"{t.stalls_explained} of {t.stalls} stalls explained"] if t.stalls else []
    if w.rt_waits:
        parts.append(f"{w.rt_waits} RT waits on ep->lock, longest {w.rt_wait_us['max'] / 1000:.2f} ms")
        if w.lent_by_others:
            by = ", ".join(f"{k} ({n})" for k, n in (w.lent_by or {}).items())
            parts.append(f"{w.lent_by_others} ended when another task lent the throttled holder "
                         f"its priority through another lock: {by}")
    return "; ".join(parts) or "no RT wait on ep->lock"


# How the co-tenant's sends wake the relay in each pair's two demos (the
# scenario's af_unix): the flags they add to lab/demo/run, both spelled
# out whatever its default.
WAKERS = {
    "udp": ("loopback UDP", ["--af-unix", "0"]),
    "unix": ("AF_UNIX", ["--af-unix", "1"]),
}


def demo(run_dir):
    """What one demo saw (its summary.json), and its two kernels."""
    path = os.path.join(run_dir, "summary.json")
    s = formats.read(formats.DemoSummary, path)
    d = {"run": os.path.basename(run_dir), "verdict": s.verdict, "headline": s.headline,
         "stock_trace": why(run_dir)}
    kern = {}
    for k in ("stock", "patched"):
        ks = getattr(s, k)
        if ks is None:
            raise DataError(f"{path}: {k}: missing (not a run of both kernels)")
        lat = ks.rt_latency_us
        kern[k] = {"kernel": ks.kernel, "obtained": obtained(ks.kernel_image or "")}
        d[k] = {"stalls": ks.stalls, "worst_stall_ms": ks.worst_stall_ms,
                "rt_p99_9_ms": None if lat is None else lat.p99_9 / 1000,
                "rt_max_ms": None if lat is None else lat.max / 1000}
    return d, kern


def verdict(demos):
    """A pair's verdict from its demos' (lab/demo/README.md, "The kernel
    pairs"): not fixed when the patched kernel failed either; fixed when a
    waker showed the stock kernel's inversion and the patched kernel was
    clean with it; otherwise invalid, then incomplete, if a demo was, else
    no effect."""
    words = [d.get("verdict") for d in demos.values() if "error" not in d]
    if len(words) < len(demos):
        words.append("incomplete")
    for w in ("not fixed", "fixed", "invalid", "incomplete"):
        if w in words:
            return w
    return "no effect"


def row(pair, runs):
    """One pair's row from RUNS, {waker: its demo's run directory, or the
    error that left it without one}."""
    r = {"pair": pair, "what": PAIRS[pair][0], "demos": {}}
    for waker, got in runs.items():
        if isinstance(got, LabError):
            r["demos"][waker] = {"error": str(got)}
            continue
        try:
            r["demos"][waker], kern = demo(got)
        except DataError as e:
            r["demos"][waker] = {"error": str(e)}
            continue
        r.update(kern)
    r["verdict"] = verdict(r["demos"]) if r["demos"] else "incomplete"
    return r


def _ms(v):
    return "-" if v is None else f"{v:.3g}"


def _side(d, k):
    x = d[k]
    return (f"{k} {x['stalls']} stalls, RT p99.9 {_ms(x['rt_p99_9_ms'])} / max "
            f"{_ms(x['rt_max_ms'])} ms")


def demo_cell(d):
    """A demo as (verdict, its kernels' lines, the stock trace's line)."""
    if not d:
        return "not run", "", ""
    if "error" in d:
        return "no report", d["error"], ""
    return (d["verdict"].upper(), f"{_side(d, 'stock')}; {_side(d, 'patched')}",
            d.get("stock_trace") or "no trace analysis")


def _kernel(r, k):
    x = r.get(k) or {}
    return str(x.get("kernel", "-")), x.get("obtained", "")


def markdown(rows):
    head = " | ".join(f"{name} waker" for name, _ in WAKERS.values())
    out = [f"| pair | stock kernel | patched kernel | {head} | verdict |",
           "|---|---|---|" + "---|" * len(WAKERS) + "---|"]
    for r in rows:
        cells = []
        for waker in WAKERS:
            word, sides, trace = demo_cell(r["demos"].get(waker))
            cells.append(" ".join(x for x in (f"{word}:", sides, f"(trace: {trace})" if trace else "") if x))
        kern = [f"{k} ({o})" if o else k for k, o in (_kernel(r, "stock"), _kernel(r, "patched"))]
        out.append(f"| {r['what']} | {kern[0]} | {kern[1]} | " + " | ".join(cells) +
                   f" | {r['verdict'].upper()} |")
    return "\n".join(out) + "\n"


# The matrix's cells hold several lines each, and its verdicts link to
# each demo's own page.
STYLE = """
table.matrix td, table.matrix th { border: 1px solid #bbb; padding: .3em .6em; text-align: left;
  vertical-align: top; }
table.matrix th { background: #eee; }
"""


def page(rows, generated):
    """matrix.html, in the report's frame: the table, each demo linked to
    its report."""
    e = html.escape
    body = []
    for r in rows:
        cells = [e(r["what"])]
        for k in ("stock", "patched"):
            kern, how = _kernel(r, k)
            cells.append(f"{e(kern)}<br><small>{e(how)}</small>")
        for waker in WAKERS:
            d = r["demos"].get(waker) or {}
            word, sides, trace = demo_cell(d)
            word = (f'<a href="{e(d["run"])}/report.html"><b>{e(word)}</b></a>' if d.get("run")
                    else f"<b>{e(word)}</b>")
            cells.append(f"{word}<br>{e(sides)}" + (f"<br><small>trace: {e(trace)}</small>" if trace else ""))
        cells.append(f"<b>{e(r['verdict'].upper())}</b>")
        body.append("<tr>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
    heads = "".join(f"<th>{e(name)} waker</th>" for name, _ in WAKERS.values())
    return frame("relay: the demo on each kernel pair", f"""\
<h1>The epoll ready-list fix on each kernel pair</h1>
<p>make demo on each pair, one after the other, twice: the co-tenant's sends wake the relay
over loopback UDP, then over AF_UNIX. The same scenario and rule otherwise, virtual clock.
Each verdict opens that demo's full report.</p>
<table class="matrix"><thead><tr><th>pair</th><th>stock kernel</th><th>patched kernel</th>{heads}\
<th>verdict</th></tr></thead>
<tbody>
{chr(10).join(body)}
</tbody></table>
<p>The pair's verdict: NOT FIXED if the patched kernel failed with either waker; FIXED if a
waker showed the stock kernel's inversion and the patched kernel was clean with it.</p>
<p>Why the wakers differ: over loopback UDP the relay is woken from the receive softirq,
run in the sender's context under its CPU's softirq lock. On Debian's 6.1 RT kernels a
thread (<code>ktimers/N</code>) runs the timer softirqs and needs that lock, so it lends a
sender throttled inside <code>ep_poll_callback()</code> its priority and cuts the inversion
short (the trace line counts those boosts). Over AF_UNIX the sender wakes the relay from its
own context and holds nothing a timer needs: only the lock itself can boost it, which is
what the fix gives it (lab/demo/README.md, "The kernel pairs").</p>
""", generated, PROG, STYLE)


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
    driver = ("--kernel-line", "--stock-image", "--patched-image", "--af-unix")
    chosen = [a for a in rest if a.split("=")[0] in driver]
    if chosen:
        ap.error(f"{chosen[0]}: the matrix chooses each pair's kernels and wakers")
    return args.results, pairs, rest


def run_demo(run, pair, imgs, waker, rest):
    """One demo of PAIR with WAKER: its run directory, or a LabError that
    says why it has none."""
    log = run.path(f"demo-{pair}-{waker}.log")
    argv = [os.path.join(HERE, "run"), "--results", run.dir, "--kernel-line", PAIRS[pair][3],
            "--stock-image", imgs["stock"], "--patched-image", imgs["patched"]] + WAKERS[waker][1] + rest
    with open(log, "w", encoding="utf-8") as f:
        rc = subprocess.run(argv, stdout=f, stderr=subprocess.STDOUT).returncode
    latest = os.path.realpath(run.path("latest"))
    if rc != 0 or not os.path.exists(os.path.join(latest, "summary.json")):
        return LabError(1, f"lab/demo/run exited {rc} (log: {log})")
    return latest


def matrix(argv):
    results, pairs, rest = parse(argv)
    run = Run(PROG, results, kind="demo-matrix", phases=(1 + len(WAKERS)) * len(pairs) + 1)
    rows, status = [], 0
    for pair in pairs:
        try:
            with run.phase(f"kernels of {PAIRS[pair][0]}", "seconds from the cache, about 25 minutes "
                           "to build a line on 2 cores"):
                imgs = images(run, pair)
        except LabError as e:
            rows.append(row(pair, {w: e for w in WAKERS}))
            status = 1
            continue
        runs = {}
        for waker, (name, _) in WAKERS.items():
            with run.phase(f"make demo, {name} waker: {PAIRS[pair][0]}",
                           "5-10 minutes with the trace, on 2 free cores"):
                runs[waker] = run_demo(run, pair, imgs, waker, rest)
                if isinstance(runs[waker], LabError):
                    status = 1
                    run.say(f"      no report: {runs[waker]}")
        rows.append(row(pair, runs))
        for waker, d in rows[-1]["demos"].items():
            if "error" not in d:
                run.say(f"      {WAKERS[waker][0]}: {d['verdict']}: {d['headline']}")
        run.say(f"      the pair: {rows[-1]['verdict'].upper()}")
    with run.phase("the matrix: matrix.json, matrix.md, matrix.html", "a second"):
        write_json(run.path("matrix.json"), {"pairs": rows})
        with open(run.path("matrix.md"), "w", encoding="utf-8") as f:
            f.write(markdown(rows))
        with open(run.path("matrix.html"), "w", encoding="utf-8") as f:
            f.write(page(rows, time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())))
    run.say("")
    run.say(markdown(rows).rstrip("\n"))
    run.finish({"pairs": pairs, "status": status})
    run.say(f"page: {run.path('matrix.html')}")
    return status


if __name__ == "__main__":
    sys.exit(main(PROG, matrix))
