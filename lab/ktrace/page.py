"""page: what each kernel's trace explained (the chains of explain.py, as
a summary carries them) on a page and a terminal: table rows, a line per
kernel, and a timeline of the worst wait: the RT waiter, the holder inside
ep_poll_callback, the holder's cgroup throttled, and the priority
inheritance boost."""
import os

from report import page
from report.escape import file_name, gnuplot_number, gnuplot_string
from report.plots import datablock, head, run_gnuplot

LANES = ("RT waiter waits", "holder in ep_poll_callback", "holder's cgroup throttled",
         "holder boosted")
LANE_COLOURS = ("#c0392b", "#7d3c98", "#9a7d0a", "#1e8449")


def worst(w):
    """The chain a kernel is shown by: its worst stall's, or else its
    longest RT wait on the ready-list lock."""
    s = w.get("worst_stall")
    return s["chain"] if s and s.get("chain") else w.get("longest_rt_wait")


def _task(t):
    if not t:
        return "-"
    return f"{t.get('comm', '?')}/{t.get('pid', '?')} ({t.get('policy', '?')} {t.get('priority', '?')})"


def _state(c):
    st = c.get("holder_state") or {}
    if st.get("state") != "throttled":
        return st.get("state", "-")
    text = f"throttled in {st.get('throttled_in', '?')} at {st.get('throttled_s')} s"
    if st.get("unthrottled_s") is not None:
        text += f", let go at {st['unthrottled_s']} s by {st.get('unthrottled_by_text', '?')}"
    return text


def _boost(c):
    b = c.get("boost")
    if not b:
        return "none"
    return (f"{b['from'][0]} {b['from'][1]} to {b['to'][0]} {b['to'][1]} after "
            f"{b['after_wait_began_ms']} ms, ran boosted {b['boosted_ms']} ms")


def _softirqs(sh):
    """The non-RT waker's chain: the relay's timerfd tick is a softirq, held
    with the CPU's softirq lock by a throttled task that no task waits on."""
    h = sh["longest"]
    text = (f"CPU {h['cpu']}'s softirqs (the relay's timerfd tick) held {h['held_ms']} ms by "
            f"{_task(h['holder'])}, throttled {h['holding']}; no task waited on the lock to "
            "boost it")
    if h.get("boost"):
        text += (f", until {_task(h['boost']['by'])} needed the lock and boosted it to "
                 f"{h['boost']['to'][0]} {h['boost']['to'][1]}")
    elif h.get("ended_by") == "unthrottle":
        text += ", until the unthrottle"
    if sh.get("late_ms") is not None:
        text += f" ({sh['over_late_ms']} of {sh['throttles_holding']} such holds over {sh['late_ms']:g} ms)"
    return text


def _pcts(p, unit="us"):
    return "-" if not p else f"p50 {p['p50']:g}, p99 {p['p99']:g}, max {p['max']:g} {unit} ({p['n']})"


def rows(why):
    """[(label, [cell per kernel])] for the kernels in why ([(key, dict or
    None)])."""
    def each(f):
        return [f(w) if w else "not traced" for _, w in why]

    def chain_cell(f):
        return each(lambda w: f(worst(w)) if worst(w) else "-")

    def totals(w):
        t = w["totals"]
        return f"{t['stalls_explained']} of {t['stalls']}"

    def late(w):
        t = w["totals"]
        if not t["late"]:
            return "none that slow"
        idle = (f", {t['late_vcpu_idle']} while the ticker's vCPU did not execute"
                if t.get("late_vcpu_idle") else "")
        return f"{t['late_explained']} of {t['late']} ({t.get('late_by_lock', 0)} by a lock wait{idle})"

    def lost(w):
        tr = w["trace"]
        return f"{tr['lost']['total']} of {tr['events']}" + ("" if tr["complete"] else " (incomplete)")

    def boosts(w):
        c = w["contentions"]
        to = ", ".join(f"{p} {v}" for p, v in c.get("boosted_to") or [])
        return f"{c['boosts']} of {c['rt_waits']}" + (f" (to {to})" if to else "")

    def lent(w):
        c = w["contentions"]
        by = ", ".join(f"{k} {n}" for k, n in (c.get("lent_by") or {}).items())
        return f"{c.get('lent_by_others', 0)} of {c['rt_waits']}" + (f" ({by})" if by else "")

    def non_rt(w):
        c = w.get("non_rt_waiter")
        h = (w.get("softirq_held") or {}).get("longest")
        if h and h.get("held_ms") is not None and \
                (not c or (c["wait"].get("ms") or 0) < h["held_ms"]):
            return _softirqs(w["softirq_held"])
        if not c:
            return "none seen"
        if not c.get("holder"):
            return f"{_task(c['waiter'])} waited {c['wait']['ms']} ms on ep->lock (its holder not seen)"
        return (f"{_task(c['waiter'])} waited {c['wait']['ms']} ms on ep->lock held by "
                f"{_task(c['holder'])}, which was {_state(c)}; boost: {_boost(c)}")
    return [
        ("stalls explained", each(totals)),
        ("worst wait: RT waiter", chain_cell(lambda c: f"{_task(c['waiter'])} in {c['waiter']['where']}")),
        ("... the lock", chain_cell(lambda c: f"ep->lock ({c['lock']['kind']})")),
        ("... waited, ms", chain_cell(lambda c: str(c["wait"]["ms"]))),
        ("... holder", chain_cell(lambda c: _task(c.get("holder")))),
        ("... holder was", chain_cell(_state)),
        ("... released after the unthrottle, ms",
         chain_cell(lambda c: "before it (boosted)" if c.get("released_while_throttled")
                    else str(c.get("released_after_unthrottle_ms", "-")))),
        ("... boost of the holder", chain_cell(_boost)),
        ("RT waits on ep->lock", each(lambda w: _pcts(w["contentions"]["rt_wait_us"]))),
        ("... with the holder boosted", each(boosts)),
        ("... ended by another task boosting the holder through another lock", each(lent)),
        ("RT datagrams over the list limit, explained", each(late)),
        ("non-RT waiter (the caveat)", each(non_rt)),
        ("trace events lost", each(lost)),
    ]


def lines(why):
    """One line per kernel for the terminal."""
    return [f"  {k}: {w['line'] if w else 'not traced'}" for k, w in why]


def section(why, plots, explain):
    """The page's section of each kernel's worst wait on the ready-list
    lock, as the trace tells it: the chain table and its timeline (the
    why-* of PLOTS)."""
    if not why:
        return ""
    out = ['<h2 id="why">Why: each kernel\'s trace</h2>',
           page.table([""] + [k for k, _ in why], rows(why), "why"),
           page.figures([p for p in plots if p[0].startswith("why-")], explain)]
    return "\n".join(out)


def draw(why, plot_dir):
    """The worst wait's timeline of each traced kernel of WHY ([(kernel,
    its trace's summary or None)]): [(file, caption)]."""
    made = []
    for key, w in why or []:
        c = worst(w) if w else None
        if c and c["wait"].get("ms") is not None:
            f = f"why-{file_name(key)}.svg"
            timeline(key, c, os.path.join(plot_dir, f))
            made.append((f, f"{key}: the worst RT wait on the ready-list lock"))
    return made


def timeline(key, c, out):
    """The worst wait of one kernel as lanes over time (ms from the wait's
    start): the waiter, the holder in the callback, the throttle, the
    boost."""
    t0 = c["wait"]["begin_s"]
    end = c["wait"]["end_s"] if c["wait"]["end_s"] is not None else t0
    h, st, b = c.get("holder") or {}, c.get("holder_state") or {}, c.get("boost")
    spans = [(0, t0, end)]
    if h.get("in_callback_since_s") is not None:
        spans.append((1, h["in_callback_since_s"], h.get("released_s") or end))
    if st.get("throttled_s") is not None:
        spans.append((2, st["throttled_s"], st.get("unthrottled_s") or end))
    if b and b.get("after_wait_began_ms") is not None:
        at = t0 + b["after_wait_began_ms"] / 1000
        spans.append((3, at, at + (b.get("boosted_ms") or 0) / 1000))
    rows = [((a - t0) * 1000, (z - t0) * 1000, lane) for lane, a, z in spans]
    lo = min(r[0] for r in rows)
    hi = max(max(r[1] for r in rows), 0.001)
    pad = (hi - lo) * 0.05 or 0.01
    script = head(820, 260) + datablock("spans", rows) + f"""
set title {gnuplot_string(f"{key}: the worst RT wait on ep->lock, {c['wait']['ms']} ms")} noenhanced
set xrange [{gnuplot_number(lo - pad)}:{gnuplot_number(hi + pad)}]
set yrange [-0.7:{len(LANES) - 0.3}]
set xlabel "ms from the start of the wait"
set ytics ({", ".join(f"{gnuplot_string(name)} {i}" for i, name in enumerate(LANES))})
set grid noytics
set termoption noenhanced
unset key
set style fill solid 0.8 noborder
"""
    plots = "plot $spans using 1:3:1:2:($3-0.3):($3+0.3):($3+1) with boxxyerror lc variable"
    colours = "".join(f'set linetype {i + 1} lc rgb "{col}"\n' for i, col in enumerate(LANE_COLOURS))
    run_gnuplot(script + colours + plots + "\n", out)
    return True
