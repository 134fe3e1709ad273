"""Chains: who waited for what, and why it took that long, from the
kernel's own trace (tracefile.Event lists recorded by lab/ktrace/ktrace).

A chain names the RT waiter (task, policy, priority, where it waited), the
lock (its address, identified as an epoll instance's ready-list lock), the
holder (the task inside ep_poll_callback holding it, since when), what the
holder was doing while the waiter waited (throttled by its cgroup's quota,
and who let it go: the quota period or a write to cpu.max), the release
and the waiter's wake-up; on the patched kernel, the priority inheritance
boost and how long the holder ran boosted. Whatever cannot be found is
said: a chain is incomplete with what was missing, never completed by a
guess.
"""
import bisect
from collections import Counter, defaultdict
from dataclasses import dataclass, field

from .tracefile import holds_bh


@dataclass(slots=True)
class Wait:
    """A task's wait for a lock: contention_begin to contention_end (end
    None when the trace stopped first). A reader of the rwlock waits for
    it and, inside, for its rtmutex: one task's waits nest."""
    pid: int
    cpu: int
    lock: int
    flags: str          # the tracepoint's: "WRITE|RT", "READ|RT", "RT"
    begin: float
    end: float | None = None
    stack: list = field(default_factory=list)   # where it waited, innermost first

    def until(self, last):
        """When it ended, or last (the trace's end) when it had not."""
        return self.end if self.end is not None else last


@dataclass(slots=True)
class Callback:
    """A task inside ep_poll_callback: entry to exit (None: not seen), on
    the epoll instance ep (None: the probe did not say)."""
    entry: float
    exit: float | None
    ep: int | None

    def holds(self, t):
        return self.entry <= t and (self.exit is None or self.exit >= t)


@dataclass(slots=True)
class Throttle:
    """A cgroup throttled on one CPU's run queue: from start until the
    unthrottle (end None: not seen), which cause let go (UNTHROTTLE_CAUSES,
    None: not known). pid, flags, cpu and stack are the throttle event's:
    the task it fired in, its flag columns, where."""
    start: float
    end: float | None
    cause: str | None
    stack: list
    pid: int
    flags: str
    cpu: int


@dataclass(slots=True, frozen=True)
class Boost:
    """A priority change by priority inheritance (sched_pi_setprio): at ts
    from old to new (kernel priorities, None when not printed), made by
    task by while it waited for through (its innermost Wait then, None
    when it waited for none)."""
    ts: float
    old: int | None
    new: int | None
    by: int
    through: Wait | None

    def raises(self):
        return self.old is not None and self.new is not None and self.new < self.old


@dataclass(slots=True, frozen=True)
class Switch:
    """A sched_switch seen from one task: in (ts, the CPU it ran on) or
    out (ts, the state it left in, "R+" preempted, "S" asleep, ...)."""
    ts: float
    cpu: int = -1
    state: str = ""


@dataclass(slots=True, frozen=True)
class OnCpu:
    """Who ran on a CPU from ts on."""
    ts: float
    pid: int


@dataclass(slots=True, frozen=True)
class Seen:
    """An event inside the timeline's detail spans: when, the task that
    was running, its name, and its flag columns ("" without them)."""
    ts: float
    pid: int
    name: str
    flags: str


@dataclass(slots=True, frozen=True)
class Waking:
    """A task woken at ts by waker, to run on cpu."""
    ts: float
    waker: int
    cpu: int


# Frames of the lock's own machinery and of the tracer: not the place a
# task waited.
LOCK_FRAMES = ("rwbase_write_lock", "rwbase_read_lock", "rt_write_lock", "rt_read_lock",
               "rtlock_slowlock_locked", "rtlock_slowlock", "rt_spin_lock", "rt_mutex_slowlock",
               "__rt_mutex_slowlock_locked", "__rt_mutex_slowlock", "rt_mutex_slowlock_block",
               "_raw_spin_lock", "_raw_read_lock", "_raw_write_lock", "_raw_write_lock_irq",
               "_raw_spin_lock_irqsave", "_raw_read_lock_irqsave", "event_triggers_call",
               "stack_trace_save", "ep_autoremove_wake_function")
# fs/eventpoll.c's functions that take the ready-list lock, as a stack
# shows them (ep_poll and the scan helpers are inlined into
# do_epoll_wait).
EPOLL_FRAMES = ("ep_poll", "ep_start_scan", "ep_done_scan", "ep_poll_callback",
                "ep_send_events", "do_epoll_wait", "__x64_sys_epoll_wait", "ep_insert",
                "ep_modify", "ep_remove", "ep_clear_and_put", "ep_free")
# Who let a throttled cgroup go, by a frame of the unthrottle's stack.
# The period's refill of a remote CPU's run queue arrives there as a
# function call IPI (__cfsb_csd_unthrottle).
UNTHROTTLE_CAUSES = (("tg_set_cfs_bandwidth", "cpu.max"), ("cpu_max_write", "cpu.max"),
                     ("sched_cfs_period_timer", "period"), ("distribute_cfs_runtime", "period"),
                     ("__cfsb_csd_unthrottle", "period"))
UNTHROTTLE_TEXT = {"cpu.max": "a write to cpu.max (the watchdog's lift)",
                   "period": "the quota period's refill", None: "not known"}
# A lock is an epoll instance's ready-list lock when its address is the
# instance's plus this many bytes, for at least this many waits.
MIN_OFFSET_SUPPORT = 3
# A lock this close to a CPU's run queue is one of that CPU's per-CPU
# variables (both in its static per-CPU area, well under this on the
# project's config); the locks of sockets, files and epoll instances are
# slab objects, far from it.
PERCPU_NEAR = 256 << 10


def policy(prio):
    """The kernel's prio as the user names it: ["FIFO", 50] or ["OTHER", 0]."""
    if prio is None:
        return ["?", None]
    return ["FIFO", 99 - prio] if prio < 100 else ["OTHER", prio - 120]


# The frames a kprobe adds on top of the probed function: its breakpoint's,
# or, once the kernel has optimized the probe into a jump, the handler's and
# the trampoline's (a bare address: it has no symbol).
KPROBE_FRAMES = ("kprobe_int3_handler", "do_int3", "exc_int3", "asm_exc_int3",
                 "kprobe_dispatcher", "opt_pre_handler", "optimized_callback")


def where(stack):
    """The first frame of a stack that is not the lock's or the tracer's."""
    for f in stack:
        if (f not in LOCK_FRAMES and f not in KPROBE_FRAMES
                and not f.startswith(("trace_", "__trace", "0x"))):
            return f
    return None


def in_epoll(stack):
    return any(f in EPOLL_FRAMES for f in stack)


def unthrottle_cause(stack):
    for frame, cause in UNTHROTTLE_CAUSES:
        if frame in stack:
            return cause
    return None


def _ts(r):
    return r.ts


def _entry(r):
    return r.entry


def _start(r):
    return r.start


def _at_or_before(rows, t, key=_ts):
    """Index of the last row whose time (key) is <= t, or -1."""
    return bisect.bisect_right(rows, t, key=key) - 1


def _first_at_or_after(rows, t, key=_ts):
    """The first row whose time (key) is >= t, or None."""
    i = bisect.bisect_left(rows, t, key=key)
    return rows[i] if i < len(rows) else None


class Timeline:
    """The trace in the shapes the chains need, each list in time order:
    per task its priorities, switches (Switch), wake-ups (Waking),
    callbacks (Callback) and boosts (Boost); the waits (Wait); the
    cgroups' throttled intervals (Throttle); who ran on each CPU (OnCpu)."""

    def __init__(self, events, detail=None):
        """DETAIL: spans [(a, b)] (sorted, apart) whose every event is kept
        as a Seen (detail_between): who ran, and what the CPU had off."""
        self.comm = {}
        # pid -> its priority as last seen, and its own as priority
        # inheritance saw it (the one a boost started from or went back to):
        # a boosted task runs for a while at its booster's.
        self.prio, self.base = {}, {}
        lent = set()            # pids running at a priority lent to them
        self.runs = defaultdict(list)          # pid -> [Switch in]
        self.stops = defaultdict(list)         # pid -> [Switch out]
        self.on_cpu = defaultdict(list)        # cpu -> [OnCpu]
        self.wakings = defaultdict(list)       # pid -> [Waking]
        self.callbacks = defaultdict(list)     # pid -> [Callback]
        self.boosts = defaultdict(list)        # pid -> [Boost]
        self.throttles = defaultdict(list)     # (tg, rq) -> [Throttle]
        self.waits = []                        # [Wait], by begin time
        self.seen = defaultdict(list)          # cpu -> [ts of every event on it]
        self.detail = defaultdict(list)        # cpu -> [Seen] in DETAIL
        self.ticks = False      # whether the CPUs' timer interrupts are in it
        spans, at = detail or [], 0
        self.first = self.last = None
        self.count = 0
        self.flags = False      # whether any event had the flags columns
        waiting = {}
        for e in events:        # an iterable, read once
            f, n = e.fields, e.name
            if self.first is None:
                self.first = e.ts
            self.last = e.ts
            self.count += 1
            self.flags = self.flags or bool(e.flags)
            while at < len(spans) and spans[at][1] < e.ts:
                at += 1
            if at < len(spans) and spans[at][0] <= e.ts:
                self.detail[e.cpu].append(Seen(e.ts, e.pid, n, e.flags))
            if n == "local_timer_entry":
                self.ticks = True
            self.seen[e.cpu].append(e.ts)
            self.comm.setdefault(e.pid, e.comm)
            if n == "sched_switch":
                for pid, prio in ((f["prev_pid"], f["prev_prio"]), (f["next_pid"], f["next_prio"])):
                    self.prio[pid] = prio
                    if pid in self.base and pid not in lent:
                        # Not boosted, at another priority: its own changed
                        # (sched_setscheduler after a boost it once had).
                        self.base[pid] = prio
                self.comm[f["next_pid"]] = f["next_comm"]
                self.stops[f["prev_pid"]].append(Switch(e.ts, e.cpu, f["prev_state"]))
                self.runs[f["next_pid"]].append(Switch(e.ts, e.cpu))
                self.on_cpu[e.cpu].append(OnCpu(e.ts, f["next_pid"]))
            elif n == "sched_waking":
                self.prio.setdefault(f["pid"], f.get("prio"))
                self.comm.setdefault(f["pid"], f["comm"])
                self.wakings[f["pid"]].append(Waking(e.ts, e.pid, f.get("target_cpu", e.cpu)))
            elif n == "ep_cb":
                self.callbacks[e.pid].append(Callback(e.ts, None, f.get("ep")))
            elif n == "ep_cb_ret":
                cbs = self.callbacks.get(e.pid)
                if cbs and cbs[-1].exit is None:
                    cbs[-1].exit = e.ts
            elif n == "contention_begin":
                w = Wait(e.pid, e.cpu, f["lock"], f.get("flags", ""), e.ts, None, e.stack)
                # Waits nest, and end innermost first.
                waiting.setdefault(e.pid, []).append(w)
                self.waits.append(w)
            elif n == "contention_end":
                open_ = waiting.get(e.pid, [])
                for i in range(len(open_) - 1, -1, -1):
                    if open_[i].lock == f["lock"]:
                        open_.pop(i).end = e.ts
                        break
            elif n == "sched_pi_setprio":
                old, new = f.get("oldprio"), f.get("newprio")
                pid = f["pid"]
                if old is not None and new is not None and old != new:
                    if pid not in lent:
                        self.base[pid] = old
                    if new < self.base[pid]:
                        lent.add(pid)
                    else:
                        lent.discard(pid)
                        self.base[pid] = new
                open_ = waiting.get(e.pid)
                self.boosts[pid].append(Boost(e.ts, old, new, e.pid, open_[-1] if open_ else None))
            elif n == "throttle":
                # A cgroup is throttled per CPU (per run queue), from that
                # CPU or another one.
                self.throttles[(f.get("tg"), f.get("rq"))].append(
                    Throttle(e.ts, None, None, e.stack, e.pid, e.flags, e.cpu))
            elif n == "unthrottle":
                ivs = self.throttles.get((f.get("tg"), f.get("rq")), [])
                if ivs and ivs[-1].end is None:
                    ivs[-1].end, ivs[-1].cause = e.ts, unthrottle_cause(e.stack)
        self.begins = [w.begin for w in self.waits]
        self.longest_wait = max((w.until(self.last) - w.begin for w in self.waits), default=0)
        self.waits_on = defaultdict(list)      # (pid, lock) -> its waits
        for w in self.waits:
            self.waits_on[(w.pid, w.lock)].append(w)

    def own_prio(self, pid):
        return self.base.get(pid, self.prio.get(pid))

    def task(self, pid):
        pol, level = policy(self.own_prio(pid))
        return {"pid": pid, "comm": self.comm.get(pid, "?"), "policy": pol, "priority": level}

    def is_rt(self, pid):
        p = self.own_prio(pid)
        return p is not None and p < 100

    def waiting_at(self, pid, lock, t):
        """Whether pid was waiting for lock at t (its waits on one lock do
        not nest: the last one begun by t is the one)."""
        ws = self.waits_on.get((pid, lock), [])
        i = bisect.bisect_right(ws, t, key=lambda w: w.begin) - 1
        return i >= 0 and (ws[i].end is None or ws[i].end >= t)

    def inside_callback(self, pid, t):
        """pid's Callback that holds t, or None."""
        cbs = self.callbacks.get(pid, [])
        i = _at_or_before(cbs, t, _entry)
        return cbs[i] if i >= 0 and cbs[i].holds(t) else None

    def throttled_at(self, t):
        """The Throttle that holds t, as ((tg, rq), Throttle), or None."""
        for tg, ivs in self.throttles.items():
            i = _at_or_before(ivs, t, _start)
            if i >= 0 and (ivs[i].end is None or ivs[i].end >= t):
                return tg, ivs[i]
        return None

    def throttled_during(self, a, b):
        """The first throttled interval that meets [a, b], as (from, to), to
        None when it had not ended; or None."""
        first = None
        for ivs in self.throttles.values():
            i = max(_at_or_before(ivs, a, _start), 0)
            for iv in ivs[i:i + 2]:
                if iv.start <= b and (iv.end is None or iv.end >= a):
                    if first is None or max(iv.start, a) < max(first[0], a):
                        first = (iv.start, iv.end)
                    break
        return first

    def running(self, cpu, t):
        """The pid that ran on cpu at t, or None."""
        rows = self.on_cpu.get(cpu, [])
        i = _at_or_before(rows, t)
        return rows[i].pid if i >= 0 else None

    def ran_on(self, cpu, a, b):
        """Who ran on cpu over [a, b]: [(pid, seconds)], the longest first
        (None for the part before the CPU's first switch in the trace)."""
        rows = self.on_cpu.get(cpu, [])
        i = max(_at_or_before(rows, a), 0)
        share = Counter()
        for k in range(i, len(rows)):
            if rows[k].ts > b:
                break
            nxt = rows[k + 1].ts if k + 1 < len(rows) else b
            lo, hi = max(rows[k].ts, a), min(nxt, b)
            if hi > lo:
                share[rows[k].pid] += hi - lo
        if not rows or rows[0].ts > a:
            share[None] += min(rows[0].ts if rows else b, b) - a
        return share.most_common()

    def ran_after(self, pid, t):
        """When pid next ran at or after t, or None."""
        r = _first_at_or_after(self.runs.get(pid, []), t)
        return r.ts if r else None

    def silent(self, cpu, a, b):
        """The longest stretch of [a, b] with no event on cpu, in seconds."""
        x, y = self.silence(cpu, a, b)
        return y - x

    def silence(self, cpu, a, b):
        """The longest stretch of [a, b] with no event on cpu, as (from, to)."""
        rows = self.seen.get(cpu, [])
        i, j = bisect.bisect_right(rows, a), bisect.bisect_left(rows, b)
        marks = [a] + rows[i:j] + [b]
        return max(zip(marks, marks[1:]), key=lambda p: p[1] - p[0], default=(a, a))

    def events_between(self, cpu, a, b):
        """How many events cpu logged in (a, b)."""
        rows = self.seen.get(cpu, [])
        return max(0, bisect.bisect_left(rows, b) - bisect.bisect_right(rows, a))

    def detail_between(self, cpu, a, b):
        """cpu's events in [a, b] (within the DETAIL spans), as Seen."""
        rows = self.detail.get(cpu, [])
        return rows[bisect.bisect_left(rows, a, key=_ts):bisect.bisect_right(rows, b, key=_ts)]

    def callback_after(self, pid, t):
        """pid's first Callback entered at or after t, or None."""
        return _first_at_or_after(self.callbacks.get(pid, []), t, _entry)

    def woken_after(self, pid, t):
        """pid's first Waking at or after t, or None."""
        return _first_at_or_after(self.wakings.get(pid, []), t)

    def waits_between(self, a, b):
        """The waits that overlap [a, b]."""
        i = bisect.bisect_left(self.begins, a - self.longest_wait)
        out = []
        for w in self.waits[i:]:
            if w.begin > b:
                break
            if w.until(self.last) >= a:
                out.append(w)
        return out


def ready_list_offset(tl):
    """offsetof(struct eventpoll, lock), from the trace: the distance from a
    waited-for lock to the epoll instance of a callback running in another
    task when the wait began. The ready-list lock's recurs; other locks
    taken inside the callback give scattered ones. Returns (offset,
    support), or (None, 0) when none recurs."""
    seen = Counter()
    for w in tl.waits:
        for pid in tl.callbacks:
            if pid == w.pid:
                continue
            cb = tl.inside_callback(pid, w.begin)
            if cb and cb.ep is not None and 0 <= w.lock - cb.ep < 4096:
                seen[w.lock - cb.ep] += 1
    if not seen:
        return None, 0
    offset, n = seen.most_common(1)[0]
    return (offset, n) if n >= MIN_OFFSET_SUPPORT else (None, n)


def holders(tl, w, offset):
    """The tasks inside ep_poll_callback on the waited-for lock's epoll
    instance when the wait began, not themselves waiting for that lock
    then (a reader queued behind a pending writer is inside the callback
    too, but holds nothing): [(pid, Callback)]."""
    out = []
    for pid in tl.callbacks:
        if pid == w.pid:
            continue
        cb = tl.inside_callback(pid, w.begin)
        if (cb and cb.ep is not None and offset is not None and cb.ep + offset == w.lock
                and not tl.waiting_at(pid, w.lock, w.begin)):
            out.append((pid, cb))
    return out


def on_ready_list(tl, w, offset):
    """Whether w waited for an epoll instance's ready-list lock: a callback
    on the instance held it, or the waiter's stack is in fs/eventpoll.c."""
    return bool(holders(tl, w, offset)) or (bool(w.stack) and in_epoll(w.stack))


def lock_kind(flags):
    return "rwlock_t" if ("WRITE" in flags or "READ" in flags) else "spinlock_t"


def rel_s(t, t0):
    """Trace time t in seconds from t0 (the results' clock), to the
    microsecond; None for None."""
    return None if t is None else round(t - t0, 6)


def span_ms(a, b):
    """The milliseconds from a to b, to the microsecond; None when either
    is unknown."""
    return None if a is None or b is None else round((b - a) * 1000, 3)


def chain(tl, w, offset, t0):
    """The chain of one wait w on the ready-list lock; t0 maps the trace's
    clock onto the results' seconds."""
    pl = where(w.stack) if w.stack else None
    if pl is None:
        # No stack (the spinlock's waits go without): where from what the
        # waiter itself was doing.
        pl = "ep_poll_callback" if tl.inside_callback(w.pid, w.begin) else "epoll_wait"
    c = {"waiter": dict(tl.task(w.pid), where=pl, stack=w.stack[:10]),
         "lock": {"kind": lock_kind(w.flags), "flags": w.flags, "addr": hex(w.lock),
                  "epoll": hex(w.lock - offset) if offset is not None else None},
         "wait": {"begin_s": rel_s(w.begin, t0), "end_s": rel_s(w.end, t0), "ms": span_ms(w.begin, w.end)}}
    missing = []
    hs = holders(tl, w, offset)
    if not hs:
        missing.append("no task was inside ep_poll_callback on this lock's epoll instance")
    else:
        # The one the waiter waited for: the last to leave the callback (the
        # last reader out, or the owner).
        hs.sort(key=lambda h: h[1].exit if h[1].exit is not None else float("inf"))
        pid, cb = hs[-1]
        c["holder"] = dict(tl.task(pid), in_callback_since_s=rel_s(cb.entry, t0),
                           in_callback_before_wait_ms=span_ms(cb.entry, w.begin),
                           released_s=rel_s(cb.exit, t0))
        if len(hs) > 1:
            c["holder"]["other_holders"] = [tl.task(p) for p, _ in hs[:-1]]
        c["holder_state"] = holder_state(tl, pid, cb, w, t0)
        un = c["holder_state"].get("unthrottled_s")
        if un is not None and cb.exit is not None:
            # Released after the quota came back, or (boosted) before.
            after = round((cb.exit - t0 - un) * 1000, 3)
            c["released_after_unthrottle_ms" if after >= 0 else "released_while_throttled"] = \
                after if after >= 0 else True
        b = boost_of(tl, pid, w)
        if b:
            c["boost"] = b
        if cb.exit is None:
            missing.append("the holder had not left ep_poll_callback when the trace stopped")
    if w.end is None:
        missing.append("the wait had not ended when the trace stopped")
    else:
        c["waiter_ran_s"] = rel_s(tl.ran_after(w.pid, w.end), t0)
    c["complete"] = not missing
    if missing:
        c["missing"] = missing
    return c


def holder_state(tl, pid, cb, w, t0):
    """What the holder was doing while the waiter waited: throttled (when,
    in what, who let it go), or running, or preempted."""
    end = w.until(tl.last)
    for t in (w.begin, (w.begin + end) / 2):
        thr = tl.throttled_at(t)
        if thr:
            tg, iv = thr
            # The holder was inside the callback when its group was
            # throttled, whoever's context the throttle fired in (the
            # holder's own, or an enqueue after a migration).
            inside = cb and cb.holds(iv.start)
            return {"state": "throttled", "cgroup_tg": hex(tg[0]) if tg[0] else None,
                    "throttled_s": rel_s(iv.start, t0),
                    "throttled_in": "ep_poll_callback" if inside or "ep_poll_callback" in (iv.stack or [])
                    else (where(iv.stack or []) or "?"),
                    "throttled_task": tl.task(iv.pid),
                    "unthrottled_s": rel_s(iv.end, t0), "unthrottled_by": iv.cause,
                    "unthrottled_by_text": UNTHROTTLE_TEXT.get(iv.cause)}
    ran = tl.ran_after(pid, w.begin)
    return {"state": "running" if ran is not None and ran <= end else "preempted",
            "ran_during_wait": ran is not None and ran <= end}


def boost_of(tl, pid, w, others=False):
    """The priority inheritance boost of pid during the wait w by its
    waiter (OTHERS: by any other task, through a lock of its own): when,
    from and to what, by whom, through which lock, and how long it ran
    boosted; or None."""
    rows = tl.boosts.get(pid, [])
    end = w.until(tl.last)
    i = bisect.bisect_left(rows, w.begin - 1e-6, key=_ts)
    for j in range(i, len(rows)):
        b = rows[j]
        if b.ts > end:
            break
        if (b.by != w.pid if others else b.by == w.pid) and b.raises():
            back = next((r.ts for r in rows[j + 1:j + 64] if r.new is not None and r.new >= b.old), None)
            return {"after_wait_began_ms": span_ms(w.begin, b.ts), "from": policy(b.old), "to": policy(b.new),
                    "by": tl.task(b.by), "through": hex(b.through.lock) if b.through else None,
                    "boosted_ms": span_ms(b.ts, back)}
    return None


def unlent(tl, w, offset):
    """How long of the wait w (seconds) a cgroup was throttled while the
    waiter lent its holder no priority: the bug's share of the wait. The
    throttled group is taken to be the holder's (a capacity cell or the
    demo has one group under a quota, the co-tenant's, and a holder of the
    ready-list lock is inside ep_poll_callback). A boosted holder leaves
    the fair class and its throttle behind, so what the wait lasts after
    the boost is the critical section and whoever else ran at the
    waiter's priority, not the quota."""
    if w.end is None:
        return 0.0
    hs = holders(tl, w, offset)
    thr = tl.throttled_during(w.begin, w.end)
    if not hs or not thr:
        return 0.0
    begin = max(w.begin, thr[0])
    end = w.end if thr[1] is None else min(w.end, thr[1])
    lent = [boost_of(tl, pid, w) for pid, _ in hs]
    if all(lent):
        # The waiter waits for the last of them (the last reader out).
        end = min(end, w.begin + max(b["after_wait_began_ms"] for b in lent) / 1000)
    return max(0.0, end - begin)


# A throttle in the task's own switch-out: the task the event fired in is
# the throttled group's. (A throttle can also come from another task's
# context: a boost changing a waiting task's class, a wake-up into the
# group, a CPU mask change; that task holds nothing of the group's.)
SWITCH_OUT = ("__schedule", "pick_next_task_fair", "pick_task_fair", "put_prev_set_next_task")


def throttled_itself(tl, pid, stack):
    return (not tl.is_rt(pid) and any(f in stack for f in SWITCH_OUT)
            and "rt_mutex_setprio" not in stack)


def softirq_holds(tl, t0):
    """The throttles that caught their task holding its CPU's softirq lock
    (tracefile.holds_bh): while it is held no other task runs the CPU's
    softirqs, and PREEMPT_RT does not even wake ksoftirqd, so a timer
    delivered as a softirq (the relay's timerfd tick) waits with no task
    waiting on the lock: nobody lends the holder a priority. Each lasts
    until an RT task that needs the lock on that CPU boosts the holder
    through it (a per-CPU lock of that CPU: PERCPU_NEAR) or the cgroup is
    unthrottled. A boost through another lock the holder has (ep->lock,
    a socket's wait queue) lets it run only to that lock's release, with
    softirqs still held. [dict], in time order."""
    out = []
    for (_, rq), ivs in tl.throttles.items():
        for iv in ivs:
            if not holds_bh(iv.flags) or not throttled_itself(tl, iv.pid, iv.stack):
                continue
            end, boost = iv.end, None
            rows = tl.boosts.get(iv.pid, [])
            for b in rows[bisect.bisect_right(rows, iv.start, key=_ts):]:
                if end is not None and b.ts > end:
                    break
                w = b.through
                if w is not None and tl.is_rt(b.by) and w.cpu == iv.cpu and rq is not None \
                        and abs(w.lock - rq) < PERCPU_NEAR and b.raises():
                    end, boost = b.ts, {"by": tl.task(b.by), "through_lock": hex(w.lock), "to": policy(b.new)}
                    break
            h = {"holder": tl.task(iv.pid), "cpu": iv.cpu,
                 "holding": "serving softirqs" if iv.flags[2] in "sH" else "with softirqs disabled",
                 "throttled_s": rel_s(iv.start, t0), "held_until_s": rel_s(end, t0),
                 "held_ms": span_ms(iv.start, end),
                 "ended_by": "boost" if boost else ("unthrottle" if end is not None else None),
                 "complete": end is not None}
            if boost:
                h["boost"] = boost
            elif end is not None:
                h["unthrottled_by"] = iv.cause
            out.append(h)
    out.sort(key=lambda h: h["throttled_s"])
    return out
