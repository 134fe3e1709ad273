"""page: the page of make demo-model (report/render): a column per lock
variant of the userspace model, from its summary.json (epmodel)."""
import os

from report import page, plots
from report.view import Column, View, count, pct_rows

MODEL_VARIANTS = (("rwlock", "rwlock (stock)"),
                  ("pi_mutex", "PI mutex (patched)"),
                  ("mutex", "plain mutex"))
# What each kind of plot shows, under its caption.
EXPLAIN = {
    "distribution": "Each curve is one lock variant's wait distribution; the further right, the "
                    "rarer. A lock without priority inheritance makes the RT consumer wait out "
                    "the throttled producer's quota period.",
    "timeline": "Worst lock wait in each window: without priority inheritance the waits come "
                "back every quota period.",
}


def view_of(run_dir, s):
    """The View of the model's summary S (a formats.ModelSummary): a column
    per lock variant."""
    cols = []
    for key, label in MODEL_VARIANTS:
        if getattr(s, key) is None:
            continue
        hgrm = os.path.join(run_dir, f"{key}.hgrm")
        ts = os.path.join(run_dir, f"{key}.timeseries.csv")
        cols.append(Column(key, label, getattr(s, key),
                           {"wait": hgrm} if os.path.exists(hgrm) else {},
                           ts if os.path.exists(ts) else None))
    sections = [
        ("consumer wait for the lock, ms", pct_rows(cols, lambda c: c.data.wait_us)),
        ("waits", [("waits", [count(c.data.waits) for c in cols]),
                   ("waits over 50 ms", [count(c.data.waits_over_50ms) for c in cols])]),
    ]
    p = s.params
    facts = [("parameters", ", ".join(f"{k}={v}" for k, v in p.items()) or "?")]
    caveats = ["The model reproduces the locking protocol in user space on the running "
               "kernel: it shows why a reader-side rwlock without priority inheritance "
               "stalls an RT writer, not that a particular kernel does."]
    # The model's own verdict is a sentence; the badge says what it found,
    # by the model's limits (a stall is a wait over 50 ms; a PI lock should
    # never wait 20 ms).
    rw, pi = s.rwlock, s.pi_mutex
    if rw and pi:
        separated = rw.waits_over_50ms > 0 and (pi.waits_over_20ms or 0) == 0
        word = "separated" if separated else "no separation"
    else:
        word = "incomplete"
    return View("model", "Userspace model of the epoll ready-list locking", cols, sections,
                word, s.verdict, facts, caveats,
                [("wait", "consumer lock wait")], explain=EXPLAIN)


def draw(view, plot_dir):
    """Every plot of the page: [(file, caption)]."""
    return plots.draw_all(view, plot_dir)


def html(view, made, generated):
    return page.render(view, made, generated)
