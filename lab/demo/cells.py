"""cells: the matrix's table, from the demos it ran. A row per kernel
(how it was obtained, its ep->lock, its CFS throttle model as the trace
read it from the kernel that ran), a cell per waiter, each a verdict with
the chain from the trace:

  rt      the RT ticker through relay (make demo's verdict, per kernel:
          its stalls and late RT datagrams), the co-tenant waking relay
          over AF_UNIX (the demo's default)
  rt_udp  the same, the co-tenant waking relay over loopback UDP
  tick    relay's timerfd tick, a non-RT waker (a soft hrtimer, run in
          the CPU's timer softirq): how late it came, and whether its
          waits on ep->lock made it so
  quota   the quota period's timer (sched_cfs_period_timer, a soft hrtimer
          too): how late each refill ran after it was due, and what held
          the longest up

Each demo gives an observation of each of its kernels (observe()); a cell
is the observations of its kernel and waker over the runs (cell()). Then
one sentence per fix, from the rows that differ in that fix alone
(fixes()).
"""
import re

from ..ktrace import page as trace
from ..ktrace import quota
from ..labkit import kernels
from . import judge

WAITERS = {
    "rt": "RT ticker through relay (AF_UNIX waker)",
    "rt_udp": "RT ticker through relay (loopback UDP waker)",
    "tick": "relay's timer tick (non-RT)",
    "quota": "quota period's timer",
}
# How the co-tenant's sends wake the relay in each pair's demos (the
# scenario's af_unix): the flags they add to lab/demo/run, both spelled out
# whatever its default. AF_UNIX first: the demo's default, whose demos the
# table's cells but one are read from (FROM_WAKER).
WAKERS = {
    "unix": ("AF_UNIX", ["--af-unix", "1"]),
    "udp": ("loopback UDP", ["--af-unix", "0"]),
}
# Which demo each waiter is read from: the AF_UNIX waker's (the demo's
# default), but for the RT ticker with the loopback UDP waker.
FROM_WAKER = {"rt": "unix", "rt_udp": "udp", "tick": "unix", "quota": "unix"}
# What an observation calls each waiter: the RT ticker's cells of both
# wakers are its "rt".
OBSERVED = {"rt_udp": "rt"}
GOOD = ("CLEAN", "ON TIME")
BAD = ("STALLED", "HELD UP", "SOME LATE", "MIXED")


def _ms(us):
    return None if us is None else us / 1000


def rt_word(k, rule):
    """make demo's judgement of one kernel's RT side: STALLED (it stalled
    or hung), HELD UP (at least judge.EFFECT_MIN_LATE RT datagrams over
    the late limit), CLEAN (judge.is_clean: what the patched kernel
    must be), else SOME LATE; NO RESULT when the guest gave none."""
    if k.get("outcome") == "hung" or k.get("stalls"):
        return "STALLED"
    if k.get("outcome") != "ok":
        return "NO RESULT"
    if judge.late_counted(k, rule) >= judge.EFFECT_MIN_LATE:
        return "HELD UP"
    return "CLEAN" if judge.is_clean(k, rule) else "SOME LATE"


def _task(t):
    return f"{t.get('comm', '?')}/{t.get('pid', '?')}" if t else "?"


def chain_text(c):
    """One chain of the trace in a line: the waiter, where, the lock, the
    holder and what it was doing, the boost."""
    w = c["waiter"]
    text = (f"{w['comm']} ({w['policy']} {w['priority']}) waited {c['wait']['ms']} ms in {w['where']} "
            f"on ep->lock ({c['lock']['kind']})")
    if c.get("holder"):
        text += f" held by {_task(c['holder'])}, {trace.state(c)}"
    b = c.get("boost")
    text += (f"; boosted to {b['to'][0]} {b['to'][1]} after {b['after_wait_began_ms']} ms" if b
             else "; no boost by the waiter")
    return text


def rt_chain(w):
    """Why the RT side went as it did, from a kernel's why: the worst
    stall's chain, else what the RT waits on ep->lock were and the
    longest one's chain."""
    if not w:
        return "not traced"
    st = w.get("worst_stall")
    if st and st.get("chain"):
        t = w["totals"]
        return (f"{t['stalls_explained']} of {t['stalls']} stalls explained; the worst: "
                + chain_text(st["chain"]))
    c = w["contentions"]
    if not c["rt_waits"]:
        return "no RT task waited on ep->lock"
    text = f"no stall: {c['rt_waits']} RT waits on ep->lock, {c['boosts']} boosting the holder"
    if c.get("lent_by_others"):
        by = ", ".join(f"{k} ({n})" for k, n in c["lent_by"].items())
        text += f", {c['lent_by_others']} ended by {by} boosting the holder through a lock of its own"
    lw = w.get("longest_rt_wait")
    return text + (f"; the longest: {chain_text(lw)}" if lw else "")


def observe(s, k, waker):
    """What one demo (its summary.json S) saw of its kernel K, WAKER the
    co-tenant's: each waiter's verdict word, its figures and chain, and
    the kernel's facts (from the image and from the trace)."""
    ks = s[k]
    rule = judge.Rule.of(s.get("params"))
    w = ks.get("why") or {}
    lat = ks.get("rt_latency_us") or {}
    c = w.get("contentions") or {}
    obs = {"run": s.get("run_id"), "waker": waker, "kernel": ks.get("kernel"),
           "outcome": ks.get("outcome"), "late_ms": rule.late_ms,
           "image": ks.get("image_facts"),
           "model": (w.get("throttle_model") or {}).get("model"),
           "model_from": (w.get("throttle_model") or {}).get("from"),
           "lock_seen": lock_seen(w),
           "rt": {"word": rt_word(ks, rule), "stalls": ks.get("stalls"),
                  "worst_stall_ms": ks.get("worst_stall_ms"),
                  "late": ks.get("rt_late"), "samples": ks.get("rt_samples"),
                  "p99_9_ms": _ms(lat.get("p99_9")), "max_ms": _ms(lat.get("max")),
                  "rt_waits": c.get("rt_waits"), "boosts": c.get("boosts"),
                  "wait_max_us": (c.get("rt_wait_us") or {}).get("max"),
                  "wait_p99_us": (c.get("rt_wait_us") or {}).get("p99"),
                  "chain": rt_chain(w)}}
    obs["tick"] = tick_cell(ks, w)
    q = w.get("quota_timer")
    if not q or not q.get("late_ms"):
        obs["quota"] = {"word": "NOT TRACED", "chain": "the trace has no run of the quota period's timer"}
    else:
        longest = q.get("longest")
        held = longest and longest["late_ms"] > (q.get("late_limit_ms") or quota.MIN_LATE_MS)
        word = "HELD UP" if q["over_late_ms"] or q["never_ran"] else "ON TIME"
        if word == "HELD UP" and not q["never_ran"] and not_held(longest):
            word = "LATE"
        obs["quota"] = {"word": word,
                        "max_ms": q["late_ms"]["max"], "p99_ms": q["late_ms"]["p99"],
                        "over": q["over_late_ms"], "runs": q["late_ms"]["n"],
                        "never_ran": len(q["never_ran"]),
                        "chain": (f"the longest {longest['late_ms']:g} ms late on CPU {longest['cpu']}: "
                                  + quota.held_text(longest["held_by"])) if held else
                        "every refill within the late limit, run by " + ", ".join(q.get("run_by") or ["?"])}
    th = w.get("throttling") or {}
    obs["throttled"] = {"cpu_stat_ms": _ms(ks.get("throttled_us")),
                        "cgroup_ms": th.get("cgroup_throttled_ms"), "tasks_ms": th.get("task_throttled_ms"),
                        "periods": ks.get("throttled_periods")}
    return obs


def not_held(longest):
    """Whether the longest late refill (quota.document's) was late with no
    lock and no throttled task in its way (held_by "cpu": the chain says
    what its CPU did meanwhile), as a LATE tick is: late, but not for
    either fix to prevent."""
    return ((longest or {}).get("held_by") or {}).get("what") == "cpu"


def tick_cell(ks, w):
    """The timer tick's observation of a kernel (KS, its why W): HELD UP
    when a tick came over the late limit and its softirq thread's waits
    on ep->lock account for it (the longest at least half its lateness),
    LATE when they do not (the trace shows no lock held it), else ON
    TIME; "-" when the guest gave no figure."""
    tick = ks.get("relay_latency_us") or {}
    windows = ks.get("timer_late_windows")
    mx = _ms(tick.get("max"))
    chain = tick_chain(w)
    word = "-" if windows is None else "HELD UP" if windows else "ON TIME"
    longest = (((w or {}).get("timer_tick") or {}).get("wait_ms") or {}).get("max")
    if windows and w and mx is not None and (longest or 0) < mx / 2:
        word = "LATE"
        late = (w.get("tick_delivery") or {}).get("longest")
        chain = (f"not on ep->lock: the tick came {mx:.3g} ms late, its softirq thread's longest wait "
                 f"there {longest or 0:g} ms; "
                 + (f"its latest delivery, {late['late_ms']:g} ms after it was due on CPU {late['cpu']}: "
                    + quota.held_text(late["held_by"], "the tick") if late else chain))
    return {"word": word, "max_ms": mx, "p99_9_ms": _ms(tick.get("p99_9")), "late_windows": windows,
            "chain": chain}


def tick_chain(w):
    """The timer tick's chain, from a kernel's why: the longest wait on
    ep->lock of the task that delivered it (its CPU's timer softirq), and
    how many waits there were; else the non-RT waiter's chain."""
    if not w:
        return "not traced"
    t = w.get("timer_tick")
    if not t:
        return trace.non_rt(w)
    return (f"{t['waits']} waits on ep->lock by {', '.join(t['waiters'])} delivering it; the longest: "
            + quota.blocked_text(t["longest"]))


def lock_seen(w):
    """The ep->lock type the trace saw (its waits' kind), or None."""
    for c in ((w or {}).get("longest_rt_wait"), ((w or {}).get("worst_stall") or {}).get("chain")):
        if c and c.get("lock"):
            return c["lock"]["kind"]
    return None


def _span(values, fmt="{:g}"):
    """'a' or 'a-b' of the values that are known, '?' when none is."""
    v = sorted(x for x in values if x is not None)
    if not v:
        return "?"
    lo, hi = fmt.format(v[0]), fmt.format(v[-1])
    return lo if lo == hi else f"{lo}-{hi}"


def _ms_fmt(v):
    return f"{v:.3g}" if v < 100 else f"{v:.0f}"


def figures(waiter, xs):
    """The figures of a cell over its observations XS (one waiter's dicts)."""
    def r(key, fmt="{:g}"):
        return _span([x.get(key) for x in xs], fmt)

    def ms(key):
        return r(key, "{:.3g}")
    if waiter in ("rt", "rt_udp"):
        worst = f" (worst {ms('worst_stall_ms')} ms)" if any(x.get("stalls") for x in xs) else ""
        text = (f"{r('stalls')} stalls{worst}, {r('late')} of {r('samples')} RT datagrams late, "
                f"RT p99.9 {ms('p99_9_ms')} ms, max {ms('max_ms')} ms")
        if any(x.get("rt_waits") for x in xs):
            text += (f"; {r('rt_waits')} RT waits on ep->lock, {r('boosts')} boosting the holder, "
                     f"longest {r('wait_max_us', '{:.0f}')} us")
        return text
    if waiter == "tick":
        return f"max {ms('max_ms')} ms late, {r('late_windows')} windows of 100 ms with a tick over the limit"
    if xs[0]["word"] == "NOT TRACED":
        return "-"
    text = f"{r('runs')} refills, late max {ms('max_ms')} ms (p99 {ms('p99_ms')}), {r('over')} over the limit"
    if any(x.get("never_ran") for x in xs):
        text += f", {r('never_ran')} never ran"
    return text


def _worst(waiter, xs):
    key = {"rt": "stalls", "rt_udp": "stalls", "tick": "max_ms", "quota": "max_ms"}[waiter]
    alt = {"rt": "wait_max_us", "rt_udp": "wait_max_us"}.get(waiter)
    return max(xs, key=lambda x: ((x.get(key) or 0), (x.get(alt) or 0) if alt else 0))


def cell(waiter, observations):
    """One waiter's cell of a kernel over its observations (those of the
    waker FROM_WAKER names): the verdict word (MIXED when the runs
    disagree, each run's word kept), the figures as ranges over the runs,
    and the chain of the worst run; None when no demo gave it."""
    key = OBSERVED.get(waiter, waiter)
    xs = [o[key] for o in observations if o["waker"] == FROM_WAKER[waiter] and key in o]
    if not xs:
        return None
    words = [x["word"] for x in xs]
    word = words[0] if len(set(words)) == 1 else "MIXED"
    out = {"word": word, "runs": len(xs), "words": words, "figures": figures(waiter, xs),
           "chain": _worst(waiter, xs)["chain"], "values": xs}
    if word == "MIXED":
        out["figures"] = ", ".join(f"{w} in {words.count(w)} of {len(words)}"
                                   for w in sorted(set(words), key=words.index)) + "; " + out["figures"]
    return out


def row(pair, kind, observations):
    """A kernel's row: its pair and side, its facts (the image's, the
    trace's where the trace read them), a cell per waiter."""
    first = next((o for o in observations if o.get("image")), observations[0] if observations else {})
    img = first.get("image") or {}
    traced = next((o for o in observations if o.get("model")), {})
    model = traced.get("model") or img.get("throttle_model")
    seen = next((o["lock_seen"] for o in observations if o.get("lock_seen")), None)
    lock = img.get("lock") or seen
    r = {"pair": pair, "side": kind, "kernel": img.get("release") or first.get("kernel"),
         "obtained": img.get("obtained"), "lock": lock, "lock_from": img.get("lock_from"),
         "lock_seen": seen, "model": model,
         "model_from": traced.get("model_from") or
         (img.get("throttle_from") if img.get("throttle_model") else None),
         "probe_ep": img.get("probe_ep"), "offsets_from": img.get("offsets_from"),
         "cells": {w: cell(w, observations) for w in WAITERS}}
    if seen and lock and seen != lock:
        r["lock_note"] = f"the image says {lock}, the trace's waits {seen}"
    return r


def _version(release):
    m = re.match(r"(\d+)\.(\d+)(?:\.(\d+))?", release or "")
    return tuple(int(x or 0) for x in m.groups()) if m else (0, 0, 0)


def _good(c):
    """Every run of cell C good (a MIXED cell by its runs' words)."""
    return bool(c) and all(w in GOOD for w in c.get("words") or [c["word"]])


def _bad(c):
    """A run of cell C bad: MIXED of good runs and LATE ones (late, but
    held by neither lock nor throttle) is neither good nor bad."""
    return bool(c) and any(w in BAD for w in c.get("words") or [c["word"]])


# A waiter's figure that a fix's sentence quotes, before and after.
KEY = {"rt": ("stalls", "stalls", "{:g}"), "rt_udp": ("stalls", "stalls", "{:g}"),
       "tick": ("max_ms", "ms late at most", "{:.3g}"), "quota": ("max_ms", "ms late at most", "{:.3g}")}


def _figure(w, a, b):
    key, unit, fmt = KEY[w]
    va = _span([x.get(key) for x in a["values"]], fmt)
    vb = _span([x.get(key) for x in b["values"]], fmt)
    text = f"{va} -> {vb} {unit}"
    if w in ("rt", "rt_udp"):
        pa = _span([x.get("p99_9_ms") for x in a["values"]], "{:.3g}")
        pb = _span([x.get("p99_9_ms") for x in b["values"]], "{:.3g}")
        text += f", RT p99.9 {pa} -> {pb} ms"
        wa = _span([x.get("wait_max_us") for x in a["values"]], "{:.0f}")
        wb = _span([x.get("wait_max_us") for x in b["values"]], "{:.0f}")
        if wa != "?" and wb != "?":
            text += f", longest RT wait on ep->lock {wa} -> {wb} us"
    return text


def compare(without, with_):
    """What changing from the row WITHOUT a fix to the row WITH it did to
    each waiter: [{"waiter", "verdict": protects | not needed | does not
    protect | worse | unknown, "before", "after", "figures"}]."""
    out = []
    for w in WAITERS:
        a, b = without["cells"].get(w), with_["cells"].get(w)
        if not a or not b or a["word"] == "NOT TRACED" or b["word"] == "NOT TRACED":
            continue
        if _bad(a) and _good(b):
            v = "protects"
        elif _good(a) and _good(b):
            v = "not needed"
        elif _bad(a) and _bad(b):
            v = "does not protect"
        elif _good(a) and _bad(b):
            v = "worse"
        else:
            v = "unknown"
        out.append({"waiter": w, "verdict": v, "before": a["word"], "after": b["word"],
                    "figures": _figure(w, a, b)})
    return out


def _name(r):
    return f"{r['kernel']} ({r['pair']} {r['side']})"


def comparisons(rows):
    """The pairs of rows that differ in one fix alone: the epoll change
    (the same throttle model, ep->lock rwlock_t against spinlock_t: a
    pair's two kernels) and the task-based throttle (the same lock, the
    two models: the newest per-cfs_rq kernel against the oldest
    task-based one). {"epoll": [...], "throttle": [...]}, each
    {"without", "with", "context", "waiters": compare()}."""
    out = {"epoll": [], "throttle": []}
    by_pair = {}
    for r in rows:
        by_pair.setdefault(r["pair"], {})[r["side"]] = r
    for p, sides in by_pair.items():
        a, b = sides.get("stock"), sides.get("patched")
        if a and b and a["lock"] == "rwlock_t" and b["lock"] == "spinlock_t" and a["model"] and \
                a["model"] == b["model"]:
            out["epoll"].append({"without": _name(a), "with": _name(b), "context": a["model"],
                                 "waiters": compare(a, b)})
    for lock in ("rwlock_t", "spinlock_t"):
        old = [r for r in rows if r["lock"] == lock and r["model"] == "cfs_rq"]
        new = [r for r in rows if r["lock"] == lock and r["model"] == "task"]
        if old and new:
            a = max(old, key=lambda r: _version(r["kernel"]))
            b = min(new, key=lambda r: _version(r["kernel"]))
            out["throttle"].append({"without": _name(a), "with": _name(b), "context": lock,
                                    "waiters": compare(a, b)})
    return out


FIX_NAMES = {
    "epoll": "The epoll change (ep->lock a spinlock_t, whose waiters lend its holder their priority)",
    "throttle": "The task-based CFS throttle (v6.18: a throttled task is taken off only on its way back "
                "to user space, holding nothing)",
}
CONTEXT = {"cfs_rq": "with the per-cfs_rq throttle", "task": "with the task-based throttle",
           "rwlock_t": "with ep->lock an rwlock_t", "spinlock_t": "with ep->lock a spinlock_t"}


def sentence(fix, comps):
    """One sentence for FIX from its comparisons: per context, which
    waiters it protects, which it need not, which it does not, with the
    figures before and after."""
    parts = []
    for c in comps:
        said = []
        for verdict in ("protects", "not needed", "does not protect", "worse", "unknown"):
            ws = [x for x in c["waiters"] if x["verdict"] == verdict]
            if ws:
                what = "; ".join(f"{WAITERS[x['waiter']]}: {x['before']} -> {x['after']}, {x['figures']}"
                                 for x in ws)
                said.append({"protects": "protects", "not needed": "has no stall to prevent for",
                             "does not protect": "does not protect", "worse": "makes worse",
                             "unknown": "leaves unsettled"}[verdict] + f" {what}")
        if said:
            parts.append(f"{CONTEXT.get(c['context'], c['context'])} ({c['without']} -> {c['with']}) it "
                         + "; it ".join(said))
    if not parts:
        return f"{FIX_NAMES[fix]}: no two kernels of this matrix differ in it alone."
    return f"{FIX_NAMES[fix]}: " + "; ".join(parts) + "."


def on_7x(rows, comps):
    """What matrix.json states of the 7.x kernels: per kernel (ep->lock
    an rwlock with the task-based throttle; as shipped) each waiter's
    verdict and figures, and what each fix did there."""
    out = {"kernels": [], "fixes": {}}
    for r in rows:
        if _version(r["kernel"])[0] < 7:
            continue
        what = ("ep->lock an rwlock_t, the task-based throttle" if r["lock"] == "rwlock_t"
                else "as shipped: both changes")
        out["kernels"].append({"kernel": r["kernel"], "pair": r["pair"], "side": r["side"], "what": what,
                               "lock": r["lock"], "model": r["model"],
                               "waiters": {w: {"word": c["word"], "figures": c["figures"], "runs": c["runs"],
                                               "values": c["values"]}
                                           for w, c in r["cells"].items() if c}})
    names = {x["kernel"] for x in out["kernels"]}
    for fix, cs in comps.items():
        out["fixes"][fix] = [c for c in cs
                             if any(n.split(" (")[0] in names for n in (c["without"], c["with"]))]
    return out


def on_7x_lines(o):
    """ON_7X (on_7x()) in words: a sentence per 7.x kernel, each waiter's
    verdict with its figures; none when no 7.x kernel ran."""
    out = []
    for k in o["kernels"]:
        said = "; ".join(f"{WAITERS[w]} {c['word']} ({c['figures']})" for w, c in k["waiters"].items())
        out.append(f"{k['kernel']} ({k['pair']} {k['side']}, {k['what']}): {said}.")
    return out


def model_name(model):
    return kernels.THROTTLE_MODELS.get(model, "not known")
