"""plots: make capacity's plots: each kernel's capacity against the
co-tenant quota, a heat map of p99.9 over RT load and quota per kernel,
and both kernels' latency against the RT load at each quota."""
import os

from report import sweep
from report.escape import gnuplot_number, gnuplot_string
from report.files import output_dir
from report.plots import COLOURS, datablock, head, run_gnuplot
from report.slo import objectives

from .judge import KERNELS


def cells_of(cap, k, crate):
    """Kernel K's cells with the co-tenant at CRATE."""
    return [c for c in cap["kernels"][k]["by_quota"] if c["cotenant_rate_pps"] == crate]


def heatmap(cap, k, crate, out, cb):
    """p99.9 (the worst run) over every RT load rate a search tried x
    quota, log colour, the value in each cell while there is room for it;
    a cross where a run was not met."""
    cells = cells_of(cap, k, crate)
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
            value = "" if len(rates) > 12 else f"{worst:.0f}" if worst >= 100 else f"{worst:.3g}"
            labels.append((xi, yi, value + ("" if met else " ✗")))
    xt = ", ".join(f'"{r / 1000:.3g}k" {i}' for i, r in enumerate(rates))
    yt = ", ".join(f'"{q}%%" {i}' for i, q in enumerate(quotas))  # a tic label is a format
    script = head(820, 120 + 70 * len(quotas)) + \
        datablock("h", rows) + datablock("l", labels) + f"""
set title {gnuplot_string(f"{k}: p99.9 latency (ms) over RT load x co-tenant quota (✗: not met)")} noenhanced
set xtics ({xt}) rotate by 45 right
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
    run_gnuplot(script, out)
    return True


def capacity_plot(cap, crate, out):
    """Each kernel's capacity against the co-tenant quota: the median of
    its repeats, the interval over them as an error bar; an unstable cell
    (some repeats found one, some none) as its interval alone, without a
    median; "none" on the axis as a cross, a ceiling of loadgen's as a
    triangle."""
    blocks, plots, top = "", [], 1.0
    for i, k in enumerate(KERNELS):
        found, none, ceil, shaky = [], [], [], []
        for c in cells_of(cap, k, crate):
            q, cp = c["cpu_quota_pct"], c["capacity"]
            if cp is None or (not cp["found"]):
                none.append((q, 0))
            elif cp["unstable"]:
                shaky.append((q, (cp["min_pps"] + cp["max_pps"]) / 2, cp["min_pps"], cp["max_pps"]))
            elif c["at_least"]:
                ceil.append((q, cp["median_pps"]))
            else:
                found.append((q, cp["median_pps"], cp["min_pps"], cp["max_pps"]))
            top = max(top, (cp or {}).get("max_pps") or 0)
        colour = COLOURS[i]
        for name, rows, style in (
                (f"f{i}", found, f'with yerrorbars lw 2 pt 7 ps 1.2 lc rgb "{colour}" title '
                                 f'{gnuplot_string(f"{k}: median, interval over the repeats")}'),
                (f"u{i}", shaky, f'with yerrorbars lw 2 dt 3 pt 0 ps 0 lc rgb "{colour}" title '
                                 f'{gnuplot_string(f"{k}: unstable (interval of those that found one)")}'),
                (f"n{i}", none, f'with points pt 2 ps 2 lw 3 lc rgb "{colour}" title '
                                f'{gnuplot_string(f"{k}: none")}'),
                (f"c{i}", ceil, f'with points pt 9 ps 1.8 lc rgb "{colour}" title '
                                f'{gnuplot_string(f"{k}: at least (loadgen ceiling)")}')):
            if rows:
                blocks += datablock(name, sorted(rows))
                plots.append(f"${name} using 1:2" + (":3:4 " if name[0] in "fu" else " ") + style)
        if found:
            plots.append(f'$f{i} using 1:2 with lines lw 1.5 dt 2 lc rgb "{colour}" notitle')
    if not plots:
        return False
    script = head(820, 480) + blocks + f"""
set title {gnuplot_string(f"capacity at {objectives(cap['slo'])} vs co-tenant quota")} noenhanced
set xlabel "co-tenant CPU quota (% of the relay's CPU)"
set ylabel "RT load (datagrams/s)"
set yrange [-{gnuplot_number(top * 0.04)}:{gnuplot_number(top * 1.15)}]
set offsets graph 0.05, graph 0.05, 0, 0
set key below horizontal samplen 2
"""
    run_gnuplot(script + "plot " + ", \\\n  ".join(plots) + "\n", out)
    return True


def draw_all(cap, plot_dir):
    """Every plot: [(file, caption)]."""
    output_dir(plot_dir)
    made = []
    lat = [s["latency_us"].get("p99_9") or 0 for k in KERNELS
           for c in cap["kernels"][k]["by_quota"] for s in c["steps"]]
    lat = [v / 1000.0 for v in lat if v > 0]
    cb = (min(lat, default=0.01), max(max(lat, default=1.0), min(lat, default=0.01) * 10))
    crates = sorted({c["cotenant_rate_pps"] for k in KERNELS for c in cap["kernels"][k]["by_quota"]})
    for crate in crates:
        tag = "" if len(crates) == 1 else f"-c{crate}"
        f = f"capacity{tag}.svg"
        if capacity_plot(cap, crate, os.path.join(plot_dir, f)):
            made.append((f, "both kernels: capacity against the co-tenant quota, "
                            "with the interval over the repeats"))
        for k in KERNELS:
            f = f"heatmap-{k}{tag}.svg"
            if heatmap(cap, k, crate, os.path.join(plot_dir, f), cb):
                made.append((f, f"{k} kernel: p99.9 over RT load and co-tenant quota"))
        for q in sorted({c["cpu_quota_pct"] for k in KERNELS for c in cells_of(cap, k, crate)}):
            curves = []
            for i, k in enumerate(KERNELS):
                c = next((c for c in cells_of(cap, k, crate) if c["cpu_quota_pct"] == q), None)
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
    return {"target_rate": s["target_rate"], "cpu_quota_pct": None, "meets_slo": s["meets_slo"],
            "why": s["why"], "saturated": s["saturated"],
            "result": {"latency_us": {"corrected": s["latency_us"]}, "lost": s["lost"] or 0,
                       "sent": s["sent"] or 0, "achieved_rate": s["achieved_rate"],
                       "watched_cgroup": {"nr_throttled": s["throttled_periods"]}}}
