"""page: the demo's page (report/render): the View of a demo's summary,
stock against patched (or one run on this host), and its own sections:
the cost side the kernel harness measured, and each kernel's trace."""
import os

from report import formats, page, plots
from report.escape import html_text
from report.page import figures
from report.plots import COLOURS, datablock, head, run_gnuplot
from report.view import Column, View, count, first, pct_rows

from ..ktrace import page as trace
from .judge import HOST_CLOCK_LATE_MS, KERNEL_ORDER

# How loadgen's and the ticker's sends wake the relay (the scenario's
# af_unix): where a sender throttled inside ep_poll_callback() is, and so
# what else may boost it out (lab/demo/README.md, "The kernel pairs").
WAKERS = {
    False: "UDP on 127.0.0.1: loadgen's sends wake relay from the loopback receive softirq, "
           "run in the sender's context under its CPU's softirq lock",
    True: "AF_UNIX datagrams: loadgen's sends wake relay from their own context, outside "
          "any softirq (the RT ticker stays on UDP)",
}

# What each kind of plot shows, under its caption.
DISTRIBUTION = {
    "vm-demo": "Each curve is one kernel's latency distribution; the further right, the "
               "rarer. The bug lifts the tail: the red (stock) curve leaves the blue "
               "(patched) one at the percentiles where the relay waited for a throttled "
               "sender.",
    "host": "The latency distribution of this run; the further right, the rarer.",
}
EXPLAIN = {
    "timeline": "Worst latency in each 100 ms window. Shaded: the relay made no progress (a "
                "stall); dotted green: the watchdog lifted the sender's CPU quota, after which "
                "the stall ends within milliseconds: the quota caused it.",
    "cost": "What the spinlock costs in epoll throughput, measured by the kernel harness.",
    "why": "From the kernel's trace. Red: the RT waiter waiting for the ready-list lock; purple: "
           "the task holding it, inside ep_poll_callback; ochre: that task's cgroup throttled by "
           "its CPU quota; green: the holder running at the waiter's priority (priority "
           "inheritance). On the stock kernel the rwlock's waiter cannot boost the throttled "
           "reader and waits out the throttle; on the patched one it boosts the holder out of "
           "the lock.",
}


def _kernel_column(run_dir, key, data):
    res = os.path.join(run_dir, key, "results")
    hgrm = {}
    relay = first(os.path.join(res, "relay*tick*.hgrm"))
    loadgen = first(os.path.join(res, "loadgen.uncorrected.hgrm"))
    ticker = first(os.path.join(res, "ticker.hgrm"))
    if ticker:
        hgrm["rt"] = ticker
    if relay:
        hgrm["relay"] = relay
    if loadgen:
        hgrm["loadgen"] = loadgen
    label = key + (f" ({data.kernel})" if data.kernel else "")
    return Column(key, label, data, hgrm,
                  first(os.path.join(res, "relay*.timeseries.csv")),
                  first(os.path.join(res, "events.csv")))


def _stall_cells(c):
    d = c.data
    if d.stalls is None:
        return d.outcome
    return str(d.stalls)


def _lift_cells(c):
    after = c.data.cleared_after_lift_ms
    if not after:
        return "-"
    text = f"{min(after):.0f}-{max(after):.0f}"
    if c.data.uncleared_stalls:
        text += f" ({c.data.uncleared_stalls} not)"
    return text


def _freeze_cell(c):
    f = c.data.guest_freezes
    if not f:
        return "-"
    notes = [f"{f.in_stalls} in stalls"] if f.in_stalls else []
    for key, word in (("explained", "explained by the trace"), ("borderline", "borderline"),
                      ("unexplained", "unexplained")):
        if getattr(f, key):
            notes.append(f"{len(getattr(f, key))} {word}")
    return f"{f.count}, {f.total_ms:.0f}" + (f" ({', '.join(notes)})" if notes else "")


# What cpu.stat's throttled time counts, by the kernel's throttle model
# (the trace's, else the image's): from v6.18 (eb962f251fbb) it starts
# when the first task of the hierarchy is taken off on its way to user
# space, not when the quota runs out.
THROTTLED_TIME = {"cfs_rq": "from when the quota ran out",
                  "task": "from the first task's throttle on its way to user space"}


def throttle_model(d):
    """A kernel's throttle model (D: its summary's record): its trace's,
    else its image's; None."""
    tm = ((d.why or {}).get("throttle_model") or {}).get("model")
    return tm or (d.image_facts or {}).get("throttle_model")


def _throttle_cells(c):
    d = c.data
    if d.throttled_periods is None:
        return "-"
    text = f"{d.throttled_periods}/{d.periods}" if d.periods else str(d.throttled_periods)
    # The time only with what it counts: a kernel whose model neither its
    # trace nor its image says keeps the periods alone.
    meaning = THROTTLED_TIME.get(throttle_model(d))
    if d.throttled_us is not None and meaning:
        text += f", {d.throttled_us / 1000:.0f} ms ({meaning})"
    return text


def view_of(run_dir, s):
    """The View of a demo's summary S (a formats.DemoSummary: stock and
    patched, or one host run)."""
    cols = [_kernel_column(run_dir, k, getattr(s, k)) for k in KERNEL_ORDER if getattr(s, k) is not None]
    rt = any(c.data.rt_ticker for c in cols)
    rule = s.rule or formats.VerdictRule()
    late = next((v for v in (rule.late_ms, rule.signal_ms) if v is not None), HOST_CLOCK_LATE_MS)
    clock = None if s.kind == "host" else s.clock or rule.clock or "host"
    virtual = clock == "virtual"
    sections = []
    if rt:
        sections.append(("RT ticker datagram, due time to echo, ms (the RT waker the fix protects)",
                         pct_rows(cols, lambda c: c.data.rt_latency_us)))
    sections += [
        ("relay timer tick lateness, ms (non-RT waker: a softirq)" if rt else
         "relay tick lateness, ms (the RT side)", pct_rows(cols, lambda c: c.data.relay_latency_us)),
        ("loadgen send to reply, ms (the throttled side)",
         pct_rows(cols, lambda c: c.data.loadgen_latency_us)),
        ("stalls and throttling", [
            ("watchdog stalls", [_stall_cells(c) for c in cols]),
            *([(f"RT datagrams over {late:g} ms", [
                "-" if c.data.rt_late is None else
                f"{c.data.rt_late} of {c.data.rt_samples}" for c in cols]),
               ("... timed from send(), blind to missed slots", [
                count(c.data.rt_late_uncorrected) for c in cols])] +
              ([] if virtual else [("... more during guest freezes", [
                   count(c.data.rt_late_in_guest_freeze) for c in cols])]) +
              [("guest freezes >= 5 ms (count, total ms)", [_freeze_cell(c) for c in cols])]
              if rt else []),
            (f"timer ticks over {late:g} ms late (100 ms windows)", [
                count(c.data.timer_late_windows) for c in cols]),
            ("worst stall, ms", [
                "-" if c.data.worst_stall_ms is None else f"{c.data.worst_stall_ms:.0f}"
                for c in cols]),
            ("ended after lift, ms", [_lift_cells(c) for c in cols]),
            ("throttled periods", [_throttle_cells(c) for c in cols]),
        ]),
    ]
    p = s.params
    facts = [("run", f"{s.run_id} ({s.date})")]
    built = s.kernels or {}
    for c in cols:
        facts.append((f"{c.key} kernel", c.data.kernel or built.get(c.key) or "?"))
        if built.get(c.key):
            facts.append((f"{c.key} image", built[c.key]))
        facts.append((f"{c.key} outcome", f"{c.data.outcome}, {c.data.wall_s} s wall"))
        facts.append((f"{c.key} problems", "; ".join(c.data.problems) or "none"))
    if clock:
        facts.append(("guest clock", "virtual: guest time is the instruction count "
                      "(QEMU -icount, one instruction per ns); the host cannot make the guest "
                      "late" if virtual else
                      "host: guest time is host time; host hiccups become guest latency"))
    facts.append(("initramfs sha256", s.initramfs_sha256 or "?"))
    if (s.spec or {}).get("kernel_args"):
        facts.append(("kernel command line, added", s.spec["kernel_args"]))
    if "af_unix" in p:
        facts.append(("how loadgen wakes relay", WAKERS[bool(p["af_unix"])]))
    if p:
        facts.append(("parameters", ", ".join(f"{k}={v}" for k, v in p.items())))
    if s.phases:
        facts.append(("time per phase", ", ".join(
            f"{ph.name.split(':')[0]} {ph.seconds} s" for ph in s.phases)))
    honesty = formats.raw(s.honesty)
    facts.append(("same initramfs and parameters",
                  "yes" if honesty and all(honesty.values()) else f"NO: {honesty}"))
    if virtual:
        noise = [
            "The guests ran on a virtual clock: QEMU counts instructions and the guest's "
            "time is that count, so the host's scheduling cannot make the guest late. "
            "A thread above every other one on each vCPU wakes every 5 ms and records when "
            "it woke 5 ms late or more. Inside a stall it may: the stalled kernel holds that "
            "CPU's work too. Outside one, the kernel's trace must say what held that CPU (the "
            "emulated CPU idle with the probe woken, a vCPU QEMU did not run while it ran the "
            "other, a task), each named in the \"why\" section; a late wake-up the trace cannot "
            "account for makes the run invalid, and one within the probe's 0.1 ms resolution "
            "of its limit is called borderline instead.",
            "The virtual clock is faithful to the bug (the inversion needs a preempted "
            "lock holder, not two CPUs in the same nanosecond) but runs the two vCPUs one "
            "after the other: it hides the reader parallelism that the rwlock bought, so "
            "the cost side is measured on the host clock.",
        ]
    else:
        noise = [
            "A busy host sometimes does not run the guest, or one of its vCPUs, for a while. "
            "A thread above every other one on each vCPU wakes every 5 ms and records when "
            "it woke 5 ms late or more; a late RT datagram that would not have been late "
            "without that frozen time is listed apart and not counted, on either kernel.",
            "QEMU software emulation (TCG) on the host clock adds latency noise of up to "
            f"~35 ms on the patched kernel; only latencies above {late:g} ms count as signal.",
        ]
    caveats = noise + [
        "A stall is the watchdog seeing no relay progress for "
        f"{p.get('stall_ms', '?')} ms while it kept running itself. It then lifts the "
        "quota to recover: without that "
        "the stock kernel stays stuck, so stall lengths are bounded by the watchdog, "
        "not by the kernel.",
        "loadgen is the throttled task: it is meant to exhaust its quota, falls behind its "
        "send schedule and is stopped at the end of the run. Its latency here is send to "
        "reply (not corrected for the schedule, which would measure its own backlog) and "
        "includes its own quota waits on both kernels. The fix protects the real-time "
        "relay, not the throttled sender.",
        "The fix protects RT waiters only. The relay's timerfd tick is a softirq: when a "
        "throttled producer holds its CPU's softirq lock, no task runs it and none waits on "
        "the lock (PREEMPT_RT does not wake ksoftirqd then), so nothing boosts the holder "
        "until the relay itself needs the lock for its next datagram, or the quota comes back "
        "(the kernel's trace shows each such hold: the 'why' section). The row 'timer "
        f"ticks over {late:g} ms late' counts it on both kernels"
        + (f" (this run: {_caveat_counts(s)})" if _caveat_counts(s) else "")
        + ". The verdict judges the RT side (the RT ticker and the watchdog); without an RT "
        "client waking the relay (--ticker-us 0) the patched kernel can stall too. Non-RT "
        "wakers keep waiting until the task-based CFS throttling of v6.18.",
    ]
    rule = s.rule.text if s.rule else None
    if rule:
        caveats.insert(0, "Verdict rule: " + rule + ".")
    if s.kind == "host":
        title = "relay on this host: one run"
        caveats = [c for c in caveats if c.startswith(("A stall is", "loadgen is"))]
    elif virtual:
        title = "PREEMPT_RT epoll ready-list fix: stock vs patched kernel (virtual clock)"
    else:
        title = "PREEMPT_RT epoll ready-list fix: stock vs patched kernel"
    kind = s.kind
    why = [(c.key, c.data.why) for c in cols] if any(c.data.why for c in cols) else None
    return View(kind, title, cols, sections,
                s.verdict, s.headline, facts, caveats,
                [("rt", "RT ticker datagram latency"), ("relay", "relay timer tick lateness"),
                 ("loadgen", "loadgen send to reply")],
                signal_ms=late if s.kind != "host" else None, clock=clock,
                cost=s.cost, why=why,
                explain=dict(EXPLAIN, distribution=DISTRIBUTION.get(kind, DISTRIBUTION["host"])),
                note=next((c for c in caveats if c.startswith("The fix protects RT waiters only")), None),
                trailer=["", "why, from each kernel's trace (lab/ktrace):"] + trace.lines(why) if why else [])


def _caveat_counts(s):
    c = s.non_rt_waker or {}
    parts = [f"{k} {c[k]}" for k in KERNEL_ORDER if c.get(k) is not None]
    return ", ".join(parts)


def cost_section(view, made):
    """The page's section on what the fix costs in epoll throughput, from
    the kernel harness's cost.json (make kernel-selftests), when it has run."""
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
            + figures([p for p in made if p[0] == "cost.svg"], view.explain))


def _interval(v):
    """The interval cell: the change's range, and what it says."""
    if v.get("verdict") is None:
        return "not measured (one run)"
    text = f"{(v['low'] - 1) * 100:+.1f} to {(v['high'] - 1) * 100:+.1f} %"
    if v["verdict"] == "inconclusive":
        return f"{html_text(text)}: <b>inconclusive</b>"
    return html_text(f"{text}: {v['verdict']}")


def cost_plot(view, out):
    """Throughput of the patched kernel as % of stock, with the interval of
    each figure, when the kernel harness measured it."""
    bars = cost_rows(view.cost)
    if not bars:
        return False
    rows = [(b, v["ratio"] * 100, v["low"] * 100, v["high"] * 100) for b, v in bars]
    script = head(820, 340) + datablock("c", rows) + f"""
set title "epoll throughput of the patched kernel, % of stock (bars: 95 % interval)"
set style data histograms
set style histogram errorbars gap 1 lw 1.5
set style fill solid 0.9 noborder
set yrange [0:*]
set ylabel "patched, % of stock"
set xtics rotate by -20 noenhanced
set arrow from graph 0, first 100 to graph 1, first 100 nohead dt 2 lc rgb "#888888" lw 1.5 front
set key top right
plot $c using 2:3:4:xtic(1) lc rgb "{COLOURS[1]}" title "patched / stock", \\
     NaN with lines dt 2 lc rgb "#888888" lw 1.5 title "no change (stock)"
"""
    run_gnuplot(script, out)
    return True


def cost_rows(cost):
    """(benchmark, {stock, patched, ratio, low, high, verdict}) from the
    cost.json of kernel/selftests (make kernel-selftests): each figure's
    medians, the ratio patched / stock and its interval. A cost.json from
    before the intervals has medians only: its interval is the ratio
    itself and its verdict None (one sample says nothing of the noise)."""
    if not isinstance(cost, dict):
        return []
    if isinstance(cost.get("comparison"), list):
        return [(f"{c['name']}, {c['unit']}",
                 {"stock": c["stock_median"], "patched": c["patched_median"],
                  "ratio": c["ratio"], "low": c["low"], "high": c["high"],
                  "verdict": c["verdict"]})
                for c in cost["comparison"] if c.get("stock_median")]
    kernels = cost.get("kernels")
    if not isinstance(kernels, dict) or not {"stock", "patched"} <= set(kernels):
        return []
    rows = {}

    def put(name, kernel, value):
        if isinstance(value, (int, float)):
            rows.setdefault(name, {})[kernel] = value

    for k in ("stock", "patched"):
        wait = kernels[k].get("perf_bench_epoll_wait") or {}
        put("perf bench epoll wait -t 4, ops/s", k, wait.get("median_ops_per_sec"))
        for med in (kernels[k].get("epoll_stress") or {}).get("medians", []):
            put(f"epoll-stress {med.get('threads')} producers, events/ms", k,
                med.get("median_events_per_ms"))
    out = []
    for n, v in rows.items():
        if len(v) == 2 and v["stock"]:
            r = v["patched"] / v["stock"]
            out.append((n, dict(v, ratio=r, low=r, high=r, verdict=None)))
    return out


def draw(view, plot_dir):
    """Every plot of the page: [(file, caption)]."""
    made = plots.draw_all(view, plot_dir)
    if cost_plot(view, os.path.join(plot_dir, "cost.svg")):
        made.append(("cost.svg", "the cost side: epoll throughput"))
    return made + trace.draw(view.why, plot_dir)


def html(view, made, generated):
    """The page, with the cost side and the trace after the plots."""
    figures = [p for p in made if p[0] != "cost.svg" and not p[0].startswith("why-")]
    return page.render(view, figures, generated,
                       [cost_section(view, made), trace.section(view.why, made, view.explain)])
