"""A loadgen sweep (loadgen(1) SWEEP, its --json) as a table and as a
gnuplot plot of latency against the offered rate (or the quota); and
report/sweep, the command that shows a sweep or a search (search.py).

  report/sweep SWEEP.json [--out DIR] [--title TITLE]

Prints the table (a row per step, the worst of its runs; the noise of a
non-monotonic sweep; the knee; the capacity last). With --out, writes
DIR/table.txt and DIR/latency.svg: p50, p99, p99.9 and max against the
offered rate (or, for a --quota sweep, the quota), every objective as a
line and the knee marked.

A search (loadgen sweep --search) has a row per step, every rate's runs
that met, each search's interval and loadgen's verdict; its latency.svg
has every step as a point of each objective's percentile, met or missed,
and the capacity as a line over its range across the searches.

Exit status: 0 done; 64 bad command line; 65 the JSON is missing or not a
sweep; 69 gnuplot is missing or failed; 73 the output cannot be written.
"""
import os
import sys

from . import cli, search
from .escape import gnuplot_number, gnuplot_string
from .files import DataError, ToolError, number, output_dir, read_json, write_text
from .plots import datablock, head, run_gnuplot
from .slo import fmt_us, objectives, slo_label

# The percentiles a latency curve shows, JSON key and label.
PCTS = (("p50", "p50"), ("p99", "p99"), ("p99_9", "p99.9"), ("max", "max"))
PCT_COLOURS = ("#1e8449", "#2471a3", "#c0392b", "#7d3c98")
# With several sweeps on one plot (kernels), one colour per sweep and one
# dash pattern per percentile.
PCT_DASH = (3, 4, 1, 2)


def load(path):
    """The sweep JSON at PATH, checked for the names this module reads."""
    return check(read_json(path), path)


def check(j, path):
    """J, the sweep JSON read from PATH, checked for the names this module
    reads."""
    if not isinstance(j, dict) or j.get("mode") not in ("rate", "quota") or \
            not isinstance(j.get("steps"), list) or not isinstance(j.get("slo"), dict):
        raise DataError(f"{path}: not a loadgen sweep (mode, slo, steps)")
    # Before loadgen took the lab's name for the quota (lab/README.md) it
    # wrote quota_pct: a sweep recorded then reads the same.
    noise = j.get("noise") if isinstance(j.get("noise"), list) else []
    for point in [j.get("capacity"), j.get("knee")] + j["steps"] + noise:
        if isinstance(point, dict) and "quota_pct" in point:
            point.setdefault("cpu_quota_pct", point.pop("quota_pct"))
    for name, us in j["slo"].items():
        number(us, f"{path}: slo.{name}")
    for name in ("capacity", "knee"):
        point = j.get(name)
        if point is None:
            continue
        if not isinstance(point, dict):
            raise DataError(f"{path}: {name}: expected an object or null")
        number(point.get("target_rate"), f"{path}: {name}.target_rate", optional=j["mode"] == "quota")
        number(point.get("cpu_quota_pct"), f"{path}: {name}.cpu_quota_pct", optional=j["mode"] == "rate")
    for n, s in enumerate(j["steps"]):
        try:
            r = s["result"]
            lat = r["latency_us"]["corrected"]
            lat["p50"]
            s["target_rate"], s["meets_slo"]
        except (KeyError, TypeError):
            raise DataError(f"{path}: step {n} lacks result.latency_us.corrected")
        where = f"{path}: step {n}"
        number(s["target_rate"], f"{where}: target_rate", optional=j["mode"] == "quota")
        number(s.get("cpu_quota_pct"), f"{where}: cpu_quota_pct", optional=j["mode"] == "rate")
        for k, v in lat.items():
            number(v, f"{where}: latency_us.corrected.{k}", optional=True)
        for k in ("lost", "sent", "achieved_rate"):
            number(r.get(k), f"{where}: result.{k}", optional=True)
    return j


def x_of(sweep, step):
    return step["cpu_quota_pct"] if sweep["mode"] == "quota" else step["target_rate"]


def points(sweep):
    """One point per step value, easiest first as the sweep ran them: the
    worst of its runs for every percentile (the capacity is judged on every
    run), runs, runs met, datagrams lost, co-tenant periods throttled, and
    the first reason a run did not meet."""
    by_x = {}
    for s in sweep["steps"]:
        r = s["result"]
        lat = r["latency_us"]["corrected"]
        watched = r.get("watched_cgroup") or r.get("cgroup") or {}
        p = by_x.setdefault(x_of(sweep, s), {
            "x": x_of(sweep, s), "runs": 0, "met": 0, "lost": 0, "sent": 0,
            "throttled": 0, "achieved": None, "why": None, "saturated": False,
            **{k: None for k, _ in PCTS}})
        p["runs"] += 1
        p["met"] += bool(s["meets_slo"])
        p["lost"] += r.get("lost", 0)
        p["sent"] += r.get("sent", 0)
        p["throttled"] += watched.get("nr_throttled") or 0
        p["saturated"] |= bool(s.get("saturated"))
        a = r.get("achieved_rate")
        p["achieved"] = a if p["achieved"] is None else min(p["achieved"], a)
        if not s["meets_slo"] and p["why"] is None:
            p["why"] = s.get("why") or "not met"
        for k, _ in PCTS:
            v = lat.get(k)
            if v is not None:
                p[k] = v if p[k] is None else max(p[k], v)
    return list(by_x.values())


def capacity_text(sweep):
    cap = sweep.get("capacity")
    if not cap:
        return "none"
    if sweep["mode"] == "quota":
        return f"quota {cap['cpu_quota_pct']:g}%"
    return f"{cap['target_rate']:.0f} pps"


def table(sweep, title=None):
    """The sweep as text: a row per step value (worst of its runs), the
    noise of a non-monotonic sweep, the knee, and the verdict last."""
    quota = sweep["mode"] == "quota"
    head = ("quota %" if quota else "rate pps", "runs", "met", "achieved", "p50",
            "p99", "p99.9", "max", "lost", "throttled")
    rows = []
    for p in points(sweep):
        x = f"{p['x']:g}" if quota else f"{p['x']:.0f}"
        rows.append((x, str(p["runs"]), str(p["met"]),
                     f"{p['achieved']:.0f}" if p["achieved"] is not None else "-",
                     *(fmt_us(p[k]) for k in ("p50", "p99", "p99_9", "max")),
                     str(p["lost"]), str(p["throttled"])))
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h)
              for i, h in enumerate(head)]
    lines = [title] if title else []
    lines.append(f"target {sweep.get('target', '?')}, objectives: "
                 f"{objectives(sweep['slo'])}")
    lines.append("  ".join(h.rjust(w) for h, w in zip(head, widths)) + "  verdict")
    for p, r in zip(points(sweep), rows):
        verdict = "met" if p["met"] == p["runs"] else f"no: {p['why']}"
        lines.append("  ".join(c.rjust(w) for c, w in zip(r, widths)) + "  " + verdict)
    for n in sweep.get("noise") or []:
        spread = ", ".join(f"{slo_label(k)} {fmt_us(a)} to {fmt_us(b)}"
                           for k, (a, b) in sorted(n["spread_us"].items()))
        x = f"quota {n['cpu_quota_pct']:g}%" if quota else f"{n['target_rate']:.0f} pps"
        lines.append(f"noise: {x}: {n['met']} of {n['runs']} runs met, {spread}")
    knee = sweep.get("knee")
    if knee:
        x = f"quota {knee['cpu_quota_pct']:g}%" if quota else f"{knee['target_rate']:.0f} pps"
        lines.append(f"knee: {x} ({knee.get('why') or 'saturated'})")
    if not sweep.get("monotonic", True):
        lines.append("not monotonic: the capacity is where every run of every "
                     "easier step met; the noise is above")
    lines.append(f"capacity: {capacity_text(sweep)} at {objectives(sweep['slo'])}")
    return "\n".join(lines) + "\n"


def latency_plot(curves, slo, out, title, quota=False, knee=None):
    """Latency against offered rate (or quota), log y in ms: for one curve
    its p50, p99, p99.9 and max in four colours; for several (kernels) one
    colour each and one dash pattern per percentile. Each objective is a
    grey dashed line, the knee a vertical line. curves: [(label, colour,
    points)]. Returns False when there is nothing to draw."""
    curves = [c for c in curves if c[2]]
    if not curves:
        return False
    blocks, plots = "", []
    for i, (label, colour, pts) in enumerate(curves):
        rows = [(p["x"], *((p[k] or 0) / 1000.0 for k, _ in PCTS)) for p in pts]
        blocks += datablock(f"c{i}", sorted(rows))
        for n, (_, name) in enumerate(PCTS):
            if len(curves) == 1:
                style = f'lc rgb "{PCT_COLOURS[n]}" dt 1'
                key = name
            else:
                style = f'lc rgb "{colour}" dt {PCT_DASH[n]}'
                key = f"{label} {name}"
            plots.append(f"$c{i} using 1:($" + str(n + 2) + f" > 0 ? ${n + 2} : NaN) "
                         f"with linespoints lw 2 pt 7 ps 0.6 {style} title {gnuplot_string(key)} noenhanced")
    # The objectives are on the plot even when every step is far from them.
    values = [p[k] / 1000.0 for _, _, pts in curves for p in pts for k, _ in PCTS
              if p[k]] + [us / 1000.0 for us in slo.values()]
    lo, hi = min(values, default=0.01) / 2, max(values, default=1) * 2
    marks = f"set yrange [{gnuplot_number(lo)}:{gnuplot_number(hi)}]\n"
    for name, us in slo.items():
        ms = gnuplot_number(us / 1000.0, f"the objective {name}")
        marks += (f"set arrow from graph 0, first {ms} to graph 1, first {ms} nohead "
                  f'dt 2 lc rgb "#666666" lw 1.5 front\n')
        plots.append(f'NaN with lines dt 2 lc rgb "#666666" lw 1.5 '
                     f'title {gnuplot_string(f"objective {slo_label(name)} <= {fmt_us(us)}")} noenhanced')
    if knee is not None:
        knee = gnuplot_number(knee, "the knee")
        marks += (f"set arrow from first {knee}, graph 0 to first {knee}, graph 1 nohead "
                  f'lc rgb "#b9770e" lw 2 dt 1 front\n')
        plots.append(f'NaN with lines lc rgb "#b9770e" lw 2 '
                     f'title {gnuplot_string("knee: saturated from here")}')
    xlabel = "co-tenant CPU quota (%)" if quota else "offered rate (datagrams/s)"
    script = head(820, 520) + blocks + marks + f"""
set title {gnuplot_string(title)} noenhanced
set logscale y
set ylabel "latency (ms)"
set format y "%g"
set xlabel {gnuplot_string(xlabel)}
set offsets graph 0.03, graph 0.03, 0, 0
set key below horizontal samplen 2 maxrows 3
"""
    run_gnuplot(script + "plot " + ", \\\n  ".join(plots) + "\n", out)
    return True


def draw(sweep, out, title=None):
    """The latency-vs-rate (or -quota) plot of one sweep."""
    quota = sweep["mode"] == "quota"
    knee = sweep.get("knee")
    x = None if not knee else knee["cpu_quota_pct"] if quota else knee["target_rate"]
    what = "latency vs quota" if quota else "latency vs offered rate"
    return latency_plot([("", None, points(sweep))], sweep["slo"], out,
                        title or f"{sweep.get('target', '')}: {what}", quota, x)


def main(argv=None):
    ap = cli.Parser(prog="sweep", description="Table and plot of a loadgen sweep's JSON.")
    ap.add_argument("json", help="what loadgen sweep --json wrote")
    ap.add_argument("--out", help="write table.txt and latency.svg here")
    ap.add_argument("--title", help="the plot's title")
    args = ap.parse_args(argv)
    try:
        j = read_json(args.json)
        if search.is_search(j):
            s, plot = search.check(j, args.json), search.draw
            text = search.table(s)
        else:
            s, plot = check(j, args.json), draw
            text = table(s)
        sys.stdout.write(text)
        if args.out:
            os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
            output_dir(args.out)
            write_text(os.path.join(args.out, "table.txt"), text)
            svg = os.path.join(args.out, "latency.svg")
            plot(s, svg, args.title)
            print(f"plot: {svg}")
    except DataError as e:
        print(f"sweep: {e}", file=sys.stderr)
        return 65
    except ToolError as e:
        print(f"sweep: {e}", file=sys.stderr)
        return 69
    except OSError as e:
        print(f"sweep: {e}", file=sys.stderr)
        return 73
    return 0


if __name__ == "__main__":
    sys.exit(main())
