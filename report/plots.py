"""SVG plots, drawn by gnuplot from the result files."""
import math
import os
import subprocess

from .escape import file_name, gnuplot_datum, gnuplot_number, gnuplot_string
from .files import ToolError, new_output, output_dir, read_events, read_hgrm, read_timeseries

# One colour per column, in column order (stock, patched / rwlock, pi_mutex,
# mutex): red is the kernel with the bug, blue the fix.
COLOURS = ("#c0392b", "#2471a3", "#7d8c8d")


def head(w, h):
    """The start of every script: an SVG of w x h (run_gnuplot says where
    it goes)."""
    return (f'set terminal svg size {w},{h} dynamic enhanced font "DejaVu Sans,13" '
            'background rgb "white"\n'
            'set border 3 lc rgb "#555555"\nset tics nomirror\n'
            'set grid lc rgb "#dddddd" lt 1\nset key top left opaque\n')


def run_gnuplot(script, out):
    """Run SCRIPT, its plot written to OUT: gnuplot's `set output` opens
    whatever is at the path it is given, so it gets a fresh temporary
    file beside OUT, which is renamed over OUT (files.new_output)."""
    with new_output(out) as tmp:
        try:
            p = subprocess.run(["gnuplot"], input=f"set output {gnuplot_string(tmp)}\n" + script,
                               text=True, capture_output=True, timeout=60)
        except FileNotFoundError:
            raise ToolError("gnuplot not found (install gnuplot-nox: mk/deps report)")
        if p.returncode != 0 or not os.path.getsize(tmp):
            raise ToolError(f"gnuplot failed on {os.path.basename(out)}: {p.stderr.strip()}")


def datablock(name, rows):
    """An inline datablock: numbers as numbers, strings as quoted fields."""
    def field(x):
        return gnuplot_datum(x) if isinstance(x, str) else gnuplot_number(x, f"a value of ${name}")
    body = "\n".join(" ".join(field(x) for x in r) for r in rows)
    return f"${name} << EOD\n{body}\nEOD\n"


def distribution(view, name, title, out):
    """Percentile distribution of every column on one HdrHistogram-style axis."""
    blocks, plots, top = "", [], 10.0
    for i, c in enumerate(view.columns):
        path = c.hgrm.get(name)
        if not path:
            continue
        rows = [(x, v) for v, _, x in read_hgrm(path) if v > 0]
        if not rows:
            continue
        top = max(top, rows[-1][0])
        blocks += datablock(f"d{i}", rows)
        # Each column drawn wider than the ones after it, which go on top:
        # two distributions that coincide (an A/A run, a kernel change
        # that changes nothing) show as the later curve inside the
        # earlier one's outline, not as one curve.
        width = 2.5 + 3.5 * (len(view.columns) - 1 - i)
        plots.append(f'$d{i} using 1:2 with steps lw {width:g} lc rgb "{COLOURS[i % 3]}" '
                     f'title {gnuplot_string(c.label)} noenhanced')
    if not plots:
        return False
    decades = max(2, math.ceil(math.log10(top)))
    # Tic labels are printf formats to gnuplot: a literal % is %%.
    tics = ", ".join(f'"{_nines(d).replace("%", "%%")}" {10 ** d}' for d in range(0, decades + 1))
    script = head(820, 480) + blocks + f"""
set title {gnuplot_string(title + ': percentile distribution')} noenhanced
set logscale x
set logscale y
set xrange [1:{10 ** decades}]
set xtics ({tics})
set key below horizontal samplen 2
set ylabel "latency (ms)"
set format y "%g"
"""
    if view.signal_ms:
        arrow, key = _signal_line(view)
        script += arrow
        plots.append(key)
    run_gnuplot(script + "plot " + ", \\\n  ".join(plots) + "\n", out)
    return True


def _nines(decade):
    """Axis label for 1/(1-p) = 10^decade: 0%, 90%, 99%, 99.9%, ..."""
    if decade < 2:
        return ("0%", "90%")[decade]
    return "99" + ("." + "9" * (decade - 2) if decade > 2 else "") + "%"


def _signal_line(view, short=False):
    """The late limit as a dashed line, named in the key (a label on the
    plot would sit on the data). On the host clock it is the emulation-noise
    limit; elsewhere (the virtual clock, test hosts) the limit the patched
    tail justifies."""
    limit = gnuplot_number(view.signal_ms, "the late limit")
    if view.clock != "host":
        name = f"{view.signal_ms:g} ms late limit" if short else \
            f"{view.signal_ms:g} ms: RT datagrams above are late"
    else:
        name = f"{view.signal_ms:g} ms noise limit" if short else \
            f"{view.signal_ms:g} ms: above is signal, below emulation noise"
    return (f'set arrow from graph 0, first {limit} to graph 1, first {limit} nohead '
            f'dt 2 lc rgb "#888888" lw 1.5 front\n',
            f'NaN with lines dt 2 lc rgb "#888888" lw 1.5 title {gnuplot_string(name)}')


def timeline(view, col, out, ymax_ms, ymin_ms):
    """Relay latency over time (max per window) with stalls shaded and the
    quota lifts marked."""
    if not col.timeseries:
        return False
    rows = [(r["t_s"], r["max_us"] / 1000.0) for r in read_timeseries(col.timeseries)
            if r["count"] > 0 and not math.isnan(r["max_us"])]
    if not rows:
        return False
    events = read_events(col.events) if col.events else []
    i = view.columns.index(col)
    marks, lifts = "", 0
    stalls = [e for e in events if e["kind"] == "stall"]
    for e in stalls:
        start = gnuplot_number(e["t_s"], "a stall's time")
        end = gnuplot_number(e["t_s"] + max(e["duration_ms"], 0) / 1000.0, "a stall's end")
        marks += (f'set object rect from {start}, graph 0 to {end}, graph 1 '
                  f'fc rgb "#f5b7b1" fs solid 0.6 noborder behind\n')
    for e in events:
        if e["kind"] == "quota_lift":
            lifts += 1
            t = gnuplot_number(e["t_s"], "a quota lift's time")
            marks += (f'set arrow from {t}, graph 0 to {t}, graph 1 '
                      f'nohead lc rgb "#1e8449" lw 1 dt 3\n')
    what, start = ("lock wait", "the start") if view.kind == "model" else \
        ("tick lateness", "the relay started")
    plots = [f'$ts using 1:2 with lines lw 1.5 lc rgb "{COLOURS[i % 3]}" '
             f'title "{what}, max per 100 ms"']
    if stalls:
        plots.append(f'NaN with boxes fs solid 0.6 fc rgb "#f5b7b1" title "stall ({len(stalls)})"')
    if lifts:
        plots.append('NaN with lines lc rgb "#1e8449" dt 3 title "quota lifted"')
    duration = max(r[0] for r in rows)
    script = head(820, 340) + datablock("ts", rows) + marks + f"""
set title {gnuplot_string(col.label + ': latency over time (x: s since ' + start + ')')} noenhanced
set logscale y
set yrange [{gnuplot_number(ymin_ms)}:{gnuplot_number(ymax_ms * 2)}]
set xrange [0:{gnuplot_number(duration)}]
set ylabel "ms"
set format y "%g"
set key below horizontal samplen 2
"""
    if view.signal_ms:
        arrow, key = _signal_line(view, short=True)
        script += arrow
        plots.append(key)
    run_gnuplot(script + "plot " + ", \\\n  ".join(plots) + "\n", out)
    return True


def draw_all(view, plot_dir):
    """Every plot the view has data for: [(file name, caption)]."""
    output_dir(plot_dir)
    made = []
    for name, title in view.distributions:
        f = f"distribution-{name}.svg"
        if distribution(view, name, title, os.path.join(plot_dir, f)):
            made.append((f, f"{title}: percentile distribution"))
    # One y scale for every column: from a decade below the smallest window
    # max (sub-millisecond on the virtual clock) to above the largest.
    peak, floor = 1.0, 0.01
    for c in view.columns:
        if c.timeseries:
            maxes = [r["max_us"] / 1000.0 for r in read_timeseries(c.timeseries)
                     if r["count"] > 0 and not math.isnan(r["max_us"])]
            peak = max([peak] + maxes)
            floor = min([floor] + [10 ** math.floor(math.log10(m)) for m in maxes if m > 0])
    for c in view.columns:
        f = f"timeline-{file_name(c.key)}.svg"
        if timeline(view, c, os.path.join(plot_dir, f), peak, floor):
            made.append((f, f"{c.label}: latency over time"))
    return made
