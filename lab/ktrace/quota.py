"""The co-tenant's CPU quota as the trace saw it: when each refill of the
quota period's timer was due and when it ran, what held a late one up,
and how long the cgroup and its tasks were throttled (what cpu.stat's
throttled time counts depends on the throttle model).

The period timer (sched_cfs_period_timer) is a soft hrtimer on PREEMPT_RT:
the CPU's timer softirq runs it, in ksoftirqd/N or, from v6.13,
ktimers/N. A refill that waits for that softirq waits for whatever holds
it: a throttled task that held the CPU's softirqs when it was taken off
(chains.softirq_holds), or the softirq thread itself blocked on a lock,
such as ep->lock behind a throttled holder (the relay's timerfd tick runs
ep_poll_callback in that same softirq). The refill is what would let the
holder go: the deadlock of the original reports.
"""
import bisect

from . import chains
from .chains import rel_s, span_ms

# How long before a late timer fell due an hrtimer callback may have been
# entered for it to be the one its CPU's softirq thread was still in.
CALL_BEFORE_S = 0.05
# A refill that ran this much after it was due counts as held up, at the
# least: the guest's timer interrupts and softirqs take some tens of
# microseconds, the scenario's late limit is milliseconds.
MIN_LATE_MS = 1.0
# The tasks that run a CPU's timer softirq on PREEMPT_RT.
SOFTIRQ_THREADS = ("ksoftirqd/", "ktimers/")
# What a softirq thread's stack says it ran when it blocked: the relay's
# timerfd (a soft hrtimer too), by its function.
TIMER_FRAMES = {"timerfd_tmrproc": "the relay's timerfd tick"}


def runs(tl):
    """Each run of the period timer with its lateness: [(TimerRun, late s)],
    those whose arming the trace has."""
    return [(r, r.ran - r.due) for r in tl.timer_runs if r.due is not None]


def softirq_thread(tl, pid, cpu):
    comm = tl.comm.get(pid, "")
    return comm.startswith(SOFTIRQ_THREADS) and comm.rsplit("/", 1)[-1] == str(cpu)


def held_by(tl, run, offset, t0, holds):
    """What held one late refill up, from its due time to its run, on its
    CPU: the softirq thread's wait on a lock (its chain, when it is a
    ready-list lock), a throttled task holding the CPU's softirqs, or who
    ran there. A dict with "what" in words."""
    a, b = run.due, run.ran
    waits = [w for w in tl.waits_between(a, b) if w.cpu == run.cpu and softirq_thread(tl, w.pid, run.cpu)]
    w, covered = chains.covering(waits, a, b)
    if w is not None and covered >= 0.5 * (b - a):
        return dict(blocked(tl, w, offset, t0), what="softirq_thread_blocked")
    for h in holds:
        end = h["held_until_s"]
        if h["cpu"] == run.cpu and h["throttled_s"] <= rel_s(a, t0) and (end is None or end >= rel_s(a, t0)):
            return {"what": "softirqs_held_by_throttled_task", "hold": h}
    ran = [(tl.task(pid) if pid is not None else None, round(sec * 1000, 3))
           for pid, sec in tl.ran_on(run.cpu, a, b)[:3]]
    return dict(delivery(tl, run), what="cpu", ran=[{"task": t, "ms": ms} for t, ms in ran],
                cpu_silent_ms=span_ms(0, tl.silent(run.cpu, a, b)))


def delivery(tl, run):
    """How a late timer RUN that nothing held up came to run: its timer
    softirq raised (by the CPU's timer interrupt), its thread woken, and
    run, each some time after the one before (a wake-up that left
    need-resched unset lets an idle CPU sleep on to its next interrupt);
    what the CPU's softirq threads served meanwhile, the hrtimer callback
    it was in when it fell silent, and what the other CPUs logged then."""
    a, b = run.due, run.ran
    raised = next((t for t in tl.hrtimer_raised.get(run.cpu, []) if a <= t <= b), None)
    wake = next((w for w in tl.wakings.get(run.pid, []) if (raised or a) <= w.ts <= b), None)
    out = {"softirq_raised_ms": span_ms(a, raised), "thread_woken_ms": span_ms(raised or a, wake and wake.ts)}
    soft, call = tl.served(run.cpu, a, b)
    if soft:
        out["softirqs_ms"] = {k: round(v * 1000, 3) for k, v in soft.most_common()}
    if call is not None:
        out["longest_callout"] = {"function": call.what, "ms": span_ms(call.start, call.end),
                                  "by": tl.task(call.pid)}
    # The other CPUs logging nothing but their ticks in the silence: no
    # CPU ran traced code then (the emulator runs one vCPU at a time).
    x, y = tl.silence(run.cpu, a, b)
    out["others_events"] = sum(tl.events_between(c, x, y) for c in tl.seen if c != run.cpu)
    calls = tl.hrtimer_calls.get(run.cpu, [])
    i = bisect.bisect_right(calls, x, key=lambda c: c.ts) - 1
    if i >= 0 and a - calls[i].ts <= CALL_BEFORE_S:
        out["silence_after"] = {"function": calls[i].what, "ms_before": span_ms(calls[i].ts, x),
                                "by": tl.task(calls[i].pid)}
    if wake is not None:
        irqs = tl.timer_irqs.get(run.cpu, [])
        between = irqs[bisect.bisect_right(irqs, wake.ts):bisect.bisect_right(irqs, b)]
        out.update(woken_need_resched=need_resched(wake.flags), ran_after_wake_ms=span_ms(wake.ts, b),
                   timer_irqs_before_run=len(between),
                   last_timer_irq_ms=span_ms(wake.ts, between[-1]) if between else None)
    return out


def need_resched(flags):
    """Whether an event's flag columns (tracefile.FLAG_COLUMNS) say
    need-resched was set, any kind of it; None without the columns."""
    return flags[1] != "." if len(flags) >= 2 else None


def blocked(tl, w, offset, t0):
    """A softirq thread's wait W: who, how long, on what lock, running
    what (TIMER_FRAMES, from its stack), and, on a ready-list lock, its
    chain; a reader of the rwlock queued behind pending writers waits for
    what they wait for, which the chain of the writer's wait that covers
    most of it says ("behind")."""
    out = {"waiter": tl.task(w.pid), "wait_ms": span_ms(w.begin, w.end), "lock": hex(w.lock),
           "running": next((f for f in w.stack if f in TIMER_FRAMES), None)}
    if chains.on_ready_list(tl, w, offset):
        out["chain"] = chains.chain(tl, w, offset, t0)
        writers = [x for x in tl.waits_between(w.begin, w.until(tl.last))
                   if x.lock == w.lock and x.pid != w.pid and "WRITE" in x.flags]
        x, _ = chains.covering(writers, w.begin, w.until(tl.last))
        if "READ" in w.flags and x is not None:
            out["behind"] = chains.chain(tl, x, offset, t0)
    return out


def tick_waits(tl, offset, t0, cpu):
    """The waits on a ready-list lock of the task that delivers the
    relay's timerfd tick (its timer softirq: a wait whose stack runs
    timerfd_tmrproc, or, for a lock whose waits have no stack, one by
    CPU's softirq thread): how many, how long (ms), and the longest as
    blocked() says it; None when there is none."""
    ws = [w for w in tl.waits if w.end is not None and chains.on_ready_list(tl, w, offset) and
          ("timerfd_tmrproc" in w.stack if w.stack else softirq_thread(tl, w.pid, cpu))]
    if not ws:
        return None
    longest = max(ws, key=lambda w: w.end - w.begin)
    return {"waits": len(ws), "wait_ms": chains.percentiles([(w.end - w.begin) * 1000 for w in ws]),
            "waiters": sorted({tl.comm.get(w.pid, "?") for w in ws}),
            "longest": blocked(tl, longest, offset, t0)}


def never_ran(tl):
    """Armings the trace saw come due with no run of the timer after them
    up to the next arming (or the trace's end), MIN_LATE_MS past due or
    more: [(TimerArm, until s)]."""
    out = []
    for h, arms in tl.timer_arms.items():
        ran = [r.ts for r in tl.timer_runs if r.hrtimer == h]
        for i, arm in enumerate(arms):
            until = arms[i + 1].ts if i + 1 < len(arms) else tl.last
            k = bisect.bisect_left(ran, arm.ts)
            if until - arm.due >= MIN_LATE_MS / 1000 and not (k < len(ran) and ran[k] <= until):
                out.append((arm, until))
    return out


def document(tl, t0, late_ms, offset, holds):
    """chains.json's quota_timer: how many refills ran, how late (ms), how
    many later than the scenario's LATE_MS and than MIN_LATE_MS, the
    longest with what held it up; None when the trace has no run of the
    timer (not traced, or never armed)."""
    if not tl.timer_runs and not tl.timer_arms:
        return None
    rs = runs(tl)
    late = sorted(((r, x) for r, x in rs), key=lambda p: -p[1])
    limit = late_ms if isinstance(late_ms, (int, float)) else None
    over = [(r, x) for r, x in rs if limit is not None and x * 1000 > limit]
    worst = late[0] if late else None
    out = {"runs": len(tl.timer_runs), "runs_with_due": len(rs),
           "late_ms": chains.percentiles([x * 1000 for _, x in rs]),
           "late_limit_ms": limit, "over_late_ms": len(over),
           "over_min_ms": sum(1 for _, x in rs if x * 1000 > MIN_LATE_MS), "min_ms": MIN_LATE_MS,
           "cpus": sorted({r.cpu for r in tl.timer_runs}),
           "run_by": sorted({tl.comm.get(r.pid, "?") for r in tl.timer_runs})}
    gone = never_ran(tl)
    out["never_ran"] = [{"armed_s": rel_s(a.ts, t0), "due_s": rel_s(a.due, t0), "until_s": rel_s(u, t0),
                         "waited_ms": span_ms(a.due, u)} for a, u in gone[:20]]
    if worst and worst[1] * 1000 > MIN_LATE_MS:
        out["longest"] = longest(tl, worst, offset, t0, holds)
    out["line"] = line(out)
    return out


def longest(tl, worst, offset, t0, holds):
    """The latest run of a timer, WORST (a TimerRun and its lateness), with
    what held it up (held_by)."""
    r, x = worst
    return {"cpu": r.cpu, "due_s": rel_s(r.due, t0), "ran_s": rel_s(r.ran, t0),
            "late_ms": round(x * 1000, 3), "run_by": tl.task(r.pid),
            "held_by": held_by(tl, r, offset, t0, holds)}


def tick_delivery(tl, t0, late_ms, offset, holds):
    """chains.json's tick_delivery: the relay's timerfd tick as its timer
    softirq delivered it (the trace's runs of a timerfd's hrtimer, each
    against when it was due): how late (ms), how many later than the
    scenario's LATE_MS, the latest with what held it up (held_by); None
    when the trace has no such run (a trace from before they were
    recorded). The relay's own figure adds its loop's wake-up to this."""
    rs = [(r, r.ran - r.due) for r in tl.tick_runs if r.due is not None]
    if not rs:
        return None
    limit = late_ms if isinstance(late_ms, (int, float)) else None
    worst = max(rs, key=lambda p: p[1])
    out = {"runs": len(tl.tick_runs), "late_ms": chains.percentiles([x * 1000 for _, x in rs]),
           "late_limit_ms": limit,
           "over_late_ms": sum(1 for _, x in rs if limit is not None and x * 1000 > limit),
           "run_by": sorted({tl.comm.get(r.pid, "?") for r in tl.tick_runs})}
    if worst[1] * 1000 > MIN_LATE_MS:
        out["longest"] = longest(tl, worst, offset, t0, holds)
    return out


def held_text(h, timer="the refill"):
    """What held a refill (or another TIMER's run) up, in words."""
    what = h["what"]
    if what == "softirq_thread_blocked":
        return blocked_text(h)
    if what == "softirqs_held_by_throttled_task":
        x = h["hold"]
        return (f"CPU {x['cpu']}'s softirqs held by {x['holder']['comm']}/{x['holder']['pid']}, "
                f"throttled {x['holding']}")
    ran = ", ".join(f"{ran_name(r['task'])} {r['ms']} ms" for r in h["ran"])
    text = f"the CPU ran {ran or 'nothing traced'} (silent {h['cpu_silent_ms']} ms"
    n = h.get("others_events")
    text += ")" if n is None else f"; the other CPUs logged {n} event{'' if n == 1 else 's'} then)"
    if h.get("softirqs_ms"):
        text += "; its softirq threads served " + ", ".join(
            f"{k} {v} ms" for k, v in h["softirqs_ms"].items())
    c = h.get("longest_callout")
    if c and c["ms"] >= MIN_LATE_MS:
        text += f", the longest timer callback {c['function']} {c['ms']} ms (by {c['by']['comm']})"
    c = h.get("silence_after")
    if c and (h.get("cpu_silent_ms") or 0) >= MIN_LATE_MS:
        text += (f"; the silence began in the hrtimer callback {c['function']} (by {c['by']['comm']})"
                 if not c["ms_before"] else
                 f"; the last hrtimer callback before the silence: {c['function']} (by {c['by']['comm']}), "
                 f"{c['ms_before']} ms before it")
    if h.get("softirq_raised_ms") is not None:
        text += f"; its timer softirq raised {h['softirq_raised_ms']} ms after {timer} was due"
    if h.get("thread_woken_ms") is not None:
        text += (f", its thread woken {h['thread_woken_ms']} ms after that"
                 if h.get("softirq_raised_ms") is not None else
                 f"; its thread woken {h['thread_woken_ms']} ms after {timer} was due")
        if h.get("woken_need_resched") is False:
            text += " without need-resched set"
        if (h.get("ran_after_wake_ms") or 0) >= MIN_LATE_MS:
            text += f", and run {h['ran_after_wake_ms']} ms after its wake-up"
            n = h.get("timer_irqs_before_run")
            if n:
                text += (f", after the CPU's {'next timer interrupt' if n == 1 else f'{n} timer interrupts'} "
                         f"({h['last_timer_irq_ms']} ms)")
    return text


def ran_name(task):
    """Who ran, in words: the idle task is the CPU idle."""
    if task is None:
        return "not known"
    return "idle" if task["pid"] == 0 else task["comm"]


def blocked_text(h):
    """A softirq thread's wait (blocked()) in words."""
    w = h["waiter"]
    ran = f", running {TIMER_FRAMES[h['running']]}" if h.get("running") in TIMER_FRAMES else ""
    c = h.get("chain")
    if not c:
        return f"{w['comm']} (the CPU's timer softirq{ran}) waited {h['wait_ms']} ms on lock {h['lock']}"
    text = (f"{w['comm']} (the CPU's timer softirq{ran}) waited {h['wait_ms']} ms in "
            f"{c['waiter']['where']} on ep->lock ({c['lock']['kind']})")
    b = h.get("behind")
    if b:
        text += f", queued behind {b['waiter']['comm']}/{b['waiter']['pid']}'s pending write"
        c = b
    if c.get("holder"):
        st = c.get("holder_state") or {}
        text += (f", held by {c['holder']['comm']}/{c['holder']['pid']}"
                 + (f", throttled in {st['throttled_in']}" if st.get("state") == "throttled" else
                    f" ({st.get('state', '?')})"))
        if st.get("unthrottled_by_text"):
            text += f" until {st['unthrottled_by_text']}"
    b = c.get("boost")
    if b:
        text += f"; boosted to {b['to'][0]} {b['to'][1]} after {b['after_wait_began_ms']} ms"
    return text


def line(doc):
    """The quota timer in one line."""
    lat = doc["late_ms"]
    if not lat:
        return f"the quota period's timer ran {doc['runs']} times, its arming not in the trace"
    text = (f"the quota period's timer ran {lat['n']} times, late p99 {lat['p99']:g} ms, "
            f"max {lat['max']:g} ms")
    if doc["over_late_ms"]:
        text += f", {doc['over_late_ms']} over {doc['late_limit_ms']:g} ms"
    x = doc.get("longest")
    if x and x["late_ms"] > (doc["late_limit_ms"] or MIN_LATE_MS):
        text += f" (the longest on CPU {x['cpu']}: {held_text(x['held_by'])})"
    if doc["never_ran"]:
        n = len(doc["never_ran"])
        text += f"; {n} arming{'s' if n != 1 else ''} came due and never ran"
    return text


def throttling(tl, t0):
    """How long the co-tenant was throttled, as the trace saw it: the
    cgroup's run queues (tg_throttle_down to tg_unthrottle_up) and, on the
    task-based model, its tasks (each from its own throttle on its way to
    user space to the unthrottle). cpu.stat's throttled time counts the
    first per cfs_rq and, from v6.18 (eb962f251fbb), from the first
    task's throttle of the hierarchy: the second."""
    groups = [iv for ivs in tl.throttles.values() for iv in ivs]
    tasks = [iv for ivs in tl.task_throttles.values() for iv in ivs]

    def total(ivs):
        return round(sum((iv.end - iv.start) for iv in ivs if iv.end is not None) * 1000, 3)
    return {"model": tl.model, "cgroup_throttles": len(groups), "cgroup_throttled_ms": total(groups),
            "task_throttles": len(tasks) if tl.model == "task" else None,
            "task_throttled_ms": total(tasks) if tl.model == "task" else None,
            "tasks_throttled": len(tl.task_throttles) if tl.model == "task" else None}
