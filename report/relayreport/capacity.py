"""make capacity's results: the grid of each kernel (lab/capacity/grid,
one loadgen sweep per co-tenant quota and rate) as capacity.json, the
terminal table with the headline last, the plots and the page."""
import glob
import json
import os
import re

from . import png, sweep
from .check import CheckError, read_texts
from .check import plots as check_plots
from .files import DataError, number, read_json
from .page import CSS
from .escape import gnuplot_string, html_text
from .plots import COLOURS, _block, _gnuplot, head

KERNELS = ("stock", "patched")
GOOD, MIXED = "#1e8449", "#9a7d0a"


def _cell_params(d):
    """The part of the spec a grid cell ran: its cell.json, beside its
    results."""
    path = os.path.join(d, "cell.json")
    cell = read_json(path)
    if not isinstance(cell, dict):
        raise DataError(f"{path}: expected an object")
    return {k: int(number(cell.get(k), f"{path}: {k}"))
            for k in ("cpu_quota_pct", "cotenant_rate_pps")}


def _step(k, s):
    r = s["result"]
    watched = r.get("watched_cgroup") or {}
    hgrm = s.get("hgrm")
    return {
        "target_rate": s["target_rate"], "achieved_rate": r.get("achieved_rate"),
        "pass": s.get("pass", 0), "meets_slo": s["meets_slo"], "why": s.get("why"),
        "saturated": s.get("saturated", False),
        "latency_us": r["latency_us"]["corrected"],
        "sent": r.get("sent"), "lost": r.get("lost"),
        "throttled_periods": watched.get("nr_throttled"),
        "throttled_us": watched.get("throttled_us"),
        "periods": watched.get("nr_periods"),
        # the guest's /results is <kernel>/results on the host
        "hgrm": re.sub(r"^/results/", f"{k}/results/", hgrm) if hgrm else None,
    }


CAUSES = {"lock": "RT waits on the ready-list lock held by a throttled task",
          "cpu": "the relay's CPU was busy", "loss": "datagrams were lost"}


def trace_steps(d, c):
    """Each step's cause from the cell's kernel trace (lab/ktrace's
    chains.json, beside the co-tenant's results), when it was traced."""
    path = os.path.join(d, "cotenant", "chains.json")
    if not os.path.exists(path):
        return
    steps = read_json(path).get("steps")
    if not isinstance(steps, list) or len(steps) != len(c["steps"]):
        raise DataError(f"{path}: its steps do not match the sweep's")
    for mine, theirs in zip(c["steps"], steps):
        if not isinstance(theirs, dict):
            raise DataError(f"{path}: a step is not an object")
        mine["cause"] = theirs.get("cause")
        mine["trace"] = {k: number(theirs.get(k), f"{path}: {k}", optional=True)
                         for k in ("lock_waits", "lock_wait_ms_max", "relay_cpu_share")}


def _cell(run_dir, k, d):
    ran = _cell_params(d)
    problems = [open(os.path.join(d, f), encoding="utf-8").read().strip()
                for f in ("failed", "cotenant-ended-early") if os.path.exists(os.path.join(d, f))]
    c = {**ran, "capacity_pps": None,
         "at_least": False, "monotonic": None, "knee_pps": None, "verdict": None,
         "why_not": None, "problems": problems, "steps": []}
    path = os.path.join(d, "sweep.json")
    if not os.path.exists(path):
        c["problems"].append("no sweep.json: the sweep did not finish")
        return c, None
    s = sweep.load(path)
    cap = s.get("capacity")
    c.update(capacity_pps=cap["target_rate"] if cap else None,
             at_least=bool(cap) and all(x["meets_slo"] for x in s["steps"]),
             monotonic=s.get("monotonic"), verdict=s.get("verdict"),
             knee_pps=(s.get("knee") or {}).get("target_rate"),
             steps=[_step(k, x) for x in s["steps"]])
    trace_steps(d, c)
    fail = next((x for x in c["steps"] if not x["meets_slo"]), None)
    if fail:
        why = fail.get("why")
        cause = CAUSES.get(fail.get("cause"))
        c["why_not"] = f"{fail['target_rate']:.0f} pps: " + (f"{cause} ({why})" if cause else str(why))
    if problems:  # a cell whose co-tenant was not there throughout proves nothing
        c["capacity_pps"] = None
    return c, s


def headline_cell(kernels):
    """The quota where the fix buys the most rate (none counts as 0); the
    tightest quota on a tie."""
    best = None
    stock = {(c["cpu_quota_pct"], c["cotenant_rate_pps"]): c for c in kernels["stock"]["by_quota"]}
    for p in kernels["patched"]["by_quota"]:
        s = stock.get((p["cpu_quota_pct"], p["cotenant_rate_pps"]))
        if not s:
            continue
        gain = (p["capacity_pps"] or 0) - (s["capacity_pps"] or 0)
        tighter = best is not None and p["cpu_quota_pct"] < best[1]["cpu_quota_pct"]
        if best is None or gain > best[0] or (gain == best[0] and tighter):
            best = (gain, p, s)
    return best


def cap_text(c):
    if c is None:
        return "no result"
    if c["capacity_pps"] is None:
        return "none"
    return f"{'>= ' if c['at_least'] else ''}{c['capacity_pps']:.0f} pps"


def build(run_dir):
    """capacity.json's content from a run directory."""
    run = read_json(os.path.join(run_dir, "run.json"))
    spec_path = os.path.join(run_dir, "spec.json")
    spec = read_json(spec_path)
    if not isinstance(spec, dict) or not isinstance(spec.get("capacity"), dict):
        raise DataError(f"{spec_path}: not a capacity run's spec (no \"capacity\" object)")
    kernels, slo = {}, None
    for k in KERNELS:
        boot_path = os.path.join(run_dir, k, "boot.json")
        boot = read_json(boot_path) if os.path.exists(boot_path) else {"outcome": "no-results"}
        cells = []
        dirs = sorted(os.path.dirname(f) for f in
                      glob.glob(os.path.join(run_dir, k, "results", "grid", "*", "cell.json")))
        for d in dirs:
            c, s = _cell(run_dir, k, d)
            cells.append(c)
            if s is not None:
                if slo is not None and s["slo"] != slo:
                    raise DataError(f"{d}: objectives {s['slo']} differ from {slo}")
                slo = s["slo"]
        cells.sort(key=lambda c: (c["cotenant_rate_pps"], c["cpu_quota_pct"]))
        kernels[k] = {"outcome": boot.get("outcome"), "version": boot.get("version"),
                      "by_quota": cells}
    if slo is None:
        raise DataError(f"{run_dir}: no kernel left a sweep.json (see */console.log)")
    best = headline_cell(kernels)
    objective = sweep.objectives(slo)
    if best:
        _, p, s = best
        headline = (f"at quota {p['cpu_quota_pct']}%, {objective}: stock {cap_text(s)}, "
                    f"patched {cap_text(p)}")
    else:
        headline = f"{objective}: " + ", ".join(
            f"{k} {kernels[k]['outcome']}" for k in KERNELS)
    return {"run_id": run.get("run_id"), "date": run.get("date"), "clock": spec.get("clock"),
            "initramfs_sha256": run.get("initramfs_sha256"), "spec": spec,
            "wall_s": run.get("wall_s"), "slo": slo, "headline": headline,
            "fix_buys": bool(best) and (best[1]["capacity_pps"] or 0) > (best[2]["capacity_pps"] or 0),
            "kernels": kernels}


def table(cap):
    """The terminal table: capacity per kernel and quota, why not met, and
    the headline last."""
    grid = cap["spec"]["capacity"]
    lines = [f"Capacity: the highest RT load rate up to which every step met "
             f"{sweep.objectives(cap['slo'])}",
             f"(RT client SCHED_FIFO on CPU 0 through the relay on CPU 1; a co-tenant "
             f"on CPU 1 under a CPU quota; {cap.get('clock') or '?'} clock; rates "
             f"{grid['rt_rate_from_pps']}-{grid['rt_rate_to_pps']} pps in "
             f"{grid['rt_rate_steps']} steps of {grid['step_s']} s)", ""]
    rows = [("quota", "co-tenant", "stock", "patched")]
    cells = {}
    for k in KERNELS:
        for c in cap["kernels"][k]["by_quota"]:
            cells.setdefault((c["cotenant_rate_pps"], c["cpu_quota_pct"]), {})[k] = c
    for (crate, q), by in sorted(cells.items()):
        rows.append((f"{q}%", f"{crate} pps", cap_text(by.get("stock")),
                     cap_text(by.get("patched"))))
    widths = [max(len(r[i]) for r in rows) for i in range(4)]
    lines += ["  ".join(x.ljust(w) if i < 2 else x.rjust(w) for i, (x, w) in
                        enumerate(zip(r, widths))) for r in rows]
    whys = [f"  {k} at {q}%: {by[k]['why_not']}" for (_, q), by in sorted(cells.items())
            for k in KERNELS if k in by and by[k]["why_not"]]
    probs = [f"  {k} at {q}%: {p}" for (_, q), by in sorted(cells.items())
             for k in KERNELS if k in by for p in by[k]["problems"]]
    for k in KERNELS:
        if cap["kernels"][k]["outcome"] != "ok":
            probs.append(f"  {k}: the guest's outcome was {cap['kernels'][k]['outcome']}")
    if whys:
        lines += ["", "the first step not met:"] + whys
    if probs:
        lines += ["", "problems (a cell with one has no capacity):"] + probs
    lines += ["", f"headline: {cap['headline']}"]
    return "\n".join(lines) + "\n"


def _cells(cap, k, crate):
    return [c for c in cap["kernels"][k]["by_quota"] if c["cotenant_rate_pps"] == crate]


def heatmap(cap, k, crate, out, cb):
    """p99.9 (the worst run) over RT load rate x quota, log colour, the
    value in each cell; a cross where the step was not met."""
    cells = _cells(cap, k, crate)
    rates = sorted({s["target_rate"] for c in cells for s in c["steps"]})
    quotas = sorted(c["cpu_quota_pct"] for c in cells)
    if not rates or not quotas:
        return False
    rows, labels = [], []
    for yi, q in enumerate(quotas):
        c = next(c for c in cells if c["cpu_quota_pct"] == q)
        for xi, r in enumerate(rates):
            runs = [s for s in c["steps"] if s["target_rate"] == r]
            if not runs:
                continue
            worst = max(s["latency_us"].get("p99_9") or 0 for s in runs) / 1000.0
            met = all(s["meets_slo"] for s in runs)
            rows.append((xi, yi, max(worst, cb[0])))
            value = f"{worst:.0f}" if worst >= 100 else f"{worst:.3g}"
            labels.append((xi, yi, value + ("" if met else " ✗")))
    xt = ", ".join(f'"{r / 1000:g}k" {i}' for i, r in enumerate(rates))
    yt = ", ".join(f'"{q}%%" {i}' for i, q in enumerate(quotas))  # a tic label is a format
    script = head(820, 120 + 70 * len(quotas), out) + \
        _block("h", rows) + _block("l", labels) + f"""
set title {gnuplot_string(f"{k}: p99.9 latency (ms) over RT load x co-tenant quota (✗: not met)")} noenhanced
set xtics ({xt})
set ytics ({yt})
set xrange [-0.5:{len(rates) - 0.5}]
set yrange [-0.5:{len(quotas) - 0.5}]
set xlabel "RT load (datagrams/s)"
set ylabel "co-tenant quota"
set logscale cb
set cbrange [{cb[0]:g}:{cb[1]:g}]
set cblabel "p99.9 (ms)"
set format cb "%g"
set palette defined (0 "#eaf2f8", 1 "#85c1e9", 2 "#f5b041", 3 "#c0392b")
set grid noxtics noytics
unset key
set style fill solid 1.0 noborder
plot $h using 1:2:(0.5):(0.5):3 with boxxyerror fc palette, $l using 1:2:3 with labels font ",11"
"""
    _gnuplot(script, out)
    return True


def draw_all(cap, plot_dir):
    """Every plot: [(file, caption)]."""
    os.makedirs(plot_dir, exist_ok=True)
    made = []
    lat = [s["latency_us"].get("p99_9") or 0 for k in KERNELS
           for c in cap["kernels"][k]["by_quota"] for s in c["steps"]]
    lat = [v / 1000.0 for v in lat if v > 0]
    cb = (min(lat, default=0.01), max(max(lat, default=1.0), min(lat, default=0.01) * 10))
    crates = sorted({c["cotenant_rate_pps"] for k in KERNELS for c in cap["kernels"][k]["by_quota"]})
    for crate in crates:
        tag = "" if len(crates) == 1 else f"-c{crate}"
        for k in KERNELS:
            f = f"heatmap-{k}{tag}.svg"
            if heatmap(cap, k, crate, os.path.join(plot_dir, f), cb):
                made.append((f, f"{k} kernel: p99.9 over RT load and co-tenant quota"))
        for q in sorted({c["cpu_quota_pct"] for k in KERNELS for c in _cells(cap, k, crate)}):
            curves = []
            for i, k in enumerate(KERNELS):
                c = next((c for c in _cells(cap, k, crate) if c["cpu_quota_pct"] == q), None)
                if c and c["steps"]:
                    curves.append((k, COLOURS[i], sweep.points(
                        {"mode": "rate", "steps": [_as_sweep_step(s) for s in c["steps"]]})))
            f = f"latency-q{q}{tag}.svg"
            if sweep.latency_plot(curves, cap["slo"], os.path.join(plot_dir, f),
                                  f"quota {q}% (co-tenant {crate} pps): latency vs RT load"):
                made.append((f, f"both kernels at co-tenant quota {q}%: latency vs RT load"))
    return made


def _as_sweep_step(s):
    """A capacity.json step in the shape sweep.points reads."""
    return {"target_rate": s["target_rate"], "quota_pct": None, "meets_slo": s["meets_slo"],
            "why": s["why"], "saturated": s["saturated"],
            "result": {"latency_us": {"corrected": s["latency_us"]}, "lost": s["lost"] or 0,
                       "sent": s["sent"] or 0, "achieved_rate": s["achieved_rate"],
                       "watched_cgroup": {"nr_throttled": s["throttled_periods"]}}}


EXPLAIN = {
    "heatmap": "Each cell is one step of the grid: the RT client's p99.9 latency (the worst "
               "of its runs) at that RT load with the co-tenant under that quota. A cross "
               "marks a step that did not meet the objective (latency, a lost datagram or a "
               "missed rate).",
    "latency": "Both kernels at one quota, red stock and blue patched: p50 (dotted), p99 "
               "(dash-dot), p99.9 (solid) and max (dashed) against the RT load, each "
               "objective as a grey dashed line.",
}


def render_page(cap, plots, generated):
    colour = GOOD if cap["fix_buys"] else MIXED
    cells = {}
    for k in KERNELS:
        for c in cap["kernels"][k]["by_quota"]:
            cells.setdefault((c["cotenant_rate_pps"], c["cpu_quota_pct"]), {})[k] = c
    body = "".join(
        f"<tr><td>{q}%</td><td>{crate} pps</td>" + "".join(
            f"<td title='{html_text((by.get(k) or {}).get('why_not') or '')}'>"
            f"{html_text(cap_text(by.get(k)))}</td>"
            for k in KERNELS) + "</tr>" for (crate, q), by in sorted(cells.items()))
    whys = "".join(f"<li><b>{html_text(k)} at {q}%</b>: {html_text(by[k]['why_not'])}</li>"
                   for (_, q), by in sorted(cells.items()) for k in KERNELS
                   if k in by and by[k]["why_not"])
    probs = "".join(f"<li><b>{html_text(k)} at {q}%</b>: {html_text(p)}</li>"
                    for (_, q), by in sorted(cells.items()) for k in KERNELS
                    if k in by for p in by[k]["problems"])
    figs = "".join(f'<figure><img src="plots/{html_text(f)}" alt="{html_text(c)}">'
                   f'<figcaption><b>{html_text(c)}.</b> '
                   f'{html_text(EXPLAIN[f.split("-")[0]])}</figcaption></figure>' for f, c in plots)
    grid = cap["spec"]["capacity"]
    facts = [("run", cap.get("run_id")), ("date", cap.get("date")), ("clock", cap.get("clock")),
             ("objectives", sweep.objectives(cap["slo"])),
             ("RT load", f"{grid['rt_rate_from_pps']}-{grid['rt_rate_to_pps']} pps, "
                         f"{grid['rt_rate_steps']} steps of {grid['step_s']} s, "
                         f"{grid['repeat']} repeat pass(es) where not monotonic"),
             ("co-tenant", f"{grid['senders']} loadgen senders at "
                           f"{grid['cotenant_rate_pps']} pps on the relay's CPU, "
                           f"cpu.max period {grid['period_us']} us"),
             ("run spec", "spec.json: " + json.dumps(cap["spec"], sort_keys=True)),
             ("initramfs sha256", cap.get("initramfs_sha256")),
             ("wall time", f"{cap.get('wall_s')} s")] + \
        [(f"{k} kernel", f"{cap['kernels'][k]['version']} ({cap['kernels'][k]['outcome']})")
         for k in KERNELS]
    dl = "".join(f"<dt>{html_text(a)}</dt><dd>{html_text(b)}</dd>" for a, b in facts)
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Capacity: stock vs patched PREEMPT_RT</title>
<style>{CSS}</style></head>
<body><main>
<h1>Capacity: what the fix buys</h1>
<div class="verdict" style="background:{colour}"><b>CAPACITY</b>{html_text(cap['headline'])}</div>
<h2 id="capacity">Highest RT load meeting {html_text(sweep.objectives(cap['slo']))}</h2>
<table><thead><tr><th>co-tenant quota</th><th>co-tenant rate</th><th>stock</th><th>patched</th></tr></thead>
<tbody>{body}</tbody></table>
<p class="muted">The capacity is the highest RT load up to which every step met the objective
in every run; "none" where even the lowest load did not (not a measured 0); "&gt;=" where every
step of the grid met it. A step that lost a datagram or missed its rate is not met.</p>
<h3>Why a step was not met (the first one per cell)</h3><ul>{whys or "<li>every step met</li>"}</ul>
{f'<p class="note"><b>Problems.</b></p><ul>{probs}</ul>' if probs else ""}
<h2 id="plots">Plots</h2>
{figs}
<h2 id="run">What was run</h2>
<dl>{dl}</dl>
<p class="muted">Generated {html_text(generated)} by report/capacity from the result files in this
directory.</p>
</main></body></html>
"""


def check(run_dir, screenshot=None):
    """The page is whole: capacity.json and table.txt parse, the page shows
    exactly the SVGs in plots/; with a screenshot PNG, the headline badge
    and both kernels' curves are on it."""
    try:
        cap = read_json(os.path.join(run_dir, "capacity.json"))
    except DataError as e:
        raise CheckError(str(e))
    text, page = read_texts(run_dir, ("table.txt", "capacity.html"))
    for name in ("slo", "headline", "kernels"):
        if name not in cap:
            raise CheckError(f"capacity.json has no {name}")
    for k in KERNELS:
        for c in cap["kernels"][k]["by_quota"]:
            if not {"cpu_quota_pct", "capacity_pps", "steps"} <= set(c):
                raise CheckError(f"capacity.json: {k} by_quota lacks cpu_quota_pct/capacity_pps/steps")
    if not text.rstrip().splitlines()[-1].startswith("headline: "):
        raise CheckError("table.txt does not end with the headline")
    check_plots(run_dir, page, "capacity.html", True)
    if screenshot:
        colour = GOOD if cap["fix_buys"] else MIXED
        _, height, counts, ink = png.colour_counts(screenshot, [colour] + list(COLOURS[:2]))
        if counts[colour] < 10000:
            raise CheckError("no headline badge on the page")
        for i, k in enumerate(KERNELS):
            if counts[COLOURS[i]] < 500:
                raise CheckError(f"no {k} curve ({COLOURS[i]}) on the page: the plots did not load")
        return counts
    return None
