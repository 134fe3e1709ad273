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
import re
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
    the task it fired in, its flag columns, where. On the task-based model
    a task's own throttle (throttle_cfs_rq_work, on its way to user space)
    is one too, with group the (tg, rq) of the cgroup's throttle it ends
    with."""
    start: float
    end: float | None
    cause: str | None
    stack: list
    pid: int
    flags: str
    cpu: int
    group: tuple | None = None


@dataclass(slots=True, frozen=True)
class TimerArm:
    """The quota period's timer armed at ts, due at due (seconds on the
    trace's clock: its expires)."""
    ts: float
    due: float


@dataclass(slots=True, frozen=True)
class TimerRun:
    """The quota period's timer hrtimer run at ran (its base's now) on
    cpu, by task pid, due at due (None: its arming is not in the
    trace)."""
    ts: float
    ran: float
    due: float | None
    cpu: int
    pid: int
    hrtimer: int


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
    out (ts, the state it left in, "R+" preempted, "S" asleep, ..., and
    the flag columns it left with: "d.s23" inside its softirqs)."""
    ts: float
    cpu: int = -1
    state: str = ""
    flags: str = ""


@dataclass(slots=True, frozen=True)
class OnCpu:
    """Who ran on a CPU from ts on."""
    ts: float
    pid: int


@dataclass(slots=True, frozen=True)
class Served:
    """A softirq (what: its action, "TIMER") or a timer wheel callback
    (what: its function) that task pid ran on a CPU from start to end."""
    start: float
    end: float
    what: str
    pid: int


@dataclass(slots=True, frozen=True)
class OnCall:
    """A timer's callback (what: its function) entered at ts by pid."""
    ts: float
    what: str
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
    """A task woken at ts by waker, to run on cpu; flags the event's flag
    columns (need-resched set on the waker's CPU by then, or not)."""
    ts: float
    waker: int
    cpu: int
    flags: str = ""


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
# The CFS throttle models, as lab/labkit/kernels.py names them: the
# cgroup's run queue taken off the CPU when its quota runs out, whatever
# its tasks were doing (per cfs_rq), or each task taken off on its way
# back to user space (task-based, v6.18: e1fad12dcb66).
MODELS = ("cfs_rq", "task")
# The period timer's function, as the trace names it.
PERIOD_TIMER = "sched_cfs_period_timer"
# A timerfd's hrtimer function: in the demo's guest, the relay's tick.
TICK_TIMER = "timerfd_tmrproc"
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
# include/linux/interrupt.h: the hrtimer softirq, which runs a CPU's soft
# hrtimers (on PREEMPT_RT every hrtimer not marked hard: a timerfd's, the
# CFS quota period's).
HRTIMER_SOFTIRQ = 8


def policy(prio):
    """The kernel's prio as the user names it: ["FIFO", 50] or ["OTHER", 0]."""
    if prio is None:
        return ["?", None]
    return ["FIFO", 99 - prio] if prio < 100 else ["OTHER", prio - 120]


# The frames a kprobe adds on top of the probed function: its breakpoint's,
# once the kernel has optimized the probe into a jump the handler's and the
# trampoline's (a bare address: it has no symbol), and on a function's
# first instruction with CONFIG_KPROBES_ON_FTRACE (Debian's kernels) the
# ftrace handler's and its trampoline's.
KPROBE_FRAMES = ("kprobe_int3_handler", "do_int3", "exc_int3", "asm_exc_int3",
                 "kprobe_dispatcher", "kprobe_trace_func", "opt_pre_handler", "optimized_callback",
                 "kprobe_ftrace_handler")


def where(stack, skip=()):
    """The first frame of a stack that is not the lock's or the tracer's
    (nor one of SKIP). A frame of the kprobe's trampoline has no symbol:
    an address, as the kernel ("0x...") or trace-cmd (bare hex) print it."""
    for f in stack:
        if (f not in LOCK_FRAMES and f not in KPROBE_FRAMES and f not in skip
                and not f.startswith(("trace_", "__trace", "0x")) and not _ADDRESS.match(f)):
            return f
    return None


_ADDRESS = re.compile(r"^[0-9a-f]{8,16}$")
# The frames of a task's own throttle (the task-based model's task work),
# which say nothing of where the task was.
TASK_THROTTLE_FRAMES = ("throttle_cfs_rq_work", "task_work_run")


def in_epoll(stack):
    return any(f in EPOLL_FRAMES for f in stack)


def period_timer(function):
    """Whether an hrtimer event's function is the quota period's timer: by
    name, or by an address (the guest filtered the events to its)."""
    return function == PERIOD_TIMER or function.startswith("0x")


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
        self.current = {}                      # cpu -> [pid on it, ts of its last event]
        self.wakings = defaultdict(list)       # pid -> [Waking]
        self.callbacks = defaultdict(list)     # pid -> [Callback]
        self.boosts = defaultdict(list)        # pid -> [Boost]
        self.throttles = defaultdict(list)     # (tg, rq) -> [Throttle]
        self.hrtimer_raised = defaultdict(list)    # cpu -> [ts of each raise of its hrtimer softirq]
        self.hrtimer_served = defaultdict(list)    # cpu -> [OnCpu: when, and who served it]
        self.timer_irqs = defaultdict(list)    # cpu -> [ts of each of its timer interrupts]
        self.softirqs = defaultdict(list)      # cpu -> [Served: each softirq run], by end
        self.callouts = defaultdict(list)      # cpu -> [Served: its timer wheel callbacks], by end
        self.task_throttles = defaultdict(list)  # pid -> [Throttle] (task-based model)
        self.timer_arms = defaultdict(list)    # hrtimer -> [TimerArm] (the quota period's)
        self.timer_runs = []                   # [TimerRun]
        self.tick_arms = defaultdict(list)     # hrtimer -> [TimerArm] (the relay's timerfd's)
        self.tick_runs = []                    # [TimerRun]
        self.hrtimer_calls = defaultdict(list)  # cpu -> [OnCall: every other hrtimer run traced]
        # The throttle model (MODELS), when the trace's reader knows it
        # (explain: from the probes the kernel took); None reads as per
        # cfs_rq, as every kernel before v6.18.
        self.model = None
        own = []                # the task throttle events, matched to their cgroup's below
        self.waits = []                        # [Wait], by begin time
        self.seen = defaultdict(list)          # cpu -> [ts of every event on it]
        self.detail = defaultdict(list)        # cpu -> [Seen] in DETAIL
        self.ticks = False      # whether the CPUs' timer interrupts are in it
        spans, at = detail or [], 0
        self.first = self.last = None
        self.count = 0
        self.flags = False      # whether any event had the flags columns
        waiting = {}
        serving = {}            # (cpu, pid, "softirq" or "callout") -> (since, what)
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
                self.timer_irqs[e.cpu].append(e.ts)
            self.seen[e.cpu].append(e.ts)
            self.comm.setdefault(e.pid, e.comm)
            self._hidden_switch(e)
            if n == "sched_switch":
                for pid, prio in ((f["prev_pid"], f["prev_prio"]), (f["next_pid"], f["next_prio"])):
                    self.prio[pid] = prio
                    if pid in self.base and pid not in lent:
                        # Not boosted, at another priority: its own changed
                        # (sched_setscheduler after a boost it once had).
                        self.base[pid] = prio
                self.comm[f["next_pid"]] = f["next_comm"]
                self.stops[f["prev_pid"]].append(Switch(e.ts, e.cpu, f["prev_state"], e.flags))
                self.runs[f["next_pid"]].append(Switch(e.ts, e.cpu))
                self.on_cpu[e.cpu].append(OnCpu(e.ts, f["next_pid"]))
                self.current[e.cpu] = [f["next_pid"], e.ts]
            elif n == "sched_waking":
                self.prio.setdefault(f["pid"], f.get("prio"))
                self.comm.setdefault(f["pid"], f["comm"])
                self.wakings[f["pid"]].append(Waking(e.ts, e.pid, f.get("target_cpu", e.cpu), e.flags))
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
            elif n == "softirq_raise" and f["vec"] == HRTIMER_SOFTIRQ:
                self.hrtimer_raised[e.cpu].append(e.ts)
            elif n == "softirq_entry":
                if f["vec"] == HRTIMER_SOFTIRQ:
                    self.hrtimer_served[e.cpu].append(OnCpu(e.ts, e.pid))
                serving[(e.cpu, e.pid, "softirq")] = (e.ts, f["action"])
            elif n == "timer_expire_entry":
                serving[(e.cpu, e.pid, "callout")] = (e.ts, f["function"])
            elif n in ("softirq_exit", "timer_expire_exit"):
                kind = "softirq" if n == "softirq_exit" else "callout"
                began = serving.pop((e.cpu, e.pid, kind), None)
                if began is not None:
                    (self.softirqs if kind == "softirq" else self.callouts)[e.cpu].append(
                        Served(began[0], e.ts, began[1], e.pid))
            elif n == "throttle_task":
                own.append(e)
            elif n in ("hrtimer_start", "hrtimer_expire_entry") and f["function"] == TICK_TIMER:
                self._timer(e, self.tick_arms, self.tick_runs)
            elif n in ("hrtimer_start", "hrtimer_expire_entry") and period_timer(f["function"]):
                self._timer(e, self.timer_arms, self.timer_runs)
            elif n == "hrtimer_expire_entry":
                self.hrtimer_calls[e.cpu].append(OnCall(e.ts, f["function"], e.pid))
        for e in own:
            self._task_throttle(e)
        self.begins = [w.begin for w in self.waits]
        self.longest_wait = max((w.until(self.last) - w.begin for w in self.waits), default=0)
        self.waits_on = defaultdict(list)      # (pid, lock) -> its waits
        self.taken_alone = defaultdict(list)   # lock -> when a wait took it with nobody inside
        for w in self.waits:
            self.waits_on[(w.pid, w.lock)].append(w)
            # a spinlock's waiter, or an rwlock's writer: when its wait
            # ended, nobody else held the lock
            if w.end is not None and "READ" not in w.flags:
                self.taken_alone[w.lock].append(w.end)
        for ends in self.taken_alone.values():
            ends.sort()
        # The times the lookups bisect, as plain lists: a patched guest's
        # trace asks some two million times who was inside the callback
        # when a wait began, and a bisect by key calls the key about ten
        # times a question.
        self.entries = {pid: [c.entry for c in cbs] for pid, cbs in self.callbacks.items()}
        self.begins_on = {k: [w.begin for w in ws] for k, ws in self.waits_on.items()}

    def _timer(self, e, arming, running):
        """A traced timer (the quota period's, a timerfd's) armed
        (hrtimer_start: when it is due, into ARMING) or run
        (hrtimer_expire_entry: its base's now, into RUNNING), in seconds:
        both timers' base is CLOCK_MONOTONIC, the trace's clock."""
        f = e.fields
        if e.name == "hrtimer_start":
            arming[f["hrtimer"]].append(TimerArm(e.ts, f["expires"] / 1e9))
            return
        arms = arming.get(f["hrtimer"], [])
        i = _at_or_before(arms, e.ts)
        running.append(TimerRun(e.ts, f["now"] / 1e9, arms[i].due if i >= 0 else None, e.cpu, e.pid,
                                f["hrtimer"]))

    def _task_throttle(self, e):
        """A task's own throttle (the task-based model's throttle_cfs_rq_work,
        in its context on its way to user space): it counts while its
        cgroup's run queue is throttled, the one of its CPU if several
        are (the work finds none and returns when the quota came back
        first), and ends with that unthrottle."""
        held = [(g, iv) for g, ivs in self.throttles.items()
                for iv in ivs[max(_at_or_before(ivs, e.ts, _start), 0):][:1]
                if iv.start <= e.ts and (iv.end is None or iv.end >= e.ts)]
        if not held:
            return
        g, iv = min(held, key=lambda h: (h[1].cpu != e.cpu, h[1].end is None, h[1].end or 0))
        self.task_throttles[e.pid].append(Throttle(e.ts, iv.end, iv.cause, e.stack, e.pid, e.flags, e.cpu, g))

    def task_throttled_at(self, pid, t):
        """pid's own Throttle (task-based model) that holds t, or None."""
        ivs = self.task_throttles.get(pid, [])
        i = _at_or_before(ivs, t, _start)
        return ivs[i] if i >= 0 and (ivs[i].end is None or ivs[i].end >= t) else None

    def dequeues(self):
        """The throttles that took a task off its CPU, as (group, Throttle):
        per cfs_rq, a cgroup's throttle in its task's own switch-out
        (throttled_itself); task-based, each task's own."""
        if self.model == "task":
            return [(iv.group, iv) for ivs in self.task_throttles.values() for iv in ivs]
        return [(g, iv) for g, ivs in self.throttles.items() for iv in ivs
                if throttled_itself(self, iv.pid, iv.stack)]

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
        i = bisect.bisect_right(self.begins_on.get((pid, lock), ()), t) - 1
        return i >= 0 and (ws[i].end is None or ws[i].end >= t)

    def had_lock(self, pid, lock, entry, t):
        """Since when pid, inside a callback entered at entry, held lock at t:
        the end of its last wait for it begun in the callback by t, else
        entry."""
        ws = self.waits_on.get((pid, lock), [])
        i = bisect.bisect_right(self.begins_on.get((pid, lock), ()), t) - 1
        if i >= 0 and ws[i].begin >= entry and ws[i].end is not None and ws[i].end <= t:
            return ws[i].end
        return entry

    def inside_callback(self, pid, t):
        """pid's Callback that holds t, or None."""
        cbs = self.callbacks.get(pid, [])
        i = bisect.bisect_right(self.entries.get(pid, ()), t) - 1
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

    def _hidden_switch(self, e):
        """The switches the trace leaves out (sched_switch only where an
        RT task is in it) show in the next event's pid: every event names
        the task current on its CPU, in an interrupt too. A SCHED_OTHER
        task that went to sleep or gave its CPU to another one ran from
        its switch-in to, at most, its last event: the CPU is put down as
        not known from there (pid None) to the event that names another
        task, and as that task's from it. Before a CPU's first event
        nothing is known of it."""
        cur = self.current.get(e.cpu)
        if cur is None:         # the CPU's first event: its task from here on
            self.on_cpu[e.cpu].append(OnCpu(e.ts, e.pid))
            self.current[e.cpu] = [e.pid, e.ts]
            return
        if e.pid == cur[0]:
            cur[1] = e.ts
            return
        self.on_cpu[e.cpu].append(OnCpu(cur[1], None))
        self.on_cpu[e.cpu].append(OnCpu(e.ts, e.pid))
        self.current[e.cpu] = [e.pid, e.ts]

    def served(self, cpu, a, b):
        """What cpu's softirq threads served over [a, b]: the softirqs'
        seconds by action ({"TIMER": s}), and the longest timer wheel
        callback that overlapped it (Served, or None). A softirq still
        running at the trace's end is not in it."""
        out = Counter()
        for sv in self.softirqs.get(cpu, []):
            if sv.end >= a and sv.start <= b:
                out[sv.what] += min(sv.end, b) - max(sv.start, a)
        calls = [c for c in self.callouts.get(cpu, []) if c.end >= a and c.start <= b]
        return out, max(calls, key=lambda c: c.end - c.start, default=None)

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
    too, but holds nothing), and not inside since before another waiter
    took the lock alone: [(pid, Callback)]."""
    out = []
    ends = tl.taken_alone.get(w.lock, [])
    for pid in tl.callbacks:
        if pid == w.pid:
            continue
        cb = tl.inside_callback(pid, w.begin)
        if (cb and cb.ep is not None and offset is not None and cb.ep + offset == w.lock
                and not tl.waiting_at(pid, w.lock, w.begin)):
            # Someone took the lock alone since the callback had it: it
            # held nothing then. (Its return was not recorded: the callback
            # probes were narrowed to the co-tenant's threads while it was
            # inside, ktrace holders.) A callback that waited for the lock
            # had it from the end of that wait, not from its entry: the
            # writer it queued behind takes the lock alone before it.
            i = bisect.bisect_right(ends, tl.had_lock(pid, w.lock, cb.entry, w.begin))
            if i < len(ends) and ends[i] < w.begin:
                continue
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


def percentiles(values):
    """{"p50", "p90", "p99", "max", "n"} of a list (nearest rank), or None."""
    if not values:
        return None
    v = sorted(values)
    out = {}
    for p in (50, 90, 99, 100):
        k = max(0, min(len(v) - 1, -(-p * len(v) // 100) - 1))
        out["max" if p == 100 else f"p{p}"] = round(v[k], 3)
    out["n"] = len(v)
    return out


def covering(waits, a, b):
    """Of waits, the one that covers most of [a, b], and how much of it
    (s): (None, 0.0) when none does."""
    best, most = None, 0.0
    for w in waits:
        o = min(w.until(b), b) - max(w.begin, a)
        if o > most:
            best, most = w, o
    return best, most


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
    in what, who let it go), or running, or preempted. On the task-based
    model a holder is throttled only by its own throttle, which waits for
    its way back to user space: its cgroup's quota may have run out
    meanwhile (said, with when the holder was taken off, if it was)."""
    end = w.until(tl.last)
    if tl.model == "task":
        return _task_holder_state(tl, pid, cb, w, t0, end)
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


def _task_holder_state(tl, pid, cb, w, t0, end):
    for t in (w.begin, (w.begin + end) / 2):
        iv = tl.task_throttled_at(pid, t)
        if iv:
            return {"state": "throttled", "cgroup_tg": hex(iv.group[0]) if iv.group and iv.group[0] else None,
                    "throttled_s": rel_s(iv.start, t0),
                    "throttled_in": where(iv.stack or [], TASK_THROTTLE_FRAMES) or "?",
                    "throttled_task": tl.task(iv.pid), "unthrottled_s": rel_s(iv.end, t0),
                    "unthrottled_by": iv.cause, "unthrottled_by_text": UNTHROTTLE_TEXT.get(iv.cause)}
    ran = tl.ran_after(pid, w.begin)
    out = {"state": "running" if ran is not None and ran <= end else "preempted",
           "ran_during_wait": ran is not None and ran <= end}
    thr = tl.throttled_during(w.begin, end)
    if thr:
        # The quota ran out around the wait: the holder ran on in the
        # kernel, its throttle deferred, and left the callback first.
        ivs = tl.task_throttles.get(pid, [])
        off = next((iv for iv in ivs if iv.start >= cb.entry), None)
        out.update(group_throttled_s=rel_s(thr[0], t0), group_unthrottled_s=rel_s(thr[1], t0),
                   throttle_deferred=True, dequeued_s=rel_s(off.start, t0) if off else None,
                   dequeued_in=(where(off.stack or [], TASK_THROTTLE_FRAMES) or "?") if off else None)
    return out


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
    if tl.model == "task":
        # Only a holder's own throttle holds it off its CPU, and only one
        # that came while it held the lock (inside the callback).
        ivs = [iv for pid, cb in hs for iv in tl.task_throttles.get(pid, [])
               if iv.start <= w.end and (iv.end is None or iv.end >= w.begin)
               and (cb.exit is None or iv.start <= cb.exit)]
        thr = min(((iv.start, iv.end) for iv in ivs), default=None)
    else:
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
    """The throttles that took their task off its CPU holding its CPU's
    softirq lock (tracefile.holds_bh; Timeline.dequeues: on the
    task-based model a task goes off only on its way to user space, with
    nothing held): while it is held no other task runs the CPU's
    softirqs, and PREEMPT_RT does not even wake ksoftirqd, so a timer
    delivered as a softirq (the relay's timerfd tick) waits with no task
    waiting on the lock: nobody lends the holder a priority. Each lasts
    until an RT task that needs the lock on that CPU boosts the holder
    through it (a per-CPU lock of that CPU: PERCPU_NEAR) or the cgroup is
    unthrottled. A boost through another lock the holder has (ep->lock,
    a socket's wait queue) lets it run only to that lock's release, with
    softirqs still held. [dict], in time order."""
    out = []
    if tl.model == "task":
        rows = tl.dequeues()
    else:
        # per cfs_rq every throttle: one that fired in another task of the
        # group stops a holder too, found by bh_holder
        rows = [(g, iv) for g, ivs in tl.throttles.items() for iv in ivs]
    for group, iv in rows:
        rq = group[1] if group else None
        # the task the throttle caught in its own switch-out, or one of
        # the group's that was preempted inside its softirqs before it
        # and stays stopped with the group
        pid, flags = iv.pid, iv.flags
        if not holds_bh(flags) or (tl.model != "task" and not throttled_itself(tl, pid, iv.stack)):
            found = bh_holder(tl, iv.cpu, iv.start)
            if found is None or (found[2] is not None and iv.end is not None and found[2] < iv.end):
                continue
            pid, flags = found[0], found[1].flags
        end, boost = iv.end, None
        rows_b = tl.boosts.get(pid, [])
        for b in rows_b[bisect.bisect_right(rows_b, iv.start, key=_ts):]:
            if end is not None and b.ts > end:
                break
            w = b.through
            if w is not None and tl.is_rt(b.by) and w.cpu == iv.cpu and rq is not None \
                    and abs(w.lock - rq) < PERCPU_NEAR and b.raises():
                end, boost = b.ts, {"by": tl.task(b.by), "through_lock": hex(w.lock), "to": policy(b.new)}
                break
        h = {"holder": tl.task(pid), "cpu": iv.cpu,
             "holding": "serving softirqs" if flags[2] in "sH" else "with softirqs disabled",
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


def throttled_tasks(tl):
    """The tasks of a throttled group, as far as the trace tells: those a
    throttle caught in their own switch-out (throttled_itself), and the
    other threads of their program (the same name, not RT: the
    co-tenant's senders and its main thread share one cgroup). A task
    outside it, ksoftirqd, runs when its switches are not recorded."""
    if getattr(tl, "_throttled_tasks", None) is None:
        own = {iv.pid for ivs in tl.throttles.values() for iv in ivs
               if throttled_itself(tl, iv.pid, iv.stack)}
        names = {tl.comm.get(pid) for pid in own}
        tl._throttled_tasks = own | {pid for pid, comm in tl.comm.items()
                                     if comm in names and not tl.is_rt(pid)}
    return tl._throttled_tasks


def bh_holder(tl, cpu, t):
    """The task that held CPU's softirq lock at t without running: the last
    task of a throttled group (throttled_tasks) switched out on CPU inside
    its softirq section (its flag columns then: BH disabled, or serving
    softirqs; tracefile.holds_bh) that had done nothing since. (pid, its
    Switch out, when it next ran: None when not by the trace's end), or
    None: none did, or the trace has no flag columns."""
    best = None
    group = throttled_tasks(tl)
    for pid, stops in tl.stops.items():
        i = _at_or_before(stops, t)
        if i < 0 or pid not in group:
            continue
        out = stops[i]
        if out.cpu != cpu or not holds_bh(out.flags) or (best and out.ts <= best[1].ts):
            continue
        back = tl.ran_after(pid, out.ts + 1e-9)
        if back is not None and back <= t:
            continue
        # its own doings since then, which the switches may not show (a
        # switch between two tasks that are not RT is not recorded)
        cb = tl.callback_after(pid, out.ts + 1e-9)
        if cb is not None and cb.entry <= t:
            continue
        best = (pid, out, back)
    return best


def _next(rows, t):
    """The first time in rows (sorted) after t, or None."""
    i = bisect.bisect_right(rows, t)
    return rows[i] if i < len(rows) else None


def _last(rows, t):
    """The last time in rows (sorted) at or before t, or None."""
    i = bisect.bisect_right(rows, t) - 1
    return rows[i] if i >= 0 else None


def _throttle_over(tl, a, b):
    """The throttled interval that covers most of [a, b], as ((tg, rq),
    Throttle), or None."""
    best, most = None, 0.0
    for key, ivs in tl.throttles.items():
        i = max(_at_or_before(ivs, a, _start), 0)
        for iv in ivs[i:i + 3]:
            o = min(iv.end if iv.end is not None else tl.last, b) - max(iv.start, a)
            if o > most:
                best, most = (key, iv), o
    return best


def softirq_stall(tl, relay, a, b, t0):
    """Why the relay (pid RELAY) made no progress over [a, b] (the trace's
    clock) when it waited on no lock: asleep (in epoll_wait), while its
    CPU's softirq lock was held by a task its cgroup's throttle stopped
    (bh_holder). On PREEMPT_RT whatever would have woken the relay runs as
    a softirq of that CPU or needs the lock: its timerfd tick is a soft
    hrtimer, a datagram sent on that CPU is received in its sender's
    softirq section; so is the quota period's timer, which would let the
    group go: the hold ends only when something outside lets the group go
    (a write to cpu.max) or an RT task that needs the lock boosts the
    holder through it. Nobody waits for the lock at a priority, so
    nobody lends one: an inversion the epoll fix does not reach.
    The period's timer is told of when the trace recorded it
    (Timeline.timer_runs). The chain (kind "softirq"), complete or saying what
    is missing; None when the relay was not asleep or no task held the
    lock then."""
    stops = tl.stops.get(relay, [])
    # The stall begins at the relay's last progress; it goes to sleep
    # right after, within its own loop.
    i = _at_or_before(stops, a + 5e-3)
    if i < 0 or not stops[i].state.startswith("S"):
        return None
    asleep = stops[i]
    back = tl.ran_after(relay, asleep.ts + 1e-9)
    if back is not None and back < b - 5e-3:
        return None
    cpu = asleep.cpu
    found = bh_holder(tl, cpu, asleep.ts)
    if found is None:
        return None
    pid, out, ran = found
    missing = []
    c = {"kind": "softirq", "cpu": cpu,
         "relay": {"task": tl.task(relay), "state": "asleep", "asleep_since_s": rel_s(asleep.ts, t0),
                   "ran_again_s": rel_s(back, t0)},
         "holder": dict(tl.task(pid), holding="serving softirqs" if out.flags[2] in "sH"
                        else "with softirqs disabled", switched_out_s=rel_s(out.ts, t0),
                        switched_out_state=out.state, ran_again_s=rel_s(ran, t0))}
    thr = _throttle_over(tl, max(out.ts, a), b)
    end = ran
    if thr is None:
        missing.append("no throttle of a cgroup held the holder then")
    else:
        _, iv = thr
        c["throttle"] = {"throttled_s": rel_s(iv.start, t0), "unthrottled_s": rel_s(iv.end, t0),
                         "unthrottled_by": iv.cause, "unthrottled_by_text": UNTHROTTLE_TEXT.get(iv.cause)}
        if iv.end is None:
            missing.append("the throttle had not ended when the trace stopped")
        # the holder runs again once its group does, and lets the lock go
        end = iv.end if end is None or (iv.end is not None and iv.end < end) else end
        if tl.timer_arms or tl.timer_runs:
            rows = [r.ts for r in tl.timer_runs if r.cpu == cpu]
            nxt = _next(rows, iv.start)
            c["period_timer"] = {"last_before_s": rel_s(_last(rows, iv.start), t0), "next_s": rel_s(nxt, t0),
                                 "none_for_ms": span_ms(iv.start, nxt if nxt is not None else iv.end)}
    if ran is None and (thr is None or thr[1].end is None):
        missing.append("the holder had not run again when the trace stopped")
    raised = _next(tl.hrtimer_raised.get(cpu, []), out.ts)
    if raised is not None and (end is None or raised <= end):
        served = _first_at_or_after(tl.hrtimer_served.get(cpu, []), raised)
        c["hrtimer_softirq"] = {"raised_s": rel_s(raised, t0),
                                "served_s": rel_s(served.ts if served else None, t0),
                                "served_by": tl.task(served.pid) if served else None,
                                "pending_ms": span_ms(raised, served.ts if served else None)}
    # who waited for the lock meanwhile: a task of the CPU on a per-CPU
    # lock of that CPU (the run queue's neighbour, PERCPU_NEAR)
    rq = thr[0][1] if thr else None
    waiters = {w.pid for w in tl.waits_between(out.ts, end if end is not None else tl.last)
               if w.cpu == cpu and w.pid != pid and rq is not None and abs(w.lock - rq) < PERCPU_NEAR}
    c["waiters"] = [tl.task(w) for w in sorted(waiters)]
    c["held_ms"] = span_ms(out.ts, end)
    c["covers_ms"] = span_ms(max(a, out.ts), min(b, end)) if end is not None else span_ms(max(a, out.ts), b)
    c["complete"] = not missing
    if missing:
        c["missing"] = missing
    return c


def softirq_line(c):
    """A softirq chain in words, for the terminal and the page."""
    h, r = c["holder"], c["relay"]
    text = (f"the relay slept in epoll_wait from {r['asleep_since_s']} s while CPU {c['cpu']}'s softirq lock "
            f"was held by {h['comm']}/{h['pid']}, switched out {h['holding']} at {h['switched_out_s']} s")
    t = c.get("throttle")
    if t:
        text += f" while its cgroup was throttled (from {t['throttled_s']} s)"
    text += ("; the relay's tick (a timerfd), datagrams sent on that CPU and the quota period's refill "
             "(sched_cfs_period_timer: soft hrtimers on PREEMPT_RT) all waited for that lock, and no task "
             "that waited for it could lend the holder a priority")
    p = c.get("period_timer")
    if p and p["none_for_ms"] is not None:
        text += f"; the period's timer did not run for {p['none_for_ms']:.1f} ms"
    if t and t["unthrottled_s"] is not None:
        text += f"; let go at {t['unthrottled_s']} s by {t['unthrottled_by_text']}"
    return text
