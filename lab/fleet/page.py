"""page: the page of a fleet run (make fleet, report/render): each load
host's result beside the merge of their histograms (loadgen merge)."""
import glob
import os

from report import formats, page, plots
from report.files import DataError
from report.formats import FIX as FIX_WHAT, preflight, preflight_release
from report.view import Column, View, count, ms, pct_rows

# What each kind of plot shows, under its caption.
EXPLAIN = {"distribution": "Each load host's latency distribution and their merge (the hosts' "
                           "histograms added); the further right, the rarer."}


def _fleet_host(run_dir, path):
    """The load host an input of merged.json came from: the directory
    results/<id>-fleet/<host>/ it was fetched to."""
    host = os.path.basename(os.path.dirname(path)) or path
    res = os.path.join(run_dir, host)
    data = formats.read(formats.Loadgen, os.path.join(res, "loadgen.json"))
    hgrm = os.path.join(res, "loadgen.hgrm")
    return Column(host, host, data, {"loadgen": hgrm} if os.path.exists(hgrm) else {})


def _run_cell(v, fmt=str):
    return "-" if v is None else fmt(v)


def _latency(c, which):
    """Column C's loadgen latency of WHICH kind (corrected, uncorrected)."""
    return getattr(c.data.latency_us, which) if c.data.latency_us else None


def view_of(run_dir, merged):
    """A fleet run (deploy/ansible): each load host's result beside the
    merge of their histograms (loadgen merge). MERGED: its merged.json, a
    formats.Merged."""
    if not merged.inputs:
        raise DataError(f"{run_dir}/merged.json: no inputs")
    hosts = [_fleet_host(run_dir, i.path) for i in merged.inputs]
    hgrm = os.path.join(run_dir, "merged.hgrm")
    total = Column("merged", f"merged ({len(hosts)} hosts)",
                   formats.Loadgen(latency_us=merged.latency_us),
                   {"loadgen": hgrm} if os.path.exists(hgrm) else {})
    cols = hosts + [total]
    sections = [
        ("loadgen latency, corrected for the schedule, ms", pct_rows(cols, lambda c: _latency(c, "corrected"))
         + [("samples", [count(getattr(_latency(c, "corrected"), "count", None))
                         for c in cols])]),
        ("loadgen latency, send to reply, ms", pct_rows(cols, lambda c: _latency(c, "uncorrected"))),
        ("load", [
            ("rate achieved, pps", [_run_cell(c.data.achieved_rate, lambda v: f"{v:.0f}")
                                    for c in hosts] + [
                f"{sum(c.data.achieved_rate or 0 for c in hosts):.0f}"]),
            ("sent", [_run_cell(c.data.sent) for c in hosts] + [
                str(sum(c.data.sent or 0 for c in hosts))]),
            ("lost", [_run_cell(c.data.lost) for c in hosts] + [
                str(sum(c.data.lost or 0 for c in hosts))]),
        ]),
    ]
    fleet = os.path.basename(os.path.normpath(run_dir))
    facts = [("run", fleet)] + [(f"load host {c.key}", f"sent to {c.data.target or '?'}")
                                for c in hosts]
    for relay in sorted(glob.glob(os.path.join(run_dir, "*", "relay.json"))):
        r = formats.read(formats.Relay, relay)
        rx = sum(li.get("rx_packets", 0) for li in (r.listeners or {}).values())
        facts.append((f"relay host {os.path.basename(os.path.dirname(relay))}",
                      f"{rx} datagrams received on its listeners"))
    # A host given a kernel package (relay_kernel_deb) brought back what
    # relay-preflight said of it once it ran.
    for pf in sorted(glob.glob(os.path.join(run_dir, "*", "preflight.txt"))):
        level, text = preflight(pf)
        facts.append((f"kernel on {os.path.basename(os.path.dirname(pf))}",
                      f"{preflight_release(pf)}; relay-preflight: {FIX_WHAT} "
                      f"{text.split(';')[0]} ({level})"))
    h = merged.histogram or {}
    facts.append(("histograms", f"{h.get('lowest', '?')}..{h.get('highest', '?')} us, "
                                f"{h.get('significant_digits', '?')} significant digits"))
    m = merged.latency_us.corrected
    headline = (f"{len(hosts)} load hosts, {merged.count if merged.count is not None else '?'} samples; "
                f"merged p99 {ms(m and m.p99)} ms, max {ms(m and m.max)} ms")
    caveats = ["The merged column adds the hosts' histograms (loadgen merge), not their "
               "percentiles: it is what one loadgen that had sent all the load would report."]
    return View("fleet", "relay fleet run: load hosts and their merge", cols, sections,
                "merged", headline, facts, caveats,
                [("loadgen", "loadgen corrected latency")], heading="Latency per host",
                explain=EXPLAIN)


def draw(view, plot_dir):
    """Every plot of the page: [(file, caption)]."""
    return plots.draw_all(view, plot_dir)


def html(view, made, generated):
    return page.render(view, made, generated)
