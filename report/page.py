"""The page frame every experiment's page is drawn in (the head, the style,
the "Generated" line), and the page of a View: verdict first, then the
numbers, the plots, the experiment's own sections, what was run and the
caveats. Plots are SVG files next to it (plots/)."""
from .escape import html_text

BADGE = {"fixed": "#1e8449", "separated": "#1e8449", "not fixed": "#c0392b", "invalid": "#c0392b"}
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


def frame(title, body, generated, by, style=""):
    """A whole page: TITLE in the head, BODY (HTML, a line each) in the
    main column, and the line that says when BY made it, from what.
    STYLE: CSS of the page's own, after the shared one."""
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{html_text(title)}</title>
<style>{CSS}{style}</style></head>
<body><main>
{body}<p class="muted">Generated {html_text(generated)} by {html_text(by)} from the result files in this
directory.</p>
</main></body></html>
"""


def badge_colour(verdict):
    """Green for a confirmed fix, red for a failed one, amber for a run that
    showed nothing clear, grey for no comparison."""
    if verdict in BADGE:
        return BADGE[verdict]
    return "#9a7d0a" if verdict in ("unclear", "no effect", "no separation") else "#566573"


def table(head, rows, cls=None):
    """An HTML table: HEAD the header cells, ROWS [(label, [cell])]; every
    cell is text, escaped here."""
    out = [(f'<table class="{cls}">' if cls else "<table>") + "<thead><tr>"
           + "".join(f"<th>{html_text(h)}</th>" for h in head) + "</tr></thead><tbody>"]
    for label, cells in rows:
        out.append(f"<tr><td>{html_text(label)}</td>"
                   + "".join(f"<td>{html_text(x)}</td>" for x in cells) + "</tr>")
    out.append("</tbody></table>")
    return "\n".join(out)


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


def figures(plots, explain):
    """The figures of PLOTS ([(file, caption)]), each caption followed by
    what EXPLAIN ({file prefix: text}) says of its kind of plot."""
    out = []
    for f, caption in plots:
        text = explain.get(f.split("-")[0].split(".")[0], "")
        out.append(f'<figure><img src="plots/{html_text(f)}" alt="{html_text(caption)}">'
                   f"<figcaption><b>{html_text(caption)}.</b> {html_text(text)}</figcaption></figure>")
    return "\n".join(out)


def render(view, plots, generated, sections=None):
    """The page of VIEW with PLOTS, made at GENERATED. SECTIONS: the
    experiment's own, after the plots (the demo's cost side and its
    trace), HTML on a line each; PLOTS then holds only the figures of the
    Plots section."""
    colour = badge_colour(view.verdict)
    facts = "".join(f"<dt>{html_text(k)}</dt><dd>{html_text(v)}</dd>" for k, v in view.facts)
    caveats = "".join(f"<li>{html_text(c)}</li>" for c in view.caveats)
    note = f'<p class="note"><b>Caveat.</b> {html_text(view.note)}</p>' if view.note else ""
    more = "\n".join(sections) if sections is not None else "\n"
    body = f"""<h1>{html_text(view.title)}</h1>
<div class="verdict" style="background:{colour}"><b>{html_text(view.verdict.upper())}</b>\
{html_text(view.headline)}</div>
<h2 id="latency">{view.heading}</h2>
{_table(view)}
<p class="muted">Latencies in milliseconds. p99.99 and max come from few samples: read them as the
size of the worst events, not as a rate.</p>
{note}
<h2 id="plots">Plots</h2>
{figures(plots, view.explain)}
{more}
<h2 id="run">What was run</h2>
<dl>{facts}</dl>
<h2 id="caveats">Caveats</h2>
<ul>{caveats}</ul>
"""
    return frame(f"{view.title}: {view.verdict}", body, generated, "report/render")
