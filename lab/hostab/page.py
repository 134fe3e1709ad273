"""page: the host A/B's page (report/render): the scenario on a stock and a
patched systemd test host (lab/hostab/run), one column per kernel package."""
import os

from report import formats, page, plots
from report.formats import FIX as FIX_WHAT
from report.view import Column, View, count, pct_rows

from ..demo.page import EXPLAIN as DEMO_EXPLAIN
from ..ktrace import page as trace

# What each kind of plot shows, under its caption.
EXPLAIN = {"distribution": "Each curve is the RT client's latency through relay on one kernel "
                           "package; the further right, the rarer. The bug lifts the tail: the red "
                           "(stock) curve leaves the blue (patched) one where relay waited for the "
                           "throttled co-tenant.",
           "why": DEMO_EXPLAIN["why"]}


def _late_cell(d):
    if d.outcome != "ok":
        return "-"
    least, most = (d.late if d.late_at_least is None else d.late_at_least), d.late
    return str(most) if least == most else f"{least}-{most}"


def _cpu_max_cell(d):
    if d.outcome != "ok":
        return "-"
    # slice_quota_pct: a summary written before the quota had the lab's name
    q = d.cpu_quota_pct if d.cpu_quota_pct is not None else d.slice_quota_pct
    return d.slice_cpu_max + ("" if q is None else f" ({q:.3g}%)")


def _of(part, whole):
    if part is None:
        return "-"
    return f"{part}/{whole}" if whole is not None else str(part)


def _sched_cell(d):
    if d.outcome != "ok" or not d.rt_threads:
        return "-"
    if d.rt_policy:
        return f"{d.rt_policy} {d.rt_priority} ({len(d.rt_threads)} threads)"
    return ", ".join(f"{t.comm}/{t.tid} {t.policy} {t.priority}" for t in d.rt_threads)


def _chains_cell(d):
    c = d.late_chains
    if d.outcome != "ok" or c is None:
        return "-" if d.outcome != "ok" else "not traced"
    if not c.late:
        return "none late"
    text = f"{c.by_chain} of {c.late}"
    if c.unexplained:
        first = c.unexplained[0]
        text += f"; unexplained: {first['latency_ms']} ms at {first['due_s']} s ({first['why']})"
    return text


def view_of(run_dir, s):
    """The scenario on systemd test hosts (lab/hostab/run): one column
    per kernel package, each with what relay-preflight said of the fix, the
    RT client's latency through relay, what the trace says of its late
    datagrams, and the co-tenant's throttling. S:
    its summary, a formats.HostSummary."""
    late = float(s.late_ms)
    cols = []
    for k in ("stock", "patched"):
        d = s.kernels.get(k) or formats.HostKernel(outcome="no-results",
                                                   problems=[f"summary.json has no {k} kernel"])
        ok = d.outcome == "ok"
        cols.append(Column(k, k + (f" ({d.kernel})" if d.kernel else ""), d,
                           {"rt": os.path.join(run_dir, k, "scenario", "rt-client.hgrm")}
                           if ok else {}))
    fix = [(c, c.data.preflight) for c in cols]
    sections = [
        ("kernel package", [
            ("release", [c.data.kernel or "-" for c in cols]),
            ("relay-preflight: the fix", [f"{p.level}: {p.text.split(';')[0]}" if p else "-"
                                          for c, p in fix])]),
        ("RT client through relay, ms (slot to echo)",
         pct_rows(cols, lambda c: c.data.latency_us) + [
             (f"datagrams {late:g} ms late or more", [_late_cell(c.data) for c in cols]),
             ("... explained by a chain (the kernel's trace)", [_chains_cell(c.data) for c in cols]),
             ("measured / sent on schedule", [
                 _of(c.data.latency_us and c.data.latency_us.count, c.data.rt_expected) for c in cols]),
             ("lost", [count(c.data.rt_lost) for c in cols]),
             ("scheduled as (the kernel's, while it ran)", [_sched_cell(c.data) for c in cols])]),
        ("relay's own wake-ups, ms (a datagram's arrival to relay reading it)", [
            (name, ["-" if not c.data.relay_wake_us else
                    f"{getattr(c.data.relay_wake_us, key) / 1000:.2f}" for c in cols])
            for name, key in (("p99.9", "p99_9"), ("max", "max"))] + [
            ("datagrams read", [count(c.data.relay_wake_us and c.data.relay_wake_us.count)
                                for c in cols])]),
        ("co-tenant in loadgen.slice", [
            ("slice cpu.max (quota period, us)", [_cpu_max_cell(c.data) for c in cols]),
            ("stalls the watchdog ended", [count(c.data.stalls) for c in cols]),
            ("throttled periods, whole run", [
                _of(c.data.cotenant_nr_throttled, c.data.cotenant_nr_periods) for c in cols]),
            ("... while the RT client ran", [
                _of(c.data.throttled_during_rt, c.data.periods_during_rt) for c in cols]),
            ("co-tenant rate achieved, pps", [
                "-" if c.data.cotenant_rate_pps is None else
                f"{c.data.cotenant_rate_pps:.0f}" for c in cols])]),
    ]
    params = s.params or {}
    facts = [("run", s.run_id)]
    for c, p in fix:
        facts.append((f"{c.key} kernel", c.data.kernel or "no results"))
        if p:
            facts.append((f"{c.key}: relay-preflight", f"{p.level}  {FIX_WHAT}: {p.text}"))
        facts.append((f"{c.key} problems", "; ".join(c.data.problems) or "none"))
        if c.data.metrics:
            facts.append((f"{c.key}: relay's /metrics", ", ".join(
                f"{w} the scenario: {path}" for w, path in c.data.metrics.items())))
    if params:
        facts.append(("parameters", ", ".join(f"{k}={v}" for k, v in params.items())))
    facts.append(("verdict rule", s.rule))
    caveats = [f"The {c.key} kernel's data is missing: {c.data.problems[0]}. Its column "
               "shows nothing because nothing was measured, not because nothing happened."
               for c in cols if c.data.outcome != "ok"]
    caveats += [
        "Everything ran under systemd's own units on each test host: relay.service at "
        "SCHED_FIFO from its unit, the co-tenant loadgen@cotenant in loadgen.slice under "
        "CPUQuota= on relay's CPU, and the RT client (SCHED_FIFO, on another CPU) whose "
        "datagrams through relay are the result. The parameters are the demo's "
        "(demo-scenario's table), its watchdog ends the stalls (demo-scenario --watch).",
        "The verdict is the RT client's. relay's own wake-up latency covers every datagram "
        "relay read, the co-tenant's included, from the kernel's arrival timestamp to "
        "relay's read: it is shown, not judged.",
        "The RT client's latency runs from each datagram's slot in its schedule to its echo "
        "(corrected for coordinated omission): a datagram held back while relay waited "
        "counts with the time it waited. A lost datagram has no latency and is counted "
        "apart.",
        f"The late count comes from the percentile rows of rt-client.hgrm: each row says how "
        f"many datagrams were at or below its latency, so when no row falls exactly on "
        f"{late:g} ms the count is the range between the rows on either side.",
    ]
    clock = params.get("clock")
    if clock == "virtual":
        caveats.append("The guests ran on the virtual clock (QEMU -icount): the host's "
                       "scheduling cannot make them late, so a datagram "
                       f"{late:g} ms late is the kernel's doing.")
    why = [(c.key, c.data.why) for c in cols] if any(c.data.why for c in cols) else None
    return View("testhost", "relay on a systemd test host: stock vs patched PREEMPT_RT kernel",
                cols, sections, s.verdict.word, s.headline, facts, caveats,
                [("rt", "RT client latency through relay")], signal_ms=late, clock=clock,
                heading="Latency and throttling per kernel package", explain=EXPLAIN, why=why,
                trailer=["", "why, from each kernel's trace (lab/ktrace):"] + trace.lines(why) if why else [])


def draw(view, plot_dir):
    """Every plot of the page: [(file, caption)]."""
    return plots.draw_all(view, plot_dir) + trace.draw(view.why, plot_dir)


def html(view, made, generated):
    """The page, with the trace's chains and timelines after the plots."""
    figures = [p for p in made if not p[0].startswith("why-")]
    return page.render(view, figures, generated, [trace.section(view.why, made, view.explain)])
