"""judge: make capacity's results, from what each repeat's guests left
(lab/capacity/grid: one loadgen sweep --search per co-tenant quota and
rate, and the quota search's probes, in KERNEL/rN for repeat N) to
capacity.json: each cell's capacity over its independent repeats with
the interval (lab/capacity/repeats), unstable when they disagree, what
bounded each search, the relay's stalls with what held it, the quota
each kernel needs for the planned rate, and the headline."""
import glob
import os
import re

from report import formats, search
from report.files import DataError, number, read_json
from report.slo import objectives

from . import repeats
from ..labkit.spec import SpecError, read_back
from .run import PARAMS

KERNELS = ("stock", "patched")


def _cell_params(d):
    """The part of the spec a cell ran: its cell.json, beside its
    results."""
    cell = formats.read(formats.Cell, os.path.join(d, "cell.json"))
    return {"cpu_quota_pct": cell.cpu_quota_pct, "cotenant_rate_pps": cell.cotenant_rate_pps,
            "cotenant_spin_us": cell.cotenant_spin_us}


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
    return formats.read(formats.Chains, path) if os.path.exists(path) else None


def trace_steps(d, steps):
    """Each of STEPS (one repeat's, in order) given its cause from the
    cell's kernel trace (chains.json), when it was traced."""
    doc = _chains(d)
    if doc is None:
        return
    path = os.path.join(d, "cotenant", "chains.json")
    if doc.steps is None or len(doc.steps) != len(steps):
        raise DataError(f"{path}: steps: {len(doc.steps or [])} of them, the search had {len(steps)}")
    for mine, theirs in zip(steps, doc.steps):
        if not mine["meets_slo"]:
            mine["cause"] = theirs.cause or mine["cause"]
        mine["trace"] = {"covered": True if theirs.covered is None else theirs.covered,
                         "lock_waits": theirs.lock_waits, "lock_wait_ms_max": theirs.lock_wait_ms_max,
                         "relay_cpu_share": theirs.relay_cpu_share}


def _stalls(d, r):
    """The relay's stalls in one repeat's cell, each with what held it
    (lab/ktrace/explain's chain) or why the trace could not say:
    [{"repeat", "start_s", "length_ms", "explained", "chain", "text"}]."""
    doc = _chains(d)
    if doc is None:
        return []
    out = []
    for st in doc.stalls:
        out.append({"repeat": r, "start_s": st.get("start_s"), "length_ms": st.get("length_ms"),
                    "explained": "unexplained" not in st, "chain": st.get("chain"),
                    "held_by": st.get("held_by"),
                    "text": st.get("line") or st.get("unexplained") or "explained"})
    return out


def search_limit(steps, i):
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
    out = []
    for f in ("failed", "cotenant-ended-early"):
        if os.path.exists(os.path.join(d, f)):
            with open(os.path.join(d, f), encoding="utf-8") as fh:
                out.append(fh.read().strip())
    return out


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
        end = dict(search_limit(steps, j["intervals"][0]), repeat=r)
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


def _gain(p, s):
    """What the fix buys at one quota, patched cell P against stock cell S:
    (the medians' difference, (its lowest, its highest) over the repeats);
    none counts as 0."""
    def span(c):
        cap = c.get("capacity") or {}
        med = c["capacity_pps"] or 0
        return med, cap.get("min_pps") or med, cap.get("max_pps") or med
    pm, plo, phi = span(p)
    sm, slo, shi = span(s)
    return pm - sm, (plo - shi, phi - slo)


def headline_cell(kernels):
    """The quota where the fix buys the most rate: the tightest quota whose
    gain, over its repeats, cannot be told from the largest median gain
    (the two intervals overlap), so that a headline does not move from
    run to run with medians its repeats do not separate."""
    stock = {(c["cpu_quota_pct"], c["cotenant_rate_pps"]): c for c in kernels["stock"]["by_quota"]}
    cells = [(p, stock[(p["cpu_quota_pct"], p["cotenant_rate_pps"])])
             for p in kernels["patched"]["by_quota"]
             if (p["cpu_quota_pct"], p["cotenant_rate_pps"]) in stock]
    if not cells:
        return None
    gains = [(_gain(p, s), p, s) for p, s in cells]
    (_, (lo, hi)), _, _ = max(gains, key=lambda g: (g[0][0], -g[1]["cpu_quota_pct"]))
    (median, _), p, s = min(
        (g for g in gains if g[0][1][0] <= hi and lo <= g[0][1][1]),
        key=lambda g: g[1]["cpu_quota_pct"])
    return median, p, s


def pps(x):
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
        p = formats.read(formats.Probe, f)
        problems = _problems(d)
        row = {"repeat": r, "probe": p.probe, "cpu_quota_pct": p.cpu_quota_pct,
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


def quota_search(run_dir, k, plan):
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


def cotenant_wants(t):
    """What the quota search's co-tenant wanted of the CPU, in words."""
    if t["demand_pct"]:
        return f"a co-tenant busy-waiting for {t['demand_pct']} % of the CPU besides its sends"
    return "a co-tenant wanting only what its sends cost"


def threshold_one(x):
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
    (threshold_one), or "46 % (41-46 % over 3 repeats)", "any (met at 10
    %, the lowest tried, in 3 repeats)", "none (3 repeats)", "unstable: a
    quota that met in 2 of 3 repeats (41-46 %)"."""
    if t is None:
        return "not searched"
    c = t["tightest"]
    if c is None:
        return "no result (a problem, below)"
    clean = [x for x in t["repeats"] if x["probes"] and not x["problems"]]
    if c["repeats"] == 1:
        return threshold_one(clean[0])
    n = c["repeats"]
    lo, hi = t["quota_range_pct"]
    if c["unstable"]:
        span = (f"{c['min_pps']:.0f}-{c['max_pps']:.0f}" if c["max_pps"] > c["min_pps"]
                else f"{c['max_pps']:.0f}")
        return f"unstable: a quota that met in {c['found']} of {n} repeats ({span} %)"
    if not c["found"]:
        return f"none (missed at {hi} %, the highest tried, in {n} repeats)"
    if all(x["loosest_missed_pct"] is None for x in clean):
        return f"any (met at {lo} %, the lowest tried, in {n} repeats)"
    return f"{c['median_pps']:.0f} % ({c['min_pps']:.0f}-{c['max_pps']:.0f} % over {n} repeats)"


def build(run_dir):
    """capacity.json's content from a run directory."""
    run = formats.read(formats.RunRecord, os.path.join(run_dir, "run.json"))
    spec_path = os.path.join(run_dir, "spec.json")
    spec = formats.read(formats.Spec, spec_path)
    if spec.capacity is None:
        raise DataError(f"{spec_path}: not a capacity run's spec (no \"capacity\" object)")
    try:
        plan = read_back(spec.capacity, PARAMS, f"{spec_path}: capacity")
    except SpecError as e:
        raise DataError(str(e))
    kernels, slo = {}, None
    for k in KERNELS:
        reps = _repeat_dirs(run_dir, k)
        boots = []
        for r, d in reps:
            path = os.path.join(d, "boot.json")
            boot = (formats.read(formats.Boot, path) if os.path.exists(path)
                    else formats.Boot(outcome="no-results"))
            boots.append({"repeat": r, "outcome": boot.outcome, "version": boot.version,
                          "salt_us": boot.salt_us, "wall_s": boot.wall_s})
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
                      "repeats": boots, "by_quota": cells, "quota_threshold": quota_search(run_dir, k, plan)}
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
                         + f" ({cotenant_wants(t)})")
        else:
            headline += ", ".join(f"{k} {quota_text(planned[k], quotas)}" for k in KERNELS)
    else:
        headline = f"{objective}: " + ", ".join(
            f"{k} {kernels[k]['outcome']}" for k in KERNELS)
    return {"run_id": run.run_id, "date": run.date, "clock": spec.clock,
            "initramfs_sha256": run.initramfs_sha256, "spec": formats.raw(spec),
            "wall_s": run.wall_s, "slo": slo, "headline": headline,
            "fix_buys": bool(best) and (best[1]["capacity_pps"] or 0) > (best[2]["capacity_pps"] or 0),
            "quota_for_rate": planned, "kernels": kernels}
