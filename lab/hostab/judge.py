"""judge: the host A/B's verdict rule, and the summary.json of the
scenario on systemd test hosts (lab/hostab/run; report/summarize
--testhost).

A run directory holds spec.json (the run spec: its scenario object has
every parameter, late_ms the limit the verdict judges by), and stock/ and
patched/, each what its guest left:
kernel.txt (uname -a), preflight.txt (relay-preflight), results.txt and
scenario/ with the RT client's rt-client.json and rt-client.hgrm (loadgen
--json --hgrm --watch-cgroup), the co-tenant's cotenant.json and
loadgen.slice's cpu.stat and cpu.max, and relay's own stats file,
relay-stats.json (relay --stats-file). A kernel whose guest left no
rt-client.json is reported as having no results; once it is there, every
other file must be too except relay-stats.json: runs from before relay's
stats were collected have none, and their verdict rests on the RT client
alone.
"""
import os

from report import formats
from report.files import DataError, hgrm_counts, number
from report.formats import cpu_max, cpu_stat, preflight, release, text_lines

from ..demo.judge import MIN_RT_SHARE

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


def relay_wake(path):
    """relay's own wake-up latency (a datagram's arrival to relay reading
    it, every datagram it read), from its stats file; None when absent."""
    if not os.path.exists(path):
        return None
    wake = formats.read(formats.Relay, path).wake_latency_us
    if wake is None:
        raise DataError(f"{path}: wake_latency_us: missing (expected a percentile object)")
    return formats.shown(wake)


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
    co = formats.read(formats.Loadgen, os.path.join(scen, "cotenant.json"))
    stat = cpu_stat(os.path.join(scen, "loadgen-slice.cpu.stat"))
    cmax, quota = cpu_max(os.path.join(scen, "loadgen-slice.cpu.max"))
    level, said = preflight(os.path.join(kdir, "preflight.txt"))
    wake = relay_wake(os.path.join(scen, "relay-stats.json"))
    watched = rt.watched_cgroup or formats.LoadCgroup()
    out = {"outcome": "ok", "problems": [],
           "kernel": release(os.path.join(kdir, "kernel.txt")),
           "preflight": {"level": level, "text": said},
           "rt_expected": rt.expected, "rt_sent": rt.sent,
           "rt_received": rt.received, "rt_lost": rt.lost,
           "rt_priority": rt.rt_priority,
           "latency_us": lat,
           "late": most, "late_at_least": least,
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
    """The stall showed: an RT datagram or one of relay's wake-ups late."""
    return k["outcome"] == "ok" and (k["late"] > 0 or k.get("relay_late", False))


def verdict(stock, patched, late_ms):
    """(word, headline): "fixed" when, on stock, an RT datagram or one of
    relay's own wake-ups was at least late_ms late, and on patched neither,
    with both measured under throttling."""
    def told(name, k):
        if k["outcome"] != "ok":
            return f"{name}: no results"
        n = (f"{k['late']}" if k["late"] == k["late_at_least"]
             else f"{k['late_at_least']}-{k['late']}")
        wake = k.get("relay_wake_us")
        own = "" if wake is None else f", relay's own wake-up max {wake['max'] / 1000:.1f} ms"
        return (f"{name} {n} of {k['latency_us']['count']} RT datagrams {late_ms:g} ms late or "
                f"more (max {k['latency_us']['max'] / 1000:.1f} ms{own})")

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
    return {"kind": "testhost", "run_id": os.path.basename(os.path.normpath(run_dir)),
            "params": params, "late_ms": late_ms, "kernels": kernels,
            "verdict": {"word": word, "holds": word == "fixed",
                        "stock_shows_effect": effect(s),
                        "patched_free": p["outcome"] == "ok" and not p["problems"] and
                        not effect(p)},
            "headline": headline,
            "rule": (f"fixed = on the stock kernel the RT client saw at least one datagram, "
                     f"or relay one of its own wake-ups, {late_ms:g} ms late or more, and on "
                     f"the patched kernel neither did, each RT client having "
                     f"measured at least {MIN_RT_SHARE:.0%} of its datagrams while the "
                     f"co-tenant was throttled")}
