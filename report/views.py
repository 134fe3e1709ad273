"""One shape for every kind of result directory: the VM demo (stock vs
patched), a run on this host, and the userspace model (one column per lock
variant). The table, the plots and the page only read a View."""
import glob
import json
import os
from dataclasses import dataclass, field

from .files import DataError, read_json
from .summary import HOST_CLOCK_LATE_MS, KERNEL_ORDER, PCT_KEYS
from .testhost import FIX as FIX_WHAT, preflight, preflight_release

# How loadgen's and the ticker's sends wake the relay (the scenario's
# af_unix): where a sender throttled inside ep_poll_callback() is, and so
# what else may boost it out (lab/demo/README.md, "The kernel pairs").
WAKERS = {
    False: "UDP on 127.0.0.1: loadgen's sends wake relay from the loopback receive softirq, "
           "run in the sender's context under its CPU's softirq lock",
    True: "AF_UNIX datagrams: loadgen's sends wake relay from their own context, outside "
          "any softirq (the RT ticker stays on UDP)",
}
PCT_LABELS = {"p50": "p50", "p99": "p99", "p99_9": "p99.9", "p99_99": "p99.99", "max": "max"}
MODEL_VARIANTS = (("rwlock", "rwlock (stock)"),
                  ("pi_mutex", "PI mutex (patched)"),
                  ("mutex", "plain mutex"))


@dataclass
class Column:
    key: str
    label: str
    data: dict
    hgrm: dict = field(default_factory=dict)   # distribution name -> path
    timeseries: str = None
    events: str = None


@dataclass
class View:
    kind: str
    title: str
    columns: list
    sections: list            # [(title, [(row label, [cell per column])])]
    verdict: str
    headline: str
    facts: list               # [(label, text)]
    caveats: list
    distributions: list       # [(name, title)] for the percentile plots
    signal_ms: float = None   # late limit drawn on the plots
    clock: str = None         # the guests' clock: virtual | host (None: no guests)
    cost: dict = None
    why: list = None          # [(kernel, what its trace explained, or None)]


def ms(us):
    """Microseconds as a short millisecond figure."""
    if us is None:
        return "-"
    v = us / 1000.0
    for limit, digits in ((1, 3), (10, 2), (100, 1)):
        if v < limit:
            return f"{v:.{digits}f}"
    return f"{v:.0f}"


def _count(v):
    return "-" if v is None else str(v)


def _pct_rows(columns, key):
    rows = []
    for p in PCT_KEYS:
        cells = []
        for c in columns:
            obj = c.data.get(key)
            cells.append(ms(obj[p]) if obj else c.data.get("outcome", "-"))
        rows.append((PCT_LABELS[p], cells))
    return rows


def _first(pattern):
    hits = sorted(glob.glob(pattern))
    return hits[0] if hits else None


def _kernel_column(run_dir, key, data):
    res = os.path.join(run_dir, key, "results")
    hgrm = {}
    relay = _first(os.path.join(res, "relay*tick*.hgrm"))
    loadgen = _first(os.path.join(res, "loadgen.uncorrected.hgrm"))
    ticker = _first(os.path.join(res, "ticker.hgrm"))
    if ticker:
        hgrm["rt"] = ticker
    if relay:
        hgrm["relay"] = relay
    if loadgen:
        hgrm["loadgen"] = loadgen
    label = key + (f" ({data['kernel']})" if data.get("kernel") else "")
    return Column(key, label, data, hgrm,
                  _first(os.path.join(res, "relay*.timeseries.csv")),
                  _first(os.path.join(res, "events.csv")))


def _stall_cells(c):
    d = c.data
    if d.get("stalls") is None:
        return d.get("outcome", "-")
    return str(d["stalls"])


def _lift_cells(c):
    after = c.data.get("cleared_after_lift_ms")
    if not after:
        return "-"
    text = f"{min(after):.0f}-{max(after):.0f}"
    if c.data.get("uncleared_stalls"):
        text += f" ({c.data['uncleared_stalls']} not)"
    return text


def _freeze_cell(c):
    f = c.data.get("guest_freezes")
    if not f:
        return "-"
    notes = [f"{f['in_stalls']} in stalls"] if f.get("in_stalls") else []
    for key, word in (("explained", "explained by the trace"), ("borderline", "borderline"),
                      ("unexplained", "unexplained")):
        if f.get(key):
            notes.append(f"{len(f[key])} {word}")
    return f"{f['count']}, {f['total_ms']:.0f}" + (f" ({', '.join(notes)})" if notes else "")


def _throttle_cells(c):
    d = c.data
    if d.get("throttled_periods") is None:
        return "-"
    if d.get("periods"):
        return f"{d['throttled_periods']}/{d['periods']}"
    return str(d["throttled_periods"])


def demo_view(run_dir, s):
    cols = [_kernel_column(run_dir, k, s[k]) for k in KERNEL_ORDER if k in s]
    rt = any(c.data.get("rt_ticker") for c in cols)
    rule = s.get("rule") or {}
    late = rule.get("late_ms", rule.get("signal_ms", HOST_CLOCK_LATE_MS))
    clock = None if s.get("kind") == "host" else s.get("clock") or rule.get("clock", "host")
    virtual = clock == "virtual"
    sections = []
    if rt:
        sections.append(("RT ticker datagram, due time to echo, ms (the RT waker the fix protects)",
                         _pct_rows(cols, "rt_latency_us")))
    sections += [
        ("relay timer tick lateness, ms (non-RT waker: a softirq)" if rt else
         "relay tick lateness, ms (the RT side)", _pct_rows(cols, "relay_latency_us")),
        ("loadgen send to reply, ms (the throttled side)", _pct_rows(cols, "loadgen_latency_us")),
        ("stalls and throttling", [
            ("watchdog stalls", [_stall_cells(c) for c in cols]),
            *([(f"RT datagrams over {late:g} ms", [
                "-" if c.data.get("rt_late") is None else
                f"{c.data['rt_late']} of {c.data.get('rt_samples')}" for c in cols]),
               ("... timed from send(), blind to missed slots", [
                _count(c.data.get("rt_late_uncorrected")) for c in cols])] +
              ([] if virtual else [("... more during guest freezes", [
                   _count(c.data.get("rt_late_in_guest_freeze")) for c in cols])]) +
              [("guest freezes >= 5 ms (count, total ms)", [_freeze_cell(c) for c in cols])]
              if rt else []),
            (f"timer ticks over {late:g} ms late (100 ms windows)", [
                _count(c.data.get("timer_late_windows")) for c in cols]),
            ("worst stall, ms", [
                "-" if c.data.get("worst_stall_ms") is None else f"{c.data['worst_stall_ms']:.0f}"
                for c in cols]),
            ("ended after lift, ms", [_lift_cells(c) for c in cols]),
            ("throttled periods", [_throttle_cells(c) for c in cols]),
        ]),
    ]
    p = s.get("params") or {}
    facts = [("run", f"{s.get('run_id', '?')} ({s.get('date', '?')})")]
    built = s.get("kernels") or {}
    for c in cols:
        facts.append((f"{c.key} kernel", c.data.get("kernel") or built.get(c.key) or "?"))
        if built.get(c.key):
            facts.append((f"{c.key} image", built[c.key]))
        facts.append((f"{c.key} outcome", f"{c.data.get('outcome')}, {c.data.get('wall_s', '?')} s wall"))
        facts.append((f"{c.key} problems", "; ".join(c.data.get("problems") or []) or "none"))
        if c.data.get("metrics"):
            facts.append((f"{c.key}: relay's /metrics", ", ".join(
                f"{w} the scenario: {path}" for w, path in c.data["metrics"].items())))
    if clock:
        facts.append(("guest clock", "virtual: guest time is the instruction count "
                      "(QEMU -icount, one instruction per ns); the host cannot make the guest "
                      "late" if virtual else
                      "host: guest time is host time; host hiccups become guest latency"))
    facts.append(("initramfs sha256", s.get("initramfs_sha256") or "?"))
    if "af_unix" in p:
        facts.append(("how loadgen wakes relay", WAKERS[bool(p["af_unix"])]))
    if p:
        facts.append(("parameters", ", ".join(f"{k}={v}" for k, v in p.items())))
    if s.get("phases"):
        facts.append(("time per phase", ", ".join(
            f"{ph['name'].split(':')[0]} {ph['seconds']} s" for ph in s["phases"])))
    honesty = s.get("honesty", {})
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
    rule = (s.get("rule") or {}).get("text")
    if rule:
        caveats.insert(0, "Verdict rule: " + rule + ".")
    if s.get("kind") == "host":
        title = "relay on this host: one run"
        caveats = [c for c in caveats if c.startswith(("A stall is", "loadgen is"))]
    elif virtual:
        title = "PREEMPT_RT epoll ready-list fix: stock vs patched kernel (virtual clock)"
    else:
        title = "PREEMPT_RT epoll ready-list fix: stock vs patched kernel"
    return View(s.get("kind", "vm-demo"), title, cols, sections,
                s.get("verdict", "?"), s.get("headline", ""), facts, caveats,
                [("rt", "RT ticker datagram latency"), ("relay", "relay timer tick lateness"),
                 ("loadgen", "loadgen send to reply")],
                signal_ms=late if s.get("kind") != "host" else None, clock=clock,
                cost=s.get("cost"),
                why=[(c.key, c.data.get("why")) for c in cols] if any(c.data.get("why") for c in cols)
                else None)


def _caveat_counts(s):
    c = s.get("non_rt_waker") or {}
    parts = [f"{k} {c[k]}" for k in KERNEL_ORDER if c.get(k) is not None]
    return ", ".join(parts)


def model_view(run_dir, s):
    cols = []
    for key, label in MODEL_VARIANTS:
        if key not in s:
            continue
        hgrm = os.path.join(run_dir, f"{key}.hgrm")
        ts = os.path.join(run_dir, f"{key}.timeseries.csv")
        cols.append(Column(key, label, s[key],
                           {"wait": hgrm} if os.path.exists(hgrm) else {},
                           ts if os.path.exists(ts) else None))
    sections = [
        ("consumer wait for the lock, ms", _pct_rows(cols, "wait_us")),
        ("waits", [("waits", [_count(c.data.get("waits")) for c in cols]),
                   ("waits over 50 ms", [_count(c.data.get("waits_over_50ms")) for c in cols])]),
    ]
    p = s.get("params") or {}
    facts = [("parameters", ", ".join(f"{k}={v}" for k, v in p.items()) or "?")]
    caveats = ["The model reproduces the locking protocol in user space on the running "
               "kernel: it shows why a reader-side rwlock without priority inheritance "
               "stalls an RT writer, not that a particular kernel does."]
    # The model's own verdict is a sentence; the badge says what it found,
    # by the model's limits (a stall is a wait over 50 ms; a PI lock should
    # never wait 20 ms).
    rw, pi = s.get("rwlock"), s.get("pi_mutex")
    if rw and pi:
        separated = rw.get("waits_over_50ms", 0) > 0 and pi.get("waits_over_20ms", 0) == 0
        word = "separated" if separated else "no separation"
    else:
        word = "incomplete"
    return View("model", "Userspace model of the epoll ready-list locking", cols, sections,
                word, str(s.get("verdict", "")), facts, caveats,
                [("wait", "consumer lock wait")])


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


def fleet_view(run_dir, merged):
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
        ("loadgen latency, corrected for the schedule, ms", _pct_rows(cols, "corrected")
         + [("samples", [_count((c.data.get("corrected") or {}).get("count"))
                         for c in cols])]),
        ("loadgen latency, send to reply, ms", _pct_rows(cols, "uncorrected")),
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
                [("loadgen", "loadgen corrected latency")])


def _late_cell(d):
    if d.get("outcome") != "ok":
        return "-"
    least, most = d.get("late_at_least", d["late"]), d["late"]
    return str(most) if least == most else f"{least}-{most}"


def _cpu_max_cell(d):
    if d.get("outcome") != "ok":
        return "-"
    # slice_quota_pct: a summary written before the quota had the lab's name
    q = d.get("cpu_quota_pct", d.get("slice_quota_pct"))
    return d["slice_cpu_max"] + ("" if q is None else f" ({q:.3g}%)")


def _of(d, part, whole):
    if d.get(part) is None:
        return "-"
    return f"{d[part]}/{d[whole]}" if d.get(whole) is not None else str(d[part])


def _sched_cell(d):
    if d.get("outcome") != "ok" or not d.get("rt_threads"):
        return "-"
    if d.get("rt_policy"):
        return f"{d['rt_policy']} {d['rt_priority']} ({len(d['rt_threads'])} threads)"
    return ", ".join(f"{t['comm']}/{t['tid']} {t['policy']} {t['priority']}" for t in d["rt_threads"])


def _chains_cell(d):
    c = d.get("late_chains")
    if d.get("outcome") != "ok" or c is None:
        return "-" if d.get("outcome") != "ok" else "not traced"
    if not c["late"]:
        return "none late"
    text = f"{c['by_chain']} of {c['late']}"
    if c["unexplained"]:
        first = c["unexplained"][0]
        text += f"; unexplained: {first['latency_ms']} ms at {first['due_s']} s ({first['why']})"
    return text


def testhost_view(run_dir, s):
    """The scenario on systemd test hosts (lab/hostab/run): one column
    per kernel package, each with what relay-preflight said of the fix, the
    RT client's latency through relay, what the trace says of its late
    datagrams, and the co-tenant's throttling."""
    kernels = s.get("kernels")
    if not isinstance(kernels, dict):
        raise DataError(f"{run_dir}/summary.json: no kernels object")
    late = float(s.get("late_ms", 5))
    cols = []
    for k in ("stock", "patched"):
        d = kernels.get(k) or {"outcome": "no-results",
                               "problems": [f"summary.json has no {k} kernel"]}
        ok = d.get("outcome") == "ok"
        cols.append(Column(k, k + (f" ({d['kernel']})" if d.get("kernel") else ""), d,
                           {"rt": os.path.join(run_dir, k, "scenario", "rt-client.hgrm")}
                           if ok else {}))
    fix = [(c, c.data.get("preflight") or {}) for c in cols]
    sections = [
        ("kernel package", [
            ("release", [c.data.get("kernel") or "-" for c in cols]),
            ("relay-preflight: the fix", [f"{p['level']}: {p['text'].split(';')[0]}" if p else "-"
                                          for c, p in fix])]),
        ("RT client through relay, ms (slot to echo)",
         _pct_rows(cols, "latency_us") + [
             (f"datagrams {late:g} ms late or more", [_late_cell(c.data) for c in cols]),
             ("... explained by a chain (the kernel's trace)", [_chains_cell(c.data) for c in cols]),
             ("measured / sent on schedule", [
                 _of({"n": (c.data.get("latency_us") or {}).get("count"),
                      "of": c.data.get("rt_expected")}, "n", "of") for c in cols]),
             ("lost", [_count(c.data.get("rt_lost")) for c in cols]),
             ("scheduled as (the kernel's, while it ran)", [_sched_cell(c.data) for c in cols])]),
        ("relay's own wake-ups, ms (a datagram's arrival to relay reading it)", [
            (name, ["-" if not c.data.get("relay_wake_us") else
                    f"{c.data['relay_wake_us'][key] / 1000:.2f}" for c in cols])
            for name, key in (("p99.9", "p99_9"), ("max", "max"))] + [
            ("datagrams read", [_count((c.data.get("relay_wake_us") or {}).get("count"))
                                for c in cols])]),
        ("co-tenant in loadgen.slice", [
            ("slice cpu.max (quota period, us)", [_cpu_max_cell(c.data) for c in cols]),
            ("stalls the watchdog ended", ["-" if c.data.get("stalls") is None else str(c.data["stalls"])
                                           for c in cols]),
            ("throttled periods, whole run", [
                _of(c.data, "cotenant_nr_throttled", "cotenant_nr_periods") for c in cols]),
            ("... while the RT client ran", [
                _of(c.data, "throttled_during_rt", "periods_during_rt") for c in cols]),
            ("co-tenant rate achieved, pps", [
                "-" if c.data.get("cotenant_rate_pps") is None else
                f"{c.data['cotenant_rate_pps']:.0f}" for c in cols])]),
    ]
    params = s.get("params") or {}
    facts = [("run", s.get("run_id", "?"))]
    for c, p in fix:
        facts.append((f"{c.key} kernel", c.data.get("kernel") or "no results"))
        if p:
            facts.append((f"{c.key}: relay-preflight", f"{p['level']}  {FIX_WHAT}: {p['text']}"))
        facts.append((f"{c.key} problems", "; ".join(c.data.get("problems") or []) or "none"))
    if params:
        facts.append(("parameters", ", ".join(f"{k}={v}" for k, v in params.items())))
    facts.append(("verdict rule", s.get("rule", "?")))
    caveats = [f"The {c.key} kernel's data is missing: {c.data['problems'][0]}. Its column "
               "shows nothing because nothing was measured, not because nothing happened."
               for c in cols if c.data.get("outcome") != "ok"]
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
    verdict = s.get("verdict") or {}
    whys = [(c.key, c.data.get("why")) for c in cols]
    return View("testhost", "relay on a systemd test host: stock vs patched PREEMPT_RT kernel",
                cols, sections, verdict.get("word", "?"), s.get("headline", ""), facts, caveats,
                [("rt", "RT client latency through relay")], signal_ms=late, clock=clock,
                why=whys if any(w for _, w in whys) else None)


def load(run_dir):
    """The view of a result directory, with its run spec (spec.json, the
    parameters the driver resolved) among the facts."""
    view = _load(run_dir)
    path = os.path.join(run_dir, "spec.json")
    if os.path.exists(path):
        spec = read_json(path)
        view.facts.append(("run spec (spec.json)",
                           json.dumps(spec, sort_keys=True, separators=(", ", ": "))))
    return view


def _load(run_dir):
    merged = os.path.join(run_dir, "merged.json")
    if not os.path.exists(os.path.join(run_dir, "summary.json")) and os.path.exists(merged):
        m = read_json(merged)
        if not isinstance(m, dict):
            raise DataError(f"{merged}: expected an object")
        return fleet_view(run_dir, m)
    s = read_json(os.path.join(run_dir, "summary.json"))
    if not isinstance(s, dict):
        raise DataError(f"{run_dir}/summary.json: expected an object")
    if s.get("kind") == "testhost":
        return testhost_view(run_dir, s)
    if any(k in s for k in KERNEL_ORDER):
        return demo_view(run_dir, s)
    if any(k in s for k, _ in MODEL_VARIANTS):
        return model_view(run_dir, s)
    raise DataError(f"{run_dir}/summary.json: neither a demo (stock/patched/host) "
                    "nor a model (rwlock/pi_mutex/mutex) summary")
