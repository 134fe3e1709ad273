"""matrix_page: make demo-matrix's tables, matrix.md and matrix.html (in
the page frame every experiment shares), from the kernels' rows and the
pairs' rows lab/demo/matrix makes (cells.row(), matrix.pair_row())."""
import html

from report.page import frame

from . import cells


def _cell_text(c):
    if not c:
        return "not run"
    runs = f" ({c['runs']} runs)" if c["runs"] > 1 else ""
    return f"**{c['word']}**{runs}: {c['figures']}. {c['chain']}"


def _facts(r):
    lock = f"{r['lock'] or '?'}" + (f" ({r['lock_from']})" if r.get("lock_from") else "")
    if r.get("lock_note"):
        lock += f"; {r['lock_note']}"
    model = cells.model_name(r["model"]) + (f" ({r['model_from']})" if r.get("model_from") else "")
    return lock, model


def markdown(rows, pairs, fixes, on7x):
    """matrix.md: the kernels' table, the fixes' sentences, the 7.x
    kernels' cells in words (ON7X: cells.on_7x()), the pairs' verdicts."""
    heads = " | ".join(cells.WAITERS.values())
    out = [f"| kernel | obtained | ep->lock | CFS throttle model | {heads} |",
           "|---|---|---|---|" + "---|" * len(cells.WAITERS)]
    for r in rows:
        lock, model = _facts(r)
        out.append(f"| {r['kernel']} ({r['pair']}, {r['side']}) | {r['obtained'] or '?'} | {lock} "
                   f"| {model} | "
                   + " | ".join(_cell_text(r["cells"][w]).replace("|", "/") for w in cells.WAITERS) + " |")
    out += [""] + [f["sentence"] for f in fixes.values()] + [""]
    out += [f"On 7.x: {x}" for x in cells.on_7x_lines(on7x)] + [""]
    out += ["| pair | " + " | ".join(f"{name} waker" for name, _ in cells.WAKERS.values()) + " | verdict |",
            "|---|" + "---|" * len(cells.WAKERS) + "---|"]
    for p in pairs:
        cellz = []
        for waker in cells.WAKERS:
            ds = p["demos"].get(waker) or []
            runs = ", ".join(d.get("run") or f"no report ({d.get('error')})" for d in ds)
            cellz.append(f"{p['wakers'].get(waker, 'not run').upper()}" + (f" ({runs})" if runs else ""))
        out.append(f"| {p['what']} | " + " | ".join(cellz) + f" | {p['verdict'].upper()} |")
    return "\n".join(out) + "\n"


WORD_COLOURS = {"CLEAN": "#d5f5e3", "ON TIME": "#d5f5e3", "STALLED": "#f5b7b1", "HELD UP": "#f5b7b1",
                "SOME LATE": "#fdebd0", "MIXED": "#fdebd0", "LATE": "#fdebd0"}


# The matrix's cells hold several lines each, and its verdicts link to
# each demo's own page.
STYLE = """
table.matrix { margin-bottom: 1.5em; }
table.matrix td, table.matrix th { border: 1px solid #bbb; padding: .3em .6em; text-align: left;
  vertical-align: top; }
table.matrix th { background: #eee; }
table.matrix td small { color: #444; }
"""


def page(rows, pairs, fixes, on7x, generated, by):
    """matrix.html: the kernels' table (each cell a verdict with its
    figures and its chain from the trace), the fixes' sentences, the 7.x
    kernels' cells in words, and the pairs' verdicts, each demo linked to
    its report; BY: the program that made it."""
    e = html.escape
    body = []
    for r in rows:
        lock, model = _facts(r)
        cellz = [f"<b>{e(r['kernel'] or '?')}</b><br><small>{e(r['pair'])}, {e(r['side'])}</small>",
                 e(r["obtained"] or "?"), e(lock), e(model)]
        for w in cells.WAITERS:
            c = r["cells"][w]
            if not c:
                cellz.append("not run")
                continue
            runs = f" ({c['runs']} runs)" if c["runs"] > 1 else ""
            cellz.append(f'<b style="background:{WORD_COLOURS.get(c["word"], "#eee")}">{e(c["word"])}</b>'
                         f"{e(runs)}<br>{e(c['figures'])}<br><small>{e(c['chain'])}</small>")
        body.append("<tr>" + "".join(f"<td>{x}</td>" for x in cellz) + "</tr>")
    prs = []
    for p in pairs:
        cellz = [e(p["what"])]
        for waker in cells.WAKERS:
            links = []
            for d in p["demos"].get(waker) or []:
                links.append(f'<a href="{e(d["run"])}/report.html">{e(d["verdict"] or "?")}</a>'
                             if d.get("run") else f"no report: {e(d.get('error', '?'))}")
            cellz.append(f"<b>{e(p['wakers'].get(waker, 'not run').upper())}</b><br><small>"
                         + ", ".join(links) + "</small>")
        cellz.append(f"<b>{e(p['verdict'].upper())}</b>")
        prs.append("<tr>" + "".join(f"<td>{x}</td>" for x in cellz) + "</tr>")
    heads = "".join(f"<th>{e(name)}</th>" for name in cells.WAITERS.values())
    wheads = "".join(f"<th>{e(name)} waker</th>" for name, _ in cells.WAKERS.values())
    sentences = "".join(f"<p>{e(f['sentence'])}</p>" for f in fixes.values())
    seven = "".join(f"<li>{e(x)}</li>" for x in cells.on_7x_lines(on7x)) or "<li>no 7.x kernel ran</li>"
    return frame("relay: the epoll stall on each kernel", f"""\
<h1>The epoll stall on each kernel, and what each fix protects</h1>
<p>make demo on each pair of kernels, the same scenario, virtual clock: an RT relay (SCHED_FIFO
50) in <code>epoll_wait()</code>, a co-tenant under a CPU quota waking it (over AF_UNIX unless
said), an RT ticker (FIFO 40) sending it a datagram every 10 ms. A row per kernel: how it was
obtained, its <code>ep-&gt;lock</code> (from its BTF or its compiled <code>fs/eventpoll.c</code>),
its CFS throttle model (read from the kernel that ran: the trace's probe on the task-based
model's task work, or its symbols). A column per waiter, each a verdict of make demo's rule with
the figures over its runs and the chain from the kernel's trace of the worst run:
the RT ticker through relay (STALLED: the watchdog saw relay stand still; HELD UP: ten or more RT
datagrams over the late limit; CLEAN: none); relay's own timerfd tick, delivered by its CPU's
timer softirq (HELD UP: a tick later than the late limit, held by its waits on ep-&gt;lock;
LATE: later, but not held there); the quota period's timer, a soft
hrtimer run in that same softirq (HELD UP: a refill later than the late limit after it was due,
the deadlock of the original reports when nothing lifts the quota; LATE: later, but held by no
lock and no throttled task: the chain says what its CPU did).</p>
<table class="matrix"><tr><th>kernel</th><th>obtained</th><th>ep-&gt;lock</th><th>CFS throttle model</th>
{heads}</tr>
{chr(10).join(body)}
</table>
<h2>What each fix protects</h2>
{sentences}
<h2>On 7.x</h2>
<ul>{seven}</ul>
<h2>The pairs, as make demo judged them</h2>
<table class="matrix"><tr><th>pair</th>{wheads}<th>verdict</th></tr>
{chr(10).join(prs)}
</table>
<p>The pair's verdict: NOT FIXED if the patched kernel failed with either waker; FIXED if a
waker showed the stock kernel's inversion and the patched kernel was clean with it. Each verdict
opens that demo's full report.</p>
<p>Why the wakers differ: over loopback UDP the relay is woken from the receive softirq, run in the
sender's context under its CPU's softirq lock; a task that needs that lock (a timer softirq
thread) lends a sender throttled inside <code>ep_poll_callback()</code> its priority and cuts the
inversion short. Over AF_UNIX the sender wakes the relay from its own context and holds nothing a
timer needs (lab/demo/README.md, "The kernel pairs").</p>
""", generated, by, STYLE)
