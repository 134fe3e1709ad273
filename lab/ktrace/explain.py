"""explain: every stall and every listed RT datagram of one guest's run,
explained from its kernel trace (chains.py), as chains.json.

    lab/ktrace/explain RESULTS_DIR [--name NAME] [--out FILE] [--sweep JSON [--missed-only]]
                       [--client LOADGEN_JSON]

RESULTS_DIR holds what the guest sent back: scenario.json, trace.txt.gz
(or the raw trace/, read through trace-cmd), trace-stats.txt,
trace-probes.txt. Writes RESULTS_DIR/chains.json (or --out) and prints
its headline. Besides the stalls and the slow RT datagrams, every late
wake-up of the freeze probes is explained (freezes.py). With --client
the RT client is a loadgen run of its own (a test host's RT client unit,
around demo-scenario --watch): its JSON lists the slow RT datagrams. Exit status: 0 written; 2 bad arguments;
65 a trace or scenario.json that cannot be read (the file and line named);
66 no trace in RESULTS_DIR.
"""
import argparse
import bisect
import json
import math
import os
import sys
from collections import Counter

from ..labkit.run import LabError, write_json
from . import chains, freezes, quota, scenario, tracefile
from .chains import covering, percentiles, rel_s, span_ms

EX_DATA = 65
EX_NOINPUT = 66
# A relay that ran this share of a step is the step's bottleneck.
CPU_BUSY = 0.9
# --missed-only reads each missed step from this long before it.
WINDOW_LEAD = 1.0
# A stall is the lock's when one RT wait on a ready-list lock covers at
# least this share of it.
STALL_COVERED = 0.5


def lost(results):
    """What the trace could not see: the ring buffer's dropped and overrun
    events per CPU, and the kretprobe's misses (kprobe_profile's third
    column)."""
    out = {"dropped": 0, "overrun": 0, "kprobe_missed": 0}
    for cpu in tracefile.stats(os.path.join(results, "trace-stats.txt")).values():
        out["dropped"] += int(cpu.get("dropped events", 0))
        out["overrun"] += int(cpu.get("overrun", 0))
    probes = os.path.join(results, "trace-probes.txt")
    for n, line in enumerate(tracefile.small_text(probes), 1):
        w = line.split()
        if len(w) != 3 or not all(x.isdigit() and len(x) <= 20 for x in w[1:]):
            raise tracefile.TraceError(f"{probes}:{n}: not a kprobe_profile line: {line.strip()[:80]!r}")
        out["kprobe_missed"] += int(w[2])
    out["total"] = sum(out.values())
    return out


# The span of each freeze whose flag columns the timeline keeps
# (freezes.py): from this long before its slot to after its wake-up.
FREEZE_DETAIL = 1e-3


class GuestTrace:
    """One guest's trace and scenario, and what explains what."""

    def __init__(self, results, name=None, windows=None, kernel=None, client=None):
        """WINDOWS: [(a, b)] on the trace's clock, the only spans read (a
        trace that lost events is read whole: what it saw then ends where
        a buffer filled). A trace whose guest kept some spans only
        (tracefile.kept) is read there, and no further. KERNEL: what the
        host knew of the image before it booted (labkit.kernels.facts):
        the ready-list lock's offset in struct eventpoll is its, the
        trace's recurring distance a check on it. CLIENT: the JSON of a
        loadgen run that was the RT client (scenario.with_client)."""
        self.kernel = kernel or {}
        self.scen = scenario.read(results)
        if client:
            self.scen = scenario.with_client(self.scen, client)
        self.t0 = self.scen.t0
        self.lost = lost(results)
        # No span at all (a sweep that met at every rate it tried, a short
        # one): read whole.
        wanted = _merged(windows) if windows and not self.lost["dropped"] else None
        self.windows = _within(wanted, tracefile.kept(results))
        keep = None
        if self.windows is not None:
            starts = [a for a, _ in self.windows]

            def keep(ts):
                i = bisect.bisect_right(starts, ts) - 1
                return i >= 0 and ts <= self.windows[i][1]
        detail = _merged([(self.t0 + f.due_s - FREEZE_DETAIL, self.t0 + f.woke_s + FREEZE_DETAIL)
                          for p in self.scen.probes for f in p.freezes or ()])
        self.tl = chains.Timeline(tracefile.ievents(results, keep), detail)
        self.offset_seen, self.offset_support = chains.ready_list_offset(self.tl)
        self.offset = (self.kernel.get("offsets") or {}).get("eventpoll.lock")
        self.offset_from = self.kernel.get("offsets_from") if self.offset is not None else None
        if self.offset is None:
            self.offset = self.offset_seen
            self.offset_from = "the trace: a lock-to-instance distance that recurs"
        self.tl.model, self.model_from = throttle_model(results, self.kernel)
        self.name = name
        self.nevents = self.tl.count
        # A buffer that filled dropped what came after: the trace sees
        # everything only up to the last event of the first CPU whose
        # buffer filled (a quiet CPU's last event says nothing).
        full = [cpu for cpu, st in tracefile.stats(os.path.join(results, "trace-stats.txt")).items()
                if st.get("dropped events")]
        self.covered_to = min((self.tl.seen[c][-1] if self.tl.seen.get(c) else -math.inf for c in full),
                              default=math.inf)
        p = self.scen.params
        self.relay = self._task("relay", p.get("relay_prio"))
        self.ticker = self._task(self.scen.client, p.get("ticker_prio"))

    def _task(self, comm, rtprio):
        """The pid of the task named comm at SCHED_FIFO rtprio (an interrupt
        thread may share the priority, never the name), the busiest if
        several: None when the trace has none."""
        if not isinstance(rtprio, int):
            return None
        pids = [pid for pid in self.tl.prio
                if self.tl.own_prio(pid) == 99 - rtprio and self.tl.comm.get(pid) == comm]
        return max(pids, key=lambda pid: len(self.tl.runs.get(pid, [])), default=None)

    def ready_list_waits(self, a, b, rt=True):
        """The waits on a ready-list lock overlapping [a, b], by RT tasks
        (rt=True) or by the others."""
        return [w for w in self.tl.waits_between(a, b)
                if self.tl.is_rt(w.pid) == rt and chains.on_ready_list(self.tl, w, self.offset)]

    def best_wait(self, a, b, rt=True):
        """The ready-list wait that covers most of [a, b], and how much of
        it (s): (None, 0.0) when there is none."""
        return covering(self.ready_list_waits(a, b, rt), a, b)

    def best_chain(self, a, b, rt=True):
        """The chain of the ready-list wait that covers most of [a, b]."""
        w, _ = self.best_wait(a, b, rt)
        return chains.chain(self.tl, w, self.offset, self.t0) if w else None

    def stall(self, s):
        a, b = self.t0 + s.start_s, self.t0 + s.end_s
        row = {"stall": s.index, "start_s": s.start_s, "length_ms": s.length_ms, "lift_s": s.lift_s}
        # A stall is the relay's loop standing still: its own wait is the
        # chain when it covers the stall. The ticker's, often as long, may
        # be queued behind the relay's pending write instead (an rwlock
        # reader behind a writer), one step further from the holder.
        waits = self.ready_list_waits(a, b)
        w, covered = covering([x for x in waits if x.pid == self.relay], a, b)
        if covered < STALL_COVERED * (b - a):
            w, covered = covering(waits, a, b)
        if w is not None:
            row["chain"] = chains.chain(self.tl, w, self.offset, self.t0)
        if w is not None and row["chain"]["complete"] and covered >= STALL_COVERED * (b - a):
            row.update(held_by="ready-list lock", line=lock_line(row["chain"]))
        else:
            # No wait on the lock held the relay: was it asleep while its
            # CPU's softirq lock was held by a throttled task?
            sc = None
            if self.relay is not None and self.tl.flags:
                sc = chains.softirq_stall(self.tl, self.relay, a, b, self.t0)
            if sc is not None and sc["complete"] and (sc["covers_ms"] or 0) >= STALL_COVERED * (b - a) * 1000:
                row.update(chain=sc, held_by="softirq lock", line=chains.softirq_line(sc))
            elif w is None:
                row["unexplained"] = "no RT task waited on a ready-list lock during the stall"
            elif not row["chain"]["complete"]:
                row["unexplained"] = "; ".join(row["chain"]["missing"])
            else:
                # A wait of a millisecond inside a stall of 200 is not what
                # held the relay (the patched kernel's waits are that short).
                row["unexplained"] = (f"the longest RT wait on a ready-list lock in it covers "
                                      f"{covered * 1000:.1f} ms of its {(b - a) * 1000:.1f} ms")
            if "unexplained" in row:
                if sc is not None:
                    row["softirq_chain"] = sc
                    row["unexplained"] += ("; its CPU's softirq lock held by a throttled task: "
                                           + "; ".join(sc.get("missing") or [f"covers {sc['covers_ms']} ms"]))
                elif not self.tl.flags:
                    row["unexplained"] += "; the trace has no flag columns to see who held the softirqs"
        other = self.best_chain(a, b, rt=False)
        if other:
            row["non_rt_waiter"] = other
        return row

    def late(self, s):
        a, b = self.t0 + s.due_s, self.t0 + s.echo_s
        row = {"due_s": s.due_s, "latency_ms": span_ms(a, b)}
        for st in self.scen.stalls:
            if st.start_s <= s.echo_s and s.due_s <= st.end_s:
                row["in_stall"] = st.index
                break
        c = self.best_chain(a, b)
        if c is not None and c["wait"]["ms"] is not None and c["wait"]["ms"] >= 0.1:
            row["chain"] = c
        else:
            row["path"] = self.path(a, b)
            if row["path"]["dominant"] is None:
                row["unexplained"] = "no wait on a ready-list lock, and its path is not in the trace"
        return row

    def path(self, a, b):
        """Where an RT datagram's time went when it waited on no lock: the
        steps from its slot to the echo (the ticker woken by its timer and
        run, the relay woken by the datagram and run), each with its
        length and, for the wait to run, what the CPU was doing."""
        tl, steps, t = self.tl, [], a
        # The ticker wakes its lead before the slot and waits on the clock.
        lead = (self.scen.params.get("ticker_lead_us") or 0) / 1e6
        for pid, who in ((self.ticker, "ticker"), (self.relay, "relay")):
            if pid is None:
                continue
            # The guest's clock and the trace's agree to some microseconds.
            wk = tl.woken_after(pid, t - (lead if who == "ticker" else 0) - 50e-6)
            if wk is None or wk.ts > b:
                continue
            ran = tl.ran_after(pid, wk.ts)
            steps.append({"step": f"until the {who} was woken", "ms": max(0.0, span_ms(t, wk.ts))})
            if ran is None or ran > b:
                t = max(t, wk.ts)
                continue
            busy = tl.running(wk.cpu, wk.ts)
            steps.append({"step": f"the {who}: woken to running on CPU {wk.cpu}", "ms": span_ms(wk.ts, ran),
                          "cpu_ran": "idle" if busy == 0 else (tl.task(busy) if busy else None),
                          "cpu_silent_ms": span_ms(0, tl.silent(wk.cpu, wk.ts, ran))})
            t = max(t, ran)
            if who == "ticker":
                t = self._sent(pid, wk.cpu, a, t, b, steps)
        steps.append({"step": "to the echo", "ms": span_ms(t, b)})
        dom = max(steps, key=lambda s: s["ms"] or 0)
        return {"steps": steps, "dominant": dom if len(steps) > 1 else None}

    def _sent(self, pid, cpu, slot, t, b, steps):
        """The ticker's datagram into the relay's socket: the ticker's own
        ep_poll_callback after its slot. It spins to the slot on the clock,
        so a step long past the slot with its CPU silent (no event at all)
        is time that CPU did not execute: under QEMU's TCG the vCPUs run
        one at a time. Returns when the step ended (t when not seen)."""
        start = max(t, slot)
        cb = self.tl.callback_after(pid, start)
        if cb is None or cb.entry > b:
            return t
        steps.append({"step": "the ticker's datagram into the relay's socket", "ms": span_ms(start, cb.entry),
                      "cpu_silent_ms": span_ms(0, self.tl.silent(cpu, start, cb.entry))})
        return cb.entry

    def contentions(self):
        """Every wait on a ready-list lock: by RT waiters (with the holder's
        boost, if any) and by the others."""
        tl = self.tl
        rt, other, boosts, lent = [], 0, [], []
        self.longest = self.longest_other = None

        def longer(w, than):
            return than is None or w.end - w.begin > than.end - than.begin
        for w in tl.waits:
            if w.end is None or not chains.on_ready_list(tl, w, self.offset):
                continue
            if not tl.is_rt(w.pid):
                other += 1
                if longer(w, self.longest_other):
                    self.longest_other = w
                continue
            rt.append(w)
            if longer(w, self.longest):
                self.longest = w
            hs = chains.holders(tl, w, self.offset)
            own = [(pid, b) for pid, b in ((pid, chains.boost_of(tl, pid, w)) for pid, _ in hs) if b]
            if own:
                boosts.append(own[0])
                continue
            # Lent by a third task, through a lock the holder has besides
            # ep->lock: on a kernel whose timer softirqs run in ktimers/N,
            # its wait for the CPU's softirq lock.
            b = next((b for b in (chains.boost_of(tl, pid, w, others=True) for pid, _ in hs) if b), None)
            if b:
                lent.append((w, b))
        return {"rt_waits": len(rt), "rt_wait_us": percentiles([(w.end - w.begin) * 1e6 for w in rt]),
                "rt_waiters": sorted({tl.comm.get(w.pid, "?") for w in rt}),
                "boosts": len(boosts),
                "boosted": sorted({tl.comm.get(pid, "?") for pid, _ in boosts}),
                "boosted_to": sorted({tuple(b["to"]) for _, b in boosts}),
                "boosted_us": percentiles([b["boosted_ms"] * 1000 for _, b in boosts
                                           if b["boosted_ms"] is not None]),
                "lent_by_others": len(lent),
                # {"ktimers/1": n, ...}, the most first; through: the locks
                "lent_by": dict(Counter(b["by"]["comm"] for _, b in lent).most_common()),
                "lent_through": dict(Counter(b["through"] for _, b in lent).most_common()),
                "lent_by_wait_us": percentiles([(w.end - w.begin) * 1e6 for w, _ in lent]),
                "non_rt_waits": other}

    def running_share(self, pid, a, b):
        """The share of [a, b] pid spent running, from its switches."""
        if pid is None or b <= a:
            return None
        ins = [r.ts for r in self.tl.runs.get(pid, [])]
        outs = [r.ts for r in self.tl.stops.get(pid, [])]
        busy = 0.0
        # Whether it was running at a: its last switch before a was in.
        last_in = max((t for t in ins if t <= a), default=None)
        last_out = max((t for t in outs if t <= a), default=None)
        on = last_in is not None and (last_out is None or last_in > last_out)
        t = a
        for ts, kind in sorted([(x, 1) for x in ins if a < x < b] + [(x, 0) for x in outs if a < x < b]):
            if on:
                busy += ts - t
            on, t = kind == 1, ts
        if on:
            busy += b - t
        return busy / (b - a)

    def step(self, st):
        """What the trace says of one sweep step (loadgen's run JSON with
        start_mono_s): the waits of RT tasks on the ready-list lock whose
        holder sat throttled and unboosted (chains.unlent), the relay's share of its CPU, the co-tenant's
        stalls; and, for a step that missed its objective, the cause: the
        lock, the CPU, loss, or what loadgen said."""
        r = st["result"]
        a = r["start_mono_s"]
        b = a + r["elapsed_s"]
        if b > self.covered_to or not self.read(a, b):
            # Past where the trace saw everything, or not read: no word
            # rather than a wrong one (the report keeps loadgen's).
            return {"target_rate": st.get("target_rate"), "covered": False, "cause": None}
        # A wait counts when its holder sat throttled, lent nothing, for a
        # millisecond of it: the patched kernel's waiter boosts the holder
        # within microseconds, and the wait's rest is not the quota's.
        locked = [(w.end - w.begin) * 1000 for w in self.ready_list_waits(a, b)
                  if chains.unlent(self.tl, w, self.offset) >= 1e-3]
        share = self.running_share(self.relay, a, b)
        out = {"target_rate": st.get("target_rate"), "covered": True, "lock_waits": len(locked),
               "lock_wait_ms_max": round(max(locked), 3) if locked else 0.0,
               "relay_cpu_share": None if share is None else round(share, 3)}
        if st.get("meets_slo"):
            out["cause"] = None
        elif locked:
            out["cause"] = "lock"
        elif share is not None and share >= CPU_BUSY:
            out["cause"] = "cpu"
        elif r.get("lost"):
            out["cause"] = "loss"
        else:
            out["cause"] = st.get("cause") or "objective"
        return out

    def softirq_held(self):
        """The CPU's softirqs held by a throttled task (chains.softirq_holds):
        how often, how long, how many past the scenario's late limit, and
        the longest, which is the non-RT waker's chain: the relay's timerfd
        tick is a softirq, and no task waits for it to boost the holder."""
        spans = chains.softirq_holds(self.tl, self.t0)
        late_ms = self.scen.params.get("late_ms")
        held = [h["held_ms"] for h in spans if h["held_ms"] is not None]
        done = [h for h in spans if h["complete"]]
        return {"throttles_holding": len(spans), "held_ms": percentiles(held), "late_ms": late_ms,
                "over_late_ms": sum(1 for v in held if isinstance(late_ms, (int, float)) and v > late_ms),
                "ended_by_boost": sum(1 for h in done if h["ended_by"] == "boost"),
                "longest": max(spans, key=lambda h: h["held_ms"] or 0, default=None)}

    def read(self, a, b):
        """Whether [a, b] (on the trace's clock) is within what was read, to
        a microsecond: a span's ends went through sums and the guest's
        six decimals (trace/kept.txt)."""
        return self.windows is None or any(x - 1e-6 <= a and b <= y + 1e-6 for x, y in self.windows)

    def covers(self, a, b):
        """Whether the trace saw all of [a, b]: within what was read, what
        it recorded, and before a buffer filled."""
        return (self.read(a, b) and self.tl.first is not None and self.tl.first <= a
                and b <= min(self.tl.last, self.covered_to))

    def freezes(self):
        """The freeze probes' late wake-ups, each explained (freezes.py),
        and their count: {"limit_ms", "counted", "listed", "rows", ...}.
        A probe that counted more freezes than it listed (a scenario from
        before the list, or a list that filled) leaves the rest
        unexplained."""
        rows, counted, unlisted, limit = [], 0, 0, None
        for p in self.scen.probes:
            counted += p.count
            limit = p.min_ms if p.min_ms is not None else limit
            pid = freezes.probe_pid(self.tl, p.cpu, p.prio)
            rows += [freezes.explain(self.tl, f, pid, self.t0, self.scen.stalls, self.covers)
                     for f in p.freezes or ()]
            unlisted += p.count - len(p.freezes or ())
        for r in rows:
            r["text"] = freezes.line(r)
        rows.sort(key=lambda r: r["due_s"])
        causes = Counter(r["cause"] for r in rows if "unexplained" not in r)
        return {"limit_ms": limit, "counted": counted, "rows": rows, "unlisted": unlisted,
                "in_stalls": sum(1 for r in rows if "in_stall" in r),
                "by_cause": {c: causes[c] for c in freezes.CAUSES},
                "explained": sum(causes.values()),
                "unexplained": sum(1 for r in rows if "unexplained" in r) + unlisted}

    def document(self):
        stalls = [self.stall(s) for s in self.scen.stalls
                  if self.read(self.t0 + s.start_s, self.t0 + s.end_s)]
        late = [self.late(s) for s in self.scen.listed if self.read(self.t0 + s.due_s, self.t0 + s.echo_s)]
        doc = {"kernel": self.name,
               "trace": {"events": self.nevents, "lost": self.lost, "complete": self.lost["total"] == 0,
                         "span_s": [rel_s(self.tl.first, self.t0), rel_s(self.tl.last, self.t0)],
                         # null: all of it; else the spans read, seconds since t0
                         "read_s": self.windows and [[rel_s(a, self.t0), rel_s(b, self.t0)]
                                                     for a, b in self.windows]},
               "ready_list_lock": {"offset_in_eventpoll": self.offset, "from": self.offset_from,
                                   "trace_offset": self.offset_seen, "support": self.offset_support,
                                   "trace_agrees": None if self.offset_seen is None
                                   else self.offset_seen == self.offset},
               "throttle_model": {"model": self.tl.model, "from": self.model_from},
               "image": {k: self.kernel.get(k) for k in ("release", "obtained", "lock", "lock_from",
                                                         "throttle_model", "probe_ep", "offsets_from")}
               if self.kernel else None,
               "stalls": stalls, "late": late,
               "late_listed_over_us": self.scen.list_over_us,
               "late_list_complete": self.scen.listed_complete,
               "freezes": self.freezes(),
               "contentions": self.contentions()}
        # The longest wait of an RT task on a ready-list lock, stall or not:
        # on the patched kernel, what priority inheritance made of the worst.
        doc["longest_rt_wait"] = (chains.chain(self.tl, self.longest, self.offset, self.t0)
                                  if self.longest else None)
        # And of a task that is not RT (the relay's timerfd tick through
        # ksoftirqd): a waiter that cannot boost a throttled holder.
        doc["longest_non_rt_wait"] = (chains.chain(self.tl, self.longest_other, self.offset, self.t0)
                                      if self.longest_other else None)
        # Only the flag columns say which task held its CPU's softirqs (a
        # trace without them gets no word rather than a wrong one).
        doc["softirq_held"] = self.softirq_held() if self.tl.flags else None
        # The quota's own timer, and how long the cgroup and its tasks
        # were throttled (what cpu.stat counted).
        holds = chains.softirq_holds(self.tl, self.t0) if self.tl.flags else []
        doc["quota_timer"] = quota.document(self.tl, self.t0, self.scen.params.get("late_ms"), self.offset,
                                            holds)
        doc["throttling"] = quota.throttling(self.tl, self.t0)
        # The relay's timerfd tick, delivered by its CPU's timer softirq:
        # that task's waits on the relay's ready-list lock.
        cpu = self.scen.params.get("cpu")
        doc["timer_tick"] = (quota.tick_waits(self.tl, self.offset, self.t0, cpu)
                             if isinstance(cpu, int) else None)
        # And each of its deliveries against when it was due: what held up
        # a late one that no lock did.
        doc["tick_delivery"] = quota.tick_delivery(self.tl, self.t0, self.scen.params.get("late_ms"),
                                                   self.offset, holds)
        doc["totals"] = {"stalls": len(stalls),
                         "stalls_explained": sum(1 for s in stalls if "unexplained" not in s),
                         "late": len(late), "late_explained": sum(1 for s in late if "unexplained" not in s),
                         "late_by_lock": sum(1 for s in late if "chain" in s),
                         "late_vcpu_idle": sum(1 for s in late if vcpu_idle(s)),
                         "freezes": doc["freezes"]["counted"],
                         "freezes_explained": doc["freezes"]["explained"],
                         "freezes_unexplained": doc["freezes"]["unexplained"]}
        doc["line"] = headline(doc)
        return doc


def lock_line(c):
    """A ready-list lock chain in words: who waited where, on which lock,
    held by whom doing what."""
    w, h, st = c["waiter"], c["holder"], c["holder_state"]
    text = (f"RT {w['comm']} ({w['policy']} {w['priority']}) waited in {w['where']} on ep->lock "
            f"({c['lock']['kind']}) held by {h['comm']}/{h['pid']}")
    if st.get("state") == "throttled":
        text += f", throttled in {st['throttled_in']}"
        if st.get("unthrottled_by_text"):
            text += f", let go by {st['unthrottled_by_text']}"
    return text


# The task-based model's task work, which a kernel has only with it.
TASK_MODEL_SYMBOL = "throttle_cfs_rq_work"


def throttle_model(results, kernel):
    """The CFS throttle model of the kernel that ran (chains.MODELS) and
    how it is known: the trace's probe on TASK_MODEL_SYMBOL (ktrace places
    it where the kernel's symbols have it), the kernel's own symbols (a
    raw trace's kallsyms), or what the host read from the image (KERNEL:
    its BTF). (None, why) when nothing tells."""
    probes = os.path.join(results, "trace-probes.txt")
    names = [line.split()[0] for line in tracefile.small_text(probes) if line.split()] \
        if os.path.exists(probes) else []
    if "throttle_task" in names:
        return "task", f"its symbols: the trace's probe on {TASK_MODEL_SYMBOL} (the task-based model's)"
    syms = os.path.join(results, "trace", "kallsyms")
    if os.path.exists(syms):
        with open(syms, encoding="utf-8", errors="replace") as f:
            has = any(line.rstrip("\n").endswith(" " + TASK_MODEL_SYMBOL) for line in f)
        return ("task", f"its symbols: {TASK_MODEL_SYMBOL} in its kallsyms") if has else \
            ("cfs_rq", f"its symbols: no {TASK_MODEL_SYMBOL} in its kallsyms")
    if kernel.get("throttle_model") in chains.MODELS:
        return kernel["throttle_model"], kernel.get("throttle_from") or "the image"
    return None, "not known: a text trace of a kernel whose image says nothing of it"


def vcpu_idle(row):
    """Whether a late RT datagram's time went mostly to its CPU logging
    nothing at all while the ticker waited to run or spun to its slot: the
    vCPU did not execute (QEMU's TCG runs one vCPU at a time)."""
    d = (row.get("path") or {}).get("dominant") or {}
    return (d.get("ms") or 0) >= 0.1 and (d.get("cpu_silent_ms") or 0) >= 0.8 * d["ms"]


def headline(doc):
    """The terminal's line for one kernel: the stalls explained, and what
    priority inheritance did."""
    t, parts = doc["totals"], []
    ex = [s for s in doc["stalls"] if "unexplained" not in s]
    if t["stalls"]:
        line = f"{t['stalls_explained']} of {t['stalls']} stalls explained"
        lock = [s for s in ex if s.get("held_by") == "ready-list lock"]
        bh = [s for s in ex if s.get("held_by") == "softirq lock"]
        said = []
        if lock:
            c = lock[0]["chain"]
            w, h, st = c["waiter"], c["holder"], c["holder_state"]
            text = (f"RT {w['comm']} ({w['policy']} {w['priority']}) waited in {w['where']} on "
                    f"ep->lock ({c['lock']['kind']}) held by {h['comm']}/{h['pid']}")
            if st.get("state") == "throttled":
                text += f", throttled in {st['throttled_in']}"
            rel = [s["chain"]["released_after_unthrottle_ms"] for s in lock
                   if s["chain"].get("released_after_unthrottle_ms") is not None]
            if rel:
                text += f"; released {min(rel):.2f}-{max(rel):.2f} ms after the unthrottle"
            said.append((f"{len(lock)} by the ready-list lock: " if bh else "") + text)
        if bh:
            h = bh[0]["chain"]["holder"]
            said.append(f"{len(bh)} by CPU {bh[0]['chain']['cpu']}'s softirq lock: the relay asleep while "
                        f"{h['comm']}/{h['pid']} held it, throttled {h['holding']}, the quota period's "
                        "refill a softirq waiting for it (an inversion the epoll fix does not reach)")
        if said:
            line += ": " + "; ".join(said)
        if t["stalls_explained"] < t["stalls"]:
            first = next(s for s in doc["stalls"] if "unexplained" in s)
            line += f" (the first{' unexplained' if ex else ''}: {first['unexplained']})"
        parts.append(line)
    else:
        parts.append("no stall")
    c = doc["contentions"]
    if c["rt_waits"]:
        s = f"{c['rt_waits']} RT waits on ep->lock, {c['boosts']} boosts"
        if c["boosts"]:
            s += f" of {'/'.join(c['boosted'])} to " + ", ".join(f"{p} {v}" for p, v in c["boosted_to"])
        if c["lent_by_others"]:
            s += (f" by the waiter, {c['lent_by_others']} ended by "
                  + ", ".join(f"{k} ({n})" for k, n in c["lent_by"].items())
                  + " boosting the holder through a lock of its own")
        w = c["rt_wait_us"]
        parts.append(s + f", waits p99 {w['p99']:.0f} us, max {w['max']:.0f} us")
    if t["late"]:
        parts.append(f"{t['late_explained']} of {t['late']} RT datagrams over "
                     f"{doc['late_listed_over_us'] / 1000:g} ms explained"
                     + (f" ({t['late_vcpu_idle']} while the ticker's vCPU did not execute)"
                        if t["late_vcpu_idle"] else ""))
    fr = doc["freezes"]
    if fr["counted"]:
        n = fr["counted"]
        text = (f"{n} freeze{'s' if n != 1 else ''} of the probes over {fr['limit_ms']:g} ms, "
                f"{fr['explained']} explained (" + ", ".join(
                    f"{freezes.CAUSES[c]} {k}" for c, k in fr["by_cause"].items() if k)
                + f"; {fr['in_stalls']} inside stalls)")
        if fr["unexplained"]:
            first = next((r for r in fr["rows"] if "unexplained" in r), None)
            text += f", {fr['unexplained']} unexplained"
            if first:
                text += f" (the first {freezes.line(first)})"
        parts.append(text)
    sh = doc["softirq_held"]
    if sh and sh["over_late_ms"]:
        h = sh["longest"]
        n = sh["over_late_ms"]
        parts.append(f"CPU {h['cpu']}'s softirqs (the relay's timerfd tick) held past "
                     f"{sh['late_ms']:g} ms by a throttled task {n} time{'s' if n != 1 else ''}, "
                     f"longest {h['held_ms']:.1f} ms by {h['holder']['comm']}/{h['holder']['pid']}")
    if not doc["trace"]["complete"]:
        parts.append(f"the trace lost {doc['trace']['lost']['total']} events")
    if doc["trace"].get("read_s"):
        n = len(doc["trace"]["read_s"])
        parts.append(f"read: {n} span{'s' if n != 1 else ''} of the trace, no more")
    return "; ".join(parts)


def _merged(windows):
    """Spans [(a, b)], sorted, the overlapping ones made one."""
    out = []
    for a, b in sorted(windows):
        if out and a <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], b))
        else:
            out.append((a, b))
    return out


def _within(wanted, kept):
    """The spans of WANTED that KEPT holds (None: everything)."""
    if kept is None:
        return wanted
    kept = _merged(kept)
    if wanted is None:
        return kept
    out = [(max(a, x), min(b, y)) for a, b in wanted for x, y in kept]
    return [(a, b) for a, b in out if a < b]


def missed_windows(steps):
    """The spans of a sweep's missed steps, each from WINDOW_LEAD s before
    it: what a step's cause is read from (the throttle, callback and
    switch before the step began included)."""
    return [(r["start_mono_s"] - WINDOW_LEAD, r["start_mono_s"] + r["elapsed_s"])
            for r in (st["result"] for st in steps if not st.get("meets_slo"))]


def _sweep_steps(path):
    """The steps of a loadgen sweep's JSON, each with its run's place on
    the trace's clock."""
    try:
        with open(path, encoding="utf-8") as f:
            steps = json.load(f)["steps"]
        for i, st in enumerate(steps):
            r = st["result"]
            if not isinstance(r.get("start_mono_s"), (int, float)) or \
                    not isinstance(r.get("elapsed_s"), (int, float)):
                raise tracefile.TraceError(f"{path}: step {i} has no start_mono_s and elapsed_s "
                                           "(a loadgen from before they were written?)")
        return steps
    except (ValueError, KeyError, TypeError) as e:
        raise tracefile.TraceError(f"{path}: not a loadgen sweep's JSON ({e})")


def kernel_facts(path):
    """The kernel.json at PATH, checked for what the analysis takes from
    it: TraceError naming what is wrong."""
    try:
        with open(path, encoding="utf-8") as f:
            k = json.load(f)
    except (OSError, ValueError) as e:
        raise tracefile.TraceError(f"{path}: {e}")
    off = (k.get("offsets") or {}).get("eventpoll.lock") if isinstance(k, dict) else None
    if not isinstance(off, int) or not 0 <= off < 4096:
        raise tracefile.TraceError(f"{path}: no offsets.\"eventpoll.lock\" of 0-4095 bytes "
                                   "(not a kernel.json of lab/labkit/kernels.py)")
    return k


def main(argv=None):
    ap = argparse.ArgumentParser(prog="lab/ktrace/explain",
                                 description="explain a guest's stalls and slow RT datagrams from its trace")
    ap.add_argument("results", help="a guest's results directory")
    ap.add_argument("--name", help="the kernel's name in the run (stock, patched)")
    ap.add_argument("--out", help="where chains.json goes (default: RESULTS/chains.json)")
    ap.add_argument("--sweep", help="a loadgen sweep's JSON run during the trace: the cause of "
                    "each step that missed, from the trace, goes into chains.json's steps")
    ap.add_argument("--kernel", help="what the host read from the image before it booted "
                    "(lab/labkit/kernels.py's kernel.json): the struct offsets the analysis takes, "
                    "its lock and throttle model")
    ap.add_argument("--missed-only", action="store_true",
                    help="with --sweep: read only the missed steps' spans of the trace (each from "
                    f"{WINDOW_LEAD:g} s before it), and the stalls within them: a capacity cell's causes "
                    "in a fraction of the time (a sweep that missed no step is read whole)")
    ap.add_argument("--client", help="the RT client was this loadgen run (its JSON, written with "
                    "--list-over-us): its slow datagrams are the RT datagrams explained, and its "
                    "threads, loadgen at the scenario's ticker_prio, the RT waker")
    a = ap.parse_args(argv)
    if a.missed_only and not a.sweep:
        ap.error("--missed-only needs --sweep")
    if not any(os.path.exists(os.path.join(a.results, f)) for f in ("trace.txt.gz", "trace")):
        print(f"explain: {a.results}: no trace.txt.gz and no trace/ (a run with --trace off?)",
              file=sys.stderr)
        return EX_NOINPUT
    try:
        steps = _sweep_steps(a.sweep) if a.sweep else None
        run = GuestTrace(a.results, a.name, missed_windows(steps) if a.missed_only else None,
                         kernel_facts(a.kernel) if a.kernel else None, a.client)
        doc = run.document()
        if steps is not None:
            doc["steps"] = [run.step(st) for st in steps]
    except (tracefile.TraceError, OSError) as e:
        print(f"explain: {e}", file=sys.stderr)
        return EX_DATA
    try:
        write_json(a.out or os.path.join(a.results, "chains.json"), doc)
    except (LabError, OSError) as e:
        print(f"explain: {e}", file=sys.stderr)
        return EX_DATA
    print(f"{a.name or a.results}: {doc['line']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
