"""page: the page of a fleet run (make fleet, report/render): each load
host's result beside the merge of their histograms (loadgen merge)."""
import glob
import os

from report import page, plots
from report.files import DataError, read_json
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
    data = read_json(os.path.join(res, "loadgen.json"))
    hgrm = os.path.join(res, "loadgen.hgrm")
    return Column(host, host, data, {"loadgen": hgrm} if os.path.exists(hgrm) else {})


def _run_cell(c, key, fmt=str):
    v = c.data.get(key)
    return "-" if v is None else fmt(v)


def view_of(run_dir, merged):
    """A fleet run (deploy/ansible): each load host's result beside the
    merge of their histograms (loadgen merge)."""
    inputs = merged.get("inputs")
    if not isinstance(inputs, list) or not inputs:
        raise DataError(f"{run_dir}/merged.json: no inputs")
    hosts = [_fleet_host(run_dir, i.get("path", "")) for i in inputs]
    hgrm = os.path.join(run_dir, "merged.hgrm")
    total = Column("merged", f"merged ({len(hosts)} hosts)",
                   {"latency_us": merged.get("latency_us", {})},
                   {"loadgen": hgrm} if os.path.exists(hgrm) else {})
    cols = hosts + [total]
    for c in cols:
        lat = c.data.get("latency_us") or {}
        c.data["corrected"] = lat.get("corrected")
        c.data["uncorrected"] = lat.get("uncorrected")
    sections = [
        ("loadgen latency, corrected for the schedule, ms", pct_rows(cols, "corrected")
         + [("samples", [count((c.data.get("corrected") or {}).get("count"))
                         for c in cols])]),
        ("loadgen latency, send to reply, ms", pct_rows(cols, "uncorrected")),
        ("load", [
            ("rate achieved, pps", [_run_cell(c, "achieved_rate", lambda v: f"{v:.0f}")
                                    for c in hosts] + [
                f"{sum(c.data.get('achieved_rate') or 0 for c in hosts):.0f}"]),
            ("sent", [_run_cell(c, "sent") for c in hosts] + [
                str(sum(c.data.get("sent") or 0 for c in hosts))]),
            ("lost", [_run_cell(c, "lost") for c in hosts] + [
                str(sum(c.data.get("lost") or 0 for c in hosts))]),
        ]),
    ]
    fleet = os.path.basename(os.path.normpath(run_dir))
    facts = [("run", fleet)] + [(f"load host {c.key}", f"sent to {c.data.get('target', '?')}")
                                for c in hosts]
    for relay in sorted(glob.glob(os.path.join(run_dir, "*", "relay.json"))):
        r = read_json(relay)
        rx = sum(li.get("rx_packets", 0) for li in (r.get("listeners") or {}).values())
        facts.append((f"relay host {os.path.basename(os.path.dirname(relay))}",
                      f"{rx} datagrams received on its listeners"))
    # A host given a kernel package (relay_kernel_deb) brought back what
    # relay-preflight said of it once it ran.
    for pf in sorted(glob.glob(os.path.join(run_dir, "*", "preflight.txt"))):
        level, text = preflight(pf)
        facts.append((f"kernel on {os.path.basename(os.path.dirname(pf))}",
                      f"{preflight_release(pf)}; relay-preflight: {FIX_WHAT} "
                      f"{text.split(';')[0]} ({level})"))
    h = merged.get("histogram") or {}
    facts.append(("histograms", f"{h.get('lowest', '?')}..{h.get('highest', '?')} us, "
                                f"{h.get('significant_digits', '?')} significant digits"))
    m = merged.get("latency_us", {}).get("corrected") or {}
    headline = (f"{len(hosts)} load hosts, {merged.get('count', '?')} samples; merged p99 "
                f"{ms(m.get('p99'))} ms, max {ms(m.get('max'))} ms")
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
