"""page: what each kernel's trace explained (the chains of explain.py, as
a summary carries them) on a page and a terminal: table rows, a line per
kernel, and a timeline of the worst wait: the RT waiter, the holder inside
ep_poll_callback, the holder's cgroup throttled, and the priority
inheritance boost."""
import os

from report import page, png
from report.check import CheckError
from report.escape import file_name, gnuplot_number, gnuplot_string
from report.plots import datablock, head, run_gnuplot

LANES = ("RT waiter waits", "holder in ep_poll_callback", "holder's cgroup throttled",
         "holder boosted (waiter's priority)")
LANE_COLOURS = ("#c0392b", "#7d3c98", "#9a7d0a", "#1e8449")
# The bars' opacity on the white background.
FILL = 0.8


def drawn(colour):
    """The colour a lane's bar shows: LANE_COLOURS' at FILL on white."""
    return "#" + "".join(f"{round(FILL * int(colour[i:i + 2], 16) + (1 - FILL) * 255):02x}"
                         for i in (1, 3, 5))


# The boost's bar of a "why" timeline , at 840 px: the
# patched kernel's boost of some microseconds on its wait's own axis is
# tens of pixels wide; on an axis of the whole quota period it was none.
MIN_BOOST_PX = 10


def boost_drawn(png_path):
    """The width in pixels of the boost's bar in a screenshot of a why
    timeline; CheckError when it is under MIN_BOOST_PX (not drawn, or too
    thin to see)."""
    px = png.widest_run(png_path, drawn(LANE_COLOURS[3]))
    if px < MIN_BOOST_PX:
        raise CheckError(f"{png_path}: the boost's bar is {px} px wide (under {MIN_BOOST_PX}): not visible")
    return px


def worst(w):
    """The chain a kernel is shown by: its worst stall's, or else its
    longest RT wait on the ready-list lock."""
    s = w.get("worst_stall")
    return s["chain"] if s and s.get("chain") else w.get("longest_rt_wait")


def _task(t):
    if not t:
        return "-"
    return f"{t.get('comm', '?')}/{t.get('pid', '?')} ({t.get('policy', '?')} {t.get('priority', '?')})"


def state(c):
    """What a chain's holder was doing, in words."""
    st = c.get("holder_state") or {}
    if st.get("state") != "throttled" and st.get("throttle_deferred"):
        # The task-based model: the quota ran out, the holder ran on.
        text = (f"{st['state']}: its cgroup's quota ran out at {st.get('group_throttled_s')} s, its "
                "throttle deferred to its way back to user space")
        if st.get("dequeued_s") is not None:
            text += f" (taken off at {st['dequeued_s']} s in {st.get('dequeued_in', '?')})"
        return text
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


def non_rt(w):
    """The non-RT waker's chain in words (the longer of a non-RT task's
    wait on ep->lock and a throttled task's hold of the CPU's softirqs),
    from a kernel's why: "none seen" when the trace has neither."""
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
            f"{_task(c['holder'])}, which was {state(c)}; boost: {_boost(c)}")


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

    def freezes(w):
        fr = w.get("freezes")
        if fr is None:
            return "not looked at"
        if not fr.get("counted"):
            return "none"
        causes = ", ".join(f"{k} {n}" for k, n in (fr.get("by_cause") or {}).items() if n)
        text = f"{fr.get('explained')} of {fr.get('counted')} explained" + (f" ({causes})" if causes else "")
        first = next((r for r in fr.get("rows") or [] if "unexplained" in r), None)
        return text + (f"; unexplained: {first.get('text')}" if first else "")

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

    def model(w):
        tm = w.get("throttle_model") or {}
        name = {"cfs_rq": "per cfs_rq", "task": "task-based"}.get(tm.get("model"))
        return f"{name} ({tm.get('from')})" if name else "not known"

    def quota_timer(w):
        q = w.get("quota_timer")
        return q["line"] if q else "not traced"

    def throttled(w):
        t = w.get("throttling")
        if not t:
            return "-"
        text = f"the cgroup's run queue {t['cgroup_throttles']} times, {t['cgroup_throttled_ms']:g} ms"
        if t.get("task_throttles") is not None:
            text += (f"; its tasks, each on its way to user space, {t['task_throttles']} times, "
                     f"{t['task_throttled_ms']:g} ms")
        return text
    return [
        ("stalls explained", each(totals)),
        ("CFS throttle model", each(model)),
        ("throttled, as the trace saw it", each(throttled)),
        ("the quota period's timer", each(quota_timer)),
        ("worst wait: RT waiter", chain_cell(lambda c: f"{_task(c['waiter'])} in {c['waiter']['where']}")),
        ("... the lock", chain_cell(lambda c: f"ep->lock ({c['lock']['kind']})")),
        ("... waited, ms", chain_cell(lambda c: str(c["wait"]["ms"]))),
        ("... holder", chain_cell(lambda c: _task(c.get("holder")))),
        ("... holder was", chain_cell(state)),
        ("... released after the unthrottle, ms",
         chain_cell(lambda c: "before it (boosted)" if c.get("released_while_throttled")
                    else str(c.get("released_after_unthrottle_ms", "-")))),
        ("... boost of the holder", chain_cell(_boost)),
        ("RT waits on ep->lock", each(lambda w: _pcts(w["contentions"]["rt_wait_us"]))),
        ("... with the holder boosted", each(boosts)),
        ("... ended by another task boosting the holder through another lock", each(lent)),
        ("RT datagrams over the list limit, explained", each(late)),
        ("non-RT waiter (the caveat)", each(non_rt)),
        ("freeze probes' late wake-ups, explained", each(freezes)),
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


# A wait shorter than this share of everything its chart shows (the
# patched kernel's: microseconds, beside a holder throttled for a whole
# quota period) gets an axis of its own: the wait and a quarter of it on
# either side, the longer spans cut at the axis's ends and labelled with
# where they go.
ZOOM_SHARE = 0.2
ZOOM_MARGIN = 0.25


def spans_of(c):
    """The chain's lanes as [(lane, from ms, to ms)] from the wait's start,
    and its marks [(name, ms)]: the holder's release (it leaves
    ep_poll_callback, which drops the lock) and the waiter's run."""
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
    # The release: a boosted holder goes back to its own priority when it
    # unlocks; else it is seen leaving the callback.
    release = h.get("released_s")
    if b and b.get("boosted_ms") is not None and b.get("after_wait_began_ms") is not None:
        release = t0 + (b["after_wait_began_ms"] + b["boosted_ms"]) / 1000
    at = (("released", release), ("waiter ran", c.get("waiter_ran_s")))
    marks = [(name, (t - t0) * 1000) for name, t in at if t is not None]
    return [(lane, (a - t0) * 1000, (z - t0) * 1000) for lane, a, z in spans], marks


def merged(marks, width):
    """Marks closer than 3 % of the axis made one, their names joined."""
    out = []
    for name, x in sorted(marks, key=lambda m: m[1]):
        if out and x - out[-1][1] < 0.03 * width:
            out[-1] = (f"{out[-1][0]}, {name}", out[-1][1])
        else:
            out.append((name, x))
    return out


def axis(rows, marks, wait_ms):
    """The x range of the chart, and whether it is the wait's own (zoomed:
    the wait is under ZOOM_SHARE of all its lanes): then it runs from a
    little before the wait to a little after its end, the boost's and the
    marks'."""
    lo = min(r[1] for r in rows)
    hi = max(max(r[2] for r in rows), 0.001)
    if wait_ms and wait_ms < ZOOM_SHARE * (hi - lo):
        right = max([wait_ms] + [r[2] for r in rows if r[0] == 3] + [x for _, x in marks if x < 4 * wait_ms])
        return -ZOOM_MARGIN * wait_ms, right + ZOOM_MARGIN * wait_ms, True
    pad = (hi - lo) * 0.05 or 0.01
    return lo - pad, hi + pad, False


def _ms_text(v):
    return f"{v:.3f}" if abs(v) < 10 else f"{v:.1f}"


def timeline(key, c, out):
    """The worst wait of one kernel as lanes over time (ms from the wait's
    start): the waiter, the holder in the callback, the throttle, the
    boost (the holder running at the waiter's priority), with the release
    and the waiter's run marked. A short wait beside long spans is drawn
    on its own axis (axis())."""
    rows, marks = spans_of(c)
    x0, x1, zoomed = axis(rows, marks, c["wait"].get("ms"))
    cut, labels = [], []
    for lane, a, z in rows:
        a2, z2 = max(a, x0), min(z, x1)
        if z2 < a2:
            continue
        cut.append((a2, z2, lane))
        if a < x0:
            labels.append((x0 + (x1 - x0) * 0.005, lane + 0.44, f"from {_ms_text(a)} ms", "left"))
        if z > x1:
            labels.append((x1 - (x1 - x0) * 0.005, lane + 0.44, f"to {_ms_text(z)} ms", "right"))
    title = f"{key}: the worst RT wait on ep->lock, {c['wait']['ms']} ms"
    if zoomed:
        title += " (the axis is the wait's)"
    script = head(820, 280) + datablock("spans", cut) + f"""
set title {gnuplot_string(title)} noenhanced
set xrange [{gnuplot_number(x0)}:{gnuplot_number(x1)}]
set yrange [-0.7:{len(LANES) - 0.1}]
set xlabel "ms from the start of the wait"
set ytics ({", ".join(f"{gnuplot_string(name)} {i}" for i, name in enumerate(LANES))})
set grid noytics
set termoption noenhanced
unset key
set style fill solid {FILL:g} noborder
"""
    for name, x in merged([m for m in marks if x0 <= m[1] <= x1], x1 - x0):
        where = "right" if x > x0 + 0.8 * (x1 - x0) else "center"
        script += (f'set arrow from {gnuplot_number(x)}, graph 0 to {gnuplot_number(x)}, graph 1 '
                   'nohead dt 2 lc rgb "#555555"\n'
                   f'set label {gnuplot_string(name)} at {gnuplot_number(x)}, graph 1.03 {where} '
                   'font ",11" noenhanced\n')
    for x, y, text, where in labels:
        script += (f"set label {gnuplot_string(text)} at {gnuplot_number(x)}, {gnuplot_number(y)} {where} "
                   'font ",10" tc rgb "#555555" noenhanced\n')
    plots = "plot $spans using 1:3:1:2:($3-0.3):($3+0.3):($3+1) with boxxyerror lc variable"
    colours = "".join(f'set linetype {i + 1} lc rgb "{col}"\n' for i, col in enumerate(LANE_COLOURS))
    run_gnuplot(script + colours + plots + "\n", out)
    return True
