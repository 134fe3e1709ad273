"""Freezes: what kept a CPU from running the freeze probe on time, from the
kernel's trace.

The probe (lab/demo/scenario/probe.h) is a SCHED_FIFO 90 thread on each
CPU that wakes on a hard timer every 5 ms; a wake-up its limit late or
more is a freeze, and scenario.json lists each one (its CPU, its slot,
when it woke). Its delay has two steps, each seen in the trace: from the
slot to the probe's sched_waking (the timer's interrupt), and from there
to the switch to it. The longer step is the freeze, and the trace says
what filled it:

- "vcpu": the CPU logged nothing for most of it while another CPU logged
  events. QEMU's TCG runs the vCPUs one at a time on one host thread,
  and guest time is the instruction count of whichever runs: a vCPU whose
  turn ended (it had just re-armed its timer inside the interrupt that
  woke the probe) waits while the other runs the rest of its slice. The
  emulated machine's doing, on any host; the row names what the other
  CPU ran meanwhile;
- "idle": the CPU's idle task kept it, with the probe woken and
  need-resched set, taking interrupts, until one of them made it switch:
  the emulated CPU went back to hlt with a task runnable
  (lab/demo/README.md met this on the ticker's CPU);
- "task": a task ran on the CPU instead of the probe (one above the
  probe's priority, or one with interrupts or preemption off, as the
  trace's flag columns say), with the lock it waited for there if any;
- any freeze that overlaps a stall the watchdog recorded says so
  (in_stall): the stalled kernel held that CPU's work too.

What the trace cannot account for stays unexplained, with the reason:
the span not in the trace (lost events, not read), no wake-up of the
probe in it, or a CPU that logged events and ran nothing else.
"""
from collections import Counter

from .chains import rel_s, span_ms

# The guest's clocks and the trace's agree to some microseconds.
SLACK = 50e-6
# A step its CPU logged nothing for this share of, while another CPU
# logged events, is time that vCPU did not execute.
VCPU_SILENT = 0.8
# A task that ran this share of a step is what filled it.
TASK_SHARE = 0.5
# The probes' priority when the scenario does not say (main.c PROBE_PRIO).
PROBE_PRIO = 90
# The causes, as the headline names them.
CAUSES = {"vcpu": "the vCPU did not execute", "idle": "idle with the probe woken", "task": "a task"}


def probe_pid(tl, cpu, rtprio):
    """The pid of the freeze probe on cpu: a demo-scenario task at
    SCHED_FIFO rtprio that ran on that CPU, the busiest there; None when
    the trace has none."""
    prio = 99 - (rtprio if rtprio is not None else PROBE_PRIO)
    counts = Counter()
    for pid, comm in tl.comm.items():
        if comm == "demo-scenario" and tl.own_prio(pid) == prio:
            counts[pid] = sum(1 for r in tl.runs.get(pid, []) if r.cpu == cpu)
    best = counts.most_common(1)
    return best[0][0] if best and best[0][1] else None


# Events whose flag columns say nothing of the task they fired in: the
# scheduler's own (always with interrupts off) and interrupts.
_IRQ_EVENTS = ("sched_switch", "sched_waking", "sched_pi_setprio", "local_timer_entry", "reschedule_entry")


def _off(rows):
    """What the task's own events among rows had off, from their flag
    columns: {"events", "irqs_off", "preemption_off"} (shares), or None
    when none of them tells (no flags, or only the scheduler's and
    interrupts' events)."""
    own = [r for r in rows if r.flags and r.name not in _IRQ_EVENTS and r.flags[2:3] not in ("h", "H")]
    if not own:
        return None
    irqs = sum(1 for r in own if r.flags[0] in "dD")
    pre = sum(1 for r in own if len(r.flags) > 3 and r.flags[3] not in ".0")
    return {"events": len(own), "irqs_off": round(irqs / len(own), 3),
            "preemption_off": round(pre / len(own), 3)}


def _lock_of(tl, pid, cpu, a, b, t0):
    """The longest wait of pid on cpu that overlaps [a, b], as the lock it
    waited for: {"addr", "flags", "begin_s", "wait_ms"}, or None."""
    best = None
    for w in tl.waits_between(a, b):
        if w.pid == pid and w.cpu == cpu:
            span = min(w.until(tl.last), b) - max(w.begin, a)
            if best is None or span > best[0]:
                best = (span, w)
    if best is None:
        return None
    w = best[1]
    return {"addr": hex(w.lock), "flags": w.flags, "begin_s": rel_s(w.begin, t0),
            "wait_ms": span_ms(w.begin, w.end)}


def _shares(tl, cpu, a, b, rows):
    """Who was current on cpu over [a, b], by its events (each task from
    its event to the CPU's next one; the part before the first, the task
    of its last event before a): Counter {pid: seconds}."""
    out = Counter()
    # The switches the trace keeps are those of RT tasks: the task of the
    # CPU's last event before a says better who ran then.
    before = tl.detail_between(cpu, a - 1.0, a)
    t, pid = a, before[-1].pid if before else tl.running(cpu, a)
    for r in rows:
        out[pid] += r.ts - t
        t, pid = r.ts, r.pid
    out[pid] += b - t
    return out


def _above(tl, pid, probe):
    """Whether pid ran at a higher priority than the probe (a kernel prio
    below the probe's)."""
    mine, its = tl.own_prio(pid), tl.own_prio(probe)
    return mine is not None and its is not None and mine < its


def _step(tl, name, cpu, a, b, probe, t0):
    """One step of the delay, [a, b] on cpu: how long, and what filled it."""
    st = {"step": name, "from_s": rel_s(a, t0), "ms": span_ms(a, b)}
    if b - a <= 0:
        return st
    x, y = tl.silence(cpu, a, b)
    busy = {c: n for c, n in ((c, tl.events_between(c, x, y)) for c in tl.seen if c != cpu) if n}
    if y - x >= VCPU_SILENT * (b - a) and busy:
        other = max(busy, key=busy.get)
        ran = [p for p, _ in tl.ran_on(other, x, y) if p is not None]
        st.update(cause="vcpu", silent_ms=span_ms(x, y), silent_from_s=rel_s(x, t0), ticks_traced=tl.ticks,
                  other_cpu=other, other_events=busy[other], other_ran=tl.task(ran[0]) if ran else None)
        return st
    rows = [r for r in tl.detail_between(cpu, a, b) if r.ts > a]
    shares = _shares(tl, cpu, a, b, rows)
    shares.pop(probe, None)
    top = shares.most_common(1)
    if top and top[0][0] is not None and top[0][1] >= TASK_SHARE * (b - a):
        pid, held = top[0]
        mine = [r for r in rows if r.pid == pid]
        if pid == 0:
            # The idle task with the probe woken: the emulated CPU went back
            # to hlt with a task runnable, and took interrupts meanwhile.
            irqs = [r for r in mine if r.name in _IRQ_EVENTS[3:]] if tl.ticks else \
                [r for r in mine if r.flags[2:3] in ("h", "H")]
            st.update(cause="idle", idle_ms=span_ms(0, held), interrupts=len(irqs),
                      need_resched=any(r.flags[1:2] == "N" for r in mine))
            return st
        st.update(cause="task", task=tl.task(pid), ran_ms=span_ms(0, held),
                  above_probe=_above(tl, pid, probe),
                  others=[dict(tl.task(p), ms=span_ms(0, d)) for p, d in shares.most_common(3)[1:]
                          if p not in (None, 0)])
        off = _off(mine)
        if off:
            st["off"] = off
        lock = _lock_of(tl, pid, cpu, a, b, t0)
        if lock:
            st["waited_on"] = lock
        return st
    st["cpu_ran"] = [{"comm": "idle" if p == 0 else "?", "ms": span_ms(0, d)} if p in (None, 0) else
                     dict(tl.task(p), ms=span_ms(0, d)) for p, d in shares.most_common(3)]
    st["cpu_events"] = len(rows)
    return st


def explain(tl, f, probe, t0, stalls, covered):
    """The row of one freeze f (scenario.Freeze) of the probe task probe,
    with STALLS (scenario.Stall) and COVERED(a, b) (whether the trace saw
    all of [a, b]): its cause, the steps of its delay, or why it stays
    unexplained."""
    due, woke = t0 + f.due_s, t0 + f.woke_s
    row = {"cpu": f.cpu, "due_s": f.due_s, "woke_s": f.woke_s, "late_ms": f.late_ms}
    st = next((s for s in stalls if s.start_s <= f.woke_s and f.due_s <= s.end_s), None)
    if st is not None:
        row["in_stall"] = st.index
    if not covered(due - SLACK, woke):
        row["unexplained"] = "the trace does not hold all of it (events lost, or a span not kept)"
        return row
    if probe is None:
        row["unexplained"] = f"no freeze probe of CPU {f.cpu} in the trace"
        return row
    wk = tl.woken_after(probe, due - SLACK)
    ran = tl.ran_after(probe, wk.ts) if wk else None
    if wk is None or wk.ts > woke + SLACK or ran is None or ran > woke + SLACK:
        row["unexplained"] = (f"no wake-up of the probe on CPU {f.cpu} in the trace between its slot and "
                              f"{f.woke_s:.6f} s")
        return row
    steps = [_step(tl, "its timer to its wake-up", f.cpu, due, wk.ts, probe, t0),
             _step(tl, "woken to running", f.cpu, wk.ts, ran, probe, t0)]
    row["woken_s"], row["woken_by"], row["ran_s"] = rel_s(wk.ts, t0), tl.task(wk.waker), rel_s(ran, t0)
    row["steps"] = steps
    dom = max(steps, key=lambda s: s["ms"] or 0)
    if dom.get("cause"):
        row["cause"] = dom["cause"]
    else:
        row["unexplained"] = (f"CPU {f.cpu} logged {dom.get('cpu_events', 0)} events in the "
                              f"{dom['ms']} ms {dom['step']}, and no other task filled it")
    return row


def line(row):
    """A freeze in words, for the terminal and the page."""
    where = f"{row['late_ms']:.3f} ms on CPU {row['cpu']} at {row['due_s']:.3f} s"
    if row.get("unexplained"):
        return f"{where}: unexplained ({row['unexplained']})"
    dom = max(row["steps"], key=lambda s: s["ms"] or 0)
    if dom["cause"] == "vcpu":
        other = dom.get("other_ran") or {}
        tick = ", not even its timer tick," if dom.get("ticks_traced") and dom["silent_ms"] > 1 else ""
        text = (f"{where}: CPU {row['cpu']} logged nothing{tick} for {dom['silent_ms']} ms while CPU "
                f"{dom['other_cpu']} ran {other.get('comm', '?')} ({dom['other_events']} events): the vCPU "
                "did not execute (QEMU runs one vCPU at a time)")
    elif dom["cause"] == "idle":
        text = (f"{where}: CPU {row['cpu']} stayed idle {dom['idle_ms']} ms with the probe woken "
                f"(taking {dom['interrupts']} interrupts meanwhile; the emulated CPU back in hlt "
                "with a task runnable)")
    else:
        t = dom["task"]
        text = f"{where}: {t['comm']}/{t['pid']} ({t['policy']} {t['priority']}) ran {dom['ran_ms']} ms"
        if not dom["above_probe"]:
            text += " below the probe's priority, not preempted"
        off = dom.get("off") or {}
        if off.get("irqs_off", 0) >= 0.5:
            text += " with interrupts off"
        elif off.get("preemption_off", 0) >= 0.5:
            text += " with preemption off"
        if dom.get("waited_on"):
            text += f", waiting for lock {dom['waited_on']['addr']}"
    if "in_stall" in row:
        text += f", inside stall {row['in_stall']}"
    return text
