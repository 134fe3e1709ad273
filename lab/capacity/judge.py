"""judge: make capacity's results, from what each kernel's guest left
(lab/capacity/grid: one loadgen sweep --search per co-tenant quota and
rate, and the quota search's probes) to capacity.json: each cell's
capacity with its range and what bounded it, the quota each kernel
needs for the planned rate, and the headline."""
import glob
import os
import re

from report import formats, search
from report.files import DataError, number, read_json
from report.slo import objectives

KERNELS = ("stock", "patched")


def _cell_params(d):
    """The part of the spec a cell ran: its cell.json, beside its
    results."""
    cell = formats.read(formats.Cell, os.path.join(d, "cell.json"))
    return {"cpu_quota_pct": cell.cpu_quota_pct, "cotenant_rate_pps": cell.cotenant_rate_pps,
            "cotenant_spin_us": cell.cotenant_spin_us}


def _step(k, s):
    r = s.get("result") or {}
    watched = r.get("watched_cgroup") or {}
    hgrm = s.get("hgrm")
    lat = (r.get("latency_us") or {}).get("corrected")
    if not isinstance(lat, dict):
        raise DataError(f"{k}: search {s['search']:g} at {s['target_rate']:g} pps: "
                        "no result.latency_us.corrected")
    return {
        "search": s["search"], "target_rate": s["target_rate"],
        "achieved_rate": r.get("achieved_rate"), "meets_slo": s["meets_slo"],
        "why": s.get("why"), "cause": s.get("cause"), "saturated": s.get("saturated", False),
        "latency_us": lat, "sent": r.get("sent"), "lost": r.get("lost"),
        "throttled_periods": watched.get("nr_throttled"),
        "throttled_us": watched.get("throttled_us"),
        "periods": watched.get("nr_periods"),
        # the guest's /results is <kernel>/results on the host
        "hgrm": re.sub(r"^/results/", f"{k}/results/", hgrm) if hgrm else None,
    }


# A missed step's cause: the trace's (lock, cpu, loss; lab/ktrace/explain)
# where the cell was traced, else loadgen's own word (loadgen(1) SWEEP).
CAUSES = {"lock": "RT waits on the ready-list lock held by a throttled task",
          "cpu": "the relay's CPU was busy", "loss": "datagrams were lost",
          "throttled": "the co-tenant was throttled during the step",
          "objective": "the latency objective", "sender": "the load generator could not send the rate"}


def trace_steps(d, c):
    """Each step's cause from the cell's kernel trace (lab/ktrace's
    chains.json, beside the co-tenant's results), when it was traced."""
    path = os.path.join(d, "cotenant", "chains.json")
    if not os.path.exists(path):
        return
    steps = formats.read(formats.Chains, path).steps
    if steps is None or len(steps) != len(c["steps"]):
        raise DataError(f"{path}: steps: {len(steps or [])} of them, the search had {len(c['steps'])}")
    for mine, theirs in zip(c["steps"], steps):
        if not mine["meets_slo"]:
            mine["cause"] = theirs.cause or mine["cause"]
        mine["trace"] = {"covered": True if theirs.covered is None else theirs.covered,
                         "lock_waits": theirs.lock_waits, "lock_wait_ms_max": theirs.lock_wait_ms_max,
                         "relay_cpu_share": theirs.relay_cpu_share}


def search_limits(c, intervals):
    """Each search's end with what bounded it: the cause of the step that
    missed at its first missed rate (the lowest rate for "none"); a
    ceiling of loadgen's for "to" and "sender"."""
    out = []
    for i in intervals:
        n, end = i["search"], i["end"]
        missed = [s for s in c["steps"] if s["search"] == n and not s["meets_slo"]
                  and i.get("missed") is not None and s["target_rate"] == i["missed"]]
        cause = {"to": "ceiling", "sender": "ceiling"}.get(end) or \
            (missed[-1]["cause"] if missed else None)
        out.append({"search": n, "end": end, "met_pps": i.get("met"), "missed_pps": i.get("missed"),
                    "steps": i.get("steps"), "limit": cause,
                    "warm_start_pps": i.get("start") if i.get("warm") else None})
    return out


def _problems(d):
    """What the grid wrote in D when a cell or a probe went wrong: its
    failure, or a co-tenant that ended before the RT load did."""
    return [open(os.path.join(d, f), encoding="utf-8").read().strip()
            for f in ("failed", "cotenant-ended-early") if os.path.exists(os.path.join(d, f))]


def _cell(run_dir, k, d):
    ran = _cell_params(d)
    problems = _problems(d)
    c = {**ran, "capacity_pps": None, "capacity": None, "at_least": False, "limit": None,
         "monotonic": None, "nonmonotonic": None, "verdict": None, "why_not": None,
         "problems": problems, "searches": [], "rates": [], "steps": []}
    path = os.path.join(d, "sweep.json")
    if not os.path.exists(path):
        c["problems"].append("no sweep.json: the searches did not finish")
        return c, None
    j = read_json(path)
    if not search.is_search(j):
        raise DataError(f"{path}: not a loadgen sweep --search (mode {j.get('mode')!r})")
    search.check(j, path)
    cap = j["capacity"]
    c.update(monotonic=j.get("monotonic"), nonmonotonic=j.get("nonmonotonic"),
             verdict=j["verdict"], rates=j["rates"], steps=[_step(k, x) for x in j["steps"]])
    trace_steps(d, c)
    c["searches"] = search_limits(c, j["intervals"])
    if cap:
        c["capacity"] = {"median_pps": cap["target_rate"], "min_pps": cap.get("min_rate"),
                         "max_pps": cap["max_rate"], "searches": cap["searches"]}
        c.update(capacity_pps=cap["target_rate"], at_least=cap["at_least"])
    limits = [s["limit"] for s in c["searches"] if s["limit"]]
    c["limit"] = max(set(limits), key=limits.count) if limits else None
    fail = next((x for x in c["steps"] if not x["meets_slo"]), None)
    if fail:
        why = fail.get("why")
        cause = CAUSES.get(fail.get("cause"))
        c["why_not"] = (f"search {fail['search']:g}, {fail['target_rate']:.0f} pps: "
                        + (f"{cause} ({why})" if cause else str(why)))
    if problems:  # a cell whose co-tenant was not there throughout proves nothing
        c["capacity_pps"] = c["capacity"] = None
    return c, j


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


def pps(x):
    return "none" if x is None else f"{x:.0f}"


def cap_text(c):
    """A cell's capacity: "none (lock)", "26000 pps (24000-28000, 3
    searches; cpu)", ">= 60000 pps (the highest tried)"."""
    if c is None:
        return "no result"
    if c["problems"]:
        return "no result (a problem, below)"
    limit = c.get("limit")
    if c["capacity_pps"] is None:
        return "none" + (f" ({limit})" if limit else "")
    cap = c["capacity"]
    n = cap["searches"]
    span = (f"{pps(cap['min_pps'])}-{pps(cap['max_pps'])}, {n} searches" if n > 1
            else "1 search")
    if c["at_least"]:
        return f">= {c['capacity_pps']:.0f} pps ({span}; a ceiling of loadgen's)"
    return f"{c['capacity_pps']:.0f} pps ({span}" + (f"; {limit})" if limit else ")")


def quota_for(kernel, rate, crate):
    """The tightest co-tenant quota of the grid from which up every quota
    met RATE in every search (the lowest capacity of its searches at or
    above it): {cpu_quota_pct, tightest_tried}, or None when even the
    loosest did not."""
    cells = sorted((c for c in kernel["by_quota"] if c["cotenant_rate_pps"] == crate),
                   key=lambda c: c["cpu_quota_pct"])
    ok = None
    for c in reversed(cells):
        cap = c["capacity"]
        if not cap or cap["min_pps"] is None or cap["min_pps"] < rate or c["problems"]:
            break
        ok = c["cpu_quota_pct"]
    if ok is None:
        return None
    return {"cpu_quota_pct": ok, "tightest_tried": ok == cells[0]["cpu_quota_pct"]}


def quota_text(q, quotas):
    if q is None:
        return f"none of {min(quotas)}-{max(quotas)} %" if len(quotas) > 1 else f"not {quotas[0]} %"
    return f"{q['cpu_quota_pct']} %" + (" (the tightest tried)" if q["tightest_tried"] else "")


def quota_search(run_dir, k, plan):
    """Kernel K's quota search (lab/capacity/grid: the tightest co-tenant
    quota at which the planned RT rate met, with a co-tenant of a fixed
    CPU demand): every probe in order, the tightest quota that met and the
    loosest that missed; None when the plan ran none."""
    if plan.get("quota_search") != "on":
        return None
    probes = []
    for f in glob.glob(os.path.join(run_dir, k, "results", "grid", "threshold", "q*", "probe.json")):
        d = os.path.dirname(f)
        p = formats.read(formats.Probe, f)
        problems = _problems(d)
        row = {"probe": p.probe, "cpu_quota_pct": p.cpu_quota_pct,
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
            st = _step(k, {**steps[0], "search": 1})
            row.update(met=st["meets_slo"], cause=st["cause"], why=st["why"],
                       p99_9_us=st["latency_us"].get("p99_9"),
                       throttled_periods=st["throttled_periods"])
        probes.append(row)
    probes.sort(key=lambda r: r["probe"])
    met = [r["cpu_quota_pct"] for r in probes if r["met"] is True]
    missed = [r["cpu_quota_pct"] for r in probes if r["met"] is False]
    return {"planned_rate_pps": plan["planned_rate_pps"], "demand_pct": plan["threshold_demand_pct"],
            "quota_range_pct": plan["threshold_quota_pct"],
            "resolution_pct": plan["threshold_resolution_pct"],
            "tightest_met_pct": min(met) if met else None,
            "loosest_missed_pct": max(missed) if missed else None,
            "monotonic": not (met and missed and max(missed) > min(met)),
            "problems": [f"probe {r['probe']} at {r['cpu_quota_pct']} %: {p}"
                         for r in probes for p in r["problems"]],
            "probes": probes}


def cotenant_wants(t):
    """What the quota search's co-tenant wanted of the CPU, in words."""
    if t["demand_pct"]:
        return f"a co-tenant busy-waiting for {t['demand_pct']} % of the CPU besides its sends"
    return "a co-tenant wanting only what its sends cost"


def threshold_text(t):
    """A kernel's quota search: "70 % (65 % missed; throttled)", "any
    (met at 5 %, the lowest tried)", "none (missed at 95 %, the highest
    tried; lock)"."""
    if t is None:
        return "not searched"
    if t["problems"] or not t["probes"]:
        return "no result (a problem, below)"
    lo, hi = t["quota_range_pct"]
    tight, loose = t["tightest_met_pct"], t["loosest_missed_pct"]
    cause = next((r["cause"] for r in t["probes"]
                  if r["met"] is False and r["cpu_quota_pct"] == loose), None)
    why = f"; {cause}" if cause else ""
    if tight is None:
        return f"none (missed at {loose} %, the highest tried{why})"
    if loose is None:
        return f"any (met at {tight} %, the lowest tried)"
    order = "" if t["monotonic"] else "; not monotonic"
    return f"{tight} % ({loose} % missed{why}{order})"


def build(run_dir):
    """capacity.json's content from a run directory."""
    run = formats.read(formats.RunRecord, os.path.join(run_dir, "run.json"))
    spec_path = os.path.join(run_dir, "spec.json")
    spec = formats.read(formats.Spec, spec_path)
    if spec.capacity is None:
        raise DataError(f"{spec_path}: not a capacity run's spec (no \"capacity\" object)")
    plan = spec.capacity
    kernels, slo = {}, None
    for k in KERNELS:
        boot_path = os.path.join(run_dir, k, "boot.json")
        boot = (formats.read(formats.Boot, boot_path) if os.path.exists(boot_path)
                else formats.Boot(outcome="no-results"))
        cells = []
        dirs = sorted(os.path.dirname(f) for f in
                      glob.glob(os.path.join(run_dir, k, "results", "grid", "*", "cell.json")))
        for d in dirs:
            c, j = _cell(run_dir, k, d)
            cells.append(c)
            if j is not None:
                if slo is not None and j["slo"] != slo:
                    raise DataError(f"{d}: objectives {j['slo']} differ from {slo}")
                slo = j["slo"]
        cells.sort(key=lambda c: (c["cotenant_rate_pps"], c["cpu_quota_pct"]))
        kernels[k] = {"outcome": boot.outcome, "version": boot.version,
                      "by_quota": cells, "quota_threshold": quota_search(run_dir, k, plan)}
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
