"""judge: the host A/B's verdict rule, and the summary.json of the
scenario on systemd test hosts (lab/hostab/run; report/summarize
--testhost).

A run directory holds spec.json (the run spec: its scenario object has
every parameter, late_ms the limit the verdict judges by, trace whether
the guests recorded the kernel's trace), and stock/ and patched/, each
what its guest left: kernel.txt (uname -a), preflight.txt
(relay-preflight), results.txt and scenario/ with the RT client's
rt-client.json and rt-client.hgrm (loadgen --json --hgrm --watch-cgroup
--list-over-us), the co-tenant's cotenant.json and loadgen.slice's
cpu.stat and cpu.max, and, from runs of the demo's scenario under
systemd: relay's own stats file (relay-stats.json), the RT client's
threads as the kernel scheduled them (rt-client.sched.json), the watch's
scenario.json (demo-scenario --watch: the stalls), relay's /metrics
before and after (relay-metrics-before.txt, relay-metrics.txt) and
chains.json, what lab/ktrace/explain made of the trace. A kernel whose
guest left no rt-client.json is reported as having no results; once it
is there, every other file of the first list must be too; those of the
second are read where they are (older runs have none).

The verdict is the RT client's: on stock some of its datagrams late_ms
late or more, on patched none, and with the trace each late one
explained by a chain (the wait on a ready-list lock that covers it).
"""
import os

from report import formats
from report.files import DataError, hgrm_counts, number
from report.formats import cpu_max, cpu_stat, preflight, release, text_lines

from ..demo.judge import MIN_RT_SHARE, why
from .units import METRICS_FILES

KERNELS = ("stock", "patched")


def late(path, limit_ms, count):
    """RT datagrams at least limit_ms late, from the percentile rows: a row
    says how many samples lay at or below its value, so the rows on either
    side of the limit bound the count: (at least, at most). count is the
    JSON's, which the file must agree with."""
    rows = hgrm_counts(path)
    total = rows[-1][1]
    if total != count:
        raise DataError(f"{path}: {total} samples, but rt-client.json counts {count}")
    below = max((n for v, n in rows if v < limit_ms), default=0)
    upto = min((n for v, n in rows if v >= limit_ms), default=total)
    most = total - below
    return (max(total - upto, 1 if most else 0), most)


def listed_late(rt, path, late_ms):
    """The RT datagrams at least late_ms late, counted one by one from the
    run's own list (loadgen --list-over-us at or under the limit, the list
    complete); None when it has none to count by."""
    lst = rt.listed
    if lst is None or not lst.complete or lst.over_us > late_ms * 1000:
        return None
    return sum(1 for d in lst.datagrams if d.reply_mono_s - d.intended_mono_s >= late_ms / 1000)


def relay_wake(path):
    """relay's own wake-up latency (a datagram's arrival to relay reading
    it, every datagram it read), from its stats file; None when absent."""
    if not os.path.exists(path):
        return None
    wake = formats.read(formats.Relay, path).wake_latency_us
    if wake is None:
        raise DataError(f"{path}: wake_latency_us: missing (expected a percentile object)")
    return formats.shown(wake)


def rt_sched(path):
    """The RT client's threads as the kernel had them scheduled while it
    ran (rt-client.sched.json, read from /proc in the guest): the policy
    and priority they share (None when they differ or the file is
    absent), and each thread's."""
    if not os.path.exists(path):
        return {"policy": None, "priority": None, "threads": None}
    sched = formats.read(formats.RtSched, path)
    if not sched.threads:
        raise DataError(f"{path}: threads: empty (expected the RT client's threads)")
    same = {(t.policy, t.priority) for t in sched.threads}
    policy, prio = next(iter(same)) if len(same) == 1 else (None, None)
    return {"policy": policy, "priority": prio, "threads": formats.raw(sched)["threads"]}


def late_chains(path, late_ms):
    """Of the RT datagrams lab/ktrace/explain found listed (chains.json's
    late rows), those late_ms late or more: how many, how many a chain
    (a wait on a ready-list lock) explains, and the first few that none
    does. None when the run was not traced."""
    if not os.path.exists(path):
        return None
    ch = formats.read(formats.Chains, path)
    late = [r for r in ch.late if number(r.get("latency_ms"), f"{path}: late[].latency_ms") >= late_ms]
    bare = [r for r in late if not isinstance(r.get("chain"), dict)]
    return {"late": len(late), "by_chain": len(late) - len(bare),
            "complete": formats.raw(ch).get("late_list_complete"),
            "unexplained": [{"due_s": r.get("due_s"), "latency_ms": r["latency_ms"],
                             "why": r.get("unexplained") or "its time went elsewhere: "
                             + str(((r.get("path") or {}).get("dominant") or {}).get("step"))}
                            for r in bare[:5]]}


def stalls(path):
    """The stalls the watch (demo-scenario --watch) recorded; None when absent."""
    if not os.path.exists(path):
        return None
    return len(formats.read(formats.Scenario, path).stalls)


def _no_results(kdir, k):
    results = os.path.join(kdir, "results.txt")
    why = f"no {k}/scenario/rt-client.json: the {k} test host did not finish the scenario"
    if os.path.exists(results):
        fails = [line for line in text_lines(results) if line.startswith("FAIL")]
        why += f" ({fails[0]})" if fails else " (results.txt names no failed check)"
    else:
        why += " (no results.txt: it never ran its checks; see console.log)"
    return {"outcome": "no-results", "problems": [why]}


def kernel_summary(run_dir, k, late_ms):
    """One kernel's object in summary.json."""
    kdir = os.path.join(run_dir, k)
    scen = os.path.join(kdir, "scenario")
    rt_path = os.path.join(scen, "rt-client.json")
    if not os.path.exists(rt_path):
        return _no_results(kdir, k)
    rt = formats.read(formats.Loadgen, rt_path)
    corrected = rt.latency_us.corrected if rt.latency_us else None
    if corrected is None or corrected.count is None:
        raise DataError(f"{rt_path}: latency_us.corrected: missing, or without its count")
    lat = formats.shown(corrected)
    least, most = late(os.path.join(scen, "rt-client.hgrm"), late_ms, lat["count"])
    exact = listed_late(rt, rt_path, late_ms)
    if exact is not None:
        if not least <= exact <= most:
            raise DataError(f"{rt_path}: lists {exact} datagrams {late_ms:g} ms late, its "
                            f"histogram {least}-{most}")
        least = most = exact
    co = formats.read(formats.Loadgen, os.path.join(scen, "cotenant.json"))
    stat = cpu_stat(os.path.join(scen, "loadgen-slice.cpu.stat"))
    cmax, quota = cpu_max(os.path.join(scen, "loadgen-slice.cpu.max"))
    level, said = preflight(os.path.join(kdir, "preflight.txt"))
    wake = relay_wake(os.path.join(scen, "relay-stats.json"))
    watched = rt.watched_cgroup or formats.LoadCgroup()
    sched = rt_sched(os.path.join(scen, "rt-client.sched.json"))
    out = {"outcome": "ok", "problems": [],
           "kernel": release(os.path.join(kdir, "kernel.txt")),
           "preflight": {"level": level, "text": said},
           "rt_expected": rt.expected, "rt_sent": rt.sent,
           "rt_received": rt.received, "rt_lost": rt.lost,
           # as the kernel had them while it ran, not as the unit asks
           "rt_policy": sched["policy"], "rt_priority": sched["priority"],
           "rt_threads": sched["threads"],
           "latency_us": lat,
           "late": most, "late_at_least": least,
           "late_chains": late_chains(os.path.join(scen, "chains.json"), late_ms),
           "stalls": stalls(os.path.join(scen, "scenario.json")),
           "why": why(scen),
           "metrics": {w: os.path.join(k, "scenario", f) for w, f in METRICS_FILES.items()
                       if os.path.exists(os.path.join(scen, f))} or None,
           "relay_wake_us": wake,
           "relay_late": wake is not None and wake["max"] >= late_ms * 1000,
           "cotenant_rate_pps": co.achieved_rate,
           "cotenant_nr_periods": stat["nr_periods"],
           "cotenant_nr_throttled": stat["nr_throttled"],
           "cotenant_throttled_us": stat.get("throttled_usec"),
           "throttled_during_rt": watched.nr_throttled,
           "periods_during_rt": watched.nr_periods,
           "slice_cpu_max": cmax, "cpu_quota_pct": quota}
    if not lat["count"] or lat["count"] < MIN_RT_SHARE * (rt.expected or 0):
        out["problems"].append(f"the RT client measured {lat['count']} of the "
                               f"{rt.expected} datagrams it sent on schedule")
    if not out["throttled_during_rt"] and not stat["nr_throttled"]:
        out["problems"].append("the co-tenant was never throttled: the bug's conditions "
                               "were not there")
    return out


def effect(k):
    """The stall showed where the verdict looks: an RT datagram late."""
    return k["outcome"] == "ok" and k["late"] > 0


def explained(k):
    """Every late RT datagram of k explained by a chain (True), not every
    one (False), or no trace to tell (None)."""
    c = k.get("late_chains")
    if c is None:
        return None
    return c["complete"] is not False and c["late"] >= k["late_at_least"] and c["by_chain"] == c["late"]


def verdict(stock, patched, late_ms):
    """(word, headline): "fixed" when, on stock, the RT client had a
    datagram at least late_ms late and on patched none, with both measured
    under throttling."""
    def told(name, k):
        if k["outcome"] != "ok":
            return f"{name}: no results"
        n = (f"{k['late']}" if k["late"] == k["late_at_least"]
             else f"{k['late_at_least']}-{k['late']}")
        line = (f"{name} {n} of {k['latency_us']['count']} RT datagrams {late_ms:g} ms late or "
                f"more (max {k['latency_us']['max'] / 1000:.1f} ms)")
        c = k.get("late_chains")
        if k["late"] and c is not None:
            line += (", each explained by a chain" if explained(k) else
                     f", {c['by_chain']} of {max(c['late'], k['late'])} explained by a chain")
        return line

    line = f"{told('stock', stock)}; {told('patched', patched)}"
    kernels = (("stock", stock), ("patched", patched))
    for name, k in kernels:
        if k["outcome"] != "ok":
            return "incomplete", f"{line}; {k['problems'][0]}"
    if effect(patched):
        return "not fixed", line
    for name, k in kernels:
        if k["problems"]:
            return "incomplete", f"{line}; the {name} run: {'; '.join(k['problems'])}"
    if not effect(stock):
        return "no effect", line + " (the stock kernel did not show the effect)"
    return "fixed", line


def build(run_dir):
    """The summary dict of a test host run directory: the parameters from
    its run spec (spec.json, as lab/hostab/run writes it: the clock and
    the scenario's as params, the scenario's late_ms for the verdict)."""
    if not any(os.path.isdir(os.path.join(run_dir, k)) for k in KERNELS):
        raise DataError(f"{run_dir}: neither stock/ nor patched/ (not a test host run)")
    where = os.path.join(run_dir, "spec.json")
    spec = formats.read(formats.Spec, where)
    scenario = spec.scenario
    if scenario is None:
        raise DataError(f"{where}: no scenario object")
    late_ms = number(scenario.get("late_ms"), f"{where}: scenario.late_ms")
    if late_ms <= 0:
        raise DataError(f"{where}: scenario.late_ms {late_ms:g}: expected a positive number of ms")
    params = {"clock": spec.clock, **scenario}
    kernels = {k: kernel_summary(run_dir, k, late_ms) for k in KERNELS}
    word, headline = verdict(kernels["stock"], kernels["patched"], late_ms)
    s, p = kernels["stock"], kernels["patched"]
    told = explained(s) if s["outcome"] == "ok" else None
    return {"kind": "testhost", "run_id": os.path.basename(os.path.normpath(run_dir)),
            "params": params, "late_ms": late_ms, "kernels": kernels,
            "verdict": {"word": word,
                        # with the trace, each late datagram must have its chain
                        "holds": word == "fixed" and told is not False,
                        "stock_shows_effect": effect(s),
                        "patched_free": p["outcome"] == "ok" and not p["problems"] and
                        not effect(p),
                        "late_explained": told},
            "headline": headline,
            "rule": (f"fixed = on the stock kernel the RT client had at least one datagram "
                     f"{late_ms:g} ms late or more, and on the patched kernel none, each RT "
                     f"client having measured at least {MIN_RT_SHARE:.0%} of its datagrams "
                     f"while the co-tenant was throttled; it holds when the kernel's trace, "
                     f"where it was recorded, explains each late datagram by a chain")}
