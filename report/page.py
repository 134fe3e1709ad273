"""The HTML page: verdict first, then the numbers, the plots, what was run
and the caveats. Plots are SVG files next to it (plots/)."""
from . import why
from .escape import html_text
from .plots import cost_rows

BADGE = {"fixed": "#1e8449", "separated": "#1e8449", "not fixed": "#c0392b", "invalid": "#c0392b"}
EXPLAIN = {
    "distribution": {
        "vm-demo": "Each curve is one kernel's latency distribution; the further right, the "
                   "rarer. The bug lifts the tail: the red (stock) curve leaves the blue "
                   "(patched) one at the percentiles where the relay waited for a throttled "
                   "sender.",
        "model": "Each curve is one lock variant's wait distribution; the further right, the "
                 "rarer. A lock without priority inheritance makes the RT consumer wait out "
                 "the throttled producer's quota period.",
        "host": "The latency distribution of this run; the further right, the rarer.",
        "fleet": "Each load host's latency distribution and their merge (the hosts' "
                 "histograms added); the further right, the rarer.",
        "testhost": "Each curve is the RT client's latency through relay on one kernel "
                    "package; the further right, the rarer. The bug lifts the tail: the red "
                    "(stock) curve leaves the blue (patched) one where relay waited for the "
                    "throttled co-tenant.",
    },
    "timeline": {
        "host": "Worst latency in each 100 ms window. Shaded: the relay made no progress (a "
                "stall); dotted green: the watchdog lifted the sender's CPU quota, after which "
                "the stall ends within milliseconds: the quota caused it.",
        "model": "Worst lock wait in each window: without priority inheritance the waits come "
                 "back every quota period.",
    },
    "cost": "What the spinlock costs in epoll throughput, measured by the kernel harness.",
    "why": "From the kernel's trace. Red: the RT waiter waiting for the ready-list lock; purple: "
           "the task holding it, inside ep_poll_callback; ochre: that task's cgroup throttled by "
           "its CPU quota; green: the holder running at the waiter's priority (priority "
           "inheritance). On the stock kernel the rwlock's waiter cannot boost the throttled "
           "reader and waits out the throttle; on the patched one it boosts the holder out of "
           "the lock.",
}
HEADINGS = {"fleet": "Latency per host", "testhost": "Latency and throttling per kernel package"}
CSS = """
body { font: 16px/1.45 "DejaVu Sans", sans-serif; color: #222; margin: 0; background: #fafafa; }
main { max-width: 900px; margin: 0 auto; padding: 24px 32px 48px; background: #fff; }
h1 { font-size: 26px; margin: 0 0 12px; }
h2 { font-size: 20px; margin: 32px 0 8px; border-bottom: 1px solid #ddd; padding-bottom: 4px; }
.verdict { border-radius: 8px; padding: 14px 18px; color: #fff; }
.verdict b { font-size: 22px; letter-spacing: 0.5px; margin-right: 10px; }
table { border-collapse: collapse; margin: 8px 0; }
th, td { padding: 3px 14px; text-align: right; }
th:first-child, td:first-child { text-align: left; }
table.why td, table.why th { text-align: left; vertical-align: top; font-size: 14px; }
tr.section td { font-weight: bold; text-align: left; padding-top: 10px; }
thead th { border-bottom: 2px solid #444; }
tbody tr:nth-child(even) { background: #f4f6f7; }
figure { margin: 18px 0; }
figure img { width: 100%; max-width: 820px; border: 1px solid #eee; }
figcaption { font-size: 14px; color: #555; }
dl { display: grid; grid-template-columns: max-content 1fr; gap: 4px 16px; }
dt { font-weight: bold; }
dd { margin: 0; word-break: break-all; }
.muted { color: #666; }
.note { background: #fef9e7; border-left: 4px solid #9a7d0a; padding: 8px 12px; }
"""


def badge_colour(verdict):
    """Green for a confirmed fix, red for a failed one, amber for a run that
    showed nothing clear, grey for no comparison."""
    if verdict in BADGE:
        return BADGE[verdict]
    return "#9a7d0a" if verdict in ("unclear", "no effect", "no separation") else "#566573"


def _table(view):
    out = ["<table><thead><tr><th></th>"]
    out += [f"<th>{html_text(c.key)}</th>" for c in view.columns]
    out.append("</tr></thead><tbody>")
    for title, rows in view.sections:
        out.append(f'<tr class="section"><td colspan="{len(view.columns) + 1}">{html_text(title)}</td></tr>')
        for label, cells in rows:
            out.append(f"<tr><td>{html_text(label)}</td>"
                       + "".join(f"<td>{html_text(x)}</td>" for x in cells) + "</tr>")
    out.append("</tbody></table>")
    return "\n".join(out)


def _figures(view, plots):
    out = []
    for f, caption in plots:
        text = EXPLAIN[f.split("-")[0].split(".")[0]]
        if isinstance(text, dict):
            text = text.get(view.kind, text["host"])
        out.append(f'<figure><img src="plots/{html_text(f)}" alt="{html_text(caption)}">'
                   f"<figcaption><b>{html_text(caption)}.</b> {html_text(text)}</figcaption></figure>")
    return "\n".join(out)


def _cost(view, plots):
    if view.kind in ("model", "fleet", "testhost"):
        return ""
    rows = cost_rows(view.cost)
    if not rows:
        return ("<h2 id='cost'>The cost side</h2><p>Epoll throughput: <b>not measured</b> in this run "
                "(the kernel harness wrote no throughput results). Published figures for "
                "the spinlock: stress-epoll lost 31-47 % on 12 x86 CPUs; "
                "<code>perf bench epoll wait</code> changed little (110279 to 114577 ops/s).</p>")
    body = "".join(f"<tr><td>{html_text(b)}</td><td>{v['stock']:.0f}</td><td>{v['patched']:.0f}</td>"
                   f"<td>{(v['ratio'] - 1) * 100:+.1f} %</td>"
                   f"<td>{_interval(v)}</td></tr>"
                   for b, v in rows)
    where = view.cost.get("version", "?")
    return ("<h2 id='cost'>The cost side</h2>"
            f"<p>Measured by the kernel harness (<code>make kernel-selftests</code>, linux "
            f"{html_text(where)}, {html_text(view.cost.get('emulation', ''))}, "
            f"{html_text(view.cost.get('vcpus', '?'))} vCPUs, "
            "host clock: the vCPUs run in parallel there, as the rwlock's readers need). "
            "Medians of every round; the interval is a 95 % bootstrap interval of the change, "
            "and a change whose interval includes none is <b>inconclusive</b>.</p>"
            "<table><thead><tr><th>benchmark</th><th>stock</th>"
            f"<th>patched</th><th>change</th><th>95 % interval</th></tr></thead><tbody>{body}</tbody></table>"
            + _figures(view, [p for p in plots if p[0] == "cost.svg"]))


def _interval(v):
    """The interval cell: the change's range, and what it says."""
    if v.get("verdict") is None:
        return "not measured (one run)"
    text = f"{(v['low'] - 1) * 100:+.1f} to {(v['high'] - 1) * 100:+.1f} %"
    if v["verdict"] == "inconclusive":
        return f"{html_text(text)}: <b>inconclusive</b>"
    return html_text(f"{text}: {v['verdict']}")


def _why(view, plots):
    """Each kernel's worst wait on the ready-list lock, as the trace tells
    it: the chain table and its timeline."""
    if not view.why:
        return ""
    keys = [k for k, _ in view.why]
    out = ['<h2 id="why">Why: each kernel\'s trace</h2>',
           '<table class="why"><thead><tr><th></th>' + "".join(f"<th>{html_text(k)}</th>" for k in keys)
           + "</tr></thead><tbody>"]
    for label, cells in why.rows(view.why):
        out.append(f"<tr><td>{html_text(label)}</td>"
                   + "".join(f"<td>{html_text(x)}</td>" for x in cells) + "</tr>")
    out.append("</tbody></table>")
    out.append(_figures(view, [p for p in plots if p[0].startswith("why-")]))
    return "\n".join(out)


def _note(view):
    """The caveat a reader of the table must not miss, right under it."""
    for c in view.caveats:
        if c.startswith("The fix protects RT waiters only"):
            return f'<p class="note"><b>Caveat.</b> {html_text(c)}</p>'
    return ""


def render(view, plots, generated):
    colour = badge_colour(view.verdict)
    facts = "".join(f"<dt>{html_text(k)}</dt><dd>{html_text(v)}</dd>" for k, v in view.facts)
    caveats = "".join(f"<li>{html_text(c)}</li>" for c in view.caveats)
    main_plots = [p for p in plots if p[0] != "cost.svg" and not p[0].startswith("why-")]
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{html_text(view.title)}: {html_text(view.verdict)}</title>
<style>{CSS}</style></head>
<body><main>
<h1>{html_text(view.title)}</h1>
<div class="verdict" style="background:{colour}"><b>{html_text(view.verdict.upper())}</b>\
{html_text(view.headline)}</div>
<h2 id="latency">{HEADINGS.get(view.kind, "Latency and stalls")}</h2>
{_table(view)}
<p class="muted">Latencies in milliseconds. p99.99 and max come from few samples: read them as the
size of the worst events, not as a rate.</p>
{_note(view)}
<h2 id="plots">Plots</h2>
{_figures(view, main_plots)}
{_cost(view, plots)}
{_why(view, plots)}
<h2 id="run">What was run</h2>
<dl>{facts}</dl>
<h2 id="caveats">Caveats</h2>
<ul>{caveats}</ul>
<p class="muted">Generated {html_text(generated)} by report/render from the result files in this
directory.</p>
</main></body></html>
"""
