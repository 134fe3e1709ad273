"""page: make capacity's terminal table and page, their check, and
report/capacity, the command that writes them.

  report/capacity RUN_DIR [--check [--no-screenshot]]

RUN_DIR is what lab/capacity/run leaves: run.json, spec.json and, per
kernel (stock, patched) and repeat N, rN/boot.json and
rN/results/grid/q<QUOTA>-c<RATE>/sweep.json.
Writes RUN_DIR/capacity.json (the interface: slo, headline,
kernels.<k>.by_quota[].{cpu_quota_pct, capacity_pps, steps}), table.txt,
plots/*.svg and capacity.html, and prints the table with the headline last.
--check instead checks those files and, unless told not to (or without
chromium), a headless Chromium screenshot of the page (capacity.png).

Exit status: 0 done; 1 the check failed; 64 bad command line; 65 a result
file is missing or malformed; 69 gnuplot is missing or failed.
"""
import datetime
import json
import os
import re
import shutil
import sys

from report import cli, formats, png
from report.check import CheckError, read_texts, shoot
from report.check import plots as check_plots
from report.escape import html_text
from report.files import DataError, ToolError, write_json, write_text
from report.page import frame
from report.plots import COLOURS
from report.slo import objectives

from . import judge, plots
from .judge import CAUSES, KERNELS, cap_text, cotenant_wants, pps, quota_text, threshold_text

GOOD, MIXED = "#1e8449", "#9a7d0a"


def by_cell(cap):
    cells = {}
    for k in KERNELS:
        for c in cap["kernels"][k]["by_quota"]:
            cells.setdefault((c["cotenant_rate_pps"], c["cpu_quota_pct"]), {})[k] = c
    return sorted(cells.items())


# A search that ended still meeting, and what stopped it there: loadgen's
# own limit, not the relay's.
CEILING = {"to": "the highest rate the plan allows", "sender": "loadgen's senders at their limit"}


def search_text(s):
    """One search's end: "26000/27300 pps (cpu)", "none at 117 pps (lock)",
    ">= 468 pps (ceiling: ...)"."""
    limit = f" ({s['limit']})" if s["limit"] else ""
    if s["end"] == "none":
        return f"none at {pps(s['missed_pps'])} pps{limit}"
    if s["end"] in CEILING:
        return f">= {pps(s['met_pps'])} pps (ceiling: {CEILING[s['end']]})"
    if s["end"] == "found":
        return f"{pps(s['met_pps'])}/{pps(s['missed_pps'])} pps{limit}"
    return s["end"]


def _mixed_rates(c):
    """The rates some but not all of whose runs met: "234 pps 1/3"."""
    return ", ".join(f"{r['target_rate']:.0f} pps {r['met']:g}/{r['runs']:g}"
                     for r in c["rates"] if 0 < r["met"] < r["runs"])


def stall_lines(c):
    """A cell's stalls in words: how many, the longest, how many the
    trace explained, and what held the relay, each distinct account once
    with how often: ["3 stalls, the longest 214 ms, 3 explained", "3x:
    ..."]; [] without a stall."""
    st = c.get("stalls") or []
    if not st:
        return []
    longest = max(x["length_ms"] or 0 for x in st)
    ex = sum(1 for x in st if x["explained"])
    out = [f"{len(st)} stall{'s' if len(st) != 1 else ''}, the longest {longest:.0f} ms, "
           f"{ex} explained by the trace"]
    seen = {}
    for x in st:
        # one account of the same chain whichever thread it names
        key = ("" if x["explained"] else "unexplained: ") + re.sub(r"/\d+\b", "", x["text"])
        seen.setdefault(key, []).append(x["repeat"])
    for text, reps in seen.items():
        out.append(f"{len(reps)}x (repeat {', '.join(map(str, sorted(set(reps))))}): {text}")
    return out


def table(cap):
    """The terminal table: capacity per kernel and quota over its repeats,
    with the interval and what bounded it, how each repeat's search ended,
    the stalls and what held the relay, and the headline last."""
    plan = cap["spec"]["capacity"]
    n = cap["spec"].get("repeats", 1)
    lines = [f"Capacity: the highest RT load rate meeting {objectives(cap['slo'])}, "
             f"median of each cell's {n} independent repeat{'s' if n != 1 else ''} "
             f"(the interval over them; what bounded them)",
             f"(each repeat a guest of its own, its own boot and salt; RT client SCHED_FIFO on "
             f"CPU 0 through the relay on CPU 1; a co-tenant on CPU 1 under a CPU quota; "
             f"{cap.get('clock') or '?'} clock; each search doubles from "
             f"{plan['rt_rate_from_pps']} pps up to {plan['rt_rate_to_pps']} pps, then bisects to "
             f"{plan['resolution_pct']} %; steps of {plan['step_s']} s)", ""]
    rows = [("quota", "co-tenant", "stock", "patched")]
    for (crate, q), by in by_cell(cap):
        spin = next(iter(by.values()))["cotenant_spin_us"]
        rows.append((f"{q}%", f"{crate} pps" + (f", spin {spin} us" if spin else ""),
                     cap_text(by.get("stock")), cap_text(by.get("patched"))))
    widths = [max(len(r[i]) for r in rows) for i in range(4)]
    lines += ["  ".join(x.ljust(w) if i < 2 else x.rjust(w) for i, (x, w) in
                        enumerate(zip(r, widths))) for r in rows]
    cells = [(q, k, by[k]) for (_, q), by in by_cell(cap) for k in KERNELS if k in by]
    unstable = [f"  {k} at {q}%: {cap_text(c)}" for q, k, c in cells
                if c["capacity"] and c["capacity"]["unstable"]]
    ends = [f"  {k} at {q}%: " + "; ".join(f"r{s['repeat']}: {search_text(s)}" for s in c["searches"])
            for q, k, c in cells if c["searches"]]
    mixed = [f"  {k} at {q}%: {_mixed_rates(c)}" for q, k, c in cells if _mixed_rates(c)]
    bad = [f"  {k} at {q}%: {c['nonmonotonic']}" for q, k, c in cells if c["nonmonotonic"]]
    stalls = [f"  {k} at {q}%: " + "\n    ".join(stall_lines(c)) for q, k, c in cells if c.get("stalls")]
    probs = [f"  {k} at {q}%: {p}" for q, k, c in cells for p in c["problems"]]
    ts = {k: cap["kernels"][k].get("quota_threshold") for k in KERNELS}
    probs += [f"  {k} quota search: {p}" for k in KERNELS if ts[k] for p in ts[k]["problems"]]
    for k in KERNELS:
        if cap["kernels"][k]["outcome"] != "ok":
            probs.append(f"  {k}: the guests' outcome was {cap['kernels'][k]['outcome']}")
    if unstable:
        lines += ["", "unstable (some repeats found a capacity and some none: no single number):"] + unstable
    if any(ts.values()):
        t = next(v for v in ts.values() if v)
        lines += ["", f"the tightest co-tenant quota for {t['planned_rate_pps']} pps ("
                      f"{cotenant_wants(t)}; quotas {t['quota_range_pct'][0]}-"
                      f"{t['quota_range_pct'][1]} % to {t['resolution_pct']} points): "
                      + "; ".join(f"{k} {threshold_text(ts[k])}" for k in KERNELS)]
        lines += [f"  {k} r{x['repeat']}: " + ", ".join(
            f"{r['cpu_quota_pct']} % {'met' if r['met'] else 'missed' if r['met'] is False else '?'}"
            for r in x["probes"]) for k in KERNELS if ts[k] for x in ts[k]["repeats"]]
    if ends:
        lines += ["", "each repeat's search: the rate met / the first missed (what bounded it)"] + ends
    if mixed:
        lines += ["", "rates some runs met and some did not:"] + mixed
    if bad:
        lines += ["", "not monotonic (a rate missed below one that met):"] + bad
    if stalls:
        lines += ["", "the relay's stalls (no progress for the watchdog's stall_ms) and what held it:"]
        lines += stalls
    if probs:
        lines += ["", "problems (a repeat with one is left out of its cell):"] + probs
    lines += ["", f"headline: {cap['headline']}"]
    return "\n".join(lines) + "\n"


EXPLAIN = {
    "capacity": "Red stock, blue patched: the median capacity of each cell's independent "
                "repeats, the bar from the lowest to the highest; a dotted bar alone where "
                "the repeats disagreed (some found one, some none: unstable); a cross on the "
                "axis where no repeat found one (the lowest rate missed), a triangle where "
                "the highest rate loadgen tried still met.",
    "heatmap": "Each cell is one rate a search tried: the RT client's p99.9 latency (the worst "
               "of its runs over the repeats) at that RT load with the co-tenant under that quota. A cross "
               "marks a rate where a run did not meet the objective (latency, a lost datagram "
               "or a missed rate). Blank: the searches did not try that rate there.",
    "latency": "Both kernels at one quota, red stock and blue patched: p50 (dotted), p99 "
               "(dash-dot), p99.9 (solid) and max (dashed) against the RT load, the worst "
               "run of each rate, each objective as a grey dashed line.",
}


# What a stall held by the softirq lock is, for the page (lab/demo/README.md, "Why").
BH_STALL = """<p class="note"><b>A second inversion, which the epoll fix does not reach.</b> A stall
held by the softirq lock: the relay slept in epoll_wait while a co-tenant thread, preempted
inside its softirqs, held the relay's CPU's softirq lock and its cgroup was throttled. On
PREEMPT_RT whatever would wake the relay needs that lock (its timerfd tick is a soft hrtimer, a
datagram sent on that CPU is received in its sender's softirq section), and so does the CFS quota
period's timer that would let the group go: nobody waits for the lock at a priority, so nobody
lends the holder one, and the relay stands still until the watchdog's write to cpu.max. The
chain of each is above; docs/measurements.md has the runs.</p>"""


def render_page(cap, plots, generated):
    colour = GOOD if cap["fix_buys"] else MIXED
    body = "".join(
        f"<tr><td>{q}%</td><td>{crate} pps</td>" + "".join(
            f"<td title='{html_text((by.get(k) or {}).get('why_not') or '')}'"
            + (" class='unstable'" if ((by.get(k) or {}).get("capacity") or {}).get("unstable") else "")
            + f">{html_text(cap_text(by.get(k)))}</td>"
            for k in KERNELS) + "</tr>" for (crate, q), by in by_cell(cap))
    cells = [(q, k, by[k]) for (_, q), by in by_cell(cap) for k in KERNELS if k in by]
    ends = "".join(
        f"<tr><td>{html_text(k)}</td><td>{q}%</td><td>{s['repeat']}</td>"
        f"<td>{html_text(search_text(s))}</td><td>{s['steps'] or 0:g}</td>"
        f"<td>{html_text(CAUSES.get(s['limit'], s['limit'] or ''))}</td></tr>"
        for q, k, c in cells for s in c["searches"])
    mixed = "".join(f"<li><b>{html_text(k)} at {q}%</b>: {html_text(_mixed_rates(c))}</li>"
                    for q, k, c in cells if _mixed_rates(c))
    bad = "".join(f"<li><b>{html_text(k)} at {q}%</b>: {html_text(c['nonmonotonic'])}</li>"
                  for q, k, c in cells if c["nonmonotonic"])
    whys = "".join(f"<li><b>{html_text(k)} at {q}%</b>: {html_text(c['why_not'])}</li>"
                   for q, k, c in cells if c["why_not"])
    stalls = "".join(f"<li><b>{html_text(k)} at {q}%</b>: "
                     + "<br>".join(html_text(x) for x in stall_lines(c))
                     + "</li>" for q, k, c in cells if c.get("stalls"))
    probs = "".join(f"<li><b>{html_text(k)} at {q}%</b>: {html_text(p)}</li>"
                    for q, k, c in cells for p in c["problems"])
    figs = "".join(f'<figure><img src="plots/{html_text(f)}" alt="{html_text(c)}">'
                   f'<figcaption><b>{html_text(c)}.</b> '
                   f'{html_text(EXPLAIN[re.match("[a-z]+", f).group(0)])}</figcaption></figure>'
                   for f, c in plots)
    plan, scen = cap["spec"]["capacity"], cap["spec"].get("scenario") or {}
    n = cap["spec"].get("repeats", 1)
    quotas = sorted({c["cpu_quota_pct"] for k in KERNELS for c in cap["kernels"][k]["by_quota"]})
    planned = cap["quota_for_rate"]
    waker = {1: "over AF_UNIX", 0: "over loopback UDP"}.get(scen.get("af_unix"), "?")
    facts = [("run", cap.get("run_id")), ("date", cap.get("date")), ("clock", cap.get("clock")),
             ("objectives", objectives(cap["slo"])),
             ("repeats", f"{n}, each a guest per kernel of its own (its own boot and salt), "
                         "one search a cell"),
             ("RT load", f"each search from {plan['rt_rate_from_pps']} pps, doubling up to "
                         f"{plan['rt_rate_to_pps']} pps, then bisecting to "
                         f"{plan['resolution_pct']} %; steps of {plan['step_s']} s"),
             ("co-tenant", f"{scen.get('senders', '?')} loadgen senders at "
                           f"{', '.join(map(str, plan['cotenant_rate_pps']))} pps on the relay's "
                           f"CPU, waking it {waker}, busy-waiting for a demand of "
                           f"{plan['cotenant_demand_pct']} % of the quota, cpu.max period "
                           f"{scen.get('period_us', '?')} us"),
             ("run spec", "spec.json: " + json.dumps(cap["spec"], sort_keys=True)),
             ("initramfs sha256", cap.get("initramfs_sha256")),
             ("wall time", f"{cap.get('wall_s')} s")] + \
        [(f"{k} kernel", f"{cap['kernels'][k]['version']} ({cap['kernels'][k]['outcome']})")
         for k in KERNELS]
    dl = "".join(f"<dt>{html_text(a)}</dt><dd>{html_text(b)}</dd>" for a, b in facts)
    conf = f"{100 * (1 - 2.0 ** (1 - n)):.1f}".rstrip("0").rstrip(".")
    confidence = (f"(which holds the median of what such a search finds with {conf} % confidence: "
                  f"all {n} fall on one side of it otherwise)") if n > 1 else ""
    softirq = any(x.get("held_by") == "softirq lock" for _, _, c in cells for x in c.get("stalls") or [])
    body = f"""<h1>Capacity: what the fix buys</h1>
<div class="verdict" style="background:{colour}"><b>CAPACITY</b>{html_text(cap['headline'])}</div>
<h2 id="capacity">Highest RT load meeting {html_text(objectives(cap['slo']))}</h2>
<table><thead><tr><th>co-tenant quota</th><th>co-tenant rate</th><th>stock</th><th>patched</th></tr></thead>
<tbody>{body}</tbody></table>
<p class="muted">Each cell rests on {n} independent repeat{"s" if n != 1 else ""}: a guest per
kernel of its own for each, with its own boot and salt, so that each follows a trajectory of
its own on the virtual clock, and one search a cell that starts from the lowest rate, never
from what another found. A search doubles the RT load until a step misses, then bisects
between the last rate that met and the first that missed. The capacity is the median of the
repeats, with the interval from the lowest to the highest
{confidence};
where some repeats found one and others none they disagree, and the cell says
<b>unstable</b> with how many found one, instead of a number. "none" where every repeat's
lowest rate missed (not a measured 0); "&gt;=" where the highest rate loadgen tried still
met: a ceiling of the load generator's, not the relay's capacity. A step that lost a
datagram or missed its rate is not met. In brackets: what bounded the searches, from the
cell's kernel trace where it was recorded.</p>
<h2 id="plots">Plots</h2>
{figs}
<h2 id="quota">How tight the co-tenants' quota may be</h2>
{_threshold_html(cap)}
<p>From the rows above (the co-tenant filling each quota): for {planned['rt_rate_pps']:.0f} pps,
every repeat meeting the objective at that quota and every looser one of the grid
({html_text(", ".join(f"{q} %" for q in quotas))}):
{"; ".join(f"<b>{html_text(k)}</b> {html_text(quota_text(planned[k], quotas))}" for k in KERNELS)}.</p>
<h2 id="stalls">The relay's stalls, and what held it</h2>
<ul>{stalls or "<li>no stall in any cell</li>"}</ul>
{BH_STALL if softirq else ""}
<h2 id="searches">Each repeat's search</h2>
<table><thead><tr><th>kernel</th><th>quota</th><th>repeat</th><th>met / first missed</th>
<th>steps</th><th>bounded by</th></tr></thead><tbody>{ends}</tbody></table>
{f'<h3>Rates some runs met and some did not</h3><ul>{mixed}</ul>' if mixed else ""}
{f'<h3>Not monotonic</h3><ul>{bad}</ul>' if bad else ""}
<h3>Why a step was not met (the first one per cell)</h3><ul>{whys or "<li>every step met</li>"}</ul>
{f'<p class="note"><b>Problems.</b></p><ul>{probs}</ul>' if probs else ""}
<h2 id="run">What was run</h2>
<dl>{dl}</dl>
"""
    return frame("Capacity: stock vs patched PREEMPT_RT", body, generated, "report/capacity",
                 style=" td.unstable { background: #fdebd0; }")


def _threshold_html(cap):
    """The quota searches: each kernel's answer and its probes in order."""
    ts = {k: cap["kernels"][k].get("quota_threshold") for k in KERNELS}
    if not any(ts.values()):
        return "<p>No quota search ran (the plan's quota_search is off).</p>"
    t = next(v for v in ts.values() if v)

    def row(k, r):
        met = {True: "met", False: "missed"}.get(r["met"], "no result")
        p999 = "" if r["p99_9_us"] is None else f"{r['p99_9_us'] / 1000:.3g} ms"
        return (f"<tr><td>{html_text(k)}</td><td>{r['repeat']}</td><td>{r['probe']}</td>"
                f"<td>{r['cpu_quota_pct']} %</td><td>{met}</td><td>{p999}</td>"
                f"<td>{html_text(r['cause'] or '')}</td></tr>")
    rows = "".join(row(k, r) for k in KERNELS if ts[k] for x in ts[k]["repeats"] for r in x["probes"])
    return (f"<p>The tightest co-tenant quota at which {t['planned_rate_pps']} pps of RT load still "
            f"met the objective, searched between {t['quota_range_pct'][0]} % and "
            f"{t['quota_range_pct'][1]} % to {t['resolution_pct']} points, with "
            f"{cotenant_wants(t)} (a quota below its demand throttles it): "
            + "; ".join(f"<b>{html_text(k)}</b> {html_text(threshold_text(ts[k]))}" for k in KERNELS)
            + ".</p>\n<table><thead><tr><th>kernel</th><th>repeat</th><th>probe</th><th>quota</th>"
            "<th>RT load</th>"
            f"<th>p99.9</th><th>cause</th></tr></thead><tbody>{rows}</tbody></table>")


def verify(run_dir, screenshot=None):
    """The page is whole: capacity.json and table.txt parse, the page shows
    exactly the SVGs in plots/; with a screenshot PNG, the headline badge
    and both kernels' curves are on it."""
    try:
        cap = formats.read(formats.Capacity, os.path.join(run_dir, "capacity.json"))
    except DataError as e:
        raise CheckError(str(e))
    text, page = read_texts(run_dir, ("table.txt", "capacity.html"))
    for k in KERNELS:
        if k not in cap.kernels:
            raise CheckError(f"capacity.json: kernels.{k}: missing")
        for c in cap.kernels[k].by_quota:
            need = {"cpu_quota_pct", "capacity_pps", "capacity", "searches", "rates", "steps", "stalls"}
            if not need <= set(c):
                raise CheckError(f"capacity.json: {k} by_quota lacks {', '.join(sorted(need - set(c)))}")
    if not text.rstrip().splitlines()[-1].startswith("headline: "):
        raise CheckError("table.txt does not end with the headline")
    check_plots(run_dir, page, "capacity.html", True)
    if screenshot:
        colour = GOOD if cap.fix_buys else MIXED
        _, height, counts, ink = png.colour_counts(screenshot, [colour] + list(COLOURS[:2]))
        if counts[colour] < 10000:
            raise CheckError("no headline badge on the page")
        for i, k in enumerate(KERNELS):
            if counts[COLOURS[i]] < 500:
                raise CheckError(f"no {k} curve ({COLOURS[i]}) on the page: the plots did not load")
        return counts
    return None


def check(run_dir, screenshot):
    shot = None
    if screenshot and shutil.which("chromium"):
        shot = os.path.join(run_dir, "capacity.png")
        rc = shoot(os.path.join(run_dir, "capacity.html"), shot, 1000, 3000)
        if rc != 0:
            raise CheckError(f"screenshot failed (exit {rc})")
    elif screenshot:
        print("capacity: chromium not installed: the page was not looked at",
              file=sys.stderr)
    counts = verify(run_dir, shot)
    print(f"capacity: {run_dir}: page whole" + (f"; {shot} shows {counts}" if shot else ""))


def main(argv=None):
    ap = cli.Parser(prog="capacity",
                    description="capacity.json, table, plots and page of a make capacity run.")
    ap.add_argument("dir", help="the run directory")
    ap.add_argument("--check", action="store_true", help="check the report instead of writing it")
    ap.add_argument("--no-screenshot", action="store_true", help="with --check: no Chromium")
    args = ap.parse_args(argv)
    try:
        if args.check:
            check(args.dir, not args.no_screenshot)
            return 0
        cap = judge.build(args.dir)
        write_json(os.path.join(args.dir, "capacity.json"), cap, indent=2)
        text = table(cap)
        write_text(os.path.join(args.dir, "table.txt"), text)
        made = plots.draw_all(cap, os.path.join(args.dir, "plots"))
        now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
        write_text(os.path.join(args.dir, "capacity.html"), render_page(cap, made, now))
        sys.stdout.write(text)
    except CheckError as e:
        print(f"capacity: {args.dir}: {e}", file=sys.stderr)
        return 1
    except DataError as e:
        print(f"capacity: {e}", file=sys.stderr)
        return 65
    except ToolError as e:
        print(f"capacity: {e}", file=sys.stderr)
        return 69
    return 0


if __name__ == "__main__":
    sys.exit(main())
