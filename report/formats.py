"""The readers of the files that cross a process (docs/formats.md): what
the guests, relay, loadgen, the drivers and the kernel harness write and
the judges, the pages and the tests read.

A JSON file is a record: a frozen dataclass whose fields say what its
object holds, the type of each (int, float for any number, str, bool,
list[X], dict[str, X], another record, dict or list for what is passed on
as it is, Optional[X] where null or absent is allowed) and, in their
metadata, what each means. read() checks a file against its record and
names the file and the field of whatever does not fit (DataError); keys a
reader does not know are let through, so that a writer can add one.
FILES lists the records; table() is a record as a
Markdown field table, and docs/formats.md holds them all (a test keeps
the two the same). The text files (relay-preflight's words, uname,
cgroup v2's cpu.stat and cpu.max) have a reader each.

  mk/py report.formats               prints every field table, as docs/formats.md has them
  mk/py report.formats docs          writes them into docs/formats.md (when a record changed)
  mk/py report.formats check FILE...  checks each file against its record (exit 65 if one does not fit)
"""
import inspect
import json
import math
import os
import re
import sys
import types
import typing
from dataclasses import MISSING, dataclass, field, fields, is_dataclass
from typing import Any, Optional

from .files import NUMBER_MAX, DataError, LongNumber, quoted, read_json


# -- records: a file's fields as a dataclass, read with validation -----------

def about(doc, key=None):
    """A field's metadata: what it means, and its JSON key when that is not
    a Python name (a field "class_" read from "class")."""
    return {"doc": doc, "key": key}


def optional(doc, key=None):
    """A field that may be absent or null (None)."""
    return field(default=None, metadata=about(doc, key))


def _key(f):
    return f.metadata.get("key") or f.name


def _nullable(t):
    """X for Optional[X], else None."""
    if typing.get_origin(t) is typing.Union:
        args = [a for a in typing.get_args(t) if a is not types.NoneType]  # noqa: E721 (NoneType is not a class to isinstance)
        if len(args) == 1:
            return args[0]
    return None


def _show(v):
    if isinstance(v, LongNumber) or (isinstance(v, int) and abs(v) >= NUMBER_MAX):
        return quoted(v)
    text = repr(v)
    return text if len(text) <= 60 else text[:57] + "..."


def check_value(t, v, file, name):
    """V as type T, or a DataError naming FILE and NAME."""
    def wrong(what):
        return DataError(f"{file}: {name}: expected {what}, got {_show(v)}")
    inner = _nullable(t)
    if inner is not None:
        return None if v is None else check_value(inner, v, file, name)
    if is_dataclass(t):
        return parse(t, v, file, name)
    origin, args = typing.get_origin(t), typing.get_args(t)
    if origin is list:
        if not isinstance(v, list):
            raise wrong("a list")
        return [check_value(args[0], x, file, f"{name}[{i}]") for i, x in enumerate(v)]
    if origin is dict:
        if not isinstance(v, dict):
            raise wrong("an object")
        return {k: check_value(args[1], x, file, f"{name}.{k}") for k, x in v.items()}
    if t is typing.Any:
        return v
    if t is float:
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise wrong("a number")
        if isinstance(v, int) and abs(v) >= NUMBER_MAX:
            raise wrong("a number under 2^63")
        if not math.isfinite(v):
            raise wrong("a number")
        return v
    if t is int:
        if isinstance(v, bool) or not isinstance(v, int):
            raise wrong("a whole number")
        if abs(v) >= NUMBER_MAX:
            raise wrong("a whole number under 2^63")
        return v
    names = {str: "text", bool: "true or false", dict: "an object", list: "a list"}
    if t in names:
        if not isinstance(v, t) or (t is not bool and isinstance(v, bool)) or isinstance(v, LongNumber):
            raise wrong(names[t])
        return v
    raise TypeError(f"records: {t} is not a type a record reads")


def parse(cls, obj, file, name=None):
    """A CLS from the JSON object OBJ read from FILE (NAME: where in it)."""
    if not isinstance(obj, dict):
        raise DataError(f"{file}: {name + ': ' if name else ''}expected an object, got {_show(obj)}")
    hints = typing.get_type_hints(cls)
    got = {}
    for f in fields(cls):
        key = _key(f)
        where = f"{name}.{key}" if name else key
        v = obj.get(key)
        if v is None and f.default is MISSING and f.default_factory is MISSING:
            raise DataError(f"{file}: {where}: "
                            + ("missing" if key not in obj else "null, expected a value"))
        if v is None and _nullable(hints[f.name]) is None and key in obj:
            raise DataError(f"{file}: {where}: null, expected a value")
        if key in obj:
            got[f.name] = check_value(hints[f.name], v, file, where)
    rec = cls(**got)
    object.__setattr__(rec, "_raw", obj)   # a frozen record's one extra: what it was read from
    return rec


def raw(rec):
    """The JSON object REC was read from, as it was (keys in the writer's
    order, those no field names too): for what a judge passes on whole."""
    return rec._raw


def read(cls, path):
    """The CLS in the JSON file at PATH."""
    return parse(cls, read_json(path), path)


def _type_words(t, nested=False):
    inner = _nullable(t)
    if inner is not None:
        return f"({_type_words(inner, True)} or null)" if nested else _type_words(inner, True) + ", or null"
    if is_dataclass(t):
        return "object" if not getattr(t, "NAMED", None) else t.NAMED
    origin, args = typing.get_origin(t), typing.get_args(t)
    if origin is list:
        return f"list of {_type_words(args[0], True)}"
    if origin is dict:
        return f"object of {_type_words(args[1], True)}"
    return {float: "number", int: "whole number", str: "text", bool: "true/false",
            dict: "object", list: "list", typing.Any: "any"}[t]


def _rows(cls, prefix):
    hints = typing.get_type_hints(cls)
    for f in fields(cls):
        t = hints[f.name]
        name = prefix + _key(f)
        yield f"| `{name}` | {_type_words(t)} | {f.metadata.get('doc', '')} |"
        inner = _nullable(t) or t
        if typing.get_origin(inner) is list and is_dataclass(typing.get_args(inner)[0]):
            inner, name = typing.get_args(inner)[0], name + "[]"
        elif typing.get_origin(inner) is dict and is_dataclass(typing.get_args(inner)[1]):
            inner, name = typing.get_args(inner)[1], name + ".*"
        if is_dataclass(inner) and not getattr(inner, "NAMED", None):
            yield from _rows(inner, name + ".")


def table(cls):
    """The Markdown field table of CLS, nested records by their dotted
    names (a NAMED record, such as a percentile object, by its name)."""
    return "\n".join(["| field | type | meaning |", "|---|---|---|", *_rows(cls, "")]) + "\n"


# -- the text files -------------------------------------------------------------

# relay-preflight's lines: "LEVEL    WHAT: TEXT" (deploy/preflight, say).
FIX = "epoll ready-list fix"
PREFLIGHT_LINE = re.compile(r"^(ok|warn|act|note|unknown)\s+" + re.escape(FIX) + r": (.*)$")

PCT_KEYS = ("p50", "p99", "p99_9", "p99_99", "max")


def pcts(obj, where):
    """A percentile object (docs/formats.md) with the keys a page shows."""
    if not isinstance(obj, dict) or any(k not in obj for k in PCT_KEYS):
        raise DataError(f"{where}: expected a percentile object with {', '.join(PCT_KEYS)}")
    return {k: obj[k] for k in obj if k in PCT_KEYS + ("p90", "count", "mean")}


def text_lines(path):
    """The lines of a text file; DataError naming it when it cannot be read."""
    try:
        with open(path, encoding="utf-8") as f:
            return f.read().splitlines()
    except OSError as e:
        raise DataError(f"{path}: {e.strerror or e}")


def release(path):
    """The kernel release from a `uname -a` line."""
    fields = (text_lines(path) or [""])[0].split()
    if len(fields) < 3 or fields[0] != "Linux":
        raise DataError(f"{path}: expected a `uname -a` line")
    return fields[2]


def preflight_release(path):
    """The kernel release relay-preflight spoke of (its "kernel X (...)" line)."""
    fields = (text_lines(path) or [""])[0].split()
    if len(fields) < 2 or fields[0] != "kernel":
        raise DataError(f"{path}: expected relay-preflight's \"kernel RELEASE\" line first")
    return fields[1]


def preflight(path):
    """What relay-preflight said of the fix: (level, text)."""
    for line in text_lines(path):
        m = PREFLIGHT_LINE.match(line)
        if m:
            return m.group(1), m.group(2)
    raise DataError(f"{path}: relay-preflight said nothing of the {FIX}")


def cpu_stat(path):
    """A cgroup v2 cpu.stat as {key: int}; nr_periods and nr_throttled needed."""
    out = {}
    for n, line in enumerate(text_lines(path), 1):
        fields = line.split()
        if len(fields) != 2 or not fields[1].isdigit():
            raise DataError(f"{path}:{n}: expected 'key value', got {line!r}")
        out[fields[0]] = int(fields[1])
    for key in ("nr_periods", "nr_throttled"):
        if key not in out:
            raise DataError(f"{path}: no {key}")
    return out


def cpu_max(path):
    """A cgroup v2 cpu.max ("QUOTA PERIOD", QUOTA "max" for none) as
    (its text, the quota in % of one CPU or None)."""
    line = " ".join(text_lines(path)).strip()
    m = re.fullmatch(r"(max|\d+) (\d+)", line)
    if not m or int(m.group(2)) == 0:
        raise DataError(f"{path}: expected 'QUOTA PERIOD' (QUOTA a number or max), got {line!r}")
    quota = None if m.group(1) == "max" else 100.0 * int(m.group(1)) / int(m.group(2))
    return line, quota


# -- the records: one per JSON file that crosses a process -------------------

def _f(doc, key=None):
    """A field every file of its kind has."""
    return field(metadata=about(doc, key))


@dataclass(frozen=True)
class Percentiles:
    """A latency distribution in JSON (lib/results.c, loadgen, relay, the
    scenario, the model): microseconds."""
    NAMED = "percentile object"
    p50: float = _f("median")
    p99: float = _f("99th percentile")
    p99_9: float = _f("99.9th percentile")
    p99_99: float = _f("99.99th percentile")
    max: float = _f("the largest sample")
    p90: Optional[float] = optional("90th percentile")
    count: Optional[int] = optional("samples")
    mean: Optional[float] = optional("their mean")


def shown(p):
    """The keys a summary carries of the percentile object P (a
    Percentiles), in the order its writer gave them; None for None."""
    if p is None:
        return None
    return {k: v for k, v in raw(p).items() if k in PCT_KEYS + ("p90", "count", "mean")}


# spec.json -------------------------------------------------------------------

@dataclass(frozen=True)
class Spec:
    """spec.json: every parameter of a run, resolved once by its driver
    (lab/*/run, lab/lab spec); the guest reads it at /etc/lab/spec.json."""
    experiment: Optional[str] = optional("demo, capacity, host-ab, soak, fleet, model, falseneg, unixwake")
    run_id: Optional[str] = optional("the run's id: its directory's name")
    clock: Optional[str] = optional("the guests' clock: virtual or host (kernel/vm/boot)")
    mode: Optional[str] = optional("demo: vm (two guests) or host (this machine)")
    kernel_line: Optional[str] = optional("demo: the kernel pair's Debian line (kernel/lines/)")
    trace: Optional[str] = optional("demo: on or off, the kernel's trace in the guests")
    guest_timeout_s: Optional[int] = optional("a guest not done by then is hung (wall seconds)")
    salt_us: Optional[int] = optional("how long a guest waits before its experiment starts "
                                      "(labkit.guest.salt_us)")
    kernel_args: Optional[str] = optional("demo: words added to both guests' kernel command line "
                                          "(\"\" when none)")
    repeats: Optional[int] = optional("capacity: the independent repeats, each a stock and a patched "
                                      "guest of its own")
    salts_us: Optional[list[int]] = optional("capacity: each repeat's salt, from repeat 1 (both guests "
                                             "of a repeat share it)")
    scenario: Optional[dict] = optional("demo, host A/B, capacity: demo-scenario's parameters by their "
                                        "names (lab/README.md's names table; demo-scenario --help); "
                                        "capacity: without each cell's rate, quota and busy-wait")
    capacity: Optional[dict] = optional("capacity: the grid's parameters (lab/capacity/README.md's table), "
                                        "and slo, the objectives as given")
    seconds: Optional[int] = optional("falseneg, unixwake: each guest's run, guest seconds")
    kernels: Optional[dict[str, str]] = optional("falseneg, unixwake: each kernel's name and image")


# run.json --------------------------------------------------------------------

@dataclass(frozen=True)
class Phase:
    name: str = _f("what the driver did, as it said it ([i/N] NAME)")
    seconds: float = _f("how long it took, wall seconds")


@dataclass(frozen=True)
class RunRecord:
    """run.json: the driver's record of a run (labkit.run.Run.save)."""
    run_id: str = _f("the run's id")
    phases: list[Phase] = _f("each phase, in order")
    wall_s: Optional[float] = optional("the whole run so far, wall seconds")
    date: Optional[str] = optional("when it started, UTC (ISO 8601)")
    mode: Optional[str] = optional("demo: vm or host")
    initramfs_sha256: Optional[str] = optional("the one initramfs every guest booted")
    kernels: Optional[dict[str, Optional[str]]] = optional("each kernel's version string, from its image")
    guest_wall_s: Optional[float] = optional("capacity: the guests' phase, wall seconds")
    status: Optional[int] = optional("falseneg, unixwake, demo-matrix: the driver's exit status")
    pairs: Optional[list[str]] = optional("demo-matrix: the pairs it ran")


# boot.json -------------------------------------------------------------------

@dataclass(frozen=True)
class Boot:
    """boot.json: one guest's boot, as kernel/vm/boot wrote it and the driver
    added to it (labkit.guest.record)."""
    outcome: Optional[str] = optional("ok, failed, hung or no-results (absent: no-results)")
    clock: Optional[str] = optional("virtual or host")
    accel: Optional[str] = optional("QEMU's accelerator")
    tsc_khz: Optional[int] = optional("the guest's TSC rate")
    release: Optional[str] = optional("the kernel's release")
    cmdline: Optional[str] = optional("the kernel's command line")
    wall_s: Optional[float] = optional("the guest's wall seconds")
    started: Optional[float] = optional("when it started, Unix time")
    ended: Optional[float] = optional("when it ended, Unix time")
    exit_status: Optional[int] = optional("kernel/vm/boot's exit status")
    initramfs_sha256: Optional[str] = optional("the initramfs it booted")
    kernel_image: Optional[str] = optional("the image it booted")
    version: Optional[str] = optional("the image's version string")
    timeout_s: Optional[int] = optional("its wall-time limit")
    attempts: Optional[int] = optional("boots it took (a guest whose timer failed calibration is "
                                       "booted again)")
    problem: Optional[str] = optional("what went wrong, in words")
    repeat: Optional[int] = optional("capacity: the repeat it ran (lab.repeat=N on its command line)")
    salt_us: Optional[int] = optional("capacity: that repeat's salt")


# scenario.json ---------------------------------------------------------------

@dataclass(frozen=True)
class Stall:
    start_s: float = _f("when the relay stopped making progress (the results' seconds)")
    length_ms: float = _f("to its end, or to the quota's restore when it did not end")
    detected_s: Optional[float] = optional("when the watchdog saw it")
    lift_s: Optional[float] = optional("when the watchdog lifted the quota")
    restore_s: Optional[float] = optional("when it put the quota back")
    ended: Optional[bool] = optional("the relay moved again")
    cleared: Optional[bool] = optional("it moved again after the lift")
    relay_stack: Optional[str] = optional("the relay's kernel stack while stalled")
    end_s: Optional[float] = optional("when the relay moved again (null: it did not)")
    after_lift_ms: Optional[float] = optional("from the lift to the end")

    @property
    def until_s(self):
        """When it ended: its end, else the quota's restore, else its start
        plus its length."""
        return next((v for v in (self.end_s, self.restore_s) if v is not None and v >= 0),
                    self.start_s + self.length_ms / 1000)


@dataclass(frozen=True)
class Watchdog:
    polls: int = _f("the watchdog's polls")
    max_poll_late_ms: Optional[float] = optional("its latest poll")
    max_poll_gap_ms: Optional[float] = optional("the same, as runs before the name wrote it")


@dataclass(frozen=True)
class ScenarioCgroup:
    version: Optional[int] = optional("cgroup version, 1 or 2")
    path: Optional[str] = optional("the co-tenant's cgroup")
    nr_periods: Optional[int] = optional("cpu.stat's, over the run")
    nr_throttled: Optional[int] = optional("cpu.stat's, over the run")
    throttled_us: Optional[int] = optional("cpu.stat's, over the run")


@dataclass(frozen=True)
class FreezeListed:
    due_s: float = _f("the probe's slot (the results' seconds)")
    woke_s: float = _f("when it woke")


@dataclass(frozen=True)
class FreezeProbe:
    cpu: int = _f("the vCPU it watched")
    wakes: int = _f("its wake-ups, every 5 ms")
    freezes: int = _f("wake-ups min_ms late or more")
    max_ms: float = _f("the latest")
    total_ms: float = _f("the time lost to them")
    min_ms: int = _f("how late counts as a freeze")
    in_stalls: Optional[int] = optional("of the freezes, those inside a stall")
    prio: Optional[int] = optional("its SCHED_FIFO priority")
    listed: Optional[list[FreezeListed]] = optional("each freeze, for the trace to explain (fewer than "
                                                    "freezes when its list filled)")


@dataclass(frozen=True)
class Listed:
    due_s: float = _f("the datagram's slot (the results' seconds)")
    echo_s: float = _f("its echo")


@dataclass(frozen=True)
class Ticker:
    enabled: bool = _f("the RT ticker ran (--ticker-us > 0)")
    sent: Optional[int] = optional("datagrams sent")
    send_errors: Optional[int] = optional("sends that failed")
    echoes: Optional[int] = optional("echoes received: the samples")
    foreign: Optional[int] = optional("datagrams that were not its own")
    late_ms: Optional[float] = optional("the late limit")
    late: Optional[int] = optional("datagrams over it, slot to echo")
    late_uncorrected: Optional[int] = optional("the same, send() to echo")
    list_over_us: Optional[int] = optional("datagrams slower than this are listed")
    listed: Optional[list[Listed]] = optional("those, for the trace to explain")
    listed_complete: Optional[bool] = optional("every one of them is listed")
    late_in_guest_freeze: Optional[int] = optional("late only by the time a freeze probe saw frozen")
    late_unexplained: Optional[int] = optional("late otherwise")
    freeze_probes: Optional[list[FreezeProbe]] = optional("one per vCPU")
    latency_us: Optional[Percentiles] = optional("slot to echo (coordinated omission corrected)")
    latency_uncorrected_us: Optional[Percentiles] = optional("send() to echo")
    wake_late_us: Optional[Percentiles] = optional("how late its timer woke it")
    lead_us: Optional[int] = optional("how early it wakes before a slot")
    paced_ms: Optional[float] = optional("time it spent pacing")


@dataclass(frozen=True)
class Scenario:
    """scenario.json: what demo-scenario saw of one run (lab/demo/scenario)."""
    params: dict[str, float] = _f("every parameter as it ran, by its name (demo-scenario --help)")
    kernel: Optional[str] = optional("uname -r")
    kernel_version: Optional[str] = optional("uname -v")
    machine: Optional[str] = optional("uname -m")
    elapsed_s: Optional[float] = optional("the run's seconds")
    time_base: Optional[str] = optional("what the seconds count from")
    t0_mono_ns: Optional[int] = optional("that time on CLOCK_MONOTONIC, the trace's clock")
    stalls: list[Stall] = field(default_factory=list, metadata=about("each stall the watchdog saw"))
    watchdog: Optional[Watchdog] = optional("the watchdog's own lateness")
    cgroup: Optional[ScenarioCgroup] = optional("the co-tenant's cgroup and its throttling")
    processes: Optional[dict[str, str]] = optional("how relay and loadgen ended")
    loadgen_stopped_at_end: Optional[bool] = optional("loadgen was stopped when the run ended")
    ticker: Optional[Ticker] = optional("the RT ticker's own view")
    problems: list[str] = field(default_factory=list, metadata=about("what went wrong, in words"))


# relay.json ------------------------------------------------------------------

@dataclass(frozen=True)
class Sched:
    realtime: bool = _f("relay's loop ran SCHED_FIFO")
    policy: Optional[str] = optional("its policy")
    priority: Optional[int] = optional("its priority")
    why: Optional[str] = optional("why not real-time")


@dataclass(frozen=True)
class Relay:
    """relay.json (relay --stats-file; relay-stats.json on a test host): the
    totals; relay(8) says what each count means."""
    program: Optional[str] = optional("relay")
    duration_s: Optional[float] = optional("seconds it ran")
    sched: Optional[Sched] = optional("how its loop was scheduled")
    counters: Optional[dict[str, int]] = optional("datagrams and bytes in and out")
    drops: Optional[dict[str, int]] = optional("drops by reason")
    errors: Optional[dict[str, int]] = optional("errors by kind")
    rx_latency_us: Optional[Percentiles] = optional("a datagram's arrival to relay reading it")
    wake_latency_us: Optional[Percentiles] = optional("relay's wake-ups, arrival to read")
    tick_lateness_us: Optional[Percentiles] = optional("its timerfd tick's lateness")
    listeners: Optional[dict[str, dict]] = optional("each listener's counts, by its URL")
    upstreams: Optional[dict[str, dict]] = optional("each upstream's counts, by its URL")


# loadgen.json ----------------------------------------------------------------

@dataclass(frozen=True)
class Latencies:
    corrected: Optional[Percentiles] = optional("from each datagram's slot in the schedule")
    uncorrected: Optional[Percentiles] = optional("from its send()")


@dataclass(frozen=True)
class LoadCgroup:
    nr_periods: Optional[int] = optional("cpu.stat's")
    nr_throttled: Optional[int] = optional("cpu.stat's")
    throttled_us: Optional[int] = optional("cpu.stat's")
    usage_us: Optional[int] = optional("cpu.stat's")
    path: Optional[str] = optional("the cgroup")
    period_us: Optional[int] = optional("cpu.max's period")
    quota_us: Optional[int] = optional("cpu.max's quota")


@dataclass(frozen=True)
class SlowReply:
    intended_mono_s: float = _f("its slot in the schedule, CLOCK_MONOTONIC seconds")
    reply_mono_s: float = _f("its reply's arrival, the same clock")


@dataclass(frozen=True)
class LoadListed:
    over_us: float = _f("the limit: replies this slow or slower are listed")
    complete: bool = _f("every one of them is listed")
    datagrams: list[SlowReply] = field(default_factory=list, metadata=about("each slow reply"))
    dropped: Optional[int] = optional("those the list had no room for")


@dataclass(frozen=True)
class Loadgen:
    """loadgen.json (loadgen --json; rt-client.json and cotenant.json on a
    test host): one run; loadgen(1) says what each name means."""
    tool: Optional[str] = optional("loadgen")
    target: Optional[str] = optional("where it sent")
    target_rate: Optional[float] = optional("the rate asked for, per second")
    achieved_rate: Optional[float] = optional("the rate it kept")
    expected: Optional[int] = optional("datagrams the schedule had")
    sent: Optional[int] = optional("datagrams sent")
    received: Optional[int] = optional("replies")
    lost: Optional[int] = optional("datagrams without a reply")
    latency_us: Optional[Latencies] = optional("send to reply")
    rate_ok: Optional[bool] = optional("it kept its rate")
    rate_shortfall_pct: Optional[float] = optional("how far below it fell")
    rt_priority: Optional[int] = optional("its SCHED_FIFO priority, when it had one")
    cgroup: Optional[LoadCgroup] = optional("its own cgroup (--cgroup)")
    watched_cgroup: Optional[LoadCgroup] = optional("the cgroup it watched while it ran (--watch-cgroup)")
    listed: Optional[LoadListed] = optional("the replies slower than --list-over-us, each")


@dataclass(frozen=True)
class RtThread:
    policy: str = _f("SCHED_FIFO, SCHED_RR, SCHED_OTHER, ... (/proc/TID/stat's policy)")
    priority: int = _f("its real-time priority (rt_priority; 0 when not real-time)")
    tid: Optional[int] = optional("the thread's id")
    comm: Optional[str] = optional("its name")
    cpu: Optional[int] = optional("the CPU it last ran on")
    cpus_allowed: Optional[str] = optional("the CPUs it may run on (a list, as /proc says it)")


@dataclass(frozen=True)
class RtSched:
    """rt-client.sched.json (deploy/hostimg/checks' scenario): the RT
    client's threads as the kernel had them scheduled while it ran."""
    threads: list[RtThread] = _f("each thread, read from /proc")
    pid: Optional[int] = optional("the RT client's process")


# chains.json -----------------------------------------------------------------

@dataclass(frozen=True)
class Lost:
    total: int = _f("events the trace did not see")
    dropped: Optional[int] = optional("the ring buffers dropped")
    overrun: Optional[int] = optional("overwritten")
    kprobe_missed: Optional[int] = optional("the kretprobe missed")


@dataclass(frozen=True)
class TraceSeen:
    events: int = _f("events read")
    lost: Lost = _f("what the trace could not see")
    complete: bool = _f("nothing was lost")
    span_s: Optional[list[Optional[float]]] = optional("the first and the last event (the results' seconds)")
    read_s: Optional[list[list[float]]] = optional("the spans read, when only some were")


@dataclass(frozen=True)
class ChainTotals:
    stalls: int = _f("stalls in scenario.json")
    stalls_explained: int = _f("those with a chain")
    late: int = _f("RT datagrams listed")
    late_explained: int = _f("those with a chain")
    late_by_lock: Optional[int] = optional("explained by a wait on the ready-list lock")
    late_vcpu_idle: Optional[int] = optional("while the ticker's vCPU did not execute")
    freezes: Optional[int] = optional("freezes the probes counted")
    freezes_explained: Optional[int] = optional("those the trace accounts for")
    freezes_unexplained: Optional[int] = optional("those it does not")


@dataclass(frozen=True)
class Contentions:
    rt_waits: int = _f("RT tasks' waits on a ready-list lock")
    boosts: int = _f("of those, with the holder boosted")
    rt_wait_us: Optional[dict[str, float]] = optional("their length: p50, p90, p99, max, n")
    boosted_to: Optional[list] = optional("[policy, priority] the holders were boosted to")
    lent_by_others: Optional[int] = optional("waits ended by another task boosting the holder "
                                             "through another lock")
    lent_by: Optional[dict[str, int]] = optional("those, by the task that lent")


@dataclass(frozen=True)
class ChainStep:
    cause: Optional[str] = optional("a missed step's cause: lock, cpu or loss")
    covered: Optional[bool] = optional("the trace covers the step")
    lock_waits: Optional[float] = optional("RT waits on the ready-list lock in the step")
    lock_wait_ms_max: Optional[float] = optional("the longest")
    relay_cpu_share: Optional[float] = optional("the relay's CPU busy, a share")
    target_rate: Optional[float] = optional("the step's rate")


@dataclass(frozen=True)
class ChainFreezes:
    counted: int = _f("freezes the probes counted")
    explained: int = _f("those the trace accounts for")
    unexplained: int = _f("those it does not, the unlisted ones too")
    rows: list[dict] = _f("a row per listed freeze: cpu, due_s, woke_s, late_ms, in_stall, steps, "
                          "cause (vcpu, idle or task) or unexplained (why), and text")
    limit_ms: Optional[float] = optional("how late counts as a freeze")
    unlisted: Optional[int] = optional("freezes counted but not listed (a list that filled)")
    in_stalls: Optional[int] = optional("rows inside a stall")
    by_cause: Optional[dict[str, int]] = optional("the explained ones by cause")


@dataclass(frozen=True)
class Chains:
    """chains.json: what lab/ktrace/explain made of one guest's trace: a
    chain per stall and slow RT datagram (lab/demo/README.md)."""
    line: str = _f("the headline, in a line")
    totals: ChainTotals = _f("how many were explained")
    stalls: list[dict] = _f("a row per stall, its chain (waiter, lock, holder, holder_state, boost) "
                            "when found")
    late: list[dict] = _f("a row per listed RT datagram, its chain when found")
    contentions: Contentions = _f("the waits on the ready-list lock")
    trace: TraceSeen = _f("what the trace saw")
    kernel: Optional[str] = optional("--name, the kernel's name in the run")
    ready_list_lock: Optional[dict] = optional("the lock's offset in struct eventpoll, and its support")
    longest_rt_wait: Optional[dict] = optional("the chain of the longest RT wait")
    longest_non_rt_wait: Optional[dict] = optional("the chain of the longest other wait")
    softirq_held: Optional[dict] = optional("softirqs held by a throttled task (the non-RT waker)")
    steps: Optional[list[ChainStep]] = optional("with --sweep: each step's cause, in the sweep's order")
    freezes: Optional[ChainFreezes] = optional("each late wake-up of the freeze probes, explained "
                                               "(lab/ktrace/freezes.py)")


# capacity: cell.json, probe.json ---------------------------------------------

@dataclass(frozen=True)
class Cell:
    """cell.json: the part of the spec one capacity cell ran (lab/capacity/grid)."""
    cpu_quota_pct: int = _f("the co-tenant's quota, % of one CPU")
    cotenant_rate_pps: int = _f("its rate")
    cotenant_spin_us: int = _f("its busy-wait before each send")


@dataclass(frozen=True)
class Probe:
    """probe.json: one probe of the quota search (lab/capacity/grid)."""
    probe: int = _f("its place in the search, from 1")
    cpu_quota_pct: int = _f("the quota it tried")
    cotenant_rate_pps: Optional[int] = optional("the co-tenant's rate")
    cotenant_spin_us: Optional[int] = optional("its busy-wait")


@dataclass(frozen=True)
class Running:
    """running.json: the scenario once its loadgen sends, written whole by
    demo-scenario into its --out, for a driver that runs its own load
    beside it (a capacity cell's RT client and its trace: lab/capacity/grid)."""
    cgroup: str = _f("the co-tenant's cgroup (its directory under /sys/fs/cgroup), whose cpu.max is "
                     "the quota")
    relay_udp: str = _f("the relay's UDP listener on loopback (udp://127.0.0.1:PORT): where RT clients send")
    loadgen_target: str = _f("where the co-tenant's loadgen sends: relay_udp, or with af_unix 1 the relay's "
                             "abstract AF_UNIX name (unix://@relay-demo-PID)")
    relay_pid: int = _f("the relay's process id")
    loadgen_pid: int = _f("the co-tenant loadgen's process id")
    senders: int = _f("the co-tenant's sender threads (its cgroup holds them and its main thread)")


# the kernel's manifest.json ----------------------------------------------------

@dataclass(frozen=True)
class Source:
    package: Optional[str] = optional("Debian's source package")
    version: Optional[str] = optional("its version")
    verified_by: Optional[str] = optional("how it was checked")
    rt_patches: Optional[Any] = optional("Debian's RT patches applied")


@dataclass(frozen=True)
class Manifest:
    """manifest.json beside kernel images: how they were obtained and what
    they carry (kernel/build; kernel/debian-image for Debian's own)."""
    images_kind: str = _f("ab (our stock and patched build), historical (Debian's old source as shipped), "
                          "or debian-image (Debian's own image)")
    package: Optional[str] = optional("Debian's package")
    version: Optional[str] = optional("its version")
    line: Optional[str] = optional("the kernel line (kernel/lines/)")
    key: Optional[str] = optional("the cache's content hash")
    compiler: Optional[str] = optional("gcc --version")
    preempt_rt: Optional[bool] = optional("PREEMPT_RT is on")
    source: Optional[Source] = optional("the source it was built from")
    series: Optional[list[str]] = optional("the patch series")
    kernel_releases: Optional[dict[str, str]] = optional("each kernel's release")
    eventpoll_locks: Optional[dict] = optional("the ready-list lock's type in each image")
    images: Optional[dict[str, dict]] = optional("each image: file, sha256")
    packages: Optional[dict[str, dict]] = optional("kernel/build --host: each package: file, package, sha256")
    obtained: Optional[str] = optional("how it was obtained, in words (debian-image)")
    name: Optional[str] = optional("debian-image: its name in kernel/debian-images.conf")
    deb_sha256: Optional[str] = optional("debian-image: the package's pinned sha256")
    kernel_release: Optional[str] = optional("debian-image: its release")
    btf_eventpoll_lock: Optional[str] = optional("debian-image: the lock struct eventpoll has in its BTF")


# summary.json ------------------------------------------------------------------

@dataclass(frozen=True)
class Freezes:
    count: int = _f("freezes the probes saw")
    in_stalls: int = _f("those inside a stall")
    total_ms: float = _f("time lost to them")
    max_ms: float = _f("the longest")
    min_ms: Optional[float] = optional("how late counts as one")
    outside: Optional[list[dict]] = optional("each freeze outside the stalls: cpu, due_s, late_ms")
    explained: Optional[list[dict]] = optional("those the trace accounts for, with their cause and text")
    borderline: Optional[list[dict]] = optional("those it does not, within the probe's resolution of "
                                                "the limit")
    unexplained: Optional[list[dict]] = optional("the others, with their text: on the virtual clock, "
                                                 "the run is invalid")
    complete: Optional[bool] = optional("scenario.json listed every freeze it counted")


@dataclass(frozen=True)
class DemoKernel:
    """One kernel's object in a demo's summary.json (lab/demo/judge.py)."""
    NAMED = "kernel object (below)"
    outcome: str = _f("ok, failed, hung or no-results")
    problems: list[str] = _f("what went wrong, in words")
    stalls: Optional[int] = optional("watchdog stalls (null: no results)")
    worst_stall_ms: Optional[float] = optional("the longest")
    initramfs_sha256: Optional[str] = optional("what it booted")
    kernel_image: Optional[str] = optional("the image")
    kernel: Optional[str] = optional("uname -r in the guest")
    wall_s: Optional[float] = optional("the guest's wall seconds")
    timeout_s: Optional[int] = optional("its limit")
    hung_after_scenario: Optional[bool] = optional("it hung after its scenario was done")
    params: Optional[dict] = optional("scenario.json's params")
    stall_ms: Optional[list[float]] = optional("each stall's length")
    cleared_after_lift_ms: Optional[list[float]] = optional("each cleared stall, from the lift to its end")
    uncleared_stalls: Optional[int] = optional("stalls the lift did not end")
    throttled_periods: Optional[int] = optional("the co-tenant's throttled periods")
    periods: Optional[int] = optional("its periods")
    throttled_us: Optional[int] = optional("its time throttled")
    watchdog: Optional[Watchdog] = optional("the watchdog's own lateness")
    relay_latency_us: Optional[Percentiles] = optional("relay's timer tick lateness")
    relay_rx_latency_us: Optional[Percentiles] = optional("relay's arrival to read")
    relay_wake_latency_us: Optional[Percentiles] = optional("relay's wake-ups")
    relay_realtime: Optional[bool] = optional("relay ran SCHED_FIFO")
    loadgen_latency_us: Optional[Percentiles] = optional("the co-tenant's send to reply")
    loadgen_corrected_latency_us: Optional[Percentiles] = optional("the same from its schedule")
    rt_ticker: Optional[bool] = optional("the RT ticker ran")
    rt_latency_us: Optional[Percentiles] = optional("the RT ticker's datagrams, slot to echo")
    rt_late: Optional[int] = optional("of those, late (the host clock: freezes left out)")
    rt_late_all: Optional[int] = optional("late, every one")
    rt_late_in_guest_freeze: Optional[int] = optional("host clock: late only by a freeze")
    rt_late_uncorrected: Optional[int] = optional("late from send()")
    rt_late_borderline: Optional[int] = optional("late by no more than the latency's resolution "
                                                 "(on the virtual clock, not counted)")
    rt_samples: Optional[int] = optional("datagrams measured")
    rt_expected: Optional[int] = optional("datagrams the run should have sent")
    guest_freezes: Optional[Freezes] = optional("what the freeze probes saw")
    timer_late_windows: Optional[int] = optional("100 ms windows with the timer tick late")
    image_facts: Optional[dict] = optional("what the driver knew of the image before it booted (its "
                                           "kernel.json: how it was obtained, its ep->lock, its throttle "
                                           "model, the probe's offsets)")
    why: Optional[dict] = optional("the trace's chains in brief (chains.json's line, totals, trace, "
                                   "contentions, worst_stall, worst_late, non_rt_waiter, longest_rt_wait, "
                                   "softirq_held, freezes, and chains: its path)")


@dataclass(frozen=True)
class Honesty:
    same_initramfs: bool = _f("both kernels booted the same initramfs")
    same_params: bool = _f("and ran the same parameters")


@dataclass(frozen=True)
class VerdictRule:
    """The verdict rule a demo's summary was judged by (lab/demo/judge.py)."""
    clock: Optional[str] = optional("the clock it is for: virtual or host")
    late_ms: Optional[float] = optional("an RT datagram this late counts as late")
    signal_ms: Optional[float] = optional("late_ms's name in summaries before it")
    effect_ratio: Optional[float] = optional("stock's RT max over patched's that shows the effect")
    effect_min_late: Optional[int] = optional("late RT datagrams that show the effect")
    patched_late_allowance: Optional[int] = optional("late RT datagrams the patched kernel may have")
    min_rt_share: Optional[float] = optional("the share of its RT datagrams a kernel must have measured")
    text: Optional[str] = optional("the rule, in words")


@dataclass(frozen=True)
class DemoSummary:
    """summary.json of a demo run (report/summarize; lab/demo/judge.py)."""
    kind: str = _f("vm-demo (stock and patched) or host (one run on this machine)")
    verdict: str = _f("fixed, not fixed, no effect, incomplete, invalid, or single run")
    headline: str = _f("the verdict in a line")
    params: dict = _f("the scenario's parameters and the clock, from spec.json")
    spec: dict = _f("spec.json as it was")
    honesty: Honesty = _f("the two runs are comparable")
    clock: Optional[str] = optional("the guests' clock (null for a host run)")
    run_id: Optional[str] = optional("run.json's")
    date: Optional[str] = optional("run.json's")
    initramfs_sha256: Optional[str] = optional("run.json's")
    kernels: Optional[dict[str, Optional[str]]] = optional("run.json's: each kernel's version string")
    phases: Optional[list[Phase]] = optional("run.json's")
    stock: Optional[DemoKernel] = optional("the stock kernel's run")
    patched: Optional[DemoKernel] = optional("the patched kernel's run")
    host: Optional[DemoKernel] = optional("the run on this machine")
    ratio: Optional[float] = optional("the RT p99, stock over patched")
    rule: Optional[VerdictRule] = optional("the verdict rule as data, and in words")
    non_rt_waker: Optional[dict] = optional("the caveat counted: what, and each kernel's late timer windows")
    borderline: Optional[list[str]] = optional("the verdict's inputs within their resolution of a limit, "
                                               "in words")
    margins: Optional[list[dict]] = optional("each input with a limit: input, value, limit, unit, "
                                             "resolution, borderline (lab/demo/margins.py)")
    cost: Optional[dict] = optional("the kernel harness's cost.json, when it has run")


@dataclass(frozen=True)
class Preflight:
    level: str = _f("ok, warn, act, note or unknown")
    text: str = _f("what relay-preflight said of the fix")


@dataclass(frozen=True)
class HostChains:
    late: int = _f("RT datagrams late_ms late or more that the trace's late rows list")
    by_chain: int = _f("those a chain explains")
    complete: Optional[bool] = optional("the RT client listed every slow datagram")
    unexplained: list[dict] = field(default_factory=list, metadata=about(
        "the first few without a chain: due_s, latency_ms, why"))


@dataclass(frozen=True)
class HostKernel:
    """One kernel's object in a host A/B's summary.json (lab/hostab/judge.py)."""
    NAMED = "host kernel object (below)"
    outcome: str = _f("ok or no-results")
    problems: list[str] = _f("what went wrong, in words")
    kernel: Optional[str] = optional("the kernel package's release")
    preflight: Optional[Preflight] = optional("relay-preflight on the host")
    rt_expected: Optional[int] = optional("the RT client's datagrams on schedule")
    rt_sent: Optional[int] = optional("sent")
    rt_received: Optional[int] = optional("echoed")
    rt_lost: Optional[int] = optional("lost")
    rt_priority: Optional[int] = optional(
        "its real-time priority as the kernel had it (rt-client.sched.json)")
    rt_policy: Optional[str] = optional("its policy, the same way (null: its threads differed)")
    rt_threads: Optional[list[RtThread]] = optional("each of its threads' policy and priority")
    latency_us: Optional[Percentiles] = optional("slot to echo through relay")
    late: Optional[int] = optional("late datagrams, at most")
    late_at_least: Optional[int] = optional("at least (from the percentile rows; late when it listed them)")
    late_chains: Optional[HostChains] = optional("the late ones the trace explains (null: no trace)")
    stalls: Optional[int] = optional("stalls the watch saw (demo-scenario --watch)")
    why: Optional[dict] = optional("the chains for the page, as the demo's summary has them")
    metrics: Optional[dict[str, str]] = optional("relay's /metrics before and after the scenario: the files")
    relay_wake_us: Optional[Percentiles] = optional("relay's own wake-ups")
    relay_late: Optional[bool] = optional("one of them was late")
    cotenant_rate_pps: Optional[float] = optional("the co-tenant's rate")
    cotenant_nr_periods: Optional[int] = optional("loadgen.slice's periods")
    cotenant_nr_throttled: Optional[int] = optional("its throttled periods")
    cotenant_throttled_us: Optional[int] = optional("its time throttled")
    throttled_during_rt: Optional[int] = optional("throttled periods while the RT client ran")
    periods_during_rt: Optional[int] = optional("periods while it ran")
    slice_cpu_max: Optional[str] = optional("loadgen.slice's cpu.max")
    cpu_quota_pct: Optional[float] = optional("its quota, % of one CPU")
    slice_quota_pct: Optional[float] = optional("the same, as summaries before the lab's name wrote it")


@dataclass(frozen=True)
class HostVerdict:
    word: str = _f("fixed, not fixed, no effect or incomplete")
    holds: bool = _f("word is fixed, and the trace, where recorded, explains each late datagram")
    stock_shows_effect: bool = _f("stock was late")
    patched_free: bool = _f("patched was not, and measured")
    late_explained: Optional[bool] = optional("each late RT datagram on stock has a chain (null: no trace)")


@dataclass(frozen=True)
class HostSummary:
    """summary.json of a run on systemd test hosts (report/summarize
    --testhost; lab/hostab/judge.py)."""
    kind: str = _f("testhost")
    late_ms: float = _f("how late counts")
    kernels: dict[str, HostKernel] = _f("stock and patched")
    verdict: HostVerdict = _f("the verdict")
    headline: str = _f("it in a line")
    rule: str = _f("the rule, in words")
    run_id: Optional[str] = optional("the run's directory name")
    params: Optional[dict] = optional("--param pairs, for the record")


@dataclass(frozen=True)
class ModelVariant:
    wait_us: Percentiles = _f("the RT consumer's waits for the lock")
    waits: int = _f("its waits")
    waits_over_50ms: int = _f("those over 50 ms")
    waits_over_20ms: Optional[int] = optional("over 20 ms")


@dataclass(frozen=True)
class ModelSummary:
    """summary.json of make demo-model (epmodel, lab/model/msum.c)."""
    params: dict = _f("the model's parameters")
    verdict: str = _f("the model's finding, a sentence")
    rwlock: Optional[ModelVariant] = optional("the stock kernel's lock")
    pi_mutex: Optional[ModelVariant] = optional("the patched kernel's")
    mutex: Optional[ModelVariant] = optional("a plain mutex")


# capacity.json ------------------------------------------------------------------

@dataclass(frozen=True)
class CapacityKernel:
    outcome: Optional[str] = optional("its guests' outcome: one word when all agree, else each repeat's")
    version: Optional[str] = optional("the image's version string")
    repeats: Optional[list[dict]] = optional("each repeat's guest: repeat, outcome, version, salt_us, wall_s")
    by_quota: list[dict] = field(default_factory=list, metadata=about(
        "a cell per co-tenant quota and rate over the repeats: cpu_quota_pct, cotenant_rate_pps, "
        "cotenant_spin_us, capacity_pps, capacity (repeats, found, unstable, median, interval), "
        "at_least, limit, searches, rates, steps, stalls, problems (report/README.md)"))
    quota_threshold: Optional[dict] = optional("the quota search, when it ran")


@dataclass(frozen=True)
class Capacity:
    """capacity.json of make capacity (report/capacity; lab/capacity/judge.py)."""
    slo: dict[str, float] = _f("the objectives, us")
    headline: str = _f("the finding, in a line")
    fix_buys: bool = _f("patched carries more at the headline's quota")
    quota_for_rate: dict = _f("each kernel's tightest quota for the planned rate")
    kernels: dict[str, CapacityKernel] = _f("stock and patched")
    spec: dict = _f("spec.json as it was")
    run_id: Optional[str] = optional("run.json's")
    date: Optional[str] = optional("run.json's")
    clock: Optional[str] = optional("the guests' clock")
    initramfs_sha256: Optional[str] = optional("run.json's")
    wall_s: Optional[float] = optional("run.json's")


# matrix.json ----------------------------------------------------------------------

@dataclass(frozen=True)
class Matrix:
    """matrix.json of make demo-matrix (lab/demo/matrix.py, lab/demo/cells.py)."""
    pairs: list[dict] = _f("a row per pair: pair, what, demos (by waker, a list of: run, verdict, headline, "
                           "stock_trace, stock and patched figures; or error), wakers (each waker's verdict "
                           "over its runs), verdict")
    kernels: list[dict] = _f("a row per kernel: pair, side, kernel, obtained, lock (and lock_from, "
                             "lock_seen), model (and model_from), probe_ep, offsets_from, cells (a waiter's: "
                             "word, runs, words, figures, chain, values; null when not run)")
    fixes: dict[str, dict] = _f("epoll and throttle: sentence, comparisons (without, with, context, waiters)")
    on_7x: dict = _f("the 7.x kernels' cells (kernels) and the comparisons that involve them (fixes)")
    runs: dict[str, int] = _f("the demos each pair was to run, by waker (unix, udp)")


# kernel.json ----------------------------------------------------------------------

@dataclass(frozen=True)
class KernelFacts:
    """kernel.json beside a guest's results: what the driver knew of the image
    before it booted (lab/labkit/kernels.py facts)."""
    image: Optional[str] = optional("the image file")
    obtained: Optional[str] = optional("how it was obtained, in words")
    release: Optional[str] = optional("its uname -r")
    lock: Optional[str] = optional("struct eventpoll's lock type: rwlock_t or spinlock_t")
    lock_from: Optional[str] = optional("where that was read: its BTF, its fs/eventpoll.c as built")
    throttle_model: Optional[str] = optional("its CFS throttle model: cfs_rq or task")
    throttle_from: Optional[str] = optional("where that was read")
    offsets: Optional[dict[str, int]] = optional("struct member -> byte offset, the probe's and the "
                                                 "analysis'")
    probe_ep: Optional[str] = optional("the callback probe's fetch argument for the epoll instance")
    offsets_from: Optional[str] = optional("where the offsets were read (or assumed)")


# merged.json --------------------------------------------------------------------

@dataclass(frozen=True)
class MergedInput:
    path: str = _f("the input file")
    intervals: Optional[int] = optional("its intervals")
    latency_us: Optional[Latencies] = optional("its latency")
    interrupted: Optional[bool] = optional("its run was stopped early")
    same_as: Optional[str] = optional("the earlier input it repeats")


@dataclass(frozen=True)
class Merged:
    """merged.json: loadgen merge --json, the hosts' histograms added (make fleet)."""
    inputs: list[MergedInput] = _f("one per input file, in the order given")
    latency_us: Latencies = _f("of all inputs")
    count: Optional[int] = optional("samples")
    histogram: Optional[dict] = optional("the settings every input shares: lowest, highest, "
                                         "significant_digits")
    partial: Optional[bool] = optional("an input was an interrupted run's")
    tool: Optional[str] = optional("loadgen merge")


# kernel/selftests: epoll-stress.jsonl, selftests.json, cost.json, compare.json ---

@dataclass(frozen=True)
class StressRound:
    """epoll-stress.jsonl: a line per round of epoll-stress in a cost guest
    (kernel/selftests/epoll-stress.c, run by its guest-init), read by
    kernel/selftests/summarize.py."""
    threads: int = _f("producer threads")
    events_per_ms: float = _f("events the consumer took per millisecond")
    bench: Optional[str] = optional("epoll-stress")
    writes_per_thread: Optional[int] = optional("writes each producer made")
    events: Optional[int] = optional("threads x writes_per_thread")
    ms: Optional[float] = optional("the round's milliseconds")
    consumer_events: Optional[int] = optional("events epoll_wait returned to the consumer")
    consumer_waits: Optional[int] = optional("its epoll_wait calls")


@dataclass(frozen=True)
class SelftestKernel:
    outcome: str = _f("the guest's outcome (kernel/vm/boot): ok, or how it ended")
    passed: int = _f("selftests passed, those that failed in the full run and passed alone included")
    failed: int = _f("selftests that failed, alone too")
    skipped: int = _f("selftests skipped")
    failed_tests: list[str] = _f("their names")
    flaky_tests: list[str] = _f("those that failed in the full run and then passed alone")
    kernel_release: Optional[str] = optional("uname -r in the guest")
    console_log: Optional[str] = optional("the guest's console log")
    clock: Optional[str] = optional("the guest's clock: host or virtual")
    exit_status: Optional[int] = optional("epoll_wakeup_test's exit status (null: none recorded)")
    planned: Optional[int] = optional("the TAP plan's count (null: no plan)")


@dataclass(frozen=True, kw_only=True)
class HarnessKernels:
    """What selftests.json and cost.json both say of the kernels they ran."""
    line: Optional[str] = optional("the kernel line")
    package: Optional[str] = optional("Debian's source package")
    version: Optional[str] = optional("its version")
    preempt_rt: Optional[bool] = optional("PREEMPT_RT")
    vcpus: Optional[int] = optional("the guests' vCPUs")
    emulation: Optional[str] = optional("how the guests ran")


@dataclass(frozen=True, kw_only=True)
class Selftests(HarnessKernels):
    """selftests.json: the kernel's epoll selftests in each guest, as make
    kernel-selftests ran them (kernel/selftests/summarize.py), which
    tests/vm/kernel_selftests.sh reads."""
    kernels: dict[str, SelftestKernel] = _f("each kernel's (stock, patched) results")


@dataclass(frozen=True)
class PerfRun:
    ops_per_sec: int = _f("perf bench epoll wait's average operations per second")
    stddev_pct: float = _f("its spread, percent")


@dataclass(frozen=True)
class PerfWait:
    command: str = _f("the benchmark's command")
    runs: list[PerfRun] = _f("a round each, every boot's")
    median_ops_per_sec: Optional[float] = optional("their median (absent without a round)")


@dataclass(frozen=True)
class StressMedian:
    threads: int = _f("producer threads")
    median_events_per_ms: float = _f("the median of their rounds")
    rounds: int = _f("the rounds")


@dataclass(frozen=True)
class Stress:
    command: str = _f("the benchmark's command")
    runs: list[StressRound] = _f("every round of every boot, as epoll-stress.jsonl has them")
    medians: list[StressMedian] = _f("by producer threads")


@dataclass(frozen=True)
class CostBoot:
    dir: str = _f("the boot's directory (cost-<i>-<kernel>)")
    outcome: str = _f("the guest's outcome")
    host_loadavg_1min_before_after: list[float] = _f("the host's 1-minute load before and after it")
    clock: Optional[str] = optional("the guest's clock")


@dataclass(frozen=True)
class CostKernel:
    perf_bench_epoll_wait: PerfWait = _f("perf bench epoll wait -t 4")
    epoll_stress: Stress = _f("epoll-stress at 1 to 8 producers")
    boots: list[CostBoot] = _f("the kernel's cost boots, in boot order")


@dataclass(frozen=True)
class CostFigure:
    name: str = _f("the benchmark")
    unit: str = _f("its unit")
    stock_median: float = _f("the stock kernel's median over every round")
    patched_median: float = _f("the patched kernel's")
    ratio: float = _f("patched over stock")
    low: float = _f("the 95 % bootstrap interval of the ratio, from")
    high: float = _f("to")
    verdict: Optional[str] = optional("patched faster, patched slower, or inconclusive (the interval "
                                      "holds 1)")
    confidence: Optional[float] = optional("the interval's confidence")
    samples: Optional[list[int]] = optional("the rounds of each kernel")


@dataclass(frozen=True, kw_only=True)
class Cost(HarnessKernels):
    """cost.json: what the fix costs in epoll throughput, stock against
    patched, as make kernel-selftests measured it (kernel/selftests/summarize.py);
    the demo copies it into its run and its page shows it, and
    kernel/selftests/compare.py compares two of them."""
    kernels: dict[str, CostKernel] = _f("each kernel's (stock, patched) benchmarks")
    comparison: Optional[list[CostFigure]] = optional(
        "each figure, stock against patched (absent before the intervals)")


@dataclass(frozen=True)
class CompareKernel:
    epoll_stress_events_per_ms: dict[str, float] = _f("epoll-stress's median events per ms, by producer "
                                                      "threads")
    perf_bench_epoll_wait_ops_per_sec: Optional[float] = optional("perf bench epoll wait's median "
                                                                  "operations per second")


@dataclass(frozen=True)
class Compare:
    """compare.json: the follow-up patch against the fix alone
    (kernel/selftests/followup, written by kernel/selftests/compare.py
    from two cost.json); a kernel missing from them is absent."""
    stock: Optional[CompareKernel] = optional("the stock kernel, from the fix's cost.json")
    fix: Optional[CompareKernel] = optional("the fix alone: that cost.json's patched kernel")
    fix_followup: Optional[CompareKernel] = optional("the fix and the follow-up: the follow-up's "
                                                     "patched kernel", key="fix+followup")


# falseneg.jsonl, unixwake.json --------------------------------------------------

@dataclass(frozen=True)
class FalsenegPass:
    """falseneg.jsonl: a line per pass of epoll-falseneg in a guest (lab/falseneg)."""
    calls: int = _f("epoll_wait(..., 0) calls")
    false_negatives: int = _f("calls that returned 0 with an event ready")
    threads: Optional[int] = optional("threads polling the one epoll instance")
    events: Optional[int] = optional("ready level-triggered events")
    cpus: Optional[int] = optional("the guest's CPUs")
    elapsed_s: Optional[float] = optional("the pass's seconds")
    errors: Optional[int] = optional("calls that failed")
    rate: Optional[float] = optional("false_negatives / calls")


@dataclass(frozen=True)
class Unixwake:
    """unixwake.json: what epoll-unixwake saw in a guest (lab/unixwake)."""
    pings: int = _f("the RT waiter's pings measured")
    kernel: Optional[str] = optional("uname -r")
    seconds: Optional[int] = optional("the run")
    senders: Optional[int] = optional("co-tenant senders")
    quota_us: Optional[int] = optional("their cgroup's quota")
    period_us: Optional[int] = optional("its period")
    tick_us: Optional[int] = optional("the RT pinger's period")
    late_ms: Optional[int] = optional("how late counts")
    late: Optional[int] = optional("pings that late")
    ping_us: Optional[dict[str, float]] = optional("their latency: p50, p99, p99_9, max")
    stall_ms: Optional[int] = optional("no progress this long is a stall")
    stalls: Optional[int] = optional("stalls")
    stalls_ended_by_lift: Optional[int] = optional("those the quota's lift ended")
    longest_stall_ms: Optional[float] = optional("the longest")
    co_tenant_datagrams: Optional[int] = optional("what the co-tenant sent")
    periods: Optional[int] = optional("the co-tenant's periods")
    throttled_periods: Optional[int] = optional("its throttled periods")


# soak.json -----------------------------------------------------------------------

@dataclass(frozen=True)
class SoakCheck:
    name: str = _f("the check: udp loss, tcp loss, rates kept, rss flat, fds flat, reloads applied, "
                   "healthy at the end")
    ok: bool = _f("it held")
    detail: str = _f("what was measured, against its bound")


@dataclass(frozen=True)
class Soak:
    """soak.json: make soak's judgement (lab/soak/soak.py), from the run's
    soak.csv and loadgen's udp-soak.json and tcp-soak.json."""
    verdict: str = _f("pass, or FAIL when a check did not hold")
    checks: list[SoakCheck] = _f("every check")
    rows: list[dict] = _f("soak.csv's samples: t_s, rss_kib, fds, fds_base, udp_rx_pps, "
                          "tcp_rx_bytes_ps, drops, rt_demotions, reloads_applied")
    tool: Optional[str] = optional("lab/soak/run")
    duration_s: Optional[int] = optional("the seconds at load")
    slo: Optional[str] = optional("the objective the sweeps held the sustainable rates to")
    sustainable: Optional[dict[str, int]] = optional("udp_pps, tcp_mps: what the sweeps found")
    load: Optional[dict] = optional("what ran: fraction (of the sustainable rates), udp_share, "
                                    "udp_pps, tcp_mps")
    udp: Optional[dict] = optional("loadgen's UDP result: sent, received, lost, late, achieved_rate, "
                                   "latency_us")
    tcp: Optional[dict] = optional("the same of TCP, in messages")
    reloads: Optional[dict[str, int]] = optional("SIGHUPs sent, applied, partial, failed")


# The JSON files that cross a process: (name, record); each record's docstring
# names its writer.
FILES = (
    ("spec.json", Spec),
    ("run.json", RunRecord),
    ("boot.json", Boot),
    ("scenario.json", Scenario),
    ("relay.json", Relay),
    ("loadgen.json", Loadgen),
    ("chains.json", Chains),
    ("rt-client.sched.json", RtSched),
    ("cell.json", Cell),
    ("probe.json", Probe),
    ("running.json", Running),
    ("manifest.json", Manifest),
    ("summary.json (demo)", DemoSummary),
    ("summary.json (host A/B)", HostSummary),
    ("summary.json (model)", ModelSummary),
    ("capacity.json", Capacity),
    ("matrix.json", Matrix),
    ("kernel.json", KernelFacts),
    ("merged.json", Merged),
    ("selftests.json", Selftests),
    ("epoll-stress.jsonl", StressRound),
    ("cost.json", Cost),
    ("compare.json", Compare),
    ("falseneg.jsonl", FalsenegPass),
    ("unixwake.json", Unixwake),
    ("soak.json", Soak),
)
# Other names of a kind of file.
ALIASES = {"relay-stats.json": "relay.json", "rt-client.json": "loadgen.json",
           "cotenant.json": "loadgen.json"}


def record_for(path, obj):
    """The record of the JSON file PATH (its content OBJ tells a summary's
    kind), or None for a file that is none of FILES."""
    name = os.path.basename(path)
    name = ALIASES.get(name, name)
    if name.startswith("unixwake") and name.endswith(".json"):
        name = "unixwake.json"
    if name.startswith("matrix") and name.endswith(".json"):
        name = "matrix.json"
    if name.startswith("summary-") and name.endswith(".json"):
        name = "summary.json"
    if name == "summary.json":
        kind = obj.get("kind") if isinstance(obj, dict) else None
        model = isinstance(obj, dict) and "rwlock" in obj
        name = ("summary.json (host A/B)" if kind == "testhost" else
                "summary.json (model)" if model else "summary.json (demo)")
    return next((cls for n, cls in FILES if n == name), None)


def read_lines(cls, path):
    """The CLS of each line of the JSON-lines file at PATH."""
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError as e:
        raise DataError(f"{path}: {e.strerror or e}")
    out = []
    for n, line in enumerate(text.splitlines(), 1):
        try:
            obj = json.loads(line)
        except ValueError as e:
            raise DataError(f"{path}:{n}: {e}")
        out.append(parse(cls, obj, f"{path}:{n}"))
    return out


def check(path):
    """The record of the file at PATH (a list of them for JSON lines), read
    and checked; DataError when it does not fit, or is none of FILES."""
    if path.endswith(".jsonl"):
        return read_lines(record_for(path, None) or _none(path), path)
    obj = read_json(path)
    cls = record_for(path, obj) or _none(path)
    return parse(cls, obj, path)


def _none(path):
    raise DataError(f"{path}: not a file of docs/formats.md's (its name says none)")


# Records that stand inside others, each with a table of its own.
PARTS = (("A percentile object", Percentiles), ("A kernel object of a demo's summary", DemoKernel),
         ("A host kernel object of a host A/B's summary", HostKernel))


def tables():
    """Every record's field table, as docs/formats.md has them."""
    out = []
    for name, cls in FILES:
        file, _, which = name.partition(" (")
        head = f"`{file}`" + (f" ({which}" if which else "")
        out.append(f"### {head}\n\n{inspect.cleandoc(cls.__doc__)}\n\n{table(cls)}")
    for name, cls in PARTS:
        out.append(f"### {name}\n\n{inspect.cleandoc(cls.__doc__)}\n\n{table(cls)}")
    return "\n".join(out)


DOCS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "docs", "formats.md")
DOCS_START, DOCS_END = "<!-- the field tables: mk/py report.formats -->\n", "<!-- end of the field tables -->"


def docs_tables(text):
    """The field tables docs/formats.md's TEXT holds (between its markers)."""
    if DOCS_START not in text or DOCS_END not in text:
        raise DataError(f"{DOCS}: no field tables between {DOCS_START.strip()} and {DOCS_END}")
    return text[text.index(DOCS_START) + len(DOCS_START):text.index(DOCS_END)]


def main(argv):
    if not argv:
        sys.stdout.write(tables())
        return 0
    if argv == ["docs"]:
        with open(DOCS, encoding="utf-8") as f:
            text = f.read()
        old = docs_tables(text)
        with open(DOCS, "w", encoding="utf-8") as f:
            f.write(text.replace(DOCS_START + old, DOCS_START + tables(), 1))
        return 0
    if argv[0] != "check" or len(argv) < 2:
        print(__doc__.strip().split("\n\n")[-1], file=sys.stderr)
        return 64
    bad = 0
    for path in argv[1:]:
        try:
            got = check(path)
            print(f"{path}: {type(got[0] if isinstance(got, list) and got else got).__name__}")
        except DataError as e:
            print(f"formats: {e}", file=sys.stderr)
            bad += 1
    return 65 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
