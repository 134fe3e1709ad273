"""judge: the demo's verdict rule, and the summary.json of a demo run from
its per-kernel result directories (report/summarize).

A run directory holds one directory per kernel (stock, patched; or host for
a run on this machine), each with boot.json (written by the host driver:
outcome, initramfs hash, wall time) and results/ (what the scenario runner
wrote: scenario.json, relay.json, loadgen.json, cpu.stat, ...).
"""
import os
from dataclasses import dataclass

from report.files import DataError, number, read_json, read_timeseries
from report import formats

from . import margins

# The verdict rule depends on the guests' clock (kernel/vm/boot --clock).
# On the virtual clock guest time is instruction count: the host cannot make
# the guest late, the patched kernel's RT tail stays under ~1 ms, and the
# rule is strict. On the host clock QEMU's noise reaches ~35 ms on the
# patched kernel: only latencies above 50 ms count as signal, a couple of
# late datagrams are allowed, and late datagrams the freeze probes explain
# are not counted (lab/demo/README.md has the measurements).
HOST_CLOCK_LATE_MS = 50.0
HOST_CLOCK_ALLOWANCE = 2
# The stock kernel shows the effect by stalls, or by a max this many times
# the patched kernel's, or by at least EFFECT_MIN_LATE late RT-ticker
# datagrams.
EFFECT_RATIO = 10.0
EFFECT_MIN_LATE = 10
# The patched kernel passes only when the ticker measured at least this
# share of the datagrams it was meant to send: an RT side that was not
# measured cannot pass.
MIN_RT_SHARE = 0.5


@dataclass(frozen=True)
class Rule:
    """How a run is judged: its clock, its late limit (the scenario's
    --late-ms), how many late patched RT datagrams are tolerated, and
    whether late datagrams the freeze probes explain are left out."""
    clock: str
    late_ms: float
    allowance: int
    discount_freezes: bool

    @classmethod
    def of(cls, params):
        p = params or {}
        if p.get("clock") == "virtual":
            return cls("virtual", float(p.get("late_ms", HOST_CLOCK_LATE_MS)), 0, False)
        return cls("host", HOST_CLOCK_LATE_MS, HOST_CLOCK_ALLOWANCE, True)


KERNEL_ORDER = ("stock", "patched", "host")


def kernel_summary(kdir, rule):
    """The summary object of one kernel's run (outcome first: a hung guest
    is a result with no numbers)."""
    boot = formats.read(formats.Boot, os.path.join(kdir, "boot.json"))
    out = {"outcome": boot.outcome or "no-results",
           "initramfs_sha256": boot.initramfs_sha256,
           "kernel_image": boot.kernel_image,
           "wall_s": boot.wall_s,
           "timeout_s": boot.timeout_s}
    res = os.path.join(kdir, "results")
    # What the driver knew of the image before it booted (lab/labkit's
    # kernels.described): how it was obtained, its lock, its throttle model.
    facts = os.path.join(kdir, "kernel.json")
    if os.path.exists(facts):
        out["image_facts"] = read_json(facts)
    # A guest that finished its scenario and then never sent its results
    # hung in the harness (or after the run), not in the run: no evidence
    # either way.
    console = os.path.join(kdir, "console.log")
    if out["outcome"] == "hung" and os.path.exists(console):
        with open(console, encoding="utf-8", errors="replace") as f:
            out["hung_after_scenario"] = "demo-scenario: done after" in f.read()
    if not os.path.exists(os.path.join(res, "scenario.json")):
        out.update(stalls=None, worst_stall_ms=None, relay_latency_us=None,
                   loadgen_latency_us=None, throttled_periods=None, params=None,
                   problems=[boot.problem] if boot.problem else [])
        return out
    scen = formats.read(formats.Scenario, os.path.join(res, "scenario.json"))
    stalls = scen.stalls
    cg = scen.cgroup or formats.ScenarioCgroup()
    out.update(
        kernel=scen.kernel,
        params=scen.params,
        problems=list(scen.problems),
        stalls=len(stalls),
        worst_stall_ms=max((s.length_ms for s in stalls), default=0.0),
        stall_ms=[s.length_ms for s in stalls],
        cleared_after_lift_ms=[s.after_lift_ms for s in stalls if s.cleared],
        uncleared_stalls=sum(1 for s in stalls if not s.cleared),
        throttled_periods=cg.nr_throttled,
        periods=cg.nr_periods,
        throttled_us=cg.throttled_us,
        watchdog=formats.raw(scen.watchdog) if scen.watchdog else None,
    )
    # A run that failed early has no relay or loadgen results: that is
    # reported (null numbers, the reason in problems), not an error.
    out["relay_latency_us"] = out["loadgen_latency_us"] = None
    # The RT waker's own view (the ticker: send to echo of its datagrams).
    tick = scen.ticker if scen.ticker and scen.ticker.enabled else None
    p = scen.params
    out["rt_ticker"] = tick is not None
    out["rt_latency_us"] = formats.shown(scen.ticker.latency_us) if scen.ticker else None
    # On the host clock, late RT datagrams the freeze probes explain (the
    # guest or one vCPU did not run: the host's doing, on either kernel) do
    # not count. On the virtual clock there is nothing to explain: every
    # late datagram counts, and a freeze is a problem of its own.
    out["rt_late_all"] = tick.late if tick else None
    out["rt_late_in_guest_freeze"] = (scen.ticker.late_in_guest_freeze
                                      if rule.discount_freezes and scen.ticker else None)
    out["rt_late"] = None if tick is None else (
        tick.late_unexplained if rule.discount_freezes and tick.late_unexplained is not None else tick.late)
    probes = (scen.ticker.freeze_probes if scen.ticker else None) or []
    # A probe that woke late inside a stall the watchdog recorded was held
    # off by the stalled kernel itself (scenario/main.c, freezes_in_stalls):
    # counted and shown, but on the virtual clock only the others say the
    # clock did not hold.
    out["guest_freezes"] = ({"count": sum(p.freezes for p in probes),
                             "in_stalls": sum(p.in_stalls or 0 for p in probes),
                             "total_ms": round(sum(p.total_ms for p in probes), 1),
                             "max_ms": round(max((p.max_ms for p in probes), default=0), 3),
                             "min_ms": probes[0].min_ms} if probes else None)
    out["why"] = why(res)
    if out["guest_freezes"]:
        # Those outside the stalls, each explained by the trace or not
        # (lab/ktrace/freezes.py), and those within the probe's resolution
        # of its limit (margins.py).
        spans = [(st.start_s, st.until_s) for st in stalls]
        out["guest_freezes"].update(margins.judge_freezes(scen, spans, (out["why"] or {}).get("freezes")))
    if rule.clock == "virtual" and clock_broke(out):
        f = out["guest_freezes"]
        out["problems"].append(
            f"the virtual clock did not hold: {len(f['unexplained'])} freeze probe wake-ups "
            f"{f['min_ms']} ms late or more outside the stalls that the trace does not account for: "
            + "; ".join(x["text"] for x in f["unexplained"][:3]))
    out["rt_late_borderline"] = margins.late_borderline(tick, rule.late_ms) if tick else None
    # The same datagrams timed from their send() instead of their slot in
    # the schedule: blind to the slots the ticker could not send while its
    # own send() was blocked (coordinated omission), shown for comparison.
    out["rt_late_uncorrected"] = tick.late_uncorrected if tick else None
    out["rt_samples"] = tick.echoes if tick else None
    out["rt_expected"] = (int(p["duration_s"] * 1e6 / p["ticker_us"])
                          if tick and p.get("ticker_us") else None)
    # The non-RT waker: the relay's timerfd, a softirq
    # (SCHED_OTHER on 6.12). 100 ms windows in which a tick was later than
    # the late limit.
    out["timer_late_windows"] = None
    ts_path = os.path.join(res, "relay.timeseries.csv")
    if os.path.exists(ts_path):
        rows = read_timeseries(ts_path)
        out["timer_late_windows"] = sum(1 for r in rows if (r.get("max_us") or 0) > rule.late_ms * 1000)
    relay_path = os.path.join(res, "relay.json")
    if os.path.exists(relay_path):
        relay = formats.read(formats.Relay, relay_path)
        out["relay_latency_us"] = formats.shown(needed(relay.tick_lateness_us, relay_path,
                                                       "tick_lateness_us"))
        for extra in ("rx_latency_us", "wake_latency_us"):
            if getattr(relay, extra) is not None:
                out["relay_" + extra] = formats.shown(getattr(relay, extra))
        out["relay_realtime"] = relay.sched.realtime if relay.sched else None
        if relay.sched and relay.sched.realtime is False:
            out["problems"].append(f"relay did not run real-time: {relay.sched.why or '?'}")
    else:
        out["problems"].append("no relay.json: relay wrote no statistics")
    lg_path = os.path.join(res, "loadgen.json")
    if os.path.exists(lg_path):
        lg = formats.read(formats.Loadgen, lg_path)
        # The sender is throttled by design and may fall behind its
        # schedule; its corrected latency would then measure its own
        # backlog. Send to reply is what it saw of the relay.
        lat = lg.latency_us or formats.Latencies()
        out["loadgen_latency_us"] = formats.shown(needed(lat.uncorrected, lg_path, "latency_us.uncorrected"))
        if lat.corrected:
            out["loadgen_corrected_latency_us"] = formats.shown(lat.corrected)
        if out["throttled_periods"] is None and lg.cgroup:
            out["throttled_periods"] = lg.cgroup.nr_throttled
            out["periods"] = lg.cgroup.nr_periods
        if lg.rate_ok is False:
            out["problems"].append(
                f"loadgen fell {lg.rate_shortfall_pct or 0:.0f} % below its rate: "
                "the quota is too tight for it")
    else:
        out["problems"].append("no loadgen.json: loadgen wrote no results")
    return out


def needed(value, path, name):
    """VALUE, a field the summary cannot go without; DataError naming PATH
    and NAME when the file had none."""
    if value is None:
        raise DataError(f"{path}: {name}: missing (expected a percentile object)")
    return value


def why(res):
    """What the kernel's trace explained (lab/ktrace's chains.json), in
    brief: the headline, the totals, what the trace lost, the priority
    inheritance figures and the worst stall's and the worst slow RT
    datagram's chains. None when the run was not traced."""
    path = os.path.join(res, "chains.json")
    if not os.path.exists(path):
        return None
    ch = formats.read(formats.Chains, path)
    try:
        stalls = [s for s in ch.stalls if isinstance(s.get("chain"), dict)]
        wait_ms = f"{path}: stalls[].chain.wait.ms"
        worst = max(stalls, key=lambda s: number(s["chain"]["wait"]["ms"], wait_ms, True) or 0, default=None)
        late_ms = f"{path}: late[].latency_ms"
        worst_late = max(ch.late, key=lambda r: number(r["latency_ms"], late_ms, True) or 0, default=None)
        non_rt = next((s["non_rt_waiter"] for s in ch.stalls if s.get("non_rt_waiter")),
                      ch.longest_non_rt_wait)
    except (KeyError, TypeError, AttributeError) as e:
        raise DataError(f"{path}: a stall or an RT datagram without its chain's fields ({e})")
    raw = formats.raw(ch)
    return {"line": ch.line, "totals": formats.raw(ch.totals), "trace": formats.raw(ch.trace),
            "contentions": formats.raw(ch.contentions), "worst_stall": worst, "worst_late": worst_late,
            "non_rt_waiter": non_rt, "longest_rt_wait": ch.longest_rt_wait,
            "softirq_held": ch.softirq_held, "freezes": _freezes(ch.freezes, path),
            # The quota period's timer, the throttle model and what the
            # cgroup and its tasks were throttled (null in a chains.json
            # from before they were traced).
            "quota_timer": raw.get("quota_timer"), "throttling": raw.get("throttling"),
            "timer_tick": raw.get("timer_tick"),
            "throttle_model": raw.get("throttle_model"), "ready_list_lock": raw.get("ready_list_lock"),
            "chains": os.path.relpath(path, os.path.dirname(os.path.dirname(res)))}


def _freezes(fr, path):
    """chains.json's freezes (formats.ChainFreezes), as the summary carries
    them: the counts and, for each freeze, its CPU, time, cause and words.
    None when the trace's analysis did not look at them (a chains.json
    from before)."""
    if fr is None:
        return None
    keep = ("cpu", "due_s", "late_ms", "in_stall", "cause", "unexplained", "text")
    for i, r in enumerate(fr.rows):
        number(r.get("due_s"), f"{path}: freezes.rows[{i}].due_s")
    return {"limit_ms": fr.limit_ms, "counted": fr.counted, "explained": fr.explained,
            "unexplained": fr.unexplained, "in_stalls": fr.in_stalls, "by_cause": fr.by_cause,
            "rows": [{k: r[k] for k in keep if k in r} for r in fr.rows]}


def _rt_key(k):
    """The RT side's latency: the RT ticker's datagrams when it ran, else the
    relay's timer tick lateness (which also carries the non-RT waker)."""
    return "rt_latency_us" if k.get("rt_ticker") else "relay_latency_us"


def _max_ms(k):
    lat = k.get(_rt_key(k))
    return None if lat is None else lat["max"] / 1000.0


def shows_effect(k, other, rule):
    """Did this kernel's RT relay get stuck behind the throttled sender?"""
    if k["outcome"] == "hung":
        return True
    if k.get("stalls"):
        return True
    if (k.get("rt_late") or 0) >= EFFECT_MIN_LATE:
        return True
    mine, theirs = _max_ms(k), _max_ms(other) if other else None
    if mine is None or mine <= rule.late_ms:
        return False
    return theirs is None or theirs <= 0 or mine >= EFFECT_RATIO * theirs


def is_clean(k, rule):
    """The fix's promise: the RT relay is never stuck (no watchdog stall) and
    the RT ticker's datagrams are not held up (beyond the host clock's
    noise allowance).
    Without a ticker only stalls are judged (the relay's tick also carries
    the non-RT timerfd path, which the fix does not cover)."""
    if k["outcome"] != "ok" or k.get("stalls") != 0:
        return False
    if not k.get("rt_ticker"):
        return True
    if not k.get("rt_expected") or (k.get("rt_samples") or 0) < MIN_RT_SHARE * k["rt_expected"]:
        return False
    return late_counted(k, rule) <= rule.allowance


def late_counted(k, rule):
    """The late RT datagrams the rule counts: on the virtual clock, not
    those late by no more than the latency's resolution (borderline)."""
    borderline = (k.get("rt_late_borderline") or 0) if rule.clock == "virtual" else 0
    return (k.get("rt_late") or 0) - borderline


def _pct_ms(k, p):
    lat = k.get(_rt_key(k))
    return None if lat is None else lat[p] / 1000.0


def _fmt_ms(v):
    return f"{v:.0f} ms" if v >= 10 else f"{v:.2f} ms" if v >= 0.1 else f"{v * 1000:.0f} us"


def verdict(stock, patched, rule):
    """(verdict word, one-line headline, ratio of the RT p99s)."""
    for name, k in (("stock", stock), ("patched", patched)):
        if k.get("hung_after_scenario"):
            return ("incomplete", f"the {name} guest finished its scenario but its results "
                    "never came back (see its console.log): no comparison", None)
        if k["outcome"] in ("failed", "no-results"):
            why = (k.get("problems") or ["see its console.log"])[0]
            return "incomplete", f"the {name} kernel's run {k['outcome']} ({why}): no comparison", None
        if k.get("relay_realtime") is False:
            return "incomplete", f"relay did not run real-time on the {name} kernel: no comparison", None
    ratio = None
    if _pct_ms(stock, "p99") and _pct_ms(patched, "p99"):
        ratio = _pct_ms(stock, "p99") / _pct_ms(patched, "p99")

    def told(name, k):
        if k["outcome"] == "hung":
            return f"{name} kernel hung (no results within {k.get('timeout_s')} s)"
        late = ""
        if k.get("rt_ticker"):
            late = (f", {k.get('rt_late')} of {k.get('rt_samples')} RT datagrams "
                    f"over {rule.late_ms:g} ms")
        if k["stalls"]:
            return (f"{name} kernel stalled {k['stalls']} times "
                    f"(worst {k['worst_stall_ms']:.0f} ms){late}")
        if late:
            return f"{name} kernel never stalled{late}"
        return f"{name} kernel never stalled (max {_max_ms(k):.1f} ms)"

    line = f"{told('stock', stock)}; {told('patched', patched)}"
    if stock.get("rt_ticker") and _max_ms(stock) is not None and _max_ms(patched):
        # The headline ratios: at p99.9 and at the max, stock over patched.
        parts = []
        for p, name in (("p99_9", "p99.9"), ("max", "max")):
            a, b = _pct_ms(stock, p), _pct_ms(patched, p)
            parts.append(f"{name} {_fmt_ms(a)} stock, {_fmt_ms(b)} patched ({a / b:.0f}x)")
        line += "; RT datagrams " + ", ".join(parts)
    elif ratio:
        line += f"; relay p99 latency {ratio:.0f}x lower with the fix"
    effect, clean = shows_effect(stock, patched, rule), is_clean(patched, rule)
    if effect and clean:
        word = "fixed"
        if _max_ms(patched) > rule.late_ms:
            line += (f" (the patched max, {_max_ms(patched):.0f} ms, is above the "
                     f"{rule.late_ms:g} ms emulation-noise limit, within the allowance of "
                     f"{rule.allowance} such datagrams: see the caveats)")
    elif not clean and patched.get("rt_ticker") and patched.get("stalls") == 0 and \
            patched["outcome"] == "ok" and (patched.get("rt_samples") or 0) < \
            MIN_RT_SHARE * (patched.get("rt_expected") or 1):
        word = "incomplete"
        line += (f" (the RT ticker measured only {patched.get('rt_samples')} of "
                 f"~{patched.get('rt_expected')} datagrams on the patched kernel)")
    elif not clean:
        word = "not fixed"
        if stock.get("stalls") and 0 < (patched.get("stalls") or 0) < stock["stalls"]:
            line += (" (fewer stalls than stock, but not none: see the caveat on the "
                     "patched 6.12 timerfd path)")
    else:
        word = "no effect"
        line += " (the stock kernel did not show the effect: nothing was demonstrated)"
    return word, line, ratio


def clock_broke(k):
    """Whether a kernel's freeze probes woke late outside every stall where
    the trace cannot say why (on the virtual clock: the clock did not
    hold). Freezes the trace explains (the vCPU did not execute, the CPU
    stayed idle with the probe woken, a task held it) are the emulated
    machine's or the guest's own, and a freeze within the probe's
    resolution of its limit is borderline: neither breaks it. A scenario
    that did not list its freezes leaves only the count to judge."""
    f = k.get("guest_freezes") or {}
    if f.get("complete") is False or "unexplained" not in f:
        return (f.get("count") or 0) > (f.get("in_stalls") or 0)
    return bool(f["unexplained"])


def notes(kernels, rule):
    """What the headline adds about the clock and the limits: freezes
    outside the stalls that the trace explained (counted apart), and the
    inputs within their resolution of a limit (borderline), in words."""
    explained, borderline = [], []
    for name, k in kernels.items():
        f = k.get("guest_freezes") or {}
        if f.get("explained"):
            n = len(f["explained"])
            explained.append(f"the {name} freeze probes woke late {n} time{'s' if n != 1 else ''} "
                             f"outside the stalls, each explained by the trace ({f['explained'][0]['text']}"
                             + (", ..." if n > 1 else "") + ")")
        for x in f.get("borderline") or []:
            borderline.append(f"the {name} freeze probe's {x['late_ms']:.3f} ms wake-up on CPU {x['cpu']} at "
                              f"{x['due_s']:.3f} s lies within its {margins.FREEZE_RESOLUTION_MS:g} ms "
                              f"resolution of the {f.get('min_ms')} ms limit: not taken as the clock failing")
        if rule.clock == "virtual" and k.get("rt_late_borderline"):
            res_us = margins.bucket_ms(rule.late_ms) * 1000
            borderline.append(f"{k['rt_late_borderline']} {name} RT datagrams took over {rule.late_ms:g} ms "
                              f"by no more than its {res_us:g} us resolution: not counted late")
    return explained, borderline


def rule_json(rule):
    """The verdict rule, as data: summary.json carries it next to the verdict."""
    late = f"{rule.late_ms:g} ms"
    if rule.clock == "virtual":
        how = ("on the virtual clock (guest time is instruction count): every RT datagram over "
               f"{late} counts (but one within {margins.bucket_ms(rule.late_ms) * 1000:g} us of it, the "
               "latency's resolution, which is borderline), and every late wake-up of the freeze "
               "probes outside the stalls must be explained by the kernel's trace (or lie within "
               f"the probe's {margins.FREEZE_RESOLUTION_MS:g} ms resolution of its limit)")
    else:
        how = ("on the host clock: RT datagrams are counted late when over the limit even "
               "after the time the guest or a vCPU was seen frozen is taken out")
    return {"clock": rule.clock, "late_ms": rule.late_ms, "effect_ratio": EFFECT_RATIO,
            "effect_min_late": EFFECT_MIN_LATE,
            "patched_late_allowance": rule.allowance,
            "min_rt_share": MIN_RT_SHARE,
            "text": (f"{how}; fixed = stock shows the effect (it hung, or stalled, or at least "
                     f"{EFFECT_MIN_LATE} RT datagrams took over {late}, or its RT max "
                     f"is over {late} and {EFFECT_RATIO:.0f}x the patched one's) and "
                     f"the patched kernel none (no stall, "
                     + (f"at most {rule.allowance} RT datagrams" if rule.allowance else
                        "no RT datagram")
                     + f" over {late}, at least {MIN_RT_SHARE:.0%} of them measured)")}


def caveat(kernels, rule):
    """The non-RT waker (the relay's timerfd, a softirq), measured: the
    fix does not cover it on 6.12."""
    out = {"what": ("100 ms windows in which the relay's timerfd tick (a softirq, which "
                    "waits while a throttled task holds the CPU's softirq lock) was over "
                    f"{rule.late_ms:g} ms late")}
    for name, k in kernels.items():
        out[name] = k.get("timer_late_windows")
    return out


def _same(values):
    known = [v for v in values if v is not None]
    return len(known) == len(values) and all(v == known[0] for v in known)


def run_params(spec, where):
    """The parameters of a demo run, from its spec (a formats.Spec): the
    scenario's and the clock."""
    if spec.scenario is None or spec.clock not in ("virtual", "host"):
        raise DataError(f"{where}: not a demo's run spec (clock, scenario)")
    return dict(spec.scenario, clock=spec.clock)


def build(run_dir):
    """The summary dict of RUN_DIR, from its spec.json, the driver's
    run.json and each kernel's directory."""
    spec_path = os.path.join(run_dir, "spec.json")
    spec = formats.read(formats.Spec, spec_path)
    run_info = formats.read(formats.RunRecord, os.path.join(run_dir, "run.json"))
    params = run_params(spec, spec_path)
    rule = Rule.of(params)
    kernels = {}
    for name in KERNEL_ORDER:
        kdir = os.path.join(run_dir, name)
        if os.path.isdir(kdir):
            kernels[name] = kernel_summary(kdir, rule)
    if not kernels:
        raise DataError(f"{run_dir}: no stock, patched or host results")
    summary = {"kind": "vm-demo" if "host" not in kernels else "host",
               "clock": rule.clock if "host" not in kernels else None,
               "run_id": run_info.run_id,
               "date": run_info.date,
               "params": params,
               "spec": formats.raw(spec),
               "initramfs_sha256": run_info.initramfs_sha256,
               "kernels": run_info.kernels if run_info.kernels is not None else {},
               "phases": formats.raw(run_info)["phases"],
               **kernels}
    ran = list(kernels.values())
    summary["honesty"] = {
        "same_initramfs": _same([k["initramfs_sha256"] for k in ran]),
        "same_params": _same([k["params"] for k in ran if k["outcome"] == "ok"]),
    }
    if "stock" in kernels and "patched" in kernels:
        word, line, ratio = verdict(kernels["stock"], kernels["patched"], rule)
        if not all(summary["honesty"].values()):
            word, line = "invalid", "the two runs did not use the same initramfs and parameters: " + line
        frozen = [n for n, k in kernels.items() if rule.clock == "virtual" and clock_broke(k)]
        if frozen:
            what = "; ".join(x["text"] for n in frozen for x in kernels[n]["guest_freezes"].get("unexplained")
                             or [])
            word, line = "invalid", (f"the virtual clock did not hold on the {' and '.join(frozen)} "
                                     "kernel (the freeze probes saw late wake-ups outside the stalls "
                                     "that the trace does not account for" + (f": {what}" if what else "")
                                     + "): " + line)
        explained, borderline = notes(kernels, rule) if rule.clock == "virtual" else ([], [])
        if explained:
            line += "; " + "; ".join(explained)
        if borderline:
            line += "; borderline: " + "; ".join(borderline)
        summary.update(verdict=word, headline=line, ratio=ratio, rule=rule_json(rule),
                       non_rt_waker=caveat(kernels, rule), borderline=borderline,
                       margins=margins.rows(kernels["stock"], kernels["patched"], rule, EFFECT_RATIO))
    else:
        only = next(iter(kernels))
        summary.update(verdict="single run",
                       headline=f"one run on the {only} kernel, nothing to compare",
                       ratio=None)
    cost = os.path.join(run_dir, "cost.json")
    summary["cost"] = formats.raw(formats.read(formats.Cost, cost)) if os.path.exists(cost) else None
    return summary
