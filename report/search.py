"""A loadgen sweep --search (loadgen(1) SWEEP, Search; its --json) as a
table and as a gnuplot plot: every step a point, met or missed, of each
objective's percentile against the offered rate, and the capacity with
the interval over its independent searches (or, when they disagree, the
interval of those that found one, said as unstable)."""
from .files import DataError, number
from .escape import gnuplot_number, gnuplot_string
from .plots import datablock, run_gnuplot, head
from .slo import fmt_us, objectives, slo_label

# A point's colour says met or missed, its shape which objective (gnuplot's
# filled disc, square, triangle, diamond).
MET_COLOUR, MISSED_COLOUR = "#1e8449", "#c0392b"
SHAPES = (7, 5, 9, 13)
CAPACITY_COLOUR, RANGE_COLOUR = "#2471a3", "#d6eaf8"


def is_search(j):
    return isinstance(j, dict) and j.get("mode") == "search"


def _object(value, where):
    if not isinstance(value, dict):
        raise DataError(f"{where}: expected an object")
    return value


def _list(value, where):
    if not isinstance(value, list):
        raise DataError(f"{where}: expected a list")
    return value


def _text(value, where, optional=False):
    if value is None and optional:
        return None
    if not isinstance(value, str):
        raise DataError(f"{where}: expected a string")
    return value


def _flag(value, where):
    if not isinstance(value, bool):
        raise DataError(f"{where}: expected true or false")
    return value


def check(j, path):
    """J, the search JSON read from PATH, checked for every name this module
    reads: bad data is a DataError naming the key, never a traceback."""
    for key in ("slo", "capacity", "steps", "rates", "intervals", "verdict"):
        if key not in j:
            raise DataError(f"{path}: not a loadgen sweep --search: no {key}")
    slo = _object(j["slo"], f"{path}: slo")
    if not slo:
        raise DataError(f"{path}: slo: no objective")
    for name, us in slo.items():
        number(us, f"{path}: slo.{name}")
    number(j.get("resolution_pct"), f"{path}: resolution_pct")
    _text(j["verdict"], f"{path}: verdict")
    for n, s in enumerate(_list(j["steps"], f"{path}: steps")):
        where = f"{path}: steps[{n}]"
        _object(s, where)
        number(s.get("search"), f"{where}.search")
        number(s.get("target_rate"), f"{where}.target_rate")
        _flag(s.get("meets_slo"), f"{where}.meets_slo")
        values = _object(s.get("objectives_us"), f"{where}.objectives_us")
        for name in slo:
            number(values.get(name), f"{where}.objectives_us.{name}")
        _text(s.get("cause"), f"{where}.cause", optional=True)
        _text(s.get("why"), f"{where}.why", optional=True)
        result = _object(s.get("result", {}), f"{where}.result")
        number(result.get("achieved_rate"), f"{where}.result.achieved_rate", optional=True)
    for n, r in enumerate(_list(j["rates"], f"{path}: rates")):
        for key in ("target_rate", "runs", "met"):
            number(_object(r, f"{path}: rates[{n}]").get(key), f"{path}: rates[{n}].{key}")
    for n, i in enumerate(_list(j["intervals"], f"{path}: intervals")):
        where = f"{path}: intervals[{n}]"
        number(_object(i, where).get("search"), f"{where}.search")
        _text(i.get("end"), f"{where}.end")
        for key in ("met", "missed"):
            number(i.get(key), f"{where}.{key}", optional=True)
    cap = j["capacity"]
    if cap is not None:
        where = f"{path}: capacity"
        _object(cap, where)
        unstable = _flag(cap.get("unstable", False), f"{where}.unstable")
        # unstable: the searches disagree, and there is no median
        number(cap.get("target_rate"), f"{where}.target_rate", optional=unstable)
        for key in ("max_rate", "searches"):
            number(cap.get(key), f"{where}.{key}")
        # null in a search from before the repeats were independent: one found none
        number(cap.get("min_rate"), f"{where}.min_rate", optional=True)
        number(cap.get("found", cap["searches"]), f"{where}.found")
        _flag(cap.get("at_least"), f"{where}.at_least")
    bad = j.get("nonmonotonic")
    if bad is not None:
        where = f"{path}: nonmonotonic"
        _object(bad, where)
        trials = [("met", bad.get("met"))] + [
            (f"missed_below[{n}]", t)
            for n, t in enumerate(_list(bad.get("missed_below"), f"{where}.missed_below"))]
        for name, t in trials:
            for key in ("search", "target_rate"):
                number(_object(t, f"{where}.{name}").get(key), f"{where}.{name}.{key}")
    return j


def _rate(x):
    return f"{x:.10g}"


def _columns(rows, head):
    """Right-aligned columns, the last one left as it is."""
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h)
              for i, h in enumerate(head[:-1])]
    return ["  ".join(c.rjust(w) for c, w in zip(r, widths)) + "  " + r[-1]
            for r in [head] + rows]


def table(j, title=None):
    """The search as text: a row per step, every rate's runs that met, each
    search's interval, the rates that missed below one that met, and
    loadgen's verdict last."""
    names = list(j["slo"])
    lines = [title] if title else []
    lines.append(f"target {j.get('target', '?')}, objectives: {objectives(j['slo'])}, "
                 f"resolution {j['resolution_pct']:g} %")
    rows = []
    for s in j["steps"]:
        achieved = (s.get("result") or {}).get("achieved_rate")
        verdict = "met" if s["meets_slo"] else f"missed ({s.get('cause') or '?'}): {s.get('why') or ''}"
        rows.append((f"{s['search']:g}", _rate(s["target_rate"]),
                     f"{achieved:.0f}" if achieved is not None else "-",
                     *(fmt_us(s["objectives_us"][k]) for k in names), verdict))
    lines += _columns(rows, ("search", "rate pps", "achieved",
                             *(slo_label(k) for k in names), "slo"))
    lines += _columns([(_rate(r["target_rate"]), f"{r['met']:g}", f"{r['runs']:g}", "")
                       for r in j["rates"]], ("rate pps", "met", "runs", ""))
    for i in j["intervals"]:
        found = ", ".join(f"{k} {_rate(i[k])} pps" for k in ("met", "missed") if i.get(k) is not None)
        lines.append(f"search {i['search']:g}: {i['end']}" + (f": {found}" if found else ""))
    bad = j.get("nonmonotonic")
    if bad:
        below = ", ".join(f"{_rate(t['target_rate'])} pps (search {t['search']:g})"
                          for t in bad["missed_below"])
        lines.append(f"not monotonic: {_rate(bad['met']['target_rate'])} pps met "
                     f"(search {bad['met']['search']:g}); missed below it: {below}")
    lines.append(j["verdict"])
    return "\n".join(line.rstrip() for line in lines) + "\n"


def draw(j, out, title=None):
    """Each objective's percentile (ms, log) against the offered rate, green
    for a step that met, red for one that missed; each objective as a grey
    dashed line; the capacity (the median) as a vertical line over the
    interval of the searches, or that interval alone, said as unstable,
    when they disagree."""
    blocks, plots = "", []
    values = [us / 1000.0 for us in j["slo"].values()]
    for n, name in enumerate(j["slo"]):
        pt = SHAPES[n % len(SHAPES)]
        for kind, colour, met in (("met", MET_COLOUR, True), ("missed", MISSED_COLOUR, False)):
            rows = [(s["target_rate"], s["objectives_us"][name] / 1000.0)
                    for s in j["steps"] if s["meets_slo"] == met]
            if not rows:
                continue
            values += [v for _, v in rows if v > 0]
            block = f"{kind}{n}"
            blocks += datablock(block, rows)
            plots.append(f'${block} using 1:($2 > 0 ? $2 : NaN) with points pt {pt} ps 1.2 lw 2 '
                         f'lc rgb "{colour}" title {gnuplot_string(f"{slo_label(name)} {kind}")} noenhanced')
    if not plots:
        return False
    lo, hi = min(values, default=0.01) / 2, max(values, default=1) * 2
    marks = f"set yrange [{gnuplot_number(lo)}:{gnuplot_number(hi)}]\n"
    for name, us in j["slo"].items():
        ms = gnuplot_number(us / 1000.0, f"the objective {name}")
        marks += (f"set arrow from graph 0, first {ms} to graph 1, first {ms} nohead "
                  f'dt 2 lc rgb "#666666" lw 1.5 front\n')
        plots.append(f'NaN with lines dt 2 lc rgb "#666666" lw 1.5 '
                     f'title {gnuplot_string(f"objective {slo_label(name)} <= {fmt_us(us)}")} noenhanced')
    cap = j["capacity"]
    if cap:
        hi = cap["max_rate"]
        lo = hi if cap.get("min_rate") is None else cap["min_rate"]
        span = f"{_rate(lo)}-{_rate(hi)}" if hi > lo else _rate(hi)
        if hi > lo:
            marks += (f"set object rect from first {gnuplot_number(lo)}, graph 0 "
                      f"to first {gnuplot_number(hi)}, graph 1 "
                      f'fc rgb "{RANGE_COLOUR}" fs solid 1.0 noborder behind\n')
        if cap.get("unstable"):
            label = (f"unstable: a capacity in {cap['found']:g} of {cap['searches']:g} "
                     f"independent searches ({span} pps), none in the others")
            plots.append(f'NaN with boxes fc rgb "{RANGE_COLOUR}" fs solid 1.0 '
                         f'title {gnuplot_string(label)} noenhanced')
        else:
            x = gnuplot_number(cap["target_rate"], "the capacity")
            label = f"capacity {'at least ' if cap['at_least'] else ''}{_rate(cap['target_rate'])} pps"
            if cap["searches"] > 1:
                label += f" (median of {cap.get('found', cap['searches']):g} independent searches; {span})"
            marks += (f"set arrow from first {x}, graph 0 to first {x}, graph 1 nohead "
                      f'lc rgb "{CAPACITY_COLOUR}" lw 2 front\n')
            plots.append(f'NaN with lines lc rgb "{CAPACITY_COLOUR}" lw 2 '
                         f'title {gnuplot_string(label)} noenhanced')
    script = head(820, 540) + blocks + marks + f"""
set title {gnuplot_string(title or f"{j.get('target', '')}: capacity search")} noenhanced
set logscale y
set ylabel "latency (ms)"
set format y "%g"
set xlabel "offered rate (datagrams/s)"
set offsets graph 0.03, graph 0.03, 0, 0
set key below horizontal samplen 2 maxrows 3
"""
    run_gnuplot(script + "plot " + ", \\\n  ".join(plots) + "\n", out)
    return True
