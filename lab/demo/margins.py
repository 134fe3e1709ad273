"""The verdict's inputs against their limits, each with the resolution it
is measured to, and the freezes the verdict on the virtual clock judges.

A verdict whose input lies within its resolution of a limit does not
flip on which side the last microsecond fell: the input is not counted
against the run, and the summary says so (borderline). The resolutions
(lab/demo/README.md, "The verdict", has the measurements):

- a freeze probe's lateness (limit: its 5 ms): 0.1 ms. The probe is a
  SCHED_FIFO thread sleeping on a hard timer (no timer slack) and reads
  the clock when it runs; its own wake-up path, the timer's interrupt to
  the probe running, took 4-65 us in the traces of quiet wake-ups. How
  long a CPU was held is known to one probe period (5 ms) only: a probe
  late by L saw a CPU held between L and L + 5 ms.
- an RT datagram's latency (limit: the late limit, 5 ms on the virtual
  clock): the ticker's count compares exact nanoseconds (the kernel's
  receive timestamp minus the slot), and the listed datagrams carry them
  to the microsecond; the percentiles and the maximum come from a
  histogram of 3 significant digits, whose bucket at 5 ms is 4 us.
  bucket_ms() is that width, which the borderline test uses for both.
- a ratio of two histogram values (the stock maximum over the patched
  one, limit 10x): each value is within its bucket, 1/1024 of it at
  most, so the ratio is known to 0.2 %.
"""
FREEZE_RESOLUTION_MS = 0.1
HIST_SIGFIGS = 3
RATIO_RESOLUTION = 2 / 1024


def bucket_ms(value_ms):
    """The width of the histogram's bucket (lib/hist: 1 us units, 3
    significant digits) that holds value_ms: 1 us up to 2.047 ms, then
    doubling with each power of two."""
    us, width = max(value_ms * 1000, 1.0), 1
    top = 2048      # 2 x the sub-bucket half of 3 digits' 2048 sub-buckets
    while us >= top:
        top, width = top * 2, width * 2
    return width / 1000


def within(value, limit, resolution):
    return value is not None and limit is not None and abs(value - limit) <= resolution


def _listed_freezes(probes):
    """The freezes the probes (formats.FreezeProbe) list, [(cpu, due_s,
    woke_s)], and whether that is all of them (None: they list none, a
    scenario from before)."""
    rows, complete = [], True
    for p in probes:
        if p.listed is None:
            if p.freezes:
                return None, False
            continue
        rows += [(p.cpu, f.due_s, f.woke_s) for f in p.listed]
        complete = complete and len(p.listed) >= p.freezes
    return rows, complete


def judge_freezes(scen, stalls, traced):
    """The freezes of scenario.json (formats.Scenario) outside the stalls
    ([(start_s, end_s)]; a stalled kernel holds its CPUs' work too: those
    inside are counted, not judged), each explained by the trace (traced:
    the summary's freezes of chains.json, None when the run was not
    traced) or not: {"outside", "explained", "borderline", "unexplained"},
    lists of {"cpu", "due_s", "late_ms", "text"}, and "complete": whether
    scenario.json listed every freeze it counted."""
    probes = (scen.ticker.freeze_probes if scen.ticker else None) or []
    listed, complete = _listed_freezes(probes)
    out = {"outside": [], "explained": [], "borderline": [], "unexplained": [], "complete": complete}
    if listed is None:
        return out
    limit = probes[0].min_ms if probes else None
    rows = {(r.get("cpu"), round(r["due_s"], 6)): r for r in (traced or {}).get("rows") or []}
    for cpu, due, woke in listed:
        if any(start <= woke and due <= end for start, end in stalls):
            continue
        late = round((woke - due) * 1000, 3)
        f = {"cpu": cpu, "due_s": round(due, 6), "late_ms": late}
        out["outside"].append(f)
        r = rows.get((cpu, round(due, 6)))
        if r is not None and "unexplained" not in r and r.get("cause"):
            out["explained"].append(dict(f, cause=r["cause"], text=r.get("text")))
            continue
        why = (r or {}).get("unexplained") or ("the run was not traced" if traced is None else
                                               "the trace has no row for it")
        f = dict(f, text=(r or {}).get("text") or f"{late:.3f} ms on CPU {cpu} at {due:.3f} s: {why}")
        if within(late, limit, FREEZE_RESOLUTION_MS):
            out["borderline"].append(f)
        else:
            out["unexplained"].append(f)
    return out


def late_borderline(ticker, late_ms):
    """How many of the RT datagrams the ticker (formats.Ticker) lists took
    over late_ms by no more than its resolution (bucket_ms): late by the
    count, within the measurement of the limit."""
    res = bucket_ms(late_ms)
    return sum(1 for s in ticker.listed or () if late_ms < (s.echo_s - s.due_s) * 1000 <= late_ms + res)


def rows(stock, patched, rule, ratio_limit):
    """Each input of the verdict that has a limit, with its value and
    resolution: [{"input", "value", "limit", "unit", "resolution",
    "borderline"}] (value None when the run did not measure it)."""
    out = []

    def add(name, value, limit, unit, res):
        out.append({"input": name, "value": value, "limit": limit, "unit": unit, "resolution": res,
                    "borderline": within(value, limit, res)})

    for name, k in (("stock", stock), ("patched", patched)):
        f = k.get("guest_freezes") or {}
        add(f"{name} freeze probes, latest wake-up", f.get("max_ms"), f.get("min_ms"), "ms",
            FREEZE_RESOLUTION_MS)
        lat = (k.get("rt_latency_us") or {}).get("max")
        v = None if lat is None else lat / 1000
        add(f"{name} RT datagrams, max", v, rule.late_ms, "ms", bucket_ms(rule.late_ms))
    s, p = (stock.get("rt_latency_us") or {}).get("max"), (patched.get("rt_latency_us") or {}).get("max")
    ratio = round(s / p, 3) if s and p else None
    add("RT max, stock over patched", ratio, ratio_limit, "x", (ratio or 0) * RATIO_RESOLUTION)
    return out
