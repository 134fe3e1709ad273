"""make capacity's results: each kernel's capacity searches (lab/capacity/grid,
one loadgen sweep --search per co-tenant quota and rate in each repeat, a
guest of its own) combined over the repeats (lab/capacity/repeats) as
capacity.json, the terminal table with the headline last, the plots and
the page."""
import glob
import json
import os
import re

from lab.capacity import repeats

from . import png, search, sweep
from .check import CheckError, read_texts
from .check import plots as check_plots
from .files import DataError, number, output_dir, read_json
from .page import CSS
from .escape import gnuplot_number, gnuplot_string, html_text
from .plots import COLOURS, datablock, head, run_gnuplot
from .slo import objectives

KERNELS = ("stock", "patched")
GOOD, MIXED = "#1e8449", "#9a7d0a"


def _cell_params(d):
    """The part of the spec a cell ran: its cell.json, beside its
    results."""
    path = os.path.join(d, "cell.json")
    cell = read_json(path)
    if not isinstance(cell, dict):
        raise DataError(f"{path}: expected an object")
    return {k: int(number(cell.get(k), f"{path}: {k}"))
            for k in ("cpu_quota_pct", "cotenant_rate_pps", "cotenant_spin_us")}


def _step(k, r, s):
    res = s.get("result") or {}
    watched = res.get("watched_cgroup") or {}
    hgrm = s.get("hgrm")
    lat = (res.get("latency_us") or {}).get("corrected")
    if not isinstance(lat, dict):
        raise DataError(f"{k} repeat {r}: at {s['target_rate']:g} pps: no result.latency_us.corrected")
    return {
        "repeat": r, "target_rate": s["target_rate"],
        "achieved_rate": res.get("achieved_rate"), "meets_slo": s["meets_slo"],
        "why": s.get("why"), "cause": s.get("cause"), "saturated": s.get("saturated", False),
        "latency_us": lat, "sent": res.get("sent"), "lost": res.get("lost"),
        "throttled_periods": watched.get("nr_throttled"),
        "throttled_us": watched.get("throttled_us"),
        "periods": watched.get("nr_periods"),
        # the guest's /results is <kernel>/r<repeat>/results on the host
        "hgrm": re.sub(r"^/results/", f"{k}/r{r}/results/", hgrm) if hgrm else None,
    }


# A missed step's cause: the trace's (lock, cpu, loss; lab/ktrace/explain)
# where the cell was traced, else loadgen's own word (loadgen(1) SWEEP).
CAUSES = {"lock": "RT waits on the ready-list lock held by a throttled task",
          "cpu": "the relay's CPU was busy", "loss": "datagrams were lost",
          "throttled": "the co-tenant was throttled during the step",
          "objective": "the latency objective", "sender": "the load generator could not send the rate"}


def _chains(d):
    """A repeat's cell's chains.json (lab/ktrace/explain, beside the
    co-tenant's results), or None when it was not traced."""
    path = os.path.join(d, "cotenant", "chains.json")
    if not os.path.exists(path):
        return None
    doc = read_json(path)
    if not isinstance(doc, dict):
        raise DataError(f"{path}: expected an object")
    return doc


def trace_steps(d, steps):
    """Each of STEPS (one repeat's, in order) given its cause from the
    cell's kernel trace (chains.json), when it was traced."""
    doc = _chains(d)
    if doc is None:
        return
    path = os.path.join(d, "cotenant", "chains.json")
    theirs_all = doc.get("steps")
    if not isinstance(theirs_all, list) or len(theirs_all) != len(steps):
        raise DataError(f"{path}: its steps do not match the search's")
    for mine, theirs in zip(steps, theirs_all):
        if not isinstance(theirs, dict):
            raise DataError(f"{path}: a step is not an object")
        if not mine["meets_slo"]:
            mine["cause"] = theirs.get("cause") or mine["cause"]
        covered = theirs.get("covered", True)
        if not isinstance(covered, bool):
            raise DataError(f"{path}: covered is not true or false")
        mine["trace"] = {"covered": covered}
        mine["trace"].update({k: number(theirs.get(k), f"{path}: {k}", optional=True)
                              for k in ("lock_waits", "lock_wait_ms_max", "relay_cpu_share")})


def _stalls(d, r):
    """The relay's stalls in one repeat's cell, each with what held it
    (lab/ktrace/explain's chain) or why the trace could not say:
    [{"repeat", "start_s", "length_ms", "explained", "chain", "text"}]."""
    doc = _chains(d)
    if doc is None:
        return []
    out = []
    for st in doc.get("stalls") or []:
        if not isinstance(st, dict):
            raise DataError(f"{d}/cotenant/chains.json: a stall is not an object")
        out.append({"repeat": r, "start_s": st.get("start_s"), "length_ms": st.get("length_ms"),
                    "explained": "unexplained" not in st, "chain": st.get("chain"),
                    "held_by": st.get("held_by"),
                    "text": st.get("line") or st.get("unexplained") or "explained"})
    return out


def _limit(steps, i):
    """A search's end with what bounded it: the cause of the step that
    missed at its first missed rate (the lowest rate for "none"); a
    ceiling of loadgen's for "to" and "sender"."""
    missed = [s for s in steps if not s["meets_slo"]
              and i.get("missed") is not None and s["target_rate"] == i["missed"]]
    cause = {"to": "ceiling", "sender": "ceiling"}.get(i["end"]) or \
        (missed[-1]["cause"] if missed else None)
    return {"end": i["end"], "met_pps": i.get("met"), "missed_pps": i.get("missed"),
            "steps": i.get("steps"), "limit": cause}


def _problems(d):
    """What the grid wrote in D when a cell or a probe went wrong: its
    failure, or a co-tenant that ended before the RT load did."""
    return [open(os.path.join(d, f), encoding="utf-8").read().strip()
            for f in ("failed", "cotenant-ended-early") if os.path.exists(os.path.join(d, f))]


def _rates(steps):
    """Every rate tried over the repeats, ascending: runs and how many met."""
    rates = {}
    for s in steps:
        r = rates.setdefault(s["target_rate"], {"target_rate": s["target_rate"], "runs": 0, "met": 0})
        r["runs"] += 1
        r["met"] += bool(s["meets_slo"])
    return [dict(r, fraction_met=r["met"] / r["runs"]) for _, r in sorted(rates.items())]


def _nonmonotonic(steps):
    """A rate that missed (on the target's account: not loadgen's
    sender) below the highest that met, in one repeat or across them:
    "26864 pps met (repeat 2) above 24710 pps missed (repeat 3)", or None."""
    met = [s for s in steps if s["meets_slo"]]
    if not met:
        return None
    top = max(met, key=lambda s: s["target_rate"])
    below = sorted((s for s in steps if not s["meets_slo"] and s["cause"] != "sender"
                    and s["target_rate"] < top["target_rate"]), key=lambda s: s["target_rate"])
    if not below:
        return None
    return (f"{top['target_rate']:.0f} pps met (repeat {top['repeat']}) above "
            + ", ".join(f"{s['target_rate']:.0f} pps missed (repeat {s['repeat']})" for s in below))


def _cell(k, reps):
    """One cell of kernel K over its repeats REPS ([(repeat, the cell's
    directory in it)]): the capacity over the repeats that ran without a
    problem (lab/capacity/repeats), every repeat's search, steps and
    stalls, and the problems of the others."""
    ran = None
    c = {"capacity_pps": None, "capacity": None, "at_least": False, "limit": None,
         "monotonic": None, "nonmonotonic": None, "verdicts": [], "why_not": None,
         "problems": [], "searches": [], "rates": [], "steps": [], "stalls": []}
    clean, slo = [], None
    for r, d in reps:
        mine = _cell_params(d)
        if ran is not None and mine != ran:
            raise DataError(f"{d}/cell.json: {mine} is not what the other repeats ran, {ran}")
        ran = mine
        problems = [f"repeat {r}: {p}" for p in _problems(d)]
        path = os.path.join(d, "sweep.json")
        if not os.path.exists(path):
            c["problems"] += problems or [f"repeat {r}: no sweep.json: the search did not finish"]
            continue
        j = read_json(path)
        if not search.is_search(j):
            raise DataError(f"{path}: not a loadgen sweep --search (mode {j.get('mode')!r})")
        search.check(j, path)
        if len(j["intervals"]) != 1:
            raise DataError(f"{path}: {len(j['intervals'])} searches, a repeat runs one")
        if slo is not None and j["slo"] != slo:
            raise DataError(f"{path}: objectives {j['slo']} differ from {slo}")
        slo = j["slo"]
        steps = [_step(k, r, x) for x in j["steps"]]
        trace_steps(d, steps)
        end = dict(_limit(steps, j["intervals"][0]), repeat=r)
        c["steps"] += steps
        c["searches"].append(end)
        c["verdicts"].append(f"repeat {r}: {j['verdict']}")
        c["stalls"] += _stalls(d, r)
        # a repeat whose co-tenant was not there throughout proves nothing
        c["problems"] += problems
        if not problems:
            clean.append(repeats.Repeat(r, end["end"], end["met_pps"], end["end"] in ("to", "sender")))
    c.update(ran or {})
    c["capacity"] = repeats.combine(clean)
    if c["capacity"]:
        c.update(capacity_pps=c["capacity"]["median_pps"], at_least=c["capacity"]["at_least"])
    c["rates"] = _rates(c["steps"])
    c["nonmonotonic"] = _nonmonotonic(c["steps"])
    c["monotonic"] = c["nonmonotonic"] is None if c["steps"] else None
    limits = [s["limit"] for s in c["searches"] if s["limit"]]
    c["limit"] = max(set(limits), key=limits.count) if limits else None
    fail = next((x for x in c["steps"] if not x["meets_slo"]), None)
    if fail:
        why_ = fail.get("why")
        cause = CAUSES.get(fail.get("cause"))
        c["why_not"] = (f"repeat {fail['repeat']}, {fail['target_rate']:.0f} pps: "
                        + (f"{cause} ({why_})" if cause else str(why_)))
    return c, slo


def _repeat_dirs(run_dir, k):
    """Kernel K's repeats: [(repeat, its directory)] in order (K/r1, ...)."""
    out = []
    for d in glob.glob(os.path.join(run_dir, k, "r*")):
        m = re.fullmatch(r"r([1-9][0-9]{0,3})", os.path.basename(d))
        if m and os.path.isdir(d):
            out.append((int(m[1]), d))
    return sorted(out)


def headline_cell(kernels):
    """The quota where the fix buys the most rate (none counts as 0); the
    tightest quota on a tie."""
    best = None
    stock = {(c["cpu_quota_pct"], c["cotenant_rate_pps"]): c for c in kernels["stock"]["by_quota"]}
    for p in kernels["patched"]["by_quota"]:
        s = stock.get((p["cpu_quota_pct"], p["cotenant_rate_pps"]))
        if not s:
            continue
        gain = (p["capacity_pps"] or 0) - (s["capacity_pps"] or 0)
        tighter = best is not None and p["cpu_quota_pct"] < best[1]["cpu_quota_pct"]
        if best is None or gain > best[0] or (gain == best[0] and tighter):
            best = (gain, p, s)
    return best


def _pps(x):
    return "none" if x is None else f"{x:.0f}"


def cap_text(c):
    """A cell's capacity over its repeats: "none (3 repeats; lock)",
    "26000 pps (24000-28000 over 3 repeats; cpu)", "unstable: found in 2
    of 3 repeats (21000-23000 pps; lock)", ">= 60000 pps (... a ceiling
    of loadgen's)"."""
    if c is None:
        return "no result"
    cap = c["capacity"]
    if cap is None:
        return "no result (a problem, below)"
    limit = c.get("limit")
    text = repeats.text(cap)
    if limit and not cap["at_least"] and text.endswith(")"):
        text = text[:-1] + f"; {limit})"
    left = len(c["problems"])
    return text + (f" [{left} repeat{'s' if left != 1 else ''} left out: a problem]" if left else "")


def quota_for(kernel, rate, crate):
    """The tightest co-tenant quota of the grid from which up every quota
    met RATE in every repeat (the lowest capacity of its repeats at or
    above it, none unstable): {cpu_quota_pct, tightest_tried}, or None
    when even the loosest did not."""
    cells = sorted((c for c in kernel["by_quota"] if c["cotenant_rate_pps"] == crate),
                   key=lambda c: c["cpu_quota_pct"])
    ok = None
    for c in reversed(cells):
        cap = c["capacity"]
        if not cap or cap["unstable"] or cap["min_pps"] is None or cap["min_pps"] < rate:
            break
        ok = c["cpu_quota_pct"]
    if ok is None:
        return None
    return {"cpu_quota_pct": ok, "tightest_tried": ok == cells[0]["cpu_quota_pct"]}


def quota_text(q, quotas):
    if q is None:
        return f"none of {min(quotas)}-{max(quotas)} %" if len(quotas) > 1 else f"not {quotas[0]} %"
    return f"{q['cpu_quota_pct']} %" + (" (the tightest tried)" if q["tightest_tried"] else "")


def _probes(rdir, k, r):
    """One repeat's quota search (lab/capacity/grid: the tightest
    co-tenant quota at which the planned RT rate met, with a co-tenant of
    a fixed CPU demand): every probe in order, the tightest quota that
    met and the loosest that missed."""
    probes = []
    for f in glob.glob(os.path.join(rdir, "results", "grid", "threshold", "q*", "probe.json")):
        d = os.path.dirname(f)
        p = read_json(f)
        if not isinstance(p, dict):
            raise DataError(f"{f}: expected an object")
        problems = _problems(d)
        row = {"repeat": r, "probe": int(number(p.get("probe"), f"{f}: probe")),
               "cpu_quota_pct": int(number(p.get("cpu_quota_pct"), f"{f}: cpu_quota_pct")),
               "met": None, "cause": None, "why": None, "p99_9_us": None,
               "throttled_periods": None, "problems": problems}
        sw = os.path.join(d, "sweep.json")
        if not problems and not os.path.exists(sw):
            problems.append("no sweep.json: the probe did not finish")
        if not problems:
            j = read_json(sw)
            steps = j.get("steps") if isinstance(j, dict) else None
            if not isinstance(steps, list) or len(steps) != 1:
                raise DataError(f"{sw}: expected one step")
            st = _step(k, r, steps[0])
            row.update(met=st["meets_slo"], cause=st["cause"], why=st["why"],
                       p99_9_us=st["latency_us"].get("p99_9"),
                       throttled_periods=st["throttled_periods"])
        probes.append(row)
    probes.sort(key=lambda x: x["probe"])
    met = [x["cpu_quota_pct"] for x in probes if x["met"] is True]
    missed = [x["cpu_quota_pct"] for x in probes if x["met"] is False]
    return {"repeat": r, "tightest_met_pct": min(met) if met else None,
            "loosest_missed_pct": max(missed) if missed else None,
            "monotonic": not (met and missed and max(missed) > min(met)),
            "problems": [f"repeat {r}, probe {x['probe']} at {x['cpu_quota_pct']} %: {p}"
                         for x in probes for p in x["problems"]],
            "probes": probes}


def _threshold(run_dir, k, plan):
    """Kernel K's quota searches, one a repeat (_probes), and the tightest
    quota over the repeats that ran without a problem as the cells'
    capacity is (lab/capacity/repeats): the median and the interval, none
    when every repeat missed at the highest quota, unstable when some did
    and some met; None when the plan ran none."""
    if plan.get("quota_search") != "on":
        return None
    reps = [_probes(d, k, r) for r, d in _repeat_dirs(run_dir, k)]
    clean = [x for x in reps if x["probes"] and not x["problems"]]
    return {"planned_rate_pps": plan["planned_rate_pps"], "demand_pct": plan["threshold_demand_pct"],
            "quota_range_pct": plan["threshold_quota_pct"],
            "resolution_pct": plan["threshold_resolution_pct"],
            "tightest": repeats.combine([repeats.Repeat(x["repeat"], "none" if x["tightest_met_pct"] is None
                                                        else "found", x["tightest_met_pct"])
                                         for x in clean]),
            "problems": [p for x in reps for p in x["problems"]]
            + [f"repeat {x['repeat']}: no probe ran" for x in reps if not x["probes"]],
            "repeats": reps}


def _cotenant_wants(t):
    """What the quota search's co-tenant wanted of the CPU, in words."""
    if t["demand_pct"]:
        return f"a co-tenant busy-waiting for {t['demand_pct']} % of the CPU besides its sends"
    return "a co-tenant wanting only what its sends cost"


def _threshold_one(t, x):
    """One repeat's quota search: "70 % (65 % missed; throttled)", "any
    (met at 5 %, the lowest tried)", "none (missed at 95 %, the highest
    tried; lock)"."""
    if x["problems"] or not x["probes"]:
        return "no result (a problem, below)"
    tight, loose = x["tightest_met_pct"], x["loosest_missed_pct"]
    cause = next((r["cause"] for r in x["probes"]
                  if r["met"] is False and r["cpu_quota_pct"] == loose), None)
    why_ = f"; {cause}" if cause else ""
    if tight is None:
        return f"none (missed at {loose} %, the highest tried{why_})"
    if loose is None:
        return f"any (met at {tight} %, the lowest tried)"
    order = "" if x["monotonic"] else "; not monotonic"
    return f"{tight} % ({loose} % missed{why_}{order})"


def threshold_text(t):
    """A kernel's quota searches over its repeats: one repeat's words
    (_threshold_one), or "46 % (41-46 % over 3 repeats)", "any (met at 10
    %, the lowest tried, in 3 repeats)", "none (3 repeats)", "unstable: a
    quota that met in 2 of 3 repeats (41-46 %)"."""
    if t is None:
        return "not searched"
    c = t["tightest"]
    if c is None:
        return "no result (a problem, below)"
    clean = [x for x in t["repeats"] if x["probes"] and not x["problems"]]
    if c["repeats"] == 1:
        return _threshold_one(t, clean[0])
    n = c["repeats"]
    lo, hi = t["quota_range_pct"]
    if c["unstable"]:
        span = f"{c['min_pps']:.0f}-{c['max_pps']:.0f}" if c["max_pps"] > c["min_pps"] else f"{c['max_pps']:.0f}"
        return f"unstable: a quota that met in {c['found']} of {n} repeats ({span} %)"
    if not c["found"]:
        return f"none (missed at {hi} %, the highest tried, in {n} repeats)"
    if all(x["loosest_missed_pct"] is None for x in clean):
        return f"any (met at {lo} %, the lowest tried, in {n} repeats)"
    return f"{c['median_pps']:.0f} % ({c['min_pps']:.0f}-{c['max_pps']:.0f} % over {n} repeats)"


def build(run_dir):
    """capacity.json's content from a run directory."""
    run = read_json(os.path.join(run_dir, "run.json"))
    spec_path = os.path.join(run_dir, "spec.json")
    spec = read_json(spec_path)
    if not isinstance(spec, dict) or not isinstance(spec.get("capacity"), dict):
        raise DataError(f"{spec_path}: not a capacity run's spec (no \"capacity\" object)")
    plan = spec["capacity"]
    kernels, slo = {}, None
    for k in KERNELS:
        reps = _repeat_dirs(run_dir, k)
        boots = []
        for r, d in reps:
            path = os.path.join(d, "boot.json")
            boot = read_json(path) if os.path.exists(path) else {"outcome": "no-results"}
            boots.append({"repeat": r, "outcome": boot.get("outcome"), "version": boot.get("version"),
                          "salt_us": boot.get("salt_us"), "wall_s": boot.get("wall_s")})
        by_name = {}
        for r, d in reps:
            for f in glob.glob(os.path.join(d, "results", "grid", "*", "cell.json")):
                by_name.setdefault(os.path.basename(os.path.dirname(f)), []).append((r, os.path.dirname(f)))
        cells = []
        for name in sorted(by_name):
            c, j = _cell(k, by_name[name])
            cells.append(c)
            if j is not None:
                if slo is not None and j != slo:
                    raise DataError(f"{k} {name}: objectives {j} differ from {slo}")
                slo = j
        cells.sort(key=lambda c: (c["cotenant_rate_pps"], c["cpu_quota_pct"]))
        outcomes = sorted({b["outcome"] for b in boots})
        kernels[k] = {"outcome": outcomes[0] if len(outcomes) == 1 else ", ".join(
                          f"r{b['repeat']} {b['outcome']}" for b in boots) if boots else "no-results",
                      "version": next((b["version"] for b in boots if b["version"]), None),
                      "repeats": boots, "by_quota": cells, "quota_threshold": _threshold(run_dir, k, plan)}
    if slo is None:
        raise DataError(f"{run_dir}: no kernel left a sweep.json (see */console.log)")
    best = headline_cell(kernels)
    objective = objectives(slo)
    rate = number(plan.get("planned_rate_pps"), f"{spec_path}: capacity.planned_rate_pps")
    crate = min(plan.get("cotenant_rate_pps") or [0])
    quotas = sorted({c["cpu_quota_pct"] for k in KERNELS for c in kernels[k]["by_quota"]})
    planned = {"rt_rate_pps": rate, "cotenant_rate_pps": crate,
               **{k: quota_for(kernels[k], rate, crate) for k in KERNELS}}
    if best:
        _, p, s = best
        headline = (f"at quota {p['cpu_quota_pct']}%, {objective}: stock {cap_text(s)}, "
                    f"patched {cap_text(p)}. Co-tenant quota for {rate:.0f} pps: ")
        if all(kernels[k]["quota_threshold"] for k in KERNELS):
            t = kernels["stock"]["quota_threshold"]
            headline += (", ".join(f"{k} {threshold_text(kernels[k]['quota_threshold'])}"
                                   for k in KERNELS)
                         + f" ({_cotenant_wants(t)})")
        else:
            headline += ", ".join(f"{k} {quota_text(planned[k], quotas)}" for k in KERNELS)
    else:
        headline = f"{objective}: " + ", ".join(
            f"{k} {kernels[k]['outcome']}" for k in KERNELS)
    return {"run_id": run.get("run_id"), "date": run.get("date"), "clock": spec.get("clock"),
            "initramfs_sha256": run.get("initramfs_sha256"), "spec": spec,
            "wall_s": run.get("wall_s"), "slo": slo, "headline": headline,
            "fix_buys": bool(best) and (best[1]["capacity_pps"] or 0) > (best[2]["capacity_pps"] or 0),
            "quota_for_rate": planned, "kernels": kernels}


def _by_cell(cap):
    cells = {}
    for k in KERNELS:
        for c in cap["kernels"][k]["by_quota"]:
            cells.setdefault((c["cotenant_rate_pps"], c["cpu_quota_pct"]), {})[k] = c
    return sorted(cells.items())


# A search that ended still meeting, and what stopped it there: loadgen's
# own limit, not the relay's.
CEILING = {"to": "the highest rate the plan allows", "sender": "loadgen's senders at their limit"}


def _search_text(s):
    """One search's end: "26000/27300 pps (cpu)", "none at 117 pps (lock)",
    ">= 468 pps (ceiling: ...)"."""
    limit = f" ({s['limit']})" if s["limit"] else ""
    if s["end"] == "none":
        return f"none at {_pps(s['missed_pps'])} pps{limit}"
    if s["end"] in CEILING:
        return f">= {_pps(s['met_pps'])} pps (ceiling: {CEILING[s['end']]})"
    if s["end"] == "found":
        return f"{_pps(s['met_pps'])}/{_pps(s['missed_pps'])} pps{limit}"
    return s["end"]


def _mixed_rates(c):
    """The rates some but not all of whose runs met: "234 pps 1/3"."""
    return ", ".join(f"{r['target_rate']:.0f} pps {r['met']:g}/{r['runs']:g}"
                     for r in c["rates"] if 0 < r["met"] < r["runs"])


def stall_lines(c):
    """A cell's stalls in words: how many, the longest, how many the
    trace explained, and what held the relay, each distinct account once
    with how often: ["3 stalls, the longest 214 ms, 3 explained", "3x:
    ..."]; [] without a stall."""
    st = c.get("stalls") or []
    if not st:
        return []
    longest = max(x["length_ms"] or 0 for x in st)
    ex = sum(1 for x in st if x["explained"])
    out = [f"{len(st)} stall{'s' if len(st) != 1 else ''}, the longest {longest:.0f} ms, "
           f"{ex} explained by the trace"]
    seen = {}
    for x in st:
        # one account of the same chain whichever thread it names
        key = ("" if x["explained"] else "unexplained: ") + re.sub(r"/\d+\b", "", x["text"])
        seen.setdefault(key, []).append(x["repeat"])
    for text, reps in seen.items():
        out.append(f"{len(reps)}x (repeat {', '.join(map(str, sorted(set(reps))))}): {text}")
    return out


def table(cap):
    """The terminal table: capacity per kernel and quota over its repeats,
    with the interval and what bounded it, how each repeat's search ended,
    the stalls and what held the relay, and the headline last."""
    plan = cap["spec"]["capacity"]
    n = cap["spec"].get("repeats", 1)
    lines = [f"Capacity: the highest RT load rate meeting {objectives(cap['slo'])}, "
             f"median of each cell's {n} independent repeat{'s' if n != 1 else ''} "
             f"(the interval over them; what bounded them)",
             f"(each repeat a guest of its own, its own boot and salt; RT client SCHED_FIFO on "
             f"CPU 0 through the relay on CPU 1; a co-tenant on CPU 1 under a CPU quota; "
             f"{cap.get('clock') or '?'} clock; each search doubles from "
             f"{plan['rt_rate_from_pps']} pps up to {plan['rt_rate_to_pps']} pps, then bisects to "
             f"{plan['resolution_pct']} %; steps of {plan['step_s']} s)", ""]
    rows = [("quota", "co-tenant", "stock", "patched")]
    for (crate, q), by in _by_cell(cap):
        spin = next(iter(by.values()))["cotenant_spin_us"]
        rows.append((f"{q}%", f"{crate} pps" + (f", spin {spin} us" if spin else ""),
                     cap_text(by.get("stock")), cap_text(by.get("patched"))))
    widths = [max(len(r[i]) for r in rows) for i in range(4)]
    lines += ["  ".join(x.ljust(w) if i < 2 else x.rjust(w) for i, (x, w) in
                        enumerate(zip(r, widths))) for r in rows]
    cells = [(q, k, by[k]) for (_, q), by in _by_cell(cap) for k in KERNELS if k in by]
    unstable = [f"  {k} at {q}%: {cap_text(c)}" for q, k, c in cells
                if c["capacity"] and c["capacity"]["unstable"]]
    ends = [f"  {k} at {q}%: " + "; ".join(f"r{s['repeat']}: {_search_text(s)}" for s in c["searches"])
            for q, k, c in cells if c["searches"]]
    mixed = [f"  {k} at {q}%: {_mixed_rates(c)}" for q, k, c in cells if _mixed_rates(c)]
    bad = [f"  {k} at {q}%: {c['nonmonotonic']}" for q, k, c in cells if c["nonmonotonic"]]
    stalls = [f"  {k} at {q}%: " + "\n    ".join(stall_lines(c)) for q, k, c in cells if c.get("stalls")]
    probs = [f"  {k} at {q}%: {p}" for q, k, c in cells for p in c["problems"]]
    ts = {k: cap["kernels"][k].get("quota_threshold") for k in KERNELS}
    probs += [f"  {k} quota search: {p}" for k in KERNELS if ts[k] for p in ts[k]["problems"]]
    for k in KERNELS:
        if cap["kernels"][k]["outcome"] != "ok":
            probs.append(f"  {k}: the guests' outcome was {cap['kernels'][k]['outcome']}")
    if unstable:
        lines += ["", "unstable (some repeats found a capacity and some none: no single number):"] + unstable
    if any(ts.values()):
        t = next(v for v in ts.values() if v)
        lines += ["", f"the tightest co-tenant quota for {t['planned_rate_pps']} pps ("
                      f"{_cotenant_wants(t)}; quotas {t['quota_range_pct'][0]}-"
                      f"{t['quota_range_pct'][1]} % to {t['resolution_pct']} points): "
                      + "; ".join(f"{k} {threshold_text(ts[k])}" for k in KERNELS)]
        lines += [f"  {k} r{x['repeat']}: " + ", ".join(
            f"{r['cpu_quota_pct']} % {'met' if r['met'] else 'missed' if r['met'] is False else '?'}"
            for r in x["probes"]) for k in KERNELS if ts[k] for x in ts[k]["repeats"]]
    if ends:
        lines += ["", "each repeat's search: the rate met / the first missed (what bounded it)"] + ends
    if mixed:
        lines += ["", "rates some runs met and some did not:"] + mixed
    if bad:
        lines += ["", "not monotonic (a rate missed below one that met):"] + bad
    if stalls:
        lines += ["", "the relay's stalls (no progress for the watchdog's stall_ms) and what held it:"] + stalls
    if probs:
        lines += ["", "problems (a repeat with one is left out of its cell):"] + probs
    lines += ["", f"headline: {cap['headline']}"]
    return "\n".join(lines) + "\n"


def _cells(cap, k, crate):
    return [c for c in cap["kernels"][k]["by_quota"] if c["cotenant_rate_pps"] == crate]


def heatmap(cap, k, crate, out, cb):
    """p99.9 (the worst run) over every RT load rate a search tried x
    quota, log colour, the value in each cell while there is room for it;
    a cross where a run was not met."""
    cells = _cells(cap, k, crate)
    rates = sorted({s["target_rate"] for c in cells for s in c["steps"]})
    quotas = sorted(c["cpu_quota_pct"] for c in cells)
    if not rates or not quotas:
        return False
    rows, labels = [], []
    for yi, q in enumerate(quotas):
        c = next(c for c in cells if c["cpu_quota_pct"] == q)
        for xi, r in enumerate(rates):
            runs = [s for s in c["steps"] if s["target_rate"] == r]
            if not runs:
                continue
            worst = max(s["latency_us"].get("p99_9") or 0 for s in runs) / 1000.0
            met = all(s["meets_slo"] for s in runs)
            rows.append((xi, yi, max(worst, cb[0])))
            value = "" if len(rates) > 12 else f"{worst:.0f}" if worst >= 100 else f"{worst:.3g}"
            labels.append((xi, yi, value + ("" if met else " ✗")))
    xt = ", ".join(f'"{r / 1000:.3g}k" {i}' for i, r in enumerate(rates))
    yt = ", ".join(f'"{q}%%" {i}' for i, q in enumerate(quotas))  # a tic label is a format
    script = head(820, 120 + 70 * len(quotas)) + \
        datablock("h", rows) + datablock("l", labels) + f"""
set title {gnuplot_string(f"{k}: p99.9 latency (ms) over RT load x co-tenant quota (✗: not met)")} noenhanced
set xtics ({xt}) rotate by 45 right
set ytics ({yt})
set xrange [-0.5:{len(rates) - 0.5}]
set yrange [-0.5:{len(quotas) - 0.5}]
set xlabel "RT load (datagrams/s)"
set ylabel "co-tenant quota"
set logscale cb
set cbrange [{cb[0]:g}:{cb[1]:g}]
set cblabel "p99.9 (ms)"
set format cb "%g"
set palette defined (0 "#eaf2f8", 1 "#85c1e9", 2 "#f5b041", 3 "#c0392b")
set grid noxtics noytics
unset key
set style fill solid 1.0 noborder
plot $h using 1:2:(0.5):(0.5):3 with boxxyerror fc palette, $l using 1:2:3 with labels font ",11"
"""
    run_gnuplot(script, out)
    return True


def capacity_plot(cap, crate, out):
    """Each kernel's capacity against the co-tenant quota: the median of
    its repeats, the interval over them as an error bar; an unstable cell
    (some repeats found one, some none) as its interval alone, without a
    median; "none" on the axis as a cross, a ceiling of loadgen's as a
    triangle."""
    blocks, plots, top = "", [], 1.0
    for i, k in enumerate(KERNELS):
        found, none, ceil, shaky = [], [], [], []
        for c in _cells(cap, k, crate):
            q, cp = c["cpu_quota_pct"], c["capacity"]
            if cp is None or (not cp["found"]):
                none.append((q, 0))
            elif cp["unstable"]:
                shaky.append((q, (cp["min_pps"] + cp["max_pps"]) / 2, cp["min_pps"], cp["max_pps"]))
            elif c["at_least"]:
                ceil.append((q, cp["median_pps"]))
            else:
                found.append((q, cp["median_pps"], cp["min_pps"], cp["max_pps"]))
            top = max(top, (cp or {}).get("max_pps") or 0)
        colour = COLOURS[i]
        for name, rows, style in (
                (f"f{i}", found, f'with yerrorbars lw 2 pt 7 ps 1.2 lc rgb "{colour}" title '
                                 f'{gnuplot_string(f"{k}: median, interval over the repeats")}'),
                (f"u{i}", shaky, f'with yerrorbars lw 2 dt 3 pt 0 ps 0 lc rgb "{colour}" title '
                                 f'{gnuplot_string(f"{k}: unstable (the interval of the repeats that found one)")}'),
                (f"n{i}", none, f'with points pt 2 ps 2 lw 3 lc rgb "{colour}" title '
                                f'{gnuplot_string(f"{k}: none")}'),
                (f"c{i}", ceil, f'with points pt 9 ps 1.8 lc rgb "{colour}" title '
                                f'{gnuplot_string(f"{k}: at least (loadgen ceiling)")}')):
            if rows:
                blocks += datablock(name, sorted(rows))
                plots.append(f"${name} using 1:2" + (":3:4 " if name[0] in "fu" else " ") + style)
        if found:
            plots.append(f'$f{i} using 1:2 with lines lw 1.5 dt 2 lc rgb "{colour}" notitle')
    if not plots:
        return False
    script = head(820, 480) + blocks + f"""
set title {gnuplot_string(f"capacity at {objectives(cap['slo'])} vs co-tenant quota")} noenhanced
set xlabel "co-tenant CPU quota (% of the relay's CPU)"
set ylabel "RT load (datagrams/s)"
set yrange [-{gnuplot_number(top * 0.04)}:{gnuplot_number(top * 1.15)}]
set offsets graph 0.05, graph 0.05, 0, 0
set key below horizontal samplen 2
"""
    run_gnuplot(script + "plot " + ", \\\n  ".join(plots) + "\n", out)
    return True


def draw_all(cap, plot_dir):
    """Every plot: [(file, caption)]."""
    output_dir(plot_dir)
    made = []
    lat = [s["latency_us"].get("p99_9") or 0 for k in KERNELS
           for c in cap["kernels"][k]["by_quota"] for s in c["steps"]]
    lat = [v / 1000.0 for v in lat if v > 0]
    cb = (min(lat, default=0.01), max(max(lat, default=1.0), min(lat, default=0.01) * 10))
    crates = sorted({c["cotenant_rate_pps"] for k in KERNELS for c in cap["kernels"][k]["by_quota"]})
    for crate in crates:
        tag = "" if len(crates) == 1 else f"-c{crate}"
        f = f"capacity{tag}.svg"
        if capacity_plot(cap, crate, os.path.join(plot_dir, f)):
            made.append((f, "both kernels: capacity against the co-tenant quota, with its range"))
        for k in KERNELS:
            f = f"heatmap-{k}{tag}.svg"
            if heatmap(cap, k, crate, os.path.join(plot_dir, f), cb):
                made.append((f, f"{k} kernel: p99.9 over RT load and co-tenant quota"))
        for q in sorted({c["cpu_quota_pct"] for k in KERNELS for c in _cells(cap, k, crate)}):
            curves = []
            for i, k in enumerate(KERNELS):
                c = next((c for c in _cells(cap, k, crate) if c["cpu_quota_pct"] == q), None)
                if c and c["steps"]:
                    curves.append((k, COLOURS[i], sweep.points(
                        {"mode": "rate", "steps": [_as_sweep_step(s) for s in c["steps"]]})))
            f = f"latency-q{q}{tag}.svg"
            if sweep.latency_plot(curves, cap["slo"], os.path.join(plot_dir, f),
                                  f"quota {q}% (co-tenant {crate} pps): latency vs RT load"):
                made.append((f, f"both kernels at co-tenant quota {q}%: latency vs RT load"))
    return made


def _as_sweep_step(s):
    """A capacity.json step in the shape sweep.points reads."""
    return {"target_rate": s["target_rate"], "cpu_quota_pct": None, "meets_slo": s["meets_slo"],
            "why": s["why"], "saturated": s["saturated"],
            "result": {"latency_us": {"corrected": s["latency_us"]}, "lost": s["lost"] or 0,
                       "sent": s["sent"] or 0, "achieved_rate": s["achieved_rate"],
                       "watched_cgroup": {"nr_throttled": s["throttled_periods"]}}}


EXPLAIN = {
    "capacity": "Red stock, blue patched: the median capacity of each cell's independent "
                "repeats, the bar from the lowest to the highest; a dotted bar alone where "
                "the repeats disagreed (some found one, some none: unstable); a cross on the "
                "axis where no repeat found one (the lowest rate missed), a triangle where "
                "the highest rate loadgen tried still met.",
    "heatmap": "Each cell is one rate a search tried: the RT client's p99.9 latency (the worst "
               "of its runs over the repeats) at that RT load with the co-tenant under that quota. A cross "
               "marks a rate where a run did not meet the objective (latency, a lost datagram "
               "or a missed rate). Blank: the searches did not try that rate there.",
    "latency": "Both kernels at one quota, red stock and blue patched: p50 (dotted), p99 "
               "(dash-dot), p99.9 (solid) and max (dashed) against the RT load, the worst "
               "run of each rate, each objective as a grey dashed line.",
}


# What a stall held by the softirq lock is, for the page (lab/demo/README.md, "Why").
BH_STALL = """<p class="note"><b>A second inversion, which the epoll fix does not reach.</b> A stall
held by the softirq lock: the relay slept in epoll_wait while a co-tenant thread, preempted
inside its softirqs, held the relay's CPU's softirq lock and its cgroup was throttled. On
PREEMPT_RT whatever would wake the relay needs that lock (its timerfd tick is a soft hrtimer, a
datagram sent on that CPU is received in its sender's softirq section), and so does the CFS quota
period's timer that would let the group go: nobody waits for the lock at a priority, so nobody
lends the holder one, and the relay stands still until the watchdog's write to cpu.max. The
chain of each is above; docs/measurements.md has the runs.</p>"""


def render_page(cap, plots, generated):
    colour = GOOD if cap["fix_buys"] else MIXED
    body = "".join(
        f"<tr><td>{q}%</td><td>{crate} pps</td>" + "".join(
            f"<td title='{html_text((by.get(k) or {}).get('why_not') or '')}'"
            + (" class='unstable'" if ((by.get(k) or {}).get("capacity") or {}).get("unstable") else "")
            + f">{html_text(cap_text(by.get(k)))}</td>"
            for k in KERNELS) + "</tr>" for (crate, q), by in _by_cell(cap))
    cells = [(q, k, by[k]) for (_, q), by in _by_cell(cap) for k in KERNELS if k in by]
    ends = "".join(
        f"<tr><td>{html_text(k)}</td><td>{q}%</td><td>{s['repeat']}</td>"
        f"<td>{html_text(_search_text(s))}</td><td>{s['steps'] or 0:g}</td>"
        f"<td>{html_text(CAUSES.get(s['limit'], s['limit'] or ''))}</td></tr>"
        for q, k, c in cells for s in c["searches"])
    mixed = "".join(f"<li><b>{html_text(k)} at {q}%</b>: {html_text(_mixed_rates(c))}</li>"
                    for q, k, c in cells if _mixed_rates(c))
    bad = "".join(f"<li><b>{html_text(k)} at {q}%</b>: {html_text(c['nonmonotonic'])}</li>"
                  for q, k, c in cells if c["nonmonotonic"])
    whys = "".join(f"<li><b>{html_text(k)} at {q}%</b>: {html_text(c['why_not'])}</li>"
                   for q, k, c in cells if c["why_not"])
    stalls = "".join(f"<li><b>{html_text(k)} at {q}%</b>: " + "<br>".join(html_text(x) for x in stall_lines(c))
                     + "</li>" for q, k, c in cells if c.get("stalls"))
    probs = "".join(f"<li><b>{html_text(k)} at {q}%</b>: {html_text(p)}</li>"
                    for q, k, c in cells for p in c["problems"])
    figs = "".join(f'<figure><img src="plots/{html_text(f)}" alt="{html_text(c)}">'
                   f'<figcaption><b>{html_text(c)}.</b> '
                   f'{html_text(EXPLAIN[re.match("[a-z]+", f).group(0)])}</figcaption></figure>'
                   for f, c in plots)
    plan, scen = cap["spec"]["capacity"], cap["spec"].get("scenario") or {}
    n = cap["spec"].get("repeats", 1)
    quotas = sorted({c["cpu_quota_pct"] for k in KERNELS for c in cap["kernels"][k]["by_quota"]})
    planned = cap["quota_for_rate"]
    waker = {1: "over AF_UNIX", 0: "over loopback UDP"}.get(scen.get("af_unix"), "?")
    facts = [("run", cap.get("run_id")), ("date", cap.get("date")), ("clock", cap.get("clock")),
             ("objectives", objectives(cap["slo"])),
             ("repeats", f"{n}, each a guest per kernel of its own (its own boot and salt), "
                         "one search a cell"),
             ("RT load", f"each search from {plan['rt_rate_from_pps']} pps, doubling up to "
                         f"{plan['rt_rate_to_pps']} pps, then bisecting to "
                         f"{plan['resolution_pct']} %; steps of {plan['step_s']} s"),
             ("co-tenant", f"{scen.get('senders', '?')} loadgen senders at "
                           f"{', '.join(map(str, plan['cotenant_rate_pps']))} pps on the relay's "
                           f"CPU, waking it {waker}, busy-waiting for a demand of "
                           f"{plan['cotenant_demand_pct']} % of the quota, cpu.max period "
                           f"{scen.get('period_us', '?')} us"),
             ("run spec", "spec.json: " + json.dumps(cap["spec"], sort_keys=True)),
             ("initramfs sha256", cap.get("initramfs_sha256")),
             ("wall time", f"{cap.get('wall_s')} s")] + \
        [(f"{k} kernel", f"{cap['kernels'][k]['version']} ({cap['kernels'][k]['outcome']})")
         for k in KERNELS]
    dl = "".join(f"<dt>{html_text(a)}</dt><dd>{html_text(b)}</dd>" for a, b in facts)
    conf = f"{100 * (1 - 2.0 ** (1 - n)):.1f}".rstrip("0").rstrip(".")
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Capacity: stock vs patched PREEMPT_RT</title>
<style>{CSS} td.unstable {{ background: #fdebd0; }}</style></head>
<body><main>
<h1>Capacity: what the fix buys</h1>
<div class="verdict" style="background:{colour}"><b>CAPACITY</b>{html_text(cap['headline'])}</div>
<h2 id="capacity">Highest RT load meeting {html_text(objectives(cap['slo']))}</h2>
<table><thead><tr><th>co-tenant quota</th><th>co-tenant rate</th><th>stock</th><th>patched</th></tr></thead>
<tbody>{body}</tbody></table>
<p class="muted">Each cell rests on {n} independent repeat{"s" if n != 1 else ""}: a guest per
kernel of its own for each, with its own boot and salt, so that each follows a trajectory of
its own on the virtual clock, and one search a cell that starts from the lowest rate, never
from what another found. A search doubles the RT load until a step misses, then bisects
between the last rate that met and the first that missed. The capacity is the median of the
repeats, with the interval from the lowest to the highest
{f"(which holds the median of what such a search finds with {conf} % confidence: all {n} fall on one side of it otherwise)" if n > 1 else ""};
where some repeats found one and others none they disagree, and the cell says
<b>unstable</b> with how many found one, instead of a number. "none" where every repeat's
lowest rate missed (not a measured 0); "&gt;=" where the highest rate loadgen tried still
met: a ceiling of the load generator's, not the relay's capacity. A step that lost a
datagram or missed its rate is not met. In brackets: what bounded the searches, from the
cell's kernel trace where it was recorded.</p>
<h2 id="plots">Plots</h2>
{figs}
<h2 id="quota">How tight the co-tenants' quota may be</h2>
{_threshold_html(cap)}
<p>From the rows above (the co-tenant filling each quota): for {planned['rt_rate_pps']:.0f} pps,
every repeat meeting the objective at that quota and every looser one of the grid
({html_text(", ".join(f"{q} %" for q in quotas))}):
{"; ".join(f"<b>{html_text(k)}</b> {html_text(quota_text(planned[k], quotas))}" for k in KERNELS)}.</p>
<h2 id="stalls">The relay's stalls, and what held it</h2>
<ul>{stalls or "<li>no stall in any cell</li>"}</ul>
{BH_STALL if any(x.get("held_by") == "softirq lock" for _, _, c in cells for x in c.get("stalls") or []) else ""}
<h2 id="searches">Each repeat's search</h2>
<table><thead><tr><th>kernel</th><th>quota</th><th>repeat</th><th>met / first missed</th>
<th>steps</th><th>bounded by</th></tr></thead><tbody>{ends}</tbody></table>
{f'<h3>Rates some runs met and some did not</h3><ul>{mixed}</ul>' if mixed else ""}
{f'<h3>Not monotonic</h3><ul>{bad}</ul>' if bad else ""}
<h3>Why a step was not met (the first one per cell)</h3><ul>{whys or "<li>every step met</li>"}</ul>
{f'<p class="note"><b>Problems.</b></p><ul>{probs}</ul>' if probs else ""}
<h2 id="run">What was run</h2>
<dl>{dl}</dl>
<p class="muted">Generated {html_text(generated)} by report/capacity from the result files in this
directory.</p>
</main></body></html>
"""


def _threshold_html(cap):
    """The quota searches: each kernel's answer and its probes in order."""
    ts = {k: cap["kernels"][k].get("quota_threshold") for k in KERNELS}
    if not any(ts.values()):
        return "<p>No quota search ran (the plan's quota_search is off).</p>"
    t = next(v for v in ts.values() if v)

    def row(k, r):
        met = {True: "met", False: "missed"}.get(r["met"], "no result")
        p999 = "" if r["p99_9_us"] is None else f"{r['p99_9_us'] / 1000:.3g} ms"
        return (f"<tr><td>{html_text(k)}</td><td>{r['repeat']}</td><td>{r['probe']}</td>"
                f"<td>{r['cpu_quota_pct']} %</td><td>{met}</td><td>{p999}</td>"
                f"<td>{html_text(r['cause'] or '')}</td></tr>")
    rows = "".join(row(k, r) for k in KERNELS if ts[k] for x in ts[k]["repeats"] for r in x["probes"])
    return (f"<p>The tightest co-tenant quota at which {t['planned_rate_pps']} pps of RT load still "
            f"met the objective, searched between {t['quota_range_pct'][0]} % and "
            f"{t['quota_range_pct'][1]} % to {t['resolution_pct']} points, with "
            f"{_cotenant_wants(t)} (a quota below its demand throttles it): "
            + "; ".join(f"<b>{html_text(k)}</b> {html_text(threshold_text(ts[k]))}" for k in KERNELS)
            + ".</p>\n<table><thead><tr><th>kernel</th><th>repeat</th><th>probe</th><th>quota</th><th>RT load</th>"
            f"<th>p99.9</th><th>cause</th></tr></thead><tbody>{rows}</tbody></table>")


def check(run_dir, screenshot=None):
    """The page is whole: capacity.json and table.txt parse, the page shows
    exactly the SVGs in plots/; with a screenshot PNG, the headline badge
    and both kernels' curves are on it."""
    try:
        cap = read_json(os.path.join(run_dir, "capacity.json"))
    except DataError as e:
        raise CheckError(str(e))
    text, page = read_texts(run_dir, ("table.txt", "capacity.html"))
    for name in ("slo", "headline", "quota_for_rate", "kernels"):
        if name not in cap:
            raise CheckError(f"capacity.json has no {name}")
    for k in KERNELS:
        for c in cap["kernels"][k]["by_quota"]:
            need = {"cpu_quota_pct", "capacity_pps", "capacity", "searches", "rates", "steps", "stalls"}
            if not need <= set(c):
                raise CheckError(f"capacity.json: {k} by_quota lacks {', '.join(sorted(need - set(c)))}")
    if not text.rstrip().splitlines()[-1].startswith("headline: "):
        raise CheckError("table.txt does not end with the headline")
    check_plots(run_dir, page, "capacity.html", True)
    if screenshot:
        colour = GOOD if cap["fix_buys"] else MIXED
        _, height, counts, ink = png.colour_counts(screenshot, [colour] + list(COLOURS[:2]))
        if counts[colour] < 10000:
            raise CheckError("no headline badge on the page")
        for i, k in enumerate(KERNELS):
            if counts[COLOURS[i]] < 500:
                raise CheckError(f"no {k} curve ({COLOURS[i]}) on the page: the plots did not load")
        return counts
    return None
